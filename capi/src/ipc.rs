//! IPC between processes: `hipIpcGetMemHandle`, `hipIpcOpenMemHandle`,
//! `hipIpcCloseMemHandle`, `hipIpcGetEventHandle`, `hipIpcOpenEventHandle`. Handles are HIP's
//! 64 bytes, passed by value; what they hold is the device's business (`rocload::device::vmm`).
//! Error codes are clr's: a pointer that is not device memory, or a handle whose memory
//! cannot be reached, is `hipErrorInvalidDevicePointer`; closing what was not opened is
//! `hipErrorInvalidHandle`; an event handle of an event without `hipEventInterprocess` is
//! `hipErrorInvalidConfiguration`, and opening one in the process that made it
//! `hipErrorInvalidContext`.

use rocload_ffi::export;
use std::ffi::{c_char, c_uint, c_void};

use rocload_lib::device::vmm::{IpcHandle, IPC_HANDLE_BYTES};
use rocload_lib::runtime::Event;

use crate::generation::{current, Generation};
use crate::stream::{event_of, EVENTS};
use crate::*;

/// `hipIpcMemHandle_t` and `hipIpcEventHandle_t`: 64 opaque bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipIpcHandle_t {
    /// The bytes.
    pub reserved: [c_char; IPC_HANDLE_BYTES],
}

impl hipIpcHandle_t {
    fn to_handle(self) -> IpcHandle {
        IpcHandle(self.reserved.map(|c| c as u8))
    }

    fn from_handle(h: &IpcHandle) -> hipIpcHandle_t {
        hipIpcHandle_t {
            reserved: h.0.map(|b| b as c_char),
        }
    }
}

/// `hipIpcMemLazyEnablePeerAccess`: 0 in HIP 5's headers, 1 from HIP 6 (CUDA's value).
fn lazy_enable_peer_access_ok(flags: c_uint) -> bool {
    match current() {
        Generation::Hip5 => flags <= 1,
        _ => flags == 1,
    }
}

/// A failure to reach memory through a handle, as clr reports it (a backend that cannot
/// share memory at all says so instead).
fn invalid_device_pointer(e: RuntimeError) -> Failure {
    if let RuntimeError::Device { error, .. } = &e {
        if matches!(
            **error,
            rocload_lib::device::DeviceError::Unsupported { .. }
        ) {
            return e.into();
        }
    }
    Failure {
        code: hipErrorInvalidDevicePointer,
        message: e.to_string(),
        error: Some(e),
    }
}

/// `hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* handle, void* devPtr)`: for the
/// `hipMalloc` allocation holding `devPtr` (the whole allocation; opening it gives the
/// pointer at `devPtr`'s offset).
#[export]
pub unsafe extern "C" fn hipIpcGetMemHandle(
    handle: *mut hipIpcHandle_t,
    ptr: *mut c_void,
) -> hipError_t {
    call("hipIpcGetMemHandle", || {
        if handle.is_null() {
            return Err(Failure::null("handle"));
        }
        if ptr.is_null() {
            return Err(Failure::null("devPtr"));
        }
        let h = runtime()
            .ipc_get_mem_handle(ptr as u64)
            .map_err(invalid_device_pointer)?;
        // SAFETY: non-null, writable for the 64-byte handle by the caller's contract.
        unsafe { out(handle, "handle", hipIpcHandle_t::from_handle(&h)) }
    })
}

/// `hipError_t hipIpcOpenMemHandle(void** devPtr, hipIpcMemHandle_t handle, unsigned
/// flags)`: maps the memory on the current device. `flags` must be
/// `hipIpcMemLazyEnablePeerAccess` (0 for HIP 5 callers, which may also pass CUDA's 1; 1 for
/// HIP 6 and 7). Opening one handle again returns the same pointer (close it as often).
#[export]
pub unsafe extern "C" fn hipIpcOpenMemHandle(
    ptr: *mut *mut c_void,
    handle: hipIpcHandle_t,
    flags: c_uint,
) -> hipError_t {
    call("hipIpcOpenMemHandle", || {
        if ptr.is_null() {
            return Err(Failure::null("devPtr"));
        }
        if !lazy_enable_peer_access_ok(flags) {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("flags {flags:#x} (must be hipIpcMemLazyEnablePeerAccess)"),
            ));
        }
        let device = current_device() as usize;
        let opened = runtime()
            .ipc_open_mem_handle(device, &handle.to_handle())
            .map_err(|e| match &e {
                // A malformed handle is the caller's value; memory that cannot be reached is
                // the device pointer clr reports.
                RuntimeError::Device { error, .. }
                    if matches!(**error, rocload_lib::device::DeviceError::Vmm { .. }) =>
                {
                    Failure::from(e)
                }
                _ => invalid_device_pointer(e),
            })?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(ptr, "devPtr", opened as *mut c_void) }
    })
}

/// `hipError_t hipIpcCloseMemHandle(void* devPtr)`: after the device is idle; the memory is
/// unmapped at the last close.
#[export]
pub extern "C" fn hipIpcCloseMemHandle(ptr: *mut c_void) -> hipError_t {
    call("hipIpcCloseMemHandle", || {
        if ptr.is_null() {
            return Err(Failure::null("devPtr"));
        }
        runtime()
            .ipc_close_mem_handle(ptr as u64)
            .map_err(|e| match e {
                RuntimeError::Vmm { .. } => Failure {
                    code: hipErrorInvalidHandle,
                    message: e.to_string(),
                    error: Some(e),
                },
                e => e.into(),
            })
    })
}

/// `hipError_t hipIpcGetEventHandle(hipIpcEventHandle_t* handle, hipEvent_t event)`: for an
/// event created with `hipEventInterprocess`.
#[export]
pub unsafe extern "C" fn hipIpcGetEventHandle(
    handle: *mut hipIpcHandle_t,
    event: hipEvent_t,
) -> hipError_t {
    call("hipIpcGetEventHandle", || {
        if handle.is_null() {
            return Err(Failure::null("handle"));
        }
        if event.is_null() {
            return Err(Failure::null("event"));
        }
        let h = event_of(event)?.ipc_handle()?;
        // SAFETY: non-null, writable for the 64-byte handle by the caller's contract.
        unsafe { out(handle, "handle", hipIpcHandle_t::from_handle(&h)) }
    })
}

/// `hipError_t hipIpcOpenEventHandle(hipEvent_t* event, hipIpcEventHandle_t handle)`: an
/// event of this process, without timing, whose records in either process complete it;
/// destroyed with `hipEventDestroy`.
#[export]
pub unsafe extern "C" fn hipIpcOpenEventHandle(
    event: *mut hipEvent_t,
    handle: hipIpcHandle_t,
) -> hipError_t {
    call("hipIpcOpenEventHandle", || {
        if event.is_null() {
            return Err(Failure::null("event"));
        }
        let e = Event::open_interprocess(&handle.to_handle())?;
        let h = EVENTS
            .insert(e)
            .ok_or_else(|| Failure::new(hipErrorOutOfMemory, "2^24 events are live"))?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(event, "event", h as hipEvent_t) }
    })
}
