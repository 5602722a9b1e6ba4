// Math library functions (ocml) in f32, f64 and f16, applied to arrays; the test compares
// with the host's libm within HIP's documented ulp bounds.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

extern "C" __global__ void math_f32(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    out[8 * i + 0] = sinf(v);
    out[8 * i + 1] = cosf(v);
    out[8 * i + 2] = expf(v * 0.1f);
    out[8 * i + 3] = logf(fabsf(v) + 1e-3f);
    out[8 * i + 4] = sqrtf(fabsf(v));
    out[8 * i + 5] = powf(fabsf(v) + 0.5f, 1.7f);
    out[8 * i + 6] = tanhf(v * 0.05f);
    out[8 * i + 7] = atan2f(v, 3.0f);
}

extern "C" __global__ void math_f64(const double* x, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    out[6 * i + 0] = sin(v);
    out[6 * i + 1] = cos(v);
    out[6 * i + 2] = exp(v * 0.1);
    out[6 * i + 3] = log(fabs(v) + 1e-3);
    out[6 * i + 4] = sqrt(fabs(v));
    out[6 * i + 5] = v / 7.0;
}

extern "C" __global__ void math_f16(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half h = __float2half(x[i]);
    __half two = __float2half(2.0f);
    out[4 * i + 0] = __half2float(__hadd(h, two));
    out[4 * i + 1] = __half2float(__hmul(h, h));
    out[4 * i + 2] = __half2float(hsqrt(__habs(h)));
    out[4 * i + 3] = __half2float(__hfma(h, two, h));
}
