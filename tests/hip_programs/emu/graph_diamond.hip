// Dependencies that must not run out of order (issue #22): a diamond A -> {B, C} -> D where
// C is slow (a host node that sleeps before it writes pinned memory) and B fast, so a join
// that did not wait for C would read C's output unwritten; a fan of eight branches into one
// join; a diamond inside a child graph; every graph launched 20 times with new inputs, after
// work already on the stream. Independent branches may run concurrently (the graph spreads
// them over several queues); the results must equal the host's every time.
#include "check.h"
#include <unistd.h>
#include <vector>

__global__ void fill(int* a, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = base + i;
}

__global__ void twice(const int* a, int* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = 2 * a[i];
}

__global__ void join2(const int* b, const int* c, int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = b[i] + c[i];
}

__global__ void out_of_bounds(int* p) { p[1 << 26] = 1; }

__global__ void add_into(const int* src, int* dst, int k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&dst[i], k * src[i]);
}

struct Slow {
  const int* a;  // device memory the host reads after A (pinned, so the host can)
  int* c;        // pinned: written by the host node
  int n;
};
static void slow_square(void* p) {
  Slow* s = (Slow*)p;
  usleep(3000);
  for (int i = 0; i < s->n; i++) s->c[i] = s->a[i] * s->a[i];
}

static hipKernelNodeParams kernel(void* f, int n, void** args) {
  hipKernelNodeParams p = {};
  p.func = f;
  p.gridDim = dim3((n + 63) / 64);
  p.blockDim = dim3(64);
  p.kernelParams = args;
  return p;
}

int main() {
  const int N = 256, ROUNDS = 20;
  int *a, *b, *c, *d;
  HIP_CHECK(hipHostMalloc(&a, N * 4, 0));
  HIP_CHECK(hipMalloc(&b, N * 4));
  HIP_CHECK(hipHostMalloc(&c, N * 4, 0));
  HIP_CHECK(hipMalloc(&d, N * 4));
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  int n = N, base = 0;

  // The diamond: B (fast) is made first so it continues A's queue; C (slow) goes elsewhere.
  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  void* fa[] = {&a, &base, &n};
  void* ba[] = {&a, &b, &n};
  void* da[] = {&b, &c, &d, &n};
  hipKernelNodeParams pa = kernel((void*)fill, N, fa), pb = kernel((void*)twice, N, ba),
                      pd = kernel((void*)join2, N, da);
  Slow slow = {a, c, N};
  hipHostNodeParams pc = {slow_square, &slow};
  hipGraphNode_t A, B, C, D;
  HIP_CHECK(hipGraphAddKernelNode(&A, g, nullptr, 0, &pa));
  HIP_CHECK(hipGraphAddKernelNode(&B, g, &A, 1, &pb));
  HIP_CHECK(hipGraphAddHostNode(&C, g, &A, 1, &pc));
  hipGraphNode_t bc[] = {B, C};
  HIP_CHECK(hipGraphAddKernelNode(&D, g, bc, 2, &pd));
  hipGraphExec_t exec;
  HIP_CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  bool ok = true;
  std::vector<int> got(N);
  for (int r = 0; r < ROUNDS; r++) {
    base = 100 * r - 7;
    HIP_CHECK(hipGraphExecKernelNodeSetParams(exec, A, &pa));
    HIP_CHECK(hipMemsetAsync(c, 0, N * 4, s));
    HIP_CHECK(hipGraphLaunch(exec, s));
    HIP_CHECK(hipMemcpyAsync(got.data(), d, N * 4, hipMemcpyDeviceToHost, s));
    HIP_CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < N; i++) {
      int ai = base + i;
      ok &= got[i] == 2 * ai + ai * ai;
    }
  }
  report("diamond: the join waits for the slow branch, 20 launches", ok);

  // A fan of eight branches into one join: d = sum_k k * a.
  {
    hipGraph_t f;
    HIP_CHECK(hipGraphCreate(&f, 0));
    hipGraphNode_t root, branch[8], join;
    HIP_CHECK(hipGraphAddKernelNode(&root, f, nullptr, 0, &pa));
    int ks[8];
    void* args[8][4];
    int* parts[8];
    for (int k = 0; k < 8; k++) {
      HIP_CHECK(hipMalloc(&parts[k], N * 4));
      ks[k] = k + 1;
      args[k][0] = &a;
      args[k][1] = &parts[k];
      args[k][2] = &n;
      hipKernelNodeParams pk = kernel((void*)twice, N, args[k]);
      HIP_CHECK(hipGraphAddKernelNode(&branch[k], f, &root, 1, &pk));
    }
    HIP_CHECK(hipGraphAddEmptyNode(&join, f, branch, 8));
    hipGraphNode_t sum[8];
    void* sa[8][4];
    hipGraphNode_t prev = join;
    for (int k = 0; k < 8; k++) {
      sa[k][0] = &parts[k];
      sa[k][1] = &d;
      sa[k][2] = &ks[k];
      sa[k][3] = &n;
      hipKernelNodeParams ps = kernel((void*)add_into, N, sa[k]);
      HIP_CHECK(hipGraphAddKernelNode(&sum[k], f, &prev, 1, &ps));
      prev = sum[k];
    }
    hipGraphExec_t fe;
    HIP_CHECK(hipGraphInstantiate(&fe, f, nullptr, nullptr, 0));
    bool fan = true;
    for (int r = 0; r < ROUNDS; r++) {
      base = 3 * r + 1;
      HIP_CHECK(hipGraphExecKernelNodeSetParams(fe, root, &pa));
      HIP_CHECK(hipMemsetAsync(d, 0, N * 4, s));
      HIP_CHECK(hipGraphLaunch(fe, s));
      HIP_CHECK(hipMemcpyAsync(got.data(), d, N * 4, hipMemcpyDeviceToHost, s));
      HIP_CHECK(hipStreamSynchronize(s));
      for (int i = 0; i < N; i++) fan &= got[i] == 36 * 2 * (base + i);
    }
    report("eight branches joined, 20 launches", fan);
    HIP_CHECK(hipGraphExecDestroy(fe));
    HIP_CHECK(hipGraphDestroy(f));
    for (int k = 0; k < 8; k++) HIP_CHECK(hipFree(parts[k]));
  }

  // The diamond as a child graph, between two kernels of the outer graph.
  {
    hipGraph_t outer;
    HIP_CHECK(hipGraphCreate(&outer, 0));
    int zero = 0;
    void* za[] = {&b, &zero, &n};
    hipKernelNodeParams pz = kernel((void*)fill, N, za);
    hipGraphNode_t pre, child, post;
    HIP_CHECK(hipGraphAddKernelNode(&pre, outer, nullptr, 0, &pz));
    HIP_CHECK(hipGraphAddChildGraphNode(&child, outer, &pre, 1, g));
    void* pa2[] = {&d, &d, &n};
    hipKernelNodeParams pp = kernel((void*)twice, N, pa2);
    HIP_CHECK(hipGraphAddKernelNode(&post, outer, &child, 1, &pp));
    hipGraphExec_t oe;
    HIP_CHECK(hipGraphInstantiate(&oe, outer, nullptr, nullptr, 0));
    bool nested = true;
    // The child is a clone of the graph, whose A copied its values when it was added (base 0).
    base = 0;
    for (int r = 0; r < 5; r++) {
      HIP_CHECK(hipMemsetAsync(c, 0, N * 4, s));
      HIP_CHECK(hipGraphLaunch(oe, s));
      HIP_CHECK(hipMemcpyAsync(got.data(), d, N * 4, hipMemcpyDeviceToHost, s));
      HIP_CHECK(hipStreamSynchronize(s));
      for (int i = 0; i < N; i++) {
        int ai = base + i;
        nested &= got[i] == 2 * (2 * ai + ai * ai);
      }
    }
    report("a diamond inside a child graph keeps its order", nested);
    HIP_CHECK(hipGraphExecDestroy(oe));
    HIP_CHECK(hipGraphDestroy(outer));
  }

  // A kernel faulting on a branch that runs on another queue than the launching stream's:
  // reported at the next synchronisation like any launch fault (last: through ROCr, a memory
  // fault fails every queue of the device for good).
  {
    hipGraph_t fg;
    HIP_CHECK(hipGraphCreate(&fg, 0));
    int* small;
    HIP_CHECK(hipMalloc(&small, 64));
    void* oa[] = {&small};
    hipKernelNodeParams po = kernel((void*)out_of_bounds, 1, oa);
    hipGraphNode_t fA, fB, fC, fD;
    HIP_CHECK(hipGraphAddKernelNode(&fA, fg, nullptr, 0, &pa));
    HIP_CHECK(hipGraphAddKernelNode(&fB, fg, &fA, 1, &pb));
    HIP_CHECK(hipGraphAddKernelNode(&fC, fg, &fA, 1, &po));  // the branch: another queue
    hipGraphNode_t fbc[] = {fB, fC};
    HIP_CHECK(hipGraphAddKernelNode(&fD, fg, fbc, 2, &pd));
    hipGraphExec_t fe;
    HIP_CHECK(hipGraphInstantiate(&fe, fg, nullptr, nullptr, 0));
    // The fault may already stop the device while the launch submits the other lanes'
    // packets: then the launch itself reports it.
    hipError_t launched = hipGraphLaunch(fe, s);
    hipError_t e = hipStreamSynchronize(s);
    report("a kernel faulting on a graph's branch: hipErrorIllegalAddress",
           (launched == hipSuccess || launched == hipErrorIllegalAddress) && e == hipErrorIllegalAddress,
           hipGetErrorName(launched));
    report("the fault is sticky", hipGraphLaunch(fe, s) == hipErrorIllegalAddress);
    HIP_CHECK(hipDeviceReset());
    HIP_CHECK(hipGraphExecDestroy(fe));
    HIP_CHECK(hipGraphDestroy(fg));
    report("the reset freed the device's memory", hipFree(small) == hipErrorInvalidValue);
  }

  // Graphs outlive a reset; the device's memory does not (with one device, the pinned host
  // memory too, as in clr, whose host context then holds that device alone).
  HIP_CHECK(hipGraphExecDestroy(exec));
  HIP_CHECK(hipGraphDestroy(g));
  report("the reset freed every allocation of the device",
         hipFree(b) == hipErrorInvalidValue && hipFree(d) == hipErrorInvalidValue);
  report("and, with one device, the pinned host memory",
         hipHostFree(a) == hipErrorInvalidValue && hipHostFree(c) == hipErrorInvalidValue);
  (void)hipGetLastError();
  return finish();
}
