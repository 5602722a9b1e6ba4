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
//! - Hostcall: the emulator's `s_sendmsg` interrupt (event id in M0) and its idle moments serve
//!   the hostcall buffers registered with the agent ([`super::HostcallHandlers`]).
//! - One emulator per agent: its decode cache is keyed by code address, so freed code-object
//!   images are forgotten ([`KernelExecutor::forget_code`]) before the address can be reused.
//!
//! Not for queues or packets (the queue module) or for the ISA (the `rocload-emu` crate).

use std::ptr::NonNull;

use rocload_emu::{
    Access, Config, Dispatch, Emulator, ExecError, FaultKind, GuestMemory, Services, Span,
};

use super::exec::{Job, KernelExecutor};
use super::{HostcallHandlers, PRIVATE_APERTURE, SHARED_APERTURE};
use crate::device::{AccessKind, AccessViolation, AllocationTable, DispatchReport, ExecutionError};

/// How the emulator runs dispatches on a software agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmulatorOptions {
    /// Host threads per dispatch.
    pub threads: usize,
    /// A dispatch running longer than this fails with a timeout report.
    pub timeout: Option<std::time::Duration>,
    /// Ask the allocation table for every lane's access, not only for the first access of
    /// each instruction (the others are checked against that allocation's bounds).
    pub check_every_access: bool,
}

impl Default for EmulatorOptions {
    fn default() -> Self {
        let config = Config::default();
        EmulatorOptions {
            threads: config.threads,
            timeout: config.timeout,
            check_every_access: false,
        }
    }
}

/// The emulator as a [`KernelExecutor`].
#[derive(Debug)]
pub struct EmulatorExecutor {
    emulator: Emulator,
    check_every_access: bool,
}

impl EmulatorExecutor {
    /// An executor running dispatches with `options`.
    pub fn new(options: &EmulatorOptions) -> EmulatorExecutor {
        EmulatorExecutor {
            emulator: Emulator::new(Config {
                threads: options.threads.max(1),
                timeout: options.timeout,
                ..Config::default()
            }),
            check_every_access: options.check_every_access,
        }
    }
}

/// The allocation table as the emulator's guest memory: the memory checker. Public so its
/// cost can be measured against unchecked memory (`benches/memcheck.rs`).
#[derive(Debug)]
pub struct TableMemory<'a> {
    table: &'a AllocationTable,
    check_every_access: bool,
}

impl<'a> TableMemory<'a> {
    /// Guest memory whose accesses `table` approves: by default the first access of an
    /// instruction finds its allocation and the other lanes are checked against its bounds;
    /// with `check_every_access` every lane asks the table.
    pub fn new(table: &'a AllocationTable, check_every_access: bool) -> TableMemory<'a> {
        TableMemory {
            table,
            check_every_access,
        }
    }
}

// SAFETY: `translate` returns an address only after the table confirmed that the whole range
// lies in a live allocation of this device (writable when the access writes). Allocations are
// host memory owned by the agent, and the queue runs every dispatch as an active dispatch of
// the agent's epochs (`device::epoch`): a free removes the range from the table, then releases
// the bytes only once every dispatch active at the free has ended, and unregistering host
// memory waits for them; so an approved range (or span) stays valid until this dispatch ends.
// Other threads touch it only through the emulator's atomics or the device's copies.
unsafe impl GuestMemory for TableMemory<'_> {
    type Fault = AccessViolation;

    fn translate(
        &self,
        address: u64,
        len: u64,
        access: Access,
    ) -> Result<NonNull<u8>, AccessViolation> {
        let kind = access_kind(access);
        self.table.check(address, len, kind)?;
        NonNull::new(address as *mut u8).ok_or_else(|| self.table.violation(0, len, kind))
    }

    /// The region with one set of permissions around `address` (a whole allocation, or one
    /// segment of a code object), when it allows `access`.
    fn span(&self, address: u64, access: Access) -> Option<Span> {
        if self.check_every_access {
            return None;
        }
        let a = self.table.find(address)?;
        let (start, len, perms) = a.region(address, 1)?;
        if !perms.allows(access_kind(access)) {
            return None;
        }
        Some(Span {
            start,
            len,
            host: NonNull::new(start as *mut u8)?,
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

/// The agent's hostcall buffers as the emulator's services.
struct HostcallServices<'a>(&'a HostcallHandlers);

impl Services for HostcallServices<'_> {
    fn interrupt(&self, m0: u32) {
        // The doorbell's event id travels in M0's low byte.
        let served = self.0.serve(Some(m0 & 0xff));
        tracing::trace!(m0, served, "hostcall interrupt");
    }

    fn idle(&self) {
        self.0.serve(None);
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
        };
        let memory = TableMemory {
            table: job.memory,
            check_every_access: self.check_every_access,
        };
        let services = HostcallServices(job.hostcall);
        match self.emulator.run(&dispatch, &memory, &services) {
            Ok(report) => Ok(DispatchReport {
                duration: report.duration,
                instructions: report.wave_instructions,
                waves: report.waves,
            }),
            Err(e) => Err(execution_error(job.label, e)),
        }
    }

    fn forget_code(&self, base: u64, len: u64) {
        self.emulator.forget_code(base, len);
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
            kind: FaultKind::Guest(violation),
            ..
        } => ExecutionError::MemoryFault {
            kernel: kernel.to_owned(),
            pc: site.pc,
            lane,
            instruction: site.instruction,
            violation: Box::new(violation),
        },
        // A jump to memory not loaded as code: on a GPU a page fault too (the wave's fetch,
        // so no lane in particular: lane 0 is reported).
        ExecError::Fetch { pc, fault } => ExecutionError::MemoryFault {
            kernel: kernel.to_owned(),
            pc,
            lane: 0,
            instruction: "(instruction fetch)".to_owned(),
            violation: Box::new(fault),
        },
        other => ExecutionError::Kernel {
            kernel: kernel.to_owned(),
            message: other.to_string(),
        },
    }
}
