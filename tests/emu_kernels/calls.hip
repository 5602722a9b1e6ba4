// Kernels exercising calls and scratch: non-inlined device functions, recursion (dynamic
// stack), private arrays indexed at run time, function pointers, and a code object v4-style
// read of the dispatch packet through blockDim/gridDim.
#include <hip/hip_runtime.h>

__device__ __attribute__((noinline)) int collatz_steps(unsigned x) {
    int n = 0;
    while (x != 1) {
        x = (x & 1) ? 3 * x + 1 : x / 2;
        ++n;
    }
    return n;
}

__device__ __attribute__((noinline)) unsigned long long fib(int n) {
    return n < 2 ? (unsigned long long)n : fib(n - 1) + fib(n - 2);
}

__device__ __attribute__((noinline)) float twice(float x) { return 2.0f * x; }
__device__ __attribute__((noinline)) float square(float x) { return x * x; }
__device__ __attribute__((noinline)) float negate(float x) { return -x; }

typedef float (*unary)(float);

extern "C" __global__ void calls(int* steps, unsigned long long* fibs, float* fp, const int* sel, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    steps[i] = collatz_steps(i + 1);
    fibs[i] = fib(i % 14);
    unary table[3] = {twice, square, negate};
    fp[i] = table[sel[i] % 3]((float)i + 0.25f);
}

// A private array indexed by data: lives in scratch.
extern "C" __global__ void private_array(const int* idx, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int a[40];
    for (int k = 0; k < 40; ++k) a[k] = k * k + i;
    for (int k = 0; k < 40; ++k) a[(k * 7 + i) % 40] += a[k] / 3;
    if (i < n) out[i] = a[idx[i] % 40];
}

// Sizes from the dispatch (hidden arguments in code object v5, the packet in v4).
extern "C" __global__ void sizes(unsigned* out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = gridDim.x * 1000000 + blockDim.x * 1000 + threadIdx.x;
}
