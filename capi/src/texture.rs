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
use rocload_lib::device::image::{
    addressing, buffer_words, clamp, geometry, image_words, sampler_words, BlockCompression,
    ImageError, ImageKind, ImageRequest, ImageShape, SamplerRequest, SamplerState, TexelFormat,
};
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
    /// sRGB: 8-bit unsigned texels read as normalised floats are converted to linear light.
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

pub(crate) fn bad(why: String) -> Failure {
    Failure::new(hipErrorInvalidValue, why)
}

fn image_failure(e: ImageError) -> Failure {
    match e {
        ImageError::Format { .. } => Failure::new(hipErrorNotSupported, e.to_string()),
        ImageError::Shape(why) => bad(why),
    }
}

/// A resource as far as its texels go: where they are, their format and shape, and the range
/// of levels and slices a view leaves visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Resource {
    base: u64,
    format: ArrayFormat,
    channels: u32,
    /// `None`: linear memory (`hipResourceTypeLinear`), read as a buffer.
    kind: Option<ImageKind>,
    width: u64,
    height: u64,
    /// Depth of a 3D array, slices of an array (layers; a cube's are 6 x layers).
    depth: u64,
    /// Level 0's bytes from a row to the next and from a slice to the next.
    row_pitch: u64,
    slice_pitch: u64,
    /// Bytes of linear memory.
    bytes: u64,
    base_level: u32,
    last_level: u32,
    base_slice: u64,
    last_slice: u64,
    /// Read through a block-compressed view: `width` and `height` count texels (4 a block),
    /// the pitches and `format` are the array's (one element a block).
    block: Option<BlockCompression>,
}

impl Resource {
    fn texel_bytes(&self) -> u64 {
        self.format.bytes() * u64::from(self.channels)
    }
}

/// The channel description in a linear or pitch-2D resource (byte 8 of the union).
fn resource_channels(res: &hipResourceDesc) -> Result<(ArrayFormat, u32), Failure> {
    // SAFETY: hipChannelFormatDesc is 20 bytes of ints at byte 8 of the 56-byte union.
    let desc: hipChannelFormatDesc =
        unsafe { std::ptr::read_unaligned(res.res.as_ptr().cast::<u8>().add(8).cast()) };
    format_of(&desc)
}

/// What a resource description names.
fn resource_of(res: &hipResourceDesc) -> Result<Resource, Failure> {
    match res.resType {
        RES_ARRAY | RES_MIPMAP => {
            let (array, base, level, levels) = if res.resType == RES_ARRAY {
                let view = array_of(
                    res.res[0] as *const hipArray,
                    "resDesc.res.array.array",
                    hipErrorInvalidValue,
                )?;
                (view.array().clone(), view.address(), *view.level(), 1)
            } else {
                let a = mipmapped_array_of(res.res[0] as *const hipMipmappedArray)?;
                let l0 = a
                    .levels()
                    .first()
                    .copied()
                    .ok_or_else(|| bad("a mipmapped array without levels".into()))?;
                let n = a.levels().len() as u32;
                (a.clone(), a.base(), l0, n)
            };
            let d = array.descriptor();
            let (height, depth) = (level.height, level.depth);
            let kind = if d.flags.has(ArrayFlags::CUBEMAP) {
                ImageKind::Cube
            } else if d.flags.has(ArrayFlags::LAYERED) {
                if height == 0 {
                    ImageKind::D1Array
                } else {
                    ImageKind::D2Array
                }
            } else if depth > 0 {
                ImageKind::D3
            } else if height > 0 {
                ImageKind::D2
            } else {
                ImageKind::D1
            };
            Ok(Resource {
                base,
                format: d.format,
                channels: d.channels,
                kind: Some(kind),
                width: level.width,
                height: height.max(1),
                depth: depth.max(1),
                row_pitch: level.row_pitch,
                slice_pitch: level.slice_pitch,
                bytes: 0,
                base_level: 0,
                last_level: levels - 1,
                base_slice: 0,
                last_slice: depth.max(1) - 1,
                block: None,
            })
        }
        RES_LINEAR | RES_PITCH2D => {
            let (format, channels) = resource_channels(res)?;
            let ptr = res.res[0];
            if ptr == 0 {
                return Err(Failure::null("resDesc.res.linear.devPtr"));
            }
            let texel = format.bytes() * u64::from(channels);
            let mut r = Resource {
                base: ptr,
                format,
                channels,
                kind: None,
                width: res.res[4] / texel,
                height: 1,
                depth: 1,
                row_pitch: 0,
                slice_pitch: 0,
                bytes: res.res[4],
                base_level: 0,
                last_level: 0,
                base_slice: 0,
                last_slice: 0,
                block: None,
            };
            if res.resType == RES_PITCH2D {
                let (width, height, pitch) = (res.res[4], res.res[5], res.res[6]);
                if pitch % texel != 0 || width.checked_mul(texel).is_none_or(|w| pitch < w) {
                    return Err(bad(format!(
                        "pitch {pitch} for {width} texels of {texel} bytes"
                    )));
                }
                r.kind = Some(ImageKind::D2);
                r.width = width;
                r.height = height;
                r.row_pitch = pitch;
                r.slice_pitch = pitch.saturating_mul(height);
                r.bytes = 0;
            }
            Ok(r)
        }
        t => Err(bad(format!("resource type {t}"))),
    }
}

/// HSA's name for a format: channel type (normalised for 8- and 16-bit integers read as
/// floats) and order (R, RG, RGBA for 1, 2, 4 channels).
fn texel_format(
    format: ArrayFormat,
    channels: u32,
    normalized: bool,
) -> Result<TexelFormat, Failure> {
    use rocload_lib::device::image::channel_order as order;
    use rocload_lib::device::image::channel_type as ty;
    let t = match (format, normalized) {
        (ArrayFormat::I8, true) => ty::SNORM_INT8,
        (ArrayFormat::I16, true) => ty::SNORM_INT16,
        (ArrayFormat::U8, true) => ty::UNORM_INT8,
        (ArrayFormat::U16, true) => ty::UNORM_INT16,
        (ArrayFormat::I8, false) => ty::SIGNED_INT8,
        (ArrayFormat::I16, false) => ty::SIGNED_INT16,
        (ArrayFormat::I32, _) => ty::SIGNED_INT32,
        (ArrayFormat::U8, false) => ty::UNSIGNED_INT8,
        (ArrayFormat::U16, false) => ty::UNSIGNED_INT16,
        (ArrayFormat::U32, _) => ty::UNSIGNED_INT32,
        (ArrayFormat::F16, _) => ty::HALF_FLOAT,
        (ArrayFormat::F32, _) => ty::FLOAT,
    };
    let o = match channels {
        1 => order::R,
        2 => order::RG,
        4 => order::RGBA,
        c => return Err(bad(format!("{c} channels of {format:?}"))),
    };
    TexelFormat::new(t, o).map_err(image_failure)
}

/// 8- and 16-bit integers, which `hipReadModeNormalizedFloat` reads as normalised floats.
fn small_integers(format: ArrayFormat) -> bool {
    matches!(
        format,
        ArrayFormat::U8 | ArrayFormat::I8 | ArrayFormat::U16 | ArrayFormat::I16
    )
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

/// `hipResourceViewFormat`'s block-compressed formats; `None` for the others.
fn block_view(code: c_int) -> Option<BlockCompression> {
    use BlockCompression::*;
    Some(match code {
        0x19 => Bc1,
        0x1a => Bc2,
        0x1b => Bc3,
        0x1c => Bc4,
        0x1d => Bc4Signed,
        0x1e => Bc5,
        0x1f => Bc5Signed,
        0x20 => Bc6h,
        0x21 => Bc6hSigned,
        0x22 => Bc7,
        _ => return None,
    })
}

/// A block-compressed view of a 2D array (or layered or cube array) whose elements are the
/// blocks (8 bytes for BC1 and BC4, 16 for the others: `uint2`, `uint4`), as CUDA defines
/// them: the view is 4 times the array's width and height.
fn apply_block_view(
    s: &mut Resource,
    v: &hipResourceViewDesc,
    kind: BlockCompression,
) -> Result<(), Failure> {
    if !matches!(
        s.kind,
        Some(ImageKind::D2 | ImageKind::D2Array | ImageKind::Cube)
    ) {
        return Err(bad(format!(
            "a block-compressed view of a {:?} resource (2D, layered or cube arrays only)",
            s.kind
        )));
    }
    if s.last_level > 0 {
        return Err(Failure::new(
            hipErrorNotSupported,
            "a block-compressed view of a mipmapped array",
        ));
    }
    let (block, element) = (u64::from(kind.block_bytes()), s.texel_bytes());
    if block != element {
        return Err(bad(format!(
            "view format {:#x} has {block}-byte blocks, the array {element}-byte elements",
            v.format
        )));
    }
    let (w, h) = (s.width.saturating_mul(4), s.height.saturating_mul(4));
    if (v.width != 0 && v.width as u64 != w) || (v.height != 0 && v.height as u64 != h) {
        return Err(bad(format!(
            "block-compressed view of {} x {} texels over {} x {} blocks (4 texels a block)",
            v.width, v.height, s.width, s.height
        )));
    }
    s.block = Some(kind);
    s.width = w;
    s.height = h;
    Ok(())
}

/// Applies a resource view to an array: the texels read as another format of the same size, a
/// range of mip levels, a range of layers.
fn apply_view(s: &mut Resource, v: &hipResourceViewDesc) -> Result<(), Failure> {
    let Some(kind) = s.kind else {
        return Err(bad(
            "a resource view over linear memory (views need an array)".into(),
        ));
    };
    if let Some(kind) = block_view(v.format) {
        apply_block_view(s, v, kind)?;
    } else if v.format != 0 {
        let (format, channels) = view_format(v.format)?;
        let (new, old) = (format.bytes() * u64::from(channels), s.texel_bytes());
        if new != old {
            return Err(bad(format!(
                "view format {:#x} has {new}-byte texels, the resource {old}-byte ones",
                v.format
            )));
        }
        s.format = format;
        s.channels = channels;
    }
    let one_d = matches!(kind, ImageKind::D1 | ImageKind::D1Array);
    let size_differs = s.block.is_none()
        && ((v.width != 0 && v.width as u64 != s.width)
            || (v.height != 0 && !one_d && v.height as u64 != s.height));
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
    if !kind.layered() {
        if v.firstLayer != 0 || v.lastLayer != 0 {
            return Err(bad("a layer range on a resource without layers".into()));
        }
        return Ok(());
    }
    // A cube's layers are groups of six faces.
    let per = if kind == ImageKind::Cube { 6 } else { 1 };
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

/// `BORDER_COLOR_TYPE` and `BORDER_COLOR_PTR` of a texture's border colour: one of the three
/// constants where it is one (or where no axis uses the border), else an entry of the
/// device's table holding the channel values as the texture reads them (float bits for float
/// and normalised reads, integers for integer reads).
fn border_fields(t: &hipTextureDesc, format: TexelFormat) -> Result<(u32, u32), Failure> {
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
    use rocload_lib::device::image::channel_type as ty;
    let signed = matches!(
        format.channel_type(),
        ty::SIGNED_INT8 | ty::SIGNED_INT16 | ty::SIGNED_INT32
    );
    let dwords = c.map(|v| match (format.reads_floats(), signed) {
        (true, _) => v.to_bits(),
        (false, true) => v as i32 as u32,
        (false, false) => v as u32,
    });
    let index = runtime().border_color(current_device(), dwords)?;
    Ok((3, index))
}

/// The S# state of a texture description (`border`: type and table entry).
fn sampler_state(t: &hipTextureDesc, border: (u32, u32)) -> Result<SamplerState, Failure> {
    let mode = |m: c_int| -> Result<u32, Failure> {
        Ok(match m {
            0 => clamp::WRAP,
            1 => clamp::LAST_TEXEL,
            2 => clamp::MIRROR,
            3 => clamp::BORDER,
            m => return Err(bad(format!("address mode {m}"))),
        })
    };
    let linear = match t.filterMode {
        0 => false,
        1 => true,
        m => return Err(bad(format!("filter mode {m}"))),
    };
    let mip = match t.mipmapFilterMode {
        0 => 1,
        1 => 2,
        m => return Err(bad(format!("mipmap filter mode {m}"))),
    };
    Ok(SamplerState {
        address: [
            mode(t.addressMode[0])?,
            mode(t.addressMode[1])?,
            mode(t.addressMode[2])?,
        ],
        unnormalized: t.normalizedCoords == 0,
        linear,
        mip,
        min_lod: t.minMipmapLevelClamp,
        max_lod: if t.maxMipmapLevelClamp > 0.0 {
            t.maxMipmapLevelClamp
        } else {
            15.0
        },
        bias: t.mipmapLevelBias,
        border_type: border.0,
        border_ptr: border.1,
        max_aniso: t.maxAnisotropy,
    })
}

/// The 12 image (or buffer) dwords of a resource on a device whose descriptors rocload builds.
fn soft_image_words(r: &Resource, format: TexelFormat) -> Result<[u32; 12], Failure> {
    let Some(kind) = r.kind else {
        return buffer_words(r.base, format, r.bytes).map_err(image_failure);
    };
    let texel = r.texel_bytes();
    let shape = ImageShape {
        base: r.base,
        format,
        width: r.width,
        height: r.height,
        depth: r.depth,
        kind,
        // A compressed row of blocks is 4 texels a block.
        pitch_texels: r.row_pitch / texel.max(1) * if r.block.is_some() { 4 } else { 1 },
        base_level: r.base_level,
        last_level: r.last_level,
        base_slice: r.base_slice,
        last_slice: r.last_slice,
    };
    image_words(&shape).map_err(image_failure)
}

/// What the device's runtime is asked for an image of a resource (ROCr's image extension):
/// single-level images of the HSA geometries, over the resource's own memory and pitches.
fn image_request(
    r: &Resource,
    format: TexelFormat,
    writable: bool,
) -> Result<ImageRequest, Failure> {
    let not_on_rocr = |what: &str| {
        Failure::new(
            hipErrorNotSupported,
            format!("{what}: ROCr's image extension has none (HIP on ROCm refuses it too)"),
        )
    };
    if r.last_level > 0 || r.base_level > 0 {
        return Err(not_on_rocr("mip levels"));
    }
    if format.block().is_some() {
        return Err(not_on_rocr("block-compressed texels"));
    }
    if format.is_srgb() && format.channels() < 4 {
        return Err(not_on_rocr(
            "sRGB of one or two channels (HSA's sRGB orders have four)",
        ));
    }
    let layers = r.last_slice - r.base_slice + 1;
    let data = r.base + r.base_slice * r.slice_pitch;
    // A layer range is the layers' own memory; an image starts at a 256-byte boundary.
    if data % 256 != 0 {
        return Err(Failure::new(
            hipErrorNotSupported,
            format!(
                "a view from layer {} of {}-byte layers: ROCr's images start at 256-byte boundaries",
                r.base_slice, r.slice_pitch
            ),
        ));
    }
    let (geometry, height, depth, array_size) = match r.kind {
        None => (geometry::D1_BUFFER, 0, 0, 0),
        Some(ImageKind::D1) => (geometry::D1, 0, 0, 0),
        Some(ImageKind::D2) => (geometry::D2, r.height, 0, 0),
        Some(ImageKind::D3) => (geometry::D3, r.height, r.depth, 0),
        Some(ImageKind::D1Array) => (geometry::D1_ARRAY, 0, 0, layers),
        Some(ImageKind::D2Array) => (geometry::D2_ARRAY, r.height, 0, layers),
        Some(ImageKind::Cube) => return Err(not_on_rocr("cube maps")),
    };
    Ok(ImageRequest {
        geometry,
        width: r.width,
        height,
        depth,
        array_size,
        format,
        data,
        row_pitch: r.row_pitch,
        slice_pitch: if r.kind.is_some_and(|k| k != ImageKind::D2) {
            r.slice_pitch
        } else {
            0
        },
        writable,
    })
}

/// What the device's runtime is asked for a sampler: one address mode for every axis the
/// resource has (HSA has no other), filtering, coordinates, and no border colour but
/// transparent black.
fn sampler_request(t: &hipTextureDesc, r: &Resource) -> Result<SamplerRequest, Failure> {
    let axes = match r.kind {
        None => 0,
        Some(ImageKind::D1 | ImageKind::D1Array) => 1,
        Some(ImageKind::D3) => 3,
        Some(_) => 2,
    };
    let modes = &t.addressMode[..axes];
    if modes.iter().any(|&m| m != t.addressMode[0]) {
        return Err(Failure::new(
            hipErrorNotSupported,
            format!("address modes {modes:?}: ROCr's samplers have one mode for every axis"),
        ));
    }
    if modes.contains(&3) && t.borderColor != [0.0; 4] {
        return Err(Failure::new(
            hipErrorNotSupported,
            format!(
                "border colour {:?}: ROCr's samplers have transparent black only",
                t.borderColor
            ),
        ));
    }
    if t.maxAnisotropy > 1 {
        return Err(Failure::new(
            hipErrorNotSupported,
            format!(
                "maxAnisotropy {}: ROCr's samplers have no anisotropic filtering",
                t.maxAnisotropy
            ),
        ));
    }
    let normalized = t.normalizedCoords != 0;
    // As HIP: linear memory is read unfiltered, unnormalised coordinates cannot wrap or mirror
    // (clamp to edge instead).
    let address = match (axes, t.addressMode[0], normalized) {
        (0, ..) => addressing::UNDEFINED,
        (_, 0 | 2, false) | (_, 1, _) => addressing::CLAMP_TO_EDGE,
        (_, 0, true) => addressing::REPEAT,
        (_, 2, true) => addressing::MIRRORED_REPEAT,
        (_, 3, _) => addressing::CLAMP_TO_BORDER,
        (_, m, _) => return Err(bad(format!("address mode {m}"))),
    };
    let linear = match t.filterMode {
        0 => false,
        1 => axes > 0,
        m => return Err(bad(format!("filter mode {m}"))),
    };
    Ok(SamplerRequest {
        normalized,
        linear,
        address,
    })
}

/// Descriptors the device's runtime made for an object, destroyed with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Made {
    device: i64,
    image: u64,
    sampler: Option<u64>,
}

impl Made {
    fn destroy(&self) -> Result<(), Failure> {
        let rt = runtime();
        let image = rt.destroy_image(self.device, self.image);
        if let Some(s) = self.sampler {
            rt.destroy_sampler(self.device, s)?;
        }
        Ok(image?)
    }
}

/// The 20 dwords of a texture object (12 image, 4 sampler) and what the device's runtime made.
fn texture_words(
    res: &hipResourceDesc,
    tex: &hipTextureDesc,
    view: Option<&hipResourceViewDesc>,
) -> Result<([u32; 20], Option<Made>), Failure> {
    let mut r = resource_of(res)?;
    if let Some(v) = view {
        if r.kind.is_none() || res.resType == RES_PITCH2D {
            return Err(bad(
                "a resource view over linear or pitched memory (views need an array)".into(),
            ));
        }
        apply_view(&mut r, v)?;
    }
    let normalized = tex.readMode == 1 && small_integers(r.format);
    let mut format = match r.block {
        Some(b) => TexelFormat::block_compressed(b),
        None => texel_format(r.format, r.channels, normalized)?,
    };
    if tex.sRGB != 0 {
        // sRGB is a way of reading 8-bit unsigned texels as normalised floats.
        format = format.srgb().map_err(|_| {
            Failure::new(
                hipErrorNotSupported,
                format!(
                    "sRGB reads of {} x {:?} texels read as {}: sRGB needs 8-bit unsigned ones read as normalised floats",
                    r.channels,
                    r.format,
                    if normalized { "normalised floats" } else { "elements" }
                ),
            )
        })?;
    }
    let device = current_device();
    let mut words = [0u32; 20];
    if !runtime().device_makes_images(device)? {
        words[..12].copy_from_slice(&soft_image_words(&r, format)?);
        let state = sampler_state(tex, border_fields(tex, format)?)?;
        words[12..16].copy_from_slice(&sampler_words(&state));
        return Ok((words, None));
    }
    let request = image_request(&r, format, false)?;
    let sampler = sampler_request(tex, &r)?;
    let rt = runtime();
    let (image, image_words) = rt.create_image(device, &request)?;
    let (sampler, sampler_words) = match rt.create_sampler(device, &sampler) {
        Ok(s) => s,
        Err(e) => {
            let _ = rt.destroy_image(device, image);
            return Err(e.into());
        }
    };
    words[..12].copy_from_slice(&image_words);
    words[12..16].copy_from_slice(&sampler_words);
    Ok((
        words,
        Some(Made {
            device,
            image,
            sampler: Some(sampler),
        }),
    ))
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
    made: Option<Made>,
}

pub(crate) static TEXTURES: LazyLock<Mutex<HashMap<u64, TextureRecord>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
/// Live surface objects: what each was made from, and what the device's runtime made.
type SurfaceTable = HashMap<u64, (hipResourceDesc, Option<Made>)>;
static SURFACES: LazyLock<Mutex<SurfaceTable>> = LazyLock::new(|| Mutex::new(HashMap::new()));

pub(crate) fn create_texture(
    res: &hipResourceDesc,
    tex: &hipTextureDesc,
    view: Option<hipResourceViewDesc>,
) -> Result<u64, Failure> {
    let (words, made) = texture_words(res, tex, view.as_ref())?;
    let address = match upload(&words) {
        Ok(a) => a,
        Err(e) => {
            if let Some(m) = made {
                let _ = m.destroy();
            }
            return Err(e);
        }
    };
    TEXTURES.lock().insert(
        address,
        TextureRecord {
            res: *res,
            tex: *tex,
            view,
            made,
        },
    );
    tracing::debug!("texture object {address:#x}: {:08x?}", words);
    Ok(address)
}

pub(crate) fn destroy_texture(object: u64) -> Result<(), Failure> {
    let Some(record) = TEXTURES.lock().remove(&object) else {
        return Err(bad(format!("{object:#x} is not a live texture object")));
    };
    runtime().free(object)?;
    if let Some(m) = record.made {
        m.destroy()?;
    }
    Ok(())
}

/// The 12 dwords of a surface object (arrays only, as in HIP) and what the device's runtime
/// made.
fn surface_words(res: &hipResourceDesc) -> Result<([u32; 12], Option<Made>), Failure> {
    if res.resType != RES_ARRAY {
        return Err(bad(format!("surface over resource type {}", res.resType)));
    }
    let r = resource_of(res)?;
    let format = texel_format(r.format, r.channels, false)?;
    let device = current_device();
    if !runtime().device_makes_images(device)? {
        return Ok((soft_image_words(&r, format)?, None));
    }
    let (image, words) = runtime().create_image(device, &image_request(&r, format, true)?)?;
    Ok((
        words,
        Some(Made {
            device,
            image,
            sampler: None,
        }),
    ))
}

/// What clr asks of linear memory made a texture object (hipamd 5.2.3's
/// `ihipCreateTextureObject` and ROCclr's image checks): a base aligned to `textureAlignment`
/// and at least one texel, no more than `maxTexture1DLinear` bytes. Texture references bound
/// to linear memory (`hipBindTexture`) are not held to the alignment: rocload's buffers start
/// anywhere, so their offset is 0.
fn check_linear_object(res: &hipResourceDesc) -> Result<(), Failure> {
    if res.resType != RES_LINEAR {
        return Ok(());
    }
    let (ptr, bytes) = (res.res[0], res.res[4]);
    let props = crate::device::properties(current_device())?;
    let align = props.textureAlignment.max(1) as u64;
    if ptr % align != 0 {
        return Err(bad(format!(
            "linear memory at {ptr:#x} is not aligned to the device's textureAlignment ({align})"
        )));
    }
    let (format, channels) = resource_channels(res)?;
    let texel = format.bytes() * u64::from(channels);
    let max = u64::try_from(props.maxTexture1DLinear).unwrap_or(0);
    if bytes < texel || bytes > max {
        return Err(bad(format!(
            "{bytes} bytes of linear memory: a texture reads 1 to {max} bytes of {texel}-byte texels"
        )));
    }
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
        check_linear_object(&r)?;
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
        let r = resource_of_driver(&r)?;
        check_linear_object(&r)?;
        let address = create_texture(&r, &texture_of_driver(&t), v)?;
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
        let (words, made) = surface_words(&r)?;
        let address = match upload(&words) {
            Ok(a) => a,
            Err(e) => {
                if let Some(m) = made {
                    let _ = m.destroy();
                }
                return Err(e);
            }
        };
        SURFACES.lock().insert(address, (r, made));
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
        let Some((_, made)) = SURFACES.lock().remove(&(object as u64)) else {
            return Err(bad(format!("{object:p} is not a live surface object")));
        };
        runtime().free(object as u64)?;
        if let Some(m) = made {
            m.destroy()?;
        }
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

    fn layered_u8x4() -> Resource {
        Resource {
            base: 0x1000,
            format: ArrayFormat::U8,
            channels: 4,
            kind: Some(ImageKind::D2Array),
            width: 16,
            height: 8,
            depth: 6,
            row_pitch: 64,
            slice_pitch: 512,
            bytes: 0,
            base_level: 0,
            last_level: 2,
            base_slice: 0,
            last_slice: 5,
            block: None,
        }
    }

    #[test]
    fn block_compressed_views_are_four_texels_a_block_of_the_arrays_elements() {
        // A 2D array of 3 x 2 uint4 (16-byte) elements.
        let r = Resource {
            format: ArrayFormat::U32,
            kind: Some(ImageKind::D2),
            width: 3,
            height: 2,
            depth: 1,
            row_pitch: 48,
            slice_pitch: 96,
            last_level: 0,
            last_slice: 0,
            ..layered_u8x4()
        };
        let view = |format: c_int, width: usize, height: usize| {
            let mut s = r;
            let v = hipResourceViewDesc {
                format,
                width,
                height,
                ..Default::default()
            };
            apply_view(&mut s, &v).map(|()| s)
        };
        let bc3 = view(0x1b, 12, 8).unwrap_or_else(|f| panic!("{}", f.message));
        assert_eq!(
            (bc3.width, bc3.height, bc3.block),
            (12, 8, Some(BlockCompression::Bc3))
        );
        assert_eq!(view(0x1b, 0, 0).ok(), Some(bc3));
        let e = |r: Result<Resource, Failure>| r.unwrap_err().code;
        assert_eq!(e(view(0x1b, 11, 8)), hipErrorInvalidValue);
        // BC1's 8-byte blocks over 16-byte elements.
        assert_eq!(e(view(0x19, 12, 8)), hipErrorInvalidValue);
        // BC6H and BC7: 16-byte blocks, half floats and unorm (or sRGB) RGBA.
        use BlockCompression::{Bc6h, Bc6hSigned, Bc7};
        for (code, kind, fmt) in [(0x20, Bc6h, 179), (0x21, Bc6hSigned, 180), (0x22, Bc7, 181)] {
            let s = view(code, 12, 8).unwrap_or_else(|f| panic!("{}", f.message));
            assert_eq!(s.block, Some(kind));
            let format = TexelFormat::block_compressed(kind);
            assert_eq!(format.format_code(), fmt);
            assert!(format.reads_floats());
            assert_eq!(
                format.srgb().map(|f| f.format_code()).ok(),
                (kind == Bc7).then_some(182)
            );
            assert_eq!(e(view(code, 12, 4)), hipErrorInvalidValue);
        }
        // A mipmapped array.
        let mut m = r;
        m.last_level = 1;
        assert_eq!(
            e(apply_view(
                &mut m,
                &hipResourceViewDesc {
                    format: 0x1b,
                    ..Default::default()
                }
            )
            .map(|()| m)),
            hipErrorNotSupported
        );
        let format = TexelFormat::block_compressed(BlockCompression::Bc3);
        let words = soft_image_words(&bc3, format).unwrap_or_else(|f| panic!("{}", f.message));
        // Pitch: 3 blocks a row, 12 texels.
        assert_eq!((words[4] & 0x3fff) + 1, 12);
        assert_eq!(words[1] >> 20 & 0x1ff, 173);
        assert_eq!(format.srgb().unwrap().format_code(), 174);
        assert!(TexelFormat::block_compressed(BlockCompression::Bc4)
            .srgb()
            .is_err());
    }

    #[test]
    fn views_reinterpret_same_size_texels_and_select_levels_and_layers() {
        // Every view format of HIP's enum up to Float4 names 1/2/4 channels in the enum's
        // order, and 24 distinct formats in all.
        let mut seen = Vec::new();
        for code in 1..=0x18 {
            let (f, c) = view_format(code).unwrap_or_else(|_| panic!("view format {code}"));
            assert_eq!(c, [1, 2, 4][(code as usize - 1) % 3]);
            assert!(!seen.contains(&(f, c)), "view format {code} repeats");
            seen.push((f, c));
        }
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
        let f = texel_format(s.format, s.channels, false).unwrap_or_else(|_| panic!("format"));
        let d = soft_image_words(&s, f).unwrap_or_else(|_| panic!("image words"));
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
        let mut cube = Resource {
            kind: Some(ImageKind::Cube),
            depth: 12,
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

    #[test]
    fn rocr_requests_follow_hsa_geometries_and_refuse_what_hsa_lacks() {
        let f = texel_format(ArrayFormat::F32, 1, false).unwrap_or_else(|_| panic!("format"));
        let mut r = Resource {
            format: ArrayFormat::F32,
            channels: 1,
            last_level: 0,
            ..layered_u8x4()
        };
        r.base_slice = 2;
        r.last_slice = 4;
        let q = image_request(&r, f, false).unwrap_or_else(|_| panic!("request"));
        // Layers 2..=4: the data starts at layer 2, three layers.
        assert_eq!(
            (q.geometry, q.array_size, q.data),
            (geometry::D2_ARRAY, 3, 0x1000 + 2 * 512)
        );
        assert_eq!((q.row_pitch, q.slice_pitch), (64, 512));
        let mips = Resource { last_level: 1, ..r };
        assert!(image_request(&mips, f, false).is_err());
        let cube = Resource {
            kind: Some(ImageKind::Cube),
            ..r
        };
        assert!(image_request(&cube, f, false).is_err());
        // One address mode for the axes in use; unnormalised wrap becomes clamp, as HIP.
        let t = hipTextureDesc {
            addressMode: [0, 0, 3],
            filterMode: 1,
            ..Default::default()
        };
        let s = sampler_request(&t, &r).unwrap_or_else(|_| panic!("sampler"));
        assert_eq!(
            (s.address, s.linear, s.normalized),
            (addressing::CLAMP_TO_EDGE, true, false)
        );
        let mixed = hipTextureDesc {
            addressMode: [0, 1, 0],
            ..t
        };
        assert!(sampler_request(&mixed, &r).is_err());
        let coloured = hipTextureDesc {
            addressMode: [3, 3, 3],
            borderColor: [0.0, 0.0, 0.0, 1.0],
            ..t
        };
        assert!(sampler_request(&coloured, &r).is_err());
    }
}
