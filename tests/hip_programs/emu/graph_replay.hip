// A graph replayed 1,000 times (issue #22) with its kernel node's parameters changed between
// launches by hipGraphExecKernelNodeSetParams, without waiting: every launch must run with the
// values it was given (a launch in flight keeps its kernarg segment). Launches alternate
// between two streams chained by events (each stream's queue gets its own segments) and are
// interleaved with ordinary launches on the same streams, which must stay in stream order. The
// result is checked against the host's sum, every 100 launches and at the end.
#include "check.h"
#include <vector>

__global__ void accumulate(int* acc, int k, int limit) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < limit) acc[i] += k * (i + 1);
}

__global__ void negate(int* acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] = -acc[i];
}

int main() {
  const int N = 128, LAUNCHES = 1000;
  int* acc;
  HIP_CHECK(hipMalloc(&acc, N * 4));
  HIP_CHECK(hipMemset(acc, 0, N * 4));
  std::vector<int> host(N, 0), snap(N, 0), got(N);
  hipStream_t s[2];
  HIP_CHECK(hipStreamCreate(&s[0]));
  HIP_CHECK(hipStreamCreateWithFlags(&s[1], hipStreamNonBlocking));
  hipEvent_t done[2];
  HIP_CHECK(hipEventCreateWithFlags(&done[0], hipEventDisableTiming));
  HIP_CHECK(hipEventCreateWithFlags(&done[1], hipEventDisableTiming));

  // The graph: acc[i] += k (i + 1) for i < limit, then a copy of acc to the host.
  hipGraph_t g;
  HIP_CHECK(hipGraphCreate(&g, 0));
  int k = 0, limit = N;
  void* args[] = {&acc, &k, &limit};
  hipKernelNodeParams kp = {};
  kp.func = (void*)accumulate;
  kp.gridDim = dim3(N / 64);
  kp.blockDim = dim3(64);
  kp.kernelParams = args;
  hipGraphNode_t kn, copy;
  HIP_CHECK(hipGraphAddKernelNode(&kn, g, nullptr, 0, &kp));
  HIP_CHECK(hipGraphAddMemcpyNode1D(&copy, g, &kn, 1, snap.data(), acc, N * 4, hipMemcpyDeviceToHost));
  hipGraphExec_t exec;
  HIP_CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));

  bool ok = true;
  for (int r = 1; r <= LAUNCHES; r++) {
    hipStream_t st = s[r & 1];
    // The values this launch must use: k = r, limit alternating between all and half.
    k = r;
    limit = (r % 3 == 0) ? N / 2 : N;
    kp.gridDim = dim3(limit / 64);
    HIP_CHECK(hipGraphExecKernelNodeSetParams(exec, kn, &kp));
    // Clobber the values afterwards: the node copied them.
    k = -1;
    limit = 0;
    HIP_CHECK(hipStreamWaitEvent(st, done[(r + 1) & 1], 0));
    HIP_CHECK(hipGraphLaunch(exec, st));
    int lim = (r % 3 == 0) ? N / 2 : N;
    for (int i = 0; i < lim; i++) host[i] += r * (i + 1);
    if (r % 7 == 0) {
      // An ordinary launch between two graph launches on the same stream.
      negate<<<N / 64, 64, 0, st>>>(acc, N);
      for (int i = 0; i < N; i++) host[i] = -host[i];
    }
    HIP_CHECK(hipEventRecord(done[r & 1], st));
    if (r % 100 == 0) {
      HIP_CHECK(hipStreamSynchronize(st));
      HIP_CHECK(hipMemcpy(got.data(), acc, N * 4, hipMemcpyDeviceToHost));
      ok &= got == host;
      // The graph's own copy ran before the negation of this round, if any.
      std::vector<int> before = host;
      if (r % 7 == 0)
        for (int& v : before) v = -v;
      ok &= snap == before;
    }
  }
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipStreamSynchronize(s[1]));
  HIP_CHECK(hipMemcpy(got.data(), acc, N * 4, hipMemcpyDeviceToHost));
  ok &= got == host;
  report("1,000 launches, parameters changed between them, each ran with its own", ok);

  // The graph launched after stream work and before later work on the null stream.
  HIP_CHECK(hipMemset(acc, 0, N * 4));
  negate<<<N / 64, 64, 0, s[0]>>>(acc, N);  // blocking stream: the null stream waits for it
  k = 5;
  limit = N;
  kp.gridDim = dim3(N / 64);
  HIP_CHECK(hipGraphExecKernelNodeSetParams(exec, kn, &kp));
  HIP_CHECK(hipGraphLaunch(exec, nullptr));
  negate<<<N / 64, 64>>>(acc, N);
  HIP_CHECK(hipMemcpy(got.data(), acc, N * 4, hipMemcpyDeviceToHost));
  bool order = true;
  for (int i = 0; i < N; i++) order &= got[i] == -5 * (i + 1) && snap[i] == 5 * (i + 1);
  report("a launch on the null stream keeps the legacy stream's order before and after", order);

  HIP_CHECK(hipGraphExecDestroy(exec));
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipFree(acc));
  return finish();
}
