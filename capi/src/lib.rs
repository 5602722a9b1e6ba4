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
//! One module per part of the HIP API: registration, modules and functions, launches, memory,
//! device variables, streams and events, devices; plus rocload's own API and tool hooks.
//! Everything is a thin translation to [`Runtime`]: argument checks and HIP's error codes
//! here, behaviour there.

#![allow(non_snake_case, non_upper_case_globals, clippy::missing_safety_doc)]

pub mod generation;
mod names;
mod procaddress;
mod profiling;
mod tools;
pub mod types;

/// The kinds of opaque handles librocload.so gives C callers (their tags): a handle of one
/// kind never passes for another.
pub(crate) mod kind {
    use rocload_ffi::Tag;
    /// `__hipRegisterFatBinary`'s `void**`.
    pub const FAT_BINARY: Tag = Tag(0xF1);
    /// `hipModule_t`.
    pub const MODULE: Tag = Tag(0xA2);
    /// `hipFunction_t`.
    pub const FUNCTION: Tag = Tag(0xC3);
    /// `hipStream_t`.
    pub const STREAM: Tag = Tag(0xB4);
    /// `hipEvent_t`.
    pub const EVENT: Tag = Tag(0xE5);
    /// `hipCtx_t`.
    pub const CONTEXT: Tag = Tag(0xD6);
    /// `hiprtcProgram`.
    pub const RTC_PROGRAM: Tag = Tag(0x97);
    /// `hipGraph_t`.
    pub const GRAPH: Tag = Tag(0x68);
    /// `hipGraphNode_t`.
    pub const GRAPH_NODE: Tag = Tag(0x69);
    /// `hipGraphExec_t`.
    pub const GRAPH_EXEC: Tag = Tag(0x6B);
    /// `hipUserObject_t`.
    pub const USER_OBJECT: Tag = Tag(0x75);
    /// `hipMemPool_t`.
    pub const MEM_POOL: Tag = Tag(0x3C);
    /// `hipExternalMemory_t`.
    pub const EXTERNAL_MEMORY: Tag = Tag(0x4D);
    /// `hipExternalSemaphore_t`.
    pub const EXTERNAL_SEMAPHORE: Tag = Tag(0x5E);
}

#[cfg(test)]
mod tests;

use rocload_ffi::export;
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use rocload_ffi::HandleTable;
use rocload_lib::device::{DeviceError, ExecutionError};
use rocload_lib::runtime::config::Config;
use rocload_lib::runtime::{KernelRef, Module, Runtime, RuntimeError};
use types::*;

thread_local! {
    /// What `hipGetLastError` returns (see [`returned`]).
    static LAST_ERROR: Cell<hipError_t> = const { Cell::new(hipSuccess) };
    /// HIP 7's "last command error": every call's status (`hipExtGetLastError`).
    static LAST_COMMAND_ERROR: Cell<hipError_t> = const { Cell::new(hipSuccess) };
    static LAST_MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
    static LAST_SELECTION: RefCell<String> = const { RefCell::new(String::new()) };
    /// The thread's device; -1 until it chooses one (then the first of `hipSetValidDevices`'
    /// list, or 0).
    static CURRENT_DEVICE: Cell<c_int> = const { Cell::new(-1) };
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
        RuntimeError::NullPointer { .. }
        | RuntimeError::ZeroSize { .. }
        | RuntimeError::BadAlignment { .. }
        | RuntimeError::TooLarge { .. }
        | RuntimeError::HostOutOfMemory { .. }
        | RuntimeError::LengthMismatch { .. }
        | RuntimeError::PitchTooSmall { .. }
        | RuntimeError::ExtentOverflow { .. }
        | RuntimeError::AddressWraps { .. }
        | RuntimeError::InvalidArray { .. }
        | RuntimeError::BadRegion { .. }
        | RuntimeError::HostMemory { .. }
        | RuntimeError::NotDeviceMemory { .. }
        | RuntimeError::InvalidRange { .. }
        | RuntimeError::MultiDevice { .. }
        | RuntimeError::StreamDeviceGone { .. }
        | RuntimeError::EventWithoutTiming
        | RuntimeError::EventNotRecorded
        | RuntimeError::Arguments(_) => hipErrorInvalidValue,
        // clr: a function with no code for the stream's device (hip_module.cpp,
        // ihipLaunchKernel_validate).
        RuntimeError::WrongDevice { .. } => hipErrorInvalidDevice,
        RuntimeError::InvalidConfiguration(_) => hipErrorInvalidConfiguration,
        RuntimeError::CooperativeLaunchTooLarge { .. } => hipErrorCooperativeLaunchTooLarge,
        RuntimeError::Device { error, .. } => device_code(error),
        RuntimeError::KernelFailed { error, .. } => execution_code(error),
        RuntimeError::Timeout { .. } => hipErrorLaunchTimeOut,
        RuntimeError::NotReady => hipErrorNotReady,
        RuntimeError::NotSupported { .. } => hipErrorNotSupported,
        RuntimeError::Graph(e) => match e {
            rocload_lib::runtime::GraphError::Update { .. } => {
                graph::hipErrorGraphExecUpdateFailure
            }
            _ => hipErrorInvalidValue,
        },
        RuntimeError::Capture(e) => capture::capture_code(e),
        RuntimeError::Pool(e) => pool_code(e),
        RuntimeError::Vmm { .. } => hipErrorInvalidValue,
        // clr: an IPC event handle opened in its own process, an event without
        // hipEventInterprocess asked for one.
        RuntimeError::IpcSameProcess { .. } => hipErrorInvalidContext,
        RuntimeError::NotInterprocess => hipErrorInvalidConfiguration,
        RuntimeError::RecorderGone { .. } => hipErrorLaunchFailure,
        _ => hipErrorUnknown,
    }
}

/// The `hipError_t` of a memory pool operation that cannot be done.
fn pool_code(e: &rocload_lib::runtime::PoolError) -> hipError_t {
    use rocload_lib::runtime::PoolError;
    match e {
        PoolError::OtherDevice { .. } | PoolError::OwnerAccess { .. } => hipErrorInvalidDevice,
        PoolError::PeerAccess { .. } => hipErrorNotSupported,
        _ => hipErrorInvalidValue,
    }
}

/// The `hipError_t` of a device operation that did not happen.
fn device_code(e: &DeviceError) -> hipError_t {
    match e {
        DeviceError::OutOfMemory { .. } | DeviceError::ScratchTooLarge { .. } => {
            hipErrorOutOfMemory
        }
        DeviceError::InvalidAddress { .. }
        | DeviceError::AlreadyFreed { .. }
        | DeviceError::Access(_) => hipErrorInvalidValue,
        DeviceError::Unsupported { .. } => hipErrorNotSupported,
        DeviceError::Timeout(_) => hipErrorLaunchTimeOut,
        DeviceError::Shared(e) if e.is_exhaustion() => hipErrorOutOfMemory,
        DeviceError::Shared(_) | DeviceError::Vmm { .. } => hipErrorInvalidValue,
        DeviceError::Runtime { status, .. } => hip_error_for_status(*status),
        _ => hipErrorUnknown,
    }
}

/// The sticky `hipError_t` of a failed kernel: a memory fault is an illegal address, a
/// dispatch the device could not give its scratch is out of memory (ROCr's
/// `HSA_STATUS_ERROR_OUT_OF_RESOURCES`), one the watchdog stopped a launch time-out, anything
/// else (trap, unsupported instruction, an internal failure) a launch failure.
fn execution_code(e: &ExecutionError) -> hipError_t {
    match e {
        ExecutionError::MemoryFault { .. } | ExecutionError::SegmentFault { .. } => {
            hipErrorIllegalAddress
        }
        ExecutionError::Resources { error, .. } => device_code(error),
        ExecutionError::Timeout { .. } => hipErrorLaunchTimeOut,
        ExecutionError::Queue { status, .. } => match hip_error_for_status(*status) {
            hipErrorUnknown => hipErrorLaunchFailure,
            code => code,
        },
        _ => hipErrorLaunchFailure,
    }
}

/// The `hipError_t` a HIP program sees for an `hsa_status_t` ROCr reported (a queue failure, an
/// allocation, a load), by the meaning of each status in HIP 5.2.3's codes; the one mapping of
/// HSA statuses to HIP codes in the workspace.
pub fn hip_error_for_status(status: u32) -> hipError_t {
    use hsa_sys::*;
    match status {
        HSA_STATUS_SUCCESS => hipSuccess,
        HSA_STATUS_ERROR_OUT_OF_RESOURCES | HSA_STATUS_ERROR_INVALID_ALLOCATION => {
            hipErrorOutOfMemory
        }
        HSA_STATUS_ERROR_INVALID_ARGUMENT | HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS => {
            hipErrorInvalidValue
        }
        HSA_STATUS_ERROR_INVALID_AGENT => hipErrorInvalidDevice,
        HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION | HSA_STATUS_ERROR_MEMORY_FAULT => {
            hipErrorIllegalAddress
        }
        // HIP 5.2.3 has no code for an illegal instruction: it, a trap or a malformed packet
        // ends the launch.
        HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION
        | HSA_STATUS_ERROR_EXCEPTION
        | HSA_STATUS_ERROR_INVALID_PACKET_FORMAT => hipErrorLaunchFailure,
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT | HSA_STATUS_ERROR_INVALID_ISA => hipErrorInvalidImage,
        HSA_STATUS_ERROR_INVALID_ISA_NAME => hipErrorNoBinaryForGpu,
        HSA_STATUS_ERROR_VARIABLE_UNDEFINED | HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED => {
            hipErrorSharedObjectInitFailed
        }
        HSA_STATUS_ERROR_INVALID_SYMBOL_NAME => hipErrorNotFound,
        HSA_STATUS_ERROR_NOT_INITIALIZED => hipErrorNotInitialized,
        _ => hipErrorUnknown,
    }
}

/// Records what an API call returned, as the caller's HIP generation defines the last error:
/// up to 6.x every return (successes too) is the last error, so `hipGetLastError` reports the
/// last call's status; from 7.0 every return is the last *command* error and only a failure
/// other than `hipErrorNotReady` becomes the last error, which stays until read.
fn returned(code: hipError_t) {
    let _ = LAST_COMMAND_ERROR.try_with(|c| c.set(code));
    if generation::current() < generation::Generation::Hip7
        || (code != hipSuccess && code != hipErrorNotReady)
    {
        let _ = LAST_ERROR.try_with(|c| c.set(code));
    }
}

/// Records a failure's message for this thread. Thread-locals with destructors may already be
/// gone (atexit handlers run after the main thread's are destroyed): then nothing is kept.
fn record(op: &'static str, f: &Failure) {
    let _ = LAST_MESSAGE.try_with(|m| *m.borrow_mut() = format!("{op}: {}", f.message));
    if let Some(sel) = f.error.as_ref().and_then(RuntimeError::selection_error) {
        let _ = LAST_SELECTION.try_with(|m| *m.borrow_mut() = format!("{op}: {sel}"));
    }
    tracing::debug!(op, code = f.code, message = %f.message, "HIP call failed");
}

/// Runs an entry point: catches unwinds, records failures, returns the code.
fn call(op: &'static str, f: impl FnOnce() -> Result<(), Failure>) -> hipError_t {
    mark_used();
    let code = match guarded(f) {
        Ok(()) => hipSuccess,
        Err(failure) => {
            record(op, &failure);
            failure.code
        }
    };
    returned(code);
    code
}

/// The body of an entry point, with a panic turned into a failure.
fn guarded(f: impl FnOnce() -> Result<(), Failure>) -> Result<(), Failure> {
    rocload_ffi::boundary::guard(
        "HIP entry point",
        || {
            Err(Failure::new(
                hipErrorUnknown,
                "internal error (a panic was caught at the C boundary)",
            ))
        },
        f,
    )
}

/// For entry points that return nothing (registration, which is no API call in HIP's sense):
/// a failure is recorded as the last error, a success leaves it alone.
fn call_void(op: &'static str, f: impl FnOnce() -> Result<(), Failure>) {
    mark_used();
    if let Err(failure) = guarded(f) {
        record(op, &failure);
        let _ = LAST_ERROR.try_with(|c| c.set(failure.code));
    }
}

/// The process-wide runtime; the first call also sets up logging (`ROCLOAD_LOG`) and loads
/// the tool libraries of `ROCLOAD_TOOLS`.
fn runtime() -> &'static Runtime {
    static LOGGING: std::sync::Once = std::sync::Once::new();
    LOGGING.call_once(|| rocload_ffi::logging::init(Config::global().log.as_deref()));
    let rt = Runtime::global();
    tools::load_tool_libraries();
    rt
}

/// Under `rocload run`, tells the tool that the program did call the HIP runtime (the tool
/// reports programs that never do).
fn mark_used() {
    static MARKED: std::sync::Once = std::sync::Once::new();
    MARKED.call_once(|| run_marker("called"));
}

/// Appends `line` to `rocload run`'s marker file, if there is one (`loaded <soname>` when a
/// HIP soname is loaded, `called` at the first HIP call), so it can say what happened.
pub(crate) fn run_marker(line: &str) {
    use std::io::Write;
    if let Some(path) = &Config::global().run_marker {
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = written {
            tracing::debug!(error = %e, "could not write rocload run's marker");
        }
    }
}

fn current_device() -> i64 {
    let chosen = CURRENT_DEVICE.try_with(Cell::get).unwrap_or(-1);
    if chosen >= 0 {
        return i64::from(chosen);
    }
    i64::from(device::default_device())
}

/// Copies `text` into a fixed C character array, cut to fit and NUL-terminated.
fn copy_c_string(dst: &mut [c_char], text: &str) {
    let n = text.len().min(dst.len().saturating_sub(1));
    for (d, s) in dst.iter_mut().zip(text.bytes().take(n)) {
        *d = s as c_char;
    }
    if let Some(end) = dst.get_mut(n) {
        *end = 0;
    }
}

/// The kernel behind a host function (a `__global__` function's host stub) on `device`; an
/// unknown or NULL function is `hipErrorInvalidDeviceFunction`, as HIP reports it.
fn host_kernel(f: *const c_void, device: i64) -> Result<KernelRef, Failure> {
    if f.is_null() {
        return Err(Failure::new(
            hipErrorInvalidDeviceFunction,
            "function is NULL",
        ));
    }
    runtime().kernel(f as usize, device).map_err(|e| match e {
        RuntimeError::NotFound { .. } => Failure {
            code: hipErrorInvalidDeviceFunction,
            message: e.to_string(),
            error: Some(e),
        },
        e => e.into(),
    })
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

mod array;
mod capture;
mod device;
mod external;
mod gl_interop;
mod graph;
mod graph_later;
mod graph_nodes;
mod hiprtc;
mod hiprtc_link;
mod ipc;
mod launch;
mod managed;
mod memory;
mod mempool;
mod module;
mod per_thread;
mod pointer;
mod register;
mod rocload_api;
mod stream;
mod symbol;
mod texref;
mod texture;
mod vmm;

// ------------------------------------------------------------------------------ errors

/// `hipError_t hipGetLastError(void)`: the calling thread's last error, reset to `hipSuccess`.
#[export]
pub extern "C" fn hipGetLastError() -> hipError_t {
    LAST_ERROR
        .try_with(|c| c.replace(hipSuccess))
        .unwrap_or(hipSuccess)
}

/// `hipError_t hipPeekAtLastError(void)`: the calling thread's last error, not reset.
#[export]
pub extern "C" fn hipPeekAtLastError() -> hipError_t {
    LAST_ERROR.try_with(Cell::get).unwrap_or(hipSuccess)
}

/// `hipError_t hipExtGetLastError(void)` (HIP 6.0): up to 6.x the same as `hipGetLastError`;
/// from 7.0 the last call's status ("last command error"), reset to success.
#[export]
pub extern "C" fn hipExtGetLastError() -> hipError_t {
    if generation::current() < generation::Generation::Hip7 {
        return hipGetLastError();
    }
    LAST_COMMAND_ERROR
        .try_with(|c| c.replace(hipSuccess))
        .unwrap_or(hipSuccess)
}

/// `const char* hipGetErrorString(hipError_t)`: a static description.
#[export]
pub extern "C" fn hipGetErrorString(error: hipError_t) -> *const c_char {
    error_strings(error).1.as_ptr()
}

/// `const char* hipGetErrorName(hipError_t)`: the static enumerator name.
#[export]
pub extern "C" fn hipGetErrorName(error: hipError_t) -> *const c_char {
    error_strings(error).0.as_ptr()
}
