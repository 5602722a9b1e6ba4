// Runtime figures on the software agent, side by side with the host doing the same work in
// the same run (scripts/bench-runtime):
//   launch: launch-to-completion latency of an empty kernel (hipLaunchKernel + wait), median
//           and 90th percentile over many launches;
//   h2d:    hipMemcpy host -> device bandwidth against the host's memcpy of the same bytes;
//   saxpy:  16 M-element saxpy end to end (copies in, kernel, copy out), with the kernel's
//           (emulator's) share measured by events, against the host loop; the result is
//           checked against the host's.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(c)                                                              \
  do {                                                                        \
    hipError_t e_ = (c);                                                      \
    if (e_ != hipSuccess) {                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #c, hipGetErrorName(e_)); \
      exit(1);                                                                \
    }                                                                         \
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

int main(int argc, char** argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 2000;
  // Launch latency.
  empty<<<1, 1>>>();
  CHECK(hipDeviceSynchronize());
  std::vector<double> lat;
  for (int i = 0; i < launches; i++) {
    auto t = clk::now();
    empty<<<1, 1>>>();
    CHECK(hipDeviceSynchronize());
    lat.push_back(us_since(t));
  }
  std::sort(lat.begin(), lat.end());
  printf("launch: empty kernel launch-to-completion median %.1f us, p90 %.1f us (%d launches)\n",
         lat[lat.size() / 2], lat[lat.size() * 9 / 10], launches);

  // Host -> device bandwidth against memcpy.
  const size_t bytes = 256u << 20;
  char* host = (char*)malloc(bytes);
  char* host2 = (char*)malloc(bytes);
  memset(host, 1, bytes);
  memset(host2, 2, bytes);
  char* dev;
  CHECK(hipMalloc(&dev, bytes));
  CHECK(hipMemcpy(dev, host, bytes, hipMemcpyHostToDevice));
  double best_copy = 1e30, best_memcpy = 1e30;
  for (int r = 0; r < 5; r++) {
    auto t = clk::now();
    CHECK(hipMemcpy(dev, host, bytes, hipMemcpyHostToDevice));
    best_copy = std::min(best_copy, us_since(t));
    t = clk::now();
    memcpy(host2, host, bytes);
    asm volatile("" : : "r"(host2) : "memory");  // the copy must happen
    best_memcpy = std::min(best_memcpy, us_since(t));
  }
  printf("h2d: hipMemcpy %.2f GB/s, memcpy %.2f GB/s (%.2fx memcpy's time, 256 MiB, best of 5)\n",
         bytes / best_copy / 1e3, bytes / best_memcpy / 1e3, best_copy / best_memcpy);
  CHECK(hipFree(dev));
  free(host);
  free(host2);

  // saxpy, 16 M elements.
  const int n = 16 << 20;
  const float a = 2.5f;
  std::vector<float> x(n), y(n), ref(n), out(n);
  for (int i = 0; i < n; i++) {
    x[i] = (i % 1000) * 0.001f;
    y[i] = (i % 777) * 0.01f;
  }
  float *dx, *dy;
  hipEvent_t k0, k1;
  CHECK(hipEventCreate(&k0));
  CHECK(hipEventCreate(&k1));
  auto t = clk::now();
  CHECK(hipMalloc(&dx, n * 4));
  CHECK(hipMalloc(&dy, n * 4));
  CHECK(hipMemcpy(dx, x.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dy, y.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipEventRecord(k0, nullptr));
  saxpy<<<n / 256, 256>>>(a, dx, dy, n);
  CHECK(hipEventRecord(k1, nullptr));
  CHECK(hipMemcpy(out.data(), dy, n * 4, hipMemcpyDeviceToHost));
  double total = us_since(t);
  float kernel_ms = 0;
  CHECK(hipEventElapsedTime(&kernel_ms, k0, k1));
  auto h = clk::now();
  for (int i = 0; i < n; i++) ref[i] = a * x[i] + y[i];
  double host_us = us_since(h);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += out[i] != std::fma(a, x[i], y[i]) && out[i] != ref[i];
  printf("saxpy: 16M elements end to end %.1f ms (kernel on the emulator %.1f ms = %.0f%%), host loop %.1f ms; %s\n",
         total / 1e3, kernel_ms, 100.0 * kernel_ms * 1e3 / total, host_us / 1e3,
         bad ? "MISMATCH" : "matches the host");
  CHECK(hipFree(dx));
  CHECK(hipFree(dy));
  return bad ? 1 : 0;
}
