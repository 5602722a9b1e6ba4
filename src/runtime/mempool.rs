//! Stream-ordered memory: HIP's memory pools (`hipMallocAsync`, `hipFreeAsync`,
//! `hipMallocFromPoolAsync`, `hipMemPool*`, a device's default and current pool).
//!
//! A pool hands out blocks of its device's memory and takes them back in stream order. A block
//! freed with [`Runtime::free_async`] leaves kernels' reach when its stream reaches the free
//! (at once when the stream is idle): the allocation table *parks* it, so a kernel or copy that
//! touches it afterwards is a use after free of that allocation, as after `hipFree`. The pool
//! keeps the block and hands it out again ([`Runtime::allocate_async`]):
//! - on the stream that freed it, at once (the free comes first in that stream's order);
//! - on another stream when that stream is known to follow the free (an event recorded after
//!   it was waited for, or the null stream's rules: [`Pool::FollowEventDependencies`]), or when
//!   the free has completed ([`Pool::AllowOpportunistic`]);
//! - otherwise new memory is taken; only when the device has none left does the allocating
//!   stream wait for another stream's pending free ([`Pool::AllowInternalDependencies`]).
//!
//! Freed blocks are kept up to the release threshold; the rest goes back to the device at
//! synchronisation points ([`Runtime::release_pool_memory`], as clr does at stream, event and
//! device synchronisation), at [`MemPool::trim_to`] and when the pool is destroyed (only blocks
//! whose free has completed, except at destruction, which waits). A block handed out again
//! before its stream reached the free is the new allocation from then on, so the checker misses
//! a use after free between that free and that reuse (as a GPU would not see it either).
//!
//! Not for sharing pools between processes (refused by the C ABI: the software agent's memory
//! is not shareable yet) or for peer access (recorded only where it is "none").

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::device::DeviceContext;
use super::stream::Stream;
use super::{Runtime, RuntimeError, RuntimeResult};
use crate::device::{Condition, Device, DeviceError, MemoryKind, SignalHandle};

/// Blocks are multiples of this; a request reuses a block up to 1/8 larger than itself, or
/// the next multiple of this (clr accepts 12.5% too).
const BLOCK_GRANULE: u64 = 256;

/// A pool's attributes (`hipMemPoolAttr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pool {
    /// Reuse memory freed on another stream that the allocating stream is known to follow.
    FollowEventDependencies,
    /// Reuse memory whose free has completed, whatever the streams.
    AllowOpportunistic,
    /// When the device has no memory left, make the allocating stream wait for another
    /// stream's free and reuse its block.
    AllowInternalDependencies,
    /// Bytes of freed memory the pool keeps at synchronisation points.
    ReleaseThreshold,
    /// Bytes the pool holds (in use and freed): read-only.
    ReservedMemCurrent,
    /// The most it held since the last reset (reset to the current value with 0).
    ReservedMemHigh,
    /// Bytes in use by the program: read-only.
    UsedMemCurrent,
    /// The most in use since the last reset (reset to the current value with 0).
    UsedMemHigh,
}

/// What a device may do with a pool's memory (`hipMemAccessFlags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolAccess {
    /// No access.
    None,
    /// Loads only.
    Read,
    /// Loads and stores.
    ReadWrite,
}

/// A pool operation that cannot be done, with what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PoolError {
    /// A device's default pool lives as long as the device.
    #[error("pool {pool} is device {device}'s default pool, which cannot be destroyed")]
    DestroyDefault {
        /// The pool.
        pool: u64,
        /// Its device.
        device: usize,
    },
    /// The pool was destroyed (it lives on only for allocations not freed yet).
    #[error("pool {pool} was destroyed")]
    Destroyed {
        /// The pool.
        pool: u64,
    },
    /// A pool made a device's current pool must be that device's.
    #[error("pool {pool} belongs to device {pool_device}, not device {device}")]
    OtherDevice {
        /// The pool.
        pool: u64,
        /// Its device.
        pool_device: usize,
        /// The device it was given for.
        device: usize,
    },
    /// An attribute that can only be read.
    #[error("{attribute:?} can only be read")]
    ReadOnly {
        /// The attribute.
        attribute: Pool,
    },
    /// A high watermark can only be reset, with 0.
    #[error("{attribute:?} can only be reset, with 0 (not {value})")]
    HighWatermarkReset {
        /// The attribute.
        attribute: Pool,
        /// The value given.
        value: u64,
    },
    /// The pool's own device always reads and writes its memory.
    #[error("device {device} owns pool {pool}: its access is always read-write")]
    OwnerAccess {
        /// The pool.
        pool: u64,
        /// Its device.
        device: usize,
    },
    /// Peer access to a pool's memory is not available.
    #[error("pool {pool} of device {pool_device}: kernels of device {peer} cannot reach its memory (rocload records peer access, but does not map one device's memory into another's table)")]
    PeerAccess {
        /// The pool.
        pool: u64,
        /// Its device.
        pool_device: usize,
        /// The device asking.
        peer: usize,
    },
    /// A free of pool memory that is already free (or being freed) in stream order.
    #[error("{address:#x} was already freed in stream order (pool {pool})")]
    AlreadyFreed {
        /// The address.
        address: u64,
        /// The pool.
        pool: u64,
    },
}

impl From<PoolError> for RuntimeError {
    fn from(e: PoolError) -> Self {
        RuntimeError::Pool(e)
    }
}

/// A memory pool of one device. Cheap to clone; equal when it is the same pool.
#[derive(Debug, Clone)]
pub struct MemPool(Arc<PoolInner>);

impl PartialEq for MemPool {
    fn eq(&self, other: &MemPool) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for MemPool {}

#[derive(Debug)]
struct PoolInner {
    id: u64,
    device_index: usize,
    device: Arc<dyn Device>,
    default: bool,
    state: Mutex<PoolState>,
    /// Tests: the device has no memory for new blocks.
    #[cfg(test)]
    refuse_new: std::sync::atomic::AtomicBool,
}

/// Where a free stands in stream order.
#[derive(Debug, Clone, Copy)]
enum FreedAt {
    /// On a stream: its first `steps` steps include the free.
    Stream { stream: u64, steps: u64 },
    /// At a synchronisation (`hipFree` of pool memory): before everything submitted later.
    Synchronised,
}

#[derive(Debug)]
struct FreeBlock {
    at: FreedAt,
    /// The step that parks the block; `None` when it was parked at once.
    done: Option<SignalHandle>,
}

impl FreeBlock {
    fn is_done(&self) -> bool {
        self.done.as_ref().is_none_or(|s| s.signal.load() < 1)
    }
}

#[derive(Debug, Clone, Copy)]
struct BusyBlock {
    capacity: u64,
    /// The allocation-table id it was handed out under (what its free parks).
    id: u64,
}

#[derive(Debug)]
struct PoolState {
    follow_event_dependencies: bool,
    opportunistic: bool,
    internal_dependencies: bool,
    release_threshold: u64,
    /// Freed blocks by (capacity, base).
    free: BTreeMap<(u64, u64), FreeBlock>,
    /// Blocks in use by base.
    busy: HashMap<u64, BusyBlock>,
    reserved: u64,
    reserved_high: u64,
    used: u64,
    used_high: u64,
    /// Access recorded for other devices (only [`PoolAccess::None`] can be).
    peers: Vec<(usize, PoolAccess)>,
    destroyed: bool,
}

impl PoolState {
    fn new() -> PoolState {
        // clr's defaults: every reuse policy on, nothing kept at synchronisation.
        PoolState {
            follow_event_dependencies: true,
            opportunistic: true,
            internal_dependencies: true,
            release_threshold: 0,
            free: BTreeMap::new(),
            busy: HashMap::new(),
            reserved: 0,
            reserved_high: 0,
            used: 0,
            used_high: 0,
            peers: Vec::new(),
            destroyed: false,
        }
    }

    /// The free block that fits `size` and that `stream` may use without waiting, by the
    /// reuse policies; with `waiting`, any that fits (the caller makes the stream wait).
    fn pick(&self, size: u64, stream: &Stream, waiting: bool) -> Option<(u64, u64)> {
        let most = size
            .saturating_add(size / 8)
            .max(size.div_ceil(BLOCK_GRANULE).saturating_mul(BLOCK_GRANULE));
        self.free
            .range((size, 0)..=(most, u64::MAX))
            .find(|(_, b)| {
                waiting
                    || match b.at {
                        FreedAt::Synchronised => true,
                        FreedAt::Stream { stream: s, steps } => {
                            s == stream.id()
                                || (self.follow_event_dependencies && stream.follows(s, steps))
                                || (self.opportunistic && b.is_done())
                        }
                    }
            })
            .map(|(&key, _)| key)
    }

    fn take_into_use(&mut self, capacity: u64) {
        self.used += capacity;
        self.used_high = self.used_high.max(self.used);
    }

    fn threshold(&self) -> u64 {
        if self.destroyed {
            0
        } else {
            self.release_threshold
        }
    }
}

static NEXT_POOL: AtomicU64 = AtomicU64::new(1);

impl MemPool {
    fn new(ctx: &DeviceContext, default: bool) -> MemPool {
        let pool = MemPool(Arc::new(PoolInner {
            id: NEXT_POOL.fetch_add(1, Ordering::Relaxed),
            device_index: ctx.index(),
            device: ctx.device().clone(),
            default,
            state: Mutex::new(PoolState::new()),
            #[cfg(test)]
            refuse_new: std::sync::atomic::AtomicBool::new(false),
        }));
        tracing::debug!(
            pool = pool.id(),
            device = ctx.index(),
            default,
            "memory pool created"
        );
        pool
    }

    /// A number naming the pool in logs and errors.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// The device whose memory it holds.
    pub fn device_index(&self) -> usize {
        self.0.device_index
    }

    /// Whether it is its device's default pool.
    pub fn is_default(&self) -> bool {
        self.0.default
    }

    /// An attribute's value (the reuse policies are 0 or 1).
    pub fn attribute(&self, attribute: Pool) -> u64 {
        let st = self.0.state.lock();
        match attribute {
            Pool::FollowEventDependencies => u64::from(st.follow_event_dependencies),
            Pool::AllowOpportunistic => u64::from(st.opportunistic),
            Pool::AllowInternalDependencies => u64::from(st.internal_dependencies),
            Pool::ReleaseThreshold => st.release_threshold,
            Pool::ReservedMemCurrent => st.reserved,
            Pool::ReservedMemHigh => st.reserved_high,
            Pool::UsedMemCurrent => st.used,
            Pool::UsedMemHigh => st.used_high,
        }
    }

    /// Sets an attribute: a reuse policy (non-zero is on), the release threshold, or a reset
    /// of a high watermark to the current value (with 0).
    ///
    /// # Errors
    /// [`PoolError::ReadOnly`] for the current values, [`PoolError::HighWatermarkReset`] for a
    /// watermark set to anything but 0.
    pub fn set_attribute(&self, attribute: Pool, value: u64) -> RuntimeResult<()> {
        let mut st = self.0.state.lock();
        match attribute {
            Pool::FollowEventDependencies => st.follow_event_dependencies = value != 0,
            Pool::AllowOpportunistic => st.opportunistic = value != 0,
            Pool::AllowInternalDependencies => st.internal_dependencies = value != 0,
            Pool::ReleaseThreshold => st.release_threshold = value,
            Pool::ReservedMemCurrent | Pool::UsedMemCurrent => {
                return Err(PoolError::ReadOnly { attribute }.into())
            }
            Pool::ReservedMemHigh | Pool::UsedMemHigh if value != 0 => {
                return Err(PoolError::HighWatermarkReset { attribute, value }.into())
            }
            Pool::ReservedMemHigh => st.reserved_high = st.reserved,
            Pool::UsedMemHigh => st.used_high = st.used,
        }
        Ok(())
    }

    /// What `device` may do with the pool's memory: its own device reads and writes it.
    pub fn access(&self, device: usize) -> PoolAccess {
        if device == self.0.device_index {
            return PoolAccess::ReadWrite;
        }
        let st = self.0.state.lock();
        st.peers
            .iter()
            .find(|(d, _)| *d == device)
            .map_or(PoolAccess::None, |&(_, a)| a)
    }

    /// Checks that `device` may be given `access` (its own device: read-write only; another:
    /// none only, see [`PoolError::PeerAccess`]), without recording it.
    ///
    /// # Errors
    /// [`PoolError::OwnerAccess`], [`PoolError::PeerAccess`].
    pub fn check_access(&self, device: usize, access: PoolAccess) -> RuntimeResult<()> {
        let pool = self.0.id;
        if device == self.0.device_index {
            if access != PoolAccess::ReadWrite {
                return Err(PoolError::OwnerAccess { pool, device }.into());
            }
        } else if access != PoolAccess::None {
            return Err(PoolError::PeerAccess {
                pool,
                pool_device: self.0.device_index,
                peer: device,
            }
            .into());
        }
        Ok(())
    }

    /// Records `access` for `device` once [`check_access`](Self::check_access) accepted it.
    ///
    /// # Errors
    /// As [`check_access`](Self::check_access).
    pub fn set_access(&self, device: usize, access: PoolAccess) -> RuntimeResult<()> {
        self.check_access(device, access)?;
        if device != self.0.device_index {
            let mut st = self.0.state.lock();
            st.peers.retain(|(d, _)| *d != device);
            st.peers.push((device, access));
        }
        Ok(())
    }

    /// Releases freed blocks whose free has completed until the pool holds at most
    /// `min_bytes_to_hold` (`hipMemPoolTrimTo`).
    pub fn trim_to(&self, min_bytes_to_hold: u64) {
        self.0.release(min_bytes_to_hold, false);
    }

    /// Whether `address` is the start of a block in use.
    fn holds(&self, address: u64) -> Option<BusyBlock> {
        self.0.state.lock().busy.get(&address).copied()
    }
}

impl PoolInner {
    fn device_error(&self, what: &str, error: DeviceError) -> RuntimeError {
        RuntimeError::Device {
            device: self.device_index,
            what: what.to_owned(),
            error: Box::new(error),
        }
    }

    /// Takes a freed block of `size` for `stream`: one it may use now, else new memory, else
    /// (with internal dependencies) one another stream frees, after making `stream` wait.
    fn allocate(&self, size: u64, stream: &Stream) -> RuntimeResult<u64> {
        if let Some(address) = self.reuse(size, stream, false)? {
            return Ok(address);
        }
        let capacity = size
            .checked_next_multiple_of(BLOCK_GRANULE)
            .ok_or(DeviceError::OutOfMemory {
                size,
                kind: MemoryKind::Device,
            })
            .map_err(|e| self.device_error("allocating pool memory", e))?;
        #[cfg(test)]
        let refused = self.refuse_new.load(Ordering::Relaxed);
        #[cfg(not(test))]
        let refused = false;
        let block = if refused {
            Err(DeviceError::OutOfMemory {
                size: capacity,
                kind: MemoryKind::Device,
            })
        } else {
            self.device.allocate(capacity, MemoryKind::Device)
        };
        match block {
            Ok(block) => {
                // The table knows the size asked for: bytes past it are out of reach.
                let allocation =
                    self.device
                        .allocations()
                        .revive(block.base, size, MemoryKind::Device);
                let mut st = self.state.lock();
                st.busy.insert(
                    block.base,
                    BusyBlock {
                        capacity,
                        id: allocation.id,
                    },
                );
                st.reserved += capacity;
                st.reserved_high = st.reserved_high.max(st.reserved);
                st.take_into_use(capacity);
                tracing::debug!(pool = self.id, %allocation, capacity, "pool block allocated");
                Ok(block.base)
            }
            Err(e @ DeviceError::OutOfMemory { .. }) => {
                let internal = self.state.lock().internal_dependencies;
                if internal {
                    if let Some(address) = self.reuse(size, stream, true)? {
                        return Ok(address);
                    }
                }
                Err(self.device_error("allocating pool memory", e))
            }
            Err(e) => Err(self.device_error("allocating pool memory", e)),
        }
    }

    /// Hands out a freed block that fits `size`, if the policies allow one (with `waiting`,
    /// any, after `stream` waits for its free).
    fn reuse(&self, size: u64, stream: &Stream, waiting: bool) -> RuntimeResult<Option<u64>> {
        let mut st = self.state.lock();
        if st.destroyed {
            return Err(PoolError::Destroyed { pool: self.id }.into());
        }
        let Some(key) = st.pick(size, stream, waiting) else {
            return Ok(None);
        };
        let Some(block) = st.free.remove(&key) else {
            return Ok(None);
        };
        let (capacity, base) = key;
        if waiting && !block.is_done() {
            // Not under the pool's lock: a barrier may wait for room in the queue.
            drop(st);
            if let (Some(done), FreedAt::Stream { stream: s, steps }) = (&block.done, block.at) {
                let waited = stream.wait_for(done).map(|()| {
                    let mut order = super::stream::Order::default();
                    order.note(s, steps);
                    stream.note_order(&order);
                });
                if let Err(e) = waited {
                    self.state.lock().free.insert(key, block);
                    return Err(e);
                }
            }
            st = self.state.lock();
        }
        let allocation = self
            .device
            .allocations()
            .revive(base, size, MemoryKind::Device);
        st.busy.insert(
            base,
            BusyBlock {
                capacity,
                id: allocation.id,
            },
        );
        st.take_into_use(capacity);
        tracing::debug!(pool = self.id, %allocation, capacity, waited = waiting, "pool block reused");
        Ok(Some(base))
    }

    /// Frees the block at `base` in `stream`'s order: parked when the stream reaches this
    /// point (at once when it is idle).
    fn free_async(&self, base: u64, busy: BusyBlock, stream: &Stream) -> RuntimeResult<()> {
        let (at, done) = if stream.is_idle() {
            self.device.allocations().park(base, busy.id);
            let at = FreedAt::Stream {
                stream: stream.id(),
                steps: stream.steps() + 1,
            };
            (at, None)
        } else {
            let device = self.device.clone();
            let id = busy.id;
            let queued = stream.host_work(
                "freeing pool memory in stream order",
                Box::new(move || {
                    device.allocations().park(base, id);
                    Ok(())
                }),
            );
            if let Err(e) = queued {
                let mut st = self.state.lock();
                st.busy.insert(base, busy);
                st.take_into_use(busy.capacity);
                return Err(e);
            }
            // Read after queueing: at least the free's position and signal (a later step's
            // only makes reuse wait longer).
            let at = FreedAt::Stream {
                stream: stream.id(),
                steps: stream.steps(),
            };
            (at, stream.last_signal())
        };
        self.state
            .lock()
            .free
            .insert((busy.capacity, base), FreeBlock { at, done });
        tracing::debug!(
            pool = self.id,
            base,
            stream = stream.id(),
            "pool block freed in stream order"
        );
        Ok(())
    }

    /// Takes the block at `base` out of use, if it is in use; `Err` when it is already free.
    fn take_busy(&self, base: u64) -> Result<Option<BusyBlock>, PoolError> {
        let mut st = self.state.lock();
        if let Some(busy) = st.busy.remove(&base) {
            st.used -= busy.capacity;
            return Ok(Some(busy));
        }
        if st.free.keys().any(|&(_, b)| b == base) {
            return Err(PoolError::AlreadyFreed {
                address: base,
                pool: self.id,
            });
        }
        Ok(None)
    }

    /// Gives freed blocks back to the device until the pool holds at most `keep` bytes: those
    /// whose free has completed, or with `wait` every one after waiting for its free.
    fn release(&self, keep: u64, wait: bool) {
        let victims: Vec<(u64, u64, FreeBlock)> = {
            let mut st = self.state.lock();
            let mut chosen = Vec::new();
            let mut reserved = st.reserved;
            for (&(capacity, base), block) in &st.free {
                if reserved <= keep {
                    break;
                }
                if wait || block.is_done() {
                    chosen.push((capacity, base));
                    reserved -= capacity;
                }
            }
            st.reserved = reserved;
            chosen
                .into_iter()
                .filter_map(|key| st.free.remove(&key).map(|b| (key.0, key.1, b)))
                .collect()
        };
        for (capacity, base, block) in victims {
            if let Some(done) = &block.done {
                // Bounded: a free that never completes leaves the block to the device.
                let (_, ok) = done
                    .signal
                    .wait(Condition::Lt, 1, Some(super::stream::SYNC_TIMEOUT));
                if !ok {
                    tracing::debug!(pool = self.id, base, "free never completed; block kept");
                    continue;
                }
            }
            match self.device.free(base) {
                Ok(a) => {
                    tracing::debug!(pool = self.id, allocation = %a, capacity, "pool block released")
                }
                Err(e) => {
                    tracing::debug!(pool = self.id, base, error = %e, "pool block release failed")
                }
            }
        }
    }

    /// Destroys the pool with everything it holds (a device reset): blocks in use are freed
    /// as by `hipFree`, freed blocks go back to the device. A later use of the pool is
    /// [`PoolError::Destroyed`]; a later free of one of its blocks finds no pool and is the
    /// free of an address no longer allocated.
    fn purge(&self) {
        let busy: Vec<u64> = {
            let mut st = self.state.lock();
            st.destroyed = true;
            let in_use: u64 = st.busy.values().map(|b| b.capacity).sum();
            st.reserved = st.reserved.saturating_sub(in_use);
            st.used = 0;
            st.busy.drain().map(|(base, _)| base).collect()
        };
        for base in busy {
            match self.device.free(base) {
                Ok(a) => {
                    tracing::debug!(pool = self.id, allocation = %a, "reset: pool block in use freed")
                }
                Err(e) => {
                    tracing::debug!(pool = self.id, base, error = %e, "reset: freeing a pool block failed")
                }
            }
        }
        self.release(0, true);
        tracing::debug!(pool = self.id, "memory pool destroyed by a device reset");
    }

    fn is_empty(&self) -> bool {
        let st = self.state.lock();
        st.busy.is_empty() && st.free.is_empty()
    }
}

/// A device's pools: its default pool (made at first use), its current pool, and every pool
/// that may hold its memory (destroyed ones too, until their last block is freed).
#[derive(Debug, Default)]
pub(crate) struct DevicePools {
    /// Made at first use; a device reset drops it (the next use makes a new one).
    default: Mutex<Option<MemPool>>,
    current: Mutex<Option<MemPool>>,
    pools: Mutex<Vec<MemPool>>,
}

impl DevicePools {
    fn default_pool(&self, ctx: &DeviceContext) -> MemPool {
        let mut default = self.default.lock();
        if let Some(pool) = &*default {
            return pool.clone();
        }
        let pool = MemPool::new(ctx, true);
        self.pools.lock().push(pool.clone());
        *default = Some(pool.clone());
        pool
    }

    /// `hipDeviceReset` (clr 5.6 and later): every pool of the device, the default one and
    /// those the program created, is destroyed with all its memory, blocks in use included;
    /// the device's current pool is its (new) default pool again. Returns the pools
    /// destroyed, whose handles the C ABI forgets. The device must be idle.
    pub(crate) fn reset(&self) -> Vec<MemPool> {
        let pools = {
            // Lock order as in `default_pool`: default, then the list.
            let mut default = self.default.lock();
            *self.current.lock() = None;
            *default = None;
            std::mem::take(&mut *self.pools.lock())
        };
        for pool in &pools {
            pool.0.purge();
        }
        pools
    }

    fn list(&self) -> Vec<MemPool> {
        self.pools.lock().clone()
    }
}

impl Runtime {
    /// Device `device`'s default pool (`hipDeviceGetDefaultMemPool`).
    ///
    /// # Errors
    /// An invalid device, or one that does not run kernels.
    pub fn default_mem_pool(&self, device: i64) -> RuntimeResult<MemPool> {
        let ctx = self.device(device)?;
        Ok(ctx.mem_pools().default_pool(ctx))
    }

    /// The pool `hipMallocAsync` takes device `device`'s memory from (`hipDeviceGetMemPool`):
    /// the last one [`set_current_mem_pool`](Self::set_current_mem_pool) gave, or the default.
    ///
    /// # Errors
    /// As [`default_mem_pool`](Self::default_mem_pool).
    pub fn current_mem_pool(&self, device: i64) -> RuntimeResult<MemPool> {
        let ctx = self.device(device)?;
        let current = ctx.mem_pools().current.lock().clone();
        Ok(current.unwrap_or_else(|| ctx.mem_pools().default_pool(ctx)))
    }

    /// Makes `pool` device `device`'s current pool (`hipDeviceSetMemPool`).
    ///
    /// # Errors
    /// [`PoolError::OtherDevice`] for another device's pool, [`PoolError::Destroyed`].
    pub fn set_current_mem_pool(&self, device: i64, pool: &MemPool) -> RuntimeResult<()> {
        let ctx = self.device(device)?;
        if pool.device_index() != ctx.index() {
            return Err(PoolError::OtherDevice {
                pool: pool.id(),
                pool_device: pool.device_index(),
                device: ctx.index(),
            }
            .into());
        }
        if pool.0.state.lock().destroyed {
            return Err(PoolError::Destroyed { pool: pool.id() }.into());
        }
        *ctx.mem_pools().current.lock() = (!pool.is_default()).then(|| pool.clone());
        Ok(())
    }

    /// A new pool of device `device`'s memory (`hipMemPoolCreate`).
    ///
    /// # Errors
    /// As [`default_mem_pool`](Self::default_mem_pool).
    pub fn create_mem_pool(&self, device: i64) -> RuntimeResult<MemPool> {
        let ctx = self.device(device)?;
        let pool = MemPool::new(ctx, false);
        ctx.mem_pools().pools.lock().push(pool.clone());
        Ok(pool)
    }

    /// Destroys a pool (`hipMemPoolDestroy`): its freed blocks go back to the device (after
    /// their frees complete); blocks still in use stay valid and go back when freed. A device
    /// whose current pool it was takes its default pool again.
    ///
    /// # Errors
    /// [`PoolError::DestroyDefault`], [`PoolError::Destroyed`].
    pub fn destroy_mem_pool(&self, pool: &MemPool) -> RuntimeResult<()> {
        if pool.is_default() {
            return Err(PoolError::DestroyDefault {
                pool: pool.id(),
                device: pool.device_index(),
            }
            .into());
        }
        {
            let mut st = pool.0.state.lock();
            if st.destroyed {
                return Err(PoolError::Destroyed { pool: pool.id() }.into());
            }
            st.destroyed = true;
        }
        let ctx = self.device(pool.device_index() as i64)?;
        let pools = ctx.mem_pools();
        {
            let mut current = pools.current.lock();
            if current.as_ref() == Some(pool) {
                *current = None;
            }
        }
        pool.0.release(0, true);
        if pool.0.is_empty() {
            pools.pools.lock().retain(|p| p != pool);
        }
        tracing::debug!(pool = pool.id(), "memory pool destroyed");
        Ok(())
    }

    /// Allocates `size` bytes from `pool` in `stream`'s order (`hipMallocAsync`,
    /// `hipMallocFromPoolAsync`); the stream may be another device's.
    ///
    /// # Errors
    /// [`RuntimeError::ZeroSize`], [`PoolError::Destroyed`], device errors (out of memory), a
    /// stream error when it had to wait for another stream's free.
    pub fn allocate_async(&self, pool: &MemPool, size: u64, stream: &Stream) -> RuntimeResult<u64> {
        if size == 0 {
            return Err(RuntimeError::ZeroSize {
                what: "stream-ordered allocation",
            });
        }
        pool.0.allocate(size, stream)
    }

    /// The pool whose block in use starts at `address`.
    pub fn mem_pool_of(&self, address: u64) -> Option<MemPool> {
        self.pool_block(address)
            .ok()
            .flatten()
            .map(|(pool, _)| pool)
    }

    /// The pool whose block in use starts at `address`, with the block.
    fn pool_block(&self, address: u64) -> Result<Option<(MemPool, BusyBlock)>, PoolError> {
        for ctx in self.devices().iter().flatten() {
            for pool in ctx.mem_pools().list() {
                if let Some(busy) = pool.holds(address) {
                    return Ok(Some((pool, busy)));
                }
                if pool.0.state.lock().free.keys().any(|&(_, b)| b == address) {
                    return Err(PoolError::AlreadyFreed {
                        address,
                        pool: pool.id(),
                    });
                }
            }
        }
        Ok(None)
    }

    /// Frees `address` in `stream`'s order (`hipFreeAsync`): a pool's block goes back to its
    /// pool when the stream reaches this point; other memory is freed as by `hipFree` (clr
    /// does the same).
    ///
    /// # Errors
    /// [`PoolError::AlreadyFreed`]; for other memory, [`free`](Self::free)'s errors; a stream
    /// error (the block then stays in use).
    pub fn free_async(&self, address: u64, stream: &Stream) -> RuntimeResult<()> {
        if self.free_graph_memory_async(address, stream)? {
            return Ok(());
        }
        match self.pool_block(address)? {
            Some((pool, _)) => match pool.0.take_busy(address)? {
                Some(busy) => pool.0.free_async(address, busy, stream),
                // Freed by another thread in between.
                None => Err(PoolError::AlreadyFreed {
                    address,
                    pool: pool.id(),
                }
                .into()),
            },
            None => self.free(address),
        }
    }

    /// `hipFree` of a pool's block: after its device is idle, it goes back to its pool at
    /// once. `Ok(false)` when `address` is no pool's.
    pub(crate) fn free_pool_block(&self, address: u64) -> RuntimeResult<bool> {
        let Some((pool, _)) = self.pool_block(address)? else {
            return Ok(false);
        };
        self.device(pool.device_index() as i64)?
            .synchronize_ignoring_errors()?;
        let Some(busy) = pool.0.take_busy(address)? else {
            return Err(PoolError::AlreadyFreed {
                address,
                pool: pool.id(),
            }
            .into());
        };
        pool.0.device.allocations().park(address, busy.id);
        pool.0.state.lock().free.insert(
            (busy.capacity, address),
            FreeBlock {
                at: FreedAt::Synchronised,
                done: None,
            },
        );
        Ok(true)
    }

    /// At a synchronisation point of device `device` (every device with `None`): each of its
    /// pools gives freed memory whose free has completed back to the device, down to its
    /// release threshold (a destroyed pool: all of it).
    pub fn release_pool_memory(&self, device: Option<usize>) {
        for ctx in self.devices().iter().flatten() {
            if device.is_some_and(|d| d != ctx.index()) {
                continue;
            }
            let pools = ctx.mem_pools();
            for pool in pools.list() {
                let keep = pool.0.state.lock().threshold();
                pool.0.release(keep, false);
                if pool.0.state.lock().destroyed && pool.0.is_empty() {
                    pools.pools.lock().retain(|p| *p != pool);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::SoftAgent;
    use crate::runtime::{RuntimeOptions, StreamKind};

    fn runtime() -> Runtime {
        let agent = SoftAgent::new("gfx1030".parse().unwrap()).device();
        Runtime::with_devices(vec![agent], RuntimeOptions::default())
    }

    /// A block is reused at once on the stream that freed it, and its free is a use after
    /// free for the checker until then.
    #[test]
    fn the_freeing_stream_reuses_at_once() {
        let rt = runtime();
        let pool = rt.default_mem_pool(0).unwrap();
        let ctx = rt.device(0).unwrap().clone();
        let s = ctx.create_stream(StreamKind::NonBlocking, 0).unwrap();
        let a = rt.allocate_async(&pool, 1000, &s).unwrap();
        let table = ctx.device().allocations();
        assert_eq!(table.find(a).unwrap().size, 1000);
        rt.free_async(a, &s).unwrap();
        assert!(table.find(a).is_none(), "an idle stream frees at once");
        assert!(matches!(
            rt.free_async(a, &s),
            Err(RuntimeError::Pool(PoolError::AlreadyFreed { .. }))
        ));
        let b = rt.allocate_async(&pool, 960, &s).unwrap();
        assert_eq!(a, b);
        assert_eq!(pool.attribute(Pool::UsedMemCurrent), 1024);
        assert_eq!(pool.attribute(Pool::ReservedMemCurrent), 1024);
    }

    /// Another stream: not without an order or a completed free; with an event waited for, yes;
    /// opportunistic reuse of a completed free when allowed.
    #[test]
    fn other_streams_follow_the_policies() {
        let rt = runtime();
        let pool = rt.create_mem_pool(0).unwrap();
        let ctx = rt.device(0).unwrap().clone();
        let (a, b) = (
            ctx.create_stream(StreamKind::NonBlocking, 0).unwrap(),
            ctx.create_stream(StreamKind::NonBlocking, 0).unwrap(),
        );
        pool.set_attribute(Pool::AllowOpportunistic, 0).unwrap();
        pool.set_attribute(Pool::AllowInternalDependencies, 0)
            .unwrap();
        let p = rt.allocate_async(&pool, 4096, &a).unwrap();
        rt.free_async(p, &a).unwrap();
        let q = rt.allocate_async(&pool, 4096, &b).unwrap();
        assert_ne!(p, q, "b does not follow a's free");
        let e = crate::runtime::Event::new(false);
        e.record(&a).unwrap();
        e.make_wait(&b).unwrap();
        let r = rt.allocate_async(&pool, 4096, &b).unwrap();
        assert_eq!(p, r, "b waited for an event recorded after the free");
        rt.free_async(q, &b).unwrap();
        rt.free_async(r, &b).unwrap();
        // The other way round, opportunistically: b's frees are complete (b is idle).
        assert_ne!(rt.allocate_async(&pool, 4096, &a).unwrap(), q);
        pool.set_attribute(Pool::AllowOpportunistic, 1).unwrap();
        let s = rt.allocate_async(&pool, 4096, &a).unwrap();
        assert!(s == q || s == r);
        rt.destroy_mem_pool(&pool).unwrap();
    }

    /// With the device out of memory, another stream's pending free is reused after the
    /// allocating stream waits for it (internal dependencies), and not without that policy.
    #[test]
    fn out_of_memory_waits_for_another_streams_free() {
        let rt = runtime();
        let pool = rt.create_mem_pool(0).unwrap();
        let ctx = rt.device(0).unwrap().clone();
        let (a, b) = (
            ctx.create_stream(StreamKind::NonBlocking, 0).unwrap(),
            ctx.create_stream(StreamKind::NonBlocking, 0).unwrap(),
        );
        let p = rt.allocate_async(&pool, 512, &a).unwrap();
        // Stream a is held up, so its free stays pending.
        let (go, wait) = std::sync::mpsc::channel::<()>();
        a.add_callback(Box::new(move || {
            let _ = wait.recv();
        }))
        .unwrap();
        rt.free_async(p, &a).unwrap();
        assert!(
            ctx.device().allocations().find(p).is_some(),
            "not reached yet"
        );
        pool.0.refuse_new.store(true, Ordering::Relaxed);
        pool.set_attribute(Pool::AllowInternalDependencies, 0)
            .unwrap();
        assert!(matches!(
            rt.allocate_async(&pool, 512, &b),
            Err(RuntimeError::Device { .. })
        ));
        pool.set_attribute(Pool::AllowInternalDependencies, 1)
            .unwrap();
        assert_eq!(rt.allocate_async(&pool, 512, &b).unwrap(), p);
        assert!(b.follows(a.id(), a.steps()));
        // b's next step waits for a's free: b is not idle until a goes on.
        b.add_callback(Box::new(|| {})).unwrap();
        assert!(!b.is_idle());
        go.send(()).unwrap();
        b.synchronize().unwrap();
        a.synchronize().unwrap();
        // The late free left the new allocation alone.
        assert_eq!(ctx.device().allocations().find(p).unwrap().size, 512);
    }

    /// A stream that knows many others forgets the oldest knowledge first, never what it just
    /// learnt (an event waited for after the null stream's rules filled its memory).
    #[test]
    fn orders_forget_the_oldest_first() {
        use crate::runtime::stream::Order;
        let mut waiter = Order::default();
        waiter.note(7, 0);
        for other in 100..131 {
            waiter.note(other, 1);
        }
        let mut event = Order::default();
        event.note(7, 1);
        for other in 200..231 {
            event.note(other, 1);
        }
        event.note(7, 1);
        waiter.merge(&event);
        assert!(waiter.follows(7, 1));
        assert!(!waiter.follows(100, 1), "the oldest is forgotten");
        assert!(waiter.follows(230, 1));
    }

    /// The release threshold at synchronisation, trimming, and the watermarks.
    #[test]
    fn release_threshold_trim_and_watermarks() {
        let rt = runtime();
        let pool = rt.create_mem_pool(0).unwrap();
        let ctx = rt.device(0).unwrap().clone();
        let s = ctx.null_stream().unwrap();
        let blocks: Vec<u64> = (0..4)
            .map(|_| rt.allocate_async(&pool, 1 << 16, &s).unwrap())
            .collect();
        assert_eq!(pool.attribute(Pool::UsedMemHigh), 4 << 16);
        for &b in &blocks {
            rt.free_async(b, &s).unwrap();
        }
        assert_eq!(pool.attribute(Pool::UsedMemCurrent), 0);
        assert_eq!(pool.attribute(Pool::ReservedMemCurrent), 4 << 16);
        pool.set_attribute(Pool::ReleaseThreshold, 2 << 16).unwrap();
        rt.release_pool_memory(Some(0));
        assert_eq!(pool.attribute(Pool::ReservedMemCurrent), 2 << 16);
        pool.trim_to(1 << 16);
        assert_eq!(pool.attribute(Pool::ReservedMemCurrent), 1 << 16);
        assert_eq!(pool.attribute(Pool::ReservedMemHigh), 4 << 16);
        pool.set_attribute(Pool::ReservedMemHigh, 0).unwrap();
        assert_eq!(pool.attribute(Pool::ReservedMemHigh), 1 << 16);
        assert!(matches!(
            pool.set_attribute(Pool::UsedMemHigh, 5),
            Err(RuntimeError::Pool(PoolError::HighWatermarkReset { .. }))
        ));
        // Released blocks are freed memory for the checker.
        let released = blocks
            .iter()
            .filter(|&&b| ctx.device().allocations().parked(b).is_none())
            .count();
        assert_eq!(released, 3);
        rt.destroy_mem_pool(&pool).unwrap();
        assert_eq!(pool.attribute(Pool::ReservedMemCurrent), 0);
    }
}
