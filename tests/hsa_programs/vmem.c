// ROCr 6's virtual memory API (hsa_amd_vmem_*) and IPC signals through the HSA API, each call's
// status as ROCr 6.2 answers it (core/runtime/runtime.cpp VMemory*, hsa_ext_amd.cpp), and the
// memory shared with a second process: this program run again as `vmem child FD HANDLE`
// imports the exported physical memory from an inherited descriptor, reads what the parent
// wrote and writes its own, and attaches the parent's IPC signal and decrements it. Prints
// `key=value` lines for tests/hsa_soft.rs. With `vmem unsupported` it checks ROCr 5.2.3's
// answers instead (no virtual memory API). The vmem functions are not in Debian's 5.2.3
// headers or library: they are declared here from rocm-6.2.0's hsa_ext_amd.h and found with
// dlsym.
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct { uint64_t handle; } vmem_handle_t;
typedef struct { hsa_access_permission_t permissions; hsa_agent_t agent_handle; } access_desc_t;
enum { MEMORY_TYPE_NONE_, MEMORY_TYPE_PINNED_ };
#define PERM_NONE 0
#define VIRTUAL_MEM_API_SUPPORTED 0x205

static hsa_status_t (*reserve)(void**, size_t, uint64_t, uint64_t);
static hsa_status_t (*address_free)(void*, size_t);
static hsa_status_t (*handle_create)(hsa_amd_memory_pool_t, size_t, int, uint64_t, vmem_handle_t*);
static hsa_status_t (*handle_release)(vmem_handle_t);
static hsa_status_t (*map)(void*, size_t, size_t, vmem_handle_t, uint64_t);
static hsa_status_t (*unmap)(void*, size_t);
static hsa_status_t (*set_access)(void*, size_t, const access_desc_t*, size_t);
static hsa_status_t (*get_access)(void*, hsa_access_permission_t*, hsa_agent_t);
static hsa_status_t (*export_handle)(int*, vmem_handle_t, uint64_t);
static hsa_status_t (*import_handle)(int, vmem_handle_t*);
static hsa_status_t (*retain)(vmem_handle_t*, void*);
static hsa_status_t (*properties)(vmem_handle_t, hsa_amd_memory_pool_t*, int*);

static hsa_agent_t gpu, cpu;
static hsa_amd_memory_pool_t device_pool, fine_pool;

static hsa_status_t find_pools(hsa_amd_memory_pool_t p, void* d) {
  int is_gpu = *(int*)d;
  uint32_t flags = 0;
  bool alloc = false;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc);
  if (!alloc) return HSA_STATUS_SUCCESS;
  if (is_gpu && !device_pool.handle) device_pool = p;
  if (!is_gpu && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) &&
      !(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && !fine_pool.handle)
    fine_pool = p;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_agents(hsa_agent_t a, void* d) {
  (void)d;
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  int is_gpu = t == HSA_DEVICE_TYPE_GPU;
  if (is_gpu && !gpu.handle) gpu = a;
  if (!is_gpu && !cpu.handle) cpu = a;
  hsa_amd_agent_iterate_memory_pools(a, find_pools, &is_gpu);
  return HSA_STATUS_SUCCESS;
}

static void* sym(const char* name) {
  void* f = dlsym(RTLD_DEFAULT, name);
  if (!f) {
    printf("missing=%s\n", name);
    exit(4);
  }
  return f;
}

static void load(void) {
  *(void**)&reserve = sym("hsa_amd_vmem_address_reserve");
  *(void**)&address_free = sym("hsa_amd_vmem_address_free");
  *(void**)&handle_create = sym("hsa_amd_vmem_handle_create");
  *(void**)&handle_release = sym("hsa_amd_vmem_handle_release");
  *(void**)&map = sym("hsa_amd_vmem_map");
  *(void**)&unmap = sym("hsa_amd_vmem_unmap");
  *(void**)&set_access = sym("hsa_amd_vmem_set_access");
  *(void**)&get_access = sym("hsa_amd_vmem_get_access");
  *(void**)&export_handle = sym("hsa_amd_vmem_export_shareable_handle");
  *(void**)&import_handle = sym("hsa_amd_vmem_import_shareable_handle");
  *(void**)&retain = sym("hsa_amd_vmem_retain_alloc_handle");
  *(void**)&properties = sym("hsa_amd_vmem_get_alloc_properties_from_handle");
}

#define SHOW(key, expr) printf("%s=%d\n", key, (int)(expr))

static int child(int fd, const char* hex) {
  // The parent's physical memory, mapped here; then its IPC signal.
  vmem_handle_t h = {0};
  SHOW("child.import", import_handle(fd, &h));
  void* va = NULL;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  SHOW("child.reserve", reserve(&va, 2 * page, 0, 0));
  SHOW("child.map", map(va, 2 * page, 0, h, 0));
  access_desc_t rw[2] = {{HSA_ACCESS_PERMISSION_RW, gpu}, {HSA_ACCESS_PERMISSION_RW, cpu}};
  SHOW("child.set_access", set_access(va, 2 * page, rw, 2));
  uint32_t seen = 0;
  SHOW("child.copy_out", hsa_memory_copy(&seen, (char*)va + 64, 4));
  SHOW("child.reads_parent", seen == 0xC0FFEE);
  uint32_t mine = 0xBEEF;
  SHOW("child.copy_in", hsa_memory_copy((char*)va + 128, &mine, 4));
  SHOW("child.unmap", unmap(va, 2 * page));
  SHOW("child.release", handle_release(h));
  SHOW("child.free", address_free(va, 2 * page));
  hsa_amd_ipc_signal_t ipc;
  for (int i = 0; i < 8; i++) {
    unsigned w = 0;
    sscanf(hex + 8 * i, "%8x", &w);
    ipc.handle[i] = w;
  }
  hsa_signal_t s = {0};
  SHOW("child.signal_attach", hsa_amd_ipc_signal_attach(&ipc, &s));
  SHOW("child.signal_value", hsa_signal_load_scacquire(s));
  hsa_signal_subtract_screlease(s, 1);
  SHOW("child.signal_destroy", hsa_signal_destroy(s));
  return 0;
}

static int unsupported(void) {
  // ROCr 5.2.3 has none of it: answered as 6.2 answers without the API.
  bool vm = true;
  SHOW("unsupported.system_info", hsa_system_get_info((hsa_system_info_t)VIRTUAL_MEM_API_SUPPORTED, &vm));
  void* va = NULL;
  SHOW("unsupported.reserve", reserve(&va, 4096, 0, 0));
  vmem_handle_t h = {0};
  SHOW("unsupported.handle_create", handle_create(device_pool, 4096, MEMORY_TYPE_PINNED_, 0, &h));
  SHOW("unsupported.release", handle_release(h));
  // IPC signals are 5.2.3's too.
  hsa_signal_t s;
  SHOW("unsupported.ipc_signal", hsa_amd_signal_create(3, 0, NULL, HSA_AMD_SIGNAL_IPC, &s));
  hsa_amd_ipc_signal_t ipc;
  SHOW("unsupported.ipc_signal_create", hsa_amd_ipc_signal_create(s, &ipc));
  hsa_signal_destroy(s);
  return 0;
}

int main(int argc, char** argv) {
  if (hsa_init() != HSA_STATUS_SUCCESS) return 2;
  hsa_iterate_agents(find_agents, NULL);
  if (!gpu.handle || !cpu.handle || !device_pool.handle || !fine_pool.handle) return 3;
  load();
  if (argc == 4 && strcmp(argv[1], "child") == 0) {
    int r = child(atoi(argv[2]), argv[3]);
    hsa_shut_down();
    printf("child.done=1\n");
    return r;
  }
  if (argc == 2 && strcmp(argv[1], "unsupported") == 0) {
    int r = unsupported();
    hsa_shut_down();
    printf("done=1\n");
    return r;
  }

  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  bool vm = false;
  SHOW("system_info", hsa_system_get_info((hsa_system_info_t)VIRTUAL_MEM_API_SUPPORTED, &vm));
  SHOW("system_info.value", vm);

  // Reservations.
  void* base = NULL;
  SHOW("reserve.zero", reserve(&base, 0, 0, 0));
  SHOW("reserve", reserve(&base, 6 * page, 0, 0));
  SHOW("reserve.page_aligned", ((uintptr_t)base % page) == 0);
  char* b = (char*)base;

  // Physical memory.
  vmem_handle_t h = {0}, bad = {0};
  SHOW("create.system_pool", handle_create(fine_pool, 2 * page, MEMORY_TYPE_PINNED_, 0, &bad));
  SHOW("create.partial_page", handle_create(device_pool, page + 100, MEMORY_TYPE_PINNED_, 0, &bad));
  SHOW("create.bad_type", handle_create(device_pool, 2 * page, 7, 0, &bad));
  SHOW("create", handle_create(device_pool, 2 * page, MEMORY_TYPE_PINNED_, 0, &h));
  hsa_amd_memory_pool_t pool = {0};
  int type = -1;
  SHOW("properties", properties(h, &pool, &type));
  SHOW("properties.pool", pool.handle == device_pool.handle);
  SHOW("properties.type", type == MEMORY_TYPE_PINNED_);
  SHOW("properties.unknown", properties(bad, &pool, &type));

  // Mappings: two views of one physical allocation.
  SHOW("map.outside", map(b + 5 * page, 2 * page, 0, h, 0));
  SHOW("map.unknown_handle", map(b, 2 * page, 0, bad, 0));
  SHOW("map.too_large", map(b, 3 * page, 0, h, 0));
  SHOW("map", map(b, 2 * page, 0, h, 0));
  SHOW("map.overlap", map(b + page, 2 * page, 0, h, 0));
  SHOW("map.second", map(b + 2 * page, 2 * page, 0, h, 0));
  SHOW("free.mapped", address_free(base, 6 * page));
  SHOW("free.wrong_size", address_free(base, 5 * page));
  SHOW("free.unknown", address_free(b + page, page));

  // Retained handles.
  vmem_handle_t again = {0};
  SHOW("retain.interior", retain(&again, b + 1));
  SHOW("retain", retain(&again, b + 2 * page));
  SHOW("retain.same", again.handle == h.handle);
  SHOW("retain.release", handle_release(again));

  // Access.
  hsa_access_permission_t perm = (hsa_access_permission_t)99;
  SHOW("get_access.before", get_access(b, &perm, gpu));
  SHOW("get_access.before.value", perm == PERM_NONE);
  SHOW("get_access.cpu", get_access(b, &perm, cpu));
  SHOW("get_access.unmapped", get_access(b + 5 * page, &perm, gpu));
  access_desc_t gpu_rw = {HSA_ACCESS_PERMISSION_RW, gpu};
  access_desc_t bad_agent = {HSA_ACCESS_PERMISSION_RW, {12345}};
  SHOW("set_access.bad_agent", set_access(b, 4 * page, &bad_agent, 1));
  SHOW("set_access.gap", set_access(b, 6 * page, &gpu_rw, 1));
  SHOW("set_access.interior", set_access(b + page, page, &gpu_rw, 1));
  SHOW("set_access", set_access(b, 4 * page, &gpu_rw, 1));
  SHOW("get_access", get_access(b + 3 * page, &perm, gpu));
  SHOW("get_access.value", perm == HSA_ACCESS_PERMISSION_RW);

  // Both views hold the same bytes (copies through the GPU agent's view).
  uint32_t v = 0xC0FFEE, got = 0;
  SHOW("copy_in", hsa_memory_copy(b + 64, &v, 4));
  SHOW("copy_out", hsa_memory_copy(&got, b + 2 * page + 64, 4));
  SHOW("views_share", got == 0xC0FFEE);
  // The CPU agent read-only on the second view: the host reads it.
  access_desc_t cpu_ro = {HSA_ACCESS_PERMISSION_RO, cpu};
  SHOW("set_access.cpu", set_access(b + 2 * page, 2 * page, &cpu_ro, 1));
  SHOW("host_reads", *(volatile uint32_t*)(b + 2 * page + 64) == 0xC0FFEE);

  // Export, import in this process (the same handle), then in a child process.
  int fd = -7;
  SHOW("export.unknown", export_handle(&fd, bad, 0));
  SHOW("export.unknown.fd", fd);
  SHOW("export", export_handle(&fd, h, 0));
  SHOW("export.fd", fd >= 0);
  vmem_handle_t imported = {0};
  SHOW("import.bad_fd", import_handle(-1, &imported));
  int not_memory = open("/dev/null", O_RDONLY);
  SHOW("import.not_memory", import_handle(not_memory, &imported));
  close(not_memory);
  SHOW("import.self", import_handle(fd, &imported));
  SHOW("import.self.same", imported.handle == h.handle);
  SHOW("import.self.release", handle_release(imported));

  // IPC signals.
  hsa_signal_t plain, ipc_sig;
  hsa_signal_create(1, 0, NULL, &plain);
  hsa_amd_ipc_signal_t ipc;
  SHOW("ipc_signal_create.plain", hsa_amd_ipc_signal_create(plain, &ipc));
  SHOW("ipc_signal_create.invalid", hsa_amd_ipc_signal_create((hsa_signal_t){42}, &ipc));
  SHOW("ipc_signal", hsa_amd_signal_create(1, 0, NULL, HSA_AMD_SIGNAL_IPC, &ipc_sig));
  SHOW("ipc_signal_create", hsa_amd_ipc_signal_create(ipc_sig, &ipc));
  volatile hsa_signal_value_t* value = NULL;
  SHOW("ipc_signal.value_pointer", hsa_amd_signal_value_pointer(ipc_sig, &value));
  SHOW("ipc_signal.value_pointer.value", value && *value == 1);
  hsa_amd_ipc_signal_t garbage;
  memset(&garbage, 0x5a, sizeof garbage);
  hsa_signal_t none;
  SHOW("ipc_signal_attach.garbage", hsa_amd_ipc_signal_attach(&garbage, &none));
  hsa_signal_t self;
  SHOW("ipc_signal_attach.self", hsa_amd_ipc_signal_attach(&ipc, &self));
  SHOW("ipc_signal_attach.self.other_handle", self.handle != ipc_sig.handle);
  hsa_signal_add_screlease(self, 5);
  SHOW("ipc_signal_attach.self.shared", hsa_signal_load_scacquire(ipc_sig) == 6);
  hsa_signal_subtract_screlease(self, 5);
  SHOW("ipc_signal_attach.self.destroy", hsa_signal_destroy(self));
  // A memory IPC attach maps the signal's page too, as in ROCr.
  void* page_ptr = NULL;
  SHOW("ipc_memory_attach.signal", hsa_amd_ipc_memory_attach((hsa_amd_ipc_memory_t*)&ipc, page, 0, NULL, &page_ptr));
  if (page_ptr) hsa_amd_ipc_memory_detach(page_ptr);

  char hex[80];
  for (int i = 0; i < 8; i++) sprintf(hex + 8 * i, "%08x", ipc.handle[i]);
  char fdtext[16];
  snprintf(fdtext, sizeof fdtext, "%d", fd);
  fcntl(fd, F_SETFD, 0);  // the child inherits it
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], "child", fdtext, hex, (char*)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  SHOW("child.exit", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
  close(fd);
  got = 0;
  SHOW("copy_out.after_child", hsa_memory_copy(&got, b + 128, 4));
  SHOW("parent.sees_child", got == 0xBEEF);
  SHOW("parent.signal_waited", hsa_signal_wait_scacquire(ipc_sig, HSA_SIGNAL_CONDITION_EQ, 0, 5000000000ull, HSA_WAIT_STATE_BLOCKED) == 0);
  hsa_signal_destroy(ipc_sig);
  hsa_signal_destroy(plain);

  // Unmapping takes every agent's access with it; the handle goes with its last mapping.
  SHOW("unmap.wrong_size", unmap(b, page));
  SHOW("unmap.interior", unmap(b + page, page));
  SHOW("unmap", unmap(b, 2 * page));
  SHOW("get_access.after_unmap", get_access(b, &perm, gpu));
  SHOW("release", handle_release(h));
  SHOW("properties.still_mapped", properties(h, &pool, &type));
  SHOW("unmap.second", unmap(b + 2 * page, 2 * page));
  SHOW("properties.gone", properties(h, &pool, &type));
  SHOW("release.gone", handle_release(h));
  SHOW("free", address_free(base, 6 * page));
  hsa_shut_down();
  printf("done=1\n");
  return 0;
}
