//! Managed-memory hints: `hipMemAdvise`, `hipMemPrefetchAsync`, `hipMemRangeGetAttribute(s)`
//! and `hipStreamAttachMemAsync`, with HIP 5.2.3's argument checks and codes (clr's
//! `hip_hmm.cpp`). The runtime records them per page (`runtime::attributes`); on the software
//! agent host and devices share one copy of managed memory, so they move nothing.

use rocload_ffi::export;
use std::ffi::{c_int, c_uint, c_void};

use rocload_lib::runtime::attributes::{Advice, Coherency, Location, RangeHints};

use crate::stream::stream_of;
use crate::*;

/// `hipCpuDeviceId`.
const CPU_DEVICE_ID: c_int = -1;
/// `hipInvalidDeviceId`: what a range attribute holds where pages disagree.
const INVALID_DEVICE_ID: c_int = -2;
/// `hipMemAttachGlobal | hipMemAttachHost | hipMemAttachSingle`.
const ATTACH_FLAGS: c_uint = 0x1 | 0x2 | 0x4;

/// `hipMemRangeAttribute` values.
mod range_attribute {
    pub const READ_MOSTLY: i32 = 1;
    pub const PREFERRED_LOCATION: i32 = 2;
    pub const ACCESSED_BY: i32 = 3;
    pub const LAST_PREFETCH_LOCATION: i32 = 4;
    pub const COHERENCY_MODE: i32 = 100;
}

/// The location a device argument names: `hipCpuDeviceId` or an ordinal.
fn location(device: c_int) -> Result<Location, Failure> {
    match device {
        CPU_DEVICE_ID => Ok(Location::Host),
        d if d >= 0 => {
            runtime().device(i64::from(d))?;
            Ok(Location::Device(d as usize))
        }
        d => Err(Failure::new(
            hipErrorInvalidDevice,
            format!("device {d} is neither an ordinal nor hipCpuDeviceId"),
        )),
    }
}

fn device_id(l: Option<Location>) -> c_int {
    match l {
        Some(Location::Host) => CPU_DEVICE_ID,
        Some(Location::Device(d)) => d as c_int,
        None => INVALID_DEVICE_ID,
    }
}

/// `hipError_t hipMemAdvise(const void* dev_ptr, size_t count, hipMemoryAdvise advice, int
/// device)`: advice for the pages of managed memory the range touches.
#[export]
pub unsafe extern "C" fn hipMemAdvise(
    dev_ptr: *const c_void,
    count: usize,
    advice: c_int,
    device: c_int,
) -> hipError_t {
    call("hipMemAdvise", || {
        // clr: a device that is neither an ordinal nor the CPU is an invalid value here.
        advise(dev_ptr, count, advice, || {
            location(device).map_err(|f| Failure {
                code: hipErrorInvalidValue,
                ..f
            })
        })
    })
}

/// Whether host NUMA node `id` exists (Linux lists them under `/sys/devices/system/node`; a
/// machine without NUMA has node 0 only).
fn numa_node_exists(id: c_int) -> bool {
    id == 0
        || (id > 0 && std::path::Path::new(&format!("/sys/devices/system/node/node{id}")).exists())
}

/// The location a `hipMemLocation` names. Host memory is one place on the software agent and
/// for the hints the runtime keeps, so every host location (NUMA node or not) is the host.
fn location_v2(l: crate::types::hipMemLocation) -> Result<Location, Failure> {
    match l.type_ {
        1 => location(l.id),
        2 | 4 => Ok(Location::Host),
        3 if numa_node_exists(l.id) => Ok(Location::Host),
        3 => Err(Failure::new(
            hipErrorInvalidValue,
            format!("host NUMA node {} does not exist", l.id),
        )),
        t => Err(Failure::new(
            hipErrorInvalidValue,
            format!("hipMemLocationType {t} names no location"),
        )),
    }
}

/// `hipError_t hipMemAdvise_v2(const void* dev_ptr, size_t count, hipMemoryAdvise advice,
/// hipMemLocation location)` (HIP 7.1): `hipMemAdvise` with the location as a structure.
#[export]
pub unsafe extern "C" fn hipMemAdvise_v2(
    dev_ptr: *const c_void,
    count: usize,
    advice: c_int,
    at: crate::types::hipMemLocation,
) -> hipError_t {
    call("hipMemAdvise_v2", || {
        advise(dev_ptr, count, advice, || location_v2(at))
    })
}

/// `hipError_t hipMemPrefetchAsync_v2(const void* dev_ptr, size_t count, hipMemLocation
/// location, unsigned int flags, hipStream_t stream)` (HIP 7.1): `hipMemPrefetchAsync` with the
/// location as a structure; `flags` must be 0.
#[export]
pub unsafe extern "C" fn hipMemPrefetchAsync_v2(
    dev_ptr: *const c_void,
    count: usize,
    at: crate::types::hipMemLocation,
    flags: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemPrefetchAsync_v2", || {
        if flags != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("flags {flags:#x} (must be 0)"),
            ));
        }
        prefetch(dev_ptr, count, stream, || location_v2(at))
    })
}

/// `hipMemAdvise`'s work: the range's checks, then `advice` at the location `at` gives (asked
/// only for advice that names one).
fn advise(
    dev_ptr: *const c_void,
    count: usize,
    advice: c_int,
    at: impl FnOnce() -> Result<Location, Failure>,
) -> Result<(), Failure> {
    {
        if dev_ptr.is_null() || count == 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "dev_ptr is NULL or count is 0",
            ));
        }
        let at = at()?;
        let advice = match advice {
            1 => Advice::SetReadMostly,
            2 => Advice::UnsetReadMostly,
            3 => Advice::SetPreferredLocation(at),
            4 => Advice::UnsetPreferredLocation,
            5 => Advice::SetAccessedBy(at),
            6 => Advice::UnsetAccessedBy(at),
            100 => Advice::SetCoarseGrain,
            101 => Advice::UnsetCoarseGrain,
            other => {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("hipMemoryAdvise {other}"),
                ))
            }
        };
        Ok(runtime().advise(dev_ptr as u64, count as u64, advice)?)
    }
}

/// `hipError_t hipMemPrefetchAsync(const void* dev_ptr, size_t count, int device,
/// hipStream_t stream)`: in stream order, the range's pages become "last prefetched to
/// `device`" (nothing moves on the software agent). Refused during a capture the thread's
/// mode protects (`hipErrorStreamCaptureUnsupported`).
#[export]
pub unsafe extern "C" fn hipMemPrefetchAsync(
    dev_ptr: *const c_void,
    count: usize,
    device: c_int,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemPrefetchAsync", || {
        prefetch(dev_ptr, count, stream, || location(device))
    })
}

fn prefetch(
    dev_ptr: *const c_void,
    count: usize,
    stream: hipStream_t,
    at: impl FnOnce() -> Result<Location, Failure>,
) -> Result<(), Failure> {
    if dev_ptr.is_null() || count == 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            "dev_ptr is NULL or count is 0",
        ));
    }
    // A potentially unsafe call during capture, as later clr has it (earlier clr ran it at
    // once, outside the capture it was asked in: never a node of the graph).
    crate::capture::check_unsafe("hipMemPrefetchAsync")?;
    let s = stream_of(stream)?;
    let at = at()?;
    Ok(runtime().prefetch(dev_ptr as u64, count as u64, at, &s)?)
}

/// Writes one range attribute into `data` (`size` bytes), as ROCr's SVM attributes answer.
///
/// # Safety
/// `data` is writable for `size` bytes.
unsafe fn write_attribute(
    data: *mut c_void,
    size: usize,
    attribute: c_int,
    hints: &RangeHints,
) -> Result<(), Failure> {
    let value = match attribute {
        range_attribute::READ_MOSTLY => c_int::from(hints.read_mostly),
        range_attribute::PREFERRED_LOCATION => device_id(hints.preferred),
        range_attribute::LAST_PREFETCH_LOCATION => device_id(hints.last_prefetch),
        range_attribute::COHERENCY_MODE => match hints.coherency {
            Coherency::FineGrain => 0,
            Coherency::CoarseGrain => 1,
            Coherency::Indeterminate => 2,
        },
        range_attribute::ACCESSED_BY => {
            if size == 0 || size % 4 != 0 {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("accessed-by needs a multiple of 4 bytes, not {size}"),
                ));
            }
            let slots = size / 4;
            let ids = hints
                .accessed_by
                .iter()
                .map(|&l| device_id(Some(l)))
                .chain(std::iter::repeat(INVALID_DEVICE_ID))
                .take(slots);
            for (i, id) in ids.enumerate() {
                // SAFETY: `i < size / 4`: inside the caller's buffer.
                unsafe { data.cast::<c_int>().add(i).write_unaligned(id) };
            }
            return Ok(());
        }
        other => {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("hipMemRangeAttribute {other}"),
            ))
        }
    };
    if size != 4 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("attribute {attribute} is 4 bytes, not {size}"),
        ));
    }
    // SAFETY: 4 writable bytes by the caller's contract.
    unsafe { data.cast::<c_int>().write_unaligned(value) };
    Ok(())
}

/// `hipError_t hipMemRangeGetAttribute(void* data, size_t data_size, hipMemRangeAttribute
/// attribute, const void* dev_ptr, size_t count)`.
#[export]
pub unsafe extern "C" fn hipMemRangeGetAttribute(
    data: *mut c_void,
    data_size: usize,
    attribute: c_int,
    dev_ptr: *const c_void,
    count: usize,
) -> hipError_t {
    call("hipMemRangeGetAttribute", || {
        if data.is_null() || data_size == 0 || dev_ptr.is_null() || count == 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "data, data_size, dev_ptr or count is NULL or 0",
            ));
        }
        let hints = runtime().range_hints(dev_ptr as u64, count as u64)?;
        // SAFETY: `data_size` writable bytes by the caller's contract.
        unsafe { write_attribute(data, data_size, attribute, &hints) }
    })
}

/// Most attributes one `hipMemRangeGetAttributes` call may ask for (there are five kinds).
const MAX_RANGE_ATTRIBUTES: usize = 64;

/// `hipError_t hipMemRangeGetAttributes(void** data, size_t* data_sizes, hipMemRangeAttribute*
/// attributes, size_t num_attributes, const void* dev_ptr, size_t count)`: every attribute is
/// checked before any is written.
#[export]
pub unsafe extern "C" fn hipMemRangeGetAttributes(
    data: *mut *mut c_void,
    data_sizes: *mut usize,
    attributes: *mut c_int,
    num_attributes: usize,
    dev_ptr: *const c_void,
    count: usize,
) -> hipError_t {
    call("hipMemRangeGetAttributes", || {
        if data.is_null()
            || data_sizes.is_null()
            || attributes.is_null()
            || num_attributes == 0
            || dev_ptr.is_null()
            || count == 0
        {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "an array, num_attributes, dev_ptr or count is NULL or 0",
            ));
        }
        if num_attributes > MAX_RANGE_ATTRIBUTES {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("{num_attributes} attributes (at most {MAX_RANGE_ATTRIBUTES})"),
            ));
        }
        let hints = runtime().range_hints(dev_ptr as u64, count as u64)?;
        // SAFETY: three arrays of `num_attributes` entries by the caller's contract.
        let (out, sizes, which) = unsafe {
            (
                std::slice::from_raw_parts(data, num_attributes),
                std::slice::from_raw_parts(data_sizes, num_attributes),
                std::slice::from_raw_parts(attributes, num_attributes),
            )
        };
        // Into scratch first, so a bad attribute leaves the caller's buffers untouched.
        let mut staged: Vec<Vec<u8>> = Vec::new();
        for (i, (&size, &attribute)) in sizes.iter().zip(which).enumerate() {
            if out[i].is_null() {
                return Err(Failure::null("data[i]"));
            }
            let mut buffer = vec![0u8; size.min(4 * MAX_RANGE_ATTRIBUTES)];
            if buffer.len() != size {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("data_sizes[{i}] = {size} bytes"),
                ));
            }
            // SAFETY: `buffer` holds `size` bytes.
            unsafe { write_attribute(buffer.as_mut_ptr().cast(), size, attribute, &hints) }?;
            staged.push(buffer);
        }
        for (bytes, &dst) in staged.iter().zip(out) {
            // SAFETY: `data[i]` is writable for `data_sizes[i]` bytes by the caller's contract.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.cast(), bytes.len()) };
        }
        Ok(())
    })
}

/// `hipError_t hipStreamAttachMemAsync(hipStream_t stream, void* dev_ptr, size_t length,
/// unsigned flags)`: recorded (every stream and the host may use managed memory at any time
/// on the software agent). As in clr 5.2.3, the NULL stream and a zero length are invalid.
#[export]
pub unsafe extern "C" fn hipStreamAttachMemAsync(
    stream: hipStream_t,
    dev_ptr: *mut c_void,
    length: usize,
    flags: c_uint,
) -> hipError_t {
    call("hipStreamAttachMemAsync", || {
        if stream.is_null() || dev_ptr.is_null() || length == 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "stream, dev_ptr or length is NULL or 0",
            ));
        }
        if flags & !ATTACH_FLAGS != 0 || flags.count_ones() != 1 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("attach flags {flags:#x}: one of Global, Host, Single"),
            ));
        }
        let s = stream_of(stream)?;
        Ok(runtime().attach(dev_ptr as u64, length as u64, flags, &s)?)
    })
}
