//! The backend abstraction: an agent that runs code (its ISA, its memory) and the
//! executables it builds. Two implementations live in `crate::backend`: the in-process
//! software agent and ROCr through HSA.
//!
//! The generic linker decides what goes where and in which order; a backend only places
//! bytes. Backends that allocate before relocating (the software agent) can link import
//! cycles; backends that load in one step (ROCr, where imports must be defined before the
//! importing code object is loaded) cannot, and say so through [`ExecutableBackend::links_cycles`].

use std::fmt::Debug;

use super::module::Module;
use super::plan::LinkPlan;
use super::LoadError;
use crate::target::AgentIsa;

/// Which implementation an agent belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The in-process software agent.
    Soft,
    /// ROCr through the HSA runtime.
    Hsa,
}

/// A device that can hold executables.
pub trait Agent: Send + Sync + Debug {
    /// The ISA the agent reports (after any override).
    fn isa(&self) -> &AgentIsa;
    /// Which backend it belongs to.
    fn backend(&self) -> BackendKind;
    /// Starts an empty executable on this agent.
    fn new_executable(&self) -> Result<Box<dyn ExecutableBackend>, LoadError>;

    /// Checks a whole plan before any executable is created, so a backend that cannot take
    /// some module refuses before anything is loaded. The default accepts every plan.
    fn check_plan(&self, _modules: &[Module], _plan: &LinkPlan) -> Result<(), LoadError> {
        Ok(())
    }
}

/// Where a code object ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Address of the image (its lowest segment).
    pub base: u64,
    /// Bytes allocated for it.
    pub size: u64,
}

/// One executable being built on one agent.
pub trait ExecutableBackend: Send + Sync + Debug {
    /// Whether memory is reserved before any code object is loaded, so import cycles link.
    fn links_cycles(&self) -> bool;

    /// Reserves memory for module `index` before loading, when [`links_cycles`](Self::links_cycles);
    /// returns its base. Backends that cannot reserve return `Ok(None)`.
    fn reserve(&mut self, index: usize, module: &Module) -> Result<Option<u64>, LoadError>;

    /// Loads module `index` with its imports resolved (`imports[i]` for `module.imports()[i]`).
    fn load(
        &mut self,
        index: usize,
        module: &Module,
        imports: &[Option<u64>],
    ) -> Result<Placement, LoadError>;

    /// Finishes the executable; nothing more can be loaded.
    fn freeze(&mut self) -> Result<(), LoadError>;

    /// A copy of module `index`'s loaded image, where the backend can read it.
    fn read_image(&self, index: usize) -> Option<Vec<u8>>;

    /// The URI the runtime itself recorded for module `index` (ROCr's loader extension), when
    /// the backend has one. The default has none.
    fn runtime_uri(&self, _index: usize) -> Option<String> {
        None
    }

    /// Writes, as a 64-bit value at `address` (a pointer variable of a loaded code object, such
    /// as a managed variable's), the address the agent uses for the host memory
    /// `[host, host + size)`, making that memory reachable first where the backend must (ROCr:
    /// `hsa_amd_memory_lock`). Returns the address written. Runs after the executable is
    /// frozen. The default cannot.
    ///
    /// # Errors
    /// [`LoadError::Backend`] when `address` is not 8 writable bytes of a loaded image, or the
    /// backend cannot write its memory.
    fn publish_host_memory(
        &mut self,
        _address: u64,
        _host: u64,
        _size: u64,
    ) -> Result<u64, LoadError> {
        Err(LoadError::Backend {
            op: "publish host memory",
            message: "this backend cannot write its loaded code".into(),
        })
    }
}
