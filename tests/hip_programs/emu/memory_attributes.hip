// What programs ask about their memory: managed-memory hints (hipMemAdvise,
// hipMemPrefetchAsync, hipMemRangeGetAttribute(s), hipStreamAttachMemAsync) around kernels
// that use the memory, pointer attributes one at a time (hipPointerGetAttribute,
// hipDrvPointerGetAttributes), the flags memory was allocated with (hipHostGetFlags), and
// HIP 5.2.3's errors for bad arguments. Kernel results are checked against the host.
#include "check.h"
#include <vector>

__global__ void scale(float* p, int n, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * k + 1.0f;
}

static const size_t kPage = 4096;

int main() {
  int device = 0;
  HIP_CHECK(hipGetDevice(&device));
  const int n = 5 * 1024;  // five pages of floats
  float* m = nullptr;
  HIP_CHECK(hipMallocManaged((void**)&m, n * sizeof(float), hipMemAttachGlobal));
  std::vector<float> expect(n);
  for (int i = 0; i < n; i++) m[i] = expect[i] = 0.5f * i - 3.0f;

  // Advice on part of the range, then what every page of a range shares.
  HIP_CHECK(hipMemAdvise(m, 2 * kPage, hipMemAdviseSetReadMostly, device));
  HIP_CHECK(hipMemAdvise(m, n * sizeof(float), hipMemAdviseSetPreferredLocation, device));
  HIP_CHECK(hipMemAdvise(m + 1024, kPage, hipMemAdviseSetAccessedBy, hipCpuDeviceId));
  int v = -7;
  HIP_CHECK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeReadMostly, m, 2 * kPage));
  report("read-mostly holds where it was set", v == 1);
  HIP_CHECK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeReadMostly, m, 3 * kPage));
  report("read-mostly does not hold past it", v == 0);
  HIP_CHECK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributePreferredLocation, m, n * 4));
  report("the preferred location", v == device);
  int by[3] = {7, 7, 7};
  HIP_CHECK(hipMemRangeGetAttribute(by, sizeof by, hipMemRangeAttributeAccessedBy, m + 1024, 16));
  report("accessed by the host, then hipInvalidDeviceId",
         by[0] == hipCpuDeviceId && by[1] == hipInvalidDeviceId && by[2] == hipInvalidDeviceId);
  HIP_CHECK(hipMemRangeGetAttribute(by, sizeof by, hipMemRangeAttributeAccessedBy, m, n * 4));
  report("not every page is accessed by the host", by[0] == hipInvalidDeviceId);
  HIP_CHECK(hipMemAdvise(m, 2 * kPage, hipMemAdviseUnsetReadMostly, device));
  HIP_CHECK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeReadMostly, m, 2 * kPage));
  report("read-mostly unset", v == 0);

  // Prefetch to the device in stream order, then a kernel on the same stream; then to the
  // host. The last prefetch location is where every page was last prefetched to.
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  HIP_CHECK(hipStreamAttachMemAsync(s, m, n * sizeof(float), hipMemAttachSingle));
  HIP_CHECK(hipMemPrefetchAsync(m, n * sizeof(float), device, s));
  scale<<<(n + 255) / 256, 256, 0, s>>>(m, n, 3.0f);
  HIP_CHECK(hipMemPrefetchAsync(m + 1024, kPage, hipCpuDeviceId, s));
  HIP_CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < n; i++) expect[i] = expect[i] * 3.0f + 1.0f;
  bool same = true;
  for (int i = 0; i < n; i++) same &= m[i] == expect[i];
  report("a kernel on prefetched managed memory", same);
  HIP_CHECK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeLastPrefetchLocation, m, kPage));
  report("first page last prefetched to the device", v == device);
  HIP_CHECK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeLastPrefetchLocation, m + 1024, kPage));
  report("second page last prefetched to the host", v == hipCpuDeviceId);
  HIP_CHECK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeLastPrefetchLocation, m, n * 4));
  report("the whole range disagrees", v == hipInvalidDeviceId);

  // Several attributes at once.
  {
    int rm = -1, pl = -1, lp = -1;
    void* data[3] = {&rm, &pl, &lp};
    size_t sizes[3] = {4, 4, 4};
    hipMemRangeAttribute which[3] = {hipMemRangeAttributeReadMostly,
                                     hipMemRangeAttributePreferredLocation,
                                     hipMemRangeAttributeLastPrefetchLocation};
    HIP_CHECK(hipMemRangeGetAttributes(data, sizes, which, 3, m + 2048, kPage));
    report("three range attributes at once", rm == 0 && pl == device && lp == device);
    sizes[1] = 3;
    rm = 55;
    report("a bad size fails and writes nothing",
           hipMemRangeGetAttributes(data, sizes, which, 3, m, kPage) == hipErrorInvalidValue &&
               rm == 55);
  }

  // Hints are for managed memory; bad arguments are HIP's errors.
  float* d = nullptr;
  HIP_CHECK(hipMalloc((void**)&d, 4096));
  report("advice for device memory", hipMemAdvise(d, 64, hipMemAdviseSetReadMostly, device) == hipErrorInvalidValue);
  // Device memory answers the coherency it was allocated with (HIP's hipMalloc: coarse);
  // pinned host memory is no range of managed or device memory.
  {
    int mode = 99;
    hipError_t e = hipMemRangeGetAttribute(&mode, 4, hipMemRangeAttributeCoherencyMode, d, 4096);
    report("hipMalloc memory is coarse-grained", e == hipSuccess && mode == hipMemRangeCoherencyModeCoarseGrain);
    float* fine = nullptr;
    HIP_CHECK(hipExtMallocWithFlags((void**)&fine, 4096, hipDeviceMallocFinegrained));
    mode = 99;
    e = hipMemRangeGetAttribute(&mode, 4, hipMemRangeAttributeCoherencyMode, fine + 8, 64);
    report("fine-grained device memory is fine-grained",
           e == hipSuccess && mode == hipMemRangeCoherencyModeFineGrain);
    HIP_CHECK(hipFree(fine));
    void* pinned = nullptr;
    HIP_CHECK(hipHostMalloc(&pinned, 4096, 0));
    report("pinned memory has no range attributes",
           hipMemRangeGetAttribute(&mode, 4, hipMemRangeAttributeReadMostly, pinned, 4096) ==
               hipErrorInvalidValue);
    HIP_CHECK(hipHostFree(pinned));
  }
  report("advice past the allocation",
         hipMemAdvise(m, n * sizeof(float) + 1, hipMemAdviseSetReadMostly, device) == hipErrorInvalidValue);
  report("advice of zero bytes", hipMemAdvise(m, 0, hipMemAdviseSetReadMostly, device) == hipErrorInvalidValue);
  report("prefetch to no device", hipMemPrefetchAsync(m, 64, 99, s) == hipErrorInvalidDevice);
  report("a range attribute of the wrong size",
         hipMemRangeGetAttribute(&v, 8, hipMemRangeAttributeReadMostly, m, 64) == hipErrorInvalidValue);
  report("attaching on the null stream", hipStreamAttachMemAsync(nullptr, m, 64, hipMemAttachHost) == hipErrorInvalidValue);
  void* p = nullptr;
  report("managed memory of 0 bytes", hipMallocManaged(&p, 0, hipMemAttachGlobal) == hipErrorInvalidValue);
  report("managed memory with both flags",
         hipMallocManaged(&p, 64, hipMemAttachGlobal | hipMemAttachHost) == hipErrorInvalidValue);
  report("pinned memory both coherent and not",
         hipHostMalloc(&p, 64, hipHostMallocCoherent | hipHostMallocNonCoherent) == hipErrorInvalidValue);
  (void)hipGetLastError();

  // Pointer attributes one at a time.
  {
    unsigned type = 99;
    HIP_CHECK(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, (hipDeviceptr_t)(d + 10)));
    report("device memory's type", type == hipMemoryTypeDevice);
    hipDeviceptr_t start = nullptr;
    HIP_CHECK(hipPointerGetAttribute(&start, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, (hipDeviceptr_t)(d + 10)));
    unsigned size = 0;
    HIP_CHECK(hipPointerGetAttribute(&size, HIP_POINTER_ATTRIBUTE_RANGE_SIZE, (hipDeviceptr_t)(d + 10)));
    report("an interior pointer's range", start == (hipDeviceptr_t)d && size == 4096);
    int ordinal = -5;
    HIP_CHECK(hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (hipDeviceptr_t)d));
    report("its device", ordinal == device);
    bool managed = false;
    HIP_CHECK(hipPointerGetAttribute(&managed, HIP_POINTER_ATTRIBUTE_IS_MANAGED, (hipDeviceptr_t)(m + 3)));
    report("managed memory is managed", managed);
    float local = 0;
    ordinal = 5;
    report("a stack address is no runtime memory",
           hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (hipDeviceptr_t)&local) ==
                   hipErrorInvalidValue &&
               ordinal == -2);
    report("the context attribute is not supported",
           hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_CONTEXT, (hipDeviceptr_t)d) == hipErrorNotSupported);
    (void)hipGetLastError();

    unsigned buffer_id_a = 0, buffer_id_b = 0;
    hipDeviceptr_t host = (hipDeviceptr_t)1;
    hipPointer_attribute which[3] = {HIP_POINTER_ATTRIBUTE_BUFFER_ID, HIP_POINTER_ATTRIBUTE_HOST_POINTER,
                                     HIP_POINTER_ATTRIBUTE_MEMORY_TYPE};
    void* out[3] = {&buffer_id_a, &host, &type};
    HIP_CHECK(hipDrvPointerGetAttributes(3, which, out, (hipDeviceptr_t)d));
    report("device memory has no host pointer", host == nullptr);
    out[0] = &buffer_id_b;
    HIP_CHECK(hipDrvPointerGetAttributes(3, which, out, (hipDeviceptr_t)m));
    report("two allocations have two buffer ids", buffer_id_a != buffer_id_b);
    report("managed memory's host pointer is itself", host == (hipDeviceptr_t)m);
  }

  // The flags memory was allocated with.
  {
    void* pinned = nullptr;
    unsigned flags = 0;
    HIP_CHECK(hipHostMalloc(&pinned, 256, hipHostMallocMapped | hipHostMallocWriteCombined));
    HIP_CHECK(hipHostGetFlags(&flags, (char*)pinned + 17));
    report("hipHostGetFlags returns the allocation's flags", flags == (hipHostMallocMapped | hipHostMallocWriteCombined));
    HIP_CHECK(hipHostFree(pinned));
    HIP_CHECK(hipHostMalloc(&pinned, 256, 0));
    HIP_CHECK(hipHostGetFlags(&flags, pinned));
    report("and 0 for none", flags == 0);
    HIP_CHECK(hipHostFree(pinned));
    report("no flags for a stack address", hipHostGetFlags(&flags, &flags) == hipErrorInvalidValue);
    (void)hipGetLastError();
  }

  HIP_CHECK(hipFree(d));
  HIP_CHECK(hipFree(m));
  HIP_CHECK(hipStreamDestroy(s));
  return finish();
}
