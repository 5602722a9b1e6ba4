//! Decoding GFX9-layout machine code as CDNA2 (gfx90a) and CDNA3 (gfx942) have it: the
//! words of SMEM (IMM and SOFFSET_EN bits, 21-bit signed offset), VOP3 (`0xD0`..; no
//! literals), VOP3P with its matrix (MAI) forms, DS (opcode at bit 17), FLAT/GLOBAL/SCRATCH
//! (13-bit offset, `0x7f` for no scalar address, gfx940's SVE bit) and MUBUF, and the AGPR
//! bits of the memory encodings. The scalar ALU, VOP1/VOP2/VOPC and their SDWA and DPP forms
//! are gfx10's words and use its decoder (`decode.rs`), as do operand filling and errors.
//! Never panics on any input. Not printing (`print.rs`).

use super::decode::{
    fill, length_only, lookup, mem_flags, mubuf_vaddr, scalar, start, to_agpr, vop3, vop_short,
    Reader,
};
use super::family::Isa;
use super::inst::{inst_flags, Encoding, Extra, Inst};
use super::operand::Operand;
use super::spec::*;
use super::{DecodeError, DecodeErrorKind};

/// "No scalar address" in FLAT's saddr field (gfx9 has no NULL there).
const SADDR_OFF: u16 = 0x7f;

/// Decode the instruction of `isa` (a GFX9-layout ISA) at the start of `code`.
pub(crate) fn decode_gfx9(
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
        0x30 => smem(&mut r, w0),
        0x34 => {
            let packed = w0 >> 23 == 0x1a7;
            let inst = vop3(&mut r, w0, packed)?;
            if inst.flags & inst_flags::HAS_LITERAL != 0 {
                // gfx9's VOP3 words take no literal: code 255 is reserved there.
                return Err(r.err(DecodeErrorKind::ReservedOperand {
                    field: "src",
                    value: 255,
                }));
            }
            Ok(inst)
        }
        0x36 => ds(&mut r, w0),
        0x37 => flat(&mut r, w0),
        0x38 => mubuf(&mut r, w0),
        0x3a => length_only(&mut r, Op::Mtbuf, Encoding::Mtbuf, 8),
        0x3c => length_only(&mut r, Op::Mimg, Encoding::Mimg, 8),
        0x31 => length_only(&mut r, Op::Exp, Encoding::Exp, 8),
        _ => Err(r.err(DecodeErrorKind::UnknownEncoding)),
    }
}

fn reserved(r: &Reader, field: &'static str, value: u16) -> DecodeError {
    r.err(DecodeErrorKind::ReservedOperand { field, value })
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
    let imm = w0 >> 17 & 1 != 0;
    let soffset_en = w0 >> 14 & 1 != 0;
    let mut offset = 0;
    if info.operands.iter().any(|s| s.field == Field::Offset) {
        // IMM: the low 21 bits are a signed byte offset; SOFFSET_EN: bits 63:57 name an
        // offset register; neither: the low 7 bits name it.
        let register = match (imm, soffset_en) {
            (_, true) => Some((w1 >> 25) as u16),
            (false, false) => Some((w1 & 0x7f) as u16),
            (true, false) => None,
        };
        if let Some(code) = register {
            inst.src[1] = Operand::scalar_in(&r.isa.regs, code, 1, Ty::None)
                .ok_or_else(|| reserved(r, "soffset", code))?;
        }
        if imm {
            offset = ((w1 & 0x1f_ffff) << 11) as i32 >> 11;
        }
    }
    inst.flags |= mem_flags(info, w0 >> 16 & 1, 0, 0);
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
        imm,
    };
    Ok(inst)
}

/// The data operands of a memory instruction whose AGPR bit is set name AGPRs.
fn agpr_data(inst: &mut Inst) {
    to_agpr(&mut inst.dst[0]);
    match inst.encoding {
        // The address is src[0] (DS, FLAT, MUBUF), the descriptor src[1] (MUBUF).
        Encoding::Ds => {
            to_agpr(&mut inst.src[1]);
            to_agpr(&mut inst.src[2]);
        }
        Encoding::Mubuf => to_agpr(&mut inst.src[3]),
        _ => to_agpr(&mut inst.src[1]),
    }
}

fn ds(r: &mut Reader, w0: u32) -> Result<Inst, DecodeError> {
    r.encoding = "DS";
    let w1 = r.word(1)?;
    let opcode = ((w0 >> 17) & 0xff) as u16;
    let info = lookup(r, r.isa.tables.ds, opcode)?;
    let mut inst = start(r, info, Encoding::Ds, opcode);
    fill(r, &mut inst, info.operands, 8, None, |f| match f {
        Field::Addr => (w1 & 0xff) as u16,
        Field::Data0 => ((w1 >> 8) & 0xff) as u16,
        Field::Data1 => ((w1 >> 16) & 0xff) as u16,
        Field::Vdst => (w1 >> 24) as u16,
        _ => 0,
    })?;
    if w0 >> 25 & 1 != 0 {
        agpr_data(&mut inst);
    }
    inst.extra = Extra::Ds {
        offset0: w0 as u8,
        offset1: (w0 >> 8) as u8,
        gds: w0 >> 16 & 1 != 0,
    };
    Ok(inst)
}

fn flat(r: &mut Reader, w0: u32) -> Result<Inst, DecodeError> {
    let seg = (w0 >> 14) & 3;
    let saddr = u16::from(r.code.get(6).copied().unwrap_or(0) & 0x7f);
    let has_saddr = saddr != SADDR_OFF;
    // gfx940's scratch: bit 13 (SVE) says the VGPR address is used; elsewhere it is LDS DMA.
    let sve = r.isa.scratch_sve && seg == 1;
    let vaddr_on = w0 >> 13 & 1 != 0;
    let (encoding, table): (Encoding, &'static [Option<OpInfo>]) = match (seg, has_saddr) {
        (0, _) => (Encoding::Flat, r.isa.tables.flat),
        (1, _) if sve => (
            Encoding::Scratch,
            match (has_saddr, vaddr_on) {
                (true, true) => r.isa.tables.scratch_svs,
                (true, false) => r.isa.tables.scratch_saddr,
                (false, true) => r.isa.tables.scratch,
                (false, false) => r.isa.tables.scratch_st,
            },
        ),
        (1, false) => (Encoding::Scratch, r.isa.tables.scratch),
        (1, true) => (Encoding::Scratch, r.isa.tables.scratch_saddr),
        (2, false) => (Encoding::Global, r.isa.tables.global),
        (2, true) => (Encoding::Global, r.isa.tables.global_saddr),
        _ => {
            r.encoding = "FLAT";
            return Err(reserved(r, "seg", 3));
        }
    };
    r.encoding = encoding.name();
    let w1 = r.word(1)?;
    if encoding == Encoding::Flat && saddr != 0 {
        // FLAT proper has no scalar address: the field must be zero.
        return Err(reserved(r, "saddr", saddr));
    }
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
    if encoding != Encoding::Flat {
        // The printed `off`s stand for the absent addresses: vaddr (src[0]) and saddr (src[2]).
        if !has_saddr {
            inst.src[2] = Operand::Off;
        }
        if !specs.iter().any(|s| s.field == Field::Addr) {
            inst.src[0] = Operand::Off;
        }
    }
    if w1 >> 23 & 1 != 0 {
        agpr_data(&mut inst);
    }
    inst.flags |= mem_flags(info, glc, w0 >> 17 & 1, w0 >> 25 & 1);
    let raw = (w0 & 0x1fff) as i16;
    let offset = if encoding == Encoding::Flat {
        // FLAT's offset is 12 bits, unsigned (bit 12 is ignored).
        raw & 0xfff
    } else {
        (raw << 3) >> 3
    };
    inst.extra = Extra::Flat {
        offset,
        lds: !sve && w0 >> 13 & 1 != 0,
    };
    Ok(inst)
}

fn mubuf(r: &mut Reader, w0: u32) -> Result<Inst, DecodeError> {
    r.encoding = "MUBUF";
    let w1 = r.word(1)?;
    let opcode = ((w0 >> 18) & 0x7f) as u16;
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
    if w1 >> 23 & 1 != 0 {
        agpr_data(&mut inst);
    }
    if info.flags & ATOMIC != 0 && glc != 0 {
        inst.dst[0] = inst.src[3];
    }
    inst.flags |= mem_flags(info, glc, w0 >> 17 & 1, w0 >> 15 & 1);
    inst.extra = Extra::Mubuf {
        offset: (w0 & 0xfff) as u16,
        offen,
        idxen,
        lds: w0 >> 16 & 1 != 0,
        tfe: false,
    };
    Ok(inst)
}
