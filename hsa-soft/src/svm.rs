//! Shared virtual memory: `hsa_amd_svm_attributes_set`/`_get` and `hsa_amd_svm_prefetch_async`,
//! answered as ROCr 5.2.3 answers over a kernel driver with the SVM API (`Runtime::SetSvmAttrib`,
//! `GetSvmAttrib`, `SvmPrefetch`, `GetSVMPrefetchAgent` in `core/runtime/runtime.cpp`), with
//! the thunk's checks (`hsaKmtSVMSetAttr`/`GetAttr`, libhsakmt `src/svm.c`) and what the driver
//! keeps and answers (KFD's `kfd_svm.c`: `svm_range_set_attr`, `svm_range_get_attr`,
//! `svm_range_is_valid`, `svm_range_set_default_attributes`).
//!
//! The driver's part lives here: attributes per page range of the process's host memory
//! (preferred location, prefetch location, migration granularity, flags, and per GPU agent
//! access or access in place), split where a call's range starts and ends, gaps filled with
//! the driver's defaults, equal neighbours merged (which no query can tell from KFD's own
//! splitting). XNACK is off, so nothing is accessible by default: a GPU agent reaches a range
//! only once given access (or access in place), and such ranges enter its allocation table as
//! KFD maps them in its page tables, read-only where the range is `READ_ONLY` or the host could
//! not write it. Nothing migrates: the software agent's memory is the host's.
//!
//! What the driver refuses is ROCr's `HSA_STATUS_ERROR` (its answer to any thunk failure): a
//! range with no page or at address 0, pages not mapped, or pages of memory the driver
//! allocated itself (pool blocks, the agents' view of locked memory, code objects, queues:
//! anything in an agent's table that is not an SVM range). What this library cannot see is
//! `munmap` (KFD's MMU notifier drops the ranges of unmapped pages): ranges whose addresses
//! the library or a software agent hands out again are forgotten at the next SVM call, and
//! memory mapped again at the same addresses before that keeps the old attributes.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Arc;

use hsa_sys::*;
use parking_lot::Mutex;
use rocload::device::{host_memory, Condition, Device, MemoryKind, Signal};

use crate::agents::{agent_handle, agent_index};
use crate::runtime::{runtime, Runtime};
use crate::util::{guard, Status};

/// The page ROCr aligns every SVM range to (`AlignDown`/`AlignUp` by 4096).
const PAGE: u64 = 4096;

// KFD's range flags (`KFD_IOCTL_SVM_FLAG_*`, the thunk's `HSA_SVM_FLAG_*`).
const FLAG_HOST_ACCESS: u32 = 0x1;
const FLAG_COHERENT: u32 = 0x2;
const FLAG_HIVE_LOCAL: u32 = 0x4;
const FLAG_GPU_RO: u32 = 0x8;
const FLAG_GPU_READ_MOSTLY: u32 = 0x20;

/// KFD's default migration granularity (log2 of pages).
const DEFAULT_GRANULARITY: u32 = 9;
/// ROCr's cap on a granularity set ("Max migration size is 1GB").
const MAX_GRANULARITY: u64 = 18;
/// KFD's `MAX_GPU_INSTANCE`: agents at this index or past it have no access bit.
const MAX_GPU_INSTANCE: usize = 64;
/// Most ranges kept; past it a set fails as the driver's allocation would.
const MAX_RANGES: usize = 1 << 20;
/// Most dependency signals of a prefetch (as the library's async copies).
const MAX_DEP_SIGNALS: u32 = 64;

/// A location: an agent's index, which is its node (the CPU agent is node 0, as in ROCr);
/// `None` is KFD's `UNDEFINED`.
type Node = Option<usize>;

/// What KFD keeps for a range (`struct svm_range`), and whether the host could write it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Attrs {
    preferred: Node,
    prefetch: Node,
    granularity: u32,
    flags: u32,
    /// GPU agents (bit = agent index) with `ACCESS`.
    access: u64,
    /// GPU agents with `ACCESS_IN_PLACE`.
    in_place: u64,
    /// The host could write every page when the range was last set.
    host_writable: bool,
}

impl Attrs {
    /// A new range's (`svm_range_new` with XNACK off: no GPU has access).
    fn new(host_writable: bool) -> Attrs {
        Attrs {
            preferred: None,
            prefetch: None,
            granularity: DEFAULT_GRANULARITY,
            flags: FLAG_HOST_ACCESS | FLAG_COHERENT,
            access: 0,
            in_place: 0,
            host_writable,
        }
    }

    /// `svm_range_apply_attrs` for one attribute.
    fn apply(&mut self, op: Op) {
        let bit = |a: usize| 1u64 << a;
        match op {
            Op::Granularity(g) => self.granularity = g.min(0x3f),
            Op::Preferred(n) => self.preferred = n,
            Op::Prefetch(n) => self.prefetch = n,
            Op::Access(a) => {
                self.access |= bit(a);
                self.in_place &= !bit(a);
            }
            Op::InPlace(a) => {
                self.access &= !bit(a);
                self.in_place |= bit(a);
            }
            Op::NoAccess(a) => {
                self.access &= !bit(a);
                self.in_place &= !bit(a);
            }
            Op::ClearFlags(f) => self.flags &= !f,
            Op::SetFlags(f) => self.flags |= f,
        }
    }

    /// Whether GPU agent `a` reaches the range, and may write it.
    fn reach(&self, a: usize) -> Option<bool> {
        ((self.access | self.in_place) & (1u64 << a) != 0)
            .then_some(self.host_writable && self.flags & FLAG_GPU_RO == 0)
    }
}

/// One attribute as ROCr hands it to the driver (GPU agents below [`MAX_GPU_INSTANCE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Granularity(u32),
    Preferred(Node),
    Prefetch(Node),
    Access(usize),
    InPlace(usize),
    NoAccess(usize),
    ClearFlags(u32),
    SetFlags(u32),
}

#[derive(Debug, Clone)]
struct Range {
    end: u64,
    attrs: Attrs,
}

/// What `svm_range_get_attr` answers for a range of pages.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    preferred: Node,
    prefetch: Node,
    granularity: u32,
    flags_and: u32,
    flags_or: u32,
    access: u64,
    in_place: u64,
}

/// The ranges, and what each GPU agent's table holds of them.
#[derive(Default)]
struct Ranges {
    /// By first address; page-aligned, never overlapping.
    by_start: BTreeMap<u64, Range>,
    /// Per agent index: the runs of ranges entered in its table (base → size, writable).
    entries: BTreeMap<usize, BTreeMap<u64, (u64, bool)>>,
}

impl Ranges {
    /// Splits the range holding `at` inside it in two, at `at`.
    fn split_at(&mut self, at: u64) {
        let Some((&start, r)) = self.by_start.range(..at).next_back() else {
            return;
        };
        if r.end > at {
            let tail = Range {
                end: r.end,
                attrs: r.attrs.clone(),
            };
            if let Some(r) = self.by_start.get_mut(&start) {
                r.end = at;
            }
            self.by_start.insert(at, tail);
        }
    }

    /// `svm_range_add` then `svm_range_apply_attrs` over `[start, end)`: existing ranges split
    /// at the bounds, gaps filled with new ranges, `ops` applied to every range inside.
    fn set(&mut self, start: u64, end: u64, ops: &[Op], host_writable: bool) -> Status {
        let inside = self.by_start.range(start..end).count();
        if self.by_start.len().saturating_add(inside).saturating_add(3) > MAX_RANGES {
            tracing::debug!(ranges = self.by_start.len(), "too many SVM ranges");
            return Err(HSA_STATUS_ERROR);
        }
        self.split_at(start);
        self.split_at(end);
        let mut at = start;
        let mut gaps = Vec::new();
        for (&s, r) in self.by_start.range(start..end) {
            if s > at {
                gaps.push((at, s));
            }
            at = r.end;
        }
        if at < end {
            gaps.push((at, end));
        }
        for (s, e) in gaps {
            self.by_start.insert(
                s,
                Range {
                    end: e,
                    attrs: Attrs::new(host_writable),
                },
            );
        }
        for (_, r) in self.by_start.range_mut(start..end) {
            r.attrs.host_writable = host_writable;
            for &op in ops {
                r.attrs.apply(op);
            }
        }
        self.merge(start, end);
        Ok(())
    }

    /// Merges equal neighbours from the range before `start` to the one at `end`.
    fn merge(&mut self, start: u64, end: u64) {
        let from = self
            .by_start
            .range(..start)
            .next_back()
            .map_or(start, |(&s, _)| s);
        let keys: Vec<u64> = self.by_start.range(from..=end).map(|(&s, _)| s).collect();
        let mut prev: Option<u64> = None;
        for s in keys {
            if let Some(p) = prev {
                let same = match (self.by_start.get(&p), self.by_start.get(&s)) {
                    (Some(a), Some(b)) => a.end == s && a.attrs == b.attrs,
                    _ => false,
                };
                if same {
                    if let Some(b) = self.by_start.remove(&s) {
                        if let Some(a) = self.by_start.get_mut(&p) {
                            a.end = b.end;
                        }
                    }
                    continue;
                }
            }
            prev = Some(s);
        }
    }

    /// Forgets `[start, end)` (its addresses are no longer the program's pages).
    fn forget(&mut self, start: u64, end: u64) {
        self.split_at(start);
        self.split_at(end);
        let keys: Vec<u64> = self.by_start.range(start..end).map(|(&s, _)| s).collect();
        for s in keys {
            self.by_start.remove(&s);
        }
    }

    /// `svm_range_get_attr` over `[start, end)`: the defaults when no range is there, else
    /// the ranges' common values (gaps between them are not looked at, as in KFD).
    fn answer(&self, start: u64, end: u64) -> Answer {
        let first = self
            .by_start
            .range(..start)
            .next_back()
            .filter(|(_, r)| r.end > start)
            .into_iter();
        let mut touched = first.chain(self.by_start.range(start..end)).peekable();
        if touched.peek().is_none() {
            let d = Attrs::new(true);
            return Answer {
                preferred: d.preferred,
                prefetch: d.prefetch,
                granularity: d.granularity,
                flags_and: d.flags,
                flags_or: d.flags,
                access: 0,
                in_place: 0,
            };
        }
        let mut a = Answer {
            preferred: None,
            prefetch: None,
            granularity: 0xff,
            flags_and: u32::MAX,
            flags_or: 0,
            access: u64::MAX,
            in_place: u64::MAX,
        };
        // A location holds while every range agrees on one; the first that differs (or has
        // none) makes it UNDEFINED for good.
        let (mut preferred_open, mut prefetch_open) = (true, true);
        for (_, r) in touched {
            let r = &r.attrs;
            if preferred_open {
                match (r.preferred, a.preferred) {
                    (None, _) => preferred_open = false,
                    (Some(p), Some(q)) if p != q => preferred_open = false,
                    (p, _) => a.preferred = p,
                }
                if !preferred_open {
                    a.preferred = None;
                }
            }
            if prefetch_open {
                match (r.prefetch, a.prefetch) {
                    (None, _) => prefetch_open = false,
                    (Some(p), Some(q)) if p != q => prefetch_open = false,
                    (p, _) => a.prefetch = p,
                }
                if !prefetch_open {
                    a.prefetch = None;
                }
            }
            a.access &= r.access;
            a.in_place &= r.in_place;
            a.flags_and &= r.flags;
            a.flags_or |= r.flags;
            a.granularity = a.granularity.min(r.granularity);
        }
        a
    }

    /// Whether the table entry `a` of agent `index` is one of this module's runs.
    fn ours(&self, index: usize, a: &rocload::device::memory::Allocation) -> bool {
        a.kind == MemoryKind::RegisteredHost
            && self
                .entries
                .get(&index)
                .and_then(|m| m.get(&a.base))
                .is_some_and(|&(size, _)| size == a.size)
    }

    /// Whether `[start, end)` touches memory the driver allocated: the library's blocks and
    /// locked ranges' agent view, or anything in an agent's table that is not an SVM run.
    fn touches_driver_memory(&self, rt: &Runtime, start: u64, end: u64) -> bool {
        rt.memory.overlaps_known(start, end)
            || rt.agents.iter().enumerate().any(|(index, agent)| {
                agent.gpu().is_some_and(|(soft, _)| {
                    soft.allocations()
                        .overlapping(start, end)
                        .iter()
                        .any(|a| !self.ours(index, a))
                })
            })
    }

    /// Forgets ranges whose addresses the library or a software agent handed out again: the
    /// program unmapped them (KFD's MMU notifier would have dropped them then).
    fn forget_reused(&mut self, rt: &Runtime) {
        let reused: Vec<(u64, u64)> = self
            .by_start
            .iter()
            .filter(|(&s, r)| self.touches_driver_memory(rt, s, r.end))
            .map(|(&s, r)| (s, r.end))
            .collect();
        for (s, e) in reused {
            tracing::debug!(
                start = format_args!("{s:#x}"),
                end = format_args!("{e:#x}"),
                "SVM range forgotten: its addresses were handed out again"
            );
            self.forget(s, e);
        }
    }

    /// `svm_range_is_valid`: pages at a non-zero address, mapped, none of them memory the
    /// driver allocated; whether the host may write all of them.
    fn check(&self, rt: &Runtime, start: u64, end: u64) -> Status<bool> {
        if start == 0 || end <= start {
            tracing::debug!(start, end, "SVM range without pages");
            return Err(HSA_STATUS_ERROR);
        }
        if self.touches_driver_memory(rt, start, end) {
            tracing::debug!(
                start = format_args!("{start:#x}"),
                end = format_args!("{end:#x}"),
                "SVM range over memory the driver allocated (EADDRINUSE)"
            );
            return Err(HSA_STATUS_ERROR);
        }
        // KFD asks only for VMAs; the software agent touches the pages itself, so they must
        // be readable too (a PROT_NONE page would crash the host, not fault a GPU).
        host_memory::check_mapped_exact(start, end - start, false).map_err(|e| {
            tracing::debug!(error = %e, "SVM range not mapped (EFAULT)");
            HSA_STATUS_ERROR
        })?;
        Ok(host_memory::check_mapped_exact(start, end - start, true).is_ok())
    }

    /// Enters the runs of ranges each GPU agent reaches in its table and takes out the runs
    /// it no longer reaches (unchanged runs stay as they are, so kernels using them never see
    /// them missing). A run that cannot be entered is `HSA_STATUS_ERROR` after the others.
    fn sync_tables(&mut self, rt: &Runtime) -> Status {
        let mut failed = false;
        for (index, agent) in rt.agents.iter().enumerate().take(MAX_GPU_INSTANCE) {
            let Some((soft, _)) = agent.gpu() else {
                continue;
            };
            let table = soft.allocations();
            let mut want: BTreeMap<u64, (u64, bool)> = BTreeMap::new();
            let mut run: Option<(u64, u64, bool)> = None;
            for (&s, r) in &self.by_start {
                let reach = r.attrs.reach(index);
                match (&mut run, reach) {
                    (Some((_, e, w)), Some(rw)) if *e == s && *w == rw => *e = r.end,
                    _ => {
                        if let Some((b, e, w)) = run.take() {
                            want.insert(b, (e - b, w));
                        }
                        run = reach.map(|w| (s, r.end, w));
                    }
                }
            }
            if let Some((b, e, w)) = run {
                want.insert(b, (e - b, w));
            }
            let have = self.entries.entry(index).or_default();
            let gone: Vec<(u64, u64)> = have
                .iter()
                .filter(|(b, v)| want.get(b) != Some(v))
                .map(|(&b, &(size, _))| (b, size))
                .collect();
            for (b, size) in gone {
                have.remove(&b);
                // Only this module's entry: the addresses may be another allocation's now.
                if table.find(b).is_some_and(|a| {
                    a.base == b && a.size == size && a.kind == MemoryKind::RegisteredHost
                }) {
                    table.remove(b, false);
                }
            }
            for (b, (size, w)) in want {
                if have.contains_key(&b) {
                    continue;
                }
                match table.insert(b, size, MemoryKind::RegisteredHost, w) {
                    Ok(_) => {
                        have.insert(b, (size, w));
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, agent = index, "SVM range not entered");
                        failed = true;
                    }
                }
            }
        }
        if failed {
            Err(HSA_STATUS_ERROR)
        } else {
            Ok(())
        }
    }
}

/// Per-runtime state of this module.
#[derive(Default)]
pub(crate) struct State {
    ranges: Mutex<Ranges>,
}

/// The pages ROCr hands the driver for `ptr` and `size` (`AlignDown(ptr)`, `AlignUp(ptr +
/// size)`); an address past the end of the space has none.
fn pages(ptr: *const c_void, size: usize) -> Status<(u64, u64)> {
    let p = ptr as u64;
    let end = p
        .checked_add(size as u64)
        .and_then(|e| e.checked_next_multiple_of(PAGE))
        .ok_or(HSA_STATUS_ERROR)?;
    Ok((p & !(PAGE - 1), end))
}

/// The agent at `handle` (`Agent::Convert` and `IsValid`, which ROCr checks but for prefetch).
fn agent_of(rt: &Runtime, handle: u64) -> Status<usize> {
    agent_index(hsa_agent_t { handle }, rt.agents.len())
}

/// The access bit of GPU agent `index`, or `HSA_STATUS_ERROR` past KFD's 64 GPUs.
fn gpu_bit(index: usize) -> Status<usize> {
    if index < MAX_GPU_INSTANCE {
        Ok(index)
    } else {
        tracing::debug!(index, "agent past KFD's MAX_GPU_INSTANCE");
        Err(HSA_STATUS_ERROR)
    }
}

/// Reads entry `i` of the caller's attribute list.
///
/// # Safety
/// `list` holds more than `i` pairs (the API's contract; NULL is refused by the callers).
unsafe fn pair_at(
    list: *const hsa_amd_svm_attribute_pair_t,
    i: usize,
) -> hsa_amd_svm_attribute_pair_t {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::read_unaligned(list.add(i)) }
}

/// `Runtime::SetSvmAttrib`: the attributes converted and checked in order (an unknown one,
/// or `PREFETCH_LOCATION`/`ACCESS_QUERY`, `INVALID_ARGUMENT`; a bad agent `INVALID_AGENT`; an
/// attribute or an agent given twice `INCOMPATIBLE_ARGUMENTS`), then the driver's part.
///
/// # Safety
/// `list` holds `count` pairs.
unsafe fn set(
    rt: &Runtime,
    ptr: *const c_void,
    size: usize,
    list: *const hsa_amd_svm_attribute_pair_t,
    count: usize,
) -> Status {
    if count > 0 && list.is_null() {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let mut seen_attributes = 0u32;
    let mut seen_agents = vec![false; rt.agents.len()];
    let (mut set_flags, mut clear_flags) = (0u32, 0u32);
    let mut ops = Vec::new();
    // Each attribute at most once and each agent at most once: the list is short or an error
    // stops it early, and `ops` stays small.
    for i in 0..count {
        // SAFETY: `count` pairs by the caller's contract.
        let pair = unsafe { pair_at(list, i) };
        let (attribute, value) = (pair.attribute, pair.value);
        let mut once = |a: u64| {
            let bit = 1u32 << a;
            if seen_attributes & bit != 0 {
                return Err(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
            }
            seen_attributes |= bit;
            Ok(())
        };
        let flag = |on: bool, f: u32, set: &mut u32, clear: &mut u32| {
            if on {
                *set |= f;
            } else {
                *clear |= f;
            }
        };
        match attribute {
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG) => {
                once(a)?;
                match value {
                    v if v == u64::from(HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED) => {
                        set_flags |= FLAG_COHERENT
                    }
                    v if v == u64::from(HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED) => {
                        clear_flags |= FLAG_COHERENT
                    }
                    _ => return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
                }
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_READ_ONLY) => {
                once(a)?;
                flag(value != 0, FLAG_GPU_RO, &mut set_flags, &mut clear_flags);
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_HIVE_LOCAL) => {
                once(a)?;
                flag(
                    value != 0,
                    FLAG_HIVE_LOCAL,
                    &mut set_flags,
                    &mut clear_flags,
                );
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_READ_MOSTLY) => {
                once(a)?;
                flag(
                    value != 0,
                    FLAG_GPU_READ_MOSTLY,
                    &mut set_flags,
                    &mut clear_flags,
                );
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY) => {
                once(a)?;
                ops.push(Op::Granularity(value.min(MAX_GRANULARITY) as u32));
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION) => {
                once(a)?;
                // The null agent: no preferred location.
                let node = if value == 0 {
                    None
                } else {
                    Some(agent_of(rt, value)?)
                };
                ops.push(Op::Preferred(node));
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE)
                || a == u64::from(HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE)
                || a == u64::from(HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS) =>
            {
                let index = agent_of(rt, value)?;
                if std::mem::replace(&mut seen_agents[index], true) {
                    return Err(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
                }
                let no_access = a == u64::from(HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS);
                if rt.agents[index].gpu().is_none() {
                    // The host's access is a flag of the range.
                    flag(
                        !no_access,
                        FLAG_HOST_ACCESS,
                        &mut set_flags,
                        &mut clear_flags,
                    );
                } else {
                    ops.push(if no_access {
                        Op::NoAccess(index)
                    } else if a == u64::from(HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE) {
                        Op::Access(index)
                    } else {
                        Op::InPlace(index)
                    });
                }
            }
            _ => return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
        }
    }
    // ROCr: any CPU asking for access grants it.
    if set_flags & FLAG_HOST_ACCESS != 0 {
        clear_flags &= !FLAG_HOST_ACCESS;
    }
    if clear_flags != 0 {
        ops.push(Op::ClearFlags(clear_flags));
    }
    if set_flags != 0 {
        ops.push(Op::SetFlags(set_flags));
    }
    for op in &ops {
        if let Op::Access(a) | Op::InPlace(a) | Op::NoAccess(a) = op {
            gpu_bit(*a)?;
        }
    }
    let (start, end) = pages(ptr, size)?;
    let mut ranges = rt.svm.ranges.lock();
    ranges.forget_reused(rt);
    let writable = ranges.check(rt, start, end)?;
    ranges.set(start, end, &ops, writable)?;
    ranges.sync_tables(rt)
}

/// `Runtime::GetSVMPrefetchAgent`: the agent every page of the range was last prefetched to,
/// else the null agent. (ROCr reads an uninitialised value where the driver refuses the range;
/// here the null agent.)
fn prefetch_agent(rt: &Runtime, ranges: &Ranges, start: u64, end: u64) -> u64 {
    if ranges.check(rt, start, end).is_err() {
        return 0;
    }
    ranges
        .answer(start, end)
        .prefetch
        .map_or(0, |node| agent_handle(node).handle)
}

/// `Runtime::GetSvmAttrib`: `PREFETCH_LOCATION` answered at once, the rest from the driver's
/// answer once every attribute was checked; flags as ROCr writes them (`READ_ONLY`,
/// `HIVE_LOCAL` and `READ_MOSTLY` are the flag's bit, not 1), an access query's attribute
/// replaced by the agent's access (a CPU's by `AGENT_ACCESSIBLE` if the host may access, else
/// left as it was).
///
/// # Safety
/// `list` holds `count` writable pairs.
unsafe fn get(
    rt: &Runtime,
    ptr: *const c_void,
    size: usize,
    list: *mut hsa_amd_svm_attribute_pair_t,
    count: usize,
) -> Status {
    if count > 0 && list.is_null() {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let mut ranges = rt.svm.ranges.lock();
    ranges.forget_reused(rt);
    let range = pages(ptr, size);
    let mut ask_driver = false;
    for i in 0..count {
        // SAFETY: `count` pairs by the caller's contract.
        let pair = unsafe { pair_at(list, i) };
        match pair.attribute {
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG)
                || a == u64::from(HSA_AMD_SVM_ATTRIB_READ_ONLY)
                || a == u64::from(HSA_AMD_SVM_ATTRIB_HIVE_LOCAL)
                || a == u64::from(HSA_AMD_SVM_ATTRIB_READ_MOSTLY)
                || a == u64::from(HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY)
                || a == u64::from(HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION) =>
            {
                ask_driver = true
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION) => {
                let value = match range {
                    Ok((start, end)) => prefetch_agent(rt, &ranges, start, end),
                    Err(_) => 0,
                };
                // SAFETY: entry `i` is the caller's, writable (read above, unaligned-safe).
                unsafe {
                    std::ptr::write_unaligned(
                        list.add(i),
                        hsa_amd_svm_attribute_pair_t { value, ..pair },
                    )
                };
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_ACCESS_QUERY) => {
                let index = agent_of(rt, pair.value)?;
                if rt.agents[index].gpu().is_some() {
                    gpu_bit(index)?;
                }
                ask_driver = true;
            }
            _ => return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
        }
    }
    if !ask_driver {
        return Ok(());
    }
    let (start, end) = range?;
    ranges.check(rt, start, end)?;
    let answer = ranges.answer(start, end);
    let set_flags = answer.flags_and;
    let clear_flags = !answer.flags_or;
    for i in 0..count {
        // SAFETY: as above.
        let mut pair = unsafe { pair_at(list, i) };
        match pair.attribute {
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG) => {
                pair.value = u64::from(if set_flags & FLAG_COHERENT != 0 {
                    HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED
                } else if clear_flags & FLAG_COHERENT != 0 {
                    HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED
                } else {
                    HSA_AMD_SVM_GLOBAL_FLAG_INDETERMINATE
                })
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_READ_ONLY) => {
                pair.value = u64::from(set_flags & FLAG_GPU_RO)
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_HIVE_LOCAL) => {
                pair.value = u64::from(set_flags & FLAG_HIVE_LOCAL)
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_READ_MOSTLY) => {
                pair.value = u64::from(set_flags & FLAG_GPU_READ_MOSTLY)
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY) => {
                pair.value = u64::from(answer.granularity)
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION) => {
                pair.value = answer.preferred.map_or(0, |node| agent_handle(node).handle)
            }
            a if a == u64::from(HSA_AMD_SVM_ATTRIB_ACCESS_QUERY) => {
                let index = agent_of(rt, pair.value)?;
                if rt.agents[index].gpu().is_none() {
                    if set_flags & FLAG_HOST_ACCESS != 0 {
                        pair.attribute = u64::from(HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE);
                    }
                } else {
                    let bit = 1u64 << gpu_bit(index)?;
                    pair.attribute = u64::from(if answer.access & bit != 0 {
                        HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE
                    } else if answer.in_place & bit != 0 {
                        HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE
                    } else {
                        HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS
                    });
                }
            }
            _ => continue,
        }
        // SAFETY: entry `i` is the caller's, writable.
        unsafe { std::ptr::write_unaligned(list.add(i), pair) };
    }
    Ok(())
}

/// `Runtime::SvmPrefetch`: the range's prefetch location becomes `agent` (the CPU agent:
/// system memory) at once, which is what ROCr answers while the prefetch is in flight and the
/// driver after it; a range the driver refuses records nothing and still completes (ROCr's
/// check of the driver's answer is an `assert`). The completion signal, if any, is decremented
/// once every dependency is 0.
fn prefetch(
    rt: &Arc<Runtime>,
    ptr: *const c_void,
    size: usize,
    agent: hsa_agent_t,
    num_deps: u32,
    deps: *const hsa_signal_t,
    completion: hsa_signal_t,
) -> Status {
    let node = agent_index(agent, rt.agents.len())?;
    if num_deps > 0 && deps.is_null() {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if num_deps > MAX_DEP_SIGNALS {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let deps: Vec<Arc<Signal>> = if num_deps == 0 {
        Vec::new()
    } else {
        // SAFETY: `num_deps` signals by the API's contract (bounded above).
        unsafe { std::slice::from_raw_parts(deps, num_deps as usize) }
            .iter()
            .map(|s| {
                rt.signals
                    .get(s.handle)
                    .ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)
            })
            .collect::<Status<_>>()?
    };
    let completion = match completion.handle {
        0 => None,
        h => Some(rt.signals.get(h).ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)?),
    };
    {
        let mut ranges = rt.svm.ranges.lock();
        ranges.forget_reused(rt);
        let recorded = pages(ptr, size).and_then(|(start, end)| {
            let writable = ranges.check(rt, start, end)?;
            ranges.set(start, end, &[Op::Prefetch(Some(node))], writable)?;
            ranges.sync_tables(rt)
        });
        if let Err(status) = recorded {
            tracing::debug!(
                status,
                "prefetch of a range the driver refuses: nothing recorded"
            );
        }
    }
    let Some(completion) = completion else {
        return Ok(());
    };
    if deps.iter().all(|d| d.load() == 0) {
        completion.subtract(1);
        return Ok(());
    }
    std::thread::Builder::new()
        .name("hsa-soft-prefetch".into())
        .spawn(move || {
            for dep in &deps {
                while !dep
                    .wait(
                        Condition::Eq,
                        0,
                        Some(std::time::Duration::from_millis(100)),
                    )
                    .1
                {}
            }
            completion.subtract(1);
        })
        .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    Ok(())
}

hsa_api! {
    /// `hsa_amd_svm_attributes_set` (see the module documentation).
    fn hsa_amd_svm_attributes_set(ptr: *mut c_void, size: usize, attribute_list: *mut hsa_amd_svm_attribute_pair_t, attribute_count: usize) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            // SAFETY: the list's length is the caller's contract.
            unsafe { set(&rt, ptr, size, attribute_list, attribute_count) }
        })
    }

    /// `hsa_amd_svm_attributes_get` (see the module documentation).
    fn hsa_amd_svm_attributes_get(ptr: *mut c_void, size: usize, attribute_list: *mut hsa_amd_svm_attribute_pair_t, attribute_count: usize) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            // SAFETY: as above, the pairs writable.
            unsafe { get(&rt, ptr, size, attribute_list, attribute_count) }
        })
    }

    /// `hsa_amd_svm_prefetch_async` (see the module documentation).
    fn hsa_amd_svm_prefetch_async(ptr: *mut c_void, size: usize, agent: hsa_agent_t, num_dep_signals: u32, dep_signals: *const hsa_signal_t, completion_signal: hsa_signal_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            prefetch(&rt, ptr, size, agent, num_dep_signals, dep_signals, completion_signal)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(r: &Ranges) -> Vec<(u64, u64, Attrs)> {
        r.by_start
            .iter()
            .map(|(&s, x)| (s, x.end, x.attrs.clone()))
            .collect()
    }

    #[test]
    fn a_set_splits_fills_gaps_and_merges_equal_neighbours() {
        let mut r = Ranges::default();
        r.set(0x10000, 0x15000, &[Op::Access(1)], true).unwrap();
        r.set(
            0x11000,
            0x13000,
            &[Op::SetFlags(FLAG_GPU_READ_MOSTLY)],
            true,
        )
        .unwrap();
        let got = ranges(&r);
        assert_eq!(
            got.iter().map(|(s, e, _)| (*s, *e)).collect::<Vec<_>>(),
            [(0x10000, 0x11000), (0x11000, 0x13000), (0x13000, 0x15000)]
        );
        assert!(got.iter().all(|(_, _, a)| a.access == 2));
        assert_eq!(got[1].2.flags & FLAG_GPU_READ_MOSTLY, FLAG_GPU_READ_MOSTLY);
        // Clearing the flag makes the three equal again: one range.
        r.set(
            0x11000,
            0x13000,
            &[Op::ClearFlags(FLAG_GPU_READ_MOSTLY)],
            true,
        )
        .unwrap();
        assert_eq!(ranges(&r).len(), 1);
        // A set across a gap fills it with a new range of the defaults.
        r.set(0x14000, 0x18000, &[Op::Granularity(3)], true)
            .unwrap();
        let got = ranges(&r);
        assert_eq!(got.last().map(|x| (x.0, x.1)), Some((0x15000, 0x18000)));
        assert_eq!(got.last().map(|x| x.2.access), Some(0));
    }

    #[test]
    fn answers_agree_with_kfd_over_several_ranges() {
        let mut r = Ranges::default();
        // Nothing there: the defaults.
        let d = r.answer(0x1000, 0x2000);
        assert_eq!((d.preferred, d.granularity, d.access), (None, 9, 0));
        assert_eq!(d.flags_and, FLAG_HOST_ACCESS | FLAG_COHERENT);
        r.set(
            0x1000,
            0x3000,
            &[Op::Preferred(Some(1)), Op::InPlace(1)],
            true,
        )
        .unwrap();
        r.set(
            0x3000,
            0x4000,
            &[Op::Preferred(Some(0)), Op::Access(1), Op::Granularity(2)],
            true,
        )
        .unwrap();
        let a = r.answer(0x1000, 0x3000);
        assert_eq!(
            (a.preferred, a.in_place, a.access, a.granularity),
            (Some(1), 2, 0, 9)
        );
        let b = r.answer(0x2000, 0x4000);
        assert_eq!(
            (b.preferred, b.in_place, b.access, b.granularity),
            (None, 0, 0, 2)
        );
        // A gap between ranges is not looked at.
        r.set(0x8000, 0x9000, &[Op::Preferred(Some(1))], true)
            .unwrap();
        assert_eq!(r.answer(0x2000, 0x3000).preferred, Some(1));
        assert_eq!(r.answer(0x1000, 0x9000).preferred, None);
        r.forget(0x2000, 0x3000);
        assert_eq!(
            r.answer(0x2000, 0x3000).flags_or,
            FLAG_HOST_ACCESS | FLAG_COHERENT
        );
        assert_eq!(r.answer(0x1000, 0x2000).preferred, Some(1));
    }

    #[test]
    fn reach_follows_access_and_read_only() {
        let mut a = Attrs::new(true);
        assert_eq!(a.reach(1), None);
        a.apply(Op::InPlace(1));
        assert_eq!(a.reach(1), Some(true));
        a.apply(Op::SetFlags(FLAG_GPU_RO));
        assert_eq!(a.reach(1), Some(false));
        a.apply(Op::NoAccess(1));
        assert_eq!(a.reach(1), None);
        assert_eq!(Attrs::new(false).reach(2), None);
    }

    #[test]
    fn pages_are_rocrs_alignment() {
        let p = |a: u64, n: usize| pages(a as *const c_void, n);
        assert_eq!(p(0x1234, 10), Ok((0x1000, 0x2000)));
        assert_eq!(p(0x1000, 0), Ok((0x1000, 0x1000)));
        assert_eq!(p(u64::MAX - 4, 100), Err(HSA_STATUS_ERROR));
    }
}
