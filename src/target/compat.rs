//! Compatibility: can code built for a target ID run on an agent, how well, and if not, why.
//!
//! The rules, each from its source:
//! - Processors must be equal for non-generic code (LLVM `isCodeObjectCompatible` in
//!   `clang/lib/Driver/OffloadBundler.cpp`; ROCr `Isa::IsCompatible` in
//!   `core/runtime/isa.cpp`).
//! - A feature the code leaves as any matches either device mode; `+`/`-` must equal the
//!   device's mode (same sources). A feature the code's processor lacks matches anything.
//! - Generic code (`gfx10-3-generic`) runs on members of its family only, and only if its
//!   generic version is at least the version at which the member joined (ROCr
//!   `IsaRegistry::GetSupportedGenericVersions`); version 0 is invalid (AMDGPUUsage: generic
//!   versions start at 1). Bundle entry ids carry no version, so `None` defers that check to
//!   the ELF header.
//! - Extended (opt-in, [`Policy::Extended`]): the distributions' table (Debian's, Gentoo's and Solus' patches).
//!
//! Rank, best first: [`Rank::Exact`] (same processor, every feature it has given and
//! equal), then [`Rank::Any`] (same processor, some feature left as any), then
//! [`Rank::Generic`], then [`Rank::Extended`]. Within a rank, more specific wins: +2 if xnack is given, +1 if sramecc
//! is (the Debian comgr patch's weights). This module is pure: no I/O, no environment.

use std::fmt;
use std::ptr;

use super::entry::EntryParts;
use super::{
    AgentIsa, EntryId, Feature, FeatureMode, OffloadKind, Policy, Processor, ProcessorRef, TargetId,
};

/// How an accepted code object matches; better ranks compare greater.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rank {
    /// Only under [`Policy::Extended`]: code for a related processor.
    Extended,
    /// Code for the agent's generic family.
    Generic,
    /// The agent's processor with at least one feature left as any.
    Any,
    /// The agent's processor with every feature it has given and equal to the agent's.
    Exact,
}

impl Rank {
    /// `exact`, `any`, `generic` or `extended`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rank::Exact => "exact",
            Rank::Any => "any",
            Rank::Generic => "generic",
            Rank::Extended => "extended",
        }
    }
}

/// Why code can run on an agent, and how well.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Acceptance {
    /// The kind of match.
    pub rank: Rank,
    /// Within a rank, higher is more specific: +2 if xnack is given (`+`/`-`), +1 if sramecc is.
    pub specificity: u8,
    /// The processor the code was built for.
    pub code: &'static Processor,
    /// The agent's processor.
    pub agent: &'static Processor,
    any_mask: u8,
}

impl Acceptance {
    /// Ordering key: greater is better.
    pub fn key(&self) -> (Rank, u8) {
        (self.rank, self.specificity)
    }

    /// The features the code left as any (that the agent has).
    pub fn any_features(&self) -> impl Iterator<Item = Feature> + '_ {
        Feature::ALL
            .into_iter()
            .filter(|f| self.any_mask & feature_bit(*f) != 0)
    }

    fn write_any(&self, f: &mut fmt::Formatter<'_>, lead: &str) -> fmt::Result {
        let mut sep = lead;
        for feature in self.any_features() {
            write!(f, "{sep}{feature} any")?;
            sep = ", ";
        }
        Ok(())
    }
}

impl fmt::Display for Acceptance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rank {
            Rank::Exact => f.write_str("exact match"),
            Rank::Any => {
                f.write_str("matches")?;
                self.write_any(f, " with ")
            }
            Rank::Generic => {
                write!(
                    f,
                    "generic target {} covers {}",
                    self.code.name, self.agent.name
                )?;
                self.write_any(f, "; ")
            }
            Rank::Extended => {
                write!(
                    f,
                    "extended policy: {} may run {} code",
                    self.agent.name, self.code.name
                )?;
                self.write_any(f, "; ")
            }
        }
    }
}

/// Why code cannot run on an agent. `Display` is the one-line reason.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// The host's entry of a bundle.
    HostCode,
    /// A SPIR-V entry: it needs a JIT, which rocload does not have.
    SpirV,
    /// An offload kind other than `hip`, `hipv4`, `hcc` (e.g. `openmp`).
    OffloadKind(Box<str>),
    /// A triple other than `amdgcn-*-amdhsa-*` (e.g. `amdgcn-amd-amdpal`, `nvptx64-…`).
    NotAmdHsa(Box<str>),
    /// An `amdgcn` entry without a target ID.
    MissingTargetId,
    /// The entry id could not be parsed; the text says why.
    Malformed(Box<str>),
    /// A processor this table does not know (a newer compiler's).
    UnknownProcessor(Box<str>),
    /// Built for another processor.
    ProcessorMismatch {
        /// The code's processor.
        code: &'static Processor,
        /// The agent's processor.
        agent: &'static Processor,
    },
    /// Built for a processor the agent may run only under [`Policy::Extended`].
    NeedsExtendedPolicy {
        /// The code's processor.
        code: &'static Processor,
        /// The agent's processor.
        agent: &'static Processor,
    },
    /// Generic code for a family the agent is not in.
    NotInGenericFamily {
        /// The generic target.
        code: &'static Processor,
        /// The agent's processor.
        agent: &'static Processor,
    },
    /// The code needs a feature mode the agent does not have.
    FeatureMismatch {
        /// The feature.
        feature: Feature,
        /// The mode the code needs (`true` = on).
        needs: bool,
        /// The agent's mode; `None` if the agent's processor lacks the feature.
        agent_mode: Option<bool>,
        /// The agent's processor.
        agent: &'static Processor,
    },
    /// A generic code object with generic version 0, which is invalid.
    GenericVersionZero {
        /// The generic target.
        code: &'static Processor,
    },
    /// A generic code object older than the version at which the agent joined the family.
    GenericVersionTooLow {
        /// The generic target.
        code: &'static Processor,
        /// The code object's generic version.
        version: u32,
        /// The agent's minimum.
        min: u32,
        /// The agent's processor.
        agent: &'static Processor,
    },
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::HostCode => f.write_str("host code"),
            Refusal::SpirV => f.write_str("SPIR-V needs a JIT; not supported"),
            Refusal::OffloadKind(kind) => write!(f, "offload kind {kind} is not HIP"),
            Refusal::NotAmdHsa(triple) => write!(f, "triple {triple} is not amdgcn-amd-amdhsa"),
            Refusal::MissingTargetId => f.write_str("no target id"),
            Refusal::Malformed(why) => write!(f, "malformed entry id: {why}"),
            Refusal::UnknownProcessor(name) => write!(f, "unknown processor {name}"),
            Refusal::ProcessorMismatch { code, agent } => {
                write!(f, "built for {code}; agent is {agent}")
            }
            Refusal::NeedsExtendedPolicy { code, agent } => write!(
                f,
                "built for {code}; agent {agent} may run it only with {}=extended",
                super::ENV_ISA_POLICY
            ),
            Refusal::NotInGenericFamily { code, agent } => {
                write!(f, "{code} does not cover {agent}")
            }
            Refusal::FeatureMismatch {
                feature,
                needs,
                agent_mode,
                agent,
            } => match agent_mode {
                Some(mode) => write!(
                    f,
                    "needs {feature} {}; agent has {feature} {}",
                    on_off(*needs),
                    on_off(*mode)
                ),
                None => write!(
                    f,
                    "needs {feature} {}; agent {agent} has no {feature}",
                    on_off(*needs)
                ),
            },
            Refusal::GenericVersionZero { code } => {
                write!(f, "generic version 0 of {code} is invalid")
            }
            Refusal::GenericVersionTooLow {
                code,
                version,
                min,
                agent,
            } => write!(
                f,
                "generic version {version} of {code} is below {min}, the minimum for {agent}"
            ),
        }
    }
}

/// The outcome of one compatibility check.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The code can run on the agent.
    Accepted(Acceptance),
    /// The code cannot run on the agent.
    Refused(Refusal),
}

impl Verdict {
    /// Whether the code can run.
    pub fn is_accepted(&self) -> bool {
        matches!(self, Verdict::Accepted(_))
    }

    /// The rank, if accepted.
    pub fn rank(&self) -> Option<Rank> {
        match self {
            Verdict::Accepted(a) => Some(a.rank),
            Verdict::Refused(_) => None,
        }
    }

    /// The acceptance, if accepted.
    pub fn acceptance(&self) -> Option<&Acceptance> {
        match self {
            Verdict::Accepted(a) => Some(a),
            Verdict::Refused(_) => None,
        }
    }

    /// The refusal, if refused.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Verdict::Accepted(_) => None,
            Verdict::Refused(r) => Some(r),
        }
    }
}

impl fmt::Display for Verdict {
    /// The one-line reason, for either outcome.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Accepted(a) => a.fmt(f),
            Verdict::Refused(r) => r.fmt(f),
        }
    }
}

fn feature_bit(feature: Feature) -> u8 {
    match feature {
        Feature::Sramecc => 1,
        Feature::Xnack => 2,
    }
}

/// Whether code built for `code` can run on `agent` under `policy`, and how well.
///
/// `generic_version` is the ELF header's generic version when known; `None` when only a
/// bundle entry id is known (the loader re-checks with the header after extraction). It is
/// ignored for non-generic code.
#[inline]
pub fn check(
    agent: &AgentIsa,
    code: &TargetId,
    generic_version: Option<u32>,
    policy: Policy,
) -> Verdict {
    let agent_proc = agent.processor();
    let code_proc = match code.processor() {
        ProcessorRef::Known(p) => *p,
        ProcessorRef::Unknown(name) => {
            return Verdict::Refused(Refusal::UnknownProcessor(name.clone()))
        }
    };
    let mut rank = if code_proc.generic {
        if !agent_proc.generic().is_some_and(|g| ptr::eq(g, code_proc)) {
            return Verdict::Refused(Refusal::NotInGenericFamily {
                code: code_proc,
                agent: agent_proc,
            });
        }
        Rank::Generic
    } else if ptr::eq(code_proc, agent_proc) {
        Rank::Exact
    } else if agent_proc.extended_runs(code_proc) {
        Rank::Extended
    } else {
        return Verdict::Refused(Refusal::ProcessorMismatch {
            code: code_proc,
            agent: agent_proc,
        });
    };

    let mut specificity = 0;
    let mut any_mask = 0;
    for (feature, weight) in [(Feature::Xnack, 2), (Feature::Sramecc, 1)] {
        let agent_mode = agent.feature(feature).and_then(FeatureMode::as_bool);
        match code.feature(feature) {
            None => {}
            Some(FeatureMode::Any) if agent_mode.is_some() => any_mask |= feature_bit(feature),
            Some(FeatureMode::Any) => {}
            Some(mode) => {
                let needs = mode == FeatureMode::On;
                if agent_mode != Some(needs) {
                    return Verdict::Refused(Refusal::FeatureMismatch {
                        feature,
                        needs,
                        agent_mode,
                        agent: agent_proc,
                    });
                }
                specificity += weight;
            }
        }
    }

    match rank {
        Rank::Extended if policy == Policy::Strict => {
            return Verdict::Refused(Refusal::NeedsExtendedPolicy {
                code: code_proc,
                agent: agent_proc,
            });
        }
        Rank::Generic => {
            if let Some(refusal) = generic_version_refusal(
                code_proc,
                agent_proc,
                generic_version,
                agent_proc.generic_min_version,
            ) {
                return Verdict::Refused(refusal);
            }
        }
        Rank::Exact if any_mask != 0 => rank = Rank::Any,
        _ => {}
    }
    Verdict::Accepted(Acceptance {
        rank,
        specificity,
        code: code_proc,
        agent: agent_proc,
        any_mask,
    })
}

/// The generic-version rule on its own: `min` is the version at which `agent` joined the
/// family of the generic target `code`.
fn generic_version_refusal(
    code: &'static Processor,
    agent: &'static Processor,
    version: Option<u32>,
    min: u32,
) -> Option<Refusal> {
    match version {
        Some(0) => Some(Refusal::GenericVersionZero { code }),
        Some(version) if version < min => Some(Refusal::GenericVersionTooLow {
            code,
            version,
            min,
            agent,
        }),
        _ => None,
    }
}

/// [`check`] for a bundle entry: host, SPIR-V, non-HIP and non-HSA entries are refused with
/// their reason before the target is looked at. The generic version is not known here.
pub fn check_entry(agent: &AgentIsa, entry: &EntryId, policy: Policy) -> Verdict {
    check_parts(agent, entry.as_str(), entry.parts(), policy)
}

pub(crate) fn check_parts(
    agent: &AgentIsa,
    text: &str,
    parts: &EntryParts,
    policy: Policy,
) -> Verdict {
    let arch = &text[parts.arch.clone()];
    if parts.kind == OffloadKind::Host {
        return Verdict::Refused(Refusal::HostCode);
    }
    if arch.starts_with("spirv") {
        return Verdict::Refused(Refusal::SpirV);
    }
    if !parts.kind.is_hip() {
        return Verdict::Refused(Refusal::OffloadKind(text[parts.kind_range.clone()].into()));
    }
    if arch != "amdgcn" || &text[parts.os.clone()] != "amdhsa" {
        return Verdict::Refused(Refusal::NotAmdHsa(text[parts.triple.clone()].into()));
    }
    match &parts.target {
        None => Verdict::Refused(Refusal::MissingTargetId),
        Some(target) => check(agent, target, None, policy),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(s: &str) -> AgentIsa {
        s.parse().unwrap()
    }

    fn verdict(a: &str, code: &str, gv: Option<u32>, policy: Policy) -> Verdict {
        check(&agent(a), &code.parse().unwrap(), gv, policy)
    }

    fn strict(a: &str, code: &str) -> Verdict {
        verdict(a, code, None, Policy::Strict)
    }

    fn rank(v: &Verdict) -> Option<(Rank, u8)> {
        v.acceptance().map(Acceptance::key)
    }

    #[test]
    fn processors_must_be_equal() {
        assert_eq!(rank(&strict("gfx1030", "gfx1030")), Some((Rank::Exact, 0)));
        let v = strict("gfx1100", "gfx1030");
        assert_eq!(v.to_string(), "built for gfx1030; agent is gfx1100");
        assert!(matches!(
            v,
            Verdict::Refused(Refusal::ProcessorMismatch { .. })
        ));
        assert!(!strict("gfx908", "gfx90a").is_accepted());
        assert!(!strict("gfx90a", "gfx908").is_accepted());
        assert!(!strict("gfx942", "gfx940").is_accepted());
        let v = strict("gfx1030", "gfx1250");
        assert_eq!(v.to_string(), "unknown processor gfx1250");
    }

    #[test]
    fn xnack_rules_case_by_case() {
        // agent xnack on / off × code xnack any / on / off.
        assert_eq!(
            rank(&strict("gfx900:xnack+", "gfx900")),
            Some((Rank::Any, 0))
        );
        assert_eq!(
            rank(&strict("gfx900:xnack-", "gfx900")),
            Some((Rank::Any, 0))
        );
        assert_eq!(
            rank(&strict("gfx900:xnack+", "gfx900:xnack+")),
            Some((Rank::Exact, 2))
        );
        assert_eq!(
            rank(&strict("gfx900:xnack-", "gfx900:xnack-")),
            Some((Rank::Exact, 2))
        );
        let v = strict("gfx900:xnack-", "gfx900:xnack+");
        assert_eq!(v.to_string(), "needs xnack on; agent has xnack off");
        let v = strict("gfx900:xnack+", "gfx900:xnack-");
        assert_eq!(v.to_string(), "needs xnack off; agent has xnack on");
    }

    #[test]
    fn sramecc_rules_case_by_case() {
        assert_eq!(
            rank(&strict("gfx906:sramecc+:xnack-", "gfx906:xnack-")),
            Some((Rank::Any, 2))
        );
        assert_eq!(
            rank(&strict("gfx906:sramecc-:xnack-", "gfx906:xnack-")),
            Some((Rank::Any, 2))
        );
        assert_eq!(
            rank(&strict("gfx906:sramecc+:xnack-", "gfx906:sramecc+:xnack-")),
            Some((Rank::Exact, 3))
        );
        assert_eq!(
            rank(&strict("gfx906:sramecc-:xnack+", "gfx906:sramecc-:xnack+")),
            Some((Rank::Exact, 3))
        );
        assert_eq!(
            rank(&strict("gfx906:sramecc+", "gfx906:sramecc+")),
            Some((Rank::Any, 1))
        );
        let v = strict("gfx90a:sramecc-", "gfx90a:sramecc+");
        assert_eq!(v.to_string(), "needs sramecc on; agent has sramecc off");
        let v = strict("gfx90a:sramecc+", "gfx90a:sramecc-");
        assert_eq!(v.to_string(), "needs sramecc off; agent has sramecc on");
        // Acceptance texts.
        assert_eq!(
            strict("gfx90a", "gfx90a").to_string(),
            "matches with sramecc any, xnack any"
        );
        assert_eq!(
            strict("gfx90a", "gfx90a:sramecc+:xnack-").to_string(),
            "exact match"
        );
    }

    #[test]
    fn generic_families() {
        let v = strict("gfx1031", "gfx10-3-generic");
        assert_eq!(rank(&v), Some((Rank::Generic, 0)));
        assert_eq!(
            v.to_string(),
            "generic target gfx10-3-generic covers gfx1031"
        );
        assert_eq!(
            rank(&strict("gfx1153", "gfx11-generic")),
            Some((Rank::Generic, 0))
        );
        assert_eq!(
            rank(&strict("gfx950", "gfx9-4-generic:sramecc+:xnack-")),
            Some((Rank::Generic, 3))
        );
        // gfx906 has sramecc, gfx9-generic does not: sramecc is not looked at.
        assert_eq!(
            rank(&strict("gfx906:sramecc+:xnack+", "gfx9-generic:xnack+")),
            Some((Rank::Generic, 2))
        );
        assert_eq!(
            strict("gfx906:xnack-", "gfx9-generic:xnack+").to_string(),
            "needs xnack on; agent has xnack off"
        );
        let v = strict("gfx1030", "gfx11-generic");
        assert_eq!(v.to_string(), "gfx11-generic does not cover gfx1030");
        assert!(!strict("gfx908", "gfx9-generic").is_accepted());
        assert!(!strict("gfx90a", "gfx9-generic").is_accepted());
        assert!(!strict("gfx942", "gfx9-generic").is_accepted());
        // Generic versions: 0 invalid, below the minimum refused, unknown deferred.
        let v = verdict("gfx1031", "gfx10-3-generic", Some(0), Policy::Strict);
        assert_eq!(
            v.to_string(),
            "generic version 0 of gfx10-3-generic is invalid"
        );
        assert!(verdict("gfx1031", "gfx10-3-generic", Some(1), Policy::Strict).is_accepted());
        assert!(verdict("gfx1031", "gfx10-3-generic", Some(7), Policy::Strict).is_accepted());
        // Non-generic code ignores the generic version.
        assert!(verdict("gfx1031", "gfx1031", Some(0), Policy::Strict).is_accepted());
    }

    #[test]
    fn generic_version_below_member_minimum() {
        // Every member joined at version 1 today (ROCr), so exercise the rule with a higher
        // minimum directly, and through check() with version 0.
        let p = Processor::by_name("gfx1153").unwrap();
        assert_eq!(p.generic_min_version, 1);
        let g = p.generic().unwrap();
        let refusal = generic_version_refusal(g, p, Some(1), 2).unwrap();
        assert_eq!(
            refusal.to_string(),
            "generic version 1 of gfx11-generic is below 2, the minimum for gfx1153"
        );
        assert_eq!(generic_version_refusal(g, p, Some(2), 2), None);
        assert_eq!(generic_version_refusal(g, p, Some(3), 2), None);
        assert_eq!(generic_version_refusal(g, p, None, 2), None);
        assert_eq!(
            generic_version_refusal(g, p, Some(0), 1),
            Some(Refusal::GenericVersionZero { code: g })
        );
        let a = AgentIsa::with_defaults(p).unwrap();
        let code = TargetId::any(g);
        assert!(matches!(
            check(&a, &code, Some(0), Policy::Strict),
            Verdict::Refused(Refusal::GenericVersionZero { .. })
        ));
        assert!(check(&a, &code, Some(1), Policy::Strict).is_accepted());
    }

    #[test]
    fn extended_policy() {
        let v = strict("gfx1031", "gfx1030");
        assert_eq!(
            v.to_string(),
            "built for gfx1030; agent gfx1031 may run it only with ROCLOAD_ISA_POLICY=extended"
        );
        let v = verdict("gfx1031", "gfx1030", None, Policy::Extended);
        assert_eq!(rank(&v), Some((Rank::Extended, 0)));
        assert_eq!(
            v.to_string(),
            "extended policy: gfx1031 may run gfx1030 code"
        );
        assert!(verdict("gfx1030", "gfx1036", None, Policy::Extended).is_accepted());
        assert!(verdict("gfx1012", "gfx1010", None, Policy::Extended).is_accepted());
        assert!(!verdict("gfx1010", "gfx1012", None, Policy::Extended).is_accepted());
        assert!(verdict("gfx906", "gfx900", None, Policy::Extended).is_accepted());
        assert!(!verdict("gfx900", "gfx906", None, Policy::Extended).is_accepted());
        assert!(!verdict("gfx904", "gfx900", None, Policy::Extended).is_accepted());
        assert!(!verdict("gfx900", "gfx904", None, Policy::Extended).is_accepted());
        assert!(!verdict("gfx1101", "gfx1100", None, Policy::Extended).is_accepted());
        // Features still apply under the extended policy.
        let v = verdict("gfx902:xnack-", "gfx900:xnack+", None, Policy::Extended);
        assert_eq!(v.to_string(), "needs xnack on; agent has xnack off");
        assert_eq!(
            rank(&verdict(
                "gfx902:xnack+",
                "gfx900:xnack+",
                None,
                Policy::Extended
            )),
            Some((Rank::Extended, 2))
        );
    }

    #[test]
    fn ranks_order() {
        assert!(
            Rank::Exact > Rank::Any && Rank::Any > Rank::Generic && Rank::Generic > Rank::Extended
        );
        assert_eq!(
            serde_json::to_string(&Rank::Generic).unwrap(),
            "\"generic\""
        );
    }

    #[test]
    fn entries() {
        let a = agent("gfx1030");
        let v = |s: &str| check_entry(&a, &EntryId::parse(s).unwrap(), Policy::Strict).to_string();
        assert_eq!(v("host-x86_64-unknown-linux-gnu-"), "host code");
        assert_eq!(
            v("hip-spirv64-amd-amdhsa--amdgcnspirv"),
            "SPIR-V needs a JIT; not supported"
        );
        assert_eq!(
            v("openmp-amdgcn-amd-amdhsa--gfx1030"),
            "offload kind openmp is not HIP"
        );
        assert_eq!(
            v("hipv4-amdgcn-amd-amdpal--gfx1030"),
            "triple amdgcn-amd-amdpal- is not amdgcn-amd-amdhsa"
        );
        assert_eq!(v("hipv4-amdgcn-amd-amdhsa-"), "no target id");
        assert_eq!(v("hipv4-amdgcn-amd-amdhsa--gfx1030"), "exact match");
        assert_eq!(v("hip-amdgcn-amd-amdhsa--gfx1030"), "exact match");
        assert_eq!(v("hcc-amdgcn-amd-amdhsa--gfx1030"), "exact match");
    }
}
