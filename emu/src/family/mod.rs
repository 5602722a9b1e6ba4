//! The families the engine executes, as values looked up by processor: each names its
//! instruction set (the decoder's [`Isa`]: tables, register map, encoding layout) and holds
//! a handler table per wave width it runs. A dispatch for a processor no family has, or at a
//! width its family does not run, is refused before any wave starts. Adding a family is its
//! generated table (`scripts/gen-emu-tables.py --mcpu <processor>`) plus one module here (see
//! `docs/emulator.md`). Not the semantics themselves ([`crate::exec`]).

use std::any::Any;

use crate::exec::table::Table;
use crate::isa::Isa;

pub mod cdna;
pub mod rdna2;

/// One family the engine executes.
pub struct Family {
    /// Its instruction set.
    pub isa: &'static Isa,
    /// Its wave32 handlers, if it runs wave32 code.
    wave32: Option<&'static (dyn Any + Send + Sync)>,
    /// Its wave64 handlers, if it runs wave64 code.
    wave64: Option<&'static (dyn Any + Send + Sync)>,
}

impl std::fmt::Debug for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Family")
            .field("isa", &self.isa.name)
            .field("wave32", &self.wave32.is_some())
            .field("wave64", &self.wave64.is_some())
            .finish()
    }
}

impl PartialEq for Family {
    fn eq(&self, other: &Family) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for Family {}

impl Family {
    /// A family of `isa` running the given tables.
    pub const fn new(
        isa: &'static Isa,
        wave32: Option<&'static Table<32>>,
        wave64: Option<&'static Table<64>>,
    ) -> Family {
        Family {
            isa,
            wave32: match wave32 {
                Some(t) => Some(t),
                None => None,
            },
            wave64: match wave64 {
                Some(t) => Some(t),
                None => None,
            },
        }
    }

    /// The family that executes code built for `processor`, if any.
    pub fn for_processor(processor: &str) -> Option<&'static Family> {
        FAMILIES
            .iter()
            .copied()
            .find(|f| f.isa.has_processor(processor))
    }

    /// Its handlers for `N`-lane waves, if it runs them.
    pub fn table<const N: usize>(&self) -> Option<&'static Table<N>> {
        let t = match N {
            32 => self.wave32?,
            64 => self.wave64?,
            _ => return None,
        };
        t.downcast_ref::<Table<N>>()
    }

    /// The wave sizes it runs.
    pub fn wave_sizes(&self) -> impl Iterator<Item = u32> {
        [(32, self.wave32.is_some()), (64, self.wave64.is_some())]
            .into_iter()
            .filter(|&(_, runs)| runs)
            .map(|(n, _)| n)
    }
}

/// Every family the engine executes.
pub static FAMILIES: &[&Family] = &[&rdna2::RDNA2, &cdna::CDNA2, &cdna::CDNA3];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Op;

    #[test]
    fn families_are_found_by_processor_and_width() {
        let f = Family::for_processor("gfx1031").expect("RDNA2");
        assert_eq!(f.isa.name, "gfx1030");
        assert!(f.table::<32>().is_some());
        assert!(f.table::<64>().is_none(), "wave64 is not run yet");
        assert_eq!(f.wave_sizes().collect::<Vec<_>>(), vec![32]);
        for p in ["gfx1010", "gfx1100", "gfx940", "gfx908", "gfx900"] {
            assert!(!crate::executes(p), "{p}");
        }
        // Every operation the table executes is one the ISA decodes.
        let t = f.table::<32>().expect("wave32");
        let ops = f.isa.ops();
        for op in Op::ALL {
            if t.executes(op) {
                assert!(
                    ops.contains(&op),
                    "{} has a handler but no encoding",
                    op.name()
                );
            }
        }
        // CDNA runs wave64 only, and every handler its table has is for an operation one of
        // its two instruction sets decodes.
        for (p, name) in [("gfx90a", "gfx90a"), ("gfx942", "gfx942")] {
            let f = Family::for_processor(p).expect("CDNA");
            assert_eq!(f.isa.name, name);
            assert!(f.table::<32>().is_none());
            assert_eq!(f.wave_sizes().collect::<Vec<_>>(), vec![64]);
        }
        // The CDNA-only lists name operations one of CDNA's instruction sets decodes (the
        // shared lists also hold gfx10 operations CDNA never decodes).
        let (a, b) = (crate::isa::GFX90A.ops(), crate::isa::GFX942.ops());
        let own: [&[(Op, crate::exec::Handler<64>)]; 6] = [
            crate::exec::valu::Handlers::<64>::GFX9_TABLE,
            crate::exec::valu::Handlers::<64>::GFX9_EXTRA,
            crate::exec::vmem::Handlers::<64>::GFX9_TABLE,
            crate::exec::vmem::Handlers::<64>::GFX9_EXTRA,
            crate::exec::ds::Handlers::<64>::GFX9_TABLE,
            crate::exec::mfma::Handlers::<64>::TABLE,
        ];
        for &(op, _) in own.iter().copied().flatten() {
            assert!(
                a.contains(&op) || b.contains(&op),
                "{} has a CDNA handler but no CDNA encoding",
                op.name()
            );
            assert!(cdna::WAVE64.executes(op));
        }
    }
}
