// Kernels for the emulator's kernel-level tests: simple element-wise work, reductions with
// shuffles and atomics, a tiled matrix multiply through shared memory, a block scan, a
// histogram with shared and global atomics, 64-bit integer division, 3-D grids.
#include <hip/hip_runtime.h>

extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy_div(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] / (x[i] + 1.5f);
}

// Sum of `in` per block with warp shuffles, then one atomicAdd per warp into *out.
extern "C" __global__ void reduce_shfl(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    for (int off = warpSize / 2; off > 0; off /= 2) v += __shfl_down(v, off);
    if ((threadIdx.x % warpSize) == 0) atomicAdd(out, v);
}

#define TILE 16
// C = A * B for n x n matrices, n a multiple of TILE.
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        as[threadIdx.y][threadIdx.x] = A[row * n + t + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// Inclusive scan of each block of 256 values (Hillis-Steele in shared memory).
extern "C" __global__ void scan_block(const int* in, int* out) {
    __shared__ int buf[256];
    int t = threadIdx.x;
    int g = blockIdx.x * 256 + t;
    buf[t] = in[g];
    __syncthreads();
    for (int off = 1; off < 256; off *= 2) {
        int v = t >= off ? buf[t - off] : 0;
        __syncthreads();
        buf[t] += v;
        __syncthreads();
    }
    out[g] = buf[t];
}

// 64-bin histogram: shared-memory atomics per block, then global atomics.
extern "C" __global__ void histogram(const unsigned* in, unsigned* bins, int n) {
    __shared__ unsigned local[64];
    if (threadIdx.x < 64) local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[in[i] % 64], 1u);
    __syncthreads();
    if (threadIdx.x < 64) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

// 64-bit division and remainder (the compiler expands them into long integer sequences).
extern "C" __global__ void div64(const unsigned long long* a, const long long* b, unsigned long long* q, long long* r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        q[i] = a[i] / (unsigned long long)(b[i] < 0 ? -b[i] : b[i]);
        r[i] = (long long)a[i] % b[i];
    }
}

// Every work-item of a 3-D grid writes its linear id and coordinates.
extern "C" __global__ void grid3d(unsigned* out, int nx, int ny) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned z = blockIdx.z * blockDim.z + threadIdx.z;
    unsigned id = (z * ny + y) * nx + x;
    out[id] = x | y << 10 | z << 20;
}
