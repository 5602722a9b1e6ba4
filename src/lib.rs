//! rocload: loads AMD GPU code the way a HIP program needs it.
//!
//! Layers, each in its own module, from raw bytes up; each uses only those above it:
//! - [`target`]: processors, target IDs, compatibility and the explained selection policy;
//! - [`container`]: fat-binary formats (offload bundles, compressed bundles, host ELF
//!   sections, OffloadBinary), read lazily and in bounded memory;
//! - [`code_object`]: one AMDGPU code object (ELF) as a zero-copy view: segments, symbols,
//!   relocations, metadata and kernel descriptors;
//! - [`loader`]: modules, link plans and executables on an agent, device functions as symbols,
//!   cross-object linking, and the agent traits backends implement;
//! - [`backend`]: the software agent and ROCr's GPU agents through HSA;
//! - [`runtime`]: what a HIP program needs: registration, lazy per-device loading, the module
//!   API, device memory, streams, events and kernel launches, and the configuration read from
//!   the environment.
//!
//! The C ABI (`librocload.so`) and the `rocload` tool are separate crates over this one.
#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]

// Layers in their real order: each module uses only those listed before it, and the
// crate-wide `error`, which wraps every layer's own error type.
mod bytes;
mod shared_bytes;

pub mod elf;

pub mod target;

pub mod container;

pub mod code_object;

pub mod loader;

pub mod device;

pub mod backend;

pub mod runtime;

pub mod error;

pub use error::{Error, Result};
pub use shared_bytes::SharedBytes;
