// Main program of the incompatible test (built for gfx1030, like the agent).
#include <hip/hip_runtime.h>
#include <rocload.h>
#include <cstdio>

extern "C" const void* incompatible_kernel();

__global__ void fine_kernel(int* out, int v) { out[threadIdx.x] = v; }

int main() {
  hipFuncAttributes attr;
  hipError_t e = hipFuncGetAttributes(&attr, incompatible_kernel());
  printf("incompatible status=%d name=%s\n", (int)e, hipGetErrorName(e));
  char buf[4096];
  size_t n = rocload_last_selection_error(buf, sizeof buf);
  printf("explanation_length %zu\n", n);
  printf("explanation_begin\n%s\nexplanation_end\n", buf);
  printf("last_error %d\n", (int)hipGetLastError());
  // The failure is cached: asking again gives the same answer, without reloading.
  e = hipFuncGetAttributes(&attr, incompatible_kernel());
  printf("incompatible_again status=%d\n", (int)e);
  // The program keeps running: its other fat binary works.
  e = hipFuncGetAttributes(&attr, (const void*)fine_kernel);
  printf("fine status=%d max_threads=%d\n", (int)e, attr.maxThreadsPerBlock);
  rocload_stats_t s;
  rocload_stats(&s);
  printf("stats loads=%llu failures=%llu\n", (unsigned long long)s.loads, (unsigned long long)s.load_failures);
  return 0;
}
