// Math library functions in f32, f64 and f16 against host libm, within HIP's documented maximum
// ulp errors (HIP Math API: e.g. sinf/cosf/tanf 2 ulp, expf 2, logf 1, powf 4, sqrtf correctly
// rounded with default flags; double versions 1-2 ulp; erf 2 ulp).
#include "check.h"
#include <hip/hip_fp16.h>

#define NF 8
__global__ void math_f32(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[i * NF + 0] = sinf(v);
  out[i * NF + 1] = cosf(v);
  out[i * NF + 2] = expf(v * 0.1f);
  out[i * NF + 3] = logf(fabsf(v) + 0.5f);
  out[i * NF + 4] = powf(fabsf(v) + 0.1f, 1.7f);
  out[i * NF + 5] = sqrtf(fabsf(v));
  out[i * NF + 6] = tanf(v * 0.3f);
  out[i * NF + 7] = erff(v * 0.2f);
}

__global__ void math_f64(const double* x, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  out[i * NF + 0] = sin(v);
  out[i * NF + 1] = cos(v);
  out[i * NF + 2] = exp(v * 0.1);
  out[i * NF + 3] = log(fabs(v) + 0.5);
  out[i * NF + 4] = pow(fabs(v) + 0.1, 1.7);
  out[i * NF + 5] = sqrt(fabs(v));
  // The denominator as one fma on both sides (the device contracts v * v + 1.0 into one).
  out[i * NF + 6] = v / fma(v, v, 1.0);
  out[i * NF + 7] = erf(v * 0.2);
}

__global__ void math_f16(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half h = __float2half(x[i]);
  __half a = __hadd(h, __float2half(1.5f));
  __half m = __hmul(h, h);
  __half f = __hfma(h, __float2half(0.25f), __float2half(-2.0f));
  out[i * 3 + 0] = __half2float(a);
  out[i * 3 + 1] = __half2float(m);
  out[i * 3 + 2] = __half2float(f);
}

int main() {
  const int N = 1024;
  float* x = new float[N];
  double* xd = new double[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i - N / 2) * 0.0371f;
    xd[i] = (double)(i - N / 2) * 0.0371;
  }
  float *dx, *dout;
  HIP_CHECK(hipMalloc(&dx, N * 4));
  HIP_CHECK(hipMalloc(&dout, N * NF * 4));
  HIP_CHECK(hipMemcpy(dx, x, N * 4, hipMemcpyHostToDevice));
  math_f32<<<N / 64, 64>>>(dx, dout, N);
  float* o = new float[N * NF];
  HIP_CHECK(hipMemcpy(o, dout, N * NF * 4, hipMemcpyDeviceToHost));
  const char* names[NF] = {"sinf", "cosf", "expf", "logf", "powf", "sqrtf", "tanf", "erff"};
  const long long bound[NF] = {2, 2, 2, 1, 4, 0, 4, 2};
  char detail[200];
  for (int k = 0; k < NF; k++) {
    long long worst = 0;
    int at = 0;
    for (int i = 0; i < N; i++) {
      float v = x[i], ref;
      switch (k) {
        case 0: ref = sinf(v); break;
        case 1: ref = cosf(v); break;
        case 2: ref = expf(v * 0.1f); break;
        case 3: ref = logf(fabsf(v) + 0.5f); break;
        case 4: ref = (float)pow((double)(fabsf(v) + 0.1f), 1.7); break;
        case 5: ref = sqrtf(fabsf(v)); break;
        case 6: ref = (float)tan((double)(v * 0.3f)); break;
        default: ref = (float)erf((double)(v * 0.2f)); break;
      }
      long long u = ulps_f32(o[i * NF + k], ref);
      if (u > worst) { worst = u; at = i; }
    }
    snprintf(detail, sizeof(detail), "%lld ulp at x=%g (got %.9g)", worst, x[at], o[at * NF + k]);
    report(names[k], worst <= bound[k], detail);
  }
  double *dxd, *doutd;
  HIP_CHECK(hipMalloc(&dxd, N * 8));
  HIP_CHECK(hipMalloc(&doutd, N * NF * 8));
  HIP_CHECK(hipMemcpy(dxd, xd, N * 8, hipMemcpyHostToDevice));
  math_f64<<<N / 64, 64>>>(dxd, doutd, N);
  double* od = new double[N * NF];
  HIP_CHECK(hipMemcpy(od, doutd, N * NF * 8, hipMemcpyDeviceToHost));
  const char* dnames[NF] = {"sin", "cos", "exp", "log", "pow", "sqrt", "division", "erf"};
  const long long dbound[NF] = {2, 2, 1, 1, 2, 0, 0, 2};
  for (int k = 0; k < NF; k++) {
    long long worst = 0;
    for (int i = 0; i < N; i++) {
      double v = xd[i], ref;
      switch (k) {
        case 0: ref = sin(v); break;
        case 1: ref = cos(v); break;
        case 2: ref = exp(v * 0.1); break;
        case 3: ref = log(fabs(v) + 0.5); break;
        case 4: ref = pow(fabs(v) + 0.1, 1.7); break;
        case 5: ref = sqrt(fabs(v)); break;
        case 6: ref = v / std::fma(v, v, 1.0); break;
        default: ref = erf(v * 0.2); break;
      }
      long long u = ulps_f64(od[i * NF + k], ref);
      worst = u > worst ? u : worst;
    }
    snprintf(detail, sizeof(detail), "%lld ulp", worst);
    report(dnames[k], worst <= dbound[k], detail);
  }
  float* dh;
  HIP_CHECK(hipMalloc(&dh, N * 12));
  math_f16<<<N / 64, 64>>>(dx, dh, N);
  float* oh = new float[N * 3];
  HIP_CHECK(hipMemcpy(oh, dh, N * 12, hipMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < N; i++) {
    _Float16 h = (_Float16)x[i];
    ok &= oh[i * 3 + 0] == (float)(_Float16)(h + (_Float16)1.5f);
    ok &= oh[i * 3 + 1] == (float)(_Float16)(h * h);
    ok &= oh[i * 3 + 2] == (float)(_Float16)__builtin_fmaf((float)h, 0.25f, -2.0f);
  }
  report("f16 add/mul/fma", ok);
  return finish();
}
