// hipDeviceReset as HIP's runtime does it (clr's hip::Device::Reset): the device's memory
// (hipMalloc, hipMallocAsync blocks, with one device also hipHostMalloc) is freed, so that
// hipPointerGetAttributes and hipFree refuse it and a kernel touching it is stopped by the
// memory checker; the streams the program created are destroyed (their handles are invalid);
// the memory pools are new (an old pool handle is invalid); the flags are a fresh device's;
// events and modules survive, and new allocations and streams work, computing what the host
// computes. With two devices (ROCLOAD_SOFT_ISA=gfx1030,gfx1030), resetting device 0 leaves
// device 1's memory, streams and pinned host memory alive. Prints "freed <address>" for the
// allocation a kernel then touches, for the test to find the checker's report.
#include "check.h"

#include <vector>

static const int N = 256;

__global__ void fill(int* p, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + i * 3;
}

__global__ void touch(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

// Fills `p` on the current device and checks it against the host.
static bool fills(int* p, int base, hipStream_t s = nullptr) {
  fill<<<N / 64, 64, 0, s>>>(p, base, N);
  if (hipGetLastError() != hipSuccess || hipStreamSynchronize(s) != hipSuccess) return false;
  std::vector<int> host(N);
  if (hipMemcpy(host.data(), p, N * 4, hipMemcpyDeviceToHost) != hipSuccess) return false;
  for (int i = 0; i < N; i++)
    if (host[i] != base + i * 3) return false;
  return true;
}

int main() {
  int devices = 0;
  HIP_CHECK(hipGetDeviceCount(&devices));
  printf("%d device(s)\n", devices);
  HIP_CHECK(hipSetDevice(0));

  // Device 1's resources, when there is one: a reset of device 0 must leave them.
  int* other = nullptr;
  hipStream_t other_stream = nullptr;
  if (devices > 1) {
    HIP_CHECK(hipSetDevice(1));
    HIP_CHECK(hipMalloc(&other, N * 4));
    HIP_CHECK(hipStreamCreate(&other_stream));
    report("device 1 computes before the reset", fills(other, 1000, other_stream));
    HIP_CHECK(hipSetDevice(0));
  }

  // Device 0's resources.
  int *dev = nullptr, *pinned = nullptr, *async = nullptr;
  HIP_CHECK(hipMalloc(&dev, N * 4));
  HIP_CHECK(hipHostMalloc(&pinned, N * 4, 0));
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  HIP_CHECK(hipMallocAsync((void**)&async, N * 4, s));
  hipMemPool_t old_pool;
  HIP_CHECK(hipDeviceGetDefaultMemPool(&old_pool, 0));
  hipEvent_t ev;
  HIP_CHECK(hipEventCreate(&ev));
  report("device 0 computes before the reset", fills(dev, 7, s) && fills(async, 9, s));
  HIP_CHECK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync));

  HIP_CHECK(hipDeviceReset());

  // The memory is gone: the runtime no longer knows it.
  hipPointerAttribute_t attr;
  report("hipPointerGetAttributes of freed device memory: hipErrorInvalidValue",
         hipPointerGetAttributes(&attr, dev) == hipErrorInvalidValue);
  report("hipPointerGetAttributes of a freed stream-ordered block: hipErrorInvalidValue",
         hipPointerGetAttributes(&attr, async) == hipErrorInvalidValue);
  std::vector<int> host(N);
  report("a copy from freed device memory: hipErrorInvalidValue",
         hipMemcpy(host.data(), dev, N * 4, hipMemcpyDeviceToHost) == hipErrorInvalidValue);
  (void)hipGetLastError();

  // A kernel touching it is stopped by the memory checker, as after hipFree.
  printf("freed %p\n", (void*)dev);
  fflush(stdout);
  touch<<<N / 64, 64>>>(dev, N);
  hipError_t launched = hipGetLastError();
  hipError_t synced = hipDeviceSynchronize();
  char detail[160];
  snprintf(detail, sizeof detail, "launch %s, synchronize %s (expected hipErrorIllegalAddress)",
           hipGetErrorName(launched), hipGetErrorName(synced));
  report("a kernel touching memory a reset freed faults",
         launched == hipErrorIllegalAddress || synced == hipErrorIllegalAddress, detail);
  HIP_CHECK(hipDeviceReset());
  (void)hipGetLastError();

  report("hipFree of memory a reset freed: hipErrorInvalidValue",
         hipFree(dev) == hipErrorInvalidValue);
  report("hipFreeAsync of a block a reset freed: refused",
         hipFreeAsync(async, nullptr) == hipErrorInvalidValue);
  // clr's host context holds every device: its memory is one device's alone only with one.
  hipError_t host_free = hipHostFree(pinned);
  if (devices == 1) {
    report("with one device, pinned host memory is freed too",
           host_free == hipErrorInvalidValue, hipGetErrorName(host_free));
  } else {
    report("with two devices, pinned host memory survives", host_free == hipSuccess,
           hipGetErrorName(host_free));
  }
  (void)hipGetLastError();

  // The stream is destroyed: its handle is invalid.
  report("hipStreamSynchronize of a stream the reset destroyed: hipErrorInvalidHandle",
         hipStreamSynchronize(s) == hipErrorInvalidHandle);
  report("hipStreamDestroy of it: hipErrorInvalidHandle",
         hipStreamDestroy(s) == hipErrorInvalidHandle);
  (void)hipGetLastError();

  // The pools are new.
  uint64_t used = 0;
  report("the old default pool's handle is invalid",
         hipMemPoolGetAttribute(old_pool, hipMemPoolAttrUsedMemCurrent, &used) ==
             hipErrorInvalidValue);
  (void)hipGetLastError();
  hipMemPool_t pool;
  HIP_CHECK(hipDeviceGetDefaultMemPool(&pool, 0));
  HIP_CHECK(hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &used));
  report("the new default pool holds nothing", pool != old_pool && used == 0);

  // The flags are a fresh device's; the event survives.
  unsigned flags = 99;
  HIP_CHECK(hipGetDeviceFlags(&flags));
  report("the flags are reset", flags == 0);
  report("an event made before the reset works",
         hipEventRecord(ev, nullptr) == hipSuccess && hipEventSynchronize(ev) == hipSuccess);
  HIP_CHECK(hipEventDestroy(ev));

  // New memory and streams work.
  int *fresh = nullptr, *fresh_async = nullptr;
  hipStream_t t;
  HIP_CHECK(hipStreamCreate(&t));
  HIP_CHECK(hipMalloc(&fresh, N * 4));
  HIP_CHECK(hipMallocAsync((void**)&fresh_async, N * 4, t));
  report("a new allocation and stream compute after the reset",
         fills(fresh, 11, t) && fills(fresh_async, 13, t));
  HIP_CHECK(hipFreeAsync(fresh_async, t));
  HIP_CHECK(hipStreamDestroy(t));
  HIP_CHECK(hipFree(fresh));

  if (devices > 1) {
    HIP_CHECK(hipSetDevice(1));
    std::vector<int> kept(N);
    HIP_CHECK(hipMemcpy(kept.data(), other, N * 4, hipMemcpyDeviceToHost));
    bool same = true;
    for (int i = 0; i < N; i++) same = same && kept[i] == 1000 + i * 3;
    report("device 1's memory keeps its contents across device 0's reset", same);
    report("device 1's memory and stream still compute", fills(other, 2000, other_stream));
    HIP_CHECK(hipStreamDestroy(other_stream));
    HIP_CHECK(hipFree(other));
    HIP_CHECK(hipSetDevice(0));
  }
  return finish();
}
