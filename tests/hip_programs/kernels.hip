// A HIP program written against the real hip/hip_runtime.h, linked against librocload.so
// (not libamdhip64). Its static constructor registers the fat binary, kernels and
// variables; main queries them on device 0 (the software agent) and prints one fact per
// line ("key value") for tests/runtime_hip.rs, which checks them against the code object.
#include <hip/hip_runtime.h>
#include <rocload.h>
#include <cstdint>
#include <cstdio>
#include <cstring>

__device__ int dev_counter = 7;
__constant__ float dev_coeffs[4] = {1.5f, 2.5f, 3.5f, 4.5f};
__managed__ int managed_total = 42;

extern "C" __device__ __attribute__((noinline, visibility("default"))) float dev_scale(float x, float a) {
  return x * a + dev_coeffs[0];
}

__global__ void scale(float* out, const float* in, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = dev_scale(in[i], a) + dev_counter + managed_total;
}

template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
template __global__ void axpy<double>(double, const double*, double*, int);

__global__ void __launch_bounds__(256) tile_sum(const int* in, int* out) {
  __shared__ int tile[256];
  tile[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < 256; ++i) s += tile[i];
    out[blockIdx.x] = s;
  }
}

static void stats(const char* when) {
  rocload_stats_t s;
  if (rocload_stats(&s) != 0) { printf("error stats\n"); return; }
  printf("stats_%s registered=%llu loads=%llu failures=%llu\n", when, (unsigned long long)s.registered,
         (unsigned long long)s.loads, (unsigned long long)s.load_failures);
}

static void kernel(const char* label, const void* handle) {
  hipFuncAttributes a;
  hipError_t e = hipFuncGetAttributes(&a, handle);
  rocload_kernel_info_t k = {};
  int e2 = rocload_kernel_info(handle, 0, &k);
  printf("kernel %s status=%d info_status=%d shared=%zu local=%zu max_threads=%d regs=%d kernarg=%llu kernarg_align=%llu group=%llu private=%llu wave=%u sgpr=%d vgpr=%d maxwg=%d\n",
         label, (int)e, e2, a.sharedSizeBytes, a.localSizeBytes, a.maxThreadsPerBlock, a.numRegs,
         (unsigned long long)k.kernarg_segment_size, (unsigned long long)k.kernarg_segment_align,
         (unsigned long long)k.group_segment_fixed_size, (unsigned long long)k.private_segment_fixed_size,
         k.wavefront_size, k.sgpr_count, k.vgpr_count, k.max_flat_workgroup_size);
  // The descriptor is in host memory on the software agent: its kernarg_size (offset 8)
  // must agree with the metadata.
  uint32_t kd_kernarg = 0;
  if (e2 == 0) memcpy(&kd_kernarg, (const void*)(uintptr_t)(k.descriptor_address + 8), 4);
  printf("descriptor %s address=%llu kernarg_size=%u\n", label, (unsigned long long)k.descriptor_address, kd_kernarg);
}

int main() {
  stats("start");  // registration happened in the static constructor; nothing loaded yet

  int count = -1;
  hipError_t e = hipGetDeviceCount(&count);
  printf("device_count status=%d count=%d\n", (int)e, count);
  hipDeviceProp_t prop;
  e = hipGetDeviceProperties(&prop, 0);
  printf("device_props status=%d gcnArchName=%s warp=%d major=%d minor=%d\n", (int)e, prop.gcnArchName,
         prop.warpSize, prop.major, prop.minor);
  printf("device_name %s\n", prop.name);
  stats("after_device_queries");

  kernel("scale", (const void*)scale);
  stats("after_first_kernel");
  kernel("axpy_double", (const void*)axpy<double>);
  kernel("tile_sum", (const void*)tile_sum);
  stats("after_all_kernels");

  void* p = nullptr;
  size_t size = 0;
  e = hipGetSymbolAddress(&p, HIP_SYMBOL(dev_counter));
  hipError_t e2 = hipGetSymbolSize(&size, HIP_SYMBOL(dev_counter));
  printf("symbol dev_counter status=%d size_status=%d address=%llu size=%zu value=%d\n", (int)e, (int)e2,
         (unsigned long long)(uintptr_t)p, size, p ? *(int*)p : -1);
  e = hipGetSymbolAddress(&p, HIP_SYMBOL(dev_coeffs));
  e2 = hipGetSymbolSize(&size, HIP_SYMBOL(dev_coeffs));
  printf("symbol dev_coeffs status=%d size_status=%d address=%llu size=%zu value3=%g\n", (int)e, (int)e2,
         (unsigned long long)(uintptr_t)p, size, p ? ((float*)p)[3] : -1.0f);

  // Managed: the host sees the initial value through its pointer, and the device pointer
  // variable (found by name) holds the same address.
  uint64_t addr = 0, sz = 0;
  int r = rocload_device_function("managed_total", 0, &addr, &sz);
  void* device_view = addr ? *(void**)(uintptr_t)addr : nullptr;
  printf("managed status=%d host_value=%d device_pointer_matches=%d\n", r, managed_total,
         device_view == (void*)&managed_total);

  r = rocload_device_function("dev_scale", 0, &addr, &sz);
  printf("device_function dev_scale status=%d address=%llu size=%llu\n", r, (unsigned long long)addr,
         (unsigned long long)sz);
  r = rocload_device_function("no_such_function", 0, &addr, &sz);
  printf("device_function missing status=%d\n", r);

  // A launch runs the kernel, which calls the device function and reads the device,
  // constant and managed variables; checked against the same computation on the host.
  (void)hipGetLastError();
  float in_h[64], out_h[64];
  for (int i = 0; i < 64; i++) in_h[i] = 0.5f * i - 3.0f;
  float *in_d = nullptr, *out_d = nullptr;
  (void)hipMalloc((void**)&in_d, sizeof(in_h));
  (void)hipMalloc((void**)&out_d, sizeof(out_h));
  (void)hipMemcpy(in_d, in_h, sizeof(in_h), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(scale, dim3(1), dim3(64), 0, 0, out_d, in_d, 2.0f, 64);
  e = hipGetLastError();
  hipError_t sync = hipDeviceSynchronize();
  (void)hipMemcpy(out_h, out_d, sizeof(out_h), hipMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < 64; i++) wrong += out_h[i] != in_h[i] * 2.0f + 1.5f + 7 + managed_total;
  printf("launch status=%d name=%s sync=%d wrong=%d\n", (int)e, hipGetErrorName(e), (int)sync, wrong);
  (void)hipFree(in_d);
  (void)hipFree(out_d);
  printf("last_error_after_reset %d\n", (int)hipGetLastError());

  // Bad arguments are errors, not crashes.
  printf("null_attr %d\n", (int)hipFuncGetAttributes(nullptr, (const void*)scale));
  hipFuncAttributes unused;
  printf("unknown_function %d\n", (int)hipFuncGetAttributes(&unused, (const void*)&count));
  printf("unknown_symbol %d\n", (int)hipGetSymbolAddress(&p, &count));
  printf("bad_device %d\n", (int)hipGetDeviceProperties(&prop, 7));
  printf("error_string %s\n", hipGetErrorString(hipErrorNoBinaryForGpu));
  stats("end");
  return 0;
}
