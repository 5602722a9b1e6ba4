//! The HSA backend: code objects loaded by ROCr (`libhsa-runtime64`) on a GPU agent, through
//! hsa-sys's checked calls. Implements [`Agent`] and [`ExecutableBackend`] so the generic
//! linker drives it like the software agent: validation first, then, per code object in
//! dependency order, the imports it needs are published with
//! `hsa_executable_agent_global_variable_define`, the code object is read from memory and loaded,
//! and its placement is read back through the `hsa_ven_amd_loader` extension.
//!
//! Not for choosing a backend (`super::choose`), for running kernels, or for parsing: everything
//! ROCr would refuse or mishandle is found from the parsed [`Module`] before ROCr sees it
//! ([`crate::loader::rocr`]).
//!
//! **Unverified on hardware.** No machine of this project has an AMD GPU: every path past a
//! successful `hsa_init` (agent and ISA queries, executables, readers, loading, the loader
//! extension, symbol look-ups, freeze, destroy) has been compiled and reviewed against the
//! headers and ROCr's sources, never run. Only the validation (`crate::loader::rocr`) and ISA
//! parsing ([`agent_isa_from_reported`]) run in tests here.

use std::collections::HashSet;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use hsa_sys::{
    hsa_agent_t, hsa_code_object_reader_t, hsa_executable_t, hsa_loaded_code_object_t,
    hsa_profile_t, result, Hsa, HsaError, HSA_AGENT_INFO_PROFILE,
    HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
    HSA_SYMBOL_KIND_KERNEL, HSA_SYMBOL_KIND_VARIABLE,
};
use parking_lot::Mutex;

use crate::loader::rocr::{check_for_rocr, check_plan_for_rocr};
use crate::loader::{
    Agent, BackendKind, ExecutableBackend, LinkPlan, LoadError, Module, Placement,
};
use crate::target::AgentIsa;

// Agents.

/// The agent's ISA from the names ROCr reports (`hsa_agent_iterate_isas`, best first): the
/// first one rocload knows, e.g. `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`.
///
/// No override is applied: ROCr checks code objects against the ISA it reports (its own
/// `HSA_OVERRIDE_GFX_VERSION` already changed that), so rocload's override would only make the
/// two disagree.
///
/// # Errors
/// Why each name was refused, when none is usable (or the list is empty).
pub fn agent_isa_from_reported(names: &[String]) -> Result<AgentIsa, String> {
    let mut reasons = Vec::new();
    for name in names {
        match name.parse::<AgentIsa>() {
            Ok(isa) => return Ok(isa),
            Err(e) => reasons.push(format!("{name}: {e}")),
        }
    }
    if reasons.is_empty() {
        Err("the runtime reports no ISA".to_owned())
    } else {
        Err(reasons.join("; "))
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
        reason: String,
    },
}

struct AgentInner {
    hsa: Arc<Hsa>,
    handle: hsa_agent_t,
    name: String,
    isa: AgentIsa,
    reported_isas: Vec<String>,
    profile: hsa_profile_t,
    deferred: Mutex<Vec<String>>,
}

/// A GPU agent of the HSA runtime. Cheap to clone; holds the runtime (`Arc<Hsa>`), so the
/// runtime stays initialised while any agent or executable made on it lives.
#[derive(Clone)]
pub struct HsaAgent(Arc<AgentInner>);

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<HsaAgent>();
    assert_send_sync::<HsaExecutable>();
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
    /// The agent `agent` of the initialised runtime `hsa`, with its ISA parsed from the names
    /// the runtime reports (see [`agent_isa_from_reported`]). Unverified on hardware.
    ///
    /// # Errors
    /// [`HsaAgentError::UnknownIsa`]; [`HsaAgentError::Query`] if `HSA_AGENT_INFO_PROFILE`
    /// cannot be read.
    pub fn new(hsa: Arc<Hsa>, agent: &hsa_sys::Agent) -> Result<HsaAgent, HsaAgentError> {
        let isa =
            agent_isa_from_reported(&agent.isas).map_err(|reason| HsaAgentError::UnknownIsa {
                agent: agent.name.clone(),
                isas: agent.isas.clone(),
                reason,
            })?;
        // SAFETY: the handle came from `hsa.agents()` under the init `hsa` holds (and that we
        // keep); HSA_AGENT_INFO_PROFILE is an hsa_profile_t (a 32-bit C enum).
        let profile: u32 =
            unsafe { result::agent_get_info(hsa.library(), agent.handle, HSA_AGENT_INFO_PROFILE) }
                .map_err(|error| HsaAgentError::Query {
                    agent: agent.name.clone(),
                    error,
                })?;
        tracing::debug!(agent = %agent.name, isa = %isa.isa_name(), profile, "HSA agent");
        Ok(HsaAgent(Arc::new(AgentInner {
            hsa,
            handle: agent.handle,
            name: agent.name.clone(),
            isa,
            reported_isas: agent.isas.clone(),
            profile,
            deferred: Mutex::new(Vec::new()),
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
        &self.0.hsa
    }

    /// Failures that happened where they could not be returned (destroying executables and
    /// code object readers in `Drop`), oldest first; at most 64 are kept.
    pub fn take_deferred_errors(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.deferred.lock())
    }

    fn defer(&self, message: String) {
        tracing::debug!(agent = %self.0.name, %message, "deferred HSA error");
        let mut deferred = self.0.deferred.lock();
        if deferred.len() >= 64 {
            deferred.remove(0);
        }
        deferred.push(message);
    }

    fn lib(&self) -> &hsa_sys::HsaLibrary {
        self.0.hsa.library()
    }

    /// A new, empty executable on this agent (`hsa_executable_create_alt` with the agent's
    /// profile and the default rounding mode). Unverified on hardware.
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
        Ok(HsaExecutable {
            agent: self.clone(),
            exec,
            readers: Vec::new(),
            loaded: Vec::new(),
            defined: HashSet::new(),
            frozen: false,
        })
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

    /// [`check_plan_for_rocr`]: cycles and every module's problems, before ROCr is called.
    fn check_plan(&self, modules: &[Module], plan: &LinkPlan) -> Result<(), LoadError> {
        check_plan_for_rocr(&self.0.isa, modules, plan)
    }
}

// ---------------------------------------------------------------------------------------------
// Executables.

/// One code object as ROCr loaded it, read back through the loader extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HsaLoaded {
    /// The runtime's handle (`hsa_loaded_code_object_t`).
    pub handle: u64,
    /// `LOAD_BASE`.
    pub base: u64,
    /// `LOAD_SIZE`.
    pub size: u64,
    /// `LOAD_DELTA` (added to a symbol's value gives its address).
    pub delta: i64,
    /// `URI` (`memory://pid#offset=0xADDR&size=N` for code objects read from memory).
    pub uri: String,
}

/// An executable being built, or built, by ROCr on one [`HsaAgent`]. Destroyed (with its code
/// object readers) on drop; failures then are recorded on the agent
/// ([`HsaAgent::take_deferred_errors`]), never panicked on.
pub struct HsaExecutable {
    agent: HsaAgent,
    exec: hsa_executable_t,
    // Readers with the modules whose bytes they point into: ROCr keeps the pointer without
    // copying, so each module (an `Arc` of its bytes) lives as long as its reader.
    readers: Vec<(hsa_code_object_reader_t, Module)>,
    loaded: Vec<Option<HsaLoaded>>,
    // Names published with hsa_executable_agent_global_variable_define (ROCr refuses a second
    // definition of a name).
    defined: HashSet<String>,
    frozen: bool,
}

impl fmt::Debug for HsaExecutable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HsaExecutable")
            .field("agent", &self.agent.0.name)
            .field("handle", &self.exec.handle)
            .field("code_objects", &self.readers.len())
            .field("frozen", &self.frozen)
            .finish_non_exhaustive()
    }
}

impl HsaExecutable {
    /// The agent.
    pub fn agent(&self) -> &HsaAgent {
        &self.agent
    }

    /// The runtime's handle.
    pub fn handle(&self) -> hsa_executable_t {
        self.exec
    }

    /// What ROCr reported for module `index` when it was loaded.
    pub fn loaded(&self, index: usize) -> Option<&HsaLoaded> {
        self.loaded.get(index)?.as_ref()
    }

    fn hsa_error(&self, context: impl FnOnce() -> String) -> impl FnOnce(HsaError) -> LoadError {
        move |error| LoadError::Hsa {
            context: context(),
            error,
        }
    }

    /// The kernel object (address of the kernel descriptor) ROCr reports for `kernel`, found by
    /// its `.kd` name (appended when missing) on this executable's agent. Unverified on hardware.
    ///
    /// # Errors
    /// [`LoadError::Hsa`] when ROCr does not know the name or the query fails;
    /// [`LoadError::Backend`] when the symbol is not a kernel.
    pub fn kernel_object(&self, kernel: &str) -> Result<u64, LoadError> {
        let name = if kernel.ends_with(".kd") {
            kernel.to_owned()
        } else {
            format!("{kernel}.kd")
        };
        let lib = self.agent.lib();
        // SAFETY: `exec` and the agent handle come from this runtime, which `self.agent` keeps
        // initialised; the executable is alive until `self` drops.
        let symbol = unsafe {
            result::executable_get_symbol_by_name(lib, self.exec, &name, Some(self.agent.handle()))
        }
        .map_err(self.hsa_error(|| format!("looking up kernel {name}")))?;
        // SAFETY: as above; `symbol` came from this executable.
        let kind = unsafe { result::symbol_kind(lib, symbol) }
            .map_err(self.hsa_error(|| format!("kind of {name}")))?;
        if kind != HSA_SYMBOL_KIND_KERNEL {
            return Err(LoadError::Backend {
                op: "kernel_object",
                message: format!("{name} is not a kernel (symbol kind {kind})"),
            });
        }
        // SAFETY: as above, and the symbol is a kernel.
        let info = unsafe { result::kernel_info(lib, symbol) }
            .map_err(self.hsa_error(|| format!("kernel object of {name}")))?;
        Ok(info.kernel_object)
    }

    /// The address ROCr already has for `name` in this executable on this agent (a kernel's
    /// descriptor, a variable), `None` if it has none.
    fn runtime_address(&self, name: &str) -> Result<Option<u64>, LoadError> {
        let lib = self.agent.lib();
        // SAFETY: as in `kernel_object`.
        let symbol = match unsafe {
            result::executable_get_symbol_by_name(lib, self.exec, name, Some(self.agent.handle()))
        } {
            Ok(symbol) => symbol,
            Err(e) if e.is_status(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME) => return Ok(None),
            Err(error) => {
                return Err(LoadError::Hsa {
                    context: format!("looking up {name}"),
                    error,
                })
            }
        };
        // SAFETY: as in `kernel_object`; the attribute read matches the symbol's kind.
        let address = unsafe {
            match result::symbol_kind(lib, symbol) {
                Ok(HSA_SYMBOL_KIND_VARIABLE) => result::symbol_variable_address(lib, symbol),
                Ok(HSA_SYMBOL_KIND_KERNEL) => {
                    result::kernel_info(lib, symbol).map(|k| k.kernel_object)
                }
                Ok(other) => {
                    return Err(LoadError::Backend {
                        op: "resolve import",
                        message: format!("ROCr has {name} as symbol kind {other}"),
                    })
                }
                Err(e) => Err(e),
            }
        }
        .map_err(self.hsa_error(|| format!("address of {name}")))?;
        Ok(Some(address))
    }

    /// Every loaded code object as ROCr lists it (`executable_iterate_loaded_code_objects`), in
    /// load order, for cross-checking. Unverified on hardware.
    ///
    /// # Errors
    /// [`LoadError::Hsa`] for the extension table or any query.
    pub fn runtime_code_objects(&self) -> Result<Vec<HsaLoaded>, LoadError> {
        let lib = self.agent.lib();
        let table = result::amd_loader_table(lib)
            .map_err(self.hsa_error(|| "getting the hsa_ven_amd_loader table".to_owned()))?;
        // SAFETY: `exec` is alive and from this runtime.
        let objects = unsafe { table.loaded_code_objects(self.exec) }
            .map_err(self.hsa_error(|| "listing loaded code objects".to_owned()))?;
        objects
            .into_iter()
            .map(|o| self.describe(&table, o))
            .collect()
    }

    fn describe(
        &self,
        table: &result::AmdLoaderTable<'_>,
        object: hsa_loaded_code_object_t,
    ) -> Result<HsaLoaded, LoadError> {
        let context = || format!("reading loaded code object {:#x}", object.handle);
        // SAFETY: `object` was returned by this runtime for this live executable.
        unsafe {
            Ok(HsaLoaded {
                handle: object.handle,
                base: table.load_base(object).map_err(self.hsa_error(context))?,
                size: table.load_size(object).map_err(self.hsa_error(context))?,
                delta: table.load_delta(object).map_err(self.hsa_error(context))?,
                uri: table.uri(object).map_err(self.hsa_error(context))?,
            })
        }
    }

    /// Publishes each resolved import ROCr does not already know, so the code object about to
    /// be loaded finds it . Names ROCr knows (variables and kernels of code
    /// objects loaded earlier) are checked against the linker's address instead: defining
    /// them again would fail with `HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED`.
    fn define_imports(
        &mut self,
        module: &Module,
        imports: &[Option<u64>],
    ) -> Result<(), LoadError> {
        for (import, address) in module.imports().iter().zip(imports) {
            let Some(address) = *address else { continue };
            if self.defined.contains(&import.name) {
                continue;
            }
            match self.runtime_address(&import.name)? {
                Some(known) if known == address => {}
                Some(known) => {
                    return Err(LoadError::Backend {
                        op: "resolve import",
                        message: format!(
                            "{}: ROCr has {} at {known:#x}, the linker resolved it to {address:#x}",
                            module.source(),
                            import.name
                        ),
                    })
                }
                None => {
                    let lib = self.agent.lib();
                    // SAFETY: `exec` and the agent come from this runtime; `address` points into a
                    // code object of this executable (or was given by the caller to the linker
                    // as a device address), which lives as long as the executable.
                    unsafe {
                        result::executable_agent_global_variable_define(
                            lib,
                            self.exec,
                            self.agent.handle(),
                            &import.name,
                            address as *mut c_void,
                        )
                    }
                    .map_err(self.hsa_error(|| {
                        format!(
                            "{}: defining import {} at {address:#x}",
                            module.source(),
                            import.name
                        )
                    }))?;
                    tracing::debug!(name = %import.name, address = format_args!("{address:#x}"), "defined import for ROCr");
                }
            }
            self.defined.insert(import.name.clone());
        }
        Ok(())
    }
}

impl ExecutableBackend for HsaExecutable {
    /// ROCr resolves imports while loading, so every provider must be loaded first.
    fn links_cycles(&self) -> bool {
        false
    }

    fn reserve(&mut self, _index: usize, _module: &Module) -> Result<Option<u64>, LoadError> {
        Ok(None)
    }

    /// Validates, publishes imports, loads through a reader from memory, and reads the
    /// placement back. Unverified on hardware past validation.
    fn load(
        &mut self,
        index: usize,
        module: &Module,
        imports: &[Option<u64>],
    ) -> Result<Placement, LoadError> {
        if self.frozen {
            return Err(LoadError::Backend {
                op: "load",
                message: "executable is frozen".into(),
            });
        }
        check_for_rocr(index, module, imports, self.agent.isa())?;
        self.define_imports(module, imports)?;
        let context = || format!("loading {} on {}", module.source(), self.agent.name());
        let lib = self.agent.lib();
        // SAFETY: the reader points into `module`'s bytes, which the clone pushed with it keeps
        // alive and unchanged until the reader is destroyed in Drop.
        let reader = unsafe { result::code_object_reader_create_from_memory(lib, module.bytes()) }
            .map_err(self.hsa_error(context))?;
        self.readers.push((reader, module.clone()));
        // SAFETY: executable, agent and reader all come from this runtime and are alive.
        let object = unsafe {
            result::executable_load_agent_code_object(
                lib,
                self.exec,
                self.agent.handle(),
                reader,
                None,
            )
        }
        .map_err(self.hsa_error(context))?;
        let table = result::amd_loader_table(lib).map_err(self.hsa_error(context))?;
        let loaded = self.describe(&table, object)?;
        // rocload's meaning: base is the lowest segment's address and delta = base - first
        // vaddr. ROCr's LOAD_BASE is its allocation, which holds the first segment at offset 0
        // for lld output (first vaddr 0); disagreeing numbers would make every symbol address
        // wrong, so they are an error.
        let expected = loaded.base.wrapping_sub(module.first_vaddr());
        if loaded.delta as u64 != expected {
            return Err(LoadError::Backend {
                op: "load",
                message: format!(
                    "{}: ROCr reports LOAD_DELTA {:#x} but LOAD_BASE {:#x} minus the first vaddr {:#x} is {expected:#x}",
                    module.source(),
                    loaded.delta,
                    loaded.base,
                    module.first_vaddr()
                ),
            });
        }
        tracing::debug!(source = %module.source(), base = format_args!("{:#x}", loaded.base), size = loaded.size, uri = %loaded.uri, "ROCr loaded code object");
        let placement = Placement {
            base: loaded.base,
            size: loaded.size,
        };
        if self.loaded.len() <= index {
            self.loaded.resize(index + 1, None);
        }
        self.loaded[index] = Some(loaded);
        Ok(placement)
    }

    fn freeze(&mut self) -> Result<(), LoadError> {
        let lib = self.agent.lib();
        // SAFETY: `exec` is alive and from this runtime.
        unsafe { result::executable_freeze(lib, self.exec, None) }.map_err(
            self.hsa_error(|| format!("freezing the executable on {}", self.agent.name())),
        )?;
        self.frozen = true;
        Ok(())
    }

    /// `None`: the image is in device memory (coarse-grained VRAM on discrete GPUs), which the
    /// host cannot read directly. ROCr's `query_host_address` gives the loader's host copy,
    /// but that copy is not the relocated device image on every path, so it is not offered.
    fn read_image(&self, _index: usize) -> Option<Vec<u8>> {
        None
    }

    fn runtime_uri(&self, index: usize) -> Option<String> {
        self.loaded(index).map(|l| l.uri.clone())
    }
}

impl Drop for HsaExecutable {
    fn drop(&mut self) {
        let lib = self.agent.lib();
        // SAFETY: `exec` is alive, from this runtime, and used by nothing after this.
        if let Err(e) = unsafe { result::executable_destroy(lib, self.exec) } {
            self.agent.defer(format!(
                "destroying the executable on {}: {e}",
                self.agent.name()
            ));
        }
        // Readers after the executable that loaded from them.
        for (reader, module) in self.readers.drain(..) {
            // SAFETY: the reader is alive, from this runtime, and used by nothing after this.
            if let Err(e) = unsafe { result::code_object_reader_destroy(lib, reader) } {
                self.agent
                    .defer(format!("destroying the reader of {}: {e}", module.source()));
            }
        }
    }
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
        assert!(e.contains("gfx9999"), "{e}");
        assert_eq!(
            agent_isa_from_reported(&[]).unwrap_err(),
            "the runtime reports no ISA"
        );
    }
}
