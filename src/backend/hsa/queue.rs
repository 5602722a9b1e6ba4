//! AQL queues on an HSA agent, driven as clr drives them: `hsa_queue_create` with an error
//! callback (size a power of two up to `HSA_AGENT_INFO_QUEUE_MAX_SIZE`, halved on failure);
//! each packet goes in by reserving a slot (`hsa_queue_add_write_index_screlease`), waiting
//! while the ring is full, writing the packet behind an INVALID header, publishing
//! `header | setup << 16` with one 32-bit release store and ringing the doorbell
//! (`hsa_signal_store_screlease`).
//!
//! A watcher thread turns completion into [`Completion`]s in submission order: it waits (in
//! bounded slices) for each packet's completion signal, runs host work in queue order behind a
//! barrier packet gated by a signal, and, when the runtime reports the queue failed (error
//! callback) or the agent had a memory fault (system event), fails every packet still pending
//! and stores 0 into their completion signals, so nobody waits forever on a signal a stopped
//! queue will never decrement. Not for forming packets (the runtime does).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hsa_sys::result::{self, QueueErrorCallback};
use hsa_sys::{
    hsa_queue_t, hsa_signal_t, HSA_PACKET_TYPE_BARRIER_AND, HSA_QUEUE_TYPE_MULTI,
    HSA_STATUS_ERROR_MEMORY_FAULT,
};
use parking_lot::{Condvar, Mutex};

use super::agent::HsaAgent;
use super::signal::{self, OwnedSignal};
use crate::device::aql::{self, Header, PACKET_SIZE};
use crate::device::{
    Completion, Condition, DeviceError, DispatchReport, ExecutionError, HostWork, KeepAlive, Queue,
};

/// Packets asked for when the agent allows more (clr's default queue is of this order).
pub const DEFAULT_QUEUE_PACKETS: u32 = 4096;
/// The smallest queue tried when creation fails and the size is halved.
const MIN_QUEUE_PACKETS: u32 = 64;
/// How long a producer waits for a free slot before reporting the queue stuck.
pub const SPACE_TIMEOUT: Duration = Duration::from_secs(60);

/// Offsets of the aperture bases in ROCr's `amd_queue_t` (`amd_hsa_queue.h`): the high halves
/// of `src_shared_base` and `src_private_base`.
const GROUP_APERTURE_HI: usize = 64;
const PRIVATE_APERTURE_HI: usize = 68;

/// Why the queue stopped.
#[derive(Debug, Default)]
struct Failure {
    status: Mutex<Option<u32>>,
}

struct Item {
    label: String,
    completion: hsa_signal_t,
    _own: Option<OwnedSignal>,
    host: Option<(HostWork, OwnedSignal)>,
    _keep_alive: KeepAlive,
    on_complete: Box<dyn FnOnce(Completion) + Send>,
    submitted: Instant,
}

struct QueuePtr(*mut hsa_queue_t);
// SAFETY: the pointer is only handed back to the runtime (thread-safe) and read for its
// immutable fields at creation.
unsafe impl Send for QueuePtr {}
// SAFETY: as above.
unsafe impl Sync for QueuePtr {}

struct Inner {
    agent: HsaAgent,
    queue: QueuePtr,
    size: u32,
    ring: u64,
    doorbell: hsa_signal_t,
    failure: Arc<Failure>,
    /// Faults recorded before the queue existed are not its own.
    fault_epoch: u64,
    items: Mutex<VecDeque<Item>>,
    ready: Condvar,
    shutdown: AtomicBool,
    producer: Mutex<()>,
}

/// An HSA queue of one agent with its completion watcher.
pub struct HsaQueue {
    inner: Arc<Inner>,
    watcher: Mutex<Option<JoinHandle<()>>>,
    // Kept at a fixed address until the queue is destroyed (the runtime holds a pointer).
    _on_error: Box<QueueErrorCallback>,
}

impl std::fmt::Debug for HsaQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HsaQueue")
            .field("queue", &format_args!("{:#x}", self.inner.queue.0 as u64))
            .field("size", &self.inner.size)
            .finish_non_exhaustive()
    }
}

impl HsaQueue {
    /// A queue on `agent` (see the module documentation) with its watcher started; records the
    /// agent's aperture bases from the `amd_queue_t` the first time.
    ///
    /// # Errors
    /// [`DeviceError::Runtime`] when no size down to 64 packets can be created.
    pub fn new(agent: &HsaAgent) -> Result<HsaQueue, DeviceError> {
        let lib = agent.lib();
        let failure = Arc::new(Failure::default());
        let fault_epoch = agent.system().faults().epoch();
        let seen = failure.clone();
        let name = agent.name().to_owned();
        let on_error = Box::new(QueueErrorCallback::new(move |status| {
            tracing::debug!(agent = %name, status, "HSA queue error callback");
            let mut s = seen.status.lock();
            if s.is_none() {
                *s = Some(status);
            }
        }));
        let max = agent.0.queue_max;
        let mut size = if max == 0 {
            DEFAULT_QUEUE_PACKETS
        } else {
            max.min(DEFAULT_QUEUE_PACKETS)
        };
        if !size.is_power_of_two() {
            size = size.checked_next_power_of_two().map_or(size, |p| p / 2);
        }
        let queue = loop {
            // SAFETY: the agent comes from this runtime; `on_error` is boxed and outlives the
            // queue (dropped after hsa_queue_destroy in Drop).
            match unsafe {
                result::queue_create(
                    lib,
                    agent.handle(),
                    size,
                    HSA_QUEUE_TYPE_MULTI,
                    Some(&on_error),
                    u32::MAX,
                    u32::MAX,
                )
            } {
                Ok(q) => break q,
                Err(e) if size > MIN_QUEUE_PACKETS => {
                    tracing::debug!(size, error = %e, "queue creation failed; halving");
                    size /= 2;
                }
                Err(e) => return Err(agent.device_error("creating a queue", e)),
            }
        };
        // SAFETY: `queue` is a live amd_queue_t the runtime created (non-NULL, checked by
        // queue_create); its hsa_queue_t fields are immutable, and the aperture fields are
        // inside its 256 bytes.
        let (ring, actual, doorbell, apertures) = unsafe {
            let q = &*queue;
            let bytes = queue.cast::<u8>();
            let shared_hi = std::ptr::read_unaligned(bytes.add(GROUP_APERTURE_HI).cast::<u32>());
            let private_hi = std::ptr::read_unaligned(bytes.add(PRIVATE_APERTURE_HI).cast::<u32>());
            (
                q.base_address as u64,
                q.size,
                q.doorbell_signal,
                (private_hi, shared_hi),
            )
        };
        let _ = agent.0.apertures.set(apertures);
        let inner = Arc::new(Inner {
            agent: agent.clone(),
            queue: QueuePtr(queue),
            size: actual.max(1),
            ring,
            doorbell,
            failure,
            fault_epoch,
            items: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            shutdown: AtomicBool::new(false),
            producer: Mutex::new(()),
        });
        let worker = inner.clone();
        let watcher = std::thread::Builder::new()
            .name(format!("rocload-hsa-queue-{:x}", queue as u64))
            .spawn(move || watch(worker))
            .map_err(|e| DeviceError::Queue(format!("cannot start the completion watcher: {e}")));
        let watcher = match watcher {
            Ok(w) => w,
            Err(e) => {
                // SAFETY: the queue was just created and nothing else uses it.
                if let Err(d) = unsafe { result::queue_destroy(lib, queue) } {
                    agent.defer(format!("destroying a queue: {d}"));
                }
                return Err(e);
            }
        };
        tracing::debug!(agent = %agent.name(), queue = format_args!("{:#x}", queue as u64), size = actual, "HSA queue created");
        Ok(HsaQueue {
            inner,
            watcher: Mutex::new(Some(watcher)),
            _on_error: on_error,
        })
    }

    /// Writes one packet into the ring as clr does and rings the doorbell.
    fn publish(&self, packet: &[u8; PACKET_SIZE], header_word: u32) -> Result<(), DeviceError> {
        let i = &self.inner;
        let lib = i.agent.lib();
        // SAFETY: the queue is alive until Drop, which waits for no producer (producers hold
        // `&self`).
        let index = unsafe { result::queue_add_write_index_screlease(lib, i.queue.0, 1) }
            .map_err(|e| i.agent.device_error("reserving a packet slot", e))?;
        let start = Instant::now();
        loop {
            // SAFETY: as above.
            let read = unsafe { result::queue_load_read_index_scacquire(lib, i.queue.0) }
                .map_err(|e| i.agent.device_error("reading the read index", e))?;
            if index.wrapping_sub(read) < u64::from(i.size) {
                break;
            }
            if let Some(reason) = i.failed() {
                return Err(DeviceError::Queue(format!(
                    "the queue stopped while waiting for space: {reason}"
                )));
            }
            if start.elapsed() > SPACE_TIMEOUT {
                return Err(DeviceError::Timeout(SPACE_TIMEOUT));
            }
            std::thread::sleep(Duration::from_micros(20));
        }
        let slot = i.ring + (index % u64::from(i.size)) * PACKET_SIZE as u64;
        // SAFETY: the slot is 64 bytes of the queue's ring (host-visible memory the runtime
        // allocated), 64-byte aligned, which this producer owns until it publishes the header:
        // the slot was reserved above and the processor consumed what was there before (the
        // space wait). The header word is written last, atomically.
        unsafe {
            std::ptr::copy_nonoverlapping(
                packet.as_ptr().add(4),
                (slot + 4) as *mut u8,
                PACKET_SIZE - 4,
            );
            AtomicU32::from_ptr(slot as *mut u32).store(header_word, Ordering::Release);
        }
        // SAFETY: the doorbell is the queue's own signal, alive with the queue.
        unsafe { result::signal_store_screlease(lib, i.doorbell, index as i64) }
            .map_err(|e| i.agent.device_error("ringing the doorbell", e))?;
        Ok(())
    }

    fn enqueue(
        &self,
        mut packet: [u8; PACKET_SIZE],
        header_word: u32,
        label: String,
        host: Option<(HostWork, OwnedSignal)>,
        keep_alive: KeepAlive,
        on_complete: Box<dyn FnOnce(Completion) + Send>,
    ) -> Result<(), DeviceError> {
        let i = &self.inner;
        let _producer = i.producer.lock();
        // Refused with the status that failed the queue, so the caller reports what happened
        // (a memory fault on the agent fails every queue, possibly before the faulting
        // dispatch's completion made the device's error sticky).
        if let (Some(reason), Some((status, _))) = (i.failed(), i.failure_status()) {
            return Err(DeviceError::Runtime {
                op: "submitting to a queue".into(),
                status,
                message: format!("the queue has failed: {reason}"),
            });
        }
        // Every packet gets a completion signal the watcher can wait on.
        let mut completion = u64::from_le_bytes(packet[56..64].try_into().unwrap_or_default());
        let mut own = None;
        if completion == 0 {
            let s = OwnedSignal::new(&i.agent, 1)?;
            completion = s.raw().handle;
            packet[56..64].copy_from_slice(&completion.to_le_bytes());
            own = Some(s);
        }
        self.publish(&packet, header_word)?;
        i.items.lock().push_back(Item {
            label,
            completion: hsa_signal_t { handle: completion },
            _own: own,
            host,
            _keep_alive: keep_alive,
            on_complete,
            submitted: Instant::now(),
        });
        i.ready.notify_all();
        Ok(())
    }
}

impl Inner {
    /// Why the queue stopped, if it did: the error callback's status or a memory fault.
    fn failed(&self) -> Option<String> {
        if let Some(status) = *self.failure.status.lock() {
            return Some(describe_status(&self.agent, status, None));
        }
        let fault = self
            .agent
            .system()
            .faults()
            .fault_of(self.agent.handle().handle, self.fault_epoch)?;
        Some(describe_status(
            &self.agent,
            HSA_STATUS_ERROR_MEMORY_FAULT,
            Some(fault.address),
        ))
    }

    fn failure_status(&self) -> Option<(u32, Option<u64>)> {
        if let Some(status) = *self.failure.status.lock() {
            return Some((status, None));
        }
        self.agent
            .system()
            .faults()
            .fault_of(self.agent.handle().handle, self.fault_epoch)
            .map(|f| (HSA_STATUS_ERROR_MEMORY_FAULT, Some(f.address)))
    }
}

fn describe_status(agent: &HsaAgent, status: u32, address: Option<u64>) -> String {
    let message = result::status_string(agent.lib(), status)
        .unwrap_or_else(|| hsa_sys::status_description(status).to_owned());
    match address {
        Some(a) => format!("{message} (memory fault at {a:#x})"),
        None => message,
    }
}

/// Fails `item`: reports the failure, then completes its signal so waiters wake and see it.
/// The item's keep-alive (which holds the completion signal) is dropped only after that.
fn fail(inner: &Inner, item: Item, status: u32, address: Option<u64>, note: &str) {
    let error = ExecutionError::Queue {
        what: item.label.clone(),
        status,
        status_name: hsa_sys::status_name(status)
            .unwrap_or("HSA_STATUS_<unknown>")
            .to_owned(),
        message: format!("{}{note}", describe_status(&inner.agent, status, address)),
    };
    tracing::debug!(%error, "packet failed");
    (item.on_complete)(Completion::Failed(Arc::new(error)));
    // SAFETY: the completion signal is alive: the runtime's (held by the stream until its
    // wait returns) or the item's own (dropped with `item` below).
    let _ = unsafe { result::signal_store_screlease(inner.agent.lib(), item.completion, 0) };
}

/// The watcher: completes items in order (see the module documentation).
fn watch(inner: Arc<Inner>) {
    loop {
        let item = {
            let mut items = inner.items.lock();
            loop {
                if let Some(item) = items.pop_front() {
                    break Some(item);
                }
                if inner.shutdown.load(Ordering::Acquire) {
                    break None;
                }
                inner.ready.wait_for(&mut items, Duration::from_millis(50));
            }
        };
        let Some(mut item) = item else { return };
        if let Some((status, address)) = inner.failure_status() {
            fail(&inner, item, status, address, "");
            continue;
        }
        let mut host_result = Ok(());
        let mut opened = None;
        if let Some((work, gate)) = item.host.take() {
            // Everything before it completed (items complete in order): run it, then open the
            // barrier packet that holds the queue. The gate lives until that barrier completed:
            // the queue may not have reached the barrier yet, and a signal made meanwhile can
            // take a destroyed signal's handle (ROCr's handles are addresses), which the
            // barrier would then wait for instead.
            host_result = work();
            gate.store(0);
            opened = Some(gate);
        }
        let stop = || inner.failure_status().is_some() || inner.shutdown.load(Ordering::Acquire);
        let (_, done) = signal::wait(&inner.agent, item.completion, Condition::Lt, 1, None, stop);
        drop(opened);
        if done {
            let completion = match host_result {
                Ok(()) => Completion::Done(DispatchReport {
                    duration: item.submitted.elapsed(),
                    ..Default::default()
                }),
                Err(e) => Completion::Failed(Arc::new(ExecutionError::Packet(format!(
                    "{}: {e}",
                    item.label
                )))),
            };
            (item.on_complete)(completion);
        } else if let Some((status, address)) = inner.failure_status() {
            fail(&inner, item, status, address, "");
        } else {
            // Shut down with the packet still running.
            fail(
                &inner,
                item,
                hsa_sys::HSA_STATUS_ERROR,
                None,
                " (the queue was destroyed before the packet completed)",
            );
        }
    }
}

impl Queue for HsaQueue {
    fn submit(
        &self,
        packet: [u8; PACKET_SIZE],
        header_word: u32,
        label: String,
        keep_alive: KeepAlive,
        on_complete: Box<dyn FnOnce(Completion) + Send>,
    ) -> Result<(), DeviceError> {
        self.enqueue(packet, header_word, label, None, keep_alive, on_complete)
    }

    /// A barrier-AND packet gated by a fresh signal holds the queue; the watcher runs `work`
    /// once everything before it completed, then opens the gate.
    fn submit_host_work(
        &self,
        work: HostWork,
        completion_signal: u64,
        keep_alive: KeepAlive,
        on_complete: Box<dyn FnOnce(Completion) + Send>,
    ) -> Result<(), DeviceError> {
        let gate = OwnedSignal::new(&self.inner.agent, 1)?;
        let barrier = aql::barrier_and_packet(&[gate.raw().handle], completion_signal);
        // SAFETY: a barrier-AND packet is 64 bytes of plain data.
        let bytes: [u8; PACKET_SIZE] = unsafe { std::mem::transmute(barrier) };
        let header = aql::header_word(Header::ordered(HSA_PACKET_TYPE_BARRIER_AND), 0);
        self.enqueue(
            bytes,
            header,
            "host work".to_owned(),
            Some((work, gate)),
            keep_alive,
            on_complete,
        )
    }

    fn address(&self) -> u64 {
        self.inner.queue.0 as u64
    }

    /// Never ran on hardware: written against ROCr's `AqlQueue::SetCUMasking` (a reduced mask,
    /// because of `HSA_CU_MASK` or the agent's CU count, is still success, as clr takes it).
    fn set_cu_mask(&self, mask: &[u32]) -> Result<(), DeviceError> {
        let agent = &self.inner.agent;
        // SAFETY: the queue is alive while `self` is.
        match unsafe { result::queue_cu_set_mask(agent.lib(), self.inner.queue.0, mask) } {
            Ok(reduced) => {
                tracing::debug!(
                    queue = format_args!("{:#x}", self.address()),
                    ?mask,
                    reduced,
                    "CU mask set"
                );
                Ok(())
            }
            Err(e) => Err(agent.device_error("setting a queue's CU mask", e)),
        }
    }
}

impl Drop for HsaQueue {
    fn drop(&mut self) {
        self.inner.shutdown.store(true, Ordering::Release);
        self.inner.ready.notify_all();
        if let Some(w) = self.watcher.lock().take() {
            let _ = w.join();
        }
        let agent = &self.inner.agent;
        // SAFETY: the queue is alive and, with the watcher gone and `&mut self`, unused.
        if let Err(e) = unsafe { result::queue_destroy(agent.lib(), self.inner.queue.0) } {
            agent.defer(format!("destroying a queue: {e}"));
        }
    }
}
