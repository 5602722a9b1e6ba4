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

/* Graphs (HIP 5.2 to 6.2). */
typedef void* hipGraph_t;
typedef void* hipGraphNode_t;
typedef void* hipGraphExec_t;
typedef void* hipUserObject_t;
typedef void (*hipHostFn_t)(void*);
typedef struct { hipHostFn_t fn; void* userData; } hipHostNodeParams;
typedef struct {
  dim3 blockDim;
  void** extra;
  void* func;
  dim3 gridDim;
  void** kernelParams;
  unsigned sharedMemBytes;
} hipKernelNodeParams;
typedef struct {
  hipGraphNode_t errNode_out;
  unsigned long long flags;
  int result_out;
  hipStream_t uploadStream;
} hipGraphInstantiateParams;
typedef struct {
  int type;
  int reserved0[3];
  union {
    long long reserved1[29];
    hipKernelNodeParams kernel;
    hipHostNodeParams host;
  };
  long long reserved2;
} hipGraphNodeParams;
hipError_t hipGraphAddNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t, hipGraphNodeParams*);
hipError_t hipGraphNodeSetParams(hipGraphNode_t, hipGraphNodeParams*);
hipError_t hipGraphExecNodeSetParams(hipGraphExec_t, hipGraphNode_t, hipGraphNodeParams*);
hipError_t hipGraphCreate(hipGraph_t*, unsigned);
hipError_t hipGraphDestroy(hipGraph_t);
hipError_t hipGraphAddHostNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t, const hipHostNodeParams*);
hipError_t hipGraphAddKernelNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t, const hipKernelNodeParams*);
hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t, void*, const void*, size_t, int);
hipError_t hipGraphAddEmptyNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t);
hipError_t hipGraphNodeGetType(hipGraphNode_t, int*);
hipError_t hipGraphInstantiate(hipGraphExec_t*, hipGraph_t, hipGraphNode_t*, char*, size_t);
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t*, hipGraph_t, hipGraphInstantiateParams*);
hipError_t hipGraphExecGetFlags(hipGraphExec_t, unsigned long long*);
hipError_t hipGraphLaunch(hipGraphExec_t, hipStream_t);
hipError_t hipGraphLaunch_spt(hipGraphExec_t, hipStream_t);
hipError_t hipGraphUpload(hipGraphExec_t, hipStream_t);
hipError_t hipGraphExecDestroy(hipGraphExec_t);
hipError_t hipGraphNodeSetEnabled(hipGraphExec_t, hipGraphNode_t, unsigned);
hipError_t hipGraphNodeGetEnabled(hipGraphExec_t, hipGraphNode_t, unsigned*);
hipError_t hipGraphKernelNodeSetAttribute(hipGraphNode_t, int, const void*);
hipError_t hipGraphKernelNodeGetAttribute(hipGraphNode_t, int, void*);
hipError_t hipGraphKernelNodeCopyAttributes(hipGraphNode_t, hipGraphNode_t);
hipError_t hipUserObjectCreate(hipUserObject_t*, void*, hipHostFn_t, unsigned, unsigned);
hipError_t hipUserObjectRelease(hipUserObject_t, unsigned);
hipError_t hipGraphRetainUserObject(hipGraph_t, hipUserObject_t, unsigned, unsigned);
hipError_t hipGraphDebugDotPrint(hipGraph_t, const char*, unsigned);
hipError_t hipStreamBeginCaptureToGraph(hipStream_t, hipGraph_t, const hipGraphNode_t*, const void*, size_t, int);
hipError_t hipStreamEndCapture(hipStream_t, hipGraph_t*);
hipError_t hipStreamIsCapturing_spt(hipStream_t, int*);
hipError_t hipLaunchHostFunc(hipStream_t, hipHostFn_t, void*);
hipError_t hipStreamSynchronize(hipStream_t);
hipError_t hipDeviceGetGraphMemAttribute(int, int, void*);
hipError_t hipDeviceSetGraphMemAttribute(int, int, void*);
hipError_t hipDeviceGraphMemTrim(int);

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
