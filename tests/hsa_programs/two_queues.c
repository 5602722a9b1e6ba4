// Two queues of one GPU agent, as AMD's HIP runtime uses them for two streams: a kernel on the
// first spins on a flag in memory (flag_kernels.hip `wait_flag`) until a kernel dispatched
// afterwards on the second (`raise_flag`) sets it. On a GPU the command processor runs both
// queues' dispatches side by side; a runtime that ran one queue's dispatch at a time would never
// start the second kernel. Prints `key=value` lines for tests/hsa_soft.rs.
// Usage: two_queues CODE_OBJECT
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static hsa_agent_t gpu;
static hsa_amd_memory_pool_t kernarg_pool, fine_pool;
static const uint64_t kTimeoutNs = 30ull * 1000 * 1000 * 1000;

static hsa_status_t find_gpu(hsa_agent_t a, void* d) {
  (void)d;
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU && !gpu.handle) gpu = a;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pools(hsa_amd_memory_pool_t p, void* d) {
  (void)d;
  uint32_t flags = 0;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && !kernarg_pool.handle) kernarg_pool = p;
  else if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) && !fine_pool.handle) fine_pool = p;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_cpu_pools(hsa_agent_t a, void* d) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_CPU) hsa_amd_agent_iterate_memory_pools(a, find_pools, d);
  return HSA_STATUS_SUCCESS;
}

#define CHECK(c)                                                   \
  do {                                                             \
    hsa_status_t s_ = (c);                                         \
    if (s_ != HSA_STATUS_SUCCESS) {                                \
      printf("error=%s: %d\n", #c, (int)s_);                       \
      return 1;                                                    \
    }                                                              \
  } while (0)

static hsa_status_t kernel(hsa_executable_t exe, const char* name, uint64_t* object, uint32_t* kernarg) {
  hsa_executable_symbol_t sym;
  hsa_status_t s = hsa_executable_get_symbol_by_name(exe, name, &gpu, &sym);
  if (s != HSA_STATUS_SUCCESS) return s;
  s = hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, object);
  if (s != HSA_STATUS_SUCCESS) return s;
  return hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, kernarg);
}

static void dispatch(hsa_queue_t* q, uint64_t object, void* args, hsa_signal_t done) {
  uint64_t index = hsa_queue_add_write_index_screlease(q, 1);
  hsa_kernel_dispatch_packet_t* p = (hsa_kernel_dispatch_packet_t*)q->base_address + (index & (q->size - 1));
  memset((char*)p + 4, 0, sizeof *p - 4);
  p->workgroup_size_x = p->workgroup_size_y = p->workgroup_size_z = 1;
  p->grid_size_x = p->grid_size_y = p->grid_size_z = 1;
  p->kernel_object = object;
  p->kernarg_address = args;
  p->completion_signal = done;
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
  uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  __atomic_store_n((uint32_t*)p, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, index);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char code[1 << 20];
  size_t code_len = fread(code, 1, sizeof code, f);
  fclose(f);
  CHECK(hsa_init());
  hsa_iterate_agents(find_gpu, NULL);
  hsa_iterate_agents(find_cpu_pools, NULL);
  if (!gpu.handle || !kernarg_pool.handle || !fine_pool.handle) return 3;

  hsa_code_object_reader_t reader;
  hsa_executable_t exe;
  uint64_t wait_object, raise_object;
  uint32_t wait_size, raise_size;
  CHECK(hsa_code_object_reader_create_from_memory(code, code_len, &reader));
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  CHECK(hsa_executable_load_agent_code_object(exe, gpu, reader, NULL, NULL));
  CHECK(hsa_executable_freeze(exe, NULL));
  CHECK(kernel(exe, "wait_flag.kd", &wait_object, &wait_size));
  CHECK(kernel(exe, "raise_flag.kd", &raise_object, &raise_size));

  unsigned* mem = NULL;  // [0] the flag, [1] what the waiter saw plus one
  CHECK(hsa_amd_memory_pool_allocate(fine_pool, 64, 0, (void**)&mem));
  CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, mem));
  memset(mem, 0, 64);
  uint64_t *wait_args = NULL, *raise_args = NULL;
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, 64, 0, (void**)&wait_args));
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, 64, 0, (void**)&raise_args));
  CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, wait_args));
  CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, raise_args));
  memset(wait_args, 0, 64);
  memset(raise_args, 0, 64);
  wait_args[0] = (uint64_t)(uintptr_t)&mem[0];
  wait_args[1] = (uint64_t)(uintptr_t)&mem[1];
  raise_args[0] = (uint64_t)(uintptr_t)&mem[0];
  raise_args[1] = 41;

  hsa_queue_t *qa, *qb;
  CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &qa));
  CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &qb));
  hsa_signal_t waited, raised;
  CHECK(hsa_signal_create(1, 0, NULL, &waited));
  CHECK(hsa_signal_create(1, 0, NULL, &raised));

  dispatch(qa, wait_object, wait_args, waited);
  // The waiter is running (spinning) before the second queue gets its packet.
  struct timespec pause = {0, 200 * 1000 * 1000};
  nanosleep(&pause, NULL);
  printf("waiter_held=%d\n", hsa_signal_load_scacquire(waited) == 1);
  dispatch(qb, raise_object, raise_args, raised);

  hsa_signal_value_t r = hsa_signal_wait_scacquire(raised, HSA_SIGNAL_CONDITION_LT, 1, kTimeoutNs, HSA_WAIT_STATE_BLOCKED);
  hsa_signal_value_t w = hsa_signal_wait_scacquire(waited, HSA_SIGNAL_CONDITION_LT, 1, kTimeoutNs, HSA_WAIT_STATE_BLOCKED);
  printf("raiser_done=%d\n", r == 0);
  printf("waiter_done=%d\n", w == 0);
  printf("waiter_saw=%u\n", mem[1]);
  hsa_queue_destroy(qa);
  hsa_queue_destroy(qb);
  hsa_amd_memory_pool_free(wait_args);
  hsa_amd_memory_pool_free(raise_args);
  hsa_amd_memory_pool_free(mem);
  hsa_signal_destroy(waited);
  hsa_signal_destroy(raised);
  hsa_executable_destroy(exe);
  hsa_code_object_reader_destroy(reader);
  hsa_shut_down();
  printf("done=1\n");
  return 0;
}
