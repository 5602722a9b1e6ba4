// Coherent memory between the host and a running kernel, and clockRate as the rate clock64()
// counts at:
// - for pinned memory (default and hipHostMallocCoherent), managed memory and fine-grained
//   device memory (hipExtMallocWithFlags), a kernel raises a flag the host is polling, then
//   polls a flag the host raises while the kernel runs, and answers; each side sees the
//   other's store while both run (no synchronisation in between);
// - a kernel that spins for one second of clock64() cycles, as clockRate gives them, takes
//   about one second of the host's time.
#include "check.h"
#include <chrono>
#include <thread>

// f[0]: the kernel started; f[1]: the host answered; f[2]: the kernel saw the answer (1) or
// gave up (-1). `cycles` bounds the kernel's wait.
__global__ void handshake(int* f, long long cycles) {
  long long start = clock64();
  __hip_atomic_store(&f[0], 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
  while (clock64() - start < cycles) {
    if (__hip_atomic_load(&f[1], __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM) == 1) {
      __hip_atomic_store(&f[2], 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
      return;
    }
  }
  __hip_atomic_store(&f[2], -1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}

__global__ void spin(long long cycles, long long* spent) {
  long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  *spent = now - start;
}

// Waits up to 20 s for `*p` to become nonzero; its value.
static int wait_for(volatile int* p) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (*p == 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  return *p;
}

static void handshake_through(const char* what, int* host, int* device, long long cycles) {
  volatile int* f = host;
  f[0] = f[1] = f[2] = 0;
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  handshake<<<1, 1, 0, s>>>(device, cycles);
  HIP_CHECK(hipGetLastError());
  bool started = wait_for(&f[0]) == 1;
  f[1] = 1;
  int answer = wait_for(&f[2]);
  HIP_CHECK(hipStreamSynchronize(s));
  HIP_CHECK(hipStreamDestroy(s));
  char name[160];
  snprintf(name, sizeof name, "%s: the host sees the kernel's flag and the kernel the host's", what);
  char detail[64];
  snprintf(detail, sizeof detail, "started %d, answer %d", started, answer);
  report(name, started && answer == 1 && f[2] == 1, detail);
}

int main() {
  int clock_khz = 0;
  HIP_CHECK(hipDeviceGetAttribute(&clock_khz, hipDeviceAttributeClockRate, 0));
  // Twenty seconds of the device's clock, computed in 64 bits.
  const long long cycles = 20LL * clock_khz * 1000;

  int* p = nullptr;
  HIP_CHECK(hipHostMalloc(&p, 3 * sizeof(int)));
  int* d = nullptr;
  HIP_CHECK(hipHostGetDevicePointer((void**)&d, p, 0));
  handshake_through("hipHostMalloc (default)", p, d, cycles);
  HIP_CHECK(hipHostFree(p));

  HIP_CHECK(hipHostMalloc(&p, 3 * sizeof(int), hipHostMallocCoherent));
  HIP_CHECK(hipHostGetDevicePointer((void**)&d, p, 0));
  handshake_through("hipHostMalloc (coherent)", p, d, cycles);
  HIP_CHECK(hipHostFree(p));

  HIP_CHECK(hipMallocManaged(&p, 3 * sizeof(int)));
  handshake_through("hipMallocManaged", p, p, cycles);
  HIP_CHECK(hipFree(p));

  HIP_CHECK(hipExtMallocWithFlags((void**)&p, 3 * sizeof(int), hipDeviceMallocFinegrained));
  handshake_through("hipExtMallocWithFlags (fine-grained)", p, p, cycles);
  HIP_CHECK(hipFree(p));

  // One second of cycles is about one second.
  long long* spent = nullptr;
  HIP_CHECK(hipMallocManaged(&spent, sizeof(long long)));
  auto t0 = std::chrono::steady_clock::now();
  spin<<<1, 1>>>(1LL * clock_khz * 1000, spent);
  HIP_CHECK(hipDeviceSynchronize());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char detail[96];
  snprintf(detail, sizeof detail, "clockRate %d kHz: %lld cycles took %.3f s", clock_khz, *spent,
           seconds);
  report("clock64() counts at clockRate", seconds >= 0.9 && seconds < 2.0, detail);
  HIP_CHECK(hipFree(spent));
  return finish();
}
