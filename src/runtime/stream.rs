//! Streams and events: in-order sequences of work on one device, over the device's AQL queues.
//!
//! Every step a stream takes (a dispatch, a copy, a host callback, an event's timestamp) gets a
//! completion signal; the stream remembers the last one, so waiting for a stream is waiting for
//! that signal, and another stream waits for it with a barrier-AND packet. HIP's legacy null
//! stream is a stream like the others plus two rules, applied when work is submitted: null-stream
//! work first waits for every blocking stream's last step, and blocking-stream work first waits
//! for the null stream's last step (streams made with `hipStreamNonBlocking` skip both).
//!
//! Failures of a step (a kernel fault, a failed copy) are recorded on the device, sticky, as
//! HIP does, and on the stream that carried the step: a failure belongs to its launch, so the
//! stream's next synchronisation and the events recorded after it report it even when another
//! thread's `hipDeviceReset` cleared the device's error in between. Each stream also knows how
//! far it is ordered after other streams (an [`Order`]: events it waited for, the null-stream
//! rules), which a memory pool's reuse policy asks. Not for forming packets (the launch module
//! does) or for memory (the device does).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::device::DeviceContext;
use super::{RuntimeError, RuntimeResult};
use crate::device::aql::{self, Header};
use crate::device::{
    Completion, Condition, DeviceError, ExecutionError, HostWork, KeepAlive, Queue, SignalHandle,
};

/// A failure waiting to be reported: set by the first failed step, taken by the report.
type FailureSlot = Arc<Mutex<Option<Arc<ExecutionError>>>>;

/// How long a synchronisation waits before it reports a timeout instead of hanging.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(3600);
/// How long a refused submission waits for the stream's earlier work to finish failing.
pub(crate) const REFUSAL_WAIT: Duration = Duration::from_secs(10);

/// Whether a stream synchronises with the null stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// The device's null (default) stream.
    Null,
    /// `hipStreamDefault`: synchronises with the null stream.
    Blocking,
    /// `hipStreamNonBlocking`: does not.
    NonBlocking,
}

#[derive(Debug)]
pub(crate) struct StreamInner {
    pub(crate) id: u64,
    pub(crate) device: Weak<DeviceContext>,
    pub(crate) queue: Arc<dyn Queue>,
    pub(crate) kind: StreamKind,
    pub(crate) priority: i32,
    /// The completion signal of the last step submitted, and whether it is known complete.
    last: Mutex<Option<SignalHandle>>,
    /// Serialises submissions, so the null-stream rules see a consistent "last".
    submit: Mutex<()>,
    /// Steps submitted so far: the position of a step is this count once it is submitted.
    steps: AtomicU64,
    /// How far the next step is known to follow other streams.
    follows: Mutex<Order>,
    /// The first failure of a step of this stream that its synchronisation has not reported
    /// yet (a device reset does not clear it).
    failure: FailureSlot,
    /// The compute units the stream may use (`hipExtStreamCreateWithCUMask`), clipped to the
    /// device's; `None`: all of them.
    cu_mask: Option<Vec<u32>>,
}

/// How many other streams an [`Order`] remembers; past that the oldest is forgotten (knowing
/// less only makes a pool take new memory where it could have reused some).
const ORDER_STREAMS: usize = 32;

/// Positions on other streams that a stream's work is ordered after: for a stream id, how many
/// of its steps complete before the next step here starts (through events waited for and the
/// null stream's rules). What a memory pool's "follow event dependencies" policy asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Order(Vec<(u64, u64)>);

impl Order {
    /// Records that `steps` steps of stream `stream` come first. The entry becomes the most
    /// recent, so what was learnt last is forgotten last.
    pub(crate) fn note(&mut self, stream: u64, steps: u64) {
        let mut steps = steps;
        if let Some(i) = self.0.iter().position(|(id, _)| *id == stream) {
            steps = steps.max(self.0.remove(i).1);
        } else if self.0.len() >= ORDER_STREAMS {
            self.0.remove(0);
        }
        self.0.push((stream, steps));
    }

    /// Records everything `other` knows.
    pub(crate) fn merge(&mut self, other: &Order) {
        for &(stream, steps) in &other.0 {
            self.note(stream, steps);
        }
    }

    /// Whether the first `steps` steps of stream `stream` are known to come first.
    pub fn follows(&self, stream: u64, steps: u64) -> bool {
        self.0.iter().any(|&(id, n)| id == stream && n >= steps)
    }
}

/// A stream of one device. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Stream(pub(crate) Arc<StreamInner>);

static NEXT_STREAM: AtomicU64 = AtomicU64::new(1);

impl Stream {
    pub(crate) fn new(
        device: &Arc<DeviceContext>,
        kind: StreamKind,
        priority: i32,
        cu_mask: Option<Vec<u32>>,
    ) -> RuntimeResult<Stream> {
        let queue = device
            .device()
            .create_queue()
            .map_err(|e| device.error("creating a queue", e))?;
        if let Some(mask) = &cu_mask {
            queue
                .set_cu_mask(mask)
                .map_err(|e| device.error("setting a stream's CU mask", e))?;
        }
        Ok(Stream(Arc::new(StreamInner {
            id: NEXT_STREAM.fetch_add(1, Ordering::Relaxed),
            device: Arc::downgrade(device),
            queue,
            kind,
            priority,
            last: Mutex::new(None),
            submit: Mutex::new(()),
            steps: AtomicU64::new(0),
            follows: Mutex::new(Order::default()),
            failure: FailureSlot::default(),
            cu_mask,
        })))
    }

    /// A number identifying the stream in logs.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// Null, blocking or non-blocking.
    pub fn kind(&self) -> StreamKind {
        self.0.kind
    }

    /// The priority it was created with.
    pub fn priority(&self) -> i32 {
        self.0.priority
    }

    /// The compute units the stream may use, one bit per CU in 32-bit words, as many words
    /// as the device's CUs need: the mask it was created with, or every CU.
    pub fn cu_mask(&self) -> RuntimeResult<Vec<u32>> {
        let units = self.context()?.device().compute_units();
        Ok(self
            .0
            .cu_mask
            .clone()
            .unwrap_or_else(|| clip_cu_mask(&[], units)))
    }

    /// The device ordinal.
    pub fn device_index(&self) -> RuntimeResult<usize> {
        Ok(self.context()?.index())
    }

    pub(crate) fn context(&self) -> RuntimeResult<Arc<DeviceContext>> {
        self.0
            .device
            .upgrade()
            .ok_or(RuntimeError::StreamDeviceGone { stream: self.0.id })
    }

    /// The `hsa_queue_t` the stream submits to.
    pub fn queue_address(&self) -> u64 {
        self.0.queue.address()
    }

    /// The signals this stream's next step must wait for, by the null-stream rules; what it
    /// then follows (those streams' steps so far, waited for or already done) is recorded.
    fn implicit_waits(&self, ctx: &DeviceContext) -> Vec<SignalHandle> {
        let before: Vec<Stream> = match self.0.kind {
            StreamKind::NonBlocking => return Vec::new(),
            StreamKind::Blocking => ctx.null_stream_if_created().into_iter().collect(),
            StreamKind::Null => ctx
                .blocking_streams()
                .into_iter()
                .filter(|s| s.0.id != self.0.id)
                .collect(),
        };
        let mut follows = Order::default();
        for s in &before {
            follows.merge(&s.order());
        }
        self.0.follows.lock().merge(&follows);
        before.iter().filter_map(Stream::pending_signal).collect()
    }

    /// Where the stream stands: its steps so far and what they follow (what an event recorded
    /// now, or a stream that waits for this one now, is ordered after).
    pub fn order(&self) -> Order {
        let mut order = self.0.follows.lock().clone();
        order.note(self.0.id, self.steps());
        order
    }

    /// Steps submitted so far.
    pub fn steps(&self) -> u64 {
        self.0.steps.load(Ordering::Acquire)
    }

    /// Whether the first `steps` steps of stream `stream` come before this stream's next step:
    /// its own, or another's it is known to follow.
    pub fn follows(&self, stream: u64, steps: u64) -> bool {
        (stream == self.0.id && steps <= self.steps())
            || self.0.follows.lock().follows(stream, steps)
    }

    /// Records that this stream's next steps follow `order` (after a wait for it was queued).
    pub(crate) fn note_order(&self, order: &Order) {
        self.0.follows.lock().merge(order);
    }

    /// The last step's signal, if it has not completed yet.
    fn pending_signal(&self) -> Option<SignalHandle> {
        let last = self.0.last.lock();
        last.as_ref().filter(|s| s.signal.load() > 0).cloned()
    }

    /// Submits one step: waits required by the null-stream rules first (barrier packets), then
    /// the step itself through `submit`, given a fresh completion signal.
    fn step(
        &self,
        what: &'static str,
        submit: impl FnOnce(
            &dyn Queue,
            &SignalHandle,
            Box<dyn FnOnce(Completion) + Send>,
        ) -> Result<(), DeviceError>,
    ) -> RuntimeResult<()> {
        let ctx = self.context()?;
        ctx.check_sticky()?;
        let _serial = self.0.submit.lock();
        let waits = self.implicit_waits(&ctx);
        self.wait_signals(&ctx, &waits)?;
        let signal = ctx
            .device()
            .create_signal(1)
            .map_err(|e| ctx.error(what, e))?;
        let recorder = Arc::downgrade(&ctx);
        let stream_failure = self.0.failure.clone();
        let on_complete: Box<dyn FnOnce(Completion) + Send> = Box::new(move |c| {
            if let Completion::Failed(e) = c {
                // The device first: whoever sees the stream's failure also sees it sticky.
                if let Some(ctx) = recorder.upgrade() {
                    ctx.record_failure(e.clone());
                }
                stream_failure.lock().get_or_insert(e);
            }
        });
        if let Err(e) = submit(&*self.0.queue, &signal, on_complete) {
            // A queue refuses packets once an earlier one failed, possibly before that failure
            // reached the device's sticky error: let the earlier work finish failing, and report
            // the failure that stopped the queue rather than the refusal.
            if let Some(last) = self.0.last.lock().clone() {
                last.signal.wait(Condition::Lt, 1, Some(REFUSAL_WAIT));
            }
            if let Some(error) = self.0.failure.lock().clone() {
                return Err(RuntimeError::KernelFailed {
                    device: ctx.index(),
                    error,
                });
            }
            ctx.check_sticky()?;
            return Err(ctx.error(what, e));
        }
        *self.0.last.lock() = Some(signal);
        self.0.steps.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Barrier packets waiting for `signals` (five per packet).
    fn wait_signals(&self, ctx: &DeviceContext, signals: &[SignalHandle]) -> RuntimeResult<()> {
        for chunk in signals.chunks(5) {
            let handles: Vec<u64> = chunk.iter().map(|s| s.handle).collect();
            let packet = aql::barrier_and_packet(&handles, 0);
            // SAFETY: a barrier-AND packet is 64 bytes of plain data.
            let bytes: [u8; aql::PACKET_SIZE] = unsafe { std::mem::transmute(packet) };
            let header = aql::header_word(Header::ordered(hsa_sys::HSA_PACKET_TYPE_BARRIER_AND), 0);
            // The barrier keeps the signals it waits on alive until it is done.
            let keep: KeepAlive = chunk
                .iter()
                .map(|s| Box::new(s.clone()) as Box<dyn std::any::Any + Send + Sync>)
                .collect();
            self.0
                .queue
                .submit(bytes, header, "barrier".into(), keep, Box::new(|_| {}))
                .map_err(|e| ctx.error("submitting a barrier", e))?;
        }
        Ok(())
    }

    /// Submits a dispatch packet (its header word published last) with what it keeps alive.
    pub(crate) fn dispatch(
        &self,
        mut packet: aql::DispatchPacket,
        label: String,
        keep_alive: KeepAlive,
        on_done: Box<dyn FnOnce(&Completion) + Send>,
    ) -> RuntimeResult<()> {
        self.step("submitting a dispatch", |queue, signal, on_complete| {
            packet.completion_signal.handle = signal.handle;
            // The packet's completion signal lives as long as the packet (a runtime may not
            // destroy a signal a queue will still decrement).
            let mut keep_alive = keep_alive;
            keep_alive.push(Box::new(signal.clone()));
            let setup = packet.setup;
            // SAFETY: a dispatch packet is 64 bytes of plain data (the kernarg pointer is an
            // address).
            let bytes: [u8; aql::PACKET_SIZE] = unsafe { std::mem::transmute(packet) };
            let header = aql::header_word(
                Header::ordered(hsa_sys::HSA_PACKET_TYPE_KERNEL_DISPATCH),
                setup,
            );
            queue.submit(
                bytes,
                header,
                label,
                keep_alive,
                Box::new(move |c| {
                    on_done(&c);
                    on_complete(c)
                }),
            )
        })
    }

    /// Runs `work` on the host in stream order (copies, fills, callbacks, event timestamps).
    pub(crate) fn host_work(&self, what: &'static str, work: HostWork) -> RuntimeResult<()> {
        self.host_work_then(what, work, Box::new(|_| {}))
    }

    /// [`host_work`](Self::host_work), running `on_done` with the step's outcome (also when
    /// the queue fails it without running `work`).
    fn host_work_then(
        &self,
        what: &'static str,
        work: HostWork,
        on_done: Box<dyn FnOnce(&Completion) + Send>,
    ) -> RuntimeResult<()> {
        self.step(what, |queue, signal, on_complete| {
            queue.submit_host_work(
                work,
                signal.handle,
                vec![Box::new(signal.clone())],
                Box::new(move |c| {
                    on_done(&c);
                    on_complete(c)
                }),
            )
        })
    }

    /// Runs `callback` on a host thread once everything submitted to the stream before it is
    /// done, and holds back what is submitted after it until it returns
    /// (`hipStreamAddCallback`, `hipLaunchHostFunc`). The callback must not wait for this
    /// stream.
    ///
    /// # Errors
    /// The device's sticky error, or the stream's submission errors.
    pub fn add_callback(&self, callback: Box<dyn FnOnce() + Send>) -> RuntimeResult<()> {
        self.host_work(
            "running a host callback",
            Box::new(move || {
                callback();
                Ok(())
            }),
        )
    }

    /// Makes this stream wait (on the device) for `signal`.
    pub(crate) fn wait_for(&self, signal: &SignalHandle) -> RuntimeResult<()> {
        let ctx = self.context()?;
        let _serial = self.0.submit.lock();
        self.wait_signals(&ctx, std::slice::from_ref(signal))
    }

    /// Exclusive submission of packets formed elsewhere (a graph's launch): the device's sticky
    /// error is checked and the null-stream rules' waits are submitted first, as for a step;
    /// nothing else is submitted to the stream until the batch is dropped, and then the last
    /// signal the batch [`ends with`](Batch::ends_with) becomes the stream's last step.
    ///
    /// # Errors
    /// The device's sticky error, or a refused barrier.
    pub(crate) fn batch(&self) -> RuntimeResult<Batch<'_>> {
        let ctx = self.context()?;
        ctx.check_sticky()?;
        let serial = self.0.submit.lock();
        let waits = self.implicit_waits(&ctx);
        self.wait_signals(&ctx, &waits)?;
        Ok(Batch {
            stream: self,
            ctx,
            _serial: serial,
            last: None,
        })
    }

    /// The last step's signal (complete or not).
    pub(crate) fn last_signal(&self) -> Option<SignalHandle> {
        self.0.last.lock().clone()
    }

    /// Whether every step submitted so far has completed (`hipStreamQuery`); for the null
    /// stream, the blocking streams' steps too (what it is ordered after).
    pub fn is_idle(&self) -> bool {
        if self.pending_signal().is_some() {
            return false;
        }
        self.0.kind != StreamKind::Null
            || self.context().map_or(true, |ctx| {
                ctx.blocking_streams()
                    .iter()
                    .all(|s| s.pending_signal().is_none())
            })
    }

    /// Waits for every step submitted so far (`hipStreamSynchronize`), then reports the first
    /// failure of this stream's steps not reported yet (even if a device reset cleared the
    /// device's error since), else the device's sticky error, if any. The legacy null
    /// stream's rules apply to the wait as to submissions, as clr applies them whenever a
    /// stream is used: the null stream also waits for the steps every blocking stream of its
    /// device (the per-thread streams included) submitted so far, and a blocking stream for
    /// the null stream's.
    ///
    /// # Errors
    /// [`RuntimeError::Timeout`] after [`SYNC_TIMEOUT`]; [`RuntimeError::KernelFailed`] for a
    /// failed step of this stream or the device's sticky error.
    pub fn synchronize(&self) -> RuntimeResult<()> {
        let ctx = self.context()?;
        // Waiting only: the other streams' own failures stay for their synchronisation.
        match self.0.kind {
            StreamKind::Null => {
                for s in ctx.blocking_streams() {
                    if s.0.id != self.0.id {
                        s.wait_idle()?;
                    }
                }
            }
            StreamKind::Blocking => {
                if let Some(null) = ctx.null_stream_if_created() {
                    null.wait_idle()?;
                }
            }
            StreamKind::NonBlocking => {}
        }
        self.wait_idle()?;
        if let Some(error) = self.take_failure() {
            return Err(RuntimeError::KernelFailed {
                device: ctx.index(),
                error,
            });
        }
        ctx.check_sticky()
    }

    /// Waits for every step submitted so far, whatever they did.
    ///
    /// # Errors
    /// [`RuntimeError::Timeout`] after [`SYNC_TIMEOUT`].
    pub(crate) fn wait_idle(&self) -> RuntimeResult<()> {
        if let Some(last) = self.last_signal() {
            let start = Instant::now();
            let (_, done) = last.signal.wait(Condition::Lt, 1, Some(SYNC_TIMEOUT));
            if !done {
                return Err(RuntimeError::Timeout {
                    what: format!("stream {}", self.id()),
                    waited: start.elapsed(),
                });
            }
        }
        Ok(())
    }

    /// The stream's unreported failure, now reported.
    fn take_failure(&self) -> Option<Arc<ExecutionError>> {
        self.0.failure.lock().take()
    }
}

/// A stream held for one submitter (see [`Stream::batch`]).
pub(crate) struct Batch<'a> {
    stream: &'a Stream,
    ctx: Arc<DeviceContext>,
    _serial: parking_lot::MutexGuard<'a, ()>,
    last: Option<SignalHandle>,
}

impl Batch<'_> {
    /// The stream's queue.
    pub(crate) fn queue(&self) -> &dyn Queue {
        &*self.stream.0.queue
    }

    /// The stream.
    pub(crate) fn stream(&self) -> &Stream {
        self.stream
    }

    /// Records that the packet just submitted completes `signal`: the stream's last step once
    /// the batch ends, unless a later packet says so.
    pub(crate) fn ends_with(&mut self, signal: SignalHandle) {
        self.last = Some(signal);
    }

    /// The error to report for a packet the queue refused: as for a step, the failure that
    /// stopped the queue if earlier work is failing, else the refusal.
    pub(crate) fn refused(&self, what: &str, error: DeviceError) -> RuntimeError {
        if let Some(last) = self.stream.0.last.lock().clone() {
            last.signal.wait(Condition::Lt, 1, Some(REFUSAL_WAIT));
        }
        match self.ctx.check_sticky() {
            Err(e) => e,
            Ok(()) => self.ctx.error(what, error),
        }
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        if let Some(signal) = self.last.take() {
            *self.stream.0.last.lock() = Some(signal);
        }
    }
}

/// An event: a point in a stream, with the time it was reached.
#[derive(Debug, Clone)]
pub struct Event(Arc<EventInner>);

#[derive(Debug)]
struct EventInner {
    /// Unique for the process's lifetime (stream capture keys captured events by it).
    id: u64,
    timing: bool,
    state: Mutex<EventState>,
    /// The shared state of an interprocess event (`hipEventInterprocess`), which records
    /// made in other processes complete too.
    ipc: Option<Arc<super::ipc_event::IpcEvent>>,
    /// The device the event belongs to (HIP's: the current device when it was created), if
    /// its maker said; HIP records it only on that device's streams.
    home: std::sync::OnceLock<usize>,
}

static NEXT_EVENT: AtomicU64 = AtomicU64::new(1);

#[derive(Debug, Default)]
struct EventState {
    signal: Option<SignalHandle>,
    /// What the event is ordered after (its stream's steps up to it, and what they follow).
    order: Order,
    time: Arc<Mutex<Option<Instant>>>,
    /// The device of the stream it was last recorded on, whose sticky error it reports.
    device: Weak<DeviceContext>,
    /// That device's ordinal.
    device_index: usize,
    /// A failure of the work before the event on its stream (not yet reported by the stream
    /// when the event was reached), or of the event's own step: reported by every wait for
    /// the event, whatever a device reset did since.
    failure: FailureSlot,
}

impl Event {
    /// A new event; `timing` false is `hipEventDisableTiming`.
    pub fn new(timing: bool) -> Event {
        Event(Arc::new(EventInner {
            id: NEXT_EVENT.fetch_add(1, Ordering::Relaxed),
            timing,
            state: Mutex::new(EventState::default()),
            ipc: None,
            home: std::sync::OnceLock::new(),
        }))
    }

    /// A number identifying the event, unique for the process's lifetime.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// Says which device the event belongs to (once; later calls change nothing): HIP's
    /// `hipEventCreate` gives an event the current device.
    pub fn set_home_device(&self, index: usize) {
        let _ = self.0.home.set(index);
    }

    /// The device the event belongs to, if its maker said ([`set_home_device`](Self::set_home_device)).
    pub fn home_device(&self) -> Option<usize> {
        self.0.home.get().copied()
    }

    /// The signal of the point the event was last recorded at, if that point is not reached
    /// yet (what a wait for the event must wait for).
    pub(crate) fn pending_signal(&self) -> Option<SignalHandle> {
        let state = self.0.state.lock();
        state
            .signal
            .as_ref()
            .filter(|s| s.signal.load() > 0)
            .cloned()
    }

    /// Records the event at a point a graph's launch formed: `signal` completes when the point
    /// is reached, after `time` was stamped (the graph's event-record node).
    pub(crate) fn recorded_at(
        &self,
        signal: SignalHandle,
        time: Arc<Mutex<Option<Instant>>>,
        device: &Arc<DeviceContext>,
    ) {
        let mut state = self.0.state.lock();
        // The graph's order is not tracked per stream: a pool following this event's
        // dependencies learns nothing from it (it reuses less, never too early).
        state.order = Order::default();
        state.signal = Some(signal);
        state.time = time;
        state.device = Arc::downgrade(device);
        state.device_index = device.index();
        state.failure = FailureSlot::default();
    }

    /// For an interprocess event, takes the next record in its shared page (a stream's or a
    /// graph's record step, which completes it when the step is over, run or failed); `None`
    /// for another event.
    ///
    /// # Errors
    /// [`RuntimeError::Timeout`] when every slot stays pending.
    pub(crate) fn begin_shared_record(
        &self,
    ) -> RuntimeResult<Option<(Arc<super::ipc_event::IpcEvent>, u64)>> {
        match &self.0.ipc {
            Some(ipc) => Ok(Some((ipc.clone(), ipc.begin_record()?))),
            None => Ok(None),
        }
    }

    /// A new interprocess event (`hipEventInterprocess`): its state lives in memory another
    /// process can map ([`ipc_handle`](Self::ipc_handle)); it has no timing.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] when the shared memory cannot be made.
    pub fn new_interprocess() -> RuntimeResult<Event> {
        Ok(Event::with_ipc(super::ipc_event::IpcEvent::create()?))
    }

    /// The interprocess event another process made, named by `handle`
    /// (`hipIpcOpenEventHandle`): it behaves as an event of this process created with
    /// `hipEventDisableTiming | hipEventInterprocess`.
    ///
    /// # Errors
    /// [`RuntimeError::IpcSameProcess`] for a handle this process made; [`RuntimeError::Vmm`]
    /// for a malformed handle or one naming no event.
    pub fn open_interprocess(handle: &crate::device::vmm::IpcHandle) -> RuntimeResult<Event> {
        Ok(Event::with_ipc(super::ipc_event::IpcEvent::open(handle)?))
    }

    fn with_ipc(ipc: super::ipc_event::IpcEvent) -> Event {
        Event(Arc::new(EventInner {
            id: NEXT_EVENT.fetch_add(1, Ordering::Relaxed),
            timing: false,
            state: Mutex::new(EventState::default()),
            ipc: Some(Arc::new(ipc)),
            home: std::sync::OnceLock::new(),
        }))
    }

    /// The handle another process opens (`hipIpcGetEventHandle`).
    ///
    /// # Errors
    /// [`RuntimeError::NotInterprocess`] for an event created without `hipEventInterprocess`.
    pub fn ipc_handle(&self) -> RuntimeResult<crate::device::vmm::IpcHandle> {
        self.0
            .ipc
            .as_ref()
            .map(|i| i.handle())
            .ok_or(RuntimeError::NotInterprocess)
    }

    /// Records the event at the current end of `stream` (`hipEventRecord`).
    ///
    /// # Errors
    /// The stream's submission errors.
    pub fn record(&self, stream: &Stream) -> RuntimeResult<()> {
        let time = Arc::new(Mutex::new(None));
        let stamp = time.clone();
        // When the event's step runs, every earlier step of the stream has completed: what
        // failed among them and was not reported yet is the event's failure too.
        let failure = FailureSlot::default();
        let (seen, own) = (failure.clone(), failure.clone());
        let stream_failure = stream.0.failure.clone();
        // An interprocess record completes in the shared page when the step is over, run or
        // failed (another process waiting for it must not wait for ever).
        let shared = self.begin_shared_record()?;
        let shared_done = shared.clone();
        let submitted = stream.host_work_then(
            "recording an event",
            Box::new(move || {
                *stamp.lock() = Some(Instant::now());
                *seen.lock() = stream_failure.lock().clone();
                Ok(())
            }),
            Box::new(move |c| {
                if let Completion::Failed(e) = c {
                    own.lock().get_or_insert_with(|| e.clone());
                }
                if let Some((ipc, seq)) = shared_done {
                    ipc.complete(seq);
                }
            }),
        );
        if let (Err(_), Some((ipc, seq))) = (&submitted, &shared) {
            ipc.complete(*seq);
        }
        submitted?;
        let ctx = stream.context()?;
        // Read before the signal, so the event never claims more order than its signal waits for.
        let order = stream.order();
        let mut state = self.0.state.lock();
        state.order = order;
        state.signal = stream.last_signal();
        state.time = time;
        state.device = Arc::downgrade(&ctx);
        state.device_index = ctx.index();
        state.failure = failure;
        Ok(())
    }

    /// A failure of the work the event followed, else the sticky error of the device the event
    /// was recorded on (a kernel that failed there fails every later wait, as in HIP).
    fn check_device(&self) -> RuntimeResult<()> {
        let (device, index, failure) = {
            let state = self.0.state.lock();
            let failure = state.failure.lock().clone();
            (state.device.upgrade(), state.device_index, failure)
        };
        if let Some(error) = failure {
            return Err(RuntimeError::KernelFailed {
                device: index,
                error,
            });
        }
        device.map_or(Ok(()), |d| d.check_sticky())
    }

    /// `hipEventQuery`: whether the event was reached, or the device's sticky error.
    ///
    /// # Errors
    /// [`RuntimeError::KernelFailed`] after a kernel failed on the event's device.
    pub fn query(&self) -> RuntimeResult<bool> {
        let complete = self.is_complete();
        self.check_device()?;
        Ok(complete)
    }

    /// Whether the event was recorded and reached (`hipEventQuery`); an event never recorded
    /// counts as reached, as in HIP.
    pub fn is_complete(&self) -> bool {
        if let Some(ipc) = &self.0.ipc {
            return ipc.is_done(ipc.latest());
        }
        self.0
            .state
            .lock()
            .signal
            .as_ref()
            .is_none_or(|s| s.signal.load() < 1)
    }

    /// Waits until the event is reached (`hipEventSynchronize`).
    ///
    /// # Errors
    /// [`RuntimeError::Timeout`]; [`RuntimeError::KernelFailed`] after a kernel failed on the
    /// event's device (work before the event did not all happen).
    pub fn synchronize(&self) -> RuntimeResult<()> {
        if let Some(ipc) = &self.0.ipc {
            ipc.wait_for(ipc.latest(), SYNC_TIMEOUT)?;
        }
        let signal = self.0.state.lock().signal.clone();
        if let Some(s) = signal {
            let start = Instant::now();
            if !s.signal.wait(Condition::Lt, 1, Some(SYNC_TIMEOUT)).1 {
                return Err(RuntimeError::Timeout {
                    what: "event".into(),
                    waited: start.elapsed(),
                });
            }
        }
        self.check_device()
    }

    /// Makes `stream` wait for this event (`hipStreamWaitEvent`); nothing to wait for if the
    /// event was never recorded.
    ///
    /// # Errors
    /// The stream's submission errors.
    pub fn make_wait(&self, stream: &Stream) -> RuntimeResult<()> {
        if let Some(ipc) = &self.0.ipc {
            // Records of other processes are in no stream of this one: the stream waits on
            // the host, in its order, for the latest record there is now.
            let seq = ipc.latest();
            if ipc.is_done(seq) {
                return Ok(());
            }
            let ipc = ipc.clone();
            return stream.host_work(
                "waiting for an interprocess event",
                Box::new(move || {
                    ipc.wait_for(seq, SYNC_TIMEOUT)
                        .map_err(super::ipc_event::as_device_error)
                }),
            );
        }
        let (signal, device, order) = {
            let state = self.0.state.lock();
            (
                state.signal.clone(),
                state.device.clone(),
                state.order.clone(),
            )
        };
        let Some(signal) = signal else {
            return Ok(());
        };
        let ctx = stream.context()?;
        if device.upgrade().is_some_and(|d| Arc::ptr_eq(&d, &ctx)) {
            stream.wait_for(&signal)?;
            stream.note_order(&order);
            return Ok(());
        }
        // Another device's signal: its handle names a signal of that device's backend, which
        // this device's queue may not know (a barrier there would wait on whatever signal has
        // that number in its own table, or on none). The host waits for it in stream order.
        tracing::debug!(
            stream = stream.id(),
            "waiting for another device's event on the host"
        );
        stream.host_work(
            "waiting for another device's event",
            Box::new(move || {
                let (_, done) = signal.signal.wait(Condition::Lt, 1, Some(SYNC_TIMEOUT));
                if done {
                    Ok(())
                } else {
                    Err(DeviceError::Timeout(SYNC_TIMEOUT))
                }
            }),
        )?;
        stream.note_order(&order);
        Ok(())
    }

    /// Milliseconds from `start` to `self` (`hipEventElapsedTime`).
    ///
    /// # Errors
    /// [`RuntimeError::NotReady`] if either was not reached yet,
    /// [`RuntimeError::EventWithoutTiming`] when either was created without timing,
    /// [`RuntimeError::EventNotRecorded`] when either was never recorded,
    /// [`RuntimeError::KernelFailed`] after a kernel failed on either's device.
    pub fn elapsed_ms(&self, start: &Event) -> RuntimeResult<f32> {
        start.check_device()?;
        self.check_device()?;
        if !self.0.timing || !start.0.timing {
            return Err(RuntimeError::EventWithoutTiming);
        }
        // `None` for an event never recorded; `Some(None)` for one not reached yet.
        let time = |e: &Event| -> Option<Option<Instant>> {
            let state = e.0.state.lock();
            state.signal.as_ref()?;
            let t = *state.time.lock();
            Some(t)
        };
        // An event never recorded is an error whatever the other's state (clr checks both
        // before readiness): a start still running does not hide a stop never recorded.
        let (a, b) = match (time(start), time(self)) {
            (Some(a), Some(b)) => (a, b),
            _ => return Err(RuntimeError::EventNotRecorded),
        };
        let (Some(a), Some(b)) = (a, b) else {
            return Err(RuntimeError::NotReady);
        };
        let ms = if b >= a {
            (b - a).as_secs_f64() * 1e3
        } else {
            -((a - b).as_secs_f64() * 1e3)
        };
        Ok(ms as f32)
    }
}

/// `user` (32 CUs per word; empty: all) limited to `units` compute units, one word per 32 CUs:
/// missing words are all ones, bits of CUs the device does not have are cleared (as ROCr's
/// `AqlQueue::SetCUMasking` treats a mask shorter or longer than the agent's CUs).
pub fn clip_cu_mask(user: &[u32], units: u32) -> Vec<u32> {
    let words = units.div_ceil(32) as usize;
    (0..words)
        .map(|i| {
            let given = if user.is_empty() {
                u32::MAX
            } else {
                user.get(i).copied().unwrap_or(0)
            };
            let cus_here = units.saturating_sub(i as u32 * 32).min(32);
            let present = if cus_here == 32 {
                u32::MAX
            } else {
                (1u32 << cus_here) - 1
            };
            given & present
        })
        .collect()
}
