//! `hipDeviceReset` and `hipDevicePrimaryCtxReset`: what a device reset destroys, as clr's
//! `hip::Device::Reset` does it (rocm-5.6 and later; rocm-5.2.3's `hipDeviceReset` did only
//! the streams and the memory):
//! - the device is waited for, whatever failed;
//! - the streams the program created on it are destroyed (the C ABI retires their handles);
//!   the null stream is renewed and the sticky error cleared;
//! - every memory pool of the device, default and created, is destroyed with all its memory,
//!   blocks in use included (clr's `ReleaseAllMemory`); a new default pool is made at next use;
//! - the memory of the program's allocations of the device is freed, as clr's
//!   `amd::MemObjMap::Purge` releases (from rocm-5.7; before, it only forgot them) every
//!   memory object whose context is that device alone: `hipMalloc`, `hipMallocPitch`,
//!   `hipMalloc3D`, `hipExtMallocWithFlags`, buffers mapped from external memory, memory
//!   opened from an IPC handle. Pinned host, managed and registered host memory belong to
//!   clr's host context, which holds every device: they are purged only when the process
//!   sees one device, as in clr.
//!
//! What a reset keeps, as clr does: arrays (images, not in clr's map), texture and surface
//! objects (their memory may be gone: a read is then the checker's report), events, graphs
//! and their memory, loaded modules and their variables (`__managed__` ones too: clr would
//! release those on a one-device system and leave the module pointing at freed memory),
//! virtual memory reservations, handles and mappings.
//!
//! Not for the C ABI's handles (streams, pools) or the device flags: `librocload.so` keeps
//! those.

use super::mempool::MemPool;
use super::stream::Stream;
use super::{Runtime, RuntimeResult};
use crate::device::MemoryKind;

/// What a device reset destroyed that callers may hold handles to.
#[derive(Debug, Default)]
pub struct DeviceReset {
    /// The streams the program had created on the device.
    pub streams: Vec<Stream>,
    /// The device's memory pools, default and created.
    pub pools: Vec<MemPool>,
    /// How many of the program's allocations were freed.
    pub freed: usize,
}

impl Runtime {
    /// Resets device `device` (see the module comment). Memory that cannot be freed (another
    /// thread freed it first) is skipped, with a debug log.
    ///
    /// # Errors
    /// An invalid device, or a timeout waiting for it.
    pub fn reset_device(&self, device: i64) -> RuntimeResult<DeviceReset> {
        let ctx = self.device(device)?.clone();
        let index = ctx.index();
        let streams = ctx.reset_streams()?;
        let pools = ctx.mem_pools().reset();
        // clr's host context holds every device: its memory is one device's alone only when
        // there is one.
        let host_context_is_this_device = self.devices().len() == 1;
        let mut freed = 0usize;
        let mine: Vec<u64> = self
            .program_memory
            .lock()
            .iter()
            .filter(|&(_, &d)| d == index)
            .map(|(&a, _)| a)
            .collect();
        for address in mine {
            let Some(info) = self.pointer_info(address) else {
                self.program_memory.lock().remove(&address);
                continue;
            };
            let device_only = info.allocation.kind == MemoryKind::Device;
            if !device_only && !host_context_is_this_device {
                continue;
            }
            match self.free(address) {
                Ok(()) => freed += 1,
                Err(e) => {
                    tracing::debug!(address, error = %e, "reset: the program's memory not freed")
                }
            }
        }
        let table = ctx.device().allocations();
        for a in table.of_kind(MemoryKind::External) {
            match self.unmap_external_buffer(index, a.base) {
                Ok(()) => freed += 1,
                Err(e) => tracing::debug!(allocation = %a, error = %e, "reset: not unmapped"),
            }
        }
        for a in table.of_kind(MemoryKind::Imported) {
            // One close per open of the same handle; bounded by what the table says.
            let mut closes = 0u32;
            while table
                .find(a.base)
                .is_some_and(|b| b.kind == MemoryKind::Imported && b.base == a.base)
                && closes < 1 << 16
            {
                closes += 1;
                if let Err(e) = ctx.device().ipc_close(a.base) {
                    tracing::debug!(allocation = %a, error = %e, "reset: IPC memory not closed");
                    break;
                }
            }
            freed += usize::from(closes > 0);
        }
        if host_context_is_this_device {
            for a in table.of_kind(MemoryKind::RegisteredHost) {
                match self.unregister_host(a.base) {
                    Ok(()) => freed += 1,
                    Err(e) => {
                        tracing::debug!(allocation = %a, error = %e, "reset: not unregistered")
                    }
                }
            }
        }
        tracing::debug!(
            device = index,
            streams = streams.len(),
            pools = pools.len(),
            freed,
            "device reset"
        );
        Ok(DeviceReset {
            streams,
            pools,
            freed,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::backend::SoftAgent;
    use crate::device::memory::ViolationReason;
    use crate::device::{AccessKind, Device};
    use crate::runtime::{DeviceBuffer, PoolError, RuntimeError, RuntimeOptions, StreamKind};

    fn runtime(devices: usize) -> Runtime {
        let devices: Vec<Arc<dyn Device>> = (0..devices)
            .map(|_| SoftAgent::new("gfx1030".parse().unwrap()).device())
            .collect();
        Runtime::with_devices(devices, RuntimeOptions::default())
    }

    fn freed(rt: &Runtime, device: i64, address: u64) -> bool {
        let ctx = rt.device(device).unwrap();
        let v = ctx
            .device()
            .allocations()
            .violation(address, 4, AccessKind::Write);
        rt.pointer_info(address).is_none() && matches!(v.reason, ViolationReason::Freed(_))
    }

    /// Device 0's program memory, pool blocks (in use and freed), streams and pools go; its
    /// runtime buffers, and device 1's memory, streams and pools stay; with two devices,
    /// pinned host memory stays too.
    #[test]
    fn a_reset_destroys_one_devices_program_memory_streams_and_pools() {
        let rt = runtime(2);
        let (d0, d1) = (rt.device(0).unwrap().clone(), rt.device(1).unwrap().clone());
        let mine = rt
            .allocate_for_program(0, 4096, MemoryKind::Device)
            .unwrap();
        let pinned = rt
            .allocate_for_program(0, 4096, MemoryKind::PinnedHost)
            .unwrap();
        let other = rt
            .allocate_for_program(1, 4096, MemoryKind::Device)
            .unwrap();
        let internal = DeviceBuffer::<u32>::zeroed(&d0, 16).unwrap();
        let s0 = d0.create_stream(StreamKind::Blocking, 0).unwrap();
        let s1 = d1.create_stream(StreamKind::Blocking, 0).unwrap();
        let pool = rt.default_mem_pool(0).unwrap();
        let own = rt.create_mem_pool(0).unwrap();
        let in_use = rt.allocate_async(&pool, 1000, &s0).unwrap();
        let parked = rt.allocate_async(&own, 1000, &s0).unwrap();
        rt.free_async(parked, &s0).unwrap();
        let pool1 = rt.default_mem_pool(1).unwrap();
        let in_use1 = rt.allocate_async(&pool1, 1000, &s1).unwrap();

        let done = rt.reset_device(0).unwrap();
        assert_eq!(done.streams.len(), 1);
        assert_eq!(done.streams[0].id(), s0.id());
        assert_eq!(done.pools.len(), 2);
        assert_eq!(done.freed, 1, "the hipMalloc allocation");
        for a in [mine, in_use] {
            assert!(freed(&rt, 0, a), "{a:#x} is freed");
        }
        assert!(rt.pointer_info(parked).is_none());
        assert!(matches!(
            rt.allocate_async(&own, 64, &s1),
            Err(RuntimeError::Pool(PoolError::Destroyed { .. }))
        ));
        let new_default = rt.default_mem_pool(0).unwrap();
        assert_ne!(new_default.id(), pool.id());
        assert_eq!(rt.current_mem_pool(0).unwrap().id(), new_default.id());
        assert!(
            rt.pointer_info(pinned).is_some(),
            "two devices: pinned stays"
        );
        assert!(rt.pointer_info(other).is_some());
        assert!(rt.pointer_info(in_use1).is_some());
        assert!(rt.pointer_info(internal.address()).is_some());
        assert_eq!(rt.default_mem_pool(1).unwrap().id(), pool1.id());
        assert!(matches!(rt.free(mine), Err(RuntimeError::Device { .. })));
        rt.free(other).unwrap();
        rt.free(pinned).unwrap();
        drop(s0);
        // The device works after the reset.
        let again = rt.allocate_for_program(0, 64, MemoryKind::Device).unwrap();
        let s = d0.create_stream(StreamKind::Blocking, 0).unwrap();
        // SAFETY: both sides are device memory checked by the runtime.
        unsafe { rt.fill(&s, again, 0x5a, 1, 64, true).unwrap() };
        rt.free(again).unwrap();
    }

    /// With one device, pinned host memory belongs to that device alone (clr's host context)
    /// and goes with it.
    #[test]
    fn with_one_device_pinned_host_memory_goes_too() {
        let rt = runtime(1);
        let pinned = rt
            .allocate_for_program(0, 4096, MemoryKind::PinnedHost)
            .unwrap();
        let managed = rt
            .allocate_for_program(0, 4096, MemoryKind::Managed)
            .unwrap();
        let done = rt.reset_device(0).unwrap();
        assert_eq!(done.freed, 2);
        assert!(freed(&rt, 0, pinned));
        assert!(freed(&rt, 0, managed));
    }
}
