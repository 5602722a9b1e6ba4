// Soak: 8 threads for a bounded time, each doing a random mix of correct kernels (checked
// against the host), faulting kernels, module loads, launches and unloads, fat-binary
// registrations and unregistrations, and device resets. Pass: no crash, every status one the
// operation may return (a correct kernel succeeds and computes the right values unless another
// thread's fault is sticky; a faulting kernel is always reported), and the resident set does not
// grow without bound. Resets take a lock the other operations share, so a reset never frees
// memory an operation of another thread is using (that would be the program's bug, as in HIP).
#include "check.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

extern "C" {
void** __hipRegisterFatBinary(const void* data);
void __hipUnregisterFatBinary(void** modules);
void __hipRegisterFunction(void** modules, const void* host_function, char* device_function,
                           const char* device_name, unsigned int thread_limit, void* tid,
                           void* bid, dim3* block_dim, dim3* grid_dim, int* wave_size);
}

static const int THREADS = 8;
static const int N = 1024;
static const double SECONDS = 6.0;

extern "C" __global__ void soak_axpy(int* y, const int* x, int a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// A store at a fixed low address no allocation can hold (an offset from a live buffer could
// land in another thread's allocation and corrupt it instead of faulting).
extern "C" __global__ void soak_fault(int* p) { *(volatile int*)(8 + (uintptr_t)p * 0) = 1; }

static long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      long v;
      status >> v;
      return v;
    }
  }
  return -1;
}

// A clang offload bundle holding `code` for `processor` (and the empty host entry), as clang
// embeds one, for __hipRegisterFatBinary.
static std::vector<char> bundle_of(const std::vector<char>& code, const std::string& processor) {
  const std::string magic = "__CLANG_OFFLOAD_BUNDLE__";
  const std::string triples[2] = {"host-x86_64-unknown-linux-gnu-",
                                  "hipv4-amdgcn-amd-amdhsa--" + processor};
  uint64_t header = magic.size() + 8;
  for (auto& t : triples) header += 24 + t.size();
  uint64_t code_offset = (header + 4095) / 4096 * 4096;
  std::vector<char> out(code_offset + code.size(), 0);
  size_t at = 0;
  auto put = [&](const void* p, size_t n) {
    memcpy(out.data() + at, p, n);
    at += n;
  };
  put(magic.data(), magic.size());
  uint64_t count = 2;
  put(&count, 8);
  uint64_t offsets[2] = {header, code_offset}, sizes[2] = {0, code.size()};
  for (int k = 0; k < 2; k++) {
    uint64_t len = triples[k].size();
    put(&offsets[k], 8);
    put(&sizes[k], 8);
    put(&len, 8);
    put(triples[k].data(), len);
  }
  memcpy(out.data() + code_offset, code.data(), code.size());
  return out;
}

struct Wrapper {
  uint32_t magic, version;
  const void* binary;
  const void* unused;
};

int main(int, char** argv) {
  // The device code of this program alone, built next to it by build.sh.
  char co_path[4096], processor[64];
  code_object_path(argv[0], co_path, sizeof co_path);
  device_processor(processor, sizeof processor);
  std::ifstream co_file(co_path, std::ios::binary);
  std::vector<char> code((std::istreambuf_iterator<char>(co_file)), {});
  if (code.empty()) {
    report("the program's code object is next to it", false, co_path);
    return finish();
  }
  std::vector<char> bundle = bundle_of(code, processor);

  std::shared_mutex reset_lock;
  std::atomic<long> ops{0}, correct{0}, sticky{0}, faults{0}, modules{0}, registrations{0},
      resets{0}, wrong{0};
  std::mutex detail_lock;
  std::string first_wrong;
  auto bad = [&](const std::string& what) {
    wrong++;
    std::lock_guard<std::mutex> g(detail_lock);
    if (first_wrong.empty()) first_wrong = what;
  };
  // A status an operation may see because another thread's fault is sticky.
  auto is_sticky = [](hipError_t e) { return e == hipErrorIllegalAddress; };
  auto name = [](hipError_t e) { return std::string(hipGetErrorName(e)); };

  long rss_warm = -1;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < THREADS; t++) {
    workers.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      std::vector<int> hx(N), hy(N), got(N);
      char stub = 0;  // this thread's host function address for its registrations
      while (elapsed() < SECONDS) {
        int pick = rng() % 100;
        ops++;
        // A thread that saw another's fault recovers the device, as a program would.
        bool recover = sticky.load() > resets.load() * 4;
        if (pick < 4 || (recover && pick < 30)) {
          std::unique_lock<std::shared_mutex> g(reset_lock);
          if (hipDeviceReset() == hipSuccess) resets++;
          (void)hipGetLastError();
          continue;
        }
        std::shared_lock<std::shared_mutex> g(reset_lock);
        if (pick < 50) {
          // A correct kernel on the thread's own stream, checked against the host.
          int a = int(rng() % 7) + 1;
          for (int i = 0; i < N; i++) hx[i] = int(rng() % 1000), hy[i] = int(rng() % 1000);
          hipStream_t s;
          hipError_t e = hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
          if (e != hipSuccess) {
            if (is_sticky(e)) sticky++; else bad("stream create: " + name(e));
            continue;
          }
          int *x = nullptr, *y = nullptr;
          e = hipMalloc(&x, N * 4);
          if (e == hipSuccess) e = hipMalloc(&y, N * 4);
          if (e == hipSuccess) e = hipMemcpyAsync(x, hx.data(), N * 4, hipMemcpyHostToDevice, s);
          if (e == hipSuccess) e = hipMemcpyAsync(y, hy.data(), N * 4, hipMemcpyHostToDevice, s);
          if (e == hipSuccess) {
            soak_axpy<<<N / 256, 256, 0, s>>>(y, x, a, N);
            e = hipGetLastError();
          }
          if (e == hipSuccess) e = hipMemcpyAsync(got.data(), y, N * 4, hipMemcpyDeviceToHost, s);
          if (e == hipSuccess) e = hipStreamSynchronize(s);
          if (e == hipSuccess) {
            bool ok = true;
            for (int i = 0; i < N && ok; i++) ok = got[i] == a * hx[i] + hy[i];
            if (ok) correct++; else bad("a correct kernel computed wrong values");
          } else if (is_sticky(e)) {
            sticky++;
          } else {
            bad("correct kernel: " + name(e));
          }
          (void)hipGetLastError();
          if (x) (void)hipFree(x);
          if (y) (void)hipFree(y);
          (void)hipStreamDestroy(s);
        } else if (pick < 62) {
          // A faulting kernel: reported by its stream, or refused because a fault is sticky.
          hipStream_t s;
          if (hipStreamCreateWithFlags(&s, hipStreamNonBlocking) != hipSuccess) {
            sticky++;
            continue;
          }
          int* p = nullptr;
          hipError_t e = hipMalloc(&p, 256);
          if (e == hipSuccess) {
            soak_fault<<<1, 1, 0, s>>>(p);
            e = hipGetLastError();
            if (e == hipSuccess) e = hipStreamSynchronize(s);
          }
          if (e == hipErrorIllegalAddress) faults++;
          else bad("faulting kernel: " + name(e));
          (void)hipGetLastError();
          if (p) (void)hipFree(p);
          (void)hipStreamDestroy(s);
        } else if (pick < 85) {
          // Module load, launch by name, unload.
          hipModule_t m;
          hipError_t e = hipModuleLoadData(&m, code.data());
          if (e != hipSuccess) {
            bad("module load: " + name(e));
            continue;
          }
          hipFunction_t f;
          e = hipModuleGetFunction(&f, m, "soak_axpy");
          int* y = nullptr;
          int* x = nullptr;
          if (e == hipSuccess) e = hipMalloc(&y, N * 4);
          if (e == hipSuccess) e = hipMalloc(&x, N * 4);
          if (e == hipSuccess) e = hipMemset(y, 0, N * 4);
          if (e == hipSuccess) e = hipMemset(x, 0, N * 4);
          if (e == hipSuccess) {
            int a = 3, n = N;
            void* args[] = {&y, &x, &a, &n};
            e = hipModuleLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
          }
          if (e == hipSuccess) e = hipMemcpy(got.data(), y, N * 4, hipMemcpyDeviceToHost);
          if (e == hipSuccess) {
            bool ok = true;
            for (int i = 0; i < N && ok; i++) ok = got[i] == 0;
            if (ok) modules++; else bad("a module kernel computed wrong values");
          } else if (is_sticky(e)) {
            sticky++;
          } else {
            bad("module kernel: " + name(e));
          }
          (void)hipGetLastError();
          if (x) (void)hipFree(x);
          if (y) (void)hipFree(y);
          e = hipModuleUnload(m);
          if (e != hipSuccess && !is_sticky(e)) bad("module unload: " + name(e));
        } else {
          // Register the bundle, launch through the registered host function, unregister.
          Wrapper w = {0x48495046, 1, bundle.data(), nullptr};
          void** h = __hipRegisterFatBinary(&w);
          if (!h) {
            bad("registration returned NULL");
            continue;
          }
          char kname[] = "soak_axpy";
          __hipRegisterFunction(h, &stub, kname, kname, ~0u, nullptr, nullptr, nullptr, nullptr,
                                nullptr);
          int *x = nullptr, *y = nullptr;
          hipError_t e = hipMalloc(&y, N * 4);
          if (e == hipSuccess) e = hipMalloc(&x, N * 4);
          if (e == hipSuccess) e = hipMemset(x, 0, N * 4);
          if (e == hipSuccess) e = hipMemset(y, 0, N * 4);
          if (e == hipSuccess) {
            int a = 2, n = N;
            void* args[] = {&y, &x, &a, &n};
            e = hipLaunchKernel((const void*)&stub, dim3(N / 256), dim3(256), args, 0, nullptr);
          }
          if (e == hipSuccess) e = hipDeviceSynchronize();
          if (e == hipSuccess) registrations++;
          else if (is_sticky(e)) sticky++;
          else bad("registered kernel: " + name(e));
          (void)hipGetLastError();
          if (x) (void)hipFree(x);
          if (y) (void)hipFree(y);
          __hipUnregisterFatBinary(h);
        }
        if (t == 0 && rss_warm < 0 && elapsed() > SECONDS / 4) rss_warm = rss_kib();
      }
    });
  }
  for (auto& w : workers) w.join();
  (void)hipDeviceReset();
  long rss_end = rss_kib();
  char what[600];
  snprintf(what, sizeof what,
           "%ld operations in %.1f s: %ld correct kernels, %ld faults reported, %ld module "
           "round trips, %ld registrations, %ld resets, %ld sticky refusals; %ld wrong (first: "
           "%s); RSS %ld KiB after warm-up, %ld KiB at the end",
           ops.load(), elapsed(), correct.load(), faults.load(), modules.load(),
           registrations.load(), resets.load(), sticky.load(), wrong.load(), first_wrong.c_str(),
           rss_warm, rss_end);
  printf("%s\n", what);
  report("soak: every status as expected", wrong.load() == 0, what);
  report("soak: every kind of operation happened",
         correct.load() > 0 && faults.load() > 0 && modules.load() > 0 &&
             registrations.load() > 0 && resets.load() > 0,
         what);
  // Bounded: freed memory is quarantined (64 MiB) and caches are capped; growth past warm-up
  // beyond 256 MiB means something is kept per operation.
  report("soak: the resident set stays bounded", rss_warm > 0 && rss_end - rss_warm < 256 * 1024,
         what);
  return finish();
}
