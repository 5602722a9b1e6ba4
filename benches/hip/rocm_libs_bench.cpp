// Debian's rocRAND and rocSPARSE on the software agent, next to the host doing the same work in
// the same run (scripts/bench-rocm-libs runs this under `rocload run`):
//   uniform: 16 M uniform floats from Philox4x32-10 (rocrand_generate_uniform), against a
//            host loop (std::mt19937 + uniform_real_distribution);
//   spmv:    y = A x with 1 M non-zeros (100,000 rows, 10 per row), rocsparse_scsrmv, against
//            the host's CSR loop; the results are compared.
// Host code only: the kernels are AMD's, in the libraries.
#include <hip/hip_runtime_api.h>
#include <rocrand/rocrand.h>
#include <rocsparse/rocsparse.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using clk = std::chrono::steady_clock;
static double ms_since(clk::time_point t) {
  return std::chrono::duration<double, std::milli>(clk::now() - t).count();
}
#define CHECK(c)                                              \
  do {                                                        \
    if ((c) != 0) {                                           \
      fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #c); \
      return 1;                                               \
    }                                                         \
  } while (0)

int main() {
  // uniform
  const size_t n = 16u << 20;
  float* d;
  CHECK(hipMalloc((void**)&d, n * 4));
  rocrand_generator g;
  CHECK(rocrand_create_generator(&g, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
  CHECK(rocrand_set_seed(g, 42));
  CHECK(rocrand_generate_uniform(g, d, 1024));  // first use: loads the library's code
  CHECK(hipDeviceSynchronize());
  auto t = clk::now();
  CHECK(rocrand_generate_uniform(g, d, n));
  CHECK(hipDeviceSynchronize());
  double dev_ms = ms_since(t);
  std::vector<float> h(n);
  CHECK(hipMemcpy(h.data(), d, n * 4, hipMemcpyDeviceToHost));
  double mean = 0;
  for (float v : h) mean += v;
  mean /= n;
  std::mt19937 mt(42);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  t = clk::now();
  for (size_t i = 0; i < n; i++) h[i] = u(mt);
  double host_ms = ms_since(t);
  printf("uniform: 16M Philox4x32-10 floats %.1f ms on the software agent (%.0f M/s), host mt19937 %.1f ms; mean %.4f\n",
         dev_ms, n / dev_ms / 1e3, host_ms, mean);
  CHECK(rocrand_destroy_generator(g));
  CHECK(hipFree(d));

  // spmv
  const int m = 100000, per_row = 10, nnz = m * per_row;
  std::vector<int> ptr(m + 1), col(nnz);
  std::vector<float> val(nnz), x(m), y(m), ref(m);
  uint32_t s = 12345;
  for (int r = 0; r < m; r++) {
    ptr[r] = r * per_row;
    for (int k = 0; k < per_row; k++) {
      s = s * 1664525u + 1013904223u;
      col[r * per_row + k] = (int)((r + (s >> 8) % 2001 + m - 1000) % m);
      val[r * per_row + k] = (float)((s >> 16) % 100) / 50.0f - 1.0f;
    }
    std::sort(col.begin() + r * per_row, col.begin() + (r + 1) * per_row);
  }
  ptr[m] = nnz;
  for (int i = 0; i < m; i++) x[i] = (float)(i % 37) / 37.0f;
  int *dptr, *dcol;
  float *dval, *dx, *dy;
  CHECK(hipMalloc((void**)&dptr, (m + 1) * 4));
  CHECK(hipMalloc((void**)&dcol, nnz * 4));
  CHECK(hipMalloc((void**)&dval, nnz * 4));
  CHECK(hipMalloc((void**)&dx, m * 4));
  CHECK(hipMalloc((void**)&dy, m * 4));
  CHECK(hipMemcpy(dptr, ptr.data(), (m + 1) * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dcol, col.data(), nnz * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dval, val.data(), nnz * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dx, x.data(), m * 4, hipMemcpyHostToDevice));
  rocsparse_handle hs;
  rocsparse_mat_descr descr;
  CHECK(rocsparse_create_handle(&hs));
  CHECK(rocsparse_create_mat_descr(&descr));
  const float alpha = 1.0f, beta = 0.0f;
  CHECK(rocsparse_scsrmv(hs, rocsparse_operation_none, m, m, nnz, &alpha, descr, dval, dptr, dcol, nullptr, dx, &beta, dy));
  CHECK(hipDeviceSynchronize());
  t = clk::now();
  CHECK(rocsparse_scsrmv(hs, rocsparse_operation_none, m, m, nnz, &alpha, descr, dval, dptr, dcol, nullptr, dx, &beta, dy));
  CHECK(hipDeviceSynchronize());
  dev_ms = ms_since(t);
  CHECK(hipMemcpy(y.data(), dy, m * 4, hipMemcpyDeviceToHost));
  t = clk::now();
  for (int r = 0; r < m; r++) {
    float acc = 0;
    for (int k = ptr[r]; k < ptr[r + 1]; k++) acc += val[k] * x[col[k]];
    ref[r] = acc;
  }
  host_ms = ms_since(t);
  double worst = 0;
  for (int r = 0; r < m; r++) worst = std::max(worst, (double)std::fabs(y[r] - ref[r]));
  printf("spmv: 1M non-zeros (100k rows) rocsparse_scsrmv %.1f ms on the software agent, host CSR loop %.2f ms; max |difference| %.2g\n",
         dev_ms, host_ms, worst);
  return worst < 1e-3 ? 0 : 1;
}
