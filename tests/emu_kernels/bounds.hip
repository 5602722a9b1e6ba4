// Kernels that push at the emulator's bounds: one that holds a lot of scratch while it waits
// (so the scheduler would keep many such work-groups resident), and ones that access LDS and
// scratch past their segments from a single lane (for the fault reports' lane).
#include <hip/hip_runtime.h>

// Each work-item fills 16 KiB of private memory, sleeps `rounds` times (every wave of the
// work-group waiting lets the scheduler admit another work-group), then sums what it wrote.
extern "C" __global__ void scratch_hog(int* out, int rounds) {
    volatile int buf[4096];
    for (int i = 0; i < 4096; i += 64) buf[i] = i + threadIdx.x;
    for (int r = 0; r < rounds; ++r) __builtin_amdgcn_s_sleep(1);
    int s = 0;
    for (int i = 0; i < 4096; i += 64) s += buf[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Lane `bad` of work-group 0 writes LDS element `index`; the others write their own.
extern "C" __global__ void lds_past_end(int* out, int bad, int index) {
    extern __shared__ int lds[];
    int i = (blockIdx.x == 0 && threadIdx.x == bad) ? index : threadIdx.x;
    lds[i] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = lds[threadIdx.x];
}

// Lane `bad` of work-group 0 writes private element `index` of a 16-int array; the others
// write inside it.
extern "C" __global__ void scratch_past_end(int* out, int bad, int index) {
    volatile int a[16];
    for (int k = 0; k < 16; ++k) a[k] = k;
    int i = (blockIdx.x == 0 && threadIdx.x == bad) ? index : threadIdx.x % 16;
    a[i] = 7;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a[threadIdx.x % 16];
}
