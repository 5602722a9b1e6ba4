//! Virtual memory management and IPC memory on the software agent, over the host's memory
//! objects and reservations (`crate::device::shared`), with ROCr's rules for what may be done
//! in which state (`hsa_amd_vmem_*`: a mapping lies inside one reservation and over no other;
//! a reservation is freed whole, by its base and size, once it has no mappings; a mapping is
//! unmapped whole):
//!
//! - physical memory ([`SoftPhysical`]) is a memory object, so another process can map it
//!   (exported as a descriptor) and two mappings of it share their bytes;
//! - reservations and mappings are the process's ([`SoftAddressSpace::global`]), shared by
//!   every software agent, as ROCr's are shared by every agent;
//! - access is per device: a device given access gets the range in its allocation table (with
//!   write permission only for read-write access), so its kernels, copies and the memory checker
//!   see it; access taken away (or never given) leaves the range out, so a kernel that touches it
//!   faults with a report and the host is never touched. The host's page protection is the widest
//!   access any device has (nothing accessible stays `PROT_NONE`, so a copy from the host side
//!   is refused too). Taking access away returns only once no running dispatch can touch the
//!   range; unmapping needs every device's access gone;
//! - IPC memory handles name the exporting process, the descriptor of the memory object holding
//!   the allocation (every `hipMalloc` on the software agent is in one, `memory`), a random
//!   token, the allocation's offset and size in the object and the pointer's offset in the
//!   allocation; opening one maps those pages and enters exactly the allocation's bytes in the
//!   opening device's table.

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::memory::DeviceBudget;
use super::SoftAgent;
use crate::device::shared::{page_size, Mapping, MemoryObject, Protection, Reservation, MAX_BYTES};
use crate::device::vmm::{
    Access, IpcBackend, IpcHandle, IpcKind, PhysicalMemory, RemoteObject, VirtualMemory,
};
use crate::device::{DeviceError, MemoryKind};

/// Physical memory of the software agent: a memory object, counted against the device memory
/// of the agent that created it until its last handle and mapping are gone.
#[derive(Debug)]
pub struct SoftPhysical {
    pub(super) object: MemoryObject,
    /// The budget it was charged to and the bytes (none for memory imported from a
    /// descriptor: another allocation's bytes).
    charge: Option<(Arc<DeviceBudget>, u64)>,
}

impl SoftPhysical {
    /// Memory imported from a descriptor: another allocation's bytes, charged to no budget.
    pub(super) fn imported(object: MemoryObject) -> Self {
        SoftPhysical {
            object,
            charge: None,
        }
    }
}

impl Drop for SoftPhysical {
    fn drop(&mut self) {
        if let Some((budget, bytes)) = self.charge.take() {
            budget.give_back(bytes);
        }
    }
}

impl PhysicalMemory for SoftPhysical {
    fn size(&self) -> u64 {
        self.object.size()
    }

    fn export(&self) -> Result<OwnedFd, DeviceError> {
        self.object.export().map_err(DeviceError::Shared)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A mapping of physical memory at a reserved address, with each device's access.
#[derive(Debug)]
struct Mapped {
    size: u64,
    /// Keeps the physical memory alive while mapped (its handle may be released first).
    _physical: Arc<dyn PhysicalMemory>,
    /// Access by device (its state's address), absent for none.
    access: HashMap<usize, Access>,
}

impl Mapped {
    /// The widest access any device has: the host's page protection.
    fn host_access(&self) -> Access {
        self.access
            .values()
            .fold(Access::None, |wide, a| wide.union(*a))
    }
}

/// The process's reservations and mappings, shared by every software agent.
#[derive(Debug, Default)]
pub struct SoftAddressSpace {
    state: Mutex<SpaceState>,
}

#[derive(Debug, Default)]
struct SpaceState {
    reservations: BTreeMap<u64, Reservation>,
    mappings: BTreeMap<u64, Mapped>,
}

impl SpaceState {
    /// The reservation holding `[va, va + size)`.
    fn reservation_of(&self, va: u64, size: u64) -> Option<&Reservation> {
        self.reservations
            .range(..=va)
            .next_back()
            .map(|(_, r)| r)
            .filter(|r| r.contains(va, size))
    }

    /// The mapping at exactly `va` of exactly `size` bytes.
    fn mapping(
        &mut self,
        what: &'static str,
        va: u64,
        size: u64,
    ) -> Result<&mut Mapped, DeviceError> {
        match self.mappings.get_mut(&va) {
            Some(m) if m.size == size => Ok(m),
            Some(m) => Err(DeviceError::Vmm {
                what,
                reason: format!(
                    "the mapping at {va:#x} is {:#x} bytes, not {size:#x}",
                    m.size
                ),
            }),
            None => Err(DeviceError::Vmm {
                what,
                reason: format!("no mapping starts at {va:#x}"),
            }),
        }
    }
}

fn protection(access: Access) -> Protection {
    match access {
        Access::None => Protection::None,
        Access::Read => Protection::Read,
        Access::ReadWrite => Protection::ReadWrite,
    }
}

impl SoftAddressSpace {
    /// The process's address space, which every software agent's virtual memory uses.
    pub fn global() -> Arc<SoftAddressSpace> {
        static GLOBAL: OnceLock<Arc<SoftAddressSpace>> = OnceLock::new();
        GLOBAL.get_or_init(Arc::default).clone()
    }
}

/// One software agent's view of an address space.
#[derive(Debug, Clone)]
pub struct SoftVirtualMemory {
    space: Arc<SoftAddressSpace>,
    device: SoftAgent,
}

impl SoftVirtualMemory {
    /// `device`'s view of `space`.
    pub fn new(space: Arc<SoftAddressSpace>, device: SoftAgent) -> SoftVirtualMemory {
        SoftVirtualMemory { space, device }
    }

    fn key(&self) -> usize {
        Arc::as_ptr(&self.device.state) as usize
    }
}

impl SoftVirtualMemory {
    /// Gives the host (not a device) `access` to the mapping at `va` of `size` bytes: the
    /// software HSA library's CPU agent (`hsa_amd_vmem_set_access` for a CPU agent). The host's
    /// page protection stays the widest access anyone has, devices included; no table changes.
    ///
    /// # Errors
    /// [`DeviceError::Vmm`] for an address and size that are not one mapping's.
    pub fn set_host_access(&self, va: u64, size: u64, access: Access) -> Result<(), DeviceError> {
        self.set_access_for(HOST_KEY, None, va, size, access)
    }

    /// [`VirtualMemory::set_access`] for `key` (a device's state, or [`HOST_KEY`]), entering the
    /// range in `table` (the device's) when there is one.
    fn set_access_for(
        &self,
        key: usize,
        table: Option<&crate::device::AllocationTable>,
        va: u64,
        size: u64,
        access: Access,
    ) -> Result<(), DeviceError> {
        let what = "setting access";
        let mut st = self.space.state.lock();
        let m = st.mapping(what, va, size)?;
        let old = m.access.get(&key).copied().unwrap_or(Access::None);
        if old == access {
            return Ok(());
        }
        let host_before = m.host_access();
        // Narrower for this device: what its running work was approved for must end first.
        let narrowing = old.union(access) == old;
        if old != Access::None {
            // Out of this device's reach first: new accesses fault from here on.
            if let Some(t) = table {
                t.remove(va, true);
            }
        }
        if access == Access::None {
            m.access.remove(&key);
        } else {
            m.access.insert(key, access);
        }
        let host_after = m.host_access();
        if narrowing && table.is_some() {
            self.device.wait_for_running_dispatches();
        }
        if host_after != host_before {
            let reservation = st
                .reservation_of(va, size)
                .ok_or_else(|| DeviceError::Vmm {
                    what,
                    reason: format!("{va:#x}+{size:#x} is in no reservation"),
                })?;
            reservation
                .protect(va, size, protection(host_after))
                .map_err(DeviceError::Shared)?;
        }
        if let (Some(t), true) = (table, access != Access::None) {
            t.insert(va, size, MemoryKind::Mapped, access == Access::ReadWrite)
                .map_err(|e| DeviceError::Vmm {
                    what,
                    reason: e.to_string(),
                })?;
        }
        tracing::debug!(va = format_args!("{va:#x}"), size, %access, host = table.is_none(), "access set");
        Ok(())
    }
}

/// The access key of the host (no device state lives at address 0).
const HOST_KEY: usize = 0;

impl VirtualMemory for SoftVirtualMemory {
    fn granularity(&self) -> u64 {
        page_size()
    }

    fn reserve(&self, size: u64, alignment: u64, hint: u64) -> Result<u64, DeviceError> {
        let r = Reservation::new(size, alignment, hint).map_err(DeviceError::Shared)?;
        let base = r.base();
        self.space.state.lock().reservations.insert(base, r);
        tracing::debug!(
            base = format_args!("{base:#x}"),
            size,
            "address range reserved"
        );
        Ok(base)
    }

    fn free_reservation(&self, base: u64, size: u64) -> Result<(), DeviceError> {
        let what = "freeing a reservation";
        let mut st = self.space.state.lock();
        let Some(r) = st.reservations.get(&base) else {
            return Err(DeviceError::Vmm {
                what,
                reason: format!("no reservation starts at {base:#x}"),
            });
        };
        if r.len() != size {
            return Err(DeviceError::Vmm {
                what,
                reason: format!(
                    "the reservation at {base:#x} is {:#x} bytes, not {size:#x}",
                    r.len()
                ),
            });
        }
        let end = base + r.len();
        let mapped = st.mappings.range(base..end).count();
        if mapped > 0 {
            return Err(DeviceError::Vmm {
                what,
                reason: format!(
                    "the reservation at {base:#x} still has {mapped} mapping(s): unmap them first"
                ),
            });
        }
        st.reservations.remove(&base);
        tracing::debug!(base = format_args!("{base:#x}"), size, "reservation freed");
        Ok(())
    }

    fn create(&self, size: u64) -> Result<Arc<dyn PhysicalMemory>, DeviceError> {
        let budget = self.device.state.memory.budget().clone();
        budget.take(size, MemoryKind::Mapped)?;
        let object = MemoryObject::create(size).map_err(|e| {
            budget.give_back(size);
            match e {
                e if e.is_exhaustion() => DeviceError::OutOfMemory {
                    size,
                    kind: MemoryKind::Mapped,
                },
                e => DeviceError::Shared(e),
            }
        })?;
        Ok(Arc::new(SoftPhysical {
            object,
            charge: Some((budget, size)),
        }))
    }

    fn import(&self, fd: BorrowedFd<'_>) -> Result<Arc<dyn PhysicalMemory>, DeviceError> {
        let object = MemoryObject::import(fd).map_err(DeviceError::Shared)?;
        Ok(Arc::new(SoftPhysical::imported(object)))
    }

    fn map(
        &self,
        va: u64,
        size: u64,
        physical: &Arc<dyn PhysicalMemory>,
        offset: u64,
    ) -> Result<(), DeviceError> {
        let what = "mapping";
        let soft = physical
            .as_any()
            .downcast_ref::<SoftPhysical>()
            .ok_or_else(|| DeviceError::Vmm {
                what,
                reason: "physical memory of another backend".into(),
            })?;
        let mut st = self.space.state.lock();
        let end = va.checked_add(size).ok_or_else(|| DeviceError::Vmm {
            what,
            reason: format!("{va:#x}+{size:#x} wraps the address space"),
        })?;
        let Some(reservation) = st.reservation_of(va, size) else {
            return Err(DeviceError::Vmm {
                what,
                reason: format!("{va:#x}+{size:#x} is not inside one reserved address range"),
            });
        };
        let over = st
            .mappings
            .range(..end)
            .next_back()
            .filter(|(at, m)| **at + m.size > va);
        if let Some((at, m)) = over {
            return Err(DeviceError::Vmm {
                what,
                reason: format!(
                    "{va:#x}+{size:#x} overlaps the mapping at {at:#x}+{:#x}",
                    m.size
                ),
            });
        }
        reservation
            .map_fixed(va, size, &soft.object, offset, Protection::None)
            .map_err(DeviceError::Shared)?;
        st.mappings.insert(
            va,
            Mapped {
                size,
                _physical: physical.clone(),
                access: HashMap::new(),
            },
        );
        tracing::debug!(
            va = format_args!("{va:#x}"),
            size,
            offset,
            "physical memory mapped"
        );
        Ok(())
    }

    fn unmap(&self, va: u64, size: u64) -> Result<(), DeviceError> {
        let what = "unmapping";
        let mut st = self.space.state.lock();
        let m = st.mapping(what, va, size)?;
        if m.host_access() != Access::None || !m.access.is_empty() {
            return Err(DeviceError::Vmm {
                what,
                reason: format!(
                    "{} device(s) still have access to {va:#x}+{size:#x}",
                    m.access.len()
                ),
            });
        }
        let reservation = st
            .reservation_of(va, size)
            .ok_or_else(|| DeviceError::Vmm {
                what,
                reason: format!("{va:#x}+{size:#x} is in no reservation"),
            })?;
        reservation
            .unmap_fixed(va, size)
            .map_err(DeviceError::Shared)?;
        st.mappings.remove(&va);
        tracing::debug!(va = format_args!("{va:#x}"), size, "unmapped");
        Ok(())
    }

    fn set_access(&self, va: u64, size: u64, access: Access) -> Result<(), DeviceError> {
        self.set_access_for(self.key(), Some(&self.device.state.table), va, size, access)
    }
}

/// IPC memory this device opened: by the pointer `ipc_open` returned.
#[derive(Debug, Default)]
pub struct IpcOpened {
    by_pointer: HashMap<u64, Opened>,
    by_handle: HashMap<[u8; 64], u64>,
}

#[derive(Debug)]
struct Opened {
    handle: [u8; 64],
    /// Where the allocation starts (what the table records).
    base: u64,
    count: u64,
    mapping: Mapping,
    _object: MemoryObject,
}

/// Handle payload offsets after the remote object (see `crate::device::vmm::RemoteObject`).
const FD_OFFSET: usize = 16;
const SIZE: usize = 24;
const POINTER_OFFSET: usize = 32;

impl SoftAgent {
    /// See [`crate::device::Device::ipc_export`].
    pub(super) fn soft_ipc_export(&self, address: u64) -> Result<IpcHandle, DeviceError> {
        let table = &self.state.table;
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
        let (object, fd_offset) = self.state.memory.object(allocation.base)?;
        let mut handle = IpcHandle::new(IpcKind::Memory, IpcBackend::Soft);
        RemoteObject {
            pid: std::process::id(),
            fd: object.fd().as_raw_fd(),
            token: object.token(),
        }
        .put(&mut handle);
        handle.put_u64(FD_OFFSET, fd_offset);
        handle.put_u64(SIZE, allocation.size);
        handle.put_u64(POINTER_OFFSET, address - allocation.base);
        tracing::debug!(%allocation, "IPC handle made");
        Ok(handle)
    }

    /// See [`crate::device::Device::ipc_open`].
    pub(super) fn soft_ipc_open(&self, handle: &IpcHandle) -> Result<u64, DeviceError> {
        let what = "IPC memory handle";
        handle.check(IpcKind::Memory, IpcBackend::Soft)?;
        let mut opened = self.state.ipc.lock();
        if let Some(&pointer) = opened.by_handle.get(&handle.0) {
            if let Some(o) = opened.by_pointer.get_mut(&pointer) {
                o.count += 1;
                return Ok(pointer);
            }
        }
        let remote = RemoteObject::read(handle);
        let (fd_offset, size, offset) = (
            handle.u64_at(FD_OFFSET),
            handle.u64_at(SIZE),
            handle.u64_at(POINTER_OFFSET),
        );
        let refuse = |reason: String| DeviceError::Vmm { what, reason };
        if size == 0 || size > MAX_BYTES {
            return Err(refuse(format!("an allocation of {size} bytes")));
        }
        if offset >= size {
            return Err(refuse(format!(
                "a pointer {offset} bytes into a {size}-byte allocation"
            )));
        }
        let page = page_size();
        let start = fd_offset - fd_offset % page;
        let end = fd_offset
            .checked_add(size)
            .and_then(|e| e.checked_next_multiple_of(page))
            .ok_or_else(|| refuse(format!("offset {fd_offset:#x} and size {size:#x} wrap")))?;
        // The sizes are checked against the object's real size before anything is mapped.
        let object = MemoryObject::open_remote(remote.pid, remote.fd, remote.token)
            .map_err(DeviceError::Shared)?;
        let mapping = object
            .map(start, end - start)
            .map_err(DeviceError::Shared)?;
        let base = mapping.base() + (fd_offset - start);
        self.state
            .table
            .insert(base, size, MemoryKind::Imported, true)
            .map_err(|e| refuse(e.to_string()))?;
        let pointer = base + offset;
        opened.by_handle.insert(handle.0, pointer);
        opened.by_pointer.insert(
            pointer,
            Opened {
                handle: handle.0,
                base,
                count: 1,
                mapping,
                _object: object,
            },
        );
        tracing::debug!(
            pid = remote.pid,
            base = format_args!("{base:#x}"),
            size,
            "IPC memory opened"
        );
        Ok(pointer)
    }

    /// See [`crate::device::Device::ipc_close`].
    pub(super) fn soft_ipc_close(&self, address: u64) -> Result<(), DeviceError> {
        let mut opened = self.state.ipc.lock();
        let Some(o) = opened.by_pointer.get_mut(&address) else {
            return Err(DeviceError::InvalidAddress {
                address,
                detail: Some(
                    "not a pointer hipIpcOpenMemHandle returned (or closed already)".into(),
                ),
            });
        };
        o.count -= 1;
        if o.count > 0 {
            return Ok(());
        }
        let Some(o) = opened.by_pointer.remove(&address) else {
            return Ok(());
        };
        opened.by_handle.remove(&o.handle);
        drop(opened);
        self.state.table.remove(o.base, true);
        // Unmapped once the dispatches that could still reach it have ended.
        let epochs = self.state.memory.epochs();
        let mark = epochs.mark();
        let bytes = o.mapping.len();
        epochs.release_after(mark, Box::new(o), bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::memory::ViolationReason;
    use crate::device::{AccessKind, Device};

    fn agent() -> SoftAgent {
        SoftAgent::new("gfx1030".parse().unwrap())
    }

    fn read(at: u64) -> u32 {
        // SAFETY: the tests read only ranges they made readable.
        unsafe { std::ptr::read_volatile(at as *const u32) }
    }

    /// Reserve, create, map twice, give access: both views share bytes, the device's table
    /// holds exactly the accessible ranges with their permissions, and access taken away or an
    /// unmap leaves faults (with the mapping named), never host accesses.
    #[test]
    fn mappings_enter_the_table_with_their_access() {
        let a = agent();
        let vm = SoftVirtualMemory::new(Arc::new(SoftAddressSpace::default()), a.clone());
        let page = vm.granularity();
        let base = vm.reserve(8 * page, 0, 0).unwrap();
        let phys = vm.create(2 * page).unwrap();
        vm.map(base, 2 * page, &phys, 0).unwrap();
        vm.map(base + 4 * page, 2 * page, &phys, 0).unwrap();
        // Mapped but inaccessible: nothing in the table, and the host pages are PROT_NONE.
        assert!(a.allocations().find(base).is_none());
        assert!(crate::device::host_memory::check_mapped(base, 4, false).is_err());
        vm.set_access(base, 2 * page, Access::ReadWrite).unwrap();
        vm.set_access(base + 4 * page, 2 * page, Access::Read)
            .unwrap();
        let t = a.allocations();
        assert!(t.check(base, 8, AccessKind::Write).is_ok());
        let ro = t.check(base + 4 * page, 8, AccessKind::Write).unwrap_err();
        assert!(matches!(ro.reason, ViolationReason::ReadOnly(_)), "{ro}");
        assert!(t.check(base + 4 * page, 8, AccessKind::Read).is_ok());
        // Writes through one view are seen through the other (a device copy, checked).
        let value = 0x1234_5678u32.to_le_bytes();
        // SAFETY: the host side is the test's own 4 bytes; the device side is checked.
        unsafe { a.copy(base + 12, value.as_ptr() as u64, 4).unwrap() };
        assert_eq!(read(base + 4 * page + 12), 0x1234_5678);
        // Overlaps, ranges outside reservations and wrong sizes are refused.
        assert!(vm.map(base + page, 2 * page, &phys, 0).is_err());
        assert!(vm.map(base + 7 * page, 2 * page, &phys, 0).is_err());
        assert!(
            vm.map(base + 2 * page, page, &phys, 2 * page).is_err(),
            "past the physical end"
        );
        assert!(vm.set_access(base, page, Access::Read).is_err());
        assert!(
            vm.unmap(base, 2 * page).is_err(),
            "a device still has access"
        );
        assert!(
            vm.free_reservation(base, 8 * page).is_err(),
            "mappings remain"
        );
        // Access taken away: the checker refuses, naming the mapping.
        vm.set_access(base, 2 * page, Access::None).unwrap();
        let gone = t.check(base, 4, AccessKind::Read).unwrap_err();
        assert!(
            matches!(gone.reason, ViolationReason::Freed(ref m) if m.kind == MemoryKind::Mapped),
            "{gone}"
        );
        vm.unmap(base, 2 * page).unwrap();
        vm.set_access(base + 4 * page, 2 * page, Access::None)
            .unwrap();
        vm.unmap(base + 4 * page, 2 * page).unwrap();
        assert!(vm.unmap(base + 4 * page, 2 * page).is_err(), "twice");
        assert!(
            vm.free_reservation(base, 4 * page).is_err(),
            "the wrong size"
        );
        vm.free_reservation(base, 8 * page).unwrap();
        assert!(vm.free_reservation(base, 8 * page).is_err(), "twice");
    }

    /// Host access alone (the software HSA library's CPU agent): the pages become readable
    /// (and writable) by the host, no device's table gets the range, and the host keeps the
    /// widest access anyone has when a device's access goes.
    #[test]
    fn host_access_protects_the_pages_and_no_table() {
        let a = agent();
        let vm = SoftVirtualMemory::new(Arc::new(SoftAddressSpace::default()), a.clone());
        let page = vm.granularity();
        let base = vm.reserve(2 * page, 0, 0).unwrap();
        let phys = vm.create(page).unwrap();
        vm.map(base, page, &phys, 0).unwrap();
        assert!(crate::device::host_memory::check_mapped(base, 4, false).is_err());
        vm.set_host_access(base, page, Access::Read).unwrap();
        assert!(crate::device::host_memory::check_mapped(base, 4, false).is_ok());
        assert!(crate::device::host_memory::check_mapped(base, 4, true).is_err());
        assert!(a.allocations().find(base).is_none(), "no device got it");
        vm.set_access(base, page, Access::ReadWrite).unwrap();
        vm.set_host_access(base, page, Access::None).unwrap();
        assert!(
            crate::device::host_memory::check_mapped(base, 4, true).is_ok(),
            "the device's access keeps the host's protection"
        );
        assert!(vm.unmap(base, page).is_err(), "the device still has access");
        vm.set_access(base, page, Access::None).unwrap();
        assert!(crate::device::host_memory::check_mapped(base, 4, false).is_err());
        assert!(vm.set_host_access(base + page, page, Access::Read).is_err());
        vm.unmap(base, page).unwrap();
        vm.free_reservation(base, 2 * page).unwrap();
    }

    /// A device allocation exported as an IPC handle and opened (here in the same process,
    /// through /proc like another process would) is the same memory; the opened range is
    /// exactly the allocation; a closed one faults; forged handles are refused.
    #[test]
    fn ipc_handles_open_the_same_memory() {
        let a = agent();
        for size in [100u64, 3 * 65536 + 10] {
            let buf = a.allocate(size, MemoryKind::Device).unwrap();
            let handle = a.ipc_export(buf.base + 4).unwrap();
            let p = a.ipc_open(&handle).unwrap();
            assert_ne!(p, buf.base + 4);
            assert_eq!(
                a.ipc_open(&handle).unwrap(),
                p,
                "opened again: the same pointer"
            );
            let value = 77u32.to_le_bytes();
            // SAFETY: the host side is the test's own; the device side is checked.
            unsafe { a.copy(buf.base + 8, value.as_ptr() as u64, 4).unwrap() };
            assert_eq!(read(p + 4), 77);
            let opened = a.allocations().find(p).unwrap();
            assert_eq!((opened.base, opened.size), (p - 4, size));
            assert!(a
                .allocations()
                .check(p - 4 + size, 1, AccessKind::Read)
                .is_err());
            a.ipc_close(p).unwrap();
            assert!(a.allocations().find(p).is_some(), "still open once");
            a.ipc_close(p).unwrap();
            assert!(a.allocations().check(p, 4, AccessKind::Read).is_err());
            assert!(a.ipc_close(p).is_err());
            a.free(buf.base).unwrap();
        }
        let buf = a.allocate(64, MemoryKind::Device).unwrap();
        let good = a.ipc_export(buf.base).unwrap();
        let mut forged = good;
        forged.put_u64(SIZE, MAX_BYTES + 1);
        assert!(a.ipc_open(&forged).is_err());
        let mut forged = good;
        forged.put_u64(SIZE, 1 << 21);
        let e = a.ipc_open(&forged).unwrap_err();
        assert!(e.to_string().contains("past the end"), "{e}");
        let mut forged = good;
        forged.put_u64(8, 12345);
        assert!(a
            .ipc_open(&forged)
            .unwrap_err()
            .to_string()
            .contains("recycled"));
        let mut forged = good;
        forged.put_u64(POINTER_OFFSET, 64);
        assert!(a.ipc_open(&forged).is_err());
        assert!(a.ipc_open(&IpcHandle([0; 64])).is_err());
        let pinned = a.allocate(64, MemoryKind::PinnedHost).unwrap();
        assert!(a.ipc_export(pinned.base).is_err());
        assert!(a.ipc_export(0x10).is_err());
    }
}
