// Device printf (clang-19 HIP: the hostcall protocol on the hidden hostcall buffer) and assert.
#include <hip/hip_runtime.h>

extern "C" __global__ void hello(int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) printf("item %d of %d: %s\n", i, n, i % 2 ? "odd" : "even");
}

extern "C" __global__ void check_positive(const int* v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(v[i] > 0);
}
