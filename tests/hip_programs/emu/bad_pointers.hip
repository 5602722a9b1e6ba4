// Calls that must not trust their pointers: every pointer and range a call takes is checked
// before anything is read or written, and a bad one is a HIP error, never a crash of the host
// (the runtime's queue thread copies and fills; kernels store into registered memory).
// hipHostRegister of unmapped, PROT_NONE, read-only or wrapping ranges; hipMemset* (1D, 2D,
// element and async forms) of memory no device knows, NULL or past an allocation; hipMemcpy*
// whose kind says a side is the device's when no device knows it, or whose host side is not
// mapped for the copy; hipMemcpyToSymbol/FromSymbol offsets. After all of it the device has
// no error and the valid forms still work.
#include "check.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

__device__ int d_words[16];

__global__ void store_all(int* p, int n, int v) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) p[i] = v;
}

static void expect(const char* what, hipError_t got, hipError_t want) {
  char detail[200];
  snprintf(detail, sizeof detail, "%s, expected %s", hipGetErrorName(got), hipGetErrorName(want));
  report(what, got == want, detail);
  (void)hipGetLastError();
}

static char* map(size_t bytes, int prot) {
  void* p = mmap(nullptr, bytes, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    printf("FAIL mmap\n");
    exit(2);
  }
  return (char*)p;
}

int main() {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const hipError_t inv = hipErrorInvalidValue;
  char* none = map(2 * page, PROT_NONE);
  char* ro = map(page, PROT_READ);
  char* half = map(2 * page, PROT_READ | PROT_WRITE);  // its second page is unmapped below
  munmap(half + page, page);
  char* gone = map(page, PROT_READ | PROT_WRITE);
  munmap(gone, page);
  void* bogus = gone;  // neither device memory nor mapped
  int* dev = nullptr;
  HIP_CHECK(hipMalloc(&dev, 256));
  int host[64] = {0};

  // hipHostRegister / hipHostUnregister.
  expect("hipHostRegister of PROT_NONE memory", hipHostRegister(none, page, 0), inv);
  expect("hipHostRegister of unmapped memory", hipHostRegister(gone, page, 0), inv);
  expect("hipHostRegister of a range running into unmapped memory",
         hipHostRegister(half, 2 * page, 0), inv);
  expect("hipHostRegister of SIZE_MAX bytes", hipHostRegister(half, SIZE_MAX, 0), inv);
  expect("hipHostRegister of read-only memory", hipHostRegister(ro, page, 0), inv);
  expect("hipHostRegister of mapped memory", hipHostRegister(half, page, 0), hipSuccess);
  // Kernels take the device's address for registered memory (ROCr maps it elsewhere).
  void* half_view = nullptr;
  HIP_CHECK(hipHostGetDevicePointer(&half_view, half, 0));
  store_all<<<1, 64>>>((int*)half_view, (int)(page / sizeof(int)), 9);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  bool stored = true;
  for (size_t i = 0; i < page / sizeof(int); i++) stored = stored && ((int*)half)[i] == 9;
  report("a kernel stores into registered memory", stored);
  expect("hipHostRegister of registered memory", hipHostRegister(half, page, 0),
         hipErrorHostMemoryAlreadyRegistered);
  expect("hipHostUnregister(NULL)", hipHostUnregister(nullptr), inv);
  expect("hipHostUnregister", hipHostUnregister(half), hipSuccess);
  expect("hipHostUnregister of memory no longer registered", hipHostUnregister(half),
         hipErrorHostMemoryNotRegistered);

  // Fills: the destination must be memory of a device, all of it.
  expect("hipMemset of unmapped memory", hipMemset(bogus, 0, 64), inv);
  expect("hipMemset of pageable host memory", hipMemset(host, 0, sizeof host), inv);
  expect("hipMemsetAsync of unmapped memory", hipMemsetAsync(bogus, 0, 64, nullptr), inv);
  expect("hipMemsetD8 of unmapped memory", hipMemsetD8((hipDeviceptr_t)bogus, 1, 64), inv);
  expect("hipMemsetD16 of unmapped memory", hipMemsetD16((hipDeviceptr_t)bogus, 1, 32), inv);
  expect("hipMemsetD32 of unmapped memory", hipMemsetD32((hipDeviceptr_t)bogus, 1, 16), inv);
  expect("hipMemsetD8Async of unmapped memory",
         hipMemsetD8Async((hipDeviceptr_t)bogus, 1, 64, nullptr), inv);
  expect("hipMemsetD16Async of unmapped memory",
         hipMemsetD16Async((hipDeviceptr_t)bogus, 1, 32, nullptr), inv);
  expect("hipMemsetD32Async of unmapped memory",
         hipMemsetD32Async((hipDeviceptr_t)bogus, 1, 16, nullptr), inv);
  expect("hipMemset past the end of an allocation", hipMemset(dev + 32, 0, 200), inv);
  expect("hipMemsetD32 past the end of an allocation",
         hipMemsetD32((hipDeviceptr_t)dev, 0, (size_t)1 << 62), inv);
  expect("hipMemset2D of NULL", hipMemset2D(nullptr, 64, 0, 64, 2), inv);
  expect("hipMemset2D of unmapped memory", hipMemset2D(bogus, 64, 0, 64, 2), inv);
  expect("hipMemset2DAsync of unmapped memory", hipMemset2DAsync(bogus, 64, 0, 64, 2, nullptr),
         inv);
  expect("hipMemset2D past the end of an allocation", hipMemset2D(dev, 64, 0, 64, 5), inv);
  expect("hipMemset of 0 bytes at NULL", hipMemset(nullptr, 0, 0), hipSuccess);

  // Copies: a side the kind says is the device's must be; host sides must be mapped for it.
  expect("hipMemcpy host to an unknown device pointer",
         hipMemcpy(bogus, host, 64, hipMemcpyHostToDevice), inv);
  expect("hipMemcpy from an unknown device pointer to host",
         hipMemcpy(host, bogus, 64, hipMemcpyDeviceToHost), inv);
  expect("hipMemcpy device to device from an unknown pointer",
         hipMemcpy(dev, host, 64, hipMemcpyDeviceToDevice), inv);
  expect("hipMemcpyAsync host to an unknown device pointer",
         hipMemcpyAsync(bogus, host, 64, hipMemcpyHostToDevice, nullptr), inv);
  expect("hipMemcpyHtoD to an unknown device pointer",
         hipMemcpyHtoD((hipDeviceptr_t)host, host, 64), inv);
  expect("hipMemcpyDtoH from an unknown device pointer",
         hipMemcpyDtoH(host, (hipDeviceptr_t)bogus, 64), inv);
  expect("hipMemcpyDtoDAsync from an unknown device pointer",
         hipMemcpyDtoDAsync((hipDeviceptr_t)dev, (hipDeviceptr_t)bogus, 64, nullptr), inv);
  expect("hipMemcpy2D device to device from an unknown pointer",
         hipMemcpy2D(dev, 64, bogus, 64, 64, 2, hipMemcpyDeviceToDevice), inv);
  expect("hipMemcpy from unmapped host memory", hipMemcpy(dev, gone, 64, hipMemcpyHostToDevice),
         inv);
  expect("hipMemcpy from PROT_NONE memory", hipMemcpy(dev, none, 64, hipMemcpyDefault), inv);
  expect("hipMemcpy into read-only host memory", hipMemcpy(ro, dev, 64, hipMemcpyDeviceToHost),
         inv);
  expect("hipMemcpy running into unmapped host memory",
         hipMemcpy(dev, half + page - 32, 64, hipMemcpyHostToDevice), inv);
  expect("hipMemcpy2D from host rows running into unmapped memory",
         hipMemcpy2D(dev, 64, half + page - 64, 64, 64, 2, hipMemcpyHostToDevice), inv);
  expect("hipMemcpyAsync into unmapped host memory",
         hipMemcpyAsync(gone, dev, 64, hipMemcpyDeviceToHost, nullptr), inv);

  // Device variables: offset and size against the variable's 64 bytes, without overflow.
  expect("hipMemcpyToSymbol at offset SIZE_MAX",
         hipMemcpyToSymbol(HIP_SYMBOL(d_words), host, 4, SIZE_MAX, hipMemcpyHostToDevice), inv);
  expect("hipMemcpyToSymbol past the variable",
         hipMemcpyToSymbol(HIP_SYMBOL(d_words), host, 8, 60, hipMemcpyHostToDevice), inv);
  expect("hipMemcpyFromSymbol of SIZE_MAX bytes",
         hipMemcpyFromSymbol(host, HIP_SYMBOL(d_words), SIZE_MAX, 8, hipMemcpyDeviceToHost), inv);
  expect("hipMemcpyToSymbol from unmapped memory",
         hipMemcpyToSymbol(HIP_SYMBOL(d_words), gone, 4, 0, hipMemcpyHostToDevice), inv);
  expect("hipMemcpyFromSymbolAsync into read-only memory",
         hipMemcpyFromSymbolAsync(ro, HIP_SYMBOL(d_words), 4, 0, hipMemcpyDeviceToHost, nullptr),
         inv);
  int word = 0x5eed, back = 0;
  expect("hipMemcpyToSymbol of the last word",
         hipMemcpyToSymbol(HIP_SYMBOL(d_words), &word, 4, 60, hipMemcpyHostToDevice), hipSuccess);
  expect("hipMemcpyFromSymbol of the last word",
         hipMemcpyFromSymbol(&back, HIP_SYMBOL(d_words), 4, 60, hipMemcpyDeviceToHost),
         hipSuccess);
  report("the last word round-trips", back == word);

  // Nothing above reached the device: no error is pending and valid calls work.
  expect("the device has no error", hipDeviceSynchronize(), hipSuccess);
  HIP_CHECK(hipMemset(dev, 0x7f, 256));
  HIP_CHECK(hipMemcpy(host, dev, 256, hipMemcpyDeviceToHost));
  report("valid fills and copies still work", host[0] == 0x7f7f7f7f && host[63] == 0x7f7f7f7f);

  // Read-only registration (hipHostRegisterReadOnly, 0x8, HIP 5.6): kernels may read the
  // memory; a store is a fault, not a write into the host's read-only page.
  expect("hipHostRegister of read-only memory, read-only", hipHostRegister(ro, page, 0x8),
         hipSuccess);
  expect("hipMemset of read-only registered memory", hipMemset(ro, 0, 64), inv);
  expect("hipMemcpy into read-only registered memory",
         hipMemcpy(ro, dev, 64, hipMemcpyDeviceToHost), inv);
  expect("hipMemcpy from read-only registered memory",
         hipMemcpy(dev, ro, 64, hipMemcpyHostToDevice), hipSuccess);
  store_all<<<1, 64>>>((int*)ro, 16, 1);
  hipError_t launched = hipGetLastError();
  hipError_t synced = hipDeviceSynchronize();
  report("a kernel's store into read-only registered memory faults",
         launched == hipErrorIllegalAddress || synced == hipErrorIllegalAddress);
  HIP_CHECK(hipDeviceReset());
  (void)hipGetLastError();
  // The reset dropped the device's memory and, the process having one device, the
  // registration too (clr's host context then holds that device alone).
  expect("hipHostUnregister of the read-only registration after a reset",
         hipHostUnregister(ro), hipErrorHostMemoryNotRegistered);
  expect("hipFree of device memory after a reset", hipFree(dev), inv);
  (void)hipGetLastError();
  return finish();
}
