// Shared helpers of the self-checking HIP programs: every program computes the same thing on
// the host and compares; it prints "PASS <name>" or "FAIL <name>: ..." and exits non-zero on any
// failure (including a HIP call that fails).
#pragma once
#include <hip/hip_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static int g_failures = 0;

#define HIP_CHECK(call)                                                                  \
  do {                                                                                   \
    hipError_t e_ = (call);                                                              \
    if (e_ != hipSuccess) {                                                              \
      printf("FAIL %s:%d: %s -> %s\n", __FILE__, __LINE__, #call, hipGetErrorName(e_));  \
      exit(2);                                                                           \
    }                                                                                    \
  } while (0)

static void report(const char* name, bool ok, const char* detail = "") {
  if (ok) {
    printf("PASS %s\n", name);
  } else {
    printf("FAIL %s: %s\n", name, detail);
    g_failures++;
  }
}

// Distance in units in the last place between two floats of the same sign class.
static long long ulps_f32(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : (1LL << 40);
  if (a == b) return 0;
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  if (ia < 0) ia = 0x80000000 - ia;
  if (ib < 0) ib = 0x80000000 - ib;
  return llabs((long long)ia - (long long)ib);
}

static long long ulps_f64(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : (1LL << 60);
  if (a == b) return 0;
  int64_t ia, ib;
  memcpy(&ia, &a, 8);
  memcpy(&ib, &b, 8);
  if (ia < 0) ia = (int64_t)0x8000000000000000ULL - ia;
  if (ib < 0) ib = (int64_t)0x8000000000000000ULL - ib;
  long long d = ia - ib;
  return d < 0 ? -d : d;
}

// The device's processor without its features ("gfx90a" for "gfx90a:sramecc+:xnack-").
static void device_processor(char* out, size_t size) {
  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, 0));
  snprintf(out, size, "%s", p.gcnArchName);
  char* colon = strchr(out, ':');
  if (colon) *colon = 0;
}

// This program's device code object for the device's processor, as build.sh writes it next
// to the executable `exe`: <exe>.<processor>.co when it built several processors, else <exe>.co.
static void code_object_path(const char* exe, char* out, size_t size) {
  char proc[64];
  device_processor(proc, sizeof proc);
  snprintf(out, size, "%s.%s.co", exe, proc);
  FILE* f = fopen(out, "rb");
  if (f) {
    fclose(f);
    return;
  }
  snprintf(out, size, "%s.co", exe);
}

// The processor the runtime is asked to emulate (ROCLOAD_SOFT_ISA's first entry, without
// features; gfx1030 when unset), and what its code runs as.
static void expected_processor(char* out, size_t size) {
  const char* isa = getenv("ROCLOAD_SOFT_ISA");
  snprintf(out, size, "%s", isa && *isa ? isa : "gfx1030");
  out[strcspn(out, ",:")] = 0;
}

static int expected_warp_size() {
  char proc[64];
  expected_processor(proc, sizeof proc);
  // gfx9 (GCN and CDNA) runs wave64; gfx10 and later wave32 as clang builds HIP for them.
  return strncmp(proc, "gfx9", 4) == 0 ? 64 : 32;
}

static int finish() {
  if (g_failures) {
    printf("%d check(s) failed\n", g_failures);
    return 1;
  }
  return 0;
}
