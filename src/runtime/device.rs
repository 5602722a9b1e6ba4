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
        let s = Stream::new(self, StreamKind::Null, 0)?;
        *slot = Some(s.clone());
        Ok(s)
    }

    pub(crate) fn null_stream_if_created(&self) -> Option<Stream> {
        self.null_stream.lock().clone()
    }

    /// `hipDeviceReset`: waits for the device whatever failed, clears the sticky error and
    /// gives the device a new null stream (a queue that failed, as ROCr's do after a fault,
    /// stays failed). Streams the program created keep their queues.
    ///
    /// # Errors
    /// A timeout.
    pub fn reset(self: &Arc<Self>) -> RuntimeResult<()> {
        self.synchronize_ignoring_errors()?;
        self.clear_sticky();
        self.null_stream.lock().take();
        Ok(())
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
        let stream = Stream::new(self, kind, priority)?;
        if kind == StreamKind::Blocking {
            let mut streams = self.streams.lock();
            streams.retain(|w| w.strong_count() > 0);
            streams.push(Arc::downgrade(&stream.0));
        }
        Ok(stream)
    }

    /// The live blocking streams (what null-stream work waits for).
    pub(crate) fn blocking_streams(&self) -> Vec<Stream> {
        self.streams
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .map(Stream)
            .collect()
    }

    /// Waits for all work on the device: the null stream and every blocking and non-blocking
    /// stream created by the runtime that is still alive (`hipDeviceSynchronize`).
    ///
    /// # Errors
    /// A timeout, or the device's sticky error.
    pub fn synchronize(self: &Arc<Self>) -> RuntimeResult<()> {
        if let Some(null) = self.null_stream_if_created() {
            null.synchronize().or_else(|e| match e {
                RuntimeError::KernelFailed { .. } => Ok(()),
                other => Err(other),
            })?;
        }
        for s in self.blocking_streams() {
            s.synchronize().or_else(|e| match e {
                RuntimeError::KernelFailed { .. } => Ok(()),
                other => Err(other),
            })?;
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
