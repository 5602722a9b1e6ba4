//! The runtime a HIP-style program uses: a registry of fat binaries, kernels and device
//! variables, loaded lazily per agent, plus a module API for code loaded at run time.
//!
//! What it is for:
//! - registration in O(1) (`__hipRegisterFatBinary` records a pointer; nothing is read, measured
//!   or inflated), which never fails hard: a bad fat binary is reported at its first use;
//! - first use of a fat binary on an agent (a kernel or variable lookup, a device-function
//!   lookup) selects, extracts, loads and links it exactly once, however many threads arrive
//!   together (one once-cell per fat binary and agent);
//! - entries of one compressed bundle needed by several agents are inflated once (see
//!   [`fat_binary`] for the policy);
//! - loaded code is owned through `Arc`s: unregistering a fat binary (e.g. at `dlclose`) drops
//!   the registry's reference, and code stays alive while any [`KernelRef`], [`Module`] or
//!   C handle still uses it.
//!
//! What it is not: it runs no kernels and copies no memory yet, and it holds no
//! C types: the C ABI over it lives in `crate::capi`.
//!
//! Agents are `Arc<dyn Agent>`; device ordinal `i` is the `i`-th agent given to
//! [`Runtime::new`]. The process-wide runtime ([`Runtime::global`]) uses the agents named by
//! the environment ([`agents_from_env`]).

use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use once_cell::sync::OnceCell;

use crate::container::ReadOptions;
use crate::device::{Device, ExplicitArgs};
use crate::loader::{Agent, LoadedSymbol, SymbolClass};
use crate::target::Policy;

pub mod buffer;
pub mod config;
mod device;
pub mod fat_binary;
pub mod hostcall;
mod kernel;
mod launch;
mod memory;
pub mod occupancy;
mod printf;
pub mod stream;
pub mod tools;

pub use buffer::{DeviceBuffer, DeviceCopy};
pub use device::DeviceContext;
pub use fat_binary::FatBinary;
pub use kernel::{KernelRef, LoadedFatBinary};
pub use launch::{
    ArgValue, DevicePtr, KernelArg, LaunchBuilder, LaunchConfig, DYNAMIC_STACK_BYTES,
    MAX_BLOCK_SIZE, MAX_LDS,
};
pub use memory::PointerInfo;
pub use stream::{Event, Stream, StreamKind};
pub use tools::{CodeObjectEvent, DispatchEvent, Tool, ToolId, ToolSymbol, Tools};

/// When registered fat binaries are loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Loading {
    /// At first use on each agent (the default).
    #[default]
    Lazy,
    /// At registration, on every agent (for comparison and for tools); failures are recorded
    /// and reported at use, as in lazy mode.
    Eager,
}

impl Loading {
    /// Parses `lazy` or `eager` (case-insensitive); `None` for anything else.
    pub fn parse(text: &str) -> Option<Loading> {
        match text.trim().to_ascii_lowercase().as_str() {
            "lazy" | "" => Some(Loading::Lazy),
            "eager" => Some(Loading::Eager),
            _ => None,
        }
    }
}

/// How a runtime reads, selects and loads.
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// Lazy or eager loading.
    pub loading: Loading,
    /// ISA compatibility policy for selection and linking.
    pub policy: Policy,
    /// Container reading options (size caps, hash checking).
    pub read: ReadOptions,
}

/// A runtime failure. Cheap to clone (load failures are cached and reported to every caller).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The device ordinal names no agent.
    #[error("invalid device {device}: the runtime has {count} device(s)")]
    InvalidDevice {
        /// The ordinal given.
        device: i64,
        /// How many agents there are.
        count: usize,
    },
    /// The runtime has no agent at all.
    #[error("no device: {reason}")]
    NoDevice {
        /// Why (e.g. an invalid `ROCLOAD_SOFT_ISA`).
        reason: String,
    },
    /// No entry of the fat binary can run on the agent; the source is the target layer's
    /// explanation (every entry with the reason it was refused, and a hint).
    #[error("{fat_binary}: {source}")]
    NoBinaryForAgent {
        /// The fat binary, described.
        fat_binary: String,
        /// The explanation.
        source: Arc<crate::target::TargetError>,
    },
    /// The fat binary could not be read, or its code could not be loaded or linked.
    #[error("{fat_binary}: {source}")]
    Load {
        /// The fat binary, described.
        fat_binary: String,
        /// What failed.
        source: Arc<crate::Error>,
    },
    /// The fat binary was unregistered before this first use.
    #[error("{fat_binary} was unregistered")]
    Unregistered {
        /// The fat binary, described.
        fat_binary: String,
    },
    /// A handle that is not (or no longer) known.
    #[error("invalid {what} handle {handle:#x}")]
    InvalidHandle {
        /// Which kind of handle.
        what: &'static str,
        /// Its value.
        handle: u64,
    },
    /// A host function pointer that was never registered as a kernel.
    #[error("host function {address:#x} is not a registered kernel")]
    UnknownFunction {
        /// The pointer.
        address: usize,
    },
    /// A host shadow pointer that was never registered as a device variable.
    #[error("host variable {address:#x} is not a registered device variable")]
    UnknownVariable {
        /// The pointer.
        address: usize,
    },
    /// A name the loaded code does not define.
    #[error("{kind} {name:?} not found in {place}")]
    NotFound {
        /// Kernel, function or variable.
        kind: &'static str,
        /// The name.
        name: String,
        /// Where it was looked for.
        place: String,
    },
    /// An argument that cannot be used.
    #[error("invalid value: {0}")]
    InvalidValue(String),
    /// A launch configuration the device cannot run (zero or oversized grid or block).
    #[error("invalid launch configuration: {0}")]
    InvalidConfiguration(String),
    /// Launch arguments that do not match the kernel's metadata.
    #[error(transparent)]
    Arguments(Box<crate::device::KernargError>),
    /// A device operation failed (allocation, copy, queue), with what was being done.
    #[error("device {device}: {what}: {error}")]
    Device {
        /// The device ordinal.
        device: usize,
        /// What the runtime was doing.
        what: String,
        /// The device's error.
        error: Box<crate::device::DeviceError>,
    },
    /// A kernel (or another step of a stream) failed on the device; sticky until the device is
    /// reset, as in HIP.
    #[error("device {device}: {error}")]
    KernelFailed {
        /// The device ordinal.
        device: usize,
        /// What happened, with the kernel, PC, lane and address.
        error: Arc<crate::device::ExecutionError>,
    },
    /// A cooperative launch with more work-groups than fit on the device at once.
    #[error("cooperative launch of {kernel}: {blocks} work-groups, at most {most} fit at once ({reason})")]
    CooperativeLaunchTooLarge {
        /// The kernel.
        kernel: String,
        /// Work-groups asked for.
        blocks: u64,
        /// Work-groups that fit.
        most: u64,
        /// What bounds them.
        reason: String,
    },
    /// A wait that ran out of time.
    #[error("{what}: not complete after {waited:?}")]
    Timeout {
        /// What was waited for.
        what: String,
        /// How long.
        waited: std::time::Duration,
    },
    /// Work that has not completed yet (`hipErrorNotReady`).
    #[error("not ready")]
    NotReady,
    /// The device's backend cannot do this (e.g. launches through ROCr).
    #[error("device {device}: {what} is not supported by this backend")]
    NotSupported {
        /// The device ordinal.
        device: usize,
        /// The operation.
        what: String,
    },
}

impl RuntimeError {
    /// The target layer's explanation, when this is a failed selection.
    pub fn selection_error(&self) -> Option<&crate::target::TargetError> {
        match self {
            RuntimeError::NoBinaryForAgent { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<crate::device::KernargError> for RuntimeError {
    fn from(e: crate::device::KernargError) -> Self {
        RuntimeError::Arguments(Box::new(e))
    }
}

/// Result with [`RuntimeError`].
pub type RuntimeResult<T> = Result<T, RuntimeError>;

/// A hasher for pointer keys: one multiply and a fold, so a registry lookup costs a few
/// nanoseconds instead of SipHash's ~20.
#[derive(Debug, Default, Clone, Copy)]
pub struct PointerHasher(u64);

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

/// Counters for tests and tools; each is the number of times the event happened.
#[derive(Debug, Default)]
pub struct Stats {
    registered: AtomicU64,
    loads: AtomicU64,
    load_failures: AtomicU64,
    full_inflations: AtomicU64,
    extractions: AtomicU64,
}

/// A snapshot of [`Stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StatsSnapshot {
    /// Fat binaries registered (wrappers, byte slices, modules).
    pub registered: u64,
    /// Successful loads of a fat binary on an agent.
    pub loads: u64,
    /// Failed first uses (each cached and reported to every later caller).
    pub load_failures: u64,
    /// Compressed bundles inflated whole (only when several agents need different entries).
    pub full_inflations: u64,
    /// Entries extracted (each entry of each container at most once).
    pub extractions: u64,
}

impl Stats {
    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        StatsSnapshot {
            registered: get(&self.registered),
            loads: get(&self.loads),
            load_failures: get(&self.load_failures),
            full_inflations: get(&self.full_inflations),
            extractions: get(&self.extractions),
        }
    }
}

/// Code loaded at run time through the module API (`hipModuleLoadData`), on one agent.
#[derive(Debug)]
pub struct Module {
    fat_binary: Arc<FatBinary>,
    loaded: Arc<LoadedFatBinary>,
    device: usize,
}

impl Module {
    /// The module's id in its runtime (never reused).
    pub fn id(&self) -> u64 {
        self.fat_binary.id()
    }

    /// The loaded code.
    pub fn loaded(&self) -> &Arc<LoadedFatBinary> {
        &self.loaded
    }

    /// The device ordinal it was loaded on.
    pub fn device(&self) -> usize {
        self.device
    }

    /// A kernel by raw or demangled name.
    ///
    /// # Errors
    /// [`RuntimeError::NotFound`] if the module has no such kernel.
    pub fn function(&self, name: &str) -> RuntimeResult<KernelRef> {
        KernelRef::find(&self.loaded, name).ok_or_else(|| RuntimeError::NotFound {
            kind: "kernel",
            name: name.into(),
            place: self.fat_binary.describe(),
        })
    }

    /// A variable (or any symbol) by name: its address and size.
    ///
    /// # Errors
    /// [`RuntimeError::NotFound`] if the module defines no such symbol.
    pub fn global(&self, name: &str) -> RuntimeResult<(u64, u64)> {
        self.loaded
            .executable()
            .symbol(name)
            .map(|s| (s.address, s.size))
            .ok_or_else(|| RuntimeError::NotFound {
                kind: "global",
                name: name.into(),
                place: self.fat_binary.describe(),
            })
    }
}

/// A registered fat binary, as returned by registration.
#[derive(Debug, Clone)]
pub struct FatBinaryHandle {
    fat_binary: Arc<FatBinary>,
}

impl FatBinaryHandle {
    /// The fat binary's id in its runtime: 1, 2, ... in order of registration, never reused,
    /// so a stale id never names a new fat binary.
    pub fn id(&self) -> u64 {
        self.fat_binary.id()
    }

    /// The fat binary.
    pub fn fat_binary(&self) -> &Arc<FatBinary> {
        &self.fat_binary
    }
}

/// A registry of fat binaries over a fixed set of agents.
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
/// Why no agent could be made (e.g. an invalid ISA in the environment).
pub fn agents_from_env() -> Result<Vec<Arc<dyn Agent>>, String> {
    config::Config::global()
        .agents()
        .map(|set| set.agents)
        .map_err(|e| e.to_string())
}

fn discover_from_env(tools: &Arc<Tools>) -> Result<Agents, String> {
    config::Config::global()
        .agents()
        .map(|set| Agents::new(set.agents, set.devices, tools))
        .map_err(|e| e.to_string())
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

    /// The instrumentation hooks: register a [`Tool`] to hear about code objects and
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

    /// Launches `kernel` with `config` and `args` on `stream` (default: the null stream of the
    /// kernel's device).
    ///
    /// # Errors
    /// A bad configuration or arguments, the device's sticky error, or a device failure.
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
    /// device at once ([`occupancy::blocks_per_cu`] times the compute units).
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
        let block: u64 = config.block.iter().map(|&b| u64::from(b)).product();
        // Saturated: (2^32 - 1)^3 work-groups overflow a u64, and are too many anyway.
        let blocks: u64 = (0..3)
            .map(|d| u64::from(config.grid[d]) + u64::from(config.partial[d] != 0))
            .fold(1, u64::saturating_mul);
        let (per_cu, limit) = occupancy::blocks_per_cu(
            kernel.info(),
            u32::try_from(block).unwrap_or(u32::MAX),
            u64::from(config.dynamic_lds),
        );
        let most = u64::from(per_cu) * u64::from(ctx.device().compute_units());
        if blocks > most {
            return Err(RuntimeError::CooperativeLaunchTooLarge {
                kernel: kernel.info().name.clone(),
                blocks,
                most,
                reason: format!("{per_cu} work-groups per compute unit ({limit:?} bound)"),
            });
        }
        launch::launch_with(&stream, kernel, config, args, true)
    }

    /// Every device context (`None` where the backend cannot run kernels).
    pub fn devices(&self) -> &[Option<Arc<DeviceContext>>] {
        self.discovered().map_or(&[], |a| a.contexts.as_slice())
    }

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
        FatBinaryHandle { fat_binary: fat }
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
    /// [`RuntimeError::InvalidHandle`], or [`RuntimeError::InvalidValue`] for a bad size or
    /// alignment.
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
        fat.loaded(
            device,
            self.agents(),
            &self.options,
            &self.stats,
            &self.tools,
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
                if m.device == device {
                    if let Some(s) = consider(&m.loaded) {
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
        let module = Arc::new(Module {
            fat_binary: fat,
            loaded,
            device,
        });
        self.modules.insert(id, module.clone());
        tracing::debug!(id, device, "module loaded");
        Ok(module)
    }

    /// The module behind a raw handle (the `Arc`'s address).
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

    /// Unloads a module: the runtime forgets it; its code lives on while handles use it.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidHandle`] for an unknown or already unloaded module.
    pub fn unload_module(&self, id: u64) -> RuntimeResult<()> {
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
