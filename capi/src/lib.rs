//! The C ABI of `librocload.so`: the HIP entry points clang-generated host code and the HIP
//! headers' inline functions call, over the process-wide [`Runtime`], plus the small rocload
//! API of `include/rocload.h`.
//!
//! Every entry point catches unwinds (a panic across the C boundary would abort the host),
//! checks pointers for NULL and handles against the registry (an unknown handle is an error,
//! never a dereference), and records failures per thread for `hipGetLastError`, together
//! with the message (`rocload_last_error_message`) and, for a failed selection, the target
//! layer's explanation (`rocload_last_selection_error`).
//!
//! Not here: kernel execution and memory copies. `hipLaunchKernel` resolves its kernel (so a
//! launch is a first use and reports load failures) and then returns `hipErrorNotSupported`,
//! as do `hipModuleLaunchKernel`, `hipMalloc` and `hipMemcpy`.

#![allow(non_snake_case, clippy::missing_safety_doc)]

mod handles;
pub mod types;

#[cfg(test)]
mod tests;

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use handles::{HandleTable, Kind};
use rocload_lib::runtime::{KernelRef, Module, Runtime, RuntimeError};
use types::*;

thread_local! {
    static LAST_ERROR: Cell<hipError_t> = const { Cell::new(hipSuccess) };
    static LAST_MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
    static LAST_SELECTION: RefCell<String> = const { RefCell::new(String::new()) };
    static CURRENT_DEVICE: Cell<c_int> = const { Cell::new(0) };
    static CALL_CONFIGURATION: RefCell<Vec<(dim3, dim3, usize, hipStream_t)>> = const { RefCell::new(Vec::new()) };
}

/// A failed call: the code returned and what to record.
struct Failure {
    code: hipError_t,
    error: Option<RuntimeError>,
    message: String,
}

impl Failure {
    fn new(code: hipError_t, message: impl Into<String>) -> Failure {
        Failure {
            code,
            error: None,
            message: message.into(),
        }
    }

    fn null(what: &str) -> Failure {
        Failure::new(hipErrorInvalidValue, format!("{what} is NULL"))
    }
}

impl From<RuntimeError> for Failure {
    fn from(e: RuntimeError) -> Failure {
        let code = code_of(&e);
        Failure {
            code,
            message: e.to_string(),
            error: Some(e),
        }
    }
}

/// The `hipError_t` a runtime error maps to.
pub fn code_of(e: &RuntimeError) -> hipError_t {
    match e {
        RuntimeError::InvalidDevice { .. } => hipErrorInvalidDevice,
        RuntimeError::NoDevice { .. } => hipErrorNoDevice,
        RuntimeError::NoBinaryForAgent { .. } => hipErrorNoBinaryForGpu,
        RuntimeError::Load { source, .. } if source.is_out_of_memory() => hipErrorOutOfMemory,
        RuntimeError::Load { source, .. } => match &**source {
            rocload_lib::Error::Container(_) | rocload_lib::Error::CodeObject(_) => {
                hipErrorInvalidImage
            }
            rocload_lib::Error::Io { .. } => hipErrorFileNotFound,
            _ => hipErrorSharedObjectInitFailed,
        },
        RuntimeError::Unregistered { .. } | RuntimeError::InvalidHandle { .. } => {
            hipErrorInvalidHandle
        }
        RuntimeError::UnknownFunction { .. } => hipErrorInvalidDeviceFunction,
        RuntimeError::UnknownVariable { .. } => hipErrorInvalidSymbol,
        RuntimeError::NotFound { .. } => hipErrorNotFound,
        RuntimeError::InvalidValue(_) => hipErrorInvalidValue,
        _ => hipErrorUnknown,
    }
}

/// Records a failure for this thread. Thread-locals with destructors may already be gone
/// (atexit handlers run after the main thread's are destroyed): then only the code is kept.
fn record(op: &'static str, f: &Failure) {
    let _ = LAST_ERROR.try_with(|c| c.set(f.code));
    let _ = LAST_MESSAGE.try_with(|m| *m.borrow_mut() = format!("{op}: {}", f.message));
    if let Some(sel) = f.error.as_ref().and_then(RuntimeError::selection_error) {
        let _ = LAST_SELECTION.try_with(|m| *m.borrow_mut() = format!("{op}: {sel}"));
    }
    tracing::debug!(op, code = f.code, message = %f.message, "HIP call failed");
}

/// Runs an entry point: catches unwinds, records failures, returns the code.
fn call(op: &'static str, f: impl FnOnce() -> Result<(), Failure>) -> hipError_t {
    let failure = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return hipSuccess,
        Ok(Err(failure)) => failure,
        Err(_) => Failure::new(
            hipErrorUnknown,
            "internal error (a panic was caught at the C boundary)",
        ),
    };
    record(op, &failure);
    failure.code
}

/// Like [`call`] for entry points that return nothing (registration): failures are recorded.
fn call_void(op: &'static str, f: impl FnOnce() -> Result<(), Failure>) {
    let _ = call(op, f);
}

/// The process-wide runtime; the first call also sets up logging (`ROCLOAD_LOG`).
fn runtime() -> &'static Runtime {
    static LOGGING: std::sync::Once = std::sync::Once::new();
    LOGGING.call_once(init_logging);
    Runtime::global()
}

fn current_device() -> i64 {
    i64::from(CURRENT_DEVICE.try_with(Cell::get).unwrap_or(0))
}

/// Reads a C string argument; NULL is an error, invalid UTF-8 is replaced.
///
/// # Safety
/// Non-null `p` must point to a NUL-terminated string.
unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<std::borrow::Cow<'a, str>, Failure> {
    if p.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy())
}

/// Writes `value` through an output pointer; NULL is an error.
///
/// # Safety
/// Non-null `p` must be valid for a write of `T`.
unsafe fn out<T>(p: *mut T, what: &str, value: T) -> Result<(), Failure> {
    if p.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-null and writable by the caller's contract.
    unsafe { p.write(value) };
    Ok(())
}

// ------------------------------------------------------------------------------ registration

/// `void** __hipRegisterFatBinary(const void* data)`: records the wrapper in O(1) and returns
/// a handle; never fails (a bad wrapper is reported at first use).
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void {
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: clang passes the address of its wrapper in a loaded image, which stays
        // mapped until the matching __hipUnregisterFatBinary.
        let id = unsafe { runtime().register_wrapper(data) }.id();
        FAT_BINARIES.insert(id).or_else(|| {
            let _ = runtime().unregister(id);
            record(
                "__hipRegisterFatBinary",
                &Failure::new(hipErrorOutOfMemory, "2^24 fat binaries are registered"),
            );
            None
        })
    }));
    match result {
        Ok(Some(handle)) => handle as *mut *mut c_void,
        Ok(None) => std::ptr::null_mut(),
        Err(_) => {
            record(
                "__hipRegisterFatBinary",
                &Failure::new(hipErrorUnknown, "internal error (panic)"),
            );
            std::ptr::null_mut()
        }
    }
}

/// `void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction,
/// const char* deviceName, unsigned threadLimit, uint3* tid, uint3* bid, dim3* blockDim,
/// dim3* gridDim, int* wSize)`.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterFunction(
    modules: *mut *mut c_void,
    host_function: *const c_void,
    device_function: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_uint,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _block_dim: *mut dim3,
    _grid_dim: *mut dim3,
    _w_size: *mut c_int,
) {
    call_void("__hipRegisterFunction", || {
        if host_function.is_null() {
            return Err(Failure::null("hostFunction"));
        }
        // SAFETY: clang passes NUL-terminated names (or NULL, rejected).
        let name = unsafe {
            c_str(
                if device_name.is_null() {
                    device_function
                } else {
                    device_name
                },
                "deviceName",
            )
        }?;
        runtime().register_function(fat_binary_id(modules)?, host_function as usize, &name)?;
        Ok(())
    })
}

/// `void __hipRegisterVar(void** modules, void* var, char* hostVar, char* deviceVar, int ext,
/// size_t size, int constant, int global)`.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterVar(
    modules: *mut *mut c_void,
    var: *mut c_void,
    host_var: *mut c_char,
    device_var: *const c_char,
    _ext: c_int,
    size: usize,
    _constant: c_int,
    _global: c_int,
) {
    call_void("__hipRegisterVar", || {
        if var.is_null() {
            return Err(Failure::null("var"));
        }
        // SAFETY: clang passes NUL-terminated names (or NULL, rejected).
        let name = unsafe {
            c_str(
                if device_var.is_null() {
                    host_var
                } else {
                    device_var
                },
                "deviceVar",
            )
        }?;
        runtime().register_variable(fat_binary_id(modules)?, var as usize, &name, size as u64)?;
        Ok(())
    })
}

/// `void __hipRegisterManagedVar(void* hipModule, void** pointer, void* init_value,
/// const char* name, size_t size, unsigned align)`: allocates the managed memory, copies the
/// initial value, and stores the address in `*pointer`.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterManagedVar(
    hip_module: *mut c_void,
    pointer: *mut *mut c_void,
    init_value: *mut c_void,
    name: *const c_char,
    size: usize,
    align: c_uint,
) {
    call_void("__hipRegisterManagedVar", || {
        if pointer.is_null() {
            return Err(Failure::null("pointer"));
        }
        if init_value.is_null() && size > 0 {
            return Err(Failure::null("init_value"));
        }
        // SAFETY: NUL-terminated name from clang (or NULL, rejected).
        let name = unsafe { c_str(name, "name") }?;
        let init: &[u8] = if size == 0 {
            &[]
        } else {
            // SAFETY: clang passes the host copy of the variable's initial value, `size` bytes.
            unsafe { std::slice::from_raw_parts(init_value.cast::<u8>(), size) }
        };
        let address = runtime().register_managed_variable(
            fat_binary_id(hip_module.cast())?,
            pointer as usize,
            &name,
            init,
            align as usize,
        )?;
        // SAFETY: `pointer` is the host's pointer variable for the managed variable.
        unsafe { pointer.write(address as *mut c_void) };
        Ok(())
    })
}

/// `void __hipRegisterSurface(...)`: surfaces are not supported; recorded as an error.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterSurface(
    _modules: *mut *mut c_void,
    _var: *mut c_void,
    _host_var: *mut c_char,
    _device_var: *mut c_char,
    _type: c_int,
    _ext: c_int,
) {
    call_void("__hipRegisterSurface", || {
        Err(Failure::new(
            hipErrorNotSupported,
            "surfaces are not supported",
        ))
    })
}

/// `void __hipRegisterTexture(...)`: textures are not supported; recorded as an error.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterTexture(
    _modules: *mut *mut c_void,
    _var: *mut c_void,
    _host_var: *mut c_char,
    _device_var: *mut c_char,
    _type: c_int,
    _norm: c_int,
    _ext: c_int,
) {
    call_void("__hipRegisterTexture", || {
        Err(Failure::new(
            hipErrorNotSupported,
            "textures are not supported",
        ))
    })
}

/// `void __hipUnregisterFatBinary(void** modules)`.
#[no_mangle]
pub unsafe extern "C" fn __hipUnregisterFatBinary(modules: *mut *mut c_void) {
    call_void("__hipUnregisterFatBinary", || {
        let id = FAT_BINARIES.remove(modules as u64).ok_or_else(|| {
            Failure::from(RuntimeError::InvalidHandle {
                what: "fat binary",
                handle: modules as u64,
            })
        })?;
        Ok(runtime().unregister(id)?)
    })
}

/// The runtime id behind a fat-binary handle.
fn fat_binary_id(handle: *mut *mut c_void) -> Result<u64, Failure> {
    FAT_BINARIES.get(handle as u64).ok_or_else(|| {
        RuntimeError::InvalidHandle {
            what: "fat binary",
            handle: handle as u64,
        }
        .into()
    })
}

/// `hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
/// hipStream_t stream)`.
#[no_mangle]
pub unsafe extern "C" fn __hipPushCallConfiguration(
    grid_dim: dim3,
    block_dim: dim3,
    shared_mem: usize,
    stream: hipStream_t,
) -> hipError_t {
    call("__hipPushCallConfiguration", || {
        CALL_CONFIGURATION
            .try_with(|c| {
                c.borrow_mut()
                    .push((grid_dim, block_dim, shared_mem, stream))
            })
            .map_err(|_| Failure::new(hipErrorNotInitialized, "thread is exiting"))
    })
}

/// `hipError_t __hipPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
/// hipStream_t* stream)`; NULL outputs are skipped.
#[no_mangle]
pub unsafe extern "C" fn __hipPopCallConfiguration(
    grid_dim: *mut dim3,
    block_dim: *mut dim3,
    shared_mem: *mut usize,
    stream: *mut hipStream_t,
) -> hipError_t {
    call("__hipPopCallConfiguration", || {
        let Some((g, b, s, st)) = CALL_CONFIGURATION
            .try_with(|c| c.borrow_mut().pop())
            .ok()
            .flatten()
        else {
            return Err(Failure::new(
                hipErrorMissingConfiguration,
                "no call configuration was pushed",
            ));
        };
        // SAFETY: non-null outputs are writable by the caller's contract.
        unsafe {
            if !grid_dim.is_null() {
                grid_dim.write(g);
            }
            if !block_dim.is_null() {
                block_dim.write(b);
            }
            if !shared_mem.is_null() {
                shared_mem.write(s);
            }
            if !stream.is_null() {
                stream.write(st);
            }
        }
        Ok(())
    })
}

// ------------------------------------------------------------------------------ kernels

/// `hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks,
/// void** args, size_t sharedMemBytes, hipStream_t stream)`: resolves the kernel (a first
/// use: load failures are reported here), then `hipErrorNotSupported`: rocload does not run
/// kernels yet.
#[no_mangle]
pub unsafe extern "C" fn hipLaunchKernel(
    function_address: *const c_void,
    _num_blocks: dim3,
    _dim_blocks: dim3,
    _args: *mut *mut c_void,
    _shared_mem_bytes: usize,
    _stream: hipStream_t,
) -> hipError_t {
    call("hipLaunchKernel", || {
        let k = runtime().kernel(function_address as usize, current_device())?;
        Err(Failure::new(
            hipErrorNotSupported,
            format!(
                "kernel {} is loaded, but rocload does not execute kernels yet",
                k.info().name
            ),
        ))
    })
}

fn attributes(k: &KernelRef, device: i64) -> hipFuncAttributes {
    let info = k.info();
    let version = runtime()
        .agent(device)
        .ok()
        .and_then(|a| a.isa().processor().version);
    let lds = 65536u64;
    let clamp = |v: u64| c_int::try_from(v).unwrap_or(c_int::MAX);
    hipFuncAttributes {
        binaryVersion: version.map_or(0, |v| clamp(u64::from(v.major * 10 + v.minor))),
        cacheModeCA: 0,
        constSizeBytes: 0,
        localSizeBytes: info.private_segment_fixed_size as usize,
        maxDynamicSharedSizeBytes: clamp(lds.saturating_sub(info.group_segment_fixed_size)),
        maxThreadsPerBlock: clamp(info.max_flat_workgroup_size.unwrap_or(1024)),
        numRegs: info.vgpr_count.map_or(0, clamp),
        preferredShmemCarveout: 0,
        ptxVersion: version.map_or(0, |v| clamp(u64::from(v.major * 10 + v.minor))),
        sharedSizeBytes: info.group_segment_fixed_size as usize,
    }
}

/// `hipError_t hipFuncGetAttributes(hipFuncAttributes* attr, const void* func)`: from the
/// kernel's metadata on the current device (loading its fat binary on first use).
/// `sharedSizeBytes` = `.group_segment_fixed_size`, `localSizeBytes` =
/// `.private_segment_fixed_size`, `maxThreadsPerBlock` = `.max_flat_workgroup_size`,
/// `numRegs` = `.vgpr_count`, `maxDynamicSharedSizeBytes` = 64 KiB minus the static LDS,
/// `binaryVersion` = `ptxVersion` = major*10+minor of the device's gfx version.
#[no_mangle]
pub unsafe extern "C" fn hipFuncGetAttributes(
    attr: *mut hipFuncAttributes,
    func: *const c_void,
) -> hipError_t {
    call("hipFuncGetAttributes", || {
        if attr.is_null() {
            return Err(Failure::null("attr"));
        }
        let device = current_device();
        let k = runtime()
            .kernel(func as usize, device)
            .map_err(|e| match e {
                RuntimeError::NotFound { .. } => Failure {
                    code: hipErrorInvalidDeviceFunction,
                    message: e.to_string(),
                    error: Some(e),
                },
                e => e.into(),
            })?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(attr, "attr", attributes(&k, device)) }
    })
}

// ------------------------------------------------------------------------------ symbols

fn symbol(symbol: *const c_void) -> Result<(u64, u64), Failure> {
    if symbol.is_null() {
        return Err(Failure::new(hipErrorInvalidSymbol, "symbol is NULL"));
    }
    runtime()
        .variable(symbol as usize, current_device())
        .map_err(|e| match e {
            RuntimeError::NotFound { .. } => Failure {
                code: hipErrorInvalidSymbol,
                message: e.to_string(),
                error: Some(e),
            },
            e => e.into(),
        })
}

/// `hipError_t hipGetSymbolAddress(void** devPtr, const void* symbol)`: the variable's address
/// on the current device (loading its fat binary on first use).
#[no_mangle]
pub unsafe extern "C" fn hipGetSymbolAddress(
    dev_ptr: *mut *mut c_void,
    sym: *const c_void,
) -> hipError_t {
    call("hipGetSymbolAddress", || {
        if dev_ptr.is_null() {
            return Err(Failure::null("devPtr"));
        }
        let (address, _) = symbol(sym)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(dev_ptr, "devPtr", address as *mut c_void) }
    })
}

/// `hipError_t hipGetSymbolSize(size_t* size, const void* symbol)`.
#[no_mangle]
pub unsafe extern "C" fn hipGetSymbolSize(size: *mut usize, sym: *const c_void) -> hipError_t {
    call("hipGetSymbolSize", || {
        if size.is_null() {
            return Err(Failure::null("size"));
        }
        let (_, bytes) = symbol(sym)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(size, "size", bytes as usize) }
    })
}

// ------------------------------------------------------------------------------ modules

/// Fat binaries registered through `__hipRegisterFatBinary`: handle -> runtime id.
static FAT_BINARIES: HandleTable<u64> = HandleTable::new(Kind::FatBinary);
/// The function handles given out for one module, by kernel name, so repeated lookups return
/// the same handle and unloading the module invalidates them.
type ModuleFunctions = Arc<parking_lot::Mutex<Vec<(String, u64)>>>;
/// Modules loaded through the module API: handle -> module and its function handles.
static MODULES: HandleTable<(Arc<Module>, ModuleFunctions)> = HandleTable::new(Kind::Module);
/// Function handles handed out by `hipModuleGetFunction`: handle -> kernel.
static FUNCTIONS: HandleTable<KernelRef> = HandleTable::new(Kind::Function);

fn module_entry(module: hipModule_t) -> Result<(Arc<Module>, ModuleFunctions), Failure> {
    MODULES.get(module as u64).ok_or_else(|| {
        RuntimeError::InvalidHandle {
            what: "module",
            handle: module as u64,
        }
        .into()
    })
}

fn load_module(module: *mut hipModule_t, bytes: rocload_lib::SharedBytes) -> Result<(), Failure> {
    let m = runtime().load_module(bytes, current_device())?;
    let id = m.id();
    let Some(handle) = MODULES.insert((m, Default::default())) else {
        let _ = runtime().unload_module(id);
        return Err(Failure::new(hipErrorOutOfMemory, "2^24 modules are loaded"));
    };
    // SAFETY: checked non-null by the callers; writable by the caller's contract.
    unsafe { out(module, "module", handle as hipModule_t) }
}

/// `hipError_t hipModuleLoadData(hipModule_t* module, const void* image)`: a code object,
/// bundle or compressed bundle in memory, measured from its header and copied; loaded on the
/// current device now.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(
    module: *mut hipModule_t,
    image: *const c_void,
) -> hipError_t {
    call("hipModuleLoadData", || {
        if module.is_null() {
            return Err(Failure::null("module"));
        }
        if image.is_null() {
            return Err(Failure::null("image"));
        }
        let options = runtime().options().read.clone();
        // SAFETY: the image is read through process_vm_readv (unmapped memory is an error), and
        // the slice is copied before returning, while the caller keeps the image alive.
        let bytes = unsafe { rocload_lib::container::hipf::measure(image.cast(), &options) }
            .map_err(|e| Failure {
                code: hipErrorInvalidImage,
                message: e.to_string(),
                error: None,
            })?;
        // The one copy: fallible, so a huge image is hipErrorOutOfMemory, not an abort.
        let copy = rocload_lib::SharedBytes::try_copy_from_slice(bytes).ok_or_else(|| {
            Failure::new(
                hipErrorOutOfMemory,
                format!(
                    "cannot reserve {} bytes for a copy of the image",
                    bytes.len()
                ),
            )
        })?;
        load_module(module, copy)
    })
}

/// `hipError_t hipModuleLoadDataEx(hipModule_t*, const void* image, unsigned numOptions,
/// hipJitOption* options, void** optionValues)`: options are ignored (no JIT).
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadDataEx(
    module: *mut hipModule_t,
    image: *const c_void,
    _num_options: c_uint,
    _options: *mut c_void,
    _values: *mut *mut c_void,
) -> hipError_t {
    // SAFETY: same contract as hipModuleLoadData.
    unsafe { hipModuleLoadData(module, image) }
}

/// `hipError_t hipModuleLoad(hipModule_t* module, const char* fname)`: a code object or
/// (compressed) bundle file.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoad(
    module: *mut hipModule_t,
    fname: *const c_char,
) -> hipError_t {
    call("hipModuleLoad", || {
        if module.is_null() {
            return Err(Failure::null("module"));
        }
        // SAFETY: NUL-terminated by the caller's contract (or NULL, rejected).
        let path = unsafe { c_str(fname, "fname") }?;
        let bytes = std::fs::read(&*path)
            .map_err(|e| Failure::new(hipErrorFileNotFound, format!("{path}: {e}")))?;
        load_module(module, bytes.into())
    })
}

/// `hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname)`.
#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut hipFunction_t,
    module: hipModule_t,
    kname: *const c_char,
) -> hipError_t {
    call("hipModuleGetFunction", || {
        if function.is_null() {
            return Err(Failure::null("function"));
        }
        // SAFETY: NUL-terminated by the caller's contract (or NULL, rejected).
        let name = unsafe { c_str(kname, "kname") }?;
        let (m, functions) = module_entry(module)?;
        let kernel = m.function(&name)?;
        let mut list = functions.lock();
        let handle = match list.iter().find(|(n, _)| *n == name) {
            Some(&(_, h)) => h,
            None => {
                let h = FUNCTIONS.insert(kernel).ok_or_else(|| {
                    Failure::new(hipErrorOutOfMemory, "2^24 function handles are live")
                })?;
                list.push((name.to_string(), h));
                h
            }
        };
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(function, "function", handle as hipFunction_t) }
    })
}

/// `hipError_t hipModuleGetGlobal(hipDeviceptr_t* dptr, size_t* bytes, hipModule_t hmod,
/// const char* name)`; either output may be NULL.
#[no_mangle]
pub unsafe extern "C" fn hipModuleGetGlobal(
    dptr: *mut hipDeviceptr_t,
    bytes: *mut usize,
    hmod: hipModule_t,
    name: *const c_char,
) -> hipError_t {
    call("hipModuleGetGlobal", || {
        // SAFETY: NUL-terminated by the caller's contract (or NULL, rejected).
        let name = unsafe { c_str(name, "name") }?;
        let (address, size) = module_entry(hmod)?.0.global(&name)?;
        // SAFETY: non-null outputs are writable by the caller's contract.
        unsafe {
            if !dptr.is_null() {
                dptr.write(address as hipDeviceptr_t);
            }
            if !bytes.is_null() {
                bytes.write(size as usize);
            }
        }
        Ok(())
    })
}

/// `hipError_t hipModuleUnload(hipModule_t module)`: forgets the module and invalidates its
/// function handles; the code is freed when nothing uses it any more.
#[no_mangle]
pub unsafe extern "C" fn hipModuleUnload(module: hipModule_t) -> hipError_t {
    call("hipModuleUnload", || {
        let (m, functions) = MODULES.remove(module as u64).ok_or_else(|| {
            Failure::from(RuntimeError::InvalidHandle {
                what: "module",
                handle: module as u64,
            })
        })?;
        for (_, h) in functions.lock().drain(..) {
            FUNCTIONS.remove(h);
        }
        runtime().unload_module(m.id())?;
        Ok(())
    })
}

fn function_handle(f: hipFunction_t) -> Result<KernelRef, Failure> {
    FUNCTIONS.get(f as u64).ok_or_else(|| {
        RuntimeError::InvalidHandle {
            what: "function",
            handle: f as u64,
        }
        .into()
    })
}

/// `hipError_t hipFuncGetAttribute(int* value, hipFunction_attribute attrib, hipFunction_t hfunc)`.
#[no_mangle]
pub unsafe extern "C" fn hipFuncGetAttribute(
    value: *mut c_int,
    attrib: c_int,
    hfunc: hipFunction_t,
) -> hipError_t {
    call("hipFuncGetAttribute", || {
        if value.is_null() {
            return Err(Failure::null("value"));
        }
        let k = function_handle(hfunc)?;
        let a = attributes(&k, k.loaded().device() as i64);
        let clamp = |v: usize| c_int::try_from(v).unwrap_or(c_int::MAX);
        use types::func_attribute as fa;
        let v = match attrib {
            fa::MAX_THREADS_PER_BLOCK => a.maxThreadsPerBlock,
            fa::SHARED_SIZE_BYTES => clamp(a.sharedSizeBytes),
            fa::CONST_SIZE_BYTES => clamp(a.constSizeBytes),
            fa::LOCAL_SIZE_BYTES => clamp(a.localSizeBytes),
            fa::NUM_REGS => a.numRegs,
            fa::PTX_VERSION => a.ptxVersion,
            fa::BINARY_VERSION => a.binaryVersion,
            fa::CACHE_MODE_CA => a.cacheModeCA,
            fa::MAX_DYNAMIC_SHARED_SIZE_BYTES => a.maxDynamicSharedSizeBytes,
            fa::PREFERRED_SHARED_MEMORY_CARVEOUT => a.preferredShmemCarveout,
            other => {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("unknown function attribute {other}"),
                ))
            }
        };
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(value, "value", v) }
    })
}

/// `hipError_t hipModuleLaunchKernel(...)`: checks the handle, then `hipErrorNotSupported`.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    f: hipFunction_t,
    _gx: c_uint,
    _gy: c_uint,
    _gz: c_uint,
    _bx: c_uint,
    _by: c_uint,
    _bz: c_uint,
    _shared: c_uint,
    _stream: hipStream_t,
    _params: *mut *mut c_void,
    _extra: *mut *mut c_void,
) -> hipError_t {
    call("hipModuleLaunchKernel", || {
        let k = function_handle(f)?;
        Err(Failure::new(
            hipErrorNotSupported,
            format!(
                "kernel {} is loaded, but rocload does not execute kernels yet",
                k.info().name
            ),
        ))
    })
}

// ------------------------------------------------------------------------------ errors

/// `hipError_t hipGetLastError(void)`: the calling thread's last error, reset to `hipSuccess`.
#[no_mangle]
pub extern "C" fn hipGetLastError() -> hipError_t {
    LAST_ERROR
        .try_with(|c| c.replace(hipSuccess))
        .unwrap_or(hipSuccess)
}

/// `hipError_t hipPeekAtLastError(void)`: the calling thread's last error, not reset.
#[no_mangle]
pub extern "C" fn hipPeekAtLastError() -> hipError_t {
    LAST_ERROR.try_with(Cell::get).unwrap_or(hipSuccess)
}

/// `const char* hipGetErrorString(hipError_t)`: a static description.
#[no_mangle]
pub extern "C" fn hipGetErrorString(error: hipError_t) -> *const c_char {
    error_strings(error).1.as_ptr()
}

/// `const char* hipGetErrorName(hipError_t)`: the static enumerator name.
#[no_mangle]
pub extern "C" fn hipGetErrorName(error: hipError_t) -> *const c_char {
    error_strings(error).0.as_ptr()
}

// ------------------------------------------------------------------------------ devices

/// `hipError_t hipInit(unsigned flags)`.
#[no_mangle]
pub extern "C" fn hipInit(_flags: c_uint) -> hipError_t {
    call("hipInit", || {
        let _ = runtime();
        Ok(())
    })
}

/// `hipError_t hipGetDeviceCount(int* count)`: `hipErrorNoDevice` (count 0) without agents.
#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> hipError_t {
    call("hipGetDeviceCount", || {
        if count.is_null() {
            return Err(Failure::null("count"));
        }
        let n = c_int::try_from(runtime().agents().len()).unwrap_or(c_int::MAX);
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(count, "count", n) }?;
        if n == 0 {
            runtime().agent(0)?;
        }
        Ok(())
    })
}

/// `hipError_t hipGetDevice(int* deviceId)`: the calling thread's current device.
#[no_mangle]
pub unsafe extern "C" fn hipGetDevice(device_id: *mut c_int) -> hipError_t {
    call("hipGetDevice", || {
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe {
            out(
                device_id,
                "deviceId",
                CURRENT_DEVICE.try_with(Cell::get).unwrap_or(0),
            )
        }
    })
}

/// `hipError_t hipSetDevice(int deviceId)`: sets the calling thread's current device.
#[no_mangle]
pub extern "C" fn hipSetDevice(device_id: c_int) -> hipError_t {
    call("hipSetDevice", || {
        runtime().agent(i64::from(device_id))?;
        CURRENT_DEVICE
            .try_with(|c| c.set(device_id))
            .map_err(|_| Failure::new(hipErrorNotInitialized, "thread is exiting"))
    })
}

fn copy_c_string(dst: &mut [c_char], text: &str) {
    let n = text.len().min(dst.len().saturating_sub(1));
    for (d, s) in dst.iter_mut().zip(text.bytes().take(n)) {
        *d = s as c_char;
    }
    if let Some(end) = dst.get_mut(n) {
        *end = 0;
    }
}

/// `hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int deviceId)`: name,
/// gcnArchName (the agent's target id), gcnArch, major/minor (gfx version), warpSize and the
/// work-group limits every AMDGPU processor shares; fields rocload cannot know are 0.
#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceProperties(
    prop: *mut hipDeviceProp_t,
    device_id: c_int,
) -> hipError_t {
    call("hipGetDeviceProperties", || {
        if prop.is_null() {
            return Err(Failure::null("prop"));
        }
        let agent = runtime().agent(i64::from(device_id))?;
        let isa = agent.isa();
        let processor = isa.processor();
        let mut p = hipDeviceProp_t::default();
        let backend = match agent.backend() {
            rocload_lib::loader::BackendKind::Soft => "rocload software agent",
            rocload_lib::loader::BackendKind::Hsa => "AMD GPU (HSA)",
        };
        copy_c_string(&mut p.name, &format!("{backend} ({})", processor.name));
        copy_c_string(&mut p.gcnArchName, &isa.target_id().to_string());
        if let Some(v) = processor.version {
            p.major = v.major as c_int;
            p.minor = v.minor as c_int;
            p.gcnArch = (v.major * 100 + v.minor * 10 + v.stepping) as c_int;
        }
        p.warpSize = processor.wavefront_size as c_int;
        p.maxThreadsPerBlock = 1024;
        p.maxThreadsDim = [1024, 1024, 1024];
        p.maxGridSize = [c_int::MAX, c_int::MAX, c_int::MAX];
        p.sharedMemPerBlock = 65536;
        p.maxSharedMemoryPerMultiProcessor = 65536;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(prop, "prop", p) }
    })
}

// ------------------------------------------------------------------------------ not supported

/// `hipError_t hipMalloc(void** ptr, size_t size)`: `hipErrorNotSupported` (no device memory yet).
#[no_mangle]
pub unsafe extern "C" fn hipMalloc(_ptr: *mut *mut c_void, _size: usize) -> hipError_t {
    call("hipMalloc", || {
        Err(Failure::new(
            hipErrorNotSupported,
            "device memory is not supported yet",
        ))
    })
}

/// `hipError_t hipFree(void* ptr)`: `hipSuccess` for NULL, else `hipErrorNotSupported`.
#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    call("hipFree", || {
        if ptr.is_null() {
            Ok(())
        } else {
            Err(Failure::new(
                hipErrorNotSupported,
                "device memory is not supported yet",
            ))
        }
    })
}

/// `hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind)`:
/// `hipErrorNotSupported`.
#[no_mangle]
pub unsafe extern "C" fn hipMemcpy(
    _dst: *mut c_void,
    _src: *const c_void,
    _size: usize,
    _kind: c_int,
) -> hipError_t {
    call("hipMemcpy", || {
        Err(Failure::new(
            hipErrorNotSupported,
            "memory copies are not supported yet",
        ))
    })
}

/// `hipError_t hipDeviceSynchronize(void)`: nothing ever runs, so nothing is pending.
#[no_mangle]
pub extern "C" fn hipDeviceSynchronize() -> hipError_t {
    hipSuccess
}

// ------------------------------------------------------------------------------ rocload.h

fn copy_out(text: &str, buf: *mut c_char, len: usize) -> usize {
    if !buf.is_null() && len > 0 {
        // SAFETY: the caller gives `len` writable bytes at `buf`.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf, len) };
        copy_c_string(dst, text);
    }
    text.len()
}

/// `size_t rocload_last_selection_error(char* buf, size_t len)`: see `include/rocload.h`.
#[no_mangle]
pub unsafe extern "C" fn rocload_last_selection_error(buf: *mut c_char, len: usize) -> usize {
    catch_unwind(|| {
        LAST_SELECTION
            .try_with(|m| copy_out(&m.borrow(), buf, len))
            .unwrap_or(0)
    })
    .unwrap_or(0)
}

/// `size_t rocload_last_error_message(char* buf, size_t len)`: see `include/rocload.h`.
#[no_mangle]
pub unsafe extern "C" fn rocload_last_error_message(buf: *mut c_char, len: usize) -> usize {
    catch_unwind(|| {
        LAST_MESSAGE
            .try_with(|m| copy_out(&m.borrow(), buf, len))
            .unwrap_or(0)
    })
    .unwrap_or(0)
}

/// `int rocload_device_function(const char* name, int device, uint64_t* address, uint64_t* size)`.
#[no_mangle]
pub unsafe extern "C" fn rocload_device_function(
    name: *const c_char,
    device: c_int,
    address: *mut u64,
    size: *mut u64,
) -> c_int {
    call("rocload_device_function", || {
        // SAFETY: NUL-terminated by the caller's contract (or NULL, rejected).
        let name = unsafe { c_str(name, "name") }?;
        let s = runtime().device_function(&name, i64::from(device))?;
        // SAFETY: non-null outputs are writable by the caller's contract.
        unsafe {
            if !address.is_null() {
                address.write(s.address);
            }
            if !size.is_null() {
                size.write(s.size);
            }
        }
        Ok(())
    })
}

fn kernel_info(k: &KernelRef) -> rocload_kernel_info_t {
    let i = k.info();
    let opt = |v: Option<u64>| v.map_or(-1, |v| i32::try_from(v).unwrap_or(i32::MAX));
    rocload_kernel_info_t {
        descriptor_address: k.descriptor_address(),
        code_address: k.code_address().unwrap_or(0),
        kernarg_segment_size: i.kernarg_segment_size,
        kernarg_segment_align: i.kernarg_segment_align,
        group_segment_fixed_size: i.group_segment_fixed_size,
        private_segment_fixed_size: i.private_segment_fixed_size,
        wavefront_size: u32::try_from(i.wavefront_size).unwrap_or(0),
        sgpr_count: opt(i.sgpr_count),
        vgpr_count: opt(i.vgpr_count),
        max_flat_workgroup_size: opt(i.max_flat_workgroup_size),
    }
}

/// `int rocload_kernel_info(const void* host_function, int device, rocload_kernel_info_t* info)`.
#[no_mangle]
pub unsafe extern "C" fn rocload_kernel_info(
    host_function: *const c_void,
    device: c_int,
    info: *mut rocload_kernel_info_t,
) -> c_int {
    call("rocload_kernel_info", || {
        if info.is_null() {
            return Err(Failure::null("info"));
        }
        let k = runtime().kernel(host_function as usize, i64::from(device))?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(info, "info", kernel_info(&k)) }
    })
}

/// `int rocload_function_info(hipFunction_t function, rocload_kernel_info_t* info)`.
#[no_mangle]
pub unsafe extern "C" fn rocload_function_info(
    function: hipFunction_t,
    info: *mut rocload_kernel_info_t,
) -> c_int {
    call("rocload_function_info", || {
        if info.is_null() {
            return Err(Failure::null("info"));
        }
        let k = function_handle(function)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(info, "info", kernel_info(&k)) }
    })
}

/// `int rocload_stats(rocload_stats_t* stats)`: the runtime's event counters.
#[no_mangle]
pub unsafe extern "C" fn rocload_stats(stats: *mut RocloadStats) -> c_int {
    call("rocload_stats", || {
        let s = runtime().stats();
        let v = RocloadStats {
            registered: s.registered,
            loads: s.loads,
            load_failures: s.load_failures,
            full_inflations: s.full_inflations,
            extractions: s.extractions,
        };
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(stats, "stats", v) }
    })
}

/// `rocload_stats_t` of `include/rocload.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct RocloadStats {
    /// Fat binaries registered (including modules).
    pub registered: u64,
    /// Successful loads of a fat binary on a device.
    pub loads: u64,
    /// Failed first uses.
    pub load_failures: u64,
    /// Compressed bundles inflated whole.
    pub full_inflations: u64,
    /// Entries extracted.
    pub extractions: u64,
}

// ------------------------------------------------------------------------------ logging

/// Marks whether this thread's thread-locals are still alive: after they are destroyed
/// (at thread exit, and on the main thread at `exit()`, before the atexit handlers that
/// unregister fat binaries), the fmt layer's own thread-local buffer is gone and it would
/// panic, so events are filtered out.
struct TlsSentinel;

impl Drop for TlsSentinel {
    fn drop(&mut self) {}
}

thread_local! {
    static TLS_SENTINEL: TlsSentinel = const { TlsSentinel };
}

/// Logs go to stderr, filtered by `ROCLOAD_LOG`; nothing is printed without it.
fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    if let Ok(filter) = std::env::var("ROCLOAD_LOG") {
        let alive =
            tracing_subscriber::filter::filter_fn(|_| TLS_SENTINEL.try_with(|_| ()).is_ok());
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_filter(alive);
        let _ = tracing_subscriber::registry().with(layer).try_init();
    }
}
