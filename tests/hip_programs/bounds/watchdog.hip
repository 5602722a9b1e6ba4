// Kernels that never end and grids that never finish, against the watchdog. Modes:
//   env    ROCLOAD_WATCHDOG=1 is set by the test: `spin` is stopped, hipDeviceSynchronize
//          returns hipErrorLaunchTimeOut within seconds, the message names the kernel and the
//          wave; after hipDeviceReset the program goes on and a kernel computes right
//   api    the same with the default watchdog changed by rocload_set_watchdog(0.5)
//   huge   rocload_set_watchdog(1): a (2^32-1)^2-work-group grid times out, a (2^32-1)^3 one
//          times out or is refused; neither ever reports success
// Each prints `message <rocload_last_error_message>` lines for the test to check.
#include <hip/hip_runtime.h>
#include <rocload.h>
#include <cstdio>
#include <cstring>

__global__ void spin(volatile int* flag) {
    while (*flag == 0) {
    }
}

__global__ void nothing(int* out) {
    if (out && blockIdx.x == 0xffffffffu) out[0] = 1;
}

__global__ void square(int* out) { out[threadIdx.x] = threadIdx.x * threadIdx.x; }

static int fail(const char* what, hipError_t e) {
    printf("FAIL %s: %s\n", what, hipGetErrorName(e));
    return 1;
}

static void message() {
    char buf[4096];
    rocload_last_error_message(buf, sizeof buf);
    printf("message %s\n", buf);
}

// A correct kernel after the failure: the process goes on.
static int goes_on() {
    (void)hipGetLastError();  // the failure is recorded as the last error too
    hipError_t e = hipDeviceReset();
    if (e != hipSuccess) return fail("hipDeviceReset", e);
    int* out = nullptr;
    if ((e = hipMalloc(&out, 64 * sizeof(int))) != hipSuccess) return fail("hipMalloc", e);
    hipLaunchKernelGGL(square, dim3(1), dim3(64), 0, 0, out);
    if ((e = hipDeviceSynchronize()) != hipSuccess) return fail("square", e);
    int host[64];
    if ((e = hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost)) != hipSuccess)
        return fail("hipMemcpy", e);
    for (int i = 0; i < 64; ++i)
        if (host[i] != i * i) {
            printf("FAIL square[%d] = %d\n", i, host[i]);
            return 1;
        }
    return 0;
}

static int spin_is_stopped(const char* name) {
    int* flag = nullptr;
    hipError_t e = hipMalloc(&flag, sizeof(int));
    if (e != hipSuccess) return fail("hipMalloc", e);
    hipLaunchKernelGGL(spin, dim3(4), dim3(64), 0, 0, flag);
    if ((e = hipGetLastError()) != hipSuccess) return fail("launch", e);
    e = hipDeviceSynchronize();
    message();
    if (e != hipErrorLaunchTimeOut) return fail("hipDeviceSynchronize should time out", e);
    if (goes_on()) return 1;
    printf("PASS %s\n", name);
    return 0;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "env";
    if (strcmp(mode, "env") == 0) return spin_is_stopped("env");
    if (strcmp(mode, "api") == 0) {
        if (rocload_set_watchdog(-1.0) != hipErrorInvalidValue) {
            printf("FAIL a negative watchdog is accepted\n");
            return 1;
        }
        (void)hipGetLastError();  // the refusal above is recorded as the last error
        hipError_t e = (hipError_t)rocload_set_watchdog(0.5);
        if (e != hipSuccess) return fail("rocload_set_watchdog", e);
        return spin_is_stopped("api");
    }
    if (strcmp(mode, "huge") == 0) {
        hipError_t e = (hipError_t)rocload_set_watchdog(1.0);
        if (e != hipSuccess) return fail("rocload_set_watchdog", e);
        const dim3 grids[2] = {dim3(0xffffffffu, 0xffffffffu, 1),
                               dim3(0xffffffffu, 0xffffffffu, 0xffffffffu)};
        for (const dim3& g : grids) {
            hipLaunchKernelGGL(nothing, g, dim3(1), 0, 0, nullptr);
            e = hipGetLastError();
            if (e == hipSuccess) e = hipDeviceSynchronize();
            message();
            if (e == hipSuccess) {
                printf("FAIL grid %u x %u x %u reported success\n", g.x, g.y, g.z);
                return 1;
            }
            printf("grid %u x %u x %u: %s\n", g.x, g.y, g.z, hipGetErrorName(e));
            if (g.z == 1 && e != hipErrorLaunchTimeOut) return fail("(2^32-1)^2 grid", e);
            if (goes_on()) return 1;
        }
        printf("PASS huge\n");
        return 0;
    }
    printf("FAIL unknown mode %s\n", mode);
    return 1;
}
