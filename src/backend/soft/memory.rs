//! The software agent's memory: device, pinned, managed and runtime-internal allocations are
//! host memory (zeroed, 256-byte aligned, allocated fallibly), recorded in the device's
//! [`AllocationTable`] so every kernel access and copy is checked against them.
//!
//! Device memory (`hipMalloc`) is shareable: another process can map it through an IPC handle,
//! so it lives in memory objects (`crate::device::shared`), small allocations as chunks of
//! shared slabs (`slab`), larger ones in an object of their own. The other kinds come from
//! the host allocator.
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

use super::slab::{Chunk, Slabs, MAX_CHUNK};
use crate::device::epoch::Epochs;
use crate::device::shared::{page_size, Mapping, MemoryObject};
use crate::device::{Allocation, AllocationTable, DeviceError, MemoryKind};

/// Alignment of every allocation (HIP promises at least 256 bytes).
pub const ALIGNMENT: usize = 256;
/// Bytes of freed memory held in quarantine before the oldest block is released.
pub const QUARANTINE_BYTES: u64 = 64 << 20;

/// One block of host memory owned by the device.
#[derive(Debug)]
struct Block {
    address: u64,
    /// Bytes it holds (at least what was asked for).
    bytes: u64,
    backing: Backing,
}

/// Where a block's bytes come from.
#[derive(Debug)]
enum Backing {
    /// The host allocator: memory no other process can map.
    Heap { ptr: NonNull<u8>, layout: Layout },
    /// A memory object of its own, mapped whole (device memory above a slab chunk's size).
    Object {
        object: Arc<MemoryObject>,
        _mapping: Mapping,
    },
    /// A chunk of a slab (small device memory).
    Chunk(Chunk),
}

// SAFETY: the heap block is plain memory owned by this value; the pointer is only freed in
// Drop. Kernels and the runtime reach the memory through checked addresses.
unsafe impl Send for Backing {}

impl Drop for Block {
    fn drop(&mut self) {
        if let Backing::Heap { ptr, layout } = self.backing {
            // SAFETY: allocated in `Block::zeroed` with this layout, freed once here.
            unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) }
        }
        // Objects unmap and chunks return to their slab when their fields drop.
    }
}

impl Block {
    fn zeroed(size: u64, align: usize) -> Option<Block> {
        let size = usize::try_from(size.max(1)).ok()?;
        let layout = Layout::from_size_align(size, align.max(ALIGNMENT)).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(Block {
            address: ptr.as_ptr() as u64,
            bytes: layout.size() as u64,
            backing: Backing::Heap { ptr, layout },
        })
    }

    /// Zeroed memory another process can map: a slab chunk up to [`MAX_CHUNK`] bytes, else
    /// a memory object of its own.
    fn shared(size: u64, slabs: &Slabs) -> Result<Block, crate::device::shared::SharedMemoryError> {
        if size <= MAX_CHUNK {
            let chunk = slabs.allocate(size.max(1))?;
            return Ok(Block {
                address: chunk.address(),
                bytes: chunk.bytes(),
                backing: Backing::Chunk(chunk),
            });
        }
        let page = page_size();
        let bytes = size.checked_next_multiple_of(page).ok_or(
            crate::device::shared::SharedMemoryError::Size {
                what: "device memory",
                size,
                limit: crate::device::shared::MAX_BYTES,
            },
        )?;
        let object = Arc::new(MemoryObject::create(bytes)?);
        let mapping = object.map(0, bytes)?;
        Ok(Block {
            address: mapping.base(),
            bytes,
            backing: Backing::Object {
                object,
                _mapping: mapping,
            },
        })
    }

    fn address(&self) -> u64 {
        self.address
    }

    /// The memory object holding the block and the block's offset in it, when another
    /// process can map it.
    fn object(&self) -> Option<(Arc<MemoryObject>, u64)> {
        match &self.backing {
            Backing::Heap { .. } => None,
            Backing::Object { object, .. } => Some((object.clone(), 0)),
            Backing::Chunk(chunk) => {
                let (object, offset) = chunk.object();
                Some((object.clone(), offset))
            }
        }
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
    /// Where small device memory comes from.
    slabs: Slabs,
    /// Why the last device allocation could not be made shareable (it came from the heap).
    unshared: Mutex<Option<String>>,
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
            slabs: Slabs::new(),
            unshared: Mutex::new(None),
        }
    }

    /// The dispatch tracker frees wait for.
    pub fn epochs(&self) -> &Arc<Epochs> {
        &self.epochs
    }

    /// Allocates `size` zeroed bytes of `kind` and records them in `table`. Device memory is
    /// shareable (a slab chunk or a memory object another process can map, see
    /// [`object`](Self::object)); when the system refuses a memory object (no descriptors
    /// left), it comes from the heap instead and cannot be shared, which the log and an IPC
    /// export of it say.
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
        let shared = if kind == MemoryKind::Device {
            match Block::shared(size, &self.slabs) {
                Ok(block) => Some(block),
                Err(e) => {
                    tracing::debug!(error = %e, size, "device memory from the heap: it cannot be shared with another process");
                    *self.unshared.lock() = Some(e.to_string());
                    None
                }
            }
        } else {
            None
        };
        let block = match shared {
            Some(block) => block,
            None => {
                Block::zeroed(size, ALIGNMENT).ok_or(DeviceError::OutOfMemory { size, kind })?
            }
        };
        let base = block.address();
        // Fresh from the host: a registration still covering these addresses is stale.
        let allocation = table
            .insert_fresh(base, size, kind, writable)
            .map(|(allocation, _stale)| allocation)
            .map_err(|e| {
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
            let bytes = block.bytes;
            self.epochs.release_after(mark, Box::new(block), bytes);
            tracing::debug!(%allocation, "freed");
            return Ok(allocation);
        }
        let mut leaving = Vec::new();
        {
            let mut q = self.quarantine.lock();
            q.bytes += block.bytes;
            q.blocks.push_back((mark, block));
            while q.bytes > QUARANTINE_BYTES {
                match q.blocks.pop_front() {
                    Some(old) => {
                        q.bytes -= old.1.bytes;
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
            let bytes = old.bytes;
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
        let bytes = block.bytes;
        self.epochs.release_after(mark, Box::new(block), bytes);
        Ok(())
    }

    /// The memory object holding the live block that starts at `base`, and the block's
    /// offset in it: what another process maps to share it.
    ///
    /// # Errors
    /// [`DeviceError::InvalidAddress`] when no live block starts there;
    /// [`DeviceError::Unsupported`] for a block from the heap (not device memory, or device
    /// memory made when the system refused a memory object).
    pub fn object(&self, base: u64) -> Result<(Arc<MemoryObject>, u64), DeviceError> {
        let live = self.live.lock();
        let block = live.get(&base).ok_or(DeviceError::InvalidAddress {
            address: base,
            detail: Some("not the start of a live block of this device".into()),
        })?;
        block.object().ok_or_else(|| DeviceError::Unsupported {
            op: "sharing memory with another process",
            backend: "soft",
            reason: match self.unshared.lock().as_deref() {
                Some(why) => format!("the allocation at {base:#x} is host heap memory, not a shareable memory object (the last shareable allocation failed: {why})"),
                None => format!("the allocation at {base:#x} is not device memory from hipMalloc"),
            },
        })
    }

    /// Bytes of live blocks.
    #[allow(dead_code)] // for tests and tools
    pub fn live_bytes(&self) -> u64 {
        self.live.lock().values().map(|b| b.bytes).sum()
    }
}
