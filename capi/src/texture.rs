//! Texture and surface objects and texture references: `hipCreateTextureObject` and its
//! getters, `hipCreateSurfaceObject`, `hipBindTexture*`/`hipUnbindTexture`, and the
//! registrations clang emits for `texture<>` and `surface<>` variables. A texture object is
//! the address of device memory holding what HIP's device code (`texture_fetch_functions.h`,
//! the device library's `__ockl_image_*`) reads: a gfx10 image resource descriptor (T#,
//! dwords 0-7), the HSA channel type, channel order and width (dwords 8-10, as ROCr fills
//! them for the device library), then a sampler descriptor (S#, dwords 12-15); a surface
//! object is the first 12 dwords alone. Linear memory (`hipResourceTypeLinear`) gets a buffer
//! descriptor (V#) in dwords 0-3, which `tex1Dfetch` reads with `buffer_load_format`.
//!
//! Descriptors follow ROCr's `resource_nv.h` field layout; images are linear (`SW_MODE` 0) with
//! rocload's array layout, which the emulator executes (`emu/src/exec/image.rs`). Not the
//! arrays themselves (`array.rs`).

use rocload_ffi::export;
use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::LazyLock;

use parking_lot::Mutex;
use rocload_lib::device::MemoryKind;
use rocload_lib::runtime::{ArrayFlags, ArrayFormat};

use crate::array::{
    array_of, channel_desc, format_of, hipArray, hipChannelFormatDesc, hipMipmappedArray,
    mipmapped_array_of,
};
use crate::*;

/// `hipResourceType`.
pub(crate) const RES_ARRAY: c_int = 0;
pub(crate) const RES_MIPMAP: c_int = 1;
pub(crate) const RES_LINEAR: c_int = 2;
pub(crate) const RES_PITCH2D: c_int = 3;

/// `hipResourceDesc` (HIP 5.2's `driver_types.h`): the type and a union of 56 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipResourceDesc {
    /// `hipResourceType`.
    pub resType: c_int,
    /// The union: array / mipmap (a pointer), linear (pointer, channels, size), pitch2D
    /// (pointer, channels, width, height, pitch).
    pub res: [u64; 7],
}
const _: () = assert!(std::mem::size_of::<hipResourceDesc>() == 64);

/// `hipTextureDesc`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hipTextureDesc {
    /// `hipTextureAddressMode` per axis.
    pub addressMode: [c_int; 3],
    /// `hipTextureFilterMode`.
    pub filterMode: c_int,
    /// `hipTextureReadMode`.
    pub readMode: c_int,
    /// sRGB conversion (refused).
    pub sRGB: c_int,
    /// Border colour.
    pub borderColor: [f32; 4],
    /// Normalised coordinates.
    pub normalizedCoords: c_int,
    /// Anisotropy limit (ignored: filtering is isotropic).
    pub maxAnisotropy: c_uint,
    /// Filter between mip levels.
    pub mipmapFilterMode: c_int,
    /// LOD bias.
    pub mipmapLevelBias: f32,
    /// LOD clamps.
    pub minMipmapLevelClamp: f32,
    /// Maximum LOD.
    pub maxMipmapLevelClamp: f32,
}
const _: () = assert!(std::mem::size_of::<hipTextureDesc>() == 64);

/// `hipResourceViewDesc`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hipResourceViewDesc {
    /// `hipResourceViewFormat`.
    pub format: c_int,
    /// Width.
    pub width: usize,
    /// Height.
    pub height: usize,
    /// Depth.
    pub depth: usize,
    /// First level.
    pub firstMipmapLevel: c_uint,
    /// Last level.
    pub lastMipmapLevel: c_uint,
    /// First layer.
    pub firstLayer: c_uint,
    /// Last layer.
    pub lastLayer: c_uint,
}

/// `textureReference` (HIP 5.2): what a `texture<>` variable holds, on the host and in the
/// device variable clang reads `textureObject` from.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct textureReference {
    /// Normalised coordinates.
    pub normalized: c_int,
    /// `hipTextureReadMode`.
    pub readMode: c_int,
    /// `hipTextureFilterMode`.
    pub filterMode: c_int,
    /// Address modes.
    pub addressMode: [c_int; 3],
    /// Channels.
    pub channelDesc: hipChannelFormatDesc,
    /// sRGB.
    pub sRGB: c_int,
    /// Anisotropy.
    pub maxAnisotropy: c_uint,
    /// Mip filter.
    pub mipmapFilterMode: c_int,
    /// LOD bias.
    pub mipmapLevelBias: f32,
    /// LOD clamps.
    pub minMipmapLevelClamp: f32,
    /// Maximum LOD.
    pub maxMipmapLevelClamp: f32,
    /// The bound texture object.
    pub textureObject: *mut c_void,
    /// Channels (driver API).
    pub numChannels: c_int,
    /// `hipArray_Format` (driver API).
    pub format: c_int,
}
const _: () = assert!(std::mem::size_of::<textureReference>() == 88);
const _: () = assert!(std::mem::offset_of!(textureReference, textureObject) == 72);

/// HSA channel types (`hsa_ext_image_channel_type_t`) and orders, which the device library
/// reads from dwords 8 and 9.
fn hsa_channel(format: ArrayFormat, channels: u32, normalized: bool) -> (u32, u32) {
    let ty = match (format, normalized) {
        (ArrayFormat::I8, true) => 0,
        (ArrayFormat::I16, true) => 1,
        (ArrayFormat::U8, true) => 2,
        (ArrayFormat::U16, true) => 3,
        (ArrayFormat::I8, false) => 8,
        (ArrayFormat::I16, false) => 9,
        (ArrayFormat::I32, _) => 10,
        (ArrayFormat::U8, false) => 11,
        (ArrayFormat::U16, false) => 12,
        (ArrayFormat::U32, _) => 13,
        (ArrayFormat::F16, _) => 14,
        (ArrayFormat::F32, _) => 15,
    };
    let order = match channels {
        1 => 1,
        2 => 3,
        _ => 8,
    };
    (ty, order)
}

/// The gfx10 combined format code (`CFMT_*` of ROCr's `resource_nv.h`).
fn format_code(format: ArrayFormat, channels: u32, normalized: bool) -> Option<u32> {
    let by_channels = |c1: u32, c2: u32, c4: u32| match channels {
        1 => Some(c1),
        2 => Some(c2),
        4 => Some(c4),
        _ => None,
    };
    match (format, normalized) {
        (ArrayFormat::U8, true) => by_channels(1, 14, 56),
        (ArrayFormat::I8, true) => by_channels(2, 15, 57),
        (ArrayFormat::U8, false) => by_channels(5, 18, 60),
        (ArrayFormat::I8, false) => by_channels(6, 19, 61),
        (ArrayFormat::U16, true) => by_channels(7, 23, 65),
        (ArrayFormat::I16, true) => by_channels(8, 24, 66),
        (ArrayFormat::U16, false) => by_channels(11, 27, 69),
        (ArrayFormat::I16, false) => by_channels(12, 28, 70),
        (ArrayFormat::F16, _) => by_channels(13, 29, 71),
        (ArrayFormat::U32, _) => by_channels(20, 62, 75),
        (ArrayFormat::I32, _) => by_channels(21, 63, 76),
        (ArrayFormat::F32, _) => by_channels(22, 64, 77),
    }
}

/// Destination selects: missing channels read 0, alpha 1.
fn dst_sel(channels: u32) -> u32 {
    let sel = match channels {
        1 => [4, 0, 0, 1],
        2 => [4, 5, 0, 1],
        _ => [4, 5, 6, 7],
    };
    sel[0] | sel[1] << 3 | sel[2] << 6 | sel[3] << 9
}

/// What an image descriptor describes.
struct ImageShape {
    base: u64,
    format: ArrayFormat,
    channels: u32,
    width: u64,
    height: u64,
    depth: u64,
    /// T# `TYPE`: 8 1D, 9 2D, 10 3D, 11 cube, 12 1D array, 13 2D array.
    kind: u32,
    pitch_texels: u64,
    /// First and last mip level a sampler may reach.
    base_level: u32,
    last_level: u32,
    /// First and last slice (layer or cube face) of an array a view selects.
    base_slice: u64,
    last_slice: u64,
}

pub(crate) fn bad(why: String) -> Failure {
    Failure::new(hipErrorInvalidValue, why)
}

/// The 12 image dwords (T#, channel type, order, width).
fn image_descriptor(s: &ImageShape, normalized: bool) -> Result<[u32; 12], Failure> {
    let code = format_code(s.format, s.channels, normalized)
        .ok_or_else(|| bad(format!("{} channels of {:?}", s.channels, s.format)))?;
    if s.base % 256 != 0 {
        return Err(bad(format!(
            "image data at {:#x} is not 256-byte aligned",
            s.base
        )));
    }
    if s.width == 0 || s.width > 16384 || s.height > 16384 || s.depth > 8192 {
        return Err(bad(format!(
            "{} x {} x {} texels is past the image limits",
            s.width, s.height, s.depth
        )));
    }
    let mut d = [0u32; 12];
    let base = s.base >> 8;
    let w = (s.width - 1) as u32;
    let h = (s.height.max(1) - 1) as u32;
    d[0] = base as u32;
    d[1] = (base >> 32) as u32 & 0xff | code << 20 | (w & 3) << 30;
    d[2] = w >> 2 | h << 14;
    d[3] = dst_sel(s.channels)
        | s.base_level.min(15) << 12
        | s.last_level.min(15) << 16
        | s.kind << 28;
    d[4] = match s.kind {
        8 | 9 => (s.pitch_texels.max(1) - 1) as u32 & 0x3fff,
        10 => (s.depth.max(1) - 1) as u32 & 0x1fff,
        // Arrays and cubes: the last slice and the first (BASE_ARRAY).
        _ => (s.last_slice as u32 & 0x1fff) | (s.base_slice as u32 & 0x1fff) << 16,
    };
    let (ty, order) = hsa_channel(s.format, s.channels, normalized);
    d[8] = ty;
    d[9] = order;
    d[10] = s.width as u32;
    Ok(d)
}

/// The four buffer dwords (V#) of linear texture memory.
fn buffer_descriptor(
    base: u64,
    format: ArrayFormat,
    channels: u32,
    bytes: u64,
    normalized: bool,
) -> Result<[u32; 12], Failure> {
    let code = format_code(format, channels, normalized)
        .ok_or_else(|| bad(format!("{channels} channels of {format:?}")))?;
    let stride = format.bytes() * u64::from(channels);
    let mut d = [0u32; 12];
    d[0] = base as u32;
    d[1] = (base >> 32) as u32 & 0xffff | (stride as u32) << 16;
    d[2] = u32::try_from(bytes / stride).unwrap_or(u32::MAX);
    d[3] = dst_sel(channels) | code << 12;
    let (ty, order) = hsa_channel(format, channels, normalized);
    d[8] = ty;
    d[9] = order;
    d[10] = d[2];
    Ok(d)
}

/// S# of a texture description; `border` is `BORDER_COLOR_TYPE` and `BORDER_COLOR_PTR`.
fn sampler_descriptor(t: &hipTextureDesc, border: (u32, u32)) -> Result<[u32; 8], Failure> {
    if t.sRGB != 0 {
        return Err(Failure::new(
            hipErrorNotSupported,
            "sRGB textures are not supported",
        ));
    }
    let mode = |m: c_int| -> Result<u32, Failure> {
        Ok(match m {
            0 => 0, // wrap
            1 => 2, // clamp to the last texel
            2 => 1, // mirror
            3 => 6, // border
            m => return Err(bad(format!("address mode {m}"))),
        })
    };
    let linear = match t.filterMode {
        0 => 0,
        1 => 1,
        m => return Err(bad(format!("filter mode {m}"))),
    };
    let mip = match t.mipmapFilterMode {
        0 => 1,
        1 => 2,
        m => return Err(bad(format!("mipmap filter mode {m}"))),
    };
    let fixed = |v: f32, max: f32| (v.clamp(0.0, max) * 256.0) as u32;
    let max_lod = if t.maxMipmapLevelClamp > 0.0 {
        t.maxMipmapLevelClamp
    } else {
        15.0
    };
    let bias = ((t.mipmapLevelBias.clamp(-32.0, 31.99) * 256.0) as i32 as u32) & 0x3fff;
    let mut s = [0u32; 8];
    s[0] = mode(t.addressMode[0])?
        | mode(t.addressMode[1])? << 3
        | mode(t.addressMode[2])? << 6
        | u32::from(t.normalizedCoords == 0) << 15;
    s[1] = fixed(t.minMipmapLevelClamp, 15.99) | fixed(max_lod, 15.99) << 12;
    // Z_FILTER is 1 point, 2 linear (0 would be "as the XY filter").
    s[2] = bias | linear << 20 | linear << 22 | (linear + 1) << 24 | mip << 26;
    s[3] = border.1 & 0xfff | border.0 << 30;
    Ok(s)
}

/// `BORDER_COLOR_TYPE` and `BORDER_COLOR_PTR` of a texture's border colour: one of the three
/// constants where it is one (or where no axis uses the border), else an entry of the
/// device's table holding the channel values as the texture reads them (float bits for float
/// and normalised reads, integers for integer reads).
fn border_fields(
    t: &hipTextureDesc,
    format: ArrayFormat,
    normalized: bool,
) -> Result<(u32, u32), Failure> {
    if !t.addressMode.contains(&3) {
        return Ok((0, 0));
    }
    match t.borderColor {
        [0.0, 0.0, 0.0, 0.0] => return Ok((0, 0)),
        [0.0, 0.0, 0.0, 1.0] => return Ok((1, 0)),
        [1.0, 1.0, 1.0, 1.0] => return Ok((2, 0)),
        _ => {}
    }
    let c = t.borderColor;
    if c.iter().any(|v| !v.is_finite()) {
        return Err(bad(format!("border colour {c:?}")));
    }
    let integer = !normalized && !matches!(format, ArrayFormat::F16 | ArrayFormat::F32);
    let signed = matches!(
        format,
        ArrayFormat::I8 | ArrayFormat::I16 | ArrayFormat::I32
    );
    let dwords = c.map(|v| match (integer, signed) {
        (false, _) => v.to_bits(),
        (true, true) => v as i32 as u32,
        (true, false) => v as u32,
    });
    let index = runtime().border_color(current_device(), dwords)?;
    Ok((3, index))
}

/// `hipResourceViewFormat`: the format and channels a view reads the texels as.
fn view_format(code: c_int) -> Result<(ArrayFormat, u32), Failure> {
    let formats = [
        ArrayFormat::U8,
        ArrayFormat::I8,
        ArrayFormat::U16,
        ArrayFormat::I16,
        ArrayFormat::U32,
        ArrayFormat::I32,
        ArrayFormat::F16,
        ArrayFormat::F32,
    ];
    match code {
        0x01..=0x18 => {
            let i = (code - 1) as usize;
            Ok((formats[i / 3], [1, 2, 4][i % 3]))
        }
        0x19..=0x22 => Err(Failure::new(
            hipErrorNotSupported,
            format!("block-compressed view format {code:#x}"),
        )),
        c => Err(bad(format!("resource view format {c:#x}"))),
    }
}

/// Applies a resource view to an array's shape: the texels read as another format of the same
/// size, a range of mip levels, a range of layers.
fn apply_view(s: &mut ImageShape, v: &hipResourceViewDesc) -> Result<(), Failure> {
    if v.format != 0 {
        let (format, channels) = view_format(v.format)?;
        let (new, old) = (
            format.bytes() * u64::from(channels),
            s.format.bytes() * u64::from(s.channels),
        );
        if new != old {
            return Err(bad(format!(
                "view format {:#x} has {new}-byte texels, the resource {old}-byte ones",
                v.format
            )));
        }
        s.format = format;
        s.channels = channels;
    }
    let one_d = matches!(s.kind, 8 | 12);
    let size_differs = (v.width != 0 && v.width as u64 != s.width)
        || (v.height != 0 && !one_d && v.height as u64 != s.height);
    if size_differs {
        return Err(bad(format!(
            "view of {} x {} texels over a resource of {} x {}",
            v.width, v.height, s.width, s.height
        )));
    }
    if v.firstMipmapLevel > v.lastMipmapLevel || v.lastMipmapLevel > s.last_level {
        return Err(bad(format!(
            "view of mip levels {}..={} of a resource with levels 0..={}",
            v.firstMipmapLevel, v.lastMipmapLevel, s.last_level
        )));
    }
    s.base_level = v.firstMipmapLevel;
    s.last_level = v.lastMipmapLevel;
    let layered = (11..=13).contains(&s.kind);
    if !layered {
        if v.firstLayer != 0 || v.lastLayer != 0 {
            return Err(bad("a layer range on a resource without layers".into()));
        }
        return Ok(());
    }
    // A cube's layers are groups of six faces.
    let per = if s.kind == 11 { 6 } else { 1 };
    let layers = (s.last_slice + 1) / per;
    let (first, last) = (u64::from(v.firstLayer), u64::from(v.lastLayer));
    if first > last || last >= layers {
        return Err(bad(format!(
            "view of layers {first}..={last} of a resource with layers 0..{layers}"
        )));
    }
    s.base_slice = first * per;
    s.last_slice = last * per + per - 1;
    Ok(())
}

/// Device memory holding `dwords`.
fn upload(dwords: &[u32]) -> Result<u64, Failure> {
    let bytes: Vec<u8> = dwords.iter().flat_map(|d| d.to_le_bytes()).collect();
    let rt = runtime();
    let address = rt.allocate(current_device(), bytes.len() as u64, MemoryKind::Device)?;
    // SAFETY: `address` is a fresh device allocation of bytes.len() bytes; the source is ours.
    let r = unsafe {
        crate::memory::copy_of_kind(
            address as *mut c_void,
            bytes.as_ptr().cast(),
            bytes.len(),
            None,
            1,
        )
    };
    if let Err(e) = r {
        let _ = rt.free(address);
        return Err(e);
    }
    Ok(address)
}

/// What a texture object was made from.
#[derive(Clone, Copy)]
pub(crate) struct TextureRecord {
    pub(crate) res: hipResourceDesc,
    pub(crate) tex: hipTextureDesc,
    pub(crate) view: Option<hipResourceViewDesc>,
}

pub(crate) static TEXTURES: LazyLock<Mutex<HashMap<u64, TextureRecord>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static SURFACES: LazyLock<Mutex<HashMap<u64, hipResourceDesc>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The shape of a whole array or one of its levels.
fn array_shape(res: &hipResourceDesc) -> Result<(ImageShape, ArrayFlags), Failure> {
    let (array, base, width, height, depth, pitch, levels) = match res.resType {
        RES_ARRAY => {
            let view = array_of(
                res.res[0] as *const hipArray,
                "resDesc.res.array.array",
                hipErrorInvalidValue,
            )?;
            let l = view.level();
            let a = view.array().clone();
            (
                a,
                view.address(),
                l.width,
                l.height,
                l.depth,
                l.row_pitch,
                1,
            )
        }
        _ => {
            let a = mipmapped_array_of(res.res[0] as *const hipMipmappedArray)?;
            let l0 = a
                .levels()
                .first()
                .copied()
                .ok_or_else(|| bad("array without levels".into()))?;
            let n = a.levels().len() as u32;
            (
                a.clone(),
                a.base(),
                l0.width,
                l0.height,
                l0.depth,
                l0.row_pitch,
                n,
            )
        }
    };
    let d = array.descriptor();
    let flags = d.flags;
    let kind = if flags.has(ArrayFlags::CUBEMAP) {
        11
    } else if flags.has(ArrayFlags::LAYERED) {
        if height == 0 {
            12
        } else {
            13
        }
    } else if depth > 0 {
        10
    } else if height > 0 {
        9
    } else {
        8
    };
    let texel = d.texel_bytes();
    Ok((
        ImageShape {
            base,
            format: d.format,
            channels: d.channels,
            width,
            height: height.max(1),
            depth: depth.max(1),
            kind,
            pitch_texels: pitch / texel.max(1),
            base_level: 0,
            last_level: levels - 1,
            base_slice: 0,
            last_slice: depth.max(1) - 1,
        },
        flags,
    ))
}

/// The 12 image or buffer dwords a resource description asks for.
fn resource_dwords(res: &hipResourceDesc, normalized_read: bool) -> Result<[u32; 12], Failure> {
    match res.resType {
        RES_ARRAY | RES_MIPMAP => {
            let (shape, _) = array_shape(res)?;
            image_descriptor(&shape, normalized_read)
        }
        RES_LINEAR | RES_PITCH2D => {
            let ptr = res.res[0];
            // SAFETY: hipChannelFormatDesc is 20 bytes of ints at byte 8 of the union.
            let desc: hipChannelFormatDesc =
                unsafe { std::ptr::read_unaligned(res.res.as_ptr().cast::<u8>().add(8).cast()) };
            let (format, channels) = format_of(&desc)?;
            if ptr == 0 {
                return Err(Failure::null("resDesc.res.linear.devPtr"));
            }
            if res.resType == RES_LINEAR {
                buffer_descriptor(ptr, format, channels, res.res[4], normalized_read)
            } else {
                let (width, height, pitch) = (res.res[4], res.res[5], res.res[6]);
                let texel = format.bytes() * u64::from(channels);
                if pitch % texel != 0 || pitch < width * texel {
                    return Err(bad(format!(
                        "pitch {pitch} for {width} texels of {texel} bytes"
                    )));
                }
                image_descriptor(
                    &ImageShape {
                        base: ptr,
                        format,
                        channels,
                        width,
                        height,
                        depth: 1,
                        kind: 9,
                        pitch_texels: pitch / texel,
                        base_level: 0,
                        last_level: 0,
                        base_slice: 0,
                        last_slice: 0,
                    },
                    normalized_read,
                )
            }
        }
        t => Err(bad(format!("resource type {t}"))),
    }
}

/// Whether a texture reads normalised floats: `hipReadModeNormalizedFloat` on 8/16-bit
/// integers.
fn normalized_read(res: &hipResourceDesc, tex: &hipTextureDesc) -> bool {
    if tex.readMode != 1 {
        return false;
    }
    let format = match res.resType {
        RES_ARRAY | RES_MIPMAP => array_shape(res).map(|(s, _)| s.format).ok(),
        _ => {
            // SAFETY: as in resource_dwords.
            let desc: hipChannelFormatDesc =
                unsafe { std::ptr::read_unaligned(res.res.as_ptr().cast::<u8>().add(8).cast()) };
            format_of(&desc).ok().map(|(f, _)| f)
        }
    };
    format.is_some_and(small_integers)
}

/// 8- and 16-bit integers, which `hipReadModeNormalizedFloat` reads as normalised floats.
fn small_integers(format: ArrayFormat) -> bool {
    matches!(
        format,
        ArrayFormat::U8 | ArrayFormat::I8 | ArrayFormat::U16 | ArrayFormat::I16
    )
}

pub(crate) fn create_texture(
    res: &hipResourceDesc,
    tex: &hipTextureDesc,
    view: Option<hipResourceViewDesc>,
) -> Result<u64, Failure> {
    let mut dwords = [0u32; 20];
    let format = match res.resType {
        RES_ARRAY | RES_MIPMAP => {
            let (mut shape, _) = array_shape(res)?;
            if let Some(v) = &view {
                apply_view(&mut shape, v)?;
            }
            let normalized = tex.readMode == 1 && small_integers(shape.format);
            dwords[..12].copy_from_slice(&image_descriptor(&shape, normalized)?);
            (shape.format, normalized)
        }
        _ => {
            if view.is_some() {
                return Err(bad(
                    "a resource view over linear or pitched memory (views need an array)".into(),
                ));
            }
            let normalized = normalized_read(res, tex);
            dwords[..12].copy_from_slice(&resource_dwords(res, normalized)?);
            // SAFETY: as in resource_dwords.
            let desc: hipChannelFormatDesc =
                unsafe { std::ptr::read_unaligned(res.res.as_ptr().cast::<u8>().add(8).cast()) };
            (format_of(&desc)?.0, normalized)
        }
    };
    let border = border_fields(tex, format.0, format.1)?;
    dwords[12..].copy_from_slice(&sampler_descriptor(tex, border)?);
    let address = upload(&dwords)?;
    TEXTURES.lock().insert(
        address,
        TextureRecord {
            res: *res,
            tex: *tex,
            view,
        },
    );
    tracing::debug!("texture object {address:#x}: {:08x?}", dwords);
    Ok(address)
}

pub(crate) fn destroy_texture(object: u64) -> Result<(), Failure> {
    if TEXTURES.lock().remove(&object).is_none() {
        return Err(bad(format!("{object:#x} is not a live texture object")));
    }
    runtime().free(object)?;
    Ok(())
}

/// `hipError_t hipCreateTextureObject(hipTextureObject_t*, const hipResourceDesc*, const
/// hipTextureDesc*, const hipResourceViewDesc*)`.
#[export]
pub unsafe extern "C" fn hipCreateTextureObject(
    object: *mut *mut c_void,
    res: *const hipResourceDesc,
    tex: *const hipTextureDesc,
    view: *const hipResourceViewDesc,
) -> hipError_t {
    call("hipCreateTextureObject", || {
        if object.is_null() || res.is_null() || tex.is_null() {
            return Err(Failure::null("pTexObject, pResDesc or pTexDesc"));
        }
        // SAFETY: non-null, readable by the caller's contract.
        let (r, t) = unsafe { (*res, *tex) };
        // SAFETY: as above; NULL means no view.
        let v = (!view.is_null()).then(|| unsafe { *view });
        let address = create_texture(&r, &t, v)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(object, "pTexObject", address as *mut c_void) }
    })
}

/// `hipError_t hipDestroyTextureObject(hipTextureObject_t)`.
#[export]
pub unsafe extern "C" fn hipDestroyTextureObject(object: *mut c_void) -> hipError_t {
    call("hipDestroyTextureObject", || {
        if object.is_null() {
            return Ok(());
        }
        destroy_texture(object as u64)
    })
}

pub(crate) fn record(object: *mut c_void) -> Result<TextureRecord, Failure> {
    TEXTURES
        .lock()
        .get(&(object as u64))
        .copied()
        .ok_or_else(|| bad(format!("{object:p} is not a live texture object")))
}

/// `hipError_t hipGetTextureObjectResourceDesc(hipResourceDesc*, hipTextureObject_t)`.
#[export]
pub unsafe extern "C" fn hipGetTextureObjectResourceDesc(
    desc: *mut hipResourceDesc,
    object: *mut c_void,
) -> hipError_t {
    call("hipGetTextureObjectResourceDesc", || {
        let r = record(object)?;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(desc, "pResDesc", r.res) }
    })
}

/// `hipError_t hipGetTextureObjectTextureDesc(hipTextureDesc*, hipTextureObject_t)`.
#[export]
pub unsafe extern "C" fn hipGetTextureObjectTextureDesc(
    desc: *mut hipTextureDesc,
    object: *mut c_void,
) -> hipError_t {
    call("hipGetTextureObjectTextureDesc", || {
        let r = record(object)?;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(desc, "pTexDesc", r.tex) }
    })
}

/// `hipError_t hipGetTextureObjectResourceViewDesc(hipResourceViewDesc*, hipTextureObject_t)`:
/// the view it was made with (zeros when none).
#[export]
pub unsafe extern "C" fn hipGetTextureObjectResourceViewDesc(
    desc: *mut hipResourceViewDesc,
    object: *mut c_void,
) -> hipError_t {
    call("hipGetTextureObjectResourceViewDesc", || {
        let r = record(object)?;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(desc, "pResViewDesc", r.view.unwrap_or_default()) }
    })
}

/// `hipError_t hipDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements, const
/// hipChannelFormatDesc*, int device)` (HIP 6.4): the device's `maxTexture1DLinear` bytes over
/// the element size, as HIP computes it.
#[export]
pub unsafe extern "C" fn hipDeviceGetTexture1DLinearMaxWidth(
    width: *mut usize,
    desc: *const hipChannelFormatDesc,
    device: c_int,
) -> hipError_t {
    call("hipDeviceGetTexture1DLinearMaxWidth", || {
        if width.is_null() || desc.is_null() {
            return Err(Failure::null("maxWidthInElements or fmtDesc"));
        }
        // SAFETY: readable by the caller's contract (NULL refused).
        let d = unsafe { *desc };
        let bits = [d.x, d.y, d.z, d.w]
            .iter()
            .try_fold(0i64, |acc, &b| (b >= 0).then_some(acc + i64::from(b)))
            .ok_or_else(|| bad(format!("channel description {d:?}")))?;
        let bytes = bits / 8;
        if bytes == 0 {
            return Err(bad(format!("channel description {d:?} has no bytes")));
        }
        let max = crate::device::properties(i64::from(device))?.maxTexture1DLinear;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe {
            out(
                width,
                "maxWidthInElements",
                (i64::from(max) / bytes) as usize,
            )
        }
    })
}

// ------------------------------------------------------------------------------ driver forms

/// `HIP_RESOURCE_DESC`: the driver API's resource, with a format and channel count where the
/// runtime form has a channel description.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HIP_RESOURCE_DESC {
    /// `HIPresourcetype` (the same values as `hipResourceType`).
    pub resType: c_int,
    /// The union (128 bytes): array / mipmap handle; linear (pointer, format, channels,
    /// bytes); pitch2D (pointer, format, channels, width, height, pitch).
    pub res: [u64; 16],
    /// Must be 0.
    pub flags: c_uint,
}
const _: () = assert!(std::mem::size_of::<HIP_RESOURCE_DESC>() == 144);
const _: () = assert!(std::mem::offset_of!(HIP_RESOURCE_DESC, flags) == 136);

/// `HIP_TEXTURE_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct HIP_TEXTURE_DESC {
    /// `HIPaddress_mode` per axis.
    pub addressMode: [c_int; 3],
    /// `HIPfilter_mode`.
    pub filterMode: c_int,
    /// `HIP_TRSF_*`.
    pub flags: c_uint,
    /// Anisotropy limit.
    pub maxAnisotropy: c_uint,
    /// Filter between mip levels.
    pub mipmapFilterMode: c_int,
    /// LOD bias.
    pub mipmapLevelBias: f32,
    /// Minimum LOD.
    pub minMipmapLevelClamp: f32,
    /// Maximum LOD.
    pub maxMipmapLevelClamp: f32,
    /// Border colour.
    pub borderColor: [f32; 4],
    /// Reserved.
    pub reserved: [c_int; 12],
}
const _: () = assert!(std::mem::size_of::<HIP_TEXTURE_DESC>() == 104);

/// `HIP_RESOURCE_VIEW_DESC`: `hipResourceViewDesc` and 16 reserved words.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct HIP_RESOURCE_VIEW_DESC {
    /// The view.
    pub view: hipResourceViewDesc,
    /// Reserved.
    pub reserved: [c_uint; 16],
}
const _: () = assert!(std::mem::size_of::<HIP_RESOURCE_VIEW_DESC>() == 112);

const TRSF_READ_AS_INTEGER: c_uint = 0x01;
const TRSF_NORMALIZED_COORDINATES: c_uint = 0x02;
const TRSF_SRGB: c_uint = 0x10;

/// The runtime form of a driver resource.
fn resource_of_driver(d: &HIP_RESOURCE_DESC) -> Result<hipResourceDesc, Failure> {
    if d.flags != 0 {
        return Err(bad(format!("resource flags {:#x} (must be 0)", d.flags)));
    }
    let mut r = hipResourceDesc {
        resType: d.resType,
        res: [0; 7],
    };
    match d.resType {
        RES_ARRAY | RES_MIPMAP => r.res[0] = d.res[0],
        RES_LINEAR | RES_PITCH2D => {
            let format = ArrayFormat::from_raw(d.res[1] as u32)
                .ok_or_else(|| bad(format!("hipArray_Format {:#x}", d.res[1] as u32)))?;
            let channels = (d.res[1] >> 32) as u32;
            if !matches!(channels, 1 | 2 | 4) {
                return Err(bad(format!("{channels} channels (1, 2 or 4)")));
            }
            r.res[0] = d.res[0];
            // SAFETY: the channel description goes at byte 8 of the 56-byte union.
            unsafe {
                std::ptr::write_unaligned(
                    r.res.as_mut_ptr().cast::<u8>().add(8).cast(),
                    channel_desc(format, channels),
                )
            };
            r.res[4] = d.res[2];
            if d.resType == RES_PITCH2D {
                r.res[5] = d.res[3];
                r.res[6] = d.res[4];
            }
        }
        t => return Err(bad(format!("resource type {t}"))),
    }
    Ok(r)
}

/// The driver form of a runtime resource.
fn driver_of_resource(r: &hipResourceDesc) -> Result<HIP_RESOURCE_DESC, Failure> {
    let mut d = HIP_RESOURCE_DESC {
        resType: r.resType,
        res: [0; 16],
        flags: 0,
    };
    match r.resType {
        RES_ARRAY | RES_MIPMAP => d.res[0] = r.res[0],
        _ => {
            // SAFETY: as in resource_dwords.
            let desc: hipChannelFormatDesc =
                unsafe { std::ptr::read_unaligned(r.res.as_ptr().cast::<u8>().add(8).cast()) };
            let (format, channels) = format_of(&desc)?;
            d.res[0] = r.res[0];
            d.res[1] = u64::from(format.raw()) | u64::from(channels) << 32;
            d.res[2] = r.res[4];
            d.res[3] = r.res[5];
            d.res[4] = r.res[6];
        }
    }
    Ok(d)
}

fn texture_of_driver(d: &HIP_TEXTURE_DESC) -> hipTextureDesc {
    hipTextureDesc {
        addressMode: d.addressMode,
        filterMode: d.filterMode,
        readMode: if d.flags & TRSF_READ_AS_INTEGER != 0 {
            0
        } else {
            1
        },
        sRGB: c_int::from(d.flags & TRSF_SRGB != 0),
        borderColor: d.borderColor,
        normalizedCoords: c_int::from(d.flags & TRSF_NORMALIZED_COORDINATES != 0),
        maxAnisotropy: d.maxAnisotropy,
        mipmapFilterMode: d.mipmapFilterMode,
        mipmapLevelBias: d.mipmapLevelBias,
        minMipmapLevelClamp: d.minMipmapLevelClamp,
        maxMipmapLevelClamp: d.maxMipmapLevelClamp,
    }
}

fn driver_of_texture(t: &hipTextureDesc) -> HIP_TEXTURE_DESC {
    let mut flags = 0;
    if t.readMode == 0 {
        flags |= TRSF_READ_AS_INTEGER;
    }
    if t.sRGB == 1 {
        flags |= TRSF_SRGB;
    }
    if t.normalizedCoords == 1 {
        flags |= TRSF_NORMALIZED_COORDINATES;
    }
    HIP_TEXTURE_DESC {
        addressMode: t.addressMode,
        filterMode: t.filterMode,
        flags,
        maxAnisotropy: t.maxAnisotropy,
        mipmapFilterMode: t.mipmapFilterMode,
        mipmapLevelBias: t.mipmapLevelBias,
        minMipmapLevelClamp: t.minMipmapLevelClamp,
        maxMipmapLevelClamp: t.maxMipmapLevelClamp,
        borderColor: t.borderColor,
        reserved: [0; 12],
    }
}

/// `hipError_t hipTexObjectCreate(hipTextureObject_t*, const HIP_RESOURCE_DESC*, const
/// HIP_TEXTURE_DESC*, const HIP_RESOURCE_VIEW_DESC*)`: `hipCreateTextureObject` in the driver
/// API's terms.
#[export]
pub unsafe extern "C" fn hipTexObjectCreate(
    object: *mut *mut c_void,
    res: *const HIP_RESOURCE_DESC,
    tex: *const HIP_TEXTURE_DESC,
    view: *const HIP_RESOURCE_VIEW_DESC,
) -> hipError_t {
    call("hipTexObjectCreate", || {
        if object.is_null() || res.is_null() || tex.is_null() {
            return Err(Failure::null("pTexObject, pResDesc or pTexDesc"));
        }
        // SAFETY: non-null, readable by the caller's contract.
        let (r, t) = unsafe { (*res, *tex) };
        // SAFETY: as above; NULL means no view.
        let v = (!view.is_null()).then(|| unsafe { (*view).view });
        let address = create_texture(&resource_of_driver(&r)?, &texture_of_driver(&t), v)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(object, "pTexObject", address as *mut c_void) }
    })
}

/// `hipError_t hipTexObjectDestroy(hipTextureObject_t)`.
#[export]
pub unsafe extern "C" fn hipTexObjectDestroy(object: *mut c_void) -> hipError_t {
    call("hipTexObjectDestroy", || {
        if object.is_null() {
            return Ok(());
        }
        destroy_texture(object as u64)
    })
}

/// `hipError_t hipTexObjectGetResourceDesc(HIP_RESOURCE_DESC*, hipTextureObject_t)`.
#[export]
pub unsafe extern "C" fn hipTexObjectGetResourceDesc(
    desc: *mut HIP_RESOURCE_DESC,
    object: *mut c_void,
) -> hipError_t {
    call("hipTexObjectGetResourceDesc", || {
        let d = driver_of_resource(&record(object)?.res)?;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(desc, "pResDesc", d) }
    })
}

/// `hipError_t hipTexObjectGetTextureDesc(HIP_TEXTURE_DESC*, hipTextureObject_t)`.
#[export]
pub unsafe extern "C" fn hipTexObjectGetTextureDesc(
    desc: *mut HIP_TEXTURE_DESC,
    object: *mut c_void,
) -> hipError_t {
    call("hipTexObjectGetTextureDesc", || {
        let d = driver_of_texture(&record(object)?.tex);
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(desc, "pTexDesc", d) }
    })
}

/// `hipError_t hipTexObjectGetResourceViewDesc(HIP_RESOURCE_VIEW_DESC*,
/// hipTextureObject_t)`: the view it was made with (zeros when none).
#[export]
pub unsafe extern "C" fn hipTexObjectGetResourceViewDesc(
    desc: *mut HIP_RESOURCE_VIEW_DESC,
    object: *mut c_void,
) -> hipError_t {
    call("hipTexObjectGetResourceViewDesc", || {
        let v = HIP_RESOURCE_VIEW_DESC {
            view: record(object)?.view.unwrap_or_default(),
            reserved: [0; 16],
        };
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(desc, "pResViewDesc", v) }
    })
}

/// `hipError_t hipCreateSurfaceObject(hipSurfaceObject_t*, const hipResourceDesc*)`: arrays
/// only, as in HIP.
#[export]
pub unsafe extern "C" fn hipCreateSurfaceObject(
    object: *mut *mut c_void,
    res: *const hipResourceDesc,
) -> hipError_t {
    call("hipCreateSurfaceObject", || {
        if object.is_null() || res.is_null() {
            return Err(Failure::null("pSurfObject or pResDesc"));
        }
        // SAFETY: readable by the caller's contract.
        let r = unsafe { *res };
        if r.resType != RES_ARRAY {
            return Err(bad(format!("surface over resource type {}", r.resType)));
        }
        let dwords = resource_dwords(&r, false)?;
        let address = upload(&dwords)?;
        SURFACES.lock().insert(address, r);
        // SAFETY: writable by the caller's contract.
        unsafe { out(object, "pSurfObject", address as *mut c_void) }
    })
}

/// `hipError_t hipDestroySurfaceObject(hipSurfaceObject_t)`.
#[export]
pub unsafe extern "C" fn hipDestroySurfaceObject(object: *mut c_void) -> hipError_t {
    call("hipDestroySurfaceObject", || {
        if object.is_null() {
            return Ok(());
        }
        if SURFACES.lock().remove(&(object as u64)).is_none() {
            return Err(bad(format!("{object:p} is not a live surface object")));
        }
        runtime().free(object as u64)?;
        Ok(())
    })
}

/// `hipCreateSurfaceObject` under the C++ name HIP 5.2's header declares it with (Debian's
/// library exports only this one).
#[export(name = "_Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc")]
pub unsafe extern "C" fn hipCreateSurfaceObject_cxx(
    object: *mut *mut c_void,
    res: *const hipResourceDesc,
) -> hipError_t {
    // SAFETY: the same contract.
    unsafe { hipCreateSurfaceObject(object, res) }
}

/// `hipDestroySurfaceObject` under HIP 5.2's C++ name.
#[export(name = "_Z23hipDestroySurfaceObjectP13__hip_surface")]
pub unsafe extern "C" fn hipDestroySurfaceObject_cxx(object: *mut c_void) -> hipError_t {
    // SAFETY: the same contract.
    unsafe { hipDestroySurfaceObject(object) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_have_the_gfx10_fields() {
        let d = image_descriptor(
            &ImageShape {
                base: 0x12_3456_7800,
                format: ArrayFormat::F32,
                channels: 4,
                width: 100,
                height: 30,
                depth: 1,
                kind: 9,
                pitch_texels: 128,
                base_level: 0,
                last_level: 0,
                base_slice: 0,
                last_slice: 0,
            },
            false,
        )
        .unwrap_or_else(|_| panic!("image descriptor refused"));
        assert_eq!(
            u64::from(d[0]) | u64::from(d[1] & 0xff) << 32,
            0x12_3456_7800 >> 8
        );
        assert_eq!(d[1] >> 20 & 0x1ff, 77);
        assert_eq!(((d[1] >> 30) | (d[2] & 0xfff) << 2) + 1, 100);
        assert_eq!((d[2] >> 14 & 0x3fff) + 1, 30);
        assert_eq!(d[3] >> 28, 9);
        assert_eq!((d[4] & 0x3fff) + 1, 128);
        assert_eq!(d[10], 100);
        let s = sampler_descriptor(
            &hipTextureDesc {
                addressMode: [3, 1, 0],
                filterMode: 1,
                normalizedCoords: 1,
                ..Default::default()
            },
            (3, 7),
        )
        .unwrap_or_else(|_| panic!("sampler descriptor refused"));
        assert_eq!(s[0] & 0x1ff, 6 | 2 << 3);
        assert_eq!(s[0] >> 15 & 1, 0);
        assert_eq!(s[2] >> 20 & 3, 1);
        assert_eq!(s[3], 7 | 3 << 30);
        assert!(sampler_descriptor(
            &hipTextureDesc {
                addressMode: [7, 0, 0],
                ..Default::default()
            },
            (0, 0)
        )
        .is_err());
    }

    fn layered_u8x4() -> ImageShape {
        ImageShape {
            base: 0x1000,
            format: ArrayFormat::U8,
            channels: 4,
            width: 16,
            height: 8,
            depth: 6,
            kind: 13,
            pitch_texels: 16,
            base_level: 0,
            last_level: 2,
            base_slice: 0,
            last_slice: 5,
        }
    }

    #[test]
    fn views_reinterpret_same_size_texels_and_select_levels_and_layers() {
        // Every view format of HIP's enum up to Float4 names a kind, a width and 1/2/4 channels
        // in the enum's order: char, short, int in unsigned-signed pairs, then half and float.
        let mut seen = Vec::new();
        for code in 1..=0x18 {
            let (f, c) = view_format(code).unwrap_or_else(|_| panic!("view format {code}"));
            assert_eq!(c, [1, 2, 4][(code as usize - 1) % 3]);
            seen.push((f, c));
        }
        seen.dedup();
        assert_eq!(seen.len(), 24, "24 distinct formats");
        assert!(view_format(0x19).is_err() && view_format(0x23).is_err());

        let mut s = layered_u8x4();
        let v = hipResourceViewDesc {
            format: 0x0d, // one 32-bit unsigned integer: the same 4 bytes
            firstMipmapLevel: 1,
            lastMipmapLevel: 2,
            firstLayer: 2,
            lastLayer: 4,
            ..Default::default()
        };
        assert!(apply_view(&mut s, &v).is_ok());
        assert_eq!((s.format, s.channels), (ArrayFormat::U32, 1));
        assert_eq!((s.base_level, s.last_level), (1, 2));
        assert_eq!((s.base_slice, s.last_slice), (2, 4));
        let d = image_descriptor(&s, false).unwrap_or_else(|_| panic!("image descriptor"));
        assert_eq!(d[3] >> 12 & 15, 1);
        assert_eq!(d[3] >> 16 & 15, 2);
        assert_eq!(d[4] & 0x1fff, 4);
        assert_eq!(d[4] >> 16 & 0x1fff, 2);

        let refused = |v: hipResourceViewDesc| apply_view(&mut layered_u8x4(), &v).is_err();
        // Another texel size, another width, levels or layers past the resource.
        assert!(refused(hipResourceViewDesc {
            format: 0x07,
            ..Default::default()
        }));
        assert!(refused(hipResourceViewDesc {
            width: 15,
            ..Default::default()
        }));
        assert!(refused(hipResourceViewDesc {
            lastMipmapLevel: 3,
            ..Default::default()
        }));
        assert!(refused(hipResourceViewDesc {
            firstLayer: 3,
            lastLayer: 6,
            ..Default::default()
        }));
        // A cube's layers are six faces each.
        let mut cube = ImageShape {
            kind: 11,
            last_slice: 11,
            ..layered_u8x4()
        };
        let one = hipResourceViewDesc {
            firstLayer: 1,
            lastLayer: 1,
            ..Default::default()
        };
        assert!(apply_view(&mut cube, &one).is_ok());
        assert_eq!((cube.base_slice, cube.last_slice), (6, 11));
    }
}
