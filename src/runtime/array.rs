//! HIP arrays and every rectangular copy: the typed texel storage behind `hipArray_t` and
//! `hipMipmappedArray_t` (`hipMallocArray`, `hipMalloc3DArray`, `hipArrayCreate`,
//! `hipArray3DCreate`, mipmapped arrays and their levels), and the region checks and transfers
//! of pitched, 3D and array copies (`hipMemcpy3D`, `hipMemcpy2DToArray`, `hipMemset3D`, ...).
//! Every extent, pitch and offset is checked, overflow-safe, against the memory involved
//! before anything is queued.
//!
//! Not for the C handles (the C ABI keeps the `hipArray` records callers see) or for sampling
//! (the texture work reads the storage laid out here).
//!
//! # Layout of an array's storage
//!
//! An array is one device allocation of kind [`MemoryKind::Array`] that the memory checker
//! knows like any other. What a sampler needs to find texel `(x, y, z)` of level `l`:
//!
//! - a texel is [`ArrayDescriptor::texel_bytes`] bytes: `channels` (1, 2 or 4) components of
//!   the [`ArrayFormat`], in x, y, z, w order, each little-endian;
//! - levels lie one after the other, level `l` at [`Level::offset`] from the allocation's base
//!   (a multiple of [`LEVEL_ALIGNMENT`]); level 0 is the array itself;
//! - inside a level, rows are packed: texel `(x, y, z)` is at
//!   `offset + z * slice_pitch + y * row_pitch + x * texel_bytes`, with
//!   `row_pitch = width * texel_bytes` and `slice_pitch = row_pitch * max(height, 1)`;
//! - `z` is the depth of a 3D array, the layer of a layered one, and `layer * 6 + face` of a
//!   cubemap (faces in HIP's order +x, -x, +y, -y, +z, -z);
//! - level `l` has `max(width >> l, 1)` columns, `max(height >> l, 1)` rows (none for a 1D
//!   array: `height` 0 keeps one row of storage) and, for a 3D array, `max(depth >> l, 1)`
//!   slices; layers and cube faces are never reduced.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use super::stream::Stream;
use super::{Runtime, RuntimeError, RuntimeResult};
use crate::device::{Device, DeviceError, MemoryKind};

/// Where each level of an array starts: a multiple of this from the allocation's base.
pub const LEVEL_ALIGNMENT: u64 = 256;
/// The widest 1D array, and the widest and tallest 2D, 3D or cubemap array (gfx10.3's image
/// limits as ROCm reports them).
pub const MAX_DIMENSION: u64 = 16_384;
/// The deepest 3D array.
pub const MAX_DEPTH_3D: u64 = 8_192;
/// The most layers of a layered array (cubemap faces count as layers).
pub const MAX_LAYERS: u64 = 8_192;

/// The element type of an array's channels (`hipArray_Format`; the values are HIP's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrayFormat {
    /// `HIP_AD_FORMAT_UNSIGNED_INT8`.
    U8 = 0x01,
    /// `HIP_AD_FORMAT_UNSIGNED_INT16`.
    U16 = 0x02,
    /// `HIP_AD_FORMAT_UNSIGNED_INT32`.
    U32 = 0x03,
    /// `HIP_AD_FORMAT_SIGNED_INT8`.
    I8 = 0x08,
    /// `HIP_AD_FORMAT_SIGNED_INT16`.
    I16 = 0x09,
    /// `HIP_AD_FORMAT_SIGNED_INT32`.
    I32 = 0x0a,
    /// `HIP_AD_FORMAT_HALF`.
    F16 = 0x10,
    /// `HIP_AD_FORMAT_FLOAT`.
    F32 = 0x20,
}

impl ArrayFormat {
    /// The format with HIP's value `raw`, if any.
    pub fn from_raw(raw: u32) -> Option<ArrayFormat> {
        Some(match raw {
            0x01 => ArrayFormat::U8,
            0x02 => ArrayFormat::U16,
            0x03 => ArrayFormat::U32,
            0x08 => ArrayFormat::I8,
            0x09 => ArrayFormat::I16,
            0x0a => ArrayFormat::I32,
            0x10 => ArrayFormat::F16,
            0x20 => ArrayFormat::F32,
            _ => return None,
        })
    }

    /// HIP's value.
    pub fn raw(self) -> u32 {
        self as u32
    }

    /// Bytes of one channel.
    pub fn bytes(self) -> u64 {
        match self {
            ArrayFormat::U8 | ArrayFormat::I8 => 1,
            ArrayFormat::U16 | ArrayFormat::I16 | ArrayFormat::F16 => 2,
            ArrayFormat::U32 | ArrayFormat::I32 | ArrayFormat::F32 => 4,
        }
    }
}

/// `hipArray*` flags (the same bits as CUDA's `CUDA_ARRAY3D_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ArrayFlags(pub u32);

impl ArrayFlags {
    /// `hipArrayLayered`: `depth` counts layers.
    pub const LAYERED: u32 = 0x1;
    /// `hipArraySurfaceLoadStore`: kernels may read and write it through a surface.
    pub const SURFACE_LOAD_STORE: u32 = 0x2;
    /// `hipArrayCubemap`: six square faces (times the layers when layered).
    pub const CUBEMAP: u32 = 0x4;
    /// `hipArrayTextureGather`: a 2D array `tex2Dgather` may read.
    pub const TEXTURE_GATHER: u32 = 0x8;
    /// Every flag HIP defines.
    pub const ALL: u32 =
        Self::LAYERED | Self::SURFACE_LOAD_STORE | Self::CUBEMAP | Self::TEXTURE_GATHER;

    /// Whether every bit of `flag` is set.
    pub fn has(self, flag: u32) -> bool {
        self.0 & flag == flag
    }
}

/// What an array is, from its extent and flags; [`ArrayShape::texture_type`] gives HIP's
/// `hipTextureType*` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrayShape {
    /// Width only.
    OneD,
    /// Width and height.
    TwoD,
    /// Width, height and depth.
    ThreeD,
    /// Width, and `depth` layers.
    Layered1D,
    /// Width, height, and `depth` layers.
    Layered2D,
    /// Six square faces.
    Cubemap,
    /// `depth / 6` cubemaps.
    CubemapLayered,
}

impl ArrayShape {
    /// `hipTextureType1D` (0x01) ... `hipTextureTypeCubemapLayered` (0xFC).
    pub fn texture_type(self) -> u32 {
        match self {
            ArrayShape::OneD => 0x01,
            ArrayShape::TwoD => 0x02,
            ArrayShape::ThreeD => 0x03,
            ArrayShape::Cubemap => 0x0C,
            ArrayShape::Layered1D => 0xF1,
            ArrayShape::Layered2D => 0xF2,
            ArrayShape::CubemapLayered => 0xFC,
        }
    }

    /// Whether mip levels shrink the depth (only a 3D array's depth is an extent; the others'
    /// are layers).
    fn depth_shrinks(self) -> bool {
        self == ArrayShape::ThreeD
    }
}

/// What an array is made of, as `HIP_ARRAY3D_DESCRIPTOR` gives it: `height` 0 for a 1D
/// array, `depth` 0 for 1D and 2D ones, layers for a layered one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayDescriptor {
    /// The channels' element type.
    pub format: ArrayFormat,
    /// Channels per texel: 1, 2 or 4.
    pub channels: u32,
    /// Texels per row.
    pub width: u64,
    /// Rows (0 for a 1D array).
    pub height: u64,
    /// Slices or layers (0 for a 1D or 2D array).
    pub depth: u64,
    /// `hipArray*` flags.
    pub flags: ArrayFlags,
}

impl ArrayDescriptor {
    /// Bytes of one texel.
    pub fn texel_bytes(&self) -> u64 {
        self.format.bytes() * u64::from(self.channels)
    }

    /// The array's shape, or why the descriptor describes none.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidArray`] for a channel count other than 1, 2 or 4, unknown flags,
    /// a zero width, a depth without a height (unless layered), a cubemap that is not square
    /// with 6 (or a multiple of 6 when layered) faces, texture gather on anything but a 2D
    /// array, or an extent past the limits ([`MAX_DIMENSION`], [`MAX_DEPTH_3D`],
    /// [`MAX_LAYERS`]).
    pub fn shape(&self) -> RuntimeResult<ArrayShape> {
        let bad = |reason: String| Err(RuntimeError::InvalidArray { reason });
        if !matches!(self.channels, 1 | 2 | 4) {
            return bad(format!(
                "{} channels: an array has 1, 2 or 4",
                self.channels
            ));
        }
        let flags = self.flags;
        if flags.0 & !ArrayFlags::ALL != 0 {
            return bad(format!("unknown flags {:#x}", flags.0 & !ArrayFlags::ALL));
        }
        let (w, h, d) = (self.width, self.height, self.depth);
        if w == 0 {
            return bad("width 0".into());
        }
        let layered = flags.has(ArrayFlags::LAYERED);
        let shape = if flags.has(ArrayFlags::CUBEMAP) {
            if w != h {
                return bad(format!("a cubemap's faces are square: {w} x {h}"));
            }
            match (layered, d) {
                (false, 6) => ArrayShape::Cubemap,
                (true, d) if d >= 6 && d % 6 == 0 => ArrayShape::CubemapLayered,
                (false, d) => return bad(format!("a cubemap has depth 6 (its faces), not {d}")),
                (true, d) => {
                    return bad(format!(
                        "a layered cubemap's depth is a multiple of 6 (faces x layers), not {d}"
                    ))
                }
            }
        } else if layered {
            match (h, d) {
                (_, 0) => return bad("a layered array needs at least one layer (depth)".into()),
                (0, _) => ArrayShape::Layered1D,
                _ => ArrayShape::Layered2D,
            }
        } else {
            match (h, d) {
                (0, 0) => ArrayShape::OneD,
                (_, 0) => ArrayShape::TwoD,
                (0, _) => return bad(format!("depth {d} without a height")),
                _ => ArrayShape::ThreeD,
            }
        };
        if flags.has(ArrayFlags::TEXTURE_GATHER) && shape != ArrayShape::TwoD {
            return bad(format!("texture gather needs a 2D array, not {shape:?}"));
        }
        let (max_depth, what) = match shape {
            ArrayShape::ThreeD => (MAX_DEPTH_3D, "depth"),
            _ => (MAX_LAYERS, "layers"),
        };
        if w > MAX_DIMENSION || h > MAX_DIMENSION || d > max_depth {
            return bad(format!(
                "{w} x {h} x {d} is past the limits ({MAX_DIMENSION} wide and high, {max_depth} {what})"
            ));
        }
        Ok(shape)
    }

    /// How many mip levels the array can have: down to 1 x 1 (x 1).
    pub fn max_levels(&self) -> u32 {
        let shape = self.shape().unwrap_or(ArrayShape::OneD);
        let mut largest = self.width.max(self.height);
        if shape.depth_shrinks() {
            largest = largest.max(self.depth);
        }
        // floor(log2(largest)) + 1; `largest` is at least 1 for a valid descriptor.
        64 - largest.max(1).leading_zeros()
    }
}

/// One mip level of an array: its extent (as the descriptor counts: `height` 0 for 1D,
/// `depth` 0 for 1D and 2D) and where its texels are (see the module's layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    /// Bytes from the allocation's base to the level's first texel.
    pub offset: u64,
    /// Texels per row.
    pub width: u64,
    /// Rows (0 for a 1D array).
    pub height: u64,
    /// Slices or layers (0 for 1D and 2D arrays).
    pub depth: u64,
    /// Bytes from one row to the next (`width * texel_bytes`).
    pub row_pitch: u64,
    /// Bytes from one slice or layer to the next (`row_pitch * rows()`).
    pub slice_pitch: u64,
    /// Bytes of the level (`slice_pitch * slices()`).
    pub size: u64,
}

impl Level {
    /// Rows of storage (1 for a 1D array).
    pub fn rows(&self) -> u64 {
        self.height.max(1)
    }

    /// Slices of storage (1 for 1D and 2D arrays).
    pub fn slices(&self) -> u64 {
        self.depth.max(1)
    }
}

/// An array's storage on one device. Shared (`Arc`) by the C handle of the array and of each
/// of its levels; freed once, by [`Runtime::free_array`].
#[derive(Debug)]
pub struct Array {
    id: u64,
    device: usize,
    descriptor: ArrayDescriptor,
    shape: ArrayShape,
    base: u64,
    size: u64,
    levels: Vec<Level>,
    freed: AtomicBool,
}

static NEXT_ARRAY: AtomicU64 = AtomicU64::new(1);

impl Array {
    /// A number naming the array in logs and errors.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The device ordinal whose memory holds it.
    pub fn device(&self) -> usize {
        self.device
    }

    /// What it was created as.
    pub fn descriptor(&self) -> &ArrayDescriptor {
        &self.descriptor
    }

    /// Its shape.
    pub fn shape(&self) -> ArrayShape {
        self.shape
    }

    /// The device address of its storage (level 0's first texel).
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Bytes of storage, every level included.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Its mip levels (one for an array that is not mipmapped).
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    /// Whether [`Runtime::free_array`] freed it.
    pub fn is_freed(&self) -> bool {
        self.freed.load(Ordering::Acquire)
    }
}

/// One level of an array, as a copy or a C `hipArray_t` sees it (an array that is not
/// mipmapped is its level 0). Cheap to clone.
#[derive(Debug, Clone)]
pub struct ArrayView {
    array: Arc<Array>,
    level: u32,
}

impl ArrayView {
    /// Level `level` of `array`, if it has one.
    pub fn new(array: Arc<Array>, level: u32) -> Option<ArrayView> {
        ((level as usize) < array.levels.len()).then_some(ArrayView { array, level })
    }

    /// The array.
    pub fn array(&self) -> &Arc<Array> {
        &self.array
    }

    /// Which level.
    pub fn level_index(&self) -> u32 {
        self.level
    }

    /// The level's extent and layout.
    pub fn level(&self) -> &Level {
        // `new` admits only existing levels and an array's levels never change.
        &self.array.levels[self.level as usize]
    }

    /// Bytes of one texel.
    pub fn texel_bytes(&self) -> u64 {
        self.array.descriptor.texel_bytes()
    }

    /// The device address of the level's first texel.
    pub fn address(&self) -> u64 {
        self.array.base + self.level().offset
    }

    /// The device address of `len` bytes at byte `offset` of the level's storage, read as one
    /// run of packed rows (`hipMemcpyHtoA`, `hipMemcpyToArray`).
    ///
    /// # Errors
    /// [`RuntimeError::BadRegion`] when the run does not fit the level.
    pub fn linear(&self, side: &'static str, offset: u64, len: u64) -> RuntimeResult<u64> {
        let level = self.level();
        match offset.checked_add(len) {
            Some(end) if end <= level.size => Ok(self.address() + offset),
            _ => Err(RuntimeError::BadRegion {
                side,
                reason: format!(
                    "{len} bytes at byte {offset} of array {} (level {}) run past its {} bytes",
                    self.array.id, self.level, level.size
                ),
            }),
        }
    }
}

/// One end of a rectangular copy.
#[derive(Debug, Clone)]
pub enum CopyEnd {
    /// Linear memory, the device's or the caller's host memory: `pitch` bytes from one row to
    /// the next (0: the copy's width), `rows` rows from one slice to the next (0: the copy's
    /// height), as `hipPitchedPtr` and `HIP_MEMCPY3D` give them.
    Linear {
        /// The address of row 0 of slice 0.
        address: u64,
        /// Bytes per row.
        pitch: u64,
        /// Rows per slice.
        rows: u64,
    },
    /// A level of an array.
    Array(ArrayView),
}

/// Where a copy starts in one of its ends: `x` in bytes, `y` in rows, `z` in slices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Origin {
    /// Bytes into the row (a whole number of texels for an array).
    pub x: u64,
    /// Row.
    pub y: u64,
    /// Slice or layer.
    pub z: u64,
}

/// The size of a rectangular copy or fill: `width` in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extent {
    /// Bytes per row.
    pub width: u64,
    /// Rows.
    pub height: u64,
    /// Slices.
    pub depth: u64,
}

impl Extent {
    /// Whether there is nothing to copy.
    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0 || self.depth == 0
    }
}

/// Where a region lies in memory ([`Runtime::region`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionPlace {
    /// The region's first byte.
    pub start: u64,
    /// Bytes from one row to the next.
    pub row_pitch: u64,
    /// Bytes from one slice to the next.
    pub slice_pitch: u64,
}

/// A checked region of one end: where it starts, its pitches, and how many bytes from its
/// first to its last byte (`span`).
#[derive(Debug, Clone, Copy)]
struct Rect {
    start: u64,
    row_pitch: u64,
    slice_pitch: u64,
    span: u64,
}

fn region_error(side: &'static str, reason: String) -> RuntimeError {
    RuntimeError::BadRegion { side, reason }
}

/// The bytes of `extent` from a region's start with these pitches, and its start.
fn span(
    side: &'static str,
    base: u64,
    origin: Origin,
    row_pitch: u64,
    slice_pitch: u64,
    extent: Extent,
) -> RuntimeResult<Rect> {
    let overflow = || {
        region_error(
            side,
            format!(
                "{} x {} x {} bytes at ({}, {}, {}) with pitches {row_pitch} and {slice_pitch} \
                 overflow 64 bits",
                extent.width, extent.height, extent.depth, origin.x, origin.y, origin.z
            ),
        )
    };
    let offset = origin
        .z
        .checked_mul(slice_pitch)
        .and_then(|v| v.checked_add(origin.y.checked_mul(row_pitch)?))
        .and_then(|v| v.checked_add(origin.x))
        .ok_or_else(overflow)?;
    let span = (extent.depth - 1)
        .checked_mul(slice_pitch)
        .and_then(|v| v.checked_add((extent.height - 1).checked_mul(row_pitch)?))
        .and_then(|v| v.checked_add(extent.width))
        .ok_or_else(overflow)?;
    let start = base.checked_add(offset).ok_or_else(overflow)?;
    start.checked_add(span).ok_or(RuntimeError::AddressWraps {
        address: start,
        size: span,
    })?;
    Ok(Rect {
        start,
        row_pitch,
        slice_pitch,
        span,
    })
}

/// Checks one end of a (non-empty) copy and gives its region: an array's region must lie in
/// the level, whole texels; a linear end's pitches must hold the rows and slices.
fn rect(side: &'static str, end: &CopyEnd, origin: Origin, extent: Extent) -> RuntimeResult<Rect> {
    match end {
        CopyEnd::Array(view) => {
            if view.array.is_freed() {
                return Err(RuntimeError::InvalidArray {
                    reason: format!("array {} was freed", view.array.id),
                });
            }
            let level = view.level();
            let texel = view.texel_bytes();
            let name = || format!("array {} (level {})", view.array.id, view.level);
            if origin.x % texel != 0 || extent.width % texel != 0 {
                return Err(region_error(
                    side,
                    format!(
                        "{} bytes at byte {} of {}: not whole {texel}-byte texels",
                        extent.width,
                        origin.x,
                        name()
                    ),
                ));
            }
            let fits =
                |at: u64, len: u64, limit: u64| at.checked_add(len).is_some_and(|e| e <= limit);
            if !fits(origin.x, extent.width, level.row_pitch)
                || !fits(origin.y, extent.height, level.rows())
                || !fits(origin.z, extent.depth, level.slices())
            {
                return Err(region_error(
                    side,
                    format!(
                        "{} texels x {} rows x {} slices at ({}, {}, {}) do not fit {}, {} x {} x {}",
                        extent.width / texel,
                        extent.height,
                        extent.depth,
                        origin.x / texel,
                        origin.y,
                        origin.z,
                        name(),
                        level.width,
                        level.rows(),
                        level.slices()
                    ),
                ));
            }
            span(
                side,
                view.address(),
                origin,
                level.row_pitch,
                level.slice_pitch,
                extent,
            )
        }
        CopyEnd::Linear {
            address,
            pitch,
            rows,
        } => {
            if *address == 0 {
                return Err(RuntimeError::NullPointer { what: side });
            }
            let row_pitch = if *pitch == 0 { extent.width } else { *pitch };
            if row_pitch < extent.width {
                return Err(RuntimeError::PitchTooSmall {
                    side,
                    pitch: row_pitch,
                    width: extent.width,
                });
            }
            let rows = if *rows == 0 { extent.height } else { *rows };
            if rows < extent.height {
                return Err(region_error(
                    side,
                    format!(
                        "a slice of {rows} rows cannot hold the {} rows copied",
                        extent.height
                    ),
                ));
            }
            let slice_pitch = row_pitch.checked_mul(rows).ok_or_else(|| {
                region_error(
                    side,
                    format!("{rows} rows of pitch {row_pitch} overflow 64 bits"),
                )
            })?;
            span(side, *address, origin, row_pitch, slice_pitch, extent)
        }
    }
}

/// Copies the region `extent` from `src` to `dst` on the host thread running the step; rows
/// contiguous on both sides are copied together.
///
/// # Safety
/// Both regions must be valid for the copy: device-side ones checked and allocated while the
/// step runs, host-side ones by the caller's contract.
unsafe fn transfer(
    device: &dyn Device,
    dst: Rect,
    src: Rect,
    extent: Extent,
) -> Result<(), DeviceError> {
    let w = extent.width;
    let packed_rows = dst.row_pitch == w && src.row_pitch == w;
    let slice_bytes = w * extent.height;
    if packed_rows
        && (extent.depth == 1 || (dst.slice_pitch == slice_bytes && src.slice_pitch == slice_bytes))
    {
        // SAFETY: the whole region is one run on both sides (the spans checked).
        return unsafe { device.copy(dst.start, src.start, slice_bytes * extent.depth) };
    }
    for z in 0..extent.depth {
        let (d, s) = (
            dst.start + z * dst.slice_pitch,
            src.start + z * src.slice_pitch,
        );
        if packed_rows {
            // SAFETY: one slice of packed rows, inside both spans.
            unsafe { device.copy(d, s, slice_bytes) }?;
            continue;
        }
        for y in 0..extent.height {
            // SAFETY: one row, inside both spans.
            unsafe { device.copy(d + y * dst.row_pitch, s + y * src.row_pitch, w) }?;
        }
    }
    Ok(())
}

impl Runtime {
    /// Creates an array of `levels` mip levels (0 counts as 1) on `device`, its storage
    /// zeroed.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidArray`] for a descriptor [`ArrayDescriptor::shape`] refuses or
    /// more levels than [`ArrayDescriptor::max_levels`]; [`RuntimeError::TooLarge`] when the
    /// storage's size overflows; device errors (out of memory).
    pub fn create_array(
        &self,
        device: i64,
        descriptor: ArrayDescriptor,
        levels: u32,
    ) -> RuntimeResult<Arc<Array>> {
        let shape = descriptor.shape()?;
        let levels = levels.max(1);
        let most = descriptor.max_levels();
        if levels > most {
            return Err(RuntimeError::InvalidArray {
                reason: format!(
                    "{levels} mip levels: a {} x {} x {} array has at most {most}",
                    descriptor.width, descriptor.height, descriptor.depth
                ),
            });
        }
        let texel = descriptor.texel_bytes();
        let too_large = || RuntimeError::TooLarge {
            what: format!(
                "a {} x {} x {} array of {texel}-byte texels",
                descriptor.width, descriptor.height, descriptor.depth
            ),
            size: u64::MAX,
            limit: u64::MAX,
        };
        let mut layout = Vec::new();
        layout
            .try_reserve_exact(levels as usize)
            .map_err(|_| too_large())?;
        let mut offset = 0u64;
        for l in 0..levels {
            let shrink = |v: u64| if v == 0 { 0 } else { (v >> l).max(1) };
            let width = shrink(descriptor.width);
            let height = shrink(descriptor.height);
            let depth = if shape.depth_shrinks() {
                shrink(descriptor.depth)
            } else {
                descriptor.depth
            };
            offset = offset
                .checked_next_multiple_of(LEVEL_ALIGNMENT)
                .ok_or_else(too_large)?;
            let row_pitch = width.checked_mul(texel).ok_or_else(too_large)?;
            let slice_pitch = row_pitch.checked_mul(height.max(1)).ok_or_else(too_large)?;
            let size = slice_pitch
                .checked_mul(depth.max(1))
                .ok_or_else(too_large)?;
            layout.push(Level {
                offset,
                width,
                height,
                depth,
                row_pitch,
                slice_pitch,
                size,
            });
            offset = offset.checked_add(size).ok_or_else(too_large)?;
        }
        let ctx = self.device(device)?.clone();
        let allocation = ctx
            .device()
            .allocate(offset, MemoryKind::Array)
            .map_err(|e| ctx.error("allocating an array", e))?;
        let array = Arc::new(Array {
            id: NEXT_ARRAY.fetch_add(1, Ordering::Relaxed),
            device: ctx.index(),
            descriptor,
            shape,
            base: allocation.base,
            size: offset,
            levels: layout,
            freed: AtomicBool::new(false),
        });
        tracing::debug!(
            array = array.id,
            device = array.device,
            ?shape,
            levels,
            base = format_args!("{:#x}", array.base),
            size = array.size,
            "array created"
        );
        Ok(array)
    }

    /// Frees an array's storage once every device is idle (as `hipFreeArray` does); its views
    /// must not be used afterwards (copies through them fail: the memory checker knows the
    /// storage was freed).
    ///
    /// # Errors
    /// [`RuntimeError::InvalidArray`] when it was freed already; device errors.
    pub fn free_array(&self, array: &Array) -> RuntimeResult<()> {
        if array.freed.swap(true, Ordering::AcqRel) {
            return Err(RuntimeError::InvalidArray {
                reason: format!("array {} was freed already", array.id),
            });
        }
        for ctx in self.devices().iter().flatten() {
            ctx.synchronize_ignoring_errors()?;
        }
        let ctx = self.device(array.device as i64)?;
        ctx.device()
            .free(array.base)
            .map_err(|e| ctx.error("freeing an array", e))?;
        tracing::debug!(array = array.id, "array freed");
        Ok(())
    }

    /// Copies `extent` (its width in bytes) from `src` at `src_origin` to `dst` at
    /// `dst_origin` in `stream`'s order; with `wait`, synchronously. Both ends are checked
    /// whole before anything is queued: an array's region must lie inside its level, in whole
    /// texels; a linear end's pitch must hold the width and its slice the rows, and its
    /// device-side bytes must lie inside one live allocation (an address no device knows is
    /// the caller's host memory). An empty extent copies nothing and checks nothing else.
    ///
    /// # Errors
    /// [`RuntimeError::BadRegion`], [`RuntimeError::PitchTooSmall`],
    /// [`RuntimeError::AddressWraps`], [`RuntimeError::NullPointer`] for the ends; device
    /// errors for memory outside an allocation or freed; stream errors.
    ///
    /// # Safety
    /// Host-side regions must be valid for the copy until it is done.
    pub unsafe fn copy_3d(
        &self,
        stream: &Stream,
        dst: (&CopyEnd, Origin),
        src: (&CopyEnd, Origin),
        extent: Extent,
        wait: bool,
    ) -> RuntimeResult<()> {
        if extent.is_empty() {
            return Ok(());
        }
        let d = rect("destination", dst.0, dst.1, extent)?;
        let s = rect("source", src.0, src.1, extent)?;
        self.check_side(d.start, d.span, true)?;
        self.check_side(s.start, s.span, false)?;
        // Pageable host memory: done when the call returns, as every copy to or from it.
        let wait = wait || self.is_pageable(d.start) || self.is_pageable(s.start);
        let ctx = stream.context()?;
        let device = ctx.device().clone();
        stream.host_work(
            "copying a 3D region",
            Box::new(move || {
                // SAFETY: both regions were checked above; device-side ones stay allocated
                // while the stream runs (freeing waits for idle devices); host-side ones are
                // valid by the caller's contract.
                unsafe { transfer(&*device, d, s, extent) }
            }),
        )?;
        if wait {
            stream.synchronize()?;
        }
        Ok(())
    }

    /// Where `extent` from `origin` lies in `end`, checked as a copy checks it: the first byte,
    /// the bytes from row to row and from slice to slice (what a graph's copy or memset node
    /// records when a stream capture takes a region copy or fill).
    ///
    /// # Errors
    /// As [`copy_3d`](Self::copy_3d) for the end's shape.
    pub fn region(
        &self,
        side: &'static str,
        end: &CopyEnd,
        origin: Origin,
        extent: Extent,
    ) -> RuntimeResult<RegionPlace> {
        let r = rect(side, end, origin, extent)?;
        Ok(RegionPlace {
            start: r.start,
            row_pitch: r.row_pitch,
            slice_pitch: r.slice_pitch,
        })
    }

    /// Fills `extent` of the pitched device memory `dst` (a [`CopyEnd::Linear`]: `pitch`
    /// bytes per row, `rows` rows per slice) with the byte `value`, in `stream`'s order
    /// (`hipMemset2D`, `hipMemset3D`). The memory must be device memory a device knows (as
    /// HIP's fills require), the whole region inside one allocation.
    ///
    /// # Errors
    /// As [`copy_3d`](Self::copy_3d); [`RuntimeError::BadRegion`] for an array (fills take
    /// pitched memory); [`RuntimeError::NotDeviceMemory`] for an address no device knows.
    pub fn fill_3d(
        &self,
        stream: &Stream,
        dst: &CopyEnd,
        value: u8,
        extent: Extent,
        wait: bool,
    ) -> RuntimeResult<()> {
        self.fill_3d_pattern(stream, dst, u32::from(value), 1, extent, wait)
    }

    /// As [`fill_3d`](Self::fill_3d) with an `element`-byte (1, 2 or 4) pattern
    /// (`hipMemsetD2D16/32`): `extent.width` is in bytes, a multiple of `element`, and the
    /// region's start and row pitch must be aligned to it.
    ///
    /// # Errors
    /// As [`fill_3d`](Self::fill_3d); [`RuntimeError::BadRegion`] for an element size other
    /// than 1, 2 or 4 or a misaligned region.
    pub fn fill_3d_pattern(
        &self,
        stream: &Stream,
        dst: &CopyEnd,
        pattern: u32,
        element: u8,
        extent: Extent,
        wait: bool,
    ) -> RuntimeResult<()> {
        if !matches!(element, 1 | 2 | 4) {
            return Err(region_error(
                "destination",
                format!("elements of {element} bytes (1, 2 or 4)"),
            ));
        }
        if extent.is_empty() {
            return Ok(());
        }
        if let CopyEnd::Array(view) = dst {
            return Err(region_error(
                "destination",
                format!("array {} is not pitched memory to fill", view.array.id),
            ));
        }
        let end = dst;
        let r = rect("destination", end, Origin::default(), extent)?;
        let e = u64::from(element);
        if r.start % e != 0 || extent.width % e != 0 || (extent.height > 1 && r.row_pitch % e != 0)
        {
            return Err(region_error(
                "destination",
                format!(
                    "a fill of {e}-byte elements needs an aligned start ({:#x}), width ({}) and \
                     pitch ({})",
                    r.start, extent.width, r.row_pitch
                ),
            ));
        }
        self.check_device_memory(r.start, r.span, "fill destination")?;
        let ctx = stream.context()?;
        let device = ctx.device().clone();
        stream.host_work(
            "filling a 3D region",
            Box::new(move || {
                let w = extent.width;
                let packed =
                    r.row_pitch == w && (extent.depth == 1 || r.slice_pitch == w * extent.height);
                if packed {
                    // SAFETY: the region, one run, was checked to lie inside a live allocation,
                    // which stays allocated while the stream runs.
                    return unsafe {
                        device.fill(r.start, pattern, element, w * extent.height * extent.depth)
                    };
                }
                for z in 0..extent.depth {
                    for y in 0..extent.height {
                        let at = r.start + z * r.slice_pitch + y * r.row_pitch;
                        // SAFETY: one row of the checked region.
                        unsafe { device.fill(at, pattern, element, w) }?;
                    }
                }
                Ok(())
            }),
        )?;
        if wait {
            stream.synchronize()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(w: u64, h: u64, d: u64, flags: u32) -> ArrayDescriptor {
        ArrayDescriptor {
            format: ArrayFormat::F32,
            channels: 1,
            width: w,
            height: h,
            depth: d,
            flags: ArrayFlags(flags),
        }
    }

    #[test]
    fn shapes_follow_extent_and_flags() {
        assert_eq!(descriptor(8, 0, 0, 0).shape().unwrap(), ArrayShape::OneD);
        assert_eq!(descriptor(8, 4, 0, 0).shape().unwrap(), ArrayShape::TwoD);
        assert_eq!(descriptor(8, 4, 2, 0).shape().unwrap(), ArrayShape::ThreeD);
        assert_eq!(
            descriptor(8, 0, 3, 1).shape().unwrap(),
            ArrayShape::Layered1D
        );
        assert_eq!(
            descriptor(8, 4, 3, 1).shape().unwrap(),
            ArrayShape::Layered2D
        );
        assert_eq!(descriptor(8, 8, 6, 4).shape().unwrap(), ArrayShape::Cubemap);
        assert_eq!(
            descriptor(8, 8, 12, 5).shape().unwrap(),
            ArrayShape::CubemapLayered
        );
        assert_eq!(descriptor(8, 4, 0, 8).shape().unwrap(), ArrayShape::TwoD);
        for bad in [
            descriptor(0, 4, 0, 0),
            descriptor(8, 0, 3, 0),
            descriptor(8, 4, 0, 1),
            descriptor(8, 4, 6, 4),
            descriptor(8, 8, 7, 4),
            descriptor(8, 8, 7, 5),
            descriptor(8, 4, 2, 8),
            descriptor(8, 4, 0, 0x10),
            descriptor(MAX_DIMENSION + 1, 0, 0, 0),
            descriptor(8, 8, MAX_DEPTH_3D + 1, 0),
            ArrayDescriptor {
                channels: 3,
                ..descriptor(8, 0, 0, 0)
            },
        ] {
            assert!(
                matches!(bad.shape(), Err(RuntimeError::InvalidArray { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn mip_levels_end_at_one_texel() {
        assert_eq!(descriptor(1, 0, 0, 0).max_levels(), 1);
        assert_eq!(descriptor(16, 5, 0, 0).max_levels(), 5);
        assert_eq!(descriptor(4, 4, 64, 0).max_levels(), 7);
        // Layers do not count.
        assert_eq!(descriptor(4, 4, 64, 1).max_levels(), 3);
    }

    #[test]
    fn regions_are_checked_against_pitches_and_overflow() {
        let e = |w, h, d| Extent {
            width: w,
            height: h,
            depth: d,
        };
        let linear = |pitch, rows| CopyEnd::Linear {
            address: 0x1000,
            pitch,
            rows,
        };
        let r = rect(
            "source",
            &linear(64, 8),
            Origin { x: 4, y: 1, z: 2 },
            e(16, 4, 3),
        )
        .unwrap();
        assert_eq!(r.start, 0x1000 + 2 * 512 + 64 + 4);
        assert_eq!(r.span, 2 * 512 + 3 * 64 + 16);
        // Pitch 0 is the width, rows 0 the height (HIP's BufferRect rules).
        let r = rect("source", &linear(0, 0), Origin::default(), e(16, 4, 3)).unwrap();
        assert_eq!((r.row_pitch, r.slice_pitch), (16, 64));
        assert!(matches!(
            rect("source", &linear(8, 0), Origin::default(), e(16, 1, 1)),
            Err(RuntimeError::PitchTooSmall {
                pitch: 8,
                width: 16,
                ..
            })
        ));
        assert!(matches!(
            rect("source", &linear(64, 2), Origin::default(), e(16, 4, 1)),
            Err(RuntimeError::BadRegion { .. })
        ));
        assert!(matches!(
            rect(
                "source",
                &linear(u64::MAX / 2, 0),
                Origin::default(),
                e(16, 4, 1)
            ),
            Err(RuntimeError::BadRegion { .. })
        ));
        assert!(matches!(
            rect(
                "source",
                &linear(64, 0),
                Origin {
                    x: u64::MAX - 0x100,
                    y: 0,
                    z: 0
                },
                e(16, 1, 1)
            ),
            Err(RuntimeError::BadRegion { .. } | RuntimeError::AddressWraps { .. })
        ));
        assert!(matches!(
            rect(
                "source",
                &CopyEnd::Linear {
                    address: 0,
                    pitch: 0,
                    rows: 0
                },
                Origin::default(),
                e(1, 1, 1)
            ),
            Err(RuntimeError::NullPointer { .. })
        ));
    }
}
