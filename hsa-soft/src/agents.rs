//! Agents and ISAs: one CPU agent (node 0, no ISA, no queues, owner of the system memory
//! pools) and one software GPU agent per entry of `ROCLOAD_SOFT_ISA` (comma-separated target
//! ids, default `gfx1030`; `ROCLOAD_OVERRIDE_GFX_VERSION` applies as for rocload's own
//! software agent), in that order, as ROCr lists CPUs before GPUs. Attribute values and types
//! follow ROCr's `CpuAgent::GetInfo`, `GpuAgent::GetInfo` and `Isa::GetInfo`; values that
//! describe hardware (clocks, cache sizes, chip id) are those of the software agent or fixed.

use std::ffi::c_void;
use std::sync::Arc;

use hsa_sys::*;
use rocload::backend::soft::{EmulatorOptions, SignalTable};
use rocload::backend::SoftAgent;
use rocload::device::{Device, HostFacts};
use rocload::runtime::config::Config;
use rocload::target::AgentIsa;

use crate::runtime::runtime;
use crate::util::{guard, handle, put, put_fixed_str, put_str, tag, unhandle, Status};

/// Largest queue a software GPU agent creates (`HSA_AGENT_INFO_QUEUE_MAX_SIZE`).
pub(crate) const QUEUE_MAX_SIZE: u32 = rocload::backend::soft::queue::MAX_QUEUE_PACKETS;
/// Smallest (`HSA_AGENT_INFO_QUEUE_MIN_SIZE`, ROCr's `minAqlSize_`).
pub(crate) const QUEUE_MIN_SIZE: u32 = 64;

/// What an agent is.
pub(crate) enum AgentKind {
    /// The host.
    Cpu {
        /// The CPU's model name.
        name: String,
    },
    /// A software GPU agent.
    Gpu {
        /// The agent that runs its work.
        soft: SoftAgent,
        /// Its ISA.
        isa: AgentIsa,
    },
}

/// One agent of the runtime.
pub(crate) struct AgentEntry {
    pub(crate) kind: AgentKind,
}

impl AgentEntry {
    pub(crate) fn gpu(&self) -> Option<(&SoftAgent, &AgentIsa)> {
        match &self.kind {
            AgentKind::Gpu { soft, isa } => Some((soft, isa)),
            AgentKind::Cpu { .. } => None,
        }
    }
}

/// The agents the environment names (see the module documentation).
pub(crate) fn discover(signals: &Arc<SignalTable>) -> Status<Vec<AgentEntry>> {
    let config = Config::global();
    let mut isas = config.soft_agent_isas().map_err(|e| {
        // ROCr prints nothing here, but nothing else would tell the user why.
        eprintln!("hsa-soft: {e}");
        HSA_STATUS_ERROR_INVALID_ISA_NAME
    })?;
    // ROCR_VISIBLE_DEVICES, as ROCr reads it at hsa_init: the GPU agents it keeps, in its order.
    if let Some(list) = Config::from_env().rocr_visible_devices {
        let keep = rocload::runtime::config::visible(&list, isas.len());
        tracing::debug!(list, ?keep, "ROCR_VISIBLE_DEVICES");
        isas = keep.iter().filter_map(|&i| isas.get(i).cloned()).collect();
    }
    let mut options: EmulatorOptions = config.emulator_options().map_err(|e| {
        eprintln!("hsa-soft: {e}");
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    })?;
    // ROCr's rules decide what is printed here (a memory fault without a system event
    // handler; queues.rs), not the executor's default.
    options.fault_reports = false;
    let mut agents = vec![AgentEntry {
        kind: AgentKind::Cpu {
            name: HostFacts::get().cpu_name.clone(),
        },
    }];
    for isa in isas {
        tracing::debug!(isa = %isa.isa_name(), "software GPU agent");
        agents.push(AgentEntry {
            kind: AgentKind::Gpu {
                soft: SoftAgent::with_options(isa, signals.clone(), &options),
                isa,
            },
        });
    }
    Ok(agents)
}

/// The handle of agent `index`.
pub(crate) fn agent_handle(index: usize) -> hsa_agent_t {
    hsa_agent_t {
        handle: handle(tag::AGENT, index as u64 + 1),
    }
}

/// The index of the agent `agent` names, or `HSA_STATUS_ERROR_INVALID_AGENT`.
pub(crate) fn agent_index(agent: hsa_agent_t, count: usize) -> Status<usize> {
    unhandle(tag::AGENT, agent.handle)
        .and_then(|v| usize::try_from(v).ok()?.checked_sub(1))
        .filter(|&i| i < count)
        .ok_or(HSA_STATUS_ERROR_INVALID_AGENT)
}

fn isa_index(isa: hsa_isa_t, agents: &[AgentEntry]) -> Status<usize> {
    unhandle(tag::ISA, isa.handle)
        .and_then(|v| usize::try_from(v).ok())
        .filter(|&i| agents.get(i).is_some_and(|a| a.gpu().is_some()))
        .ok_or(HSA_STATUS_ERROR_INVALID_ISA)
}

/// The extension mask of the system and of GPU agents (`HSA_SYSTEM_INFO_EXTENSIONS`,
/// `HSA_AGENT_INFO_EXTENSIONS`): the AMD profiler, which ROCr always sets, and images, which
/// ROCr sets when its image library is loaded (`crate::images` is that library here). No AQL
/// profile library, no finalizer.
pub(crate) fn extension_mask() -> [u8; 128] {
    let mut mask = [0u8; 128];
    for bit in [HSA_EXTENSION_AMD_PROFILER, HSA_EXTENSION_IMAGES] {
        let bit = bit as usize;
        mask[bit / 8] |= 1 << (bit % 8);
    }
    mask
}

/// # Safety
/// `value` is writable for the attribute's type.
unsafe fn gpu_info(
    index: usize,
    soft: &SoftAgent,
    isa: &AgentIsa,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    let p = isa.processor();
    let name = p.name;
    let props = soft.properties();
    let version_major = p.version.map_or(0, |v| v.major);
    // SAFETY: (all writes) the attribute's type is the caller's contract; types as ROCr's
    // GpuAgent::GetInfo writes them.
    unsafe {
        match attribute {
            HSA_AGENT_INFO_NAME => put_fixed_str(value, name, 64),
            HSA_AGENT_INFO_VENDOR_NAME => put_fixed_str(value, "AMD", 64),
            HSA_AGENT_INFO_FEATURE => put(value, HSA_AGENT_FEATURE_KERNEL_DISPATCH),
            HSA_AGENT_INFO_MACHINE_MODEL => put(value, HSA_MACHINE_MODEL_LARGE),
            HSA_AGENT_INFO_PROFILE => put(value, HSA_PROFILE_BASE),
            HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE
            | HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                put(value, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR)
            }
            HSA_AGENT_INFO_FAST_F16_OPERATION => put(value, version_major >= 8),
            HSA_AGENT_INFO_WAVEFRONT_SIZE => put(value, p.wavefront_size),
            HSA_AGENT_INFO_WORKGROUP_MAX_DIM => put(value, [1024u16; 3]),
            HSA_AGENT_INFO_WORKGROUP_MAX_SIZE => put(value, props.max_workgroup_size),
            HSA_AGENT_INFO_GRID_MAX_DIM => put(
                value,
                hsa_dim3_t {
                    x: u32::MAX,
                    y: u32::MAX,
                    z: u32::MAX,
                },
            ),
            HSA_AGENT_INFO_GRID_MAX_SIZE => put(value, u32::MAX),
            HSA_AGENT_INFO_FBARRIER_MAX_SIZE => put(value, 32u32),
            HSA_AGENT_INFO_QUEUES_MAX => put(value, 128u32),
            HSA_AGENT_INFO_QUEUE_MIN_SIZE => put(value, QUEUE_MIN_SIZE),
            HSA_AGENT_INFO_QUEUE_MAX_SIZE => put(value, QUEUE_MAX_SIZE),
            HSA_AGENT_INFO_QUEUE_TYPE => put(value, HSA_QUEUE_TYPE_MULTI),
            HSA_AGENT_INFO_NODE | HSA_AMD_AGENT_INFO_DRIVER_NODE_ID => put(value, index as u32),
            HSA_AGENT_INFO_DEVICE => put(value, HSA_DEVICE_TYPE_GPU),
            HSA_AGENT_INFO_CACHE_SIZE => put(value, props.caches),
            HSA_AGENT_INFO_ISA => put(
                value,
                hsa_isa_t {
                    handle: handle(tag::ISA, index as u64),
                },
            ),
            HSA_AGENT_INFO_EXTENSIONS => put(value, extension_mask()),
            HSA_AGENT_INFO_VERSION_MAJOR | HSA_AGENT_INFO_VERSION_MINOR => put(value, 1u16),
            // Image limits come from the image extension (`crate::images`).
            HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS
                ..=HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS => {
                crate::images::agent_info(attribute, value)
                    .unwrap_or(Err(HSA_STATUS_ERROR_INVALID_ARGUMENT))
            }
            HSA_EXT_AGENT_INFO_MAX_IMAGE_RD_HANDLES => put(value, 128u32),
            HSA_EXT_AGENT_INFO_MAX_IMAGE_RORW_HANDLES => put(value, 64u32),
            // ROCr 5.2.3 writes 16 and falls through to the chip id, which overwrites it.
            HSA_EXT_AGENT_INFO_MAX_SAMPLER_HANDLERS | HSA_AMD_AGENT_INFO_CHIP_ID => {
                put(value, 0u32)
            }
            // ROCr 5.2.3's loop over the caches breaks out of the loop only; 64 always follows.
            HSA_AMD_AGENT_INFO_CACHELINE_SIZE => put(value, 64u32),
            HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT
            | HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT => put(value, props.compute_units),
            // ROCr answers clocks in MHz.
            HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY => put(value, props.clock_khz / 1000),
            // `1 << WatchPointsTotalBits`: no watch points is 1 << 0.
            HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS => put(value, 1u32),
            HSA_AMD_AGENT_INFO_BDFID => put(value, 0u32),
            HSA_AMD_AGENT_INFO_MEMORY_WIDTH => put(value, props.memory_bus_width),
            HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY => put(value, props.memory_clock_khz / 1000),
            HSA_AMD_AGENT_INFO_PRODUCT_NAME => put_fixed_str(value, &props.name, 64),
            HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU => put(value, props.max_waves_per_cu),
            HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU => put(value, props.simds_per_cu),
            HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES | HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE => {
                put(value, 1u32)
            }
            HSA_AMD_AGENT_INFO_DOMAIN => put(value, 0u32),
            // `NumGws != 0`: the emulator implements the global wave sync barrier that
            // cooperative launches use.
            HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES => put(value, true),
            // ROCr's answer for a device without a unique id.
            HSA_AMD_AGENT_INFO_UUID => put_fixed_str(value, "GPU-XX", 7),
            HSA_AMD_AGENT_INFO_ASIC_REVISION => put(value, 0u32),
            HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS => put(value, true),
            // ROCr's answer for an agent without the HDP registers' MMIO page (its default).
            HSA_AMD_AGENT_INFO_HDP_FLUSH => put(
                value,
                hsa_amd_hdp_flush_t {
                    HDP_MEM_FLUSH_CNTL: std::ptr::null_mut(),
                    HDP_REG_FLUSH_CNTL: std::ptr::null_mut(),
                },
            ),
            _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
        }
    }
}

/// # Safety
/// `value` is writable for the attribute's type.
unsafe fn cpu_info(name: &str, attribute: u32, value: *mut c_void) -> Status {
    // SAFETY: (all writes) types as ROCr's CpuAgent::GetInfo writes them.
    unsafe {
        match attribute {
            HSA_AGENT_INFO_NAME | HSA_AMD_AGENT_INFO_PRODUCT_NAME => put_fixed_str(value, name, 64),
            HSA_AGENT_INFO_VENDOR_NAME => put_fixed_str(value, "CPU", 64),
            HSA_AGENT_INFO_FEATURE => put(value, 0u32),
            HSA_AGENT_INFO_MACHINE_MODEL => put(value, HSA_MACHINE_MODEL_LARGE),
            HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE
            | HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                put(value, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR)
            }
            HSA_AGENT_INFO_FAST_F16_OPERATION => put(value, false),
            HSA_AGENT_INFO_PROFILE => put(value, HSA_PROFILE_FULL),
            HSA_AGENT_INFO_WAVEFRONT_SIZE
            | HSA_AGENT_INFO_WORKGROUP_MAX_SIZE
            | HSA_AGENT_INFO_GRID_MAX_SIZE
            | HSA_AGENT_INFO_FBARRIER_MAX_SIZE
            | HSA_AGENT_INFO_QUEUES_MAX
            | HSA_AGENT_INFO_QUEUE_MIN_SIZE
            | HSA_AGENT_INFO_QUEUE_MAX_SIZE => put(value, 0u32),
            HSA_AGENT_INFO_WORKGROUP_MAX_DIM => put(value, [0u16; 3]),
            HSA_AGENT_INFO_GRID_MAX_DIM => put(value, hsa_dim3_t { x: 0, y: 0, z: 0 }),
            HSA_AGENT_INFO_QUEUE_TYPE => put(value, HSA_QUEUE_TYPE_MULTI),
            HSA_AGENT_INFO_NODE | HSA_AMD_AGENT_INFO_DRIVER_NODE_ID => put(value, 0u32),
            HSA_AGENT_INFO_DEVICE => put(value, HSA_DEVICE_TYPE_CPU),
            HSA_AGENT_INFO_CACHE_SIZE => put(value, [0u32; 4]),
            HSA_AGENT_INFO_ISA => put(value, hsa_isa_t { handle: 0 }),
            HSA_AGENT_INFO_EXTENSIONS => put(value, [0u8; 128]),
            HSA_AGENT_INFO_VERSION_MAJOR | HSA_AGENT_INFO_VERSION_MINOR => put(value, 1u16),
            HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS
            | HSA_EXT_AGENT_INFO_IMAGE_1DA_MAX_ELEMENTS
            | HSA_EXT_AGENT_INFO_IMAGE_1DB_MAX_ELEMENTS
            | HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS
            | HSA_EXT_AGENT_INFO_MAX_IMAGE_RD_HANDLES
            | HSA_EXT_AGENT_INFO_MAX_IMAGE_RORW_HANDLES
            | HSA_EXT_AGENT_INFO_MAX_SAMPLER_HANDLERS => put(value, 0u32),
            HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS
            | HSA_EXT_AGENT_INFO_IMAGE_2DA_MAX_ELEMENTS
            | HSA_EXT_AGENT_INFO_IMAGE_2DDEPTH_MAX_ELEMENTS
            | HSA_EXT_AGENT_INFO_IMAGE_2DADEPTH_MAX_ELEMENTS => put(value, [0u32; 2]),
            HSA_EXT_AGENT_INFO_IMAGE_3D_MAX_ELEMENTS => put(value, [0u32; 3]),
            HSA_AMD_AGENT_INFO_CACHELINE_SIZE => put(value, 64u32),
            HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS => put(value, 1u32),
            HSA_AMD_AGENT_INFO_HDP_FLUSH => put(
                value,
                hsa_amd_hdp_flush_t {
                    HDP_MEM_FLUSH_CNTL: std::ptr::null_mut(),
                    HDP_REG_FLUSH_CNTL: std::ptr::null_mut(),
                },
            ),
            HSA_AMD_AGENT_INFO_CHIP_ID
            | HSA_AMD_AGENT_INFO_ASIC_REVISION
            | HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY
            | HSA_AMD_AGENT_INFO_BDFID
            | HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU
            | HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES
            | HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE
            | HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU
            | HSA_AMD_AGENT_INFO_DOMAIN => put(value, 0u32),
            HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT => put(value, HostFacts::get().cpus),
            HSA_AMD_AGENT_INFO_UUID => put_fixed_str(value, "CPU-XX", 7),
            _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
        }
    }
}

/// # Safety
/// `value` is writable for the attribute's type.
unsafe fn isa_info(isa: &AgentIsa, attribute: u32, value: *mut c_void) -> Status {
    let name = isa.isa_name();
    let major = isa.processor().version.map_or(0, |v| v.major);
    // SAFETY: (all writes) types as ROCr's Isa::GetInfo writes them.
    unsafe {
        match attribute {
            HSA_ISA_INFO_NAME_LENGTH => put(value, name.len() as u32 + 1),
            HSA_ISA_INFO_NAME => put_str(value, &name),
            HSA_ISA_INFO_CALL_CONVENTION_COUNT => put(value, 1u32),
            HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE => put(value, 64u32),
            HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT => put(value, 40u32),
            HSA_ISA_INFO_MACHINE_MODELS => put(value, [false, true]),
            HSA_ISA_INFO_PROFILES => put(value, [true, false]),
            HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES
            | HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                put(value, [false, false, true])
            }
            HSA_ISA_INFO_FAST_F16_OPERATION => put(value, major >= 8),
            HSA_ISA_INFO_WORKGROUP_MAX_DIM => put(value, [1024u16; 3]),
            HSA_ISA_INFO_WORKGROUP_MAX_SIZE => put(value, 1024u32),
            HSA_ISA_INFO_GRID_MAX_DIM => put(
                value,
                hsa_dim3_t {
                    x: u32::MAX,
                    y: u32::MAX,
                    z: u32::MAX,
                },
            ),
            HSA_ISA_INFO_GRID_MAX_SIZE => put(value, u64::MAX),
            HSA_ISA_INFO_FBARRIER_MAX_SIZE => put(value, 32u32),
            _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
        }
    }
}

type AgentCallback = Option<unsafe extern "C" fn(hsa_agent_t, *mut c_void) -> hsa_status_t>;
type IsaCallback = Option<unsafe extern "C" fn(hsa_isa_t, *mut c_void) -> hsa_status_t>;

hsa_api! {
    /// `hsa_iterate_agents`: the CPU agent, then the GPU agents; a callback status other than
    /// success stops the iteration and is returned (`HSA_STATUS_INFO_BREAK` included).
    fn hsa_iterate_agents(callback: AgentCallback, data: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let f = callback.ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            for i in 0..rt.agents.len() {
                // SAFETY: the application's callback with its own data.
                let status = unsafe { f(agent_handle(i), data) };
                if status != HSA_STATUS_SUCCESS {
                    return Err(status);
                }
            }
            Ok(())
        })
    }

    /// `hsa_agent_get_info`.
    fn hsa_agent_get_info(agent: hsa_agent_t, attribute: hsa_agent_info_t, value: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let index = agent_index(agent, rt.agents.len())?;
            if value.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: the attribute's type is the caller's contract.
            unsafe {
                match &rt.agents[index].kind {
                    AgentKind::Cpu { name } => cpu_info(name, attribute, value),
                    AgentKind::Gpu { soft, isa } => gpu_info(index, soft, isa, attribute, value),
                }
            }
        })
    }

    /// `hsa_agent_iterate_isas`: the GPU agent's one ISA; none for the CPU agent.
    fn hsa_agent_iterate_isas(agent: hsa_agent_t, callback: IsaCallback, data: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let f = callback.ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let index = agent_index(agent, rt.agents.len())?;
            if rt.agents[index].gpu().is_none() {
                return Ok(());
            }
            let isa = hsa_isa_t { handle: handle(tag::ISA, index as u64) };
            // SAFETY: the application's callback with its own data.
            match unsafe { f(isa, data) } {
                HSA_STATUS_SUCCESS => Ok(()),
                other => Err(other),
            }
        })
    }

    /// `hsa_isa_get_info_alt`.
    fn hsa_isa_get_info_alt(isa: hsa_isa_t, attribute: hsa_isa_info_t, value: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let index = isa_index(isa, &rt.agents)?;
            if value.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (_, agent_isa) = rt.agents[index].gpu().ok_or(HSA_STATUS_ERROR_INVALID_ISA)?;
            // SAFETY: the attribute's type is the caller's contract.
            unsafe { isa_info(agent_isa, attribute, value) }
        })
    }

    /// `hsa_isa_get_info` (deprecated; `index` must be 0).
    fn hsa_isa_get_info(isa: hsa_isa_t, attribute: hsa_isa_info_t, index: u32, value: *mut c_void) -> hsa_status_t {
        if index != 0 {
            return HSA_STATUS_ERROR_INVALID_INDEX;
        }
        // SAFETY: forwarded with the same contract.
        unsafe { hsa_isa_get_info_alt(isa, attribute, value) }
    }

    /// `hsa_isa_from_name`: the ISA of the GPU agent with this full ISA name.
    fn hsa_isa_from_name(name: *const std::ffi::c_char, isa: *mut hsa_isa_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            // SAFETY: a C string by the API's contract.
            let name = unsafe { crate::util::c_name(name)? };
            if isa.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let index = rt
                .agents
                .iter()
                .position(|a| a.gpu().is_some_and(|(_, i)| i.isa_name() == name))
                .ok_or(HSA_STATUS_ERROR_INVALID_ISA_NAME)?;
            // SAFETY: non-NULL out-pointer.
            unsafe { put(isa.cast(), hsa_isa_t { handle: handle(tag::ISA, index as u64) }) }
        })
    }
}
