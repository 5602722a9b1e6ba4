//! Handler tables: for one family and one wave width, the handler of every [`Op`] (indexed
//! by the operation, so a uop's handler is one array load away and no name is ever looked
//! up), built at compile time from the instruction-class modules' lists. `v_cmpx_*` share
//! their `v_cmp_*` handler (lowering points their destination at EXEC). Operations without a
//! handler, and forms lowering refuses, run [`super::unsupported`]. Not for choosing which
//! table a dispatch uses (the family does).

use super::{gpr_indexed, unsupported, Handler, HandlerId};
use crate::isa::Op;

/// One handler per operation, plus [`HandlerId::UNSUPPORTED`] and [`HandlerId::GPR_INDEXED`].
pub struct Table<const N: usize> {
    handlers: [Handler<N>; Op::COUNT + 2],
    /// Whether each operation has a handler of its own (for coverage reports).
    executes: [bool; Op::COUNT],
}

impl<const N: usize> Table<N> {
    /// The table of the handlers in `lists` (later lists override earlier ones).
    pub const fn build(lists: &[&[(Op, Handler<N>)]]) -> Table<N> {
        let mut handlers: [Handler<N>; Op::COUNT + 2] = [unsupported::<N> as Handler<N>; Op::COUNT + 2];
        handlers[Op::COUNT + 1] = gpr_indexed::<N>;
        let mut executes = [false; Op::COUNT];
        let mut i = 0;
        while i < lists.len() {
            let list = lists[i];
            let mut j = 0;
            while j < list.len() {
                let (op, h) = list[j];
                handlers[op as usize] = h;
                executes[op as usize] = true;
                j += 1;
            }
            i += 1;
        }
        // v_cmpx_X is v_cmp_X writing EXEC.
        let mut k = 0;
        while k < Op::COUNT {
            if !executes[k] {
                if let Some(base) = cmp_of_cmpx(Op::ALL[k]) {
                    if executes[base as usize] {
                        handlers[k] = handlers[base as usize];
                        executes[k] = true;
                    }
                }
            }
            k += 1;
        }
        Table { handlers, executes }
    }

    /// The handler `id` names.
    #[inline(always)]
    pub fn get(&self, id: HandlerId) -> Handler<N> {
        // Ids come from lowering (an `Op` or UNSUPPORTED); anything else is unsupported.
        match self.handlers.get(usize::from(id.0)) {
            Some(h) => *h,
            None => unsupported::<N>,
        }
    }

    /// Whether `op` has a handler.
    pub fn executes(&self, op: Op) -> bool {
        self.executes[op as usize]
    }

    /// How many operations have a handler.
    pub fn count(&self) -> usize {
        self.executes.iter().filter(|&&e| e).count()
    }
}

/// The `v_cmp_*` operation a `v_cmpx_*` one is the EXEC-writing form of.
const fn cmp_of_cmpx(op: Op) -> Option<Op> {
    let name = op.name().as_bytes();
    let prefix = b"v_cmpx_";
    if name.len() <= prefix.len() {
        return None;
    }
    let mut i = 0;
    while i < prefix.len() {
        if name[i] != prefix[i] {
            return None;
        }
        i += 1;
    }
    // Search the sorted names for "v_cmp_" followed by the rest.
    let (mut lo, mut hi) = (0, Op::COUNT);
    while lo < hi {
        let mid = (lo + hi) / 2;
        match compare_cmp(Op::ALL[mid].name().as_bytes(), name) {
            core::cmp::Ordering::Less => lo = mid + 1,
            core::cmp::Ordering::Greater => hi = mid,
            core::cmp::Ordering::Equal => return Some(Op::ALL[mid]),
        }
    }
    None
}

/// Compares `candidate` with `"v_cmp_" + cmpx[7..]`.
const fn compare_cmp(candidate: &[u8], cmpx: &[u8]) -> core::cmp::Ordering {
    let want_len = cmpx.len() - 1;
    let mut i = 0;
    while i < candidate.len() && i < want_len {
        let w = if i < 6 { b"v_cmp_"[i] } else { cmpx[i + 1] };
        if candidate[i] != w {
            return if candidate[i] < w {
                core::cmp::Ordering::Less
            } else {
                core::cmp::Ordering::Greater
            };
        }
        i += 1;
    }
    if candidate.len() < want_len {
        core::cmp::Ordering::Less
    } else if candidate.len() > want_len {
        core::cmp::Ordering::Greater
    } else {
        core::cmp::Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmpx_forms_find_their_compare() {
        assert_eq!(cmp_of_cmpx(Op::VCmpxLtF32), Some(Op::VCmpLtF32));
        assert_eq!(cmp_of_cmpx(Op::VCmpxClassF64), Some(Op::VCmpClassF64));
        assert_eq!(cmp_of_cmpx(Op::VCmpLtF32), None);
        assert_eq!(Op::from_name("v_cmpx_tru_f16"), Some(Op::VCmpxTruF16));
        assert_eq!(Op::from_name("v_cmpx_nope"), None);
    }
}
