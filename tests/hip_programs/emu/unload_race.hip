// A kernel of one module keeps storing into another module's global while the host unloads
// that other module: a kernel is untrusted code in the host's process, so the unload must
// neither crash the host nor let a store reach memory given back to the host allocator. The
// stores land before the unload or fault (hipErrorIllegalAddress); hipModuleUnload itself
// succeeds. Both modules are this program's own device code object (build.sh writes it next
// to the executable as <executable>.co, or <executable>.<processor>.co), loaded twice: each load has its own globals. The
// global is large (4 MiB), so the host allocator unmaps it when it is released and a store
// after the release would crash the host rather than corrupt it silently.
#include "check.h"

#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

static const int WORDS = 1 << 20;

__device__ int g_target[WORDS];

// Almost nothing but 16-byte stores, whose lanes spread over the whole global (many pages).
extern "C" __global__ void spin_store(int* p, int n, int iters) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int4* q = (int4*)p;
  int mask = n / 4 - 1;  // n is a power of two
  for (int i = 0; i < iters; i++) {
    int base = t * 4099 + i * 977;
    int4 v = make_int4(i, i, i, i);
#pragma unroll
    for (int k = 0; k < 16; k++) q[(base + k * 16411) & mask] = v;
  }
}

static std::vector<char> read_file(const char* path) {
  std::vector<char> bytes;
  FILE* f = fopen(path, "rb");
  if (!f) return bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  fclose(f);
  return bytes;
}

int main() {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 4);
  if (len <= 0) {
    report("find the executable", false, "readlink /proc/self/exe failed");
    return finish();
  }
  exe[len] = 0;
  char path[4200];
  code_object_path(exe, path, sizeof path);
  std::vector<char> image = read_file(path);
  if (image.empty()) {
    report("read the code object", false, path);
    return finish();
  }
#ifdef __OPTIMIZE__
  const int ROUNDS = 40, ITERS = 500;
#else
  // Unoptimised device code runs ~30 times slower on the emulator: fewer, shorter rounds.
  const int ROUNDS = 6, ITERS = 20;
#endif
  int unload_failed = 0, unexpected = 0, faulted = 0, landed = 0;
  char detail[200] = "";
  for (int round = 0; round < ROUNDS; round++) {
    hipModule_t a, b;
    HIP_CHECK(hipModuleLoadData(&a, image.data()));
    HIP_CHECK(hipModuleLoadData(&b, image.data()));
    hipFunction_t f;
    HIP_CHECK(hipModuleGetFunction(&f, a, "spin_store"));
    hipDeviceptr_t target;
    size_t bytes = 0;
    HIP_CHECK(hipModuleGetGlobal(&target, &bytes, b, "g_target"));
    hipStream_t s;
    HIP_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    std::atomic<bool> stop{false};
    std::atomic<int> launches{0};
    hipError_t launcher_result = hipSuccess;
    hipEvent_t done[2];
    for (auto& e : done) HIP_CHECK(hipEventCreateWithFlags(&e, hipEventDisableTiming));
    // Launches A's kernel on B's global, at most two in flight, until told to stop or refused
    // (after a fault).
    std::thread launcher([&] {
      int n = (int)(bytes / sizeof(int));
      int iters = ITERS;
      void* args[] = {&target, &n, &iters};
      for (int i = 0; !stop.load(); i++) {
        hipError_t e = i >= 2 ? hipEventSynchronize(done[i % 2]) : hipSuccess;
        if (e == hipSuccess) e = hipModuleLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, s, args, nullptr);
        if (e == hipSuccess) e = hipEventRecord(done[i % 2], s);
        if (e != hipSuccess) {
          launcher_result = e;
          break;
        }
        launches++;
      }
      hipError_t synced = hipStreamSynchronize(s);
      if (launcher_result == hipSuccess) launcher_result = synced;
    });
    while (launches.load() < 1 + round % 3) std::this_thread::yield();
    hipError_t unloaded = hipModuleUnload(b);
    stop = true;
    launcher.join();
    if (unloaded != hipSuccess) {
      unload_failed++;
      snprintf(detail, sizeof detail, "round %d: hipModuleUnload -> %s", round,
               hipGetErrorName(unloaded));
    }
    if (launcher_result == hipErrorIllegalAddress) {
      faulted++;
    } else if (launcher_result == hipSuccess) {
      landed++;
    } else {
      unexpected++;
      snprintf(detail, sizeof detail, "round %d: the launcher saw %s", round,
               hipGetErrorName(launcher_result));
    }
    for (auto e : done) (void)hipEventDestroy(e);
    (void)hipStreamDestroy(s);
    HIP_CHECK(hipDeviceReset());
    (void)hipGetLastError();
    HIP_CHECK(hipModuleUnload(a));
  }
  char what[300];
  snprintf(what, sizeof what,
           "%d rounds: %d faulted after the unload, %d landed before it, %d unexpected results, "
           "%d failed unloads (%s)",
           ROUNDS, faulted, landed, unexpected, unload_failed, detail);
  report("unloading a module whose global a running kernel stores to", unexpected == 0 &&
         unload_failed == 0, what);
  printf("%s\n", what);
  return finish();
}
