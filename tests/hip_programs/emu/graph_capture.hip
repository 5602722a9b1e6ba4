// Stream capture (issue #22): the computation of graph_nodes.hip captured from two streams
// forked and joined by events, with every kind of stream operation (<<<>>>, hipLaunchKernel,
// hipExtLaunchKernel with events, async copies 1D/2D and to/from a device variable, async
// fills, event record and wait, host functions and stream callbacks, a graph launched into
// the capture), run and checked against the host; the capture queries (status, id, graph,
// dependencies, hipStreamUpdateCaptureDependencies); and capture misuse with HIP's codes:
// capture on the null stream, twice, ended on the wrong stream or thread or never joined,
// synchronising a capturing stream, hipMalloc under global and thread-local modes, the null
// stream meeting a capturing blocking stream, a synchronous copy, querying a captured event,
// waits across capture boundaries (isolation, merge), hipDeviceSynchronize.
#include "check.h"
#include <atomic>
#include <thread>
#include <vector>

__device__ float d_offset;

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void axpy(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

__global__ void add_offset(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += d_offset;
}

static int g_host_calls = 0;
static void host_count(void* data) { g_host_calls += *(int*)data; }
static int g_callbacks = 0;
static hipError_t g_callback_status = hipErrorUnknown;
static void on_callback(hipStream_t, hipError_t status, void* data) {
  g_callbacks += *(int*)data;
  g_callback_status = status;
}
static std::atomic<bool> g_release{false};
static void block_until_released(void*) {
  while (!g_release.load()) std::this_thread::yield();
}

static bool check_status(hipStream_t s, hipStreamCaptureStatus want) {
  hipStreamCaptureStatus st = (hipStreamCaptureStatus)-1;
  return hipStreamIsCapturing(s, &st) == hipSuccess && st == want;
}

int main() {
  const int W = 32, H = 8, N = W * H;
  const size_t ROW = W * sizeof(float);
  std::vector<float> x(N), zpitched;
  for (int i = 0; i < N; i++) x[i] = (float)(i % 29) - 7.25f;
  float offset = 0.5f, offset_back = 0;
  float *dx, *dy, *dz;
  size_t pitch = 0;
  HIP_CHECK(hipMalloc(&dx, N * 4));
  HIP_CHECK(hipMalloc(&dy, N * 4));
  HIP_CHECK(hipMallocPitch((void**)&dz, &pitch, ROW, H));
  zpitched.resize(pitch / 4 * H);
  hipStream_t s1, s2, s3;
  HIP_CHECK(hipStreamCreate(&s1));
  HIP_CHECK(hipStreamCreate(&s2));
  HIP_CHECK(hipStreamCreateWithFlags(&s3, hipStreamNonBlocking));
  hipEvent_t fork, join, start, stop;
  HIP_CHECK(hipEventCreate(&fork));
  HIP_CHECK(hipEventCreate(&join));
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  int n = N;
  // A sentinel: nothing captured may run before the graph is launched.
  std::vector<float> sentinel(N, -42.0f);
  HIP_CHECK(hipMemcpy(dy, sentinel.data(), N * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dx, sentinel.data(), N * 4, hipMemcpyHostToDevice));

  // A graph to launch into the capture: y += 0 x (touches y after the join).
  hipGraph_t inner;
  HIP_CHECK(hipGraphCreate(&inner, 0));
  {
    float zero = 0.0f;
    void* args[] = {&dx, &dy, &zero, &n};
    hipKernelNodeParams kp = {};
    kp.func = (void*)axpy;
    kp.gridDim = dim3(N / 64);
    kp.blockDim = dim3(64);
    kp.kernelParams = args;
    hipGraphNode_t k;
    HIP_CHECK(hipGraphAddKernelNode(&k, inner, nullptr, 0, &kp));
  }
  hipGraphExec_t inner_exec;
  HIP_CHECK(hipGraphInstantiate(&inner_exec, inner, nullptr, nullptr, 0));

  report("not capturing before the capture", check_status(s1, hipStreamCaptureStatusNone));
  HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  report("capturing after hipStreamBeginCapture", check_status(s1, hipStreamCaptureStatusActive));
  HIP_CHECK(hipMemsetD32Async((hipDeviceptr_t)dy, 0x3f800000, N, s1));  // y = 1.0f
  HIP_CHECK(hipEventRecord(fork, s1));
  HIP_CHECK(hipStreamWaitEvent(s2, fork, 0));
  report("a stream waiting for a captured event joins the capture",
         check_status(s2, hipStreamCaptureStatusActive));
  unsigned long long id1 = 0, id2 = 1;
  hipStreamCaptureStatus st;
  HIP_CHECK(hipStreamGetCaptureInfo(s1, &st, &id1));
  HIP_CHECK(hipStreamGetCaptureInfo(s2, &st, &id2));
  report("both streams report the same capture id", id1 == id2 && id1 != 0);
  HIP_CHECK(hipMemcpyAsync(dx, x.data(), N * 4, hipMemcpyHostToDevice, s2));
  scale<<<N / 64, 64, 0, s2>>>(dx, 2.0f, N);  // x *= 2, on the fork
  HIP_CHECK(hipMemcpyToSymbolAsync(HIP_SYMBOL(d_offset), &offset, 4, 0, hipMemcpyHostToDevice, s1));
  HIP_CHECK(hipEventRecord(join, s2));
  HIP_CHECK(hipStreamWaitEvent(s1, join, 0));
  float three = 3.0f;
  void* axpy_args[] = {&dx, &dy, &three, &n};
  HIP_CHECK(hipLaunchKernel((const void*)axpy, dim3(N / 64), dim3(64), axpy_args, 0, s1));
  void* offset_args[] = {&dy, &n};
  HIP_CHECK(hipExtLaunchKernel((const void*)add_offset, dim3(N / 64), dim3(64), offset_args, 0, s1,
                               start, stop, 0));
  HIP_CHECK(hipGraphLaunch(inner_exec, s1));
  int token = 1, cb_token = 10;
  HIP_CHECK(hipLaunchHostFunc(s1, host_count, &token));
  HIP_CHECK(hipStreamAddCallback(s1, on_callback, &cb_token, 0));
  HIP_CHECK(hipMemcpy2DAsync(dz, pitch, dy, ROW, ROW, H, hipMemcpyDeviceToDevice, s1));
  HIP_CHECK(hipMemcpyFromSymbolAsync(&offset_back, HIP_SYMBOL(d_offset), 4, 0, hipMemcpyDeviceToHost, s1));
  HIP_CHECK(hipMemcpyAsync(zpitched.data(), dz, pitch * H, hipMemcpyDeviceToHost, s1));
  {
    hipGraph_t cg = nullptr;
    const hipGraphNode_t* deps = nullptr;
    size_t ndeps = 0;
    unsigned long long id = 0;
    HIP_CHECK(hipStreamGetCaptureInfo_v2(s1, &st, &id, &cg, &deps, &ndeps));
    hipGraphNodeType t;
    report("hipStreamGetCaptureInfo_v2: status, id, graph, the last node",
           st == hipStreamCaptureStatusActive && id == id1 && cg != nullptr && ndeps == 1 &&
               hipGraphNodeGetType(deps[0], &t) == hipSuccess && t == hipGraphNodeTypeMemcpy1D);
  }
  hipGraph_t g = nullptr;
  HIP_CHECK(hipStreamEndCapture(s1, &g));
  report("both streams stop capturing at the end",
         check_status(s1, hipStreamCaptureStatusNone) && check_status(s2, hipStreamCaptureStatusNone));
  {
    std::vector<float> got(N);
    HIP_CHECK(hipMemcpy(got.data(), dy, N * 4, hipMemcpyDeviceToHost));
    report("nothing captured ran during the capture", got == sentinel && g_host_calls == 0);
  }
  size_t count = 0;
  HIP_CHECK(hipGraphGetNodes(g, nullptr, &count));
  std::vector<hipGraphNode_t> nodes(count);
  HIP_CHECK(hipGraphGetNodes(g, nodes.data(), &count));
  int kinds[16] = {};
  for (auto nd : nodes) {
    hipGraphNodeType t;
    HIP_CHECK(hipGraphNodeGetType(nd, &t));
    if (t >= 0 && t < 16) kinds[t]++;
  }
  report("captured nodes of every kind",
         count == 14 && kinds[hipGraphNodeTypeKernel] == 3 && kinds[hipGraphNodeTypeMemset] == 1 &&
             kinds[hipGraphNodeTypeMemcpy1D] == 2 && kinds[hipGraphNodeTypeMemcpy] == 1 &&
             kinds[hipGraphNodeTypeMemcpyToSymbol] == 1 &&
             kinds[hipGraphNodeTypeMemcpyFromSymbol] == 1 && kinds[hipGraphNodeTypeHost] == 2 &&
             kinds[hipGraphNodeTypeEventRecord] == 2 && kinds[hipGraphNodeTypeGraph] == 1 &&
             kinds[hipGraphNodeTypeEmpty] == 0);
  hipGraphExec_t exec;
  HIP_CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  bool ok = true;
  for (int r = 0; r < 3; r++) {
    std::fill(zpitched.begin(), zpitched.end(), -1.0f);
    HIP_CHECK(hipGraphLaunch(exec, s1));
    HIP_CHECK(hipStreamSynchronize(s1));
    for (int row = 0; row < H; row++)
      for (int c = 0; c < W; c++) {
        int i = row * W + c;
        ok &= zpitched[row * (pitch / 4) + c] == 1.0f + 3.0f * (2.0f * x[i]) + offset;
      }
    ok &= offset_back == offset;
  }
  report("the captured graph computes what the stream operations would", ok);
  report("captured host function and callback ran once per launch",
         g_host_calls == 3 && g_callbacks == 30 && g_callback_status == hipSuccess);
  float ms = -1;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  report("hipExtLaunchKernel's events were recorded by the graph", ms >= 0);
  HIP_CHECK(hipGraphExecDestroy(exec));
  HIP_CHECK(hipGraphDestroy(g));

  // hipStreamUpdateCaptureDependencies: the next node depends on a node added by hand.
  {
    HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    scale<<<N / 64, 64, 0, s1>>>(dx, 1.0f, N);
    hipGraph_t cg;
    const hipGraphNode_t* deps;
    size_t ndeps;
    HIP_CHECK(hipStreamGetCaptureInfo_v2(s1, &st, nullptr, &cg, &deps, &ndeps));
    hipGraphNode_t k = deps[0], manual;
    HIP_CHECK(hipGraphAddEmptyNode(&manual, cg, &k, 1));
    HIP_CHECK(hipStreamUpdateCaptureDependencies(s1, &manual, 1, hipStreamSetCaptureDependencies));
    scale<<<N / 64, 64, 0, s1>>>(dx, 1.0f, N);
    HIP_CHECK(hipStreamGetCaptureInfo_v2(s1, &st, nullptr, nullptr, &deps, &ndeps));
    hipGraphNode_t last = deps[0];
    hipGraph_t done;
    HIP_CHECK(hipStreamEndCapture(s1, &done));
    hipGraphNode_t d[2];
    size_t nd = 2;
    HIP_CHECK(hipGraphNodeGetDependencies(last, d, &nd));
    report("the next captured node depends on the set given", done == cg && nd == 1 && d[0] == manual);
    report("hipStreamUpdateCaptureDependencies outside a capture: hipErrorIllegalState",
           hipStreamUpdateCaptureDependencies(s1, &manual, 1, 0) == hipErrorIllegalState);
    HIP_CHECK(hipGraphDestroy(done));
  }

  // The legacy launch forms (hipConfigureCall, hipSetupArgument, hipLaunchByPtr) are captured
  // like any launch: nothing runs until the graph does.
  {
    std::vector<float> before(N), after(N);
    HIP_CHECK(hipMemcpy(before.data(), dx, N * 4, hipMemcpyDeviceToHost));
    HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    float* px = dx;
    float half = 0.5f;
    int nn = N;
    HIP_CHECK(hipConfigureCall(dim3(N / 64), dim3(64), 0, s1));
    HIP_CHECK(hipSetupArgument(&px, 8, 0));
    HIP_CHECK(hipSetupArgument(&half, 4, 8));
    HIP_CHECK(hipSetupArgument(&nn, 4, 12));
    HIP_CHECK(hipLaunchByPtr((const void*)scale));
    hipGraph_t lg;
    HIP_CHECK(hipStreamEndCapture(s1, &lg));
    HIP_CHECK(hipMemcpy(after.data(), dx, N * 4, hipMemcpyDeviceToHost));
    size_t cnt = 0;
    HIP_CHECK(hipGraphGetNodes(lg, nullptr, &cnt));
    report("hipLaunchByPtr during a capture: a kernel node, nothing runs", cnt == 1 && after == before);
    hipGraphExec_t le;
    HIP_CHECK(hipGraphInstantiate(&le, lg, nullptr, nullptr, 0));
    HIP_CHECK(hipGraphLaunch(le, s1));
    HIP_CHECK(hipStreamSynchronize(s1));
    HIP_CHECK(hipMemcpy(after.data(), dx, N * 4, hipMemcpyDeviceToHost));
    bool halved = true;
    for (int i = 0; i < N; i++) halved &= after[i] == 0.5f * before[i];
    report("... and the graph runs it", halved);
    HIP_CHECK(hipGraphExecDestroy(le));
    HIP_CHECK(hipGraphDestroy(lg));
  }

  // Misuse.
  hipGraph_t bad = (hipGraph_t)1;
  report("capture on the null stream: hipErrorStreamCaptureUnsupported",
         hipStreamBeginCapture(nullptr, hipStreamCaptureModeGlobal) == hipErrorStreamCaptureUnsupported);
  report("ending a capture that never began: hipErrorIllegalState",
         hipStreamEndCapture(s1, &bad) == hipErrorIllegalState);
  report("an unknown capture mode: hipErrorInvalidValue",
         hipStreamBeginCapture(s1, (hipStreamCaptureMode)7) == hipErrorInvalidValue);
  HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  report("beginning twice: hipErrorIllegalState",
         hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal) == hipErrorIllegalState);
  HIP_CHECK(hipEventRecord(fork, s1));
  report("querying a captured event: hipErrorCapturedEvent", hipEventQuery(fork) == hipErrorCapturedEvent);
  report("... which invalidates the capture", check_status(s1, hipStreamCaptureStatusInvalidated));
  report("work on an invalidated capture: hipErrorStreamCaptureInvalidated",
         hipMemsetAsync(dy, 0, 4, s1) == hipErrorStreamCaptureInvalidated);
  bad = (hipGraph_t)1;
  report("ending it: hipErrorStreamCaptureInvalidated and no graph",
         hipStreamEndCapture(s1, &bad) == hipErrorStreamCaptureInvalidated && bad == nullptr);

  HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  report("synchronising a capturing stream: hipErrorStreamCaptureUnsupported",
         hipStreamSynchronize(s1) == hipErrorStreamCaptureUnsupported);
  report("hipStreamEndCapture after it: hipErrorStreamCaptureInvalidated",
         hipStreamEndCapture(s1, &bad) == hipErrorStreamCaptureInvalidated);

  HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  void* p = nullptr;
  report("hipMalloc during a global capture: hipErrorStreamCaptureUnsupported",
         hipMalloc(&p, 64) == hipErrorStreamCaptureUnsupported);
  report("hipStreamEndCapture after it: hipErrorStreamCaptureInvalidated",
         hipStreamEndCapture(s1, &bad) == hipErrorStreamCaptureInvalidated);

  {
    void* managed = nullptr;
    HIP_CHECK(hipMallocManaged(&managed, 4096, hipMemAttachGlobal));
    HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    report("hipMemPrefetchAsync during a global capture: hipErrorStreamCaptureUnsupported",
           hipMemPrefetchAsync(managed, 4096, 0, s1) == hipErrorStreamCaptureUnsupported);
    report("hipStreamEndCapture after it: hipErrorStreamCaptureInvalidated",
           hipStreamEndCapture(s1, &bad) == hipErrorStreamCaptureInvalidated);
    HIP_CHECK(hipFree(managed));
  }

  HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
  HIP_CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  report("hipThreadExchangeStreamCaptureMode returns the old mode", mode == hipStreamCaptureModeGlobal);
  report("hipMalloc in relaxed thread mode is allowed", hipMalloc(&p, 64) == hipSuccess && hipFree(p) == hipSuccess);
  HIP_CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  report("the capture went on", check_status(s1, hipStreamCaptureStatusActive));
  HIP_CHECK(hipStreamEndCapture(s1, &bad));
  HIP_CHECK(hipGraphDestroy(bad));

  // The null stream and a capturing blocking stream.
  HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeRelaxed));
  hipStreamCaptureStatus nst;
  report("hipStreamIsCapturing(null) during a blocking capture: hipErrorStreamCaptureImplicit",
         hipStreamIsCapturing(nullptr, &nst) == hipErrorStreamCaptureImplicit);
  report("a kernel on the null stream: hipErrorStreamCaptureImplicit",
         hipLaunchKernel((const void*)scale, dim3(1), dim3(1), axpy_args, 0, nullptr) ==
             hipErrorStreamCaptureImplicit);
  report("hipStreamEndCapture after it: hipErrorStreamCaptureInvalidated",
         hipStreamEndCapture(s1, &bad) == hipErrorStreamCaptureInvalidated);
  HIP_CHECK(hipStreamBeginCapture(s3, hipStreamCaptureModeRelaxed));
  report("a non-blocking capture leaves the null stream alone",
         hipMemsetAsync(dy, 0, 4, nullptr) == hipSuccess && check_status(nullptr, hipStreamCaptureStatusNone));
  report("a synchronous copy during a capture: hipErrorStreamCaptureImplicit",
         hipMemcpy(x.data(), dx, 4, hipMemcpyDeviceToHost) == hipErrorStreamCaptureImplicit);
  report("hipStreamEndCapture after it: hipErrorStreamCaptureInvalidated",
         hipStreamEndCapture(s3, &bad) == hipErrorStreamCaptureInvalidated);
  HIP_CHECK(hipStreamBeginCapture(s3, hipStreamCaptureModeRelaxed));
  report("hipDeviceSynchronize during a capture: hipErrorStreamCaptureUnsupported",
         hipDeviceSynchronize() == hipErrorStreamCaptureUnsupported);
  report("hipStreamEndCapture after it: hipErrorStreamCaptureInvalidated",
         hipStreamEndCapture(s3, &bad) == hipErrorStreamCaptureInvalidated);

  // Forks: ending on the forked stream, and a fork never joined.
  HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  HIP_CHECK(hipEventRecord(fork, s1));
  HIP_CHECK(hipStreamWaitEvent(s2, fork, 0));
  scale<<<1, 64, 0, s2>>>(dx, 1.0f, 64);
  report("ending on a forked stream: hipErrorStreamCaptureUnmatched",
         hipStreamEndCapture(s2, &bad) == hipErrorStreamCaptureUnmatched);
  report("a fork never joined: hipErrorStreamCaptureUnjoined",
         hipStreamEndCapture(s1, &bad) == hipErrorStreamCaptureUnjoined && bad == nullptr &&
             check_status(s2, hipStreamCaptureStatusNone));

  // Waits across capture boundaries.
  HIP_CHECK(hipLaunchHostFunc(s3, block_until_released, nullptr));
  HIP_CHECK(hipEventRecord(join, s3));  // pending until released
  HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  report("waiting for an event recorded outside the capture: hipErrorStreamCaptureIsolation",
         hipStreamWaitEvent(s1, join, 0) == hipErrorStreamCaptureIsolation);
  HIP_CHECK(hipStreamEndCapture(s1, &bad) == hipErrorStreamCaptureInvalidated ? hipSuccess : hipErrorUnknown);
  g_release = true;
  HIP_CHECK(hipStreamSynchronize(s3));
  HIP_CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeRelaxed));
  HIP_CHECK(hipStreamBeginCapture(s2, hipStreamCaptureModeRelaxed));
  HIP_CHECK(hipEventRecord(fork, s1));
  report("a capture waiting for another capture's event: hipErrorStreamCaptureMerge",
         hipStreamWaitEvent(s2, fork, 0) == hipErrorStreamCaptureMerge);
  HIP_CHECK(hipStreamEndCapture(s1, &bad));
  HIP_CHECK(hipGraphDestroy(bad));
  report("the waiting capture was invalidated",
         hipStreamEndCapture(s2, &bad) == hipErrorStreamCaptureInvalidated);

  // Threads: global and thread-local modes, and ending on the wrong thread.
  {
    std::atomic<int> stage{0};
    hipError_t other = hipSuccess;
    std::thread t([&] {
      other = hipStreamBeginCapture(s2, hipStreamCaptureModeThreadLocal);
      stage = 1;
      while (stage != 2) std::this_thread::yield();
      void* q = nullptr;
      other = hipMalloc(&q, 64);  // this thread captures: refused
      hipGraph_t gg;
      hipStreamEndCapture(s2, &gg);
      stage = 3;
    });
    while (stage != 1) std::this_thread::yield();
    void* q = nullptr;
    report("another thread's thread-local capture allows hipMalloc here",
           hipMalloc(&q, 64) == hipSuccess && hipFree(q) == hipSuccess);
    stage = 2;
    while (stage != 3) std::this_thread::yield();
    t.join();
    report("the capturing thread's own hipMalloc: hipErrorStreamCaptureUnsupported",
           other == hipErrorStreamCaptureUnsupported);
  }
  {
    std::atomic<int> stage{0};
    hipError_t ended = hipSuccess;
    std::thread t([&] {
      HIP_CHECK(hipStreamBeginCapture(s2, hipStreamCaptureModeGlobal));
      stage = 1;
      while (stage != 2) std::this_thread::yield();
      hipGraph_t g2;
      ended = hipStreamEndCapture(s2, &g2);
    });
    while (stage != 1) std::this_thread::yield();
    void* q = nullptr;
    report("another thread's global capture refuses hipMalloc here",
           hipMalloc(&q, 64) == hipErrorStreamCaptureUnsupported);
    hipGraph_t gg;
    report("a global capture ended on another thread: hipErrorStreamCaptureWrongThread",
           hipStreamEndCapture(s2, &gg) == hipErrorStreamCaptureWrongThread);
    stage = 2;
    t.join();
    report("ended on its own thread (invalidated by the refused hipMalloc)",
           ended == hipErrorStreamCaptureInvalidated);
  }
  {
    std::thread t([&] { HIP_CHECK(hipStreamBeginCapture(s2, hipStreamCaptureModeRelaxed)); });
    t.join();
    hipGraph_t gg = nullptr;
    report("a relaxed capture may end on any thread", hipStreamEndCapture(s2, &gg) == hipSuccess && gg);
    HIP_CHECK(hipGraphDestroy(gg));
  }

  HIP_CHECK(hipGraphExecDestroy(inner_exec));
  HIP_CHECK(hipGraphDestroy(inner));
  HIP_CHECK(hipDeviceSynchronize());
  return finish();
}
