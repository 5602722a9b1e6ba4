//! HIP's three ABI generations over one runtime. Programs and libraries built with HIP 5.x ask
//! for `libamdhip64.so.5`, 6.x for `.so.6`, 7.x for `.so.7`; the version nodes of their imports
//! are the same in all three (a name keeps its node forever), so the soname is what tells the
//! generations apart. Each soname is a thin library over librocload.so (built by
//! `capi/build.rs` from `sonames/thin.c`) whose constructor announces its generation here;
//! every symbol is librocload.so's, so a process mixing a HIP 5 and a HIP 7 library sees one
//! set of devices, one allocation table and one set of handles.
//!
//! What differs between generations is translated at the boundary, by [`current`]: the
//! version `hipRuntimeGetVersion` reports, `hipGetLastError`'s meaning (7.0), the numbering of
//! `hipMemoryType` (6.0). A process that loaded several generations follows the newest for
//! those names (the dynamic loader binds every caller to the same definition, so a per-caller
//! answer is impossible without knowing the caller); one linked against librocload.so
//! directly, with Debian's HIP 5.2 headers, is generation 5. Not for entry points that exist
//! in one generation only (`hipGetDevicePropertiesR0600`): those simply exist.

use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicU8, Ordering};

use rocload_ffi::export;

/// A HIP ABI generation: the soname's major version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Generation {
    /// `libamdhip64.so.5`: HIP 5.x (what Debian's HIP 5.2.3 headers describe).
    Hip5 = 5,
    /// `libamdhip64.so.6`: HIP 6.0 to 6.4.
    Hip6 = 6,
    /// `libamdhip64.so.7`: HIP 7.x.
    Hip7 = 7,
}

impl Generation {
    /// `HIP_VERSION` (major x 10^7 + minor x 10^5 + patch) of the release whose behaviour
    /// rocload follows for this generation: 5.2.3 (Debian's), 6.4 and 7.1, as their headers
    /// and `../shared/hip-abi/INDEX.tsv` give them.
    pub fn hip_version(self) -> c_int {
        match self {
            Generation::Hip5 => 50_221_153,
            Generation::Hip6 => 60_443_484,
            Generation::Hip7 => 70_152_802,
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8 - 5)
    }
}

/// Generations announced by loaded sonames, one bit each.
static ANNOUNCED: AtomicU8 = AtomicU8::new(0);

/// The generation the process's callers were built for: the newest announced, else 5.
pub fn current() -> Generation {
    let bits = ANNOUNCED.load(Ordering::Relaxed);
    [Generation::Hip7, Generation::Hip6, Generation::Hip5]
        .into_iter()
        .find(|g| bits & g.bit() != 0)
        .unwrap_or(Generation::Hip5)
}

/// Every generation announced so far, oldest first.
pub fn announced() -> Vec<Generation> {
    let bits = ANNOUNCED.load(Ordering::Relaxed);
    [Generation::Hip5, Generation::Hip6, Generation::Hip7]
        .into_iter()
        .filter(|g| bits & g.bit() != 0)
        .collect()
}

/// `void rocload_hip_generation(int generation, const char* library)`: called by the thin
/// sonames' constructors (`libamdhip64.so.7` announces 7). Unknown generations are ignored.
///
/// # Safety
/// `library` is NULL or a NUL-terminated string.
#[export]
pub unsafe extern "C" fn rocload_hip_generation(generation: c_int, library: *const c_char) {
    let g = match generation {
        5 => Generation::Hip5,
        6 => Generation::Hip6,
        7 => Generation::Hip7,
        _ => return,
    };
    ANNOUNCED.fetch_or(g.bit(), Ordering::Relaxed);
    // A tracer set earlier follows the generation's record layout.
    crate::profiling::generation_changed();
    let name = if library.is_null() {
        "?".into()
    } else {
        // SAFETY: a NUL-terminated string by the caller's contract (a literal in thin.c).
        unsafe { CStr::from_ptr(library) }.to_string_lossy()
    };
    crate::run_marker(&format!("loaded {name}"));
    tracing::debug!(library = %name, generation, "HIP generation announced");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_announced_generation_decides() {
        assert_eq!(Generation::Hip6.hip_version() / 10_000_000, 6);
        assert_eq!(Generation::Hip7.hip_version() / 100_000 % 100, 1);
        let before = ANNOUNCED.load(Ordering::Relaxed);
        // SAFETY: a literal.
        unsafe { rocload_hip_generation(9, c"libamdhip64.so.9".as_ptr()) };
        assert_eq!(
            ANNOUNCED.load(Ordering::Relaxed),
            before,
            "unknown ones are ignored"
        );
        ANNOUNCED.store(
            Generation::Hip5.bit() | Generation::Hip7.bit(),
            Ordering::Relaxed,
        );
        assert_eq!(current(), Generation::Hip7);
        assert_eq!(announced(), [Generation::Hip5, Generation::Hip7]);
        ANNOUNCED.store(before, Ordering::Relaxed);
    }
}
