//! Stream capture: `hipStreamBeginCapture` and its family, and the hooks every stream
//! operation of this crate calls first ([`intercept`] and the checks for calls that are unsafe
//! during capture). The rules and their codes are the runtime's ([`rocload_lib::runtime::capture`]);
//! here are HIP's enumerations and the arrays `hipStreamGetCaptureInfo_v2` hands out.

use rocload_ffi::export;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_uint};

use parking_lot::Mutex;
use rocload_lib::runtime::capture::{self, Capture, CaptureError, CaptureMode, CaptureStatus};
use rocload_lib::runtime::{NodeOp, Stream, StreamKind};

use crate::graph::{forget, graph_handle, hipGraphNode_t, hipGraph_t, node_handle, node_of};
use crate::stream::stream_of;
use crate::*;

/// `hipStreamCaptureStatus` values.
const STATUS_NONE: c_int = 0;
const STATUS_ACTIVE: c_int = 1;
const STATUS_INVALIDATED: c_int = 2;
/// `hipStreamAddCaptureDependencies`, `hipStreamSetCaptureDependencies`.
const ADD_DEPENDENCIES: c_uint = 0;
const SET_DEPENDENCIES: c_uint = 1;

/// The arrays `hipStreamGetCaptureInfo_v2` returned, by stream id: valid until the next such
/// call for the stream or the end of its capture.
static DEPENDENCY_ARRAYS: Mutex<BTreeMap<u64, Box<[u64]>>> = Mutex::new(BTreeMap::new());

/// HIP's code for a capture error.
pub(crate) fn capture_code(e: &CaptureError) -> hipError_t {
    match e {
        CaptureError::Unsupported { .. } => crate::graph::hipErrorStreamCaptureUnsupported,
        CaptureError::Invalidated { .. } => 901,
        CaptureError::Merge { .. } => 902,
        CaptureError::Unmatched { .. } => 903,
        CaptureError::Unjoined { .. } => 904,
        CaptureError::Isolation { .. } => 905,
        CaptureError::Implicit { .. } => 906,
        CaptureError::CapturedEvent { .. } => 907,
        CaptureError::WrongThread { .. } => 908,
        CaptureError::IllegalState(_) => crate::graph::hipErrorIllegalState,
        CaptureError::NotInCapture { .. } => hipErrorInvalidValue,
        _ => hipErrorUnknown,
    }
}

fn mode_of(mode: c_int) -> Result<CaptureMode, Failure> {
    match mode {
        0 => Ok(CaptureMode::Global),
        1 => Ok(CaptureMode::ThreadLocal),
        2 => Ok(CaptureMode::Relaxed),
        m => Err(Failure::new(
            hipErrorInvalidValue,
            format!("hipStreamCaptureMode {m}"),
        )),
    }
}

fn mode_value(mode: CaptureMode) -> c_int {
    match mode {
        CaptureMode::Global => 0,
        CaptureMode::ThreadLocal => 1,
        CaptureMode::Relaxed => 2,
    }
}

fn status_value(status: CaptureStatus) -> c_int {
    match status {
        CaptureStatus::None => STATUS_NONE,
        CaptureStatus::Active => STATUS_ACTIVE,
        CaptureStatus::Invalidated => STATUS_INVALIDATED,
    }
}

// ------------------------------------------------------------------------------ hooks

/// The capture a stream operation on `stream` becomes part of, or `None` when it runs.
pub(crate) fn intercept(stream: &Stream, what: &str) -> Result<Option<Capture>, Failure> {
    Ok(capture::intercept(stream, what)?)
}

/// Adds `op` as `stream`'s next captured node.
pub(crate) fn add(c: &Capture, stream: &Stream, op: NodeOp) -> Result<(), Failure> {
    c.add(stream, op)?;
    Ok(())
}

/// A call that is unsafe during capture (allocation, freeing): refused as the thread's mode
/// says.
pub(crate) fn check_unsafe(what: &str) -> Result<(), Failure> {
    Ok(capture::check_unsafe(what)?)
}

/// A synchronous copy or fill: refused during any capture.
pub(crate) fn check_synchronous(what: &str) -> Result<(), Failure> {
    Ok(capture::check_synchronous(what)?)
}

/// `hipStreamSynchronize` and the like on `stream`: refused when it (or, for the null
/// stream, a blocking stream of its device) captures, or as the thread's mode says.
pub(crate) fn check_stream_wait(stream: &Stream, what: &str) -> Result<(), Failure> {
    Ok(capture::check_stream_wait(stream, what)?)
}

/// A stream is destroyed: it leaves its capture (a capture begun on it is dropped).
pub(crate) fn stream_destroyed(stream: &Stream) {
    if let Some(g) = capture::forget_stream(stream) {
        forget(&g);
    }
    DEPENDENCY_ARRAYS.lock().remove(&stream.id());
}

// ------------------------------------------------------------------------------ entry points

/// `hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)`: work on
/// the stream becomes nodes of a new graph until `hipStreamEndCapture`. Not on the null stream
/// (`hipErrorStreamCaptureUnsupported`); not twice (`hipErrorIllegalState`).
#[export]
pub unsafe extern "C" fn hipStreamBeginCapture(stream: hipStream_t, mode: c_int) -> hipError_t {
    call("hipStreamBeginCapture", || begin(stream, mode))
}

fn begin(stream: hipStream_t, mode: c_int) -> Result<(), Failure> {
    let s = stream_of(stream)?;
    let mode = mode_of(mode)?;
    capture::begin(&s, mode)?;
    Ok(())
}

/// `hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* pGraph)`: the graph, which
/// the caller owns (`hipGraphDestroy`). Every stream that joined the capture stops capturing.
/// An invalidated capture ends with `hipErrorStreamCaptureInvalidated` and a fork that was
/// not joined back with `hipErrorStreamCaptureUnjoined`; `*pGraph` is NULL then.
#[export]
pub unsafe extern "C" fn hipStreamEndCapture(
    stream: hipStream_t,
    p_graph: *mut hipGraph_t,
) -> hipError_t {
    call("hipStreamEndCapture", || end(stream, p_graph))
}

fn end(stream: hipStream_t, p_graph: *mut hipGraph_t) -> Result<(), Failure> {
    if p_graph.is_null() {
        return Err(Failure::null("pGraph"));
    }
    let s = stream_of(stream)?;
    if s.kind() == StreamKind::Null {
        return Err(Failure::new(
            crate::graph::hipErrorIllegalState,
            "the null stream never captures",
        ));
    }
    let captured = capture::of(&s).map(|c| c.graph().clone());
    DEPENDENCY_ARRAYS.lock().remove(&s.id());
    match capture::end(&s) {
        Ok(g) => {
            let h = graph_handle(&g, false)?;
            // SAFETY: non-null, writable by the caller's contract.
            unsafe { p_graph.write(h) };
            Ok(())
        }
        Err(e) => {
            // A capture that ended badly drops its graph; one still going (wrong thread,
            // unmatched stream) keeps it.
            if capture::of(&s).is_none() {
                if let Some(g) = captured {
                    forget(&g);
                }
            }
            // SAFETY: as above.
            unsafe { p_graph.write(std::ptr::null_mut()) };
            Err(e.into())
        }
    }
}

/// Status, id and capture of a stream, as the query calls report them.
fn info(stream: hipStream_t) -> Result<(Stream, CaptureStatus, Option<Capture>), Failure> {
    let s = stream_of(stream)?;
    let (status, c) = capture::status(&s)?;
    Ok((s, status, c))
}

/// `hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus*
/// pCaptureStatus)`: on the null stream `hipErrorStreamCaptureImplicit` while a blocking
/// stream of the device captures.
#[export]
pub unsafe extern "C" fn hipStreamIsCapturing(
    stream: hipStream_t,
    status: *mut c_int,
) -> hipError_t {
    call("hipStreamIsCapturing", || {
        if status.is_null() {
            return Err(Failure::null("pCaptureStatus"));
        }
        let (_, st, _) = info(stream)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { status.write(status_value(st)) };
        Ok(())
    })
}

/// `hipError_t hipStreamGetCaptureInfo(hipStream_t, hipStreamCaptureStatus* pCaptureStatus,
/// unsigned long long* pId)`: the id only while the capture is active.
#[export]
pub unsafe extern "C" fn hipStreamGetCaptureInfo(
    stream: hipStream_t,
    status: *mut c_int,
    id: *mut u64,
) -> hipError_t {
    call("hipStreamGetCaptureInfo", || {
        if status.is_null() {
            return Err(Failure::null("pCaptureStatus"));
        }
        let (_, st, c) = info(stream)?;
        // SAFETY: non-null outputs are writable by the caller's contract.
        unsafe {
            status.write(status_value(st));
            if let (CaptureStatus::Active, Some(c), false) = (st, &c, id.is_null()) {
                id.write(c.id());
            }
        }
        Ok(())
    })
}

/// `hipError_t hipStreamGetCaptureInfo_v2(hipStream_t, hipStreamCaptureStatus*
/// captureStatus_out, unsigned long long* id_out, hipGraph_t* graph_out, const
/// hipGraphNode_t** dependencies_out, size_t* numDependencies_out)`: while the capture is
/// active, its id, its graph (nodes may be added to it) and the stream's dependency set (an
/// array valid until the next such call for the stream or the end of its capture).
#[export]
pub unsafe extern "C" fn hipStreamGetCaptureInfo_v2(
    stream: hipStream_t,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut hipGraph_t,
    deps: *mut *const hipGraphNode_t,
    num: *mut usize,
) -> hipError_t {
    call("hipStreamGetCaptureInfo_v2", || {
        if status.is_null() {
            return Err(Failure::null("captureStatus_out"));
        }
        let (s, st, c) = info(stream)?;
        // SAFETY: non-null outputs are writable by the caller's contract.
        unsafe { status.write(status_value(st)) };
        let (CaptureStatus::Active, Some(c)) = (st, c) else {
            return Ok(());
        };
        if !graph.is_null() {
            let h = graph_handle(c.graph(), false)?;
            // SAFETY: as above.
            unsafe { graph.write(h) };
        }
        let set = c.dependencies(&s);
        if !deps.is_null() {
            let handles: Box<[u64]> = set
                .iter()
                .map(|n| node_handle(n).map(|h| h as u64))
                .collect::<Result<_, _>>()?;
            let mut arrays = DEPENDENCY_ARRAYS.lock();
            let p = if handles.is_empty() {
                std::ptr::null()
            } else {
                handles.as_ptr().cast::<hipGraphNode_t>()
            };
            arrays.insert(s.id(), handles);
            // SAFETY: as above; the array stays in DEPENDENCY_ARRAYS until replaced.
            unsafe { deps.write(p) };
        }
        if !num.is_null() {
            // SAFETY: as above.
            unsafe { num.write(set.len()) };
        }
        if !id.is_null() {
            // SAFETY: as above.
            unsafe { id.write(c.id()) };
        }
        Ok(())
    })
}

/// `hipError_t hipStreamUpdateCaptureDependencies(hipStream_t stream, hipGraphNode_t*
/// dependencies, size_t numDependencies, unsigned int flags)`: adds to
/// (`hipStreamAddCaptureDependencies`) or replaces (`hipStreamSetCaptureDependencies`) the
/// set the stream's next node depends on; `hipErrorIllegalState` when it does not capture.
#[export]
pub unsafe extern "C" fn hipStreamUpdateCaptureDependencies(
    stream: hipStream_t,
    deps: *mut hipGraphNode_t,
    n: usize,
    flags: c_uint,
) -> hipError_t {
    call("hipStreamUpdateCaptureDependencies", || {
        let s = stream_of(stream)?;
        if flags != ADD_DEPENDENCIES && flags != SET_DEPENDENCIES {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("flags {flags}: hipStreamAddCaptureDependencies or hipStreamSetCaptureDependencies"),
            ));
        }
        let c = capture::of(&s).ok_or_else(|| {
            Failure::new(
                crate::graph::hipErrorIllegalState,
                format!("stream {} is not capturing", s.id()),
            )
        })?;
        if n > 0 && deps.is_null() {
            return Err(Failure::null("dependencies"));
        }
        if n > c.graph().len() {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!(
                    "{n} dependencies; the capture's graph has {} nodes",
                    c.graph().len()
                ),
            ));
        }
        let mut nodes = Vec::with_capacity(n);
        for i in 0..n {
            // SAFETY: `n` handles by the caller's contract.
            let h = unsafe { *deps.add(i) };
            nodes.push(node_of(h)?.1);
        }
        capture::update_dependencies(&s, &nodes, flags == SET_DEPENDENCIES)?;
        Ok(())
    })
}

/// `hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode* mode)`: sets the
/// thread's mode for unsafe calls and returns the old one in `*mode`.
#[export]
pub unsafe extern "C" fn hipThreadExchangeStreamCaptureMode(mode: *mut c_int) -> hipError_t {
    call("hipThreadExchangeStreamCaptureMode", || {
        if mode.is_null() {
            return Err(Failure::null("mode"));
        }
        // SAFETY: non-null, readable and writable by the caller's contract.
        let new = mode_of(unsafe { mode.read() })?;
        let old = capture::exchange_mode(new);
        // SAFETY: as above.
        unsafe { mode.write(mode_value(old)) };
        Ok(())
    })
}
