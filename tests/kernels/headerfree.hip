// Header-free HIP (-nogpulib -nogpuinc): builds for targets Debian's device
// libraries lack (gfx11, gfx12, generic targets) and for every code object
// version. Everything normally taken from hip_runtime.h is declared here.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __constant__ __attribute__((constant))
#define __shared__ __attribute__((shared))

typedef struct { unsigned x, y, z; } dim3;
typedef struct ihipStream_t *hipStream_t;
typedef int hipError_t;
extern "C" hipError_t hipLaunchKernel(const void *f, dim3 grid, dim3 block,
                                      void **args, unsigned long shmem,
                                      hipStream_t stream);

__device__ int hf_hits = 0;
__constant__ int hf_bias = 3;

extern "C" __device__ __attribute__((noinline)) int hf_twice(int x) { return 2 * x + hf_bias; }

extern "C" __global__ void hf_fill(int *out, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) out[i] = hf_twice(i);
  if (i == 0) __atomic_fetch_add(&hf_hits, 1, __ATOMIC_RELAXED);
}
