// Tiled matrix multiply with shared memory (float) and a naive double version, checked against
// the host.
#include "check.h"
#define TILE 16

__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < n / TILE; t++) {
    As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[row * n + col] = acc;
}

__global__ void matmul_f64(const double* A, const double* B, double* C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    double acc = 0.0;
    for (int k = 0; k < n; k++) acc = fma(A[row * n + k], B[k * n + col], acc);
    C[row * n + col] = acc;
  }
}

int main() {
  const int n = 64;
  float *A = new float[n * n], *B = new float[n * n], *C = new float[n * n];
  double *Ad = new double[n * n], *Bd = new double[n * n], *Cd = new double[n * n];
  for (int i = 0; i < n * n; i++) {
    A[i] = (float)((i * 37) % 11 - 5) / 4.0f;
    B[i] = (float)((i * 53) % 13 - 6) / 8.0f;
    Ad[i] = A[i] * 1.1;
    Bd[i] = B[i] * 0.9;
  }
  float *dA, *dB, *dC;
  HIP_CHECK(hipMalloc(&dA, n * n * 4));
  HIP_CHECK(hipMalloc(&dB, n * n * 4));
  HIP_CHECK(hipMalloc(&dC, n * n * 4));
  HIP_CHECK(hipMemcpy(dA, A, n * n * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dB, B, n * n * 4, hipMemcpyHostToDevice));
  matmul_tiled<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(dA, dB, dC, n);
  HIP_CHECK(hipMemcpy(C, dC, n * n * 4, hipMemcpyDeviceToHost));
  bool ok = true;
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) {
      float s = 0;
      for (int k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c];
      ok &= fabsf(s - C[r * n + c]) <= 1e-3f * (1 + fabsf(s));
    }
  report("tiled matmul f32", ok);
  double *dAd, *dBd, *dCd;
  HIP_CHECK(hipMalloc(&dAd, n * n * 8));
  HIP_CHECK(hipMalloc(&dBd, n * n * 8));
  HIP_CHECK(hipMalloc(&dCd, n * n * 8));
  HIP_CHECK(hipMemcpy(dAd, Ad, n * n * 8, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dBd, Bd, n * n * 8, hipMemcpyHostToDevice));
  matmul_f64<<<dim3(n / 8, n / 8), dim3(8, 8)>>>(dAd, dBd, dCd, n);
  HIP_CHECK(hipMemcpy(Cd, dCd, n * n * 8, hipMemcpyDeviceToHost));
  ok = true;
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) {
      double s = 0;
      for (int k = 0; k < n; k++) s = fma(Ad[r * n + k], Bd[k * n + c], s);
      ok &= s == Cd[r * n + c];
    }
  report("matmul f64 (fma, exact)", ok);
  return finish();
}
