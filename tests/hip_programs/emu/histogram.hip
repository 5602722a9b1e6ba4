// Histograms with shared-memory atomics merged by global atomics, and 8-bit/16-bit data types.
#include "check.h"

__global__ void histogram(const unsigned char* data, int n, unsigned* bins) {
  __shared__ unsigned local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    if (local[b]) atomicAdd(&bins[b], local[b]);
}

__global__ void widen(const unsigned char* in, short* out16, long long* out64, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out16[i] = (short)(in[i] * 300 - 20000);
    out64[i] = (long long)in[i] * -123456789LL;
  }
}

int main() {
  const int N = 100000;
  unsigned char* h = new unsigned char[N];
  unsigned ref[256] = {0};
  for (int i = 0; i < N; i++) {
    h[i] = (unsigned char)((i * 2654435761u) >> 24);
    ref[h[i]]++;
  }
  unsigned char* d;
  unsigned* dbins;
  HIP_CHECK(hipMalloc(&d, N));
  HIP_CHECK(hipMalloc(&dbins, 256 * 4));
  HIP_CHECK(hipMemcpy(d, h, N, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(dbins, 0, 256 * 4));
  histogram<<<32, 128>>>(d, N, dbins);
  unsigned bins[256];
  HIP_CHECK(hipMemcpy(bins, dbins, sizeof(bins), hipMemcpyDeviceToHost));
  report("histogram", memcmp(bins, ref, sizeof(bins)) == 0);
  short* d16;
  long long* d64;
  HIP_CHECK(hipMalloc(&d16, N * 2));
  HIP_CHECK(hipMalloc(&d64, N * 8));
  widen<<<(N + 255) / 256, 256>>>(d, d16, d64, N);
  short* o16 = new short[N];
  long long* o64 = new long long[N];
  HIP_CHECK(hipMemcpy(o16, d16, N * 2, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(o64, d64, N * 8, hipMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < N; i++) ok &= o16[i] == (short)(h[i] * 300 - 20000) && o64[i] == (long long)h[i] * -123456789LL;
  report("8/16/64-bit stores", ok);
  return finish();
}
