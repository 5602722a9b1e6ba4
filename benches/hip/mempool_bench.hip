// Stream-ordered allocation on the software agent (scripts/bench-mempool): a hipMallocAsync +
// hipFreeAsync pair from a warm pool (the default pool, its release threshold raised so that
// synchronisation keeps what it holds) against a hipMalloc + hipFree pair, and the host's
// malloc + free of the same size as the reference, all in one run. Each figure is the median
// (and 90th percentile) over batches of the time per pair, for 4 KiB and 1 MiB blocks. Every
// block is written and read back once before the timing, checked against the host.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

struct Figure {
  double median, p90;
};

// Runs `batches` batches of `per_batch` calls of `pair`; the time per pair of each batch.
template <class F>
static Figure per_pair(int batches, int per_batch, F pair) {
  std::vector<double> ns;
  for (int b = 0; b < batches; b++) {
    auto t = clk::now();
    for (int i = 0; i < per_batch; i++) pair();
    ns.push_back(std::chrono::duration<double, std::nano>(clk::now() - t).count() / per_batch);
  }
  std::sort(ns.begin(), ns.end());
  return {ns[ns.size() / 2], ns[ns.size() * 9 / 10]};
}

__global__ void stamp(uint32_t* p, size_t n, uint32_t v) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] = v ^ (uint32_t)i;
}

int main(int argc, char** argv) {
  const int scale = argc > 1 ? atoi(argv[1]) : 1;
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipMemPool_t pool;
  CHECK(hipDeviceGetDefaultMemPool(&pool, 0));
  uint64_t keep = UINT64_MAX;
  CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep));
  bool ok = true;
  printf("per pair, median (p90) over batches\n");
  for (size_t bytes : {size_t(4) << 10, size_t(1) << 20}) {
    // Warm the pool, and check a block once: written by a kernel, read back.
    const size_t n = bytes / sizeof(uint32_t);
    uint32_t* p;
    CHECK(hipMallocAsync((void**)&p, bytes, s));
    stamp<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(p, n, 0x5eed);
    std::vector<uint32_t> back(n);
    CHECK(hipMemcpyAsync(back.data(), p, bytes, hipMemcpyDeviceToHost, s));
    CHECK(hipFreeAsync(p, s));
    CHECK(hipStreamSynchronize(s));
    for (size_t i = 0; i < n; i++) ok &= back[i] == (0x5eedu ^ (uint32_t)i);
    void* q;
    Figure async_pair = per_pair(200, 500 * scale, [&] {
      CHECK(hipMallocAsync(&q, bytes, s));
      CHECK(hipFreeAsync(q, s));
    });
    CHECK(hipStreamSynchronize(s));
    Figure sync_pair = per_pair(40, 50 * scale, [&] {
      CHECK(hipMalloc(&q, bytes));
      CHECK(hipFree(q));
    });
    Figure host_pair = per_pair(200, 500 * scale, [&] {
      void* h = malloc(bytes);
      asm volatile("" : : "r"(h) : "memory");
      free(h);
    });
    uint64_t reserved = 0;
    CHECK(hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &reserved));
    printf("%5zu KiB: hipMallocAsync+hipFreeAsync %8.0f ns (%.0f) | hipMalloc+hipFree %8.0f ns "
           "(%.0f), %.0fx | host malloc+free %5.0f ns (%.0f) | pool holds %llu KiB\n",
           bytes >> 10, async_pair.median, async_pair.p90, sync_pair.median, sync_pair.p90,
           sync_pair.median / async_pair.median, host_pair.median, host_pair.p90,
           (unsigned long long)(reserved >> 10));
  }
  uint64_t zero = 0;
  CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &zero));
  CHECK(hipMemPoolTrimTo(pool, 0));
  CHECK(hipStreamDestroy(s));
  printf("results %s\n", ok ? "match the host's" : "DIFFER from the host's");
  return ok ? 0 : 1;
}
