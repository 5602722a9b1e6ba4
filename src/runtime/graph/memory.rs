//! Graph memory (`hipGraphAddMemAllocNode`, `hipGraphAddMemFreeNode`, stream-ordered
//! allocation captured into a graph): a block of device memory whose address is fixed when the
//! allocation node is made and which kernels can reach only between the node's run and the
//! free that follows it.
//!
//! clr reserves a virtual address when the node is made and maps physical memory when the node
//! runs; here the block is allocated when the node is made and *parked* in the device's
//! allocation table at once (as a pool block freed in stream order is, see
//! [`super::super::mempool`]), so the address exists but every access is a use-after-free
//! report. The allocation node's step revives it, a free (a free node's step, `hipFreeAsync`
//! in stream order, `hipFree` after the device is idle) parks it again. The memory goes back
//! to the device when the last graph, clone or executable holding the node is gone.
//!
//! Two states are kept: whether the block is reachable now (what the steps did) and whether
//! submitted work owns it (what launches and frees asked for, in submission order), which
//! decides whether a launch may allocate it again (a graph whose allocation was not freed
//! cannot run again until it is, as in CUDA) and whether a free is a double free.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::device::{Device, DeviceError, MemoryKind};
use crate::runtime::{Runtime, RuntimeError, RuntimeResult, Stream};

/// Graph memory by block address, to find the block a free names.
static BLOCKS: Mutex<BTreeMap<u64, Weak<GraphAllocation>>> = Mutex::new(BTreeMap::new());

/// Per device: bytes reachable now and their high-water mark, bytes held and theirs
/// (`hipGraphMemAttrUsedMemCurrent` ... `ReservedMemHigh`).
static STATS: Mutex<BTreeMap<usize, [u64; 4]>> = Mutex::new(BTreeMap::new());

fn account(device: usize, used: i128, reserved: i128) {
    let mut stats = STATS.lock();
    let s = stats.entry(device).or_default();
    let apply = |v: u64, d: i128| (i128::from(v) + d).clamp(0, i128::from(u64::MAX)) as u64;
    s[0] = apply(s[0], used);
    s[1] = s[1].max(s[0]);
    s[2] = apply(s[2], reserved);
    s[3] = s[3].max(s[2]);
}

/// `hipDeviceGetGraphMemAttribute`'s four values for `device`: used now, used high-water,
/// reserved now, reserved high-water.
pub fn graph_memory_stats(device: usize) -> [u64; 4] {
    STATS.lock().get(&device).copied().unwrap_or_default()
}

/// Resets `device`'s high-water marks to the current values (`hipDeviceSetGraphMemAttribute`
/// with 0): `used` for the used one, else the reserved one.
pub fn reset_graph_memory_high(device: usize, used: bool) {
    let mut stats = STATS.lock();
    let s = stats.entry(device).or_default();
    if used {
        s[1] = s[0];
    } else {
        s[3] = s[2];
    }
}

#[derive(Debug)]
struct State {
    /// The allocation table's id of the block (live or parked).
    id: u64,
    /// Whether kernels can reach it now.
    reachable: bool,
    /// Whether submitted work allocated it and nothing submitted has freed it yet.
    owned: bool,
}

/// A block of graph memory (see the module comment).
pub struct GraphAllocation {
    device_index: usize,
    device: Arc<dyn Device>,
    base: u64,
    size: u64,
    state: Mutex<State>,
}

impl std::fmt::Debug for GraphAllocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphAllocation")
            .field("device", &self.device_index)
            .field("base", &format_args!("{:#x}", self.base))
            .field("size", &self.size)
            .field("state", &*self.state.lock())
            .finish()
    }
}

impl GraphAllocation {
    /// The block's address.
    pub fn address(&self) -> u64 {
        self.base
    }

    /// Its size in bytes, as asked.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The device it is memory of.
    pub fn device(&self) -> usize {
        self.device_index
    }

    /// The live block starting at `address`, if graph memory is there.
    pub fn find(address: u64) -> Option<Arc<GraphAllocation>> {
        BLOCKS.lock().get(&address).and_then(Weak::upgrade)
    }

    /// Whether `[address, address + len)` lies inside one block of graph memory. Such a range
    /// is reachable only while its allocation has run and not been freed, which the device's
    /// table checks at every access: calls that queue work on it accept it (in stream order
    /// after a launch it is allocated, as in HIP).
    pub fn covers(address: u64, len: u64) -> bool {
        let blocks = BLOCKS.lock();
        blocks
            .range(..=address)
            .next_back()
            .and_then(|(_, w)| w.upgrade())
            .is_some_and(|b| {
                address
                    .checked_add(len)
                    .is_some_and(|end| end <= b.base + b.size)
            })
    }

    /// Whether submitted work owns the block (allocated and not yet freed).
    pub fn owned(&self) -> bool {
        self.state.lock().owned
    }

    /// Marks the block allocated by submitted work (a launch's allocation step).
    ///
    /// # Errors
    /// [`RuntimeError::InvalidRange`] when it already is: its graph ran and nothing freed it.
    pub(crate) fn take(&self) -> RuntimeResult<()> {
        let mut st = self.state.lock();
        if st.owned {
            return Err(self.refusal(
                "is still allocated by an earlier launch: free it (a free node, hipFree or \
                 hipFreeAsync) before launching its graph again",
            ));
        }
        st.owned = true;
        Ok(())
    }

    /// Marks the block freed by submitted work (a free step, `hipFreeAsync`, `hipFree`).
    ///
    /// # Errors
    /// [`RuntimeError::InvalidRange`] when no submitted work allocated it (a double free, or a
    /// free before its graph ran).
    pub(crate) fn give_back(&self) -> RuntimeResult<()> {
        let mut st = self.state.lock();
        if !st.owned {
            return Err(self.refusal(
                "is not allocated: its allocation node has not run since it was last freed",
            ));
        }
        st.owned = false;
        Ok(())
    }

    /// Undoes [`take`](Self::take) or [`give_back`](Self::give_back) for a launch that
    /// submitted nothing.
    pub(crate) fn set_owned(&self, owned: bool) {
        self.state.lock().owned = owned;
    }

    fn refusal(&self, why: &str) -> RuntimeError {
        RuntimeError::InvalidRange {
            what: "graph memory",
            address: self.base,
            len: self.size,
            reason: why.to_owned(),
        }
    }

    /// The allocation step: kernels can reach the block from now on.
    pub(crate) fn map(&self) -> Result<(), DeviceError> {
        let mut st = self.state.lock();
        if st.reachable {
            return Ok(());
        }
        let a = self
            .device
            .allocations()
            .revive(self.base, self.size, MemoryKind::Device);
        st.id = a.id;
        st.reachable = true;
        account(self.device_index, i128::from(self.size), 0);
        tracing::debug!(base = self.base, size = self.size, "graph memory allocated");
        Ok(())
    }

    /// The free step: kernels touching the block from now on are reported as a use after free.
    pub(crate) fn unmap(&self) -> Result<(), DeviceError> {
        let mut st = self.state.lock();
        if !st.reachable {
            return Ok(());
        }
        self.device.allocations().park(self.base, st.id);
        st.reachable = false;
        account(self.device_index, -i128::from(self.size), 0);
        tracing::debug!(base = self.base, size = self.size, "graph memory freed");
        Ok(())
    }
}

impl Drop for GraphAllocation {
    fn drop(&mut self) {
        let reachable = self.state.lock().reachable;
        {
            let mut blocks = BLOCKS.lock();
            if blocks
                .get(&self.base)
                .is_some_and(|w| w.strong_count() == 0)
            {
                blocks.remove(&self.base);
            }
        }
        account(
            self.device_index,
            if reachable { -i128::from(self.size) } else { 0 },
            -i128::from(self.size),
        );
        match self.device.free(self.base) {
            Ok(_) => tracing::debug!(base = self.base, "graph memory released"),
            Err(e) => tracing::debug!(base = self.base, error = %e, "graph memory release failed"),
        }
    }
}

impl Runtime {
    /// A block of `size` bytes of graph memory on `device`, unreachable until an allocation
    /// step runs (an allocation node being made).
    ///
    /// # Errors
    /// [`RuntimeError::ZeroSize`], an invalid device, out of device memory.
    pub fn reserve_graph_memory(
        &self,
        device: usize,
        size: u64,
    ) -> RuntimeResult<Arc<GraphAllocation>> {
        if size == 0 {
            return Err(RuntimeError::ZeroSize {
                what: "graph memory allocation",
            });
        }
        let ctx = self.device(device as i64)?;
        let dev = ctx.device().clone();
        let a = dev
            .allocate(size, MemoryKind::Device)
            .map_err(|e| ctx.error("allocating graph memory", e))?;
        dev.allocations().park(a.base, a.id);
        account(device, 0, i128::from(size));
        let block = Arc::new(GraphAllocation {
            device_index: device,
            device: dev,
            base: a.base,
            size,
            state: Mutex::new(State {
                id: a.id,
                reachable: false,
                owned: false,
            }),
        });
        BLOCKS.lock().insert(a.base, Arc::downgrade(&block));
        tracing::debug!(device, base = a.base, size, "graph memory reserved");
        Ok(block)
    }

    /// `hipFree` of graph memory: after its device is idle, the block is unreachable.
    /// `Ok(false)` when `address` is no graph memory.
    ///
    /// # Errors
    /// A double free (see [`GraphAllocation::give_back`]).
    pub(crate) fn free_graph_memory(&self, address: u64) -> RuntimeResult<bool> {
        let Some(block) = GraphAllocation::find(address) else {
            return Ok(false);
        };
        block.give_back()?;
        // As hipFree: the device's work that may use it finishes first.
        self.device(block.device_index as i64)?
            .synchronize_ignoring_errors()?;
        block.unmap().map_err(|e| RuntimeError::Device {
            device: block.device_index,
            what: "freeing graph memory".into(),
            error: Box::new(e),
        })?;
        Ok(true)
    }

    /// `hipFreeAsync` of graph memory: unreachable once `stream` reaches this point.
    /// `Ok(false)` when `address` is no graph memory.
    ///
    /// # Errors
    /// A double free, the stream's errors.
    pub(crate) fn free_graph_memory_async(
        &self,
        address: u64,
        stream: &Stream,
    ) -> RuntimeResult<bool> {
        let Some(block) = GraphAllocation::find(address) else {
            return Ok(false);
        };
        block.give_back()?;
        let b = block.clone();
        if let Err(e) = stream.host_work("freeing graph memory", Box::new(move || b.unmap())) {
            block.set_owned(true);
            return Err(e);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::SoftAgent;
    use crate::device::AccessKind;
    use crate::runtime::RuntimeOptions;

    fn runtime() -> Runtime {
        let agent = SoftAgent::new("gfx1030".parse().unwrap()).device();
        Runtime::with_devices(vec![agent], RuntimeOptions::default())
    }

    /// The block's address exists from the start but is reachable only between its
    /// allocation step and a free; ownership refuses a second allocation and a double free;
    /// the memory goes with the last holder.
    #[test]
    fn a_block_is_reachable_between_its_allocation_and_its_free() {
        let rt = runtime();
        let ctx = rt.device(0).unwrap().clone();
        let table = || ctx.device().allocations();
        let b = rt.reserve_graph_memory(0, 4096).unwrap();
        let at = b.address();
        assert!(GraphAllocation::covers(at, 4096));
        assert!(!GraphAllocation::covers(at, 4097));
        assert!(table().check(at, 4, AccessKind::data(true)).is_err());
        assert_eq!(graph_memory_stats(0)[0], 0);
        assert!(graph_memory_stats(0)[2] >= 4096);

        b.take().unwrap();
        assert!(b.take().is_err(), "allocated twice");
        b.map().unwrap();
        table().check(at, 4096, AccessKind::data(true)).unwrap();
        assert!(graph_memory_stats(0)[0] >= 4096);
        b.give_back().unwrap();
        assert!(b.give_back().is_err(), "freed twice");
        b.unmap().unwrap();
        assert!(table().check(at, 4, AccessKind::data(false)).is_err());

        // hipFree of graph memory: owned, then freed; a second hipFree is refused.
        b.take().unwrap();
        b.map().unwrap();
        assert!(rt.free_graph_memory(at).unwrap());
        assert!(rt.free_graph_memory(at).is_err());
        assert!(
            !rt.free_graph_memory(at + 8).unwrap(),
            "not a block's start"
        );

        let held = graph_memory_stats(0)[2];
        drop(b);
        assert!(GraphAllocation::find(at).is_none());
        assert!(graph_memory_stats(0)[2] <= held - 4096);
        assert!(rt.reserve_graph_memory(0, 0).is_err());
    }
}
