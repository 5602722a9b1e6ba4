//! Executables built by ROCr on one [`HsaAgent`]: code objects loaded one at a time in
//! dependency order. Before each load, [`crate::loader::rocr`]'s checks run with the runtime's
//! capabilities and the imports the code object needs are published with
//! `hsa_executable_agent_global_variable_define`; the code object is read from memory and
//! loaded; its placement is read back through the `hsa_ven_amd_loader` extension and checked
//! against a symbol ROCr registered (`LOAD_BASE + st_value`). Kernel facts come from the code
//! object, not from ROCr's symbol queries (5.2.3 reports no dynamic stack and a kernarg
//! alignment of 16 for every kernel).
//!
//! Runs end to end against the software HSA library (`hsa-soft/`); never run on a GPU.

use std::collections::HashSet;
use std::ffi::c_void;
use std::fmt;

use hsa_sys::result::{self, KernelInfo};
use hsa_sys::{
    hsa_code_object_reader_t, hsa_executable_symbol_t, hsa_executable_t, hsa_loaded_code_object_t,
    HsaError, HSA_STATUS_ERROR_INVALID_SYMBOL_NAME, HSA_SYMBOL_KIND_KERNEL,
    HSA_SYMBOL_KIND_VARIABLE,
};

use super::agent::HsaAgent;
use crate::device::MemoryKind;
use crate::loader::rocr::{check_for_rocr, check_symbol_placement};
use crate::loader::{Agent, ExecutableBackend, LoadError, Module, Placement};

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

/// A kernel's dispatch facts on an HSA agent: the kernel object ROCr reports, everything else
/// from the code object (ROCr 5.2.3 answers `is_dynamic_callstack = false` and a kernarg
/// alignment of 16 for every code object v3+ kernel, whatever the code object says).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HsaKernel {
    /// The kernel's name (without `.kd`).
    pub name: String,
    /// `KERNEL_OBJECT`: the descriptor's address (what a dispatch packet carries).
    pub kernel_object: u64,
    /// Kernarg bytes (metadata `.kernarg_segment_size`, else the descriptor's).
    pub kernarg_segment_size: u64,
    /// Kernarg alignment (metadata `.kernarg_segment_align`).
    pub kernarg_segment_align: u64,
    /// Static LDS bytes.
    pub group_segment_size: u64,
    /// Scratch bytes per work-item (fixed part).
    pub private_segment_size: u64,
    /// Whether the stack is dynamically sized (metadata `.uses_dynamic_stack`, else
    /// `kernel_code_properties` bit 11).
    pub uses_dynamic_stack: bool,
    /// What ROCr's symbol queries answered, for comparison.
    pub rocr_reported: KernelInfo,
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
    // Allocation-table entries of the loaded code objects, removed on drop.
    ranges: Vec<u64>,
    // Host ranges locked for managed variables, released on drop.
    locks: Vec<u64>,
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
    pub(crate) fn new(agent: HsaAgent, exec: hsa_executable_t) -> HsaExecutable {
        HsaExecutable {
            agent,
            exec,
            readers: Vec::new(),
            loaded: Vec::new(),
            defined: HashSet::new(),
            frozen: false,
            ranges: Vec::new(),
            locks: Vec::new(),
        }
    }

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

    /// The dispatch facts of `kernel` (raw name, with or without `.kd`): the kernel object from
    /// ROCr, the rest from the code object that defines it.
    ///
    /// # Errors
    /// As [`HsaExecutable::kernel_object`]; [`LoadError::Backend`] when no loaded code object
    /// defines the kernel.
    pub fn kernel(&self, kernel: &str) -> Result<HsaKernel, LoadError> {
        let bare = kernel.strip_suffix(".kd").unwrap_or(kernel);
        let info = self
            .readers
            .iter()
            .find_map(|(_, m)| m.kernel(bare))
            .ok_or_else(|| LoadError::Backend {
                op: "kernel",
                message: format!("no loaded code object defines kernel {bare}"),
            })?
            .clone();
        let name = format!("{bare}.kd");
        let lib = self.agent.lib();
        // SAFETY: as in `kernel_object`.
        let symbol = unsafe {
            result::executable_get_symbol_by_name(lib, self.exec, &name, Some(self.agent.handle()))
        }
        .map_err(self.hsa_error(|| format!("looking up kernel {name}")))?;
        // SAFETY: as in `kernel_object`.
        let kind = unsafe { result::symbol_kind(lib, symbol) }
            .map_err(self.hsa_error(|| format!("kind of {name}")))?;
        if kind != HSA_SYMBOL_KIND_KERNEL {
            return Err(LoadError::Backend {
                op: "kernel",
                message: format!("{name} is not a kernel (symbol kind {kind})"),
            });
        }
        // SAFETY: as above, and the symbol is a kernel.
        let rocr = unsafe { result::kernel_info(lib, symbol) }
            .map_err(self.hsa_error(|| format!("kernel facts of {name}")))?;
        if rocr.dynamic_callstack != info.uses_dynamic_stack
            || u64::from(rocr.kernarg_segment_alignment) != info.kernarg_segment_align
        {
            tracing::debug!(
                kernel = %bare,
                rocr_dynamic_callstack = rocr.dynamic_callstack,
                code_object_dynamic_stack = info.uses_dynamic_stack,
                rocr_kernarg_align = rocr.kernarg_segment_alignment,
                code_object_kernarg_align = info.kernarg_segment_align,
                "ROCr's kernel facts differ from the code object's; using the code object's"
            );
        }
        Ok(HsaKernel {
            name: bare.to_owned(),
            kernel_object: rocr.kernel_object,
            kernarg_segment_size: info.kernarg_segment_size,
            kernarg_segment_align: info.kernarg_segment_align,
            group_segment_size: info.group_segment_fixed_size,
            private_segment_size: info.private_segment_fixed_size,
            uses_dynamic_stack: info.uses_dynamic_stack,
            rocr_reported: rocr,
        })
    }

    /// The symbol ROCr has for `name` on this agent, `None` if it has none.
    fn find_symbol(&self, name: &str) -> Result<Option<hsa_executable_symbol_t>, LoadError> {
        let lib = self.agent.lib();
        // SAFETY: as in `kernel_object`.
        match unsafe {
            result::executable_get_symbol_by_name(lib, self.exec, name, Some(self.agent.handle()))
        } {
            Ok(symbol) => Ok(Some(symbol)),
            Err(e) if e.is_status(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME) => Ok(None),
            Err(error) => Err(LoadError::Hsa {
                context: format!("looking up {name}"),
                error,
            }),
        }
    }

    /// The address ROCr already has for `name` in this executable on this agent (a kernel's
    /// descriptor, a variable), `None` if it has none.
    fn runtime_address(&self, name: &str) -> Result<Option<u64>, LoadError> {
        let lib = self.agent.lib();
        let Some(symbol) = self.find_symbol(name)? else {
            return Ok(None);
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

    /// Checks where ROCr put `module`: a symbol ROCr registered for it (a kernel descriptor
    /// first, else a variable) must be at `LOAD_BASE + st_value`. Code objects that register
    /// no symbol (device-function libraries) cannot be checked this way.
    fn check_placement(&self, module: &Module, loaded: &HsaLoaded) -> Result<(), LoadError> {
        let definitions = &module.rocr_facts().definitions;
        let Some(definition) = definitions
            .iter()
            .find(|d| d.kernel)
            .or_else(|| definitions.first())
        else {
            tracing::debug!(source = %module.source(), "no symbol ROCr registers: placement not checked");
            return Ok(());
        };
        let reported =
            self.runtime_address(&definition.name)?
                .ok_or_else(|| LoadError::Backend {
                    op: "load",
                    message: format!(
                        "{}: ROCr has no symbol {} after loading it",
                        module.source(),
                        definition.name
                    ),
                })?;
        check_symbol_placement(loaded.base, definition, reported).map_err(|e| {
            LoadError::Backend {
                op: "load",
                message: format!("{}: {e}", module.source()),
            }
        })?;
        tracing::debug!(symbol = %definition.name, address = format_args!("{reported:#x}"), "placement checked: LOAD_BASE + st_value");
        Ok(())
    }

    /// Publishes each resolved import ROCr does not already know, so the code object about to
    /// be loaded finds it. Names ROCr knows (variables and kernels of code
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
    /// placement back. Never run on a GPU; runs against the software HSA library.
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
        check_for_rocr(
            index,
            module,
            imports,
            self.agent.isa(),
            &self.agent.capabilities(),
        )?;
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
        // ROCr's LOAD_DELTA is LOAD_BASE minus the first segment's vaddr by definition, so
        // comparing those proves nothing; what must hold (the first vaddr being 0, checked
        // above) is that the symbols ROCr registered are at LOAD_BASE + st_value.
        self.check_placement(module, &loaded)?;
        match self
            .agent
            .0
            .table
            .insert(loaded.base, loaded.size, MemoryKind::CodeObject, true)
        {
            Ok(_) => self.ranges.push(loaded.base),
            Err(e) => tracing::debug!(error = %e, "code object range not recorded"),
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

    /// Locks the host memory for the agent (`hsa_amd_memory_lock`, shared with other users
    /// of the range) and writes the address the agent uses for it with `hsa_memory_copy`.
    fn publish_host_memory(
        &mut self,
        address: u64,
        host: u64,
        size: u64,
    ) -> Result<u64, LoadError> {
        let inside = self.loaded.iter().flatten().any(|l| {
            address >= l.base
                && address
                    .checked_add(8)
                    .is_some_and(|end| end <= l.base.saturating_add(l.size))
        });
        if !inside {
            return Err(LoadError::Backend {
                op: "publish host memory",
                message: format!("{address:#x} is not 8 bytes inside this executable's code"),
            });
        }
        let agent_ptr =
            super::memory::lock_host(&self.agent, host, size).map_err(|e| LoadError::Backend {
                op: "publish host memory",
                message: e.to_string(),
            })?;
        self.locks.push(host);
        let value = agent_ptr.to_le_bytes();
        // SAFETY: `address` is 8 bytes inside a code object this executable loaded (checked);
        // the source is a local 8-byte buffer alive for the call.
        unsafe {
            result::memory_copy(
                self.agent.lib(),
                address as *mut c_void,
                value.as_ptr().cast(),
                value.len(),
            )
        }
        .map_err(self.hsa_error(|| format!("writing the pointer at {address:#x}")))?;
        Ok(agent_ptr)
    }
}

impl Drop for HsaExecutable {
    fn drop(&mut self) {
        for base in self.ranges.drain(..) {
            self.agent.0.table.remove(base, false);
        }
        for host in self.locks.drain(..) {
            super::memory::unlock_host(&self.agent, host);
        }
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
