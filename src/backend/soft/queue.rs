//! The software agent's AQL queue: a ring of 64-byte packets in (read-only, checked) guest
//! memory behind a real `hsa_queue_t`, a write index the runtime bumps, a doorbell signal, and
//! a packet processor thread that takes published packets in order, as a GPU's command
//! processor does. Kernel dispatches run on the agent's executor; barrier-AND packets wait for
//! their signals; completion signals are decremented when a packet is done.
//!
//! The dispatch packet a kernel sees through its dispatch pointer is the very packet in the
//! ring (code object v4 kernels read their sizes from it). Producers either submit through
//! [`Queue`] (the runtime) or write the ring themselves as HSA programs do (the software HSA
//! library: reserve with the write index, write the packet with an INVALID header, publish
//! the header, ring the doorbell, whose handle is in the `hsa_queue_t`). Queues made with an
//! error handler behave as ROCr's: a failed packet leaves its completion signal unchanged,
//! runs the handler and suspends the queue. What a packet runs (the executor, host work, the
//! completion callback) runs under `catch_unwind`: a panic there fails that packet
//! ([`ExecutionError::Internal`]) and the processor goes on, so no wait on the queue hangs.
//! Not for forming packets (the runtime does, for every backend) or for running kernels (the
//! executor does).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::exec::Job;
use super::State;
use crate::device::aql::{self, DispatchPacket, Header, PacketType, PACKET_SIZE};
use crate::device::{
    Completion, Condition, DeviceError, DispatchReport, ExecutionError, HostWork, KeepAlive,
    MemoryKind, Queue, SignalHandle,
};

/// Packets in a queue's ring (clr asks ROCr for its maximum, usually 4096 or more).
pub const QUEUE_PACKETS: u32 = 1024;

/// The largest ring the software agent makes (`HSA_AGENT_INFO_QUEUE_MAX_SIZE`).
pub const MAX_QUEUE_PACKETS: u32 = 1 << 17;

/// Bytes reserved for the `hsa_queue_t` before the ring (ROCr's `amd_queue_t` is 256 bytes).
const QUEUE_HEADER: u64 = 256;

/// Offsets in ROCr's `amd_queue_t` (`amd_hsa_queue.h`) of the high halves of the group and
/// private apertures, which the software queue fills as ROCr does.
const AMD_QUEUE_GROUP_APERTURE_HI: u64 = 64;
const AMD_QUEUE_PRIVATE_APERTURE_HI: u64 = 68;

/// What a queue with ROCr's semantics runs when a packet fails.
pub type QueueErrorHandler = Arc<dyn Fn(&ExecutionError) + Send + Sync>;

/// How long a waiting processor sleeps between checks for shutdown.
const POLL: Duration = Duration::from_millis(50);

struct Pending {
    label: String,
    _keep_alive: KeepAlive,
    work: Option<HostWork>,
    on_complete: Box<dyn FnOnce(Completion) + Send>,
}

/// The agent-dispatch type the software queue uses for host work.
const HOST_WORK: u16 = 0x8001;

struct Shared {
    state: Arc<State>,
    /// Address of the `hsa_queue_t`; the ring follows at `QUEUE_HEADER`.
    base: u64,
    packets: u32,
    write_index: AtomicU64,
    read_index: AtomicU64,
    doorbell: SignalHandle,
    pending: Mutex<Vec<Option<Pending>>>,
    shutdown: AtomicBool,
    /// ROCr's semantics: run this on a failed packet and suspend.
    on_error: Option<QueueErrorHandler>,
    suspended: AtomicBool,
    /// Record each packet's start and end times in its completion signal
    /// (`hsa_amd_profiling_set_profiler_enabled`).
    profiling: AtomicBool,
    /// The compute units its dispatches run on (`set_cu_mask`); `None`: all.
    compute_units: Mutex<Option<Vec<u32>>>,
}

impl Shared {
    fn ring(&self) -> u64 {
        self.base + QUEUE_HEADER
    }

    fn slot(&self, index: u64) -> usize {
        (index % u64::from(self.packets)) as usize
    }

    fn slot_address(&self, index: u64) -> u64 {
        self.ring() + self.slot(index) as u64 * PACKET_SIZE as u64
    }

    /// The header word of slot `index`, as an atomic.
    fn header(&self, index: u64) -> &AtomicU32 {
        // SAFETY: the ring is live, 256-aligned host memory owned by the device for as long as
        // `Shared` exists (freed in SoftQueue's Drop after the processor stopped); every slot
        // starts on a 64-byte boundary, so its first word is aligned for AtomicU32.
        unsafe { AtomicU32::from_ptr(self.slot_address(index) as *mut u32) }
    }
}

/// A software AQL queue and its processor thread.
pub struct SoftQueue {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for SoftQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoftQueue")
            .field("address", &format_args!("{:#x}", self.shared.base))
            .field(
                "write_index",
                &self.shared.write_index.load(Ordering::Relaxed),
            )
            .field(
                "read_index",
                &self.shared.read_index.load(Ordering::Relaxed),
            )
            .finish()
    }
}

impl SoftQueue {
    /// A queue of `state`'s device, with its processor thread started.
    pub(crate) fn new(state: Arc<State>) -> Result<SoftQueue, DeviceError> {
        SoftQueue::with_options(state, QUEUE_PACKETS, None)
    }

    /// A queue of `packets` slots (a power of two, at most [`MAX_QUEUE_PACKETS`]); with
    /// `on_error`, ROCr's failure semantics (see the module documentation).
    pub(crate) fn with_options(
        state: Arc<State>,
        packets: u32,
        on_error: Option<QueueErrorHandler>,
    ) -> Result<SoftQueue, DeviceError> {
        if !packets.is_power_of_two() || packets > MAX_QUEUE_PACKETS {
            return Err(DeviceError::Queue(format!(
                "{packets} packets: a queue's size must be a power of two up to {MAX_QUEUE_PACKETS}"
            )));
        }
        let size = QUEUE_HEADER + u64::from(packets) * PACKET_SIZE as u64;
        let allocation = state
            .memory
            .allocate(&state.table, size, MemoryKind::Queue, false)?;
        let base = allocation.base;
        let doorbell = state.signals.create(-1);
        let shared = Arc::new(Shared {
            state: state.clone(),
            base,
            packets,
            write_index: AtomicU64::new(0),
            read_index: AtomicU64::new(0),
            doorbell,
            pending: Mutex::new((0..packets).map(|_| None).collect()),
            shutdown: AtomicBool::new(false),
            on_error,
            suspended: AtomicBool::new(false),
            profiling: AtomicBool::new(false),
            compute_units: Mutex::new(None),
        });
        // The hsa_queue_t: type MULTI (1), features KERNEL_DISPATCH (1), ring base, doorbell
        // signal (a handle of the agent's signal table), size, id.
        let header = hsa_sys::hsa_queue_t {
            type_: 1,
            features: 1,
            base_address: shared.ring() as *mut std::ffi::c_void,
            doorbell_signal: hsa_sys::hsa_signal_t {
                handle: shared.doorbell.handle,
            },
            size: packets,
            reserved1: 0,
            id: base,
        };
        let (private_hi, shared_hi) = (
            (super::PRIVATE_APERTURE >> 32) as u32,
            (super::SHARED_APERTURE >> 32) as u32,
        );
        // SAFETY: `base` starts a fresh, zeroed allocation of `size` bytes (more than the 256
        // of ROCr's amd_queue_t), 256-aligned, that nothing else uses yet; the aperture fields
        // are 4-byte aligned offsets inside it.
        unsafe {
            std::ptr::write(base as *mut hsa_sys::hsa_queue_t, header);
            std::ptr::write((base + AMD_QUEUE_GROUP_APERTURE_HI) as *mut u32, shared_hi);
            std::ptr::write(
                (base + AMD_QUEUE_PRIVATE_APERTURE_HI) as *mut u32,
                private_hi,
            );
        }
        for i in 0..u64::from(packets) {
            shared
                .header(i)
                .store(u32::from(Header::invalid().0), Ordering::Relaxed);
        }
        let worker = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("rocload-queue-{base:x}"))
            .spawn(move || process(worker))
            .map_err(|e| DeviceError::Queue(format!("cannot start the packet processor: {e}")))?;
        tracing::debug!(
            queue = format_args!("{base:#x}"),
            packets,
            rocr_semantics = shared.on_error.is_some(),
            "software queue created"
        );
        Ok(SoftQueue {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }
}

impl SoftQueue {
    fn enqueue(
        &self,
        packet: [u8; PACKET_SIZE],
        header_word: u32,
        pending: Pending,
    ) -> Result<(), DeviceError> {
        let s = &self.shared;
        if s.shutdown.load(Ordering::Acquire) {
            return Err(DeviceError::Queue("the queue is shut down".into()));
        }
        if s.suspended.load(Ordering::Acquire) {
            return Err(DeviceError::Queue(
                "the queue is suspended after a failed packet".into(),
            ));
        }
        // Reserve a slot, as clr does (hsa_queue_add_write_index_screlease).
        let index = s.write_index.fetch_add(1, Ordering::AcqRel);
        // Wait for space (the processor frees slots as packets complete).
        while index.wrapping_sub(s.read_index.load(Ordering::Acquire)) >= u64::from(s.packets) {
            if s.suspended.load(Ordering::Acquire) || s.shutdown.load(Ordering::Acquire) {
                return Err(DeviceError::Queue(
                    "the queue stopped while waiting for space".into(),
                ));
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        s.pending.lock()[s.slot(index)] = Some(pending);
        let slot = s.slot_address(index);
        // SAFETY: the slot is 64 bytes of the ring, which only this producer writes while its
        // header is INVALID (the processor has consumed the packet that was there: checked by
        // the space wait above). The header word is written last, atomically, below.
        unsafe {
            std::ptr::copy_nonoverlapping(
                packet.as_ptr().add(4),
                (slot + 4) as *mut u8,
                PACKET_SIZE - 4,
            )
        };
        s.header(index).store(header_word, Ordering::Release);
        s.doorbell.signal.store(index as i64);
        Ok(())
    }

    /// Address of the `hsa_queue_t` (ring at `base_address`, `size` slots, doorbell signal).
    pub fn hsa_queue(&self) -> u64 {
        self.shared.base
    }

    /// Slots in the ring.
    pub fn size(&self) -> u32 {
        self.shared.packets
    }

    /// The doorbell signal's handle (in the agent's signal table).
    pub fn doorbell(&self) -> u64 {
        self.shared.doorbell.handle
    }

    /// The write index (`hsa_queue_load_write_index_*`).
    pub fn load_write_index(&self) -> u64 {
        self.shared.write_index.load(Ordering::Acquire)
    }

    /// Sets the write index (`hsa_queue_store_write_index_*`).
    pub fn store_write_index(&self, value: u64) {
        self.shared.write_index.store(value, Ordering::Release);
    }

    /// Adds to the write index and returns its previous value (`hsa_queue_add_write_index_*`).
    pub fn add_write_index(&self, value: u64) -> u64 {
        self.shared.write_index.fetch_add(value, Ordering::AcqRel)
    }

    /// Compare-and-swap of the write index; returns the value seen
    /// (`hsa_queue_cas_write_index_*`).
    pub fn cas_write_index(&self, expected: u64, value: u64) -> u64 {
        match self.shared.write_index.compare_exchange(
            expected,
            value,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(v) | Err(v) => v,
        }
    }

    /// The read index: packets before it were taken by the processor
    /// (`hsa_queue_load_read_index_*`).
    pub fn load_read_index(&self) -> u64 {
        self.shared.read_index.load(Ordering::Acquire)
    }

    /// Turns recording of start and end times into completion signals on or off.
    pub fn set_profiling(&self, enable: bool) {
        self.shared.profiling.store(enable, Ordering::Release);
    }

    /// Whether a failed packet suspended the queue (ROCr semantics only).
    pub fn is_suspended(&self) -> bool {
        self.shared.suspended.load(Ordering::Acquire)
    }
}

impl Queue for SoftQueue {
    fn submit(
        &self,
        packet: [u8; PACKET_SIZE],
        header_word: u32,
        label: String,
        keep_alive: KeepAlive,
        on_complete: Box<dyn FnOnce(Completion) + Send>,
    ) -> Result<(), DeviceError> {
        self.enqueue(
            packet,
            header_word,
            Pending {
                label,
                _keep_alive: keep_alive,
                work: None,
                on_complete,
            },
        )
    }

    fn submit_host_work(
        &self,
        work: HostWork,
        completion_signal: u64,
        keep_alive: KeepAlive,
        on_complete: Box<dyn FnOnce(Completion) + Send>,
    ) -> Result<(), DeviceError> {
        let packet = aql::agent_dispatch_packet(HOST_WORK, completion_signal);
        let header = aql::header_word(
            Header::ordered(hsa_sys::HSA_PACKET_TYPE_AGENT_DISPATCH),
            HOST_WORK,
        );
        self.enqueue(
            packet,
            header,
            Pending {
                label: "host work".into(),
                _keep_alive: keep_alive,
                work: Some(work),
                on_complete,
            },
        )
    }

    fn address(&self) -> u64 {
        self.shared.base
    }

    /// The queue's dispatches run on the units whose bits are set: compute unit `k` is the
    /// host's `k`-th CPU, and a dispatch runs at most one worker thread per unit, pinned to it
    /// (`rocload_emu::cpus`). A mask with every unit set lifts the restriction.
    fn set_cu_mask(&self, mask: &[u32]) -> Result<(), DeviceError> {
        let units = self.shared.state.properties.compute_units;
        let chosen: Vec<u32> = (0..units)
            .filter(|&cu| {
                mask.get(cu as usize / 32)
                    .is_some_and(|w| w >> (cu % 32) & 1 == 1)
            })
            .collect();
        tracing::debug!(
            queue = format_args!("{:#x}", self.shared.base),
            ?mask,
            units = ?chosen,
            "CU mask: dispatches run on these units' CPUs"
        );
        *self.shared.compute_units.lock() = (chosen.len() < units as usize).then_some(chosen);
        Ok(())
    }
}

impl Drop for SoftQueue {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        self.shared.doorbell.signal.add(0);
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
        }
        let state = &self.shared.state;
        if let Err(e) = state.memory.free(&state.table, self.shared.base, false) {
            tracing::debug!(error = %e, "freeing a queue's ring failed");
        }
    }
}

/// The processor thread: takes published packets in order until shut down and drained (or,
/// with ROCr's semantics, until a packet fails: then it only waits for the shutdown).
fn process(s: Arc<Shared>) {
    loop {
        if s.suspended.load(Ordering::Acquire) {
            if s.shutdown.load(Ordering::Acquire) {
                return;
            }
            s.doorbell.signal.wait(Condition::Lt, i64::MIN, Some(POLL));
            continue;
        }
        let index = s.read_index.load(Ordering::Relaxed);
        let header = s.header(index).load(Ordering::Acquire);
        let header = Header(header as u16);
        if header.packet_type() == PacketType::Invalid {
            // Every published packet before this one ran; slots reserved but never published
            // cannot be published any more once the queue is dropped.
            if s.shutdown.load(Ordering::Acquire) {
                return;
            }
            s.doorbell
                .signal
                .wait(Condition::Gte, index as i64, Some(POLL));
            continue;
        }
        let slot = s.slot_address(index);
        let started = s
            .profiling
            .load(Ordering::Acquire)
            .then(crate::device::timestamp_ns);
        let mut pending = s.pending.lock()[s.slot(index)].take();
        // Moved out, not copied: nothing else reads it, and this runs for every packet.
        let label = pending
            .as_mut()
            .map_or_else(|| "packet".to_owned(), |p| std::mem::take(&mut p.label));
        tracing::trace!(queue = format_args!("{:#x}", s.base), index, kind = ?header.packet_type(), "packet taken");
        let (completion, signal) = match header.packet_type() {
            PacketType::KernelDispatch => {
                // SAFETY: the slot holds a published 64-byte packet; DispatchPacket is plain
                // data with no invalid bit patterns except the raw pointer, which is only read
                // as an address.
                let packet: DispatchPacket =
                    unsafe { std::ptr::read(slot as *const DispatchPacket) };
                let signal = packet.completion_signal.handle;
                let completion = guarded(&label, || dispatch(&s, &packet, slot, index, &label));
                (completion, signal)
            }
            PacketType::BarrierAnd => {
                // SAFETY: as above, for the barrier packet's layout.
                let packet: aql::BarrierAndPacket =
                    unsafe { std::ptr::read(slot as *const aql::BarrierAndPacket) };
                let signal = packet.completion_signal.handle;
                (barrier(&s, &packet), signal)
            }
            PacketType::AgentDispatch => {
                // SAFETY: the slot holds a published 64-byte packet; the completion signal is
                // its last 8 bytes.
                let signal = unsafe { std::ptr::read_unaligned((slot + 56) as *const u64) };
                let work = pending.as_mut().and_then(|p| p.work.take());
                let completion = match work {
                    Some(work) => guarded(&label, || match work() {
                        Ok(()) => Completion::Done(DispatchReport::default()),
                        Err(e) => Completion::Failed(Arc::new(ExecutionError::Packet(format!(
                            "{label}: {e}"
                        )))),
                    }),
                    None => Completion::Failed(Arc::new(ExecutionError::Packet(
                        "agent dispatch packet without host work".into(),
                    ))),
                };
                (completion, signal)
            }
            other => (
                Completion::Failed(Arc::new(ExecutionError::Packet(format!(
                    "packet type {other:?} is not supported by the software queue"
                )))),
                0,
            ),
        };
        if let (Completion::Failed(e), Some(on_error)) = (&completion, &s.on_error) {
            // ROCr: the queue is suspended; the failed packet's completion signal is left as it
            // is and nothing after it runs. The handler reports it (the error callback).
            tracing::debug!(%label, error = %e, "packet failed; queue suspended (ROCr semantics)");
            s.suspended.store(true, Ordering::Release);
            on_error(e);
            if let Some(p) = pending {
                complete(&label, p, completion);
            }
            continue;
        }
        s.header(index)
            .store(u32::from(Header::invalid().0), Ordering::Release);
        s.read_index.store(index + 1, Ordering::Release);
        if let Some(p) = pending {
            complete(&label, p, completion);
        }
        if signal != 0 {
            match s.state.signals.get(signal) {
                Some(sig) => {
                    if let Some(start) = started {
                        sig.record_times(start, crate::device::timestamp_ns());
                    }
                    sig.subtract(1);
                }
                None => tracing::debug!(signal, "completion signal no longer exists"),
            }
        }
    }
}

/// What a panic said.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Runs what a packet does; a panic fails the packet instead of ending the processor thread
/// (every later wait on the queue would hang).
fn guarded(label: &str, f: impl FnOnce() -> Completion) -> Completion {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let detail = panic_message(&*payload);
        tracing::debug!(%label, %detail, "packet processing panicked");
        Completion::Failed(Arc::new(ExecutionError::Internal {
            what: label.to_owned(),
            detail,
        }))
    })
}

/// Tells the submitter how its packet ended; a panicking callback is logged, not fatal.
fn complete(label: &str, pending: Pending, completion: Completion) {
    let on_complete = pending.on_complete;
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || on_complete(completion))) {
        tracing::debug!(%label, detail = %panic_message(&*payload), "completion callback panicked");
    }
}

fn dispatch(
    s: &Shared,
    packet: &DispatchPacket,
    packet_address: u64,
    dispatch_id: u64,
    label: &str,
) -> Completion {
    let fail = |m: String| Completion::Failed(Arc::new(ExecutionError::Packet(m)));
    let executor = &s.state.executor;
    let table = &s.state.table;
    let kd = packet.kernel_object;
    // Only a kernel the loader loaded runs, with the descriptor it had when it was loaded
    // (a kernel cannot redirect another's entry by writing its descriptor).
    let Some(descriptor) = s.state.descriptors.read().get(&kd).copied() else {
        let what = match table.find(kd) {
            Some(a) => format!("{kd:#x} in {a}"),
            None => format!("{kd:#x}, in no allocation"),
        };
        return fail(format!(
            "{label}: kernel_object {what} is not the descriptor of a loaded kernel"
        ));
    };
    let job = Job {
        packet,
        packet_address,
        queue_address: s.base,
        dispatch_id,
        descriptor,
        processor: s.state.processor,
        label,
        memory: table,
        hostcall: &s.state.hostcall,
        border_colors: s.state.border_colors.lock().table,
        compute_units: s.compute_units.lock().clone(),
    };
    let start = Instant::now();
    // What the kernel may touch stays allocated until it ends, whatever is freed meanwhile.
    let _active = s.state.memory.epochs().begin();
    match executor.run(&job) {
        Ok(mut report) => {
            report.duration = start.elapsed();
            tracing::debug!(%label, ?report.duration, instructions = report.instructions, "dispatch completed");
            Completion::Done(report)
        }
        Err(e) => {
            tracing::debug!(%label, error = %e, "dispatch failed");
            Completion::Failed(Arc::new(e))
        }
    }
}

fn barrier(s: &Shared, packet: &aql::BarrierAndPacket) -> Completion {
    for dep in packet.dep_signal.iter().filter(|d| d.handle != 0) {
        let Some(signal) = s.state.signals.get(dep.handle) else {
            // A signal that no longer exists was completed and dropped.
            continue;
        };
        loop {
            let (_, done) = signal.wait(Condition::Lt, 1, Some(POLL));
            if done {
                break;
            }
            if s.shutdown.load(Ordering::Acquire) {
                return Completion::Failed(Arc::new(ExecutionError::Packet(
                    "the queue was shut down while a barrier waited".into(),
                )));
            }
        }
    }
    Completion::Done(DispatchReport::default())
}
