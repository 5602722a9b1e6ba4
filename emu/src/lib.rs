//! rocload-emu: an RDNA2 (gfx1030, wave32) instruction-set emulator that runs AMD GPU kernels
//! on the CPU. It knows nothing of HIP, bundles or loading: give it guest memory (a
//! [`GuestMemory`] whose every access can fault), a [`Dispatch`] (kernel descriptor, code
//! address, grid, kernarg and packet addresses, segment sizes, apertures) and [`Services`]
//! (hostcall interrupts), and [`Emulator::run`] returns a [`Report`] or a typed [`ExecError`].
//!
//! Design (see `docs/emulator.md`): instructions are decoded lazily into straight-line blocks
//! of [`exec::Uop`]s (one handler per mnemonic, operands resolved), cached per code address;
//! work-groups run in parallel on host threads, each thread time-slicing among several
//! resident work-groups so spin-waits between work-groups make progress.

pub mod dispatch;
pub mod error;
pub mod exec;
pub mod float;
pub mod lds;
pub mod memory;
pub mod program;
pub mod scratch;
pub mod sched;
pub mod wave;

pub use dispatch::Dispatch;
pub use error::{DispatchError, ExecError, FaultKind, Site};
pub use memory::{Access, FlatFault, FlatMemory, GuestMemory};
pub use sched::{Config, Emulator, Report};

/// What the emulator asks of its embedder while a dispatch runs.
pub trait Services: Sync {
    /// `s_sendmsg sendmsg(MSG_INTERRUPT)` with the wave's M0 (the hostcall protocol's doorbell:
    /// serve the hostcall buffer now).
    fn interrupt(&self, _m0: u32) {}

    /// Every wave on some host thread is waiting (sleeping or at a barrier): a chance to serve
    /// hostcall buffers whose waves do not send interrupts.
    fn idle(&self) {}
}

/// Services that do nothing (kernels without hostcalls).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoServices;

impl Services for NoServices {}
