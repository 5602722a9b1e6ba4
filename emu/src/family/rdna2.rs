//! RDNA2 (gfx1030 to gfx1036): the gfx1030 instruction set (its generated tables and gfx10's
//! register map and encodings) with the shared handlers of every instruction class. Runs
//! wave32, the width clang builds HIP code for on these processors. Not the semantics
//! themselves ([`crate::exec`]).

use super::Family;
use crate::exec::table::Table;
use crate::exec::{ds, flow, image, salu, smem, valu, vmem};
use crate::isa;

/// The wave32 handlers.
pub static WAVE32: Table<32> = Table::build(&[
    salu::Handlers::<32>::TABLE,
    salu::Handlers::<32>::EXTRA,
    flow::Handlers::<32>::TABLE,
    valu::Handlers::<32>::TABLE,
    valu::Handlers::<32>::EXTRA,
    vmem::Handlers::<32>::TABLE,
    vmem::Handlers::<32>::EXTRA,
    ds::Handlers::<32>::TABLE,
    smem::Handlers::<32>::TABLE,
    image::Handlers::<32>::TABLE,
]);

/// RDNA2.
pub static RDNA2: Family = Family::new(&isa::GFX1030, Some(&WAVE32), None);
