//! Guest memory: the trait through which the emulator reaches global memory (and flat accesses
//! outside the LDS and private apertures), and the helpers that load, store and update through
//! the host pointers it hands out.
//!
//! Every global, flat, buffer (non-scratch) and scalar-memory access asks
//! [`GuestMemory::translate`] first; a refusal becomes a typed fault carrying the
//! implementation's own payload untouched. Loads and stores through the returned pointer are
//! relaxed atomics (plain moves on x86), so workgroups running on several host threads never
//! race in Rust's sense, and guest atomics are host atomics. Not for LDS or scratch, which the
//! emulator keeps itself ([`crate::lds`], [`crate::scratch`]).

use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// What an access is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// A load.
    Read,
    /// A store.
    Write,
    /// A read-modify-write (guest atomics): needs read and write permission.
    Atomic,
    /// An instruction fetch: the bytes must have been loaded as code.
    Execute,
}

impl Access {
    /// Whether the access writes.
    pub fn writes(self) -> bool {
        matches!(self, Access::Write | Access::Atomic)
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Atomic => "atomic",
            Access::Execute => "instruction fetch",
        })
    }
}

/// The memory a dispatch may touch, as the embedder sees it.
///
/// # Safety
/// A pointer returned by [`translate`](GuestMemory::translate) for `(address, len, access)`
/// must be valid for reads of `len` bytes (and for writes when `access.writes()`) until the
/// dispatch that asked for it ends. Other threads may access the same bytes concurrently: the
/// emulator only touches them with atomic operations, so the embedder must not hand out memory
/// that safe Rust code elsewhere holds as `&mut`.
pub unsafe trait GuestMemory: Sync {
    /// Why an access was refused (for rocload: the allocation-table violation, which names
    /// the allocation). The emulator passes it through untouched inside its fault.
    type Fault: fmt::Debug + Send + 'static;

    /// The host address of guest bytes `[address, address + len)`, or why the dispatch may not
    /// access them. `len` is at most 16 and never 0.
    ///
    /// # Errors
    /// The embedder's fault payload.
    fn translate(&self, address: u64, len: u64, access: Access)
        -> Result<NonNull<u8>, Self::Fault>;

    /// Optional fast path: the whole range around `address` that [`translate`] would approve
    /// for `access`, so the emulator can check the other lanes of an instruction against it
    /// without asking again. Whatever it returns must stay valid, as translated pointers do,
    /// until the dispatch ends. The default (`None`) means "ask `translate` for every access".
    ///
    /// [`translate`]: GuestMemory::translate
    fn span(&self, _address: u64, _access: Access) -> Option<Span> {
        None
    }

    /// A memory fence of the given scope (`s_waitcnt` after a release, `buffer_gl*_inv`): the
    /// default is a host sequentially-consistent fence, which orders everything this emulator
    /// does through [`translate`](GuestMemory::translate)'d pointers.
    fn fence(&self) {
        std::sync::atomic::fence(Ordering::SeqCst);
    }
}

/// A range of guest memory and where it is on the host (see [`GuestMemory::span`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First guest address.
    pub start: u64,
    /// Bytes.
    pub len: u64,
    /// Host address of `start`.
    pub host: NonNull<u8>,
}

impl Span {
    /// The host address of `[address, address + len)` if the span holds all of it.
    #[inline(always)]
    pub fn get(&self, address: u64, len: u64) -> Option<NonNull<u8>> {
        let off = address.checked_sub(self.start)?;
        if off.checked_add(len)? > self.len {
            return None;
        }
        // SAFETY: off + len <= self.len, so the result stays inside the span's host range.
        Some(unsafe { self.host.add(off as usize) })
    }
}

/// Loads `N` bytes from `p` with relaxed atomic loads (whole words when aligned).
///
/// # Safety
/// `p` must be valid for reads of `N` bytes (a pointer from [`GuestMemory::translate`] or into
/// memory the emulator owns).
pub(crate) unsafe fn load<const N: usize>(p: NonNull<u8>) -> [u8; N] {
    let mut out = [0u8; N];
    let p = p.as_ptr();
    let addr = p as usize;
    if N % 4 == 0 && addr % 4 == 0 {
        for i in 0..N / 4 {
            // SAFETY: in bounds (i*4+4 <= N) and 4-aligned; the caller guarantees validity, and
            // every emulator access to guest memory is atomic.
            let v =
                unsafe { AtomicU32::from_ptr(p.add(i * 4).cast::<u32>()) }.load(Ordering::Relaxed);
            out[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
    } else if N == 2 && addr % 2 == 0 {
        // SAFETY: 2 bytes, 2-aligned, valid per the caller.
        let v = unsafe { AtomicU16::from_ptr(p.cast::<u16>()) }.load(Ordering::Relaxed);
        out[..2].copy_from_slice(&v.to_le_bytes());
    } else {
        for (i, b) in out.iter_mut().enumerate() {
            // SAFETY: in bounds (i < N); bytes need no alignment.
            *b = unsafe { AtomicU8::from_ptr(p.add(i)) }.load(Ordering::Relaxed);
        }
    }
    out
}

/// Stores `bytes` at `p` with relaxed atomic stores (whole words when aligned).
///
/// # Safety
/// `p` must be valid for writes of `bytes.len()` bytes.
pub(crate) unsafe fn store(p: NonNull<u8>, bytes: &[u8]) {
    let p = p.as_ptr();
    let addr = p as usize;
    if bytes.len() % 4 == 0 && addr % 4 == 0 {
        for (i, w) in bytes.chunks_exact(4).enumerate() {
            let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            // SAFETY: in bounds and 4-aligned; valid for writes per the caller.
            unsafe { AtomicU32::from_ptr(p.add(i * 4).cast::<u32>()) }.store(v, Ordering::Relaxed);
        }
    } else if bytes.len() == 2 && addr % 2 == 0 {
        // SAFETY: 2 bytes, 2-aligned, valid per the caller.
        unsafe { AtomicU16::from_ptr(p.cast::<u16>()) }
            .store(u16::from_le_bytes([bytes[0], bytes[1]]), Ordering::Relaxed);
    } else {
        for (i, b) in bytes.iter().enumerate() {
            // SAFETY: in bounds; bytes need no alignment.
            unsafe { AtomicU8::from_ptr(p.add(i)) }.store(*b, Ordering::Relaxed);
        }
    }
}

/// A guest read-modify-write on 32 bits: `f(old)` gives the new value (or `None` to leave
/// memory unchanged, as a failed compare-swap does); returns the old value. Lock-free compare
/// and swap on the host word, so it is atomic against every other host thread.
///
/// # Safety
/// `p` must be valid for reads and writes of 4 bytes.
pub(crate) unsafe fn rmw32(p: NonNull<u8>, mut f: impl FnMut(u32) -> Option<u32>) -> u32 {
    if p.as_ptr() as usize % 4 != 0 {
        // Misaligned atomics are not atomic on the GPU either: do it bytewise.
        // SAFETY: valid for 4 bytes per the caller.
        let old = u32::from_le_bytes(unsafe { load::<4>(p) });
        if let Some(new) = f(old) {
            // SAFETY: as above.
            unsafe { store(p, &new.to_le_bytes()) };
        }
        return old;
    }
    // SAFETY: 4-aligned and valid per the caller; all emulator accesses are atomic.
    let a = unsafe { AtomicU32::from_ptr(p.as_ptr().cast::<u32>()) };
    let mut old = a.load(Ordering::Relaxed);
    loop {
        let Some(new) = f(old) else { return old };
        match a.compare_exchange_weak(old, new, Ordering::SeqCst, Ordering::Relaxed) {
            Ok(_) => return old,
            Err(now) => old = now,
        }
    }
}

/// [`rmw32`] on 64 bits.
///
/// # Safety
/// `p` must be valid for reads and writes of 8 bytes.
pub(crate) unsafe fn rmw64(p: NonNull<u8>, mut f: impl FnMut(u64) -> Option<u64>) -> u64 {
    if p.as_ptr() as usize % 8 != 0 {
        // SAFETY: valid for 8 bytes per the caller.
        let old = u64::from_le_bytes(unsafe { load::<8>(p) });
        if let Some(new) = f(old) {
            // SAFETY: as above.
            unsafe { store(p, &new.to_le_bytes()) };
        }
        return old;
    }
    // SAFETY: 8-aligned and valid per the caller; all emulator accesses are atomic.
    let a = unsafe { AtomicU64::from_ptr(p.as_ptr().cast::<u64>()) };
    let mut old = a.load(Ordering::Relaxed);
    loop {
        let Some(new) = f(old) else { return old };
        match a.compare_exchange_weak(old, new, Ordering::SeqCst, Ordering::Relaxed) {
            Ok(_) => return old,
            Err(now) => old = now,
        }
    }
}

/// A simple guest memory for tests, examples and benchmarks: a few host-owned regions at
/// chosen guest addresses. Every access outside them is refused with [`FlatFault`].
#[derive(Debug, Default)]
pub struct FlatMemory {
    regions: Vec<Region>,
}

#[derive(Debug)]
struct Region {
    guest: u64,
    // u64 storage so the host buffer is 8-aligned like the guest addresses usually are.
    host: Box<[AtomicU64]>,
    len: u64,
    writable: bool,
}

/// Why [`FlatMemory`] refused an access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatFault {
    /// First byte.
    pub address: u64,
    /// Bytes.
    pub len: u64,
    /// What was attempted.
    pub access: Access,
}

impl fmt::Display for FlatFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} bytes at {:#x} outside every region",
            self.access, self.len, self.address
        )
    }
}

impl FlatMemory {
    /// No regions.
    pub fn new() -> Self {
        FlatMemory::default()
    }

    /// Adds a zeroed region of `len` bytes at `guest`.
    ///
    /// # Errors
    /// A description when it overlaps another region, wraps around, or is larger than 1 GiB.
    pub fn map(&mut self, guest: u64, len: u64, writable: bool) -> Result<(), String> {
        let end = guest
            .checked_add(len)
            .ok_or_else(|| format!("{guest:#x}+{len} wraps"))?;
        if len > 1 << 30 {
            return Err(format!("region of {len} bytes is over the 1 GiB cap"));
        }
        if let Some(r) = self
            .regions
            .iter()
            .find(|r| r.guest < end && guest < r.guest + r.len)
        {
            return Err(format!(
                "{guest:#x}+{len} overlaps the region at {:#x}",
                r.guest
            ));
        }
        let words = usize::try_from(len.div_ceil(8)).map_err(|e| e.to_string())?;
        let host: Box<[AtomicU64]> = (0..words).map(|_| AtomicU64::new(0)).collect();
        self.regions.push(Region {
            guest,
            host,
            len,
            writable,
        });
        Ok(())
    }

    fn find(&self, address: u64, len: u64) -> Option<(&Region, usize)> {
        let r = self.regions.iter().find(|r| {
            address >= r.guest
                && address
                    .checked_add(len)
                    .is_some_and(|e| e <= r.guest + r.len)
        })?;
        Some((r, usize::try_from(address - r.guest).ok()?))
    }

    /// Copies `bytes` into guest memory at `address` (host-side set-up; ignores write
    /// protection).
    ///
    /// # Errors
    /// The fault when the range is not inside one region.
    pub fn write_bytes(&self, address: u64, bytes: &[u8]) -> Result<(), FlatFault> {
        let len = bytes.len() as u64;
        let fault = FlatFault {
            address,
            len,
            access: Access::Write,
        };
        let (r, off) = self.find(address, len).ok_or(fault)?;
        let base = r.host.as_ptr().cast::<u8>().cast_mut();
        // SAFETY: off + len <= region length <= the buffer's bytes; the buffer is made of atomics.
        let p = unsafe { NonNull::new_unchecked(base.add(off)) };
        // SAFETY: in bounds as above.
        unsafe { store(p, bytes) };
        Ok(())
    }

    /// Reads `len` bytes of guest memory at `address`.
    ///
    /// # Errors
    /// The fault when the range is not inside one region.
    pub fn read_bytes(&self, address: u64, len: usize) -> Result<Vec<u8>, FlatFault> {
        let fault = FlatFault {
            address,
            len: len as u64,
            access: Access::Read,
        };
        let (r, off) = self.find(address, len as u64).ok_or(fault)?;
        let base = r.host.as_ptr().cast::<u8>();
        let mut out = Vec::with_capacity(len);
        for i in 0..len {
            // SAFETY: off + i < region length; the storage is atomics.
            out.push(
                unsafe { AtomicU8::from_ptr(base.add(off + i).cast_mut()) }.load(Ordering::Relaxed),
            );
        }
        Ok(out)
    }
}

// SAFETY: pointers point into `Box<[AtomicU64]>` storage owned by `self`, never reallocated
// while `&self` lives, and only ever accessed atomically.
unsafe impl GuestMemory for FlatMemory {
    type Fault = FlatFault;

    fn translate(&self, address: u64, len: u64, access: Access) -> Result<NonNull<u8>, FlatFault> {
        let fault = FlatFault {
            address,
            len,
            access,
        };
        let (r, off) = self.find(address, len).ok_or(fault.clone())?;
        if access.writes() && !r.writable {
            return Err(fault);
        }
        let base = r.host.as_ptr().cast::<u8>().cast_mut();
        // SAFETY: off < region length <= the buffer's size in bytes.
        Ok(unsafe { NonNull::new_unchecked(base.add(off)) })
    }

    fn span(&self, address: u64, access: Access) -> Option<Span> {
        let (r, _) = self.find(address, 1)?;
        if access.writes() && !r.writable {
            return None;
        }
        let host = NonNull::new(r.host.as_ptr().cast::<u8>().cast_mut())?;
        Some(Span {
            start: r.guest,
            len: r.len,
            host,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_memory_refuses_outside_and_read_only() {
        let mut m = FlatMemory::new();
        m.map(0x1000, 16, true).unwrap();
        m.map(0x2000, 8, false).unwrap();
        assert!(m.translate(0x1000, 16, Access::Read).is_ok());
        assert!(
            m.translate(0x100c, 8, Access::Read).is_err(),
            "runs past the end"
        );
        assert!(m.translate(0x2000, 4, Access::Write).is_err(), "read-only");
        assert!(m.translate(0x2000, 4, Access::Read).is_ok());
        assert!(m.map(0x100f, 4, true).is_err(), "overlap");
        assert!(m.map(u64::MAX - 2, 4, true).is_err(), "wraps");
    }

    #[test]
    fn loads_and_stores_round_trip_aligned_and_not() {
        let mut m = FlatMemory::new();
        m.map(0x1000, 64, true).unwrap();
        for (addr, bytes) in [
            (0x1000u64, &[1u8, 2, 3, 4, 5, 6, 7, 8][..]),
            (0x1011, &[9, 10, 11]),
            (0x1021, &[1, 2, 3, 4]),
        ] {
            let p = m
                .translate(addr, bytes.len() as u64, Access::Write)
                .unwrap();
            // SAFETY: translated for this length.
            unsafe { store(p, bytes) };
            assert_eq!(m.read_bytes(addr, bytes.len()).unwrap(), bytes);
        }
        let p = m.translate(0x1021, 4, Access::Read).unwrap();
        // SAFETY: translated for 4 bytes.
        assert_eq!(unsafe { load::<4>(p) }, [1, 2, 3, 4]);
    }

    #[test]
    fn rmw_is_atomic_across_threads() {
        let mut m = FlatMemory::new();
        m.map(0x1000, 16, true).unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        let p = m.translate(0x1000, 4, Access::Atomic).unwrap();
                        // SAFETY: translated for 4 bytes.
                        unsafe { rmw32(p, |v| Some(v.wrapping_add(1))) };
                        let p = m.translate(0x1008, 8, Access::Atomic).unwrap();
                        // SAFETY: translated for 8 bytes.
                        unsafe { rmw64(p, |v| Some(v.wrapping_add(3))) };
                    }
                });
            }
        });
        assert_eq!(m.read_bytes(0x1000, 4).unwrap(), 40_000u32.to_le_bytes());
        assert_eq!(m.read_bytes(0x1008, 8).unwrap(), 120_000u64.to_le_bytes());
    }
}
