//! Bytes to [`Inst`]: the encoding from the top bits of the first dword, the opcode looked up in
//! the generated tables, the operand fields extracted by the ISA's field layout (RDNA2 ISA guide,
//! "Microcode Formats"; checked against llvm-mc's encodings), and the instruction's length
//! (literal, SDWA and DPP dwords included).
//!
//! Never panics on any input: a short buffer, an unknown encoding or an opcode LLVM does not
//! decode is a [`DecodeError`] naming the address, the words and what is wrong. Not for printing
//! or executing.

use super::gfx1030_tables as t;
use super::{code, Encoding, Form, Inst, OpDesc, Operand};

/// Why bytes do not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes end inside the instruction.
    #[error("{address:#x}: truncated {what}: needs {needed} bytes, {available} left")]
    Truncated {
        /// Address of the instruction.
        address: u64,
        /// What was being read.
        what: &'static str,
        /// Bytes the instruction needs.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// No encoding the emulator knows has these top bits.
    #[error("{address:#x}: unknown encoding {word0:#010x}")]
    UnknownEncoding {
        /// Address of the instruction.
        address: u64,
        /// First dword.
        word0: u32,
    },
    /// The encoding is known, the opcode is not one gfx1030 has (or the emulator models).
    #[error("{address:#x}: invalid {encoding} opcode {opcode:#x} in {word0:#010x}")]
    InvalidOpcode {
        /// Address of the instruction.
        address: u64,
        /// Encoding name.
        encoding: &'static str,
        /// The opcode field.
        opcode: u32,
        /// First dword.
        word0: u32,
    },
    /// An encoding the emulator recognises but does not decode (MIMG, MTBUF, EXP, VINTRP).
    #[error("{address:#x}: {encoding} instructions are not supported ({word0:#010x})")]
    Unsupported {
        /// Address of the instruction.
        address: u64,
        /// Encoding name.
        encoding: &'static str,
        /// First dword.
        word0: u32,
    },
}

fn bits(w: u32, lo: u32, width: u32) -> u32 {
    (w >> lo) & ((1u32 << width) - 1)
}

struct Reader<'a> {
    bytes: &'a [u8],
    address: u64,
}

impl Reader<'_> {
    fn dword(&self, index: usize, what: &'static str) -> Result<u32, DecodeError> {
        let start = index * 4;
        self.bytes
            .get(start..start + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or(DecodeError::Truncated {
                address: self.address,
                what,
                needed: start + 4,
                available: self.bytes.len(),
            })
    }
}

fn lookup(
    table: &'static [Option<OpDesc>],
    opcode: u32,
    encoding: &'static str,
    address: u64,
    word0: u32,
) -> Result<&'static OpDesc, DecodeError> {
    table
        .get(opcode as usize)
        .and_then(Option::as_ref)
        .ok_or(DecodeError::InvalidOpcode {
            address,
            encoding,
            opcode,
            word0,
        })
}

fn opnd(code: u32, width: u8) -> Operand {
    if width == 0 {
        Operand::NONE
    } else {
        Operand {
            code: code as u16,
            width,
        }
    }
}

/// A scalar register field (7 bits in SOP destinations), aligned down for tuples of four or more
/// dwords, as the hardware and llvm-objdump read them.
fn sreg(field: u32, width: u8) -> Operand {
    let field = if width >= 4 && field <= code::SGPR_MAX as u32 {
        field & !3
    } else {
        field
    };
    opnd(field, width)
}

/// Decodes the instruction at the start of `bytes`, which sits at `address`.
///
/// # Errors
/// A [`DecodeError`] naming the address and the words.
pub fn decode(bytes: &[u8], address: u64) -> Result<Inst, DecodeError> {
    let r = Reader { bytes, address };
    let w0 = r.dword(0, "instruction")?;
    let mut inst = Inst {
        op: t::SOPP[0].map_or(super::Op::SNop, |d| d.op),
        enc: Encoding::Sopp,
        form: Form::Plain,
        len: 4,
        dst: Operand::NONE,
        sdst: Operand::NONE,
        src: [Operand::NONE; 3],
        literal: 0,
        word0: w0,
        word1: 0,
        desc: &NOP_DESC,
    };
    let set = |inst: &mut Inst, desc: &'static OpDesc, enc: Encoding| {
        inst.op = desc.op;
        inst.desc = desc;
        inst.enc = enc;
    };
    if w0 >> 30 == 0b10 {
        // Scalar ALU.
        match w0 >> 23 {
            0x17D => {
                let d = lookup(&t::SOP1, bits(w0, 8, 8), "SOP1", address, w0)?;
                set(&mut inst, d, Encoding::Sop1);
                inst.dst = sreg(bits(w0, 16, 7), d.w[0]);
                inst.src[0] = opnd(bits(w0, 0, 8), d.w[1]);
            }
            0x17E => {
                let d = lookup(&t::SOPC, bits(w0, 16, 7), "SOPC", address, w0)?;
                set(&mut inst, d, Encoding::Sopc);
                inst.src[0] = opnd(bits(w0, 0, 8), d.w[1]);
                inst.src[1] = opnd(bits(w0, 8, 8), d.w[2]);
            }
            0x17F => {
                let d = lookup(&t::SOPP, bits(w0, 16, 7), "SOPP", address, w0)?;
                set(&mut inst, d, Encoding::Sopp);
            }
            _ if w0 >> 28 == 0b1011 => {
                let d = lookup(&t::SOPK, bits(w0, 23, 5), "SOPK", address, w0)?;
                set(&mut inst, d, Encoding::Sopk);
                inst.dst = sreg(bits(w0, 16, 7), d.w[0]);
            }
            _ => {
                let d = lookup(&t::SOP2, bits(w0, 23, 7), "SOP2", address, w0)?;
                set(&mut inst, d, Encoding::Sop2);
                inst.dst = sreg(bits(w0, 16, 7), d.w[0]);
                inst.src[0] = opnd(bits(w0, 0, 8), d.w[1]);
                inst.src[1] = opnd(bits(w0, 8, 8), d.w[2]);
            }
        }
        let needs_literal = inst.desc.literal
            || inst
                .src
                .iter()
                .any(|s| s.present() && s.code == code::LITERAL);
        if needs_literal {
            inst.literal = r.dword(1, "literal")?;
            inst.len = 8;
        }
        return Ok(inst);
    }
    if w0 >> 31 == 0 {
        return decode_vop_short(&r, w0, inst, set);
    }
    match w0 >> 26 {
        0x35 => decode_vop3(&r, w0, inst, set, false),
        0x33 => decode_vop3(&r, w0, inst, set, true),
        0x3D => {
            let w1 = r.dword(1, "SMEM second dword")?;
            let d = lookup(&t::SMEM, bits(w0, 18, 8), "SMEM", address, w0)?;
            set(&mut inst, d, Encoding::Smem);
            inst.len = 8;
            inst.word1 = w1;
            inst.dst = sreg(bits(w0, 6, 7), d.w[0]);
            inst.src[0] = opnd(bits(w0, 0, 6) << 1, d.w[1]);
            let soffset = bits(w1, 25, 7);
            if soffset as u16 != code::NULL {
                inst.src[1] = opnd(soffset, 1);
            }
            Ok(inst)
        }
        0x36 => {
            let w1 = r.dword(1, "DS second dword")?;
            let d = lookup(&t::DS, bits(w0, 18, 8), "DS", address, w0)?;
            set(&mut inst, d, Encoding::Ds);
            inst.len = 8;
            inst.word1 = w1;
            inst.dst = opnd(256 + bits(w1, 24, 8), d.w[0]);
            inst.src[0] = opnd(256 + bits(w1, 0, 8), d.w[1]);
            inst.src[1] = opnd(256 + bits(w1, 8, 8), d.w[2]);
            inst.src[2] = opnd(256 + bits(w1, 16, 8), d.w[3]);
            Ok(inst)
        }
        0x37 => {
            let w1 = r.dword(1, "FLAT second dword")?;
            let saddr = bits(w1, 16, 7);
            let scalar = saddr as u16 != code::NULL;
            let (table, enc, name): (&'static [Option<OpDesc>], Encoding, &str) =
                match (bits(w0, 14, 2), scalar) {
                    (0, _) => (&t::FLAT, Encoding::Flat, "FLAT"),
                    (1, false) => (&t::SCRATCH, Encoding::Scratch, "SCRATCH"),
                    (1, true) => (&t::SCRATCH_SADDR, Encoding::Scratch, "SCRATCH"),
                    (2, false) => (&t::GLOBAL, Encoding::Global, "GLOBAL"),
                    (2, true) => (&t::GLOBAL_SADDR, Encoding::Global, "GLOBAL"),
                    _ => {
                        return Err(DecodeError::InvalidOpcode {
                            address,
                            encoding: "FLAT segment",
                            opcode: 3,
                            word0: w0,
                        })
                    }
                };
            let d = lookup(table, bits(w0, 18, 7), name, address, w0)?;
            set(&mut inst, d, enc);
            inst.len = 8;
            inst.word1 = w1;
            inst.dst = opnd(256 + bits(w1, 24, 8), d.w[0]);
            inst.src[0] = opnd(256 + bits(w1, 0, 8), d.w[1]);
            inst.src[1] = opnd(256 + bits(w1, 8, 8), d.w[2]);
            if scalar {
                inst.src[2] = opnd(saddr, d.w[3].max(1));
            }
            if super::print::returning_flat_atomic(&inst) {
                // The old value comes back in vdst: as wide as the data, half for cmpswap.
                let data = d.w[2];
                let width = if d.mnemonic.contains("cmpswap") {
                    data / 2
                } else {
                    data
                };
                inst.dst = opnd(256 + bits(w1, 24, 8), width);
            }
            Ok(inst)
        }
        0x38 => {
            let w1 = r.dword(1, "MUBUF second dword")?;
            let opcode = bits(w0, 18, 7) | bits(w0, 25, 1) << 7;
            let d = lookup(&t::MUBUF, opcode, "MUBUF", address, w0)?;
            set(&mut inst, d, Encoding::Mubuf);
            inst.len = 8;
            inst.word1 = w1;
            let (offen, idxen) = (bits(w0, 12, 1) != 0, bits(w0, 13, 1) != 0);
            let vaddr_width = u8::from(offen) + u8::from(idxen);
            inst.dst = opnd(256 + bits(w1, 8, 8), d.w[0]);
            inst.src[0] = opnd(256 + bits(w1, 0, 8), vaddr_width);
            inst.src[1] = opnd(256 + bits(w1, 8, 8), d.w[0]);
            inst.src[2] = opnd(bits(w1, 16, 5) << 2, 4);
            inst.sdst = opnd(bits(w1, 24, 8), 1);
            Ok(inst)
        }
        0x3A => Err(DecodeError::Unsupported {
            address,
            encoding: "MTBUF",
            word0: w0,
        }),
        0x3C => Err(DecodeError::Unsupported {
            address,
            encoding: "MIMG",
            word0: w0,
        }),
        0x3E => Err(DecodeError::Unsupported {
            address,
            encoding: "EXP",
            word0: w0,
        }),
        0x32 => Err(DecodeError::Unsupported {
            address,
            encoding: "VINTRP",
            word0: w0,
        }),
        _ => Err(DecodeError::UnknownEncoding { address, word0: w0 }),
    }
}

/// The table entry of a placeholder instruction (never printed: replaced before returning).
static NOP_DESC: OpDesc = OpDesc {
    op: super::Op::SNop,
    mnemonic: "s_nop",
    template: "{simm16:hex}",
    w: [0; 5],
    literal: false,
    vop3b: false,
};

type Setter = fn(&mut Inst, &'static OpDesc, Encoding);

/// VOP1, VOP2 and VOPC, with their SDWA, DPP16 and DPP8 forms.
fn decode_vop_short(
    r: &Reader<'_>,
    w0: u32,
    mut inst: Inst,
    set: Setter,
) -> Result<Inst, DecodeError> {
    let address = r.address;
    let src0 = bits(w0, 0, 9);
    let form = match src0 as u16 {
        code::SDWA => Form::Sdwa,
        code::DPP16 => Form::Dpp16,
        code::DPP8 | code::DPP8_FI => Form::Dpp8,
        _ => Form::Plain,
    };
    let (kind, opcode) = match w0 >> 25 {
        0x3F => ("VOP1", bits(w0, 9, 8)),
        0x3E => ("VOPC", bits(w0, 17, 8)),
        _ => ("VOP2", bits(w0, 25, 6)),
    };
    let (table, enc): (&'static [Option<OpDesc>], Encoding) = match (kind, form) {
        ("VOP1", Form::Sdwa) => (&t::VOP1_SDWA, Encoding::Vop1),
        ("VOP1", Form::Dpp16 | Form::Dpp8) => (&t::VOP1_DPP, Encoding::Vop1),
        ("VOP1", Form::Plain) => (&t::VOP1, Encoding::Vop1),
        ("VOP2", Form::Sdwa) => (&t::VOP2_SDWA, Encoding::Vop2),
        ("VOP2", Form::Dpp16 | Form::Dpp8) => (&t::VOP2_DPP, Encoding::Vop2),
        ("VOP2", Form::Plain) => (&t::VOP2, Encoding::Vop2),
        ("VOPC", Form::Sdwa) => (&t::VOPC_SDWA, Encoding::Vopc),
        ("VOPC", Form::Plain) => (&t::VOPC, Encoding::Vopc),
        _ => {
            return Err(DecodeError::InvalidOpcode {
                address,
                encoding: "VOPC DPP",
                opcode,
                word0: w0,
            })
        }
    };
    let d = lookup(table, opcode, kind, address, w0)?;
    set(&mut inst, d, enc);
    inst.form = form;
    let vdst = bits(w0, 17, 8);
    let vsrc1 = 256 + bits(w0, 9, 8);
    match enc {
        Encoding::Vop1 => {
            // v_readfirstlane_b32 writes an SGPR.
            let dst = if d.template.starts_with("{vdst}") && d.op == super::Op::VReadfirstlaneB32 {
                vdst
            } else {
                256 + vdst
            };
            inst.dst = opnd(dst, d.w[0]);
        }
        Encoding::Vop2 => {
            inst.dst = opnd(256 + vdst, d.w[0]);
            inst.src[1] = opnd(vsrc1, d.w[2]);
        }
        _ => {
            inst.dst = opnd(code::VCC_LO as u32, 1);
            inst.src[1] = opnd(vsrc1, d.w[2]);
        }
    }
    match form {
        Form::Plain => {
            inst.src[0] = opnd(src0, d.w[1]);
            if d.literal || src0 as u16 == code::LITERAL {
                inst.literal = r.dword(1, "literal")?;
                inst.len = 8;
            }
        }
        Form::Sdwa => {
            let w1 = r.dword(1, "SDWA dword")?;
            inst.word1 = w1;
            inst.len = 8;
            let s0 = bits(w1, 0, 8) + if bits(w1, 23, 1) != 0 { 0 } else { 256 };
            inst.src[0] = opnd(s0, d.w[1]);
            if enc != Encoding::Vop1 && bits(w1, 31, 1) != 0 {
                inst.src[1] = opnd(bits(w0, 9, 8), d.w[2]);
            }
            if enc == Encoding::Vopc && bits(w1, 15, 1) != 0 {
                inst.dst = opnd(bits(w1, 8, 7), 1);
            }
        }
        Form::Dpp16 | Form::Dpp8 => {
            let w1 = r.dword(1, "DPP dword")?;
            inst.word1 = w1;
            inst.len = 8;
            inst.src[0] = opnd(256 + bits(w1, 0, 8), d.w[1]);
        }
    }
    Ok(inst)
}

/// VOP3 (incl. VOP3B) and VOP3P.
fn decode_vop3(
    r: &Reader<'_>,
    w0: u32,
    mut inst: Inst,
    set: Setter,
    packed: bool,
) -> Result<Inst, DecodeError> {
    let address = r.address;
    if packed && w0 >> 24 != 0xCC {
        return Err(DecodeError::UnknownEncoding { address, word0: w0 });
    }
    let w1 = r.dword(1, "VOP3 second dword")?;
    let d = if packed {
        lookup(&t::VOP3P, bits(w0, 16, 7), "VOP3P", address, w0)?
    } else {
        lookup(&t::VOP3, bits(w0, 16, 10), "VOP3", address, w0)?
    };
    set(
        &mut inst,
        d,
        if packed {
            Encoding::Vop3p
        } else {
            Encoding::Vop3
        },
    );
    inst.len = 8;
    inst.word1 = w1;
    let vdst = bits(w0, 0, 8);
    // Compares and v_readlane/v_cmp write SGPRs through the same field.
    let scalar_dst = d.template.starts_with("{vdst}") && writes_sgpr(d);
    inst.dst = opnd(if scalar_dst { vdst } else { 256 + vdst }, d.w[0]);
    if d.vop3b {
        inst.sdst = opnd(bits(w0, 8, 7), 1);
    }
    for i in 0..3 {
        inst.src[i] = opnd(bits(w1, 9 * i as u32, 9), d.w[1 + i]);
    }
    if inst
        .src
        .iter()
        .any(|s| s.present() && s.code == code::LITERAL)
    {
        inst.literal = r.dword(2, "literal")?;
        inst.len = 12;
    }
    Ok(inst)
}

/// Whether a VOP3 opcode's destination field names SGPRs (compares, `v_readlane_b32`,
/// `v_cmp_class_*`), from its mnemonic.
fn writes_sgpr(d: &OpDesc) -> bool {
    let m = d.mnemonic;
    (m.starts_with("v_cmp_") || m.starts_with("v_readlane") || m.starts_with("v_readfirstlane"))
        && !m.starts_with("v_cmpx_")
}
