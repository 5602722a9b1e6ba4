// HIP graphs built explicitly (issue #22): one graph with every node kind HIP 5.2 has (kernel,
// 1D/3D copies, copies to and from a device variable, memset, host function, child graph,
// event record, event wait, empty), launched several times and checked against the host; the
// queries (nodes, roots, edges, dependencies, dependents, types in HIP 5.2's numbering); every
// node's get/set parameters, in the graph and in the executable; clone and find-in-clone;
// dependencies added and removed; instantiation's refusals (a cycle, with the node); executable
// update with HIP's result codes; an executable destroyed while its launch is in flight; and a
// faulting kernel in a graph reported like any launch fault.
#include "check.h"
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

__global__ void slow_copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float acc = 0;
    for (int k = 0; k < 300; k++) acc += (k & 1) ? 0.0f : 0.0f;
    y[i] = x[i] + acc;
  }
}

__global__ void out_of_bounds(int* p) { p[1 << 26] = 1; }

static int g_host_calls = 0;
static void host_count(void* data) { g_host_calls += *(int*)data; }
static void host_other(void*) {}

static float bits_to_float(unsigned b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static unsigned float_bits(float f) {
  unsigned b;
  memcpy(&b, &f, 4);
  return b;
}

static hipKernelNodeParams kernel_params(void* func, dim3 grid, dim3 block, void** args) {
  hipKernelNodeParams p = {};
  p.func = func;
  p.gridDim = grid;
  p.blockDim = block;
  p.kernelParams = args;
  p.sharedMemBytes = 0;
  p.extra = nullptr;
  return p;
}

// A graph whose last node copies into pageable host memory: the host reads it right after
// hipGraphLaunch returns, as programs do (clr's launch returns once such a copy is done), and
// finds the kernel's values. The kernel before it is slow, so a launch that returned early
// would be seen.
static void pageable_copy_is_done_at_return() {
  const int n = 4096;
  std::vector<float> in(n), out(n, -1.0f);
  for (int i = 0; i < n; i++) in[i] = 1.5f * i + 2.0f;
  float *x, *y;
  HIP_CHECK(hipMalloc(&x, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&y, n * sizeof(float)));
  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t h2d, k, d2h;
  HIP_CHECK(hipGraphAddMemcpyNode1D(&h2d, g, nullptr, 0, x, in.data(), n * sizeof(float),
                                    hipMemcpyHostToDevice));
  int count = n;
  void* args[] = {&x, &y, &count};
  hipKernelNodeParams kp = kernel_params((void*)slow_copy, dim3(n / 64), dim3(64), args);
  HIP_CHECK(hipGraphAddKernelNode(&k, g, &h2d, 1, &kp));
  HIP_CHECK(hipGraphAddMemcpyNode1D(&d2h, g, &k, 1, out.data(), y, n * sizeof(float),
                                    hipMemcpyDeviceToHost));
  hipGraphExec_t ex;
  HIP_CHECK(hipGraphInstantiate(&ex, g, nullptr, nullptr, 0));
  HIP_CHECK(hipGraphLaunch(ex, 0));
  report("a copy into pageable memory is done when hipGraphLaunch returns", out == in);
  HIP_CHECK(hipStreamSynchronize(0));
  HIP_CHECK(hipGraphExecDestroy(ex));
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipFree(x));
  HIP_CHECK(hipFree(y));
}

// Copy nodes naming arrays: host -> 3D array -> pitched device memory -> host, in one graph,
// checked against the host's values.
static void array_copy_nodes() {
  const size_t W = 19, H = 7, D = 3;
  std::vector<float> in(W * H * D), out(W * H * D, -1.0f);
  for (size_t i = 0; i < in.size(); i++) in[i] = 0.5f * i - 3.0f;
  hipArray_t array = nullptr;
  hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
  HIP_CHECK(hipMalloc3DArray(&array, &desc, make_hipExtent(W, H, D), 0));
  hipPitchedPtr dev;
  HIP_CHECK(hipMalloc3D(&dev, make_hipExtent(W * sizeof(float), H, D)));
  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  hipMemcpy3DParms to_array = {};
  to_array.srcPtr = make_hipPitchedPtr(in.data(), W * sizeof(float), W, H);
  to_array.dstArray = array;
  to_array.extent = make_hipExtent(W, H, D);
  to_array.kind = hipMemcpyHostToDevice;
  hipMemcpy3DParms from_array = {};
  from_array.srcArray = array;
  from_array.dstPtr = dev;
  from_array.extent = make_hipExtent(W, H, D);
  from_array.kind = hipMemcpyDeviceToDevice;
  hipMemcpy3DParms to_host = {};
  to_host.srcPtr = dev;
  to_host.dstPtr = make_hipPitchedPtr(out.data(), W * sizeof(float), W, H);
  to_host.extent = make_hipExtent(W * sizeof(float), H, D);
  to_host.kind = hipMemcpyDeviceToHost;
  hipGraphNode_t a, b, c;
  hipError_t e1 = hipGraphAddMemcpyNode(&a, g, nullptr, 0, &to_array);
  hipError_t e2 = hipGraphAddMemcpyNode(&b, g, &a, 1, &from_array);
  hipError_t e3 = hipGraphAddMemcpyNode(&c, g, &b, 1, &to_host);
  report("copy nodes naming arrays are made", e1 == hipSuccess && e2 == hipSuccess &&
                                                  e3 == hipSuccess);
  if (e1 == hipSuccess && e2 == hipSuccess && e3 == hipSuccess) {
    hipGraphExec_t ex;
    HIP_CHECK(hipGraphInstantiate(&ex, g, nullptr, nullptr, 0));
    HIP_CHECK(hipGraphLaunch(ex, 0));
    HIP_CHECK(hipStreamSynchronize(0));
    report("host -> array -> device -> host through a graph", out == in);
    HIP_CHECK(hipGraphExecDestroy(ex));
  }
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipFree(dev.ptr));
  HIP_CHECK(hipFreeArray(array));
}

int main() {
  // A W x H x D block of floats.
  const int W = 32, H = 4, D = 2, N = W * H * D;
  const size_t ROW = W * sizeof(float);
  std::vector<float> x(N), out(N);
  for (int i = 0; i < N; i++) x[i] = (float)(i % 37) - 11.5f;
  float offset = 0.25f, offset_back = 0;
  float *dx, *dy, *dz;
  size_t pitch = 0;
  HIP_CHECK(hipMalloc(&dx, N * 4));
  HIP_CHECK(hipMalloc(&dy, N * 4));
  HIP_CHECK(hipMallocPitch((void**)&dz, &pitch, ROW, H * D));
  hipStream_t stream;
  HIP_CHECK(hipStreamCreate(&stream));
  hipEvent_t ev, ev2;
  HIP_CHECK(hipEventCreate(&ev));
  HIP_CHECK(hipEventCreate(&ev2));

  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t e0, memset_y, h2d, to_sym, k1, child, rec, wait, copy3d, host, from_sym, d2h;
  HIP_CHECK(hipGraphAddEmptyNode(&e0, g, nullptr, 0));
  // y = 1.0f everywhere.
  hipMemsetParams ms = {};
  ms.dst = dy;
  ms.elementSize = 4;
  ms.value = float_bits(1.0f);
  ms.width = N;
  ms.height = 1;
  HIP_CHECK(hipGraphAddMemsetNode(&memset_y, g, &e0, 1, &ms));
  HIP_CHECK(hipGraphAddMemcpyNode1D(&h2d, g, &e0, 1, dx, x.data(), N * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipGraphAddMemcpyNodeToSymbol(&to_sym, g, &e0, 1, (const void*)&d_offset, &offset, 4, 0,
                                          hipMemcpyHostToDevice));
  // x *= 2.
  float two = 2.0f;
  int n = N;
  void* scale_args[] = {&dx, &two, &n};
  hipKernelNodeParams kp = kernel_params((void*)scale, dim3(N / 64), dim3(64), scale_args);
  HIP_CHECK(hipGraphAddKernelNode(&k1, g, &h2d, 1, &kp));
  // Child graph: y += 3 x; y += offset.
  hipGraph_t cg;
  HIP_CHECK(hipGraphCreate(&cg, 0));
  float three = 3.0f;
  void* axpy_args[] = {&dx, &dy, &three, &n};
  void* offset_args[] = {&dy, &n};
  hipGraphNode_t ca, cb;
  hipKernelNodeParams kpa = kernel_params((void*)axpy, dim3(N / 64), dim3(64), axpy_args);
  hipKernelNodeParams kpb = kernel_params((void*)add_offset, dim3(N / 64), dim3(64), offset_args);
  HIP_CHECK(hipGraphAddKernelNode(&ca, cg, nullptr, 0, &kpa));
  HIP_CHECK(hipGraphAddKernelNode(&cb, cg, &ca, 1, &kpb));
  hipGraphNode_t child_deps[] = {k1, memset_y, to_sym};
  HIP_CHECK(hipGraphAddChildGraphNode(&child, g, child_deps, 3, cg));
  HIP_CHECK(hipGraphDestroy(cg));  // the node owns a clone
  HIP_CHECK(hipGraphAddEventRecordNode(&rec, g, &child, 1, ev));
  HIP_CHECK(hipGraphAddEventWaitNode(&wait, g, &rec, 1, ev));
  // dz (pitched) <- dy (tight), D slices of H rows.
  hipMemcpy3DParms p3 = {};
  p3.srcPtr = make_hipPitchedPtr(dy, ROW, ROW, H);
  p3.dstPtr = make_hipPitchedPtr(dz, pitch, ROW, H);
  p3.extent = make_hipExtent(ROW, H, D);
  p3.kind = hipMemcpyDeviceToDevice;
  HIP_CHECK(hipGraphAddMemcpyNode(&copy3d, g, &wait, 1, &p3));
  int token = 1;
  hipHostNodeParams hp = {host_count, &token};
  HIP_CHECK(hipGraphAddHostNode(&host, g, &copy3d, 1, &hp));
  HIP_CHECK(hipGraphAddMemcpyNodeFromSymbol(&from_sym, g, &host, 1, &offset_back, (const void*)&d_offset,
                                            4, 0, hipMemcpyDeviceToHost));
  std::vector<float> zpitched(pitch / 4 * H * D);
  HIP_CHECK(hipGraphAddMemcpyNode1D(&d2h, g, &host, 1, zpitched.data(), dz, pitch * H * D,
                                    hipMemcpyDeviceToHost));

  // Queries.
  size_t count = 0;
  HIP_CHECK(hipGraphGetNodes(g, nullptr, &count));
  report("graph holds every node added", count == 12);
  std::vector<hipGraphNode_t> nodes(count + 2, (hipGraphNode_t)1);
  size_t room = count + 2;
  HIP_CHECK(hipGraphGetNodes(g, nodes.data(), &room));
  report("hipGraphGetNodes: dependencies come first, NULL after the last, count set",
         room == count && nodes[0] == e0 && nodes[count] == nullptr && nodes[count + 1] == nullptr);
  size_t roots = 0;
  hipGraphNode_t root = nullptr;
  HIP_CHECK(hipGraphGetRootNodes(g, nullptr, &roots));
  size_t one = 1;
  HIP_CHECK(hipGraphGetRootNodes(g, &root, &one));
  report("one root, the empty node", roots == 1 && root == e0);
  size_t edges = 0;
  HIP_CHECK(hipGraphGetEdges(g, nullptr, nullptr, &edges));
  report("edges counted", edges == 13);
  std::vector<hipGraphNode_t> from(edges), to(edges);
  HIP_CHECK(hipGraphGetEdges(g, from.data(), to.data(), &edges));
  bool has_edge = false;
  for (size_t i = 0; i < edges; i++) has_edge |= from[i] == k1 && to[i] == child;
  report("edges listed", has_edge);
  size_t ndeps = 0;
  HIP_CHECK(hipGraphNodeGetDependencies(child, nullptr, &ndeps));
  hipGraphNode_t deps[3];
  HIP_CHECK(hipGraphNodeGetDependencies(child, deps, &ndeps));
  size_t ndependents = 0;
  hipGraphNode_t dependents[4];
  HIP_CHECK(hipGraphNodeGetDependentNodes(host, nullptr, &ndependents));
  HIP_CHECK(hipGraphNodeGetDependentNodes(host, dependents, &ndependents));
  report("dependencies and dependents",
         ndeps == 3 && deps[0] == k1 && deps[2] == to_sym && ndependents == 2 &&
             dependents[0] == from_sym && dependents[1] == d2h);
  struct {
    hipGraphNode_t node;
    hipGraphNodeType type;
  } types[] = {{e0, hipGraphNodeTypeEmpty},          {memset_y, hipGraphNodeTypeMemset},
               {h2d, hipGraphNodeTypeMemcpy1D},      {to_sym, hipGraphNodeTypeMemcpyToSymbol},
               {k1, hipGraphNodeTypeKernel},         {child, hipGraphNodeTypeGraph},
               {rec, hipGraphNodeTypeEventRecord},   {wait, hipGraphNodeTypeWaitEvent},
               {copy3d, hipGraphNodeTypeMemcpy},     {host, hipGraphNodeTypeHost},
               {from_sym, hipGraphNodeTypeMemcpyFromSymbol}};
  bool types_ok = true;
  for (auto& t : types) {
    hipGraphNodeType got;
    HIP_CHECK(hipGraphNodeGetType(t.node, &got));
    types_ok &= got == t.type;
  }
  report("node types in HIP 5.2's numbering", types_ok);

  // Run it three times.
  hipGraphExec_t exec;
  hipGraphNode_t error_node = (hipGraphNode_t)1;
  char log[256] = "x";
  HIP_CHECK(hipGraphInstantiate(&exec, g, &error_node, log, sizeof log));
  report("instantiate reports no error node", error_node == nullptr && log[0] == 0);
  auto expected_y = [&](float a, float b, float off) {
    std::vector<float> y(N);
    for (int i = 0; i < N; i++) y[i] = 1.0f + b * (a * x[i]) + off;
    return y;
  };
  auto unpitch = [&]() {
    std::vector<float> z(N);
    for (int s = 0; s < H * D; s++)
      for (int c = 0; c < W; c++) z[s * W + c] = zpitched[s * (pitch / 4) + c];
    return z;
  };
  bool runs_ok = true;
  for (int r = 0; r < 3; r++) {
    std::fill(zpitched.begin(), zpitched.end(), -1.0f);
    HIP_CHECK(hipGraphLaunch(exec, stream));
    HIP_CHECK(hipStreamSynchronize(stream));
    runs_ok &= unpitch() == expected_y(2, 3, offset) && offset_back == offset;
  }
  report("every node kind runs, three launches, results equal the host's", runs_ok);
  report("the host node ran once per launch", g_host_calls == 3);
  HIP_CHECK(hipEventSynchronize(ev));
  report("the graph recorded its event", hipEventQuery(ev) == hipSuccess);

  // Parameters read back.
  hipKernelNodeParams back = {};
  HIP_CHECK(hipGraphKernelNodeGetParams(k1, &back));
  report("kernel node parameters read back (argument values copied)",
         back.func == (void*)scale && back.gridDim.x == N / 64 && back.blockDim.x == 64 &&
             back.kernelParams != nullptr && *(float*)back.kernelParams[1] == 2.0f &&
             back.kernelParams[1] != (void*)&two && back.extra == nullptr);
  hipMemsetParams msb = {};
  HIP_CHECK(hipGraphMemsetNodeGetParams(memset_y, &msb));
  report("memset node parameters read back",
         msb.dst == dy && msb.elementSize == 4 && msb.value == float_bits(1.0f) && msb.width == N &&
             msb.height == 1);
  hipMemcpy3DParms p3b = {};
  HIP_CHECK(hipGraphMemcpyNodeGetParams(copy3d, &p3b));
  report("3D copy parameters read back",
         p3b.dstPtr.ptr == dz && p3b.dstPtr.pitch == pitch && p3b.extent.depth == D &&
             p3b.kind == hipMemcpyDeviceToDevice && p3b.srcArray == nullptr);
  hipHostNodeParams hpb = {};
  HIP_CHECK(hipGraphHostNodeGetParams(host, &hpb));
  report("host node parameters read back", hpb.fn == host_count && hpb.userData == &token);
  hipEvent_t evb = nullptr, evw = nullptr;
  HIP_CHECK(hipGraphEventRecordNodeGetEvent(rec, &evb));
  HIP_CHECK(hipGraphEventWaitNodeGetEvent(wait, &evw));
  report("event nodes read back", evb == ev && evw == ev);
  hipGraph_t cgb = nullptr;
  HIP_CHECK(hipGraphChildGraphNodeGetGraph(child, &cgb));
  size_t child_nodes = 0;
  HIP_CHECK(hipGraphGetNodes(cgb, nullptr, &child_nodes));
  report("child graph read back (the node's own clone)", cgb != nullptr && child_nodes == 2);
  report("a child graph cannot be destroyed on its own", hipGraphDestroy(cgb) == hipErrorInvalidValue);
  report("a kernel node is not a memset node",
         hipGraphMemsetNodeGetParams(k1, &msb) == hipErrorInvalidValue);

  // Set parameters in the graph (a new instantiation sees them) and in the executable.
  float four = 4.0f;
  void* scale4[] = {&dx, &four, &n};
  hipKernelNodeParams kp4 = kernel_params((void*)scale, dim3(N / 64), dim3(64), scale4);
  HIP_CHECK(hipGraphKernelNodeSetParams(k1, &kp4));
  ms.value = float_bits(2.0f);
  HIP_CHECK(hipGraphMemsetNodeSetParams(memset_y, &ms));
  float offset2 = -1.5f;
  HIP_CHECK(hipGraphMemcpyNodeSetParamsToSymbol(to_sym, (const void*)&d_offset, &offset2, 4, 0,
                                                hipMemcpyHostToDevice));
  int token3 = 3;
  hipHostNodeParams hp3 = {host_count, &token3};
  HIP_CHECK(hipGraphHostNodeSetParams(host, &hp3));
  HIP_CHECK(hipGraphEventRecordNodeSetEvent(rec, ev2));
  HIP_CHECK(hipGraphEventWaitNodeSetEvent(wait, ev2));
  // The old executable still runs the old parameters.
  g_host_calls = 0;
  HIP_CHECK(hipGraphLaunch(exec, stream));
  HIP_CHECK(hipStreamSynchronize(stream));
  report("an executable keeps the parameters it was instantiated with",
         unpitch() == expected_y(2, 3, offset) && g_host_calls == 1);
  hipGraphExec_t exec2;
  HIP_CHECK(hipGraphInstantiate(&exec2, g, nullptr, nullptr, 0));
  g_host_calls = 0;
  HIP_CHECK(hipGraphLaunch(exec2, stream));
  HIP_CHECK(hipStreamSynchronize(stream));
  {
    std::vector<float> want(N);
    for (int i = 0; i < N; i++) want[i] = 2.0f + 3 * (4 * x[i]) + offset2;
    report("set parameters: kernel, memset, to-symbol, host, events", unpitch() == want &&
                                                                          g_host_calls == 3 &&
                                                                          hipEventQuery(ev2) == hipSuccess);
  }
  // Executable set-params on exec: a = 8, offset back, memset 0.
  float eight = 8.0f;
  void* scale8[] = {&dx, &eight, &n};
  hipKernelNodeParams kp8 = kernel_params((void*)scale, dim3(N / 64), dim3(64), scale8);
  HIP_CHECK(hipGraphExecKernelNodeSetParams(exec, k1, &kp8));
  ms.value = 0;
  HIP_CHECK(hipGraphExecMemsetNodeSetParams(exec, memset_y, &ms));
  HIP_CHECK(hipGraphExecMemcpyNodeSetParamsToSymbol(exec, to_sym, (const void*)&d_offset, &offset, 4, 0,
                                                    hipMemcpyHostToDevice));
  std::vector<float> out1d(N);
  HIP_CHECK(hipGraphExecMemcpyNodeSetParams1D(exec, d2h, zpitched.data(), dz, pitch * H * D,
                                              hipMemcpyDeviceToHost));
  HIP_CHECK(hipGraphExecHostNodeSetParams(exec, host, &hp3));
  HIP_CHECK(hipGraphExecEventRecordNodeSetEvent(exec, rec, ev));
  HIP_CHECK(hipGraphExecEventWaitNodeSetEvent(exec, wait, ev));
  HIP_CHECK(hipGraphExecMemcpyNodeSetParams(exec, copy3d, &p3));
  float back_exec = 0;
  HIP_CHECK(hipGraphExecMemcpyNodeSetParamsFromSymbol(exec, from_sym, &back_exec, (const void*)&d_offset, 4,
                                                      0, hipMemcpyDeviceToHost));
  g_host_calls = 0;
  HIP_CHECK(hipGraphLaunch(exec, stream));
  HIP_CHECK(hipStreamSynchronize(stream));
  {
    std::vector<float> want(N);
    for (int i = 0; i < N; i++) want[i] = 0.0f + 3 * (8 * x[i]) + offset;
    report("executable set parameters of every kind", unpitch() == want && g_host_calls == 3 &&
                                                          back_exec == offset);
  }
  p3.kind = hipMemcpyDeviceToHost;
  report("an executable copy keeps its direction",
         hipGraphExecMemcpyNodeSetParams(exec, copy3d, &p3) == hipErrorInvalidValue);
  p3.kind = hipMemcpyDeviceToDevice;
  // Child graph replaced in the executable (same shape, other values): y += 5 x.
  {
    hipGraph_t c2;
    HIP_CHECK(hipGraphCreate(&c2, 0));
    float five = 5.0f;
    void* a5[] = {&dx, &dy, &five, &n};
    hipKernelNodeParams k5 = kernel_params((void*)axpy, dim3(N / 64), dim3(64), a5);
    hipGraphNode_t x1, x2;
    HIP_CHECK(hipGraphAddKernelNode(&x1, c2, nullptr, 0, &k5));
    HIP_CHECK(hipGraphAddKernelNode(&x2, c2, &x1, 1, &kpb));
    HIP_CHECK(hipGraphExecChildGraphNodeSetParams(exec, child, c2));
    HIP_CHECK(hipGraphLaunch(exec, stream));
    HIP_CHECK(hipStreamSynchronize(stream));
    std::vector<float> want(N);
    for (int i = 0; i < N; i++) want[i] = 0.0f + 5 * (8 * x[i]) + offset;
    report("executable child graph set", unpitch() == want);
    hipGraph_t c3;
    HIP_CHECK(hipGraphCreate(&c3, 0));
    HIP_CHECK(hipGraphAddKernelNode(&x1, c3, nullptr, 0, &k5));
    report("a child graph of another shape is refused",
           hipGraphExecChildGraphNodeSetParams(exec, child, c3) != hipSuccess);
    HIP_CHECK(hipGraphDestroy(c2));
    HIP_CHECK(hipGraphDestroy(c3));
  }

  // A 2D fill (the rows of a pitched allocation, not the padding between them), and the
  // graph-side set-params of every copy form: a new instantiation sees them.
  {
    float cur = 0;
    HIP_CHECK(hipMemcpyFromSymbol(&cur, (const void*)&d_offset, 4, 0, hipMemcpyDeviceToHost));
    const size_t PW = pitch / 4;  // floats per pitched row
    HIP_CHECK(hipMemset(dz, 0, pitch * H * D));
    HIP_CHECK(hipMemset(dy, 0, N * 4));
    hipGraph_t g2;
    HIP_CHECK(hipGraphCreate(&g2, 0));
    hipMemsetParams m2 = {};
    m2.dst = dz;
    m2.elementSize = 4;
    m2.value = float_bits(7.0f);
    m2.width = W;
    m2.height = H * D;
    m2.pitch = pitch;
    hipGraphNode_t fill2d, raw, c3, cs;
    HIP_CHECK(hipGraphAddMemsetNode(&fill2d, g2, nullptr, 0, &m2));
    std::vector<float> hraw(PW * H * D, -1.0f), hraw2(PW * H * D, -1.0f);
    HIP_CHECK(hipGraphAddMemcpyNode1D(&raw, g2, &fill2d, 1, hraw.data(), dz, pitch * H * D,
                                      hipMemcpyDeviceToHost));
    hipMemcpy3DParms q = {};
    q.srcPtr = make_hipPitchedPtr(dz, pitch, ROW, H);
    q.dstPtr = make_hipPitchedPtr(dy, ROW, ROW, H);
    q.extent = make_hipExtent(ROW, H, D);
    q.kind = hipMemcpyDeviceToDevice;
    HIP_CHECK(hipGraphAddMemcpyNode(&c3, g2, &fill2d, 1, &q));
    float sym1 = -1, sym2 = -1;
    HIP_CHECK(hipGraphAddMemcpyNodeFromSymbol(&cs, g2, &c3, 1, &sym1, (const void*)&d_offset, 4, 0,
                                              hipMemcpyDeviceToHost));
    hipGraphExec_t e2;
    HIP_CHECK(hipGraphInstantiate(&e2, g2, nullptr, nullptr, 0));
    HIP_CHECK(hipGraphLaunch(e2, stream));
    HIP_CHECK(hipStreamSynchronize(stream));
    std::vector<float> ty(N);
    HIP_CHECK(hipMemcpy(ty.data(), dy, N * 4, hipMemcpyDeviceToHost));
    bool rows_ok = true;
    for (size_t r = 0; r < (size_t)H * D; r++)
      for (size_t c = 0; c < PW; c++) rows_ok &= hraw[r * PW + c] == (c < (size_t)W ? 7.0f : 0.0f);
    for (float v : ty) rows_ok &= v == 7.0f;
    report("a 2D memset node fills each row and leaves the padding", rows_ok && sym1 == cur);

    // Graph-side changes: fill one slice with 9, copy one slice, read into other buffers.
    m2.value = float_bits(9.0f);
    m2.height = H;
    HIP_CHECK(hipGraphMemsetNodeSetParams(fill2d, &m2));
    HIP_CHECK(hipGraphMemcpyNodeSetParams1D(raw, hraw2.data(), dz, pitch * H * D, hipMemcpyDeviceToHost));
    q.extent = make_hipExtent(ROW, H, 1);
    HIP_CHECK(hipGraphMemcpyNodeSetParams(c3, &q));
    HIP_CHECK(hipGraphMemcpyNodeSetParamsFromSymbol(cs, &sym2, (const void*)&d_offset, 4, 0,
                                                    hipMemcpyDeviceToHost));
    hipMemcpy3DParms qb = {};
    HIP_CHECK(hipGraphMemcpyNodeGetParams(c3, &qb));
    HIP_CHECK(hipMemset(dz, 0, pitch * H * D));
    hipGraphExec_t e3;
    HIP_CHECK(hipGraphInstantiate(&e3, g2, nullptr, nullptr, 0));
    HIP_CHECK(hipGraphLaunch(e3, stream));
    HIP_CHECK(hipStreamSynchronize(stream));
    HIP_CHECK(hipMemcpy(ty.data(), dy, N * 4, hipMemcpyDeviceToHost));
    bool set_ok = qb.extent.depth == 1 && sym2 == cur;
    for (size_t r = 0; r < (size_t)H * D; r++)
      for (size_t c = 0; c < PW; c++)
        set_ok &= hraw2[r * PW + c] == (c < (size_t)W && r < (size_t)H ? 9.0f : 0.0f);
    for (int i = 0; i < N; i++) set_ok &= ty[i] == (i < W * H ? 9.0f : 7.0f);
    report("graph-side set parameters of a fill and of 1D, 3D and from-symbol copies", set_ok);
    HIP_CHECK(hipGraphExecDestroy(e2));
    HIP_CHECK(hipGraphExecDestroy(e3));
    HIP_CHECK(hipGraphDestroy(g2));
  }

  // Clone and find in clone.
  {
    hipGraph_t clone;
    HIP_CHECK(hipGraphClone(&clone, g));
    hipGraphNode_t k1c = nullptr;
    HIP_CHECK(hipGraphNodeFindInClone(&k1c, k1, clone));
    hipKernelNodeParams kc = {};
    HIP_CHECK(hipGraphKernelNodeGetParams(k1c, &kc));
    size_t cn = 0;
    HIP_CHECK(hipGraphGetNodes(clone, nullptr, &cn));
    hipGraphNode_t none;
    report("clone: same nodes, found by original, own parameters",
           k1c != nullptr && k1c != k1 && cn == 12 && *(float*)kc.kernelParams[1] == 4.0f &&
               hipGraphNodeFindInClone(&none, k1, g) == hipErrorInvalidValue);
    HIP_CHECK(hipGraphDestroy(clone));
    hipKernelNodeParams dummy;
    report("a destroyed graph's nodes are invalid",
           hipGraphKernelNodeGetParams(k1c, &dummy) == hipErrorInvalidValue &&
               hipGraphDestroy(clone) == hipErrorIllegalState);
  }

  // Dependencies: errors, removal, a cycle refused at instantiation with its node.
  report("an edge that exists is refused", hipGraphAddDependencies(g, &k1, &child, 1) == hipErrorInvalidValue);
  report("an edge to itself is refused", hipGraphAddDependencies(g, &k1, &k1, 1) == hipErrorInvalidValue);
  report("removing a missing edge is refused",
         hipGraphRemoveDependencies(g, &host, &k1, 1) == hipErrorInvalidValue);
  HIP_CHECK(hipGraphAddDependencies(g, &d2h, &k1, 1));  // closes a cycle
  hipGraphExec_t bad = nullptr;
  error_node = nullptr;
  log[0] = 0;
  hipError_t e = hipGraphInstantiate(&bad, g, &error_node, log, sizeof log);
  report("a cycle is refused at instantiation, naming a node on it",
         e == hipErrorInvalidValue && error_node != nullptr && strstr(log, "cycle") != nullptr);
  HIP_CHECK(hipGraphRemoveDependencies(g, &d2h, &k1, 1));
  HIP_CHECK(hipGraphDestroyNode(from_sym));
  HIP_CHECK(hipGraphGetNodes(g, nullptr, &count));
  HIP_CHECK(hipGraphNodeGetDependentNodes(host, nullptr, &ndependents));
  report("a destroyed node leaves with its edges", count == 11 && ndependents == 1 &&
                                                       hipGraphNodeGetType(from_sym, nullptr) ==
                                                           hipErrorInvalidValue);

  // Executable update: same shape with new parameters; another shape refused with its code.
  {
    hipGraphExec_t ex;
    HIP_CHECK(hipGraphInstantiate(&ex, g, nullptr, nullptr, 0));
    hipGraph_t g2;
    HIP_CHECK(hipGraphClone(&g2, g));
    hipGraphNode_t k1c;
    HIP_CHECK(hipGraphNodeFindInClone(&k1c, k1, g2));
    HIP_CHECK(hipGraphKernelNodeSetParams(k1c, &kp));  // a = 2 again
    hipGraphNode_t err = (hipGraphNode_t)1;
    hipGraphExecUpdateResult res = hipGraphExecUpdateError;
    HIP_CHECK(hipGraphExecUpdate(ex, g2, &err, &res));
    HIP_CHECK(hipGraphLaunch(ex, stream));
    HIP_CHECK(hipStreamSynchronize(stream));
    std::vector<float> want(N);
    for (int i = 0; i < N; i++) want[i] = 2.0f + 3 * (2 * x[i]) + offset2;
    report("executable update takes the new parameters",
           res == hipGraphExecUpdateSuccess && err == nullptr && unpitch() == want);
    hipGraphNode_t extra;
    HIP_CHECK(hipGraphAddEmptyNode(&extra, g2, &k1c, 1));
    e = hipGraphExecUpdate(ex, g2, &err, &res);
    report("update with another topology: hipErrorGraphExecUpdateFailure, TopologyChanged",
           e == hipErrorGraphExecUpdateFailure && res == hipGraphExecUpdateErrorTopologyChanged);
    HIP_CHECK(hipGraphDestroyNode(extra));
    // A host node where the executable has a memset: NodeTypeChanged, naming the node.
    hipGraph_t g3;
    HIP_CHECK(hipGraphCreate(&g3, 0));
    hipGraph_t g4;
    HIP_CHECK(hipGraphCreate(&g4, 0));
    hipGraphNode_t a, b;
    HIP_CHECK(hipGraphAddMemsetNode(&a, g3, nullptr, 0, &ms));
    HIP_CHECK(hipGraphAddHostNode(&b, g4, nullptr, 0, &hp));
    hipGraphExec_t ex3;
    HIP_CHECK(hipGraphInstantiate(&ex3, g3, nullptr, nullptr, 0));
    e = hipGraphExecUpdate(ex3, g4, &err, &res);
    report("update with another node type: NodeTypeChanged and the node",
           e == hipErrorGraphExecUpdateFailure && res == hipGraphExecUpdateErrorNodeTypeChanged &&
               err == b);
    HIP_CHECK(hipGraphExecDestroy(ex3));
    HIP_CHECK(hipGraphDestroy(g3));
    HIP_CHECK(hipGraphDestroy(g4));
    HIP_CHECK(hipGraphExecDestroy(ex));
    HIP_CHECK(hipGraphDestroy(g2));
  }

  // Refusals of bad parameters.
  {
    hipGraphNode_t nn;
    hipMemcpy3DParms pa = p3;
    pa.srcArray = (hipArray*)0x1000;
    pa.srcPtr.ptr = nullptr;
    report("a copy from an array that does not exist refused",
           hipGraphAddMemcpyNode(&nn, g, nullptr, 0, &pa) != hipSuccess);
    float host_value = 2.0f;
    report("a copy to a variable from host memory said to be the device's refused",
           hipGraphAddMemcpyNodeToSymbol(&nn, g, nullptr, 0, (const void*)&d_offset, &host_value,
                                         sizeof(float), 0,
                                         hipMemcpyDeviceToDevice) == hipErrorInvalidValue);
    report("a copy from a variable into host memory said to be the device's refused",
           hipGraphAddMemcpyNodeFromSymbol(&nn, g, nullptr, 0, &host_value, (const void*)&d_offset,
                                           sizeof(float), 0,
                                           hipMemcpyDeviceToDevice) == hipErrorInvalidValue);
    hipMemsetParams bad_ms = ms;
    bad_ms.elementSize = 3;
    report("memset element size 3 refused", hipGraphAddMemsetNode(&nn, g, nullptr, 0, &bad_ms) ==
                                                 hipErrorInvalidValue);
    bad_ms = ms;
    bad_ms.width = N + 1;
    report("memset past the allocation refused",
           hipGraphAddMemsetNode(&nn, g, nullptr, 0, &bad_ms) == hipErrorInvalidValue);
    hipKernelNodeParams bad_k = kp;
    bad_k.blockDim = dim3(2048);
    report("kernel block too large refused",
           hipGraphAddKernelNode(&nn, g, nullptr, 0, &bad_k) == hipErrorInvalidConfiguration);
    bad_k = kp;
    bad_k.func = (void*)host_other;
    report("a function that is no kernel refused",
           hipGraphAddKernelNode(&nn, g, nullptr, 0, &bad_k) == hipErrorInvalidDeviceFunction);
    hipGraphNode_t dup[] = {k1, k1};
    report("a dependency given twice refused", hipGraphAddEmptyNode(&nn, g, dup, 2) == hipErrorInvalidValue);
    report("flags of hipGraphCreate must be 0", hipGraphCreate(&cgb, 1) == hipErrorInvalidValue);
    hipGraphExec_t ex;
    report("unknown instantiate flags refused",
           hipGraphInstantiateWithFlags(&ex, g, 0x40) == hipErrorInvalidValue);
  }

  // An executable destroyed while its launch is in flight: the launch finishes.
  {
    hipGraph_t gs;
    HIP_CHECK(hipGraphCreate(&gs, 0));
    void* sc_args[] = {&dx, &dy, &n};
    hipKernelNodeParams ks = kernel_params((void*)slow_copy, dim3(N / 64), dim3(64), sc_args);
    hipGraphNode_t s1, s2;
    HIP_CHECK(hipGraphAddMemcpyNode1D(&s1, gs, nullptr, 0, dx, x.data(), N * 4, hipMemcpyHostToDevice));
    HIP_CHECK(hipGraphAddKernelNode(&s2, gs, &s1, 1, &ks));
    hipGraphExec_t ex;
    HIP_CHECK(hipGraphInstantiateWithFlags(&ex, gs, hipGraphInstantiateFlagAutoFreeOnLaunch));
    HIP_CHECK(hipGraphDestroy(gs));
    HIP_CHECK(hipMemset(dy, 0, N * 4));
    HIP_CHECK(hipGraphLaunch(ex, stream));
    HIP_CHECK(hipGraphExecDestroy(ex));
    HIP_CHECK(hipStreamSynchronize(stream));
    std::vector<float> got(N);
    HIP_CHECK(hipMemcpy(got.data(), dy, N * 4, hipMemcpyDeviceToHost));
    report("an executable destroyed during its launch: the launch completes", got == x);
    report("a destroyed executable is invalid", hipGraphLaunch(ex, stream) == hipErrorInvalidValue);
  }

  // A faulting kernel in a graph: reported like any launch fault, sticky until reset.
  {
    hipGraph_t gf;
    HIP_CHECK(hipGraphCreate(&gf, 0));
    int* small;
    HIP_CHECK(hipMalloc(&small, 64));
    void* fa[] = {&small};
    hipKernelNodeParams kf = kernel_params((void*)out_of_bounds, dim3(1), dim3(1), fa);
    hipGraphNode_t f;
    HIP_CHECK(hipGraphAddKernelNode(&f, gf, nullptr, 0, &kf));
    hipGraphExec_t ex;
    HIP_CHECK(hipGraphInstantiate(&ex, gf, nullptr, nullptr, 0));
    HIP_CHECK(hipGraphLaunch(ex, stream));
    e = hipStreamSynchronize(stream);
    report("a faulting kernel node: hipErrorIllegalAddress", e == hipErrorIllegalAddress);
    report("the fault is sticky", hipGraphLaunch(ex, stream) == hipErrorIllegalAddress);
    HIP_CHECK(hipDeviceReset());
    HIP_CHECK(hipGraphExecDestroy(ex));
    HIP_CHECK(hipGraphDestroy(gf));
  }

  HIP_CHECK(hipGraphExecDestroy(exec));
  HIP_CHECK(hipGraphExecDestroy(exec2));
  HIP_CHECK(hipGraphDestroy(g));
  array_copy_nodes();
  pageable_copy_is_done_at_return();
  return finish();
}
