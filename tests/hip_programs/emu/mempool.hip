// Stream-ordered allocation: hipMallocAsync/hipFreeAsync from the default pool and
// hipMallocFromPoolAsync from a pool of the program's own, on two streams with kernels, checked
// against the host; reuse on the freeing stream and, after an event, on the other stream; the
// pool's accounting; and a kernel that writes memory after its stream-ordered free, which must
// be a memory fault (hipErrorIllegalAddress) reported like one after hipFree; pool attributes,
// the release threshold at synchronisation, reuse of kept blocks, watermark resets and
// hipMemPoolTrimTo. The program prints "freed <what> <address>" for each fault it provokes,
// so the test can find the report.
#include "check.h"

#include <cstdint>
#include <vector>

__global__ void saxpy(int n, float a, const float* x, const float* y, float* z) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = a * x[i] + y[i];
}

__global__ void square_plus(int n, const float* in, float* out, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i] + k;
}

__global__ void touch(int* p, int v) { p[threadIdx.x] = v + (int)threadIdx.x; }

__global__ void squares(int n, int base, int* p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + i * i;
}

static const int N = 1000;
static const int ROUNDS = 6;

// Each round, on each of two streams: three blocks from the current (default) pool, inputs
// copied in, saxpy, result copied out, all three freed in stream order.
static void two_streams() {
  hipStream_t s[2];
  for (auto& st : s) HIP_CHECK(hipStreamCreateWithFlags(&st, hipStreamNonBlocking));
  std::vector<float> x(N), y(N), out[2][ROUNDS];
  for (int i = 0; i < N; i++) {
    x[i] = 0.25f * i;
    y[i] = 1000.0f - i;
  }
  for (int r = 0; r < ROUNDS; r++) {
    for (int k = 0; k < 2; k++) {
      float *dx, *dy, *dz;
      size_t bytes = N * sizeof(float);
      HIP_CHECK(hipMallocAsync((void**)&dx, bytes, s[k]));
      HIP_CHECK(hipMallocAsync((void**)&dy, bytes, s[k]));
      HIP_CHECK(hipMallocAsync((void**)&dz, bytes, s[k]));
      HIP_CHECK(hipMemcpyAsync(dx, x.data(), bytes, hipMemcpyHostToDevice, s[k]));
      HIP_CHECK(hipMemcpyAsync(dy, y.data(), bytes, hipMemcpyHostToDevice, s[k]));
      float a = 1.5f + r + 10.0f * k;
      saxpy<<<(N + 255) / 256, 256, 0, s[k]>>>(N, a, dx, dy, dz);
      HIP_CHECK(hipGetLastError());
      out[k][r].resize(N);
      HIP_CHECK(hipMemcpyAsync(out[k][r].data(), dz, bytes, hipMemcpyDeviceToHost, s[k]));
      HIP_CHECK(hipFreeAsync(dx, s[k]));
      HIP_CHECK(hipFreeAsync(dy, s[k]));
      HIP_CHECK(hipFreeAsync(dz, s[k]));
    }
  }
  for (auto st : s) HIP_CHECK(hipStreamSynchronize(st));
  bool ok = true;
  for (int r = 0; r < ROUNDS; r++)
    for (int k = 0; k < 2; k++) {
      float a = 1.5f + r + 10.0f * k;
      for (int i = 0; i < N; i++) ok = ok && out[k][r][i] == a * x[i] + y[i];
    }
  report("hipMallocAsync/hipFreeAsync on two streams with kernels", ok,
         "a result differs from the host's");
  for (auto st : s) HIP_CHECK(hipStreamDestroy(st));
}

// A pool of the program's own, reuse only through stream order and events: the freeing stream
// reuses at once; the other stream after waiting for an event recorded after the free; the
// data handed from one stream to the other through the event is what the host computes.
static void own_pool_and_events() {
  hipMemPool_t pool;
  hipMemPoolProps props = {};
  props.allocType = hipMemAllocationTypePinned;
  props.handleTypes = hipMemHandleTypeNone;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 0;
  HIP_CHECK(hipMemPoolCreate(&pool, &props));
  int off = 0;
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowOpportunistic, &off));
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowInternalDependencies, &off));
  uint64_t keep = UINT64_MAX;  // keep freed memory through synchronisations
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep));
  hipStream_t a, b;
  HIP_CHECK(hipStreamCreate(&a));
  HIP_CHECK(hipStreamCreate(&b));
  size_t bytes = N * sizeof(float);
  std::vector<float> x(N), got(N);
  for (int i = 0; i < N; i++) x[i] = 0.5f * (i % 37) - 3.0f;

  // a: in -> mid (square_plus); mid handed to b through an event; b: mid -> out.
  float *in, *mid, *out;
  HIP_CHECK(hipMallocFromPoolAsync((void**)&in, bytes, pool, a));
  HIP_CHECK(hipMallocFromPoolAsync((void**)&mid, bytes, pool, a));
  HIP_CHECK(hipMemcpyAsync(in, x.data(), bytes, hipMemcpyHostToDevice, a));
  square_plus<<<(N + 127) / 128, 128, 0, a>>>(N, in, mid, 1.0f);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipFreeAsync(in, a));
  float* again;
  HIP_CHECK(hipMallocFromPoolAsync((void**)&again, bytes, pool, a));
  report("the freeing stream reuses its block at once", again == in, "a new block was taken");
  HIP_CHECK(hipFreeAsync(again, a));
  hipEvent_t handed;
  HIP_CHECK(hipEventCreateWithFlags(&handed, hipEventDisableTiming));
  float* early;
  HIP_CHECK(hipMallocFromPoolAsync((void**)&early, bytes, pool, b));
  report("another stream does not reuse before it follows the free", early != in,
         "the block freed on a was reused on b without any order");
  HIP_CHECK(hipEventRecord(handed, a));
  HIP_CHECK(hipStreamWaitEvent(b, handed, 0));
  HIP_CHECK(hipMallocFromPoolAsync((void**)&out, bytes, pool, b));
  report("another stream reuses after waiting for an event", out == in,
         "b followed a's free through the event but took a new block");
  square_plus<<<(N + 127) / 128, 128, 0, b>>>(N, mid, out, -2.0f);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpyAsync(got.data(), out, bytes, hipMemcpyDeviceToHost, b));
  HIP_CHECK(hipFreeAsync(mid, b));
  HIP_CHECK(hipFreeAsync(out, b));
  HIP_CHECK(hipFreeAsync(early, b));
  HIP_CHECK(hipStreamSynchronize(b));
  bool ok = true;
  for (int i = 0; i < N; i++) {
    float m = x[i] * x[i] + 1.0f;
    ok = ok && got[i] == m * m - 2.0f;
  }
  report("data handed between streams through a pool and an event", ok,
         "a result differs from the host's");

  uint64_t used = 1, reserved = 0, high = 0;
  HIP_CHECK(hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &used));
  HIP_CHECK(hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &reserved));
  HIP_CHECK(hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemHigh, &high));
  char detail[160];
  snprintf(detail, sizeof detail, "used %llu, reserved %llu, used high %llu",
           (unsigned long long)used, (unsigned long long)reserved, (unsigned long long)high);
  // Three blocks at most at once (in/mid/early, then mid/early/out), each N floats rounded
  // up to 256 bytes.
  uint64_t block = (bytes + 255) / 256 * 256;
  report("pool accounting", used == 0 && reserved == 3 * block && high == 3 * block, detail);
  HIP_CHECK(hipMemPoolTrimTo(pool, 0));
  HIP_CHECK(hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &reserved));
  report("trimmed to nothing", reserved == 0, "memory kept after hipMemPoolTrimTo(0)");
  HIP_CHECK(hipEventDestroy(handed));
  HIP_CHECK(hipStreamDestroy(a));
  HIP_CHECK(hipStreamDestroy(b));
  HIP_CHECK(hipMemPoolDestroy(pool));
}

static uint64_t pool_attr(hipMemPool_t pool, hipMemPoolAttr attr) {
  uint64_t v = 0;
  HIP_CHECK(hipMemPoolGetAttribute(pool, attr, &v));
  return v;
}

static int pool_flag(hipMemPool_t pool, hipMemPoolAttr attr) {
  int v = -1;
  HIP_CHECK(hipMemPoolGetAttribute(pool, attr, &v));
  return v;
}

// Allocates `count` blocks of n ints from `pool` on `s`, fills each with a kernel, copies it
// to `got` and frees it, all in stream order; returns whether `got` is what the host computes
// once `s` is synchronised (by the caller) and stores the addresses in `blocks`.
static void fill_and_free(hipMemPool_t pool, hipStream_t s, int count, int n,
                          std::vector<int*>& blocks, std::vector<int>& got) {
  blocks.assign(count, nullptr);
  got.assign((size_t)count * n, 0);
  for (int k = 0; k < count; k++) {
    HIP_CHECK(hipMallocFromPoolAsync((void**)&blocks[k], n * sizeof(int), pool, s));
    squares<<<(n + 255) / 256, 256, 0, s>>>(n, 1000 * k, blocks[k]);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpyAsync(&got[(size_t)k * n], blocks[k], n * sizeof(int),
                             hipMemcpyDeviceToHost, s));
  }
  for (int k = 0; k < count; k++) HIP_CHECK(hipFreeAsync(blocks[k], s));
}

static bool squares_match(const std::vector<int>& got, int count, int n) {
  for (int k = 0; k < count; k++)
    for (int i = 0; i < n; i++)
      if (got[(size_t)k * n + i] != 1000 * k + i * i) return false;
  return true;
}

// The pool's attributes, the release threshold at synchronisation, reuse of what it kept on
// another stream, watermark resets and hipMemPoolTrimTo down to a size.
static void threshold_trim_and_reuse() {
  hipMemPool_t pool;
  hipMemPoolProps props = {};
  props.allocType = hipMemAllocationTypePinned;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 0;
  HIP_CHECK(hipMemPoolCreate(&pool, &props));
  char detail[200];

  // HIP's defaults: every reuse policy on, nothing kept at synchronisation; then set, read.
  int follow = pool_flag(pool, hipMemPoolReuseFollowEventDependencies);
  int opportunistic = pool_flag(pool, hipMemPoolReuseAllowOpportunistic);
  int internal = pool_flag(pool, hipMemPoolReuseAllowInternalDependencies);
  uint64_t threshold = pool_attr(pool, hipMemPoolAttrReleaseThreshold);
  snprintf(detail, sizeof detail, "follow %d, opportunistic %d, internal %d, threshold %llu",
           follow, opportunistic, internal, (unsigned long long)threshold);
  report("a new pool has HIP's default attributes",
         follow == 1 && opportunistic == 1 && internal == 1 && threshold == 0, detail);
  int off = 0, on = 1;
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolReuseFollowEventDependencies, &off));
  bool set_ok = pool_flag(pool, hipMemPoolReuseFollowEventDependencies) == 0;
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolReuseFollowEventDependencies, &on));
  set_ok &= pool_flag(pool, hipMemPoolReuseFollowEventDependencies) == 1;
  uint64_t used_now = 5;
  set_ok &= hipMemPoolSetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &used_now) ==
            hipErrorInvalidValue;
  uint64_t not_zero = 7;
  set_ok &= hipMemPoolSetAttribute(pool, hipMemPoolAttrUsedMemHigh, &not_zero) ==
            hipErrorInvalidValue;
  report("attributes read back what was set; current values are read-only", set_ok);

  const int n = 1024;  // 4 KiB: a whole number of the pool's 256-byte granules
  const uint64_t block = n * sizeof(int);
  uint64_t keep = 2 * block;
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep));
  report("the release threshold reads back",
         pool_attr(pool, hipMemPoolAttrReleaseThreshold) == keep);
  hipStream_t s, t;
  HIP_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  HIP_CHECK(hipStreamCreateWithFlags(&t, hipStreamNonBlocking));

  // Five blocks at once, freed; synchronisation gives back all but the threshold's two.
  std::vector<int*> first;
  std::vector<int> got;
  fill_and_free(pool, s, 5, n, first, got);
  HIP_CHECK(hipStreamSynchronize(s));
  report("five blocks filled by kernels in stream order", squares_match(got, 5, n),
         "a result differs from the host's");
  uint64_t reserved = pool_attr(pool, hipMemPoolAttrReservedMemCurrent);
  uint64_t used = pool_attr(pool, hipMemPoolAttrUsedMemCurrent);
  uint64_t used_high = pool_attr(pool, hipMemPoolAttrUsedMemHigh);
  uint64_t reserved_high = pool_attr(pool, hipMemPoolAttrReservedMemHigh);
  snprintf(detail, sizeof detail,
           "reserved %llu, used %llu, used high %llu, reserved high %llu (block %llu)",
           (unsigned long long)reserved, (unsigned long long)used,
           (unsigned long long)used_high, (unsigned long long)reserved_high,
           (unsigned long long)block);
  report("synchronisation keeps the release threshold's worth of freed memory",
         reserved == keep && used == 0 && used_high == 5 * block && reserved_high == 5 * block,
         detail);

  // Another stream takes the two kept blocks (their frees completed): no new memory.
  int *q[2];
  for (auto& b : q) HIP_CHECK(hipMallocFromPoolAsync((void**)&b, block, pool, t));
  bool reused = q[0] != q[1];
  for (auto b : q) {
    bool known = false;
    for (auto f : first) known |= f == b;
    reused &= known;
  }
  reused &= pool_attr(pool, hipMemPoolAttrReservedMemCurrent) == keep;
  report("another stream reuses the blocks the pool kept", reused, "new memory was taken");
  std::vector<int> back(2 * (size_t)n);
  for (int k = 0; k < 2; k++) {
    squares<<<(n + 255) / 256, 256, 0, t>>>(n, 1000 * k, q[k]);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpyAsync(&back[(size_t)k * n], q[k], block, hipMemcpyDeviceToHost, t));
    HIP_CHECK(hipFreeAsync(q[k], t));
  }
  HIP_CHECK(hipStreamSynchronize(t));
  report("kernels on the reused blocks", squares_match(back, 2, n),
         "a result differs from the host's");

  // Watermarks reset to the current values.
  uint64_t zero = 0;
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrUsedMemHigh, &zero));
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReservedMemHigh, &zero));
  used_high = pool_attr(pool, hipMemPoolAttrUsedMemHigh);
  reserved_high = pool_attr(pool, hipMemPoolAttrReservedMemHigh);
  snprintf(detail, sizeof detail, "used high %llu, reserved high %llu",
           (unsigned long long)used_high, (unsigned long long)reserved_high);
  report("high watermarks reset to the current values",
         used_high == 0 && reserved_high == keep, detail);

  // Keep everything through synchronisation, then trim to a little more than one block.
  uint64_t all = UINT64_MAX;
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &all));
  std::vector<int*> second;
  fill_and_free(pool, s, 4, n, second, got);
  HIP_CHECK(hipStreamSynchronize(s));
  bool ok = squares_match(got, 4, n);
  reserved = pool_attr(pool, hipMemPoolAttrReservedMemCurrent);
  ok &= reserved == 4 * block;
  HIP_CHECK(hipMemPoolTrimTo(pool, block + 1));
  uint64_t trimmed = pool_attr(pool, hipMemPoolAttrReservedMemCurrent);
  snprintf(detail, sizeof detail, "reserved %llu after the frees, %llu after the trim",
           (unsigned long long)reserved, (unsigned long long)trimmed);
  report("a threshold above everything keeps it; hipMemPoolTrimTo gives back down to a size",
         ok && trimmed == block, detail);

  // Threshold 0: the next synchronisation gives back the rest.
  HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &zero));
  HIP_CHECK(hipStreamSynchronize(s));
  reserved = pool_attr(pool, hipMemPoolAttrReservedMemCurrent);
  snprintf(detail, sizeof detail, "reserved %llu", (unsigned long long)reserved);
  report("with threshold 0 synchronisation gives every freed block back", reserved == 0, detail);
  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipStreamDestroy(t));
  HIP_CHECK(hipMemPoolDestroy(pool));
}

// A kernel writes `p` after it was freed (with `async`: in stream order, with a kernel still
// using it before the free): a memory fault, then the device is reset.
static void use_after_free(bool async) {
  const char* what = async ? "hipFreeAsync" : "hipFree";
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  int* p;
  if (async) {
    HIP_CHECK(hipMallocAsync((void**)&p, 64 * sizeof(int), s));
  } else {
    HIP_CHECK(hipMalloc((void**)&p, 64 * sizeof(int)));
  }
  touch<<<1, 64, 0, s>>>(p, 1);  // before the free: fine
  HIP_CHECK(hipGetLastError());
  if (async) {
    HIP_CHECK(hipFreeAsync(p, s));
  } else {
    HIP_CHECK(hipStreamSynchronize(s));
    HIP_CHECK(hipFree(p));
  }
  printf("freed %s %p\n", what, (void*)p);
  fflush(stdout);
  touch<<<1, 64, 0, s>>>(p, 2);  // after the free: a use after free
  hipError_t launched = hipGetLastError();
  hipError_t synced = hipStreamSynchronize(s);
  bool faulted = launched == hipErrorIllegalAddress || synced == hipErrorIllegalAddress;
  char name[96], detail[160];
  snprintf(name, sizeof name, "a kernel writing after %s faults", what);
  snprintf(detail, sizeof detail, "launch %s, synchronize %s (expected hipErrorIllegalAddress)",
           hipGetErrorName(launched), hipGetErrorName(synced));
  report(name, faulted, detail);
  HIP_CHECK(hipDeviceReset());
  (void)hipGetLastError();
  (void)hipStreamDestroy(s);
}

int main() {
  // Through ROCr (ROCLOAD_BACKEND=hsa) kernels run in the HSA library, whose memory checker
  // sees a pool's block as allocated until the pool gives it back: only the software agent's
  // checker knows stream-ordered frees.
  const char* backend = getenv("ROCLOAD_BACKEND");
  bool soft_checker = backend == nullptr || strcmp(backend, "hsa") != 0;
  two_streams();
  own_pool_and_events();
  threshold_trim_and_reuse();
  uint64_t used = 1;
  hipMemPool_t pool;
  HIP_CHECK(hipDeviceGetMemPool(&pool, 0));
  HIP_CHECK(hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &used));
  report("the default pool has nothing in use", used == 0, "blocks still in use");
  use_after_free(false);
  if (soft_checker) {
    use_after_free(true);
  } else {
    printf("skipped: a kernel writing after hipFreeAsync (the HSA library's checker)\n");
  }
  // After the reset, the pool still works.
  int* q;
  HIP_CHECK(hipMallocAsync((void**)&q, 64 * sizeof(int), 0));
  touch<<<1, 64>>>(q, 40);
  HIP_CHECK(hipGetLastError());
  int host[64];
  HIP_CHECK(hipMemcpyAsync(host, q, sizeof host, hipMemcpyDeviceToHost, 0));
  HIP_CHECK(hipFreeAsync(q, 0));
  HIP_CHECK(hipStreamSynchronize(0));
  bool ok = true;
  for (int i = 0; i < 64; i++) ok = ok && host[i] == 40 + i;
  report("the pool after a device reset", ok, "a result differs from the host's");
  return finish();
}
