// build: -fgpu-default-stream=per-thread
// The per-thread default stream as programs built with -fgpu-default-stream=per-thread use it:
// every stream-less call (hipMemcpy, hipMemset, <<<>>>, hipStreamSynchronize(0)) is its `_spt`
// form on the calling thread's own stream. Four threads work at once, each checked against
// the host; a thread's stream does not wait for another thread's (a host function blocked on
// one thread's stream does not hold back another thread's synchronisation), and one thread's
// per-thread stream is the same stream all along.
#include "check.h"
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

__global__ void affine(int* p, int n, int a, int b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * a + b;
}

__constant__ int c_offset;

__global__ void add_offset(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += c_offset;
}

static bool worker(int t) {
  const int n = 3000 + 517 * t;
  int* d = nullptr;
  if (hipMalloc(&d, n * sizeof(int)) != hipSuccess) return false;
  std::vector<int> h(n), back(n);
  for (int i = 0; i < n; i++) h[i] = i * (t + 1) - 7;
  bool ok = hipMemset(d, 0xff, n * sizeof(int)) == hipSuccess;
  ok &= hipMemcpy(back.data(), d, n * sizeof(int), hipMemcpyDeviceToHost) == hipSuccess;
  for (int i = 0; i < n && ok; i++) ok &= back[i] == -1;
  ok &= hipMemcpy(d, h.data(), n * sizeof(int), hipMemcpyHostToDevice) == hipSuccess;
  for (int round = 0; round < 5; round++) {
    affine<<<(n + 63) / 64, 64>>>(d, n, 3, t - round);
    for (int i = 0; i < n; i++) h[i] = h[i] * 3 + (t - round);
  }
  ok &= hipGetLastError() == hipSuccess;
  ok &= hipStreamSynchronize(0) == hipSuccess;
  ok &= hipStreamQuery(0) == hipSuccess;
  ok &= hipMemcpy(back.data(), d, n * sizeof(int), hipMemcpyDeviceToHost) == hipSuccess;
  for (int i = 0; i < n && ok; i++) ok &= back[i] == h[i];
  unsigned flags = 99;
  ok &= hipStreamGetFlags(0, &flags) == hipSuccess && flags == 0;
  ok &= hipFree(d) == hipSuccess;
  return ok;
}

int main() {
  // Four threads at once, each on its own stream.
  {
    std::vector<std::thread> threads;
    std::atomic<int> good{0};
    for (int t = 0; t < 4; t++)
      threads.emplace_back([t, &good] { good += worker(t) ? 1 : 0; });
    for (auto& th : threads) th.join();
    report("four threads on their own per-thread streams", good == 4);
  }

  // Thread A's stream holds a host function until thread B has synchronised its own stream
  // and seen its kernel's result: with one shared stream B would wait for A, and A for B.
  {
    static std::atomic<bool> released{false};
    static std::atomic<bool> timed_out{false};
    auto hold = [](void*) {
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!released.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!released.load()) timed_out = true;
    };
    hipError_t a_status = hipErrorUnknown;
    std::atomic<bool> a_held{false};
    std::thread a([&] {
      hipError_t e = hipLaunchHostFunc(hipStreamPerThread, hold, nullptr);
      a_held = true;
      if (e == hipSuccess) e = hipStreamSynchronize(0);
      a_status = e;
    });
    while (!a_held.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    bool b_ok = false;
    int* d = nullptr;
    std::thread b([&] {
      const int n = 1000;
      std::vector<int> h(n, 5), back(n);
      b_ok = hipMalloc(&d, n * sizeof(int)) == hipSuccess &&
             hipMemcpy(d, h.data(), n * sizeof(int), hipMemcpyHostToDevice) == hipSuccess;
      affine<<<(n + 255) / 256, 256>>>(d, n, 7, 1);
      b_ok &= hipStreamSynchronize(0) == hipSuccess;
      b_ok &= hipMemcpy(back.data(), d, n * sizeof(int), hipMemcpyDeviceToHost) == hipSuccess;
      for (int i = 0; i < n; i++) b_ok &= back[i] == 5 * 7 + 1;
      b_ok &= !released.load();
    });
    b.join();
    released = true;
    a.join();
    // hipFree waits for the whole device, A's stream included: only after the release.
    HIP_CHECK(hipFree(d));
    report("a thread's stream does not wait for another thread's", b_ok && !timed_out);
    report("the held stream finishes once released", a_status == hipSuccess);
  }

  // Symbols and 2D operations through their _spt forms, on this thread's stream.
  {
    const int w = 40, rows = 6, n = w * rows;
    int* d = nullptr;
    size_t pitch = 0;
    HIP_CHECK(hipMallocPitch((void**)&d, &pitch, w * sizeof(int), rows));
    std::vector<int> h(n), back(n);
    for (int i = 0; i < n; i++) h[i] = i * i % 977;
    HIP_CHECK(hipMemset2D(d, pitch, 0, w * sizeof(int), rows));
    HIP_CHECK(hipMemcpy2D(d, pitch, h.data(), w * sizeof(int), w * sizeof(int), rows,
                          hipMemcpyHostToDevice));
    int offset = 1234;
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_offset), &offset, sizeof offset));
    for (int r = 0; r < rows; r++)
      add_offset<<<1, 64>>>((int*)((char*)d + r * pitch), w);
    int read_back = 0;
    HIP_CHECK(hipMemcpyFromSymbol(&read_back, HIP_SYMBOL(c_offset), sizeof read_back));
    HIP_CHECK(hipMemcpy2D(back.data(), w * sizeof(int), d, pitch, w * sizeof(int), rows,
                          hipMemcpyDeviceToHost));
    bool ok = read_back == offset;
    for (int i = 0; i < n; i++) ok &= back[i] == h[i] + offset;
    report("symbols and 2D copies on the per-thread stream", ok);
    HIP_CHECK(hipFree(d));
  }

  // hipStreamPerThread is a stream of its own: not the null stream's flags or priority
  // errors, and it cannot be destroyed.
  {
    int priority = 99;
    HIP_CHECK(hipStreamGetPriority(hipStreamPerThread, &priority));
    report("the per-thread stream has the normal priority", priority == 0);
    report("the per-thread stream cannot be destroyed",
           hipStreamDestroy(hipStreamPerThread) != hipSuccess);
    (void)hipGetLastError();
  }
  return finish();
}
