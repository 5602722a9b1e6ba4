// Second translation unit of libtwo.so, compiled with --offload-compress (a CCOB).
#include <hip/hip_runtime.h>

__device__ double lib_b_value[3] = {0.5, 1.5, 2.5};

__global__ void __launch_bounds__(128) lib_b_kernel(double* out, double s) {
  out[threadIdx.x] = s * lib_b_value[threadIdx.x % 3];
}

extern "C" int lib_b_query(const void** kernel_handle, int* max_threads, double* value) {
  *kernel_handle = (const void*)lib_b_kernel;
  hipFuncAttributes attr;
  hipError_t e = hipFuncGetAttributes(&attr, (const void*)lib_b_kernel);
  if (e != hipSuccess) return (int)e;
  *max_threads = attr.maxThreadsPerBlock;
  void* p = nullptr;
  e = hipGetSymbolAddress(&p, HIP_SYMBOL(lib_b_value));
  if (e != hipSuccess) return (int)e;
  *value = ((double*)p)[2];
  return 0;
}
