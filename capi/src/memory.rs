//! Memory: allocation (device, pinned host, registered host, managed), copies and fills in
//! stream order, and pointer queries. Every device-side range is checked by the runtime against
//! the allocation that holds it (a copy past an allocation's end, or into freed memory, is
//! `hipErrorInvalidValue`); an address no device knows is the caller's host memory, as in HIP.
//!
//! `hipMemcpyKind` is checked for range, and a side the kind says is the device's must be
//! memory a device knows (`hipErrorInvalidValue` otherwise: it would be read or written as the
//! caller's host memory); then the pointers decide the direction, as `hipMemcpyDefault` does
//! (the software agent's device memory is host memory, so a host side that is device memory
//! still copies the right bytes). Host sides are checked to be mapped for the copy, fills and
//! registrations as the runtime says; every check is made at the call, before anything is
//! queued.

use rocload_ffi::export;
use std::ffi::{c_int, c_uint, c_void};

use rocload_lib::device::MemoryKind;
use rocload_lib::runtime::graph::{CopyForm, CopyNode, MemsetNode, PitchedPtr};
use rocload_lib::runtime::{NodeOp, Stream};

use crate::stream::{current_context, stream_of};
use crate::*;

/// `hipHostMallocMapped | Portable | Coherent | NonCoherent | NumaUser | WriteCombined`.
const HOST_MALLOC_FLAGS: c_uint = 0x1 | 0x2 | 0x4 | 0x2000_0000 | 0x4000_0000 | 0x8000_0000;
/// `hipHostRegisterPortable | Mapped | IoMemory` (and `ReadOnly`, 0x8).
const HOST_REGISTER_FLAGS: c_uint = 0x1 | 0x2 | 0x4 | 0x8;
/// `hipHostRegisterReadOnly`: kernels only read the memory.
const HOST_REGISTER_READ_ONLY: c_uint = 0x8;
/// `hipMemcpyHostToDevice`, `hipMemcpyDeviceToHost`, `hipMemcpyDeviceToDevice`.
const MEMCPY_HOST_TO_DEVICE: c_int = 1;
const MEMCPY_DEVICE_TO_HOST: c_int = 2;
const MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
/// `hipMemAttachGlobal`.
const MEM_ATTACH_GLOBAL: c_uint = 0x1;
/// `hipMemAttachHost`.
const MEM_ATTACH_HOST: c_uint = 0x2;

fn allocate(ptr: *mut *mut c_void, size: usize, kind: MemoryKind) -> Result<(), Failure> {
    allocate_with_flags(ptr, size, kind, 0)
}

/// An allocation, with the flags it was made with recorded (`hipHostGetFlags` returns them).
fn allocate_with_flags(
    ptr: *mut *mut c_void,
    size: usize,
    kind: MemoryKind,
    flags: c_uint,
) -> Result<(), Failure> {
    crate::capture::check_unsafe("allocating memory")?;
    if ptr.is_null() {
        return Err(Failure::null("ptr"));
    }
    // HIP: a zero-byte allocation succeeds with NULL.
    let address = if size == 0 {
        0
    } else {
        let rt = runtime();
        let address = rt.allocate_for_program(current_device(), size as u64, kind)?;
        if flags != 0 {
            rt.set_allocation_flags(address, flags)?;
        }
        address
    };
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out(ptr, "ptr", address as *mut c_void) }
}

/// `hipHostMallocCoherent | hipHostMallocNonCoherent`: at most one of them.
const COHERENCE_FLAGS: c_uint = 0x4000_0000 | 0x8000_0000;

fn check_host_malloc_flags(flags: c_uint) -> Result<(), Failure> {
    if flags & !HOST_MALLOC_FLAGS != 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("unknown host allocation flags {flags:#x}"),
        ));
    }
    if flags & COHERENCE_FLAGS == COHERENCE_FLAGS {
        return Err(Failure::new(
            hipErrorInvalidValue,
            "hipHostMallocCoherent and hipHostMallocNonCoherent together",
        ));
    }
    Ok(())
}

fn free(ptr: *mut c_void) -> Result<(), Failure> {
    crate::capture::check_unsafe("freeing memory")?;
    if ptr.is_null() {
        return Ok(());
    }
    Ok(runtime().free(ptr as u64)?)
}

/// `hipError_t hipMalloc(void** ptr, size_t size)`: device memory on the current device.
#[export]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    call("hipMalloc", || allocate(ptr, size, MemoryKind::Device))
}

/// `hipError_t hipExtMallocWithFlags(void** ptr, size_t size, unsigned flags)`: device memory;
/// `hipDeviceMallocDefault` (0), `hipDeviceMallocFinegrained` (1) or `hipMallocSignalMemory`
/// (2, exactly 8 bytes), as clr accepts them. Fine-grained memory is what every allocation is
/// on the software agent (the host and kernels see each other's writes as they happen).
#[export]
pub unsafe extern "C" fn hipExtMallocWithFlags(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> hipError_t {
    call("hipExtMallocWithFlags", || {
        match flags {
            0 | 1 => {}
            2 if size == 8 => {}
            2 => {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("signal memory is 8 bytes, not {size}"),
                ))
            }
            f => {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("hipExtMallocWithFlags flags {f:#x}"),
                ))
            }
        }
        allocate_with_flags(ptr, size, MemoryKind::Device, flags)
    })
}

/// `hipError_t hipFree(void* ptr)`: waits for the device, then frees; NULL is a no-op; a
/// pointer that is not the start of a live allocation (double free, interior, unknown) is
/// `hipErrorInvalidValue`.
#[export]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    call("hipFree", || free(ptr))
}

/// `hipError_t hipHostMalloc(void** ptr, size_t size, unsigned flags)`: pinned host memory
/// every device can use.
#[export]
pub unsafe extern "C" fn hipHostMalloc(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> hipError_t {
    call("hipHostMalloc", || {
        check_host_malloc_flags(flags)?;
        allocate_with_flags(ptr, size, MemoryKind::PinnedHost, flags)
    })
}

/// `hipError_t hipMallocHost(void** ptr, size_t size)` (deprecated spelling).
#[export]
pub unsafe extern "C" fn hipMallocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    call("hipMallocHost", || {
        allocate(ptr, size, MemoryKind::PinnedHost)
    })
}

/// `hipError_t hipHostAlloc(void** ptr, size_t size, unsigned flags)` (deprecated spelling).
#[export]
pub unsafe extern "C" fn hipHostAlloc(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> hipError_t {
    call("hipHostAlloc", || {
        check_host_malloc_flags(flags)?;
        allocate_with_flags(ptr, size, MemoryKind::PinnedHost, flags)
    })
}

/// `hipError_t hipMemAllocHost(void** ptr, size_t size)`: the driver API's pinned host
/// memory (`hipHostMalloc` with no flags).
#[export]
pub unsafe extern "C" fn hipMemAllocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    call("hipMemAllocHost", || {
        allocate(ptr, size, MemoryKind::PinnedHost)
    })
}

/// `hipError_t hipHostFree(void* ptr)`.
#[export]
pub unsafe extern "C" fn hipHostFree(ptr: *mut c_void) -> hipError_t {
    call("hipHostFree", || free(ptr))
}

/// `hipError_t hipFreeHost(void* ptr)` (deprecated spelling).
#[export]
pub unsafe extern "C" fn hipFreeHost(ptr: *mut c_void) -> hipError_t {
    call("hipFreeHost", || free(ptr))
}

/// `hipError_t hipMallocManaged(void** ptr, size_t size, unsigned flags)`.
#[export]
pub unsafe extern "C" fn hipMallocManaged(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> hipError_t {
    call("hipMallocManaged", || {
        // clr 5.2.3: exactly one of the two flags, and no empty allocation.
        if flags != MEM_ATTACH_GLOBAL && flags != MEM_ATTACH_HOST {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!(
                    "hipMallocManaged flags {flags:#x}: hipMemAttachGlobal or hipMemAttachHost"
                ),
            ));
        }
        if size == 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "hipMallocManaged of 0 bytes",
            ));
        }
        allocate_with_flags(ptr, size, MemoryKind::Managed, flags)
    })
}

/// `hipError_t hipHostRegister(void* hostPtr, size_t sizeBytes, unsigned flags)`: every device
/// may use the range; its device address is its host address.
#[export]
pub unsafe extern "C" fn hipHostRegister(
    host_ptr: *mut c_void,
    size: usize,
    flags: c_uint,
) -> hipError_t {
    call("hipHostRegister", || {
        if host_ptr.is_null() || size == 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "hostPtr is NULL or sizeBytes is 0",
            ));
        }
        if flags & !HOST_REGISTER_FLAGS != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("unknown hipHostRegister flags {flags:#x}"),
            ));
        }
        if runtime().pointer_info(host_ptr as u64).is_some() {
            return Err(Failure::new(
                hipErrorHostMemoryAlreadyRegistered,
                format!("{host_ptr:p} is already known to the runtime"),
            ));
        }
        // Unmapped, PROT_NONE or wrapping ranges are hipErrorInvalidValue (clr: the pinning
        // fails), before any device records them.
        let (base, bytes) = (host_ptr as u64, size as u64);
        let registered = if flags & HOST_REGISTER_READ_ONLY != 0 {
            runtime().register_host_read_only(base, bytes)
        } else {
            runtime().register_host(base, bytes)
        };
        registered.map_err(|e| match e {
            RuntimeError::Device { .. } => Failure {
                code: hipErrorHostMemoryAlreadyRegistered,
                message: e.to_string(),
                error: Some(e),
            },
            e => e.into(),
        })?;
        if flags != 0 {
            runtime().set_allocation_flags(base, flags)?;
        }
        Ok(())
    })
}

/// `hipError_t hipHostUnregister(void* hostPtr)`: returns once no running kernel can still
/// touch the memory; NULL is `hipErrorInvalidValue`, memory not registered
/// `hipErrorHostMemoryNotRegistered`.
#[export]
pub unsafe extern "C" fn hipHostUnregister(host_ptr: *mut c_void) -> hipError_t {
    call("hipHostUnregister", || {
        if host_ptr.is_null() {
            return Err(Failure::null("hostPtr"));
        }
        runtime()
            .unregister_host(host_ptr as u64)
            .map_err(|e| match e {
                RuntimeError::Device { .. } => Failure {
                    code: hipErrorHostMemoryNotRegistered,
                    message: e.to_string(),
                    error: Some(e),
                },
                e => e.into(),
            })
    })
}

/// `hipError_t hipHostGetDevicePointer(void** devPtr, void* hostPtr, unsigned flags)`: the
/// same address, for pinned, registered and managed memory.
#[export]
pub unsafe extern "C" fn hipHostGetDevicePointer(
    dev_ptr: *mut *mut c_void,
    host_ptr: *mut c_void,
    flags: c_uint,
) -> hipError_t {
    call("hipHostGetDevicePointer", || {
        if dev_ptr.is_null() {
            return Err(Failure::null("devPtr"));
        }
        if flags != 0 {
            return Err(Failure::new(hipErrorInvalidValue, "flags must be 0"));
        }
        match runtime().host_device_pointer(host_ptr as u64) {
            Some(device) => {
                // SAFETY: non-null, writable by the caller's contract.
                unsafe { out(dev_ptr, "devPtr", device as *mut c_void) }
            }
            None => Err(Failure::new(
                hipErrorInvalidValue,
                format!("{host_ptr:p} is not pinned, registered or managed host memory"),
            )),
        }
    })
}

/// `hipError_t hipHostGetFlags(unsigned* flagsPtr, void* hostPtr)`: the flags the memory
/// holding `hostPtr` was allocated or registered with (0 when none were given), as clr
/// answers for any memory it knows.
#[export]
pub unsafe extern "C" fn hipHostGetFlags(flags: *mut c_uint, host_ptr: *mut c_void) -> hipError_t {
    call("hipHostGetFlags", || {
        if host_ptr.is_null() {
            return Err(Failure::null("hostPtr"));
        }
        match runtime().allocation_flags(host_ptr as u64) {
            Some(f) => {
                // SAFETY: writable by the caller's contract (NULL rejected).
                unsafe { out(flags, "flagsPtr", f) }
            }
            None => Err(Failure::new(
                hipErrorInvalidValue,
                format!("{host_ptr:p} is not memory the runtime allocated or registered"),
            )),
        }
    })
}

/// `hipError_t hipMemGetInfo(size_t* free, size_t* total)`: the current device's memory, as
/// its properties give it (on the software agent: the host's, less what the device holds).
#[export]
pub unsafe extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> hipError_t {
    call("hipMemGetInfo", || {
        let info = current_context()?.device().memory_info();
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe {
            out(free, "free", info.free as usize)?;
            out(total, "total", info.total as usize)
        }
    })
}

/// `hipError_t hipPointerGetAttributes(hipPointerAttribute_t*, const void* ptr)`: memory of
/// any device (interior pointers included); unknown pointers are `hipErrorInvalidValue`.
#[export]
pub unsafe extern "C" fn hipPointerGetAttributes(
    attributes: *mut hipPointerAttribute_t,
    ptr: *const c_void,
) -> hipError_t {
    call("hipPointerGetAttributes", || {
        if attributes.is_null() {
            return Err(Failure::null("attributes"));
        }
        let info = runtime().pointer_info(ptr as u64).ok_or_else(|| {
            Failure::new(
                hipErrorInvalidValue,
                format!("{ptr:p} is not memory the runtime allocated or registered"),
            )
        })?;
        let kind = info.allocation.kind;
        let host_side = crate::pointer::host_side(kind);
        let a = hipPointerAttribute_t {
            memoryType: crate::pointer::memory_type_of(kind),
            device: info.device as c_int,
            devicePointer: ptr as *mut c_void,
            hostPointer: if host_side {
                ptr as *mut c_void
            } else {
                std::ptr::null_mut()
            },
            isManaged: c_int::from(kind == MemoryKind::Managed),
            allocationFlags: runtime().allocation_flags(ptr as u64).unwrap_or(0),
        };
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(attributes, "attributes", a) }
    })
}

/// `hipError_t hipMemPtrGetInfo(void* ptr, size_t* size)`: the size of the allocation `ptr`
/// starts.
#[export]
pub unsafe extern "C" fn hipMemPtrGetInfo(ptr: *mut c_void, size: *mut usize) -> hipError_t {
    call("hipMemPtrGetInfo", || {
        match runtime().pointer_info(ptr as u64) {
            Some(info) => {
                // SAFETY: writable by the caller's contract (NULL rejected).
                unsafe { out(size, "size", info.allocation.size as usize) }
            }
            None => Err(Failure::new(
                hipErrorInvalidValue,
                format!("{ptr:p} is not runtime memory"),
            )),
        }
    })
}

/// `hipError_t hipMemGetAddressRange(hipDeviceptr_t* base, size_t* size, hipDeviceptr_t ptr)`.
#[export]
pub unsafe extern "C" fn hipMemGetAddressRange(
    base: *mut hipDeviceptr_t,
    size: *mut usize,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    call("hipMemGetAddressRange", || {
        let info = runtime().pointer_info(ptr as u64).ok_or_else(|| {
            Failure::new(hipErrorNotFound, format!("{ptr:p} is not runtime memory"))
        })?;
        // SAFETY: non-null outputs are writable by the caller's contract.
        unsafe {
            if !base.is_null() {
                base.write(info.allocation.base as hipDeviceptr_t);
            }
            if !size.is_null() {
                size.write(info.allocation.size as usize);
            }
        }
        Ok(())
    })
}

// ------------------------------------------------------------------------------ copies

pub(crate) fn check_kind(kind: c_int) -> Result<(), Failure> {
    if (memcpy_kind::HOST_TO_HOST..=memcpy_kind::DEFAULT).contains(&kind) {
        Ok(())
    } else {
        Err(Failure::new(
            hipErrorInvalidMemcpyDirection,
            format!("hipMemcpyKind {kind}"),
        ))
    }
}

/// The stream a synchronous copy runs on: the null stream of the device whose own memory
/// (`hipMalloc`) one of its ranges is, else of the current device (pinned, registered and
/// managed memory is every device's, so the copy is ordered after the current device's work,
/// as clr orders it on the current device's null stream).
fn sync_stream(addresses: &[u64]) -> Result<Stream, Failure> {
    let rt = runtime();
    let device = addresses
        .iter()
        .filter_map(|&a| rt.pointer_info(a))
        .find(|i| i.allocation.kind == MemoryKind::Device)
        .map_or_else(current_device, |i| i.device as i64);
    Ok(rt.device(device)?.null_stream()?)
}

/// The stream an operation runs on and whether it is waited for: the given stream, or with
/// `None` synchronously on [`sync_stream`].
fn target(stream: Option<hipStream_t>, addresses: &[u64]) -> Result<(Stream, bool), Failure> {
    Ok(match stream {
        Some(h) => (stream_of(h)?, false),
        None => (sync_stream(addresses)?, true),
    })
}

/// Refuses a copy whose `kind` says a side is the device's when no device knows that side's
/// address (it would be taken for the caller's host memory).
pub(crate) fn check_sides(
    dst: *const c_void,
    src: *const c_void,
    kind: c_int,
) -> Result<(), Failure> {
    let (dst_device, src_device) = match kind {
        MEMCPY_HOST_TO_DEVICE => (true, false),
        MEMCPY_DEVICE_TO_HOST => (false, true),
        MEMCPY_DEVICE_TO_DEVICE => (true, true),
        _ => (false, false),
    };
    for (address, device, side) in [(dst, dst_device, "dst"), (src, src_device, "src")] {
        if device
            && !address.is_null()
            && runtime().pointer_info(address as u64).is_none()
            && !rocload_lib::runtime::graph::GraphAllocation::covers(address as u64, 1)
        {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!(
                    "{side} {address:p} is not memory of any device, and hipMemcpyKind {kind} \
                     says it is"
                ),
            ));
        }
    }
    Ok(())
}

/// A copy of `kind` (checked with [`check_kind`] and [`check_sides`]); with `stream` `None`
/// synchronous on [`sync_stream`].
///
/// # Safety
/// Host-side ranges must be valid for `len` bytes until the copy is done.
pub(crate) unsafe fn copy_of_kind(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    stream: Option<hipStream_t>,
    kind: c_int,
) -> Result<(), Failure> {
    check_kind(kind)?;
    if len != 0 {
        check_sides(dst, src, kind)?;
    }
    // SAFETY: the caller's contract.
    unsafe { copy(dst, src, len, kind, stream) }
}

/// A copy; with `stream` `None` synchronous on [`sync_stream`].
///
/// # Safety
/// Host-side ranges must be valid for `len` bytes until the copy is done.
pub(crate) unsafe fn copy(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    kind: c_int,
    stream: Option<hipStream_t>,
) -> Result<(), Failure> {
    if len == 0 {
        return Ok(());
    }
    if dst.is_null() || src.is_null() {
        return Err(Failure::new(hipErrorInvalidValue, "dst or src is NULL"));
    }
    let (d, s) = (dst as u64, src as u64);
    let (st, wait) = target(stream, &[d, s])?;
    if wait {
        crate::capture::check_synchronous("a synchronous copy")?;
    } else if let Some(c) = crate::capture::intercept(&st, "a copy")? {
        let form = CopyForm::Linear {
            dst: d,
            src: s,
            len: len as u64,
        };
        return crate::capture::add(&c, &st, NodeOp::Copy(CopyNode { form, kind }));
    }
    // SAFETY: host-side ranges by the caller's contract; device-side ones are checked.
    unsafe { runtime().copy(&st, d, s, len as u64, wait) }?;
    Ok(())
}

/// `hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind)`:
/// synchronous; ordered after the null stream's work.
#[export]
pub unsafe extern "C" fn hipMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: c_int,
) -> hipError_t {
    call("hipMemcpy", || {
        // SAFETY: HIP's contract on host ranges.
        unsafe { copy_of_kind(dst, src, size, None, kind) }
    })
}

/// `hipError_t hipMemcpyAsync(void* dst, const void* src, size_t, hipMemcpyKind, hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpyAsync", || {
        // SAFETY: HIP's contract on host ranges.
        unsafe { copy_of_kind(dst, src, size, Some(stream), kind) }
    })
}

/// `hipError_t hipMemcpyWithStream(void* dst, const void* src, size_t, hipMemcpyKind,
/// hipStream_t)`: synchronous on `stream`.
#[export]
pub unsafe extern "C" fn hipMemcpyWithStream(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpyWithStream", || {
        // Synchronous: nothing to wait for on a capturing stream.
        crate::capture::check_stream_wait(&stream_of(stream)?, "hipMemcpyWithStream")?;
        // SAFETY: HIP's contract on host ranges.
        unsafe { copy_of_kind(dst, src, size, Some(stream), kind) }?;
        Ok(stream_of(stream)?.synchronize()?)
    })
}

/// Declares copies between typed ends (`hipMemcpyHtoD` and the like): `(dst, src, size)`, and
/// the `Async` form with a stream.
macro_rules! typed_copies {
    ($( $(#[$doc:meta])* fn $name:ident($dst:ty, $src:ty) = $kind:expr $(, $async:ident)?; )*) => { $(
        $(#[$doc])*
        #[export]
        pub unsafe extern "C" fn $name(
            dst: $dst,
            src: $src,
            size: usize
            $(, $async: hipStream_t)?
        ) -> hipError_t {
            let stream: Option<hipStream_t> = None $(.or(Some($async)))?;
            // SAFETY: HIP's contract on host ranges.
            call(stringify!($name), || unsafe {
                copy_of_kind(dst as *mut c_void, src as *const c_void, size, stream, $kind)
            })
        }
    )* };
}

typed_copies! {
    /// `hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void* src, size_t sizeBytes)`.
    fn hipMemcpyHtoD(hipDeviceptr_t, *mut c_void) = MEMCPY_HOST_TO_DEVICE;
    /// `hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t sizeBytes)`.
    fn hipMemcpyDtoH(*mut c_void, hipDeviceptr_t) = MEMCPY_DEVICE_TO_HOST;
    /// `hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes)`.
    fn hipMemcpyDtoD(hipDeviceptr_t, hipDeviceptr_t) = MEMCPY_DEVICE_TO_DEVICE;
    /// `hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t, void*, size_t, hipStream_t)`.
    fn hipMemcpyHtoDAsync(hipDeviceptr_t, *mut c_void) = MEMCPY_HOST_TO_DEVICE, stream;
    /// `hipError_t hipMemcpyDtoHAsync(void*, hipDeviceptr_t, size_t, hipStream_t)`.
    fn hipMemcpyDtoHAsync(*mut c_void, hipDeviceptr_t) = MEMCPY_DEVICE_TO_HOST, stream;
    /// `hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t, hipDeviceptr_t, size_t, hipStream_t)`.
    fn hipMemcpyDtoDAsync(hipDeviceptr_t, hipDeviceptr_t) = MEMCPY_DEVICE_TO_DEVICE, stream;
}

fn check_device(device: c_int) -> Result<(), Failure> {
    runtime().device(i64::from(device))?;
    Ok(())
}

/// `hipError_t hipMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice,
/// size_t sizeBytes)`.
#[export]
pub unsafe extern "C" fn hipMemcpyPeer(
    dst: *mut c_void,
    dst_device: c_int,
    src: *const c_void,
    src_device: c_int,
    size: usize,
) -> hipError_t {
    call("hipMemcpyPeer", || {
        check_device(dst_device)?;
        check_device(src_device)?;
        // SAFETY: HIP's contract on host ranges.
        unsafe { copy_of_kind(dst, src, size, None, MEMCPY_DEVICE_TO_DEVICE) }
    })
}

/// `hipError_t hipMemcpyPeerAsync(void*, int, const void*, int, size_t, hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipMemcpyPeerAsync(
    dst: *mut c_void,
    dst_device: c_int,
    src: *const c_void,
    src_device: c_int,
    size: usize,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpyPeerAsync", || {
        check_device(dst_device)?;
        check_device(src_device)?;
        // SAFETY: HIP's contract on host ranges.
        unsafe { copy_of_kind(dst, src, size, Some(stream), MEMCPY_DEVICE_TO_DEVICE) }
    })
}

/// A 2D copy; `stream` `None` is synchronous.
///
/// # Safety
/// Host-side rows must be valid until the copy is done.
#[allow(clippy::too_many_arguments)]
unsafe fn copy_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: Option<hipStream_t>,
) -> Result<(), Failure> {
    check_kind(kind)?;
    if width == 0 || height == 0 {
        return Ok(());
    }
    if dst.is_null() || src.is_null() {
        return Err(Failure::new(hipErrorInvalidValue, "dst or src is NULL"));
    }
    check_sides(dst, src, kind)?;
    if dpitch < width || spitch < width {
        return Err(Failure::new(
            hipErrorInvalidPitchValue,
            format!("pitches {dpitch} and {spitch} are smaller than the width {width}"),
        ));
    }
    let (d, s) = (dst as u64, src as u64);
    let (st, wait) = target(stream, &[d, s])?;
    if wait {
        crate::capture::check_synchronous("a synchronous 2D copy")?;
    } else if let Some(c) = crate::capture::intercept(&st, "a 2D copy")? {
        let ptr = |p: u64, pitch: usize| PitchedPtr {
            ptr: p,
            pitch: pitch as u64,
            xsize: width as u64,
            ysize: height as u64,
        };
        let form = CopyForm::Pitched {
            src: ptr(s, spitch),
            src_pos: [0; 3],
            dst: ptr(d, dpitch),
            dst_pos: [0; 3],
            extent: [width as u64, height as u64, 1],
        };
        return crate::capture::add(&c, &st, NodeOp::Copy(CopyNode { form, kind }));
    }
    // SAFETY: host rows by the caller's contract; device extents are checked.
    unsafe {
        runtime().copy_2d(
            &st,
            d,
            dpitch as u64,
            s,
            spitch as u64,
            width as u64,
            height as u64,
            wait,
        )
    }?;
    Ok(())
}

/// `hipError_t hipMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch,
/// size_t width, size_t height, hipMemcpyKind kind)`.
#[export]
pub unsafe extern "C" fn hipMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> hipError_t {
    call("hipMemcpy2D", || {
        // SAFETY: HIP's contract on host rows.
        unsafe { copy_2d(dst, dpitch, src, spitch, width, height, kind, None) }
    })
}

/// `hipError_t hipMemcpy2DAsync(..., hipMemcpyKind kind, hipStream_t stream)`.
#[export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpy2DAsync", || {
        // SAFETY: HIP's contract on host rows.
        unsafe { copy_2d(dst, dpitch, src, spitch, width, height, kind, Some(stream)) }
    })
}

// ------------------------------------------------------------------------------ fills

/// Fills `count` elements of `width` bytes at `dst` with `pattern`; `stream` `None` is
/// synchronous.
fn fill(
    dst: *mut c_void,
    pattern: u32,
    width: u8,
    count: usize,
    stream: Option<hipStream_t>,
) -> Result<(), Failure> {
    if count == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(Failure::null("dst"));
    }
    let len = (count as u64)
        .checked_mul(u64::from(width))
        .ok_or_else(|| Failure::new(hipErrorInvalidValue, "size overflows"))?;
    let d = dst as u64;
    let (st, wait) = target(stream, &[d])?;
    if wait {
        crate::capture::check_synchronous("a synchronous fill")?;
    } else if let Some(c) = crate::capture::intercept(&st, "a fill")? {
        let node = MemsetNode {
            dst: d,
            value: pattern,
            element_size: width,
            width: count as u64,
            height: 1,
            pitch: len,
        };
        return crate::capture::add(&c, &st, NodeOp::Memset(node));
    }
    // SAFETY: the runtime refuses an address no device knows (HIP fills device memory) and a
    // range past its allocation, before anything is queued.
    unsafe { runtime().fill(&st, d, pattern, width, len, wait) }?;
    Ok(())
}

/// `hipError_t hipMemset(void* dst, int value, size_t sizeBytes)`.
#[export]
pub unsafe extern "C" fn hipMemset(dst: *mut c_void, value: c_int, size: usize) -> hipError_t {
    call("hipMemset", || {
        fill(dst, value as u32 & 0xff, 1, size, None)
    })
}

/// `hipError_t hipMemsetAsync(void* dst, int value, size_t sizeBytes, hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipMemsetAsync(
    dst: *mut c_void,
    value: c_int,
    size: usize,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemsetAsync", || {
        fill(dst, value as u32 & 0xff, 1, size, Some(stream))
    })
}

/// Declares fills of elements (`hipMemsetD8` and the like): `(dst, value, count)` with the
/// element width in bytes, and the `Async` form with a stream.
macro_rules! element_fills {
    ($( $(#[$doc:meta])* fn $name:ident($value:ty, $width:literal) $(, $async:ident)?; )*) => { $(
        $(#[$doc])*
        #[export]
        pub unsafe extern "C" fn $name(
            dst: hipDeviceptr_t,
            value: $value,
            count: usize
            $(, $async: hipStream_t)?
        ) -> hipError_t {
            let stream: Option<hipStream_t> = None $(.or(Some($async)))?;
            // `as u32` keeps the element's bits (an int's two's complement for D32).
            call(stringify!($name), || fill(dst, value as u32, $width, count, stream))
        }
    )* };
}

element_fills! {
    /// `hipError_t hipMemsetD8(hipDeviceptr_t dest, unsigned char value, size_t count)`.
    fn hipMemsetD8(u8, 1);
    /// `hipError_t hipMemsetD16(hipDeviceptr_t dest, unsigned short value, size_t count)`.
    fn hipMemsetD16(u16, 2);
    /// `hipError_t hipMemsetD32(hipDeviceptr_t dest, int value, size_t count)`.
    fn hipMemsetD32(c_int, 4);
    /// `hipError_t hipMemsetD8Async(hipDeviceptr_t, unsigned char, size_t, hipStream_t)`.
    fn hipMemsetD8Async(u8, 1), stream;
    /// `hipError_t hipMemsetD16Async(hipDeviceptr_t, unsigned short, size_t, hipStream_t)`.
    fn hipMemsetD16Async(u16, 2), stream;
    /// `hipError_t hipMemsetD32Async(hipDeviceptr_t, int value, size_t count, hipStream_t)`.
    fn hipMemsetD32Async(c_int, 4), stream;
}

// ------------------------------------------------------------------------------ HIP 6.5 / 7.1

/// `hipMemcpyAttributes` (HIP 7.1, 24 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMemcpyAttributes {
    /// `hipMemcpySrcAccessOrder`.
    pub srcAccessOrder: c_int,
    /// Source location hint (ignored: one address space).
    pub srcLocHint: crate::types::hipMemLocation,
    /// Destination location hint (ignored).
    pub dstLocHint: crate::types::hipMemLocation,
    /// `hipMemcpyFlags`.
    pub flags: c_uint,
}
const _: () = assert!(std::mem::size_of::<hipMemcpyAttributes>() == 24);

/// `hipError_t hipMemcpyBatchAsync(void** dsts, void** srcs, size_t* sizes, size_t count,
/// hipMemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs, size_t* failIdx,
/// hipStream_t stream)` (HIP 7.1): `count` linear copies in `stream`'s order. Attributes, when
/// given, must be valid and their indices start at 0 and grow (CUDA's rules; HIP documents them
/// as unused, so none is also accepted). Every copy is checked before any is queued; on a
/// refusal `failIdx` (when given) names the copy, `SIZE_MAX` when the fault is no copy's.
#[export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipMemcpyBatchAsync(
    dsts: *const *mut c_void,
    srcs: *const *const c_void,
    sizes: *const usize,
    count: usize,
    attrs: *const hipMemcpyAttributes,
    attrs_idxs: *const usize,
    num_attrs: usize,
    fail_idx: *mut usize,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpyBatchAsync", || {
        let fail = |i: usize, f: Failure| {
            if !fail_idx.is_null() {
                // SAFETY: writable by the caller's contract when not NULL.
                unsafe { fail_idx.write(i) };
            }
            f
        };
        let none = |f: Failure| fail(usize::MAX, f);
        if count == 0 || dsts.is_null() || srcs.is_null() || sizes.is_null() {
            return Err(none(Failure::new(
                hipErrorInvalidValue,
                "count is 0 or dsts, srcs or sizes is NULL",
            )));
        }
        if num_attrs != 0 {
            if attrs.is_null() || attrs_idxs.is_null() || num_attrs > count {
                return Err(none(Failure::new(
                    hipErrorInvalidValue,
                    format!("{num_attrs} attributes for {count} copies, or attrs/attrsIdxs NULL"),
                )));
            }
            let mut previous = None;
            for k in 0..num_attrs {
                // SAFETY: `num_attrs` entries by the caller's contract.
                let (a, at) = unsafe { (attrs.add(k).read_unaligned(), attrs_idxs.add(k).read()) };
                let grows = match previous {
                    None => at == 0,
                    Some(p) => at > p && at < count,
                };
                if !grows {
                    return Err(none(Failure::new(
                        hipErrorInvalidValue,
                        format!("attrsIdxs[{k}] = {at}: must start at 0 and grow below {count}"),
                    )));
                }
                previous = Some(at);
                crate::array::check_copy_attributes(a.srcAccessOrder, a.flags)
                    .map_err(|f| fail(at, f))?;
            }
        }
        let st = stream_of(stream).map_err(none)?;
        let rt = runtime();
        let mut copies = Vec::new();
        copies
            .try_reserve(count)
            .map_err(|_| none(Failure::new(hipErrorOutOfMemory, "too many copies")))?;
        for i in 0..count {
            // SAFETY: `count` entries in each array by the caller's contract.
            let (d, s, n) = unsafe { (*dsts.add(i) as u64, *srcs.add(i) as u64, *sizes.add(i)) };
            if n != 0 && (d == 0 || s == 0) {
                return Err(fail(
                    i,
                    Failure::new(
                        hipErrorInvalidValue,
                        format!("copy {i}: dst or src is NULL"),
                    ),
                ));
            }
            // Device-side ranges are checked now, so nothing is queued for a batch that fails.
            for (a, side) in [(d, "dst"), (s, "src")] {
                if n != 0 && rt.pointer_info(a).is_some() {
                    rt.check_device_memory(a, n as u64, side)
                        .map_err(|e| fail(i, e.into()))?;
                }
            }
            copies.push((d, s, n));
        }
        let captured = crate::capture::intercept(&st, "a batch of copies").map_err(none)?;
        for (i, (d, s, n)) in copies.into_iter().enumerate() {
            if n == 0 {
                continue;
            }
            if let Some(c) = &captured {
                let form = CopyForm::Linear {
                    dst: d,
                    src: s,
                    len: n as u64,
                };
                let op = NodeOp::Copy(CopyNode {
                    form,
                    kind: memcpy_kind::DEFAULT,
                });
                crate::capture::add(c, &st, op).map_err(|f| fail(i, f))?;
                continue;
            }
            // SAFETY: host-side ranges by the caller's contract; device-side ones are checked.
            unsafe { rt.copy(&st, d, s, n as u64, false) }.map_err(|e| fail(i, e.into()))?;
        }
        Ok(())
    })
}

/// `hipMemRangeHandleTypeDmaBufFd`.
const RANGE_HANDLE_DMA_BUF: c_int = 1;
/// `hipMemRangeFlagDmaBufMappingTypePcie`.
const RANGE_FLAG_PCIE: u64 = 1;

/// `hipError_t hipMemGetHandleForAddressRange(void* handle, hipDeviceptr_t dptr, size_t size,
/// hipMemRangeHandleType handleType, unsigned long long flags)` (HIP 6.5/7.0): a dma-buf
/// descriptor for a range of device memory. A dma-buf is exported by a GPU's kernel driver
/// (amdgpu's); the software agent's device memory is ordinary host memory that no driver
/// exports, so a valid request is `hipErrorNotSupported`, with the reason in the log, as CUDA
/// answers where dma-bufs are unavailable.
#[export]
pub unsafe extern "C" fn hipMemGetHandleForAddressRange(
    handle: *mut c_void,
    dptr: *mut c_void,
    size: usize,
    handle_type: c_int,
    flags: u64,
) -> hipError_t {
    call("hipMemGetHandleForAddressRange", || {
        if handle.is_null() {
            return Err(Failure::null("handle"));
        }
        if dptr.is_null() || size == 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "dptr is NULL or size is 0",
            ));
        }
        if handle_type != RANGE_HANDLE_DMA_BUF {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("handleType {handle_type} (only hipMemRangeHandleTypeDmaBufFd, 1)"),
            ));
        }
        if flags & !RANGE_FLAG_PCIE != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("flags {flags:#x}"),
            ));
        }
        let rt = runtime();
        rt.check_device_memory(dptr as u64, size as u64, "address range")?;
        Err(Failure::new(
            hipErrorNotSupported,
            format!(
                "a dma-buf of {size} bytes at {dptr:p}: dma-bufs are exported by a GPU's kernel \
                 driver, and this device's memory is host memory no driver exports"
            ),
        ))
    })
}
