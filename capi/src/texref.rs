//! Texture references: the `texture<>` variables clang registers (`__hipRegisterTexture`,
//! `__hipRegisterSurface`), the runtime forms that bind them (`hipBindTexture*`,
//! `hipUnbindTexture`, `hipGetTextureReference`, `hipGetTextureAlignmentOffset`) and the driver
//! forms (`hipModuleGetTexRef`, every `hipTexRefGet*`/`hipTexRefSet*`).
//!
//! A reference is a `textureReference` in host memory whose device twin is a module variable
//! of the same 88 bytes; device code reads only its `textureObject`. Binding makes a texture
//! object (`texture.rs`) from the reference's settings, stores it in the host struct and
//! copies the struct to the device twin. The setters that do not bind (`hipTexRefSetFilterMode`
//! and the like) change the host struct only and take effect at the next bind, as in HIP.
//! The border colour has no field in HIP's `textureReference`: it is kept here, by address.
//!
//! A reference from `hipModuleGetTexRef` is a host struct this module owns (one per module and
//! name, freed when the module is unloaded), twinned with the module's variable of that name.
//! Not the texture objects themselves (`texture.rs`).

use rocload_ffi::export;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::LazyLock;

use parking_lot::Mutex;
use rocload_lib::runtime::ArrayFormat;

use crate::array::{
    channel_desc, hipArray, hipChannelFormatDesc, hipMipmappedArray, HIP_ARRAY_DESCRIPTOR,
};
use crate::texture::{
    bad, create_texture, destroy_texture, hipResourceDesc, hipTextureDesc, record,
    textureReference, RES_ARRAY, RES_LINEAR, RES_MIPMAP, RES_PITCH2D, TEXTURES,
};
use crate::*;

/// `HIP_TRSA_OVERRIDE_FORMAT`: the only flag `hipTexRefSetArray` takes.
const TRSA_OVERRIDE_FORMAT: c_uint = 0x01;
/// `HIP_TRSF_*` flags of `hipTexRefSetFlags`.
const TRSF_READ_AS_INTEGER: c_uint = 0x01;
const TRSF_NORMALIZED_COORDINATES: c_uint = 0x02;
const TRSF_SRGB: c_uint = 0x10;
/// `hipReadModeElementType`, `hipReadModeNormalizedFloat`.
const READ_ELEMENT: c_int = 0;
const READ_NORMALIZED: c_int = 1;

/// Border colours set with `hipTexRefSetBorderColor`, by reference address.
static BORDERS: LazyLock<Mutex<HashMap<usize, [f32; 4]>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// A reference `hipModuleGetTexRef` made: its module, variable name and the host struct
/// (`Box::into_raw`, freed by [`forget_module`]).
struct DriverRef {
    module: u64,
    name: String,
    host: usize,
}

static DRIVER_REFS: LazyLock<Mutex<Vec<DriverRef>>> = LazyLock::new(|| Mutex::new(Vec::new()));

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

/// The device twin of a reference: a registered `texture<>` variable, or the module variable
/// behind a `hipModuleGetTexRef` reference.
fn device_twin(tex: *const textureReference) -> Result<u64, Failure> {
    let size = std::mem::size_of::<textureReference>();
    let driver = DRIVER_REFS
        .lock()
        .iter()
        .find(|r| r.host == tex as usize)
        .map(|r| (r.module, r.name.clone()));
    if let Some((module, name)) = driver {
        let (address, bytes) = crate::module::module_global(module as hipModule_t, &name)?;
        if bytes != size as u64 {
            return Err(bad(format!(
                "module variable {name} has {bytes} bytes, not a textureReference's {size}"
            )));
        }
        return Ok(address);
    }
    crate::symbol::symbol_range(tex.cast(), size, 0).map_err(|e| {
        Failure::new(
            hipErrorInvalidSymbol,
            format!(
                "{tex:p} is neither a registered texture<> variable nor a reference from \
                 hipModuleGetTexRef ({})",
                e.message
            ),
        )
    })
}

/// Reads a reference (NULL refused).
fn read_ref(tex: *const textureReference) -> Result<textureReference, Failure> {
    if tex.is_null() {
        return Err(Failure::null("texRef"));
    }
    // SAFETY: a textureReference by the caller's contract.
    Ok(unsafe { tex.read() })
}

/// Changes a reference's host struct (the setters that do not bind).
fn update(
    tex: *mut textureReference,
    f: impl FnOnce(&mut textureReference) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut r = read_ref(tex)?;
    f(&mut r)?;
    // SAFETY: writable by the caller's contract (NULL refused by read_ref).
    unsafe { tex.write(r) };
    Ok(())
}

/// The texture description a reference's settings make.
fn texture_desc(r: &textureReference, tex: *const textureReference) -> hipTextureDesc {
    hipTextureDesc {
        addressMode: r.addressMode,
        filterMode: r.filterMode,
        readMode: r.readMode,
        sRGB: r.sRGB,
        borderColor: BORDERS
            .lock()
            .get(&(tex as usize))
            .copied()
            .unwrap_or([0.0; 4]),
        normalizedCoords: r.normalized,
        maxAnisotropy: r.maxAnisotropy,
        mipmapFilterMode: r.mipmapFilterMode,
        mipmapLevelBias: r.mipmapLevelBias,
        minMipmapLevelClamp: r.minMipmapLevelClamp,
        maxMipmapLevelClamp: r.maxMipmapLevelClamp,
    }
}

/// Binds `res` to the reference `tex`: a texture object from the reference's settings, stored
/// in the host struct and in the device twin; the object bound before is destroyed.
fn bind(tex: *mut textureReference, res: hipResourceDesc) -> Result<(), Failure> {
    let mut r = read_ref(tex)?;
    let at = device_twin(tex)?;
    let object = create_texture(&res, &texture_desc(&r, tex), None)?;
    let old = r.textureObject as u64;
    r.textureObject = object as *mut c_void;
    let copied = {
        // SAFETY: the twin holds a textureReference (its size was checked); the source is ours.
        unsafe {
            crate::memory::copy_of_kind(
                at as *mut c_void,
                (&r as *const textureReference).cast(),
                std::mem::size_of::<textureReference>(),
                None,
                1,
            )
        }
    };
    if let Err(e) = copied {
        let _ = destroy_texture(object);
        return Err(e);
    }
    // SAFETY: writable by the caller's contract.
    unsafe { tex.write(r) };
    if old != 0 && TEXTURES.lock().contains_key(&old) {
        destroy_texture(old)?;
    }
    Ok(())
}

fn linear_res(
    ptr: *const c_void,
    desc: hipChannelFormatDesc,
    size: usize,
) -> Result<hipResourceDesc, Failure> {
    let mut res = hipResourceDesc {
        resType: RES_LINEAR,
        res: [0; 7],
    };
    res.res[0] = ptr as u64;
    // SAFETY: the channel description goes at byte 8 of the union, as HIP lays it out; the
    // union has 56 bytes.
    unsafe { std::ptr::write_unaligned(res.res.as_mut_ptr().cast::<u8>().add(8).cast(), desc) };
    res.res[4] = size as u64;
    Ok(res)
}

fn read_desc(desc: *const hipChannelFormatDesc) -> Result<hipChannelFormatDesc, Failure> {
    if desc.is_null() {
        return Err(Failure::null("desc"));
    }
    // SAFETY: readable by the caller's contract.
    Ok(unsafe { *desc })
}

/// The channel description of a driver reference's `format` and `numChannels`.
fn ref_channels(r: &textureReference) -> Result<hipChannelFormatDesc, Failure> {
    let format = ArrayFormat::from_raw(r.format as u32)
        .ok_or_else(|| bad(format!("texture reference format {:#x}", r.format)))?;
    if !matches!(r.numChannels, 1 | 2 | 4) {
        return Err(bad(format!(
            "texture reference with {} channels",
            r.numChannels
        )));
    }
    Ok(channel_desc(format, r.numChannels as u32))
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
        bind(tex, linear_res(ptr, read_desc(desc)?, size)?)?;
        if !offset.is_null() {
            // SAFETY: writable by the caller's contract.
            unsafe { out(offset, "offset", 0) }?;
        }
        Ok(())
    })
}

fn pitch2d_res(
    ptr: *const c_void,
    desc: hipChannelFormatDesc,
    width: usize,
    height: usize,
    pitch: usize,
) -> Result<hipResourceDesc, Failure> {
    let mut res = linear_res(ptr, desc, 0)?;
    res.resType = RES_PITCH2D;
    res.res[4] = width as u64;
    res.res[5] = height as u64;
    res.res[6] = pitch as u64;
    Ok(res)
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
        bind(
            tex,
            pitch2d_res(ptr, read_desc(desc)?, width, height, pitch)?,
        )?;
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
        let mut r = read_ref(tex)?;
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

// ------------------------------------------------------------------------------ driver API

/// `hipError_t hipModuleGetTexRef(textureReference** texRef, hipModule_t hmod, const char*
/// name)`: the module's `texture<>` variable `name` as a reference this runtime owns (the
/// same one for the same module and name). As in HIP, a new reference reads normalised floats
/// of one 32-bit float channel.
#[export]
pub unsafe extern "C" fn hipModuleGetTexRef(
    texref: *mut *mut textureReference,
    hmod: hipModule_t,
    name: *const c_char,
) -> hipError_t {
    call("hipModuleGetTexRef", || {
        if texref.is_null() {
            return Err(Failure::null("texRef"));
        }
        // SAFETY: NUL-terminated by the caller's contract (NULL refused).
        let name = unsafe { c_str(name, "name") }?.into_owned();
        if name.is_empty() {
            return Err(bad("an empty variable name".into()));
        }
        let (_, bytes) = crate::module::module_global(hmod, &name)
            .map_err(|e| Failure::new(hipErrorNotFound, e.message))?;
        if bytes != std::mem::size_of::<textureReference>() as u64 {
            return Err(Failure::new(
                hipErrorNotFound,
                format!("module variable {name} has {bytes} bytes: not a texture<> variable"),
            ));
        }
        let mut refs = DRIVER_REFS.lock();
        let host = match refs
            .iter()
            .find(|r| r.module == hmod as u64 && r.name == name)
        {
            Some(r) => r.host,
            None => {
                let fresh = textureReference {
                    normalized: 0,
                    readMode: READ_NORMALIZED,
                    filterMode: 0,
                    addressMode: [0; 3],
                    channelDesc: channel_desc(ArrayFormat::F32, 1),
                    sRGB: 0,
                    maxAnisotropy: 0,
                    mipmapFilterMode: 0,
                    mipmapLevelBias: 0.0,
                    minMipmapLevelClamp: 0.0,
                    maxMipmapLevelClamp: 0.0,
                    textureObject: std::ptr::null_mut(),
                    numChannels: 1,
                    format: ArrayFormat::F32.raw() as c_int,
                };
                let host = Box::into_raw(Box::new(fresh)) as usize;
                refs.push(DriverRef {
                    module: hmod as u64,
                    name,
                    host,
                });
                host
            }
        };
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(texref, "texRef", host as *mut textureReference) }
    })
}

/// Forgets the references `hipModuleGetTexRef` made for a module being unloaded: their
/// texture objects are destroyed and their host structs freed.
pub(crate) fn forget_module(module: u64) {
    let gone: Vec<DriverRef> = {
        let mut refs = DRIVER_REFS.lock();
        let (gone, kept) = std::mem::take(&mut *refs)
            .into_iter()
            .partition(|r| r.module == module);
        *refs = kept;
        gone
    };
    for r in gone {
        BORDERS.lock().remove(&r.host);
        // SAFETY: `host` came from Box::into_raw in hipModuleGetTexRef and was removed from
        // the table above, so it is freed once.
        let host = unsafe { Box::from_raw(r.host as *mut textureReference) };
        let object = host.textureObject as u64;
        if object != 0 && TEXTURES.lock().contains_key(&object) {
            if let Err(e) = destroy_texture(object) {
                tracing::debug!("texture object {object:#x} of {}: {}", r.name, e.message);
            }
        }
    }
}

/// `hipError_t hipTexRefSetAddress(size_t* ByteOffset, textureReference*, hipDeviceptr_t,
/// size_t bytes)`: binds linear memory in the reference's format; the offset is 0.
#[export]
pub unsafe extern "C" fn hipTexRefSetAddress(
    offset: *mut usize,
    tex: *mut textureReference,
    ptr: *mut c_void,
    bytes: usize,
) -> hipError_t {
    call("hipTexRefSetAddress", || {
        let r = read_ref(tex)?;
        bind(tex, linear_res(ptr, ref_channels(&r)?, bytes)?)?;
        if !offset.is_null() {
            // SAFETY: writable by the caller's contract.
            unsafe { out(offset, "ByteOffset", 0) }?;
        }
        Ok(())
    })
}

/// `hipError_t hipTexRefSetAddress2D(textureReference*, const HIP_ARRAY_DESCRIPTOR*,
/// hipDeviceptr_t, size_t Pitch)`: binds pitched memory of the descriptor's format and size.
#[export]
pub unsafe extern "C" fn hipTexRefSetAddress2D(
    tex: *mut textureReference,
    desc: *const HIP_ARRAY_DESCRIPTOR,
    ptr: *mut c_void,
    pitch: usize,
) -> hipError_t {
    call("hipTexRefSetAddress2D", || {
        if desc.is_null() {
            return Err(Failure::null("desc"));
        }
        // SAFETY: readable by the caller's contract.
        let d = unsafe { *desc };
        let format = ArrayFormat::from_raw(d.Format as u32)
            .ok_or_else(|| bad(format!("hipArray_Format {:#x}", d.Format)))?;
        if !matches!(d.NumChannels, 1 | 2 | 4) {
            return Err(bad(format!("{} channels", d.NumChannels)));
        }
        let res = pitch2d_res(
            ptr,
            channel_desc(format, d.NumChannels),
            d.Width,
            d.Height,
            pitch,
        )?;
        bind(tex, res)
    })
}

/// `hipError_t hipTexRefSetArray(textureReference*, hipArray_const_t, unsigned int flags)`:
/// flags must be `HIP_TRSA_OVERRIDE_FORMAT`; the reference takes the array's format.
#[export]
pub unsafe extern "C" fn hipTexRefSetArray(
    tex: *mut textureReference,
    array: *const hipArray,
    flags: c_uint,
) -> hipError_t {
    call("hipTexRefSetArray", || {
        if flags != TRSA_OVERRIDE_FORMAT {
            return Err(bad(format!(
                "flags {flags:#x} (only HIP_TRSA_OVERRIDE_FORMAT)"
            )));
        }
        let view = crate::array::array_of(array, "array", hipErrorInvalidValue)?;
        let d = view.array().descriptor();
        update(tex, |r| {
            r.format = d.format.raw() as c_int;
            r.numChannels = d.channels as c_int;
            Ok(())
        })?;
        let mut res = hipResourceDesc {
            resType: RES_ARRAY,
            res: [0; 7],
        };
        res.res[0] = array as u64;
        bind(tex, res)
    })
}

/// `hipError_t hipTexRefSetMipmappedArray(textureReference*, hipMipmappedArray*, unsigned int
/// Flags)`: as `hipTexRefSetArray`.
#[export]
pub unsafe extern "C" fn hipTexRefSetMipmappedArray(
    tex: *mut textureReference,
    array: *mut hipMipmappedArray,
    flags: c_uint,
) -> hipError_t {
    call("hipTexRefSetMipmappedArray", || {
        if flags != TRSA_OVERRIDE_FORMAT {
            return Err(bad(format!(
                "flags {flags:#x} (only HIP_TRSA_OVERRIDE_FORMAT)"
            )));
        }
        let a = crate::array::mipmapped_array_of(array)?;
        let d = a.descriptor();
        update(tex, |r| {
            r.format = d.format.raw() as c_int;
            r.numChannels = d.channels as c_int;
            Ok(())
        })?;
        let mut res = hipResourceDesc {
            resType: RES_MIPMAP,
            res: [0; 7],
        };
        res.res[0] = array as u64;
        bind(tex, res)
    })
}

/// `hipError_t hipTexRefSetAddressMode(textureReference*, int dim, hipTextureAddressMode)`.
#[export]
pub unsafe extern "C" fn hipTexRefSetAddressMode(
    tex: *mut textureReference,
    dim: c_int,
    mode: c_int,
) -> hipError_t {
    call("hipTexRefSetAddressMode", || {
        if !(0..=3).contains(&mode) {
            return Err(bad(format!("address mode {mode}")));
        }
        let dim = usize::try_from(dim)
            .ok()
            .filter(|&d| d < 3)
            .ok_or_else(|| bad(format!("dimension {dim} (0, 1 or 2)")))?;
        update(tex, |r| {
            r.addressMode[dim] = mode;
            Ok(())
        })
    })
}

/// `hipError_t hipTexRefGetAddressMode(hipTextureAddressMode*, const textureReference*, int
/// dim)`.
#[export]
pub unsafe extern "C" fn hipTexRefGetAddressMode(
    mode: *mut c_int,
    tex: *const textureReference,
    dim: c_int,
) -> hipError_t {
    call("hipTexRefGetAddressMode", || {
        let r = read_ref(tex)?;
        let dim = usize::try_from(dim)
            .ok()
            .filter(|&d| d < 3)
            .ok_or_else(|| bad(format!("dimension {dim} (0, 1 or 2)")))?;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(mode, "pam", r.addressMode[dim]) }
    })
}

/// `hipError_t hipTexRefSetFilterMode(textureReference*, hipTextureFilterMode)`.
#[export]
pub unsafe extern "C" fn hipTexRefSetFilterMode(
    tex: *mut textureReference,
    mode: c_int,
) -> hipError_t {
    call("hipTexRefSetFilterMode", || {
        if !(0..=1).contains(&mode) {
            return Err(bad(format!("filter mode {mode}")));
        }
        update(tex, |r| {
            r.filterMode = mode;
            Ok(())
        })
    })
}

/// `hipError_t hipTexRefGetFilterMode(hipTextureFilterMode*, const textureReference*)`.
#[export]
pub unsafe extern "C" fn hipTexRefGetFilterMode(
    mode: *mut c_int,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetFilterMode", || {
        let r = read_ref(tex)?;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(mode, "pfm", r.filterMode) }
    })
}

/// `hipError_t hipTexRefSetMipmapFilterMode(textureReference*, hipTextureFilterMode)`.
#[export]
pub unsafe extern "C" fn hipTexRefSetMipmapFilterMode(
    tex: *mut textureReference,
    mode: c_int,
) -> hipError_t {
    call("hipTexRefSetMipmapFilterMode", || {
        if !(0..=1).contains(&mode) {
            return Err(bad(format!("mipmap filter mode {mode}")));
        }
        update(tex, |r| {
            r.mipmapFilterMode = mode;
            Ok(())
        })
    })
}

/// `hipError_t hipTexRefGetMipmapFilterMode(hipTextureFilterMode*, const textureReference*)`.
/// (HIP 5.2 writes the value and then returns `hipErrorInvalidValue`; this returns success.)
#[export]
pub unsafe extern "C" fn hipTexRefGetMipmapFilterMode(
    mode: *mut c_int,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetMipmapFilterMode", || {
        let r = read_ref(tex)?;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(mode, "pfm", r.mipmapFilterMode) }
    })
}

/// `hipError_t hipTexRefSetFlags(textureReference*, unsigned int Flags)`: `HIP_TRSF_*`.
#[export]
pub unsafe extern "C" fn hipTexRefSetFlags(
    tex: *mut textureReference,
    flags: c_uint,
) -> hipError_t {
    call("hipTexRefSetFlags", || {
        let known = TRSF_READ_AS_INTEGER | TRSF_NORMALIZED_COORDINATES | TRSF_SRGB;
        if flags & !known != 0 {
            return Err(bad(format!("flags {flags:#x}")));
        }
        update(tex, |r| {
            r.readMode = if flags & TRSF_READ_AS_INTEGER != 0 {
                READ_ELEMENT
            } else {
                READ_NORMALIZED
            };
            r.normalized = c_int::from(flags & TRSF_NORMALIZED_COORDINATES != 0);
            r.sRGB = c_int::from(flags & TRSF_SRGB != 0);
            Ok(())
        })
    })
}

/// `hipError_t hipTexRefGetFlags(unsigned int*, const textureReference*)`.
#[export]
pub unsafe extern "C" fn hipTexRefGetFlags(
    flags: *mut c_uint,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetFlags", || {
        let r = read_ref(tex)?;
        let mut f = 0;
        if r.readMode == READ_ELEMENT {
            f |= TRSF_READ_AS_INTEGER;
        }
        if r.normalized == 1 {
            f |= TRSF_NORMALIZED_COORDINATES;
        }
        if r.sRGB == 1 {
            f |= TRSF_SRGB;
        }
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(flags, "pFlags", f) }
    })
}

/// `hipError_t hipTexRefSetFormat(textureReference*, hipArray_Format, int
/// NumPackedComponents)`.
#[export]
pub unsafe extern "C" fn hipTexRefSetFormat(
    tex: *mut textureReference,
    format: c_int,
    channels: c_int,
) -> hipError_t {
    call("hipTexRefSetFormat", || {
        let f = ArrayFormat::from_raw(format as u32)
            .ok_or_else(|| bad(format!("hipArray_Format {format:#x}")))?;
        if !matches!(channels, 1 | 2 | 4) {
            return Err(bad(format!("{channels} channels (1, 2 or 4)")));
        }
        update(tex, |r| {
            r.format = f.raw() as c_int;
            r.numChannels = channels;
            r.channelDesc = channel_desc(f, channels as u32);
            Ok(())
        })
    })
}

/// `hipError_t hipTexRefGetFormat(hipArray_Format*, int* NumChannels, const
/// textureReference*)`.
#[export]
pub unsafe extern "C" fn hipTexRefGetFormat(
    format: *mut c_int,
    channels: *mut c_int,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetFormat", || {
        let r = read_ref(tex)?;
        if format.is_null() || channels.is_null() {
            return Err(Failure::null("pFormat or pNumChannels"));
        }
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe {
            out(format, "pFormat", r.format)?;
            out(channels, "pNumChannels", r.numChannels)
        }
    })
}

/// `hipError_t hipTexRefSetMaxAnisotropy(textureReference*, unsigned int)`: kept; filtering
/// stays isotropic.
#[export]
pub unsafe extern "C" fn hipTexRefSetMaxAnisotropy(
    tex: *mut textureReference,
    max: c_uint,
) -> hipError_t {
    call("hipTexRefSetMaxAnisotropy", || {
        update(tex, |r| {
            r.maxAnisotropy = max;
            Ok(())
        })
    })
}

/// `hipError_t hipTexRefGetMaxAnisotropy(int*, const textureReference*)`.
#[export]
pub unsafe extern "C" fn hipTexRefGetMaxAnisotropy(
    max: *mut c_int,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetMaxAnisotropy", || {
        let r = read_ref(tex)?;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(max, "pmaxAnsio", r.maxAnisotropy as c_int) }
    })
}

/// `hipError_t hipTexRefSetMipmapLevelBias(textureReference*, float)`.
#[export]
pub unsafe extern "C" fn hipTexRefSetMipmapLevelBias(
    tex: *mut textureReference,
    bias: f32,
) -> hipError_t {
    call("hipTexRefSetMipmapLevelBias", || {
        if !bias.is_finite() {
            return Err(bad(format!("mipmap level bias {bias}")));
        }
        update(tex, |r| {
            r.mipmapLevelBias = bias;
            Ok(())
        })
    })
}

/// `hipError_t hipTexRefGetMipmapLevelBias(float*, const textureReference*)` (success where
/// HIP 5.2 returns `hipErrorInvalidValue` after writing).
#[export]
pub unsafe extern "C" fn hipTexRefGetMipmapLevelBias(
    bias: *mut f32,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetMipmapLevelBias", || {
        let r = read_ref(tex)?;
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(bias, "pbias", r.mipmapLevelBias) }
    })
}

/// `hipError_t hipTexRefSetMipmapLevelClamp(textureReference*, float min, float max)`.
#[export]
pub unsafe extern "C" fn hipTexRefSetMipmapLevelClamp(
    tex: *mut textureReference,
    min: f32,
    max: f32,
) -> hipError_t {
    call("hipTexRefSetMipmapLevelClamp", || {
        if !(min.is_finite() && max.is_finite()) || min < 0.0 || max < min {
            return Err(bad(format!("mipmap level clamp [{min}, {max}]")));
        }
        update(tex, |r| {
            r.minMipmapLevelClamp = min;
            r.maxMipmapLevelClamp = max;
            Ok(())
        })
    })
}

/// `hipError_t hipTexRefGetMipmapLevelClamp(float* min, float* max, const
/// textureReference*)` (success where HIP 5.2 returns `hipErrorInvalidValue` after writing).
#[export]
pub unsafe extern "C" fn hipTexRefGetMipmapLevelClamp(
    min: *mut f32,
    max: *mut f32,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetMipmapLevelClamp", || {
        let r = read_ref(tex)?;
        if min.is_null() || max.is_null() {
            return Err(Failure::null(
                "pminMipmapLevelClamp or pmaxMipmapLevelClamp",
            ));
        }
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe {
            out(min, "pminMipmapLevelClamp", r.minMipmapLevelClamp)?;
            out(max, "pmaxMipmapLevelClamp", r.maxMipmapLevelClamp)
        }
    })
}

/// `hipError_t hipTexRefSetBorderColor(textureReference*, float* pBorderColor)`: four floats,
/// used from the next bind.
#[export]
pub unsafe extern "C" fn hipTexRefSetBorderColor(
    tex: *mut textureReference,
    color: *const f32,
) -> hipError_t {
    call("hipTexRefSetBorderColor", || {
        read_ref(tex)?;
        if color.is_null() {
            return Err(Failure::null("pBorderColor"));
        }
        // SAFETY: four readable floats by the caller's contract.
        let c = unsafe { std::ptr::read_unaligned(color.cast::<[f32; 4]>()) };
        if c.iter().any(|v| !v.is_finite()) {
            return Err(bad(format!("border colour {c:?}")));
        }
        BORDERS.lock().insert(tex as usize, c);
        Ok(())
    })
}

/// `hipError_t hipTexRefGetBorderColor(float* pBorderColor, const textureReference*)`: what
/// `hipTexRefSetBorderColor` set (transparent black before).
#[export]
pub unsafe extern "C" fn hipTexRefGetBorderColor(
    color: *mut f32,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetBorderColor", || {
        read_ref(tex)?;
        if color.is_null() {
            return Err(Failure::null("pBorderColor"));
        }
        let c = BORDERS
            .lock()
            .get(&(tex as usize))
            .copied()
            .unwrap_or([0.0; 4]);
        // SAFETY: four writable floats by the caller's contract.
        unsafe { std::ptr::write_unaligned(color.cast::<[f32; 4]>(), c) };
        Ok(())
    })
}

/// The resource of the object bound to a reference.
fn bound_resource(tex: *const textureReference) -> Result<hipResourceDesc, Failure> {
    let r = read_ref(tex)?;
    if r.textureObject.is_null() {
        return Err(bad(format!("texture reference {tex:p} is not bound")));
    }
    Ok(record(r.textureObject)?.res)
}

/// `hipError_t hipTexRefGetAddress(hipDeviceptr_t*, const textureReference*)`: the memory of
/// a reference bound to linear or pitched memory.
#[export]
pub unsafe extern "C" fn hipTexRefGetAddress(
    ptr: *mut *mut c_void,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetAddress", || {
        let res = bound_resource(tex)?;
        if !matches!(res.resType, RES_LINEAR | RES_PITCH2D) {
            return Err(bad("the reference is bound to an array, not memory".into()));
        }
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(ptr, "dev_ptr", res.res[0] as *mut c_void) }
    })
}

/// `hipError_t hipTexRefGetArray(hipArray_t*, const textureReference*)`.
#[export]
pub unsafe extern "C" fn hipTexRefGetArray(
    array: *mut *mut hipArray,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetArray", || {
        let res = bound_resource(tex)?;
        if res.resType != RES_ARRAY {
            return Err(bad("the reference is not bound to an array".into()));
        }
        // SAFETY: writable by the caller's contract (NULL refused).
        unsafe { out(array, "pArray", res.res[0] as *mut hipArray) }
    })
}

fn bound_mipmap(
    array: *mut *mut hipMipmappedArray,
    tex: *const textureReference,
) -> Result<(), Failure> {
    let res = bound_resource(tex)?;
    if res.resType != RES_MIPMAP {
        return Err(bad("the reference is not bound to a mipmapped array".into()));
    }
    // SAFETY: writable by the caller's contract (NULL refused).
    unsafe { out(array, "pArray", res.res[0] as *mut hipMipmappedArray) }
}

/// `hipError_t hipTexRefGetMipMappedArray(hipMipmappedArray_t*, const textureReference*)`.
#[export]
pub unsafe extern "C" fn hipTexRefGetMipMappedArray(
    array: *mut *mut hipMipmappedArray,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetMipMappedArray", || bound_mipmap(array, tex))
}

/// `hipError_t hipTexRefGetMipmappedArray(hipMipmappedArray_t*, const textureReference*)`:
/// the later spelling.
#[export]
pub unsafe extern "C" fn hipTexRefGetMipmappedArray(
    array: *mut *mut hipMipmappedArray,
    tex: *const textureReference,
) -> hipError_t {
    call("hipTexRefGetMipmappedArray", || bound_mipmap(array, tex))
}
