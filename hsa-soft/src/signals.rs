//! Signals (`core/runtime/signal.cpp`, `default_signal.cpp`): 64-bit values in the software
//! agents' shared signal table, so packets on any agent's queue can name them. Waits follow
//! `hsa_signal_wait_*`: the condition against the value, a timeout hint in timestamp ticks
//! (nanoseconds here; `UINT64_MAX` waits for ever), the value observed last returned whether
//! or not the condition held. Loads and stores of an unknown handle do nothing and read 0 (the
//! API has no way to fail them; ROCr would crash).

use hsa_sys::*;
use rocload::device::{Condition, Signal};
use std::sync::Arc;
use std::time::Duration;

use crate::agents::agent_index;
use crate::runtime::runtime;
use crate::util::{guard, guard_value, put};

fn find(handle: u64) -> Option<Arc<Signal>> {
    let rt = runtime().ok()?;
    let s = rt.signals.get(handle);
    if s.is_none() {
        tracing::debug!(handle, "unknown signal");
    }
    s
}

fn load(signal: hsa_signal_t) -> hsa_signal_value_t {
    guard_value(0, || find(signal.handle).map_or(0, |s| s.load()))
}

fn store(signal: hsa_signal_t, value: hsa_signal_value_t) {
    guard_value((), || {
        if let Some(s) = find(signal.handle) {
            s.store(value)
        }
    })
}

fn add(signal: hsa_signal_t, value: hsa_signal_value_t) {
    guard_value((), || {
        if let Some(s) = find(signal.handle) {
            s.add(value);
        }
    })
}

fn wait(
    signal: hsa_signal_t,
    condition: hsa_signal_condition_t,
    compare: hsa_signal_value_t,
    timeout_hint: u64,
) -> hsa_signal_value_t {
    guard_value(0, || {
        let Some(s) = find(signal.handle) else {
            return 0;
        };
        let c = match condition {
            HSA_SIGNAL_CONDITION_EQ => Condition::Eq,
            HSA_SIGNAL_CONDITION_NE => Condition::Ne,
            HSA_SIGNAL_CONDITION_LT => Condition::Lt,
            HSA_SIGNAL_CONDITION_GTE => Condition::Gte,
            _ => return s.load(),
        };
        let timeout = (timeout_hint != u64::MAX).then(|| Duration::from_nanos(timeout_hint));
        s.wait(c, compare, timeout).0
    })
}

hsa_api! {
    /// `hsa_signal_create`: a signal holding `initial_value`; consumers are checked, not
    /// restricted (every agent may wait on every signal).
    fn hsa_signal_create(initial_value: hsa_signal_value_t, num_consumers: u32, consumers: *const hsa_agent_t, signal: *mut hsa_signal_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if signal.is_null() || (num_consumers > 0 && consumers.is_null()) {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if num_consumers as usize > rt.agents.len() * 4 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if num_consumers > 0 {
                // SAFETY: `num_consumers` agents by the API's contract (bounded above).
                let list = unsafe { std::slice::from_raw_parts(consumers, num_consumers as usize) };
                for &a in list {
                    agent_index(a, rt.agents.len())?;
                }
            }
            let created = rt.signals.create(initial_value);
            let handle = created.handle;
            rt.owned_signals.lock().insert(handle, created);
            // SAFETY: non-NULL out-pointer.
            unsafe { put(signal.cast(), hsa_signal_t { handle }) }
        })
    }

    /// `hsa_signal_destroy`: only signals `hsa_signal_create` made.
    fn hsa_signal_destroy(signal: hsa_signal_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let removed = rt.owned_signals.lock().remove(&signal.handle);
            removed.map(|_| ()).ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)
        })
    }

    /// `hsa_signal_load_scacquire`.
    fn hsa_signal_load_scacquire(signal: hsa_signal_t) -> hsa_signal_value_t { load(signal) }
    /// `hsa_signal_load_relaxed`.
    fn hsa_signal_load_relaxed(signal: hsa_signal_t) -> hsa_signal_value_t { load(signal) }
    /// `hsa_signal_load_acquire` (deprecated name).
    fn hsa_signal_load_acquire(signal: hsa_signal_t) -> hsa_signal_value_t { load(signal) }

    /// `hsa_signal_store_screlease`.
    fn hsa_signal_store_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { store(signal, value) }
    /// `hsa_signal_store_relaxed`.
    fn hsa_signal_store_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { store(signal, value) }
    /// `hsa_signal_store_release` (deprecated name).
    fn hsa_signal_store_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { store(signal, value) }
    /// `hsa_signal_silent_store_screlease`.
    fn hsa_signal_silent_store_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { store(signal, value) }
    /// `hsa_signal_silent_store_relaxed`.
    fn hsa_signal_silent_store_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { store(signal, value) }

    /// `hsa_signal_add_screlease`.
    fn hsa_signal_add_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value) }
    /// `hsa_signal_add_relaxed`.
    fn hsa_signal_add_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value) }
    /// `hsa_signal_add_scacq_screl`.
    fn hsa_signal_add_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value) }
    /// `hsa_signal_add_scacquire`.
    fn hsa_signal_add_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value) }
    /// `hsa_signal_subtract_screlease`.
    fn hsa_signal_subtract_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value.wrapping_neg()) }
    /// `hsa_signal_subtract_relaxed`.
    fn hsa_signal_subtract_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value.wrapping_neg()) }
    /// `hsa_signal_subtract_scacq_screl`.
    fn hsa_signal_subtract_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value.wrapping_neg()) }
    /// `hsa_signal_subtract_scacquire`.
    fn hsa_signal_subtract_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value.wrapping_neg()) }

    /// `hsa_signal_wait_scacquire`.
    fn hsa_signal_wait_scacquire(signal: hsa_signal_t, condition: hsa_signal_condition_t, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: hsa_wait_state_t) -> hsa_signal_value_t {
        let _ = wait_state_hint;
        wait(signal, condition, compare_value, timeout_hint)
    }
    /// `hsa_signal_wait_relaxed`.
    fn hsa_signal_wait_relaxed(signal: hsa_signal_t, condition: hsa_signal_condition_t, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: hsa_wait_state_t) -> hsa_signal_value_t {
        let _ = wait_state_hint;
        wait(signal, condition, compare_value, timeout_hint)
    }
    /// `hsa_signal_wait_acquire` (deprecated name).
    fn hsa_signal_wait_acquire(signal: hsa_signal_t, condition: hsa_signal_condition_t, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: hsa_wait_state_t) -> hsa_signal_value_t {
        let _ = wait_state_hint;
        wait(signal, condition, compare_value, timeout_hint)
    }
}
