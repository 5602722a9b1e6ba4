// Virtual memory management and IPC between two processes:
// - reserve, create, map one physical allocation at two addresses, give access; a kernel
//   writes through one view and reads through the other, checked against the host; a read-only
//   mapping; retain and properties; export to a descriptor that a child process imports;
// - a child process (this program run again: `vmm_ipc child ...`) opens the parent's
//   hipMalloc memory from its IPC handle and the parent's interprocess event from its handle,
//   runs a kernel on the parent's data and records the event; the parent waits on the event
//   alone (hipEventSynchronize and hipStreamWaitEvent) and checks what the child's kernel
//   wrote; the child also writes through the parent's exported VMM allocation;
// - after hipMemUnmap, a kernel reading the old address faults: hipErrorIllegalAddress,
//   sticky, reported on stderr, the host alive.
// With two devices (ROCLOAD_SOFT_ISA=gfx1030,gfx1030), access is also given to device 1 alone.
// With VMM_EXPECT_UNSUPPORTED=1 (the run through ROCr's API, whose 5.2.3 library has no
// virtual memory) it checks that the VMM calls say so, and that an IPC handle is made.
#include "check.h"
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string>
#include <vector>

extern char** environ;

__global__ void fill(int* p, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = i * k + 1;
}

__global__ void copy_scaled(int* out, const int* in, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * k;
}

// Slow on purpose (the emulator runs it for a while): a parent that did not really wait for
// the child's event would read the data before this kernel wrote it.
// `zero` is 0, passed at run time so the compiler keeps the loop.
__global__ void slow_update(int* p, int n, int rounds, int zero) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = p[i];
  int acc = 0;
  for (int r = 0; r < rounds; r++) acc += (v + r) & 1;
  p[i] = v * 2 + 7 + acc * zero;
}

__global__ void read_one(const int* p, int* out) { *out = p[5]; }

static std::string hex(const void* bytes, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  const unsigned char* b = (const unsigned char*)bytes;
  for (size_t i = 0; i < n; i++) {
    s += d[b[i] >> 4];
    s += d[b[i] & 15];
  }
  return s;
}

static bool unhex(const char* s, void* bytes, size_t n) {
  if (strlen(s) != 2 * n) return false;
  unsigned char* b = (unsigned char*)bytes;
  for (size_t i = 0; i < n; i++) {
    unsigned v = 0;
    if (sscanf(s + 2 * i, "%2x", &v) != 1) return false;
    b[i] = (unsigned char)v;
  }
  return true;
}

static const int kN = 2048;   // ints in the IPC buffer
static const int kOffset = 64;  // the handle is made for d + kOffset ints

static hipMemAllocationProp device_prop(bool shareable) {
  hipMemAllocationProp prop = {};
  prop.type = hipMemAllocationTypePinned;
  prop.location.type = hipMemLocationTypeDevice;
  prop.location.id = 0;
  prop.requestedHandleType = shareable ? hipMemHandleTypePosixFileDescriptor : hipMemHandleTypeNone;
  return prop;
}

static hipMemAccessDesc access(hipMemAccessFlags flags, int device = 0) {
  hipMemAccessDesc d = {};
  d.location.type = hipMemLocationTypeDevice;
  d.location.id = device;
  d.flags = flags;
  return d;
}

// With two devices: physical memory of device 0 mapped, access given to device 1 only; a
// kernel on device 1 fills it, device 0 has no access, and the host reads the result.
static void two_devices(size_t g) {
  int count = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  if (count < 2) return;
  hipMemAllocationProp prop = device_prop(false);
  hipMemGenericAllocationHandle_t h;
  HIP_CHECK(hipMemCreate(&h, g, &prop, 0));
  void* va = nullptr;
  HIP_CHECK(hipMemAddressReserve(&va, g, 0, nullptr, 0));
  HIP_CHECK(hipMemMap(va, g, 0, h, 0));
  hipMemAccessDesc d1 = access(hipMemAccessFlagsProtReadWrite, 1);
  HIP_CHECK(hipMemSetAccess(va, g, &d1, 1));
  unsigned long long flags = 9;
  hipMemLocation l0 = {hipMemLocationTypeDevice, 0}, l1 = {hipMemLocationTypeDevice, 1};
  HIP_CHECK(hipMemGetAccess(&flags, &l0, va));
  report("two devices: device 0 has no access", flags == hipMemAccessFlagsProtNone);
  HIP_CHECK(hipMemGetAccess(&flags, &l1, va));
  report("two devices: device 1 has read-write access", flags == hipMemAccessFlagsProtReadWrite);
  int m = (int)(g / sizeof(int));
  HIP_CHECK(hipSetDevice(1));
  fill<<<(m + 255) / 256, 256>>>((int*)va, m, 9);
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<int> host(m);
  HIP_CHECK(hipMemcpy(host.data(), va, g, hipMemcpyDeviceToHost));
  HIP_CHECK(hipSetDevice(0));
  bool same = true;
  for (int i = 0; i < m; i++) same &= host[i] == i * 9 + 1;
  report("two devices: a kernel on device 1 fills device 0's memory", same);
  HIP_CHECK(hipMemUnmap(va, g));
  HIP_CHECK(hipMemRelease(h));
  HIP_CHECK(hipMemAddressFree(va, g));
}

// ------------------------------------------------------------------------------ the child

static int child(int argc, char** argv) {
  hipIpcMemHandle_t mh;
  hipIpcEventHandle_t eh;
  if (argc != 6 || !unhex(argv[2], &mh, sizeof mh) || !unhex(argv[3], &eh, sizeof eh)) {
    printf("FAIL child: bad arguments\n");
    return 1;
  }
  int vmm_fd = atoi(argv[4]);
  size_t vmm_size = strtoull(argv[5], nullptr, 10);

  int* p = nullptr;
  HIP_CHECK(hipIpcOpenMemHandle((void**)&p, mh, hipIpcMemLazyEnablePeerAccess));
  hipEvent_t e;
  HIP_CHECK(hipIpcOpenEventHandle(&e, eh));
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  // The handle was made for d + kOffset: p is there; the allocation runs kOffset ints before.
  int* base = p - kOffset;
  slow_update<<<(kN + 255) / 256, 256, 0, s>>>(base, kN, 3000, argc - 6);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipEventRecord(e, s));
  // Tell the parent the record is made (not that it is complete).
  char one = 'r';
  if (write(1023, &one, 1) != 1) printf("FAIL child: pipe\n");

  // The parent's VMM allocation, imported from the descriptor it left open for us.
  hipMemGenericAllocationHandle_t h;
  HIP_CHECK(hipMemImportFromShareableHandle(&h, (void*)(uintptr_t)vmm_fd,
                                            hipMemHandleTypePosixFileDescriptor));
  hipMemAllocationProp got = {};
  HIP_CHECK(hipMemGetAllocationPropertiesFromHandle(&got, h));
  report("child: imported allocation is on device 0",
         got.location.type == hipMemLocationTypeDevice && got.location.id == 0);
  void* va = nullptr;
  HIP_CHECK(hipMemAddressReserve(&va, vmm_size, 0, nullptr, 0));
  HIP_CHECK(hipMemMap(va, vmm_size, 0, h, 0));
  hipMemAccessDesc rw = access(hipMemAccessFlagsProtReadWrite);
  HIP_CHECK(hipMemSetAccess(va, vmm_size, &rw, 1));
  int m = (int)(vmm_size / sizeof(int));
  fill<<<(m + 255) / 256, 256, 0, s>>>((int*)va, m, 11);
  HIP_CHECK(hipStreamSynchronize(s));
  HIP_CHECK(hipMemUnmap(va, vmm_size));
  HIP_CHECK(hipMemAddressFree(va, vmm_size));
  HIP_CHECK(hipMemRelease(h));

  HIP_CHECK(hipEventSynchronize(e));
  HIP_CHECK(hipIpcCloseMemHandle(p));
  report("child: closing twice is refused", hipIpcCloseMemHandle(p) == hipErrorInvalidHandle);
  HIP_CHECK(hipEventDestroy(e));
  HIP_CHECK(hipStreamDestroy(s));
  return finish();
}

// ------------------------------------------------------------------------------ the parent

static int expect_unsupported() {
  void* va = nullptr;
  hipError_t r = hipMemAddressReserve(&va, 1 << 16, 0, nullptr, 0);
  report("hipMemAddressReserve is not supported by this backend", r == hipErrorNotSupported);
  hipMemGenericAllocationHandle_t h;
  hipMemAllocationProp prop = device_prop(false);
  r = hipMemCreate(&h, 1 << 16, &prop, 0);
  report("hipMemCreate is not supported by this backend", r == hipErrorNotSupported);
  int* d = nullptr;
  HIP_CHECK(hipMalloc((void**)&d, 4096));
  // The software HSA library shares device memory as ROCr does (hsa_amd_ipc_memory_create).
  hipIpcMemHandle_t mh;
  r = hipIpcGetMemHandle(&mh, d);
  report("hipIpcGetMemHandle makes a handle through ROCr's IPC", r == hipSuccess);
  HIP_CHECK(hipFree(d));
  return finish();
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "child") == 0) return child(argc, argv);
  const char* unsupported = getenv("VMM_EXPECT_UNSUPPORTED");
  if (unsupported && strcmp(unsupported, "1") == 0) return expect_unsupported();

  // --- virtual memory in one process
  hipMemAllocationProp prop = device_prop(true);
  size_t g = 0;
  HIP_CHECK(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum));
  report("granularity is a power of two", g != 0 && (g & (g - 1)) == 0);
  const size_t size = 4 * g;
  const int n = (int)(size / sizeof(int));
  hipMemGenericAllocationHandle_t h;
  HIP_CHECK(hipMemCreate(&h, size, &prop, 0));
  void* base = nullptr;
  HIP_CHECK(hipMemAddressReserve(&base, 4 * size, size, nullptr, 0));
  report("reservation aligned as asked", ((uintptr_t)base % size) == 0);
  int* a = (int*)base;
  int* b = (int*)((char*)base + 2 * size);
  HIP_CHECK(hipMemMap(a, size, 0, h, 0));
  HIP_CHECK(hipMemMap(b, size, 0, h, 0));
  hipMemAccessDesc rw = access(hipMemAccessFlagsProtReadWrite);
  HIP_CHECK(hipMemSetAccess(a, size, &rw, 1));
  HIP_CHECK(hipMemSetAccess(b, size, &rw, 1));
  fill<<<(n + 255) / 256, 256>>>(a, n, 3);
  HIP_CHECK(hipGetLastError());
  std::vector<int> host(n), expect(n);
  for (int i = 0; i < n; i++) expect[i] = i * 3 + 1;
  HIP_CHECK(hipMemcpy(host.data(), b, size, hipMemcpyDeviceToHost));
  report("a kernel's writes through one view are read through the other", host == expect);
  int* out = nullptr;
  HIP_CHECK(hipMalloc((void**)&out, size));
  copy_scaled<<<(n + 255) / 256, 256>>>(out, b, n, 5);
  HIP_CHECK(hipMemcpy(host.data(), out, size, hipMemcpyDeviceToHost));
  bool same = true;
  for (int i = 0; i < n; i++) same &= host[i] == expect[i] * 5;
  report("a kernel reads the second view", same);

  // A read-only third view: kernels read it (a write would fault; the unit tests check that).
  int* c = (int*)((char*)base + size);
  HIP_CHECK(hipMemMap(c, size, 0, h, 0));
  hipMemAccessDesc ro = access(hipMemAccessFlagsProtRead);
  HIP_CHECK(hipMemSetAccess(c, size, &ro, 1));
  unsigned long long flags = 99;
  HIP_CHECK(hipMemGetAccess(&flags, &ro.location, c + 10));
  report("hipMemGetAccess reads read-only", flags == hipMemAccessFlagsProtRead);
  copy_scaled<<<(n + 255) / 256, 256>>>(out, c, n, 2);
  HIP_CHECK(hipMemcpy(host.data(), out, size, hipMemcpyDeviceToHost));
  same = true;
  for (int i = 0; i < n; i++) same &= host[i] == expect[i] * 2;
  report("a kernel reads the read-only view", same);
  HIP_CHECK(hipMemUnmap(c, size));

  hipMemGenericAllocationHandle_t again;
  HIP_CHECK(hipMemRetainAllocationHandle(&again, b + 17));
  report("hipMemRetainAllocationHandle returns the mapped allocation", again == h);
  HIP_CHECK(hipMemRelease(again));
  report("hipMemAddressFree with mappings is refused",
         hipMemAddressFree(base, 4 * size) == hipErrorInvalidValue);
  report("a part of a mapping is not unmapped", hipMemUnmap(a, g) == hipErrorInvalidValue);
  report("hipFree of mapped memory is refused", hipFree(a) == hipErrorInvalidValue);

  two_devices(g);

  // Exported for the child, which inherits the descriptor (close-on-exec cleared).
  int vmm_fd = -1;
  HIP_CHECK(hipMemExportToShareableHandle(&vmm_fd, h, hipMemHandleTypePosixFileDescriptor, 0));
  fcntl(vmm_fd, F_SETFD, 0);

  // --- IPC with a child process
  int* d = nullptr;
  HIP_CHECK(hipMalloc((void**)&d, kN * sizeof(int)));
  std::vector<int> init(kN);
  for (int i = 0; i < kN; i++) init[i] = (i * 7919) % 1000 - 500;
  HIP_CHECK(hipMemcpy(d, init.data(), kN * sizeof(int), hipMemcpyHostToDevice));
  hipIpcMemHandle_t mh;
  HIP_CHECK(hipIpcGetMemHandle(&mh, d + kOffset));
  hipEvent_t ev;
  HIP_CHECK(hipEventCreateWithFlags(&ev, hipEventInterprocess | hipEventDisableTiming));
  hipIpcEventHandle_t eh;
  HIP_CHECK(hipIpcGetEventHandle(&eh, ev));
  hipEvent_t self_open;
  report("an event handle is not opened by its own process",
         hipIpcOpenEventHandle(&self_open, eh) == hipErrorInvalidContext);

  int pipefd[2];
  if (pipe(pipefd) != 0) {
    printf("FAIL pipe\n");
    return 1;
  }
  std::string mhex = hex(&mh, sizeof mh), ehex = hex(&eh, sizeof eh);
  std::string fd_arg = std::to_string(vmm_fd), size_arg = std::to_string(size);
  char* child_argv[] = {argv[0], (char*)"child", (char*)mhex.c_str(), (char*)ehex.c_str(),
                        (char*)fd_arg.c_str(), (char*)size_arg.c_str(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1023);
  posix_spawn_file_actions_addclose(&actions, pipefd[0]);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, child_argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipefd[1]);
  if (spawned != 0) {
    printf("FAIL posix_spawn: %s\n", strerror(spawned));
    return 1;
  }
  char got = 0;
  bool told = read(pipefd[0], &got, 1) == 1 && got == 'r';
  report("the child opened the handles and recorded the event", told);
  // Only the event says the child's kernel is done: nothing else waits for it.
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  HIP_CHECK(hipStreamWaitEvent(s, ev, 0));
  int* seen = nullptr;
  HIP_CHECK(hipMalloc((void**)&seen, kN * sizeof(int)));
  copy_scaled<<<(kN + 255) / 256, 256, 0, s>>>(seen, d, kN, 1);
  HIP_CHECK(hipStreamSynchronize(s));
  HIP_CHECK(hipEventSynchronize(ev));
  report("the event is complete in the parent", hipEventQuery(ev) == hipSuccess);
  std::vector<int> now(kN), via_stream(kN);
  HIP_CHECK(hipMemcpy(now.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(via_stream.data(), seen, kN * sizeof(int), hipMemcpyDeviceToHost));
  same = true;
  bool same_stream = true;
  for (int i = 0; i < kN; i++) {
    same &= now[i] == init[i] * 2 + 7;
    same_stream &= via_stream[i] == init[i] * 2 + 7;
  }
  report("the child's kernel updated the parent's buffer (after hipEventSynchronize)", same);
  report("a stream waiting on the event saw the child's writes", same_stream);
  int status = 0;
  waitpid(pid, &status, 0);
  report("the child exited cleanly", WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(vmm_fd);
  HIP_CHECK(hipMemcpy(host.data(), a, size, hipMemcpyDeviceToHost));
  same = true;
  for (int i = 0; i < n; i++) same &= host[i] == i * 11 + 1;
  report("the child's kernel wrote the parent's exported VMM allocation", same);

  // --- after hipMemUnmap, a kernel reading the old address faults; the host goes on.
  HIP_CHECK(hipMemRelease(h));  // still mapped: the memory stays until unmapped
  HIP_CHECK(hipMemcpy(host.data(), b, 16, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemUnmap(a, size));
  HIP_CHECK(hipMemUnmap(b, size));
  report("a copy from unmapped memory is refused",
         hipMemcpy(host.data(), b, 16, hipMemcpyDeviceToHost) == hipErrorInvalidValue);
  read_one<<<1, 1>>>(b, out);
  hipError_t launched = hipGetLastError();
  hipError_t synced = hipDeviceSynchronize();
  report("a kernel reading unmapped memory faults",
         launched == hipErrorIllegalAddress || synced == hipErrorIllegalAddress);
  report("the fault is sticky", hipDeviceSynchronize() == hipErrorIllegalAddress);
  HIP_CHECK(hipDeviceReset());
  HIP_CHECK(hipMemAddressFree(base, 4 * size));
  return finish();
}
