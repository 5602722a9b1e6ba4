// One bad access each, by work-item 37 of work-group 0 (lane 5 of wave 1): a global store far
// past its buffer, an LDS store past the work-group's segment, a private store past the
// work-item's. Modes: global, lds, scratch. Each must make hipDeviceSynchronize return
// hipErrorIllegalAddress, and keep returning it (sticky) to later calls; the test checks what
// was printed on stderr (one report per fault, not one per call that sees it).
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstring>

__global__ void global_past_end(int* out, int bad, int index) {
    int i = (blockIdx.x == 0 && threadIdx.x == bad) ? index : blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = threadIdx.x;
}

__global__ void lds_past_end(int* out, int bad, int index) {
    extern __shared__ int lds[];
    int i = (blockIdx.x == 0 && threadIdx.x == bad) ? index : threadIdx.x;
    lds[i] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = lds[threadIdx.x];
}

__global__ void scratch_past_end(int* out, int bad, int index) {
    volatile int a[16];
    for (int k = 0; k < 16; ++k) a[k] = k;
    int i = (blockIdx.x == 0 && threadIdx.x == bad) ? index : threadIdx.x % 16;
    a[i] = 7;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a[threadIdx.x % 16];
}

static int fail(const char* what, hipError_t e) {
    printf("FAIL %s: %s\n", what, hipGetErrorName(e));
    return 1;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "global";
    int* out = nullptr;
    hipError_t e = hipMalloc(&out, 128 * sizeof(int));
    if (e != hipSuccess) return fail("hipMalloc", e);
    printf("buffer %p\n", (void*)out);
    if (strcmp(mode, "global") == 0) {
        hipLaunchKernelGGL(global_past_end, dim3(2), dim3(64), 0, 0, out, 37, 128 + 100000);
    } else if (strcmp(mode, "lds") == 0) {
        hipLaunchKernelGGL(lds_past_end, dim3(2), dim3(64), 64 * sizeof(int), 0, out, 37, 10000);
    } else if (strcmp(mode, "scratch") == 0) {
        hipLaunchKernelGGL(scratch_past_end, dim3(2), dim3(64), 0, 0, out, 37, 100000);
    } else {
        printf("FAIL unknown mode %s\n", mode);
        return 1;
    }
    if ((e = hipGetLastError()) != hipSuccess) return fail("launch", e);
    if ((e = hipDeviceSynchronize()) != hipErrorIllegalAddress) return fail("hipDeviceSynchronize", e);
    // Sticky: every later call sees it; none of them prints it again.
    if ((e = hipDeviceSynchronize()) != hipErrorIllegalAddress) return fail("second synchronize", e);
    int host[128];
    if ((e = hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost)) != hipErrorIllegalAddress)
        return fail("hipMemcpy", e);
    printf("PASS %s\n", mode);
    return 0;
}
