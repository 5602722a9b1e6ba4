//! Software HSA signals: a 64-bit value that packet processors decrement when work completes and
//! that hosts wait on, with HSA's semantics (`hsa_signal_wait_scacquire` with a condition and a
//! timeout). Completion signals of dispatches and barriers, stream and event markers.
//!
//! Waits are bounded: a wait that times out says so, it never hangs. A [`Signal`] is either
//! software (the software agent's) or backed by another runtime's signal ([`SignalBackend`]:
//! the HSA backend wraps ROCr's `hsa_signal_t`), so streams and events wait the same way on
//! every backend.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// The condition of a wait (`hsa_signal_condition_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// value == v
    Eq,
    /// value != v
    Ne,
    /// value < v
    Lt,
    /// value >= v
    Gte,
}

impl Condition {
    /// Whether `value` satisfies the condition against `compare`.
    pub fn holds(self, value: i64, compare: i64) -> bool {
        match self {
            Condition::Eq => value == compare,
            Condition::Ne => value != compare,
            Condition::Lt => value < compare,
            Condition::Gte => value >= compare,
        }
    }
}

/// A signal implemented by another runtime (ROCr's `hsa_signal_t`), with the same operations.
pub trait SignalBackend: Send + Sync + std::fmt::Debug {
    /// The current value (acquire).
    fn load(&self) -> i64;
    /// Sets the value (release).
    fn store(&self, value: i64);
    /// Adds `n` (release); returns the new value as far as the backend can tell.
    fn add(&self, n: i64) -> i64;
    /// Waits until `condition` holds for `compare` or `timeout` passes (`None`: forever);
    /// returns the value observed last and whether the condition held.
    fn wait(&self, condition: Condition, compare: i64, timeout: Option<Duration>) -> (i64, bool);
}

/// Nanoseconds since the first call in this process: the one clock of system timestamps
/// (`HSA_SYSTEM_INFO_TIMESTAMP`) and of the start and end times packet processors record in
/// completion signals when a queue profiles.
pub fn timestamp_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    u64::try_from(EPOCH.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// How long a waiter spins before sleeping.
const SPIN: Duration = Duration::from_micros(30);

/// A signal: software, or another runtime's behind a [`SignalBackend`].
#[derive(Debug)]
pub struct Signal {
    value: AtomicI64,
    lock: Mutex<()>,
    changed: Condvar,
    external: Option<Box<dyn SignalBackend>>,
    /// When the last profiled packet (or copy) that completed this signal started and ended
    /// ([`timestamp_ns`]), as a GPU writes them into ROCr's `amd_signal_t`; 0 until then.
    start_ts: AtomicU64,
    end_ts: AtomicU64,
}

impl Signal {
    /// A software signal holding `initial`.
    pub fn new(initial: i64) -> Signal {
        Signal {
            value: AtomicI64::new(initial),
            lock: Mutex::new(()),
            changed: Condvar::new(),
            external: None,
            start_ts: AtomicU64::new(0),
            end_ts: AtomicU64::new(0),
        }
    }

    /// A signal whose value lives in `backend` (another runtime's signal).
    pub fn external(backend: Box<dyn SignalBackend>) -> Signal {
        Signal {
            external: Some(backend),
            ..Signal::new(0)
        }
    }

    /// The current value (acquire).
    pub fn load(&self) -> i64 {
        match &self.external {
            Some(b) => b.load(),
            None => self.value.load(Ordering::Acquire),
        }
    }

    /// Sets the value (release) and wakes waiters.
    pub fn store(&self, value: i64) {
        match &self.external {
            Some(b) => b.store(value),
            None => {
                self.value.store(value, Ordering::Release);
                self.notify();
            }
        }
    }

    /// Subtracts `n` (release) and wakes waiters; returns the new value.
    pub fn subtract(&self, n: i64) -> i64 {
        self.add(n.wrapping_neg())
    }

    /// Adds `n` (release) and wakes waiters; returns the new value.
    pub fn add(&self, n: i64) -> i64 {
        if let Some(b) = &self.external {
            return b.add(n);
        }
        let new = self.value.fetch_add(n, Ordering::AcqRel).wrapping_add(n);
        self.notify();
        new
    }

    /// Records when the work this signal completes started and ended ([`timestamp_ns`]).
    pub fn record_times(&self, start: u64, end: u64) {
        self.start_ts.store(start, Ordering::Relaxed);
        self.end_ts.store(end, Ordering::Release);
    }

    /// The start and end times last recorded (0, 0 when none was).
    pub fn times(&self) -> (u64, u64) {
        let end = self.end_ts.load(Ordering::Acquire);
        (self.start_ts.load(Ordering::Relaxed), end)
    }

    /// The address of a software signal's value, which a caller may read and write directly
    /// (`hsa_amd_signal_value_pointer`; such writes wake no waiter); `None` for a signal that
    /// lives in another runtime.
    pub fn value_address(&self) -> Option<*const AtomicI64> {
        self.external
            .is_none()
            .then_some(&self.value as *const AtomicI64)
    }

    fn notify(&self) {
        // Taking the lock orders this wake-up after a waiter's check-then-sleep.
        let _guard = self.lock.lock();
        self.changed.notify_all();
    }

    /// Waits until `condition` holds for `compare` or `timeout` passes (`None`: forever).
    /// Returns the value observed last and whether the condition held.
    pub fn wait(
        &self,
        condition: Condition,
        compare: i64,
        timeout: Option<Duration>,
    ) -> (i64, bool) {
        if let Some(b) = &self.external {
            return b.wait(condition, compare, timeout);
        }
        let start = Instant::now();
        let deadline = timeout.and_then(|t| start.checked_add(t));
        // Most waits are short (a small kernel's completion, the next packet): spin briefly
        // first, since sleeping on the condition variable costs each side a wake-up of several
        // microseconds, which dominates a launch's latency.
        let spin = SPIN.min(timeout.unwrap_or(SPIN));
        loop {
            let value = self.load();
            if condition.holds(value, compare) {
                return (value, true);
            }
            if start.elapsed() >= spin {
                break;
            }
            std::hint::spin_loop();
        }
        let mut guard = self.lock.lock();
        loop {
            let value = self.load();
            if condition.holds(value, compare) {
                return (value, true);
            }
            match deadline {
                None => self.changed.wait(&mut guard),
                Some(d) => {
                    if self.changed.wait_until(&mut guard, d).timed_out() {
                        let value = self.load();
                        return (value, condition.holds(value, compare));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn waiters_wake_on_completion_and_time_out_otherwise() {
        let s = Arc::new(Signal::new(1));
        let (v, ok) = s.wait(Condition::Lt, 1, Some(Duration::from_millis(20)));
        assert_eq!((v, ok), (1, false));
        let s2 = s.clone();
        let t =
            std::thread::spawn(move || s2.wait(Condition::Lt, 1, Some(Duration::from_secs(10))));
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(s.subtract(1), 0);
        assert_eq!(t.join().unwrap(), (0, true));
    }
}
