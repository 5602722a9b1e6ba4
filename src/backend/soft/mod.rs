//! The software agent: an in-process agent whose device memory is host memory, with a
//! configurable ISA, so every selection, layout, relocation, copy and launch path runs without a
//! GPU. Addresses it hands out are real host addresses, recorded in its allocation table so every
//! kernel access and copy is checked.
//!
//! - loading: executables whose images are device allocations (kind `CodeObject`);
//! - [`memory`]: device, pinned and managed allocations, with a quarantine for freed blocks,
//!   released only after the dispatches that could touch them ended;
//! - [`queue`]: AQL queues with a packet processor thread;
//! - [`exec`]: the boundary to the kernel executor;
//! - [`emu`]: the executor, the gfx1030 emulator over the agent's allocation table.

pub mod emu;
pub mod exec;
mod external;
mod memory;
pub mod queue;
mod slab;
pub mod vmm;

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};

use crate::device::epoch::Epochs;
use crate::device::{
    Allocation, AllocationTable, Device, DeviceError, DeviceProperties, HostFacts, HostcallHandler,
    MemoryInfo, MemoryKind, Perms, Queue, Segment, Signal, SignalHandle,
};
use crate::loader::{
    relocate, Agent, BackendKind, ExecutableBackend, LoadError, Module, Placement,
};
use crate::target::AgentIsa;

pub use emu::{EmulatorExecutor, EmulatorOptions, TableMemory};
pub use exec::{builtin_executor, Job, KernelExecutor};
pub use memory::{ALIGNMENT, QUARANTINE_BYTES};
pub use queue::{QueueErrorHandler, SoftQueue};

/// The software agent's ISA when the configuration names none.
pub const DEFAULT_SOFT_ISA: &str = "gfx1030";

/// Where flat addresses reach a work-group's LDS on the software agent (`src_shared_base`):
/// above every user-space host address, as on AMD GPUs.
pub const SHARED_APERTURE: u64 = 1 << 48;
/// Where flat addresses reach a work-item's scratch (`src_private_base`).
pub const PRIVATE_APERTURE: u64 = 2 << 48;

/// What every clone of one software agent shares: its memory, signals, hostcall buffers and
/// executor.
pub(crate) struct State {
    pub(crate) table: AllocationTable,
    pub(crate) memory: memory::SoftMemory,
    pub(crate) signals: Arc<SignalTable>,
    pub(crate) hostcall: HostcallHandlers,
    pub(crate) executor: Arc<dyn KernelExecutor>,
    pub(crate) properties: DeviceProperties,
    /// The processor the agent reports (`gfx1030`): what its executor is asked to run.
    pub(crate) processor: &'static str,
    /// The kernel descriptors of every loaded code object, copied when it was loaded: a
    /// dispatch runs only a kernel the loader loaded, as it was loaded.
    pub(crate) descriptors: RwLock<HashMap<u64, [u8; 64]>>,
    /// Memory this agent opened from IPC handles.
    pub(crate) ipc: Mutex<vmm::IpcOpened>,
    /// Buffers this agent mapped from external memory.
    pub(crate) external: Mutex<external::ExternalMapped>,
    /// The border-colour table samplers name (gfx10's `TA_BC_BASE_ADDR`), made at first use.
    pub(crate) border_colors: Mutex<BorderColors>,
}

/// Entries of a border-colour table: 16 bytes each, in read-only device memory.
#[derive(Debug, Default)]
pub(crate) struct BorderColors {
    /// The table's address; 0 until the first entry.
    pub(crate) table: u64,
    entries: Vec<[u32; 4]>,
}

/// Entries a border-colour table holds (`BORDER_COLOR_PTR` has 12 bits).
const BORDER_COLORS: usize = 4096;

/// The software agent's clock in kHz: the emulator's `s_memtime` and `s_memrealtime` (what
/// `clock64()` and `wall_clock64()` read) count nanoseconds, so kernels that turn cycles into
/// time with `clockRate` (`clock64() - start <= seconds * clockRate * 1000`) wait as long as
/// they mean to.
pub const SOFT_CLOCK_KHZ: u32 = 1_000_000;

/// What the software agent reports about itself: a 1 GHz clock ([`SOFT_CLOCK_KHZ`]), the
/// host's caches, `device_memory`
/// bytes of device memory (host memory, see [`EmulatorOptions::device_memory`]), one compute
/// unit per host thread, and the shape of an RDNA2 compute unit (2 SIMDs of 16 waves, 64 KiB of
/// LDS) that the occupancy model assumes.
fn soft_properties(device_memory: u64) -> DeviceProperties {
    let host = HostFacts::get();
    DeviceProperties {
        name: "rocload software agent".to_owned(),
        compute_units: host.cpus,
        simds_per_cu: 2,
        max_waves_per_cu: 32,
        clock_khz: SOFT_CLOCK_KHZ,
        memory_clock_khz: host.clock_khz,
        memory_bus_width: 64,
        caches: host.caches,
        cacheline: 128,
        total_memory: device_memory,
        lds_per_workgroup: 64 * 1024,
        lds_per_cu: 64 * 1024,
        max_workgroup_size: 1024,
        integrated: true,
    }
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("executor", &self.executor)
            .finish_non_exhaustive()
    }
}

/// Called with M0 whenever a wave sends `s_sendmsg sendmsg(MSG_INTERRUPT)` on the agent: the
/// software HSA library's interrupt signals (their event mailboxes) listen this way, as the
/// kernel driver's event interrupts serve ROCr's.
pub type InterruptListener = Arc<dyn Fn(u32) + Send + Sync>;

/// The hostcall buffers registered with an agent, by the event id their doorbell carries, and
/// who else listens to the agent's interrupts.
#[derive(Default)]
pub struct HostcallHandlers {
    buffers: RwLock<Vec<(u32, HostcallHandler)>>,
    listeners: RwLock<Vec<InterruptListener>>,
}

impl std::fmt::Debug for HostcallHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<u32> = self.buffers.read().iter().map(|(id, _)| *id).collect();
        f.debug_struct("HostcallHandlers")
            .field("buffers", &ids)
            .field("listeners", &self.listeners.read().len())
            .finish()
    }
}

/// Most interrupt listeners one agent keeps (the software HSA library adds one per runtime).
const MAX_INTERRUPT_LISTENERS: usize = 64;

impl HostcallHandlers {
    /// Serves the buffer whose doorbell carries `event` (`None`: every buffer); returns the
    /// packets served.
    pub fn serve(&self, event: Option<u32>) -> usize {
        let handlers = self.buffers.read();
        handlers
            .iter()
            .filter(|(id, _)| event.is_none_or(|e| e == *id))
            .map(|(_, h)| h())
            .sum()
    }

    /// A wave's interrupt with its M0: every listener hears it, then the buffer whose
    /// doorbell carries M0's low byte is served; returns the packets served.
    pub fn interrupt(&self, m0: u32) -> usize {
        let listeners: Vec<InterruptListener> = self.listeners.read().clone();
        for l in listeners {
            l(m0);
        }
        self.serve(Some(m0 & 0xff))
    }

    fn add(&self, event: u32, handler: HostcallHandler) {
        let mut handlers = self.buffers.write();
        handlers.retain(|(id, _)| *id != event);
        handlers.push((event, handler));
    }

    fn listen(&self, listener: InterruptListener) -> Result<(), DeviceError> {
        let mut listeners = self.listeners.write();
        if listeners.len() >= MAX_INTERRUPT_LISTENERS {
            return Err(DeviceError::Unsupported {
                op: "listening to interrupts",
                backend: "soft",
                reason: format!("more than {MAX_INTERRUPT_LISTENERS} listeners on one agent"),
            });
        }
        listeners.push(listener);
        Ok(())
    }
}

/// Signals by handle, so packets can name them. Entries go away with their last handle.
/// Agents that share one (the software HSA library's agents) see each other's signals, as
/// HSA signals are visible to every agent.
#[derive(Debug, Default)]
pub struct SignalTable {
    signals: Mutex<(u64, HashMap<u64, Weak<Signal>>)>,
}

impl SignalTable {
    /// An empty table.
    pub fn new() -> Self {
        SignalTable::default()
    }

    /// A new signal holding `initial`, with a fresh non-zero handle.
    pub fn create(&self, initial: i64) -> SignalHandle {
        let signal = Arc::new(Signal::new(initial));
        let mut guard = self.signals.lock();
        let (next, map) = &mut *guard;
        *next += 1;
        let handle = *next;
        if map.len() >= 64 && map.len().is_power_of_two() {
            map.retain(|_, w| w.strong_count() > 0);
        }
        map.insert(handle, Arc::downgrade(&signal));
        SignalHandle { handle, signal }
    }

    /// A new signal holding `initial` whose handle is the address of its `amd_signal_t`
    /// layout ([`Signal::abi_address`]), as ROCr's handles are: device code may use it (the
    /// software HSA library's signals; the caller makes the 64 bytes reachable by agents).
    pub fn create_addressed(&self, initial: i64) -> SignalHandle {
        self.insert_addressed(Arc::new(Signal::new(initial)))
    }

    fn insert_addressed(&self, signal: Arc<Signal>) -> SignalHandle {
        let handle = signal.abi_address();
        let mut guard = self.signals.lock();
        let (_, map) = &mut *guard;
        if map.len() >= 64 && map.len().is_power_of_two() {
            map.retain(|_, w| w.strong_count() > 0);
        }
        map.insert(handle, Arc::downgrade(&signal));
        SignalHandle { handle, signal }
    }

    /// Enters `signal` under `handle`, an address the caller chose (the software HSA library's
    /// IPC signals: the `amd_signal_t` in memory shared with other processes, which `signal`'s
    /// backend reads and writes); `None` when a live signal has that handle already.
    pub fn insert_at(&self, handle: u64, signal: Signal) -> Option<SignalHandle> {
        let mut guard = self.signals.lock();
        let (_, map) = &mut *guard;
        if map.get(&handle).is_some_and(|w| w.strong_count() > 0) {
            return None;
        }
        if map.len() >= 64 && map.len().is_power_of_two() {
            map.retain(|_, w| w.strong_count() > 0);
        }
        let signal = Arc::new(signal);
        map.insert(handle, Arc::downgrade(&signal));
        Some(SignalHandle { handle, signal })
    }

    /// As [`create_addressed`](Self::create_addressed), for a signal whose device-side updates
    /// post `event_id` to the mailbox at `mailbox` ([`Signal::with_mailbox`]).
    pub fn create_addressed_with_mailbox(
        &self,
        initial: i64,
        mailbox: u64,
        event_id: u32,
    ) -> SignalHandle {
        self.insert_addressed(Arc::new(Signal::with_mailbox(initial, mailbox, event_id)))
    }

    /// The live signal with `handle`.
    pub fn get(&self, handle: u64) -> Option<Arc<Signal>> {
        self.signals.lock().1.get(&handle)?.upgrade()
    }
}

/// The in-process software agent. Clones share one device (memory, queues, executor).
#[derive(Debug, Clone)]
pub struct SoftAgent {
    isa: AgentIsa,
    state: Arc<State>,
}

impl SoftAgent {
    /// An agent reporting `isa`, with its own memory and signals, running kernels on its own
    /// emulator with default options.
    pub fn new(isa: AgentIsa) -> Self {
        SoftAgent::with_options(
            isa,
            Arc::new(SignalTable::new()),
            &EmulatorOptions::default(),
        )
    }

    /// An agent reporting `isa` with its own memory, whose signals live in `signals` (shared
    /// with other agents).
    pub fn with_signals(isa: AgentIsa, signals: Arc<SignalTable>) -> Self {
        SoftAgent::with_options(isa, signals, &EmulatorOptions::default())
    }

    /// An agent whose emulator runs with `options`.
    pub fn with_options(
        isa: AgentIsa,
        signals: Arc<SignalTable>,
        options: &EmulatorOptions,
    ) -> Self {
        SoftAgent::build(
            isa,
            signals,
            builtin_executor(options),
            Epochs::global(),
            options.device_memory,
        )
    }

    /// An agent whose dispatches run on `executor`.
    pub fn with_executor(
        isa: AgentIsa,
        signals: Arc<SignalTable>,
        executor: Arc<dyn KernelExecutor>,
    ) -> Self {
        SoftAgent::with_epochs(isa, signals, executor, Epochs::global())
    }

    /// An agent whose frees wait for the dispatches `epochs` tracks (by default the
    /// process-wide tracker, shared by every agent, since pinned and managed memory is in
    /// every agent's table).
    pub fn with_epochs(
        isa: AgentIsa,
        signals: Arc<SignalTable>,
        executor: Arc<dyn KernelExecutor>,
        epochs: Arc<Epochs>,
    ) -> Self {
        SoftAgent::build(isa, signals, executor, epochs, emu::default_device_memory())
    }

    fn build(
        isa: AgentIsa,
        signals: Arc<SignalTable>,
        executor: Arc<dyn KernelExecutor>,
        epochs: Arc<Epochs>,
        device_memory: u64,
    ) -> Self {
        SoftAgent {
            isa,
            state: Arc::new(State {
                table: AllocationTable::new(),
                memory: memory::SoftMemory::new(epochs, device_memory),
                signals,
                hostcall: HostcallHandlers::default(),
                executor,
                properties: soft_properties(device_memory),
                processor: isa.processor().name,
                descriptors: RwLock::new(HashMap::new()),
                ipc: Mutex::new(vmm::IpcOpened::default()),
                external: Mutex::new(external::ExternalMapped::default()),
                border_colors: Mutex::new(BorderColors::default()),
            }),
        }
    }

    /// The table the agent's signals live in.
    pub fn signals(&self) -> &Arc<SignalTable> {
        &self.state.signals
    }

    /// A queue of `packets` slots (a power of two) with ROCr's failure semantics: a failed
    /// packet runs `on_error`, leaves its completion signal unchanged and suspends the queue
    /// (nothing after it runs), as ROCr's queues do. The software HSA library's queues.
    ///
    /// # Errors
    /// [`DeviceError`] for a size that is not a power of two, or when memory or the processor
    /// thread cannot be had.
    pub fn create_rocr_queue(
        &self,
        packets: u32,
        on_error: QueueErrorHandler,
    ) -> Result<Arc<SoftQueue>, DeviceError> {
        Ok(Arc::new(SoftQueue::with_options(
            self.state.clone(),
            packets,
            Some(on_error),
        )?))
    }

    /// System memory owned by the agent's memory but recorded in no table: the software HSA
    /// library's system pools (it records a block with the agents allowed to reach it). Zeroed,
    /// aligned to `align` (at least [`ALIGNMENT`]).
    ///
    /// # Errors
    /// [`DeviceError::OutOfMemory`].
    pub fn allocate_system(&self, size: u64, align: usize) -> Result<u64, DeviceError> {
        self.state.memory.allocate_system(size, align)
    }

    /// Frees a block of [`allocate_system`](Self::allocate_system), which the caller has
    /// removed from every table that recorded it: released once the dispatches running now
    /// (on any agent sharing this one's dispatch tracker) have ended.
    ///
    /// # Errors
    /// [`DeviceError::InvalidAddress`] when `base` is not such a block.
    pub fn free_system(&self, base: u64) -> Result<(), DeviceError> {
        self.state.memory.free_system(base)
    }

    /// The tracker of this agent's dispatches that frees wait for: a host access to guest
    /// memory made outside the agent's queues (the software HSA library's copies and fills)
    /// holds [`Epochs::begin`] from its check to its last byte.
    pub fn epochs(&self) -> &Arc<Epochs> {
        self.state.memory.epochs()
    }

    /// Waits until every dispatch running now (on any agent sharing this one's dispatch
    /// tracker) has ended: after a range was removed from the tables, nothing touches it any
    /// more once this returns. Not to be called from a dispatch.
    pub fn wait_for_running_dispatches(&self) {
        let epochs = self.state.memory.epochs();
        epochs.wait_for(epochs.mark());
    }

    /// Shared handle, as agents are passed around by the loader.
    pub fn shared(self) -> Arc<dyn Agent> {
        Arc::new(self)
    }

    /// Shared handle as a device (memory, queues, launches).
    pub fn device(self) -> Arc<dyn Device> {
        Arc::new(self)
    }
}

impl Agent for SoftAgent {
    fn isa(&self) -> &AgentIsa {
        &self.isa
    }

    fn backend(&self) -> BackendKind {
        BackendKind::Soft
    }

    fn new_executable(&self) -> Result<Box<dyn ExecutableBackend>, LoadError> {
        Ok(Box::new(SoftExecutable {
            state: self.state.clone(),
            images: Vec::new(),
            frozen: false,
            published: Vec::new(),
        }))
    }
}

impl SoftAgent {
    /// Calls `listener` with M0 each time a wave of this agent sends an interrupt
    /// (`s_sendmsg sendmsg(MSG_INTERRUPT)`), before the hostcall buffer it names is served:
    /// how the software HSA library's interrupt signals learn that device code posted to
    /// their event mailboxes.
    ///
    /// # Errors
    /// [`DeviceError::Unsupported`] past 64 listeners on one agent.
    pub fn listen_to_interrupts(&self, listener: InterruptListener) -> Result<(), DeviceError> {
        self.state.hostcall.listen(listener)
    }
}

impl Device for SoftAgent {
    fn allocations(&self) -> &AllocationTable {
        &self.state.table
    }

    fn border_color(&self, rgba: [u32; 4]) -> Result<u32, DeviceError> {
        let mut colors = self.state.border_colors.lock();
        if let Some(i) = colors.entries.iter().position(|c| *c == rgba) {
            return Ok(i as u32);
        }
        if colors.entries.len() >= BORDER_COLORS {
            return Err(DeviceError::Unsupported {
                op: "another border colour",
                backend: "soft",
                reason: format!("the border-colour table's {BORDER_COLORS} entries are in use"),
            });
        }
        if colors.table == 0 {
            // Kernels read the table (through the memory checker) but never write it.
            let a = self.state.memory.allocate(
                &self.state.table,
                (BORDER_COLORS * 16) as u64,
                MemoryKind::Device,
                false,
            )?;
            colors.table = a.base;
        }
        let index = colors.entries.len();
        let bytes: Vec<u8> = rgba.iter().flat_map(|d| d.to_le_bytes()).collect();
        // SAFETY: the destination is 16 bytes inside the table allocated above; the source is
        // a local buffer of 16 bytes.
        unsafe { self.copy(colors.table + index as u64 * 16, bytes.as_ptr() as u64, 16) }?;
        colors.entries.push(rgba);
        tracing::debug!(index, ?rgba, table = colors.table, "border colour added");
        Ok(index as u32)
    }

    fn allocate(&self, size: u64, kind: MemoryKind) -> Result<Allocation, DeviceError> {
        let writable = !matches!(kind, MemoryKind::Kernarg | MemoryKind::Queue);
        self.state
            .memory
            .allocate(&self.state.table, size, kind, writable)
    }

    fn free(&self, base: u64) -> Result<Allocation, DeviceError> {
        // User memory goes to quarantine, so a use after free is caught; runtime-internal
        // memory (kernarg segments, hostcall buffers) is released at once. A memory pool's
        // parked block is user memory too.
        let table = &self.state.table;
        let quarantine = table
            .find(base)
            .or_else(|| table.parked(base))
            .is_some_and(|a| {
                matches!(
                    a.kind,
                    MemoryKind::Device
                        | MemoryKind::PinnedHost
                        | MemoryKind::Managed
                        | MemoryKind::Array
                )
            });
        self.state.memory.free(&self.state.table, base, quarantine)
    }

    fn register_host(&self, base: u64, size: u64) -> Result<Allocation, DeviceError> {
        self.state
            .table
            .insert(base, size, MemoryKind::RegisteredHost, true)
            .map_err(|e| DeviceError::InvalidAddress {
                address: base,
                detail: Some(e.to_string()),
            })
    }

    fn unregister_host(&self, base: u64) -> Result<(), DeviceError> {
        match self.state.table.find(base) {
            Some(a) if a.base == base && a.kind == MemoryKind::RegisteredHost => {
                self.state.table.remove(base, false);
                // The caller may unmap it once this returns: not while a kernel that the
                // checker let in could still be storing there.
                self.wait_for_running_dispatches();
                Ok(())
            }
            other => Err(DeviceError::InvalidAddress {
                address: base,
                detail: Some(match other {
                    Some(a) => format!("inside {a}, not registered host memory"),
                    None => "not registered".into(),
                }),
            }),
        }
    }

    unsafe fn copy(&self, dst: u64, src: u64, len: u64) -> Result<(), DeviceError> {
        if len == 0 {
            return Ok(());
        }
        // From the check to the last byte copied, a concurrent free cannot release the memory.
        let _active = self.state.memory.epochs().begin();
        self.check_side(dst, len, true)?;
        self.check_side(src, len, false)?;
        let n = usize::try_from(len).map_err(|_| DeviceError::InvalidAddress {
            address: dst,
            detail: Some(format!("{len} bytes do not fit the address space")),
        })?;
        // SAFETY: device-side ranges lie inside live allocations of this device (checked);
        // host-side ranges are valid by the caller's contract. `copy` allows overlap.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
        self.wrote(dst, len);
        Ok(())
    }

    unsafe fn fill(&self, dst: u64, pattern: u32, width: u8, len: u64) -> Result<(), DeviceError> {
        if len == 0 {
            return Ok(());
        }
        // As in `copy`.
        let _active = self.state.memory.epochs().begin();
        self.check_side(dst, len, true)?;
        let n = usize::try_from(len).map_err(|_| DeviceError::InvalidAddress {
            address: dst,
            detail: Some(format!("{len} bytes do not fit the address space")),
        })?;
        // SAFETY: as in `copy`.
        let bytes = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, n) };
        match width {
            1 => bytes.fill(pattern as u8),
            2 | 4 => {
                let p = pattern.to_le_bytes();
                for (i, b) in bytes.iter_mut().enumerate() {
                    *b = p[i % usize::from(width)];
                }
            }
            _ => {
                return Err(DeviceError::Unsupported {
                    op: "fill",
                    backend: "soft",
                    reason: format!("pattern width {width}"),
                })
            }
        }
        self.wrote(dst, len);
        Ok(())
    }

    fn create_queue(&self) -> Result<Arc<dyn Queue>, DeviceError> {
        Ok(Arc::new(queue::SoftQueue::new(self.state.clone())?))
    }

    fn create_signal(&self, initial: i64) -> Result<SignalHandle, DeviceError> {
        Ok(self.state.signals.create(initial))
    }

    fn apertures(&self) -> (u32, u32) {
        (
            (PRIVATE_APERTURE >> 32) as u32,
            (SHARED_APERTURE >> 32) as u32,
        )
    }

    fn set_hostcall_handler(
        &self,
        event_id: u32,
        handler: HostcallHandler,
    ) -> Result<(), DeviceError> {
        self.state.hostcall.add(event_id, handler);
        Ok(())
    }

    fn virtual_memory(&self) -> Result<Arc<dyn crate::device::vmm::VirtualMemory>, DeviceError> {
        Ok(Arc::new(vmm::SoftVirtualMemory::new(
            vmm::SoftAddressSpace::global(),
            self.clone(),
        )))
    }

    fn ipc_export(&self, address: u64) -> Result<crate::device::vmm::IpcHandle, DeviceError> {
        self.soft_ipc_export(address)
    }

    fn ipc_open(&self, handle: &crate::device::vmm::IpcHandle) -> Result<u64, DeviceError> {
        self.soft_ipc_open(handle)
    }

    fn ipc_close(&self, address: u64) -> Result<(), DeviceError> {
        self.soft_ipc_close(address)
    }

    fn import_external(
        &self,
        fd: std::os::fd::BorrowedFd<'_>,
        size: u64,
    ) -> Result<Arc<dyn crate::device::vmm::PhysicalMemory>, DeviceError> {
        self.soft_import_external(fd, size)
    }

    fn map_external(
        &self,
        memory: &Arc<dyn crate::device::vmm::PhysicalMemory>,
        offset: u64,
        size: u64,
    ) -> Result<u64, DeviceError> {
        self.soft_map_external(memory, offset, size)
    }

    fn unmap_external(&self, address: u64) -> Result<(), DeviceError> {
        self.soft_unmap_external(address)
    }

    fn check_scratch(&self, per_workitem: u32, workgroup_items: u64) -> Result<(), DeviceError> {
        self.state
            .executor
            .check_scratch(per_workitem, workgroup_items)
    }

    fn set_watchdog(&self, timeout: Option<std::time::Duration>) -> Result<(), DeviceError> {
        self.state.executor.set_watchdog(timeout)
    }

    fn properties(&self) -> &DeviceProperties {
        &self.state.properties
    }

    fn can_execute(&self) -> Result<(), DeviceError> {
        if rocload_emu::executes(self.state.processor) {
            return Ok(());
        }
        Err(DeviceError::Unsupported {
            op: "kernel launch",
            backend: "soft",
            reason: format!(
                "{} code cannot run on the software agent: its emulator executes {}",
                self.state.processor,
                rocload_emu::FAMILIES
            ),
        })
    }

    /// The device memory less what its live allocations hold (device, managed, array and
    /// `hipMemCreate` memory, see `memory`): the same figure from one call to the next
    /// whatever else the host does, as a GPU's. The host gives the pages only as they are
    /// touched, so a budget above what the host has is a promise it may not keep.
    fn memory_info(&self) -> MemoryInfo {
        let budget = self.state.memory.budget();
        MemoryInfo {
            free: budget.total().saturating_sub(budget.held()),
            total: budget.total(),
        }
    }
}

impl SoftAgent {
    /// The host wrote `[dst, dst + len)`: code decoded from there is stale (kernels cannot
    /// write code; the host can, through a copy into a loaded code object).
    fn wrote(&self, dst: u64, len: u64) {
        if self
            .state
            .table
            .find(dst)
            .is_some_and(|a| a.kind == MemoryKind::CodeObject)
        {
            self.state.executor.forget_code(dst, len);
        }
    }

    /// Checks one side of a copy: an address inside an allocation of this device must have the
    /// whole range inside it; an address in no allocation is host memory (the caller's).
    fn check_side(&self, address: u64, len: u64, write: bool) -> Result<(), DeviceError> {
        let table = &self.state.table;
        match table.find(address) {
            Some(a) if a.contains(address, len) => Ok(()),
            Some(_) => Err(DeviceError::Access(table.violation(
                address,
                len,
                crate::device::AccessKind::data(write),
            ))),
            None => {
                // Host memory, unless it is a freed device allocation (a use after free).
                let v = table.violation(address, len, crate::device::AccessKind::data(write));
                match v.reason {
                    crate::device::memory::ViolationReason::Freed(_) => Err(DeviceError::Access(v)),
                    _ => Ok(()),
                }
            }
        }
    }
}

/// One loaded image: a device allocation of kind `CodeObject` that never moves.
#[derive(Debug, Clone, Copy)]
struct Image {
    base: u64,
    len: usize,
}

/// An executable on the software agent. Its images are device memory, freed with it.
#[derive(Debug)]
pub struct SoftExecutable {
    state: Arc<State>,
    images: Vec<Option<Image>>,
    frozen: bool,
    /// Host ranges published to kernels (managed variables), recorded in the agent's table
    /// while this executable lives.
    published: Vec<u64>,
}

impl SoftExecutable {
    fn slot(&mut self, index: usize) -> &mut Option<Image> {
        if self.images.len() <= index {
            self.images.resize_with(index + 1, || None);
        }
        &mut self.images[index]
    }

    /// The image's bytes, for laying out and relocating before anything runs.
    fn bytes_mut(&mut self, image: Image) -> &mut [u8] {
        // SAFETY: the image is a live allocation of `len` bytes owned by this executable (freed
        // only in Drop, which `&mut self` excludes); it is written only while loading, before
        // the executable is frozen and any kernel can see it.
        unsafe { std::slice::from_raw_parts_mut(image.base as *mut u8, image.len) }
    }
}

impl SoftExecutable {
    /// Once an image is laid out and relocated: its segments get the permissions their
    /// `p_flags` give (kernels execute only code, write only variables), and its kernel
    /// descriptors are copied for dispatches to use.
    fn protect(&mut self, image: Image, module: &Module) {
        let first = module.first_vaddr();
        let segments: Vec<Segment> = module
            .segments()
            .iter()
            .filter_map(|s| {
                Some(Segment {
                    offset: s.vaddr.checked_sub(first)?,
                    size: s.mem_size,
                    perms: Perms {
                        read: s.flags.readable(),
                        write: s.flags.writable(),
                        execute: s.flags.executable(),
                    },
                })
            })
            .collect();
        tracing::debug!(base = format_args!("{:#x}", image.base), segments = ?segments, "code object permissions");
        self.state.table.set_segments(image.base, segments);
        let bytes = self.bytes_mut(image);
        let mut snapshot = Vec::new();
        for s in module
            .symbols()
            .iter()
            .filter(|s| s.class == crate::loader::SymbolClass::Kernel)
        {
            let offset = s
                .value
                .checked_sub(first)
                .and_then(|o| usize::try_from(o).ok());
            let Some(kd) = offset.and_then(|o| bytes.get(o..o.checked_add(64)?)) else {
                continue;
            };
            let mut descriptor = [0u8; 64];
            descriptor.copy_from_slice(kd);
            snapshot.push((image.base + offset.unwrap_or(0) as u64, descriptor));
        }
        self.state.descriptors.write().extend(snapshot);
    }
}

impl Drop for SoftExecutable {
    fn drop(&mut self) {
        for &base in &self.published {
            self.state.table.remove(base, false);
        }
        self.state.descriptors.write().retain(|&at, _| {
            !self
                .images
                .iter()
                .flatten()
                .any(|i| at >= i.base && at < i.base + i.len as u64)
        });
        for image in self.images.iter().flatten() {
            self.state
                .executor
                .forget_code(image.base, image.len as u64);
            if let Err(e) = self.state.memory.free(&self.state.table, image.base, false) {
                tracing::debug!(error = %e, "freeing a code object image failed");
            }
        }
    }
}

impl ExecutableBackend for SoftExecutable {
    fn links_cycles(&self) -> bool {
        true
    }

    fn reserve(&mut self, index: usize, module: &Module) -> Result<Option<u64>, LoadError> {
        if self.frozen {
            return Err(LoadError::Backend {
                op: "reserve",
                message: "executable is frozen".into(),
            });
        }
        let size = module.image_size();
        let too_big = |e: DeviceError| LoadError::Backend {
            op: "allocate",
            message: e.to_string(),
        };
        let len = usize::try_from(size).map_err(|_| LoadError::Backend {
            op: "allocate",
            message: format!("{size} bytes"),
        })?;
        let allocation = self
            .state
            .memory
            .allocate(&self.state.table, size, MemoryKind::CodeObject, true)
            .map_err(too_big)?;
        *self.slot(index) = Some(Image {
            base: allocation.base,
            len,
        });
        Ok(Some(allocation.base))
    }

    fn load(
        &mut self,
        index: usize,
        module: &Module,
        imports: &[Option<u64>],
    ) -> Result<Placement, LoadError> {
        if self.frozen {
            return Err(LoadError::Backend {
                op: "load",
                message: "executable is frozen".into(),
            });
        }
        if self.slot(index).is_none() {
            self.reserve(index, module)?;
        }
        let image = self.images[index].ok_or_else(|| LoadError::Backend {
            op: "load",
            message: "no reservation".into(),
        })?;
        let bytes = self.bytes_mut(image);
        relocate::lay_out(module, bytes)?;
        let applied = relocate::apply(module, bytes, image.base, imports, index)?;
        self.protect(image, module);
        tracing::debug!(source = %module.source(), base = format_args!("{:#x}", image.base), size = image.len, relocations = applied.len(), "soft agent loaded code object");
        Ok(Placement {
            base: image.base,
            size: image.len as u64,
        })
    }

    fn freeze(&mut self) -> Result<(), LoadError> {
        self.frozen = true;
        Ok(())
    }

    /// On the software agent host memory is device memory: the host address is written as is,
    /// into 8 bytes that must lie inside one of this executable's images.
    fn publish_host_memory(
        &mut self,
        address: u64,
        host: u64,
        size: u64,
    ) -> Result<u64, LoadError> {
        let inside = self.images.iter().flatten().any(|i| {
            address >= i.base
                && address
                    .checked_add(8)
                    .is_some_and(|end| end <= i.base + i.len as u64)
        });
        if !inside {
            return Err(LoadError::Backend {
                op: "publish host memory",
                message: format!("{address:#x} is not 8 bytes inside this executable's code"),
            });
        }
        // Kernels reach the host memory through the pointer: record it as managed memory, so
        // the memory checker lets them (a range already known, e.g. published by another
        // executable of this agent, stays as it is).
        match self
            .state
            .table
            .insert(host, size.max(1), MemoryKind::Managed, true)
        {
            Ok(_) => self.published.push(host),
            Err(e) => tracing::debug!(error = %e, "published host memory already recorded"),
        }
        // SAFETY: the 8 bytes lie inside a live image owned by this executable (checked above);
        // the write is unaligned-safe.
        unsafe { std::ptr::write_unaligned(address as *mut u64, host) };
        Ok(host)
    }

    fn read_image(&self, index: usize) -> Option<Vec<u8>> {
        let image = (*self.images.get(index)?)?;
        // SAFETY: a live image of `len` bytes; kernels may be writing its variables, so this
        // is a snapshot, as a device-to-host copy would be.
        Some(unsafe { std::slice::from_raw_parts(image.base as *const u8, image.len) }.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::memory::ViolationReason;
    use crate::device::{aql, Completion, Condition};
    use std::time::Duration;

    fn agent() -> SoftAgent {
        SoftAgent::new("gfx1030".parse().unwrap())
    }

    #[test]
    fn device_memory_is_a_budget_every_user_allocation_counts_against() {
        const BUDGET: u64 = 1 << 20;
        let a = SoftAgent::with_options(
            "gfx1030".parse().unwrap(),
            Arc::new(SignalTable::new()),
            &EmulatorOptions {
                device_memory: BUDGET,
                ..EmulatorOptions::default()
            },
        );
        assert_eq!(a.properties().total_memory, BUDGET);
        let info = |a: &SoftAgent| a.memory_info();
        assert_eq!(
            info(&a),
            MemoryInfo {
                free: BUDGET,
                total: BUDGET
            }
        );
        // Device, managed and array memory count, by the bytes asked for; pinned host
        // memory and the runtime's own memory do not.
        let d = a.allocate(100_000, MemoryKind::Device).unwrap();
        let m = a.allocate(200_000, MemoryKind::Managed).unwrap();
        let r = a.allocate(3_000, MemoryKind::Array).unwrap();
        let p = a.allocate(400_000, MemoryKind::PinnedHost).unwrap();
        let k = a.allocate(4_096, MemoryKind::Kernarg).unwrap();
        assert_eq!(info(&a).free, BUDGET - 303_000);
        // hipMemCreate's physical memory counts until its last reference goes.
        let vm = a.virtual_memory().unwrap();
        let physical = vm.create(64 * 1024).unwrap();
        assert_eq!(info(&a).free, BUDGET - 303_000 - 65_536);
        // More than is left is refused, and refusing takes nothing.
        let left = info(&a).free;
        for kind in [MemoryKind::Device, MemoryKind::Managed, MemoryKind::Array] {
            assert!(
                matches!(
                    a.allocate(left + 1, kind),
                    Err(DeviceError::OutOfMemory { size, kind: k }) if size == left + 1 && k == kind
                ),
                "{kind}"
            );
        }
        assert!(matches!(
            vm.create(left + 4096),
            Err(DeviceError::OutOfMemory { .. })
        ));
        assert_eq!(info(&a).free, left);
        let rest = a.allocate(left, MemoryKind::Device).unwrap();
        assert_eq!(info(&a).free, 0);
        // Frees give the bytes back at once (the host's pages stay in quarantine a while).
        for x in [d, m, r, p, k, rest] {
            a.free(x.base).unwrap();
        }
        drop(physical);
        assert_eq!(info(&a).free, BUDGET);
    }

    #[test]
    fn copies_are_checked_against_allocations_and_freed_memory_is_caught() {
        let a = agent();
        let buf = a.allocate(64, MemoryKind::Device).unwrap();
        assert_eq!(buf.base % ALIGNMENT as u64, 0);
        let host: Vec<u8> = (0..64).collect();
        let mut back = vec![0u8; 64];
        // SAFETY: host buffers are the test's own, 64 bytes each.
        unsafe {
            a.copy(buf.base, host.as_ptr() as u64, 64).unwrap();
            a.copy(back.as_mut_ptr() as u64, buf.base, 64).unwrap();
        }
        assert_eq!(back, host);
        // SAFETY: as above; the device side is checked and refused.
        let past = unsafe { a.copy(buf.base + 32, host.as_ptr() as u64, 64) }.unwrap_err();
        assert!(
            matches!(&past, DeviceError::Access(v)
                if matches!(&v.reason, ViolationReason::PastEnd(x) if x.base == buf.base)),
            "{past}"
        );
        // SAFETY: the fill stays inside the allocation.
        unsafe { a.fill(buf.base, 0xabcd, 2, 8).unwrap() };
        // SAFETY: as above.
        unsafe { a.copy(back.as_mut_ptr() as u64, buf.base, 8).unwrap() };
        assert_eq!(
            &back[..8],
            &[0xcd, 0xab, 0xcd, 0xab, 0xcd, 0xab, 0xcd, 0xab]
        );
        a.free(buf.base).unwrap();
        let again = a.free(buf.base).unwrap_err();
        assert!(
            matches!(&again, DeviceError::AlreadyFreed { address, .. } if *address == buf.base),
            "{again}"
        );
        // SAFETY: the freed block is in quarantine, so the device side is caught, not touched.
        let uaf = unsafe { a.copy(buf.base, host.as_ptr() as u64, 8) }.unwrap_err();
        assert!(
            matches!(&uaf, DeviceError::Access(v)
                if matches!(&v.reason, ViolationReason::Freed(x) if x.base == buf.base)),
            "{uaf}"
        );
    }

    /// The epoch rule through the agent's memory: a block freed while a dispatch is active
    /// leaves the table at once but is not deallocated until the dispatch ends: one past the
    /// quarantine's budget, and runtime-internal memory that skips the quarantine.
    #[test]
    fn memory_freed_under_a_running_dispatch_is_released_when_it_ends() {
        let epochs = Epochs::new();
        let a = SoftAgent::with_epochs(
            "gfx1030".parse().unwrap(),
            Arc::new(SignalTable::new()),
            builtin_executor(&EmulatorOptions::default()),
            epochs.clone(),
        );
        let big = a
            .allocate(QUARANTINE_BYTES + (1 << 20), MemoryKind::Device)
            .unwrap();
        let kernarg = a.allocate(256, MemoryKind::Kernarg).unwrap();
        let running = epochs.begin();
        a.free(big.base).unwrap();
        a.free(kernarg.base).unwrap();
        assert!(a.allocations().find(big.base).is_none());
        assert!(a.allocations().find(kernarg.base).is_none());
        assert_eq!(
            epochs.deferred(),
            (2, big.size.next_multiple_of(ALIGNMENT as u64) + 256),
            "released while a dispatch that could touch it ran"
        );
        // SAFETY: the block is deferred, so still allocated: a kernel's store that the checker
        // approved before the free lands in memory the agent still owns.
        unsafe { std::ptr::write_volatile((big.base + big.size - 1) as *mut u8, 1) };
        // A dispatch that begins after the free cannot reach it and does not hold it.
        let later = epochs.begin();
        drop(running);
        assert_eq!(epochs.deferred(), (0, 0));
        drop(later);
        // With nothing running, a free releases at once.
        let small = a.allocate(64, MemoryKind::Kernarg).unwrap();
        a.free(small.base).unwrap();
        assert_eq!(epochs.deferred(), (0, 0));
    }

    #[test]
    fn a_queue_runs_barriers_in_order_and_decrements_completion_signals() {
        let a = agent();
        let q = a.create_queue().unwrap();
        let gate = a.create_signal(1).unwrap();
        let done = a.create_signal(1).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let packet = aql::barrier_and_packet(&[gate.handle], done.handle);
        // SAFETY: a BarrierAndPacket is 64 bytes of plain data.
        let bytes: [u8; 64] = unsafe { std::mem::transmute(packet) };
        let header = aql::header_word(
            aql::Header::ordered(hsa_sys::HSA_PACKET_TYPE_BARRIER_AND),
            0,
        );
        q.submit(
            bytes,
            header,
            "test".into(),
            Vec::new(),
            Box::new(move |c| tx.send(c).unwrap()),
        )
        .unwrap();
        // The barrier waits for `gate`.
        let (_, finished) = done
            .signal
            .wait(Condition::Lt, 1, Some(Duration::from_millis(50)));
        assert!(!finished);
        gate.signal.store(0);
        let (_, finished) = done
            .signal
            .wait(Condition::Lt, 1, Some(Duration::from_secs(10)));
        assert!(finished);
        assert!(matches!(rx.recv().unwrap(), Completion::Done(_)));
        // A kernel object that is not the descriptor of a loaded kernel is refused (a forged
        // packet runs nothing); a loaded descriptor the emulator refuses (a zeroed one is
        // wave64) fails with a typed error, not silently.
        let kd = a.allocate(64, MemoryKind::CodeObject).unwrap();
        let submit = |kernel_object: u64| {
            let fields = aql::DispatchFields {
                geometry: aql::DispatchGeometry {
                    grid: [1, 1, 1],
                    block: [32, 1, 1],
                    remainder: [0; 3],
                },
                private_segment_size: 0,
                group_segment_size: 0,
                kernel_object,
                kernarg_address: 0,
                completion_signal: 0,
            };
            // SAFETY: as above.
            let bytes: [u8; 64] = unsafe { std::mem::transmute(aql::dispatch_packet(&fields)) };
            let (tx, rx) = std::sync::mpsc::channel();
            let header = aql::header_word(
                aql::Header::ordered(hsa_sys::HSA_PACKET_TYPE_KERNEL_DISPATCH),
                1,
            );
            q.submit(
                bytes,
                header,
                "test".into(),
                Vec::new(),
                Box::new(move |c| tx.send(c).unwrap()),
            )
            .unwrap();
            match rx.recv_timeout(Duration::from_secs(10)).unwrap() {
                Completion::Failed(e) => e.to_string(),
                other => panic!("{other:?}"),
            }
        };
        let e = submit(kd.base);
        assert!(
            e.contains("is not the descriptor of a loaded kernel"),
            "{e}"
        );
        a.state.descriptors.write().insert(kd.base, [0; 64]);
        let e = submit(kd.base);
        assert!(e.contains("wave64"), "{e}");
        drop(q);
        assert!(a.allocations().of_kind(MemoryKind::Queue).is_empty());
    }
}
