/* A library built against HIP 7 (libamdhip64.so.7): reads memory another library allocated. */
#include "hip_abi.h"

int h7_device_count(void) {
  int n = 0;
  return hipGetDeviceCount(&n) == hipSuccess ? n : -1;
}

/* 0 when `d` is device memory of this process's runtime holding i * 7 at byte i. */
int h7_check(const void* d, size_t n) {
  hipPointerAttribute_t a;
  if (hipPointerGetAttributes(&a, d) != hipSuccess) return 1;
  unsigned char host[256];
  if (n > sizeof host || hipMemcpy(host, d, n, 2) != hipSuccess) return 2;
  for (size_t i = 0; i < n; i++)
    if (host[i] != (unsigned char)(i * 7)) return 3;
  return 0;
}
