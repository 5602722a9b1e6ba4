// The HIP runtime API as programs use it, each behaviour checked against the host: streams and
// events (ordering across streams, elapsed time, queries, callbacks), device variables through
// hipMemcpyToSymbol/FromSymbol, occupancy, contexts, pinned, registered and managed memory,
// 2D copies and fills, pointer attributes, device properties, and HIP's error codes for bad
// input (ending with a kernel fault that is sticky until hipDeviceReset, which also frees the
// device's memory).
#include "check.h"
#include <unistd.h>
#include <vector>

__constant__ int c_table[16];
__device__ float d_bias;
__managed__ int m_counter = 7;

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

__global__ void slow_fill(int* p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int acc = 0;
    for (int k = 0; k < 200; k++) acc += k ^ i;
    p[i] = v + (acc & 0);
  }
}

__global__ void copy_plus(const int* src, int* dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i] + 1;
}

__global__ void use_symbols(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = c_table[i % 16] * 2.0f + d_bias;
  if (i == 0) m_counter += 1;
}

__global__ void out_of_bounds(int* p, int n) { p[n + 1000000] = 1; }

static int g_callback_status = -1;
static int g_callback_count = 0;
static void on_done(hipStream_t, hipError_t status, void* data) {
  g_callback_status = status;
  g_callback_count += *(int*)data;
}

// What the compiler's __HIP_ARCH_HAS_*__ macros say for the device code, in hipDeviceArch_t's
// bit order (the properties' `arch` flags must agree with what device code is compiled to see).
__global__ void arch_macros(unsigned* bits) {
  const unsigned v[17] = {
      __HIP_ARCH_HAS_GLOBAL_INT32_ATOMICS__,    __HIP_ARCH_HAS_GLOBAL_FLOAT_ATOMIC_EXCH__,
      __HIP_ARCH_HAS_SHARED_INT32_ATOMICS__,    __HIP_ARCH_HAS_SHARED_FLOAT_ATOMIC_EXCH__,
      __HIP_ARCH_HAS_FLOAT_ATOMIC_ADD__,        __HIP_ARCH_HAS_GLOBAL_INT64_ATOMICS__,
      __HIP_ARCH_HAS_SHARED_INT64_ATOMICS__,    __HIP_ARCH_HAS_DOUBLES__,
      __HIP_ARCH_HAS_WARP_VOTE__,               __HIP_ARCH_HAS_WARP_BALLOT__,
      __HIP_ARCH_HAS_WARP_SHUFFLE__,            __HIP_ARCH_HAS_WARP_FUNNEL_SHIFT__,
      __HIP_ARCH_HAS_THREAD_FENCE_SYSTEM__,     __HIP_ARCH_HAS_SYNC_THREAD_EXT__,
      __HIP_ARCH_HAS_SURFACE_FUNCS__,           __HIP_ARCH_HAS_3DGRID__,
      __HIP_ARCH_HAS_DYNAMIC_PARALLEL__};
  unsigned b = 0;
  for (int i = 0; i < 17; i++) b |= (v[i] ? 1u : 0u) << i;
  *bits = b;
}

// Host work that takes `*(int*)ms` milliseconds.
static void pause(void* ms) { usleep(1000 * *(int*)ms); }

int main() {
  const int N = 1 << 14;
  std::vector<int> h(N);
  for (int i = 0; i < N; i++) h[i] = i * 3 - 100;

  // hipStreamSynchronize(0) waits for the blocking streams' work too (the legacy null
  // stream), a created stream's and the per-thread stream's: a slow kernel and a copy into
  // pinned memory on each, read right after the null stream's synchronisation.
  {
    int* d;
    HIP_CHECK(hipMalloc(&d, 2 * N * 4));
    int* pinned;
    HIP_CHECK(hipHostMalloc(&pinned, 2 * N * 4));
    for (int i = 0; i < 2 * N; i++) pinned[i] = -1;
    hipStream_t blocking;
    HIP_CHECK(hipStreamCreate(&blocking));
    slow_fill<<<N / 256, 256, 0, blocking>>>(d, N, 17);
    HIP_CHECK(hipMemcpyAsync(pinned, d, N * 4, hipMemcpyDeviceToHost, blocking));
    slow_fill<<<N / 256, 256, 0, hipStreamPerThread>>>(d + N, N, 23);
    HIP_CHECK(hipMemcpyAsync(pinned + N, d + N, N * 4, hipMemcpyDeviceToHost, hipStreamPerThread));
    HIP_CHECK(hipStreamSynchronize(0));
    bool ok = true;
    for (int i = 0; i < N; i++) ok &= pinned[i] == 17 && pinned[N + i] == 23;
    report("hipStreamSynchronize(0) waits for blocking and per-thread streams", ok);
    // And a blocking stream's synchronisation waits for the null stream's work.
    for (int i = 0; i < N; i++) pinned[i] = -1;
    slow_fill<<<N / 256, 256>>>(d, N, 29);
    int pause_ms = 300;  // host work on the null stream, so that its copy is surely late
    HIP_CHECK(hipLaunchHostFunc(0, pause, &pause_ms));
    HIP_CHECK(hipMemcpyAsync(pinned, d, N * 4, hipMemcpyDeviceToHost, 0));
    HIP_CHECK(hipStreamSynchronize(blocking));
    ok = true;
    for (int i = 0; i < N; i++) ok &= pinned[i] == 29;
    report("a blocking stream's synchronisation waits for the null stream", ok);
    HIP_CHECK(hipStreamDestroy(blocking));
    HIP_CHECK(hipHostFree(pinned));
    HIP_CHECK(hipFree(d));
  }

  // Streams and events: B on s2 waits for A on s1 through an event.
  {
    int *a, *b;
    HIP_CHECK(hipMalloc(&a, N * 4));
    HIP_CHECK(hipMalloc(&b, N * 4));
    hipStream_t s1, s2;
    HIP_CHECK(hipStreamCreate(&s1));
    HIP_CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    hipEvent_t start, done_a, stop;
    HIP_CHECK(hipEventCreate(&start));
    HIP_CHECK(hipEventCreate(&done_a));
    HIP_CHECK(hipEventCreate(&stop));
    HIP_CHECK(hipEventRecord(start, s1));
    slow_fill<<<N / 256, 256, 0, s1>>>(a, N, 41);
    HIP_CHECK(hipEventRecord(done_a, s1));
    HIP_CHECK(hipStreamWaitEvent(s2, done_a, 0));
    copy_plus<<<N / 256, 256, 0, s2>>>(a, b, N);
    int token = 5;
    HIP_CHECK(hipStreamAddCallback(s2, on_done, &token, 0));
    HIP_CHECK(hipEventRecord(stop, s2));
    HIP_CHECK(hipEventSynchronize(stop));
    HIP_CHECK(hipStreamSynchronize(s2));
    std::vector<int> got(N);
    HIP_CHECK(hipMemcpy(got.data(), b, N * 4, hipMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < N; i++) ok &= got[i] == 42;
    report("stream wait on an event orders work across streams", ok);
    float ms = -1;
    HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
    report("elapsed time between events", ms >= 0.0f);
    report("stream and event queries after completion",
           hipStreamQuery(s1) == hipSuccess && hipEventQuery(stop) == hipSuccess);
    report("stream callback ran once with hipSuccess", g_callback_status == hipSuccess && g_callback_count == 5);
    hipEvent_t untimed;
    HIP_CHECK(hipEventCreateWithFlags(&untimed, hipEventDisableTiming));
    HIP_CHECK(hipEventRecord(untimed, s1));
    HIP_CHECK(hipEventSynchronize(untimed));
    report("elapsed time of an untimed event is an error", hipEventElapsedTime(&ms, start, untimed) != hipSuccess);
    // The null stream waits for blocking streams: a copy on it sees s1's kernel.
    add_one<<<N / 256, 256, 0, s1>>>(a, N);
    HIP_CHECK(hipMemcpy(got.data(), a, N * 4, hipMemcpyDeviceToHost));
    ok = true;
    for (int i = 0; i < N; i++) ok &= got[i] == 42;
    report("the null stream waits for blocking streams", ok);
    HIP_CHECK(hipEventDestroy(start));
    HIP_CHECK(hipEventDestroy(done_a));
    HIP_CHECK(hipEventDestroy(stop));
    HIP_CHECK(hipEventDestroy(untimed));
    HIP_CHECK(hipStreamDestroy(s1));
    HIP_CHECK(hipStreamDestroy(s2));
    report("a destroyed stream is an invalid handle", hipStreamQuery(s1) == hipErrorInvalidHandle);
    HIP_CHECK(hipFree(a));
    HIP_CHECK(hipFree(b));
  }

  // Device variables through their host shadows.
  {
    int table[16];
    for (int i = 0; i < 16; i++) table[i] = i * i - 3;
    float bias = 0.25f;
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_table), table, sizeof(table)));
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(d_bias), &bias, sizeof(bias)));
    float* out;
    HIP_CHECK(hipMalloc(&out, 256 * 4));
    use_symbols<<<1, 256>>>(out, 256);
    HIP_CHECK(hipDeviceSynchronize());
    std::vector<float> got(256);
    HIP_CHECK(hipMemcpy(got.data(), out, 256 * 4, hipMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < 256; i++) ok &= got[i] == table[i % 16] * 2.0f + bias;
    report("hipMemcpyToSymbol feeds __constant__ and __device__ variables", ok);
    int back[16];
    HIP_CHECK(hipMemcpyFromSymbol(back, HIP_SYMBOL(c_table), sizeof(back)));
    report("hipMemcpyFromSymbol", memcmp(back, table, sizeof(table)) == 0);
    report("__managed__ variable updated by a kernel", m_counter == 8);
    size_t size = 0;
    HIP_CHECK(hipGetSymbolSize(&size, HIP_SYMBOL(c_table)));
    report("hipGetSymbolSize", size == sizeof(table));
    report("a copy past a variable's end is refused",
           hipMemcpyToSymbol(HIP_SYMBOL(c_table), table, sizeof(table), 8) == hipErrorInvalidValue);
    HIP_CHECK(hipFree(out));
  }

  // Occupancy and a launch at the suggested size.
  {
    int grid = 0, block = 0, per_cu = 0;
    HIP_CHECK(hipOccupancyMaxPotentialBlockSize(&grid, &block, add_one, 0, 0));
    HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, add_one, block, 0));
    hipDeviceProp_t p;
    HIP_CHECK(hipGetDeviceProperties(&p, 0));
    report("occupancy suggests a whole number of waves and fills every compute unit",
           block > 0 && block % p.warpSize == 0 && block <= 1024 && per_cu > 0 && grid == per_cu * p.multiProcessorCount);
    int* a;
    HIP_CHECK(hipMalloc(&a, N * 4));
    HIP_CHECK(hipMemcpy(a, h.data(), N * 4, hipMemcpyHostToDevice));
    add_one<<<(N + block - 1) / block, block>>>(a, N);
    std::vector<int> got(N);
    HIP_CHECK(hipMemcpy(got.data(), a, N * 4, hipMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < N; i++) ok &= got[i] == h[i] + 1;
    report("launch at the suggested block size", ok);
    HIP_CHECK(hipFree(a));
  }

  // Device properties and attributes agree.
  {
    hipDeviceProp_t p;
    HIP_CHECK(hipGetDeviceProperties(&p, 0));
    int warp = 0, cus = 0, coop = 0, major = 0;
    HIP_CHECK(hipDeviceGetAttribute(&warp, hipDeviceAttributeWarpSize, 0));
    HIP_CHECK(hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, 0));
    HIP_CHECK(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, 0));
    HIP_CHECK(hipDeviceGetAttribute(&major, hipDeviceAttributeComputeCapabilityMajor, 0));
    char proc[64];
    expected_processor(proc, sizeof proc);
    int want_major = strncmp(proc, "gfx9", 4) == 0 ? 9 : 10;
    report("properties", p.warpSize == expected_warp_size() && strncmp(p.gcnArchName, proc, strlen(proc)) == 0 &&
                             p.multiProcessorCount > 0 && p.totalGlobalMem > 0 && p.clockRate > 0 &&
                             p.cooperativeLaunch == 1 && p.major == want_major);
    report("attributes match properties", warp == p.warpSize && cus == p.multiProcessorCount && coop == 1 && major == p.major);
    unsigned* bits;
    HIP_CHECK(hipMallocManaged(&bits, sizeof(unsigned)));
    *bits = ~0u;
    arch_macros<<<1, 1>>>(bits);
    HIP_CHECK(hipDeviceSynchronize());
    unsigned flags = 0;
    memcpy(&flags, &p.arch, sizeof(flags));
    char detail[96];
    snprintf(detail, sizeof detail, "properties 0x%05x, device macros 0x%05x", flags & 0x1ffff, *bits);
    report("arch flags agree with the compiler's __HIP_ARCH_HAS_* macros",
           (flags & 0x1ffff) == *bits, detail);
    HIP_CHECK(hipFree(bits));
    int version = 0;
    HIP_CHECK(hipRuntimeGetVersion(&version));
    report("runtime version is HIP 5.2's", version / 100000 == 502);
    hipCtx_t ctx = nullptr;
    HIP_CHECK(hipCtxGetCurrent(&ctx));
    int dev = -1;
    HIP_CHECK(hipCtxGetDevice(&dev));
    report("contexts", ctx != nullptr && dev == 0 && hipCtxSetCurrent(ctx) == hipSuccess);
    int can = -1;
    HIP_CHECK(hipDeviceCanAccessPeer(&can, 0, 0));
    report("a device is not its own peer", can == 0);
    size_t free_b = 0, total_b = 0;
    HIP_CHECK(hipMemGetInfo(&free_b, &total_b));
    report("hipMemGetInfo", total_b > 0 && free_b <= total_b);
  }

  // Pinned, registered and managed memory used by kernels directly.
  {
    int *pinned, *dview;
    HIP_CHECK(hipHostMalloc(&pinned, N * 4, 0));
    for (int i = 0; i < N; i++) pinned[i] = h[i];
    HIP_CHECK(hipHostGetDevicePointer((void**)&dview, pinned, 0));
    add_one<<<N / 256, 256>>>(dview, N);
    HIP_CHECK(hipDeviceSynchronize());
    bool ok = true;
    for (int i = 0; i < N; i++) ok &= pinned[i] == h[i] + 1;
    report("a kernel writes pinned host memory", ok);
    hipPointerAttribute_t attr;
    HIP_CHECK(hipPointerGetAttributes(&attr, pinned + 5));
    report("pointer attributes of pinned memory", attr.memoryType == hipMemoryTypeHost && attr.hostPointer == pinned + 5);
    HIP_CHECK(hipHostFree(pinned));

    std::vector<int> user(h);
    HIP_CHECK(hipHostRegister(user.data(), N * 4, hipHostRegisterDefault));
    report("registering twice is an error", hipHostRegister(user.data(), N * 4, 0) == hipErrorHostMemoryAlreadyRegistered);
    // Kernels take the device's address for it (ROCr maps locked memory elsewhere on a
    // discrete GPU; the software agent uses the host's).
    int* uview = nullptr;
    HIP_CHECK(hipHostGetDevicePointer((void**)&uview, user.data() + 3, 0));
    uview -= 3;
    add_one<<<N / 256, 256>>>(uview, N);
    HIP_CHECK(hipDeviceSynchronize());
    ok = true;
    for (int i = 0; i < N; i++) ok &= user[i] == h[i] + 1;
    report("a kernel writes registered host memory", ok);
    HIP_CHECK(hipHostUnregister(user.data()));
    report("unregistering twice is an error", hipHostUnregister(user.data()) == hipErrorHostMemoryNotRegistered);

    int* managed;
    HIP_CHECK(hipMallocManaged(&managed, N * 4, hipMemAttachGlobal));
    for (int i = 0; i < N; i++) managed[i] = h[i];
    add_one<<<N / 256, 256>>>(managed, N);
    HIP_CHECK(hipDeviceSynchronize());
    ok = true;
    for (int i = 0; i < N; i++) ok &= managed[i] == h[i] + 1;
    report("managed memory from host and kernel", ok);
    HIP_CHECK(hipPointerGetAttributes(&attr, managed));
    report("pointer attributes of managed memory", attr.isManaged == 1);
    HIP_CHECK(hipFree(managed));
  }

  // 2D copies and fills, typed fills.
  {
    const int W = 100, H = 37;
    char* d;
    size_t pitch = 0;
    HIP_CHECK(hipMallocPitch((void**)&d, &pitch, W, H));
    std::vector<char> src(W * H), back(W * H);
    for (int i = 0; i < W * H; i++) src[i] = (char)(i * 7);
    HIP_CHECK(hipMemcpy2D(d, pitch, src.data(), W, W, H, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy2D(back.data(), W, d, pitch, W, H, hipMemcpyDeviceToHost));
    report("hipMemcpy2D round trip", pitch >= W && back == src);
    HIP_CHECK(hipMemset2D(d, pitch, 0x5a, W / 2, H));
    HIP_CHECK(hipMemcpy2D(back.data(), W, d, pitch, W, H, hipMemcpyDeviceToHost));
    bool ok = true;
    for (int r = 0; r < H; r++)
      for (int c = 0; c < W; c++) ok &= back[r * W + c] == (c < W / 2 ? 0x5a : src[r * W + c]);
    report("hipMemset2D", ok);
    HIP_CHECK(hipFree(d));
    unsigned* w;
    HIP_CHECK(hipMalloc(&w, 64 * 4));
    HIP_CHECK(hipMemsetD32((hipDeviceptr_t)w, 0xdeadbeef, 64));
    HIP_CHECK(hipMemsetD16((hipDeviceptr_t)w, 0x1234, 8));
    HIP_CHECK(hipMemsetD8((hipDeviceptr_t)w, 0x7f, 2));
    unsigned words[64];
    HIP_CHECK(hipMemcpy(words, w, sizeof(words), hipMemcpyDeviceToHost));
    report("hipMemsetD8/D16/D32", words[0] == 0x12347f7f && words[1] == 0x12341234 && words[4] == 0xdeadbeef && words[63] == 0xdeadbeef);
    HIP_CHECK(hipFree(w));
  }

  // Bad input gets HIP's error codes.
  {
    int* a;
    HIP_CHECK(hipMalloc(&a, 1024));
    add_one<<<0, 64>>>(a, 16);
    report("a zero grid is an invalid configuration", hipGetLastError() == hipErrorInvalidConfiguration);
    add_one<<<1, 2048>>>(a, 16);
    report("an oversized block is an invalid configuration", hipGetLastError() == hipErrorInvalidConfiguration);
    std::vector<char> big(4096);
    report("a copy past an allocation's end", hipMemcpy(a, big.data(), 4096, hipMemcpyHostToDevice) == hipErrorInvalidValue);
    report("freeing an interior pointer", hipFree(a + 1) == hipErrorInvalidValue);
    HIP_CHECK(hipFree(a));
    report("a double free", hipFree(a) == hipErrorInvalidValue);
    report("a copy into freed memory", hipMemcpy(a, big.data(), 16, hipMemcpyHostToDevice) == hipErrorInvalidValue);
    void* huge = nullptr;
    report("an impossible allocation", hipMalloc(&huge, (size_t)1 << 60) == hipErrorOutOfMemory && huge == nullptr);
    report("launching a host function that is not a kernel",
           hipLaunchKernel((const void*)&main, dim3(1), dim3(1), nullptr, 0, nullptr) == hipErrorInvalidDeviceFunction);
    report("NULL outputs", hipMalloc(nullptr, 16) == hipErrorInvalidValue && hipGetDeviceCount(nullptr) == hipErrorInvalidValue);
    report("an invalid device", hipSetDevice(99) == hipErrorInvalidDevice);
    report("an invalid copy kind", hipMemcpy(big.data(), big.data() + 8, 8, (hipMemcpyKind)17) == hipErrorInvalidMemcpyDirection);
    (void)hipGetLastError();
  }

  // A kernel fault is sticky until hipDeviceReset.
  {
    int* a;
    HIP_CHECK(hipMalloc(&a, 256));
    hipEvent_t before, after;
    HIP_CHECK(hipEventCreate(&before));
    HIP_CHECK(hipEventCreate(&after));
    HIP_CHECK(hipEventRecord(before, nullptr));
    out_of_bounds<<<1, 1>>>(a, 64);
    // Recording after the fault may already report it (it is sticky once the kernel ended);
    // either way, waiting on the event must not report success for work that did not happen.
    hipError_t recorded = hipEventRecord(after, nullptr);
    report("hipEventSynchronize after a faulting kernel reports the fault",
           recorded == hipErrorIllegalAddress || hipEventSynchronize(after) == hipErrorIllegalAddress);
    float ms = 0;
    report("so do hipEventQuery and hipEventElapsedTime on an event of that device",
           hipEventQuery(before) == hipErrorIllegalAddress &&
               hipEventElapsedTime(&ms, before, before) == hipErrorIllegalAddress);
    (void)hipEventDestroy(before);
    (void)hipEventDestroy(after);
    hipError_t e = hipDeviceSynchronize();
    report("a faulting kernel is reported by hipDeviceSynchronize", e == hipErrorIllegalAddress);
    report("the fault is sticky", hipDeviceSynchronize() == hipErrorIllegalAddress);
    add_one<<<1, 64>>>(a, 64);
    report("later launches report it", hipGetLastError() == hipErrorIllegalAddress);
    HIP_CHECK(hipDeviceReset());
    // The reset freed the device's memory, as HIP's does: `a` is no allocation any more.
    report("hipDeviceReset frees the device's allocations", hipFree(a) == hipErrorInvalidValue);
    (void)hipGetLastError();
    HIP_CHECK(hipMalloc(&a, 256));
    add_one<<<1, 64>>>(a, 64);
    report("hipDeviceReset clears it", hipGetLastError() == hipSuccess && hipDeviceSynchronize() == hipSuccess);
    HIP_CHECK(hipFree(a));
  }
  return finish();
}
