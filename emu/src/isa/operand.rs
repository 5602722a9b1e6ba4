//! Resolved operands of a decoded instruction: registers with their width,
//! special registers (found through the instruction set's register map),
//! inline constants (already tied to the operand's type) and literals. Not the
//! encoding fields (`decode.rs`), not printing.

use super::family::RegisterMap;
use super::spec::Ty;

/// A register or constant operand. Three bytes, `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Operand {
    /// No operand in this slot.
    #[default]
    None,
    /// Scalar registers `s[first .. first + dwords)`.
    Sgpr {
        /// First register number.
        first: u8,
        /// Width in dwords.
        dwords: u8,
    },
    /// Vector registers `v[first .. first + dwords)`.
    Vgpr {
        /// First register number.
        first: u8,
        /// Width in dwords.
        dwords: u8,
    },
    /// Accumulation registers `a[first .. first + dwords)` (CDNA's AGPRs).
    Agpr {
        /// First register number.
        first: u8,
        /// Width in dwords.
        dwords: u8,
    },
    /// Trap-handler temporaries `ttmp[first .. first + dwords)`.
    Ttmp {
        /// First register number.
        first: u8,
        /// Width in dwords.
        dwords: u8,
    },
    /// A special register (`dwords` 2 means the 64-bit pair, e.g. `vcc`).
    Special {
        /// Which register.
        reg: Special,
        /// Width in dwords.
        dwords: u8,
    },
    /// An inline constant, typed by the operand it feeds.
    Inline(InlineConst),
    /// The instruction's 32-bit literal (`Inst::literal`), typed by its operand.
    Literal(Ty),
    /// `off`: the address or base this form does without.
    Off,
}

/// Special scalar operands.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Special {
    VccLo,
    VccHi,
    M0,
    Null,
    ExecLo,
    ExecHi,
    SharedBase,
    SharedLimit,
    PrivateBase,
    PrivateLimit,
    PopsExitingWaveId,
    Vccz,
    Execz,
    Scc,
    LdsDirect,
    /// gfx9's FLAT_SCRATCH (`dwords: 2` is the pair).
    FlatScratchLo,
    FlatScratchHi,
    /// gfx9's XNACK_MASK.
    XnackMaskLo,
    XnackMaskHi,
}

/// An inline constant: its 8-bit source code (128..=248) and the type of the
/// operand it feeds. [`InlineConst::bits`] gives the resolved bit pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InlineConst {
    code: u8,
    ty: Ty,
}

impl InlineConst {
    /// Inline constant for source code `code` feeding an operand of type `ty`,
    /// or `None` when `code` is not an inline-constant code.
    pub const fn new(code: u16, ty: Ty) -> Option<Self> {
        if (code >= 128 && code <= 208) || (code >= 240 && code <= 248) {
            Some(Self {
                code: code as u8,
                ty,
            })
        } else {
            None
        }
    }

    /// The source-operand code (128..=208 integers, 240..=248 floats).
    pub const fn code(self) -> u8 {
        self.code
    }

    /// The operand type this constant was resolved for.
    pub const fn ty(self) -> Ty {
        self.ty
    }

    /// The integer value for integer codes (-16..=64), else `None`.
    pub const fn int_value(self) -> Option<i64> {
        match self.code {
            128..=192 => Some(self.code as i64 - 128),
            193..=208 => Some(192 - self.code as i64),
            _ => None,
        }
    }

    /// Bit pattern of this constant for its operand type: integers are
    /// sign-extended to the operand width; floats use the operand's format
    /// (f16 for 16-bit and packed types, f32 for 32-bit, f64 for 64-bit), e.g.
    /// 1.0 is 0x3c00, 0x3f800000 and 0x3ff0000000000000.
    pub const fn bits(self) -> u64 {
        if let Some(v) = self.int_value() {
            return match self.ty {
                Ty::B16 | Ty::F16 => v as u64 & 0xffff,
                Ty::B64 | Ty::F64 => v as u64,
                _ => v as u64 & 0xffff_ffff,
            };
        }
        let i = (self.code - 240) as usize;
        match self.ty {
            Ty::B16 | Ty::F16 | Ty::V2F16 => F16_CONSTS[i] as u64,
            Ty::B64 | Ty::F64 => F64_CONSTS[i],
            _ => F32_CONSTS[i] as u64,
        }
    }
}

/// 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 1/(2*pi) as f16.
const F16_CONSTS: [u16; 9] = [
    0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
];
/// The same as f32.
const F32_CONSTS: [u32; 9] = [
    0x3f00_0000,
    0xbf00_0000,
    0x3f80_0000,
    0xbf80_0000,
    0x4000_0000,
    0xc000_0000,
    0x4080_0000,
    0xc080_0000,
    0x3e22_f983,
];
/// The same as f64.
const F64_CONSTS: [u64; 9] = [
    0x3fe0_0000_0000_0000,
    0xbfe0_0000_0000_0000,
    0x3ff0_0000_0000_0000,
    0xbff0_0000_0000_0000,
    0x4000_0000_0000_0000,
    0xc000_0000_0000_0000,
    0x4010_0000_0000_0000,
    0xc010_0000_0000_0000,
    0x3fc4_5f30_6dc9_c882,
];

/// The value a 32-bit literal gives an operand of type `ty`: f64 operands take
/// it as the high dword; 64-bit integer operands zero-extend it; 16-bit
/// operands use its low half.
pub const fn literal_bits(literal: u32, ty: Ty) -> u64 {
    match ty {
        Ty::F64 => (literal as u64) << 32,
        Ty::B16 | Ty::F16 => literal as u64 & 0xffff,
        _ => literal as u64,
    }
}

/// A special register operand.
const fn special(reg: Special, dwords: u8) -> Option<Operand> {
    Some(Operand::Special { reg, dwords })
}

impl Operand {
    /// Decode a gfx10 scalar register/constant code; see [`Operand::scalar_in`].
    pub const fn scalar(code: u16, dwords: u8, ty: Ty) -> Option<Operand> {
        Operand::scalar_in(&RegisterMap::GFX10, code, dwords, ty)
    }

    /// Decode a scalar register/constant code (0..=255; 7-bit fields pass
    /// their value) of an operand `dwords` wide and typed `ty`, with the special
    /// registers where `map` puts them. Returns `None` for reserved codes and the
    /// SDWA/DPP escapes.
    pub const fn scalar_in(map: &RegisterMap, code: u16, dwords: u8, ty: Ty) -> Option<Operand> {
        if code < map.sgprs as u16 {
            return Some(Operand::Sgpr {
                first: code as u8,
                dwords,
            });
        }
        if code >= map.ttmp as u16 && code < map.ttmp as u16 + 16 {
            return Some(Operand::Ttmp {
                first: (code - map.ttmp as u16) as u8,
                dwords,
            });
        }
        if code == map.vcc as u16 {
            return special(Special::VccLo, dwords);
        }
        if code == map.vcc as u16 + 1 {
            return special(Special::VccHi, dwords);
        }
        if code == map.m0 as u16 {
            return special(Special::M0, dwords);
        }
        if let Some(null) = map.null {
            if code == null as u16 {
                return special(Special::Null, dwords);
            }
        }
        if code == map.exec as u16 {
            return special(Special::ExecLo, dwords);
        }
        if code == map.exec as u16 + 1 {
            return special(Special::ExecHi, dwords);
        }
        if let Some(fs) = map.flat_scratch {
            if code == fs as u16 {
                return special(Special::FlatScratchLo, dwords);
            }
            if code == fs as u16 + 1 {
                return special(Special::FlatScratchHi, dwords);
            }
        }
        if let Some(xm) = map.xnack_mask {
            if code == xm as u16 {
                return special(Special::XnackMaskLo, dwords);
            }
            if code == xm as u16 + 1 {
                return special(Special::XnackMaskHi, dwords);
            }
        }
        match code {
            128..=208 | 240..=248 => match InlineConst::new(code, ty) {
                Some(c) => Some(Operand::Inline(c)),
                None => None,
            },
            235 => special(Special::SharedBase, dwords),
            236 => special(Special::SharedLimit, dwords),
            237 => special(Special::PrivateBase, dwords),
            238 => special(Special::PrivateLimit, dwords),
            239 => special(Special::PopsExitingWaveId, dwords),
            251 => special(Special::Vccz, dwords),
            252 => special(Special::Execz, dwords),
            253 => special(Special::Scc, dwords),
            254 => special(Special::LdsDirect, dwords),
            255 => Some(Operand::Literal(ty)),
            _ => None,
        }
    }

    /// Decode a gfx10 9-bit vector-ALU source code.
    pub const fn vector_source(code: u16, dwords: u8, ty: Ty) -> Option<Operand> {
        Operand::vector_source_in(&RegisterMap::GFX10, code, dwords, ty)
    }

    /// Decode a 9-bit vector-ALU source code with `map`'s scalar registers.
    pub const fn vector_source_in(
        map: &RegisterMap,
        code: u16,
        dwords: u8,
        ty: Ty,
    ) -> Option<Operand> {
        if code >= 256 {
            Some(Operand::Vgpr {
                first: (code - 256) as u8,
                dwords,
            })
        } else {
            Operand::scalar_in(map, code, dwords, ty)
        }
    }

    /// True for [`Operand::None`].
    pub const fn is_none(&self) -> bool {
        matches!(self, Operand::None)
    }

    /// Resolved constant bits for an inline constant or literal operand.
    pub const fn constant_bits(&self, literal: u32) -> Option<u64> {
        match *self {
            Operand::Inline(c) => Some(c.bits()),
            Operand::Literal(ty) => Some(literal_bits(literal, ty)),
            _ => None,
        }
    }
}
