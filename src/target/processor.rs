//! The AMDGCN processor table: names, `EF_AMDGPU_MACH` values, features, generic families.
//!
//! The data lives in `processors.tsv` (with its sources) and is compiled in by `build.rs`;
//! nothing here is hand-maintained. This module answers "what is this processor", not "can this
//! code run there" (that is [`super::compat`]).

use std::fmt;

/// An ISA version `major.minor.stepping` as ROCr and `HSA_OVERRIDE_GFX_VERSION` spell it:
/// gfx90a is 9.0.10, gfx1031 is 10.3.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GfxVersion {
    /// Major version (9 for gfx90a).
    pub major: u32,
    /// Minor version (0 for gfx90a).
    pub minor: u32,
    /// Stepping (10 for gfx90a).
    pub stepping: u32,
}

impl fmt::Display for GfxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.stepping)
    }
}

/// One AMDGCN processor (a real GPU or a generic target) as LLVM and ROCr know it.
///
/// Values come from `src/target/processors.tsv`; see that file for the source of each column.
/// Only the table creates `Processor`s: compare them by reference or by `mach`.
#[derive(Debug, PartialEq, Eq)]
pub struct Processor {
    /// Canonical name, e.g. `gfx90a` or `gfx10-3-generic`.
    pub name: &'static str,
    /// Other names LLVM accepts (`fiji` for gfx803); never printed.
    pub aliases: &'static [&'static str],
    /// `EF_AMDGPU_MACH` value (e_flags bits 0–7).
    pub mach: u32,
    /// ISA version for real processors; `None` for generic targets.
    pub version: Option<GfxVersion>,
    /// ISA generation as AMDGPUUsage groups processors: `GFX9`, `GFX9.4`, `GFX10.3`, `GFX11.5`, …
    pub family: &'static str,
    /// The generic target this processor can run code for, e.g. `gfx10-3-generic` for gfx1031.
    pub generic_family: Option<&'static str>,
    /// The lowest generic version of [`Self::generic_family`] that this processor runs
    /// (the version at which it joined the family); 0 when it has no family.
    pub generic_min_version: u32,
    /// Whether the `xnack` target feature exists on this processor.
    pub supports_xnack: bool,
    /// Whether the `sramecc` target feature exists on this processor.
    pub supports_sramecc: bool,
    /// Hardware default wavefront size: 32 for gfx10 and later, 64 before. gfx10+ also run
    /// wave64 code; the kernel descriptor says which one a kernel uses.
    pub wavefront_size: u32,
    /// Whether this is a generic target (`gfx*-generic`), which is never a device.
    pub generic: bool,
    /// Extended-policy group this processor belongs to as an agent (the distributions' extended table): it may
    /// also run code built for any processor whose [`Self::extended_code_group`] is the same.
    pub extended_agent_group: Option<&'static str>,
    /// Extended-policy group whose agents may run code built for this processor.
    pub extended_code_group: Option<&'static str>,
    /// Whether clang, llc and llvm-readelf 19 know this processor (fixtures exist for it).
    pub known_to_clang19: bool,
    generic_index: Option<usize>,
}

include!(concat!(env!("OUT_DIR"), "/processors.rs"));
include!("name_hash.rs");

/// Perfect-hash lookup: one hash, one comparison of packed words.
#[inline]
fn index_by_name(name: &str) -> Option<usize> {
    if name.len() > MAX_NAME_LEN {
        return None;
    }
    let (lo, hi) = pack_name(name.as_bytes());
    let slot = (name_hash(lo, hi, name.len(), NAME_SEED) >> (64 - NAME_SLOT_BITS)) as usize;
    let k = usize::from(*NAME_SLOTS.get(slot)?);
    let &(want_lo, want_hi, want_len, index) = NAMES.get(k.checked_sub(1)?)?;
    (want_lo == lo && want_hi == hi && want_len == name.len()).then_some(index)
}

/// The known processor named by `text` up to its first `:` (or its end), with the name's
/// length: the target-ID parser's hot path. Packs at most 16 bytes and finds the `:` with word
/// operations instead of a byte loop. `None` for anything else (unknown, empty or long names),
/// which the caller handles the slow way.
#[inline]
pub(crate) fn known_name_prefix(text: &str) -> Option<(&'static Processor, usize)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const COLONS: u64 = ONES * b':' as u64;
    // Flags zero bytes of w ^ COLONS; the lowest flag is always exact.
    let colons = |w: u64| {
        let x = w ^ COLONS;
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    let bytes = text.as_bytes();
    let (lo, hi) = pack_name(bytes);
    let (c_lo, c_hi) = (colons(lo), colons(hi));
    let colon = if c_lo != 0 {
        (c_lo.trailing_zeros() / 8) as usize
    } else if c_hi != 0 {
        8 + (c_hi.trailing_zeros() / 8) as usize
    } else {
        usize::MAX
    };
    let len = if colon < bytes.len() {
        colon
    } else if bytes.len() <= MAX_NAME_LEN {
        bytes.len()
    } else {
        return None;
    };
    if len == 0 || len > MAX_NAME_LEN {
        return None;
    }
    let keep = |w: u64, n: usize| match n {
        0 => 0,
        1..=7 => w & ((1u64 << (8 * n)) - 1),
        _ => w,
    };
    let (lo, hi) = (keep(lo, len), keep(hi, len.saturating_sub(8)));
    let slot = (name_hash(lo, hi, len, NAME_SEED) >> (64 - NAME_SLOT_BITS)) as usize;
    let k = usize::from(*NAME_SLOTS.get(slot)?);
    let &(want_lo, want_hi, want_len, index) = NAMES.get(k.checked_sub(1)?)?;
    if want_lo == lo && want_hi == hi && want_len == len {
        Some((PROCESSORS.get(index)?, len))
    } else {
        None
    }
}

impl Processor {
    /// Looks a processor up by canonical name or alias (`gfx803`, `fiji`). Case-sensitive,
    /// like LLVM.
    pub fn by_name(name: &str) -> Option<&'static Processor> {
        index_by_name(name).and_then(|i| PROCESSORS.get(i))
    }

    /// Looks a processor up by its `EF_AMDGPU_MACH` value.
    pub fn by_mach(mach: u32) -> Option<&'static Processor> {
        index_by_mach(mach).and_then(|i| PROCESSORS.get(i))
    }

    /// The real (non-generic) processor with this ISA version, e.g. 10.3.0 → gfx1030.
    pub fn by_version(version: GfxVersion) -> Option<&'static Processor> {
        PROCESSORS.iter().find(|p| p.version == Some(version))
    }

    /// Every processor in the table, real ones first, generic targets last.
    pub fn all() -> &'static [Processor] {
        &PROCESSORS
    }

    /// The generic target this processor belongs to, as a table entry.
    pub fn generic(&self) -> Option<&'static Processor> {
        self.generic_index.and_then(|i| PROCESSORS.get(i))
    }

    /// The real processors that run code built for this generic target (empty for real ones).
    pub fn generic_members(&'static self) -> impl Iterator<Item = &'static Processor> {
        PROCESSORS
            .iter()
            .filter(move |p| p.generic().is_some_and(|g| std::ptr::eq(g, self)))
    }

    /// Whether an agent with this processor may run code built for `code` under the extended
    /// policy (the distributions' table). False for the same processor: that is not an extension.
    pub fn extended_runs(&self, code: &Processor) -> bool {
        !std::ptr::eq(self, code)
            && self.extended_agent_group.is_some()
            && self.extended_agent_group == code.extended_code_group
    }

    /// Whether `feature` exists on this processor.
    pub fn supports(&self, feature: super::Feature) -> bool {
        match feature {
            super::Feature::Xnack => self.supports_xnack,
            super::Feature::Sramecc => self.supports_sramecc,
        }
    }
}

impl std::hash::Hash for Processor {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // mach is unique in the table.
        self.mach.hash(state);
    }
}

impl fmt::Display for Processor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_agree_with_the_table() {
        for p in Processor::all() {
            assert!(std::ptr::eq(Processor::by_name(p.name).unwrap(), p));
            assert!(std::ptr::eq(Processor::by_mach(p.mach).unwrap(), p));
            for a in p.aliases {
                assert!(std::ptr::eq(Processor::by_name(a).unwrap(), p));
            }
            if let Some(v) = p.version {
                assert!(std::ptr::eq(Processor::by_version(v).unwrap(), p));
            }
            assert_eq!(p.generic, p.version.is_none());
        }
        assert!(Processor::by_name("gfx1250").is_none());
        assert!(Processor::by_name("GFX90A").is_none());
        assert!(Processor::by_mach(0).is_none());
        assert!(Processor::by_mach(0x100).is_none());
    }

    #[test]
    fn name_prefix_lookup() {
        let find = |t: &str| known_name_prefix(t).map(|(p, len)| (p.name, len));
        for p in Processor::all() {
            for name in std::iter::once(&p.name).chain(p.aliases) {
                assert_eq!(find(name), Some((p.name, name.len())));
                assert_eq!(find(&format!("{name}:xnack+")), Some((p.name, name.len())));
                assert_eq!(find(&format!("{name}:")), Some((p.name, name.len())));
                assert_eq!(find(&format!("{name}x")), None);
                assert_eq!(find(&format!("{name}x:xnack+")), None);
            }
        }
        for t in [
            "",
            ":",
            ":gfx90a",
            "gfx1250",
            "gfx1250:xnack+",
            "gfx90",
            "gfx10-3-generic-long:x",
            "gfx90a\0",
            "gfx9\u{e9}",
        ] {
            assert_eq!(find(t), None, "{t:?}");
        }
        let long = format!("gfx90a:{}", "x".repeat(100));
        assert_eq!(find(&long), Some(("gfx90a", 6)));
    }

    proptest::proptest! {
        #[test]
        fn name_prefix_lookup_matches_a_byte_scan(text in "(gfx[0-9a-c]{1,4}|gfx1[0-2]-[0-9]-generic|fiji|[a-z0-9:-]{0,20})(:[a-z+-]{0,10}){0,2}") {
            let slow = {
                let end = text.find(':').unwrap_or(text.len());
                Processor::by_name(&text[..end]).map(|p| (p.name, end))
            };
            proptest::prop_assert_eq!(known_name_prefix(&text).map(|(p, n)| (p.name, n)), slow);
        }
    }

    #[test]
    fn name_packing_is_exact() {
        let naive = |name: &[u8]| {
            let mut words = [0u64; 2];
            for (i, &b) in name.iter().take(16).enumerate() {
                words[i / 8] |= u64::from(b) << (8 * (i % 8));
            }
            (words[0], words[1])
        };
        let text = b"abcdefghijklmnopqrstu";
        for len in 0..=text.len() {
            assert_eq!(pack_name(&text[..len]), naive(&text[..len]), "{len}");
        }
        for name in [
            "",
            "g",
            "gfx",
            "gfx1",
            "gfx90",
            "gfx90a:",
            "gfx10-3-generic-x",
            "gfx10-3-generi",
        ] {
            assert!(Processor::by_name(name).is_none(), "{name}");
        }
    }

    #[test]
    fn versions_follow_the_names() {
        let v = |n: &str| Processor::by_name(n).unwrap().version.unwrap();
        assert_eq!(
            v("gfx90a"),
            GfxVersion {
                major: 9,
                minor: 0,
                stepping: 10
            }
        );
        assert_eq!(
            v("gfx90c"),
            GfxVersion {
                major: 9,
                minor: 0,
                stepping: 12
            }
        );
        assert_eq!(
            v("gfx1031"),
            GfxVersion {
                major: 10,
                minor: 3,
                stepping: 1
            }
        );
        assert_eq!(v("gfx1151").to_string(), "11.5.1");
        assert_eq!(v("fiji").to_string(), "8.0.3");
    }

    #[test]
    fn generic_families_match_amdgpu_usage() {
        // AMDGPUUsage, "Generic processor code objects": every family.
        let members = |g: &str| -> Vec<&str> {
            Processor::by_name(g)
                .unwrap()
                .generic_members()
                .map(|p| p.name)
                .collect()
        };
        assert_eq!(
            members("gfx9-generic"),
            ["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"]
        );
        assert_eq!(
            members("gfx9-4-generic"),
            ["gfx940", "gfx941", "gfx942", "gfx950"]
        );
        assert_eq!(
            members("gfx10-1-generic"),
            ["gfx1010", "gfx1011", "gfx1012", "gfx1013"]
        );
        assert_eq!(
            members("gfx10-3-generic"),
            ["gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"]
        );
        assert_eq!(
            members("gfx11-generic"),
            [
                "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152",
                "gfx1153"
            ]
        );
        assert_eq!(members("gfx12-generic"), ["gfx1200", "gfx1201"]);
        let feats = |g: &str| {
            let p = Processor::by_name(g).unwrap();
            (p.supports_xnack, p.supports_sramecc)
        };
        assert_eq!(feats("gfx9-generic"), (true, false));
        assert_eq!(feats("gfx9-4-generic"), (true, true));
        assert_eq!(feats("gfx10-1-generic"), (true, false));
        assert_eq!(feats("gfx10-3-generic"), (false, false));
        assert_eq!(feats("gfx11-generic"), (false, false));
        assert_eq!(feats("gfx12-generic"), (false, false));
    }

    #[test]
    fn mach_values_match_amdgpu_usage() {
        // AMDGPUUsage's EF_AMDGPU_MACH table, every row.
        let expected: &[(&str, u32)] = &[
            ("gfx900", 0x2c),
            ("gfx902", 0x2d),
            ("gfx904", 0x2e),
            ("gfx906", 0x2f),
            ("gfx908", 0x30),
            ("gfx909", 0x31),
            ("gfx90c", 0x32),
            ("gfx90a", 0x3f),
            ("gfx940", 0x40),
            ("gfx941", 0x4b),
            ("gfx942", 0x4c),
            ("gfx950", 0x4f),
            ("gfx1010", 0x33),
            ("gfx1011", 0x34),
            ("gfx1012", 0x35),
            ("gfx1013", 0x42),
            ("gfx1030", 0x36),
            ("gfx1031", 0x37),
            ("gfx1032", 0x38),
            ("gfx1033", 0x39),
            ("gfx1034", 0x3e),
            ("gfx1035", 0x3d),
            ("gfx1036", 0x45),
            ("gfx1100", 0x41),
            ("gfx1101", 0x46),
            ("gfx1102", 0x47),
            ("gfx1103", 0x44),
            ("gfx1150", 0x43),
            ("gfx1151", 0x4a),
            ("gfx1152", 0x55),
            ("gfx1153", 0x58),
            ("gfx1200", 0x48),
            ("gfx1201", 0x4e),
            ("gfx9-generic", 0x51),
            ("gfx10-1-generic", 0x52),
            ("gfx10-3-generic", 0x53),
            ("gfx11-generic", 0x54),
            ("gfx12-generic", 0x59),
            ("gfx9-4-generic", 0x5f),
        ];
        for &(name, mach) in expected {
            assert_eq!(
                Processor::by_name(name).map(|p| p.mach),
                Some(mach),
                "{name}"
            );
        }
    }

    #[test]
    fn extended_groups_match_the_distributions_table() {
        let runs = |a: &str, c: &str| {
            Processor::by_name(a)
                .unwrap()
                .extended_runs(Processor::by_name(c).unwrap())
        };
        for agent in ["gfx900", "gfx902", "gfx906", "gfx909", "gfx90c"] {
            for code in ["gfx900", "gfx902", "gfx909", "gfx90c"] {
                assert_eq!(runs(agent, code), agent != code, "{agent} {code}");
            }
            assert!(!runs(agent, "gfx904"));
            assert!(!runs("gfx904", agent));
            if agent != "gfx906" {
                assert!(!runs(agent, "gfx906"));
            }
        }
        for agent in ["gfx1011", "gfx1012", "gfx1013"] {
            assert!(runs(agent, "gfx1010"));
            assert!(!runs("gfx1010", agent));
        }
        for a in 0..=6 {
            for c in 0..=6 {
                assert_eq!(runs(&format!("gfx103{a}"), &format!("gfx103{c}")), a != c);
            }
        }
        assert!(!runs("gfx1101", "gfx1100"));
        assert!(!runs("gfx1030", "gfx1010"));
    }

    #[test]
    fn wavefront_sizes() {
        for p in Processor::all() {
            let gfx10_or_later = p.family.starts_with("GFX1");
            assert_eq!(
                p.wavefront_size,
                if gfx10_or_later { 32 } else { 64 },
                "{}",
                p.name
            );
        }
    }
}
