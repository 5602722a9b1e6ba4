// External memory and semaphores (opaque POSIX descriptors), checked against the host:
// - a memory object made here as another API would (memfd, sealed against shrinking), filled
//   through the host's own mapping, imported; a buffer mapped at an offset that is not a page
//   boundary is scaled by a kernel, and the host's mapping of the object sees exactly the
//   bytes of the buffer changed; hipMemcpy from the buffer agrees; hipFree of the buffer; the
//   refusals (NULL arguments, Windows handle types, undefined types, flags, a size past the
//   object, an unsealed memfd, a range past the import);
// - an eventfd semaphore: a stream waits for it, and a child process (fork) signals it; the
//   kernel queued after the wait must not have run before; a kernel's signal is waited for by
//   the child, which then checks the kernel's result through its own mapping of the memory
//   object and reports through its exit status; the refusals (pipes, Windows types); a signal
//   captured into a graph node (HIP 5.3's) signals when the graph runs.
// With EXTERNAL_EXPECT_UNSUPPORTED=1 (the run through ROCr's API, which cannot import such
// memory here) the memory import must say it is not supported; the semaphores still work.
#include "check.h"
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

__global__ void scale(float* p, int n, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * k + 1.0f;
}

__global__ void mark(int* p, int value) { *p = value; }

static const size_t kObjectBytes = 5 * 4096 + 100;  // not a multiple of the page size
static const size_t kOffsetFloats = 1000;           // 4000 bytes: not a page boundary
static const int kN = 3000;                         // floats in the buffer

static int memfd(size_t bytes, bool seal) {
  int fd = memfd_create("external-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) return -1;
  if (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) return -1;
  return fd;
}

static hipExternalMemoryHandleDesc memory_desc(int fd, size_t size) {
  hipExternalMemoryHandleDesc d;
  memset(&d, 0, sizeof d);
  d.type = hipExternalMemoryHandleTypeOpaqueFd;
  d.handle.fd = fd;
  d.size = size;
  return d;
}

static hipExternalSemaphoreHandleDesc semaphore_desc(int fd) {
  hipExternalSemaphoreHandleDesc d;
  memset(&d, 0, sizeof d);
  d.type = hipExternalSemaphoreHandleTypeOpaqueFd;
  d.handle.fd = fd;
  return d;
}

// Waits up to `ms` for the eventfd to be signalled and takes the signal.
static bool take(int fd, int ms) {
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1) return false;
  uint64_t v = 0;
  return read(fd, &v, 8) == 8 && v >= 1;
}

static void external_memory(bool unsupported) {
  int fd = memfd(kObjectBytes, true);
  report("a sealed memfd", fd >= 0);
  float* host = (float*)mmap(nullptr, kObjectBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  report("the host maps it", host != MAP_FAILED);
  size_t floats = kObjectBytes / 4;
  for (size_t i = 0; i < floats; i++) host[i] = (float)(i % 977) * 0.5f;

  hipExternalMemory_t ext = nullptr;
  hipExternalMemoryHandleDesc desc = memory_desc(fd, kObjectBytes);
  hipError_t e = hipImportExternalMemory(&ext, &desc);
  if (unsupported) {
    report("import says it is not supported", e == hipErrorNotSupported);
    munmap(host, kObjectBytes);
    close(fd);
    return;
  }
  HIP_CHECK(e);

  hipExternalMemoryBufferDesc buf;
  memset(&buf, 0, sizeof buf);
  buf.offset = kOffsetFloats * 4;
  buf.size = kN * 4;
  float* d = nullptr;
  HIP_CHECK(hipExternalMemoryGetMappedBuffer((void**)&d, ext, &buf));
  hipPointerAttribute_t attr;
  HIP_CHECK(hipPointerGetAttributes(&attr, d));
  report("the buffer is device memory", attr.memoryType == hipMemoryTypeDevice);

  hipLaunchKernelGGL(scale, dim3((kN + 255) / 256), dim3(256), 0, 0, d, kN, 3.0f);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  int wrong = 0;
  for (size_t i = 0; i < floats; i++) {
    float before = (float)(i % 977) * 0.5f;
    bool inside = i >= kOffsetFloats && i < kOffsetFloats + kN;
    float expect = inside ? before * 3.0f + 1.0f : before;
    if (host[i] != expect) wrong++;
  }
  report("the kernel changed exactly the buffer's bytes of the object", wrong == 0);
  float back[kN];
  HIP_CHECK(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
  report("hipMemcpy from the buffer reads the object", memcmp(back, host + kOffsetFloats, sizeof back) == 0);

  // A second buffer of the same memory: the same bytes at another address.
  buf.offset = (kOffsetFloats + 10) * 4;
  buf.size = 16;
  float* d2 = nullptr;
  HIP_CHECK(hipExternalMemoryGetMappedBuffer((void**)&d2, ext, &buf));
  float four[4];
  HIP_CHECK(hipMemcpy(four, d2, 16, hipMemcpyDeviceToHost));
  report("a second buffer sees the same bytes", d2 != d + 10 && memcmp(four, host + kOffsetFloats + 10, 16) == 0);
  report("a copy past the second buffer is refused",
         hipMemcpy(four, d2 + 1, 16, hipMemcpyDeviceToHost) != hipSuccess);

  // Refusals.
  buf.offset = kObjectBytes - 8;
  buf.size = 16;
  report("a buffer past the import is refused",
         hipExternalMemoryGetMappedBuffer((void**)&d2, ext, &buf) == hipErrorInvalidValue);
  buf.offset = 0;
  buf.size = 16;
  buf.flags = 1;
  report("buffer flags are refused",
         hipExternalMemoryGetMappedBuffer((void**)&d2, ext, &buf) == hipErrorInvalidValue);
  buf.flags = 0;
  report("a NULL devPtr is refused",
         hipExternalMemoryGetMappedBuffer(nullptr, ext, &buf) == hipErrorInvalidValue);
  report("a NULL buffer descriptor is refused",
         hipExternalMemoryGetMappedBuffer((void**)&d2, ext, nullptr) == hipErrorInvalidValue);
  hipExternalMemory_t other = nullptr;
  report("a NULL output is refused", hipImportExternalMemory(nullptr, &desc) == hipErrorInvalidValue);
  report("a NULL descriptor is refused", hipImportExternalMemory(&other, nullptr) == hipErrorInvalidValue);
  hipExternalMemoryHandleDesc bad = desc;
  bad.type = hipExternalMemoryHandleTypeOpaqueWin32;
  report("a Windows handle is not supported", hipImportExternalMemory(&other, &bad) == hipErrorNotSupported);
  bad.type = (hipExternalMemoryHandleType)99;
  report("an undefined handle type is refused", hipImportExternalMemory(&other, &bad) == hipErrorInvalidValue);
  bad = desc;
  bad.size = kObjectBytes + 1;
  report("a size past the object is refused", hipImportExternalMemory(&other, &bad) == hipErrorInvalidValue);
  bad = desc;
  bad.flags = 4;
  report("undefined flags are refused", hipImportExternalMemory(&other, &bad) == hipErrorInvalidValue);
  int unsealed = memfd(4096, false);
  bad = memory_desc(unsealed, 4096);
  report("an unsealed memfd is refused (it could shrink under a kernel)",
         hipImportExternalMemory(&other, &bad) == hipErrorInvalidValue);
  close(unsealed);

  HIP_CHECK(hipFree(d2));
  HIP_CHECK(hipDestroyExternalMemory(ext));
  report("destroying twice is refused", hipDestroyExternalMemory(ext) == hipErrorInvalidValue);
  // The first buffer outlives its external memory until hipFree.
  hipLaunchKernelGGL(scale, dim3((kN + 255) / 256), dim3(256), 0, 0, d, kN, 1.0f);
  HIP_CHECK(hipDeviceSynchronize());
  report("a buffer outlives its external memory",
         host[kOffsetFloats] == ((float)(kOffsetFloats % 977) * 0.5f * 3.0f + 1.0f) + 1.0f);
  HIP_CHECK(hipFree(d));
  report("a freed buffer is no pointer any more", hipPointerGetAttributes(&attr, d) != hipSuccess);
  report("the caller keeps its descriptor", fcntl(fd, F_GETFD) >= 0);
  munmap(host, kObjectBytes);
  close(fd);
}

static void external_semaphores(bool unsupported) {
  int efd = eventfd(0, EFD_CLOEXEC);
  report("an eventfd", efd >= 0);
  hipExternalSemaphore_t sem = nullptr;
  hipExternalSemaphoreHandleDesc desc = semaphore_desc(efd);
  HIP_CHECK(hipImportExternalSemaphore(&sem, &desc));
  report("the caller keeps its descriptor", fcntl(efd, F_GETFD) >= 0);

  // Non-blocking: the null stream's copies below must not wait for the waiting stream.
  hipStream_t s;
  HIP_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  int* flag = nullptr;
  HIP_CHECK(hipMalloc(&flag, sizeof(int)));
  HIP_CHECK(hipMemset(flag, 0, sizeof(int)));

  // A stream waits; a child process signals after a while.
  hipExternalSemaphoreWaitParams wp;
  memset(&wp, 0, sizeof wp);
  HIP_CHECK(hipWaitExternalSemaphoresAsync(&sem, &wp, 1, s));
  hipLaunchKernelGGL(mark, dim3(1), dim3(1), 0, s, flag, 42);
  HIP_CHECK(hipGetLastError());
  usleep(100 * 1000);
  report("the stream waits for the semaphore", hipStreamQuery(s) == hipErrorNotReady);
  int seen = -1;
  HIP_CHECK(hipMemcpy(&seen, flag, sizeof seen, hipMemcpyDeviceToHost));
  report("the kernel after the wait has not run", seen == 0);
  pid_t child = fork();
  if (child == 0) {
    uint64_t one = 1;
    _exit(write(efd, &one, 8) == 8 ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  report("the child signalled", WIFEXITED(status) && WEXITSTATUS(status) == 0);
  HIP_CHECK(hipStreamSynchronize(s));
  HIP_CHECK(hipMemcpy(&seen, flag, sizeof seen, hipMemcpyDeviceToHost));
  report("after the child's signal the kernel ran", seen == 42);

  // A kernel, then a signal: a child waiting for the signal sees the kernel's result in
  // memory both processes map.
  int mfd = memfd(4096, true);
  int* shared = (int*)mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
  shared[0] = 0;
  int* dev_shared = shared;
  hipExternalMemory_t ext = nullptr;
  hipExternalMemoryHandleDesc md = memory_desc(mfd, 4096);
  bool have_memory = !unsupported && hipImportExternalMemory(&ext, &md) == hipSuccess;
  if (have_memory) {
    hipExternalMemoryBufferDesc bd;
    memset(&bd, 0, sizeof bd);
    bd.size = 4096;
    HIP_CHECK(hipExternalMemoryGetMappedBuffer((void**)&dev_shared, ext, &bd));
  }
  child = fork();
  if (child == 0) {
    if (!take(efd, 20000)) _exit(2);
    _exit(shared[0] == 777 ? 0 : 3);
  }
  hipExternalSemaphoreSignalParams sp;
  memset(&sp, 0, sizeof sp);
  if (have_memory) {
    hipLaunchKernelGGL(mark, dim3(1), dim3(1), 0, s, dev_shared, 777);
  } else {
    // Without external memory, the stream writes the shared page from the host side.
    hipLaunchKernelGGL(mark, dim3(1), dim3(1), 0, s, flag, 777);
    HIP_CHECK(hipMemcpyAsync(shared, flag, sizeof(int), hipMemcpyDeviceToHost, s));
  }
  HIP_CHECK(hipSignalExternalSemaphoresAsync(&sem, &sp, 1, s));
  waitpid(child, &status, 0);
  report("the child saw the kernel's result after the signal",
         WIFEXITED(status) && WEXITSTATUS(status) == 0);
  HIP_CHECK(hipStreamSynchronize(s));
  if (have_memory) {
    HIP_CHECK(hipFree(dev_shared));
    HIP_CHECK(hipDestroyExternalMemory(ext));
  }
  munmap(shared, 4096);
  close(mfd);

  // Refusals.
  hipExternalSemaphore_t other = nullptr;
  int pipe_fds[2];
  report("a pipe", pipe(pipe_fds) == 0);
  hipExternalSemaphoreHandleDesc bad = semaphore_desc(pipe_fds[0]);
  report("a pipe is no semaphore", hipImportExternalSemaphore(&other, &bad) == hipErrorInvalidValue);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  bad = desc;
  bad.type = hipExternalSemaphoreHandleTypeD3D12Fence;
  report("a D3D12 fence is not supported", hipImportExternalSemaphore(&other, &bad) == hipErrorNotSupported);
  bad.type = (hipExternalSemaphoreHandleType)77;
  report("an undefined type is refused", hipImportExternalSemaphore(&other, &bad) == hipErrorInvalidValue);
  report("a NULL descriptor is refused", hipImportExternalSemaphore(&other, nullptr) == hipErrorInvalidValue);
  report("NULL parameters are refused", hipSignalExternalSemaphoresAsync(&sem, nullptr, 1, s) == hipErrorInvalidValue);
  sp.flags = 1;
  report("parameter flags are refused", hipSignalExternalSemaphoresAsync(&sem, &sp, 1, s) == hipErrorInvalidValue);
  sp.flags = 0;
  hipStream_t cap;
  HIP_CHECK(hipStreamCreate(&cap));
  HIP_CHECK(hipStreamBeginCapture(cap, hipStreamCaptureModeGlobal));
  HIP_CHECK(hipSignalExternalSemaphoresAsync(&sem, &sp, 1, cap));
  hipGraph_t g = nullptr;
  HIP_CHECK(hipStreamEndCapture(cap, &g));
  size_t captured_nodes = 0;
  HIP_CHECK(hipGraphGetNodes(g, nullptr, &captured_nodes));
  report("nothing was signalled by the refused calls or the capture", !take(efd, 0));
  hipGraphExec_t ge;
  HIP_CHECK(hipGraphInstantiate(&ge, g, nullptr, nullptr, 0));
  HIP_CHECK(hipGraphLaunch(ge, cap));
  HIP_CHECK(hipStreamSynchronize(cap));
  report("a signal captured is a graph node (HIP 5.3's) that signals when launched",
         captured_nodes == 1 && take(efd, 0));
  HIP_CHECK(hipGraphExecDestroy(ge));
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipStreamDestroy(cap));

  HIP_CHECK(hipDestroyExternalSemaphore(sem));
  report("a destroyed semaphore is refused", hipSignalExternalSemaphoresAsync(&sem, &sp, 1, s) == hipErrorInvalidValue);
  report("destroying twice is refused", hipDestroyExternalSemaphore(sem) == hipErrorInvalidValue);
  HIP_CHECK(hipFree(flag));
  HIP_CHECK(hipStreamDestroy(s));
  close(efd);
}

int main() {
  const char* env = getenv("EXTERNAL_EXPECT_UNSUPPORTED");
  bool unsupported = env && *env == '1';
  external_memory(unsupported);
  external_semaphores(unsupported);
  return finish();
}
