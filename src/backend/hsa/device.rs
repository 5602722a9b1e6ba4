//! [`Device`] for [`HsaAgent`]: what the runtime needs to run kernels through ROCr, in the same
//! shape as the software agent: memory from the agent's pools (`super::memory`), queues with
//! completion watchers (`super::queue`), and ROCr's signals as device signals
//! (`super::signal`). Never run on a GPU; runs against the software HSA library.

use std::sync::Arc;

use hsa_sys::result;
use hsa_sys::HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT;

use super::agent::HsaAgent;
use super::memory;
use super::queue::HsaQueue;
use super::signal::{HsaSignal, OwnedSignal};
use crate::device::{
    Allocation, AllocationTable, Device, DeviceError, MemoryKind, Queue, Signal, SignalHandle,
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

    unsafe fn copy(&self, dst: u64, src: u64, len: u64) -> Result<(), DeviceError> {
        // SAFETY: the caller's contract is the trait's, passed on.
        unsafe { memory::copy(self, dst, src, len) }
    }

    unsafe fn fill(&self, dst: u64, pattern: u32, width: u8, len: u64) -> Result<(), DeviceError> {
        // SAFETY: as above.
        unsafe { memory::fill(self, dst, pattern, width, len) }
    }

    fn create_queue(&self) -> Result<Arc<dyn Queue>, DeviceError> {
        Ok(Arc::new(HsaQueue::new(self)?))
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

    fn compute_units(&self) -> u32 {
        // SAFETY: the agent comes from this runtime; the attribute is a uint32_t.
        unsafe {
            result::agent_get_info::<u32>(
                self.lib(),
                self.handle(),
                HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT,
            )
        }
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or(1)
    }
}
