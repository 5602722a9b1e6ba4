//! Checked little-endian reads over untrusted bytes.
//!
//! Every read names the field it wants and returns `None` instead of panicking when the
//! bytes run out; callers turn that into a typed error carrying the offset. Nothing here
//! allocates.

/// Reads `N` bytes at `offset`, or `None` if they are not all there.
#[inline]
pub fn array_at<const N: usize>(data: &[u8], offset: u64) -> Option<[u8; N]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(N)?;
    data.get(start..end)?.try_into().ok()
}

/// Little-endian `u16` at `offset`.
#[inline]
pub fn u16_at(data: &[u8], offset: u64) -> Option<u16> {
    array_at(data, offset).map(u16::from_le_bytes)
}

/// Little-endian `u32` at `offset`.
#[inline]
pub fn u32_at(data: &[u8], offset: u64) -> Option<u32> {
    array_at(data, offset).map(u32::from_le_bytes)
}

/// Little-endian `u64` at `offset`.
#[inline]
pub fn u64_at(data: &[u8], offset: u64) -> Option<u64> {
    array_at(data, offset).map(u64::from_le_bytes)
}

/// The `len` bytes at `offset`, or `None` if the range is not inside `data`.
#[inline]
pub fn slice_at(data: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let len = usize::try_from(len).ok()?;
    data.get(start..start.checked_add(len)?)
}

/// Rounds `value` up to a multiple of `align` (a power of two), or `None` on overflow.
#[inline]
pub fn align_up(value: u64, align: u64) -> Option<u64> {
    debug_assert!(align.is_power_of_two());
    Some(value.checked_add(align - 1)? & !(align - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_end() {
        let data = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(u64_at(&data, 0), Some(0x0807_0605_0403_0201));
        assert_eq!(u64_at(&data, 1), Some(0x0908_0706_0504_0302));
        assert_eq!(u64_at(&data, 2), None);
        assert_eq!(u32_at(&data, u64::MAX), None);
        assert_eq!(slice_at(&data, 8, 1), Some(&[9u8][..]));
        assert_eq!(slice_at(&data, 8, 2), None);
        assert_eq!(slice_at(&data, u64::MAX, u64::MAX), None);
        assert_eq!(align_up(4097, 4096), Some(8192));
        assert_eq!(align_up(u64::MAX, 4096), None);
    }
}
