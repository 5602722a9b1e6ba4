//! The gfx1030 instruction set as the emulator sees it: opcode tables generated from LLVM
//! (`gfx1030_tables.rs`, by `scripts/gen-emu-tables.py`), the predecoded [`Inst`], the
//! [`decode`] function and the llvm-objdump-compatible printer.
//!
//! An [`Inst`] is what both the interpreter and a later translator consume: the operation
//! ([`Op`], shared by the e32, e64, SDWA and DPP forms of one operation, so semantics key on it
//! alone), the encoding, its length, its register and constant operands as 9-bit operand codes
//! with their widths in dwords ([`Operand`]), the literal, and the raw words for modifiers the
//! executor reads by encoding (VOP3 neg/abs/clamp/omod/op_sel, SDWA selects, DPP control,
//! memory offsets and cache bits). Operand slots by encoding family:
//!
//! | family | `dst` | `src[0]` | `src[1]` | `src[2]` | `sdst` |
//! |---|---|---|---|---|---|
//! | SOP1/SOP2/SOPK/SOPC | sdst | ssrc0 | ssrc1 | – | – |
//! | SMEM | sdata | sbase | soffset | – | – |
//! | VOP1/VOP2/VOPC/VOP3/VOP3P | vdst (an SGPR for compares and readlane) | src0 | src1 | src2 | VOP3B's sdst |
//! | DS | vdst | addr | data0 | data1 | – |
//! | FLAT/GLOBAL/SCRATCH | vdst | addr | data | saddr | – |
//! | MUBUF | vdata | vaddr | srsrc | soffset | – |
//!
//! Not for executing instructions or caching decoded code (see `crate::code`).

mod decode;
#[rustfmt::skip]
#[allow(clippy::all)]
mod gfx1030_tables;
mod print;

pub use decode::{decode, DecodeError};
pub use gfx1030_tables::Op;
pub use print::{branch_target, Printer};

/// One opcode of one encoding, as LLVM decodes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpDesc {
    /// The operation.
    pub op: Op,
    /// The mnemonic as llvm-objdump prints it for this encoding (`v_add_f32_e64`).
    pub mnemonic: &'static str,
    /// The operands as printed, with `{slot}` placeholders and fixed text (`vcc_lo`, `off`).
    pub template: &'static str,
    /// Widths in dwords of the register slots (see the module table), 0 when absent.
    pub w: [u8; 5],
    /// Whether it always takes a 32-bit literal (`v_fmamk_f32`, `s_setreg_imm32_b32`).
    pub literal: bool,
    /// Whether it is a two-destination VOP3 (VOP3B) opcode.
    pub vop3b: bool,
}

/// Instruction encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
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
    Vop3,
    Vop3p,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
}

/// Extra forms of VOP1/VOP2/VOPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Form {
    /// The plain 32-bit form (or any other encoding).
    Plain,
    /// SDWA: sub-dword selects in the second dword.
    Sdwa,
    /// DPP16: lane permutation control in the second dword.
    Dpp16,
    /// DPP8: eight 3-bit lane selects in the second dword.
    Dpp8,
}

/// Operand codes of a 9-bit source field (and of destination fields, which use the low part).
pub mod code {
    /// Last SGPR (s105).
    pub const SGPR_MAX: u16 = 105;
    /// `vcc_lo`.
    pub const VCC_LO: u16 = 106;
    /// `vcc_hi`.
    pub const VCC_HI: u16 = 107;
    /// First trap temporary (`ttmp0`).
    pub const TTMP0: u16 = 108;
    /// `m0`.
    pub const M0: u16 = 124;
    /// `null`.
    pub const NULL: u16 = 125;
    /// `exec_lo`.
    pub const EXEC_LO: u16 = 126;
    /// `exec_hi`.
    pub const EXEC_HI: u16 = 127;
    /// Integer 0.
    pub const ZERO: u16 = 128;
    /// `src_shared_base`.
    pub const SHARED_BASE: u16 = 235;
    /// `src_shared_limit`.
    pub const SHARED_LIMIT: u16 = 236;
    /// `src_private_base`.
    pub const PRIVATE_BASE: u16 = 237;
    /// `src_private_limit`.
    pub const PRIVATE_LIMIT: u16 = 238;
    /// `src_pops_exiting_wave_id`.
    pub const POPS_EXITING_WAVE_ID: u16 = 239;
    /// Inline 0.5 (the first float constant).
    pub const HALF: u16 = 240;
    /// Inline 1/(2π).
    pub const INV_2PI: u16 = 248;
    /// SDWA escape.
    pub const SDWA: u16 = 249;
    /// DPP16 escape.
    pub const DPP16: u16 = 250;
    /// `vccz`.
    pub const VCCZ: u16 = 251;
    /// `execz`.
    pub const EXECZ: u16 = 252;
    /// `scc`.
    pub const SCC: u16 = 253;
    /// `src_lds_direct`.
    pub const LDS_DIRECT: u16 = 254;
    /// A 32-bit literal follows.
    pub const LITERAL: u16 = 255;
    /// First VGPR (v0).
    pub const VGPR0: u16 = 256;
    /// DPP8 escape.
    pub const DPP8: u16 = 233;
    /// DPP8 escape with fetch-inactive.
    pub const DPP8_FI: u16 = 234;
}

/// A register or constant operand: its 9-bit code and its width in dwords.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Operand {
    /// The operand code (see [`code`]); meaningful only when `width > 0`.
    pub code: u16,
    /// Dwords (1 for a 32-bit operand, 2 for a 64-bit one), 0 when the slot is absent.
    pub width: u8,
}

impl Operand {
    /// An absent operand.
    pub const NONE: Operand = Operand { code: 0, width: 0 };

    /// Whether the slot is used.
    pub fn present(self) -> bool {
        self.width > 0
    }

    /// Whether it names VGPRs.
    pub fn is_vgpr(self) -> bool {
        self.code >= code::VGPR0
    }

    /// Whether it names SGPRs (s0-s105).
    pub fn is_sgpr(self) -> bool {
        self.code <= code::SGPR_MAX
    }
}

/// One predecoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inst {
    /// The operation.
    pub op: Op,
    /// The encoding.
    pub enc: Encoding,
    /// SDWA or DPP form of a VOP1/VOP2/VOPC instruction.
    pub form: Form,
    /// Length in bytes (4 to 16).
    pub len: u8,
    /// Destination (see the module table).
    pub dst: Operand,
    /// Second destination of VOP3B (carry out), or SMEM's/MUBUF's scalar offset.
    pub sdst: Operand,
    /// Sources.
    pub src: [Operand; 3],
    /// The 32-bit literal, when an operand is [`code::LITERAL`] or the opcode takes one.
    pub literal: u32,
    /// The instruction's first dword.
    pub word0: u32,
    /// The second dword (VOP3/VOP3P/SMEM/DS/FLAT/MUBUF fields, or the SDWA/DPP dword).
    pub word1: u32,
    /// The opcode's table entry (mnemonic and operand template for printing).
    pub desc: &'static OpDesc,
}

const _: () = assert!(std::mem::size_of::<Inst>() <= 64);

impl Inst {
    /// The mnemonic as llvm-objdump prints it.
    pub fn mnemonic(&self) -> &'static str {
        self.desc.mnemonic
    }

    /// A signed immediate of SOPP/SOPK (simm16), as the ISA defines it.
    pub fn simm16(&self) -> i16 {
        self.word0 as u16 as i16
    }
}
