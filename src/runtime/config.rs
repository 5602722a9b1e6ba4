//! Configuration from the environment: the only module of the library that reads `ROCLOAD_*`
//! variables. Every layer below takes values (a [`BackendConfig`], a [`Policy`], an override
//! string), so tests and embedders never need to touch process-global state.
//!
//! | variable | read by | meaning |
//! |---|---|---|
//! | `ROCLOAD_BACKEND` | [`backend_config`] | `auto` (default), `hsa` or `soft` |
//! | `ROCLOAD_HSA_LIBRARY` | [`backend_config`] | the HSA runtime library to open |
//! | `ROCLOAD_SOFT_ISA` | [`backend_config`], [`soft_agent_isa`] | the software agent's ISA |
//! | `ROCLOAD_OVERRIDE_GFX_VERSION` | [`backend_config`], [`soft_agent_isa`] | ISA override |
//! | `ROCLOAD_ISA_POLICY` | [`policy`], [`runtime_options`] | `strict` (default) or `extended` |
//! | `ROCLOAD_LOADING` | [`runtime_options`] | `lazy` (default) or `eager` |
//! | `ROCLOAD_TOOLS` | [`tool_libraries`] | tool libraries librocload.so loads (`:`-separated) |
//! | `ROCLOAD_MAX_ENTRY_SIZE` | [`read_options`], [`runtime_options`] | largest entry extracted, in bytes (default 256 MiB) |
//! | `ROCLOAD_VERIFY` | [`read_options`], [`runtime_options`] | `1` checks every compressed bundle's MD5 (default `0`, as LLVM) |
//! | `ROCLOAD_MEMCHECK` | [`backend_config`] | `allocation` (default) or `every-access`: how the software agent checks kernels' memory accesses |
//!
//! `ROCLOAD_LOG` (the log filter) is read by the programs that install a log subscriber (the
//! `rocload` tool and `librocload.so`), not by the library.

use crate::backend::choose::{choose_agents, AgentSet, BackendChoice, BackendConfig, BackendError};
use crate::backend::soft::DEFAULT_SOFT_ISA;
use crate::target::{AgentIsa, Policy, TargetError};

use super::{Loading, RuntimeOptions};
use crate::container::{HashCheck, ReadOptions, MAX_ENTRY_SIZE_ENV, VERIFY_ENV};

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

/// Environment variable naming tool libraries to load at the first HIP call, `:`-separated
/// (what `rocload run --tool` sets).
pub const TOOLS_ENV: &str = "ROCLOAD_TOOLS";

/// The tool libraries named by `ROCLOAD_TOOLS`, in order; empty entries are skipped.
pub fn tool_libraries() -> Vec<String> {
    std::env::var(TOOLS_ENV)
        .map(|v| {
            v.split(':')
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A variable that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The variable is set but not valid Unicode.
    #[error("{var} is not valid Unicode")]
    NotUnicode {
        /// The variable.
        var: &'static str,
    },
    /// The backend choice is invalid, or the chosen backend cannot be used.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// A container-reading option (size cap, hash check) is invalid.
    #[error("{var}={value:?}: {reason}")]
    Read {
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

/// The variable's value; `None` when unset.
fn var(name: &'static str) -> Result<Option<String>, ConfigError> {
    match std::env::var(name) {
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(ConfigError::NotUnicode { var: name }),
    }
}

/// The backend configuration the environment describes.
///
/// # Errors
/// [`ConfigError::Backend`] for a bad `ROCLOAD_BACKEND`; [`ConfigError::Read`] for a bad
/// `ROCLOAD_MEMCHECK`; [`ConfigError::NotUnicode`].
pub fn backend_config() -> Result<BackendConfig, ConfigError> {
    let check_every_access = match var(MEMCHECK_ENV)? {
        None => false,
        Some(v) => parse_memcheck(&v).ok_or(ConfigError::Read {
            var: MEMCHECK_ENV,
            value: v.clone(),
            reason:
                "expected allocation (the default) or every-access; checking cannot be turned off",
        })?,
    };
    Ok(BackendConfig {
        choice: BackendChoice::from_env_value(var(BACKEND_ENV)?.as_deref())?,
        hsa_library: std::env::var_os(HSA_LIBRARY_ENV),
        soft_isa: var(SOFT_ISA_ENV)?,
        override_gfx_version: var(OVERRIDE_GFX_VERSION_ENV)?,
        check_every_access,
    })
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

/// The agents the environment chooses ([`choose_agents`] over [`backend_config`]).
///
/// # Errors
/// As [`backend_config`] and [`choose_agents`].
pub fn agents() -> Result<AgentSet, ConfigError> {
    Ok(choose_agents(&backend_config()?)?)
}

/// The ISA policy named by `ROCLOAD_ISA_POLICY` (strict when unset).
///
/// # Errors
/// [`ConfigError::Target`] for a value other than strict or extended.
pub fn policy() -> Result<Policy, ConfigError> {
    Policy::from_env_value(var(ISA_POLICY_ENV)?.as_deref()).map_err(|error| ConfigError::Target {
        var: ISA_POLICY_ENV,
        error,
    })
}

/// `isa` after `ROCLOAD_OVERRIDE_GFX_VERSION`, if set.
///
/// # Errors
/// [`ConfigError::Target`] for an invalid or unknown version.
pub fn apply_override(isa: AgentIsa) -> Result<AgentIsa, ConfigError> {
    isa.apply_override(var(OVERRIDE_GFX_VERSION_ENV)?.as_deref())
        .map_err(|error| ConfigError::Target {
            var: OVERRIDE_GFX_VERSION_ENV,
            error,
        })
}

/// The software agent's ISA: `ROCLOAD_SOFT_ISA` (default gfx1030), after the override.
///
/// # Errors
/// [`ConfigError::Target`] for an invalid ISA or override.
pub fn soft_agent_isa() -> Result<AgentIsa, ConfigError> {
    let text = var(SOFT_ISA_ENV)?.unwrap_or_else(|| DEFAULT_SOFT_ISA.to_owned());
    let isa = text.parse().map_err(|error| ConfigError::Target {
        var: SOFT_ISA_ENV,
        error,
    })?;
    apply_override(isa)
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

/// Whether `text` turns the MD5 check on (`1`, `true`, `yes`, `always`) or off (`0`,
/// `false`, `no`, `never`); `None` for anything else.
pub fn parse_verify(text: &str) -> Option<HashCheck> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" | "always" => Some(HashCheck::Always),
        "0" | "false" | "no" | "off" | "never" => Some(HashCheck::Never),
        _ => None,
    }
}

/// Container-reading options from `ROCLOAD_MAX_ENTRY_SIZE` (the cap on one entry's size)
/// and `ROCLOAD_VERIFY` (the MD5 check), over the defaults.
///
/// # Errors
/// [`ConfigError::Read`] for a value that is not a size or a switch;
/// [`ConfigError::NotUnicode`].
pub fn read_options() -> Result<ReadOptions, ConfigError> {
    let mut options = ReadOptions::default();
    if let Some(v) = var(MAX_ENTRY_SIZE_ENV)? {
        options.limits.max_entry_size = parse_size(&v).ok_or(ConfigError::Read {
            var: MAX_ENTRY_SIZE_ENV,
            value: v.clone(),
            reason: "expected a byte count such as 268435456, 512M or 2G",
        })?;
        tracing::debug!(
            limit = options.limits.max_entry_size,
            "entry size cap set from {MAX_ENTRY_SIZE_ENV}"
        );
    }
    if let Some(v) = var(VERIFY_ENV)? {
        options.verify = parse_verify(&v).ok_or(ConfigError::Read {
            var: VERIFY_ENV,
            value: v.clone(),
            reason: "expected 1 or 0",
        })?;
    }
    Ok(options)
}

/// Runtime options from `ROCLOAD_LOADING`, `ROCLOAD_ISA_POLICY`, `ROCLOAD_MAX_ENTRY_SIZE`
/// and `ROCLOAD_VERIFY`. Invalid values are logged and replaced by the defaults: a program's
/// start-up never fails on them.
pub fn runtime_options() -> RuntimeOptions {
    let loading = match var(LOADING_ENV) {
        Ok(Some(v)) => Loading::parse(&v).unwrap_or_else(|| {
            tracing::warn!(value = %v, "{LOADING_ENV} is neither lazy nor eager; using lazy");
            Loading::Lazy
        }),
        Ok(None) => Loading::Lazy,
        Err(e) => {
            tracing::warn!(error = %e, "using lazy loading");
            Loading::Lazy
        }
    };
    let policy = policy().unwrap_or_else(|e| {
        tracing::warn!(error = %e, "ignoring the ISA policy from the environment");
        Policy::default()
    });
    let read = read_options().unwrap_or_else(|e| {
        tracing::warn!(error = %e, "ignoring container-reading options from the environment");
        ReadOptions::default()
    });
    RuntimeOptions {
        loading,
        policy,
        read,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
