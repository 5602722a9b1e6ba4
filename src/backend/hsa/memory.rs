//! Memory on an HSA agent, as clr gets it: device memory from the GPU's coarse-grained global
//! pool, host memory (pinned, managed, queues, hostcall buffers) from the CPU's fine-grained
//! pool and kernarg segments from the CPU's `KERNARG_INIT` pool, both made reachable with
//! `hsa_amd_agents_allow_access`; copies with `hsa_amd_memory_async_copy` and a completion
//! signal waited on with a bound, the caller's host memory locked for the copy with
//! `hsa_amd_memory_lock`; fills with `hsa_amd_memory_fill`. Every allocation is recorded in the
//! agent's allocation table, so copies are checked like the software agent's.
//!
//! Not for code object memory (ROCr allocates it; the executable records its ranges).

use std::collections::HashMap;
use std::ffi::c_void;
use std::time::Duration;

use hsa_sys::result;
use hsa_sys::{
    hsa_agent_t, hsa_amd_memory_pool_t, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
    HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
    HSA_AMD_SEGMENT_GLOBAL,
};
use once_cell::sync::OnceCell;
use parking_lot::Mutex;

use super::agent::{HsaAgent, Lock};
use crate::device::memory::ViolationReason;
use crate::device::{Allocation, DeviceError, MemoryKind};

/// How long a copy may take before it is reported as timed out instead of hanging.
pub const COPY_TIMEOUT: Duration = Duration::from_secs(600);

/// The pools an agent allocates from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pools {
    device: hsa_amd_memory_pool_t,
    host: hsa_amd_memory_pool_t,
    kernarg: hsa_amd_memory_pool_t,
    pub(crate) cpu: hsa_agent_t,
}

impl Pools {
    /// The GPU's coarse-grained pool, where device memory comes from.
    pub(crate) fn device(&self) -> hsa_amd_memory_pool_t {
        self.device
    }
}

/// Per-agent memory bookkeeping: the pools (found at first use) and what came from them.
#[derive(Debug, Default)]
pub(crate) struct MemoryState {
    pools: OnceCell<Result<Pools, DeviceError>>,
    /// Bases of allocations made from the pools.
    owned: Mutex<HashMap<u64, MemoryKind>>,
    /// Registered host memory: the agent's address of it → the host address that was locked.
    registered: Mutex<HashMap<u64, u64>>,
}

fn pool_error(agent: &HsaAgent, what: &str) -> DeviceError {
    DeviceError::Unsupported {
        op: "allocate",
        backend: "hsa",
        reason: format!("{}: {what}", agent.name()),
    }
}

/// The agent's pools, found with `hsa_amd_agent_iterate_memory_pools` on the GPU and on the
/// CPU agent at first use.
pub(crate) fn pools(agent: &HsaAgent) -> Result<Pools, DeviceError> {
    agent
        .0
        .memory
        .pools
        .get_or_init(|| find_pools(agent))
        .clone()
}

fn find_pools(agent: &HsaAgent) -> Result<Pools, DeviceError> {
    let lib = agent.lib();
    let cpu = agent
        .system()
        .cpu_agent()
        .ok_or_else(|| pool_error(agent, "the runtime reports no CPU agent for host memory"))?;
    // Pools of `owner` in the global segment that the runtime lets us allocate from, with
    // their flags.
    let global = |owner: hsa_agent_t| -> Result<Vec<(hsa_amd_memory_pool_t, u32)>, DeviceError> {
        // SAFETY: the agent handles come from the runtime the agent keeps initialised, and so
        // do the pools they list.
        unsafe {
            let mut found = Vec::new();
            for pool in result::agent_memory_pools(lib, owner)
                .map_err(|e| agent.device_error("listing memory pools", e))?
            {
                let segment = result::memory_pool_segment(lib, pool)
                    .map_err(|e| agent.device_error("reading a pool's segment", e))?;
                if segment != HSA_AMD_SEGMENT_GLOBAL {
                    continue;
                }
                let allowed = result::memory_pool_alloc_allowed(lib, pool)
                    .map_err(|e| agent.device_error("reading a pool's allocation rule", e))?;
                if !allowed {
                    continue;
                }
                let flags = result::memory_pool_global_flags(lib, pool)
                    .map_err(|e| agent.device_error("reading a pool's flags", e))?;
                found.push((pool, flags));
            }
            Ok(found)
        }
    };
    let gpu_pools = global(agent.handle())?;
    let cpu_pools = global(cpu)?;
    let device = gpu_pools
        .iter()
        .find(|(_, f)| f & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0)
        .map(|(p, _)| *p)
        .ok_or_else(|| pool_error(agent, "no coarse-grained global pool for device memory"))?;
    let kernarg = cpu_pools
        .iter()
        .find(|(_, f)| f & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT != 0)
        .map(|(p, _)| *p)
        .ok_or_else(|| pool_error(agent, "the CPU agent has no kernarg pool"))?;
    let fine = |(_, f): &&(hsa_amd_memory_pool_t, u32)| {
        f & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED != 0
    };
    let host = cpu_pools
        .iter()
        .filter(fine)
        .find(|(_, f)| f & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT == 0)
        .or_else(|| cpu_pools.iter().find(fine))
        .map(|(p, _)| *p)
        .ok_or_else(|| pool_error(agent, "the CPU agent has no fine-grained pool"))?;
    tracing::debug!(
        agent = %agent.name(),
        device = device.handle,
        host = host.handle,
        kernarg = kernarg.handle,
        "memory pools"
    );
    Ok(Pools {
        device,
        host,
        kernarg,
        cpu,
    })
}

/// Whether memory of `kind` lives in the GPU's pool (not reachable by the host's loads and
/// stores on a discrete GPU).
fn on_device(kind: MemoryKind) -> bool {
    matches!(
        kind,
        MemoryKind::Device | MemoryKind::CodeObject | MemoryKind::Heap | MemoryKind::Array
    )
}

/// Allocates `size` zeroed bytes of `kind` from the pool that holds it.
pub(crate) fn allocate(
    agent: &HsaAgent,
    size: u64,
    kind: MemoryKind,
) -> Result<Allocation, DeviceError> {
    let pools = pools(agent)?;
    let lib = agent.lib();
    let pool = match kind {
        MemoryKind::Kernarg => pools.kernarg,
        k if on_device(k) => pools.device,
        _ => pools.host,
    };
    // At least one 32-bit word (ROCr refuses 0 bytes; fills work in words).
    let rounded = size
        .max(1)
        .checked_add(3)
        .map(|s| s & !3)
        .ok_or(DeviceError::OutOfMemory { size, kind })?;
    let bytes = usize::try_from(rounded).map_err(|_| DeviceError::OutOfMemory { size, kind })?;
    // SAFETY: the pool came from this runtime; the memory is freed with memory_pool_free in
    // `free` (or never, if the process ends first).
    let ptr = unsafe { result::memory_pool_allocate(lib, pool, bytes, 0) }.map_err(|e| {
        tracing::debug!(error = %e, size, %kind, "pool allocation failed");
        DeviceError::OutOfMemory { size, kind }
    })?;
    let release = |e: DeviceError| {
        // SAFETY: `ptr` was just allocated and nothing else knows it.
        if let Err(f) = unsafe { result::memory_pool_free(lib, ptr) } {
            agent.defer(format!("freeing after a failed allocation: {f}"));
        }
        e
    };
    if on_device(kind) {
        // SAFETY: `ptr` is `bytes` (a multiple of 4) bytes of this agent's pool memory.
        unsafe { result::memory_fill(lib, ptr, 0, bytes / 4) }
            .map_err(|e| release(agent.device_error("zeroing device memory", e)))?;
    } else {
        // Host pools are reachable by the host; the GPU needs access granted.
        // SAFETY: the agent handle and `ptr` come from this runtime.
        unsafe { result::agents_allow_access(lib, &[agent.handle()], ptr) }.map_err(|e| {
            release(agent.device_error("allowing the GPU to access host memory", e))
        })?;
        // SAFETY: fine-grained system memory of `bytes` bytes the host may write.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
    }
    let writable = !matches!(kind, MemoryKind::Kernarg | MemoryKind::Queue);
    let allocation = agent
        .0
        .table
        .insert(ptr as u64, size, kind, writable)
        .map_err(|e| {
            release(DeviceError::InvalidAddress {
                address: ptr as u64,
                detail: Some(e.to_string()),
            })
        })?;
    agent.0.memory.owned.lock().insert(ptr as u64, kind);
    tracing::debug!(%allocation, "allocated from an HSA pool");
    Ok(allocation)
}

/// Frees what [`allocate`] returned.
pub(crate) fn free(agent: &HsaAgent, base: u64) -> Result<Allocation, DeviceError> {
    let table = &agent.0.table;
    let Some(kind) = agent.0.memory.owned.lock().remove(&base) else {
        return Err(table.not_freeable(base));
    };
    // Remembered for use-after-free reports only in the GPU's pool: freed host-pool memory goes
    // back to the host's allocator, which may hand its addresses out as ordinary host memory.
    let remember = on_device(kind);
    let allocation = table
        .remove(base, remember)
        .ok_or_else(|| DeviceError::InvalidAddress {
            address: base,
            detail: Some("not in the allocation table".into()),
        })?;
    // SAFETY: `base` came from memory_pool_allocate on this runtime (it was in `owned`) and the
    // runtime waited for the device before freeing user memory.
    unsafe { result::memory_pool_free(agent.lib(), base as *mut c_void) }
        .map_err(|e| agent.device_error("freeing pool memory", e))?;
    Ok(allocation)
}

/// Locks `[host, host + size)` for the agent, sharing an existing lock of the same range;
/// returns the agent's address for it.
pub(crate) fn lock_host(agent: &HsaAgent, host: u64, size: u64) -> Result<u64, DeviceError> {
    let mut locks = agent.system().locks.lock();
    if let Some(l) = locks.get_mut(&host) {
        if l.size >= size {
            l.users = l.users.saturating_add(1);
            return Ok(l.agent_ptr);
        }
    }
    let bytes = usize::try_from(size).map_err(|_| DeviceError::InvalidAddress {
        address: host,
        detail: Some(format!("{size} bytes do not fit the address space")),
    })?;
    // SAFETY: the caller vouches for the host range (Device::copy's contract, or a managed
    // variable owned by the runtime); the agent handle comes from this runtime.
    let agent_ptr =
        unsafe { result::memory_lock(agent.lib(), host as *mut c_void, bytes, &[agent.handle()]) }
            .map_err(|e| agent.device_error("locking host memory", e))?;
    let agent_ptr = agent_ptr as u64;
    locks.insert(
        host,
        Lock {
            agent_ptr,
            size,
            users: 1,
        },
    );
    Ok(agent_ptr)
}

/// Releases one use of a range locked with [`lock_host`]; unlocks it with the last one.
pub(crate) fn unlock_host(agent: &HsaAgent, host: u64) {
    let mut locks = agent.system().locks.lock();
    let Some(l) = locks.get_mut(&host) else {
        return;
    };
    l.users = l.users.saturating_sub(1);
    if l.users > 0 {
        return;
    }
    locks.remove(&host);
    // SAFETY: the range was locked by lock_host and its last user is done with it.
    if let Err(e) = unsafe { result::memory_unlock(agent.lib(), host as *mut c_void) } {
        agent.defer(format!("unlocking host memory at {host:#x}: {e}"));
    }
}

/// Registers the caller's host memory (`hipHostRegister`): locked for the agent, recorded at
/// the host's address (what the program names it by), with the agent's address for it
/// (ROCr 5.2.3 on a discrete GPU maps locked memory at an address of the GPU's own, which
/// kernels and copies must use: [`agent_address`]).
pub(crate) fn register_host(
    agent: &HsaAgent,
    base: u64,
    size: u64,
) -> Result<Allocation, DeviceError> {
    let agent_ptr = lock_host(agent, base, size)?;
    match agent
        .0
        .table
        .insert(base, size, MemoryKind::RegisteredHost, true)
    {
        Ok(a) => {
            agent.0.memory.registered.lock().insert(agent_ptr, base);
            Ok(a)
        }
        Err(e) => {
            unlock_host(agent, base);
            Err(DeviceError::InvalidAddress {
                address: base,
                detail: Some(e.to_string()),
            })
        }
    }
}

/// Forgets memory registered with [`register_host`] (by the host's or the agent's address).
pub(crate) fn unregister_host(agent: &HsaAgent, base: u64) -> Result<(), DeviceError> {
    let mut registered = agent.0.memory.registered.lock();
    let found = registered
        .iter()
        .find(|(a, h)| **a == base || **h == base)
        .map(|(a, h)| (*a, *h));
    let Some((agent_ptr, host)) = found else {
        return Err(DeviceError::InvalidAddress {
            address: base,
            detail: Some("not registered".into()),
        });
    };
    registered.remove(&agent_ptr);
    agent.0.table.remove(host, false);
    unlock_host(agent, host);
    Ok(())
}

/// The agent's address for the byte at `host` of registered host memory (itself for any other
/// address).
pub(crate) fn agent_address(agent: &HsaAgent, host: u64) -> u64 {
    let Some(a) = agent.0.table.find(host) else {
        return host;
    };
    if a.kind != MemoryKind::RegisteredHost {
        return host;
    }
    agent
        .0
        .memory
        .registered
        .lock()
        .iter()
        .find(|(_, &h)| h == a.base)
        .map_or(host, |(&agent_ptr, _)| agent_ptr + (host - a.base))
}

/// One side of a copy, as the copy engine sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// In the GPU's pool.
    Device,
    /// Host memory from a pool or registered: reachable by the host and by the copy engine.
    Pinned { host_direct: bool },
    /// The caller's host memory, unknown to the runtime: locked for the copy.
    User,
}

fn classify(agent: &HsaAgent, address: u64, len: u64, write: bool) -> Result<Side, DeviceError> {
    let table = &agent.0.table;
    match table.find(address) {
        Some(a) if a.contains(address, len) => Ok(if on_device(a.kind) {
            Side::Device
        } else {
            Side::Pinned {
                host_direct: a.kind != MemoryKind::RegisteredHost,
            }
        }),
        Some(_) => Err(DeviceError::Access(table.violation(
            address,
            len,
            crate::device::AccessKind::data(write),
        ))),
        None => {
            let v = table.violation(address, len, crate::device::AccessKind::data(write));
            match v.reason {
                ViolationReason::Freed(_) => Err(DeviceError::Access(v)),
                _ => Ok(Side::User),
            }
        }
    }
}

/// Copies `len` bytes, each side checked against the agent's allocations.
///
/// # Safety
/// As [`crate::device::Device::copy`]: host-side ranges are valid for the copy.
pub(crate) unsafe fn copy(
    agent: &HsaAgent,
    dst: u64,
    src: u64,
    len: u64,
) -> Result<(), DeviceError> {
    if len == 0 {
        return Ok(());
    }
    let d = classify(agent, dst, len, true)?;
    let s = classify(agent, src, len, false)?;
    let bytes = usize::try_from(len).map_err(|_| DeviceError::InvalidAddress {
        address: dst,
        detail: Some(format!("{len} bytes do not fit the address space")),
    })?;
    let host_direct = |side: Side| matches!(side, Side::User | Side::Pinned { host_direct: true });
    if host_direct(d) && host_direct(s) {
        // SAFETY: both sides are host memory: pool memory the host may access (checked to lie
        // inside its allocation) or the caller's (its contract). `copy` allows overlap.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, bytes) };
        return Ok(());
    }
    let pools = pools(agent)?;
    let mut locked = Vec::new();
    let mut end = |side: Side, address: u64| -> Result<(u64, hsa_agent_t), DeviceError> {
        match side {
            Side::Device => Ok((address, agent.handle())),
            // Registered memory by the agent's address for it.
            Side::Pinned { .. } => Ok((agent_address(agent, address), pools.cpu)),
            Side::User => {
                let p = lock_host(agent, address, len)?;
                locked.push(address);
                Ok((p, pools.cpu))
            }
        }
    };
    let ends = end(d, dst).and_then(|dst_end| Ok((dst_end, end(s, src)?)));
    let outcome = match ends {
        Ok(((dst_ptr, dst_agent), (src_ptr, src_agent))) => {
            async_copy(agent, dst_ptr, dst_agent, src_ptr, src_agent, bytes)
        }
        Err(e) => Err(e),
    };
    for host in locked {
        unlock_host(agent, host);
    }
    outcome
}

fn async_copy(
    agent: &HsaAgent,
    dst: u64,
    dst_agent: hsa_agent_t,
    src: u64,
    src_agent: hsa_agent_t,
    bytes: usize,
) -> Result<(), DeviceError> {
    let lib = agent.lib();
    let done = super::signal::OwnedSignal::new(agent, 1)?;
    // SAFETY: the agents and the signal come from this runtime; both ranges are pool memory,
    // registered or locked above, and stay so until the wait below returns.
    unsafe {
        result::memory_async_copy(
            lib,
            dst as *mut c_void,
            dst_agent,
            src as *const c_void,
            src_agent,
            bytes,
            &[],
            done.raw(),
        )
    }
    .map_err(|e| agent.device_error("starting a copy", e))?;
    let (value, finished) = done.wait_below_one(Some(COPY_TIMEOUT));
    if !finished {
        return Err(DeviceError::Timeout(COPY_TIMEOUT)).inspect_err(|_| {
            tracing::debug!(value, bytes, "copy did not complete");
        });
    }
    Ok(())
}

/// Fills `len` bytes at `dst` with the `width`-byte `pattern`.
///
/// # Safety
/// As [`crate::device::Device::fill`].
pub(crate) unsafe fn fill(
    agent: &HsaAgent,
    dst: u64,
    pattern: u32,
    width: u8,
    len: u64,
) -> Result<(), DeviceError> {
    if len == 0 {
        return Ok(());
    }
    let word = match width {
        1 => (pattern & 0xff) * 0x0101_0101,
        2 => (pattern & 0xffff) * 0x0001_0001,
        4 => pattern,
        _ => {
            return Err(DeviceError::Unsupported {
                op: "fill",
                backend: "hsa",
                reason: format!("pattern width {width}"),
            })
        }
    };
    let side = classify(agent, dst, len, true)?;
    let bytes = usize::try_from(len).map_err(|_| DeviceError::InvalidAddress {
        address: dst,
        detail: Some(format!("{len} bytes do not fit the address space")),
    })?;
    if side == Side::Device && dst % 4 == 0 && len % 4 == 0 {
        // SAFETY: `dst` is 4-byte aligned pool memory of this agent, `len` bytes inside one
        // allocation (checked).
        return unsafe { result::memory_fill(agent.lib(), dst as *mut c_void, word, bytes / 4) }
            .map_err(|e| agent.device_error("filling device memory", e));
    }
    // Anything else: the pattern in a host buffer, then a copy.
    let mut buffer = Vec::new();
    buffer
        .try_reserve_exact(bytes)
        .map_err(|_| DeviceError::OutOfMemory {
            size: len,
            kind: MemoryKind::PinnedHost,
        })?;
    let pattern_bytes = word.to_le_bytes();
    buffer.extend((0..bytes).map(|i| pattern_bytes[i % 4]));
    // SAFETY: the source is `buffer`, alive for the call; the destination is the caller's.
    unsafe { copy(agent, dst, buffer.as_ptr() as u64, len) }
}
