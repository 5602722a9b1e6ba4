//! The HSA backend: ROCr (`libhsa-runtime64`, or any library with its API such as the software
//! HSA library in `hsa-soft/`) through hsa-sys's checked calls.
//!
//! - [`agent`]: the runtime shared by its agents ([`HsaSystem`]: capabilities detected from the
//!   library's exports, the CPU agent, GPU memory faults) and GPU agents ([`HsaAgent`]);
//! - [`executable`]: code objects loaded by ROCr one at a time, after [`crate::loader::rocr`]'s
//!   checks, with imports published first and every placement read back and checked;
//! - [`memory`]: memory pools (device, host, kernarg), copies, fills, locked host memory;
//! - [`queue`]: AQL queues with an error callback, dispatch as clr does it, a completion
//!   watcher that turns signals (or a queue failure) into completions;
//! - [`signal`]: ROCr's signals behind the device layer's [`crate::device::Signal`];
//! - [`device`]: [`crate::device::Device`] for [`HsaAgent`], so the runtime launches on it;
//! - [`vmm`]: virtual memory (ROCr 6's `hsa_amd_vmem_*`) and IPC memory handles;
//! - [`image`]: images and samplers through ROCr's image extension (HIP's textures);
//!
//! Not for choosing a backend (`super::choose`) or for parsing: everything ROCr would refuse or
//! mishandle is found from the parsed module before ROCr sees it.
//!
//! **Never run on an AMD GPU** (this project has none). Everything past `hsa_init` runs in the
//! tests against the software HSA library (`hsa-soft/`, which follows ROCr's sources); against
//! Debian's real ROCr 5.2.3 only the paths up to `hsa_init` run (see `docs/hsa.md`).

pub mod agent;
pub mod device;
pub mod executable;
mod hostcall;
pub mod image;
pub mod memory;
pub mod queue;
pub mod signal;
pub mod vmm;

pub use agent::{HsaAgent, HsaAgentError, HsaSystem};
pub use executable::{HsaExecutable, HsaKernel, HsaLoaded};

use crate::target::{AgentIsa, TargetError};

/// None of the ISA names an agent reports is one rocload knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe_refusals(.refused))]
pub struct UnknownIsaError {
    /// Each name reported, with why it was refused (empty: the runtime reported none).
    pub refused: Vec<(String, TargetError)>,
}

fn describe_refusals(refused: &[(String, TargetError)]) -> String {
    if refused.is_empty() {
        return "the runtime reports no ISA".to_owned();
    }
    let reasons: Vec<String> = refused.iter().map(|(n, e)| format!("{n}: {e}")).collect();
    reasons.join("; ")
}

/// The agent's ISA from the names ROCr reports (`hsa_agent_iterate_isas`, best first): the
/// first one rocload knows, e.g. `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`.
///
/// No override is applied: ROCr checks code objects against the ISA it reports (its own
/// `HSA_OVERRIDE_GFX_VERSION` already changed that), so rocload's override would only make the
/// two disagree.
///
/// # Errors
/// [`UnknownIsaError`] with why each name was refused, when none is usable (or the list is
/// empty).
pub fn agent_isa_from_reported(names: &[String]) -> Result<AgentIsa, UnknownIsaError> {
    let mut refused = Vec::new();
    for name in names {
        match name.parse::<AgentIsa>() {
            Ok(isa) => return Ok(isa),
            Err(e) => refused.push((name.clone(), e)),
        }
    }
    Err(UnknownIsaError { refused })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isa_names_as_rocr_reports_them() {
        let isa =
            agent_isa_from_reported(&["amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-".to_owned()])
                .unwrap();
        assert_eq!(isa.isa_name(), "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
        // An unknown first name is skipped for a known second one.
        let isa = agent_isa_from_reported(&[
            "amdgcn-amd-amdhsa--gfx9999".to_owned(),
            "amdgcn-amd-amdhsa--gfx1030".to_owned(),
        ])
        .unwrap();
        assert_eq!(isa.isa_name(), "amdgcn-amd-amdhsa--gfx1030");
        let e = agent_isa_from_reported(&["amdgcn-amd-amdhsa--gfx9999".to_owned()]).unwrap_err();
        assert!(
            matches!(&e.refused[..], [(name, _)] if name == "amdgcn-amd-amdhsa--gfx9999"),
            "{e}"
        );
        let none = agent_isa_from_reported(&[]).unwrap_err();
        assert!(none.refused.is_empty());
        // The one message a user sees when the runtime names no ISA at all.
        assert_eq!(none.to_string(), "the runtime reports no ISA");
    }
}
