//! [`SharedBytes`]: immutable bytes shared between owners without copying them.
//!
//! Code objects and fat binaries are large (an inflated entry can be hundreds of megabytes),
//! so the buffer a decoder fills is the buffer every module keeps: a `Vec<u8>` moves in as it
//! is (`Arc::<[u8]>::from(vec)` would copy it), bytes that live for the whole program are
//! borrowed, and a sub-range shares its parent's allocation. The only copy offered,
//! [`SharedBytes::try_copy_from_slice`], reserves fallibly. Not for parsing (see `bytes`).

use std::ops::{Deref, Range};
use std::sync::Arc;

/// Immutable bytes, cheap to clone and to slice, `Send + Sync`.
#[derive(Clone)]
pub struct SharedBytes {
    owner: Owner,
    range: Range<usize>,
}

#[derive(Clone)]
enum Owner {
    Vec(Arc<Vec<u8>>),
    Slice(Arc<[u8]>),
    Static(&'static [u8]),
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SharedBytes>();
};

impl SharedBytes {
    /// A copy of `data` in a new allocation, or `None` when the memory cannot be reserved
    /// (never aborts).
    pub fn try_copy_from_slice(data: &[u8]) -> Option<SharedBytes> {
        let mut v = Vec::new();
        v.try_reserve_exact(data.len()).ok()?;
        v.extend_from_slice(data);
        Some(SharedBytes::from(v))
    }

    /// The bytes `range` of these bytes, sharing the allocation; `None` when out of bounds.
    pub fn slice(&self, range: Range<usize>) -> Option<SharedBytes> {
        let start = self.range.start.checked_add(range.start)?;
        let end = self.range.start.checked_add(range.end)?;
        (start <= end && end <= self.range.end).then(|| SharedBytes {
            owner: self.owner.clone(),
            range: start..end,
        })
    }

    /// Whether both share one allocation (for tests and statistics).
    pub fn same_allocation(&self, other: &SharedBytes) -> bool {
        match (&self.owner, &other.owner) {
            (Owner::Vec(a), Owner::Vec(b)) => Arc::ptr_eq(a, b),
            (Owner::Slice(a), Owner::Slice(b)) => Arc::ptr_eq(a, b),
            (Owner::Static(a), Owner::Static(b)) => std::ptr::eq(a.as_ptr(), b.as_ptr()),
            _ => false,
        }
    }

    fn whole(&self) -> &[u8] {
        match &self.owner {
            Owner::Vec(v) => v,
            Owner::Slice(s) => s,
            Owner::Static(s) => s,
        }
    }
}

impl Deref for SharedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // The range is checked against the owner when it is made and the owner never changes.
        self.whole().get(self.range.clone()).unwrap_or(&[])
    }
}

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SharedBytes({} bytes at {:p})",
            self.len(),
            self.as_ptr()
        )
    }
}

impl PartialEq for SharedBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for SharedBytes {}

impl From<Vec<u8>> for SharedBytes {
    /// Moves the vector in: no copy.
    fn from(v: Vec<u8>) -> Self {
        SharedBytes {
            range: 0..v.len(),
            owner: Owner::Vec(Arc::new(v)),
        }
    }
}

impl From<Arc<[u8]>> for SharedBytes {
    fn from(s: Arc<[u8]>) -> Self {
        SharedBytes {
            range: 0..s.len(),
            owner: Owner::Slice(s),
        }
    }
}

impl From<&'static [u8]> for SharedBytes {
    /// Borrows bytes that live for the whole program: no copy.
    fn from(s: &'static [u8]) -> Self {
        SharedBytes {
            range: 0..s.len(),
            owner: Owner::Static(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_move_in_and_slices_share() {
        let v = vec![1u8, 2, 3, 4, 5];
        let ptr = v.as_ptr();
        let b = SharedBytes::from(v);
        assert_eq!(b.as_ptr(), ptr, "no copy");
        let s = b.slice(1..4).unwrap();
        assert_eq!(&*s, &[2, 3, 4]);
        assert!(s.same_allocation(&b));
        assert_eq!(&*s.slice(1..2).unwrap(), &[3]);
        assert!(s.slice(2..4).is_none());
        let (start, end) = (usize::MAX, 1);
        assert!(b.slice(start..end).is_none());
        let c = SharedBytes::try_copy_from_slice(&b).unwrap();
        assert_eq!(c, b);
        assert!(!c.same_allocation(&b));
    }
}
