//! Generational handle tables: every opaque handle `librocload.so` gives C callers (fat binaries,
//! modules, functions, streams, events, contexts, hiprtc programs) comes from one [`HandleTable`], so a stale handle is recognised, never
//! dereferenced and never aliases a newer object, and freed slots are reused, so memory returns
//! to its starting level after any register/unregister or load/unload loop.
//!
//! A handle is a 64-bit value: an 8-bit kind tag (so a module handle never passes for a
//! function handle), a 32-bit generation (bumped each time the slot is freed) and a 24-bit slot
//! index. It is never 0 (NULL) and is not an address. A stale handle would alias only after its
//! slot was reused 2^32 times.
//!
//! Not for the objects themselves: the runtime owns those; a table holds clones of `Arc`s or ids.

use parking_lot::RwLock;

const INDEX_BITS: u32 = 24;
const GENERATION_BITS: u32 = 32;
const MAX_SLOTS: usize = 1 << INDEX_BITS;

/// What a handle stands for (its tag, bits 56..64).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// `__hipRegisterFatBinary`'s `void**`.
    FatBinary = 0xF1,
    /// `hipModule_t`.
    Module = 0xA2,
    /// `hipFunction_t`.
    Function = 0xC3,
    /// `hipStream_t`.
    Stream = 0xB4,
    /// `hipEvent_t`.
    Event = 0xE5,
    /// `hipCtx_t`.
    Context = 0xD6,
    /// `hiprtcProgram`.
    RtcProgram = 0x97,
}

#[derive(Debug)]
struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

#[derive(Debug)]
struct Slots<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

/// A table of live objects behind opaque handles of one [`Kind`].
#[derive(Debug)]
pub struct HandleTable<T> {
    kind: Kind,
    inner: RwLock<Slots<T>>,
}

impl<T: Clone> HandleTable<T> {
    /// An empty table handing out handles of `kind`.
    pub const fn new(kind: Kind) -> Self {
        HandleTable {
            kind,
            inner: RwLock::new(Slots {
                slots: Vec::new(),
                free: Vec::new(),
            }),
        }
    }

    fn encode(&self, index: u32, generation: u32) -> u64 {
        (u64::from(self.kind as u8) << (INDEX_BITS + GENERATION_BITS))
            | (u64::from(generation) << INDEX_BITS)
            | u64::from(index)
    }

    /// The slot index and generation `handle` names, if it carries this table's tag.
    fn decode(&self, handle: u64) -> Option<(usize, u32)> {
        let tag = (handle >> (INDEX_BITS + GENERATION_BITS)) as u8;
        if tag != self.kind as u8 {
            return None;
        }
        let index = (handle & ((1 << INDEX_BITS) - 1)) as usize;
        let generation = ((handle >> INDEX_BITS) & ((1 << GENERATION_BITS) - 1)) as u32;
        Some((index, generation))
    }

    /// Stores `value` and returns its new handle; `None` when 2^24 handles are live.
    pub fn insert(&self, value: T) -> Option<u64> {
        let mut inner = self.inner.write();
        if let Some(index) = inner.free.pop() {
            let slot = &mut inner.slots[index as usize];
            slot.value = Some(value);
            return Some(self.encode(index, slot.generation));
        }
        if inner.slots.len() >= MAX_SLOTS {
            return None;
        }
        let index = inner.slots.len() as u32;
        inner.slots.try_reserve(1).ok()?;
        inner.slots.push(Slot {
            generation: 0,
            value: Some(value),
        });
        Some(self.encode(index, 0))
    }

    /// The value behind a live handle.
    pub fn get(&self, handle: u64) -> Option<T> {
        let (index, generation) = self.decode(handle)?;
        let inner = self.inner.read();
        let slot = inner.slots.get(index)?;
        (slot.generation == generation)
            .then(|| slot.value.clone())
            .flatten()
    }

    /// Removes a live handle's value; the handle (and every copy of it) is stale from now on.
    pub fn remove(&self, handle: u64) -> Option<T> {
        let (index, generation) = self.decode(handle)?;
        let mut inner = self.inner.write();
        let slot = inner.slots.get_mut(index)?;
        if slot.generation != generation {
            return None;
        }
        let value = slot.value.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        inner.free.push(index as u32);
        Some(value)
    }

    /// How many handles are live.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        let inner = self.inner.read();
        inner.slots.len() - inner.free.len()
    }

    /// How many slots exist (live or free): the table's memory.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.inner.read().slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_and_foreign_handles_are_refused_and_slots_are_reused() {
        let modules = HandleTable::new(Kind::Module);
        let functions = HandleTable::<u32>::new(Kind::Function);
        let a = modules.insert(1u32).unwrap();
        assert_ne!(a, 0);
        assert_eq!(modules.get(a), Some(1));
        assert_eq!(
            functions.get(a),
            None,
            "a module handle is not a function handle"
        );
        assert_eq!(modules.remove(a), Some(1));
        assert_eq!(modules.get(a), None, "stale after removal");
        assert_eq!(modules.remove(a), None, "double removal");
        let b = modules.insert(2).unwrap();
        assert_ne!(a, b, "the reused slot has a new generation");
        assert_eq!(modules.get(a), None);
        assert_eq!(modules.get(b), Some(2));
        assert_eq!(modules.capacity(), 1);
        assert_eq!(modules.get(0), None);
        assert_eq!(modules.get(u64::MAX), None);
    }

    #[test]
    fn a_churn_of_100000_handles_keeps_one_slot() {
        let table = HandleTable::new(Kind::FatBinary);
        for i in 0..100_000u64 {
            let h = table.insert(i).unwrap();
            assert_eq!(table.remove(h), Some(i));
        }
        assert_eq!(table.len(), 0);
        assert_eq!(table.capacity(), 1);
    }
}
