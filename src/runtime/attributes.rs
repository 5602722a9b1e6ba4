//! What the program said about its allocations beyond their bytes: the flags they were made
//! with (`hipHostMalloc`, `hipExtMallocWithFlags`), `hipPointerSetAttribute`'s sync-memops,
//! and the managed-memory hints of `hipMemAdvise`, `hipMemPrefetchAsync` and
//! `hipStreamAttachMemAsync`. Hints are kept per page, as ROCr keeps SVM attributes, so
//! `hipMemRangeGetAttribute(s)` answers for any range of an allocation. Everything about an
//! allocation goes when it is freed.
//!
//! On the software agent the host and every device share one copy of managed memory, so the
//! hints move nothing and change no access; they are recorded and reported. On a GPU, ROCr
//! turns them into SVM attributes and migrations (`hsa_amd_svm_attributes_set`,
//! `hsa_amd_svm_prefetch_async`): that path never ran on hardware here.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::stream::Stream;
use super::{Runtime, RuntimeError, RuntimeResult};
use crate::device::MemoryKind;

/// The granularity of hints: a range advised or prefetched covers the pages it touches.
pub const HINT_PAGE: u64 = 4096;

/// `hipDeviceMallocFinegrained`: device memory the host sees coherently.
pub const DEVICE_MALLOC_FINEGRAINED: u32 = 1;
/// `hipMallocSignalMemory`: fine-grained device memory for signals.
pub const MALLOC_SIGNAL_MEMORY: u32 = 2;

/// Where managed memory may live or be used from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Location {
    /// The host (`hipCpuDeviceId`).
    Host,
    /// A device, by ordinal.
    Device(usize),
}

/// One `hipMemoryAdvise`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// `hipMemAdviseSetReadMostly`.
    SetReadMostly,
    /// `hipMemAdviseUnsetReadMostly`.
    UnsetReadMostly,
    /// `hipMemAdviseSetPreferredLocation`.
    SetPreferredLocation(Location),
    /// `hipMemAdviseUnsetPreferredLocation`.
    UnsetPreferredLocation,
    /// `hipMemAdviseSetAccessedBy`.
    SetAccessedBy(Location),
    /// `hipMemAdviseUnsetAccessedBy`.
    UnsetAccessedBy(Location),
    /// `hipMemAdviseSetCoarseGrain`.
    SetCoarseGrain,
    /// `hipMemAdviseUnsetCoarseGrain`.
    UnsetCoarseGrain,
}

/// The coherency of a range (`hipMemRangeCoherencyMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coherency {
    /// Every page fine-grained (the default).
    FineGrain,
    /// Every page coarse-grained.
    CoarseGrain,
    /// Some of each.
    Indeterminate,
}

/// The hints of a range, as `hipMemRangeGetAttribute` reports them: a value holds only where
/// it holds for every page of the range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeHints {
    /// Every page is read-mostly.
    pub read_mostly: bool,
    /// The preferred location every page shares, if they share one.
    pub preferred: Option<Location>,
    /// The locations every page is advised to be accessed by, in order.
    pub accessed_by: Vec<Location>,
    /// Where every page was last prefetched to, if they agree.
    pub last_prefetch: Option<Location>,
    /// Fine, coarse, or both.
    pub coherency: Coherency,
}

/// `hipStreamAttachMemAsync`'s record: how the allocation was attached, and to which stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attachment {
    /// `hipMemAttachGlobal`, `hipMemAttachHost` or `hipMemAttachSingle`.
    pub flags: u32,
    /// The stream's id.
    pub stream: u64,
}

/// The hints of one run of pages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PageHints {
    read_mostly: bool,
    preferred: Option<Location>,
    /// Sorted, without duplicates.
    accessed_by: Vec<Location>,
    last_prefetch: Option<Location>,
    coarse_grain: bool,
}

impl PageHints {
    fn apply(&mut self, advice: Advice) {
        match advice {
            Advice::SetReadMostly => self.read_mostly = true,
            Advice::UnsetReadMostly => self.read_mostly = false,
            Advice::SetPreferredLocation(l) => self.preferred = Some(l),
            Advice::UnsetPreferredLocation => self.preferred = None,
            Advice::SetAccessedBy(l) => {
                if let Err(at) = self.accessed_by.binary_search(&l) {
                    self.accessed_by.insert(at, l);
                }
            }
            Advice::UnsetAccessedBy(l) => self.accessed_by.retain(|&x| x != l),
            Advice::SetCoarseGrain => self.coarse_grain = true,
            Advice::UnsetCoarseGrain => self.coarse_grain = false,
        }
    }
}

/// What is recorded about one allocation.
#[derive(Debug)]
struct Record {
    /// One past its last byte.
    end: u64,
    flags: u32,
    sync_memops: bool,
    attachment: Option<Attachment>,
    /// Runs of pages covering the whole allocation once anything was advised: start -> (end,
    /// hints); empty while every page has the defaults.
    pages: BTreeMap<u64, (u64, PageHints)>,
}

impl Record {
    fn new(end: u64) -> Record {
        Record {
            end,
            flags: 0,
            sync_memops: true,
            attachment: None,
            pages: BTreeMap::new(),
        }
    }

    /// Splits the run holding `at` so that a run starts there.
    fn split_at(&mut self, at: u64) {
        let Some((&start, &(end, ref hints))) = self.pages.range(..=at).next_back() else {
            return;
        };
        if start < at && at < end {
            let hints = hints.clone();
            self.pages.insert(start, (at, hints.clone()));
            self.pages.insert(at, (end, hints));
        }
    }

    /// Applies `f` to every page of `[start, end)` (page-aligned, inside the allocation).
    fn update(&mut self, base: u64, start: u64, end: u64, f: impl Fn(&mut PageHints)) {
        if self.pages.is_empty() {
            self.pages.insert(base, (self.end, PageHints::default()));
        }
        self.split_at(start);
        self.split_at(end);
        for (_, (_, hints)) in self.pages.range_mut(start..end) {
            f(hints);
        }
        // Neighbouring runs that became equal are one run again (keeps the map small).
        let mut merged: BTreeMap<u64, (u64, PageHints)> = BTreeMap::new();
        for (s, (e, h)) in std::mem::take(&mut self.pages) {
            match merged.last_entry() {
                Some(mut last) if last.get().0 == s && last.get().1 == h => last.get_mut().0 = e,
                _ => {
                    merged.insert(s, (e, h));
                }
            }
        }
        self.pages = merged;
    }

    /// The hints every page of `[start, end)` shares.
    fn range(&self, start: u64, end: u64) -> RangeHints {
        let default = PageHints::default();
        let runs: Vec<&PageHints> = if self.pages.is_empty() {
            vec![&default]
        } else {
            let first = self
                .pages
                .range(..=start)
                .next_back()
                .map_or(start, |(&s, _)| s);
            self.pages
                .range(first..end)
                .filter(|(_, (e, _))| *e > start)
                .map(|(_, (_, h))| h)
                .collect()
        };
        let same = |f: &dyn Fn(&PageHints) -> Option<Location>| {
            let first = runs.first().and_then(|h| f(h));
            runs.iter()
                .all(|h| f(h) == first)
                .then_some(first)
                .flatten()
        };
        let coarse = runs.iter().filter(|h| h.coarse_grain).count();
        RangeHints {
            read_mostly: runs.iter().all(|h| h.read_mostly),
            preferred: same(&|h| h.preferred),
            accessed_by: runs.first().map_or_else(Vec::new, |h| {
                h.accessed_by
                    .iter()
                    .copied()
                    .filter(|l| runs.iter().all(|r| r.accessed_by.contains(l)))
                    .collect()
            }),
            last_prefetch: same(&|h| h.last_prefetch),
            coherency: match coarse {
                0 => Coherency::FineGrain,
                n if n == runs.len() => Coherency::CoarseGrain,
                _ => Coherency::Indeterminate,
            },
        }
    }
}

/// The records of every allocation anything was said about, by base address.
#[derive(Debug, Default)]
pub(crate) struct AllocationAttributes {
    records: Mutex<BTreeMap<u64, Record>>,
}

impl AllocationAttributes {
    fn with<T>(&self, base: u64, end: u64, f: impl FnOnce(&mut Record) -> T) -> T {
        let mut records = self.records.lock();
        let record = records.entry(base).or_insert_with(|| Record::new(end));
        f(record)
    }

    /// Drops what was recorded about the allocation at `base` (it was freed).
    pub(crate) fn forget(&self, base: u64) {
        self.records.lock().remove(&base);
    }
}

/// The live allocation holding `[address, address + len)` entirely, as (base, end, kind).
fn allocation_of(
    rt: &Runtime,
    what: &'static str,
    address: u64,
    len: u64,
) -> RuntimeResult<(u64, u64, MemoryKind)> {
    let invalid = |reason: String| RuntimeError::InvalidRange {
        what,
        address,
        len,
        reason,
    };
    let info = rt
        .pointer_info(address)
        .ok_or_else(|| invalid("no allocation holds it".into()))?;
    let a = info.allocation;
    if !a.contains(address, len) {
        return Err(invalid(format!("it runs past the end of {a}")));
    }
    Ok((a.base, a.end(), a.kind))
}

/// The run of pages `[address, address + len)` touches, pages counted from the allocation's
/// base (a GPU's allocations start on a page; the software agent's on 256 bytes), kept inside
/// the allocation `[base, end)`. `address` is inside it.
fn pages(base: u64, end: u64, address: u64, len: u64) -> (u64, u64) {
    let offset = address - base;
    let start = base + (offset - offset % HINT_PAGE);
    let stop = offset
        .saturating_add(len)
        .checked_next_multiple_of(HINT_PAGE)
        .map_or(end, |o| base.saturating_add(o).min(end));
    (start, stop)
}

impl Runtime {
    fn managed(&self, what: &'static str, address: u64, len: u64) -> RuntimeResult<(u64, u64)> {
        if len == 0 {
            return Err(RuntimeError::ZeroSize { what });
        }
        let (base, end, kind) = allocation_of(self, what, address, len)?;
        if kind != MemoryKind::Managed {
            return Err(RuntimeError::InvalidRange {
                what,
                address,
                len,
                reason: format!("it is {kind:?} memory, not managed memory"),
            });
        }
        Ok((base, end))
    }

    fn check_location(&self, location: Location) -> RuntimeResult<()> {
        if let Location::Device(d) = location {
            self.device(d as i64)?;
        }
        Ok(())
    }

    /// Records `advice` for the pages of managed memory `[address, address + len)` touches
    /// (`hipMemAdvise`).
    ///
    /// # Errors
    /// An empty range, a range that is not inside one managed allocation, or a location that
    /// is no device.
    pub fn advise(&self, address: u64, len: u64, advice: Advice) -> RuntimeResult<()> {
        let (base, end) = self.managed("hipMemAdvise range", address, len)?;
        if let Advice::SetPreferredLocation(l)
        | Advice::SetAccessedBy(l)
        | Advice::UnsetAccessedBy(l) = advice
        {
            self.check_location(l)?;
        }
        let (start, stop) = pages(base, end, address, len);
        self.attributes.with(base, end, |r| {
            r.update(base, start, stop, |h| h.apply(advice))
        });
        tracing::debug!(
            address = format_args!("{address:#x}"),
            len,
            ?advice,
            "recorded managed-memory advice for pages {start:#x}..{stop:#x} (the software \
             agent shares one copy of managed memory: nothing moves)"
        );
        Ok(())
    }

    /// Prefetches managed memory to `location` in stream order (`hipMemPrefetchAsync`): when
    /// `stream` reaches it, the pages become "last prefetched to `location`". On the software
    /// agent nothing moves (host and devices share the memory).
    ///
    /// # Errors
    /// As [`advise`](Self::advise); the stream's submission errors.
    pub fn prefetch(
        &self,
        address: u64,
        len: u64,
        location: Location,
        stream: &Stream,
    ) -> RuntimeResult<()> {
        let (base, end) = self.managed("hipMemPrefetchAsync range", address, len)?;
        self.check_location(location)?;
        let (start, stop) = pages(base, end, address, len);
        let attributes = Arc::clone(&self.attributes);
        stream.add_callback(Box::new(move || {
            // The allocation may have been freed meanwhile (its record is gone then).
            if let Some(r) = attributes.records.lock().get_mut(&base) {
                r.update(base, start, stop, |h| h.last_prefetch = Some(location));
            }
        }))?;
        tracing::debug!(
            address = format_args!("{address:#x}"),
            len,
            ?location,
            stream = stream.id(),
            "prefetch in stream order: pages {start:#x}..{stop:#x} (nothing to migrate on the \
             software agent)"
        );
        // The record exists before the stream reaches the prefetch.
        self.attributes.with(base, end, |_| ());
        Ok(())
    }

    /// The hints every page of `[address, address + len)` shares
    /// (`hipMemRangeGetAttribute`): of managed memory, or of device memory, which has none
    /// and the coherency it was allocated with.
    ///
    /// # Errors
    /// As [`advise`](Self::advise), device memory allowed.
    pub fn range_hints(&self, address: u64, len: u64) -> RuntimeResult<RangeHints> {
        const WHAT: &str = "hipMemRangeGetAttribute range";
        if len == 0 {
            return Err(RuntimeError::ZeroSize { what: WHAT });
        }
        // Device memory has no hints, and its coherency is what it was allocated with:
        // coarse-grained (hipMalloc), fine-grained with hipExtMallocWithFlags' fine-grained or
        // signal-memory flags (as ROCr's SVM attributes report the memory behind it).
        let (base, _, kind) = allocation_of(self, WHAT, address, len)?;
        if kind == MemoryKind::Device {
            let flags = self.allocation_flags(base).unwrap_or(0);
            return Ok(RangeHints {
                read_mostly: false,
                preferred: None,
                accessed_by: Vec::new(),
                last_prefetch: None,
                coherency: if flags & (DEVICE_MALLOC_FINEGRAINED | MALLOC_SIGNAL_MEMORY) != 0 {
                    Coherency::FineGrain
                } else {
                    Coherency::CoarseGrain
                },
            });
        }
        let (base, end) = self.managed(WHAT, address, len)?;
        let (start, stop) = pages(base, end, address, len);
        let records = self.attributes.records.lock();
        Ok(match records.get(&base) {
            Some(r) => r.range(start, stop),
            None => Record::new(end).range(start, stop),
        })
    }

    /// Records that managed memory `[address, address + len)` is attached to `stream` with
    /// `flags` (`hipStreamAttachMemAsync`). On the software agent every stream and the host
    /// may use managed memory at any time, so attaching restricts nothing.
    ///
    /// # Errors
    /// As [`advise`](Self::advise).
    pub fn attach(&self, address: u64, len: u64, flags: u32, stream: &Stream) -> RuntimeResult<()> {
        let (base, end) = self.managed("hipStreamAttachMemAsync range", address, len)?;
        let attachment = Attachment {
            flags,
            stream: stream.id(),
        };
        self.attributes
            .with(base, end, |r| r.attachment = Some(attachment));
        tracing::debug!(
            address = format_args!("{address:#x}"),
            len,
            ?attachment,
            "recorded the attachment of managed memory"
        );
        Ok(())
    }

    /// How the managed allocation holding `address` was last attached, if it was.
    pub fn attachment(&self, address: u64) -> Option<Attachment> {
        let base = self.pointer_info(address)?.allocation.base;
        self.attributes.records.lock().get(&base)?.attachment
    }

    /// Records the flags the allocation at `base` was made with (`hipHostMalloc`'s,
    /// `hipExtMallocWithFlags`'s).
    ///
    /// # Errors
    /// `base` is not the start of a live allocation.
    pub fn set_allocation_flags(&self, base: u64, flags: u32) -> RuntimeResult<()> {
        let (b, end, _) = allocation_of(self, "allocation", base, 1)?;
        self.attributes.with(b, end, |r| r.flags = flags);
        Ok(())
    }

    /// The flags the allocation holding `address` was made with (0 when none were given).
    pub fn allocation_flags(&self, address: u64) -> Option<u32> {
        let base = self.pointer_info(address)?.allocation.base;
        Some(
            self.attributes
                .records
                .lock()
                .get(&base)
                .map_or(0, |r| r.flags),
        )
    }

    /// Sets whether synchronous copies of the allocation holding `address` synchronise
    /// (`hipPointerSetAttribute(HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS)`; rocload's synchronous
    /// copies always do, so it is recorded and reported).
    ///
    /// # Errors
    /// No allocation holds `address`.
    pub fn set_sync_memops(&self, address: u64, on: bool) -> RuntimeResult<()> {
        let (base, end, _) = allocation_of(self, "pointer", address, 1)?;
        self.attributes.with(base, end, |r| r.sync_memops = on);
        Ok(())
    }

    /// Whether synchronous copies of the allocation holding `address` synchronise (true
    /// unless set otherwise).
    pub fn sync_memops(&self, address: u64) -> Option<bool> {
        let base = self.pointer_info(address)?.allocation.base;
        Some(
            self.attributes
                .records
                .lock()
                .get(&base)
                .is_none_or(|r| r.sync_memops),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(pages: u64) -> (u64, Record) {
        (0x10000, Record::new(0x10000 + pages * HINT_PAGE))
    }

    #[test]
    fn hints_hold_for_a_range_only_where_every_page_has_them() {
        let (base, mut r) = record(8);
        let p = |i: u64| base + i * HINT_PAGE;
        r.update(base, p(2), p(4), |h| h.apply(Advice::SetReadMostly));
        assert!(r.range(p(2), p(4)).read_mostly);
        assert!(!r.range(p(1), p(4)).read_mostly);
        assert!(!r.range(p(3), p(5)).read_mostly);
        r.update(base, p(0), p(8), |h| {
            h.apply(Advice::SetPreferredLocation(Location::Device(0)))
        });
        r.update(base, p(6), p(8), |h| {
            h.apply(Advice::SetPreferredLocation(Location::Host))
        });
        assert_eq!(r.range(p(0), p(6)).preferred, Some(Location::Device(0)));
        assert_eq!(r.range(p(5), p(7)).preferred, None, "mixed");
        assert_eq!(r.range(p(6), p(8)).preferred, Some(Location::Host));
        r.update(base, p(0), p(8), |h| h.apply(Advice::UnsetReadMostly));
        r.update(base, p(0), p(8), |h| {
            h.apply(Advice::UnsetPreferredLocation)
        });
        assert_eq!(
            r.range(p(0), p(8)),
            Record::new(0).range(0, 1),
            "defaults again"
        );
        assert_eq!(r.pages.len(), 1, "equal neighbours merge");
    }

    #[test]
    fn accessed_by_is_the_intersection_and_coherency_can_be_mixed() {
        let (base, mut r) = record(4);
        let p = |i: u64| base + i * HINT_PAGE;
        r.update(base, p(0), p(4), |h| {
            h.apply(Advice::SetAccessedBy(Location::Device(1)))
        });
        r.update(base, p(0), p(2), |h| {
            h.apply(Advice::SetAccessedBy(Location::Host))
        });
        r.update(base, p(0), p(4), |h| {
            h.apply(Advice::SetAccessedBy(Location::Device(1)))
        });
        assert_eq!(
            r.range(p(0), p(2)).accessed_by,
            [Location::Host, Location::Device(1)]
        );
        assert_eq!(r.range(p(0), p(4)).accessed_by, [Location::Device(1)]);
        r.update(base, p(1), p(2), |h| h.apply(Advice::SetCoarseGrain));
        assert_eq!(r.range(p(1), p(2)).coherency, Coherency::CoarseGrain);
        assert_eq!(r.range(p(0), p(2)).coherency, Coherency::Indeterminate);
        assert_eq!(r.range(p(2), p(4)).coherency, Coherency::FineGrain);
    }

    #[test]
    fn a_range_covers_the_pages_it_touches_counted_from_its_allocation() {
        let base = 0x10000 + 0x100;
        let end = base + 2 * HINT_PAGE + 8;
        assert_eq!(pages(base, end, base + 10, 1), (base, base + HINT_PAGE));
        assert_eq!(
            pages(base, end, base + HINT_PAGE, HINT_PAGE + 1),
            (base + HINT_PAGE, end)
        );
        assert_eq!(pages(base, end, end - 1, 1), (base + 2 * HINT_PAGE, end));
        assert_eq!(
            pages(0, u64::MAX, u64::MAX - 5, 5),
            (u64::MAX - 4095, u64::MAX)
        );
    }
}
