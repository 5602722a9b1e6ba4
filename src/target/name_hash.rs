// Processor-name packing and hashing for the perfect-hash lookup table. Shared verbatim by
// build.rs (which searches a seed that makes the table collision-free) and processor.rs (which
// looks names up), through `include!`. Names longer than 16 bytes are never in the table, so a
// name packs exactly into two little-endian u64 words (zero-padded) plus its length, and
// comparing packed words replaces a string comparison.

/// The first 16 bytes of `name`, zero-padded, as two little-endian words.
#[inline]
fn pack_name(name: &[u8]) -> (u64, u64) {
    let mut lo = 0u64;
    let mut hi = 0u64;
    for (i, &b) in name.iter().take(16).enumerate() {
        if i < 8 {
            lo |= u64::from(b) << (8 * i);
        } else {
            hi |= u64::from(b) << (8 * (i - 8));
        }
    }
    (lo, hi)
}

/// Multiply-xor hash of a packed name and its length.
#[inline]
fn name_hash(lo: u64, hi: u64, len: usize, seed: u64) -> u64 {
    let x = lo ^ seed;
    let y = hi.wrapping_add(len as u64);
    let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ y.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^ (h >> 29)
}
