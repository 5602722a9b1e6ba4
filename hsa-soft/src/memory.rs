//! Memory pools and regions, allocation, access, copies, locking and fills, following ROCr's
//! `MemoryRegion` (`core/runtime/amd_memory_region.cpp`) and `Runtime::CopyMemory`
//! (`core/runtime/runtime.cpp`):
//!
//! - the CPU agent owns three global pools: fine-grained, fine-grained with `KERNARG_INIT`,
//!   and coarse-grained system memory; each GPU agent owns its coarse-grained device pool and a
//!   group (LDS) pool that cannot be allocated from;
//! - system memory is GPU-accessible only after `hsa_amd_agents_allow_access`
//!   (`DISALLOWED_BY_DEFAULT`, as ROCr answers for GPUs); device memory is its owner's, and
//!   other GPUs' after allowing them. A kernel touching memory its agent may not access faults
//!   (the software agent checks every access against its allocation table);
//! - `hsa_memory_copy` takes any host memory (ROCr locks it for the copy);
//!   `hsa_amd_memory_async_copy` needs pool or locked memory on both sides (checked here; on a
//!   GPU the copy engine would fault), waits for its dependencies and decrements its completion
//!   signal; `hsa_amd_memory_lock` gives the agents host memory at an address of their own, as
//!   ROCr 5.2.3 on a discrete GPU does (the thunk registers the pages as a userptr buffer and
//!   maps it at a new address of its SVM aperture, `fmm_register_user_memory` and
//!   `_fmm_map_to_gpu_userptr` in libhsakmt's `fmm.c`): the agent address lies in address
//!   space reserved with no access, and the GPU agents' tables enter it as an alias of the
//!   host range. Copies and fills accept either address. Locks are registrations as the
//!   driver keeps them: one per (address, size), counted, each with its own agent address;
//!   another size at the same address, or a range overlapping another lock, is another
//!   registration and succeeds.
//!
//! Everything the library hands out is host memory of this process: what differs from a GPU is
//! who may touch it, and that is what the allocation tables enforce. It is owned by the software
//! agents' memory (system pools by the first GPU agent's, device pools by their agent's), so a
//! free goes back to the host only after every dispatch running at the free has ended, as
//! through librocload.so; `hsa_amd_memory_unlock` returns once no running dispatch can still
//! touch the range, and copies and fills hold off frees from their check to their last byte.
//! The caller's host memory is checked before it is used: a copy's side must be mapped for the
//! copy, and locked memory mapped (writable for kernels only if the host may write it).

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::sync::Arc;

use hsa_sys::*;
use parking_lot::Mutex;
use rocload::device::{host_memory, HostFacts};
use rocload::device::{Condition, Device, MemoryKind};

use crate::agents::{agent_index, AgentEntry};
use crate::runtime::{runtime, Runtime};
use crate::util::{guard, handle, put, tag, unhandle, Status};

/// Allocation granule and alignment of every pool (`RUNTIME_ALLOC_GRANULE`/`_ALIGNMENT`).
pub(crate) const GRANULE: usize = 4096;
/// Largest single allocation (`ALLOC_MAX_SIZE`).
pub(crate) const ALLOC_MAX: u64 = 1 << 40;
/// Bytes of group (LDS) memory per work-group.
const GROUP_SIZE: usize = 64 * 1024;

/// What a pool hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PoolKind {
    /// System memory, fine-grained.
    Fine,
    /// System memory, fine-grained, for kernarg segments.
    Kernarg,
    /// System memory, coarse-grained.
    SystemCoarse,
    /// A GPU's device memory (coarse-grained).
    Device,
    /// A GPU's group segment (LDS): not allocatable.
    Group,
}

impl PoolKind {
    fn system(self) -> bool {
        matches!(
            self,
            PoolKind::Fine | PoolKind::Kernarg | PoolKind::SystemCoarse
        )
    }

    fn flags(self) -> u32 {
        match self {
            PoolKind::Fine => HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
            PoolKind::Kernarg => {
                HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
                    | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT
            }
            PoolKind::SystemCoarse | PoolKind::Device => {
                HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
            }
            PoolKind::Group => 0,
        }
    }

    fn memory_kind(self) -> MemoryKind {
        match self {
            PoolKind::Kernarg => MemoryKind::Kernarg,
            PoolKind::Device | PoolKind::Group => MemoryKind::Device,
            PoolKind::Fine | PoolKind::SystemCoarse => MemoryKind::PinnedHost,
        }
    }
}

/// The pools of agent `index`.
pub(crate) fn pools_of(agent: &AgentEntry) -> &'static [PoolKind] {
    if agent.gpu().is_some() {
        &[PoolKind::Device, PoolKind::Group]
    } else {
        &[PoolKind::Fine, PoolKind::Kernarg, PoolKind::SystemCoarse]
    }
}

pub(crate) fn pool_handle(agent: usize, slot: usize) -> u64 {
    handle(tag::POOL, ((agent as u64) << 8) | slot as u64)
}

/// The (owner agent, kind) of a pool handle.
pub(crate) fn pool_of(rt: &Runtime, pool: u64) -> Status<(usize, PoolKind)> {
    let v = unhandle(tag::POOL, pool).ok_or(HSA_STATUS_ERROR_INVALID_MEMORY_POOL)?;
    let (agent, slot) = ((v >> 8) as usize, (v & 0xff) as usize);
    let kind = rt
        .agents
        .get(agent)
        .and_then(|a| pools_of(a).get(slot).copied())
        .ok_or(HSA_STATUS_ERROR_INVALID_MEMORY_POOL)?;
    Ok((agent, kind))
}

/// A block of a system pool (its memory is the first GPU agent's: [`system_owner`]).
struct SystemBlock {
    /// Granule-rounded: what the agent's memory holds.
    size: u64,
    /// What the caller asked for (ROCr 6.2's `size_requested`, reported by pointer info).
    requested: u64,
    kind: PoolKind,
    /// GPU agents allowed to access it.
    access: Vec<usize>,
}

struct DeviceBlock {
    owner: usize,
    /// Granule-rounded: what the agent's memory holds.
    size: u64,
    /// What the caller asked for (ROCr 6.2's `size_requested`, reported by pointer info).
    requested: u64,
    access: Vec<usize>,
}

/// One registration of host memory by `hsa_amd_memory_lock`, keyed by its address and size:
/// the driver keeps one per (address, size), counts a second lock of the same range, and makes
/// another for another size at the same address or an overlapping range elsewhere, each with a
/// GPU address of its own (libhsakmt's `fmm_register_user_memory`).
struct LockEntry {
    /// The agents' address for the host's first byte (inside `alias`).
    agent_base: u64,
    /// Address space kept for the agents' view of the range (no access from the host).
    _alias: rocload::device::shared::Reservation,
    /// The host reused its addresses while it was locked (see `forget_stale_locks`): no
    /// agent reaches it any more, only an unlock is left to answer.
    stale: bool,
    refs: u32,
    agents: Vec<usize>,
    /// Whether the host may write it (a read-only mapping is locked read-only).
    writable: bool,
}

#[derive(Default)]
struct Inner {
    system: HashMap<u64, SystemBlock>,
    device: HashMap<u64, DeviceBlock>,
    /// By (host base, size).
    locks: BTreeMap<(u64, u64), LockEntry>,
    /// The union of the live locks' host ranges, by base, disjoint: what the host's side of a
    /// copy or fill may lie in (overlapping registrations make one span). The agents' tables
    /// hold each registration at its own agent address instead, and those never overlap.
    spans: BTreeMap<u64, u64>,
}

/// Everything allocated or locked through the library.
pub(crate) struct Memory {
    inner: Mutex<Inner>,
}

/// Where a range of memory is, as far as the library knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Inside a pool allocation or a locked range.
    Known,
    /// Host memory the library knows nothing about.
    Unknown,
}

impl Memory {
    pub(crate) fn new(_agents: &[AgentEntry]) -> Memory {
        Memory {
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Whether `[address, address + len)` lies in memory the library handed out or locked;
    /// a range that starts inside such memory and runs past it is an error.
    pub(crate) fn place(&self, rt: &Runtime, address: u64, len: u64) -> Status<Place> {
        let inner = self.inner.lock();
        let fits = |base: u64, size: u64| {
            address >= base
                && address
                    .checked_add(len)
                    .is_some_and(|end| end <= base.saturating_add(size))
        };
        let starts_in =
            |base: u64, size: u64| address >= base && address < base.saturating_add(size);
        let ranges = inner
            .system
            .iter()
            .map(|(b, s)| (*b, s.size))
            .chain(inner.device.iter().map(|(b, d)| (*b, d.size)))
            .chain(inner.spans.iter().map(|(b, s)| (*b, *s)))
            .chain(
                inner
                    .locks
                    .iter()
                    .filter(|(_, l)| !l.stale)
                    .map(|(&(_, size), l)| (l.agent_base, size)),
            );
        for (base, size) in ranges {
            if fits(base, size) {
                return Ok(Place::Known);
            }
            if starts_in(base, size) {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
        }
        drop(inner);
        // Code objects loaded on a GPU agent are device memory too.
        for agent in &rt.agents {
            if let Some((soft, _)) = agent.gpu() {
                if let Some(a) = soft.allocations().find(address) {
                    return if a.contains(address, len) {
                        Ok(Place::Known)
                    } else {
                        Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
                    };
                }
            }
        }
        Ok(Place::Unknown)
    }
}

impl Memory {
    /// Whether `[start, end)` has a byte in memory the library handed out (pool blocks) or in
    /// the agents' view of locked memory: what ROCr's driver holds as buffer objects, which its
    /// SVM calls refuse (`crate::svm`). The host's side of a locked range is not one of them.
    pub(crate) fn overlaps_known(&self, start: u64, end: u64) -> bool {
        let inner = self.inner.lock();
        let touches = |base: u64, size: u64| base < end && base.saturating_add(size) > start;
        inner.system.iter().any(|(&b, s)| touches(b, s.size))
            || inner.device.iter().any(|(&b, d)| touches(b, d.size))
            || inner
                .locks
                .iter()
                .any(|(&(_, size), l)| !l.stale && touches(l.agent_base, size))
    }
}

/// The software agent whose memory holds the system pools' blocks (the first GPU agent; all
/// of them share one dispatch tracker, so its frees wait for every agent's dispatches).
fn system_owner(rt: &Runtime) -> Status<&rocload::backend::SoftAgent> {
    rt.agents
        .iter()
        .find_map(|a| a.gpu().map(|(soft, _)| soft))
        .ok_or_else(|| {
            tracing::debug!("no software GPU agent owns system memory");
            HSA_STATUS_ERROR_OUT_OF_RESOURCES
        })
}

impl Memory {
    /// The host address of `[address, address + len)`: itself, unless it lies in the agents'
    /// view of locked memory (see `hsa_amd_memory_lock`).
    pub(crate) fn to_host(&self, address: u64, len: u64) -> u64 {
        let inner = self.inner.lock();
        for (&(base, size), l) in inner.locks.iter().filter(|(_, l)| !l.stale) {
            if let Some(offset) = address.checked_sub(l.agent_base) {
                if offset.checked_add(len).is_some_and(|end| end <= size) {
                    return base + offset;
                }
            }
        }
        address
    }

    /// Whether `address` lies in locked memory the host may not write.
    fn read_only_lock(&self, address: u64) -> bool {
        self.inner.lock().locks.iter().any(|(&(base, size), l)| {
            !l.stale && !l.writable && address >= base && address < base.saturating_add(size)
        })
    }
}

// ---- For `hsa_amd_pointer_info` (crate::amd_ext): a read-only view of the tables above. ----

/// What the library knows of the block (pool allocation or locked range) holding an address.
pub(crate) struct BlockInfo {
    /// The host's address of its first byte.
    pub(crate) base: u64,
    /// The agents' address of it (locked memory: the agents' view; else `base`).
    pub(crate) agent_base: u64,
    pub(crate) size: u64,
    /// Locked host memory (else a pool allocation).
    pub(crate) locked: bool,
    /// The agent owning it (the CPU agent, 0, for system memory and locked ranges).
    pub(crate) owner: usize,
    /// Coarse-grained (device memory, the coarse system pool).
    pub(crate) coarse: bool,
    /// Agents that may access it besides the owner.
    pub(crate) agents: Vec<usize>,
}

impl Memory {
    /// The block holding `address`, if the library handed it out or locked it, with the size
    /// ROCr's `PtrInfo` takes from its allocation map: 5.2.3 records the page-rounded size
    /// (`AllocateMemory` passes its `size` to `MemoryRegion::Allocate`, which aligns it up to
    /// 4 KiB, and records that), 6.2 the size asked for (`size_requested`) while `address`
    /// lies within it, else (the page's tail) the driver's block, the rounded size.
    pub(crate) fn block_info(&self, address: u64, requested_sizes: bool) -> Option<BlockInfo> {
        let inner = self.inner.lock();
        let inside = |base: u64, size: u64| address >= base && address - base < size;
        let reported = |base: u64, requested: u64, size: u64| {
            if requested_sizes && inside(base, requested) {
                requested
            } else {
                size
            }
        };
        if let Some((&base, b)) = inner.system.iter().find(|(&b, s)| inside(b, s.size)) {
            return Some(BlockInfo {
                base,
                agent_base: base,
                size: reported(base, b.requested, b.size),
                locked: false,
                owner: 0,
                coarse: b.kind == PoolKind::SystemCoarse,
                agents: b.access.clone(),
            });
        }
        if let Some((&base, b)) = inner.device.iter().find(|(&b, d)| inside(b, d.size)) {
            return Some(BlockInfo {
                base,
                agent_base: base,
                size: reported(base, b.requested, b.size),
                locked: false,
                owner: b.owner,
                coarse: true,
                agents: b.access.iter().copied().filter(|&a| a != b.owner).collect(),
            });
        }
        // An agent address names one registration; a host address may lie in several
        // (overlapping locks): the first by (base, size).
        let (&(base, size), l) = inner
            .locks
            .iter()
            .find(|(&(_, size), l)| !l.stale && inside(l.agent_base, size))
            .or_else(|| {
                inner
                    .locks
                    .iter()
                    .find(|(&(b, size), l)| !l.stale && inside(b, size))
            })?;
        Some(BlockInfo {
            base,
            agent_base: l.agent_base,
            size,
            locked: true,
            owner: 0,
            coarse: false,
            agents: l.agents.clone(),
        })
    }
}

fn gpu_table(rt: &Runtime, index: usize) -> Option<&rocload::device::AllocationTable> {
    rt.agents
        .get(index)?
        .gpu()
        .map(|(soft, _)| soft.allocations())
}

fn allocate(rt: &Runtime, agent: usize, kind: PoolKind, size: usize) -> Status<*mut c_void> {
    if size == 0 {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if kind == PoolKind::Group || size as u64 > ALLOC_MAX {
        return Err(HSA_STATUS_ERROR_INVALID_ALLOCATION);
    }
    let rounded = size
        .checked_add(GRANULE - 1)
        .map(|s| s & !(GRANULE - 1))
        .ok_or(HSA_STATUS_ERROR_INVALID_ALLOCATION)?;
    if kind.system() {
        let base = system_owner(rt)?
            .allocate_system(rounded as u64, GRANULE)
            .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
        forget_stale_locks(rt, base, rounded as u64);
        rt.memory.inner.lock().system.insert(
            base,
            SystemBlock {
                size: rounded as u64,
                requested: size as u64,
                kind,
                access: Vec::new(),
            },
        );
        tracing::debug!(
            base = format_args!("{base:#x}"),
            size = rounded,
            ?kind,
            "system memory allocated"
        );
        return Ok(base as *mut c_void);
    }
    let (soft, _) = rt.agents[agent]
        .gpu()
        .ok_or(HSA_STATUS_ERROR_INVALID_MEMORY_POOL)?;
    let allocation = soft
        .allocate(rounded as u64, MemoryKind::Device)
        .map_err(|e| {
            tracing::debug!(error = %e, size = rounded, "device memory refused");
            HSA_STATUS_ERROR_OUT_OF_RESOURCES
        })?;
    forget_stale_locks(rt, allocation.base, rounded as u64);
    rt.memory.inner.lock().device.insert(
        allocation.base,
        DeviceBlock {
            owner: agent,
            size: rounded as u64,
            requested: size as u64,
            access: vec![agent],
        },
    );
    Ok(allocation.base as *mut c_void)
}

/// Marks stale the locks that overlap `[base, base + size)`, memory the host allocator has
/// just handed out: a range locked there was unmapped by its owner without an unlock (AMD's
/// HIP runtime keeps pinned staging ranges cached after the program frees them), and ROCr's
/// device memory never collides with it. Their agents' views leave the tables and their host
/// ranges the spans; the locks stay for their unlocks, which succeed as ROCr's do.
fn forget_stale_locks(rt: &Runtime, base: u64, size: u64) {
    let end = base.saturating_add(size);
    let mut inner = rt.memory.inner.lock();
    let mut any = false;
    for (&(b, s), l) in inner.locks.range_mut(..(end, 0)) {
        if l.stale || b.saturating_add(s) <= base {
            continue;
        }
        tracing::debug!(
            lock = format_args!("{b:#x}"),
            size = s,
            "stale lock: the host reused its addresses"
        );
        l.stale = true;
        any = true;
        for a in std::mem::take(&mut l.agents) {
            if let Some(t) = gpu_table(rt, a) {
                remove_registration(t, l.agent_base);
            }
        }
    }
    if any {
        respan(&mut inner, base, end);
    }
}

/// Rebuilds the spans (the union of the live locks' host ranges) around `[lo, hi)` after a
/// lock there came, went or went stale: the spans meeting the range are taken out and the
/// live locks they covered, with any new one in the range, are joined again (overlapping or
/// touching ranges make one span).
fn respan(inner: &mut Inner, mut lo: u64, mut hi: u64) {
    let old: Vec<u64> = inner
        .spans
        .range(..=hi)
        .filter(|(&b, &size)| b.saturating_add(size) >= lo)
        .map(|(&b, _)| b)
        .collect();
    for b in old {
        if let Some(size) = inner.spans.remove(&b) {
            lo = lo.min(b);
            hi = hi.max(b.saturating_add(size));
        }
    }
    // Every live lock meeting [lo, hi) lies inside it (a live lock lies inside its span), and
    // keys come by base: the locks of one span are neighbours.
    let mut joined: Vec<(u64, u64)> = Vec::new();
    for (&(base, size), l) in inner.locks.range((lo, 0)..(hi, 0)) {
        let end = base.saturating_add(size);
        if l.stale {
            continue;
        }
        match joined.last_mut() {
            Some((_, last_end)) if base <= *last_end => *last_end = (*last_end).max(end),
            _ => joined.push((base, end)),
        }
    }
    for (base, end) in joined {
        inner.spans.insert(base, end - base);
    }
}

/// Removes the registration (locked memory) starting at `base` from `table`, and nothing else:
/// after a stale lock was forgotten, new memory may start at the same address.
fn remove_registration(table: &rocload::device::AllocationTable, base: u64) {
    if table
        .find(base)
        .is_some_and(|a| a.base == base && a.kind == MemoryKind::RegisteredHost)
    {
        table.remove(base, false);
    }
}

fn free(rt: &Runtime, ptr: u64) -> Status {
    // ROCr's `Runtime::FreeMemory`: freeing NULL succeeds.
    if ptr == 0 {
        return Ok(());
    }
    let mut inner = rt.memory.inner.lock();
    if let Some(block) = inner.system.remove(&ptr) {
        drop(inner);
        // Out of every table first: the release then waits for the dispatches running now.
        for &a in &block.access {
            if let Some(t) = gpu_table(rt, a) {
                t.remove(ptr, true);
            }
        }
        return system_owner(rt)?
            .free_system(ptr)
            .map_err(|_| HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if let Some(block) = inner.device.remove(&ptr) {
        drop(inner);
        for &a in block.access.iter().filter(|&&a| a != block.owner) {
            if let Some(t) = gpu_table(rt, a) {
                t.remove(ptr, true);
            }
        }
        let (soft, _) = rt.agents[block.owner]
            .gpu()
            .ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
        soft.free(ptr)
            .map_err(|_| HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
        return Ok(());
    }
    Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
}

fn allow_access(rt: &Runtime, agents: &[usize], ptr: u64) -> Status {
    let mut inner = rt.memory.inner.lock();
    let Inner { system, device, .. } = &mut *inner;
    let (size, kind, access) = if let Some(b) = system.get_mut(&ptr) {
        (b.size, b.kind.memory_kind(), &mut b.access)
    } else if let Some(b) = device.get_mut(&ptr) {
        (b.size, MemoryKind::Device, &mut b.access)
    } else {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    };
    for &a in agents {
        if access.contains(&a) {
            continue;
        }
        if let Some(t) = gpu_table(rt, a) {
            let writable = kind != MemoryKind::Kernarg;
            // The block's addresses are the library's: a registration there is stale.
            t.insert_fresh(ptr, size, kind, writable)
                .map_err(|_| HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            access.push(a);
        }
    }
    Ok(())
}

/// # Safety
/// `value` is writable for the attribute's type.
unsafe fn pool_info(
    rt: &Runtime,
    owner: usize,
    kind: PoolKind,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    let size = match kind {
        PoolKind::Group => GROUP_SIZE as u64,
        // A GPU's device memory: its properties' total (ROCLOAD_DEVICE_MEMORY).
        PoolKind::Device => rt
            .agents
            .get(owner)
            .and_then(|a| a.gpu())
            .map_or(0, |(soft, _)| soft.properties().total_memory),
        // System memory is the host's.
        PoolKind::Fine | PoolKind::Kernarg | PoolKind::SystemCoarse => {
            HostFacts::get().total_memory
        }
    };
    let segment = if kind == PoolKind::Group {
        HSA_AMD_SEGMENT_GROUP
    } else {
        HSA_AMD_SEGMENT_GLOBAL
    };
    let allocatable = kind != PoolKind::Group;
    // SAFETY: (all writes) types as ROCr's MemoryRegion::GetPoolInfo/GetInfo write them.
    unsafe {
        match attribute {
            HSA_AMD_MEMORY_POOL_INFO_SEGMENT => put(value, segment),
            HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS => put(value, kind.flags()),
            HSA_AMD_MEMORY_POOL_INFO_SIZE => put(value, size as usize),
            HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED => put(value, allocatable),
            HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE
            | HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT => {
                put(value, if allocatable { GRANULE } else { 0 })
            }
            HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL => put(value, kind.system()),
            HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE => put(
                value,
                if allocatable {
                    size.min(ALLOC_MAX) as usize
                } else {
                    0
                },
            ),
            _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
        }
    }
}

/// # Safety
/// `value` is writable for the attribute's type.
unsafe fn region_info(
    rt: &Runtime,
    owner: usize,
    kind: PoolKind,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    // SAFETY: as pool_info; region attributes share the first values and types.
    unsafe {
        match attribute {
            HSA_REGION_INFO_SEGMENT
            | HSA_REGION_INFO_GLOBAL_FLAGS
            | HSA_REGION_INFO_SIZE
            | HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED
            | HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE
            | HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT => {
                pool_info(rt, owner, kind, attribute, value)
            }
            HSA_REGION_INFO_ALLOC_MAX_SIZE => pool_info(
                rt,
                owner,
                kind,
                HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE,
                value,
            ),
            HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE => put(value, 0u32),
            _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
        }
    }
}

fn agents_from(rt: &Runtime, agents: *const hsa_agent_t, count: usize) -> Status<Vec<usize>> {
    if agents.is_null() || count == 0 {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if count > rt.agents.len() * 4 {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: the caller passes `count` agents (the API's contract); the count is bounded.
    let list = unsafe { std::slice::from_raw_parts(agents, count) };
    list.iter()
        .map(|&a| agent_index(a, rt.agents.len()))
        .collect()
}

/// Copies after checking both sides: inside known memory they must fit.
///
/// # Safety
/// Unknown host memory is the caller's, valid for `size` bytes.
pub(crate) unsafe fn checked_copy(
    rt: &Runtime,
    dst: u64,
    src: u64,
    size: u64,
    require_known: bool,
) -> Status {
    if dst == 0 || src == 0 {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if size == 0 {
        return Ok(());
    }
    // From the check to the last byte, a concurrent free cannot give the memory back (with no
    // GPU agent nothing runs and nothing was allocated: no tracker needed).
    let _active = system_owner(rt).ok().map(|soft| soft.epochs().begin());
    let d = rt.memory.place(rt, dst, size)?;
    let s = rt.memory.place(rt, src, size)?;
    // The agents' view of locked memory is the host's bytes elsewhere.
    let (dst, src) = (rt.memory.to_host(dst, size), rt.memory.to_host(src, size));
    if rt.memory.read_only_lock(dst) {
        tracing::debug!(
            dst = format_args!("{dst:#x}"),
            "copy into a read-only mapping"
        );
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if require_known && (d == Place::Unknown || s == Place::Unknown) {
        tracing::debug!(
            dst = format_args!("{dst:#x}"),
            src = format_args!("{src:#x}"),
            "async copy of memory that is neither pool memory nor locked"
        );
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    // The caller's host memory must be mapped for the copy (an error, not a crash).
    for (address, place, write) in [(dst, d, true), (src, s, false)] {
        if place == Place::Unknown {
            host_memory::check_mapped(address, size, write).map_err(|e| {
                tracing::debug!(error = %e, "copy of host memory that is not mapped for it");
                HSA_STATUS_ERROR_INVALID_ARGUMENT
            })?;
        }
    }
    let n = usize::try_from(size).map_err(|_| HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
    // SAFETY: known ranges lie inside live allocations (checked); unknown ones are the
    // caller's by contract. `copy` allows overlap.
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
    Ok(())
}

fn signal_of(rt: &Runtime, handle: u64) -> Status<Arc<rocload::device::Signal>> {
    rt.signals
        .get(handle)
        .ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)
}

type PoolCallback =
    Option<unsafe extern "C" fn(hsa_amd_memory_pool_t, *mut c_void) -> hsa_status_t>;
type RegionCallback = Option<unsafe extern "C" fn(hsa_region_t, *mut c_void) -> hsa_status_t>;

hsa_api! {
    /// `hsa_amd_agent_iterate_memory_pools`.
    fn hsa_amd_agent_iterate_memory_pools(agent: hsa_agent_t, callback: PoolCallback, data: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let f = callback.ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let index = agent_index(agent, rt.agents.len())?;
            for slot in 0..pools_of(&rt.agents[index]).len() {
                let pool = hsa_amd_memory_pool_t { handle: pool_handle(index, slot) };
                // SAFETY: the application's callback with its own data.
                match unsafe { f(pool, data) } {
                    HSA_STATUS_SUCCESS => {}
                    other => return Err(other),
                }
            }
            Ok(())
        })
    }

    /// `hsa_amd_memory_pool_get_info`.
    fn hsa_amd_memory_pool_get_info(pool: hsa_amd_memory_pool_t, attribute: hsa_amd_memory_pool_info_t, value: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let (owner, kind) = pool_of(&rt, pool.handle)?;
            // SAFETY: the attribute's type is the caller's contract.
            unsafe { pool_info(&rt, owner, kind, attribute, value) }
        })
    }

    /// `hsa_amd_agent_memory_pool_get_info`: access as ROCr's `GetAccessInfo` decides it.
    fn hsa_amd_agent_memory_pool_get_info(agent: hsa_agent_t, pool: hsa_amd_memory_pool_t, attribute: hsa_amd_agent_memory_pool_info_t, value: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let index = agent_index(agent, rt.agents.len())?;
            let (owner, kind) = pool_of(&rt, pool.handle)?;
            let access = if index == owner || (kind.system() && rt.agents[index].gpu().is_none()) {
                HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT
            } else if kind == PoolKind::Group {
                HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED
            } else {
                HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
            };
            // SAFETY: the attribute's type is the caller's contract.
            unsafe {
                match attribute {
                    HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS => put(value, access),
                    HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS => {
                        put(value, u32::from(access != HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED && index != owner))
                    }
                    // ROCr: zeros without a link (same agent, or never allowed), else the
                    // link's facts; the software agents hang off the host as a PCIe device
                    // would (KFD's weight for a PCIe link is 20; no bandwidth figures).
                    HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO => {
                        let linked = access != HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED && index != owner;
                        put(value, hsa_amd_memory_pool_link_info_t {
                            min_latency: 0,
                            max_latency: 0,
                            min_bandwidth: 0,
                            max_bandwidth: 0,
                            atomic_support_32bit: linked,
                            atomic_support_64bit: linked,
                            coherent_support: linked,
                            link_type: if linked { HSA_AMD_LINK_INFO_TYPE_PCIE } else { 0 },
                            numa_distance: if linked { 20 } else { 0 },
                        })
                    }
                    _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
                }
            }
        })
    }

    /// `hsa_amd_memory_pool_allocate`: zeroed memory, rounded up to the 4 KiB granule.
    fn hsa_amd_memory_pool_allocate(pool: hsa_amd_memory_pool_t, size: usize, flags: u32, ptr: *mut *mut c_void) -> hsa_status_t {
        guard(|| {
            let _ = flags;
            let rt = runtime()?;
            if ptr.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (owner, kind) = pool_of(&rt, pool.handle)?;
            let p = allocate(&rt, owner, kind, size)?;
            // SAFETY: non-NULL out-pointer.
            unsafe { put(ptr.cast(), p) }
        })
    }

    /// `hsa_amd_memory_pool_free`.
    fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            free(&rt, ptr as u64)
        })
    }

    /// `hsa_amd_agents_allow_access`: lets GPU agents reach a pool allocation.
    fn hsa_amd_agents_allow_access(num_agents: u32, agents: *const hsa_agent_t, flags: *const u32, ptr: *const c_void) -> hsa_status_t {
        guard(|| {
            let _ = flags;
            let rt = runtime()?;
            if ptr.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let list = agents_from(&rt, agents, num_agents as usize)?;
            allow_access(&rt, &list, ptr as u64)
        })
    }

    /// `hsa_agent_iterate_regions`: the agent's pools, as regions.
    fn hsa_agent_iterate_regions(agent: hsa_agent_t, callback: RegionCallback, data: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let f = callback.ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let index = agent_index(agent, rt.agents.len())?;
            for slot in 0..pools_of(&rt.agents[index]).len() {
                let region = hsa_region_t { handle: pool_handle(index, slot) };
                // SAFETY: the application's callback with its own data.
                match unsafe { f(region, data) } {
                    HSA_STATUS_SUCCESS => {}
                    other => return Err(other),
                }
            }
            Ok(())
        })
    }

    /// `hsa_region_get_info`.
    fn hsa_region_get_info(region: hsa_region_t, attribute: hsa_region_info_t, value: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let (owner, kind) = pool_of(&rt, region.handle).map_err(|_| HSA_STATUS_ERROR_INVALID_REGION)?;
            // SAFETY: the attribute's type is the caller's contract.
            unsafe { region_info(&rt, owner, kind, attribute, value) }
        })
    }

    /// `hsa_memory_allocate`: from a region (a pool).
    fn hsa_memory_allocate(region: hsa_region_t, size: usize, ptr: *mut *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if ptr.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (owner, kind) = pool_of(&rt, region.handle).map_err(|_| HSA_STATUS_ERROR_INVALID_REGION)?;
            let p = allocate(&rt, owner, kind, size)?;
            // SAFETY: non-NULL out-pointer.
            unsafe { put(ptr.cast(), p) }
        })
    }

    /// `hsa_memory_free`.
    fn hsa_memory_free(ptr: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            free(&rt, ptr as u64)
        })
    }

    /// `hsa_memory_copy`: synchronous; any host memory on either side.
    fn hsa_memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            // SAFETY: unknown host memory is the caller's, per the API.
            unsafe { checked_copy(&rt, dst as u64, src as u64, size as u64, false) }
        })
    }

    /// `hsa_amd_memory_async_copy`: both sides pool or locked memory; runs once `dep_signals`
    /// are 0 (on a helper thread when they are not yet), then decrements `completion_signal`.
    fn hsa_amd_memory_async_copy(
        dst: *mut c_void,
        dst_agent: hsa_agent_t,
        src: *const c_void,
        src_agent: hsa_agent_t,
        size: usize,
        num_dep_signals: u32,
        dep_signals: *const hsa_signal_t,
        completion_signal: hsa_signal_t,
    ) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            agent_index(dst_agent, rt.agents.len())?;
            agent_index(src_agent, rt.agents.len())?;
            if num_dep_signals > 0 && dep_signals.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if num_dep_signals > 64 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let completion = signal_of(&rt, completion_signal.handle)?;
            let deps = if num_dep_signals == 0 {
                Vec::new()
            } else {
                // SAFETY: `num_dep_signals` signals by the API's contract (bounded above).
                unsafe { std::slice::from_raw_parts(dep_signals, num_dep_signals as usize) }
                    .iter()
                    .map(|s| signal_of(&rt, s.handle))
                    .collect::<Status<Vec<_>>>()?
            };
            let (d, s, n) = (dst as u64, src as u64, size as u64);
            if d == 0 || s == 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            for (address, _) in [(d, true), (s, false)] {
                if n > 0 && rt.memory.place(&rt, address, n)? == Place::Unknown {
                    tracing::debug!(address = format_args!("{address:#x}"), "async copy of memory that is neither pool memory nor locked");
                    return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
                }
            }
            if deps.iter().all(|dep| dep.load() == 0) {
                let start = rocload::device::timestamp_ns();
                // SAFETY: both ranges are known memory (checked above).
                unsafe { checked_copy(&rt, d, s, n, true)? };
                crate::amd_ext::copy_completed(&rt, completion_signal.handle, &completion, start);
                completion.subtract(1);
                return Ok(());
            }
            let worker = rt.clone();
            std::thread::Builder::new()
                .name("hsa-soft-copy".into())
                .spawn(move || {
                    for dep in &deps {
                        while !dep.wait(Condition::Eq, 0, Some(std::time::Duration::from_millis(100))).1 {}
                    }
                    let start = rocload::device::timestamp_ns();
                    // SAFETY: as above; the application keeps the memory until the completion
                    // signal says the copy is done.
                    if let Err(status) = unsafe { checked_copy(&worker, d, s, n, true) } {
                        tracing::debug!(status, "async copy failed");
                    }
                    crate::amd_ext::copy_completed(&worker, completion_signal.handle, &completion, start);
                    completion.subtract(1);
                })
                .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
            Ok(())
        })
    }

    /// `hsa_amd_memory_lock`: gives the agents (all GPU agents when none are given) host memory
    /// at an address of their own, the same for every lock of the same range (the thunk counts
    /// registrations of one userptr buffer); another size at the same address, or a range
    /// overlapping another lock, is another registration with another address.
    fn hsa_amd_memory_lock(host_ptr: *mut c_void, size: usize, agents: *mut hsa_agent_t, num_agent: std::os::raw::c_int, agent_ptr: *mut *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if host_ptr.is_null() || size == 0 || agent_ptr.is_null() || num_agent < 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let list = if num_agent == 0 {
                (0..rt.agents.len()).filter(|&i| rt.agents[i].gpu().is_some()).collect()
            } else {
                agents_from(&rt, agents, num_agent as usize)?
            };
            // No GPU agent listed: nothing to register, the agents' address is the host's
            // (`MemoryRegion::Lock` returns before registering).
            if !list.iter().any(|&a| rt.agents[a].gpu().is_some()) {
                // SAFETY: non-NULL out-pointer.
                return unsafe { put(agent_ptr.cast(), host_ptr) };
            }
            let base = host_ptr as u64;
            // Locked memory is what kernels will touch: all of it must be mapped; kernels may
            // write it only if the host may (a GPU maps a read-only page read-only).
            let writable = match host_memory::check_mapped_exact(base, size as u64, true) {
                Ok(()) => true,
                Err(host_memory::HostRangeError::Protection { needed: "writable", .. }) => {
                    host_memory::check_mapped_exact(base, size as u64, false).map_err(|e| {
                        tracing::debug!(error = %e, "lock of host memory that is not mapped");
                        HSA_STATUS_ERROR_INVALID_ARGUMENT
                    })?;
                    false
                }
                Err(e) => {
                    tracing::debug!(error = %e, "lock of host memory that is not mapped");
                    return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
                }
            };
            let size = size as u64;
            let mut inner = rt.memory.inner.lock();
            // Other locks may overlap the range (the driver registers each), pool memory may not.
            let end = base.saturating_add(size);
            let pool = inner
                .system
                .iter()
                .map(|(&b, blk)| (b, blk.size))
                .chain(inner.device.iter().map(|(&b, blk)| (b, blk.size)))
                .find(|&(b, len)| b < end && b.saturating_add(len) > base);
            if let Some((b, _)) = pool {
                tracing::debug!(pool_block = format_args!("{b:#x}"), "lock of pool memory");
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let key = (base, size);
            // A stale lock of this range is memory that no longer exists: the new one replaces it.
            if inner.locks.get(&key).is_some_and(|l| l.stale) {
                inner.locks.remove(&key);
            }
            let agent_base = if let Some(lock) = inner.locks.get_mut(&key) {
                lock.refs = lock.refs.saturating_add(1);
                lock.agent_base
            } else {
                // The agents' view: whole pages of reserved address space, the host's offset
                // in its first page kept (the thunk maps the pages and adds the offset). Each
                // registration has its own, so views never overlap in the agents' tables.
                let page = rocload::device::shared::page_size();
                let offset = base % page;
                let span = size
                    .checked_add(offset)
                    .and_then(|n| n.checked_next_multiple_of(page))
                    .ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
                let alias = rocload::device::shared::Reservation::new(span, 0, 0).map_err(|e| {
                    tracing::debug!(error = %e, "no address space for the agents' view of locked memory");
                    HSA_STATUS_ERROR_OUT_OF_RESOURCES
                })?;
                let agent_base = alias.base() + offset;
                let mut granted = Vec::new();
                for &a in &list {
                    if let Some(t) = gpu_table(&rt, a) {
                        if let Err(e) = t.insert_alias(agent_base, size, MemoryKind::RegisteredHost, writable, base) {
                            tracing::debug!(error = %e, "locked memory's view overlaps an allocation");
                            for &g in &granted {
                                if let Some(t) = gpu_table(&rt, g) {
                                    remove_registration(t, agent_base);
                                }
                            }
                            return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
                        }
                        granted.push(a);
                    }
                }
                inner.locks.insert(key, LockEntry { agent_base, _alias: alias, stale: false, refs: 1, agents: granted, writable });
                respan(&mut inner, base, end);
                agent_base
            };
            // SAFETY: non-NULL out-pointer.
            unsafe { put(agent_ptr.cast(), agent_base as *mut c_void) }
        })
    }

    /// `hsa_amd_memory_unlock`: ends one registration at the host address `host_ptr` (its
    /// last lock), and succeeds whatever `host_ptr` is, as ROCr's does (5.2.3 and 6.2:
    /// `MemoryRegion::Unlock` returns success after the thunk's deregistration, which fails
    /// silently for memory it never registered or cannot tell apart).
    fn hsa_amd_memory_unlock(host_ptr: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let base = host_ptr as u64;
            let mut inner = rt.memory.inner.lock();
            let at: Vec<((u64, u64), bool)> = inner
                .locks
                .range((base, 0)..=(base, u64::MAX))
                .map(|(&k, l)| (k, l.stale))
                .collect();
            let live: Vec<(u64, u64)> = at.iter().filter(|(_, stale)| !stale).map(|(k, _)| *k).collect();
            // The driver finds a registration by its address alone (libhsakmt's
            // `fmm_deregister_memory`): with several sizes there it deregisters none, and ROCr's
            // `MemoryRegion::Unlock` succeeds all the same.
            if live.len() > 1 {
                tracing::debug!(host = format_args!("{base:#x}"), registrations = live.len(), "unlock of an address locked with several sizes: none is unlocked");
                return Ok(());
            }
            let Some(key) = live.first().or_else(|| at.first().map(|(k, _)| k)).copied() else {
                tracing::debug!(host = format_args!("{base:#x}"), "unlock of memory not locked");
                return Ok(());
            };
            let Some(lock) = inner.locks.get_mut(&key) else {
                return Ok(());
            };
            lock.refs = lock.refs.saturating_sub(1);
            if lock.refs == 0 {
                if let Some(lock) = inner.locks.remove(&key) {
                    for &a in &lock.agents {
                        if let Some(t) = gpu_table(&rt, a) {
                            remove_registration(t, lock.agent_base);
                        }
                    }
                    if !lock.stale {
                        respan(&mut inner, key.0, key.0.saturating_add(key.1));
                    }
                    drop(inner);
                    // The caller may unmap the range once this returns, and the agents' view
                    // goes with the lock: no running dispatch may still reach either.
                    system_owner(&rt)?.wait_for_running_dispatches();
                    drop(lock);
                }
            }
            Ok(())
        })
    }

    /// `hsa_amd_memory_fill`: `count` 32-bit values at a 4-byte aligned pool address.
    fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let base = ptr as u64;
            if base == 0 || base % 4 != 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let bytes = count.checked_mul(4).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            if bytes == 0 {
                return Ok(());
            }
            let _active = system_owner(&rt).ok().map(|soft| soft.epochs().begin());
            if rt.memory.place(&rt, base, bytes as u64)? != Place::Known {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let host = rt.memory.to_host(base, bytes as u64);
            if rt.memory.read_only_lock(host) {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: `count` aligned words inside one known allocation (checked; an agent's
            // view of locked memory translated to the host's, same page offset).
            let words = unsafe { std::slice::from_raw_parts_mut(host as *mut u32, count) };
            words.fill(value);
            Ok(())
        })
    }
}
