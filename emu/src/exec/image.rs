//! Image memory (MIMG) and the formatted buffer loads and stores: image resource (T#) and
//! sampler (S#) descriptors, texel formats, addressing, point/bilinear/trilinear filtering
//! with 8-bit sub-texel weights, depth compare, gather4, resinfo and image atomics. Every
//! texel access goes through the embedder's [`crate::GuestMemory::translate`] (or a span it
//! approved), so a descriptor pointing outside an allocation is a memory fault, never a host
//! read. Generic over the wave width and free of any one family's encodings (lowering packs
//! the decoded fields into the uop), so CDNA families can reuse it. Not decoding
//! ([`crate::isa::mimg`]) or other buffer instructions ([`super::vmem`]).
//!
//! Layout of linear images (the only tiling executed; `SW_MODE` must be 0): level 0 at the
//! descriptor's base, rows of `pitch` texels (1D and 2D: the descriptor's pitch field; other
//! types: the width), slices of `rows` rows; level `k > 0` has `max(width >> k, 1)` texels per
//! row, `max(height >> k, 1)` rows, `max(depth >> k, 1)` slices (3D) or every layer (arrays)
//! and starts at the next multiple of 256 bytes after level `k - 1`. This is rocload's array
//! layout (`src/runtime/array.rs`), not addrlib's, which a GPU's linear mip chains follow.

// Lanes, channels and axes index several arrays at once; ranges say so more plainly.
#![allow(clippy::needless_range_loop)]

use std::ptr::NonNull;
use std::sync::OnceLock;

use super::bcn::{self, Bc};
use super::atomic::{self, AtomicOp as At};
use super::{ctl, guest_fault, Ctl, Env, Fault, Handler, Opnd, Uop};
use crate::isa::mimg::{mimg_bits, MimgFields, MimgInfo, MimgKind};
use crate::isa::{Inst, Op};
use crate::memory::{self, Access};
use crate::wave::Wave;

/// Sub-texel precision of filter weights (bits of fraction).
pub const SUBTEXEL_BITS: u32 = 8;

// ---------------------------------------------------------------------------------------
// Lowering: the decoded fields packed into the uop's spare fields.

/// Packs the MIMG fields of `inst` into `u` (`d[0]` data, `s` = vaddr, srsrc, ssamp; `imm`
/// the opcode, dmask, dim, address count and bits; the NSA registers in `mem.offset`,
/// `mem.offset1` and the modifier bytes). Returns false for forms the engine does not
/// execute (default-size forms LLVM prints for impossible fields, `r128`, packed and MSAA
/// loads).
pub fn lower(inst: &Inst, m: &MimgFields, u: &mut Uop) -> bool {
    let Some(info) = MimgInfo::of(inst.opcode) else {
        return false;
    };
    if m.has(mimg_bits::DEFAULT_SIZES) || m.has(mimg_bits::R128) || info.pck {
        return false;
    }
    if matches!(info.kind, MimgKind::MsaaLoad) {
        return false;
    }
    let data = match info.kind {
        MimgKind::Store | MimgKind::Atomic => inst.src[3],
        _ => inst.dst[0],
    };
    u.d[0] = match data {
        crate::isa::Operand::Vgpr { first, .. } => Opnd::V(u16::from(first)),
        _ => return false,
    };
    u.imm = i64::from(inst.opcode & 0xff)
        | i64::from(m.dmask & 15) << 8
        | i64::from(m.dim & 7) << 12
        | i64::from(m.naddr & 15) << 15
        | i64::from(m.bits) << 19;
    let n = m.nsa;
    u.mem.offset = i32::from_le_bytes([n[0], n[1], n[2], n[3]]);
    u.mem.offset1 = u16::from_le_bytes([n[4], n[5]]);
    u.m.neg = n[6];
    u.m.abs = n[7];
    u.m.neg_hi = n[8];
    u.m.op_sel = n[9];
    u.m.op_sel_hi = n[10];
    true
}

/// The fields [`lower`] packed.
#[derive(Clone, Copy)]
struct Fields {
    info: MimgInfo,
    dmask: u8,
    dim: u8,
    bits: u8,
    vaddr: u8,
    nsa: [u8; 11],
}

fn infos() -> &'static [Option<MimgInfo>; 256] {
    static INFOS: OnceLock<[Option<MimgInfo>; 256]> = OnceLock::new();
    INFOS.get_or_init(|| std::array::from_fn(|o| MimgInfo::of(o as u16)))
}

impl Fields {
    fn unpack(u: &Uop) -> Option<Fields> {
        let imm = u.imm as u64;
        let info = infos()[(imm & 0xff) as usize]?;
        let o = u.mem.offset.to_le_bytes();
        let o1 = u.mem.offset1.to_le_bytes();
        let Opnd::V(vaddr) = u.s[0] else { return None };
        Some(Fields {
            info,
            dmask: (imm >> 8 & 15) as u8,
            dim: (imm >> 12 & 7) as u8,
            bits: (imm >> 19 & 0xff) as u8,
            vaddr: vaddr as u8,
            nsa: [
                o[0], o[1], o[2], o[3], o1[0], o1[1], u.m.neg, u.m.abs, u.m.neg_hi, u.m.op_sel,
                u.m.op_sel_hi,
            ],
        })
    }

    fn has(&self, b: u8) -> bool {
        self.bits & b != 0
    }

    /// The VGPR of address dword `k`.
    fn address_reg(&self, k: u8) -> usize {
        if k == 0 {
            usize::from(self.vaddr)
        } else if self.has(mimg_bits::NSA) {
            usize::from(self.nsa[usize::from(k - 1).min(10)])
        } else {
            usize::from(self.vaddr) + usize::from(k)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Formats.

/// How a channel's bits are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Num {
    /// Unsigned normalised (0..=1).
    Unorm,
    /// Signed normalised (-1..=1).
    Snorm,
    /// Unsigned integer.
    Uint,
    /// Signed integer.
    Sint,
    /// IEEE float (16 or 32 bits).
    Float,
    /// 8-bit sRGB: unsigned normalised, red, green and blue converted to linear on read
    /// (alpha, the fourth channel, is linear), before filtering.
    Srgb,
}

/// A texel format: channel width, channel count, number format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// Bits per channel (8, 16 or 32).
    pub bits: u32,
    /// Channels (1 to 4).
    pub channels: u32,
    /// Number format.
    pub num: Num,
    /// Block-compressed: texels come in 4x4 blocks of this format (then `bits` and `channels`
    /// are those of the decoded texels).
    pub block: Option<Bc>,
}

impl Format {
    /// Bytes per texel, or per 4x4 block of a block-compressed format.
    pub fn bytes(&self) -> u32 {
        match self.block {
            Some(b) => b.block_bytes(),
            None => self.bits / 8 * self.channels,
        }
    }

    /// Whether the format reads as floats (float, unorm, snorm).
    pub fn is_float(&self) -> bool {
        matches!(self.num, Num::Unorm | Num::Snorm | Num::Float | Num::Srgb)
    }

    /// The format with gfx10 combined format code `code`, if executed.
    pub fn from_code(code: u32) -> Option<Format> {
        FORMATS
            .iter()
            .find(|(c, _)| u32::from(*c) == code)
            .map(|(_, f)| *f)
    }
}

const fn fmt(bits: u32, channels: u32, num: Num) -> Format {
    Format {
        bits,
        channels,
        num,
        block: None,
    }
}

const fn bc(block: Bc, num: Num) -> Format {
    Format {
        bits: 8,
        channels: 4,
        num,
        block: Some(block),
    }
}

/// gfx10 combined format codes (ROCr's `resource_nv.h` names them `CFMT_*`).
const FORMATS: &[(u16, Format)] = &[
    (1, fmt(8, 1, Num::Unorm)),
    (2, fmt(8, 1, Num::Snorm)),
    (5, fmt(8, 1, Num::Uint)),
    (6, fmt(8, 1, Num::Sint)),
    (7, fmt(16, 1, Num::Unorm)),
    (8, fmt(16, 1, Num::Snorm)),
    (11, fmt(16, 1, Num::Uint)),
    (12, fmt(16, 1, Num::Sint)),
    (13, fmt(16, 1, Num::Float)),
    (14, fmt(8, 2, Num::Unorm)),
    (15, fmt(8, 2, Num::Snorm)),
    (18, fmt(8, 2, Num::Uint)),
    (19, fmt(8, 2, Num::Sint)),
    (20, fmt(32, 1, Num::Uint)),
    (21, fmt(32, 1, Num::Sint)),
    (22, fmt(32, 1, Num::Float)),
    (23, fmt(16, 2, Num::Unorm)),
    (24, fmt(16, 2, Num::Snorm)),
    (27, fmt(16, 2, Num::Uint)),
    (28, fmt(16, 2, Num::Sint)),
    (29, fmt(16, 2, Num::Float)),
    (56, fmt(8, 4, Num::Unorm)),
    (57, fmt(8, 4, Num::Snorm)),
    (60, fmt(8, 4, Num::Uint)),
    (61, fmt(8, 4, Num::Sint)),
    (62, fmt(32, 2, Num::Uint)),
    (63, fmt(32, 2, Num::Sint)),
    (64, fmt(32, 2, Num::Float)),
    (65, fmt(16, 4, Num::Unorm)),
    (66, fmt(16, 4, Num::Snorm)),
    (69, fmt(16, 4, Num::Uint)),
    (70, fmt(16, 4, Num::Sint)),
    (71, fmt(16, 4, Num::Float)),
    (72, fmt(32, 3, Num::Uint)),
    (73, fmt(32, 3, Num::Sint)),
    (74, fmt(32, 3, Num::Float)),
    (75, fmt(32, 4, Num::Uint)),
    (76, fmt(32, 4, Num::Sint)),
    (77, fmt(32, 4, Num::Float)),
    // Image-only formats (Mesa's AMD register database, gfx10-rsrc.json `GFX10_FORMAT`; ROCr's
    // `resource_nv.h` `CFMT_*_SRGB`).
    (128, fmt(8, 1, Num::Srgb)),
    (129, fmt(8, 2, Num::Srgb)),
    (130, fmt(8, 4, Num::Srgb)),
    (169, bc(Bc::Bc1, Num::Unorm)),
    (170, bc(Bc::Bc1, Num::Srgb)),
    (171, bc(Bc::Bc2, Num::Unorm)),
    (172, bc(Bc::Bc2, Num::Srgb)),
    (173, bc(Bc::Bc3, Num::Unorm)),
    (174, bc(Bc::Bc3, Num::Srgb)),
    (175, bc(Bc::Bc4, Num::Unorm)),
    (176, bc(Bc::Bc4Signed, Num::Snorm)),
    (177, bc(Bc::Bc5, Num::Unorm)),
    (178, bc(Bc::Bc5Signed, Num::Snorm)),
    // BC6H decodes to half floats (read as f32), BC7 to 8-bit unorm or sRGB.
    (179, Format { bits: 16, ..bc(Bc::Bc6h, Num::Float) }),
    (180, Format { bits: 16, ..bc(Bc::Bc6hSigned, Num::Float) }),
    (181, bc(Bc::Bc7, Num::Unorm)),
    (182, bc(Bc::Bc7, Num::Srgb)),
];

/// An sRGB-encoded value in 0..=1 as linear light (the sRGB transfer function, IEC 61966-2-1),
/// computed in double precision and rounded once.
pub fn srgb_to_linear(c: f32) -> f32 {
    let c = f64::from(c);
    (if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }) as f32
}

/// Linear light in 0..=1 as an sRGB-encoded value (what an image store into an sRGB format
/// writes before rounding to 8 bits).
pub fn linear_to_srgb(l: f32) -> f32 {
    let l = f64::from(l);
    (if l <= 0.003_130_8 {
        l * 12.92
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    }) as f32
}

/// One channel of a texel as the shader sees it (a float's or an integer's bits).
fn decode_channel(f: Format, raw: u32) -> u32 {
    match (f.num, f.bits) {
        (Num::Unorm | Num::Srgb, 8) => (raw as f32 / 255.0).to_bits(),
        (Num::Unorm, 16) => (raw as f32 / 65535.0).to_bits(),
        (Num::Snorm, 8) => (f32::from(raw as u8 as i8) / 127.0).max(-1.0).to_bits(),
        (Num::Snorm, 16) => (f32::from(raw as u16 as i16) / 32767.0).max(-1.0).to_bits(),
        (Num::Sint, 8) => raw as u8 as i8 as i32 as u32,
        (Num::Sint, 16) => raw as u16 as i16 as i32 as u32,
        (Num::Float, 16) => half::f16::from_bits(raw as u16).to_f32().to_bits(),
        _ => raw,
    }
}

/// A shader value converted to one channel of `f` (floats to norms with
/// round-to-nearest-even after clamping; integers keep their low bits).
fn encode_channel(f: Format, v: u32) -> u32 {
    let x = f32::from_bits(v);
    match (f.num, f.bits) {
        (Num::Unorm | Num::Srgb, b) => {
            let max = ((1u64 << b) - 1) as f32;
            let c = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
            (c * max).round_ties_even() as u32
        }
        (Num::Snorm, b) => {
            let max = ((1u64 << (b - 1)) - 1) as f32;
            let c = if x.is_nan() { 0.0 } else { x.clamp(-1.0, 1.0) };
            ((c * max).round_ties_even() as i32 as u32) & ((1u64 << b) - 1) as u32
        }
        (Num::Float, 16) => u32::from(half::f16::from_f32(x).to_bits()),
        (_, 32) => v,
        (_, b) => v & ((1u32 << b) - 1),
    }
}

/// Reads texel bytes into the shader's four channels (missing channels 0, alpha 1).
fn unpack_texel(f: Format, bytes: &[u8]) -> [u32; 4] {
    let one = if f.is_float() { 1.0f32.to_bits() } else { 1 };
    let mut out = [0, 0, 0, one];
    let w = (f.bits / 8) as usize;
    for (c, o) in out.iter_mut().enumerate().take(f.channels as usize) {
        let mut raw = 0u32;
        for k in 0..w {
            raw |= u32::from(bytes.get(c * w + k).copied().unwrap_or(0)) << (8 * k);
        }
        *o = decode_channel(f, raw);
        if f.num == Num::Srgb && c < 3 {
            *o = srgb_to_linear(f32::from_bits(*o)).to_bits();
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Descriptors.

/// Image types (the T#'s `TYPE`).
const IMG_1D: u32 = 8;
const IMG_2D: u32 = 9;
const IMG_3D: u32 = 10;
const IMG_CUBE: u32 = 11;
const IMG_1D_ARRAY: u32 = 12;
const IMG_2D_ARRAY: u32 = 13;

/// An image resource descriptor (T#), gfx10 layout.
#[derive(Clone, Copy, Debug)]
pub struct Image {
    /// Address of level 0.
    pub base: u64,
    /// Texel format.
    pub format: Format,
    /// Width, height of level 0 (texels).
    pub width: u32,
    /// Height (1 for 1D types).
    pub height: u32,
    /// 3D depth, or the number of layers (arrays), or 1.
    pub depth: u32,
    /// First layer of an array view.
    pub base_array: u32,
    /// Row pitch of level 0 in texels.
    pub pitch: u32,
    /// `TYPE`.
    pub kind: u32,
    /// `DST_SEL_X..W`.
    pub dst_sel: [u8; 4],
    /// First and last mip level of the view.
    pub base_level: u32,
    /// Last mip level.
    pub last_level: u32,
}

/// Why a descriptor cannot be executed.
fn unsupported_descriptor(what: &str) -> Box<Fault> {
    tracing::debug!("image descriptor not executed: {what}");
    Box::new(Fault::Unsupported)
}

impl Image {
    /// Parses the 8 dwords of a gfx10 T#.
    pub fn parse(d: &[u32; 8]) -> Result<Image, Box<Fault>> {
        let code = d[1] >> 20 & 0x1ff;
        let format = Format::from_code(code)
            .ok_or_else(|| unsupported_descriptor("format code"))?;
        if d[3] >> 20 & 0x1f != 0 {
            return Err(unsupported_descriptor("tiled (SW_MODE != 0)"));
        }
        let kind = d[3] >> 28;
        let width = ((d[1] >> 30) | (d[2] & 0xfff) << 2) + 1;
        let height = (d[2] >> 14 & 0x3fff) + 1;
        let depth_field = d[4] & 0x1fff;
        let base_array = d[4] >> 16 & 0x1fff;
        let (height, depth, pitch) = match kind {
            IMG_1D => (1, 1, (d[4] & 0x3fff) + 1),
            IMG_2D => (height, 1, (d[4] & 0x3fff) + 1),
            IMG_3D => (height, depth_field + 1, width),
            IMG_1D_ARRAY => (1, depth_field + 1, width),
            IMG_2D_ARRAY | IMG_CUBE => (height, depth_field + 1, width),
            _ => return Err(unsupported_descriptor("image type")),
        };
        let sel = |i: u32| (d[3] >> (3 * i) & 7) as u8;
        Ok(Image {
            base: (u64::from(d[0]) | u64::from(d[1] & 0xff) << 32) << 8,
            format,
            width,
            height,
            depth,
            base_array,
            pitch: pitch.max(width),
            kind,
            dst_sel: [sel(0), sel(1), sel(2), sel(3)],
            base_level: d[3] >> 12 & 15,
            last_level: d[3] >> 16 & 15,
        })
    }

    fn is_3d(&self) -> bool {
        self.kind == IMG_3D
    }

    fn is_array(&self) -> bool {
        matches!(self.kind, IMG_1D_ARRAY | IMG_2D_ARRAY | IMG_CUBE)
    }

    /// Width, height and depth (slices or layers) of level `k`.
    pub fn level_size(&self, k: u32) -> [u32; 3] {
        let sh = |v: u32| (v >> k.min(31)).max(1);
        [
            sh(self.width),
            if matches!(self.kind, IMG_1D | IMG_1D_ARRAY) { 1 } else { sh(self.height) },
            if self.is_3d() { sh(self.depth) } else { self.depth },
        ]
    }

    /// Byte offset of level `k` from the base and its row pitch in bytes (a row of texels, or
    /// of 4x4 blocks for block-compressed formats: the pitch counts texels either way).
    fn level_offset(&self, k: u32) -> (u64, u64) {
        let bpp = u64::from(self.format.bytes());
        // Texels per stored element along x and y.
        let per = if self.format.block.is_some() { 4 } else { 1 };
        let mut offset = 0u64;
        for j in 0..k {
            let [w, h, d] = self.level_size(j);
            let pitch = if j == 0 { self.pitch } else { w };
            let size = u64::from(pitch.div_ceil(per)) * bpp * u64::from(h.div_ceil(per)) * u64::from(d);
            offset = (offset + size).div_ceil(256) * 256;
        }
        let row = if k == 0 { self.pitch } else { self.level_size(k)[0] };
        (offset, u64::from(row.div_ceil(per)) * bpp)
    }

    /// Guest address of texel (x, y, z) of level `k`; `None` outside the level.
    fn texel_address(&self, k: u32, x: i64, y: i64, z: i64) -> Option<u64> {
        let [w, h, d] = self.level_size(k);
        if x < 0 || y < 0 || z < 0 || x >= i64::from(w) || y >= i64::from(h) || z >= i64::from(d)
        {
            return None;
        }
        let (offset, row) = self.level_offset(k);
        let bpp = u64::from(self.format.bytes());
        // A block-compressed texel's address is its block's.
        let (x, y, h) = match self.format.block {
            Some(_) => (x / 4, y / 4, h.div_ceil(4)),
            None => (x, y, h),
        };
        let slice = row * u64::from(h);
        Some(
            self.base
                .wrapping_add(offset)
                .wrapping_add(z as u64 * slice + y as u64 * row + x as u64 * bpp),
        )
    }
}

/// A sampler descriptor (S#), gfx10 layout.
#[derive(Clone, Copy, Debug)]
pub struct Sampler {
    /// `CLAMP_X/Y/Z` (wrap, mirror, clamp to last texel, mirror once, half border, ...).
    pub clamp: [u32; 3],
    /// `DEPTH_COMPARE_FUNC`.
    pub compare: u32,
    /// `FORCE_UNNORMALIZED`.
    pub unnormalized: bool,
    /// Minimum and maximum LOD (unsigned 4.8 fixed point, as floats).
    pub min_lod: f32,
    /// Maximum LOD.
    pub max_lod: f32,
    /// LOD bias (signed 6.8 fixed point, as a float).
    pub lod_bias: f32,
    /// `XY_MAG_FILTER`, `XY_MIN_FILTER`, `Z_FILTER`, `MIP_FILTER`.
    pub mag: u32,
    /// Minification filter.
    pub min: u32,
    /// Z filter (0: as the XY filter).
    pub z: u32,
    /// Mip filter (0 none, 1 point, 2 linear).
    pub mip: u32,
    /// `BORDER_COLOR_TYPE` (0 transparent black, 1 opaque black, 2 opaque white, 3 the
    /// agent's table).
    pub border: u32,
    /// `BORDER_COLOR_PTR`: the table entry of type 3.
    pub border_ptr: u32,
    /// `MAX_ANISO_RATIO` as a ratio (1, 2, 4, 8 or 16).
    pub max_aniso: u32,
}

impl Sampler {
    /// Parses the 4 dwords of a gfx10 S#.
    pub fn parse(d: &[u32; 4]) -> Result<Sampler, Box<Fault>> {
        let border = d[3] >> 30;
        let bias = ((d[2] & 0x3fff) << 18) as i32 >> 18;
        Ok(Sampler {
            clamp: [d[0] & 7, d[0] >> 3 & 7, d[0] >> 6 & 7],
            compare: d[0] >> 12 & 7,
            unnormalized: d[0] >> 15 & 1 != 0,
            min_lod: (d[1] & 0xfff) as f32 / 256.0,
            max_lod: (d[1] >> 12 & 0xfff) as f32 / 256.0,
            lod_bias: bias as f32 / 256.0,
            mag: d[2] >> 20 & 3,
            min: d[2] >> 22 & 3,
            z: d[2] >> 24 & 3,
            mip: d[2] >> 26 & 3,
            border,
            border_ptr: d[3] & 0xfff,
            max_aniso: 1 << (d[0] >> 9 & 7).min(4),
        })
    }

    /// The border colour's channel values: a constant, or the agent's table entry (read
    /// through the memory checker, for lane `l`).
    fn border_color(&self, e: &Env<'_>, l: usize, f: Format) -> Result<[u32; 4], Box<Fault>> {
        if self.border != 3 {
            return Ok(self.constant_border(f));
        }
        let table = e.services.border_color_table();
        if table == 0 {
            return Err(unsupported_descriptor("border colour from a table the agent does not have"));
        }
        let mut bytes = [0u8; 16];
        read_bytes(e, l, table.wrapping_add(u64::from(self.border_ptr) * 16), &mut bytes)?;
        Ok(std::array::from_fn(|c| u32::from_le_bytes([bytes[4 * c], bytes[4 * c + 1], bytes[4 * c + 2], bytes[4 * c + 3]])))
    }

    fn constant_border(&self, f: Format) -> [u32; 4] {
        let (zero, one) = if f.is_float() {
            (0.0f32.to_bits(), 1.0f32.to_bits())
        } else {
            (0, 1)
        };
        match self.border {
            0 => [zero; 4],
            1 => [zero, zero, zero, one],
            _ => [one; 4],
        }
    }
}

/// Texel index `i` of an axis of `n` texels under address mode `mode`: `Some(index)`, or
/// `None` for the border.
pub fn address_mode(mode: u32, i: i64, n: u32) -> Option<i64> {
    let n = i64::from(n.max(1));
    match mode {
        0 => Some(i.rem_euclid(n)),
        1 => {
            let m = i.rem_euclid(2 * n);
            Some(if m >= n { 2 * n - 1 - m } else { m })
        }
        2 => Some(i.clamp(0, n - 1)),
        3 => Some((if i < 0 { -1 - i } else { i }).clamp(0, n - 1)),
        4 | 6 => (0..n).contains(&i).then_some(i),
        _ => {
            let m = if i < 0 { -1 - i } else { i };
            (0..n).contains(&m).then_some(m)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Memory.

fn guest(e: &Env<'_>, l: usize, addr: u64, len: u64, acc: Access) -> Result<NonNull<u8>, Box<Fault>> {
    if let Some(p) = e
        .spans
        .find(acc.writes(), addr, len)
        .and_then(|s| s.get(addr, len))
    {
        return Ok(p);
    }
    let p = e
        .mem
        .translate(addr, len, acc)
        .map_err(|p| guest_fault(l, addr, p))?;
    if !e.spans.none() {
        match e.mem.span(addr, acc) {
            Some(s) => e.spans.add(acc.writes(), s),
            None => e.spans.set_none(),
        }
    }
    Ok(p)
}

fn read_bytes(e: &Env<'_>, l: usize, addr: u64, out: &mut [u8]) -> Result<(), Box<Fault>> {
    let p = guest(e, l, addr, out.len() as u64, Access::Read)?;
    for (i, b) in out.iter_mut().enumerate() {
        // SAFETY: translate() (or an approved span) covers out.len() readable bytes at p.
        *b = unsafe { memory::load::<1>(p.add(i)) }[0];
    }
    Ok(())
}

fn write_bytes(e: &Env<'_>, l: usize, addr: u64, data: &[u8]) -> Result<(), Box<Fault>> {
    let p = guest(e, l, addr, data.len() as u64, Access::Write)?;
    // SAFETY: translate() (or an approved span) covers data.len() writable bytes at p.
    unsafe { memory::store(p, data) };
    Ok(())
}

/// Texel (x, y, z) of level `k` in the shader's channels; `None` outside the level.
fn fetch(e: &Env<'_>, l: usize, img: &Image, k: u32, x: i64, y: i64, z: i64) -> Result<Option<[u32; 4]>, Box<Fault>> {
    let Some(addr) = img.texel_address(k, x, y, z) else {
        return Ok(None);
    };
    let mut buf = [0u8; 16];
    let n = img.format.bytes() as usize;
    read_bytes(e, l, addr, &mut buf[..n])?;
    if let Some(b) = img.format.block {
        let mut t = bcn::decode(b, &buf[..n], x as usize, y as usize);
        if img.format.num == Num::Srgb {
            for c in &mut t[..3] {
                *c = srgb_to_linear(*c);
            }
        }
        return Ok(Some(t.map(f32::to_bits)));
    }
    Ok(Some(unpack_texel(img.format, &buf[..n])))
}

/// Applies the T#'s destination selects.
fn swizzle(img: &Image, t: [u32; 4]) -> [u32; 4] {
    let one = if img.format.is_float() { 1.0f32.to_bits() } else { 1 };
    img.dst_sel.map(|s| match s {
        0 => 0,
        1 => one,
        4..=7 => t[usize::from(s - 4)],
        _ => 0,
    })
}

// ---------------------------------------------------------------------------------------
// Execution.

type Lanes<const N: usize> = [[u32; N]; 5];

/// Writes up to four components (and the tfe/lwe dword) to the data registers.
fn write_result<const N: usize>(f: &Fields, l: usize, comps: &[u32; 4], out: &mut Lanes<N>) -> usize {
    let gather = f.info.kind == MimgKind::Gather4;
    let mut n = 0;
    let mut vals = [0u32; 4];
    for c in 0..4 {
        if gather || f.dmask >> c & 1 != 0 || (f.dmask == 0 && c == 0) {
            vals[n] = comps[c];
            n += 1;
        }
    }
    let d16 = f.has(mimg_bits::D16);
    let words = if d16 {
        for k in 0..n.div_ceil(2) {
            let lo = vals[2 * k];
            let hi = if 2 * k + 1 < n { vals[2 * k + 1] } else { 0 };
            out[k][l] = to16(lo, f) | to16(hi, f) << 16;
        }
        n.div_ceil(2)
    } else {
        for k in 0..n {
            out[k][l] = vals[k];
        }
        n
    };
    if f.has(mimg_bits::TFE) {
        out[words][l] = 0;
        words + 1
    } else {
        words
    }
}

fn to16(v: u32, f: &Fields) -> u32 {
    let _ = f;
    // d16 results: floats as f16, integers keep their low half.
    if f.info.kind == MimgKind::Atomic {
        return v & 0xffff;
    }
    u32::from(half::f16::from_f32(f32::from_bits(v)).to_bits())
}

fn lane_addr<const N: usize>(w: &Wave<N>, f: &Fields, l: usize, k: u8) -> u32 {
    w.v.get(f.address_reg(k)).map_or(0, |r| r[l])
}

/// The image instruction handler.
pub fn image<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Ctl {
    let r = run(w, u, e);
    ctl(r, e)
}

fn descriptor<const K: usize, const N: usize>(w: &Wave<N>, o: Opnd) -> Option<[u32; K]> {
    let Opnd::S(s) = o else { return None };
    let s = usize::from(s);
    let regs = w.s.get(s..s + K)?;
    let mut d = [0u32; K];
    d.copy_from_slice(regs);
    Some(d)
}

fn run<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Result<(), Box<Fault>> {
    let f = Fields::unpack(u).ok_or_else(|| Box::new(Fault::Unsupported))?;
    let t = descriptor::<8, N>(w, u.s[1]).ok_or_else(|| Box::new(Fault::Unsupported))?;
    let img = Image::parse(&t)?;
    let exec = w.exec();
    let mut out: Lanes<N> = [[0; N]; 5];
    let mut words = 0;
    let Opnd::V(vdata) = u.d[0] else {
        return Err(Box::new(Fault::Unsupported));
    };
    let vdata = usize::from(vdata);
    match f.info.kind {
        MimgKind::Resinfo => {
            for l in exec.iter() {
                let mip = lane_addr(w, &f, l, 0);
                let levels = img.last_level.saturating_sub(img.base_level) + 1;
                let k = img.base_level + mip;
                let r = if mip >= levels {
                    [0, 0, 0, levels]
                } else {
                    let [x, y, z] = img.level_size(k);
                    match img.kind {
                        IMG_1D => [x, 0, 0, levels],
                        IMG_1D_ARRAY => [x, z, 0, levels],
                        IMG_2D => [x, y, 0, levels],
                        IMG_CUBE => [x, y, z / 6, levels],
                        _ => [x, y, z, levels],
                    }
                };
                words = write_result(&f, l, &r, &mut out);
            }
        }
        MimgKind::Load | MimgKind::Store | MimgKind::Atomic => {
            for l in exec.iter() {
                let a = |k: u8| lane_addr(w, &f, l, k) as i32 as i64;
                let (x, y, z, next) = match img.kind {
                    IMG_1D => (a(0), 0, 0, 1),
                    IMG_1D_ARRAY => (a(0), 0, a(1), 2),
                    IMG_2D => (a(0), a(1), 0, 2),
                    _ => (a(0), a(1), a(2), 3),
                };
                let mip = if f.info.mip { a(next) as u32 } else { 0 };
                let k = img.base_level.saturating_add(mip);
                let z = if img.is_array() { z + i64::from(img.base_array) } else { z };
                if img.format.block.is_some() && f.info.kind != MimgKind::Load {
                    return Err(unsupported_descriptor("a store or atomic on block-compressed texels"));
                }
                let addr = if k > img.last_level { None } else { img.texel_address(k, x, y, z) };
                match f.info.kind {
                    MimgKind::Load => {
                        let v = match addr {
                            Some(_) => fetch(e, l, &img, k, x, y, z)?.map(|t| swizzle(&img, t)),
                            None => None,
                        };
                        words = write_result(&f, l, &v.unwrap_or([0; 4]), &mut out);
                    }
                    MimgKind::Store => {
                        let Some(addr) = addr else { continue };
                        let mut vals = [0u32; 4];
                        let mut n = 0usize;
                        for (c, v) in vals.iter_mut().enumerate() {
                            if f.dmask >> c & 1 != 0 {
                                let word = if f.has(mimg_bits::D16) { n / 2 } else { n };
                                let raw = w.v.get(vdata + word).map_or(0, |r| r[l]);
                                *v = if f.has(mimg_bits::D16) {
                                    let h = if n % 2 == 0 { raw & 0xffff } else { raw >> 16 };
                                    if img.format.is_float() {
                                        half::f16::from_bits(h as u16).to_f32().to_bits()
                                    } else {
                                        h
                                    }
                                } else {
                                    raw
                                };
                                n += 1;
                            }
                        }
                        let fm = img.format;
                        let wb = (fm.bits / 8) as usize;
                        let mut bytes = [0u8; 16];
                        for c in 0..fm.channels as usize {
                            // Stores into sRGB texels encode linear light (red, green, blue).
                            let v = if fm.num == Num::Srgb && c < 3 {
                                linear_to_srgb(f32::from_bits(vals[c])).to_bits()
                            } else {
                                vals[c]
                            };
                            let enc = encode_channel(fm, v).to_le_bytes();
                            bytes[c * wb..c * wb + wb].copy_from_slice(&enc[..wb]);
                        }
                        write_bytes(e, l, addr, &bytes[..fm.bytes() as usize])?;
                    }
                    _ => {
                        let op = atomic_op(f.info.name).ok_or_else(|| Box::new(Fault::Unsupported))?;
                        let wide = f.dmask == 3 && !matches!(op, At::Cmpswap | At::Fcmpswap)
                            || f.dmask == 15;
                        if img.format.bytes() != if wide { 8 } else { 4 } {
                            return Err(unsupported_descriptor("atomic on a texel that is not 32 or 64 bits"));
                        }
                        let data = |k: usize| u64::from(w.v.get(vdata + k).map_or(0, |r| r[l]));
                        let (src, cmp) = match (wide, op) {
                            (false, At::Cmpswap | At::Fcmpswap) => (data(0), data(1)),
                            (false, _) => (data(0), 0),
                            (true, At::Cmpswap | At::Fcmpswap) => (data(0) | data(1) << 32, data(2) | data(3) << 32),
                            (true, _) => (data(0) | data(1) << 32, 0),
                        };
                        let old = match addr {
                            Some(addr) => {
                                let len = if wide { 8 } else { 4 };
                                let p = guest(e, l, addr, len, Access::Atomic)?;
                                // SAFETY: translate() approved `len` bytes at p for a read-modify-write.
                                unsafe { atomic::on_guest(p, op, wide, src, cmp) }
                            }
                            None => 0,
                        };
                        out[0][l] = old as u32;
                        out[1][l] = (old >> 32) as u32;
                        words = if u.mem.glc { if wide { 2 } else { 1 } } else { 0 };
                    }
                }
            }
        }
        MimgKind::Sample | MimgKind::Gather4 | MimgKind::GetLod => {
            let sd = descriptor::<4, N>(w, u.s[2]).ok_or_else(|| Box::new(Fault::Unsupported))?;
            let s = Sampler::parse(&sd)?;
            words = sample(w, e, &f, &img, &s, &mut out)?;
        }
        MimgKind::MsaaLoad => return Err(Box::new(Fault::Unsupported)),
    }
    for (k, vals) in out.iter().enumerate().take(words) {
        if vdata + k < w.v.len() {
            w.vwrite(Opnd::V((vdata + k) as u16), exec, vals);
        }
    }
    Ok(())
}

fn atomic_op(name: &str) -> Option<At> {
    Some(match name.strip_prefix("image_atomic_")? {
        "swap" => At::Swap,
        "cmpswap" => At::Cmpswap,
        "fcmpswap" => At::Fcmpswap,
        "add" => At::Add,
        "sub" => At::Sub,
        "smin" => At::Smin,
        "umin" => At::Umin,
        "smax" => At::Smax,
        "umax" => At::Umax,
        "and" => At::And,
        "or" => At::Or,
        "xor" => At::Xor,
        "inc" => At::Inc,
        "dec" => At::Dec,
        "fmin" => At::Fmin,
        "fmax" => At::Fmax,
        _ => return None,
    })
}

/// What one lane asks of a sampling instruction.
#[derive(Clone, Copy, Default)]
struct LaneArgs {
    offset: [i32; 3],
    bias: f32,
    compare: f32,
    grads: [[f32; 3]; 2],
    coords: [f32; 4],
    lod: f32,
    clamp: f32,
}

fn f16_of(bits: u32) -> f32 {
    half::f16::from_bits(bits as u16).to_f32()
}

/// Reads a lane's sampling arguments in the order of the ISA (offset, bias, compare,
/// derivatives, coordinates, lod or clamp).
fn lane_args<const N: usize>(w: &Wave<N>, f: &Fields, l: usize) -> LaneArgs {
    let a16 = f.has(mimg_bits::A16);
    let mut k = 0u8;
    let mut next = || {
        let v = lane_addr(w, f, l, k);
        k += 1;
        v
    };
    let mut a = LaneArgs::default();
    let i = f.info;
    if i.offset {
        let o = next();
        a.offset = [0, 8, 16].map(|s| ((o >> s & 0x3f) << 26) as i32 >> 26);
    }
    if i.bias {
        a.bias = f32::from_bits(next());
    }
    if i.compare {
        a.compare = f32::from_bits(next());
    }
    let dim = usize::from(f.dim);
    let coords = [1usize, 2, 3, 3, 2, 3, 3, 4][dim];
    let gcomp = [1usize, 2, 3, 2, 1, 2, 2, 2][dim];
    if i.derivatives {
        for g in 0..2 {
            if i.g16 {
                let mut vals = [0f32; 4];
                for pair in 0..gcomp.div_ceil(2) {
                    let v = next();
                    vals[2 * pair] = f16_of(v);
                    vals[2 * pair + 1] = f16_of(v >> 16);
                }
                a.grads[g][..gcomp].copy_from_slice(&vals[..gcomp]);
            } else {
                for c in 0..gcomp {
                    a.grads[g][c] = f32::from_bits(next());
                }
            }
        }
    }
    let extra = i.lod || i.clamp;
    let mut tail = [0f32; 5];
    let n = coords + usize::from(extra);
    if a16 {
        for pair in 0..n.div_ceil(2) {
            let v = next();
            tail[2 * pair] = f16_of(v);
            if 2 * pair + 1 < 5 {
                tail[2 * pair + 1] = f16_of(v >> 16);
            }
        }
    } else {
        for t in tail.iter_mut().take(n) {
            *t = f32::from_bits(next());
        }
    }
    a.coords[..coords].copy_from_slice(&tail[..coords]);
    if i.lod {
        a.lod = tail[coords];
    }
    if i.clamp {
        a.clamp = tail[coords];
    }
    a
}

/// Splits a texel-space coordinate into the first texel and the 8-bit weight of the second.
pub fn bilinear_split(u: f32) -> (i64, f32) {
    let scale = f64::from(1u32 << SUBTEXEL_BITS);
    let fixed = ((f64::from(u) - 0.5) * scale).round_ties_even();
    let fixed = fixed.clamp(-((1u64 << 52) as f64), (1u64 << 52) as f64) as i64;
    (
        fixed >> SUBTEXEL_BITS,
        (fixed & ((1 << SUBTEXEL_BITS) - 1)) as f32 / scale as f32,
    )
}

/// The texel a point sample takes: the coordinate snapped to 1/256 texel, then floored.
pub fn point_index(u: f32) -> i64 {
    let scale = f64::from(1u32 << SUBTEXEL_BITS);
    let fixed = (f64::from(u) * scale).round_ties_even();
    (fixed.clamp(-((1u64 << 52) as f64), (1u64 << 52) as f64) as i64) >> SUBTEXEL_BITS
}

/// Quantises a mip-level weight to the same 8 bits.
pub fn quantize_weight(x: f32) -> f32 {
    let scale = (1u32 << SUBTEXEL_BITS) as f32;
    (x * scale).round_ties_even() / scale
}

/// How the texel of one level is found: the axes, the filters, the compare.
struct Site<'a> {
    img: &'a Image,
    s: &'a Sampler,
    /// The border colour's channel values.
    border: [u32; 4],
    linear_xy: bool,
    linear_z: bool,
    compare: Option<f32>,
}

impl Site<'_> {
    fn texel(&self, e: &Env<'_>, l: usize, k: u32, x: i64, y: i64, z: i64) -> Result<[u32; 4], Box<Fault>> {
        let [w, h, d] = self.img.level_size(k);
        // A cube face clamps to its edges (filtering does not reach into the next face).
        let clamp = if self.img.kind == IMG_CUBE { [2, 2] } else { [self.s.clamp[0], self.s.clamp[1]] };
        let ax = address_mode(clamp[0], x, w);
        let ay = if matches!(self.img.kind, IMG_1D | IMG_1D_ARRAY) { Some(0) } else { address_mode(clamp[1], y, h) };
        let az = if self.img.is_3d() { address_mode(self.s.clamp[2], z, d) } else { Some(z) };
        let t = match (ax, ay, az) {
            (Some(x), Some(y), Some(z)) => fetch(e, l, self.img, k, x, y, z)?.unwrap_or(self.border),
            _ => self.border,
        };
        Ok(match self.compare {
            Some(r) => {
                let v = f32::from_bits(t[0]);
                let pass = match self.s.compare {
                    0 => false,
                    1 => r < v,
                    2 => r == v,
                    3 => r <= v,
                    4 => r > v,
                    5 => r != v,
                    6 => r >= v,
                    _ => true,
                };
                let x = if pass { 1.0f32 } else { 0.0 }.to_bits();
                [x, x, x, x]
            }
            None => t,
        })
    }

    /// The filtered value at texel-space (u, v, w) of level `k` (`layer` for arrays).
    fn filter(&self, e: &Env<'_>, l: usize, k: u32, c: [f32; 3], off: [i32; 3], layer: i64) -> Result<[f32; 4], Box<Fault>> {
        let third = !matches!(self.img.kind, IMG_1D | IMG_1D_ARRAY | IMG_2D) && self.img.is_3d();
        let two = !matches!(self.img.kind, IMG_1D | IMG_1D_ARRAY);
        let split = |v: f32, o: i32, linear: bool| -> [(i64, f32); 2] {
            if linear {
                let (i, a) = bilinear_split(v);
                [(i + i64::from(o), 1.0 - a), (i + 1 + i64::from(o), a)]
            } else {
                [(point_index(v) + i64::from(o), 1.0), (0, 0.0)]
            }
        };
        let xs = split(c[0], off[0], self.linear_xy);
        let ys = if two { split(c[1], off[1], self.linear_xy) } else { [(0, 1.0), (0, 0.0)] };
        let zs = if third { split(c[2], off[2], self.linear_z) } else { [(layer, 1.0), (0, 0.0)] };
        let mut acc = [0f64; 4];
        for (z, wz) in zs {
            if wz == 0.0 {
                continue;
            }
            for (y, wy) in ys {
                if wy == 0.0 {
                    continue;
                }
                for (x, wx) in xs {
                    if wx == 0.0 {
                        continue;
                    }
                    let t = self.texel(e, l, k, x, y, z)?;
                    let wgt = f64::from(wx) * f64::from(wy) * f64::from(wz);
                    for ch in 0..4 {
                        acc[ch] += f64::from(f32::from_bits(t[ch])) * wgt;
                    }
                }
            }
        }
        Ok(acc.map(|v| v as f32))
    }
}

fn sample<const N: usize>(w: &Wave<N>, e: &Env<'_>, f: &Fields, img: &Image, s: &Sampler, out: &mut Lanes<N>) -> Result<usize, Box<Fault>> {
    let exec = w.exec();
    let mut args = [LaneArgs::default(); N];
    for l in 0..N {
        if exec.has(l) || f.info.kind != MimgKind::GetLod {
            args[l] = lane_args(w, f, l);
        }
    }
    let unnorm = f.has(mimg_bits::UNORM) || s.unnormalized;
    let kind = img.kind;
    let axes = match kind {
        IMG_1D | IMG_1D_ARRAY => 1,
        IMG_2D | IMG_2D_ARRAY | IMG_CUBE => 2,
        _ => 3,
    };
    let size0 = img.level_size(img.base_level);
    // Read once per instruction, attributed to the first active lane.
    let border = match exec.iter().next() {
        Some(l) => s.border_color(e, l, img.format)?,
        None => s.constant_border(img.format),
    };
    let mut words = 0;
    for l in exec.iter() {
        let a = args[l];
        let scale = |c: usize, v: f32| if unnorm { v } else { v * size0[c] as f32 };
        // Level of detail.
        // The derivatives of the coordinates (as given) when the LOD comes from them.
        let mut footprint: Option<([f32; 3], [f32; 3])> = None;
        let lod_raw = if f.info.lz {
            0.0
        } else if f.info.lod {
            a.lod
        } else {
            let (dx, dy) = if f.info.derivatives {
                (a.grads[0], a.grads[1])
            } else {
                // Implicit: differences across the lane's quad.
                let q = l & !3;
                let c = |m: usize, ax: usize| args[(q + m).min(N - 1)].coords[ax];
                let mut dx = [0f32; 3];
                let mut dy = [0f32; 3];
                for ax in 0..axes {
                    dx[ax] = c(1, ax) - c(0, ax);
                    dy[ax] = c(2, ax) - c(0, ax);
                }
                (dx, dy)
            };
            let len = |d: [f32; 3]| {
                let mut sum = 0f32;
                for ax in 0..axes {
                    let v = scale(ax, d[ax]);
                    sum += v * v;
                }
                sum.sqrt()
            };
            footprint = Some((dx, dy));
            len(dx).max(len(dy)).log2() + if f.info.bias { a.bias } else { 0.0 }
        };
        let mut lod = lod_raw + s.lod_bias;
        if f.info.clamp {
            lod = lod.max(a.clamp);
        }
        lod = lod.clamp(s.min_lod, s.max_lod);
        if lod.is_nan() {
            lod = s.min_lod;
        }
        if f.info.kind == MimgKind::GetLod {
            let r = [lod.to_bits(), lod_raw.to_bits(), 0, 0];
            words = write_result(f, l, &r, out);
            continue;
        }
        let magnify = lod <= 0.0;
        let xy = if magnify { s.mag } else { s.min };
        let linear_xy = xy & 1 == 1;
        let linear_z = match s.z {
            0 => linear_xy,
            z => z == 2,
        };
        // Anisotropic minification (XY_MIN_FILTER 2 or 3): the reference of OpenGL's
        // EXT_texture_filter_anisotropic, as AMD does not document its footprint. The ratio of
        // the longer to the shorter texel-space derivative, rounded up and capped by the S#'s
        // ratio, is the number of samples, spread evenly along the longer derivative; the LOD
        // is that of the longer one divided by the number.
        let aniso = match footprint {
            Some((dx, dy)) if !magnify && xy >= 2 && s.max_aniso > 1 && axes == 2 && kind != IMG_CUBE => {
                let texels = |d: [f32; 3]| {
                    let (u, v) = (scale(0, d[0]), scale(1, d[1]));
                    (u * u + v * v).sqrt()
                };
                let (px, py) = (texels(dx), texels(dy));
                let (longer, shorter) = (px.max(py), px.min(py));
                let cap = s.max_aniso as f32;
                let n = if shorter > 0.0 { (longer / shorter).ceil().min(cap) } else { cap };
                (n > 1.0 && n.is_finite()).then_some((n as u32, if px >= py { dx } else { dy }))
            }
            _ => None,
        };
        if let Some((n, _)) = aniso {
            lod = (lod - (n as f32).log2()).clamp(s.min_lod, s.max_lod);
        }
        let levels = img.last_level.saturating_sub(img.base_level);
        let lodc = lod.max(0.0);
        let (k0, k1, wk) = match s.mip {
            0 => (0, 0, 0.0),
            1 => ((lodc + 0.5).floor() as u32, 0, 0.0),
            _ => {
                let fl = lodc.floor();
                (fl as u32, fl as u32 + 1, quantize_weight(lodc - fl))
            }
        };
        let k0 = k0.min(levels) + img.base_level;
        let k1 = k1.min(levels) + img.base_level;
        let last = i64::from(img.depth.saturating_sub(1));
        let base = i64::from(img.base_array);
        let layer = match kind {
            IMG_1D_ARRAY => Some(a.coords[1]),
            IMG_2D_ARRAY => Some(a.coords[2]),
            _ => None,
        }
        .map_or(0, |v| (v.round_ties_even() as i64).clamp(0, (last - base).max(0)) + base);
        // A cube's third coordinate is the face plus 8 x the cube's layer (what the device
        // library's cube arithmetic passes); faces are slices, 6 to a layer.
        let layer = if kind == IMG_CUBE {
            let f = (a.coords[2].round_ties_even() as i64).max(0);
            let slice = f / 8 * 6 + (f % 8).min(5);
            slice.clamp(0, (last - base).max(0)) + base
        } else {
            layer
        };
        let site = Site {
            img,
            s,
            border,
            linear_xy,
            linear_z,
            compare: f.info.compare.then_some(a.compare),
        };
        let at_level_of = |coords: [f32; 4], k: u32| -> [f32; 3] {
            let sz = img.level_size(k);
            let mut c = [0f32; 3];
            for ax in 0..axes {
                c[ax] = if unnorm {
                    // Unnormalised coordinates address level 0's texels.
                    coords[ax] * (sz[ax] as f32 / size0[ax] as f32)
                } else {
                    coords[ax] * sz[ax] as f32
                };
            }
            c
        };
        let at_level = |k: u32| at_level_of(a.coords, k);
        let result: [u32; 4] = if f.info.kind == MimgKind::Gather4 {
            let comp = (0..4).find(|c| f.dmask >> c & 1 != 0).unwrap_or(0);
            let c = at_level(k0);
            let (i, _) = bilinear_split(c[0]);
            let (j, _) = if axes > 1 { bilinear_split(c[1]) } else { (0, 0.0) };
            let (i, j) = (i + i64::from(a.offset[0]), j + i64::from(a.offset[1]));
            let pick = |x: i64, y: i64| -> Result<u32, Box<Fault>> {
                let t = site.texel(e, l, k0, x, y, layer)?;
                Ok(swizzle(img, t)[comp])
            };
            [pick(i, j + 1)?, pick(i + 1, j + 1)?, pick(i + 1, j)?, pick(i, j)?]
        } else {
            // One (isotropic) sample at `coords`, blended between levels.
            let one = |coords: [f32; 4]| -> Result<[f32; 4], Box<Fault>> {
                let v0 = site.filter(e, l, k0, at_level_of(coords, k0), a.offset, layer)?;
                Ok(if s.mip == 2 && wk > 0.0 && k1 != k0 {
                    let v1 = site.filter(e, l, k1, at_level_of(coords, k1), a.offset, layer)?;
                    let mut r = [0f32; 4];
                    for ch in 0..4 {
                        r[ch] = (f64::from(v0[ch]) * f64::from(1.0 - wk) + f64::from(v1[ch]) * f64::from(wk)) as f32;
                    }
                    r
                } else {
                    v0
                })
            };
            let v = match aniso {
                None => one(a.coords)?,
                Some((n, major)) => {
                    // Sample i of n at coords + (i / (n + 1) - 1/2) x the longer derivative; the
                    // mean is taken in f64 and rounded once.
                    let mut acc = [0f64; 4];
                    for i in 1..=n {
                        let t = i as f32 / (n + 1) as f32 - 0.5;
                        let mut c = a.coords;
                        for ax in 0..axes {
                            c[ax] += t * major[ax];
                        }
                        let v = one(c)?;
                        for ch in 0..4 {
                            acc[ch] += f64::from(v[ch]);
                        }
                    }
                    acc.map(|x| (x / f64::from(n)) as f32)
                }
            };
            let bits = v.map(f32::to_bits);
            if img.format.is_float() || f.info.compare {
                swizzle(img, bits)
            } else {
                // Integer formats are never filtered: the point sample's bits.
                let c = at_level(k0);
                let x = point_index(c[0]) + i64::from(a.offset[0]);
                let y = if axes > 1 { point_index(c[1]) + i64::from(a.offset[1]) } else { 0 };
                let z = if axes > 2 { point_index(c[2]) + i64::from(a.offset[2]) } else { layer };
                swizzle(img, site.texel(e, l, k0, x, y, z)?)
            }
        };
        words = write_result(f, l, &result, out);
    }
    Ok(words)
}

// ---------------------------------------------------------------------------------------
// Formatted buffer loads and stores (`buffer_load_format_*`, `buffer_store_format_*`): the
// V#'s format and destination selects applied to structured-buffer elements (1D linear
// textures are read this way).

/// A formatted buffer access of `n` components.
fn buffer_format<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, n: usize, store: bool, d16: bool) -> Result<(), Box<Fault>> {
    let d = descriptor::<4, N>(w, u.s[2]).ok_or_else(|| Box::new(Fault::Unsupported))?;
    let base = u64::from(d[0]) | u64::from(d[1] & 0xffff) << 32;
    let stride = u64::from(d[1] >> 16 & 0x3fff);
    let records = u64::from(d[2]);
    let format = Format::from_code(d[3] >> 12 & 0x7f).ok_or_else(|| unsupported_descriptor("buffer format code"))?;
    if d[1] >> 31 != 0 || d[3] >> 23 & 1 != 0 {
        return Err(unsupported_descriptor("swizzled or ADD_TID buffer"));
    }
    let sel = [0, 3, 6, 9].map(|s| (d[3] >> s & 7) as u8);
    let exec = w.exec();
    let soffset = u64::from(w.sread(u.mem.saddr));
    let mut out = [[0u32; N]; 4];
    for l in exec.iter() {
        let v = |k: u16| match u.s[0] {
            Opnd::V(r) => w.v.get(usize::from(r + k)).map_or(0, |x| x[l]),
            _ => 0,
        };
        let index = if u.mem.idxen { u64::from(v(0)) } else { 0 };
        let voff = if u.mem.offen { u64::from(v(u16::from(u.mem.idxen))) } else { 0 };
        let offset = voff + (u.mem.offset as u32 as u64 & 0xfff);
        // Structured buffers check the index, raw ones the offset.
        let in_range = if stride != 0 { index < records } else { offset < records };
        let addr = base.wrapping_add(soffset).wrapping_add(index * stride).wrapping_add(offset);
        let bytes = format.bytes() as usize;
        let Opnd::V(data) = (if store { u.s[1] } else { u.d[0] }) else {
            return Err(Box::new(Fault::Unsupported));
        };
        let data = usize::from(data);
        if store {
            if !in_range {
                continue;
            }
            let mut buf = [0u8; 16];
            let wb = (format.bits / 8) as usize;
            for c in 0..(format.channels as usize).min(n) {
                let raw = if d16 {
                    let r = w.v.get(data + c / 2).map_or(0, |x| x[l]);
                    let h = if c % 2 == 0 { r & 0xffff } else { r >> 16 };
                    if format.is_float() { f16_of(h).to_bits() } else { h }
                } else {
                    w.v.get(data + c).map_or(0, |x| x[l])
                };
                let enc = encode_channel(format, raw).to_le_bytes();
                buf[c * wb..c * wb + wb].copy_from_slice(&enc[..wb]);
            }
            write_bytes(e, l, addr, &buf[..bytes])?;
        } else {
            let t = if in_range {
                let mut buf = [0u8; 16];
                read_bytes(e, l, addr, &mut buf[..bytes])?;
                let t = unpack_texel(format, &buf[..bytes]);
                let one = if format.is_float() { 1.0f32.to_bits() } else { 1 };
                sel.map(|s| match s {
                    1 => one,
                    4..=7 => t[usize::from(s - 4)],
                    _ => 0,
                })
            } else {
                [0; 4]
            };
            for c in 0..n {
                if d16 {
                    let h = if format.is_float() {
                        u32::from(half::f16::from_f32(f32::from_bits(t[c])).to_bits())
                    } else {
                        t[c] & 0xffff
                    };
                    out[c / 2][l] |= h << (16 * (c % 2));
                } else {
                    out[c][l] = t[c];
                }
            }
        }
    }
    if !store {
        if let Opnd::V(data) = u.d[0] {
            let words = if d16 { n.div_ceil(2) } else { n };
            for (k, vals) in out.iter().enumerate().take(words) {
                w.vwrite(Opnd::V(data + k as u16), exec, vals);
            }
        }
    }
    Ok(())
}

macro_rules! formatted {
    ($( $name:ident => $op:ident, $n:expr, $store:expr, $d16:expr ;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`.")]
            pub fn $name<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Ctl {
                let r = buffer_format(w, u, e, $n, $store, $d16);
                ctl(r, e)
            }
        )*
        impl<const N: usize> Handlers<N> {
            /// Handlers by operation.
            pub const TABLE: &'static [(Op, Handler<N>)] = &[
                (Op::Mimg, image::<N> as Handler<N>),
                $((Op::$op, $name::<N> as Handler<N>)),*
            ];
        }
    };
}

/// This module's handlers for `N`-lane waves.
pub struct Handlers<const N: usize>;

formatted! {
    buffer_load_format_x => BufferLoadFormatX, 1, false, false;
    buffer_load_format_xy => BufferLoadFormatXy, 2, false, false;
    buffer_load_format_xyz => BufferLoadFormatXyz, 3, false, false;
    buffer_load_format_xyzw => BufferLoadFormatXyzw, 4, false, false;
    buffer_load_format_d16_x => BufferLoadFormatD16X, 1, false, true;
    buffer_load_format_d16_xy => BufferLoadFormatD16Xy, 2, false, true;
    buffer_load_format_d16_xyz => BufferLoadFormatD16Xyz, 3, false, true;
    buffer_load_format_d16_xyzw => BufferLoadFormatD16Xyzw, 4, false, true;
    buffer_store_format_x => BufferStoreFormatX, 1, true, false;
    buffer_store_format_xy => BufferStoreFormatXy, 2, true, false;
    buffer_store_format_xyz => BufferStoreFormatXyz, 3, true, false;
    buffer_store_format_xyzw => BufferStoreFormatXyzw, 4, true, false;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_modes() {
        assert_eq!(address_mode(0, -1, 4), Some(3));
        assert_eq!(address_mode(0, 9, 4), Some(1));
        assert_eq!(address_mode(1, 4, 4), Some(3));
        assert_eq!(address_mode(1, -1, 4), Some(0));
        assert_eq!(address_mode(2, -5, 4), Some(0));
        assert_eq!(address_mode(6, 4, 4), None);
        assert_eq!(address_mode(6, 3, 4), Some(3));
    }

    #[test]
    fn bilinear_weights_have_eight_bits() {
        assert_eq!(bilinear_split(1.0), (0, 0.5));
        assert_eq!(bilinear_split(0.5), (0, 0.0));
        // 0.501953125 is half a step above 0.5 + 1/256: rounds to even (0/256... 1/256).
        let (i, a) = bilinear_split(0.5 + 1.0 / 512.0);
        assert_eq!((i, a), (0, 0.0));
        let (i, a) = bilinear_split(0.25);
        assert_eq!((i, a), (-1, 0.75));
    }

    #[test]
    fn formats_round_trip() {
        let f = Format::from_code(56).unwrap();
        assert_eq!(f, fmt(8, 4, Num::Unorm));
        assert_eq!(f32::from_bits(decode_channel(f, 255)), 1.0);
        assert_eq!(encode_channel(f, 0.5f32.to_bits()), 128);
        let s = fmt(8, 1, Num::Snorm);
        assert_eq!(f32::from_bits(decode_channel(s, 0x80)), -1.0);
        assert_eq!(encode_channel(s, (-1.0f32).to_bits()), 0x81);
    }

    #[test]
    fn srgb_texels_read_as_linear_light_and_stores_invert_it() {
        let f = Format::from_code(130).unwrap();
        assert_eq!(f, fmt(8, 4, Num::Srgb));
        let t = unpack_texel(f, &[0, 188, 255, 188]);
        assert_eq!(f32::from_bits(t[0]), 0.0);
        // 188/255 is 0.7373 encoded: linear ((0.7373 + 0.055) / 1.055)^2.4 = 0.5029.
        assert!((f32::from_bits(t[1]) - 0.502_886).abs() < 1e-5, "{}", f32::from_bits(t[1]));
        assert_eq!(f32::from_bits(t[2]), 1.0);
        // Alpha is linear.
        assert_eq!(f32::from_bits(t[3]), 188.0 / 255.0);
        // The low segment is linear: 10/255 / 12.92.
        let low = unpack_texel(Format::from_code(128).unwrap(), &[10]);
        assert_eq!(f32::from_bits(low[0]), ((10.0f64 / 255.0) as f32 as f64 / 12.92) as f32);
        for v in 0..=255u32 {
            let lin = srgb_to_linear(v as f32 / 255.0);
            let back = encode_channel(f, linear_to_srgb(lin).to_bits());
            assert_eq!(back, v, "sRGB {v} -> {lin} -> {back}");
        }
    }
}
