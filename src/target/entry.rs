//! Offload-bundle entry ids: `<kind>-<triple>[-<target id>]`.
//!
//! The triple always has four components, the environment possibly empty
//! (clang's ClangOffloadBundler docs: bundles are written with the 4-field triple), so
//! `hipv4-amdgcn-amd-amdhsa--gfx10-3-generic` splits into kind `hipv4`, triple
//! `amdgcn-amd-amdhsa-` and target `gfx10-3-generic`, and `host-x86_64-unknown-linux-gnu-` has
//! no target. A three-component triple with nothing after it (`host-x86_64-unknown-linux`) is
//! accepted too. The target is parsed as a [`TargetId`] only for `amdgcn` triples; others
//! (SPIR-V's `amdgcnspirv`, CUDA's `sm_70`) are kept as text.
//!
//! This module only parses; whether an entry can run is [`super::compat::check_entry`].

use std::fmt;
use std::ops::Range;

use super::{TargetError, TargetId};

/// Longest entry id accepted (real ones are under 64 bytes).
const MAX_ENTRY_ID: usize = 4096;

/// The offload kind, the first component of an entry id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OffloadKind {
    /// `hip`: HIP device code (code objects v2/v3 era; interchangeable with `hipv4`).
    Hip,
    /// `hipv4`: HIP device code, code object v4 and later.
    HipV4,
    /// `hcc`: the legacy HCC compiler's device code.
    Hcc,
    /// `openmp`: OpenMP offload code.
    OpenMp,
    /// `host`: the host's part (usually empty).
    Host,
    /// Anything else; see [`EntryId::kind_str`].
    Other,
}

impl OffloadKind {
    fn from_text(kind: &str) -> OffloadKind {
        match kind {
            "hip" => OffloadKind::Hip,
            "hipv4" => OffloadKind::HipV4,
            "hcc" => OffloadKind::Hcc,
            "openmp" => OffloadKind::OpenMp,
            "host" => OffloadKind::Host,
            _ => OffloadKind::Other,
        }
    }

    /// Whether a HIP runtime loads entries of this kind (`hip`, `hipv4`, `hcc`).
    pub fn is_hip(self) -> bool {
        matches!(
            self,
            OffloadKind::Hip | OffloadKind::HipV4 | OffloadKind::Hcc
        )
    }
}

/// `amdgcn-amd-amdhsa-` plus the `-` before the target: what follows the kind in HIP ids.
const HSA_TRIPLE_DASHES: &str = "amdgcn-amd-amdhsa--";

/// The parsed parts of an entry id, as byte ranges into the text (no allocation for known
/// processors). Shared by [`EntryId`] and the allocation-free path of `select`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EntryParts {
    pub(crate) kind: OffloadKind,
    pub(crate) kind_range: Range<usize>,
    pub(crate) triple: Range<usize>,
    pub(crate) arch: Range<usize>,
    pub(crate) os: Range<usize>,
    pub(crate) target_text: Option<Range<usize>>,
    pub(crate) target: Option<TargetId>,
}

fn invalid(text: &str, reason: impl Into<String>) -> TargetError {
    TargetError::InvalidEntryId {
        text: text.to_string(),
        reason: reason.into(),
    }
}

impl EntryParts {
    /// Parses an entry id. The prefixes HIP compilers write are recognised without scanning
    /// (the hot path of selection); everything else, and every error, goes through
    /// [`Self::parse_general`], which gives the same result for those prefixes too (tested).
    pub(crate) fn parse(text: &str) -> Result<EntryParts, TargetError> {
        if let Some((kind, prefix_len, target)) = Self::hip_hsa_target(text) {
            // A target that parses is printable ASCII without spaces (known names, or names
            // checked by the target-ID parser), so the general parser would agree.
            if let Ok(target) = target.parse::<TargetId>() {
                let kind_len = prefix_len - HSA_TRIPLE_DASHES.len() - 1;
                let triple = kind_len + 1;
                return Ok(EntryParts {
                    kind,
                    kind_range: 0..kind_len,
                    triple: triple..prefix_len - 1,
                    arch: triple..triple + 6,
                    os: triple + 11..triple + 17,
                    target_text: Some(prefix_len..text.len()),
                    target: Some(target),
                });
            }
        }
        Self::parse_general(text)
    }

    /// For ids of the form `hip|hipv4|hcc-amdgcn-amd-amdhsa--<target>` with a non-empty target:
    /// the kind, the prefix length and the target text, unchecked. `None` for everything else.
    #[inline]
    pub(crate) fn hip_hsa_target(text: &str) -> Option<(OffloadKind, usize, &str)> {
        let bytes = text.as_bytes();
        let (kind, kind_len) = match bytes.get(..4)? {
            b"hipv" if bytes.get(4) == Some(&b'4') => (OffloadKind::HipV4, 5),
            b"hip-" => (OffloadKind::Hip, 3),
            b"hcc-" => (OffloadKind::Hcc, 3),
            _ => return None,
        };
        let prefix_len = kind_len + 1 + HSA_TRIPLE_DASHES.len();
        // A fixed-size comparison the compiler inlines (no memcmp call).
        let dashes: &[u8; 19] = bytes.get(kind_len + 1..prefix_len)?.try_into().ok()?;
        if bytes.get(kind_len) != Some(&b'-') || dashes != b"amdgcn-amd-amdhsa--" {
            return None;
        }
        let target = text.get(prefix_len..)?;
        (!target.is_empty()).then_some((kind, prefix_len, target))
    }

    pub(crate) fn parse_general(text: &str) -> Result<EntryParts, TargetError> {
        if text.is_empty() {
            return Err(invalid(text, "empty"));
        }
        if text.len() > MAX_ENTRY_ID {
            let head: String = text.chars().take(64).collect();
            return Err(invalid(&head, format!("longer than {MAX_ENTRY_ID} bytes")));
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            let bad = text
                .bytes()
                .find(|b| !b.is_ascii_graphic())
                .unwrap_or_default();
            return Err(invalid(
                text,
                format!("contains byte {bad:#04x}; entry ids are printable ASCII"),
            ));
        }
        let kind_end = text
            .find('-')
            .ok_or_else(|| invalid(text, "no '-' after the offload kind"))?;
        if kind_end == 0 {
            return Err(invalid(text, "empty offload kind"));
        }
        // Up to four triple components; each ends at the next '-' or at the end of the text.
        let triple_start = kind_end + 1;
        let mut bounds: [Range<usize>; 4] = [0..0, 0..0, 0..0, 0..0];
        let mut pos = triple_start;
        let mut count = 0;
        let mut rest_start = None;
        while count < 4 {
            let end = text[pos..].find('-').map_or(text.len(), |i| pos + i);
            bounds[count] = pos..end;
            count += 1;
            if end == text.len() {
                break;
            }
            pos = end + 1;
            if count == 4 {
                rest_start = Some(pos);
            }
        }
        if count < 3 {
            return Err(invalid(text, "the triple needs at least arch-vendor-os"));
        }
        if bounds[..3].iter().any(|r| r.is_empty()) {
            return Err(invalid(text, "empty arch, vendor or os in the triple"));
        }
        let triple_end = bounds[count - 1].end;
        let target_text = rest_start
            .filter(|&s| s < text.len())
            .map(|s| s..text.len());
        let arch = bounds[0].clone();
        let target = match &target_text {
            Some(range) if &text[arch.clone()] == "amdgcn" => Some(
                text[range.clone()]
                    .parse::<TargetId>()
                    .map_err(|e| invalid(text, format!("target: {e}")))?,
            ),
            _ => None,
        };
        Ok(EntryParts {
            kind: OffloadKind::from_text(&text[..kind_end]),
            kind_range: 0..kind_end,
            triple: triple_start..triple_end,
            arch,
            os: bounds[2].clone(),
            target_text,
            target,
        })
    }
}

/// A parsed offload-bundle entry id. `Display` prints the original text unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryId {
    text: String,
    parts: EntryParts,
}

impl EntryId {
    /// Parses an entry id.
    ///
    /// # Errors
    /// [`TargetError::InvalidEntryId`] if there is no kind, the triple has fewer than three
    /// components, the text is not printable ASCII (no spaces), or an `amdgcn` entry's
    /// target ID is malformed. Unknown processor names are *not* errors.
    pub fn parse(text: &str) -> Result<EntryId, TargetError> {
        Ok(EntryId {
            parts: EntryParts::parse(text)?,
            text: text.to_string(),
        })
    }

    /// The offload kind.
    pub fn kind(&self) -> OffloadKind {
        self.parts.kind
    }

    /// The offload kind as written (`hipv4`, or whatever an [`OffloadKind::Other`] says).
    pub fn kind_str(&self) -> &str {
        &self.text[self.parts.kind_range.clone()]
    }

    /// The target triple as written (`amdgcn-amd-amdhsa-`).
    pub fn triple(&self) -> &str {
        &self.text[self.parts.triple.clone()]
    }

    /// The triple's architecture (`amdgcn`, `spirv64`, `x86_64`).
    pub fn arch(&self) -> &str {
        &self.text[self.parts.arch.clone()]
    }

    /// The triple's OS (`amdhsa`, `linux`).
    pub fn os(&self) -> &str {
        &self.text[self.parts.os.clone()]
    }

    /// The target ID, for `amdgcn` entries that have one.
    pub fn target(&self) -> Option<&TargetId> {
        self.parts.target.as_ref()
    }

    /// The target part as written, for any triple (`amdgcnspirv`, `sm_70`, `gfx90a:xnack-`).
    pub fn target_str(&self) -> Option<&str> {
        self.parts.target_text.clone().map(|r| &self.text[r])
    }

    /// Whether this is a SPIR-V entry (`spirv*` triple), which needs a JIT.
    pub fn is_spirv(&self) -> bool {
        self.arch().starts_with("spirv")
    }

    /// Whether this is the host's entry.
    pub fn is_host(&self) -> bool {
        self.parts.kind == OffloadKind::Host
    }

    /// The original text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub(crate) fn parts(&self) -> &EntryParts {
        &self.parts
    }
}

/// Whether the entry id `id` is what `wanted` names: the full id, or its target part
/// (`gfx90a:xnack-` names `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`). An id that does not parse
/// matches only itself.
pub fn entry_matches(id: &str, wanted: &str) -> bool {
    id == wanted
        || EntryParts::parse(id)
            .ok()
            .and_then(|p| p.target_text)
            .is_some_and(|r| id.get(r) == Some(wanted))
}

impl AsRef<str> for EntryId {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl std::str::FromStr for EntryId {
    type Err = TargetError;
    fn from_str(text: &str) -> Result<EntryId, TargetError> {
        EntryId::parse(text)
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hip_entries() {
        let e = EntryId::parse("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-").unwrap();
        assert_eq!(e.kind(), OffloadKind::HipV4);
        assert_eq!(e.kind_str(), "hipv4");
        assert_eq!(e.triple(), "amdgcn-amd-amdhsa-");
        assert_eq!((e.arch(), e.os()), ("amdgcn", "amdhsa"));
        assert_eq!(e.target().unwrap().to_string(), "gfx90a:sramecc+:xnack-");
        assert_eq!(e.target_str(), Some("gfx90a:sramecc+:xnack-"));
        assert!(!e.is_spirv() && !e.is_host());
        assert_eq!(
            e.to_string(),
            "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"
        );

        let e = EntryId::parse("hip-amdgcn-amd-amdhsa--gfx10-3-generic").unwrap();
        assert_eq!(e.kind(), OffloadKind::Hip);
        assert_eq!(e.target().unwrap().to_string(), "gfx10-3-generic");

        let e = EntryId::parse("hcc-amdgcn-amd-amdhsa--gfx906").unwrap();
        assert_eq!(e.kind(), OffloadKind::Hcc);
        let e = EntryId::parse("openmp-amdgcn-amd-amdhsa--gfx906").unwrap();
        assert_eq!(e.kind(), OffloadKind::OpenMp);
        // Non-canonical feature order round-trips as written.
        let e = EntryId::parse("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-:sramecc+").unwrap();
        assert_eq!(
            e.to_string(),
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-:sramecc+"
        );
        // Unknown processors parse.
        let e = EntryId::parse("hipv4-amdgcn-amd-amdhsa--gfx1250").unwrap();
        assert_eq!(e.target().unwrap().processor().name(), "gfx1250");
    }

    #[test]
    fn host_and_spirv_entries() {
        for text in [
            "host-x86_64-unknown-linux-gnu-",
            "host-x86_64-unknown-linux--",
            "host-x86_64-unknown-linux-gnu",
            "host-x86_64-unknown-linux",
        ] {
            let e = EntryId::parse(text).unwrap();
            assert!(e.is_host(), "{text}");
            assert_eq!(e.target(), None);
            assert_eq!(e.target_str(), None);
            assert_eq!(e.arch(), "x86_64");
            assert_eq!(e.to_string(), text);
        }
        let e = EntryId::parse("host-x86_64-unknown-linux-gnu-").unwrap();
        assert_eq!(e.triple(), "x86_64-unknown-linux-gnu");
        let e = EntryId::parse("hip-spirv64-amd-amdhsa--amdgcnspirv").unwrap();
        assert!(e.is_spirv());
        assert_eq!(e.target(), None);
        assert_eq!(e.target_str(), Some("amdgcnspirv"));
        let e = EntryId::parse("openmp-nvptx64-nvidia-cuda--sm_70").unwrap();
        assert_eq!(e.target_str(), Some("sm_70"));
        assert_eq!(e.arch(), "nvptx64");
        let e = EntryId::parse("hipv4-amdgcn-amd-amdhsa-").unwrap();
        assert_eq!(e.target(), None);
    }

    #[test]
    fn fast_path_agrees_with_the_general_parser() {
        let targets = [
            "gfx90a",
            "gfx90a:xnack-",
            "gfx90a:sramecc+:xnack+",
            "gfx10-3-generic",
            "gfx1250",
            "",
            "gfx1030:xnack+",
            "gfx90a:xnack",
            "a b",
            "gfx\u{e9}",
            "-",
            "gfx1030-",
        ];
        for kind in ["hip", "hipv4", "hcc", "openmp"] {
            for target in targets {
                let text = format!("{kind}-amdgcn-amd-amdhsa--{target}");
                assert_eq!(
                    EntryParts::parse(&text),
                    EntryParts::parse_general(&text),
                    "{text}"
                );
            }
        }
        let long = format!("hipv4-amdgcn-amd-amdhsa--{}", "x".repeat(5000));
        assert_eq!(EntryParts::parse(&long), EntryParts::parse_general(&long));
    }

    #[test]
    fn malformed_entries_are_errors() {
        for bad in [
            "",
            "hipv4",
            "-amdgcn-amd-amdhsa--gfx90a",
            "hipv4-amdgcn",
            "hipv4-amdgcn-amd",
            "hipv4-amdgcn--amdhsa--gfx90a",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack",
            "hipv4-amdgcn-amd-amdhsa--gfx1030:xnack+",
            "hipv4-amdgcn-amd-amdhsa--gfx 90a",
            "hipv4-amdgcn-amd-amdhsa--gfx90a\n",
        ] {
            let err = EntryId::parse(bad).unwrap_err();
            assert!(
                matches!(err, TargetError::InvalidEntryId { .. }),
                "{bad:?}: {err}"
            );
        }
        assert!(EntryId::parse(&"h-".repeat(5000)).is_err());
    }
}
