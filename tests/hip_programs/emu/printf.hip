// Device printf (hostcall): each of 4 threads prints one line; the test compares the lines with
// what the host printf prints for the same values.
#include "check.h"

__global__ void say(int base, double scale, const char* tag) {
  int i = threadIdx.x;
  printf("printf %s tid=%d v=%d f=%.3f x=%x s=%s\n", tag, i, base + i, scale * i, 255 * i, i % 2 ? "odd" : "even");
}

int main() {
  char* dtag;
  HIP_CHECK(hipMalloc(&dtag, 8));
  HIP_CHECK(hipMemcpy(dtag, "dev", 4, hipMemcpyHostToDevice));
  fflush(stdout);
  say<<<1, 4>>>(40, 1.25, dtag);
  HIP_CHECK(hipDeviceSynchronize());
  fflush(stdout);
  for (int i = 0; i < 4; i++)
    printf("expect %s tid=%d v=%d f=%.3f x=%x s=%s\n", "dev", i, 40 + i, 1.25 * i, 255 * i, i % 2 ? "odd" : "even");
  return finish();
}
