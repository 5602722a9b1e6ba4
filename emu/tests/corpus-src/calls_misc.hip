// Corpus source: device-function calls, recursion, private arrays, function
// pointers, printf.
#include <hip/hip_runtime.h>
#include <cstdio>

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ float poly(float x, const float* c, int k) { float r = 0; for (int i = k - 1; i >= 0; i--) r = r * x + c[i]; return r; }
__device__ int op_add(int a, int b) { return a + b; }
__device__ int op_mul(int a, int b) { return a * b; }
__device__ int op_xor(int a, int b) { return a ^ b; }
typedef int (*binop)(int, int);
__device__ binop ops[3] = {op_add, op_mul, op_xor};

__global__ void recursion(int* out, int n) { int i = threadIdx.x; if (i < n) out[i] = fib(i % 20); }

__global__ void private_array(float* out, const int* idx, int n) {
  float local[32];
  for (int k = 0; k < 32; k++) local[k] = k * 1.5f + threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = local[idx[i] & 31] + poly(local[3], local, 8);
}

__global__ void fnptr(int* out, const int* sel, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = ops[sel[i] % 3](out[i], i);
}

__global__ void hello(int n) {
  if (threadIdx.x < n) printf("thread %d block %d value %f %lld\n", (int)threadIdx.x, (int)blockIdx.x, threadIdx.x * 0.5, (long long)blockIdx.x << 40);
}
