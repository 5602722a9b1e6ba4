//! What both of rocload's C ABIs stand on (`librocload.so`, the HIP runtime, and
//! `libhsa_soft.so`, the HSA runtime): the C surface stays thin and typed Rust does the work.
//!
//! - [`handles`]: generational handle tables for every opaque handle given to C;
//! - [`boundary`]: running an entry point's body so that a panic never unwinds into C;
//! - [`cabi`]: reading C strings and writing through out-pointers, checked for NULL and size;
//! - [`logging`]: each library's subscriber (stderr, `ROCLOAD_LOG`'s filter);
//! - [`versions`] and [`export`]: symbol versions from data, placed beside each entry point;
//! - [`trace`]: API callbacks for tracing tools (HIP 5.2's and HIP 5.3+'s tracer), which
//!   `#[export]` calls around the entry points the library's trace tables name.
//!
//! Not for what the APIs mean: HIP's error codes live with the HIP surface, HSA's with the HSA
//! surface.

#![deny(missing_docs)]

pub mod boundary;
pub mod cabi;
pub mod handles;
pub mod logging;
pub mod trace;
pub mod versions;

pub use handles::{HandleTable, Tag};
pub use rocload_ffi_macros::export;
