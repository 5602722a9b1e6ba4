//! HSA agents: the runtime they share ([`HsaSystem`]: the initialised library, the ROCr
//! capabilities its exports reveal, the CPU agent that owns host memory, GPU memory faults
//! reported through the system event handler) and the GPU agents code is loaded on and
//! launched on ([`HsaAgent`]). Not for executables (`super::executable`) or device operations
//! (`super::device`).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use hsa_sys::result::{self, SystemEvent, SystemEventHandler};
use hsa_sys::{
    hsa_agent_t, hsa_profile_t, DeviceType, Hsa, HsaError, HSA_AGENT_INFO_PROFILE,
    HSA_AGENT_INFO_QUEUE_MAX_SIZE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
    HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY,
};
use once_cell::sync::OnceCell;
use parking_lot::{Condvar, Mutex};

use super::agent_isa_from_reported;
use super::executable::HsaExecutable;
use crate::device::{AllocationTable, DeviceError};
use crate::loader::rocr::{check_plan_for_rocr, RocrCapabilities};
use crate::loader::{Agent, BackendKind, ExecutableBackend, LinkPlan, LoadError, Module};
use crate::target::AgentIsa;

/// A GPU memory fault the runtime reported (`HSA_AMD_GPU_MEMORY_FAULT_EVENT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryFault {
    /// The agent that faulted.
    pub agent: u64,
    /// The virtual address.
    pub address: u64,
    /// `HSA_AMD_MEMORY_FAULT_*` bits.
    pub reason: u32,
}

/// GPU memory faults, recorded by the system event handler and read by the queues of the
/// agent that faulted (its packets' signals will never complete: the queue is stopped).
#[derive(Debug, Default)]
pub struct FaultBoard {
    /// Each fault with its sequence number (how many faults came before it).
    faults: Mutex<(u64, Vec<(u64, MemoryFault)>)>,
    changed: Condvar,
}

impl FaultBoard {
    fn record(&self, fault: MemoryFault) {
        let mut faults = self.faults.lock();
        let seq = faults.0;
        faults.0 += 1;
        if faults.1.len() >= 64 {
            faults.1.remove(0);
        }
        faults.1.push((seq, fault));
        self.changed.notify_all();
    }

    /// How many faults were recorded so far: a queue made now is affected only by faults from
    /// this number on (one made after `hipDeviceReset` starts clean).
    pub fn epoch(&self) -> u64 {
        self.faults.lock().0
    }

    /// The first fault of `agent` at or after `since`, if any.
    pub fn fault_of(&self, agent: u64, since: u64) -> Option<MemoryFault> {
        self.faults
            .lock()
            .1
            .iter()
            .find(|(seq, f)| *seq >= since && f.agent == agent)
            .map(|(_, f)| *f)
    }
}

/// Host memory locked for the GPUs (`hsa_amd_memory_lock`), shared by every user of the range.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lock {
    pub(crate) agent_ptr: u64,
    pub(crate) size: u64,
    pub(crate) users: u32,
}

/// What every agent of one initialised HSA runtime shares.
pub struct HsaSystem {
    hsa: Arc<Hsa>,
    caps: RocrCapabilities,
    cpu: Option<hsa_agent_t>,
    faults: Arc<FaultBoard>,
    timestamp_hz: u64,
    pub(crate) locks: Mutex<HashMap<u64, Lock>>,
}

impl fmt::Debug for HsaSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HsaSystem")
            .field("library", &self.hsa.library().name())
            .field("rocr", &self.caps.version)
            .field("cpu", &self.cpu.map(|c| c.handle))
            .finish_non_exhaustive()
    }
}

impl HsaSystem {
    /// The shared state of `hsa`: ROCr's capabilities from the library's exports
    /// ([`RocrCapabilities::detect`]), the first CPU agent (host memory pools), the timestamp
    /// frequency (for wait timeouts), and a system event handler that records GPU memory
    /// faults (without one, ROCr aborts the process on a fault). A failed registration is
    /// logged: loading still works, a fault then ends the process as ROCr decides.
    pub fn new(hsa: Arc<Hsa>) -> Arc<HsaSystem> {
        let lib = hsa.library().clone();
        let caps = RocrCapabilities::detect(|name| lib.exports(name));
        let cpu = hsa.agents().ok().and_then(|agents| {
            agents
                .into_iter()
                .find(|a| a.device_type == DeviceType::Cpu)
                .map(|a| a.handle)
        });
        // SAFETY: the attribute is a uint64_t.
        let timestamp_hz: u64 =
            unsafe { result::system_get_info(&lib, HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY) }
                .ok()
                .filter(|&hz: &u64| hz > 0)
                .unwrap_or(1_000_000_000);
        let faults = Arc::new(FaultBoard::default());
        let board = faults.clone();
        let handler = SystemEventHandler::new(move |event| {
            if let SystemEvent::MemoryFault {
                agent,
                address,
                reason,
            } = event
            {
                tracing::debug!(
                    agent = agent.handle,
                    address = format_args!("{address:#x}"),
                    reason,
                    "GPU memory fault"
                );
                board.record(MemoryFault {
                    agent: agent.handle,
                    address,
                    reason,
                });
            }
        });
        if let Err(e) = result::register_system_event_handler(&lib, handler) {
            tracing::debug!(error = %e, "no system event handler: a GPU memory fault will end the process");
        }
        tracing::debug!(rocr = %caps.version, cpu = ?cpu.map(|c| c.handle), timestamp_hz, "HSA system");
        Arc::new(HsaSystem {
            hsa,
            caps,
            cpu,
            faults,
            timestamp_hz,
            locks: Mutex::new(HashMap::new()),
        })
    }

    /// The initialised runtime.
    pub fn runtime(&self) -> &Arc<Hsa> {
        &self.hsa
    }

    /// What the library's loader accepts.
    pub fn capabilities(&self) -> RocrCapabilities {
        self.caps
    }

    /// The CPU agent whose pools hold host and kernarg memory.
    pub fn cpu_agent(&self) -> Option<hsa_agent_t> {
        self.cpu
    }

    /// GPU memory faults reported so far.
    pub fn faults(&self) -> &FaultBoard {
        &self.faults
    }

    /// Ticks per second of `hsa_signal_wait_*` timeouts.
    pub fn timestamp_hz(&self) -> u64 {
        self.timestamp_hz
    }
}

/// A GPU agent the HSA runtime reports that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HsaAgentError {
    /// A query about the agent failed.
    #[error("agent {agent}: {error}")]
    Query {
        /// The agent's name.
        agent: String,
        /// The failed call.
        error: HsaError,
    },
    /// None of the ISAs it reports is one rocload knows.
    #[error("agent {agent} ({}): no ISA rocload knows: {reason}", isas.join(", "))]
    UnknownIsa {
        /// The agent's name.
        agent: String,
        /// The ISA names it reports.
        isas: Vec<String>,
        /// Why each was refused.
        reason: super::UnknownIsaError,
    },
}

pub(crate) struct AgentInner {
    pub(crate) system: Arc<HsaSystem>,
    pub(crate) handle: hsa_agent_t,
    pub(crate) name: String,
    isa: AgentIsa,
    reported_isas: Vec<String>,
    profile: hsa_profile_t,
    deferred: Mutex<Vec<String>>,
    pub(crate) queue_max: u32,
    /// Everything rocload allocated or loaded on the agent (checked copies, pointer queries).
    pub(crate) table: AllocationTable,
    pub(crate) memory: super::memory::MemoryState,
    pub(crate) apertures: OnceCell<(u32, u32)>,
    /// What the agent reports about itself, read at the first question.
    pub(crate) properties: OnceCell<crate::device::DeviceProperties>,
    /// Serves the agent's hostcall buffers (device `printf`).
    pub(crate) hostcall: super::hostcall::HostcallListener,
    /// Memory this agent attached from IPC handles.
    pub(crate) ipc: Mutex<super::vmm::HsaIpcOpened>,
}

/// A GPU agent of the HSA runtime. Cheap to clone; holds the runtime (through
/// [`HsaSystem`]), so it stays initialised while any agent or executable made on it lives.
#[derive(Clone)]
pub struct HsaAgent(pub(crate) Arc<AgentInner>);

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<HsaAgent>();
    assert_send_sync::<HsaSystem>();
};

impl fmt::Debug for HsaAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HsaAgent")
            .field("name", &self.0.name)
            .field("isa", &self.0.isa.isa_name())
            .field("handle", &self.0.handle.handle)
            .finish_non_exhaustive()
    }
}

impl HsaAgent {
    /// The agent `agent` of the runtime `system` holds, with its ISA parsed from the names the
    /// runtime reports (see [`agent_isa_from_reported`]).
    ///
    /// # Errors
    /// [`HsaAgentError::UnknownIsa`]; [`HsaAgentError::Query`] if `HSA_AGENT_INFO_PROFILE`
    /// cannot be read.
    pub fn new(system: Arc<HsaSystem>, agent: &hsa_sys::Agent) -> Result<HsaAgent, HsaAgentError> {
        let isa =
            agent_isa_from_reported(&agent.isas).map_err(|reason| HsaAgentError::UnknownIsa {
                agent: agent.name.clone(),
                isas: agent.isas.clone(),
                reason,
            })?;
        let lib = system.hsa.library().clone();
        // SAFETY: the handle came from the runtime `system` keeps initialised;
        // HSA_AGENT_INFO_PROFILE is an hsa_profile_t (a 32-bit C enum).
        let profile: u32 =
            unsafe { result::agent_get_info(&lib, agent.handle, HSA_AGENT_INFO_PROFILE) }.map_err(
                |error| HsaAgentError::Query {
                    agent: agent.name.clone(),
                    error,
                },
            )?;
        // SAFETY: as above; the attribute is a uint32_t.
        let queue_max: u32 =
            unsafe { result::agent_get_info(&lib, agent.handle, HSA_AGENT_INFO_QUEUE_MAX_SIZE) }
                .unwrap_or(0);
        tracing::debug!(agent = %agent.name, isa = %isa.isa_name(), profile, queue_max, "HSA agent");
        Ok(HsaAgent(Arc::new(AgentInner {
            system,
            handle: agent.handle,
            name: agent.name.clone(),
            isa,
            reported_isas: agent.isas.clone(),
            profile,
            deferred: Mutex::new(Vec::new()),
            queue_max,
            table: AllocationTable::new(),
            memory: super::memory::MemoryState::default(),
            apertures: OnceCell::new(),
            properties: OnceCell::new(),
            hostcall: Default::default(),
            ipc: Mutex::default(),
        })))
    }

    /// The runtime's name for the agent (e.g. `gfx1030`).
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The ISA names the runtime reports, best first.
    pub fn reported_isas(&self) -> &[String] {
        &self.0.reported_isas
    }

    /// The runtime's handle.
    pub fn handle(&self) -> hsa_agent_t {
        self.0.handle
    }

    /// The runtime the agent belongs to.
    pub fn runtime(&self) -> &Arc<Hsa> {
        &self.0.system.hsa
    }

    /// What the agents of this runtime share.
    pub fn system(&self) -> &Arc<HsaSystem> {
        &self.0.system
    }

    /// What the runtime's loader accepts (detected from the library's exports).
    pub fn capabilities(&self) -> RocrCapabilities {
        self.0.system.caps
    }

    /// Failures that happened where they could not be returned (destroying executables, code
    /// object readers, signals and queues in `Drop`), oldest first; at most 64 are kept.
    pub fn take_deferred_errors(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.deferred.lock())
    }

    pub(crate) fn defer(&self, message: String) {
        self.0.defer(message);
    }

    pub(crate) fn lib(&self) -> &hsa_sys::HsaLibrary {
        self.0.system.hsa.library()
    }

    /// A new, empty executable on this agent (`hsa_executable_create_alt` with the agent's
    /// profile and the default rounding mode).
    ///
    /// # Errors
    /// [`LoadError::Hsa`] naming `hsa_executable_create_alt` and its status.
    pub fn create_executable(&self) -> Result<HsaExecutable, LoadError> {
        let exec = result::executable_create_alt(
            self.lib(),
            self.0.profile,
            HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
            None,
        )
        .map_err(|error| LoadError::Hsa {
            context: format!("creating an executable on {}", self.0.name),
            error,
        })?;
        Ok(HsaExecutable::new(self.clone(), exec))
    }

    /// A device error for a failed HSA call, naming what was being done.
    pub(crate) fn device_error(&self, op: impl Into<String>, error: HsaError) -> DeviceError {
        DeviceError::Runtime {
            op: format!("{} on {}", op.into(), self.0.name),
            status: error.status,
            message: error.to_string(),
        }
    }
}

impl AgentInner {
    pub(crate) fn defer(&self, message: String) {
        tracing::debug!(agent = %self.name, %message, "deferred HSA error");
        let mut deferred = self.deferred.lock();
        if deferred.len() >= 64 {
            deferred.remove(0);
        }
        deferred.push(message);
    }
}

impl Agent for HsaAgent {
    fn isa(&self) -> &AgentIsa {
        &self.0.isa
    }

    fn backend(&self) -> BackendKind {
        BackendKind::Hsa
    }

    fn new_executable(&self) -> Result<Box<dyn ExecutableBackend>, LoadError> {
        Ok(Box::new(self.create_executable()?))
    }

    /// [`check_plan_for_rocr`] with this runtime's capabilities: cycles, names defined twice,
    /// and every module's problems, before ROCr is called.
    fn check_plan(&self, modules: &[Module], plan: &LinkPlan) -> Result<(), LoadError> {
        check_plan_for_rocr(&self.0.isa, &self.0.system.caps, modules, plan)
    }
}
