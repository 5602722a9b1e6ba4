//! HIP's per-thread default stream: `hipStreamPerThread`, and NULL in the `_spt` entry points
//! that programs built with `-fgpu-default-stream=per-thread` (or `HIP_API_PER_THREAD_DEFAULT_
//! STREAM`) call instead of the plain ones. As clr makes it, it is one blocking stream per
//! thread and device, created at first use: it synchronises with the legacy null stream but
//! not with other threads' per-thread streams. The synchronous `_spt` forms (`hipMemcpy_spt`,
//! `hipMemset_spt`, ...) run on it and wait for it. The `_spt` forms of array, 2D fill and 3D
//! calls live with their plain forms in `array.rs`.
//!
//! A `hipDeviceReset` destroys the device's streams, per-thread ones included (as clr's
//! `destroyAllStreams`), and gives it a new null stream; the thread's per-thread stream is made
//! anew at its next use (the old one may hold a queue that failed). A thread's per-thread
//! streams finish their work when the thread exits.

use rocload_ffi::export;
use std::cell::RefCell;
use std::ffi::{c_int, c_uint, c_void};

use rocload_lib::runtime::{Stream, StreamKind};

use crate::launch::{hipLaunchCooperativeKernel, hipLaunchKernel};
use crate::memory::{hipMemcpy2DAsync, hipMemcpyAsync, hipMemcpyWithStream, hipMemsetAsync};
use crate::stream::{
    current_context, hipEventRecord, hipLaunchHostFunc, hipStreamAddCallback, hipStreamGetFlags,
    hipStreamGetPriority, hipStreamQuery, hipStreamSynchronize, hipStreamWaitEvent,
};
use crate::symbol::{hipMemcpyFromSymbolAsync, hipMemcpyToSymbolAsync};
use crate::*;

/// `hipStreamPerThread`.
pub(crate) const STREAM_PER_THREAD: u64 = 2;

/// One thread's per-thread stream on one device.
struct PerThreadStream {
    device: usize,
    /// The id of the device's null stream when this one was made: a reset replaces both.
    null_stream: u64,
    stream: Stream,
}

impl Drop for PerThreadStream {
    fn drop(&mut self) {
        // The work the thread submitted still completes before the stream's queue goes.
        if let Err(e) = self.stream.synchronize() {
            tracing::debug!(
                stream = self.stream.id(),
                "per-thread stream at thread exit: {e}"
            );
        }
    }
}

thread_local! {
    static PER_THREAD_STREAMS: RefCell<Vec<PerThreadStream>> = const { RefCell::new(Vec::new()) };
}

/// The calling thread's default stream on the current device, made at first use.
pub(crate) fn per_thread_stream() -> Result<Stream, Failure> {
    let ctx = current_context()?;
    let device = ctx.index();
    let null_stream = ctx.null_stream()?.id();
    let thread_exiting = || Failure::new(hipErrorNotInitialized, "the thread is exiting");
    let found = PER_THREAD_STREAMS
        .try_with(|streams| {
            let mut streams = streams.borrow_mut();
            let at = streams.iter().position(|p| p.device == device);
            match at {
                Some(i) if streams[i].null_stream == null_stream => Some(streams[i].stream.clone()),
                Some(i) => {
                    // Made before a device reset: finish it outside the borrow.
                    let stale = streams.swap_remove(i);
                    drop(streams);
                    drop(stale);
                    None
                }
                None => None,
            }
        })
        .map_err(|_| thread_exiting())?;
    if let Some(s) = found {
        return Ok(s);
    }
    let stream = ctx.create_stream(StreamKind::Blocking, 0)?;
    tracing::debug!(
        device,
        stream = stream.id(),
        "created this thread's per-thread default stream"
    );
    PER_THREAD_STREAMS
        .try_with(|streams| {
            streams.borrow_mut().push(PerThreadStream {
                device,
                null_stream,
                stream: stream.clone(),
            })
        })
        .map_err(|_| thread_exiting())?;
    Ok(stream)
}

/// The stream an `_spt` entry point uses: NULL is the per-thread stream.
pub(crate) fn spt(stream: hipStream_t) -> hipStream_t {
    if stream.is_null() {
        STREAM_PER_THREAD as hipStream_t
    } else {
        stream
    }
}

/// The synchronous form of an operation just submitted to the per-thread stream: its error,
/// or the wait for it.
fn then_wait(submitted: hipError_t) -> hipError_t {
    if submitted != hipSuccess {
        return submitted;
    }
    // SAFETY: no pointers.
    unsafe { hipStreamSynchronize(STREAM_PER_THREAD as hipStream_t) }
}

/// `hipError_t hipMemcpy_spt(void* dst, const void* src, size_t, hipMemcpyKind)`.
#[export]
pub unsafe extern "C" fn hipMemcpy_spt(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: c_int,
) -> hipError_t {
    // SAFETY: the caller's contract is hipMemcpy's.
    unsafe { hipMemcpyWithStream(dst, src, size, kind, STREAM_PER_THREAD as hipStream_t) }
}

/// `hipError_t hipMemcpyAsync_spt(void*, const void*, size_t, hipMemcpyKind, hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipMemcpyAsync_spt(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's contract is hipMemcpyAsync's.
    unsafe { hipMemcpyAsync(dst, src, size, kind, spt(stream)) }
}

/// `hipError_t hipMemcpyToSymbol_spt(const void* symbol, const void* src, size_t, size_t
/// offset, hipMemcpyKind)`.
#[export]
pub unsafe extern "C" fn hipMemcpyToSymbol_spt(
    sym: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: c_int,
) -> hipError_t {
    // SAFETY: the caller's contract is hipMemcpyToSymbol's; waited for before returning.
    then_wait(unsafe {
        hipMemcpyToSymbolAsync(
            sym,
            src,
            size,
            offset,
            kind,
            STREAM_PER_THREAD as hipStream_t,
        )
    })
}

/// `hipError_t hipMemcpyFromSymbol_spt(void* dst, const void* symbol, size_t, size_t offset,
/// hipMemcpyKind)`.
#[export]
pub unsafe extern "C" fn hipMemcpyFromSymbol_spt(
    dst: *mut c_void,
    sym: *const c_void,
    size: usize,
    offset: usize,
    kind: c_int,
) -> hipError_t {
    // SAFETY: the caller's contract is hipMemcpyFromSymbol's; waited for before returning.
    then_wait(unsafe {
        hipMemcpyFromSymbolAsync(
            dst,
            sym,
            size,
            offset,
            kind,
            STREAM_PER_THREAD as hipStream_t,
        )
    })
}

/// `hipError_t hipMemcpyToSymbolAsync_spt(const void*, const void*, size_t, size_t,
/// hipMemcpyKind, hipStream_t)` (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipMemcpyToSymbolAsync_spt(
    sym: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's contract is hipMemcpyToSymbolAsync's.
    unsafe { hipMemcpyToSymbolAsync(sym, src, size, offset, kind, spt(stream)) }
}

/// `hipError_t hipMemcpyFromSymbolAsync_spt(void*, const void*, size_t, size_t,
/// hipMemcpyKind, hipStream_t)` (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipMemcpyFromSymbolAsync_spt(
    dst: *mut c_void,
    sym: *const c_void,
    size: usize,
    offset: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's contract is hipMemcpyFromSymbolAsync's.
    unsafe { hipMemcpyFromSymbolAsync(dst, sym, size, offset, kind, spt(stream)) }
}

/// `hipError_t hipMemcpy2D_spt(void* dst, size_t dpitch, const void* src, size_t spitch,
/// size_t width, size_t height, hipMemcpyKind)`.
#[export]
pub unsafe extern "C" fn hipMemcpy2D_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> hipError_t {
    // SAFETY: the caller's contract is hipMemcpy2D's; waited for before returning.
    then_wait(unsafe {
        hipMemcpy2DAsync(
            dst,
            dpitch,
            src,
            spitch,
            width,
            height,
            kind,
            STREAM_PER_THREAD as hipStream_t,
        )
    })
}

/// `hipError_t hipMemcpy2DAsync_spt(..., hipMemcpyKind, hipStream_t)` (HIP 5.3).
#[export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipMemcpy2DAsync_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's contract is hipMemcpy2DAsync's.
    unsafe { hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, spt(stream)) }
}

/// `hipError_t hipMemset_spt(void* dst, int value, size_t sizeBytes)`.
#[export]
pub unsafe extern "C" fn hipMemset_spt(dst: *mut c_void, value: c_int, size: usize) -> hipError_t {
    // SAFETY: the caller's contract is hipMemset's; waited for before returning.
    then_wait(unsafe { hipMemsetAsync(dst, value, size, STREAM_PER_THREAD as hipStream_t) })
}

/// `hipError_t hipMemsetAsync_spt(void* dst, int value, size_t, hipStream_t)` (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipMemsetAsync_spt(
    dst: *mut c_void,
    value: c_int,
    size: usize,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's contract is hipMemsetAsync's.
    unsafe { hipMemsetAsync(dst, value, size, spt(stream)) }
}

/// `hipError_t hipStreamSynchronize_spt(hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipStreamSynchronize_spt(stream: hipStream_t) -> hipError_t {
    // SAFETY: no pointers beyond the handle.
    unsafe { hipStreamSynchronize(spt(stream)) }
}

/// `hipError_t hipStreamQuery_spt(hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipStreamQuery_spt(stream: hipStream_t) -> hipError_t {
    // SAFETY: no pointers beyond the handle.
    unsafe { hipStreamQuery(spt(stream)) }
}

/// `hipError_t hipStreamGetFlags_spt(hipStream_t, unsigned* flags)`.
#[export]
pub unsafe extern "C" fn hipStreamGetFlags_spt(
    stream: hipStream_t,
    flags: *mut c_uint,
) -> hipError_t {
    // SAFETY: the caller's contract is hipStreamGetFlags's.
    unsafe { hipStreamGetFlags(spt(stream), flags) }
}

/// `hipError_t hipStreamGetPriority_spt(hipStream_t, int* priority)`.
#[export]
pub unsafe extern "C" fn hipStreamGetPriority_spt(
    stream: hipStream_t,
    priority: *mut c_int,
) -> hipError_t {
    // SAFETY: the caller's contract is hipStreamGetPriority's.
    unsafe { hipStreamGetPriority(spt(stream), priority) }
}

/// `hipError_t hipStreamWaitEvent_spt(hipStream_t, hipEvent_t, unsigned flags)`.
#[export]
pub unsafe extern "C" fn hipStreamWaitEvent_spt(
    stream: hipStream_t,
    event: hipEvent_t,
    flags: c_uint,
) -> hipError_t {
    // SAFETY: no pointers beyond the handles.
    unsafe { hipStreamWaitEvent(spt(stream), event, flags) }
}

/// `hipError_t hipStreamAddCallback_spt(hipStream_t, hipStreamCallback_t, void*, unsigned)`
/// (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipStreamAddCallback_spt(
    stream: hipStream_t,
    callback: hipStreamCallback_t,
    user_data: *mut c_void,
    flags: c_uint,
) -> hipError_t {
    // SAFETY: the caller's contract is hipStreamAddCallback's.
    unsafe { hipStreamAddCallback(spt(stream), callback, user_data, flags) }
}

/// `hipError_t hipLaunchHostFunc_spt(hipStream_t, hipHostFn_t, void* userData)` (HIP 5.4).
#[export]
pub unsafe extern "C" fn hipLaunchHostFunc_spt(
    stream: hipStream_t,
    f: hipHostFn_t,
    user_data: *mut c_void,
) -> hipError_t {
    // SAFETY: the caller's contract is hipLaunchHostFunc's.
    unsafe { hipLaunchHostFunc(spt(stream), f, user_data) }
}

/// `hipError_t hipEventRecord_spt(hipEvent_t, hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipEventRecord_spt(event: hipEvent_t, stream: hipStream_t) -> hipError_t {
    // SAFETY: no pointers beyond the handles.
    unsafe { hipEventRecord(event, spt(stream)) }
}

/// `hipError_t hipLaunchKernel_spt(const void* function_address, dim3 numBlocks, dim3
/// dimBlocks, void** args, size_t sharedMemBytes, hipStream_t)`: what a kernel launch compiles
/// to with `-fgpu-default-stream=per-thread`.
#[export]
pub unsafe extern "C" fn hipLaunchKernel_spt(
    function_address: *const c_void,
    num_blocks: dim3,
    dim_blocks: dim3,
    args: *mut *mut c_void,
    shared_mem_bytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's contract is hipLaunchKernel's.
    unsafe {
        hipLaunchKernel(
            function_address,
            num_blocks,
            dim_blocks,
            args,
            shared_mem_bytes,
            spt(stream),
        )
    }
}

/// `hipError_t hipLaunchCooperativeKernel_spt(const void* f, dim3, dim3, void**
/// kernelParams, uint32_t sharedMemBytes, hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipLaunchCooperativeKernel_spt(
    f: *const c_void,
    grid_dim: dim3,
    block_dim: dim3,
    kernel_params: *mut *mut c_void,
    shared_mem_bytes: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's contract is hipLaunchCooperativeKernel's.
    unsafe {
        hipLaunchCooperativeKernel(
            f,
            grid_dim,
            block_dim,
            kernel_params,
            shared_mem_bytes,
            spt(stream),
        )
    }
}
