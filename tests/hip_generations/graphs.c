/* Graphs through each generation's soname (GENERATION 5, 6 or 7): hipGraphNodeGetType numbers
 * kinds as the caller's HIP does (5.2's numbering for 5; 5.5+'s for 6 and 7, where a 1D copy is
 * a Memcpy node), and the graph calls HIP added after 5.2: instantiation with parameters and
 * flags, upload, nodes disabled in an executable, kernel node attributes, user objects whose
 * destructor runs when the last graph, executable and launch holding them are gone, DOT output,
 * capture into an existing graph, the _spt spellings, and graph memory attributes. The kernel
 * node runs hf_fill of the code object given (out[i] = 2 i + 3). */
#include "hip_abi.h"

static int host_calls = 0;
static void count(void* p) { host_calls += *(int*)p; }
static int destroyed = 0;
static void destroy(void* p) { destroyed += *(int*)p; }

int main(int argc, char** argv) {
  hipStream_t s;
  CHECK(hipStreamCreate(&s) == hipSuccess, "stream");
  hipGraph_t g;
  CHECK(hipGraphCreate(&g, 0) == hipSuccess, "graph");
  int one = 1;
  hipHostNodeParams hp = {count, &one};
  hipGraphNode_t host, empty, copy, kernel = 0;
  CHECK(hipGraphAddHostNode(&host, g, 0, 0, &hp) == hipSuccess, "host node");
  CHECK(hipGraphAddEmptyNode(&empty, g, &host, 1) == hipSuccess, "empty node");
  int* out = 0;
  int n = 64, back[64];
  CHECK(hipMalloc((void**)&out, n * sizeof(int)) == hipSuccess, "out");
  if (argc > 1) {
    hipModule_t mod;
    hipFunction_t fill;
    CHECK(hipModuleLoad(&mod, argv[1]) == hipSuccess, "load %s", argv[1]);
    CHECK(hipModuleGetFunction(&fill, mod, "hf_fill") == hipSuccess, "hf_fill");
    void* args[] = {&out, &n};
    hipKernelNodeParams kp = {{64, 1, 1}, 0, fill, {1, 1, 1}, args, 0};
    CHECK(hipGraphAddKernelNode(&kernel, g, &empty, 1, &kp) == hipSuccess, "kernel node");
  }
  CHECK(hipGraphAddMemcpyNode1D(&copy, g, kernel ? &kernel : &empty, 1, back, out, sizeof back, 2) ==
            hipSuccess,
        "copy node");
  int t_host = -1, t_empty = -1, t_copy = -1, t_kernel = -1;
  hipGraphNodeGetType(host, &t_host);
  hipGraphNodeGetType(empty, &t_empty);
  hipGraphNodeGetType(copy, &t_copy);
  if (kernel) hipGraphNodeGetType(kernel, &t_kernel);
#if GENERATION == 5
  CHECK(t_host == 4 && t_empty == 6 && t_copy == 9 && (!kernel || t_kernel == 1),
        "HIP 5.2's numbering: %d %d %d %d", t_host, t_empty, t_copy, t_kernel);
#else
  CHECK(t_host == 3 && t_empty == 5 && t_copy == 1 && (!kernel || t_kernel == 0),
        "HIP 5.5+'s numbering: %d %d %d %d", t_host, t_empty, t_copy, t_kernel);
#endif

  /* Kernel node attributes: cooperative and priority kept, an access window refused. */
  if (kernel) {
    int value[16] = {0};
    value[0] = 1;
    CHECK(hipGraphKernelNodeSetAttribute(kernel, 2, value) == hipSuccess, "cooperative");
    value[0] = 5;
    CHECK(hipGraphKernelNodeSetAttribute(kernel, 8, value) == hipSuccess, "priority");
    int got[16];
    memset(got, 0x5a, sizeof got);
    CHECK(hipGraphKernelNodeGetAttribute(kernel, 8, got) == hipSuccess && got[0] == 5 &&
              got[1] == 0x5a5a5a5a,
          "priority read back, nothing past it written (%d)", got[0]);
    CHECK(hipGraphKernelNodeGetAttribute(kernel, 2, got) == hipSuccess && got[0] == 1,
          "cooperative read back");
    long long window[4] = {0x1000, 0, 0, 4096};
    CHECK(hipGraphKernelNodeSetAttribute(kernel, 1, window) == 801, "an access window: NotSupported");
    CHECK(hipGraphKernelNodeSetAttribute(kernel, 77, value) == hipErrorInvalidValue, "unknown attribute");
    CHECK(hipGraphKernelNodeCopyAttributes(kernel, host) == hipErrorInvalidValue, "not a kernel node");
  }

  /* User objects: the graph moves the creator's reference; the executable shares it. */
  hipUserObject_t obj;
  int weight = 7;
  CHECK(hipUserObjectCreate(&obj, &weight, destroy, 1, 1) == hipSuccess, "user object");
  CHECK(hipGraphRetainUserObject(g, obj, 1, 1) == hipSuccess, "moved to the graph");

  /* Instantiation with parameters and upload. */
  hipGraphExec_t exec = 0;
  hipGraphInstantiateParams ip = {(hipGraphNode_t)1, 2, -1, s};
  CHECK(hipGraphInstantiateWithParams(&exec, g, &ip) == hipSuccess && ip.result_out == 0 &&
            ip.errNode_out == 0,
        "instantiated and uploaded (result %d)", ip.result_out);
  unsigned long long flags = 0;
  CHECK(hipGraphExecGetFlags(exec, &flags) == hipSuccess && flags == 2, "flags %llu", flags);
  hipGraphInstantiateParams dev = {0, 4, -1, 0};
  hipGraphExec_t e2;
  CHECK(hipGraphInstantiateWithParams(&e2, g, &dev) == 801 && dev.result_out == 1,
        "device launch: NotSupported");
  CHECK(hipGraphUpload(exec, s) == hipSuccess, "upload again");

  memset(back, 0, sizeof back);
  CHECK(hipGraphLaunch(exec, s) == hipSuccess && hipStreamSynchronize(s) == hipSuccess, "launch");
  int same = 1;
  for (int i = 0; i < n; i++) same &= !kernel || back[i] == 2 * i + 3;
  CHECK(same && host_calls == 1, "results (back[5] = %d), host calls %d", back[5], host_calls);

  /* A disabled kernel node runs as an empty one. */
  if (kernel) {
    unsigned on = 9;
    CHECK(hipGraphNodeGetEnabled(exec, kernel, &on) == hipSuccess && on == 1, "enabled");
    CHECK(hipGraphNodeSetEnabled(exec, kernel, 0) == hipSuccess, "disabled");
    CHECK(hipGraphNodeGetEnabled(exec, kernel, &on) == hipSuccess && on == 0, "reads disabled");
    CHECK(hipGraphNodeSetEnabled(exec, host, 0) == hipErrorInvalidValue, "host nodes cannot be");
  }
  CHECK(hipGraphDestroy(g) == hipSuccess, "the graph goes; the executable keeps the object");
  CHECK(destroyed == 0, "not destroyed yet");
  /* NULL in an _spt call is the thread's per-thread stream (hipStreamPerThread, 2). */
  CHECK(hipGraphLaunch_spt(exec, 0) == hipSuccess &&
            hipStreamSynchronize((hipStream_t)2) == hipSuccess,
        "launched on the per-thread stream through the _spt spelling");
  CHECK(host_calls == 2, "host calls %d", host_calls);
  CHECK(hipGraphExecDestroy(exec) == hipSuccess && destroyed == 7,
        "the object is destroyed with the last executable (%d)", destroyed);

  /* Capture into an existing graph, after one of its nodes. */
  hipGraph_t g2;
  hipGraphNode_t first;
  CHECK(hipGraphCreate(&g2, 0) == hipSuccess, "graph 2");
  CHECK(hipGraphAddHostNode(&first, g2, 0, 0, &hp) == hipSuccess, "its node");
  CHECK(hipStreamBeginCaptureToGraph(s, g2, &first, 0, 1, 0) == hipSuccess, "capture to graph");
  int status = -1;
  CHECK(hipStreamIsCapturing_spt(s, &status) == hipSuccess && status == 1,
        "capturing, asked through the _spt spelling (%d)", status);
  status = -1;
  CHECK(hipStreamIsCapturing_spt(0, &status) == hipSuccess && status == 0,
        "NULL through the _spt spelling is the per-thread stream, not the legacy null stream "
        "(which would meet the capturing blocking stream) (%d)",
        status);
  CHECK(hipLaunchHostFunc(s, count, &one) == hipSuccess, "captured host function");
  hipGraph_t got = 0;
  CHECK(hipStreamEndCapture(s, &got) == hipSuccess && got == g2, "the same graph comes back");
  hipGraphExec_t e3;
  host_calls = 0;
  CHECK(hipGraphInstantiate(&e3, g2, 0, 0, 0) == hipSuccess && hipGraphLaunch(e3, s) == hipSuccess &&
            hipStreamSynchronize(s) == hipSuccess && host_calls == 2,
        "both nodes ran (%d)", host_calls);
  char path[] = "/tmp/rocload-graph-XXXXXX.dot";
  int fd = mkstemps(path, 4);
  CHECK(fd >= 0, "temp file");
  CHECK(hipGraphDebugDotPrint(g2, path, 0) == hipSuccess, "DOT");
  FILE* f = fopen(path, "r");
  char text[4096] = {0};
  size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  remove(path);
  CHECK(len > 0 && strstr(text, "digraph") && strstr(text, "->"), "DOT text: %s", text);
  CHECK(hipGraphDebugDotPrint(g2, "/nonexistent/dir/x.dot", 0) == 304, "hipErrorOperatingSystem");
  hipGraphExecDestroy(e3);
  hipGraphDestroy(g2);

#if GENERATION >= 6
  /* Generic nodes (HIP 6.2): a host node added, its parameters set, in a graph and its
   * executable; types of other kinds refused. */
  {
    hipGraph_t g3;
    hipGraphNode_t gn;
    int two = 2, three = 3;
    hipGraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = 3;
    np.host.fn = count;
    np.host.userData = &two;
    CHECK(hipGraphCreate(&g3, 0) == hipSuccess && hipGraphAddNode(&gn, g3, 0, 0, &np) == hipSuccess,
          "hipGraphAddNode");
    int t = -1;
    CHECK(hipGraphNodeGetType(gn, &t) == hipSuccess && t == 3, "a host node (%d)", t);
    hipGraphExec_t e4;
    CHECK(hipGraphInstantiate(&e4, g3, 0, 0, 0) == hipSuccess, "instantiated");
    np.host.userData = &three;
    CHECK(hipGraphExecNodeSetParams(e4, gn, &np) == hipSuccess, "executable's node set");
    host_calls = 0;
    CHECK(hipGraphLaunch(e4, s) == hipSuccess && hipStreamSynchronize(s) == hipSuccess &&
              host_calls == 3,
          "the executable ran the new parameters (%d)", host_calls);
    np.type = 0;
    CHECK(hipGraphNodeSetParams(gn, &np) == hipErrorInvalidValue, "a kernel's type for a host node");
    hipGraphNode_t bad;
    np.type = 99;
    CHECK(hipGraphAddNode(&bad, g3, 0, 0, &np) == hipErrorInvalidValue, "an unknown node type");
    /* A memory-allocation node whose parameters are a host node's (no pool, no size). */
    np.type = 10;
    CHECK(hipGraphAddNode(&bad, g3, 0, 0, &np) == hipErrorInvalidValue,
          "an allocation node without a size");
    hipGraphExecDestroy(e4);
    hipGraphDestroy(g3);
  }
#endif

  /* Graph memory: none. */
  unsigned long long used = 99, zero = 0;
  CHECK(hipDeviceGetGraphMemAttribute(0, 0, &used) == hipSuccess && used == 0, "used %llu", used);
  CHECK(hipDeviceSetGraphMemAttribute(0, 1, &zero) == hipSuccess, "reset the high-water mark");
  CHECK(hipDeviceSetGraphMemAttribute(0, 0, &zero) == hipErrorInvalidValue, "current cannot be set");
  CHECK(hipDeviceGraphMemTrim(0) == hipSuccess && hipDeviceGraphMemTrim(99) == hipErrorInvalidDevice,
        "trim");

  hipFree(out);
  hipStreamDestroy(s);
  printf("%s graphs %d\n", failures ? "FAIL" : "PASS", GENERATION);
  return failures != 0;
}
