// The safe API: an initialised runtime that shuts down on Drop, and the agents it reports.
// Deliberately thin; executables, memory and dispatch belong to rocload's backend, built on
// `result`. Not a place for selection policy.

use std::sync::Arc;

use crate::bindings::*;
use crate::error::HsaError;
use crate::{result, HsaLibrary};

/// An initialised HSA runtime: one `hsa_init` reference, released (`hsa_shut_down`) on Drop.
///
/// Holding an `Arc` to the library keeps it, and every handle obtained through this value, valid
/// for as long as the `Hsa` lives.
#[derive(Debug)]
pub struct Hsa {
    lib: Arc<HsaLibrary>,
}

/// What kind of device an agent is (`HSA_AGENT_INFO_DEVICE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceType {
    /// `HSA_DEVICE_TYPE_CPU`.
    Cpu,
    /// `HSA_DEVICE_TYPE_GPU`.
    Gpu,
    /// `HSA_DEVICE_TYPE_DSP`.
    Dsp,
    /// A code the headers do not name.
    Other(u32),
}

impl DeviceType {
    /// Converts the runtime's `hsa_device_type_t`.
    pub fn from_raw(raw: hsa_device_type_t) -> Self {
        match raw {
            HSA_DEVICE_TYPE_CPU => DeviceType::Cpu,
            HSA_DEVICE_TYPE_GPU => DeviceType::Gpu,
            HSA_DEVICE_TYPE_DSP => DeviceType::Dsp,
            other => DeviceType::Other(other),
        }
    }
}

/// An agent as the runtime describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// The runtime's handle, valid while the [`Hsa`] it came from lives.
    pub handle: hsa_agent_t,
    /// `HSA_AGENT_INFO_NAME`, e.g. `gfx1030` (GPU) or the CPU's model name.
    pub name: String,
    /// CPU, GPU or other.
    pub device_type: DeviceType,
    /// Full ISA names the agent supports, best first (e.g. `amdgcn-amd-amdhsa--gfx1030`);
    /// usually empty for CPU agents.
    pub isas: Vec<String>,
}

/// An agent [`Hsa::agents_and_failures`] could not describe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentFailure {
    /// The runtime's handle.
    pub handle: hsa_agent_t,
    /// The query that failed.
    pub error: HsaError,
}

// Describes every handle, keeping the ones that fail apart instead of failing all.
fn describe_each(
    handles: Vec<hsa_agent_t>,
    describe: impl Fn(hsa_agent_t) -> Result<Agent, HsaError>,
) -> (Vec<Agent>, Vec<AgentFailure>) {
    let mut agents = Vec::with_capacity(handles.len());
    let mut failures = Vec::new();
    for handle in handles {
        match describe(handle) {
            Ok(agent) => {
                tracing::debug!(name = %agent.name, device = ?agent.device_type, isas = ?agent.isas, "HSA agent");
                agents.push(agent);
            }
            Err(error) => {
                tracing::debug!(agent = handle.handle, %error, "skipping an HSA agent whose query failed");
                failures.push(AgentFailure { handle, error });
            }
        }
    }
    (agents, failures)
}

impl Hsa {
    /// Calls `hsa_init`.
    ///
    /// # Errors
    /// The [`HsaError`] of `hsa_init`; without an AMD GPU driver that is
    /// `HSA_STATUS_ERROR_OUT_OF_RESOURCES`.
    pub fn init(lib: Arc<HsaLibrary>) -> Result<Hsa, HsaError> {
        result::init(&lib)?;
        Ok(Hsa { lib })
    }

    /// The library this runtime was initialised from.
    pub fn library(&self) -> &Arc<HsaLibrary> {
        &self.lib
    }

    /// Every agent whose name, device type and ISA names could be read. An agent whose query
    /// fails is skipped (and logged), not a reason to give up on the others: see
    /// [`Hsa::agents_and_failures`] for the failures.
    ///
    /// # Errors
    /// `hsa_iterate_agents` failing.
    pub fn agents(&self) -> Result<Vec<Agent>, HsaError> {
        Ok(self.agents_and_failures()?.0)
    }

    /// Every agent that could be described, and, for each one that could not, its handle and
    /// the failed query.
    ///
    /// # Errors
    /// `hsa_iterate_agents` failing.
    pub fn agents_and_failures(&self) -> Result<(Vec<Agent>, Vec<AgentFailure>), HsaError> {
        let lib = &*self.lib;
        let handles = result::iterate_agents(lib)?;
        Ok(describe_each(handles, |handle| {
            // SAFETY: `handle` came from hsa_iterate_agents under the init `self` holds.
            unsafe {
                let name = result::agent_name(lib, handle)?;
                let device_type = DeviceType::from_raw(result::agent_device_type(lib, handle)?);
                let mut isas = Vec::new();
                for isa in result::agent_isas(lib, handle)? {
                    isas.push(result::isa_name(lib, isa)?);
                }
                Ok(Agent {
                    handle,
                    name,
                    device_type,
                    isas,
                })
            }
        }))
    }

    /// The GPU agents of [`Hsa::agents`].
    ///
    /// # Errors
    /// As [`Hsa::agents`].
    pub fn gpu_agents(&self) -> Result<Vec<Agent>, HsaError> {
        Ok(self
            .agents()?
            .into_iter()
            .filter(|a| a.device_type == DeviceType::Gpu)
            .collect())
    }

    /// Shuts down now and returns the `hsa_shut_down` result (Drop does the same but can only
    /// record a failure, see [`HsaLibrary::take_deferred_errors`]).
    ///
    /// # Errors
    /// The [`HsaError`] of `hsa_shut_down`.
    pub fn shut_down(self) -> Result<(), HsaError> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` owns one init reference and is consumed, so no handle obtained through it
        // can be used again. The Arc is moved out exactly once and `this` is never dropped.
        let lib = unsafe { std::ptr::read(&this.lib) };
        // SAFETY: as above.
        unsafe { result::shut_down(&lib) }
    }
}

impl Drop for Hsa {
    fn drop(&mut self) {
        // SAFETY: `self` owns one init reference and is going away with every borrow of it.
        if let Err(error) = unsafe { result::shut_down(&self.lib) } {
            self.lib.defer_error(error);
        }
    }
}

// Compile-time check: an initialised runtime may be shared across threads (the HSA API is
// thread-safe).
const _: fn() = || {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Hsa>();
    assert_send_sync::<HsaLibrary>();
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_failing_agent_is_skipped_not_fatal() {
        let handles = vec![
            hsa_agent_t { handle: 1 },
            hsa_agent_t { handle: 2 },
            hsa_agent_t { handle: 3 },
        ];
        let (agents, failures) = describe_each(handles, |h| {
            if h.handle == 2 {
                Err(HsaError::from_status(
                    "hsa_agent_iterate_isas",
                    HSA_STATUS_ERROR_INVALID_AGENT,
                ))
            } else {
                Ok(Agent {
                    handle: h,
                    name: format!("gpu{}", h.handle),
                    device_type: DeviceType::Gpu,
                    isas: vec!["amdgcn-amd-amdhsa--gfx1030".into()],
                })
            }
        });
        assert_eq!(
            agents.iter().map(|a| a.handle.handle).collect::<Vec<_>>(),
            vec![1, 3]
        );
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].handle.handle, 2);
        assert_eq!(failures[0].error.call, "hsa_agent_iterate_isas");
    }
}
