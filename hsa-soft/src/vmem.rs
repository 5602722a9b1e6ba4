//! ROCr 6's virtual memory API (`hsa_amd_vmem_*`), as rocm-6.2.0 defines it
//! (`core/runtime/hsa_ext_amd.cpp`, `Runtime::VMemory*` in `core/runtime/runtime.cpp`), over
//! the software agents' virtual memory (`rocload::backend::soft::vmm`): reservations and
//! mappings in the process's address space, physical memory as memory objects another process
//! can import, and each agent's access to a mapping (a GPU agent's allocation table gets the
//! range; the CPU agent's access sets the host's page protection).
//!
//! ROCr's bookkeeping is followed call by call: a reservation counts its mappings and is freed
//! whole by its start and the size asked for; physical memory (a handle) counts its references
//! (create, import, retain) and its mappings, and goes once both are 0; a mapping lies inside
//! one reservation and over no other, and is unmapped whole, every agent's access with it;
//! access is set over one or more whole mappings that follow each other. The statuses are
//! ROCr's (`INVALID_ALLOCATION` for an unknown handle or mapping, `RESOURCE_FREE` for a
//! reservation that still has mappings, ...).
//!
//! ROCr 5.2.3 has no virtual memory API. The library exports one set of names for both
//! versions, so under 5.2.3 (`ROCLOAD_SOFT_ROCR_VERSION`, the default) these answer as 6.2 does
//! over a driver without the API (`VirtualMemApiSupported()` false): reserving and making
//! physical memory are `INVALID_ARGUMENT`, and everything else finds nothing; and
//! `HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED` is 5.2.3's unknown attribute. What differs
//! from ROCr on purpose: `in_offset` of `hsa_amd_vmem_map` is ignored as ROCr ignores it (the
//! mapping starts at the physical memory's first byte), write-only access is read-write (an
//! allocation table cannot refuse loads), the host's pages follow the widest access any agent
//! has (with a GPU's access the host may touch them without the CPU agent's), and an imported
//! handle's memory type is `MEMORY_TYPE_NONE` (the descriptor carries no flags).

use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_int, c_void};
use std::os::fd::{BorrowedFd, IntoRawFd};
use std::sync::Arc;

use hsa_sys::vmem::{
    hsa_amd_memory_access_desc_t, hsa_amd_memory_type_t, hsa_amd_vmem_alloc_handle_t,
    HSA_ACCESS_PERMISSION_NONE, MEMORY_TYPE_NONE, MEMORY_TYPE_PINNED,
};
use hsa_sys::*;
use parking_lot::Mutex;
use rocload::backend::soft::vmm::{SoftAddressSpace, SoftVirtualMemory};
use rocload::device::shared::page_size;
use rocload::device::vmm::{Access, PhysicalMemory, VirtualMemory};
use rocload::loader::rocr::RocrVersion;

use crate::agents::agent_index;
use crate::memory::{pool_handle, pool_of, PoolKind};
use crate::runtime::{runtime, Runtime};
use crate::util::{guard, handle, put, tag, Status};

/// Most access descriptors one `hsa_amd_vmem_set_access` takes (ROCr reads as many as it is
/// told; this library bounds what it reads).
const MAX_DESCRIPTORS: usize = 1024;

/// Physical memory behind a `hsa_amd_vmem_alloc_handle_t` (ROCr's `MemoryHandle`).
struct MemHandle {
    physical: Arc<dyn PhysicalMemory>,
    /// The GPU agent whose device pool it came from (imports: the first GPU agent's).
    owner: usize,
    pinned: bool,
    /// Create, import and retain references not yet released.
    refs: u32,
    /// Mappings of it.
    uses: u32,
    /// The memory object's device and inode, once it was exported or imported: importing it
    /// again in this process gives this handle (ROCr finds the same driver handle).
    identity: Option<(u64, u64)>,
}

/// A reservation (ROCr's `AddressHandle`).
struct Reserved {
    /// What the caller asked for (what `address_free` must be given).
    size: u64,
    /// Page-rounded: what the address space holds.
    len: u64,
    /// Mappings inside it.
    uses: u32,
}

/// A mapping (ROCr's `MappedHandle`) and each agent's access to it.
struct Mapped {
    size: u64,
    handle: u64,
    /// (agent index, permission as given), in the order access was given.
    access: Vec<(usize, hsa_access_permission_t)>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    handles: HashMap<u64, MemHandle>,
    reservations: BTreeMap<u64, Reserved>,
    mappings: BTreeMap<u64, Mapped>,
}

/// The virtual memory state of one runtime.
#[derive(Default)]
pub(crate) struct State {
    inner: Mutex<Inner>,
}

/// Whether this runtime has the API (ROCr 6.2's answers; 5.2.3 has none).
pub(crate) fn supported(rt: &Runtime) -> bool {
    rt.caps.version >= RocrVersion::V6_2
}

/// `agent`'s view of the process's virtual memory; `INVALID_AGENT` for the CPU agent.
fn gpu_vm(rt: &Runtime, agent: usize) -> Status<SoftVirtualMemory> {
    let (soft, _) = rt
        .agents
        .get(agent)
        .and_then(|a| a.gpu())
        .ok_or(HSA_STATUS_ERROR_INVALID_AGENT)?;
    Ok(SoftVirtualMemory::new(
        SoftAddressSpace::global(),
        soft.clone(),
    ))
}

/// The first GPU agent's index and view: the one that reserves, maps and unmaps (reservations
/// and mappings are the process's, whichever agent asks).
fn first_gpu(rt: &Runtime) -> Status<(usize, SoftVirtualMemory)> {
    let index = (0..rt.agents.len())
        .find(|&i| rt.agents[i].gpu().is_some())
        .ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    Ok((index, gpu_vm(rt, index)?))
}

/// The access an agent's table can express for a permission (`drm_perm`: anything unknown
/// maps nothing).
fn access_of(permission: hsa_access_permission_t) -> Access {
    match permission {
        HSA_ACCESS_PERMISSION_RO => Access::Read,
        HSA_ACCESS_PERMISSION_WO | HSA_ACCESS_PERMISSION_RW => Access::ReadWrite,
        _ => Access::None,
    }
}

/// Gives `agent` `permission` on the mapping at `va` (ROCr's `EnableAccess`/`RemoveAccess`).
fn enable(
    rt: &Runtime,
    agent: usize,
    va: u64,
    size: u64,
    permission: hsa_access_permission_t,
) -> Status {
    let access = access_of(permission);
    let result = if rt.agents[agent].gpu().is_some() {
        gpu_vm(rt, agent)?.set_access(va, size, access)
    } else {
        first_gpu(rt)?.1.set_host_access(va, size, access)
    };
    result.map_err(|e| {
        tracing::debug!(error = %e, agent, "vmem access refused");
        HSA_STATUS_ERROR
    })
}

/// `st_dev` and `st_ino` of an open descriptor.
fn identity(fd: c_int) -> Option<(u64, u64)> {
    // SAFETY: a zeroed stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes `st` or fails (EBADF for a descriptor that is not open).
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return None;
    }
    Some((st.st_dev, st.st_ino))
}

impl State {
    fn new_handle(inner: &mut Inner, h: MemHandle) -> u64 {
        inner.next += 1;
        let id = handle(tag::VMEM, inner.next);
        inner.handles.insert(id, h);
        id
    }

    /// Undoes every mapping and reservation (at `hsa_shut_down`; ROCr's go with the process's
    /// driver state).
    pub(crate) fn clear(&self, rt: &Runtime) {
        let mut inner = self.inner.lock();
        let mappings = std::mem::take(&mut inner.mappings);
        for (va, m) in mappings {
            for &(agent, _) in &m.access {
                let _ = enable(rt, agent, va, m.size, HSA_ACCESS_PERMISSION_NONE);
            }
            if let Ok((_, vm)) = first_gpu(rt) {
                if let Err(e) = vm.unmap(va, m.size) {
                    tracing::debug!(error = %e, "vmem mapping left at shutdown");
                }
            }
        }
        let reservations = std::mem::take(&mut inner.reservations);
        for (base, r) in reservations {
            if let Ok((_, vm)) = first_gpu(rt) {
                if let Err(e) = vm.free_reservation(base, r.len) {
                    tracing::debug!(error = %e, "vmem reservation left at shutdown");
                }
            }
        }
        inner.handles.clear();
    }
}

/// `hsa_amd_vmem_address_reserve(_align)`'s work.
///
/// # Safety
/// `va` is NULL (refused) or writable.
unsafe fn reserve(
    va: *mut *mut c_void,
    size: usize,
    address: u64,
    alignment: u64,
    flags: u64,
) -> Status {
    let _ = flags;
    let rt = runtime()?;
    if size == 0 || !supported(&rt) || va.is_null() {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let page = page_size();
    let size = size as u64;
    let len = size
        .checked_next_multiple_of(page)
        .ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    let (_, vm) = first_gpu(&rt)?;
    // ROCr asks the driver for the address, then for any (`FixedAddress` then not); an
    // alignment of 0 is the page.
    let align = if alignment == 0 { page } else { alignment };
    let base = vm.reserve(len, align, address).map_err(|e| {
        tracing::debug!(error = %e, size, "no address space reserved");
        HSA_STATUS_ERROR_OUT_OF_RESOURCES
    })?;
    rt.vmem
        .inner
        .lock()
        .reservations
        .insert(base, Reserved { size, len, uses: 0 });
    // SAFETY: non-NULL out-pointer, the caller's contract.
    unsafe { put(va.cast(), base as *mut c_void) }
}

/// The reservation holding `[va, va + size)` (by the size asked for, as ROCr checks).
fn reservation_of(inner: &mut Inner, va: u64, size: u64) -> Option<&mut Reserved> {
    let (&base, r) = inner.reservations.range_mut(..=va).next_back()?;
    let end = va.checked_add(size)?;
    (end <= base.saturating_add(r.size)).then_some(r)
}

hsa_api! {
    /// `hsa_amd_vmem_address_reserve` (6.0): `size` bytes of address space, page-aligned, at
    /// `address` when that range is free, else anywhere.
    fn hsa_amd_vmem_address_reserve(va: *mut *mut c_void, size: usize, address: u64, flags: u64) -> hsa_status_t {
        // SAFETY: the API's contract for `va`.
        guard(|| unsafe { reserve(va, size, address, 0, flags) })
    }

    /// `hsa_amd_vmem_address_free`: a whole reservation by its start and the size asked for,
    /// once nothing is mapped in it.
    fn hsa_amd_vmem_address_free(va: *mut c_void, size: usize) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if va.is_null() || size == 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let base = va as u64;
            let mut inner = rt.vmem.inner.lock();
            let r = inner.reservations.get(&base).ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?;
            if r.size != size as u64 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if r.uses > 0 {
                return Err(HSA_STATUS_ERROR_RESOURCE_FREE);
            }
            let (_, vm) = first_gpu(&rt)?;
            vm.free_reservation(base, r.len).map_err(|e| {
                tracing::debug!(error = %e, "reservation not freed");
                HSA_STATUS_ERROR
            })?;
            inner.reservations.remove(&base);
            Ok(())
        })
    }

    /// `hsa_amd_vmem_handle_create`: physical memory of `size` bytes (a multiple of the page)
    /// from a GPU agent's device pool, of type `MEMORY_TYPE_NONE` or `MEMORY_TYPE_PINNED`.
    fn hsa_amd_vmem_handle_create(pool: hsa_amd_memory_pool_t, size: usize, type_: hsa_amd_memory_type_t, flags: u64, memory_handle: *mut hsa_amd_vmem_alloc_handle_t) -> hsa_status_t {
        guard(|| {
            let _ = flags;
            let rt = runtime()?;
            if size == 0 || !supported(&rt) {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if type_ != MEMORY_TYPE_NONE && type_ != MEMORY_TYPE_PINNED {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (owner, kind) = pool_of(&rt, pool.handle).map_err(|_| HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            if kind != PoolKind::Device || size as u64 % page_size() != 0 || memory_handle.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let physical = gpu_vm(&rt, owner)?.create(size as u64).map_err(|e| {
                tracing::debug!(error = %e, size, "no physical memory");
                HSA_STATUS_ERROR_OUT_OF_RESOURCES
            })?;
            let id = State::new_handle(&mut rt.vmem.inner.lock(), MemHandle {
                physical,
                owner,
                pinned: type_ == MEMORY_TYPE_PINNED,
                refs: 1,
                uses: 0,
                identity: None,
            });
            // SAFETY: non-NULL out-pointer.
            unsafe { put(memory_handle.cast(), hsa_amd_vmem_alloc_handle_t { handle: id }) }
        })
    }

    /// `hsa_amd_vmem_handle_release`: drops a reference; the memory goes with the last
    /// reference once nothing maps it.
    fn hsa_amd_vmem_handle_release(memory_handle: hsa_amd_vmem_alloc_handle_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let mut inner = rt.vmem.inner.lock();
            let h = inner.handles.get_mut(&memory_handle.handle).ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?;
            if h.refs == 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ALLOCATION);
            }
            h.refs -= 1;
            if h.refs == 0 && h.uses == 0 {
                inner.handles.remove(&memory_handle.handle);
            }
            Ok(())
        })
    }

    /// `hsa_amd_vmem_map`: maps the physical memory at `va`, inside one reservation and over
    /// no mapping, accessible to no agent yet. `in_offset` and `flags` are ignored, as ROCr
    /// ignores them (the mapping starts at the memory's first byte).
    fn hsa_amd_vmem_map(va: *mut c_void, size: usize, in_offset: usize, memory_handle: hsa_amd_vmem_alloc_handle_t, flags: u64) -> hsa_status_t {
        guard(|| {
            let _ = (in_offset, flags);
            let rt = runtime()?;
            if va.is_null() || size == 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (va, size) = (va as u64, size as u64);
            let mut inner = rt.vmem.inner.lock();
            if reservation_of(&mut inner, va, size).is_none() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let end = va.checked_add(size).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let below = inner.mappings.range(..=va).next_back().is_some_and(|(&at, m)| at.saturating_add(m.size) > va);
            let above = inner.mappings.range(va..).next().is_some_and(|(&at, _)| at < end);
            if below || above {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let h = inner.handles.get(&memory_handle.handle).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            // ROCr exports `size` bytes of the memory to map them: more than it has fails.
            if size > h.physical.size() {
                return Err(HSA_STATUS_ERROR_OUT_OF_RESOURCES);
            }
            let physical = h.physical.clone();
            let (_, vm) = first_gpu(&rt)?;
            vm.map(va, size, &physical, 0).map_err(|e| {
                tracing::debug!(error = %e, "vmem map refused");
                HSA_STATUS_ERROR
            })?;
            if let Some(r) = reservation_of(&mut inner, va, size) {
                r.uses += 1;
            }
            if let Some(h) = inner.handles.get_mut(&memory_handle.handle) {
                h.uses += 1;
            }
            inner.mappings.insert(va, Mapped { size, handle: memory_handle.handle, access: Vec::new() });
            Ok(())
        })
    }

    /// `hsa_amd_vmem_unmap`: a whole mapping by its start and size; every agent's access goes
    /// with it.
    fn hsa_amd_vmem_unmap(va: *mut c_void, size: usize) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if va.is_null() || size == 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let va = va as u64;
            let mut inner = rt.vmem.inner.lock();
            let m = inner.mappings.get_mut(&va).ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?;
            if m.size != size as u64 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            while let Some(&(agent, _)) = m.access.first() {
                enable(&rt, agent, va, m.size, HSA_ACCESS_PERMISSION_NONE)?;
                m.access.remove(0);
            }
            let (msize, mhandle) = (m.size, m.handle);
            let (_, vm) = first_gpu(&rt)?;
            vm.unmap(va, msize).map_err(|e| {
                tracing::debug!(error = %e, "vmem unmap refused");
                HSA_STATUS_ERROR
            })?;
            inner.mappings.remove(&va);
            if let Some(r) = reservation_of(&mut inner, va, msize) {
                r.uses = r.uses.saturating_sub(1);
            }
            if let Some(h) = inner.handles.get_mut(&mhandle) {
                h.uses = h.uses.saturating_sub(1);
                if h.uses == 0 && h.refs == 0 {
                    inner.handles.remove(&mhandle);
                }
            }
            Ok(())
        })
    }

    /// `hsa_amd_vmem_set_access`: each agent listed gets its permission on every mapping of
    /// `[va, va + size)`, which must be whole mappings that follow each other inside one
    /// reservation. As in ROCr, an agent whose permission changes leaves the other agents not
    /// listed without access to that mapping.
    fn hsa_amd_vmem_set_access(va: *mut c_void, size: usize, desc: *const hsa_amd_memory_access_desc_t, desc_cnt: usize) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if va.is_null() || desc.is_null() || desc_cnt == 0 || desc_cnt > MAX_DESCRIPTORS {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: `desc_cnt` descriptors by the API's contract (bounded above).
            let list = unsafe { std::slice::from_raw_parts(desc, desc_cnt) };
            let mut wanted = Vec::new();
            wanted.try_reserve(list.len()).map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
            for d in list {
                // SAFETY: reading the caller's descriptor as written.
                let d = unsafe { std::ptr::read_unaligned(d) };
                wanted.push((agent_index(d.agent_handle, rt.agents.len())?, d.permissions));
            }
            let (va, size) = (va as u64, size as u64);
            let mut inner = rt.vmem.inner.lock();
            if reservation_of(&mut inner, va, size).is_none() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let end = va.checked_add(size).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let mut chunks = Vec::new();
            let mut at = va;
            while at < end {
                let m = inner.mappings.get(&at).ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?;
                chunks.push(at);
                at = at.saturating_add(m.size);
            }
            for &(agent, permission) in &wanted {
                for &chunk in &chunks {
                    let m = inner.mappings.get_mut(&chunk).ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?;
                    match m.access.iter().position(|&(a, _)| a == agent) {
                        None => {
                            enable(&rt, agent, chunk, m.size, permission)?;
                            m.access.push((agent, permission));
                        }
                        Some(i) if m.access[i].1 == permission => {}
                        Some(i) => {
                            if let Err(status) = enable(&rt, agent, chunk, m.size, permission) {
                                let _ = enable(&rt, agent, chunk, m.size, HSA_ACCESS_PERMISSION_NONE);
                                m.access.remove(i);
                                return Err(status);
                            }
                            m.access[i].1 = permission;
                            // ROCr (`VMemorySetAccess`): agents not in this call lose access.
                            let mut k = 0;
                            while k < m.access.len() {
                                let other = m.access[k].0;
                                if wanted.iter().any(|&(a, _)| a == other) {
                                    k += 1;
                                } else {
                                    enable(&rt, other, chunk, m.size, HSA_ACCESS_PERMISSION_NONE)?;
                                    m.access.remove(k);
                                }
                            }
                        }
                    }
                }
            }
            Ok(())
        })
    }

    /// `hsa_amd_vmem_get_access`: a GPU agent's permission on the mapping holding `va`
    /// (`HSA_ACCESS_PERMISSION_NONE` when it was given none). As ROCr's lookup, the address
    /// just past a mapping still counts as inside it.
    fn hsa_amd_vmem_get_access(va: *mut c_void, perms: *mut hsa_access_permission_t, agent_handle: hsa_agent_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if va.is_null() || perms.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: non-NULL out-pointer; ROCr writes NONE first.
            unsafe { put(perms.cast(), HSA_ACCESS_PERMISSION_NONE)? };
            let va = va as u64;
            let inner = rt.vmem.inner.lock();
            let (_, m) = inner
                .mappings
                .range(..=va)
                .next_back()
                .filter(|(&at, m)| va <= at.saturating_add(m.size))
                .ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?;
            let agent = agent_index(agent_handle, rt.agents.len())?;
            if rt.agents[agent].gpu().is_none() {
                return Err(HSA_STATUS_ERROR_INVALID_AGENT);
            }
            let p = m.access.iter().find(|&&(a, _)| a == agent).map_or(HSA_ACCESS_PERMISSION_NONE, |&(_, p)| p);
            // SAFETY: as above.
            unsafe { put(perms.cast(), p) }
        })
    }

    /// `hsa_amd_vmem_export_shareable_handle`: a new descriptor of the physical memory (a
    /// sealed memory object) that another process imports; the caller owns it.
    fn hsa_amd_vmem_export_shareable_handle(dmabuf_fd: *mut c_int, memory_handle: hsa_amd_vmem_alloc_handle_t, flags: u64) -> hsa_status_t {
        guard(|| {
            let _ = flags;
            let rt = runtime()?;
            if dmabuf_fd.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: non-NULL out-pointer; ROCr writes -1 first.
            unsafe { put(dmabuf_fd.cast(), -1 as c_int)? };
            let mut inner = rt.vmem.inner.lock();
            let h = inner.handles.get_mut(&memory_handle.handle).ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?;
            let fd = h.physical.export().map_err(|e| {
                tracing::debug!(error = %e, "vmem export failed");
                HSA_STATUS_ERROR_OUT_OF_RESOURCES
            })?;
            let raw = fd.into_raw_fd();
            if h.identity.is_none() {
                h.identity = identity(raw);
            }
            // SAFETY: as above.
            unsafe { put(dmabuf_fd.cast(), raw) }
        })
    }

    /// `hsa_amd_vmem_import_shareable_handle`: physical memory another process (or this one)
    /// exported; the same memory imported again is the same handle with one more reference.
    /// A descriptor that is not such memory is `INCOMPATIBLE_ARGUMENTS`.
    fn hsa_amd_vmem_import_shareable_handle(dmabuf_fd: c_int, memory_handle: *mut hsa_amd_vmem_alloc_handle_t) -> hsa_status_t {
        guard(|| {
            if memory_handle.is_null() || dmabuf_fd < 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let rt = runtime()?;
            let id = identity(dmabuf_fd).ok_or(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS)?;
            let mut inner = rt.vmem.inner.lock();
            if let Some((&known, h)) = inner.handles.iter_mut().find(|(_, h)| h.identity == Some(id)) {
                h.refs = h.refs.checked_add(1).ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
                // SAFETY: non-NULL out-pointer.
                return unsafe { put(memory_handle.cast(), hsa_amd_vmem_alloc_handle_t { handle: known }) };
            }
            let (owner, vm) = first_gpu(&rt)?;
            // SAFETY: `dmabuf_fd` is open (fstat succeeded above) and stays the caller's; the
            // import duplicates it.
            let fd = unsafe { BorrowedFd::borrow_raw(dmabuf_fd) };
            let physical = vm.import(fd).map_err(|e| {
                tracing::debug!(error = %e, "vmem import refused");
                HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS
            })?;
            let handle = State::new_handle(&mut inner, MemHandle {
                physical,
                owner,
                pinned: false,
                refs: 1,
                uses: 0,
                identity: Some(id),
            });
            // SAFETY: non-NULL out-pointer.
            unsafe { put(memory_handle.cast(), hsa_amd_vmem_alloc_handle_t { handle }) }
        })
    }

    /// `hsa_amd_vmem_retain_alloc_handle`: the handle mapped at exactly `addr`, with one more
    /// reference.
    fn hsa_amd_vmem_retain_alloc_handle(alloc_handle: *mut hsa_amd_vmem_alloc_handle_t, addr: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if addr.is_null() || alloc_handle.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let mut inner = rt.vmem.inner.lock();
            let handle = inner.mappings.get(&(addr as u64)).ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?.handle;
            let h = inner.handles.get_mut(&handle).ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?;
            h.refs = h.refs.checked_add(1).ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
            // SAFETY: non-NULL out-pointer.
            unsafe { put(alloc_handle.cast(), hsa_amd_vmem_alloc_handle_t { handle }) }
        })
    }

    /// `hsa_amd_vmem_get_alloc_properties_from_handle`: the pool the memory came from and its
    /// type.
    fn hsa_amd_vmem_get_alloc_properties_from_handle(alloc_handle: hsa_amd_vmem_alloc_handle_t, pool: *mut hsa_amd_memory_pool_t, type_: *mut hsa_amd_memory_type_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if pool.is_null() || type_.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let inner = rt.vmem.inner.lock();
            let h = inner.handles.get(&alloc_handle.handle).ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?;
            let t = if h.pinned { MEMORY_TYPE_PINNED } else { MEMORY_TYPE_NONE };
            // SAFETY: non-NULL out-pointers.
            unsafe {
                put(pool.cast(), hsa_amd_memory_pool_t { handle: pool_handle(h.owner, 0) })?;
                put(type_.cast(), t)
            }
        })
    }
}

#[cfg(feature = "rocr-6-2")]
hsa_api! {
    /// `hsa_amd_vmem_address_reserve_align` (6.2, and the export rocload detects 6.2 by): as
    /// `hsa_amd_vmem_address_reserve`, aligned to `alignment` (0: the page).
    fn hsa_amd_vmem_address_reserve_align(va: *mut *mut c_void, size: usize, address: u64, alignment: u64, flags: u64) -> hsa_status_t {
        // SAFETY: the API's contract for `va`.
        guard(|| unsafe { reserve(va, size, address, alignment, flags) })
    }
}
