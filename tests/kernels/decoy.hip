// Header-free HIP whose code object carries, in its read-only data, bytes that
// look like a CCOB header and the offload-bundle magic. make_synthetic.py wraps it
// so that a reader scanning for magics instead of walking sizes is fooled.
#define __global__ __attribute__((global))
#define __constant__ __attribute__((constant))

__constant__ __attribute__((used)) unsigned char decoy_bytes[] =
    // "CCOB", version 2, method 1 (zstd), total size 64, uncompressed 4096, hash
    "CCOB\x02\x00\x01\x00\x40\x00\x00\x00\x00\x10\x00\x00"
    "\x11\x22\x33\x44\x55\x66\x77\x88"
    "__CLANG_OFFLOAD_BUNDLE__\x02\x00\x00\x00\x00\x00\x00\x00";

extern "C" __global__ void decoy_copy(unsigned char *out) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  if (i < sizeof(decoy_bytes)) out[i] = decoy_bytes[i];
}
