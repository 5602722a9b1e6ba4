// Cross-lane and cross-group synchronisation: a warp-level inclusive scan with __shfl_up and
// __shfl_xor, a chained scan where each block waits (polling with s_sleep) for the block
// before it to publish its running total, a kernel that never ends (for the timeout) and one
// that reads past its buffer (for the memory fault).
#include <hip/hip_runtime.h>

extern "C" __global__ void warp_scan(const int* in, int* out, int* xors) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    int lane = threadIdx.x % warpSize;
    for (int off = 1; off < warpSize; off *= 2) {
        int u = __shfl_up(v, off);
        if (lane >= off) v += u;
    }
    out[i] = v;
    int x = in[i];
    for (int m = warpSize / 2; m > 0; m /= 2) x = max(x, __shfl_xor(x, m));
    xors[i] = x;
}

// Block b adds its sum to the running total of blocks 0..b-1, which block b-1 publishes in
// totals[b-1] (flag = value + 1 so 0 means "not yet").
extern "C" __global__ void chained_scan(const int* in, int* totals, int* out) {
    __shared__ int sum;
    __shared__ int base;
    if (threadIdx.x == 0) sum = 0;
    __syncthreads();
    atomicAdd(&sum, in[blockIdx.x * blockDim.x + threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) {
        int prev = 0;
        if (blockIdx.x > 0) {
            int f;
            while ((f = __atomic_load_n(&totals[blockIdx.x - 1], __ATOMIC_ACQUIRE)) == 0)
                __builtin_amdgcn_s_sleep(1);
            prev = f - 1;
        }
        base = prev;
        __atomic_store_n(&totals[blockIdx.x], prev + sum + 1, __ATOMIC_RELEASE);
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = base + sum;
}

extern "C" __global__ void spin_forever(volatile int* flag) {
    while (*flag == 0) __builtin_amdgcn_s_sleep(1);
}

extern "C" __global__ void out_of_bounds(const int* in, int* out, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i * stride];
}
