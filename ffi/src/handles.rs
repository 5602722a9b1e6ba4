//! Generational handle tables: every opaque handle a C ABI of rocload gives its callers
//! (`librocload.so`'s modules, functions, streams, events, contexts, hiprtc programs;
//! `libhsa_soft.so`'s executables, readers, symbols) comes from a [`HandleTable`], so a stale
//! handle is recognised, never dereferenced and never aliases a newer object, and freed slots
//! are reused, so memory returns to its starting level after any create/destroy loop.
//!
//! A handle is a 64-bit value: an 8-bit kind [`Tag`] (so a module handle never passes for a
//! function handle), a 32-bit generation (bumped each time the slot is freed) and a 24-bit slot
//! index. It is never 0 (NULL: tags are non-zero) and is not an address. A stale handle would
//! alias only after its slot was reused 2^32 times.
//!
//! Not for the objects themselves: the libraries own those; a table holds clones of `Arc`s or
//! ids.

use parking_lot::RwLock;

const INDEX_BITS: u32 = 24;
const GENERATION_BITS: u32 = 32;
const MAX_SLOTS: usize = 1 << INDEX_BITS;
/// Bits of a child handle's item index.
const CHILD_BITS: u32 = 24;

/// What a handle stands for: its tag, bits 56..64. Each library names its own kinds
/// (`Tag(0xA2)` for a module, ...); a handle of one kind never passes for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tag(pub u8);

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
    kind: Tag,
    inner: RwLock<Slots<T>>,
}

impl<T: Clone> HandleTable<T> {
    /// An empty table handing out handles of `kind`.
    pub const fn new(kind: Tag) -> Self {
        HandleTable {
            kind,
            inner: RwLock::new(Slots {
                slots: Vec::new(),
                free: Vec::new(),
            }),
        }
    }

    fn encode(&self, index: u32, generation: u32) -> u64 {
        (u64::from(self.kind.0) << (INDEX_BITS + GENERATION_BITS))
            | (u64::from(generation) << INDEX_BITS)
            | u64::from(index)
    }

    /// The slot index and generation `handle` names, if it carries this table's tag.
    fn decode(&self, handle: u64) -> Option<(usize, u32)> {
        let tag = (handle >> (INDEX_BITS + GENERATION_BITS)) as u8;
        if tag != self.kind.0 {
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
    pub fn len(&self) -> usize {
        let inner = self.inner.read();
        inner.slots.len() - inner.free.len()
    }

    /// Whether no handle is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every live handle and its value.
    pub fn entries(&self) -> Vec<(u64, T)> {
        let inner = self.inner.read();
        inner
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((self.encode(i as u32, s.generation), s.value.clone()?)))
            .collect()
    }

    /// Removes every value (at shutdown); every handle is stale from now on.
    pub fn clear(&self) {
        let mut inner = self.inner.write();
        let Slots { slots, free } = &mut *inner;
        for (i, slot) in slots.iter_mut().enumerate() {
            if slot.value.take().is_some() {
                slot.generation = slot.generation.wrapping_add(1);
                free.push(i as u32);
            }
        }
    }

    /// A handle of kind `child` for item `index` of the object behind `parent` (a symbol of an
    /// executable): the parent's slot, the low 8 bits of its generation and `index` (below
    /// 2^24). `None` when `parent` is not live or `index` too large. [`child_of`] checks it
    /// against the parent's current generation, so a child handle goes stale with its parent
    /// (aliasing only after the parent's slot was reused a multiple of 256 times).
    ///
    /// [`child_of`]: HandleTable::child_of
    pub fn child(&self, parent: u64, child: Tag, index: usize) -> Option<u64> {
        let (slot, generation) = self.decode(parent)?;
        self.get(parent)?;
        let index = u64::try_from(index).ok().filter(|&i| i < 1 << CHILD_BITS)?;
        Some(
            (u64::from(child.0) << 56)
                | (u64::from(generation as u8) << 48)
                | ((slot as u64) << CHILD_BITS)
                | index,
        )
    }

    /// The parent's value and the item index a [`child`](HandleTable::child) handle of kind
    /// `child` names, if its parent is still the one it was made for.
    pub fn child_of(&self, handle: u64, child: Tag) -> Option<(u64, T, usize)> {
        if (handle >> 56) as u8 != child.0 {
            return None;
        }
        let slot = ((handle >> CHILD_BITS) & ((1 << INDEX_BITS) - 1)) as usize;
        let generation8 = (handle >> 48) as u8;
        let index = (handle & ((1 << CHILD_BITS) - 1)) as usize;
        let inner = self.inner.read();
        let s = inner.slots.get(slot)?;
        if s.generation as u8 != generation8 {
            return None;
        }
        let value = s.value.clone()?;
        Some((self.encode(slot as u32, s.generation), value, index))
    }

    /// How many slots exist (live or free): the table's memory.
    pub fn capacity(&self) -> usize {
        self.inner.read().slots.len()
    }
}

/// A handle for an object that lives as long as the library (an agent, an ISA, a memory pool):
/// the tag, then a 56-bit value. Not generational: such objects are never freed.
pub fn fixed(tag: Tag, value: u64) -> u64 {
    (u64::from(tag.0) << 56) | (value & ((1 << 56) - 1))
}

/// The value of a [`fixed`] handle of kind `tag`, or `None` for anything else.
pub fn fixed_value(tag: Tag, handle: u64) -> Option<u64> {
    ((handle >> 56) as u8 == tag.0).then_some(handle & ((1 << 56) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_and_foreign_handles_are_refused_and_slots_are_reused() {
        let modules = HandleTable::new(Tag(0xA2));
        let functions = HandleTable::<u32>::new(Tag(0xC3));
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
        let table = HandleTable::new(Tag(0xF1));
        for i in 0..100_000u64 {
            let h = table.insert(i).unwrap();
            assert_eq!(table.remove(h), Some(i));
        }
        assert_eq!(table.len(), 0);
        assert_eq!(table.capacity(), 1);
    }

    #[test]
    fn fixed_handles_carry_their_kind() {
        let h = fixed(Tag(0xA6), 3);
        assert_eq!(fixed_value(Tag(0xA6), h), Some(3));
        assert_eq!(fixed_value(Tag(0x15), h), None);
        assert_eq!(fixed_value(Tag(0xA6), 0), None);
    }

    #[test]
    fn child_handles_go_stale_with_their_parent() {
        const EXEC: Tag = Tag(0xE8);
        const SYMBOL: Tag = Tag(0x5B);
        let table = HandleTable::new(EXEC);
        let e = table.insert("exec").unwrap();
        let s = table.child(e, SYMBOL, 7).unwrap();
        assert_eq!(table.child_of(s, SYMBOL), Some((e, "exec", 7)));
        assert_eq!(table.child_of(s, Tag(0x1C)), None, "another kind of child");
        assert_eq!(table.child(e, SYMBOL, 1 << 24), None);
        table.remove(e);
        assert_eq!(table.child_of(s, SYMBOL), None, "stale with its parent");
        assert_eq!(table.child(e, SYMBOL, 0), None);
        let e2 = table.insert("next").unwrap();
        assert_eq!(table.child_of(s, SYMBOL), None, "not the new executable's");
        assert!(table
            .child_of(table.child(e2, SYMBOL, 7).unwrap(), SYMBOL)
            .is_some());
        table.clear();
        assert!(table.is_empty());
        assert_eq!(table.get(e2), None);
    }
}
