//! Checked calls: one Rust function per HSA runtime function a loader backend uses, each
//! returning `Result<_, HsaError>` that names the C call and its status.
//!
//! This layer converts statuses, strings, out-parameters and callbacks; it does not own anything
//! (see [`crate::Hsa`] for that). A function the loaded library lacks gives an [`HsaError`] of
//! kind [`MissingFunction`](crate::HsaErrorKind::MissingFunction) instead of a panic. Callbacks
//! the runtime invokes catch panics at the C boundary.
//!
//! Functions that take runtime handles are `unsafe`: ROCr trusts a handle to be what it says
//! (it converts it to a pointer), so a stale or invented handle is undefined behaviour. Each
//! such function has the same contract, written once here: **every handle passed must have been
//! obtained from this runtime, under an `hsa_init` that has not been shut down, and must not have
//! been destroyed.**

use std::ffi::{c_char, c_void, CStr, CString};
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::bindings::*;
use crate::error::{status_description, HsaError, HsaErrorKind};
use crate::HsaLibrary;

/// Longest name or URI hsa-sys accepts from the runtime; longer lengths are reported as
/// [`HsaErrorKind::BadOutput`] instead of being allocated.
pub const MAX_NAME_LEN: usize = 1 << 20;

// Resolves `$name` in the library or returns the MissingFunction error from the calling function.
macro_rules! func {
    ($lib:expr, $name:ident) => {
        match &$lib.api.$name {
            Ok(f) => *f,
            Err(_) => return Err(HsaError::missing_function(stringify!($name), $lib.name())),
        }
    };
}

/// Types the runtime may write as an attribute value: plain data for which every bit pattern,
/// all zeros included, is a valid value.
///
/// # Safety
/// Implement only for types with no invalid bit patterns and no padding-sensitive invariants
/// (integers, arrays of them, `#[repr(C)]` structs of them).
pub unsafe trait InfoValue: Copy {}
// SAFETY: integers and arrays of bytes accept every bit pattern.
unsafe impl InfoValue for u8 {}
// SAFETY: as above.
unsafe impl InfoValue for u16 {}
// SAFETY: as above.
unsafe impl InfoValue for u32 {}
// SAFETY: as above.
unsafe impl InfoValue for u64 {}
// SAFETY: as above.
unsafe impl InfoValue for usize {}
// SAFETY: as above.
unsafe impl InfoValue for i64 {}
// SAFETY: as above.
unsafe impl<const N: usize> InfoValue for [u8; N] {}
// SAFETY: a repr(C) struct holding one u64.
unsafe impl InfoValue for hsa_agent_t {}

/// The runtime's own description of `status` (`hsa_status_string`), or `None` when the library
/// lacks the function or does not know the code.
pub fn status_string(lib: &HsaLibrary, status: hsa_status_t) -> Option<String> {
    let f = lib.api.hsa_status_string.as_ref().ok()?;
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: `text` is a valid out-pointer; the function takes no handles.
    let rc = unsafe { f(status, &mut text) };
    if rc != HSA_STATUS_SUCCESS || text.is_null() {
        return None;
    }
    // SAFETY: on success the runtime points `text` at a static NUL-terminated string.
    let s = unsafe { CStr::from_ptr(text) };
    Some(s.to_string_lossy().into_owned())
}

/// The error for `call` having returned `status`, with the runtime's message when it has one and
/// hsa-sys's description otherwise.
pub fn error_for(lib: &HsaLibrary, call: &'static str, status: hsa_status_t) -> HsaError {
    let message = match status_string(lib, status) {
        // ROCr's strings repeat the status name ("HSA_STATUS_ERROR_X: text"); Display shows it
        // already.
        Some(text) => match crate::status_name(status).and_then(|name| text.strip_prefix(name)) {
            Some(rest) => rest.trim_start_matches(':').trim_start().to_owned(),
            None => text,
        },
        None => status_description(status).to_owned(),
    };
    HsaError {
        call,
        status,
        message,
        kind: HsaErrorKind::Status,
    }
}

fn check(lib: &HsaLibrary, call: &'static str, status: hsa_status_t) -> Result<(), HsaError> {
    if status == HSA_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(error_for(lib, call, status))
    }
}

fn c_string(call: &'static str, what: &str, s: &str) -> Result<CString, HsaError> {
    CString::new(s).map_err(|e| {
        HsaError::invalid_argument(
            call,
            format!("{what} {s:?} has a NUL byte at offset {}", e.nul_position()),
        )
    })
}

fn c_options(call: &'static str, options: Option<&str>) -> Result<Option<CString>, HsaError> {
    options.map(|o| c_string(call, "options", o)).transpose()
}

fn options_ptr(options: &Option<CString>) -> *const c_char {
    options.as_ref().map_or(std::ptr::null(), |o| o.as_ptr())
}

// Reads an attribute into a zeroed T with `get`, which receives the out-pointer.
fn read_info<T: InfoValue>(
    lib: &HsaLibrary,
    call: &'static str,
    get: impl FnOnce(*mut c_void) -> hsa_status_t,
) -> Result<T, HsaError> {
    let mut value = MaybeUninit::<T>::zeroed();
    check(lib, call, get(value.as_mut_ptr().cast()))?;
    // SAFETY: zero is a valid T (InfoValue) and the runtime wrote at most size_of::<T>() bytes of
    // plain data (callers' contract: T is the attribute's type).
    Ok(unsafe { value.assume_init() })
}

// Reads a string attribute of `len` bytes (the runtime may or may not add a NUL) with `get`.
fn read_name(
    call: &'static str,
    len: u32,
    get: impl FnOnce(*mut c_void) -> hsa_status_t,
    lib: &HsaLibrary,
) -> Result<String, HsaError> {
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > MAX_NAME_LEN {
        return Err(HsaError::bad_output(
            call,
            format!("name length {len} exceeds the {MAX_NAME_LEN}-byte cap"),
        ));
    }
    // One spare byte so a runtime that writes a terminating NUL stays in bounds.
    let mut buf = vec![0u8; len + 1];
    check(lib, call, get(buf.as_mut_ptr().cast()))?;
    let end = buf.iter().take(len).position(|&b| b == 0).unwrap_or(len);
    buf.truncate(end);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

// ---------------------------------------------------------------------------------------------
// Collecting iteration callbacks.

struct Collector<T> {
    items: Vec<T>,
    panicked: bool,
    out_of_memory: bool,
}

impl<T> Collector<T> {
    fn new() -> Self {
        Collector {
            items: Vec::new(),
            panicked: false,
            out_of_memory: false,
        }
    }

    // Turns the iteration status into the collected items, preferring the callback's own failure.
    fn finish(
        self,
        lib: &HsaLibrary,
        call: &'static str,
        status: hsa_status_t,
    ) -> Result<Vec<T>, HsaError> {
        if self.panicked {
            return Err(HsaError::callback_panicked(call));
        }
        if self.out_of_memory {
            return Err(HsaError::bad_output(
                call,
                format!("could not store item {} of the iteration", self.items.len()),
            ));
        }
        check(lib, call, status)?;
        Ok(self.items)
    }
}

// Called from C. Never unwinds: a panic is caught, recorded and turned into an error status.
fn collect<T>(data: *mut c_void, item: T) -> hsa_status_t {
    // SAFETY: `data` is the `&mut Collector<T>` the iterating function below passed to the
    // runtime, which hands it back unchanged during that call only.
    let collector = unsafe { &mut *data.cast::<Collector<T>>() };
    guarded(collector, |c| {
        if c.items.try_reserve(1).is_err() {
            c.out_of_memory = true;
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        }
        c.items.push(item);
        HSA_STATUS_SUCCESS
    })
}

// Runs a callback body so that a panic never crosses the C boundary.
fn guarded<T>(
    c: &mut Collector<T>,
    body: impl FnOnce(&mut Collector<T>) -> hsa_status_t,
) -> hsa_status_t {
    match catch_unwind(AssertUnwindSafe(|| body(&mut *c))) {
        Ok(status) => status,
        Err(_) => {
            c.panicked = true;
            HSA_STATUS_ERROR
        }
    }
}

unsafe extern "C" fn collect_agent(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
    collect(data, agent)
}

unsafe extern "C" fn collect_isa(isa: hsa_isa_t, data: *mut c_void) -> hsa_status_t {
    collect(data, isa)
}

unsafe extern "C" fn collect_pool(pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t {
    collect(data, pool)
}

unsafe extern "C" fn collect_symbol(
    _exec: hsa_executable_t,
    _agent: hsa_agent_t,
    symbol: hsa_executable_symbol_t,
    data: *mut c_void,
) -> hsa_status_t {
    collect(data, symbol)
}

unsafe extern "C" fn collect_loaded_code_object(
    _exec: hsa_executable_t,
    object: hsa_loaded_code_object_t,
    data: *mut c_void,
) -> hsa_status_t {
    collect(data, object)
}

// ---------------------------------------------------------------------------------------------
// Runtime lifetime and system.

/// `hsa_init`: initialises the runtime (reference counted: each success needs one
/// [`shut_down`]).
///
/// # Errors
/// Without an AMD GPU driver (no `/dev/kfd`) ROCr returns `HSA_STATUS_ERROR_OUT_OF_RESOURCES`.
pub fn init(lib: &HsaLibrary) -> Result<(), HsaError> {
    let f = func!(lib, hsa_init);
    // SAFETY: takes no arguments.
    let status = unsafe { f() };
    tracing::debug!(status, "hsa_init");
    check(lib, "hsa_init", status).map_err(|mut e| {
        // The usual cause on machines without an AMD GPU; say so when it is the case.
        if status == HSA_STATUS_ERROR_OUT_OF_RESOURCES && !std::path::Path::new("/dev/kfd").exists()
        {
            e.message
                .push_str(" [/dev/kfd does not exist: no AMD GPU kernel driver is loaded]");
        }
        e
    })
}

/// `hsa_shut_down`: drops one reference taken by [`init`].
///
/// # Safety
/// The caller owns one successful [`init`] and gives it up: no handle obtained under it may be
/// used afterwards unless another reference keeps the runtime open.
pub unsafe fn shut_down(lib: &HsaLibrary) -> Result<(), HsaError> {
    let f = func!(lib, hsa_shut_down);
    // SAFETY: takes no arguments; the contract above covers outstanding handles.
    let status = unsafe { f() };
    check(lib, "hsa_shut_down", status)
}

/// `hsa_system_get_info` for an attribute of type `T`.
///
/// # Safety
/// `T` must be the attribute's type as documented in `hsa.h` (or a larger `InfoValue`).
pub unsafe fn system_get_info<T: InfoValue>(
    lib: &HsaLibrary,
    attribute: hsa_system_info_t,
) -> Result<T, HsaError> {
    let f = func!(lib, hsa_system_get_info);
    // SAFETY: the out-pointer has room for T, which the contract makes the attribute's type.
    read_info(lib, "hsa_system_get_info", |v| unsafe { f(attribute, v) })
}

/// `hsa_system_major_extension_supported`: the supported minor version of `extension` at
/// `version_major`, or `None` when it is not supported.
pub fn system_major_extension_supported(
    lib: &HsaLibrary,
    extension: hsa_extension_t,
    version_major: u16,
) -> Result<Option<u16>, HsaError> {
    let f = func!(lib, hsa_system_major_extension_supported);
    let call = "hsa_system_major_extension_supported";
    let extension = u16::try_from(extension).map_err(|_| {
        HsaError::invalid_argument(
            call,
            format!("extension {extension} does not fit in 16 bits"),
        )
    })?;
    let mut minor: u16 = 0;
    let mut supported = false;
    // SAFETY: plain values and valid out-pointers; C `bool` is written as 0 or 1.
    let status = unsafe { f(extension, version_major, &mut minor, &mut supported) };
    check(lib, call, status)?;
    Ok(supported.then_some(minor))
}

/// `hsa_system_get_major_extension_table`: fills a function table of type `T`.
///
/// # Safety
/// `T` must be the table type of `extension` at `version_major` (a struct of optional function
/// pointers, for which all zeros is valid).
pub unsafe fn system_get_major_extension_table<T: Copy>(
    lib: &HsaLibrary,
    extension: hsa_extension_t,
    version_major: u16,
) -> Result<T, HsaError> {
    let f = func!(lib, hsa_system_get_major_extension_table);
    let call = "hsa_system_get_major_extension_table";
    let extension = u16::try_from(extension).map_err(|_| {
        HsaError::invalid_argument(
            call,
            format!("extension {extension} does not fit in 16 bits"),
        )
    })?;
    let mut table = MaybeUninit::<T>::zeroed();
    // SAFETY: the runtime writes at most `size_of::<T>()` bytes of function pointers.
    let status = unsafe {
        f(
            extension,
            version_major,
            std::mem::size_of::<T>(),
            table.as_mut_ptr().cast(),
        )
    };
    check(lib, call, status)?;
    // SAFETY: zeroed, then filled with function pointers or left as null (None), per the contract.
    Ok(unsafe { table.assume_init() })
}

// ---------------------------------------------------------------------------------------------
// Agents and ISAs.

/// `hsa_iterate_agents`: every agent the runtime knows, in its order.
pub fn iterate_agents(lib: &HsaLibrary) -> Result<Vec<hsa_agent_t>, HsaError> {
    let f = func!(lib, hsa_iterate_agents);
    let mut c = Collector::new();
    // SAFETY: the callback matches the C signature, catches panics, and `c` outlives the call.
    let status = unsafe {
        f(
            Some(collect_agent),
            (&mut c as *mut Collector<hsa_agent_t>).cast(),
        )
    };
    c.finish(lib, "hsa_iterate_agents", status)
}

/// `hsa_agent_get_info` for an attribute of type `T`.
///
/// # Safety
/// Module contract for `agent`; `T` must be the attribute's type (or a larger `InfoValue`).
pub unsafe fn agent_get_info<T: InfoValue>(
    lib: &HsaLibrary,
    agent: hsa_agent_t,
    attribute: hsa_agent_info_t,
) -> Result<T, HsaError> {
    let f = func!(lib, hsa_agent_get_info);
    // SAFETY: contract above.
    read_info(lib, "hsa_agent_get_info", |v| unsafe {
        f(agent, attribute, v)
    })
}

/// The agent's name (`HSA_AGENT_INFO_NAME`, e.g. `gfx1030` for a GPU).
///
/// # Safety
/// Module contract for `agent`.
pub unsafe fn agent_name(lib: &HsaLibrary, agent: hsa_agent_t) -> Result<String, HsaError> {
    // SAFETY: the attribute is a char[64].
    let raw: [u8; 64] = unsafe { agent_get_info(lib, agent, HSA_AGENT_INFO_NAME)? };
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
}

/// The agent's device type (`HSA_AGENT_INFO_DEVICE`: `HSA_DEVICE_TYPE_CPU`, `_GPU`, `_DSP`).
///
/// # Safety
/// Module contract for `agent`.
pub unsafe fn agent_device_type(
    lib: &HsaLibrary,
    agent: hsa_agent_t,
) -> Result<hsa_device_type_t, HsaError> {
    // SAFETY: the attribute is an hsa_device_type_t (a C enum, 32 bits).
    unsafe { agent_get_info::<u32>(lib, agent, HSA_AGENT_INFO_DEVICE) }
}

/// `hsa_agent_iterate_isas`: the ISAs the agent supports, best first.
///
/// # Safety
/// Module contract for `agent`.
pub unsafe fn agent_isas(lib: &HsaLibrary, agent: hsa_agent_t) -> Result<Vec<hsa_isa_t>, HsaError> {
    let f = func!(lib, hsa_agent_iterate_isas);
    let mut c = Collector::new();
    // SAFETY: contract above; the callback catches panics and `c` outlives the call.
    let status = unsafe {
        f(
            agent,
            Some(collect_isa),
            (&mut c as *mut Collector<hsa_isa_t>).cast(),
        )
    };
    c.finish(lib, "hsa_agent_iterate_isas", status)
}

/// `hsa_isa_get_info_alt` for an attribute of type `T`.
///
/// # Safety
/// Module contract for `isa`; `T` must be the attribute's type.
pub unsafe fn isa_get_info<T: InfoValue>(
    lib: &HsaLibrary,
    isa: hsa_isa_t,
    attribute: hsa_isa_info_t,
) -> Result<T, HsaError> {
    let f = func!(lib, hsa_isa_get_info_alt);
    // SAFETY: contract above.
    read_info(lib, "hsa_isa_get_info_alt", |v| unsafe {
        f(isa, attribute, v)
    })
}

/// The ISA's full name (`HSA_ISA_INFO_NAME`, e.g. `amdgcn-amd-amdhsa--gfx1030`).
///
/// # Safety
/// Module contract for `isa`.
pub unsafe fn isa_name(lib: &HsaLibrary, isa: hsa_isa_t) -> Result<String, HsaError> {
    let f = func!(lib, hsa_isa_get_info_alt);
    // SAFETY: NAME_LENGTH is a uint32_t.
    let len: u32 = unsafe { isa_get_info(lib, isa, HSA_ISA_INFO_NAME_LENGTH)? };
    // SAFETY: the buffer read_name passes holds `len` + 1 bytes.
    read_name(
        "hsa_isa_get_info_alt",
        len,
        |v| unsafe { f(isa, HSA_ISA_INFO_NAME, v) },
        lib,
    )
}

// ---------------------------------------------------------------------------------------------
// Memory pools.

/// `hsa_amd_agent_iterate_memory_pools`: the agent's memory pools.
///
/// # Safety
/// Module contract for `agent`.
pub unsafe fn agent_memory_pools(
    lib: &HsaLibrary,
    agent: hsa_agent_t,
) -> Result<Vec<hsa_amd_memory_pool_t>, HsaError> {
    let f = func!(lib, hsa_amd_agent_iterate_memory_pools);
    let mut c = Collector::new();
    // SAFETY: contract above; the callback catches panics and `c` outlives the call.
    let status = unsafe {
        f(
            agent,
            Some(collect_pool),
            (&mut c as *mut Collector<hsa_amd_memory_pool_t>).cast(),
        )
    };
    c.finish(lib, "hsa_amd_agent_iterate_memory_pools", status)
}

/// `hsa_amd_memory_pool_get_info` for an attribute of type `T`.
///
/// # Safety
/// Module contract for `pool`; `T` must be the attribute's type.
pub unsafe fn memory_pool_get_info<T: InfoValue>(
    lib: &HsaLibrary,
    pool: hsa_amd_memory_pool_t,
    attribute: hsa_amd_memory_pool_info_t,
) -> Result<T, HsaError> {
    let f = func!(lib, hsa_amd_memory_pool_get_info);
    // SAFETY: contract above.
    read_info(lib, "hsa_amd_memory_pool_get_info", |v| unsafe {
        f(pool, attribute, v)
    })
}

/// The pool's segment (`HSA_AMD_MEMORY_POOL_INFO_SEGMENT`, e.g. `HSA_AMD_SEGMENT_GLOBAL`).
///
/// # Safety
/// Module contract for `pool`.
pub unsafe fn memory_pool_segment(
    lib: &HsaLibrary,
    pool: hsa_amd_memory_pool_t,
) -> Result<hsa_amd_segment_t, HsaError> {
    // SAFETY: the attribute is an hsa_amd_segment_t (a C enum, 32 bits).
    unsafe { memory_pool_get_info::<u32>(lib, pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT) }
}

/// The global pool's flags (`HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS`, a mask of
/// `HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_*`; kernarg memory comes from a pool with `KERNARG_INIT`).
///
/// # Safety
/// Module contract for `pool`.
pub unsafe fn memory_pool_global_flags(
    lib: &HsaLibrary,
    pool: hsa_amd_memory_pool_t,
) -> Result<u32, HsaError> {
    // SAFETY: the attribute is a uint32_t.
    unsafe { memory_pool_get_info::<u32>(lib, pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS) }
}

/// Whether [`memory_pool_allocate`] may allocate from the pool
/// (`HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED`).
///
/// # Safety
/// Module contract for `pool`.
pub unsafe fn memory_pool_alloc_allowed(
    lib: &HsaLibrary,
    pool: hsa_amd_memory_pool_t,
) -> Result<bool, HsaError> {
    // SAFETY: the attribute is a C bool, one byte.
    let v: u8 =
        unsafe { memory_pool_get_info(lib, pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED)? };
    Ok(v != 0)
}

/// `hsa_amd_memory_pool_allocate`: `size` bytes from `pool`.
///
/// # Safety
/// Module contract for `pool`; the memory must be released with [`memory_pool_free`].
pub unsafe fn memory_pool_allocate(
    lib: &HsaLibrary,
    pool: hsa_amd_memory_pool_t,
    size: usize,
    flags: u32,
) -> Result<*mut c_void, HsaError> {
    let f = func!(lib, hsa_amd_memory_pool_allocate);
    let mut ptr: *mut c_void = std::ptr::null_mut();
    // SAFETY: contract above; `ptr` is a valid out-pointer.
    let status = unsafe { f(pool, size, flags, &mut ptr) };
    check(lib, "hsa_amd_memory_pool_allocate", status)?;
    Ok(ptr)
}

/// `hsa_amd_memory_pool_free`.
///
/// # Safety
/// `ptr` came from [`memory_pool_allocate`] and is not used afterwards.
pub unsafe fn memory_pool_free(lib: &HsaLibrary, ptr: *mut c_void) -> Result<(), HsaError> {
    let f = func!(lib, hsa_amd_memory_pool_free);
    // SAFETY: contract above.
    let status = unsafe { f(ptr) };
    check(lib, "hsa_amd_memory_pool_free", status)
}

/// `hsa_amd_agents_allow_access`: lets `agents` access the allocation at `ptr`.
///
/// # Safety
/// Module contract for `agents`; `ptr` came from [`memory_pool_allocate`].
pub unsafe fn agents_allow_access(
    lib: &HsaLibrary,
    agents: &[hsa_agent_t],
    ptr: *const c_void,
) -> Result<(), HsaError> {
    let f = func!(lib, hsa_amd_agents_allow_access);
    let call = "hsa_amd_agents_allow_access";
    let n = u32::try_from(agents.len()).map_err(|_| {
        HsaError::invalid_argument(
            call,
            format!("{} agents do not fit in 32 bits", agents.len()),
        )
    })?;
    // SAFETY: contract above; `agents` has `n` elements; flags must be NULL per the header.
    let status = unsafe { f(n, agents.as_ptr(), std::ptr::null(), ptr) };
    check(lib, call, status)
}

/// `hsa_amd_ipc_memory_create`: a handle another process attaches to reach the `len` bytes of
/// pool memory at `ptr` (`len` a multiple of the pool's allocation granule).
///
/// # Safety
/// `ptr` came from [`memory_pool_allocate`] and its allocation holds `len` bytes.
pub unsafe fn ipc_memory_create(
    lib: &HsaLibrary,
    ptr: *mut c_void,
    len: usize,
) -> Result<hsa_amd_ipc_memory_t, HsaError> {
    let f = func!(lib, hsa_amd_ipc_memory_create);
    let mut handle = hsa_amd_ipc_memory_t { handle: [0; 8] };
    // SAFETY: contract above; `handle` is a valid out-parameter.
    let status = unsafe { f(ptr, len, &mut handle) };
    check(lib, "hsa_amd_ipc_memory_create", status)?;
    Ok(handle)
}

/// `hsa_amd_ipc_memory_attach`: maps the memory another process's `handle` names, of `len`
/// bytes, for `agents`; returns its address here.
///
/// # Safety
/// Module contract for `agents`; the result is released with [`ipc_memory_detach`].
pub unsafe fn ipc_memory_attach(
    lib: &HsaLibrary,
    handle: &hsa_amd_ipc_memory_t,
    len: usize,
    agents: &[hsa_agent_t],
) -> Result<*mut c_void, HsaError> {
    let f = func!(lib, hsa_amd_ipc_memory_attach);
    let call = "hsa_amd_ipc_memory_attach";
    let n = u32::try_from(agents.len())
        .map_err(|_| HsaError::invalid_argument(call, "too many agents".to_owned()))?;
    let mut ptr: *mut c_void = std::ptr::null_mut();
    // SAFETY: contract above; `agents` has `n` elements; `ptr` is a valid out-parameter.
    let status = unsafe { f(handle, len, n, agents.as_ptr(), &mut ptr) };
    check(lib, call, status)?;
    Ok(ptr)
}

/// `hsa_amd_ipc_memory_detach`.
///
/// # Safety
/// `ptr` came from [`ipc_memory_attach`] and is not used afterwards.
pub unsafe fn ipc_memory_detach(lib: &HsaLibrary, ptr: *mut c_void) -> Result<(), HsaError> {
    let f = func!(lib, hsa_amd_ipc_memory_detach);
    // SAFETY: contract above.
    let status = unsafe { f(ptr) };
    check(lib, "hsa_amd_ipc_memory_detach", status)
}

// ---------------------------------------------------------------------------------------------
// Code objects and executables.

/// `hsa_code_object_reader_create_from_memory`.
///
/// # Safety
/// The runtime keeps a pointer to `code_object` without copying it: the bytes must stay alive
/// and unchanged until [`code_object_reader_destroy`].
pub unsafe fn code_object_reader_create_from_memory(
    lib: &HsaLibrary,
    code_object: &[u8],
) -> Result<hsa_code_object_reader_t, HsaError> {
    let f = func!(lib, hsa_code_object_reader_create_from_memory);
    let mut reader = hsa_code_object_reader_t { handle: 0 };
    // SAFETY: pointer and length describe `code_object`; its lifetime is the caller's contract.
    let status = unsafe { f(code_object.as_ptr().cast(), code_object.len(), &mut reader) };
    check(lib, "hsa_code_object_reader_create_from_memory", status)?;
    Ok(reader)
}

/// `hsa_code_object_reader_destroy`.
///
/// # Safety
/// Module contract for `reader`; it is not used afterwards.
pub unsafe fn code_object_reader_destroy(
    lib: &HsaLibrary,
    reader: hsa_code_object_reader_t,
) -> Result<(), HsaError> {
    let f = func!(lib, hsa_code_object_reader_destroy);
    // SAFETY: contract above.
    let status = unsafe { f(reader) };
    check(lib, "hsa_code_object_reader_destroy", status)
}

/// `hsa_executable_create_alt`: a new, unfrozen executable.
pub fn executable_create_alt(
    lib: &HsaLibrary,
    profile: hsa_profile_t,
    rounding: hsa_default_float_rounding_mode_t,
    options: Option<&str>,
) -> Result<hsa_executable_t, HsaError> {
    let f = func!(lib, hsa_executable_create_alt);
    let call = "hsa_executable_create_alt";
    let options = c_options(call, options)?;
    let mut exec = hsa_executable_t { handle: 0 };
    // SAFETY: enum values are checked by the runtime; options is NULL or a C string; `exec` is
    // a valid out-pointer.
    let status = unsafe { f(profile, rounding, options_ptr(&options), &mut exec) };
    check(lib, call, status)?;
    Ok(exec)
}

/// `hsa_executable_load_agent_code_object`: loads the reader's code object for `agent`.
///
/// # Safety
/// Module contract for `exec`, `agent` and `reader`.
pub unsafe fn executable_load_agent_code_object(
    lib: &HsaLibrary,
    exec: hsa_executable_t,
    agent: hsa_agent_t,
    reader: hsa_code_object_reader_t,
    options: Option<&str>,
) -> Result<hsa_loaded_code_object_t, HsaError> {
    let f = func!(lib, hsa_executable_load_agent_code_object);
    let call = "hsa_executable_load_agent_code_object";
    let options = c_options(call, options)?;
    let mut loaded = hsa_loaded_code_object_t { handle: 0 };
    // SAFETY: contract above; options is NULL or a C string; `loaded` is a valid out-pointer.
    let status = unsafe { f(exec, agent, reader, options_ptr(&options), &mut loaded) };
    check(lib, call, status)?;
    Ok(loaded)
}

/// `hsa_executable_agent_global_variable_define`: publishes `name` at `address` for `agent`,
/// so that code objects loaded later resolve their undefined `name` to it.
///
/// # Safety
/// Module contract for `exec` and `agent`; `address` must be valid for the agent for as long as
/// the executable uses it.
pub unsafe fn executable_agent_global_variable_define(
    lib: &HsaLibrary,
    exec: hsa_executable_t,
    agent: hsa_agent_t,
    name: &str,
    address: *mut c_void,
) -> Result<(), HsaError> {
    let f = func!(lib, hsa_executable_agent_global_variable_define);
    let call = "hsa_executable_agent_global_variable_define";
    let name = c_string(call, "variable name", name)?;
    // SAFETY: contract above; `name` is a C string alive for the call.
    let status = unsafe { f(exec, agent, name.as_ptr(), address) };
    check(lib, call, status)
}

/// `hsa_executable_freeze`: no more loading; device contents become valid.
///
/// # Safety
/// Module contract for `exec`.
pub unsafe fn executable_freeze(
    lib: &HsaLibrary,
    exec: hsa_executable_t,
    options: Option<&str>,
) -> Result<(), HsaError> {
    let f = func!(lib, hsa_executable_freeze);
    let call = "hsa_executable_freeze";
    let options = c_options(call, options)?;
    // SAFETY: contract above.
    let status = unsafe { f(exec, options_ptr(&options)) };
    check(lib, call, status)
}

/// `hsa_executable_destroy`.
///
/// # Safety
/// Module contract for `exec`; neither it nor its symbols are used afterwards.
pub unsafe fn executable_destroy(lib: &HsaLibrary, exec: hsa_executable_t) -> Result<(), HsaError> {
    let f = func!(lib, hsa_executable_destroy);
    // SAFETY: contract above.
    let status = unsafe { f(exec) };
    check(lib, "hsa_executable_destroy", status)
}

/// `hsa_executable_get_symbol_by_name`: `name` (a kernel is found by its `.kd` name) for
/// `agent`, or a program symbol when `agent` is `None`.
///
/// # Safety
/// Module contract for `exec` and `agent`.
pub unsafe fn executable_get_symbol_by_name(
    lib: &HsaLibrary,
    exec: hsa_executable_t,
    name: &str,
    agent: Option<hsa_agent_t>,
) -> Result<hsa_executable_symbol_t, HsaError> {
    let f = func!(lib, hsa_executable_get_symbol_by_name);
    let call = "hsa_executable_get_symbol_by_name";
    let c_name = c_string(call, "symbol name", name)?;
    let agent_ptr = agent
        .as_ref()
        .map_or(std::ptr::null(), |a| a as *const hsa_agent_t);
    let mut symbol = hsa_executable_symbol_t { handle: 0 };
    // SAFETY: contract above; `c_name` and `agent` outlive the call; `symbol` is an out-pointer.
    let status = unsafe { f(exec, c_name.as_ptr(), agent_ptr, &mut symbol) };
    check(lib, call, status).map_err(|mut e| {
        e.message = format!("{} (symbol {name:?})", e.message);
        e
    })?;
    Ok(symbol)
}

/// `hsa_executable_iterate_agent_symbols`: the executable's symbols for `agent`.
///
/// # Safety
/// Module contract for `exec` and `agent`.
pub unsafe fn executable_agent_symbols(
    lib: &HsaLibrary,
    exec: hsa_executable_t,
    agent: hsa_agent_t,
) -> Result<Vec<hsa_executable_symbol_t>, HsaError> {
    let f = func!(lib, hsa_executable_iterate_agent_symbols);
    let mut c = Collector::new();
    // SAFETY: contract above; the callback catches panics and `c` outlives the call.
    let status = unsafe {
        f(
            exec,
            agent,
            Some(collect_symbol),
            (&mut c as *mut Collector<hsa_executable_symbol_t>).cast(),
        )
    };
    c.finish(lib, "hsa_executable_iterate_agent_symbols", status)
}

/// `hsa_executable_symbol_get_info` for an attribute of type `T`.
///
/// # Safety
/// Module contract for `symbol`; `T` must be the attribute's type.
pub unsafe fn symbol_get_info<T: InfoValue>(
    lib: &HsaLibrary,
    symbol: hsa_executable_symbol_t,
    attribute: hsa_executable_symbol_info_t,
) -> Result<T, HsaError> {
    let f = func!(lib, hsa_executable_symbol_get_info);
    // SAFETY: contract above.
    read_info(lib, "hsa_executable_symbol_get_info", |v| unsafe {
        f(symbol, attribute, v)
    })
}

/// The symbol's name (`HSA_EXECUTABLE_SYMBOL_INFO_NAME`).
///
/// # Safety
/// Module contract for `symbol`.
pub unsafe fn symbol_name(
    lib: &HsaLibrary,
    symbol: hsa_executable_symbol_t,
) -> Result<String, HsaError> {
    let f = func!(lib, hsa_executable_symbol_get_info);
    // SAFETY: NAME_LENGTH is a uint32_t.
    let len: u32 = unsafe { symbol_get_info(lib, symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH)? };
    // SAFETY: the buffer read_name passes holds `len` + 1 bytes.
    read_name(
        "hsa_executable_symbol_get_info",
        len,
        |v| unsafe { f(symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME, v) },
        lib,
    )
}

/// The symbol's kind (`HSA_EXECUTABLE_SYMBOL_INFO_TYPE`: `HSA_SYMBOL_KIND_VARIABLE`,
/// `_KERNEL`, `_INDIRECT_FUNCTION`).
///
/// # Safety
/// Module contract for `symbol`.
pub unsafe fn symbol_kind(
    lib: &HsaLibrary,
    symbol: hsa_executable_symbol_t,
) -> Result<hsa_symbol_kind_t, HsaError> {
    // SAFETY: the attribute is an hsa_symbol_kind_t (a C enum, 32 bits).
    unsafe { symbol_get_info::<u32>(lib, symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE) }
}

/// A variable symbol's address (`HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS`).
///
/// # Safety
/// Module contract for `symbol`.
pub unsafe fn symbol_variable_address(
    lib: &HsaLibrary,
    symbol: hsa_executable_symbol_t,
) -> Result<u64, HsaError> {
    // SAFETY: the attribute is a uint64_t.
    unsafe { symbol_get_info(lib, symbol, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS) }
}

/// What a dispatch of a kernel symbol needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelInfo {
    /// `HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT`: the address of the kernel descriptor.
    pub kernel_object: u64,
    /// `..._KERNEL_KERNARG_SEGMENT_SIZE` in bytes.
    pub kernarg_segment_size: u32,
    /// `..._KERNEL_KERNARG_SEGMENT_ALIGNMENT` in bytes.
    pub kernarg_segment_alignment: u32,
    /// `..._KERNEL_GROUP_SEGMENT_SIZE`: static LDS bytes.
    pub group_segment_size: u32,
    /// `..._KERNEL_PRIVATE_SEGMENT_SIZE`: scratch bytes per work-item.
    pub private_segment_size: u32,
    /// `..._KERNEL_DYNAMIC_CALLSTACK`: whether the private size is only a lower bound.
    pub dynamic_callstack: bool,
}

/// The dispatch attributes of a kernel symbol.
///
/// # Safety
/// Module contract for `symbol`, which must be a kernel (the attributes are undefined otherwise).
pub unsafe fn kernel_info(
    lib: &HsaLibrary,
    symbol: hsa_executable_symbol_t,
) -> Result<KernelInfo, HsaError> {
    // SAFETY: (all reads) the types match hsa.h: u64 for the object, u32 for sizes, C bool (u8).
    unsafe {
        Ok(KernelInfo {
            kernel_object: symbol_get_info(lib, symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT)?,
            kernarg_segment_size: symbol_get_info(
                lib,
                symbol,
                HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
            )?,
            kernarg_segment_alignment: symbol_get_info(
                lib,
                symbol,
                HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT,
            )?,
            group_segment_size: symbol_get_info(
                lib,
                symbol,
                HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
            )?,
            private_segment_size: symbol_get_info(
                lib,
                symbol,
                HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
            )?,
            dynamic_callstack: symbol_get_info::<u8>(
                lib,
                symbol,
                HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK,
            )? != 0,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The hsa_ven_amd_loader extension.

/// The `hsa_ven_amd_loader` 1.01 function table, obtained with [`amd_loader_table`].
/// Entries the runtime left empty give [`HsaErrorKind::MissingFunction`].
#[derive(Clone, Copy)]
pub struct AmdLoaderTable<'lib> {
    lib: &'lib HsaLibrary,
    table: hsa_ven_amd_loader_1_01_pfn_t,
}

impl std::fmt::Debug for AmdLoaderTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AmdLoaderTable")
            .field("library", &self.lib.name())
            .finish_non_exhaustive()
    }
}

const LOADER_TABLE: &str = "the hsa_ven_amd_loader 1.01 table";

macro_rules! entry {
    ($self:expr, $name:ident) => {
        match $self.table.$name {
            Some(f) => f,
            None => return Err(HsaError::missing_function(stringify!($name), LOADER_TABLE)),
        }
    };
}

/// `hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, ..)`: the loader
/// extension's 1.01 table. Needs an initialised runtime.
pub fn amd_loader_table(lib: &HsaLibrary) -> Result<AmdLoaderTable<'_>, HsaError> {
    // SAFETY: hsa_ven_amd_loader_1_01_pfn_t is the version-1 table type: a struct of
    // Option<fn> fields, for which zero (None) is valid.
    let table = unsafe {
        system_get_major_extension_table::<hsa_ven_amd_loader_1_01_pfn_t>(
            lib,
            HSA_EXTENSION_AMD_LOADER,
            1,
        )?
    };
    Ok(AmdLoaderTable { lib, table })
}

impl AmdLoaderTable<'_> {
    /// `hsa_ven_amd_loader_query_host_address`: the host address of the copy the loader keeps of
    /// a device address inside a loaded code object.
    ///
    /// # Safety
    /// `device_address` must point into a code object loaded by this runtime.
    pub unsafe fn query_host_address(
        &self,
        device_address: *const c_void,
    ) -> Result<*const c_void, HsaError> {
        let f = entry!(self, hsa_ven_amd_loader_query_host_address);
        let mut host: *const c_void = std::ptr::null();
        // SAFETY: contract above; `host` is a valid out-pointer.
        let status = unsafe { f(device_address, &mut host) };
        check(self.lib, "hsa_ven_amd_loader_query_host_address", status)?;
        Ok(host)
    }

    /// `hsa_ven_amd_loader_executable_iterate_loaded_code_objects`: the executable's loaded code
    /// objects, in load order.
    ///
    /// # Safety
    /// Module contract for `exec`.
    pub unsafe fn loaded_code_objects(
        &self,
        exec: hsa_executable_t,
    ) -> Result<Vec<hsa_loaded_code_object_t>, HsaError> {
        let f = entry!(
            self,
            hsa_ven_amd_loader_executable_iterate_loaded_code_objects
        );
        let mut c = Collector::new();
        // SAFETY: contract above; the callback catches panics and `c` outlives the call.
        let status = unsafe {
            f(
                exec,
                Some(collect_loaded_code_object),
                (&mut c as *mut Collector<hsa_loaded_code_object_t>).cast(),
            )
        };
        c.finish(
            self.lib,
            "hsa_ven_amd_loader_executable_iterate_loaded_code_objects",
            status,
        )
    }

    /// `hsa_ven_amd_loader_loaded_code_object_get_info` for an attribute of type `T`.
    ///
    /// # Safety
    /// Module contract for `object`; `T` must be the attribute's type.
    pub unsafe fn loaded_code_object_get_info<T: InfoValue>(
        &self,
        object: hsa_loaded_code_object_t,
        attribute: hsa_ven_amd_loader_loaded_code_object_info_t,
    ) -> Result<T, HsaError> {
        let f = entry!(self, hsa_ven_amd_loader_loaded_code_object_get_info);
        // SAFETY: contract above.
        read_info(
            self.lib,
            "hsa_ven_amd_loader_loaded_code_object_get_info",
            |v| unsafe { f(object, attribute, v) },
        )
    }

    /// `LOAD_BASE`: where the code object's segments start in device memory.
    ///
    /// # Safety
    /// Module contract for `object`.
    pub unsafe fn load_base(&self, object: hsa_loaded_code_object_t) -> Result<u64, HsaError> {
        // SAFETY: the attribute is a uint64_t.
        unsafe {
            self.loaded_code_object_get_info(
                object,
                HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE,
            )
        }
    }

    /// `LOAD_SIZE`: bytes of device memory the code object occupies.
    ///
    /// # Safety
    /// Module contract for `object`.
    pub unsafe fn load_size(&self, object: hsa_loaded_code_object_t) -> Result<u64, HsaError> {
        // SAFETY: the attribute is a uint64_t.
        unsafe {
            self.loaded_code_object_get_info(
                object,
                HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE,
            )
        }
    }

    /// `LOAD_DELTA`: load address minus ELF virtual address (add to `st_value`).
    ///
    /// # Safety
    /// Module contract for `object`.
    pub unsafe fn load_delta(&self, object: hsa_loaded_code_object_t) -> Result<i64, HsaError> {
        // SAFETY: the attribute is an int64_t.
        unsafe {
            self.loaded_code_object_get_info(
                object,
                HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA,
            )
        }
    }

    /// `URI`: where the code object came from (`file://…` or `memory://…`).
    ///
    /// # Safety
    /// Module contract for `object`.
    pub unsafe fn uri(&self, object: hsa_loaded_code_object_t) -> Result<String, HsaError> {
        let f = entry!(self, hsa_ven_amd_loader_loaded_code_object_get_info);
        // SAFETY: URI_LENGTH is a uint32_t.
        let len: u32 = unsafe {
            self.loaded_code_object_get_info(
                object,
                HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH,
            )?
        };
        read_name(
            "hsa_ven_amd_loader_loaded_code_object_get_info",
            len,
            // SAFETY: the buffer read_name passes holds `len` + 1 bytes.
            |v| unsafe { f(object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI, v) },
            self.lib,
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Signals and queues.

/// `hsa_signal_create` with `initial` value; `consumers` empty means any agent may wait.
///
/// # Safety
/// Module contract for `consumers`.
pub unsafe fn signal_create(
    lib: &HsaLibrary,
    initial: hsa_signal_value_t,
    consumers: &[hsa_agent_t],
) -> Result<hsa_signal_t, HsaError> {
    let f = func!(lib, hsa_signal_create);
    let call = "hsa_signal_create";
    let n = u32::try_from(consumers.len()).map_err(|_| {
        HsaError::invalid_argument(
            call,
            format!("{} consumers do not fit in 32 bits", consumers.len()),
        )
    })?;
    let ptr = if consumers.is_empty() {
        std::ptr::null()
    } else {
        consumers.as_ptr()
    };
    let mut signal = hsa_signal_t { handle: 0 };
    // SAFETY: contract above; `ptr` has `n` elements or is NULL with n = 0.
    let status = unsafe { f(initial, n, ptr, &mut signal) };
    check(lib, call, status)?;
    Ok(signal)
}

/// `hsa_signal_destroy`.
///
/// # Safety
/// Module contract for `signal`; it is not used afterwards.
pub unsafe fn signal_destroy(lib: &HsaLibrary, signal: hsa_signal_t) -> Result<(), HsaError> {
    let f = func!(lib, hsa_signal_destroy);
    // SAFETY: contract above.
    let status = unsafe { f(signal) };
    check(lib, "hsa_signal_destroy", status)
}

/// `hsa_signal_load_scacquire`: the signal's current value.
///
/// # Safety
/// Module contract for `signal`.
pub unsafe fn signal_load_scacquire(
    lib: &HsaLibrary,
    signal: hsa_signal_t,
) -> Result<hsa_signal_value_t, HsaError> {
    let f = func!(lib, hsa_signal_load_scacquire);
    // SAFETY: contract above.
    Ok(unsafe { f(signal) })
}

/// `hsa_signal_store_screlease`: sets the signal's value.
///
/// # Safety
/// Module contract for `signal`.
pub unsafe fn signal_store_screlease(
    lib: &HsaLibrary,
    signal: hsa_signal_t,
    value: hsa_signal_value_t,
) -> Result<(), HsaError> {
    let f = func!(lib, hsa_signal_store_screlease);
    // SAFETY: contract above.
    unsafe { f(signal, value) };
    Ok(())
}

/// `hsa_signal_wait_scacquire`: waits until `condition` holds against `compare` (or the runtime
/// gives up after about `timeout_hint` ticks) and returns the observed value.
///
/// # Safety
/// Module contract for `signal`.
pub unsafe fn signal_wait_scacquire(
    lib: &HsaLibrary,
    signal: hsa_signal_t,
    condition: hsa_signal_condition_t,
    compare: hsa_signal_value_t,
    timeout_hint: u64,
    wait_state: hsa_wait_state_t,
) -> Result<hsa_signal_value_t, HsaError> {
    let f = func!(lib, hsa_signal_wait_scacquire);
    // SAFETY: contract above.
    Ok(unsafe { f(signal, condition, compare, timeout_hint, wait_state) })
}

/// What a queue's error callback runs: the status ROCr reports for the queue
/// (`HSA_STATUS_ERROR_EXCEPTION`, `..._MEMORY_APERTURE_VIOLATION`, `..._ILLEGAL_INSTRUCTION`,
/// ...). After it the queue is suspended: nothing more runs on it and the completion signals
/// of the packets in it never change, so whoever waits on them must be told.
pub struct QueueErrorCallback {
    f: Box<dyn Fn(hsa_status_t) + Send + Sync>,
}

impl QueueErrorCallback {
    /// Wraps `f`; a panic in it is caught at the C boundary and logged.
    pub fn new(f: impl Fn(hsa_status_t) + Send + Sync + 'static) -> Self {
        QueueErrorCallback { f: Box::new(f) }
    }
}

impl std::fmt::Debug for QueueErrorCallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QueueErrorCallback")
    }
}

// Called from C by the runtime when a queue fails. Never unwinds.
unsafe extern "C" fn queue_error_trampoline(
    status: hsa_status_t,
    _queue: *mut hsa_queue_t,
    data: *mut c_void,
) {
    if data.is_null() {
        return;
    }
    // SAFETY: `data` is the `&QueueErrorCallback` passed to `queue_create`, which the caller
    // keeps alive until after `queue_destroy` (its contract).
    let callback = unsafe { &*data.cast::<QueueErrorCallback>() };
    if catch_unwind(AssertUnwindSafe(|| (callback.f)(status))).is_err() {
        tracing::debug!(status, "queue error callback panicked (caught)");
    }
}

/// `hsa_queue_create`: a queue of `size` packets (a power of two) on `agent`, whose failures
/// run `on_error` (without one, a failing queue leaves every signal unchanged and waits on them
/// never end). `private_segment_size` and `group_segment_size` may be `u32::MAX` for "any".
///
/// # Safety
/// Module contract for `agent`; destroy the queue with [`queue_destroy`]; `on_error` must stay
/// alive (and at the same address) until the queue is destroyed.
pub unsafe fn queue_create(
    lib: &HsaLibrary,
    agent: hsa_agent_t,
    size: u32,
    queue_type: hsa_queue_type32_t,
    on_error: Option<&QueueErrorCallback>,
    private_segment_size: u32,
    group_segment_size: u32,
) -> Result<*mut hsa_queue_t, HsaError> {
    let f = func!(lib, hsa_queue_create);
    let mut queue: *mut hsa_queue_t = std::ptr::null_mut();
    let (callback, data): (
        Option<unsafe extern "C" fn(hsa_status_t, *mut hsa_queue_t, *mut c_void)>,
        *mut c_void,
    ) = match on_error {
        Some(cb) => (
            Some(queue_error_trampoline),
            (cb as *const QueueErrorCallback).cast_mut().cast(),
        ),
        None => (None, std::ptr::null_mut()),
    };
    // SAFETY: contract above; the trampoline matches the C signature and catches panics; `queue`
    // is an out-pointer.
    let status = unsafe {
        f(
            agent,
            size,
            queue_type,
            callback,
            data,
            private_segment_size,
            group_segment_size,
            &mut queue,
        )
    };
    check(lib, "hsa_queue_create", status)?;
    if queue.is_null() {
        return Err(HsaError::bad_output(
            "hsa_queue_create",
            "succeeded but returned a NULL queue".into(),
        ));
    }
    Ok(queue)
}

/// `hsa_queue_destroy`.
///
/// # Safety
/// `queue` came from [`queue_create`] and is not used afterwards.
pub unsafe fn queue_destroy(lib: &HsaLibrary, queue: *mut hsa_queue_t) -> Result<(), HsaError> {
    let f = func!(lib, hsa_queue_destroy);
    // SAFETY: contract above.
    let status = unsafe { f(queue) };
    check(lib, "hsa_queue_destroy", status)
}

/// `hsa_amd_queue_cu_set_mask`: the compute units the queue's dispatches may use, one bit per
/// CU in 32-bit words. `Ok(true)` when the runtime reduced the mask (`HSA_STATUS_CU_MASK_REDUCED`:
/// a global mask or the agent's CU count removed some bits).
///
/// # Safety
/// `queue` is a live queue from [`queue_create`].
pub unsafe fn queue_cu_set_mask(
    lib: &HsaLibrary,
    queue: *const hsa_queue_t,
    mask: &[u32],
) -> Result<bool, HsaError> {
    let f = func!(lib, hsa_amd_queue_cu_set_mask);
    let bits = u32::try_from(mask.len())
        .ok()
        .and_then(|n| n.checked_mul(32))
        .ok_or_else(|| {
            HsaError::invalid_argument(
                "hsa_amd_queue_cu_set_mask",
                format!("{} mask words do not fit a 32-bit bit count", mask.len()),
            )
        })?;
    // SAFETY: contract above; `mask` holds `bits / 32` words.
    let status = unsafe { f(queue, bits, mask.as_ptr()) };
    if status == crate::HSA_STATUS_CU_MASK_REDUCED {
        return Ok(true);
    }
    check(lib, "hsa_amd_queue_cu_set_mask", status).map(|()| false)
}

/// `hsa_queue_load_read_index_scacquire`.
///
/// # Safety
/// `queue` is a live queue from [`queue_create`].
pub unsafe fn queue_load_read_index_scacquire(
    lib: &HsaLibrary,
    queue: *const hsa_queue_t,
) -> Result<u64, HsaError> {
    let f = func!(lib, hsa_queue_load_read_index_scacquire);
    // SAFETY: contract above.
    Ok(unsafe { f(queue) })
}

/// `hsa_queue_load_write_index_relaxed`.
///
/// # Safety
/// `queue` is a live queue from [`queue_create`].
pub unsafe fn queue_load_write_index_relaxed(
    lib: &HsaLibrary,
    queue: *const hsa_queue_t,
) -> Result<u64, HsaError> {
    let f = func!(lib, hsa_queue_load_write_index_relaxed);
    // SAFETY: contract above.
    Ok(unsafe { f(queue) })
}

/// `hsa_queue_add_write_index_relaxed`: reserves `value` packet slots; returns the previous index.
///
/// # Safety
/// `queue` is a live queue from [`queue_create`].
pub unsafe fn queue_add_write_index_relaxed(
    lib: &HsaLibrary,
    queue: *const hsa_queue_t,
    value: u64,
) -> Result<u64, HsaError> {
    let f = func!(lib, hsa_queue_add_write_index_relaxed);
    // SAFETY: contract above.
    Ok(unsafe { f(queue, value) })
}

/// `hsa_queue_add_write_index_screlease`: as [`queue_add_write_index_relaxed`] with release order.
///
/// # Safety
/// `queue` is a live queue from [`queue_create`].
pub unsafe fn queue_add_write_index_screlease(
    lib: &HsaLibrary,
    queue: *const hsa_queue_t,
    value: u64,
) -> Result<u64, HsaError> {
    let f = func!(lib, hsa_queue_add_write_index_screlease);
    // SAFETY: contract above.
    Ok(unsafe { f(queue, value) })
}

/// `hsa_signal_subtract_screlease`.
///
/// # Safety
/// Module contract for `signal`.
pub unsafe fn signal_subtract_screlease(
    lib: &HsaLibrary,
    signal: hsa_signal_t,
    value: hsa_signal_value_t,
) -> Result<(), HsaError> {
    let f = func!(lib, hsa_signal_subtract_screlease);
    // SAFETY: contract above.
    unsafe { f(signal, value) };
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// System events.

/// An event the runtime reports through `hsa_amd_register_system_event_handler`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SystemEvent {
    /// `HSA_AMD_GPU_MEMORY_FAULT_EVENT`: a GPU accessed memory it may not.
    MemoryFault {
        /// The agent that faulted.
        agent: hsa_agent_t,
        /// The faulting virtual address (page granularity on real GPUs).
        address: u64,
        /// `HSA_AMD_MEMORY_FAULT_*` bits.
        reason: u32,
    },
    /// An event type hsa-sys does not decode.
    Other(u32),
}

/// What a system event handler runs. Registered handlers live as long as the process (ROCr
/// has no way to unregister them).
pub struct SystemEventHandler {
    f: Box<dyn Fn(SystemEvent) + Send + Sync>,
}

impl SystemEventHandler {
    /// Wraps `f`; a panic in it is caught at the C boundary.
    pub fn new(f: impl Fn(SystemEvent) + Send + Sync + 'static) -> Self {
        SystemEventHandler { f: Box::new(f) }
    }
}

impl std::fmt::Debug for SystemEventHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SystemEventHandler")
    }
}

unsafe extern "C" fn system_event_trampoline(
    event: *const hsa_amd_event_t,
    data: *mut c_void,
) -> hsa_status_t {
    if event.is_null() || data.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: `data` is the leaked `SystemEventHandler` registered below, alive forever.
    let handler = unsafe { &*data.cast::<SystemEventHandler>() };
    // SAFETY: the runtime passes a valid event for the duration of the call.
    let raw = unsafe { &*event };
    let decoded = if raw.event_type == HSA_AMD_GPU_MEMORY_FAULT_EVENT {
        // SAFETY: for this event type the union holds the memory fault description.
        let fault = unsafe { raw.__bindgen_anon_1.memory_fault };
        SystemEvent::MemoryFault {
            agent: fault.agent,
            address: fault.virtual_address,
            reason: fault.fault_reason_mask,
        }
    } else {
        SystemEvent::Other(raw.event_type)
    };
    match catch_unwind(AssertUnwindSafe(|| (handler.f)(decoded))) {
        Ok(()) => HSA_STATUS_SUCCESS,
        Err(_) => HSA_STATUS_ERROR,
    }
}

/// `hsa_amd_register_system_event_handler`: without a handler, ROCr reports a GPU memory
/// fault by printing it and aborting the process. The handler is leaked: the runtime may call
/// it until the process ends.
pub fn register_system_event_handler(
    lib: &HsaLibrary,
    handler: SystemEventHandler,
) -> Result<(), HsaError> {
    let f = func!(lib, hsa_amd_register_system_event_handler);
    let data: &'static SystemEventHandler = Box::leak(Box::new(handler));
    // SAFETY: the trampoline matches the C signature and catches panics; `data` lives forever.
    let status = unsafe {
        f(
            Some(system_event_trampoline),
            (data as *const SystemEventHandler).cast_mut().cast(),
        )
    };
    check(lib, "hsa_amd_register_system_event_handler", status)
}

// ---------------------------------------------------------------------------------------------
// Copies and host memory.

/// `hsa_memory_copy`: a synchronous copy of `size` bytes; either side may be device memory or
/// host memory (ROCr locks unregistered host memory for the copy).
///
/// # Safety
/// Both ranges must be valid for `size` bytes for the copy (device or host), and not overlap.
pub unsafe fn memory_copy(
    lib: &HsaLibrary,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
) -> Result<(), HsaError> {
    let f = func!(lib, hsa_memory_copy);
    // SAFETY: contract above.
    let status = unsafe { f(dst, src, size) };
    check(lib, "hsa_memory_copy", status)
}

/// `hsa_amd_memory_async_copy`: starts a copy of `size` bytes after `deps` reach 0; the runtime
/// decrements `completion` when it is done. Host-side ranges must be pool memory or locked
/// ([`memory_lock`]).
///
/// # Safety
/// Module contract for the agents and signals; both ranges must stay valid until `completion`
/// is decremented.
#[allow(clippy::too_many_arguments)]
pub unsafe fn memory_async_copy(
    lib: &HsaLibrary,
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    deps: &[hsa_signal_t],
    completion: hsa_signal_t,
) -> Result<(), HsaError> {
    let f = func!(lib, hsa_amd_memory_async_copy);
    let call = "hsa_amd_memory_async_copy";
    let n = u32::try_from(deps.len())
        .map_err(|_| HsaError::invalid_argument(call, format!("{} dependencies", deps.len())))?;
    let deps_ptr = if deps.is_empty() {
        std::ptr::null()
    } else {
        deps.as_ptr()
    };
    // SAFETY: contract above; `deps_ptr` has `n` elements or is NULL with n = 0.
    let status = unsafe {
        f(
            dst, dst_agent, src, src_agent, size, n, deps_ptr, completion,
        )
    };
    check(lib, call, status)
}

/// `hsa_amd_memory_lock`: pins `size` bytes of host memory at `host` for `agents` and returns
/// the address the agents use for it.
///
/// # Safety
/// Module contract for `agents`; `host` must be valid for `size` bytes until [`memory_unlock`].
pub unsafe fn memory_lock(
    lib: &HsaLibrary,
    host: *mut c_void,
    size: usize,
    agents: &[hsa_agent_t],
) -> Result<*mut c_void, HsaError> {
    let f = func!(lib, hsa_amd_memory_lock);
    let call = "hsa_amd_memory_lock";
    let n = std::os::raw::c_int::try_from(agents.len())
        .map_err(|_| HsaError::invalid_argument(call, format!("{} agents", agents.len())))?;
    let mut agent_ptr: *mut c_void = std::ptr::null_mut();
    // ROCr takes a non-const agent array but does not write it.
    let mut list = agents.to_vec();
    let list_ptr = if list.is_empty() {
        std::ptr::null_mut()
    } else {
        list.as_mut_ptr()
    };
    // SAFETY: contract above; `list_ptr` has `n` elements (or is NULL with 0: all agents).
    let status = unsafe { f(host, size, list_ptr, n, &mut agent_ptr) };
    check(lib, call, status)?;
    Ok(agent_ptr)
}

/// `hsa_amd_memory_unlock`.
///
/// # Safety
/// `host` was locked with [`memory_lock`] and no agent uses it any more.
pub unsafe fn memory_unlock(lib: &HsaLibrary, host: *mut c_void) -> Result<(), HsaError> {
    let f = func!(lib, hsa_amd_memory_unlock);
    // SAFETY: contract above.
    let status = unsafe { f(host) };
    check(lib, "hsa_amd_memory_unlock", status)
}

/// `hsa_amd_memory_fill`: writes `count` 32-bit copies of `value` at `ptr` (4-byte aligned).
///
/// # Safety
/// `ptr` is pool memory of this runtime valid for `count * 4` bytes.
pub unsafe fn memory_fill(
    lib: &HsaLibrary,
    ptr: *mut c_void,
    value: u32,
    count: usize,
) -> Result<(), HsaError> {
    let f = func!(lib, hsa_amd_memory_fill);
    // SAFETY: contract above.
    let status = unsafe { f(ptr, value, count) };
    check(lib, "hsa_amd_memory_fill", status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_callback_becomes_an_error_status_not_an_unwind() {
        let mut c: Collector<u32> = Collector::new();
        let status = guarded(&mut c, |_| panic!("callback bug"));
        assert_eq!(status, HSA_STATUS_ERROR);
        assert!(c.panicked);
    }

    #[test]
    fn collect_pushes_through_the_data_pointer() {
        let mut c: Collector<hsa_agent_t> = Collector::new();
        let data = (&mut c as *mut Collector<hsa_agent_t>).cast();
        // SAFETY: the trampoline gets the pointer the iterating functions give it.
        let status = unsafe { collect_agent(hsa_agent_t { handle: 7 }, data) };
        assert_eq!(status, HSA_STATUS_SUCCESS);
        assert_eq!(c.items, vec![hsa_agent_t { handle: 7 }]);
    }

    #[test]
    fn queue_error_callbacks_reach_the_closure_and_panics_stay_inside() {
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let s2 = seen.clone();
        let cb = QueueErrorCallback::new(move |status| {
            s2.store(status, std::sync::atomic::Ordering::SeqCst)
        });
        let data = (&cb as *const QueueErrorCallback).cast_mut().cast();
        // SAFETY: `data` is a live QueueErrorCallback, as queue_create would pass it.
        unsafe { queue_error_trampoline(HSA_STATUS_ERROR_EXCEPTION, std::ptr::null_mut(), data) };
        assert_eq!(
            seen.load(std::sync::atomic::Ordering::SeqCst),
            HSA_STATUS_ERROR_EXCEPTION
        );
        let boom = QueueErrorCallback::new(|_| panic!("callback bug"));
        let data = (&boom as *const QueueErrorCallback).cast_mut().cast();
        // SAFETY: as above; the panic is caught inside.
        unsafe { queue_error_trampoline(HSA_STATUS_ERROR, std::ptr::null_mut(), data) };
    }

    #[test]
    fn c_strings_with_nul_are_refused_before_any_call() {
        let e = c_string("hsa_executable_get_symbol_by_name", "symbol name", "k\0.kd").unwrap_err();
        assert_eq!(e.kind, HsaErrorKind::InvalidArgument);
        assert_eq!(e.status, HSA_STATUS_ERROR_INVALID_ARGUMENT);
        assert!(e.to_string().contains("offset 1"), "{e}");
    }
}
