//! Target IDs (`gfx90a:sramecc+:xnack-`) and full ISA names (`amdgcn-amd-amdhsa--gfx90a`).
//!
//! Grammar (LLVM AMDGPUUsage "Target ID"): a processor name followed by zero
//! or more `:<feature><+|->`; the features are `xnack` and `sramecc`; an omitted feature means
//! "any". Canonical printing sorts the features (`sramecc` before `xnack`) and spells the
//! processor by its canonical name (`fiji` prints as `gfx803`).
//!
//! An unknown processor name (a newer compiler's `gfx1250`) still parses, as
//! [`ProcessorRef::Unknown`], so that selection can refuse it with a reason. This module does
//! not decide compatibility ([`super::compat`] does).

use std::fmt;
use std::str::FromStr;

use super::{Processor, TargetError};

/// The prefix of a full ISA name for the HSA runtime: `amdgcn-amd-amdhsa--`.
pub const ISA_NAME_PREFIX: &str = "amdgcn-amd-amdhsa--";

/// Longest processor name accepted for an unknown processor (known ones are at most 15).
const MAX_UNKNOWN_NAME: usize = 64;

/// A target feature of AMDGCN processors. Ordered as in canonical target IDs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Feature {
    /// SRAM ECC.
    Sramecc,
    /// XNACK replay (needed for demand paging of device memory).
    Xnack,
}

impl Feature {
    /// Both features, in canonical order.
    pub const ALL: [Feature; 2] = [Feature::Sramecc, Feature::Xnack];

    /// The feature's name in target IDs.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Sramecc => "sramecc",
            Feature::Xnack => "xnack",
        }
    }

    fn from_name(name: &str) -> Option<Feature> {
        match name {
            "sramecc" => Some(Feature::Sramecc),
            "xnack" => Some(Feature::Xnack),
            _ => None,
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The setting of one feature in a target ID.
///
/// "Unsupported" (the processor has no such feature) is `None` in an `Option<FeatureMode>`
/// wherever a feature is reported ([`TargetId::feature`], [`super::AgentIsa::feature`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureMode {
    /// Not specified: the code works with the feature on or off. Never a device's mode.
    Any,
    /// `+`: the code needs the feature on.
    On,
    /// `-`: the code needs the feature off.
    Off,
}

impl FeatureMode {
    /// `Some(true)` for on, `Some(false)` for off, `None` for any.
    pub fn as_bool(self) -> Option<bool> {
        match self {
            FeatureMode::Any => None,
            FeatureMode::On => Some(true),
            FeatureMode::Off => Some(false),
        }
    }

    /// On for `true`, off for `false`.
    pub fn from_bool(on: bool) -> FeatureMode {
        if on {
            FeatureMode::On
        } else {
            FeatureMode::Off
        }
    }

    /// `on`, `off` or `any`, as used in explanations.
    pub fn word(self) -> &'static str {
        match self {
            FeatureMode::Any => "any",
            FeatureMode::On => "on",
            FeatureMode::Off => "off",
        }
    }
}

/// The processor of a target ID: one from the table, or a name the table does not know.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ProcessorRef {
    /// A processor in [`Processor::all`].
    Known(&'static Processor),
    /// A syntactically valid name that is not in the table (e.g. from a newer compiler).
    Unknown(Box<str>),
}

impl ProcessorRef {
    /// The processor's canonical name, or the unknown name as written.
    pub fn name(&self) -> &str {
        match self {
            ProcessorRef::Known(p) => p.name,
            ProcessorRef::Unknown(name) => name,
        }
    }

    /// The table entry, if the processor is known.
    pub fn known(&self) -> Option<&'static Processor> {
        match self {
            ProcessorRef::Known(p) => Some(p),
            ProcessorRef::Unknown(_) => None,
        }
    }
}

/// A target ID: processor plus the `xnack` and `sramecc` settings.
///
/// For a known processor, a feature it lacks is `None` and a feature it has is
/// `Some(Any|On|Off)`. For an unknown processor an omitted feature is `Some(Any)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TargetId {
    processor: ProcessorRef,
    sramecc: Option<FeatureMode>,
    xnack: Option<FeatureMode>,
}

fn invalid(text: &str, reason: impl Into<String>) -> TargetError {
    TargetError::InvalidTargetId {
        text: text.to_string(),
        reason: reason.into(),
    }
}

fn valid_processor_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_UNKNOWN_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && name.as_bytes()[0].is_ascii_alphanumeric()
}

impl TargetId {
    /// A target ID for a known processor. `None` for a feature means "not specified": any if
    /// the processor has the feature, unsupported otherwise.
    ///
    /// # Errors
    /// [`TargetError::InvalidTargetId`] if a feature is set (`On`/`Off`/`Any`) that the
    /// processor does not have.
    pub fn new(
        processor: &'static Processor,
        xnack: Option<FeatureMode>,
        sramecc: Option<FeatureMode>,
    ) -> Result<TargetId, TargetError> {
        let mut id = TargetId::any(processor);
        for (feature, mode) in [(Feature::Xnack, xnack), (Feature::Sramecc, sramecc)] {
            if let Some(mode) = mode {
                if !processor.supports(feature) {
                    return Err(invalid(
                        processor.name,
                        format!("{} has no {feature} feature", processor.name),
                    ));
                }
                *id.slot(feature) = Some(mode);
            }
        }
        Ok(id)
    }

    /// The target ID with every feature the processor has left as any (`gfx90a`).
    #[inline]
    pub fn any(processor: &'static Processor) -> TargetId {
        TargetId {
            processor: ProcessorRef::Known(processor),
            sramecc: processor.supports_sramecc.then_some(FeatureMode::Any),
            xnack: processor.supports_xnack.then_some(FeatureMode::Any),
        }
    }

    /// Parses a full ISA name, `amdgcn-amd-amdhsa--<target id>`.
    ///
    /// # Errors
    /// [`TargetError::InvalidIsaName`] without the prefix; the target ID's own errors after it.
    pub fn parse_isa_name(text: &str) -> Result<TargetId, TargetError> {
        let rest =
            text.strip_prefix(ISA_NAME_PREFIX)
                .ok_or_else(|| TargetError::InvalidIsaName {
                    text: text.to_string(),
                    reason: format!("does not start with {ISA_NAME_PREFIX}"),
                })?;
        rest.parse()
    }

    /// The processor.
    pub fn processor(&self) -> &ProcessorRef {
        &self.processor
    }

    /// The processor's table entry, if it is known.
    pub fn known_processor(&self) -> Option<&'static Processor> {
        self.processor.known()
    }

    /// The `xnack` setting; `None` if the processor has no xnack.
    pub fn xnack(&self) -> Option<FeatureMode> {
        self.xnack
    }

    /// The `sramecc` setting; `None` if the processor has no sramecc.
    pub fn sramecc(&self) -> Option<FeatureMode> {
        self.sramecc
    }

    /// The setting of `feature`; `None` if the processor lacks it.
    pub fn feature(&self, feature: Feature) -> Option<FeatureMode> {
        match feature {
            Feature::Xnack => self.xnack,
            Feature::Sramecc => self.sramecc,
        }
    }

    fn slot(&mut self, feature: Feature) -> &mut Option<FeatureMode> {
        match feature {
            Feature::Xnack => &mut self.xnack,
            Feature::Sramecc => &mut self.sramecc,
        }
    }

    /// Whether the processor is a generic target (`gfx10-3-generic`).
    pub fn is_generic(&self) -> bool {
        self.processor.known().is_some_and(|p| p.generic)
    }

    /// The full ISA name, `amdgcn-amd-amdhsa--` followed by the canonical target ID.
    pub fn isa_name(&self) -> String {
        format!("{ISA_NAME_PREFIX}{self}")
    }
}

impl FromStr for TargetId {
    type Err = TargetError;

    /// Parses `<processor>(:<feature><+|->)*`, features in any order, each at most once.
    fn from_str(text: &str) -> Result<TargetId, TargetError> {
        parse_target_id(text).map_err(|problem| problem.into_error(text))
    }
}

/// What is wrong with a target ID; turned into a [`TargetError`] off the hot path.
#[derive(Clone, Copy)]
enum Problem<'a> {
    EmptyName,
    NotAName(&'a str),
    NoSign(&'a str),
    EmptyFeature,
    UnknownFeature(&'a str),
    Twice(Feature),
    Unsupported(&'a str, Feature),
}

impl Problem<'_> {
    #[cold]
    #[inline(never)]
    fn into_error(self, text: &str) -> TargetError {
        let reason = match self {
            Problem::EmptyName => "empty processor name".to_string(),
            Problem::NotAName(name) => format!("{name:?} is not a processor name"),
            Problem::NoSign(part) => format!("feature {part:?} lacks a + or - sign"),
            Problem::EmptyFeature => "empty feature".to_string(),
            Problem::UnknownFeature(name) => format!("unknown feature {name:?}"),
            Problem::Twice(feature) => format!("feature {feature} given twice"),
            Problem::Unsupported(name, feature) => format!("{name} has no {feature} feature"),
        };
        invalid(text, reason)
    }
}

#[cold]
#[inline(never)]
fn unknown_processor(name: &str) -> Result<TargetId, Problem<'_>> {
    if !valid_processor_name(name) {
        return Err(Problem::NotAName(name));
    }
    Ok(TargetId {
        processor: ProcessorRef::Unknown(name.into()),
        sramecc: Some(FeatureMode::Any),
        xnack: Some(FeatureMode::Any),
    })
}

/// A target ID, or `None` if the text is not one (the error is left out: for hot paths that
/// fall back to [`TargetId::from_str`] for the explanation).
#[inline]
pub(crate) fn parse_target_id_fast(text: &str) -> Option<TargetId> {
    parse_target_id(text).ok()
}

/// The target-ID parser proper. It runs for every bundle entry during selection, so it scans
/// bytes by hand and keeps error formatting out of line.
#[inline]
fn parse_target_id(text: &str) -> Result<TargetId, Problem<'_>> {
    let (mut id, name_end) = match super::processor::known_name_prefix(text) {
        Some((p, len)) => (TargetId::any(p), len),
        None => {
            let name_end = text.bytes().position(|b| b == b':').unwrap_or(text.len());
            let name = &text[..name_end];
            if name.is_empty() {
                return Err(Problem::EmptyName);
            }
            match Processor::by_name(name) {
                Some(p) => (TargetId::any(p), name_end),
                None => (unknown_processor(name)?, name_end),
            }
        }
    };
    let name = &text[..name_end];
    let mut seen = [false; 2];
    let mut rest = text.get(name_end + 1..);
    while let Some(remaining) = rest {
        let end = remaining.bytes().position(|b| b == b':');
        let part = &remaining[..end.unwrap_or(remaining.len())];
        rest = end.map(|e| &remaining[e + 1..]);
        let (feature_name, mode) = match part.as_bytes().last() {
            Some(b'+') => (&part[..part.len() - 1], FeatureMode::On),
            Some(b'-') => (&part[..part.len() - 1], FeatureMode::Off),
            Some(_) => return Err(Problem::NoSign(part)),
            None => return Err(Problem::EmptyFeature),
        };
        let feature =
            Feature::from_name(feature_name).ok_or(Problem::UnknownFeature(feature_name))?;
        let seen_slot = &mut seen[feature as usize];
        if *seen_slot {
            return Err(Problem::Twice(feature));
        }
        *seen_slot = true;
        let slot = id.slot(feature);
        if slot.is_none() {
            return Err(Problem::Unsupported(name, feature));
        }
        *slot = Some(mode);
    }
    Ok(id)
}

impl fmt::Display for TargetId {
    /// Canonical form: canonical processor name, then `sramecc`, then `xnack`, each only if
    /// set to on or off.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.processor.name())?;
        for feature in Feature::ALL {
            match self.feature(feature) {
                Some(FeatureMode::On) => write!(f, ":{feature}+")?,
                Some(FeatureMode::Off) => write!(f, ":{feature}-")?,
                _ => {}
            }
        }
        Ok(())
    }
}

impl serde::Serialize for TargetId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> TargetId {
        s.parse().unwrap()
    }

    #[test]
    fn parses_and_prints_canonically() {
        assert_eq!(
            id("gfx90a:xnack-:sramecc+").to_string(),
            "gfx90a:sramecc+:xnack-"
        );
        assert_eq!(
            id("gfx90a:sramecc+:xnack-").to_string(),
            "gfx90a:sramecc+:xnack-"
        );
        assert_eq!(id("gfx90a").to_string(), "gfx90a");
        assert_eq!(id("fiji").to_string(), "gfx803");
        assert_eq!(id("gfx10-3-generic").to_string(), "gfx10-3-generic");
        assert_eq!(id("gfx9-generic:xnack+").to_string(), "gfx9-generic:xnack+");
        let t = id("gfx90a:xnack+");
        assert_eq!(t.xnack(), Some(FeatureMode::On));
        assert_eq!(t.sramecc(), Some(FeatureMode::Any));
        let t = id("gfx1030");
        assert_eq!((t.xnack(), t.sramecc()), (None, None));
        assert!(id("gfx11-generic").is_generic());
        assert!(!id("gfx1100").is_generic());
    }

    #[test]
    fn unknown_processors_parse() {
        let t = id("gfx1250:xnack+");
        assert_eq!(t.processor(), &ProcessorRef::Unknown("gfx1250".into()));
        assert_eq!(t.known_processor(), None);
        assert_eq!(t.to_string(), "gfx1250:xnack+");
        assert_eq!(id("gfx12-5-generic").to_string(), "gfx12-5-generic");
    }

    #[test]
    fn malformed_target_ids_are_errors() {
        for bad in [
            "",
            ":xnack+",
            "gfx90a:",
            "gfx90a:xnack",
            "gfx90a:xnack+:xnack-",
            "gfx90a:xnack+:xnack+",
            "gfx90a:foo+",
            "gfx90a:+",
            "gfx1030:xnack+",
            "gfx1030:sramecc-",
            "gfx900:sramecc+",
            "gfx 90a",
            "-gfx90a",
            "gfx90a:XNACK+",
            "gfx90a::xnack+",
        ] {
            let err = bad.parse::<TargetId>().unwrap_err();
            assert!(
                matches!(err, TargetError::InvalidTargetId { .. }),
                "{bad}: {err}"
            );
        }
        let err = "gfx1030:xnack+"
            .parse::<TargetId>()
            .unwrap_err()
            .to_string();
        assert!(err.contains("gfx1030 has no xnack"), "{err}");
        assert!("x".repeat(65).parse::<TargetId>().is_err());
    }

    #[test]
    fn isa_names() {
        let t = TargetId::parse_isa_name("amdgcn-amd-amdhsa--gfx90a:xnack-").unwrap();
        assert_eq!(t.to_string(), "gfx90a:xnack-");
        assert_eq!(t.isa_name(), "amdgcn-amd-amdhsa--gfx90a:xnack-");
        for bad in [
            "gfx90a",
            "amdgcn-amd-amdhsa-gfx90a",
            "amdgcn-amd-amdpal--gfx90a",
            "amdgcn-amd-amdhsa--",
        ] {
            assert!(TargetId::parse_isa_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn new_checks_features() {
        let p = Processor::by_name("gfx1030").unwrap();
        assert!(TargetId::new(p, Some(FeatureMode::On), None).is_err());
        assert_eq!(TargetId::new(p, None, None).unwrap(), TargetId::any(p));
        let p = Processor::by_name("gfx90a").unwrap();
        let t = TargetId::new(p, Some(FeatureMode::Off), Some(FeatureMode::On)).unwrap();
        assert_eq!(t.to_string(), "gfx90a:sramecc+:xnack-");
    }
}
