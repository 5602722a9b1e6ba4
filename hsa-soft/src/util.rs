// Helpers every entry point uses: catching panics at the C boundary, writing attribute values
// into caller buffers, opaque handles with a kind tag, and names as C strings.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use hsa_sys::{
    hsa_status_t, HSA_STATUS_ERROR, HSA_STATUS_ERROR_INVALID_ARGUMENT, HSA_STATUS_SUCCESS,
};

/// Runs an entry point's body; a panic becomes `HSA_STATUS_ERROR` instead of unwinding into C.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), hsa_status_t>) -> hsa_status_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => HSA_STATUS_SUCCESS,
        Ok(Err(status)) => status,
        Err(_) => {
            tracing::debug!("panic caught at the HSA API boundary");
            HSA_STATUS_ERROR
        }
    }
}

/// Runs a body that returns a value (signal loads, queue indices); a panic gives `fallback`.
pub(crate) fn guard_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// HSA results inside the library.
pub(crate) type Status<T = ()> = Result<T, hsa_status_t>;

/// Writes `v` at the caller's `value` (unaligned; the attribute's type is the caller's
/// contract).
///
/// # Safety
/// `value` is NULL (refused) or writable for `size_of::<T>()` bytes.
pub(crate) unsafe fn put<T: Copy>(value: *mut c_void, v: T) -> Status {
    if value.is_null() {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: non-NULL and writable for a T by the caller's contract.
    unsafe { std::ptr::write_unaligned(value.cast::<T>(), v) };
    Ok(())
}

/// Writes `text` into the caller's fixed-size buffer of `size` bytes, NUL-padded (names of
/// agents: 64 bytes).
///
/// # Safety
/// As [`put`], for `size` bytes.
pub(crate) unsafe fn put_fixed_str(value: *mut c_void, text: &str, size: usize) -> Status {
    if value.is_null() {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let mut buf = vec![0u8; size];
    let n = text.len().min(size.saturating_sub(1));
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    // SAFETY: writable for `size` bytes by the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), value.cast::<u8>(), size) };
    Ok(())
}

/// Writes `text` and a NUL (names whose length the caller asked for first).
///
/// # Safety
/// As [`put`], for `text.len() + 1` bytes.
pub(crate) unsafe fn put_str(value: *mut c_void, text: &str) -> Status {
    // SAFETY: the caller's contract covers the name and its NUL.
    unsafe { put_fixed_str(value, text, text.len() + 1) }
}

/// Kinds of opaque handles, in the top 16 bits of every handle this library gives out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Tag {
    Agent = 0xa6e0,
    Isa = 0x15a0,
    Pool = 0x9001,
    Executable = 0xe8ec,
    Reader = 0xc0de,
    Symbol = 0x5b01,
    LoadedCodeObject = 0x1c0b,
}

/// A handle: the tag, then 48 bits of value.
pub(crate) fn handle(tag: Tag, value: u64) -> u64 {
    ((tag as u64) << 48) | (value & 0xffff_ffff_ffff)
}

/// The value of a handle of kind `tag`, or `None` for anything else.
pub(crate) fn unhandle(tag: Tag, handle: u64) -> Option<u64> {
    (handle >> 48 == tag as u64).then_some(handle & 0xffff_ffff_ffff)
}

/// Reads a NUL-terminated name from the caller (at most 64 KiB).
///
/// # Safety
/// `name` is NULL (refused) or a NUL-terminated string.
pub(crate) unsafe fn c_name(name: *const std::ffi::c_char) -> Status<String> {
    if name.is_null() {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: a NUL-terminated string by the caller's contract.
    let text = unsafe { std::ffi::CStr::from_ptr(name) };
    let bytes = text.to_bytes();
    if bytes.len() > 1 << 16 {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_carry_their_kind() {
        let h = handle(Tag::Agent, 3);
        assert_eq!(unhandle(Tag::Agent, h), Some(3));
        assert_eq!(unhandle(Tag::Isa, h), None);
        assert_eq!(unhandle(Tag::Agent, 0), None);
    }

    #[test]
    fn panics_become_a_status() {
        assert_eq!(guard(|| panic!("bug")), HSA_STATUS_ERROR);
        assert_eq!(guard(|| Err(7)), 7);
        assert_eq!(guard_value(5u64, || panic!("bug")), 5);
    }

    #[test]
    fn fixed_strings_are_truncated_and_padded() {
        let mut buf = [0xffu8; 8];
        // SAFETY: an 8-byte buffer.
        unsafe { put_fixed_str(buf.as_mut_ptr().cast(), "gfx1030-long", 8).unwrap() };
        assert_eq!(&buf, b"gfx1030\0");
        assert_eq!(
            // SAFETY: NULL is refused before any write.
            unsafe { put::<u32>(std::ptr::null_mut(), 1) },
            Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
        );
    }
}
