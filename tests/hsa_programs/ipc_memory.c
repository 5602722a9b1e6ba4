// IPC memory through the HSA runtime as ROCr 5.2.3 defines it (Runtime::IPCCreate, IPCAttach,
// IPCDetach): the parent makes a handle for a GPU-pool allocation, a second process (this
// program run again with the handle) attaches it, checks what the parent wrote and writes its
// own pattern, which the parent then reads. Prints `key=value` lines for tests/hsa_soft.rs.
//   ipc_memory                parent
//   ipc_memory child HEX      child: HEX is the 32-byte handle
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static hsa_agent_t gpu;
static hsa_amd_memory_pool_t gpu_pool;
enum { N = 1000 };  // bytes written; the allocation is 4000

static hsa_status_t find_gpu(hsa_agent_t a, void* d) {
  (void)d;
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU && !gpu.handle) gpu = a;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pool(hsa_amd_memory_pool_t p, void* d) {
  (void)d;
  hsa_amd_segment_t seg;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
  if (seg == HSA_AMD_SEGMENT_GLOBAL && !gpu_pool.handle) gpu_pool = p;
  return HSA_STATUS_SUCCESS;
}

static int child(const char* hex) {
  hsa_amd_ipc_memory_t h;
  for (int i = 0; i < 32; i++) {
    unsigned b;
    if (sscanf(hex + 2 * i, "%2x", &b) != 1) return 4;
    ((uint8_t*)&h)[i] = (uint8_t)b;
  }
  void* p = NULL;
  hsa_status_t st = hsa_amd_ipc_memory_attach(&h, 4096, 1, &gpu, &p);
  printf("child.attach.status=%d\n", st);
  if (st != HSA_STATUS_SUCCESS) return 5;
  uint8_t got[N], mine[N];
  hsa_memory_copy(got, p, N);
  int same = 1;
  for (int i = 0; i < N; i++) {
    if (got[i] != (uint8_t)(i * 7 + 3)) same = 0;
    mine[i] = (uint8_t)(i * 11 + 5);
  }
  printf("child.reads_parent=%d\n", same);
  hsa_memory_copy(p, mine, N);
  printf("child.detach.status=%d\n", hsa_amd_ipc_memory_detach(p));
  return 0;
}

int main(int argc, char** argv) {
  if (hsa_init() != HSA_STATUS_SUCCESS) return 2;
  hsa_iterate_agents(find_gpu, NULL);
  if (!gpu.handle) return 3;
  hsa_amd_agent_iterate_memory_pools(gpu, find_pool, NULL);
  if (argc == 3 && strcmp(argv[1], "child") == 0) {
    int r = child(argv[2]);
    hsa_shut_down();
    return r;
  }
  void* p = NULL;
  if (hsa_amd_memory_pool_allocate(gpu_pool, 4000, 0, &p) != HSA_STATUS_SUCCESS) return 3;
  uint8_t pattern[N];
  for (int i = 0; i < N; i++) pattern[i] = (uint8_t)(i * 7 + 3);
  hsa_memory_copy(p, pattern, N);
  hsa_amd_ipc_memory_t h;
  // ROCr: the whole allocation, by its start and the size pointer info reports (page-rounded).
  printf("create.wrong_len.status=%d\n", hsa_amd_ipc_memory_create(p, 4000, &h));
  printf("create.interior.status=%d\n", hsa_amd_ipc_memory_create((char*)p + 64, 4096, &h));
  printf("create.status=%d\n", hsa_amd_ipc_memory_create(p, 4096, &h));
  int local = 0;
  printf("detach.unknown.status=%d\n", hsa_amd_ipc_memory_detach(&local));
  // Attached in this process too: the same bytes at another address.
  void* same = NULL;
  printf("attach.self.status=%d\n", hsa_amd_ipc_memory_attach(&h, 4096, 0, NULL, &same));
  uint8_t back[N];
  if (same) hsa_memory_copy(back, same, N);
  printf("attach.self.same_bytes=%d\n", same && same != p && memcmp(back, pattern, N) == 0);
  if (same) printf("detach.self.status=%d\n", hsa_amd_ipc_memory_detach(same));

  char hex[65];
  for (int i = 0; i < 32; i++) sprintf(hex + 2 * i, "%02x", ((uint8_t*)&h)[i]);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], "child", hex, (char*)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child.exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  hsa_memory_copy(back, p, N);
  int wrote = 1;
  for (int i = 0; i < N; i++)
    if (back[i] != (uint8_t)(i * 11 + 5)) wrote = 0;
  printf("parent.sees_child=%d\n", wrote);
  hsa_amd_memory_pool_free(p);
  hsa_shut_down();
  printf("done=1\n");
  return 0;
}
