//! Configuration from the environment: the only code in the workspace that reads `ROCLOAD_*`
//! variables. [`Config::from_env`] reads every variable once into a [`Config`] value;
//! [`Config::global`] is the process's copy, which `librocload.so`, `libhsa_soft.so` and the
//! `rocload` tool all use. Every layer below takes values (a [`BackendConfig`], a [`Policy`],
//! [`ReadOptions`]), so tests and embedders build a [`Config`] from any set of variables
//! ([`Config::from_vars`]) without touching process-global state.
//!
//! | variable | field | meaning |
//! |---|---|---|
//! | `ROCLOAD_BACKEND` | [`Config::backend`] | `auto` (default), `hsa` or `soft` |
//! | `ROCLOAD_HSA_LIBRARY` | [`Config::hsa_library`] | the HSA runtime library to open |
//! | `ROCLOAD_SOFT_ISA` | [`Config::soft_isa`] | the software agents' ISAs, comma-separated |
//! | `ROCLOAD_OVERRIDE_GFX_VERSION` | [`Config::override_gfx_version`] | ISA override |
//! | `ROCLOAD_ISA_POLICY` | [`Config::policy`] | `strict` (default) or `extended` |
//! | `ROCLOAD_LOADING` | [`Config::loading`] | `lazy` (default) or `eager` |
//! | `ROCLOAD_TOOLS` | [`Config::tools`] | tool libraries librocload.so loads (`:`-separated) |
//! | `ROCLOAD_MAX_ENTRY_SIZE` | [`Config::max_entry_size`] | largest entry extracted, in bytes (default 256 MiB) |
//! | `ROCLOAD_VERIFY` | [`Config::verify`] | `1` checks every compressed bundle's MD5 (default `0`, as LLVM) |
//! | `ROCLOAD_MEMCHECK` | [`Config::memcheck`] | `allocation` (default) or `every-access`: how the software agent checks kernels' memory accesses |
//! | `ROCLOAD_WATCHDOG` | [`Config::watchdog`] | seconds a software-agent dispatch may run before it is stopped with a timeout report (default 120; `0`: never) |
//! | `ROCLOAD_FAULT_REPORTS` | [`Config::fault_reports`] | `0` stops the stderr report of each failed kernel on the software agent (default `1`) |
//! | `ROCLOAD_SCRATCH_BUDGET` | [`Config::scratch_budget`] | host memory the software agent's scratch may take at once, in bytes (default: a quarter of the host's memory, at most 4 GiB) |
//! | `ROCLOAD_DEVICE_MEMORY` | [`Config::device_memory`] | each software agent's device memory, in bytes: what it reports and what its allocations are counted against (default: a quarter of the host's memory, at most 16 GiB) |
//! | `ROCLOAD_LOG` | [`Config::log`] | the log filter of the programs that install a subscriber (`rocload`, `librocload.so`) |
//! | `ROCLOAD_HIPRTC_CLANG` | [`Config::hiprtc_clang`] | the compiler hiprtc runs |
//! | `ROCLOAD_DEVICE_LIB_PATH` | [`Config::device_lib_path`] | the device-library directory hiprtc passes to it |
//! | `ROCLOAD_SOFT_ROCR_VERSION` | [`Config::soft_rocr_version`] | the ROCr version `libhsa_soft.so` follows (`5.2.3` or `6.2`) |
//! | `ROCLOAD_RUN_MARKER` | [`Config::run_marker`] | set by `rocload run`: a file librocload.so creates at its first HIP call |
//! | `HIP_VISIBLE_DEVICES`, `CUDA_VISIBLE_DEVICES` | [`Config::visible_devices`] | HIP's: the devices a HIP program sees, by index, in order (HIP's wins when both are set) |
//! | `ROCR_VISIBLE_DEVICES` | [`Config::rocr_visible_devices`] | ROCr's: the GPU agents ROCr enumerates; applied to the software agents (ROCr applies it to its own) |
//!
//! A value that cannot be parsed is kept as a [`ConfigError`] in its field: the program that
//! needs the setting decides whether that is fatal (the `rocload` tool) or a logged fallback
//! to the default (a HIP program's start-up never fails on one).

use std::ffi::OsString;

use once_cell::sync::OnceCell;

use crate::backend::choose::{choose_agents, AgentSet, BackendChoice, BackendConfig, BackendError};
use crate::backend::soft::{EmulatorOptions, DEFAULT_SOFT_ISA};
use crate::container::{HashCheck, ReadOptions, MAX_ENTRY_SIZE_ENV, VERIFY_ENV};
use crate::target::{AgentIsa, Policy, TargetError};

use super::{Loading, RuntimeOptions};

pub use crate::backend::choose::BACKEND_ENV;
pub use crate::target::{
    ENV_ISA_POLICY as ISA_POLICY_ENV, ENV_OVERRIDE_GFX_VERSION as OVERRIDE_GFX_VERSION_ENV,
};
pub use hsa_sys::LIBRARY_ENV as HSA_LIBRARY_ENV;

/// Environment variable naming the software agent's ISA (a target id or full ISA name).
pub const SOFT_ISA_ENV: &str = "ROCLOAD_SOFT_ISA";
/// Environment variable choosing when fat binaries are loaded: `lazy` (default) or `eager`.
pub const LOADING_ENV: &str = "ROCLOAD_LOADING";
/// Environment variable choosing how the software agent checks kernels' memory accesses:
/// `allocation` (default: the first lane of an instruction finds its allocation, the others are
/// checked against its bounds) or `every-access` (every lane asks the allocation table, which
/// also catches a free racing the kernel). Checking cannot be turned off.
pub const MEMCHECK_ENV: &str = "ROCLOAD_MEMCHECK";
/// Environment variable setting the software agent's watchdog: the seconds a dispatch may run
/// before it is stopped and reported (decimals allowed; `0` turns it off; default 120).
pub const WATCHDOG_ENV: &str = "ROCLOAD_WATCHDOG";
/// Environment variable switching the software agent's fault reports: by default every failed
/// dispatch prints one report on stderr (a memory fault as ROCr prints one, then rocload's
/// details); `0` turns them off. The HIP error is returned either way.
pub const FAULT_REPORTS_ENV: &str = "ROCLOAD_FAULT_REPORTS";
/// Environment variable bounding the host memory the software agent's scratch (private
/// memory) may take at once: a byte count like `ROCLOAD_MAX_ENTRY_SIZE`'s (`512M`, `2G`).
/// Default: a quarter of the host's memory, at most 4 GiB.
pub const SCRATCH_BUDGET_ENV: &str = "ROCLOAD_SCRATCH_BUDGET";
/// Each software agent's device memory (host memory its `hipMalloc`, managed, array and
/// `hipMemCreate` allocations may take together): a byte count like `ROCLOAD_MAX_ENTRY_SIZE`'s.
pub const DEVICE_MEMORY_ENV: &str = "ROCLOAD_DEVICE_MEMORY";
/// Environment variable naming tool libraries to load at the first HIP call, `:`-separated
/// (what `rocload run --tool` sets).
pub const TOOLS_ENV: &str = "ROCLOAD_TOOLS";
/// Environment variable holding the log filter (`debug`, `rocload::loader=debug`, ...).
pub const LOG_ENV: &str = "ROCLOAD_LOG";
/// Environment variable naming the compiler hiprtc runs.
pub const HIPRTC_CLANG_ENV: &str = "ROCLOAD_HIPRTC_CLANG";
/// Environment variable naming the device-library directory hiprtc compiles against.
pub const DEVICE_LIB_PATH_ENV: &str = "ROCLOAD_DEVICE_LIB_PATH";
/// Environment variable choosing the ROCr version whose loader rules `libhsa_soft.so` follows.
pub const SOFT_ROCR_VERSION_ENV: &str = "ROCLOAD_SOFT_ROCR_VERSION";
/// Environment variable `rocload run` sets: a file to create at the first HIP call, so that it
/// can tell a program that never used HIP from one that did.
pub const RUN_MARKER_ENV: &str = "ROCLOAD_RUN_MARKER";
/// HIP's own variable: the devices a HIP program sees, by index (clr's rule, [`visible`]).
pub const HIP_VISIBLE_DEVICES_ENV: &str = "HIP_VISIBLE_DEVICES";
/// CUDA's name for it, which HIP honours when `HIP_VISIBLE_DEVICES` is unset or empty.
pub const CUDA_VISIBLE_DEVICES_ENV: &str = "CUDA_VISIBLE_DEVICES";
/// ROCr's variable: the GPU agents ROCr enumerates, by index.
pub const ROCR_VISIBLE_DEVICES_ENV: &str = "ROCR_VISIBLE_DEVICES";

/// Every `ROCLOAD_*` variable rocload reads.
pub const VARIABLES: &[&str] = &[
    BACKEND_ENV,
    HSA_LIBRARY_ENV,
    SOFT_ISA_ENV,
    OVERRIDE_GFX_VERSION_ENV,
    ISA_POLICY_ENV,
    LOADING_ENV,
    TOOLS_ENV,
    MAX_ENTRY_SIZE_ENV,
    VERIFY_ENV,
    MEMCHECK_ENV,
    WATCHDOG_ENV,
    FAULT_REPORTS_ENV,
    SCRATCH_BUDGET_ENV,
    DEVICE_MEMORY_ENV,
    LOG_ENV,
    HIPRTC_CLANG_ENV,
    DEVICE_LIB_PATH_ENV,
    SOFT_ROCR_VERSION_ENV,
    RUN_MARKER_ENV,
];

/// A variable that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The variable is set but not valid Unicode.
    #[error("{var} is not valid Unicode")]
    NotUnicode {
        /// The variable.
        var: &'static str,
    },
    /// The variable's value is not one the setting accepts.
    #[error("{var}={value:?}: {reason}")]
    Invalid {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is expected.
        reason: &'static str,
    },
    /// A target-layer value (policy, ISA, override) is invalid.
    #[error("{var}: {error}")]
    Target {
        /// The variable.
        var: &'static str,
        /// Why its value is refused.
        error: TargetError,
    },
}

/// Why the configured agents could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentsError {
    /// A variable the choice depends on is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The chosen backend cannot be used.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// One setting: its value, or why the variable's value was refused.
pub type Setting<T> = Result<T, ConfigError>;

/// Everything rocload takes from the environment, read once ([`Config::from_env`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// `ROCLOAD_BACKEND`.
    pub backend: Setting<BackendChoice>,
    /// `ROCLOAD_HSA_LIBRARY` (empty counts as unset).
    pub hsa_library: Option<OsString>,
    /// `ROCLOAD_SOFT_ISA` as given (empty counts as unset).
    pub soft_isa: Setting<Option<String>>,
    /// `ROCLOAD_OVERRIDE_GFX_VERSION` as given.
    pub override_gfx_version: Setting<Option<String>>,
    /// `ROCLOAD_ISA_POLICY`.
    pub policy: Setting<Policy>,
    /// `ROCLOAD_LOADING`.
    pub loading: Setting<Loading>,
    /// `ROCLOAD_TOOLS`, split at `:`, empty entries dropped.
    pub tools: Vec<String>,
    /// `ROCLOAD_MAX_ENTRY_SIZE`, when set.
    pub max_entry_size: Setting<Option<u64>>,
    /// `ROCLOAD_VERIFY`, when set.
    pub verify: Setting<Option<HashCheck>>,
    /// `ROCLOAD_MEMCHECK`: whether every access asks the allocation table.
    pub memcheck: Setting<bool>,
    /// `ROCLOAD_WATCHDOG`, when set: `Some(None)` for `0` (no watchdog).
    pub watchdog: Setting<Option<Option<std::time::Duration>>>,
    /// `ROCLOAD_FAULT_REPORTS`: whether failed dispatches are reported on stderr.
    pub fault_reports: Setting<bool>,
    /// `ROCLOAD_SCRATCH_BUDGET`, when set.
    pub scratch_budget: Setting<Option<u64>>,
    /// `ROCLOAD_DEVICE_MEMORY`, when set.
    pub device_memory: Setting<Option<u64>>,
    /// `ROCLOAD_LOG`: the log filter, when set.
    pub log: Option<String>,
    /// `ROCLOAD_HIPRTC_CLANG` (empty counts as unset).
    pub hiprtc_clang: Option<OsString>,
    /// `ROCLOAD_DEVICE_LIB_PATH` (empty counts as unset).
    pub device_lib_path: Option<OsString>,
    /// `ROCLOAD_SOFT_ROCR_VERSION` as given (empty counts as unset).
    pub soft_rocr_version: Option<String>,
    /// `ROCLOAD_RUN_MARKER`.
    pub run_marker: Option<OsString>,
    /// `HIP_VISIBLE_DEVICES`, else `CUDA_VISIBLE_DEVICES` (empty counts as unset).
    pub visible_devices: Option<String>,
    /// `ROCR_VISIBLE_DEVICES` (empty counts as unset).
    pub rocr_visible_devices: Option<String>,
}

static GLOBAL: OnceCell<Config> = OnceCell::new();

impl Default for Config {
    /// Every setting at its default, as with no variable set.
    fn default() -> Config {
        Config::from_vars(|_| None)
    }
}

impl Config {
    /// The process's configuration, read from the environment at the first call and never
    /// again (variables changed later are not seen).
    pub fn global() -> &'static Config {
        GLOBAL.get_or_init(Config::from_env)
    }

    /// Reads every `ROCLOAD_*` variable now.
    pub fn from_env() -> Config {
        Config::from_vars(std::env::var_os)
    }

    /// A configuration from `lookup`, which answers a variable's value (`None`: unset).
    ///
    /// # Examples
    /// ```
    /// use rocload::runtime::config::Config;
    /// use rocload::target::Policy;
    ///
    /// let config = Config::from_vars(|name| match name {
    ///     "ROCLOAD_ISA_POLICY" => Some("extended".into()),
    ///     "ROCLOAD_VERIFY" => Some("maybe".into()),
    ///     _ => None,
    /// });
    /// assert_eq!(config.policy, Ok(Policy::Extended));
    /// assert!(config.read_options().is_err()); // "maybe" is no switch
    /// ```
    pub fn from_vars(lookup: impl Fn(&'static str) -> Option<OsString>) -> Config {
        let text = |name: &'static str| -> Setting<Option<String>> {
            match lookup(name) {
                None => Ok(None),
                Some(v) => v
                    .into_string()
                    .map(Some)
                    .map_err(|_| ConfigError::NotUnicode { var: name }),
            }
        };
        let non_empty = |v: Option<OsString>| v.filter(|v| !v.is_empty());
        let invalid = |var: &'static str, value: &str, reason: &'static str| ConfigError::Invalid {
            var,
            value: value.to_owned(),
            reason,
        };

        let backend = text(BACKEND_ENV).and_then(|v| {
            BackendChoice::from_env_value(v.as_deref()).map_err(|_| {
                invalid(
                    BACKEND_ENV,
                    v.as_deref().unwrap_or_default(),
                    "expected auto, hsa or soft",
                )
            })
        });
        let policy = text(ISA_POLICY_ENV).and_then(|v| {
            Policy::from_env_value(v.as_deref()).map_err(|error| ConfigError::Target {
                var: ISA_POLICY_ENV,
                error,
            })
        });
        let loading = text(LOADING_ENV).and_then(|v| match v {
            None => Ok(Loading::Lazy),
            Some(v) => Loading::parse(&v)
                .ok_or_else(|| invalid(LOADING_ENV, &v, "expected lazy (the default) or eager")),
        });
        let max_entry_size = text(MAX_ENTRY_SIZE_ENV).and_then(|v| match v {
            None => Ok(None),
            Some(v) => parse_size(&v).map(Some).ok_or_else(|| {
                invalid(
                    MAX_ENTRY_SIZE_ENV,
                    &v,
                    "expected a byte count such as 268435456, 512M or 2G",
                )
            }),
        });
        let verify = text(VERIFY_ENV).and_then(|v| match v {
            None => Ok(None),
            Some(v) => parse_verify(&v)
                .map(Some)
                .ok_or_else(|| invalid(VERIFY_ENV, &v, "expected 1 or 0")),
        });
        let memcheck = text(MEMCHECK_ENV).and_then(|v| match v {
            None => Ok(false),
            Some(v) => parse_memcheck(&v).ok_or_else(|| {
                invalid(
                    MEMCHECK_ENV,
                    &v,
                    "expected allocation (the default) or every-access; checking cannot be turned off",
                )
            }),
        });
        let watchdog = text(WATCHDOG_ENV).and_then(|v| match v {
            None => Ok(None),
            Some(v) => parse_seconds(&v).map(Some).ok_or_else(|| {
                invalid(
                    WATCHDOG_ENV,
                    &v,
                    "expected seconds such as 120 or 0.5, or 0 for no watchdog",
                )
            }),
        });
        let fault_reports = text(FAULT_REPORTS_ENV).and_then(|v| match v {
            None => Ok(true),
            Some(v) => parse_switch(&v)
                .ok_or_else(|| invalid(FAULT_REPORTS_ENV, &v, "expected 1 (the default) or 0")),
        });
        let scratch_budget = text(SCRATCH_BUDGET_ENV).and_then(|v| match v {
            None => Ok(None),
            Some(v) => parse_size(&v).filter(|&b| b > 0).map(Some).ok_or_else(|| {
                invalid(
                    SCRATCH_BUDGET_ENV,
                    &v,
                    "expected a positive byte count such as 1073741824, 512M or 2G",
                )
            }),
        });
        let device_memory = text(DEVICE_MEMORY_ENV).and_then(|v| match v {
            None => Ok(None),
            Some(v) => parse_size(&v).filter(|&b| b > 0).map(Some).ok_or_else(|| {
                invalid(
                    DEVICE_MEMORY_ENV,
                    &v,
                    "expected a positive byte count such as 8589934592, 512M or 8G",
                )
            }),
        });
        let tools = text(TOOLS_ENV)
            .ok()
            .flatten()
            .map(|v| {
                v.split(':')
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Config {
            backend,
            hsa_library: non_empty(lookup(HSA_LIBRARY_ENV)),
            soft_isa: text(SOFT_ISA_ENV).map(|v| v.filter(|v| !v.trim().is_empty())),
            override_gfx_version: text(OVERRIDE_GFX_VERSION_ENV),
            policy,
            loading,
            tools,
            max_entry_size,
            verify,
            memcheck,
            watchdog,
            fault_reports,
            scratch_budget,
            device_memory,
            log: text(LOG_ENV).ok().flatten(),
            hiprtc_clang: non_empty(lookup(HIPRTC_CLANG_ENV)),
            device_lib_path: non_empty(lookup(DEVICE_LIB_PATH_ENV)),
            soft_rocr_version: text(SOFT_ROCR_VERSION_ENV)
                .ok()
                .flatten()
                .filter(|v| !v.trim().is_empty()),
            run_marker: lookup(RUN_MARKER_ENV),
            visible_devices: text(HIP_VISIBLE_DEVICES_ENV)
                .ok()
                .flatten()
                .filter(|v| !v.is_empty())
                .or_else(|| {
                    text(CUDA_VISIBLE_DEVICES_ENV)
                        .ok()
                        .flatten()
                        .filter(|v| !v.is_empty())
                }),
            rocr_visible_devices: text(ROCR_VISIBLE_DEVICES_ENV)
                .ok()
                .flatten()
                .filter(|v| !v.is_empty()),
        }
    }

    /// The backend configuration: what [`choose_agents`] takes.
    ///
    /// # Errors
    /// The first invalid variable among `ROCLOAD_BACKEND`, `ROCLOAD_SOFT_ISA`,
    /// `ROCLOAD_OVERRIDE_GFX_VERSION` and those of [`Config::emulator_options`].
    pub fn backend_config(&self) -> Result<BackendConfig, ConfigError> {
        Ok(BackendConfig {
            choice: self.backend.clone()?,
            hsa_library: self.hsa_library.clone(),
            soft_isa: self.soft_isa.clone()?,
            override_gfx_version: self.override_gfx_version.clone()?,
            emulator: self.emulator_options()?,
        })
    }

    /// How software agents run kernels and how much memory they have: `ROCLOAD_MEMCHECK`,
    /// `ROCLOAD_WATCHDOG`, `ROCLOAD_FAULT_REPORTS`, `ROCLOAD_SCRATCH_BUDGET` and
    /// `ROCLOAD_DEVICE_MEMORY` over the defaults.
    ///
    /// # Errors
    /// The first of those variables that is invalid.
    pub fn emulator_options(&self) -> Result<EmulatorOptions, ConfigError> {
        let mut options = EmulatorOptions {
            check_every_access: self.memcheck.clone()?,
            fault_reports: self.fault_reports.clone()?,
            ..EmulatorOptions::default()
        };
        if let Some(budget) = self.scratch_budget.clone()? {
            options.scratch_budget = budget;
        }
        if let Some(bytes) = self.device_memory.clone()? {
            options.device_memory = bytes;
        }
        if let Some(watchdog) = self.watchdog.clone()? {
            options.timeout = watchdog;
        }
        Ok(options)
    }

    /// The agents this configuration chooses ([`choose_agents`] over [`backend_config`]).
    ///
    /// [`backend_config`]: Config::backend_config
    ///
    /// # Errors
    /// As [`Config::backend_config`] and [`choose_agents`].
    pub fn agents(&self) -> Result<AgentSet, AgentsError> {
        Ok(choose_agents(&self.backend_config()?)?)
    }

    /// `isa` after `ROCLOAD_OVERRIDE_GFX_VERSION`, if set.
    ///
    /// # Errors
    /// [`ConfigError::Target`] for an invalid or unknown version.
    pub fn apply_override(&self, isa: AgentIsa) -> Result<AgentIsa, ConfigError> {
        isa.apply_override(self.override_gfx_version.clone()?.as_deref())
            .map_err(|error| ConfigError::Target {
                var: OVERRIDE_GFX_VERSION_ENV,
                error,
            })
    }

    /// The software agents' ISAs: each entry of `ROCLOAD_SOFT_ISA` (default gfx1030), after the
    /// override.
    ///
    /// # Errors
    /// [`ConfigError::Target`] for an invalid ISA or override.
    pub fn soft_agent_isas(&self) -> Result<Vec<AgentIsa>, ConfigError> {
        let list = self.soft_isa.clone()?;
        list.as_deref()
            .unwrap_or(DEFAULT_SOFT_ISA)
            .split(',')
            .map(|name| {
                let isa = name.trim().parse().map_err(|error| ConfigError::Target {
                    var: SOFT_ISA_ENV,
                    error,
                })?;
                self.apply_override(isa)
            })
            .collect()
    }

    /// The first software agent's ISA.
    ///
    /// # Errors
    /// As [`Config::soft_agent_isas`].
    pub fn soft_agent_isa(&self) -> Result<AgentIsa, ConfigError> {
        self.soft_agent_isas().map(|isas| isas[0])
    }

    /// Container-reading options: `ROCLOAD_MAX_ENTRY_SIZE` and `ROCLOAD_VERIFY` over the
    /// defaults.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] for a value that is not a size or a switch;
    /// [`ConfigError::NotUnicode`].
    pub fn read_options(&self) -> Result<ReadOptions, ConfigError> {
        let mut options = ReadOptions::default();
        if let Some(limit) = self.max_entry_size.clone()? {
            options.limits.max_entry_size = limit;
            tracing::debug!(limit, "entry size cap set from {MAX_ENTRY_SIZE_ENV}");
        }
        if let Some(verify) = self.verify.clone()? {
            options.verify = verify;
        }
        Ok(options)
    }

    /// Runtime options from `ROCLOAD_LOADING`, `ROCLOAD_ISA_POLICY`, `ROCLOAD_MAX_ENTRY_SIZE`
    /// and `ROCLOAD_VERIFY`. Invalid values are logged and replaced by the defaults: a
    /// program's start-up never fails on them.
    pub fn runtime_options(&self) -> RuntimeOptions {
        let loading = self.loading.clone().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "using lazy loading");
            Loading::Lazy
        });
        let policy = self.policy.clone().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "ignoring the ISA policy from the environment");
            Policy::default()
        });
        let read = self.read_options().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "ignoring container-reading options from the environment");
            ReadOptions::default()
        });
        RuntimeOptions {
            loading,
            policy,
            read,
        }
    }
}

/// Whether `text` asks for every access to be checked (`every-access`) or for the default
/// (`allocation`, or empty); `None` for anything else.
pub fn parse_memcheck(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" | "allocation" | "default" => Some(false),
        "every-access" | "every_access" => Some(true),
        _ => None,
    }
}

/// A watchdog in seconds (`120`, `0.5`): `Some(None)` for `0` (none), `None` for anything that
/// is not a finite, non-negative number of seconds a `Duration` holds.
pub fn parse_seconds(text: &str) -> Option<Option<std::time::Duration>> {
    let s: f64 = text.trim().parse().ok()?;
    if s == 0.0 {
        return Some(None);
    }
    std::time::Duration::try_from_secs_f64(s).ok().map(Some)
}

/// A byte count: decimal, or with a `K`, `M` or `G` suffix (binary multiples: `512M`).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 10),
        (i, 'm' | 'M') => (&t[..i], 20),
        (i, 'g' | 'G') => (&t[..i], 30),
        _ => (t, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

/// A switch: `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`; `None` for anything else.
pub fn parse_switch(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Whether `text` turns the MD5 check on (`1`, `true`, `yes`, `always`) or off (`0`,
/// `false`, `no`, `never`); `None` for anything else.
pub fn parse_verify(text: &str) -> Option<HashCheck> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" | "always" => Some(HashCheck::Always),
        "0" | "false" | "no" | "off" | "never" => Some(HashCheck::Never),
        _ => None,
    }
}

/// The devices a visible-devices list (`HIP_VISIBLE_DEVICES`, `ROCR_VISIBLE_DEVICES`) keeps of
/// `count`, as indices into them in the list's order, by clr's rule: comma-separated decimal
/// indices, read up to the first entry that is not one (negative, `count` or more, or not
/// written as a plain number, such as a UUID); repeated indices count once. A list whose first
/// entry is invalid keeps no device.
pub fn visible(list: &str, count: usize) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::new();
    for entry in list.split(',') {
        let index = match entry.parse::<usize>() {
            Ok(i) if i < count && i.to_string() == entry => i,
            _ => break,
        };
        if !kept.contains(&index) {
            kept.push(index);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Config {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        Config::from_vars(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn sizes_and_switches_parse() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("1k"), Some(1024));
        assert_eq!(parse_size("M"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("99999999999999G"), None);
        assert_eq!(parse_verify("1"), Some(HashCheck::Always));
        assert_eq!(parse_verify("never"), Some(HashCheck::Never));
        assert_eq!(parse_verify("maybe"), None);
        assert_eq!(parse_memcheck(""), Some(false));
        assert_eq!(parse_memcheck("allocation"), Some(false));
        assert_eq!(parse_memcheck(" Every-Access "), Some(true));
        assert_eq!(parse_memcheck("off"), None);
        assert_eq!(parse_switch(" Off"), Some(false));
        assert_eq!(parse_switch("1"), Some(true));
        assert_eq!(parse_switch("maybe"), None);
        assert_eq!(parse_seconds("0"), Some(None));
        assert_eq!(
            parse_seconds(" 1.5 "),
            Some(Some(std::time::Duration::from_millis(1500)))
        );
        assert_eq!(parse_seconds("-1"), None);
        assert_eq!(parse_seconds("inf"), None);
        assert_eq!(parse_seconds("NaN"), None);
        assert_eq!(parse_seconds("2m"), None);
    }

    #[test]
    fn visible_device_lists_stop_at_the_first_invalid_entry() {
        assert_eq!(visible("0", 2), [0]);
        assert_eq!(visible("1,0", 2), [1, 0]);
        assert_eq!(visible("1,1,0", 2), [1, 0]);
        assert_eq!(visible("0,2,1", 2), [0]);
        assert_eq!(visible("0,-1,1", 2), [0]);
        assert!(visible("-1", 2).is_empty());
        assert!(visible("2", 2).is_empty());
        assert!(visible("01", 2).is_empty());
        assert!(visible("GPU-1234", 2).is_empty());
        let c = config(&[
            (CUDA_VISIBLE_DEVICES_ENV, "1"),
            (ROCR_VISIBLE_DEVICES_ENV, "0,1"),
        ]);
        assert_eq!(c.visible_devices.as_deref(), Some("1"));
        assert_eq!(c.rocr_visible_devices.as_deref(), Some("0,1"));
        let c = config(&[
            (CUDA_VISIBLE_DEVICES_ENV, "1"),
            (HIP_VISIBLE_DEVICES_ENV, "0"),
        ]);
        assert_eq!(c.visible_devices.as_deref(), Some("0"));
        assert_eq!(Config::default().visible_devices, None);
    }

    #[test]
    fn defaults_with_no_variable() {
        let c = Config::default();
        assert_eq!(c.backend, Ok(BackendChoice::Auto));
        assert_eq!(c.policy, Ok(Policy::Strict));
        assert_eq!(c.loading, Ok(Loading::Lazy));
        assert_eq!(c.memcheck, Ok(false));
        let emulator = c.emulator_options().unwrap();
        assert_eq!(emulator, EmulatorOptions::default());
        assert!(emulator.scratch_budget > 0 && emulator.scratch_budget <= 4 << 30);
        assert!(emulator.device_memory > 0 && emulator.device_memory <= 16 << 30);
        assert_eq!(emulator.timeout, Some(std::time::Duration::from_secs(120)));
        assert!(emulator.fault_reports);
        assert!(c.tools.is_empty());
        assert_eq!(c.read_options().unwrap(), ReadOptions::default());
        let isas = c.soft_agent_isas().unwrap();
        assert_eq!(isas.len(), 1);
        assert_eq!(
            isas[0].to_string(),
            DEFAULT_SOFT_ISA.parse::<AgentIsa>().unwrap().to_string()
        );
    }

    #[test]
    fn each_setting_is_read_from_its_variable() {
        let c = config(&[
            (BACKEND_ENV, "soft"),
            (HSA_LIBRARY_ENV, "/x/libhsa.so"),
            (SOFT_ISA_ENV, "gfx1030, gfx90a:xnack+"),
            (ISA_POLICY_ENV, "extended"),
            (LOADING_ENV, "eager"),
            (TOOLS_ENV, "a.so::b.so"),
            (MAX_ENTRY_SIZE_ENV, "1M"),
            (VERIFY_ENV, "1"),
            (MEMCHECK_ENV, "every-access"),
            (SCRATCH_BUDGET_ENV, "96M"),
            (DEVICE_MEMORY_ENV, "3G"),
            (WATCHDOG_ENV, "0"),
            (FAULT_REPORTS_ENV, "0"),
            (LOG_ENV, "debug"),
            (HIPRTC_CLANG_ENV, "/usr/bin/clang"),
            (DEVICE_LIB_PATH_ENV, ""),
            (SOFT_ROCR_VERSION_ENV, "6.2"),
            (RUN_MARKER_ENV, "/tmp/m"),
        ]);
        let backend = c.backend_config().unwrap();
        assert_eq!(backend.choice, BackendChoice::Soft);
        assert_eq!(backend.hsa_library, Some("/x/libhsa.so".into()));
        assert!(backend.emulator.check_every_access);
        assert_eq!(backend.emulator.scratch_budget, 96 << 20);
        assert_eq!(backend.emulator.device_memory, 3 << 30);
        assert_eq!(backend.emulator.timeout, None);
        assert!(!backend.emulator.fault_reports);
        assert_eq!(c.soft_agent_isas().unwrap().len(), 2);
        assert_eq!(c.policy, Ok(Policy::Extended));
        assert_eq!(c.loading, Ok(Loading::Eager));
        assert_eq!(c.tools, ["a.so", "b.so"]);
        let read = c.read_options().unwrap();
        assert_eq!(read.limits.max_entry_size, 1 << 20);
        assert_eq!(read.verify, HashCheck::Always);
        assert_eq!(c.log.as_deref(), Some("debug"));
        assert_eq!(c.hiprtc_clang, Some("/usr/bin/clang".into()));
        assert_eq!(c.device_lib_path, None);
        assert_eq!(c.soft_rocr_version.as_deref(), Some("6.2"));
        assert_eq!(c.run_marker, Some("/tmp/m".into()));
    }

    #[test]
    fn invalid_values_are_errors_that_name_the_variable() {
        let c = config(&[
            (BACKEND_ENV, "cuda"),
            (MEMCHECK_ENV, "off"),
            (SCRATCH_BUDGET_ENV, "0"),
            (DEVICE_MEMORY_ENV, "lots"),
            (WATCHDOG_ENV, "soon"),
            (LOADING_ENV, "sometimes"),
            (SOFT_ISA_ENV, "gfx9999"),
        ]);
        assert!(matches!(
            c.backend,
            Err(ConfigError::Invalid { var: BACKEND_ENV, ref value, .. }) if value == "cuda"
        ));
        assert!(matches!(
            c.memcheck,
            Err(ConfigError::Invalid {
                var: MEMCHECK_ENV,
                ..
            })
        ));
        assert!(matches!(
            c.watchdog,
            Err(ConfigError::Invalid {
                var: WATCHDOG_ENV,
                ..
            })
        ));
        assert!(matches!(
            c.scratch_budget,
            Err(ConfigError::Invalid {
                var: SCRATCH_BUDGET_ENV,
                ..
            })
        ));
        assert!(matches!(
            c.device_memory,
            Err(ConfigError::Invalid {
                var: DEVICE_MEMORY_ENV,
                ..
            })
        ));
        assert!(c.backend_config().is_err());
        assert!(matches!(
            c.soft_agent_isas(),
            Err(ConfigError::Target {
                var: SOFT_ISA_ENV,
                ..
            })
        ));
        // Start-up falls back to the defaults.
        assert_eq!(c.runtime_options().loading, Loading::Lazy);
    }
}
