//! Choosing the backend: `ROCLOAD_BACKEND=auto|hsa|soft`.
//!
//! - `auto` (or unset): the HSA runtime's GPU agents when the library loads, `hsa_init`
//!   succeeds and at least one GPU agent has an ISA rocload knows; otherwise the software agent,
//!   with one `info` log line saying why.
//! - `hsa`: the same, but any failure is a [`BackendError`]; no fallback.
//! - `soft`: the software agent only; the HSA library is not even opened.
//!
//! [`choose_agents`] takes every input as a value ([`BackendConfig`]); the runtime's
//! configuration (`crate::runtime::config`) fills it from the environment. Not for loading
//! (the backends) or for selecting code objects (the target layer).

use std::ffi::OsString;
use std::sync::Arc;

use hsa_sys::{Hsa, HsaError, HsaLibrary};

use super::hsa::{HsaAgent, HsaAgentError, HsaSystem};
use super::soft::{EmulatorOptions, SignalTable, SoftAgent, DEFAULT_SOFT_ISA};
use crate::device::Device;
use crate::loader::Agent;
use crate::target::{AgentIsa, TargetError};

/// Environment variable choosing the backend: `auto` (default), `hsa` or `soft`.
pub const BACKEND_ENV: &str = "ROCLOAD_BACKEND";

/// Which backend to use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// HSA when usable, else the software agent.
    #[default]
    Auto,
    /// HSA or an error.
    Hsa,
    /// The software agent only.
    Soft,
}

impl BackendChoice {
    /// The choice named by a `ROCLOAD_BACKEND` value: unset or empty means `Auto`; otherwise
    /// `auto`, `hsa` or `soft`, ASCII case-insensitive, surrounding spaces ignored.
    ///
    /// # Errors
    /// [`BackendError::InvalidChoice`] naming the value.
    pub fn from_env_value(value: Option<&str>) -> Result<BackendChoice, BackendError> {
        match value.map(str::trim) {
            None | Some("") => Ok(BackendChoice::Auto),
            Some(v) if v.eq_ignore_ascii_case("auto") => Ok(BackendChoice::Auto),
            Some(v) if v.eq_ignore_ascii_case("hsa") => Ok(BackendChoice::Hsa),
            Some(v) if v.eq_ignore_ascii_case("soft") => Ok(BackendChoice::Soft),
            Some(_) => Err(BackendError::InvalidChoice {
                value: value.unwrap_or_default().to_owned(),
            }),
        }
    }

    /// `auto`, `hsa` or `soft`.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Hsa => "hsa",
            BackendChoice::Soft => "soft",
        }
    }
}

/// Everything the choice depends on, as values (the environment variables' contents).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackendConfig {
    /// `ROCLOAD_BACKEND`.
    pub choice: BackendChoice,
    /// `ROCLOAD_HSA_LIBRARY`: the one HSA library path to open; `None` (or empty) tries
    /// `libhsa-runtime64.so.1`, then `libhsa-runtime64.so`.
    pub hsa_library: Option<OsString>,
    /// `ROCLOAD_SOFT_ISA`: the software agent's ISA (default gfx1030).
    pub soft_isa: Option<String>,
    /// `ROCLOAD_OVERRIDE_GFX_VERSION`, applied to the software agent only (ROCr applies its
    /// own `HSA_OVERRIDE_GFX_VERSION` to HSA agents).
    pub override_gfx_version: Option<String>,
    /// How software agents run kernels: `ROCLOAD_MEMCHECK=every-access` (every lane's access
    /// asks the allocation table), `ROCLOAD_WATCHDOG`, `ROCLOAD_SCRATCH_BUDGET`,
    /// `ROCLOAD_FAULT_REPORTS`.
    pub emulator: EmulatorOptions,
}

/// What happened with the HSA runtime, for reports (`rocload agents --json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct HsaStatus {
    /// Whether the HSA backend was tried at all (not with `soft`).
    pub tried: bool,
    /// The library file that was opened (resolved by the dynamic loader when possible), or
    /// `None` when none could be (or none was tried).
    pub library: Option<String>,
    /// Whether the HSA backend is in use.
    pub available: bool,
    /// Why it is not: the failed load, call and status, or the lack of GPU agents.
    pub error: Option<String>,
}

/// The agents chosen, and what happened with HSA.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentSet {
    /// The choice that was made.
    pub choice: BackendChoice,
    /// The agents to load code on: HSA GPU agents, or the software agents.
    pub agents: Vec<Arc<dyn Agent>>,
    /// For each agent, the same agent as a device that runs kernels (software agents and
    /// ROCr's GPU agents alike); `None` is kept for runtimes built over loaders only.
    pub devices: Vec<Option<Arc<dyn Device>>>,
    /// The same HSA agents with their concrete type (for HSA-specific queries); empty when
    /// the software agent is in use.
    pub hsa_agents: Vec<HsaAgent>,
    /// The HSA runtime's status.
    pub hsa: HsaStatus,
}

/// Why the HSA backend cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HsaUnavailable {
    /// No library could be opened.
    #[error(transparent)]
    Library(hsa_sys::LoadError),
    /// `hsa_init` failed (without an AMD GPU driver: `HSA_STATUS_ERROR_OUT_OF_RESOURCES`).
    #[error("{library}: {error}")]
    Init {
        /// The library.
        library: String,
        /// The `hsa_init` failure, with `hsa_status_string`'s message.
        error: HsaError,
    },
    /// Listing agents failed.
    #[error("{library}: listing agents: {error}")]
    Agents {
        /// The library.
        library: String,
        /// The failure.
        error: HsaError,
    },
    /// The runtime initialised but reports no GPU agent.
    #[error("{library}: hsa_init succeeded but the runtime reports no GPU agent")]
    NoGpuAgent {
        /// The library.
        library: String,
    },
    /// Every GPU agent is unusable (an unknown ISA, a failed query).
    #[error("{library}: no usable GPU agent: {}", agents.iter().map(|a| a.to_string()).collect::<Vec<_>>().join("; "))]
    NoUsableAgent {
        /// The library.
        library: String,
        /// Why each agent is unusable.
        agents: Vec<HsaAgentError>,
    },
}

impl HsaUnavailable {
    /// What went wrong, without the library's name (which [`HsaUnavailable::library`] gives).
    pub fn reason(&self) -> String {
        match self {
            HsaUnavailable::Library(e) => e.to_string(),
            HsaUnavailable::Init { error, .. } => error.to_string(),
            HsaUnavailable::Agents { error, .. } => format!("listing agents: {error}"),
            HsaUnavailable::NoGpuAgent { .. } => {
                "hsa_init succeeded but the runtime reports no GPU agent".to_owned()
            }
            HsaUnavailable::NoUsableAgent { agents, .. } => {
                format!(
                    "no usable GPU agent: {}",
                    agents
                        .iter()
                        .map(|a| a.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            }
        }
    }

    /// The library that was opened, if any.
    pub fn library(&self) -> Option<&str> {
        match self {
            HsaUnavailable::Library(_) => None,
            HsaUnavailable::Init { library, .. }
            | HsaUnavailable::Agents { library, .. }
            | HsaUnavailable::NoGpuAgent { library }
            | HsaUnavailable::NoUsableAgent { library, .. } => Some(library),
        }
    }
}

/// Why no agents could be chosen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// `ROCLOAD_BACKEND` holds something else than auto, hsa or soft.
    #[error("{BACKEND_ENV}={value:?}: expected auto, hsa or soft")]
    InvalidChoice {
        /// The value.
        value: String,
    },
    /// `ROCLOAD_BACKEND=hsa` and the HSA backend cannot be used.
    #[error("{BACKEND_ENV}=hsa, but the HSA backend is unavailable: {0}")]
    HsaUnavailable(#[from] HsaUnavailable),
    /// The software agent's ISA or override is invalid.
    #[error("software agent: {0}")]
    SoftAgent(#[from] TargetError),
}

/// Chooses the agents as `config` says (see the module documentation).
///
/// # Errors
/// [`BackendError::HsaUnavailable`] with `hsa` when HSA cannot be used;
/// [`BackendError::SoftAgent`] when the software agent is needed and its ISA is invalid.
pub fn choose_agents(config: &BackendConfig) -> Result<AgentSet, BackendError> {
    let choice = config.choice;
    if choice == BackendChoice::Soft {
        let (agents, devices) = soft_agents(config)?;
        return Ok(AgentSet {
            choice,
            agents,
            devices,
            hsa_agents: Vec::new(),
            hsa: HsaStatus::default(),
        });
    }
    match hsa_agents(config) {
        Ok((library, agents)) => {
            tracing::debug!(%library, agents = agents.len(), "using the HSA backend");
            let shared: Vec<Arc<dyn Agent>> = agents
                .iter()
                .map(|a| Arc::new(a.clone()) as Arc<dyn Agent>)
                .collect();
            let devices = agents
                .iter()
                .map(|a| Some(Arc::new(a.clone()) as Arc<dyn Device>))
                .collect();
            Ok(AgentSet {
                choice,
                devices,
                agents: shared,
                hsa_agents: agents,
                hsa: HsaStatus {
                    tried: true,
                    library: Some(library),
                    available: true,
                    error: None,
                },
            })
        }
        Err(why) if choice == BackendChoice::Hsa => Err(why.into()),
        Err(why) => {
            tracing::info!(reason = %why, "{BACKEND_ENV}=auto: HSA backend unavailable, using the software agent");
            let hsa = HsaStatus {
                tried: true,
                library: why.library().map(str::to_owned),
                available: false,
                error: Some(why.reason()),
            };
            let (agents, devices) = soft_agents(config)?;
            Ok(AgentSet {
                choice,
                agents,
                devices,
                hsa_agents: Vec::new(),
                hsa,
            })
        }
    }
}

/// The software agents `ROCLOAD_SOFT_ISA` names: a comma-separated list (`gfx1030,gfx1030`),
/// one device each, every one with its own memory.
type SoftAgents = (Vec<Arc<dyn Agent>>, Vec<Option<Arc<dyn Device>>>);

fn soft_agents(config: &BackendConfig) -> Result<SoftAgents, BackendError> {
    let list = config.soft_isa.as_deref().unwrap_or(DEFAULT_SOFT_ISA);
    let mut agents = Vec::new();
    let mut devices = Vec::new();
    for (i, name) in list.split(',').map(str::trim).enumerate() {
        let isa: AgentIsa = name.parse()?;
        let isa = isa.apply_override(config.override_gfx_version.as_deref())?;
        // GPU nodes follow the CPU's (node 0), as ROCr numbers them.
        let options = EmulatorOptions {
            node: u32::try_from(i + 1).unwrap_or(u32::MAX),
            ..config.emulator.clone()
        };
        let agent = Arc::new(SoftAgent::with_options(
            isa,
            Arc::new(SignalTable::new()),
            &options,
        ));
        agents.push(agent.clone() as Arc<dyn Agent>);
        devices.push(Some(agent as Arc<dyn Device>));
    }
    Ok((agents, devices))
}

/// Opens the library `config` names, or the default sonames in order, listing every attempt.
fn open_library(config: &BackendConfig) -> Result<HsaLibrary, hsa_sys::LoadError> {
    HsaLibrary::load(config.hsa_library.as_deref())
}

/// The library's file (as the dynamic loader resolved it) or the name it was opened by.
fn library_name(lib: &HsaLibrary) -> String {
    lib.file()
        .map(|f| f.display().to_string())
        .unwrap_or_else(|| lib.name().to_owned())
}

fn hsa_agents(config: &BackendConfig) -> Result<(String, Vec<HsaAgent>), HsaUnavailable> {
    let lib = Arc::new(open_library(config).map_err(HsaUnavailable::Library)?);
    let library = library_name(&lib);
    let hsa = Arc::new(Hsa::init(lib).map_err(|error| HsaUnavailable::Init {
        library: library.clone(),
        error,
    })?);
    // Past hsa_init: never run on a GPU; runs against the software HSA library (hsa-soft).
    // An agent whose query fails is skipped, not a reason to give up on the others.
    let (all, failures) = hsa
        .agents_and_failures()
        .map_err(|error| HsaUnavailable::Agents {
            library: library.clone(),
            error,
        })?;
    let mut unusable: Vec<HsaAgentError> = failures
        .into_iter()
        .map(|f| HsaAgentError::Query {
            agent: format!("agent {:#x}", f.handle.handle),
            error: f.error,
        })
        .collect();
    let gpus: Vec<hsa_sys::Agent> = all
        .into_iter()
        .filter(|a| a.device_type == hsa_sys::DeviceType::Gpu)
        .collect();
    if gpus.is_empty() && unusable.is_empty() {
        return Err(HsaUnavailable::NoGpuAgent { library });
    }
    let system = HsaSystem::new(hsa);
    let mut agents = Vec::with_capacity(gpus.len());
    for gpu in &gpus {
        match HsaAgent::new(system.clone(), gpu) {
            Ok(agent) => agents.push(agent),
            Err(e) => {
                tracing::debug!(error = %e, "skipping HSA agent");
                unusable.push(e);
            }
        }
    }
    if agents.is_empty() {
        return Err(HsaUnavailable::NoUsableAgent {
            library,
            agents: unusable,
        });
    }
    Ok((library, agents))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_values() {
        assert_eq!(
            BackendChoice::from_env_value(None).unwrap(),
            BackendChoice::Auto
        );
        assert_eq!(
            BackendChoice::from_env_value(Some(" ")).unwrap(),
            BackendChoice::Auto
        );
        assert_eq!(
            BackendChoice::from_env_value(Some("HSA")).unwrap(),
            BackendChoice::Hsa
        );
        assert_eq!(
            BackendChoice::from_env_value(Some("soft")).unwrap(),
            BackendChoice::Soft
        );
        let e = BackendChoice::from_env_value(Some("cuda")).unwrap_err();
        assert!(
            matches!(&e, BackendError::InvalidChoice { value } if value == "cuda"),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "ROCLOAD_BACKEND=\"cuda\": expected auto, hsa or soft"
        );
    }

    #[test]
    fn soft_never_opens_the_library() {
        let config = BackendConfig {
            choice: BackendChoice::Soft,
            hsa_library: Some("/nonexistent/libhsa.so".into()),
            ..Default::default()
        };
        let set = choose_agents(&config).unwrap();
        assert_eq!(set.hsa, HsaStatus::default());
        assert_eq!(set.agents.len(), 1);
        assert_eq!(set.agents[0].isa().isa_name(), "amdgcn-amd-amdhsa--gfx1030");
    }
}
