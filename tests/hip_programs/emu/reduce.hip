// Reductions: warp shuffles (__shfl_xor, __shfl_down, __shfl_up, __shfl), shared memory tree
// reduction, and global atomics (int and float), checked against the host.
#include "check.h"

__global__ void warp_ops(const int* in, int* out_xor, int* out_down, int* out_up, int* out_bcast) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  int s = v;
  for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_xor(s, o);
  out_xor[i] = s;
  out_down[i] = __shfl_down(v, 3);
  out_up[i] = __shfl_up(v, 5);
  out_bcast[i] = __shfl(v, 7);
}

__global__ void block_sum(const float* in, float* partial, int n) {
  extern __shared__ float tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = tile[0];
}

__global__ void atomic_sums(const int* in, int n, int* total, unsigned long long* total64, float* ftotal) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(total, in[i]);
    atomicAdd(total64, (unsigned long long)in[i] * 3ULL);
    atomicAdd(ftotal, 0.5f);
    atomicMax(total + 1, in[i]);
    atomicMin(total + 2, in[i]);
  }
}

int main() {
  int W = 0;
  HIP_CHECK(hipDeviceGetAttribute(&W, hipDeviceAttributeWarpSize, 0));
  report("the warp size is the processor's", W == expected_warp_size());
  const int N = 4096, B = 256;
  int* h = (int*)malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) h[i] = (i * 7919 + 13) % 1000 - 500;
  int *d_in, *d_x, *d_d, *d_u, *d_b;
  HIP_CHECK(hipMalloc(&d_in, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&d_x, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&d_d, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&d_u, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&d_b, N * sizeof(int)));
  HIP_CHECK(hipMemcpy(d_in, h, N * sizeof(int), hipMemcpyHostToDevice));
  warp_ops<<<N / 64, 64>>>(d_in, d_x, d_d, d_u, d_b);
  HIP_CHECK(hipGetLastError());
  int *x = (int*)malloc(N * 4), *dn = (int*)malloc(N * 4), *up = (int*)malloc(N * 4), *bc = (int*)malloc(N * 4);
  HIP_CHECK(hipMemcpy(x, d_x, N * 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(dn, d_d, N * 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(up, d_u, N * 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(bc, d_b, N * 4, hipMemcpyDeviceToHost));
  bool ok_x = true, ok_d = true, ok_u = true, ok_b = true;
  for (int i = 0; i < N; i++) {
    int w0 = i / W * W, lane = i % W, s = 0;
    for (int j = 0; j < W; j++) s += h[w0 + j];
    ok_x &= x[i] == s;
    ok_d &= dn[i] == (lane + 3 < W ? h[i + 3] : h[i]);
    ok_u &= up[i] == (lane >= 5 ? h[i - 5] : h[i]);
    ok_b &= bc[i] == h[w0 + 7];
  }
  report("shfl_xor reduction", ok_x);
  report("shfl_down", ok_d);
  report("shfl_up", ok_u);
  report("shfl broadcast", ok_b);

  float* hf = (float*)malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) hf[i] = (float)((i % 17) - 8) * 0.25f;
  float *d_f, *d_p;
  HIP_CHECK(hipMalloc(&d_f, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&d_p, (N / B) * sizeof(float)));
  HIP_CHECK(hipMemcpy(d_f, hf, N * sizeof(float), hipMemcpyHostToDevice));
  block_sum<<<N / B, B, B * sizeof(float)>>>(d_f, d_p, N);
  float p[N / B];
  HIP_CHECK(hipMemcpy(p, d_p, sizeof(p), hipMemcpyDeviceToHost));
  bool ok = true;
  for (int b = 0; b < N / B; b++) {
    float s = 0;
    for (int j = 0; j < B; j++) s += hf[b * B + j];
    ok &= fabsf(p[b] - s) <= 1e-3f;
  }
  report("shared-memory block sum", ok);

  int* d_t;
  unsigned long long* d_t64;
  float* d_ft;
  int init[3] = {0, -1000000, 1000000};
  HIP_CHECK(hipMalloc(&d_t, sizeof(init)));
  HIP_CHECK(hipMalloc(&d_t64, 8));
  HIP_CHECK(hipMalloc(&d_ft, 4));
  HIP_CHECK(hipMemcpy(d_t, init, sizeof(init), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(d_t64, 0, 8));
  HIP_CHECK(hipMemset(d_ft, 0, 4));
  atomic_sums<<<(N + 127) / 128, 128>>>(d_in, N, d_t, d_t64, d_ft);
  int t[3];
  unsigned long long t64;
  float ft;
  HIP_CHECK(hipMemcpy(t, d_t, sizeof(t), hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&t64, d_t64, 8, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&ft, d_ft, 4, hipMemcpyDeviceToHost));
  long long sum = 0;
  int mx = -1000000, mn = 1000000;
  for (int i = 0; i < N; i++) {
    sum += h[i];
    mx = h[i] > mx ? h[i] : mx;
    mn = h[i] < mn ? h[i] : mn;
  }
  report("atomicAdd int", t[0] == sum);
  report("atomicMax/atomicMin", t[1] == mx && t[2] == mn);
  report("atomicAdd u64", t64 == (unsigned long long)(sum * 3));
  report("atomicAdd float", ft == 0.5f * N);
  return finish();
}
