// Runtime compilation (hiprtc): a kernel template compiled from source at run time, with a
// header handed to the compiler in memory, an option defining a macro, a name expression
// lowered to the template instance's mangled name, then loaded and launched through the module
// API and checked against the host. Also: a program that does not compile fails with
// HIPRTC_ERROR_COMPILATION and a log naming the error.
#include "check.h"
#include <hip/hiprtc.h>
#include <string>
#include <vector>

static const char* kSource = R"(
#include "scale.h"
template <typename T>
__global__ void scaled_add(T* out, const T* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = out[i] * SCALE + in[i] + OFFSET;
}
)";
static const char* kHeader = "#pragma once\n#define SCALE 3\n";

int main() {
  int major = 0, minor = 0;
  report("hiprtcVersion", hiprtcVersion(&major, &minor) == HIPRTC_SUCCESS && major >= 5);
  hiprtcProgram prog;
  const char* headers[] = {kHeader};
  const char* names[] = {"scale.h"};
  report("hiprtcCreateProgram",
         hiprtcCreateProgram(&prog, kSource, "scaled_add.hip", 1, headers, names) == HIPRTC_SUCCESS);
  report("hiprtcAddNameExpression",
         hiprtcAddNameExpression(prog, "scaled_add<float>") == HIPRTC_SUCCESS);
  hipDeviceProp_t props;
  HIP_CHECK(hipGetDeviceProperties(&props, 0));
  std::string arch = std::string("--gpu-architecture=") + props.gcnArchName;
  const char* options[] = {arch.c_str(), "-DOFFSET=7"};
  hiprtcResult compiled = hiprtcCompileProgram(prog, 2, options);
  size_t log_size = 0;
  hiprtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) hiprtcGetProgramLog(prog, &log[0]);
  report("hiprtcCompileProgram", compiled == HIPRTC_SUCCESS, log.c_str());
  const char* lowered = nullptr;
  report("hiprtcGetLoweredName",
         hiprtcGetLoweredName(prog, "scaled_add<float>", &lowered) == HIPRTC_SUCCESS && lowered &&
             strncmp(lowered, "_Z", 2) == 0);
  size_t size = 0;
  hiprtcGetCodeSize(prog, &size);
  std::vector<char> code(size);
  report("hiprtcGetCode", size > 0 && hiprtcGetCode(prog, code.data()) == HIPRTC_SUCCESS);
  std::string kernel = lowered ? lowered : "";
  report("hiprtcDestroyProgram", hiprtcDestroyProgram(&prog) == HIPRTC_SUCCESS);

  hipModule_t module;
  hipFunction_t f;
  HIP_CHECK(hipModuleLoadData(&module, code.data()));
  HIP_CHECK(hipModuleGetFunction(&f, module, kernel.c_str()));
  const int n = 1000;
  std::vector<float> out(n), in(n), want(n);
  for (int i = 0; i < n; i++) {
    out[i] = i * 0.5f;
    in[i] = 1000.0f - i;
    want[i] = out[i] * 3 + in[i] + 7;
  }
  float *d_out, *d_in;
  HIP_CHECK(hipMalloc(&d_out, n * 4));
  HIP_CHECK(hipMalloc(&d_in, n * 4));
  HIP_CHECK(hipMemcpy(d_out, out.data(), n * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(d_in, in.data(), n * 4, hipMemcpyHostToDevice));
  int count = n;
  void* args[] = {&d_out, &d_in, &count};
  HIP_CHECK(hipModuleLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  HIP_CHECK(hipMemcpy(out.data(), d_out, n * 4, hipMemcpyDeviceToHost));
  report("the compiled kernel matches the host", out == want);
  HIP_CHECK(hipFree(d_out));
  HIP_CHECK(hipFree(d_in));
  HIP_CHECK(hipModuleUnload(module));

  hiprtcProgram bad;
  hiprtcCreateProgram(&bad, "__global__ void k() { undeclared_thing(); }", "bad.hip", 0, nullptr,
                      nullptr);
  hiprtcResult r = hiprtcCompileProgram(bad, 0, nullptr);
  hiprtcGetProgramLogSize(bad, &log_size);
  std::string bad_log(log_size, '\0');
  if (log_size) hiprtcGetProgramLog(bad, &bad_log[0]);
  report("a program that does not compile fails with its log",
         r == HIPRTC_ERROR_COMPILATION && bad_log.find("undeclared_thing") != std::string::npos &&
             bad_log.find("bad.hip") != std::string::npos,
         bad_log.c_str());
  hiprtcDestroyProgram(&bad);
  return finish();
}
