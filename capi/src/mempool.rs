//! Stream-ordered allocation: `hipMallocAsync`, `hipFreeAsync`, `hipMallocFromPoolAsync`,
//! `hipMemPool*` and the device's default and current pool, over the runtime's pools
//! (`rocload_lib::runtime::mempool`, where the reuse rules live). A `hipMemPool_t` is a
//! handle; a device's default pool keeps one handle for the process.
//!
//! Error codes are HIP 5.2.3's (clr's `hip_mempool.cpp` at rocm-5.2.3): a NULL pointer, a bad
//! pool or stream handle, a zero size, a bad device or attribute are `hipErrorInvalidValue`.
//! Where 5.2.3 did nothing and returned success, or crashed, the call does what HIP documents
//! instead: an allocation that fails is `hipErrorOutOfMemory` (5.2.3 returned success and
//! NULL), a default pool cannot be destroyed, resetting `hipMemPoolAttrReservedMemHigh` works,
//! access is checked and recorded, a pool for another device cannot become a device's current
//! pool (`hipErrorInvalidDevice`).
//!
//! Sharing between processes is refused, never faked: the software agent's pool memory is
//! private to the process, so a pool for POSIX file descriptors cannot be created and a pool
//! cannot be imported (`hipErrorNotSupported`, saying why), and no pool or pointer can be
//! exported (`hipErrorInvalidValue`: every pool was created with `hipMemHandleTypeNone`).
//! Peer access to a pool's memory is refused likewise (`hipErrorNotSupported`).

use rocload_ffi::export;
use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};

use parking_lot::Mutex;
use rocload_lib::runtime::{MemPool, Pool, PoolAccess, Stream};

use crate::stream::stream_of;
use crate::*;

/// Pools given to C callers: handle -> pool.
static POOLS: HandleTable<MemPool> = HandleTable::new(kind::MEM_POOL);
/// The handle of each pool given out (so a default pool keeps one handle): pool id -> handle.
static HANDLES: Mutex<Option<HashMap<u64, u64>>> = Mutex::new(None);

/// `hipMemLocationTypeDevice`.
const LOCATION_DEVICE: c_int = 1;
/// `hipMemAllocationTypePinned`.
const ALLOCATION_PINNED: c_int = 1;
/// `hipMemHandleTypePosixFileDescriptor`.
const HANDLE_POSIX_FD: c_int = 0x1;
/// `hipMemHandleTypeWin32 | hipMemHandleTypeWin32Kmt`.
const HANDLE_WIN32: c_int = 0x2 | 0x4;

/// Why no pool can be shared with another process.
const NOT_SHAREABLE: &str = "the software agent's pool memory is private to this process \
    (no memory object another process could map backs it), so pools cannot be shared through \
    file descriptors";

/// The handle for `pool`, the same every time.
fn handle_of(pool: MemPool) -> Result<hipMemPool_t, Failure> {
    let mut handles = HANDLES.lock();
    let map = handles.get_or_insert_with(HashMap::new);
    if let Some(&h) = map.get(&pool.id()) {
        return Ok(h as hipMemPool_t);
    }
    let id = pool.id();
    let h = POOLS
        .insert(pool)
        .ok_or_else(|| Failure::new(hipErrorOutOfMemory, "2^24 memory pools are live"))?;
    map.insert(id, h);
    Ok(h as hipMemPool_t)
}

/// The pool a handle names; NULL or unknown is `hipErrorInvalidValue`, as in HIP 5.2.3.
fn pool_of(pool: hipMemPool_t) -> Result<MemPool, Failure> {
    if pool.is_null() {
        return Err(Failure::null("mem_pool"));
    }
    POOLS.get(pool as u64).ok_or_else(|| {
        Failure::new(
            hipErrorInvalidValue,
            format!("{pool:p} is not a live memory pool"),
        )
    })
}

/// The stream a `hipStream_t` names; an unknown one is `hipErrorInvalidValue` here (clr's
/// `hip::isValid` check in these calls).
fn stream_arg(stream: hipStream_t) -> Result<Stream, Failure> {
    stream_of(stream).map_err(|f| {
        if f.code == hipErrorInvalidHandle {
            Failure {
                code: hipErrorInvalidValue,
                ..f
            }
        } else {
            f
        }
    })
}

/// Device `device`, valid and running kernels; anything else is `hipErrorInvalidValue`.
fn device_arg(device: c_int) -> Result<usize, Failure> {
    match runtime().device(i64::from(device)) {
        Ok(ctx) => Ok(ctx.index()),
        Err(e) => Err(Failure {
            code: hipErrorInvalidValue,
            message: e.to_string(),
            error: Some(e),
        }),
    }
}

fn allocate(
    ptr: *mut *mut c_void,
    size: usize,
    pool: Option<hipMemPool_t>,
    stream: hipStream_t,
) -> Result<(), Failure> {
    if ptr.is_null() {
        return Err(Failure::null("dev_ptr"));
    }
    if size == 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            "size is 0 (HIP 5.2 refuses empty stream-ordered allocations)",
        ));
    }
    let pool = pool.map(pool_of).transpose()?;
    let s = stream_arg(stream)?;
    let pool = match pool {
        Some(p) => p,
        None => runtime().current_mem_pool(s.device_index()? as i64)?,
    };
    // Captured: an allocation node of the pool's device, as CUDA and HIP capture it.
    if let Some(c) = crate::capture::intercept(&s, "a stream-ordered allocation")? {
        let address = crate::graph_nodes::capture_malloc(&c, &s, pool.device_index(), size)?;
        // SAFETY: non-null, writable by the caller's contract.
        return unsafe { out(ptr, "dev_ptr", address as *mut c_void) };
    }
    let address = runtime().allocate_async(&pool, size as u64, &s)?;
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out(ptr, "dev_ptr", address as *mut c_void) }
}

/// `hipError_t hipMallocAsync(void** dev_ptr, size_t size, hipStream_t stream)`: from the
/// current pool of the stream's device, in the stream's order.
#[export]
pub unsafe extern "C" fn hipMallocAsync(
    dev_ptr: *mut *mut c_void,
    size: usize,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMallocAsync", || allocate(dev_ptr, size, None, stream))
}

/// `hipError_t hipMallocFromPoolAsync(void** dev_ptr, size_t size, hipMemPool_t mem_pool,
/// hipStream_t stream)`: from `mem_pool` (of any device), in the stream's order.
#[export]
pub unsafe extern "C" fn hipMallocFromPoolAsync(
    dev_ptr: *mut *mut c_void,
    size: usize,
    mem_pool: hipMemPool_t,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMallocFromPoolAsync", || {
        allocate(dev_ptr, size, Some(mem_pool), stream)
    })
}

/// `hipError_t hipFreeAsync(void* dev_ptr, hipStream_t stream)`: a pool's memory goes back to
/// its pool when the stream reaches this point; other device memory is freed as by `hipFree`.
#[export]
pub unsafe extern "C" fn hipFreeAsync(dev_ptr: *mut c_void, stream: hipStream_t) -> hipError_t {
    call("hipFreeAsync", || {
        if dev_ptr.is_null() {
            return Err(Failure::null("dev_ptr"));
        }
        let s = stream_arg(stream)?;
        if let Some(c) = crate::capture::intercept(&s, "a stream-ordered free")? {
            return crate::graph_nodes::capture_free(&c, &s, dev_ptr);
        }
        Ok(runtime().free_async(dev_ptr as u64, &s)?)
    })
}

/// `hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t* mem_pool, int device)`.
#[export]
pub unsafe extern "C" fn hipDeviceGetDefaultMemPool(
    mem_pool: *mut hipMemPool_t,
    device: c_int,
) -> hipError_t {
    call("hipDeviceGetDefaultMemPool", || {
        if mem_pool.is_null() {
            return Err(Failure::null("mem_pool"));
        }
        let pool = runtime().default_mem_pool(device_arg(device)? as i64)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(mem_pool, "mem_pool", handle_of(pool)?) }
    })
}

/// `hipError_t hipDeviceGetMemPool(hipMemPool_t* mem_pool, int device)`: the pool
/// `hipMallocAsync` uses on `device`.
#[export]
pub unsafe extern "C" fn hipDeviceGetMemPool(
    mem_pool: *mut hipMemPool_t,
    device: c_int,
) -> hipError_t {
    call("hipDeviceGetMemPool", || {
        if mem_pool.is_null() {
            return Err(Failure::null("mem_pool"));
        }
        let pool = runtime().current_mem_pool(device_arg(device)? as i64)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(mem_pool, "mem_pool", handle_of(pool)?) }
    })
}

/// `hipError_t hipDeviceSetMemPool(int device, hipMemPool_t mem_pool)`: the pool must be
/// `device`'s (`hipErrorInvalidDevice` otherwise, as HIP documents).
#[export]
pub unsafe extern "C" fn hipDeviceSetMemPool(device: c_int, mem_pool: hipMemPool_t) -> hipError_t {
    call("hipDeviceSetMemPool", || {
        let pool = pool_of(mem_pool)?;
        let device = device_arg(device)?;
        Ok(runtime().set_current_mem_pool(device as i64, &pool)?)
    })
}

/// `hipError_t hipMemPoolCreate(hipMemPool_t* mem_pool, const hipMemPoolProps* pool_props)`:
/// pinned device memory of a valid device; handle types other than none are refused (see the
/// module documentation).
#[export]
pub unsafe extern "C" fn hipMemPoolCreate(
    mem_pool: *mut hipMemPool_t,
    pool_props: *const hipMemPoolProps,
) -> hipError_t {
    call("hipMemPoolCreate", || {
        if mem_pool.is_null() {
            return Err(Failure::null("mem_pool"));
        }
        if pool_props.is_null() {
            return Err(Failure::null("pool_props"));
        }
        // SAFETY: non-null, readable by the caller's contract.
        let props = unsafe { pool_props.read() };
        if props.allocType != ALLOCATION_PINNED {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!(
                    "allocType {}: must be hipMemAllocationTypePinned",
                    props.allocType
                ),
            ));
        }
        if props.location.type_ != LOCATION_DEVICE {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!(
                    "location type {}: must be hipMemLocationTypeDevice",
                    props.location.type_
                ),
            ));
        }
        let device = device_arg(props.location.id)?;
        match props.handleTypes {
            0 => {}
            HANDLE_POSIX_FD => {
                return Err(Failure::new(
                    hipErrorNotSupported,
                    format!("a pool exportable to POSIX file descriptors: {NOT_SHAREABLE}"),
                ))
            }
            t if t & !HANDLE_WIN32 == 0 => {
                return Err(Failure::new(
                    hipErrorNotSupported,
                    format!("handle types {t:#x}: Win32 handles do not exist on Linux"),
                ))
            }
            t => {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("handle types {t:#x}: not a hipMemAllocationHandleType"),
                ))
            }
        }
        let pool = runtime().create_mem_pool(device as i64)?;
        let handle = handle_of(pool.clone()).inspect_err(|_| {
            let _ = runtime().destroy_mem_pool(&pool);
        })?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(mem_pool, "mem_pool", handle) }
    })
}

/// Forgets the handles of pools a device reset destroyed: using one is then
/// `hipErrorInvalidValue`, as for a destroyed pool.
pub(crate) fn forget_pools(pools: &[MemPool]) {
    let mut handles = HANDLES.lock();
    for pool in pools {
        if let Some(h) = handles.as_mut().and_then(|map| map.remove(&pool.id())) {
            POOLS.remove(h);
        }
    }
}

/// `hipError_t hipMemPoolDestroy(hipMemPool_t mem_pool)`: the handle is invalid from now on;
/// allocations not freed yet stay valid. A default pool is `hipErrorInvalidValue`.
#[export]
pub unsafe extern "C" fn hipMemPoolDestroy(mem_pool: hipMemPool_t) -> hipError_t {
    call("hipMemPoolDestroy", || {
        let pool = pool_of(mem_pool)?;
        runtime().destroy_mem_pool(&pool)?;
        POOLS.remove(mem_pool as u64);
        if let Some(map) = HANDLES.lock().as_mut() {
            map.remove(&pool.id());
        }
        Ok(())
    })
}

/// `hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool, size_t min_bytes_to_hold)`.
#[export]
pub unsafe extern "C" fn hipMemPoolTrimTo(
    mem_pool: hipMemPool_t,
    min_bytes_to_hold: usize,
) -> hipError_t {
    call("hipMemPoolTrimTo", || {
        pool_of(mem_pool)?.trim_to(min_bytes_to_hold as u64);
        Ok(())
    })
}

/// A `hipMemPoolAttr` and whether its value is an `int` (the reuse policies) or a `uint64_t`.
fn attribute_of(attr: c_int) -> Result<(Pool, bool), Failure> {
    Ok(match attr {
        1 => (Pool::FollowEventDependencies, true),
        2 => (Pool::AllowOpportunistic, true),
        3 => (Pool::AllowInternalDependencies, true),
        4 => (Pool::ReleaseThreshold, false),
        5 => (Pool::ReservedMemCurrent, false),
        6 => (Pool::ReservedMemHigh, false),
        7 => (Pool::UsedMemCurrent, false),
        8 => (Pool::UsedMemHigh, false),
        other => {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("{other} is not a hipMemPoolAttr"),
            ))
        }
    })
}

/// `hipError_t hipMemPoolSetAttribute(hipMemPool_t, hipMemPoolAttr attr, void* value)`: an
/// `int` for the reuse policies (non-zero is on), a `uint64_t` otherwise; a high watermark
/// takes only 0 (reset to the current value); the current values cannot be set.
#[export]
pub unsafe extern "C" fn hipMemPoolSetAttribute(
    mem_pool: hipMemPool_t,
    attr: c_int,
    value: *mut c_void,
) -> hipError_t {
    call("hipMemPoolSetAttribute", || {
        let pool = pool_of(mem_pool)?;
        if value.is_null() {
            return Err(Failure::null("value"));
        }
        let (attribute, int) = attribute_of(attr)?;
        // SAFETY: non-null and of the attribute's type by the caller's contract.
        let v = unsafe {
            if int {
                u64::from(value.cast::<c_int>().read_unaligned() != 0)
            } else {
                value.cast::<u64>().read_unaligned()
            }
        };
        Ok(pool.set_attribute(attribute, v)?)
    })
}

/// `hipError_t hipMemPoolGetAttribute(hipMemPool_t, hipMemPoolAttr attr, void* value)`.
#[export]
pub unsafe extern "C" fn hipMemPoolGetAttribute(
    mem_pool: hipMemPool_t,
    attr: c_int,
    value: *mut c_void,
) -> hipError_t {
    call("hipMemPoolGetAttribute", || {
        let pool = pool_of(mem_pool)?;
        if value.is_null() {
            return Err(Failure::null("value"));
        }
        let (attribute, int) = attribute_of(attr)?;
        let v = pool.attribute(attribute);
        // SAFETY: non-null and of the attribute's type by the caller's contract.
        unsafe {
            if int {
                value.cast::<c_int>().write_unaligned(v as c_int);
            } else {
                value.cast::<u64>().write_unaligned(v);
            }
        }
        Ok(())
    })
}

/// `hipMemAccessFlags` as the runtime's access.
fn access_of(flags: c_int) -> Result<PoolAccess, Failure> {
    match flags {
        0 => Ok(PoolAccess::None),
        1 => Ok(PoolAccess::Read),
        3 => Ok(PoolAccess::ReadWrite),
        other => Err(Failure::new(
            hipErrorInvalidValue,
            format!("{other} is not a hipMemAccessFlags"),
        )),
    }
}

/// A `hipMemLocation`'s device, for access calls: a device location of an existing device.
fn location_device(location: &hipMemLocation, bad_id: hipError_t) -> Result<usize, Failure> {
    if location.type_ != LOCATION_DEVICE {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!(
                "location type {}: must be hipMemLocationTypeDevice",
                location.type_
            ),
        ));
    }
    let count = runtime().agents().len();
    usize::try_from(location.id)
        .ok()
        .filter(|&d| d < count)
        .ok_or_else(|| {
            Failure::new(
                bad_id,
                format!("device {}: there are {count} device(s)", location.id),
            )
        })
}

/// `hipError_t hipMemPoolSetAccess(hipMemPool_t, const hipMemAccessDesc* desc_list, size_t
/// count)`: every descriptor is checked before any is applied; the pool's device is always
/// read-write, another device can only be given no access (see the module documentation).
#[export]
pub unsafe extern "C" fn hipMemPoolSetAccess(
    mem_pool: hipMemPool_t,
    desc_list: *const hipMemAccessDesc,
    count: usize,
) -> hipError_t {
    call("hipMemPoolSetAccess", || {
        let pool = pool_of(mem_pool)?;
        if desc_list.is_null() {
            return Err(Failure::null("desc_list"));
        }
        let devices = runtime().agents().len();
        if count > devices {
            return Err(Failure::new(
                hipErrorInvalidDevice,
                format!("{count} descriptors for {devices} device(s)"),
            ));
        }
        // SAFETY: `count` descriptors are readable by the caller's contract (at most one per
        // device, checked above).
        let descs = unsafe { std::slice::from_raw_parts(desc_list, count) };
        let mut wanted = Vec::new();
        for d in descs {
            let device = location_device(&d.location, hipErrorInvalidDevice)?;
            let access = access_of(d.flags)?;
            pool.check_access(device, access)?;
            wanted.push((device, access));
        }
        for (device, access) in wanted {
            pool.set_access(device, access)?;
        }
        Ok(())
    })
}

/// `hipError_t hipMemPoolGetAccess(hipMemAccessFlags* flags, hipMemPool_t, hipMemLocation*
/// location)`.
#[export]
pub unsafe extern "C" fn hipMemPoolGetAccess(
    flags: *mut c_int,
    mem_pool: hipMemPool_t,
    location: *mut hipMemLocation,
) -> hipError_t {
    call("hipMemPoolGetAccess", || {
        let pool = pool_of(mem_pool)?;
        if location.is_null() {
            return Err(Failure::null("location"));
        }
        // SAFETY: non-null, readable by the caller's contract.
        let device = location_device(unsafe { &*location }, hipErrorInvalidValue)?;
        let value = match pool.access(device) {
            PoolAccess::None => 0,
            PoolAccess::Read => 1,
            PoolAccess::ReadWrite => 3,
        };
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(flags, "flags", value) }
    })
}

/// `hipError_t hipMemPoolExportToShareableHandle(void* shared_handle, hipMemPool_t,
/// hipMemAllocationHandleType, unsigned flags)`: no pool here can be exported (every pool has
/// handle type none), so `hipErrorInvalidValue` after the arguments are checked.
#[export]
pub unsafe extern "C" fn hipMemPoolExportToShareableHandle(
    shared_handle: *mut c_void,
    mem_pool: hipMemPool_t,
    handle_type: c_int,
    flags: c_uint,
) -> hipError_t {
    call("hipMemPoolExportToShareableHandle", || {
        let pool = pool_of(mem_pool)?;
        if shared_handle.is_null() {
            return Err(Failure::null("shared_handle"));
        }
        if flags != 0 {
            return Err(Failure::new(hipErrorInvalidValue, "flags must be 0"));
        }
        Err(Failure::new(
            hipErrorInvalidValue,
            format!(
                "pool {} was created with hipMemHandleTypeNone, not handle type {handle_type:#x}: it cannot be exported ({NOT_SHAREABLE})",
                pool.id()
            ),
        ))
    })
}

/// `hipError_t hipMemPoolImportFromShareableHandle(hipMemPool_t* mem_pool, void*
/// shared_handle, hipMemAllocationHandleType, unsigned flags)`: `hipErrorNotSupported` (see
/// the module documentation) after the arguments are checked.
#[export]
pub unsafe extern "C" fn hipMemPoolImportFromShareableHandle(
    mem_pool: *mut hipMemPool_t,
    shared_handle: *mut c_void,
    handle_type: c_int,
    flags: c_uint,
) -> hipError_t {
    call("hipMemPoolImportFromShareableHandle", || {
        if mem_pool.is_null() {
            return Err(Failure::null("mem_pool"));
        }
        if flags != 0 {
            return Err(Failure::new(hipErrorInvalidValue, "flags must be 0"));
        }
        if handle_type != HANDLE_POSIX_FD && (handle_type & !HANDLE_WIN32 != 0 || handle_type == 0)
        {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("handle type {handle_type:#x} cannot be imported"),
            ));
        }
        let _ = shared_handle;
        Err(Failure::new(
            hipErrorNotSupported,
            format!("importing a pool from handle type {handle_type:#x}: {NOT_SHAREABLE}"),
        ))
    })
}

/// `hipError_t hipMemPoolExportPointer(hipMemPoolPtrExportData* export_data, void* dev_ptr)`:
/// `hipErrorInvalidValue`, since no pool here is exportable (see the module documentation).
#[export]
pub unsafe extern "C" fn hipMemPoolExportPointer(
    export_data: *mut hipMemPoolPtrExportData,
    dev_ptr: *mut c_void,
) -> hipError_t {
    call("hipMemPoolExportPointer", || {
        if export_data.is_null() {
            return Err(Failure::null("export_data"));
        }
        if dev_ptr.is_null() {
            return Err(Failure::null("dev_ptr"));
        }
        match runtime().mem_pool_of(dev_ptr as u64) {
            Some(pool) => Err(Failure::new(
                hipErrorInvalidValue,
                format!(
                    "{dev_ptr:p} is from pool {}, created with hipMemHandleTypeNone: it cannot be exported ({NOT_SHAREABLE})",
                    pool.id()
                ),
            )),
            None => Err(Failure::new(
                hipErrorInvalidValue,
                format!("{dev_ptr:p} is not the start of a pool allocation in use"),
            )),
        }
    })
}

/// `hipError_t hipMemPoolImportPointer(void** dev_ptr, hipMemPool_t mem_pool,
/// hipMemPoolPtrExportData* export_data)`: `hipErrorInvalidValue`, since no pool here was
/// imported (see the module documentation).
#[export]
pub unsafe extern "C" fn hipMemPoolImportPointer(
    dev_ptr: *mut *mut c_void,
    mem_pool: hipMemPool_t,
    export_data: *mut hipMemPoolPtrExportData,
) -> hipError_t {
    call("hipMemPoolImportPointer", || {
        if dev_ptr.is_null() {
            return Err(Failure::null("dev_ptr"));
        }
        if export_data.is_null() {
            return Err(Failure::null("export_data"));
        }
        let pool = pool_of(mem_pool)?;
        Err(Failure::new(
            hipErrorInvalidValue,
            format!(
                "pool {} was not imported from another process: pointers are imported into imported pools ({NOT_SHAREABLE})",
                pool.id()
            ),
        ))
    })
}

#[cfg(test)]
mod tests;
