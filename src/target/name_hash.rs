// Processor-name packing and hashing for the perfect-hash lookup table. Shared verbatim by
// build.rs (which searches a seed that makes the table collision-free) and processor.rs (which
// looks names up), through `include!`. Names longer than 16 bytes are never in the table, so a
// name packs exactly into two little-endian u64 words (zero-padded) plus its length, and
// comparing packed words replaces a string comparison.

/// Up to 8 bytes as a little-endian word, zero-padded, with at most two loads.
#[inline]
fn load_partial(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let word4 = |at: usize| {
        let mut w = [0u8; 4];
        w.copy_from_slice(&bytes[at..at + 4]);
        u64::from(u32::from_le_bytes(w))
    };
    if n >= 8 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[..8]);
        u64::from_le_bytes(w)
    } else if n >= 4 {
        // Two overlapping 4-byte loads; the overlap holds the same bytes in both.
        word4(0) | (word4(n - 4) << (8 * (n - 4)))
    } else {
        let mut w = 0u64;
        for (i, &b) in bytes.iter().enumerate() {
            w |= u64::from(b) << (8 * i);
        }
        w
    }
}

/// The first 16 bytes of `name`, zero-padded, as two little-endian words.
#[inline]
fn pack_name(name: &[u8]) -> (u64, u64) {
    let name = if name.len() > 16 { &name[..16] } else { name };
    if name.len() > 8 {
        (load_partial(&name[..8]), load_partial(&name[8..]))
    } else {
        (load_partial(name), 0)
    }
}

/// Multiply-xor hash of a packed name and its length.
#[inline]
fn name_hash(lo: u64, hi: u64, len: usize, seed: u64) -> u64 {
    let x = lo ^ seed;
    let y = hi.wrapping_add(len as u64);
    let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ y.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^ (h >> 29)
}
