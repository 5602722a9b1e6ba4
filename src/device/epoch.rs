//! Dispatch epochs: when memory that running kernels may touch can go back to the host.
//!
//! A kernel is untrusted code running in the host process, and the memory checker approves an
//! access before the emulator makes it (the default checks one lane per instruction and lets
//! the others use the same allocation's bounds). A free that returned memory to the host
//! allocator between the check and the access would let a kernel write a host byte it was never
//! given, or fault the host on an unmapped page. So the rule, for every backend that runs
//! kernels in the process:
//!
//! - each dispatch (and each host copy or fill the device makes) takes a sequence number when
//!   it begins and stays registered as active until it ends ([`Epochs::begin`]);
//! - a free first removes the range from the allocation table (so a new access faults), then
//!   takes a mark ([`Epochs::mark`]) and hands the memory over with it
//!   ([`Epochs::release_after`]): it is released at once if no dispatch that began before the
//!   mark is still active, else when the last of them ends (or at a later free that finds them
//!   ended);
//! - what cannot be released later (the caller's registered host memory) is waited for instead
//!   ([`Epochs::wait_for`]).
//!
//! One [`Epochs`] is shared by every agent that may touch the same memory (pinned and managed
//! memory is in every device's table): by default the process-wide one. The cost is a mutex at
//! each dispatch's start and end and at each free; what a free defers is at most what the
//! program frees while its longest dispatch runs. Not for allocating memory (the devices do) or
//! for checking accesses (the allocation table does).

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};

/// Dispatches in progress and memory waiting for them to end.
#[derive(Debug, Default)]
pub struct Epochs {
    state: Mutex<State>,
    ended: Condvar,
}

#[derive(Default)]
struct State {
    /// The next sequence number (dispatch starts and marks share it).
    next: u64,
    /// Sequence numbers of the dispatches in progress.
    active: BTreeSet<u64>,
    /// Memory freed while dispatches that began before its mark were active.
    deferred: Vec<Deferred>,
    /// Bytes in `deferred`.
    deferred_bytes: u64,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("next", &self.next)
            .field("active", &self.active.len())
            .field("deferred", &self.deferred.len())
            .field("deferred_bytes", &self.deferred_bytes)
            .finish()
    }
}

/// Something freed, released (dropped) once no dispatch older than `mark` is active.
struct Deferred {
    mark: u64,
    bytes: u64,
    /// Dropping it releases the memory.
    _item: Box<dyn Send>,
}

impl State {
    /// Whether no dispatch that began before `mark` is still active.
    fn clear_of(&self, mark: u64) -> bool {
        self.active.first().is_none_or(|&oldest| oldest > mark)
    }

    /// Takes out everything that may be released now.
    fn reclaim(&mut self) -> Vec<Deferred> {
        if self.deferred.is_empty() {
            return Vec::new();
        }
        let oldest = self.active.first().copied();
        let (ready, kept): (Vec<Deferred>, Vec<Deferred>) = std::mem::take(&mut self.deferred)
            .into_iter()
            .partition(|d| oldest.is_none_or(|o| o > d.mark));
        self.deferred = kept;
        self.deferred_bytes -= ready.iter().map(|d| d.bytes).sum::<u64>();
        ready
    }
}

/// A dispatch in progress, registered with its [`Epochs`] until dropped.
#[derive(Debug)]
#[must_use = "the dispatch counts as running only while this lives"]
pub struct ActiveDispatch {
    epochs: Arc<Epochs>,
    seq: u64,
}

impl ActiveDispatch {
    /// The dispatch's sequence number.
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

impl Drop for ActiveDispatch {
    fn drop(&mut self) {
        let ready = {
            let mut state = self.epochs.state.lock();
            state.active.remove(&self.seq);
            state.reclaim()
        };
        self.epochs.ended.notify_all();
        release(ready);
    }
}

/// Drops what was deferred, outside the lock (a large block's release unmaps pages).
fn release(ready: Vec<Deferred>) {
    if !ready.is_empty() {
        let bytes: u64 = ready.iter().map(|d| d.bytes).sum();
        tracing::debug!(
            blocks = ready.len(),
            bytes,
            "deferred memory released: the dispatches that could touch it ended"
        );
    }
    drop(ready);
}

impl Epochs {
    /// A tracker of its own (tests; agents that share no memory with others).
    pub fn new() -> Arc<Epochs> {
        Arc::new(Epochs::default())
    }

    /// The process-wide tracker every software agent uses unless given another.
    pub fn global() -> Arc<Epochs> {
        static GLOBAL: OnceLock<Arc<Epochs>> = OnceLock::new();
        GLOBAL.get_or_init(Epochs::new).clone()
    }

    /// Registers a dispatch (or a host copy) that is about to touch guest memory; it counts
    /// as running until the returned value is dropped.
    pub fn begin(self: &Arc<Self>) -> ActiveDispatch {
        let mut state = self.state.lock();
        let seq = state.next;
        state.next += 1;
        state.active.insert(seq);
        ActiveDispatch {
            epochs: self.clone(),
            seq,
        }
    }

    /// A point after everything the caller did before (removing a range from the allocation
    /// table): dispatches that begin later cannot reach what was removed.
    pub fn mark(&self) -> u64 {
        let mut state = self.state.lock();
        let mark = state.next;
        state.next += 1;
        mark
    }

    /// Releases `item` (drops it: a memory block deallocates) once no dispatch that began
    /// before `mark` is active: now if there is none, else when the last of them ends. Also
    /// releases whatever earlier frees deferred and is free to go. `bytes` is for accounting.
    pub fn release_after(&self, mark: u64, item: Box<dyn Send>, bytes: u64) {
        let ready = {
            let mut state = self.state.lock();
            let mut ready = state.reclaim();
            if state.clear_of(mark) {
                ready.push(Deferred {
                    mark,
                    bytes,
                    _item: item,
                });
            } else {
                tracing::debug!(
                    bytes,
                    active = state.active.len(),
                    "release deferred until the running dispatches end"
                );
                state.deferred_bytes += bytes;
                state.deferred.push(Deferred {
                    mark,
                    bytes,
                    _item: item,
                });
            }
            ready
        };
        release(ready);
    }

    /// Waits until no dispatch that began before `mark` is active (for memory that is not
    /// ours to release later: the caller's registered host memory). Must not be called from a
    /// dispatch, which would wait for itself.
    pub fn wait_for(&self, mark: u64) {
        let mut state = self.state.lock();
        while !state.clear_of(mark) {
            self.ended.wait(&mut state);
        }
    }

    /// Memory released late because dispatches were running: (items, bytes) still waiting.
    pub fn deferred(&self) -> (usize, u64) {
        let state = self.state.lock();
        (state.deferred.len(), state.deferred_bytes)
    }

    /// Dispatches in progress.
    pub fn active(&self) -> usize {
        self.state.lock().active.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts its drops: stands for a block whose release is observable.
    struct Probe(Arc<AtomicUsize>);

    impl Drop for Probe {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_block_freed_while_a_dispatch_runs_is_released_when_it_ends() {
        let epochs = Epochs::new();
        let released = Arc::new(AtomicUsize::new(0));
        let probe = || Box::new(Probe(released.clone())) as Box<dyn Send>;

        // No dispatch: released at once.
        epochs.release_after(epochs.mark(), probe(), 16);
        assert_eq!(released.load(Ordering::SeqCst), 1);

        // Freed while `a` runs: kept until `a` ends.
        let a = epochs.begin();
        epochs.release_after(epochs.mark(), probe(), 32);
        assert_eq!(released.load(Ordering::SeqCst), 1);
        assert_eq!(epochs.deferred(), (1, 32));
        // A dispatch that began after the free cannot reach it: it does not hold it back.
        let b = epochs.begin();
        drop(a);
        assert_eq!(released.load(Ordering::SeqCst), 2);
        assert_eq!(epochs.deferred(), (0, 0));

        // Freed while `b` runs, then `c` begins: `b`'s end releases it even though `c` runs.
        epochs.release_after(epochs.mark(), probe(), 8);
        let c = epochs.begin();
        assert_eq!(released.load(Ordering::SeqCst), 2);
        drop(b);
        assert_eq!(released.load(Ordering::SeqCst), 3);

        // A mark taken while `c` runs waits for `c`, not for `d`, which began after it.
        let before_d = epochs.mark();
        let d = epochs.begin();
        epochs.release_after(before_d, probe(), 1);
        assert_eq!(
            released.load(Ordering::SeqCst),
            3,
            "c is older than the mark"
        );
        drop(c);
        assert_eq!(released.load(Ordering::SeqCst), 4);
        drop(d);
        assert_eq!(epochs.active(), 0);
    }

    #[test]
    fn wait_for_returns_once_the_dispatches_before_the_mark_end() {
        let epochs = Epochs::new();
        let running = epochs.begin();
        let mark = epochs.mark();
        let later = epochs.begin();
        let done = Arc::new(AtomicUsize::new(0));
        let waiter = {
            let (epochs, done) = (epochs.clone(), done.clone());
            std::thread::spawn(move || {
                epochs.wait_for(mark);
                done.store(1, Ordering::SeqCst);
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(
            done.load(Ordering::SeqCst),
            0,
            "returned while a dispatch ran"
        );
        drop(running);
        waiter.join().unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 1);
        drop(later);
    }
}
