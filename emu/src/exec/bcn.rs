//! Block-compressed texels (BC1 to BC7): one 4x4 block of 8 or 16 bytes decoded to the texel
//! a sample asks for, as the texture unit does before filtering. Written from the public
//! format descriptions (Microsoft's Direct3D block-compression documentation, the Khronos Data
//! Format Specification's S3TC and RGTC chapters, and ARB_texture_compression_bptc for BC6H
//! and BC7: its mode, layout, partition and anchor tables), facts only.
//!
//! Precision: BC1-BC5 endpoints are expanded to their exact values (`v / 31`, `v / 63`,
//! `v / 255`, `v / 127`) and palette entries are the exact weighted means of them, rounded to
//! f32 once. A GPU interpolates in fixed point (the Direct3D specification allows a small
//! error), so the last bits of interpolated entries may differ from a GPU's. BC6H and BC7 are
//! bit-exact by their specification (integer interpolation with 6-bit weights): BC7 gives
//! 8-bit channels read as unorm (`v / 255`), BC6H half floats read as f32. Not a decoder of
//! whole images, and never an encoder.

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
    /// RGB half floats, unsigned (BC6H_UF16): 14 modes of one or two subsets.
    Bc6h,
    /// RGB half floats, signed (BC6H_SF16).
    Bc6hSigned,
    /// RGBA, 8 bits a channel: 8 modes of one to three subsets.
    Bc7,
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
/// conversion of red, green and blue; BC6H's half floats and alpha 1).
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
        Bc::Bc6h | Bc::Bc6hSigned => {
            let h = bc6h(block, i, kind == Bc::Bc6hSigned);
            let f = |c: u16| f64::from(half::f16::from_bits(c).to_f32());
            [f(h[0]), f(h[1]), f(h[2]), 1.0]
        }
        Bc::Bc7 => bc7(block, i).map(|c| f64::from(c) / 255.0),
    };
    v.map(|c| c as f32)
}

// ---------------------------------------------------------------- BC6H and BC7 (BPTC)

/// The 128 bits of a block, read upwards from bit 0 of byte 0.
struct Bits {
    v: u128,
    at: u32,
}

impl Bits {
    fn new(b: &[u8]) -> Bits {
        let mut w = [0u8; 16];
        let n = b.len().min(16);
        w[..n].copy_from_slice(&b[..n]);
        Bits {
            v: u128::from_le_bytes(w),
            at: 0,
        }
    }

    /// The next `n` (0..=16) bits; zeros past the end of the block.
    fn take(&mut self, n: u32) -> u32 {
        let v = self.v.checked_shr(self.at).unwrap_or(0) as u32 & ((1u32 << n) - 1);
        self.at += n;
        v
    }
}

/// Interpolation weights (of 64) of 2-, 3- and 4-bit indices.
const WEIGHTS2: [u32; 4] = [0, 21, 43, 64];
const WEIGHTS3: [u32; 8] = [0, 9, 18, 27, 37, 46, 55, 64];
const WEIGHTS4: [u32; 16] = [0, 4, 9, 13, 17, 21, 26, 30, 34, 38, 43, 47, 51, 55, 60, 64];

fn weights(bits: u32) -> &'static [u32] {
    match bits {
        2 => &WEIGHTS2,
        3 => &WEIGHTS3,
        _ => &WEIGHTS4,
    }
}

/// Subsets of the 16 texels (row-major) of each two-subset partition (the BPTC tables,
/// "Table.P2"; BC6H uses the first 32).
const PARTITIONS2: [&str; 64] = [
    "0011001100110011", "0001000100010001", "0111011101110111", "0001001100110111",
    "0000000100010011", "0011011101111111", "0001001101111111", "0000000100110111",
    "0000000000010011", "0011011111111111", "0000000101111111", "0000000000010111",
    "0001011111111111", "0000000011111111", "0000111111111111", "0000000000001111",
    "0000100011101111", "0111000100000000", "0000000010001110", "0111001100010000",
    "0011000100000000", "0000100011001110", "0000000010001100", "0111001100110001",
    "0011000100010000", "0000100010001100", "0110011001100110", "0011011001101100",
    "0001011111101000", "0000111111110000", "0111000110001110", "0011100110011100",
    "0101010101010101", "0000111100001111", "0101101001011010", "0011001111001100",
    "0011110000111100", "0101010110101010", "0110100101101001", "0101101010100101",
    "0111001111001110", "0001001111001000", "0011001001001100", "0011101111011100",
    "0110100110010110", "0011110011000011", "0110011010011001", "0000011001100000",
    "0100111001000000", "0010011100100000", "0000001001110010", "0000010011100100",
    "0110110010010011", "0011011011001001", "0110001110011100", "0011100111000110",
    "0110110011001001", "0110001100111001", "0111111010000001", "0001100011100111",
    "0000111100110011", "0011001111110000", "0010001011101110", "0100010001110111",
];

/// Subsets of each three-subset partition ("Table.P3").
const PARTITIONS3: [&str; 64] = [
    "0011001102212222", "0001001122112221", "0000200122112211", "0222002200110111",
    "0000000011221122", "0011001100220022", "0022002211111111", "0011001122112211",
    "0000000011112222", "0000111111112222", "0000111122222222", "0012001200120012",
    "0112011201120112", "0122012201220122", "0011011211221222", "0011200122002220",
    "0001001101121122", "0111001120012200", "0000112211221122", "0022002200221111",
    "0111011102220222", "0001000122212221", "0000001101220122", "0000110022102210",
    "0122012200110000", "0012001211222222", "0110122112210110", "0000011012211221",
    "0022110211020022", "0110011020022222", "0011012201220011", "0000200022112221",
    "0000000211221222", "0222002200120011", "0011001200220222", "0120012001200120",
    "0000111122220000", "0120120120120120", "0120201212010120", "0011220011220011",
    "0011112222000011", "0101010122222222", "0000000021212121", "0022112200221122",
    "0022001100220011", "0220122102201221", "0101222222220101", "0000212121212121",
    "0101010101012222", "0222011102220111", "0002111200021112", "0000211221122112",
    "0222011101110222", "0002111211120002", "0110011001102222", "0000000021122112",
    "0110011022222222", "0022001100110022", "0022112211220022", "0000000000002112",
    "0002000100020001", "0222122202221222", "0101222222222222", "0111201122012220",
];

/// Anchor texel of the second subset of two-subset partitions ("Table.A2").
const ANCHOR2: [u8; 64] = [
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, //
    15, 2, 8, 2, 2, 8, 8, 15, 2, 8, 2, 2, 8, 8, 2, 2, //
    15, 15, 6, 8, 2, 8, 15, 15, 2, 8, 2, 2, 2, 15, 15, 6, //
    6, 2, 6, 8, 15, 15, 2, 2, 15, 15, 15, 15, 15, 2, 2, 15,
];

/// Anchor texels of the second and third subsets of three-subset partitions ("Table.A3a",
/// "Table.A3b").
const ANCHOR3: [[u8; 64]; 2] = [
    [
        3, 3, 15, 15, 8, 3, 15, 15, 8, 8, 6, 6, 6, 5, 3, 3, //
        3, 3, 8, 15, 3, 3, 6, 10, 5, 8, 8, 6, 8, 5, 15, 15, //
        8, 15, 3, 5, 6, 10, 8, 15, 15, 3, 15, 5, 15, 15, 15, 15, //
        3, 15, 5, 5, 5, 8, 5, 10, 5, 10, 8, 13, 15, 12, 3, 3,
    ],
    [
        15, 8, 8, 3, 15, 15, 3, 8, 15, 15, 15, 15, 15, 15, 15, 8, //
        15, 8, 15, 3, 15, 8, 15, 8, 3, 15, 6, 10, 15, 15, 10, 8, //
        15, 3, 15, 10, 10, 8, 9, 10, 6, 15, 8, 15, 3, 6, 6, 8, //
        15, 3, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 3, 15, 15, 8,
    ],
];

/// The subset of texel `i` and whether it is its subset's anchor (whose index has one bit
/// fewer), for `subsets` (1..=3) and a partition number.
fn subset(subsets: u32, partition: usize, i: usize) -> (usize, bool) {
    let p = partition & 63;
    let s = match subsets {
        2 => usize::from(PARTITIONS2[p].as_bytes()[i] - b'0'),
        3 => usize::from(PARTITIONS3[p].as_bytes()[i] - b'0'),
        _ => 0,
    };
    let anchor = match (subsets, s) {
        (_, 0) => 0,
        (2, _) => ANCHOR2[p],
        (_, s) => ANCHOR3[s - 1][p],
    };
    (s, usize::from(anchor) == i)
}

/// The index of texel `i` among 16 indices of `bits` each (less one for anchors) that start
/// at bit `at`; `anchor(t)` says whether texel `t` is an anchor.
fn index(block: &Bits, at: u32, bits: u32, i: usize, anchor: impl Fn(usize) -> bool) -> u32 {
    let mut r = Bits { v: block.v, at };
    for t in 0..i {
        r.take(bits - u32::from(anchor(t)));
    }
    r.take(bits - u32::from(anchor(i)))
}

/// One BC7 mode ("Table.M"): subsets, partition, rotation and index-selection bits, colour and
/// alpha bits, per-endpoint and shared P-bits, primary and secondary index bits.
struct Bc7Mode {
    ns: u32,
    pb: u32,
    rb: u32,
    isb: u32,
    cb: u32,
    ab: u32,
    epb: u32,
    spb: u32,
    ib: u32,
    ib2: u32,
}

const fn m7(v: [u32; 10]) -> Bc7Mode {
    Bc7Mode {
        ns: v[0],
        pb: v[1],
        rb: v[2],
        isb: v[3],
        cb: v[4],
        ab: v[5],
        epb: v[6],
        spb: v[7],
        ib: v[8],
        ib2: v[9],
    }
}

const BC7_MODES: [Bc7Mode; 8] = [
    m7([3, 4, 0, 0, 4, 0, 1, 0, 3, 0]),
    m7([2, 6, 0, 0, 6, 0, 0, 1, 3, 0]),
    m7([3, 6, 0, 0, 5, 0, 0, 0, 2, 0]),
    m7([2, 6, 0, 0, 7, 0, 1, 0, 2, 0]),
    m7([1, 0, 2, 1, 5, 6, 0, 0, 2, 3]),
    m7([1, 0, 2, 0, 7, 8, 0, 0, 2, 2]),
    m7([1, 0, 0, 0, 7, 7, 1, 0, 4, 0]),
    m7([2, 6, 0, 0, 5, 5, 1, 0, 2, 0]),
];

/// A `bits`-bit (4..=8) endpoint channel as 8 bits: its top bits repeated below it.
fn widen(v: u32, bits: u32) -> u32 {
    ((v << (8 - bits)) | (v >> (2 * bits - 8))) & 0xff
}

/// `(64 - w) * a + w * b`, rounded, over 64.
fn lerp(a: i32, b: i32, w: u32) -> i32 {
    let w = w as i32;
    (a * (64 - w) + b * w + 32) >> 6
}

/// Texel `i` of a BC7 block as 8-bit red, green, blue and alpha. The reserved mode (a zero
/// first byte) decodes as zero in every channel, as Direct3D specifies.
fn bc7(block: &[u8], i: usize) -> [u8; 4] {
    let mut r = Bits::new(block);
    let mode = (r.v as u8).trailing_zeros();
    let Some(m) = BC7_MODES.get(mode as usize) else {
        return [0; 4];
    };
    r.take(mode + 1);
    let partition = r.take(m.pb) as usize;
    let rotation = r.take(m.rb);
    let selection = r.take(m.isb);
    let ends = 2 * m.ns as usize;
    // Endpoints: subset s has 2s and 2s + 1; channels red, green, blue, alpha.
    let mut e = [[0u32; 4]; 6];
    for c in 0..4 {
        let bits = if c < 3 { m.cb } else { m.ab };
        for end in &mut e[..ends] {
            end[c] = r.take(bits);
        }
    }
    let (mut cb, mut ab) = (m.cb, m.ab);
    if m.epb + m.spb > 0 {
        // Per-endpoint P-bits, or one shared by a subset's two endpoints.
        let mut p = 0;
        for (k, end) in e[..ends].iter_mut().enumerate() {
            if m.epb > 0 || k % 2 == 0 {
                p = r.take(1);
            }
            for ch in end.iter_mut() {
                *ch = *ch << 1 | p;
            }
        }
        cb += 1;
        ab += u32::from(ab > 0);
    }
    for end in &mut e[..ends] {
        for ch in &mut end[..3] {
            *ch = widen(*ch, cb);
        }
        end[3] = if ab > 0 { widen(end[3], ab) } else { 255 };
    }
    let (s, _) = subset(m.ns, partition, i);
    let anchor = |t: usize| subset(m.ns, partition, t).1;
    let primary_at = r.at;
    let primary = index(&r, primary_at, m.ib, i, anchor);
    let (colour, alpha) = if m.ib2 == 0 {
        ((primary, m.ib), (primary, m.ib))
    } else {
        // The secondary indices (one subset: texel 0 is the only anchor).
        let secondary = index(&r, primary_at + 16 * m.ib - 1, m.ib2, i, |t| t == 0);
        if selection == 0 {
            ((primary, m.ib), (secondary, m.ib2))
        } else {
            ((secondary, m.ib2), (primary, m.ib))
        }
    };
    let (e0, e1) = (e[2 * s], e[2 * s + 1]);
    let mut out = [0u8; 4];
    for c in 0..4 {
        let (idx, bits) = if c < 3 { colour } else { alpha };
        let w = weights(bits)[idx as usize];
        out[c] = lerp(e0[c] as i32, e1[c] as i32, w) as u8;
    }
    if rotation > 0 {
        out.swap(3, rotation as usize - 1);
    }
    out
}

/// One BC6H mode ("Table.MF", "Table.F"): its mode number (2 or 5 low bits), whether the
/// endpoints after the first are deltas, endpoint bits, delta bits of red, green and blue, and
/// where the block's bits go (`v[a:b]`: the next bits into bits b towards a of `v`).
struct Bc6Mode {
    number: u32,
    transformed: bool,
    epb: u32,
    delta: [u32; 3],
    layout: &'static str,
}

const fn m6(number: u32, transformed: bool, epb: u32, delta: [u32; 3], layout: &'static str) -> Bc6Mode {
    Bc6Mode {
        number,
        transformed,
        epb,
        delta,
        layout,
    }
}

/// The two-subset modes (5 partition bits follow the layout, then 3-bit indices) and the
/// one-subset modes (no partition, 4-bit indices).
const BC6_MODES: [Bc6Mode; 14] = [
    m6(0, true, 10, [5, 5, 5], "m[1:0],g2[4],b2[4],b3[4],r0[9:0],g0[9:0],b0[9:0],r1[4:0],g3[4],g2[3:0],g1[4:0],b3[0],g3[3:0],b1[4:0],b3[1],b2[3:0],r2[4:0],b3[2],r3[4:0],b3[3]"),
    m6(1, true, 7, [6, 6, 6], "m[1:0],g2[5],g3[4],g3[5],r0[6:0],b3[0],b3[1],b2[4],g0[6:0],b2[5],b3[2],g2[4],b0[6:0],b3[3],b3[5],b3[4],r1[5:0],g2[3:0],g1[5:0],g3[3:0],b1[5:0],b2[3:0],r2[5:0],r3[5:0]"),
    m6(2, true, 11, [5, 4, 4], "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[4:0],r0[10],g2[3:0],g1[3:0],g0[10],b3[0],g3[3:0],b1[3:0],b0[10],b3[1],b2[3:0],r2[4:0],b3[2],r3[4:0],b3[3]"),
    m6(6, true, 11, [4, 5, 4], "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[3:0],r0[10],g3[4],g2[3:0],g1[4:0],g0[10],g3[3:0],b1[3:0],b0[10],b3[1],b2[3:0],r2[3:0],b3[0],b3[2],r3[3:0],g2[4],b3[3]"),
    m6(10, true, 11, [4, 4, 5], "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[3:0],r0[10],b2[4],g2[3:0],g1[3:0],g0[10],b3[0],g3[3:0],b1[4:0],b0[10],b2[3:0],r2[3:0],b3[1],b3[2],r3[3:0],b3[4],b3[3]"),
    m6(14, true, 9, [5, 5, 5], "m[4:0],r0[8:0],b2[4],g0[8:0],g2[4],b0[8:0],b3[4],r1[4:0],g3[4],g2[3:0],g1[4:0],b3[0],g3[3:0],b1[4:0],b3[1],b2[3:0],r2[4:0],b3[2],r3[4:0],b3[3]"),
    m6(18, true, 8, [6, 5, 5], "m[4:0],r0[7:0],g3[4],b2[4],g0[7:0],b3[2],g2[4],b0[7:0],b3[3],b3[4],r1[5:0],g2[3:0],g1[4:0],b3[0],g3[3:0],b1[4:0],b3[1],b2[3:0],r2[5:0],r3[5:0]"),
    m6(22, true, 8, [5, 6, 5], "m[4:0],r0[7:0],b3[0],b2[4],g0[7:0],g2[5],g2[4],b0[7:0],g3[5],b3[4],r1[4:0],g3[4],g2[3:0],g1[5:0],g3[3:0],b1[4:0],b3[1],b2[3:0],r2[4:0],b3[2],r3[4:0],b3[3]"),
    m6(26, true, 8, [5, 5, 6], "m[4:0],r0[7:0],b3[1],b2[4],g0[7:0],b2[5],g2[4],b0[7:0],b3[5],b3[4],r1[4:0],g3[4],g2[3:0],g1[4:0],b3[0],g3[3:0],b1[5:0],b2[3:0],r2[4:0],b3[2],r3[4:0],b3[3]"),
    m6(30, false, 6, [6, 6, 6], "m[4:0],r0[5:0],g3[4],b3[0],b3[1],b2[4],g0[5:0],g2[5],b2[5],b3[2],g2[4],b0[5:0],g3[5],b3[3],b3[5],b3[4],r1[5:0],g2[3:0],g1[5:0],g3[3:0],b1[5:0],b2[3:0],r2[5:0],r3[5:0]"),
    m6(3, false, 10, [10, 10, 10], "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[9:0],g1[9:0],b1[9:0]"),
    m6(7, true, 11, [9, 9, 9], "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[8:0],r0[10],g1[8:0],g0[10],b1[8:0],b0[10]"),
    m6(11, true, 12, [8, 8, 8], "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[7:0],r0[10:11],g1[7:0],g0[10:11],b1[7:0],b0[10:11]"),
    m6(15, true, 16, [4, 4, 4], "m[4:0],r0[9:0],g0[9:0],b0[9:0],r1[3:0],r0[10:15],g1[3:0],g0[10:15],b1[3:0],b0[10:15]"),
];

/// `v`'s low `bits` bits as a two's-complement number.
fn sign_extend(v: i32, bits: u32) -> i32 {
    let shift = 32 - bits.clamp(1, 32);
    (v << shift) >> shift
}

/// An endpoint channel of `bits` bits widened to 16 (unsigned) or 16 signed bits.
fn bc6_unquantize(x: i32, bits: u32, signed: bool) -> i32 {
    if !signed {
        if bits >= 15 || x == 0 {
            x
        } else if x == (1 << bits) - 1 {
            0xffff
        } else {
            ((x << 15) + 0x4000) >> (bits - 1)
        }
    } else if bits >= 16 {
        x
    } else {
        let m = x.abs();
        let q = if m == 0 {
            0
        } else if m >= (1 << (bits - 1)) - 1 {
            0x7fff
        } else {
            ((m << 15) + 0x4000) >> (bits - 1)
        };
        if x < 0 {
            -q
        } else {
            q
        }
    }
}

/// Texel `i` of a BC6H block as red, green and blue half floats. Reserved modes decode as
/// zeros (the specification's (0, 0, 0, 1) with the alpha of every BC6H texel).
// Channels index the endpoints and the delta bits at once; a range says so more plainly.
#[allow(clippy::needless_range_loop)]
fn bc6h(block: &[u8], i: usize, signed: bool) -> [u16; 3] {
    let mut r = Bits::new(block);
    let low = r.v as u32;
    let number = if low & 3 < 2 { low & 3 } else { low & 31 };
    let Some(m) = BC6_MODES.iter().find(|m| m.number == number) else {
        return [0; 3];
    };
    // e[k][c]: endpoint k (subset k / 2), channel c.
    let mut e = [[0i32; 3]; 4];
    for field in m.layout.split(',') {
        let (name, range) = field.split_once('[').unwrap_or((field, "0]"));
        let range = range.trim_end_matches(']');
        let (a, b) = range.split_once(':').unwrap_or((range, range));
        let (a, b): (i32, i32) = (a.parse().unwrap_or(0), b.parse().unwrap_or(0));
        let n = (a - b).unsigned_abs() + 1;
        let step = if a >= b { 1 } else { -1 };
        let target = match name.as_bytes() {
            [c @ (b'r' | b'g' | b'b'), k @ b'0'..=b'3'] => {
                let c = match c {
                    b'r' => 0,
                    b'g' => 1,
                    _ => 2,
                };
                Some((usize::from(k - b'0'), c))
            }
            _ => None, // the mode bits
        };
        for j in 0..n as i32 {
            let bit = r.take(1) as i32;
            if let Some((k, c)) = target {
                e[k][c] |= bit << (b + j * step);
            }
        }
    }
    let two = m.number < 2 || m.number & 3 == 2;
    let partition = if two { r.take(5) as usize } else { 0 };
    let ends = if two { 4 } else { 2 };
    let mask = (1i32 << m.epb) - 1;
    for c in 0..3 {
        if signed {
            e[0][c] = sign_extend(e[0][c], m.epb);
        }
        for k in 1..ends {
            if signed || m.transformed {
                e[k][c] = sign_extend(e[k][c], m.delta[c]);
            }
            if m.transformed {
                e[k][c] = (e[0][c] + e[k][c]) & mask;
                if signed {
                    e[k][c] = sign_extend(e[k][c], m.epb);
                }
            }
        }
    }
    let subsets = if two { 2 } else { 1 };
    let (s, _) = subset(subsets, partition, i);
    let bits = if two { 3 } else { 4 };
    let idx = index(&r, r.at, bits, i, |t| subset(subsets, partition, t).1);
    let w = weights(bits)[idx as usize];
    let mut out = [0u16; 3];
    for c in 0..3 {
        let q = |k: usize| bc6_unquantize(e[k][c], m.epb, signed);
        let v = lerp(q(2 * s), q(2 * s + 1), w);
        out[c] = if !signed {
            ((v * 31) >> 6) as u16
        } else if v < 0 {
            (((-v * 31) >> 5) | 0x8000) as u16
        } else {
            ((v * 31) >> 5) as u16
        };
    }
    out
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

    /// Random 16-byte blocks (a fixed xorshift sequence), `n` for each value of `force`.
    fn random_blocks(n: usize, forces: &[fn(&mut [u8; 16])]) -> Vec<[u8; 16]> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut out = Vec::new();
        for force in forces {
            for _ in 0..n {
                let mut b = [0u8; 16];
                for byte in &mut b {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    *byte = (x >> 24) as u8;
                }
                force(&mut b);
                out.push(b);
            }
        }
        out
    }

    /// The venv's python (`scripts/setup.sh` installs Pillow and imagecodecs there), or
    /// `None`, printing why, outside CI.
    fn reference_python() -> Option<std::path::PathBuf> {
        let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/pyenv/bin/python");
        let usable = python.is_file()
            && std::process::Command::new(&python)
                .args(["-c", "import PIL, imagecodecs"])
                .status()
                .is_ok_and(|s| s.success());
        if usable {
            return Some(python);
        }
        let why = format!("{} with Pillow and imagecodecs is missing (scripts/setup.sh installs them)", python.display());
        assert!(std::env::var_os("CI").is_none(), "{why} but CI is set");
        eprintln!("skipped: {why}");
        None
    }

    /// The reference decoder's texels (`emu/tests/bcn_reference.py`) of `blocks`.
    fn reference(python: &std::path::Path, kind: &str, blocks: &[[u8; 16]]) -> Vec<u8> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bcn_reference.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(kind)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("run the reference decoder");
        let input: Vec<u8> = blocks.concat();
        let mut stdin = child.stdin.take().expect("stdin");
        let feeder = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().expect("reference decoder output");
        feeder.join().expect("feeder").expect("write blocks");
        assert!(out.status.success(), "reference decoder {kind} failed");
        out.stdout
    }

    /// Forces BC6H mode number `N` (2 or 5 low bits) onto a random block.
    fn bc6_mode<const N: u8>(b: &mut [u8; 16]) {
        let bits = if N < 2 { 3 } else { 31 };
        b[0] = b[0] & !bits | N;
    }

    /// Forces BC7 mode `N` (N zeros, then a one) onto a random block.
    fn bc7_mode<const N: u8>(b: &mut [u8; 16]) {
        let low = (2u16 << N) - 1;
        b[0] = (u16::from(b[0]) & !low | 1 << N) as u8;
    }

    #[test]
    fn bc6h_matches_an_independent_decoder_in_every_mode() {
        let Some(python) = reference_python() else {
            return;
        };
        // The 14 modes and the 4 reserved ones (19, 23, 27, 31).
        let forces: [fn(&mut [u8; 16]); 18] = [
            bc6_mode::<0>, bc6_mode::<1>, bc6_mode::<2>, bc6_mode::<6>, bc6_mode::<10>, bc6_mode::<14>,
            bc6_mode::<18>, bc6_mode::<22>, bc6_mode::<26>, bc6_mode::<30>, bc6_mode::<3>, bc6_mode::<7>,
            bc6_mode::<11>, bc6_mode::<15>, bc6_mode::<19>, bc6_mode::<23>, bc6_mode::<27>, bc6_mode::<31>,
        ];
        let blocks = random_blocks(200, &forces);
        for (kind, name) in [(Bc::Bc6h, "bc6h"), (Bc::Bc6hSigned, "bc6hs")] {
            let want = reference(&python, name, &blocks);
            assert_eq!(want.len(), blocks.len() * 16 * 6, "{name}: reference output size");
            let mut wrong = 0;
            for (k, b) in blocks.iter().enumerate() {
                for i in 0..16 {
                    let got = bc6h(b, i, kind == Bc::Bc6hSigned);
                    let at = (k * 16 + i) * 6;
                    let w = |c: usize| u16::from_le_bytes([want[at + 2 * c], want[at + 2 * c + 1]]);
                    let want = [w(0), w(1), w(2)];
                    if got != want {
                        wrong += 1;
                        if wrong <= 5 {
                            eprintln!("{name} block {k} ({b:02x?}) texel {i}: {got:04x?}, reference {want:04x?}");
                        }
                    }
                }
            }
            assert_eq!(wrong, 0, "{name}: texels that differ from the reference");
            // decode() reads the same halves as f32.
            let b = &blocks[3];
            let h = bc6h(b, 5, kind == Bc::Bc6hSigned);
            let f = decode(kind, b, 1, 1);
            assert_eq!(f[..3], h.map(|c| half::f16::from_bits(c).to_f32()), "{name}: decode()");
            assert_eq!(f[3], 1.0);
        }
    }

    #[test]
    fn bc7_matches_independent_decoders_in_every_mode() {
        let Some(python) = reference_python() else {
            return;
        };
        let forces: [fn(&mut [u8; 16]); 8] = [
            bc7_mode::<0>, bc7_mode::<1>, bc7_mode::<2>, bc7_mode::<3>, bc7_mode::<4>, bc7_mode::<5>,
            bc7_mode::<6>, bc7_mode::<7>,
        ];
        let blocks = random_blocks(300, &forces);
        for name in ["bc7-pillow", "bc7-imagecodecs"] {
            let want = reference(&python, name, &blocks);
            assert_eq!(want.len(), blocks.len() * 16 * 4, "{name}: reference output size");
            for (k, b) in blocks.iter().enumerate() {
                for i in 0..16 {
                    let at = (k * 16 + i) * 4;
                    assert_eq!(
                        bc7(b, i)[..],
                        want[at..at + 4],
                        "{name} block {k} ({b:02x?}, mode {}) texel {i}",
                        b[0].trailing_zeros()
                    );
                }
            }
        }
        let b = &blocks[1000];
        assert_eq!(decode(Bc::Bc7, b, 2, 3), bc7(b, 14).map(|c| (f64::from(c) / 255.0) as f32));
    }

    #[test]
    fn reserved_and_short_bptc_blocks_decode_without_panicking() {
        // BC7's reserved mode (no mode bit in the first byte) is zero in every channel (Direct3D);
        // BC6H's reserved modes (19, 23, 27, 31) are (0, 0, 0, 1) (ARB_texture_compression_bptc).
        let mut b = [0xffu8; 16];
        b[0] = 0;
        assert_eq!(decode(Bc::Bc7, &b, 1, 2), [0.0; 4]);
        for mode in [19, 23, 27, 31] {
            b[0] = mode;
            assert_eq!(decode(Bc::Bc6h, &b, 3, 3), [0.0, 0.0, 0.0, 1.0]);
            assert_eq!(decode(Bc::Bc6hSigned, &b, 0, 0), [0.0, 0.0, 0.0, 1.0]);
        }
        // A short slice reads as zero bits past its end.
        assert_eq!(bc7(&[0x40], 0), [0, 0, 0, 0]);
        assert_eq!(bc6h(&[], 15, true), [0; 3]);
    }
}
