//! Image, sampler and buffer descriptors as the software agent's emulator reads them: gfx10's
//! T# (8 dwords), S# (4 dwords) and V# (4 dwords) with ROCr's `resource_nv.h` field layout,
//! over linear data in rocload's array layout (`SW_MODE` 0; rows of `pitch` texels for 1D/2D,
//! tightly packed otherwise; mip levels at 256-byte boundaries). An image object is 12 dwords:
//! the T# (or, for a 1D buffer image, the V#), then the HSA channel type, channel order and
//! width, which ROCr stores after the descriptor and the device library reads.
//!
//! One builder for the two places that make descriptors: the HIP texture API on the software
//! agent (`capi`) and the software HSA library's image extension (`hsa-soft`), so both give
//! the emulator the same bits. Formats are named in HSA's terms (`hsa_ext_image_channel_type_t`
//! and `_order_t`). Not the emulator's reading of them (`rocload-emu`'s `exec/image.rs`) and not
//! a GPU's layouts (addrlib's tiling and pitch rules): see docs/emulator.md, Images.

use std::fmt;

use super::DeviceError;

/// `hsa_ext_image_channel_type_t` values.
pub mod channel_type {
    /// Signed 8-bit normalised.
    pub const SNORM_INT8: u32 = 0;
    /// Signed 16-bit normalised.
    pub const SNORM_INT16: u32 = 1;
    /// Unsigned 8-bit normalised.
    pub const UNORM_INT8: u32 = 2;
    /// Unsigned 16-bit normalised.
    pub const UNORM_INT16: u32 = 3;
    /// Signed 8-bit integer.
    pub const SIGNED_INT8: u32 = 8;
    /// Signed 16-bit integer.
    pub const SIGNED_INT16: u32 = 9;
    /// Signed 32-bit integer.
    pub const SIGNED_INT32: u32 = 10;
    /// Unsigned 8-bit integer.
    pub const UNSIGNED_INT8: u32 = 11;
    /// Unsigned 16-bit integer.
    pub const UNSIGNED_INT16: u32 = 12;
    /// Unsigned 32-bit integer.
    pub const UNSIGNED_INT32: u32 = 13;
    /// IEEE half.
    pub const HALF_FLOAT: u32 = 14;
    /// IEEE single.
    pub const FLOAT: u32 = 15;
}

/// `hsa_ext_image_channel_order_t` values.
pub mod channel_order {
    /// Alpha only.
    pub const A: u32 = 0;
    /// Red.
    pub const R: u32 = 1;
    /// Red, padding.
    pub const RX: u32 = 2;
    /// Red, green.
    pub const RG: u32 = 3;
    /// Red, green, padding.
    pub const RGX: u32 = 4;
    /// Red, alpha.
    pub const RA: u32 = 5;
    /// Red, green, blue, alpha.
    pub const RGBA: u32 = 8;
    /// Blue, green, red, alpha.
    pub const BGRA: u32 = 9;
    /// Alpha, red, green, blue.
    pub const ARGB: u32 = 10;
    /// Alpha, blue, green, red.
    pub const ABGR: u32 = 11;
    /// sRGB red, green, blue, padding (alpha 1).
    pub const SRGBX: u32 = 13;
    /// sRGB red, green, blue and linear alpha.
    pub const SRGBA: u32 = 14;
    /// sRGB blue, green, red and linear alpha.
    pub const SBGRA: u32 = 15;
    /// One value read as all four channels.
    pub const INTENSITY: u32 = 16;
    /// One value read as red, green and blue, alpha 1.
    pub const LUMINANCE: u32 = 17;
}

/// Why a descriptor cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageError {
    /// A channel type and order the emulator has no format for.
    Format {
        /// `hsa_ext_image_channel_type_t`.
        channel_type: u32,
        /// `hsa_ext_image_channel_order_t`.
        order: u32,
    },
    /// A size, pitch, level or alignment the descriptor cannot express.
    Shape(String),
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageError::Format {
                channel_type,
                order,
            } => write!(
                f,
                "no image format for channel type {channel_type} and channel order {order}"
            ),
            ImageError::Shape(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ImageError {}

/// A block-compressed format (4x4 texels a block) the emulator decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockCompression {
    /// BC1: RGB (and punch-through alpha), 8 bytes a block.
    Bc1,
    /// BC2: RGB and explicit 4-bit alpha, 16 bytes.
    Bc2,
    /// BC3: RGB and interpolated alpha, 16 bytes.
    Bc3,
    /// BC4: one unsigned channel, 8 bytes.
    Bc4,
    /// BC4: one signed channel, 8 bytes.
    Bc4Signed,
    /// BC5: two unsigned channels, 16 bytes.
    Bc5,
    /// BC5: two signed channels, 16 bytes.
    Bc5Signed,
    /// BC6H: RGB unsigned half floats, 16 bytes.
    Bc6h,
    /// BC6H: RGB signed half floats, 16 bytes.
    Bc6hSigned,
    /// BC7: RGBA, 8-bit unsigned normalised, 16 bytes.
    Bc7,
}

impl BlockCompression {
    /// Bytes of one 4x4 block.
    pub fn block_bytes(self) -> u32 {
        match self {
            BlockCompression::Bc1 | BlockCompression::Bc4 | BlockCompression::Bc4Signed => 8,
            _ => 16,
        }
    }

    /// The gfx10 format code (Mesa's AMD register database, `gfx10-rsrc.json`
    /// `IMG_FORMAT_BC*`: BC6_UFLOAT 179, BC6_SFLOAT 180, BC7_UNORM 181, BC7_SRGB 182); `srgb`
    /// for the sRGB codes of BC1 to BC3 and BC7.
    fn format_code(self, srgb: bool) -> u32 {
        let s = u32::from(srgb);
        match self {
            BlockCompression::Bc1 => 169 + s,
            BlockCompression::Bc2 => 171 + s,
            BlockCompression::Bc3 => 173 + s,
            BlockCompression::Bc4 => 175,
            BlockCompression::Bc4Signed => 176,
            BlockCompression::Bc5 => 177,
            BlockCompression::Bc5Signed => 178,
            BlockCompression::Bc6h => 179,
            BlockCompression::Bc6hSigned => 180,
            BlockCompression::Bc7 => 181 + s,
        }
    }
}

/// A texel format: an HSA channel type and order the emulator reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TexelFormat {
    channel_type: u32,
    order: u32,
    /// 8-bit sRGB texels (the sRGB orders, or one or two channels made sRGB by
    /// [`TexelFormat::srgb`]).
    srgb: bool,
    /// Block-compressed texels (HSA has no name for them: the type and order say what a read
    /// gives, 8-bit normalised RGBA, or half floats for BC6H).
    block: Option<BlockCompression>,
}

/// Destination selects (`SQ_SEL_*`): 0 zero, 1 one, 4-7 the stored channels X-W.
const SEL_0: u32 = 0;
const SEL_1: u32 = 1;
const SEL_X: u32 = 4;
const SEL_Y: u32 = 5;
const SEL_Z: u32 = 6;
const SEL_W: u32 = 7;

impl TexelFormat {
    /// The format of `channel_type` and `order`, if the emulator has one.
    ///
    /// # Errors
    /// [`ImageError::Format`] for 24-bit and packed types, three-channel orders, and sRGB
    /// orders of another type than 8-bit unsigned normalised.
    pub fn new(channel_type: u32, order: u32) -> Result<TexelFormat, ImageError> {
        use channel_order::{SBGRA, SRGBA, SRGBX};
        let srgb = matches!(order, SRGBX | SRGBA | SBGRA);
        let f = TexelFormat {
            channel_type,
            order,
            srgb,
            block: None,
        };
        if channel_type > channel_type::FLOAT
            || (4..=7).contains(&channel_type)
            || f.stored_channels().is_none()
            || (srgb && channel_type != channel_type::UNORM_INT8)
        {
            return Err(ImageError::Format {
                channel_type,
                order,
            });
        }
        Ok(f)
    }

    /// Block-compressed texels of `kind`, read as normalised floats (BC6H: half floats).
    pub fn block_compressed(kind: BlockCompression) -> TexelFormat {
        use BlockCompression::*;
        TexelFormat {
            channel_type: match kind {
                Bc4Signed | Bc5Signed => channel_type::SNORM_INT8,
                Bc6h | Bc6hSigned => channel_type::HALF_FLOAT,
                _ => channel_type::UNORM_INT8,
            },
            order: channel_order::RGBA,
            srgb: false,
            block: Some(kind),
        }
    }

    /// The block compression, if the texels are compressed.
    pub fn block(&self) -> Option<BlockCompression> {
        self.block
    }

    /// The same texels read as sRGB (converted to linear light before filtering): 8-bit
    /// unsigned normalised red, red-green or RGBA (HSA names the last `SRGBA`), or BC1 to BC3
    /// and BC7.
    ///
    /// # Errors
    /// [`ImageError::Format`] for other types and orders.
    pub fn srgb(self) -> Result<TexelFormat, ImageError> {
        use channel_order::{R, RG, RGBA, SRGBA};
        if let Some(b) = self.block {
            use BlockCompression::*;
            if !matches!(b, Bc1 | Bc2 | Bc3 | Bc7) {
                return Err(ImageError::Format {
                    channel_type: self.channel_type,
                    order: self.order,
                });
            }
            return Ok(TexelFormat {
                order: SRGBA,
                srgb: true,
                ..self
            });
        }
        let order = match self.order {
            RGBA => SRGBA,
            o @ (R | RG) => o,
            o if self.srgb => o,
            _ => u32::MAX,
        };
        if self.channel_type != channel_type::UNORM_INT8 || order == u32::MAX {
            return Err(ImageError::Format {
                channel_type: self.channel_type,
                order: self.order,
            });
        }
        Ok(TexelFormat {
            order,
            srgb: true,
            ..self
        })
    }

    /// Whether the texels are sRGB.
    pub fn is_srgb(&self) -> bool {
        self.srgb
    }

    /// `hsa_ext_image_channel_type_t`.
    pub fn channel_type(&self) -> u32 {
        self.channel_type
    }

    /// `hsa_ext_image_channel_order_t`.
    pub fn order(&self) -> u32 {
        self.order
    }

    /// Channels stored per texel (1, 2 or 4).
    fn stored_channels(&self) -> Option<u32> {
        use channel_order::*;
        match self.order {
            A | R | RX | INTENSITY | LUMINANCE => Some(1),
            RG | RGX | RA => Some(2),
            RGBA | BGRA | ARGB | ABGR | SRGBX | SRGBA | SBGRA => Some(4),
            _ => None,
        }
    }

    /// Channels stored per texel.
    pub fn channels(&self) -> u32 {
        self.stored_channels().unwrap_or(4)
    }

    /// Bytes of one channel.
    pub fn channel_bytes(&self) -> u32 {
        use channel_type::*;
        match self.channel_type {
            SNORM_INT8 | UNORM_INT8 | SIGNED_INT8 | UNSIGNED_INT8 => 1,
            SNORM_INT16 | UNORM_INT16 | SIGNED_INT16 | UNSIGNED_INT16 | HALF_FLOAT => 2,
            _ => 4,
        }
    }

    /// Bytes of one texel (of one 4x4 block when compressed).
    pub fn texel_bytes(&self) -> u32 {
        match self.block {
            Some(b) => b.block_bytes(),
            None => self.channel_bytes() * self.channels(),
        }
    }

    /// Whether the stored values are floats (and normalised integers read as floats).
    pub fn reads_floats(&self) -> bool {
        use channel_type::*;
        matches!(
            self.channel_type,
            SNORM_INT8 | SNORM_INT16 | UNORM_INT8 | UNORM_INT16 | HALF_FLOAT | FLOAT
        )
    }

    /// The gfx10 combined format code (`CFMT_*` of ROCr's `resource_nv.h`).
    pub fn format_code(&self) -> u32 {
        use channel_type::*;
        if let Some(b) = self.block {
            return b.format_code(self.srgb);
        }
        if self.srgb {
            return [128, 129, 130][match self.channels() {
                1 => 0,
                2 => 1,
                _ => 2,
            }];
        }
        let (c1, c2, c4) = match self.channel_type {
            UNORM_INT8 => (1, 14, 56),
            SNORM_INT8 => (2, 15, 57),
            UNSIGNED_INT8 => (5, 18, 60),
            SIGNED_INT8 => (6, 19, 61),
            UNORM_INT16 => (7, 23, 65),
            SNORM_INT16 => (8, 24, 66),
            UNSIGNED_INT16 => (11, 27, 69),
            SIGNED_INT16 => (12, 28, 70),
            HALF_FLOAT => (13, 29, 71),
            UNSIGNED_INT32 => (20, 62, 75),
            SIGNED_INT32 => (21, 63, 76),
            _ => (22, 64, 77),
        };
        match self.channels() {
            1 => c1,
            2 => c2,
            _ => c4,
        }
    }

    /// `DST_SEL_X..W` packed as the T# and V# hold them (3 bits each).
    pub fn dst_sel(&self) -> u32 {
        use channel_order::*;
        let sel = match self.order {
            A => [SEL_0, SEL_0, SEL_0, SEL_X],
            R | RX => [SEL_X, SEL_0, SEL_0, SEL_1],
            INTENSITY => [SEL_X, SEL_X, SEL_X, SEL_X],
            LUMINANCE => [SEL_X, SEL_X, SEL_X, SEL_1],
            RG | RGX => [SEL_X, SEL_Y, SEL_0, SEL_1],
            RA => [SEL_X, SEL_0, SEL_0, SEL_Y],
            BGRA | SBGRA => [SEL_Z, SEL_Y, SEL_X, SEL_W],
            SRGBX => [SEL_X, SEL_Y, SEL_Z, SEL_1],
            ARGB => [SEL_Y, SEL_Z, SEL_W, SEL_X],
            ABGR => [SEL_W, SEL_Z, SEL_Y, SEL_X],
            _ => [SEL_X, SEL_Y, SEL_Z, SEL_W],
        };
        sel[0] | sel[1] << 3 | sel[2] << 6 | sel[3] << 9
    }
}

/// T# `TYPE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ImageKind {
    /// 1D.
    D1 = 8,
    /// 2D.
    D2 = 9,
    /// 3D.
    D3 = 10,
    /// Cube map (and cube array): six faces a layer.
    Cube = 11,
    /// 1D array.
    D1Array = 12,
    /// 2D array.
    D2Array = 13,
}

impl ImageKind {
    /// Whether slices are layers (or faces) rather than depth.
    pub fn layered(self) -> bool {
        matches!(
            self,
            ImageKind::Cube | ImageKind::D1Array | ImageKind::D2Array
        )
    }
}

/// The largest width and height, and the most slices, a T# holds (14 and 13 bits).
pub const MAX_SIDE: u64 = 16384;
/// See [`MAX_SIDE`].
pub const MAX_SLICES: u64 = 8192;

/// What an image descriptor describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageShape {
    /// Address of level 0 (256-byte aligned).
    pub base: u64,
    /// Texel format.
    pub format: TexelFormat,
    /// Level-0 width in texels.
    pub width: u64,
    /// Level-0 height (1 for 1D kinds).
    pub height: u64,
    /// Depth (3D) or slices (arrays: layers; cubes: 6 x layers).
    pub depth: u64,
    /// `TYPE`.
    pub kind: ImageKind,
    /// Row pitch of level 0 in texels (1D and 2D; the others are tightly packed).
    pub pitch_texels: u64,
    /// First mip level a sampler may reach.
    pub base_level: u32,
    /// Last mip level.
    pub last_level: u32,
    /// First slice of an array or cube a view selects.
    pub base_slice: u64,
    /// Last slice.
    pub last_slice: u64,
}

impl ImageShape {
    /// A single-level image of `depth` slices, all of them visible.
    pub fn new(
        base: u64,
        format: TexelFormat,
        kind: ImageKind,
        [width, height, depth]: [u64; 3],
        pitch_texels: u64,
    ) -> ImageShape {
        ImageShape {
            base,
            format,
            width,
            height: height.max(1),
            depth: depth.max(1),
            kind,
            pitch_texels,
            base_level: 0,
            last_level: 0,
            base_slice: 0,
            last_slice: depth.max(1) - 1,
        }
    }
}

fn shape_error(why: String) -> ImageError {
    ImageError::Shape(why)
}

/// The 12 dwords of an image: T#, HSA channel type, channel order, width.
///
/// # Errors
/// [`ImageError::Shape`] for a base not 256-byte aligned, sizes past the T#'s fields, a pitch
/// narrower than the width, levels or slices out of order.
pub fn image_words(s: &ImageShape) -> Result<[u32; 12], ImageError> {
    if s.base % 256 != 0 {
        return Err(shape_error(format!(
            "image data at {:#x} is not 256-byte aligned",
            s.base
        )));
    }
    if s.width == 0 || s.width > MAX_SIDE || s.height > MAX_SIDE || s.depth > MAX_SLICES {
        return Err(shape_error(format!(
            "{} x {} x {} texels is past the image limits ({MAX_SIDE} a side, {MAX_SLICES} slices)",
            s.width, s.height, s.depth
        )));
    }
    let pitched = matches!(s.kind, ImageKind::D1 | ImageKind::D2);
    if pitched && (s.pitch_texels < s.width || s.pitch_texels > MAX_SIDE) {
        return Err(shape_error(format!(
            "a row pitch of {} texels for {} texels",
            s.pitch_texels, s.width
        )));
    }
    if s.base_level > s.last_level || s.last_level > 15 {
        return Err(shape_error(format!(
            "mip levels {}..={}",
            s.base_level, s.last_level
        )));
    }
    if s.base_slice > s.last_slice || s.last_slice >= s.depth {
        return Err(shape_error(format!(
            "slices {}..={} of {}",
            s.base_slice, s.last_slice, s.depth
        )));
    }
    let mut d = [0u32; 12];
    let base = s.base >> 8;
    let w = (s.width - 1) as u32;
    let h = (s.height - 1) as u32;
    d[0] = base as u32;
    d[1] = (base >> 32) as u32 & 0xff | s.format.format_code() << 20 | (w & 3) << 30;
    d[2] = w >> 2 | h << 14;
    d[3] = s.format.dst_sel() | s.base_level << 12 | s.last_level << 16 | (s.kind as u32) << 28;
    d[4] = match s.kind {
        ImageKind::D1 | ImageKind::D2 => (s.pitch_texels - 1) as u32 & 0x3fff,
        ImageKind::D3 => (s.depth - 1) as u32 & 0x1fff,
        // Arrays and cubes: the last slice and the first (BASE_ARRAY).
        _ => (s.last_slice as u32 & 0x1fff) | (s.base_slice as u32 & 0x1fff) << 16,
    };
    d[8] = s.format.channel_type;
    d[9] = s.format.order;
    d[10] = s.width as u32;
    Ok(d)
}

/// The 12 dwords of a buffer image (a 1D image over linear memory, read with
/// `buffer_load_format`): V# (base, stride, records, selects and format), then the HSA
/// channel type, order and width in elements.
///
/// # Errors
/// [`ImageError::Shape`] for a base past 48 bits.
pub fn buffer_words(base: u64, format: TexelFormat, bytes: u64) -> Result<[u32; 12], ImageError> {
    if base >> 48 != 0 {
        return Err(shape_error(format!("buffer at {base:#x} is past 48 bits")));
    }
    let stride = u64::from(format.texel_bytes());
    let records = u32::try_from(bytes / stride).unwrap_or(u32::MAX);
    let mut d = [0u32; 12];
    d[0] = base as u32;
    d[1] = (base >> 32) as u32 & 0xffff | (stride as u32) << 16;
    d[2] = records;
    d[3] = format.dst_sel() | format.format_code() << 12;
    d[8] = format.channel_type;
    d[9] = format.order;
    d[10] = records;
    Ok(d)
}

/// `SQ_TEX_CLAMP_*` address modes of the S#.
pub mod clamp {
    /// Wrap.
    pub const WRAP: u32 = 0;
    /// Mirror.
    pub const MIRROR: u32 = 1;
    /// Clamp to the last texel.
    pub const LAST_TEXEL: u32 = 2;
    /// The border colour outside the image.
    pub const BORDER: u32 = 6;
}

/// What a sampler descriptor says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SamplerState {
    /// `SQ_TEX_CLAMP_*` per axis.
    pub address: [u32; 3],
    /// Coordinates in texels rather than normalised.
    pub unnormalized: bool,
    /// Bilinear (and linear in z) rather than point.
    pub linear: bool,
    /// Between mip levels: 0 none, 1 point, 2 linear.
    pub mip: u32,
    /// LOD clamps (0 to 15.99).
    pub min_lod: f32,
    /// See `min_lod`.
    pub max_lod: f32,
    /// LOD bias (-32 to 31.99).
    pub bias: f32,
    /// `BORDER_COLOR_TYPE` (0 transparent black, 1 opaque black, 2 opaque white, 3 table).
    pub border_type: u32,
    /// `BORDER_COLOR_PTR` (the table entry of type 3).
    pub border_ptr: u32,
    /// Largest anisotropy (HIP's `maxAnisotropy`, 1 to 16; 0 or 1: isotropic). The S# holds
    /// a power of two (`MAX_ANISO_RATIO`): the largest not above it.
    pub max_aniso: u32,
}

/// `MAX_ANISO_RATIO` of a largest anisotropy: 0 (1x) to 4 (16x), the power of two not above it.
fn aniso_ratio_code(max_aniso: u32) -> u32 {
    match max_aniso {
        0 | 1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        _ => 4,
    }
}

/// The 4 dwords of an S#.
pub fn sampler_words(s: &SamplerState) -> [u32; 4] {
    let fixed = |v: f32| (v.clamp(0.0, 15.99) * 256.0) as u32;
    let bias = ((s.bias.clamp(-32.0, 31.99) * 256.0) as i32 as u32) & 0x3fff;
    let linear = u32::from(s.linear);
    let aniso = aniso_ratio_code(s.max_aniso);
    // Minification filters anisotropically (2 point, 3 bilinear) when a ratio is set.
    let min_filter = if aniso > 0 { 2 + linear } else { linear };
    let mut d = [0u32; 4];
    d[0] = (s.address[0] & 7)
        | (s.address[1] & 7) << 3
        | (s.address[2] & 7) << 6
        | aniso << 9
        | u32::from(s.unnormalized) << 15;
    d[1] = fixed(s.min_lod) | fixed(s.max_lod) << 12;
    // Z_FILTER is 1 point, 2 linear (0 would be "as the XY filter").
    d[2] = bias | linear << 20 | min_filter << 22 | (linear + 1) << 24 | (s.mip & 3) << 26;
    d[3] = s.border_ptr & 0xfff | (s.border_type & 3) << 30;
    d
}

/// `hsa_ext_image_geometry_t` values.
pub mod geometry {
    /// 1D.
    pub const D1: u32 = 0;
    /// 2D.
    pub const D2: u32 = 1;
    /// 3D.
    pub const D3: u32 = 2;
    /// 1D array.
    pub const D1_ARRAY: u32 = 3;
    /// 2D array.
    pub const D2_ARRAY: u32 = 4;
    /// 1D buffer.
    pub const D1_BUFFER: u32 = 5;
}

/// `hsa_ext_sampler_addressing_mode_t` values.
pub mod addressing {
    /// Undefined outside the image.
    pub const UNDEFINED: u32 = 0;
    /// Clamp to the edge texel.
    pub const CLAMP_TO_EDGE: u32 = 1;
    /// The border colour (transparent black) outside.
    pub const CLAMP_TO_BORDER: u32 = 2;
    /// Wrap.
    pub const REPEAT: u32 = 3;
    /// Mirror.
    pub const MIRRORED_REPEAT: u32 = 4;
}

/// An image a device's runtime is asked to make over linear data
/// (`hsa_ext_image_create_with_layout` with `HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageRequest {
    /// [`geometry`].
    pub geometry: u32,
    /// Width in texels.
    pub width: u64,
    /// Height (0 for 1D geometries).
    pub height: u64,
    /// Depth (3D only, else 0).
    pub depth: u64,
    /// Layers (arrays only, else 0).
    pub array_size: u64,
    /// Format.
    pub format: TexelFormat,
    /// The data.
    pub data: u64,
    /// Bytes from a row to the next.
    pub row_pitch: u64,
    /// Bytes from a slice or layer to the next.
    pub slice_pitch: u64,
    /// Kernels may write it (a surface).
    pub writable: bool,
}

/// A sampler a device's runtime is asked to make (`hsa_ext_sampler_create`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplerRequest {
    /// Normalised rather than texel coordinates.
    pub normalized: bool,
    /// Linear rather than nearest filtering.
    pub linear: bool,
    /// [`addressing`], one mode for every axis (HSA has no other).
    pub address: u32,
}

/// Images and samplers made by a device's own runtime (ROCr's image extension): the
/// descriptors a GPU reads, in its layouts, which rocload must not build itself.
pub trait ImageApi: Send + Sync {
    /// Makes an image; returns its handle and the 12 dwords at it (descriptor, channel type,
    /// order, width), which HIP's texture and surface objects copy.
    ///
    /// # Errors
    /// The runtime's refusal (a format, size or pitch it does not support).
    fn create_image(&self, request: &ImageRequest) -> Result<(u64, [u32; 12]), DeviceError>;

    /// Destroys an image [`create_image`](Self::create_image) made.
    ///
    /// # Errors
    /// The runtime's refusal (an unknown handle).
    fn destroy_image(&self, handle: u64) -> Result<(), DeviceError>;

    /// Makes a sampler; returns its handle and the 4 dwords of its descriptor.
    ///
    /// # Errors
    /// The runtime's refusal.
    fn create_sampler(&self, request: &SamplerRequest) -> Result<(u64, [u32; 4]), DeviceError>;

    /// Destroys a sampler [`create_sampler`](Self::create_sampler) made.
    ///
    /// # Errors
    /// The runtime's refusal.
    fn destroy_sampler(&self, handle: u64) -> Result<(), DeviceError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_words_have_the_gfx10_fields() {
        let f = TexelFormat::new(channel_type::FLOAT, channel_order::RGBA).unwrap();
        let mut s = ImageShape::new(0x12_3456_7800, f, ImageKind::D2, [100, 30, 1], 128);
        let d = image_words(&s).unwrap();
        assert_eq!(
            u64::from(d[0]) | u64::from(d[1] & 0xff) << 32,
            0x12_3456_7800 >> 8
        );
        assert_eq!(d[1] >> 20 & 0x1ff, 77);
        assert_eq!(((d[1] >> 30) | (d[2] & 0xfff) << 2) + 1, 100);
        assert_eq!((d[2] >> 14 & 0x3fff) + 1, 30);
        assert_eq!(d[3] >> 28, 9);
        assert_eq!((d[4] & 0x3fff) + 1, 128);
        assert_eq!((d[8], d[9], d[10]), (15, 8, 100));
        s.base += 16;
        assert!(image_words(&s).is_err());
        s.base -= 16;
        s.pitch_texels = 99;
        assert!(image_words(&s).is_err());
    }

    #[test]
    fn srgb_formats_are_8_bit_unorm_with_their_own_codes() {
        use channel_order::*;
        let u8 = |o| TexelFormat::new(channel_type::UNORM_INT8, o).unwrap();
        assert_eq!(u8(SRGBA).format_code(), 130);
        assert_eq!(u8(SBGRA).dst_sel(), u8(BGRA).dst_sel());
        assert_eq!(u8(R).srgb().unwrap().format_code(), 128);
        assert_eq!(u8(RG).srgb().unwrap().format_code(), 129);
        let rgba = u8(RGBA).srgb().unwrap();
        assert_eq!(
            (rgba.order(), rgba.format_code(), rgba.is_srgb()),
            (SRGBA, 130, true)
        );
        assert!(TexelFormat::new(channel_type::UNORM_INT16, SRGBA).is_err());
        assert!(TexelFormat::new(channel_type::UNSIGNED_INT8, RGBA)
            .unwrap()
            .srgb()
            .is_err());
        assert!(u8(BGRA).srgb().is_err());
    }

    #[test]
    fn orders_select_their_channels_and_unknown_formats_are_refused() {
        let sel = |o| {
            let d = TexelFormat::new(channel_type::UNORM_INT8, o)
                .unwrap()
                .dst_sel();
            [d & 7, d >> 3 & 7, d >> 6 & 7, d >> 9 & 7]
        };
        assert_eq!(sel(channel_order::BGRA), [6, 5, 4, 7]);
        assert_eq!(sel(channel_order::A), [0, 0, 0, 4]);
        assert_eq!(sel(channel_order::LUMINANCE), [4, 4, 4, 1]);
        assert!(TexelFormat::new(4, channel_order::R).is_err());
        assert!(TexelFormat::new(channel_type::FLOAT, 6).is_err());
        let rg16 = TexelFormat::new(channel_type::SIGNED_INT16, channel_order::RG).unwrap();
        assert_eq!((rg16.texel_bytes(), rg16.format_code()), (4, 28));
        let b = buffer_words(0x1000, rg16, 400).unwrap();
        assert_eq!((b[1] >> 16, b[2], b[3] >> 12 & 0x7f), (4, 100, 28));
    }

    #[test]
    fn sampler_words_pack_modes_filters_lods_and_border() {
        let s = sampler_words(&SamplerState {
            address: [clamp::BORDER, clamp::LAST_TEXEL, clamp::MIRROR],
            unnormalized: true,
            linear: true,
            mip: 2,
            min_lod: 0.5,
            max_lod: 3.0,
            bias: -1.0,
            border_type: 3,
            border_ptr: 9,
            max_aniso: 0,
        });
        assert_eq!(s[0], 6 | 2 << 3 | 1 << 6 | 1 << 15);
        assert_eq!(s[1], 128 | 768 << 12);
        assert_eq!(s[2] & 0x3fff, (-256i32 as u32) & 0x3fff);
        assert_eq!(s[2] >> 20 & 0xff, 1 | 1 << 2 | 2 << 4 | 2 << 6);
        assert_eq!(s[3], 9 | 3 << 30);
    }

    #[test]
    fn anisotropy_is_a_power_of_two_ratio_and_an_anisotropic_min_filter() {
        let state = |max_aniso, linear| SamplerState {
            address: [0; 3],
            unnormalized: false,
            linear,
            mip: 0,
            min_lod: 0.0,
            max_lod: 15.0,
            bias: 0.0,
            border_type: 0,
            border_ptr: 0,
            max_aniso,
        };
        for (ratio, code) in [
            (0, 0),
            (1, 0),
            (2, 1),
            (3, 1),
            (4, 2),
            (12, 3),
            (16, 4),
            (99, 4),
        ] {
            let s = sampler_words(&state(ratio, true));
            assert_eq!(s[0] >> 9 & 7, code, "maxAnisotropy {ratio}");
            // Magnification stays bilinear; minification is anisotropic bilinear.
            assert_eq!(
                (s[2] >> 20 & 3, s[2] >> 22 & 3),
                (1, if code > 0 { 3 } else { 1 })
            );
        }
        assert_eq!(sampler_words(&state(8, false))[2] >> 22 & 3, 2);
    }
}
