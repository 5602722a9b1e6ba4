//! An executable: code objects loaded and linked on one agent, frozen, with their symbols.
//! Immutable once built; cheap to clone (`Arc`), safe to query from many threads.

use std::sync::Arc;

use parking_lot::Mutex;

use super::backend::{Agent, ExecutableBackend};
use super::module::{Module, ModuleSource};
use super::plan::{LinkPlan, Provider};
use super::symbols::{LoadedSymbol, SymbolTable};
use super::LoadError;

/// One code object as loaded.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoadedCodeObject {
    /// The module.
    pub module: Module,
    /// Address of the loaded image (its lowest segment).
    pub base: u64,
    /// Bytes allocated.
    pub size: u64,
    /// Added to a symbol's value to get its address (`base - first p_vaddr`).
    pub load_delta: u64,
    /// Position in load order.
    pub load_order: usize,
    /// ROCr-style URI: `file://path#offset=N&size=M` or `memory://pid#offset=0xADDR&size=N`.
    pub uri: String,
}

#[derive(Debug)]
struct Inner {
    agent: Arc<dyn Agent>,
    code_objects: Vec<LoadedCodeObject>,
    symbols: SymbolTable,
    backend: Mutex<Box<dyn ExecutableBackend>>,
}

/// A frozen executable on one agent.
///
/// # Examples
/// Symbols by raw, demangled or short name, and any address back to a symbol and offset (what
/// an instrumentation tool asks):
/// ```
/// use rocload::backend::SoftAgent;
/// use rocload::loader::{Linker, Module, SymbolClass};
///
/// let fixture = |name| format!("{}/tests/fixtures/codeobj/{name}", env!("CARGO_MANIFEST_DIR"));
/// let modules = [
///     Module::from_file(fixture("kernels_user.co"))?,
///     Module::from_file(fixture("devlib_math.co"))?,
///     Module::from_file(fixture("devlib_data.co"))?,
/// ];
/// let exe = Linker::new().link(&SoftAgent::new("gfx1030".parse()?).shared(), &modules)?;
///
/// let mix = exe.symbol("dl::mix").expect("a device function by its short name");
/// assert_eq!(mix.class, SymbolClass::Function);
/// assert_eq!(exe.symbol("_ZN2dl3mixEif").map(|s| s.address), Some(mix.address));
/// let (inside, offset) = exe.symbol_at(mix.address + 4).expect("an address in the function");
/// assert_eq!((inside.name.as_str(), offset), ("_ZN2dl3mixEif", 4));
/// assert_eq!(exe.code_objects().len(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Executable(Arc<Inner>);

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Executable>();
};

impl Executable {
    pub(crate) fn build(
        agent: Arc<dyn Agent>,
        modules: &[Module],
        plan: &LinkPlan,
    ) -> Result<Executable, LoadError> {
        // Backends that cannot undo a load (ROCr) check the whole plan before touching memory.
        agent.check_plan(modules, plan)?;
        let mut backend = agent.new_executable()?;
        let mut bases: Vec<Option<u64>> = vec![None; modules.len()];
        if backend.links_cycles() {
            for &m in &plan.order {
                bases[m] = backend.reserve(m, &modules[m])?;
            }
        } else if let Some(cycle) = plan.cycles.first() {
            return Err(LoadError::Cycle {
                modules: cycle
                    .iter()
                    .map(|&m| modules[m].source().to_string())
                    .collect(),
            });
        }
        let mut placements = vec![None; modules.len()];
        for (position, &m) in plan.order.iter().enumerate() {
            let module = &modules[m];
            let imports: Vec<Option<u64>> = plan.providers[m]
                .iter()
                .map(|p| match *p {
                    Provider::Module { module: pm, symbol } => {
                        let base = bases[pm]?;
                        let provider = &modules[pm];
                        Some(
                            base.wrapping_sub(provider.first_vaddr())
                                .wrapping_add(provider.symbols()[symbol].value),
                        )
                    }
                    Provider::Defined(addr) => Some(addr),
                    Provider::Unresolved => None,
                })
                .collect();
            let placement = backend.load(m, module, &imports)?;
            bases[m] = Some(placement.base);
            placements[m] = Some((placement, position));
        }
        backend.freeze()?;
        let mut code_objects = Vec::with_capacity(modules.len());
        let mut symbols = Vec::new();
        for (i, module) in modules.iter().enumerate() {
            let Some((placement, load_order)) = placements[i] else {
                return Err(LoadError::Backend {
                    op: "load",
                    message: format!("{} was not loaded", module.source()),
                });
            };
            let delta = placement.base.wrapping_sub(module.first_vaddr());
            for s in module.symbols() {
                symbols.push(LoadedSymbol {
                    name: s.name.clone(),
                    demangled: s.demangled.clone(),
                    class: s.class,
                    address: delta.wrapping_add(s.value),
                    size: s.size,
                    code_address: s.code_value.map(|v| delta.wrapping_add(v)),
                    code_object: i,
                    exported: s.exported,
                    binding: s.binding,
                    visibility: s.visibility,
                });
            }
            let uri = backend.runtime_uri(i).unwrap_or_else(|| uri(module));
            code_objects.push(LoadedCodeObject {
                module: module.clone(),
                base: placement.base,
                size: placement.size,
                load_delta: delta,
                load_order,
                uri,
            });
        }
        tracing::debug!(agent = %agent.isa().isa_name(), code_objects = code_objects.len(), symbols = symbols.len(), "executable frozen");
        Ok(Executable(Arc::new(Inner {
            agent,
            code_objects,
            symbols: SymbolTable::new(symbols),
            backend: Mutex::new(backend),
        })))
    }

    /// The agent it was built on.
    pub fn agent(&self) -> &Arc<dyn Agent> {
        &self.0.agent
    }

    /// The code objects, in the order given to the linker.
    pub fn code_objects(&self) -> &[LoadedCodeObject] {
        &self.0.code_objects
    }

    /// Every symbol.
    pub fn symbols(&self) -> &SymbolTable {
        &self.0.symbols
    }

    /// A kernel, device function or variable by raw or demangled name (kernels also by
    /// `name.kd`).
    pub fn symbol(&self, name: &str) -> Option<&LoadedSymbol> {
        self.0.symbols.get(name)
    }

    /// The symbol at or containing `address`, with the offset into it.
    pub fn symbol_at(&self, address: u64) -> Option<(&LoadedSymbol, u64)> {
        self.0.symbols.at(address)
    }

    /// Points the pointer variable at `address` (in this executable's loaded code) at the host
    /// memory `[host, host + size)`, as the agent sees it; see
    /// [`ExecutableBackend::publish_host_memory`]. Returns the address written.
    ///
    /// # Errors
    /// The backend's, when it cannot make the memory reachable or write the variable.
    pub fn publish_host_memory(
        &self,
        address: u64,
        host: u64,
        size: u64,
    ) -> Result<u64, LoadError> {
        self.0
            .backend
            .lock()
            .publish_host_memory(address, host, size)
    }

    /// A copy of code object `index`'s loaded, relocated image, where the backend can read it.
    pub fn image(&self, index: usize) -> Option<Vec<u8>> {
        self.0.backend.lock().read_image(index)
    }
}

fn uri(module: &Module) -> String {
    let size = module.bytes().len();
    match module.source() {
        ModuleSource::File { path, offset } => format!("file://{path}#offset={offset}&size={size}"),
        ModuleSource::Memory { .. } => format!(
            "memory://{}#offset={:#x}&size={size}",
            std::process::id(),
            module.bytes().as_ptr() as usize
        ),
    }
}
