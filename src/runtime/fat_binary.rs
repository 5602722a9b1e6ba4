//! One registered fat binary: where its bytes are, what it holds (read at first use), and
//! what it became on each agent.
//!
//! First use, in two once-cells:
//! 1. *prepare* (once per fat binary, on the first use on any agent): resolve the wrapper and
//!    measure the container behind it, walk the containers, list each one's entries (a
//!    compressed bundle inflates only up to the end of its entry table) and rank them for
//!    every agent (selection is a pure, cheap function of entry ids);
//! 2. *load* (once per agent): extract the best entry of each container, check its ELF header,
//!    link the modules into an executable on the agent.
//!
//! Sharing inflated bundles between agents: each entry is extracted at most once and the
//! resulting module (an `Arc`) is shared by every agent that chose it. When agents need
//! *different* entries of one compressed bundle (known after prepare, from their first
//! choices), the first extraction inflates the whole bundle once and every needed entry is
//! cut from it; the inflated bytes are dropped once all of those entries are out. With one
//! agent, or agents that agree, extraction streams and stops at the end of the entry, so a
//! large bundle is never inflated past what is needed. Why not a process-wide cache of
//! inflated bundles keyed by (hash, size): distinct registrations are distinct bundles in
//! practice, and such a cache would keep hundreds of megabytes alive for no second user.
//!
//! Not for: registry maps (see the parent module) or C types.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Weak};

use once_cell::sync::OnceCell;
use parking_lot::{Mutex, RwLock};

use super::device::DeviceContext;
use super::kernel::LoadedFatBinary;
use super::tools::Tools;
use super::{RuntimeError, RuntimeOptions, RuntimeResult, Stats};
use crate::container::{into_shared, read_containers, Bundle, Container, EntryInfo};
use crate::loader::fat_binary::{first_loadable, EntryRefusal};
use crate::loader::{Agent, Linker, Module, ModuleSource, SymbolClass};
use crate::target::{select, AgentIsa, TargetError};
use crate::SharedBytes;

/// Where a fat binary's bytes are.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// A `HIPF` wrapper's address in a loaded image; resolved and measured at first use.
    Wrapper(usize),
    /// Bytes that live for the whole program.
    Static(&'static [u8]),
    /// Bytes the runtime owns.
    Owned(SharedBytes),
}

/// Host pointers registered under a fat binary, removed with it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum HostKey {
    Function(usize),
    Variable(usize),
}

/// A managed variable's memory: host memory the software agent shares with the host.
struct ManagedAlloc {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

// SAFETY: the allocation is plain memory owned by this value; access goes through raw
// pointers handed to the host program, like any HIP managed allocation.
unsafe impl Send for ManagedAlloc {}
// SAFETY: as above; this type itself never reads or writes the memory after creation.
unsafe impl Sync for ManagedAlloc {}

impl Drop for ManagedAlloc {
    fn drop(&mut self) {
        // SAFETY: allocated in `add_managed` with this layout, freed once here.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

impl std::fmt::Debug for ManagedAlloc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ManagedAlloc({:p}, {} bytes)",
            self.ptr,
            self.layout.size()
        )
    }
}

#[derive(Debug, Default)]
struct Managed {
    /// (device variable name, managed address, allocation).
    vars: Vec<(Box<str>, u64, ManagedAlloc)>,
    /// Every load of this fat binary, so a variable registered after a load still reaches it.
    loaded: Vec<Weak<LoadedFatBinary>>,
}

/// What a fat binary became on one agent, set once by its first use there.
type AgentCell = OnceCell<RuntimeResult<Arc<LoadedFatBinary>>>;

/// A registered fat binary.
#[derive(Debug)]
pub struct FatBinary {
    id: u64,
    source: Source,
    /// False once unregistered: the bytes (in a library's image) may be gone, so no new first
    /// use may read them. Readers hold the read lock while they touch the bytes.
    alive: RwLock<bool>,
    prepared: OnceCell<RuntimeResult<Prepared>>,
    /// Per agent, allocated at the first use (registration allocates as little as possible).
    per_agent: OnceCell<Box<[AgentCell]>>,
    host_keys: Mutex<Vec<HostKey>>,
    managed: Mutex<Managed>,
}

/// The bytes of a fat binary once resolved.
#[derive(Debug, Clone)]
enum Bytes {
    Static(&'static [u8]),
    Owned(SharedBytes),
}

impl Bytes {
    fn get(&self) -> &[u8] {
        match self {
            Bytes::Static(b) => b,
            Bytes::Owned(b) => b,
        }
    }
}

#[derive(Debug)]
struct Prepared {
    bytes: Bytes,
    containers: Vec<PreparedContainer>,
}

#[derive(Debug)]
struct PreparedContainer {
    /// Offset in the fat binary's bytes.
    offset: u64,
    index: usize,
    bare_code_object: bool,
    compressed: bool,
    entries: Vec<EntryInfo<'static>>,
    /// Per agent: compatible entries, best first; or why none fits.
    ranked: Vec<Result<Vec<usize>, Arc<TargetError>>>,
    /// Distinct first choices across agents.
    first_choices: BTreeSet<usize>,
    extracted: Mutex<Extracted>,
}

#[derive(Debug, Default)]
struct Extracted {
    modules: HashMap<usize, Result<Module, Arc<crate::Error>>>,
    inflated: Option<Arc<Vec<u8>>>,
}

impl FatBinary {
    pub(crate) fn new(id: u64, source: Source) -> FatBinary {
        FatBinary {
            id,
            source,
            alive: RwLock::new(true),
            prepared: OnceCell::new(),
            per_agent: OnceCell::new(),
            host_keys: Mutex::new(Vec::new()),
            managed: Mutex::new(Managed::default()),
        }
    }

    /// The registration number (1, 2, ... in order of registration).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// A short description for messages: `fat binary #3 (wrapper 0x5555...)`.
    pub fn describe(&self) -> String {
        match &self.source {
            Source::Wrapper(w) => format!("fat binary #{} (HIPF wrapper {w:#x})", self.id),
            Source::Static(b) => format!(
                "fat binary #{} ({} bytes at {:p})",
                self.id,
                b.len(),
                b.as_ptr()
            ),
            Source::Owned(b) => format!("fat binary #{} ({} bytes, owned)", self.id, b.len()),
        }
    }

    /// The entry ids of every container (prepares the fat binary if needed).
    ///
    /// # Errors
    /// The preparation failure.
    pub fn entry_ids(
        &self,
        agents: &[Arc<dyn Agent>],
        options: &RuntimeOptions,
        stats: &Stats,
    ) -> RuntimeResult<Vec<Vec<String>>> {
        let p = self.prepared(agents, options, stats)?;
        Ok(p.containers
            .iter()
            .map(|c| c.entries.iter().map(|e| e.id.to_string()).collect())
            .collect())
    }

    pub(crate) fn add_host_key(&self, key: HostKey) {
        self.host_keys.lock().push(key);
    }

    /// Marks the fat binary unregistered and returns its host keys.
    pub(crate) fn retire(&self) -> Vec<HostKey> {
        *self.alive.write() = false;
        std::mem::take(&mut *self.host_keys.lock())
    }

    pub(crate) fn first_use_done(&self, device: usize) -> bool {
        self.per_agent
            .get()
            .and_then(|cells| cells.get(device))
            .is_some_and(|c| c.get().is_some())
    }

    pub(crate) fn loaded_if_done(&self, device: usize) -> Option<Arc<LoadedFatBinary>> {
        self.per_agent
            .get()?
            .get(device)?
            .get()?
            .as_ref()
            .ok()
            .cloned()
    }

    /// One cell per agent; the agent count is known only at first use (agents are
    /// discovered lazily, never at registration).
    fn cells(&self, agents: usize) -> &[AgentCell] {
        self.per_agent
            .get_or_init(|| (0..agents).map(|_| OnceCell::new()).collect())
    }

    pub(crate) fn add_managed(&self, name: &str, init: &[u8], align: usize) -> RuntimeResult<u64> {
        let align = align.max(1);
        let what = || format!("managed variable {name:?}");
        if !align.is_power_of_two() {
            return Err(RuntimeError::BadAlignment {
                what: what(),
                alignment: align,
            });
        }
        // With a power-of-two alignment, the layout fails only for a size that rounds up past
        // isize::MAX.
        let layout =
            std::alloc::Layout::from_size_align(init.len().max(1), align).map_err(|_| {
                RuntimeError::TooLarge {
                    what: what(),
                    size: init.len() as u64,
                    limit: (isize::MAX as u64).saturating_sub(align as u64 - 1),
                }
            })?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(RuntimeError::HostOutOfMemory {
                what: what(),
                size: init.len() as u64,
            });
        }
        // SAFETY: `ptr` has room for `init.len()` bytes and does not overlap `init`.
        unsafe { std::ptr::copy_nonoverlapping(init.as_ptr(), ptr, init.len()) };
        let address = ptr as u64;
        let mut managed = self.managed.lock();
        for loaded in managed.loaded.iter().filter_map(Weak::upgrade) {
            write_managed_pointer(&loaded, name, address, init.len() as u64);
        }
        managed
            .vars
            .push((name.into(), address, ManagedAlloc { ptr, layout }));
        Ok(address)
    }

    /// Loaded on agent `device`, loading at the first call (exactly once).
    pub(crate) fn loaded(
        &self,
        device: usize,
        agents: &[Arc<dyn Agent>],
        options: &RuntimeOptions,
        stats: &Stats,
        tools: &Arc<Tools>,
        context: Option<&Arc<DeviceContext>>,
    ) -> RuntimeResult<Arc<LoadedFatBinary>> {
        let invalid = RuntimeError::InvalidDevice {
            device: device as i64,
            count: agents.len(),
        };
        let cell = self
            .cells(agents.len())
            .get(device)
            .ok_or(invalid.clone())?;
        let agent = agents.get(device).ok_or(invalid)?;
        cell.get_or_init(|| {
            let _span = tracing::debug_span!("first use", fat_binary = self.id, agent = %agent.isa().isa_name()).entered();
            let mut result = self.load_on(device, agent, agents, options, stats, tools, context);
            if result.is_err() && !*self.alive.read() {
                // Unregistered while this first use read it: whatever failed, the cause is that.
                result = Err(self.unregistered());
            }
            match &result {
                Ok(l) => {
                    Stats::bump(&stats.loads);
                    tracing::debug!(kernels = l.kernel_count(), symbols = l.executable().symbols().len(), "loaded");
                }
                Err(e) => {
                    Stats::bump(&stats.load_failures);
                    tracing::debug!(error = %e, "first use failed");
                }
            }
            result
        })
        .clone()
    }

    /// Loads on `agent`, device `device` of `agents`.
    #[allow(clippy::too_many_arguments)]
    fn load_on(
        &self,
        device: usize,
        agent: &Arc<dyn Agent>,
        agents: &[Arc<dyn Agent>],
        options: &RuntimeOptions,
        stats: &Stats,
        tools: &Arc<Tools>,
        context: Option<&Arc<DeviceContext>>,
    ) -> RuntimeResult<Arc<LoadedFatBinary>> {
        let prepared = self.prepared(agents, options, stats)?;
        let mut modules = Vec::with_capacity(prepared.containers.len());
        for c in &prepared.containers {
            modules.push(self.module_for(prepared, c, device, agent.isa(), options, stats)?);
        }
        let mut linker = Linker::new();
        linker.policy(options.policy);
        let executable = linker
            .link(agent, &modules)
            .map_err(|e| self.load_error(e.into()))?;
        let loaded = Arc::new(LoadedFatBinary::new(
            self.id,
            device,
            executable,
            tools,
            context.cloned(),
        ));
        let mut managed = self.managed.lock();
        for (name, address, alloc) in &managed.vars {
            write_managed_pointer(&loaded, name, *address, alloc.layout.size() as u64);
        }
        managed.loaded.retain(|w| w.strong_count() > 0);
        managed.loaded.push(Arc::downgrade(&loaded));
        Ok(loaded)
    }

    fn load_error(&self, e: crate::Error) -> RuntimeError {
        RuntimeError::Load {
            fat_binary: self.describe(),
            source: Arc::new(e),
        }
    }

    fn unregistered(&self) -> RuntimeError {
        RuntimeError::Unregistered {
            fat_binary: self.describe(),
        }
    }

    fn prepared(
        &self,
        agents: &[Arc<dyn Agent>],
        options: &RuntimeOptions,
        stats: &Stats,
    ) -> RuntimeResult<&Prepared> {
        let _ = stats;
        self.prepared
            .get_or_init(|| self.prepare(agents, options))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn prepare(
        &self,
        agents: &[Arc<dyn Agent>],
        options: &RuntimeOptions,
    ) -> RuntimeResult<Prepared> {
        let alive = self.alive.read();
        if !*alive {
            return Err(self.unregistered());
        }
        let bytes = match &self.source {
            Source::Wrapper(w) => {
                // SAFETY: the registrant guarantees the wrapper and its binary stay mapped while
                // registered (checked above under the read lock); both are read through
                // process_vm_readv, so a bad pointer is an error, not a crash.
                let binary = unsafe {
                    crate::container::hipf::wrapper_binary(*w as *const std::ffi::c_void)
                }
                .map_err(|e| self.load_error(e.into()))?;
                // SAFETY: as above; the slice is only used while the fat binary is alive, under
                // the read lock.
                let slice = unsafe { crate::container::hipf::measure(binary, &options.read) }
                    .map_err(|e| self.load_error(e.into()))?;
                Bytes::Static(slice)
            }
            Source::Static(b) => Bytes::Static(b),
            Source::Owned(b) => Bytes::Owned(b.clone()),
        };
        let located =
            read_containers(bytes.get(), &options.read).map_err(|e| self.load_error(e.into()))?;
        if located.is_empty() {
            return Err(self.load_error(
                crate::container::ContainerError::UnknownFormat {
                    offset: 0,
                    head: "empty fat binary".into(),
                }
                .into(),
            ));
        }
        let mut containers = Vec::with_capacity(located.len());
        for l in &located {
            let entries: Vec<EntryInfo<'static>> = l
                .entries()
                .map_err(|e| self.load_error(e.into()))?
                .into_iter()
                .map(|e| EntryInfo {
                    id: Cow::Owned(e.id.into_owned()),
                    offset: e.offset,
                    size: e.size,
                })
                .collect();
            let ids: Vec<&str> = entries.iter().map(|e| e.id.as_ref()).collect();
            let bare_code_object = matches!(l.container, Container::CodeObject(_));
            let mut ranked = Vec::with_capacity(agents.len());
            let mut first_choices = BTreeSet::new();
            for agent in agents {
                if bare_code_object {
                    // No alternatives: the linker checks the code object against the agent.
                    ranked.push(Ok(vec![0]));
                    first_choices.insert(0);
                    continue;
                }
                let selection = select(agent.isa(), &ids, options.policy);
                if let Some(&first) = selection.ranked.first() {
                    first_choices.insert(first);
                    ranked.push(Ok(selection.ranked.clone()));
                } else {
                    ranked.push(Err(Arc::new(selection.no_match_error())));
                }
            }
            tracing::debug!(container = l.index, offset = l.offset, format = %l.container.format(), entries = entries.len(), distinct_choices = first_choices.len(), "prepared container");
            containers.push(PreparedContainer {
                offset: l.offset,
                index: l.index,
                bare_code_object,
                compressed: matches!(l.container, Container::Compressed(_)),
                entries,
                ranked,
                first_choices,
                extracted: Mutex::new(Extracted::default()),
            });
        }
        drop(alive);
        Ok(Prepared { bytes, containers })
    }

    /// The module agent `device` runs from container `c`: its best entry whose ELF header
    /// agrees, falling back along the ranking.
    fn module_for(
        &self,
        prepared: &Prepared,
        c: &PreparedContainer,
        device: usize,
        isa: &AgentIsa,
        options: &RuntimeOptions,
        stats: &Stats,
    ) -> RuntimeResult<Module> {
        let ranked = match &c.ranked[device] {
            Ok(r) => r,
            Err(explanation) => {
                tracing::debug!(container = c.index, "no compatible entry");
                return Err(RuntimeError::NoBinaryForAgent {
                    fat_binary: self.describe(),
                    source: explanation.clone(),
                });
            }
        };
        if c.bare_code_object {
            // No alternatives: the linker checks the code object against the agent.
            return self
                .entry_module(prepared, c, 0, options, stats)
                .map_err(|source| RuntimeError::Load {
                    fat_binary: self.describe(),
                    source,
                });
        }
        let _span = tracing::debug_span!("container", index = c.index).entered();
        let ids: Vec<&str> = c.entries.iter().map(|e| e.id.as_ref()).collect();
        first_loadable(ranked, &ids, isa, options.policy, |i| {
            self.entry_module(prepared, c, i, options, stats)
        })
        .map_err(|refusal| match refusal {
            EntryRefusal::Unusable(source) => RuntimeError::Load {
                fat_binary: self.describe(),
                source,
            },
            EntryRefusal::HeaderMismatch(e) => self.load_error(e.into()),
            EntryRefusal::NothingRanked => RuntimeError::NoBinaryForAgent {
                fat_binary: self.describe(),
                source: Arc::new(TargetError::NoCompatibleTarget {
                    agent: isa.isa_name(),
                    policy: options.policy,
                    candidates: Vec::new(),
                    hint: None,
                }),
            },
        })
    }

    /// Entry `i` of container `c` as a module, extracted at most once.
    fn entry_module(
        &self,
        prepared: &Prepared,
        c: &PreparedContainer,
        i: usize,
        options: &RuntimeOptions,
        stats: &Stats,
    ) -> Result<Module, Arc<crate::Error>> {
        let mut extracted = c.extracted.lock();
        if let Some(m) = extracted.modules.get(&i) {
            return m.clone();
        }
        let result = self
            .extract(prepared, c, i, &mut extracted, options, stats)
            .map_err(Arc::new);
        extracted.modules.insert(i, result.clone());
        if extracted.inflated.is_some()
            && c.first_choices
                .iter()
                .all(|k| extracted.modules.contains_key(k))
        {
            tracing::debug!(
                container = c.index,
                "every needed entry is out; dropping the inflated bundle"
            );
            extracted.inflated = None;
        }
        result
    }

    fn extract(
        &self,
        prepared: &Prepared,
        c: &PreparedContainer,
        i: usize,
        extracted: &mut Extracted,
        options: &RuntimeOptions,
        stats: &Stats,
    ) -> Result<Module, crate::Error> {
        let entry = &c.entries[i];
        let source = ModuleSource::Memory {
            label: format!("fat binary #{} container {} {}", self.id, c.index, entry.id),
        };
        if c.compressed && c.first_choices.len() > 1 {
            // Several agents need different entries: inflate once, cut each from it.
            let inflated = match &extracted.inflated {
                Some(b) => b.clone(),
                None => {
                    let b =
                        Arc::new(self.with_container(prepared, c, options, |container| {
                            match container {
                                Container::Compressed(cb) => {
                                    cb.inflate().map_err(crate::Error::from)
                                }
                                _ => Err(crate::loader::LoadError::Backend {
                                    op: "inflate",
                                    message: "container is not compressed".into(),
                                }
                                .into()),
                            }
                        })??);
                    Stats::bump(&stats.full_inflations);
                    tracing::debug!(
                        container = c.index,
                        size = b.len(),
                        "inflated whole compressed bundle for several agents"
                    );
                    extracted.inflated = Some(b.clone());
                    b
                }
            };
            let bundle = Bundle::parse_with(&inflated, &options.read.limits)?;
            let e = bundle.entries().get(i).ok_or_else(|| {
                crate::container::ContainerError::EntryNotFound {
                    wanted: entry.id.to_string(),
                    available: Vec::new(),
                }
            })?;
            // Copied (fallibly): the module must not keep every other agent's entry alive.
            let bytes = into_shared(Cow::Borrowed(bundle.entry_data(e)))?;
            Stats::bump(&stats.extractions);
            return Ok(Module::new(bytes, source)?);
        }
        // One entry needed: stream it (a compressed bundle inflates up to the entry's end).
        // Inflated bytes move into the module; bytes the runtime owns are shared in place;
        // bytes of a library image are copied, since the image may be unmapped later.
        let bytes = self.with_container(prepared, c, options, |container| {
            let data = container.extract_with(i, &options.read.limits)?;
            match (&prepared.bytes, &data) {
                (Bytes::Owned(owner), Cow::Borrowed(b)) => {
                    Ok(share_range(owner, b).map_or_else(|| into_shared(Cow::Borrowed(b)), Ok)?)
                }
                _ => into_shared(data),
            }
        })?;
        let bytes: SharedBytes = bytes.map_err(crate::Error::from)?;
        Stats::bump(&stats.extractions);
        tracing::debug!(container = c.index, entry = %entry.id, size = bytes.len(), "extracted entry");
        Ok(Module::new(bytes, source)?)
    }

    /// Runs `f` on container `c`, re-parsed from the fat binary's bytes while they are known
    /// to be mapped (under the read lock of `alive`).
    fn with_container<R>(
        &self,
        prepared: &Prepared,
        c: &PreparedContainer,
        options: &RuntimeOptions,
        f: impl FnOnce(&Container<'_>) -> R,
    ) -> Result<R, crate::Error> {
        let alive = self.alive.read();
        if !*alive {
            return Err(crate::loader::LoadError::Backend {
                op: "extract",
                message: format!("{} was unregistered", self.describe()),
            }
            .into());
        }
        let data = prepared.bytes.get().get(c.offset as usize..).unwrap_or(&[]);
        let container = Container::parse(data, &options.read).map_err(|e| e.rebase(c.offset))?;
        Ok(f(&container))
    }
}

/// Points the device variable `name` (a pointer, as clang emits managed variables) at the
/// managed memory (`size` bytes of host memory), after the executable is frozen. The backend
/// writes the address its agent uses for that memory: the host address itself on the software
/// agent; on ROCr's agents the memory is locked (`hsa_amd_memory_lock`) and the agent's address
/// for it is written with `hsa_memory_copy`.
fn write_managed_pointer(loaded: &LoadedFatBinary, name: &str, address: u64, size: u64) {
    let Some(symbol) = loaded.executable().symbol(name) else {
        tracing::debug!(
            name,
            "managed variable has no device pointer in the loaded code"
        );
        return;
    };
    if symbol.size < 8 {
        tracing::debug!(
            name,
            size = symbol.size,
            "managed variable's device pointer is smaller than a pointer; not written"
        );
        return;
    }
    if symbol.class != SymbolClass::Variable {
        tracing::debug!(
            name,
            class = %symbol.class,
            "managed variable's device pointer is not a variable; not written"
        );
        return;
    }
    match loaded
        .executable()
        .publish_host_memory(symbol.address, address, size)
    {
        Ok(written) => tracing::debug!(
            name,
            device_variable = format_args!("{:#x}", symbol.address),
            managed = format_args!("{address:#x}"),
            agent_address = format_args!("{written:#x}"),
            "managed variable pointer written"
        ),
        Err(e) => tracing::debug!(name, error = %e, "managed variable pointer not written"),
    }
}

/// `part` as a sub-range of `owner` when it lies inside it: shared, not copied.
fn share_range(owner: &SharedBytes, part: &[u8]) -> Option<SharedBytes> {
    let start = (part.as_ptr() as usize).checked_sub(owner.as_ptr() as usize)?;
    owner.slice(start..start.checked_add(part.len())?)
}
