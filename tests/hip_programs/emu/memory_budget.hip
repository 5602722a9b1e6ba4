// Device memory as a budget (ROCLOAD_DEVICE_MEMORY): hipMemGetInfo, hipDeviceTotalMem and the
// properties report the configured total; free memory drops by what hipMalloc,
// hipMallocManaged, hipMallocArray and hipMemCreate take and comes back at their free, the same
// from one call to the next; hipHostMalloc (host memory) does not count; an allocation larger
// than what is left fails with hipErrorOutOfMemory and takes nothing, and exactly what is left
// can be had. The memory works: a kernel fills it and the host checks.
// The program runs itself again with ROCLOAD_DEVICE_MEMORY=256M when the variable is unset.
// Through ROCr's API (ROCLOAD_BACKEND=hsa, the software HSA library) managed memory is system
// memory and ROCr 5.2.3 has no virtual memory API: those two are checked on the software agent
// only.
#include "check.h"
#include <unistd.h>
#include <string>

__global__ void fill(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 7 * i + 3;
}

static size_t free_now() {
  size_t free = 0, total = 0;
  HIP_CHECK(hipMemGetInfo(&free, &total));
  return free;
}

static std::string bytes(size_t want, size_t got) {
  return "expected " + std::to_string(want) + ", got " + std::to_string(got);
}

int main(int argc, char** argv) {
  (void)argc;
  if (!getenv("ROCLOAD_DEVICE_MEMORY")) {
    setenv("ROCLOAD_DEVICE_MEMORY", "256M", 1);
    execv("/proc/self/exe", argv);
    report("running again with ROCLOAD_DEVICE_MEMORY set", false, "execv failed");
    return finish();
  }
  const char* backend = getenv("ROCLOAD_BACKEND");
  const bool rocr = backend && strcmp(backend, "hsa") == 0;
  const size_t budget = 256u << 20, MiB = 1u << 20;

  size_t free0 = 0, total = 0, total_mem = 0;
  HIP_CHECK(hipMemGetInfo(&free0, &total));
  HIP_CHECK(hipDeviceTotalMem(&total_mem, 0));
  hipDeviceProp_t props;
  HIP_CHECK(hipGetDeviceProperties(&props, 0));
  report("hipMemGetInfo's total is the configured device memory", total == budget,
         bytes(budget, total).c_str());
  report("hipDeviceTotalMem and totalGlobalMem agree",
         total_mem == budget && props.totalGlobalMem == budget);
  report("free memory is at most the total", free0 <= total);
  report("free memory is the same from one call to the next", free_now() == free0);

  int* a = nullptr;
  HIP_CHECK(hipMalloc(&a, 64 * MiB));
  size_t f1 = free_now();
  report("hipMalloc takes what it allocated", f1 == free0 - 64 * MiB,
         bytes(free0 - 64 * MiB, f1).c_str());
  const int n = 1 << 20;
  fill<<<n / 256, 256>>>(a, n);
  HIP_CHECK(hipGetLastError());
  int* host = (int*)malloc(n * sizeof(int));
  HIP_CHECK(hipMemcpy(host, a, n * sizeof(int), hipMemcpyDeviceToHost));
  bool same = true;
  for (int i = 0; i < n; i++) same = same && host[i] == 7 * i + 3;
  report("a kernel fills the allocation", same);
  free(host);

  void* pinned = nullptr;
  HIP_CHECK(hipHostMalloc(&pinned, 32 * MiB));
  report("hipHostMalloc takes no device memory", free_now() == f1);

  size_t before = free_now();
  void* managed = nullptr;
  if (!rocr) {
    HIP_CHECK(hipMallocManaged(&managed, 16 * MiB));
    size_t f = free_now();
    report("hipMallocManaged takes what it allocated", f == before - 16 * MiB,
           bytes(before - 16 * MiB, f).c_str());
    before = f;
  }

  hipArray_t array = nullptr;
  hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
  HIP_CHECK(hipMallocArray(&array, &desc, 1024, 1024));
  size_t f2 = free_now();
  report("hipMallocArray takes at least its 4 MiB", before - f2 >= 4 * MiB && before - f2 < 8 * MiB,
         bytes(before - 4 * MiB, f2).c_str());
  before = f2;

  hipMemGenericAllocationHandle_t handle = 0;
  bool vmm = false;
  if (!rocr) {
    hipMemAllocationProp prop = {};
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    size_t granularity = 0;
    HIP_CHECK(hipMemGetAllocationGranularity(&granularity, &prop,
                                             hipMemAllocationGranularityMinimum));
    size_t size = ((8 * MiB + granularity - 1) / granularity) * granularity;
    HIP_CHECK(hipMemCreate(&handle, size, &prop, 0));
    vmm = true;
    size_t f = free_now();
    report("hipMemCreate takes what it created", f == before - size,
           bytes(before - size, f).c_str());
    before = f;
  }

  void* big = nullptr;
  hipError_t e = hipMalloc(&big, before + 1);
  report("hipMalloc of more than is left is hipErrorOutOfMemory",
         e == hipErrorOutOfMemory && big == nullptr, hipGetErrorName(e));
  hipGetLastError();
  if (!rocr) {
    e = hipMallocManaged(&big, before + 1);
    report("hipMallocManaged of more than is left is hipErrorOutOfMemory",
           e == hipErrorOutOfMemory, hipGetErrorName(e));
    hipGetLastError();
  }
  report("a refused allocation takes nothing", free_now() == before);

  void* rest = nullptr;
  if (!rocr) {
    HIP_CHECK(hipMalloc(&rest, before));
    report("exactly what is left can be allocated", free_now() == 0);
    HIP_CHECK(hipFree(rest));
  }

  HIP_CHECK(hipFree(a));
  HIP_CHECK(hipHostFree(pinned));
  if (managed) HIP_CHECK(hipFree(managed));
  HIP_CHECK(hipFreeArray(array));
  if (vmm) HIP_CHECK(hipMemRelease(handle));
  size_t f3 = free_now();
  report("every free gives its bytes back", f3 == free0, bytes(free0, f3).c_str());
  return finish();
}
