/* Registers and unregisters 100,000 fat binaries, then loads and unloads 100,000 modules,
 * through librocload.so's C ABI, and prints the heap in use (glibc mallinfo2) after a warm-up
 * and at the end of each loop. tests/runtime_hip.rs checks that the end equals the warm-up
 * level: handles are reused, never leaked.
 *
 *   handle_churn BUNDLE_FILE CODE_OBJECT_FILE KERNEL REGISTRATIONS LOADS */
#include <hip/hip_runtime_api.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

void **__hipRegisterFatBinary(const void *data);
void __hipRegisterFunction(void **modules, const void *host_function, char *device_function,
                           const char *device_name, unsigned thread_limit, void *tid, void *bid,
                           dim3 *block_dim, dim3 *grid_dim, int *w_size);
void __hipUnregisterFatBinary(void **modules);

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
    void *data = malloc(n);
    if (fread(data, 1, n, f) != (size_t)n) { perror(path); exit(2); }
    fclose(f);
    return data;
}

static size_t heap(void) { return mallinfo2().uordblks; }

static void register_once(const struct wrapper *w) {
    static char name[] = "vadd";
    void **h = __hipRegisterFatBinary(w);
    if (!h) { fprintf(stderr, "register failed\n"); exit(1); }
    __hipRegisterFunction(h, (const void *)0x1000, name, name, -1, 0, 0, 0, 0, 0);
    __hipUnregisterFatBinary(h);
}

static void load_once(const void *image, const char *kernel) {
    hipModule_t m;
    hipFunction_t f;
    if (hipModuleLoadData(&m, image) != hipSuccess) { fprintf(stderr, "load failed\n"); exit(1); }
    if (hipModuleGetFunction(&f, m, kernel) != hipSuccess) { fprintf(stderr, "function failed\n"); exit(1); }
    if (hipModuleUnload(m) != hipSuccess) { fprintf(stderr, "unload failed\n"); exit(1); }
}

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: handle_churn BUNDLE CODE_OBJECT KERNEL REGISTRATIONS LOADS\n"); return 2; }
    struct wrapper w = {0x48495046, 1, read_file(argv[1]), 0};
    const void *image = read_file(argv[2]);
    long registrations = atol(argv[4]), loads = atol(argv[5]);
    int count;
    hipGetDeviceCount(&count); /* agents are chosen at first use: not part of the loops */

    for (int i = 0; i < 1000; i++) register_once(&w);
    size_t start = heap();
    for (long i = 0; i < registrations; i++) register_once(&w);
    printf("fat_binaries start %zu end %zu\n", start, heap());

    for (int i = 0; i < 100; i++) load_once(image, argv[3]);
    start = heap();
    for (long i = 0; i < loads; i++) load_once(image, argv[3]);
    printf("modules start %zu end %zu\n", start, heap());
    return 0;
}
