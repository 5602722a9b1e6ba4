//! AQL queues (`core/runtime/amd_aql_queue.cpp`, `hsa.cpp`'s `hsa_queue_*`): the software
//! agent's queues with ROCr's semantics. The application writes packets into the ring at
//! `base_address` and rings the doorbell signal; the agent's packet processor runs them
//! (barrier-AND packets, and kernel dispatches on its executor). A failed packet suspends the
//! queue, leaves its completion signal unchanged and calls the queue's error callback with the
//! status ROCr would report (`AqlQueue::ExceptionHandler`): a kernel memory fault is first
//! reported to the system event handlers as `HSA_AMD_GPU_MEMORY_FAULT_EVENT` (without one,
//! ROCr prints the fault and aborts; this library prints it as ROCr does, with rocload's
//! details after, unless `ROCLOAD_FAULT_REPORTS=0`, and calls the queue's callback with
//! `HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION`); a trap or an executor failure is
//! `HSA_STATUS_ERROR_EXCEPTION`; a malformed packet `HSA_STATUS_ERROR_INVALID_PACKET_FORMAT`.
//!
//! Queue priorities and CU masks are checked and kept as ROCr keeps them (`hsa_ext_amd.cpp`,
//! `AqlQueue::SetCUMasking`); they change nothing, since the agent has one emulator and no
//! hardware queues. Profiling (`hsa_amd_profiling_set_profiler_enabled`) makes the packet
//! processor record each packet's start and end in its completion signal, in the system
//! timestamp's domain (nanoseconds), which `hsa_amd_profiling_get_dispatch_time` reads back.

use std::ffi::c_void;
use std::sync::Arc;

use hsa_sys::*;
use rocload::backend::soft::SoftQueue;
use rocload::device::{Device, ExecutionError, Queue};

use crate::agents::{agent_handle, agent_index, QUEUE_MAX_SIZE, QUEUE_MIN_SIZE};
use crate::runtime::{runtime, EventHandlers};
use crate::util::{guard, guard_value, put};

/// A queue of the runtime, by the address of its `hsa_queue_t`.
pub(crate) struct QueueEntry {
    queue: Arc<SoftQueue>,
    /// The CU mask in force, one bit per CU of the agent (ROCr's `cu_mask_`).
    cu_mask: Vec<u32>,
    /// The priority last set (`hsa_amd_queue_priority_t`).
    priority: u32,
    /// The agent's compute units.
    cus: u32,
}

/// Dwords of a CU mask for `cu_count` CUs, and the mask of the last one (0: all bits).
fn cu_mask_shape(cu_count: u32) -> (usize, u32) {
    (
        cu_count.div_ceil(32) as usize,
        (1u32 << (cu_count % 32)).wrapping_sub(1),
    )
}

/// ROCr's `AqlQueue::SetCUMasking` without a global mask: the user's dwords (all ones when
/// none), limited to the agent's CUs.
fn clip_cu_mask(user: &[u32], cu_count: u32) -> Vec<u32> {
    let (dwords, tail) = cu_mask_shape(cu_count);
    let mut mask: Vec<u32> = if user.is_empty() {
        vec![u32::MAX; dwords]
    } else {
        user.iter().copied().take(dwords).collect()
    };
    mask.resize(mask.len().min(dwords), 0);
    if mask.len() == dwords && tail != 0 {
        if let Some(last) = mask.last_mut() {
            *last &= tail;
        }
    }
    mask
}

/// The error callback `hsa_queue_create` was given.
type ErrorCallback = unsafe extern "C" fn(hsa_status_t, *mut hsa_queue_t, *mut c_void);

/// The status ROCr reports for a failed packet, and whether it is a memory fault (reported to
/// the system event handlers first).
fn status_of(error: &ExecutionError) -> (hsa_status_t, Option<u64>) {
    match error {
        ExecutionError::MemoryFault { violation, .. } => (
            HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
            Some(violation.address),
        ),
        ExecutionError::SegmentFault { address, .. } => {
            (HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION, Some(*address))
        }
        ExecutionError::Kernel { .. } => (HSA_STATUS_ERROR_EXCEPTION, None),
        ExecutionError::Packet(_) => (HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, None),
        ExecutionError::Resources { .. } => (HSA_STATUS_ERROR_OUT_OF_RESOURCES, None),
        _ => (HSA_STATUS_ERROR_EXCEPTION, None),
    }
}

fn queue_of(queue: *const hsa_queue_t) -> Option<Arc<SoftQueue>> {
    let rt = runtime().ok()?;
    let q = rt
        .queues
        .lock()
        .get(&(queue as u64))
        .map(|e| e.queue.clone());
    if q.is_none() {
        tracing::debug!(queue = format_args!("{:#x}", queue as u64), "unknown queue");
    }
    q
}

fn with_queue(queue: *const hsa_queue_t, f: impl FnOnce(&SoftQueue) -> u64) -> u64 {
    guard_value(0, || queue_of(queue).map_or(0, |q| f(&q)))
}

type QueueCallback = Option<ErrorCallback>;

hsa_api! {
    /// `hsa_queue_create`: a queue of `size` packets (a power of two between 64 and the
    /// agent's maximum) on a GPU agent.
    fn hsa_queue_create(
        agent: hsa_agent_t,
        size: u32,
        type_: hsa_queue_type32_t,
        callback: QueueCallback,
        data: *mut c_void,
        private_segment_size: u32,
        group_segment_size: u32,
        queue: *mut *mut hsa_queue_t,
    ) -> hsa_status_t {
        guard(|| {
            let _ = (private_segment_size, group_segment_size);
            let rt = runtime()?;
            if queue.is_null() || size == 0 || !size.is_power_of_two() || type_ > HSA_QUEUE_TYPE_COOPERATIVE {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let index = agent_index(agent, rt.agents.len())?;
            let (soft, _) = rt.agents[index].gpu().ok_or(HSA_STATUS_ERROR_INVALID_AGENT)?;
            if !(QUEUE_MIN_SIZE..=QUEUE_MAX_SIZE).contains(&size) {
                return Err(HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
            }
            let events: Arc<EventHandlers> = rt.events.clone();
            // The hsa_queue_t's address is known only once the queue exists.
            let address = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let seen = address.clone();
            let data = data as usize;
            let agent_handle = agent_handle(index);
            // GPU agents follow the CPU (index 0), so the index is ROCr's node number.
            let node = u32::try_from(index).unwrap_or(u32::MAX);
            let reports = rocload::runtime::config::Config::global()
                .fault_reports
                .clone()
                .unwrap_or(true);
            let on_error: rocload::backend::soft::QueueErrorHandler = Arc::new(move |error: &ExecutionError| {
                let (status, fault) = status_of(error);
                let queue = seen.load(std::sync::atomic::Ordering::Acquire) as *mut hsa_queue_t;
                if let Some(address) = fault {
                    if events.memory_fault(agent_handle, address, HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT as u32) {
                        return;
                    }
                    if reports {
                        eprint!("{}", error.report(node, agent_handle.handle));
                    }
                }
                match callback {
                    // SAFETY: the application's error callback with its own data and queue.
                    Some(f) => unsafe { f(status, queue, data as *mut c_void) },
                    None => eprintln!("hsa-soft: queue {:#x} failed: {error}", queue as u64),
                }
            });
            let soft_queue = soft
                .create_rocr_queue(size, on_error)
                .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
            let q = soft_queue.hsa_queue();
            address.store(q, std::sync::atomic::Ordering::Release);
            let cus = soft.properties().compute_units;
            let cu_mask = clip_cu_mask(&[], cus);
            rt.queues.lock().insert(q, QueueEntry { queue: soft_queue, cu_mask, priority: HSA_AMD_QUEUE_PRIORITY_NORMAL, cus });
            tracing::debug!(queue = format_args!("{q:#x}"), size, "queue created");
            // SAFETY: non-NULL out-pointer.
            unsafe { put(queue.cast(), q as *mut hsa_queue_t) }
        })
    }

    /// `hsa_queue_destroy`: stops the processor (pending packets are not run).
    fn hsa_queue_destroy(queue: *mut hsa_queue_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let entry = rt.queues.lock().remove(&(queue as u64)).ok_or(HSA_STATUS_ERROR_INVALID_QUEUE)?;
            drop(entry);
            Ok(())
        })
    }

    /// `hsa_amd_queue_set_priority`: low, normal or high (else `INVALID_ARGUMENT`); recorded.
    fn hsa_amd_queue_set_priority(queue: *mut hsa_queue_t, priority: hsa_amd_queue_priority_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if queue.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let mut queues = rt.queues.lock();
            let entry = queues.get_mut(&(queue as u64)).ok_or(HSA_STATUS_ERROR_INVALID_QUEUE)?;
            if priority > HSA_AMD_QUEUE_PRIORITY_HIGH {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            entry.priority = priority;
            tracing::debug!(queue = format_args!("{:#x}", queue as u64), priority = entry.priority, "queue priority");
            Ok(())
        })
    }

    /// `hsa_amd_queue_cu_set_mask`: `num_cu_mask_count` bits (a multiple of 32; 0 resets),
    /// limited to the agent's CUs.
    fn hsa_amd_queue_cu_set_mask(queue: *const hsa_queue_t, num_cu_mask_count: u32, cu_mask: *const u32) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let mut queues = rt.queues.lock();
            let entry = queues.get_mut(&(queue as u64)).ok_or(HSA_STATUS_ERROR_INVALID_QUEUE)?;
            if num_cu_mask_count != 0 && cu_mask.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if num_cu_mask_count % 32 != 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let cus = entry.cus;
            // ROCr reads every dword and drops those past the agent's CUs: only those are read.
            let (dwords, _) = cu_mask_shape(cus);
            let n = (num_cu_mask_count as usize / 32).min(dwords);
            let user = if n == 0 {
                &[][..]
            } else {
                // SAFETY: the caller passes num_cu_mask_count / 32 dwords; n is at most that.
                unsafe { std::slice::from_raw_parts(cu_mask, n) }
            };
            entry.cu_mask = clip_cu_mask(user, cus);
            // The mask chooses the host CPUs the queue's dispatches run on, as librocload.so's
            // streams do (a CU is a CPU of the software agent).
            entry.queue.set_cu_mask(&entry.cu_mask).map_err(|_| HSA_STATUS_ERROR)?;
            Ok(())
        })
    }

    /// `hsa_amd_queue_cu_get_mask`: the mask in force, zero-padded to `num_cu_mask_count` bits.
    fn hsa_amd_queue_cu_get_mask(queue: *const hsa_queue_t, num_cu_mask_count: u32, cu_mask: *mut u32) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if cu_mask.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let queues = rt.queues.lock();
            let entry = queues.get(&(queue as u64)).ok_or(HSA_STATUS_ERROR_INVALID_QUEUE)?;
            if num_cu_mask_count == 0 || num_cu_mask_count % 32 != 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let n = num_cu_mask_count as usize / 32;
            // SAFETY: the caller's buffer holds num_cu_mask_count / 32 dwords.
            let out = unsafe { std::slice::from_raw_parts_mut(cu_mask, n) };
            for (i, word) in out.iter_mut().enumerate() {
                *word = entry.cu_mask.get(i).copied().unwrap_or(0);
            }
            Ok(())
        })
    }

    /// `hsa_amd_profiling_set_profiler_enabled`: packets' start and end times go into their
    /// completion signals while enabled.
    fn hsa_amd_profiling_set_profiler_enabled(queue: *mut hsa_queue_t, enable: std::os::raw::c_int) -> hsa_status_t {
        guard(|| {
            let q = queue_of(queue).ok_or(HSA_STATUS_ERROR_INVALID_QUEUE)?;
            q.set_profiling(enable != 0);
            Ok(())
        })
    }

    /// `hsa_amd_profiling_get_dispatch_time`: the times the packet processor recorded in
    /// `signal` (0 when its packet was not profiled), already in the system domain.
    fn hsa_amd_profiling_get_dispatch_time(agent: hsa_agent_t, signal: hsa_signal_t, time: *mut hsa_amd_profiling_dispatch_time_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if time.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let index = agent_index(agent, rt.agents.len())?;
            let s = rt.signals.get(signal.handle).ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)?;
            if rt.agents[index].gpu().is_none() {
                return Err(HSA_STATUS_ERROR_INVALID_AGENT);
            }
            let (start, end) = s.times();
            // SAFETY: non-NULL out-pointer.
            unsafe { put(time.cast(), hsa_amd_profiling_dispatch_time_t { start, end }) }
        })
    }

    /// `hsa_amd_profiling_convert_tick_to_system_domain`: agent ticks are system ticks.
    fn hsa_amd_profiling_convert_tick_to_system_domain(agent: hsa_agent_t, agent_tick: u64, system_tick: *mut u64) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if system_tick.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let index = agent_index(agent, rt.agents.len())?;
            if rt.agents[index].gpu().is_none() {
                return Err(HSA_STATUS_ERROR_INVALID_AGENT);
            }
            // SAFETY: non-NULL out-pointer.
            unsafe { put(system_tick.cast(), agent_tick) }
        })
    }

    /// `hsa_queue_load_read_index_scacquire`.
    fn hsa_queue_load_read_index_scacquire(queue: *const hsa_queue_t) -> u64 { with_queue(queue, |q| q.load_read_index()) }
    /// `hsa_queue_load_read_index_relaxed`.
    fn hsa_queue_load_read_index_relaxed(queue: *const hsa_queue_t) -> u64 { with_queue(queue, |q| q.load_read_index()) }
    /// `hsa_queue_load_read_index_acquire` (deprecated name).
    fn hsa_queue_load_read_index_acquire(queue: *const hsa_queue_t) -> u64 { with_queue(queue, |q| q.load_read_index()) }
    /// `hsa_queue_load_write_index_scacquire`.
    fn hsa_queue_load_write_index_scacquire(queue: *const hsa_queue_t) -> u64 { with_queue(queue, |q| q.load_write_index()) }
    /// `hsa_queue_load_write_index_relaxed`.
    fn hsa_queue_load_write_index_relaxed(queue: *const hsa_queue_t) -> u64 { with_queue(queue, |q| q.load_write_index()) }
    /// `hsa_queue_load_write_index_acquire` (deprecated name).
    fn hsa_queue_load_write_index_acquire(queue: *const hsa_queue_t) -> u64 { with_queue(queue, |q| q.load_write_index()) }
    /// `hsa_queue_store_write_index_relaxed`.
    fn hsa_queue_store_write_index_relaxed(queue: *const hsa_queue_t, value: u64) -> () { with_queue(queue, |q| { q.store_write_index(value); 0 }); }
    /// `hsa_queue_store_write_index_screlease`.
    fn hsa_queue_store_write_index_screlease(queue: *const hsa_queue_t, value: u64) -> () { with_queue(queue, |q| { q.store_write_index(value); 0 }); }
    /// `hsa_queue_add_write_index_relaxed`.
    fn hsa_queue_add_write_index_relaxed(queue: *const hsa_queue_t, value: u64) -> u64 { with_queue(queue, |q| q.add_write_index(value)) }
    /// `hsa_queue_add_write_index_screlease`.
    fn hsa_queue_add_write_index_screlease(queue: *const hsa_queue_t, value: u64) -> u64 { with_queue(queue, |q| q.add_write_index(value)) }
    /// `hsa_queue_add_write_index_scacquire`.
    fn hsa_queue_add_write_index_scacquire(queue: *const hsa_queue_t, value: u64) -> u64 { with_queue(queue, |q| q.add_write_index(value)) }
    /// `hsa_queue_add_write_index_scacq_screl`.
    fn hsa_queue_add_write_index_scacq_screl(queue: *const hsa_queue_t, value: u64) -> u64 { with_queue(queue, |q| q.add_write_index(value)) }
    /// `hsa_queue_cas_write_index_relaxed`.
    fn hsa_queue_cas_write_index_relaxed(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64 { with_queue(queue, |q| q.cas_write_index(expected, value)) }
    /// `hsa_queue_cas_write_index_screlease`.
    fn hsa_queue_cas_write_index_screlease(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64 { with_queue(queue, |q| q.cas_write_index(expected, value)) }
    /// `hsa_queue_cas_write_index_scacq_screl`.
    fn hsa_queue_cas_write_index_scacq_screl(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64 { with_queue(queue, |q| q.cas_write_index(expected, value)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cu_masks_are_clipped_to_the_agents_cus_as_rocr_clips_them() {
        assert_eq!(clip_cu_mask(&[], 40), vec![u32::MAX, 0xff]);
        assert_eq!(
            clip_cu_mask(&[0xf0f0_f0f0, u32::MAX, 7], 40),
            vec![0xf0f0_f0f0, 0xff]
        );
        assert_eq!(clip_cu_mask(&[1], 64), vec![1]);
        assert_eq!(clip_cu_mask(&[], 64), vec![u32::MAX, u32::MAX]);
    }

    #[test]
    fn failures_map_to_rocrs_queue_statuses() {
        let malformed = ExecutionError::Packet("dispatch: workgroup size 0".into());
        assert_eq!(
            status_of(&malformed),
            (HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, None)
        );
        let trap = ExecutionError::Kernel {
            kernel: "k".into(),
            message: "s_trap 2".into(),
        };
        assert_eq!(status_of(&trap).0, HSA_STATUS_ERROR_EXCEPTION);
        assert_eq!(
            status_of(&ExecutionError::Packet("packet type Other(7)".into())).0,
            HSA_STATUS_ERROR_INVALID_PACKET_FORMAT
        );
    }
}
