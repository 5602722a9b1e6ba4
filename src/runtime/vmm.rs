//! HIP's virtual memory management and IPC memory across the runtime's devices: allocation
//! handles with HIP's reference counts, reservations, mappings and each device's access, in
//! the orders HIP allows and with its refusals for the others; and IPC memory handles.
//!
//! The rules (clr's `hip_vm.cpp` and ROCr's `hsa_amd_vmem_*`, CUDA's driver API where HIP
//! follows it):
//! - an allocation handle (`hipMemCreate`, `hipMemImportFromShareableHandle`) holds one
//!   reference; `hipMemRetainAllocationHandle` adds one, `hipMemRelease` drops one. The memory
//!   lives while a reference or a mapping does: a handle may be released while mapped, and the
//!   memory goes when the last mapping is unmapped. A handle with no reference left is invalid
//!   for every call, even while its memory is still mapped;
//! - `hipMemMap` maps a whole granule-aligned part of an allocation inside one reservation and
//!   over no other mapping; nothing can reach it until `hipMemSetAccess` gives a device access;
//! - `hipMemSetAccess` and `hipMemUnmap` take ranges made of whole mappings, contiguous from
//!   the range's start to its end; unmapping waits for the devices that had access (as `hipFree`
//!   waits) and takes every device's access away first;
//! - `hipMemAddressFree` takes a reservation's base and size and refuses while it has mappings.
//!
//! What differs from clr 5.x's `hip_vm.cpp`, on purpose: it refuses a non-zero offset in
//! `hipMemMap` (ROCr and CUDA take granule-aligned offsets, as here); its `hipMemAddressFree`
//! returned success when ROCr refused (here the refusal is reported); its
//! `hipMemRetainAllocationHandle` counts no reference (CUDA's does, and a retained handle is to
//! be released, as here: a program that never releases it keeps the memory until exit, never
//! loses it early). IPC memory handles name a whole device allocation and the pointer's offset
//! in it, as clr's since 5.3.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{Runtime, RuntimeError, RuntimeResult};
use crate::device::vmm::{Access, IpcHandle, PhysicalMemory, VirtualMemory};
use crate::device::MemoryKind;

/// What the program asked for when it made an allocation (`hipMemAllocationProp`), kept for
/// `hipMemGetAllocationPropertiesFromHandle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AllocationProps {
    /// The device it is on.
    pub device: usize,
    /// `hipMemAllocationHandleType` asked for (0: none, 1: POSIX file descriptor).
    pub handle_type: u32,
    /// `compressionType`, as given.
    pub compression: u8,
    /// `usage`, as given.
    pub usage: u16,
    /// Opaque to the runtime: which C layout the properties came in (the C ABI writes them
    /// back the same way).
    pub layout: u8,
}

/// `hipMemHandleTypePosixFileDescriptor`.
pub const HANDLE_TYPE_POSIX_FD: u32 = 1;

#[derive(Debug)]
struct Handle {
    physical: Arc<dyn PhysicalMemory>,
    props: AllocationProps,
    /// References the program holds (create, import and retain add one; release drops one).
    refs: u64,
    /// Mappings of it.
    mapped: u64,
}

#[derive(Debug)]
struct Reserved {
    size: u64,
    /// The device whose virtual memory made it (any device of the backend would do).
    device: usize,
}

#[derive(Debug)]
struct Mapped {
    size: u64,
    handle: u64,
    /// Devices with access, and which.
    access: BTreeMap<usize, Access>,
}

/// The runtime's virtual memory bookkeeping.
#[derive(Debug, Default)]
pub struct VmmState {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    handles: HashMap<u64, Handle>,
    reservations: BTreeMap<u64, Reserved>,
    mappings: BTreeMap<u64, Mapped>,
}

/// Allocation handles look like this plus a counter, so a small integer, another kind of
/// handle or a stale value does not name one by accident (they are never reused).
const HANDLE_BASE: u64 = 0x564d_4d00_0000_0000;

fn refuse(what: &'static str, reason: impl Into<String>) -> RuntimeError {
    RuntimeError::Vmm {
        what,
        reason: reason.into(),
    }
}

impl Inner {
    fn handle(&mut self, what: &'static str, id: u64) -> RuntimeResult<&mut Handle> {
        match self.handles.get_mut(&id) {
            Some(h) if h.refs > 0 => Ok(h),
            Some(_) => Err(refuse(
                what,
                format!("allocation handle {id:#x} was released"),
            )),
            None => Err(refuse(what, format!("{id:#x} is not an allocation handle"))),
        }
    }

    /// The mappings making up exactly `[va, va + size)`, contiguous from `va`.
    fn whole_mappings(&self, what: &'static str, va: u64, size: u64) -> RuntimeResult<Vec<u64>> {
        let end = va
            .checked_add(size)
            .ok_or_else(|| refuse(what, format!("{va:#x}+{size:#x} wraps")))?;
        let mut at = va;
        let mut found = Vec::new();
        while at < end {
            let Some(m) = self.mappings.get(&at) else {
                return Err(refuse(
                    what,
                    if at == va {
                        format!("no mapping starts at {va:#x}")
                    } else {
                        format!("{va:#x}+{size:#x} is not made of whole mappings: none starts at {at:#x}")
                    },
                ));
            };
            found.push(at);
            at += m.size;
        }
        if at != end {
            return Err(refuse(
                what,
                format!("{va:#x}+{size:#x} ends inside the mapping that ends at {at:#x}"),
            ));
        }
        Ok(found)
    }

    /// The mapping holding `address`.
    fn mapping_at(&self, address: u64) -> Option<(u64, &Mapped)> {
        self.mappings
            .range(..=address)
            .next_back()
            .filter(|(at, m)| address - **at < m.size)
            .map(|(at, m)| (*at, m))
    }

    /// Drops a handle whose last reference and mapping are gone.
    fn collect(&mut self, id: u64) {
        if self
            .handles
            .get(&id)
            .is_some_and(|h| h.refs == 0 && h.mapped == 0)
        {
            self.handles.remove(&id);
            tracing::debug!(handle = format_args!("{id:#x}"), "physical memory freed");
        }
    }
}

impl Runtime {
    fn virtual_memory(&self, device: usize) -> RuntimeResult<Arc<dyn VirtualMemory>> {
        let ctx = self.device(device as i64)?;
        ctx.device()
            .virtual_memory()
            .map_err(|e| ctx.error("virtual memory management", e))
    }

    /// `hipMemGetAllocationGranularity`: sizes, offsets and addresses of `device`'s virtual
    /// memory are multiples of this.
    ///
    /// # Errors
    /// An invalid device, or a backend without virtual memory management.
    pub fn vmm_granularity(&self, device: usize) -> RuntimeResult<u64> {
        Ok(self.virtual_memory(device)?.granularity())
    }

    /// `hipMemAddressReserve`: `size` bytes of address space aligned to `alignment` (0: the
    /// granularity), at `hint` when free there, through `device`'s backend.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for a size that is 0 or not a multiple of the granularity, or an
    /// alignment that is not a power of two; the backend's errors (no address space).
    pub fn vmm_reserve(
        &self,
        device: usize,
        size: u64,
        alignment: u64,
        hint: u64,
    ) -> RuntimeResult<u64> {
        let vm = self.virtual_memory(device)?;
        let g = vm.granularity();
        if size == 0 || size % g != 0 {
            return Err(refuse(
                "reserving address space",
                format!("{size:#x} bytes is not a non-zero multiple of the granularity ({g:#x})"),
            ));
        }
        if alignment != 0 && !alignment.is_power_of_two() {
            return Err(refuse(
                "reserving address space",
                format!("alignment {alignment:#x} is not a power of two"),
            ));
        }
        let ctx = self.device(device as i64)?;
        let base = vm
            .reserve(size, alignment, hint)
            .map_err(|e| ctx.error("reserving address space", e))?;
        self.vmm
            .inner
            .lock()
            .reservations
            .insert(base, Reserved { size, device });
        Ok(base)
    }

    /// `hipMemAddressFree`: releases the reservation at `base` of `size` bytes.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for anything but a reservation's base and size, or a reservation
    /// that still has mappings.
    pub fn vmm_free(&self, base: u64, size: u64) -> RuntimeResult<()> {
        let what = "freeing reserved address space";
        let mut inner = self.vmm.inner.lock();
        let device = match inner.reservations.get(&base) {
            Some(r) if r.size == size => r.device,
            Some(r) => {
                return Err(refuse(
                    what,
                    format!(
                        "the reservation at {base:#x} is {:#x} bytes, not {size:#x}",
                        r.size
                    ),
                ))
            }
            None => return Err(refuse(what, format!("no reservation starts at {base:#x}"))),
        };
        let mapped = inner.mappings.range(base..base + size).count();
        if mapped > 0 {
            return Err(refuse(
                what,
                format!(
                    "{base:#x}+{size:#x} still has {mapped} mapping(s): hipMemUnmap them first"
                ),
            ));
        }
        let ctx = self.device(device as i64)?;
        self.virtual_memory(device)?
            .free_reservation(base, size)
            .map_err(|e| ctx.error(what, e))?;
        inner.reservations.remove(&base);
        Ok(())
    }

    fn new_handle(&self, physical: Arc<dyn PhysicalMemory>, props: AllocationProps) -> u64 {
        let mut inner = self.vmm.inner.lock();
        inner.next += 1;
        let id = HANDLE_BASE + inner.next;
        inner.handles.insert(
            id,
            Handle {
                physical,
                props,
                refs: 1,
                mapped: 0,
            },
        );
        id
    }

    /// `hipMemCreate`: `size` bytes of physical memory on `props.device`; returns its handle.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for a size that is 0 or not a multiple of the granularity; out of
    /// memory for more than the device has, and the backend's errors.
    pub fn vmm_create(&self, size: u64, props: AllocationProps) -> RuntimeResult<u64> {
        let vm = self.virtual_memory(props.device)?;
        let g = vm.granularity();
        if size == 0 || size % g != 0 {
            return Err(refuse(
                "creating physical memory",
                format!("{size:#x} bytes is not a non-zero multiple of the granularity ({g:#x})"),
            ));
        }
        let ctx = self.device(props.device as i64)?;
        // As clr's check against the device's largest allocation: no more than it has.
        let total = ctx.device().properties().total_memory;
        if size > total {
            return Err(ctx.error(
                "creating physical memory",
                crate::device::DeviceError::OutOfMemory {
                    size,
                    kind: MemoryKind::Mapped,
                },
            ));
        }
        let physical = vm
            .create(size)
            .map_err(|e| ctx.error("creating physical memory", e))?;
        Ok(self.new_handle(physical, props))
    }

    /// `hipMemImportFromShareableHandle`: the physical memory another process exported as
    /// `fd` (which the caller keeps), on `props.device`.
    ///
    /// # Errors
    /// The backend's refusal of a descriptor that is not shareable memory.
    pub fn vmm_import(&self, fd: BorrowedFd<'_>, props: AllocationProps) -> RuntimeResult<u64> {
        let ctx = self.device(props.device as i64)?;
        let physical = self
            .virtual_memory(props.device)?
            .import(fd)
            .map_err(|e| ctx.error("importing physical memory", e))?;
        Ok(self.new_handle(physical, props))
    }

    /// `hipMemExportToShareableHandle`: a new descriptor of `handle`'s memory, which must
    /// have been created for POSIX descriptors.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for an unknown or released handle, or one not created for
    /// sharing; the backend's errors.
    pub fn vmm_export(&self, handle: u64) -> RuntimeResult<OwnedFd> {
        let what = "exporting physical memory";
        let (physical, device) = {
            let mut inner = self.vmm.inner.lock();
            let h = inner.handle(what, handle)?;
            if h.props.handle_type != HANDLE_TYPE_POSIX_FD {
                return Err(refuse(
                    what,
                    format!(
                        "the allocation was created with handle type {}, not hipMemHandleTypePosixFileDescriptor",
                        h.props.handle_type
                    ),
                ));
            }
            (h.physical.clone(), h.props.device)
        };
        let ctx = self.device(device as i64)?;
        physical.export().map_err(|e| ctx.error(what, e))
    }

    /// `hipMemRelease`: drops one reference of `handle`.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for an unknown or already released handle.
    pub fn vmm_release(&self, handle: u64) -> RuntimeResult<()> {
        let mut inner = self.vmm.inner.lock();
        inner.handle("releasing an allocation handle", handle)?.refs -= 1;
        inner.collect(handle);
        Ok(())
    }

    /// `hipMemGetAllocationPropertiesFromHandle`.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for an unknown or released handle.
    pub fn vmm_properties(&self, handle: u64) -> RuntimeResult<AllocationProps> {
        Ok(self
            .vmm
            .inner
            .lock()
            .handle("reading allocation properties", handle)?
            .props)
    }

    /// `hipMemRetainAllocationHandle`: the handle of the memory mapped at `address` (anywhere
    /// in a mapping), with one more reference.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for an address in no mapping.
    pub fn vmm_retain(&self, address: u64) -> RuntimeResult<u64> {
        let mut inner = self.vmm.inner.lock();
        let Some((_, m)) = inner.mapping_at(address) else {
            return Err(refuse(
                "retaining an allocation handle",
                format!("{address:#x} is in no mapping"),
            ));
        };
        let id = m.handle;
        match inner.handles.get_mut(&id) {
            Some(h) => h.refs += 1,
            None => {
                return Err(refuse(
                    "retaining an allocation handle",
                    "the mapping's memory is gone",
                ))
            }
        }
        Ok(id)
    }

    /// `hipMemMap`: maps `[offset, offset + size)` of `handle`'s memory at `va`.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for an unknown or released handle, sizes and offsets that are not
    /// multiples of the granularity or run past the memory, a range outside every reservation
    /// or over a mapping.
    pub fn vmm_map(&self, va: u64, size: u64, offset: u64, handle: u64) -> RuntimeResult<()> {
        let what = "mapping physical memory";
        let mut inner = self.vmm.inner.lock();
        let h = inner.handle(what, handle)?;
        let (physical, device) = (h.physical.clone(), h.props.device);
        let vm = self.virtual_memory(device)?;
        let g = vm.granularity();
        for (name, value) in [("address", va), ("size", size), ("offset", offset)] {
            if value % g != 0 {
                return Err(refuse(
                    what,
                    format!("{name} {value:#x} is not a multiple of the granularity ({g:#x})"),
                ));
            }
        }
        if size == 0
            || offset
                .checked_add(size)
                .is_none_or(|end| end > physical.size())
        {
            return Err(refuse(
                what,
                format!(
                    "{size:#x} bytes at offset {offset:#x} of a {:#x}-byte allocation",
                    physical.size()
                ),
            ));
        }
        let inside = inner
            .reservations
            .range(..=va)
            .next_back()
            .is_some_and(|(base, r)| va.checked_add(size).is_some_and(|end| end <= base + r.size));
        if !inside {
            return Err(refuse(
                what,
                format!(
                    "{va:#x}+{size:#x} is not inside one range reserved with hipMemAddressReserve"
                ),
            ));
        }
        let over = inner
            .mappings
            .range(..va + size)
            .next_back()
            .filter(|(at, m)| **at + m.size > va);
        if let Some((at, m)) = over {
            return Err(refuse(
                what,
                format!(
                    "{va:#x}+{size:#x} overlaps the mapping at {at:#x}+{:#x}",
                    m.size
                ),
            ));
        }
        let ctx = self.device(device as i64)?;
        vm.map(va, size, &physical, offset)
            .map_err(|e| ctx.error(what, e))?;
        inner.mappings.insert(
            va,
            Mapped {
                size,
                handle,
                access: BTreeMap::new(),
            },
        );
        if let Some(h) = inner.handles.get_mut(&handle) {
            h.mapped += 1;
        }
        Ok(())
    }

    /// `hipMemUnmap`: unmaps the whole mappings making up `[va, va + size)`, after the devices
    /// that had access are idle and with their access taken away.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for a range that is not made of whole mappings.
    pub fn vmm_unmap(&self, va: u64, size: u64) -> RuntimeResult<()> {
        let what = "unmapping";
        let found = self.vmm.inner.lock().whole_mappings(what, va, size)?;
        // As hipFree: the devices that could be using it finish first.
        let devices: Vec<usize> = {
            let inner = self.vmm.inner.lock();
            let mut d: Vec<usize> = found
                .iter()
                .filter_map(|at| inner.mappings.get(at))
                .flat_map(|m| m.access.keys().copied())
                .collect();
            d.sort_unstable();
            d.dedup();
            d
        };
        for &d in &devices {
            self.device(d as i64)?.synchronize_ignoring_errors()?;
        }
        let mut inner = self.vmm.inner.lock();
        // Checked again: another thread may have changed them while the devices finished.
        let found = inner.whole_mappings(what, va, size)?;
        for at in found {
            let Some(m) = inner.mappings.get(&at) else {
                continue;
            };
            let (msize, handle) = (m.size, m.handle);
            let access: Vec<usize> = m.access.keys().copied().collect();
            for d in access {
                let ctx = self.device(d as i64)?;
                self.virtual_memory(d)?
                    .set_access(at, msize, Access::None)
                    .map_err(|e| ctx.error(what, e))?;
                if let Some(m) = inner.mappings.get_mut(&at) {
                    m.access.remove(&d);
                }
            }
            let device = inner.handles.get(&handle).map_or(0, |h| h.props.device);
            let ctx = self.device(device as i64)?;
            self.virtual_memory(device)?
                .unmap(at, msize)
                .map_err(|e| ctx.error(what, e))?;
            inner.mappings.remove(&at);
            if let Some(h) = inner.handles.get_mut(&handle) {
                h.mapped -= 1;
            }
            inner.collect(handle);
        }
        Ok(())
    }

    /// `hipMemSetAccess`: gives each `(device, access)` of `access` to the whole mappings
    /// making up `[va, va + size)`. Everything is checked before anything changes.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for a range that is not made of whole mappings; an invalid
    /// device; the backend's errors.
    pub fn vmm_set_access(
        &self,
        va: u64,
        size: u64,
        access: &[(usize, Access)],
    ) -> RuntimeResult<()> {
        let what = "setting access";
        for &(d, _) in access {
            self.virtual_memory(d)?;
        }
        let mut inner = self.vmm.inner.lock();
        let found = inner.whole_mappings(what, va, size)?;
        for at in found {
            let msize = inner.mappings.get(&at).map_or(0, |m| m.size);
            for &(d, a) in access {
                let ctx = self.device(d as i64)?;
                self.virtual_memory(d)?
                    .set_access(at, msize, a)
                    .map_err(|e| ctx.error(what, e))?;
                if let Some(m) = inner.mappings.get_mut(&at) {
                    if a == Access::None {
                        m.access.remove(&d);
                    } else {
                        m.access.insert(d, a);
                    }
                }
            }
        }
        Ok(())
    }

    /// `hipMemGetAccess`: what `device` may do at `address`, which must be in a mapping.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for an address in no mapping.
    pub fn vmm_access(&self, address: u64, device: usize) -> RuntimeResult<Access> {
        self.device(device as i64)?;
        let inner = self.vmm.inner.lock();
        let (_, m) = inner
            .mapping_at(address)
            .ok_or_else(|| refuse("reading access", format!("{address:#x} is in no mapping")))?;
        Ok(m.access.get(&device).copied().unwrap_or(Access::None))
    }

    /// `hipIpcGetMemHandle`: a handle another process opens to reach the device allocation
    /// holding `address` (made with `hipMalloc`).
    ///
    /// # Errors
    /// [`RuntimeError::NotDeviceMemory`] for an address no device allocated with `hipMalloc`;
    /// the backend's refusal.
    pub fn ipc_get_mem_handle(&self, address: u64) -> RuntimeResult<IpcHandle> {
        let what = "IPC memory handle";
        let info = self
            .pointer_info(address)
            .filter(|i| i.allocation.kind == MemoryKind::Device)
            .ok_or_else(|| RuntimeError::NotDeviceMemory {
                what,
                address,
                detail: self
                    .pointer_info(address)
                    .map(|i| format!("inside {}, not device memory from hipMalloc", i.allocation)),
            })?;
        let ctx = self.device(info.device as i64)?;
        ctx.device()
            .ipc_export(address)
            .map_err(|e| ctx.error("making an IPC memory handle", e))
    }

    /// `hipIpcOpenMemHandle`: maps the memory `handle` names for `device`; returns the
    /// pointer the handle was made for.
    ///
    /// # Errors
    /// The backend's refusal (a malformed handle, memory that cannot be reached).
    pub fn ipc_open_mem_handle(&self, device: usize, handle: &IpcHandle) -> RuntimeResult<u64> {
        let ctx = self.device(device as i64)?;
        ctx.device()
            .ipc_open(handle)
            .map_err(|e| ctx.error("opening an IPC memory handle", e))
    }

    /// `hipIpcCloseMemHandle`: undoes an open, after the device that opened it is idle.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for a pointer no open returned.
    pub fn ipc_close_mem_handle(&self, address: u64) -> RuntimeResult<()> {
        for ctx in self.devices().iter().flatten() {
            let opened = ctx
                .device()
                .allocations()
                .find(address)
                .is_some_and(|a| a.kind == MemoryKind::Imported);
            if opened {
                ctx.synchronize_ignoring_errors()?;
                return ctx
                    .device()
                    .ipc_close(address)
                    .map_err(|e| ctx.error("closing an IPC memory handle", e));
            }
        }
        Err(refuse(
            "closing an IPC memory handle",
            format!("{address:#x} is not a pointer hipIpcOpenMemHandle returned"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::SoftAgent;
    use crate::device::{AccessKind, Device};
    use crate::runtime::RuntimeOptions;

    fn runtime(devices: usize) -> Runtime {
        let devices: Vec<Arc<dyn Device>> = (0..devices)
            .map(|_| SoftAgent::new("gfx1030".parse().unwrap()).device())
            .collect();
        Runtime::with_devices(devices, RuntimeOptions::default())
    }

    fn props(device: usize) -> AllocationProps {
        AllocationProps {
            device,
            handle_type: HANDLE_TYPE_POSIX_FD,
            ..AllocationProps::default()
        }
    }

    fn is_vmm(r: RuntimeResult<impl std::fmt::Debug>) -> bool {
        matches!(r, Err(RuntimeError::Vmm { .. }))
    }

    /// HIP's orders: a handle released while mapped keeps its memory until the unmap and is
    /// invalid meanwhile; a reservation with mappings is not freed; ranges must be whole
    /// mappings; access is per device and reaches exactly that device's table.
    #[test]
    fn handles_mappings_and_access_follow_hips_rules() {
        let rt = runtime(2);
        let g = rt.vmm_granularity(0).unwrap();
        let base = rt.vmm_reserve(0, 4 * g, 0, 0).unwrap();
        let h = rt.vmm_create(2 * g, props(0)).unwrap();
        assert!(is_vmm(rt.vmm_create(g + 1, props(0))));
        assert!(matches!(
            rt.vmm_create(1 << 44, props(0)),
            Err(RuntimeError::Device { ref error, .. })
                if matches!(**error, crate::device::DeviceError::OutOfMemory { .. })
        ));
        assert!(is_vmm(rt.vmm_reserve(0, g / 2, 0, 0)));
        assert!(
            is_vmm(rt.vmm_reserve(0, g, 3 * g, 0)),
            "alignment not a power of two"
        );
        rt.vmm_map(base, 2 * g, 0, h).unwrap();
        rt.vmm_map(base + 2 * g, g, g, h).unwrap();
        assert!(
            is_vmm(rt.vmm_map(base + 3 * g, g, 2 * g, h)),
            "past the memory's end"
        );
        assert!(is_vmm(rt.vmm_map(base + g, g, 0, h)), "over a mapping");
        assert!(
            is_vmm(rt.vmm_map(base + 3 * g, 2 * g, 0, h)),
            "past the reservation"
        );
        // Access: device 1 only, read-write on both mappings at once.
        rt.vmm_set_access(base, 3 * g, &[(1, Access::ReadWrite)])
            .unwrap();
        assert!(
            is_vmm(rt.vmm_set_access(base, g, &[(0, Access::Read)])),
            "part of a mapping"
        );
        assert!(
            is_vmm(rt.vmm_set_access(base + 3 * g, g, &[(0, Access::Read)])),
            "no mapping"
        );
        let t0 = rt.device(0).unwrap().device().allocations();
        let t1 = rt.device(1).unwrap().device().allocations();
        assert!(t0.find(base).is_none());
        assert!(t1.check(base + 2 * g, 8, AccessKind::Write).is_ok());
        assert_eq!(rt.vmm_access(base + 5, 1).unwrap(), Access::ReadWrite);
        assert_eq!(rt.vmm_access(base + 5, 0).unwrap(), Access::None);
        assert!(is_vmm(rt.vmm_access(base + 3 * g, 0)));
        // Both mappings are the same memory at offset g: the second shows the first's second
        // granule.
        // SAFETY: both ranges are read-write for the host now (device 1 has access).
        unsafe {
            std::ptr::write_volatile((base + g + 8) as *mut u32, 0xabcd);
            assert_eq!(
                std::ptr::read_volatile((base + 2 * g + 8) as *const u32),
                0xabcd
            );
        }
        // Retain by any address in a mapping: the same handle, one more reference.
        assert_eq!(rt.vmm_retain(base + 2 * g + 100).unwrap(), h);
        rt.vmm_release(h).unwrap();
        rt.vmm_release(h).unwrap();
        assert!(is_vmm(rt.vmm_release(h)), "released twice");
        assert!(is_vmm(rt.vmm_properties(h)));
        assert!(
            is_vmm(rt.vmm_map(base + 3 * g, g, 0, h)),
            "a released handle"
        );
        // The memory is still mapped and reachable.
        assert!(t1.check(base, 8, AccessKind::Read).is_ok());
        assert!(is_vmm(rt.vmm_free(base, 4 * g)), "mappings remain");
        assert!(is_vmm(rt.vmm_unmap(base, g)), "part of a mapping");
        rt.vmm_unmap(base, 3 * g).unwrap();
        assert!(t1.check(base, 8, AccessKind::Read).is_err());
        assert!(
            rt.vmm.inner.lock().handles.is_empty(),
            "the memory went with the last mapping"
        );
        assert!(
            is_vmm(rt.vmm_free(base, 2 * g)),
            "not the reservation's size"
        );
        rt.vmm_free(base, 4 * g).unwrap();
        assert!(is_vmm(rt.vmm_free(base, 4 * g)));
        assert!(is_vmm(rt.vmm_release(0x1234)));
    }

    /// Exported and imported again, physical memory is the same bytes; a handle not made for
    /// sharing is not exported.
    #[test]
    fn physical_memory_is_exported_and_imported_as_a_descriptor() {
        use std::os::fd::AsFd;
        let rt = runtime(1);
        let g = rt.vmm_granularity(0).unwrap();
        let h = rt.vmm_create(g, props(0)).unwrap();
        let fd = rt.vmm_export(h).unwrap();
        let h2 = rt.vmm_import(fd.as_fd(), props(0)).unwrap();
        assert_ne!(h, h2);
        let base = rt.vmm_reserve(0, 2 * g, 0, 0).unwrap();
        rt.vmm_map(base, g, 0, h).unwrap();
        rt.vmm_map(base + g, g, 0, h2).unwrap();
        rt.vmm_set_access(base, 2 * g, &[(0, Access::ReadWrite)])
            .unwrap();
        // SAFETY: both granules are read-write for the host now.
        unsafe {
            std::ptr::write_volatile((base + 64) as *mut u32, 5);
            assert_eq!(std::ptr::read_volatile((base + g + 64) as *const u32), 5);
        }
        let private = rt
            .vmm_create(
                g,
                AllocationProps {
                    handle_type: 0,
                    ..props(0)
                },
            )
            .unwrap();
        assert!(is_vmm(rt.vmm_export(private)));
        rt.vmm_unmap(base, 2 * g).unwrap();
        rt.vmm_free(base, 2 * g).unwrap();
        for handle in [h, h2, private] {
            rt.vmm_release(handle).unwrap();
        }
    }

    /// A hipMalloc'd buffer's IPC handle opens the same memory; only device allocations have
    /// one; closing twice is refused.
    #[test]
    fn ipc_memory_handles_reach_the_same_bytes() {
        let rt = runtime(1);
        let p = rt.allocate(0, 1000, MemoryKind::Device).unwrap();
        let handle = rt.ipc_get_mem_handle(p + 16).unwrap();
        let q = rt.ipc_open_mem_handle(0, &handle).unwrap();
        // SAFETY: both are views of the live 1000-byte allocation.
        unsafe {
            std::ptr::write_volatile((p + 16) as *mut u32, 31);
            assert_eq!(std::ptr::read_volatile(q as *const u32), 31);
        }
        rt.ipc_close_mem_handle(q).unwrap();
        assert!(is_vmm(rt.ipc_close_mem_handle(q)));
        let pinned = rt.allocate(0, 64, MemoryKind::PinnedHost).unwrap();
        assert!(matches!(
            rt.ipc_get_mem_handle(pinned),
            Err(RuntimeError::NotDeviceMemory { .. })
        ));
        rt.free(p).unwrap();
    }
}
