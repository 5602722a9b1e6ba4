// Kernels that meet through memory from two queues: `wait_flag` spins until *flag is non-zero
// (as AMD's HIP runtime's stream wait kernel does), then writes *flag + 1 to *seen; `raise_flag`
// stores `value` into *flag. two_queues.c dispatches them on different queues; tests/hsa_soft.rs
// builds them.
#include <hip/hip_runtime.h>
extern "C" __global__ void wait_flag(unsigned* flag, unsigned* seen) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    unsigned v;
    while ((v = __hip_atomic_load(flag, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM)) == 0)
      __builtin_amdgcn_s_sleep(1);
    *seen = v + 1;
  }
}
extern "C" __global__ void raise_flag(unsigned* flag, unsigned value) {
  if (threadIdx.x == 0 && blockIdx.x == 0)
    __hip_atomic_store(flag, value, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
