// build: -fgpu-default-stream=per-thread
// The per-thread default stream as programs built with -fgpu-default-stream=per-thread use it:
// every stream-less call (hipMemcpy, hipMemset, <<<>>>, hipStreamSynchronize(0)) is its `_spt`
// form on the calling thread's own stream. Four threads work at once, each checked against
// the host; a thread's stream does not wait for another thread's (a host function blocked on
// one thread's stream does not hold back another thread's synchronisation), and one thread's
// per-thread stream is the same stream all along. Arrays, 2D fills and 3D copies and fills go
// through their `_spt` forms too (the asynchronous ones, HIP 5.3's, called by name with a NULL
// stream), around a kernel, while another thread's stream is held.
#include "check.h"
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

// HIP 5.3's asynchronous _spt forms (not in HIP 5.2's headers): NULL is the thread's stream.
extern "C" {
hipError_t hipMemcpy2DToArrayAsync_spt(hipArray* dst, size_t wOffset, size_t hOffset,
                                       const void* src, size_t spitch, size_t width,
                                       size_t height, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpy2DFromArrayAsync_spt(void* dst, size_t dpitch, hipArray_const_t src,
                                         size_t wOffset, size_t hOffset, size_t width,
                                         size_t height, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpy3DAsync_spt(const hipMemcpy3DParms* p, hipStream_t stream);
hipError_t hipMemset3DAsync_spt(hipPitchedPtr pitchedDevPtr, int value, hipExtent extent,
                                hipStream_t stream);
hipError_t hipMemset2DAsync_spt(void* dst, size_t pitch, int value, size_t width, size_t height,
                                hipStream_t stream);
}

__global__ void affine(int* p, int n, int a, int b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * a + b;
}

__constant__ int c_offset;

static void* g_vol = nullptr;
static hipArray* g_arr = nullptr;

// v = v * 3 + (x + 10 y + 100 z) over a pitched volume of uint32_t.
__global__ void mix_volume(hipPitchedPtr vol, int w, int h, int d) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z;
  if (x >= w || y >= h || z >= d) return;
  uint32_t* row = (uint32_t*)((char*)vol.ptr + ((size_t)z * vol.ysize + y) * vol.pitch);
  row[x] = row[x] * 3u + (uint32_t)(x + 10 * y + 100 * z);
}

// Arrays, 2D/3D copies and fills through their _spt forms around a kernel, on this thread's
// stream, against a host model. Returns "" or what differs.
static const char* arrays_on_this_threads_stream() {
  const int W = 21, H = 7, D = 5;
  const size_t row = W * sizeof(uint32_t);
  std::vector<uint32_t> model(W * H * D), host(W * H * D), back(W * H * D);
  auto at = [&](int x, int y, int z) -> uint32_t& { return model[(z * H + y) * W + x]; };
  hipPitchedPtr vol;
  if (hipMalloc3D(&vol, make_hipExtent(row, H, D)) != hipSuccess) return "hipMalloc3D";
  // hipMemset3D_spt: every byte 0x11.
  if (hipMemset3D(vol, 0x11, make_hipExtent(row, H, D)) != hipSuccess) return "hipMemset3D";
  for (auto& v : model) v = 0x11111111u;
  // hipMemcpy3D_spt: an inner (W-2) x (H-2) x (D-2) box from the host, at (1, 1, 1).
  for (int i = 0; i < W * H * D; i++) host[i] = (uint32_t)(i * 2654435761u);
  hipMemcpy3DParms in = {};
  in.srcPtr = make_hipPitchedPtr(host.data(), row, W, H);
  in.srcPos = make_hipPos(sizeof(uint32_t), 1, 1);
  in.dstPtr = vol;
  in.dstPos = make_hipPos(sizeof(uint32_t), 1, 1);
  in.extent = make_hipExtent(row - 2 * sizeof(uint32_t), H - 2, D - 2);
  in.kind = hipMemcpyHostToDevice;
  if (hipMemcpy3D(&in) != hipSuccess) return "hipMemcpy3D";
  for (int z = 1; z < D - 1; z++)
    for (int y = 1; y < H - 1; y++)
      for (int x = 1; x < W - 1; x++) at(x, y, z) = host[(z * H + y) * W + x];
  // hipLaunchKernel_spt.
  mix_volume<<<dim3((W + 7) / 8, (H + 7) / 8, D), dim3(8, 8)>>>(vol, W, H, D);
  if (hipGetLastError() != hipSuccess) return "mix_volume launch";
  for (int z = 0; z < D; z++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) at(x, y, z) = at(x, y, z) * 3u + (uint32_t)(x + 10 * y + 100 * z);
  // hipMemset3DAsync_spt(NULL): the last slice's bytes 0x5a; hipMemset2DAsync_spt(NULL): the
  // first two rows of slice 0 from byte 4 on, 0x3c.
  hipPitchedPtr last = vol;
  last.ptr = (char*)vol.ptr + vol.pitch * vol.ysize * (D - 1);
  if (hipMemset3DAsync_spt(last, 0x5a, make_hipExtent(row, H, 1), nullptr) != hipSuccess)
    return "hipMemset3DAsync_spt";
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) at(x, y, D - 1) = 0x5a5a5a5au;
  if (hipMemset2DAsync_spt((char*)vol.ptr + 4, vol.pitch, 0x3c, row - 4, 2, nullptr) != hipSuccess)
    return "hipMemset2DAsync_spt";
  for (int y = 0; y < 2; y++)
    for (int x = 1; x < W; x++) at(x, y, 0) = 0x3c3c3c3cu;
  // hipMemcpy3DAsync_spt(NULL): the whole volume back.
  hipMemcpy3DParms out = {};
  out.srcPtr = vol;
  out.dstPtr = make_hipPitchedPtr(back.data(), row, W, H);
  out.extent = make_hipExtent(row, H, D);
  out.kind = hipMemcpyDeviceToHost;
  if (hipMemcpy3DAsync_spt(&out, nullptr) != hipSuccess) return "hipMemcpy3DAsync_spt";
  if (hipStreamSynchronize(0) != hipSuccess) return "hipStreamSynchronize";
  if (back != model) return "the volume differs from the host model";

  // A 2D array from slice 2 (hipMemcpy2DToArray_spt), a patch from the host
  // (hipMemcpy2DToArrayAsync_spt), read back whole (hipMemcpy2DFromArray_spt) and a window of
  // it (hipMemcpy2DFromArrayAsync_spt).
  hipChannelFormatDesc desc = hipCreateChannelDesc<uint32_t>();
  hipArray* arr = nullptr;
  if (hipMallocArray(&arr, &desc, W, H) != hipSuccess) return "hipMallocArray";
  const char* slice2 = (const char*)vol.ptr + vol.pitch * vol.ysize * 2;
  std::vector<uint32_t> plane(W * H), got(W * H);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) plane[y * W + x] = at(x, y, 2);
  if (hipMemcpy2DToArray(arr, 0, 0, slice2, vol.pitch, row, H, hipMemcpyDeviceToDevice) !=
      hipSuccess)
    return "hipMemcpy2DToArray";
  uint32_t patch[3 * 4];
  for (int i = 0; i < 12; i++) patch[i] = 0xabc000u + i;
  if (hipMemcpy2DToArrayAsync_spt(arr, 5 * sizeof(uint32_t), 2, patch, 4 * sizeof(uint32_t),
                                  4 * sizeof(uint32_t), 3, hipMemcpyHostToDevice,
                                  nullptr) != hipSuccess)
    return "hipMemcpy2DToArrayAsync_spt";
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 4; x++) plane[(y + 2) * W + x + 5] = patch[y * 4 + x];
  if (hipMemcpy2DFromArray(got.data(), row, arr, 0, 0, row, H, hipMemcpyDeviceToHost) !=
      hipSuccess)
    return "hipMemcpy2DFromArray";
  if (got != plane) return "the array differs from the host model";
  uint32_t window[2 * 6] = {};
  if (hipMemcpy2DFromArrayAsync_spt(window, 6 * sizeof(uint32_t), arr, 3 * sizeof(uint32_t), 4,
                                    6 * sizeof(uint32_t), 2, hipMemcpyDeviceToHost,
                                    nullptr) != hipSuccess)
    return "hipMemcpy2DFromArrayAsync_spt";
  if (hipStreamSynchronize(0) != hipSuccess) return "hipStreamSynchronize";
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 6; x++)
      if (window[y * 6 + x] != plane[(y + 4) * W + x + 3]) return "the window differs";
  // Freed by the caller once every thread's stream may finish (hipFree waits for the device).
  g_vol = vol.ptr;
  g_arr = arr;
  return "";
}

__global__ void add_offset(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += c_offset;
}

static bool worker(int t) {
  const int n = 3000 + 517 * t;
  int* d = nullptr;
  if (hipMalloc(&d, n * sizeof(int)) != hipSuccess) return false;
  std::vector<int> h(n), back(n);
  for (int i = 0; i < n; i++) h[i] = i * (t + 1) - 7;
  bool ok = hipMemset(d, 0xff, n * sizeof(int)) == hipSuccess;
  ok &= hipMemcpy(back.data(), d, n * sizeof(int), hipMemcpyDeviceToHost) == hipSuccess;
  for (int i = 0; i < n && ok; i++) ok &= back[i] == -1;
  ok &= hipMemcpy(d, h.data(), n * sizeof(int), hipMemcpyHostToDevice) == hipSuccess;
  for (int round = 0; round < 5; round++) {
    affine<<<(n + 63) / 64, 64>>>(d, n, 3, t - round);
    for (int i = 0; i < n; i++) h[i] = h[i] * 3 + (t - round);
  }
  ok &= hipGetLastError() == hipSuccess;
  ok &= hipStreamSynchronize(0) == hipSuccess;
  ok &= hipStreamQuery(0) == hipSuccess;
  ok &= hipMemcpy(back.data(), d, n * sizeof(int), hipMemcpyDeviceToHost) == hipSuccess;
  for (int i = 0; i < n && ok; i++) ok &= back[i] == h[i];
  unsigned flags = 99;
  ok &= hipStreamGetFlags(0, &flags) == hipSuccess && flags == 0;
  ok &= hipFree(d) == hipSuccess;
  return ok;
}

int main() {
  // Four threads at once, each on its own stream.
  {
    std::vector<std::thread> threads;
    std::atomic<int> good{0};
    for (int t = 0; t < 4; t++)
      threads.emplace_back([t, &good] { good += worker(t) ? 1 : 0; });
    for (auto& th : threads) th.join();
    report("four threads on their own per-thread streams", good == 4);
  }

  // Thread A's stream holds a host function until thread B has synchronised its own stream
  // and seen its kernel's result: with one shared stream B would wait for A, and A for B.
  {
    static std::atomic<bool> released{false};
    static std::atomic<bool> timed_out{false};
    auto hold = [](void*) {
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!released.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!released.load()) timed_out = true;
    };
    hipError_t a_status = hipErrorUnknown;
    std::atomic<bool> a_held{false};
    std::thread a([&] {
      hipError_t e = hipLaunchHostFunc(hipStreamPerThread, hold, nullptr);
      a_held = true;
      if (e == hipSuccess) e = hipStreamSynchronize(0);
      a_status = e;
    });
    while (!a_held.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    bool b_ok = false;
    int* d = nullptr;
    std::thread b([&] {
      const int n = 1000;
      std::vector<int> h(n, 5), back(n);
      b_ok = hipMalloc(&d, n * sizeof(int)) == hipSuccess &&
             hipMemcpy(d, h.data(), n * sizeof(int), hipMemcpyHostToDevice) == hipSuccess;
      affine<<<(n + 255) / 256, 256>>>(d, n, 7, 1);
      b_ok &= hipStreamSynchronize(0) == hipSuccess;
      b_ok &= hipMemcpy(back.data(), d, n * sizeof(int), hipMemcpyDeviceToHost) == hipSuccess;
      for (int i = 0; i < n; i++) b_ok &= back[i] == 5 * 7 + 1;
      b_ok &= !released.load();
    });
    b.join();
    released = true;
    a.join();
    // hipFree waits for the whole device, A's stream included: only after the release.
    HIP_CHECK(hipFree(d));
    report("a thread's stream does not wait for another thread's", b_ok && !timed_out);
    report("the held stream finishes once released", a_status == hipSuccess);
  }

  // Arrays, 2D fills and 3D copies through their _spt forms in thread B while thread A's
  // stream is held: on the legacy null stream they would wait for A.
  {
    static std::atomic<bool> released{false};
    static std::atomic<bool> timed_out{false};
    auto hold = [](void*) {
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!released.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!released.load()) timed_out = true;
    };
    hipError_t a_status = hipErrorUnknown;
    std::atomic<bool> a_held{false};
    std::thread a([&] {
      hipError_t e = hipLaunchHostFunc(hipStreamPerThread, hold, nullptr);
      a_held = true;
      if (e == hipSuccess) e = hipStreamSynchronize(0);
      a_status = e;
    });
    while (!a_held.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const char* b_error = "not run";
    bool b_before_release = false;
    std::thread b([&] {
      b_error = arrays_on_this_threads_stream();
      b_before_release = !released.load();
    });
    b.join();
    released = true;
    a.join();
    char detail[160];
    snprintf(detail, sizeof detail, "%s%s%s", b_error,
             b_before_release ? "" : "; waited for another thread's stream",
             timed_out ? "; the held stream timed out" : "");
    report("arrays, 2D fills and 3D copies through their _spt forms around a kernel",
           b_error[0] == 0 && b_before_release && !timed_out && a_status == hipSuccess, detail);
    if (g_arr) HIP_CHECK(hipFreeArray(g_arr));
    if (g_vol) HIP_CHECK(hipFree(g_vol));
  }

  // Symbols and 2D operations through their _spt forms, on this thread's stream.
  {
    const int w = 40, rows = 6, n = w * rows;
    int* d = nullptr;
    size_t pitch = 0;
    HIP_CHECK(hipMallocPitch((void**)&d, &pitch, w * sizeof(int), rows));
    std::vector<int> h(n), back(n);
    for (int i = 0; i < n; i++) h[i] = i * i % 977;
    HIP_CHECK(hipMemset2D(d, pitch, 0, w * sizeof(int), rows));
    HIP_CHECK(hipMemcpy2D(d, pitch, h.data(), w * sizeof(int), w * sizeof(int), rows,
                          hipMemcpyHostToDevice));
    int offset = 1234;
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_offset), &offset, sizeof offset));
    for (int r = 0; r < rows; r++)
      add_offset<<<1, 64>>>((int*)((char*)d + r * pitch), w);
    int read_back = 0;
    HIP_CHECK(hipMemcpyFromSymbol(&read_back, HIP_SYMBOL(c_offset), sizeof read_back));
    HIP_CHECK(hipMemcpy2D(back.data(), w * sizeof(int), d, pitch, w * sizeof(int), rows,
                          hipMemcpyDeviceToHost));
    bool ok = read_back == offset;
    for (int i = 0; i < n; i++) ok &= back[i] == h[i] + offset;
    report("symbols and 2D copies on the per-thread stream", ok);
    HIP_CHECK(hipFree(d));
  }

  // hipStreamPerThread is a stream of its own: not the null stream's flags or priority
  // errors, and it cannot be destroyed.
  {
    int priority = 99;
    HIP_CHECK(hipStreamGetPriority(hipStreamPerThread, &priority));
    report("the per-thread stream has the normal priority", priority == 0);
    report("the per-thread stream cannot be destroyed",
           hipStreamDestroy(hipStreamPerThread) != hipSuccess);
    (void)hipGetLastError();
  }
  return finish();
}
