//! rocload: loads AMD GPU code the way a HIP program needs it.
//!
//! Layers, each in its own module, from raw bytes up:
//! - [`container`]: fat-binary formats (offload bundles, compressed bundles, host ELF
//!   sections, OffloadBinary), read lazily and in bounded memory;
//! - [`code_object`]: one AMDGPU code object (ELF) as a zero-copy view: segments, symbols,
//!   relocations, metadata and kernel descriptors;
//! - [`target`]: processors, target IDs, compatibility and the explained selection policy;
//! - [`code_object`]: a typed, zero-copy view of AMDGPU ELF code objects;
//! - [`loader`]: executables on an agent, device functions as symbols, cross-object linking.
#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]

pub mod bytes;
pub mod code_object;
pub mod container;
pub mod error;
pub mod loader;
pub mod runtime;
pub mod target;

pub use error::{Error, Result};
