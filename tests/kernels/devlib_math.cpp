// Bare code object exporting device functions (default visibility) for
// cross-code-object linking tests. Built with --target=amdgcn-amd-amdhsa.
extern "C" __attribute__((noinline, visibility("default"))) int dl_add(int a, int b) { return a + b; }
extern "C" __attribute__((noinline, visibility("default"))) float dl_scale(float x) { return x * 2.5f; }
// C++ name, so the loader's demangling is exercised: _ZN2dl3mixEif.
namespace dl {
__attribute__((noinline, visibility("default"))) int mix(int a, float b) { return a * (int)b + 1; }
}
