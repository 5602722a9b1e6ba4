//! HSA's image extension for the software agent (`hsa_ext_image_*`, `hsa_ext_sampler_*`, the
//! table `hsa_system_get_major_extension_table(HSA_EXTENSION_IMAGES, 1, ...)` gives, and the
//! image limits of `hsa_agent_get_info` and `hsa_amd_image_get_info_max_dim`), following
//! ROCr's image library (`image/image_runtime.cpp`, `image_manager_nv.cpp`, `image_lut_kv.cpp`)
//! for what is checked, the limits and the descriptor fields, with the software agent's layout:
//!
//! - An image's data is linear: rows of `row_pitch` bytes (1D and 2D may be pitched; 3D and
//!   arrays are tightly packed, as the emulator's T# has no pitch for them), slices of
//!   `row_pitch x height`. The opaque layout is the tight linear one; its alignment 256 bytes
//!   (the T# holds the base address >> 8). A pitch the descriptor cannot express is
//!   `HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED`, as ROCr answers a pitch addrlib would not
//!   choose.
//! - Formats: 8/16/32-bit normalised and integer, half and float channel types in the orders
//!   A, R, RX, RG, RGX, RA, RGBA, BGRA, ARGB, ABGR, INTENSITY, LUMINANCE (the emulator reads
//!   them with its format codes and destination selects); others are unsupported.
//! - Descriptors come from `rocload::device::image` (the same builder the HIP texture API uses
//!   on the software agent), 12 dwords: T# (a V# for `1DB`), channel type, order, width, as
//!   ROCr's `PopulateImageSrd` fills them (a `1DB` V#'s record count is in elements, which the
//!   emulator's structured-buffer check counts). Samplers as ROCr's `PopulateSamplerSrd`: one
//!   address mode for every axis, the filter for magnification and minification, no mip or z
//!   filter, `MAX_LOD` 4095, transparent black borders.
//! - An image or sampler object's descriptor dwords live in device memory of the agent (as
//!   ROCr keeps them in memory the GPU reads); the handle is their address, as ROCr's handles
//!   are. Clients read them on the host (HIP copies them into its
//!   texture objects) or pass the handle to kernels (AMD's HIP runtime's image blit kernels
//!   load the descriptor from it).
//! - `hsa_ext_image_copy`, `import`, `export` and `clear` are host copies of the texel rows
//!   (ROCr runs blit kernels), each row checked as `hsa_memory_copy` checks its ranges.
//! - `hsa_amd_image_create` (images from a graphics driver's metadata) answers
//!   `HSA_STATUS_ERROR_INVALID_ARGUMENT`: no metadata can come from a driver here.

use std::collections::HashMap;
use std::ffi::c_void;

use hsa_sys::*;
use parking_lot::Mutex;
use rocload::device::image::{
    buffer_words, geometry, image_words, ImageKind, ImageShape, TexelFormat,
};

use rocload::device::{Device, MemoryKind};

use crate::agents::agent_index;
use crate::runtime::{runtime, Runtime};
use crate::util::{guard, put, Status};

/// Live objects at most (each holds a few dozen bytes of the agent's memory).
const MAX_OBJECTS: usize = 1 << 20;

/// ROCr's limits per geometry (`image_lut_kv.cpp`: width, height, depth, layers).
const MAX_DIMENSIONS: [[u64; 4]; 8] = [
    [16384, 1, 1, 1],
    [16384, 16384, 1, 1],
    [16384, 16384, 8192, 1],
    [16384, 1, 1, 8192],
    [16384, 16384, 1, 8192],
    [4294967295, 1, 1, 1],
    [16384, 16384, 1, 1],
    [16384, 16384, 1, 8192],
];

/// An image object: the agent whose memory holds its descriptor (at the handle), its format
/// and layout.
#[derive(Debug, Clone, Copy)]
struct ImageObject {
    agent: usize,
    format: TexelFormat,
    layout: Layout,
}

/// Live image objects and samplers (the agent holding each sampler's descriptor), by handle.
static IMAGES: Mutex<Option<HashMap<u64, ImageObject>>> = Mutex::new(None);
static SAMPLERS: Mutex<Option<HashMap<u64, usize>>> = Mutex::new(None);

/// Puts descriptor dwords in device memory of agent `a`; returns their address (the handle).
/// (Device memory, not the host heap, which a client's stale locked ranges may cover.)
fn place_words(rt: &Runtime, a: usize, words: &[u32]) -> Status<u64> {
    let (soft, _) = rt.agents[a].gpu().ok_or(HSA_STATUS_ERROR_INVALID_AGENT)?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let block = soft
        .allocate(bytes.len() as u64, MemoryKind::Device)
        .map_err(|e| {
            tracing::debug!(error = %e, "no memory for a descriptor");
            HSA_STATUS_ERROR_OUT_OF_RESOURCES
        })?;
    // The software agent's device memory is this process's memory: written directly (a
    // checked copy could take the local source for a freed guest range it happens to reuse).
    // SAFETY: the block was just allocated with bytes.len() bytes, and nothing else uses it.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), block.base as *mut u8, bytes.len()) };
    Ok(block.base)
}

/// Frees the descriptor memory at `handle` of agent `a`.
fn free_words(rt: &Runtime, a: usize, handle: u64) {
    if let Some((soft, _)) = rt.agents[a].gpu() {
        if let Err(e) = soft.free(handle) {
            tracing::debug!(error = %e, handle, "freeing a descriptor");
        }
    }
}

/// Where an image's texels are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    geometry: u32,
    data: u64,
    width: u64,
    /// Rows per slice.
    rows: u64,
    /// Slices (3D depth, layers), at least 1.
    slices: u64,
    row_pitch: u64,
    slice_pitch: u64,
    texel: u64,
}

impl Layout {
    fn size(&self) -> u64 {
        self.slice_pitch.saturating_mul(self.slices)
    }
}

/// The software GPU agent `agent` names.
fn gpu(rt: &Runtime, agent: hsa_agent_t) -> Status<usize> {
    let i = agent_index(agent, rt.agents.len())?;
    match rt.agents[i].gpu() {
        Some(_) => Ok(i),
        None => Err(HSA_STATUS_ERROR_INVALID_AGENT),
    }
}

fn texel_format(f: &hsa_ext_image_format_t) -> Status<TexelFormat> {
    TexelFormat::new(f.channel_type, f.channel_order)
        .map_err(|_| HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED)
}

/// The layout of an image of `desc` over `data` with the caller's pitches (0: tight).
fn layout(
    desc: &hsa_ext_image_descriptor_t,
    data: u64,
    row_pitch: usize,
    slice_pitch: usize,
) -> Status<(TexelFormat, Layout)> {
    let format = texel_format(&desc.format)?;
    let g = desc.geometry;
    if g > geometry::D1_BUFFER {
        // The depth geometries need depth formats, which the emulator has none of.
        return Err(if g <= 7 {
            HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED
        } else {
            HSA_STATUS_ERROR_INVALID_ARGUMENT
        });
    }
    let [mw, mh, md, ml] = MAX_DIMENSIONS[g as usize];
    let (w, h, d, l) = (
        desc.width as u64,
        desc.height as u64,
        desc.depth as u64,
        desc.array_size as u64,
    );
    if w == 0 {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let rows = match g {
        geometry::D2 | geometry::D3 | geometry::D2_ARRAY => h,
        _ => 1,
    };
    let slices = match g {
        geometry::D3 => d,
        geometry::D1_ARRAY | geometry::D2_ARRAY => l,
        _ => 1,
    };
    let max_slices = match g {
        geometry::D3 => md,
        geometry::D1_ARRAY | geometry::D2_ARRAY => ml,
        _ => 1,
    };
    if w > mw || rows > mh || slices > max_slices || rows == 0 || slices == 0 {
        return Err(HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED);
    }
    let texel = u64::from(format.texel_bytes());
    let tight = w
        .checked_mul(texel)
        .ok_or(HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED)?;
    // A buffer image has no rows: ROCr ignores the pitch given for it.
    let row = if row_pitch == 0 || g == geometry::D1_BUFFER {
        tight
    } else {
        row_pitch as u64
    };
    let pitched = matches!(g, geometry::D1 | geometry::D2);
    let row_ok = row >= tight
        && row % texel == 0
        && (pitched || row == tight)
        && row / texel <= rocload::device::image::MAX_SIDE;
    if !row_ok {
        return Err(HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED);
    }
    let tight_slice = row
        .checked_mul(rows)
        .ok_or(HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED)?;
    let slice = if slice_pitch == 0 {
        tight_slice
    } else {
        slice_pitch as u64
    };
    if (slices > 1 && slice != tight_slice) || slice < tight_slice {
        return Err(HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED);
    }
    let l = Layout {
        geometry: g,
        data,
        width: w,
        rows,
        slices,
        row_pitch: row,
        slice_pitch: slice,
        texel,
    };
    slice
        .checked_mul(slices)
        .ok_or(HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED)?;
    Ok((format, l))
}

/// The 12 dwords of an image.
fn words(format: TexelFormat, l: &Layout) -> Status<[u32; 12]> {
    let refused = |e: rocload::device::image::ImageError| {
        tracing::debug!(error = %e, "image descriptor refused");
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    };
    if l.geometry == geometry::D1_BUFFER {
        return buffer_words(l.data, format, l.width * l.texel).map_err(refused);
    }
    let kind = match l.geometry {
        geometry::D1 => ImageKind::D1,
        geometry::D2 => ImageKind::D2,
        geometry::D3 => ImageKind::D3,
        geometry::D1_ARRAY => ImageKind::D1Array,
        _ => ImageKind::D2Array,
    };
    let shape = ImageShape::new(
        l.data,
        format,
        kind,
        [l.width, l.rows, l.slices],
        l.row_pitch / l.texel,
    );
    image_words(&shape).map_err(refused)
}

/// # Safety
/// `desc` is NULL (refused) or readable.
unsafe fn read<T: Copy>(p: *const T) -> Status<T> {
    if p.is_null() {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { p.read_unaligned() })
}

/// A copy of the image object behind `handle`, made on `agent`.
fn image_of(agent: usize, handle: u64) -> Status<(TexelFormat, Layout)> {
    let images = IMAGES.lock();
    let o = images
        .as_ref()
        .and_then(|m| m.get(&handle))
        .filter(|o| o.agent == agent)
        .ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
    Ok((o.format, o.layout))
}

/// The texel rows of `region` of an image: (address, bytes) per row.
fn rows_of(l: &Layout, offset: &hsa_dim3_t, range: &hsa_dim3_t) -> Status<Vec<(u64, u64)>> {
    let (x, y, z) = (
        u64::from(offset.x),
        u64::from(offset.y),
        u64::from(offset.z),
    );
    let (w, h, d) = (
        u64::from(range.x),
        u64::from(range.y).max(1),
        u64::from(range.z).max(1),
    );
    let fits = |o: u64, n: u64, limit: u64| o.checked_add(n).is_some_and(|e| e <= limit);
    if range.x == 0 || !fits(x, w, l.width) || !fits(y, h, l.rows) || !fits(z, d, l.slices) {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if h.saturating_mul(d) > 1 << 24 {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let mut rows = Vec::new();
    rows.try_reserve_exact((h * d) as usize)
        .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    for s in z..z + d {
        for r in y..y + h {
            rows.push((
                l.data + s * l.slice_pitch + r * l.row_pitch + x * l.texel,
                w * l.texel,
            ));
        }
    }
    Ok(rows)
}

/// Copies row by row, each checked as `hsa_memory_copy` checks its ranges.
///
/// # Safety
/// Host memory outside the library's tables is the caller's, valid for the rows.
unsafe fn copy_rows(rt: &Runtime, pairs: impl Iterator<Item = (u64, u64, u64)>) -> Status {
    for (dst, src, len) in pairs {
        // SAFETY: the caller's contract, passed on.
        unsafe { crate::memory::checked_copy(rt, dst, src, len, false) }?;
    }
    Ok(())
}

/// Encodes one channel of a clear value (`data` holds four 32-bit values: floats for float
/// and normalised types, integers for the others) into `bytes` little-endian bytes.
fn encode(format: TexelFormat, raw: u32) -> u32 {
    use rocload::device::image::channel_type as ty;
    let f = f32::from_bits(raw);
    let norm = |scale: f32, lo: f32| (f.clamp(lo, 1.0) * scale).round_ties_even() as i32 as u32;
    match format.channel_type() {
        ty::UNORM_INT8 => norm(255.0, 0.0),
        ty::UNORM_INT16 => norm(65535.0, 0.0),
        ty::SNORM_INT8 => norm(127.0, -1.0) & 0xff,
        ty::SNORM_INT16 => norm(32767.0, -1.0) & 0xffff,
        ty::HALF_FLOAT => u32::from(f16_bits(f)),
        ty::FLOAT => raw,
        ty::SIGNED_INT8 => (raw as i32).clamp(-128, 127) as u32 & 0xff,
        ty::SIGNED_INT16 => (raw as i32).clamp(-32768, 32767) as u32 & 0xffff,
        ty::UNSIGNED_INT8 => raw.min(0xff),
        ty::UNSIGNED_INT16 => raw.min(0xffff),
        _ => raw,
    }
}

/// IEEE half of `f`, rounded to nearest even.
fn f16_bits(f: f32) -> u16 {
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rest = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let round = u32::from(rest > mid || (rest == mid && half & 1 == 1));
        return sign | (half + round) as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    let round = u32::from(rest > 0x1000 || (rest == 0x1000 && half & 1 == 1));
    sign | (half + round) as u16
}

/// The ROCr sampler descriptor of an HSA sampler description (`PopulateSamplerSrd`).
fn sampler_words(desc: &hsa_ext_sampler_descriptor_t) -> Status<[u32; 8]> {
    use rocload::device::image::clamp;
    let c = match desc.address_mode {
        HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_EDGE => clamp::LAST_TEXEL,
        HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_BORDER => clamp::BORDER,
        HSA_EXT_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT => clamp::MIRROR,
        HSA_EXT_SAMPLER_ADDRESSING_MODE_UNDEFINED | HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT => {
            clamp::WRAP
        }
        _ => return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
    };
    let filter = match desc.filter_mode {
        HSA_EXT_SAMPLER_FILTER_MODE_NEAREST => 0,
        HSA_EXT_SAMPLER_FILTER_MODE_LINEAR => 1,
        _ => return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
    };
    let unnormalized = match desc.coordinate_mode {
        HSA_EXT_SAMPLER_COORDINATE_MODE_UNNORMALIZED => 1,
        HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED => 0,
        _ => return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
    };
    let mut w = [0u32; 8];
    w[0] = c | c << 3 | c << 6 | unnormalized << 15;
    w[1] = 4095 << 12;
    w[2] = filter << 20 | filter << 22;
    Ok(w)
}

/// `hsa_agent_get_info`'s image limits for a GPU agent (`None`: not an image attribute).
///
/// # Safety
/// `value` is writable for the attribute's type.
pub(crate) unsafe fn agent_info(attribute: u32, value: *mut c_void) -> Option<Status> {
    let max = |g: u32| MAX_DIMENSIONS[g as usize];
    let v = |n: u64| n as u32;
    // SAFETY: the caller's contract.
    Some(unsafe {
        match attribute {
            HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS => put(value, v(max(geometry::D1)[0])),
            HSA_EXT_AGENT_INFO_IMAGE_1DA_MAX_ELEMENTS => put(value, v(max(geometry::D1_ARRAY)[0])),
            HSA_EXT_AGENT_INFO_IMAGE_1DB_MAX_ELEMENTS => put(value, v(max(geometry::D1_BUFFER)[0])),
            HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS => {
                let m = max(geometry::D2);
                put(value, [v(m[0]), v(m[1])])
            }
            HSA_EXT_AGENT_INFO_IMAGE_2DA_MAX_ELEMENTS => {
                let m = max(geometry::D2_ARRAY);
                put(value, [v(m[0]), v(m[1])])
            }
            HSA_EXT_AGENT_INFO_IMAGE_2DDEPTH_MAX_ELEMENTS => {
                let m = max(6);
                put(value, [v(m[0]), v(m[1])])
            }
            HSA_EXT_AGENT_INFO_IMAGE_2DADEPTH_MAX_ELEMENTS => {
                let m = max(7);
                put(value, [v(m[0]), v(m[1])])
            }
            HSA_EXT_AGENT_INFO_IMAGE_3D_MAX_ELEMENTS => {
                let m = max(geometry::D3);
                put(value, [v(m[0]), v(m[1]), v(m[2])])
            }
            HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS => put(value, v(max(geometry::D2_ARRAY)[3])),
            _ => return None,
        }
    })
}

hsa_api! {
    /// `hsa_ext_image_get_capability`: read, write and read-write for the formats the emulator
    /// reads in the non-depth geometries; 0 otherwise.
    fn hsa_ext_image_get_capability(agent: hsa_agent_t, geometry: hsa_ext_image_geometry_t, image_format: *const hsa_ext_image_format_t, capability_mask: *mut u32) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            gpu(&rt, agent)?;
            // SAFETY: readable by the API's contract (NULL refused).
            let f = unsafe { read(image_format) }?;
            if geometry > 7 || capability_mask.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let supported = geometry <= geometry::D1_BUFFER && texel_format(&f).is_ok();
            let mask = if supported {
                HSA_EXT_IMAGE_CAPABILITY_READ_ONLY
                    | HSA_EXT_IMAGE_CAPABILITY_WRITE_ONLY
                    | HSA_EXT_IMAGE_CAPABILITY_READ_WRITE
            } else {
                HSA_EXT_IMAGE_CAPABILITY_NOT_SUPPORTED
            };
            // SAFETY: non-NULL out-pointer.
            unsafe { put(capability_mask.cast(), mask) }
        })
    }

    /// `hsa_ext_image_get_capability_with_layout`: as above, for either layout (both are
    /// linear here).
    fn hsa_ext_image_get_capability_with_layout(agent: hsa_agent_t, geometry: hsa_ext_image_geometry_t, image_format: *const hsa_ext_image_format_t, image_data_layout: hsa_ext_image_data_layout_t, capability_mask: *mut u32) -> hsa_status_t {
        if image_data_layout > HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR {
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: forwarded under the same contract.
        unsafe { hsa_ext_image_get_capability(agent, geometry, image_format, capability_mask) }
    }

    /// `hsa_ext_image_data_get_info`: the tight linear layout's size, 256-byte alignment.
    fn hsa_ext_image_data_get_info(agent: hsa_agent_t, image_descriptor: *const hsa_ext_image_descriptor_t, access_permission: hsa_access_permission_t, image_data_info: *mut hsa_ext_image_data_info_t) -> hsa_status_t {
        // SAFETY: forwarded under the same contract.
        unsafe { hsa_ext_image_data_get_info_with_layout(agent, image_descriptor, access_permission, HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE, 0, 0, image_data_info) }
    }

    /// `hsa_ext_image_data_get_info_with_layout`: size of the layout the pitches give.
    fn hsa_ext_image_data_get_info_with_layout(agent: hsa_agent_t, image_descriptor: *const hsa_ext_image_descriptor_t, access_permission: hsa_access_permission_t, image_data_layout: hsa_ext_image_data_layout_t, image_data_row_pitch: usize, image_data_slice_pitch: usize, image_data_info: *mut hsa_ext_image_data_info_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            gpu(&rt, agent)?;
            // SAFETY: readable by the API's contract (NULL refused).
            let desc = unsafe { read(image_descriptor) }?;
            if image_data_info.is_null() || image_data_layout > HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR || !(1..=3).contains(&access_permission) {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (row, slice) = if image_data_layout == HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR {
                (image_data_row_pitch, image_data_slice_pitch)
            } else {
                (0, 0)
            };
            let (_, l) = layout(&desc, 0, row, slice)?;
            let info = hsa_ext_image_data_info_t { size: l.size() as usize, alignment: 256 };
            // SAFETY: non-NULL out-pointer.
            unsafe { put(image_data_info.cast(), info) }
        })
    }

    /// `hsa_ext_image_create`: the opaque (tight linear) layout.
    fn hsa_ext_image_create(agent: hsa_agent_t, image_descriptor: *const hsa_ext_image_descriptor_t, image_data: *const c_void, access_permission: hsa_access_permission_t, image: *mut hsa_ext_image_t) -> hsa_status_t {
        // SAFETY: forwarded under the same contract.
        unsafe { hsa_ext_image_create_with_layout(agent, image_descriptor, image_data, access_permission, HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE, 0, 0, image) }
    }

    /// `hsa_ext_image_create_with_layout`: an image object over `image_data`.
    fn hsa_ext_image_create_with_layout(agent: hsa_agent_t, image_descriptor: *const hsa_ext_image_descriptor_t, image_data: *const c_void, access_permission: hsa_access_permission_t, image_data_layout: hsa_ext_image_data_layout_t, image_data_row_pitch: usize, image_data_slice_pitch: usize, image: *mut hsa_ext_image_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let a = gpu(&rt, agent)?;
            // SAFETY: readable by the API's contract (NULL refused).
            let desc = unsafe { read(image_descriptor) }?;
            if image.is_null() || image_data.is_null() || image_data_layout > HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR || !(1..=3).contains(&access_permission) {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (row, slice) = if image_data_layout == HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR {
                (image_data_row_pitch, image_data_slice_pitch)
            } else {
                (0, 0)
            };
            let (format, l) = layout(&desc, image_data as u64, row, slice)?;
            let w = words(format, &l)?;
            let mut images = IMAGES.lock();
            let map = images.get_or_insert_with(HashMap::new);
            if map.len() >= MAX_OBJECTS {
                return Err(HSA_STATUS_ERROR_OUT_OF_RESOURCES);
            }
            let handle = place_words(&rt, a, &w)?;
            map.insert(handle, ImageObject { agent: a, format, layout: l });
            tracing::debug!(handle, ?l, "image created");
            // SAFETY: non-NULL out-pointer.
            unsafe { put(image.cast(), hsa_ext_image_t { handle }) }
        })
    }

    /// `hsa_ext_image_destroy`.
    fn hsa_ext_image_destroy(agent: hsa_agent_t, image: hsa_ext_image_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let a = gpu(&rt, agent)?;
            image_of(a, image.handle)?;
            IMAGES.lock().as_mut().and_then(|m| m.remove(&image.handle));
            free_words(&rt, a, image.handle);
            Ok(())
        })
    }

    /// `hsa_ext_image_copy`: `range` texels from one image to another of the same texel size.
    fn hsa_ext_image_copy(agent: hsa_agent_t, src_image: hsa_ext_image_t, src_offset: *const hsa_dim3_t, dst_image: hsa_ext_image_t, dst_offset: *const hsa_dim3_t, range: *const hsa_dim3_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let a = gpu(&rt, agent)?;
            let (_, s) = image_of(a, src_image.handle)?;
            let (_, d) = image_of(a, dst_image.handle)?;
            // SAFETY: readable by the API's contract (NULL refused).
            let (so, doff, r) = unsafe { (read(src_offset)?, read(dst_offset)?, read(range)?) };
            if s.texel != d.texel {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let from = rows_of(&s, &so, &r)?;
            let to = rows_of(&d, &doff, &r)?;
            // SAFETY: both sides are images' data, checked row by row.
            unsafe { copy_rows(&rt, to.iter().zip(&from).map(|(t, f)| (t.0, f.0, t.1))) }
        })
    }

    /// `hsa_ext_image_import`: texels from linear memory (pitches 0: tight) into an image.
    fn hsa_ext_image_import(agent: hsa_agent_t, src_memory: *const c_void, src_row_pitch: usize, src_slice_pitch: usize, dst_image: hsa_ext_image_t, image_region: *const hsa_ext_image_region_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let a = gpu(&rt, agent)?;
            let (_, d) = image_of(a, dst_image.handle)?;
            // SAFETY: readable by the API's contract (NULL refused).
            let region = unsafe { read(image_region) }?;
            let to = rows_of(&d, &region.offset, &region.range)?;
            let (rp, sp) = pitches(&region.range, d.texel, src_row_pitch, src_slice_pitch)?;
            let base = src_memory as u64;
            let rows = u64::from(region.range.y).max(1);
            // SAFETY: the source is the caller's memory by the API's contract.
            unsafe {
                copy_rows(&rt, to.iter().enumerate().map(|(i, t)| {
                    let (s, r) = (i as u64 / rows, i as u64 % rows);
                    (t.0, base + s * sp + r * rp, t.1)
                }))
            }
        })
    }

    /// `hsa_ext_image_export`: texels of an image into linear memory.
    fn hsa_ext_image_export(agent: hsa_agent_t, src_image: hsa_ext_image_t, dst_memory: *mut c_void, dst_row_pitch: usize, dst_slice_pitch: usize, image_region: *const hsa_ext_image_region_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let a = gpu(&rt, agent)?;
            let (_, s) = image_of(a, src_image.handle)?;
            // SAFETY: readable by the API's contract (NULL refused).
            let region = unsafe { read(image_region) }?;
            let from = rows_of(&s, &region.offset, &region.range)?;
            let (rp, sp) = pitches(&region.range, s.texel, dst_row_pitch, dst_slice_pitch)?;
            let base = dst_memory as u64;
            let rows = u64::from(region.range.y).max(1);
            // SAFETY: the destination is the caller's memory by the API's contract.
            unsafe {
                copy_rows(&rt, from.iter().enumerate().map(|(i, f)| {
                    let (s, r) = (i as u64 / rows, i as u64 % rows);
                    (base + s * sp + r * rp, f.0, f.1)
                }))
            }
        })
    }

    /// `hsa_ext_image_clear`: every texel of the region set to `data` (four 32-bit values:
    /// floats for float and normalised channel types, integers otherwise), encoded in the
    /// image's format.
    fn hsa_ext_image_clear(agent: hsa_agent_t, image: hsa_ext_image_t, data: *const c_void, image_region: *const hsa_ext_image_region_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let a = gpu(&rt, agent)?;
            let (format, l) = image_of(a, image.handle)?;
            // SAFETY: readable by the API's contract (NULL refused).
            let (value, region) = unsafe { (read(data.cast::<[u32; 4]>())?, read(image_region)?) };
            let rows = rows_of(&l, &region.offset, &region.range)?;
            // The stored channels in memory order: the order's selects name which value
            // each stored channel holds.
            let sel = format.dst_sel();
            let mut stored = [0u32; 4];
            for (out, v) in value.iter().enumerate() {
                let s = sel >> (3 * out) & 7;
                if (4..8).contains(&s) {
                    stored[(s - 4) as usize] = *v;
                }
            }
            let cb = format.channel_bytes() as usize;
            let mut texel = Vec::with_capacity(16);
            for c in stored.iter().take(format.channels() as usize) {
                texel.extend_from_slice(&encode(format, *c).to_le_bytes()[..cb]);
            }
            let width = u64::from(region.range.x) as usize;
            let row: Vec<u8> = texel.iter().copied().cycle().take(texel.len() * width).collect();
            // SAFETY: the rows are the image's data, checked one by one; the source is ours.
            unsafe { copy_rows(&rt, rows.iter().map(|r| (r.0, row.as_ptr() as u64, r.1))) }
        })
    }

    /// `hsa_ext_sampler_create`: ROCr's sampler descriptor of the description.
    fn hsa_ext_sampler_create(agent: hsa_agent_t, sampler_descriptor: *const hsa_ext_sampler_descriptor_t, sampler: *mut hsa_ext_sampler_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let a = gpu(&rt, agent)?;
            // SAFETY: readable by the API's contract (NULL refused).
            let desc = unsafe { read(sampler_descriptor) }?;
            if sampler.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let w = sampler_words(&desc)?;
            let mut samplers = SAMPLERS.lock();
            let map = samplers.get_or_insert_with(HashMap::new);
            if map.len() >= MAX_OBJECTS {
                return Err(HSA_STATUS_ERROR_OUT_OF_RESOURCES);
            }
            let handle = place_words(&rt, a, &w)?;
            map.insert(handle, a);
            // SAFETY: non-NULL out-pointer.
            unsafe { put(sampler.cast(), hsa_ext_sampler_t { handle }) }
        })
    }

    /// `hsa_ext_sampler_destroy`.
    fn hsa_ext_sampler_destroy(agent: hsa_agent_t, sampler: hsa_ext_sampler_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let a = gpu(&rt, agent)?;
            let mut samplers = SAMPLERS.lock();
            let map = samplers.get_or_insert_with(HashMap::new);
            match map.get(&sampler.handle) {
                Some(&owner) if owner == a => {
                    map.remove(&sampler.handle);
                    free_words(&rt, a, sampler.handle);
                    Ok(())
                }
                _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
            }
        })
    }

    /// `hsa_amd_image_get_info_max_dim`: the image limits of `hsa_agent_get_info`.
    fn hsa_amd_image_get_info_max_dim(agent: hsa_agent_t, attribute: hsa_agent_info_t, value: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            gpu(&rt, agent)?;
            // SAFETY: writable for the attribute's type by the API's contract.
            unsafe { agent_info(attribute, value) }.unwrap_or(Err(HSA_STATUS_ERROR_INVALID_ARGUMENT))
        })
    }

    /// `hsa_amd_image_create`: an image from a graphics driver's metadata, which cannot come
    /// from any driver here.
    fn hsa_amd_image_create(agent: hsa_agent_t, image_descriptor: *const hsa_ext_image_descriptor_t, image_layout: *const hsa_amd_image_descriptor_t, image_data: *const c_void, access_permission: hsa_access_permission_t, image: *mut hsa_ext_image_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            gpu(&rt, agent)?;
            let _ = (image_descriptor, image_layout, image_data, access_permission, image);
            Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
        })
    }
}

/// The pitches of linear memory for a region (0: tight).
fn pitches(range: &hsa_dim3_t, texel: u64, row: usize, slice: usize) -> Status<(u64, u64)> {
    let tight = u64::from(range.x) * texel;
    let r = if row == 0 { tight } else { row as u64 };
    let tight_slice = r * u64::from(range.y).max(1);
    let s = if slice == 0 {
        tight_slice
    } else {
        slice as u64
    };
    if r < tight || s < tight_slice {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    Ok((r, s))
}

/// The extension's table (version 1.00 and 1 share their first entries).
pub(crate) fn table() -> hsa_ext_images_1_pfn_t {
    hsa_ext_images_1_pfn_t {
        hsa_ext_image_get_capability: Some(hsa_ext_image_get_capability),
        hsa_ext_image_data_get_info: Some(hsa_ext_image_data_get_info),
        hsa_ext_image_create: Some(hsa_ext_image_create),
        hsa_ext_image_destroy: Some(hsa_ext_image_destroy),
        hsa_ext_image_copy: Some(hsa_ext_image_copy),
        hsa_ext_image_import: Some(hsa_ext_image_import),
        hsa_ext_image_export: Some(hsa_ext_image_export),
        hsa_ext_image_clear: Some(hsa_ext_image_clear),
        hsa_ext_sampler_create: Some(hsa_ext_sampler_create),
        hsa_ext_sampler_destroy: Some(hsa_ext_sampler_destroy),
        hsa_ext_image_get_capability_with_layout: Some(hsa_ext_image_get_capability_with_layout),
        hsa_ext_image_data_get_info_with_layout: Some(hsa_ext_image_data_get_info_with_layout),
        hsa_ext_image_create_with_layout: Some(hsa_ext_image_create_with_layout),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of a half's bits (finite ones).
    fn value(h: u16) -> f64 {
        let e = i32::from(h >> 10 & 0x1f);
        let m = f64::from(h & 0x3ff);
        let v = if e == 0 {
            m * 2f64.powi(-24)
        } else {
            (1.0 + m / 1024.0) * 2f64.powi(e - 15)
        };
        if h & 0x8000 != 0 {
            -v
        } else {
            v
        }
    }

    #[test]
    fn halves_are_the_nearest_and_ties_go_to_even() {
        let cases = [
            0.0f32,
            -0.0,
            1.0,
            -2.5,
            65504.0,
            1e-7,
            6.1e-5,
            3.0e-8,
            0.1,
            1.0 + 1.0 / 2048.0,
            3.0 / 2048.0 + 1.0,
            2.0f32.powi(-24) * 1.5,
        ];
        for f in cases {
            let h = f16_bits(f);
            let d = (value(h) - f64::from(f)).abs();
            for n in [h.wrapping_sub(1), h.wrapping_add(1)] {
                if n & 0x7c00 == 0x7c00 || (n ^ h) & 0x8000 != 0 {
                    continue;
                }
                let dn = (value(n) - f64::from(f)).abs();
                assert!(d < dn || (d == dn && h & 1 == 0), "{f}: {h:#x} vs {n:#x}");
            }
            assert_eq!(h & 0x8000 != 0, f.is_sign_negative(), "sign of {f}");
        }
        assert_eq!(f16_bits(1e6), 0x7c00);
        assert_eq!(f16_bits(f32::NEG_INFINITY), 0xfc00);
        assert_eq!(f16_bits(f32::NAN) & 0x7e00, 0x7e00);
    }

    #[test]
    fn layouts_accept_pitched_2d_and_refuse_pitched_3d() {
        let desc = |g: u32, w: usize, h: usize, d: usize, l: usize| hsa_ext_image_descriptor_t {
            geometry: g,
            width: w,
            height: h,
            depth: d,
            array_size: l,
            format: hsa_ext_image_format_t {
                channel_type: 15,
                channel_order: 8,
            },
        };
        let (_, l) = layout(&desc(geometry::D2, 10, 4, 0, 0), 0x1000, 256, 0).unwrap();
        assert_eq!((l.row_pitch, l.slice_pitch, l.size()), (256, 1024, 1024));
        assert_eq!(
            layout(&desc(geometry::D3, 10, 4, 2, 0), 0x1000, 256, 0).unwrap_err(),
            HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED
        );
        assert_eq!(
            layout(&desc(geometry::D2, 10, 4, 0, 0), 0x1000, 100, 0).unwrap_err(),
            HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED
        );
        assert_eq!(
            layout(&desc(geometry::D2, 16385, 4, 0, 0), 0x1000, 0, 0).unwrap_err(),
            HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED
        );
        let (_, a) = layout(&desc(geometry::D2_ARRAY, 8, 4, 0, 3), 0x1000, 0, 0).unwrap();
        assert_eq!(
            (a.slices, a.slice_pitch, a.size()),
            (3, 8 * 16 * 4, 3 * 8 * 16 * 4)
        );
    }
}
