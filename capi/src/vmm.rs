//! Virtual memory management: `hipMemAddressReserve/Free`, `hipMemCreate/Release`,
//! `hipMemMap/Unmap`, `hipMemSetAccess/GetAccess`, `hipMemGetAllocationGranularity`,
//! `hipMemGetAllocationPropertiesFromHandle`, `hipMemRetainAllocationHandle`,
//! `hipMemExport/ImportToShareableHandle` (POSIX file descriptors) and `hipMemMapArrayAsync`
//! (refused: sparse arrays are not supported). Arguments are checked as clr checks them
//! (`hip_vm.cpp`); the runtime applies HIP's rules of state and order.
//!
//! `hipMemAllocationProp` changed layout in HIP 5.3: HIP 5.2 has `compressionType`@0,
//! `location`@4, `requestedHandleType`@12, `type`@16, `usage`@20; 5.3 and later have `type`@0,
//! `requestedHandleType`@4, `location`@8, `win32HandleMetaData`@16, `allocFlags`@24. Both are
//! 32 bytes. Generation 6 and 7 callers use the later layout; generation 5 callers (whose
//! headers may be 5.2, as Debian's, or 5.3 to 5.7) are read in the layout in which the struct
//! is valid (`type` pinned and `location` a device), 5.2's first, and properties are written
//! back in the layout their handle was made with.

use rocload_ffi::export;
use std::ffi::{c_int, c_uint, c_ulonglong, c_void};
use std::os::fd::{BorrowedFd, IntoRawFd};

use rocload_lib::device::vmm::Access;
use rocload_lib::runtime::{AllocationProps, HANDLE_TYPE_POSIX_FD};

use crate::generation::{current, Generation};
use crate::*;

/// `hipMemGenericAllocationHandle_t`.
#[allow(non_camel_case_types)]
pub type hipMemGenericAllocationHandle_t = *mut c_void;

/// `hipMemAllocationTypePinned`.
const ALLOCATION_PINNED: u32 = 1;
/// `hipMemLocationTypeDevice`.
const LOCATION_DEVICE: u32 = 1;
/// `hipMemHandleTypeWin32`, `hipMemHandleTypeWin32Kmt`.
const HANDLE_TYPES_WIN32: [u32; 2] = [2, 4];
/// Layout tags kept with a handle's properties.
const LAYOUT_5_2: u8 = 52;
const LAYOUT_5_3: u8 = 53;
/// Most `hipMemAccessDesc` one `hipMemSetAccess` reads (a count past this is garbage).
const MAX_ACCESS_DESCS: usize = 1024;

/// `hipMemAllocationProp`, read in either layout.
#[derive(Debug, Clone, Copy)]
struct Prop {
    alloc_type: u32,
    location_type: u32,
    location_id: i32,
    handle_type: u32,
    compression: u8,
    usage: u16,
    layout: u8,
}

fn u32_at(b: &[u8; 32], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u16_at(b: &[u8; 32], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

impl Prop {
    fn decode(b: &[u8; 32], layout: u8) -> Prop {
        if layout == LAYOUT_5_2 {
            Prop {
                compression: b[0],
                location_type: u32_at(b, 4),
                location_id: u32_at(b, 8) as i32,
                handle_type: u32_at(b, 12),
                alloc_type: u32_at(b, 16),
                usage: u16_at(b, 20),
                layout,
            }
        } else {
            Prop {
                alloc_type: u32_at(b, 0),
                handle_type: u32_at(b, 4),
                location_type: u32_at(b, 8),
                location_id: u32_at(b, 12) as i32,
                compression: b[24],
                usage: u16_at(b, 26),
                layout,
            }
        }
    }

    fn valid(&self) -> bool {
        self.alloc_type == ALLOCATION_PINNED && self.location_type == LOCATION_DEVICE
    }

    fn encode(props: &AllocationProps) -> [u8; 32] {
        let mut b = [0u8; 32];
        let put =
            |b: &mut [u8; 32], at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        let id = props.device as u32;
        if props.layout == LAYOUT_5_2 {
            b[0] = props.compression;
            put(&mut b, 4, LOCATION_DEVICE);
            put(&mut b, 8, id);
            put(&mut b, 12, props.handle_type);
            put(&mut b, 16, ALLOCATION_PINNED);
            b[20..22].copy_from_slice(&props.usage.to_le_bytes());
        } else {
            put(&mut b, 0, ALLOCATION_PINNED);
            put(&mut b, 4, props.handle_type);
            put(&mut b, 8, LOCATION_DEVICE);
            put(&mut b, 12, id);
            b[24] = props.compression;
            b[26..28].copy_from_slice(&props.usage.to_le_bytes());
        }
        b
    }
}

/// The layout new properties are written in for this caller's generation.
fn default_layout() -> u8 {
    if current() == Generation::Hip5 {
        LAYOUT_5_2
    } else {
        LAYOUT_5_3
    }
}

/// Reads a `hipMemAllocationProp` and checks it as clr does: pinned memory on a device that
/// exists (`hipErrorInvalidValue` otherwise).
///
/// # Safety
/// Non-null `p` must be readable for 32 bytes.
unsafe fn read_prop(p: *const c_void) -> Result<Prop, Failure> {
    if p.is_null() {
        return Err(Failure::null("prop"));
    }
    // SAFETY: 32 readable bytes by the caller's contract; read unaligned as raw bytes.
    let bytes: [u8; 32] = unsafe { p.cast::<[u8; 32]>().read_unaligned() };
    let prop = match current() {
        Generation::Hip5 => {
            let old = Prop::decode(&bytes, LAYOUT_5_2);
            let new = Prop::decode(&bytes, LAYOUT_5_3);
            if !old.valid() && new.valid() {
                new
            } else {
                old
            }
        }
        _ => Prop::decode(&bytes, LAYOUT_5_3),
    };
    if prop.alloc_type != ALLOCATION_PINNED {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!(
                "prop->type is {}, not hipMemAllocationTypePinned",
                prop.alloc_type
            ),
        ));
    }
    if prop.location_type != LOCATION_DEVICE {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!(
                "prop->location.type is {}, not hipMemLocationTypeDevice",
                prop.location_type
            ),
        ));
    }
    device_of(prop.location_id, "prop->location.id")?;
    Ok(prop)
}

/// A device ordinal from a `hipMemLocation` (`hipErrorInvalidValue` when there is no such
/// device, as clr returns).
fn device_of(id: c_int, what: &str) -> Result<usize, Failure> {
    let d = usize::try_from(id)
        .map_err(|_| Failure::new(hipErrorInvalidValue, format!("{what} {id} is no device")))?;
    runtime().device(d as i64).map_err(|e| Failure {
        code: hipErrorInvalidValue,
        message: format!("{what}: {e}"),
        error: Some(e),
    })?;
    Ok(d)
}

fn handle_of(h: hipMemGenericAllocationHandle_t) -> Result<u64, Failure> {
    if h.is_null() {
        return Err(Failure::null("handle"));
    }
    Ok(h as u64)
}

/// `hipError_t hipMemGetAllocationGranularity(size_t*, const hipMemAllocationProp*,
/// hipMemAllocationGranularity_flags)`: the host page size on the software agent, for both
/// the minimum and the recommended granularity (clr answers the same for both).
#[export]
pub unsafe extern "C" fn hipMemGetAllocationGranularity(
    granularity: *mut usize,
    prop: *const c_void,
    option: c_int,
) -> hipError_t {
    call("hipMemGetAllocationGranularity", || {
        if granularity.is_null() {
            return Err(Failure::null("granularity"));
        }
        // SAFETY: 32 readable bytes by the caller's contract.
        let prop = unsafe { read_prop(prop) }?;
        if option != 0 && option != 1 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("granularity option {option}"),
            ));
        }
        let g = runtime().vmm_granularity(prop.location_id as usize)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(granularity, "granularity", g as usize) }
    })
}

/// `hipError_t hipMemCreate(hipMemGenericAllocationHandle_t*, size_t,
/// const hipMemAllocationProp*, unsigned long long flags)`.
#[export]
pub unsafe extern "C" fn hipMemCreate(
    handle: *mut hipMemGenericAllocationHandle_t,
    size: usize,
    prop: *const c_void,
    flags: c_ulonglong,
) -> hipError_t {
    call("hipMemCreate", || {
        if handle.is_null() {
            return Err(Failure::null("handle"));
        }
        if size == 0 {
            return Err(Failure::new(hipErrorInvalidValue, "size is 0"));
        }
        if flags != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("flags {flags:#x} (must be 0)"),
            ));
        }
        // SAFETY: 32 readable bytes by the caller's contract.
        let prop = unsafe { read_prop(prop) }?;
        match prop.handle_type {
            0 | HANDLE_TYPE_POSIX_FD => {}
            t if HANDLE_TYPES_WIN32.contains(&t) => {
                return Err(Failure::new(
                    hipErrorNotSupported,
                    format!("requested handle type {t}: Windows handles do not exist here"),
                ))
            }
            t => {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("requested handle type {t}"),
                ))
            }
        }
        let props = AllocationProps {
            device: prop.location_id as usize,
            handle_type: prop.handle_type,
            compression: prop.compression,
            usage: prop.usage,
            layout: prop.layout,
        };
        let h = runtime().vmm_create(size as u64, props)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(handle, "handle", h as hipMemGenericAllocationHandle_t) }
    })
}

/// `hipError_t hipMemRelease(hipMemGenericAllocationHandle_t)`: one reference fewer; the
/// memory goes once no reference and no mapping is left.
#[export]
pub extern "C" fn hipMemRelease(handle: hipMemGenericAllocationHandle_t) -> hipError_t {
    call("hipMemRelease", || {
        Ok(runtime().vmm_release(handle_of(handle)?)?)
    })
}

/// `hipError_t hipMemAddressReserve(void** ptr, size_t size, size_t alignment, void* addr,
/// unsigned long long flags)`: `addr` is taken when that range is free and aligned.
#[export]
pub unsafe extern "C" fn hipMemAddressReserve(
    ptr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    addr: *mut c_void,
    flags: c_ulonglong,
) -> hipError_t {
    call("hipMemAddressReserve", || {
        if ptr.is_null() {
            return Err(Failure::null("ptr"));
        }
        if flags != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("flags {flags:#x} (must be 0)"),
            ));
        }
        let device = current_device() as usize;
        let base = runtime().vmm_reserve(device, size as u64, alignment as u64, addr as u64)?;
        if !addr.is_null() && base != addr as u64 {
            tracing::debug!(
                asked = format_args!("{:#x}", addr as u64),
                got = format_args!("{base:#x}"),
                "the address asked for was not free"
            );
        }
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(ptr, "ptr", base as *mut c_void) }
    })
}

/// `hipError_t hipMemAddressFree(void* devPtr, size_t size)`.
#[export]
pub extern "C" fn hipMemAddressFree(ptr: *mut c_void, size: usize) -> hipError_t {
    call("hipMemAddressFree", || {
        if ptr.is_null() {
            return Err(Failure::null("devPtr"));
        }
        if size == 0 {
            return Err(Failure::new(hipErrorInvalidValue, "size is 0"));
        }
        Ok(runtime().vmm_free(ptr as u64, size as u64)?)
    })
}

/// `hipError_t hipMemMap(void* ptr, size_t size, size_t offset,
/// hipMemGenericAllocationHandle_t handle, unsigned long long flags)`.
#[export]
pub extern "C" fn hipMemMap(
    ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle: hipMemGenericAllocationHandle_t,
    flags: c_ulonglong,
) -> hipError_t {
    call("hipMemMap", || {
        if ptr.is_null() {
            return Err(Failure::null("ptr"));
        }
        let h = handle_of(handle)?;
        if size == 0 {
            return Err(Failure::new(hipErrorInvalidValue, "size is 0"));
        }
        if flags != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("flags {flags:#x} (must be 0)"),
            ));
        }
        Ok(runtime().vmm_map(ptr as u64, size as u64, offset as u64, h)?)
    })
}

/// `hipError_t hipMemUnmap(void* ptr, size_t size)`: whole mappings only.
#[export]
pub extern "C" fn hipMemUnmap(ptr: *mut c_void, size: usize) -> hipError_t {
    call("hipMemUnmap", || {
        if ptr.is_null() {
            return Err(Failure::null("ptr"));
        }
        if size == 0 {
            return Err(Failure::new(hipErrorInvalidValue, "size is 0"));
        }
        Ok(runtime().vmm_unmap(ptr as u64, size as u64)?)
    })
}

/// `hipError_t hipMemSetAccess(void* ptr, size_t size, const hipMemAccessDesc* desc,
/// size_t count)`: every descriptor is checked before any access changes.
#[export]
pub unsafe extern "C" fn hipMemSetAccess(
    ptr: *mut c_void,
    size: usize,
    desc: *const c_void,
    count: usize,
) -> hipError_t {
    call("hipMemSetAccess", || {
        if ptr.is_null() {
            return Err(Failure::null("ptr"));
        }
        if desc.is_null() {
            return Err(Failure::null("desc"));
        }
        if size == 0 || count == 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("size {size}, count {count}"),
            ));
        }
        if count > MAX_ACCESS_DESCS {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("{count} access descriptors (at most {MAX_ACCESS_DESCS})"),
            ));
        }
        let mut access = Vec::new();
        access
            .try_reserve(count)
            .map_err(|_| Failure::new(hipErrorOutOfMemory, "access descriptors"))?;
        for i in 0..count {
            // SAFETY: `count` 12-byte hipMemAccessDesc by the caller's contract (count is
            // bounded above); read unaligned as raw bytes.
            let d: [u8; 12] = unsafe { desc.cast::<[u8; 12]>().add(i).read_unaligned() };
            let word = |at: usize| u32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]);
            if word(0) != LOCATION_DEVICE {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("desc[{i}].location.type is {}, not a device", word(0)),
                ));
            }
            let device = device_of(word(4) as i32, &format!("desc[{i}].location.id"))?;
            let a = Access::from_flags(u64::from(word(8))).ok_or_else(|| {
                Failure::new(
                    hipErrorInvalidValue,
                    format!("desc[{i}].flags {} is no hipMemAccessFlags", word(8)),
                )
            })?;
            access.push((device, a));
        }
        Ok(runtime().vmm_set_access(ptr as u64, size as u64, &access)?)
    })
}

/// `hipError_t hipMemGetAccess(unsigned long long* flags, const hipMemLocation* location,
/// void* ptr)`.
#[export]
pub unsafe extern "C" fn hipMemGetAccess(
    flags: *mut c_ulonglong,
    location: *const c_void,
    ptr: *mut c_void,
) -> hipError_t {
    call("hipMemGetAccess", || {
        if flags.is_null() {
            return Err(Failure::null("flags"));
        }
        if location.is_null() {
            return Err(Failure::null("location"));
        }
        if ptr.is_null() {
            return Err(Failure::null("ptr"));
        }
        // SAFETY: an 8-byte hipMemLocation by the caller's contract.
        let l: [u8; 8] = unsafe { location.cast::<[u8; 8]>().read_unaligned() };
        let (kind, id) = (
            u32::from_le_bytes([l[0], l[1], l[2], l[3]]),
            i32::from_le_bytes([l[4], l[5], l[6], l[7]]),
        );
        if kind != LOCATION_DEVICE {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("location->type is {kind}, not a device"),
            ));
        }
        let device = device_of(id, "location->id")?;
        let a = runtime().vmm_access(ptr as u64, device)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(flags, "flags", a.flags()) }
    })
}

/// `hipError_t hipMemGetAllocationPropertiesFromHandle(hipMemAllocationProp*,
/// hipMemGenericAllocationHandle_t)`.
#[export]
pub unsafe extern "C" fn hipMemGetAllocationPropertiesFromHandle(
    prop: *mut c_void,
    handle: hipMemGenericAllocationHandle_t,
) -> hipError_t {
    call("hipMemGetAllocationPropertiesFromHandle", || {
        if prop.is_null() {
            return Err(Failure::null("prop"));
        }
        let props = runtime().vmm_properties(handle_of(handle)?)?;
        let bytes = Prop::encode(&props);
        // SAFETY: a writable 32-byte hipMemAllocationProp by the caller's contract.
        unsafe { prop.cast::<[u8; 32]>().write_unaligned(bytes) };
        Ok(())
    })
}

/// `hipError_t hipMemRetainAllocationHandle(hipMemGenericAllocationHandle_t*, void* addr)`:
/// the handle of the memory mapped at `addr`, with one more reference (to release).
#[export]
pub unsafe extern "C" fn hipMemRetainAllocationHandle(
    handle: *mut hipMemGenericAllocationHandle_t,
    addr: *mut c_void,
) -> hipError_t {
    call("hipMemRetainAllocationHandle", || {
        if handle.is_null() {
            return Err(Failure::null("handle"));
        }
        if addr.is_null() {
            return Err(Failure::null("addr"));
        }
        let h = runtime().vmm_retain(addr as u64)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(handle, "handle", h as hipMemGenericAllocationHandle_t) }
    })
}

/// The handle type of an export or import: POSIX descriptors only.
fn check_handle_type(t: c_int) -> Result<(), Failure> {
    match t as u32 {
        HANDLE_TYPE_POSIX_FD => Ok(()),
        t if HANDLE_TYPES_WIN32.contains(&t) => Err(Failure::new(
            hipErrorNotSupported,
            format!("handle type {t}: Windows handles do not exist here"),
        )),
        t => Err(Failure::new(
            hipErrorInvalidValue,
            format!("handle type {t}"),
        )),
    }
}

/// `hipError_t hipMemExportToShareableHandle(void* shareableHandle,
/// hipMemGenericAllocationHandle_t, hipMemAllocationHandleType, unsigned long long flags)`:
/// writes a new file descriptor (an `int`) the caller owns and may pass to another process.
#[export]
pub unsafe extern "C" fn hipMemExportToShareableHandle(
    shareable: *mut c_void,
    handle: hipMemGenericAllocationHandle_t,
    handle_type: c_int,
    flags: c_ulonglong,
) -> hipError_t {
    call("hipMemExportToShareableHandle", || {
        if shareable.is_null() {
            return Err(Failure::null("shareableHandle"));
        }
        let h = handle_of(handle)?;
        if flags != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("flags {flags:#x} (must be 0)"),
            ));
        }
        check_handle_type(handle_type)?;
        let fd = runtime().vmm_export(h)?.into_raw_fd();
        // SAFETY: an `int` is writable at `shareable` by the caller's contract (unaligned
        // write: the caller's `void*`).
        unsafe { shareable.cast::<c_int>().write_unaligned(fd) };
        Ok(())
    })
}

/// `hipError_t hipMemImportFromShareableHandle(hipMemGenericAllocationHandle_t*,
/// void* osHandle, hipMemAllocationHandleType)`: `osHandle` is the file descriptor's value
/// (`(void*)(uintptr_t)fd`, as CUDA and clr read it); the caller keeps the descriptor. The
/// memory is on the current device.
#[export]
pub unsafe extern "C" fn hipMemImportFromShareableHandle(
    handle: *mut hipMemGenericAllocationHandle_t,
    os_handle: *mut c_void,
    handle_type: c_int,
) -> hipError_t {
    call("hipMemImportFromShareableHandle", || {
        if handle.is_null() {
            return Err(Failure::null("handle"));
        }
        if os_handle.is_null() {
            return Err(Failure::null("osHandle"));
        }
        check_handle_type(handle_type)?;
        let fd = i32::try_from(os_handle as usize).map_err(|_| {
            Failure::new(
                hipErrorInvalidValue,
                format!("osHandle {:#x} is no file descriptor", os_handle as usize),
            )
        })?;
        let device = current_device() as usize;
        let props = AllocationProps {
            device,
            handle_type: HANDLE_TYPE_POSIX_FD,
            layout: default_layout(),
            ..AllocationProps::default()
        };
        // SAFETY: the descriptor is only duplicated with fcntl, which reports one that is not
        // open as EBADF; nothing else reads or closes it.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let h = runtime().vmm_import(borrowed, props)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(handle, "handle", h as hipMemGenericAllocationHandle_t) }
    })
}

/// `hipError_t hipMemMapArrayAsync(hipArrayMapInfo*, unsigned count, hipStream_t)`: sparse
/// HIP arrays are not supported (`hipErrorNotSupported`, as clr returns), after its argument
/// checks.
#[export]
pub extern "C" fn hipMemMapArrayAsync(
    map_info: *mut c_void,
    count: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemMapArrayAsync", || {
        let _ = stream;
        if map_info.is_null() || count == 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "mapInfoList is NULL or count is 0",
            ));
        }
        Err(Failure::new(
            hipErrorNotSupported,
            "hipMemMapArrayAsync: sparse HIP arrays (tiles mapped to physical memory) are not supported",
        ))
    })
}

#[cfg(test)]
mod tests;
