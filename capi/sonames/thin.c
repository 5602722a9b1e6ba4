/* One soname of AMD's HIP runtime (libamdhip64.so.N, libhiprtc.so.N) over librocload.so: no
 * code but this constructor, every version node HIP's binaries ask for (so the dynamic loader
 * accepts the soname), and librocload.so as its dependency, where every symbol is found. The
 * constructor tells the runtime which HIP generation was asked for, so that the few names whose
 * behaviour differs between generations follow the caller's (see docs/runtime.md). Built by
 * capi/build.rs; ROCLOAD_GENERATION and ROCLOAD_LIBRARY are given on the compiler's command line. */
extern void rocload_hip_generation(int generation, const char *library);

__attribute__((constructor)) static void rocload_announce(void) {
  rocload_hip_generation(ROCLOAD_GENERATION, ROCLOAD_LIBRARY);
}
