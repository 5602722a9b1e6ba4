//! CDNA2 (gfx90a) and CDNA3 (gfx942): the GFX9-layout instruction sets (their generated tables
//! and gfx9's register map and encodings) run as wave64, with the shared handlers of every
//! instruction class, their lists of the operations only the GFX9-layout sets have (and GFX9's
//! names for gfx10 operations), and the AGPR moves and matrix instructions
//! ([`crate::exec::mfma`]).
//! Not the semantics themselves ([`crate::exec`]).

use super::Family;
use crate::exec::table::Table;
use crate::exec::{ds, flow, mfma, salu, smem, valu, vmem};
use crate::isa;

/// The wave64 handlers of gfx90a and gfx942 (an operation one of them lacks is never decoded
/// for it).
pub static WAVE64: Table<64> = Table::build(&[
    salu::Handlers::<64>::TABLE,
    salu::Handlers::<64>::EXTRA,
    flow::Handlers::<64>::TABLE,
    valu::Handlers::<64>::TABLE,
    valu::Handlers::<64>::EXTRA,
    vmem::Handlers::<64>::TABLE,
    vmem::Handlers::<64>::EXTRA,
    ds::Handlers::<64>::TABLE,
    smem::Handlers::<64>::TABLE,
    salu::Handlers::<64>::GFX9_EXTRA,
    valu::Handlers::<64>::GFX9_TABLE,
    valu::Handlers::<64>::GFX9_EXTRA,
    vmem::Handlers::<64>::GFX9_TABLE,
    vmem::Handlers::<64>::GFX9_EXTRA,
    ds::Handlers::<64>::GFX9_TABLE,
    mfma::Handlers::<64>::TABLE,
]);

/// CDNA2: gfx90a.
pub static CDNA2: Family = Family::new(&isa::GFX90A, None, Some(&WAVE64));

/// CDNA3: gfx942.
pub static CDNA3: Family = Family::new(&isa::GFX942, None, Some(&WAVE64));
