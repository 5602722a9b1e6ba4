//! Running a dispatch: host threads claim work-groups in order; each thread keeps a few
//! work-groups resident and time-slices among their waves, admitting another work-group when
//! every resident one is waiting (all its waves in `s_sleep` or at a barrier). So spin-waits on
//! values other work-groups write (look-back scans, sparse solvers) make progress, `s_barrier`
//! holds a wave until its work-group arrives, `ds_gws_barrier` holds it until enough waves of
//! the whole dispatch arrive (grid sync: every work-group must be resident at once, else a
//! typed error), and a dispatch that never ends stops with a typed timeout naming a wave that
//! was still running. The first fault stops every thread. Not for instruction semantics.

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::dispatch::{workgroup_extent, Dispatch, Layout, SgprValue};
use crate::error::{DispatchError, ExecError, FaultKind, Site, WaveId};
use crate::exec::table::Table;
use crate::exec::{lower, Block, Ctl, DynMemory, Env, Fault, Spans};
use crate::isa::{Encoding, Isa, Op};
use crate::lds::Lds;
use crate::memory::GuestMemory;
use crate::program::{DecodeStop, Program};
use crate::scratch::{wave_bytes, Scratch, ScratchPool};
use crate::wave::{Mask, Status, Wave, LANES};

use crate::Services;
use rustc_hash::FxHashMap;

/// How the emulator runs dispatches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Host threads per dispatch (at most one per work-group).
    pub threads: usize,
    /// A dispatch running longer than this ends with [`ExecError::Timeout`]; `None` waits
    /// forever. The initial value: [`Emulator::set_timeout`] changes it for later dispatches.
    pub timeout: Option<Duration>,
    /// Scratch bytes per work-item for kernels with a dynamic stack (recursion, calls through
    /// pointers), when the dispatch asks for less.
    pub dynamic_stack: u32,
    /// The most scratch any work-item gets (32 lanes x this per wave).
    pub scratch_cap: u32,
    /// Host memory all scratch of the emulator's dispatches may take at once, in bytes. A
    /// work-group is admitted only when its waves' whole private segments fit beside those of
    /// the work-groups already resident (so fewer are resident when each needs much); a
    /// dispatch whose one work-group needs more is refused
    /// ([`crate::DispatchError::ScratchTooLarge`]). Freed buffers kept for reuse count too.
    pub scratch_budget: u64,
    /// Most work-groups one thread keeps resident while others wait.
    pub max_resident: usize,
    /// Wave instructions a wave runs before the next wave gets a turn.
    pub slice: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            timeout: Some(Duration::from_secs(120)),
            dynamic_stack: 16 * 1024,
            scratch_cap: 1 << 20,
            scratch_budget: DEFAULT_SCRATCH_BUDGET,
            max_resident: 64,
            slice: 4096,
        }
    }
}

/// [`Config::scratch_budget`]'s default, 4 GiB (rocload's software agent passes the smaller of
/// this and a quarter of the host's memory).
pub const DEFAULT_SCRATCH_BUDGET: u64 = 4 << 30;

/// What a completed dispatch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Host threads that ran it (fewer than configured for a small grid or a CU mask).
    pub workers: usize,
    /// Wave instructions executed.
    pub wave_instructions: u64,
    /// Waves run.
    pub waves: u64,
    /// Work-groups run.
    pub workgroups: u64,
    /// Wall time.
    pub duration: Duration,
}

/// The emulator: configuration plus the decode cache and the scratch memory shared by its
/// dispatches.
#[derive(Debug)]
pub struct Emulator {
    config: Config,
    program: Program,
    scratch: ScratchPool,
    /// Waves kept from one dispatch for the next, with the kernel (descriptor address) that
    /// last ran on them (see [`SPARE_WAVES`]).
    spare: Mutex<Spare>,
    /// The timeout of dispatches that start from now on, in nanoseconds ([`NO_TIMEOUT`]:
    /// none).
    timeout_ns: AtomicU64,
}

/// Waves an emulator keeps between dispatches. A wave's register files are 33 KiB; making and
/// zeroing them for every dispatch was the largest part of an empty kernel's cost (a graph of
/// empty kernels is mostly that). A wave kept from a dispatch of the same kernel is set up as
/// a wave reused within a dispatch is: the registers the kernel is granted are zeroed, the
/// others hold what an earlier wave of that kernel left (on the hardware they are undefined).
/// A wave that ran another kernel has all its registers zeroed, so no dispatch sees another
/// kernel's values.
const SPARE_WAVES: usize = 64;

/// The waves an emulator keeps, and the kernel that last ran on them: a `Vec<Wave<N>>` of
/// the width that kernel ran at (a dispatch of the other width makes new waves).
#[derive(Debug, Default)]
struct Spare {
    kernel: u64,
    waves: Option<Box<dyn std::any::Any + Send>>,
}

impl Spare {
    /// The kept waves if they are `N` lanes wide.
    fn take<const N: usize>(&mut self) -> Vec<Wave<N>> {
        self.waves
            .take()
            .and_then(|w| w.downcast::<Vec<Wave<N>>>().ok())
            .map_or_else(Vec::new, |w| *w)
    }
}

/// Waves for one thread's work-groups: its own (this dispatch's kernel ran on them, or the
/// same kernel in an earlier dispatch) and others kept from another kernel, zeroed when used.
struct Pool<const N: usize> {
    own: Vec<Wave<N>>,
    other: Vec<Wave<N>>,
}

impl<const N: usize> Pool<N> {
    /// A wave whose registers hold nothing of another kernel; `granted` VGPRs zeroed, and as
    /// many AGPRs when the kernel has them.
    fn wave(&mut self, granted: usize, agprs: bool) -> Wave<N> {
        let (mut w, granted) = match self.own.pop() {
            Some(w) => (w, granted),
            None => match self.other.pop() {
                Some(w) => (w, usize::MAX),
                None => return Wave::new(),
            },
        };
        for r in w.v.iter_mut().take(granted) {
            *r = [0; N];
        }
        if agprs && granted != usize::MAX {
            let base = usize::from(crate::wave::AGPR_BASE);
            for r in w.v.iter_mut().skip(base).take(granted) {
                *r = [0; N];
            }
        }
        w
    }
}

/// [`Emulator::timeout_ns`] when dispatches may run forever.
const NO_TIMEOUT: u64 = u64::MAX;

fn timeout_ns(t: Option<Duration>) -> u64 {
    t.map_or(NO_TIMEOUT, |t| {
        u64::try_from(t.as_nanos())
            .unwrap_or(NO_TIMEOUT - 1)
            .min(NO_TIMEOUT - 1)
    })
}

impl Default for Emulator {
    fn default() -> Emulator {
        Emulator::new(Config::default())
    }
}

/// A wave and where it is in the code (a block of its thread's [`Code`]).
struct Slot<const N: usize> {
    wave: Wave<N>,
    block: u32,
    idx: usize,
    /// At a grid barrier: its resource and the generation it waits to see pass.
    grid_wait: (u8, u64),
}

/// GWS resources.
const GWS_RESOURCES: usize = 64;

/// The dispatch's grid barriers (`ds_gws_barrier`), by GWS resource: arrivals counted under a
/// lock, and a generation that waiting waves poll without it.
struct GridBarriers {
    /// (waves arrived, waves awaited) of the open round.
    arrivals: Mutex<[(u32, u32); GWS_RESOURCES]>,
    generation: [AtomicU64; GWS_RESOURCES],
}

impl GridBarriers {
    fn new() -> GridBarriers {
        GridBarriers {
            arrivals: Mutex::new([(0, 0); GWS_RESOURCES]),
            generation: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// One wave arrives at `resource`'s barrier awaiting `waves`: `None` when it opened the
    /// barrier, else the generation to wait out. The first arrival of a round sets the count.
    fn arrive(&self, resource: u8, waves: u32) -> Option<u64> {
        let r = usize::from(resource) % GWS_RESOURCES;
        let mut a = self.arrivals.lock().unwrap_or_else(|p| p.into_inner());
        let (arrived, awaited) = &mut a[r];
        if *arrived == 0 {
            *awaited = waves;
        }
        *arrived += 1;
        if *arrived >= *awaited {
            *arrived = 0;
            self.generation[r].fetch_add(1, Ordering::SeqCst);
            None
        } else {
            Some(self.generation[r].load(Ordering::SeqCst))
        }
    }

    /// Whether the round a wave waits on (`grid_wait`) has opened.
    fn opened(&self, (resource, generation): (u8, u64)) -> bool {
        self.generation[usize::from(resource) % GWS_RESOURCES].load(Ordering::SeqCst) != generation
    }
}

/// One host thread's view of the decode cache: blocks by index, so running waves hold plain
/// indices and the hot path takes no reference counts, and each block's successors once
/// followed (chaining: a taken branch, a fall-through or a repeated computed jump goes to
/// the next block without a lookup). A `Code` lives for one dispatch on one thread, so its
/// links go with the code they point into: blocks the emulator forgets
/// ([`Emulator::forget_code`]) are never linked from a later dispatch.
#[derive(Default)]
struct Code {
    blocks: Vec<Arc<Block>>,
    /// Per block, per [`Link`]: the block last followed that way, or [`NO_LINK`].
    links: Vec<[u32; 3]>,
    index: FxHashMap<u64, u32>,
}

/// How a wave left a block.
#[derive(Clone, Copy)]
enum Link {
    /// A taken branch to its static target.
    Taken = 0,
    /// Off its end, to the next instruction.
    Fall = 1,
    /// A computed jump (`s_setpc`, `s_swappc`): linked to the last target, checked each time.
    Jump = 2,
}

const NO_LINK: u32 = u32::MAX;

impl Code {
    fn at(&mut self, sh: &Shared<'_>, pc: u64) -> u32 {
        if let Some(&i) = self.index.get(&pc) {
            return i;
        }
        let b = sh.program.block(sh.isa, pc, sh.mem);
        let i = self.blocks.len() as u32;
        self.blocks.push(b);
        self.links.push([NO_LINK; 3]);
        self.index.insert(pc, i);
        i
    }

    /// The block at `pc`, reached from block `from` by `how`: its link when that still leads
    /// to `pc` (a branch in the middle of a hand-built block, or a computed jump elsewhere,
    /// may not), else a lookup that becomes the link.
    #[inline(always)]
    fn follow(&mut self, sh: &Shared<'_>, from: u32, how: Link, pc: u64) -> u32 {
        let linked = self.links[from as usize][how as usize];
        if let Some(b) = self.blocks.get(linked as usize) {
            if b.start == pc {
                return linked;
            }
        }
        let i = self.at(sh, pc);
        self.links[from as usize][how as usize] = i;
        i
    }
}

struct Group<const N: usize> {
    /// The work-group's id.
    id: [u32; 3],
    waves: Vec<Slot<N>>,
    lds: Lds,
    /// Scratch bytes this work-group holds in the emulator's budget.
    scratch: u64,
}

/// The first failure, with its payload still erased.
struct Failure {
    fault: Box<Fault>,
    pc: u64,
    /// The operation and the form it was decoded from (for an unsupported one's report).
    op: Op,
    form: Encoding,
    /// The wave (filled in by [`run_group`], which knows the work-group).
    wave: Option<WaveId>,
}

enum Stop {
    Fault(Failure),
    Decode(DecodeStop),
    /// The deadline passed; [`Shared::stuck`] says where a wave was.
    Timeout,
    /// A worker thread panicked (an emulator bug).
    Panicked(String),
    /// A grid barrier at this PC awaits more waves than can be resident at once.
    GridBarrier {
        pc: u64,
        waves: u32,
        resident: u64,
    },
}

struct Shared<'a> {
    d: &'a Dispatch,
    layout: Layout,
    /// The instruction set the code is decoded with.
    isa: &'static Isa,
    program: &'a Program,
    mem: &'a dyn DynMemory,
    services: &'a dyn Services,
    config: &'a Config,
    scratch: &'a ScratchPool,
    /// The emulator's waves kept between dispatches.
    spare: &'a Mutex<Spare>,
    /// Scratch bytes one work-group reserves (all its waves' private segments).
    group_scratch: u64,
    next: AtomicU64,
    done: AtomicU64,
    stop: AtomicBool,
    failure: Mutex<Option<Stop>>,
    deadline: Option<Instant>,
    /// Set when the deadline passed: every thread then names a wave it still holds.
    timed_out: AtomicBool,
    /// The wave a timeout report names, and its PC, with its rank (lower is better: running,
    /// then asleep, then waiting).
    stuck: Mutex<Option<(u8, WaveId, u64)>>,
    grid: GridBarriers,
    /// The most waves resident at once (threads x resident work-groups x waves per group),
    /// bounded by the grid's and by the work-groups whose scratch fits in the budget.
    resident_waves: u64,
}

impl Shared<'_> {
    /// Offers the most telling unfinished wave among `groups` for the timeout report.
    fn note_stuck<const N: usize>(&self, groups: &[Group<N>]) {
        let rank = |s: Status| match s {
            Status::Ready => 0,
            Status::Sleeping => 1,
            _ => 2,
        };
        let best = groups
            .iter()
            .flat_map(|g| g.waves.iter().map(move |s| (g.id, s)))
            .filter(|(_, s)| s.wave.status != Status::Ended)
            .min_by_key(|(_, s)| rank(s.wave.status));
        if let Some((id, s)) = best {
            let r = rank(s.wave.status);
            let mut stuck = self.stuck.lock().unwrap_or_else(|p| p.into_inner());
            let better = match *stuck {
                Some((old, _, _)) => r < old,
                None => true,
            };
            if better {
                let wave = WaveId {
                    workgroup: id,
                    wave: s.wave.index,
                };
                *stuck = Some((r, wave, s.wave.pc));
            }
        }
    }

    fn fail(&self, s: Stop) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(s);
        }
        self.stop.store(true, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Stats {
    instructions: u64,
    waves: u64,
    groups: u64,
}

/// How a wave's turn ended.
enum TurnEnd {
    Budget,
    Sleep,
    Barrier,
    GridBarrier,
    Ended,
}

impl Emulator {
    /// An emulator with `config`.
    pub fn new(config: Config) -> Emulator {
        Emulator {
            scratch: ScratchPool::new(config.scratch_budget),
            spare: Mutex::new(Spare::default()),
            timeout_ns: AtomicU64::new(timeout_ns(config.timeout)),
            config,
            program: Program::new(),
        }
    }

    /// Sets the timeout of dispatches that start from now on (`None`: none); running ones keep
    /// theirs.
    pub fn set_timeout(&self, timeout: Option<Duration>) {
        self.timeout_ns
            .store(timeout_ns(timeout), Ordering::Relaxed);
    }

    /// The timeout of dispatches that start now.
    pub fn timeout(&self) -> Option<Duration> {
        match self.timeout_ns.load(Ordering::Relaxed) {
            NO_TIMEOUT => None,
            ns => Some(Duration::from_nanos(ns)),
        }
    }

    /// Whether a dispatch whose work-items need `per_workitem` bytes of scratch, in
    /// work-groups of `workgroup_items`, can run: its per-item size within
    /// [`Config::scratch_cap`] and one work-group's within [`Config::scratch_budget`]. What
    /// [`Emulator::run`] checks, for embedders that refuse such a launch before queueing it.
    ///
    /// # Errors
    /// [`DispatchError::TooMuchScratch`] or [`DispatchError::ScratchTooLarge`].
    pub fn check_scratch(
        &self,
        per_workitem: u32,
        workgroup_items: u64,
    ) -> Result<(), DispatchError> {
        if per_workitem > self.config.scratch_cap {
            return Err(DispatchError::TooMuchScratch {
                bytes: per_workitem,
                cap: self.config.scratch_cap,
            });
        }
        let workgroup_bytes = workgroup_items
            .div_ceil(LANES as u64)
            .saturating_mul(wave_bytes(LANES as u32, per_workitem));
        if workgroup_bytes > self.scratch.budget() {
            return Err(DispatchError::ScratchTooLarge {
                per_workitem,
                workgroup_bytes,
                budget: self.scratch.budget(),
            });
        }
        Ok(())
    }

    /// Scratch bytes reserved by resident work-groups now, the most reserved at once so far,
    /// and bytes of freed buffers kept for reuse.
    pub fn scratch_usage(&self) -> (u64, u64, u64) {
        self.scratch.usage()
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The decode cache (for embedders that forget unloaded code, and for tests).
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Forgets decoded code overlapping `[start, start + len)`; call it when code is unloaded.
    pub fn forget_code(&self, start: u64, len: u64) {
        self.program.forget(start, len);
        // A kernel loaded later at a freed descriptor's address is another kernel.
        let mut spare = self.spare.lock().unwrap_or_else(|p| p.into_inner());
        if spare.kernel >= start && spare.kernel - start < len {
            spare.waves = None;
        }
    }

    /// Runs one dispatch to completion.
    ///
    /// # Errors
    /// [`ExecError`]: a refused dispatch, the first memory fault (with `mem`'s payload), trap,
    /// unsupported or invalid instruction, or a timeout.
    pub fn run<M: GuestMemory, S: Services>(
        &self,
        d: &Dispatch,
        mem: &M,
        services: &S,
    ) -> Result<Report, ExecError<M::Fault>> {
        let start = Instant::now();
        // The ISA gate: a family the engine executes, at a width it runs.
        let layout = Layout::new(d, self.config.dynamic_stack, self.config.scratch_cap)?;
        let family = layout.family;
        match layout.lanes {
            32 => match family.table::<32>() {
                Some(t) => self.run_width(t, layout, start, d, mem, services),
                None => Err(DispatchError::WaveSize {
                    processor: d.processor,
                    lanes: layout.lanes,
                }
                .into()),
            },
            _ => match family.table::<64>() {
                Some(t) => self.run_width(t, layout, start, d, mem, services),
                None => Err(DispatchError::WaveSize {
                    processor: d.processor,
                    lanes: layout.lanes,
                }
                .into()),
            },
        }
    }

    /// [`Emulator::run`] for waves of `N` lanes with `table`'s handlers.
    fn run_width<const N: usize, M: GuestMemory, S: Services>(
        &self,
        table: &'static Table<N>,
        layout: Layout,
        start: Instant,
        d: &Dispatch,
        mem: &M,
        services: &S,
    ) -> Result<Report, ExecError<M::Fault>> {
        let total = layout.workgroup_count();
        // A CU mask: one worker per unit at most, each pinned to its unit's CPU.
        let units = d.compute_units.as_deref().filter(|u| !u.is_empty());
        let threads = self
            .config
            .threads
            .clamp(1, 256)
            .min(units.map_or(usize::MAX, <[u32]>::len))
            .min(usize::try_from(total).unwrap_or(usize::MAX))
            .max(1);
        let entry = layout.entry;
        let group_items: u64 = d.workgroup.iter().map(|&v| u64::from(v)).product();
        let group_waves = group_items.div_ceil(N as u64);
        self.check_scratch(layout.scratch_per_lane, group_items)?;
        let group_scratch = group_waves * wave_bytes(N as u32, layout.scratch_per_lane);
        let mut resident_groups = (threads as u64)
            .saturating_mul(self.config.max_resident.max(1) as u64)
            .min(total);
        if let Some(fit) = self.scratch.budget().checked_div(group_scratch) {
            resident_groups = resident_groups.min(fit);
        }
        let resident_waves = resident_groups.saturating_mul(group_waves);
        let shared = Shared {
            d,
            isa: layout.family.isa,
            layout,
            program: &self.program,
            mem,
            services,
            config: &self.config,
            scratch: &self.scratch,
            spare: &self.spare,
            group_scratch,
            next: AtomicU64::new(0),
            done: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            failure: Mutex::new(None),
            deadline: self.timeout().and_then(|t| start.checked_add(t)),
            timed_out: AtomicBool::new(false),
            stuck: Mutex::new(None),
            grid: GridBarriers::new(),
            resident_waves,
        };
        tracing::debug!(
            threads,
            ?units,
            workgroups = total,
            group_scratch,
            "dispatch starts"
        );
        // A panicking worker (an emulator bug) fails the dispatch; it never unwinds into the
        // caller, which may be a queue's packet processor that others wait on.
        let guarded = || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker(&shared, table)))
                .unwrap_or_else(|payload| {
                    let detail = payload
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a worker thread panicked".to_owned());
                    shared.fail(Stop::Panicked(detail));
                    Stats::default()
                })
        };
        let stats: Vec<Stats> = if threads == 1 && units.is_none() {
            vec![guarded()]
        } else {
            // Restricted dispatches always run on workers of their own, so that pinning never
            // outlives the dispatch on the caller's thread.
            std::thread::scope(|s| {
                let guarded = &guarded;
                let handles: Vec<_> = (0..threads)
                    .map(|i| {
                        let unit = units.map(|u| u[i]);
                        s.spawn(move || {
                            if let Some(unit) = unit {
                                if !crate::cpus::pin_current_thread(unit) {
                                    tracing::debug!(
                                        unit,
                                        "could not pin a worker to its unit's CPU"
                                    );
                                }
                            }
                            guarded()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_default())
                    .collect()
            })
        };
        let failure = shared
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(f) = failure {
            return Err(self.describe(f, entry, mem, &shared, start));
        }
        Ok(Report {
            workers: threads,
            wave_instructions: stats.iter().map(|s| s.instructions).sum(),
            waves: stats.iter().map(|s| s.waves).sum(),
            workgroups: stats.iter().map(|s| s.groups).sum(),
            duration: start.elapsed(),
        })
    }

    fn describe<M: GuestMemory>(
        &self,
        stop: Stop,
        entry: u64,
        mem: &M,
        sh: &Shared<'_>,
        start: Instant,
    ) -> ExecError<M::Fault> {
        let site_named = |pc: u64, name: &str| {
            // The instruction that ran, from the bytes it was decoded from; memory only when
            // no decoded block holds it (a fetch that failed).
            let mut instruction = sh
                .program
                .instruction_at(pc)
                .unwrap_or_else(|| lower::describe(sh.isa, pc, mem));
            if instruction.is_empty() {
                instruction = name.to_string();
            }
            Site {
                pc,
                offset: pc.wrapping_sub(entry) as i64,
                instruction,
            }
        };
        let site = |pc: u64| site_named(pc, "");
        match stop {
            Stop::Fault(Failure {
                fault,
                pc,
                op,
                form,
                wave,
            }) => {
                let site = |pc: u64| site_named(pc, op.name());
                match *fault {
                    Fault::Memory {
                        lane,
                        address,
                        kind,
                    } => ExecError::MemoryFault {
                        site: site(pc),
                        lane,
                        wave,
                        address,
                        kind: match kind {
                            FaultKind::Guest(p) => match downcast::<M::Fault>(p) {
                                Ok(f) => FaultKind::Guest(f),
                                Err(()) => {
                                    return ExecError::Invalid {
                                        site: site(pc),
                                        word: 0,
                                        detail: "fault payload of another type".into(),
                                    }
                                }
                            },
                            FaultKind::Lds(l) => FaultKind::Lds(l),
                            FaultKind::Scratch(s) => FaultKind::Scratch(s),
                        },
                    },
                    Fault::Trap(code) => ExecError::Trap {
                        site: site(pc),
                        code,
                    },
                    Fault::Unsupported => ExecError::Unsupported {
                        site: site(pc),
                        mnemonic: op.name().to_string(),
                        encoding: form.name().to_string(),
                    },
                }
            }
            Stop::Decode(DecodeStop::Fetch { pc, fault }) => match downcast::<M::Fault>(fault) {
                Ok(fault) => ExecError::Fetch { pc, fault },
                Err(()) => ExecError::Invalid {
                    site: site(pc),
                    word: 0,
                    detail: "instruction fetch failed".into(),
                },
            },
            Stop::Decode(DecodeStop::Invalid { pc, word, detail }) => ExecError::Invalid {
                site: Site {
                    pc,
                    offset: pc.wrapping_sub(entry) as i64,
                    instruction: String::new(),
                },
                word,
                detail,
            },
            Stop::GridBarrier {
                pc,
                waves,
                resident,
            } => ExecError::GridBarrier {
                site: site(pc),
                waves,
                resident,
            },
            Stop::Panicked(detail) => ExecError::Internal { detail },
            Stop::Timeout => {
                let stuck = *sh.stuck.lock().unwrap_or_else(|p| p.into_inner());
                ExecError::Timeout {
                    elapsed: start.elapsed(),
                    workgroups_done: sh.done.load(Ordering::SeqCst),
                    workgroups: sh.layout.workgroup_count(),
                    site: stuck.map(|(_, _, pc)| site(pc)),
                    wave: stuck.map(|(_, w, _)| w),
                }
            }
        }
    }
}

fn downcast<F: 'static>(p: Box<dyn Any + Send>) -> Result<F, ()> {
    p.downcast::<F>().map(|b| *b).map_err(|_| ())
}

/// A thread's resident work-groups. Whatever they hold of the scratch budget goes back when
/// the thread stops, however it stops (the grid done, a fault, a timeout, a panic).
struct Resident<'s, 'a, const N: usize> {
    sh: &'s Shared<'a>,
    groups: Vec<Group<N>>,
}

impl<const N: usize> Drop for Resident<'_, '_, N> {
    fn drop(&mut self) {
        for g in &mut self.groups {
            retire(self.sh, g);
        }
    }
}

/// Gives a finished (or abandoned) work-group's scratch back: its reservation, then its waves'
/// buffers, zeroed where written, for reuse.
fn retire<const N: usize>(sh: &Shared<'_>, g: &mut Group<N>) {
    sh.scratch.release(g.scratch);
    g.scratch = 0;
    for s in &mut g.waves {
        sh.scratch.give(s.wave.scratch.take_buffer());
    }
}

/// One host thread's loop, with the waves the emulator kept from earlier dispatches (the
/// first thread takes them). The waves this kernel ran on are kept for later dispatches, up
/// to [`SPARE_WAVES`], when it ends; kept waves of another kernel it did not use go.
fn worker<const N: usize>(sh: &Shared<'_>, table: &Table<N>) -> Stats {
    let kernel = sh.d.descriptor_address;
    let (kept_kernel, kept) = {
        let mut spare = sh.spare.lock().unwrap_or_else(|p| p.into_inner());
        (spare.kernel, spare.take::<N>())
    };
    let mut pool = if kept_kernel == kernel {
        Pool {
            own: kept,
            other: Vec::new(),
        }
    } else {
        Pool {
            own: Vec::new(),
            other: kept,
        }
    };
    let stats = work(sh, table, &mut pool);
    let mut spare = sh.spare.lock().unwrap_or_else(|p| p.into_inner());
    let mut waves = if spare.kernel == kernel {
        spare.take::<N>()
    } else {
        // Another thread kept waves of another dispatch meanwhile: the newer ones stay.
        Vec::new()
    };
    let room = SPARE_WAVES.saturating_sub(waves.len());
    waves.extend(pool.own.into_iter().take(room));
    *spare = Spare {
        kernel,
        waves: Some(Box::new(waves)),
    };
    stats
}

fn work<const N: usize>(sh: &Shared<'_>, table: &Table<N>, pool: &mut Pool<N>) -> Stats {
    let mut stats = Stats::default();
    let mut resident = Resident {
        sh,
        groups: Vec::new(),
    };
    let mut local = Code::default();
    let spans = Spans::default();
    let total = sh.layout.workgroup_count();
    let mut idle_rounds = 0u32;
    loop {
        if sh.stop.load(Ordering::Relaxed) {
            if sh.timed_out.load(Ordering::SeqCst) {
                sh.note_stuck(&resident.groups);
            }
            break;
        }
        if let Some(dl) = sh.deadline {
            if Instant::now() >= dl {
                // Every thread names what it holds before it stops (the thread that noticed
                // may be between work-groups).
                sh.timed_out.store(true, Ordering::SeqCst);
                sh.note_stuck(&resident.groups);
                sh.fail(Stop::Timeout);
                break;
            }
        }
        let groups = &mut resident.groups;
        let all_waiting = !groups.is_empty()
            && groups.iter().all(|g| {
                g.waves.iter().all(|s| {
                    matches!(
                        s.wave.status,
                        Status::Sleeping | Status::Barrier | Status::GridBarrier | Status::Ended
                    )
                })
            });
        if groups.is_empty() || (all_waiting && groups.len() < sh.config.max_resident) {
            if sh.next.load(Ordering::SeqCst) >= total {
                if groups.is_empty() {
                    break;
                }
            } else if sh.scratch.try_reserve(sh.group_scratch) {
                // The reservation comes first, so a claimed work-group never waits for memory.
                let n = sh.next.fetch_add(1, Ordering::SeqCst);
                if n < total {
                    groups.push(new_group(sh, n, pool, &mut local));
                    stats.groups += 1;
                } else {
                    sh.scratch.release(sh.group_scratch);
                    if groups.is_empty() {
                        break;
                    }
                }
            }
            // Else the budget is taken by other work-groups (of this or another dispatch):
            // run what is resident, or wait for them to end.
        }
        let mut progressed = false;
        let mut i = 0;
        while i < groups.len() {
            match run_group(sh, table, &mut groups[i], &mut local, &spans, &mut stats) {
                Ok(p) => progressed |= p,
                Err(s) => {
                    sh.fail(s);
                    return stats;
                }
            }
            if groups[i]
                .waves
                .iter()
                .all(|s| s.wave.status == Status::Ended)
            {
                let mut g = groups.swap_remove(i);
                retire(sh, &mut g);
                stats.waves += g.waves.len() as u64;
                pool.own.extend(g.waves.into_iter().map(|s| s.wave));
                sh.done.fetch_add(1, Ordering::SeqCst);
            } else {
                i += 1;
            }
        }
        if progressed {
            idle_rounds = 0;
        } else {
            // Everything here is polling: let the host and the other threads move.
            sh.services.idle();
            idle_rounds = idle_rounds.saturating_add(1);
            if idle_rounds > 64 {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                std::thread::yield_now();
            }
        }
    }
    stats
}

/// Sets up work-group number `n`: its waves' registers per the layout, and its LDS.
fn new_group<const N: usize>(
    sh: &Shared<'_>,
    n: u64,
    pool: &mut Pool<N>,
    local: &mut Code,
) -> Group<N> {
    let l = &sh.layout;
    let id = l.workgroup_id(n);
    let ext = workgroup_extent(sh.d, id);
    let items = ext[0] * ext[1] * ext[2];
    let nwaves = items.div_ceil(N as u32);
    let entry_block = local.at(sh, l.entry);
    let mut waves = Vec::with_capacity(nwaves as usize);
    for wi in 0..nwaves {
        // VGPRs start undefined on the hardware; the ones the kernel may use are zeroed so
        // runs are deterministic (a pooled wave may hold an earlier group's values).
        let mut w = pool.wave(l.granted_vgprs as usize, l.family.isa.agprs);
        w.s = [0; crate::wave::SREGS];
        for &(i, v) in &l.sgprs {
            w.s[i as usize] = match v {
                SgprValue::Const(c) => c,
                SgprValue::WorkgroupId(dim) => id[dim as usize],
            };
        }
        let first = wi * N as u32;
        let live = (items - first).min(N as u32);
        w.set_exec(Mask::first(live));
        // The first lane's work-item id, then the next lane's by counting on: three divisions
        // per lane were most of setting up a small work-group.
        let (ex, ey) = (ext[0].max(1), ext[1].max(1));
        let (mut x, mut y, mut z) = (first % ex, first / ex % ey, first / (ex * ey));
        for lane in 0..live as usize {
            if l.packed_ids {
                w.v[0][lane] = x | y << 10 | z << 20;
            } else {
                w.v[0][lane] = x;
                if l.id_vgprs >= 2 {
                    w.v[1][lane] = y;
                }
                if l.id_vgprs >= 3 {
                    w.v[2][lane] = z;
                }
            }
            x += 1;
            if x == ex {
                x = 0;
                y += 1;
                if y == ey {
                    y = 0;
                    z += 1;
                }
            }
        }
        w.scc = false;
        w.pc = l.entry;
        w.mode = l.modes.mode_register();
        w.trapsts = 0;
        w.gpr_idx = false;
        // gfx940's architected flat scratch starts at the wave's scratch; elsewhere the
        // kernel prologue sets FLAT_SCRATCH from the init SGPRs (the same value).
        w.flat_scratch = crate::scratch::SCRATCH_BASE;
        w.shared_base_hi = (sh.d.shared_aperture >> 32) as u32;
        w.private_base_hi = (sh.d.private_aperture >> 32) as u32;
        w.scratch = Scratch::new(
            l.scratch_per_lane,
            N as u32,
            sh.scratch
                .take(wave_bytes(N as u32, l.scratch_per_lane) as usize),
        );
        w.status = Status::Ready;
        w.index = wi;
        w.instructions = 0;
        waves.push(Slot {
            wave: w,
            block: entry_block,
            idx: 0,
            grid_wait: (0, 0),
        });
    }
    Group {
        id,
        waves,
        lds: Lds::new(l.lds_bytes),
        scratch: sh.group_scratch,
    }
}

/// Gives every ready wave of `g` a turn. Returns whether any wave did more than go back to
/// sleep or wait.
fn run_group<const N: usize>(
    sh: &Shared<'_>,
    table: &Table<N>,
    g: &mut Group<N>,
    local: &mut Code,
    spans: &Spans,
    stats: &mut Stats,
) -> Result<bool, Stop> {
    let mut progressed = false;
    // Sleepers from the last round may run again, and so may waves whose grid barrier opened.
    for s in g.waves.iter_mut() {
        match s.wave.status {
            Status::Sleeping => s.wave.status = Status::Ready,
            Status::GridBarrier if sh.grid.opened(s.grid_wait) => {
                s.wave.status = Status::Ready;
                progressed = true;
            }
            _ => {}
        }
    }
    for wi in 0..g.waves.len() {
        if g.waves[wi].wave.status != Status::Ready {
            continue;
        }
        let mut env = Env::new(sh.mem, &mut g.lds, sh.services, spans);
        let slot = &mut g.waves[wi];
        let before = slot.wave.instructions;
        let end = turn(sh, table, slot, &mut env, local).map_err(|mut stop| {
            if let Stop::Fault(f) = &mut stop {
                f.wave = Some(WaveId {
                    workgroup: g.id,
                    wave: slot.wave.index,
                });
            }
            stop
        })?;
        let ran = slot.wave.instructions - before;
        stats.instructions += ran;
        match end {
            TurnEnd::Budget => progressed = true,
            TurnEnd::Ended => {
                slot.wave.status = Status::Ended;
                progressed = true;
            }
            TurnEnd::Sleep => slot.wave.status = Status::Sleeping,
            TurnEnd::Barrier => {
                slot.wave.status = Status::Barrier;
                progressed = true;
            }
            TurnEnd::GridBarrier => {
                slot.wave.status = Status::GridBarrier;
                progressed = true;
            }
        }
    }
    // Release the barrier when every wave still running has reached it.
    let waiting = g.waves.iter().any(|s| s.wave.status == Status::Barrier);
    if waiting
        && g.waves
            .iter()
            .all(|s| matches!(s.wave.status, Status::Barrier | Status::Ended))
    {
        for s in g.waves.iter_mut() {
            if s.wave.status == Status::Barrier {
                s.wave.status = Status::Ready;
            }
        }
        progressed = true;
    }
    Ok(progressed)
}

/// What a turn does after a uop that did not return [`Ctl::Next`].
enum After {
    /// Carry on with the block's next uop (a grid barrier that opened on arrival).
    Resume,
    /// Continue at this address, reached that way.
    Go(u64, Link),
    /// The turn is over.
    Done(Result<TurnEnd, Stop>),
}

/// Handles a uop's [`Ctl`] other than `Next` (out of line, so the hot loop of [`turn`]
/// keeps one compare per uop). `n` is the count of uops the turn ran so far.
#[cold]
#[inline(never)]
fn after<const N: usize>(
    sh: &Shared<'_>,
    slot: &mut Slot<N>,
    env: &mut Env<'_>,
    u: &crate::exec::Uop,
    ctl: Ctl,
    n: u64,
) -> After {
    let mut done = |pc: u64, r: Result<TurnEnd, Stop>| {
        slot.wave.pc = pc;
        slot.wave.instructions += n;
        After::Done(r)
    };
    match ctl {
        Ctl::Next => After::Resume,
        Ctl::Branch => After::Go(u.imm as u64, Link::Taken),
        Ctl::Jump => After::Go(slot.wave.pc, Link::Jump),
        Ctl::Sleep => done(u.next_pc(), Ok(TurnEnd::Sleep)),
        Ctl::Barrier => done(u.next_pc(), Ok(TurnEnd::Barrier)),
        Ctl::GridBarrier => {
            let (resource, waves) = env.gws;
            if u64::from(waves) > sh.resident_waves {
                return done(
                    u.pc,
                    Err(Stop::GridBarrier {
                        pc: u.pc,
                        waves,
                        resident: sh.resident_waves,
                    }),
                );
            }
            match sh.grid.arrive(resource, waves) {
                Some(generation) => {
                    slot.grid_wait = (resource, generation);
                    done(u.next_pc(), Ok(TurnEnd::GridBarrier))
                }
                None => After::Resume,
            }
        }
        Ctl::End => done(u.pc, Ok(TurnEnd::Ended)),
        Ctl::Fault => {
            let fault = env
                .fault
                .take()
                .unwrap_or_else(|| Box::new(Fault::Unsupported));
            done(
                u.pc,
                Err(Stop::Fault(Failure {
                    fault,
                    pc: u.pc,
                    op: u.op,
                    form: u.form,
                    wave: None,
                })),
            )
        }
    }
}

/// Runs one wave until its slice is used up or it sleeps, waits, ends or faults.
fn turn<const N: usize>(
    sh: &Shared<'_>,
    table: &Table<N>,
    slot: &mut Slot<N>,
    env: &mut Env<'_>,
    code: &mut Code,
) -> Result<TurnEnd, Stop> {
    let budget = u64::from(sh.config.slice.max(1));
    let mut n = 0u64;
    let result = loop {
        let target = {
            let block: &Block = &code.blocks[slot.block as usize];
            let uops = &block.uops;
            let mut idx = slot.idx;
            let target = loop {
                // The hot loop: one call and one compare per uop.
                let mut stop = None;
                while let Some(u) = uops.get(idx) {
                    idx += 1;
                    n += 1;
                    let ctl = table.get(u.run)(&mut slot.wave, u, env);
                    if ctl != Ctl::Next {
                        stop = Some((u, ctl));
                        break;
                    }
                }
                let Some((u, ctl)) = stop else {
                    break None;
                };
                match after(sh, slot, env, u, ctl, n) {
                    After::Resume => {}
                    After::Go(pc, how) => break Some((pc, how)),
                    After::Done(r) => {
                        slot.idx = idx;
                        return r;
                    }
                }
            };
            slot.idx = idx;
            match target {
                Some(t) => t,
                None => {
                    // Fell off the end of the block.
                    let next = uops.last().map_or(block.start, |u| u.next_pc());
                    if block.stopped {
                        // Reaching the point where decoding stopped is the error; decode again
                        // for the reason (with the embedder's payload, which shared blocks do
                        // not keep).
                        if let (fresh, Some(s)) = lower::decode_block(sh.isa, next, sh.mem) {
                            if fresh.uops.is_empty() {
                                break Err(Stop::Decode(s));
                            }
                        }
                    }
                    (next, Link::Fall)
                }
            }
        };
        let (target, how) = target;
        slot.block = code.follow(sh, slot.block, how, target);
        slot.idx = 0;
        slot.wave.pc = target;
        if n >= budget {
            break Ok(TurnEnd::Budget);
        }
    };
    slot.wave.instructions += n;
    result
}
