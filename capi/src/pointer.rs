//! Pointer attributes one at a time: `hipPointerGetAttribute`, `hipDrvPointerGetAttributes`
//! and `hipPointerSetAttribute`, answering as clr does (`ihipPointerGetAttributes`: the
//! value's C type per attribute, the defaults written for unknown pointers, the attributes
//! HIP does not support). `hipPointerGetAttributes` (the struct form) is in `memory`.

use rocload_ffi::export;
use std::ffi::{c_int, c_uint, c_void};

use rocload_lib::device::MemoryKind;
use rocload_lib::runtime::PointerInfo;

use crate::generation::{current, Generation};
use crate::*;

/// `hipPointer_attribute` values.
mod attribute {
    pub const CONTEXT: i32 = 1;
    pub const MEMORY_TYPE: i32 = 2;
    pub const DEVICE_POINTER: i32 = 3;
    pub const HOST_POINTER: i32 = 4;
    pub const P2P_TOKENS: i32 = 5;
    pub const SYNC_MEMOPS: i32 = 6;
    pub const BUFFER_ID: i32 = 7;
    pub const IS_MANAGED: i32 = 8;
    pub const DEVICE_ORDINAL: i32 = 9;
    pub const IS_LEGACY_HIP_IPC_CAPABLE: i32 = 10;
    pub const RANGE_START_ADDR: i32 = 11;
    pub const RANGE_SIZE: i32 = 12;
    pub const MAPPED: i32 = 13;
    pub const ALLOWED_HANDLE_TYPES: i32 = 14;
    pub const IS_GPU_DIRECT_RDMA_CAPABLE: i32 = 15;
    pub const ACCESS_FLAGS: i32 = 16;
    pub const MEMPOOL_HANDLE: i32 = 17;
}

/// Most attributes one `hipDrvPointerGetAttributes` call may ask for.
const MAX_ATTRIBUTES: c_uint = 1024;

/// The `hipMemoryType` of memory of `kind`, numbered for the caller's HIP generation. HIP 5
/// reports managed memory as host memory (it is fine-grained host memory in clr 5.2.3); HIP 6
/// added `hipMemoryTypeManaged` and renumbered.
pub(crate) fn memory_type_of(kind: MemoryKind) -> c_int {
    let host = matches!(
        kind,
        MemoryKind::PinnedHost | MemoryKind::RegisteredHost | MemoryKind::Managed
    );
    match (current(), kind) {
        (Generation::Hip5, _) if host => memory_type::HOST,
        (Generation::Hip5, _) => memory_type::DEVICE,
        (_, MemoryKind::Managed) => memory_type::MANAGED_6,
        _ if host => memory_type::HOST_6,
        _ => memory_type::DEVICE_6,
    }
}

/// Whether the host reaches memory of `kind` at its device address.
pub(crate) fn host_side(kind: MemoryKind) -> bool {
    matches!(
        kind,
        MemoryKind::PinnedHost | MemoryKind::RegisteredHost | MemoryKind::Managed
    )
}

/// Writes `value` to `data` (which may be unaligned: it is the caller's `void*`).
///
/// # Safety
/// `data` is writable for a `T`.
unsafe fn put<T>(data: *mut c_void, value: T) {
    // SAFETY: by the caller's contract.
    unsafe { data.cast::<T>().write_unaligned(value) }
}

/// One attribute of `ptr` into `data`: clr's answer, including the default it writes for an
/// unknown pointer before failing.
///
/// # Safety
/// `data` is writable for the attribute's C type.
unsafe fn get(data: *mut c_void, which: c_int, ptr: u64) -> Result<(), Failure> {
    let info: Option<PointerInfo> = runtime().pointer_info(ptr);
    let unknown = || {
        Failure::new(
            hipErrorInvalidValue,
            format!("{ptr:#x} is not memory the runtime allocated or registered"),
        )
    };
    let unsupported = |what: &str| {
        Failure::new(
            hipErrorNotSupported,
            format!("pointer attribute {which} ({what}) is not supported by HIP"),
        )
    };
    // SAFETY: every `put` below writes the attribute's type to `data`, which holds one by the
    // caller's contract.
    unsafe {
        match which {
            attribute::CONTEXT => Err(unsupported("context")),
            attribute::P2P_TOKENS => Err(unsupported("P2P tokens")),
            attribute::IS_LEGACY_HIP_IPC_CAPABLE => Err(unsupported("legacy IPC capable")),
            attribute::ALLOWED_HANDLE_TYPES => Err(unsupported("allowed handle types")),
            attribute::IS_GPU_DIRECT_RDMA_CAPABLE => Err(unsupported("GPUDirect RDMA")),
            attribute::MEMPOOL_HANDLE => Err(unsupported("memory pool handle")),
            attribute::MEMORY_TYPE => match info {
                Some(i) => {
                    put::<u32>(data, memory_type_of(i.allocation.kind) as u32);
                    Ok(())
                }
                None => {
                    put::<u32>(data, 0);
                    Err(unknown())
                }
            },
            attribute::DEVICE_POINTER => {
                // The software agent's device address of a byte is its host address.
                put::<u64>(data, if info.is_some() { ptr } else { 0 });
                info.map(drop).ok_or_else(unknown)
            }
            attribute::HOST_POINTER => match info {
                Some(i) if host_side(i.allocation.kind) => {
                    put::<u64>(data, ptr);
                    Ok(())
                }
                Some(i) => {
                    put::<u64>(data, 0);
                    Err(Failure::new(
                        hipErrorInvalidValue,
                        format!("{ptr:#x} is device memory ({})", i.allocation),
                    ))
                }
                None => {
                    put::<u64>(data, 0);
                    Err(unknown())
                }
            },
            attribute::SYNC_MEMOPS => {
                // clr answers true for any pointer; what hipPointerSetAttribute set, for
                // runtime memory.
                put::<u8>(data, u8::from(runtime().sync_memops(ptr).unwrap_or(true)));
                Ok(())
            }
            attribute::BUFFER_ID => match info {
                Some(i) => {
                    put::<u32>(data, i.allocation.id as u32);
                    Ok(())
                }
                None => {
                    put::<u32>(data, 0);
                    Err(unknown())
                }
            },
            attribute::IS_MANAGED => {
                put::<u8>(
                    data,
                    u8::from(
                        info.as_ref()
                            .is_some_and(|i| i.allocation.kind == MemoryKind::Managed),
                    ),
                );
                info.map(drop).ok_or_else(unknown)
            }
            attribute::DEVICE_ORDINAL => {
                // -2 (hipInvalidDeviceId) for host memory, as clr and CUDA answer.
                put::<c_int>(data, info.as_ref().map_or(-2, |i| i.device as c_int));
                info.map(drop).ok_or_else(unknown)
            }
            attribute::RANGE_START_ADDR => {
                put::<u64>(data, info.as_ref().map_or(0, |i| i.allocation.base));
                info.map(drop).ok_or_else(unknown)
            }
            attribute::RANGE_SIZE => {
                // clr writes 32 bits; a larger allocation saturates instead of wrapping.
                let size = info.as_ref().map_or(0, |i| i.allocation.size);
                put::<u32>(data, u32::try_from(size).unwrap_or(u32::MAX));
                info.map(drop).ok_or_else(unknown)
            }
            attribute::MAPPED => {
                put::<u8>(data, u8::from(info.is_some()));
                info.map(drop).ok_or_else(unknown)
            }
            attribute::ACCESS_FLAGS => {
                put::<u32>(data, runtime().allocation_flags(ptr).unwrap_or(0));
                Ok(())
            }
            other => Err(Failure::new(
                hipErrorInvalidValue,
                format!("hipPointer_attribute {other}"),
            )),
        }
    }
}

/// `hipError_t hipPointerGetAttribute(void* data, hipPointer_attribute attribute,
/// hipDeviceptr_t ptr)`.
#[export]
pub unsafe extern "C" fn hipPointerGetAttribute(
    data: *mut c_void,
    which: c_int,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    call("hipPointerGetAttribute", || {
        if data.is_null() || ptr.is_null() {
            return Err(Failure::new(hipErrorInvalidValue, "data or ptr is NULL"));
        }
        // SAFETY: `data` holds the attribute's type by the caller's contract.
        unsafe { get(data, which, ptr as u64) }
    })
}

/// `hipError_t hipDrvPointerGetAttributes(unsigned numAttributes, hipPointer_attribute*
/// attributes, void** data, hipDeviceptr_t ptr)`: every attribute, each with its default where
/// it does not apply; succeeds once the arguments are valid, as clr does.
#[export]
pub unsafe extern "C" fn hipDrvPointerGetAttributes(
    num_attributes: c_uint,
    attributes: *mut c_int,
    data: *mut *mut c_void,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    call("hipDrvPointerGetAttributes", || {
        if num_attributes == 0 || attributes.is_null() || data.is_null() || ptr.is_null() {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "numAttributes is 0 or an argument is NULL",
            ));
        }
        if num_attributes > MAX_ATTRIBUTES {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("{num_attributes} attributes (at most {MAX_ATTRIBUTES})"),
            ));
        }
        let n = num_attributes as usize;
        // SAFETY: two arrays of `numAttributes` entries by the caller's contract.
        let (which, out) = unsafe {
            (
                std::slice::from_raw_parts(attributes, n),
                std::slice::from_raw_parts(data, n),
            )
        };
        for (&w, &d) in which.iter().zip(out) {
            if d.is_null() {
                return Err(Failure::null("data[i]"));
            }
            // SAFETY: each `data[i]` holds its attribute's type by the caller's contract.
            if let Err(f) = unsafe { get(d, w, ptr as u64) } {
                tracing::debug!("hipDrvPointerGetAttributes: attribute {w}: {}", f.message);
            }
        }
        Ok(())
    })
}

/// `hipError_t hipPointerSetAttribute(const void* value, hipPointer_attribute attribute,
/// hipDeviceptr_t ptr)` (HIP 5.3): only `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` (0 or 1) may be
/// set, on runtime memory.
#[export]
pub unsafe extern "C" fn hipPointerSetAttribute(
    value: *const c_void,
    which: c_int,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    call("hipPointerSetAttribute", || {
        if value.is_null() || ptr.is_null() {
            return Err(Failure::new(hipErrorInvalidValue, "value or ptr is NULL"));
        }
        if which != attribute::SYNC_MEMOPS {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("pointer attribute {which} cannot be set (only SYNC_MEMOPS)"),
            ));
        }
        // SAFETY: an unsigned int by the caller's contract.
        let on = unsafe { value.cast::<c_uint>().read_unaligned() };
        if on > 1 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("SYNC_MEMOPS {on}: 0 or 1"),
            ));
        }
        runtime()
            .set_sync_memops(ptr as u64, on == 1)
            .map_err(|e| Failure::new(hipErrorInvalidDevicePointer, e.to_string()))
    })
}
