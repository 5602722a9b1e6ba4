// First translation unit of libtwo.so (a plain offload bundle).
#include <hip/hip_runtime.h>

__device__ int lib_a_value = 11;

__global__ void lib_a_kernel(int* out, int a, int b, int c) {
  out[threadIdx.x] = a + b + c + lib_a_value;
}

// Host-side queries the dlopen test calls: status of hipFuncGetAttributes and
// hipGetSymbolAddress on this library's own kernel and variable.
extern "C" int lib_a_query(const void** kernel_handle, int* max_threads, int* value) {
  *kernel_handle = (const void*)lib_a_kernel;
  hipFuncAttributes attr;
  hipError_t e = hipFuncGetAttributes(&attr, (const void*)lib_a_kernel);
  if (e != hipSuccess) return (int)e;
  *max_threads = attr.maxThreadsPerBlock;
  void* p = nullptr;
  e = hipGetSymbolAddress(&p, HIP_SYMBOL(lib_a_value));
  if (e != hipSuccess) return (int)e;
  *value = *(int*)p;
  return 0;
}
