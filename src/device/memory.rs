//! The allocation table of a device: every range of guest memory a kernel may touch (device
//! allocations, pinned and registered host memory, managed memory, loaded code objects,
//! kernarg segments, queues, hostcall buffers), looked up by any address inside it.
//!
//! It answers "which allocation holds this address" (interior pointers, as `hipMemcpy` and
//! `hipPointerGetAttributes` need) and "may this access happen" (the memory checker: every
//! emulator access is checked against it). Recently freed allocations are remembered, so a
//! use-after-free is reported with the allocation it hit (the software device also keeps freed
//! memory in quarantine for a while, so the address is not reused at once). A memory pool's
//! block that the program freed in stream order is *parked*: still the device's memory, out of
//! every kernel's and copy's reach, reported as freed until the pool hands it out again
//! ([`AllocationTable::park`], [`AllocationTable::revive`]). Not for allocating memory (the
//! device does) or for the emulator's LDS and scratch, which it keeps itself.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

/// What a range of guest memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemoryKind {
    /// `hipMalloc`: device memory.
    Device,
    /// `hipHostMalloc`: pinned host memory the device can reach.
    PinnedHost,
    /// `hipHostRegister`: the caller's host memory, registered.
    RegisteredHost,
    /// `hipMallocManaged` and `__managed__` variables.
    Managed,
    /// A loaded code object (code, read-only data, device variables).
    CodeObject,
    /// A launch's kernarg segment.
    Kernarg,
    /// A queue's ring buffer and descriptor.
    Queue,
    /// The hostcall buffer device `printf` writes to.
    Hostcall,
    /// The heap of device `malloc`.
    Heap,
    /// The storage of a HIP array (`hipMallocArray`, `hipArrayCreate`, mipmapped arrays):
    /// device memory the runtime lays out (`runtime::array`), freed only as an array.
    Array,
    /// Physical memory mapped at a reserved address (`hipMemMap`), entered by
    /// `hipMemSetAccess` with the access it gave this device.
    Mapped,
    /// Device memory of another process (or of this one), opened from an IPC handle
    /// (`hipIpcOpenMemHandle`).
    Imported,
    /// A buffer mapped from memory another API exported (`hipImportExternalMemory`,
    /// `hipExternalMemoryGetMappedBuffer`), freed with `hipFree`.
    External,
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryKind::Device => "device memory",
            MemoryKind::PinnedHost => "pinned host memory",
            MemoryKind::RegisteredHost => "registered host memory",
            MemoryKind::Managed => "managed memory",
            MemoryKind::CodeObject => "code object",
            MemoryKind::Kernarg => "kernarg segment",
            MemoryKind::Queue => "queue",
            MemoryKind::Hostcall => "hostcall buffer",
            MemoryKind::Heap => "device heap",
            MemoryKind::Array => "array storage",
            MemoryKind::Mapped => "mapped device memory",
            MemoryKind::Imported => "device memory opened from an IPC handle",
            MemoryKind::External => "a buffer mapped from external memory",
        })
    }
}

/// What a kernel does to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// A load.
    Read,
    /// A store or an atomic.
    Write,
    /// An instruction fetch.
    Execute,
}

impl AccessKind {
    /// `Write` when `write`, else `Read` (copies and data accesses).
    pub fn data(write: bool) -> AccessKind {
        if write {
            AccessKind::Write
        } else {
            AccessKind::Read
        }
    }
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Execute => "instruction fetch",
        })
    }
}

/// What kernels may do with a range: as a GPU maps it. Code executes only where a code object
/// was loaded as code, and what is loaded read-only (code, kernel descriptors, constants) is
/// not writable by kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Perms {
    /// Loads.
    pub read: bool,
    /// Stores and atomics.
    pub write: bool,
    /// Instruction fetches.
    pub execute: bool,
}

impl Perms {
    /// Read-only data (kernarg segments, queues, a code object's read-only segment).
    pub const R: Perms = Perms {
        read: true,
        write: false,
        execute: false,
    };
    /// Data (device memory, a code object's variables).
    pub const RW: Perms = Perms {
        read: true,
        write: true,
        execute: false,
    };
    /// Code.
    pub const RX: Perms = Perms {
        read: true,
        write: false,
        execute: true,
    };

    /// Whether `access` is allowed.
    pub fn allows(self, access: AccessKind) -> bool {
        match access {
            AccessKind::Read => self.read,
            AccessKind::Write => self.write,
            AccessKind::Execute => self.execute,
        }
    }
}

impl fmt::Display for Perms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flag = |on, c| if on { c } else { '-' };
        write!(
            f,
            "{}{}{}",
            flag(self.read, 'r'),
            flag(self.write, 'w'),
            flag(self.execute, 'x')
        )
    }
}

/// A part of an allocation with permissions of its own: a loaded code object's `PT_LOAD`
/// segments (code, read-only data, variables). Bytes of the allocation outside every segment
/// (padding between them) are not accessible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Offset from the allocation's base.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// What kernels may do there.
    pub perms: Perms,
}

/// One range of guest memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// Serial number in its table (1, 2, ...), for reports.
    pub id: u64,
    /// First address.
    pub base: u64,
    /// Bytes.
    pub size: u64,
    /// What it is.
    pub kind: MemoryKind,
    /// Whether kernels may write it (kernarg segments and queues: no). Where `segments` is
    /// set, they decide instead.
    pub writable: bool,
    /// Permissions by part, for a loaded code object (set once it is loaded).
    pub segments: Option<Arc<[Segment]>>,
    /// Where its bytes are on the host, when that is not `base`: an alias of host memory at
    /// another address (the software HSA library's locked memory, which ROCr maps for the
    /// GPU at an address of its own). `None`: at `base`.
    pub host: Option<u64>,
}

impl Allocation {
    /// The range around `[address, address + len)` with one set of permissions, and those
    /// permissions: the segment holding it, or the whole allocation. `None` when the access
    /// is not inside (runs past the end, or straddles or misses the segments).
    pub fn region(&self, address: u64, len: u64) -> Option<(u64, u64, Perms)> {
        if !self.contains(address, len) {
            return None;
        }
        match &self.segments {
            None => Some((
                self.base,
                self.size,
                Perms {
                    read: true,
                    write: self.writable,
                    execute: false,
                },
            )),
            Some(segments) => segments.iter().find_map(|s| {
                let start = self.base.checked_add(s.offset)?;
                let end = start.checked_add(s.size)?;
                (address >= start && address.checked_add(len)? <= end)
                    .then_some((start, s.size, s.perms))
            }),
        }
    }

    /// The host address of the allocation's byte at `address` (inside it).
    pub fn host_address(&self, address: u64) -> u64 {
        match self.host {
            Some(host) => host.wrapping_add(address.wrapping_sub(self.base)),
            None => address,
        }
    }

    /// One past the last address.
    pub fn end(&self) -> u64 {
        self.base.saturating_add(self.size)
    }

    /// Whether `[address, address + len)` lies inside.
    pub fn contains(&self, address: u64, len: u64) -> bool {
        address >= self.base
            && address
                .checked_add(len)
                .is_some_and(|end| end <= self.end())
    }
}

impl fmt::Display for Allocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "allocation #{} ({}, {} bytes at {:#x})",
            self.id, self.kind, self.size, self.base
        )
    }
}

/// Why an access may not happen, with the allocation closest to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessViolation {
    /// First address of the access.
    pub address: u64,
    /// Bytes accessed.
    pub len: u64,
    /// What was attempted.
    pub access: AccessKind,
    /// What went wrong.
    pub reason: ViolationReason,
}

/// The kinds of [`AccessViolation`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViolationReason {
    /// The access starts inside an allocation and runs past its end.
    PastEnd(Allocation),
    /// The address is in no live allocation; the nearest one (live or freed) is given.
    Unmapped {
        /// The nearest live allocation, with the distance from it.
        nearest: Option<(Allocation, i128)>,
    },
    /// The address is in an allocation that was freed (and is still remembered).
    Freed(Allocation),
    /// A write to read-only memory (a kernarg segment, a queue, a code object's code and
    /// read-only data).
    ReadOnly(Allocation),
    /// An instruction fetch from memory not loaded as code (data, a kernarg segment, a
    /// code object's data).
    NotCode(Allocation),
    /// An access inside a code object's image but outside its loaded segments, or straddling
    /// two of them.
    OutsideSegments(Allocation),
    /// Registered host memory whose pages the program unmapped without unregistering them
    /// (a GPU would still reach the pages it pinned; here they are gone).
    HostUnmapped(Allocation),
}

impl fmt::Display for AccessViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} bytes at {:#x}: ",
            self.access, self.len, self.address
        )?;
        match &self.reason {
            ViolationReason::PastEnd(a) => write!(
                f,
                "runs {} bytes past the end of {a}",
                (self.address + self.len).saturating_sub(a.end())
            ),
            ViolationReason::Freed(a) => write!(f, "use after free of {a}"),
            ViolationReason::ReadOnly(a) => write!(f, "{a} is read-only for kernels"),
            ViolationReason::NotCode(a) => write!(f, "{a} was not loaded as code"),
            ViolationReason::OutsideSegments(a) => {
                write!(f, "outside the loaded segments of {a}")
            }
            ViolationReason::HostUnmapped(a) => write!(
                f,
                "the program unmapped the host pages of {a} without unregistering them"
            ),
            ViolationReason::Unmapped { nearest: None } => write!(f, "no allocation there"),
            ViolationReason::Unmapped {
                nearest: Some((a, d)),
            } if *d >= 0 => write!(f, "not allocated; {d} bytes after the end of {a}"),
            ViolationReason::Unmapped {
                nearest: Some((a, d)),
            } => write!(f, "not allocated; {} bytes before {a}", -d),
        }
    }
}

/// How many freed allocations are remembered for reports.
const FREED_REMEMBERED: usize = 4096;

/// Every live range of a device's guest memory.
#[derive(Debug, Default)]
pub struct AllocationTable {
    live: RwLock<BTreeMap<u64, Allocation>>,
    /// Pool blocks freed in stream order, still owned by the device (see [`park`](Self::park)).
    parked: Mutex<BTreeMap<u64, Allocation>>,
    freed: Mutex<VecDeque<Allocation>>,
    next_id: AtomicU64,
}

/// Two allocations would overlap.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{base:#x}+{size} overlaps {existing}")]
pub struct Overlap {
    /// The new range's start.
    pub base: u64,
    /// Its size.
    pub size: u64,
    /// The allocation it overlaps.
    pub existing: Allocation,
}

impl AllocationTable {
    /// An empty table.
    pub fn new() -> Self {
        AllocationTable::default()
    }

    /// Records a new range and returns it with its id.
    ///
    /// # Errors
    /// [`Overlap`] if it overlaps a live range (registering the same host memory twice).
    pub fn insert(
        &self,
        base: u64,
        size: u64,
        kind: MemoryKind,
        writable: bool,
    ) -> Result<Allocation, Overlap> {
        let mut live = self.live.write();
        let end = base.saturating_add(size.max(1));
        if let Some((_, a)) = live.range(..end).next_back() {
            if a.end() > base {
                return Err(Overlap {
                    base,
                    size,
                    existing: a.clone(),
                });
            }
        }
        let allocation = Allocation {
            id: self.next_id.fetch_add(1, Ordering::Relaxed) + 1,
            base,
            size,
            kind,
            writable,
            segments: None,
            host: None,
        };
        live.insert(base, allocation.clone());
        Ok(allocation)
    }

    /// As [`insert`](Self::insert), for a range whose bytes are the host's at `host` (an alias:
    /// accesses at `base + n` reach `host + n`).
    ///
    /// # Errors
    /// [`Overlap`] if it overlaps a live range.
    pub fn insert_alias(
        &self,
        base: u64,
        size: u64,
        kind: MemoryKind,
        writable: bool,
        host: u64,
    ) -> Result<Allocation, Overlap> {
        let mut live = self.live.write();
        let end = base.saturating_add(size.max(1));
        if let Some((_, a)) = live.range(..end).next_back() {
            if a.end() > base {
                return Err(Overlap {
                    base,
                    size,
                    existing: a.clone(),
                });
            }
        }
        let allocation = Allocation {
            id: self.next_id.fetch_add(1, Ordering::Relaxed) + 1,
            base,
            size,
            kind,
            writable,
            segments: None,
            host: (host != base).then_some(host),
        };
        live.insert(base, allocation.clone());
        Ok(allocation)
    }

    /// Records fresh memory the host allocator just handed out: as [`insert`](Self::insert),
    /// except that registered host memory overlapping it is forgotten first and returned. The
    /// host cannot hand out an address that is still mapped, so such a registration is stale:
    /// its owner unmapped the range without unregistering it (AMD's HIP runtime keeps pinned
    /// staging ranges cached after the program frees them; a GPU's registration would keep
    /// the old pages and never collide with new device memory).
    ///
    /// # Errors
    /// [`Overlap`] if it overlaps a live range of another kind.
    pub fn insert_fresh(
        &self,
        base: u64,
        size: u64,
        kind: MemoryKind,
        writable: bool,
    ) -> Result<(Allocation, Vec<Allocation>), Overlap> {
        let end = base.saturating_add(size.max(1));
        let mut stale = Vec::new();
        {
            let mut live = self.live.write();
            while let Some((&at, a)) = live.range(..end).next_back() {
                if a.end() <= base || a.kind != MemoryKind::RegisteredHost {
                    break;
                }
                if let Some(a) = live.remove(&at) {
                    stale.push(a);
                }
            }
        }
        for a in &stale {
            tracing::debug!(registration = %a, base, size, "stale host registration forgotten: the host reused its addresses");
        }
        self.insert(base, size, kind, writable)
            .map(|allocation| (allocation, stale))
    }

    /// Gives the live allocation at `base` permissions by part (a loaded code object's
    /// segments); `false` when there is none.
    pub fn set_segments(&self, base: u64, segments: Vec<Segment>) -> bool {
        match self.live.write().get_mut(&base) {
            Some(a) => {
                a.segments = Some(segments.into());
                true
            }
            None => false,
        }
    }

    /// Forgets the range starting exactly at `base`; when `remember`, it is kept in the list of
    /// freed allocations that use-after-free reports name (user allocations, not runtime-internal
    /// ranges that nothing can reach any more).
    ///
    /// A parked block (see [`park`](Self::park)) is removed too: its memory is being released.
    pub fn remove(&self, base: u64, remember: bool) -> Option<Allocation> {
        let live = self.live.write().remove(&base);
        let removed = match live {
            Some(a) => a,
            None => self.parked.lock().remove(&base)?,
        };
        if !remember {
            return Some(removed);
        }
        let mut freed = self.freed.lock();
        if freed.len() >= FREED_REMEMBERED {
            freed.pop_front();
        }
        freed.push_back(removed.clone());
        Some(removed)
    }

    /// Forgets a freed allocation starting at `base` (its memory went back to the host
    /// allocator, which may hand it out again as ordinary host memory).
    pub fn forget_freed(&self, base: u64) {
        self.freed.lock().retain(|a| a.base != base);
    }

    /// Takes the live allocation at `base` out of reach, if it is still allocation `id`: a pool
    /// block the program freed in stream order. The device keeps its memory; kernels and copies
    /// that touch it are refused as a use after free of that allocation until
    /// [`revive`](Self::revive) hands the block out again, and [`remove`](Self::remove)
    /// releases it. `false` when the allocation there is another one (the pool handed the block
    /// out again before the stream reached the free) or there is none.
    pub fn park(&self, base: u64, id: u64) -> bool {
        let mut live = self.live.write();
        if live.get(&base).is_none_or(|a| a.id != id) {
            return false;
        }
        let Some(allocation) = live.remove(&base) else {
            return false;
        };
        self.parked.lock().insert(base, allocation);
        true
    }

    /// Hands the pool block at `base` out again as a new allocation of `size` bytes of `kind`
    /// (the pool keeps `size` within the block): parked, or still live because the stream has
    /// not reached its free yet (that free then finds another allocation and leaves it alone).
    /// Bytes of the block past `size` are out of reach.
    pub fn revive(&self, base: u64, size: u64, kind: MemoryKind) -> Allocation {
        let mut live = self.live.write();
        live.remove(&base);
        self.parked.lock().remove(&base);
        let allocation = Allocation {
            id: self.next_id.fetch_add(1, Ordering::Relaxed) + 1,
            base,
            size,
            kind,
            writable: true,
            segments: None,
            host: None,
        };
        live.insert(base, allocation.clone());
        allocation
    }

    /// The parked block starting at `base` (see [`park`](Self::park)).
    pub fn parked(&self, base: u64) -> Option<Allocation> {
        self.parked.lock().get(&base).cloned()
    }

    /// The live allocation holding `address`.
    pub fn find(&self, address: u64) -> Option<Allocation> {
        let live = self.live.read();
        let (_, a) = live.range(..=address).next_back()?;
        (address < a.end() || (a.size == 0 && address == a.base)).then(|| a.clone())
    }

    /// Every live allocation that has a byte in `[start, end)`, in address order.
    pub fn overlapping(&self, start: u64, end: u64) -> Vec<Allocation> {
        let live = self.live.read();
        let mut found: Vec<Allocation> = live
            .range(..start)
            .next_back()
            .map(|(_, a)| a)
            .filter(|a| a.end() > start)
            .into_iter()
            .cloned()
            .collect();
        found.extend(live.range(start..end).map(|(_, a)| a.clone()));
        found
    }

    /// Checks an access of `len` bytes at `address`.
    ///
    /// # Errors
    /// An [`AccessViolation`] naming the allocation it hit or the nearest one.
    pub fn check(&self, address: u64, len: u64, access: AccessKind) -> Result<(), AccessViolation> {
        self.translate(address, len, access).map(|_| ())
    }

    /// As [`check`](Self::check), returning the host address of the bytes (`address` itself
    /// but for aliases, see [`insert_alias`](Self::insert_alias)).
    ///
    /// # Errors
    /// An [`AccessViolation`] naming the allocation it hit or the nearest one.
    pub fn translate(
        &self,
        address: u64,
        len: u64,
        access: AccessKind,
    ) -> Result<u64, AccessViolation> {
        self.translate_inspecting(address, len, access, |_| ())
            .map(|(host, ())| host)
    }

    /// [`translate`](Self::translate), also handing `inspect` the allocation the access lies
    /// in, in the same lookup (the memory checker asks more of some kinds of memory).
    ///
    /// # Errors
    /// An [`AccessViolation`] naming the allocation it hit or the nearest one.
    pub fn translate_inspecting<T>(
        &self,
        address: u64,
        len: u64,
        access: AccessKind,
        inspect: impl FnOnce(&Allocation) -> T,
    ) -> Result<(u64, T), AccessViolation> {
        {
            let live = self.live.read();
            if let Some((_, a)) = live.range(..=address).next_back() {
                if let Some((_, _, perms)) = a.region(address, len) {
                    if perms.allows(access) {
                        return Ok((a.host_address(address), inspect(a)));
                    }
                }
            }
        }
        Err(self.violation(address, len, access))
    }

    /// Why `base`, which is not the start of a live allocation, cannot be freed:
    /// [`DeviceError::AlreadyFreed`] for a remembered freed allocation, else
    /// [`DeviceError::InvalidAddress`] saying what is there (inside an allocation, or nothing).
    ///
    /// [`DeviceError::AlreadyFreed`]: super::DeviceError::AlreadyFreed
    /// [`DeviceError::InvalidAddress`]: super::DeviceError::InvalidAddress
    pub fn not_freeable(&self, base: u64) -> super::DeviceError {
        let detail = match self.find(base) {
            Some(a) => format!("inside {a}"),
            None => match self.violation(base, 1, AccessKind::Read).reason {
                ViolationReason::Freed(allocation) => {
                    return super::DeviceError::AlreadyFreed {
                        address: base,
                        allocation,
                    }
                }
                _ => "no allocation there".to_owned(),
            },
        };
        super::DeviceError::InvalidAddress {
            address: base,
            detail: Some(detail),
        }
    }

    /// The report for an access that [`check`](Self::check) refused.
    pub fn violation(&self, address: u64, len: u64, access: AccessKind) -> AccessViolation {
        let live = self.live.read();
        let reason = if let Some((_, a)) = live
            .range(..=address)
            .next_back()
            .filter(|(_, a)| address < a.end())
        {
            match a.region(address, len) {
                Some((_, _, perms)) if access == AccessKind::Execute && !perms.execute => {
                    ViolationReason::NotCode(a.clone())
                }
                Some(_) => ViolationReason::ReadOnly(a.clone()),
                None if !a.contains(address, len) => ViolationReason::PastEnd(a.clone()),
                None => ViolationReason::OutsideSegments(a.clone()),
            }
        } else if let Some(p) = self
            .parked
            .lock()
            .range(..=address)
            .next_back()
            .map(|(_, p)| p)
            .filter(|p| p.contains(address, 1))
        {
            ViolationReason::Freed(p.clone())
        } else if let Some(f) = self
            .freed
            .lock()
            .iter()
            .rev()
            .find(|f| f.contains(address, 1))
        {
            ViolationReason::Freed(f.clone())
        } else {
            let before = live
                .range(..=address)
                .next_back()
                .map(|(_, a)| (a.clone(), i128::from(address) - i128::from(a.end())));
            let after = live
                .range(address..)
                .next()
                .map(|(_, a)| (a.clone(), i128::from(address) - i128::from(a.base)));
            let nearest = match (before, after) {
                (Some(b), Some(a)) => Some(if b.1 <= -a.1 { b } else { a }),
                (b, a) => b.or(a),
            };
            ViolationReason::Unmapped { nearest }
        };
        AccessViolation {
            address,
            len,
            access,
            reason,
        }
    }

    /// Every live allocation of `kind`, in address order.
    pub fn of_kind(&self, kind: MemoryKind) -> Vec<Allocation> {
        self.live
            .read()
            .values()
            .filter(|a| a.kind == kind)
            .cloned()
            .collect()
    }

    /// Bytes held by live allocations of `kind`, and by parked pool blocks of it (the device
    /// still holds their memory).
    pub fn bytes_of_kind(&self, kind: MemoryKind) -> u64 {
        let of = |m: &BTreeMap<u64, Allocation>| -> u64 {
            m.values().filter(|a| a.kind == kind).map(|a| a.size).sum()
        };
        of(&self.live.read()) + of(&self.parked.lock())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_finds_every_allocation_touching_a_range() {
        let t = AllocationTable::new();
        t.insert(0x1000, 0x100, MemoryKind::Device, true).unwrap();
        t.insert(0x2000, 0x1000, MemoryKind::Device, true).unwrap();
        t.insert(0x4000, 0x10, MemoryKind::Device, true).unwrap();
        let bases = |s, e| -> Vec<u64> { t.overlapping(s, e).iter().map(|a| a.base).collect() };
        assert_eq!(bases(0x1100, 0x2000), Vec::<u64>::new());
        assert_eq!(bases(0x10ff, 0x2001), vec![0x1000, 0x2000]);
        assert_eq!(bases(0x2fff, 0x4001), vec![0x2000, 0x4000]);
        assert_eq!(bases(0x3000, 0x4000), Vec::<u64>::new());
    }

    #[test]
    fn interior_pointers_past_end_freed_and_read_only_are_told_apart() {
        let t = AllocationTable::new();
        let a = t.insert(0x1000, 256, MemoryKind::Device, true).unwrap();
        let k = t.insert(0x2000, 64, MemoryKind::Kernarg, false).unwrap();
        assert_eq!(t.find(0x10ff), Some(a.clone()));
        assert_eq!(t.find(0x1100), None);
        assert!(t.check(0x1000, 256, AccessKind::Write).is_ok());
        let v = t.check(0x10fc, 8, AccessKind::Write).unwrap_err();
        assert_eq!(v.reason, ViolationReason::PastEnd(a.clone()));
        assert!(v.to_string().contains("4 bytes past the end"), "{v}");
        assert_eq!(
            t.check(0x2000, 8, AccessKind::Write).unwrap_err().reason,
            ViolationReason::ReadOnly(k.clone())
        );
        assert!(t.check(0x2000, 8, AccessKind::Read).is_ok());
        assert_eq!(t.remove(0x1000, true), Some(a.clone()));
        assert_eq!(
            t.check(0x1010, 4, AccessKind::Read).unwrap_err().reason,
            ViolationReason::Freed(a)
        );
        match t.check(0x3000, 4, AccessKind::Read).unwrap_err().reason {
            ViolationReason::Unmapped {
                nearest: Some((n, d)),
            } => {
                assert_eq!(n, k);
                assert_eq!(d, 0x3000 - 0x2040);
            }
            other => panic!("{other:?}"),
        }
        assert!(t.insert(0x2020, 16, MemoryKind::Device, true).is_err());
        assert!(t.insert(0x1f00, 0x101, MemoryKind::Device, true).is_err());
        assert!(t.insert(0x1f00, 0x100, MemoryKind::Device, true).is_ok());
    }

    /// Fresh memory forgets the stale host registrations it overlaps (the host could not
    /// have handed those addresses out while they were mapped), and only those.
    #[test]
    fn fresh_memory_replaces_stale_registrations_only() {
        let t = AllocationTable::new();
        let r1 = t
            .insert(0x1000, 0x1000, MemoryKind::RegisteredHost, true)
            .unwrap();
        let r2 = t
            .insert(0x2800, 0x800, MemoryKind::RegisteredHost, true)
            .unwrap();
        let kept = t
            .insert(0x4000, 0x100, MemoryKind::RegisteredHost, true)
            .unwrap();
        assert!(t.insert(0x1800, 0x1800, MemoryKind::Device, true).is_err());
        let (d, stale) = t
            .insert_fresh(0x1800, 0x1800, MemoryKind::Device, true)
            .unwrap();
        assert_eq!(stale.len(), 2);
        assert!(stale.contains(&r1) && stale.contains(&r2));
        assert_eq!(t.find(0x1000), None);
        assert_eq!(t.find(0x2900), Some(d.clone()));
        assert_eq!(t.find(0x4000), Some(kept));
        // Live memory of another kind is never taken for stale.
        assert!(t
            .insert_fresh(0x2000, 0x10, MemoryKind::Device, true)
            .is_err());
        assert_eq!(t.find(0x2000), Some(d));
    }

    /// A parked pool block is a use after free for kernels and copies, is not live for
    /// pointer queries, comes back under a new id with the size asked for, and a late park of
    /// an allocation already handed out again changes nothing.
    #[test]
    fn parked_blocks_are_freed_until_revived() {
        let t = AllocationTable::new();
        let a = t.insert(0x1000, 512, MemoryKind::Device, true).unwrap();
        assert!(!t.park(0x1000, a.id + 1), "another allocation's park");
        assert!(t.park(0x1000, a.id));
        assert_eq!(t.find(0x1010), None);
        assert_eq!(t.parked(0x1000), Some(a.clone()));
        assert_eq!(
            t.check(0x1100, 4, AccessKind::Write).unwrap_err().reason,
            ViolationReason::Freed(a.clone())
        );
        assert!(matches!(
            t.not_freeable(0x1000),
            crate::device::DeviceError::AlreadyFreed { .. }
        ));
        assert_eq!(t.bytes_of_kind(MemoryKind::Device), 512);
        let b = t.revive(0x1000, 100, MemoryKind::Device);
        assert_ne!(b.id, a.id);
        assert_eq!(t.find(0x1000), Some(b.clone()));
        assert!(t.check(0x1000, 100, AccessKind::Write).is_ok());
        assert!(
            t.check(0x1060, 8, AccessKind::Read).is_err(),
            "past the new size"
        );
        // The stream reaches the old free only now: the new allocation stays.
        assert!(!t.park(0x1000, a.id));
        assert_eq!(t.find(0x1000), Some(b.clone()));
        // Revived while still live (its free not reached yet): replaced, not duplicated.
        let c = t.revive(0x1000, 200, MemoryKind::Device);
        assert_eq!(t.find(0x10c0), Some(c.clone()));
        assert!(t.park(0x1000, c.id));
        // Releasing a parked block removes it and remembers it as freed.
        assert_eq!(t.remove(0x1000, true), Some(c.clone()));
        assert_eq!(t.parked(0x1000), None);
        assert_eq!(
            t.check(0x1000, 4, AccessKind::Read).unwrap_err().reason,
            ViolationReason::Freed(c)
        );
    }

    /// A code object executes only its code segment, writes only its variables, and nothing
    /// else executes at all.
    #[test]
    fn code_executes_only_where_loaded_as_code() {
        let t = AllocationTable::new();
        t.insert(0x10000, 0x4000, MemoryKind::CodeObject, true)
            .unwrap();
        let data = t.insert(0x20000, 256, MemoryKind::Device, true).unwrap();
        assert!(t.set_segments(
            0x10000,
            vec![
                Segment {
                    offset: 0,
                    size: 0x1000,
                    perms: Perms::R
                },
                Segment {
                    offset: 0x2000,
                    size: 0x300,
                    perms: Perms::RX
                },
                Segment {
                    offset: 0x3000,
                    size: 0x100,
                    perms: Perms::RW
                },
            ],
        ));
        let co = t.find(0x10000).unwrap();
        assert!(t.check(0x12000, 8, AccessKind::Execute).is_ok());
        assert!(t.check(0x12000, 8, AccessKind::Read).is_ok());
        let r = |a, l, k| t.check(a, l, k).unwrap_err().reason;
        assert_eq!(
            r(0x12000, 4, AccessKind::Write),
            ViolationReason::ReadOnly(co.clone())
        );
        assert_eq!(
            r(0x10040, 64, AccessKind::Write),
            ViolationReason::ReadOnly(co.clone())
        );
        assert_eq!(
            r(0x10000, 4, AccessKind::Execute),
            ViolationReason::NotCode(co.clone())
        );
        assert!(t.check(0x13000, 4, AccessKind::Write).is_ok());
        assert_eq!(
            r(0x13000, 4, AccessKind::Execute),
            ViolationReason::NotCode(co.clone())
        );
        assert_eq!(
            r(0x11800, 4, AccessKind::Read),
            ViolationReason::OutsideSegments(co.clone())
        );
        assert_eq!(
            r(0x122fe, 4, AccessKind::Read),
            ViolationReason::OutsideSegments(co)
        );
        assert_eq!(
            r(0x20000, 4, AccessKind::Execute),
            ViolationReason::NotCode(data)
        );
        let v = t.check(0x20000, 4, AccessKind::Execute).unwrap_err();
        assert!(
            v.to_string().contains("instruction fetch of 4 bytes"),
            "{v}"
        );
        assert!(v.to_string().contains("was not loaded as code"), "{v}");
    }

    /// An alias names host bytes elsewhere: accesses inside it translate by its offset, the
    /// host range itself is not in the table, bounds and write permission still hold, and it
    /// overlaps like any allocation.
    #[test]
    fn an_alias_translates_to_its_host_range() {
        let t = AllocationTable::new();
        let a = t
            .insert_alias(
                0x7000_0040,
                0x100,
                MemoryKind::RegisteredHost,
                false,
                0x1234_0040,
            )
            .unwrap();
        assert_eq!(a.host, Some(0x1234_0040));
        assert_eq!(
            t.translate(0x7000_0050, 8, AccessKind::Read).unwrap(),
            0x1234_0050
        );
        assert!(t.translate(0x7000_0050, 8, AccessKind::Write).is_err());
        assert!(t.translate(0x7000_0138, 16, AccessKind::Read).is_err());
        assert!(
            t.find(0x1234_0050).is_none(),
            "the host range is not the device's"
        );
        assert!(t
            .insert(0x7000_0000, 0x80, MemoryKind::Device, true)
            .is_err());
        let plain = t.insert(0x9000, 16, MemoryKind::Device, true).unwrap();
        assert_eq!(plain.host, None);
        assert_eq!(t.translate(0x9004, 4, AccessKind::Write).unwrap(), 0x9004);
        let same = t
            .insert_alias(0xa000, 16, MemoryKind::RegisteredHost, true, 0xa000)
            .unwrap();
        assert_eq!(same.host, None, "an alias of itself is plain");
    }
}
