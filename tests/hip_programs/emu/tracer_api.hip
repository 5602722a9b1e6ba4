// HIP 5.3+'s tracer in the API domain, as roctracer 5.3 and later registers it
// (hipRegisterTracerCallback): for hipMalloc, hipMemcpy, hipLaunchKernel and hipFree, the tracer is
// asked with a hip_api_trace_data_t, hands out a correlation id and its phase functions, and is
// called at enter and exit with the same correlation id, an id hipApiName names as the call, and
// the call's arguments where the record's layout puts them; the kernel's dispatch record carries
// the launch's correlation id. Run as a HIP 5 program (hip_api_data_t of ROCm 5.3-5.7, 840
// bytes), then as a HIP 6 one (the generation announced as libamdhip64.so.6 announces it; 1520
// bytes). The layouts are declared here from the headers' member lists (hip_prof_str.h), so the
// offsets are the compiler's, not the runtime's tables.
#include "check.h"

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" void rocload_hip_generation(int generation, const char* library);
extern "C" void hipRegisterTracerCallback(int (*)(uint32_t, uint32_t, void*));
extern "C" const char* hipApiName(uint32_t id);

// hip_api_data_t with the members of the four calls; UnionBytes is the size of the header's whole
// argument union (816 in 5.3-5.7, 1496 in 6.0-6.2).
template <size_t UnionBytes>
struct ApiData {
  uint64_t correlation_id;
  uint32_t phase;
  union {
    struct {
      void** ptr;
      void* ptr__val;
      size_t size;
    } hipMalloc;
    struct {
      void* dst;
      const void* src;
      size_t sizeBytes;
      hipMemcpyKind kind;
    } hipMemcpy;
    struct {
      const void* function_address;
      dim3 numBlocks;
      dim3 dimBlocks;
      void** args;
      void* args__val;
      size_t sharedMemBytes;
      hipStream_t stream;
    } hipLaunchKernel;
    struct {
      void* ptr;
    } hipFree;
    char whole[UnionBytes];
  } args;
  uint64_t* phase_data;
};
static_assert(sizeof(ApiData<816>) == 840, "hip_api_data_t of ROCm 5.3-5.7");
static_assert(sizeof(ApiData<1496>) == 1520, "hip_api_data_t of ROCm 6.0-6.2");

// hip_api_trace_data_t: the runtime's record the tracer fills.
template <size_t UnionBytes>
struct TraceData {
  ApiData<UnionBytes> api_data;
  uint64_t phase_enter_timestamp;
  uint64_t phase_data;
  void (*phase_enter)(uint32_t, TraceData*);
  void (*phase_exit)(uint32_t, TraceData*);
};

// What the tracer saw of one phase of one call.
struct Seen {
  std::string name;
  uint32_t phase;
  uint64_t correlation;
  uint64_t a, b, c, d;  // the call's arguments, as read through the layout
  dim3 grid, block;
  void* allocated;  // hipMalloc's *ptr at exit
};

static std::vector<Seen> g_seen;
static std::atomic<uint64_t> g_next{1000};
static std::atomic<uint64_t> g_dispatch_correlation{0};
static std::atomic<int> g_dispatches{0};
static bool g_tracing = true;

static bool wanted(const std::string& n) {
  return n == "hipMalloc" || n == "hipMemcpy" || n == "hipLaunchKernel" || n == "hipFree";
}

template <size_t U>
static void record(uint32_t op, TraceData<U>* t) {
  const ApiData<U>& d = t->api_data;
  Seen s{hipApiName(op), d.phase, d.correlation_id, 0, 0, 0, 0, dim3(), dim3(), nullptr};
  if (s.name == "hipMalloc") {
    s.a = (uint64_t)d.args.hipMalloc.ptr;
    s.b = d.args.hipMalloc.size;
    if (d.phase == 1) s.allocated = *d.args.hipMalloc.ptr;
  } else if (s.name == "hipMemcpy") {
    s.a = (uint64_t)d.args.hipMemcpy.dst;
    s.b = (uint64_t)d.args.hipMemcpy.src;
    s.c = d.args.hipMemcpy.sizeBytes;
    s.d = d.args.hipMemcpy.kind;
  } else if (s.name == "hipLaunchKernel") {
    s.a = (uint64_t)d.args.hipLaunchKernel.function_address;
    s.b = (uint64_t)d.args.hipLaunchKernel.args;
    s.c = d.args.hipLaunchKernel.sharedMemBytes;
    s.d = (uint64_t)d.args.hipLaunchKernel.stream;
    s.grid = d.args.hipLaunchKernel.numBlocks;
    s.block = d.args.hipLaunchKernel.dimBlocks;
  } else if (s.name == "hipFree") {
    s.a = (uint64_t)d.args.hipFree.ptr;
  }
  g_seen.push_back(s);
}

template <size_t U>
static void exit_phase(uint32_t op, TraceData<U>* t) {
  t->api_data.phase = 1;
  record(op, t);
}

// As roctracer does: the enter phase sets the phase and the exit function.
template <size_t U>
static void enter_phase(uint32_t op, TraceData<U>* t) {
  t->api_data.phase = 0;
  record(op, t);
  t->phase_exit = exit_phase<U>;
}

template <size_t U>
static int tracer(uint32_t domain, uint32_t op, void* data) {
  if (domain == 2 && op == 0) {  // kernel dispatches: wanted, and their records kept
    const uint64_t* r = (const uint64_t*)data;
    if (r) {
      g_dispatch_correlation = r[2];  // activity_record_t's correlation id, at byte 16
      g_dispatches++;
    }
    return 0;
  }
  if (domain != 3 || !g_tracing || !wanted(hipApiName(op))) return 1;
  TraceData<U>* t = (TraceData<U>*)data;
  t->api_data.correlation_id = g_next++;
  t->phase_enter = enter_phase<U>;
  t->phase_exit = nullptr;
  return 0;
}

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

// The calls of one generation, then what the tracer was told about them.
template <size_t U>
static void run(const char* label) {
  const int n = 256;
  std::vector<int> host(n), back(n, 0);
  for (int i = 0; i < n; i++) host[i] = 3 * i;
  g_seen.clear();
  g_dispatches = 0;
  g_tracing = true;
  hipRegisterTracerCallback(tracer<U>);
  int* d = nullptr;
  HIP_CHECK(hipMalloc(&d, n * sizeof(int)));
  HIP_CHECK(hipMemcpy(d, host.data(), n * sizeof(int), hipMemcpyHostToDevice));
  int count = n;
  void* args[] = {&d, &count};
  HIP_CHECK(hipLaunchKernel((const void*)add_one, dim3(2), dim3(128), args, 0, nullptr));
  HIP_CHECK(hipMemcpy(back.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
  HIP_CHECK(hipFree(d));
  g_tracing = false;
  // The dispatch record is asynchronous: wait for it, a bounded time.
  for (int i = 0; i < 500 && g_dispatches.load() < 1; i++) usleep(10 * 1000);
  hipRegisterTracerCallback(nullptr);

  bool ok = true;
  std::string why;
  auto expect = [&](bool c, const std::string& what) {
    if (!c && ok) {
      ok = false;
      why = what;
    }
  };
  for (int i = 0; i < n; i++) expect(back[i] == host[i] + 1, "the kernel's result");
  const char* calls[] = {"hipMalloc", "hipMemcpy", "hipLaunchKernel", "hipMemcpy", "hipFree"};
  expect(g_seen.size() == 10, "10 phases seen, not " + std::to_string(g_seen.size()));
  uint64_t previous = 0, launch = 0;
  for (size_t c = 0; c < 5 && g_seen.size() == 10; c++) {
    const Seen& e = g_seen[2 * c];
    const Seen& x = g_seen[2 * c + 1];
    std::string call = std::string(calls[c]) + " #" + std::to_string(c);
    expect(e.name == calls[c] && x.name == calls[c], call + ": named " + e.name + "/" + x.name);
    expect(e.phase == 0 && x.phase == 1, call + ": enter then exit");
    expect(e.correlation == x.correlation && e.correlation > previous,
           call + ": one new correlation id for both phases");
    previous = e.correlation;
    for (const Seen* s : {&e, &x}) {
      switch (c) {
        case 0:
          expect(s->a == (uint64_t)&d && s->b == n * sizeof(int), call + ": ptr, size");
          break;
        case 1:
          expect(s->a == (uint64_t)d && s->b == (uint64_t)host.data() &&
                     s->c == n * sizeof(int) && s->d == hipMemcpyHostToDevice,
                 call + ": dst, src, sizeBytes, kind");
          break;
        case 2:
          expect(s->a == (uint64_t)(const void*)add_one && s->b == (uint64_t)args && s->c == 0 &&
                     s->d == 0 && s->grid.x == 2 && s->grid.y == 1 && s->grid.z == 1 &&
                     s->block.x == 128 && s->block.y == 1 && s->block.z == 1,
                 call + ": function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream");
          launch = e.correlation;
          break;
        case 3:
          expect(s->a == (uint64_t)back.data() && s->b == (uint64_t)d &&
                     s->c == n * sizeof(int) && s->d == hipMemcpyDeviceToHost,
                 call + ": dst, src, sizeBytes, kind");
          break;
        case 4:
          expect(s->a == (uint64_t)d, call + ": ptr");
          break;
      }
    }
    if (c == 0) expect(x.allocated == (void*)d, call + ": *ptr at exit is the allocation");
  }
  expect(g_dispatches == 1, "one dispatch record, not " + std::to_string(g_dispatches.load()));
  expect(g_dispatch_correlation == launch,
         "the dispatch record carries the launch's correlation id " + std::to_string(launch) +
             ", not " + std::to_string(g_dispatch_correlation.load()));
  char name[160];
  snprintf(name, sizeof name, "hipRegisterTracerCallback API domain, %s", label);
  report(name, ok, why.c_str());
}

int main() {
  // A program linked with librocload.so directly is HIP 5.
  std::string five = hipApiName(6);
  run<816>("HIP 5 layout (hip_api_data_t of 840 bytes)");
  // What the thin libamdhip64.so.6 does when a HIP 6 program loads it.
  rocload_hip_generation(6, "libamdhip64.so.6");
  std::string six = hipApiName(6);
  run<1496>("HIP 6 layout (hip_api_data_t of 1520 bytes)");
  // clr 6 numbers the R0000 forms (hip_prof_str.h of 6.x): hipApiName follows the generation.
  report("hipApiName follows the program's generation", five == "hipChooseDevice" &&
                                                            six == "hipChooseDeviceR0000",
         (five + " / " + six).c_str());
  return g_failures ? 1 : 0;
}
