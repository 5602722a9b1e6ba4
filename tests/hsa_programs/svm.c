// Shared virtual memory as ROCr 5.2.3 answers it over a driver with the SVM API
// (runtime.cpp SetSvmAttrib, GetSvmAttrib, SvmPrefetch; KFD kfd_svm.c): attributes of page
// ranges of plain host memory (mmap), their checks and status codes, prefetch locations, and
// kernels (flag_kernels.hip `raise_flag`) that reach the memory only once the GPU has access.
// Prints `key=value` lines for tests/hsa_soft.rs.
// Usage: svm CODE_OBJECT
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static hsa_agent_t gpu, cpu;
static hsa_amd_memory_pool_t kernarg_pool, fine_pool;
static const uint64_t kTimeoutNs = 30ull * 1000 * 1000 * 1000;
static const size_t kPage = 4096;

static hsa_status_t find_agents(hsa_agent_t a, void* d) {
  (void)d;
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU && !gpu.handle) gpu = a;
  if (t == HSA_DEVICE_TYPE_CPU && !cpu.handle) cpu = a;
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

#define CHECK(c)                                                   \
  do {                                                             \
    hsa_status_t s_ = (c);                                         \
    if (s_ != HSA_STATUS_SUCCESS) {                                \
      printf("error=%s: %d\n", #c, (int)s_);                       \
      return 1;                                                    \
    }                                                              \
  } while (0)

// One attribute set on [p, p + n).
static int set1(void* p, size_t n, uint64_t attribute, uint64_t value) {
  hsa_amd_svm_attribute_pair_t a = {attribute, value};
  return hsa_amd_svm_attributes_set(p, n, &a, 1);
}

// One attribute of [p, p + n): its value (or, for an access query, its attribute); -1 when
// the call fails.
static int64_t get1(void* p, size_t n, uint64_t attribute, uint64_t value, int want_attribute) {
  hsa_amd_svm_attribute_pair_t a = {attribute, value};
  if (hsa_amd_svm_attributes_get(p, n, &a, 1) != HSA_STATUS_SUCCESS) return -1;
  return want_attribute ? (int64_t)a.attribute : (int64_t)a.value;
}

static int get1_status(void* p, size_t n, uint64_t attribute, uint64_t value) {
  hsa_amd_svm_attribute_pair_t a = {attribute, value};
  return hsa_amd_svm_attributes_get(p, n, &a, 1);
}

static hsa_status_t last_queue_error;
static void on_queue_error(hsa_status_t status, hsa_queue_t* q, void* data) {
  (void)q;
  (void)data;
  __atomic_store_n(&last_queue_error, status, __ATOMIC_RELEASE);
}

static uint64_t raise_object;
static uint64_t* raise_args;

// Runs raise_flag(flag, value) on a new queue; 1 when it completed, 0 when the queue reported
// an error (its status in last_queue_error), -1 on a setup failure.
static int raise_on_new_queue(unsigned* flag, unsigned value) {
  hsa_queue_t* q;
  hsa_signal_t done;
  last_queue_error = HSA_STATUS_SUCCESS;
  if (hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, NULL, UINT32_MAX, UINT32_MAX, &q) != HSA_STATUS_SUCCESS)
    return -1;
  if (hsa_signal_create(1, 0, NULL, &done) != HSA_STATUS_SUCCESS) return -1;
  raise_args[0] = (uint64_t)(uintptr_t)flag;
  raise_args[1] = value;
  uint64_t index = hsa_queue_add_write_index_screlease(q, 1);
  hsa_kernel_dispatch_packet_t* p = (hsa_kernel_dispatch_packet_t*)q->base_address + (index & (q->size - 1));
  memset((char*)p + 4, 0, sizeof *p - 4);
  p->workgroup_size_x = p->workgroup_size_y = p->workgroup_size_z = 1;
  p->grid_size_x = p->grid_size_y = p->grid_size_z = 1;
  p->kernel_object = raise_object;
  p->kernarg_address = raise_args;
  p->completion_signal = done;
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
  uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  __atomic_store_n((uint32_t*)p, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, index);
  int result = -1;
  // A failed packet leaves its signal: wait in slices for either outcome.
  for (int i = 0; i < 300 && result < 0; i++) {
    if (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, 100ull * 1000 * 1000, HSA_WAIT_STATE_BLOCKED) == 0)
      result = 1;
    else if (__atomic_load_n(&last_queue_error, __ATOMIC_ACQUIRE) != HSA_STATUS_SUCCESS)
      result = 0;
  }
  hsa_queue_destroy(q);
  hsa_signal_destroy(done);
  return result;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char code[1 << 20];
  size_t code_len = fread(code, 1, sizeof code, f);
  fclose(f);
  CHECK(hsa_init());
  hsa_iterate_agents(find_agents, NULL);
  hsa_amd_agent_iterate_memory_pools(cpu, find_pools, NULL);
  if (!gpu.handle || !cpu.handle || !kernarg_pool.handle || !fine_pool.handle) return 3;

  bool b = true;
  hsa_system_get_info((hsa_system_info_t)HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED, &b);
  printf("system.svm_supported=%d\n", b);
  b = true;
  hsa_system_get_info((hsa_system_info_t)HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT, &b);
  printf("system.svm_accessible_by_default=%d\n", b);

  char* m = mmap(NULL, 4 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return 4;

  // Pages nobody set: the driver's defaults.
  printf("default.global_flag=%lld\n", (long long)get1(m, 4 * kPage, HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, 0, 0));
  printf("default.granularity=%lld\n", (long long)get1(m, 4 * kPage, HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY, 0, 0));
  printf("default.preferred=%lld\n", (long long)get1(m, 4 * kPage, HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 77, 0));
  printf("default.prefetch=%lld\n", (long long)get1(m, 4 * kPage, HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION, 77, 0));
  printf("default.gpu_access=%lld\n", (long long)get1(m, kPage, HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, gpu.handle, 1));
  printf("default.cpu_access=%lld\n", (long long)get1(m, kPage, HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, cpu.handle, 1));

  // Access for the GPU over all four pages (as clr's hipMallocManaged does), then hints on
  // parts; an interior pointer and size cover their whole pages.
  printf("set.access.status=%d\n", set1(m, 4 * kPage, HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE, gpu.handle));
  printf("get.gpu_access=%lld\n", (long long)get1(m + 100, 10, HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, gpu.handle, 1));
  printf("set.read_mostly.status=%d\n", set1(m + 8, 2 * kPage - 16, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 1));
  printf("get.read_mostly.two=%lld\n", (long long)get1(m, 2 * kPage, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 0, 0));
  printf("get.read_mostly.three=%lld\n", (long long)get1(m, 3 * kPage, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 0, 0));
  printf("set.preferred.status=%d\n", set1(m, 4 * kPage, HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, gpu.handle));
  printf("get.preferred_is_gpu=%d\n", get1(m, 4 * kPage, HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 0, 0) == (int64_t)gpu.handle);
  set1(m + 3 * kPage, kPage, HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, cpu.handle);
  printf("get.preferred_cpu_page=%d\n", get1(m + 3 * kPage, kPage, HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 0, 0) == (int64_t)cpu.handle);
  printf("get.preferred_mixed=%lld\n", (long long)get1(m, 4 * kPage, HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 0, 0));
  set1(m + kPage, kPage, HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED);
  printf("get.global_flag.coarse=%lld\n", (long long)get1(m + kPage, kPage, HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, 0, 0));
  printf("get.global_flag.mixed=%lld\n", (long long)get1(m, 4 * kPage, HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, 0, 0));
  set1(m + 2 * kPage, kPage, HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY, 40);
  printf("get.granularity.capped=%lld\n", (long long)get1(m + 2 * kPage, kPage, HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY, 0, 0));
  printf("get.granularity.least=%lld\n", (long long)get1(m, 2 * kPage, HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY, 0, 0));
  set1(m, kPage, HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS, cpu.handle);
  printf("get.cpu_no_access=%lld\n", (long long)get1(m, kPage, HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, cpu.handle, 1));
  set1(m, kPage, HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE, cpu.handle);
  printf("get.cpu_access_again=%lld\n", (long long)get1(m, kPage, HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, cpu.handle, 1));
  // Several attributes at once, each answered in its own entry.
  {
    hsa_amd_svm_attribute_pair_t q[3] = {{HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 9},
                                         {HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 9},
                                         {HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, gpu.handle}};
    int s = hsa_amd_svm_attributes_get(m, kPage, q, 3);
    printf("get.three=%d/%llu/%d/%d\n", s, (unsigned long long)q[0].value, q[1].value == gpu.handle,
           (int)q[2].attribute);
  }

  // ROCr's checks of the list, in order.
  {
    hsa_amd_svm_attribute_pair_t twice[2] = {{HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 1}, {HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 0}};
    printf("set.twice.status=%d\n", hsa_amd_svm_attributes_set(m, kPage, twice, 2));
    hsa_amd_svm_attribute_pair_t agent_twice[2] = {{HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE, gpu.handle},
                                                   {HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS, gpu.handle}};
    printf("set.agent_twice.status=%d\n", hsa_amd_svm_attributes_set(m, kPage, agent_twice, 2));
  }
  printf("set.prefetch_location.status=%d\n", set1(m, kPage, HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION, gpu.handle));
  printf("set.access_query.status=%d\n", set1(m, kPage, HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, gpu.handle));
  printf("set.bad_global_flag.status=%d\n", set1(m, kPage, HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, HSA_AMD_SVM_GLOBAL_FLAG_INDETERMINATE));
  printf("set.bad_agent.status=%d\n", set1(m, kPage, HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE, 12345));
  printf("set.bad_preferred.status=%d\n", set1(m, kPage, HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 12345));
  printf("set.null_preferred.status=%d\n", set1(m + 3 * kPage, kPage, HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 0));
  printf("get.null_preferred=%lld\n", (long long)get1(m + 3 * kPage, kPage, HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 5, 0));
  printf("get.bad_attribute.status=%d\n", get1_status(m, kPage, HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE, gpu.handle));
  printf("get.bad_agent.status=%d\n", get1_status(m, kPage, HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, 12345));
  printf("get.none.status=%d\n", hsa_amd_svm_attributes_get(NULL, 0, NULL, 0));

  // What the driver refuses: no pages, pages not mapped, memory it allocated itself.
  printf("set.size0.status=%d\n", set1(m, 0, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 1));
  printf("set.null.status=%d\n", set1(NULL, kPage, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 1));
  char* gone = mmap(NULL, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(gone, kPage);
  printf("set.unmapped.status=%d\n", set1(gone, kPage, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 1));
  printf("get.unmapped.status=%d\n", get1_status(gone, kPage, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 0));
  void* pool = NULL;
  CHECK(hsa_amd_memory_pool_allocate(fine_pool, kPage, 0, &pool));
  printf("set.pool.status=%d\n", set1(pool, kPage, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 1));
  printf("set.pool_empty_list.status=%d\n", hsa_amd_svm_attributes_set(pool, 100, NULL, 0));
  printf("get.pool.status=%d\n", get1_status(pool, kPage, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 0));
  printf("get.pool.prefetch=%lld\n", (long long)get1(pool, kPage, HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION, 7, 0));
  printf("set.straddling_pool.status=%d\n", set1((char*)pool - kPage, 2 * kPage, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 1));
  hsa_amd_memory_pool_free(pool);
  {
    hsa_amd_pointer_info_t info;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    hsa_amd_pointer_info(m, &info, NULL, NULL, NULL);
    printf("ptrinfo.type=%d\n", (int)info.type);
  }

  // Prefetches: where every page was last prefetched to, in issue order; one waits for its
  // dependency before it completes.
  {
    hsa_signal_t done, dep;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    CHECK(hsa_signal_create(1, 0, NULL, &dep));
    printf("prefetch.status=%d\n", hsa_amd_svm_prefetch_async(m, 4 * kPage, gpu, 0, NULL, done));
    printf("prefetch.completed=%d\n", hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, kTimeoutNs, HSA_WAIT_STATE_BLOCKED) == 0);
    printf("prefetch.gpu=%d\n", get1(m, 4 * kPage, HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION, 0, 0) == (int64_t)gpu.handle);
    hsa_signal_store_screlease(done, 1);
    printf("prefetch.dep.status=%d\n", hsa_amd_svm_prefetch_async(m + kPage, kPage, cpu, 1, &dep, done));
    printf("prefetch.dep.held=%d\n", hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, 200ull * 1000 * 1000, HSA_WAIT_STATE_BLOCKED) == 1);
    hsa_signal_store_screlease(dep, 0);
    printf("prefetch.dep.completed=%d\n", hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, kTimeoutNs, HSA_WAIT_STATE_BLOCKED) == 0);
    printf("prefetch.cpu_page=%d\n", get1(m + kPage, kPage, HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION, 0, 0) == (int64_t)cpu.handle);
    printf("prefetch.mixed=%lld\n", (long long)get1(m, 2 * kPage, HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION, 5, 0));
    printf("prefetch.bad_agent.status=%d\n", hsa_amd_svm_prefetch_async(m, kPage, (hsa_agent_t){12345}, 0, NULL, done));
    hsa_signal_store_screlease(done, 1);
    printf("prefetch.unmapped.status=%d\n", hsa_amd_svm_prefetch_async(gone, kPage, gpu, 0, NULL, done));
    printf("prefetch.unmapped.completed=%d\n", hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, kTimeoutNs, HSA_WAIT_STATE_BLOCKED) == 0);
    hsa_signal_destroy(done);
    hsa_signal_destroy(dep);
  }

  // Kernels: the GPU reaches SVM memory only while it has access, and writes it only while
  // it is not read-only.
  hsa_code_object_reader_t reader;
  hsa_executable_t exe;
  hsa_executable_symbol_t sym;
  CHECK(hsa_code_object_reader_create_from_memory(code, code_len, &reader));
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  CHECK(hsa_executable_load_agent_code_object(exe, gpu, reader, NULL, NULL));
  CHECK(hsa_executable_freeze(exe, NULL));
  CHECK(hsa_executable_get_symbol_by_name(exe, "raise_flag.kd", &gpu, &sym));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &raise_object));
  CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, 64, 0, (void**)&raise_args));
  CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, raise_args));
  memset(raise_args, 0, 64);

  unsigned* flag = (unsigned*)(m + 2 * kPage + 64);
  *flag = 0;
  printf("kernel.with_access=%d\n", raise_on_new_queue(flag, 41));
  printf("kernel.with_access.value=%u\n", *flag);
  set1(m + 2 * kPage, kPage, HSA_AMD_SVM_ATTRIB_READ_ONLY, 1);
  printf("get.read_only=%lld\n", (long long)get1(m + 2 * kPage, kPage, HSA_AMD_SVM_ATTRIB_READ_ONLY, 0, 0));
  printf("kernel.read_only=%d\n", raise_on_new_queue(flag, 42));
  printf("kernel.read_only.error=%d\n", (int)last_queue_error);
  printf("kernel.read_only.value=%u\n", *flag);
  set1(m + 2 * kPage, kPage, HSA_AMD_SVM_ATTRIB_READ_ONLY, 0);
  printf("kernel.writable_again=%d\n", raise_on_new_queue(flag, 43));
  printf("kernel.writable_again.value=%u\n", *flag);
  set1(m + 2 * kPage, kPage, HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS, gpu.handle);
  printf("get.gpu_no_access=%lld\n", (long long)get1(m + 2 * kPage, kPage, HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, gpu.handle, 1));
  printf("kernel.no_access=%d\n", raise_on_new_queue(flag, 44));
  printf("kernel.no_access.error=%d\n", (int)last_queue_error);
  printf("kernel.no_access.value=%u\n", *flag);
  set1(m + 2 * kPage, kPage, HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE, gpu.handle);
  printf("get.gpu_in_place=%lld\n", (long long)get1(m + 2 * kPage, kPage, HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, gpu.handle, 1));
  printf("kernel.in_place=%d\n", raise_on_new_queue(flag, 45));
  printf("kernel.in_place.value=%u\n", *flag);

  // Memory the program unmapped and the library hands out again is no SVM range any more.
  munmap(m, 4 * kPage);
  void* again = NULL;
  int reused = 0;
  for (int i = 0; i < 64 && !reused; i++) {
    void* p = NULL;
    if (hsa_amd_memory_pool_allocate(fine_pool, 4 * kPage, 0, &p) != HSA_STATUS_SUCCESS) break;
    if (p == (void*)m) {
      reused = 1;
      again = p;
    } else {
      hsa_amd_memory_pool_free(p);
    }
  }
  if (reused) {
    printf("reused.allow_access.status=%d\n", hsa_amd_agents_allow_access(1, &gpu, NULL, again));
    printf("reused.svm_get.status=%d\n", get1_status(again, kPage, HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 0));
    hsa_amd_memory_pool_free(again);
  }

  hsa_amd_memory_pool_free(raise_args);
  hsa_executable_destroy(exe);
  hsa_code_object_reader_destroy(reader);
  hsa_shut_down();
  printf("done=1\n");
  return 0;
}
