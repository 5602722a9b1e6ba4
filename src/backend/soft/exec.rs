//! The boundary between the software agent's queue and whatever executes kernels: a
//! [`KernelExecutor`] gets one dispatch (the packet in the ring, its address, the queue's, the
//! kernel descriptor, and the device's allocation table that every access is checked against)
//! and returns a report or a typed failure. The emulator implements it.

use super::emu::{EmulatorExecutor, EmulatorOptions};
use super::HostcallHandlers;
use crate::device::{AllocationTable, DeviceError, DispatchPacket, DispatchReport, ExecutionError};

/// One dispatch to execute.
#[derive(Debug)]
pub struct Job<'a> {
    /// The packet, as published in the ring.
    pub packet: &'a DispatchPacket,
    /// Its address in the ring (what the dispatch-pointer SGPRs hold).
    pub packet_address: u64,
    /// The `hsa_queue_t` it was submitted to (the queue-pointer SGPRs).
    pub queue_address: u64,
    /// The packet's index in its queue (the dispatch-id SGPRs).
    pub dispatch_id: u64,
    /// The 64-byte kernel descriptor at `packet.kernel_object`.
    pub descriptor: [u8; 64],
    /// The agent's processor (`gfx1030`): the executor refuses one it does not implement.
    pub processor: &'static str,
    /// What the runtime called the dispatch (the kernel's name), for reports.
    pub label: &'a str,
    /// The device's memory: every global and flat access is checked against it.
    pub memory: &'a AllocationTable,
    /// The hostcall buffers to serve when the kernel rings a doorbell.
    pub hostcall: &'a HostcallHandlers,
    /// The agent's border-colour table (0: none yet).
    pub border_colors: u64,
    /// The compute units the queue's CU mask leaves it (`None`: all).
    pub compute_units: Option<Vec<u32>>,
}

/// Runs kernel dispatches for the software agent.
pub trait KernelExecutor: Send + Sync + std::fmt::Debug {
    /// Executes `job` to completion.
    ///
    /// # Errors
    /// A typed failure (memory fault, trap, unsupported instruction, timeout): the dispatch
    /// ends, the host process continues.
    fn run(&self, job: &Job<'_>) -> Result<DispatchReport, ExecutionError>;

    /// Code at `[base, base + len)` was freed (an executable was unloaded): forget anything
    /// decoded from it, since the addresses can be reused.
    fn forget_code(&self, _base: u64, _len: u64) {}

    /// Sets the timeout of dispatches that start from now on (`None`: none).
    ///
    /// # Errors
    /// [`DeviceError::Unsupported`] when this executor has no watchdog.
    fn set_watchdog(&self, _timeout: Option<std::time::Duration>) -> Result<(), DeviceError> {
        Err(DeviceError::Unsupported {
            op: "watchdog",
            backend: "soft",
            reason: "this kernel executor has none".into(),
        })
    }

    /// Whether a dispatch whose work-items need `per_workitem` bytes of scratch, in
    /// work-groups of `workgroup_items`, can be given that memory (checked at launch, so the
    /// launch call fails rather than the dispatch later).
    ///
    /// # Errors
    /// [`DeviceError::ScratchTooLarge`].
    fn check_scratch(&self, _per_workitem: u32, _workgroup_items: u64) -> Result<(), DeviceError> {
        Ok(())
    }
}

/// The executor every software agent starts with: its own gfx1030 emulator.
pub fn builtin_executor(options: &EmulatorOptions) -> std::sync::Arc<dyn KernelExecutor> {
    std::sync::Arc::new(EmulatorExecutor::new(options))
}
