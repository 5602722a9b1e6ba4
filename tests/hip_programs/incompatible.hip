// A translation unit whose fat binary holds gfx1100 code only (built with -nogpulib: Debian's
// device libraries stop before gfx11). On a gfx1030 software agent, its first use must fail
// with the selection's explanation, and the rest of the program must keep working.
#include <hip/hip_runtime.h>

// threadIdx would need the device libraries (__ockl_get_local_id): use the builtin.
__global__ void only_gfx1100(int* out) { out[__builtin_amdgcn_workitem_id_x()] = 1100; }

extern "C" const void* incompatible_kernel() { return (const void*)only_gfx1100; }
