//! The software agent's memory: device, pinned, managed and runtime-internal allocations are
//! host memory (zeroed, 256-byte aligned, allocated fallibly), recorded in the device's
//! [`AllocationTable`] so every kernel access and copy is checked against them.
//!
//! Freed blocks stay in quarantine (not returned to the host allocator) until a byte budget is
//! exceeded, oldest first, so a freed address is not handed out again at once and a kernel that
//! uses it after `hipFree` is caught and reported with the freed allocation. Not for loaded code
//! objects (the executable's images register themselves) or for caller memory registered with
//! `hipHostRegister` (only recorded, never owned).

use std::alloc::Layout;
use std::collections::{HashMap, VecDeque};
use std::ptr::NonNull;

use parking_lot::Mutex;

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
    fn zeroed(size: u64) -> Option<Block> {
        let size = usize::try_from(size.max(1)).ok()?;
        let layout = Layout::from_size_align(size, ALIGNMENT).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(Block { ptr, layout })
    }

    fn address(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }
}

/// The blocks a software device owns.
#[derive(Debug, Default)]
pub struct SoftMemory {
    live: Mutex<HashMap<u64, Block>>,
    quarantine: Mutex<Quarantine>,
}

#[derive(Debug, Default)]
struct Quarantine {
    blocks: VecDeque<Block>,
    bytes: u64,
}

impl SoftMemory {
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
        let block = Block::zeroed(size).ok_or(DeviceError::OutOfMemory { size, kind })?;
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

    /// Frees the block at `base`: forgotten by `table`, and kept in quarantine for a while when
    /// `quarantine` (user allocations, where a use after free is a bug to catch) or released at
    /// once (runtime-internal memory nothing can still reach: code object images, queues).
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
        if !quarantine {
            drop(block);
            tracing::debug!(%allocation, "freed");
            return Ok(allocation);
        }
        let mut q = self.quarantine.lock();
        q.bytes += block.layout.size() as u64;
        q.blocks.push_back(block);
        while q.bytes > QUARANTINE_BYTES {
            match q.blocks.pop_front() {
                Some(old) => {
                    q.bytes -= old.layout.size() as u64;
                    // Released to the host allocator: its address may be host memory again.
                    table.forget_freed(old.address());
                }
                None => break,
            }
        }
        tracing::debug!(%allocation, "freed (quarantined)");
        Ok(allocation)
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
