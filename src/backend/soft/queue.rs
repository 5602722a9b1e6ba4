//! The software agent's AQL queue: a ring of 64-byte packets in (read-only, checked) guest
//! memory behind a real `hsa_queue_t`, a write index the runtime bumps, a doorbell signal, and
//! a packet processor thread that takes published packets in order, as a GPU's command
//! processor does. Kernel dispatches run on the agent's executor; barrier-AND packets wait for
//! their signals; completion signals are decremented when a packet is done.
//!
//! The dispatch packet a kernel sees through its dispatch pointer is the very packet in the
//! ring (code object v4 kernels read their sizes from it). Not for forming packets (the
//! runtime does, for every backend) or for running kernels (the executor does).

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
    MemoryKind, Queue, Signal,
};

/// Packets in a queue's ring (clr asks ROCr for its maximum, usually 4096 or more).
pub const QUEUE_PACKETS: u32 = 1024;

/// Bytes reserved for the `hsa_queue_t` before the ring (ROCr's `amd_queue_t` is 256 bytes).
const QUEUE_HEADER: u64 = 256;

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
    write_index: AtomicU64,
    read_index: AtomicU64,
    doorbell: Signal,
    pending: Mutex<Vec<Option<Pending>>>,
    producer: Mutex<()>,
    shutdown: AtomicBool,
}

impl Shared {
    fn ring(&self) -> u64 {
        self.base + QUEUE_HEADER
    }

    fn slot_address(&self, index: u64) -> u64 {
        self.ring() + (index % u64::from(QUEUE_PACKETS)) * PACKET_SIZE as u64
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
        let size = QUEUE_HEADER + u64::from(QUEUE_PACKETS) * PACKET_SIZE as u64;
        let allocation = state
            .memory
            .allocate(&state.table, size, MemoryKind::Queue, false)?;
        let base = allocation.base;
        let shared = Arc::new(Shared {
            state: state.clone(),
            base,
            write_index: AtomicU64::new(0),
            read_index: AtomicU64::new(0),
            doorbell: Signal::new(-1),
            pending: Mutex::new((0..QUEUE_PACKETS).map(|_| None).collect()),
            producer: Mutex::new(()),
            shutdown: AtomicBool::new(false),
        });
        // The hsa_queue_t: type MULTI (1), features KERNEL_DISPATCH (1), ring base, doorbell
        // handle (0: the software doorbell is not an hsa_signal_t), size, id.
        let header = hsa_sys::hsa_queue_t {
            type_: 1,
            features: 1,
            base_address: shared.ring() as *mut std::ffi::c_void,
            doorbell_signal: hsa_sys::hsa_signal_t { handle: 0 },
            size: QUEUE_PACKETS,
            reserved1: 0,
            id: base,
        };
        // SAFETY: `base` starts a fresh allocation of `size` bytes (> size_of hsa_queue_t),
        // 256-aligned, that nothing else uses yet.
        unsafe { std::ptr::write(base as *mut hsa_sys::hsa_queue_t, header) };
        for i in 0..u64::from(QUEUE_PACKETS) {
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
            packets = QUEUE_PACKETS,
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
        let _producer = s.producer.lock();
        let index = s.write_index.load(Ordering::Relaxed);
        // Wait for space, as clr does (the processor frees slots as packets complete).
        while index - s.read_index.load(Ordering::Acquire) >= u64::from(QUEUE_PACKETS) {
            std::thread::sleep(Duration::from_micros(50));
        }
        s.pending.lock()[(index % u64::from(QUEUE_PACKETS)) as usize] = Some(pending);
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
        s.write_index.store(index + 1, Ordering::Release);
        s.doorbell.store(index as i64);
        Ok(())
    }
}

impl Queue for SoftQueue {
    fn submit(
        &self,
        packet: [u8; PACKET_SIZE],
        header_word: u32,
        keep_alive: KeepAlive,
        on_complete: Box<dyn FnOnce(Completion) + Send>,
    ) -> Result<(), DeviceError> {
        let label = describe(&packet);
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
                _keep_alive: Vec::new(),
                work: Some(work),
                on_complete,
            },
        )
    }

    fn address(&self) -> u64 {
        self.shared.base
    }
}

impl Drop for SoftQueue {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        self.shared.doorbell.add(0);
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
        }
        let state = &self.shared.state;
        if let Err(e) = state.memory.free(&state.table, self.shared.base, false) {
            tracing::debug!(error = %e, "freeing a queue's ring failed");
        }
    }
}

/// A short description of a packet for logs and reports.
fn describe(packet: &[u8; PACKET_SIZE]) -> String {
    let kernel_object = u64::from_le_bytes(packet[32..40].try_into().unwrap_or_default());
    match Header(u16::from_le_bytes([packet[0], packet[1]])).packet_type() {
        PacketType::BarrierAnd => "barrier".into(),
        _ => format!("dispatch of kernel object {kernel_object:#x}"),
    }
}

/// The processor thread: takes published packets in order until shut down and drained.
fn process(s: Arc<Shared>) {
    loop {
        let index = s.read_index.load(Ordering::Relaxed);
        let header = s.header(index).load(Ordering::Acquire);
        let header = Header(header as u16);
        if header.packet_type() == PacketType::Invalid {
            if s.shutdown.load(Ordering::Acquire) && s.write_index.load(Ordering::Acquire) == index
            {
                return;
            }
            s.doorbell.wait(Condition::Gte, index as i64, Some(POLL));
            continue;
        }
        let slot = s.slot_address(index);
        let mut pending = s.pending.lock()[(index % u64::from(QUEUE_PACKETS)) as usize].take();
        let label = pending
            .as_ref()
            .map_or("packet", |p| p.label.as_str())
            .to_owned();
        let (completion, signal) = match header.packet_type() {
            PacketType::KernelDispatch => {
                // SAFETY: the slot holds a published 64-byte packet; DispatchPacket is plain
                // data with no invalid bit patterns except the raw pointer, which is only read
                // as an address.
                let packet: DispatchPacket =
                    unsafe { std::ptr::read(slot as *const DispatchPacket) };
                let signal = packet.completion_signal.handle;
                (dispatch(&s, &packet, slot, &label), signal)
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
                    Some(work) => match work() {
                        Ok(()) => Completion::Done(DispatchReport::default()),
                        Err(e) => Completion::Failed(Arc::new(ExecutionError::Packet(format!(
                            "{label}: {e}"
                        )))),
                    },
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
        s.header(index)
            .store(u32::from(Header::invalid().0), Ordering::Release);
        s.read_index.store(index + 1, Ordering::Release);
        if let Some(p) = pending {
            (p.on_complete)(completion);
        }
        if signal != 0 {
            match s.state.signals.get(signal) {
                Some(sig) => {
                    sig.subtract(1);
                }
                None => tracing::debug!(signal, "completion signal no longer exists"),
            }
        }
    }
}

fn dispatch(s: &Shared, packet: &DispatchPacket, packet_address: u64, label: &str) -> Completion {
    let fail = |m: String| Completion::Failed(Arc::new(ExecutionError::Packet(m)));
    let Some(executor) = s.state.executor() else {
        return fail(format!(
            "{label}: the software agent has no kernel executor (the emulator is not built in)"
        ));
    };
    let table = &s.state.table;
    let kd = packet.kernel_object;
    if let Err(v) = table.check(kd, 64, false) {
        return fail(format!("{label}: kernel_object: {v}"));
    }
    let mut descriptor = [0u8; 64];
    // SAFETY: the 64 bytes at `kd` lie in a live allocation of this device (checked above),
    // which the packet's keep-alive (the kernel's executable) holds until completion.
    unsafe { std::ptr::copy_nonoverlapping(kd as *const u8, descriptor.as_mut_ptr(), 64) };
    let job = Job {
        packet,
        packet_address,
        queue_address: s.base,
        descriptor,
        label,
        memory: table,
    };
    let start = Instant::now();
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
