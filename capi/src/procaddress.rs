//! Entry points by name: `hipGetProcAddress` (HIP 6.1) and `hipGetDriverEntryPoint` (7.1),
//! which give a caller the address of any HIP function of this runtime, choosing the variant
//! the caller's HIP version expects (the 1,472-byte device properties from 6.0) and saying when
//! the name is newer than that version. Addresses come from the dynamic loader's view of
//! librocload.so itself (`dlsym` on this library), so they are exactly what a program linked
//! against it would call.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use rocload_ffi::export;

use crate::*;

include!(concat!(env!("OUT_DIR"), "/first_release.rs"));

/// `hipDriverProcAddressQueryResult` / `hipDriverEntryPointQueryResult`.
mod status {
    pub const SUCCESS: i32 = 0;
    pub const SYMBOL_NOT_FOUND: i32 = 1;
    pub const VERSION_NOT_SUFFICIENT: i32 = 2;
}

/// `HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`.
const PER_THREAD_DEFAULT_STREAM: u64 = 2;

/// The first HIP release (major x 100 + minor) that exported `name`, from AMD's data.
fn first_release(name: &str) -> Option<u32> {
    FIRST_RELEASE
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .ok()
        .map(|i| FIRST_RELEASE[i].1)
}

/// The address of `name` in this library as the dynamic loader resolves it.
fn lookup(name: &str) -> Option<*mut c_void> {
    let name = CString::new(name).ok()?;
    // SAFETY: Dl_info is plain pointers and integers; all zeros is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads the address of a function of this library and fills `info`.
    if unsafe { libc::dladdr(lookup as *const c_void, &mut info) } == 0 || info.dli_fname.is_null()
    {
        return None;
    }
    // SAFETY: dli_fname is the NUL-terminated path of this loaded library; RTLD_NOLOAD only
    // takes another reference to it (never loads anything).
    let handle = unsafe { libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return None;
    }
    // SAFETY: a handle from dlopen and a NUL-terminated name.
    let address = unsafe { libc::dlsym(handle, name.as_ptr()) };
    // SAFETY: the reference taken above.
    unsafe { libc::dlclose(handle) };
    (!address.is_null()).then_some(address)
}

/// The function `symbol` names for a caller built for HIP `version` (major x 100 + minor),
/// with the query status.
fn resolve(symbol: &str, version: u32, flags: u64) -> (Option<*mut c_void>, i32) {
    let mut name = symbol.to_owned();
    if version >= 600 && matches!(symbol, "hipGetDeviceProperties" | "hipChooseDevice") {
        name.push_str("R0600");
    }
    if flags & PER_THREAD_DEFAULT_STREAM != 0 {
        if let Some(address) = lookup(&format!("{name}_spt")) {
            return (Some(address), status::SUCCESS);
        }
    }
    match (lookup(&name), first_release(&name)) {
        (Some(_), Some(first)) if first > version => (None, status::VERSION_NOT_SUFFICIENT),
        (Some(address), _) => (Some(address), status::SUCCESS),
        (None, _) => (None, status::SYMBOL_NOT_FOUND),
    }
}

/// Writes the result of a query.
///
/// # Safety
/// `function` is writable for a pointer; `query` is NULL or writable for an int.
unsafe fn answer(
    op: &str,
    symbol: *const c_char,
    function: *mut *mut c_void,
    query: *mut c_int,
    version: u32,
    flags: u64,
) -> Result<(), Failure> {
    if symbol.is_null() {
        return Err(Failure::null("symbol"));
    }
    if function.is_null() {
        return Err(Failure::null("pfn"));
    }
    // SAFETY: NUL-terminated by the caller's contract.
    let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy();
    let (address, result) = resolve(&name, version, flags);
    tracing::debug!(op, symbol = %name, version, flags, result, "entry point query");
    // SAFETY: writable by the caller's contract.
    unsafe {
        function.write(address.unwrap_or(std::ptr::null_mut()));
        if !query.is_null() {
            query.write(result);
        }
    }
    match result {
        status::SUCCESS => Ok(()),
        _ => Err(Failure::new(
            hipErrorNotFound,
            format!(
                "{name} (for HIP {}.{}): status {result}",
                version / 100,
                version % 100
            ),
        )),
    }
}

/// `hipError_t hipGetProcAddress(const char* symbol, void** pfn, int hipVersion, uint64_t
/// flags, hipDriverProcAddressQueryResult* symbolStatus)` (HIP 6.1): `hipVersion` is major x
/// 100 + minor (600 for 6.0).
#[export]
pub unsafe extern "C" fn hipGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    hip_version: c_int,
    flags: u64,
    symbol_status: *mut c_int,
) -> hipError_t {
    call("hipGetProcAddress", || {
        let version = u32::try_from(hip_version)
            .map_err(|_| Failure::new(hipErrorInvalidValue, format!("hipVersion {hip_version}")))?;
        // SAFETY: the caller's contract.
        unsafe {
            answer(
                "hipGetProcAddress",
                symbol,
                pfn,
                symbol_status,
                version,
                flags,
            )
        }
    })
}

/// `hipError_t hipGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long
/// flags, hipDriverEntryPointQueryResult* driverStatus)` (HIP 7.1): as `hipGetProcAddress`
/// for the HIP version of the caller's generation.
#[export]
pub unsafe extern "C" fn hipGetDriverEntryPoint(
    symbol: *const c_char,
    function: *mut *mut c_void,
    flags: u64,
    driver_status: *mut c_int,
) -> hipError_t {
    call("hipGetDriverEntryPoint", || {
        let v = crate::generation::current().hip_version() as u32;
        let version = v / 10_000_000 * 100 + v / 100_000 % 100;
        // SAFETY: the caller's contract.
        unsafe {
            answer(
                "hipGetDriverEntryPoint",
                symbol,
                function,
                driver_status,
                version,
                flags,
            )
        }
    })
}

/// `hipGetDriverEntryPoint_spt`: the per-thread-default-stream variant.
#[export]
pub unsafe extern "C" fn hipGetDriverEntryPoint_spt(
    symbol: *const c_char,
    function: *mut *mut c_void,
    flags: u64,
    driver_status: *mut c_int,
) -> hipError_t {
    // SAFETY: the same contract.
    unsafe {
        hipGetDriverEntryPoint(
            symbol,
            function,
            flags | PER_THREAD_DEFAULT_STREAM,
            driver_status,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // `resolve` needs this library loaded as librocload.so (dlsym on it): tested by
    // tests/hip_generations.rs through the real sonames.
    #[test]
    fn first_releases_come_from_amds_data() {
        assert_eq!(first_release("hipMalloc"), Some(502));
        assert_eq!(first_release("hipStreamGetId"), Some(701));
        assert_eq!(first_release("hipGetDevicePropertiesR0600"), Some(600));
        assert_eq!(first_release("hipNoSuchThing"), None);
    }
}
