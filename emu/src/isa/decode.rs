//! Decoding GFX10-layout machine code (RDNA1, RDNA2: gfx1030's tables): bytes + address to
//! a predecoded [`Inst`]. Field layouts of each encoding live here; what each opcode's
//! operands are comes from the instruction set's generated tables, and where its special
//! scalar registers sit from its [`RegisterMap`](super::RegisterMap). Never panics on any
//! input; failures are typed [`DecodeError`]s naming the encoding, the words and the address.
//! Not printing (`print.rs`), not caching (`crate::cache`).

use super::family::{Isa, Layout, GFX1030};
use super::inst::{inst_flags, Dpp16, Encoding, Extra, Inst, Sdwa};
use super::operand::{Operand, Special};
use super::spec::*;

/// Why some bytes are not a decodable instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The first word matches no encoding of the instruction set.
    UnknownEncoding,
    /// The opcode is not defined for this encoding in the instruction set.
    UnknownOpcode(u16),
    /// An operand field holds a reserved value.
    ReservedOperand {
        /// Which field.
        field: &'static str,
        /// Its value.
        value: u16,
    },
    /// The code ends inside the instruction.
    Truncated {
        /// Bytes the instruction needs.
        needed: u8,
        /// Bytes available.
        available: u8,
    },
}

/// A failure to decode the instruction at `address`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot decode {encoding} instruction at {address:#x} (words {}): {}", fmt_words(&self.words[..self.nwords as usize]), fmt_kind(&self.kind))]
pub struct DecodeError {
    /// What went wrong.
    pub kind: DecodeErrorKind,
    /// Encoding name (e.g. "VOP3"), or "?" when none matched.
    pub encoding: &'static str,
    /// Address of the instruction.
    pub address: u64,
    /// The words read so far (up to three).
    pub words: [u32; 3],
    /// How many of `words` are valid.
    pub nwords: u8,
}

fn fmt_words(w: &[u32]) -> String {
    if w.is_empty() {
        return "none".into();
    }
    w.iter()
        .map(|w| format!("{w:08X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn fmt_kind(k: &DecodeErrorKind) -> String {
    match k {
        DecodeErrorKind::UnknownEncoding => {
            "no encoding of this instruction set has this bit pattern".into()
        }
        DecodeErrorKind::UnknownOpcode(op) => format!("opcode {op:#x} is not defined"),
        DecodeErrorKind::ReservedOperand { field, value } => {
            format!("field {field} holds reserved value {value}")
        }
        DecodeErrorKind::Truncated { needed, available } => {
            format!("instruction needs {needed} bytes, only {available} remain")
        }
    }
}

/// Reading state for one instruction: the words and where they came from.
pub(super) struct Reader<'a> {
    pub(super) isa: &'static Isa,
    pub(super) code: &'a [u8],
    pub(super) address: u64,
    pub(super) words: [u32; 3],
    pub(super) nwords: u8,
    pub(super) encoding: &'static str,
}

impl Reader<'_> {
    pub(super) fn word(&mut self, index: usize) -> Result<u32, DecodeError> {
        let start = index * 4;
        match self.code.get(start..start + 4) {
            Some(b) => {
                let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                if index < 3 && index as u8 >= self.nwords {
                    self.words[index] = w;
                    self.nwords = index as u8 + 1;
                }
                Ok(w)
            }
            None => Err(self.err(DecodeErrorKind::Truncated {
                needed: (start + 4).min(255) as u8,
                available: self.code.len().min(255) as u8,
            })),
        }
    }

    pub(super) fn err(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError {
            kind,
            encoding: self.encoding,
            address: self.address,
            words: self.words,
            nwords: self.nwords,
        }
    }
}

/// Decode the gfx1030 instruction at the start of `code`, which lives at `address`
/// ([`Isa::decode`] for other instruction sets).
pub fn decode(code: &[u8], address: u64) -> Result<Inst, DecodeError> {
    decode_gfx10(&GFX1030, code, address)
}

/// Decode the instruction of `isa` (a GFX10-layout ISA) at the start of `code`.
pub(crate) fn decode_gfx10(
    isa: &'static Isa,
    code: &[u8],
    address: u64,
) -> Result<Inst, DecodeError> {
    let mut r = Reader {
        isa,
        code,
        address,
        words: [0; 3],
        nwords: 0,
        encoding: "?",
    };
    let w0 = r.word(0)?;
    if w0 == 0 {
        return Ok(bare(&r, Op::VIllegal, Encoding::Illegal, 4));
    }
    if w0 >> 31 == 0 {
        return match (w0 >> 25) & 0x3f {
            0x3e => vop_short(&mut r, w0, Encoding::Vopc),
            0x3f => vop_short(&mut r, w0, Encoding::Vop1),
            _ => vop_short(&mut r, w0, Encoding::Vop2),
        };
    }
    if w0 >> 30 == 0b10 {
        return match w0 >> 23 {
            0x17d => scalar(&mut r, w0, Encoding::Sop1),
            0x17e => scalar(&mut r, w0, Encoding::Sopc),
            0x17f => scalar(&mut r, w0, Encoding::Sopp),
            _ if w0 >> 28 == 0b1011 => scalar(&mut r, w0, Encoding::Sopk),
            _ => scalar(&mut r, w0, Encoding::Sop2),
        };
    }
    match w0 >> 26 {
        0x35 => vop3(&mut r, w0, false),
        0x33 => vop3(&mut r, w0, true),
        0x36 => ds(&mut r, w0),
        0x37 => flat(&mut r, w0),
        0x38 => mubuf(&mut r, w0),
        0x3d => smem(&mut r, w0),
        0x3a => length_only(&mut r, Op::Mtbuf, Encoding::Mtbuf, 8),
        0x3c => super::mimg::decode(r.isa, r.code, r.address, w0),
        0x3e => length_only(&mut r, Op::Exp, Encoding::Exp, 8),
        0x32 => length_only(&mut r, Op::Vintrp, Encoding::Vintrp, 4),
        _ => Err(r.err(DecodeErrorKind::UnknownEncoding)),
    }
}

pub(super) fn bare(r: &Reader, op: Op, encoding: Encoding, len: u8) -> Inst {
    Inst {
        isa: r.isa.id,
        op,
        opcode: 0,
        encoding,
        len,
        flags: 0,
        literal: 0,
        dst: [Operand::None; 2],
        src: [Operand::None; 4],
        extra: Extra::None,
    }
}

pub(super) fn length_only(
    r: &mut Reader,
    op: Op,
    encoding: Encoding,
    len: u8,
) -> Result<Inst, DecodeError> {
    r.encoding = encoding.name();
    r.word(len as usize / 4 - 1)?;
    Ok(bare(r, op, encoding, len))
}

pub(super) fn lookup(
    r: &Reader,
    table: &'static [Option<OpInfo>],
    opcode: u16,
) -> Result<&'static OpInfo, DecodeError> {
    match table.get(opcode as usize) {
        Some(Some(info)) => Ok(info),
        _ => Err(r.err(DecodeErrorKind::UnknownOpcode(opcode))),
    }
}

pub(super) fn field_name(f: Field) -> &'static str {
    match f {
        Field::Sdst => "sdst",
        Field::Ssrc0 => "ssrc0",
        Field::Ssrc1 => "ssrc1",
        Field::Simm16 => "simm16",
        Field::Literal => "literal",
        Field::Vdst => "vdst",
        Field::Sdst2 => "sdst",
        Field::Src0 => "src0",
        Field::Src1 => "src1",
        Field::Src2 => "src2",
        Field::Vsrc1 => "vsrc1",
        Field::Sdata => "sdata",
        Field::Sbase => "sbase",
        Field::Offset => "offset",
        Field::Addr => "addr",
        Field::Data0 => "data0",
        Field::Data1 => "data1",
        Field::Data => "data",
        Field::Saddr => "saddr",
        Field::Vaddr => "vaddr",
        Field::Vdata => "vdata",
        Field::Srsrc => "srsrc",
        Field::Soffset => "soffset",
        Field::VccLo => "vcc_lo",
        Field::Vcc => "vcc",
        Field::Off => "off",
        Field::Null => "null",
    }
}

/// Fill the operand slots of `inst` from `specs`, reading raw field values
/// through `get`. Reads the literal dword (at `base_len`) when an operand
/// needs it, and sets `inst.len`.
pub(super) fn fill(
    r: &mut Reader,
    inst: &mut Inst,
    specs: &[OperandSpec],
    base_len: u8,
    sdwa: Option<bool>,
    get: impl Fn(Field) -> u16,
) -> Result<(), DecodeError> {
    let mut needs_literal = false;
    for spec in specs {
        let value = get(spec.field);
        let mut kind = spec.kind;
        if let Some(sd) = sdwa {
            // SDWA sources may be scalar codes (their S0/S1 bits were folded
            // into the value); VOPC SDWA without SD writes VCC.
            match spec.field {
                Field::Src0 | Field::Vsrc1 => kind = Kind::Vs,
                Field::Sdst2 if !sd => {
                    // VCC: wave64's pair on gfx9, VCC_LO on gfx10 (wave32).
                    inst.dst[0] = Operand::Special {
                        reg: Special::VccLo,
                        dwords: if r.isa.layout == Layout::Gfx9 { 2 } else { 1 },
                    };
                    continue;
                }
                _ => {}
            }
        }
        let operand = match kind {
            Kind::V => Some(Operand::Vgpr {
                first: value as u8,
                dwords: spec.dwords,
            }),
            Kind::A => Some(Operand::Agpr {
                first: value as u8,
                dwords: spec.dwords,
            }),
            Kind::S | Kind::Ss => Operand::scalar_in(&r.isa.regs, value, spec.dwords, spec.ty),
            Kind::Vs => Operand::vector_source_in(&r.isa.regs, value, spec.dwords, spec.ty),
            Kind::Lit => Some(Operand::Literal(spec.ty)),
            Kind::Imm => continue,
            Kind::Fixed => Some(match spec.field {
                Field::VccLo => Operand::Special {
                    reg: Special::VccLo,
                    dwords: 1,
                },
                Field::Vcc => Operand::Special {
                    reg: Special::VccLo,
                    dwords: 2,
                },
                Field::Null => Operand::Special {
                    reg: Special::Null,
                    dwords: 1,
                },
                _ => Operand::Off,
            }),
        };
        let operand = operand.ok_or_else(|| {
            r.err(DecodeErrorKind::ReservedOperand {
                field: field_name(spec.field),
                value,
            })
        })?;
        if let Operand::Literal(_) = operand {
            needs_literal = true;
        }
        match spec.role {
            Role::Dst(i) => inst.dst[i as usize & 1] = operand,
            Role::Src(i) => inst.src[i as usize & 3] = operand,
            Role::None => {}
        }
    }
    inst.len = base_len;
    if needs_literal {
        inst.literal = r.word(base_len as usize / 4)?;
        inst.flags |= inst_flags::HAS_LITERAL;
        inst.len = base_len + 4;
    }
    Ok(())
}

pub(super) fn start(r: &Reader, info: &OpInfo, encoding: Encoding, opcode: u16) -> Inst {
    let mut inst = bare(r, info.op, encoding, 4);
    inst.opcode = opcode;
    if info.flags & WRITES_EXEC != 0 {
        // gfx10's v_cmpx writes EXEC alone; gfx9's writes its VCC or SGPR destination too.
        let exec = Operand::Special {
            reg: Special::ExecLo,
            dwords: 1,
        };
        if r.isa.layout == Layout::Gfx9 {
            inst.dst[1] = exec;
        } else {
            inst.dst[0] = exec;
        }
    }
    inst
}

pub(super) fn scalar(r: &mut Reader, w0: u32, encoding: Encoding) -> Result<Inst, DecodeError> {
    r.encoding = encoding.name();
    let (table, opcode): (&'static [Option<OpInfo>], u16) = match encoding {
        Encoding::Sop1 => (r.isa.tables.sop1, ((w0 >> 8) & 0xff) as u16),
        Encoding::Sopc => (r.isa.tables.sopc, ((w0 >> 16) & 0x7f) as u16),
        Encoding::Sopp => (r.isa.tables.sopp, ((w0 >> 16) & 0x7f) as u16),
        Encoding::Sopk => (r.isa.tables.sopk, ((w0 >> 23) & 0x1f) as u16),
        _ => (r.isa.tables.sop2, ((w0 >> 23) & 0x7f) as u16),
    };
    let info = lookup(r, table, opcode)?;
    let mut inst = start(r, info, encoding, opcode);
    fill(r, &mut inst, info.operands, 4, None, |f| match f {
        Field::Sdst => ((w0 >> 16) & 0x7f) as u16,
        Field::Ssrc0 => (w0 & 0xff) as u16,
        Field::Ssrc1 => ((w0 >> 8) & 0xff) as u16,
        _ => 0,
    })?;
    if encoding == Encoding::Sopc && info.imm == ImmStyle::GprIdx {
        // s_set_gpr_idx_on: its mode is the ssrc1 field.
        inst.extra = Extra::Imm16(((w0 >> 8) & 0xff) as u16);
    }
    if matches!(encoding, Encoding::Sopp | Encoding::Sopk) {
        let simm16 = (w0 & 0xffff) as u16;
        inst.extra = if info.flags & BRANCH != 0 {
            let next = r.address.wrapping_add(inst.len as u64);
            let target = next.wrapping_add(((simm16 as i16 as i64) * 4) as u64);
            Extra::Branch { target, simm16 }
        } else {
            Extra::Imm16(simm16)
        };
    }
    if ends_block(info.op) {
        inst.flags |= inst_flags::ENDS_BLOCK;
    }
    Ok(inst)
}

/// Operations after which execution does not simply fall through to the
/// next instruction (or may not: conditional branches end a run too).
pub(crate) fn ends_block(op: Op) -> bool {
    matches!(
        op,
        Op::SEndpgm
            | Op::SEndpgmSaved
            | Op::SEndpgmOrderedPsDone
            | Op::SCodeEnd
            | Op::SBranch
            | Op::SCbranchScc0
            | Op::SCbranchScc1
            | Op::SCbranchVccz
            | Op::SCbranchVccnz
            | Op::SCbranchExecz
            | Op::SCbranchExecnz
            | Op::SCbranchCdbgsys
            | Op::SCbranchCdbguser
            | Op::SCbranchCdbgsysOrUser
            | Op::SCbranchCdbgsysAndUser
            | Op::SSetpcB64
            | Op::SSwappcB64
            | Op::SCallB64
            | Op::SRfeB64
            | Op::SSubvectorLoopBegin
            | Op::SSubvectorLoopEnd
            | Op::STrap
            | Op::SSethalt
    )
}

fn smem(r: &mut Reader, w0: u32) -> Result<Inst, DecodeError> {
    r.encoding = "SMEM";
    let w1 = r.word(1)?;
    let opcode = ((w0 >> 18) & 0xff) as u16;
    let info = lookup(r, r.isa.tables.smem, opcode)?;
    let mut inst = start(r, info, Encoding::Smem, opcode);
    fill(r, &mut inst, info.operands, 8, None, |f| match f {
        Field::Sdata => ((w0 >> 6) & 0x7f) as u16,
        Field::Sbase => ((w0 & 0x3f) << 1) as u16,
        _ => 0,
    })?;
    let soffset = (w1 >> 25) as u16;
    if soffset != 125 && info.operands.iter().any(|s| s.field == Field::Offset) {
        inst.src[1] = Operand::scalar_in(&r.isa.regs, soffset, 1, Ty::None).ok_or_else(|| {
            r.err(DecodeErrorKind::ReservedOperand {
                field: "soffset",
                value: soffset,
            })
        })?;
    }
    inst.flags |= mem_flags(info, w0 >> 16 & 1, 0, w0 >> 14 & 1);
    let offset = ((w1 & 0x1f_ffff) << 11) as i32 >> 11;
    let sdata_imm = if info
        .operands
        .iter()
        .any(|s| s.field == Field::Sdata && s.kind == Kind::Imm)
    {
        ((w0 >> 6) & 0x7f) as u8
    } else {
        0
    };
    inst.extra = Extra::Smem {
        offset,
        sdata_imm,
        imm: false,
    };
    Ok(inst)
}

pub(super) fn mem_flags(info: &OpInfo, glc: u32, slc: u32, dlc: u32) -> u8 {
    // The third bit is dlc on gfx10, scc (gfx90a) or sc1 (gfx940) on gfx9.
    let mut f = 0;
    if glc != 0 && info.flags & GLC != 0 {
        f |= inst_flags::GLC;
    }
    if slc != 0 && info.flags & SLC != 0 {
        f |= inst_flags::SLC;
    }
    if dlc != 0 && info.flags & DLC != 0 {
        f |= inst_flags::DLC;
    }
    f
}

pub(super) fn vop_short(r: &mut Reader, w0: u32, base: Encoding) -> Result<Inst, DecodeError> {
    let (opcode, vdst) = match base {
        Encoding::Vop1 => (((w0 >> 9) & 0xff) as u16, ((w0 >> 17) & 0xff) as u16),
        Encoding::Vopc => (((w0 >> 17) & 0xff) as u16, 0),
        _ => (((w0 >> 25) & 0x3f) as u16, ((w0 >> 17) & 0xff) as u16),
    };
    let vsrc1 = ((w0 >> 9) & 0xff) as u16;
    let src0 = (w0 & 0x1ff) as u16;
    let (encoding, table): (Encoding, &'static [Option<OpInfo>]) = match (base, src0) {
        (Encoding::Vop1, 0xf9) => (Encoding::Vop1Sdwa, r.isa.tables.vop1_sdwa),
        (Encoding::Vop2, 0xf9) => (Encoding::Vop2Sdwa, r.isa.tables.vop2_sdwa),
        (Encoding::Vopc, 0xf9) => (Encoding::VopcSdwa, r.isa.tables.vopc_sdwa),
        (Encoding::Vop1, 0xfa) => (Encoding::Vop1Dpp16, r.isa.tables.vop1_dpp),
        (Encoding::Vop2, 0xfa) => (Encoding::Vop2Dpp16, r.isa.tables.vop2_dpp),
        (Encoding::Vop1, 0xe9 | 0xea) => (Encoding::Vop1Dpp8, r.isa.tables.vop1_dpp8),
        (Encoding::Vop2, 0xe9 | 0xea) => (Encoding::Vop2Dpp8, r.isa.tables.vop2_dpp8),
        (Encoding::Vop1, _) => (Encoding::Vop1, r.isa.tables.vop1),
        (Encoding::Vopc, _) => (Encoding::Vopc, r.isa.tables.vopc),
        _ => (Encoding::Vop2, r.isa.tables.vop2),
    };
    r.encoding = encoding.name();
    let info = lookup(r, table, opcode)?;
    let mut inst = start(r, info, encoding, opcode);
    match encoding {
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => {
            fill(r, &mut inst, info.operands, 4, None, |f| match f {
                Field::Vdst => vdst,
                Field::Src0 => src0,
                Field::Vsrc1 => vsrc1,
                _ => 0,
            })?;
        }
        Encoding::Vop1Sdwa | Encoding::Vop2Sdwa | Encoding::VopcSdwa => {
            let w1 = r.word(1)?;
            // With the S0/S1 bits a source is a scalar code, else a VGPR.
            let s0 = (w1 & 0xff) as u16 + if w1 >> 23 & 1 == 0 { 256 } else { 0 };
            let s1 = vsrc1 + if w1 >> 31 == 0 { 256 } else { 0 };
            let sd = w1 >> 15 & 1 != 0;
            let sdst = ((w1 >> 8) & 0x7f) as u16;
            fill(r, &mut inst, info.operands, 8, Some(sd), |f| match f {
                Field::Vdst => vdst,
                Field::Src0 => s0,
                Field::Vsrc1 => s1,
                Field::Sdst2 => sdst,
                _ => 0,
            })?;
            let vopc = encoding == Encoding::VopcSdwa;
            inst.extra = Extra::Sdwa(Sdwa {
                dst_sel: if vopc { 6 } else { ((w1 >> 8) & 7) as u8 },
                dst_unused: if vopc { 0 } else { ((w1 >> 11) & 3) as u8 },
                src0_sel: ((w1 >> 16) & 7) as u8,
                src1_sel: ((w1 >> 24) & 7) as u8,
                sext: ((w1 >> 19) & 1 | ((w1 >> 27) & 1) << 1) as u8,
                neg: ((w1 >> 20) & 1 | ((w1 >> 28) & 1) << 1) as u8,
                abs: ((w1 >> 21) & 1 | ((w1 >> 29) & 1) << 1) as u8,
                clamp: !vopc && w1 >> 13 & 1 != 0,
                omod: if vopc { 0 } else { ((w1 >> 14) & 3) as u8 },
            });
        }
        Encoding::Vop1Dpp16 | Encoding::Vop2Dpp16 => {
            let w1 = r.word(1)?;
            fill(r, &mut inst, info.operands, 8, None, |f| match f {
                Field::Vdst => vdst,
                Field::Src0 => (w1 & 0xff) as u16 + 256,
                Field::Vsrc1 => vsrc1,
                _ => 0,
            })?;
            inst.extra = Extra::Dpp16(Dpp16 {
                ctrl: ((w1 >> 8) & 0x1ff) as u16,
                row_mask: (w1 >> 28) as u8,
                bank_mask: ((w1 >> 24) & 0xf) as u8,
                bound_ctrl: w1 >> 19 & 1 != 0,
                fi: w1 >> 18 & 1 != 0,
                neg: ((w1 >> 20) & 1 | ((w1 >> 22) & 1) << 1) as u8,
                abs: ((w1 >> 21) & 1 | ((w1 >> 23) & 1) << 1) as u8,
            });
        }
        _ => {
            let w1 = r.word(1)?;
            fill(r, &mut inst, info.operands, 8, None, |f| match f {
                Field::Vdst => vdst,
                Field::Src0 => (w1 & 0xff) as u16 + 256,
                Field::Vsrc1 => vsrc1,
                _ => 0,
            })?;
            inst.extra = Extra::Dpp8 {
                lanes: w1 >> 8,
                fi: src0 == 0xea,
            };
        }
    }
    Ok(inst)
}

pub(super) fn vop3(r: &mut Reader, w0: u32, packed: bool) -> Result<Inst, DecodeError> {
    r.encoding = if packed { "VOP3P" } else { "VOP3" };
    let w1 = r.word(1)?;
    let (encoding, table, opcode): (Encoding, &'static [Option<OpInfo>], u16) = if packed {
        (
            Encoding::Vop3p,
            r.isa.tables.vop3p,
            ((w0 >> 16) & 0x7f) as u16,
        )
    } else {
        (
            Encoding::Vop3,
            r.isa.tables.vop3,
            ((w0 >> 16) & 0x3ff) as u16,
        )
    };
    let info = lookup(r, table, opcode)?;
    let mut inst = start(r, info, encoding, opcode);
    fill(r, &mut inst, info.operands, 8, None, |f| match f {
        Field::Vdst => (w0 & 0xff) as u16,
        Field::Sdst2 => ((w0 >> 8) & 0x7f) as u16,
        Field::Src0 => (w1 & 0x1ff) as u16,
        Field::Src1 => ((w1 >> 9) & 0x1ff) as u16,
        Field::Src2 => ((w1 >> 18) & 0x1ff) as u16,
        _ => 0,
    })?;
    let clamp = w0 >> 15 & 1 != 0;
    let neg = (w1 >> 29) as u8;
    if packed && info.flags & MAI != 0 {
        // Matrix forms: bit 15 puts the destination and src2 in AGPRs, bits 59/60 src0/src1.
        if clamp {
            to_agpr(&mut inst.dst[0]);
            to_agpr(&mut inst.src[2]);
        }
        if w1 >> 27 & 1 != 0 {
            to_agpr(&mut inst.src[0]);
        }
        if w1 >> 28 & 1 != 0 {
            to_agpr(&mut inst.src[1]);
        }
        inst.extra = Extra::Mai {
            cbsz: ((w0 >> 8) & 7) as u8,
            abid: ((w0 >> 11) & 0xf) as u8,
            blgp: (w1 >> 29) as u8,
        };
        return Ok(inst);
    }
    inst.extra = if packed {
        Extra::Vop3p {
            clamp,
            op_sel: ((w0 >> 11) & 7) as u8,
            op_sel_hi: ((w1 >> 27) & 3 | ((w0 >> 14) & 1) << 2) as u8,
            neg_lo: neg,
            neg_hi: ((w0 >> 8) & 7) as u8,
        }
    } else {
        let vop3b = info.operands.iter().any(|s| s.field == Field::Sdst2);
        Extra::Vop3 {
            clamp,
            omod: ((w1 >> 27) & 3) as u8,
            neg,
            abs: if vop3b { 0 } else { ((w0 >> 8) & 7) as u8 },
            op_sel: if vop3b { 0 } else { ((w0 >> 11) & 0xf) as u8 },
        }
    };
    Ok(inst)
}

fn ds(r: &mut Reader, w0: u32) -> Result<Inst, DecodeError> {
    r.encoding = "DS";
    let w1 = r.word(1)?;
    let opcode = ((w0 >> 18) & 0xff) as u16;
    let info = lookup(r, r.isa.tables.ds, opcode)?;
    let mut inst = start(r, info, Encoding::Ds, opcode);
    fill(r, &mut inst, info.operands, 8, None, |f| match f {
        Field::Addr => (w1 & 0xff) as u16,
        Field::Data0 => ((w1 >> 8) & 0xff) as u16,
        Field::Data1 => ((w1 >> 16) & 0xff) as u16,
        Field::Vdst => (w1 >> 24) as u16,
        _ => 0,
    })?;
    inst.extra = Extra::Ds {
        offset0: w0 as u8,
        offset1: (w0 >> 8) as u8,
        gds: w0 >> 17 & 1 != 0,
    };
    Ok(inst)
}

fn flat(r: &mut Reader, w0: u32) -> Result<Inst, DecodeError> {
    let seg = (w0 >> 14) & 3;
    let saddr = ((r.code.get(6).copied().unwrap_or(0)) & 0x7f) as u16;
    let has_saddr = saddr != 125;
    let (encoding, table): (Encoding, &'static [Option<OpInfo>]) = match (seg, has_saddr) {
        (0, _) => (Encoding::Flat, r.isa.tables.flat),
        (1, false) => (Encoding::Scratch, r.isa.tables.scratch),
        (1, true) => (Encoding::Scratch, r.isa.tables.scratch_saddr),
        (2, false) => (Encoding::Global, r.isa.tables.global),
        (2, true) => (Encoding::Global, r.isa.tables.global_saddr),
        _ => {
            r.encoding = "FLAT";
            return Err(r.err(DecodeErrorKind::ReservedOperand {
                field: "seg",
                value: 3,
            }));
        }
    };
    r.encoding = encoding.name();
    let w1 = r.word(1)?;
    let opcode = ((w0 >> 18) & 0x7f) as u16;
    let info = lookup(r, table, opcode)?;
    let mut inst = start(r, info, encoding, opcode);
    let glc = w0 >> 16 & 1;
    let specs = if glc != 0 && !info.rtn_operands.is_empty() {
        info.rtn_operands
    } else {
        info.operands
    };
    fill(r, &mut inst, specs, 8, None, |f| match f {
        Field::Addr => (w1 & 0xff) as u16,
        Field::Data => ((w1 >> 8) & 0xff) as u16,
        Field::Saddr => saddr,
        Field::Vdst => (w1 >> 24) as u16,
        _ => 0,
    })?;
    // The `off` of an absent vaddr/saddr goes to its slot (src[0] or src[2]).
    // The printed `off` stands for the address register that is absent:
    // vaddr when a scalar base is used (SCRATCH), else saddr.
    if specs.iter().any(|s| s.field == Field::Off) {
        inst.src[if has_saddr { 0 } else { 2 }] = Operand::Off;
    }
    inst.flags |= mem_flags(info, glc, w0 >> 17 & 1, w0 >> 12 & 1);
    let raw = (w0 & 0xfff) as i16;
    let offset = if encoding == Encoding::Flat {
        raw
    } else {
        (raw << 4) >> 4
    };
    inst.extra = Extra::Flat {
        offset,
        lds: w0 >> 13 & 1 != 0,
    };
    Ok(inst)
}

/// A MUBUF instruction's address operand: none without `offen` and `idxen`, one VGPR with
/// either, an index and offset pair with both (the same in every family's encoding).
pub(super) fn mubuf_vaddr(offen: bool, idxen: bool, vaddr: u8) -> Operand {
    match (offen, idxen) {
        (false, false) => Operand::Off,
        (true, true) => Operand::Vgpr {
            first: vaddr,
            dwords: 2,
        },
        _ => Operand::Vgpr {
            first: vaddr,
            dwords: 1,
        },
    }
}

fn mubuf(r: &mut Reader, w0: u32) -> Result<Inst, DecodeError> {
    r.encoding = "MUBUF";
    let w1 = r.word(1)?;
    let opcode = (((w0 >> 18) & 0x7f) | ((w0 >> 25) & 1) << 7) as u16;
    let info = lookup(r, r.isa.tables.mubuf, opcode)?;
    let mut inst = start(r, info, Encoding::Mubuf, opcode);
    let offen = w0 >> 12 & 1 != 0;
    let idxen = w0 >> 13 & 1 != 0;
    let glc = w0 >> 14 & 1;
    fill(r, &mut inst, info.operands, 8, None, |f| match f {
        Field::Vaddr => (w1 & 0xff) as u16,
        Field::Vdata => ((w1 >> 8) & 0xff) as u16,
        Field::Srsrc => (((w1 >> 16) & 0x1f) << 2) as u16,
        Field::Soffset => (w1 >> 24) as u16,
        _ => 0,
    })?;
    if info.operands.iter().any(|s| s.field == Field::Vaddr) {
        inst.src[0] = mubuf_vaddr(offen, idxen, (w1 & 0xff) as u8);
    }
    if info.flags & ATOMIC != 0 && glc != 0 {
        inst.dst[0] = inst.src[3];
    }
    inst.flags |= mem_flags(info, glc, w1 >> 22 & 1, w0 >> 15 & 1);
    inst.extra = Extra::Mubuf {
        offset: (w0 & 0xfff) as u16,
        offen,
        idxen,
        lds: w0 >> 16 & 1 != 0,
        tfe: w1 >> 23 & 1 != 0,
    };
    Ok(inst)
}

/// Turns a VGPR operand into the AGPRs of the same numbers (CDNA's AGPR bits).
pub(super) fn to_agpr(o: &mut Operand) {
    if let Operand::Vgpr { first, dwords } = *o {
        *o = Operand::Agpr { first, dwords };
    }
}

/// The table entry an instruction was decoded from (for printing).
pub(crate) fn info_of(inst: &Inst) -> Option<&'static OpInfo> {
    inst.isa.isa().info(inst)
}

/// The entry of `tables` an instruction was decoded from.
pub(crate) fn info_in(tables: &'static Tables, inst: &Inst) -> Option<&'static OpInfo> {
    let table: &'static [Option<OpInfo>] = match inst.encoding {
        Encoding::Sop1 => tables.sop1,
        Encoding::Sop2 => tables.sop2,
        Encoding::Sopk => tables.sopk,
        Encoding::Sopc => tables.sopc,
        Encoding::Sopp => tables.sopp,
        Encoding::Smem => tables.smem,
        Encoding::Vop1 => tables.vop1,
        Encoding::Vop2 => tables.vop2,
        Encoding::Vopc => tables.vopc,
        Encoding::Vop1Sdwa => tables.vop1_sdwa,
        Encoding::Vop2Sdwa => tables.vop2_sdwa,
        Encoding::VopcSdwa => tables.vopc_sdwa,
        Encoding::Vop1Dpp16 => tables.vop1_dpp,
        Encoding::Vop2Dpp16 => tables.vop2_dpp,
        Encoding::Vop1Dpp8 => tables.vop1_dpp8,
        Encoding::Vop2Dpp8 => tables.vop2_dpp8,
        Encoding::Vop3 => tables.vop3,
        Encoding::Vop3p => tables.vop3p,
        Encoding::Ds => tables.ds,
        Encoding::Flat => tables.flat,
        Encoding::Global if !matches!(inst.src[2], Operand::Off | Operand::None) => {
            tables.global_saddr
        }
        Encoding::Global => tables.global,
        Encoding::Scratch => {
            let saddr = !matches!(inst.src[2], Operand::Off | Operand::None);
            let vaddr = !matches!(inst.src[0], Operand::Off | Operand::None);
            match (inst.isa.isa().scratch_sve, saddr, vaddr) {
                (true, true, true) => tables.scratch_svs,
                (true, false, false) => tables.scratch_st,
                (_, true, _) => tables.scratch_saddr,
                _ => tables.scratch,
            }
        }
        Encoding::Mubuf => tables.mubuf,
        _ => return None,
    };
    table.get(inst.opcode as usize).and_then(|x| x.as_ref())
}
