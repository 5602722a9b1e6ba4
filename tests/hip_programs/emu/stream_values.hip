// Stream memory operations: hipStreamWaitValue32/64 holds a stream until memory meets a
// condition, hipStreamWriteValue32/64 writes memory in stream order. A consumer stream waits
// for a flag a producer stream's kernel sets, or the producer's hipStreamWriteValue, or the
// host; each of HIP's four conditions with masks is checked against the same condition
// computed on the host; bad pointers, flags and alignments are refused.
#include "check.h"

#include <chrono>
#include <thread>
#include <vector>

static const int N = 4096;

// Writes data[i] = f(i, seed) after some work, so a consumer that did not wait reads too early.
__global__ void produce(int* data, int n, int seed) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int acc = seed;
    for (int k = 0; k < 200; k++) acc = acc * 1103515245 + 12345 + i;
    data[i] = acc;
  }
}

// The last work-group to finish raises the flag (a counter in device memory decides which).
__global__ void produce_and_flag(int* data, int n, int seed, unsigned* counter, unsigned* flag) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int acc = seed;
    for (int k = 0; k < 200; k++) acc = acc * 1103515245 + 12345 + i;
    data[i] = acc;
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(counter, 1u) == gridDim.x - 1) {
    __threadfence();
    atomicExch(flag, 1u);
  }
}

__global__ void consume(const int* data, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = data[i] ^ 0x5a5a5a5a;
}

static int host_produce(int i, int seed) {
  int acc = seed;
  for (int k = 0; k < 200; k++) acc = acc * 1103515245 + 12345 + i;
  return acc;
}

static bool consumed_right(const std::vector<int>& out, int seed, char* detail, size_t len) {
  for (int i = 0; i < N; i++) {
    int want = host_produce(i, seed) ^ 0x5a5a5a5a;
    if (out[i] != want) {
      snprintf(detail, len, "out[%d] = %d, expected %d", i, out[i], want);
      return false;
    }
  }
  return true;
}

// With STREAM_VALUES_AS_CLR=1 the program checks what AMD's HIP runtime 5.2.3 (clr) defines
// where it differs from HIP's documentation, which rocload follows (what clr does, on a GPU as
// on the software agent):
// - Nor: clr's wait kernel (the device libraries' __amd_streamOpsWait, 5.2.3 to today) releases
//   once (*ptr | value) & mask != mask; the documentation once ~((*ptr & mask) | value) != 0.
//   They differ whenever the mask leaves bits out: a wait the documentation releases at once,
//   clr holds for ever.
// - hipDeviceAttributeCanUseStreamWaitValue: clr 5.2.3 reports 1 only for gfx900/904/908/90a
//   (rocdevice.cpp, aqlBarrierValue_), 0 on gfx1030, though the calls work.
// - clr checks no stream memory operation's arguments (an unknown condition is queued, a write
//   past the allocation faults): the refusals are not checked.
static bool as_clr() {
  const char* e = getenv("STREAM_VALUES_AS_CLR");
  return e && strcmp(e, "1") == 0;
}

// Whether HIP's condition holds, written out from its documentation.
static bool holds(unsigned flags, uint64_t cur, uint64_t value, uint64_t mask, bool wide) {
  uint64_t m = cur & mask;
  uint64_t width = wide ? ~0ull : 0xffffffffull;
  switch (flags) {
    case hipStreamWaitValueGte: return m >= value;
    case hipStreamWaitValueEq: return m == value;
    case hipStreamWaitValueAnd: return (m & value) != 0;
    default:
      if (as_clr()) return ((cur | value) & mask & width) != (mask & width);
      return (~(m | (value & mask)) & width) != 0;
  }
}

// Waits up to `ms` for the stream to finish; true when it did.
static bool finishes_within(hipStream_t s, int ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    hipError_t e = hipStreamQuery(s);
    if (e == hipSuccess) return true;
    if (e != hipErrorNotReady) {
      printf("FAIL hipStreamQuery -> %s\n", hipGetErrorName(e));
      exit(2);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

int main() {
  int attr = 0;
  HIP_CHECK(hipDeviceGetAttribute(&attr, hipDeviceAttributeCanUseStreamWaitValue, 0));
  if (!as_clr()) report("hipDeviceAttributeCanUseStreamWaitValue is 1", attr == 1);

  hipStream_t producer, consumer;
  HIP_CHECK(hipStreamCreateWithFlags(&producer, hipStreamNonBlocking));
  HIP_CHECK(hipStreamCreateWithFlags(&consumer, hipStreamNonBlocking));
  int *data, *out;
  HIP_CHECK(hipMalloc(&data, N * sizeof(int)));
  HIP_CHECK(hipMalloc(&out, N * sizeof(int)));
  unsigned* signal;
  HIP_CHECK(hipExtMallocWithFlags((void**)&signal, 8, hipMallocSignalMemory));
  unsigned* counter;
  HIP_CHECK(hipMalloc(&counter, sizeof(unsigned)));
  std::vector<int> host(N);
  char detail[160] = "";

  // 1. The producer's kernel raises the flag; the consumer, queued first, waits for it.
  {
    int bad = 0;
    for (int round = 1; round <= 20 && !bad; round++) {
      HIP_CHECK(hipMemset(signal, 0, 8));
      HIP_CHECK(hipMemset(counter, 0, sizeof(unsigned)));
      HIP_CHECK(hipStreamWaitValue32(consumer, signal, 1, hipStreamWaitValueEq, 0xffffffff));
      consume<<<N / 256, 256, 0, consumer>>>(data, out, N);
      produce_and_flag<<<N / 256, 256, 0, producer>>>(data, N, round, counter, signal);
      HIP_CHECK(hipGetLastError());
      HIP_CHECK(hipStreamSynchronize(consumer));
      HIP_CHECK(hipMemcpy(host.data(), out, N * sizeof(int), hipMemcpyDeviceToHost));
      if (!consumed_right(host, round, detail, sizeof detail)) bad = round;
    }
    report("a stream waits for a flag another stream's kernel raises", bad == 0, detail);
  }

  // 2. hipStreamWriteValue32 after the producer's kernel releases the consumer.
  {
    int bad = 0;
    for (int round = 1; round <= 20 && !bad; round++) {
      HIP_CHECK(hipStreamWaitValue32(consumer, signal, round + 100, hipStreamWaitValueGte,
                                     0xffffffff));
      consume<<<N / 256, 256, 0, consumer>>>(data, out, N);
      produce<<<N / 256, 256, 0, producer>>>(data, N, round * 7);
      HIP_CHECK(hipStreamWriteValue32(producer, signal, round + 100, 0));
      HIP_CHECK(hipStreamSynchronize(consumer));
      HIP_CHECK(hipMemcpy(host.data(), out, N * sizeof(int), hipMemcpyDeviceToHost));
      if (!consumed_right(host, round * 7, detail, sizeof detail)) bad = round;
    }
    report("hipStreamWriteValue32 in stream order releases a waiting stream", bad == 0, detail);
  }

  // 3. 64-bit, set by the host in pinned memory: the stream is held until then.
  {
    uint64_t* pinned;
    HIP_CHECK(hipHostMalloc((void**)&pinned, sizeof(uint64_t), 0));
    __atomic_store_n(pinned, 0, __ATOMIC_SEQ_CST);
    const uint64_t big = 0x1234567800000000ull;
    HIP_CHECK(hipStreamWaitValue64(consumer, pinned, big, hipStreamWaitValueGte, ~0ull));
    produce<<<N / 256, 256, 0, consumer>>>(data, N, 99);
    bool held = !finishes_within(consumer, 50);
    __atomic_store_n(pinned, big - 1, __ATOMIC_SEQ_CST);
    bool still_held = !finishes_within(consumer, 20);
    __atomic_store_n(pinned, big, __ATOMIC_SEQ_CST);
    bool released = finishes_within(consumer, 5000);
    snprintf(detail, sizeof detail, "held %d, held below the value %d, released %d", held,
             still_held, released);
    report("hipStreamWaitValue64 on pinned memory waits for the host", held && still_held && released,
           detail);
    HIP_CHECK(hipStreamWriteValue64(consumer, pinned, 0xfedcba9876543210ull, 0));
    HIP_CHECK(hipStreamSynchronize(consumer));
    report("hipStreamWriteValue64 writes all 64 bits", *pinned == 0xfedcba9876543210ull);
    HIP_CHECK(hipHostFree(pinned));
  }

  // 4. Each condition and mask: a wait that holds lets the stream finish, one that does not
  // keeps it waiting until the memory is changed to a value that satisfies it.
  {
    const uint64_t values[] = {0, 1, 2, 5, 0xf0, 0xff, 0x80000001ull, 0xffffffffull};
    const uint64_t masks[] = {0xffffffffull, 0xff, 0x0f, 0x80000000ull};
    int wrong = 0, cases = 0;
    for (unsigned flags = 0; flags < 4; flags++) {
      for (uint64_t cur : {0ull, 3ull, 0xf5ull, 0x80000000ull, 0xffffffffull}) {
        for (uint64_t value : values) {
          for (uint64_t mask : masks) {
            bool expect = holds(flags, cur, value, mask, false);
            if (!expect) continue;  // unmet waits are checked below, fewer of them (slow)
            HIP_CHECK(hipMemset(signal, 0, 8));
            HIP_CHECK(hipMemcpy(signal, &cur, 4, hipMemcpyHostToDevice));
            HIP_CHECK(hipStreamWaitValue32(consumer, signal, (uint32_t)value, flags,
                                           (uint32_t)mask));
            cases++;
            if (!finishes_within(consumer, 2000)) {
              if (!wrong)
                snprintf(detail, sizeof detail, "flags %u cur %#llx value %#llx mask %#llx held",
                         flags, (unsigned long long)cur, (unsigned long long)value,
                         (unsigned long long)mask);
              wrong++;
              // Release it: every condition holds for some value; try them all.
              for (uint64_t v : {(uint64_t)0, value, ~(uint64_t)0})
                HIP_CHECK(hipMemcpy(signal, &v, 4, hipMemcpyHostToDevice));
              HIP_CHECK(hipStreamSynchronize(consumer));
            }
          }
        }
      }
    }
    // Unmet: one per condition, released by a value that meets it.
    struct Unmet { unsigned flags; uint32_t cur, value, mask, release; } unmet[] = {
        {hipStreamWaitValueGte, 4, 5, 0xffffffff, 9},
        {hipStreamWaitValueEq, 0x1ff, 0x2ff, 0xfff, 0x2ff},
        {hipStreamWaitValueAnd, 0xf0, 0x0f, 0xffffffff, 0x01},
        {hipStreamWaitValueNor, 0xffffffff, 0, 0xffffffff, 0xfffffffe},
    };
    for (auto& u : unmet) {
      if (holds(u.flags, u.cur, u.value, u.mask, false) ||
          !holds(u.flags, u.release, u.value, u.mask, false)) {
        report("the test's unmet cases are unmet", false);
        continue;
      }
      HIP_CHECK(hipMemcpy(signal, &u.cur, 4, hipMemcpyHostToDevice));
      HIP_CHECK(hipStreamWaitValue32(consumer, signal, u.value, u.flags, u.mask));
      cases++;
      bool held = !finishes_within(consumer, 30);
      HIP_CHECK(hipMemcpy(signal, &u.release, 4, hipMemcpyHostToDevice));
      bool released = finishes_within(consumer, 5000);
      if (!held || !released) {
        if (!wrong)
          snprintf(detail, sizeof detail, "flags %u: held %d released %d", u.flags, held,
                   released);
        wrong++;
        HIP_CHECK(hipStreamSynchronize(consumer));
      }
    }
    char what[220];
    snprintf(what, sizeof what, "%d of %d cases wrong: %s", wrong, cases, detail);
    report("every wait condition and mask as HIP defines it", wrong == 0 && cases > 40, what);
  }

  // 5. Refusals, before anything is queued.
  if (!as_clr()) {
    std::vector<uint32_t> pageable(4);
    struct { const char* what; hipError_t got; } refused[] = {
        {"null pointer", hipStreamWaitValue32(consumer, nullptr, 0, 0, ~0u)},
        {"unknown condition", hipStreamWaitValue32(consumer, signal, 0, 4, ~0u)},
        {"write flags", hipStreamWriteValue32(consumer, signal, 0, 1)},
        {"misaligned 32", hipStreamWriteValue32(consumer, (char*)signal + 2, 0, 0)},
        {"misaligned 64", hipStreamWaitValue64(consumer, (char*)signal + 4, 0, 0, ~0ull)},
        {"past the allocation", hipStreamWriteValue64(consumer, data + N - 1, 0, 0)},
        {"pageable host memory", hipStreamWriteValue32(consumer, pageable.data(), 1, 0)},
    };
    int bad = 0;
    for (auto& r : refused) {
      if (r.got != hipErrorInvalidValue) {
        if (!bad)
          snprintf(detail, sizeof detail, "%s: %s", r.what, hipGetErrorName(r.got));
        bad++;
      }
    }
    report("bad stream memory operations are hipErrorInvalidValue", bad == 0, detail);
    report("nothing was written to pageable memory", pageable[0] == 0);
    HIP_CHECK(hipStreamSynchronize(consumer));
  }

  HIP_CHECK(hipFree(counter));
  HIP_CHECK(hipFree(signal));
  HIP_CHECK(hipFree(out));
  HIP_CHECK(hipFree(data));
  HIP_CHECK(hipStreamDestroy(producer));
  HIP_CHECK(hipStreamDestroy(consumer));
  return finish();
}
