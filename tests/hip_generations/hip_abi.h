/* The few HIP declarations the generation tests need, written from HIP 6 and 7's headers
 * (Debian ships only HIP 5.2.3's): prototypes, the 1,472-byte hipDeviceProp_tR0600 as far as
 * the fields checked, the 792-byte 5.x struct's offsets, hipPointerAttribute_t. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int hipError_t;
typedef void* hipStream_t;
typedef void* hipEvent_t;
typedef void* hipModule_t;
typedef void* hipFunction_t;
enum { hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorNotReady = 600, hipErrorInvalidDevice = 101 };

typedef struct {
  int type; /* hipMemoryType: 5.x memoryType, 6.0+ type */
  int device;
  void* devicePointer;
  void* hostPointer;
  int isManaged;
  unsigned allocationFlags;
} hipPointerAttribute_t;

typedef struct { unsigned x, y, z; } dim3;
typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  hipStream_t hStream;
  void* attrs;
  unsigned numAttrs;
} HIP_LAUNCH_CONFIG;

hipError_t hipRuntimeGetVersion(int*);
hipError_t hipDriverGetVersion(int*);
hipError_t hipGetDeviceCount(int*);
hipError_t hipSetDevice(int);
hipError_t hipGetDeviceProperties(void* prop, int device);
hipError_t hipGetDevicePropertiesR0600(void* prop, int device);
hipError_t hipGetDevicePropertiesR0000(void* prop, int device);
hipError_t hipChooseDeviceR0600(int* device, const void* prop);
hipError_t hipMalloc(void**, size_t);
hipError_t hipFree(void*);
hipError_t hipHostMalloc(void**, size_t, unsigned);
hipError_t hipHostFree(void*);
hipError_t hipMallocManaged(void**, size_t, unsigned);
hipError_t hipMemcpy(void*, const void*, size_t, int);
hipError_t hipPointerGetAttributes(hipPointerAttribute_t*, const void*);
hipError_t hipGetLastError(void);
hipError_t hipPeekAtLastError(void);
hipError_t hipExtGetLastError(void);
hipError_t hipGetProcAddress(const char*, void**, int, uint64_t, int*);
hipError_t hipStreamCreate(hipStream_t*);
hipError_t hipStreamDestroy(hipStream_t);
hipError_t hipStreamGetId(hipStream_t, unsigned long long*);
hipError_t hipEventCreate(hipEvent_t*);
hipError_t hipEventRecordWithFlags(hipEvent_t, hipStream_t, unsigned);
hipError_t hipEventSynchronize(hipEvent_t);
hipError_t hipDeviceSynchronize(void);
hipError_t hipModuleLoad(hipModule_t*, const char*);
hipError_t hipModuleGetFunction(hipFunction_t*, hipModule_t, const char*);
hipError_t hipModuleGetFunctionCount(unsigned*, hipModule_t);
hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG*, hipFunction_t, void**, void**);

static int failures = 0;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (cond) {                                            \
      printf("PASS %s\n", #cond);                          \
    } else {                                               \
      printf("FAIL %s: ", #cond);                          \
      printf(__VA_ARGS__);                                 \
      printf("\n");                                        \
      failures++;                                          \
    }                                                      \
  } while (0)
#define FIELD(p, type, offset) (*(const type*)((const char*)(p) + (offset)))
