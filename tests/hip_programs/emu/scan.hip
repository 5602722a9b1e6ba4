// Prefix sums: a block-wide inclusive scan in LDS (Hillis-Steele), then a second pass adding
// each block's carry; and a single-pass chained scan where each block waits (spins) for its
// predecessor's total, as decoupled look-back scans do.
#include "check.h"

__global__ void block_scan(const int* in, int* out, int* sums, int n) {
  extern __shared__ int buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < blockDim.x; off *= 2) {
    int v = threadIdx.x >= off ? buf[threadIdx.x - off] : 0;
    __syncthreads();
    buf[threadIdx.x] += v;
    __syncthreads();
  }
  if (i < n) out[i] = buf[threadIdx.x];
  if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = buf[threadIdx.x];
}

__global__ void add_carry(int* out, const int* sums, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int carry = 0;
  for (int b = 0; b < blockIdx.x; b++) carry += sums[b];
  if (i < n) out[i] += carry;
}

// Block b waits until block b-1 published its inclusive total (flag != 0).
__global__ void chained_scan(const int* in, int* out, volatile int* totals, volatile int* flags, int n) {
  __shared__ int carry;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int s = v;
  for (int o = 1; o < warpSize; o *= 2) {
    int t = __shfl_up(s, o);
    if ((threadIdx.x % warpSize) >= o) s += t;
  }
  __shared__ int warp_sums[32];
  if (threadIdx.x % warpSize == warpSize - 1) warp_sums[threadIdx.x / warpSize] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    int acc = 0;
    for (int w = 0; w < blockDim.x / warpSize; w++) {
      int t = warp_sums[w];
      warp_sums[w] = acc;
      acc += t;
    }
    int prev = 0;
    if (blockIdx.x > 0) {
      while (flags[blockIdx.x - 1] == 0) __builtin_amdgcn_s_sleep(1);
      __threadfence();
      prev = totals[blockIdx.x - 1];
    }
    carry = prev;
    totals[blockIdx.x] = prev + acc;
    __threadfence();
    flags[blockIdx.x] = 1;
  }
  __syncthreads();
  if (i < n) out[i] = s + warp_sums[threadIdx.x / warpSize] + carry;
}

int main() {
  const int N = 10000, B = 256, NB = (N + B - 1) / B;
  int* h = new int[N];
  for (int i = 0; i < N; i++) h[i] = (i * 131) % 97 - 40;
  int *d_in, *d_out, *d_sums;
  HIP_CHECK(hipMalloc(&d_in, N * 4));
  HIP_CHECK(hipMalloc(&d_out, N * 4));
  HIP_CHECK(hipMalloc(&d_sums, NB * 4));
  HIP_CHECK(hipMemcpy(d_in, h, N * 4, hipMemcpyHostToDevice));
  block_scan<<<NB, B, B * 4>>>(d_in, d_out, d_sums, N);
  add_carry<<<NB, B>>>(d_out, d_sums, N);
  int* out = new int[N];
  HIP_CHECK(hipMemcpy(out, d_out, N * 4, hipMemcpyDeviceToHost));
  bool ok = true;
  int s = 0;
  for (int i = 0; i < N; i++) {
    s += h[i];
    ok &= out[i] == s;
  }
  report("two-pass scan", ok);
  int *d_tot, *d_flag;
  HIP_CHECK(hipMalloc(&d_tot, NB * 4));
  HIP_CHECK(hipMalloc(&d_flag, NB * 4));
  HIP_CHECK(hipMemset(d_flag, 0, NB * 4));
  HIP_CHECK(hipMemset(d_out, 0, N * 4));
  chained_scan<<<NB, B>>>(d_in, d_out, d_tot, d_flag, N);
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(out, d_out, N * 4, hipMemcpyDeviceToHost));
  ok = true;
  s = 0;
  for (int i = 0; i < N; i++) {
    s += h[i];
    ok &= out[i] == s;
  }
  report("chained scan (blocks spin on predecessors)", ok);
  return finish();
}
