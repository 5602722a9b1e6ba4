// Every matrix (MFMA) instruction clang-19 emits for gfx90a and gfx942, through the compiler
// builtins (__builtin_amdgcn_mfma_*): each lane loads its A, B and C elements from matrices in
// global memory at the registers and lanes AMD's matrix instruction documentation gives, runs
// the instruction, and stores its D elements back in matrix order; the host checks every
// element of every block against its own matrix multiply (D = A * B + C, exact: the inputs are
// small integers every element type holds). Also CBSZ/ABID broadcasts and BLGP lane patterns.
// Built for gfx90a and gfx942 (tests/hip_programs/emu/build.sh), run on software agents of both.
#include "../emu/check.h"
#include <string>
#include <vector>

typedef float float2_t __attribute__((ext_vector_type(2)));
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));
typedef float float32_t __attribute__((ext_vector_type(32)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef short short2_t __attribute__((ext_vector_type(2)));
typedef short short4_t __attribute__((ext_vector_type(4)));
typedef int int4_t __attribute__((ext_vector_type(4)));
typedef int int16_t_ __attribute__((ext_vector_type(16)));
typedef int int32_t_ __attribute__((ext_vector_type(32)));
typedef double double4_t __attribute__((ext_vector_type(4)));

// Element kinds of A and B, as stored in the host's matrices (one int per element) and packed
// into registers by the kernel.
enum Kind { F32, XF32, F16, BF16, I8, FP8, BF8, F64 };

// One instruction: blocks of M x N x K, K_PER_LANE elements of A (and B) per lane.
struct Shape {
  int m, n, k, blocks, k_per_lane;
  Kind a, b;
  bool f64_out, i32_out;
};

// A's element (i, k) of block b: its lane and its index among the lane's elements. Lanes
// 0..M-1 hold the rows of block 0, the next M lanes block 1, ...; once every block has its
// rows, the next lanes hold the next K_PER_LANE columns (AMD's Matrix Instruction Calculator).
__host__ __device__ static void a_lane(const Shape& s, int i, int k, int b, int* lane, int* elem) {
  *lane = i + s.m * b + s.m * s.blocks * (k / s.k_per_lane);
  *elem = k % s.k_per_lane;
}

// D's element (i, j) of block b: its lane and register (in 32-bit registers; f64 results take
// two). Four rows per group of registers, groups alternating over lanes of N columns; 4x4
// blocks sit side by side in the lanes; f64 results fill the lanes with rows first.
__host__ __device__ static void d_lane(const Shape& s, int i, int j, int b, int* lane, int* reg) {
  if (s.f64_out) {
    int rows = 64 / (s.n * s.blocks);
    *lane = j + s.n * b + s.n * s.blocks * (i % rows);
    *reg = i / rows;
    return;
  }
  if (s.m == 4) {
    *lane = j + s.n * b;
    *reg = i;
    return;
  }
  int groups = 64 / s.n;
  *lane = j + s.n * ((i / 4) % groups);
  *reg = 4 * (i / (4 * groups)) + i % 4 + b * (s.m * s.n / 64);
}

// Element encodings of small integers.
__host__ __device__ static unsigned short f16_bits(int v) {
  _Float16 h = (_Float16)v;
  unsigned short u;
  __builtin_memcpy(&u, &h, 2);
  return u;
}
__host__ __device__ static unsigned short bf16_bits(int v) {
  float f = (float)v;
  unsigned u;
  __builtin_memcpy(&u, &f, 4);
  return (unsigned short)(u >> 16);
}
// gfx940's FNUZ 8-bit floats of a small integer: E4M3 with bias 8, E5M2 with bias 16.
__host__ __device__ static unsigned char fnuz8_bits(int v, int mbits, int bias) {
  if (v == 0) return 0;
  unsigned char sign = v < 0 ? 0x80 : 0;
  int a = v < 0 ? -v : v;
  int e = 0;
  while ((a >> (e + 1)) != 0) e++;
  int mant = (a - (1 << e)) << mbits >> e;  // exact for the values used
  return sign | (unsigned char)((e + bias) << mbits) | (unsigned char)mant;
}

// The lane's packed A (or B) elements `e0..` as the register bits the builtin takes.
__device__ static unsigned long long pack(Kind kind, const int* vals, int n) {
  unsigned long long r = 0;
  for (int e = 0; e < n; e++) {
    unsigned long long x;
    int bits;
    switch (kind) {
      case F16: x = f16_bits(vals[e]); bits = 16; break;
      case BF16: x = bf16_bits(vals[e]); bits = 16; break;
      case I8: x = (unsigned char)(signed char)vals[e]; bits = 8; break;
      case FP8: x = fnuz8_bits(vals[e], 3, 8); bits = 8; break;
      case BF8: x = fnuz8_bits(vals[e], 2, 16); bits = 8; break;
      default: x = 0; bits = 32; break;
    }
    r |= x << (bits * e);
  }
  return r;
}

// Loads the lane's A elements (B with `is_b`) of its block for the instruction's layout.
__device__ static void lane_elems(const Shape& s, const int* mat, bool is_b, int lane, int* out) {
  // Invert a_lane: which (row, k-group, block) this lane holds.
  int rows = is_b ? s.n : s.m;
  int i = lane % rows;
  int rest = lane / rows;
  int b = rest % s.blocks;
  int kg = rest / s.blocks;
  for (int e = 0; e < s.k_per_lane; e++) {
    int k = kg * s.k_per_lane + e;
    // A is blocks x M x K; B is blocks x K x N.
    out[e] = is_b ? mat[(b * s.k + k) * s.n + i] : mat[(b * s.m + i) * s.k + k];
  }
}

// D and C: the lane's registers as matrix elements of each block (f64 results: registers
// counted in doubles).
template <typename T, int R>
__device__ static void load_c(const Shape& s, const T* c, int lane, T (&regs)[R]) {
  for (int b = 0; b < s.blocks; b++)
    for (int i = 0; i < s.m; i++)
      for (int j = 0; j < s.n; j++) {
        int l, r;
        d_lane(s, i, j, b, &l, &r);
        if (l == lane) regs[r] = c[(b * s.m + i) * s.n + j];
      }
}

template <typename T, int R>
__device__ static void store_d(const Shape& s, T* d, int lane, const T (&regs)[R]) {
  for (int b = 0; b < s.blocks; b++)
    for (int i = 0; i < s.m; i++)
      for (int j = 0; j < s.n; j++) {
        int l, r;
        d_lane(s, i, j, b, &l, &r);
        if (l == lane) d[(b * s.m + i) * s.n + j] = regs[r];
      }
}

#define KERNEL(NAME, ...)                                                                      \
  __global__ void NAME(Shape s, const int* a, const int* b, const void* c_, void* d_, int kind) { \
    int lane = threadIdx.x;                                                                    \
    int av[8], bv[8];                                                                          \
    lane_elems(s, a, false, lane, av);                                                         \
    lane_elems(s, b, true, lane, bv);                                                          \
    __VA_ARGS__                                                                                \
  }

// One builtin call: A/B built from the lane's values, C loaded, D stored, for float results.
#define F32_BODY(VT, N, CALL)                                                                  \
  {                                                                                            \
    const float* c = (const float*)c_;                                                         \
    float regs[N];                                                                             \
    load_c(s, c, lane, regs);                                                                  \
    VT acc;                                                                                    \
    for (int r = 0; r < N; r++) acc[r] = regs[r];                                              \
    acc = CALL;                                                                                \
    for (int r = 0; r < N; r++) regs[r] = acc[r];                                              \
    store_d(s, (float*)d_, lane, regs);                                                        \
  }

#define I32_BODY(VT, N, CALL)                                                                  \
  {                                                                                            \
    const int* c = (const int*)c_;                                                             \
    int regs[N];                                                                               \
    load_c(s, c, lane, regs);                                                                  \
    VT acc;                                                                                    \
    for (int r = 0; r < N; r++) acc[r] = regs[r];                                              \
    acc = CALL;                                                                                \
    for (int r = 0; r < N; r++) regs[r] = acc[r];                                              \
    store_d(s, (int*)d_, lane, regs);                                                          \
  }

#define AS_F32 float fa = (float)av[0], fb = (float)bv[0];
#define AS_F16 half4_t ha, hb; for (int e = 0; e < 4; e++) { ha[e] = (_Float16)av[e]; hb[e] = (_Float16)bv[e]; }
#define AS_BF16_2 short2_t sa, sb; for (int e = 0; e < 2; e++) { sa[e] = (short)bf16_bits(av[e]); sb[e] = (short)bf16_bits(bv[e]); }
#define AS_BF16_4 short4_t sa, sb; for (int e = 0; e < 4; e++) { sa[e] = (short)bf16_bits(av[e]); sb[e] = (short)bf16_bits(bv[e]); }
#define AS_I8_4 int ia = (int)pack(I8, av, 4), ib = (int)pack(I8, bv, 4);
#define AS_I8_8 long ia = (long)pack(I8, av, 8), ib = (long)pack(I8, bv, 8);
#define AS_XF32 float2_t xa, xb; for (int e = 0; e < 2; e++) { xa[e] = (float)av[e]; xb[e] = (float)bv[e]; }
#define AS_F8(KA, KB) long qa = (long)pack(KA, av, 8), qb = (long)pack(KB, bv, 8);

// Every kernel exists in every compilation (the host's table names them all); the bodies of
// one processor's instructions are compiled only for it (empty elsewhere, never launched).
#if defined(__gfx90a__) || defined(__gfx942__) || !defined(__HIP_DEVICE_COMPILE__)
#define CDNA(...) __VA_ARGS__
#else
#define CDNA(...)
#endif
#if defined(__gfx90a__) || !defined(__HIP_DEVICE_COMPILE__)
#define GFX90A(...) __VA_ARGS__
#else
#define GFX90A(...)
#endif
#if defined(__gfx942__) || !defined(__HIP_DEVICE_COMPILE__)
#define GFX942(...) __VA_ARGS__
#else
#define GFX942(...)
#endif

KERNEL(k_32x32x1f32, CDNA(AS_F32 F32_BODY(float32_t, 32, __builtin_amdgcn_mfma_f32_32x32x1f32(fa, fb, acc, 0, 0, 0))))
KERNEL(k_16x16x1f32, CDNA(AS_F32 F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_16x16x1f32(fa, fb, acc, 0, 0, 0))))
KERNEL(k_4x4x1f32, CDNA(AS_F32 F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_4x4x1f32(fa, fb, acc, 0, 0, 0))))
KERNEL(k_32x32x2f32, CDNA(AS_F32 F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_32x32x2f32(fa, fb, acc, 0, 0, 0))))
KERNEL(k_16x16x4f32, CDNA(AS_F32 F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_16x16x4f32(fa, fb, acc, 0, 0, 0))))
KERNEL(k_32x32x4f16, CDNA(AS_F16 F32_BODY(float32_t, 32, __builtin_amdgcn_mfma_f32_32x32x4f16(ha, hb, acc, 0, 0, 0))))
KERNEL(k_16x16x4f16, CDNA(AS_F16 F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_16x16x4f16(ha, hb, acc, 0, 0, 0))))
KERNEL(k_4x4x4f16, CDNA(AS_F16 F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_4x4x4f16(ha, hb, acc, 0, 0, 0))))
KERNEL(k_32x32x8f16, CDNA(AS_F16 F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_32x32x8f16(ha, hb, acc, 0, 0, 0))))
KERNEL(k_16x16x16f16, CDNA(AS_F16 F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_16x16x16f16(ha, hb, acc, 0, 0, 0))))
KERNEL(k_32x32x4i8, CDNA(AS_I8_4 I32_BODY(int32_t_, 32, __builtin_amdgcn_mfma_i32_32x32x4i8(ia, ib, acc, 0, 0, 0))))
KERNEL(k_16x16x4i8, CDNA(AS_I8_4 I32_BODY(int16_t_, 16, __builtin_amdgcn_mfma_i32_16x16x4i8(ia, ib, acc, 0, 0, 0))))
KERNEL(k_4x4x4i8, CDNA(AS_I8_4 I32_BODY(int4_t, 4, __builtin_amdgcn_mfma_i32_4x4x4i8(ia, ib, acc, 0, 0, 0))))
KERNEL(k_32x32x4bf16_1k, CDNA(AS_BF16_4 F32_BODY(float32_t, 32, __builtin_amdgcn_mfma_f32_32x32x4bf16_1k(sa, sb, acc, 0, 0, 0))))
KERNEL(k_16x16x4bf16_1k, CDNA(AS_BF16_4 F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_16x16x4bf16_1k(sa, sb, acc, 0, 0, 0))))
KERNEL(k_4x4x4bf16_1k, CDNA(AS_BF16_4 F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_4x4x4bf16_1k(sa, sb, acc, 0, 0, 0))))
KERNEL(k_32x32x8bf16_1k, CDNA(AS_BF16_4 F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(sa, sb, acc, 0, 0, 0))))
KERNEL(k_16x16x16bf16_1k, CDNA(AS_BF16_4 F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(sa, sb, acc, 0, 0, 0))))
// Broadcasts and lane patterns: CBSZ 2 / ABID 1 on 4x4x1 (16 blocks), BLGP 3 on 32x32x2.
KERNEL(k_4x4x1f32_cbsz2_abid1, CDNA(AS_F32 F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_4x4x1f32(fa, fb, acc, 2, 1, 0))))
KERNEL(k_32x32x2f32_blgp3, CDNA(AS_F32 F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_32x32x2f32(fa, fb, acc, 0, 0, 3))))
KERNEL(k_16x16x4f64, CDNA({
  double fa = av[0], fb = bv[0];
  const double* c = (const double*)c_;
  double regs[4];
  load_c(s, c, lane, regs);
  double4_t acc;
  for (int r = 0; r < 4; r++) acc[r] = regs[r];
  acc = __builtin_amdgcn_mfma_f64_16x16x4f64(fa, fb, acc, 0, 0, 0);
  for (int r = 0; r < 4; r++) regs[r] = acc[r];
  store_d(s, (double*)d_, lane, regs);
}))
KERNEL(k_4x4x4f64, CDNA({
  double fa = av[0], fb = bv[0];
  const double* c = (const double*)c_;
  double regs[1];
  load_c(s, c, lane, regs);
  regs[0] = __builtin_amdgcn_mfma_f64_4x4x4f64(fa, fb, regs[0], 0, 0, 0);
  store_d(s, (double*)d_, lane, regs);
}))

// gfx90a only: the first bf16 forms (two per register) and the 8-bit forms of K 8 and 16.
KERNEL(k_32x32x2bf16, GFX90A(AS_BF16_2 F32_BODY(float32_t, 32, __builtin_amdgcn_mfma_f32_32x32x2bf16(sa, sb, acc, 0, 0, 0))))
KERNEL(k_16x16x2bf16, GFX90A(AS_BF16_2 F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_16x16x2bf16(sa, sb, acc, 0, 0, 0))))
KERNEL(k_4x4x2bf16, GFX90A(AS_BF16_2 F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_4x4x2bf16(sa, sb, acc, 0, 0, 0))))
KERNEL(k_32x32x4bf16, GFX90A(AS_BF16_2 F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_32x32x4bf16(sa, sb, acc, 0, 0, 0))))
KERNEL(k_16x16x8bf16, GFX90A(AS_BF16_2 F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_16x16x8bf16(sa, sb, acc, 0, 0, 0))))
KERNEL(k_32x32x8i8, GFX90A(AS_I8_4 I32_BODY(int16_t_, 16, __builtin_amdgcn_mfma_i32_32x32x8i8(ia, ib, acc, 0, 0, 0))))
KERNEL(k_16x16x16i8, GFX90A(AS_I8_4 I32_BODY(int4_t, 4, __builtin_amdgcn_mfma_i32_16x16x16i8(ia, ib, acc, 0, 0, 0))))

// gfx940 and later: xf32, 8-bit integers of K 16 and 32 (64-bit A and B), fp8/bf8, and the
// f64 forms' negation through BLGP.
KERNEL(k_16x16x8_xf32, GFX942(AS_XF32 F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_16x16x8_xf32(xa, xb, acc, 0, 0, 0))))
KERNEL(k_32x32x4_xf32, GFX942(AS_XF32 F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_32x32x4_xf32(xa, xb, acc, 0, 0, 0))))
KERNEL(k_32x32x16_i8, GFX942(AS_I8_8 I32_BODY(int16_t_, 16, __builtin_amdgcn_mfma_i32_32x32x16_i8(ia, ib, acc, 0, 0, 0))))
KERNEL(k_16x16x32_i8, GFX942(AS_I8_8 I32_BODY(int4_t, 4, __builtin_amdgcn_mfma_i32_16x16x32_i8(ia, ib, acc, 0, 0, 0))))
KERNEL(k_16x16x32_fp8_fp8, GFX942(AS_F8(FP8, FP8) F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(qa, qb, acc, 0, 0, 0))))
KERNEL(k_16x16x32_fp8_bf8, GFX942(AS_F8(FP8, BF8) F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8(qa, qb, acc, 0, 0, 0))))
KERNEL(k_16x16x32_bf8_fp8, GFX942(AS_F8(BF8, FP8) F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8(qa, qb, acc, 0, 0, 0))))
KERNEL(k_16x16x32_bf8_bf8, GFX942(AS_F8(BF8, BF8) F32_BODY(float4_t, 4, __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(qa, qb, acc, 0, 0, 0))))
KERNEL(k_32x32x16_fp8_fp8, GFX942(AS_F8(FP8, FP8) F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(qa, qb, acc, 0, 0, 0))))
KERNEL(k_32x32x16_fp8_bf8, GFX942(AS_F8(FP8, BF8) F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_32x32x16_fp8_bf8(qa, qb, acc, 0, 0, 0))))
KERNEL(k_32x32x16_bf8_fp8, GFX942(AS_F8(BF8, FP8) F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8(qa, qb, acc, 0, 0, 0))))
KERNEL(k_32x32x16_bf8_bf8, GFX942(AS_F8(BF8, BF8) F32_BODY(float16_t, 16, __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8(qa, qb, acc, 0, 0, 0))))
KERNEL(k_16x16x4f64_neg, GFX942({
  double fa = av[0], fb = bv[0];
  const double* c = (const double*)c_;
  double regs[4];
  load_c(s, c, lane, regs);
  double4_t acc;
  for (int r = 0; r < 4; r++) acc[r] = regs[r];
  // neg:[1,0,1]: A and C negated.
  acc = __builtin_amdgcn_mfma_f64_16x16x4f64(fa, fb, acc, 0, 0, 5);
  for (int r = 0; r < 4; r++) regs[r] = acc[r];
  store_d(s, (double*)d_, lane, regs);
}))

typedef void (*Kernel)(Shape, const int*, const int*, const void*, void*, int);

struct Case {
  const char* name;
  Kernel kernel;
  Shape shape;
  int cbsz, abid, blgp;  // blgp on f64 forms: negations
  bool gfx90a, gfx942;
};

// The lane BLGP pattern p makes logical lane l of B read (AMD's documentation).
static int blgp_lane(int p, int l) {
  switch (p) {
    case 1: return l % 32;
    case 2: return 32 + l % 32;
    case 3: return (l + 16) % 64;
    case 4: return l % 16;
    case 5: return 16 + l % 16;
    case 6: return 32 + l % 16;
    case 7: return 48 + l % 16;
    default: return l;
  }
}

// Runs one case and compares every element of D with the host's A * B + C.
static void run_case(const Case& c) {
  const Shape& s = c.shape;
  int na = s.blocks * s.m * s.k, nb = s.blocks * s.k * s.n, nc = s.blocks * s.m * s.n;
  std::vector<int> a(na), b(nb), cm(nc);
  unsigned seed = 12345u + (unsigned)strlen(c.name) * 7919u;
  auto rnd = [&]() {
    seed = seed * 1664525u + 1013904223u;
    return (int)((seed >> 16) % 7) - 3;  // -3..3: exact in every element type
  };
  for (auto& x : a) x = rnd();
  for (auto& x : b) x = rnd();
  for (auto& x : cm) x = rnd() * 5;
  size_t celem = s.f64_out ? 8 : 4;
  std::vector<char> ch(nc * celem);
  for (int i = 0; i < nc; i++) {
    if (s.f64_out) ((double*)ch.data())[i] = cm[i];
    else if (s.i32_out) ((int*)ch.data())[i] = cm[i];
    else ((float*)ch.data())[i] = (float)cm[i];
  }
  int *da, *db;
  void *dc, *dd;
  HIP_CHECK(hipMalloc(&da, na * 4));
  HIP_CHECK(hipMalloc(&db, nb * 4));
  HIP_CHECK(hipMalloc(&dc, nc * celem));
  HIP_CHECK(hipMalloc(&dd, nc * celem));
  HIP_CHECK(hipMemcpy(da, a.data(), na * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, b.data(), nb * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dc, ch.data(), nc * celem, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(dd, 0xff, nc * celem));
  hipLaunchKernelGGL(c.kernel, dim3(1), dim3(64), 0, 0, s, da, db, dc, dd, 0);
  HIP_CHECK(hipGetLastError());
  std::vector<char> dh(nc * celem);
  HIP_CHECK(hipMemcpy(dh.data(), dd, nc * celem, hipMemcpyDeviceToHost));
  bool f64 = s.f64_out;
  int neg_a = f64 && (c.blgp & 1) ? -1 : 1, neg_b = f64 && (c.blgp & 2) ? -1 : 1,
      neg_c = f64 && (c.blgp & 4) ? -1 : 1;
  int bad = 0;
  char detail[256] = "";
  for (int blk = 0; blk < s.blocks; blk++) {
    // CBSZ/ABID: groups of 2^cbsz blocks read A from the group's block abid.
    int ab = c.cbsz ? ((blk >> c.cbsz) << c.cbsz) | (c.abid & ((1 << c.cbsz) - 1)) : blk;
    for (int i = 0; i < s.m; i++)
      for (int j = 0; j < s.n; j++) {
        long long want = (long long)neg_c * cm[(blk * s.m + i) * s.n + j];
        for (int k = 0; k < s.k; k++) {
          long long bv;
          if (!f64 && c.blgp) {
            // B's element (k, j) of this block is read from another lane: the element that
            // lane holds at the same place.
            int lane, e;
            a_lane(s, j, k, blk, &lane, &e);
            int src = blgp_lane(c.blgp, lane);
            int jj = src % s.n, rest = src / s.n, bb = rest % s.blocks, kk = (rest / s.blocks) * s.k_per_lane + e;
            bv = b[(bb * s.k + kk) * s.n + jj];
          } else {
            bv = b[(blk * s.k + k) * s.n + j];
          }
          want += (long long)neg_a * a[(ab * s.m + i) * s.k + k] * neg_b * bv;
        }
        double got = s.f64_out ? ((double*)dh.data())[(blk * s.m + i) * s.n + j]
                     : s.i32_out ? ((int*)dh.data())[(blk * s.m + i) * s.n + j]
                                 : ((float*)dh.data())[(blk * s.m + i) * s.n + j];
        if (got != (double)want) {
          if (!bad)
            snprintf(detail, sizeof detail, "block %d D[%d][%d] = %g, host %lld", blk, i, j, got, want);
          bad++;
        }
      }
  }
  std::string name = std::string(c.name) + " (every element of " + std::to_string(s.blocks) + " block(s))";
  report(name.c_str(), bad == 0, detail);
  HIP_CHECK(hipFree(da));
  HIP_CHECK(hipFree(db));
  HIP_CHECK(hipFree(dc));
  HIP_CHECK(hipFree(dd));
}

int main() {
  char proc[64];
  device_processor(proc, sizeof proc);
  bool is90a = strcmp(proc, "gfx90a") == 0, is942 = strcmp(proc, "gfx942") == 0;
  report("the device is gfx90a or gfx942", is90a || is942, proc);
  if (!is90a && !is942) return finish();
  //                                   M   N   K  blk kpl  A      B     f64    i32
  const Case cases[] = {
      {"f32 32x32x1", k_32x32x1f32, {32, 32, 1, 2, 1, F32, F32, false, false}, 0, 0, 0, true, true},
      {"f32 16x16x1", k_16x16x1f32, {16, 16, 1, 4, 1, F32, F32, false, false}, 0, 0, 0, true, true},
      {"f32 4x4x1", k_4x4x1f32, {4, 4, 1, 16, 1, F32, F32, false, false}, 0, 0, 0, true, true},
      {"f32 32x32x2", k_32x32x2f32, {32, 32, 2, 1, 1, F32, F32, false, false}, 0, 0, 0, true, true},
      {"f32 16x16x4", k_16x16x4f32, {16, 16, 4, 1, 1, F32, F32, false, false}, 0, 0, 0, true, true},
      {"f16 32x32x4", k_32x32x4f16, {32, 32, 4, 2, 4, F16, F16, false, false}, 0, 0, 0, true, true},
      {"f16 16x16x4", k_16x16x4f16, {16, 16, 4, 4, 4, F16, F16, false, false}, 0, 0, 0, true, true},
      {"f16 4x4x4", k_4x4x4f16, {4, 4, 4, 16, 4, F16, F16, false, false}, 0, 0, 0, true, true},
      {"f16 32x32x8", k_32x32x8f16, {32, 32, 8, 1, 4, F16, F16, false, false}, 0, 0, 0, true, true},
      {"f16 16x16x16", k_16x16x16f16, {16, 16, 16, 1, 4, F16, F16, false, false}, 0, 0, 0, true, true},
      {"i8 32x32x4", k_32x32x4i8, {32, 32, 4, 2, 4, I8, I8, false, true}, 0, 0, 0, true, true},
      {"i8 16x16x4", k_16x16x4i8, {16, 16, 4, 4, 4, I8, I8, false, true}, 0, 0, 0, true, true},
      {"i8 4x4x4", k_4x4x4i8, {4, 4, 4, 16, 4, I8, I8, false, true}, 0, 0, 0, true, true},
      {"bf16_1k 32x32x4", k_32x32x4bf16_1k, {32, 32, 4, 2, 4, BF16, BF16, false, false}, 0, 0, 0, true, true},
      {"bf16_1k 16x16x4", k_16x16x4bf16_1k, {16, 16, 4, 4, 4, BF16, BF16, false, false}, 0, 0, 0, true, true},
      {"bf16_1k 4x4x4", k_4x4x4bf16_1k, {4, 4, 4, 16, 4, BF16, BF16, false, false}, 0, 0, 0, true, true},
      {"bf16_1k 32x32x8", k_32x32x8bf16_1k, {32, 32, 8, 1, 4, BF16, BF16, false, false}, 0, 0, 0, true, true},
      {"bf16_1k 16x16x16", k_16x16x16bf16_1k, {16, 16, 16, 1, 4, BF16, BF16, false, false}, 0, 0, 0, true, true},
      {"f32 4x4x1 cbsz:2 abid:1", k_4x4x1f32_cbsz2_abid1, {4, 4, 1, 16, 1, F32, F32, false, false}, 2, 1, 0, true, true},
      {"f32 32x32x2 blgp:3", k_32x32x2f32_blgp3, {32, 32, 2, 1, 1, F32, F32, false, false}, 0, 0, 3, true, true},
      {"f64 16x16x4", k_16x16x4f64, {16, 16, 4, 1, 1, F64, F64, true, false}, 0, 0, 0, true, true},
      {"f64 4x4x4", k_4x4x4f64, {4, 4, 4, 4, 1, F64, F64, true, false}, 0, 0, 0, true, true},
      {"bf16 32x32x2", k_32x32x2bf16, {32, 32, 2, 2, 2, BF16, BF16, false, false}, 0, 0, 0, true, false},
      {"bf16 16x16x2", k_16x16x2bf16, {16, 16, 2, 4, 2, BF16, BF16, false, false}, 0, 0, 0, true, false},
      {"bf16 4x4x2", k_4x4x2bf16, {4, 4, 2, 16, 2, BF16, BF16, false, false}, 0, 0, 0, true, false},
      {"bf16 32x32x4", k_32x32x4bf16, {32, 32, 4, 1, 2, BF16, BF16, false, false}, 0, 0, 0, true, false},
      {"bf16 16x16x8", k_16x16x8bf16, {16, 16, 8, 1, 2, BF16, BF16, false, false}, 0, 0, 0, true, false},
      {"i8 32x32x8", k_32x32x8i8, {32, 32, 8, 1, 4, I8, I8, false, true}, 0, 0, 0, true, false},
      {"i8 16x16x16", k_16x16x16i8, {16, 16, 16, 1, 4, I8, I8, false, true}, 0, 0, 0, true, false},
      {"xf32 16x16x8", k_16x16x8_xf32, {16, 16, 8, 1, 2, XF32, XF32, false, false}, 0, 0, 0, false, true},
      {"xf32 32x32x4", k_32x32x4_xf32, {32, 32, 4, 1, 2, XF32, XF32, false, false}, 0, 0, 0, false, true},
      {"i8 32x32x16", k_32x32x16_i8, {32, 32, 16, 1, 8, I8, I8, false, true}, 0, 0, 0, false, true},
      {"i8 16x16x32", k_16x16x32_i8, {16, 16, 32, 1, 8, I8, I8, false, true}, 0, 0, 0, false, true},
      {"fp8*fp8 16x16x32", k_16x16x32_fp8_fp8, {16, 16, 32, 1, 8, FP8, FP8, false, false}, 0, 0, 0, false, true},
      {"fp8*bf8 16x16x32", k_16x16x32_fp8_bf8, {16, 16, 32, 1, 8, FP8, BF8, false, false}, 0, 0, 0, false, true},
      {"bf8*fp8 16x16x32", k_16x16x32_bf8_fp8, {16, 16, 32, 1, 8, BF8, FP8, false, false}, 0, 0, 0, false, true},
      {"bf8*bf8 16x16x32", k_16x16x32_bf8_bf8, {16, 16, 32, 1, 8, BF8, BF8, false, false}, 0, 0, 0, false, true},
      {"fp8*fp8 32x32x16", k_32x32x16_fp8_fp8, {32, 32, 16, 1, 8, FP8, FP8, false, false}, 0, 0, 0, false, true},
      {"fp8*bf8 32x32x16", k_32x32x16_fp8_bf8, {32, 32, 16, 1, 8, FP8, BF8, false, false}, 0, 0, 0, false, true},
      {"bf8*fp8 32x32x16", k_32x32x16_bf8_fp8, {32, 32, 16, 1, 8, BF8, FP8, false, false}, 0, 0, 0, false, true},
      {"bf8*bf8 32x32x16", k_32x32x16_bf8_bf8, {32, 32, 16, 1, 8, BF8, BF8, false, false}, 0, 0, 0, false, true},
      {"f64 16x16x4 neg:[1,0,1]", k_16x16x4f64_neg, {16, 16, 4, 1, 1, F64, F64, true, false}, 0, 0, 5, false, true},
  };
  int ran = 0;
  for (const Case& c : cases) {
    if ((is90a && c.gfx90a) || (is942 && c.gfx942)) {
      run_case(c);
      ran++;
    }
  }
  printf("%d instruction forms checked on %s\n", ran, proc);
  return finish();
}
