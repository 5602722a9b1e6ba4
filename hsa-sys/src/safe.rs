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

    /// Every agent, with its name, device type and ISA names.
    ///
    /// # Errors
    /// The first failing call (`hsa_iterate_agents`, `hsa_agent_get_info`, ...).
    pub fn agents(&self) -> Result<Vec<Agent>, HsaError> {
        let lib = &*self.lib;
        let handles = result::iterate_agents(lib)?;
        let mut agents = Vec::with_capacity(handles.len());
        for handle in handles {
            // SAFETY: `handle` came from hsa_iterate_agents under the init `self` holds.
            let agent = unsafe {
                let name = result::agent_name(lib, handle)?;
                let device_type = DeviceType::from_raw(result::agent_device_type(lib, handle)?);
                let mut isas = Vec::new();
                for isa in result::agent_isas(lib, handle)? {
                    isas.push(result::isa_name(lib, isa)?);
                }
                Agent {
                    handle,
                    name,
                    device_type,
                    isas,
                }
            };
            tracing::debug!(name = %agent.name, device = ?agent.device_type, isas = ?agent.isas, "HSA agent");
            agents.push(agent);
        }
        Ok(agents)
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
