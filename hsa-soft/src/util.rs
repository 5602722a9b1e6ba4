// The HSA side of the C boundary: `rocload_ffi`'s guards, out-pointers, C strings and
// handles, with HSA's statuses. Nothing here is HSA-specific but the status each failure gets.

use std::ffi::c_void;

use hsa_sys::{
    hsa_status_t, HSA_STATUS_ERROR, HSA_STATUS_ERROR_INVALID_ARGUMENT, HSA_STATUS_SUCCESS,
};
use rocload_ffi::{boundary, cabi, handles};

pub(crate) use rocload_ffi::Tag;

/// Runs an entry point's body; a panic becomes `HSA_STATUS_ERROR` instead of unwinding into C.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), hsa_status_t>) -> hsa_status_t {
    boundary::guard(
        "hsa",
        || HSA_STATUS_ERROR,
        || match f() {
            Ok(()) => HSA_STATUS_SUCCESS,
            Err(status) => status,
        },
    )
}

/// Runs a body that returns a value (signal loads, queue indices); a panic gives `fallback`.
pub(crate) fn guard_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    boundary::guard("hsa", || fallback, f)
}

/// HSA results inside the library.
pub(crate) type Status<T = ()> = Result<T, hsa_status_t>;

fn invalid(_: cabi::CError) -> hsa_status_t {
    HSA_STATUS_ERROR_INVALID_ARGUMENT
}

/// Writes `v` at the caller's `value` (the attribute's type is the caller's contract).
///
/// # Safety
/// `value` is NULL (refused) or writable for `size_of::<T>()` bytes.
pub(crate) unsafe fn put<T: Copy>(value: *mut c_void, v: T) -> Status {
    // SAFETY: the caller's contract.
    unsafe { cabi::write(value.cast::<T>(), v) }.map_err(invalid)
}

/// Writes `text` into the caller's fixed-size buffer of `size` bytes, NUL-padded (names of
/// agents: 64 bytes).
///
/// # Safety
/// As [`put`], for `size` bytes.
pub(crate) unsafe fn put_fixed_str(value: *mut c_void, text: &str, size: usize) -> Status {
    // SAFETY: the caller's contract.
    unsafe { cabi::write_fixed_str(value.cast(), size, text) }.map_err(invalid)
}

/// Writes `text` and a NUL (names whose length the caller asked for first).
///
/// # Safety
/// As [`put`], for `text.len() + 1` bytes.
pub(crate) unsafe fn put_str(value: *mut c_void, text: &str) -> Status {
    // SAFETY: the caller's contract covers the name and its NUL.
    unsafe { put_fixed_str(value, text, text.len() + 1) }
}

/// Kinds of opaque handles this library gives out (their tags).
pub(crate) mod tag {
    use super::Tag;
    pub(crate) const AGENT: Tag = Tag(0xA6);
    pub(crate) const ISA: Tag = Tag(0x15);
    pub(crate) const POOL: Tag = Tag(0x90);
    pub(crate) const EXECUTABLE: Tag = Tag(0xE8);
    pub(crate) const READER: Tag = Tag(0xC0);
    pub(crate) const SYMBOL: Tag = Tag(0x5B);
    pub(crate) const LOADED_CODE_OBJECT: Tag = Tag(0x1C);
    pub(crate) const VMEM: Tag = Tag(0x3D);
}

/// A handle for an object that lives as long as the library (agents, ISAs, pools).
pub(crate) fn handle(tag: Tag, value: u64) -> u64 {
    handles::fixed(tag, value)
}

/// The value of a [`handle`] of kind `tag`, or `None` for anything else.
pub(crate) fn unhandle(tag: Tag, handle: u64) -> Option<u64> {
    handles::fixed_value(tag, handle)
}

/// Reads a NUL-terminated name from the caller (at most 64 KiB).
///
/// # Safety
/// `name` is NULL (refused) or a NUL-terminated string.
pub(crate) unsafe fn c_name(name: *const std::ffi::c_char) -> Status<String> {
    // SAFETY: the caller's contract.
    unsafe { cabi::read_str(name, 1 << 16) }
        .map(|s| s.into_owned())
        .map_err(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_a_status() {
        assert_eq!(guard(|| panic!("bug")), HSA_STATUS_ERROR);
        assert_eq!(guard(|| Err(7)), 7);
        assert_eq!(guard(|| Ok(())), HSA_STATUS_SUCCESS);
        assert_eq!(guard_value(5u64, || panic!("bug")), 5);
    }

    #[test]
    fn null_out_pointers_are_invalid_arguments() {
        assert_eq!(
            // SAFETY: NULL is refused before any write.
            unsafe { put::<u32>(std::ptr::null_mut(), 1) },
            Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
        );
    }
}
