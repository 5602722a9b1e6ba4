// Runtime compilation (hiprtc): a kernel template compiled from source at run time, with a
// header handed to the compiler in memory, an option defining a macro, a name expression
// lowered to the template instance's mangled name, then loaded and launched through the module
// API and checked against the host. Also: a program that does not compile fails with
// HIPRTC_ERROR_COMPILATION and a log naming the error. And runtime linking (HIP 5.3's
// hiprtcLink*, not in Debian's 5.2.3 header, so declared here): two programs compiled with
// -fgpu-rdc to bitcode, a kernel in one calling a device function of the other, linked into one
// code object that is loaded, launched and checked against the host. And name expressions of
// a template instance over a nested template, spelt `>>` and `> >` (C++ ignores the space):
// both lower to the same kernel, which runs and is checked against the host.
#include "check.h"
#include <hip/hiprtc.h>
#include <string>
#include <vector>

extern "C" {
hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram, size_t*);
hiprtcResult hiprtcGetBitcode(hiprtcProgram, char*);
hiprtcResult hiprtcLinkCreate(unsigned, unsigned*, void**, void**);
hiprtcResult hiprtcLinkAddData(void*, unsigned, void*, size_t, const char*, unsigned, unsigned*,
                               void**);
hiprtcResult hiprtcLinkComplete(void*, void**, size_t*);
hiprtcResult hiprtcLinkDestroy(void*);
}
static const unsigned kInputLLVMBitcode = 100;

static const char* kUser = R"(
extern "C" __device__ float blend(float a, float b);
extern "C" __global__ void use_blend(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = blend(out[i], in[i]);
}
)";
static const char* kLibrary = R"(
extern "C" __device__ float blend(float a, float b) { return 0.25f * a + 0.75f * b + 1.0f; }
)";

// Compiles `source` with -fgpu-rdc; its bitcode.
static std::vector<char> rdc_bitcode(const char* source, const char* name, const char* arch) {
  hiprtcProgram p;
  std::vector<char> bitcode;
  if (hiprtcCreateProgram(&p, source, name, 0, nullptr, nullptr) != HIPRTC_SUCCESS) return bitcode;
  const char* options[] = {arch, "-fgpu-rdc"};
  if (hiprtcCompileProgram(p, 2, options) == HIPRTC_SUCCESS) {
    size_t size = 0;
    hiprtcGetBitcodeSize(p, &size);
    bitcode.resize(size);
    if (size == 0 || hiprtcGetBitcode(p, bitcode.data()) != HIPRTC_SUCCESS) bitcode.clear();
  }
  hiprtcDestroyProgram(&p);
  return bitcode;
}

static void linked_programs(const std::string& arch) {
  std::vector<char> user = rdc_bitcode(kUser, "user.hip", arch.c_str());
  std::vector<char> library = rdc_bitcode(kLibrary, "library.hip", arch.c_str());
  report("-fgpu-rdc gives bitcode", user.size() > 4 && library.size() > 4 &&
                                        memcmp(user.data(), "BC", 2) == 0);
  void* link = nullptr;
  report("hiprtcLinkCreate", hiprtcLinkCreate(0, nullptr, nullptr, &link) == HIPRTC_SUCCESS);
  report("hiprtcLinkAddData (user)",
         hiprtcLinkAddData(link, kInputLLVMBitcode, user.data(), user.size(), "user", 0, nullptr,
                           nullptr) == HIPRTC_SUCCESS);
  report("hiprtcLinkAddData (library)",
         hiprtcLinkAddData(link, kInputLLVMBitcode, library.data(), library.size(), "library", 0,
                           nullptr, nullptr) == HIPRTC_SUCCESS);
  void* binary = nullptr;
  size_t size = 0;
  report("hiprtcLinkComplete",
         hiprtcLinkComplete(link, &binary, &size) == HIPRTC_SUCCESS && binary && size > 0);
  hipModule_t module;
  hipFunction_t f;
  HIP_CHECK(hipModuleLoadData(&module, binary));
  HIP_CHECK(hipModuleGetFunction(&f, module, "use_blend"));
  const int n = 300;
  std::vector<float> out(n), in(n), want(n);
  for (int i = 0; i < n; i++) {
    out[i] = i * 2.0f;
    in[i] = 50.0f - i;
    want[i] = 0.25f * out[i] + 0.75f * in[i] + 1.0f;
  }
  float *d_out, *d_in;
  HIP_CHECK(hipMalloc(&d_out, n * 4));
  HIP_CHECK(hipMalloc(&d_in, n * 4));
  HIP_CHECK(hipMemcpy(d_out, out.data(), n * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(d_in, in.data(), n * 4, hipMemcpyHostToDevice));
  int count = n;
  void* args[] = {&d_out, &d_in, &count};
  HIP_CHECK(hipModuleLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
  HIP_CHECK(hipMemcpy(out.data(), d_out, n * 4, hipMemcpyDeviceToHost));
  bool same = true;
  for (int i = 0; i < n; i++) same = same && fabsf(out[i] - want[i]) <= 1e-5f * fabsf(want[i]);
  report("the linked kernel matches the host", same);
  HIP_CHECK(hipFree(d_out));
  HIP_CHECK(hipFree(d_in));
  HIP_CHECK(hipModuleUnload(module));
  report("hiprtcLinkDestroy", hiprtcLinkDestroy(link) == HIPRTC_SUCCESS);
  report("a destroyed link state is refused", hiprtcLinkDestroy(link) != HIPRTC_SUCCESS);
}

static const char* kSource = R"(
#include "scale.h"
template <typename T>
__global__ void scaled_add(T* out, const T* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = out[i] * SCALE + in[i] + OFFSET;
}
)";
static const char* kHeader = "#pragma once\n#define SCALE 3\n";

static const char* kNested = R"(
template <typename T> struct wrap { T v; };
template <typename T>
__global__ void fill_nested(T* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i].v.v = 3 * i + 1;
}
)";

static void nested_template_names(const std::string& arch) {
  hiprtcProgram p;
  hiprtcCreateProgram(&p, kNested, "nested.hip", 0, nullptr, nullptr);
  const char* tight = "fill_nested<wrap<wrap<int>>>";
  const char* spaced = "fill_nested<wrap<wrap<int> > >";
  report("name expressions spelt >> and > >",
         hiprtcAddNameExpression(p, tight) == HIPRTC_SUCCESS &&
             hiprtcAddNameExpression(p, spaced) == HIPRTC_SUCCESS);
  const char* options[] = {arch.c_str()};
  report("the nested template compiles", hiprtcCompileProgram(p, 1, options) == HIPRTC_SUCCESS);
  const char *a = nullptr, *b = nullptr;
  hiprtcResult ra = hiprtcGetLoweredName(p, tight, &a);
  hiprtcResult rb = hiprtcGetLoweredName(p, spaced, &b);
  report("both spellings lower to one mangled name",
         ra == HIPRTC_SUCCESS && rb == HIPRTC_SUCCESS && a && b && strcmp(a, b) == 0 &&
             strncmp(a, "_Z", 2) == 0,
         a ? a : "(none)");
  std::string kernel = a ? a : "";
  size_t size = 0;
  hiprtcGetCodeSize(p, &size);
  std::vector<char> code(size);
  if (size) hiprtcGetCode(p, code.data());
  hiprtcDestroyProgram(&p);
  if (kernel.empty() || size == 0) return;
  hipModule_t module;
  hipFunction_t f;
  HIP_CHECK(hipModuleLoadData(&module, code.data()));
  HIP_CHECK(hipModuleGetFunction(&f, module, kernel.c_str()));
  const int n = 200;
  int* d;
  HIP_CHECK(hipMalloc(&d, n * sizeof(int)));
  HIP_CHECK(hipMemset(d, 0, n * sizeof(int)));
  int count = n;
  void* args[] = {&d, &count};
  HIP_CHECK(hipModuleLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  std::vector<int> got(n);
  HIP_CHECK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
  bool same = true;
  for (int i = 0; i < n; i++) same = same && got[i] == 3 * i + 1;
  report("the kernel named by the lowered name matches the host", same);
  HIP_CHECK(hipFree(d));
  HIP_CHECK(hipModuleUnload(module));
}

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
  linked_programs(arch);
  nested_template_names(arch);
  return finish();
}
