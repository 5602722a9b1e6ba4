// HIP 6 and 7 entry points librocload.so serves to libamdhip64.so.6/.7 programs, called the way
// a program built with those headers calls them (their structures declared here in the 6/7
// layouts, the generation announced as the thin libamdhip64.so.7 announces it): graph memory
// nodes (explicit and captured from hipMallocAsync/hipFreeAsync), hipDrvGraph copy and fill
// nodes over HIP 6's HIP_MEMCPY3D, external-semaphore nodes, hipStreamBatchMemOp and its node,
// array-to-device copies, 2D element fills, peer and batched copies, the _v2 hints,
// hipMemGetHandleForAddressRange's refusal, the module form of the multi-device cooperative
// launch and HIP 5.3's tracer callback. Every result is compared with the same computation on the host.
#include "check.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <vector>

extern "C" void rocload_hip_generation(int generation, const char* library);

// ---- HIP 6/7 structures (x86-64 layouts of ROCm 6.4/7.1's headers)
struct Memcpy3D6 {  // HIP_MEMCPY3D from 6.0: size_t fields, 184 bytes
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void* srcHost;
  void* srcDevice;
  hipArray_t srcArray;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void* dstHost;
  void* dstDevice;
  hipArray_t dstArray;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
};
static_assert(sizeof(Memcpy3D6) == 184, "HIP_MEMCPY3D of HIP 6");
struct MemsetNodeParams {  // HIP_MEMSET_NODE_PARAMS
  void* dst;
  size_t pitch;
  unsigned value, elementSize;
  size_t width, height;
};
struct MemAllocNodeParams {  // hipMemAllocNodeParams
  hipMemPoolProps poolProps;
  const hipMemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void* dptr;
};
static_assert(sizeof(MemAllocNodeParams) == 120, "hipMemAllocNodeParams");
struct SemParams6 {  // hipExternalSemaphoreSignal/WaitParams from 6.0: flags at 72, 144 bytes
  unsigned char params[72];
  unsigned flags;
  unsigned reserved[17];
};
static_assert(sizeof(SemParams6) == 144, "semaphore parameters of HIP 6");
struct SemNodeParams {
  hipExternalSemaphore_t* extSemArray;
  const SemParams6* paramsArray;
  unsigned numExtSems;
};
struct MemOpParams {  // hipStreamBatchMemOpParams, 48 bytes
  int operation;
  void* address;
  uint64_t value;
  unsigned flags;
  void* alias;
  uint64_t pad;
};
static_assert(sizeof(MemOpParams) == 48, "hipStreamBatchMemOpParams");
struct BatchNodeParams {
  void* ctx;
  unsigned count;
  MemOpParams* paramArray;
  unsigned flags;
};
struct Memcpy3DPeerParms {
  hipArray_t srcArray;
  hipPos srcPos;
  hipPitchedPtr srcPtr;
  int srcDevice;
  hipArray_t dstArray;
  hipPos dstPos;
  hipPitchedPtr dstPtr;
  int dstDevice;
  hipExtent extent;
};
static_assert(sizeof(Memcpy3DPeerParms) == 168, "hipMemcpy3DPeerParms");
struct Operand {  // hipMemcpy3DOperand
  int type;
  union {
    struct {
      void* ptr;
      size_t rowLength, layerHeight;
      hipMemLocation locHint;
    } ptr;
    struct {
      hipArray_t array;
      size_t x, y, z;
    } array;
  } op;
};
struct BatchOp3D {  // hipMemcpy3DBatchOp
  Operand src, dst;
  hipExtent extent;
  int srcAccessOrder;
  unsigned flags;
};
static_assert(sizeof(BatchOp3D) == 112, "hipMemcpy3DBatchOp");
struct FunctionLaunchParams {
  hipFunction_t function;
  unsigned gx, gy, gz, bx, by, bz, shared;
  hipStream_t stream;
  void** kernelParams;
};

extern "C" {
hipError_t hipGraphAddMemAllocNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t,
                                   MemAllocNodeParams*);
hipError_t hipGraphMemAllocNodeGetParams(hipGraphNode_t, MemAllocNodeParams*);
hipError_t hipGraphAddMemFreeNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t,
                                  void*);
hipError_t hipGraphMemFreeNodeGetParams(hipGraphNode_t, void*);
hipError_t hipDrvGraphAddMemFreeNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t,
                                     void*);
hipError_t hipDeviceGetGraphMemAttribute(int, int, void*);
hipError_t hipDrvGraphAddMemcpyNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t,
                                    const Memcpy3D6*, void*);
hipError_t hipDrvGraphMemcpyNodeGetParams(hipGraphNode_t, Memcpy3D6*);
hipError_t hipDrvGraphMemcpyNodeSetParams(hipGraphNode_t, const Memcpy3D6*);
hipError_t hipDrvGraphExecMemcpyNodeSetParams(hipGraphExec_t, hipGraphNode_t, const Memcpy3D6*,
                                              void*);
hipError_t hipDrvGraphAddMemsetNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t,
                                    const MemsetNodeParams*, void*);
hipError_t hipDrvGraphExecMemsetNodeSetParams(hipGraphExec_t, hipGraphNode_t,
                                              const MemsetNodeParams*, void*);
hipError_t hipGraphAddExternalSemaphoresSignalNode(hipGraphNode_t*, hipGraph_t,
                                                   const hipGraphNode_t*, size_t,
                                                   const SemNodeParams*);
hipError_t hipGraphAddExternalSemaphoresWaitNode(hipGraphNode_t*, hipGraph_t,
                                                 const hipGraphNode_t*, size_t,
                                                 const SemNodeParams*);
hipError_t hipGraphExternalSemaphoresSignalNodeGetParams(hipGraphNode_t, SemNodeParams*);
hipError_t hipStreamBatchMemOp(hipStream_t, unsigned, MemOpParams*, unsigned);
hipError_t hipGraphAddBatchMemOpNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*, size_t,
                                     const BatchNodeParams*);
hipError_t hipGraphBatchMemOpNodeGetParams(hipGraphNode_t, BatchNodeParams*);
hipError_t hipMemcpyAtoD(void*, hipArray_t, size_t, size_t);
hipError_t hipMemcpyDtoA(hipArray_t, size_t, const void*, size_t);
hipError_t hipMemcpyAtoA(hipArray_t, size_t, hipArray_t, size_t, size_t);
hipError_t hipMemsetD2D8(void*, size_t, unsigned char, size_t, size_t);
hipError_t hipMemsetD2D16Async(void*, size_t, unsigned short, size_t, size_t, hipStream_t);
hipError_t hipMemsetD2D32(void*, size_t, unsigned, size_t, size_t);
hipError_t hipMemcpy3DPeer(Memcpy3DPeerParms*);
hipError_t hipMemcpyBatchAsync(void**, void**, size_t*, size_t, void*, size_t*, size_t, size_t*,
                               hipStream_t);
hipError_t hipMemcpy3DBatchAsync(size_t, BatchOp3D*, size_t*, unsigned long long, hipStream_t);
hipError_t hipMemPrefetchAsync_v2(const void*, size_t, hipMemLocation, unsigned, hipStream_t);
hipError_t hipMemAdvise_v2(const void*, size_t, int, hipMemLocation);
hipError_t hipMemGetHandleForAddressRange(void*, void*, size_t, int, unsigned long long);
hipError_t hipGetFuncBySymbol(hipFunction_t*, const void*);
hipError_t hipModuleLaunchCooperativeKernelMultiDevice(FunctionLaunchParams*, unsigned, unsigned);
}

static const int N = 1024;

__global__ void fill_index(int* out, int n, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * 3 + add;
}

__global__ void double_it(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2;
}

static bool check_index(const std::vector<int>& v, int add, int mul, char* d, size_t len) {
  for (int i = 0; i < (int)v.size(); i++)
    if (v[i] != (i * 3 + add) * mul) {
      snprintf(d, len, "[%d] = %d, expected %d", i, v[i], (i * 3 + add) * mul);
      return false;
    }
  return true;
}

static hipMemPoolProps device_pool_props() {
  hipMemPoolProps p;
  memset(&p, 0, sizeof p);
  p.allocType = hipMemAllocationTypePinned;
  p.location.type = hipMemLocationTypeDevice;
  p.location.id = 0;
  return p;
}

static void graph_memory() {
  char d[256] = "";
  std::vector<int> host(N, -1);
  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  MemAllocNodeParams ap;
  memset(&ap, 0, sizeof ap);
  ap.poolProps = device_pool_props();
  ap.bytesize = N * sizeof(int);
  hipGraphNode_t alloc, fill, copy, free_node;
  HIP_CHECK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
  int* p = (int*)ap.dptr;
  bool ok = p != nullptr;
  hipKernelNodeParams k = {};
  int n = N, add = 7;
  void* args[] = {&p, &n, &add};
  k.func = (void*)fill_index;
  k.gridDim = dim3(N / 256);
  k.blockDim = dim3(256);
  k.kernelParams = args;
  HIP_CHECK(hipGraphAddKernelNode(&fill, g, &alloc, 1, &k));
  HIP_CHECK(hipGraphAddMemcpyNode1D(&copy, g, &fill, 1, host.data(), p, N * sizeof(int),
                                    hipMemcpyDeviceToHost));
  HIP_CHECK(hipGraphAddMemFreeNode(&free_node, g, &copy, 1, p));
  hipGraphNodeType t1, t2;
  HIP_CHECK(hipGraphNodeGetType(alloc, &t1));
  HIP_CHECK(hipGraphNodeGetType(free_node, &t2));
  ok = ok && (int)t1 == 10 && (int)t2 == 11;
  MemAllocNodeParams back;
  HIP_CHECK(hipGraphMemAllocNodeGetParams(alloc, &back));
  void* freed = nullptr;
  HIP_CHECK(hipGraphMemFreeNodeGetParams(free_node, &freed));
  ok = ok && back.dptr == p && back.bytesize == N * sizeof(int) && freed == p;
  uint64_t reserved = 0;
  HIP_CHECK(hipDeviceGetGraphMemAttribute(0, 2, &reserved));
  ok = ok && reserved >= N * sizeof(int);
  hipGraphExec_t e;
  HIP_CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
  for (int round = 0; round < 2 && ok; round++) {
    std::fill(host.begin(), host.end(), -1);
    HIP_CHECK(hipGraphLaunch(e, 0));
    HIP_CHECK(hipStreamSynchronize(0));
    ok = check_index(host, 7, 1, d, sizeof d);
  }
  report("graph memory: allocation, kernel, copy and free nodes, launched twice", ok, d);
  // A free node for memory no allocation node made is refused.
  int* plain;
  HIP_CHECK(hipMalloc(&plain, 64));
  hipGraphNode_t bad;
  report("a free node names graph memory only",
         hipGraphAddMemFreeNode(&bad, g, nullptr, 0, plain) == hipErrorInvalidValue);
  HIP_CHECK(hipFree(plain));
  HIP_CHECK(hipGraphExecDestroy(e));
  HIP_CHECK(hipGraphDestroy(g));

  // A graph that allocates without freeing: the memory outlives the launch, until hipFree;
  // launching again before that is refused.
  HIP_CHECK(hipGraphCreate(&g, 0));
  memset(&ap, 0, sizeof ap);
  ap.poolProps = device_pool_props();
  ap.bytesize = N * sizeof(int);
  HIP_CHECK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
  p = (int*)ap.dptr;
  void* args2[] = {&p, &n, &add};
  k.kernelParams = args2;
  add = 11;
  HIP_CHECK(hipGraphAddKernelNode(&fill, g, &alloc, 1, &k));
  HIP_CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
  HIP_CHECK(hipGraphLaunch(e, 0));
  HIP_CHECK(hipMemcpy(host.data(), p, N * sizeof(int), hipMemcpyDeviceToHost));
  ok = check_index(host, 11, 1, d, sizeof d);
  hipError_t again = hipGraphLaunch(e, 0);
  ok = ok && again == hipErrorInvalidValue;
  HIP_CHECK(hipFree(p));
  HIP_CHECK(hipGraphLaunch(e, 0));
  HIP_CHECK(hipFreeAsync(p, 0));
  ok = ok && hipFreeAsync(p, 0) == hipErrorInvalidValue;
  HIP_CHECK(hipStreamSynchronize(0));
  report("graph memory outlives its launch until hipFree/hipFreeAsync; a relaunch waits for it",
         ok, d);
  HIP_CHECK(hipGraphExecDestroy(e));
  HIP_CHECK(hipGraphDestroy(g));

  // Captured: hipMallocAsync and hipFreeAsync become allocation and free nodes.
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  int* q = nullptr;
  HIP_CHECK(hipMallocAsync((void**)&q, N * sizeof(int), s));
  hipLaunchKernelGGL(fill_index, dim3(N / 256), dim3(256), 0, s, q, N, 5);
  hipLaunchKernelGGL(double_it, dim3(N / 256), dim3(256), 0, s, q, N);
  HIP_CHECK(hipMemcpyAsync(host.data(), q, N * sizeof(int), hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipFreeAsync(q, s));
  HIP_CHECK(hipStreamEndCapture(s, &g));
  size_t count = 0;
  HIP_CHECK(hipGraphGetNodes(g, nullptr, &count));
  std::vector<hipGraphNode_t> nodes(count);
  HIP_CHECK(hipGraphGetNodes(g, nodes.data(), &count));
  int allocs = 0, frees = 0;
  for (auto nd : nodes) {
    hipGraphNodeType t;
    HIP_CHECK(hipGraphNodeGetType(nd, &t));
    allocs += (int)t == 10;
    frees += (int)t == 11;
  }
  HIP_CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
  ok = allocs == 1 && frees == 1;
  for (int round = 0; round < 2 && ok; round++) {
    std::fill(host.begin(), host.end(), -1);
    HIP_CHECK(hipGraphLaunch(e, s));
    HIP_CHECK(hipStreamSynchronize(s));
    ok = check_index(host, 5, 2, d, sizeof d);
  }
  if (allocs != 1 || frees != 1) snprintf(d, sizeof d, "%d alloc, %d free nodes", allocs, frees);
  report("hipMallocAsync/hipFreeAsync captured into allocation and free nodes", ok, d);
  HIP_CHECK(hipGraphExecDestroy(e));
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipStreamDestroy(s));
}

static void drv_graph_nodes() {
  char d[256] = "";
  const size_t W = 48, H = 16, pitch = 64;  // bytes, rows
  unsigned char* dev;
  HIP_CHECK(hipMalloc((void**)&dev, pitch * H));
  std::vector<unsigned char> src(pitch * H), out(W * H, 0);
  for (size_t i = 0; i < src.size(); i++) src[i] = (unsigned char)(i * 7 + 1);
  HIP_CHECK(hipMemcpy(dev, src.data(), src.size(), hipMemcpyHostToDevice));
  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  // A fill of the first 4 rows with 16-bit elements, then a copy of rows 2.. with an x offset.
  MemsetNodeParams ms = {dev, pitch, 0xbeef, 2, 8, 4};
  hipGraphNode_t fill, copy;
  HIP_CHECK(hipDrvGraphAddMemsetNode(&fill, g, nullptr, 0, &ms, nullptr));
  Memcpy3D6 c;
  memset(&c, 0, sizeof c);
  c.srcXInBytes = 8;
  c.srcY = 2;
  c.srcMemoryType = 2;  // hipMemoryTypeDevice in HIP 6
  c.srcDevice = dev;
  c.srcPitch = pitch;
  c.dstMemoryType = 1;  // hipMemoryTypeHost
  c.dstHost = out.data();
  c.dstPitch = W;
  c.WidthInBytes = W - 8;
  c.Height = H - 2;
  c.Depth = 1;
  HIP_CHECK(hipDrvGraphAddMemcpyNode(&copy, g, &fill, 1, &c, nullptr));
  Memcpy3D6 back;
  HIP_CHECK(hipDrvGraphMemcpyNodeGetParams(copy, &back));
  bool ok = memcmp(&back, &c, sizeof c) == 0;
  hipGraphExec_t e;
  HIP_CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
  HIP_CHECK(hipGraphLaunch(e, 0));
  HIP_CHECK(hipStreamSynchronize(0));
  std::vector<unsigned char> expect_dev = src;
  for (size_t y = 0; y < 4; y++)
    for (size_t x = 0; x < 8; x++) {
      expect_dev[y * pitch + 2 * x] = 0xef;
      expect_dev[y * pitch + 2 * x + 1] = 0xbe;
    }
  for (size_t y = 0; y < H - 2 && ok; y++)
    for (size_t x = 0; x < W - 8; x++)
      if (out[y * W + x] != expect_dev[(y + 2) * pitch + 8 + x]) {
        snprintf(d, sizeof d, "row %zu byte %zu: %d, expected %d", y, x, out[y * W + x],
                 expect_dev[(y + 2) * pitch + 8 + x]);
        ok = false;
        break;
      }
  report("hipDrvGraphAddMemsetNode and hipDrvGraphAddMemcpyNode (HIP 6 HIP_MEMCPY3D)", ok, d);
  // The executable takes new parameters: a 32-bit fill of the first row, a copy from row 0.
  MemsetNodeParams ms2 = {dev, pitch, 0x01020304u, 4, 4, 1};
  HIP_CHECK(hipDrvGraphExecMemsetNodeSetParams(e, fill, &ms2, nullptr));
  c.srcY = 0;
  c.srcXInBytes = 0;
  HIP_CHECK(hipDrvGraphExecMemcpyNodeSetParams(e, copy, &c, nullptr));
  HIP_CHECK(hipGraphLaunch(e, 0));
  HIP_CHECK(hipStreamSynchronize(0));
  for (int x = 0; x < 4; x++) memcpy(&expect_dev[4 * x], "\x04\x03\x02\x01", 4);
  ok = true;
  for (size_t y = 0; y < H - 2 && ok; y++)
    for (size_t x = 0; x < W - 8; x++)
      if (out[y * W + x] != expect_dev[y * pitch + x]) {
        snprintf(d, sizeof d, "row %zu byte %zu: %d, expected %d", y, x, out[y * W + x],
                 expect_dev[y * pitch + x]);
        ok = false;
        break;
      }
  report("hipDrvGraphExec{Memset,Memcpy}NodeSetParams change later launches", ok, d);
  MemsetNodeParams bad = {dev, pitch, 0, 3, 4, 1};
  hipGraphNode_t b;
  report("a fill of 3-byte elements is refused",
         hipDrvGraphAddMemsetNode(&b, g, nullptr, 0, &bad, nullptr) == hipErrorInvalidValue);
  HIP_CHECK(hipGraphExecDestroy(e));
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipFree(dev));
}

static uint64_t eventfd_count(int fd) {
  uint64_t v = 0;
  if (read(fd, &v, 8) != 8) return 0;
  return v;
}

static void semaphore_nodes() {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  hipExternalSemaphoreHandleDesc desc;
  memset(&desc, 0, sizeof desc);
  desc.type = hipExternalSemaphoreHandleTypeOpaqueFd;
  desc.handle.fd = fd;
  hipExternalSemaphore_t sem;
  HIP_CHECK(hipImportExternalSemaphore(&sem, &desc));
  SemParams6 params[2];
  memset(params, 0, sizeof params);
  hipExternalSemaphore_t sems[2] = {sem, sem};
  SemNodeParams sp = {sems, params, 2};
  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t wait_node, sig;
  int* flag;
  HIP_CHECK(hipMalloc(&flag, N * sizeof(int)));
  // Wait for the semaphore, fill, then signal it twice.
  SemNodeParams wp = {sems, params, 1};
  HIP_CHECK(hipGraphAddExternalSemaphoresWaitNode(&wait_node, g, nullptr, 0, &wp));
  hipKernelNodeParams k = {};
  int n = N, add = 2;
  void* args[] = {&flag, &n, &add};
  k.func = (void*)fill_index;
  k.gridDim = dim3(N / 256);
  k.blockDim = dim3(256);
  k.kernelParams = args;
  hipGraphNode_t fill;
  HIP_CHECK(hipGraphAddKernelNode(&fill, g, &wait_node, 1, &k));
  HIP_CHECK(hipGraphAddExternalSemaphoresSignalNode(&sig, g, &fill, 1, &sp));
  SemNodeParams got;
  HIP_CHECK(hipGraphExternalSemaphoresSignalNodeGetParams(sig, &got));
  bool ok = got.numExtSems == 2 && got.extSemArray[1] == sem;
  hipGraphNodeType t;
  HIP_CHECK(hipGraphNodeGetType(sig, &t));
  ok = ok && (int)t == 8;
  hipGraphExec_t e;
  HIP_CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
  uint64_t one = 1;
  ok = ok && write(fd, &one, 8) == 8;  // the host signals: the graph's wait goes on
  HIP_CHECK(hipGraphLaunch(e, 0));
  HIP_CHECK(hipStreamSynchronize(0));
  uint64_t count = eventfd_count(fd);
  std::vector<int> host(N);
  HIP_CHECK(hipMemcpy(host.data(), flag, N * sizeof(int), hipMemcpyDeviceToHost));
  char d[256] = "";
  ok = ok && check_index(host, 2, 1, d, sizeof d);
  if (count != 2) snprintf(d, sizeof d, "semaphore count %llu after two signals", (unsigned long long)count);
  report("external-semaphore wait and signal nodes", ok && count == 2, d);
  params[0].flags = 1;
  hipGraphNode_t bad;
  report("a semaphore node with flags is refused",
         hipGraphAddExternalSemaphoresSignalNode(&bad, g, nullptr, 0, &sp) == hipErrorInvalidValue);
  HIP_CHECK(hipGraphExecDestroy(e));
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipDestroyExternalSemaphore(sem));
  HIP_CHECK(hipFree(flag));
  close(fd);
}

static void batch_mem_ops() {
  uint64_t* words;
  HIP_CHECK(hipMalloc(&words, 4 * sizeof(uint64_t)));
  HIP_CHECK(hipMemset(words, 0, 4 * sizeof(uint64_t)));
  MemOpParams ops[3];
  memset(ops, 0, sizeof ops);
  ops[0].operation = 2;  // write 32
  ops[0].address = &words[0];
  ops[0].value = 0xdeadbeefcafeULL;  // only the low 32 bits
  ops[1].operation = 5;  // write 64
  ops[1].address = &words[1];
  ops[1].value = 0x0123456789abcdefULL;
  ops[2].operation = 4;  // wait 64 until words[1] >= value (already true)
  ops[2].address = &words[1];
  ops[2].value = 0x0123456789abcdefULL;
  ops[2].flags = 0;  // hipStreamWaitValueGte
  HIP_CHECK(hipStreamBatchMemOp(0, 3, ops, 0));
  uint64_t host[4];
  HIP_CHECK(hipMemcpy(host, words, sizeof host, hipMemcpyDeviceToHost));
  bool ok = host[0] == 0xbeefcafeULL && host[1] == 0x0123456789abcdefULL;
  report("hipStreamBatchMemOp writes and waits in order", ok);
  // A graph node with the same operations on other words.
  ops[0].address = &words[2];
  ops[1].address = &words[3];
  ops[2].address = &words[3];
  BatchNodeParams bp = {nullptr, 3, ops, 0};
  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t node;
  HIP_CHECK(hipGraphAddBatchMemOpNode(&node, g, nullptr, 0, &bp));
  BatchNodeParams got;
  HIP_CHECK(hipGraphBatchMemOpNodeGetParams(node, &got));
  ok = got.count == 3 && got.paramArray[1].value == 0x0123456789abcdefULL;
  hipGraphNodeType t;
  HIP_CHECK(hipGraphNodeGetType(node, &t));
  ok = ok && (int)t == 14;
  hipGraphExec_t e;
  HIP_CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
  HIP_CHECK(hipGraphLaunch(e, 0));
  HIP_CHECK(hipStreamSynchronize(0));
  HIP_CHECK(hipMemcpy(host, words, sizeof host, hipMemcpyDeviceToHost));
  ok = ok && host[2] == 0xbeefcafeULL && host[3] == 0x0123456789abcdefULL;
  report("a batch memory operation node", ok);
  ops[0].address = (char*)&words[0] + 2;  // misaligned
  report("a misaligned batch operation is refused, nothing queued",
         hipStreamBatchMemOp(0, 3, ops, 0) == hipErrorInvalidValue);
  ops[0].address = &words[0];
  ops[0].operation = 9;
  report("an unknown operation is refused", hipStreamBatchMemOp(0, 1, ops, 0) == hipErrorInvalidValue);
  HIP_CHECK(hipGraphExecDestroy(e));
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipFree(words));
}

__global__ void coop_fill(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * 3 + 9;
}

static void memory_calls() {
  char d[256] = "";
  // Arrays: device -> array -> array -> device.
  HIP_ARRAY_DESCRIPTOR ad = {256, 1, HIP_AD_FORMAT_UNSIGNED_INT32, 1};
  hipArray_t a1, a2;
  HIP_CHECK(hipArrayCreate(&a1, &ad));
  HIP_CHECK(hipArrayCreate(&a2, &ad));
  int *in, *outd;
  HIP_CHECK(hipMalloc(&in, 1024));
  HIP_CHECK(hipMalloc(&outd, 1024));
  std::vector<int> h(256), r(256, 0);
  for (int i = 0; i < 256; i++) h[i] = i * i - 77;
  HIP_CHECK(hipMemcpy(in, h.data(), 1024, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpyDtoA(a1, 0, in, 1024));
  HIP_CHECK(hipMemcpyAtoA(a2, 64, a1, 0, 512));  // first half of a1 to a2's bytes 64..576
  HIP_CHECK(hipMemset(outd, 0, 1024));
  HIP_CHECK(hipMemcpyAtoD(outd, a2, 64, 512));
  HIP_CHECK(hipMemcpy(r.data(), outd, 1024, hipMemcpyDeviceToHost));
  bool ok = memcmp(r.data(), h.data(), 512) == 0;
  for (int i = 128; i < 256 && ok; i++) ok = r[i] == 0;
  ok = ok && hipMemcpyAtoD(outd, a2, 1000, 512) == hipErrorInvalidValue;
  report("hipMemcpyDtoA, hipMemcpyAtoA, hipMemcpyAtoD (and a run past the array refused)", ok);
  HIP_CHECK(hipArrayDestroy(a1));
  HIP_CHECK(hipArrayDestroy(a2));

  // 2D element fills.
  const size_t pitch = 256, rows = 8;
  unsigned char* p2;
  HIP_CHECK(hipMalloc((void**)&p2, pitch * rows));
  HIP_CHECK(hipMemset(p2, 0x11, pitch * rows));
  HIP_CHECK(hipMemsetD2D8(p2, pitch, 0xa5, 10, 2));
  HIP_CHECK(hipMemsetD2D16Async(p2 + 2 * pitch, pitch, 0x1234, 20, 3, 0));
  HIP_CHECK(hipMemsetD2D32(p2 + 5 * pitch + 8, pitch, 0xcafef00d, 16, 3));
  HIP_CHECK(hipStreamSynchronize(0));
  std::vector<unsigned char> got(pitch * rows), want(pitch * rows, 0x11);
  HIP_CHECK(hipMemcpy(got.data(), p2, got.size(), hipMemcpyDeviceToHost));
  for (size_t y = 0; y < 2; y++) memset(&want[y * pitch], 0xa5, 10);
  for (size_t y = 2; y < 5; y++)
    for (int x = 0; x < 20; x++) {
      uint16_t v = 0x1234;
      memcpy(&want[y * pitch + 2 * x], &v, 2);
    }
  for (size_t y = 5; y < 8; y++)
    for (int x = 0; x < 16; x++) {
      uint32_t v = 0xcafef00d;
      memcpy(&want[y * pitch + 8 + 4 * x], &v, 4);
    }
  ok = got == want;
  ok = ok && hipMemsetD2D32(p2, 8, 0, 16, 2) == hipErrorInvalidValue;  // pitch below the row
  report("hipMemsetD2D8/16/32 fill rows of elements", ok);

  // A peer copy of a 3D box (one device: both sides on device 0).
  Memcpy3DPeerParms pp;
  memset(&pp, 0, sizeof pp);
  pp.srcPtr = make_hipPitchedPtr(p2, pitch, pitch, rows);
  pp.srcPos = make_hipPos(8, 5, 0);
  pp.dstPtr = make_hipPitchedPtr(r.data(), 64, 64, 4);
  pp.extent = make_hipExtent(64, 3, 1);
  std::fill(r.begin(), r.end(), 0);
  HIP_CHECK(hipMemcpy3DPeer(&pp));
  ok = true;
  for (int y = 0; y < 3 && ok; y++) ok = memcmp((char*)r.data() + 64 * y, &want[(5 + y) * pitch + 8], 64) == 0;
  pp.dstDevice = 7;
  ok = ok && hipMemcpy3DPeer(&pp) == hipErrorInvalidDevice;
  report("hipMemcpy3DPeer (and a device that does not exist refused)", ok);

  // Batches: three linear copies, then a 3D batch of a pitched box into a packed buffer.
  int *b1, *b2;
  HIP_CHECK(hipMalloc(&b1, 1024));
  HIP_CHECK(hipMalloc(&b2, 1024));
  std::vector<int> x(256), y(256, 0);
  for (int i = 0; i < 256; i++) x[i] = 1000 - i;
  void* dsts[3] = {b1, b2, y.data()};
  void* srcs[3] = {x.data(), b1, b2};
  size_t sizes[3] = {1024, 1024, 1024};
  size_t fail = 99;
  HIP_CHECK(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, nullptr, nullptr, 0, &fail, 0));
  HIP_CHECK(hipStreamSynchronize(0));
  ok = x == y;
  sizes[1] = 4096;  // past b1
  ok = ok && hipMemcpyBatchAsync(dsts, srcs, sizes, 3, nullptr, nullptr, 0, &fail, 0) != hipSuccess &&
       fail == 1;
  report("hipMemcpyBatchAsync (a copy past its allocation refused, failIdx naming it)", ok);
  BatchOp3D op;
  memset(&op, 0, sizeof op);
  op.src.type = 1;
  op.src.op.ptr.ptr = p2 + 5 * pitch + 8;
  op.src.op.ptr.rowLength = pitch;
  op.dst.type = 1;
  op.dst.op.ptr.ptr = b1;
  op.dst.op.ptr.rowLength = 64;
  op.extent = make_hipExtent(64, 3, 1);
  op.srcAccessOrder = 1;
  HIP_CHECK(hipMemcpy3DBatchAsync(1, &op, &fail, 0, 0));
  std::vector<unsigned char> box(192);
  HIP_CHECK(hipMemcpy(box.data(), b1, 192, hipMemcpyDeviceToHost));
  ok = true;
  for (int yy = 0; yy < 3 && ok; yy++) ok = memcmp(&box[64 * yy], &want[(5 + yy) * pitch + 8], 64) == 0;
  op.srcAccessOrder = 0;
  ok = ok && hipMemcpy3DBatchAsync(1, &op, &fail, 0, 0) == hipErrorInvalidValue && fail == 0;
  report("hipMemcpy3DBatchAsync (an invalid access order refused)", ok);

  // Hints with hipMemLocation.
  int* m;
  HIP_CHECK(hipMallocManaged(&m, 4096));
  hipMemLocation dev0 = {hipMemLocationTypeDevice, 0};
  hipMemLocation host = {(hipMemLocationType)2, 0};
  HIP_CHECK(hipMemAdvise_v2(m, 4096, hipMemAdviseSetPreferredLocation, dev0));
  HIP_CHECK(hipMemPrefetchAsync_v2(m, 4096, host, 0, 0));
  HIP_CHECK(hipStreamSynchronize(0));
  int preferred = -5, last = -5;
  HIP_CHECK(hipMemRangeGetAttribute(&preferred, 4, hipMemRangeAttributePreferredLocation, m, 4096));
  HIP_CHECK(hipMemRangeGetAttribute(&last, 4, hipMemRangeAttributeLastPrefetchLocation, m, 4096));
  hipMemLocation invalid = {(hipMemLocationType)0, 0};
  ok = preferred == 0 && last == hipCpuDeviceId &&
       hipMemAdvise_v2(m, 4096, hipMemAdviseSetReadMostly, invalid) == hipErrorInvalidValue &&
       hipMemPrefetchAsync_v2(m, 4096, dev0, 1, 0) == hipErrorInvalidValue;
  snprintf(d, sizeof d, "preferred %d, last prefetch %d", preferred, last);
  report("hipMemAdvise_v2 and hipMemPrefetchAsync_v2", ok, d);

  // A dma-buf of device memory: arguments checked, then not supported (no GPU driver).
  int fd = -1;
  ok = hipMemGetHandleForAddressRange(&fd, b1, 1024, 1, 0) == hipErrorNotSupported &&
       hipMemGetHandleForAddressRange(&fd, b1, 1024, 2, 0) == hipErrorInvalidValue &&
       hipMemGetHandleForAddressRange(nullptr, b1, 1024, 1, 0) == hipErrorInvalidValue &&
       hipMemGetHandleForAddressRange(&fd, b1, 0, 1, 0) == hipErrorInvalidValue;
  report("hipMemGetHandleForAddressRange checks its arguments and refuses a dma-buf", ok);

  // The module form of the multi-device cooperative launch, on one device.
  hipFunction_t f;
  HIP_CHECK(hipGetFuncBySymbol(&f, (const void*)coop_fill));
  int n = 256;
  void* args[] = {&b2, &n};
  FunctionLaunchParams lp = {f, 1, 1, 1, 256, 1, 1, 0, 0, args};
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  lp.stream = s;
  HIP_CHECK(hipModuleLaunchCooperativeKernelMultiDevice(&lp, 1, 0));
  HIP_CHECK(hipStreamSynchronize(s));
  std::vector<int> res(256);
  HIP_CHECK(hipMemcpy(res.data(), b2, 1024, hipMemcpyDeviceToHost));
  ok = true;
  for (int i = 0; i < 256 && ok; i++) ok = res[i] == i * 3 + 9;
  ok = ok && hipModuleLaunchCooperativeKernelMultiDevice(&lp, 9, 0) == hipErrorInvalidValue;
  report("hipModuleLaunchCooperativeKernelMultiDevice", ok);
  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(m));
  HIP_CHECK(hipFree(b1));
  HIP_CHECK(hipFree(b2));
  HIP_CHECK(hipFree(p2));
  HIP_CHECK(hipFree(in));
  HIP_CHECK(hipFree(outd));
}

// HIP 5.3's tracer: asked whether it wants kernel dispatches, then told of each.
struct TracerRecord {
  uint32_t domain, kind, op;
  uint64_t correlation_id, begin_ns, end_ns;
  int device_id;
  uint64_t queue_id;
  const char* kernel_name;
};
extern "C" void hipRegisterTracerCallback(int (*)(uint32_t, uint32_t, void*));
static std::atomic<int> g_asked{0}, g_records{0}, g_named{0};
static int tracer(uint32_t domain, uint32_t op, void* data) {
  if (domain != 2 || op != 0) return 1;  // only HIP_OPS dispatches
  if (!data) {
    g_asked++;
    return 0;
  }
  const TracerRecord* r = (const TracerRecord*)data;
  g_records++;
  if (r->kind == 0x11F0 && r->end_ns >= r->begin_ns && r->kernel_name &&
      strstr(r->kernel_name, "double_it"))
    g_named++;
  return 0;
}

static void tracer_callback() {
  int* p;
  HIP_CHECK(hipMalloc(&p, N * sizeof(int)));
  hipRegisterTracerCallback(tracer);
  for (int i = 0; i < 3; i++) hipLaunchKernelGGL(double_it, dim3(N / 256), dim3(256), 0, 0, p, N);
  HIP_CHECK(hipDeviceSynchronize());
  // Records are asynchronous (through ROCr's backend the runtime learns of a completion just
  // after the signal a synchronisation waits for): wait for them, a bounded time.
  for (int i = 0; i < 500 && g_records.load() < 3; i++) usleep(10 * 1000);
  hipRegisterTracerCallback(nullptr);
  hipLaunchKernelGGL(double_it, dim3(N / 256), dim3(256), 0, 0, p, N);
  HIP_CHECK(hipDeviceSynchronize());
  usleep(100 * 1000);
  char d[128];
  snprintf(d, sizeof d, "asked %d, records %d, named %d (3 each expected)", g_asked.load(),
           g_records.load(), g_named.load());
  report("hipRegisterTracerCallback reports kernel dispatches, and stops when NULL is set",
         g_asked == 3 && g_records == 3 && g_named == 3, d);
  HIP_CHECK(hipFree(p));
}

int main() {
  // What the thin libamdhip64.so.7 does when a HIP 7 program loads it.
  rocload_hip_generation(7, "libamdhip64.so.7");
  graph_memory();
  drv_graph_nodes();
  semaphore_nodes();
  batch_mem_ops();
  memory_calls();
  tracer_callback();
  return finish();
}
