// Cooperative launch: every work-group writes its part, the grid synchronises
// (cooperative_groups::this_grid().sync()), then every work-group reads what another wrote;
// repeated over several phases, checked against the host. Also: a cooperative grid larger than
// fits on the device at once is refused with hipErrorCooperativeLaunchTooLarge.
#include "check.h"
#include <hip/hip_cooperative_groups.h>
#include <vector>

namespace cg = cooperative_groups;

__global__ void rotate(int* a, int* b, int phases) {
  cg::grid_group grid = cg::this_grid();
  int n = gridDim.x * blockDim.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int p = 0; p < phases; p++) {
    int* src = (p % 2) ? b : a;
    int* dst = (p % 2) ? a : b;
    // Read a value another work-group wrote in the previous phase.
    dst[i] = src[(i + blockDim.x) % n] + 1;
    grid.sync();
  }
}

int main() {
  int dev = 0, supported = 0;
  HIP_CHECK(hipDeviceGetAttribute(&supported, hipDeviceAttributeCooperativeLaunch, dev));
  report("cooperative launch is supported", supported == 1);
  const int block = 64;
  int per_cu = 0;
  HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, rotate, block, 0));
  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, dev));
  // The largest grid that fits at once: every work-group must be resident for the sync.
  int blocks = per_cu * p.multiProcessorCount;
  const int n = blocks * block, phases = 5;
  std::vector<int> h(n);
  for (int i = 0; i < n; i++) h[i] = i * 13 % 101;
  int *a, *b;
  HIP_CHECK(hipMalloc(&a, n * 4));
  HIP_CHECK(hipMalloc(&b, n * 4));
  HIP_CHECK(hipMemcpy(a, h.data(), n * 4, hipMemcpyHostToDevice));
  int ph = phases;
  void* args[] = {&a, &b, &ph};
  HIP_CHECK(hipLaunchCooperativeKernel((const void*)rotate, dim3(blocks), dim3(block), args, 0, nullptr));
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<int> cur(h), next(n);
  for (int k = 0; k < phases; k++) {
    for (int i = 0; i < n; i++) next[i] = cur[(i + block) % n] + 1;
    cur.swap(next);
  }
  std::vector<int> got(n);
  HIP_CHECK(hipMemcpy(got.data(), phases % 2 ? b : a, n * 4, hipMemcpyDeviceToHost));
  report("grid-wide sync between phases", got == cur);
  hipError_t e = hipLaunchCooperativeKernel((const void*)rotate, dim3(per_cu * p.multiProcessorCount + 1), dim3(block), args, 0, nullptr);
  report("a grid larger than fits at once is refused", e == hipErrorCooperativeLaunchTooLarge);
  HIP_CHECK(hipFree(a));
  HIP_CHECK(hipFree(b));
  return finish();
}
