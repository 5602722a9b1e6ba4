// A host thread waits on an interrupt signal (hsa_signal_create with no consumers) with a long
// timeout while a kernel adds to the signal from the device (signal_post.hip). ROCr's
// interrupt signals wake the waiter when device code posts the signal's event, not at the
// timeout. Prints `key=value` lines for tests/hsa_soft.rs. Usage: interrupt_signal CODE_OBJECT
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static hsa_agent_t gpu;
static hsa_amd_memory_pool_t kernarg_pool;
static hsa_signal_t posted;
static const uint64_t kTimeoutNs = 10ull * 1000 * 1000 * 1000;
static hsa_signal_value_t woke_value;
static double woke_at;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static hsa_status_t find_gpu(hsa_agent_t a, void* d) {
  (void)d;
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU && !gpu.handle) gpu = a;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_kernarg(hsa_amd_memory_pool_t p, void* d) {
  (void)d;
  uint32_t flags = 0;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && !kernarg_pool.handle) kernarg_pool = p;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_cpu_kernarg(hsa_agent_t a, void* d) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_CPU) hsa_amd_agent_iterate_memory_pools(a, find_kernarg, d);
  return HSA_STATUS_SUCCESS;
}

static void* waiter(void* arg) {
  (void)arg;
  woke_value = hsa_signal_wait_scacquire(posted, HSA_SIGNAL_CONDITION_NE, 0, kTimeoutNs,
                                         HSA_WAIT_STATE_BLOCKED);
  woke_at = now_s();
  return NULL;
}

#define CHECK(c)                                                   \
  do {                                                             \
    hsa_status_t s_ = (c);                                         \
    if (s_ != HSA_STATUS_SUCCESS) {                                \
      printf("error=%s: %d\n", #c, (int)s_);                       \
      return 1;                                                    \
    }                                                              \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char code[1 << 20];
  size_t code_len = fread(code, 1, sizeof code, f);
  fclose(f);
  CHECK(hsa_init());
  hsa_iterate_agents(find_gpu, NULL);
  hsa_iterate_agents(find_cpu_kernarg, NULL);
  if (!gpu.handle || !kernarg_pool.handle) return 3;

  hsa_code_object_reader_t reader;
  hsa_executable_t exe;
  hsa_executable_symbol_t sym;
  uint64_t kernel_object;
  uint32_t kernarg_size;
  CHECK(hsa_code_object_reader_create_from_memory(code, code_len, &reader));
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  CHECK(hsa_executable_load_agent_code_object(exe, gpu, reader, NULL, NULL));
  CHECK(hsa_executable_freeze(exe, NULL));
  CHECK(hsa_executable_get_symbol_by_name(exe, "post.kd", &gpu, &sym));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kernel_object));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernarg_size));

  hsa_signal_t done;
  CHECK(hsa_signal_create(0, 0, NULL, &posted));
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  uint64_t* args = NULL;
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, kernarg_size < 16 ? 16 : kernarg_size, 0, (void**)&args));
  CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, args));
  memset(args, 0, kernarg_size);
  args[0] = posted.handle;
  args[1] = 7;
  hsa_queue_t* q;
  CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));

  pthread_t t;
  pthread_create(&t, NULL, waiter, NULL);
  // Let the waiter go to sleep on the signal first.
  struct timespec pause = {0, 100 * 1000 * 1000};
  nanosleep(&pause, NULL);

  uint64_t index = hsa_queue_add_write_index_screlease(q, 1);
  hsa_kernel_dispatch_packet_t* p = (hsa_kernel_dispatch_packet_t*)q->base_address + (index & (q->size - 1));
  memset((char*)p + 4, 0, sizeof *p - 4);
  p->workgroup_size_x = p->workgroup_size_y = p->workgroup_size_z = 1;
  p->grid_size_x = p->grid_size_y = p->grid_size_z = 1;
  p->kernel_object = kernel_object;
  p->kernarg_address = args;
  p->completion_signal = done;
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
  uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  double dispatched = now_s();
  __atomic_store_n((uint32_t*)p, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, index);

  hsa_signal_value_t d = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, kTimeoutNs, HSA_WAIT_STATE_BLOCKED);
  pthread_join(t, NULL);
  printf("kernel_done=%d\n", d == 0);
  printf("waiter_saw=%ld\n", (long)woke_value);
  printf("value=%ld\n", (long)hsa_signal_load_scacquire(posted));
  // Well under the 10 s timeout: woken by the device's post, not by the timeout.
  printf("woke_promptly=%d\n", woke_at - dispatched < 2.0);
  fprintf(stderr, "interrupt_signal: waiter woke %.3f ms after the dispatch\n", (woke_at - dispatched) * 1e3);
  hsa_queue_destroy(q);
  hsa_amd_memory_pool_free(args);
  hsa_signal_destroy(posted);
  hsa_signal_destroy(done);
  hsa_executable_destroy(exe);
  hsa_code_object_reader_destroy(reader);
  hsa_shut_down();
  printf("done=1\n");
  return 0;
}
