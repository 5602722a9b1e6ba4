// hipMemcpy3D of a 256^3 float volume (64 MiB) on the software agent, next to the host's
// memcpy of the same bytes in the same run (scripts/bench-memcpy3d):
//   h2d:   packed host volume -> hipMalloc3D volume (pitch 1024 = the row: one run);
//   d2d:   hipMalloc3D volume -> another;
//   h2a:   packed host volume -> a 256^3 float hipArray;
//   sub:   a 255^3 sub-volume host -> device (rows of 1020 bytes: 65,025 row copies),
//          against memcpy of its bytes;
// best of ROUNDS for each; every copy's result is checked against the host's bytes.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(c)                                                                            \
  do {                                                                                      \
    hipError_t e_ = (c);                                                                    \
    if (e_ != hipSuccess) {                                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #c, hipGetErrorName(e_));      \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

using clk = std::chrono::steady_clock;
static double ms_since(clk::time_point t) {
  return std::chrono::duration<double, std::milli>(clk::now() - t).count();
}

template <class F>
static double best_of(int rounds, F f) {
  double best = 1e30;
  for (int r = 0; r < rounds; r++) {
    auto t = clk::now();
    f();
    best = std::min(best, ms_since(t));
  }
  return best;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 7;
  const size_t N = 256, row = N * sizeof(float), bytes = row * N * N;
  std::vector<float> host(N * N * N), back(N * N * N), scratch(N * N * N);
  for (size_t i = 0; i < host.size(); i++) host[i] = (float)(i % 1000003) * 0.5f;
  hipExtent extent = make_hipExtent(row, N, N);
  hipPitchedPtr a, b;
  CHECK(hipMalloc3D(&a, extent));
  CHECK(hipMalloc3D(&b, extent));

  hipMemcpy3DParms h2d = {};
  h2d.srcPtr = make_hipPitchedPtr(host.data(), row, N, N);
  h2d.dstPtr = a;
  h2d.extent = extent;
  h2d.kind = hipMemcpyHostToDevice;
  hipMemcpy3DParms d2d = {};
  d2d.srcPtr = a;
  d2d.dstPtr = b;
  d2d.extent = extent;
  d2d.kind = hipMemcpyDeviceToDevice;
  hipMemcpy3DParms d2h = {};
  d2h.srcPtr = b;
  d2h.dstPtr = make_hipPitchedPtr(back.data(), row, N, N);
  d2h.extent = extent;
  d2h.kind = hipMemcpyDeviceToHost;

  // Warm every page once (first touches are page faults, not copies).
  CHECK(hipMemcpy3D(&h2d));
  CHECK(hipMemcpy3D(&d2d));
  memcpy(scratch.data(), host.data(), bytes);
  double t_h2d = best_of(rounds, [&] { CHECK(hipMemcpy3D(&h2d)); });
  double t_d2d = best_of(rounds, [&] { CHECK(hipMemcpy3D(&d2d)); });
  double t_memcpy = best_of(rounds, [&] {
    memcpy(scratch.data(), host.data(), bytes);
    asm volatile("" : : "r"(scratch.data()) : "memory");
  });
  CHECK(hipMemcpy3D(&d2h));
  bool ok = memcmp(back.data(), host.data(), bytes) == 0;

  // Into a 256^3 float array.
  hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
  hipArray* arr;
  CHECK(hipMalloc3DArray(&arr, &desc, make_hipExtent(N, N, N), hipArrayDefault));
  hipMemcpy3DParms h2a = {};
  h2a.srcPtr = make_hipPitchedPtr(host.data(), row, N, N);
  h2a.dstArray = arr;
  h2a.extent = make_hipExtent(N, N, N);
  h2a.kind = hipMemcpyHostToDevice;
  CHECK(hipMemcpy3D(&h2a));
  double t_h2a = best_of(rounds, [&] { CHECK(hipMemcpy3D(&h2a)); });
  hipMemcpy3DParms a2h = {};
  a2h.srcArray = arr;
  a2h.dstPtr = make_hipPitchedPtr(back.data(), row, N, N);
  a2h.extent = make_hipExtent(N, N, N);
  a2h.kind = hipMemcpyDeviceToHost;
  memset(back.data(), 0, bytes);
  CHECK(hipMemcpy3D(&a2h));
  ok &= memcmp(back.data(), host.data(), bytes) == 0;

  // A 255^3 sub-volume: rows of 1020 bytes, copied one by one.
  const size_t M = N - 1, sub_bytes = M * sizeof(float) * M * M;
  hipMemcpy3DParms sub = h2d;
  sub.extent = make_hipExtent(M * sizeof(float), M, M);
  sub.srcPos = make_hipPos(sizeof(float), 1, 1);
  double t_sub = best_of(rounds, [&] { CHECK(hipMemcpy3D(&sub)); });
  double t_sub_memcpy = best_of(rounds, [&] {
    memcpy(scratch.data(), host.data(), sub_bytes);
    asm volatile("" : : "r"(scratch.data()) : "memory");
  });

  double mib = bytes / 1048576.0;
  printf("volume: 256^3 floats, %.0f MiB; best of %d\n", mib, rounds);
  printf("hipMemcpy3D host->device:   %7.2f ms  %5.2f GB/s  (%.2fx memcpy's time)\n", t_h2d,
         bytes / t_h2d / 1e6, t_h2d / t_memcpy);
  printf("hipMemcpy3D device->device: %7.2f ms  %5.2f GB/s  (%.2fx memcpy's time)\n", t_d2d,
         bytes / t_d2d / 1e6, t_d2d / t_memcpy);
  printf("hipMemcpy3D host->array:    %7.2f ms  %5.2f GB/s  (%.2fx memcpy's time)\n", t_h2a,
         bytes / t_h2a / 1e6, t_h2a / t_memcpy);
  printf("memcpy of the same bytes:   %7.2f ms  %5.2f GB/s\n", t_memcpy, bytes / t_memcpy / 1e6);
  printf("255^3 sub-volume host->device (65,025 rows): %7.2f ms, memcpy of its bytes %7.2f ms (%.2fx)\n",
         t_sub, t_sub_memcpy, t_sub / t_sub_memcpy);
  printf("results %s\n", ok ? "match the host's bytes" : "DIFFER from the host's bytes");
  CHECK(hipFreeArray(arr));
  CHECK(hipFree(a.ptr));
  CHECK(hipFree(b.ptr));
  return ok ? 0 : 1;
}
