// Several devices of one node (run with ROCLOAD_SOFT_ISA=gfx1030,gfx1030: two software
// agents): kernels on each, peer copies, memory allocated under one device used from another,
// link queries, and the multi-device launches: hipExtLaunchMultiKernelMultiDevice (a different
// kernel per device, ordered with the streams before and after) and
// hipLaunchCooperativeKernelMultiDevice (grids that sync with each other through
// multi_grid_group, exchanging data between devices). Checked against the host.
#include "check.h"
#include <hip/hip_cooperative_groups.h>

#include <vector>

namespace cg = cooperative_groups;

__global__ void fill_index(int* p, int n, int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + i * 3;
}

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

// Slow enough that a host that does not wait sees the old values.
__global__ void slow_square(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int v = p[i], acc = 0;
    for (int k = 0; k < 400; k++) acc += (k ^ i) & 1;
    p[i] = v * v + (acc & 0);
  }
}

// Phase 1: each grid writes its own slice of `mine`. Multi-grid sync. Phase 2: each work-item
// reads the other grid's slice (pinned memory every device reaches) and writes the sum. Also
// records what multi_grid_group says about itself.
__global__ void exchange(int* shared, int per_grid, int* out, unsigned* facts) {
  cg::multi_grid_group mg = cg::this_multi_grid();
  cg::grid_group grid = cg::this_grid();
  unsigned rank = mg.grid_rank();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  shared[rank * per_grid + i] = (int)(rank + 1) * 1000 + i;
  mg.sync();
  unsigned other = (rank + 1) % mg.num_grids();
  out[i] = shared[other * per_grid + (per_grid - 1 - i)] + shared[rank * per_grid + i];
  if (i == 0) {
    facts[0] = mg.is_valid();
    facts[1] = mg.num_grids();
    facts[2] = rank;
    facts[3] = mg.size();
    facts[4] = grid.is_valid();
  }
  facts[8 + i] = mg.thread_rank();
}

int main() {
  int count = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  if (count < 2) {
    report("two devices (run with ROCLOAD_SOFT_ISA=gfx1030,gfx1030)", false);
    return finish();
  }
  const int N = 2048;
  std::vector<int> host(N);
  char detail[200] = "";

  // 1. A kernel on each device, into each device's own memory.
  {
    int* d[2];
    bool ok = true;
    for (int dev = 0; dev < 2; dev++) {
      HIP_CHECK(hipSetDevice(dev));
      HIP_CHECK(hipMalloc(&d[dev], N * sizeof(int)));
      fill_index<<<N / 256, 256>>>(d[dev], N, dev * 100000);
      HIP_CHECK(hipGetLastError());
    }
    for (int dev = 0; dev < 2 && ok; dev++) {
      HIP_CHECK(hipSetDevice(dev));
      hipPointerAttribute_t attr;
      HIP_CHECK(hipPointerGetAttributes(&attr, d[dev]));
      if (attr.device != dev) {
        snprintf(detail, sizeof detail, "allocation of device %d says device %d", dev, attr.device);
        ok = false;
      }
      HIP_CHECK(hipMemcpy(host.data(), d[dev], N * sizeof(int), hipMemcpyDeviceToHost));
      for (int i = 0; i < N && ok; i++)
        if (host[i] != dev * 100000 + i * 3) {
          snprintf(detail, sizeof detail, "device %d [%d] = %d", dev, i, host[i]);
          ok = false;
        }
    }
    report("each device runs its own kernels on its own memory", ok, detail);

    // 2. Peer copy device 0 -> device 1, then a kernel on device 1 over the copy.
    HIP_CHECK(hipSetDevice(1));
    HIP_CHECK(hipMemcpyPeer(d[1], 1, d[0], 0, N * sizeof(int)));
    add_one<<<N / 256, 256>>>(d[1], N);
    HIP_CHECK(hipMemcpy(host.data(), d[1], N * sizeof(int), hipMemcpyDeviceToHost));
    ok = true;
    for (int i = 0; i < N && ok; i++)
      if (host[i] != i * 3 + 1) {
        snprintf(detail, sizeof detail, "[%d] = %d, expected %d", i, host[i], i * 3 + 1);
        ok = false;
      }
    report("hipMemcpyPeer then a kernel on the peer", ok, detail);
    for (int dev = 0; dev < 2; dev++) HIP_CHECK(hipFree(d[dev]));
  }

  // 3. Memory allocated under one device, used and freed under another.
  {
    HIP_CHECK(hipSetDevice(0));
    int* pinned;
    HIP_CHECK(hipHostMalloc(&pinned, N * sizeof(int), 0));
    HIP_CHECK(hipSetDevice(1));
    int* d1;
    HIP_CHECK(hipMalloc(&d1, N * sizeof(int)));
    fill_index<<<N / 256, 256>>>(d1, N, 7);
    HIP_CHECK(hipMemcpy(pinned, d1, N * sizeof(int), hipMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < N && ok; i++)
      if (pinned[i] != 7 + i * 3) {
        snprintf(detail, sizeof detail, "[%d] = %d", i, pinned[i]);
        ok = false;
      }
    report("a device-1 copy into pinned memory allocated under device 0", ok, detail);
    int* managed;
    HIP_CHECK(hipMallocManaged(&managed, N * sizeof(int)));
    add_one<<<N / 256, 256>>>(managed, N);
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipSetDevice(0));
    report("managed memory allocated under device 1 is freed under device 0",
           hipFree(managed) == hipSuccess);
    HIP_CHECK(hipFree(d1));
    HIP_CHECK(hipHostFree(pinned));
  }

  // 4. Links and peers.
  {
    uint32_t type = 0, hops = 0;
    HIP_CHECK(hipExtGetLinkTypeAndHopCount(0, 1, &type, &hops));
    int can = 0;
    HIP_CHECK(hipDeviceCanAccessPeer(&can, 0, 1));
    snprintf(detail, sizeof detail, "type %u hops %u can %d", type, hops, can);
    report("two devices of one node: one XGMI hop, peers", type == 4 && hops == 1 && can == 1,
           detail);
  }

  // 5. hipExtLaunchMultiKernelMultiDevice: a different kernel per device; by default the
  // streams are ordered after every kernel, so synchronising one stream waits for both.
  {
    int* d[2];
    hipStream_t s[2];
    for (int dev = 0; dev < 2; dev++) {
      HIP_CHECK(hipSetDevice(dev));
      HIP_CHECK(hipMalloc(&d[dev], N * sizeof(int)));
      HIP_CHECK(hipStreamCreate(&s[dev]));
      fill_index<<<N / 256, 256, 0, s[dev]>>>(d[dev], N, dev + 1);
    }
    int n = N;
    void* args0[] = {&d[0], &n};
    void* args1[] = {&d[1], &n};
    hipLaunchParams lp[2] = {};
    lp[0].func = (void*)add_one;
    lp[0].gridDim = dim3(N / 256);
    lp[0].blockDim = dim3(256);
    lp[0].args = args0;
    lp[0].stream = s[0];
    lp[1].func = (void*)slow_square;
    lp[1].gridDim = dim3(N / 256);
    lp[1].blockDim = dim3(256);
    lp[1].args = args1;
    lp[1].stream = s[1];
    HIP_CHECK(hipExtLaunchMultiKernelMultiDevice(lp, 2, 0));
    HIP_CHECK(hipStreamSynchronize(s[0]));
    // Device 1's slow kernel is done too: its memory is read without waiting for its stream.
    HIP_CHECK(hipSetDevice(1));
    std::vector<int> h1(N);
    HIP_CHECK(hipMemcpyAsync(h1.data(), d[1], N * sizeof(int), hipMemcpyDeviceToHost, s[0]));
    HIP_CHECK(hipSetDevice(0));
    HIP_CHECK(hipMemcpy(host.data(), d[0], N * sizeof(int), hipMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < N && ok; i++) {
      int want0 = 1 + i * 3 + 1, want1 = (2 + i * 3) * (2 + i * 3);
      if (host[i] != want0 || h1[i] != want1) {
        snprintf(detail, sizeof detail, "[%d] = %d and %d, expected %d and %d", i, host[i], h1[i],
                 want0, want1);
        ok = false;
      }
    }
    report("hipExtLaunchMultiKernelMultiDevice runs a kernel per device, in order", ok, detail);
    // Refusals: two launches on one device, zero devices, unknown flags.
    lp[1].stream = s[0];
    hipError_t same = hipExtLaunchMultiKernelMultiDevice(lp, 2, 0);
    lp[1].stream = s[1];
    hipError_t none = hipExtLaunchMultiKernelMultiDevice(lp, 0, 0);
    hipError_t too_many = hipExtLaunchMultiKernelMultiDevice(lp, count + 1, 0);
    hipError_t flags = hipExtLaunchMultiKernelMultiDevice(lp, 2, 4);
    snprintf(detail, sizeof detail, "%s %s %s %s", hipGetErrorName(same), hipGetErrorName(none),
             hipGetErrorName(too_many), hipGetErrorName(flags));
    report("bad multi-device launches are hipErrorInvalidValue",
           same == hipErrorInvalidValue && none == hipErrorInvalidValue &&
               too_many == hipErrorInvalidValue && flags == hipErrorInvalidValue,
           detail);
    for (int dev = 0; dev < 2; dev++) {
      HIP_CHECK(hipSetDevice(dev));
      HIP_CHECK(hipStreamSynchronize(s[dev]));
      HIP_CHECK(hipStreamDestroy(s[dev]));
      HIP_CHECK(hipFree(d[dev]));
    }
  }

  // 6. hipLaunchCooperativeKernelMultiDevice: two grids exchange data through a multi-grid
  // sync, several times (the counter's generations).
  {
    const int block = 64, blocks = 4, per_grid = block * blocks;
    int* shared;
    HIP_CHECK(hipSetDevice(0));
    HIP_CHECK(hipHostMalloc(&shared, 2 * per_grid * sizeof(int), 0));
    int* out[2];
    unsigned* facts[2];
    hipStream_t s[2];
    for (int dev = 0; dev < 2; dev++) {
      HIP_CHECK(hipSetDevice(dev));
      HIP_CHECK(hipMalloc(&out[dev], per_grid * sizeof(int)));
      HIP_CHECK(hipMalloc(&facts[dev], (8 + per_grid) * sizeof(unsigned)));
      HIP_CHECK(hipStreamCreate(&s[dev]));
    }
    int wrong = 0;
    for (int round = 0; round < 5 && !wrong; round++) {
      int pg = per_grid;
      void* args[2][4] = {{&shared, &pg, &out[0], &facts[0]}, {&shared, &pg, &out[1], &facts[1]}};
      hipLaunchParams lp[2] = {};
      for (int dev = 0; dev < 2; dev++) {
        lp[dev].func = (void*)exchange;
        lp[dev].gridDim = dim3(blocks);
        lp[dev].blockDim = dim3(block);
        lp[dev].args = args[dev];
        lp[dev].stream = s[dev];
      }
      HIP_CHECK(hipLaunchCooperativeKernelMultiDevice(lp, 2, 0));
      for (int dev = 0; dev < 2 && !wrong; dev++) {
        HIP_CHECK(hipSetDevice(dev));
        HIP_CHECK(hipStreamSynchronize(s[dev]));
        std::vector<int> o(per_grid);
        std::vector<unsigned> f(8 + per_grid);
        HIP_CHECK(hipMemcpy(o.data(), out[dev], per_grid * sizeof(int), hipMemcpyDeviceToHost));
        HIP_CHECK(hipMemcpy(f.data(), facts[dev], f.size() * sizeof(unsigned),
                            hipMemcpyDeviceToHost));
        int other = (dev + 1) % 2;
        for (int i = 0; i < per_grid && !wrong; i++) {
          int want = (other + 1) * 1000 + (per_grid - 1 - i) + (dev + 1) * 1000 + i;
          if (o[i] != want) {
            snprintf(detail, sizeof detail, "round %d grid %d [%d] = %d, expected %d", round, dev,
                     i, o[i], want);
            wrong++;
          }
          if (f[8 + i] != (unsigned)(dev * per_grid + i)) {
            snprintf(detail, sizeof detail, "grid %d thread %d: thread_rank %u", dev, i, f[8 + i]);
            wrong++;
          }
        }
        if (!wrong && (f[0] != 1 || f[1] != 2 || f[2] != (unsigned)dev ||
                       f[3] != (unsigned)(2 * per_grid) || f[4] != 1)) {
          snprintf(detail, sizeof detail,
                   "grid %d: is_valid %u num_grids %u rank %u size %u grid valid %u", dev, f[0],
                   f[1], f[2], f[3], f[4]);
          wrong++;
        }
      }
    }
    report("hipLaunchCooperativeKernelMultiDevice: grids sync and exchange across devices",
           wrong == 0, detail);
    for (int dev = 0; dev < 2; dev++) {
      HIP_CHECK(hipSetDevice(dev));
      HIP_CHECK(hipStreamDestroy(s[dev]));
      HIP_CHECK(hipFree(out[dev]));
      HIP_CHECK(hipFree(facts[dev]));
    }
    HIP_CHECK(hipHostFree(shared));
  }

  // 5. An event belongs to the device current at its creation (clr): it is recorded only on
  // that device's streams, and two devices' events have no elapsed time between them.
  {
    hipEvent_t start, other, stop;
    HIP_CHECK(hipSetDevice(0));
    HIP_CHECK(hipEventCreate(&start));
    HIP_CHECK(hipEventCreate(&other));
    HIP_CHECK(hipEventRecord(start, nullptr));
    HIP_CHECK(hipEventSynchronize(start));
    HIP_CHECK(hipSetDevice(1));
    HIP_CHECK(hipEventCreate(&stop));
    hipError_t wrong_stream = hipEventRecord(other, nullptr);
    HIP_CHECK(hipEventRecord(stop, nullptr));
    HIP_CHECK(hipEventSynchronize(stop));
    float ms = 1.0f;
    hipError_t across = hipEventElapsedTime(&ms, start, stop);
    snprintf(detail, sizeof detail, "record on device 1's null stream: %s, elapsed: %s",
             hipGetErrorName(wrong_stream), hipGetErrorName(across));
    report("events: recorded only on their device's streams, no time across devices",
           wrong_stream == hipErrorInvalidHandle && across == hipErrorInvalidHandle, detail);
    HIP_CHECK(hipEventDestroy(start));
    HIP_CHECK(hipEventDestroy(other));
    HIP_CHECK(hipEventDestroy(stop));
    HIP_CHECK(hipSetDevice(0));
  }

  // 6. Pinned memory freed on device 0 goes back to the host allocator in time, and malloc
  // may hand its address out again: device 1 must take it as the caller's host memory then,
  // not as a use after free of the old pinned block (HIP's hipMemcpyAsync test, whose
  // malloc'd buffer landed on a freed hipHostMalloc block).
  {
    const size_t S = 16 << 20;
    std::vector<void*> freed;
    int reused = 0, refused = 0;
    hipError_t first = hipSuccess;
    HIP_CHECK(hipSetDevice(1));
    char* d1;
    HIP_CHECK(hipMalloc(&d1, S));
    for (int round = 0; round < 8; round++) {
      HIP_CHECK(hipSetDevice(0));
      void *p[2], *d[2];
      for (int k = 0; k < 2; k++) {
        HIP_CHECK(hipHostMalloc(&p[k], S, 0));
        HIP_CHECK(hipMalloc(&d[k], S));
      }
      for (int k = 0; k < 2; k++) {
        HIP_CHECK(hipHostFree(p[k]));
        HIP_CHECK(hipFree(d[k]));
        freed.push_back(p[k]);
      }
      void* h[2] = {malloc(S), malloc(S)};
      HIP_CHECK(hipSetDevice(1));
      for (int k = 0; k < 2; k++) {
        if (!h[k]) continue;
        memset(h[k], round, S);
        for (void* f : freed)
          reused += (char*)h[k] < (char*)f + S && (char*)f < (char*)h[k] + S;
        hipError_t e = hipMemcpy(d1, h[k], S, hipMemcpyHostToDevice);
        if (e != hipSuccess && refused++ == 0) first = e;
      }
      free(h[0]);
      free(h[1]);
    }
    HIP_CHECK(hipFree(d1));
    snprintf(detail, sizeof detail, "%d of 16 copies from malloc'd memory refused (first: %s); "
             "%d malloc'd buffers overlapped a freed pinned block", refused,
             hipGetErrorName(first), reused);
    report("device 1 copies from malloc'd memory at a freed pinned block's address",
           refused == 0, detail);
    HIP_CHECK(hipSetDevice(0));
  }
  return finish();
}
