// Graph launch against stream launches on the software agent (scripts/bench-graphs): the same
// 100 kernels, end to end (submission to completion, measured on the host), as
//   stream:  100 hipLaunchKernelGGL on a stream, then hipStreamSynchronize;
//   graph:   one hipGraphLaunch of a graph of the 100 launches (captured from the stream, so
//            the graph is exactly the stream's work), then hipStreamSynchronize;
// for empty kernels and for a small saxpy (256 work-items), each the median of many rounds,
// interleaved so both see the same machine. The saxpy results are checked against the host.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(c)                                                                     \
  do {                                                                               \
    hipError_t e_ = (c);                                                             \
    if (e_ != hipSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #c, hipGetErrorName(e_)); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

using clk = std::chrono::steady_clock;
static double us_since(clk::time_point t) {
  return std::chrono::duration<double, std::micro>(clk::now() - t).count();
}

__global__ void empty() {}

__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  const int KERNELS = 100;
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  const int n = 256;
  float *x, *y;
  CHECK(hipMalloc(&x, n * 4));
  CHECK(hipMalloc(&y, n * 4));
  std::vector<float> hx(n), hy(n, 0.0f), got(n);
  for (int i = 0; i < n; i++) hx[i] = 0.5f * i;
  CHECK(hipMemcpy(x, hx.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemset(y, 0, n * 4));
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));

  for (int kind = 0; kind < 2; kind++) {
    auto issue = [&] {
      for (int k = 0; k < KERNELS; k++) {
        if (kind == 0)
          hipLaunchKernelGGL(empty, dim3(1), dim3(1), 0, s);
        else
          hipLaunchKernelGGL(saxpy, dim3(n / 64), dim3(64), 0, s, 1.0f, x, y, n);
      }
    };
    hipGraph_t g;
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    issue();
    CHECK(hipStreamEndCapture(s, &g));
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    // Warm up both paths (first launches load code and form kernarg segments).
    issue();
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    std::vector<double> stream_us, graph_us;
    for (int r = 0; r < rounds; r++) {
      auto t = clk::now();
      issue();
      CHECK(hipStreamSynchronize(s));
      stream_us.push_back(us_since(t));
      t = clk::now();
      CHECK(hipGraphLaunch(exec, s));
      CHECK(hipStreamSynchronize(s));
      graph_us.push_back(us_since(t));
    }
    double st = median(stream_us), gr = median(graph_us);
    printf("%s: %d kernels, stream %.0f us, graph %.0f us: graph/stream %.2f (median of %d rounds)\n",
           kind == 0 ? "empty" : "saxpy", KERNELS, st, gr, gr / st, rounds);
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(g));
  }
  // y = sum of every saxpy launched: (warm-up + rounds) x 2 paths x 100 launches of y += x.
  CHECK(hipMemcpy(got.data(), y, n * 4, hipMemcpyDeviceToHost));
  double times = 2.0 * KERNELS * (rounds + 1);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += got[i] != (float)(times * hx[i]);
  printf("saxpy results %s\n", bad ? "DIFFER from the host's" : "match the host's");
  return bad ? 1 : 0;
}
