//! What the runtime keeps per device: the backend's [`Device`], its null stream (created at
//! first use: a queue has a processor thread), the streams that synchronise with it, the
//! hostcall buffer, its memory pools, and the device's sticky error (a failed kernel makes later calls fail, as
//! in HIP, until the device is reset).
//!
//! Not for memory bookkeeping across devices (the runtime's memory module) or launches.

use std::sync::{Arc, Weak};

use once_cell::sync::OnceCell;
use parking_lot::Mutex;

use super::hostcall::HostcallBuffer;
use super::stream::{Stream, StreamKind};
use super::tools::Tools;
use super::{RuntimeError, RuntimeResult};
use crate::device::{Device, DeviceError, ExecutionError};

/// One device of the runtime.
#[derive(Debug)]
pub struct DeviceContext {
    index: usize,
    device: Arc<dyn Device>,
    /// Created at first use; replaced by [`reset`](Self::reset) (a failed queue stays failed).
    null_stream: Mutex<Option<Stream>>,
    /// Every stream the program created (blocking and non-blocking), while it lives: what
    /// `hipDeviceSynchronize` waits for, besides the null stream.
    streams: Mutex<Vec<Weak<super::stream::StreamInner>>>,
    sticky: Mutex<Option<Arc<ExecutionError>>>,
    tools: Arc<Tools>,
    /// The hostcall buffer kernels that print get, made at the first such launch.
    hostcall: OnceCell<Arc<HostcallBuffer>>,
    /// Its memory pools (stream-ordered allocation).
    pools: super::mempool::DevicePools,
}

/// The event id the device's hostcall doorbell carries (one buffer per device).
const HOSTCALL_EVENT: u32 = 1;

impl DeviceContext {
    pub(crate) fn new(
        index: usize,
        device: Arc<dyn Device>,
        tools: Arc<Tools>,
    ) -> Arc<DeviceContext> {
        Arc::new(DeviceContext {
            index,
            device,
            null_stream: Mutex::new(None),
            streams: Mutex::new(Vec::new()),
            sticky: Mutex::new(None),
            tools,
            hostcall: OnceCell::new(),
            pools: super::mempool::DevicePools::default(),
        })
    }

    /// The device ordinal.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The runtime's instrumentation hooks.
    pub(crate) fn tools(&self) -> &Arc<Tools> {
        &self.tools
    }

    /// The device's hostcall buffer (its address is what `hidden_hostcall_buffer` points to),
    /// created and registered with the device at the first call.
    ///
    /// # Errors
    /// The allocation failed, or the backend cannot serve hostcalls.
    pub(crate) fn hostcall_buffer(&self) -> RuntimeResult<&Arc<HostcallBuffer>> {
        self.hostcall.get_or_try_init(|| {
            let buffer = Arc::new(
                HostcallBuffer::new(self.device.clone(), HOSTCALL_EVENT)
                    .map_err(|e| self.error("creating the hostcall buffer", e))?,
            );
            // The device holds only a weak reference: the buffer goes with this context.
            let weak = Arc::downgrade(&buffer);
            self.device
                .set_hostcall_handler(
                    HOSTCALL_EVENT,
                    Arc::new(move || weak.upgrade().map_or(0, |b| b.serve())),
                )
                .map_err(|e| self.error("serving hostcalls", e))?;
            Ok(buffer)
        })
    }

    /// The backend's device.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The device's memory pools.
    pub(crate) fn mem_pools(&self) -> &super::mempool::DevicePools {
        &self.pools
    }

    /// The null stream, created on first use.
    ///
    /// # Errors
    /// When the device cannot create a queue.
    pub fn null_stream(self: &Arc<Self>) -> RuntimeResult<Stream> {
        let mut slot = self.null_stream.lock();
        if let Some(s) = &*slot {
            return Ok(s.clone());
        }
        let s = Stream::new(self, StreamKind::Null, 0, None)?;
        *slot = Some(s.clone());
        Ok(s)
    }

    pub(crate) fn null_stream_if_created(&self) -> Option<Stream> {
        self.null_stream.lock().clone()
    }

    /// The part of `hipDeviceReset` that is the context's own (the rest is
    /// [`Runtime::reset_device`](super::Runtime::reset_device)): waits for the device whatever
    /// failed, forgets the streams the program created (returned, so that the C ABI retires
    /// their handles), clears the sticky error and gives the device a new null stream (a queue
    /// that failed, as ROCr's do after a fault, stays failed).
    ///
    /// # Errors
    /// A timeout.
    pub(crate) fn reset_streams(self: &Arc<Self>) -> RuntimeResult<Vec<Stream>> {
        self.synchronize_ignoring_errors()?;
        let streams = {
            let mut list = self.streams.lock();
            let live = list.iter().filter_map(Weak::upgrade).map(Stream).collect();
            list.clear();
            live
        };
        self.clear_sticky();
        self.null_stream.lock().take();
        Ok(streams)
    }

    /// A new stream of `kind` (blocking or non-blocking).
    ///
    /// # Errors
    /// When the device cannot create a queue.
    pub fn create_stream(
        self: &Arc<Self>,
        kind: StreamKind,
        priority: i32,
    ) -> RuntimeResult<Stream> {
        self.create_stream_on(kind, priority, None)
    }

    /// A stream whose dispatches may use only the compute units set in `mask` (32 per word,
    /// `hipExtStreamCreateWithCUMask`), clipped to the device's CUs.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidRange`] when no CU of the device is left, else as
    /// [`create_stream`](Self::create_stream).
    pub fn create_stream_with_cu_mask(
        self: &Arc<Self>,
        kind: StreamKind,
        priority: i32,
        mask: &[u32],
    ) -> RuntimeResult<Stream> {
        let units = self.device().compute_units();
        let clipped = super::stream::clip_cu_mask(mask, units);
        if clipped.iter().all(|&w| w == 0) {
            // As clr: a mask that leaves none of the device's CUs gives the stream every CU
            // (and hipExtStreamGetCUMask reports them all).
            tracing::debug!(
                device = self.index(),
                ?mask,
                units,
                "a CU mask with none of the device's compute units: the stream uses them all"
            );
            return self.create_stream_on(kind, priority, None);
        }
        tracing::debug!(
            device = self.index(),
            ?mask,
            ?clipped,
            units,
            "stream with a CU mask"
        );
        self.create_stream_on(kind, priority, Some(clipped))
    }

    fn create_stream_on(
        self: &Arc<Self>,
        kind: StreamKind,
        priority: i32,
        cu_mask: Option<Vec<u32>>,
    ) -> RuntimeResult<Stream> {
        let stream = Stream::new(self, kind, priority, cu_mask)?;
        let mut streams = self.streams.lock();
        streams.retain(|w| w.strong_count() > 0);
        streams.push(Arc::downgrade(&stream.0));
        Ok(stream)
    }

    /// The live streams the program created, blocking and non-blocking.
    fn created_streams(&self) -> Vec<Stream> {
        self.streams
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .map(Stream)
            .collect()
    }

    /// The live blocking streams (what null-stream work waits for).
    pub(crate) fn blocking_streams(&self) -> Vec<Stream> {
        let mut streams = self.created_streams();
        streams.retain(|s| s.kind() == StreamKind::Blocking);
        streams
    }

    /// Waits for all work on the device: the null stream and every blocking and non-blocking
    /// stream created by the runtime that is still alive (`hipDeviceSynchronize`; non-blocking
    /// streams skip the null stream's ordering, not the device's synchronisation).
    ///
    /// # Errors
    /// A timeout, or the device's sticky error.
    pub fn synchronize(self: &Arc<Self>) -> RuntimeResult<()> {
        // Waiting only: a stream's own failures stay for its synchronisation and its events.
        if let Some(null) = self.null_stream_if_created() {
            null.wait_idle()?;
        }
        for s in self.created_streams() {
            s.wait_idle()?;
        }
        self.check_sticky()
    }

    /// Waits for all work on the device, whatever failed (before freeing memory it may use).
    ///
    /// # Errors
    /// A timeout.
    pub(crate) fn synchronize_ignoring_errors(self: &Arc<Self>) -> RuntimeResult<()> {
        match self.synchronize() {
            Err(RuntimeError::KernelFailed { .. }) | Ok(()) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Records a failed step; the first failure sticks.
    pub(crate) fn record_failure(&self, error: Arc<ExecutionError>) {
        tracing::debug!(device = self.index, error = %error, "device error (sticky)");
        let mut sticky = self.sticky.lock();
        if sticky.is_none() {
            *sticky = Some(error);
        }
    }

    /// The sticky error, if a step failed.
    ///
    /// # Errors
    /// [`RuntimeError::KernelFailed`] naming the failure.
    pub fn check_sticky(&self) -> RuntimeResult<()> {
        match &*self.sticky.lock() {
            Some(e) => Err(RuntimeError::KernelFailed {
                device: self.index,
                error: e.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Clears the sticky error (`hipDeviceReset`).
    pub fn clear_sticky(&self) {
        *self.sticky.lock() = None;
    }

    /// A device error as a runtime error, naming what was being done.
    pub(crate) fn error(&self, what: &str, error: DeviceError) -> RuntimeError {
        RuntimeError::Device {
            device: self.index,
            what: what.to_owned(),
            error: Box::new(error),
        }
    }
}
