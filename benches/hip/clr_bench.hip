// Start-up and launch latency of a HIP program, run unchanged under two runtimes side by side
// (scripts/bench-clr): `rocload run` (librocload.so) and AMD's clr (Debian's libamdhip64.so.5)
// over the software HSA library. Both run kernels on the same emulator.
//   clr_bench start     one empty kernel, then exit (the script times whole processes)
//   clr_bench launch N  N empty-kernel launches, each waited for: median and p90 in us
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

__global__ void empty() {}

int main(int argc, char** argv) {
  empty<<<1, 1>>>();
  CHECK(hipDeviceSynchronize());
  if (argc < 2 || strcmp(argv[1], "launch") != 0) return 0;
  int launches = argc > 2 ? atoi(argv[2]) : 1000;
  if (launches < 1) launches = 1;
  std::vector<double> lat;
  for (int i = 0; i < launches; i++) {
    auto t = std::chrono::steady_clock::now();
    empty<<<1, 1>>>();
    CHECK(hipDeviceSynchronize());
    lat.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count());
  }
  std::sort(lat.begin(), lat.end());
  printf("%.1f %.1f\n", lat[lat.size() / 2], lat[lat.size() * 9 / 10]);
  return 0;
}
