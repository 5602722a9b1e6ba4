//! Types that describe one opcode of one encoding: its operation, printed
//! mnemonic, operand layout and modifiers, and the set of tables one processor's
//! generated file (`<processor>_tables.rs`) provides. The decoder and the printer
//! both read them. Not the decoded instruction itself (see `inst.rs`).

pub use super::ops::Op;

/// One processor's generated tables (`<processor>_tables.rs`): an opcode table per
/// encoding of its layout, the symbolic names its printer uses, and its operations.
/// Encodings a layout does not have are empty.
#[derive(Debug)]
pub struct Tables {
    pub(crate) sop2: &'static [Option<OpInfo>],
    pub(crate) sopk: &'static [Option<OpInfo>],
    pub(crate) sop1: &'static [Option<OpInfo>],
    pub(crate) sopc: &'static [Option<OpInfo>],
    pub(crate) sopp: &'static [Option<OpInfo>],
    pub(crate) smem: &'static [Option<OpInfo>],
    pub(crate) vop1: &'static [Option<OpInfo>],
    pub(crate) vop2: &'static [Option<OpInfo>],
    pub(crate) vopc: &'static [Option<OpInfo>],
    pub(crate) vop3: &'static [Option<OpInfo>],
    pub(crate) vop3p: &'static [Option<OpInfo>],
    pub(crate) vop1_sdwa: &'static [Option<OpInfo>],
    pub(crate) vop2_sdwa: &'static [Option<OpInfo>],
    pub(crate) vopc_sdwa: &'static [Option<OpInfo>],
    pub(crate) vop1_dpp: &'static [Option<OpInfo>],
    pub(crate) vop2_dpp: &'static [Option<OpInfo>],
    pub(crate) vop1_dpp8: &'static [Option<OpInfo>],
    pub(crate) vop2_dpp8: &'static [Option<OpInfo>],
    pub(crate) ds: &'static [Option<OpInfo>],
    pub(crate) flat: &'static [Option<OpInfo>],
    pub(crate) scratch: &'static [Option<OpInfo>],
    pub(crate) scratch_saddr: &'static [Option<OpInfo>],
    /// gfx940's scratch forms with both a VGPR and an SGPR address (SVS).
    pub(crate) scratch_svs: &'static [Option<OpInfo>],
    /// gfx940's scratch forms with neither (ST: the offset alone).
    pub(crate) scratch_st: &'static [Option<OpInfo>],
    pub(crate) global: &'static [Option<OpInfo>],
    pub(crate) global_saddr: &'static [Option<OpInfo>],
    pub(crate) mubuf: &'static [Option<OpInfo>],
    pub(crate) hwreg_names: &'static [(u16, &'static str)],
    pub(crate) sendmsg_text: &'static [(u16, &'static str)],
    pub(crate) depctr_fields: &'static [(&'static str, u8, u8)],
    /// How the first, second and third cache-policy bits of FLAT and MUBUF instructions
    /// print (`glc slc dlc` on gfx10, `glc slc scc` on gfx90a, `sc0 nt sc1` on gfx940).
    pub(crate) cpol: [&'static str; 3],
    /// Width of `s_waitcnt`'s lgkmcnt field (bits 8 up): 6 on gfx10, 4 on gfx9.
    pub(crate) lgkm_bits: u8,
    pub(crate) ops: &'static [Op],
}

/// Everything the decoder and printer need about one opcode of one encoding.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// The operation (shared by the e32, e64, SDWA and DPP forms).
    pub op: Op,
    /// The mnemonic exactly as llvm-objdump prints it for this form
    /// (with `_e32`, `_e64`, `_sdwa` or `_dpp` where LLVM prints one).
    pub mnemonic: &'static str,
    /// Printed operands, in print order.
    pub operands: &'static [OperandSpec],
    /// For FLAT atomics: the operands when the instruction returns a value
    /// (glc set). Empty otherwise.
    pub rtn_operands: &'static [OperandSpec],
    /// Modifiers this form prints after its operands, in print order.
    pub mods: &'static [Mod],
    /// How the 16-bit immediate of SOPP/SOPK prints.
    pub imm: ImmStyle,
    /// Facts about the opcode (`PROMOTED_*`, `LOAD`, `GLC`, ...).
    pub flags: u32,
}

/// Which slot of the decoded instruction an operand fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Not an operand slot (immediates, printed-only tokens).
    None,
    /// `Inst::dst[i]`.
    Dst(u8),
    /// `Inst::src[i]`.
    Src(u8),
}

/// The encoding field an operand comes from.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Sdst,
    Ssrc0,
    Ssrc1,
    Simm16,
    /// The 32-bit literal dword (a mandatory K constant, e.g. `v_fmaak_f32`).
    Literal,
    Vdst,
    /// VOP3b scalar destination (carry/condition out), or VOPC SDWA sdst.
    Sdst2,
    Src0,
    Src1,
    Src2,
    Vsrc1,
    Sdata,
    Sbase,
    /// SMEM immediate offset.
    Offset,
    Addr,
    Data0,
    Data1,
    Data,
    Saddr,
    Vaddr,
    Vdata,
    Srsrc,
    Soffset,
    /// Printed `vcc_lo` that no field encodes.
    VccLo,
    /// Printed `vcc` (wave64's pair) that no field encodes.
    Vcc,
    /// Printed `off` (absent address or scalar base).
    Off,
    /// Printed `null`.
    Null,
}

/// What values an operand field can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// 8-bit VGPR number.
    V,
    /// An accumulation register (AGPR) whatever the encoding's AGPR bits say
    /// (`v_accvgpr_read/write/mov`): the field's low 8 bits number it.
    A,
    /// Scalar register field (SGPR, VCC, EXEC, M0, NULL, TTMP; no constants).
    S,
    /// 9-bit vector-ALU source: VGPR, scalar register, inline constant or literal.
    Vs,
    /// 8-bit scalar source: scalar register, inline constant or literal.
    Ss,
    /// An immediate that is not a register operand (simm16, SMEM offset).
    Imm,
    /// The instruction's mandatory 32-bit literal.
    Lit,
    /// A token printed without a field (see [`Field::VccLo`] and friends).
    Fixed,
}

/// Value type of a source operand, as far as constants are concerned: it
/// decides the bit pattern of inline constants and how literals extend.
/// `B32` covers both integer and f32 operands (their constants are the same
/// bits); `B16` and `F16` both take f16 patterns but print differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ty {
    /// Not a constant-capable operand.
    None,
    /// 16-bit integer operand.
    B16,
    /// 16-bit float operand.
    F16,
    /// 32-bit operand (integer or float).
    B32,
    /// 64-bit integer operand.
    B64,
    /// 64-bit float operand (a literal is the high dword).
    F64,
    /// Packed pair of 16-bit integers.
    V2B16,
    /// Packed pair of 16-bit floats.
    V2F16,
}

/// A printed modifier. Counts give the number of entries in `[a,b,...]` lists.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mod {
    Clamp,
    Omod,
    OpSel(u8),
    OpSelHi(u8),
    NegLo(u8),
    NegHi(u8),
    DstSel,
    DstUnused,
    Src0Sel,
    Src1Sel,
    DppCtrl,
    RowMask,
    BankMask,
    BoundCtrl,
    Fi,
    Dpp8,
    /// MFMA: control broadcast size.
    Cbsz,
    /// MFMA: A-matrix broadcast id.
    Abid,
    /// MFMA: B-matrix lane group pattern.
    Blgp,
    /// gfx940's f64 MFMA: `neg:[a,b,c]` (the blgp bits negate the sources).
    Neg(u8),
}

/// How the 16-bit immediate of a SOPP/SOPK instruction prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImmStyle {
    /// Not a SOPP/SOPK immediate.
    None,
    /// Ignored (not printed).
    NoImm,
    /// Printed in decimal only when non-zero (`s_endpgm`).
    OptionalDec,
    /// Unsigned decimal (branches print their raw offset this way).
    Dec,
    /// Decimal for -16..=64, hex otherwise.
    Imm32,
    /// Always hex.
    Hex,
    /// `vmcnt(..) expcnt(..) lgkmcnt(..)`.
    Waitcnt,
    /// `depctr_*(..)` fields or hex.
    Depctr,
    /// `sendmsg(...)`.
    Sendmsg,
    /// `hwreg(...)`.
    Hwreg,
    /// `s_version` code.
    Version,
    /// gfx9's VGPR index mode: `gpr_idx(SRC0,SRC1,SRC2,DST)` for its 4 bits.
    GprIdx,
}

/// Operand specification: where an operand comes from and what it is.
#[derive(Clone, Copy, Debug)]
pub struct OperandSpec {
    /// Slot filled in the decoded instruction.
    pub role: Role,
    /// Encoding field.
    pub field: Field,
    /// Value class.
    pub kind: Kind,
    /// Register width in dwords.
    pub dwords: u8,
    /// Constant type.
    pub ty: Ty,
    /// Source modifiers this slot prints (`SRC_NEG`, `SRC_ABS`, `SRC_SEXT`).
    pub src_mods: u8,
}

/// Source slot takes `-x` / `neg(x)`.
pub const SRC_NEG: u8 = 1;
/// Source slot takes `|x|`.
pub const SRC_ABS: u8 = 2;
/// Source slot takes `sext(x)`.
pub const SRC_SEXT: u8 = 4;

/// VOP3 form of a VOP1 opcode.
pub const PROMOTED_VOP1: u32 = 1 << 0;
/// VOP3 form of a VOP2 opcode.
pub const PROMOTED_VOP2: u32 = 1 << 1;
/// VOP3 form of a VOPC opcode.
pub const PROMOTED_VOPC: u32 = 1 << 2;
/// Reads memory.
pub const LOAD: u32 = 1 << 3;
/// Writes memory.
pub const STORE: u32 = 1 << 4;
/// Atomic read-modify-write.
pub const ATOMIC: u32 = 1 << 5;
/// Prints the first cache-policy bit (`glc`; `sc0` on gfx940).
pub const GLC: u32 = 1 << 6;
/// Prints the second cache-policy bit (`slc`; `nt` on gfx940).
pub const SLC: u32 = 1 << 7;
/// Prints the third cache-policy bit (`dlc` on gfx10, `scc` on gfx90a, `sc1` on gfx940).
pub const DLC: u32 = 1 << 8;
/// DS: single 16-bit `offset:`.
pub const DS_OFFSET16: u32 = 1 << 9;
/// DS: `offset0:` / `offset1:` pair.
pub const DS_OFFSET8X2: u32 = 1 << 10;
/// DS: `offset:swizzle(...)`.
pub const DS_SWIZZLE: u32 = 1 << 11;
/// DS: no offset.
pub const DS_NO_OFFSET: u32 = 1 << 12;
/// DS: prints `gds`.
pub const GDS: u32 = 1 << 13;
/// SOPP/SOPK whose immediate is a branch offset in dwords from the next instruction.
pub const BRANCH: u32 = 1 << 14;
/// `v_cmpx_*`: writes EXEC (not printed as an operand).
pub const WRITES_EXEC: u32 = 1 << 15;
/// A matrix (MAI) instruction: `cbsz`/`abid`/`blgp` in place of the VOP3P modifiers, and
/// AGPR bits for its sources and destination.
pub const MAI: u32 = 1 << 16;

/// Build an operand spec (used by the generated tables).
pub(crate) const fn o(
    role: Role,
    field: Field,
    kind: Kind,
    dwords: u8,
    ty: Ty,
    src_mods: u8,
) -> OperandSpec {
    OperandSpec {
        role,
        field,
        kind,
        dwords,
        ty,
        src_mods,
    }
}

/// Build a fixed (field-less) operand spec.
pub(crate) const fn fixed(role: Role, field: Field) -> OperandSpec {
    OperandSpec {
        role,
        field,
        kind: Kind::Fixed,
        dwords: 1,
        ty: Ty::None,
        src_mods: 0,
    }
}
