//! The device layer: what running kernels needs from an agent, in one shape for every backend.
//!
//! - [`aql`]: dispatch and barrier packets, built once by the runtime for every backend;
//! - [`epoch`]: when freed memory may go back to the host (after the dispatches that could
//!   touch it);
//! - [`host_memory`]: whether a range of the caller's host memory is mapped with the protection
//!   an access needs, checked before a copy or a registration touches it;
//! - [`kernarg`]: kernel argument segments laid out from the kernel's metadata;
//! - [`memory`]: the allocation table (interior pointers, the memory checker's truth);
//! - [`shared`]: host memory another process can map (memory objects, reservations);
//! - [`signal`]: software signals with bounded waits;
//! - [`vmm`]: virtual memory management (reservations, physical allocations, mappings with
//!   per-device access) and memory shared between processes (IPC handles), as backends
//!   provide them;
//! - [`Device`]: the trait a backend implements: memory, copies, queues that take AQL packets,
//!   completion signals. The software agent implements it in process (its queue processor runs
//!   packets on the emulator); ROCr's agents implement it over HSA queues, pools and signals
//!   (`crate::backend::hsa`).
//!
//! The runtime forms packets and kernarg segments and submits them here; nothing in this layer
//! knows HIP's API. Not for loading code (the loader) or choosing agents (the backends).

pub mod aql;
pub mod epoch;
pub mod host_memory;
pub mod image;
pub mod kernarg;
pub mod memory;
pub mod properties;
pub mod shared;
pub mod signal;
pub mod vmm;

use std::fmt;
use std::os::fd::BorrowedFd;
use std::sync::Arc;
use std::time::Duration;

use crate::loader::Agent;

pub use aql::{DispatchGeometry, DispatchPacket};
pub use kernarg::{ExplicitArgs, HiddenValues, KernargError};
pub use memory::{
    AccessKind, AccessViolation, Allocation, AllocationTable, MemoryKind, Perms, Segment,
};
pub use properties::{DeviceProperties, HostFacts, MemoryInfo};
pub use signal::{timestamp_ns, Condition, Signal, SignalBackend};

/// Which wave of a dispatch: its work-group's id and its index in the work-group.
pub use rocload_emu::WaveId;

/// A device operation that did not happen.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// Memory could not be allocated (the size, and what was asked for).
    #[error("out of memory: cannot allocate {size} bytes of {kind}")]
    OutOfMemory {
        /// Bytes asked for.
        size: u64,
        /// What for.
        kind: MemoryKind,
    },
    /// An address that is not the start of a live allocation (double free, interior pointer).
    #[error("{address:#x} is not the start of a live allocation{}", .detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    InvalidAddress {
        /// The address.
        address: u64,
        /// What is there instead, when known.
        detail: Option<String>,
    },
    /// A free of an allocation that was already freed (and is still remembered).
    #[error("{address:#x} is not the start of a live allocation (already freed: {allocation})")]
    AlreadyFreed {
        /// The address given.
        address: u64,
        /// The allocation that was there.
        allocation: Allocation,
    },
    /// A copy or fill that touches memory outside an allocation.
    #[error("{0}")]
    Access(AccessViolation),
    /// The operation is not available on this backend (and says why).
    #[error("{op} is not supported by the {backend} backend: {reason}")]
    Unsupported {
        /// The operation.
        op: &'static str,
        /// The backend.
        backend: &'static str,
        /// Why.
        reason: String,
    },
    /// A packet the queue refused (malformed, or the queue is shut down).
    #[error("queue refused the packet: {0}")]
    Queue(String),
    /// A wait that ran out of time.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// A launch needs more scratch (private memory) than the device gives: more per work-item
    /// than its cap, or more for one work-group than its whole scratch budget.
    #[error("{}", scratch_too_large(*.per_workitem, *.workgroup_bytes, *.limit))]
    ScratchTooLarge {
        /// Bytes each work-item needs.
        per_workitem: u64,
        /// Bytes one work-group needs, when that is what exceeds `limit` (else the per-item
        /// size does).
        workgroup_bytes: Option<u64>,
        /// The device's limit: per work-item, or the whole budget when `workgroup_bytes` is
        /// given.
        limit: u64,
    },
    /// Shareable memory (a memory object, a reservation, a mapping, another process's memory)
    /// could not be made, mapped or opened.
    #[error("{0}")]
    Shared(shared::SharedMemoryError),
    /// A virtual-memory or IPC operation on something the backend does not know or that is in
    /// the wrong state (an address that is no reservation or mapping, a mapping over another,
    /// a reservation that still has mappings, a handle of another backend).
    #[error("{what}: {reason}")]
    Vmm {
        /// The operation.
        what: &'static str,
        /// Why it cannot be done.
        reason: String,
    },
    /// A call into the backend's runtime failed (ROCr: the HSA call and its status).
    #[error("{op}: {message}")]
    Runtime {
        /// What the device was doing.
        op: String,
        /// The runtime's status code (`hsa_status_t`), for mapping to HIP codes.
        status: u32,
        /// The failed call, status and message.
        message: String,
    },
}

/// [`DeviceError::Unsupported`] for `op` on `device`'s backend.
fn unsupported<D: Device + ?Sized>(device: &D, op: &'static str, reason: &str) -> DeviceError {
    DeviceError::Unsupported {
        op,
        backend: match device.backend() {
            crate::loader::BackendKind::Soft => "soft",
            crate::loader::BackendKind::Hsa => "hsa",
        },
        reason: reason.into(),
    }
}

fn scratch_too_large(per_workitem: u64, workgroup_bytes: Option<u64>, limit: u64) -> String {
    match workgroup_bytes {
        Some(w) => format!(
            "one work-group needs {w} bytes of scratch ({per_workitem} per work-item), more than the device's scratch budget of {limit} bytes (ROCLOAD_SCRATCH_BUDGET)"
        ),
        None => format!(
            "{per_workitem} bytes of scratch per work-item, more than the device's {limit}"
        ),
    }
}

/// What a queue needs to keep alive while a packet is in flight: the kernel's code, its kernarg
/// segment, buffers a copy reads. Dropped when the packet completes.
pub type KeepAlive = Vec<Box<dyn std::any::Any + Send + Sync>>;

/// The outcome of one completed packet, as the queue reports it.
#[derive(Debug, Clone)]
pub enum Completion {
    /// The packet completed.
    Done(DispatchReport),
    /// The packet failed: a kernel fault, trap or timeout, or a refused packet. The runtime
    /// makes this sticky, as HIP does.
    Failed(Arc<ExecutionError>),
}

/// Facts about a completed dispatch (instrumentation and benchmarks).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DispatchReport {
    /// Wall time from the start of execution to completion.
    pub duration: Duration,
    /// Wave instructions executed (software agent).
    pub instructions: u64,
    /// Waves run.
    pub waves: u64,
}

/// Why a dispatch failed, with everything a user needs to find the bug.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutionError {
    /// A memory access outside what the dispatch may touch.
    #[error("kernel {kernel}: memory fault at pc {pc:#x} (lane {lane}{}, instruction `{instruction}`): {violation}", of_wave(wave))]
    MemoryFault {
        /// Kernel name.
        kernel: String,
        /// Program counter of the faulting instruction.
        pc: u64,
        /// The lane (0-31) of `wave` that made the access.
        lane: u32,
        /// The wave, when the executor knows it.
        wave: Option<WaveId>,
        /// The instruction, disassembled.
        instruction: String,
        /// The access and the allocation it hit or came near.
        violation: Box<AccessViolation>,
    },
    /// An access past the work-group's LDS or the work-item's scratch (private memory).
    #[error("kernel {kernel}: {segment} fault at pc {pc:#x} (lane {lane}{}, instruction `{instruction}`): offset {offset:#x} is past the {size} bytes of the {}", of_wave(wave), segment.owner())]
    SegmentFault {
        /// Kernel name.
        kernel: String,
        /// Program counter of the faulting instruction.
        pc: u64,
        /// The lane (0-31) of `wave` that made the access.
        lane: u32,
        /// The wave, when the executor knows it.
        wave: Option<WaveId>,
        /// The instruction, disassembled.
        instruction: String,
        /// LDS or scratch.
        segment: WaveSegment,
        /// The address the instruction used (a flat address, or the segment offset).
        address: u64,
        /// The offset in the segment (per work-item for scratch).
        offset: u64,
        /// The segment's size (per work-item for scratch).
        size: u64,
    },
    /// Any other failure the executor reports (trap, unsupported instruction, timeout).
    #[error("kernel {kernel}: {message}")]
    Kernel {
        /// Kernel name.
        kernel: String,
        /// What happened, with the PC and instruction when there is one.
        message: String,
    },
    /// The packet could not be run at all.
    #[error("{0}")]
    Packet(String),
    /// The dispatch ran past the device's watchdog (`ROCLOAD_WATCHDOG`,
    /// `rocload_set_watchdog`) and was stopped: a kernel that never ends, or spin-waits that
    /// cannot make progress.
    #[error("kernel {kernel}: stopped by the watchdog after {elapsed:?}, {workgroups_done} of {workgroups} work-groups done{}", .wave.as_ref().map(|w| format!("; {w}")).unwrap_or_default())]
    Timeout {
        /// Kernel name.
        kernel: String,
        /// How long it ran.
        elapsed: Duration,
        /// Work-groups completed.
        workgroups_done: u64,
        /// Work-groups in the grid.
        workgroups: u64,
        /// A wave that had not finished, and where it was.
        wave: Option<WaveSite>,
    },
    /// What ran the dispatch failed (a panic in the executor: a bug, never the kernel's
    /// doing); the dispatch is over and the queue goes on.
    #[error("{what}: internal error: {detail}")]
    Internal {
        /// The packet (e.g. the kernel's name).
        what: String,
        /// What the failure said.
        detail: String,
    },
    /// The device could not give the dispatch the resources it needs (its scratch); the
    /// dispatch did not run. ROCr reports this as `HSA_STATUS_ERROR_OUT_OF_RESOURCES`.
    #[error("kernel {kernel}: {error}")]
    Resources {
        /// Kernel name.
        kernel: String,
        /// What it needed.
        error: Box<DeviceError>,
    },
    /// The device's runtime reported the queue failed (ROCr's queue error callback or a GPU
    /// memory fault event): the status, what it means, and the packet that was in flight.
    #[error("{what}: the queue failed with {status_name} ({status:#x}): {message}")]
    Queue {
        /// The packet (e.g. the kernel's name).
        what: String,
        /// The runtime's status (`hsa_status_t`).
        status: u32,
        /// Its name, e.g. `HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION`.
        status_name: String,
        /// What it means, and the faulting address when the runtime gave one.
        message: String,
    },
}

impl ExecutionError {
    /// The report printed on stderr when a dispatch fails (once per failure). Memory faults
    /// start with the line ROCr prints for a GPU memory fault ("Memory access fault by GPU
    /// node-N (Agent handle: 0x...) on address 0x.... Reason: ...."), for GPU node `node` and
    /// agent handle `agent`; then, for every failure, rocload's details (kernel, PC,
    /// instruction, lane and wave, address, and the allocation it hit or came near).
    pub fn report(&self, node: u32, agent: u64) -> String {
        let rocr = |address: u64, reason: &str| {
            format!("Memory access fault by GPU node-{node} (Agent handle: {agent:#x}) on address {address:#x}. Reason: {reason}.\n")
        };
        let first = match self {
            ExecutionError::MemoryFault { violation, .. } => rocr(
                violation.address,
                match violation.reason {
                    memory::ViolationReason::ReadOnly(_) => "Write access to a read-only page",
                    _ => "Page not present or supervisor privilege",
                },
            ),
            ExecutionError::SegmentFault {
                segment, address, ..
            } => rocr(
                *address,
                match segment {
                    WaveSegment::Lds => "LDS access past the work-group's allocation",
                    WaveSegment::Scratch => "Scratch access past the work-item's allocation",
                },
            ),
            _ => String::new(),
        };
        format!("{first}rocload: {self}\n")
    }
}

/// The memory a [`ExecutionError::SegmentFault`] ran past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaveSegment {
    /// The work-group's LDS (group segment).
    Lds,
    /// The work-item's scratch (private segment).
    Scratch,
}

impl WaveSegment {
    fn owner(self) -> &'static str {
        match self {
            WaveSegment::Lds => "work-group's LDS",
            WaveSegment::Scratch => "work-item's scratch",
        }
    }
}

impl fmt::Display for WaveSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WaveSegment::Lds => "LDS",
            WaveSegment::Scratch => "scratch",
        })
    }
}

fn of_wave(wave: &Option<WaveId>) -> String {
    wave.map(|w| format!(" of {w}")).unwrap_or_default()
}

/// Where one wave of a dispatch was: which wave, its PC and instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaveSite {
    /// The wave.
    pub wave: WaveId,
    /// Its program counter.
    pub pc: u64,
    /// The instruction there, disassembled (empty if it could not be decoded).
    pub instruction: String,
}

impl fmt::Display for WaveSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} was at pc {:#x}", self.wave, self.pc)?;
        if !self.instruction.is_empty() {
            write!(f, " `{}`", self.instruction)?;
        }
        Ok(())
    }
}

/// A queue that takes AQL packets in order.
pub trait Queue: Send + Sync + fmt::Debug {
    /// Submits a packet (64 bytes with an INVALID header; `header_word` is published last, as
    /// one release store) and what must outlive it. `label` names it in reports (the kernel's
    /// name). `on_complete` runs once the packet is done.
    ///
    /// # Errors
    /// [`DeviceError::Queue`] when the queue is shut down.
    fn submit(
        &self,
        packet: [u8; aql::PACKET_SIZE],
        header_word: u32,
        label: String,
        keep_alive: KeepAlive,
        on_complete: Box<dyn FnOnce(Completion) + Send>,
    ) -> Result<(), DeviceError>;

    /// Submits work the host does in queue order (a copy, a fill, a host callback, an event's
    /// timestamp): it runs after every packet submitted before it and before every packet
    /// submitted after it. `completion_signal` (0: none) is decremented when it is done;
    /// `keep_alive` (the completion signal itself, among others) lives until then.
    ///
    /// # Errors
    /// [`DeviceError::Queue`] when the queue is shut down.
    fn submit_host_work(
        &self,
        work: HostWork,
        completion_signal: u64,
        keep_alive: KeepAlive,
        on_complete: Box<dyn FnOnce(Completion) + Send>,
    ) -> Result<(), DeviceError>;

    /// Address of the `hsa_queue_t` (what `hidden_queue_ptr` and the queue-pointer SGPRs hold).
    fn address(&self) -> u64;

    /// Restricts the queue's dispatches to the compute units whose bits are set in `mask`
    /// (32 per word, CU 0 in bit 0 of word 0), as `hsa_amd_queue_cu_set_mask` does; the caller
    /// has clipped the mask to the device's CUs and refused an empty one.
    ///
    /// # Errors
    /// The backend's refusal.
    fn set_cu_mask(&self, mask: &[u32]) -> Result<(), DeviceError>;
}

/// Serves one hostcall buffer (answers every packet on its ready stack); returns how many.
pub type HostcallHandler = Arc<dyn Fn() -> usize + Send + Sync>;

/// Work the host does in queue order; an error fails the step like a faulting kernel.
pub type HostWork = Box<dyn FnOnce() -> Result<(), DeviceError> + Send>;

/// A signal a packet can name as its completion signal, or wait on in a barrier.
#[derive(Debug, Clone)]
pub struct SignalHandle {
    /// The value packets carry (`hsa_signal_t.handle`).
    pub handle: u64,
    /// The signal itself, for the host to wait on.
    pub signal: Arc<Signal>,
}

/// An agent that can run kernels: memory, copies, queues and signals.
pub trait Device: Agent {
    /// Every range of guest memory the device knows.
    fn allocations(&self) -> &AllocationTable;

    /// Allocates `size` zeroed bytes of `kind`, aligned to at least 256 bytes.
    ///
    /// # Errors
    /// [`DeviceError::OutOfMemory`].
    fn allocate(&self, size: u64, kind: MemoryKind) -> Result<Allocation, DeviceError>;

    /// Frees the allocation starting at `base`: kernels cannot reach it once this returns;
    /// where kernels run in the process, its bytes go back to the host only after the
    /// dispatches running at the free have ended ([`epoch`]).
    ///
    /// # Errors
    /// [`DeviceError::InvalidAddress`] for anything but the start of a live allocation made by
    /// [`allocate`](Self::allocate).
    fn free(&self, base: u64) -> Result<Allocation, DeviceError>;

    /// Records the caller's host memory so kernels may use it (`hipHostRegister`).
    ///
    /// # Errors
    /// [`DeviceError::InvalidAddress`] when it overlaps memory already known.
    fn register_host(&self, base: u64, size: u64) -> Result<Allocation, DeviceError>;

    /// Forgets host memory recorded by [`register_host`](Self::register_host); returns only
    /// once no running dispatch can still touch it (the caller may unmap it then).
    ///
    /// # Errors
    /// [`DeviceError::InvalidAddress`].
    fn unregister_host(&self, base: u64) -> Result<(), DeviceError>;

    /// The address kernels and copy engines of this device use for the byte at `host` of
    /// memory recorded by [`register_host`](Self::register_host) (`hipHostGetDevicePointer`):
    /// the host address unless the device maps host memory elsewhere (ROCr on a discrete GPU
    /// gives locked memory an address of the GPU's own).
    fn registered_device_address(&self, host: u64) -> u64 {
        host
    }

    /// Copies `len` bytes. Each side is either in an allocation of this device (checked:
    /// the whole range must lie inside) or host memory the caller vouches for.
    ///
    /// # Errors
    /// [`DeviceError::Access`] when a device-side range runs outside its allocation.
    ///
    /// # Safety
    /// Host-side ranges (addresses in no allocation of this device) must be valid for the
    /// access, as for `memcpy`.
    unsafe fn copy(&self, dst: u64, src: u64, len: u64) -> Result<(), DeviceError>;

    /// Fills `len` bytes at `dst` with the `width`-byte little-endian `pattern` (1, 2 or 4).
    ///
    /// # Errors
    /// As [`copy`](Self::copy).
    ///
    /// # Safety
    /// As [`copy`](Self::copy).
    unsafe fn fill(&self, dst: u64, pattern: u32, width: u8, len: u64) -> Result<(), DeviceError>;

    /// A new queue.
    ///
    /// # Errors
    /// [`DeviceError`] when the backend cannot make one.
    fn create_queue(&self) -> Result<Arc<dyn Queue>, DeviceError>;

    /// A new signal holding `initial`.
    ///
    /// # Errors
    /// [`DeviceError`] when the backend's runtime cannot make one.
    fn create_signal(&self, initial: i64) -> Result<SignalHandle, DeviceError>;

    /// The high 32 bits of the private and shared apertures kernels see (`src_private_base`,
    /// `src_shared_base`), for the hidden arguments of code object v5.
    fn apertures(&self) -> (u32, u32);

    /// What the device is and has: the one source of every API's answers about it.
    fn properties(&self) -> &DeviceProperties;

    /// Device memory now, free and total.
    fn memory_info(&self) -> MemoryInfo;

    /// Whether the device can execute kernels of its ISA at all.
    ///
    /// # Errors
    /// [`DeviceError::Unsupported`] saying why (the software agent of a processor whose ISA
    /// no emulator implements).
    fn can_execute(&self) -> Result<(), DeviceError> {
        Ok(())
    }

    /// Host threads (software agent) or compute units (GPU) that run work-groups in parallel.
    fn compute_units(&self) -> u32 {
        self.properties().compute_units
    }

    /// Sets the longest a dispatch that starts from now on may run before it is stopped with
    /// [`ExecutionError::Timeout`] (`None`: no limit).
    ///
    /// # Errors
    /// [`DeviceError::Unsupported`] where kernels run on hardware that has no such watchdog.
    fn set_watchdog(&self, timeout: Option<Duration>) -> Result<(), DeviceError> {
        let _ = timeout;
        Err(DeviceError::Unsupported {
            op: "watchdog",
            backend: match self.backend() {
                crate::loader::BackendKind::Soft => "soft",
                crate::loader::BackendKind::Hsa => "hsa",
            },
            reason: "kernels run on the GPU, which stops none".into(),
        })
    }

    /// Whether a launch whose work-items need `per_workitem` bytes of scratch, in work-groups
    /// of `workgroup_items`, can be given that memory. Backends whose runtime decides later
    /// (ROCr) accept everything here.
    ///
    /// # Errors
    /// [`DeviceError::ScratchTooLarge`].
    fn check_scratch(&self, per_workitem: u32, workgroup_items: u64) -> Result<(), DeviceError> {
        let _ = (per_workitem, workgroup_items);
        Ok(())
    }

    /// The device's virtual memory management (`hipMemAddressReserve`, `hipMemCreate`,
    /// `hipMemMap`, `hipMemSetAccess` and the rest).
    ///
    /// # Errors
    /// [`DeviceError::Unsupported`] saying why where the backend has none.
    fn virtual_memory(&self) -> Result<Arc<dyn vmm::VirtualMemory>, DeviceError> {
        Err(unsupported(
            self,
            "virtual memory management",
            "this backend has no virtual memory API",
        ))
    }

    /// An IPC handle another process opens to reach the device allocation holding `address`
    /// (`hipIpcGetMemHandle`): the whole allocation, with `address`'s offset in it.
    ///
    /// # Errors
    /// [`DeviceError::InvalidAddress`] for an address in no device allocation of this device;
    /// [`DeviceError::Unsupported`] where the backend cannot share memory.
    fn ipc_export(&self, address: u64) -> Result<vmm::IpcHandle, DeviceError> {
        let _ = address;
        Err(unsupported(
            self,
            "IPC memory handles",
            "this backend cannot share memory with other processes",
        ))
    }

    /// Maps the memory `handle` names into this process for this device
    /// (`hipIpcOpenMemHandle`) and returns the address of the pointer the handle was made
    /// for. Opening a handle that is already open returns the same address (and counts).
    ///
    /// # Errors
    /// [`DeviceError::Vmm`] for a malformed handle or one of another backend; the backend's
    /// error when the memory cannot be reached (the process exited, the allocation is gone).
    fn ipc_open(&self, handle: &vmm::IpcHandle) -> Result<u64, DeviceError> {
        let _ = handle;
        Err(unsupported(
            self,
            "IPC memory handles",
            "this backend cannot share memory with other processes",
        ))
    }

    /// Undoes one [`ipc_open`](Self::ipc_open) of the memory at `address`
    /// (`hipIpcCloseMemHandle`); the last one unmaps it once no running dispatch can touch it.
    ///
    /// # Errors
    /// [`DeviceError::InvalidAddress`] for an address no open IPC handle returned.
    fn ipc_close(&self, address: u64) -> Result<(), DeviceError> {
        Err(DeviceError::InvalidAddress {
            address,
            detail: Some("not memory opened from an IPC handle".into()),
        })
    }

    /// Memory another API exported as a file descriptor (`hipImportExternalMemory` with an
    /// opaque descriptor), of at least `size` bytes; the caller keeps `fd`.
    ///
    /// # Errors
    /// [`DeviceError::Unsupported`] where the backend cannot import such memory; the
    /// backend's refusal of a descriptor that is not memory it can map, or is smaller than
    /// `size`.
    fn import_external(
        &self,
        fd: BorrowedFd<'_>,
        size: u64,
    ) -> Result<Arc<dyn vmm::PhysicalMemory>, DeviceError> {
        let _ = (fd, size);
        Err(unsupported(
            self,
            "external memory",
            "this backend cannot map memory of other APIs",
        ))
    }

    /// Maps `[offset, offset + size)` of memory [`import_external`](Self::import_external)
    /// made for this device and enters exactly those bytes in its allocation table
    /// (`hipExternalMemoryGetMappedBuffer`); returns their address. Each call is a mapping of
    /// its own, undone by [`unmap_external`](Self::unmap_external).
    ///
    /// # Errors
    /// [`DeviceError::Vmm`] for a range past the memory's end or memory another backend
    /// imported; system errors.
    fn map_external(
        &self,
        memory: &Arc<dyn vmm::PhysicalMemory>,
        offset: u64,
        size: u64,
    ) -> Result<u64, DeviceError> {
        let _ = (memory, offset, size);
        Err(unsupported(
            self,
            "external memory",
            "this backend cannot map memory of other APIs",
        ))
    }

    /// Undoes the [`map_external`](Self::map_external) that returned `address` (`hipFree` of
    /// a mapped buffer); the range leaves the table at once and is unmapped once no running
    /// dispatch can touch it.
    ///
    /// # Errors
    /// [`DeviceError::InvalidAddress`] for an address no mapping of external memory returned.
    fn unmap_external(&self, address: u64) -> Result<(), DeviceError> {
        Err(DeviceError::InvalidAddress {
            address,
            detail: Some("not a buffer mapped from external memory".into()),
        })
    }

    /// The image extension of the device's runtime, where that runtime makes image and sampler
    /// descriptors (ROCr); `None` where rocload builds them itself in the layout the software
    /// agent reads ([`image`]).
    fn image_api(&self) -> Option<&dyn image::ImageApi> {
        None
    }

    /// The entry of the device's border-colour table holding the four channel dwords `rgba`
    /// (added when new): what a sampler descriptor names for a border colour other than the
    /// three constants (`BORDER_COLOR_PTR` with `BORDER_COLOR_TYPE` 3).
    ///
    /// # Errors
    /// [`DeviceError::Unsupported`] where the backend has no table a program may fill (ROCr
    /// sets the hardware's register itself and offers no API for it), or when the table's
    /// entries are all in use.
    fn border_color(&self, rgba: [u32; 4]) -> Result<u32, DeviceError> {
        let _ = rgba;
        Err(unsupported(
            self,
            "border colours other than transparent black, opaque black and opaque white",
            "this backend has no border-colour table a program may fill",
        ))
    }

    /// Has `handler` serve the hostcall buffer whose doorbell signal carries `event_id`
    /// whenever a kernel rings it (device `printf`).
    ///
    /// # Errors
    /// [`DeviceError::Unsupported`] where the backend cannot serve hostcalls (a kernel that
    /// needs one is then refused at launch instead of waiting forever).
    fn set_hostcall_handler(
        &self,
        event_id: u32,
        handler: HostcallHandler,
    ) -> Result<(), DeviceError> {
        let _ = (event_id, handler);
        Err(DeviceError::Unsupported {
            op: "hostcall",
            backend: match self.backend() {
                crate::loader::BackendKind::Soft => "soft",
                crate::loader::BackendKind::Hsa => "hsa",
            },
            reason: "no host thread serves hostcall buffers on this backend yet".into(),
        })
    }
}
