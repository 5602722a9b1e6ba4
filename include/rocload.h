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

/* Sets the watchdog of every device whose kernels run on the software agent: a dispatch that
 * starts after this call and runs longer than `seconds` is stopped, and the stream reports
 * hipErrorLaunchTimeOut (sticky until hipDeviceReset) with a message naming the kernel and a
 * wave that never finished (its work-group, index, PC and instruction). 0 turns the watchdog
 * off. Dispatches already running keep theirs. The default is ROCLOAD_WATCHDOG's, else 120 s.
 *   seconds: in, 0 or a positive number of seconds.
 * Returns hipSuccess, hipErrorInvalidValue (negative, NaN or too large), or
 * hipErrorNotSupported when no device has a watchdog (kernels on a GPU). */
int rocload_set_watchdog(double seconds);

/* ---------------------------------------------------------------- tool hooks
 *
 * Instrumentation tools register callbacks to see code objects arrive and leave and kernels
 * dispatched and completed. A tool is either linked/preloaded into the program and calls
 * rocload_tool_register itself (from a constructor, say), or is named in ROCLOAD_TOOLS
 * (`:`-separated paths; `rocload run --tool LIB` sets it): librocload.so dlopens it at the
 * first HIP call and calls its `int rocload_tool_init(void)` if it has one.
 *
 * Callbacks run on runtime threads (loads on the thread that caused them, dispatch_begin on
 * the launching thread before the packet is submitted, dispatch_end on the queue's thread)
 * and must be thread-safe and quick. Everything passed to a callback, strings included, is
 * valid for the duration of the call only. Code-object callbacks are delivered one at a time,
 * in order; a tool registered late first gets code_object_loaded for everything loaded. */

#define ROCLOAD_SYMBOL_KERNEL 0
#define ROCLOAD_SYMBOL_FUNCTION 1
#define ROCLOAD_SYMBOL_VARIABLE 2

typedef struct rocload_symbol_t {
    const char* name;           /* raw name; kernels without ".kd" */
    const char* demangled_name; /* NULL when name is not mangled */
    int kind;                   /* ROCLOAD_SYMBOL_* */
    uint64_t address;           /* device address; a kernel's descriptor (kernel_object) */
    uint64_t size;              /* bytes */
    uint64_t code_address;      /* a kernel's first instruction; 0 otherwise */
} rocload_symbol_t;

typedef struct rocload_code_object_t {
    uint64_t id;         /* never reused; shared by the load and unload callbacks */
    int device;
    const char* uri;     /* file://PATH#offset=N&size=M or memory://PID#offset=0xADDR&size=N */
    uint64_t load_base;  /* the loaded image on the device */
    uint64_t load_size;
    uint64_t load_delta; /* device address = ELF symbol value + load_delta */
    const rocload_symbol_t* symbols; /* kernels, device functions and variables it defines */
    size_t symbol_count;
} rocload_code_object_t;

typedef struct rocload_dispatch_t {
    uint64_t id;             /* never reused; dispatch_end carries the same value */
    int device;
    uint64_t stream;         /* the stream's id (compare only) */
    const char* kernel_name; /* raw name */
    const char* demangled_name; /* NULL when not mangled */
    uint64_t kernel_object;  /* the kernel descriptor's address */
    uint64_t code_address;   /* first instruction, 0 if unknown */
    uint32_t grid[3];        /* work-groups */
    uint32_t block[3];       /* work-items per work-group */
    uint32_t dynamic_lds;    /* bytes */
    uint64_t kernarg;        /* kernarg segment address */
} rocload_dispatch_t;

typedef struct rocload_dispatch_result_t {
    int status;            /* hipSuccess, or hipErrorLaunchFailure (fault, trap, never ran) */
    uint64_t duration_ns;  /* execution time */
    uint64_t instructions; /* wave instructions executed (software agent; 0 on ROCr) */
    uint64_t waves;        /* waves run (software agent; 0 on ROCr) */
    const char* error;     /* what went wrong, or NULL */
} rocload_dispatch_result_t;

typedef struct rocload_tool_t {
    size_t struct_size;  /* sizeof(rocload_tool_t): later fields may be added */
    void* user_data;     /* passed to every callback */
    /* Any callback may be NULL. */
    void (*code_object_loaded)(const rocload_code_object_t* code_object, void* user_data);
    void (*code_object_unloaded)(const rocload_code_object_t* code_object, void* user_data);
    void (*dispatch_begin)(const rocload_dispatch_t* dispatch, void* user_data);
    void (*dispatch_end)(const rocload_dispatch_t* dispatch,
                         const rocload_dispatch_result_t* result, void* user_data);
} rocload_tool_t;

/* Registers a tool (the struct is copied). Before this returns, code_object_loaded is called
 * for every code object loaded now.
 *   tool: in, must not be NULL; struct_size must be set.
 *   id:   out, may be NULL; for rocload_tool_unregister.
 * Returns hipSuccess or hipErrorInvalidValue. */
int rocload_tool_register(const rocload_tool_t* tool, uint64_t* id);

/* Unregisters a tool: no callback starts after this returns.
 * Returns hipSuccess or hipErrorInvalidHandle. */
int rocload_tool_unregister(uint64_t id);

#ifdef __cplusplus
}
#endif

#endif /* ROCLOAD_H */
