//! rocload-emu: the foundation of rocload's CPU emulator for AMD GPU code.
//!
//! This crate turns gfx1030 (RDNA2, wave32) machine code into a compact,
//! predecoded instruction form ([`isa::Inst`]) that an interpreter (and later
//! a translator to host code) consumes, caches decoded code per code range
//! ([`cache::DecodeCache`]), and prints instructions exactly as
//! `llvm-objdump-19 -d --mcpu=gfx1030` does ([`isa::disassemble`]).
//!
//! It knows nothing of HIP, fat binaries or code-object loading: callers hand
//! it code bytes and the address they live at.

#![deny(missing_docs)]

pub mod cache;
pub mod isa;
