//! Registration: what clang's generated constructors and destructors call (`__hipRegister*`,
//! `__hipUnregisterFatBinary`) and the call configuration `<<<>>>` pushes and pops.

use rocload_ffi::export;
use std::ffi::{c_char, c_int, c_uint, c_void};

use crate::*;

/// Fat binaries registered through `__hipRegisterFatBinary`: handle -> runtime id.
pub(crate) static FAT_BINARIES: HandleTable<u64> = HandleTable::new(kind::FAT_BINARY);

// ------------------------------------------------------------------------------ registration

/// `void** __hipRegisterFatBinary(const void* data)`: records the wrapper in O(1) and returns
/// a handle; never fails (a bad wrapper is reported at first use).
#[export]
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
#[export]
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
#[export]
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
#[export]
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

/// `void __hipRegisterSurface(void** modules, void* var, char* hostVar, char* deviceVar, int
/// type, int ext)`: a `surface<>` variable (its device copy holds the surface object).
#[export]
pub unsafe extern "C" fn __hipRegisterSurface(
    modules: *mut *mut c_void,
    var: *mut c_void,
    _host_var: *mut c_char,
    device_var: *mut c_char,
    _type: c_int,
    _ext: c_int,
) {
    call_void("__hipRegisterSurface", || {
        crate::texref::register_reference(modules, var, device_var, 8)
    })
}

/// `void __hipRegisterTexture(void** modules, void* var, char* hostVar, char* deviceVar, int
/// type, int norm, int ext)`: a `texture<>` variable, whose device copy of the
/// `textureReference` binding writes.
#[export]
pub unsafe extern "C" fn __hipRegisterTexture(
    modules: *mut *mut c_void,
    var: *mut c_void,
    _host_var: *mut c_char,
    device_var: *mut c_char,
    _type: c_int,
    _norm: c_int,
    _ext: c_int,
) {
    call_void("__hipRegisterTexture", || {
        crate::texref::register_reference(
            modules,
            var,
            device_var,
            std::mem::size_of::<crate::texture::textureReference>(),
        )
    })
}

/// `void __hipUnregisterFatBinary(void** modules)`.
#[export]
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
pub(crate) fn fat_binary_id(handle: *mut *mut c_void) -> Result<u64, Failure> {
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
#[export]
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
#[export]
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
