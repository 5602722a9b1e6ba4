/* A library built against HIP 5 (libamdhip64.so.5): allocates and fills device memory. */
#include <stdlib.h>
#include "hip_abi.h"

int h5_device_count(void) {
  int n = 0;
  return hipGetDeviceCount(&n) == hipSuccess ? n : -1;
}

void* h5_alloc_filled(size_t n) {
  void* d = 0;
  if (hipMalloc(&d, n) != hipSuccess) return 0;
  unsigned char* host = (unsigned char*)malloc(n);
  for (size_t i = 0; i < n; i++) host[i] = (unsigned char)(i * 7);
  int ok = hipMemcpy(d, host, n, 1) == hipSuccess;
  free(host);
  return ok ? d : 0;
}
