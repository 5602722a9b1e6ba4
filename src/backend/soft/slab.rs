//! Small device allocations of the software agent, carved out of shared memory objects
//! ("slabs"), so every `hipMalloc` can be shared with another process (an IPC handle names the
//! slab's descriptor and the chunk's offset) without a descriptor and six system calls each:
//! measured on this project's machine, a memory object of its own costs about 40 µs to make
//! and release, against about 0.5 µs for a chunk of a slab that exists (and 0.7 µs for as
//! much from the host allocator).
//!
//! Chunks come in power-of-two sizes from [`MIN_CHUNK`] to [`MAX_CHUNK`], each size from its
//! own 1 MiB slabs; a chunk is zeroed when handed out. A slab whose chunks are all free goes
//! back to the host (its mapping and descriptor released) unless its size has only a few slabs
//! with room. Larger allocations get a memory object of their own (`memory`). Not for
//! deciding when a freed chunk may be reused: a chunk returns to its slab when its owner drops
//! it, which the device's quarantine and dispatch epochs delay.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::device::shared::{Mapping, MemoryObject, SharedMemoryError};

/// Bytes of one slab.
pub const SLAB_BYTES: u64 = 1 << 20;
/// The smallest chunk (HIP's 256-byte alignment).
pub const MIN_CHUNK: u64 = 256;
/// The largest chunk; larger allocations get a memory object of their own.
pub const MAX_CHUNK: u64 = 64 << 10;
/// Slabs of one size kept listed even when empty, so a program that frees and allocates in
/// rounds reuses pages it already faulted in instead of faulting in fresh ones (on this
/// project's machine a fresh shared page costs about 10 µs to touch).
const KEEP_LISTED: usize = 4;
/// Chunk sizes: 256 B, 512 B, ... 64 KiB.
const CLASSES: usize = (MAX_CHUNK.trailing_zeros() - MIN_CHUNK.trailing_zeros() + 1) as usize;

/// Every chunk size's slabs.
#[derive(Debug)]
pub struct Slabs {
    classes: Vec<Arc<Class>>,
}

/// The slabs of one chunk size.
#[derive(Debug)]
struct Class {
    chunk: u64,
    /// Slabs that have (or recently had) a free chunk; a slab is listed at most once.
    with_free: Mutex<Vec<Arc<Slab>>>,
}

/// One memory object cut into equal chunks.
#[derive(Debug)]
pub struct Slab {
    class: Weak<Class>,
    object: Arc<MemoryObject>,
    mapping: Mapping,
    chunk: u64,
    chunks: u32,
    /// Indices of free chunks (locked after the class's list).
    free: Mutex<Vec<u32>>,
    /// Whether the class lists it (changed only with the class's list locked).
    listed: AtomicBool,
}

/// One chunk of a slab, returned to it on drop.
#[derive(Debug)]
pub struct Chunk {
    slab: Arc<Slab>,
    index: u32,
}

impl Default for Slabs {
    fn default() -> Self {
        Slabs::new()
    }
}

impl Slabs {
    /// No slabs yet.
    pub fn new() -> Slabs {
        Slabs {
            classes: (0..CLASSES)
                .map(|i| {
                    Arc::new(Class {
                        chunk: MIN_CHUNK << i,
                        with_free: Mutex::new(Vec::new()),
                    })
                })
                .collect(),
        }
    }

    /// A chunk of at least `size` bytes (1 to [`MAX_CHUNK`]) whose first `size` bytes are
    /// zero.
    ///
    /// # Errors
    /// [`SharedMemoryError::Size`] for a size out of range; a system error when a new slab
    /// cannot be made.
    pub fn allocate(&self, size: u64) -> Result<Chunk, SharedMemoryError> {
        if size == 0 || size > MAX_CHUNK {
            return Err(SharedMemoryError::Size {
                what: "slab chunk",
                size,
                limit: MAX_CHUNK,
            });
        }
        let rounded = size.next_power_of_two().max(MIN_CHUNK);
        let index = (rounded.trailing_zeros() - MIN_CHUNK.trailing_zeros()) as usize;
        let class = self.classes.get(index).ok_or(SharedMemoryError::Size {
            what: "slab chunk",
            size,
            limit: MAX_CHUNK,
        })?;
        let chunk = class.take()?;
        // SAFETY: the chunk's bytes lie inside its slab's live mapping, and no one else holds
        // this chunk (it was just taken from the free list).
        unsafe { std::ptr::write_bytes(chunk.address() as *mut u8, 0, size as usize) };
        Ok(chunk)
    }
}

impl Class {
    fn take(self: &Arc<Self>) -> Result<Chunk, SharedMemoryError> {
        let mut list = self.with_free.lock();
        while let Some(slab) = list.last().cloned() {
            let (index, left) = {
                let mut free = slab.free.lock();
                (free.pop(), free.len())
            };
            if left == 0 {
                list.pop();
                slab.listed.store(false, Ordering::Relaxed);
            }
            if let Some(index) = index {
                return Ok(Chunk { slab, index });
            }
        }
        let slab = Arc::new(Slab::new(self)?);
        let index = slab.free.lock().pop().ok_or(SharedMemoryError::Size {
            what: "slab",
            size: SLAB_BYTES,
            limit: SLAB_BYTES,
        })?;
        if !slab.free.lock().is_empty() {
            slab.listed.store(true, Ordering::Relaxed);
            list.push(slab.clone());
        }
        tracing::debug!(chunk = self.chunk, "new slab");
        Ok(Chunk { slab, index })
    }
}

impl Slab {
    fn new(class: &Arc<Class>) -> Result<Slab, SharedMemoryError> {
        let object = Arc::new(MemoryObject::create(SLAB_BYTES)?);
        let mapping = object.map(0, SLAB_BYTES)?;
        let chunks = (SLAB_BYTES / class.chunk) as u32;
        Ok(Slab {
            class: Arc::downgrade(class),
            object,
            mapping,
            chunk: class.chunk,
            chunks,
            // Lowest addresses first.
            free: Mutex::new((0..chunks).rev().collect()),
            listed: AtomicBool::new(false),
        })
    }
}

impl Chunk {
    /// First address.
    pub fn address(&self) -> u64 {
        self.slab.mapping.base() + u64::from(self.index) * self.slab.chunk
    }

    /// Bytes (the chunk size, at least what was asked for).
    pub fn bytes(&self) -> u64 {
        self.slab.chunk
    }

    /// The slab's memory object and the chunk's offset in it.
    pub fn object(&self) -> (&Arc<MemoryObject>, u64) {
        (&self.slab.object, u64::from(self.index) * self.slab.chunk)
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        let slab = &self.slab;
        let Some(class) = slab.class.upgrade() else {
            // The device is gone: the slab goes with its last chunk.
            return;
        };
        let mut list = class.with_free.lock();
        let all_free = {
            let mut free = slab.free.lock();
            free.push(self.index);
            free.len() as u32 == slab.chunks
        };
        if !slab.listed.load(Ordering::Relaxed) {
            slab.listed.store(true, Ordering::Relaxed);
            list.push(slab.clone());
        }
        // An empty slab goes back to the host, unless the size has little room otherwise.
        if all_free && list.len() > KEEP_LISTED {
            list.retain(|s| !Arc::ptr_eq(s, slab));
            slab.listed.store(false, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::shared::page_size;

    /// Chunks are aligned to their size (up to a page), zeroed, distinct, backed by a slab another view of
    /// which sees their bytes, reused after being dropped, and empty slabs beyond one per
    /// size go back to the host.
    #[test]
    fn chunks_are_aligned_zeroed_shared_and_reused() {
        let slabs = Slabs::new();
        let a = slabs.allocate(100).unwrap();
        let b = slabs.allocate(256).unwrap();
        assert_eq!(a.bytes(), 256);
        assert_eq!(a.address() % 256, 0);
        assert_ne!(a.address(), b.address());
        // SAFETY: the chunk's 256 bytes are ours.
        unsafe { std::ptr::write_bytes(a.address() as *mut u8, 0xab, 256) };
        let (object, offset) = a.object();
        let view = object.map(0, SLAB_BYTES).unwrap();
        // SAFETY: inside the second view of the slab.
        assert_eq!(unsafe { *((view.base() + offset + 99) as *const u8) }, 0xab);
        let at = a.address();
        drop(a);
        let again = slabs.allocate(200).unwrap();
        assert_eq!(again.address(), at, "the freed chunk is reused first");
        // SAFETY: the chunk's bytes are ours; the first 200 were zeroed.
        assert_eq!(unsafe { *((at + 199) as *const u8) }, 0);
        assert!(slabs.allocate(MAX_CHUNK + 1).is_err());
        assert!(slabs.allocate(0).is_err());

        // Six slabs of 64 KiB chunks (16 each), then free them all: a few stay listed.
        let big: Vec<Chunk> = (0..90)
            .map(|_| slabs.allocate(MAX_CHUNK).unwrap())
            .collect();
        assert!(big.iter().all(|c| c.address() % page_size() == 0));
        let first = Arc::as_ptr(&big[0].slab);
        let second = Arc::as_ptr(&big[89].slab);
        assert_ne!(first, second);
        drop(big);
        let sizes = &slabs.classes[CLASSES - 1];
        assert_eq!(
            sizes.with_free.lock().len(),
            KEEP_LISTED,
            "empty slabs beyond a few went back"
        );
    }
}
