//! CDNA's accumulation registers and matrix instructions: `v_accvgpr_read/write/mov` (32-bit
//! moves between VGPRs and AGPRs, which lowering places after the VGPRs in the wave's vector
//! file) and every `v_mfma_*` of gfx90a and gfx942: `D = A * B + C` on blocks of small
//! matrices held across the wave's 64 lanes, with the operand layouts of AMD's matrix
//! instruction documentation (the Matrix Instruction Calculator's register layouts, which the
//! formulas here reproduce for every instruction; see [`a_place`] and [`d_place`]), the
//! CBSZ/ABID broadcast of A blocks, the BLGP lane patterns of B (on gfx940's f64 forms the
//! BLGP bits negate A, B and C instead), and the element types f32, xf32, f16, bf16, i8,
//! fp8/bf8 (gfx940's FNUZ formats) and f64.
//!
//! Products are exact and summed in f64, then rounded once to the f32 result (f64 forms fuse
//! each step; i32 forms wrap), and every lane is read and written whatever EXEC says. Neither
//! was checked on hardware. Not for the packed-math VALU (`super::valu`).

use super::{Ctl, Env, Fault, Handler, Opnd, Uop};
use crate::isa::Op;
use crate::wave::Wave;

type R = Ctl;

/// A matrix element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    /// IEEE binary32.
    F32,
    /// gfx940's xf32: an f32 register whose value is taken to 10 fraction bits (round to
    /// nearest even).
    Xf32,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// Signed 8-bit integer.
    I8,
    /// gfx940's fp8: E4M3 with exponent bias 8, no infinities or negative zero, 0x80 NaN.
    Fp8,
    /// gfx940's bf8: E5M2 with exponent bias 16, no infinities or negative zero, 0x80 NaN.
    Bf8,
    /// IEEE binary64.
    F64,
}

impl Elem {
    /// Bits an element takes in a register.
    pub const fn bits(self) -> usize {
        match self {
            Elem::F32 | Elem::Xf32 => 32,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::I8 | Elem::Fp8 | Elem::Bf8 => 8,
            Elem::F64 => 64,
        }
    }

    /// The value of the element `raw` (its low `bits()` bits).
    pub fn value(self, raw: u64) -> f64 {
        match self {
            Elem::F32 => f64::from(f32::from_bits(raw as u32)),
            Elem::Xf32 => f64::from(xf32(f32::from_bits(raw as u32))),
            Elem::F16 => f64::from(half::f16::from_bits(raw as u16).to_f32()),
            Elem::Bf16 => f64::from(f32::from_bits((raw as u32 & 0xffff) << 16)),
            Elem::I8 => f64::from(raw as u8 as i8),
            Elem::Fp8 => fnuz8(raw as u8, 3, 8),
            Elem::Bf8 => fnuz8(raw as u8, 2, 16),
            Elem::F64 => f64::from_bits(raw),
        }
    }
}

/// An f32 rounded to 10 fraction bits (nearest, ties to even); NaN and infinity unchanged.
fn xf32(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    let b = x.to_bits();
    let round = 0xfff + (b >> 13 & 1);
    f32::from_bits(b.wrapping_add(round) & !0x1fff)
}

/// An 8-bit float of gfx940's "FNUZ" kind: `mbits` fraction bits, exponent bias `bias`,
/// 0x80 the only NaN, no infinities.
fn fnuz8(b: u8, mbits: u32, bias: i32) -> f64 {
    if b == 0x80 {
        return f64::NAN;
    }
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = i32::from(b & 0x7f) >> mbits;
    let m = f64::from(u32::from(b) & ((1 << mbits) - 1));
    let scale = f64::from(1u32 << mbits);
    let v = if e == 0 {
        m / scale * 2f64.powi(1 - bias)
    } else {
        (1.0 + m / scale) * 2f64.powi(e - bias)
    };
    sign * v
}

/// What D holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Out {
    /// f32.
    F32,
    /// i32 (wrapping sums).
    I32,
    /// f64.
    F64,
}

/// One matrix instruction's shape: `blocks` independent `m x n x k` products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Rows of A, C and D.
    pub m: usize,
    /// Columns of B, C and D.
    pub n: usize,
    /// Columns of A, rows of B.
    pub k: usize,
    /// Independent products.
    pub blocks: usize,
    /// A's element type.
    pub a: Elem,
    /// B's element type.
    pub b: Elem,
    /// Registers A (and B) take per lane.
    pub regs: usize,
    /// D's type.
    pub out: Out,
    /// gfx940's f64 forms: the BLGP bits negate A (bit 0), B (bit 1) and C (bit 2).
    pub blgp_negates: bool,
}

impl Shape {
    /// Elements of A each lane holds.
    pub const fn per_lane(&self) -> usize {
        self.regs * 32 / self.a.bits()
    }
}

/// Where element `(i, k)` of block `b` of A lies (and element `(k, j)` of B, with `j` for
/// `i`): (register, lane, bit offset in the register).
pub fn a_place(s: &Shape, i: usize, k: usize, b: usize) -> (usize, usize, usize) {
    let kpl = s.per_lane();
    let lane = i + s.m * b + s.m * s.blocks * (k / kpl);
    let bit = (k % kpl) * s.a.bits();
    (bit / 32, lane, bit % 32)
}

/// Where element `(i, j)` of block `b` of C and D lies: (register, lane); 64-bit results
/// take the register and the next.
pub fn d_place(s: &Shape, i: usize, j: usize, b: usize) -> (usize, usize) {
    if s.out == Out::F64 {
        // Lane groups of n * blocks lanes cover the first rows; further rows, further pairs.
        let rows = 64 / (s.n * s.blocks);
        return (2 * (i / rows), j + s.n * b + s.n * s.blocks * (i % rows));
    }
    if s.m == 4 {
        // 4x4 blocks sit side by side in the lanes, one row per register.
        return (i, j + s.n * b);
    }
    // Groups of four rows in four registers, alternating over the lane groups of n lanes;
    // further blocks in further registers.
    let groups = 64 / s.n;
    let reg = 4 * (i / (4 * groups)) + i % 4 + b * (s.m * s.n / 64);
    (reg, j + s.n * ((i / 4) % groups))
}

/// The lane BLGP pattern `p` makes logical lane `l` of B read.
pub fn blgp_lane(p: u8, l: usize) -> usize {
    match p & 7 {
        0 => l,
        1 => l % 32,
        2 => 32 + l % 32,
        3 => (l + 16) % 64,
        4 => l % 16,
        5 => 16 + l % 16,
        6 => 32 + l % 16,
        _ => 48 + l % 16,
    }
}

/// Registers D (and C) take per lane.
pub const fn d_regs(s: &Shape) -> usize {
    let per_lane = s.m * s.n * s.blocks / 64;
    if matches!(s.out, Out::F64) {
        2 * per_lane
    } else {
        per_lane
    }
}

/// The most registers any result takes (32x32x1 with two blocks: 32).
const MAX_D: usize = 32;

/// Runs one matrix instruction of shape `s` on a 64-lane wave.
pub fn mfma<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, s: &Shape) -> R {
    let (Opnd::V(ra), Opnd::V(rb), Opnd::V(rd)) = (u.s[0], u.s[1], u.d[0]) else {
        e.fault = Some(Box::new(Fault::Unsupported));
        return Ctl::Fault;
    };
    if N != 64 {
        e.fault = Some(Box::new(Fault::Unsupported));
        return Ctl::Fault;
    }
    let (ra, rb, rd) = (usize::from(ra), usize::from(rb), usize::from(rd));
    let cbsz = (u.imm & 7) as usize;
    let abid = (u.imm >> 4 & 0xf) as usize;
    let blgp = (u.imm >> 8 & 7) as u8;
    let (neg, pattern) = if s.blgp_negates { (blgp, 0) } else { (0, blgp) };
    let sign = |bit: u8| if neg >> bit & 1 != 0 { -1.0 } else { 1.0 };
    let regs = d_regs(s);
    // Element `raw` of a register pair at (reg, lane) of a source starting at `first`.
    let read = |first: usize, reg: usize, lane: usize, bit: usize, bits: usize| -> u64 {
        let lo = u64::from(w.v[first + reg][lane % N]);
        let v = if bits == 64 {
            lo | u64::from(w.v[first + reg + 1][lane % N]) << 32
        } else {
            lo >> bit
        };
        if bits >= 64 {
            v
        } else {
            v & ((1u64 << bits) - 1)
        }
    };
    // C, as D's layout: registers of src2, or a constant in every element.
    let c_at = |reg: usize, lane: usize| -> u64 {
        match u.s[2] {
            Opnd::V(r) => {
                let lo = u64::from(w.v[usize::from(r) + reg][lane % N]);
                if s.out == Out::F64 {
                    lo | u64::from(w.v[usize::from(r) + reg + 1][lane % N]) << 32
                } else {
                    lo
                }
            }
            o => w.sread64(o),
        }
    };
    let mut out = [[0u32; 64]; MAX_D];
    for b in 0..s.blocks {
        // CBSZ/ABID: a group of 2^cbsz blocks all read A from block abid of the group.
        let ab = if cbsz == 0 {
            b
        } else {
            (b >> cbsz << cbsz) | (abid & ((1 << cbsz) - 1))
        };
        for i in 0..s.m {
            for j in 0..s.n {
                let (reg, lane) = d_place(s, i, j, b);
                let c = c_at(reg, lane);
                let value = match s.out {
                    Out::I32 => {
                        let mut acc = c as u32 as i32;
                        for k in 0..s.k {
                            let (ar, al, abit) = a_place(s, i, k, ab);
                            let (br, bl, bbit) = a_place(s, j, k, b);
                            let x = read(ra, ar, al, abit, 8) as u8 as i8;
                            let y = read(rb, br, blgp_lane(pattern, bl), bbit, 8) as u8 as i8;
                            acc = acc.wrapping_add(i32::from(x) * i32::from(y));
                        }
                        u64::from(acc as u32)
                    }
                    Out::F32 => {
                        let mut acc = 0f64;
                        for k in 0..s.k {
                            let (ar, al, abit) = a_place(s, i, k, ab);
                            let (br, bl, bbit) = a_place(s, j, k, b);
                            let x = s.a.value(read(ra, ar, al, abit, s.a.bits()));
                            let y = s
                                .b
                                .value(read(rb, br, blgp_lane(pattern, bl), bbit, s.b.bits()));
                            acc += x * y;
                        }
                        let c = f64::from(f32::from_bits(c as u32));
                        u64::from(((acc + c) as f32).to_bits())
                    }
                    Out::F64 => {
                        let mut acc = sign(2) * f64::from_bits(c);
                        for k in 0..s.k {
                            let (ar, al, _) = a_place(s, i, k, ab);
                            let (br, bl, _) = a_place(s, j, k, b);
                            let x = sign(0) * f64::from_bits(read(ra, ar, al, 0, 64));
                            let y = sign(1)
                                * f64::from_bits(read(rb, br, blgp_lane(pattern, bl), 0, 64));
                            acc = x.mul_add(y, acc);
                        }
                        acc.to_bits()
                    }
                };
                out[reg][lane] = value as u32;
                if s.out == Out::F64 {
                    out[reg + 1][lane] = (value >> 32) as u32;
                }
            }
        }
    }
    for (r, vals) in out.iter().enumerate().take(regs) {
        if let Some(d) = w.v.get_mut(rd + r) {
            d.copy_from_slice(&vals[..N]);
        }
    }
    Ctl::Next
}

/// `v_accvgpr_read_b32`, `v_accvgpr_write_b32`, `v_accvgpr_mov_b32`: a 32-bit move under
/// EXEC (the source an AGPR, a VGPR, an SGPR or a constant).
pub fn accvgpr_move<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let v = w.vread(u.s[0]);
    let m = w.exec();
    w.vwrite(u.d[0], m, &v);
    Ctl::Next
}

macro_rules! shapes {
    ($( $name:ident => ($m:expr, $n:expr, $k:expr, $blocks:expr, $a:ident, $b:ident, $regs:expr, $out:ident, $neg:expr) ;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`.")]
            pub fn $name<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> R {
                mfma(w, u, e, &Shape {
                    m: $m, n: $n, k: $k, blocks: $blocks, a: Elem::$a, b: Elem::$b,
                    regs: $regs, out: Out::$out, blgp_negates: $neg,
                })
            }
        )*
        /// Every matrix instruction's shape, by operation (for tests and reports).
        #[allow(dead_code)]
        pub const SHAPES: &[(Op, Shape)] = &[$(
            (op!($name), Shape {
                m: $m, n: $n, k: $k, blocks: $blocks, a: Elem::$a, b: Elem::$b,
                regs: $regs, out: Out::$out, blgp_negates: $neg,
            }),
        )*];
        impl<const N: usize> Handlers<N> {
            /// The matrix instructions and AGPR moves.
            pub const TABLE: &'static [(Op, Handler<N>)] = &[
                (op!(v_accvgpr_read_b32), accvgpr_move::<N> as Handler<N>),
                (op!(v_accvgpr_write_b32), accvgpr_move::<N> as Handler<N>),
                (op!(v_accvgpr_mov_b32), accvgpr_move::<N> as Handler<N>),
                $((op!($name), $name::<N> as Handler<N>),)*
            ];
        }
    };
}

/// This module's handlers for `N`-lane waves.
pub struct Handlers<const N: usize>;

shapes! {
    // gfx90a (CDNA2).
    v_mfma_f32_32x32x1f32 => (32, 32, 1, 2, F32, F32, 1, F32, false);
    v_mfma_f32_16x16x1f32 => (16, 16, 1, 4, F32, F32, 1, F32, false);
    v_mfma_f32_4x4x1f32 => (4, 4, 1, 16, F32, F32, 1, F32, false);
    v_mfma_f32_32x32x2f32 => (32, 32, 2, 1, F32, F32, 1, F32, false);
    v_mfma_f32_16x16x4f32 => (16, 16, 4, 1, F32, F32, 1, F32, false);
    v_mfma_f32_32x32x4f16 => (32, 32, 4, 2, F16, F16, 2, F32, false);
    v_mfma_f32_16x16x4f16 => (16, 16, 4, 4, F16, F16, 2, F32, false);
    v_mfma_f32_4x4x4f16 => (4, 4, 4, 16, F16, F16, 2, F32, false);
    v_mfma_f32_32x32x8f16 => (32, 32, 8, 1, F16, F16, 2, F32, false);
    v_mfma_f32_16x16x16f16 => (16, 16, 16, 1, F16, F16, 2, F32, false);
    v_mfma_i32_32x32x4i8 => (32, 32, 4, 2, I8, I8, 1, I32, false);
    v_mfma_i32_16x16x4i8 => (16, 16, 4, 4, I8, I8, 1, I32, false);
    v_mfma_i32_4x4x4i8 => (4, 4, 4, 16, I8, I8, 1, I32, false);
    v_mfma_i32_32x32x8i8 => (32, 32, 8, 1, I8, I8, 1, I32, false);
    v_mfma_i32_16x16x16i8 => (16, 16, 16, 1, I8, I8, 1, I32, false);
    v_mfma_f32_32x32x4bf16_1k => (32, 32, 4, 2, Bf16, Bf16, 2, F32, false);
    v_mfma_f32_16x16x4bf16_1k => (16, 16, 4, 4, Bf16, Bf16, 2, F32, false);
    v_mfma_f32_4x4x4bf16_1k => (4, 4, 4, 16, Bf16, Bf16, 2, F32, false);
    v_mfma_f32_32x32x8bf16_1k => (32, 32, 8, 1, Bf16, Bf16, 2, F32, false);
    v_mfma_f32_16x16x16bf16_1k => (16, 16, 16, 1, Bf16, Bf16, 2, F32, false);
    v_mfma_f32_32x32x2bf16 => (32, 32, 2, 2, Bf16, Bf16, 1, F32, false);
    v_mfma_f32_16x16x2bf16 => (16, 16, 2, 4, Bf16, Bf16, 1, F32, false);
    v_mfma_f32_4x4x2bf16 => (4, 4, 2, 16, Bf16, Bf16, 1, F32, false);
    v_mfma_f32_32x32x4bf16 => (32, 32, 4, 1, Bf16, Bf16, 1, F32, false);
    v_mfma_f32_16x16x8bf16 => (16, 16, 8, 1, Bf16, Bf16, 1, F32, false);
    v_mfma_f64_16x16x4f64 => (16, 16, 4, 1, F64, F64, 2, F64, false);
    v_mfma_f64_4x4x4f64 => (4, 4, 4, 4, F64, F64, 2, F64, false);
    // gfx942 (CDNA3): gfx940's names, xf32 and fp8/bf8.
    v_mfma_f32_32x32x1_2b_f32 => (32, 32, 1, 2, F32, F32, 1, F32, false);
    v_mfma_f32_16x16x1_4b_f32 => (16, 16, 1, 4, F32, F32, 1, F32, false);
    v_mfma_f32_4x4x1_16b_f32 => (4, 4, 1, 16, F32, F32, 1, F32, false);
    v_mfma_f32_32x32x2_f32 => (32, 32, 2, 1, F32, F32, 1, F32, false);
    v_mfma_f32_16x16x4_f32 => (16, 16, 4, 1, F32, F32, 1, F32, false);
    v_mfma_f32_32x32x4_2b_f16 => (32, 32, 4, 2, F16, F16, 2, F32, false);
    v_mfma_f32_16x16x4_4b_f16 => (16, 16, 4, 4, F16, F16, 2, F32, false);
    v_mfma_f32_4x4x4_16b_f16 => (4, 4, 4, 16, F16, F16, 2, F32, false);
    v_mfma_f32_32x32x8_f16 => (32, 32, 8, 1, F16, F16, 2, F32, false);
    v_mfma_f32_16x16x16_f16 => (16, 16, 16, 1, F16, F16, 2, F32, false);
    v_mfma_i32_32x32x4_2b_i8 => (32, 32, 4, 2, I8, I8, 1, I32, false);
    v_mfma_i32_16x16x4_4b_i8 => (16, 16, 4, 4, I8, I8, 1, I32, false);
    v_mfma_i32_4x4x4_16b_i8 => (4, 4, 4, 16, I8, I8, 1, I32, false);
    v_mfma_i32_32x32x16_i8 => (32, 32, 16, 1, I8, I8, 2, I32, false);
    v_mfma_i32_16x16x32_i8 => (16, 16, 32, 1, I8, I8, 2, I32, false);
    v_mfma_f32_32x32x4_2b_bf16 => (32, 32, 4, 2, Bf16, Bf16, 2, F32, false);
    v_mfma_f32_16x16x4_4b_bf16 => (16, 16, 4, 4, Bf16, Bf16, 2, F32, false);
    v_mfma_f32_4x4x4_16b_bf16 => (4, 4, 4, 16, Bf16, Bf16, 2, F32, false);
    v_mfma_f32_32x32x8_bf16 => (32, 32, 8, 1, Bf16, Bf16, 2, F32, false);
    v_mfma_f32_16x16x16_bf16 => (16, 16, 16, 1, Bf16, Bf16, 2, F32, false);
    v_mfma_f64_16x16x4_f64 => (16, 16, 4, 1, F64, F64, 2, F64, true);
    v_mfma_f64_4x4x4_4b_f64 => (4, 4, 4, 4, F64, F64, 2, F64, true);
    v_mfma_f32_16x16x8_xf32 => (16, 16, 8, 1, Xf32, Xf32, 2, F32, false);
    v_mfma_f32_32x32x4_xf32 => (32, 32, 4, 1, Xf32, Xf32, 2, F32, false);
    v_mfma_f32_16x16x32_fp8_fp8 => (16, 16, 32, 1, Fp8, Fp8, 2, F32, false);
    v_mfma_f32_16x16x32_fp8_bf8 => (16, 16, 32, 1, Fp8, Bf8, 2, F32, false);
    v_mfma_f32_16x16x32_bf8_fp8 => (16, 16, 32, 1, Bf8, Fp8, 2, F32, false);
    v_mfma_f32_16x16x32_bf8_bf8 => (16, 16, 32, 1, Bf8, Bf8, 2, F32, false);
    v_mfma_f32_32x32x16_fp8_fp8 => (32, 32, 16, 1, Fp8, Fp8, 2, F32, false);
    v_mfma_f32_32x32x16_fp8_bf8 => (32, 32, 16, 1, Fp8, Bf8, 2, F32, false);
    v_mfma_f32_32x32x16_bf8_fp8 => (32, 32, 16, 1, Bf8, Fp8, 2, F32, false);
    v_mfma_f32_32x32x16_bf8_bf8 => (32, 32, 16, 1, Bf8, Bf8, 2, F32, false);
}

// Matrix code reads best with index loops.
#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::exec::{step, Env, Spans};
    use crate::lds::Lds;
    use crate::memory::FlatMemory;
    use crate::wave::Mask;

    fn shape(name: &str) -> Shape {
        let op = Op::from_name(name).expect("an operation");
        SHAPES.iter().find(|(o, _)| *o == op).expect("a shape").1
    }

    /// Places AMD's Matrix Instruction Calculator gives (`--get-register`, CDNA2).
    #[test]
    fn layouts_match_the_matrix_instruction_calculator() {
        // A[5][6] = v1{37}.[15:0]
        assert_eq!(a_place(&shape("v_mfma_f32_32x32x8f16"), 5, 6, 0), (1, 37, 0));
        // D[13][7] = v5{39}
        assert_eq!(d_place(&shape("v_mfma_f32_32x32x8f16"), 13, 7, 0), (5, 39));
        // D[9][3] = v1{35}
        assert_eq!(d_place(&shape("v_mfma_f32_16x16x4f32"), 9, 3, 0), (1, 35));
        // D[2][1] of block 5 = v2{21}
        assert_eq!(d_place(&shape("v_mfma_f32_4x4x4f16"), 2, 1, 5), (2, 21));
        // D[6][2] = v[3:2]{34}
        assert_eq!(d_place(&shape("v_mfma_f64_16x16x4f64"), 6, 2, 0), (2, 34));
        // B[6][9] = v0{41}.[23:16] (B's (k, j) lies where A's (j, k) does)
        assert_eq!(a_place(&shape("v_mfma_i32_32x32x8i8"), 9, 6, 0), (0, 41, 16));
        // D[17][30] of block 1 = v25{30}
        assert_eq!(d_place(&shape("v_mfma_f32_32x32x1f32"), 17, 30, 1), (25, 30));
    }

    #[test]
    fn eight_bit_floats_are_fnuz() {
        // fp8 (E4M3, bias 8) and bf8 (E5M2, bias 16): 1.0 is 0x40 in both.
        assert_eq!(Elem::Fp8.value(0x40), 1.0);
        assert_eq!(Elem::Bf8.value(0x40), 1.0);
        assert_eq!(Elem::Fp8.value(0x38), 0.5);
        assert_eq!(Elem::Bf8.value(0x3c), 0.5);
        assert_eq!(Elem::Fp8.value(0xc8), -2.0);
        assert_eq!(Elem::Bf8.value(0xc4), -2.0);
        assert_eq!(Elem::Fp8.value(0x01), 2f64.powi(-10));
        assert_eq!(Elem::Bf8.value(0x01), 2f64.powi(-17));
        assert!(Elem::Fp8.value(0x80).is_nan());
        assert_eq!(Elem::Bf16.value(0x3fc0), 1.5);
        assert_eq!(Elem::Xf32.value(u64::from(1.000_001f32.to_bits())), 1.0);
    }

    /// A small integer (or, for 8-bit floats, a value of few bits) as element bits of `e`.
    fn encode(e: Elem, v: i32) -> u64 {
        match e {
            Elem::F32 | Elem::Xf32 => u64::from((v as f32).to_bits()),
            Elem::F16 => u64::from(half::f16::from_f32(v as f32).to_bits()),
            Elem::Bf16 => u64::from((v as f32).to_bits() >> 16),
            Elem::I8 => u64::from(v as i8 as u8),
            Elem::F64 => (f64::from(v)).to_bits(),
            // Found by search: the encoding whose value is v.
            Elem::Fp8 | Elem::Bf8 => (0..=255u64)
                .find(|&b| e.value(b) == f64::from(v))
                .expect("representable"),
        }
    }

    /// Runs `name` with A, B and C filled from small integers and compares every element of D
    /// with a host matrix multiply (the A block CBSZ/ABID broadcast and BLGP's B lanes applied
    /// on the host side from the definitions).
    fn check(name: &str, cbsz: usize, abid: usize, blgp: u8) {
        let s = shape(name);
        let mut w = Wave::<64>::new();
        let (ra, rb, rc, rd) = (0u16, 8u16, 16u16, 100u16);
        let mut seed = 0x1234_5678u32 ^ name.len() as u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 16) as i32 % 7 - 3
        };
        let put = |w: &mut Wave<64>, first: u16, (reg, lane, bit): (usize, usize, usize), bits: usize, raw: u64| {
            let r = usize::from(first) + reg;
            if bits == 64 {
                w.v[r][lane] = raw as u32;
                w.v[r + 1][lane] = (raw >> 32) as u32;
            } else {
                let m = ((1u64 << bits) - 1) as u32;
                w.v[r][lane] = w.v[r][lane] & !(m << bit) | ((raw as u32) & m) << bit;
            }
        };
        let mut a = vec![vec![vec![0i32; s.k]; s.m]; s.blocks];
        let mut b = vec![vec![vec![0i32; s.n]; s.k]; s.blocks];
        let mut c = vec![vec![vec![0i32; s.n]; s.m]; s.blocks];
        for blk in 0..s.blocks {
            for i in 0..s.m {
                for k in 0..s.k {
                    a[blk][i][k] = rnd();
                    put(&mut w, ra, a_place(&s, i, k, blk), s.a.bits(), encode(s.a, a[blk][i][k]));
                }
            }
            for k in 0..s.k {
                for j in 0..s.n {
                    b[blk][k][j] = rnd();
                    put(&mut w, rb, a_place(&s, j, k, blk), s.b.bits(), encode(s.b, b[blk][k][j]));
                }
            }
            for i in 0..s.m {
                for j in 0..s.n {
                    c[blk][i][j] = rnd();
                    let (reg, lane) = d_place(&s, i, j, blk);
                    let raw = match s.out {
                        Out::F32 => u64::from((c[blk][i][j] as f32).to_bits()),
                        Out::I32 => u64::from(c[blk][i][j] as u32),
                        Out::F64 => f64::from(c[blk][i][j]).to_bits(),
                    };
                    let bits = if s.out == Out::F64 { 64 } else { 32 };
                    put(&mut w, rc, (reg, lane, 0), bits, raw);
                }
            }
        }
        // BLGP moves B's lanes: logical lane l reads physical lane blgp_lane(l). Rebuild the
        // logical B each block sees from the registers as filled.
        let b_seen = |blk: usize, k: usize, j: usize| -> i32 {
            if blgp == 0 || s.blgp_negates {
                return b[blk][k][j];
            }
            let (_, lane, _) = a_place(&s, j, k, blk);
            let phys = blgp_lane(blgp, lane);
            // Which (block, j, k) was written to `phys` at the same register and bit.
            for b2 in 0..s.blocks {
                for j2 in 0..s.n {
                    for k2 in 0..s.k {
                        if a_place(&s, j2, k2, b2) == (a_place(&s, j, k, blk).0, phys, a_place(&s, j, k, blk).2) {
                            return b[b2][k2][j2];
                        }
                    }
                }
            }
            panic!("no B element at lane {phys}");
        };
        w.set_exec(Mask::all::<64>());
        let u = Uop {
            d: [Opnd::V(rd), Opnd::None],
            s: [Opnd::V(ra), Opnd::V(rb), Opnd::V(rc)],
            imm: (cbsz | abid << 4 | usize::from(blgp) << 8) as i64,
            ..Uop::named(name)
        };
        let mem = FlatMemory::new();
        let mut lds = Lds::new(0);
        let spans = Spans::default();
        let mut e = Env::new(&mem, &mut lds, &crate::NoServices, &spans);
        step(&crate::family::cdna::WAVE64, &mut w, &u, &mut e).expect("runs");
        let neg = |bit: u8| if s.blgp_negates && blgp >> bit & 1 != 0 { -1 } else { 1 };
        for blk in 0..s.blocks {
            let ab = if cbsz == 0 { blk } else { (blk >> cbsz << cbsz) | (abid & ((1 << cbsz) - 1)) };
            for i in 0..s.m {
                for j in 0..s.n {
                    let dot: i64 = (0..s.k)
                        .map(|k| i64::from(neg(0) * a[ab][i][k]) * i64::from(neg(1) * b_seen(blk, k, j)))
                        .sum();
                    let want = dot + i64::from(neg(2) * c[blk][i][j]);
                    let (reg, lane) = d_place(&s, i, j, blk);
                    let r = usize::from(rd) + reg;
                    let got = match s.out {
                        Out::F32 => f64::from(f32::from_bits(w.v[r][lane])),
                        Out::I32 => f64::from(w.v[r][lane] as i32),
                        Out::F64 => f64::from_bits(u64::from(w.v[r][lane]) | u64::from(w.v[r + 1][lane]) << 32),
                    };
                    assert_eq!(got, want as f64, "{name} block {blk} D[{i}][{j}] (cbsz {cbsz} abid {abid} blgp {blgp})");
                }
            }
        }
    }

    #[test]
    fn every_matrix_instruction_against_a_host_multiply() {
        for (op, _) in SHAPES {
            check(op.name(), 0, 0, 0);
        }
    }

    #[test]
    fn broadcasts_lane_patterns_and_f64_negation() {
        check("v_mfma_f32_4x4x1f32", 2, 1, 0);
        check("v_mfma_f32_16x16x4f16", 1, 1, 0);
        for p in 1..8 {
            check("v_mfma_f32_32x32x2f32", 0, 0, p);
        }
        check("v_mfma_f64_16x16x4_f64", 0, 0, 5);
        check("v_mfma_f64_4x4x4_4b_f64", 0, 0, 2);
    }
}
