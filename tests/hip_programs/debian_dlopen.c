/* dlopens a real AMD-built HIP library (Debian's librocsparse.so.0, librocrand.so.1) with
 * librocload.so standing in for libamdhip64.so.5 (tests/debian_libraries.rs puts a
 * libamdhip64.so.5 symlink first on LD_LIBRARY_PATH), then asks for the attributes of every
 * kernel the library's constructors registered, on every device.
 *
 *   debian_dlopen LIBRARY
 *
 * This program is not linked against any HIP library. It defines __hipRegisterFatBinary and
 * __hipRegisterFunction itself and exports them (-rdynamic): the dynamic linker binds the
 * library's calls to these first, and they record what is registered before forwarding to
 * librocload's, found through the libamdhip64.so.5 handle. The library is opened with
 * RTLD_LAZY: it imports functions librocload.so does not define (hipMemcpy2D, ...), which
 * RTLD_NOW would refuse to resolve; none of them is called here.
 *
 * Output: "fat_binaries N kernels K devices D", then per device "device I NAME: ok K failed F"
 * and the first failures with rocload's message. Exit 1 if any query failed. */
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void **(*register_fat_binary_fn)(const void *);
typedef void (*register_function_fn)(void **, const void *, char *, const char *, unsigned,
                                     void *, void *, dim3 *, dim3 *, int *);

static void *hip;
static long fat_binaries, kernels, capacity;
static struct { const void *stub; const char *name; } *registered;

static void *real(const char *name) {
    if (!hip) hip = dlopen("libamdhip64.so.5", RTLD_LAZY | RTLD_NOLOAD);
    void *f = hip ? dlsym(hip, name) : NULL;
    if (!f) { fprintf(stderr, "cannot find %s in libamdhip64.so.5: %s\n", name, dlerror()); exit(2); }
    return f;
}

void **__hipRegisterFatBinary(const void *data) {
    fat_binaries++;
    return ((register_fat_binary_fn)real("__hipRegisterFatBinary"))(data);
}

void __hipRegisterFunction(void **modules, const void *host_function, char *device_function,
                           const char *device_name, unsigned thread_limit, void *tid, void *bid,
                           dim3 *block_dim, dim3 *grid_dim, int *w_size) {
    if (kernels == capacity) {
        capacity = capacity ? capacity * 2 : 1024;
        registered = realloc(registered, capacity * sizeof *registered);
        if (!registered) { perror("realloc"); exit(2); }
    }
    registered[kernels].stub = host_function;
    registered[kernels].name = device_name;
    kernels++;
    ((register_function_fn)real("__hipRegisterFunction"))(modules, host_function, device_function,
                                                          device_name, thread_limit, tid, bid,
                                                          block_dim, grid_dim, w_size);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: debian_dlopen LIBRARY\n"); return 2; }
    void *lib = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror()); return 2; }
    hipError_t (*get_count)(int *) = real("hipGetDeviceCount");
    hipError_t (*set_device)(int) = real("hipSetDevice");
    hipError_t (*get_props)(hipDeviceProp_t *, int) = real("hipGetDeviceProperties");
    hipError_t (*attributes)(hipFuncAttributes *, const void *) = real("hipFuncGetAttributes");
    const char *(*error_name)(hipError_t) = real("hipGetErrorName");
    size_t (*message)(char *, size_t) = real("rocload_last_error_message");
    int count = 0;
    hipError_t e = get_count(&count);
    printf("fat_binaries %ld kernels %ld devices %d\n", fat_binaries, kernels, count);
    if (e != hipSuccess || count == 0) { printf("hipGetDeviceCount: %s\n", error_name(e)); return 1; }
    int failed_any = 0;
    for (int d = 0; d < count; d++) {
        hipDeviceProp_t props;
        memset(&props, 0, sizeof props);
        set_device(d);
        get_props(&props, d);
        long ok = 0, failed = 0;
        for (long k = 0; k < kernels; k++) {
            hipFuncAttributes a;
            e = attributes(&a, registered[k].stub);
            if (e == hipSuccess && a.maxThreadsPerBlock > 0) { ok++; continue; }
            if (failed++ < 5) {
                char text[2048] = "";
                message(text, sizeof text);
                printf("  %s: %s: %s\n", registered[k].name, error_name(e), text);
            }
        }
        printf("device %d %s: ok %ld failed %ld\n", d, props.gcnArchName, ok, failed);
        failed_any |= failed != 0;
    }
    return failed_any;
}
