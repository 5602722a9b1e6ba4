// Textures and surfaces: texture objects over 1D/2D/3D/layered/mipmapped/cube arrays, pitched
// and linear memory, every address mode, point and linear filtering, normalised coordinates, a
// surface written and read back, a texture reference and a texture object over the same array,
// the driver API's references (through this program's own code object) and objects, an
// arbitrary border colour and resource views. Every fetch is compared with a host model of the
// same addressing and of the fixed-point filtering (coordinates snapped to 1/256 texel, weights
// of 8 bits).
#include "check.h"
#include <string>
#include <vector>
// not for CDNA: HIP's headers mark the texture API unavailable on gfx90a and gfx942, which
// have no image instructions.

#pragma clang diagnostic ignored "-Wdeprecated-declarations"

texture<float, hipTextureType2D, hipReadModeElementType> tex_ref;

// ---------------------------------------------------------------- host model

static double snap(double u) { return nearbyint(u * 256.0); }

// Texel index under a HIP address mode (0 wrap, 1 clamp, 2 mirror, 3 border); -1 = border.
static long address(int mode, long i, long n) {
  switch (mode) {
    case 0: return ((i % n) + n) % n;
    case 2: {
      long m = ((i % (2 * n)) + 2 * n) % (2 * n);
      return m >= n ? 2 * n - 1 - m : m;
    }
    case 1: return i < 0 ? 0 : (i >= n ? n - 1 : i);
    default: return (i < 0 || i >= n) ? -1 : i;
  }
}

// What a border texel reads (a single-channel model; 0 unless a test sets another).
static float g_border = 0.0f;

struct Img {
  const float* data;  // one channel
  int w, h, d;
};

static float texel(const Img& im, int mode, long x, long y, long z) {
  long ax = address(mode, x, im.w), ay = im.h > 1 ? address(mode, y, im.h) : 0;
  long az = im.d > 1 ? address(mode, z, im.d) : 0;
  if (ax < 0 || ay < 0 || az < 0) return g_border;
  return im.data[(az * im.h + ay) * im.w + ax];
}

// One sample at texel-space (u, v, w) (dims: 1, 2 or 3).
static float model(const Img& im, int dims, int mode, bool linear, float u, float v, float w) {
  float c[3] = {u, v, w};
  long i0[3] = {0, 0, 0};
  double a[3] = {0, 0, 0};
  for (int k = 0; k < dims; k++) {
    if (linear) {
      double f = snap((double)c[k] - 0.5);
      i0[k] = (long)floor(f / 256.0);
      a[k] = (f - i0[k] * 256.0) / 256.0;
    } else {
      i0[k] = (long)floor(snap(c[k]) / 256.0);
    }
  }
  if (!linear) return texel(im, mode, i0[0], i0[1], i0[2]);
  double acc = 0;
  for (int dz = 0; dz < (dims > 2 ? 2 : 1); dz++)
    for (int dy = 0; dy < (dims > 1 ? 2 : 1); dy++)
      for (int dx = 0; dx < 2; dx++) {
        double wt = (dx ? a[0] : 1 - a[0]) * (dims > 1 ? (dy ? a[1] : 1 - a[1]) : 1) *
                    (dims > 2 ? (dz ? a[2] : 1 - a[2]) : 1);
        if (wt == 0) continue;
        acc += wt * texel(im, mode, i0[0] + dx, i0[1] + dy, i0[2] + dz);
      }
  return (float)acc;
}

// An sRGB-encoded value in 0..1 as linear light (IEC 61966-2-1), in double, rounded once.
static float srgb_to_linear(float c) {
  double v = c;
  return (float)(v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4));
}

static bool close(float got, float want, const char* what, int i) {
  if (ulps_f32(got, want) <= 1) return true;
  printf("  %s[%d]: %.9g, expected %.9g\n", what, i, got, want);
  return false;
}

// What ROCr's image extension cannot make (mip levels, cube maps, border colours other than
// transparent black) is hipErrorNotSupported on ROCr agents, as in HIP on ROCm: the check says
// SKIP there (the test harness allows that only through the software HSA library).
static bool made(hipError_t e, const char* name) {
  if (e == hipErrorNotSupported) {
    printf("SKIP %s: hipErrorNotSupported on this agent\n", name);
    return false;
  }
  HIP_CHECK(e);
  return true;
}

// AMD's HIP 5.2 (clr, run over the software HSA library by tests/clr_over_soft_hsa.rs, which
// sets TEXTURES_AMD_HIP_5_2) lacks some of what later HIPs and librocload.so answer: such a
// check says SKIP there, with what clr 5.2 does instead.
static bool skipped_on_hip_5_2(const char* name, const char* what_it_does) {
  if (!getenv("TEXTURES_AMD_HIP_5_2")) return false;
  printf("SKIP %s: AMD's HIP 5.2 %s\n", name, what_it_does);
  return true;
}

// ---------------------------------------------------------------- kernels

__global__ void fetch2d(hipTextureObject_t t, const float2* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}
__global__ void fetch1d(hipTextureObject_t t, const float* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1D<float>(t, at[i]);
}
__global__ void fetch3d(hipTextureObject_t t, const float4* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, at[i].x, at[i].y, at[i].z);
}
__global__ void fetch_layered(hipTextureObject_t t, const float2* at, int layer, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float>(t, at[i].x, at[i].y, layer);
}
__global__ void fetch_lod(hipTextureObject_t t, const float2* at, float lod, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLod<float>(t, at[i].x, at[i].y, lod);
}
__global__ void fetch_linear_mem(hipTextureObject_t t, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);
}
__global__ void fetch_u8(hipTextureObject_t t, const float2* at, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, at[i].x, at[i].y);
}
__global__ void fetch_ref(const float2* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D(tex_ref, at[i].x, at[i].y);
}
__global__ void surface_scale(hipSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) {
    float v;
    surf2Dread(&v, s, x * 4, y);
    surf2Dwrite(v * 3.0f + (float)x, s, x * 4, y);
  }
}

// ---------------------------------------------------------------- helpers

template <typename T>
static T* upload(const std::vector<T>& v) {
  T* d;
  HIP_CHECK(hipMalloc(&d, v.size() * sizeof(T)));
  HIP_CHECK(hipMemcpy(d, v.data(), v.size() * sizeof(T), hipMemcpyHostToDevice));
  return d;
}

template <typename T>
static std::vector<T> download(const T* d, size_t n) {
  std::vector<T> v(n);
  HIP_CHECK(hipMemcpy(v.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
  return v;
}

static hipTextureObject_t make_tex(hipArray_t a, int mode, bool linear, bool norm) {
  hipResourceDesc r = {};
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  hipTextureDesc t = {};
  for (int k = 0; k < 3; k++) t.addressMode[k] = (hipTextureAddressMode)mode;
  t.filterMode = linear ? hipFilterModeLinear : hipFilterModePoint;
  t.readMode = hipReadModeElementType;
  t.normalizedCoords = norm;
  hipTextureObject_t o;
  HIP_CHECK(hipCreateTextureObject(&o, &r, &t, nullptr));
  return o;
}

static const int W = 13, H = 7, D = 5;

// Coordinates that go past every edge, in texels.
static std::vector<float2> coords2d(int n) {
  std::vector<float2> c(n);
  for (int i = 0; i < n; i++)
    c[i] = make_float2(-3.3f + 0.731f * i, -2.1f + 0.37f * (i % 29));
  return c;
}

static void two_d() {
  std::vector<float> img(W * H);
  for (int i = 0; i < W * H; i++) img[i] = (float)((i * 37) % 101) * 0.25f - 3.0f;
  hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
  hipArray_t a;
  HIP_CHECK(hipMallocArray(&a, &cd, W, H));
  HIP_CHECK(hipMemcpy2DToArray(a, 0, 0, img.data(), W * 4, W * 4, H, hipMemcpyHostToDevice));
  const int N = 96;
  std::vector<float2> at = coords2d(N);
  float2* dat = upload(at);
  float* dout;
  HIP_CHECK(hipMalloc(&dout, N * 4));
  Img im = {img.data(), W, H, 1};
  const char* modes[] = {"wrap", "clamp", "mirror", "border"};
  for (int norm = 0; norm < 2; norm++)
    for (int mode = 0; mode < 4; mode++)
      for (int linear = 0; linear < 2; linear++) {
        // Wrap and mirror need normalised coordinates in HIP.
        if (!norm && (mode == 0 || mode == 2)) continue;
        hipTextureObject_t t = make_tex(a, mode, linear, norm);
        std::vector<float2> q = at;
        if (norm)
          for (auto& c : q) c = make_float2(c.x / W, c.y / H);
        HIP_CHECK(hipMemcpy(dat, q.data(), N * sizeof(float2), hipMemcpyHostToDevice));
        fetch2d<<<(N + 63) / 64, 64>>>(t, dat, dout, N);
        HIP_CHECK(hipGetLastError());
        std::vector<float> got = download(dout, N);
        bool ok = true;
        for (int i = 0; i < N && ok; i++) {
          float u = norm ? q[i].x * (float)W : q[i].x, v = norm ? q[i].y * (float)H : q[i].y;
          if (!linear && norm) {
            // The device library snaps normalised point samples to texel starts first.
            u = floorf(q[i].x * (float)W) / (float)W * (float)W;
            v = floorf(q[i].y * (float)H) / (float)H * (float)H;
          } else if (!linear) {
            u = floorf(q[i].x);
            v = floorf(q[i].y);
          }
          ok &= close(got[i], model(im, 2, mode, linear, u, v, 0), "tex2D", i);
        }
        char name[96];
        snprintf(name, sizeof name, "tex2D %s %s %s", modes[mode], linear ? "linear" : "point",
                 norm ? "normalised" : "texel coordinates");
        report(name, ok);
        HIP_CHECK(hipDestroyTextureObject(t));
      }
  // The same array through a texture reference and a texture object.
  tex_ref.filterMode = hipFilterModeLinear;
  tex_ref.normalized = 0;
  tex_ref.addressMode[0] = tex_ref.addressMode[1] = hipAddressModeClamp;
  HIP_CHECK(hipBindTextureToArray(tex_ref, a));
  HIP_CHECK(hipMemcpy(dat, at.data(), N * sizeof(float2), hipMemcpyHostToDevice));
  fetch_ref<<<(N + 63) / 64, 64>>>(dat, dout, N);
  HIP_CHECK(hipGetLastError());
  std::vector<float> by_ref = download(dout, N);
  hipTextureObject_t t = make_tex(a, 1, true, false);
  fetch2d<<<(N + 63) / 64, 64>>>(t, dat, dout, N);
  std::vector<float> by_obj = download(dout, N);
  bool ok = true;
  for (int i = 0; i < N && ok; i++) {
    ok &= close(by_ref[i], model(im, 2, 1, true, at[i].x, at[i].y, 0), "reference", i);
    ok &= by_ref[i] == by_obj[i];
  }
  report("texture reference and texture object over one array", ok);
  HIP_CHECK(hipUnbindTexture(tex_ref));
  // The getters give back what the object was made from.
  hipResourceDesc r;
  hipTextureDesc td;
  HIP_CHECK(hipGetTextureObjectResourceDesc(&r, t));
  HIP_CHECK(hipGetTextureObjectTextureDesc(&td, t));
  report("texture object getters",
         r.resType == hipResourceTypeArray && r.res.array.array == a &&
             td.filterMode == hipFilterModeLinear && td.addressMode[1] == hipAddressModeClamp);
  HIP_CHECK(hipDestroyTextureObject(t));
  HIP_CHECK(hipFree(dat));
  HIP_CHECK(hipFree(dout));
  HIP_CHECK(hipFreeArray(a));
}

static void one_and_three_d() {
  // 1D array, linear filtering, clamp.
  std::vector<float> line(W);
  for (int i = 0; i < W; i++) line[i] = (float)(i * i) - 4.5f;
  hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
  hipArray_t a1;
  HIP_CHECK(hipMallocArray(&a1, &cd, W, 0));
  HIP_CHECK(hipMemcpy2DToArray(a1, 0, 0, line.data(), W * 4, W * 4, 1, hipMemcpyHostToDevice));
  const int N = 64;
  std::vector<float> at(N);
  for (int i = 0; i < N; i++) at[i] = -2.0f + 0.27f * i;
  float* dat = upload(at);
  float* dout;
  HIP_CHECK(hipMalloc(&dout, N * 4));
  hipTextureObject_t t = make_tex(a1, 1, true, false);
  fetch1d<<<1, N>>>(t, dat, dout, N);
  HIP_CHECK(hipGetLastError());
  std::vector<float> got = download(dout, N);
  Img im1 = {line.data(), W, 1, 1};
  bool ok = true;
  for (int i = 0; i < N && ok; i++) ok &= close(got[i], model(im1, 1, 1, true, at[i], 0, 0), "tex1D", i);
  report("tex1D linear clamp", ok);
  HIP_CHECK(hipDestroyTextureObject(t));
  HIP_CHECK(hipFreeArray(a1));
  HIP_CHECK(hipFree(dat));
  // 3D array, trilinear in space, border.
  std::vector<float> vol(W * H * D);
  for (int i = 0; i < W * H * D; i++) vol[i] = (float)((i * 53) % 97) * 0.5f;
  hipArray_t a3;
  HIP_CHECK(hipMalloc3DArray(&a3, &cd, make_hipExtent(W, H, D), 0));
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(vol.data(), W * 4, W, H);
  p.dstArray = a3;
  p.extent = make_hipExtent(W, H, D);
  p.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  std::vector<float4> at3(N);
  for (int i = 0; i < N; i++) at3[i] = make_float4(-1.2f + 0.25f * i, 0.3f * (i % 11) - 0.9f, 0.17f * (i % 37) - 0.6f, 0);
  float4* dat3 = upload(at3);
  t = make_tex(a3, 3, true, false);
  fetch3d<<<1, N>>>(t, dat3, dout, N);
  HIP_CHECK(hipGetLastError());
  got = download(dout, N);
  Img im3 = {vol.data(), W, H, D};
  ok = true;
  for (int i = 0; i < N && ok; i++)
    ok &= close(got[i], model(im3, 3, 3, true, at3[i].x, at3[i].y, at3[i].z), "tex3D", i);
  report("tex3D trilinear border", ok);
  HIP_CHECK(hipDestroyTextureObject(t));
  HIP_CHECK(hipFreeArray(a3));
  HIP_CHECK(hipFree(dat3));
  HIP_CHECK(hipFree(dout));
}

static void layered_and_mipmapped() {
  const int L = 3, N = 64;
  std::vector<float> layers(W * H * L);
  for (int i = 0; i < W * H * L; i++) layers[i] = (float)((i * 29) % 83) - 10.0f;
  hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
  hipArray_t a;
  HIP_CHECK(hipMalloc3DArray(&a, &cd, make_hipExtent(W, H, L), hipArrayLayered));
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(layers.data(), W * 4, W, H);
  p.dstArray = a;
  p.extent = make_hipExtent(W, H, L);
  p.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  std::vector<float2> at = coords2d(N);
  float2* dat = upload(at);
  float* dout;
  HIP_CHECK(hipMalloc(&dout, N * 4));
  hipTextureObject_t t = make_tex(a, 1, true, false);
  bool ok = true;
  for (int layer = 0; layer < L; layer++) {
    fetch_layered<<<1, N>>>(t, dat, layer, dout, N);
    HIP_CHECK(hipGetLastError());
    std::vector<float> got = download(dout, N);
    Img im = {layers.data() + layer * W * H, W, H, 1};
    for (int i = 0; i < N && ok; i++) ok &= close(got[i], model(im, 2, 1, true, at[i].x, at[i].y, 0), "layered", i);
  }
  report("tex2DLayered linear clamp, every layer", ok);
  HIP_CHECK(hipDestroyTextureObject(t));
  HIP_CHECK(hipFreeArray(a));
  // Mipmapped: three levels, each filled with its own values; explicit LODs, point and linear
  // between levels.
  const int MW = 16, MH = 8, LV = 3;
  hipMipmappedArray_t mm;
  const char* name = "mipmapped tex2DLod, point in the level, linear between levels";
  if (!made(hipMallocMipmappedArray(&mm, &cd, make_hipExtent(MW, MH, 0), LV, 0), name)) {
    HIP_CHECK(hipFree(dat));
    HIP_CHECK(hipFree(dout));
    return;
  }
  std::vector<std::vector<float>> lv(LV);
  for (int l = 0; l < LV; l++) {
    int w = MW >> l, h = MH >> l;
    lv[l].resize(w * h);
    for (int i = 0; i < w * h; i++) lv[l][i] = (float)(l * 100 + (i * 7) % 31);
    hipArray_t level;
    HIP_CHECK(hipGetMipmappedArrayLevel(&level, mm, l));
    HIP_CHECK(hipMemcpy2DToArray(level, 0, 0, lv[l].data(), w * 4, w * 4, h, hipMemcpyHostToDevice));
  }
  hipResourceDesc r = {};
  r.resType = hipResourceTypeMipmappedArray;
  r.res.mipmap.mipmap = mm;
  hipTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = hipAddressModeClamp;
  td.filterMode = hipFilterModePoint;
  td.mipmapFilterMode = hipFilterModeLinear;
  td.normalizedCoords = 1;
  td.maxMipmapLevelClamp = LV - 1;
  if (!made(hipCreateTextureObject(&t, &r, &td, nullptr), name)) {
    HIP_CHECK(hipFreeMipmappedArray(mm));
    HIP_CHECK(hipFree(dat));
    HIP_CHECK(hipFree(dout));
    return;
  }
  std::vector<float2> q(N);
  for (int i = 0; i < N; i++) q[i] = make_float2((i % 16 + 0.5f) / 16.0f, (i / 16 + 0.5f) / 8.0f);
  HIP_CHECK(hipMemcpy(dat, q.data(), N * sizeof(float2), hipMemcpyHostToDevice));
  ok = true;
  const float lods[] = {0.0f, 1.0f, 2.0f, 0.5f, 1.25f};
  for (float lod : lods) {
    fetch_lod<<<1, N>>>(t, dat, lod, dout, N);
    HIP_CHECK(hipGetLastError());
    std::vector<float> got = download(dout, N);
    int l0 = (int)floorf(lod), l1 = l0 + 1 < LV ? l0 + 1 : l0;
    double wk = nearbyint((lod - l0) * 256.0) / 256.0;
    for (int i = 0; i < N && ok; i++) {
      auto at_level = [&](int l) {
        int w = MW >> l, h = MH >> l;
        Img im = {lv[l].data(), w, h, 1};
        return model(im, 2, 1, false, floorf(q[i].x * w) / w * w, floorf(q[i].y * h) / h * h, 0);
      };
      float want = (float)(at_level(l0) * (1 - wk) + (l1 != l0 ? at_level(l1) * wk : at_level(l0) * wk));
      ok &= close(got[i], want, "tex2DLod", i);
    }
  }
  report(name, ok);
  HIP_CHECK(hipDestroyTextureObject(t));
  HIP_CHECK(hipFreeMipmappedArray(mm));
  HIP_CHECK(hipFree(dat));
  HIP_CHECK(hipFree(dout));
}

static void linear_memory_and_formats() {
  const int N = 100;
  std::vector<float> lin(N);
  for (int i = 0; i < N; i++) lin[i] = i * 1.5f - 7.0f;
  float* dlin = upload(lin);
  hipResourceDesc r = {};
  r.resType = hipResourceTypeLinear;
  r.res.linear.devPtr = dlin;
  r.res.linear.desc = hipCreateChannelDesc<float>();
  r.res.linear.sizeInBytes = N * 4;
  hipTextureDesc td = {};
  hipTextureObject_t t;
  HIP_CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
  float* dout;
  HIP_CHECK(hipMalloc(&dout, N * 4));
  fetch_linear_mem<<<1, N>>>(t, dout, N);
  HIP_CHECK(hipGetLastError());
  std::vector<float> got = download(dout, N);
  report("tex1Dfetch on linear memory", memcmp(got.data(), lin.data(), N * 4) == 0);
  HIP_CHECK(hipDestroyTextureObject(t));
  // What HIP refuses of linear memory: no texel, more bytes than maxTexture1DLinear, a base
  // off textureAlignment.
  {
    hipDeviceProp_t p;
    HIP_CHECK(hipGetDeviceProperties(&p, 0));
    hipResourceDesc bad = r;
    bad.res.linear.sizeInBytes = 0;
    hipError_t empty = hipCreateTextureObject(&t, &bad, &td, nullptr);
    bad.res.linear.sizeInBytes = SIZE_MAX;
    hipError_t huge = hipCreateTextureObject(&t, &bad, &td, nullptr);
    bad.res.linear.sizeInBytes = (size_t)p.maxTexture1DLinear + 4;
    hipError_t over = hipCreateTextureObject(&t, &bad, &td, nullptr);
    bad = r;
    bad.res.linear.devPtr = (char*)dlin + 4;
    bad.res.linear.sizeInBytes = (N - 1) * 4;
    hipError_t unaligned = hipCreateTextureObject(&t, &bad, &td, nullptr);
    char what[160];
    snprintf(what, sizeof what, "empty %s, SIZE_MAX %s, past the limit %s, unaligned %s",
             hipGetErrorName(empty), hipGetErrorName(huge), hipGetErrorName(over),
             hipGetErrorName(unaligned));
    report("linear memory: no texels, too many bytes or an unaligned base refused",
           p.textureAlignment > 4 && empty == hipErrorInvalidValue &&
               huge == hipErrorInvalidValue && over == hipErrorInvalidValue &&
               unaligned == hipErrorInvalidValue,
           what);
  }
  HIP_CHECK(hipFree(dlin));
  HIP_CHECK(hipFree(dout));
  // uchar4 read as normalised floats, linear filtering.
  std::vector<uchar4> img(W * H);
  for (int i = 0; i < W * H; i++) img[i] = make_uchar4(i * 3, 255 - i, (i * 17) & 255, 128);
  // HIP 5.2's hipCreateChannelDesc<uchar4>() says signed (a header bug): spelled out here.
  hipChannelFormatDesc cd = hipCreateChannelDesc(8, 8, 8, 8, hipChannelFormatKindUnsigned);
  hipArray_t a;
  HIP_CHECK(hipMallocArray(&a, &cd, W, H));
  HIP_CHECK(hipMemcpy2DToArray(a, 0, 0, img.data(), W * 4, W * 4, H, hipMemcpyHostToDevice));
  hipResourceDesc ra = {};
  ra.resType = hipResourceTypeArray;
  ra.res.array.array = a;
  td.filterMode = hipFilterModeLinear;
  td.readMode = hipReadModeNormalizedFloat;
  td.addressMode[0] = td.addressMode[1] = hipAddressModeClamp;
  HIP_CHECK(hipCreateTextureObject(&t, &ra, &td, nullptr));
  const int M = 64;
  std::vector<float2> at = coords2d(M);
  float2* dat = upload(at);
  float4* d4;
  HIP_CHECK(hipMalloc(&d4, M * sizeof(float4)));
  fetch_u8<<<1, M>>>(t, dat, d4, M);
  HIP_CHECK(hipGetLastError());
  std::vector<float4> g4 = download(d4, M);
  bool ok = true;
  for (int c = 0; c < 4; c++) {
    std::vector<float> chan(W * H);
    for (int i = 0; i < W * H; i++) chan[i] = (float)((&img[i].x)[c]) / 255.0f;
    Img im = {chan.data(), W, H, 1};
    for (int i = 0; i < M; i++)
      if (!close((&g4[i].x)[c], model(im, 2, 1, true, at[i].x, at[i].y, 0), "uchar4", i + 1000 * c)) ok = false;
  }
  report("uchar4 normalised float, linear", ok);
  HIP_CHECK(hipDestroyTextureObject(t));
  // The same texels as sRGB: red, green and blue go to linear light before filtering, alpha
  // stays linear.
  td.sRGB = 1;
  const char* srgb_name = "uchar4 sRGB, to linear light before linear filtering";
  if (made(hipCreateTextureObject(&t, &ra, &td, nullptr), srgb_name)) {
    fetch_u8<<<1, M>>>(t, dat, d4, M);
    HIP_CHECK(hipGetLastError());
    g4 = download(d4, M);
    ok = true;
    for (int c = 0; c < 4; c++) {
      std::vector<float> chan(W * H);
      for (int i = 0; i < W * H; i++) {
        float v = (float)((&img[i].x)[c]) / 255.0f;
        chan[i] = c < 3 ? srgb_to_linear(v) : v;
      }
      Img im = {chan.data(), W, H, 1};
      for (int i = 0; i < M; i++)
        if (!close((&g4[i].x)[c], model(im, 2, 1, true, at[i].x, at[i].y, 0), "sRGB", i + 1000 * c)) ok = false;
    }
    report(srgb_name, ok);
    HIP_CHECK(hipDestroyTextureObject(t));
  }
  HIP_CHECK(hipFreeArray(a));
  // One sRGB channel, point sampled: the conversion of each stored value; an integer read of
  // sRGB texels is refused.
  std::vector<unsigned char> grey(W * H);
  for (int i = 0; i < W * H; i++) grey[i] = (unsigned char)(i * 19 + 3);
  hipChannelFormatDesc c1 = hipCreateChannelDesc(8, 0, 0, 0, hipChannelFormatKindUnsigned);
  HIP_CHECK(hipMallocArray(&a, &c1, W, H));
  HIP_CHECK(hipMemcpy2DToArray(a, 0, 0, grey.data(), W, W, H, hipMemcpyHostToDevice));
  ra.res.array.array = a;
  td.filterMode = hipFilterModePoint;
  const char* grey_name = "uchar1 sRGB, point";
  if (!skipped_on_hip_5_2(grey_name, "reads one sRGB channel unconverted (HSA has no such order)") &&
      made(hipCreateTextureObject(&t, &ra, &td, nullptr), grey_name)) {
    fetch_u8<<<1, M>>>(t, dat, d4, M);
    HIP_CHECK(hipGetLastError());
    g4 = download(d4, M);
    std::vector<float> chan(W * H);
    for (int i = 0; i < W * H; i++) chan[i] = srgb_to_linear((float)grey[i] / 255.0f);
    Img im = {chan.data(), W, H, 1};
    ok = true;
    for (int i = 0; i < M; i++)
      if (!close(g4[i].x, model(im, 2, 1, false, at[i].x, at[i].y, 0), "sRGB1", i)) ok = false;
    td.readMode = hipReadModeElementType;
    hipTextureObject_t refused;
    ok &= hipCreateTextureObject(&refused, &ra, &td, nullptr) == hipErrorNotSupported;
    report(grey_name, ok);
    HIP_CHECK(hipDestroyTextureObject(t));
  }
  HIP_CHECK(hipFreeArray(a));
  HIP_CHECK(hipFree(dat));
  HIP_CHECK(hipFree(d4));
}

static void surfaces() {
  std::vector<float> img(W * H);
  for (int i = 0; i < W * H; i++) img[i] = (float)(i % 19) - 2.0f;
  hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
  hipArray_t a;
  // AMD's HIP 5.2 (clr) refuses the flag; later ones and librocload.so take it.
  if (!made(hipMallocArray(&a, &cd, W, H, hipArraySurfaceLoadStore), "surf2Dread + surf2Dwrite read back"))
    return;
  HIP_CHECK(hipMemcpy2DToArray(a, 0, 0, img.data(), W * 4, W * 4, H, hipMemcpyHostToDevice));
  hipResourceDesc r = {};
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  hipSurfaceObject_t s;
  HIP_CHECK(hipCreateSurfaceObject(&s, &r));
  surface_scale<<<dim3(1, H), 32>>>(s, W, H);
  HIP_CHECK(hipGetLastError());
  std::vector<float> got(W * H);
  HIP_CHECK(hipMemcpy2DFromArray(got.data(), W * 4, a, 0, 0, W * 4, H, hipMemcpyDeviceToHost));
  bool ok = true;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) ok &= got[y * W + x] == img[y * W + x] * 3.0f + (float)x;
  report("surf2Dread + surf2Dwrite read back", ok);
  HIP_CHECK(hipDestroySurfaceObject(s));
  HIP_CHECK(hipFreeArray(a));
}

// ---------------------------------------------------------------- driver API

// Kernels the driver-API checks launch from this program's own code object (argv[0] + ".co",
// built beside it), reading that module's copies of the texture references.
texture<float, hipTextureType1D, hipReadModeElementType> tex_lin;
extern "C" __global__ void drv_fetch_ref(const float2* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D(tex_ref, at[i].x, at[i].y);
}
extern "C" __global__ void drv_fetch_lin(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch(tex_lin, i);
}

// Later HIP headers declare these; HIP 5.2's does not (its library does not define them, so
// they are weak: the program also runs on AMD's HIP 5.2, without those checks).
extern "C" hipError_t hipTexRefGetArray(hipArray_t* pArray, const textureReference* texRef)
    __attribute__((weak));
extern "C" hipError_t hipDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements,
                                                          const hipChannelFormatDesc* fmtDesc,
                                                          int device) __attribute__((weak));

static hipArray_t float_array(const std::vector<float>& img, int w, int h) {
  hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
  hipArray_t a;
  HIP_CHECK(hipMallocArray(&a, &cd, w, h));
  HIP_CHECK(hipMemcpy2DToArray(a, 0, 0, img.data(), w * 4, w * 4, h, hipMemcpyHostToDevice));
  return a;
}

// The device says it has images, and gfx10's limits (ROCr's image table).
static void limits() {
  int images = 0, w1 = 0, w2 = 0, h2 = 0, d3 = 0;
  HIP_CHECK(hipDeviceGetAttribute(&images, hipDeviceAttributeImageSupport, 0));
  HIP_CHECK(hipDeviceGetAttribute(&w1, hipDeviceAttributeMaxTexture1DWidth, 0));
  HIP_CHECK(hipDeviceGetAttribute(&w2, hipDeviceAttributeMaxTexture2DWidth, 0));
  HIP_CHECK(hipDeviceGetAttribute(&h2, hipDeviceAttributeMaxTexture2DHeight, 0));
  HIP_CHECK(hipDeviceGetAttribute(&d3, hipDeviceAttributeMaxTexture3DDepth, 0));
  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, 0));
  hipChannelFormatDesc f4 = hipCreateChannelDesc<float4>();
  size_t linear = (size_t)p.maxTexture1DLinear / 16;
  if (hipDeviceGetTexture1DLinearMaxWidth) HIP_CHECK(hipDeviceGetTexture1DLinearMaxWidth(&linear, &f4, 0));
  report("image support and texture limits",
         images == 1 && w1 == 16384 && w2 == 16384 && h2 == 16384 && d3 == 8192 &&
             p.maxTexture2D[0] == 16384 && p.maxTexture3D[2] == 8192 &&
             linear == (size_t)p.maxTexture1DLinear / 16);
}

static void driver_api(const char* self) {
  std::string path = std::string(self) + ".co";
  FILE* probe = fopen(path.c_str(), "rb");
  if (!probe) {
    report("driver API: the program's code object", false, path.c_str());
    return;
  }
  fclose(probe);
  hipModule_t m;
  HIP_CHECK(hipModuleLoad(&m, path.c_str()));
  textureReference* ref;
  HIP_CHECK(hipModuleGetTexRef(&ref, m, "tex_ref"));
  textureReference* again;
  HIP_CHECK(hipModuleGetTexRef(&again, m, "tex_ref"));
  hipArray_Format fmt;
  int channels;
  unsigned flags;
  HIP_CHECK(hipTexRefGetFormat(&fmt, &channels, ref));
  HIP_CHECK(hipTexRefGetFlags(&flags, ref));
  report("hipModuleGetTexRef: one reference per name, HIP's defaults",
         again == ref && fmt == HIP_AD_FORMAT_FLOAT && channels == 1 && flags == 0 &&
             hipModuleGetTexRef(&again, m, "no_such_texture") == hipErrorNotFound);
  // Every setter, read back by its getter.
  HIP_CHECK(hipTexRefSetAddressMode(ref, 0, hipAddressModeClamp));
  HIP_CHECK(hipTexRefSetAddressMode(ref, 1, hipAddressModeClamp));
  HIP_CHECK(hipTexRefSetFilterMode(ref, hipFilterModeLinear));
  HIP_CHECK(hipTexRefSetFlags(ref, HIP_TRSF_READ_AS_INTEGER));
  HIP_CHECK(hipTexRefSetMaxAnisotropy(ref, 4));
  HIP_CHECK(hipTexRefSetMipmapFilterMode(ref, hipFilterModeLinear));
  HIP_CHECK(hipTexRefSetMipmapLevelBias(ref, 0.5f));
  HIP_CHECK(hipTexRefSetMipmapLevelClamp(ref, 0.25f, 3.0f));
  float black[4] = {0, 0, 0, 1};
  HIP_CHECK(hipTexRefSetBorderColor(ref, black));
  hipTextureAddressMode am0, am1;
  hipTextureFilterMode fm, mfm;
  int aniso;
  float bias, lo, hi;
  HIP_CHECK(hipTexRefGetAddressMode(&am0, ref, 0));
  HIP_CHECK(hipTexRefGetAddressMode(&am1, ref, 1));
  HIP_CHECK(hipTexRefGetFilterMode(&fm, ref));
  HIP_CHECK(hipTexRefGetFlags(&flags, ref));
  HIP_CHECK(hipTexRefGetMaxAnisotropy(&aniso, ref));
  HIP_CHECK(hipTexRefGetMipmapFilterMode(&mfm, ref));
  HIP_CHECK(hipTexRefGetMipmapLevelBias(&bias, ref));
  HIP_CHECK(hipTexRefGetMipmapLevelClamp(&lo, &hi, ref));
  report("hipTexRefSet*/hipTexRefGet* round trip",
         am0 == hipAddressModeClamp && am1 == hipAddressModeClamp && fm == hipFilterModeLinear &&
             flags == HIP_TRSF_READ_AS_INTEGER && aniso == 4 && mfm == hipFilterModeLinear &&
             bias == 0.5f && lo == 0.25f && hi == 3.0f &&
             hipTexRefSetAddressMode(ref, 3, hipAddressModeClamp) == hipErrorInvalidValue);
  HIP_CHECK(hipTexRefSetMipmapLevelBias(ref, 0.0f));
  HIP_CHECK(hipTexRefSetMipmapLevelClamp(ref, 0.0f, 0.0f));
  // Isotropic again: the host model below is bilinear (ROCr agents refuse anisotropy).
  HIP_CHECK(hipTexRefSetMaxAnisotropy(ref, 1));
  // Bound to an array, sampled by the module's own kernel.
  std::vector<float> img(W * H);
  for (int i = 0; i < W * H; i++) img[i] = (float)((i * 41) % 89) * 0.5f - 9.0f;
  hipArray_t a = float_array(img, W, H);
  HIP_CHECK(hipTexRefSetArray(ref, a, HIP_TRSA_OVERRIDE_FORMAT));
  hipArray_t bound = a;
  if (hipTexRefGetArray) HIP_CHECK(hipTexRefGetArray(&bound, ref));
  const int N = 96;
  std::vector<float2> at = coords2d(N);
  float2* dat = upload(at);
  float* dout;
  HIP_CHECK(hipMalloc(&dout, N * 4));
  hipFunction_t f;
  HIP_CHECK(hipModuleGetFunction(&f, m, "drv_fetch_ref"));
  int n = N;
  void* args[] = {&dat, &dout, &n};
  HIP_CHECK(hipModuleLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  std::vector<float> got = download(dout, N);
  Img im = {img.data(), W, H, 1};
  bool ok = bound == a;
  for (int i = 0; i < N && ok; i++) ok &= close(got[i], model(im, 2, 1, true, at[i].x, at[i].y, 0), "module texref", i);
  report("hipModuleGetTexRef + hipTexRefSetArray, sampled by the module's kernel", ok);
  // Linear memory through hipTexRefSetAddress.
  textureReference* lin;
  HIP_CHECK(hipModuleGetTexRef(&lin, m, "tex_lin"));
  HIP_CHECK(hipTexRefSetFormat(lin, HIP_AD_FORMAT_FLOAT, 1));
  std::vector<float> line(N);
  for (int i = 0; i < N; i++) line[i] = 3.25f * i - 40.0f;
  float* dline = upload(line);
  size_t offset = 1;
  HIP_CHECK(hipTexRefSetAddress(&offset, lin, dline, N * 4));
  hipDeviceptr_t where = nullptr;
  HIP_CHECK(hipTexRefGetAddress(&where, lin));
  HIP_CHECK(hipModuleGetFunction(&f, m, "drv_fetch_lin"));
  void* args2[] = {&dout, &n};
  HIP_CHECK(hipModuleLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, nullptr, args2, nullptr));
  got = download(dout, N);
  report("hipTexRefSetAddress on linear memory, tex1Dfetch by the module's kernel",
         offset == 0 && where == (hipDeviceptr_t)dline && memcmp(got.data(), line.data(), N * 4) == 0);
  HIP_CHECK(hipModuleUnload(m));
  HIP_CHECK(hipFree(dline));
  HIP_CHECK(hipFree(dat));
  HIP_CHECK(hipFree(dout));
  HIP_CHECK(hipFreeArray(a));
}

// The driver API's texture objects: the same sampling as the runtime form, and the getters.
static void driver_objects() {
  std::vector<float> img(W * H);
  for (int i = 0; i < W * H; i++) img[i] = (float)((i * 23) % 71) - 30.0f;
  hipArray_t a = float_array(img, W, H);
  HIP_RESOURCE_DESC rd = {};
  rd.resType = HIP_RESOURCE_TYPE_ARRAY;
  rd.res.array.hArray = a;
  HIP_TEXTURE_DESC td = {};
  td.addressMode[0] = td.addressMode[1] = HIP_TR_ADDRESS_MODE_BORDER;
  td.filterMode = HIP_TR_FILTER_MODE_LINEAR;
  td.flags = HIP_TRSF_READ_AS_INTEGER;
  hipTextureObject_t o;
  HIP_CHECK(hipTexObjectCreate(&o, &rd, &td, nullptr));
  const int N = 96;
  std::vector<float2> at = coords2d(N);
  float2* dat = upload(at);
  float* dout;
  HIP_CHECK(hipMalloc(&dout, N * 4));
  fetch2d<<<(N + 63) / 64, 64>>>(o, dat, dout, N);
  HIP_CHECK(hipGetLastError());
  std::vector<float> got = download(dout, N);
  Img im = {img.data(), W, H, 1};
  bool ok = true;
  for (int i = 0; i < N && ok; i++) ok &= close(got[i], model(im, 2, 3, true, at[i].x, at[i].y, 0), "hipTexObjectCreate", i);
  HIP_RESOURCE_DESC rback;
  HIP_TEXTURE_DESC tback;
  HIP_RESOURCE_VIEW_DESC vback;
  HIP_CHECK(hipTexObjectGetResourceDesc(&rback, o));
  HIP_CHECK(hipTexObjectGetTextureDesc(&tback, o));
  HIP_CHECK(hipTexObjectGetResourceViewDesc(&vback, o));
  ok &= rback.resType == HIP_RESOURCE_TYPE_ARRAY && rback.res.array.hArray == a &&
        tback.filterMode == HIP_TR_FILTER_MODE_LINEAR && tback.flags == HIP_TRSF_READ_AS_INTEGER &&
        tback.addressMode[1] == HIP_TR_ADDRESS_MODE_BORDER && vback.format == HIP_RES_VIEW_FORMAT_NONE;
  report("hipTexObjectCreate over an array, border linear, and its getters", ok);
  HIP_CHECK(hipTexObjectDestroy(o));
  // Linear memory in the driver's terms (format and channel count).
  std::vector<float> line(N);
  for (int i = 0; i < N; i++) line[i] = 0.75f * i + 1.0f;
  float* dline = upload(line);
  HIP_RESOURCE_DESC lr = {};
  lr.resType = HIP_RESOURCE_TYPE_LINEAR;
  lr.res.linear.devPtr = dline;
  lr.res.linear.format = HIP_AD_FORMAT_FLOAT;
  lr.res.linear.numChannels = 1;
  lr.res.linear.sizeInBytes = N * 4;
  HIP_TEXTURE_DESC ltd = {};
  ltd.flags = HIP_TRSF_READ_AS_INTEGER;
  HIP_CHECK(hipTexObjectCreate(&o, &lr, &ltd, nullptr));
  fetch_linear_mem<<<1, N>>>(o, dout, N);
  HIP_CHECK(hipGetLastError());
  got = download(dout, N);
  HIP_CHECK(hipTexObjectGetResourceDesc(&rback, o));
  report("hipTexObjectCreate over linear memory, tex1Dfetch, format read back",
         memcmp(got.data(), line.data(), N * 4) == 0 && rback.resType == HIP_RESOURCE_TYPE_LINEAR &&
             rback.res.linear.format == HIP_AD_FORMAT_FLOAT && rback.res.linear.numChannels == 1 &&
             rback.res.linear.sizeInBytes == N * 4 && rback.res.linear.devPtr == (hipDeviceptr_t)dline);
  HIP_CHECK(hipTexObjectDestroy(o));
  HIP_CHECK(hipFree(dline));
  HIP_CHECK(hipFree(dat));
  HIP_CHECK(hipFree(dout));
  HIP_CHECK(hipFreeArray(a));
}

// ---------------------------------------------------------------- cube maps, border colours, views

__global__ void fetch_cube(hipTextureObject_t t, const float4* dir, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemap<float>(t, dir[i].x, dir[i].y, dir[i].z);
}
__global__ void fetch_cube_layered(hipTextureObject_t t, const float4* dir, int layer, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemapLayered<float>(t, dir[i].x, dir[i].y, dir[i].z, layer);
}
__global__ void fetch2d4(hipTextureObject_t t, const float2* at, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, at[i].x, at[i].y);
}
__global__ void fetch2d_uint(hipTextureObject_t t, const float2* at, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<unsigned int>(t, at[i].x, at[i].y);
}

// The face and face coordinates the device library computes for a direction: LLVM's
// v_cubeid/sc/tc/ma (major axis with its sign, ties to z then y), then sc / ma + 0.5.
static void cube_face(float x, float y, float z, int* face, float* s, float* t) {
  float sc, tc, ma;
  if (fabsf(z) >= fabsf(x) && fabsf(z) >= fabsf(y)) {
    *face = z < 0 ? 5 : 4; sc = z < 0 ? -x : x; tc = -y; ma = z;
  } else if (fabsf(y) >= fabsf(x)) {
    *face = y < 0 ? 3 : 2; sc = x; tc = y < 0 ? -z : z; ma = y;
  } else {
    *face = x < 0 ? 1 : 0; sc = x < 0 ? z : -z; tc = -y; ma = x;
  }
  float r = 1.0f / (ma + ma);
  *s = fmaf(sc, r, 0.5f);
  *t = fmaf(tc, r, 0.5f);
}

static void cube_maps() {
  const int S = 8, L = 2, N = 128;
  std::vector<float> faces(S * S * 6 * L);
  for (size_t i = 0; i < faces.size(); i++) faces[i] = (float)((i * 13) % 97) - 20.0f;
  hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
  std::vector<float4> dir(N);
  for (int i = 0; i < N; i++)
    dir[i] = make_float4(sinf(0.37f * i) * (1 + i % 3), cosf(0.23f * i) * 1.5f, sinf(0.11f * i + 1.0f) * 2.0f, 0);
  float4* ddir = upload(dir);
  float* dout;
  HIP_CHECK(hipMalloc(&dout, N * 4));
  for (int layered = 0; layered < 2; layered++) {
    int slices = 6 * (layered ? L : 1);
    hipArray_t a;
    // AMD's HIP 5.2 (clr) refuses cube arrays; ROCr agents take them only where HSA can.
    if (!made(hipMalloc3DArray(&a, &cd, make_hipExtent(S, S, slices),
                               hipArrayCubemap | (layered ? hipArrayLayered : 0)),
              layered ? "texCubemapLayered" : "texCubemap"))
      continue;
    hipMemcpy3DParms p = {};
    p.srcPtr = make_hipPitchedPtr(faces.data(), S * 4, S, S);
    p.dstArray = a;
    p.extent = make_hipExtent(S, S, slices);
    p.kind = hipMemcpyHostToDevice;
    HIP_CHECK(hipMemcpy3D(&p));
    for (int linear = 0; linear < 2; linear++) {
      hipResourceDesc r = {};
      r.resType = hipResourceTypeArray;
      r.res.array.array = a;
      hipTextureDesc td = {};
      td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = hipAddressModeClamp;
      td.filterMode = linear ? hipFilterModeLinear : hipFilterModePoint;
      td.normalizedCoords = 1;
      hipTextureObject_t t;
      char name[96];
      snprintf(name, sizeof name, "%s %s, faces clamped at their edges",
               layered ? "texCubemapLayered" : "texCubemap", linear ? "linear" : "point");
      if (!made(hipCreateTextureObject(&t, &r, &td, nullptr), name)) continue;
      bool ok = true;
      for (int layer = 0; layer < (layered ? L : 1) && ok; layer++) {
        if (layered)
          fetch_cube_layered<<<(N + 63) / 64, 64>>>(t, ddir, layer, dout, N);
        else
          fetch_cube<<<(N + 63) / 64, 64>>>(t, ddir, dout, N);
        HIP_CHECK(hipGetLastError());
        std::vector<float> got = download(dout, N);
        for (int i = 0; i < N && ok; i++) {
          int face;
          float s, tt;
          cube_face(dir[i].x, dir[i].y, dir[i].z, &face, &s, &tt);
          Img im = {faces.data() + (size_t)(layer * 6 + face) * S * S, S, S, 1};
          float u = s * S, v = tt * S;
          ok &= close(got[i], model(im, 2, 1, linear, u, v, 0), "cube", i + 1000 * layer);
        }
      }
      report(name, ok);
      HIP_CHECK(hipDestroyTextureObject(t));
    }
    HIP_CHECK(hipFreeArray(a));
  }
  HIP_CHECK(hipFree(ddir));
  HIP_CHECK(hipFree(dout));
}

// A border colour none of the hardware's three constants is: an entry of the agent's table.
// ROCr offers no such table, so there the runtime refuses it with hipErrorNotSupported.
static void border_colours() {
  const int N = 96;
  std::vector<float4> img(W * H);
  for (int i = 0; i < W * H; i++) img[i] = make_float4(i * 0.5f, -(float)i, (float)(i % 7), 2.0f);
  hipChannelFormatDesc cd = hipCreateChannelDesc<float4>();
  hipArray_t a;
  HIP_CHECK(hipMallocArray(&a, &cd, W, H));
  HIP_CHECK(hipMemcpy2DToArray(a, 0, 0, img.data(), W * 16, W * 16, H, hipMemcpyHostToDevice));
  hipResourceDesc r = {};
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  hipTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = hipAddressModeBorder;
  td.filterMode = hipFilterModeLinear;
  const float colour[4] = {0.25f, -2.0f, 7.5f, 1.0f};
  memcpy(td.borderColor, colour, sizeof colour);
  hipTextureObject_t t;
  const char* name = "arbitrary border colour, every channel, linear";
  if (skipped_on_hip_5_2(name, "takes the colour and samples transparent black (HSA samplers have no colour)") ||
      !made(hipCreateTextureObject(&t, &r, &td, nullptr), name)) {
    HIP_CHECK(hipFreeArray(a));
    return;
  }
  std::vector<float2> at = coords2d(N);
  float2* dat = upload(at);
  float4* dout;
  HIP_CHECK(hipMalloc(&dout, N * sizeof(float4)));
  fetch2d4<<<(N + 63) / 64, 64>>>(t, dat, dout, N);
  HIP_CHECK(hipGetLastError());
  std::vector<float4> got = download(dout, N);
  bool ok = true;
  for (int c = 0; c < 4; c++) {
    std::vector<float> chan(W * H);
    for (int i = 0; i < W * H; i++) chan[i] = (&img[i].x)[c];
    Img im = {chan.data(), W, H, 1};
    g_border = colour[c];
    for (int i = 0; i < N; i++)
      if (!close((&got[i].x)[c], model(im, 2, 3, true, at[i].x, at[i].y, 0), "border", i + 1000 * c)) ok = false;
  }
  g_border = 0.0f;
  report(name, ok);
  HIP_CHECK(hipDestroyTextureObject(t));
  HIP_CHECK(hipFree(dat));
  HIP_CHECK(hipFree(dout));
  HIP_CHECK(hipFreeArray(a));
}

// hipResourceViewDesc: texels read as another format of the same size, a range of mip levels,
// a range of layers.
static void views() {
  const int N = 64;
  std::vector<float2> at = coords2d(N);
  float2* dat = upload(at);
  unsigned* dout;
  HIP_CHECK(hipMalloc(&dout, N * 4));
  // uchar4 texels read as one 32-bit unsigned integer each.
  std::vector<uchar4> img(W * H);
  for (int i = 0; i < W * H; i++) img[i] = make_uchar4(i, 255 - 3 * i, 17 * i, i ^ 0x5a);
  hipChannelFormatDesc cd = hipCreateChannelDesc(8, 8, 8, 8, hipChannelFormatKindUnsigned);
  hipArray_t a;
  HIP_CHECK(hipMallocArray(&a, &cd, W, H));
  HIP_CHECK(hipMemcpy2DToArray(a, 0, 0, img.data(), W * 4, W * 4, H, hipMemcpyHostToDevice));
  hipResourceDesc r = {};
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  hipTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = hipAddressModeClamp;
  td.readMode = hipReadModeElementType;
  hipResourceViewDesc v = {};
  v.format = hipResViewFormatUnsignedInt1;
  v.width = W;
  v.height = H;
  hipTextureObject_t t;
  HIP_CHECK(hipCreateTextureObject(&t, &r, &td, &v));
  fetch2d_uint<<<1, N>>>(t, dat, dout, N);
  HIP_CHECK(hipGetLastError());
  std::vector<unsigned> got = download(dout, N);
  bool ok = true;
  for (int i = 0; i < N && ok; i++) {
    long x = address(1, (long)floorf(at[i].x), W), y = address(1, (long)floorf(at[i].y), H);
    unsigned want;
    memcpy(&want, &img[y * W + x], 4);
    if (got[i] != want) {
      printf("  view[%d]: %#x, expected %#x\n", i, got[i], want);
      ok = false;
    }
  }
  hipResourceViewDesc vb;
  HIP_CHECK(hipGetTextureObjectResourceViewDesc(&vb, t));
  report("resource view: uchar4 texels read as uint", ok);
  if (!skipped_on_hip_5_2("resource view: read back, a view of another size refused",
                          "takes a view of another size")) {
    ok = vb.format == hipResViewFormatUnsignedInt1 && vb.width == (size_t)W;
    v.format = hipResViewFormatUnsignedShort1;
    hipTextureObject_t bad;
    ok &= hipCreateTextureObject(&bad, &r, &td, &v) == hipErrorInvalidValue;
    report("resource view: read back, a view of another size refused", ok);
  }
  HIP_CHECK(hipDestroyTextureObject(t));
  HIP_CHECK(hipFreeArray(a));
  HIP_CHECK(hipFree(dout));
  // Mip levels 1..2 of three: LOD 0 of the view is level 1.
  const int MW = 16, MH = 8, LV = 3;
  hipChannelFormatDesc fd = hipCreateChannelDesc<float>();
  const char* mip_name = "resource view: mip levels 1..2, LOD 0 is level 1";
  std::vector<float2> q(N);
  for (int i = 0; i < N; i++) q[i] = make_float2((i % 16 + 0.5f) / 16.0f, (i / 16 + 0.5f) / 8.0f);
  float2* dq = upload(q);
  float* fout;
  HIP_CHECK(hipMalloc(&fout, N * 4));
  hipMipmappedArray_t mm;
  if (made(hipMallocMipmappedArray(&mm, &fd, make_hipExtent(MW, MH, 0), LV, 0), mip_name)) {
    std::vector<std::vector<float>> lv(LV);
    for (int l = 0; l < LV; l++) {
      int w = MW >> l, h = MH >> l;
      lv[l].resize(w * h);
      for (int i = 0; i < w * h; i++) lv[l][i] = (float)(l * 1000 + (i * 5) % 37);
      hipArray_t level;
      HIP_CHECK(hipGetMipmappedArrayLevel(&level, mm, l));
      HIP_CHECK(hipMemcpy2DToArray(level, 0, 0, lv[l].data(), w * 4, w * 4, h, hipMemcpyHostToDevice));
    }
    hipResourceDesc rm = {};
    rm.resType = hipResourceTypeMipmappedArray;
    rm.res.mipmap.mipmap = mm;
    hipTextureDesc tm = {};
    tm.addressMode[0] = tm.addressMode[1] = hipAddressModeClamp;
    tm.filterMode = hipFilterModePoint;
    tm.mipmapFilterMode = hipFilterModePoint;
    tm.normalizedCoords = 1;
    tm.maxMipmapLevelClamp = LV - 1;
    hipResourceViewDesc vm = {};
    vm.firstMipmapLevel = 1;
    vm.lastMipmapLevel = 2;
    if (made(hipCreateTextureObject(&t, &rm, &tm, &vm), mip_name)) {
      ok = true;
      for (int lod = 0; lod < 3; lod++) {
        fetch_lod<<<1, N>>>(t, dq, (float)lod, fout, N);
        HIP_CHECK(hipGetLastError());
        std::vector<float> g = download(fout, N);
        int l = 1 + (lod < 1 ? lod : 1);  // LOD past the view's last level clamps to it
        int w = MW >> l, h = MH >> l;
        Img im = {lv[l].data(), w, h, 1};
        for (int i = 0; i < N && ok; i++)
          ok &= close(g[i], model(im, 2, 1, false, floorf(q[i].x * w), floorf(q[i].y * h), 0), "mip view", i + 1000 * lod);
      }
      report(mip_name, ok);
      HIP_CHECK(hipDestroyTextureObject(t));
    }
    HIP_CHECK(hipFreeMipmappedArray(mm));
  }
  HIP_CHECK(hipFree(dq));
  // Layers 1..2 of three: layer 0 of the view is layer 1, and a layer past the view clamps.
  // 16 x 8 floats: each layer starts at a 256-byte boundary, as ROCr's images must.
  const int L = 3, LW = 16, LH = 8;
  std::vector<float> layers(LW * LH * L);
  for (int i = 0; i < LW * LH * L; i++) layers[i] = (float)((i * 31) % 79) + 0.5f;
  hipArray_t la;
  HIP_CHECK(hipMalloc3DArray(&la, &fd, make_hipExtent(LW, LH, L), hipArrayLayered));
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(layers.data(), LW * 4, LW, LH);
  p.dstArray = la;
  p.extent = make_hipExtent(LW, LH, L);
  p.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  hipResourceDesc rl = {};
  rl.resType = hipResourceTypeArray;
  rl.res.array.array = la;
  hipTextureDesc tl = {};
  tl.addressMode[0] = tl.addressMode[1] = hipAddressModeClamp;
  tl.filterMode = hipFilterModeLinear;
  hipResourceViewDesc vl = {};
  vl.firstLayer = 1;
  vl.lastLayer = 2;
  const char* layer_name = "resource view: layers 1..2, layer 0 is layer 1, past the view clamps";
  if (!skipped_on_hip_5_2(layer_name, "refuses a view of some layers (hipErrorInvalidValue)") &&
      made(hipCreateTextureObject(&t, &rl, &tl, &vl), layer_name)) {
    HIP_CHECK(hipMemcpy(dat, at.data(), N * sizeof(float2), hipMemcpyHostToDevice));
    ok = true;
    const int asked[] = {0, 1, 5};
    for (int k = 0; k < 3; k++) {
      fetch_layered<<<1, N>>>(t, dat, asked[k], fout, N);
      HIP_CHECK(hipGetLastError());
      std::vector<float> g = download(fout, N);
      int layer = 1 + (asked[k] < 1 ? asked[k] : 1);
      Img im = {layers.data() + layer * LW * LH, LW, LH, 1};
      for (int i = 0; i < N && ok; i++) ok &= close(g[i], model(im, 2, 1, true, at[i].x, at[i].y, 0), "layer view", i + 1000 * k);
    }
    report(layer_name, ok);
    HIP_CHECK(hipDestroyTextureObject(t));
  }
  HIP_CHECK(hipFreeArray(la));
  HIP_CHECK(hipFree(fout));
  HIP_CHECK(hipFree(dat));
}

// A kernel reading through a texture whose memory was freed reads bytes it was not given: the
// memory checker must stop it (hipErrorIllegalAddress), for linear memory and for an array.
static bool faults(const char* what) {
  hipError_t launched = hipGetLastError();
  hipError_t synced = hipDeviceSynchronize();
  bool faulted = launched == hipErrorIllegalAddress || synced == hipErrorIllegalAddress;
  char detail[160];
  snprintf(detail, sizeof detail, "launch %s, synchronize %s (expected hipErrorIllegalAddress)",
           hipGetErrorName(launched), hipGetErrorName(synced));
  report(what, faulted, detail);
  HIP_CHECK(hipDeviceReset());
  (void)hipGetLastError();
  return faulted;
}

static void freed_memory_behind_a_texture() {
  if (skipped_on_hip_5_2("texture reads of freed memory",
                         "aborts the process on a GPU memory fault (rocdevice.cpp:2651, "
                         "Device::callbackQueue), as on hardware"))
    return;
  const int N = 64;
  float* dout;
  HIP_CHECK(hipMalloc(&dout, N * 4));
  float2* at;
  HIP_CHECK(hipMalloc(&at, N * sizeof(float2)));
  HIP_CHECK(hipMemset(at, 0, N * sizeof(float2)));

  float* dlin;
  HIP_CHECK(hipMalloc(&dlin, N * 4));
  hipResourceDesc r = {};
  r.resType = hipResourceTypeLinear;
  r.res.linear.devPtr = dlin;
  r.res.linear.desc = hipCreateChannelDesc<float>();
  r.res.linear.sizeInBytes = N * 4;
  hipTextureDesc td = {};
  hipTextureObject_t lin;
  HIP_CHECK(hipCreateTextureObject(&lin, &r, &td, nullptr));
  HIP_CHECK(hipFree(dlin));
  fetch_linear_mem<<<1, N>>>(lin, dout, N);
  faults("tex1Dfetch of freed linear memory");
  // The reset freed the device's memory: the coordinates and the output are made again (a
  // write to a freed output would fault whatever the texture read).
  HIP_CHECK(hipMalloc(&dout, N * 4));
  HIP_CHECK(hipMalloc(&at, N * sizeof(float2)));
  HIP_CHECK(hipMemset(at, 0, N * sizeof(float2)));

  hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
  hipArray_t a;
  HIP_CHECK(hipMallocArray(&a, &cd, W, H));
  hipTextureObject_t arr = make_tex(a, 1, false, false);
  HIP_CHECK(hipFreeArray(a));
  fetch2d<<<1, N>>>(arr, at, dout, N);
  faults("tex2D of a freed array");
  report("the reset freed the device's memory",
         hipFree(at) == hipErrorInvalidValue && hipFree(dout) == hipErrorInvalidValue);
  (void)hipGetLastError();
}

// ---------------------------------------------------------------- anisotropic filtering

__global__ void fetch_grad(hipTextureObject_t t, const float2* at, const float4* grads, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = tex2DGrad<float>(t, at[i].x, at[i].y, make_float2(grads[i].x, grads[i].y),
                              make_float2(grads[i].z, grads[i].w));
}

// The reference footprint of OpenGL's EXT_texture_filter_anisotropic, which the emulator
// models: n = ceil(longer / shorter texel-space derivative), at most the sampler's ratio (a
// power of two: HIP's maxAnisotropy rounded down), samples at (i / (n + 1) - 1/2) x the
// longer derivative, averaged; no footprint when magnifying (the longer one is at most a
// texel). One mip level: the LOD only chooses magnification.
static float aniso_model(const Img& im, float u, float v, float2 dx, float2 dy, int ratio) {
  auto texels = [&](float2 d) {
    float a = d.x * (float)im.w, b = d.y * (float)im.h;
    return sqrtf(a * a + b * b);
  };
  float px = texels(dx), py = texels(dy);
  float longer = px > py ? px : py, shorter = px < py ? px : py;
  if (longer <= 1.0f || ratio < 2) return model(im, 2, 1, true, u * (float)im.w, v * (float)im.h, 0);
  float n = shorter > 0 ? ceilf(longer / shorter) : (float)ratio;
  if (n > (float)ratio) n = (float)ratio;
  if (n <= 1.0f) return model(im, 2, 1, true, u * (float)im.w, v * (float)im.h, 0);
  float2 major = px >= py ? dx : dy;
  int count = (int)n;
  double acc = 0;
  for (int i = 1; i <= count; i++) {
    float t = (float)i / (float)(count + 1) - 0.5f;
    float cu = u + t * major.x, cv = v + t * major.y;
    acc += model(im, 2, 1, true, cu * (float)im.w, cv * (float)im.h, 0);
  }
  return (float)(acc / count);
}

static void anisotropic() {
  const int AW = 32, AH = 16, N = 128;
  std::vector<float> img(AW * AH);
  for (int i = 0; i < AW * AH; i++) img[i] = (float)((i * 41) % 97) * 0.125f;
  hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
  hipArray_t a;
  HIP_CHECK(hipMallocArray(&a, &cd, AW, AH));
  HIP_CHECK(hipMemcpy2DToArray(a, 0, 0, img.data(), AW * 4, AW * 4, AH, hipMemcpyHostToDevice));
  std::vector<float2> at(N);
  std::vector<float4> grads(N);
  for (int i = 0; i < N; i++) {
    at[i] = make_float2(0.05f + 0.0071f * i, 0.9f - 0.0063f * i);
    // Footprints from magnified to 20:1, along x, y and diagonals.
    float longer = 0.5f + 0.37f * (i % 23), shorter = 0.25f + 0.61f * (i % 5);
    float c = cosf(0.4f * i), s = sinf(0.4f * i);
    grads[i] = make_float4(longer * c / AW, longer * s / AH, -shorter * s / AW, shorter * c / AH);
    if (i % 7 == 3) grads[i] = make_float4(grads[i].z, grads[i].w, grads[i].x, grads[i].y);
  }
  float2* dat = upload(at);
  float4* dgrads = upload(grads);
  float* dout;
  HIP_CHECK(hipMalloc(&dout, N * 4));
  hipResourceDesc r = {};
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  Img im = {img.data(), AW, AH, 1};
  for (int asked : {1, 3, 4, 16}) {
    hipTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = hipAddressModeClamp;
    td.filterMode = hipFilterModeLinear;
    td.normalizedCoords = 1;
    td.maxAnisotropy = asked;
    char name[96];
    snprintf(name, sizeof name, "tex2DGrad, maxAnisotropy %d: the reference anisotropic footprint", asked);
    hipTextureObject_t t;
    // ROCr agents refuse anisotropy (HSA samplers have none), AMD's HIP 5.2 any maxAnisotropy.
    if (!made(hipCreateTextureObject(&t, &r, &td, nullptr), name))
      continue;
    fetch_grad<<<(N + 63) / 64, 64>>>(t, dat, dgrads, dout, N);
    HIP_CHECK(hipGetLastError());
    std::vector<float> got = download(dout, N);
    int ratio = asked >= 16 ? 16 : asked >= 8 ? 8 : asked >= 4 ? 4 : asked >= 2 ? 2 : 1;
    bool ok = true;
    for (int i = 0; i < N; i++)
      if (!close(got[i], aniso_model(im, at[i].x, at[i].y, make_float2(grads[i].x, grads[i].y),
                                     make_float2(grads[i].z, grads[i].w), ratio),
                 "aniso", i + 1000 * asked))
        ok = false;
    report(name, ok);
    HIP_CHECK(hipDestroyTextureObject(t));
  }
  HIP_CHECK(hipFreeArray(a));
  HIP_CHECK(hipFree(dat));
  HIP_CHECK(hipFree(dgrads));
  HIP_CHECK(hipFree(dout));
}

// ---------------------------------------------------------------- block compression

// Texel (x, y) of one BCn block as red, green, blue, alpha, from the public format
// descriptions (Direct3D's block compression, Khronos' S3TC and RGTC): kind 1-5, `sgn` for
// BC4/BC5 signed. Palette entries are exact means of the endpoints, rounded to float once.
static void bc_texel(int kind, bool sgn, const unsigned char* b, int x, int y, float out[4]) {
  const int i = y * 4 + x;
  double px[4] = {0, 0, 0, 1};
  // BC1 colour block (BC2 and BC3 always use its four-colour mode).
  auto colours = [&](const unsigned char* c, bool four) {
    unsigned c0 = c[0] | c[1] << 8, c1 = c[2] | c[3] << 8;
    unsigned idx = (c[4] | c[5] << 8 | c[6] << 16 | (unsigned)c[7] << 24) >> (2 * i) & 3;
    bool opaque = four || c0 > c1;
    const int shift[3] = {11, 5, 0}, mask[3] = {31, 63, 31};
    for (int ch = 0; ch < 3; ch++) {
      int a = c0 >> shift[ch] & mask[ch], z = c1 >> shift[ch] & mask[ch];
      double units = idx == 0 ? a : idx == 1 ? z
                   : opaque ? (idx == 2 ? (2.0 * a + z) / 3.0 : (a + 2.0 * z) / 3.0)
                            : (idx == 2 ? (a + z) / 2.0 : 0.0);
      px[ch] = units / mask[ch];
    }
    if (!opaque && idx == 3) px[3] = 0;
  };
  // An interpolated channel (BC3 alpha, BC4, BC5): two endpoints, 3-bit indices.
  auto channel = [&](const unsigned char* c) -> double {
    unsigned long long bits = 0;
    for (int q = 0; q < 6; q++) bits |= (unsigned long long)c[2 + q] << (8 * q);
    int idx = (int)(bits >> (3 * i) & 7);
    int a = sgn ? (signed char)c[0] : c[0], z = sgn ? (signed char)c[1] : c[1];
    bool eight = a > z;
    double scale = sgn ? 127.0 : 255.0;
    if (sgn) { a = a < -127 ? -127 : a; z = z < -127 ? -127 : z; }
    if (idx == 0) return a / scale;
    if (idx == 1) return z / scale;
    if (eight) return ((8 - idx) * (double)a + (idx - 1) * (double)z) / (7.0 * scale);
    if (idx == 6) return sgn ? -1.0 : 0.0;
    if (idx == 7) return 1.0;
    return ((6 - idx) * (double)a + (idx - 1) * (double)z) / (5.0 * scale);
  };
  switch (kind) {
    case 1: colours(b, false); break;
    case 2: {
      colours(b + 8, true);
      unsigned long long bits = 0;
      for (int q = 0; q < 8; q++) bits |= (unsigned long long)b[q] << (8 * q);
      px[3] = (double)(bits >> (4 * i) & 15) / 15.0;
      break;
    }
    case 3: colours(b + 8, true); px[3] = channel(b); break;
    case 4: px[0] = channel(b); break;
    default: px[0] = channel(b); px[1] = channel(b + 8); break;
  }
  for (int ch = 0; ch < 4; ch++) out[ch] = (float)px[ch];
}

// BC1 to BC5 (and BC4/BC5 signed) views of arrays of uint2/uint4 blocks: every texel point
// sampled, and linear filtering of the decoded texels, against the host decoder.
static void block_compressed() {
  const int BW = 3, BH = 2, TW = 4 * BW, TH = 4 * BH, N = 96;
  struct Case { const char* name; int view; int kind; bool sgn; int bytes; };
  const Case cases[] = {
      {"BC1", hipResViewFormatUnsignedBlockCompressed1, 1, false, 8},
      {"BC2", hipResViewFormatUnsignedBlockCompressed2, 2, false, 16},
      {"BC3", hipResViewFormatUnsignedBlockCompressed3, 3, false, 16},
      {"BC4", hipResViewFormatUnsignedBlockCompressed4, 4, false, 8},
      {"BC4 signed", hipResViewFormatSignedBlockCompressed4, 4, true, 8},
      {"BC5", hipResViewFormatUnsignedBlockCompressed5, 5, false, 16},
      {"BC5 signed", hipResViewFormatSignedBlockCompressed5, 5, true, 16},
  };
  std::vector<float2> centres(TW * TH);
  for (int i = 0; i < TW * TH; i++) centres[i] = make_float2(i % TW + 0.5f, i / TW + 0.5f);
  std::vector<float2> at(N);
  for (int i = 0; i < N; i++) at[i] = make_float2(-1.3f + 0.157f * i, -0.7f + 0.41f * (i % 23));
  float2* dcentres = upload(centres);
  float2* dat = upload(at);
  float4* dout;
  HIP_CHECK(hipMalloc(&dout, TW * TH * sizeof(float4)));
  unsigned seed = 12345;
  for (const Case& k : cases) {
    std::vector<unsigned char> blocks(BW * BH * k.bytes);
    for (auto& byte : blocks) {
      seed = seed * 1103515245u + 12345u;
      byte = (unsigned char)(seed >> 16);
    }
    // Both endpoint orders, and -128 (which reads as -1) in a signed block.
    blocks[0] = 0x80;
    blocks[1] = 0x10;
    if (k.bytes == 16) { blocks[8 + k.bytes] = 0x20; blocks[9 + k.bytes] = 0xe0; }
    hipChannelFormatDesc cd = k.bytes == 8 ? hipCreateChannelDesc(32, 32, 0, 0, hipChannelFormatKindUnsigned)
                                           : hipCreateChannelDesc(32, 32, 32, 32, hipChannelFormatKindUnsigned);
    hipArray_t a;
    HIP_CHECK(hipMallocArray(&a, &cd, BW, BH));
    HIP_CHECK(hipMemcpy2DToArray(a, 0, 0, blocks.data(), BW * k.bytes, BW * k.bytes, BH, hipMemcpyHostToDevice));
    // The host's texels.
    std::vector<float> chan[4];
    for (int c = 0; c < 4; c++) chan[c].resize(TW * TH);
    for (int y = 0; y < TH; y++)
      for (int x = 0; x < TW; x++) {
        float t[4];
        bc_texel(k.kind, k.sgn, &blocks[((y / 4) * BW + x / 4) * k.bytes], x % 4, y % 4, t);
        for (int c = 0; c < 4; c++) chan[c][y * TW + x] = t[c];
      }
    hipResourceDesc r = {};
    r.resType = hipResourceTypeArray;
    r.res.array.array = a;
    hipResourceViewDesc v = {};
    v.format = (hipResourceViewFormat)k.view;
    v.width = TW;
    v.height = TH;
    char name[96];
    snprintf(name, sizeof name, "%s view: every texel, and linear filtering", k.name);
    bool ok = true, skipped = false;
    for (int linear = 0; linear < 2 && ok && !skipped; linear++) {
      hipTextureDesc td = {};
      td.addressMode[0] = td.addressMode[1] = hipAddressModeClamp;
      td.filterMode = linear ? hipFilterModeLinear : hipFilterModePoint;
      td.readMode = hipReadModeElementType;
      hipTextureObject_t t;
      if (skipped_on_hip_5_2(name, "refuses block-compressed views (hipErrorInvalidValue)") ||
          !made(hipCreateTextureObject(&t, &r, &td, &v), name)) {
        skipped = true;
        break;
      }
      int n = linear ? N : TW * TH;
      fetch_u8<<<(n + 63) / 64, 64>>>(t, linear ? dat : dcentres, dout, n);
      HIP_CHECK(hipGetLastError());
      std::vector<float4> got = download(dout, n);
      for (int c = 0; c < 4 && ok; c++) {
        Img im = {chan[c].data(), TW, TH, 1};
        for (int i = 0; i < n && ok; i++) {
          float want = linear ? model(im, 2, 1, true, at[i].x, at[i].y, 0) : chan[c][i];
          ok &= close((&got[i].x)[c], want, k.name, i + 1000 * c + 10000 * linear);
        }
      }
      HIP_CHECK(hipDestroyTextureObject(t));
    }
    if (!skipped) report(name, ok);
    HIP_CHECK(hipFreeArray(a));
  }
  // A view of another size is refused.
  hipChannelFormatDesc c4 = hipCreateChannelDesc(32, 32, 32, 32, hipChannelFormatKindUnsigned);
  hipArray_t a;
  HIP_CHECK(hipMallocArray(&a, &c4, BW, BH));
  hipResourceDesc r = {};
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  hipTextureDesc td = {};
  hipResourceViewDesc v = {};
  v.format = hipResViewFormatUnsignedBlockCompressed3;
  v.width = TW - 1;
  v.height = TH;
  hipTextureObject_t t;
  {
    bool ok = hipCreateTextureObject(&t, &r, &td, &v) == hipErrorInvalidValue;
    v.width = TW;
    v.format = hipResViewFormatUnsignedBlockCompressed1;  // 8-byte blocks over 16-byte elements
    ok &= hipCreateTextureObject(&t, &r, &td, &v) == hipErrorInvalidValue;
    report("block-compressed views of another size refused", ok);
  }
  HIP_CHECK(hipFreeArray(a));
  HIP_CHECK(hipFree(dcentres));
  HIP_CHECK(hipFree(dat));
  HIP_CHECK(hipFree(dout));
}

// ---------------------------------------------------------------- BC6H and BC7

// The BPTC tables of ARB_texture_compression_bptc: subsets of the 16 texels of each two- and
// three-subset partition, and the anchor texels of the second (and third) subsets.
static const char* const kPart2[64] = {
    "0011001100110011", "0001000100010001", "0111011101110111", "0001001100110111", "0000000100010011",
    "0011011101111111", "0001001101111111", "0000000100110111", "0000000000010011", "0011011111111111",
    "0000000101111111", "0000000000010111", "0001011111111111", "0000000011111111", "0000111111111111",
    "0000000000001111", "0000100011101111", "0111000100000000", "0000000010001110", "0111001100010000",
    "0011000100000000", "0000100011001110", "0000000010001100", "0111001100110001", "0011000100010000",
    "0000100010001100", "0110011001100110", "0011011001101100", "0001011111101000", "0000111111110000",
    "0111000110001110", "0011100110011100", "0101010101010101", "0000111100001111", "0101101001011010",
    "0011001111001100", "0011110000111100", "0101010110101010", "0110100101101001", "0101101010100101",
    "0111001111001110", "0001001111001000", "0011001001001100", "0011101111011100", "0110100110010110",
    "0011110011000011", "0110011010011001", "0000011001100000", "0100111001000000", "0010011100100000",
    "0000001001110010", "0000010011100100", "0110110010010011", "0011011011001001", "0110001110011100",
    "0011100111000110", "0110110011001001", "0110001100111001", "0111111010000001", "0001100011100111",
    "0000111100110011", "0011001111110000", "0010001011101110", "0100010001110111"};
static const char* const kPart3[64] = {
    "0011001102212222", "0001001122112221", "0000200122112211", "0222002200110111", "0000000011221122",
    "0011001100220022", "0022002211111111", "0011001122112211", "0000000011112222", "0000111111112222",
    "0000111122222222", "0012001200120012", "0112011201120112", "0122012201220122", "0011011211221222",
    "0011200122002220", "0001001101121122", "0111001120012200", "0000112211221122", "0022002200221111",
    "0111011102220222", "0001000122212221", "0000001101220122", "0000110022102210", "0122012200110000",
    "0012001211222222", "0110122112210110", "0000011012211221", "0022110211020022", "0110011020022222",
    "0011012201220011", "0000200022112221", "0000000211221222", "0222002200120011", "0011001200220222",
    "0120012001200120", "0000111122220000", "0120120120120120", "0120201212010120", "0011220011220011",
    "0011112222000011", "0101010122222222", "0000000021212121", "0022112200221122", "0022001100220011",
    "0220122102201221", "0101222222220101", "0000212121212121", "0101010101012222", "0222011102220111",
    "0002111200021112", "0000211221122112", "0222011101110222", "0002111211120002", "0110011001102222",
    "0000000021122112", "0110011022222222", "0022001100110022", "0022112211220022", "0000000000002112",
    "0002000100020001", "0222122202221222", "0101222222222222", "0111201122012220"};
static const int kAnchor2[64] = {15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
                                 15, 2,  8,  2,  2,  8,  8,  15, 2,  8,  2,  2,  8,  8,  2,  2,
                                 15, 15, 6,  8,  2,  8,  15, 15, 2,  8,  2,  2,  2,  15, 15, 6,
                                 6,  2,  6,  8,  15, 15, 2,  2,  15, 15, 15, 15, 15, 2,  2,  15};
static const int kAnchor3[2][64] = {
    {3, 3,  15, 15, 8, 3,  15, 15, 8,  8,  6,  6,  6,  5,  3, 3, 3, 3,  8, 15, 3,  3,
     6, 10, 5,  8,  8, 6,  8,  5,  15, 15, 8,  15, 3,  5,  6, 10, 8, 15, 15, 3, 15, 5,
     15, 15, 15, 15, 3, 15, 5, 5, 5, 8, 5, 10, 5, 10, 8, 13, 15, 12, 3, 3},
    {15, 8, 8,  3,  15, 15, 3,  8,  15, 15, 15, 15, 15, 15, 15, 8,  15, 8, 15, 3,  15, 8,
     15, 8, 3,  15, 6,  10, 15, 15, 10, 8,  15, 3,  15, 10, 10, 8,  9,  10, 6, 15, 8,  15,
     3,  6, 6,  8,  15, 3,  15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 3, 15, 15, 8}};
static const int kWeights[3][16] = {{0, 21, 43, 64},
                                    {0, 9, 18, 27, 37, 46, 55, 64},
                                    {0, 4, 9, 13, 17, 21, 26, 30, 34, 38, 43, 47, 51, 55, 60, 64}};

// The next n bits of a 16-byte block from bit *pos on, lowest first.
static int take_bits(const unsigned char* b, int* pos, int n) {
  int v = 0;
  for (int k = 0; k < n; k++, (*pos)++)
    if (*pos < 128) v |= (b[*pos >> 3] >> (*pos & 7) & 1) << k;
  return v;
}

// Subset of texel t in a block of ns subsets and partition p; *anchor when its index is one
// bit short.
static int bptc_subset(int ns, int p, int t, bool* anchor) {
  int s = ns == 2 ? kPart2[p][t] - '0' : ns == 3 ? kPart3[p][t] - '0' : 0;
  int a = s == 0 ? 0 : ns == 2 ? kAnchor2[p] : kAnchor3[s - 1][p];
  *anchor = a == t;
  return s;
}

// Index of texel i among 16 of `bits` bits each starting at bit `start` (anchors one shorter).
static int bptc_index(const unsigned char* b, int start, int bits, int ns, int p, int i) {
  int pos = start, v = 0;
  for (int t = 0; t <= i; t++) {
    bool anchor;
    bptc_subset(ns, p, t, &anchor);
    v = take_bits(b, &pos, bits - (anchor ? 1 : 0));
  }
  return v;
}

static int bptc_lerp(int a, int b, int w) { return (a * (64 - w) + b * w + 32) >> 6; }

// Texel i of a BC7 block as 8-bit RGBA; the reserved mode (no mode bit) reads as zeros.
static void bc7_texel(const unsigned char* b, int i, int out[4]) {
  // NS PB RB ISB CB AB EPB SPB IB IB2 of modes 0-7.
  static const int kModes[8][10] = {{3, 4, 0, 0, 4, 0, 1, 0, 3, 0}, {2, 6, 0, 0, 6, 0, 0, 1, 3, 0},
                                    {3, 6, 0, 0, 5, 0, 0, 0, 2, 0}, {2, 6, 0, 0, 7, 0, 1, 0, 2, 0},
                                    {1, 0, 2, 1, 5, 6, 0, 0, 2, 3}, {1, 0, 2, 0, 7, 8, 0, 0, 2, 2},
                                    {1, 0, 0, 0, 7, 7, 1, 0, 4, 0}, {2, 6, 0, 0, 5, 5, 1, 0, 2, 0}};
  int mode = 0;
  while (mode < 8 && !(b[0] >> mode & 1)) mode++;
  for (int c = 0; c < 4; c++) out[c] = 0;
  if (mode == 8) return;
  const int* m = kModes[mode];
  int ns = m[0], cb = m[4], ab = m[5], ib = m[8], ib2 = m[9];
  int pos = mode + 1;
  int p = take_bits(b, &pos, m[1]), rot = take_bits(b, &pos, m[2]), isb = take_bits(b, &pos, m[3]);
  int e[6][4] = {};
  for (int c = 0; c < 4; c++)
    for (int k = 0; k < 2 * ns; k++) e[k][c] = c < 3 ? take_bits(b, &pos, cb) : ab ? take_bits(b, &pos, ab) : 0;
  if (m[6] || m[7]) {
    int pbit = 0;
    for (int k = 0; k < 2 * ns; k++) {
      if (m[6] || k % 2 == 0) pbit = take_bits(b, &pos, 1);
      for (int c = 0; c < 4; c++) e[k][c] = e[k][c] << 1 | pbit;
    }
    cb++;
    if (ab) ab++;
  }
  for (int k = 0; k < 2 * ns; k++)
    for (int c = 0; c < 4; c++) {
      int n = c < 3 ? cb : ab;
      e[k][c] = n ? (e[k][c] << (8 - n) | e[k][c] >> (2 * n - 8)) & 255 : 255;
    }
  bool anchor;
  int s = bptc_subset(ns, p, i, &anchor);
  int i1 = bptc_index(b, pos, ib, ns, p, i), n1 = ib, i2 = i1, n2 = ib;
  if (ib2) {
    i2 = bptc_index(b, pos + 16 * ib - 1, ib2, 1, 0, i);
    n2 = ib2;
    if (isb) { int t = i1; i1 = i2; i2 = t; t = n1; n1 = n2; n2 = t; }
  }
  for (int c = 0; c < 4; c++) {
    int w = c < 3 ? kWeights[n1 - 2][i1] : kWeights[n2 - 2][i2];
    out[c] = bptc_lerp(e[2 * s][c], e[2 * s + 1][c], w);
  }
  if (rot) { int t = out[3]; out[3] = out[rot - 1]; out[rot - 1] = t; }
}

// A half float's value.
static float half_value(int h) {
  int ex = h >> 10 & 31, man = h & 1023;
  double v = ex == 0 ? ldexp(man, -24) : ex == 31 ? (man ? NAN : INFINITY) : ldexp(man + 1024, ex - 25);
  return (float)(h & 0x8000 ? -v : v);
}

static int sign_extend(int v, int bits) { return v & (1 << (bits - 1)) ? v - (1 << bits) : v; }

// Texel i of a BC6H block as three half floats (bit patterns); reserved modes read as zeros.
static void bc6h_texel(const unsigned char* b, int i, bool sgn, int out[3]) {
  struct Mode { int number, transformed, epb, delta[3]; const char* layout; };
  static const Mode kModes[14] = {
      {0, 1, 10, {5, 5, 5}, "m[1:0],g2[4],b2[4],b3[4],r0[9:0],g0[9:0],b0[9:0],r1[4:0],g3[4],g2[3:0],g1[4:0],b3[0],g3[3:0],b1[4:0],b3[1],b2[3:0],r2[4:0],b3[2],r3[4:0],b3[3]"},
      {1, 1, 7, {6, 6, 6}, "m[1:0],g2[5],g3[4],g3[5],r0[6:0],b3[0],b3[1],b2[4],g0[6:0],b2[5],b3[2],g2[4],b0[6:0],b3[3],b3[5],b3[4],r1[5:0],g2[3:0],g1[5:0],g3[3:0],b1[5:0],b2[3:0],r2[5:0],r3[5:0]"},
      {2, 1, 11, {5, 4, 4}, "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[4:0],r0[10],g2[3:0],g1[3:0],g0[10],b3[0],g3[3:0],b1[3:0],b0[10],b3[1],b2[3:0],r2[4:0],b3[2],r3[4:0],b3[3]"},
      {6, 1, 11, {4, 5, 4}, "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[3:0],r0[10],g3[4],g2[3:0],g1[4:0],g0[10],g3[3:0],b1[3:0],b0[10],b3[1],b2[3:0],r2[3:0],b3[0],b3[2],r3[3:0],g2[4],b3[3]"},
      {10, 1, 11, {4, 4, 5}, "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[3:0],r0[10],b2[4],g2[3:0],g1[3:0],g0[10],b3[0],g3[3:0],b1[4:0],b0[10],b2[3:0],r2[3:0],b3[1],b3[2],r3[3:0],b3[4],b3[3]"},
      {14, 1, 9, {5, 5, 5}, "m[4:0],r0[8:0],b2[4],g0[8:0],g2[4],b0[8:0],b3[4],r1[4:0],g3[4],g2[3:0],g1[4:0],b3[0],g3[3:0],b1[4:0],b3[1],b2[3:0],r2[4:0],b3[2],r3[4:0],b3[3]"},
      {18, 1, 8, {6, 5, 5}, "m[4:0],r0[7:0],g3[4],b2[4],g0[7:0],b3[2],g2[4],b0[7:0],b3[3],b3[4],r1[5:0],g2[3:0],g1[4:0],b3[0],g3[3:0],b1[4:0],b3[1],b2[3:0],r2[5:0],r3[5:0]"},
      {22, 1, 8, {5, 6, 5}, "m[4:0],r0[7:0],b3[0],b2[4],g0[7:0],g2[5],g2[4],b0[7:0],g3[5],b3[4],r1[4:0],g3[4],g2[3:0],g1[5:0],g3[3:0],b1[4:0],b3[1],b2[3:0],r2[4:0],b3[2],r3[4:0],b3[3]"},
      {26, 1, 8, {5, 5, 6}, "m[4:0],r0[7:0],b3[1],b2[4],g0[7:0],b2[5],g2[4],b0[7:0],b3[5],b3[4],r1[4:0],g3[4],g2[3:0],g1[4:0],b3[0],g3[3:0],b1[5:0],b2[3:0],r2[4:0],b3[2],r3[4:0],b3[3]"},
      {30, 0, 6, {6, 6, 6}, "m[4:0],r0[5:0],g3[4],b3[0],b3[1],b2[4],g0[5:0],g2[5],b2[5],b3[2],g2[4],b0[5:0],g3[5],b3[3],b3[5],b3[4],r1[5:0],g2[3:0],g1[5:0],g3[3:0],b1[5:0],b2[3:0],r2[5:0],r3[5:0]"},
      {3, 0, 10, {10, 10, 10}, "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[9:0],g1[9:0],b1[9:0]"},
      {7, 1, 11, {9, 9, 9}, "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[8:0],r0[10],g1[8:0],g0[10],b1[8:0],b0[10]"},
      {11, 1, 12, {8, 8, 8}, "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[7:0],r0[10:11],g1[7:0],g0[10:11],b1[7:0],b0[10:11]"},
      {15, 1, 16, {4, 4, 4}, "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[3:0],r0[10:15],g1[3:0],g0[10:15],b1[3:0],b0[10:15]"},
  };
  int number = (b[0] & 3) < 2 ? (b[0] & 3) : (b[0] & 31);
  const Mode* m = nullptr;
  for (const Mode& k : kModes)
    if (k.number == number) m = &k;
  out[0] = out[1] = out[2] = 0;
  if (!m) return;
  int e[4][3] = {};
  int pos = 0;
  for (const char* f = m->layout; *f;) {
    char name = f[0], end = f[1];
    int a = 0, lo;
    f += 3;  // "x0["
    if (name == 'm') f--;
    while (*f >= '0' && *f <= '9') a = a * 10 + (*f++ - '0');
    lo = a;
    if (*f == ':') {
      f++;
      lo = 0;
      while (*f >= '0' && *f <= '9') lo = lo * 10 + (*f++ - '0');
    }
    f++;  // ']'
    if (*f == ',') f++;
    int step = a >= lo ? 1 : -1, n = (a - lo) * step + 1;
    for (int j = 0; j < n; j++) {
      int bit = take_bits(b, &pos, 1);
      if (name != 'm') e[end - '0'][name == 'r' ? 0 : name == 'g' ? 1 : 2] |= bit << (lo + j * step);
    }
  }
  bool two = number < 2 || (number & 3) == 2;
  int p = two ? take_bits(b, &pos, 5) : 0, ends = two ? 4 : 2;
  for (int c = 0; c < 3; c++) {
    if (sgn) e[0][c] = sign_extend(e[0][c], m->epb);
    for (int k = 1; k < ends; k++) {
      if (sgn || m->transformed) e[k][c] = sign_extend(e[k][c], m->delta[c]);
      if (m->transformed) {
        e[k][c] = (e[0][c] + e[k][c]) & ((1 << m->epb) - 1);
        if (sgn) e[k][c] = sign_extend(e[k][c], m->epb);
      }
    }
  }
  auto unquantize = [&](int x) {
    int bits = m->epb;
    if (!sgn) {
      if (bits >= 15 || x == 0) return x;
      if (x == (1 << bits) - 1) return 0xffff;
      return ((x << 15) + 0x4000) >> (bits - 1);
    }
    if (bits >= 16) return x;
    int mag = x < 0 ? -x : x;
    int q = mag == 0 ? 0 : mag >= (1 << (bits - 1)) - 1 ? 0x7fff : ((mag << 15) + 0x4000) >> (bits - 1);
    return x < 0 ? -q : q;
  };
  bool anchor;
  int s = bptc_subset(two ? 2 : 1, p, i, &anchor), ib = two ? 3 : 4;
  int w = kWeights[ib - 2][bptc_index(b, pos, ib, two ? 2 : 1, p, i)];
  for (int c = 0; c < 3; c++) {
    int v = bptc_lerp(unquantize(e[2 * s][c]), unquantize(e[2 * s + 1][c]), w);
    out[c] = !sgn ? v * 31 >> 6 : v < 0 ? (-v * 31 >> 5) | 0x8000 : v * 31 >> 5;
  }
}

// BC6H (unsigned and signed) and BC7 views: every texel point sampled, and linear filtering,
// against the host decoders above; BC7 also read as sRGB.
static void block_compressed_bptc() {
  const int BW = 4, BH = 2, TW = 4 * BW, TH = 4 * BH, N = 96;
  struct Case { const char* name; int view; int kind; bool srgb; };
  const Case cases[] = {
      {"BC6H", hipResViewFormatUnsignedBlockCompressed6H, 6, false},
      {"BC6H signed", hipResViewFormatSignedBlockCompressed6H, -6, false},
      {"BC7", hipResViewFormatUnsignedBlockCompressed7, 7, false},
      {"BC7 sRGB", hipResViewFormatUnsignedBlockCompressed7, 7, true},
  };
  std::vector<float2> centres(TW * TH);
  for (int i = 0; i < TW * TH; i++) centres[i] = make_float2(i % TW + 0.5f, i / TW + 0.5f);
  std::vector<float2> at(N);
  for (int i = 0; i < N; i++) at[i] = make_float2(-1.3f + 0.157f * i, -0.7f + 0.41f * (i % 23));
  float2* dcentres = upload(centres);
  float2* dat = upload(at);
  float4* dout;
  HIP_CHECK(hipMalloc(&dout, TW * TH * sizeof(float4)));
  unsigned seed = 4321;
  for (const Case& k : cases) {
    // Random blocks, each in another mode: the 14 of BC6H over its two cases and a reserved
    // one in each, the 8 of BC7 (the plain case's last block has the reserved first byte 0).
    std::vector<unsigned char> blocks(BW * BH * 16);
    for (auto& byte : blocks) {
      seed = seed * 1103515245u + 12345u;
      byte = (unsigned char)(seed >> 16);
    }
    for (int q = 0; q < BW * BH; q++) {
      unsigned char& b0 = blocks[16 * q];
      if (k.kind == 7) {
        int mode = (q + (k.srgb ? 2 : 0)) % 8;
        b0 = q == BW * BH - 1 && !k.srgb ? 0 : (unsigned char)((b0 & ~((2 << mode) - 1)) | 1 << mode);
      } else {
        // Unsigned: 0, 1, 2, 6, 10, 14, 18 and reserved 19; signed: 22, 26, 30, 3, 7, 11, 15
        // and reserved 23.
        static const int kNumbers[8][2] = {{0, 22}, {1, 26}, {2, 30}, {6, 3}, {10, 7}, {14, 11}, {18, 15}, {19, 23}};
        int number = kNumbers[q][k.kind < 0];
        b0 = (unsigned char)(number < 2 ? (b0 & ~3) | number : (b0 & ~31) | number);
      }
    }
    hipChannelFormatDesc cd = hipCreateChannelDesc(32, 32, 32, 32, hipChannelFormatKindUnsigned);
    hipArray_t a;
    HIP_CHECK(hipMallocArray(&a, &cd, BW, BH));
    HIP_CHECK(hipMemcpy2DToArray(a, 0, 0, blocks.data(), BW * 16, BW * 16, BH, hipMemcpyHostToDevice));
    std::vector<float> chan[4];
    for (int c = 0; c < 4; c++) chan[c].resize(TW * TH);
    for (int y = 0; y < TH; y++)
      for (int x = 0; x < TW; x++) {
        const unsigned char* b = &blocks[((y / 4) * BW + x / 4) * 16];
        int i = (y % 4) * 4 + x % 4;
        float t[4] = {0, 0, 0, 1};
        if (k.kind == 7) {
          int v[4];
          bc7_texel(b, i, v);
          for (int c = 0; c < 4; c++) t[c] = (float)(v[c] / 255.0);
          if (k.srgb)
            for (int c = 0; c < 3; c++) t[c] = srgb_to_linear(t[c]);
        } else {
          int h[3];
          bc6h_texel(b, i, k.kind < 0, h);
          for (int c = 0; c < 3; c++) t[c] = half_value(h[c]);
        }
        for (int c = 0; c < 4; c++) chan[c][y * TW + x] = t[c];
      }
    hipResourceDesc r = {};
    r.resType = hipResourceTypeArray;
    r.res.array.array = a;
    hipResourceViewDesc v = {};
    v.format = (hipResourceViewFormat)k.view;
    v.width = TW;
    v.height = TH;
    char name[96];
    snprintf(name, sizeof name, "%s view: every texel, and linear filtering", k.name);
    bool ok = true, skipped = false;
    for (int linear = 0; linear < 2 && ok && !skipped; linear++) {
      hipTextureDesc td = {};
      td.addressMode[0] = td.addressMode[1] = hipAddressModeClamp;
      td.filterMode = linear ? hipFilterModeLinear : hipFilterModePoint;
      td.readMode = hipReadModeElementType;
      td.sRGB = k.srgb;
      hipTextureObject_t t;
      if (skipped_on_hip_5_2(name, "refuses block-compressed views (hipErrorInvalidValue)") ||
          !made(hipCreateTextureObject(&t, &r, &td, &v), name)) {
        skipped = true;
        break;
      }
      int n = linear ? N : TW * TH;
      fetch_u8<<<(n + 63) / 64, 64>>>(t, linear ? dat : dcentres, dout, n);
      HIP_CHECK(hipGetLastError());
      std::vector<float4> got = download(dout, n);
      for (int c = 0; c < 4 && ok; c++) {
        Img im = {chan[c].data(), TW, TH, 1};
        for (int i = 0; i < n && ok; i++) {
          float want = linear ? model(im, 2, 1, true, at[i].x, at[i].y, 0) : chan[c][i];
          ok &= close((&got[i].x)[c], want, k.name, i + 1000 * c + 10000 * linear);
        }
      }
      HIP_CHECK(hipDestroyTextureObject(t));
    }
    if (!skipped) report(name, ok);
    HIP_CHECK(hipFreeArray(a));
  }
  HIP_CHECK(hipFree(dcentres));
  HIP_CHECK(hipFree(dat));
  HIP_CHECK(hipFree(dout));
}

int main(int, char** argv) {
  two_d();
  one_and_three_d();
  layered_and_mipmapped();
  linear_memory_and_formats();
  surfaces();
  limits();
  if (!skipped_on_hip_5_2("driver API texture references",
                          "answers hipModuleGetTexRef and hipTexRefGetMaxAnisotropy otherwise"))
    driver_api(argv[0]);
  driver_objects();
  cube_maps();
  border_colours();
  views();
  block_compressed();
  block_compressed_bptc();
  anisotropic();
  freed_memory_behind_a_texture();
  return finish();
}
