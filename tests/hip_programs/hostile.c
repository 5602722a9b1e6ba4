/* Feeds hostile inputs (scripts/make-hostile.py) to librocload.so's C ABI the way a HIP
 * program would, and prints each call's result. tests/bad_input.rs runs it under a 2 GB
 * address-space limit: whatever the input, the process must end normally (no abort, no
 * SIGSEGV, no heap corruption) with a typed hipError_t.
 *
 *   hostile load-data FILE              hipModuleLoadData on the file's bytes
 *   hostile register FILE KERNEL        __hipRegisterFatBinary + __hipRegisterFunction, then
 *                                       hipFuncGetAttributes (the first use)
 *   hostile managed FILE VARIABLE       also __hipRegisterManagedVar(VARIABLE) before the
 *                                       first use, which points the device variable at the
 *                                       managed memory
 *
 * Output: one line "<call> <hipError name>: <rocload_last_error_message>". */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocload.h"

void **__hipRegisterFatBinary(const void *data);
void __hipRegisterFunction(void **modules, const void *host_function, char *device_function,
                           const char *device_name, unsigned thread_limit, void *tid, void *bid,
                           dim3 *block_dim, dim3 *grid_dim, int *w_size);
void __hipRegisterManagedVar(void *module, void **pointer, void *init_value, const char *name,
                             size_t size, unsigned align);

struct wrapper {
    unsigned magic, version;
    const void *binary, *unused;
};

static void *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = malloc(n ? n : 1);
    if (!data || fread(data, 1, n, f) != (size_t)n) { perror(path); exit(2); }
    fclose(f);
    return data;
}

static void report(const char *call, hipError_t e) {
    char message[4096] = "";
    rocload_last_error_message(message, sizeof message);
    printf("%s %s: %s\n", call, hipGetErrorName(e), e == hipSuccess ? "" : message);
}

static void host_stub(void) {}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: hostile load-data FILE | register FILE KERNEL | managed FILE VARIABLE\n");
        return 2;
    }
    const char *mode = argv[1];
    void *image = read_file(argv[2]);
    if (!strcmp(mode, "load-data")) {
        hipModule_t m;
        report("hipModuleLoadData", hipModuleLoadData(&m, image));
        return 0;
    }
    if (argc != 4) { fprintf(stderr, "%s needs FILE and a name\n", mode); return 2; }
    struct wrapper w = {0x48495046, 1, image, 0};
    void **h = __hipRegisterFatBinary(&w);
    if (!h) { fprintf(stderr, "__hipRegisterFatBinary returned NULL\n"); return 1; }
    static char kernel[256];
    snprintf(kernel, sizeof kernel, "%s", !strcmp(mode, "register") ? argv[3] : "no_such_kernel");
    __hipRegisterFunction(h, (const void *)host_stub, kernel, kernel, -1, 0, 0, 0, 0, 0);
    if (!strcmp(mode, "managed")) {
        static void *device_pointer; /* the host's pointer variable clang would emit */
        static long long init = 42;
        __hipRegisterManagedVar(h, &device_pointer, &init, argv[3], sizeof init, 8);
        printf("managed pointer %s\n", device_pointer ? "set" : "NULL");
    } else if (strcmp(mode, "register")) {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    hipFuncAttributes attr;
    report("hipFuncGetAttributes", hipFuncGetAttributes(&attr, (const void *)host_stub));
    return 0;
}
