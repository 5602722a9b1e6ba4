//! The runtime's registry: fat binaries, kernels and device variables registered by host
//! pointer, modules loaded at run time, the agents and their device contexts, and the launch
//! entry points. Lookups on the hot path (a kernel by host pointer) are a sharded map read and
//! a once-cell read.
//!
//! Not for what loading does (the fat-binary module), launches themselves (the launch module)
//! or memory (the memory module).

use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use once_cell::sync::OnceCell;

use super::device::DeviceContext;
use super::fat_binary::{self, FatBinary};
use super::kernel::{KernelRef, LoadedFatBinary};
use super::launch::{self, LaunchConfig};
use super::module::{FatBinaryHandle, Module};
use super::stats::{Stats, StatsSnapshot};
use super::stream::Stream;
use super::tools::Tools;
use super::{config, Loading, RuntimeError, RuntimeOptions, RuntimeResult};
use crate::device::{Device, ExplicitArgs};
use crate::loader::{Agent, LoadedSymbol, SymbolClass};

/// A hasher for pointer keys: one multiply and a fold, so a registry lookup costs a few
/// nanoseconds instead of SipHash's ~20.
#[derive(Debug, Default, Clone, Copy)]
struct PointerHasher(u64);

impl Hasher for PointerHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        let h = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type PtrMap<V> = DashMap<usize, V, BuildHasherDefault<PointerHasher>>;
type IdMap<V> = DashMap<u64, V, BuildHasherDefault<PointerHasher>>;

fn ptr_map<K: Eq + std::hash::Hash, V>() -> DashMap<K, V, BuildHasherDefault<PointerHasher>> {
    // Sized for a large program's registrations, so start-up does not rehash repeatedly.
    DashMap::with_capacity_and_hasher(1024, BuildHasherDefault::default())
}

/// A kernel registered with `__hipRegisterFunction`: its fat binary, its name, and the
/// resolved kernel per agent (filled at first lookup).
#[derive(Debug)]
struct RegisteredFunction {
    fat_binary: Arc<FatBinary>,
    name: Box<str>,
    /// One cell per agent, allocated at the first lookup.
    resolved: OnceCell<Box<[OnceCell<RuntimeResult<KernelRef>>]>>,
}

/// A device variable registered with `__hipRegisterVar` / `__hipRegisterManagedVar`.
#[derive(Debug)]
struct RegisteredVariable {
    fat_binary: Arc<FatBinary>,
    name: Box<str>,
    size: u64,
}
/// A registry of fat binaries over a fixed set of agents, and the devices that run their
/// kernels.
///
/// # Examples
///
/// Registration reads nothing; the first lookup of a kernel loads the fat binary on that
/// device, once:
///
/// ```
/// use std::sync::Arc;
///
/// use rocload::backend::SoftAgent;
/// use rocload::runtime::{Runtime, RuntimeError, RuntimeOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = SoftAgent::new("gfx1030".parse()?).device();
/// let rt = Runtime::with_devices(vec![agent], RuntimeOptions::default());
///
/// // clang's fat binary for `vadd.hip`, as `__hipRegisterFatBinary` would hand it over.
/// let bytes = std::fs::read(concat!(
///     env!("CARGO_MANIFEST_DIR"),
///     "/tests/fixtures/hip/vadd.hip_fatbin"
/// ))?;
/// let fat = rt.register_bytes(bytes);
/// // The host stub's address stands for the kernel, as in `__hipRegisterFunction`.
/// let stub = 0x1000;
/// rt.register_function(fat.id(), stub, "vadd")?;
/// assert!(!rt.is_loaded(fat.id(), 0));
///
/// let kernel = rt.kernel(stub, 0)?;
/// assert_eq!(kernel.info().name, "vadd");
/// assert!(rt.is_loaded(fat.id(), 0));
/// rt.kernel(stub, 0)?;
/// assert_eq!(rt.stats().loads, 1);
///
/// // A pointer that was never registered is a typed error.
/// assert!(matches!(
///     rt.kernel(0x2000, 0),
///     Err(RuntimeError::UnknownFunction { address: 0x2000 })
/// ));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Runtime {
    /// The agents, or why there are none. Discovered at the first device query, never at
    /// registration: choosing a backend may open ROCr and call `hsa_init`, which has no place
    /// in a host program's static constructors.
    agents: OnceCell<AgentsOrReason>,
    discover: fn(&Arc<Tools>) -> Result<Agents, String>,
    options: RuntimeOptions,
    fat_binaries: IdMap<Arc<FatBinary>>,
    functions: PtrMap<Arc<RegisteredFunction>>,
    variables: PtrMap<Arc<RegisteredVariable>>,
    modules: IdMap<Arc<Module>>,
    next_id: AtomicU64,
    stats: Arc<Stats>,
    tools: Arc<Tools>,
    /// Flags, sync-memops and managed-memory hints recorded per allocation.
    pub(crate) attributes: Arc<super::attributes::AllocationAttributes>,
    /// Virtual memory management: allocation handles, reservations, mappings.
    pub(crate) vmm: super::vmm::VmmState,
    /// Which device allocated each live pinned or managed allocation (every device's table
    /// records them; only the allocator can free them).
    pub(crate) shared_owners: parking_lot::Mutex<std::collections::HashMap<u64, usize>>,
    /// The memory the program allocated through HIP's allocation calls (`hipMalloc`,
    /// `hipMallocPitch`, `hipHostMalloc`, `hipMallocManaged`...), live, with the device it was
    /// allocated for: what `hipDeviceReset` frees (not the runtime's own device memory).
    pub(crate) program_memory: parking_lot::Mutex<std::collections::HashMap<u64, usize>>,
}

static GLOBAL: OnceCell<Runtime> = OnceCell::new();

/// The agents of a runtime and, for those that run kernels, their device contexts.
#[derive(Debug)]
struct Agents {
    agents: Vec<Arc<dyn Agent>>,
    contexts: Vec<Option<Arc<DeviceContext>>>,
}

impl Agents {
    fn new(
        agents: Vec<Arc<dyn Agent>>,
        devices: Vec<Option<Arc<dyn Device>>>,
        tools: &Arc<Tools>,
    ) -> Agents {
        let contexts = devices
            .into_iter()
            .enumerate()
            .map(|(i, d)| d.map(|d| DeviceContext::new(i, d, tools.clone())))
            .collect();
        Agents { agents, contexts }
    }
}

/// The agents of a runtime, or why it has none.
type AgentsOrReason = Result<Agents, String>;

/// The agents named by the environment: `ROCLOAD_BACKEND` chooses ROCr's GPU agents or the
/// software agents (`ROCLOAD_SOFT_ISA`, default gfx1030); see [`config::Config::agents`].
///
/// # Errors
/// [`config::AgentsError`]: why no agent could be made (e.g. an invalid ISA in the
/// environment, or a backend that cannot be opened).
pub fn agents_from_env() -> Result<Vec<Arc<dyn Agent>>, config::AgentsError> {
    config::Config::global().agents().map(|set| set.agents)
}

fn discover_from_env(tools: &Arc<Tools>) -> Result<Agents, String> {
    let set = config::Config::global()
        .agents()
        .map_err(|e| e.to_string())?;
    let (mut agents, mut devices) = (set.agents, set.devices);
    // The visible-device lists are read now, at the first device use, as HIP reads them when
    // it initialises: a program, or a child it forked, may set them until then.
    let now = config::Config::from_env();
    // ROCr applies its own variable to its agents; the software agents stand for ROCr's GPU
    // agents, so it applies to them here. HIP's list then picks among what is left.
    let mut lists = Vec::new();
    if set.hsa_agents.is_empty() {
        lists.extend(
            now.rocr_visible_devices
                .as_deref()
                .map(|l| (config::ROCR_VISIBLE_DEVICES_ENV, l)),
        );
    }
    lists.extend(
        now.visible_devices
            .as_deref()
            .map(|l| ("HIP_VISIBLE_DEVICES", l)),
    );
    for (var, list) in lists {
        let keep = config::visible(list, agents.len());
        tracing::debug!(var, list, ?keep, of = agents.len(), "visible devices");
        if keep.is_empty() {
            return Err(format!(
                "{var}={list:?} leaves none of the {} device(s) visible",
                agents.len()
            ));
        }
        agents = keep
            .iter()
            .filter_map(|&i| agents.get(i).cloned())
            .collect();
        devices = keep
            .iter()
            .filter_map(|&i| devices.get(i).cloned())
            .collect();
    }
    Ok(Agents::new(agents, devices, tools))
}

impl Runtime {
    /// A runtime over `agents` (device `i` is `agents[i]`) that loads code but runs none.
    pub fn new(agents: Vec<Arc<dyn Agent>>, options: RuntimeOptions) -> Runtime {
        let devices = agents.iter().map(|_| None).collect();
        Runtime::over(agents, devices, options)
    }

    /// A runtime over `devices` (device `i` is `devices[i]`) that loads and runs code.
    pub fn with_devices(devices: Vec<Arc<dyn Device>>, options: RuntimeOptions) -> Runtime {
        let agents = devices
            .iter()
            .map(|d| d.clone() as Arc<dyn Agent>)
            .collect();
        let devices = devices.into_iter().map(Some).collect();
        Runtime::over(agents, devices, options)
    }

    fn over(
        agents: Vec<Arc<dyn Agent>>,
        devices: Vec<Option<Arc<dyn Device>>>,
        options: RuntimeOptions,
    ) -> Runtime {
        let tools = Arc::new(Tools::default());
        let agents = if agents.is_empty() {
            Err("the runtime was given no agents".to_string())
        } else {
            Ok(Agents::new(agents, devices, &tools))
        };
        Runtime {
            agents: OnceCell::with_value(agents),
            discover: |_| Err("no agents".to_string()),
            options,
            fat_binaries: ptr_map(),
            functions: ptr_map(),
            variables: ptr_map(),
            modules: ptr_map(),
            next_id: AtomicU64::new(1),
            stats: Arc::new(Stats::default()),
            tools,
            attributes: Arc::default(),
            vmm: super::vmm::VmmState::default(),
            shared_owners: Default::default(),
            program_memory: Default::default(),
        }
    }

    /// The process-wide runtime, created at first call from the environment
    /// ([`agents_from_env`], [`config::Config::runtime_options`]). Never fails: without agents,
    /// device queries report why.
    pub fn global() -> &'static Runtime {
        GLOBAL.get_or_init(|| {
            let options = config::Config::global().runtime_options();
            tracing::debug!(loading = ?options.loading, policy = %options.policy, "global runtime created; agents are chosen at first use");
            Runtime {
                agents: OnceCell::new(),
                discover: discover_from_env,
                ..Runtime::new(Vec::new(), options)
            }
        })
    }

    /// The agents and device contexts, discovered on the first call.
    fn discovered(&self) -> Result<&Agents, &str> {
        self.agents
            .get_or_init(|| {
                let found = (self.discover)(&self.tools);
                match &found {
                    Ok(a) => tracing::debug!(agents = a.agents.len(), "agents chosen"),
                    Err(reason) => tracing::debug!(%reason, "no agent"),
                }
                found
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// The instrumentation hooks: register a [`Tool`](super::Tool) to hear about code objects and
    /// dispatches.
    pub fn tools(&self) -> &Arc<Tools> {
        &self.tools
    }

    /// The agents, discovered on the first call.
    fn agent_list(&self) -> Result<&[Arc<dyn Agent>], &str> {
        self.discovered().map(|a| a.agents.as_slice())
    }

    /// Device `device`'s context, for launches, memory and streams.
    ///
    /// # Errors
    /// [`RuntimeError::NoDevice`], [`RuntimeError::InvalidDevice`], or
    /// [`RuntimeError::NotSupported`] when the device's backend cannot run kernels.
    pub fn device(&self, device: i64) -> RuntimeResult<&Arc<DeviceContext>> {
        let index = self.device_index(device)?;
        let agents = self.discovered().map_err(|reason| RuntimeError::NoDevice {
            reason: reason.to_string(),
        })?;
        agents.contexts[index]
            .as_ref()
            .ok_or_else(|| RuntimeError::NotSupported {
                device: index,
                what: "running kernels".into(),
            })
    }

    /// Launches `kernel` with `config` and `args` on `stream` (default: this runtime's null
    /// stream of the kernel's device).
    ///
    /// # Errors
    /// [`RuntimeError::WrongDevice`] when the stream is not of the device context the kernel was
    /// loaded in (another device, or another runtime); a bad configuration or arguments, the
    /// device's sticky error, or a device failure.
    pub fn launch(
        &self,
        kernel: &KernelRef,
        config: &LaunchConfig,
        args: ExplicitArgs<'_>,
        stream: Option<&Stream>,
    ) -> RuntimeResult<()> {
        let stream = match stream {
            Some(s) => s.clone(),
            None => self
                .device(kernel.loaded().device() as i64)?
                .null_stream()?,
        };
        launch::launch(&stream, kernel, config, args)
    }

    /// Launches `kernel` cooperatively: every work-group resident at once, so grid-wide
    /// barriers work (`hipLaunchCooperativeKernel`). The grid may not exceed what fits on the
    /// device at once ([`super::occupancy::blocks_per_cu`] times the compute units).
    ///
    /// # Errors
    /// [`RuntimeError::CooperativeLaunchTooLarge`], and as [`launch`](Self::launch).
    pub fn launch_cooperative(
        &self,
        kernel: &KernelRef,
        config: &LaunchConfig,
        args: ExplicitArgs<'_>,
        stream: Option<&Stream>,
    ) -> RuntimeResult<()> {
        let stream = match stream {
            Some(s) => s.clone(),
            None => self
                .device(kernel.loaded().device() as i64)?
                .null_stream()?,
        };
        let ctx = stream.context()?;
        launch::check_cooperative(&ctx, kernel, config)?;
        launch::launch_with(&stream, kernel, config, args, launch::Cooperation::Grid)
    }

    /// Every device context (`None` where the backend cannot run kernels).
    pub fn devices(&self) -> &[Option<Arc<DeviceContext>>] {
        self.discovered().map_or(&[], |a| a.contexts.as_slice())
    }
}

impl Runtime {
    /// The agents, in device order.
    pub fn agents(&self) -> &[Arc<dyn Agent>] {
        self.agent_list().unwrap_or(&[])
    }

    /// The options in force.
    pub fn options(&self) -> &RuntimeOptions {
        &self.options
    }

    /// Event counters.
    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    /// The agent for device ordinal `device`.
    ///
    /// # Errors
    /// [`RuntimeError::NoDevice`] without agents, [`RuntimeError::InvalidDevice`] out of range.
    pub fn agent(&self, device: i64) -> RuntimeResult<&Arc<dyn Agent>> {
        let agents = self.agent_list().map_err(|reason| RuntimeError::NoDevice {
            reason: reason.to_string(),
        })?;
        usize::try_from(device)
            .ok()
            .and_then(|d| agents.get(d))
            .ok_or(RuntimeError::InvalidDevice {
                device,
                count: agents.len(),
            })
    }

    fn device_index(&self, device: i64) -> RuntimeResult<usize> {
        self.agent(device).map(|_| device as usize)
    }

    fn register(&self, source: fat_binary::Source) -> FatBinaryHandle {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let fat = Arc::new(FatBinary::new(id, source));
        self.fat_binaries.insert(id, fat.clone());
        Stats::bump(&self.stats.registered);
        tracing::debug!(id, source = %fat.describe(), "registered fat binary");
        if self.options.loading == Loading::Eager {
            for device in 0..self.agents().len() {
                // Failures are cached in the fat binary and reported at use.
                let _ = self.loaded(&fat, device);
            }
        }
        FatBinaryHandle::new(fat)
    }

    /// Registers the fat binary behind a `HIPF` wrapper, reading nothing: O(1). A bad wrapper
    /// still registers; its first use reports the error.
    ///
    /// # Safety
    /// `wrapper` must stay valid (mapped, unmodified) until the fat binary is unregistered,
    /// as clang's wrappers in a loaded image do. It is read with `process_vm_readv` at first
    /// use, so an unmapped wrapper is an error, not a crash.
    pub unsafe fn register_wrapper(&self, wrapper: *const std::ffi::c_void) -> FatBinaryHandle {
        self.register(fat_binary::Source::Wrapper(wrapper as usize))
    }

    /// Registers fat-binary bytes that live for the whole program (O(1), nothing read).
    pub fn register_static(&self, bytes: &'static [u8]) -> FatBinaryHandle {
        self.register(fat_binary::Source::Static(bytes))
    }

    /// Registers owned fat-binary bytes (O(1), nothing read; a `Vec<u8>` moves in uncopied).
    pub fn register_bytes(&self, bytes: impl Into<crate::SharedBytes>) -> FatBinaryHandle {
        self.register(fat_binary::Source::Owned(bytes.into()))
    }

    /// The fat binary behind a raw handle.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidHandle`] if the handle is unknown or unregistered.
    pub fn fat_binary(&self, id: u64) -> RuntimeResult<Arc<FatBinary>> {
        self.fat_binaries
            .get(&id)
            .map(|f| f.clone())
            .ok_or(RuntimeError::InvalidHandle {
                what: "fat binary",
                handle: id,
            })
    }

    /// Records that host pointer `host_function` launches kernel `name` of the fat binary.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidHandle`] for an unknown handle.
    pub fn register_function(
        &self,
        id: u64,
        host_function: usize,
        name: &str,
    ) -> RuntimeResult<()> {
        let fat = self.fat_binary(id)?;
        let resolved = OnceCell::new();
        fat.add_host_key(fat_binary::HostKey::Function(host_function));
        self.functions.insert(
            host_function,
            Arc::new(RegisteredFunction {
                fat_binary: fat,
                name: name.into(),
                resolved,
            }),
        );
        tracing::debug!(
            host_function = format_args!("{host_function:#x}"),
            name,
            "registered kernel"
        );
        Ok(())
    }

    /// Records that host shadow `shadow` stands for device variable `name` of `size` bytes.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidHandle`] for an unknown handle.
    pub fn register_variable(
        &self,
        id: u64,
        shadow: usize,
        name: &str,
        size: u64,
    ) -> RuntimeResult<()> {
        let fat = self.fat_binary(id)?;
        fat.add_host_key(fat_binary::HostKey::Variable(shadow));
        self.variables.insert(
            shadow,
            Arc::new(RegisteredVariable {
                fat_binary: fat,
                name: name.into(),
                size,
            }),
        );
        tracing::debug!(
            shadow = format_args!("{shadow:#x}"),
            name,
            size,
            "registered device variable"
        );
        Ok(())
    }

    /// Registers a managed variable: allocates `size` bytes aligned to `align` (host memory,
    /// which the software agent shares), copies `init` into it, and returns the address for
    /// the host's pointer. On every agent the fat binary is (or will be) loaded on, the
    /// device variable `name` (a pointer) is set to that address. The variable is also
    /// registered under `shadow` for symbol queries.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidHandle`]; [`RuntimeError::BadAlignment`],
    /// [`RuntimeError::TooLarge`] or [`RuntimeError::HostOutOfMemory`] when the variable cannot
    /// be allocated.
    pub fn register_managed_variable(
        &self,
        id: u64,
        shadow: usize,
        name: &str,
        init: &[u8],
        align: usize,
    ) -> RuntimeResult<u64> {
        let fat = self.fat_binary(id)?;
        let address = fat.add_managed(name, init, align)?;
        fat.add_host_key(fat_binary::HostKey::Variable(shadow));
        self.variables.insert(
            shadow,
            Arc::new(RegisteredVariable {
                fat_binary: fat,
                name: name.into(),
                size: init.len() as u64,
            }),
        );
        tracing::debug!(
            shadow = format_args!("{shadow:#x}"),
            name,
            size = init.len(),
            address = format_args!("{address:#x}"),
            "registered managed variable"
        );
        Ok(address)
    }

    /// Unregisters a fat binary and everything registered under it. Code already loaded stays
    /// alive while any [`KernelRef`] or module still uses it; no new first use can happen.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidHandle`] for an unknown or already unregistered handle.
    pub fn unregister(&self, id: u64) -> RuntimeResult<()> {
        let (_, fat) = self
            .fat_binaries
            .remove(&id)
            .ok_or(RuntimeError::InvalidHandle {
                what: "fat binary",
                handle: id,
            })?;
        for key in fat.retire() {
            match key {
                fat_binary::HostKey::Function(k) => {
                    self.functions
                        .remove_if(&k, |_, f| Arc::ptr_eq(&f.fat_binary, &fat));
                }
                fat_binary::HostKey::Variable(k) => {
                    self.variables
                        .remove_if(&k, |_, v| Arc::ptr_eq(&v.fat_binary, &fat));
                }
            }
        }
        tracing::debug!(id = fat.id(), "unregistered fat binary");
        Ok(())
    }

    /// The fat binary loaded on `device`: loads it on first use (exactly once, also under
    /// concurrency) and returns the cached result afterwards.
    fn loaded(&self, fat: &Arc<FatBinary>, device: usize) -> RuntimeResult<Arc<LoadedFatBinary>> {
        let context = self.devices().get(device).and_then(Option::as_ref);
        fat.loaded(
            device,
            self.agents(),
            &self.options,
            &self.stats,
            &self.tools,
            context,
        )
    }

    /// Loads a fat binary on a device now (the first use), or returns the cached result.
    ///
    /// # Errors
    /// The cached failure of the first use: [`RuntimeError::NoBinaryForAgent`],
    /// [`RuntimeError::Load`] or [`RuntimeError::Unregistered`].
    pub fn load(&self, id: u64, device: i64) -> RuntimeResult<Arc<LoadedFatBinary>> {
        let device = self.device_index(device)?;
        let fat = self.fat_binary(id)?;
        self.loaded(&fat, device)
    }

    /// Whether a fat binary has been loaded (or has failed) on a device: its first use happened.
    pub fn is_loaded(&self, id: u64, device: usize) -> bool {
        self.fat_binaries
            .get(&id)
            .is_some_and(|f| f.first_use_done(device))
    }

    /// The kernel registered under host pointer `host_function`, on `device`: the hot path of
    /// every launch and attribute query (a sharded map read and a once-cell read after the
    /// first call).
    ///
    /// # Errors
    /// [`RuntimeError::UnknownFunction`], a device error, the fat binary's first-use failure,
    /// or [`RuntimeError::NotFound`] if the loaded code lacks the kernel.
    pub fn kernel(&self, host_function: usize, device: i64) -> RuntimeResult<KernelRef> {
        let device = self.device_index(device)?;
        let f = self
            .functions
            .get(&host_function)
            .map(|f| f.clone())
            .ok_or(RuntimeError::UnknownFunction {
                address: host_function,
            })?;
        let count = self.agents().len();
        f.resolved
            .get_or_init(|| (0..count).map(|_| OnceCell::new()).collect())
            .get(device)
            .ok_or(RuntimeError::InvalidDevice {
                device: device as i64,
                count,
            })?
            .get_or_init(|| {
                let loaded = self.loaded(&f.fat_binary, device)?;
                KernelRef::find(&loaded, &f.name).ok_or_else(|| RuntimeError::NotFound {
                    kind: "kernel",
                    name: f.name.to_string(),
                    place: f.fat_binary.describe(),
                })
            })
            .clone()
    }

    /// The kernel name registered under `host_function`, without loading anything.
    pub fn kernel_name(&self, host_function: usize) -> Option<String> {
        self.functions
            .get(&host_function)
            .map(|f| f.name.to_string())
    }

    /// Address and size on `device` of the variable registered under host shadow `shadow`.
    ///
    /// # Errors
    /// [`RuntimeError::UnknownVariable`], a device error, the first-use failure, or
    /// [`RuntimeError::NotFound`].
    pub fn variable(&self, shadow: usize, device: i64) -> RuntimeResult<(u64, u64)> {
        let device = self.device_index(device)?;
        let v = self
            .variables
            .get(&shadow)
            .map(|v| v.clone())
            .ok_or(RuntimeError::UnknownVariable { address: shadow })?;
        let loaded = self.loaded(&v.fat_binary, device)?;
        let s = loaded
            .executable()
            .symbol(&v.name)
            .filter(|s| s.class == SymbolClass::Variable)
            .ok_or_else(|| RuntimeError::NotFound {
                kind: "variable",
                name: v.name.to_string(),
                place: v.fat_binary.describe(),
            })?;
        if s.size != v.size {
            tracing::debug!(name = %v.name, registered = v.size, loaded = s.size, "registered and loaded sizes differ; reporting the loaded size");
        }
        Ok((s.address, s.size))
    }

    /// A device function (or, failing that, any symbol) by name across everything loaded on
    /// `device`: registered fat binaries and modules. When nothing loaded defines it, every
    /// registered fat binary not yet loaded on the device is loaded (a lookup is a first use),
    /// and the search repeats; fat binaries that cannot load are skipped.
    ///
    /// # Errors
    /// A device error, or [`RuntimeError::NotFound`].
    pub fn device_function(&self, name: &str, device: i64) -> RuntimeResult<LoadedSymbol> {
        let device = self.device_index(device)?;
        let search = |force: bool| -> Option<LoadedSymbol> {
            let mut fallback = None;
            let mut consider = |loaded: &LoadedFatBinary| -> Option<LoadedSymbol> {
                let s = loaded.executable().symbol(name)?;
                if s.class == SymbolClass::Function {
                    return Some(s.clone());
                }
                fallback.get_or_insert_with(|| s.clone());
                None
            };
            for m in self.modules.iter() {
                if m.device() == device {
                    if let Some(s) = consider(m.loaded()) {
                        return Some(s);
                    }
                }
            }
            let fats: Vec<Arc<FatBinary>> = self.fat_binaries.iter().map(|f| f.clone()).collect();
            for f in fats {
                let loaded = if force {
                    self.loaded(&f, device).ok()
                } else {
                    f.loaded_if_done(device)
                };
                if let Some(s) = loaded.and_then(|l| consider(&l)) {
                    return Some(s);
                }
            }
            fallback
        };
        search(false)
            .or_else(|| search(true))
            .ok_or_else(|| RuntimeError::NotFound {
                kind: "device function",
                name: name.into(),
                place: format!("the code loaded on device {device}"),
            })
    }

    /// Loads code at run time on `device` (module API): a code object, a bundle or a
    /// compressed bundle. The bytes are copied into the runtime.
    ///
    /// # Errors
    /// Any first-use failure of the bytes on that device.
    pub fn load_module(
        &self,
        bytes: impl Into<crate::SharedBytes>,
        device: i64,
    ) -> RuntimeResult<Arc<Module>> {
        let device = self.device_index(device)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let fat = Arc::new(FatBinary::new(id, fat_binary::Source::Owned(bytes.into())));
        Stats::bump(&self.stats.registered);
        let loaded = self.loaded(&fat, device)?;
        let module = Arc::new(Module::new(fat, loaded, device));
        self.modules.insert(id, module.clone());
        tracing::debug!(id, device, "module loaded");
        Ok(module)
    }

    /// The module behind a raw handle: its id ([`Module::id`]), never reused, so a stale handle
    /// names no module rather than a new one.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidHandle`] for an unknown or unloaded module.
    pub fn module(&self, id: u64) -> RuntimeResult<Arc<Module>> {
        self.modules
            .get(&id)
            .map(|m| m.clone())
            .ok_or(RuntimeError::InvalidHandle {
                what: "module",
                handle: id,
            })
    }

    /// Unloads a module: the runtime forgets it, after its device is idle (as `hipFree` waits:
    /// kernels of other modules may use its variables); its code lives on while handles use
    /// it, and its memory goes back to the host only after the dispatches running when it is
    /// freed have ended.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidHandle`] for an unknown or already unloaded module; a timeout
    /// waiting for the device.
    pub fn unload_module(&self, id: u64) -> RuntimeResult<()> {
        let module = self.module(id)?;
        if let Ok(ctx) = self.device(module.device() as i64) {
            ctx.synchronize_ignoring_errors()?;
        }
        self.modules
            .remove(&id)
            .map(|_| ())
            .ok_or(RuntimeError::InvalidHandle {
                what: "module",
                handle: id,
            })
    }

    /// Everything registered, for tools: (id, fat binary).
    pub fn fat_binaries(&self) -> Vec<(u64, Arc<FatBinary>)> {
        self.fat_binaries
            .iter()
            .map(|e| (*e.key(), e.value().clone()))
            .collect()
    }
}
