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
use std::ffi::{c_char, c_int, c_uint, c_void};
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
const RES_ARRAY: c_int = 0;
const RES_MIPMAP: c_int = 1;
const RES_LINEAR: c_int = 2;
const RES_PITCH2D: c_int = 3;

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
    last_level: u32,
}

fn bad(why: String) -> Failure {
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
    d[3] = dst_sel(s.channels) | s.last_level.min(15) << 16 | s.kind << 28;
    d[4] = match s.kind {
        8 | 9 => (s.pitch_texels.max(1) - 1) as u32 & 0x3fff,
        _ => (s.depth.max(1) - 1) as u32 & 0x1fff,
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

/// S# of a texture description.
fn sampler_descriptor(t: &hipTextureDesc) -> Result<[u32; 8], Failure> {
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
    // The three border colours the hardware has without a palette.
    let border = match t.borderColor {
        [0.0, 0.0, 0.0, 0.0] => 0,
        [0.0, 0.0, 0.0, 1.0] => 1,
        [1.0, 1.0, 1.0, 1.0] => 2,
        c => {
            return Err(Failure::new(
                hipErrorNotSupported,
                format!("border colour {c:?}: only (0,0,0,0), (0,0,0,1) and (1,1,1,1) exist"),
            ))
        }
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
    s[3] = border << 30;
    Ok(s)
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
struct TextureRecord {
    res: hipResourceDesc,
    tex: hipTextureDesc,
    view: Option<hipResourceViewDesc>,
}

static TEXTURES: LazyLock<Mutex<HashMap<u64, TextureRecord>>> =
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
            last_level: levels - 1,
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
                        last_level: 0,
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
    matches!(
        format,
        Some(ArrayFormat::U8 | ArrayFormat::I8 | ArrayFormat::U16 | ArrayFormat::I16)
    )
}

fn create_texture(
    res: &hipResourceDesc,
    tex: &hipTextureDesc,
    view: Option<hipResourceViewDesc>,
) -> Result<u64, Failure> {
    let mut dwords = [0u32; 20];
    dwords[..12].copy_from_slice(&resource_dwords(res, normalized_read(res, tex))?);
    dwords[12..].copy_from_slice(&sampler_descriptor(tex)?);
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

fn destroy_texture(object: u64) -> Result<(), Failure> {
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

fn record(object: *mut c_void) -> Result<TextureRecord, Failure> {
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

// ------------------------------------------------------------------------------ references

/// Registers a `texture<>` or `surface<>` variable: the device copy of its reference struct
/// is a variable like any other (binding writes it).
pub(crate) fn register_reference(
    modules: *mut *mut c_void,
    var: *mut c_void,
    device_var: *const c_char,
    size: usize,
) -> Result<(), Failure> {
    if var.is_null() {
        return Err(Failure::null("var"));
    }
    // SAFETY: clang passes the NUL-terminated device name.
    let name = unsafe { crate::c_str(device_var, "deviceVar") }?;
    runtime().register_variable(
        crate::register::fat_binary_id(modules)?,
        var as usize,
        &name,
        size as u64,
    )?;
    Ok(())
}

/// Binds `res` to the reference `tex`: a texture object from the reference's settings, stored
/// in the host struct and in the device variable.
fn bind(tex: *mut textureReference, res: hipResourceDesc) -> Result<(), Failure> {
    if tex.is_null() {
        return Err(Failure::null("tex"));
    }
    // SAFETY: a textureReference by the caller's contract.
    let mut r = unsafe { tex.read() };
    let desc = hipTextureDesc {
        addressMode: r.addressMode,
        filterMode: r.filterMode,
        readMode: r.readMode,
        sRGB: r.sRGB,
        borderColor: [0.0; 4],
        normalizedCoords: r.normalized,
        maxAnisotropy: r.maxAnisotropy,
        mipmapFilterMode: r.mipmapFilterMode,
        mipmapLevelBias: r.mipmapLevelBias,
        minMipmapLevelClamp: r.minMipmapLevelClamp,
        maxMipmapLevelClamp: r.maxMipmapLevelClamp,
    };
    let object = create_texture(&res, &desc, None)?;
    let old = r.textureObject as u64;
    r.textureObject = object as *mut c_void;
    // SAFETY: as above, writable.
    unsafe { tex.write(r) };
    if let Ok(at) = crate::symbol::symbol_range(
        tex as *const c_void,
        std::mem::size_of::<textureReference>(),
        0,
    ) {
        // SAFETY: the registered variable holds a textureReference; the source is ours.
        unsafe {
            crate::memory::copy_of_kind(
                at as *mut c_void,
                (&r as *const textureReference).cast(),
                std::mem::size_of::<textureReference>(),
                None,
                1,
            )
        }?;
    }
    if old != 0 && TEXTURES.lock().contains_key(&old) {
        destroy_texture(old)?;
    }
    Ok(())
}

fn linear_res(
    ptr: *const c_void,
    desc: *const hipChannelFormatDesc,
    size: usize,
) -> Result<hipResourceDesc, Failure> {
    if desc.is_null() {
        return Err(Failure::null("desc"));
    }
    // SAFETY: readable by the caller's contract.
    let d = unsafe { *desc };
    let mut res = hipResourceDesc {
        resType: RES_LINEAR,
        res: [0; 7],
    };
    res.res[0] = ptr as u64;
    // SAFETY: the channel description goes at byte 8 of the union, as HIP lays it out.
    unsafe { std::ptr::write_unaligned(res.res.as_mut_ptr().cast::<u8>().add(8).cast(), d) };
    res.res[4] = size as u64;
    Ok(res)
}

/// `hipError_t hipBindTextureToArray(const textureReference*, hipArray_const_t, const
/// hipChannelFormatDesc*)`.
#[export]
pub unsafe extern "C" fn hipBindTextureToArray(
    tex: *mut textureReference,
    array: *const hipArray,
    _desc: *const hipChannelFormatDesc,
) -> hipError_t {
    call("hipBindTextureToArray", || {
        let mut res = hipResourceDesc {
            resType: RES_ARRAY,
            res: [0; 7],
        };
        res.res[0] = array as u64;
        bind(tex, res)
    })
}

/// `hipError_t hipBindTextureToMipmappedArray(const textureReference*,
/// hipMipmappedArray_const_t, const hipChannelFormatDesc*)`.
#[export]
pub unsafe extern "C" fn hipBindTextureToMipmappedArray(
    tex: *mut textureReference,
    array: *const hipMipmappedArray,
    _desc: *const hipChannelFormatDesc,
) -> hipError_t {
    call("hipBindTextureToMipmappedArray", || {
        let mut res = hipResourceDesc {
            resType: RES_MIPMAP,
            res: [0; 7],
        };
        res.res[0] = array as u64;
        bind(tex, res)
    })
}

/// `hipError_t hipBindTexture(size_t* offset, const textureReference*, const void* devPtr,
/// const hipChannelFormatDesc*, size_t size)`: linear memory; the offset is always 0 (the
/// descriptor takes any address).
#[export]
pub unsafe extern "C" fn hipBindTexture(
    offset: *mut usize,
    tex: *mut textureReference,
    ptr: *const c_void,
    desc: *const hipChannelFormatDesc,
    size: usize,
) -> hipError_t {
    call("hipBindTexture", || {
        bind(tex, linear_res(ptr, desc, size)?)?;
        if !offset.is_null() {
            // SAFETY: writable by the caller's contract.
            unsafe { out(offset, "offset", 0) }?;
        }
        Ok(())
    })
}

/// `hipError_t hipBindTexture2D(size_t* offset, const textureReference*, const void* devPtr,
/// const hipChannelFormatDesc*, size_t width, size_t height, size_t pitch)`.
#[export]
pub unsafe extern "C" fn hipBindTexture2D(
    offset: *mut usize,
    tex: *mut textureReference,
    ptr: *const c_void,
    desc: *const hipChannelFormatDesc,
    width: usize,
    height: usize,
    pitch: usize,
) -> hipError_t {
    call("hipBindTexture2D", || {
        let mut res = linear_res(ptr, desc, 0)?;
        res.resType = RES_PITCH2D;
        res.res[4] = width as u64;
        res.res[5] = height as u64;
        res.res[6] = pitch as u64;
        bind(tex, res)?;
        if !offset.is_null() {
            // SAFETY: writable by the caller's contract.
            unsafe { out(offset, "offset", 0) }?;
        }
        Ok(())
    })
}

/// `hipError_t hipUnbindTexture(const textureReference*)`.
#[export]
pub unsafe extern "C" fn hipUnbindTexture(tex: *mut textureReference) -> hipError_t {
    call("hipUnbindTexture", || {
        if tex.is_null() {
            return Err(Failure::null("tex"));
        }
        // SAFETY: a textureReference by the caller's contract.
        let mut r = unsafe { tex.read() };
        let old = r.textureObject as u64;
        r.textureObject = std::ptr::null_mut();
        // SAFETY: as above.
        unsafe { tex.write(r) };
        if old != 0 && TEXTURES.lock().contains_key(&old) {
            destroy_texture(old)?;
        }
        Ok(())
    })
}

/// `hipError_t hipGetTextureAlignmentOffset(size_t* offset, const textureReference*)`: 0.
#[export]
pub unsafe extern "C" fn hipGetTextureAlignmentOffset(
    offset: *mut usize,
    tex: *const textureReference,
) -> hipError_t {
    call("hipGetTextureAlignmentOffset", || {
        if tex.is_null() {
            return Err(Failure::null("texref"));
        }
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(offset, "offset", 0) }
    })
}

/// `hipError_t hipGetTextureReference(const textureReference**, const void* symbol)`: the
/// reference is the symbol's host variable itself.
#[export]
pub unsafe extern "C" fn hipGetTextureReference(
    texref: *mut *const textureReference,
    symbol: *const c_void,
) -> hipError_t {
    call("hipGetTextureReference", || {
        crate::symbol::symbol_range(symbol, std::mem::size_of::<textureReference>(), 0)?;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(texref, "texref", symbol.cast()) }
    })
}

/// `hipChannelFormatDesc` of an array format, for references bound through the driver API.
#[allow(dead_code)]
fn desc_of(format: ArrayFormat, channels: u32) -> hipChannelFormatDesc {
    channel_desc(format, channels)
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
                last_level: 0,
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
        let s = sampler_descriptor(&hipTextureDesc {
            addressMode: [3, 1, 0],
            filterMode: 1,
            normalizedCoords: 1,
            ..Default::default()
        })
        .unwrap_or_else(|_| panic!("sampler descriptor refused"));
        assert_eq!(s[0] & 0x1ff, 6 | 2 << 3);
        assert_eq!(s[0] >> 15 & 1, 0);
        assert_eq!(s[2] >> 20 & 3, 1);
        assert!(sampler_descriptor(&hipTextureDesc {
            borderColor: [0.5, 0.0, 0.0, 0.0],
            ..Default::default()
        })
        .is_err());
    }
}
