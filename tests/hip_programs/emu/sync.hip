// Synchronisation that must synchronise, each scenario run 200 times so that a race shows:
// hipDeviceSynchronize waits for work queued on non-blocking streams (not only the null stream
// and blocking streams), and hipMemcpyAsync to or from pageable host memory is synchronous
// with respect to the host, as in HIP: the destination holds the copy when the call returns,
// and the source may be reused at once. hipStreamSynchronize(NULL) waits for blocking streams'
// work too (the null stream is ordered after it, as clr's null stream waits for the active
// blocking streams).
#include "check.h"

#include <vector>

static const int N = 1024;
static const int ROUNDS = 200;

// Writes `v` everywhere after some work, so the host is likely to look before it is done.
__global__ void slow_set(int* p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int acc = 0;
    for (int k = 0; k < 100; k++) acc += (k * 7) ^ i;
    p[i] = v + (acc & 0);
  }
}

int main() {
  // hipDeviceSynchronize after work on non-blocking streams: the kernels write pinned host
  // memory, read directly once the device is synchronised.
  {
    hipStream_t s[2];
    for (auto& x : s) HIP_CHECK(hipStreamCreateWithFlags(&x, hipStreamNonBlocking));
    int* out[2];
    for (auto& o : out) HIP_CHECK(hipHostMalloc(&o, N * sizeof(int), 0));
    int stale = 0;
    char detail[128] = "";
    for (int round = 1; round <= ROUNDS; round++) {
      for (int k = 0; k < 2; k++) slow_set<<<N / 256, 256, 0, s[k]>>>(out[k], N, round * 2 + k);
      HIP_CHECK(hipGetLastError());
      HIP_CHECK(hipDeviceSynchronize());
      bool ok = true;
      for (int k = 0; k < 2 && ok; k++) {
        for (int i = 0; i < N && ok; i++) {
          if (out[k][i] != round * 2 + k) {
            if (!stale)
              snprintf(detail, sizeof detail, "round %d stream %d [%d]: %d, expected %d", round,
                       k, i, out[k][i], round * 2 + k);
            ok = false;
          }
        }
      }
      stale += !ok;
    }
    char what[160];
    snprintf(what, sizeof what, "%d of %d rounds read stale values: %s", stale, ROUNDS, detail);
    report("hipDeviceSynchronize waits for non-blocking streams", stale == 0, what);
    for (auto o : out) HIP_CHECK(hipHostFree(o));
    for (auto x : s) HIP_CHECK(hipStreamDestroy(x));
  }

  // hipStreamSynchronize(NULL) after work on blocking streams only (nothing on the null
  // stream itself): the kernels' pinned host memory is read directly.
  {
    hipStream_t s[2];
    for (auto& x : s) HIP_CHECK(hipStreamCreate(&x));
    int* out[2];
    for (auto& o : out) HIP_CHECK(hipHostMalloc(&o, N * sizeof(int), 0));
    int stale = 0;
    char detail[128] = "";
    for (int round = 1; round <= ROUNDS; round++) {
      for (int k = 0; k < 2; k++) slow_set<<<N / 256, 256, 0, s[k]>>>(out[k], N, round * 5 + k);
      HIP_CHECK(hipGetLastError());
      HIP_CHECK(hipStreamSynchronize(nullptr));
      bool ok = true;
      for (int k = 0; k < 2 && ok; k++) {
        for (int i = 0; i < N && ok; i++) {
          if (out[k][i] != round * 5 + k) {
            if (!stale)
              snprintf(detail, sizeof detail, "round %d stream %d [%d]: %d, expected %d", round,
                       k, i, out[k][i], round * 5 + k);
            ok = false;
          }
        }
      }
      stale += !ok;
    }
    char what[160];
    snprintf(what, sizeof what, "%d of %d rounds read stale values: %s", stale, ROUNDS, detail);
    report("hipStreamSynchronize(NULL) waits for blocking streams", stale == 0, what);
    for (auto o : out) HIP_CHECK(hipHostFree(o));
    for (auto x : s) HIP_CHECK(hipStreamDestroy(x));
  }

  // hipMemcpyAsync device to pageable host memory, behind a kernel on the same stream: the
  // values are there when the call returns.
  {
    hipStream_t s;
    HIP_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    int* dev = nullptr;
    HIP_CHECK(hipMalloc(&dev, N * sizeof(int)));
    std::vector<int> host(N);
    int stale = 0;
    for (int round = 1; round <= ROUNDS; round++) {
      slow_set<<<N / 256, 256, 0, s>>>(dev, N, round);
      HIP_CHECK(hipMemcpyAsync(host.data(), dev, N * sizeof(int), hipMemcpyDeviceToHost, s));
      for (int i = 0; i < N; i++) {
        if (host[i] != round) {
          stale++;
          break;
        }
      }
    }
    HIP_CHECK(hipStreamSynchronize(s));
    char what[96];
    snprintf(what, sizeof what, "%d of %d copies returned before they were done", stale, ROUNDS);
    report("hipMemcpyAsync to pageable memory is done when it returns", stale == 0, what);

    // Host to device from pageable memory: the source is reused as soon as the call returns;
    // the device must hold what it held at the call.
    int wrong = 0;
    std::vector<int> back(N);
    for (int round = 1; round <= ROUNDS; round++) {
      slow_set<<<N / 256, 256, 0, s>>>(dev, N, -1);
      for (int i = 0; i < N; i++) host[i] = round * 3 + i;
      HIP_CHECK(hipMemcpyAsync(dev, host.data(), N * sizeof(int), hipMemcpyHostToDevice, s));
      for (int i = 0; i < N; i++) host[i] = -7;
      HIP_CHECK(hipStreamSynchronize(s));
      HIP_CHECK(hipMemcpy(back.data(), dev, N * sizeof(int), hipMemcpyDeviceToHost));
      for (int i = 0; i < N; i++) {
        if (back[i] != round * 3 + i) {
          wrong++;
          break;
        }
      }
    }
    snprintf(what, sizeof what, "%d of %d copies read their source after returning", wrong,
             ROUNDS);
    report("hipMemcpyAsync from pageable memory reads it before returning", wrong == 0, what);
    HIP_CHECK(hipFree(dev));
    HIP_CHECK(hipStreamDestroy(s));
  }
  return finish();
}
