// HIP 5.2's tracing interface as roctracer drives it, checked against what the program did:
// - API callbacks: an API callback alone is never called (no record); with an activity
//   callback handing out the record, hipMalloc, hipMemcpy and hipLaunchKernel (<<<>>>) call
//   the API callback at enter and exit with domain 3, their id, the phase, one correlation id
//   and the arguments the program passed; an API with no callbacks is not reported; the
//   activity callback is told the end with its argument; after removal nothing is called;
//   ids outside HIP 5.2.3's are refused;
// - operation activity: with hipInitActivityCallback and dispatches enabled, a kernel's
//   dispatch gets its id callback and, at completion, one record (HIP ops domain, kernel kind,
//   the same id, end after begin); copies cannot be enabled (not reported); disabled, nothing;
// - names: hipApiName, hipKernelNameRefByPtr, hipGetCmdName; hipProfilerStart/Stop say they
//   are not supported.
#include "check.h"
#include <atomic>
#include <unistd.h>
#include <mutex>
#include <vector>

__global__ void triple(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 3 * i;
}

#if !defined(__HIP_DEVICE_COMPILE__)
#include <hip/amd_detail/hip_prof_str.h>

// Declared by roctracer's headers (hip_runtime_prof.h declares them without C linkage).
extern "C" void hipInitActivityCallback(void* id_callback, void* op_callback, void* arg);
extern "C" bool hipEnableActivityCallback(uint32_t op, bool enable);
extern "C" const char* hipGetCmdName(uint32_t id);

// prof_protocol.h of HIP 5.2.3 (roctracer's), which Debian's headers do not carry.
struct activity_record_t {
  uint32_t domain;
  uint32_t kind;
  uint32_t op;
  uint64_t correlation_id;
  uint64_t begin_ns;
  uint64_t end_ns;
  int device_id;
  uint64_t queue_id;
  size_t bytes;
};
static const uint32_t kDomainHipApi = 3;
static const uint32_t kDomainHipOps = 2;

struct Seen {
  uint32_t domain, cid, phase;
  uint64_t correlation;
  uintptr_t a, b, c, d;  // the call's first arguments, as the record holds them
};
static std::mutex g_lock;
static std::vector<Seen> g_seen;
static std::vector<std::pair<uint32_t, void*>> g_ended;
// The tracer's record of the call in progress (hip_api_data_t has no default constructor).
alignas(hip_api_data_t) static thread_local unsigned char t_storage[sizeof(hip_api_data_t)];
static std::atomic<uint64_t> g_next_correlation{100};

static void* activity(uint32_t cid, void* record, const void* data, void* arg) {
  (void)record;
  (void)data;
  if (arg == nullptr) {  // a call begins: hand out its record
    memset(t_storage, 0, sizeof t_storage);
    hip_api_data_t* r = (hip_api_data_t*)t_storage;
    r->correlation_id = g_next_correlation++;
    r->phase = 0;
    return r;
  }
  std::lock_guard<std::mutex> l(g_lock);
  g_ended.push_back({cid, arg});
  return nullptr;
}

static void api(uint32_t domain, uint32_t cid, const void* data, void* arg) {
  (void)arg;
  const hip_api_data_t* d = (const hip_api_data_t*)data;
  Seen s = {domain, cid, d->phase, d->correlation_id, 0, 0, 0, 0};
  switch (cid) {
    case HIP_API_ID_hipMalloc:
      s.a = (uintptr_t)d->args.hipMalloc.ptr;
      s.b = d->args.hipMalloc.size;
      break;
    case HIP_API_ID_hipMemcpy:
      s.a = (uintptr_t)d->args.hipMemcpy.dst;
      s.b = (uintptr_t)d->args.hipMemcpy.src;
      s.c = d->args.hipMemcpy.sizeBytes;
      s.d = d->args.hipMemcpy.kind;
      break;
    case HIP_API_ID_hipLaunchKernel:
      s.a = (uintptr_t)d->args.hipLaunchKernel.function_address;
      s.b = d->args.hipLaunchKernel.numBlocks.x;
      s.c = d->args.hipLaunchKernel.dimBlocks.x;
      s.d = (uintptr_t)d->args.hipLaunchKernel.stream;
      break;
  }
  std::lock_guard<std::mutex> l(g_lock);
  g_seen.push_back(s);
}

static std::vector<Seen> take_seen() {
  std::lock_guard<std::mutex> l(g_lock);
  std::vector<Seen> s;
  s.swap(g_seen);
  return s;
}

// Checks one enter/exit pair of `cid` with these arguments.
static bool pair_of(const std::vector<Seen>& s, size_t at, uint32_t cid, uintptr_t a, uintptr_t b,
                    uintptr_t c, uintptr_t d) {
  if (s.size() < at + 2) return false;
  const Seen& in = s[at];
  const Seen& out = s[at + 1];
  return in.domain == kDomainHipApi && out.domain == kDomainHipApi && in.cid == cid &&
         out.cid == cid && in.phase == 0 && out.phase == 1 && in.correlation == out.correlation &&
         in.correlation >= 100 && in.a == a && in.b == b && in.c == c && in.d == d &&
         out.a == a && out.b == b;
}

static void api_callbacks() {
  void* tag = (void*)0x5eed;
  HIP_CHECK((hipError_t)hipRegisterApiCallback(HIP_API_ID_hipMalloc, (void*)api, nullptr));
  int* p = nullptr;
  HIP_CHECK(hipMalloc(&p, 4096));
  report("an API callback alone is never called (nothing hands out a record)", take_seen().empty());
  HIP_CHECK(hipFree(p));

  for (uint32_t id : {HIP_API_ID_hipMalloc, HIP_API_ID_hipMemcpy, HIP_API_ID_hipLaunchKernel}) {
    HIP_CHECK((hipError_t)hipRegisterApiCallback(id, (void*)api, nullptr));
    HIP_CHECK((hipError_t)hipRegisterActivityCallback(id, (void*)activity, tag));
  }
  HIP_CHECK(hipMalloc(&p, 4096));
  std::vector<Seen> s = take_seen();
  report("hipMalloc: enter and exit, its id, domain, one correlation id, its arguments",
         s.size() == 2 && pair_of(s, 0, HIP_API_ID_hipMalloc, (uintptr_t)&p, 4096, 0, 0));
  {
    std::lock_guard<std::mutex> l(g_lock);
    report("the activity callback is told the end with its argument",
           g_ended.size() == 1 && g_ended[0].first == HIP_API_ID_hipMalloc && g_ended[0].second == tag);
  }

  int host[64];
  for (int i = 0; i < 64; i++) host[i] = i;
  HIP_CHECK(hipMemcpy(p, host, sizeof host, hipMemcpyHostToDevice));
  s = take_seen();
  report("hipMemcpy: its arguments",
         s.size() == 2 && pair_of(s, 0, HIP_API_ID_hipMemcpy, (uintptr_t)p, (uintptr_t)host,
                                  sizeof host, hipMemcpyHostToDevice));

  triple<<<dim3(2), dim3(32)>>>(p, 64);
  HIP_CHECK(hipGetLastError());
  s = take_seen();
  bool launch = false;
  for (size_t i = 0; i + 1 < s.size(); i++) {
    if (s[i].cid == HIP_API_ID_hipLaunchKernel)
      launch = pair_of(s, i, HIP_API_ID_hipLaunchKernel, (uintptr_t)(const void*)triple, 2, 32, 0);
  }
  report("<<<>>>: hipLaunchKernel with the kernel's stub, grid and block", launch);

  HIP_CHECK(hipMemcpy(host, p, sizeof host, hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < 64; i++) wrong += host[i] != 3 * i;
  report("the traced kernel computed", wrong == 0);
  take_seen();
  HIP_CHECK(hipMemset(p, 0, 16));
  report("an API without callbacks is not reported", take_seen().empty());

  report("hipApiName names the id", strcmp(hipApiName(HIP_API_ID_hipMalloc), "hipMalloc") == 0);
  report("an id HIP 5.2.3 has not is refused",
         hipRegisterApiCallback(HIP_API_ID_LAST + 1, (void*)api, nullptr) == hipErrorInvalidValue &&
             hipRegisterActivityCallback(0, (void*)activity, nullptr) == hipErrorInvalidValue);

  for (uint32_t id : {HIP_API_ID_hipMalloc, HIP_API_ID_hipMemcpy, HIP_API_ID_hipLaunchKernel}) {
    HIP_CHECK((hipError_t)hipRemoveApiCallback(id));
    HIP_CHECK((hipError_t)hipRemoveActivityCallback(id));
  }
  int* q = nullptr;
  HIP_CHECK(hipMalloc(&q, 64));
  HIP_CHECK(hipMemcpy(host, p, sizeof host, hipMemcpyDeviceToHost));
  report("after removal nothing is called", take_seen().empty());
  HIP_CHECK(hipFree(q));
  HIP_CHECK(hipFree(p));
}

static std::mutex g_ops_lock;
static std::vector<uint64_t> g_ids;
static std::vector<activity_record_t> g_ops;

static void id_callback(uint64_t id) {
  std::lock_guard<std::mutex> l(g_ops_lock);
  g_ids.push_back(id);
}

static void op_callback(uint32_t op, void* record, void* arg) {
  std::lock_guard<std::mutex> l(g_ops_lock);
  activity_record_t r;
  memcpy(&r, record, sizeof r);
  if (op == 0 && arg == (void*)0xabc) g_ops.push_back(r);
}

static void operation_activity() {
  hipInitActivityCallback((void*)id_callback, (void*)op_callback, (void*)0xabc);
  report("dispatches can be reported", hipEnableActivityCallback(0, true));
  report("copies cannot (the tool interface does not see them)", !hipEnableActivityCallback(1, true));
  int* p = nullptr;
  HIP_CHECK(hipMalloc(&p, 64 * sizeof(int)));
  triple<<<dim3(2), dim3(32)>>>(p, 64);
  HIP_CHECK(hipDeviceSynchronize());
  // Records are asynchronous (through ROCr's backend the runtime learns of a completion just
  // after the signal a synchronisation waits for): wait for it, a bounded time.
  for (int i = 0; i < 500; i++) {
    {
      std::lock_guard<std::mutex> l(g_ops_lock);
      if (!g_ops.empty()) break;
    }
    usleep(10 * 1000);
  }
  {
    std::lock_guard<std::mutex> l(g_ops_lock);
    bool ok = g_ids.size() == 1 && g_ops.size() == 1;
    if (ok) {
      const activity_record_t& r = g_ops[0];
      ok = r.domain == kDomainHipOps && r.kind == 0x11F0 && r.op == 0 &&
           r.correlation_id == g_ids[0] && r.end_ns >= r.begin_ns && r.end_ns > 0 &&
           r.device_id == 0;
    }
    report("a dispatch: its id, then one kernel record with that id", ok);
  }
  report("disabling dispatches", hipEnableActivityCallback(0, false));
  triple<<<dim3(2), dim3(32)>>>(p, 64);
  HIP_CHECK(hipDeviceSynchronize());
  usleep(100 * 1000);
  {
    std::lock_guard<std::mutex> l(g_ops_lock);
    report("disabled: nothing reported", g_ids.size() == 1 && g_ops.size() == 1);
  }
  HIP_CHECK(hipFree(p));
}

static void names() {
  const char* name = hipKernelNameRefByPtr((const void*)triple, nullptr);
  report("hipKernelNameRefByPtr names the kernel", name && strstr(name, "triple") != nullptr);
  report("hipKernelNameRefByPtr of no kernel is NULL", hipKernelNameRefByPtr((const void*)&names, nullptr) == nullptr);
  report("hipGetCmdName", strcmp(hipGetCmdName(0x11F0), "KernelExecution") == 0 &&
                             strcmp(hipGetCmdName(0x1207), "FillBuffer") == 0);
  report("hipProfilerStart/Stop are not supported",
         hipProfilerStart() == hipErrorNotSupported && hipProfilerStop() == hipErrorNotSupported);
}
#endif

int main() {
#if !defined(__HIP_DEVICE_COMPILE__)
  api_callbacks();
  operation_activity();
  names();
#endif
  return finish();
}
