// Asks the HSA runtime what AMD's HIP runtime (clr 5.2.3) asks and prints each answer as
// `key=value`; tests/hsa_soft.rs runs it against libhsa_soft.so and compares every line with
// what ROCr 5.2.3's sources answer. Built with Debian's HSA headers (libhsa-runtime-dev).
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ext_image.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static hsa_agent_t cpu, gpu;
static hsa_amd_memory_pool_t cpu_fine, gpu_pool;

static hsa_status_t find_agent(hsa_agent_t a, void* d) {
  (void)d;
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_CPU && !cpu.handle) cpu = a;
  if (t == HSA_DEVICE_TYPE_GPU && !gpu.handle) gpu = a;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pool(hsa_amd_memory_pool_t p, void* d) {
  hsa_amd_memory_pool_t* out = d;
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  if (seg == HSA_AMD_SEGMENT_GLOBAL && !out->handle &&
      (flags & (HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)) &&
      !(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT))
    *out = p;
  return HSA_STATUS_SUCCESS;
}

static int handled;
static bool on_signal(hsa_signal_value_t v, void* arg) {
  (void)arg;
  handled = (int)v + 100;
  return false;
}

int main(void) {
  if (hsa_init() != HSA_STATUS_SUCCESS) return 2;
  hsa_iterate_agents(find_agent, NULL);
  if (!cpu.handle || !gpu.handle) return 3;
  hsa_amd_agent_iterate_memory_pools(cpu, find_pool, &cpu_fine);
  hsa_amd_agent_iterate_memory_pools(gpu, find_pool, &gpu_pool);

  hsa_amd_hdp_flush_t hdp = {(uint32_t*)1, (uint32_t*)1};
  printf("gpu.hdp_flush.status=%d\n", hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_HDP_FLUSH, &hdp));
  printf("gpu.hdp_flush.null=%d\n", hdp.HDP_MEM_FLUSH_CNTL == NULL && hdp.HDP_REG_FLUSH_CNTL == NULL);
  uint32_t u = 0, cus = 0;
  hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus);
  printf("gpu.coop_cu_count.status=%d\n", hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT, &u));
  printf("gpu.coop_cu_count_is_cu_count=%d\n", u == cus && cus > 0);
  hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_CACHELINE_SIZE, &u);
  printf("gpu.cacheline=%u\n", u);
  hsa_agent_get_info(cpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_CACHELINE_SIZE, &u);
  printf("cpu.cacheline=%u\n", u);
  uint8_t ext[128];
  hsa_agent_get_info(gpu, HSA_AGENT_INFO_EXTENSIONS, ext);
  printf("gpu.ext.images=%d\n", (ext[0] >> HSA_EXTENSION_IMAGES) & 1);
  printf("gpu.ext.amd_profiler=%d\n", (ext[HSA_EXTENSION_AMD_PROFILER / 8] >> (HSA_EXTENSION_AMD_PROFILER % 8)) & 1);
  hsa_system_get_info(HSA_SYSTEM_INFO_EXTENSIONS, ext);
  printf("system.ext.amd_profiler=%d\n", (ext[HSA_EXTENSION_AMD_PROFILER / 8] >> (HSA_EXTENSION_AMD_PROFILER % 8)) & 1);
  uint32_t dims[3];
  printf("gpu.image_2d_max.status=%d\n", hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS, dims));
  hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_MAX_IMAGE_RD_HANDLES, &u);
  printf("gpu.image_rd_handles=%u\n", u);
  uint32_t chip = 7;
  hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_CHIP_ID, &chip);
  hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_EXT_AGENT_INFO_MAX_SAMPLER_HANDLERS, &u);
  printf("gpu.sampler_handlers_is_chip_id=%d\n", u == chip);
  bool b = true;
  hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES, &b);
  printf("gpu.cooperative_queues=%d\n", b);
  hsa_system_get_info((hsa_system_info_t)HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED, &b);
  printf("system.svm_supported=%d\n", b);
  hsa_amd_memory_pool_link_info_t link;
  memset(&link, 0xff, sizeof link);
  printf("link.status=%d\n", hsa_amd_agent_memory_pool_get_info(gpu, cpu_fine, HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO, &link));
  printf("link.type_pcie=%d\n", link.link_type == HSA_AMD_LINK_INFO_TYPE_PCIE);
  memset(&link, 0xff, sizeof link);
  hsa_amd_agent_memory_pool_get_info(gpu, gpu_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO, &link);
  printf("link.own_pool_zero=%d\n", link.link_type == 0 && link.numa_distance == 0);

  // Extension queries.
  b = true;
  hsa_system_extension_supported(HSA_EXTENSION_AMD_LOADER, 1, 2, &b);
  printf("system.loader_1_2=%d\n", b);
  hsa_system_extension_supported(HSA_EXTENSION_IMAGES, 1, 0, &b);
  printf("system.images_1_0=%d\n", b);
  printf("system.ext_bad_id.status=%d\n", hsa_system_extension_supported(100, 1, 0, &b));
  uint16_t minor = 9;
  hsa_system_major_extension_supported(HSA_EXTENSION_AMD_AQLPROFILE, 1, &minor, &b);
  printf("system.major_aqlprofile=%d/%u\n", b, minor);
  hsa_agent_extension_supported(HSA_EXTENSION_AMD_AQLPROFILE, gpu, 1, 0, &b);
  printf("gpu.ext_aqlprofile=%d\n", b);
  hsa_agent_extension_supported(HSA_EXTENSION_AMD_AQLPROFILE, cpu, 1, 0, &b);
  printf("cpu.ext_aqlprofile=%d\n", b);

  // Memory.
  printf("pool_free_null.status=%d\n", hsa_amd_memory_pool_free(NULL));
  void* p = NULL;
  hsa_amd_memory_pool_allocate(gpu_pool, 100, 0, &p);
  hsa_amd_pointer_info_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  uint32_t n = 0;
  hsa_agent_t* accessible = NULL;
  printf("ptrinfo.status=%d\n", hsa_amd_pointer_info((char*)p + 10, &info, malloc, &n, &accessible));
  printf("ptrinfo.type=%d\n", info.type);
  printf("ptrinfo.base_is_allocation=%d\n", info.agentBaseAddress == p && info.hostBaseAddress == p);
  printf("ptrinfo.owner_is_gpu=%d\n", info.agentOwner.handle == gpu.handle);
  printf("ptrinfo.accessible=%u/%d\n", n, n > 0 && accessible[0].handle == gpu.handle);
  printf("ptrinfo.size=%zu\n", info.sizeInBytes);
  free(accessible);
  void* h = NULL;
  hsa_amd_memory_pool_allocate(cpu_fine, 4097, 0, &h);
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  hsa_amd_pointer_info((char*)h + 4096, &info, NULL, NULL, NULL);
  printf("ptrinfo.system.size=%zu\n", info.sizeInBytes);
  hsa_amd_memory_pool_free(h);
  int local = 0;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  hsa_amd_pointer_info(&local, &info, NULL, NULL, NULL);
  printf("ptrinfo.unknown.type=%d\n", info.type);
  printf("ptrinfo.unknown.owner_is_cpu=%d\n", info.agentOwner.handle == cpu.handle);
  void* agent_ptr = (void*)1;
  printf("lock_to_gpu_pool.status=%d\n", hsa_amd_memory_lock_to_pool(&local, 4, NULL, 0, gpu_pool, 0, &agent_ptr));
  printf("lock_to_gpu_pool.null=%d\n", agent_ptr == NULL);
  printf("register_zero.status=%d\n", hsa_memory_register(&local, 0));
  printf("svm_set.status=%d\n", hsa_amd_svm_attributes_set(p, 100, NULL, 0));
  hsa_amd_memory_pool_free(p);

  // Locked host memory: the agent's address is one of its own (the thunk's userptr buffer in
  // its SVM aperture), the host's offset in the page kept; a second lock of the range gives the
  // same address; pointer info names both; copies through the agent's address reach the host's
  // bytes; the agent's address is no host memory.
  {
    static char buf[3 * 4096];
    char* host = buf + 4096 + 100;
    memset(host, 0x3c, 64);
    void* a1 = NULL;
    void* a2 = NULL;
    printf("lock.status=%d\n", hsa_amd_memory_lock(host, 64, &gpu, 1, &a1));
    printf("lock.agent_address_differs=%d\n", a1 != NULL && a1 != (void*)host);
    printf("lock.page_offset_kept=%d\n", ((uintptr_t)a1 & 4095) == ((uintptr_t)host & 4095));
    printf("lock.again.status=%d\n", hsa_amd_memory_lock(host, 64, &gpu, 1, &a2));
    printf("lock.again.same=%d\n", a2 == a1);
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    hsa_amd_pointer_info(a1, &info, NULL, NULL, NULL);
    printf("lock.ptrinfo.type=%d\n", info.type);
    printf("lock.ptrinfo.addresses=%d\n", info.agentBaseAddress == a1 && info.hostBaseAddress == (void*)host);
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    hsa_amd_pointer_info(host + 10, &info, NULL, NULL, NULL);
    printf("lock.ptrinfo.by_host=%d\n", info.type == HSA_EXT_POINTER_TYPE_LOCKED && info.agentBaseAddress == a1);
    char back[64] = {0};
    printf("lock.copy_from_agent.status=%d\n", hsa_memory_copy(back, a1, 64));
    printf("lock.copy_from_agent.bytes=%d\n", back[0] == 0x3c && back[63] == 0x3c);
    printf("lock.unlock.status=%d\n", hsa_amd_memory_unlock(host));
    printf("lock.unlock_again.status=%d\n", hsa_amd_memory_unlock(host));
    printf("lock.unlock_unknown.status=%d\n", hsa_amd_memory_unlock(host));
    // Locked for the CPU agent alone: nothing is registered, the address is the host's.
    void* a3 = NULL;
    printf("lock.cpu_only.status=%d\n", hsa_amd_memory_lock(host, 64, &cpu, 1, &a3));
    printf("lock.cpu_only.host_address=%d\n", a3 == (void*)host);
    printf("lock.cpu_only.unlock=%d\n", hsa_amd_memory_unlock(host));
    // Another size at the same address, and a range overlapping it elsewhere: registrations of
    // their own, each at a GPU address of its own; pointer info by a GPU address names its
    // registration; unlocking the overlapping range ends it alone. (Both sizes at `host` stay:
    // an unlock by that address alone cannot tell them apart.)
    void *b1 = NULL, *b2 = NULL, *b3 = NULL;
    int each = hsa_amd_memory_lock(host, 64, &gpu, 1, &b1) == HSA_STATUS_SUCCESS &&
               hsa_amd_memory_lock(host, 128, &gpu, 1, &b2) == HSA_STATUS_SUCCESS &&
               hsa_amd_memory_lock(host + 32, 64, &gpu, 1, &b3) == HSA_STATUS_SUCCESS;
    printf("lock.registrations.status=%d\n", each);
    printf("lock.registrations.own_addresses=%d\n", each && b1 != b2 && b1 != b3 && b2 != b3 &&
                                                        b1 != (void*)host && b3 != (void*)(host + 32));
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    hsa_amd_pointer_info((char*)b3 + 8, &info, NULL, NULL, NULL);
    printf("lock.registrations.ptrinfo=%d\n", info.type == HSA_EXT_POINTER_TYPE_LOCKED && info.agentBaseAddress == b3 &&
                                                 info.hostBaseAddress == (void*)(host + 32) && info.sizeInBytes == 64);
    printf("lock.registrations.unlock=%d\n", hsa_amd_memory_unlock(host + 32));
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    hsa_amd_pointer_info(b3, &info, NULL, NULL, NULL);
    printf("lock.registrations.unlocked_gone=%d\n", info.type == HSA_EXT_POINTER_TYPE_UNKNOWN);
  }

  // A locked range its owner unmaps without an unlock (clr caches pinned staging ranges past
  // the program's free): the host may hand those addresses out again, as device memory here,
  // and the lock must not stand in the way; its unlock later succeeds.
  size_t big = 4u << 20;
  int lock_ok = 1, alloc_ok = 1, reused = 0, unlock_ok = 1;
  for (int round = 0; round < 4; round++) {
    void* m = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | 0x20 /* MAP_ANONYMOUS: not in POSIX 2008 */, -1, 0);
    void* agent_m = NULL;
    if (m == MAP_FAILED || hsa_amd_memory_lock(m, big, &gpu, 1, &agent_m) != HSA_STATUS_SUCCESS) lock_ok = 0;
    munmap(m, big);
    void* d = NULL;
    if (hsa_amd_memory_pool_allocate(gpu_pool, big, 0, &d) != HSA_STATUS_SUCCESS) alloc_ok = 0;
    if (d && (char*)d < (char*)m + big && (char*)m < (char*)d + big) reused = 1;
    if (hsa_amd_memory_unlock(m) != HSA_STATUS_SUCCESS) unlock_ok = 0;
    if (d) hsa_amd_memory_pool_free(d);
  }
  printf("stale_lock.lock=%d\n", lock_ok);
  printf("stale_lock.device_alloc=%d\n", alloc_ok);
  printf("stale_lock.unlock=%d\n", unlock_ok);
  fprintf(stderr, "stale_lock: the host reused the unmapped addresses: %d\n", reused);

  // Signals.
  hsa_signal_t s_int, s_gpu;
  hsa_signal_create(5, 0, NULL, &s_int);
  hsa_signal_create(5, 1, &gpu, &s_gpu);
  hsa_signal_value_t* vp = NULL;
  printf("value_pointer.interrupt.status=%d\n", hsa_amd_signal_value_pointer(s_int, (volatile hsa_signal_value_t**)&vp));
  printf("value_pointer.default.status=%d\n", hsa_amd_signal_value_pointer(s_gpu, (volatile hsa_signal_value_t**)&vp));
  printf("value_pointer.at_handle_plus_8=%d\n", vp && (uintptr_t)vp == s_gpu.handle + 8 && *vp == 5);
  printf("handle.value_at_plus_8=%d\n", *(int64_t*)(uintptr_t)(s_int.handle + 8) == 5);
  // amd_signal_t's event_mailbox_ptr (offset 16): an interrupt signal's event slot, none for a
  // default signal.
  printf("mailbox.interrupt=%d\n", *(uint64_t*)(uintptr_t)(s_int.handle + 16) != 0);
  printf("mailbox.default=%d\n", *(uint64_t*)(uintptr_t)(s_gpu.handle + 16) != 0);
  printf("async_handler.default.status=%d\n", hsa_amd_signal_async_handler(s_gpu, HSA_SIGNAL_CONDITION_LT, 1, on_signal, NULL));
  printf("async_handler.interrupt.status=%d\n", hsa_amd_signal_async_handler(s_int, HSA_SIGNAL_CONDITION_LT, 1, on_signal, NULL));
  hsa_signal_store_screlease(s_int, 0);
  for (int i = 0; i < 2000 && !handled; i++) {
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
  }
  printf("async_handler.ran_with=%d\n", handled);

  // Queues.
  hsa_queue_t* q = NULL;
  hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q);
  printf("priority_high.status=%d\n", hsa_amd_queue_set_priority(q, HSA_AMD_QUEUE_PRIORITY_HIGH));
  printf("priority_bad.status=%d\n", hsa_amd_queue_set_priority(q, (hsa_amd_queue_priority_t)7));
  uint32_t mask[4] = {0x0f0f0f0f, 0xffffffff, 0xffffffff, 0xffffffff}, back[4];
  printf("cu_mask_odd.status=%d\n", hsa_amd_queue_cu_set_mask(q, 33, mask));
  printf("cu_mask.status=%d\n", hsa_amd_queue_cu_set_mask(q, 128, mask));
  hsa_amd_queue_cu_get_mask(q, 128, back);
  uint32_t expect[4] = {0, 0, 0, 0};
  for (uint32_t i = 0; i < 4; i++)
    for (uint32_t bit = 0; bit < 32; bit++)
      if (i * 32 + bit < cus) expect[i] |= mask[i] & (1u << bit);
  printf("cu_mask.clipped_to_cus=%d\n", memcmp(back, expect, sizeof back) == 0);
  printf("profiler.status=%d\n", hsa_amd_profiling_set_profiler_enabled(q, 1));
  hsa_amd_profiling_dispatch_time_t t = {1, 1};
  printf("dispatch_time.cpu.status=%d\n", hsa_amd_profiling_get_dispatch_time(cpu, s_int, &t));
  hsa_amd_profiling_async_copy_time_t ct;
  printf("copy_time.none.status=%d\n", hsa_amd_profiling_get_async_copy_time(s_int, &ct));
  hsa_queue_destroy(q);

  // Images: ROCr with its image library disabled.
  hsa_ext_sampler_descriptor_t sd = {0};
  hsa_ext_sampler_t sampler;
  printf("sampler_create.status=%d\n", hsa_ext_sampler_create(gpu, &sd, &sampler));

  hsa_signal_destroy(s_int);
  hsa_signal_destroy(s_gpu);
  hsa_shut_down();
  printf("done=1\n");
  return 0;
}
