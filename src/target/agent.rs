//! The device side of selection: an agent's ISA, the selection [`Policy`] and the ISA override.
//!
//! An [`AgentIsa`] is what a GPU reports: a real processor and a concrete mode (on or off,
//! never any) for each feature it has. Parsed from a target ID or full ISA name, features left
//! out take these defaults, documented here once:
//! - `xnack` **off** (ROCr's default unless `HSA_XNACK=1` and the kernel driver allow it);
//! - `sramecc` **on** where the processor has it (datacenter parts ship with ECC enabled).
//!
//! Nothing here reads the environment: the runtime's configuration does, and passes values in
//! ([`Policy::from_env_value`], [`AgentIsa::apply_override`]). This module does not decide
//! compatibility ([`super::compat`] does).

use std::fmt;
use std::str::FromStr;

use super::{Feature, FeatureMode, GfxVersion, Processor, TargetError, TargetId, ISA_NAME_PREFIX};

/// Environment variable choosing the policy: `strict` (default) or `extended`.
pub const ENV_ISA_POLICY: &str = "ROCLOAD_ISA_POLICY";
/// Environment variable overriding the agent's ISA version, like ROCr's
/// `HSA_OVERRIDE_GFX_VERSION`: `major.minor.stepping`, e.g. `10.3.0`.
pub const ENV_OVERRIDE_GFX_VERSION: &str = "ROCLOAD_OVERRIDE_GFX_VERSION";

/// Which compatibility rules selection applies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// LLVM and ROCr's rules: same processor (or its generic family) and compatible features.
    #[default]
    Strict,
    /// Strict, plus the distributions' extended table (Debian's, Gentoo's and Solus' patches): e.g. a gfx1031 agent
    /// may run gfx1030 code. Opt-in: the hardware differences are small but real.
    Extended,
}

impl Policy {
    /// The policy a `ROCLOAD_ISA_POLICY` value names: `None` or empty means `Strict`.
    ///
    /// # Errors
    /// [`TargetError::InvalidPolicy`] for a value other than strict/extended.
    pub fn from_env_value(value: Option<&str>) -> Result<Policy, TargetError> {
        match value.map(str::trim) {
            None | Some("") => Ok(Policy::Strict),
            Some(v) => v.parse(),
        }
    }

    /// `strict` or `extended`.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Strict => "strict",
            Policy::Extended => "extended",
        }
    }
}

impl FromStr for Policy {
    type Err = TargetError;
    /// `strict` or `extended`, ASCII case-insensitive.
    fn from_str(text: &str) -> Result<Policy, TargetError> {
        if text.eq_ignore_ascii_case("strict") {
            Ok(Policy::Strict)
        } else if text.eq_ignore_ascii_case("extended") {
            Ok(Policy::Extended)
        } else {
            Err(TargetError::InvalidPolicy {
                text: text.to_string(),
            })
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for GfxVersion {
    type Err = TargetError;
    /// `major.minor.stepping` in decimal, as ROCr reads `HSA_OVERRIDE_GFX_VERSION` (gfx90a is
    /// `9.0.10`).
    fn from_str(text: &str) -> Result<GfxVersion, TargetError> {
        let fail = |reason: &str| TargetError::InvalidGfxVersion {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let mut parts = text.trim().split('.');
        let mut next = || -> Result<u32, TargetError> {
            let part = parts.next().ok_or_else(|| fail("needs three numbers"))?;
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(fail("each part must be a decimal number"));
            }
            part.parse().map_err(|_| fail("number too large"))
        };
        let version = GfxVersion {
            major: next()?,
            minor: next()?,
            stepping: next()?,
        };
        if parts.next().is_some() {
            return Err(fail("more than three numbers"));
        }
        Ok(version)
    }
}

/// A device's ISA: a real processor with a concrete mode for every feature it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AgentIsa {
    processor: &'static Processor,
    sramecc: Option<FeatureMode>,
    xnack: Option<FeatureMode>,
}

fn invalid_agent(text: &str, reason: impl Into<String>) -> TargetError {
    TargetError::InvalidAgent {
        text: text.to_string(),
        reason: reason.into(),
    }
}

impl AgentIsa {
    /// The agent for `processor` with the documented defaults (xnack off, sramecc on).
    ///
    /// # Errors
    /// [`TargetError::InvalidAgent`] for a generic target, which is never a device.
    pub fn with_defaults(processor: &'static Processor) -> Result<AgentIsa, TargetError> {
        AgentIsa::new(processor, None, None)
    }

    /// The agent for `processor`; `None` modes take the defaults (xnack off, sramecc on).
    ///
    /// # Errors
    /// [`TargetError::InvalidAgent`] for a generic target or a mode for a feature the processor
    /// lacks.
    pub fn new(
        processor: &'static Processor,
        xnack: Option<bool>,
        sramecc: Option<bool>,
    ) -> Result<AgentIsa, TargetError> {
        if processor.generic {
            return Err(invalid_agent(
                processor.name,
                "a generic target is not a device",
            ));
        }
        let mode = |feature: Feature, given: Option<bool>, default: bool| match (
            processor.supports(feature),
            given,
        ) {
            (true, g) => Ok(Some(FeatureMode::from_bool(g.unwrap_or(default)))),
            (false, None) => Ok(None),
            (false, Some(_)) => Err(invalid_agent(
                processor.name,
                format!("{} has no {feature}", processor.name),
            )),
        };
        Ok(AgentIsa {
            processor,
            xnack: mode(Feature::Xnack, xnack, false)?,
            sramecc: mode(Feature::Sramecc, sramecc, true)?,
        })
    }

    /// The agent a target ID describes; "any" features take the defaults.
    ///
    /// # Errors
    /// [`TargetError::InvalidAgent`] for an unknown processor or a generic target.
    pub fn from_target_id(id: &TargetId) -> Result<AgentIsa, TargetError> {
        let processor = id.known_processor().ok_or_else(|| {
            invalid_agent(
                &id.to_string(),
                format!("unknown processor {}", id.processor().name()),
            )
        })?;
        let given = |f: Feature| id.feature(f).and_then(FeatureMode::as_bool);
        AgentIsa::new(processor, given(Feature::Xnack), given(Feature::Sramecc))
    }

    /// The processor.
    pub fn processor(&self) -> &'static Processor {
        self.processor
    }

    /// The xnack mode (`On`/`Off`), `None` if the processor has no xnack. Never `Any`.
    pub fn xnack(&self) -> Option<FeatureMode> {
        self.xnack
    }

    /// The sramecc mode (`On`/`Off`), `None` if the processor has no sramecc. Never `Any`.
    pub fn sramecc(&self) -> Option<FeatureMode> {
        self.sramecc
    }

    /// The mode of `feature`; `None` if the processor lacks it. Never `Any`.
    pub fn feature(&self, feature: Feature) -> Option<FeatureMode> {
        match feature {
            Feature::Xnack => self.xnack,
            Feature::Sramecc => self.sramecc,
        }
    }

    /// The agent as a target ID with every feature explicit (`gfx90a:sramecc+:xnack-`).
    pub fn target_id(&self) -> TargetId {
        // Features match the processor by construction, so `new` cannot fail; fall back to the
        // all-any ID rather than panic.
        TargetId::new(self.processor, self.xnack, self.sramecc)
            .unwrap_or_else(|_| TargetId::any(self.processor))
    }

    /// The full ISA name ROCr would report, `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`.
    pub fn isa_name(&self) -> String {
        format!("{ISA_NAME_PREFIX}{self}")
    }

    /// The same device reporting another processor: features the new processor has keep this
    /// agent's modes where this agent has them, others take the defaults.
    ///
    /// # Errors
    /// [`TargetError::InvalidAgent`] for a generic target.
    pub fn with_processor(self, processor: &'static Processor) -> Result<AgentIsa, TargetError> {
        let keep = |f: Feature| {
            if processor.supports(f) {
                self.feature(f).and_then(FeatureMode::as_bool)
            } else {
                None
            }
        };
        AgentIsa::new(processor, keep(Feature::Xnack), keep(Feature::Sramecc))
    }

    /// Like ROCr's `HSA_OVERRIDE_GFX_VERSION`: the agent reports the processor with this ISA
    /// version instead (10.3.0 → gfx1030), keeping feature modes as [`Self::with_processor`].
    ///
    /// # Errors
    /// [`TargetError::UnknownGfxVersion`] if no real processor has that version.
    pub fn with_override(self, version: GfxVersion) -> Result<AgentIsa, TargetError> {
        let processor =
            Processor::by_version(version).ok_or(TargetError::UnknownGfxVersion { version })?;
        self.with_processor(processor)
    }

    /// [`Self::with_override`] from an override value as found in the environment: `None` or
    /// empty leaves the agent as it is.
    ///
    /// # Errors
    /// [`TargetError::InvalidGfxVersion`], [`TargetError::UnknownGfxVersion`].
    pub fn apply_override(self, value: Option<&str>) -> Result<AgentIsa, TargetError> {
        match value.map(str::trim) {
            None | Some("") => Ok(self),
            Some(v) => self.with_override(v.parse()?),
        }
    }
}

impl FromStr for AgentIsa {
    type Err = TargetError;

    /// A target ID (`gfx90a:xnack+`) or full ISA name (`amdgcn-amd-amdhsa--gfx90a:xnack+`);
    /// omitted features take the defaults (xnack off, sramecc on).
    fn from_str(text: &str) -> Result<AgentIsa, TargetError> {
        let id = if text.starts_with("amdgcn-") {
            TargetId::parse_isa_name(text)?
        } else {
            text.parse()?
        };
        AgentIsa::from_target_id(&id).map_err(|e| match e {
            TargetError::InvalidAgent { reason, .. } => invalid_agent(text, reason),
            other => other,
        })
    }
}

impl fmt::Display for AgentIsa {
    /// The canonical target ID with every feature explicit.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.target_id(), f)
    }
}

impl serde::Serialize for AgentIsa {
    /// As the full ISA name.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{ISA_NAME_PREFIX}{self}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(s: &str) -> AgentIsa {
        s.parse().unwrap()
    }

    #[test]
    fn defaults_apply_to_omitted_features() {
        assert_eq!(agent("gfx90a").to_string(), "gfx90a:sramecc+:xnack-");
        assert_eq!(agent("gfx90a:xnack+").to_string(), "gfx90a:sramecc+:xnack+");
        assert_eq!(
            agent("gfx90a:sramecc-").to_string(),
            "gfx90a:sramecc-:xnack-"
        );
        assert_eq!(agent("gfx900").to_string(), "gfx900:xnack-");
        assert_eq!(agent("gfx1030").to_string(), "gfx1030");
        assert_eq!(
            agent("amdgcn-amd-amdhsa--gfx1031").isa_name(),
            "amdgcn-amd-amdhsa--gfx1031"
        );
        assert_eq!(agent("fiji").to_string(), "gfx803");
        assert_eq!(agent("gfx942").xnack(), Some(FeatureMode::Off));
        assert_eq!(agent("gfx942").sramecc(), Some(FeatureMode::On));
        assert_eq!(agent("gfx1100").xnack(), None);
    }

    #[test]
    fn agents_must_be_devices() {
        for bad in [
            "gfx10-3-generic",
            "gfx1250",
            "gfx1030:xnack+",
            "",
            "amdgcn-amd-amdhsa--gfx9-generic",
            "amdgcn-amd-amdhsa-gfx90a",
        ] {
            assert!(bad.parse::<AgentIsa>().is_err(), "{bad}");
        }
        let msg = "gfx10-3-generic"
            .parse::<AgentIsa>()
            .unwrap_err()
            .to_string();
        assert!(msg.contains("not a device"), "{msg}");
    }

    #[test]
    fn overrides() {
        let a = agent("gfx1031").apply_override(Some("10.3.0")).unwrap();
        assert_eq!(a.to_string(), "gfx1030");
        assert_eq!(
            agent("gfx1031").apply_override(None).unwrap(),
            agent("gfx1031")
        );
        assert_eq!(
            agent("gfx1031").apply_override(Some(" ")).unwrap(),
            agent("gfx1031")
        );
        // Modes carry over where both processors have the feature.
        let a = agent("gfx90a:xnack+")
            .apply_override(Some("9.0.6"))
            .unwrap();
        assert_eq!(a.to_string(), "gfx906:sramecc+:xnack+");
        let a = agent("gfx1030").apply_override(Some("9.0.10")).unwrap();
        assert_eq!(a.to_string(), "gfx90a:sramecc+:xnack-");
        for bad in [
            "10.3",
            "10.3.0.1",
            "10.3.x",
            "a.b.c",
            "10..0",
            "99999999999.0.0",
            "-1.0.0",
        ] {
            assert!(
                matches!(
                    agent("gfx1031").apply_override(Some(bad)),
                    Err(TargetError::InvalidGfxVersion { .. })
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            agent("gfx1031").apply_override(Some("10.3.9")),
            Err(TargetError::UnknownGfxVersion { .. })
        ));
    }

    #[test]
    fn policies() {
        assert_eq!(Policy::from_env_value(None).unwrap(), Policy::Strict);
        assert_eq!(Policy::from_env_value(Some("")).unwrap(), Policy::Strict);
        assert_eq!(
            Policy::from_env_value(Some("extended")).unwrap(),
            Policy::Extended
        );
        assert_eq!(
            Policy::from_env_value(Some("EXTENDED")).unwrap(),
            Policy::Extended
        );
        assert_eq!(
            Policy::from_env_value(Some("strict")).unwrap(),
            Policy::Strict
        );
        assert!(matches!(
            Policy::from_env_value(Some("loose")),
            Err(TargetError::InvalidPolicy { .. })
        ));
        assert_eq!(
            serde_json::to_string(&Policy::Extended).unwrap(),
            "\"extended\""
        );
    }
}
