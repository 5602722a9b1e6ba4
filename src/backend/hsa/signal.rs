//! ROCr's signals as device-layer signals: [`HsaSignal`] implements
//! [`SignalBackend`](crate::device::SignalBackend), so streams and events wait on
//! `hsa_signal_t`s the same way they wait on the software agent's signals. Waits run in slices
//! (`hsa_signal_wait_scacquire` with a timeout, blocked), so every wait is bounded and a
//! caller's deadline is honoured. Destroyed with `hsa_signal_destroy` when the last user drops.

use std::time::{Duration, Instant};

use hsa_sys::result;
use hsa_sys::{
    hsa_signal_condition_t, hsa_signal_t, HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_GTE,
    HSA_SIGNAL_CONDITION_LT, HSA_SIGNAL_CONDITION_NE, HSA_WAIT_STATE_BLOCKED,
};

use super::agent::HsaAgent;
use crate::device::{Condition, DeviceError, SignalBackend};

/// How long one `hsa_signal_wait_scacquire` call may block before the caller's deadline and
/// the queue's state are looked at again.
pub const WAIT_SLICE: Duration = Duration::from_millis(20);

fn condition(c: Condition) -> hsa_signal_condition_t {
    match c {
        Condition::Eq => HSA_SIGNAL_CONDITION_EQ,
        Condition::Ne => HSA_SIGNAL_CONDITION_NE,
        Condition::Lt => HSA_SIGNAL_CONDITION_LT,
        Condition::Gte => HSA_SIGNAL_CONDITION_GTE,
    }
}

fn holds(c: Condition, value: i64, compare: i64) -> bool {
    match c {
        Condition::Eq => value == compare,
        Condition::Ne => value != compare,
        Condition::Lt => value < compare,
        Condition::Gte => value >= compare,
    }
}

/// An `hsa_signal_t` this crate created, destroyed on drop.
#[derive(Debug)]
pub struct OwnedSignal {
    agent: HsaAgent,
    signal: hsa_signal_t,
}

impl OwnedSignal {
    /// `hsa_signal_create(initial, 0, NULL)`: a signal any agent may wait on.
    ///
    /// # Errors
    /// [`DeviceError::Runtime`] naming the failed call.
    pub fn new(agent: &HsaAgent, initial: i64) -> Result<OwnedSignal, DeviceError> {
        // SAFETY: no consumers are passed.
        let signal = unsafe { result::signal_create(agent.lib(), initial, &[]) }
            .map_err(|e| agent.device_error("creating a signal", e))?;
        Ok(OwnedSignal {
            agent: agent.clone(),
            signal,
        })
    }

    /// The runtime's handle.
    pub fn raw(&self) -> hsa_signal_t {
        self.signal
    }

    /// Waits until the value is below 1 (a completion signal reached 0), at most `timeout`.
    pub fn wait_below_one(&self, timeout: Option<Duration>) -> (i64, bool) {
        wait(&self.agent, self.signal, Condition::Lt, 1, timeout, || {
            false
        })
    }

    /// Sets the value.
    pub fn store(&self, value: i64) {
        // SAFETY: the signal is alive (owned by `self`).
        let _ = unsafe { result::signal_store_screlease(self.agent.lib(), self.signal, value) };
    }
}

impl Drop for OwnedSignal {
    fn drop(&mut self) {
        // SAFETY: the signal was created by `new` and nothing uses it after this.
        if let Err(e) = unsafe { result::signal_destroy(self.agent.lib(), self.signal) } {
            self.agent.defer(format!("destroying a signal: {e}"));
        }
    }
}

/// Waits on `signal` in slices until `c` holds for `compare`, `timeout` passes, or `stop`
/// says to give up (the queue failed); returns the last value and whether `c` held.
pub(crate) fn wait(
    agent: &HsaAgent,
    signal: hsa_signal_t,
    c: Condition,
    compare: i64,
    timeout: Option<Duration>,
    stop: impl Fn() -> bool,
) -> (i64, bool) {
    let lib = agent.lib();
    let hz = agent.system().timestamp_hz();
    let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
    loop {
        let slice = match deadline {
            Some(d) => d.saturating_duration_since(Instant::now()).min(WAIT_SLICE),
            None => WAIT_SLICE,
        };
        let ticks =
            u64::try_from(u128::from(hz) * slice.as_nanos() / 1_000_000_000).unwrap_or(u64::MAX);
        // SAFETY: the signal is alive (the caller holds it) and from this runtime.
        let value = unsafe {
            result::signal_wait_scacquire(
                lib,
                signal,
                condition(c),
                compare,
                ticks,
                HSA_WAIT_STATE_BLOCKED,
            )
        }
        .unwrap_or_else(|_| {
            // SAFETY: as above.
            unsafe { result::signal_load_scacquire(lib, signal) }.unwrap_or(compare)
        });
        if holds(c, value, compare) {
            return (value, true);
        }
        if stop() || deadline.is_some_and(|d| Instant::now() >= d) {
            return (value, false);
        }
    }
}

/// A signal of the HSA runtime used as a device-layer signal (completion signals of streams,
/// events). Destroyed when dropped.
#[derive(Debug)]
pub struct HsaSignal(OwnedSignal);

impl HsaSignal {
    /// Wraps a signal this crate created.
    pub fn new(signal: OwnedSignal) -> HsaSignal {
        HsaSignal(signal)
    }
}

impl SignalBackend for HsaSignal {
    fn load(&self) -> i64 {
        // SAFETY: the signal is alive (owned).
        unsafe { result::signal_load_scacquire(self.0.agent.lib(), self.0.signal) }.unwrap_or(0)
    }

    fn store(&self, value: i64) {
        self.0.store(value);
    }

    fn add(&self, n: i64) -> i64 {
        // ROCr has add and subtract; subtracting -n is adding n.
        // SAFETY: the signal is alive (owned).
        let _ = unsafe {
            result::signal_subtract_screlease(self.0.agent.lib(), self.0.signal, n.wrapping_neg())
        };
        self.load()
    }

    fn wait(&self, c: Condition, compare: i64, timeout: Option<Duration>) -> (i64, bool) {
        wait(&self.0.agent, self.0.signal, c, compare, timeout, || false)
    }
}
