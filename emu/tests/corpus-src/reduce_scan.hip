// Corpus source: reductions with shuffles and atomics, block scan, histogram.
#include <hip/hip_runtime.h>

__global__ void reduce_shfl(const float* in, float* out, int n) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor(v, m);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

__global__ void reduce_i64(const long long* in, unsigned long long* out, int n) {
  __shared__ long long part[256];
  int t = threadIdx.x;
  long long s = 0;
  for (int i = blockIdx.x * 256 + t; i < n; i += gridDim.x * 256) s += in[i];
  part[t] = s;
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if (t < w) part[t] += part[t + w];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, (unsigned long long)part[0]);
}

__global__ void scan_block(const int* in, int* out, int n) {
  __shared__ int tmp[512];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  tmp[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < blockDim.x; off <<= 1) {
    int x = t >= off ? tmp[t - off] : 0;
    __syncthreads();
    tmp[t] += x;
    __syncthreads();
  }
  if (i < n) out[i] = tmp[t];
}

__global__ void histogram(const unsigned char* data, unsigned* bins, int n) {
  __shared__ unsigned local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

__global__ void minmax_ballot(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  unsigned long long b = __ballot(v > 0);
  int lane_max = v;
  for (int m = 1; m < 32; m <<= 1) lane_max = max(lane_max, __shfl_down(lane_max, m));
  if (threadIdx.x == 0) { atomicMax(out, lane_max); atomicMin(out + 1, (int)__popcll(b)); atomicExch(out + 2, v); atomicCAS(out + 3, 0, v); }
}
