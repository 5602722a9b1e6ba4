// 3-D grids and blocks: every work-item writes its linear index and its coordinates; the host
// checks every one was written once and correctly (a missed or duplicated work-item shows).
#include "check.h"

__global__ void coords(unsigned* out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < nx && y < ny && z < nz) {
    unsigned lin = (z * ny + y) * nx + x;
    atomicAdd(&out[lin * 2], 1u);
    out[lin * 2 + 1] = (x << 20) | (y << 10) | z | (gridDim.x * 1000000 == 0 ? 1u << 31 : 0) ;
  }
}

int main() {
  const int nx = 37, ny = 21, nz = 9;
  unsigned* d;
  HIP_CHECK(hipMalloc(&d, nx * ny * nz * 8));
  HIP_CHECK(hipMemset(d, 0, nx * ny * nz * 8));
  dim3 block(8, 4, 2), grid((nx + 7) / 8, (ny + 3) / 4, (nz + 1) / 2);
  hipLaunchKernelGGL(coords, grid, block, 0, 0, d, nx, ny, nz);
  unsigned* h = new unsigned[nx * ny * nz * 2];
  HIP_CHECK(hipMemcpy(h, d, nx * ny * nz * 8, hipMemcpyDeviceToHost));
  bool ok = true;
  for (int z = 0; z < nz; z++)
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) {
        unsigned lin = (z * ny + y) * nx + x;
        ok &= h[lin * 2] == 1 && h[lin * 2 + 1] == ((unsigned)(x << 20) | (y << 10) | z);
      }
  report("3-D grid coordinates", ok);
  return finish();
}
