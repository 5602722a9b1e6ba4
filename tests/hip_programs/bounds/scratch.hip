// Scratch that would take the host's memory: every work-item of `hog` fills 64 KiB of private
// memory and sleeps, so the scheduler keeps admitting work-groups (16 MiB each). Modes:
//   many       128 work-groups: must complete within ROCLOAD_SCRATCH_BUDGET (the test runs it
//              under a data-size limit far below what they would take all resident)
//   oversized  one work-group needs more than the budget: hipLaunchKernel itself returns
//              hipErrorOutOfMemory, nothing runs, and the device has no sticky error
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstring>

#define WORDS 16384

__global__ void hog(int* out, int rounds) {
    volatile int buf[WORDS];
    for (int i = 0; i < WORDS; i += 64) buf[i] = i + threadIdx.x;
    for (int r = 0; r < rounds; ++r) __builtin_amdgcn_s_sleep(1);
    int s = 0;
    for (int i = 0; i < WORDS; i += 64) s += buf[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

static int fail(const char* what, hipError_t e) {
    printf("FAIL %s: %s\n", what, hipGetErrorName(e));
    return 1;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "many";
    const int groups = 128, block = 256, n = groups * block;
    int* out = nullptr;
    hipError_t e = hipMalloc(&out, n * sizeof(int));
    if (e != hipSuccess) return fail("hipMalloc", e);
    int rounds = 200;
    void* args[] = {&out, &rounds};
    e = hipLaunchKernel((const void*)hog, dim3(groups), dim3(block), args, 0, nullptr);
    if (strcmp(mode, "oversized") == 0) {
        if (e != hipErrorOutOfMemory) return fail("hipLaunchKernel should refuse", e);
        if ((e = hipDeviceSynchronize()) != hipSuccess) return fail("hipDeviceSynchronize", e);
        printf("PASS oversized\n");
        return 0;
    }
    if (e != hipSuccess) return fail("hipLaunchKernel", e);
    if ((e = hipDeviceSynchronize()) != hipSuccess) return fail("hipDeviceSynchronize", e);
    int* host = new int[n];
    if ((e = hipMemcpy(host, out, n * sizeof(int), hipMemcpyDeviceToHost)) != hipSuccess)
        return fail("hipMemcpy", e);
    for (int i = 0; i < n; ++i) {
        int tid = i % block, want = 0;
        for (int k = 0; k < WORDS; k += 64) want += k + tid;
        if (host[i] != want) {
            printf("FAIL many: item %d is %d, expected %d\n", i, host[i], want);
            return 1;
        }
    }
    printf("PASS many\n");
    return 0;
}
