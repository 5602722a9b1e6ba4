// Second real HIP translation unit: linked with vadd.hip into a shared
// library and an executable, so .hip_fatbin holds several bundles.
#include <hip/hip_runtime.h>

__device__ unsigned scale_calls = 0;

extern "C" __global__ void vscale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
  if (i == 0) atomicAdd(&scale_calls, 1u);
}

extern "C" int launch_vscale(float *x, float s, int n) {
  vscale<<<(n + 255) / 256, 256>>>(x, s, n);
  return 0;
}
