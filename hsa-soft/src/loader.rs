//! Code object readers, executables, symbols and the `hsa_ven_amd_loader` extension, with
//! ROCr's loader semantics (`loader/executable.cpp`, `libamdhsacode/amd_hsa_code.cpp`,
//! `core/runtime/hsa_ven_amd_loader.cpp`) on rocload's loader (`rocload::loader`: parsed
//! modules, the software agent's executables, relocation):
//!
//! - a code object is refused as ROCr refuses it, with ROCr's status: a version this ROCr does
//!   not load or a relocation type it does not apply, or a relocation against a `SECTION`/`TLS`
//!   symbol (`INVALID_CODE_OBJECT`), a generic target before 6.2 (`INVALID_ISA_NAME`), an ISA
//!   the agent does not strictly support (`INCOMPATIBLE_ARGUMENTS`), a second definition of a
//!   name for the agent, weak or not (`VARIABLE_ALREADY_DEFINED`), an absolute relocation whose
//!   value is 0 (`VARIABLE_UNDEFINED`);
//! - one allocation holds all `PT_LOAD` segments; `LOAD_BASE` is that allocation minus the
//!   first segment's vaddr, `LOAD_DELTA` is `LOAD_BASE` minus it again, `RELATIVE64` writes
//!   `LOAD_DELTA + addend` (all as ROCr computes them, which is wrong when the first vaddr is
//!   not 0; rocload refuses such code objects before ROCr sees them);
//! - symbols are read from `.symtab` only (no `.symtab`: none at all); non-local `OBJECT`s
//!   are registered per agent, `*.kd` ones as kernels reporting 5.2.3's
//!   `is_dynamic_callstack = false` and kernarg alignment 16 (6.2 reports the descriptor's
//!   dynamic-stack bit); `FUNC`s never are;
//! - undefined symbols resolve to the agent's symbols by name (earlier code objects and
//!   `hsa_executable_agent_global_variable_define`); a relocation against a defined `NOTYPE`
//!   symbol is looked up by name too (0 + addend when absent); an undefined symbol typed
//!   `FUNC`/`OBJECT` is taken for a defined one at value 0, as ROCr does.
//!
//! Kept from ROCr's behaviour on purpose, so that rocload's checks are tested against it.
//! Different on purpose: a refused code object leaves nothing behind (ROCr may have
//! registered some of its symbols and allocated its segments before failing).

use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

use hsa_sys::*;
use parking_lot::Mutex;
use rocload::code_object::{RelocationType, SymbolKind};
use rocload::loader::rocr::RelocSymbolRule;
use rocload::loader::{Agent, ExecutableBackend, LoadError, Module, ModuleSource};
use rocload::target::Policy;

use crate::agents::{agent_handle, agent_index};
use crate::runtime::{runtime, Runtime};
use crate::util::{c_name, guard, put, tag, Status, Tag};
use rocload_ffi::HandleTable;

/// Largest code object a reader accepts from a file.
const MAX_CODE_OBJECT: u64 = 1 << 30;

struct Reader {
    bytes: Arc<[u8]>,
    uri: String,
    /// The application's copy (`CODE_OBJECT_STORAGE_MEMORY_BASE`).
    address: u64,
}

#[derive(Debug, Clone)]
enum SymKind {
    Kernel {
        kernarg_size: u32,
        kernarg_align: u32,
        group: u32,
        private: u32,
        dynamic_callstack: bool,
    },
    Variable,
}

#[derive(Debug, Clone)]
struct Sym {
    name: String,
    agent: Option<usize>,
    kind: SymKind,
    address: u64,
    size: u64,
    global: bool,
}

struct Lco {
    agent: usize,
    load_base: u64,
    load_size: u64,
    delta: i64,
    uri: String,
    elf_base: u64,
    elf_size: u64,
    image: u64,
}

struct Exec {
    id: u64,
    profile: hsa_profile_t,
    rounding: hsa_default_float_rounding_mode_t,
    frozen: bool,
    symbols: Vec<Sym>,
    agent_symbols: BTreeMap<(String, usize), usize>,
    program_symbols: BTreeMap<String, usize>,
    loaded: Vec<Lco>,
    backends: HashMap<usize, Box<dyn ExecutableBackend>>,
}

/// Readers and executables of the runtime, behind generational handles; a symbol or loaded
/// code object handle is a child of its executable's handle and goes stale with it.
pub(crate) struct Loader {
    readers: HandleTable<Arc<Reader>>,
    executables: HandleTable<Arc<Mutex<Exec>>>,
}

impl Default for Loader {
    fn default() -> Self {
        Loader {
            readers: HandleTable::new(tag::READER),
            executables: HandleTable::new(tag::EXECUTABLE),
        }
    }
}

impl Loader {
    fn exec(&self, exec: hsa_executable_t) -> Status<Arc<Mutex<Exec>>> {
        self.executables
            .get(exec.handle)
            .ok_or(HSA_STATUS_ERROR_INVALID_EXECUTABLE)
    }

    fn reader(&self, reader: hsa_code_object_reader_t) -> Status<Arc<Reader>> {
        self.readers
            .get(reader.handle)
            .ok_or(HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER)
    }

    fn symbol_handle(&self, exec: u64, index: usize) -> Status<hsa_executable_symbol_t> {
        let handle = self
            .executables
            .child(exec, tag::SYMBOL, index)
            .ok_or(HSA_STATUS_ERROR_INVALID_EXECUTABLE)?;
        Ok(hsa_executable_symbol_t { handle })
    }

    fn lco_handle(&self, exec: u64, index: usize) -> Status<hsa_loaded_code_object_t> {
        let handle = self
            .executables
            .child(exec, tag::LOADED_CODE_OBJECT, index)
            .ok_or(HSA_STATUS_ERROR_INVALID_EXECUTABLE)?;
        Ok(hsa_loaded_code_object_t { handle })
    }

    /// The executable a child handle of kind `kind` belongs to, and the item's index.
    fn child(&self, kind: Tag, h: u64, bad: hsa_status_t) -> Status<(Arc<Mutex<Exec>>, usize)> {
        let (_, exec, index) = self.executables.child_of(h, kind).ok_or(bad)?;
        Ok((exec, index))
    }

    /// Frees every executable and reader (at shutdown).
    pub(crate) fn clear(&self) {
        self.executables.clear();
        self.readers.clear();
    }
}

fn memory_uri(address: u64, size: usize) -> String {
    format!(
        "memory://{}#offset={address:#x}&size={size}",
        std::process::id()
    )
}

fn load_error_status(e: &LoadError) -> hsa_status_t {
    match e {
        LoadError::ZeroAddress { .. } | LoadError::Unresolved(_) => {
            HSA_STATUS_ERROR_VARIABLE_UNDEFINED
        }
        LoadError::UnsupportedRelocation { .. }
        | LoadError::Layout { .. }
        | LoadError::CodeObject { .. } => HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
        LoadError::Backend { .. } => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
        _ => HSA_STATUS_ERROR,
    }
}

/// Writes `value` as relocation type `r_type` writes it, at `address` in a loaded image.
///
/// # Safety
/// `address` lies inside a live image with room for the type's width (checked by the caller).
unsafe fn write_reloc(address: u64, r_type: RelocationType, value: u64) {
    let (bytes, width) = match r_type {
        RelocationType::ABS32_LO | RelocationType::ABS32 => {
            ((value as u32).to_le_bytes().to_vec(), 4)
        }
        RelocationType::ABS32_HI => (((value >> 32) as u32).to_le_bytes().to_vec(), 4),
        _ => (value.to_le_bytes().to_vec(), 8),
    };
    // SAFETY: per the contract above.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), address as *mut u8, width) };
}

/// Loads `module` for agent `agent` into `exec` as ROCr does (see the module documentation).
fn load(
    rt: &Runtime,
    exec: &mut Exec,
    agent: usize,
    module: &Module,
    reader: &Reader,
) -> Status<usize> {
    let caps = rt.caps;
    let (soft, isa) = rt.agents[agent]
        .gpu()
        .ok_or(HSA_STATUS_ERROR_INVALID_AGENT)?;
    let target = module.target();
    if module.code_object_version() > caps.max_code_object_version() {
        tracing::debug!(
            version = module.code_object_version(),
            "unsupported code object version"
        );
        return Err(HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    }
    let generic = target.target.processor().known().is_some_and(|p| p.generic);
    if generic && !caps.generic_targets() {
        return Err(HSA_STATUS_ERROR_INVALID_ISA_NAME);
    }
    if rocload::target::check(
        isa,
        &target.target,
        Some(target.generic_version),
        Policy::Strict,
    )
    .refusal()
    .is_some()
    {
        return Err(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
    }
    let facts = module.rocr_facts();
    for d in &facts.definitions {
        if exec.agent_symbols.contains_key(&(d.name.clone(), agent)) {
            tracing::debug!(name = %d.name, "second definition for the agent");
            return Err(HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED);
        }
    }
    if !module.blocking_issues().is_empty() || !module.rocr_relocation_issues().is_empty() {
        return Err(HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    }
    if module.relocations().iter().any(|r| !caps.applies(r.r_type)) {
        return Err(HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    }
    if facts
        .relocation_symbols
        .iter()
        .any(|r| r.rule == RelocSymbolRule::Refused)
    {
        return Err(HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    }
    let index = exec.loaded.len();
    let backend = match exec.backends.entry(agent) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => v.insert(
            soft.new_executable()
                .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?,
        ),
    };
    let image = backend
        .reserve(index, module)
        .map_err(|e| load_error_status(&e))?
        .ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    let first = module.first_vaddr();
    let load_base = image.wrapping_sub(first);
    // Imports: the agent's symbols by name; an undefined symbol typed FUNC/OBJECT is taken
    // for a defined one at value 0 (ROCr's ApplyDynamicRelocation).
    let imports: Vec<Option<u64>> = module
        .imports()
        .iter()
        .map(|i| match i.kind {
            SymbolKind::Func | SymbolKind::Object => Some(load_base),
            _ => exec
                .agent_symbols
                .get(&(i.name.clone(), agent))
                .map(|&s| exec.symbols[s].address),
        })
        .collect();
    let placement = backend.load(index, module, &imports).map_err(|e| {
        tracing::debug!(error = %e, "load failed");
        load_error_status(&e)
    })?;
    let image_end = placement.base.saturating_add(placement.size);
    let inside = |vaddr: u64, width: u64| {
        let at = image.wrapping_add(vaddr.wrapping_sub(first));
        (at >= image && at.checked_add(width).is_some_and(|e| e <= image_end)).then_some(at)
    };
    // ROCr's RELATIVE64 is Address(0) - first vaddr + addend: off by the first vaddr.
    if first != 0 {
        for r in module
            .relocations()
            .iter()
            .filter(|r| r.r_type == RelocationType::RELATIVE64)
        {
            if let Some(at) = inside(r.offset, 8) {
                let value = load_base.wrapping_sub(first).wrapping_add(r.addend as u64);
                // SAFETY: 8 bytes inside the image (checked).
                unsafe { write_reloc(at, r.r_type, value) };
            }
        }
    }
    // Relocations against defined NOTYPE symbols: looked up by name among the agent's symbols
    // (this code object's OBJECTs are registered before relocations are applied).
    let own: HashMap<&str, u64> = facts
        .definitions
        .iter()
        .map(|d| (d.name.as_str(), load_base.wrapping_add(d.value)))
        .collect();
    for r in facts
        .relocation_symbols
        .iter()
        .filter(|r| r.rule == RelocSymbolRule::LookedUpByName)
    {
        let s = own.get(r.symbol.as_str()).copied().or_else(|| {
            exec.agent_symbols
                .get(&(r.symbol.clone(), agent))
                .map(|&i| exec.symbols[i].address)
        });
        let value = s.unwrap_or(0).wrapping_add(r.addend as u64);
        if value == 0 && r.r_type != RelocationType::RELATIVE64 {
            tracing::debug!(symbol = %r.symbol, "relocation against a NOTYPE symbol ROCr cannot find");
            return Err(HSA_STATUS_ERROR_VARIABLE_UNDEFINED);
        }
        let width = r.r_type.width().unwrap_or(8);
        if let Some(at) = inside(r.offset, width) {
            // SAFETY: the field lies inside the image (checked).
            unsafe { write_reloc(at, r.r_type, value) };
        }
    }
    // Register what ROCr registers.
    let module_symbols: HashMap<&str, bool> = module
        .symbols()
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.binding == rocload::code_object::Binding::Global,
            )
        })
        .collect();
    for d in &facts.definitions {
        let address = load_base.wrapping_add(d.value);
        let kind = if d.kernel {
            let mut kd = [0u8; 64];
            if let Some(at) = inside(d.value, 64) {
                // SAFETY: 64 bytes inside the image (checked).
                unsafe { std::ptr::copy_nonoverlapping(at as *const u8, kd.as_mut_ptr(), 64) };
            }
            let u32_at = |o: usize| u32::from_le_bytes([kd[o], kd[o + 1], kd[o + 2], kd[o + 3]]);
            let properties = u16::from_le_bytes([kd[56], kd[57]]);
            SymKind::Kernel {
                group: u32_at(0),
                private: u32_at(4),
                kernarg_size: u32_at(8),
                kernarg_align: 16,
                dynamic_callstack: caps.reports_dynamic_callstack() && properties & (1 << 11) != 0,
            }
        } else {
            SymKind::Variable
        };
        let bare = d.name.strip_suffix(".kd").unwrap_or(&d.name);
        let global = module_symbols.get(bare).copied().unwrap_or(!d.weak);
        exec.symbols.push(Sym {
            name: d.name.clone(),
            agent: Some(agent),
            kind,
            address,
            size: d.size,
            global,
        });
        exec.agent_symbols
            .insert((d.name.clone(), agent), exec.symbols.len() - 1);
    }
    let load_size = module
        .segments()
        .iter()
        .map(|s| s.vaddr.saturating_add(s.mem_size))
        .max()
        .unwrap_or(0);
    exec.loaded.push(Lco {
        agent,
        load_base,
        load_size,
        delta: load_base.wrapping_sub(first) as i64,
        uri: reader.uri.clone(),
        elf_base: reader.address,
        elf_size: reader.bytes.len() as u64,
        image,
    });
    tracing::debug!(source = %module.source(), load_base = format_args!("{load_base:#x}"), load_size, "code object loaded");
    Ok(index)
}

fn find_symbol(exec: &Exec, name: &str, agent: Option<usize>) -> Option<usize> {
    match agent {
        Some(a) => exec.agent_symbols.get(&(name.to_owned(), a)).copied(),
        None => exec.program_symbols.get(name).copied(),
    }
}

fn define(
    rt: &Runtime,
    executable: hsa_executable_t,
    agent: Option<hsa_agent_t>,
    name: *const c_char,
    address: *mut c_void,
) -> Status {
    let exec = rt.loader.exec(executable)?;
    let mut exec = exec.lock();
    // SAFETY: a C string by the API's contract.
    let name = unsafe { c_name(name)? };
    if exec.frozen {
        return Err(HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
    }
    let agent = agent.map(|a| agent_index(a, rt.agents.len())).transpose()?;
    if find_symbol(&exec, &name, agent).is_some() {
        return Err(HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED);
    }
    exec.symbols.push(Sym {
        name: name.clone(),
        agent,
        kind: SymKind::Variable,
        address: address as u64,
        size: 0,
        global: true,
    });
    let i = exec.symbols.len() - 1;
    match agent {
        Some(a) => {
            exec.agent_symbols.insert((name, a), i);
        }
        None => {
            exec.program_symbols.insert(name, i);
        }
    }
    Ok(())
}

fn with_symbol<T>(
    rt: &Runtime,
    symbol: hsa_executable_symbol_t,
    f: impl FnOnce(&Exec, &Sym) -> Status<T>,
) -> Status<T> {
    let (exec, index) = rt.loader.child(
        tag::SYMBOL,
        symbol.handle,
        HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
    )?;
    let exec = exec.lock();
    let sym = exec
        .symbols
        .get(index)
        .ok_or(HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL)?;
    f(&exec, sym)
}

/// # Safety
/// `value` is writable for the attribute's type (names: for the length asked before).
unsafe fn symbol_info(sym: &Sym, attribute: u32, value: *mut c_void) -> Status {
    if value.is_null() {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let kernel = match &sym.kind {
        SymKind::Kernel {
            kernarg_size,
            kernarg_align,
            group,
            private,
            dynamic_callstack,
        } => Some((
            *kernarg_size,
            *kernarg_align,
            *group,
            *private,
            *dynamic_callstack,
        )),
        SymKind::Variable => None,
    };
    // SAFETY: (all writes) types as ROCr's SymbolImpl/KernelSymbol/VariableSymbol::GetInfo
    // write them; names without a NUL, as ROCr copies them.
    unsafe {
        match (attribute, kernel) {
            (HSA_EXECUTABLE_SYMBOL_INFO_TYPE, k) => put(
                value,
                if k.is_some() {
                    HSA_SYMBOL_KIND_KERNEL
                } else {
                    HSA_SYMBOL_KIND_VARIABLE
                },
            ),
            (HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, _) => put(value, sym.name.len() as u32),
            (HSA_EXECUTABLE_SYMBOL_INFO_NAME, _) => {
                std::ptr::copy_nonoverlapping(
                    sym.name.as_ptr(),
                    value.cast::<u8>(),
                    sym.name.len(),
                );
                Ok(())
            }
            (HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH, _) => put(value, 0u32),
            (HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME, _) => Ok(()),
            (HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE, _) => put(
                value,
                if sym.global {
                    HSA_SYMBOL_LINKAGE_PROGRAM
                } else {
                    HSA_SYMBOL_LINKAGE_MODULE
                },
            ),
            (HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION, _) => put(value, true),
            (HSA_EXECUTABLE_SYMBOL_INFO_AGENT, _) => match sym.agent {
                Some(a) => put(value, agent_handle(a)),
                None => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
            },
            (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, None)
            | (HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, Some(_)) => put(value, sym.address),
            (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION, None) => put(
                value,
                if sym.agent.is_some() {
                    HSA_VARIABLE_ALLOCATION_AGENT
                } else {
                    HSA_VARIABLE_ALLOCATION_PROGRAM
                },
            ),
            (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT, None) => {
                put(value, HSA_VARIABLE_SEGMENT_GLOBAL)
            }
            (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT, None) => put(value, 0u32),
            (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, None) => {
                put(value, u32::try_from(sym.size).unwrap_or(u32::MAX))
            }
            (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST, None) => put(value, false),
            (HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, Some(k)) => put(value, k.0),
            (HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, Some(k)) => {
                put(value, k.1)
            }
            (HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, Some(k)) => put(value, k.2),
            (HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, Some(k)) => put(value, k.3),
            (HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK, Some(k)) => put(value, k.4),
            (HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION, Some(_)) => put(value, 0u32),
            _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
        }
    }
}

type SymbolCallback = Option<
    unsafe extern "C" fn(
        hsa_executable_t,
        hsa_agent_t,
        hsa_executable_symbol_t,
        *mut c_void,
    ) -> hsa_status_t,
>;
type ProgramSymbolCallback = Option<
    unsafe extern "C" fn(hsa_executable_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t,
>;
type OldSymbolCallback = Option<
    unsafe extern "C" fn(hsa_executable_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t,
>;

fn create(
    profile: hsa_profile_t,
    rounding: hsa_default_float_rounding_mode_t,
    executable: *mut hsa_executable_t,
) -> Status {
    let rt = runtime()?;
    if executable.is_null() {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if ![
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR,
    ]
    .contains(&rounding)
    {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let exec = Arc::new(Mutex::new(Exec {
        id: 0,
        profile,
        rounding,
        frozen: false,
        symbols: Vec::new(),
        agent_symbols: BTreeMap::new(),
        program_symbols: BTreeMap::new(),
        loaded: Vec::new(),
        backends: HashMap::new(),
    }));
    let id = rt
        .loader
        .executables
        .insert(exec.clone())
        .ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    exec.lock().id = id;
    // SAFETY: non-NULL out-pointer.
    unsafe { put(executable.cast(), hsa_executable_t { handle: id }) }
}

fn new_reader(
    rt: &Runtime,
    bytes: Vec<u8>,
    uri: String,
    address: u64,
    reader: *mut hsa_code_object_reader_t,
) -> Status {
    let id = rt
        .loader
        .readers
        .insert(Arc::new(Reader {
            bytes: bytes.into(),
            uri,
            address,
        }))
        .ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    // SAFETY: non-NULL out-pointer (checked by the callers).
    unsafe { put(reader.cast(), hsa_code_object_reader_t { handle: id }) }
}

hsa_api! {
    /// `hsa_code_object_reader_create_from_memory`: the bytes are copied (ROCr keeps the
    /// pointer; the URI names the application's copy, as ROCr's does).
    fn hsa_code_object_reader_create_from_memory(code_object: *const c_void, size: usize, code_object_reader: *mut hsa_code_object_reader_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if code_object.is_null() || code_object_reader.is_null() || size == 0 || size as u64 > MAX_CODE_OBJECT {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: `size` bytes at `code_object` by the API's contract.
            let bytes = unsafe { std::slice::from_raw_parts(code_object.cast::<u8>(), size) }.to_vec();
            new_reader(&rt, bytes, memory_uri(code_object as u64, size), code_object as u64, code_object_reader)
        })
    }

    /// `hsa_code_object_reader_create_from_file`: reads the whole file from `file` (an open
    /// descriptor, left open).
    fn hsa_code_object_reader_create_from_file(file: hsa_file_t, code_object_reader: *mut hsa_code_object_reader_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if code_object_reader.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let path = std::fs::read_link(format!("/proc/self/fd/{file}")).map_err(|_| HSA_STATUS_ERROR_INVALID_FILE)?;
            let meta = std::fs::metadata(&path).map_err(|_| HSA_STATUS_ERROR_INVALID_FILE)?;
            if meta.len() == 0 || meta.len() > MAX_CODE_OBJECT {
                return Err(HSA_STATUS_ERROR_INVALID_FILE);
            }
            let bytes = std::fs::read(&path).map_err(|_| HSA_STATUS_ERROR_INVALID_FILE)?;
            let uri = format!("file://{}#offset=0&size={}", path.display(), bytes.len());
            new_reader(&rt, bytes, uri, 0, code_object_reader)
        })
    }

    /// `hsa_code_object_reader_destroy`.
    fn hsa_code_object_reader_destroy(code_object_reader: hsa_code_object_reader_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let removed = rt.loader.readers.remove(code_object_reader.handle);
            removed.map(|_| ()).ok_or(HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER)
        })
    }

    /// `hsa_executable_create_alt`.
    fn hsa_executable_create_alt(profile: hsa_profile_t, default_float_rounding_mode: hsa_default_float_rounding_mode_t, options: *const c_char, executable: *mut hsa_executable_t) -> hsa_status_t {
        let _ = options;
        guard(|| create(profile, default_float_rounding_mode, executable))
    }

    /// `hsa_executable_create` (deprecated form).
    fn hsa_executable_create(profile: hsa_profile_t, executable_state: hsa_executable_state_t, options: *const c_char, executable: *mut hsa_executable_t) -> hsa_status_t {
        let _ = options;
        guard(|| {
            if executable_state != HSA_EXECUTABLE_STATE_UNFROZEN && executable_state != HSA_EXECUTABLE_STATE_FROZEN {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            create(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, executable)
        })
    }

    /// `hsa_executable_destroy`: frees its code objects.
    fn hsa_executable_destroy(executable: hsa_executable_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let removed = rt.loader.executables.remove(executable.handle);
            removed.map(|_| ()).ok_or(HSA_STATUS_ERROR_INVALID_EXECUTABLE)
        })
    }

    /// `hsa_executable_load_agent_code_object`.
    fn hsa_executable_load_agent_code_object(executable: hsa_executable_t, agent: hsa_agent_t, code_object_reader: hsa_code_object_reader_t, options: *const c_char, loaded_code_object: *mut hsa_loaded_code_object_t) -> hsa_status_t {
        let _ = options;
        guard(|| {
            let rt = runtime()?;
            let exec = rt.loader.exec(executable)?;
            let reader = rt.loader.reader(code_object_reader)?;
            let agent = agent_index(agent, rt.agents.len())?;
            let mut exec = exec.lock();
            if exec.frozen {
                return Err(HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
            }
            let module = Module::new(reader.bytes.clone(), ModuleSource::Memory { label: reader.uri.clone() })
                .map_err(|e| {
                    tracing::debug!(error = %e, "not a code object");
                    HSA_STATUS_ERROR_INVALID_CODE_OBJECT
                })?;
            let index = load(&rt, &mut exec, agent, &module, &reader)?;
            if !loaded_code_object.is_null() {
                // SAFETY: non-NULL out-pointer.
                let handle = rt.loader.lco_handle(exec.id, index)?;
                // SAFETY: non-NULL out-pointer.
                unsafe { put(loaded_code_object.cast(), handle)? };
            }
            Ok(())
        })
    }

    /// `hsa_executable_agent_global_variable_define`.
    fn hsa_executable_agent_global_variable_define(executable: hsa_executable_t, agent: hsa_agent_t, variable_name: *const c_char, address: *mut c_void) -> hsa_status_t {
        guard(|| define(&*runtime()?, executable, Some(agent), variable_name, address))
    }

    /// `hsa_executable_readonly_variable_define`.
    fn hsa_executable_readonly_variable_define(executable: hsa_executable_t, agent: hsa_agent_t, variable_name: *const c_char, address: *mut c_void) -> hsa_status_t {
        guard(|| define(&*runtime()?, executable, Some(agent), variable_name, address))
    }

    /// `hsa_executable_global_variable_define` (program linkage).
    fn hsa_executable_global_variable_define(executable: hsa_executable_t, variable_name: *const c_char, address: *mut c_void) -> hsa_status_t {
        guard(|| define(&*runtime()?, executable, None, variable_name, address))
    }

    /// `hsa_executable_freeze`.
    fn hsa_executable_freeze(executable: hsa_executable_t, options: *const c_char) -> hsa_status_t {
        let _ = options;
        guard(|| {
            let rt = runtime()?;
            let exec = rt.loader.exec(executable)?;
            let mut exec = exec.lock();
            if exec.frozen {
                return Err(HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
            }
            for backend in exec.backends.values_mut() {
                backend.freeze().map_err(|_| HSA_STATUS_ERROR)?;
            }
            exec.frozen = true;
            Ok(())
        })
    }

    /// `hsa_executable_get_info`.
    fn hsa_executable_get_info(executable: hsa_executable_t, attribute: hsa_executable_info_t, value: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let exec = rt.loader.exec(executable)?;
            let exec = exec.lock();
            // SAFETY: the attribute's type is the caller's contract.
            unsafe {
                match attribute {
                    HSA_EXECUTABLE_INFO_PROFILE => put(value, exec.profile),
                    HSA_EXECUTABLE_INFO_STATE => put(value, if exec.frozen { HSA_EXECUTABLE_STATE_FROZEN } else { HSA_EXECUTABLE_STATE_UNFROZEN }),
                    HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE => put(value, exec.rounding),
                    _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
                }
            }
        })
    }

    /// `hsa_executable_validate`: nothing to report.
    fn hsa_executable_validate(executable: hsa_executable_t, result: *mut u32) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            rt.loader.exec(executable)?;
            // SAFETY: a uint32_t out-pointer.
            unsafe { put(result.cast(), 0u32) }
        })
    }

    /// `hsa_executable_get_symbol_by_name`: an agent symbol (kernels by their `.kd` name) or,
    /// with a NULL agent, a program symbol.
    fn hsa_executable_get_symbol_by_name(executable: hsa_executable_t, symbol_name: *const c_char, agent: *const hsa_agent_t, symbol: *mut hsa_executable_symbol_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            // SAFETY: a C string by the API's contract.
            let name = unsafe { c_name(symbol_name)? };
            if symbol.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let exec = rt.loader.exec(executable)?;
            let exec = exec.lock();
            let agent = if agent.is_null() {
                None
            } else {
                // SAFETY: a non-NULL pointer to one agent handle.
                Some(agent_index(unsafe { *agent }, rt.agents.len())?)
            };
            let index = find_symbol(&exec, &name, agent).ok_or(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME)?;
            // SAFETY: non-NULL out-pointer.
            let handle = rt.loader.symbol_handle(exec.id, index)?;
            // SAFETY: non-NULL out-pointer.
            unsafe { put(symbol.cast(), handle) }
        })
    }

    /// `hsa_executable_get_symbol` (deprecated form; the module name is ignored).
    fn hsa_executable_get_symbol(executable: hsa_executable_t, module_name: *const c_char, symbol_name: *const c_char, agent: hsa_agent_t, call_convention: i32, symbol: *mut hsa_executable_symbol_t) -> hsa_status_t {
        let _ = (module_name, call_convention);
        // SAFETY: forwarded; `agent` lives for the call.
        unsafe { hsa_executable_get_symbol_by_name(executable, symbol_name, &agent, symbol) }
    }

    /// `hsa_executable_symbol_get_info`.
    fn hsa_executable_symbol_get_info(executable_symbol: hsa_executable_symbol_t, attribute: hsa_executable_symbol_info_t, value: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            // SAFETY: the attribute's type is the caller's contract.
            with_symbol(&rt, executable_symbol, |_, sym| unsafe { symbol_info(sym, attribute, value) })
        })
    }

    /// `hsa_executable_iterate_agent_symbols`.
    fn hsa_executable_iterate_agent_symbols(executable: hsa_executable_t, agent: hsa_agent_t, callback: SymbolCallback, data: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let f = callback.ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let index = agent_index(agent, rt.agents.len())?;
            let exec = rt.loader.exec(executable)?;
            let (id, list): (u64, Vec<usize>) = {
                let exec = exec.lock();
                (exec.id, exec.agent_symbols.iter().filter(|((_, a), _)| *a == index).map(|(_, &i)| i).collect())
            };
            for i in list {
                let handle = rt.loader.symbol_handle(id, i)?;
                // SAFETY: the application's callback with its own data (no lock held).
                match unsafe { f(executable, agent, handle, data) } {
                    HSA_STATUS_SUCCESS => {}
                    other => return Err(other),
                }
            }
            Ok(())
        })
    }

    /// `hsa_executable_iterate_program_symbols`.
    fn hsa_executable_iterate_program_symbols(executable: hsa_executable_t, callback: ProgramSymbolCallback, data: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let f = callback.ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let exec = rt.loader.exec(executable)?;
            let (id, list): (u64, Vec<usize>) = {
                let exec = exec.lock();
                (exec.id, exec.program_symbols.values().copied().collect())
            };
            for i in list {
                let handle = rt.loader.symbol_handle(id, i)?;
                // SAFETY: the application's callback with its own data (no lock held).
                match unsafe { f(executable, handle, data) } {
                    HSA_STATUS_SUCCESS => {}
                    other => return Err(other),
                }
            }
            Ok(())
        })
    }

    /// `hsa_executable_iterate_symbols` (deprecated form: every symbol).
    fn hsa_executable_iterate_symbols(executable: hsa_executable_t, callback: OldSymbolCallback, data: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let f = callback.ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let exec = rt.loader.exec(executable)?;
            let (id, count) = {
                let exec = exec.lock();
                (exec.id, exec.symbols.len())
            };
            for i in 0..count {
                let handle = rt.loader.symbol_handle(id, i)?;
                // SAFETY: the application's callback with its own data (no lock held).
                match unsafe { f(executable, handle, data) } {
                    HSA_STATUS_SUCCESS => {}
                    other => return Err(other),
                }
            }
            Ok(())
        })
    }
}

/// The `hsa_ven_amd_loader` functions, handed out through the extension table only (ROCr
/// 5.2.3 does not export them either).
pub(crate) mod ext {
    use super::*;

    fn lco(rt: &Runtime, h: hsa_loaded_code_object_t) -> Status<(Arc<Mutex<Exec>>, usize)> {
        let (exec, index) = rt.loader.child(
            tag::LOADED_CODE_OBJECT,
            h.handle,
            HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
        )?;
        if exec.lock().loaded.get(index).is_none() {
            return Err(HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
        }
        Ok((exec, index))
    }

    /// The executable and code object whose loaded image holds `address`.
    fn containing(rt: &Runtime, address: u64) -> Option<(u64, u64)> {
        let executables: Vec<_> = rt
            .loader
            .executables
            .entries()
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        executables.iter().find_map(|e| {
            let e = e.lock();
            e.loaded.iter().find_map(|l| {
                let end = l.image.saturating_add(l.load_size);
                (address >= l.image && address < end).then_some((e.id, l.image))
            })
        })
    }

    pub(crate) unsafe extern "C" fn query_host_address(
        device_address: *const c_void,
        host_address: *mut *const c_void,
    ) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if device_address.is_null() || host_address.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            containing(&rt, device_address as u64).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            // Device memory is host memory here: the host address is the device address.
            // SAFETY: non-NULL out-pointer.
            unsafe { put(host_address.cast(), device_address) }
        })
    }

    pub(crate) unsafe extern "C" fn query_segment_descriptors(
        descriptors: *mut hsa_ven_amd_loader_segment_descriptor_t,
        count: *mut usize,
    ) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if count.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let executables: Vec<_> = rt
                .loader
                .executables
                .entries()
                .into_iter()
                .map(|(_, e)| e)
                .collect();
            let mut all = Vec::new();
            for e in &executables {
                let e = e.lock();
                for l in &e.loaded {
                    all.push(hsa_ven_amd_loader_segment_descriptor_t {
                        agent: agent_handle(l.agent),
                        executable: hsa_executable_t { handle: e.id },
                        code_object_storage_type:
                            HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY,
                        code_object_storage_base: l.elf_base as *const c_void,
                        code_object_storage_size: l.elf_size as usize,
                        code_object_storage_offset: 0,
                        segment_base: l.image as *const c_void,
                        segment_size: l.load_size as usize,
                    });
                }
            }
            // SAFETY: `count` is a non-NULL size_t pointer.
            let asked = unsafe { *count };
            if descriptors.is_null() {
                // SAFETY: as above.
                return unsafe { put(count.cast(), all.len()) };
            }
            if asked != all.len() {
                return Err(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
            }
            // SAFETY: the caller's array holds `asked` == all.len() descriptors.
            unsafe { std::ptr::copy_nonoverlapping(all.as_ptr(), descriptors, all.len()) };
            Ok(())
        })
    }

    pub(crate) unsafe extern "C" fn query_executable(
        device_address: *const c_void,
        executable: *mut hsa_executable_t,
    ) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if device_address.is_null() || executable.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (id, _) =
                containing(&rt, device_address as u64).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            // SAFETY: non-NULL out-pointer.
            unsafe { put(executable.cast(), hsa_executable_t { handle: id }) }
        })
    }

    type LcoCallback = Option<
        unsafe extern "C" fn(
            hsa_executable_t,
            hsa_loaded_code_object_t,
            *mut c_void,
        ) -> hsa_status_t,
    >;

    pub(crate) unsafe extern "C" fn executable_iterate_loaded_code_objects(
        executable: hsa_executable_t,
        callback: LcoCallback,
        data: *mut c_void,
    ) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let f = callback.ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let exec = rt.loader.exec(executable)?;
            let (id, count) = {
                let e = exec.lock();
                (e.id, e.loaded.len())
            };
            for i in 0..count {
                let handle = rt.loader.lco_handle(id, i)?;
                // SAFETY: the application's callback with its own data (no lock held).
                match unsafe { f(executable, handle, data) } {
                    HSA_STATUS_SUCCESS => {}
                    other => return Err(other),
                }
            }
            Ok(())
        })
    }

    pub(crate) unsafe extern "C" fn loaded_code_object_get_info(
        loaded_code_object: hsa_loaded_code_object_t,
        attribute: hsa_ven_amd_loader_loaded_code_object_info_t,
        value: *mut c_void,
    ) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if value.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (exec, index) = lco(&rt, loaded_code_object)?;
            let e = exec.lock();
            let l = &e.loaded[index];
            // SAFETY: (all writes) types as ROCr's hsa_ven_amd_loader_loaded_code_object_get_info
            // writes them; the URI without a NUL, URI_LENGTH its size.
            unsafe {
                match attribute {
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_EXECUTABLE => {
                        put(value, hsa_executable_t { handle: e.id })
                    }
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND => {
                        put(value, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT)
                    }
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT => {
                        put(value, agent_handle(l.agent))
                    }
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_TYPE => {
                        put(value, HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY)
                    }
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_BASE => {
                        put(value, l.elf_base)
                    }
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE => {
                        put(value, l.elf_size)
                    }
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA => put(value, l.delta),
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE => put(value, l.load_base),
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE => put(value, l.load_size),
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH => {
                        put(value, l.uri.len() as u32)
                    }
                    HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI => {
                        std::ptr::copy_nonoverlapping(
                            l.uri.as_ptr(),
                            value.cast::<u8>(),
                            l.uri.len(),
                        );
                        Ok(())
                    }
                    _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
                }
            }
        })
    }
}
