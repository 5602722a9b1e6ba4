//! The execution engine's own predecoded form and its handlers: a [`Uop`] is one instruction
//! lowered for execution (its [`Op`], the handler that runs it, operands as register indices
//! or constant bits, modifiers, memory fields), grouped in straight-line [`Block`]s that end
//! at a branch. Handlers are generic over the wave's width and live in one module per
//! instruction class ([`salu`], [`valu`], [`vmem`], [`ds`], [`smem`], [`flow`]; memory
//! atomics of every kind in [`atomic`]); each family's handler table ([`table`]) is indexed by
//! `Op`. [`lower`] turns the decoder's instructions into uops.
//!
//! Not for decoding bytes (the decoder in [`crate::isa`] does) or scheduling waves.

use std::any::Any;
use std::ptr::NonNull;

use crate::error::FaultKind;
use crate::isa::{Encoding, Op};
use crate::lds::Lds;
use crate::memory::{Access, GuestMemory};
use crate::wave::Wave;
use crate::Services;

pub mod atomic;
pub mod bcn;
pub mod ds;
pub mod image;
pub mod flow;
pub mod lanes;
pub mod lower;
pub mod mfma;
pub mod salu;
pub mod smem;
pub mod table;
pub mod valu;
pub mod vmem;

/// An operand, resolved. Register indices are validated by [`lower`]: scalar encodings are
/// below 128 and VGPRs below 256, so multi-dword reads stay inside the register files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Opnd {
    /// No operand.
    #[default]
    None,
    /// A scalar register in the engine's layout ([`crate::wave::sreg`]: s0..s105, VCC 106/107,
    /// TTMPs, M0 124, NULL 125, EXEC 126/127). Multi-dword operands take the following ones.
    S(u8),
    /// A VGPR (multi-dword operands take the following registers).
    V(u16),
    /// A constant (inline or literal), as the bit pattern of the operand's type: 32-bit
    /// operands use the low dword, 64-bit ones all of it.
    Imm(u64),
    /// `src_shared_base`.
    SharedBase,
    /// `src_shared_limit`.
    SharedLimit,
    /// `src_private_base`.
    PrivateBase,
    /// `src_private_limit`.
    PrivateLimit,
    /// `src_pops_exiting_wave_id`.
    PopsExitingWaveId,
    /// `src_scc`.
    Scc,
    /// `src_vccz`.
    Vccz,
    /// `src_execz`.
    Execz,
    /// gfx9's FLAT_SCRATCH_LO (`flat_scratch` as a 64-bit operand): the wave's
    /// [`Wave::flat_scratch`].
    FlatScratchLo,
    /// gfx9's FLAT_SCRATCH_HI.
    FlatScratchHi,
}

/// Source and output modifiers (VOP3, VOP3P, SDWA).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mods {
    /// `neg` (VOP3) or `neg_lo` (VOP3P), one bit per source.
    pub neg: u8,
    /// `abs` per source.
    pub abs: u8,
    /// VOP3P `neg_hi` per source.
    pub neg_hi: u8,
    /// `op_sel` per source (bit 3: destination).
    pub op_sel: u8,
    /// VOP3P `op_sel_hi` per source (default all ones).
    pub op_sel_hi: u8,
    /// `clamp`.
    pub clamp: bool,
    /// Output modifier: 0 none, 1 `mul:2`, 2 `mul:4`, 3 `div:2`.
    pub omod: u8,
}

impl Mods {
    /// No modifier: what an instruction without modifiers has.
    pub const PLAIN: Mods = Mods {
        neg: 0,
        abs: 0,
        neg_hi: 0,
        op_sel: 0,
        op_sel_hi: 0b111,
        clamp: false,
        omod: 0,
    };
}

impl Default for Mods {
    fn default() -> Mods {
        Mods::PLAIN
    }
}

/// DPP16 controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dpp {
    /// `dpp_ctrl` (quad_perm 0x00-0xff, row_shl 0x101-0x10f, row_shr 0x111-0x11f, row_ror
    /// 0x121-0x12f, row_mirror 0x140, row_half_mirror 0x141, row_share 0x150-0x15f, row_xmask
    /// 0x160-0x16f).
    pub ctrl: u16,
    /// Rows written (4 bits).
    pub row_mask: u8,
    /// Banks written (4 bits).
    pub bank_mask: u8,
    /// `bound_ctrl:1`: out-of-range sources read 0 instead of disabling the lane.
    pub bound_ctrl: bool,
    /// `fi:1`: sources in disabled lanes are read anyway.
    pub fi: bool,
}

/// SDWA selections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sdwa {
    /// Destination select: 0-3 byte, 4-5 word, 6 dword.
    pub dst_sel: u8,
    /// What happens to unselected destination bits: 0 pad zeros, 1 sign-extend, 2 preserve.
    pub dst_unused: u8,
    /// Source selects.
    pub src_sel: [u8; 2],
    /// Sign-extend the selected source bits (integer ops).
    pub sext: [bool; 2],
}

/// How an instruction reads lanes: plainly, through DPP, or with SDWA selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LaneMode {
    /// Plain.
    #[default]
    Plain,
    /// DPP16 on src0.
    Dpp(Dpp),
    /// DPP8 on src0: lane `l` reads lane `(l & !7) | sel[l & 7]` (eight 3-bit selects);
    /// without `fi`, a source lane outside EXEC reads 0.
    Dpp8 {
        /// The eight selects, 3 bits each.
        sel: u32,
        /// `fi:1`.
        fi: bool,
    },
    /// SDWA.
    Sdwa(Sdwa),
}

/// Memory-instruction fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mem {
    /// Immediate offset (FLAT/GLOBAL signed 12 bits on gfx10, MUBUF 12 unsigned, DS
    /// `offset` or `offset0`, SMEM 21 signed).
    pub offset: i32,
    /// DS `offset1` (read2/write2).
    pub offset1: u16,
    /// `glc` (atomics: return the old value).
    pub glc: bool,
    /// `offen` (MUBUF: vaddr holds an offset).
    pub offen: bool,
    /// `idxen` (MUBUF: vaddr holds an index, then the offset).
    pub idxen: bool,
    /// GLOBAL's `saddr` (a 64-bit SGPR base, `off` = [`Opnd::None`]), MUBUF's `soffset`,
    /// SMEM's `soffset`.
    pub saddr: Opnd,
}

/// A handler: executes one uop on one wave of `N` lanes, and says what comes next.
pub type Handler<const N: usize> = fn(&mut Wave<N>, &Uop, &mut Env<'_>) -> Ctl;

/// What comes after a uop (one byte, returned in a register: the hot loop's only question).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Ctl {
    /// The next instruction.
    Next,
    /// A taken branch to the uop's static target ([`Uop::imm`]).
    Branch,
    /// A jump to a computed address, which the handler put in [`Wave::pc`].
    Jump,
    /// `s_sleep` or a wait: let other waves run first, then continue with the next
    /// instruction.
    Sleep,
    /// `s_barrier`: wait for the work-group, then continue with the next instruction.
    Barrier,
    /// `ds_gws_barrier`: arrive at a dispatch-wide barrier ([`Env::gws`] says which and how
    /// many waves it awaits).
    GridBarrier,
    /// `s_endpgm`.
    End,
    /// The uop could not complete: [`Env::fault`] says why.
    Fault,
}

/// Which handler runs a uop: an index into a family's handler table ([`table::Table`]),
/// normally its operation's; [`HandlerId::UNSUPPORTED`] for forms the engine does not execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandlerId(pub u16);

impl HandlerId {
    /// The handler of instructions the engine does not execute (whatever their operation).
    pub const UNSUPPORTED: HandlerId = HandlerId(Op::COUNT as u16);
    /// gfx9's VGPR index mode: VALU instructions after `s_set_gpr_idx_on` run through
    /// [`gpr_indexed`], which offsets their VGPR operands by M0's index.
    pub const GPR_INDEXED: HandlerId = HandlerId(Op::COUNT as u16 + 1);

    /// The handler of `op`.
    pub const fn of(op: Op) -> HandlerId {
        HandlerId(op as u16)
    }
}

/// One instruction, lowered for execution.
#[derive(Clone, Copy)]
pub struct Uop {
    /// Which handler runs it.
    pub run: HandlerId,
    /// The operation (names it in reports).
    pub op: Op,
    /// The encoding it was decoded from (names the form in reports).
    pub form: Encoding,
    /// Its length in bytes.
    pub size: u8,
    /// Its address.
    pub pc: u64,
    /// Destinations (`d[1]`: VOP3b's SGPR carry or compare mask destination).
    pub d: [Opnd; 2],
    /// Sources (`s[2]` for VOP2's implied VCC carry-in is filled in by [`lower`]).
    pub s: [Opnd; 3],
    /// Modifiers.
    pub m: Mods,
    /// DPP/SDWA.
    pub lanes: LaneMode,
    /// SOPK/SOPP immediate, hwreg or waitcnt field; for branches, the absolute target.
    pub imm: i64,
    /// Memory fields.
    pub mem: Mem,
    /// gfx9: a 16-bit result zeroes the destination's high half (gfx10 keeps it).
    pub zero_hi16: bool,
}

impl std::fmt::Debug for Uop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Uop")
            .field("pc", &format_args!("{:#x}", self.pc))
            .field("op", &self.op.name())
            .field("d", &self.d)
            .field("s", &self.s)
            .field("imm", &self.imm)
            .finish_non_exhaustive()
    }
}

impl Uop {
    /// A uop of `op` with no operands (fill the rest with struct update syntax).
    pub fn new(op: Op) -> Uop {
        Uop {
            run: HandlerId::of(op),
            op,
            form: Encoding::Vop3,
            size: 4,
            pc: 0,
            d: [Opnd::None; 2],
            s: [Opnd::None; 3],
            m: Mods::PLAIN,
            lanes: LaneMode::Plain,
            imm: 0,
            mem: Mem::default(),
            zero_hi16: false,
        }
    }

    /// A uop of the operation named `mnemonic` (tests and hand-assembled programs).
    ///
    /// # Panics
    /// When no operation has that name.
    pub fn named(mnemonic: &str) -> Uop {
        Uop::new(Op::from_name(mnemonic).unwrap_or_else(|| panic!("no operation {mnemonic}")))
    }

    /// Address of the next instruction.
    #[inline(always)]
    pub fn next_pc(&self) -> u64 {
        self.pc.wrapping_add(u64::from(self.size))
    }

    /// Whether it reads its lanes plainly: no DPP or SDWA, no source or output modifiers,
    /// default `op_sel` (the fast paths' premise; one 8-byte compare).
    #[inline(always)]
    pub fn plain(&self) -> bool {
        matches!(self.lanes, LaneMode::Plain) && self.m == Mods::PLAIN
    }
}

/// What happens after a uop, as [`step`] reports it (the scheduler reads [`Ctl`]).
#[cfg(any(test, feature = "internals"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The next instruction.
    Next,
    /// Continue at this address.
    Jump(u64),
    /// `s_sleep` or a wait: let other waves run first, then continue with the next
    /// instruction.
    Sleep,
    /// `s_barrier`: wait for the work-group, then continue with the next instruction.
    Barrier,
    /// `ds_gws_barrier`: arrive at a dispatch-wide barrier, wait until `waves` waves have
    /// arrived at it, then continue with the next instruction.
    GridBarrier {
        /// GWS resource id (0-63).
        resource: u8,
        /// Waves the barrier waits for.
        waves: u32,
    },
    /// `s_endpgm`.
    End,
}

/// Why a uop could not complete.
#[derive(Debug)]
pub enum Fault {
    /// A refused memory access.
    Memory {
        /// First faulting lane.
        lane: u32,
        /// Address (guest, LDS or private).
        address: u64,
        /// Which memory, with the embedder's payload erased (recovered by the scheduler).
        kind: FaultKind<Box<dyn Any + Send>>,
    },
    /// `s_trap`.
    Trap(u16),
    /// Known to the decoder, not executed by the engine.
    Unsupported,
}

/// The memory trait with its fault type erased, so handlers are not generic.
pub trait DynMemory: Sync {
    /// [`GuestMemory::translate`] with the payload boxed.
    ///
    /// # Errors
    /// The payload.
    fn translate(
        &self,
        address: u64,
        len: u64,
        access: Access,
    ) -> Result<NonNull<u8>, Box<dyn Any + Send>>;
    /// [`GuestMemory::span`].
    fn span(&self, address: u64, access: Access) -> Option<crate::memory::Span>;
    /// [`GuestMemory::fence`].
    fn fence(&self);
}

impl<M: GuestMemory> DynMemory for M {
    #[inline]
    fn translate(
        &self,
        address: u64,
        len: u64,
        access: Access,
    ) -> Result<NonNull<u8>, Box<dyn Any + Send>> {
        GuestMemory::translate(self, address, len, access)
            .map_err(|f| Box::new(f) as Box<dyn Any + Send>)
    }

    #[inline]
    fn span(&self, address: u64, access: Access) -> Option<crate::memory::Span> {
        GuestMemory::span(self, address, access)
    }

    fn fence(&self) {
        GuestMemory::fence(self)
    }
}

/// Guest spans the memory approved during a dispatch ([`DynMemory::span`]; they stay valid
/// until it ends), a few per kind of access, so that the lanes and instructions of a kernel
/// touching several allocations in turn (a sparse matrix's indices, values and vector) are
/// checked against them without asking the memory again. One per host thread and dispatch.
#[derive(Debug, Default)]
pub struct Spans {
    /// For reads and for writes: the spans, replaced in turn.
    approved: [[std::cell::Cell<Option<crate::memory::Span>>; SPANS]; 2],
    next: [std::cell::Cell<usize>; 2],
    /// Set once the memory answered no span: it wants every access translated, so the
    /// whole-wave fast paths stop asking for one.
    none: std::cell::Cell<bool>,
}

/// Spans kept per kind of access.
const SPANS: usize = 4;

impl Spans {
    /// An approved span holding `len` bytes at `address` for reads (`writes` false) or
    /// writes.
    #[inline(always)]
    pub fn find(&self, writes: bool, address: u64, len: u64) -> Option<crate::memory::Span> {
        self.approved[usize::from(writes)]
            .iter()
            .filter_map(std::cell::Cell::get)
            .find(|s| s.get(address, len).is_some())
    }

    /// Keeps `span`, approved for reads or writes, in place of the oldest.
    pub fn add(&self, writes: bool, span: crate::memory::Span) {
        let k = usize::from(writes);
        let i = self.next[k].get() % SPANS;
        self.approved[k][i].set(Some(span));
        self.next[k].set(i + 1);
    }

    /// Whether the memory answered no span.
    #[inline(always)]
    pub fn none(&self) -> bool {
        self.none.get()
    }

    /// Notes that the memory answers no spans.
    pub fn set_none(&self) {
        self.none.set(true);
    }
}

/// What a running wave can reach besides its registers.
pub struct Env<'a> {
    /// Global memory.
    pub mem: &'a dyn DynMemory,
    /// Its work-group's LDS.
    pub lds: &'a mut Lds,
    /// Hostcall and friends.
    pub services: &'a dyn Services,
    /// The spans approved so far in this dispatch (on this thread).
    pub spans: &'a Spans,
    /// Why the last uop that returned [`Ctl::Fault`] failed.
    pub fault: Option<Box<Fault>>,
    /// The GWS resource and the waves awaited of the last [`Ctl::GridBarrier`].
    pub gws: (u8, u32),
}

impl<'a> Env<'a> {
    /// An environment whose approved spans are kept in `spans`.
    pub fn new(
        mem: &'a dyn DynMemory,
        lds: &'a mut Lds,
        services: &'a dyn Services,
        spans: &'a Spans,
    ) -> Env<'a> {
        Env {
            mem,
            lds,
            services,
            spans,
            fault: None,
            gws: (0, 0),
        }
    }
}

/// Builds a guest-memory fault for `lane` at `address`.
pub(crate) fn guest_fault(lane: usize, address: u64, payload: Box<dyn Any + Send>) -> Box<Fault> {
    Box::new(Fault::Memory {
        lane: lane as u32,
        address,
        kind: FaultKind::Guest(payload),
    })
}

/// A handler's outcome from a step that may fault.
#[inline(always)]
pub(crate) fn ctl(r: Result<(), Box<Fault>>, e: &mut Env<'_>) -> Ctl {
    match r {
        Ok(()) => Ctl::Next,
        Err(f) => {
            e.fault = Some(f);
            Ctl::Fault
        }
    }
}

/// The handler of instructions the engine does not execute.
pub fn unsupported<const N: usize>(_: &mut Wave<N>, _: &Uop, e: &mut Env<'_>) -> Ctl {
    e.fault = Some(Box::new(Fault::Unsupported));
    Ctl::Fault
}

/// A VALU instruction in gfx9's VGPR index mode: with the mode on (`Wave::gpr_idx`), the VGPR
/// operands M0[15:12] selects (src0, src1, src2, dst) are offset by M0[7:0], then the
/// operation's own CDNA handler runs; an index past the last VGPR is refused.
pub fn gpr_indexed<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Ctl {
    let Some(table) = crate::family::cdna::CDNA2.table::<N>() else {
        return unsupported(w, u, e);
    };
    let mut v = *u;
    v.run = HandlerId::of(u.op);
    if w.gpr_idx {
        let m0 = w.m0();
        let idx = (m0 & 0xff) as u16;
        let mode = m0 >> 12 & 0xf;
        let mut ok = true;
        let mut shift = |o: &mut Opnd| {
            if let Opnd::V(r) = *o {
                if r < crate::wave::AGPR_BASE {
                    ok &= r + idx < crate::wave::AGPR_BASE;
                    *o = Opnd::V(r + idx);
                }
            }
        };
        for (i, s) in v.s.iter_mut().enumerate() {
            if mode >> i & 1 != 0 {
                shift(s);
            }
        }
        if mode & 8 != 0 {
            shift(&mut v.d[0]);
        }
        if !ok {
            return unsupported(w, u, e);
        }
    }
    table.get(v.run)(w, &v, e)
}

#[cfg(any(test, feature = "internals"))]
/// Runs one uop on `w` with `table`'s handlers and says what happened in the terms of
/// [`Step`] and [`Fault`] (tests, and tools that step a wave by hand; the scheduler reads
/// [`Ctl`] itself).
///
/// # Errors
/// The fault the uop raised.
pub fn step<const N: usize>(
    table: &table::Table<N>,
    w: &mut Wave<N>,
    u: &Uop,
    e: &mut Env<'_>,
) -> Result<Step, Box<Fault>> {
    Ok(match table.get(u.run)(w, u, e) {
        Ctl::Next => Step::Next,
        Ctl::Branch => Step::Jump(u.imm as u64),
        Ctl::Jump => Step::Jump(w.pc),
        Ctl::Sleep => Step::Sleep,
        Ctl::Barrier => Step::Barrier,
        Ctl::GridBarrier => Step::GridBarrier {
            resource: e.gws.0,
            waves: e.gws.1,
        },
        Ctl::End => Step::End,
        Ctl::Fault => {
            return Err(e
                .fault
                .take()
                .unwrap_or_else(|| Box::new(Fault::Unsupported)))
        }
    })
}

#[cfg(any(test, feature = "internals"))]
/// [`step`] with gfx1030's wave32 handlers.
///
/// # Errors
/// The fault the uop raised.
pub fn step32(w: &mut Wave<32>, u: &Uop, e: &mut Env<'_>) -> Result<Step, Box<Fault>> {
    step(&crate::family::rdna2::WAVE32, w, u, e)
}

/// A straight-line run of uops from `start`, ending after a branch, a return, `s_endpgm`, or
/// at an instruction that could not be decoded (reported only when reached).
#[derive(Debug)]
pub struct Block {
    /// Address of the first uop.
    pub start: u64,
    /// The uops.
    pub uops: Box<[Uop]>,
    /// Whether decoding stopped early (unreadable or invalid bytes after the last uop): an
    /// error only if execution falls off the last uop.
    pub stopped: bool,
    /// The instruction bytes the uops were decoded from (from `start`), so that a report names
    /// the instruction that ran even if the bytes in memory changed since. Empty for blocks
    /// built by hand.
    pub code: Box<[u8]>,
    /// The instruction set it was decoded with (for those reports).
    pub isa: crate::isa::IsaId,
}

impl Block {
    /// A block of gfx1030 uops built by hand (tests, benchmarks, embedders that assemble uops
    /// themselves), with no instruction bytes.
    pub fn new(start: u64, uops: Vec<Uop>) -> Block {
        Block {
            start,
            uops: uops.into_boxed_slice(),
            stopped: false,
            code: Box::default(),
            isa: crate::isa::IsaId::Gfx1030,
        }
    }

    /// The instruction at `pc` as the decoder prints it, from the bytes this block was
    /// decoded from; `None` when `pc` is not one of its instructions.
    pub fn instruction_at(&self, pc: u64) -> Option<String> {
        let u = self.uops.iter().find(|u| u.pc == pc)?;
        let offset = usize::try_from(pc.checked_sub(self.start)?).ok()?;
        let bytes = self.code.get(offset..offset + usize::from(u.size))?;
        self.isa.isa().decode(bytes, pc).ok().map(|i| i.to_string())
    }
}

#[cfg(test)]
mod tests;
