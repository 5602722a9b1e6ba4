//! MIMG, the image-memory encoding of GFX10-layout instruction sets (gfx1030): its opcodes,
//! its fields, how many address and data registers each instruction has, and its text as
//! llvm-objdump-19 prints it. The opcodes are a hand-kept table (checked against llvm-mc by
//! `emu/tests/mimg_encodings.rs`) rather than generated ones, so every MIMG instruction is the
//! one operation [`Op::Mimg`] with its MIMG opcode in [`Inst::opcode`] and its fields in
//! [`Extra::Mimg`]; the execution engine reads them back with [`MimgInfo`]. Not the semantics
//! (`exec/image.rs`).

use core::fmt::{self, Write};

use super::decode::{DecodeError, DecodeErrorKind};
use super::family::Isa;
use super::inst::{Encoding, Extra, Inst};
use super::operand::Operand;
use super::spec::Op;

/// The gfx10 MIMG opcodes (7 bits in word 0 bits 24:18 plus the OPM bit 0 as bit 7).
const OPCODES: &[(u8, &str)] = &[
    (0x00, "image_load"),
    (0x01, "image_load_mip"),
    (0x02, "image_load_pck"),
    (0x03, "image_load_pck_sgn"),
    (0x04, "image_load_mip_pck"),
    (0x05, "image_load_mip_pck_sgn"),
    (0x08, "image_store"),
    (0x09, "image_store_mip"),
    (0x0a, "image_store_pck"),
    (0x0b, "image_store_mip_pck"),
    (0x0e, "image_get_resinfo"),
    (0x0f, "image_atomic_swap"),
    (0x10, "image_atomic_cmpswap"),
    (0x11, "image_atomic_add"),
    (0x12, "image_atomic_sub"),
    (0x14, "image_atomic_smin"),
    (0x15, "image_atomic_umin"),
    (0x16, "image_atomic_smax"),
    (0x17, "image_atomic_umax"),
    (0x18, "image_atomic_and"),
    (0x19, "image_atomic_or"),
    (0x1a, "image_atomic_xor"),
    (0x1b, "image_atomic_inc"),
    (0x1c, "image_atomic_dec"),
    (0x1d, "image_atomic_fcmpswap"),
    (0x1e, "image_atomic_fmin"),
    (0x1f, "image_atomic_fmax"),
    (0x20, "image_sample"),
    (0x21, "image_sample_cl"),
    (0x22, "image_sample_d"),
    (0x23, "image_sample_d_cl"),
    (0x24, "image_sample_l"),
    (0x25, "image_sample_b"),
    (0x26, "image_sample_b_cl"),
    (0x27, "image_sample_lz"),
    (0x28, "image_sample_c"),
    (0x29, "image_sample_c_cl"),
    (0x2a, "image_sample_c_d"),
    (0x2b, "image_sample_c_d_cl"),
    (0x2c, "image_sample_c_l"),
    (0x2d, "image_sample_c_b"),
    (0x2e, "image_sample_c_b_cl"),
    (0x2f, "image_sample_c_lz"),
    (0x30, "image_sample_o"),
    (0x31, "image_sample_cl_o"),
    (0x32, "image_sample_d_o"),
    (0x33, "image_sample_d_cl_o"),
    (0x34, "image_sample_l_o"),
    (0x35, "image_sample_b_o"),
    (0x36, "image_sample_b_cl_o"),
    (0x37, "image_sample_lz_o"),
    (0x38, "image_sample_c_o"),
    (0x39, "image_sample_c_cl_o"),
    (0x3a, "image_sample_c_d_o"),
    (0x3b, "image_sample_c_d_cl_o"),
    (0x3c, "image_sample_c_l_o"),
    (0x3d, "image_sample_c_b_o"),
    (0x3e, "image_sample_c_b_cl_o"),
    (0x3f, "image_sample_c_lz_o"),
    (0x40, "image_gather4"),
    (0x41, "image_gather4_cl"),
    (0x44, "image_gather4_l"),
    (0x45, "image_gather4_b"),
    (0x46, "image_gather4_b_cl"),
    (0x47, "image_gather4_lz"),
    (0x48, "image_gather4_c"),
    (0x49, "image_gather4_c_cl"),
    (0x4c, "image_gather4_c_l"),
    (0x4d, "image_gather4_c_b"),
    (0x4e, "image_gather4_c_b_cl"),
    (0x4f, "image_gather4_c_lz"),
    (0x50, "image_gather4_o"),
    (0x51, "image_gather4_cl_o"),
    (0x54, "image_gather4_l_o"),
    (0x55, "image_gather4_b_o"),
    (0x56, "image_gather4_b_cl_o"),
    (0x57, "image_gather4_lz_o"),
    (0x58, "image_gather4_c_o"),
    (0x59, "image_gather4_c_cl_o"),
    (0x5c, "image_gather4_c_l_o"),
    (0x5d, "image_gather4_c_b_o"),
    (0x5e, "image_gather4_c_b_cl_o"),
    (0x5f, "image_gather4_c_lz_o"),
    (0x60, "image_get_lod"),
    (0x61, "image_gather4h"),
    (0x68, "image_sample_cd"),
    (0x69, "image_sample_cd_cl"),
    (0x6a, "image_sample_c_cd"),
    (0x6b, "image_sample_c_cd_cl"),
    (0x6c, "image_sample_cd_o"),
    (0x6d, "image_sample_cd_cl_o"),
    (0x6e, "image_sample_c_cd_o"),
    (0x6f, "image_sample_c_cd_cl_o"),
    (0x80, "image_msaa_load"),
    (0xa2, "image_sample_d_g16"),
    (0xa3, "image_sample_d_cl_g16"),
    (0xaa, "image_sample_c_d_g16"),
    (0xab, "image_sample_c_d_cl_g16"),
    (0xb2, "image_sample_d_o_g16"),
    (0xb3, "image_sample_d_cl_o_g16"),
    (0xba, "image_sample_c_d_o_g16"),
    (0xbb, "image_sample_c_d_cl_o_g16"),
    (0xe8, "image_sample_cd_g16"),
    (0xe9, "image_sample_cd_cl_g16"),
    (0xea, "image_sample_c_cd_g16"),
    (0xeb, "image_sample_c_cd_cl_g16"),
    (0xec, "image_sample_cd_o_g16"),
    (0xed, "image_sample_cd_cl_o_g16"),
    (0xee, "image_sample_c_cd_o_g16"),
    (0xef, "image_sample_c_cd_cl_o_g16"),
];

/// The `dim:` names, by the 3-bit field.
pub const DIM_NAMES: [&str; 8] = [
    "SQ_RSRC_IMG_1D",
    "SQ_RSRC_IMG_2D",
    "SQ_RSRC_IMG_3D",
    "SQ_RSRC_IMG_CUBE",
    "SQ_RSRC_IMG_1D_ARRAY",
    "SQ_RSRC_IMG_2D_ARRAY",
    "SQ_RSRC_IMG_2D_MSAA",
    "SQ_RSRC_IMG_2D_MSAA_ARRAY",
];

/// Coordinates each dimension takes (the array layer, cube face and sample index count).
const COORDS: [u8; 8] = [1, 2, 3, 3, 2, 3, 3, 4];
/// Components of one derivative (`_d`, `_cd`) per dimension.
const GRADIENTS: [u8; 8] = [1, 2, 3, 2, 1, 2, 2, 2];

/// What kind of image instruction an opcode is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MimgKind {
    /// `image_load`, `image_load_mip` (and the `_pck` forms).
    Load,
    /// `image_store`, `image_store_mip` (and the `_pck` forms).
    Store,
    /// `image_get_resinfo`.
    Resinfo,
    /// `image_atomic_*`.
    Atomic,
    /// `image_sample*`.
    Sample,
    /// `image_gather4*`.
    Gather4,
    /// `image_get_lod`.
    GetLod,
    /// `image_msaa_load`.
    MsaaLoad,
}

/// What an opcode's name says about its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MimgInfo {
    /// The mnemonic.
    pub name: &'static str,
    /// The class.
    pub kind: MimgKind,
    /// `_mip`: a mip level after the coordinates.
    pub mip: bool,
    /// `_pck`/`_pck_sgn`: packed (unconverted) data.
    pub pck: bool,
    /// `_o`: a texel offset dword first.
    pub offset: bool,
    /// `_b`: an LOD bias dword.
    pub bias: bool,
    /// `_c`: a depth-compare reference dword.
    pub compare: bool,
    /// `_d`/`_cd`: user derivatives.
    pub derivatives: bool,
    /// `_g16`: 16-bit derivatives.
    pub g16: bool,
    /// `_l`: an explicit LOD after the coordinates.
    pub lod: bool,
    /// `_lz`: LOD zero.
    pub lz: bool,
    /// `_cl`: an LOD clamp after the coordinates.
    pub clamp: bool,
}

impl MimgInfo {
    /// The facts of MIMG opcode `opcode`, if gfx10 defines it.
    pub fn of(opcode: u16) -> Option<MimgInfo> {
        let name = OPCODES
            .iter()
            .find(|(o, _)| u16::from(*o) == opcode)
            .map(|(_, n)| *n)?;
        let rest = name.strip_prefix("image_")?;
        let mut info = MimgInfo {
            name,
            kind: MimgKind::Load,
            mip: false,
            pck: false,
            offset: false,
            bias: false,
            compare: false,
            derivatives: false,
            g16: false,
            lod: false,
            lz: false,
            clamp: false,
        };
        let (kind, tail) = if let Some(t) = rest.strip_prefix("sample") {
            (MimgKind::Sample, t)
        } else if let Some(t) = rest.strip_prefix("gather4h") {
            (MimgKind::Gather4, t)
        } else if let Some(t) = rest.strip_prefix("gather4") {
            (MimgKind::Gather4, t)
        } else if rest.starts_with("atomic_") {
            (MimgKind::Atomic, "")
        } else if rest == "get_resinfo" {
            (MimgKind::Resinfo, "")
        } else if rest == "get_lod" {
            (MimgKind::GetLod, "")
        } else if rest == "msaa_load" {
            (MimgKind::MsaaLoad, "")
        } else if let Some(t) = rest.strip_prefix("load") {
            (MimgKind::Load, t)
        } else if let Some(t) = rest.strip_prefix("store") {
            (MimgKind::Store, t)
        } else {
            return None;
        };
        info.kind = kind;
        for token in tail.split('_').filter(|t| !t.is_empty()) {
            match token {
                "mip" => info.mip = true,
                "pck" | "sgn" => info.pck = true,
                "o" => info.offset = true,
                "b" => info.bias = true,
                "c" => info.compare = true,
                "d" | "cd" => info.derivatives = true,
                "g16" => info.g16 = true,
                "l" => info.lod = true,
                "lz" => info.lz = true,
                "cl" => info.clamp = true,
                _ => return None,
            }
        }
        Some(info)
    }

    /// Whether the instruction takes a sampler (`ssamp`).
    pub fn sampler(&self) -> bool {
        matches!(
            self.kind,
            MimgKind::Sample | MimgKind::Gather4 | MimgKind::GetLod
        )
    }

    /// Address dwords for dimension `dim` (with `a16`, 16-bit coordinates packed in pairs).
    pub fn address_dwords(&self, dim: u8, a16: bool) -> u8 {
        let d = usize::from(dim & 7);
        if self.kind == MimgKind::Resinfo {
            return 1;
        }
        let mut n = u8::from(self.offset) + u8::from(self.bias) + u8::from(self.compare);
        if self.derivatives {
            let g = GRADIENTS[d];
            // a16 leaves derivatives 32-bit; only the _g16 forms pack them.
            n += if self.g16 { 2 * g.div_ceil(2) } else { 2 * g };
        }
        let tail = COORDS[d] + u8::from(self.lod || self.clamp || self.mip);
        n + if a16 { tail.div_ceil(2) } else { tail }
    }

    /// The address sizes LLVM defines an instruction for (a size outside them prints as the
    /// smallest form): non-sampling instructions 1 to 4 dwords; sampling ones the sizes of
    /// every non-MSAA dimension with and without a16, where 3 also brings 4 and any of 5..8
    /// brings 8.
    fn address_size_defined(&self, size: u8) -> bool {
        if !self.sampler() {
            return (1..=4).contains(&size);
        }
        let mut all = [false; 17];
        for dim in 0..6 {
            for a16 in [false, true] {
                let n = usize::from(self.address_dwords(dim, a16)).min(16);
                all[n] = true;
            }
        }
        let any = |lo: usize, hi: usize| all[lo..=hi].iter().any(|x| *x);
        match size {
            1 | 2 | 3 | 5 | 6 | 7 | 9 | 10 | 11 | 12 => all[usize::from(size)],
            4 => any(3, 4),
            8 => any(5, 8),
            16 => any(13, 16),
            _ => false,
        }
    }

    /// The smallest address size LLVM defines the instruction for.
    fn smallest_address_size(&self) -> u8 {
        (1..=16)
            .find(|&s| self.address_size_defined(s))
            .unwrap_or(1)
    }

    /// Data dwords for `dmask` (`d16` packs two components in a dword; tfe adds one).
    pub fn data_dwords(&self, dmask: u8, d16: bool, tfe: bool) -> u8 {
        let components = match self.kind {
            MimgKind::Gather4 => 4,
            _ => (dmask & 15).count_ones().max(1) as u8,
        };
        let n = if d16 && self.kind != MimgKind::Atomic {
            components.div_ceil(2)
        } else {
            components
        };
        n + u8::from(tfe)
    }
}

/// Bits of [`MimgFields::bits`].
pub mod mimg_bits {
    /// Unnormalised coordinates.
    pub const UNORM: u8 = 1 << 0;
    /// 128-bit resource (`r128`).
    pub const R128: u8 = 1 << 1;
    /// 16-bit addresses.
    pub const A16: u8 = 1 << 2;
    /// Texture fail enable.
    pub const TFE: u8 = 1 << 3;
    /// LOD warning enable.
    pub const LWE: u8 = 1 << 4;
    /// 16-bit data.
    pub const D16: u8 = 1 << 5;
    /// Non-sequential addresses.
    pub const NSA: u8 = 1 << 6;
    /// The operand sizes are LLVM's default ones (no form of the instruction has the sizes
    /// the fields ask for); printing only.
    pub const DEFAULT_SIZES: u8 = 1 << 7;
}

/// The MIMG fields beyond the operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MimgFields {
    /// Which components are read or written.
    pub dmask: u8,
    /// The `dim` field (index into [`DIM_NAMES`]).
    pub dim: u8,
    /// How many address dwords the instruction reads.
    pub naddr: u8,
    /// [`mimg_bits`].
    pub bits: u8,
    /// With NSA: address registers 1.. (register 0 is `src[0]`).
    pub nsa: [u8; 11],
}

impl MimgFields {
    /// Whether bit `b` of [`mimg_bits`] is set.
    pub fn has(&self, b: u8) -> bool {
        self.bits & b != 0
    }

    /// The VGPR holding address dword `k`, given the first one.
    pub fn address_reg(&self, first: u8, k: u8) -> u8 {
        if k == 0 {
            first
        } else if self.has(mimg_bits::NSA) {
            self.nsa[usize::from(k - 1).min(10)]
        } else {
            first.wrapping_add(k)
        }
    }
}

/// Decodes the MIMG instruction whose first word is `w0` at the start of `code`.
pub(crate) fn decode(
    isa: &'static Isa,
    code: &[u8],
    address: u64,
    w0: u32,
) -> Result<Inst, DecodeError> {
    let nsa_words = (w0 >> 1 & 3) as usize;
    let len = 8 + 4 * nsa_words;
    let mut words = [w0, 0, 0];
    let mut nwords = 1u8;
    let err = |kind, words: [u32; 3], nwords: u8| DecodeError {
        kind,
        encoding: "MIMG",
        address,
        words,
        nwords,
    };
    let Some(bytes) = code.get(..len) else {
        return Err(err(
            DecodeErrorKind::Truncated {
                needed: len as u8,
                available: code.len().min(255) as u8,
            },
            words,
            nwords,
        ));
    };
    let word = |i: usize| {
        u32::from_le_bytes([
            bytes[4 * i],
            bytes[4 * i + 1],
            bytes[4 * i + 2],
            bytes[4 * i + 3],
        ])
    };
    let w1 = word(1);
    words[1] = w1;
    nwords = 2;
    if nsa_words > 0 {
        words[2] = word(2);
        nwords = 3;
    }
    let opcode = ((w0 >> 18 & 0x7f) | (w0 & 1) << 7) as u16;
    let Some(info) = MimgInfo::of(opcode) else {
        return Err(err(DecodeErrorKind::UnknownOpcode(opcode), words, nwords));
    };
    let ssamp = (w1 >> 21 & 0x1f) as u8;
    if (matches!(
        info.kind,
        MimgKind::GetLod | MimgKind::Resinfo | MimgKind::Atomic
    ) || info.pck)
        && w1 >> 31 != 0
    {
        return Err(err(
            DecodeErrorKind::ReservedOperand {
                field: "d16",
                value: 1,
            },
            words,
            nwords,
        ));
    }
    if !info.sampler() && ssamp != 0 {
        return Err(err(
            DecodeErrorKind::ReservedOperand {
                field: "ssamp",
                value: u16::from(ssamp),
            },
            words,
            nwords,
        ));
    }
    let dim = (w0 >> 3 & 7) as u8;
    let dmask = (w0 >> 8 & 15) as u8;
    let flag = |cond: bool, b: u8| if cond { b } else { 0 };
    let mut bits = flag(w0 >> 12 & 1 != 0, mimg_bits::UNORM)
        | flag(w0 >> 15 & 1 != 0, mimg_bits::R128)
        | flag(w1 >> 30 & 1 != 0, mimg_bits::A16)
        | flag(w0 >> 16 & 1 != 0, mimg_bits::TFE)
        | flag(w0 >> 17 & 1 != 0, mimg_bits::LWE)
        | flag(w1 >> 31 != 0, mimg_bits::D16)
        | flag(nsa_words > 0, mimg_bits::NSA);
    let a16 = bits & mimg_bits::A16 != 0;
    let mut naddr = info.address_dwords(dim, a16);
    let mut ndata = info.data_dwords(
        dmask,
        bits & mimg_bits::D16 != 0,
        bits & mimg_bits::TFE != 0,
    );
    if nsa_words > 0 && !info.sampler() {
        // LLVM has NSA forms of 2 to 4 addresses for these; others print its 4-address form.
        if !(2..=4).contains(&naddr) {
            naddr = 4;
            ndata = if info.name.ends_with("cmpswap") { 2 } else { 1 };
            bits |= mimg_bits::DEFAULT_SIZES;
        }
    } else if nsa_words > 0 {
        // NSA dwords beyond those the addresses need are invalid; fewer truncate the list
        // (LLVM prints what is there; the engine refuses to run it).
        let capacity = 1 + 4 * nsa_words as u8;
        if usize::from(naddr.saturating_sub(1)).div_ceil(4) < nsa_words {
            return Err(err(
                DecodeErrorKind::ReservedOperand {
                    field: "nsa",
                    value: nsa_words as u16,
                },
                words,
                nwords,
            ));
        }
        if naddr > capacity {
            naddr = capacity;
            bits |= mimg_bits::DEFAULT_SIZES;
        }
    } else {
        let size = if naddr > 12 { 16 } else { naddr };
        let data_ok = match info.kind {
            // Atomics have 1- and 2-dword data (2 and 4 for the compare-swaps).
            MimgKind::Atomic if info.name.ends_with("cmpswap") => matches!(ndata, 2 | 4),
            MimgKind::Atomic => matches!(ndata, 1 | 2),
            _ => ndata <= 5,
        };
        if !info.address_size_defined(size) || !data_ok {
            // LLVM has no form with these sizes and prints its default one.
            naddr = info.smallest_address_size();
            ndata = match info.kind {
                MimgKind::Gather4 => 4,
                MimgKind::Atomic if info.name.ends_with("cmpswap") => 2,
                _ => 1,
            };
            bits |= mimg_bits::DEFAULT_SIZES;
        } else {
            naddr = size;
        }
    }
    let mut nsa = [0u8; 11];
    for (k, r) in nsa.iter_mut().enumerate().take(4 * nsa_words) {
        *r = bytes.get(8 + k).copied().unwrap_or(0);
    }
    let vaddr = (w1 & 0xff) as u8;
    let vdata = (w1 >> 8 & 0xff) as u8;
    let srsrc = (w1 >> 16 & 0x1f) as u8 * 4;
    let data = Operand::Vgpr {
        first: vdata,
        dwords: ndata,
    };
    let glc = w0 >> 13 & 1 != 0;
    let mut inst = Inst {
        isa: isa.id,
        op: Op::Mimg,
        opcode,
        encoding: Encoding::Mimg,
        len: len as u8,
        flags: 0,
        literal: 0,
        dst: [Operand::None; 2],
        src: [Operand::None; 4],
        extra: Extra::Mimg(MimgFields {
            dmask,
            dim,
            naddr,
            bits,
            nsa,
        }),
    };
    inst.src[0] = Operand::Vgpr {
        first: vaddr,
        dwords: if nsa_words > 0 { 1 } else { naddr },
    };
    inst.src[1] = Operand::Sgpr {
        first: srsrc,
        dwords: 8,
    };
    if info.sampler() {
        inst.src[2] = Operand::Sgpr {
            first: ssamp * 4,
            dwords: 4,
        };
    }
    match info.kind {
        MimgKind::Store => inst.src[3] = data,
        MimgKind::Atomic => {
            inst.src[3] = data;
            if glc {
                inst.dst[0] = data;
            }
        }
        _ => inst.dst[0] = data,
    }
    use super::inst::inst_flags;
    inst.flags = flag(glc, inst_flags::GLC)
        | flag(w0 >> 25 & 1 != 0, inst_flags::SLC)
        | flag(w0 >> 7 & 1 != 0, inst_flags::DLC);
    Ok(inst)
}

/// Writes a register range as LLVM does: `v4`, `v[4:7]`, `s[0:7]`, `ttmp[4:7]`.
fn reg(f: &mut fmt::Formatter<'_>, vector: bool, first: u8, dwords: u8) -> fmt::Result {
    let (prefix, first) = if vector {
        ("v", u16::from(first))
    } else if (108..124).contains(&first) {
        ("ttmp", u16::from(first) - 108)
    } else {
        ("s", u16::from(first))
    };
    if dwords <= 1 {
        write!(f, "{prefix}{first}")
    } else {
        write!(f, "{prefix}[{first}:{}]", first + u16::from(dwords) - 1)
    }
}

/// The text of a MIMG instruction, as llvm-objdump-19 prints it.
pub(crate) fn fmt(inst: &Inst, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let (Some(info), Extra::Mimg(m)) = (MimgInfo::of(inst.opcode), inst.extra) else {
        return f.write_str("image_?");
    };
    f.write_str(info.name)?;
    // Sampling NSA forms print with a second space (LLVM's operand string starts with one).
    f.write_str(if m.has(mimg_bits::NSA) && info.sampler() {
        "  "
    } else {
        " "
    })?;
    let data = match info.kind {
        MimgKind::Store | MimgKind::Atomic => inst.src[3],
        _ => inst.dst[0],
    };
    if let Operand::Vgpr { first, dwords } = data {
        reg(f, true, first, dwords)?;
    }
    f.write_str(", ")?;
    if let Operand::Vgpr { first, dwords } = inst.src[0] {
        if m.has(mimg_bits::NSA) {
            f.write_char('[')?;
            for k in 0..m.naddr {
                if k > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "v{}", m.address_reg(first, k))?;
            }
            f.write_char(']')?;
        } else {
            reg(f, true, first, dwords)?;
        }
    }
    if let Operand::Sgpr { first, .. } = inst.src[1] {
        f.write_str(", ")?;
        reg(f, false, first, 8)?;
    }
    if let Operand::Sgpr { first, .. } = inst.src[2] {
        f.write_str(", ")?;
        reg(f, false, first, 4)?;
    }
    if m.dmask != 0 {
        write!(f, " dmask:0x{:x}", m.dmask)?;
    }
    write!(f, " dim:{}", DIM_NAMES[usize::from(m.dim & 7)])?;
    let words: [(bool, &str); 11] = [
        (m.has(mimg_bits::UNORM), " unorm"),
        (inst.glc(), " glc"),
        (inst.slc(), " slc"),
        (inst.dlc(), " dlc"),
        (m.has(mimg_bits::R128), " r128"),
        (m.has(mimg_bits::A16), " a16"),
        (m.has(mimg_bits::TFE), " tfe"),
        (m.has(mimg_bits::LWE), " lwe"),
        (m.has(mimg_bits::D16), " d16"),
        (false, ""),
        (false, ""),
    ];
    for (on, text) in words {
        if on {
            f.write_str(text)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opcode_parses() {
        for (o, n) in OPCODES {
            let i = MimgInfo::of(u16::from(*o)).unwrap_or_else(|| panic!("{n}"));
            assert_eq!(i.name, *n);
        }
        assert!(MimgInfo::of(0x06).is_none());
        assert!(MimgInfo::of(0xff).is_none());
    }

    #[test]
    fn address_sizes() {
        let sample_d = MimgInfo::of(0x22).unwrap();
        assert_eq!(sample_d.address_dwords(1, false), 6);
        assert_eq!(sample_d.address_dwords(2, false), 9);
        let sample_l = MimgInfo::of(0x24).unwrap();
        assert!(!sample_l.address_size_defined(5));
        assert!(sample_d.address_size_defined(8));
        assert_eq!(MimgInfo::of(0x0e).unwrap().address_dwords(5, false), 1);
    }
}
