// Pitched memory, 3D memory and HIP arrays: hipMallocPitch, hipMalloc3D, hipMemset2D/3D,
// hipMemcpy2D/3D (sync and async, with positions), arrays (1D, 2D, 3D, layered, 4-channel, the
// driver API's HIP_MEMCPY3D and hip_Memcpy2D, mipmapped levels), and kernels reading the
// pitched and 3D data. Every result is compared with the same computation on a host model of
// the device memory; a few bad calls must fail with HIP's codes.
#include "check.h"
#include <vector>

// hipMemcpyToArray and hipMemcpyFromArray are deprecated, and tested all the same.
#pragma clang diagnostic ignored "-Wdeprecated-declarations"

__global__ void scale_pitched(const char* base, size_t pitch, int w, int h, float* out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    const float* row = (const float*)(base + y * pitch);
    out[y * w + x] = row[x] * 2.0f + 1.0f;
  }
}

// out[y][x] = sum over z of vol[z][y][x] (weighted by z + 1), vol pitched (pitch, ysize rows).
__global__ void sum_depth(hipPitchedPtr vol, int w, int h, int d, int* out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  int acc = 0;
  for (int z = 0; z < d; z++) {
    const int* row = (const int*)((const char*)vol.ptr + ((size_t)z * vol.ysize + y) * vol.pitch);
    acc += row[x] * (z + 1);
  }
  out[y * w + x] = acc;
}

// Adds 1000 * (z + 1) to every element of a pitched float volume, in place.
__global__ void bump_volume(hipPitchedPtr vol, int w, int h, int d) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z;
  if (x >= w || y >= h || z >= d) return;
  float* row = (float*)((char*)vol.ptr + ((size_t)z * vol.ysize + y) * vol.pitch);
  row[x] += 1000.0f * (z + 1);
}

static bool same_bytes(const void* a, const void* b, size_t n, const char* what) {
  if (memcmp(a, b, n) == 0) return true;
  const unsigned char *p = (const unsigned char*)a, *q = (const unsigned char*)b;
  for (size_t i = 0; i < n; i++)
    if (p[i] != q[i]) {
      printf("  %s: byte %zu differs: %u, expected %u\n", what, i, p[i], q[i]);
      break;
    }
  return false;
}

// hipMallocPitch + hipMemcpy2D + hipMemset2D, then a kernel reading the pitched rows.
static void pitched_2d() {
  const int W = 37, H = 19;
  float* dev;
  size_t pitch = 0;
  HIP_CHECK(hipMallocPitch((void**)&dev, &pitch, W * sizeof(float), H));
  bool ok = pitch >= W * sizeof(float) && pitch % 256 == 0;
  std::vector<float> host(W * H), expect(W * H), got(W * H);
  for (int i = 0; i < W * H; i++) host[i] = (float)((i * 7) % 23) - 5.5f;
  HIP_CHECK(hipMemcpy2D(dev, pitch, host.data(), W * sizeof(float), W * sizeof(float), H,
                        hipMemcpyHostToDevice));
  // Rows 3..5, bytes [8, 8 + 40) of each: 0x3f3f3f3f, a float of about 0.747.
  HIP_CHECK(hipMemset2D((char*)dev + 3 * pitch + 8, pitch, 0x3f, 40, 3));
  std::vector<float> model = host;
  for (int y = 3; y < 6; y++) memset((char*)&model[y * W] + 8, 0x3f, 40);
  float* out;
  HIP_CHECK(hipMalloc(&out, W * H * sizeof(float)));
  scale_pitched<<<dim3((W + 15) / 16, (H + 7) / 8), dim3(16, 8)>>>((const char*)dev, pitch, W, H, out);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(got.data(), out, W * H * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < W * H; i++) expect[i] = model[i] * 2.0f + 1.0f;
  ok &= same_bytes(got.data(), expect.data(), got.size() * 4, "pitched 2D");
  // And back through hipMemcpy2D into a wider host pitch.
  std::vector<float> wide(64 * H, -1.0f), wide_model(64 * H, -1.0f);
  HIP_CHECK(hipMemcpy2D(wide.data(), 64 * sizeof(float), dev, pitch, W * sizeof(float), H,
                        hipMemcpyDeviceToHost));
  for (int y = 0; y < H; y++) memcpy(&wide_model[y * 64], &model[y * W], W * sizeof(float));
  ok &= same_bytes(wide.data(), wide_model.data(), wide.size() * 4, "pitched 2D back");
  report("hipMallocPitch + hipMemcpy2D + hipMemset2D + kernel", ok);
  HIP_CHECK(hipFree(out));
  HIP_CHECK(hipFree(dev));
}

// hipMalloc3D, hipMemset3D (whole and a sub-box), hipMemcpy3D into a sub-box with positions,
// a kernel summing over depth; async forms on one stream with a kernel between them.
static void pitched_3d() {
  const int W = 21, H = 13, D = 7;
  hipPitchedPtr vol;
  HIP_CHECK(hipMalloc3D(&vol, make_hipExtent(W * sizeof(int), H, D)));
  bool ok = vol.pitch >= W * sizeof(int) && vol.xsize == W * sizeof(int) && vol.ysize == (size_t)H;
  // Host model: D x H x pitch bytes.
  const size_t P = vol.pitch, slice = P * H;
  std::vector<unsigned char> model(slice * D);
  HIP_CHECK(hipMemset3D(vol, 0x01, make_hipExtent(W * sizeof(int), H, D)));
  for (int z = 0; z < D; z++)
    for (int y = 0; y < H; y++) memset(&model[z * slice + y * P], 0x01, W * sizeof(int));
  // A sub-box: bytes [12, 12 + 20) of rows 2..6 of slices 1..4, value 0x02.
  hipPitchedPtr sub = vol;
  sub.ptr = (char*)vol.ptr + 1 * slice + 2 * P + 12;
  HIP_CHECK(hipMemset3D(sub, 0x02, make_hipExtent(20, 5, 4)));
  for (int z = 1; z < 5; z++)
    for (int y = 2; y < 7; y++) memset(&model[z * slice + y * P + 12], 0x02, 20);
  // Copy a 5 x 4 x 3 block of a host volume (at (2, 1, 1) of it) to (9, 6, 3) of the device's.
  const int HW = 11, HH = 9, HD = 6;
  std::vector<int> src(HW * HH * HD);
  for (int i = 0; i < (int)src.size(); i++) src[i] = i * 31 - 400;
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(src.data(), HW * sizeof(int), HW, HH);
  p.srcPos = make_hipPos(2 * sizeof(int), 1, 1);
  p.dstPtr = vol;
  p.dstPos = make_hipPos(9 * sizeof(int), 6, 3);
  p.extent = make_hipExtent(5 * sizeof(int), 4, 3);
  p.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  for (int z = 0; z < 3; z++)
    for (int y = 0; y < 4; y++)
      memcpy(&model[(3 + z) * slice + (6 + y) * P + 9 * sizeof(int)],
             &src[((1 + z) * HH + 1 + y) * HW + 2], 5 * sizeof(int));
  // The kernel reads the pitched volume.
  int* out;
  HIP_CHECK(hipMalloc(&out, W * H * sizeof(int)));
  sum_depth<<<dim3((W + 7) / 8, (H + 7) / 8), dim3(8, 8)>>>(vol, W, H, D, out);
  HIP_CHECK(hipGetLastError());
  std::vector<int> got(W * H), expect(W * H, 0);
  HIP_CHECK(hipMemcpy(got.data(), out, W * H * sizeof(int), hipMemcpyDeviceToHost));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int z = 0; z < D; z++) {
        int v;
        memcpy(&v, &model[z * slice + y * P + x * sizeof(int)], 4);
        expect[y * W + x] += v * (z + 1);
      }
  ok &= same_bytes(got.data(), expect.data(), got.size() * 4, "sum over depth");
  // The whole volume back, device to host, packed.
  std::vector<int> back(W * H * D), back_model(W * H * D);
  hipMemcpy3DParms q = {};
  q.srcPtr = vol;
  q.dstPtr = make_hipPitchedPtr(back.data(), W * sizeof(int), W, H);
  q.extent = make_hipExtent(W * sizeof(int), H, D);
  q.kind = hipMemcpyDeviceToHost;
  HIP_CHECK(hipMemcpy3D(&q));
  for (int z = 0; z < D; z++)
    for (int y = 0; y < H; y++)
      memcpy(&back_model[(z * H + y) * W], &model[z * slice + y * P], W * sizeof(int));
  ok &= same_bytes(back.data(), back_model.data(), back.size() * 4, "3D device to host");
  report("hipMalloc3D + hipMemset3D + hipMemcpy3D + kernel", ok);

  // Async on one stream: memset, copy, kernel, copy back; ordered by the stream alone.
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  hipPitchedPtr f;
  HIP_CHECK(hipMalloc3D(&f, make_hipExtent(W * sizeof(float), H, D)));
  HIP_CHECK(hipMemset3DAsync(f, 0, make_hipExtent(W * sizeof(float), H, D), s));
  std::vector<float> fh(W * H * D), fb(W * H * D), fexp(W * H * D);
  for (int i = 0; i < (int)fh.size(); i++) fh[i] = 0.25f * i;
  hipMemcpy3DParms a = {};
  a.srcPtr = make_hipPitchedPtr(fh.data(), W * sizeof(float), W, H);
  a.dstPtr = f;
  a.extent = make_hipExtent(W * sizeof(float), H, D);
  a.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3DAsync(&a, s));
  bump_volume<<<dim3((W + 7) / 8, (H + 7) / 8, D), dim3(8, 8), 0, s>>>(f, W, H, D);
  hipMemcpy3DParms b = {};
  b.srcPtr = f;
  b.dstPtr = make_hipPitchedPtr(fb.data(), W * sizeof(float), W, H);
  b.extent = make_hipExtent(W * sizeof(float), H, D);
  b.kind = hipMemcpyDeviceToHost;
  HIP_CHECK(hipMemcpy3DAsync(&b, s));
  HIP_CHECK(hipStreamSynchronize(s));
  for (int z = 0; z < D; z++)
    for (int i = 0; i < W * H; i++) fexp[z * W * H + i] = fh[z * W * H + i] + 1000.0f * (z + 1);
  report("hipMemset3DAsync + hipMemcpy3DAsync + kernel in stream order",
         same_bytes(fb.data(), fexp.data(), fb.size() * 4, "async 3D"));
  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(f.ptr));
  HIP_CHECK(hipFree(out));
  HIP_CHECK(hipFree(vol.ptr));
}

// 1D and 2D arrays: every copy in and out, the record's fields, a kernel on data copied out
// to pitched memory device to device.
static void arrays_2d() {
  const int W = 29, H = 11;
  hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
  hipArray* arr;
  HIP_CHECK(hipMallocArray(&arr, &desc, W, H, hipArrayDefault));
  bool fields = arr->width == (unsigned)W && arr->height == (unsigned)H && arr->depth == 0 &&
                arr->NumChannels == 1 && arr->Format == HIP_AD_FORMAT_FLOAT && arr->desc.x == 32 &&
                arr->desc.f == hipChannelFormatKindFloat;
  report("hipMallocArray fills HIP 5.2's hipArray record", fields);
  std::vector<float> host(W * H), model(W * H), got(W * H, 0.0f);
  for (int i = 0; i < W * H; i++) host[i] = 1.5f * i - 17.0f;
  // Host rows with a wider pitch into the array.
  std::vector<float> padded(40 * H);
  for (int y = 0; y < H; y++) memcpy(&padded[y * 40], &host[y * W], W * 4);
  HIP_CHECK(hipMemcpy2DToArray(arr, 0, 0, padded.data(), 40 * 4, W * 4, H, hipMemcpyHostToDevice));
  model = host;
  // A 6 x 3 block at (texel 4, row 5), from a packed host block.
  float block[18];
  for (int i = 0; i < 18; i++) block[i] = -100.0f - i;
  HIP_CHECK(hipMemcpy2DToArray(arr, 4 * 4, 5, block, 6 * 4, 6 * 4, 3, hipMemcpyHostToDevice));
  for (int y = 0; y < 3; y++) memcpy(&model[(5 + y) * W + 4], &block[y * 6], 24);
  // hipMemcpyHtoA at byte 4 * (2 * W + 3): 10 floats running on over a row boundary.
  float run[10];
  for (int i = 0; i < 10; i++) run[i] = 500.0f + i;
  size_t at = (2 * W + W - 5) * 4;
  HIP_CHECK(hipMemcpyHtoA(arr, at, run, sizeof(run)));
  memcpy((char*)model.data() + at, run, sizeof(run));
  // hipMemcpyToArray at (texel 1, row 9), 7 floats.
  HIP_CHECK(hipMemcpyToArray(arr, 4, 9, run, 7 * 4, hipMemcpyHostToDevice));
  memcpy(&model[9 * W + 1], run, 28);
  HIP_CHECK(hipMemcpy2DFromArray(got.data(), W * 4, arr, 0, 0, W * 4, H, hipMemcpyDeviceToHost));
  bool ok = same_bytes(got.data(), model.data(), got.size() * 4, "2D array");
  float part[12];
  HIP_CHECK(hipMemcpyAtoH(part, arr, 4 * 20, sizeof(part)));
  ok &= same_bytes(part, &model[20], sizeof(part), "hipMemcpyAtoH");
  HIP_CHECK(hipMemcpyFromArray(part, arr, 4 * 3, 7, sizeof(part), hipMemcpyDeviceToHost));
  ok &= same_bytes(part, &model[7 * W + 3], sizeof(part), "hipMemcpyFromArray");
  // Array to pitched device memory (device to device), and a kernel reading it.
  float* pitched;
  size_t pitch;
  HIP_CHECK(hipMallocPitch((void**)&pitched, &pitch, W * 4, H));
  HIP_CHECK(hipMemcpy2DFromArray(pitched, pitch, arr, 0, 0, W * 4, H, hipMemcpyDeviceToDevice));
  float* out;
  HIP_CHECK(hipMalloc(&out, W * H * 4));
  scale_pitched<<<dim3((W + 15) / 16, (H + 7) / 8), dim3(16, 8)>>>((const char*)pitched, pitch, W, H, out);
  HIP_CHECK(hipMemcpy(got.data(), out, W * H * 4, hipMemcpyDeviceToHost));
  std::vector<float> expect(W * H);
  for (int i = 0; i < W * H; i++) expect[i] = model[i] * 2.0f + 1.0f;
  ok &= same_bytes(got.data(), expect.data(), got.size() * 4, "kernel on array data");
  report("2D array copies in and out (2D, linear, HtoA/AtoH) + kernel", ok);

  // Async forms on a stream, and a 1D array.
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  hipArray* line;
  hipChannelFormatDesc d2 = hipCreateChannelDesc(16, 16, 0, 0, hipChannelFormatKindSigned);
  HIP_CHECK(hipMallocArray(&line, &d2, 100, 0, hipArrayDefault));
  std::vector<short> pairs(200), pairs_back(200, 0);
  for (int i = 0; i < 200; i++) pairs[i] = (short)(i * 97 - 9000);
  HIP_CHECK(hipMemcpy2DToArrayAsync(line, 0, 0, pairs.data(), 400, 400, 1, hipMemcpyHostToDevice, s));
  HIP_CHECK(hipMemcpy2DFromArrayAsync(pairs_back.data(), 400, line, 0, 0, 400, 1, hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipStreamSynchronize(s));
  report("1D array of short2 through the async 2D copies",
         same_bytes(pairs_back.data(), pairs.data(), 400, "1D array"));
  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFreeArray(line));
  HIP_CHECK(hipFree(out));
  HIP_CHECK(hipFree(pitched));
  HIP_CHECK(hipFreeArray(arr));
}

// 3D and layered arrays: host to array at a position, array to array, array to pitched memory
// and a kernel reading it.
static void arrays_3d() {
  const int W = 9, H = 7, D = 5;
  hipChannelFormatDesc desc = hipCreateChannelDesc<int>();
  hipArray *a, *b;
  HIP_CHECK(hipMalloc3DArray(&a, &desc, make_hipExtent(W, H, D), hipArrayDefault));
  HIP_CHECK(hipMalloc3DArray(&b, &desc, make_hipExtent(W, H, D), hipArrayDefault));
  std::vector<int> host(W * H * D), model(W * H * D, 0), zero(W * H * D, 0);
  for (int i = 0; i < W * H * D; i++) host[i] = i * i - 3 * i + 11;
  // b starts as zeros (copied in; array storage starts zeroed too).
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(zero.data(), W * 4, W, H);
  p.dstArray = b;
  p.extent = make_hipExtent(W, H, D);
  p.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  // All of host into a.
  p = {};
  p.srcPtr = make_hipPitchedPtr(host.data(), W * 4, W, H);
  p.dstArray = a;
  p.extent = make_hipExtent(W, H, D);
  p.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  // A 4 x 3 x 2 block of a, from (1, 2, 1), into b at (5, 4, 3) (positions in elements).
  p = {};
  p.srcArray = a;
  p.srcPos = make_hipPos(1, 2, 1);
  p.dstArray = b;
  p.dstPos = make_hipPos(5, 4, 3);
  p.extent = make_hipExtent(4, 3, 2);
  p.kind = hipMemcpyDeviceToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  for (int z = 0; z < 2; z++)
    for (int y = 0; y < 3; y++)
      for (int x = 0; x < 4; x++)
        model[((3 + z) * H + 4 + y) * W + 5 + x] = host[((1 + z) * H + 2 + y) * W + 1 + x];
  // b to pitched device memory, and the kernel.
  hipPitchedPtr vol;
  HIP_CHECK(hipMalloc3D(&vol, make_hipExtent(W * 4, H, D)));
  p = {};
  p.srcArray = b;
  p.dstPtr = vol;
  p.extent = make_hipExtent(W, H, D);
  p.kind = hipMemcpyDeviceToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  int* out;
  HIP_CHECK(hipMalloc(&out, W * H * 4));
  sum_depth<<<dim3(1, 1), dim3(16, 16)>>>(vol, W, H, D, out);
  std::vector<int> got(W * H), expect(W * H, 0);
  HIP_CHECK(hipMemcpy(got.data(), out, W * H * 4, hipMemcpyDeviceToHost));
  for (int z = 0; z < D; z++)
    for (int i = 0; i < W * H; i++) expect[i] += model[z * W * H + i] * (z + 1);
  bool ok = same_bytes(got.data(), expect.data(), got.size() * 4, "3D arrays");
  report("3D arrays: host to array, array to array at positions, array to pitched + kernel", ok);

  // A layered 2D array of 3 layers: write layer 1 only, read all back.
  hipArray* layered;
  HIP_CHECK(hipMalloc3DArray(&layered, &desc, make_hipExtent(W, H, 3), hipArrayLayered));
  p = {};
  p.srcPtr = make_hipPitchedPtr(host.data(), W * 4, W, H);
  p.dstArray = layered;
  p.dstPos = make_hipPos(0, 0, 1);
  p.extent = make_hipExtent(W, H, 1);
  p.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  std::vector<int> layers(W * H * 3, -1), layers_model(W * H * 3, 0);
  memcpy(&layers_model[W * H], host.data(), W * H * 4);
  p = {};
  p.srcArray = layered;
  p.dstPtr = make_hipPitchedPtr(layers.data(), W * 4, W, H);
  p.extent = make_hipExtent(W, H, 3);
  p.kind = hipMemcpyDeviceToHost;
  HIP_CHECK(hipMemcpy3D(&p));
  report("layered 2D array: one layer written, all read",
         same_bytes(layers.data(), layers_model.data(), layers.size() * 4, "layered") &&
             layered->depth == 3 && layered->textureType == hipTextureType2DLayered);
  HIP_CHECK(hipFreeArray(layered));
  HIP_CHECK(hipFree(out));
  HIP_CHECK(hipFree(vol.ptr));
  HIP_CHECK(hipFreeArray(a));
  HIP_CHECK(hipFreeArray(b));
}

// The driver API: hipArrayCreate / hipArray3DCreate (uchar4), HIP_MEMCPY3D, hip_Memcpy2D.
static void driver_api() {
  const int W = 6, H = 5, D = 4;
  HIP_ARRAY3D_DESCRIPTOR d3 = {};
  d3.Width = W;
  d3.Height = H;
  d3.Depth = D;
  d3.Format = HIP_AD_FORMAT_UNSIGNED_INT8;
  d3.NumChannels = 4;
  hipArray* a;
  HIP_CHECK(hipArray3DCreate(&a, &d3));
  std::vector<unsigned char> host(W * H * D * 4), back(W * H * D * 4, 0);
  for (size_t i = 0; i < host.size(); i++) host[i] = (unsigned char)(i * 13 + 1);
  HIP_MEMCPY3D c = {};
  c.srcMemoryType = hipMemoryTypeHost;
  c.srcHost = host.data();
  c.srcPitch = W * 4;
  c.srcHeight = H;
  c.dstMemoryType = hipMemoryTypeArray;
  c.dstArray = a;
  c.WidthInBytes = W * 4;
  c.Height = H;
  c.Depth = D;
  HIP_CHECK(hipDrvMemcpy3D(&c));
  c = {};
  c.srcMemoryType = hipMemoryTypeArray;
  c.srcArray = a;
  c.dstMemoryType = hipMemoryTypeHost;
  c.dstHost = back.data();
  c.dstPitch = W * 4;
  c.dstHeight = H;
  c.WidthInBytes = W * 4;
  c.Height = H;
  c.Depth = D;
  HIP_CHECK(hipDrvMemcpy3D(&c));
  bool ok = same_bytes(back.data(), host.data(), host.size(), "HIP_MEMCPY3D");
  // hip_Memcpy2D: a 2D array, 3 x 2 texels at (2, 1) from device memory, then all to host.
  HIP_ARRAY_DESCRIPTOR d2 = {};
  d2.Width = W;
  d2.Height = H;
  d2.Format = HIP_AD_FORMAT_UNSIGNED_INT8;
  d2.NumChannels = 4;
  hipArray* b;
  HIP_CHECK(hipArrayCreate(&b, &d2));
  unsigned char* dev;
  HIP_CHECK(hipMalloc(&dev, W * H * 4));
  HIP_CHECK(hipMemcpy(dev, host.data(), W * H * 4, hipMemcpyHostToDevice));
  hip_Memcpy2D m = {};
  m.srcMemoryType = hipMemoryTypeDevice;
  m.srcDevice = dev;
  m.srcPitch = W * 4;
  m.dstMemoryType = hipMemoryTypeArray;
  m.dstArray = b;
  m.dstXInBytes = 2 * 4;
  m.dstY = 1;
  m.WidthInBytes = 3 * 4;
  m.Height = 2;
  HIP_CHECK(hipMemcpyParam2D(&m));
  std::vector<unsigned char> all(W * H * 4, 7), model(W * H * 4, 0);
  for (int y = 0; y < 2; y++) memcpy(&model[((1 + y) * W + 2) * 4], &host[y * W * 4], 12);
  m = {};
  m.srcMemoryType = hipMemoryTypeArray;
  m.srcArray = b;
  m.dstMemoryType = hipMemoryTypeHost;
  m.dstHost = all.data();
  m.dstPitch = 0;  // the width, as clr reads a zero pitch
  m.WidthInBytes = W * 4;
  m.Height = H;
  HIP_CHECK(hipMemcpyParam2DAsync(&m, 0));
  HIP_CHECK(hipStreamSynchronize(0));
  ok &= same_bytes(all.data(), model.data(), all.size(), "hip_Memcpy2D");
  ok &= a->isDrv && a->NumChannels == 4 && a->depth == (unsigned)D;
  report("driver API: hipArray3DCreate, hipDrvMemcpy3D, hipMemcpyParam2D(Async)", ok);
  HIP_CHECK(hipFree(dev));
  HIP_CHECK(hipArrayDestroy(b));
  HIP_CHECK(hipArrayDestroy(a));
}

// A mipmapped array's levels are arrays of their own extent.
static void mipmaps() {
  hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
  hipMipmappedArray_t mm;
  HIP_CHECK(hipMallocMipmappedArray(&mm, &desc, make_hipExtent(16, 8, 0), 4, 0));
  bool ok = true;
  std::vector<float> in(16 * 8), out(16 * 8);
  for (int level = 0; level < 4; level++) {
    hipArray_t l;
    HIP_CHECK(hipGetMipmappedArrayLevel(&l, mm, level));
    int w = 16 >> level, h = 8 >> level;
    ok &= l->width == (unsigned)w && l->height == (unsigned)h;
    for (int i = 0; i < w * h; i++) in[i] = level * 1000.0f + i;
    HIP_CHECK(hipMemcpy2DToArray(l, 0, 0, in.data(), w * 4, w * 4, h, hipMemcpyHostToDevice));
  }
  for (int level = 0; level < 4; level++) {
    hipArray_t l;
    HIP_CHECK(hipGetMipmappedArrayLevel(&l, mm, level));
    int w = 16 >> level, h = 8 >> level;
    HIP_CHECK(hipMemcpy2DFromArray(out.data(), w * 4, l, 0, 0, w * 4, h, hipMemcpyDeviceToHost));
    for (int i = 0; i < w * h; i++) ok &= out[i] == level * 1000.0f + i;
  }
  hipArray_t none;
  ok &= hipGetMipmappedArrayLevel(&none, mm, 4) == hipErrorInvalidValue;
  HIP_CHECK(hipFreeMipmappedArray(mm));
  report("mipmapped array: four levels written and read back", ok);
}

// Bad calls fail with HIP's codes and change nothing.
static void refusals() {
  hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
  hipArray* arr;
  HIP_CHECK(hipMallocArray(&arr, &desc, 8, 4, hipArrayDefault));
  float host[64] = {};
  bool ok = true;
  // Past the array's last row.
  ok &= hipMemcpy2DToArray(arr, 0, 2, host, 32, 32, 3, hipMemcpyHostToDevice) == hipErrorInvalidValue;
  // Not whole texels.
  ok &= hipMemcpy2DToArray(arr, 2, 0, host, 32, 8, 1, hipMemcpyHostToDevice) == hipErrorInvalidValue;
  ok &= hipMemcpy2DToArray(arr, 0, 0, host, 0, 32, 1, hipMemcpyHostToDevice) == hipErrorInvalidPitchValue;
  ok &= hipMemcpyHtoA(arr, 124, host, 8) == hipErrorInvalidValue;
  ok &= hipMemcpyAtoH(host, arr, 0, 33 * 4) == hipErrorInvalidValue;
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(host, 32, 8, 4);
  p.dstArray = arr;
  p.extent = make_hipExtent(8, 4, 2);
  p.kind = hipMemcpyHostToDevice;
  ok &= hipMemcpy3D(&p) == hipErrorInvalidValue;  // depth 2 of a 2D array
  p.extent = make_hipExtent(8, 4, 1);
  p.srcArray = arr;  // both an array and a pointer
  ok &= hipMemcpy3D(&p) == hipErrorInvalidValue;
  ok &= hipFreeArray((hipArray*)host) == hipErrorInvalidValue;
  void* dev;
  size_t pitch;
  HIP_CHECK(hipMallocPitch(&dev, &pitch, 64, 4));
  // A 3D fill running past the allocation's end.
  ok &= hipMemset3D(make_hipPitchedPtr(dev, pitch, 64, 4), 0, make_hipExtent(64, 4, 2)) == hipErrorInvalidValue;
  // Host memory is no device memory to fill.
  ok &= hipMemset2D(host, 32, 0, 32, 2) == hipErrorInvalidValue;
  HIP_CHECK(hipFree(dev));
  HIP_CHECK(hipFreeArray(arr));
  ok &= hipFreeArray(arr) == hipErrorInvalidValue;  // freed already
  report("bad regions, pitches and handles are refused", ok);
}

int main() {
  pitched_2d();
  pitched_3d();
  arrays_2d();
  arrays_3d();
  driver_api();
  mipmaps();
  refusals();
  return finish();
}
