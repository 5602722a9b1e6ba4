/* Built three times, against libamdhip64.so.5, .so.6 and .so.7 (GENERATION), and checks what
 * differs between HIP's ABI generations: the version, hipGetLastError's meaning, the numbering of
 * hipMemoryType; and, for 6 and 7, the 1,472-byte device properties field by field against the
 * 792-byte ones, hipGetProcAddress, and the 6.x/7.x entry points. */
#include "hip_abi.h"

#define EXPECT(i, n) (2 * (i) + 3)

int main(int argc, char** argv) {
  int version = 0;
  CHECK(hipRuntimeGetVersion(&version) == hipSuccess && version / 10000000 == GENERATION,
        "version %d", version);

  /* Last error: a failure, then a success. */
  hipGetLastError();
  CHECK(hipSetDevice(12345) == hipErrorInvalidDevice, "no device 12345");
  int count = 0;
  CHECK(hipGetDeviceCount(&count) == hipSuccess && count >= 1, "count %d", count);
#if GENERATION >= 7
  CHECK(hipExtGetLastError() == hipSuccess, "7.0: the last command succeeded");
  CHECK(hipPeekAtLastError() == hipErrorInvalidDevice, "7.0: the failure stays until read");
  CHECK(hipGetLastError() == hipErrorInvalidDevice, "7.0: read and cleared");
  CHECK(hipGetLastError() == hipSuccess, "cleared");
#else
  CHECK(hipGetLastError() == hipSuccess, "up to 6.x: the last call's status");
#endif

  /* hipMemoryType. */
  void *d = 0, *h = 0, *m = 0;
  hipPointerAttribute_t a;
  CHECK(hipMalloc(&d, 256) == hipSuccess, "hipMalloc");
  CHECK(hipHostMalloc(&h, 256, 0) == hipSuccess, "hipHostMalloc");
  CHECK(hipMallocManaged(&m, 256, 1) == hipSuccess, "hipMallocManaged");
#if GENERATION >= 6
  const int HOST = 1, DEVICE = 2, MANAGED = 3;
#else
  /* clr 5.2.3: managed memory is fine-grained host memory (hipMemoryTypeHost). */
  const int HOST = 0, DEVICE = 1, MANAGED = 0;
#endif
  CHECK(hipPointerGetAttributes(&a, d) == hipSuccess && a.type == DEVICE, "device %d", a.type);
  CHECK(hipPointerGetAttributes(&a, h) == hipSuccess && a.type == HOST, "host %d", a.type);
  CHECK(hipPointerGetAttributes(&a, m) == hipSuccess && a.type == MANAGED && a.isManaged,
        "managed %d", a.type);

#if GENERATION >= 6
  /* hipDeviceProp_tR0600 against hipDeviceProp_tR0000, field by field. */
  static unsigned char p6[1472 + 64], p5[792 + 64];
  memset(p6, 0xab, sizeof p6);
  memset(p5, 0xab, sizeof p5);
  CHECK(hipGetDevicePropertiesR0600(p6, 0) == hipSuccess, "R0600");
  CHECK(hipGetDeviceProperties(p5, 0) == hipSuccess, "the unsuffixed name keeps 792 bytes");
  CHECK(p6[1472] == 0xab && p5[792] == 0xab, "no byte written past either struct");
  CHECK(strcmp((const char*)p6, (const char*)p5) == 0, "name %s / %s", (const char*)p6,
        (const char*)p5);
  CHECK(strcmp((const char*)p6 + 1160, (const char*)p5 + 396) == 0, "gcnArchName %s / %s",
        (const char*)p6 + 1160, (const char*)p5 + 396);
  CHECK(FIELD(p6, size_t, 288) == FIELD(p5, size_t, 256), "totalGlobalMem");
  CHECK(FIELD(p6, size_t, 296) == FIELD(p5, size_t, 264), "sharedMemPerBlock");
  CHECK(FIELD(p6, int, 308) == FIELD(p5, int, 276), "warpSize");
  CHECK(FIELD(p6, int, 320) == FIELD(p5, int, 280), "maxThreadsPerBlock");
  CHECK(FIELD(p6, int, 348) == FIELD(p5, int, 308), "clockRate");
  CHECK(FIELD(p6, int, 360) == FIELD(p5, int, 328) && FIELD(p6, int, 364) == FIELD(p5, int, 332),
        "major.minor");
  CHECK(FIELD(p6, int, 388) == FIELD(p5, int, 336) && FIELD(p6, int, 388) > 0,
        "multiProcessorCount");
  CHECK(FIELD(p6, int, 608) == FIELD(p5, int, 312), "memoryClockRate");
  CHECK(FIELD(p6, int, 616) == FIELD(p5, int, 340), "l2CacheSize");
  CHECK(FIELD(p6, int, 624) == FIELD(p5, int, 344), "maxThreadsPerMultiProcessor");
  CHECK(FIELD(p6, size_t, 1416) == FIELD(p5, size_t, 376), "maxSharedMemoryPerMultiProcessor");
  CHECK(FIELD(p6, int, 688) == FIELD(p5, int, 656), "cooperativeLaunch");
  CHECK(FIELD(p6, int, 396) == FIELD(p5, int, 652), "integrated");
  CHECK(FIELD(p6, int, 1464) == FIELD(p5, int, 764), "isLargeBar");
  CHECK(FIELD(p6, int, 604) == 1, "unifiedAddressing");
  int chosen = -1;
  CHECK(hipChooseDeviceR0600(&chosen, p6) == hipSuccess && chosen == 0, "chosen %d", chosen);

  /* Entry points by name, per version. */
  void* f = 0;
  int status = -1;
  CHECK(hipGetProcAddress("hipGetDeviceProperties", &f, 600, 0, &status) == hipSuccess &&
            status == 0 && f == (void*)hipGetDevicePropertiesR0600,
        "6.0 callers get R0600 (status %d)", status);
  CHECK(hipGetProcAddress("hipGetDeviceProperties", &f, 502, 0, &status) == hipSuccess &&
            f == (void*)hipGetDeviceProperties,
        "5.2 callers get the old layout");
  CHECK(hipGetProcAddress("hipStreamGetId", &f, 600, 0, &status) != hipSuccess && status == 2,
        "too new for 6.0 (status %d)", status);
  CHECK(hipGetProcAddress("hipNoSuchFunction", &f, 701, 0, &status) != hipSuccess && status == 1,
        "not found (status %d)", status);
#endif

#if GENERATION >= 7
  /* 6.4 / 7.1 entry points. */
  hipStream_t s1, s2;
  unsigned long long id1 = 0, id2 = 0;
  CHECK(hipStreamCreate(&s1) == hipSuccess && hipStreamCreate(&s2) == hipSuccess, "streams");
  CHECK(hipStreamGetId(s1, &id1) == hipSuccess && hipStreamGetId(s2, &id2) == hipSuccess &&
            id1 != id2,
        "ids %llu %llu", id1, id2);
  hipEvent_t e;
  CHECK(hipEventCreate(&e) == hipSuccess && hipEventRecordWithFlags(e, s1, 0) == hipSuccess &&
            hipEventSynchronize(e) == hipSuccess,
        "event recorded with flags");
  CHECK(hipEventRecordWithFlags(e, s1, 0x10) == hipErrorInvalidValue, "unknown flags");
  if (argc > 1) {
    /* A kernel of a code object: hf_fill(int* out, int n) writes out[i] = 2 * i + 3 (its
     * __constant__ hf_bias), computed again here. */
    hipModule_t mod;
    hipFunction_t fill;
    unsigned kernels = 0;
    CHECK(hipModuleLoad(&mod, argv[1]) == hipSuccess, "load %s", argv[1]);
    CHECK(hipModuleGetFunctionCount(&kernels, mod) == hipSuccess && kernels >= 1, "%u", kernels);
    CHECK(hipModuleGetFunction(&fill, mod, "hf_fill") == hipSuccess, "hf_fill");
    int* out = 0;
    int n = 64;
    CHECK(hipMalloc((void**)&out, n * sizeof(int)) == hipSuccess, "out");
    void* args[] = {&out, &n};
    HIP_LAUNCH_CONFIG c = {1, 1, 1, 64, 1, 1, 0, s1, 0, 0};
    CHECK(hipDrvLaunchKernelEx(&c, fill, args, 0) == hipSuccess, "hipDrvLaunchKernelEx");
    CHECK(hipDeviceSynchronize() == hipSuccess, "synchronised");
    int host[64];
    CHECK(hipMemcpy(host, out, sizeof host, 2) == hipSuccess, "copied back");
    int same = 1;
    for (int i = 0; i < n; i++) same &= host[i] == EXPECT(i, n);
    CHECK(same, "host[5] = %d, expected %d", host[5], EXPECT(5, n));
  }
  hipStreamDestroy(s1);
  hipStreamDestroy(s2);
#endif
  hipFree(d);
  hipHostFree(h);
  hipFree(m);
  printf("%s generation %d\n", failures ? "FAIL" : "PASS", GENERATION);
  return failures != 0;
}
