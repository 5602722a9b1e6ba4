// Header-free HIP: a kernel with an indirect call, whose stack the compiler cannot bound
// (.uses_dynamic_stack: true, kernel_code_properties bit 11).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
__device__ __attribute__((noinline)) int rr_twice(int x) { return 2 * x; }
__device__ __attribute__((noinline)) int rr_thrice(int x) { return 3 * x; }
extern "C" __global__ void rr_indirect(int *out, int n) {
  int (*f)(int) = n > 0 ? rr_twice : rr_thrice;
  out[0] = f(out[1]);
}
