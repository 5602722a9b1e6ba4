//! The software agent's kernel executor: the gfx1030 emulator (crate `rocload-emu`) over the
//! agent's allocation table.
//!
//! - Memory: guest addresses are host addresses on the software agent; every access the
//!   emulator makes is first checked against the table (live allocation, inside its bounds,
//!   writable for stores), so a fault names the allocation it hit, came near or that was freed.
//!   By default the first access of an instruction finds its allocation and the other lanes
//!   are checked against that allocation's bounds ([`GuestMemory::span`]); with
//!   `check_every_access` every lane asks the table (which also catches a free racing the
//!   kernel).
//! - Faults: every failed dispatch is printed once on stderr by default
//!   ([`EmulatorOptions::fault_reports`], `ROCLOAD_FAULT_REPORTS=0` turns it off): a memory
//!   fault as ROCr prints one, then rocload's details.
//! - Hostcall: the emulator's `s_sendmsg` interrupt (event id in M0) and its idle moments serve
//!   the hostcall buffers registered with the agent ([`super::HostcallHandlers`]).
//! - One emulator per agent: its decode cache is keyed by code address, so freed code-object
//!   images are forgotten ([`KernelExecutor::forget_code`]) before the address can be reused;
//!   its scratch budget ([`EmulatorOptions::scratch_budget`]) bounds the host memory all the
//!   agent's dispatches take for private memory, and a launch whose one work-group needs more
//!   is refused before it is queued ([`KernelExecutor::check_scratch`]).
//!
//! Not for queues or packets (the queue module) or for the ISA (the `rocload-emu` crate).

use std::ptr::NonNull;

use rocload_emu::{
    Access, Config, Dispatch, DispatchError, Emulator, ExecError, FaultKind, GuestMemory, Services,
    Span,
};

use super::exec::{Job, KernelExecutor};
use super::{HostcallHandlers, PRIVATE_APERTURE, SHARED_APERTURE};
use crate::device::memory::ViolationReason;
use crate::device::{
    host_memory, AccessKind, AccessViolation, Allocation, AllocationTable, DeviceError,
    DispatchReport, ExecutionError, HostFacts, MemoryKind, WaveSegment, WaveSite,
};

/// How the emulator runs dispatches on a software agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmulatorOptions {
    /// Host threads per dispatch.
    pub threads: usize,
    /// The watchdog: a dispatch running longer than this is stopped and fails with a timeout
    /// report naming a wave that never finished (`ROCLOAD_WATCHDOG`; default
    /// [`DEFAULT_WATCHDOG`]; `None`: no limit). `rocload_set_watchdog` changes it for later
    /// dispatches.
    pub timeout: Option<std::time::Duration>,
    /// Ask the allocation table for every lane's access, not only for the first access of
    /// each instruction (the others are checked against that allocation's bounds).
    pub check_every_access: bool,
    /// Host memory, in bytes, that the scratch (private memory) of all the agent's dispatches
    /// may take at once (`ROCLOAD_SCRATCH_BUDGET`; default [`default_scratch_budget`]).
    pub scratch_budget: u64,
    /// The agent's device memory, in bytes: what it reports (`totalGlobalMem`, the HSA pool's
    /// size) and what its device, managed, array and `hipMemCreate` allocations may hold
    /// together (`ROCLOAD_DEVICE_MEMORY`; default [`default_device_memory`]). It is host
    /// memory, taken only as pages are touched.
    pub device_memory: u64,
    /// Print a report on stderr for every failed dispatch ([`ExecutionError::report`]): a
    /// memory fault as ROCr prints one, then rocload's details (`ROCLOAD_FAULT_REPORTS`;
    /// default on). The failure is returned either way.
    pub fault_reports: bool,
    /// The agent's GPU node number in those reports (ROCr numbers GPU nodes after the CPU's,
    /// from 1).
    pub node: u32,
}

impl Default for EmulatorOptions {
    fn default() -> Self {
        let config = Config::default();
        EmulatorOptions {
            threads: config.threads,
            timeout: Some(DEFAULT_WATCHDOG),
            check_every_access: false,
            scratch_budget: default_scratch_budget(),
            device_memory: default_device_memory(),
            fault_reports: true,
            node: 1,
        }
    }
}

/// The watchdog when none is configured: 120 s, longer than any test kernel at -O0 needs and
/// short enough that a kernel that never ends does not hang its program for long.
pub const DEFAULT_WATCHDOG: std::time::Duration = std::time::Duration::from_secs(120);

/// The scratch budget when none is configured: a quarter of the host's memory, at most 4 GiB.
/// Scratch is host memory here; a quarter leaves the program's own data room even when every
/// resident work-group touches all of its private segment.
pub fn default_scratch_budget() -> u64 {
    (HostFacts::get().total_memory / 4).min(rocload_emu::sched::DEFAULT_SCRATCH_BUDGET)
}

/// The software agent's device memory when none is configured: a quarter of the host's
/// memory, at most 16 GiB (the most a gfx1030 board has). Programs size their buffers from
/// what `hipMemGetInfo` reports; a quarter leaves the host room for the program's own copies
/// and for other processes, and a fixed figure keeps the report the same from one call to the
/// next whatever else the host is doing.
pub fn default_device_memory() -> u64 {
    (HostFacts::get().total_memory / 4).min(16 << 30)
}

/// The emulator as a [`KernelExecutor`].
#[derive(Debug)]
pub struct EmulatorExecutor {
    emulator: Emulator,
    check_every_access: bool,
    fault_reports: bool,
    node: u32,
}

impl EmulatorExecutor {
    /// An executor running dispatches with `options`.
    pub fn new(options: &EmulatorOptions) -> EmulatorExecutor {
        EmulatorExecutor {
            emulator: Emulator::new(Config {
                threads: options.threads.max(1),
                timeout: options.timeout,
                scratch_budget: options.scratch_budget,
                ..Config::default()
            }),
            check_every_access: options.check_every_access,
            fault_reports: options.fault_reports,
            node: options.node,
        }
    }
}

/// The allocation table as the emulator's guest memory: the memory checker. Public so its
/// cost can be measured against unchecked memory (`benches/memcheck.rs`).
#[derive(Debug)]
pub struct TableMemory<'a> {
    table: &'a AllocationTable,
    check_every_access: bool,
    /// Registered host allocations (by id) this dispatch found still mapped: the program owns
    /// those pages and may unmap them without unregistering, so each is checked once per
    /// dispatch before a kernel touches it.
    mapped: parking_lot::Mutex<Vec<u64>>,
}

impl<'a> TableMemory<'a> {
    /// Guest memory whose accesses `table` approves: by default the first access of an
    /// instruction finds its allocation and the other lanes are checked against its bounds;
    /// with `check_every_access` every lane asks the table.
    pub fn new(table: &'a AllocationTable, check_every_access: bool) -> TableMemory<'a> {
        TableMemory {
            table,
            check_every_access,
            mapped: parking_lot::Mutex::new(Vec::new()),
        }
    }

    /// Whether `a`'s host bytes may be touched: always for memory the runtime owns; for
    /// registered host memory (the program's own pages), only while the program keeps them
    /// mapped, asked of the kernel once per allocation and dispatch.
    fn host_still_mapped(&self, a: &Allocation) -> bool {
        if a.kind != MemoryKind::RegisteredHost || self.mapped.lock().contains(&a.id) {
            return true;
        }
        let mapped = host_memory::is_mapped(a.host_address(a.base), a.size);
        if mapped {
            self.mapped.lock().push(a.id);
        } else {
            tracing::debug!(allocation = %a, "registered host memory is no longer mapped");
        }
        mapped
    }

    fn unmapped(&self, a: Allocation, address: u64, len: u64, access: Access) -> AccessViolation {
        AccessViolation {
            address,
            len,
            access: access_kind(access),
            reason: ViolationReason::HostUnmapped(a),
        }
    }
}

// SAFETY: `translate` returns an address only after the table confirmed that the whole range
// lies in a live allocation of this device (writable when the access writes). Allocations are
// host memory owned by the agent, and the queue runs every dispatch as an active dispatch of
// the agent's epochs (`device::epoch`): a free removes the range from the table, then releases
// the bytes only once every dispatch active at the free has ended, and unregistering host
// memory waits for them; so an approved range (or span) stays valid until this dispatch ends.
// Other threads touch it only through the emulator's atomics or the device's copies. An alias
// (`AllocationTable::insert_alias`) stands for the host range it names, which its owner keeps
// mapped while the alias is in the table (locked memory: unlocking removes it first, and waits
// for running dispatches). Registered host memory is the program's own: it may unmap it without
// unregistering, so each registration is found mapped (`host_still_mapped`) before a dispatch's
// first access to it; unmapping it while the dispatch runs is the program's race, as with a
// copy's host side.
unsafe impl GuestMemory for TableMemory<'_> {
    type Fault = AccessViolation;

    fn translate(
        &self,
        address: u64,
        len: u64,
        access: Access,
    ) -> Result<NonNull<u8>, AccessViolation> {
        let kind = access_kind(access);
        // Registered host memory is asked after (not under) the table's lock.
        let (host, registered) = self.table.translate_inspecting(address, len, kind, |a| {
            (a.kind == MemoryKind::RegisteredHost).then(|| a.clone())
        })?;
        if let Some(a) = registered {
            if !self.host_still_mapped(&a) {
                return Err(self.unmapped(a, address, len, access));
            }
        }
        NonNull::new(host as *mut u8).ok_or_else(|| self.table.violation(0, len, kind))
    }

    /// The region with one set of permissions around `address` (a whole allocation, or one
    /// segment of a code object), when it allows `access`.
    fn span(&self, address: u64, access: Access) -> Option<Span> {
        if self.check_every_access {
            return None;
        }
        let a = self.table.find(address)?;
        let (start, len, perms) = a.region(address, 1)?;
        // No span over unmapped pages: the access then goes through `translate`, which
        // reports it.
        if !perms.allows(access_kind(access)) || !self.host_still_mapped(&a) {
            return None;
        }
        Some(Span {
            start,
            len,
            host: NonNull::new(a.host_address(start) as *mut u8)?,
        })
    }
}

/// The table's name for what the emulator does.
fn access_kind(access: Access) -> AccessKind {
    match access {
        Access::Read => AccessKind::Read,
        Access::Write | Access::Atomic => AccessKind::Write,
        Access::Execute => AccessKind::Execute,
    }
}

/// The agent's hostcall buffers and border-colour table as the emulator's services.
struct HostcallServices<'a>(&'a HostcallHandlers, u64);

impl Services for HostcallServices<'_> {
    fn interrupt(&self, m0: u32) {
        // The doorbell's event id travels in M0's low byte; interrupt signals' listeners hear
        // every interrupt.
        let served = self.0.interrupt(m0);
        tracing::trace!(m0, served, "hostcall interrupt");
    }

    fn idle(&self) {
        self.0.serve(None);
    }

    fn border_color_table(&self) -> u64 {
        self.1
    }
}

impl KernelExecutor for EmulatorExecutor {
    fn run(&self, job: &Job<'_>) -> Result<DispatchReport, ExecutionError> {
        let p = job.packet;
        let dispatch = Dispatch {
            processor: job.processor,
            descriptor: job.descriptor,
            descriptor_address: p.kernel_object,
            grid: [p.grid_size_x, p.grid_size_y, p.grid_size_z],
            workgroup: [p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z],
            kernarg_address: p.kernarg_address as u64,
            packet_address: job.packet_address,
            queue_address: job.queue_address,
            dispatch_id: job.dispatch_id,
            group_segment_size: p.group_segment_size,
            private_segment_size: p.private_segment_size,
            shared_aperture: SHARED_APERTURE,
            private_aperture: PRIVATE_APERTURE,
            compute_units: job.compute_units.clone(),
        };
        let memory = TableMemory::new(job.memory, self.check_every_access);
        let services = HostcallServices(job.hostcall, job.border_colors);
        match self.emulator.run(&dispatch, &memory, &services) {
            Ok(report) => Ok(DispatchReport {
                duration: report.duration,
                instructions: report.wave_instructions,
                waves: report.waves,
            }),
            Err(e) => {
                let error = execution_error(job.label, e);
                if self.fault_reports {
                    // Once per failure, here where it happens: the runtime reports the sticky
                    // error to every later call, and must not print it each time. The agent
                    // handle is this executor's address (one per agent).
                    eprint!("{}", error.report(self.node, self as *const Self as u64));
                }
                Err(error)
            }
        }
    }

    fn forget_code(&self, base: u64, len: u64) {
        self.emulator.forget_code(base, len);
    }

    fn set_watchdog(&self, timeout: Option<std::time::Duration>) -> Result<(), DeviceError> {
        self.emulator.set_timeout(timeout);
        tracing::debug!(?timeout, "watchdog set");
        Ok(())
    }

    fn check_scratch(&self, per_workitem: u32, workgroup_items: u64) -> Result<(), DeviceError> {
        self.emulator
            .check_scratch(per_workitem, workgroup_items)
            .map_err(|e| scratch_refusal(&e).unwrap_or_else(|| DeviceError::Queue(e.to_string())))
    }
}

/// A refused dispatch that asked for more scratch than the agent gives, as a device error.
fn scratch_refusal(e: &DispatchError) -> Option<DeviceError> {
    match *e {
        DispatchError::TooMuchScratch { bytes, cap } => Some(DeviceError::ScratchTooLarge {
            per_workitem: u64::from(bytes),
            workgroup_bytes: None,
            limit: u64::from(cap),
        }),
        DispatchError::ScratchTooLarge {
            per_workitem,
            workgroup_bytes,
            budget,
        } => Some(DeviceError::ScratchTooLarge {
            per_workitem: u64::from(per_workitem),
            workgroup_bytes: Some(workgroup_bytes),
            limit: budget,
        }),
        _ => None,
    }
}

/// The runtime's report of an emulator failure: guest memory faults keep the allocation
/// table's violation (which names the allocation); everything else already names its PC and
/// instruction.
fn execution_error(kernel: &str, e: ExecError<AccessViolation>) -> ExecutionError {
    match e {
        ExecError::MemoryFault {
            site,
            lane,
            wave,
            address,
            kind,
        } => {
            let (segment, offset, size) = match kind {
                FaultKind::Guest(violation) => {
                    return ExecutionError::MemoryFault {
                        kernel: kernel.to_owned(),
                        pc: site.pc,
                        lane,
                        wave,
                        instruction: site.instruction,
                        violation: Box::new(violation),
                    }
                }
                FaultKind::Lds(f) => (WaveSegment::Lds, u64::from(f.address), u64::from(f.size)),
                FaultKind::Scratch(f) => (
                    WaveSegment::Scratch,
                    f.private_offset(),
                    u64::from(f.per_lane),
                ),
            };
            ExecutionError::SegmentFault {
                kernel: kernel.to_owned(),
                pc: site.pc,
                lane,
                wave,
                instruction: site.instruction,
                segment,
                address,
                offset,
                size,
            }
        }
        ExecError::Timeout {
            elapsed,
            workgroups_done,
            workgroups,
            site,
            wave,
        } => ExecutionError::Timeout {
            kernel: kernel.to_owned(),
            elapsed,
            workgroups_done,
            workgroups,
            wave: wave.zip(site).map(|(wave, s)| WaveSite {
                wave,
                pc: s.pc,
                instruction: s.instruction,
            }),
        },
        ExecError::Internal { detail } => ExecutionError::Internal {
            what: format!("kernel {kernel}"),
            detail,
        },
        ExecError::Dispatch(refused) => match scratch_refusal(&refused) {
            Some(error) => ExecutionError::Resources {
                kernel: kernel.to_owned(),
                error: Box::new(error),
            },
            None => ExecutionError::Kernel {
                kernel: kernel.to_owned(),
                message: ExecError::<AccessViolation>::Dispatch(refused).to_string(),
            },
        },
        // A jump to memory not loaded as code: on a GPU a page fault too (the wave's fetch,
        // so no lane in particular: lane 0 is reported).
        ExecError::Fetch { pc, fault } => ExecutionError::MemoryFault {
            kernel: kernel.to_owned(),
            pc,
            lane: 0,
            wave: None,
            instruction: "(instruction fetch)".to_owned(),
            violation: Box::new(fault),
        },
        other => ExecutionError::Kernel {
            kernel: kernel.to_owned(),
            message: other.to_string(),
        },
    }
}
