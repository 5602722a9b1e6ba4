//! Requested entries: which entry of a bundle a requested id names, by clang-offload-bundler's
//! rule (what `clang-offload-bundler -unbundle -targets=ID` extracts). Used by
//! `rocload extract --target` and the container layer's `find_entry`.
//!
//! The rule, read for facts from LLVM 19 (`isCodeObjectCompatible` in
//! `clang/lib/Driver/OffloadBundler.cpp`, target-ID parsing in `clang/lib/Basic/TargetID.cpp`),
//! and checked against the tool (`tests/fixtures/targets/bundler-*.txt`, `tests/cli.rs`):
//! - the same id (kind, triple and target id as written) always matches;
//! - otherwise the offload kinds must be equal, or `hip` and `hipv4`, and the triples equal;
//! - the processors must be equal;
//! - every feature the entry sets (`xnack-`) must be set the same way by the request. A
//!   feature the entry leaves out (any) matches whatever the request says about it; a feature
//!   the request leaves out matches only entries that leave it out too.
//!
//! This is not the agent rule of [`super::compat`]: a request gives no defaults. `gfx90a`
//! asks for code that runs with xnack either way, so `gfx90a:xnack-` does not satisfy it,
//! while an agent `gfx90a` (xnack off by default) runs `gfx90a:xnack-`.
//!
//! A bare target id (`gfx90a:xnack+`) is short for `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`.
//! When several entries satisfy a request (clang refuses to bundle such conflicting ids, so
//! only hand-made bundles have them), the bundler takes the first in its hash table's order;
//! here the same id wins, then the entry setting more features (xnack counts 2, sramecc 1, as
//! in selection), then the earlier entry. Where LLVM 19 drops generic processor names
//! (`gfx9-generic`; tests/README.md, known tool answers) this module does not follow it.

use std::fmt;

use super::entry::EntryParts;
use super::{EntryId, Feature, FeatureMode, TargetError, TargetId};

/// What a bare target id stands for.
const BARE_PREFIX: &str = "hipv4-amdgcn-amd-amdhsa--";

/// A requested entry: a full entry id, or a target id standing for a `hipv4` HSA entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// What was asked for, as written.
    text: String,
    /// The full entry id it stands for.
    id: EntryId,
}

impl Request {
    /// Parses a request: a target id (`gfx90a:xnack+`) or a full entry id
    /// (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`, `host-x86_64-unknown-linux--`).
    ///
    /// # Errors
    /// [`TargetError::InvalidTargetId`] or [`TargetError::InvalidEntryId`] when the text is
    /// neither; the error of the form it resembles most.
    pub fn parse(text: &str) -> Result<Request, TargetError> {
        let bare = || {
            Ok(Request {
                text: text.to_string(),
                id: EntryId::parse(&format!("{BARE_PREFIX}{text}"))?,
            })
        };
        let as_target = text.parse::<TargetId>();
        if let Ok(target) = &as_target {
            if target.known_processor().is_some() {
                return bare();
            }
        }
        let as_entry = EntryId::parse(text);
        match (as_target, as_entry) {
            (_, Ok(id)) => Ok(Request {
                text: text.to_string(),
                id,
            }),
            // An unknown processor (a newer compiler's `gfx1250`); processor names never hold
            // `--`, which would make it a malformed entry id instead.
            (Ok(target), Err(_)) if !target.processor().name().contains("--") => bare(),
            (Err(e), Err(_)) if !text.contains('-') => Err(e),
            (_, Err(e)) => Err(e),
        }
    }

    /// The request as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The full entry id the request stands for.
    pub fn entry_id(&self) -> &EntryId {
        &self.id
    }

    /// Whether the entry `id` satisfies this request, and how well; the reason if not.
    pub fn check(&self, id: &str) -> Result<RequestMatch, RequestRefusal> {
        if id == self.id.as_str() || id == self.text {
            return Ok(RequestMatch::SameId);
        }
        let entry = EntryParts::parse(id).map_err(|e| match e {
            TargetError::InvalidEntryId { reason, .. } => RequestRefusal::Malformed(reason.into()),
            other => RequestRefusal::Malformed(other.to_string().into()),
        })?;
        let want = self.id.parts();
        let (entry_kind, want_kind) = (&id[entry.kind_range.clone()], self.id.kind_str());
        let hip = |k: &str| k == "hip" || k == "hipv4";
        if entry_kind != want_kind && !(hip(entry_kind) && hip(want_kind)) {
            return Err(RequestRefusal::OffloadKind {
                entry: entry_kind.into(),
                request: want_kind.into(),
            });
        }
        let (entry_triple, want_triple) = (&id[entry.triple.clone()], self.id.triple());
        if triple_parts(entry_triple) != triple_parts(want_triple) {
            return Err(RequestRefusal::Triple {
                entry: entry_triple.into(),
                request: want_triple.into(),
            });
        }
        let (entry_target, want_target) = match (&entry.target, &want.target) {
            (Some(e), Some(w)) => (e, w),
            // Targets that are not amdgcn target ids (`amdgcnspirv`, `sm_70`) match as written.
            _ => {
                let e = entry.target_text.clone().map(|r| &id[r]);
                let w = self.id.target_str();
                return match (e, w) {
                    (Some(e), Some(w)) if e == w => Ok(RequestMatch::Compatible { specificity: 0 }),
                    (None, _) | (_, None) => Err(RequestRefusal::MissingTargetId),
                    (Some(e), Some(w)) => Err(RequestRefusal::Processor {
                        entry: e.into(),
                        request: w.into(),
                    }),
                };
            }
        };
        if entry_target.processor() != want_target.processor() {
            return Err(RequestRefusal::Processor {
                entry: entry_target.processor().name().into(),
                request: want_target.processor().name().into(),
            });
        }
        let mut specificity = 0;
        for (feature, weight) in [(Feature::Xnack, 2), (Feature::Sramecc, 1)] {
            let Some(needs) = entry_target.feature(feature).and_then(FeatureMode::as_bool) else {
                continue;
            };
            match want_target.feature(feature).and_then(FeatureMode::as_bool) {
                Some(asked) if asked == needs => specificity += weight,
                asked => {
                    return Err(RequestRefusal::Feature {
                        feature,
                        entry: needs,
                        request: asked,
                    })
                }
            }
        }
        Ok(RequestMatch::Compatible { specificity })
    }

    /// The entry of `ids` (one bundle's entry ids, in order) this request names, with a
    /// verdict for every entry.
    pub fn choose<'a, I, S>(&self, ids: I) -> RequestChoice<'a>
    where
        I: IntoIterator<Item = &'a S>,
        S: AsRef<str> + ?Sized + 'a,
    {
        let candidates: Vec<(&'a str, Result<RequestMatch, RequestRefusal>)> = ids
            .into_iter()
            .map(|id| (id.as_ref(), self.check(id.as_ref())))
            .collect();
        let mut chosen: Option<usize> = None;
        for (i, (_, verdict)) in candidates.iter().enumerate() {
            let Ok(m) = verdict else { continue };
            let better = chosen.is_none_or(|c| {
                candidates[c]
                    .1
                    .as_ref()
                    .is_ok_and(|best| m.key() > best.key())
            });
            if better {
                chosen = Some(i);
            }
        }
        tracing::debug!(request = %self.text, chosen = ?chosen.map(|i| candidates[i].0), entries = candidates.len(), "request matched by clang-offload-bundler's rule");
        RequestChoice { chosen, candidates }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for Request {
    type Err = TargetError;
    fn from_str(text: &str) -> Result<Request, TargetError> {
        Request::parse(text)
    }
}

/// A triple's four components, the missing ones empty (`amdgcn-amd-amdhsa` and
/// `amdgcn-amd-amdhsa-` are the same triple, as for the bundler, which normalises both).
fn triple_parts(triple: &str) -> [&str; 4] {
    let mut parts = [""; 4];
    for (slot, part) in parts.iter_mut().zip(triple.splitn(4, '-')) {
        *slot = part;
    }
    parts
}

/// How an entry satisfies a request; better compares greater.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RequestMatch {
    /// The entry id is the requested id.
    SameId,
    /// A compatible entry; `specificity` counts the features it sets (xnack 2, sramecc 1).
    Compatible {
        /// +2 if the entry sets xnack, +1 if it sets sramecc.
        specificity: u8,
    },
}

impl RequestMatch {
    fn key(self) -> (bool, u8) {
        match self {
            RequestMatch::SameId => (true, u8::MAX),
            RequestMatch::Compatible { specificity } => (false, specificity),
        }
    }
}

impl fmt::Display for RequestMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestMatch::SameId => f.write_str("the requested id"),
            RequestMatch::Compatible { .. } => f.write_str("compatible"),
        }
    }
}

/// Why an entry does not satisfy a request. `Display` is the one-line reason.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestRefusal {
    /// The entry id does not parse.
    Malformed(Box<str>),
    /// Another offload kind (`host`, `openmp` for a HIP request).
    OffloadKind {
        /// The entry's kind.
        entry: Box<str>,
        /// The request's kind.
        request: Box<str>,
    },
    /// Another triple.
    Triple {
        /// The entry's triple.
        entry: Box<str>,
        /// The request's triple.
        request: Box<str>,
    },
    /// The entry or the request has no target id, and the ids differ.
    MissingTargetId,
    /// Another processor.
    Processor {
        /// The entry's processor.
        entry: Box<str>,
        /// The request's processor.
        request: Box<str>,
    },
    /// The entry sets a feature the request leaves out or sets the other way.
    Feature {
        /// The feature.
        feature: Feature,
        /// How the entry sets it (`true` = on).
        entry: bool,
        /// How the request sets it; `None` when it leaves it out.
        request: Option<bool>,
    },
}

fn sign(on: bool) -> char {
    if on {
        '+'
    } else {
        '-'
    }
}

impl fmt::Display for RequestRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestRefusal::Malformed(why) => write!(f, "malformed entry id: {why}"),
            RequestRefusal::OffloadKind { entry, request } => {
                write!(f, "offload kind {entry}, not {request}")
            }
            RequestRefusal::Triple { entry, request } => {
                write!(f, "triple {entry}, not {request}")
            }
            RequestRefusal::MissingTargetId => f.write_str("no target id to compare"),
            RequestRefusal::Processor { entry, request } => {
                write!(f, "built for {entry}, not {request}")
            }
            RequestRefusal::Feature {
                feature,
                entry,
                request: Some(asked),
            } => write!(
                f,
                "sets {feature}{}; the request asks for {feature}{}",
                sign(*entry),
                sign(*asked)
            ),
            RequestRefusal::Feature {
                feature,
                entry,
                request: None,
            } => write!(
                f,
                "sets {feature}{}, which the request leaves out (an entry may set only \
                 features the request sets)",
                sign(*entry)
            ),
        }
    }
}

/// The result of [`Request::choose`] for one bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestChoice<'a> {
    /// Index of the chosen entry, if any satisfies the request.
    pub chosen: Option<usize>,
    /// Every entry id, in bundle order, with its verdict.
    pub candidates: Vec<(&'a str, Result<RequestMatch, RequestRefusal>)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(request: &str, entry: &str) -> Result<RequestMatch, RequestRefusal> {
        Request::parse(request)
            .unwrap()
            .check(&format!("hipv4-amdgcn-amd-amdhsa--{entry}"))
    }

    #[test]
    fn features_the_entry_leaves_out_match_anything() {
        for request in ["gfx90a:xnack+", "gfx90a:sramecc+:xnack-", "gfx90a:sramecc-"] {
            assert_eq!(
                check(request, "gfx90a"),
                Ok(RequestMatch::Compatible { specificity: 0 }),
                "{request}"
            );
        }
        assert_eq!(
            check("gfx942:xnack-", "gfx942"),
            Ok(RequestMatch::Compatible { specificity: 0 })
        );
        assert_eq!(
            check("gfx90a:sramecc+:xnack-", "gfx90a:xnack-"),
            Ok(RequestMatch::Compatible { specificity: 2 })
        );
        assert_eq!(check("gfx1030", "gfx1030"), Ok(RequestMatch::SameId));
        assert_eq!(check("gfx90a", "gfx90a"), Ok(RequestMatch::SameId));
        // The same features in another order: compatible, not the same id.
        assert_eq!(
            check("gfx90a:xnack-:sramecc+", "gfx90a:sramecc+:xnack-"),
            Ok(RequestMatch::Compatible { specificity: 3 })
        );
    }

    #[test]
    fn features_the_request_leaves_out_match_only_entries_that_do_too() {
        let err = check("gfx90a", "gfx90a:xnack-").unwrap_err();
        assert_eq!(
            err,
            RequestRefusal::Feature {
                feature: Feature::Xnack,
                entry: false,
                request: None
            }
        );
        assert!(err
            .to_string()
            .starts_with("sets xnack-, which the request leaves out"));
        let err = check("gfx942:xnack-", "gfx942:sramecc+:xnack-").unwrap_err();
        assert!(err.to_string().contains("sramecc+"), "{err}");
        let err = check("gfx90a:xnack+", "gfx90a:xnack-").unwrap_err();
        assert_eq!(err.to_string(), "sets xnack-; the request asks for xnack+");
        let err = check("gfx90a:xnack+", "gfx908").unwrap_err();
        assert_eq!(err.to_string(), "built for gfx908, not gfx90a");
    }

    #[test]
    fn kinds_triples_and_full_ids() {
        let r = Request::parse("hip-amdgcn-amd-amdhsa--gfx90a:xnack+").unwrap();
        assert!(r.check("hipv4-amdgcn-amd-amdhsa--gfx90a").is_ok());
        assert!(r.check("hipv4-amdgcn-amd-amdhsa-gnu-gfx90a").is_err());
        let err = r.check("openmp-amdgcn-amd-amdhsa--gfx90a").unwrap_err();
        assert_eq!(err.to_string(), "offload kind openmp, not hip");
        let r = Request::parse("gfx90a").unwrap();
        assert!(r.check("host-x86_64-unknown-linux--").is_err());
        assert!(r.check("hipv4-amdgcn-amd-amdpal--gfx90a").is_err());
        let host = Request::parse("host-x86_64-unknown-linux--").unwrap();
        assert_eq!(
            host.check("host-x86_64-unknown-linux--"),
            Ok(RequestMatch::SameId)
        );
        let spirv = Request::parse("hip-spirv64-amd-amdhsa--amdgcnspirv").unwrap();
        assert!(spirv.check("hipv4-spirv64-amd-amdhsa--amdgcnspirv").is_ok());
        assert!(spirv.check("hipv4-amdgcn-amd-amdhsa--gfx90a").is_err());
        // Generic and unknown processors are compared by name.
        assert_eq!(
            check("gfx10-3-generic", "gfx10-3-generic"),
            Ok(RequestMatch::SameId)
        );
        assert!(check("gfx9-generic", "gfx11-generic").is_err());
        assert_eq!(check("gfx1250", "gfx1250"), Ok(RequestMatch::SameId));
        assert!(check("gfx1250", "gfx1251").is_err());
        // Malformed requests are errors naming the form they resemble.
        assert!(matches!(
            Request::parse("gfx1030:xnack+"),
            Err(TargetError::InvalidTargetId { .. })
        ));
        assert!(matches!(
            Request::parse("hipv4-amdgcn-amd-amdhsa--gfx1030:xnack+"),
            Err(TargetError::InvalidEntryId { .. })
        ));
        assert!(Request::parse("").is_err());
    }

    #[test]
    fn the_same_id_wins_then_the_most_specific_then_the_first() {
        let ids = [
            "host-x86_64-unknown-linux--",
            "hipv4-amdgcn-amd-amdhsa--gfx90a",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+",
            "hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+",
        ];
        let pick = |r: &str| {
            Request::parse(r)
                .unwrap()
                .choose(ids.iter().copied())
                .chosen
                .map(|i| ids[i])
        };
        assert_eq!(pick("gfx90a:sramecc+:xnack+"), Some(ids[4]));
        assert_eq!(
            pick("hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+"),
            Some(ids[5])
        );
        assert_eq!(pick("gfx90a:xnack+"), Some(ids[3]));
        assert_eq!(pick("gfx90a:sramecc+:xnack-"), Some(ids[2]));
        assert_eq!(pick("gfx90a"), Some(ids[1]));
        assert_eq!(pick("gfx906"), None);
        let choice = Request::parse("gfx906")
            .unwrap()
            .choose(ids.iter().copied());
        assert_eq!(choice.candidates.len(), ids.len());
        assert!(choice.candidates.iter().all(|(_, v)| v.is_err()));
    }
}
