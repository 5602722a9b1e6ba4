//! Arrays, pitched and 3D memory: `hipMallocPitch`, `hipMalloc3D`, HIP arrays
//! (`hipMallocArray`, `hipArrayCreate`, `hipMalloc3DArray`, `hipArray3DCreate`, mipmapped arrays
//! and their levels), every 2D, 3D and array copy (`hipMemcpy2DToArray`, `hipMemcpy3D`,
//! `hipDrvMemcpy3D`, `hipMemcpyParam2D`, `hipMemcpyHtoA`, ...) and the 2D/3D fills, over the
//! runtime's arrays and region checks (`rocload::runtime::array`). Behaviour and error codes
//! are HIP 5.2.3's (clr's `hip_memory.cpp`); where clr does something no caller can want the
//! difference is named on the entry point.
//!
//! A `hipArray_t` is the address of a `hipArray` record the runtime owns, filled as HIP 5.2's
//! header describes it (HIP 6 made the struct opaque; the same record serves), so a program
//! may read `array->width`. Records are validated by address before anything is read through
//! them: an address that is no live record is an error, never a dereference. A freed record
//! is reused only after [`QUARANTINE`] more have been freed, so a stale handle is recognised
//! until then. `hipMipmappedArray_t` works the same way.
//!
//! Copies run in stream order like `hipMemcpyAsync`: the synchronous forms on the null stream
//! of the device that holds the array or device memory involved and wait for it, the `Async`
//! forms on their stream, the `_spt` forms on `hipStreamPerThread`. Every extent, pitch and
//! offset is checked against the memory involved before anything is queued.

use rocload_ffi::export;
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_int, c_uint, c_void};
use std::ptr::NonNull;
use std::sync::LazyLock;

use parking_lot::Mutex;
use rocload_lib::device::MemoryKind;
use rocload_lib::runtime::graph::{CopyForm, CopyNode, MemsetNode, PitchedPtr};
use rocload_lib::runtime::{
    Array, ArrayDescriptor, ArrayFlags, ArrayFormat, ArrayView, CopyEnd, Extent, NodeOp, Origin,
    RegionPlace, Stream,
};

use crate::generation::Generation;
use crate::memory::check_kind;
use crate::stream::stream_of;
use crate::*;

// ------------------------------------------------------------------------------ C types

/// `hipChannelFormatDesc`: bits per channel and the channels' kind.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct hipChannelFormatDesc {
    /// Bits of x.
    pub x: c_int,
    /// Bits of y.
    pub y: c_int,
    /// Bits of z.
    pub z: c_int,
    /// Bits of w.
    pub w: c_int,
    /// `hipChannelFormatKind`: signed 0, unsigned 1, float 2, none 3.
    pub f: c_int,
}

/// `struct hipArray` as HIP 5.2's `driver_types.h` defines it (opaque from HIP 6).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipArray {
    /// The device address of the array's (level's) storage.
    pub data: *mut c_void,
    /// Its channels.
    pub desc: hipChannelFormatDesc,
    /// Its `hipArray*` flags.
    pub type_: c_uint,
    /// Texels per row.
    pub width: c_uint,
    /// Rows (0 for 1D).
    pub height: c_uint,
    /// Slices or layers (0 for 1D and 2D).
    pub depth: c_uint,
    /// `hipArray_Format`.
    pub Format: c_int,
    /// Channels per texel.
    pub NumChannels: c_uint,
    /// Made by the driver API (`hipArrayCreate`, `hipArray3DCreate`).
    pub isDrv: bool,
    /// `hipTextureType*` of its shape.
    pub textureType: c_uint,
}
const _: () = assert!(std::mem::size_of::<hipArray>() == 64);
const _: () = assert!(std::mem::offset_of!(hipArray, Format) == 44);
const _: () = assert!(std::mem::offset_of!(hipArray, textureType) == 56);

impl Default for hipArray {
    fn default() -> Self {
        hipArray {
            data: std::ptr::null_mut(),
            desc: hipChannelFormatDesc::default(),
            type_: 0,
            width: 0,
            height: 0,
            depth: 0,
            Format: 0,
            NumChannels: 0,
            isDrv: false,
            textureType: 0,
        }
    }
}

/// `struct hipMipmappedArray` (HIP 6 added `num_channels` where HIP 5.2 has padding).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMipmappedArray {
    /// The device address of level 0.
    pub data: *mut c_void,
    /// Its channels.
    pub desc: hipChannelFormatDesc,
    /// `hipTextureType*` of its shape.
    pub type_: c_uint,
    /// Level 0's texels per row.
    pub width: c_uint,
    /// Level 0's rows.
    pub height: c_uint,
    /// Level 0's slices or layers.
    pub depth: c_uint,
    /// 0.
    pub min_mipmap_level: c_uint,
    /// The number of levels (as clr fills it).
    pub max_mipmap_level: c_uint,
    /// `hipArray*` flags.
    pub flags: c_uint,
    /// `hipArray_Format`.
    pub format: c_int,
    /// Channels per texel.
    pub num_channels: c_uint,
}
const _: () = assert!(std::mem::size_of::<hipMipmappedArray>() == 64);
const _: () = assert!(std::mem::offset_of!(hipMipmappedArray, format) == 56);

impl Default for hipMipmappedArray {
    fn default() -> Self {
        hipMipmappedArray {
            data: std::ptr::null_mut(),
            desc: hipChannelFormatDesc::default(),
            type_: 0,
            width: 0,
            height: 0,
            depth: 0,
            min_mipmap_level: 0,
            max_mipmap_level: 0,
            flags: 0,
            format: 0,
            num_channels: 0,
        }
    }
}

/// `HIP_ARRAY_DESCRIPTOR`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct HIP_ARRAY_DESCRIPTOR {
    /// Texels per row.
    pub Width: usize,
    /// Rows (0 for 1D).
    pub Height: usize,
    /// `hipArray_Format`.
    pub Format: c_int,
    /// Channels per texel.
    pub NumChannels: c_uint,
}
const _: () = assert!(std::mem::size_of::<HIP_ARRAY_DESCRIPTOR>() == 24);

/// `HIP_ARRAY3D_DESCRIPTOR`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct HIP_ARRAY3D_DESCRIPTOR {
    /// Texels per row.
    pub Width: usize,
    /// Rows (0 for 1D).
    pub Height: usize,
    /// Slices or layers (0 for 1D and 2D).
    pub Depth: usize,
    /// `hipArray_Format`.
    pub Format: c_int,
    /// Channels per texel.
    pub NumChannels: c_uint,
    /// `hipArray*` flags.
    pub Flags: c_uint,
}
const _: () = assert!(std::mem::size_of::<HIP_ARRAY3D_DESCRIPTOR>() == 40);

/// `hipExtent`: width in texels for arrays, in bytes for linear memory.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hipExtent {
    /// Width.
    pub width: usize,
    /// Height.
    pub height: usize,
    /// Depth.
    pub depth: usize,
}

/// `hipPos`: `x` in texels for arrays, in bytes for linear memory.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hipPos {
    /// x.
    pub x: usize,
    /// y.
    pub y: usize,
    /// z.
    pub z: usize,
}

/// `hipPitchedPtr`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipPitchedPtr {
    /// The memory.
    pub ptr: *mut c_void,
    /// Bytes per row.
    pub pitch: usize,
    /// Width of the allocation in bytes.
    pub xsize: usize,
    /// Rows per slice.
    pub ysize: usize,
}

/// `hipMemcpy3DParms`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMemcpy3DParms {
    /// Source array, or NULL.
    pub srcArray: *mut hipArray,
    /// Source position.
    pub srcPos: hipPos,
    /// Source memory, or NULL.
    pub srcPtr: hipPitchedPtr,
    /// Destination array, or NULL.
    pub dstArray: *mut hipArray,
    /// Destination position.
    pub dstPos: hipPos,
    /// Destination memory, or NULL.
    pub dstPtr: hipPitchedPtr,
    /// The extent copied.
    pub extent: hipExtent,
    /// `hipMemcpyKind`.
    pub kind: c_int,
}
const _: () = assert!(std::mem::size_of::<hipMemcpy3DParms>() == 160);

/// `hip_Memcpy2D` (the same layout in every generation; `hipMemoryType` is numbered per
/// generation).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hip_Memcpy2D {
    /// Source x in bytes.
    pub srcXInBytes: usize,
    /// Source row.
    pub srcY: usize,
    /// `hipMemoryType` of the source.
    pub srcMemoryType: c_int,
    /// Source host memory.
    pub srcHost: *const c_void,
    /// Source device memory.
    pub srcDevice: *mut c_void,
    /// Source array.
    pub srcArray: *mut hipArray,
    /// Source bytes per row.
    pub srcPitch: usize,
    /// Destination x in bytes.
    pub dstXInBytes: usize,
    /// Destination row.
    pub dstY: usize,
    /// `hipMemoryType` of the destination.
    pub dstMemoryType: c_int,
    /// Destination host memory.
    pub dstHost: *mut c_void,
    /// Destination device memory.
    pub dstDevice: *mut c_void,
    /// Destination array.
    pub dstArray: *mut hipArray,
    /// Destination bytes per row.
    pub dstPitch: usize,
    /// Bytes per row copied.
    pub WidthInBytes: usize,
    /// Rows copied.
    pub Height: usize,
}
const _: () = assert!(std::mem::size_of::<hip_Memcpy2D>() == 128);

/// Declares `HIP_MEMCPY3D` in one generation's field width: `c_uint` in HIP 5, `usize` from
/// HIP 6.
macro_rules! memcpy3d_struct {
    ($(#[$doc:meta])* $name:ident, $t:ty, $size:expr) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy)]
        pub struct $name {
            /// Source x in bytes.
            pub srcXInBytes: $t,
            /// Source row.
            pub srcY: $t,
            /// Source slice.
            pub srcZ: $t,
            /// Source mip level (must be 0).
            pub srcLOD: $t,
            /// `hipMemoryType` of the source.
            pub srcMemoryType: c_int,
            /// Source host memory.
            pub srcHost: *const c_void,
            /// Source device memory.
            pub srcDevice: *mut c_void,
            /// Source array.
            pub srcArray: *mut hipArray,
            /// Source bytes per row.
            pub srcPitch: $t,
            /// Source rows per slice.
            pub srcHeight: $t,
            /// Destination x in bytes.
            pub dstXInBytes: $t,
            /// Destination row.
            pub dstY: $t,
            /// Destination slice.
            pub dstZ: $t,
            /// Destination mip level (must be 0).
            pub dstLOD: $t,
            /// `hipMemoryType` of the destination.
            pub dstMemoryType: c_int,
            /// Destination host memory.
            pub dstHost: *mut c_void,
            /// Destination device memory.
            pub dstDevice: *mut c_void,
            /// Destination array.
            pub dstArray: *mut hipArray,
            /// Destination bytes per row.
            pub dstPitch: $t,
            /// Destination rows per slice.
            pub dstHeight: $t,
            /// Bytes per row copied.
            pub WidthInBytes: $t,
            /// Rows copied.
            pub Height: $t,
            /// Slices copied.
            pub Depth: $t,
        }
        const _: () = assert!(std::mem::size_of::<$name>() == $size);

        impl $name {
            fn generic(&self) -> DrvCopy {
                DrvCopy {
                    src: DrvEnd {
                        x: self.srcXInBytes as u64,
                        y: self.srcY as u64,
                        z: self.srcZ as u64,
                        lod: self.srcLOD as u64,
                        memory_type: self.srcMemoryType,
                        host: self.srcHost as u64,
                        device: self.srcDevice as u64,
                        array: self.srcArray,
                        pitch: self.srcPitch as u64,
                        rows: self.srcHeight as u64,
                    },
                    dst: DrvEnd {
                        x: self.dstXInBytes as u64,
                        y: self.dstY as u64,
                        z: self.dstZ as u64,
                        lod: self.dstLOD as u64,
                        memory_type: self.dstMemoryType,
                        host: self.dstHost as u64,
                        device: self.dstDevice as u64,
                        array: self.dstArray,
                        pitch: self.dstPitch as u64,
                        rows: self.dstHeight as u64,
                    },
                    extent: Extent {
                        width: self.WidthInBytes as u64,
                        height: self.Height as u64,
                        depth: self.Depth as u64,
                    },
                }
            }
        }
    };
}

memcpy3d_struct!(
    /// `HIP_MEMCPY3D` of HIP 5 (Debian's 5.2.3 headers): 32-bit positions and sizes.
    HIP_MEMCPY3D_v5,
    c_uint,
    128
);
memcpy3d_struct!(
    /// `HIP_MEMCPY3D` from HIP 6: `size_t` positions and sizes.
    HIP_MEMCPY3D_v6,
    usize,
    184
);

// HIP 6's layout, from its header's field order (no HIP 6 header here to probe).
const _: () = assert!(std::mem::offset_of!(HIP_MEMCPY3D_v6, srcMemoryType) == 32);
const _: () = assert!(std::mem::offset_of!(HIP_MEMCPY3D_v6, srcHost) == 40);
const _: () = assert!(std::mem::offset_of!(HIP_MEMCPY3D_v6, dstMemoryType) == 112);
const _: () = assert!(std::mem::offset_of!(HIP_MEMCPY3D_v6, dstHost) == 120);
const _: () = assert!(std::mem::offset_of!(HIP_MEMCPY3D_v6, Depth) == 176);

/// `hipMemoryType` values as `hip_Memcpy2D` and `HIP_MEMCPY3D` use them, per generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryType {
    Host,
    Device,
    Array,
    /// The address decides (`hipMemoryTypeUnified`, HIP 5.3+'s and 6's `Managed`).
    Unified,
}

fn memory_type(value: c_int, side: &str) -> Result<MemoryType, Failure> {
    let t = match (crate::generation::current(), value) {
        // HIP 5: Host, Device, Array, Unified, (5.3) Managed.
        (Generation::Hip5, 0) => MemoryType::Host,
        (Generation::Hip5, 1) => MemoryType::Device,
        (Generation::Hip5, 2) => MemoryType::Array,
        (Generation::Hip5, 3 | 4) => MemoryType::Unified,
        // HIP 6: Unregistered 0, Host 1, Device 2, Managed 3, Array 10, Unified 11.
        (_, 0 | 1) => MemoryType::Host,
        (_, 2) => MemoryType::Device,
        (_, 3 | 11) => MemoryType::Unified,
        (_, 10) => MemoryType::Array,
        _ => {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("{side} hipMemoryType {value} is none of HIP's"),
            ))
        }
    };
    Ok(t)
}

/// One end of a driver-API copy, whatever the struct's generation.
#[derive(Debug, Clone, Copy)]
struct DrvEnd {
    x: u64,
    y: u64,
    z: u64,
    lod: u64,
    memory_type: c_int,
    host: u64,
    device: u64,
    array: *mut hipArray,
    pitch: u64,
    rows: u64,
}

/// A driver-API copy (`HIP_MEMCPY3D`, `hip_Memcpy2D`) in one form.
#[derive(Debug, Clone, Copy)]
struct DrvCopy {
    src: DrvEnd,
    dst: DrvEnd,
    extent: Extent,
}

impl hip_Memcpy2D {
    fn generic(&self) -> DrvCopy {
        let end = |x: usize, y: usize, t: c_int, host: u64, device, array, pitch: usize| DrvEnd {
            x: x as u64,
            y: y as u64,
            z: 0,
            lod: 0,
            memory_type: t,
            host,
            device,
            array,
            pitch: pitch as u64,
            rows: 0,
        };
        DrvCopy {
            src: end(
                self.srcXInBytes,
                self.srcY,
                self.srcMemoryType,
                self.srcHost as u64,
                self.srcDevice as u64,
                self.srcArray,
                self.srcPitch,
            ),
            dst: end(
                self.dstXInBytes,
                self.dstY,
                self.dstMemoryType,
                self.dstHost as u64,
                self.dstDevice as u64,
                self.dstArray,
                self.dstPitch,
            ),
            extent: Extent {
                width: self.WidthInBytes as u64,
                height: self.Height as u64,
                depth: 1,
            },
        }
    }
}

// ------------------------------------------------------------------------------ records

/// Freed records wait behind this many others before one is reused, so a stale handle is
/// recognised (an error) until that many arrays were freed after it.
const QUARANTINE: usize = 1024;
/// The most records of one kind (live and quarantined).
const MAX_RECORDS: usize = 1 << 24;

/// A record's address; the record is plain data the runtime writes only under its table's
/// lock (callers read it).
struct RecordPtr<R>(NonNull<R>);

// SAFETY: the pointee is plain C data (no thread affinity); the table writes it only under
// its lock, and C callers only read it.
unsafe impl<R> Send for RecordPtr<R> {}

struct Slot<R, E> {
    record: RecordPtr<R>,
    entry: Option<E>,
}

struct Slots<R, E> {
    slots: Vec<Slot<R, E>>,
    by_address: HashMap<usize, usize>,
    free: VecDeque<usize>,
}

/// The live records of one kind (`hipArray` or `hipMipmappedArray`), each with what it
/// stands for. Records are never returned to the allocator (the table reuses them), so an
/// address once given out always points to a record: looking it up is safe whatever the caller
/// passes, and only addresses the table gave out are ever read or written.
struct Records<R, E> {
    what: &'static str,
    inner: Mutex<Slots<R, E>>,
}

impl<R: Default, E: Clone> Records<R, E> {
    fn new(what: &'static str) -> Self {
        Records {
            what,
            inner: Mutex::new(Slots {
                slots: Vec::new(),
                by_address: HashMap::new(),
                free: VecDeque::new(),
            }),
        }
    }

    /// Stores `entry` behind a record filled with `record`; returns the record's address.
    fn insert(&self, record: R, entry: E) -> Result<*mut R, Failure> {
        let mut inner = self.inner.lock();
        let index = if inner.free.len() > QUARANTINE {
            inner.free.pop_front()
        } else {
            None
        };
        let index = match index {
            Some(i) => i,
            None => {
                if inner.slots.len() >= MAX_RECORDS {
                    return Err(Failure::new(
                        hipErrorOutOfMemory,
                        format!("{MAX_RECORDS} {} records exist", self.what),
                    ));
                }
                inner.slots.try_reserve(1).map_err(|_| {
                    Failure::new(
                        hipErrorOutOfMemory,
                        format!("no memory for a {}", self.what),
                    )
                })?;
                let ptr = NonNull::from(Box::leak(Box::new(R::default())));
                let i = inner.slots.len();
                inner.slots.push(Slot {
                    record: RecordPtr(ptr),
                    entry: None,
                });
                inner.by_address.insert(ptr.as_ptr() as usize, i);
                i
            }
        };
        let slot = &mut inner.slots[index];
        let ptr = slot.record.0.as_ptr();
        // SAFETY: the record is ours (leaked, never freed); written under the lock.
        unsafe { ptr.write(record) };
        slot.entry = Some(entry);
        Ok(ptr)
    }

    /// What a live record stands for; `None` for NULL, a freed record or any other address.
    fn get(&self, address: *const R) -> Option<E> {
        let inner = self.inner.lock();
        let index = *inner.by_address.get(&(address as usize))?;
        inner.slots[index].entry.clone()
    }

    /// Forgets a live record (its address is stale from now on) and returns what it stood
    /// for.
    fn remove(&self, address: *const R) -> Option<E> {
        let mut inner = self.inner.lock();
        let index = *inner.by_address.get(&(address as usize))?;
        let slot = &mut inner.slots[index];
        let entry = slot.entry.take()?;
        // SAFETY: our record; cleared under the lock so a stale read sees zeros.
        unsafe { slot.record.0.as_ptr().write(R::default()) };
        inner.free.push_back(index);
        Some(entry)
    }
}

/// What a `hipArray_t` stands for.
#[derive(Clone)]
struct ArrayEntry {
    view: ArrayView,
    /// The mipmapped array this is a level of (freeing it frees only the handle).
    level_of: Option<Arc<MipmapEntry>>,
}

/// What a `hipMipmappedArray_t` stands for: the array and the handles of the levels given
/// out so far (one per level, reused by later requests).
struct MipmapEntry {
    array: Arc<Array>,
    levels: Mutex<Vec<Option<usize>>>,
}

static ARRAYS: LazyLock<Records<hipArray, ArrayEntry>> = LazyLock::new(|| Records::new("hipArray"));
static MIPMAPS: LazyLock<Records<hipMipmappedArray, Arc<MipmapEntry>>> =
    LazyLock::new(|| Records::new("hipMipmappedArray"));

/// The array level behind a `hipArray_t`; NULL and anything but a live record are `code`
/// (clr: `hipErrorInvalidValue` mostly, `hipErrorInvalidResourceHandle` for the 2D array
/// copies).
pub(crate) fn array_of(
    array: *const hipArray,
    what: &str,
    code: hipError_t,
) -> Result<ArrayView, Failure> {
    if array.is_null() {
        return Err(Failure::new(code, format!("{what} is NULL")));
    }
    ARRAYS
        .get(array)
        .map(|e| e.view)
        .ok_or_else(|| Failure::new(code, format!("{what} {array:p} is not a live hipArray")))
}

/// The array behind a `hipMipmappedArray_t`.
pub(crate) fn mipmapped_array_of(array: *const hipMipmappedArray) -> Result<Arc<Array>, Failure> {
    mipmap_of(array).map(|e| e.array.clone())
}

fn mipmap_of(array: *const hipMipmappedArray) -> Result<Arc<MipmapEntry>, Failure> {
    if array.is_null() {
        return Err(Failure::null("mipmappedArray"));
    }
    MIPMAPS.get(array).ok_or_else(|| {
        Failure::new(
            hipErrorInvalidValue,
            format!("{array:p} is not a live hipMipmappedArray"),
        )
    })
}

/// The channel description of `channels` channels of `format`.
pub(crate) fn channel_desc(format: ArrayFormat, channels: u32) -> hipChannelFormatDesc {
    let bits = (format.bytes() * 8) as c_int;
    let kind = match format {
        ArrayFormat::I8 | ArrayFormat::I16 | ArrayFormat::I32 => 0,
        ArrayFormat::U8 | ArrayFormat::U16 | ArrayFormat::U32 => 1,
        ArrayFormat::F16 | ArrayFormat::F32 => 2,
    };
    let on = |i: u32| if channels > i { bits } else { 0 };
    hipChannelFormatDesc {
        x: on(0),
        y: on(1),
        z: on(2),
        w: on(3),
        f: kind,
    }
}

/// The format and channel count a channel description names: 1, 2 or 4 channels of equal
/// width, the used ones first.
pub(crate) fn format_of(desc: &hipChannelFormatDesc) -> Result<(ArrayFormat, u32), Failure> {
    let bad = |why: &str| {
        Failure::new(
            hipErrorInvalidValue,
            format!("channel description {desc:?}: {why}"),
        )
    };
    let bits = [desc.x, desc.y, desc.z, desc.w];
    let channels = bits.iter().take_while(|&&b| b != 0).count();
    if bits[channels..].iter().any(|&b| b != 0) {
        return Err(bad("unused channels come before used ones"));
    }
    if bits[..channels].iter().any(|&b| b != desc.x) {
        return Err(bad("channels of different widths"));
    }
    let format = match (desc.f, desc.x) {
        (0, 8) => ArrayFormat::I8,
        (0, 16) => ArrayFormat::I16,
        (0, 32) => ArrayFormat::I32,
        (1, 8) => ArrayFormat::U8,
        (1, 16) => ArrayFormat::U16,
        (1, 32) => ArrayFormat::U32,
        (2, 16) => ArrayFormat::F16,
        (2, 32) => ArrayFormat::F32,
        _ => return Err(bad("no array format has this kind and width")),
    };
    Ok((format, channels as u32))
}

fn format_from_raw(raw: c_int) -> Result<ArrayFormat, Failure> {
    ArrayFormat::from_raw(raw as u32)
        .ok_or_else(|| Failure::new(hipErrorInvalidValue, format!("hipArray_Format {raw:#x}")))
}

/// Creates an array and its record (`isDrv`: made through the driver API).
fn create_array(
    out_array: *mut *mut hipArray,
    descriptor: ArrayDescriptor,
    driver: bool,
) -> Result<(), Failure> {
    if out_array.is_null() {
        return Err(Failure::null("array"));
    }
    let array = runtime().create_array(current_device(), descriptor, 1)?;
    let view = ArrayView::new(array.clone(), 0)
        .ok_or_else(|| Failure::new(hipErrorUnknown, "a new array has no level 0"))?;
    let record = array_record(&view, driver);
    let address = match ARRAYS.insert(
        record,
        ArrayEntry {
            view,
            level_of: None,
        },
    ) {
        Ok(a) => a,
        Err(e) => {
            let _ = runtime().free_array(&array);
            return Err(e);
        }
    };
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out(out_array, "array", address) }
}

fn array_record(view: &ArrayView, driver: bool) -> hipArray {
    let d = view.array().descriptor();
    let level = view.level();
    hipArray {
        data: view.address() as *mut c_void,
        desc: channel_desc(d.format, d.channels),
        type_: d.flags.0,
        // Extents are bounded by runtime::array::MAX_DIMENSION.
        width: level.width as c_uint,
        height: level.height as c_uint,
        depth: level.depth as c_uint,
        Format: d.format.raw() as c_int,
        NumChannels: d.channels,
        isDrv: driver,
        textureType: view.array().shape().texture_type(),
    }
}

fn descriptor_3d(d: &HIP_ARRAY3D_DESCRIPTOR) -> Result<ArrayDescriptor, Failure> {
    Ok(ArrayDescriptor {
        format: format_from_raw(d.Format)?,
        channels: d.NumChannels,
        width: d.Width as u64,
        height: d.Height as u64,
        depth: d.Depth as u64,
        flags: ArrayFlags(d.Flags),
    })
}

fn descriptor_of(
    desc: *const hipChannelFormatDesc,
    extent: hipExtent,
    flags: c_uint,
) -> Result<ArrayDescriptor, Failure> {
    if desc.is_null() {
        return Err(Failure::null("desc"));
    }
    // SAFETY: non-null, readable by the caller's contract.
    let (format, channels) = format_of(unsafe { &*desc })?;
    Ok(ArrayDescriptor {
        format,
        channels,
        width: extent.width as u64,
        height: extent.height as u64,
        depth: extent.depth as u64,
        flags: ArrayFlags(flags),
    })
}

/// Reads a struct argument; NULL is `hipErrorInvalidValue`.
///
/// # Safety
/// Non-null `p` must be readable for a `T`.
unsafe fn read<T: Copy>(p: *const T, what: &str) -> Result<T, Failure> {
    if p.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-null and readable by the caller's contract; read unaligned, as C callers
    // may pack their structs anywhere.
    Ok(unsafe { p.read_unaligned() })
}

// ------------------------------------------------------------------------------ pitched memory

/// Bytes per row of pitched memory: the width rounded up to the device's texture pitch
/// alignment (256, `hipDeviceProp_t::texturePitchAlignment`).
const PITCH_ALIGNMENT: usize = 256;

/// Allocates `depth` slices of `height` rows of `width` bytes, rows padded to
/// [`PITCH_ALIGNMENT`]; any zero extent gives NULL and pitch 0 (clr).
fn malloc_pitched(
    ptr: *mut *mut c_void,
    width: usize,
    height: usize,
    depth: usize,
) -> Result<usize, Failure> {
    if ptr.is_null() {
        return Err(Failure::null("ptr"));
    }
    if width == 0 || height == 0 || depth == 0 {
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(ptr, "ptr", std::ptr::null_mut())? };
        return Ok(0);
    }
    let overflow = || {
        Failure::new(
            hipErrorOutOfMemory,
            format!("{width} x {height} x {depth} bytes of pitched memory overflow"),
        )
    };
    let pitch = width
        .checked_next_multiple_of(PITCH_ALIGNMENT)
        .ok_or_else(overflow)?;
    let size = pitch
        .checked_mul(height)
        .and_then(|v| v.checked_mul(depth))
        .ok_or_else(overflow)?;
    let address =
        runtime().allocate_for_program(current_device(), size as u64, MemoryKind::Device)?;
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out(ptr, "ptr", address as *mut c_void)? };
    Ok(pitch)
}

/// `hipError_t hipMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height)`: rows
/// padded to 256 bytes; a zero width or height gives NULL (pitch untouched, as clr).
#[export]
pub unsafe extern "C" fn hipMallocPitch(
    ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> hipError_t {
    call("hipMallocPitch", || {
        malloc_pitch_2d(ptr, pitch, width, height)
    })
}

fn malloc_pitch_2d(
    ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> Result<(), Failure> {
    if pitch.is_null() {
        return Err(Failure::null("pitch"));
    }
    let p = malloc_pitched(ptr, width, height, 1)?;
    if p != 0 {
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(pitch, "pitch", p)? };
    }
    Ok(())
}

/// `hipError_t hipMemAllocPitch(hipDeviceptr_t* dptr, size_t* pitch, size_t widthInBytes,
/// size_t height, unsigned elementSizeBytes)`: `hipMallocPitch` (HIP 5.2 ignores the element
/// size: the pitch already suits every element size).
#[export]
pub unsafe extern "C" fn hipMemAllocPitch(
    dptr: *mut hipDeviceptr_t,
    pitch: *mut usize,
    width: usize,
    height: usize,
    _element_size: c_uint,
) -> hipError_t {
    call("hipMemAllocPitch", || {
        malloc_pitch_2d(dptr.cast(), pitch, width, height)
    })
}

/// `hipError_t hipMalloc3D(hipPitchedPtr* pitchedDevPtr, hipExtent extent)`: `depth` slices of
/// `height` rows of `extent.width` bytes, rows padded to 256 bytes.
#[export]
pub unsafe extern "C" fn hipMalloc3D(out_ptr: *mut hipPitchedPtr, extent: hipExtent) -> hipError_t {
    call("hipMalloc3D", || {
        if out_ptr.is_null() {
            return Err(Failure::null("pitchedDevPtr"));
        }
        let mut ptr = std::ptr::null_mut();
        let pitch = malloc_pitched(&mut ptr, extent.width, extent.height, extent.depth)?;
        let value = hipPitchedPtr {
            ptr,
            pitch,
            xsize: extent.width,
            ysize: extent.height,
        };
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(out_ptr, "pitchedDevPtr", value) }
    })
}

// ------------------------------------------------------------------------------ arrays

/// `hipError_t hipMallocArray(hipArray** array, const hipChannelFormatDesc* desc, size_t
/// width, size_t height, unsigned flags)`: a 1D (`height` 0) or 2D array. Unlike clr 5.2.3,
/// which refuses them as not supported, the surface, cubemap and gather flags are accepted
/// and kept for the textures and surfaces that use them.
#[export]
pub unsafe extern "C" fn hipMallocArray(
    array: *mut *mut hipArray,
    desc: *const hipChannelFormatDesc,
    width: usize,
    height: usize,
    flags: c_uint,
) -> hipError_t {
    call("hipMallocArray", || {
        let extent = hipExtent {
            width,
            height,
            depth: 0,
        };
        create_array(array, descriptor_of(desc, extent, flags)?, false)
    })
}

/// `hipError_t hipMalloc3DArray(hipArray_t* array, const hipChannelFormatDesc* desc,
/// hipExtent extent, unsigned flags)`: any shape, `extent` in texels.
#[export]
pub unsafe extern "C" fn hipMalloc3DArray(
    array: *mut *mut hipArray,
    desc: *const hipChannelFormatDesc,
    extent: hipExtent,
    flags: c_uint,
) -> hipError_t {
    call("hipMalloc3DArray", || {
        create_array(array, descriptor_of(desc, extent, flags)?, false)
    })
}

/// `hipError_t hipArrayCreate(hipArray** pHandle, const HIP_ARRAY_DESCRIPTOR*)`.
#[export]
pub unsafe extern "C" fn hipArrayCreate(
    array: *mut *mut hipArray,
    descriptor: *const HIP_ARRAY_DESCRIPTOR,
) -> hipError_t {
    call("hipArrayCreate", || {
        // SAFETY: readable by the caller's contract (NULL refused).
        let d = unsafe { read(descriptor, "pAllocateArray") }?;
        let d3 = HIP_ARRAY3D_DESCRIPTOR {
            Width: d.Width,
            Height: d.Height,
            Depth: 0,
            Format: d.Format,
            NumChannels: d.NumChannels,
            Flags: 0,
        };
        create_array(array, descriptor_3d(&d3)?, true)
    })
}

/// `hipError_t hipArray3DCreate(hipArray** array, const HIP_ARRAY3D_DESCRIPTOR*)`.
#[export]
pub unsafe extern "C" fn hipArray3DCreate(
    array: *mut *mut hipArray,
    descriptor: *const HIP_ARRAY3D_DESCRIPTOR,
) -> hipError_t {
    call("hipArray3DCreate", || {
        // SAFETY: readable by the caller's contract (NULL refused).
        let d = unsafe { read(descriptor, "pAllocateArray") }?;
        create_array(array, descriptor_3d(&d)?, true)
    })
}

/// Frees an array handle: an array's storage once every device is idle; a mipmapped array's
/// level only its handle (the storage goes with the mipmapped array).
fn free_array(array: *mut hipArray) -> Result<(), Failure> {
    if array.is_null() {
        return Err(Failure::null("array"));
    }
    let entry = ARRAYS.remove(array).ok_or_else(|| {
        Failure::new(
            hipErrorInvalidValue,
            format!("{array:p} is not a live hipArray"),
        )
    })?;
    match entry.level_of {
        Some(mipmap) => {
            let mut levels = mipmap.levels.lock();
            for slot in levels.iter_mut() {
                if *slot == Some(array as usize) {
                    *slot = None;
                }
            }
            Ok(())
        }
        None => Ok(runtime().free_array(entry.view.array())?),
    }
}

/// `hipError_t hipFreeArray(hipArray* array)`: waits for every device, then frees; NULL and
/// anything but a live array are `hipErrorInvalidValue`. A level of a mipmapped array
/// (`hipGetMipmappedArrayLevel`) frees only its handle.
#[export]
pub unsafe extern "C" fn hipFreeArray(array: *mut hipArray) -> hipError_t {
    call("hipFreeArray", || free_array(array))
}

/// `hipError_t hipArrayDestroy(hipArray* array)`: `hipFreeArray`.
#[export]
pub unsafe extern "C" fn hipArrayDestroy(array: *mut hipArray) -> hipError_t {
    call("hipArrayDestroy", || free_array(array))
}

/// `hipChannelFormatDesc hipCreateChannelDesc(int x, int y, int z, int w,
/// hipChannelFormatKind f)`: the description itself (what the header's
/// `hipCreateChannelDesc<T>()` calls); it is checked when an array is made from it.
#[export]
pub extern "C" fn hipCreateChannelDesc(
    x: c_int,
    y: c_int,
    z: c_int,
    w: c_int,
    f: c_int,
) -> hipChannelFormatDesc {
    hipChannelFormatDesc { x, y, z, w, f }
}

/// `hipError_t hipGetChannelDesc(hipChannelFormatDesc* desc, hipArray_const_t array)`: the
/// array's channels (for arrays of the driver API too, where clr's answer is undefined).
#[export]
pub unsafe extern "C" fn hipGetChannelDesc(
    desc: *mut hipChannelFormatDesc,
    array: *const hipArray,
) -> hipError_t {
    call("hipGetChannelDesc", || {
        let view = array_of(array, "array", hipErrorInvalidValue)?;
        let d = view.array().descriptor();
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(desc, "desc", channel_desc(d.format, d.channels)) }
    })
}

/// `hipError_t hipArrayGetInfo(hipChannelFormatDesc* desc, hipExtent* extent, unsigned*
/// flags, hipArray_t array)` (HIP 5.6): any output may be NULL.
#[export]
pub unsafe extern "C" fn hipArrayGetInfo(
    desc: *mut hipChannelFormatDesc,
    extent: *mut hipExtent,
    flags: *mut c_uint,
    array: *mut hipArray,
) -> hipError_t {
    call("hipArrayGetInfo", || {
        let view = array_of(array, "array", hipErrorInvalidValue)?;
        let d = view.array().descriptor();
        let level = view.level();
        // SAFETY: non-null outputs are writable by the caller's contract.
        unsafe {
            if !desc.is_null() {
                desc.write(channel_desc(d.format, d.channels));
            }
            if !extent.is_null() {
                extent.write(hipExtent {
                    width: level.width as usize,
                    height: level.height as usize,
                    depth: level.depth as usize,
                });
            }
            if !flags.is_null() {
                flags.write(d.flags.0);
            }
        }
        Ok(())
    })
}

/// `hipError_t hipArrayGetDescriptor(HIP_ARRAY_DESCRIPTOR*, hipArray_t array)` (HIP 5.6): a
/// 1D or 2D array's; a 3D or layered array is `hipErrorInvalidValue` (use
/// `hipArray3DGetDescriptor`).
#[export]
pub unsafe extern "C" fn hipArrayGetDescriptor(
    descriptor: *mut HIP_ARRAY_DESCRIPTOR,
    array: *mut hipArray,
) -> hipError_t {
    call("hipArrayGetDescriptor", || {
        let view = array_of(array, "array", hipErrorInvalidValue)?;
        let d = view.array().descriptor();
        let level = view.level();
        if level.depth != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "a 3D or layered array: use hipArray3DGetDescriptor",
            ));
        }
        let value = HIP_ARRAY_DESCRIPTOR {
            Width: level.width as usize,
            Height: level.height as usize,
            Format: d.format.raw() as c_int,
            NumChannels: d.channels,
        };
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(descriptor, "pArrayDescriptor", value) }
    })
}

/// `hipError_t hipArray3DGetDescriptor(HIP_ARRAY3D_DESCRIPTOR*, hipArray_t array)` (HIP 5.6).
#[export]
pub unsafe extern "C" fn hipArray3DGetDescriptor(
    descriptor: *mut HIP_ARRAY3D_DESCRIPTOR,
    array: *mut hipArray,
) -> hipError_t {
    call("hipArray3DGetDescriptor", || {
        let view = array_of(array, "array", hipErrorInvalidValue)?;
        let d = view.array().descriptor();
        let level = view.level();
        let value = HIP_ARRAY3D_DESCRIPTOR {
            Width: level.width as usize,
            Height: level.height as usize,
            Depth: level.depth as usize,
            Format: d.format.raw() as c_int,
            NumChannels: d.channels,
            Flags: d.flags.0,
        };
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(descriptor, "pArrayDescriptor", value) }
    })
}

// ------------------------------------------------------------------------------ mipmapped

fn create_mipmapped(
    out_array: *mut *mut hipMipmappedArray,
    descriptor: ArrayDescriptor,
    levels: c_uint,
) -> Result<(), Failure> {
    if out_array.is_null() {
        return Err(Failure::null("mipmappedArray"));
    }
    let array = runtime().create_array(current_device(), descriptor, levels)?;
    let count = array.levels().len();
    let mut slots = Vec::new();
    slots
        .try_reserve_exact(count)
        .map_err(|_| Failure::new(hipErrorOutOfMemory, "no memory for mip level handles"))?;
    slots.resize(count, None);
    let d = *array.descriptor();
    let record = hipMipmappedArray {
        data: array.base() as *mut c_void,
        desc: channel_desc(d.format, d.channels),
        type_: array.shape().texture_type(),
        width: d.width as c_uint,
        height: d.height as c_uint,
        depth: d.depth as c_uint,
        min_mipmap_level: 0,
        max_mipmap_level: count as c_uint,
        flags: d.flags.0,
        format: d.format.raw() as c_int,
        num_channels: d.channels,
    };
    let entry = Arc::new(MipmapEntry {
        array: array.clone(),
        levels: Mutex::new(slots),
    });
    let address = match MIPMAPS.insert(record, entry) {
        Ok(a) => a,
        Err(e) => {
            let _ = runtime().free_array(&array);
            return Err(e);
        }
    };
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out(out_array, "mipmappedArray", address) }
}

/// `hipError_t hipMallocMipmappedArray(hipMipmappedArray_t* mipmappedArray, const
/// hipChannelFormatDesc* desc, hipExtent extent, unsigned numLevels, unsigned flags)`:
/// `numLevels` levels (0 counts as 1; more than down to 1 x 1 is `hipErrorInvalidValue`).
/// clr 5.2.3 returns `hipErrorNotSupported` here; its driver-API twin works, and so does
/// this.
#[export]
pub unsafe extern "C" fn hipMallocMipmappedArray(
    array: *mut *mut hipMipmappedArray,
    desc: *const hipChannelFormatDesc,
    extent: hipExtent,
    levels: c_uint,
    flags: c_uint,
) -> hipError_t {
    call("hipMallocMipmappedArray", || {
        create_mipmapped(array, descriptor_of(desc, extent, flags)?, levels)
    })
}

/// `hipError_t hipMipmappedArrayCreate(hipMipmappedArray_t* pHandle, HIP_ARRAY3D_DESCRIPTOR*
/// pMipmappedArrayDesc, unsigned numMipmapLevels)`.
#[export]
pub unsafe extern "C" fn hipMipmappedArrayCreate(
    array: *mut *mut hipMipmappedArray,
    descriptor: *mut HIP_ARRAY3D_DESCRIPTOR,
    levels: c_uint,
) -> hipError_t {
    call("hipMipmappedArrayCreate", || {
        // SAFETY: readable by the caller's contract (NULL refused).
        let d = unsafe { read(descriptor, "pMipmappedArrayDesc") }?;
        create_mipmapped(array, descriptor_3d(&d)?, levels)
    })
}

fn free_mipmapped(array: *mut hipMipmappedArray) -> Result<(), Failure> {
    if array.is_null() {
        return Err(Failure::null("mipmappedArray"));
    }
    let entry = MIPMAPS.remove(array).ok_or_else(|| {
        Failure::new(
            hipErrorInvalidValue,
            format!("{array:p} is not a live hipMipmappedArray"),
        )
    })?;
    // The levels' handles go with it.
    let levels: Vec<usize> = entry
        .levels
        .lock()
        .iter_mut()
        .filter_map(Option::take)
        .collect();
    for level in levels {
        ARRAYS.remove(level as *const hipArray);
    }
    Ok(runtime().free_array(&entry.array)?)
}

/// `hipError_t hipFreeMipmappedArray(hipMipmappedArray_t)`: waits for every device, then
/// frees it and the handles of its levels (clr 5.2.3: `hipErrorNotSupported`).
#[export]
pub unsafe extern "C" fn hipFreeMipmappedArray(array: *mut hipMipmappedArray) -> hipError_t {
    call("hipFreeMipmappedArray", || free_mipmapped(array))
}

/// `hipError_t hipMipmappedArrayDestroy(hipMipmappedArray_t)`: `hipFreeMipmappedArray`.
#[export]
pub unsafe extern "C" fn hipMipmappedArrayDestroy(array: *mut hipMipmappedArray) -> hipError_t {
    call("hipMipmappedArrayDestroy", || free_mipmapped(array))
}

fn mipmap_level(
    level_array: *mut *mut hipArray,
    mipmap: *const hipMipmappedArray,
    level: c_uint,
) -> Result<(), Failure> {
    if level_array.is_null() {
        return Err(Failure::null("levelArray"));
    }
    let entry = mipmap_of(mipmap)?;
    let view = ArrayView::new(entry.array.clone(), level).ok_or_else(|| {
        Failure::new(
            hipErrorInvalidValue,
            format!(
                "level {level}: the mipmapped array has {}",
                entry.array.levels().len()
            ),
        )
    })?;
    let mut levels = entry.levels.lock();
    let slot = &mut levels[level as usize];
    let address = match *slot {
        Some(a) if ARRAYS.get(a as *const hipArray).is_some() => a as *mut hipArray,
        _ => {
            let record = array_record(&view, false);
            let a = ARRAYS.insert(
                record,
                ArrayEntry {
                    view,
                    level_of: Some(entry.clone()),
                },
            )?;
            *slot = Some(a as usize);
            a
        }
    };
    drop(levels);
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out(level_array, "levelArray", address) }
}

/// `hipError_t hipGetMipmappedArrayLevel(hipArray_t* levelArray, hipMipmappedArray_const_t,
/// unsigned level)`: the level as an array handle, the same handle each time; it lives as long
/// as the mipmapped array (clr 5.2.3: `hipErrorNotSupported`).
#[export]
pub unsafe extern "C" fn hipGetMipmappedArrayLevel(
    level_array: *mut *mut hipArray,
    mipmap: *const hipMipmappedArray,
    level: c_uint,
) -> hipError_t {
    call("hipGetMipmappedArrayLevel", || {
        mipmap_level(level_array, mipmap, level)
    })
}

/// `hipError_t hipMipmappedArrayGetLevel(hipArray_t* pLevelArray, hipMipmappedArray_t,
/// unsigned level)`: `hipGetMipmappedArrayLevel`.
#[export]
pub unsafe extern "C" fn hipMipmappedArrayGetLevel(
    level_array: *mut *mut hipArray,
    mipmap: *mut hipMipmappedArray,
    level: c_uint,
) -> hipError_t {
    call("hipMipmappedArrayGetLevel", || {
        mipmap_level(level_array, mipmap, level)
    })
}

// ------------------------------------------------------------------------------ copies

/// `hipStreamPerThread`.
const STREAM_PER_THREAD: hipStream_t = crate::per_thread::STREAM_PER_THREAD as hipStream_t;

/// The order of an `Async_spt` call: its stream, NULL meaning the per-thread default stream.
fn spt(stream: hipStream_t) -> Order {
    Order::Async(if stream.is_null() {
        STREAM_PER_THREAD
    } else {
        stream
    })
}

/// Where a copy or fill runs and whether the call waits for it.
#[derive(Debug, Clone, Copy)]
enum Order {
    /// Synchronous, on the null stream of the device holding the memory involved.
    Sync,
    /// Synchronous on this stream (`_spt`: `hipStreamPerThread`).
    SyncOn(hipStream_t),
    /// Queued on this stream.
    Async(hipStream_t),
}

/// The stream of `order`; for [`Order::Sync`], the null stream of the device holding the
/// first array among `ends`, else the first device memory, else the current device's.
fn stream_for(order: Order, ends: &[&CopyEnd]) -> Result<(Stream, bool), Failure> {
    match order {
        Order::SyncOn(s) => Ok((stream_of(s)?, true)),
        Order::Async(s) => Ok((stream_of(s)?, false)),
        Order::Sync => {
            let rt = runtime();
            let device = ends
                .iter()
                .find_map(|e| match e {
                    CopyEnd::Array(v) => Some(v.array().device() as i64),
                    CopyEnd::Linear { .. } => None,
                })
                .or_else(|| {
                    ends.iter().find_map(|e| match e {
                        CopyEnd::Linear { address, .. } => {
                            rt.pointer_info(*address).map(|i| i.device as i64)
                        }
                        CopyEnd::Array(_) => None,
                    })
                })
                .unwrap_or_else(current_device);
            Ok((rt.device(device)?.null_stream()?, true))
        }
    }
}

/// One end of a copy and where in it the copy starts.
type End = (CopyEnd, Origin);

/// A rectangular copy between two ends.
///
/// # Safety
/// Host-side regions must be valid for the copy until it is done.
unsafe fn copy_region(dst: End, src: End, extent: Extent, order: Order) -> Result<(), Failure> {
    if extent.is_empty() {
        // Still a stream the caller named must exist.
        if let Order::Async(s) | Order::SyncOn(s) = order {
            stream_of(s)?;
        }
        return Ok(());
    }
    let (stream, wait) = stream_for(order, &[&dst.0, &src.0])?;
    if let Some(node) = captured(&stream, wait, "a region copy", || {
        let rt = runtime();
        let d = rt.region("destination", &dst.0, dst.1, extent)?;
        let s = rt.region("source", &src.0, src.1, extent)?;
        let form = CopyForm::Pitched {
            src: pitched(s, extent)?,
            src_pos: [0; 3],
            dst: pitched(d, extent)?,
            dst_pos: [0; 3],
            extent: [extent.width, extent.height, extent.depth],
        };
        Ok(NodeOp::Copy(CopyNode {
            form,
            kind: memcpy_kind::DEFAULT,
        }))
    })? {
        return crate::capture::add(&node.0, &stream, node.1);
    }
    // SAFETY: the caller's contract on host regions, passed on.
    unsafe { runtime().copy_3d(&stream, (&dst.0, dst.1), (&src.0, src.1), extent, wait) }?;
    Ok(())
}

/// For a stream that captures, the node that takes the place of the operation `what`
/// (`node` forms it, checking what the operation would check first); a synchronous operation
/// on a capturing stream is refused as the capture mode says.
fn captured(
    stream: &Stream,
    wait: bool,
    what: &str,
    node: impl FnOnce() -> Result<NodeOp, Failure>,
) -> Result<Option<(rocload_lib::runtime::capture::Capture, NodeOp)>, Failure> {
    if wait {
        crate::capture::check_synchronous(what)?;
        return Ok(None);
    }
    match crate::capture::intercept(stream, what)? {
        // An operation that fails while captured invalidates the capture, as in HIP.
        Some(c) => match node() {
            Ok(op) => Ok(Some((c, op))),
            Err(e) => {
                c.invalidate();
                Err(e)
            }
        },
        None => Ok(None),
    }
}

/// A checked region as a graph's pitched pointer (rows per slice from its slice pitch).
fn pitched(place: RegionPlace, extent: Extent) -> Result<PitchedPtr, Failure> {
    let rows = if extent.depth <= 1 || place.row_pitch == 0 {
        extent.height
    } else if place.slice_pitch % place.row_pitch == 0 {
        place.slice_pitch / place.row_pitch
    } else {
        return Err(Failure::new(
            crate::graph::hipErrorStreamCaptureUnsupported,
            format!(
                "slices {} bytes apart are not a whole number of {}-byte rows: a graph's copy node cannot describe them",
                place.slice_pitch, place.row_pitch
            ),
        ));
    };
    Ok(PitchedPtr {
        ptr: place.start,
        pitch: place.row_pitch.max(extent.width),
        xsize: extent.width,
        ysize: rows,
    })
}

/// A linear copy of `len` bytes between `address` and a run of an array's packed rows.
///
/// # Safety
/// A host-side `address` must be valid for `len` bytes until the copy is done.
unsafe fn copy_linear(
    view: &ArrayView,
    offset: u64,
    address: u64,
    len: u64,
    to_array: bool,
    order: Order,
) -> Result<(), Failure> {
    let side = if to_array { "destination" } else { "source" };
    if len == 0 {
        if let Order::Async(s) | Order::SyncOn(s) = order {
            stream_of(s)?;
        }
        return Ok(());
    }
    if address == 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!(
                "the {} pointer is NULL",
                if to_array { "source" } else { "destination" }
            ),
        ));
    }
    let at = view.linear(side, offset, len)?;
    let end = CopyEnd::Array(view.clone());
    let (stream, wait) = stream_for(order, &[&end])?;
    let (dst, src) = if to_array {
        (at, address)
    } else {
        (address, at)
    };
    let linear_node = || {
        Ok(NodeOp::Copy(CopyNode {
            form: CopyForm::Linear { dst, src, len },
            kind: memcpy_kind::DEFAULT,
        }))
    };
    if let Some(node) = captured(&stream, wait, "an array copy", linear_node)? {
        return crate::capture::add(&node.0, &stream, node.1);
    }
    // SAFETY: the array's run was checked against its level; the other side is checked by the
    // runtime (device memory) or valid by the caller's contract (host memory).
    unsafe { runtime().copy(&stream, dst, src, len, wait) }?;
    Ok(())
}

fn linear(ptr: *const c_void, pitch: usize, rows: usize) -> CopyEnd {
    CopyEnd::Linear {
        address: ptr as u64,
        pitch: pitch as u64,
        rows: rows as u64,
    }
}

fn origin(x: usize, y: usize, z: usize) -> Origin {
    Origin {
        x: x as u64,
        y: y as u64,
        z: z as u64,
    }
}

fn extent_2d(width: usize, height: usize) -> Extent {
    Extent {
        width: width as u64,
        height: height as u64,
        depth: 1,
    }
}

/// `hipMemcpy2DToArray` on `order`: `spitch` 0 is `hipErrorInvalidPitchValue` and a NULL or
/// dead array `hipErrorInvalidResourceHandle` (clr's order), a zero extent copies nothing,
/// then the source (NULL, a pitch below the width) and the array's region are checked.
#[allow(clippy::too_many_arguments)]
unsafe fn to_array_2d(
    dst: *mut hipArray,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    order: Order,
) -> Result<(), Failure> {
    if spitch == 0 {
        return Err(Failure::new(hipErrorInvalidPitchValue, "spitch is 0"));
    }
    let view = array_of(dst, "dst", hipErrorInvalidHandle)?;
    check_kind(kind)?;
    // SAFETY: the caller's contract on host rows.
    unsafe {
        copy_region(
            (CopyEnd::Array(view), origin(w_offset, h_offset, 0)),
            (linear(src, spitch, 0), Origin::default()),
            extent_2d(width, height),
            order,
        )
    }
}

/// `hipMemcpy2DFromArray` on `order`, checked as [`to_array_2d`].
#[allow(clippy::too_many_arguments)]
unsafe fn from_array_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const hipArray,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: c_int,
    order: Order,
) -> Result<(), Failure> {
    if dpitch == 0 {
        return Err(Failure::new(hipErrorInvalidPitchValue, "dpitch is 0"));
    }
    let view = array_of(src, "src", hipErrorInvalidHandle)?;
    check_kind(kind)?;
    // SAFETY: the caller's contract on host rows.
    unsafe {
        copy_region(
            (linear(dst, dpitch, 0), Origin::default()),
            (CopyEnd::Array(view), origin(w_offset, h_offset, 0)),
            extent_2d(width, height),
            order,
        )
    }
}

/// Declares the `hipMemcpy2DToArray` family: `(dst, wOffset, hOffset, src, spitch, width,
/// height, kind)` and, with a stream, the `Async` forms.
macro_rules! to_array_2d_entries {
    ($( $(#[$doc:meta])* fn $name:ident => $order:expr $(, $stream:ident)?; )*) => { $(
        $(#[$doc])*
        #[export]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            dst: *mut hipArray,
            w_offset: usize,
            h_offset: usize,
            src: *const c_void,
            spitch: usize,
            width: usize,
            height: usize,
            kind: c_int
            $(, $stream: hipStream_t)?
        ) -> hipError_t {
            call(stringify!($name), || {
                // SAFETY: HIP's contract on host rows.
                unsafe {
                    to_array_2d(dst, w_offset, h_offset, src, spitch, width, height, kind, $order)
                }
            })
        }
    )* };
}

to_array_2d_entries! {
    /// `hipError_t hipMemcpy2DToArray(hipArray* dst, size_t wOffset, size_t hOffset, const
    /// void* src, size_t spitch, size_t width, size_t height, hipMemcpyKind kind)`: `width`
    /// bytes of `height` rows into the array at byte `wOffset` of row `hOffset`.
    fn hipMemcpy2DToArray => Order::Sync;
    /// `hipMemcpy2DToArray` on `hipStreamPerThread`.
    fn hipMemcpy2DToArray_spt => Order::SyncOn(STREAM_PER_THREAD);
    /// `hipError_t hipMemcpy2DToArrayAsync(..., hipStream_t stream)`.
    fn hipMemcpy2DToArrayAsync => Order::Async(stream), stream;
    /// `hipMemcpy2DToArrayAsync` with a NULL stream meaning the per-thread stream (HIP 5.3).
    fn hipMemcpy2DToArrayAsync_spt => spt(stream), stream;
}

/// Declares the `hipMemcpy2DFromArray` family: `(dst, dpitch, src, wOffset, hOffset, width,
/// height, kind)` and, with a stream, the `Async` forms.
macro_rules! from_array_2d_entries {
    ($( $(#[$doc:meta])* fn $name:ident => $order:expr $(, $stream:ident)?; )*) => { $(
        $(#[$doc])*
        #[export]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            dst: *mut c_void,
            dpitch: usize,
            src: *const hipArray,
            w_offset: usize,
            h_offset: usize,
            width: usize,
            height: usize,
            kind: c_int
            $(, $stream: hipStream_t)?
        ) -> hipError_t {
            call(stringify!($name), || {
                // SAFETY: HIP's contract on host rows.
                unsafe {
                    from_array_2d(dst, dpitch, src, w_offset, h_offset, width, height, kind, $order)
                }
            })
        }
    )* };
}

from_array_2d_entries! {
    /// `hipError_t hipMemcpy2DFromArray(void* dst, size_t dpitch, hipArray_const_t src,
    /// size_t wOffset, size_t hOffset, size_t width, size_t height, hipMemcpyKind kind)`.
    fn hipMemcpy2DFromArray => Order::Sync;
    /// `hipMemcpy2DFromArray` on `hipStreamPerThread`.
    fn hipMemcpy2DFromArray_spt => Order::SyncOn(STREAM_PER_THREAD);
    /// `hipError_t hipMemcpy2DFromArrayAsync(..., hipStream_t stream)`.
    fn hipMemcpy2DFromArrayAsync => Order::Async(stream), stream;
    /// `hipMemcpy2DFromArrayAsync` with a NULL stream meaning the per-thread stream (HIP 5.3).
    fn hipMemcpy2DFromArrayAsync_spt => spt(stream), stream;
}

/// The byte offset of `(wOffset, hOffset)` in an array level's packed rows.
fn row_offset(
    view: &ArrayView,
    w_offset: usize,
    h_offset: usize,
    side: &'static str,
) -> Result<u64, Failure> {
    let level = view.level();
    let (w, h) = (w_offset as u64, h_offset as u64);
    if w >= level.row_pitch || h >= level.rows() {
        return Err(RuntimeError::BadRegion {
            side,
            reason: format!(
                "offset ({w_offset} bytes, row {h_offset}) is outside the {} x {} bytes of array {}",
                level.row_pitch,
                level.rows(),
                view.array().id()
            ),
        }
        .into());
    }
    Ok(h * level.row_pitch + w)
}

/// `hipError_t hipMemcpyToArray(hipArray* dst, size_t wOffset, size_t hOffset, const void*
/// src, size_t count, hipMemcpyKind kind)`: `count` bytes into the array's rows from byte
/// `wOffset` of row `hOffset` on, continuing on the next rows (CUDA's documented meaning;
/// clr 5.2.3 derives a 2D region from `count` that drops bytes unless whole rows are copied).
#[export]
pub unsafe extern "C" fn hipMemcpyToArray(
    dst: *mut hipArray,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> hipError_t {
    call("hipMemcpyToArray", || {
        let view = array_of(dst, "dst", hipErrorInvalidValue)?;
        check_kind(kind)?;
        let offset = row_offset(&view, w_offset, h_offset, "destination")?;
        // SAFETY: HIP's contract on the host range.
        unsafe { copy_linear(&view, offset, src as u64, count as u64, true, Order::Sync) }
    })
}

/// Declares `hipMemcpyFromArray` and its `_spt` form.
macro_rules! from_array_entries {
    ($( $(#[$doc:meta])* fn $name:ident => $order:expr; )*) => { $(
        $(#[$doc])*
        #[export]
        pub unsafe extern "C" fn $name(
            dst: *mut c_void,
            src: *const hipArray,
            w_offset: usize,
            h_offset: usize,
            count: usize,
            kind: c_int,
        ) -> hipError_t {
            call(stringify!($name), || {
                let view = array_of(src, "src", hipErrorInvalidValue)?;
                check_kind(kind)?;
                let offset = row_offset(&view, w_offset, h_offset, "source")?;
                // SAFETY: HIP's contract on the host range.
                unsafe { copy_linear(&view, offset, dst as u64, count as u64, false, $order) }
            })
        }
    )* };
}

from_array_entries! {
    /// `hipError_t hipMemcpyFromArray(void* dst, hipArray_const_t src, size_t wOffsetSrc,
    /// size_t hOffset, size_t count, hipMemcpyKind kind)`: `count` bytes of the array's rows
    /// from byte `wOffset` of row `hOffset` on (as `hipMemcpyToArray`).
    fn hipMemcpyFromArray => Order::Sync;
    /// `hipMemcpyFromArray` on `hipStreamPerThread` (HIP 5.3).
    fn hipMemcpyFromArray_spt => Order::SyncOn(STREAM_PER_THREAD);
}

/// Declares `hipMemcpyHtoA` and its `Async` form: `(dstArray, dstOffset, srcHost, ByteCount)`.
macro_rules! htoa_entries {
    ($( $(#[$doc:meta])* fn $name:ident => $order:expr $(, $stream:ident)?; )*) => { $(
        $(#[$doc])*
        #[export]
        pub unsafe extern "C" fn $name(
            dst: *mut hipArray,
            offset: usize,
            src: *const c_void,
            count: usize
            $(, $stream: hipStream_t)?
        ) -> hipError_t {
            call(stringify!($name), || {
                let view = array_of(dst, "dstArray", hipErrorInvalidValue)?;
                // SAFETY: HIP's contract on the host range.
                unsafe { copy_linear(&view, offset as u64, src as u64, count as u64, true, $order) }
            })
        }
    )* };
}

htoa_entries! {
    /// `hipError_t hipMemcpyHtoA(hipArray* dstArray, size_t dstOffset, const void* srcHost,
    /// size_t ByteCount)`: `ByteCount` bytes into the array's packed rows at byte `dstOffset`.
    fn hipMemcpyHtoA => Order::Sync;
    /// `hipError_t hipMemcpyHtoAAsync(hipArray_t, size_t, const void*, size_t, hipStream_t)`
    /// (HIP 6.2).
    fn hipMemcpyHtoAAsync => Order::Async(stream), stream;
}

/// Declares `hipMemcpyAtoH` and its `Async` form: `(dstHost, srcArray, srcOffset, ByteCount)`.
macro_rules! atoh_entries {
    ($( $(#[$doc:meta])* fn $name:ident => $order:expr $(, $stream:ident)?; )*) => { $(
        $(#[$doc])*
        #[export]
        pub unsafe extern "C" fn $name(
            dst: *mut c_void,
            src: *mut hipArray,
            offset: usize,
            count: usize
            $(, $stream: hipStream_t)?
        ) -> hipError_t {
            call(stringify!($name), || {
                let view = array_of(src, "srcArray", hipErrorInvalidValue)?;
                // SAFETY: HIP's contract on the host range.
                unsafe { copy_linear(&view, offset as u64, dst as u64, count as u64, false, $order) }
            })
        }
    )* };
}

atoh_entries! {
    /// `hipError_t hipMemcpyAtoH(void* dstHost, hipArray* srcArray, size_t srcOffset, size_t
    /// ByteCount)`.
    fn hipMemcpyAtoH => Order::Sync;
    /// `hipError_t hipMemcpyAtoHAsync(void*, hipArray_t, size_t, size_t, hipStream_t)` (HIP
    /// 6.2).
    fn hipMemcpyAtoHAsync => Order::Async(stream), stream;
}

/// `hipError_t hipMemcpyAtoD(hipDeviceptr_t dstDevice, hipArray_t srcArray, size_t srcOffset,
/// size_t ByteCount)` (HIP 6.2): `ByteCount` bytes of the array's packed rows from byte
/// `srcOffset` to device memory, synchronously.
#[export]
pub unsafe extern "C" fn hipMemcpyAtoD(
    dst: *mut c_void,
    src: *mut hipArray,
    offset: usize,
    count: usize,
) -> hipError_t {
    call("hipMemcpyAtoD", || {
        let view = array_of(src, "srcArray", hipErrorInvalidValue)?;
        // SAFETY: the destination is device memory, checked by the runtime's copy.
        unsafe {
            copy_linear(
                &view,
                offset as u64,
                dst as u64,
                count as u64,
                false,
                Order::Sync,
            )
        }
    })
}

/// `hipError_t hipMemcpyDtoA(hipArray_t dstArray, size_t dstOffset, hipDeviceptr_t srcDevice,
/// size_t ByteCount)` (HIP 6.2): `ByteCount` bytes of device memory into the array's packed
/// rows at byte `dstOffset`, synchronously.
#[export]
pub unsafe extern "C" fn hipMemcpyDtoA(
    dst: *mut hipArray,
    offset: usize,
    src: *const c_void,
    count: usize,
) -> hipError_t {
    call("hipMemcpyDtoA", || {
        let view = array_of(dst, "dstArray", hipErrorInvalidValue)?;
        // SAFETY: the source is device memory, checked by the runtime's copy.
        unsafe {
            copy_linear(
                &view,
                offset as u64,
                src as u64,
                count as u64,
                true,
                Order::Sync,
            )
        }
    })
}

/// `hipError_t hipMemcpyAtoA(hipArray_t dstArray, size_t dstOffset, hipArray_t srcArray,
/// size_t srcOffset, size_t ByteCount)` (HIP 6.2): `ByteCount` bytes from one array's packed
/// rows to another's, synchronously, on the null stream of the destination's device.
#[export]
pub unsafe extern "C" fn hipMemcpyAtoA(
    dst: *mut hipArray,
    dst_offset: usize,
    src: *mut hipArray,
    src_offset: usize,
    count: usize,
) -> hipError_t {
    call("hipMemcpyAtoA", || {
        let d = array_of(dst, "dstArray", hipErrorInvalidValue)?;
        let s = array_of(src, "srcArray", hipErrorInvalidValue)?;
        if count == 0 {
            return Ok(());
        }
        let from = s.linear("source", src_offset as u64, count as u64)?;
        // The destination array's run, as a linear copy from the source's run.
        // SAFETY: both runs were checked against their arrays' levels (device memory).
        unsafe { copy_linear(&d, dst_offset as u64, from, count as u64, true, Order::Sync) }
    })
}

/// `hipError_t hipMemcpy2DArrayToArray(hipArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
/// hipArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height,
/// hipMemcpyKind kind)` (HIP 6.2): offsets and width in bytes; both arrays' texels must be
/// the same size.
#[export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipMemcpy2DArrayToArray(
    dst: *mut hipArray,
    w_offset_dst: usize,
    h_offset_dst: usize,
    src: *const hipArray,
    w_offset_src: usize,
    h_offset_src: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> hipError_t {
    call("hipMemcpy2DArrayToArray", || {
        let d = array_of(dst, "dst", hipErrorInvalidValue)?;
        let s = array_of(src, "src", hipErrorInvalidValue)?;
        check_kind(kind)?;
        same_texels(&d, &s)?;
        // SAFETY: array regions only, checked by the runtime: no host memory.
        unsafe {
            copy_region(
                (CopyEnd::Array(d), origin(w_offset_dst, h_offset_dst, 0)),
                (CopyEnd::Array(s), origin(w_offset_src, h_offset_src, 0)),
                extent_2d(width, height),
                Order::Sync,
            )
        }
    })
}

fn same_texels(a: &ArrayView, b: &ArrayView) -> Result<(), Failure> {
    if a.texel_bytes() != b.texel_bytes() {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!(
                "arrays of {}-byte and {}-byte texels",
                a.texel_bytes(),
                b.texel_bytes()
            ),
        ));
    }
    Ok(())
}

/// `hipMemcpy3D`'s parameters as a copy: exactly one of array and pointer per end; with an
/// array involved, `extent.width` and the array ends' `x` count texels.
fn memcpy3d_params(p: &hipMemcpy3DParms) -> Result<(End, End, Extent), Failure> {
    check_kind(p.kind)?;
    let end = |array: *mut hipArray, ptr: hipPitchedPtr, pos: hipPos, side: &str| match (
        array.is_null(),
        ptr.ptr.is_null(),
    ) {
        (false, false) => Err(Failure::new(
            hipErrorInvalidValue,
            format!("{side}: both an array and a pointer"),
        )),
        (true, true) => Err(Failure::new(
            hipErrorInvalidValue,
            format!("{side}: neither an array nor a pointer"),
        )),
        (false, true) => {
            let view = array_of(array, side, hipErrorInvalidValue)?;
            let x = (pos.x as u64)
                .checked_mul(view.texel_bytes())
                .ok_or_else(|| {
                    Failure::new(
                        hipErrorInvalidValue,
                        format!("{side}: x {} overflows", pos.x),
                    )
                })?;
            Ok((
                CopyEnd::Array(view),
                Origin {
                    x,
                    y: pos.y as u64,
                    z: pos.z as u64,
                },
            ))
        }
        (true, false) => Ok((
            linear(ptr.ptr, ptr.pitch, ptr.ysize),
            origin(pos.x, pos.y, pos.z),
        )),
    };
    let dst = end(p.dstArray, p.dstPtr, p.dstPos, "destination")?;
    let src = end(p.srcArray, p.srcPtr, p.srcPos, "source")?;
    let texel = match (&dst.0, &src.0) {
        (CopyEnd::Array(d), CopyEnd::Array(s)) => {
            same_texels(d, s)?;
            d.texel_bytes()
        }
        (CopyEnd::Array(a), _) | (_, CopyEnd::Array(a)) => a.texel_bytes(),
        _ => 1,
    };
    let width = (p.extent.width as u64).checked_mul(texel).ok_or_else(|| {
        Failure::new(
            hipErrorInvalidValue,
            format!("extent width {} overflows", p.extent.width),
        )
    })?;
    let extent = Extent {
        width,
        height: p.extent.height as u64,
        depth: p.extent.depth as u64,
    };
    Ok((dst, src, extent))
}

fn memcpy3d(p: *const hipMemcpy3DParms, order: Order) -> Result<(), Failure> {
    // SAFETY: readable by the caller's contract (NULL refused).
    let p = unsafe { read(p, "p") }?;
    let (dst, src, extent) = memcpy3d_params(&p)?;
    // SAFETY: HIP's contract on host regions.
    unsafe { copy_region(dst, src, extent, order) }
}

/// A graph's copy node for `hipMemcpy3DParms` naming an array on either side: the region of
/// each side resolved to pitched memory now (an array's storage is pitched device memory), as
/// a captured hipMemcpy3DAsync forms it.
pub(crate) fn copy3d_array_node(p: &hipMemcpy3DParms) -> Result<CopyNode, Failure> {
    let (dst, src, extent) = memcpy3d_params(p)?;
    if extent.is_empty() {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!(
                "extent {}x{}x{} is empty",
                p.extent.width, p.extent.height, p.extent.depth
            ),
        ));
    }
    let rt = runtime();
    let d = rt.region("destination", &dst.0, dst.1, extent)?;
    let s = rt.region("source", &src.0, src.1, extent)?;
    Ok(CopyNode {
        form: CopyForm::Pitched {
            src: pitched(s, extent)?,
            src_pos: [0; 3],
            dst: pitched(d, extent)?,
            dst_pos: [0; 3],
            extent: [extent.width, extent.height, extent.depth],
        },
        kind: p.kind,
    })
}

/// `hipError_t hipMemcpy3D(const hipMemcpy3DParms* p)`: a 3D region between arrays and
/// pitched memory (`srcPtr`'s `pitch` bytes per row, `ysize` rows per slice).
#[export]
pub unsafe extern "C" fn hipMemcpy3D(p: *const hipMemcpy3DParms) -> hipError_t {
    call("hipMemcpy3D", || memcpy3d(p, Order::Sync))
}

/// `hipMemcpy3D` on `hipStreamPerThread`.
#[export]
pub unsafe extern "C" fn hipMemcpy3D_spt(p: *const hipMemcpy3DParms) -> hipError_t {
    call("hipMemcpy3D_spt", || {
        memcpy3d(p, Order::SyncOn(STREAM_PER_THREAD))
    })
}

/// `hipError_t hipMemcpy3DAsync(const hipMemcpy3DParms* p, hipStream_t stream)`.
#[export]
pub unsafe extern "C" fn hipMemcpy3DAsync(
    p: *const hipMemcpy3DParms,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpy3DAsync", || memcpy3d(p, Order::Async(stream)))
}

/// `hipMemcpy3DAsync` with a NULL stream meaning the per-thread stream (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipMemcpy3DAsync_spt(
    p: *const hipMemcpy3DParms,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpy3DAsync_spt", || memcpy3d(p, spt(stream)))
}

/// `hipMemcpy3DPeerParms` (HIP 7.1, 168 bytes): `hipMemcpy3DParms` with a device per side
/// and no direction.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMemcpy3DPeerParms {
    /// Source array, or NULL.
    pub srcArray: *mut hipArray,
    /// Source position.
    pub srcPos: hipPos,
    /// Source memory, or NULL.
    pub srcPtr: hipPitchedPtr,
    /// The source's device.
    pub srcDevice: c_int,
    /// Destination array, or NULL.
    pub dstArray: *mut hipArray,
    /// Destination position.
    pub dstPos: hipPos,
    /// Destination memory, or NULL.
    pub dstPtr: hipPitchedPtr,
    /// The destination's device.
    pub dstDevice: c_int,
    /// The extent copied.
    pub extent: hipExtent,
}
const _: () = {
    assert!(std::mem::size_of::<hipMemcpy3DPeerParms>() == 168);
    assert!(std::mem::offset_of!(hipMemcpy3DPeerParms, srcDevice) == 64);
    assert!(std::mem::offset_of!(hipMemcpy3DPeerParms, dstDevice) == 136);
    assert!(std::mem::offset_of!(hipMemcpy3DPeerParms, extent) == 144);
};

/// A peer copy as `hipMemcpy3DParms`: both devices must exist, and a side naming an array or
/// device memory must be that device's (all devices share one address space here, so the copy
/// itself is an ordinary 3D copy).
fn memcpy3d_peer(p: *const hipMemcpy3DPeerParms, order: Order) -> Result<(), Failure> {
    // SAFETY: readable by the caller's contract (NULL refused).
    let p = unsafe { read(p, "p") }?;
    let rt = runtime();
    for (device, array, ptr, side) in [
        (p.srcDevice, p.srcArray, p.srcPtr.ptr, "source"),
        (p.dstDevice, p.dstArray, p.dstPtr.ptr, "destination"),
    ] {
        if device < 0 || rt.device(i64::from(device)).is_err() {
            return Err(Failure::new(
                hipErrorInvalidDevice,
                format!("{side} device {device} does not exist"),
            ));
        }
        let owner = if !array.is_null() {
            Some(
                array_of(array, side, hipErrorInvalidValue)?
                    .array()
                    .device(),
            )
        } else {
            rt.pointer_info(ptr as u64)
                .filter(|i| i.allocation.kind == MemoryKind::Device)
                .map(|i| i.device)
        };
        if let Some(owner) = owner.filter(|&o| o != device as usize) {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("the {side} is memory of device {owner}, not of device {device}"),
            ));
        }
    }
    let q = hipMemcpy3DParms {
        srcArray: p.srcArray,
        srcPos: p.srcPos,
        srcPtr: p.srcPtr,
        dstArray: p.dstArray,
        dstPos: p.dstPos,
        dstPtr: p.dstPtr,
        extent: p.extent,
        kind: memcpy_kind::DEFAULT,
    };
    let (dst, src, extent) = memcpy3d_params(&q)?;
    // SAFETY: HIP's contract on host regions.
    unsafe { copy_region(dst, src, extent, order) }
}

/// `hipError_t hipMemcpy3DPeer(hipMemcpy3DPeerParms* p)` (HIP 7.1): a 3D copy between the
/// memory of two devices, synchronous.
#[export]
pub unsafe extern "C" fn hipMemcpy3DPeer(p: *const hipMemcpy3DPeerParms) -> hipError_t {
    call("hipMemcpy3DPeer", || memcpy3d_peer(p, Order::Sync))
}

/// `hipError_t hipMemcpy3DPeerAsync(hipMemcpy3DPeerParms* p, hipStream_t stream)` (HIP 7.1).
#[export]
pub unsafe extern "C" fn hipMemcpy3DPeerAsync(
    p: *const hipMemcpy3DPeerParms,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpy3DPeerAsync", || {
        memcpy3d_peer(p, Order::Async(stream))
    })
}

/// `hipMemcpy3DOperand` (HIP 7.1, 40 bytes): a pointer (`type` 1: address, row length and
/// layer height in elements, a location hint) or an array (`type` 2: array, offset in
/// elements).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMemcpy3DOperand {
    /// `hipMemcpy3DOperandType`: pointer 1, array 2.
    pub type_: c_int,
    /// The union's 32 bytes: `{ptr, rowLength, layerHeight, locHint}` or `{array, offset x, y,
    /// z}`.
    pub op: [u64; 4],
}

/// `hipMemcpy3DBatchOp` (HIP 7.1, 112 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMemcpy3DBatchOp {
    /// The source.
    pub src: hipMemcpy3DOperand,
    /// The destination.
    pub dst: hipMemcpy3DOperand,
    /// The extent in elements.
    pub extent: hipExtent,
    /// `hipMemcpySrcAccessOrder`: stream 1, during the call 2, any 3.
    pub srcAccessOrder: c_int,
    /// `hipMemcpyFlags` (0 or `hipMemcpyFlagPreferOverlapWithCompute` 1).
    pub flags: c_uint,
}
const _: () = {
    assert!(std::mem::size_of::<hipMemcpy3DOperand>() == 40);
    assert!(std::mem::size_of::<hipMemcpy3DBatchOp>() == 112);
    assert!(std::mem::offset_of!(hipMemcpy3DBatchOp, srcAccessOrder) == 104);
};

/// Checks a batch copy's access order (1 to 3) and flags (0 or 1).
pub(crate) fn check_copy_attributes(order: c_int, flags: c_uint) -> Result<(), Failure> {
    if !(1..=3).contains(&order) {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("srcAccessOrder {order} is none of HIP's (1 to 3)"),
        ));
    }
    if flags > 1 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("copy flags {flags:#x} (0 or hipMemcpyFlagPreferOverlapWithCompute)"),
        ));
    }
    Ok(())
}

/// One operation of `hipMemcpy3DBatchAsync` as `hipMemcpy3DParms`: elements are the array's
/// texels when an array is involved, bytes between two pointers; a row length or layer height
/// of 0 means the extent's.
fn batch_op_params(op: &hipMemcpy3DBatchOp) -> Result<hipMemcpy3DParms, Failure> {
    check_copy_attributes(op.srcAccessOrder, op.flags)?;
    if op.extent.width == 0 || op.extent.height == 0 || op.extent.depth == 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            "the extent has a zero dimension",
        ));
    }
    let array = |o: &hipMemcpy3DOperand| (o.type_ == 2).then_some(o.op[0] as *mut hipArray);
    let texel = match (array(&op.src), array(&op.dst)) {
        (Some(a), _) | (None, Some(a)) if !a.is_null() => {
            array_of(a, "array operand", hipErrorInvalidValue)?.texel_bytes()
        }
        _ => 1,
    };
    let mut q = hipMemcpy3DParms {
        srcArray: std::ptr::null_mut(),
        srcPos: hipPos::default(),
        srcPtr: hipPitchedPtr {
            ptr: std::ptr::null_mut(),
            pitch: 0,
            xsize: 0,
            ysize: 0,
        },
        dstArray: std::ptr::null_mut(),
        dstPos: hipPos::default(),
        dstPtr: hipPitchedPtr {
            ptr: std::ptr::null_mut(),
            pitch: 0,
            xsize: 0,
            ysize: 0,
        },
        extent: op.extent,
        kind: memcpy_kind::DEFAULT,
    };
    for (o, side) in [(&op.src, "source"), (&op.dst, "destination")] {
        let (arr, pos, ptr) = match o.type_ {
            1 => {
                let row = if o.op[1] == 0 {
                    op.extent.width as u64
                } else {
                    o.op[1]
                };
                let layer = if o.op[2] == 0 {
                    op.extent.height as u64
                } else {
                    o.op[2]
                };
                if row < op.extent.width as u64 {
                    return Err(Failure::new(
                        hipErrorInvalidValue,
                        format!(
                            "{side} rowLength {row} is below the width {}",
                            op.extent.width
                        ),
                    ));
                }
                let pitch = row.checked_mul(texel).ok_or_else(|| {
                    Failure::new(hipErrorInvalidValue, format!("{side} row overflows"))
                })?;
                (
                    std::ptr::null_mut(),
                    hipPos::default(),
                    hipPitchedPtr {
                        ptr: o.op[0] as *mut c_void,
                        pitch: pitch as usize,
                        xsize: pitch as usize,
                        ysize: layer as usize,
                    },
                )
            }
            2 => (
                o.op[0] as *mut hipArray,
                hipPos {
                    x: o.op[1] as usize,
                    y: o.op[2] as usize,
                    z: o.op[3] as usize,
                },
                hipPitchedPtr {
                    ptr: std::ptr::null_mut(),
                    pitch: 0,
                    xsize: 0,
                    ysize: 0,
                },
            ),
            t => {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("{side} operand type {t} (pointer 1, array 2)"),
                ))
            }
        };
        if side == "source" {
            (q.srcArray, q.srcPos, q.srcPtr) = (arr, pos, ptr);
        } else {
            (q.dstArray, q.dstPos, q.dstPtr) = (arr, pos, ptr);
        }
    }
    Ok(q)
}

/// `hipError_t hipMemcpy3DBatchAsync(size_t numOps, hipMemcpy3DBatchOp* opList, size_t*
/// failIdx, unsigned long long flags, hipStream_t stream)` (HIP 7.1): each operation in
/// `stream`'s order. Every operation is checked before any is queued; on a refusal `failIdx`
/// (when given) names the operation, `SIZE_MAX` when the fault is no operation's.
#[export]
pub unsafe extern "C" fn hipMemcpy3DBatchAsync(
    num_ops: usize,
    op_list: *const hipMemcpy3DBatchOp,
    fail_idx: *mut usize,
    flags: u64,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpy3DBatchAsync", || {
        let fail = |i: usize, f: Failure| {
            if !fail_idx.is_null() {
                // SAFETY: writable by the caller's contract when not NULL.
                unsafe { fail_idx.write(i) };
            }
            f
        };
        if flags != 0 {
            return Err(fail(
                usize::MAX,
                Failure::new(
                    hipErrorInvalidValue,
                    format!("flags {flags:#x} (must be 0)"),
                ),
            ));
        }
        if num_ops == 0 || op_list.is_null() {
            return Err(fail(
                usize::MAX,
                Failure::new(hipErrorInvalidValue, "numOps is 0 or opList is NULL"),
            ));
        }
        stream_of(stream).map_err(|f| fail(usize::MAX, f))?;
        let mut checked = Vec::new();
        checked.try_reserve(num_ops).map_err(|_| {
            fail(
                usize::MAX,
                Failure::new(hipErrorOutOfMemory, "too many ops"),
            )
        })?;
        for i in 0..num_ops {
            // SAFETY: `num_ops` operations by the caller's contract.
            let op = unsafe { op_list.add(i).read_unaligned() };
            let q = batch_op_params(&op).map_err(|f| fail(i, f))?;
            checked.push(memcpy3d_params(&q).map_err(|f| fail(i, f))?);
        }
        for (i, (dst, src, extent)) in checked.into_iter().enumerate() {
            // SAFETY: HIP's contract on host regions.
            unsafe { copy_region(dst, src, extent, Order::Async(stream)) }
                .map_err(|f| fail(i, f))?;
        }
        Ok(())
    })
}

/// One end of a driver-API copy as a copy end: its memory type picks the field (`Unified`:
/// the device pointer, whatever it is); a LOD other than 0 is refused (CUDA's rule; clr
/// ignores it).
fn drv_end(e: &DrvEnd, side: &str) -> Result<(CopyEnd, Origin), Failure> {
    if e.lod != 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!(
                "{side} LOD {}: copies address level 0 (use the level's array)",
                e.lod
            ),
        ));
    }
    let origin = Origin {
        x: e.x,
        y: e.y,
        z: e.z,
    };
    let end = match memory_type(e.memory_type, side)? {
        MemoryType::Array => CopyEnd::Array(array_of(e.array, side, hipErrorInvalidValue)?),
        MemoryType::Host => CopyEnd::Linear {
            address: e.host,
            pitch: e.pitch,
            rows: e.rows,
        },
        MemoryType::Device | MemoryType::Unified => CopyEnd::Linear {
            address: e.device,
            pitch: e.pitch,
            rows: e.rows,
        },
    };
    Ok((end, origin))
}

fn drv_copy(c: DrvCopy, order: Order) -> Result<(), Failure> {
    let dst = drv_end(&c.dst, "destination")?;
    let src = drv_end(&c.src, "source")?;
    if let (CopyEnd::Array(d), CopyEnd::Array(s)) = (&dst.0, &src.0) {
        same_texels(d, s)?;
    }
    // SAFETY: HIP's contract on host regions.
    unsafe { copy_region(dst, src, c.extent, order) }
}

/// The size of `HIP_MEMCPY3D` in the caller's generation (128 bytes in HIP 5, 184 from 6).
pub(crate) fn memcpy3d_size() -> usize {
    match crate::generation::current() {
        Generation::Hip5 => std::mem::size_of::<HIP_MEMCPY3D_v5>(),
        _ => std::mem::size_of::<HIP_MEMCPY3D_v6>(),
    }
}

/// A graph's copy node for a `HIP_MEMCPY3D` (the caller's generation's layout): each side's
/// region resolved now (an array's storage is pitched device memory), as a captured
/// `hipDrvMemcpy3DAsync` forms it.
pub(crate) fn drv_copy_node(p: *const c_void) -> Result<CopyNode, Failure> {
    let c = read_memcpy3d(p)?;
    let dst = drv_end(&c.dst, "destination")?;
    let src = drv_end(&c.src, "source")?;
    if let (CopyEnd::Array(d), CopyEnd::Array(s)) = (&dst.0, &src.0) {
        same_texels(d, s)?;
    }
    if c.extent.is_empty() {
        return Err(Failure::new(
            hipErrorInvalidValue,
            "the copy's extent is empty",
        ));
    }
    let rt = runtime();
    let d = rt.region("destination", &dst.0, dst.1, c.extent)?;
    let s = rt.region("source", &src.0, src.1, c.extent)?;
    Ok(CopyNode {
        form: CopyForm::Pitched {
            src: pitched(s, c.extent)?,
            src_pos: [0; 3],
            dst: pitched(d, c.extent)?,
            dst_pos: [0; 3],
            extent: [c.extent.width, c.extent.height, c.extent.depth],
        },
        kind: memcpy_kind::DEFAULT,
    })
}

/// Reads a `HIP_MEMCPY3D` in the caller's generation's layout.
fn read_memcpy3d(p: *const c_void) -> Result<DrvCopy, Failure> {
    Ok(match crate::generation::current() {
        // SAFETY: readable by the caller's contract (NULL refused), in its generation's layout.
        Generation::Hip5 => unsafe { read(p.cast::<HIP_MEMCPY3D_v5>(), "pCopy") }?.generic(),
        // SAFETY: as above.
        _ => unsafe { read(p.cast::<HIP_MEMCPY3D_v6>(), "pCopy") }?.generic(),
    })
}

/// `hipError_t hipDrvMemcpy3D(const HIP_MEMCPY3D* pCopy)`: the driver API's 3D copy
/// (`HIP_MEMCPY3D` has 32-bit fields in HIP 5 and `size_t` ones from HIP 6: read in the
/// caller's generation's layout).
#[export]
pub unsafe extern "C" fn hipDrvMemcpy3D(p: *const c_void) -> hipError_t {
    call("hipDrvMemcpy3D", || {
        drv_copy(read_memcpy3d(p)?, Order::Sync)
    })
}

/// `hipError_t hipDrvMemcpy3DAsync(const HIP_MEMCPY3D* pCopy, hipStream_t stream)`.
#[export]
pub unsafe extern "C" fn hipDrvMemcpy3DAsync(p: *const c_void, stream: hipStream_t) -> hipError_t {
    call("hipDrvMemcpy3DAsync", || {
        drv_copy(read_memcpy3d(p)?, Order::Async(stream))
    })
}

fn param_2d(p: *const hip_Memcpy2D, order: Order) -> Result<(), Failure> {
    // SAFETY: readable by the caller's contract (NULL refused).
    let p = unsafe { read(p, "pCopy") }?;
    drv_copy(p.generic(), order)
}

/// `hipError_t hipMemcpyParam2D(const hip_Memcpy2D* pCopy)`: the driver API's 2D copy (a
/// pitch of 0 is the width, as in clr).
#[export]
pub unsafe extern "C" fn hipMemcpyParam2D(p: *const hip_Memcpy2D) -> hipError_t {
    call("hipMemcpyParam2D", || param_2d(p, Order::Sync))
}

/// `hipError_t hipMemcpyParam2DAsync(const hip_Memcpy2D* pCopy, hipStream_t stream)`.
#[export]
pub unsafe extern "C" fn hipMemcpyParam2DAsync(
    p: *const hip_Memcpy2D,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpyParam2DAsync", || {
        param_2d(p, Order::Async(stream))
    })
}

/// `hipError_t hipDrvMemcpy2DUnaligned(const hip_Memcpy2D* pCopy)`: `hipMemcpyParam2D` (no
/// alignment matters on the host side of the software agent).
#[export]
pub unsafe extern "C" fn hipDrvMemcpy2DUnaligned(p: *const hip_Memcpy2D) -> hipError_t {
    call("hipDrvMemcpy2DUnaligned", || param_2d(p, Order::Sync))
}

// ------------------------------------------------------------------------------ fills

/// Fills a pitched region of device memory on `order`: a zero extent fills nothing (however
/// bad the pointer, as clr); the memory must be device memory a device knows, the whole
/// region inside it.
fn fill_region(
    ptr: *mut c_void,
    pitch: usize,
    rows: usize,
    (pattern, element): (u32, u8),
    extent: Extent,
    order: Order,
) -> Result<(), Failure> {
    if extent.is_empty() {
        if let Order::Async(s) | Order::SyncOn(s) = order {
            stream_of(s)?;
        }
        return Ok(());
    }
    if ptr.is_null() {
        return Err(Failure::null("dst"));
    }
    let end = linear(ptr, pitch, rows);
    let (stream, wait) = stream_for(order, &[&end])?;
    if let Some(node) = captured(&stream, wait, "a region fill", || {
        let place = runtime().region("destination", &end, Origin::default(), extent)?;
        // A memset node is rows of one pitch: slices must follow each other without a gap.
        let joined = extent.depth <= 1 || place.slice_pitch == place.row_pitch * extent.height;
        if !joined {
            return Err(Failure::new(
                crate::graph::hipErrorStreamCaptureUnsupported,
                "a 3D fill whose slices are not contiguous rows cannot be a memset node",
            ));
        }
        Ok(NodeOp::Memset(MemsetNode {
            dst: place.start,
            value: pattern,
            element_size: element,
            width: extent.width / u64::from(element),
            height: extent.height * extent.depth,
            pitch: place.row_pitch,
        }))
    })? {
        return crate::capture::add(&node.0, &stream, node.1);
    }
    runtime().fill_3d_pattern(&stream, &end, pattern, element, extent, wait)?;
    Ok(())
}

fn fill_2d(
    dst: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
    order: Order,
) -> Result<(), Failure> {
    if width != 0 && height != 0 && pitch < width {
        return Err(Failure::new(
            hipErrorInvalidPitchValue,
            format!("pitch {pitch} is smaller than the width {width}"),
        ));
    }
    fill_region(
        dst,
        pitch,
        0,
        (value as u32 & 0xff, 1),
        extent_2d(width, height),
        order,
    )
}

/// `hipMemsetD2D8/16/32`: `height` rows of `width` elements of `element` bytes, `pitch` bytes
/// apart (a pitch below the row's bytes is `hipErrorInvalidValue`, as CUDA documents).
fn fill_d2d(
    dst: *mut c_void,
    pitch: usize,
    pattern: u32,
    element: u8,
    width: usize,
    height: usize,
    order: Order,
) -> Result<(), Failure> {
    let bytes = width
        .checked_mul(usize::from(element))
        .ok_or_else(|| Failure::new(hipErrorInvalidValue, "the row's bytes overflow"))?;
    if bytes != 0 && height > 1 && pitch < bytes {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("dstPitch {pitch} is smaller than a row's {bytes} bytes"),
        ));
    }
    let pitch = if height <= 1 { pitch.max(bytes) } else { pitch };
    fill_region(
        dst,
        pitch,
        0,
        (pattern, element),
        extent_2d(bytes, height),
        order,
    )
}

/// Declares `hipMemsetD2D8/16/32` and their `Async` forms: `(dst, dstPitch, value, width,
/// height)`, width in elements.
macro_rules! memset_d2d_entries {
    ($( $(#[$doc:meta])* fn $name:ident($value:ty, $width:literal) => $order:expr $(, $stream:ident)?; )*) => { $(
        $(#[$doc])*
        #[export]
        pub unsafe extern "C" fn $name(
            dst: *mut c_void,
            pitch: usize,
            value: $value,
            width: usize,
            height: usize
            $(, $stream: hipStream_t)?
        ) -> hipError_t {
            // `as u32` keeps the element's bits (an int's two's complement for D2D32).
            call(stringify!($name), || {
                fill_d2d(dst, pitch, value as u32, $width, width, height, $order)
            })
        }
    )* };
}

memset_d2d_entries! {
    /// `hipError_t hipMemsetD2D8(hipDeviceptr_t dst, size_t dstPitch, unsigned char value,
    /// size_t width, size_t height)` (HIP 7.1).
    fn hipMemsetD2D8(u8, 1) => Order::Sync;
    /// `hipMemsetD2D16(hipDeviceptr_t, size_t, unsigned short value, size_t, size_t)`.
    fn hipMemsetD2D16(u16, 2) => Order::Sync;
    /// `hipMemsetD2D32(hipDeviceptr_t, size_t, unsigned int value, size_t, size_t)`.
    fn hipMemsetD2D32(u32, 4) => Order::Sync;
    /// `hipMemsetD2D8Async(..., hipStream_t stream)`.
    fn hipMemsetD2D8Async(u8, 1) => Order::Async(stream), stream;
    /// `hipMemsetD2D16Async(..., hipStream_t stream)`.
    fn hipMemsetD2D16Async(u16, 2) => Order::Async(stream), stream;
    /// `hipMemsetD2D32Async(..., hipStream_t stream)`.
    fn hipMemsetD2D32Async(u32, 4) => Order::Async(stream), stream;
}

/// Declares the `hipMemset2D` family: `(dst, pitch, value, width, height)`.
macro_rules! memset_2d_entries {
    ($( $(#[$doc:meta])* fn $name:ident => $order:expr $(, $stream:ident)?; )*) => { $(
        $(#[$doc])*
        #[export]
        pub unsafe extern "C" fn $name(
            dst: *mut c_void,
            pitch: usize,
            value: c_int,
            width: usize,
            height: usize
            $(, $stream: hipStream_t)?
        ) -> hipError_t {
            call(stringify!($name), || fill_2d(dst, pitch, value, width, height, $order))
        }
    )* };
}

memset_2d_entries! {
    /// `hipError_t hipMemset2D(void* dst, size_t pitch, int value, size_t width, size_t
    /// height)`: the byte `value` in `height` rows of `width` bytes; `dst` must be device
    /// memory (clr), the whole region inside its allocation.
    fn hipMemset2D => Order::Sync;
    /// `hipMemset2D` on `hipStreamPerThread`.
    fn hipMemset2D_spt => Order::SyncOn(STREAM_PER_THREAD);
    /// `hipError_t hipMemset2DAsync(void*, size_t pitch, int value, size_t width, size_t
    /// height, hipStream_t)`.
    fn hipMemset2DAsync => Order::Async(stream), stream;
    /// `hipMemset2DAsync` with a NULL stream meaning the per-thread stream (HIP 5.3).
    fn hipMemset2DAsync_spt => spt(stream), stream;
}

fn fill_3d(
    ptr: hipPitchedPtr,
    value: c_int,
    extent: hipExtent,
    order: Order,
) -> Result<(), Failure> {
    let e = Extent {
        width: extent.width as u64,
        height: extent.height as u64,
        depth: extent.depth as u64,
    };
    if !e.is_empty() && ptr.pitch == 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            "pitchedDevPtr.pitch is 0",
        ));
    }
    fill_region(
        ptr.ptr,
        ptr.pitch,
        ptr.ysize,
        (value as u32 & 0xff, 1),
        e,
        order,
    )
}

/// Declares the `hipMemset3D` family: `(pitchedDevPtr, value, extent)`.
macro_rules! memset_3d_entries {
    ($( $(#[$doc:meta])* fn $name:ident => $order:expr $(, $stream:ident)?; )*) => { $(
        $(#[$doc])*
        #[export]
        pub unsafe extern "C" fn $name(
            ptr: hipPitchedPtr,
            value: c_int,
            extent: hipExtent
            $(, $stream: hipStream_t)?
        ) -> hipError_t {
            call(stringify!($name), || fill_3d(ptr, value, extent, $order))
        }
    )* };
}

memset_3d_entries! {
    /// `hipError_t hipMemset3D(hipPitchedPtr pitchedDevPtr, int value, hipExtent extent)`:
    /// the byte `value` in `extent` (width in bytes) of pitched device memory (`pitch` bytes
    /// per row, `ysize` rows per slice); a zero extent fills nothing.
    fn hipMemset3D => Order::Sync;
    /// `hipMemset3D` on `hipStreamPerThread`.
    fn hipMemset3D_spt => Order::SyncOn(STREAM_PER_THREAD);
    /// `hipError_t hipMemset3DAsync(hipPitchedPtr, int value, hipExtent, hipStream_t)`.
    fn hipMemset3DAsync => Order::Async(stream), stream;
    /// `hipMemset3DAsync` with a NULL stream meaning the per-thread stream (HIP 5.3).
    fn hipMemset3DAsync_spt => spt(stream), stream;
}

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod test_support {
    //! What the C ABI tests need to see of the records.
    use super::*;

    /// How many array records exist (live and quarantined).
    pub fn record_slots() -> usize {
        ARRAYS.inner.lock().slots.len()
    }
}
