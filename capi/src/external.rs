//! External resources: `hipImportExternalMemory`, `hipExternalMemoryGetMappedBuffer`,
//! `hipDestroyExternalMemory`, `hipImportExternalSemaphore`,
//! `hipSignalExternalSemaphoresAsync`, `hipWaitExternalSemaphoresAsync`,
//! `hipDestroyExternalSemaphore`. What the objects are on this machine is the runtime's
//! (`rocload::runtime::external`): opaque POSIX descriptors of a sealed memory object and of an
//! `eventfd`. Other handle types name Windows and Direct3D objects, which Linux has not:
//! `hipErrorNotSupported` with the reason in the log; a type HIP does not define is
//! `hipErrorInvalidValue`, as clr checks.
//!
//! The descriptors' layouts follow the caller's HIP generation: HIP 6.0 appended `reserved`
//! words, which moved the parameters' `flags` from byte 64 to 72 and their stride from 136 to
//! 144 bytes (the handle descriptors' leading fields did not move).

#![allow(non_camel_case_types)]

use rocload_ffi::export;
use std::ffi::{c_int, c_uint, c_void};
use std::os::fd::BorrowedFd;
use std::sync::Arc;

use rocload_ffi::HandleTable;
use rocload_lib::runtime::{ExternalMemory, ExternalSemaphore};

use crate::generation::{current, Generation};
use crate::stream::stream_of;
use crate::*;

/// `hipExternalMemory_t`.
pub type hipExternalMemory_t = *mut c_void;
/// `hipExternalSemaphore_t`.
pub type hipExternalSemaphore_t = *mut c_void;

/// `hipExternalMemoryHandleTypeOpaqueFd`, `hipExternalSemaphoreHandleTypeOpaqueFd`.
const OPAQUE_FD: c_int = 1;
/// `hipExternalMemoryDedicated`.
const MEMORY_DEDICATED: c_uint = 1;

/// The handle union of the descriptors: a descriptor, or Windows' handle and name.
#[repr(C)]
#[derive(Clone, Copy)]
pub union ExternalHandle {
    /// `fd`.
    pub fd: c_int,
    /// `win32.handle`, `win32.name`.
    pub win32: [*const c_void; 2],
}

/// `hipExternalMemoryHandleDesc` (HIP 6 appends `reserved[16]`, not read here).
#[repr(C)]
pub struct hipExternalMemoryHandleDesc {
    /// `hipExternalMemoryHandleType`.
    pub type_: c_int,
    /// The handle.
    pub handle: ExternalHandle,
    /// Bytes of the memory.
    pub size: u64,
    /// 0 or `hipExternalMemoryDedicated`.
    pub flags: c_uint,
}

/// `hipExternalMemoryBufferDesc` (HIP 6 appends `reserved[16]`).
#[repr(C)]
pub struct hipExternalMemoryBufferDesc {
    /// Where the buffer starts in the memory.
    pub offset: u64,
    /// Its bytes.
    pub size: u64,
    /// Must be 0.
    pub flags: c_uint,
}

/// `hipExternalSemaphoreHandleDesc` (HIP 6 appends `reserved[16]`).
#[repr(C)]
pub struct hipExternalSemaphoreHandleDesc {
    /// `hipExternalSemaphoreHandleType`.
    pub type_: c_int,
    /// The handle.
    pub handle: ExternalHandle,
    /// Must be 0.
    pub flags: c_uint,
}

const _: () = {
    assert!(std::mem::size_of::<hipExternalMemoryHandleDesc>() == 40);
    assert!(std::mem::offset_of!(hipExternalMemoryHandleDesc, size) == 24);
    assert!(std::mem::size_of::<hipExternalMemoryBufferDesc>() == 24);
    assert!(std::mem::size_of::<hipExternalSemaphoreHandleDesc>() == 32);
    assert!(std::mem::offset_of!(hipExternalSemaphoreHandleDesc, flags) == 24);
};

/// Where `flags` is in `hipExternalSemaphoreSignalParams`/`WaitParams`, and their stride, for
/// the caller's generation.
pub(crate) fn params_layout() -> (usize, usize) {
    match current() {
        Generation::Hip5 => (64, 136),
        _ => (72, 144),
    }
}

/// The largest handle type the caller's headers define (memory, semaphore).
fn last_types() -> (c_int, c_int) {
    match current() {
        // hipExternalMemoryHandleTypeD3D11ResourceKmt, hipExternalSemaphoreHandleTypeD3D12Fence.
        Generation::Hip5 => (7, 4),
        // ...NvSciBuf, ...TimelineSemaphoreWin32.
        _ => (8, 10),
    }
}

static MEMORIES: HandleTable<Arc<ExternalMemory>> = HandleTable::new(kind::EXTERNAL_MEMORY);
static SEMAPHORES: HandleTable<Arc<ExternalSemaphore>> = HandleTable::new(kind::EXTERNAL_SEMAPHORE);

/// The descriptor of an opaque-descriptor handle of type `type_` (the last defined being
/// `last`), or HIP's refusal.
fn opaque_fd<'a>(
    what: &str,
    type_: c_int,
    last: c_int,
    handle: ExternalHandle,
) -> Result<BorrowedFd<'a>, Failure> {
    if !(1..=last).contains(&type_) {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("{what} handle type {type_} is not one HIP defines"),
        ));
    }
    if type_ != OPAQUE_FD {
        return Err(Failure::new(
            hipErrorNotSupported,
            format!(
                "{what} handle type {type_} names a Windows, Direct3D, NvSci or timeline object; \
                 on Linux only opaque file descriptors (type 1) can be imported"
            ),
        ));
    }
    // SAFETY: the union's first member, an int, is what type 1 stores.
    let fd = unsafe { handle.fd };
    if fd < 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("{what} descriptor {fd} is not a descriptor"),
        ));
    }
    // SAFETY: a non-negative descriptor number, only borrowed for this call (the runtime
    // checks it is open and keeps a duplicate).
    Ok(unsafe { BorrowedFd::borrow_raw(fd) })
}

/// `hipError_t hipImportExternalMemory(hipExternalMemory_t* extMem_out, const
/// hipExternalMemoryHandleDesc* memHandleDesc)`.
#[export]
pub unsafe extern "C" fn hipImportExternalMemory(
    ext_mem_out: *mut hipExternalMemory_t,
    mem_handle_desc: *const hipExternalMemoryHandleDesc,
) -> hipError_t {
    call("hipImportExternalMemory", || {
        if ext_mem_out.is_null() {
            return Err(Failure::null("extMem_out"));
        }
        // SAFETY: readable by the caller's contract when not NULL.
        let Some(desc) = (unsafe { mem_handle_desc.as_ref() }) else {
            return Err(Failure::null("memHandleDesc"));
        };
        if desc.flags & !MEMORY_DEDICATED != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("external memory flags {:#x}", desc.flags),
            ));
        }
        if desc.size == 0 {
            return Err(Failure::new(hipErrorInvalidValue, "size is 0"));
        }
        let fd = opaque_fd("external memory", desc.type_, last_types().0, desc.handle)?;
        let device = current_device();
        let memory = runtime().import_external_memory(device as usize, fd, desc.size)?;
        let handle = MEMORIES
            .insert(Arc::new(memory))
            .ok_or_else(|| Failure::new(hipErrorOutOfMemory, "2^24 external memories are live"))?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(ext_mem_out, "extMem_out", handle as hipExternalMemory_t) }
    })
}

fn memory_of(ext_mem: hipExternalMemory_t) -> Result<Arc<ExternalMemory>, Failure> {
    MEMORIES.get(ext_mem as u64).ok_or_else(|| {
        Failure::new(
            hipErrorInvalidValue,
            format!("{ext_mem:p} is not a live external memory"),
        )
    })
}

/// `hipError_t hipExternalMemoryGetMappedBuffer(void** devPtr, hipExternalMemory_t extMem,
/// const hipExternalMemoryBufferDesc* bufferDesc)`: a device pointer to `size` bytes of the
/// memory from `offset`, freed with `hipFree`.
#[export]
pub unsafe extern "C" fn hipExternalMemoryGetMappedBuffer(
    dev_ptr: *mut *mut c_void,
    ext_mem: hipExternalMemory_t,
    buffer_desc: *const hipExternalMemoryBufferDesc,
) -> hipError_t {
    call("hipExternalMemoryGetMappedBuffer", || {
        if dev_ptr.is_null() {
            return Err(Failure::null("devPtr"));
        }
        // SAFETY: readable by the caller's contract when not NULL.
        let Some(desc) = (unsafe { buffer_desc.as_ref() }) else {
            return Err(Failure::null("bufferDesc"));
        };
        if desc.flags != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("buffer flags {:#x} (must be 0)", desc.flags),
            ));
        }
        let memory = memory_of(ext_mem)?;
        let address = runtime().map_external_buffer(&memory, desc.offset, desc.size)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(dev_ptr, "devPtr", address as *mut c_void) }
    })
}

/// `hipError_t hipDestroyExternalMemory(hipExternalMemory_t extMem)`: buffers mapped from it
/// stay valid until `hipFree`.
#[export]
pub unsafe extern "C" fn hipDestroyExternalMemory(ext_mem: hipExternalMemory_t) -> hipError_t {
    call("hipDestroyExternalMemory", || {
        MEMORIES.remove(ext_mem as u64).ok_or_else(|| {
            Failure::new(
                hipErrorInvalidValue,
                format!("{ext_mem:p} is not a live external memory"),
            )
        })?;
        Ok(())
    })
}

/// `hipError_t hipImportExternalSemaphore(hipExternalSemaphore_t* extSem_out, const
/// hipExternalSemaphoreHandleDesc* semHandleDesc)`.
#[export]
pub unsafe extern "C" fn hipImportExternalSemaphore(
    ext_sem_out: *mut hipExternalSemaphore_t,
    sem_handle_desc: *const hipExternalSemaphoreHandleDesc,
) -> hipError_t {
    call("hipImportExternalSemaphore", || {
        if ext_sem_out.is_null() {
            return Err(Failure::null("extSem_out"));
        }
        // SAFETY: readable by the caller's contract when not NULL.
        let Some(desc) = (unsafe { sem_handle_desc.as_ref() }) else {
            return Err(Failure::null("semHandleDesc"));
        };
        if desc.flags != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("external semaphore flags {:#x} (must be 0)", desc.flags),
            ));
        }
        let fd = opaque_fd(
            "external semaphore",
            desc.type_,
            last_types().1,
            desc.handle,
        )?;
        let semaphore = ExternalSemaphore::import(fd)?;
        let handle = SEMAPHORES.insert(Arc::new(semaphore)).ok_or_else(|| {
            Failure::new(hipErrorOutOfMemory, "2^24 external semaphores are live")
        })?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(ext_sem_out, "extSem_out", handle as hipExternalSemaphore_t) }
    })
}

/// The semaphores and flags of a signal or wait call, every one checked before anything is
/// queued.
///
/// # Safety
/// `sems` holds `count` handles and `params` `count` parameter structures of the caller's
/// generation, when not NULL.
pub(crate) unsafe fn semaphores_of(
    sems: *const hipExternalSemaphore_t,
    params: *const c_void,
    count: c_uint,
) -> Result<Vec<Arc<ExternalSemaphore>>, Failure> {
    if sems.is_null() {
        return Err(Failure::null("extSemArray"));
    }
    if params.is_null() {
        return Err(Failure::null("paramsArray"));
    }
    let (flags_at, stride) = params_layout();
    let mut out = Vec::new();
    out.try_reserve(count as usize)
        .map_err(|_| Failure::new(hipErrorOutOfMemory, "too many semaphores"))?;
    for i in 0..count as usize {
        // SAFETY: `count` handles by the caller's contract.
        let handle = unsafe { sems.add(i).read() };
        // SAFETY: `count` structures of `stride` bytes by the caller's contract; `flags` is an
        // unsigned int at `flags_at` in each (read unaligned: it is the caller's memory).
        let flags = unsafe {
            params
                .cast::<u8>()
                .add(i * stride + flags_at)
                .cast::<c_uint>()
                .read_unaligned()
        };
        if flags != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("paramsArray[{i}].flags is {flags:#x} (must be 0)"),
            ));
        }
        let s = SEMAPHORES.get(handle as u64).ok_or_else(|| {
            Failure::new(
                hipErrorInvalidValue,
                format!("extSemArray[{i}] ({handle:p}) is not a live external semaphore"),
            )
        })?;
        out.push(s);
    }
    Ok(out)
}

/// Signals (or waits for) each semaphore in `stream`'s order; during a capture, an
/// external-semaphore node (HIP 5.3's) with the caller's arrays copied.
fn queue(
    what: &'static str,
    stream: hipStream_t,
    (sems, params, count): (*const hipExternalSemaphore_t, *const c_void, c_uint),
    semaphores: Vec<Arc<ExternalSemaphore>>,
    wait: bool,
) -> Result<(), Failure> {
    let s = stream_of(stream)?;
    if let Some(c) = crate::capture::intercept(&s, what)? {
        let p = crate::graph_nodes::hipExternalSemaphoreNodeParams {
            extSemArray: sems.cast_mut(),
            paramsArray: params,
            numExtSems: count,
        };
        let op = match crate::graph_nodes::semaphore_op(&p, wait) {
            Ok(op) => op,
            Err(f) => {
                c.invalidate();
                return Err(f);
            }
        };
        return crate::capture::add(&c, &s, op);
    }
    for sem in &semaphores {
        if wait {
            runtime().wait_external_semaphore(&s, sem)?;
        } else {
            runtime().signal_external_semaphore(&s, sem)?;
        }
    }
    Ok(())
}

/// `hipError_t hipSignalExternalSemaphoresAsync(const hipExternalSemaphore_t* extSemArray,
/// const hipExternalSemaphoreSignalParams* paramsArray, unsigned int numExtSems, hipStream_t
/// stream)`: each semaphore is signalled once the stream's earlier work is done.
#[export]
pub unsafe extern "C" fn hipSignalExternalSemaphoresAsync(
    ext_sem_array: *const hipExternalSemaphore_t,
    params_array: *const c_void,
    num_ext_sems: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    call("hipSignalExternalSemaphoresAsync", || {
        // SAFETY: the caller's arrays of `num_ext_sems` entries.
        let sems = unsafe { semaphores_of(ext_sem_array, params_array, num_ext_sems)? };
        let raw = (ext_sem_array, params_array, num_ext_sems);
        queue("signalling external semaphores", stream, raw, sems, false)
    })
}

/// `hipError_t hipWaitExternalSemaphoresAsync(const hipExternalSemaphore_t* extSemArray,
/// const hipExternalSemaphoreWaitParams* paramsArray, unsigned int numExtSems, hipStream_t
/// stream)`: the stream's later work waits until each semaphore is signalled.
#[export]
pub unsafe extern "C" fn hipWaitExternalSemaphoresAsync(
    ext_sem_array: *const hipExternalSemaphore_t,
    params_array: *const c_void,
    num_ext_sems: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    call("hipWaitExternalSemaphoresAsync", || {
        // SAFETY: the caller's arrays of `num_ext_sems` entries.
        let sems = unsafe { semaphores_of(ext_sem_array, params_array, num_ext_sems)? };
        let raw = (ext_sem_array, params_array, num_ext_sems);
        queue("waiting for external semaphores", stream, raw, sems, true)
    })
}

/// `hipError_t hipDestroyExternalSemaphore(hipExternalSemaphore_t extSem)`: signals and waits
/// already queued keep it until they ran.
#[export]
pub unsafe extern "C" fn hipDestroyExternalSemaphore(
    ext_sem: hipExternalSemaphore_t,
) -> hipError_t {
    call("hipDestroyExternalSemaphore", || {
        SEMAPHORES.remove(ext_sem as u64).ok_or_else(|| {
            Failure::new(
                hipErrorInvalidValue,
                format!("{ext_sem:p} is not a live external semaphore"),
            )
        })?;
        Ok(())
    })
}
