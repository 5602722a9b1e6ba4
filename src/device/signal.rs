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

/// A software signal's value laid out as ROCr's `amd_signal_t` (`amd_hsa_signal.h`, 64
/// bytes, 64-aligned), so that where a handle is this address (the software HSA library's
/// signals) device code can use the signal as it would ROCr's: `__ockl_hsa_signal_add` on a
/// hostcall doorbell adds to `value` and, when `event_mailbox_ptr` is set, posts `event_id`.
#[repr(C, align(64))]
#[derive(Debug)]
struct AmdSignal {
    /// `AMD_SIGNAL_KIND_USER` (1).
    kind: i64,
    value: AtomicI64,
    /// 0: no interrupt mailbox (device code then posts nothing).
    event_mailbox_ptr: u64,
    event_id: u32,
    reserved1: u32,
    /// When the last profiled packet (or copy) that completed this signal started and ended
    /// ([`timestamp_ns`]), where a GPU writes them; 0 until then.
    start_ts: AtomicU64,
    end_ts: AtomicU64,
    queue_ptr: u64,
    reserved3: [u32; 2],
}

const _: () = assert!(std::mem::size_of::<AmdSignal>() == 64);

/// A signal: software, or another runtime's behind a [`SignalBackend`].
#[repr(C)]
#[derive(Debug)]
pub struct Signal {
    /// First, so that the signal's address is its `amd_signal_t`'s.
    abi: AmdSignal,
    lock: Mutex<()>,
    changed: Condvar,
    external: Option<Box<dyn SignalBackend>>,
}

impl Signal {
    /// A software signal holding `initial`.
    pub fn new(initial: i64) -> Signal {
        Signal {
            abi: AmdSignal {
                kind: 1,
                value: AtomicI64::new(initial),
                event_mailbox_ptr: 0,
                event_id: 0,
                reserved1: 0,
                start_ts: AtomicU64::new(0),
                end_ts: AtomicU64::new(0),
                queue_ptr: 0,
                reserved3: [0; 2],
            },
            lock: Mutex::new(()),
            changed: Condvar::new(),
            external: None,
        }
    }

    /// A software signal holding `initial` whose `amd_signal_t` names an event mailbox:
    /// device code that changes its value (`__ockl_hsa_signal_store`/`add`) then writes
    /// `event_id` to the 64-bit slot at `mailbox` and sends an interrupt, which the agent's
    /// interrupt listener answers with [`Signal::wake`] (ROCr's interrupt signals, whose
    /// mailbox is a slot of the kernel driver's event page).
    pub fn with_mailbox(initial: i64, mailbox: u64, event_id: u32) -> Signal {
        let mut s = Signal::new(initial);
        s.abi.event_mailbox_ptr = mailbox;
        s.abi.event_id = event_id;
        s
    }

    /// Wakes the signal's waiters so they look at its value again: the value changed behind
    /// the signal's back (device code stored to it and posted its event).
    pub fn wake(&self) {
        self.notify();
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
            None => self.abi.value.load(Ordering::Acquire),
        }
    }

    /// Sets the value (release) and wakes waiters.
    pub fn store(&self, value: i64) {
        match &self.external {
            Some(b) => b.store(value),
            None => {
                self.abi.value.store(value, Ordering::Release);
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
        let new = self
            .abi
            .value
            .fetch_add(n, Ordering::AcqRel)
            .wrapping_add(n);
        self.notify();
        new
    }

    /// Records when the work this signal completes started and ended ([`timestamp_ns`]).
    pub fn record_times(&self, start: u64, end: u64) {
        self.abi.start_ts.store(start, Ordering::Relaxed);
        self.abi.end_ts.store(end, Ordering::Release);
    }

    /// The start and end times last recorded (0, 0 when none was).
    pub fn times(&self) -> (u64, u64) {
        let end = self.abi.end_ts.load(Ordering::Acquire);
        (self.abi.start_ts.load(Ordering::Relaxed), end)
    }

    /// The address of a software signal's value, which a caller may read and write directly
    /// (`hsa_amd_signal_value_pointer`; such writes wake no waiter); `None` for a signal that
    /// lives in another runtime.
    pub fn value_address(&self) -> Option<*const AtomicI64> {
        self.external
            .is_none()
            .then_some(&self.abi.value as *const AtomicI64)
    }

    /// The address of the signal's `amd_signal_t` layout (64 bytes, see [`AmdSignal`]): an
    /// HSA handle device code can use, as long as the signal lives.
    pub fn abi_address(&self) -> u64 {
        &self.abi as *const AmdSignal as u64
    }

    /// Bytes of the `amd_signal_t` at [`Signal::abi_address`].
    pub const ABI_SIZE: u64 = 64;

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
        // microseconds, which dominates a launch's latency. The spin yields: when the thread
        // that will complete the signal shares this core (a busy host), spinning would only
        // hold it off (measured: a 100-kernel graph took 175 us instead of 92 on one core).
        let spin = SPIN.min(timeout.unwrap_or(SPIN));
        loop {
            let value = self.load();
            if condition.holds(value, compare) {
                return (value, true);
            }
            if start.elapsed() >= spin {
                break;
            }
            std::thread::yield_now();
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
