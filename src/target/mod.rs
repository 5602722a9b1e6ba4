//! Targets: processors, target IDs, ELF flags, compatibility and the selection policy.
//!
//! What it is for: answering "which code object in this bundle should this GPU agent run, and
//! why not the others", exactly as LLVM (clang-offload-bundler, comgr) and ROCr decide
//! compatibility, plus an opt-in extended policy and an ISA override. Everything here is a pure
//! function of its arguments; the environment is read only by the explicitly named
//! `from_env*` functions.
//!
//! What it is not: it does not read containers or ELF files (the container and code-object
//! layers hand it entry-id strings and ELF header fields), and it never JIT-compiles SPIR-V.
//!
//! Layout:
//! - [`processor`]: the processor table (generated from `processors.tsv` by `build.rs`);
//! - [`id`]: target IDs (`gfx90a:sramecc+:xnack-`) and full ISA names;
//! - [`entry`]: offload-bundle entry ids (`hipv4-amdgcn-amd-amdhsa--gfx1030`);
//! - [`elf`]: `e_flags` of code objects v3–v6;
//! - [`agent`]: the device side ([`AgentIsa`]), the [`Policy`] and the override;
//! - [`compat`]: the compatibility rules ([`check`]) and their verdicts;
//! - [`mod@select`]: choosing one entry per bundle, with an explanation for every entry;
//! - [`request`]: which entry a requested id names, by clang-offload-bundler's rule (`extract`).

mod agent;
mod compat;
mod elf;
mod entry;
mod id;
mod processor;
mod request;
mod select;

use std::fmt;

pub use agent::{AgentIsa, Policy, ENV_ISA_POLICY, ENV_OVERRIDE_GFX_VERSION};
pub use compat::{check, check_entry, Acceptance, Rank, Refusal, Verdict};
pub use elf::{ElfTarget, ELFOSABI_AMDGPU_HSA};
pub use entry::{entry_matches, EntryId, OffloadKind};
pub use id::{Feature, FeatureMode, ProcessorRef, TargetId, ISA_NAME_PREFIX};
pub use processor::{GfxVersion, Processor};
pub use request::{Request, RequestChoice, RequestMatch, RequestRefusal};
pub use select::{select, BundleChoice, Candidate, SelectReport, Selection};

/// A target ID, ISA name, ELF header or selection failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// The text is not a valid target ID.
    #[error("invalid target id {text:?}: {reason}")]
    InvalidTargetId {
        /// What was given.
        text: String,
        /// Why it is not a target ID.
        reason: String,
    },
    /// The text is not a full ISA name (`amdgcn-amd-amdhsa--<target id>`).
    #[error("invalid ISA name {text:?}: {reason}")]
    InvalidIsaName {
        /// What was given.
        text: String,
        /// Why it is not an ISA name.
        reason: String,
    },
    /// The text is not an offload-bundle entry id (`<kind>-<triple>[-<target id>]`).
    #[error("invalid bundle entry id {text:?}: {reason}")]
    InvalidEntryId {
        /// What was given.
        text: String,
        /// Why it is not an entry id.
        reason: String,
    },
    /// The text does not describe a device (an agent ISA).
    #[error("invalid agent {text:?}: {reason}")]
    InvalidAgent {
        /// What was given.
        text: String,
        /// Why it is not a device.
        reason: String,
    },
    /// `EI_OSABI` is not `ELFOSABI_AMDGPU_HSA` (64).
    #[error("ELF OS/ABI {os_abi} is not AMDGPU HSA (64)")]
    UnsupportedOsAbi {
        /// The `EI_OSABI` byte.
        os_abi: u8,
    },
    /// `EI_ABIVERSION` names a code object version rocload does not read (v2, or newer than v6).
    #[error("ELF ABI version {abi_version} ({}) is not supported; rocload reads code objects v3 to v6", code_object_version_name(*abi_version))]
    UnsupportedCodeObjectVersion {
        /// The `EI_ABIVERSION` byte.
        abi_version: u8,
    },
    /// `e_flags` names a processor that is not in the table (a newer compiler's GPU, or garbage).
    #[error("e_flags processor {mach:#04x} (EF_AMDGPU_MACH) is not a known AMDGCN processor")]
    UnknownMach {
        /// `e_flags & 0xff`.
        mach: u32,
    },
    /// `e_flags` has bits that cannot be set for this processor and code object version.
    #[error("invalid e_flags {e_flags:#x}: {reason}")]
    InvalidElfFlags {
        /// The whole `e_flags` word.
        e_flags: u32,
        /// What is wrong with it.
        reason: String,
    },
    /// An ELF target cannot be built from these parts (e.g. a generic target before v6).
    #[error("cannot encode {target} as code object v{code_object_version}: {reason}")]
    UnencodableTarget {
        /// The target ID.
        target: String,
        /// The requested code object version.
        code_object_version: u32,
        /// Why not.
        reason: String,
    },
    /// An ISA version (`10.3.0`) is malformed.
    #[error("invalid ISA version {text:?}: {reason} (expected major.minor.stepping, e.g. 10.3.0)")]
    InvalidGfxVersion {
        /// What was given.
        text: String,
        /// Why it is malformed.
        reason: String,
    },
    /// An ISA version names no known processor.
    #[error("no known processor has ISA version {version}")]
    UnknownGfxVersion {
        /// The version asked for.
        version: GfxVersion,
    },
    /// A policy name is neither `strict` nor `extended`.
    #[error("invalid ISA policy {text:?}: expected strict or extended")]
    InvalidPolicy {
        /// What was given.
        text: String,
    },
    /// No entry of a bundle can run on the agent. Display is the full multi-line explanation.
    #[error("{}", NoMatchDisplay { agent, policy: *policy, candidates, hint })]
    NoCompatibleTarget {
        /// The agent's full ISA name.
        agent: String,
        /// The policy in force.
        policy: Policy,
        /// Every entry of the bundle with the reason it was refused.
        candidates: Vec<RefusedEntry>,
        /// Which policy, override or device setting would make an entry fit, if any.
        hint: Option<String>,
    },
}

/// An entry that was refused, as reported by [`TargetError::NoCompatibleTarget`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RefusedEntry {
    /// The entry id as written in the bundle.
    pub id: String,
    /// Why it cannot run on the agent.
    pub reason: String,
}

fn code_object_version_name(abi_version: u8) -> String {
    match abi_version {
        0 => "code object v2".to_string(),
        v => format!("code object v{}", u32::from(v) + 2),
    }
}

struct NoMatchDisplay<'a> {
    agent: &'a str,
    policy: Policy,
    candidates: &'a [RefusedEntry],
    hint: &'a Option<String>,
}

impl fmt::Display for NoMatchDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no code object can run on agent {} (policy {})",
            self.agent, self.policy
        )?;
        if self.candidates.is_empty() {
            write!(f, "\n  the bundle has no entries")?;
        }
        for c in self.candidates {
            write!(f, "\n  {}: {}", c.id, c.reason)?;
        }
        if let Some(hint) = self.hint {
            for line in hint.lines() {
                write!(f, "\nhint: {line}")?;
            }
        }
        Ok(())
    }
}
