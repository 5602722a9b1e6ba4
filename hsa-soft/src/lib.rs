//! A software HSA runtime: `libhsa-runtime64.so.1`'s API over rocload's software agent, so
//! that rocload's HSA backend, and any program written against ROCr (Debian's `rocminfo`),
//! run end to end on a machine without an AMD GPU.
//!
//! `cargo build` makes `target/<profile>/libhsa_soft.so` with SONAME `libhsa-runtime64.so.1`
//! and every entry point at symbol version `ROCR_1`, as ROCr exports them (`build.rs`,
//! `rocr-exports.tsv`). What it
//! implements, and which ROCr source each behaviour follows, is in `docs/hsa.md`:
//!
//! - [`runtime`]: `hsa_init`/`hsa_shut_down` (reference counted), the system, status strings,
//!   extensions (the `hsa_ven_amd_loader` table), system event handlers;
//! - [`agents`]: one CPU agent and one software GPU agent per `ROCLOAD_SOFT_ISA` entry
//!   (default `gfx1030`), with the attributes rocminfo prints, and their ISAs;
//! - [`memory`]: memory pools and regions, allocation, access, copies, locking, fills;
//! - [`signals`]: signals and waits; [`ipc_signals`]: signals shared between processes;
//! - [`queues`]: AQL queues whose packets the software agent's packet processor runs: kernels
//!   on the agent's emulator, barriers, and ROCr's failure semantics (a failed packet calls the
//!   queue's error callback and suspends the queue);
//! - [`amd_ext`]: the rest of the AMD extensions AMD's HIP runtime calls (pointer info, locking
//!   to a pool, rectangular copies, copy profiling, and what a software agent lacks, answered
//!   as ROCr answers without it: graphics interop);
//! - [`svm`]: shared virtual memory (`hsa_amd_svm_*`) as ROCr over a driver with the SVM API:
//!   attributes per page range of host memory, GPU access entered in the agents' tables;
//! - [`images`]: the image extension (images and samplers whose descriptors the emulator
//!   reads, copies, limits);
//! - [`vmem`]: ROCr 6's virtual memory API (`hsa_amd_vmem_*`) over the software agents'
//!   reservations, memory objects and mappings (ROCr 6.2's answers; 5.2.3 has none);
//! - [`loader`]: code object readers, executables loaded through rocload's loader with ROCr's
//!   rules (`rocload::loader::rocr`) and status codes, symbols, loaded code objects.
//!
//! Every entry point catches panics and checks what it can (handles are looked up in tables,
//! never dereferenced); pointers the API defines as caller memory are trusted as ROCr trusts
//! them. Not a GPU driver: nothing here talks to `/dev/kfd`.

#![deny(missing_docs)]

/// Declares HSA entry points: each is `pub unsafe extern "C"`, exported under its name at
/// version `ROCR_1`, as ROCr exports them (`rocr-exports.tsv`, placed by `rocload_ffi`'s
/// `#[export]`; unversioned where versions cannot be written).
macro_rules! hsa_api {
    ($( $(#[$m:meta])* fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty $body:block )*) => { $(
        $(#[$m])*
        ///
        /// # Safety
        /// Pointer arguments follow the HSA API's contract for this function (out-pointers
        /// writable for the attribute's type, buffers valid for their stated sizes); handles
        /// are checked.
        #[rocload_ffi::export]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            // The body as a function of its own, so that a `return` in it gives the result.
            #[allow(clippy::too_many_arguments)] // as many as the C function has
            unsafe fn body($($arg: $ty),*) -> $ret $body
            // SAFETY: the same arguments under the same contract.
            let result: $ret = unsafe { body($($arg),*) };
            // Every call with its arguments and result (`ROCLOAD_LOG=hsa_soft::api=debug`):
            // what a client such as AMD's HIP runtime asks, in order.
            tracing::debug!(target: "hsa_soft::api", "{}{:?} -> {:?}", stringify!($name), ($($arg,)*), result);
            result
        }
    )* };
}

pub mod agents;
pub mod amd_ext;
pub mod images;
pub mod ipc_signals;
pub mod loader;
pub mod memory;
pub mod queues;
pub mod runtime;
pub mod signals;
pub mod svm;
pub mod vmem;

pub(crate) mod util;
