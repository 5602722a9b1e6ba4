//! Block-compressed texels (BC1 to BC5): one 4x4 block of 8 or 16 bytes decoded to the texel
//! a sample asks for, as the texture unit does before filtering. Written from the public
//! format descriptions (Microsoft's Direct3D block-compression documentation, the Khronos Data
//! Format Specification's S3TC and RGTC chapters), facts only.
//!
//! Precision: endpoints are expanded to their exact values (`v / 31`, `v / 63`, `v / 255`,
//! `v / 127`) and palette entries are the exact weighted means of them, rounded to f32 once.
//! A GPU interpolates in fixed point (the Direct3D specification allows a small error), so the
//! last bits of interpolated entries may differ from a GPU's. Not for BC6H or BC7 (their
//! formats end the dispatch as `Unsupported`).

/// A block-compressed format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bc {
    /// RGB in two RGB565 endpoints and 2-bit indices; punch-through alpha when the first
    /// endpoint is not the larger.
    Bc1,
    /// Explicit 4-bit alpha, then a BC1 colour block (four colours).
    Bc2,
    /// Interpolated alpha (as BC4), then a BC1 colour block (four colours).
    Bc3,
    /// One interpolated channel (red), unsigned.
    Bc4,
    /// One interpolated channel, signed.
    Bc4Signed,
    /// Two interpolated channels (red, green), unsigned.
    Bc5,
    /// Two interpolated channels, signed.
    Bc5Signed,
}

impl Bc {
    /// Bytes of one 4x4 block.
    pub fn block_bytes(self) -> u32 {
        match self {
            Bc::Bc1 | Bc::Bc4 | Bc::Bc4Signed => 8,
            _ => 16,
        }
    }
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// An RGB565 endpoint as exact channel values.
fn rgb565(c: u16) -> [f64; 3] {
    [
        f64::from(c >> 11) / 31.0,
        f64::from(c >> 5 & 63) / 63.0,
        f64::from(c & 31) / 31.0,
    ]
}

/// Texel `i` (0..16, row-major) of a BC1 colour block; `four` forces the four-colour mode
/// (BC2 and BC3 colour blocks).
fn colour(b: &[u8], i: usize, four: bool) -> [f64; 4] {
    let (c0, c1) = (le16(b, 0), le16(b, 2));
    let index = (u32::from_le_bytes([b[4], b[5], b[6], b[7]]) >> (2 * i)) & 3;
    let (e0, e1) = (rgb565(c0), rgb565(c1));
    let mix = |w0: f64, w1: f64, d: f64| -> [f64; 4] {
        [
            (w0 * e0[0] + w1 * e1[0]) / d,
            (w0 * e0[1] + w1 * e1[1]) / d,
            (w0 * e0[2] + w1 * e1[2]) / d,
            1.0,
        ]
    };
    match (index, four || c0 > c1) {
        (0, _) => mix(1.0, 0.0, 1.0),
        (1, _) => mix(0.0, 1.0, 1.0),
        (2, true) => mix(2.0, 1.0, 3.0),
        (3, true) => mix(1.0, 2.0, 3.0),
        (2, false) => mix(1.0, 1.0, 2.0),
        // Three-colour mode: index 3 is transparent black.
        _ => [0.0; 4],
    }
}

/// Texel `i` of an 8-byte interpolated single-channel block (BC3 alpha, BC4, BC5).
fn channel(b: &[u8], i: usize, signed: bool) -> f64 {
    let index = (le64(b, 0) >> 16 >> (3 * i)) & 7;
    let (e0, e1) = if signed {
        // -128 reads as -1, as -127 does.
        let v = |x: u8| (f64::from(x as i8) / 127.0).max(-1.0);
        (v(b[0]), v(b[1]))
    } else {
        (f64::from(b[0]) / 255.0, f64::from(b[1]) / 255.0)
    };
    let larger_first = if signed {
        (b[0] as i8) > (b[1] as i8)
    } else {
        b[0] > b[1]
    };
    let i = index as f64;
    match index {
        0 => e0,
        1 => e1,
        _ if larger_first => ((8.0 - i) * e0 + (i - 1.0) * e1) / 7.0,
        6 => {
            if signed {
                -1.0
            } else {
                0.0
            }
        }
        7 => 1.0,
        _ => ((6.0 - i) * e0 + (i - 1.0) * e1) / 5.0,
    }
}

/// Texel (`x`, `y`) (each 0..4) of `block` (8 or 16 bytes, as [`Bc::block_bytes`]) as red,
/// green, blue and alpha (what an unsigned or signed normalised read gives, before any sRGB
/// conversion of red, green and blue).
pub fn decode(kind: Bc, block: &[u8], x: usize, y: usize) -> [f32; 4] {
    let i = (y & 3) * 4 + (x & 3);
    let v = match kind {
        Bc::Bc1 => colour(block, i, false),
        Bc::Bc2 => {
            let a = (le64(block, 0) >> (4 * i)) & 15;
            let mut c = colour(&block[8..], i, true);
            c[3] = a as f64 / 15.0;
            c
        }
        Bc::Bc3 => {
            let mut c = colour(&block[8..], i, true);
            c[3] = channel(block, i, false);
            c
        }
        Bc::Bc4 | Bc::Bc4Signed => [channel(block, i, kind == Bc::Bc4Signed), 0.0, 0.0, 1.0],
        Bc::Bc5 | Bc::Bc5Signed => {
            let s = kind == Bc::Bc5Signed;
            [channel(block, i, s), channel(&block[8..], i, s), 0.0, 1.0]
        }
    };
    v.map(|c| c as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bc1_modes_and_the_punch_through_black() {
        // c0 = white (0xffff) > c1 = black: four colours 1, 0, 2/3, 1/3.
        let mut b = [0xff, 0xff, 0, 0, 0, 0, 0, 0];
        // Texels 0..4: indices 0, 1, 2, 3.
        b[4] = 0b11_10_01_00;
        let r = |b: &[u8], x| decode(Bc::Bc1, b, x, 0)[0];
        assert_eq!([r(&b, 0), r(&b, 1), r(&b, 2), r(&b, 3)], [1.0, 0.0, (2.0f64 / 3.0) as f32, (1.0f64 / 3.0) as f32]);
        // Swapped endpoints: three colours and transparent black.
        b[..4].copy_from_slice(&[0, 0, 0xff, 0xff]);
        assert_eq!(decode(Bc::Bc1, &b, 2, 0), [0.5, 0.5, 0.5, 1.0]);
        assert_eq!(decode(Bc::Bc1, &b, 3, 0), [0.0; 4]);
    }

    #[test]
    fn interpolated_channels_have_eight_or_six_entries() {
        // e0 = 255 > e1 = 0: index 2 is 6/7.
        let b = [255, 0, 0b1001_0000 | 2, 0, 0, 0, 0, 0];
        assert_eq!(decode(Bc::Bc4, &b, 0, 0)[0], (6.0f64 / 7.0) as f32);
        // e0 = 0 < e1 = 255: 6 is 0, 7 is 1, index 2 is 1/5.
        let b = [0, 255, 0b0011_1110, 0, 0, 0, 0, 0];
        let t = |x| decode(Bc::Bc4, &b, x, 0)[0];
        assert_eq!((t(0), t(1)), (0.0, 1.0));
        let b = [0, 255, 2, 0, 0, 0, 0, 0];
        assert_eq!(decode(Bc::Bc4, &b, 0, 0)[0], (1.0f64 / 5.0) as f32);
        // Signed: -128 reads as -1.
        let b = [0x80, 0x7f, 0, 0, 0, 0, 0, 0];
        assert_eq!(decode(Bc::Bc4Signed, &b, 0, 0)[0], -1.0);
    }
}
