// Real HIP translation unit for rocload fixtures (see tests/fixtures/README.md).
// Three kernels (one templated, one with dynamic shared memory), a device
// function, a __device__ variable and a __constant__ variable.
#include <hip/hip_runtime.h>

__device__ int dev_counter = 0;
__constant__ float dev_coeffs[4] = {1.0f, 2.0f, 3.0f, 4.0f};

// noinline + default visibility: survives as an STT_FUNC symbol (LOCAL after
// clang's non-RDC internalization, GLOBAL with -fgpu-rdc).
extern "C" __device__ __attribute__((noinline, visibility("default")))
float dev_scale(float x, int i) { return x * dev_coeffs[i & 3]; }

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

template <typename T>
__global__ void axpy(T alpha, const T *x, T *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}

extern "C" __global__ void block_sum(const float *in, float *out, int n) {
  extern __shared__ float tile[];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  tile[t] = i < n ? dev_scale(in[i], t) : 0.0f;
  __syncthreads();
  if (t == 0) {
    float s = 0;
    for (unsigned k = 0; k < blockDim.x; ++k) s += tile[k];
    out[blockIdx.x] = s;
    atomicAdd(&dev_counter, 1);
  }
}

template __global__ void axpy<float>(float, const float *, float *, int);
template __global__ void axpy<double>(double, const double *, double *, int);

extern "C" int launch_vadd(const float *a, const float *b, float *c, int n) {
  vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
  axpy<float><<<1, 64>>>(2.0f, a, c, n);
  block_sum<<<1, 256, 256 * sizeof(float)>>>(a, c, n);
  return 0;
}
