// Device-function calls (not inlined), recursion with a dynamic stack, function pointers, and
// private arrays indexed at run time; checked against the host.
#include "check.h"

__device__ __noinline__ int mix(int a, int b) { return a * 31 + (b ^ (a >> 3)); }

__device__ __noinline__ long long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ __noinline__ int ackermann_small(int m, int n) {
  if (m == 0) return n + 1;
  if (n == 0) return ackermann_small(m - 1, 1);
  return ackermann_small(m - 1, ackermann_small(m, n - 1));
}

typedef int (*binop)(int, int);
__device__ int op_add(int a, int b) { return a + b; }
__device__ int op_mul(int a, int b) { return a * b; }
__device__ int op_sub(int a, int b) { return a - b; }
__device__ int op_max(int a, int b) { return a > b ? a : b; }

__global__ void calls(const int* in, int* out, long long* fibs, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  binop table[4] = {op_add, op_mul, op_sub, op_max};
  int priv[24];
  for (int k = 0; k < 24; k++) priv[k] = mix(in[i], k);
  int idx = (in[i] & 0x7fffffff) % 24;
  out[i * 4 + 0] = priv[idx] + priv[(idx * 7) % 24];
  out[i * 4 + 1] = table[i % 4](in[i], i);
  out[i * 4 + 2] = ackermann_small(2, i % 5);
  out[i * 4 + 3] = mix(mix(in[i], 1), 2);
  fibs[i] = fib(i % 16);
}

static int mix_h(int a, int b) { return a * 31 + (b ^ (a >> 3)); }
static long long fib_h(int n) { return n < 2 ? n : fib_h(n - 1) + fib_h(n - 2); }
static int ack_h(int m, int n) { return m == 0 ? n + 1 : n == 0 ? ack_h(m - 1, 1) : ack_h(m - 1, ack_h(m, n - 1)); }

int main() {
  const int N = 256;
  int* in = new int[N];
  for (int i = 0; i < N; i++) in[i] = i * 2654435761u;
  int *din, *dout;
  long long* dfib;
  HIP_CHECK(hipMalloc(&din, N * 4));
  HIP_CHECK(hipMalloc(&dout, N * 16));
  HIP_CHECK(hipMalloc(&dfib, N * 8));
  HIP_CHECK(hipMemcpy(din, in, N * 4, hipMemcpyHostToDevice));
  calls<<<N / 64, 64>>>(din, dout, dfib, N);
  HIP_CHECK(hipGetLastError());
  int* out = new int[N * 4];
  long long* fibs = new long long[N];
  HIP_CHECK(hipMemcpy(out, dout, N * 16, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(fibs, dfib, N * 8, hipMemcpyDeviceToHost));
  bool ok_priv = true, ok_ptr = true, ok_rec = true, ok_call = true, ok_fib = true;
  for (int i = 0; i < N; i++) {
    int priv[24];
    for (int k = 0; k < 24; k++) priv[k] = mix_h(in[i], k);
    int idx = (in[i] & 0x7fffffff) % 24;
    ok_priv &= out[i * 4] == priv[idx] + priv[(idx * 7) % 24];
    int a = in[i], b = i;
    int r = i % 4 == 0 ? a + b : i % 4 == 1 ? a * b : i % 4 == 2 ? a - b : (a > b ? a : b);
    ok_ptr &= out[i * 4 + 1] == r;
    ok_rec &= out[i * 4 + 2] == ack_h(2, i % 5);
    ok_call &= out[i * 4 + 3] == mix_h(mix_h(in[i], 1), 2);
    ok_fib &= fibs[i] == fib_h(i % 16);
  }
  report("private arrays", ok_priv);
  report("function pointers", ok_ptr);
  report("recursion (ackermann)", ok_rec);
  report("device function calls", ok_call);
  report("recursion (fib)", ok_fib);
  return finish();
}
