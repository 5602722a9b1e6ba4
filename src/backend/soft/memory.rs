//! The software agent's memory: device, pinned, managed and runtime-internal allocations are
//! host memory (zeroed, 256-byte aligned, allocated fallibly), recorded in the device's
//! [`AllocationTable`] so every kernel access and copy is checked against them.
//!
//! Freed blocks stay in quarantine (not returned to the host allocator) until a byte budget is
//! exceeded, oldest first, so a freed address is not handed out again at once and a kernel that
//! uses it after `hipFree` is caught and reported with the freed allocation. Whatever leaves
//! (a quarantined block past the budget, runtime-internal memory, code object images) goes back
//! to the host only once every dispatch that was running at its free has ended
//! ([`crate::device::epoch`]): the table forgets the range at once, so new accesses fault, and
//! the bytes stay valid for an access the checker approved just before. The software HSA
//! library's system pools allocate here too ([`SoftMemory::allocate_system`]), so both C ABIs
//! follow the same rule. Not for caller memory registered with `hipHostRegister` (only
//! recorded, never owned).

use std::alloc::Layout;
use std::collections::{HashMap, VecDeque};
use std::ptr::NonNull;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::device::epoch::Epochs;
use crate::device::{Allocation, AllocationTable, DeviceError, MemoryKind};

/// Alignment of every allocation (HIP promises at least 256 bytes).
pub const ALIGNMENT: usize = 256;
/// Bytes of freed memory held in quarantine before the oldest block is released.
pub const QUARANTINE_BYTES: u64 = 64 << 20;

/// One block of host memory owned by the device.
#[derive(Debug)]
struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the block is plain heap memory owned by this value; the pointer is only freed in
// Drop. Kernels and the runtime reach the memory through checked addresses.
unsafe impl Send for Block {}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: allocated in `Block::zeroed` with this layout, freed once here.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl Block {
    fn zeroed(size: u64, align: usize) -> Option<Block> {
        let size = usize::try_from(size.max(1)).ok()?;
        let layout = Layout::from_size_align(size, align.max(ALIGNMENT)).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(Block { ptr, layout })
    }

    fn address(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }
}

/// The blocks a software device owns.
#[derive(Debug)]
pub struct SoftMemory {
    live: Mutex<HashMap<u64, Block>>,
    /// Blocks of the software HSA library's system pools: owned here, recorded in no table
    /// by this memory (the library records them with the agents allowed to reach them).
    system: Mutex<HashMap<u64, Block>>,
    quarantine: Mutex<Quarantine>,
    epochs: Arc<Epochs>,
}

#[derive(Debug, Default)]
struct Quarantine {
    /// Blocks with the mark of their free.
    blocks: VecDeque<(u64, Block)>,
    bytes: u64,
}

impl SoftMemory {
    /// Memory whose frees wait for the dispatches `epochs` tracks.
    pub fn new(epochs: Arc<Epochs>) -> SoftMemory {
        SoftMemory {
            live: Mutex::default(),
            system: Mutex::default(),
            quarantine: Mutex::default(),
            epochs,
        }
    }

    /// The dispatch tracker frees wait for.
    pub fn epochs(&self) -> &Arc<Epochs> {
        &self.epochs
    }

    /// Allocates `size` zeroed bytes of `kind` and records them in `table`.
    ///
    /// # Errors
    /// [`DeviceError::OutOfMemory`] when the host allocator refuses (or the size does not fit
    /// the address space).
    pub fn allocate(
        &self,
        table: &AllocationTable,
        size: u64,
        kind: MemoryKind,
        writable: bool,
    ) -> Result<Allocation, DeviceError> {
        let block =
            Block::zeroed(size, ALIGNMENT).ok_or(DeviceError::OutOfMemory { size, kind })?;
        let base = block.address();
        let allocation = table.insert(base, size, kind, writable).map_err(|e| {
            // Fresh host memory cannot overlap a live range unless the table is stale.
            DeviceError::InvalidAddress {
                address: base,
                detail: Some(e.to_string()),
            }
        })?;
        self.live.lock().insert(base, block);
        tracing::debug!(%allocation, "allocated");
        Ok(allocation)
    }

    /// Frees the block at `base`: forgotten by `table` at once, and kept in quarantine for a
    /// while when `quarantine` (user allocations, where a use after free is a bug to catch),
    /// else released (runtime-internal memory: code object images, queues, kernarg segments)
    /// once the dispatches running now have ended.
    ///
    /// # Errors
    /// [`DeviceError::InvalidAddress`] when `base` is not the start of a live block of this
    /// memory (a double free, an interior pointer, memory of another device).
    pub fn free(
        &self,
        table: &AllocationTable,
        base: u64,
        quarantine: bool,
    ) -> Result<Allocation, DeviceError> {
        let Some(block) = self.live.lock().remove(&base) else {
            return Err(table.not_freeable(base));
        };
        let allocation =
            table
                .remove(base, quarantine)
                .ok_or_else(|| DeviceError::InvalidAddress {
                    address: base,
                    detail: Some("block not in the allocation table".into()),
                })?;
        // After the table forgot the range: dispatches that begin later cannot reach it.
        let mark = self.epochs.mark();
        if !quarantine {
            let bytes = block.layout.size() as u64;
            self.epochs.release_after(mark, Box::new(block), bytes);
            tracing::debug!(%allocation, "freed");
            return Ok(allocation);
        }
        let mut leaving = Vec::new();
        {
            let mut q = self.quarantine.lock();
            q.bytes += block.layout.size() as u64;
            q.blocks.push_back((mark, block));
            while q.bytes > QUARANTINE_BYTES {
                match q.blocks.pop_front() {
                    Some(old) => {
                        q.bytes -= old.1.layout.size() as u64;
                        leaving.push(old);
                    }
                    None => break,
                }
            }
        }
        for (mark, old) in leaving {
            // On its way back to the host allocator, its address may be host memory again
            // (once the dispatches running at its free have ended, which hold it until then).
            table.forget_freed(old.address());
            let bytes = old.layout.size() as u64;
            self.epochs.release_after(mark, Box::new(old), bytes);
        }
        tracing::debug!(%allocation, "freed (quarantined)");
        Ok(allocation)
    }

    /// Allocates `size` zeroed bytes aligned to `align` (at least [`ALIGNMENT`]) that no table
    /// records: the software HSA library's system pools, whose memory agents reach only once
    /// allowed (the library records it in their tables then).
    ///
    /// # Errors
    /// [`DeviceError::OutOfMemory`] when the host allocator refuses, or for an alignment that
    /// is not a power of two.
    pub fn allocate_system(&self, size: u64, align: usize) -> Result<u64, DeviceError> {
        let block = Block::zeroed(size, align).ok_or(DeviceError::OutOfMemory {
            size,
            kind: MemoryKind::PinnedHost,
        })?;
        let base = block.address();
        self.system.lock().insert(base, block);
        Ok(base)
    }

    /// Frees a block of [`allocate_system`](Self::allocate_system) once the dispatches running
    /// now have ended; the caller has removed it from every table that recorded it.
    ///
    /// # Errors
    /// [`DeviceError::InvalidAddress`] when `base` is not such a block.
    pub fn free_system(&self, base: u64) -> Result<(), DeviceError> {
        let block =
            self.system
                .lock()
                .remove(&base)
                .ok_or_else(|| DeviceError::InvalidAddress {
                    address: base,
                    detail: Some("not a block of the system pools".into()),
                })?;
        let mark = self.epochs.mark();
        let bytes = block.layout.size() as u64;
        self.epochs.release_after(mark, Box::new(block), bytes);
        Ok(())
    }

    /// Bytes of live blocks.
    #[allow(dead_code)] // for tests and tools
    pub fn live_bytes(&self) -> u64 {
        self.live
            .lock()
            .values()
            .map(|b| b.layout.size() as u64)
            .sum()
    }
}
