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

use std::ffi::c_void;
use std::sync::Arc;

use hsa_sys::*;
use rocload::backend::soft::SoftQueue;
use rocload::device::ExecutionError;

use crate::agents::{agent_handle, agent_index, QUEUE_MAX_SIZE, QUEUE_MIN_SIZE};
use crate::runtime::{runtime, EventHandlers};
use crate::util::{guard, guard_value, put};

/// A queue of the runtime, by the address of its `hsa_queue_t`.
pub(crate) struct QueueEntry {
    queue: Arc<SoftQueue>,
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
            rt.queues.lock().insert(q, QueueEntry { queue: soft_queue });
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
