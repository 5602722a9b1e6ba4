//! rocload-emu: an AMD GPU emulator that runs kernels on the CPU: the RDNA2 family (gfx1030,
//! wave32) and CDNA2/CDNA3 (gfx90a, gfx942, wave64 with AGPRs and matrix instructions).
//!
//! Two halves. The decoder ([`isa`]) turns machine code into a compact predecoded form
//! ([`isa::Inst`], one [`isa::Op`] space for every instruction set it knows) and prints it
//! exactly as `llvm-objdump-19 -d --mcpu=<processor>` does. The engine ([`family`], [`exec`],
//! [`sched`]) finds the [`Family`] of the dispatch's processor, lowers instructions into uops,
//! cached per code address ([`program`]), and runs dispatches: give it guest memory (a
//! [`GuestMemory`] whose every
//! access can fault), a [`Dispatch`] (kernel descriptor, code address, grid, kernarg and
//! packet addresses, segment sizes, apertures) and [`Services`] (hostcall interrupts), and
//! [`Emulator::run`] returns a [`Report`] or a typed [`ExecError`].
//!
//! It knows nothing of HIP, fat binaries or code-object loading. See `docs/emulator.md`.

#![deny(missing_docs)]

/// The engine's internals: private, or with the `internals` feature (this crate's tests and
/// benchmarks) public but hidden from the documentation. Not an API.
macro_rules! internal {
    ($($(#[$m:meta])* mod $name:ident;)*) => { $(
        $(#[$m])*
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        $(#[$m])*
        #[cfg(not(feature = "internals"))]
        mod $name;
    )* };
}

/// The operation named `$name` (a mnemonic identifier), checked when compiled: handler tables
/// name operations by mnemonic and a misspelt one does not build.
macro_rules! op {
    ($name:ident) => {
        match $crate::isa::Op::from_name(stringify!($name)) {
            Some(op) => op,
            None => panic!(concat!("no operation named ", stringify!($name))),
        }
    };
}

pub mod cache;
pub mod cpus;
pub mod dispatch;
pub mod error;
pub mod family;
pub mod isa;
pub mod memory;
pub mod sched;

internal! {
    mod exec;
    mod float;
    mod lds;
    mod program;
    mod scratch;
    mod wave;
}

pub use dispatch::Dispatch;
pub use error::{DispatchError, ExecError, FaultKind, Site, WaveId};
pub use family::Family;
pub use memory::{Access, FlatFault, FlatMemory, GuestMemory, Span};
pub use sched::{Config, Emulator, Report};

/// The ISA families the emulator executes, for reports.
pub const FAMILIES: &str =
    "RDNA2 (the gfx1030 ISA: gfx1030 to gfx1036), CDNA2 (gfx90a) and CDNA3 (gfx942)";

/// Whether the emulator executes code built for `processor` (an LLVM processor name such as
/// `gfx1030`): whether one of its [`Family`]s does. Code of any other processor is refused
/// before anything runs: another family's decoder would read its bytes as something else.
pub fn executes(processor: &str) -> bool {
    Family::for_processor(processor).is_some()
}

/// What the emulator asks of its embedder while a dispatch runs.
pub trait Services: Sync {
    /// `s_sendmsg sendmsg(MSG_INTERRUPT)` with the wave's M0 (the hostcall protocol's doorbell:
    /// serve the hostcall buffer now).
    fn interrupt(&self, _m0: u32) {}

    /// Every wave on some host thread is waiting (sleeping or at a barrier): a chance to serve
    /// hostcall buffers whose waves do not send interrupts.
    fn idle(&self) {}

    /// The guest address of the agent's border-colour table (gfx10's `TA_BC_BASE_ADDR`): 16
    /// bytes (four channel dwords) per entry, the entry a sampler with `BORDER_COLOR_TYPE` 3
    /// names in `BORDER_COLOR_PTR`. 0: the agent has none (such a sampler is unsupported).
    fn border_color_table(&self) -> u64 {
        0
    }
}

/// Services that do nothing (kernels without hostcalls).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoServices;

impl Services for NoServices {}
