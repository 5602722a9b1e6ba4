//! Text form of decoded instructions, matching llvm-objdump-19's instruction
//! text (mnemonic, operands, modifiers; no address/encoding comment). Number
//! spellings follow how LLVM prints each operand type. Not decoding.

use super::decode::info_of;
use super::family::{Isa, Layout, GFX1030};
use super::inst::{Encoding, Extra, Inst};
use super::operand::{Operand, Special};
use super::spec::*;
use super::DecodeError;
use core::fmt::{self, Write};

/// Iterator over the instructions of a code range; see [`disassemble`].
pub struct Disassembly<'a> {
    isa: &'static Isa,
    code: &'a [u8],
    address: u64,
    offset: usize,
}

/// Decode gfx1030 `code` (located at `address`) instruction by instruction
/// ([`Isa::disassemble`] for the others). After an undecodable word the iterator
/// moves on by 4 bytes, as llvm-objdump does.
pub fn disassemble(code: &[u8], address: u64) -> Disassembly<'_> {
    disassemble_with(&GFX1030, code, address)
}

/// [`disassemble`] with `isa`'s decoder.
pub(crate) fn disassemble_with<'a>(
    isa: &'static Isa,
    code: &'a [u8],
    address: u64,
) -> Disassembly<'a> {
    Disassembly {
        isa,
        code,
        address,
        offset: 0,
    }
}

impl Iterator for Disassembly<'_> {
    type Item = (u64, Result<Inst, DecodeError>);
    fn next(&mut self) -> Option<Self::Item> {
        if self.offset + 4 > self.code.len() {
            return None;
        }
        let at = self.address.wrapping_add(self.offset as u64);
        let res = self.isa.decode(&self.code[self.offset..], at);
        self.offset += match &res {
            Ok(inst) => inst.len as usize,
            Err(_) => 4,
        };
        Some((at, res))
    }
}

impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.encoding == Encoding::Mimg {
            return super::mimg::fmt(self, f);
        }
        let Some(info) = info_of(self) else {
            // Length-only encodings: name the operation.
            return f.write_str(self.op_name());
        };
        f.write_str(info.mnemonic)?;
        let specs = match self.encoding {
            Encoding::Flat | Encoding::Global | Encoding::Scratch
                if self.glc() && !info.rtn_operands.is_empty() =>
            {
                info.rtn_operands
            }
            _ => info.operands,
        };
        let mut first = true;
        for spec in specs {
            if spec.kind == Kind::Imm && info.imm == ImmStyle::OptionalDec {
                if let Extra::Imm16(v) = self.extra {
                    if v != 0 {
                        write!(f, " {v}")?;
                    }
                }
                continue;
            }
            f.write_str(if first { " " } else { ", " })?;
            first = false;
            self.write_operand(f, info, spec)?;
        }
        self.write_modifiers(f, info, specs)
    }
}

const SDWA_SEL: [&str; 8] = [
    "BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "DWORD",
];
const SDWA_UNUSED: [&str; 4] = [
    "UNUSED_PAD",
    "UNUSED_SEXT",
    "UNUSED_PRESERVE",
    "UNUSED_PRESERVE",
];

impl Inst {
    fn slot(&self, role: Role) -> Operand {
        match role {
            Role::Dst(i) => self.dst[i as usize & 1],
            Role::Src(i) => self.src[i as usize & 3],
            Role::None => Operand::None,
        }
    }

    /// Source-modifier bits (neg, abs, sext) applying to a source spec.
    fn src_mod_bits(&self, spec: &OperandSpec) -> (bool, bool, bool) {
        let i = match spec.field {
            Field::Src0 => 0,
            Field::Src1 | Field::Vsrc1 => 1,
            Field::Src2 => 2,
            _ => return (false, false, false),
        };
        let (neg, abs, sext) = match self.extra {
            Extra::Vop3 { neg, abs, .. } => (neg, abs, 0),
            Extra::Sdwa(s) => (s.neg, s.abs, s.sext),
            Extra::Dpp16(d) => (d.neg, d.abs, 0),
            // v_fma_mix*: neg_lo negates and neg_hi takes the absolute value.
            Extra::Vop3p { neg_lo, neg_hi, .. } if is_mix(self.op) => {
                return (neg_lo >> i & 1 != 0, neg_hi >> i & 1 != 0, false);
            }
            _ => (0, 0, 0),
        };
        let bit = |m: u8, allowed: u8| m >> i & 1 != 0 && spec.src_mods & allowed != 0;
        (bit(neg, SRC_NEG), bit(abs, SRC_ABS), bit(sext, SRC_SEXT))
    }

    fn write_operand(
        &self,
        f: &mut fmt::Formatter<'_>,
        info: &OpInfo,
        spec: &OperandSpec,
    ) -> fmt::Result {
        match spec.kind {
            Kind::Fixed => {
                return f.write_str(match spec.field {
                    Field::VccLo => "vcc_lo",
                    Field::Vcc => "vcc",
                    Field::Null => "null",
                    _ => "off",
                })
            }
            Kind::Imm => return self.write_imm(f, info, spec),
            _ => {}
        }
        let op = if spec.kind == Kind::Lit {
            Operand::Literal(spec.ty)
        } else {
            self.slot(spec.role)
        };
        let (neg, abs, sext) = self.src_mod_bits(spec);
        let constant = matches!(op, Operand::Inline(_) | Operand::Literal(_));
        let neg_fn = neg && !abs && constant;
        if neg {
            f.write_str(if neg_fn { "neg(" } else { "-" })?;
        }
        if abs {
            f.write_char('|')?;
        }
        if sext {
            f.write_str("sext(")?;
        }
        write_value(f, op, self.literal)?;
        if sext {
            f.write_char(')')?;
        }
        if abs {
            f.write_char('|')?;
        }
        if neg_fn {
            f.write_char(')')?;
        }
        Ok(())
    }

    fn write_imm(
        &self,
        f: &mut fmt::Formatter<'_>,
        info: &OpInfo,
        spec: &OperandSpec,
    ) -> fmt::Result {
        match (self.extra, spec.field) {
            (Extra::Smem { offset, .. }, Field::Offset) => match self.src[1] {
                // gfx9 always has an offset here; gfx10's zero offset without a register is
                // its NULL soffset.
                Operand::None if offset != 0 || self.isa.isa().layout == Layout::Gfx9 => {
                    write_signed_hex(f, offset as i64)
                }
                Operand::None => f.write_str("null"),
                reg => write_value(f, reg, 0),
            },
            (Extra::Smem { sdata_imm, .. }, _) => write!(f, "{sdata_imm}"),
            (Extra::Imm16(v), _) => write_imm16(f, self.isa.isa().tables, info.imm, v),
            (Extra::Branch { simm16, .. }, _) => write!(f, "{simm16}"),
            _ => Ok(()),
        }
    }

    fn write_modifiers(
        &self,
        f: &mut fmt::Formatter<'_>,
        info: &OpInfo,
        specs: &[OperandSpec],
    ) -> fmt::Result {
        match self.extra {
            Extra::Smem { offset, imm, .. } => {
                if !matches!(self.src[1], Operand::None) && (offset != 0 || imm) {
                    f.write_str(" offset:")?;
                    write_signed_hex(f, offset as i64)?;
                }
                // Scalar memory prints glc on every processor.
                if self.glc() {
                    f.write_str(" glc")?;
                }
                if self.dlc() {
                    f.write_str(" dlc")?;
                }
                Ok(())
            }
            Extra::Ds {
                offset0,
                offset1,
                gds,
            } => {
                if info.flags & DS_OFFSET8X2 != 0 {
                    if offset0 != 0 {
                        write!(f, " offset0:{offset0}")?;
                    }
                    if offset1 != 0 {
                        write!(f, " offset1:{offset1}")?;
                    }
                } else if info.flags & DS_SWIZZLE != 0 {
                    write_swizzle(f, offset0 as u16 | (offset1 as u16) << 8)?;
                } else if info.flags & DS_OFFSET16 != 0 {
                    let off = offset0 as u16 | (offset1 as u16) << 8;
                    if off != 0 {
                        write!(f, " offset:{off}")?;
                    }
                }
                if gds && info.flags & GDS != 0 {
                    f.write_str(" gds")?;
                }
                Ok(())
            }
            Extra::Flat { offset, .. } => {
                if offset != 0 {
                    if self.encoding == Encoding::Flat {
                        write!(f, " offset:{}", offset as u16 & 0xfff)?;
                    } else {
                        write!(f, " offset:{offset}")?;
                    }
                }
                self.write_cpol(f)
            }
            Extra::Mubuf {
                offset,
                offen,
                idxen,
                lds,
                tfe,
            } => {
                if !specs.is_empty() {
                    if idxen {
                        f.write_str(" idxen")?;
                    }
                    if offen {
                        f.write_str(" offen")?;
                    }
                    if offset != 0 {
                        write!(f, " offset:{offset}")?;
                    }
                }
                self.write_cpol(f)?;
                if lds && !specs.is_empty() {
                    f.write_str(" lds")?;
                }
                if tfe && !specs.is_empty() {
                    f.write_str(" tfe")?;
                }
                Ok(())
            }
            _ => {
                for m in info.mods {
                    self.write_mod(f, info, specs, *m)?;
                }
                Ok(())
            }
        }
    }

    fn write_cpol(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.isa.isa().tables.cpol;
        for (set, name) in [self.glc(), self.slc(), self.dlc()].into_iter().zip(names) {
            if set {
                write!(f, " {name}")?;
            }
        }
        Ok(())
    }

    fn write_mod(
        &self,
        f: &mut fmt::Formatter<'_>,
        info: &OpInfo,
        specs: &[OperandSpec],
        m: Mod,
    ) -> fmt::Result {
        let nsrc = specs
            .iter()
            .filter(|s| {
                matches!(
                    s.field,
                    Field::Src0 | Field::Src1 | Field::Src2 | Field::Vsrc1
                )
            })
            .count() as u8;
        match (m, self.extra) {
            (Mod::Clamp, Extra::Vop3 { clamp: true, .. } | Extra::Vop3p { clamp: true, .. }) => {
                f.write_str(" clamp")
            }
            (Mod::Clamp, Extra::Sdwa(s)) if s.clamp => f.write_str(" clamp"),
            (Mod::Omod, Extra::Vop3 { omod, .. }) => write_omod(f, omod),
            (Mod::Omod, Extra::Sdwa(s)) => write_omod(f, s.omod),
            (Mod::OpSel(n), Extra::Vop3 { op_sel, .. }) => {
                // With one more entry than sources, the last is the destination (bit 3).
                let bits = if n > nsrc {
                    op_sel & ((1 << nsrc) - 1) | (op_sel >> 3 & 1) << nsrc
                } else {
                    op_sel
                };
                write_list(f, " op_sel:[", bits, n, 0)
            }
            (Mod::OpSel(n), Extra::Vop3p { op_sel, .. }) => {
                write_list(f, " op_sel:[", op_sel, n, 0)
            }
            (Mod::OpSelHi(n), Extra::Vop3p { op_sel_hi, .. }) => {
                let packed = !matches!(
                    info.op,
                    Op::VFmaMixF32 | Op::VFmaMixloF16 | Op::VFmaMixhiF16
                );
                write_list(
                    f,
                    " op_sel_hi:[",
                    op_sel_hi,
                    n,
                    if packed { (1 << n) - 1 } else { 0 },
                )
            }
            (Mod::NegLo(n), Extra::Vop3p { neg_lo, .. }) => {
                write_list(f, " neg_lo:[", neg_lo, n, 0)
            }
            (Mod::NegHi(n), Extra::Vop3p { neg_hi, .. }) => {
                write_list(f, " neg_hi:[", neg_hi, n, 0)
            }
            (Mod::DstSel, Extra::Sdwa(s)) => {
                write!(f, " dst_sel:{}", SDWA_SEL[s.dst_sel as usize & 7])
            }
            (Mod::DstUnused, Extra::Sdwa(s)) => {
                write!(f, " dst_unused:{}", SDWA_UNUSED[s.dst_unused as usize & 3])
            }
            (Mod::Src0Sel, Extra::Sdwa(s)) => {
                write!(f, " src0_sel:{}", SDWA_SEL[s.src0_sel as usize & 7])
            }
            (Mod::Src1Sel, Extra::Sdwa(s)) => {
                write!(f, " src1_sel:{}", SDWA_SEL[s.src1_sel as usize & 7])
            }
            (Mod::DppCtrl, Extra::Dpp16(d)) if self.isa.isa().layout == Layout::Gfx9 => {
                write_dpp_ctrl_gfx9(f, d.ctrl, self.dst[0])
            }
            (Mod::DppCtrl, Extra::Dpp16(d)) => write_dpp_ctrl(f, d.ctrl),
            (Mod::Cbsz, Extra::Mai { cbsz, .. }) if cbsz != 0 => write!(f, " cbsz:{cbsz}"),
            (Mod::Abid, Extra::Mai { abid, .. }) if abid != 0 => write!(f, " abid:{abid}"),
            (Mod::Blgp, Extra::Mai { blgp, .. }) if blgp != 0 => write!(f, " blgp:{blgp}"),
            (Mod::Neg(n), Extra::Mai { blgp, .. }) => write_list(f, " neg:[", blgp, n, 0),
            (Mod::RowMask, Extra::Dpp16(d)) => write!(f, " row_mask:{:#x}", d.row_mask),
            (Mod::BankMask, Extra::Dpp16(d)) => write!(f, " bank_mask:{:#x}", d.bank_mask),
            (Mod::BoundCtrl, Extra::Dpp16(d)) if d.bound_ctrl => f.write_str(" bound_ctrl:1"),
            (Mod::Fi, Extra::Dpp16(d)) if d.fi => f.write_str(" fi:1"),
            (Mod::Dpp8, Extra::Dpp8 { lanes, .. }) => {
                f.write_str(" dpp8:[")?;
                for i in 0..8 {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write!(f, "{}", lanes >> (3 * i) & 7)?;
                }
                f.write_char(']')
            }
            (Mod::Fi, Extra::Dpp8 { fi: true, .. }) => f.write_str(" fi:1"),
            _ => Ok(()),
        }
    }
}

/// The mixed-precision FMAs: VOP3P encoding, but not packed math.
fn is_mix(op: Op) -> bool {
    matches!(op, Op::VFmaMixF32 | Op::VFmaMixloF16 | Op::VFmaMixhiF16)
}

fn write_omod(f: &mut fmt::Formatter<'_>, omod: u8) -> fmt::Result {
    match omod {
        1 => f.write_str(" mul:2"),
        2 => f.write_str(" mul:4"),
        3 => f.write_str(" div:2"),
        _ => Ok(()),
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, name: &str, bits: u8, n: u8, default: u8) -> fmt::Result {
    let mask = (1u8 << n) - 1;
    if bits & mask == default & mask {
        return Ok(());
    }
    f.write_str(name)?;
    for i in 0..n {
        if i > 0 {
            f.write_char(',')?;
        }
        write!(f, "{}", bits >> i & 1)?;
    }
    f.write_char(']')
}

fn write_dpp_ctrl(f: &mut fmt::Formatter<'_>, c: u16) -> fmt::Result {
    match c {
        0..=0xff => write!(
            f,
            " quad_perm:[{},{},{},{}]",
            c & 3,
            c >> 2 & 3,
            c >> 4 & 3,
            c >> 6 & 3
        ),
        0x101..=0x10f => write!(f, " row_shl:{}", c & 0xf),
        0x111..=0x11f => write!(f, " row_shr:{}", c & 0xf),
        0x121..=0x12f => write!(f, " row_ror:{}", c & 0xf),
        0x130 => f.write_str(" /* wave_shl is not supported starting from GFX10 */"),
        0x134 => f.write_str(" /* wave_rol is not supported starting from GFX10 */"),
        0x138 => f.write_str(" /* wave_shr is not supported starting from GFX10 */"),
        0x13c => f.write_str(" /* wave_ror is not supported starting from GFX10 */"),
        0x140 => f.write_str(" row_mirror"),
        0x141 => f.write_str(" row_half_mirror"),
        0x142 | 0x143 => f.write_str(" /* row_bcast is not supported starting from GFX10 */"),
        0x150..=0x15f => write!(f, " row_share:{}", c & 0xf),
        0x160..=0x16f => write!(f, " row_xmask:{}", c & 0xf),
        _ => f.write_str(" /* Invalid dpp_ctrl value */"),
    }
}

/// GFX9's DPP controls (no row_share/row_xmask; wave shifts and row broadcasts, and
/// gfx90a's row_newbcast, the only control its 64-bit DPP forms take).
fn write_dpp_ctrl_gfx9(f: &mut fmt::Formatter<'_>, c: u16, dst: Operand) -> fmt::Result {
    let wide = matches!(dst, Operand::Vgpr { dwords: 2, .. });
    if wide && !(0x150..=0x15f).contains(&c) {
        return f.write_str("  /* DP ALU dpp only supports row_newbcast */");
    }
    match c {
        0x130 => f.write_str(" wave_shl:1"),
        0x134 => f.write_str(" wave_rol:1"),
        0x138 => f.write_str(" wave_shr:1"),
        0x13c => f.write_str(" wave_ror:1"),
        0x142 => f.write_str(" row_bcast:15"),
        0x143 => f.write_str(" row_bcast:31"),
        0x150..=0x15f => write!(f, " row_newbcast:{}", c & 0xf),
        0x160..=0x16f => {
            f.write_str(" /* row_xmask is not supported on ASICs earlier than GFX10 */")
        }
        _ => write_dpp_ctrl(f, c),
    }
}

fn write_swizzle(f: &mut fmt::Formatter<'_>, imm: u16) -> fmt::Result {
    if imm == 0 {
        return Ok(());
    }
    f.write_str(" offset:")?;
    if imm & 0xff00 == 0x8000 {
        // Quad permutation mode.
        return write!(
            f,
            "swizzle(QUAD_PERM,{},{},{},{})",
            imm & 3,
            imm >> 2 & 3,
            imm >> 4 & 3,
            imm >> 6 & 3
        );
    }
    if imm & 0x8000 == 0 {
        // Bit-mask mode: lane = ((lane & and) | or) ^ xor over 5 bits.
        let and = imm & 0x1f;
        let or = imm >> 5 & 0x1f;
        let xor = imm >> 10 & 0x1f;
        if and == 0x1f && or == 0 && xor.count_ones() == 1 {
            return write!(f, "swizzle(SWAP,{xor})");
        }
        if and == 0x1f && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
            return write!(f, "swizzle(REVERSE,{})", xor + 1);
        }
        let group = 0x1f - and + 1;
        if group > 1 && group.is_power_of_two() && or < group && xor == 0 {
            return write!(f, "swizzle(BROADCAST,{group},{or})");
        }
        f.write_str("swizzle(BITMASK_PERM,\"")?;
        let p0 = or ^ xor;
        let p1 = (0x1f & and | or) ^ xor;
        for bit in (0..5).rev() {
            let (a, b) = (p0 >> bit & 1, p1 >> bit & 1);
            f.write_char(match (a, b) {
                (0, 0) => '0',
                (1, 1) => '1',
                (0, _) => 'p',
                _ => 'i',
            })?;
        }
        return f.write_str("\")");
    }
    write!(f, "{imm}")
}

fn write_signed_hex(f: &mut fmt::Formatter<'_>, v: i64) -> fmt::Result {
    if v < 0 {
        write!(f, "-{:#x}", v.unsigned_abs())
    } else {
        write!(f, "{v:#x}")
    }
}

fn write_imm16(f: &mut fmt::Formatter<'_>, t: &Tables, style: ImmStyle, v: u16) -> fmt::Result {
    match style {
        ImmStyle::Dec | ImmStyle::OptionalDec => write!(f, "{v}"),
        ImmStyle::Imm32 => {
            if v <= 64 {
                write!(f, "{v}")
            } else {
                write!(f, "{v:#x}")
            }
        }
        ImmStyle::Waitcnt => {
            let vm = (v & 0xf) | (v >> 14 & 3) << 4;
            let exp = v >> 4 & 7;
            let lgkm_max = (1u16 << t.lgkm_bits) - 1;
            let lgkm = v >> 8 & lgkm_max;
            let all = vm == 63 && exp == 7 && lgkm == lgkm_max;
            let mut sep = "";
            if vm != 63 || all {
                write!(f, "vmcnt({vm})")?;
                sep = " ";
            }
            if exp != 7 || all {
                write!(f, "{sep}expcnt({exp})")?;
                sep = " ";
            }
            if lgkm != lgkm_max || all {
                write!(f, "{sep}lgkmcnt({lgkm})")?;
            }
            Ok(())
        }
        ImmStyle::Depctr => {
            let field_bits: u16 = t
                .depctr_fields
                .iter()
                .map(|&(_, s, w)| ((1u16 << w) - 1) << s)
                .fold(0, |a, b| a | b);
            if v & !field_bits != 0 {
                return write!(f, "{v:#x}");
            }
            let value = |s: u8, w: u8| v >> s & ((1 << w) - 1);
            let any_non_default = t
                .depctr_fields
                .iter()
                .any(|&(_, s, w)| value(s, w) != (1 << w) - 1);
            let mut sep = "";
            for &(name, s, w) in t.depctr_fields {
                let val = value(s, w);
                if val != (1 << w) - 1 || !any_non_default {
                    write!(f, "{sep}{name}({val})")?;
                    sep = " ";
                }
            }
            Ok(())
        }
        ImmStyle::Sendmsg => {
            let key = v & 0x37f;
            if let Ok(i) = t.sendmsg_text.binary_search_by_key(&key, |&(k, _)| k) {
                f.write_str(t.sendmsg_text[i].1)
            } else if v & !0x37f == 0 {
                write!(f, "sendmsg({}, {}, {})", v & 0xf, v >> 4 & 7, v >> 8 & 3)
            } else {
                write!(f, "{v}")
            }
        }
        ImmStyle::Hwreg => {
            let id = v & 0x3f;
            let offset = v >> 6 & 0x1f;
            let width = (v >> 11 & 0x1f) + 1;
            f.write_str("hwreg(")?;
            match t.hwreg_names.iter().find(|&&(i, _)| i == id) {
                Some((_, name)) => f.write_str(name)?,
                None => write!(f, "{id}")?,
            }
            if width != 32 || offset != 0 {
                write!(f, ", {offset}, {width}")?;
            }
            f.write_char(')')
        }
        ImmStyle::GprIdx => {
            f.write_str("gpr_idx(")?;
            let mut sep = "";
            for (bit, name) in ["SRC0", "SRC1", "SRC2", "DST"].iter().enumerate() {
                if v >> bit & 1 != 0 {
                    write!(f, "{sep}{name}")?;
                    sep = ",";
                }
            }
            f.write_char(')')
        }
        ImmStyle::Hex | ImmStyle::Version | ImmStyle::None | ImmStyle::NoImm => write!(f, "{v:#x}"),
    }
}

/// Print a register or constant operand as LLVM does.
fn write_value(f: &mut fmt::Formatter<'_>, op: Operand, literal: u32) -> fmt::Result {
    match op {
        Operand::None => Ok(()),
        Operand::Sgpr { first, dwords } => write_range(f, "s", first as u32, dwords),
        Operand::Vgpr { first, dwords } => write_range(f, "v", first as u32, dwords),
        Operand::Agpr { first, dwords } => write_range(f, "a", first as u32, dwords),
        Operand::Ttmp { first, dwords } => write_range(f, "ttmp", first as u32, dwords),
        Operand::Special { reg, dwords } => f.write_str(special_name(reg, dwords)),
        Operand::Off => f.write_str("off"),
        Operand::Inline(c) => match c.int_value() {
            Some(v) => write!(f, "{v}"),
            None => match c.ty() {
                Ty::B16 => write_b16(f, c.bits() as u32),
                Ty::B64 | Ty::F64 => write_f64(f, c.bits()),
                Ty::F16 | Ty::V2F16 => write_f16(f, c.bits() as u16),
                _ => write_imm32(f, c.bits() as u32),
            },
        },
        Operand::Literal(ty) => match ty {
            Ty::B16 => write_b16(f, literal),
            Ty::F16 => write_f16(f, literal as u16),
            Ty::V2F16 => {
                if (literal as i32) >= -16 && (literal as i32) <= 64 {
                    write!(f, "{}", literal as i32)
                } else if let Some(name) = f16_name(literal) {
                    f.write_str(name)
                } else {
                    write!(f, "{literal:#x}")
                }
            }
            Ty::F64 => {
                if literal == 0 {
                    f.write_str("0")
                } else if let Some(name) = f64_name((literal as u64) << 32) {
                    f.write_str(name)
                } else {
                    write!(f, "{literal:#x}")
                }
            }
            Ty::B64 => write_f64(f, literal as u64),
            _ => write_imm32(f, literal),
        },
    }
}

fn write_range(f: &mut fmt::Formatter<'_>, prefix: &str, first: u32, dwords: u8) -> fmt::Result {
    if dwords <= 1 {
        write!(f, "{prefix}{first}")
    } else {
        write!(f, "{prefix}[{first}:{}]", first + dwords as u32 - 1)
    }
}

fn special_name(reg: Special, dwords: u8) -> &'static str {
    match (reg, dwords) {
        (Special::VccLo, 2) => "vcc",
        (Special::VccLo, _) => "vcc_lo",
        (Special::VccHi, _) => "vcc_hi",
        (Special::ExecLo, 2) => "exec",
        (Special::ExecLo, _) => "exec_lo",
        (Special::ExecHi, _) => "exec_hi",
        (Special::M0, _) => "m0",
        (Special::Null, _) => "null",
        (Special::SharedBase, _) => "src_shared_base",
        (Special::SharedLimit, _) => "src_shared_limit",
        (Special::PrivateBase, _) => "src_private_base",
        (Special::PrivateLimit, _) => "src_private_limit",
        (Special::PopsExitingWaveId, _) => "src_pops_exiting_wave_id",
        (Special::Vccz, _) => "src_vccz",
        (Special::Execz, _) => "src_execz",
        (Special::Scc, _) => "src_scc",
        (Special::LdsDirect, _) => "src_lds_direct",
        (Special::FlatScratchLo, 2) => "flat_scratch",
        (Special::FlatScratchLo, _) => "flat_scratch_lo",
        (Special::FlatScratchHi, _) => "flat_scratch_hi",
        (Special::XnackMaskLo, 2) => "xnack_mask",
        (Special::XnackMaskLo, _) => "xnack_mask_lo",
        (Special::XnackMaskHi, _) => "xnack_mask_hi",
    }
}

fn f32_name(v: u32) -> Option<&'static str> {
    Some(match v {
        0x3f00_0000 => "0.5",
        0xbf00_0000 => "-0.5",
        0x3f80_0000 => "1.0",
        0xbf80_0000 => "-1.0",
        0x4000_0000 => "2.0",
        0xc000_0000 => "-2.0",
        0x4080_0000 => "4.0",
        0xc080_0000 => "-4.0",
        0x3e22_f983 => "0.15915494",
        _ => return None,
    })
}

fn f16_name(v: u32) -> Option<&'static str> {
    Some(match v {
        0x3800 => "0.5",
        0xb800 => "-0.5",
        0x3c00 => "1.0",
        0xbc00 => "-1.0",
        0x4000 => "2.0",
        0xc000 => "-2.0",
        0x4400 => "4.0",
        0xc400 => "-4.0",
        0x3118 => "0.15915494",
        _ => return None,
    })
}

fn f64_name(v: u64) -> Option<&'static str> {
    Some(match v {
        0x3fe0_0000_0000_0000 => "0.5",
        0xbfe0_0000_0000_0000 => "-0.5",
        0x3ff0_0000_0000_0000 => "1.0",
        0xbff0_0000_0000_0000 => "-1.0",
        0x4000_0000_0000_0000 => "2.0",
        0xc000_0000_0000_0000 => "-2.0",
        0x4010_0000_0000_0000 => "4.0",
        0xc010_0000_0000_0000 => "-4.0",
        0x3fc4_5f30_6dc9_c882 => "0.15915494309189532",
        _ => return None,
    })
}

/// 32-bit operands: small integers in decimal, the inline float values by
/// name, anything else in hex.
fn write_imm32(f: &mut fmt::Formatter<'_>, v: u32) -> fmt::Result {
    let s = v as i32;
    if (-16..=64).contains(&s) {
        write!(f, "{s}")
    } else if let Some(name) = f32_name(v) {
        f.write_str(name)
    } else {
        write!(f, "{v:#x}")
    }
}

/// 16-bit float operands: the low half, as an integer, float name or hex.
fn write_f16(f: &mut fmt::Formatter<'_>, v: u16) -> fmt::Result {
    let s = v as i16;
    if (-16..=64).contains(&s) {
        write!(f, "{s}")
    } else if let Some(name) = f16_name(v as u32) {
        f.write_str(name)
    } else {
        write!(f, "{v:#x}")
    }
}

/// 16-bit integer operands: small integers in decimal, the 32-bit float
/// names, else the low half in hex.
fn write_b16(f: &mut fmt::Formatter<'_>, v: u32) -> fmt::Result {
    let s = v as i32;
    if (-16..=64).contains(&s) {
        write!(f, "{s}")
    } else if let Some(name) = f32_name(v) {
        f.write_str(name)
    } else {
        write!(f, "{:#x}", v & 0xffff)
    }
}

/// 64-bit operands.
fn write_f64(f: &mut fmt::Formatter<'_>, v: u64) -> fmt::Result {
    let s = v as i64;
    if (-16..=64).contains(&s) {
        write!(f, "{s}")
    } else if let Some(name) = f64_name(v) {
        f.write_str(name)
    } else {
        write!(f, "{v:#x}")
    }
}
