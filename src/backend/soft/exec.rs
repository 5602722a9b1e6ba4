//! The boundary between the software agent's queue and whatever executes kernels: a
//! [`KernelExecutor`] gets one dispatch (the packet in the ring, its address, the queue's, the
//! kernel descriptor, and the device's allocation table that every access is checked against)
//! and returns a report or a typed failure. The emulator implements it.

use crate::device::{AllocationTable, DispatchPacket, DispatchReport, ExecutionError};

/// One dispatch to execute.
#[derive(Debug)]
pub struct Job<'a> {
    /// The packet, as published in the ring.
    pub packet: &'a DispatchPacket,
    /// Its address in the ring (what the dispatch-pointer SGPRs hold).
    pub packet_address: u64,
    /// The `hsa_queue_t` it was submitted to (the queue-pointer SGPRs).
    pub queue_address: u64,
    /// The 64-byte kernel descriptor at `packet.kernel_object`.
    pub descriptor: [u8; 64],
    /// What the runtime called the dispatch (the kernel's name), for reports.
    pub label: &'a str,
    /// The device's memory: every global and flat access is checked against it.
    pub memory: &'a AllocationTable,
}

/// Runs kernel dispatches for the software agent.
pub trait KernelExecutor: Send + Sync + std::fmt::Debug {
    /// Executes `job` to completion.
    ///
    /// # Errors
    /// A typed failure (memory fault, trap, unsupported instruction, timeout): the dispatch
    /// ends, the host process continues.
    fn run(&self, job: &Job<'_>) -> Result<DispatchReport, ExecutionError>;
}

/// The executor every software agent starts with: none yet. The emulator (crate `emu`) is
/// being written; until it is wired in here, dispatches on the software agent (and on the
/// software HSA library's queues) fail with a typed error naming the missing executor.
///
/// TODO(lead): return the emulator's executor here once `emu` is on main; then flip the tests
/// marked `TODO(emulator)` (tests/launch.rs, tests/hsa_soft.rs, hsa-soft's own tests) from
/// expecting that failure to checking results.
pub fn builtin_executor() -> Option<std::sync::Arc<dyn KernelExecutor>> {
    None
}
