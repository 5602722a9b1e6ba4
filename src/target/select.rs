//! Selection: the best entry of one bundle for one agent, with a reason for every entry.
//!
//! Priority, documented once: the accepted entries are ordered by [`Rank`](super::Rank) (exact > any >
//! generic > extended), then by specificity (+2 xnack given, +1 sramecc given), then by bundle
//! order (the earlier entry wins a tie). The first is chosen; the rest stay available in
//! [`Selection::ranked`] so a runtime can fall back when the chosen entry's ELF header
//! disagrees with its id.
//!
//! Every entry appears in [`Selection::candidates`]: host entries are listed as refused
//! ("host code"), SPIR-V entries as refused ("SPIR-V needs a JIT; not supported"), malformed
//! ids as refused with the parse error. `select` never fails and never panics; failure to find
//! any entry becomes an error only through [`Selection::into_result`], whose
//! [`TargetError::NoCompatibleTarget`] names the agent, lists every entry with its reason and
//! says which policy, override or device setting would make one fit.
//!
//! Hot path: parsing and checking allocate nothing for known processors; the result holds two
//! vectors. Explanations are formatted only when displayed.

use std::ptr;

use serde::ser::{SerializeMap, SerializeStruct};

use super::compat::check_parts;
use super::entry::EntryParts;
use super::{
    check, AgentIsa, Feature, Policy, Refusal, RefusedEntry, TargetError, Verdict, ENV_ISA_POLICY,
    ENV_OVERRIDE_GFX_VERSION,
};

/// One entry of a bundle and its verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate<'a> {
    /// Position in the bundle (0-based).
    pub index: usize,
    /// The entry id as given.
    pub id: &'a str,
    /// Accepted (with rank) or refused (with reason).
    pub verdict: Verdict,
}

impl serde::Serialize for Candidate<'_> {
    /// `{"id": …, "compatible": bool, "rank": "exact"|"any"|"generic"|"extended"|null, "reason": …}`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Candidate", 4)?;
        st.serialize_field("id", self.id)?;
        st.serialize_field("compatible", &self.verdict.is_accepted())?;
        st.serialize_field("rank", &self.verdict.rank())?;
        st.serialize_field("reason", &format_args!("{}", self.verdict).to_string())?;
        st.end()
    }
}

/// The result of [`select`] for one bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection<'a> {
    /// The agent selected for.
    pub agent: AgentIsa,
    /// The policy applied.
    pub policy: Policy,
    /// Index of the chosen entry, if any is compatible.
    pub chosen: Option<usize>,
    /// Every entry, in bundle order, with its verdict.
    pub candidates: Vec<Candidate<'a>>,
    /// Indices of all compatible entries, best first (`ranked[0] == chosen`).
    pub ranked: Vec<usize>,
}

/// Chooses the best entry of a bundle for `agent` (see the module docs for the priority).
///
/// Takes entry ids by reference: `&[&str]`, `&[String]`, `&[EntryId]`, or any iterator of
/// references to `AsRef<str>`. Never fails: malformed ids are refused candidates.
///
/// # Examples
/// ```
/// use rocload::target::{select, AgentIsa, Policy};
///
/// let agent: AgentIsa = "gfx1031".parse()?;
/// let ids = ["host-x86_64-unknown-linux--", "hipv4-amdgcn-amd-amdhsa--gfx1030"];
/// let strict = select(&agent, &ids, Policy::Strict);
/// assert_eq!(strict.chosen, None);
/// let err = strict.into_result().unwrap_err().to_string();
/// assert!(err.contains("ROCLOAD_ISA_POLICY=extended would let gfx1031 run"));
/// assert_eq!(select(&agent, &ids, Policy::Extended).chosen, Some(1));
/// # Ok::<(), rocload::target::TargetError>(())
/// ```
pub fn select<'a, I, S>(agent: &AgentIsa, entries: I, policy: Policy) -> Selection<'a>
where
    I: IntoIterator<Item = &'a S>,
    S: AsRef<str> + ?Sized + 'a,
{
    let entries = entries.into_iter();
    let mut candidates = Vec::with_capacity(entries.size_hint().0);
    for (index, entry) in entries.enumerate() {
        let id = entry.as_ref();
        candidates.push(Candidate {
            index,
            id,
            verdict: entry_verdict(agent, id, policy),
        });
    }
    let mut ranked: Vec<usize> = candidates
        .iter()
        .filter(|c| c.verdict.is_accepted())
        .map(|c| c.index)
        .collect();
    // Stable sort, best first: ties keep bundle order.
    let key = |i: &usize| {
        candidates
            .get(*i)
            .and_then(|c| c.verdict.acceptance())
            .map(|a| a.key())
    };
    ranked.sort_by_key(|i| std::cmp::Reverse(key(i)));
    let chosen = ranked.first().copied();
    let selection = Selection {
        agent: *agent,
        policy,
        chosen,
        candidates,
        ranked,
    };
    tracing::debug!(
        agent = %agent,
        %policy,
        entries = selection.candidates.len(),
        compatible = selection.ranked.len(),
        chosen = selection.chosen_candidate().map(|c| c.id),
        reason = %selection.chosen_candidate().map(|c| c.verdict.to_string()).unwrap_or_default(),
        "target selection"
    );
    selection
}

/// The verdict for one entry id. HIP entries for amdgcn-amd-amdhsa skip the general parser
/// (the same answer, tested in entry.rs); malformed ids are refusals, not errors.
#[inline]
fn entry_verdict(agent: &AgentIsa, id: &str, policy: Policy) -> Verdict {
    let malformed = |e: TargetError| match e {
        TargetError::InvalidEntryId { reason, .. } => {
            Verdict::Refused(Refusal::Malformed(reason.into()))
        }
        other => Verdict::Refused(Refusal::Malformed(other.to_string().into())),
    };
    if let Some((_, _, target)) = EntryParts::hip_hsa_target(id) {
        // Same answer as the general parser when the target parses (see EntryParts::parse);
        // otherwise the general parser reports the error.
        if let Some(target) = super::id::parse_target_id_fast(target) {
            return check(agent, &target, None, policy);
        }
    }
    match EntryParts::parse(id) {
        Ok(parts) => check_parts(agent, id, &parts, policy),
        Err(e) => malformed(e),
    }
}

impl<'a> Selection<'a> {
    /// The chosen candidate.
    pub fn chosen_candidate(&self) -> Option<&Candidate<'a>> {
        self.chosen.and_then(|i| self.candidates.get(i))
    }

    /// The compatible candidates, best first.
    pub fn ranked_candidates(&self) -> impl Iterator<Item = &Candidate<'a>> + '_ {
        self.ranked.iter().filter_map(|&i| self.candidates.get(i))
    }

    /// `Ok(self)` if an entry was chosen, otherwise the explained
    /// [`TargetError::NoCompatibleTarget`].
    ///
    /// # Errors
    /// [`TargetError::NoCompatibleTarget`] when no entry is compatible.
    pub fn into_result(self) -> Result<Selection<'a>, TargetError> {
        if self.chosen.is_some() {
            Ok(self)
        } else {
            Err(self.no_match_error())
        }
    }

    /// The error explaining why nothing (else) fits: the agent, every entry with its reason,
    /// and a hint when a policy, override or device setting would make an entry fit.
    pub fn no_match_error(&self) -> TargetError {
        TargetError::NoCompatibleTarget {
            agent: self.agent.isa_name(),
            policy: self.policy,
            candidates: self
                .candidates
                .iter()
                .map(|c| RefusedEntry {
                    id: c.id.to_string(),
                    reason: c.verdict.to_string(),
                })
                .collect(),
            hint: self.hint(),
        }
    }

    /// What would make an entry fit, one suggestion per line; `None` if nothing would.
    pub fn hint(&self) -> Option<String> {
        let mut hints = Vec::new();
        let agent = self.agent;
        let ids: Vec<&str> = self.candidates.iter().map(|c| c.id).collect();

        if self.policy == Policy::Strict {
            let extended = select(&agent, &ids, Policy::Extended);
            if let Some(c) = extended.chosen_candidate() {
                hints.push(format!(
                    "{ENV_ISA_POLICY}=extended would let {} run entry {} ({})",
                    agent.processor(),
                    c.id,
                    c.verdict
                ));
            }
        }

        // An override to a related processor (same generic family or extended group) for
        // which some entry is built.
        let related = |p: &super::Processor| {
            let a = agent.processor();
            (a.generic_family.is_some() && a.generic_family == p.generic_family)
                || a.extended_runs(p)
                || p.extended_runs(a)
        };
        'outer: for c in &self.candidates {
            let Ok(parts) = EntryParts::parse(c.id) else {
                continue;
            };
            let Some(target) = &parts.target else {
                continue;
            };
            let Some(code) = target.known_processor() else {
                continue;
            };
            let Some(version) = code.version else {
                continue;
            };
            if ptr::eq(code, agent.processor()) || !related(code) {
                continue;
            }
            let Ok(overridden) = agent.with_processor(code) else {
                continue;
            };
            if check_parts(&overridden, c.id, &parts, Policy::Strict).is_accepted() {
                hints.push(format!(
                    "{ENV_OVERRIDE_GFX_VERSION}={version} would make this agent report {code} and run entry {} \
                     (only if the device really runs {code} code)",
                    c.id
                ));
                break 'outer;
            }
        }

        // A device setting: entries that fail only on a feature the agent has in the other mode.
        let mut seen = [false; 2];
        for c in &self.candidates {
            if let Verdict::Refused(Refusal::FeatureMismatch {
                feature,
                needs,
                agent_mode: Some(_),
                ..
            }) = &c.verdict
            {
                let slot = &mut seen[*feature as usize];
                if *slot {
                    continue;
                }
                *slot = true;
                let how = match feature {
                    Feature::Xnack => {
                        "ROCr enables XNACK with HSA_XNACK=1 where the kernel driver allows it"
                    }
                    Feature::Sramecc => "the SRAM ECC mode is a device/driver setting",
                };
                hints.push(format!(
                    "entry {} would run on this agent with {feature} {} ({how})",
                    c.id,
                    if *needs { "on" } else { "off" }
                ));
            }
        }
        (!hints.is_empty()).then(|| hints.join("\n"))
    }
}

impl serde::Serialize for Selection<'_> {
    /// `{"chosen": "<entry id>"|null, "candidates": [...]}`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("chosen", &self.chosen_candidate().map(|c| c.id))?;
        map.serialize_entry("candidates", &self.candidates)?;
        map.end()
    }
}

/// One bundle's selection with its position in the file, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleChoice<'a> {
    /// Which bundle of the file (0-based).
    pub index: usize,
    /// Its selection.
    pub selection: Selection<'a>,
}

impl serde::Serialize for BundleChoice<'_> {
    /// `{"index": n, "chosen": …, "candidates": […]}`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("index", &self.index)?;
        map.serialize_entry("chosen", &self.selection.chosen_candidate().map(|c| c.id))?;
        map.serialize_entry("candidates", &self.selection.candidates)?;
        map.end()
    }
}

/// What `rocload select --json` prints:
/// `{"agent": "amdgcn-amd-amdhsa--gfx1031", "policy": "extended", "bundles": [...]}`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SelectReport<'a> {
    /// The agent (serialized as its full ISA name).
    pub agent: AgentIsa,
    /// The policy applied.
    pub policy: Policy,
    /// One selection per bundle.
    pub bundles: Vec<BundleChoice<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Rank;

    fn agent(s: &str) -> AgentIsa {
        s.parse().unwrap()
    }

    fn chosen<'a>(a: &str, ids: &'a [&'a str], policy: Policy) -> Option<&'a str> {
        select(&agent(a), ids, policy)
            .chosen_candidate()
            .map(|c| c.id)
    }

    const HOST: &str = "host-x86_64-unknown-linux-gnu-";

    #[test]
    fn priority_exact_any_generic_extended() {
        let ids = [
            HOST,
            "hipv4-amdgcn-amd-amdhsa--gfx1030",
            "hipv4-amdgcn-amd-amdhsa--gfx10-3-generic",
            "hipv4-amdgcn-amd-amdhsa--gfx1031",
        ];
        assert_eq!(chosen("gfx1031", &ids, Policy::Extended), Some(ids[3]));
        assert_eq!(chosen("gfx1031", &ids[..3], Policy::Extended), Some(ids[2]));
        assert_eq!(chosen("gfx1031", &ids[..2], Policy::Extended), Some(ids[1]));
        assert_eq!(chosen("gfx1031", &ids[..2], Policy::Strict), None);

        let ids = [
            "hipv4-amdgcn-amd-amdhsa--gfx90a",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
        ];
        let s = select(&agent("gfx90a:sramecc+:xnack-"), &ids, Policy::Strict);
        // exact (3) > any with xnack given (2) > any with sramecc given (1) > any (0).
        assert_eq!(s.ranked, [3, 2, 1, 0]);
        assert_eq!(s.chosen, Some(3));
        let ranks: Vec<_> = s.candidates.iter().map(|c| c.verdict.rank()).collect();
        assert_eq!(
            ranks,
            [
                Some(Rank::Any),
                Some(Rank::Any),
                Some(Rank::Any),
                Some(Rank::Exact)
            ]
        );
    }

    #[test]
    fn ties_go_to_the_earlier_entry() {
        let ids = [
            "hipv4-amdgcn-amd-amdhsa--gfx1032",
            "hipv4-amdgcn-amd-amdhsa--gfx1030",
            "hip-amdgcn-amd-amdhsa--gfx1030",
        ];
        let s = select(&agent("gfx1031"), &ids, Policy::Extended);
        assert_eq!(s.ranked, [0, 1, 2]);
        let s = select(&agent("gfx1030"), &ids, Policy::Extended);
        assert_eq!(s.ranked, [1, 2, 0]);
        assert_eq!(s.chosen, Some(1));
    }

    #[test]
    fn every_entry_is_explained() {
        let ids = [
            HOST,
            "hip-spirv64-amd-amdhsa--amdgcnspirv",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            "hipv4-amdgcn-amd-amdhsa--gfx1250",
            "not an id",
            "openmp-amdgcn-amd-amdhsa--gfx90a",
        ];
        let s = select(&agent("gfx90a"), &ids, Policy::Strict);
        assert_eq!(s.chosen, None);
        let reasons: Vec<String> = s.candidates.iter().map(|c| c.verdict.to_string()).collect();
        assert_eq!(reasons[0], "host code");
        assert_eq!(reasons[1], "SPIR-V needs a JIT; not supported");
        assert_eq!(reasons[2], "needs xnack on; agent has xnack off");
        assert_eq!(reasons[3], "unknown processor gfx1250");
        assert!(
            reasons[4].starts_with("malformed entry id: "),
            "{}",
            reasons[4]
        );
        assert_eq!(reasons[5], "offload kind openmp is not HIP");
        let err = s.into_result().unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("agent amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
            "{text}"
        );
        for id in ids {
            assert!(text.contains(id), "{id} missing from {text}");
        }
        assert!(text.contains("HSA_XNACK=1"), "{text}");
    }

    #[test]
    fn no_match_hints() {
        let ids = [HOST, "hipv4-amdgcn-amd-amdhsa--gfx1030"];
        let err = select(&agent("gfx1031"), &ids, Policy::Strict)
            .into_result()
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("ROCLOAD_ISA_POLICY=extended would let gfx1031 run entry hipv4-amdgcn-amd-amdhsa--gfx1030"), "{text}");
        assert!(
            text.contains(
                "ROCLOAD_OVERRIDE_GFX_VERSION=10.3.0 would make this agent report gfx1030"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "built for gfx1030; agent gfx1031 may run it only with ROCLOAD_ISA_POLICY=extended"
            ),
            "{text}"
        );

        // gfx11 has no extended table, but an override within the generic family exists.
        let ids = ["hipv4-amdgcn-amd-amdhsa--gfx1100"];
        let text = select(&agent("gfx1103"), &ids, Policy::Strict)
            .no_match_error()
            .to_string();
        assert!(!text.contains("ROCLOAD_ISA_POLICY"), "{text}");
        assert!(
            text.contains("ROCLOAD_OVERRIDE_GFX_VERSION=11.0.0"),
            "{text}"
        );

        // Unrelated processors: no hint at all.
        let ids = ["hipv4-amdgcn-amd-amdhsa--gfx906"];
        let s = select(&agent("gfx1030"), &ids, Policy::Strict);
        assert_eq!(s.hint(), None);
        assert!(!s.no_match_error().to_string().contains("hint:"));

        // Empty bundle.
        let s = select(&agent("gfx1030"), &[] as &[&str], Policy::Strict);
        assert!(s.no_match_error().to_string().contains("no entries"));
    }

    #[test]
    fn override_makes_an_entry_fit() {
        let ids = ["hipv4-amdgcn-amd-amdhsa--gfx1030"];
        let a = agent("gfx1031").apply_override(Some("10.3.0")).unwrap();
        assert_eq!(select(&a, &ids, Policy::Strict).chosen, Some(0));
    }

    #[test]
    fn accepts_strings_and_entry_ids() {
        let owned = vec!["hipv4-amdgcn-amd-amdhsa--gfx1030".to_string()];
        assert_eq!(
            select(&agent("gfx1030"), &owned, Policy::Strict).chosen,
            Some(0)
        );
        let parsed = vec![crate::target::EntryId::parse(&owned[0]).unwrap()];
        assert_eq!(
            select(&agent("gfx1030"), &parsed, Policy::Strict).chosen,
            Some(0)
        );
    }

    #[test]
    fn json_shape() {
        let ids = [HOST, "hipv4-amdgcn-amd-amdhsa--gfx1030"];
        let s = select(&agent("gfx1031"), &ids, Policy::Extended);
        let report = SelectReport {
            agent: s.agent,
            policy: s.policy,
            bundles: vec![BundleChoice {
                index: 0,
                selection: s,
            }],
        };
        let json: serde_json::Value = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "agent": "amdgcn-amd-amdhsa--gfx1031",
                "policy": "extended",
                "bundles": [{
                    "index": 0,
                    "chosen": "hipv4-amdgcn-amd-amdhsa--gfx1030",
                    "candidates": [
                        {"id": HOST, "compatible": false, "rank": null, "reason": "host code"},
                        {"id": "hipv4-amdgcn-amd-amdhsa--gfx1030", "compatible": true, "rank": "extended",
                         "reason": "extended policy: gfx1031 may run gfx1030 code"}
                    ]
                }]
            })
        );
    }
}
