//! Names of HIP's profiling API: `hipApiName` (the callback ids of the program's generation's
//! `hip_prof_str.h`, `abi/hip-tracer-api-*.tsv`), `hipKernelNameRef(ByPtr)`, `hipGetStreamDeviceId`; and the small
//! exports programs link against: half-precision conversions, the debugger's build queries,
//! the hiprtc precompiled header (none). The callbacks themselves are `profiling`'s.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::OnceLock;

use parking_lot::Mutex;
use rocload_ffi::export;

use crate::*;

/// The API ids and names of each tracer table (`profiling::TRACER_TABLES`).
fn api_names(table: usize) -> Option<&'static HashMap<u32, CString>> {
    static NAMES: [OnceLock<HashMap<u32, CString>>; rocload_ffi::trace::TRACER_TABLES] =
        [const { OnceLock::new() }; rocload_ffi::trace::TRACER_TABLES];
    let text = crate::profiling::TRACER_TABLES.get(table)?;
    Some(NAMES.get(table)?.get_or_init(|| {
        text.lines()
            .filter(|l| !l.starts_with(['#', '%']))
            .filter_map(|l| {
                let mut cols = l.split('\t');
                let name = cols.next()?;
                let id = cols.next()?.parse().ok()?;
                Some((id, CString::new(name).ok()?))
            })
            .collect()
    }))
}

/// `const char* hipApiName(uint32_t id)`: the API's name in the numbering of the program's
/// generation, as clr answers from its own `hip_prof_str.h`: HIP 5.7.1's for libamdhip64.so.5
/// programs (its ids 1 to 333 are 5.2.3's, the ones `hipRegisterApiCallback` takes), 6.2.2's
/// for .so.6 and .so.7 ones (`hipChooseDeviceR0000` is 6 there); `"unknown"` for an id the
/// numbering does not define.
#[export]
pub extern "C" fn hipApiName(id: u32) -> *const c_char {
    api_names(crate::profiling::tracer_table(crate::generation::current()))
        .and_then(|names| names.get(&id))
        .map_or(c"unknown".as_ptr(), |n| n.as_ptr())
}

/// Kernel names handed out as C strings: each name once, alive for the process (the pointers
/// `hipKernelNameRef` returns must stay valid).
fn interned(name: &str) -> *const c_char {
    static NAMES: Mutex<Vec<CString>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock();
    if let Some(n) = names.iter().find(|n| n.as_bytes() == name.as_bytes()) {
        return n.as_ptr();
    }
    let Ok(c) = CString::new(name) else {
        return std::ptr::null();
    };
    let p = c.as_ptr();
    names.push(c);
    p
}

/// `const char* hipKernelNameRef(const hipFunction_t f)`: the kernel's (mangled) name, NULL
/// for an unknown handle.
#[export]
pub extern "C" fn hipKernelNameRef(f: hipFunction_t) -> *const c_char {
    match crate::module::function_handle(f) {
        Ok(k) => interned(&k.info().name),
        Err(_) => std::ptr::null(),
    }
}

/// `const char* hipKernelNameRefByPtr(const void* hostFunction, hipStream_t)`: the name the
/// host stub was registered with, NULL when it is no registered kernel or the stream is not
/// valid.
#[export]
pub extern "C" fn hipKernelNameRefByPtr(
    function: *const c_void,
    stream: hipStream_t,
) -> *const c_char {
    // clr: the stream's device must be valid (NULL for an unknown stream).
    if function.is_null() || crate::stream::stream_of(stream).is_err() {
        return std::ptr::null();
    }
    match runtime().kernel_name(function as usize) {
        Some(name) => interned(&name),
        None => std::ptr::null(),
    }
}

/// `int hipGetStreamDeviceId(hipStream_t)`: the stream's device, -1 for an invalid stream.
#[export]
pub extern "C" fn hipGetStreamDeviceId(stream: hipStream_t) -> c_int {
    crate::stream::stream_of(stream)
        .ok()
        .and_then(|s| s.device_index().ok())
        .map_or(-1, |d| d as c_int)
}

/// `unsigned short __gnu_f2h_ieee(float)`: IEEE half precision, rounded to nearest even.
#[export]
pub extern "C" fn __gnu_f2h_ieee(value: f32) -> u16 {
    half::f16::from_f32(value).to_bits()
}

/// `float __gnu_h2f_ieee(unsigned short)`.
#[export]
pub extern "C" fn __gnu_h2f_ieee(value: u16) -> f32 {
    half::f16::from_bits(value).to_f32()
}

/// `size_t amd_dbgapi_get_build_id(void)`: rocload's version as a number (major x 10^6 +
/// minor x 10^3 + patch), for the debugger's build checks.
#[export]
pub extern "C" fn amd_dbgapi_get_build_id() -> usize {
    let part = |s: &str| s.parse::<usize>().unwrap_or(0);
    part(env!("CARGO_PKG_VERSION_MAJOR")) * 1_000_000
        + part(env!("CARGO_PKG_VERSION_MINOR")) * 1_000
        + part(env!("CARGO_PKG_VERSION_PATCH"))
}

/// `const char* amd_dbgapi_get_build_name(void)`.
#[export]
pub extern "C" fn amd_dbgapi_get_build_name() -> *const c_char {
    concat!("rocload ", env!("CARGO_PKG_VERSION"), "\0")
        .as_ptr()
        .cast()
}

/// `const char* amd_dbgapi_get_git_hash(void)`: rocload's version (no commit is recorded in
/// the build).
#[export]
pub extern "C" fn amd_dbgapi_get_git_hash() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// `void __hipGetPCH(const char** pch, unsigned int* size)`: hiprtc's precompiled header;
/// rocload's hiprtc has none (it includes the headers), so an empty one.
///
/// # Safety
/// NULL or writable pointers.
#[export]
pub unsafe extern "C" fn __hipGetPCH(pch: *mut *const c_char, size: *mut c_uint) {
    // SAFETY: writable by the caller's contract when not NULL.
    unsafe {
        if !pch.is_null() {
            pch.write(c"".as_ptr());
        }
        if !size.is_null() {
            size.write(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn names_and_halves() {
        // SAFETY: hipApiName returns static C strings.
        let name = |id| unsafe { CStr::from_ptr(hipApiName(id)) }.to_str().unwrap();
        assert_eq!(name(108), "hipMalloc");
        assert_eq!(name(1), "__hipPopCallConfiguration");
        assert_eq!(name(99_999), "unknown");
        assert_eq!(__gnu_f2h_ieee(1.0), 0x3c00);
        assert_eq!(__gnu_f2h_ieee(-2.5), 0xc100);
        assert_eq!(__gnu_f2h_ieee(65520.0), 0x7c00, "rounds to infinity");
        assert_eq!(__gnu_h2f_ieee(0x3555), 0.333_251_95);
        assert!(__gnu_h2f_ieee(0x7e00).is_nan());
        assert!(hipKernelNameRef(0xdead as hipFunction_t).is_null());
        assert_eq!(hipGetStreamDeviceId(0x1234 as hipStream_t), -1);
    }

    /// HIP 5's tracer numbering keeps every id of 5.2.3's (what `hipRegisterApiCallback`
    /// takes); HIP 6's renamed and moved some.
    #[test]
    fn numberings_by_generation() {
        let five = api_names(0).unwrap();
        let old: Vec<(u32, &str)> = include_str!("../abi/hip-api-ids.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let (id, name) = l.split_once('\t')?;
                Some((id.parse().ok()?, name))
            })
            .filter(|(_, name)| !name.starts_with("RESERVED_"))
            .collect();
        assert!(old.len() > 300);
        for (id, name) in old {
            assert_eq!(
                five.get(&id).map(|n| n.to_str().unwrap()),
                Some(name),
                "id {id}"
            );
        }
        let six = api_names(1).unwrap();
        let name = |id| six.get(&id).map(|n| n.to_str().unwrap());
        assert_eq!(name(6), Some("hipChooseDeviceR0000"));
        assert_eq!(name(108), Some("hipMalloc"));
        assert_eq!(name(368), None, "reserved in 6.2");
        assert!(api_names(rocload_ffi::trace::TRACER_TABLES).is_none());
    }
}
