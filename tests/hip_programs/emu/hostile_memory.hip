// Hostile kernels against the memory checker's permissions: a kernel may not execute what was
// not loaded as code (a hipMalloc buffer, its kernarg segment, a kernel descriptor) nor write
// what was loaded read-only (its own code, its own kernel descriptor). Each attempt must end
// in hipErrorIllegalAddress, and the program must go on: after a device reset the same kernels'
// benign paths still compute what the host computes, so the code was not modified.
#include "check.h"

#include <cstdint>

// s_endpgm: what a buffer is filled with, so that executing it would "succeed".
static const uint32_t S_ENDPGM = 0xbf810000u;

// Jumps to `target` (made wave-uniform in SGPRs, whatever registers the compiler chose).
__device__ __attribute__((always_inline)) inline void jump(uint64_t target) {
  asm volatile(
      "v_readfirstlane_b32 s6, %0\n"
      "v_readfirstlane_b32 s7, %1\n"
      "s_setpc_b64 s[6:7]\n" ::"v"((uint32_t)target),
      "v"((uint32_t)(target >> 32))
      : "s6", "s7");
}

__global__ void jump_to(uint64_t target, int* out, int go) {
  out[threadIdx.x] = 7 * (int)threadIdx.x;
  if (go) jump(target);
}

__global__ void jump_to_kernarg(int* out, int go) {
  out[threadIdx.x] = 5 + (int)threadIdx.x;
  if (go) {
    uint64_t p = (uint64_t)__builtin_amdgcn_kernarg_segment_ptr();
    jump(p);
  }
}

__global__ void jump_to_own_descriptor(int* out, int go) {
  out[threadIdx.x] = 3 + (int)threadIdx.x;
  if (go) {
    const char* packet = (const char*)__builtin_amdgcn_dispatch_ptr();
    uint64_t kd = *(const uint64_t*)(packet + 32);  // hsa_kernel_dispatch_packet_t::kernel_object
    jump(kd);
  }
}

__global__ void write_own_code(int* out, int go) {
  out[threadIdx.x] = 11 * (int)threadIdx.x;
  if (go && threadIdx.x == 0) {
    // Overwrite the instruction after s_getpc_b64 with s_endpgm.
    asm volatile(
        "s_getpc_b64 s[6:7]\n"
        "v_mov_b32 v40, 0\n"
        "v_mov_b32 v41, 0xbf810000\n"
        "global_store_dword v40, v41, s[6:7]\n"
        "s_waitcnt vmcnt(0)\n" ::: "s6", "s7", "v40", "v41", "memory");
  }
}

__global__ void write_own_descriptor(int* out, int go) {
  out[threadIdx.x] = 13 + (int)threadIdx.x;
  if (go && threadIdx.x == 0) {
    const char* packet = (const char*)__builtin_amdgcn_dispatch_ptr();
    uint64_t kd = *(const uint64_t*)(packet + 32);
    *(volatile uint32_t*)kd = 0;  // group_segment_fixed_size, say
  }
}

static const int N = 64;

// Runs `launch(go)`: with go = 1 it must fault with hipErrorIllegalAddress; after a reset, the
// benign run (go = 0) must compute `expect` on the host's terms.
template <typename Launch>
static void hostile(const char* name, Launch launch, int (*expect)(int)) {
  int* out = nullptr;
  HIP_CHECK(hipMalloc(&out, N * sizeof(int)));
  launch(out, 1);
  hipError_t launched = hipGetLastError();
  hipError_t synced = hipDeviceSynchronize();
  bool faulted = launched == hipErrorIllegalAddress || synced == hipErrorIllegalAddress;
  char detail[256];
  snprintf(detail, sizeof detail, "launch %s, synchronize %s (expected hipErrorIllegalAddress)",
           hipGetErrorName(launched), hipGetErrorName(synced));
  report(name, faulted, detail);
  HIP_CHECK(hipDeviceReset());
  (void)hipGetLastError();  // the synchronisation's error, still the thread's last one
  HIP_CHECK(hipMalloc(&out, N * sizeof(int)));
  launch(out, 0);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  int host[N];
  HIP_CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
  bool same = true;
  for (int i = 0; i < N; i++) same = same && host[i] == expect(i);
  char after[128];
  snprintf(after, sizeof after, "%s after the fault", name);
  report(after, same, "the benign run computed something else");
  HIP_CHECK(hipFree(out));
}

int main() {
  uint32_t* data = nullptr;
  HIP_CHECK(hipMalloc(&data, 4096));
  uint32_t words[1024];
  for (auto& w : words) w = S_ENDPGM;
  HIP_CHECK(hipMemcpy(data, words, sizeof words, hipMemcpyHostToDevice));
  uint64_t target = (uint64_t)data;
  hostile(
      "jump into a hipMalloc buffer",
      [&](int* out, int go) { jump_to<<<1, N>>>(go ? target : 0, out, go); },
      [](int i) { return 7 * i; });
  hostile(
      "jump into the kernarg segment",
      [](int* out, int go) { jump_to_kernarg<<<1, N>>>(out, go); }, [](int i) { return 5 + i; });
  hostile(
      "jump into a kernel descriptor",
      [](int* out, int go) { jump_to_own_descriptor<<<1, N>>>(out, go); },
      [](int i) { return 3 + i; });
  hostile(
      "write to the kernel's own code",
      [](int* out, int go) { write_own_code<<<1, N>>>(out, go); }, [](int i) { return 11 * i; });
  hostile(
      "write to the kernel's own descriptor",
      [](int* out, int go) { write_own_descriptor<<<1, N>>>(out, go); },
      [](int i) { return 13 + i; });
  return g_failures ? 1 : 0;
}
