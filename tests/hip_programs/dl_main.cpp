// Host-only program: dlopens libtwo.so (two HIP translation units, two fat binaries), queries
// both, dlcloses it (its destructors unregister the fat binaries), checks that the stale
// kernel handle is now an error rather than a crash, and does it all again.
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <rocload.h>
#include <cstdio>

typedef int (*query_a_t)(const void**, int*, int*);
typedef int (*query_b_t)(const void**, int*, double*);

static void stats(const char* when) {
  rocload_stats_t s;
  rocload_stats(&s);
  printf("stats_%s registered=%llu loads=%llu\n", when, (unsigned long long)s.registered, (unsigned long long)s.loads);
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: dl_main LIB\n"); return 2; }
  for (int round = 0; round < 2; ++round) {
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { printf("dlopen_failed %s\n", dlerror()); return 1; }
    stats("after_dlopen");
    query_a_t qa = (query_a_t)dlsym(lib, "lib_a_query");
    query_b_t qb = (query_b_t)dlsym(lib, "lib_b_query");
    const void *ka = nullptr, *kb = nullptr;
    int ta = 0, tb = 0, va = 0;
    double vb = 0;
    int ra = qa(&ka, &ta, &va);
    int rb = qb(&kb, &tb, &vb);
    printf("round %d a status=%d max_threads=%d value=%d\n", round, ra, ta, va);
    printf("round %d b status=%d max_threads=%d value=%g\n", round, rb, tb, vb);
    stats("after_queries");
    if (dlclose(lib) != 0) { printf("dlclose_failed %s\n", dlerror()); return 1; }
    hipFuncAttributes attr;
    hipError_t e = hipFuncGetAttributes(&attr, ka);
    printf("round %d after_dlclose status=%d\n", round, (int)e);
  }
  return 0;
}
