//! The module API: code objects loaded explicitly (`hipModuleLoad*`), their functions and
//! globals, and function attributes.

use rocload_ffi::export;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::Arc;

use crate::*;

// ------------------------------------------------------------------------------ modules

/// The function handles given out for one module, by kernel name, so repeated lookups return
/// the same handle and unloading the module invalidates them.
type ModuleFunctions = Arc<parking_lot::Mutex<Vec<(String, u64)>>>;
/// Modules loaded through the module API: handle -> module and its function handles.
pub(crate) static MODULES: HandleTable<(Arc<Module>, ModuleFunctions)> =
    HandleTable::new(kind::MODULE);
/// Function handles handed out by `hipModuleGetFunction`: handle -> kernel.
pub(crate) static FUNCTIONS: HandleTable<KernelRef> = HandleTable::new(kind::FUNCTION);

fn module_entry(module: hipModule_t) -> Result<(Arc<Module>, ModuleFunctions), Failure> {
    MODULES.get(module as u64).ok_or_else(|| {
        RuntimeError::InvalidHandle {
            what: "module",
            handle: module as u64,
        }
        .into()
    })
}

/// The device address and size of a module's variable `name`.
pub(crate) fn module_global(module: hipModule_t, name: &str) -> Result<(u64, u64), Failure> {
    Ok(module_entry(module)?.0.global(name)?)
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
#[export]
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
#[export]
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
#[export]
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
#[export]
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
#[export]
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
#[export]
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
        crate::texref::forget_module(module as u64);
        runtime().unload_module(m.id())?;
        Ok(())
    })
}

pub(crate) fn function_handle(f: hipFunction_t) -> Result<KernelRef, Failure> {
    FUNCTIONS.get(f as u64).ok_or_else(|| {
        RuntimeError::InvalidHandle {
            what: "function",
            handle: f as u64,
        }
        .into()
    })
}

/// `hipError_t hipFuncGetAttribute(int* value, hipFunction_attribute attrib, hipFunction_t hfunc)`.
#[export]
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

// ------------------------------------------------------------------------------ function attributes

pub(crate) fn attributes(k: &KernelRef, device: i64) -> hipFuncAttributes {
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
#[export]
pub unsafe extern "C" fn hipFuncGetAttributes(
    attr: *mut hipFuncAttributes,
    func: *const c_void,
) -> hipError_t {
    call("hipFuncGetAttributes", || {
        if attr.is_null() {
            return Err(Failure::null("attr"));
        }
        let device = current_device();
        let k = host_kernel(func, device)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(attr, "attr", attributes(&k, device)) }
    })
}

// ----------------------------------------------------------- HIP 6.2, 7.1 and 7.2 additions

/// `hipError_t hipModuleGetFunctionCount(unsigned int* count, hipModule_t mod)` (HIP 7.1): the
/// kernels the module defines.
#[export]
pub unsafe extern "C" fn hipModuleGetFunctionCount(
    count: *mut c_uint,
    module: hipModule_t,
) -> hipError_t {
    call("hipModuleGetFunctionCount", || {
        let n = module_entry(module)?.0.loaded().kernel_count();
        let n = c_uint::try_from(n).unwrap_or(c_uint::MAX);
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(count, "count", n) }
    })
}

/// `hipError_t hipModuleLoadFatBinary(hipModule_t* module, const void* fatbin)` (HIP 7.1): a
/// fat binary (offload bundle, compressed or not) in memory, as `hipModuleLoadData` takes it.
#[export]
pub unsafe extern "C" fn hipModuleLoadFatBinary(
    module: *mut hipModule_t,
    fatbin: *const c_void,
) -> hipError_t {
    // SAFETY: the same contract as hipModuleLoadData.
    unsafe { hipModuleLoadData(module, fatbin) }
}

/// Function handles given out by `hipGetFuncBySymbol`, by host function, so that asking twice
/// gives the same handle and the table does not grow.
static BY_SYMBOL: parking_lot::Mutex<Vec<(usize, u64)>> = parking_lot::Mutex::new(Vec::new());

/// `hipError_t hipGetFuncBySymbol(hipFunction_t* functionPtr, const void* symbolPtr)` (HIP
/// 6.2): the function handle of the kernel a host stub (`<<<>>>`'s function pointer) launches,
/// on the current device, usable with the module API.
#[export]
pub unsafe extern "C" fn hipGetFuncBySymbol(
    function: *mut hipFunction_t,
    symbol: *const c_void,
) -> hipError_t {
    call("hipGetFuncBySymbol", || {
        if function.is_null() {
            return Err(Failure::null("functionPtr"));
        }
        let kernel = runtime().kernel(symbol as usize, current_device())?;
        let mut known = BY_SYMBOL.lock();
        // A handle whose kernel is still this one (a stale entry is replaced).
        let live = known.iter().position(|&(s, h)| {
            s == symbol as usize
                && FUNCTIONS
                    .get(h)
                    .is_some_and(|k| k.descriptor_address() == kernel.descriptor_address())
        });
        let handle = match live {
            Some(i) => known[i].1,
            None => {
                let h = FUNCTIONS.insert(kernel).ok_or_else(|| {
                    Failure::new(hipErrorOutOfMemory, "2^24 function handles are live")
                })?;
                known.retain(|&(s, _)| s != symbol as usize);
                known.push((symbol as usize, h));
                h
            }
        };
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(function, "functionPtr", handle as hipFunction_t) }
    })
}

/// `hipError_t hipLibraryLoadData(hipLibrary_t* library, const void* code, hipJitOption**
/// jitOptions, void** jitOptionsValues, unsigned int numJitOptions, hipLibraryOption**
/// libraryOptions, void** libraryOptionValues, unsigned int numLibraryOptions)` (HIP 7.2's
/// node, in 7.1's headers): a library is a module here (code loaded on the current device,
/// kernels by name); the options are for a JIT, which there is none of.
#[export]
pub unsafe extern "C" fn hipLibraryLoadData(
    library: *mut hipModule_t,
    code: *const c_void,
    _jit_options: *mut c_void,
    _jit_values: *mut *mut c_void,
    _jit_count: c_uint,
    _library_options: *mut c_void,
    _library_values: *mut *mut c_void,
    _library_count: c_uint,
) -> hipError_t {
    // SAFETY: the same contract as hipModuleLoadData.
    unsafe { hipModuleLoadData(library, code) }
}

/// `hipError_t hipLibraryLoadFromFile(hipLibrary_t*, const char* fileName, ...)` (options as in
/// `hipLibraryLoadData`): `hipModuleLoad`.
#[export]
pub unsafe extern "C" fn hipLibraryLoadFromFile(
    library: *mut hipModule_t,
    file: *const c_char,
    _jit_options: *mut c_void,
    _jit_values: *mut *mut c_void,
    _jit_count: c_uint,
    _library_options: *mut c_void,
    _library_values: *mut *mut c_void,
    _library_count: c_uint,
) -> hipError_t {
    // SAFETY: the same contract as hipModuleLoad.
    unsafe { hipModuleLoad(library, file) }
}

/// `hipError_t hipLibraryUnload(hipLibrary_t)`: `hipModuleUnload`.
#[export]
pub unsafe extern "C" fn hipLibraryUnload(library: hipModule_t) -> hipError_t {
    // SAFETY: the same contract as hipModuleUnload.
    unsafe { hipModuleUnload(library) }
}

/// `hipError_t hipLibraryGetKernel(hipKernel_t* pKernel, hipLibrary_t, const char* name)`: a
/// kernel handle, which is a function handle here (usable with `hipModuleLaunchKernel`).
#[export]
pub unsafe extern "C" fn hipLibraryGetKernel(
    kernel: *mut hipFunction_t,
    library: hipModule_t,
    name: *const c_char,
) -> hipError_t {
    // SAFETY: the same contract as hipModuleGetFunction.
    unsafe { hipModuleGetFunction(kernel, library, name) }
}

/// `hipError_t hipLibraryGetKernelCount(unsigned int* count, hipLibrary_t)`.
#[export]
pub unsafe extern "C" fn hipLibraryGetKernelCount(
    count: *mut c_uint,
    library: hipModule_t,
) -> hipError_t {
    // SAFETY: the same contract as hipModuleGetFunctionCount.
    unsafe { hipModuleGetFunctionCount(count, library) }
}
