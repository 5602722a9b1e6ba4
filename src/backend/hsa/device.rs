//! [`Device`] for [`HsaAgent`]: what the runtime needs to run kernels through ROCr, in the same
//! shape as the software agent: memory from the agent's pools (`super::memory`), queues with
//! completion watchers (`super::queue`), and ROCr's signals as device signals
//! (`super::signal`). Never run on a GPU; runs against the software HSA library.

use std::sync::Arc;

use hsa_sys::result::{self, InfoValue};
use hsa_sys::*;

use super::agent::HsaAgent;
use super::memory;
use super::queue::HsaQueue;
use super::signal::{HsaSignal, OwnedSignal};
use crate::device::{
    Allocation, AllocationTable, Device, DeviceError, DeviceProperties, MemoryInfo, MemoryKind,
    Queue, Signal, SignalHandle,
};

impl Device for HsaAgent {
    fn allocations(&self) -> &AllocationTable {
        &self.0.table
    }

    fn allocate(&self, size: u64, kind: MemoryKind) -> Result<Allocation, DeviceError> {
        memory::allocate(self, size, kind)
    }

    fn free(&self, base: u64) -> Result<Allocation, DeviceError> {
        memory::free(self, base)
    }

    fn register_host(&self, base: u64, size: u64) -> Result<Allocation, DeviceError> {
        memory::register_host(self, base, size)
    }

    fn unregister_host(&self, base: u64) -> Result<(), DeviceError> {
        memory::unregister_host(self, base)
    }

    fn registered_device_address(&self, host: u64) -> u64 {
        memory::agent_address(self, host)
    }

    unsafe fn copy(&self, dst: u64, src: u64, len: u64) -> Result<(), DeviceError> {
        // SAFETY: the caller's contract is the trait's, passed on.
        unsafe { memory::copy(self, dst, src, len) }
    }

    unsafe fn fill(&self, dst: u64, pattern: u32, width: u8, len: u64) -> Result<(), DeviceError> {
        // SAFETY: as above.
        unsafe { memory::fill(self, dst, pattern, width, len) }
    }

    fn image_api(&self) -> Option<&dyn crate::device::image::ImageApi> {
        Some(self)
    }

    fn create_queue(&self) -> Result<Arc<dyn Queue>, DeviceError> {
        Ok(Arc::new(HsaQueue::new(self)?))
    }

    fn virtual_memory(&self) -> Result<Arc<dyn crate::device::vmm::VirtualMemory>, DeviceError> {
        Ok(Arc::new(super::vmm::HsaVirtualMemory::new(self)?))
    }

    fn ipc_export(&self, address: u64) -> Result<crate::device::vmm::IpcHandle, DeviceError> {
        self.hsa_ipc_export(address)
    }

    fn ipc_open(&self, handle: &crate::device::vmm::IpcHandle) -> Result<u64, DeviceError> {
        self.hsa_ipc_open(handle)
    }

    fn ipc_close(&self, address: u64) -> Result<(), DeviceError> {
        self.hsa_ipc_close(address)
    }

    fn create_signal(&self, initial: i64) -> Result<SignalHandle, DeviceError> {
        let owned = OwnedSignal::new(self, initial)?;
        let handle = owned.raw().handle;
        Ok(SignalHandle {
            handle,
            signal: Arc::new(Signal::external(Box::new(HsaSignal::new(owned)))),
        })
    }

    /// Read from the first queue's `amd_queue_t` (a queue is made for it if none exists yet).
    fn apertures(&self) -> (u32, u32) {
        if let Some(a) = self.0.apertures.get() {
            return *a;
        }
        match HsaQueue::new(self) {
            Ok(_) => self.0.apertures.get().copied().unwrap_or((0, 0)),
            Err(e) => {
                tracing::debug!(error = %e, "no queue to read the apertures from");
                (0, 0)
            }
        }
    }

    fn set_hostcall_handler(
        &self,
        event_id: u32,
        handler: crate::device::HostcallHandler,
    ) -> Result<(), DeviceError> {
        self.0
            .hostcall
            .add(event_id, handler)
            .map_err(|e| DeviceError::Unsupported {
                op: "hostcall",
                backend: "hsa",
                reason: format!("cannot start the hostcall listener thread: {e}"),
            })
    }

    fn properties(&self) -> &DeviceProperties {
        self.0.properties.get_or_init(|| properties(self))
    }

    /// Free memory as the device pool's size less what rocload holds in it (ROCr 5.2 has no
    /// query for the driver's free memory).
    fn memory_info(&self) -> MemoryInfo {
        let total = self.properties().total_memory;
        let held = self.0.table.bytes_of_kind(MemoryKind::Device)
            + self.0.table.bytes_of_kind(MemoryKind::Array);
        MemoryInfo {
            free: total.saturating_sub(held),
            total,
        }
    }
}

/// The agent's answers to ROCr's agent and pool queries (`GpuAgent::GetInfo`); an attribute
/// the runtime cannot answer keeps a neutral value and is logged. Never run on a GPU; runs
/// against the software HSA library.
fn properties(agent: &HsaAgent) -> DeviceProperties {
    fn get<T: InfoValue>(agent: &HsaAgent, attribute: u32, fallback: T) -> T {
        // SAFETY: the agent comes from this runtime; each call site names an attribute whose
        // value has type T (ROCr's hsa.h and hsa_ext_amd.h).
        unsafe { result::agent_get_info::<T>(agent.lib(), agent.handle(), attribute) }
            .unwrap_or_else(|e| {
                tracing::debug!(agent = %agent.name(), attribute, error = %e, "agent query failed");
                fallback
            })
    }
    let name_bytes: [u8; 64] = get(agent, HSA_AMD_AGENT_INFO_PRODUCT_NAME, [0; 64]);
    let end = name_bytes.iter().position(|&b| b == 0).unwrap_or(64);
    let name = String::from_utf8_lossy(&name_bytes[..end])
        .trim()
        .to_owned();
    let caches: [u8; 16] = get(agent, HSA_AGENT_INFO_CACHE_SIZE, [0; 16]);
    let cache = |i: usize| {
        u32::from_le_bytes([
            caches[4 * i],
            caches[4 * i + 1],
            caches[4 * i + 2],
            caches[4 * i + 3],
        ])
    };
    let total_memory = memory::pools(agent)
        .ok()
        .and_then(|p| {
            // SAFETY: a pool of this runtime; HSA_AMD_MEMORY_POOL_INFO_SIZE is a size_t.
            unsafe {
                result::memory_pool_get_info::<usize>(
                    agent.lib(),
                    p.device(),
                    HSA_AMD_MEMORY_POOL_INFO_SIZE,
                )
            }
            .ok()
        })
        .unwrap_or(0) as u64;
    let mhz = |attribute| get::<u32>(agent, attribute, 0).saturating_mul(1000);
    let max_workgroup_size: u32 = get(agent, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, 1024);
    DeviceProperties {
        name: if name.is_empty() {
            agent.name().to_owned()
        } else {
            name
        },
        compute_units: get::<u32>(agent, HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, 1).max(1),
        simds_per_cu: get(agent, HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU, 0),
        max_waves_per_cu: get(agent, HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU, 0),
        clock_khz: mhz(HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY),
        memory_clock_khz: mhz(HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY),
        memory_bus_width: get(agent, HSA_AMD_AGENT_INFO_MEMORY_WIDTH, 0),
        caches: [cache(0), cache(1), cache(2), cache(3)],
        cacheline: get(agent, HSA_AMD_AGENT_INFO_CACHELINE_SIZE, 0),
        total_memory,
        // Every AMDGPU processor rocload knows has 64 KiB of LDS per work-group and per CU.
        lds_per_workgroup: 64 * 1024,
        lds_per_cu: 64 * 1024,
        max_workgroup_size,
        integrated: false,
    }
}
