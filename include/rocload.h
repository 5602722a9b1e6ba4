/* rocload.h: the rocload-specific C API of librocload.so.
 *
 * librocload.so also provides the HIP entry points clang-generated code and the HIP headers
 * call (__hipRegisterFatBinary, hipFuncGetAttributes, hipModuleLoadData, ...); this header
 * adds what HIP has no call for: device functions by name, kernel facts HIP does not expose
 * (kernarg size), explanations of failures, and counters.
 *
 * Conventions:
 * - Functions returning int return a hipError_t value (0 = hipSuccess); a failure is also
 *   recorded for hipGetLastError() and rocload_last_error_message() on the calling thread.
 * - Every pointer argument is borrowed for the duration of the call only; rocload keeps no
 *   pointer the caller gave it and hands out no memory the caller must free.
 * - NULL where an input is required gives hipErrorInvalidValue, never a crash.
 * - Device ordinals are those of hipGetDeviceCount / hipSetDevice.
 * - All functions are thread-safe. "Last ..." state is per thread.
 */
#ifndef ROCLOAD_H
#define ROCLOAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Facts of one loaded kernel, read from its code object's metadata note (or, without one,
 * its kernel descriptor). Counts that are absent from the metadata are -1. */
typedef struct rocload_kernel_info_t {
    uint64_t descriptor_address;        /* kernel descriptor on the device (kernel_object) */
    uint64_t code_address;              /* first instruction, 0 if unknown */
    uint64_t kernarg_segment_size;      /* .kernarg_segment_size */
    uint64_t kernarg_segment_align;     /* .kernarg_segment_align */
    uint64_t group_segment_fixed_size;  /* .group_segment_fixed_size (static LDS) */
    uint64_t private_segment_fixed_size;/* .private_segment_fixed_size (scratch) */
    uint32_t wavefront_size;            /* .wavefront_size */
    int32_t sgpr_count;                 /* .sgpr_count or -1 */
    int32_t vgpr_count;                 /* .vgpr_count or -1 */
    int32_t max_flat_workgroup_size;    /* .max_flat_workgroup_size or -1 */
} rocload_kernel_info_t;

/* Event counters of the process-wide runtime. */
typedef struct rocload_stats_t {
    uint64_t registered;       /* fat binaries registered (including modules) */
    uint64_t loads;            /* successful loads of a fat binary on a device */
    uint64_t load_failures;    /* failed first uses */
    uint64_t full_inflations;  /* compressed bundles inflated whole (several devices) */
    uint64_t extractions;      /* bundle entries extracted */
} rocload_stats_t;

/* Address and size of the device function `name` (raw or demangled name) on `device`,
 * searching everything loaded there: registered fat binaries and modules. When nothing
 * loaded defines it, every registered fat binary not yet loaded on the device is loaded
 * first (a lookup is a first use). Symbols that are not functions (kernels, variables) are
 * returned only when no function has the name.
 *   name:    in, NUL-terminated, borrowed.
 *   device:  in.
 *   address: out, may be NULL.
 *   size:    out, may be NULL.
 * Returns hipSuccess, hipErrorNotFound, hipErrorInvalidDevice, hipErrorNoDevice or
 * hipErrorInvalidValue. */
int rocload_device_function(const char* name, int device, uint64_t* address, uint64_t* size);

/* Facts of the kernel registered under `host_function` (the pointer a kernel launch or
 * hipFuncGetAttributes takes) on `device`, loading its fat binary on first use.
 *   host_function: in, the registered host-side kernel handle.
 *   info:          out, must not be NULL.
 * Returns hipSuccess, hipErrorInvalidDeviceFunction (not registered), hipErrorNoBinaryForGpu
 * (see rocload_last_selection_error), or another load error. */
int rocload_kernel_info(const void* host_function, int device, rocload_kernel_info_t* info);

/* Facts of a kernel obtained with hipModuleGetFunction.
 *   function: in, a hipFunction_t (a void*); an unknown or unloaded one gives
 *             hipErrorInvalidHandle.
 *   info:     out, must not be NULL. */
int rocload_function_info(void* function, rocload_kernel_info_t* info);

/* The explanation of the last failed target selection on this thread (no code object of a
 * fat binary can run on the device): the device, every entry of the bundle with the reason
 * it was refused, and a hint. Copies at most len-1 bytes and a NUL into buf (if buf is not
 * NULL and len > 0) and returns the full length, excluding the NUL, like snprintf; 0 when no
 * selection has failed on this thread.
 *   buf: out, caller-owned, may be NULL (to query the length).
 *   len: size of buf in bytes. */
size_t rocload_last_selection_error(char* buf, size_t len);

/* The message of the last failed call on this thread ("hipFuncGetAttributes: ..."), copied
 * as by rocload_last_selection_error. Not reset by hipGetLastError. */
size_t rocload_last_error_message(char* buf, size_t len);

/* The runtime's counters.
 *   stats: out, must not be NULL. */
int rocload_stats(rocload_stats_t* stats);

#ifdef __cplusplus
}
#endif

#endif /* ROCLOAD_H */
