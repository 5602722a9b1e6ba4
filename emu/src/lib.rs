//! rocload-emu: an RDNA2 (gfx1030, wave32) instruction-set emulator.
//!
//! It decodes AMD GPU machine code ([`isa`]) and runs kernels on the CPU, given guest memory,
//! a dispatch and services. It knows nothing of HIP, bundles or loading: rocload's software
//! agent hands it dispatches.
#![deny(missing_docs)]

pub mod isa;
