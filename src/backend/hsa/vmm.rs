//! Virtual memory management and IPC memory on ROCr's GPU agents, as clr does them over ROCr:
//! physical memory is `hsa_amd_vmem_handle_create` from the GPU's coarse-grained pool;
//! reservations, maps and unmaps are `hsa_amd_vmem_address_reserve(_align)`, `hsa_amd_vmem_map`
//! and `hsa_amd_vmem_unmap`; access is `hsa_amd_vmem_set_access` for the agent (and the range
//! enters or leaves the agent's allocation table, so copies are checked as on the software
//! agent); physical memory is exported and imported as a dma-buf descriptor. IPC memory
//! handles carry ROCr's `hsa_amd_ipc_memory_t` (from `hsa_amd_ipc_memory_create` of the whole
//! allocation, its size rounded to the pool's granule as clr rounds it), the allocation's size
//! and the pointer's offset; opening one is `hsa_amd_ipc_memory_attach` for this agent.
//!
//! The virtual memory API is ROCr 6.0's: with Debian's ROCr 5.2.3, which lacks the functions,
//! or a runtime that has them but reports `HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED`
//! false (6.x over a driver without it; the software HSA library following 5.2.3)
//! `virtual_memory` says it is not supported. Before 6.2 (no
//! `hsa_amd_vmem_address_reserve_align`) an aligned reservation is asked for at an aligned
//! address inside a larger one just given back; ROCr maps from the physical memory's first
//! byte whatever `in_offset` says (`Runtime::VMemoryHandleMap`), so an offset is refused here.
//! This runs end to end against the software HSA library with
//! `ROCLOAD_SOFT_ROCR_VERSION=6.2` (`vmm_ipc.hip` in `tests/hip_programs_run.rs`); **none of
//! it has run on a GPU**.

use std::any::Any;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use hsa_sys::result;
use hsa_sys::vmem::{
    hsa_amd_vmem_alloc_handle_t, Vmem, HSA_ACCESS_PERMISSION_NONE,
    HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED,
};
use hsa_sys::{
    hsa_amd_ipc_memory_t, HSA_ACCESS_PERMISSION_RO, HSA_ACCESS_PERMISSION_RW,
    HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
};

use super::agent::HsaAgent;
use super::memory;
use crate::device::shared::MAX_BYTES;
use crate::device::vmm::{Access, IpcBackend, IpcHandle, IpcKind, PhysicalMemory, VirtualMemory};
use crate::device::{Device, DeviceError, MemoryKind};

/// IPC memory this agent attached: by the pointer `ipc_open` returned.
#[derive(Debug, Default)]
pub(crate) struct HsaIpcOpened {
    by_pointer: HashMap<u64, Attached>,
    by_handle: HashMap<[u8; 64], u64>,
}

#[derive(Debug)]
struct Attached {
    handle: [u8; 64],
    /// Where ROCr mapped the allocation (what the table records and detach takes).
    base: u64,
    count: u64,
}

/// Payload offsets of an HSA IPC memory handle: ROCr's 32-byte handle, then the allocation's
/// size and the pointer's offset in it.
const SIZE: usize = 32;
const POINTER_OFFSET: usize = 40;

/// The GPU pool's allocation granule (4 KiB when the runtime does not say).
fn granule(agent: &HsaAgent) -> u64 {
    let Ok(pools) = memory::pools(agent) else {
        return 4096;
    };
    // SAFETY: the pool came from this runtime; the attribute is a size_t.
    let g: Result<usize, _> = unsafe {
        result::memory_pool_get_info(
            agent.lib(),
            pools.device(),
            HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
        )
    };
    g.ok()
        .map(|g| g as u64)
        .filter(|g| g.is_power_of_two())
        .unwrap_or(4096)
}

/// Physical memory of a GPU agent: a vmem allocation handle, released on drop.
#[derive(Debug)]
pub struct HsaPhysical {
    agent: HsaAgent,
    vmem: Vmem,
    handle: hsa_amd_vmem_alloc_handle_t,
    size: u64,
}

impl Drop for HsaPhysical {
    fn drop(&mut self) {
        // SAFETY: the handle came from this runtime and nothing maps it any more (every
        // mapping holds this value).
        if let Err(e) = unsafe { self.vmem.handle_release(self.agent.lib(), self.handle) } {
            self.agent.defer(format!("releasing physical memory: {e}"));
        }
    }
}

impl PhysicalMemory for HsaPhysical {
    fn size(&self) -> u64 {
        self.size
    }

    fn export(&self) -> Result<OwnedFd, DeviceError> {
        // SAFETY: the handle is live while `self` is.
        let fd = unsafe { self.vmem.export(self.agent.lib(), self.handle) }
            .map_err(|e| self.agent.device_error("exporting physical memory", e))?;
        if fd < 0 {
            return Err(DeviceError::Vmm {
                what: "exporting physical memory",
                reason: format!("the runtime returned descriptor {fd}"),
            });
        }
        // SAFETY: the runtime hands the new dma-buf descriptor to the caller.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One GPU agent's view of ROCr's virtual memory.
#[derive(Debug)]
pub struct HsaVirtualMemory {
    agent: HsaAgent,
    vmem: Vmem,
}

impl HsaVirtualMemory {
    /// `agent`'s virtual memory, when its library has the API.
    ///
    /// # Errors
    /// [`DeviceError::Unsupported`] naming the missing functions.
    pub fn new(agent: &HsaAgent) -> Result<HsaVirtualMemory, DeviceError> {
        let vmem = Vmem::load(agent.lib()).map_err(|missing| DeviceError::Unsupported {
            op: "virtual memory management",
            backend: "hsa",
            reason: format!(
                "{} does not export {} (ROCr's virtual memory API is 6.0's)",
                agent.lib().name(),
                missing.join(", ")
            ),
        })?;
        // The functions exist from 6.0 on; whether they work is the runtime's answer (clr asks
        // the same attribute).
        // SAFETY: the attribute is a bool, read into a byte.
        let works: Result<u8, _> = unsafe {
            result::system_get_info(agent.lib(), HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED)
        };
        if works != Ok(1) {
            return Err(DeviceError::Unsupported {
                op: "virtual memory management",
                backend: "hsa",
                reason: format!(
                    "{} reports no virtual memory API (HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED: {})",
                    agent.lib().name(),
                    match works {
                        Ok(_) => "false".to_owned(),
                        Err(e) => e.to_string(),
                    }
                ),
            });
        }
        Ok(HsaVirtualMemory {
            agent: agent.clone(),
            vmem,
        })
    }

    fn bytes(size: u64) -> Result<usize, DeviceError> {
        usize::try_from(size)
            .ok()
            .filter(|_| size <= MAX_BYTES)
            .ok_or_else(|| DeviceError::Vmm {
                what: "virtual memory",
                reason: format!("{size} bytes"),
            })
    }
}

impl VirtualMemory for HsaVirtualMemory {
    fn granularity(&self) -> u64 {
        granule(&self.agent)
    }

    fn reserve(&self, size: u64, alignment: u64, hint: u64) -> Result<u64, DeviceError> {
        let lib = self.agent.lib();
        let n = Self::bytes(size)?;
        let aligned = |base: u64| alignment <= 1 || base % alignment == 0;
        // SAFETY: the range is released with address_free.
        let va = unsafe { self.vmem.address_reserve(lib, n, hint, alignment) }
            .map_err(|e| self.agent.device_error("reserving address space", e))?;
        if aligned(va as u64) {
            return Ok(va as u64);
        }
        // ROCr before 6.2 reserves page-aligned only: reserve enough to hold an aligned range,
        // give it back and ask for the aligned address inside it (the runtime tries the
        // address asked for first). Another thread may take the range in between: then fail.
        // SAFETY: just reserved, nothing mapped.
        let _ = unsafe { self.vmem.address_free(lib, va, n) };
        let misaligned = |base: u64| {
            DeviceError::Vmm {
            what: "reserving address space",
            reason: format!(
                "the runtime reserved {base:#x}, not aligned to {alignment:#x} (hsa_amd_vmem_address_reserve_align is ROCr 6.2's)"
            ),
        }
        };
        let wide = size
            .checked_add(alignment)
            .filter(|w| *w <= MAX_BYTES)
            .ok_or_else(|| misaligned(va as u64))?;
        let wn = Self::bytes(wide)?;
        // SAFETY: as above.
        let outer = unsafe { self.vmem.address_reserve(lib, wn, 0, alignment) }
            .map_err(|e| self.agent.device_error("reserving address space", e))?;
        let want = (outer as u64).next_multiple_of(alignment);
        // SAFETY: just reserved, nothing mapped.
        let _ = unsafe { self.vmem.address_free(lib, outer, wn) };
        // SAFETY: as above.
        let va = unsafe { self.vmem.address_reserve(lib, n, want, alignment) }
            .map_err(|e| self.agent.device_error("reserving address space", e))?;
        if aligned(va as u64) {
            return Ok(va as u64);
        }
        // SAFETY: just reserved, nothing mapped.
        let _ = unsafe { self.vmem.address_free(lib, va, n) };
        Err(misaligned(va as u64))
    }

    fn free_reservation(&self, base: u64, size: u64) -> Result<(), DeviceError> {
        let n = Self::bytes(size)?;
        // SAFETY: the runtime passes a reservation's base and size with no mapping left.
        unsafe { self.vmem.address_free(self.agent.lib(), base as *mut _, n) }
            .map_err(|e| self.agent.device_error("freeing reserved address space", e))
    }

    fn create(&self, size: u64) -> Result<Arc<dyn PhysicalMemory>, DeviceError> {
        let n = Self::bytes(size)?;
        let pools = memory::pools(&self.agent)?;
        // SAFETY: the pool came from this runtime; the handle is released on drop.
        let handle = unsafe { self.vmem.handle_create(self.agent.lib(), pools.device(), n) }
            .map_err(|e| self.agent.device_error("creating physical memory", e))?;
        Ok(Arc::new(HsaPhysical {
            agent: self.agent.clone(),
            vmem: self.vmem,
            handle,
            size,
        }))
    }

    fn import(&self, fd: BorrowedFd<'_>) -> Result<Arc<dyn PhysicalMemory>, DeviceError> {
        // A dma-buf's size is where its end is.
        // SAFETY: lseek on a descriptor the caller lends; it only moves its offset.
        let end = unsafe { libc::lseek(fd.as_raw_fd(), 0, libc::SEEK_END) };
        let size = u64::try_from(end)
            .ok()
            .filter(|s| *s > 0)
            .ok_or_else(|| DeviceError::Vmm {
                what: "importing physical memory",
                reason: format!(
                    "descriptor {} has no size: {}",
                    fd.as_raw_fd(),
                    std::io::Error::last_os_error()
                ),
            })?;
        // SAFETY: the runtime reads the descriptor; the handle is released on drop.
        let handle = unsafe { self.vmem.import(self.agent.lib(), fd.as_raw_fd()) }
            .map_err(|e| self.agent.device_error("importing physical memory", e))?;
        Ok(Arc::new(HsaPhysical {
            agent: self.agent.clone(),
            vmem: self.vmem,
            handle,
            size,
        }))
    }

    fn map(
        &self,
        va: u64,
        size: u64,
        physical: &Arc<dyn PhysicalMemory>,
        offset: u64,
    ) -> Result<(), DeviceError> {
        let p = physical
            .as_any()
            .downcast_ref::<HsaPhysical>()
            .ok_or_else(|| DeviceError::Vmm {
                what: "mapping",
                reason: "physical memory of another backend".into(),
            })?;
        if offset != 0 {
            // ROCr maps from the memory's first byte whatever the offset (VMemoryHandleMap).
            return Err(DeviceError::Unsupported {
                op: "mapping physical memory at an offset",
                backend: "hsa",
                reason: format!("offset {offset:#x}: ROCr ignores hsa_amd_vmem_map's in_offset"),
            });
        }
        let (n, off) = (Self::bytes(size)?, Self::bytes(offset)?);
        // SAFETY: the runtime checked the range is inside a reservation and over no mapping;
        // the handle is live while `physical` is, which the mapping holds.
        unsafe {
            self.vmem
                .map(self.agent.lib(), va as *mut _, n, off, p.handle)
        }
        .map_err(|e| self.agent.device_error("mapping physical memory", e))
    }

    fn unmap(&self, va: u64, size: u64) -> Result<(), DeviceError> {
        let n = Self::bytes(size)?;
        // SAFETY: the runtime passes a whole mapping after the devices with access finished.
        unsafe { self.vmem.unmap(self.agent.lib(), va as *mut _, n) }
            .map_err(|e| self.agent.device_error("unmapping", e))
    }

    fn set_access(&self, va: u64, size: u64, access: Access) -> Result<(), DeviceError> {
        let n = Self::bytes(size)?;
        let table = self.agent.allocations();
        let permission = match access {
            Access::None => HSA_ACCESS_PERMISSION_NONE,
            Access::Read => HSA_ACCESS_PERMISSION_RO,
            Access::ReadWrite => HSA_ACCESS_PERMISSION_RW,
        };
        table.remove(va, true);
        // SAFETY: the runtime passes whole mappings; the agent is this runtime's.
        unsafe {
            self.vmem.set_access(
                self.agent.lib(),
                va as *mut _,
                n,
                self.agent.handle(),
                permission,
            )
        }
        .map_err(|e| self.agent.device_error("setting access", e))?;
        if access != Access::None {
            table
                .insert(va, size, MemoryKind::Mapped, access == Access::ReadWrite)
                .map_err(|e| DeviceError::Vmm {
                    what: "setting access",
                    reason: e.to_string(),
                })?;
        }
        Ok(())
    }
}

impl HsaAgent {
    /// See [`Device::ipc_export`].
    pub(super) fn hsa_ipc_export(&self, address: u64) -> Result<IpcHandle, DeviceError> {
        let table = self.allocations();
        let allocation = match table.find(address) {
            Some(a) if a.kind == MemoryKind::Device => a,
            Some(a) => {
                return Err(DeviceError::InvalidAddress {
                    address,
                    detail: Some(format!("inside {a}, not device memory from hipMalloc")),
                })
            }
            None => return Err(table.not_freeable(address)),
        };
        let g = granule(self);
        let len = allocation
            .size
            .checked_next_multiple_of(g)
            .and_then(|l| usize::try_from(l).ok())
            .ok_or_else(|| DeviceError::Vmm {
                what: "IPC memory handle",
                reason: format!("{allocation} is too large"),
            })?;
        // SAFETY: the allocation came from this agent's pool, which allocates whole granules.
        let raw = unsafe { result::ipc_memory_create(self.lib(), allocation.base as *mut _, len) }
            .map_err(|e| self.device_error("making an IPC memory handle", e))?;
        let mut handle = IpcHandle::new(IpcKind::Memory, IpcBackend::Hsa);
        let bytes: Vec<u8> = raw.handle.iter().flat_map(|w| w.to_le_bytes()).collect();
        handle.put_bytes(0, &bytes);
        handle.put_u64(SIZE, allocation.size);
        handle.put_u64(POINTER_OFFSET, address - allocation.base);
        Ok(handle)
    }

    /// See [`Device::ipc_open`].
    pub(super) fn hsa_ipc_open(&self, handle: &IpcHandle) -> Result<u64, DeviceError> {
        let what = "IPC memory handle";
        handle.check(IpcKind::Memory, IpcBackend::Hsa)?;
        let mut opened = self.0.ipc.lock();
        if let Some(&pointer) = opened.by_handle.get(&handle.0) {
            if let Some(a) = opened.by_pointer.get_mut(&pointer) {
                a.count += 1;
                return Ok(pointer);
            }
        }
        let (size, offset) = (handle.u64_at(SIZE), handle.u64_at(POINTER_OFFSET));
        if size == 0 || size > MAX_BYTES || offset >= size {
            return Err(DeviceError::Vmm {
                what,
                reason: format!("a pointer {offset} bytes into a {size}-byte allocation"),
            });
        }
        let mut raw = hsa_amd_ipc_memory_t { handle: [0; 8] };
        for (i, w) in raw.handle.iter_mut().enumerate() {
            let b = handle.bytes_at(4 * i, 4);
            *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        // SAFETY: the agent is this runtime's; the mapping is detached at the last close.
        let ptr =
            unsafe { result::ipc_memory_attach(self.lib(), &raw, size as usize, &[self.handle()]) }
                .map_err(|e| self.device_error("attaching IPC memory", e))?;
        let base = ptr as u64;
        self.allocations()
            .insert(base, size, MemoryKind::Imported, true)
            .map_err(|e| DeviceError::Vmm {
                what,
                reason: e.to_string(),
            })?;
        let pointer = base + offset;
        opened.by_handle.insert(handle.0, pointer);
        opened.by_pointer.insert(
            pointer,
            Attached {
                handle: handle.0,
                base,
                count: 1,
            },
        );
        Ok(pointer)
    }

    /// See [`Device::ipc_close`].
    pub(super) fn hsa_ipc_close(&self, address: u64) -> Result<(), DeviceError> {
        let mut opened = self.0.ipc.lock();
        let Some(a) = opened.by_pointer.get_mut(&address) else {
            return Err(DeviceError::InvalidAddress {
                address,
                detail: Some("not a pointer hipIpcOpenMemHandle returned".into()),
            });
        };
        a.count -= 1;
        if a.count > 0 {
            return Ok(());
        }
        let Some(a) = opened.by_pointer.remove(&address) else {
            return Ok(());
        };
        opened.by_handle.remove(&a.handle);
        self.allocations().remove(a.base, true);
        // SAFETY: attached by `hsa_ipc_open`; the runtime synchronised the device first.
        unsafe { result::ipc_memory_detach(self.lib(), a.base as *mut _) }
            .map_err(|e| self.device_error("detaching IPC memory", e))
    }
}
