//! Streams and events: `hipStream*`, `hipEvent*`, host callbacks. A `hipStream_t` is a handle
//! (NULL names the current device's null stream, `hipStreamPerThread` the calling thread's
//! per-thread stream); the null stream's blocking rules live in the runtime's streams.

use rocload_ffi::export;
use std::ffi::{c_float, c_int, c_uint, c_void};

use rocload_lib::runtime::capture;
use rocload_lib::runtime::graph::HostNode;
use rocload_lib::runtime::{DeviceContext, Event, NodeOp, Stream, StreamKind, WaitCondition};

use crate::per_thread::{per_thread_stream, STREAM_PER_THREAD};
use crate::*;

/// Streams created through `hipStreamCreate*`: handle -> stream.
static STREAMS: HandleTable<Stream> = HandleTable::new(kind::STREAM);
/// Events created through `hipEventCreate*`: handle -> event.
pub(crate) static EVENTS: HandleTable<Event> = HandleTable::new(kind::EVENT);

/// `hipStreamNonBlocking`.
const STREAM_NON_BLOCKING: c_uint = 1;
/// `hipEventDisableTiming`.
const EVENT_DISABLE_TIMING: c_uint = 2;
/// `hipEventInterprocess`.
const EVENT_INTERPROCESS: c_uint = 4;
/// Every flag of `hipEventCreateWithFlags` (default, blocking sync, disable timing,
/// interprocess, release-to-device, release-to-system).
const EVENT_FLAGS: c_uint = 0x1 | 0x2 | 0x4 | 0x4000_0000 | 0x8000_0000;

/// The stream a `hipStream_t` names: NULL is the current device's null stream,
/// `hipStreamPerThread` the calling thread's default stream on it.
pub(crate) fn stream_of(stream: hipStream_t) -> Result<Stream, Failure> {
    let handle = stream as u64;
    if handle == 0 {
        return Ok(current_context()?.null_stream()?);
    }
    if handle == STREAM_PER_THREAD {
        return per_thread_stream();
    }
    STREAMS.get(handle).ok_or_else(|| {
        RuntimeError::InvalidHandle {
            what: "stream",
            handle,
        }
        .into()
    })
}

/// The current device's context.
pub(crate) fn current_context() -> Result<Arc<DeviceContext>, Failure> {
    Ok(runtime().device(current_device())?.clone())
}

pub(crate) fn event_of(event: hipEvent_t) -> Result<Event, Failure> {
    EVENTS.get(event as u64).ok_or_else(|| {
        RuntimeError::InvalidHandle {
            what: "event",
            handle: event as u64,
        }
        .into()
    })
}

/// The handle of a live event (graph nodes keep the runtime's event and hand its handle
/// back), if it still has one.
pub(crate) fn event_handle(event: &Event) -> Option<hipEvent_t> {
    EVENTS
        .entries()
        .into_iter()
        .find(|(_, e)| e.id() == event.id())
        .map(|(h, _)| h as hipEvent_t)
}

fn create_stream(stream: *mut hipStream_t, flags: c_uint, priority: c_int) -> Result<(), Failure> {
    create_stream_with(stream, flags, priority, None)
}

/// The lowest stream priority, as clr's `hip::Stream::Priority::Low` (0 is normal, the
/// default, so that least + greatest is the normal priority, as HIP's tests compute it).
const PRIORITY_LEAST: c_int = 1;
/// The highest stream priority (`hip::Stream::Priority::High`).
const PRIORITY_GREATEST: c_int = -1;

/// A stream, on the compute units of `cu_mask` when given.
fn create_stream_with(
    stream: *mut hipStream_t,
    flags: c_uint,
    priority: c_int,
    cu_mask: Option<&[u32]>,
) -> Result<(), Failure> {
    if stream.is_null() {
        return Err(Failure::null("stream"));
    }
    if flags & !STREAM_NON_BLOCKING != 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("unknown stream flags {flags:#x}"),
        ));
    }
    let kind = if flags & STREAM_NON_BLOCKING != 0 {
        StreamKind::NonBlocking
    } else {
        StreamKind::Blocking
    };
    // HIP's priorities run from 1 (lowest) through 0 (normal, the default) to -1 (highest);
    // others are clamped, as HIP does.
    let priority = priority.clamp(PRIORITY_GREATEST, PRIORITY_LEAST);
    let ctx = current_context()?;
    let s = match cu_mask {
        None => ctx.create_stream(kind, priority)?,
        Some(mask) => ctx.create_stream_with_cu_mask(kind, priority, mask)?,
    };
    let handle = STREAMS
        .insert(s)
        .ok_or_else(|| Failure::new(hipErrorOutOfMemory, "2^24 streams are live"))?;
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out(stream, "stream", handle as hipStream_t) }
}

/// `hipError_t hipStreamCreate(hipStream_t* stream)`: a blocking stream on the current device.
#[export]
pub unsafe extern "C" fn hipStreamCreate(stream: *mut hipStream_t) -> hipError_t {
    call("hipStreamCreate", || create_stream(stream, 0, 0))
}

/// `hipError_t hipStreamCreateWithFlags(hipStream_t*, unsigned flags)`: `hipStreamDefault`
/// or `hipStreamNonBlocking`.
#[export]
pub unsafe extern "C" fn hipStreamCreateWithFlags(
    stream: *mut hipStream_t,
    flags: c_uint,
) -> hipError_t {
    call("hipStreamCreateWithFlags", || {
        create_stream(stream, flags, 0)
    })
}

/// `hipError_t hipStreamCreateWithPriority(hipStream_t*, unsigned flags, int priority)`.
#[export]
pub unsafe extern "C" fn hipStreamCreateWithPriority(
    stream: *mut hipStream_t,
    flags: c_uint,
    priority: c_int,
) -> hipError_t {
    call("hipStreamCreateWithPriority", || {
        create_stream(stream, flags, priority)
    })
}

/// Reads the words of a caller's CU mask that can name CUs of `units` (no more, whatever
/// `words` says: the rest cannot select anything).
///
/// # Safety
/// `mask` points to `words` readable `u32`s.
unsafe fn read_cu_mask(mask: *const u32, words: u32, units: u32) -> Vec<u32> {
    let n = words.min(units.div_ceil(32)) as usize;
    // SAFETY: `n <= words` words, readable by the caller's contract.
    (0..n)
        .map(|i| unsafe { mask.add(i).read_unaligned() })
        .collect()
}

/// `hipError_t hipExtStreamCreateWithCUMask(hipStream_t*, uint32_t cuMaskSize, const
/// uint32_t* cuMask)`: a blocking stream whose kernels run only on the compute units set in
/// the mask (32 per word). A mask that leaves none of the device's CUs gives the stream every
/// CU, as clr does.
#[export]
pub unsafe extern "C" fn hipExtStreamCreateWithCUMask(
    stream: *mut hipStream_t,
    cu_mask_size: u32,
    cu_mask: *const u32,
) -> hipError_t {
    call("hipExtStreamCreateWithCUMask", || {
        if cu_mask_size == 0 || cu_mask.is_null() {
            return Err(Failure::new(hipErrorInvalidValue, "an empty CU mask"));
        }
        let units = current_context()?.device().compute_units();
        // SAFETY: `cu_mask_size` words by the caller's contract.
        let mask = unsafe { read_cu_mask(cu_mask, cu_mask_size, units) };
        create_stream_with(stream, 0, 0, Some(&mask))
    })
}

/// `hipError_t hipExtStreamGetCUMask(hipStream_t, uint32_t cuMaskSize, uint32_t* cuMask)`: the
/// compute units the stream may use (every CU for streams made without a mask and for the null
/// and per-thread streams), in as many words as the device's CUs need; `cuMaskSize` must be at
/// least that (clr's rule) and the words after them are left as they were.
#[export]
pub unsafe extern "C" fn hipExtStreamGetCUMask(
    stream: hipStream_t,
    cu_mask_size: u32,
    cu_mask: *mut u32,
) -> hipError_t {
    call("hipExtStreamGetCUMask", || {
        if cu_mask.is_null() {
            return Err(Failure::null("cuMask"));
        }
        let mask = stream_of(stream)?.cu_mask()?;
        if (cu_mask_size as usize) < mask.len() {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!(
                    "cuMaskSize {cu_mask_size}: the device's CUs need {} words",
                    mask.len()
                ),
            ));
        }
        for (i, word) in mask.iter().enumerate() {
            // SAFETY: `i < mask.len() <= cu_mask_size` words, writable by the caller's
            // contract.
            unsafe { cu_mask.add(i).write_unaligned(*word) };
        }
        Ok(())
    })
}

/// `hipError_t hipDeviceGetStreamPriorityRange(int* least, int* greatest)`: 1 and -1, as clr.
#[export]
pub unsafe extern "C" fn hipDeviceGetStreamPriorityRange(
    least: *mut c_int,
    greatest: *mut c_int,
) -> hipError_t {
    call("hipDeviceGetStreamPriorityRange", || {
        // SAFETY: non-null outputs are writable by the caller's contract.
        unsafe {
            if !least.is_null() {
                least.write(PRIORITY_LEAST);
            }
            if !greatest.is_null() {
                greatest.write(PRIORITY_GREATEST);
            }
        }
        Ok(())
    })
}

/// `hipError_t hipStreamDestroy(hipStream_t)`: the stream's pending work still completes.
#[export]
pub unsafe extern "C" fn hipStreamDestroy(stream: hipStream_t) -> hipError_t {
    call("hipStreamDestroy", || {
        let s = STREAMS.remove(stream as u64).ok_or_else(|| {
            Failure::from(RuntimeError::InvalidHandle {
                what: "stream",
                handle: stream as u64,
            })
        })?;
        crate::capture::stream_destroyed(&s);
        // HIP waits for the stream's work before releasing it.
        let _ = s.synchronize();
        Ok(())
    })
}

/// Retires the handles of streams a device reset destroyed: a call with one is then
/// `hipErrorInvalidHandle`, as after `hipStreamDestroy` (clr answers some calls with
/// `hipErrorContextIsDestroyed` for a stream it no longer knows; rocload does not tell a
/// stream destroyed by a reset from one destroyed by `hipStreamDestroy`).
pub(crate) fn retire_streams(streams: &[Stream]) {
    if streams.is_empty() {
        return;
    }
    for (handle, s) in STREAMS.entries() {
        if streams.iter().any(|r| r.id() == s.id()) && STREAMS.remove(handle).is_some() {
            crate::capture::stream_destroyed(&s);
        }
    }
}

/// `hipError_t hipStreamSynchronize(hipStream_t)`: waits, then reports the device's sticky
/// error.
#[export]
pub unsafe extern "C" fn hipStreamSynchronize(stream: hipStream_t) -> hipError_t {
    call("hipStreamSynchronize", || {
        let s = stream_of(stream)?;
        crate::capture::check_stream_wait(&s, "hipStreamSynchronize")?;
        let done = s.synchronize();
        // A synchronisation point: pools give back what they keep beyond their threshold.
        runtime().release_pool_memory(s.device_index().ok());
        Ok(done?)
    })
}

/// `hipError_t hipStreamQuery(hipStream_t)`: `hipSuccess` when idle, else `hipErrorNotReady`.
#[export]
pub unsafe extern "C" fn hipStreamQuery(stream: hipStream_t) -> hipError_t {
    call("hipStreamQuery", || {
        let s = stream_of(stream)?;
        crate::capture::check_stream_wait(&s, "hipStreamQuery")?;
        if s.is_idle() {
            Ok(())
        } else {
            Err(RuntimeError::NotReady.into())
        }
    })
}

/// `hipError_t hipStreamWaitEvent(hipStream_t, hipEvent_t, unsigned flags)`: later work on the
/// stream waits for the event (on the device, not the host).
#[export]
pub unsafe extern "C" fn hipStreamWaitEvent(
    stream: hipStream_t,
    event: hipEvent_t,
    flags: c_uint,
) -> hipError_t {
    call("hipStreamWaitEvent", || {
        if flags != 0 {
            return Err(Failure::new(hipErrorInvalidValue, "flags must be 0"));
        }
        let s = stream_of(stream)?;
        let e = event_of(event)?;
        if capture::wait_event(&s, &e)? {
            return Ok(());
        }
        Ok(e.make_wait(&s)?)
    })
}

/// `hipError_t hipStreamGetFlags(hipStream_t, unsigned* flags)`.
#[export]
pub unsafe extern "C" fn hipStreamGetFlags(stream: hipStream_t, flags: *mut c_uint) -> hipError_t {
    call("hipStreamGetFlags", || {
        let s = stream_of(stream)?;
        let f = match s.kind() {
            StreamKind::NonBlocking => STREAM_NON_BLOCKING,
            _ => 0,
        };
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(flags, "flags", f) }
    })
}

/// `hipError_t hipStreamGetPriority(hipStream_t, int* priority)`.
#[export]
pub unsafe extern "C" fn hipStreamGetPriority(
    stream: hipStream_t,
    priority: *mut c_int,
) -> hipError_t {
    call("hipStreamGetPriority", || {
        let p = stream_of(stream)?.priority();
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(priority, "priority", p) }
    })
}

/// `hipError_t hipStreamGetDevice(hipStream_t, hipDevice_t* device)`.
#[export]
pub unsafe extern "C" fn hipStreamGetDevice(stream: hipStream_t, device: *mut c_int) -> hipError_t {
    call("hipStreamGetDevice", || {
        let d = stream_of(stream)?.device_index()?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(device, "device", d as c_int) }
    })
}

/// A pointer the callback gets back, sent to the stream's thread (the caller vouches for it).
struct UserData(*mut c_void);
// SAFETY: HIP hands the user's pointer to the callback on another thread by definition.
unsafe impl Send for UserData {}
// SAFETY: as above (a captured callback may run from several launches of its graph; the
// runtime only passes the pointer on).
unsafe impl Sync for UserData {}

/// `hipError_t hipStreamAddCallback(hipStream_t, hipStreamCallback_t, void* userData,
/// unsigned flags)`: runs the callback on a host thread after the work before it, with the
/// device's error state; work after it waits for it.
#[export]
pub unsafe extern "C" fn hipStreamAddCallback(
    stream: hipStream_t,
    callback: hipStreamCallback_t,
    user_data: *mut c_void,
    flags: c_uint,
) -> hipError_t {
    call("hipStreamAddCallback", || {
        let Some(f) = callback else {
            return Err(Failure::null("callback"));
        };
        if flags != 0 {
            return Err(Failure::new(hipErrorInvalidValue, "flags must be 0"));
        }
        let s = stream_of(stream)?;
        let handle = stream as usize;
        if let Some(c) = crate::capture::intercept(&s, "a stream callback")? {
            // Captured as a host node calling the callback as the stream would (no error).
            let data = UserData(user_data);
            let node = HostNode {
                call: Arc::new(move || {
                    let data = &data;
                    // SAFETY: the application's callback with its own data, as HIP calls it.
                    unsafe { f(handle as hipStream_t, hipSuccess, data.0) }
                }),
                function: f as usize as u64,
                data: user_data as u64,
            };
            return crate::capture::add(&c, &s, NodeOp::Host(node));
        }
        let data = UserData(user_data);
        let ctx = s.device_index()?;
        s.add_callback(Box::new(move || {
            let data = data;
            let status = runtime()
                .device(ctx as i64)
                .and_then(|c| c.check_sticky())
                .map_or_else(|e| code_of(&e), |()| hipSuccess);
            // SAFETY: the application's callback with its own data, as HIP calls it.
            unsafe { f(handle as hipStream_t, status, data.0) }
        }))?;
        Ok(())
    })
}

/// `hipError_t hipLaunchHostFunc(hipStream_t, hipHostFn_t fn, void* userData)`.
#[export]
pub unsafe extern "C" fn hipLaunchHostFunc(
    stream: hipStream_t,
    f: hipHostFn_t,
    user_data: *mut c_void,
) -> hipError_t {
    call("hipLaunchHostFunc", || {
        let Some(f) = f else {
            return Err(Failure::null("fn"));
        };
        let s = stream_of(stream)?;
        if let Some(c) = crate::capture::intercept(&s, "a host function")? {
            let node = crate::graph::host_node(Some(f), user_data)?;
            return crate::capture::add(&c, &s, NodeOp::Host(node));
        }
        let data = UserData(user_data);
        s.add_callback(Box::new(move || {
            let data = data;
            // SAFETY: the application's function with its own data.
            unsafe { f(data.0) }
        }))?;
        Ok(())
    })
}

// --------------------------------------------------------------- stream memory operations

/// A stream wait on `width` bytes at `ptr` (the runtime checks the memory and the alignment).
fn wait_value(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u64,
    flags: c_uint,
    mask: u64,
    width: u8,
) -> Result<(), Failure> {
    if ptr.is_null() {
        return Err(Failure::null("ptr"));
    }
    let condition = WaitCondition::from_flags(flags).ok_or_else(|| {
        Failure::new(
            hipErrorInvalidValue,
            format!("unknown wait condition {flags}"),
        )
    })?;
    let s = stream_of(stream)?;
    runtime().wait_value(&s, ptr as u64, condition, value, mask, width)?;
    Ok(())
}

/// A stream write of `width` bytes at `ptr`.
fn write_value(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u64,
    flags: c_uint,
    width: u8,
) -> Result<(), Failure> {
    if ptr.is_null() {
        return Err(Failure::null("ptr"));
    }
    if flags != 0 {
        return Err(Failure::new(hipErrorInvalidValue, "flags must be 0"));
    }
    let s = stream_of(stream)?;
    runtime().write_value(&s, ptr as u64, value, width)?;
    Ok(())
}

/// `hipError_t hipStreamWaitValue32(hipStream_t, void* ptr, uint32_t value, unsigned flags,
/// uint32_t mask)`: work after it waits until the value at `ptr` meets the condition.
#[export]
pub unsafe extern "C" fn hipStreamWaitValue32(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u32,
    flags: c_uint,
    mask: u32,
) -> hipError_t {
    call("hipStreamWaitValue32", || {
        wait_value(stream, ptr, value.into(), flags, mask.into(), 4)
    })
}

/// `hipError_t hipStreamWaitValue64(hipStream_t, void* ptr, uint64_t value, unsigned flags,
/// uint64_t mask)`.
#[export]
pub unsafe extern "C" fn hipStreamWaitValue64(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u64,
    flags: c_uint,
    mask: u64,
) -> hipError_t {
    call("hipStreamWaitValue64", || {
        wait_value(stream, ptr, value, flags, mask, 8)
    })
}

/// `hipError_t hipStreamWriteValue32(hipStream_t, void* ptr, uint32_t value, unsigned flags)`.
#[export]
pub unsafe extern "C" fn hipStreamWriteValue32(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u32,
    flags: c_uint,
) -> hipError_t {
    call("hipStreamWriteValue32", || {
        write_value(stream, ptr, value.into(), flags, 4)
    })
}

/// `hipError_t hipStreamWriteValue64(hipStream_t, void* ptr, uint64_t value, unsigned flags)`.
#[export]
pub unsafe extern "C" fn hipStreamWriteValue64(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u64,
    flags: c_uint,
) -> hipError_t {
    call("hipStreamWriteValue64", || {
        write_value(stream, ptr, value, flags, 8)
    })
}

// ------------------------------------------------------------------------------ events

fn create_event(event: *mut hipEvent_t, flags: c_uint) -> Result<(), Failure> {
    if event.is_null() {
        return Err(Failure::null("event"));
    }
    if flags & !EVENT_FLAGS != 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("unknown event flags {flags:#x}"),
        ));
    }
    // An interprocess event keeps its state in memory other processes map; it has no timing
    // (clr accepts hipEventInterprocess without hipEventDisableTiming; CUDA asks for both).
    let e = if flags & EVENT_INTERPROCESS != 0 {
        Event::new_interprocess()?
    } else {
        Event::new(flags & EVENT_DISABLE_TIMING == 0)
    };
    // clr's events belong to the device current at their creation.
    if let Ok(home) = usize::try_from(crate::current_device()) {
        e.set_home_device(home);
    }
    let handle = EVENTS
        .insert(e)
        .ok_or_else(|| Failure::new(hipErrorOutOfMemory, "2^24 events are live"))?;
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out(event, "event", handle as hipEvent_t) }
}

/// `hipError_t hipEventCreate(hipEvent_t*)`.
#[export]
pub unsafe extern "C" fn hipEventCreate(event: *mut hipEvent_t) -> hipError_t {
    call("hipEventCreate", || create_event(event, 0))
}

/// `hipError_t hipEventCreateWithFlags(hipEvent_t*, unsigned flags)`.
#[export]
pub unsafe extern "C" fn hipEventCreateWithFlags(
    event: *mut hipEvent_t,
    flags: c_uint,
) -> hipError_t {
    call("hipEventCreateWithFlags", || create_event(event, flags))
}

/// `hipError_t hipEventRecord(hipEvent_t, hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipEventRecord(event: hipEvent_t, stream: hipStream_t) -> hipError_t {
    call("hipEventRecord", || record(event, stream))
}

/// `hipError_t hipEventSynchronize(hipEvent_t)`.
#[export]
pub unsafe extern "C" fn hipEventSynchronize(event: hipEvent_t) -> hipError_t {
    call("hipEventSynchronize", || {
        let e = event_of(event)?;
        capture::check_event(&e)?;
        capture::check_unsafe("hipEventSynchronize")?;
        let done = e.synchronize();
        // A synchronisation point (of whichever device the event is on).
        runtime().release_pool_memory(None);
        Ok(done?)
    })
}

/// `hipError_t hipEventQuery(hipEvent_t)`: `hipSuccess` once reached, else `hipErrorNotReady`.
#[export]
pub unsafe extern "C" fn hipEventQuery(event: hipEvent_t) -> hipError_t {
    call("hipEventQuery", || {
        let e = event_of(event)?;
        capture::check_event(&e)?;
        if e.query()? {
            Ok(())
        } else {
            Err(RuntimeError::NotReady.into())
        }
    })
}

/// `hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop)`.
#[export]
pub unsafe extern "C" fn hipEventElapsedTime(
    ms: *mut c_float,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    call("hipEventElapsedTime", || {
        if ms.is_null() {
            return Err(Failure::null("ms"));
        }
        let (a, b) = (event_of(start)?, event_of(stop)?);
        // clr: events of two devices have no common clock.
        if let (Some(x), Some(y)) = (a.home_device(), b.home_device()) {
            if x != y {
                return Err(Failure::new(
                    hipErrorInvalidHandle,
                    format!("start is an event of device {x}, stop of device {y}"),
                ));
            }
        }
        let v = b.elapsed_ms(&a).map_err(|e| match e {
            // HIP: an event without timing or never recorded is an invalid handle.
            e @ (RuntimeError::EventWithoutTiming | RuntimeError::EventNotRecorded) => {
                Failure::new(hipErrorInvalidHandle, e.to_string())
            }
            e => e.into(),
        })?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(ms, "ms", v) }
    })
}

/// `hipError_t hipEventDestroy(hipEvent_t)`.
#[export]
pub unsafe extern "C" fn hipEventDestroy(event: hipEvent_t) -> hipError_t {
    call("hipEventDestroy", || {
        EVENTS.remove(event as u64).map(drop).ok_or_else(|| {
            RuntimeError::InvalidHandle {
                what: "event",
                handle: event as u64,
            }
            .into()
        })
    })
}

/// Records `event` on `stream` as a point other work can wait for; in a capture, as a node of
/// the graph (an event record node: `hipEventRecordExternal`, and the events of
/// `hipExtLaunchKernel`, which clr captures so).
pub(crate) fn record_external(event: hipEvent_t, stream: hipStream_t) -> Result<(), Failure> {
    let e = event_of(event)?;
    let s = stream_of(stream)?;
    if let Some(c) = crate::capture::intercept(&s, "recording an event")? {
        return crate::capture::add(&c, &s, NodeOp::EventRecord(e));
    }
    check_same_device(&e, &s)?;
    Ok(e.record(&s)?)
}

/// clr records an event only on a stream of the event's own device (`hipErrorInvalidHandle`
/// otherwise: the null stream of another current device is such a stream).
fn check_same_device(e: &Event, s: &Stream) -> Result<(), Failure> {
    match (e.home_device(), s.device_index()?) {
        (Some(home), on) if home != on => Err(Failure::new(
            hipErrorInvalidHandle,
            format!("the event belongs to device {home}, the stream to device {on}"),
        )),
        _ => Ok(()),
    }
}

/// Records `event` on `stream` (for the launches that take events).
pub(crate) fn record(event: hipEvent_t, stream: hipStream_t) -> Result<(), Failure> {
    let e = event_of(event)?;
    let s = stream_of(stream)?;
    // Recorded in a capture: the event remembers the stream's dependency set; nothing runs.
    if capture::record_event(&s, &e)? {
        return Ok(());
    }
    check_same_device(&e, &s)?;
    Ok(e.record(&s)?)
}

// ------------------------------------------------------------------- HIP 6.4 and 7.1 additions

/// `hipEventRecordExternal`: record for a graph's external waiters (HIP 6.4).
const EVENT_RECORD_EXTERNAL: c_uint = 1;

/// `hipError_t hipEventRecordWithFlags(hipEvent_t, hipStream_t, unsigned int flags)` (HIP
/// 6.4): `hipEventRecord` with `hipEventRecordDefault` (0) or `hipEventRecordExternal` (1:
/// inside a capture, an event record node of the graph); other flags are
/// `hipErrorInvalidValue`.
#[export]
pub unsafe extern "C" fn hipEventRecordWithFlags(
    event: hipEvent_t,
    stream: hipStream_t,
    flags: c_uint,
) -> hipError_t {
    call("hipEventRecordWithFlags", || {
        if flags & !EVENT_RECORD_EXTERNAL != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("event record flags {flags:#x}"),
            ));
        }
        if flags & EVENT_RECORD_EXTERNAL != 0 {
            record_external(event, stream)
        } else {
            record(event, stream)
        }
    })
}

/// `hipError_t hipStreamGetId(hipStream_t, unsigned long long* streamId)` (HIP 7.1): the
/// stream's id in its runtime, unique for the process's lifetime (the null stream's too).
#[export]
pub unsafe extern "C" fn hipStreamGetId(stream: hipStream_t, id: *mut u64) -> hipError_t {
    call("hipStreamGetId", || {
        let s = stream_of(stream)?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(id, "streamId", s.id()) }
    })
}

/// `hipStreamAttrID` values HIP 7.1 defines for streams (`hipLaunchAttributeID`).
mod stream_attribute {
    /// `hipStreamAttributeAccessPolicyWindow` / `hipLaunchAttributeAccessPolicyWindow`.
    pub const ACCESS_POLICY_WINDOW: i32 = 1;
    /// `hipLaunchAttributeSynchronizationPolicy`.
    pub const SYNCHRONIZATION_POLICY: i32 = 3;
    /// `hipLaunchAttributePriority`.
    pub const PRIORITY: i32 = 8;
}

/// `hipError_t hipStreamGetAttribute(hipStream_t, hipStreamAttrID, hipStreamAttrValue*)` (HIP
/// 7.1): the priority the stream was created with; the synchronisation policy (1, `auto`: the
/// host thread spins, then sleeps); no access-policy window (zeros). The value is a union of at
/// most 64 bytes; what is written is the member the attribute names.
#[export]
pub unsafe extern "C" fn hipStreamGetAttribute(
    stream: hipStream_t,
    attribute: c_int,
    value: *mut c_void,
) -> hipError_t {
    call("hipStreamGetAttribute", || {
        let s = stream_of(stream)?;
        if value.is_null() {
            return Err(Failure::null("value"));
        }
        // SAFETY: `value` is a hipStreamAttrValue (at least 32 bytes in every HIP version
        // that has this call) by the caller's contract.
        unsafe {
            match attribute {
                stream_attribute::PRIORITY => value.cast::<c_int>().write_unaligned(s.priority()),
                stream_attribute::SYNCHRONIZATION_POLICY => {
                    value.cast::<c_int>().write_unaligned(1)
                }
                stream_attribute::ACCESS_POLICY_WINDOW => {
                    std::ptr::write_bytes(value.cast::<u8>(), 0, 32)
                }
                _ => {
                    return Err(Failure::new(
                        hipErrorInvalidValue,
                        format!("stream attribute {attribute}"),
                    ))
                }
            }
        }
        Ok(())
    })
}

/// `hipError_t hipStreamSetAttribute(hipStream_t, hipStreamAttrID, const hipStreamAttrValue*)`
/// (HIP 7.1): the software agent has one scheduling policy and no L2 persistence, so setting
/// the policy or an access window is accepted only when it asks for what is already the case
/// (policy 1, `auto`; an empty window); a priority cannot change after creation, as in HIP.
#[export]
pub unsafe extern "C" fn hipStreamSetAttribute(
    stream: hipStream_t,
    attribute: c_int,
    value: *const c_void,
) -> hipError_t {
    call("hipStreamSetAttribute", || {
        let s = stream_of(stream)?;
        if value.is_null() {
            return Err(Failure::null("value"));
        }
        // SAFETY: as in hipStreamGetAttribute, for reading.
        let first = unsafe { value.cast::<c_int>().read_unaligned() };
        let as_is = match attribute {
            stream_attribute::PRIORITY => first == s.priority(),
            stream_attribute::SYNCHRONIZATION_POLICY => first == 1,
            stream_attribute::ACCESS_POLICY_WINDOW => {
                // SAFETY: as above; the window's base pointer and byte count come first.
                let bytes = unsafe { std::slice::from_raw_parts(value.cast::<u8>(), 16) };
                bytes.iter().all(|&b| b == 0)
            }
            _ => false,
        };
        if as_is {
            Ok(())
        } else {
            Err(Failure::new(
                hipErrorNotSupported,
                format!(
                    "stream attribute {attribute} = {first}: the software agent cannot change it"
                ),
            ))
        }
    })
}
