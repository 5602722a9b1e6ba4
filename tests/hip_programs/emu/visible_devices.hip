// HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES as HIP reads them: when it
// initialises (the first device use), so a child forked before any HIP call can set them. Each
// case runs in a forked child that sets the variables, counts devices and tries device 0; the
// parent never uses a device. Lists are read up to the first invalid entry (clr's rule); no
// visible device makes hipGetDeviceCount and hipGetDevice fail with hipErrorNoDevice, and a
// kernel runs on what is visible. Run with one device and with two
// (ROCLOAD_SOFT_ISA=gfx1030,gfx1030).
#include "check.h"
#include <sys/wait.h>
#include <unistd.h>
#include <string>

__global__ void add_one(int* p) { *p += 1; }

// What a child saw, packed in its exit status: device count + 1 (0: hipErrorNoDevice), plus 16
// when hipGetDevice failed with hipErrorNoDevice, plus 32 when a kernel ran on device 0.
static int child(const char* hip, const char* cuda, const char* rocr) {
  unsetenv("HIP_VISIBLE_DEVICES");
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("ROCR_VISIBLE_DEVICES");
  if (hip) setenv("HIP_VISIBLE_DEVICES", hip, 1);
  if (cuda) setenv("CUDA_VISIBLE_DEVICES", cuda, 1);
  if (rocr) setenv("ROCR_VISIBLE_DEVICES", rocr, 1);
  int n = -1, status = 0;
  hipError_t e = hipGetDeviceCount(&n);
  if (e == hipSuccess) status = n + 1;
  else if (e != hipErrorNoDevice) return 100;
  int d = -1;
  if (hipGetDevice(&d) == hipErrorNoDevice) status += 16;
  if (e == hipSuccess && n > 0) {
    int* p = nullptr;
    if (hipMallocManaged(&p, sizeof(int)) == hipSuccess) {
      *p = 41;
      add_one<<<1, 1>>>(p);
      if (hipDeviceSynchronize() == hipSuccess && *p == 42) status += 32;
      hipFree(p);
    }
  }
  return status;
}

static int run(const char* hip, const char* cuda, const char* rocr) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) _exit(child(hip, cuda, rocr));
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

static void expect(const char* what, const char* hip, const char* cuda, const char* rocr,
                   int devices) {
  int got = run(hip, cuda, rocr);
  // Devices visible: the count, hipGetDevice works, a kernel runs; none: both calls fail.
  int want = devices > 0 ? devices + 1 + 32 : 16;
  std::string detail = "status " + std::to_string(got) + ", expected " + std::to_string(want);
  report(what, got == want, detail.c_str());
}

int main() {
  int all = run(nullptr, nullptr, nullptr) - 1 - 32;
  report("without the variables every device is visible", all >= 1);
  if (all < 1) return finish();
  expect("HIP_VISIBLE_DEVICES=0", "0", nullptr, nullptr, 1);
  expect("HIP_VISIBLE_DEVICES=0,0 (repeats count once)", "0,0", nullptr, nullptr, 1);
  expect("HIP_VISIBLE_DEVICES=-1", "-1", nullptr, nullptr, 0);
  expect("HIP_VISIBLE_DEVICES past the last device", std::to_string(all).c_str(), nullptr,
         nullptr, 0);
  expect("HIP_VISIBLE_DEVICES=0,junk (read up to the first invalid entry)", "0,junk", nullptr,
         nullptr, 1);
  expect("CUDA_VISIBLE_DEVICES=-1", nullptr, "-1", nullptr, 0);
  expect("HIP_VISIBLE_DEVICES wins over CUDA_VISIBLE_DEVICES", "0", "-1", nullptr, 1);
  expect("ROCR_VISIBLE_DEVICES=-1", nullptr, nullptr, "-1", 0);
  expect("ROCR_VISIBLE_DEVICES=0", nullptr, nullptr, "0", 1);
  expect("an empty HIP_VISIBLE_DEVICES is unset", "", nullptr, nullptr, all);
  if (all >= 2) {
    expect("HIP_VISIBLE_DEVICES=1,0", "1,0", nullptr, nullptr, 2);
    expect("HIP_VISIBLE_DEVICES=1", "1", nullptr, nullptr, 1);
    // HIP's list indexes what ROCr left: ROCr keeps device 1 only, so HIP's 1 is past it.
    expect("HIP_VISIBLE_DEVICES=1 over ROCR_VISIBLE_DEVICES=1", "1", nullptr, "1", 0);
    expect("HIP_VISIBLE_DEVICES=0 over ROCR_VISIBLE_DEVICES=1", "0", nullptr, "1", 1);
  }
  return finish();
}
