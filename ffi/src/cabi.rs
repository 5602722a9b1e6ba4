//! Values crossing the C boundary: C strings read with a bound, results written through
//! out-pointers and into fixed-size caller buffers. Every function refuses NULL; what else a
//! pointer must satisfy is the API's contract, stated in each `# Safety`.

use std::borrow::Cow;
use std::ffi::{c_char, CStr};

/// Why a value could not cross.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CError {
    /// The pointer is NULL.
    Null,
    /// The string is longer than the limit.
    TooLong,
}

/// The NUL-terminated string at `p` (invalid UTF-8 replaced), at most `max` bytes.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
pub unsafe fn read_str<'a>(p: *const c_char, max: usize) -> Result<Cow<'a, str>, CError> {
    if p.is_null() {
        return Err(CError::Null);
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let text = unsafe { CStr::from_ptr(p) };
    if text.to_bytes().len() > max {
        return Err(CError::TooLong);
    }
    Ok(text.to_string_lossy())
}

/// Writes `value` through `p` (unaligned: a C caller's buffer may be).
///
/// # Safety
/// `p` is NULL or valid for a write of a `T`.
pub unsafe fn write<T>(p: *mut T, value: T) -> Result<(), CError> {
    if p.is_null() {
        return Err(CError::Null);
    }
    // SAFETY: non-NULL and writable by the caller's contract.
    unsafe { p.write_unaligned(value) };
    Ok(())
}

/// Writes `text` into the caller's buffer of `size` bytes, cut to fit, NUL-terminated and
/// NUL-padded (fixed name fields such as an HSA agent's 64-byte name).
///
/// # Safety
/// `p` is NULL or valid for writes of `size` bytes.
pub unsafe fn write_fixed_str(p: *mut u8, size: usize, text: &str) -> Result<(), CError> {
    if p.is_null() {
        return Err(CError::Null);
    }
    if size == 0 {
        return Ok(());
    }
    let n = text.len().min(size - 1);
    // SAFETY: writable for `size` bytes by the caller's contract; n < size.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), p, n);
        std::ptr::write_bytes(p.add(n), 0, size - n);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_out_pointers() {
        let s = c"gfx1030";
        // SAFETY: a NUL-terminated literal.
        assert_eq!(unsafe { read_str(s.as_ptr(), 64) }.unwrap(), "gfx1030");
        // SAFETY: as above.
        assert_eq!(unsafe { read_str(s.as_ptr(), 3) }, Err(CError::TooLong));
        // SAFETY: NULL is refused.
        assert_eq!(unsafe { read_str(std::ptr::null(), 3) }, Err(CError::Null));
        let mut v = 0u32;
        // SAFETY: a local u32.
        unsafe { write(&mut v, 7).unwrap() };
        assert_eq!(v, 7);
        // SAFETY: NULL is refused.
        let null = unsafe { write::<u32>(std::ptr::null_mut(), 1) };
        assert_eq!(null, Err(CError::Null));
        let mut buf = [0xffu8; 8];
        // SAFETY: an 8-byte buffer.
        unsafe { write_fixed_str(buf.as_mut_ptr(), 8, "gfx1030-long").unwrap() };
        assert_eq!(&buf, b"gfx1030\0");
        let mut buf = [0xffu8; 8];
        // SAFETY: as above.
        unsafe { write_fixed_str(buf.as_mut_ptr(), 8, "ab").unwrap() };
        assert_eq!(&buf, b"ab\0\0\0\0\0\0");
    }
}
