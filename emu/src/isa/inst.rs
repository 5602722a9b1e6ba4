//! The predecoded instruction: compact, `Copy`, everything the interpreter
//! needs without looking at the encoding again. Not the decoding logic
//! (`decode.rs`) nor the text form (`print.rs`).

use super::family::IsaId;
use super::operand::Operand;
use super::spec::Op;

/// The instruction encoding (and, for VOP1/VOP2/VOPC, the src0-escape form).
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Encoding {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    Vop1Sdwa,
    Vop2Sdwa,
    VopcSdwa,
    Vop1Dpp16,
    Vop2Dpp16,
    Vop1Dpp8,
    Vop2Dpp8,
    Vop3,
    Vop3p,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
    /// Decoded for length only (execution refuses it).
    Mtbuf,
    /// Image memory (fields in [`Extra::Mimg`], opcode in [`Inst::opcode`]).
    Mimg,
    /// Decoded for length only (execution refuses it).
    Exp,
    /// Decoded for length only (execution refuses it).
    Vintrp,
    /// The all-zero word.
    Illegal,
}

impl Encoding {
    /// Short upper-case name, as used in error messages.
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Sop1 => "SOP1",
            Encoding::Sop2 => "SOP2",
            Encoding::Sopk => "SOPK",
            Encoding::Sopc => "SOPC",
            Encoding::Sopp => "SOPP",
            Encoding::Smem => "SMEM",
            Encoding::Vop1 => "VOP1",
            Encoding::Vop2 => "VOP2",
            Encoding::Vopc => "VOPC",
            Encoding::Vop1Sdwa => "VOP1_SDWA",
            Encoding::Vop2Sdwa => "VOP2_SDWA",
            Encoding::VopcSdwa => "VOPC_SDWA",
            Encoding::Vop1Dpp16 => "VOP1_DPP16",
            Encoding::Vop2Dpp16 => "VOP2_DPP16",
            Encoding::Vop1Dpp8 => "VOP1_DPP8",
            Encoding::Vop2Dpp8 => "VOP2_DPP8",
            Encoding::Vop3 => "VOP3",
            Encoding::Vop3p => "VOP3P",
            Encoding::Ds => "DS",
            Encoding::Flat => "FLAT",
            Encoding::Global => "GLOBAL",
            Encoding::Scratch => "SCRATCH",
            Encoding::Mubuf => "MUBUF",
            Encoding::Mtbuf => "MTBUF",
            Encoding::Mimg => "MIMG",
            Encoding::Exp => "EXP",
            Encoding::Vintrp => "VINTRP",
            Encoding::Illegal => "ILLEGAL",
        }
    }
}

/// Bits of [`Inst::flags`].
pub mod inst_flags {
    /// Memory: globally coherent (glc).
    pub const GLC: u8 = 1 << 0;
    /// Memory: system level coherent (slc).
    pub const SLC: u8 = 1 << 1;
    /// Memory: the third cache-policy bit: device level coherent (dlc) on gfx10, `scc` on
    /// gfx90a, `sc1` on gfx940.
    pub const DLC: u8 = 1 << 2;
    /// The instruction carries a 32-bit literal dword.
    pub const HAS_LITERAL: u8 = 1 << 3;
    /// The instruction ends a straight-line run (branch, jump, end of program).
    pub const ENDS_BLOCK: u8 = 1 << 4;
}

/// Encoding-specific fields: modifiers of the vector forms, memory offsets,
/// the immediates of scalar control instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Extra {
    /// Nothing beyond the operands.
    #[default]
    None,
    /// VOP3 (and VOP3b) modifiers. Bit i of a mask is source i.
    Vop3 {
        /// Clamp the result.
        clamp: bool,
        /// Output modifier: 0 none, 1 *2, 2 *4, 3 /2.
        omod: u8,
        /// Negate source i (float operands).
        neg: u8,
        /// Absolute value of source i (float operands; 0 for VOP3b).
        abs: u8,
        /// op_sel: bit i selects the high half of source i; bit 3 the destination.
        op_sel: u8,
    },
    /// VOP3P (packed) modifiers. Bit i of a mask is source i. For the
    /// mixed-precision `v_fma_mix*` (not packed math) `neg_lo` negates and
    /// `neg_hi` takes the absolute value of source i, and `op_sel_hi` bit i
    /// says source i is f16 (`op_sel` then picks its half).
    Vop3p {
        /// Clamp the result.
        clamp: bool,
        /// Low-half result takes the high half of source i.
        op_sel: u8,
        /// High-half result takes the high half of source i.
        op_sel_hi: u8,
        /// Negate the low half of source i.
        neg_lo: u8,
        /// Negate the high half of source i.
        neg_hi: u8,
    },
    /// SDWA sub-dword selects and source modifiers.
    Sdwa(Sdwa),
    /// DPP16 lane movement.
    Dpp16(Dpp16),
    /// DPP8 lane selects.
    Dpp8 {
        /// Eight 3-bit lane selects (lane i of each group of 8 reads lane `sel_i`).
        lanes: u32,
        /// Fetch inactive lanes.
        fi: bool,
    },
    /// SOPP/SOPK 16-bit immediate (waitcnt, hwreg, sendmsg, counts...).
    Imm16(u16),
    /// Branch (SOPP s_branch/s_cbranch_*, SOPK s_call_b64 etc.).
    Branch {
        /// Absolute target address.
        target: u64,
        /// The raw signed dword offset.
        simm16: u16,
    },
    /// Scalar memory.
    Smem {
        /// Signed 21-bit byte offset.
        offset: i32,
        /// The sdata field when it is an immediate (`s_atc_probe`), else 0.
        sdata_imm: u8,
        /// gfx9: the IMM bit (the offset is encoded and prints even when 0); false on gfx10.
        imm: bool,
    },
    /// Matrix (MAI) instruction controls; the operands already name AGPRs where the
    /// instruction's AGPR bits put them.
    Mai {
        /// Control broadcast size (3 bits).
        cbsz: u8,
        /// A-matrix broadcast id (4 bits).
        abid: u8,
        /// B-matrix lane group pattern (3 bits; gfx940's f64 forms: negate sources).
        blgp: u8,
    },
    /// LDS/GDS.
    Ds {
        /// offset0 (low byte of the 16-bit offset).
        offset0: u8,
        /// offset1 (high byte of the 16-bit offset).
        offset1: u8,
        /// Global data share instead of LDS.
        gds: bool,
    },
    /// FLAT/GLOBAL/SCRATCH.
    Flat {
        /// Byte offset (12-bit; signed for GLOBAL/SCRATCH, unsigned for FLAT).
        offset: i16,
        /// The LDS bit.
        lds: bool,
    },
    /// Untyped buffer.
    Mubuf {
        /// 12-bit unsigned byte offset.
        offset: u16,
        /// vaddr supplies an offset.
        offen: bool,
        /// vaddr supplies an index.
        idxen: bool,
        /// Load to LDS.
        lds: bool,
        /// Texture-fail-enable (extra status dword).
        tfe: bool,
    },
    /// Image memory (MIMG).
    Mimg(super::mimg::MimgFields),
}

/// SDWA fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sdwa {
    /// Destination select (0..=3 bytes, 4..=5 words, 6 dword).
    pub dst_sel: u8,
    /// What happens to unselected destination bits (0 pad, 1 sext, 2 preserve).
    pub dst_unused: u8,
    /// Source 0 select.
    pub src0_sel: u8,
    /// Source 1 select.
    pub src1_sel: u8,
    /// Sign-extend source i (bit i).
    pub sext: u8,
    /// Negate source i (bit i).
    pub neg: u8,
    /// Absolute value of source i (bit i).
    pub abs: u8,
    /// Clamp.
    pub clamp: bool,
    /// Output modifier.
    pub omod: u8,
}

/// DPP16 fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dpp16 {
    /// dpp_ctrl (quad_perm, row_shl, row_share, ...).
    pub ctrl: u16,
    /// Row enable mask.
    pub row_mask: u8,
    /// Bank enable mask.
    pub bank_mask: u8,
    /// Out-of-range lanes read zero.
    pub bound_ctrl: bool,
    /// Fetch inactive lanes.
    pub fi: bool,
    /// Negate source i (bit i).
    pub neg: u8,
    /// Absolute value of source i (bit i).
    pub abs: u8,
}

/// One predecoded instruction (48 bytes, `Copy`).
///
/// Operand slots are fixed per encoding family, so semantics can read them
/// without knowing the form:
/// - ALU: `dst[0]` the result (VGPR, SGPR, or `vcc_lo` for VOPC e32; EXEC for
///   `v_cmpx`), `dst[1]` a carry/condition out (VOP3b `sdst`, `vcc_lo` for
///   e32 carry ops); `src[0..3]` = src0, src1, src2 (the e32 `vcc_lo` mask or
///   carry-in of `v_cndmask_b32`/`v_add_co_ci_u32` is `src[2]`, as in e64).
///   SOPK: the `sdst` field is `dst[0]`, or `src[0]` when the instruction
///   reads it (`s_cmpk_*`, `s_setreg_b32`, `s_waitcnt_*cnt`).
/// - SMEM: `dst[0]` data, `src[0]` base, `src[1]` soffset register.
/// - DS: `dst[0]` vdst, `src[0]` addr, `src[1]` data0, `src[2]` data1.
/// - FLAT/GLOBAL/SCRATCH: `dst[0]` vdst, `src[0]` vaddr (or `Off`),
///   `src[1]` data, `src[2]` saddr (or `Off`).
/// - MIMG: `dst[0]` vdata (loads, samples, atomics with glc), `src[0]` the first address
///   VGPR (the others in [`Extra::Mimg`] with NSA), `src[1]` srsrc, `src[2]` ssamp,
///   `src[3]` vdata (stores, atomics).
/// - MUBUF: `dst[0]` vdata (loads; atomics with glc), `src[0]` vaddr (or
///   `Off`), `src[1]` srsrc, `src[2]` soffset, `src[3]` vdata (stores, atomics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inst {
    /// The instruction set it was decoded with.
    pub isa: IsaId,
    /// The operation.
    pub op: Op,
    /// Opcode within its encoding's table.
    pub opcode: u16,
    /// Encoding/form.
    pub encoding: Encoding,
    /// Length in bytes (4, 8 or 12; MIMG NSA up to 20).
    pub len: u8,
    /// [`inst_flags`] bits.
    pub flags: u8,
    /// The 32-bit literal (valid when `flags & HAS_LITERAL`).
    pub literal: u32,
    /// Destinations.
    pub dst: [Operand; 2],
    /// Sources.
    pub src: [Operand; 4],
    /// Encoding-specific fields.
    pub extra: Extra,
}

const _: () = assert!(core::mem::size_of::<Inst>() <= 48);
const _: () = assert!(core::mem::size_of::<Operand>() <= 4);
const _: () = assert!(core::mem::size_of::<Op>() == 2);

impl Inst {
    /// Canonical mnemonic of the operation (without form suffix).
    pub fn op_name(&self) -> &'static str {
        self.op.name()
    }

    /// True for globally coherent memory accesses.
    pub const fn glc(&self) -> bool {
        self.flags & inst_flags::GLC != 0
    }

    /// True for system-coherent memory accesses.
    pub const fn slc(&self) -> bool {
        self.flags & inst_flags::SLC != 0
    }

    /// True for device-coherent memory accesses.
    pub const fn dlc(&self) -> bool {
        self.flags & inst_flags::DLC != 0
    }

    /// True when this instruction ends a straight-line run of code.
    pub const fn ends_block(&self) -> bool {
        self.flags & inst_flags::ENDS_BLOCK != 0
    }

    /// Branch target (absolute address) for branch instructions.
    pub const fn branch_target(&self) -> Option<u64> {
        match self.extra {
            Extra::Branch { target, .. } => Some(target),
            _ => None,
        }
    }
}

impl Op {
    /// Canonical mnemonic (e.g. `v_add_f32` for every form of V_ADD_F32).
    pub const fn name(self) -> &'static str {
        super::ops::OP_NAMES[self as usize]
    }

    /// Its index in [`Op::ALL`] (the discriminant).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The operation with canonical mnemonic `name`, found by binary search of the sorted
    /// names (usable in constants, so tables keyed by mnemonic are checked when compiled).
    pub const fn from_name(name: &str) -> Option<Op> {
        let (mut lo, mut hi) = (0, Op::COUNT);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match compare(super::ops::OP_NAMES[mid].as_bytes(), name.as_bytes()) {
                core::cmp::Ordering::Less => lo = mid + 1,
                core::cmp::Ordering::Greater => hi = mid,
                core::cmp::Ordering::Equal => return Some(Op::ALL[mid]),
            }
        }
        None
    }
}

/// Byte-wise comparison, usable in constants.
const fn compare(a: &[u8], b: &[u8]) -> core::cmp::Ordering {
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return if a[i] < b[i] {
                core::cmp::Ordering::Less
            } else {
                core::cmp::Ordering::Greater
            };
        }
        i += 1;
    }
    if a.len() < b.len() {
        core::cmp::Ordering::Less
    } else if a.len() > b.len() {
        core::cmp::Ordering::Greater
    } else {
        core::cmp::Ordering::Equal
    }
}
