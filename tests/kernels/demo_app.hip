// The demo's HIP program (scripts/demo.sh runs the prebuilt tests/fixtures/hip/demo_app under
// `rocload run`): an ordinary HIP program linked against libamdhip64.so.5. It multiplies two
// matrices in LDS tiles, sums the product's rows with a shared-memory reduction, prints a line
// from the device, and checks everything against the host.
#include <hip/hip_runtime.h>
#include <cmath>
#include <cstdio>
#include <vector>

#define CHECK(c)                                                                  \
  do {                                                                            \
    hipError_t e_ = (c);                                                          \
    if (e_ != hipSuccess) {                                                       \
      printf("demo: %s failed: %s\n", #c, hipGetErrorString(e_));                 \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

constexpr int T = 16;

__global__ void matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[T][T], tb[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += T) {
    ta[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < T; k++) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

__global__ void row_sums(const float* c, double* sums, int n) {
  extern __shared__ double part[];
  double s = 0.0;
  for (int j = threadIdx.x; j < n; j += blockDim.x) s += c[blockIdx.x * n + j];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = part[0];
  if (blockIdx.x == 0 && threadIdx.x == 0) printf("demo: hello from the device, %d row sums done\n", (int)gridDim.x);
}

int main() {
  const int n = 128;
  std::vector<float> a(n * n), b(n * n), c(n * n), ref(n * n);
  for (int i = 0; i < n * n; i++) {
    a[i] = (float)((i * 7) % 17) - 8.0f;
    b[i] = (float)((i * 5) % 13) - 6.0f;
  }
  hipDeviceProp_t p;
  CHECK(hipGetDeviceProperties(&p, 0));
  float *da, *db, *dc;
  double* ds;
  CHECK(hipMalloc(&da, n * n * 4));
  CHECK(hipMalloc(&db, n * n * 4));
  CHECK(hipMalloc(&dc, n * n * 4));
  CHECK(hipMalloc(&ds, n * 8));
  CHECK(hipMemcpy(da, a.data(), n * n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b.data(), n * n * 4, hipMemcpyHostToDevice));
  matmul<<<dim3(n / T, n / T), dim3(T, T)>>>(da, db, dc, n);
  CHECK(hipGetLastError());
  row_sums<<<n, 64, 64 * sizeof(double)>>>(dc, ds, n);
  CHECK(hipGetLastError());
  std::vector<double> sums(n);
  CHECK(hipMemcpy(c.data(), dc, n * n * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(sums.data(), ds, n * 8, hipMemcpyDeviceToHost));
  // Small integers: every product and sum is exact in float, so the results must be equal.
  int bad = 0;
  for (int i = 0; i < n; i++) {
    double rs = 0;
    for (int j = 0; j < n; j++) {
      float acc = 0;
      for (int k = 0; k < n; k++) acc += a[i * n + k] * b[k * n + j];
      ref[i * n + j] = acc;
      bad += c[i * n + j] != acc;
      rs += acc;
    }
    bad += sums[i] != rs;
  }
  printf("demo: %dx%d matrix product and row sums on %s (%s): %s\n", n, n, p.name, p.gcnArchName,
         bad ? "MISMATCH" : "verified against the host");
  return bad ? 1 : 0;
}
