// 64-bit integer arithmetic: division and remainder (signed and unsigned, the compiler's
// software expansion), multiplication high parts, shifts, bit counts; checked against the host.
#include "check.h"

__global__ void int64_ops(const long long* a, const long long* b, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long x = a[i], y = b[i];
  unsigned long long ux = (unsigned long long)x, uy = (unsigned long long)y;
  out[i * 8 + 0] = x / y;
  out[i * 8 + 1] = x % y;
  out[i * 8 + 2] = (long long)(ux / uy);
  out[i * 8 + 3] = (long long)(ux % uy);
  out[i * 8 + 4] = (long long)__umul64hi(ux, uy);
  out[i * 8 + 5] = __mul64hi(x, y);
  out[i * 8 + 6] = (x << (i % 63)) ^ (long long)(ux >> (i % 61)) ^ (x >> (i % 59));
  out[i * 8 + 7] = __popcll(ux) + 100 * __clzll(ux) + 10000 * __ffsll(x);
}

__global__ void int32_ops(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  unsigned ux = x, uy = y;
  out[i * 6 + 0] = x / y;
  out[i * 6 + 1] = x % y;
  out[i * 6 + 2] = ux / uy;
  out[i * 6 + 3] = __umulhi(ux, uy);
  out[i * 6 + 4] = __mulhi(x, y);
  out[i * 6 + 5] = __brev(ux) ^ __byte_perm(ux, uy, 0x3715);
}

static unsigned long long umulhi64(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static long long mulhi64(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static unsigned byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int k = 0; k < 4; k++) r |= (unsigned)((v >> (8 * ((s >> (4 * k)) & 7))) & 0xff) << (8 * k);
  return r;
}
static unsigned brev(unsigned x) {
  unsigned r = 0;
  for (int k = 0; k < 32; k++) r |= ((x >> k) & 1) << (31 - k);
  return r;
}

int main() {
  const int N = 2048;
  long long *a = new long long[N], *b = new long long[N], *o = new long long[N * 8];
  int *a32 = new int[N], *b32 = new int[N], *o32 = new int[N * 6];
  unsigned long long s = 88172645463325252ULL;
  for (int i = 0; i < N; i++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    a[i] = (long long)s >> (i % 40);
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    b[i] = ((long long)s >> (i % 50)) | 1;
    if (i % 7 == 0) b[i] = -b[i];
    a32[i] = (int)(a[i] >> 7);
    b32[i] = (int)(b[i] >> 30) | 1;
  }
  long long *da, *db, *dout;
  HIP_CHECK(hipMalloc(&da, N * 8));
  HIP_CHECK(hipMalloc(&db, N * 8));
  HIP_CHECK(hipMalloc(&dout, N * 64));
  HIP_CHECK(hipMemcpy(da, a, N * 8, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, b, N * 8, hipMemcpyDefault));
  int64_ops<<<N / 128, 128>>>(da, db, dout, N);
  HIP_CHECK(hipMemcpy(o, dout, N * 64, hipMemcpyDeviceToHost));
  bool ok[8] = {true, true, true, true, true, true, true, true};
  for (int i = 0; i < N; i++) {
    long long x = a[i], y = b[i];
    unsigned long long ux = x, uy = y;
    ok[0] &= o[i * 8 + 0] == x / y;
    ok[1] &= o[i * 8 + 1] == x % y;
    ok[2] &= o[i * 8 + 2] == (long long)(ux / uy);
    ok[3] &= o[i * 8 + 3] == (long long)(ux % uy);
    ok[4] &= o[i * 8 + 4] == (long long)umulhi64(ux, uy);
    ok[5] &= o[i * 8 + 5] == mulhi64(x, y);
    ok[6] &= o[i * 8 + 6] == ((x << (i % 63)) ^ (long long)(ux >> (i % 61)) ^ (x >> (i % 59)));
    ok[7] &= o[i * 8 + 7] == __builtin_popcountll(ux) + 100 * (ux ? __builtin_clzll(ux) : 64) + 10000 * __builtin_ffsll(x);
  }
  const char* names[8] = {"i64 div", "i64 rem", "u64 div", "u64 rem", "umul64hi", "mul64hi", "i64 shifts", "popc/clz/ffs 64"};
  for (int k = 0; k < 8; k++) report(names[k], ok[k]);
  int *d32a, *d32b, *d32o;
  HIP_CHECK(hipMalloc(&d32a, N * 4));
  HIP_CHECK(hipMalloc(&d32b, N * 4));
  HIP_CHECK(hipMalloc(&d32o, N * 24));
  HIP_CHECK(hipMemcpy(d32a, a32, N * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(d32b, b32, N * 4, hipMemcpyHostToDevice));
  int32_ops<<<N / 64, 64>>>(d32a, d32b, d32o, N);
  HIP_CHECK(hipMemcpy(o32, d32o, N * 24, hipMemcpyDeviceToHost));
  bool ok32 = true;
  for (int i = 0; i < N; i++) {
    int x = a32[i], y = b32[i];
    unsigned ux = x, uy = y;
    ok32 &= o32[i * 6] == x / y && o32[i * 6 + 1] == x % y && (unsigned)o32[i * 6 + 2] == ux / uy;
    ok32 &= (unsigned)o32[i * 6 + 3] == (unsigned)(((unsigned long long)ux * uy) >> 32);
    ok32 &= o32[i * 6 + 4] == (int)(((long long)x * y) >> 32);
    ok32 &= (unsigned)o32[i * 6 + 5] == (brev(ux) ^ byte_perm(ux, uy, 0x3715));
  }
  report("i32 div/rem/mulhi/brev/byte_perm", ok32);
  return finish();
}
