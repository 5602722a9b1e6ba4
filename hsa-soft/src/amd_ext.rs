//! The rest of ROCr's AMD extension surface that AMD's HIP runtime (clr) calls, answered as
//! ROCr 5.2.3 answers (`core/runtime/hsa_ext_amd.cpp`, `runtime.cpp`, `hsa.cpp`,
//! `hsa_ext_interface.cpp`):
//!
//! - pointer information (`hsa_amd_pointer_info`) from the memory tables;
//! - locking to a pool, rectangular async copies, copy profiling;
//! - `hsa_memory_register`/`deregister` (ROCr checks the arguments and does nothing else);
//! - IPC memory (`hsa_amd_ipc_memory_*`) over the software agent's shareable memory objects:
//!   the 32-byte handle names the object, which another process maps through `/proc`;
//! - agent extension queries; coherency types (recorded);
//! - what a software agent cannot have, answered as ROCr answers without it: graphics interop
//!   (no graphics driver). Images are `crate::images`, shared virtual memory `crate::svm`.

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hsa_sys::*;
use parking_lot::Mutex;
use rocload::device::vmm::{IpcBackend, IpcHandle, IpcKind};
use rocload::device::{Condition, Device, MemoryKind, Signal};

use crate::agents::{agent_handle, agent_index};
use crate::memory::Place;
use crate::runtime::{runtime, Runtime};
use crate::util::{guard, put, Status};

/// Per-runtime state of this module.
#[derive(Default)]
pub(crate) struct State {
    /// `hsa_amd_profiling_async_copy_enable`.
    copy_profiling: AtomicBool,
    /// Signals completed last by a profiled copy (ROCr's `async_copy_agent` is set).
    copy_signals: Mutex<HashSet<u64>>,
    /// `hsa_amd_coherency_set_type` per agent index.
    coherency: Mutex<Vec<(usize, u32)>>,
    /// IPC memory `hsa_amd_ipc_memory_attach` mapped, by the pointer it returned.
    ipc: Mutex<std::collections::HashMap<u64, Attached>>,
}

/// IPC memory attached in this process.
struct Attached {
    /// The GPU agent that opened the memory object (its `ipc_close` unmaps it).
    opener: usize,
    /// Other agents given the range in their tables.
    others: Vec<usize>,
    /// Attaches not yet detached (the same handle attached twice maps once).
    count: u32,
}

/// Bytes of `hsa_amd_ipc_memory_t`: the software agent's IPC payload up to the pointer offset
/// (the owning process and descriptor, the memory object's token, the allocation's offset and
/// size in it), which is all ROCr's handle carries since it names whole allocations.
const IPC_BYTES: usize = 32;

/// ROCr's refusal of larger allocations ("thunk limitations", `Runtime::IPCCreate`).
const IPC_MAX_LEN: usize = 0x7FF_FFFF_F000;

/// Most copy signals remembered; past it the set starts over (its entries only serve
/// `hsa_amd_profiling_get_async_copy_time`).
const MAX_COPY_SIGNALS: usize = 1 << 16;

/// Called by the copies when they are done, before the completion signal is decremented:
/// with copy profiling on, the signal gets the copy's start and end times.
pub(crate) fn copy_completed(rt: &Runtime, handle: u64, signal: &Signal, start: u64) {
    if !rt.amd_ext.copy_profiling.load(Ordering::Acquire) {
        return;
    }
    signal.record_times(start, rocload::device::timestamp_ns());
    let mut set = rt.amd_ext.copy_signals.lock();
    if set.len() >= MAX_COPY_SIGNALS {
        set.clear();
    }
    set.insert(handle);
}

/// ROCr's check of an extension id (`hsa_system_extension_supported` and the agent forms):
/// standard ids up to `HSA_EXTENSION_STD_LAST`, AMD's from `HSA_AMD_FIRST_EXTENSION` to
/// `HSA_AMD_LAST_EXTENSION`.
pub(crate) fn extension_id_valid(extension: u16) -> bool {
    let e = u32::from(extension);
    e <= HSA_EXTENSION_STD_LAST || (HSA_AMD_FIRST_EXTENSION..=HSA_AMD_LAST_EXTENSION).contains(&e)
}

fn signals_of(rt: &Runtime, count: u32, list: *const hsa_signal_t) -> Status<Vec<Arc<Signal>>> {
    if (count == 0) != list.is_null() && count > 0 {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if count > 64 {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if count == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: `count` signals by the API's contract (bounded above).
    unsafe { std::slice::from_raw_parts(list, count as usize) }
        .iter()
        .map(|s| {
            rt.signals
                .get(s.handle)
                .ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)
        })
        .collect()
}

/// One row of a rectangular copy: `len` bytes at `dst` and `src`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    dst: u64,
    src: u64,
}

/// The rows of a rectangular copy, in order (`range.x` bytes each); `None` when an address
/// overflows.
fn rect_rows(
    dst: &hsa_pitched_ptr_t,
    dst_offset: &hsa_dim3_t,
    src: &hsa_pitched_ptr_t,
    src_offset: &hsa_dim3_t,
    range: &hsa_dim3_t,
) -> Option<Vec<Row>> {
    let at = |p: &hsa_pitched_ptr_t, o: &hsa_dim3_t, y: u32, z: u32| -> Option<u64> {
        let slice = (p.slice as u64).checked_mul(u64::from(o.z) + u64::from(z))?;
        let row = (p.pitch as u64).checked_mul(u64::from(o.y) + u64::from(y))?;
        (p.base as u64)
            .checked_add(slice)?
            .checked_add(row)?
            .checked_add(u64::from(o.x))
    };
    let count = usize::try_from(u64::from(range.y) * u64::from(range.z)).ok()?;
    let mut rows = Vec::new();
    rows.try_reserve(count).ok()?;
    for z in 0..range.z {
        for y in 0..range.y {
            rows.push(Row {
                dst: at(dst, dst_offset, y, z)?,
                src: at(src, src_offset, y, z)?,
            });
        }
    }
    Some(rows)
}

/// Largest number of rows a rectangular copy may have (each row is checked and copied).
const MAX_RECT_ROWS: u64 = 1 << 24;

/// # Safety
/// Every row lies in pool or locked memory (checked by the caller).
unsafe fn copy_rows(rows: &[Row], len: usize) {
    for r in rows {
        // SAFETY: the caller checked each row against the memory tables.
        unsafe { std::ptr::copy(r.src as *const u8, r.dst as *mut u8, len) };
    }
}

type AllocFn = Option<unsafe extern "C" fn(usize) -> *mut c_void>;

hsa_api! {
    /// `hsa_amd_pointer_info`: what the memory tables know of `ptr` (ROCr's `Runtime::PtrInfo`):
    /// pool memory is `HSA`, locked memory `LOCKED` (owned by the CPU agent), anything else
    /// `UNKNOWN` (owner: the CPU agent, node 0, as the thunk's zeroed answer gives). Writes at
    /// most `info->size` bytes; with `alloc`, the accessible agents in memory from `alloc`.
    fn hsa_amd_pointer_info(ptr: *const c_void, info: *mut hsa_amd_pointer_info_t, alloc: AllocFn, num_agents_accessible: *mut u32, accessible: *mut *mut hsa_agent_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if ptr.is_null() || info.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: `info` points to a hsa_amd_pointer_info_t whose first field is set.
            let size = unsafe { std::ptr::read_unaligned(info.cast::<u32>()) };
            if size == 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let requested_sizes = rt.caps.version >= rocload::loader::rocr::RocrVersion::V6_2;
            let block = rt.memory.block_info(ptr as u64, requested_sizes);
            let mut out = hsa_amd_pointer_info_t {
                size: (size as usize).min(std::mem::size_of::<hsa_amd_pointer_info_t>()) as u32,
                type_: HSA_EXT_POINTER_TYPE_UNKNOWN,
                agentBaseAddress: std::ptr::null_mut(),
                hostBaseAddress: std::ptr::null_mut(),
                sizeInBytes: 0,
                userData: std::ptr::null_mut(),
                agentOwner: agent_handle(0),
                global_flags: HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
            };
            let mut mapped = Vec::new();
            if let Some(b) = &block {
                out.type_ = if b.locked { HSA_EXT_POINTER_TYPE_LOCKED } else { HSA_EXT_POINTER_TYPE_HSA };
                out.agentBaseAddress = b.agent_base as *mut c_void;
                out.hostBaseAddress = b.base as *mut c_void;
                out.sizeInBytes = b.size as usize;
                out.agentOwner = agent_handle(b.owner);
                if b.coarse {
                    out.global_flags = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
                }
                mapped.push(b.owner);
                mapped.extend(b.agents.iter().copied().filter(|&a| a != b.owner));
            }
            // SAFETY: the caller's struct holds `size` bytes; `out.size` is at most that.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (&out as *const hsa_amd_pointer_info_t).cast::<u8>(),
                    info.cast::<u8>(),
                    out.size as usize,
                )
            };
            if let (Some(alloc), false, false) = (alloc, num_agents_accessible.is_null(), accessible.is_null()) {
                let bytes = std::mem::size_of::<hsa_agent_t>() * mapped.len();
                // SAFETY: the application's allocator.
                let list = unsafe { alloc(bytes) }.cast::<hsa_agent_t>();
                if list.is_null() && !mapped.is_empty() {
                    return Err(HSA_STATUS_ERROR_OUT_OF_RESOURCES);
                }
                for (i, &a) in mapped.iter().enumerate() {
                    // SAFETY: `list` has room for `mapped.len()` agents.
                    unsafe { list.add(i).write_unaligned(agent_handle(a)) };
                }
                // SAFETY: non-NULL out-pointers.
                unsafe {
                    put(num_agents_accessible.cast(), mapped.len() as u32)?;
                    put(accessible.cast(), list)?;
                }
            }
            Ok(())
        })
    }

    /// `hsa_amd_memory_lock_to_pool`: `hsa_amd_memory_lock` for a CPU agent's pool (flags 0).
    fn hsa_amd_memory_lock_to_pool(host_ptr: *mut c_void, size: usize, agents: *mut hsa_agent_t, num_agent: std::os::raw::c_int, pool: hsa_amd_memory_pool_t, flags: u32, agent_ptr: *mut *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if size == 0 || host_ptr.is_null() || agent_ptr.is_null() || flags != 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: non-NULL out-pointer.
            unsafe { put(agent_ptr.cast(), std::ptr::null_mut::<c_void>())? };
            if (!agents.is_null() && num_agent == 0) || (agents.is_null() && num_agent != 0) {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (owner, _) = crate::memory::pool_of(&rt, pool.handle)?;
            if rt.agents[owner].gpu().is_some() {
                return Err(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
            }
            // SAFETY: forwarded with the caller's pointers.
            match unsafe { crate::memory::hsa_amd_memory_lock(host_ptr, size, agents, num_agent, agent_ptr) } {
                HSA_STATUS_SUCCESS => Ok(()),
                status => Err(status),
            }
        })
    }

    /// `hsa_amd_memory_async_copy_rect`: `range.z` slices of `range.y` rows of `range.x`
    /// bytes, every row in pool or locked memory, through a GPU agent (ROCr's SDMA path), once
    /// `dep_signals` are 0; then `completion_signal` is decremented. An empty range does
    /// nothing (and leaves the signal), as in ROCr.
    fn hsa_amd_memory_async_copy_rect(
        dst: *const hsa_pitched_ptr_t,
        dst_offset: *const hsa_dim3_t,
        src: *const hsa_pitched_ptr_t,
        src_offset: *const hsa_dim3_t,
        range: *const hsa_dim3_t,
        copy_agent: hsa_agent_t,
        dir: hsa_amd_copy_direction_t,
        num_dep_signals: u32,
        dep_signals: *const hsa_signal_t,
        completion_signal: hsa_signal_t,
    ) -> hsa_status_t {
        guard(|| {
            if dst.is_null() || src.is_null() || dst_offset.is_null() || src_offset.is_null() || range.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if (num_dep_signals == 0) != dep_signals.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if dir == hsaHostToHost {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let rt = runtime()?;
            let agent = agent_index(copy_agent, rt.agents.len())?;
            if rt.agents[agent].gpu().is_none() {
                return Err(HSA_STATUS_ERROR_INVALID_AGENT);
            }
            let deps = signals_of(&rt, num_dep_signals, dep_signals)?;
            let completion = rt.signals.get(completion_signal.handle).ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)?;
            // SAFETY: non-NULL pointers to the API's plain structs.
            let (dst, dst_offset, src, src_offset, range) = unsafe { (*dst, *dst_offset, *src, *src_offset, *range) };
            if range.x == 0 || range.y == 0 || range.z == 0 {
                return Ok(());
            }
            if u64::from(range.y) * u64::from(range.z) > MAX_RECT_ROWS {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let mut rows = rect_rows(&dst, &dst_offset, &src, &src_offset, &range).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let len = u64::from(range.x);
            for r in &mut rows {
                for address in [r.dst, r.src] {
                    if rt.memory.place(&rt, address, len)? == Place::Unknown {
                        tracing::debug!(address = format_args!("{address:#x}"), "rect copy of memory that is neither pool memory nor locked");
                        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
                    }
                }
                // The agents' view of locked memory is the host's bytes elsewhere.
                r.dst = rt.memory.to_host(r.dst, len);
                r.src = rt.memory.to_host(r.src, len);
            }
            let handle = completion_signal.handle;
            let run = move |rt: &Runtime| {
                let start = rocload::device::timestamp_ns();
                // SAFETY: every row was checked above; the application keeps the memory until
                // the completion signal says the copy is done.
                unsafe { copy_rows(&rows, range.x as usize) };
                copy_completed(rt, handle, &completion, start);
                completion.subtract(1);
            };
            if deps.iter().all(|d| d.load() == 0) {
                run(&rt);
                return Ok(());
            }
            let worker = rt.clone();
            std::thread::Builder::new()
                .name("hsa-soft-copy".into())
                .spawn(move || {
                    for dep in &deps {
                        while !dep.wait(Condition::Eq, 0, Some(std::time::Duration::from_millis(100))).1 {}
                    }
                    run(&worker);
                })
                .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
            Ok(())
        })
    }

    /// `hsa_amd_profiling_async_copy_enable`: later copies record their times in their
    /// completion signals.
    fn hsa_amd_profiling_async_copy_enable(enable: bool) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            rt.amd_ext.copy_profiling.store(enable, Ordering::Release);
            Ok(())
        })
    }

    /// `hsa_amd_profiling_get_async_copy_time`: the times a profiled copy recorded in
    /// `signal`; `HSA_STATUS_ERROR` when no profiled copy completed it (ROCr: no copy agent).
    fn hsa_amd_profiling_get_async_copy_time(signal: hsa_signal_t, time: *mut hsa_amd_profiling_async_copy_time_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if time.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let s = rt.signals.get(signal.handle).ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)?;
            if !rt.amd_ext.copy_signals.lock().contains(&signal.handle) {
                return Err(HSA_STATUS_ERROR);
            }
            let (start, end) = s.times();
            // SAFETY: non-NULL out-pointer.
            unsafe { put(time.cast(), hsa_amd_profiling_async_copy_time_t { start, end }) }
        })
    }

    /// `hsa_memory_register`: ROCr refuses a size of 0 with an address and does nothing else.
    fn hsa_memory_register(address: *mut c_void, size: usize) -> hsa_status_t {
        guard(|| {
            runtime()?;
            if size == 0 && !address.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            Ok(())
        })
    }

    /// `hsa_memory_deregister`: nothing to undo.
    fn hsa_memory_deregister(address: *mut c_void, size: usize) -> hsa_status_t {
        guard(|| {
            let _ = (address, size);
            runtime()?;
            Ok(())
        })
    }

    /// `hsa_agent_extension_supported`: as ROCr, true on GPU agents for any valid extension
    /// at major version 1 or below and minor 0; false on the CPU agent.
    fn hsa_agent_extension_supported(extension: u16, agent: hsa_agent_t, version_major: u16, version_minor: u16, result: *mut bool) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if !extension_id_valid(extension) || result.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: non-NULL out-pointer.
            unsafe { put(result.cast(), false)? };
            let index = agent_index(agent, rt.agents.len())?;
            let gpu = rt.agents[index].gpu().is_some();
            // SAFETY: as above.
            unsafe { put(result.cast(), gpu && version_major <= 1 && version_minor == 0) }
        })
    }

    /// `hsa_agent_major_extension_supported`: as above, minor version 0.
    fn hsa_agent_major_extension_supported(extension: u16, agent: hsa_agent_t, version_major: u16, version_minor: *mut u16, result: *mut bool) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if !extension_id_valid(extension) || result.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: non-NULL out-pointer.
            unsafe { put(result.cast(), false)? };
            let index = agent_index(agent, rt.agents.len())?;
            if rt.agents[index].gpu().is_some() && version_major <= 1 {
                if version_minor.is_null() {
                    return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
                }
                // SAFETY: non-NULL out-pointers.
                unsafe {
                    put(version_minor.cast(), 0u16)?;
                    put(result.cast(), true)?;
                }
            }
            Ok(())
        })
    }

    /// `hsa_amd_coherency_get_type`: the type last set (coherent by default), GPU agents only.
    fn hsa_amd_coherency_get_type(agent: hsa_agent_t, type_: *mut hsa_amd_coherency_type_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let index = agent_index(agent, rt.agents.len())?;
            if type_.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if rt.agents[index].gpu().is_none() {
                return Err(HSA_STATUS_ERROR_INVALID_AGENT);
            }
            let t = rt.amd_ext.coherency.lock().iter().find(|(a, _)| *a == index).map_or(HSA_AMD_COHERENCY_TYPE_COHERENT, |&(_, t)| t);
            // SAFETY: non-NULL out-pointer.
            unsafe { put(type_.cast(), t) }
        })
    }

    /// `hsa_amd_coherency_set_type`: recorded (the software agent's memory is coherent
    /// either way; ROCr records it on every GPU but Kaveri).
    fn hsa_amd_coherency_set_type(agent: hsa_agent_t, type_: hsa_amd_coherency_type_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let index = agent_index(agent, rt.agents.len())?;
            if type_ > HSA_AMD_COHERENCY_TYPE_NONCOHERENT {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if rt.agents[index].gpu().is_none() {
                return Err(HSA_STATUS_ERROR_INVALID_AGENT);
            }
            let mut c = rt.amd_ext.coherency.lock();
            c.retain(|(a, _)| *a != index);
            c.push((index, type_));
            Ok(())
        })
    }

    /// `hsa_amd_ipc_memory_create` (`Runtime::IPCCreate`): `ptr` must start a pool allocation
    /// and `len` be the size pointer info reports for it, else `INVALID_ARGUMENT`. The handle
    /// names the software agent's memory object holding the block (its process, descriptor,
    /// token, offset and size), which another process opens through `/proc`; memory that
    /// cannot be shared (system pools, locked memory, a block the host could not put in a
    /// memory object) is `INVALID_ARGUMENT`, as the driver's share failing is in ROCr.
    fn hsa_amd_ipc_memory_create(ptr: *mut c_void, len: usize, handle: *mut hsa_amd_ipc_memory_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if ptr.is_null() || handle.is_null() || len > IPC_MAX_LEN {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let requested_sizes = rt.caps.version >= rocload::loader::rocr::RocrVersion::V6_2;
            let block = rt.memory.block_info(ptr as u64, requested_sizes).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            if block.base != ptr as u64 || block.size != len as u64 || block.locked {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (soft, _) = rt.agents.get(block.owner).and_then(|a| a.gpu()).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let exported = soft.ipc_export(ptr as u64).map_err(|e| {
                tracing::debug!(error = %e, "IPC memory cannot be shared");
                HSA_STATUS_ERROR_INVALID_ARGUMENT
            })?;
            let mut out = hsa_amd_ipc_memory_t { handle: [0; 8] };
            for (i, w) in out.handle.iter_mut().enumerate() {
                let b = exported.bytes_at(4 * i, 4);
                *w = u32::from_le_bytes(b.try_into().map_err(|_| HSA_STATUS_ERROR)?);
            }
            // SAFETY: non-NULL out-pointer to a hsa_amd_ipc_memory_t.
            unsafe { put(handle.cast(), out) }
        })
    }

    /// `hsa_amd_ipc_memory_attach` (`Runtime::IPCAttach`): maps the memory a handle names
    /// for the agents listed (every GPU agent when none is), at one address they all reach.
    /// `len` is not checked (ROCr uses it only for fragments). A handle that names nothing
    /// this process can open is `INVALID_ARGUMENT`.
    fn hsa_amd_ipc_memory_attach(handle: *const hsa_amd_ipc_memory_t, len: usize, num_agents: u32, mapping_agents: *const hsa_agent_t, mapped_ptr: *mut *mut c_void) -> hsa_status_t {
        guard(|| {
            let _ = len;
            let rt = runtime()?;
            if handle.is_null() || mapped_ptr.is_null() || (num_agents != 0 && mapping_agents.is_null()) {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if num_agents as usize > rt.agents.len() * 4 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let mut gpus = Vec::new();
            if num_agents > 0 {
                // SAFETY: `num_agents` agents by the API's contract (bounded above).
                for &a in unsafe { std::slice::from_raw_parts(mapping_agents, num_agents as usize) } {
                    let i = agent_index(a, rt.agents.len())?;
                    if rt.agents[i].gpu().is_some() && !gpus.contains(&i) {
                        gpus.push(i);
                    }
                }
            } else {
                gpus = (0..rt.agents.len()).filter(|&i| rt.agents[i].gpu().is_some()).collect();
            }
            let &opener = gpus.first().ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            // SAFETY: the caller's handle, 32 bytes.
            let raw = unsafe { std::ptr::read_unaligned(handle) };
            let mut payload = [0u8; IPC_BYTES];
            for (i, w) in raw.handle.iter().enumerate() {
                payload[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
            }
            let mut ipc = IpcHandle::new(IpcKind::Memory, IpcBackend::Soft);
            ipc.put_bytes(0, &payload);
            let size = ipc.u64_at(24);
            let (soft, _) = rt.agents[opener].gpu().ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let mut attached = rt.amd_ext.ipc.lock();
            let pointer = soft.ipc_open(&ipc).map_err(|e| {
                tracing::debug!(error = %e, "IPC memory cannot be attached");
                HSA_STATUS_ERROR_INVALID_ARGUMENT
            })?;
            let entry = attached.entry(pointer).or_insert(Attached { opener, others: Vec::new(), count: 0 });
            entry.count = entry.count.saturating_add(1);
            for &a in gpus.iter().skip(1) {
                if a == entry.opener || entry.others.contains(&a) {
                    continue;
                }
                if let Some((other, _)) = rt.agents[a].gpu() {
                    other.allocations()
                        .insert(pointer, size, MemoryKind::Imported, true)
                        .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
                    entry.others.push(a);
                }
            }
            // SAFETY: non-NULL out-pointer.
            unsafe { put(mapped_ptr.cast(), pointer as *mut c_void) }
        })
    }

    /// `hsa_amd_ipc_memory_detach` (`Runtime::IPCDetach`): unmaps what an attach returned
    /// (once each attach of it is detached); anything else is `INVALID_ARGUMENT`.
    fn hsa_amd_ipc_memory_detach(mapped_ptr: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let pointer = mapped_ptr as u64;
            let mut attached = rt.amd_ext.ipc.lock();
            let entry = attached.get_mut(&pointer).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            entry.count -= 1;
            let last = entry.count == 0;
            let Attached { opener, others, .. } = if last {
                attached.remove(&pointer).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?
            } else {
                Attached { opener: entry.opener, others: Vec::new(), count: 0 }
            };
            if last {
                for a in others {
                    if let Some((other, _)) = rt.agents[a].gpu() {
                        let t = other.allocations();
                        if t.find(pointer).is_some_and(|x| x.base == pointer && x.kind == MemoryKind::Imported) {
                            t.remove(pointer, true);
                        }
                    }
                }
            }
            let (soft, _) = rt.agents[opener].gpu().ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            soft.ipc_close(pointer).map_err(|e| {
                tracing::debug!(error = %e, "IPC memory detach refused");
                HSA_STATUS_ERROR_INVALID_ARGUMENT
            })
        })
    }

    /// `hsa_amd_interop_map_buffer`: no graphics driver can export a buffer to this agent.
    fn hsa_amd_interop_map_buffer(num_agents: u32, agents: *mut hsa_agent_t, interop_handle: std::os::raw::c_int, flags: u32, size: *mut usize, ptr: *mut *mut c_void, metadata_size: *mut usize, metadata: *mut *const c_void) -> hsa_status_t {
        guard(|| {
            let _ = (interop_handle, metadata_size, metadata);
            runtime()?;
            if agents.is_null() || size.is_null() || ptr.is_null() || flags != 0 || num_agents == 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
        })
    }

    /// `hsa_amd_interop_unmap_buffer`: nothing is mapped; ROCr succeeds.
    fn hsa_amd_interop_unmap_buffer(ptr: *mut c_void) -> hsa_status_t {
        guard(|| {
            let _ = ptr;
            runtime()?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pitched(base: u64, pitch: usize, slice: usize) -> hsa_pitched_ptr_t {
        hsa_pitched_ptr_t {
            base: base as *mut c_void,
            pitch,
            slice,
        }
    }

    #[test]
    fn rect_rows_walk_slices_then_rows_from_the_offsets() {
        let d = pitched(0x1000, 64, 64 * 4);
        let s = pitched(0x9000, 32, 32 * 8);
        let rows = rect_rows(
            &d,
            &hsa_dim3_t { x: 4, y: 1, z: 0 },
            &s,
            &hsa_dim3_t { x: 0, y: 2, z: 1 },
            &hsa_dim3_t { x: 8, y: 2, z: 2 },
        )
        .unwrap();
        let expect = |dy: u64, dz: u64, sy: u64, sz: u64| Row {
            dst: 0x1000 + dz * 256 + dy * 64 + 4,
            src: 0x9000 + sz * 256 + sy * 32,
        };
        assert_eq!(
            rows,
            vec![
                expect(1, 0, 2, 1),
                expect(2, 0, 3, 1),
                expect(1, 1, 2, 2),
                expect(2, 1, 3, 2)
            ]
        );
    }

    #[test]
    fn rect_rows_refuse_addresses_that_overflow() {
        let d = pitched(u64::MAX - 8, 1 << 20, 1 << 30);
        let s = pitched(0x1000, 16, 16);
        let zero = hsa_dim3_t { x: 0, y: 0, z: 0 };
        let range = hsa_dim3_t { x: 4, y: 2, z: 1 };
        assert!(rect_rows(&d, &zero, &s, &zero, &range).is_none());
    }

    #[test]
    fn extension_ids_are_checked_as_rocr_checks_them() {
        assert!(extension_id_valid(HSA_EXTENSION_IMAGES as u16));
        assert!(extension_id_valid(HSA_EXTENSION_AMD_AQLPROFILE as u16));
        assert!(!extension_id_valid(4));
        assert!(!extension_id_valid(515));
    }
}
