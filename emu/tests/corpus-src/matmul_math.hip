// Corpus source: shared-memory matrix multiply, math functions in f32/f64/half,
// 64-bit integer division, 3-D grids.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

#define TILE 16
__global__ void matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[TILE][TILE], tb[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    ta[threadIdx.y][threadIdx.x] = (row < n && k0 + threadIdx.x < n) ? a[row * n + k0 + threadIdx.x] : 0;
    tb[threadIdx.y][threadIdx.x] = (col < n && k0 + threadIdx.y < n) ? b[(k0 + threadIdx.y) * n + col] : 0;
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc = fmaf(ta[threadIdx.y][k], tb[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = acc;
}

__global__ void math_f32(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; x[i] = sinf(v) + cosf(v) * expf(v) - logf(fabsf(v) + 1.0f) + powf(v, 2.5f) + sqrtf(v) / tanhf(v); }
}

__global__ void math_f64(double* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { double v = x[i]; x[i] = sin(v) + cos(v) * exp(v) - log(fabs(v) + 1.0) + pow(v, 2.5) + sqrt(v) / cbrt(v) + fma(v, 0.15915494309189532, 1.0); }
}

__global__ void math_half(__half* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __half v = x[i];
    __half2 p = __halves2half2(v, __float2half(2.0f));
    p = __hfma2(p, p, __float2half2_rn(1.0f));
    x[i] = __hadd(hsin(v), __hmul(hexp(v), __low2half(p))) + hlog(__habs(v) + __float2half(1.0f)) + __high2half(p);
  }
}

__global__ void div64(const long long* a, const long long* b, long long* q, unsigned long long* r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && b[i] != 0) { q[i] = a[i] / b[i]; r[i] = (unsigned long long)a[i] % (unsigned long long)b[i]; }
}

__global__ void grid3d(float* out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = (float)x * 0.5f + (float)y * 2.0f - (float)z / 3.0f;
}

__global__ void convert_mix(const double* d, float* f, __half* h, int* iv, unsigned short* us, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { f[i] = (float)d[i]; h[i] = __float2half((float)d[i]); iv[i] = (int)d[i] >> 3; us[i] = (unsigned short)(iv[i] * 7u); }
}
