//! [`Inst`] to text, exactly as `llvm-objdump-19 -d --mcpu=gfx1030` prints the instruction
//! (mnemonic and operands, without the trailing `// address: encoding` comment). Operands follow
//! the opcode's template from the generated tables; modifiers are printed from the encoding's
//! fields in LLVM's order. Checked against llvm-objdump on every instruction of a corpus of real
//! code objects (`emu/tests/decode_corpus.rs`).
//!
//! Not for decoding or executing.

use std::fmt::{self, Write};

use super::{code, Encoding, Form, Inst, Op, Operand};

/// Formats an instruction at its address (branch targets need it).
#[derive(Debug, Clone, Copy)]
pub struct Printer<'a> {
    /// The instruction.
    pub inst: &'a Inst,
    /// Its address.
    pub address: u64,
}

impl fmt::Display for Printer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::with_capacity(64);
        print(self.inst, &mut out);
        f.write_str(&out)
    }
}

/// The address a SOPP branch jumps to: the next instruction plus `simm16` dwords.
pub fn branch_target(inst: &Inst, address: u64) -> u64 {
    address
        .wrapping_add(4)
        .wrapping_add_signed(i64::from(inst.simm16()) * 4)
}

fn bits(w: u32, lo: u32, width: u32) -> u32 {
    (w >> lo) & ((1u32 << width) - 1)
}

/// The register or constant an operand names.
fn operand(out: &mut String, o: Operand, literal: u32) {
    let c = o.code;
    let w = u16::from(o.width.max(1));
    let range = |out: &mut String, prefix: &str, n: u16| {
        if w == 1 {
            let _ = write!(out, "{prefix}{n}");
        } else {
            let _ = write!(out, "{prefix}[{n}:{}]", n + w - 1);
        }
    };
    match c {
        0..=105 => range(out, "s", c),
        code::VCC_LO => out.push_str(if w == 2 { "vcc" } else { "vcc_lo" }),
        code::VCC_HI => out.push_str("vcc_hi"),
        108..=123 => range(out, "ttmp", c - 108),
        code::M0 => out.push_str("m0"),
        code::NULL => out.push_str("null"),
        code::EXEC_LO => out.push_str(if w == 2 { "exec" } else { "exec_lo" }),
        code::EXEC_HI => out.push_str("exec_hi"),
        128..=192 => {
            let _ = write!(out, "{}", c - 128);
        }
        193..=208 => {
            let _ = write!(out, "-{}", c - 192);
        }
        code::SHARED_BASE => out.push_str("src_shared_base"),
        code::SHARED_LIMIT => out.push_str("src_shared_limit"),
        code::PRIVATE_BASE => out.push_str("src_private_base"),
        code::PRIVATE_LIMIT => out.push_str("src_private_limit"),
        code::POPS_EXITING_WAVE_ID => out.push_str("src_pops_exiting_wave_id"),
        240 => out.push_str("0.5"),
        241 => out.push_str("-0.5"),
        242 => out.push_str("1.0"),
        243 => out.push_str("-1.0"),
        244 => out.push_str("2.0"),
        245 => out.push_str("-2.0"),
        246 => out.push_str("4.0"),
        247 => out.push_str("-4.0"),
        code::INV_2PI => out.push_str("0.15915494"),
        code::VCCZ => out.push_str("vccz"),
        code::EXECZ => out.push_str("execz"),
        code::SCC => out.push_str("scc"),
        code::LDS_DIRECT => out.push_str("src_lds_direct"),
        code::LITERAL => literal32(out, literal),
        LITERAL16 => {
            let _ = write!(out, "0x{:x}", literal & 0xFFFF);
        }
        256..=511 => range(out, "v", c - 256),
        _ => {
            let _ = write!(out, "<code {c}>");
        }
    }
}

/// Pseudo operand code: a literal read by a 16-bit operand (printed as its low 16 bits).
const LITERAL16: u16 = 0xFFFF;

/// Whether the sources of `mnemonic` are 16-bit (its last type suffix is `f16`/`i16`/`u16`/`b16`).
fn sources_are_16bit(mnemonic: &str) -> bool {
    let base = mnemonic
        .trim_end_matches("_e32")
        .trim_end_matches("_e64")
        .trim_end_matches("_sdwa")
        .trim_end_matches("_dpp");
    matches!(base.rsplit('_').next(), Some("f16" | "i16" | "u16" | "b16"))
}

/// A 32-bit literal: LLVM prints values an inline constant could hold as that constant.
fn literal32(out: &mut String, v: u32) {
    let i = v as i32;
    if (-16..=64).contains(&i) {
        let _ = write!(out, "{i}");
    } else {
        let _ = write!(out, "0x{v:x}");
    }
}

fn print(inst: &Inst, out: &mut String) {
    out.push_str(inst.desc.mnemonic);
    let template = inst.desc.template;
    if !template.is_empty() {
        out.push(' ');
    }
    if returning_flat_atomic(inst) {
        operand(out, inst.dst, 0);
        out.push_str(", ");
    }
    let mut rest = template;
    if inst.enc == Encoding::Vopc && inst.form == Form::Sdwa && bits(inst.word1, 15, 1) != 0 {
        // SDWA compares may name their SGPR destination instead of VCC.
        if let Some(after) = rest.strip_prefix("vcc_lo") {
            operand(out, inst.dst, 0);
            rest = after;
        }
    }
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').map_or(rest.len(), |e| start + e);
        let name = &rest[start + 1..end];
        placeholder(inst, name, out);
        rest = rest.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    modifiers(inst, out);
}

/// A FLAT/GLOBAL atomic with GLC set returns the old value into `vdst`, which the template (made
/// without GLC) does not show.
pub(super) fn returning_flat_atomic(inst: &Inst) -> bool {
    matches!(inst.enc, Encoding::Flat | Encoding::Global)
        && bits(inst.word0, 16, 1) != 0
        && inst.desc.mnemonic.contains("_atomic_")
}

/// The operand slot a template placeholder names, by encoding family.
fn slot(inst: &Inst, name: &str) -> Option<Operand> {
    Some(match name {
        "sdst" if matches!(inst.enc, Encoding::Vop3 | Encoding::Vop3p) => inst.sdst,
        "vdst" | "sdst" | "sdata" | "vdata" => inst.dst,
        "src0" | "ssrc0" | "addr" | "sbase" | "vaddr" => inst.src[0],
        "src1" | "ssrc1" | "data0" | "data" => inst.src[1],
        "src2" | "data1" | "saddr" | "srsrc" => inst.src[2],
        "soffset" => inst.sdst,
        _ => return None,
    })
}

fn placeholder(inst: &Inst, name: &str, out: &mut String) {
    match name {
        "lit" => {
            let _ = write!(out, "0x{:x}", inst.literal);
        }
        "simm16:hex" | "simm16:hex?" => {
            let v = inst.word0 & 0xFFFF;
            if v == 0 && name.ends_with('?') {
                trim_space(out);
            } else {
                let _ = write!(out, "0x{v:x}");
            }
        }
        "simm16:dec" | "simm16:dec?" => {
            let v = inst.word0 & 0xFFFF;
            if v == 0 && name.ends_with('?') {
                trim_space(out);
            } else {
                let _ = write!(out, "{v}");
            }
        }
        "hwreg" => hwreg(out, inst.word0 & 0xFFFF),
        "waitcnt" => waitcnt(out, inst.word0 & 0xFFFF),
        "sendmsg" => sendmsg(out, inst.word0 & 0xFFFF),
        "depctr" => {
            let _ = write!(out, "0x{:x}", inst.word0 & 0xFFFF);
        }
        "offset" => smem_offset(inst, out),
        "sdata_imm" => {
            let _ = write!(out, "{}", bits(inst.word0, 6, 7));
        }
        "vaddr" if !inst.src[0].present() => out.push_str("off"),
        _ => match slot(inst, name) {
            Some(o) => source(inst, name, o, out),
            None => {
                let _ = write!(out, "{{{name}}}");
            }
        },
    }
}

/// A source operand with its VOP3/SDWA/DPP modifiers (neg, abs, sext).
fn source(inst: &Inst, name: &str, o: Operand, out: &mut String) {
    let index = match name {
        "src0" => Some(0),
        "src1" => Some(1),
        "src2" => Some(2),
        _ => None,
    };
    let (neg, abs, sext) = match (index, inst.enc, inst.form) {
        (Some(i), Encoding::Vop3, _) => (
            bits(inst.word1, 29 + i, 1) != 0,
            bits(inst.word0, 8 + i, 1) != 0 && !inst.desc.vop3b,
            false,
        ),
        (Some(i), _, Form::Sdwa) if i < 2 => {
            let base = 16 + 8 * i;
            (
                bits(inst.word1, base + 4, 1) != 0,
                bits(inst.word1, base + 5, 1) != 0,
                bits(inst.word1, base + 3, 1) != 0,
            )
        }
        (Some(i), _, Form::Dpp16) if i < 2 => (
            bits(inst.word1, 20 + 2 * i, 1) != 0,
            bits(inst.word1, 21 + 2 * i, 1) != 0,
            false,
        ),
        _ => (false, false, false),
    };
    if sext {
        out.push_str("sext(");
    }
    if neg {
        out.push('-');
    }
    if abs {
        out.push('|');
    }
    let o = if o.code == code::LITERAL && index.is_some() && sources_are_16bit(inst.desc.mnemonic) {
        Operand {
            code: LITERAL16,
            ..o
        }
    } else {
        o
    };
    operand(out, o, inst.literal);
    if abs {
        out.push('|');
    }
    if sext {
        out.push(')');
    }
}

/// Drops the space before an operand that is not printed.
fn trim_space(out: &mut String) {
    if out.ends_with(' ') {
        out.pop();
    }
}

/// SMEM's third operand: the scalar offset register when there is one (with the immediate
/// offset as a modifier), else the immediate (`null` when the instruction uses neither).
fn smem_offset(inst: &Inst, out: &mut String) {
    let offset = bits(inst.word1, 0, 21);
    if inst.src[1].present() {
        operand(out, inst.src[1], 0);
    } else if offset == 0 && bits(inst.word1, 25, 7) as u16 == code::NULL {
        out.push_str("null");
    } else {
        signed_hex(out, smem_offset_value(inst));
    }
}

/// SMEM's 21-bit signed immediate offset.
pub(super) fn smem_offset_value(inst: &Inst) -> i32 {
    ((bits(inst.word1, 0, 21) << 11) as i32) >> 11
}

fn signed_hex(out: &mut String, v: i32) {
    if v < 0 {
        let _ = write!(out, "-0x{:x}", v.unsigned_abs());
    } else {
        let _ = write!(out, "0x{v:x}");
    }
}

fn hwreg(out: &mut String, simm: u32) {
    let id = simm & 0x3F;
    let offset = (simm >> 6) & 0x1F;
    let size = ((simm >> 11) & 0x1F) + 1;
    let name = match id {
        1 => Some("HW_REG_MODE"),
        2 => Some("HW_REG_STATUS"),
        3 => Some("HW_REG_TRAPSTS"),
        4 => Some("HW_REG_HW_ID"),
        5 => Some("HW_REG_GPR_ALLOC"),
        6 => Some("HW_REG_LDS_ALLOC"),
        7 => Some("HW_REG_IB_STS"),
        15 => Some("HW_REG_SH_MEM_BASES"),
        16 => Some("HW_REG_TBA_LO"),
        17 => Some("HW_REG_TBA_HI"),
        18 => Some("HW_REG_TMA_LO"),
        19 => Some("HW_REG_TMA_HI"),
        20 => Some("HW_REG_FLAT_SCR_LO"),
        21 => Some("HW_REG_FLAT_SCR_HI"),
        22 => Some("HW_REG_XNACK_MASK"),
        23 => Some("HW_REG_HW_ID1"),
        24 => Some("HW_REG_HW_ID2"),
        25 => Some("HW_REG_POPS_PACKER"),
        29 => Some("HW_REG_SHADER_CYCLES"),
        _ => None,
    };
    out.push_str("hwreg(");
    match name {
        Some(n) => out.push_str(n),
        None => {
            let _ = write!(out, "{id}");
        }
    }
    if !(offset == 0 && size == 32) {
        let _ = write!(out, ", {offset}, {size}");
    }
    out.push(')');
}

fn waitcnt(out: &mut String, simm: u32) {
    let vm = (simm & 0xF) | ((simm >> 14) & 0x3) << 4;
    let exp = (simm >> 4) & 0x7;
    let lgkm = (simm >> 8) & 0x3F;
    let mut parts = Vec::new();
    if vm != 0x3F {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 0x7 {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 0x3F {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    if parts.is_empty() {
        let _ = write!(out, "vmcnt({vm}) expcnt({exp}) lgkmcnt({lgkm})");
    } else {
        out.push_str(&parts.join(" "));
    }
}

fn sendmsg(out: &mut String, simm: u32) {
    let id = simm & 0xFF;
    let op = (simm >> 4) & 0x7;
    let name = match id & 0xF {
        1 => "MSG_INTERRUPT",
        2 => "MSG_GS",
        3 => "MSG_GS_DONE",
        4 => "MSG_SAVEWAVE",
        5 => "MSG_STALL_WAVE_GEN",
        6 => "MSG_HALT_WAVES",
        7 => "MSG_ORDERED_PS_DONE",
        8 => "MSG_EARLY_PRIM_DEALLOC",
        9 => "MSG_GS_ALLOC_REQ",
        10 => "MSG_GET_DOORBELL",
        11 => "MSG_GET_DDID",
        15 => "MSG_SYSMSG",
        _ => "",
    };
    if name.is_empty() || id > 0xF {
        let _ = write!(out, "sendmsg({id})");
        return;
    }
    match id {
        2 | 3 => {
            let ops = ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"];
            let _ = write!(out, "sendmsg({name}, {}", ops[(op & 3) as usize]);
            if op & 3 != 0 {
                let _ = write!(out, ", {}", (simm >> 8) & 3);
            }
            out.push(')');
        }
        _ => {
            let _ = write!(out, "sendmsg({name})");
        }
    }
}

fn sel_name(sel: u32) -> &'static str {
    match sel {
        0 => "BYTE_0",
        1 => "BYTE_1",
        2 => "BYTE_2",
        3 => "BYTE_3",
        4 => "WORD_0",
        5 => "WORD_1",
        _ => "DWORD",
    }
}

fn modifiers(inst: &Inst, out: &mut String) {
    match (inst.enc, inst.form) {
        (Encoding::Vop3, _) => vop3_modifiers(inst, out),
        (Encoding::Vop3p, _) => vop3p_modifiers(inst, out),
        (_, Form::Sdwa) => {
            let w1 = inst.word1;
            if bits(w1, 13, 1) != 0 && inst.enc != Encoding::Vopc {
                out.push_str(" clamp");
            }
            match bits(w1, 14, 2) {
                1 if inst.enc != Encoding::Vopc => out.push_str(" mul:2"),
                2 if inst.enc != Encoding::Vopc => out.push_str(" mul:4"),
                3 if inst.enc != Encoding::Vopc => out.push_str(" div:2"),
                _ => {}
            }
            if inst.enc != Encoding::Vopc {
                let unused = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "UNUSED_PAD"];
                let _ = write!(
                    out,
                    " dst_sel:{} dst_unused:{}",
                    sel_name(bits(w1, 8, 3)),
                    unused[bits(w1, 11, 2) as usize]
                );
            }
            let _ = write!(out, " src0_sel:{}", sel_name(bits(w1, 16, 3)));
            if inst.enc != Encoding::Vop1 {
                let _ = write!(out, " src1_sel:{}", sel_name(bits(w1, 24, 3)));
            }
        }
        (_, Form::Dpp16) => dpp16(inst, out),
        (_, Form::Dpp8) => {
            let sel = inst.word1 >> 8;
            let lanes: Vec<String> = (0..8).map(|i| ((sel >> (3 * i)) & 7).to_string()).collect();
            let _ = write!(out, " dpp8:[{}]", lanes.join(","));
            if inst.src[0].present() && bits(inst.word0, 0, 9) == u32::from(code::DPP8_FI) {
                out.push_str(" fi:1");
            }
        }
        (Encoding::Smem, _) => {
            if inst.src[1].present() && bits(inst.word1, 0, 21) != 0 {
                out.push_str(" offset:");
                signed_hex(out, smem_offset_value(inst));
            }
            if bits(inst.word0, 16, 1) != 0 {
                out.push_str(" glc");
            }
            if bits(inst.word0, 14, 1) != 0 {
                out.push_str(" dlc");
            }
        }
        (Encoding::Ds, _) => {
            let (o0, o1) = (bits(inst.word0, 0, 8), bits(inst.word0, 8, 8));
            if inst.op == Op::DsSwizzleB32 {
                swizzle(out, o0 | o1 << 8);
            } else if inst.desc.mnemonic.contains("2_") || inst.desc.mnemonic.contains("2st64") {
                if o0 != 0 {
                    let _ = write!(out, " offset0:{o0}");
                }
                if o1 != 0 {
                    let _ = write!(out, " offset1:{o1}");
                }
            } else {
                let offset = o0 | o1 << 8;
                if offset != 0 {
                    let _ = write!(out, " offset:{offset}");
                }
            }
            if bits(inst.word0, 17, 1) != 0 {
                out.push_str(" gds");
            }
        }
        (Encoding::Flat | Encoding::Global | Encoding::Scratch, _) => {
            let raw = bits(inst.word0, 0, 12);
            let offset = if inst.enc == Encoding::Flat {
                (raw & 0x7FF) as i32
            } else {
                ((raw << 20) as i32) >> 20
            };
            if offset != 0 {
                let _ = write!(out, " offset:{offset}");
            }
            if bits(inst.word0, 16, 1) != 0 {
                out.push_str(" glc");
            }
            if bits(inst.word0, 17, 1) != 0 {
                out.push_str(" slc");
            }
            if bits(inst.word0, 12, 1) != 0 {
                out.push_str(" dlc");
            }
        }
        (Encoding::Mubuf, _) => {
            let w0 = inst.word0;
            if bits(w0, 13, 1) != 0 {
                out.push_str(" idxen");
            }
            if bits(w0, 12, 1) != 0 {
                out.push_str(" offen");
            }
            let offset = bits(w0, 0, 12);
            if offset != 0 {
                let _ = write!(out, " offset:{offset}");
            }
            if bits(w0, 14, 1) != 0 {
                out.push_str(" glc");
            }
            if bits(inst.word1, 22, 1) != 0 {
                out.push_str(" slc");
            }
            if bits(w0, 15, 1) != 0 {
                out.push_str(" dlc");
            }
            if bits(w0, 16, 1) != 0 {
                out.push_str(" lds");
            }
            if bits(inst.word1, 23, 1) != 0 {
                out.push_str(" tfe");
            }
        }
        _ => {}
    }
}

/// `ds_swizzle_b32`'s offset in LLVM's symbolic form.
fn swizzle(out: &mut String, imm: u32) {
    if imm == 0 {
        return;
    }
    out.push_str(" offset:");
    if imm & 0xFF00 == 0x8000 {
        let lanes: Vec<String> = (0..4).map(|i| ((imm >> (2 * i)) & 3).to_string()).collect();
        let _ = write!(out, "swizzle(QUAD_PERM,{})", lanes.join(","));
    } else if imm & 0x8000 == 0 {
        let and = imm & 0x1F;
        let or = (imm >> 5) & 0x1F;
        let xor = (imm >> 10) & 0x1F;
        let group = 0x1F - and + 1;
        if and == 0x1F && or == 0 && xor.count_ones() == 1 {
            let _ = write!(out, "swizzle(SWAP,{xor})");
        } else if and == 0x1F && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
            let _ = write!(out, "swizzle(REVERSE,{})", xor + 1);
        } else if group > 1 && group.is_power_of_two() && or < group && xor == 0 {
            let _ = write!(out, "swizzle(BROADCAST,{group},{or})");
        } else {
            let probe0 = (or) ^ xor;
            let probe1 = ((0x1F & and) | or) ^ xor;
            out.push_str("swizzle(BITMASK_PERM,\"");
            for bit in (0..5).rev() {
                let (p0, p1) = ((probe0 >> bit) & 1, (probe1 >> bit) & 1);
                out.push(match (p0 == p1, p0) {
                    (true, 0) => '0',
                    (true, _) => '1',
                    (false, 0) => 'p',
                    (false, _) => 'i',
                });
            }
            out.push_str("\")");
        }
    } else {
        let _ = write!(out, "{imm}");
    }
}

fn vop3_modifiers(inst: &Inst, out: &mut String) {
    let (w0, w1) = (inst.word0, inst.word1);
    let opsel = bits(w0, 11, 4);
    if opsel != 0 && !inst.desc.vop3b {
        let n = inst.src.iter().filter(|s| s.present()).count();
        let mut v: Vec<String> = (0..n).map(|i| ((opsel >> i) & 1).to_string()).collect();
        v.push(((opsel >> 3) & 1).to_string());
        let _ = write!(out, " op_sel:[{}]", v.join(","));
    }
    if bits(w0, 15, 1) != 0 {
        out.push_str(" clamp");
    }
    match bits(w1, 27, 2) {
        1 => out.push_str(" mul:2"),
        2 => out.push_str(" mul:4"),
        3 => out.push_str(" div:2"),
        _ => {}
    }
}

fn vop3p_modifiers(inst: &Inst, out: &mut String) {
    let (w0, w1) = (inst.word0, inst.word1);
    let n = inst.src.iter().filter(|s| s.present()).count();
    let opsel = bits(w0, 11, 3);
    let opsel_hi = bits(w1, 27, 2) | bits(w0, 14, 1) << 2;
    let neg_lo = bits(w1, 29, 3);
    let neg_hi = bits(w0, 8, 3);
    let list = |v: u32| -> String {
        (0..n)
            .map(|i| ((v >> i) & 1).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let all = (1u32 << n) - 1;
    // Mixed-precision FMAs read op_sel_hi as "this source is f16": default all clear.
    let mix = inst.desc.mnemonic.starts_with("v_fma_mix");
    let default_hi = if mix { 0 } else { all };
    if opsel & all != 0 {
        let _ = write!(out, " op_sel:[{}]", list(opsel));
    }
    if opsel_hi & all != default_hi {
        let _ = write!(out, " op_sel_hi:[{}]", list(opsel_hi));
    }
    if neg_lo & all != 0 {
        let _ = write!(out, " neg_lo:[{}]", list(neg_lo));
    }
    if neg_hi & all != 0 {
        let _ = write!(out, " neg_hi:[{}]", list(neg_hi));
    }
    if bits(w0, 15, 1) != 0 {
        out.push_str(" clamp");
    }
}

fn dpp16(inst: &Inst, out: &mut String) {
    let w1 = inst.word1;
    let ctrl = bits(w1, 8, 9);
    match ctrl {
        0x000..=0x0FF => {
            let _ = write!(
                out,
                " quad_perm:[{},{},{},{}]",
                ctrl & 3,
                (ctrl >> 2) & 3,
                (ctrl >> 4) & 3,
                (ctrl >> 6) & 3
            );
        }
        0x101..=0x10F => {
            let _ = write!(out, " row_shl:{}", ctrl & 0xF);
        }
        0x111..=0x11F => {
            let _ = write!(out, " row_shr:{}", ctrl & 0xF);
        }
        0x121..=0x12F => {
            let _ = write!(out, " row_ror:{}", ctrl & 0xF);
        }
        0x140 => out.push_str(" row_mirror"),
        0x141 => out.push_str(" row_half_mirror"),
        0x150..=0x15F => {
            let _ = write!(out, " row_share:{}", ctrl & 0xF);
        }
        0x160..=0x16F => {
            let _ = write!(out, " row_xmask:{}", ctrl & 0xF);
        }
        _ => {
            let _ = write!(out, " dpp_ctrl:{ctrl:#x}");
        }
    }
    let _ = write!(
        out,
        " row_mask:0x{:x} bank_mask:0x{:x}",
        bits(w1, 28, 4),
        bits(w1, 24, 4)
    );
    if bits(w1, 19, 1) != 0 {
        out.push_str(" bound_ctrl:1");
    }
    if bits(w1, 18, 1) != 0 {
        out.push_str(" fi:1");
    }
}

impl Op {
    /// Whether this operation ends a run of straight-line code (a branch, call, return or end).
    pub fn ends_block(self) -> bool {
        let name = self.name();
        name.starts_with("s_branch")
            || name.starts_with("s_cbranch")
            || name == "s_setpc_b64"
            || name == "s_swappc_b64"
            || name == "s_endpgm"
            || name == "s_call_b64"
            || name == "s_trap"
            || name == "s_rfe_b64"
    }
}
