//! Vector ALU semantics (VOP1, VOP2, VOP3, VOP3P, VOPC, with DPP16 and SDWA): one pipeline
//! reads the sources for all lanes (DPP permutes src0, SDWA selects bytes or words, VOP3
//! `op_sel` picks 16-bit halves, `neg`/`abs` flip sign bits), computes every lane, applies
//! output modifiers and clamp, merges 16-bit and SDWA results, and writes under EXEC (and the
//! DPP write mask). At full EXEC with no modifiers this is a straight loop the compiler
//! vectorises. Float ops follow the descriptor's modes as clang sets them (round to nearest,
//! denormals kept, IEEE and DX10 clamp on). Lane-crossing ops (`v_readlane`, `v_permlane16`,
//! `v_mbcnt`) and compares writing masks live here too. Not for memory instructions.

// The unordered float compares (`!(a >= b)`) are written as the ISA defines them: true when
// either side is NaN; `lg` is `a < b || a > b`, which is not `a != b` for NaN. Rewriting them
// with partial_cmp would hide that.
#![allow(
    clippy::neg_cmp_op_on_partial_ord,
    clippy::nonminimal_bool,
    clippy::double_comparisons
)]

use half::f16;

use super::lanes::{dpp, sdwa_dst, sdwa_src};
use super::{Ctl, Env, Handler, LaneMode, Opnd, Uop};
use crate::float as fp;
use crate::isa::Op;
use crate::wave::{sreg, Mask, Wave};

type R = Ctl;

/// How an instruction's operands and result are typed (for modifiers and merging).
#[derive(Clone, Copy, PartialEq, Eq)]
enum K {
    F32,
    F16,
    I32,
    I16,
    /// 32-bit data moved, not computed (`v_cndmask_b32`): f32 sign modifiers apply, denormals
    /// are never flushed.
    B32,
    /// An f32 first source and an integer second (`v_ldexp_f32`'s exponent, `v_cmp_class`'s
    /// mask): only the first is flushed.
    F32I32,
}

/// Reads `S` 32-bit sources with DPP, SDWA, op_sel and neg/abs applied; returns them and the
/// lanes to write.
#[inline(always)]
fn sources<const N: usize, const S: usize>(w: &Wave<N>, u: &Uop, k: K) -> ([[u32; N]; S], Mask) {
    let mut s: [[u32; N]; S] = std::array::from_fn(|i| w.vread(u.s[i]));
    let mut mask = w.exec();
    match u.lanes {
        LaneMode::Plain => {}
        LaneMode::Dpp(d) => {
            if S > 0 {
                let (v, m) = dpp(&s[0], mask, &d);
                s[0] = v;
                mask &= m;
            }
        }
        LaneMode::Dpp8 { sel, fi } => {
            if S > 0 {
                s[0] = super::lanes::dpp8(&s[0], mask, sel, fi);
            }
        }
        LaneMode::Sdwa(sd) => {
            for (i, src) in s.iter_mut().enumerate().take(2) {
                for x in src.iter_mut() {
                    *x = sdwa_src(*x, sd.src_sel[i], sd.sext[i]);
                }
            }
        }
    }
    if matches!(k, K::F16 | K::I16) && u.m.op_sel & 7 != 0 {
        for (i, src) in s.iter_mut().enumerate() {
            if u.m.op_sel >> i & 1 != 0 {
                for x in src.iter_mut() {
                    *x >>= 16;
                }
            }
        }
    }
    let floats = match k {
        K::F32 => S,
        K::F32I32 => 1,
        _ => 0,
    };
    if floats > 0 && flush_in32(w.mode) {
        for src in s.iter_mut().take(floats) {
            for x in src.iter_mut() {
                *x = flush32(*x);
            }
        }
    }
    if u.m.neg | u.m.abs != 0 {
        let sign = match k {
            K::F32 | K::B32 | K::F32I32 => 0x8000_0000,
            K::F16 => 0x8000,
            _ => 0,
        };
        for (i, src) in s.iter_mut().enumerate() {
            let (a, n) = (u.m.abs >> i & 1 != 0, u.m.neg >> i & 1 != 0);
            for x in src.iter_mut() {
                if a {
                    *x &= !sign;
                }
                if n {
                    *x ^= sign;
                }
            }
        }
    }
    (s, mask)
}

/// Output modifiers, 16-bit and SDWA merges, and the masked write.
#[inline(always)]
fn finish<const N: usize>(w: &mut Wave<N>, u: &Uop, k: K, mut out: [u32; N], mask: Mask) -> R {
    if u.m.omod != 0 || u.m.clamp {
        let dx10 = w.mode >> 8 & 1 != 0;
        let f = fp::omod_factor(u.m.omod);
        match k {
            K::F32 => {
                for x in out.iter_mut() {
                    let mut v = f32::from_bits(*x) * f;
                    if u.m.clamp {
                        v = fp::clamp_f32(v, dx10);
                    }
                    *x = v.to_bits();
                }
            }
            K::F16 => {
                for x in out.iter_mut() {
                    let mut v = fp::from_f16(*x) * f;
                    if u.m.clamp {
                        v = fp::clamp_f32(v, dx10);
                    }
                    *x = u32::from(fp::to_f16(v));
                }
            }
            _ => {}
        }
    }
    if k == K::F32 && flush_out32(w.mode) {
        for x in out.iter_mut() {
            *x = flush32(*x);
        }
    }
    let Opnd::V(d) = u.d[0] else {
        return Ctl::Next;
    };
    if let LaneMode::Sdwa(sd) = u.lanes {
        let old = w.v[d as usize];
        for l in 0..N {
            out[l] = sdwa_dst(out[l], old[l], &sd);
        }
    } else if matches!(k, K::F16 | K::I16) {
        let old = w.v[d as usize];
        let hi = u.m.op_sel & 8 != 0;
        // gfx9 zeroes the high half (unless op_sel writes it); gfx10 keeps it.
        let keep = if u.zero_hi16 { 0 } else { 0xffff_0000 };
        for l in 0..N {
            out[l] = if hi {
                (old[l] & 0xffff) | out[l] << 16
            } else {
                (old[l] & keep) | (out[l] & 0xffff)
            };
        }
    }
    w.vwrite(u.d[0], mask, &out);
    Ctl::Next
}

#[inline(always)]
fn v<const N: usize, const S: usize>(w: &mut Wave<N>, u: &Uop, k: K, f: impl Fn([u32; S]) -> u32) -> R {
    let (s, mask) = sources::<N, S>(w, u, k);
    let out: [u32; N] = std::array::from_fn(|l| f(std::array::from_fn(|i| s[i][l])));
    finish(w, u, k, out, mask)
}

/// A source operand on the fast paths: a VGPR by reference, or one value for every lane (an
/// SGPR, a constant), so that neither registers are copied nor scalars broadcast.
#[derive(Clone, Copy)]
enum Src<'a, const N: usize> {
    V(&'a [u32; N]),
    K(u32),
}

impl<const N: usize> Src<'_, N> {
    /// Every lane's value.
    #[inline(always)]
    fn lanes(self) -> [u32; N] {
        match self {
            Src::V(v) => *v,
            Src::K(k) => [k; N],
        }
    }
}

/// Operand `o` as a fast-path source. Three compares for the usual kinds (few enough that
/// the compiler does not make an indirect jump of them); the rest out of line.
#[inline(always)]
fn src<const N: usize>(w: &Wave<N>, o: Opnd) -> Src<'_, N> {
    match o {
        Opnd::V(r) => Src::V(&w.v[r as usize]),
        Opnd::S(n) => Src::K(w.s[n as usize]),
        Opnd::Imm(b) => Src::K(b as u32),
        _ => Src::K(special_b32(w, o)),
    }
}

/// A 32-bit read of an operand that is neither a register nor a constant.
#[cold]
#[inline(never)]
fn special_b32<const N: usize>(w: &Wave<N>, o: Opnd) -> u32 {
    w.sread_b32(o)
}

/// Every lane's `f(l)`, as a plain loop (always inlined, unlike `std::array::from_fn`, so
/// the FMA paths' target features reach the arithmetic).
#[inline(always)]
fn lanes<const N: usize>(f: impl Fn(usize) -> u32) -> [u32; N] {
    let mut out = [0u32; N];
    for (l, o) in out.iter_mut().enumerate() {
        *o = f(l);
    }
    out
}

/// `f` on every lane of one source (one loop per kind of operand, each one the compiler
/// vectorises).
#[inline(always)]
fn map1<const N: usize>(a: Src<'_, N>, f: impl Fn(u32) -> u32) -> [u32; N] {
    match a {
        Src::V(a) => lanes(|l| f(a[l])),
        Src::K(a) => [f(a); N],
    }
}

/// `f` on every lane of two sources.
#[inline(always)]
fn map2<const N: usize>(a: Src<'_, N>, b: Src<'_, N>, f: impl Fn(u32, u32) -> u32) -> [u32; N] {
    match (a, b) {
        (Src::V(a), Src::V(b)) => lanes(|l| f(a[l], b[l])),
        (Src::V(a), Src::K(b)) => lanes(|l| f(a[l], b)),
        (Src::K(a), Src::V(b)) => lanes(|l| f(a, b[l])),
        (Src::K(a), Src::K(b)) => [f(a, b); N],
    }
}

/// `f` on every lane of three sources (the usual operand kinds get loops of their own).
#[inline(always)]
fn map3<const N: usize>(
    a: Src<'_, N>,
    b: Src<'_, N>,
    c: Src<'_, N>,
    f: impl Fn(u32, u32, u32) -> u32,
) -> [u32; N] {
    match (a, b, c) {
        (Src::V(a), Src::V(b), Src::V(c)) => lanes(|l| f(a[l], b[l], c[l])),
        (Src::V(a), Src::V(b), Src::K(c)) => lanes(|l| f(a[l], b[l], c)),
        (Src::V(a), Src::K(b), Src::V(c)) => lanes(|l| f(a[l], b, c[l])),
        (Src::V(a), Src::K(b), Src::K(c)) => lanes(|l| f(a[l], b, c)),
        // VOP2's src0 is where compiled code puts an SGPR or constant.
        (Src::K(a), Src::V(b), Src::V(c)) => lanes(|l| f(a, b[l], c[l])),
        (Src::K(a), Src::V(b), Src::K(c)) => lanes(|l| f(a, b[l], c)),
        (a, b, c) => {
            let (a, b, c) = (a.lanes(), b.lanes(), c.lanes());
            lanes(|l| f(a[l], b[l], c[l]))
        }
    }
}

/// Writes a fast path's result under EXEC.
#[inline(always)]
fn put<const N: usize>(w: &mut Wave<N>, u: &Uop, out: &[u32; N]) -> R {
    let m = w.exec();
    w.vwrite(u.d[0], m, out);
    Ctl::Next
}

/// Whether an integer op reads its lanes plainly (no DPP or SDWA; modifiers do not apply
/// to 32-bit integers): its fast path's premise.
#[inline(always)]
fn plain_int(u: &Uop) -> bool {
    matches!(u.lanes, LaneMode::Plain)
}

/// Whether an f32 op runs as the host's arithmetic: plain lanes, no modifiers, no denormal
/// flushing.
#[inline(always)]
fn plain_f32<const N: usize>(w: &Wave<N>, u: &Uop) -> bool {
    plain(u) && host_f32(w.mode)
}

#[inline(always)]
fn i1<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32) -> u32) -> R {
    if plain_int(u) {
        let out = map1(src(w, u.s[0]), f);
        return put(w, u, &out);
    }
    slow(|| v::<N, 1>(w, u, K::I32, |[a]| f(a)))
}

#[inline(always)]
fn i2<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32, u32) -> u32) -> R {
    if plain_int(u) {
        let out = map2(src(w, u.s[0]), src(w, u.s[1]), f);
        return put(w, u, &out);
    }
    slow(|| v::<N, 2>(w, u, K::I32, |[a, b]| f(a, b)))
}

#[inline(always)]
fn i3<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32, u32, u32) -> u32) -> R {
    if plain_int(u) {
        let out = map3(src(w, u.s[0]), src(w, u.s[1]), src(w, u.s[2]), f);
        return put(w, u, &out);
    }
    slow(|| v::<N, 3>(w, u, K::I32, |[a, b, c]| f(a, b, c)))
}

#[inline(always)]
fn f1<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f32) -> f32) -> R {
    let g = |a: u32| f(f32::from_bits(a)).to_bits();
    if plain_f32(w, u) {
        let out = map1(src(w, u.s[0]), g);
        return put(w, u, &out);
    }
    slow(|| v::<N, 1>(w, u, K::F32, |[a]| g(a)))
}

#[inline(always)]
fn f2<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f32, f32) -> f32) -> R {
    let g = |a: u32, b: u32| f(f32::from_bits(a), f32::from_bits(b)).to_bits();
    if plain_f32(w, u) {
        let out = map2(src(w, u.s[0]), src(w, u.s[1]), g);
        return put(w, u, &out);
    }
    slow(|| v::<N, 2>(w, u, K::F32, |[a, b]| g(a, b)))
}

#[inline(always)]
fn f3<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f32, f32, f32) -> f32) -> R {
    let g = |a: u32, b: u32, c: u32| {
        f(f32::from_bits(a), f32::from_bits(b), f32::from_bits(c)).to_bits()
    };
    if plain_f32(w, u) {
        let out = map3(src(w, u.s[0]), src(w, u.s[1]), src(w, u.s[2]), g);
        return put(w, u, &out);
    }
    slow(|| v::<N, 3>(w, u, K::F32, |[a, b, c]| g(a, b, c)))
}

/// f32 multiply-accumulate into the destination (`v_fmac_f32`, `v_fmac_legacy_f32`).
#[inline(always)]
fn fmac<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f32, f32, f32) -> f32) -> R {
    let mut acc = w.vread(u.d[0]);
    if flush_in32(w.mode) {
        acc = acc.map(flush32);
    }
    let (s, mask) = sources::<N, 2>(w, u, K::F32);
    let out: [u32; N] = std::array::from_fn(|l| {
        f(
            f32::from_bits(s[0][l]),
            f32::from_bits(s[1][l]),
            f32::from_bits(acc[l]),
        )
        .to_bits()
    });
    finish(w, u, K::F32, out, mask)
}

/// One f32 fused multiply-add on bit patterns.
#[inline(always)]
fn fma_bits(a: u32, b: u32, c: u32) -> u32 {
    f32::from_bits(a)
        .mul_add(f32::from_bits(b), f32::from_bits(c))
        .to_bits()
}

/// `d = a * b + c` (fused) on every lane of a wave, written under EXEC: the FMA fast path,
/// compiled three times: with AVX2 and FMA, with FMA, and plain (where `mul_add` is a libm
/// call per lane), picked by what the host has.
#[inline(always)]
fn fma_put<const N: usize>(w: &mut Wave<N>, d: Opnd, a: Opnd, b: Opnd, c: Opnd) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 and FMA, checked just above.
                return unsafe { fma_put_avx2(w, d, a, b, c) };
            }
            // SAFETY: the CPU supports FMA, checked just above.
            return unsafe { fma_put_fma(w, d, a, b, c) };
        }
    }
    fma_put_any(w, d, a, b, c)
}

/// [`fma_put`]'s body: the sources read in place, one loop per operand kinds, the result
/// written straight into the destination (all inlined into the feature-specific copies).
#[inline(always)]
fn fma_put_any<const N: usize>(w: &mut Wave<N>, d: Opnd, a: Opnd, b: Opnd, c: Opnd) {
    let out = map3(src(w, a), src(w, b), src(w, c), fma_bits);
    let m = w.exec();
    w.vwrite(d, m, &out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn fma_put_fma<const N: usize>(w: &mut Wave<N>, d: Opnd, a: Opnd, b: Opnd, c: Opnd) {
    fma_put_any(w, d, a, b, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fma_put_avx2<const N: usize>(w: &mut Wave<N>, d: Opnd, a: Opnd, b: Opnd, c: Opnd) {
    fma_put_any(w, d, a, b, c)
}

/// Runs a general (modifier, DPP or SDWA) path out of line, so the fast paths' handlers stay
/// small (no big stack frame to set up for the common case).
#[cold]
#[inline(never)]
fn slow(f: impl FnOnce() -> R) -> R {
    f()
}

fn plain(u: &Uop) -> bool {
    matches!(u.lanes, LaneMode::Plain) && u.m.neg | u.m.abs == 0 && !u.m.clamp && u.m.omod == 0
}

/// FP_DENORM for f32 (MODE bits 5:4): 0 flushes inputs and outputs, 1 outputs, 2 inputs,
/// 3 neither (what clang's HIP kernels ask for).
fn flush_in32(mode: u32) -> bool {
    matches!(mode >> 4 & 3, 0 | 2)
}

fn flush_out32(mode: u32) -> bool {
    matches!(mode >> 4 & 3, 0 | 1)
}

/// Whether f32 ops run exactly as the host's (no denormal flushing): the fast paths' premise.
fn host_f32(mode: u32) -> bool {
    mode >> 4 & 3 == 3
}

/// An f32 denormal becomes a zero of the same sign.
fn flush32(x: u32) -> u32 {
    if x & 0x7f80_0000 == 0 {
        x & 0x8000_0000
    } else {
        x
    }
}

/// `v_fma_f32` and its literal forms: the FMA fast path when nothing modifies the lanes.
#[inline(always)]
fn fma3<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f32, f32, f32) -> f32) -> R {
    if plain_f32(w, u) {
        fma_put(w, u.d[0], u.s[0], u.s[1], u.s[2]);
        return Ctl::Next;
    }
    slow(|| f3(w, u, f))
}

/// `v_fmac_f32`: the FMA fast path into the destination.
#[inline(always)]
fn fmac_fast<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f32, f32, f32) -> f32) -> R {
    if plain_f32(w, u) {
        fma_put(w, u.d[0], u.s[0], u.s[1], u.d[0]);
        return Ctl::Next;
    }
    slow(|| fmac(w, u, f))
}

#[inline(always)]
fn h1<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f32) -> f32) -> R {
    v::<N, 1>(w, u, K::F16, |[a]| {
        u32::from(fp::to_f16(f(fp::from_f16(a))))
    })
}

#[inline(always)]
fn h2<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f32, f32) -> f32) -> R {
    v::<N, 2>(w, u, K::F16, |[a, b]| {
        u32::from(fp::to_f16(f(fp::from_f16(a), fp::from_f16(b))))
    })
}

#[inline(always)]
fn h3<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f64, f64, f64) -> f64) -> R {
    v::<N, 3>(w, u, K::F16, |[a, b, c]| {
        let r = f(
            f64::from(fp::from_f16(a)),
            f64::from(fp::from_f16(b)),
            f64::from(fp::from_f16(c)),
        );
        u32::from(f16::from_f64(r).to_bits())
    })
}

/// f16 multiply-accumulate into the destination's low half.
#[inline(always)]
fn hmac<const N: usize>(w: &mut Wave<N>, u: &Uop) -> R {
    let acc = w.vread(u.d[0]);
    let (s, mask) = sources::<N, 2>(w, u, K::F16);
    let out: [u32; N] = std::array::from_fn(|l| {
        let r = f64::from(fp::from_f16(s[0][l])).mul_add(
            f64::from(fp::from_f16(s[1][l])),
            f64::from(fp::from_f16(acc[l])),
        );
        u32::from(f16::from_f64(r).to_bits())
    });
    finish(w, u, K::F16, out, mask)
}

#[inline(always)]
fn s16_2<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u16, u16) -> u16) -> R {
    v::<N, 2>(w, u, K::I16, |[a, b]| u32::from(f(a as u16, b as u16)))
}

#[inline(always)]
fn s16_3<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u16, u16, u16) -> u32) -> R {
    v::<N, 3>(w, u, K::I16, |[a, b, c]| f(a as u16, b as u16, c as u16))
}

/// 16-bit sources, 32-bit result (`v_mad_u32_u16`, `v_cvt_f32_f16` with op_sel).
#[inline(always)]
fn s16_to32<const N: usize, const S: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn([u32; S]) -> u32) -> R {
    let (s, mask) = sources::<N, S>(w, u, K::I16);
    let out: [u32; N] = std::array::from_fn(|l| f(std::array::from_fn(|i| s[i][l] & 0xffff)));
    finish(w, u, K::I32, out, mask)
}

/// f16 source(s) to a 32-bit result (conversions, frexp_exp).
#[inline(always)]
fn h_to32<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f16) -> u32) -> R {
    let (s, mask) = sources::<N, 1>(w, u, K::F16);
    let out: [u32; N] = std::array::from_fn(|l| f(f16::from_bits(s[0][l] as u16)));
    finish(w, u, K::I32, out, mask)
}

// ---- 64-bit ----

fn sources64<const N: usize, const S: usize>(w: &Wave<N>, u: &Uop, float: bool) -> [[u64; N]; S] {
    let mut s: [[u64; N]; S] = std::array::from_fn(|i| w.vread64(u.s[i]));
    if float && u.m.neg | u.m.abs != 0 {
        for (i, src) in s.iter_mut().enumerate() {
            let (a, n) = (u.m.abs >> i & 1 != 0, u.m.neg >> i & 1 != 0);
            for x in src.iter_mut() {
                if a {
                    *x &= !(1 << 63);
                }
                if n {
                    *x ^= 1 << 63;
                }
            }
        }
    }
    s
}

#[inline(always)]
fn d64<const N: usize, const S: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn([f64; S]) -> f64) -> R {
    let s = sources64::<N, S>(w, u, true);
    let dx10 = w.mode >> 8 & 1 != 0;
    let factor = f64::from(fp::omod_factor(u.m.omod));
    let out: [u64; N] = std::array::from_fn(|l| {
        let mut r = f(std::array::from_fn(|i| f64::from_bits(s[i][l]))) * factor;
        if u.m.clamp {
            r = fp::clamp_f64(r, dx10);
        }
        r.to_bits()
    });
    let m = w.exec();
    w.vwrite64(u.d[0], m, &out);
    Ctl::Next
}

/// 64-bit integer (or mixed-width) sources, 64-bit result.
#[inline(always)]
fn q64<const N: usize, const S: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn([u64; S]) -> u64) -> R {
    let s = sources64::<N, S>(w, u, false);
    let out: [u64; N] = std::array::from_fn(|l| f(std::array::from_fn(|i| s[i][l])));
    let m = w.exec();
    w.vwrite64(u.d[0], m, &out);
    Ctl::Next
}

/// 64-bit sources (float modifiers applied), 32-bit result.
#[inline(always)]
fn d64to32<const N: usize, const S: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn([f64; S]) -> u32) -> R {
    let s = sources64::<N, S>(w, u, true);
    let out: [u32; N] =
        std::array::from_fn(|l| f(std::array::from_fn(|i| f64::from_bits(s[i][l]))));
    let m = w.exec();
    w.vwrite(u.d[0], m, &out);
    Ctl::Next
}

/// 32-bit sources, 64-bit result (conversions to f64).
#[inline(always)]
fn to64<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32) -> f64) -> R {
    let (s, _) = sources::<N, 1>(w, u, K::F32);
    let out: [u64; N] = std::array::from_fn(|l| f(s[0][l]).to_bits());
    let m = w.exec();
    w.vwrite64(u.d[0], m, &out);
    Ctl::Next
}

// ---- carries and compares ----

/// Carry ops: `f(a, b, carry_in) -> (result, carry_out)`; carry-in from `s[2]` (a mask),
/// carry-out mask to `d[1]`. Inactive lanes' carry bits are 0.
#[inline(always)]
fn carry<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32, u32, bool) -> (u32, bool)) -> R {
    let (s, mask) = if plain_int(u) {
        ([src(w, u.s[0]).lanes(), src(w, u.s[1]).lanes()], w.exec())
    } else {
        sources::<N, 2>(w, u, K::I32)
    };
    let cin = w.read_mask(u.s[2]);
    // Carries in and out as one value per lane (loops the compiler vectorises), packed into
    // a mask after.
    let cin: [bool; N] = std::array::from_fn(|l| cin.has(l));
    let mut out = [0u32; N];
    let mut co = [false; N];
    for l in 0..N {
        let (r, c) = f(s[0][l], s[1][l], cin[l]);
        out[l] = r;
        co[l] = c;
    }
    let exec = w.exec();
    w.vwrite(u.d[0], mask, &out);
    w.write_mask(u.d[1], Mask::from_bools(&co) & exec);
    Ctl::Next
}

/// 64-bit shifts (`v_lshlrev_b64` and friends): a 32-bit shift amount and a 64-bit value;
/// with plain lanes the value's halves are read where they are.
#[inline(always)]
fn shift64<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32, u64) -> u64) -> R {
    if !plain_int(u) {
        return slow(|| q64::<N, 2>(w, u, |[a, b]| f(a as u32, b)));
    }
    let a = src(w, u.s[0]).lanes();
    let (b_lo, b_hi) = match u.s[1] {
        Opnd::V(r) => (w.v[r as usize], w.v[r as usize + 1]),
        o => {
            let b = w.sread64(o);
            ([b as u32; N], [(b >> 32) as u32; N])
        }
    };
    let (mut lo, mut hi) = ([0u32; N], [0u32; N]);
    for l in 0..N {
        let r = f(a[l], u64::from(b_lo[l]) | u64::from(b_hi[l]) << 32);
        lo[l] = r as u32;
        hi[l] = (r >> 32) as u32;
    }
    let (m, d) = (w.exec(), u.d[0]);
    if let Opnd::V(d) = d {
        w.vwrite(Opnd::V(d), m, &lo);
        w.vwrite(Opnd::V(d + 1), m, &hi);
    }
    Ctl::Next
}

#[inline(always)]
fn write_mask<const N: usize>(w: &mut Wave<N>, u: &Uop, bits: Mask) -> R {
    let bits = bits & w.exec();
    if u.d[0] == Opnd::S(sreg::EXEC) {
        w.set_exec(bits);
    } else {
        w.write_mask(u.d[0], bits);
        // gfx9's v_cmpx writes its destination and EXEC.
        if u.d[1] == Opnd::S(sreg::EXEC) {
            w.set_exec(bits);
        }
    }
    Ctl::Next
}

#[inline(always)]
fn cmp_f<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f32, f32) -> bool) -> R {
    let s = if plain(u) && !flush_in32(w.mode) {
        [src(w, u.s[0]).lanes(), src(w, u.s[1]).lanes()]
    } else {
        sources::<N, 2>(w, u, K::F32).0
    };
    let bits = Mask::from_fn::<N>(|l| f(f32::from_bits(s[0][l]), f32::from_bits(s[1][l])));
    write_mask(w, u, bits)
}

#[inline(always)]
fn cmp_h<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f32, f32) -> bool) -> R {
    let (s, _) = sources::<N, 2>(w, u, K::F16);
    let bits = Mask::from_fn::<N>(|l| f(fp::from_f16(s[0][l]), fp::from_f16(s[1][l])));
    write_mask(w, u, bits)
}

#[inline(always)]
fn cmp_i<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32, u32) -> bool) -> R {
    let s = if plain_int(u) {
        [src(w, u.s[0]).lanes(), src(w, u.s[1]).lanes()]
    } else {
        sources::<N, 2>(w, u, K::I32).0
    };
    let bits = Mask::from_fn::<N>(|l| f(s[0][l], s[1][l]));
    write_mask(w, u, bits)
}

#[inline(always)]
fn cmp_i16<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u16, u16) -> bool) -> R {
    let (s, _) = sources::<N, 2>(w, u, K::I16);
    let bits = Mask::from_fn::<N>(|l| f(s[0][l] as u16, s[1][l] as u16));
    write_mask(w, u, bits)
}

#[inline(always)]
fn cmp_d<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(f64, f64) -> bool) -> R {
    let s = sources64::<N, 2>(w, u, true);
    let bits = Mask::from_fn::<N>(|l| f(f64::from_bits(s[0][l]), f64::from_bits(s[1][l])));
    write_mask(w, u, bits)
}

#[inline(always)]
fn cmp_q<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u64, u64) -> bool) -> R {
    let s = sources64::<N, 2>(w, u, false);
    let bits = Mask::from_fn::<N>(|l| f(s[0][l], s[1][l]));
    write_mask(w, u, bits)
}

/// `v_cmp_class_f64`: the class mask is a 32-bit operand.
fn class_d<const N: usize>(w: &mut Wave<N>, u: &Uop, _: ()) -> R {
    let a = sources64::<N, 1>(w, u, true)[0];
    let m = w.vread(u.s[1]);
    let bits = Mask::from_fn::<N>(|l| fp::class64(f64::from_bits(a[l])) & m[l] != 0);
    write_mask(w, u, bits)
}

// ---- packed (VOP3P) ----

/// Packed 16-bit ops: per source, `op_sel` picks the half for the low result and `op_sel_hi`
/// for the high result; `neg`/`neg_hi` flip f16 signs. `f(srcs, float)` computes one half.
#[inline(always)]
fn pk<const N: usize, const S: usize>(w: &mut Wave<N>, u: &Uop, float: bool, f: impl Fn([u32; S]) -> u32) -> R {
    let s: [[u32; N]; S] = std::array::from_fn(|i| w.vread(u.s[i]));
    let dx10 = w.mode >> 8 & 1 != 0;
    let half = |l: usize, hi: bool| -> u32 {
        let args: [u32; S] = std::array::from_fn(|i| {
            let sel = if hi { u.m.op_sel_hi } else { u.m.op_sel } >> i & 1 != 0;
            let mut x = if sel { s[i][l] >> 16 } else { s[i][l] & 0xffff };
            if float && (if hi { u.m.neg_hi } else { u.m.neg }) >> i & 1 != 0 {
                x ^= 0x8000;
            }
            x
        });
        let r = f(args) & 0xffff;
        if float && u.m.clamp {
            u32::from(fp::to_f16(fp::clamp_f32(fp::from_f16(r), dx10)))
        } else {
            r
        }
    };
    let out: [u32; N] = std::array::from_fn(|l| half(l, false) | half(l, true) << 16);
    let m = w.exec();
    w.vwrite(u.d[0], m, &out);
    Ctl::Next
}

fn hf(x: u32) -> f32 {
    fp::from_f16(x)
}

fn th(x: f32) -> u32 {
    u32::from(fp::to_f16(x))
}

/// `v_fma_mix*`: each source is f32, or (op_sel_hi set) an f16 half chosen by op_sel; `neg`
/// negates and `neg_hi` takes the absolute value.
fn mix_sources<const N: usize>(w: &Wave<N>, u: &Uop) -> [[f32; N]; 3] {
    std::array::from_fn(|i| {
        let raw = w.vread(u.s[i]);
        std::array::from_fn(|l| {
            let mut x = if u.m.op_sel_hi >> i & 1 != 0 {
                let h = if u.m.op_sel >> i & 1 != 0 {
                    raw[l] >> 16
                } else {
                    raw[l] & 0xffff
                };
                fp::from_f16(h)
            } else {
                f32::from_bits(raw[l])
            };
            if u.m.neg_hi >> i & 1 != 0 {
                x = x.abs();
            }
            if u.m.neg >> i & 1 != 0 {
                x = -x;
            }
            x
        })
    })
}

/// `v_fma_mix_f32`.
pub fn v_fma_mix_f32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let s = mix_sources(w, u);
    let dx10 = w.mode >> 8 & 1 != 0;
    let out: [u32; N] = std::array::from_fn(|l| {
        let r = s[0][l].mul_add(s[1][l], s[2][l]);
        (if u.m.clamp { fp::clamp_f32(r, dx10) } else { r }).to_bits()
    });
    let m = w.exec();
    w.vwrite(u.d[0], m, &out);
    Ctl::Next
}

fn fma_mix16<const N: usize>(w: &mut Wave<N>, u: &Uop, hi: bool) -> R {
    let s = mix_sources(w, u);
    let dx10 = w.mode >> 8 & 1 != 0;
    let old = w.vread(u.d[0]);
    let out: [u32; N] = std::array::from_fn(|l| {
        let r = f64::from(s[0][l]).mul_add(f64::from(s[1][l]), f64::from(s[2][l]));
        let mut h = f16::from_f64(r);
        if u.m.clamp {
            h = f16::from_f32(fp::clamp_f32(h.to_f32(), dx10));
        }
        let h = u32::from(h.to_bits());
        if hi {
            (old[l] & 0xffff) | h << 16
        } else {
            (old[l] & 0xffff_0000) | h
        }
    });
    let m = w.exec();
    w.vwrite(u.d[0], m, &out);
    Ctl::Next
}

/// `v_fma_mixlo_f16`.
pub fn v_fma_mixlo_f16<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    fma_mix16(w, u, false)
}

/// `v_fma_mixhi_f16`.
pub fn v_fma_mixhi_f16<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    fma_mix16(w, u, true)
}

// ---- helpers for the table ----

fn mul24(a: u32) -> i64 {
    i64::from(((a << 8) as i32) >> 8)
}

fn bfe(v: u32, off: u32, width: u32, signed: bool) -> u32 {
    let off = off & 31;
    let width = width & 31;
    if width == 0 {
        return 0;
    }
    let x = v >> off;
    let m = if width + off >= 32 {
        x
    } else {
        x & ((1 << width) - 1)
    };
    if signed {
        let sh = 32 - width.min(32 - off).max(1);
        ((m << sh) as i32 >> sh) as u32
    } else {
        m
    }
}

fn sad_u8(a: u32, b: u32) -> u32 {
    (0..4)
        .map(|i| ((a >> (8 * i)) as u8).abs_diff((b >> (8 * i)) as u8) as u32)
        .sum()
}

/// `v_perm_b32` byte selection over {S0, S1}.
fn perm(s0: u32, s1: u32, sel: u32) -> u32 {
    let bytes = u64::from(s1) | u64::from(s0) << 32;
    (0..4).fold(0u32, |acc, i| {
        let k = (sel >> (8 * i)) & 0xff;
        let b: u32 = match k {
            0..=7 => (bytes >> (8 * k)) as u32 & 0xff,
            8 => {
                if s1 >> 15 & 1 != 0 {
                    0xff
                } else {
                    0
                }
            }
            9 => {
                if s1 >> 31 & 1 != 0 {
                    0xff
                } else {
                    0
                }
            }
            10 => {
                if s0 >> 15 & 1 != 0 {
                    0xff
                } else {
                    0
                }
            }
            11 => {
                if s0 >> 31 & 1 != 0 {
                    0xff
                } else {
                    0
                }
            }
            12 => 0,
            _ => 0xff,
        };
        acc | b << (8 * i)
    })
}

/// The cube-map face of direction (x, y, z) and the face's coordinates: (face id, sc, tc,
/// 2 x major axis), as LLVM's constant folder defines `v_cubeid/sc/tc/ma_f32` (the major axis
/// keeps its sign; ties go to z, then y).
fn cube(x: f32, y: f32, z: f32) -> (f32, f32, f32, f32) {
    let neg = |v: f32| v < 0.0;
    let (id, sc, tc, ma) = if z.abs() >= x.abs() && z.abs() >= y.abs() {
        if neg(z) {
            (5.0, -x, -y, z)
        } else {
            (4.0, x, -y, z)
        }
    } else if y.abs() >= x.abs() {
        if neg(y) {
            (3.0, x, -z, y)
        } else {
            (2.0, x, z, y)
        }
    } else if neg(x) {
        (1.0, z, -y, x)
    } else {
        (0.0, -z, -y, x)
    };
    (id, sc, tc, ma + ma)
}

fn med3_i(a: i32, b: i32, c: i32) -> i32 {
    a.max(b).min(a.min(b).max(c)).max(a.min(b))
}

fn med3_u(a: u32, b: u32, c: u32) -> u32 {
    a.max(b).min(a.min(b).max(c)).max(a.min(b))
}

fn ffbh_i(a: u32) -> u32 {
    if a == 0 || a == u32::MAX {
        u32::MAX
    } else if (a as i32) < 0 {
        (!a).leading_zeros()
    } else {
        a.leading_zeros()
    }
}

fn sat_u8(x: i32) -> u32 {
    x.clamp(0, 255) as u32
}

fn pknorm_i16(x: f32) -> u32 {
    ((x.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16 as u16).into()
}

fn pknorm_u16(x: f32) -> u32 {
    ((x.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u16).into()
}

fn cvt_pk_u8(val: f32, sel: u32, old: u32) -> u32 {
    let b = (sel & 3) * 8;
    let v = (val.round_ties_even() as i64).clamp(0, 255) as u32;
    (old & !(0xff << b)) | v << b
}

const IEEE: bool = true;

/// Two f16 products and an f32 accumulator, rounded once to f32.
fn dot2_f16(a: u32, b: u32, c: u32) -> u32 {
    let p = f64::from(hf(a & 0xffff)) * f64::from(hf(b & 0xffff))
        + f64::from(hf(a >> 16)) * f64::from(hf(b >> 16));
    ((p + f64::from(f32::from_bits(c))) as f32).to_bits()
}

macro_rules! handlers {
    ($(#[$doc:meta])* $table:ident; $( $helper:ident : $name:ident => $f:expr ;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`.")]
            pub fn $name<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
                $helper(w, u, $f)
            }
        )*
        impl<const N: usize> Handlers<N> {
            $(#[$doc])*
            pub const $table: &'static [(Op, Handler<N>)] =
                &[$((op!($name), $name::<N> as Handler<N>)),*];
        }
    };
}

/// This module's handlers for `N`-lane waves.
pub struct Handlers<const N: usize>;

/// Integer adds and subtracts whose VOP3 `clamp` saturates instead of wrapping.
fn i2s<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32, u32, bool) -> u32) -> R {
    let c = u.m.clamp;
    i2(w, u, |a, b| f(a, b, c))
}

/// [`i2s`] for 16-bit operands.
fn s16s<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u16, u16, bool) -> u16) -> R {
    let c = u.m.clamp;
    s16_2(w, u, |a, b| f(a, b, c))
}

/// One source typed `kin`, the result typed `kout`.
#[inline(always)]
fn conv<const N: usize, const S: usize>(w: &mut Wave<N>, u: &Uop, kin: K, kout: K, f: impl Fn([u32; S]) -> u32) -> R {
    let (s, mask) = sources::<N, S>(w, u, kin);
    let out: [u32; N] = std::array::from_fn(|l| f(std::array::from_fn(|i| s[i][l])));
    finish(w, u, kout, out, mask)
}

fn if1<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32) -> u32) -> R {
    conv::<N, 1>(w, u, K::I32, K::F32, |[a]| f(a))
}

fn fi1<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32) -> u32) -> R {
    conv::<N, 1>(w, u, K::F32, K::I32, |[a]| f(a))
}

fn fh1<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32) -> u32) -> R {
    conv::<N, 1>(w, u, K::F32, K::I16, |[a]| f(a))
}

fn ih1<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32) -> u32) -> R {
    conv::<N, 1>(w, u, K::I16, K::I16, |[a]| f(a))
}

fn f2raw<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32, u32) -> u32) -> R {
    conv::<N, 2>(w, u, K::F32, K::I32, |[a, b]| f(a, b))
}

fn h2raw<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32, u32) -> u32) -> R {
    conv::<N, 2>(w, u, K::F16, K::I32, |[a, b]| f(a, b))
}

// Entries name operations of the one Op space, checked when compiled. Operations only the
// GFX9-layout instruction sets have are in the GFX9 list further down.
handlers! {
    /// The handlers of the table below, by operation.
    TABLE;
    // ---- moves and bits ----
    i1: v_mov_b32 => |a| a;
    i1: v_not_b32 => |a| !a;
    i1: v_bfrev_b32 => |a| a.reverse_bits();
    i1: v_ffbh_u32 => |a| if a == 0 { u32::MAX } else { a.leading_zeros() };
    i1: v_ffbl_b32 => |a| if a == 0 { u32::MAX } else { a.trailing_zeros() };
    i1: v_ffbh_i32 => ffbh_i;
    if1: v_cvt_f32_ubyte0 => |a| ((a & 0xff) as f32).to_bits();
    if1: v_cvt_f32_ubyte1 => |a| ((a >> 8 & 0xff) as f32).to_bits();
    if1: v_cvt_f32_ubyte2 => |a| ((a >> 16 & 0xff) as f32).to_bits();
    if1: v_cvt_f32_ubyte3 => |a| ((a >> 24) as f32).to_bits();
    if1: v_cvt_f32_i32 => |a| (a as i32 as f32).to_bits();
    if1: v_cvt_f32_u32 => |a| (a as f32).to_bits();
    if1: v_cvt_off_f32_i4 => |a| ((((a << 28) as i32) >> 28) as f32 / 16.0).to_bits();
    i2: v_and_b32 => |a, b| a & b;
    i2: v_or_b32 => |a, b| a | b;
    i2: v_xor_b32 => |a, b| a ^ b;
    i2: v_xnor_b32 => |a, b| !(a ^ b);
    i2: v_lshlrev_b32 => |a, b| b << (a & 31);
    i2: v_lshrrev_b32 => |a, b| b >> (a & 31);
    i2: v_ashrrev_i32 => |a, b| ((b as i32) >> (a & 31)) as u32;
    i2s: v_add_nc_u32 => |a, b, c| if c { a.saturating_add(b) } else { a.wrapping_add(b) };
    i2s: v_sub_nc_u32 => |a, b, c| if c { a.saturating_sub(b) } else { a.wrapping_sub(b) };
    i2s: v_subrev_nc_u32 => |a, b, c| if c { b.saturating_sub(a) } else { b.wrapping_sub(a) };
    i2s: v_add_nc_i32 => |a, b, c| if c { (a as i32).saturating_add(b as i32) as u32 } else { a.wrapping_add(b) };
    i2s: v_sub_nc_i32 => |a, b, c| if c { (a as i32).saturating_sub(b as i32) as u32 } else { a.wrapping_sub(b) };
    i2: v_min_i32 => |a, b| (a as i32).min(b as i32) as u32;
    i2: v_max_i32 => |a, b| (a as i32).max(b as i32) as u32;
    i2: v_min_u32 => |a, b| a.min(b);
    i2: v_max_u32 => |a, b| a.max(b);
    i2: v_mul_i32_i24 => |a, b| (mul24(a) * mul24(b)) as u32;
    i2: v_mul_hi_i32_i24 => |a, b| ((mul24(a) * mul24(b)) >> 32) as u32;
    i2: v_mul_u32_u24 => |a, b| (u64::from(a & 0xff_ffff) * u64::from(b & 0xff_ffff)) as u32;
    i2: v_mul_hi_u32_u24 => |a, b| ((u64::from(a & 0xff_ffff) * u64::from(b & 0xff_ffff)) >> 32) as u32;
    i2: v_mul_lo_u32 => |a, b| a.wrapping_mul(b);
    i2: v_mul_hi_u32 => |a, b| ((u64::from(a) * u64::from(b)) >> 32) as u32;
    i2: v_mul_hi_i32 => |a, b| ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32;
    i2: v_bfm_b32 => |a, b| (((1u64 << (a & 31)) - 1) as u32) << (b & 31);
    i2: v_bcnt_u32_b32 => |a, b| a.count_ones().wrapping_add(b);
    i2: v_cvt_pk_u16_u32 => |a, b| (a.min(0xffff)) | (b.min(0xffff)) << 16;
    i2: v_cvt_pk_i16_i32 => |a, b| ((a as i32).clamp(-32768, 32767) as u32 & 0xffff) | ((b as i32).clamp(-32768, 32767) as u32) << 16;
    f2raw: v_cvt_pknorm_i16_f32 => |a, b| pknorm_i16(f32::from_bits(a)) | pknorm_i16(f32::from_bits(b)) << 16;
    f2raw: v_cvt_pknorm_u16_f32 => |a, b| pknorm_u16(f32::from_bits(a)) | pknorm_u16(f32::from_bits(b)) << 16;
    f2raw: v_cvt_pkrtz_f16_f32 => |a, b| u32::from(fp::to_f16_rtz(f32::from_bits(a))) | u32::from(fp::to_f16_rtz(f32::from_bits(b))) << 16;
    h2raw: v_pack_b32_f16 => |a, b| (a & 0xffff) | b << 16;
    i3: v_bfe_u32 => |a, b, c| bfe(a, b, c, false);
    i3: v_bfe_i32 => |a, b, c| bfe(a, b, c, true);
    i3: v_bfi_b32 => |a, b, c| (a & b) | (!a & c);
    i3: v_alignbit_b32 => |a, b, c| ((u64::from(a) << 32 | u64::from(b)) >> (c & 31)) as u32;
    i3: v_alignbyte_b32 => |a, b, c| ((u64::from(a) << 32 | u64::from(b)) >> (8 * (c & 3))) as u32;
    i3: v_perm_b32 => perm;
    i3: v_xor3_b32 => |a, b, c| a ^ b ^ c;
    i3: v_or3_b32 => |a, b, c| a | b | c;
    i3: v_and_or_b32 => |a, b, c| (a & b) | c;
    i3: v_lshl_or_b32 => |a, b, c| (a << (b & 31)) | c;
    i3: v_lshl_add_u32 => |a, b, c| (a << (b & 31)).wrapping_add(c);
    i3: v_add_lshl_u32 => |a, b, c| a.wrapping_add(b) << (c & 31);
    i3: v_add3_u32 => |a, b, c| a.wrapping_add(b).wrapping_add(c);
    i3: v_xad_u32 => |a, b, c| (a ^ b).wrapping_add(c);
    i3: v_mad_i32_i24 => |a, b, c| (mul24(a) * mul24(b)).wrapping_add(i64::from(c as i32)) as u32;
    i3: v_mad_u32_u24 => |a, b, c| (u64::from(a & 0xff_ffff) * u64::from(b & 0xff_ffff)).wrapping_add(u64::from(c)) as u32;
    i3: v_min3_i32 => |a, b, c| (a as i32).min(b as i32).min(c as i32) as u32;
    i3: v_max3_i32 => |a, b, c| (a as i32).max(b as i32).max(c as i32) as u32;
    i3: v_min3_u32 => |a, b, c| a.min(b).min(c);
    i3: v_max3_u32 => |a, b, c| a.max(b).max(c);
    i3: v_med3_i32 => |a, b, c| med3_i(a as i32, b as i32, c as i32) as u32;
    i3: v_med3_u32 => med3_u;
    i3: v_sad_u8 => |a, b, c| sad_u8(a, b).wrapping_add(c);
    i3: v_sad_hi_u8 => |a, b, c| (sad_u8(a, b) << 16).wrapping_add(c);
    i3: v_sad_u16 => |a, b, c| ((a as u16).abs_diff(b as u16) as u32 + ((a >> 16) as u16).abs_diff((b >> 16) as u16) as u32).wrapping_add(c);
    i3: v_sad_u32 => |a, b, c| a.abs_diff(b).wrapping_add(c);
    i3: v_lerp_u8 => |a, b, c| (0..4).fold(0, |acc, i| acc | (((a >> (8 * i) & 0xff) + (b >> (8 * i) & 0xff) + (c >> (8 * i) & 1)) >> 1) << (8 * i));
    i3: v_cvt_pk_u8_f32 => |a, b, c| cvt_pk_u8(f32::from_bits(a), b, c);
    i3: v_msad_u8 => |a, b, c| (0..4).map(|i| { let r = (b >> (8 * i)) as u8; if r == 0 { 0 } else { ((a >> (8 * i)) as u8).abs_diff(r) as u32 } }).sum::<u32>().wrapping_add(c);
    // ---- f32 ----
    f2: v_add_f32 => |a, b| a + b;
    f2: v_sub_f32 => |a, b| a - b;
    f2: v_subrev_f32 => |a, b| b - a;
    f2: v_mul_f32 => |a, b| a * b;
    f2: v_mul_legacy_f32 => |a, b| if a == 0.0 || b == 0.0 { 0.0 } else { a * b };
    f2: v_min_f32 => |a, b| fp::min_f32(a, b, IEEE);
    f2: v_max_f32 => |a, b| fp::max_f32(a, b, IEEE);
    fma3: v_fma_f32 => |a, b, c| a.mul_add(b, c);
    fma3: v_fmamk_f32 => |a, b, c| a.mul_add(b, c);
    fma3: v_fmaak_f32 => |a, b, c| a.mul_add(b, c);
    f3: v_fma_legacy_f32 => |a, b, c| if a == 0.0 || b == 0.0 { c + 0.0 } else { a.mul_add(b, c) };
    f3: v_min3_f32 => |a, b, c| fp::min_f32(fp::min_f32(a, b, IEEE), c, IEEE);
    f3: v_max3_f32 => |a, b, c| fp::max_f32(fp::max_f32(a, b, IEEE), c, IEEE);
    f3: v_med3_f32 => |a, b, c| fp::med3_f32(a, b, c, IEEE);
    f3: v_cubeid_f32 => |a, b, c| cube(a, b, c).0;
    f3: v_cubesc_f32 => |a, b, c| cube(a, b, c).1;
    f3: v_cubetc_f32 => |a, b, c| cube(a, b, c).2;
    f3: v_cubema_f32 => |a, b, c| cube(a, b, c).3;
    f3: v_div_fixup_f32 => |a, b, c| fp::div_fixup64(f64::from(a), f64::from(b), f64::from(c), 32) as f32;
    fmac_fast: v_fmac_f32 => |a, b, c| a.mul_add(b, c);
    fmac: v_fmac_legacy_f32 => |a, b, c| if a == 0.0 || b == 0.0 { c + 0.0 } else { a.mul_add(b, c) };
    f1: v_rcp_f32 => |a| (1.0 / f64::from(a)) as f32;
    f1: v_rcp_iflag_f32 => |a| (1.0 / f64::from(a)) as f32;
    f1: v_rsq_f32 => |a| (1.0 / f64::from(a).sqrt()) as f32;
    f1: v_sqrt_f32 => |a| a.sqrt();
    f1: v_exp_f32 => |a| f64::from(a).exp2() as f32;
    f1: v_log_f32 => |a| f64::from(a).log2() as f32;
    f1: v_sin_f32 => fp::sin_rev;
    f1: v_cos_f32 => fp::cos_rev;
    f1: v_fract_f32 => fp::fract32;
    f1: v_trunc_f32 => |a| a.trunc();
    f1: v_ceil_f32 => |a| a.ceil();
    f1: v_floor_f32 => |a| a.floor();
    f1: v_rndne_f32 => |a| a.round_ties_even();
    f1: v_frexp_mant_f32 => |a| fp::frexp_mant64(f64::from(a)) as f32;
    fi1: v_frexp_exp_i32_f32 => |a| fp::frexp_exp64(f64::from(f32::from_bits(a))) as u32;
    fi1: v_cvt_i32_f32 => |a| fp::cvt_i32(f64::from(f32::from_bits(a)));
    fi1: v_cvt_u32_f32 => |a| fp::cvt_u32(f64::from(f32::from_bits(a)));
    fi1: v_cvt_rpi_i32_f32 => |a| fp::cvt_i32((f64::from(f32::from_bits(a)) + 0.5).floor());
    fi1: v_cvt_flr_i32_f32 => |a| fp::cvt_i32(f64::from(f32::from_bits(a)).floor());
    fh1: v_cvt_f16_f32 => |a| u32::from(fp::to_f16(f32::from_bits(a)));
    // ---- f16 ----
    h2: v_add_f16 => |a, b| a + b;
    h2: v_sub_f16 => |a, b| a - b;
    h2: v_subrev_f16 => |a, b| b - a;
    h2: v_mul_f16 => |a, b| a * b;
    h2: v_min_f16 => |a, b| fp::min_f32(a, b, IEEE);
    h2: v_max_f16 => |a, b| fp::max_f32(a, b, IEEE);
    h2: v_ldexp_f16 => |a, b| fp::ldexp32(a, (b as i16 as i32).clamp(-64, 64));
    h3: v_fma_f16 => |a, b, c| a.mul_add(b, c);
    h3: v_fmamk_f16 => |a, b, c| a.mul_add(b, c);
    h3: v_fmaak_f16 => |a, b, c| a.mul_add(b, c);
    h3: v_min3_f16 => |a, b, c| f64::from(fp::min_f32(fp::min_f32(a as f32, b as f32, IEEE), c as f32, IEEE));
    h3: v_max3_f16 => |a, b, c| f64::from(fp::max_f32(fp::max_f32(a as f32, b as f32, IEEE), c as f32, IEEE));
    h3: v_med3_f16 => |a, b, c| f64::from(fp::med3_f32(a as f32, b as f32, c as f32, IEEE));
    h3: v_div_fixup_f16 => |a, b, c| fp::div_fixup64(a, b, c, 16);
    h1: v_rcp_f16 => |a| 1.0 / a;
    h1: v_rsq_f16 => |a| 1.0 / a.sqrt();
    h1: v_sqrt_f16 => |a| a.sqrt();
    h1: v_exp_f16 => |a| a.exp2();
    h1: v_log_f16 => |a| a.log2();
    h1: v_sin_f16 => fp::sin_rev;
    h1: v_cos_f16 => fp::cos_rev;
    h1: v_fract_f16 => fp::fract32;
    h1: v_trunc_f16 => |a| a.trunc();
    h1: v_ceil_f16 => |a| a.ceil();
    h1: v_floor_f16 => |a| a.floor();
    h1: v_rndne_f16 => |a| a.round_ties_even();
    h1: v_frexp_mant_f16 => |a| fp::frexp_mant64(f64::from(a)) as f32;
    ih1: v_cvt_f16_u16 => |a| th(f32::from(a as u16));
    ih1: v_cvt_f16_i16 => |a| th(f32::from(a as u16 as i16));
    h_to32: v_cvt_f32_f16 => |a| a.to_f32().to_bits();
    h_to32: v_cvt_u16_f16 => |a| u32::from(a.to_f32() as u16);
    h_to32: v_cvt_i16_f16 => |a| u32::from(a.to_f32() as i16 as u16);
    h_to32: v_frexp_exp_i16_f16 => |a| u32::from(fp::frexp_exp64(f64::from(a.to_f32())) as i16 as u16);
    h_to32: v_cvt_norm_i16_f16 => |a| u32::from((a.to_f32().clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16 as u16);
    h_to32: v_cvt_norm_u16_f16 => |a| u32::from((a.to_f32().clamp(0.0, 1.0) * 65535.0).round_ties_even() as u16);
    // ---- 16-bit integer ----
    s16s: v_add_nc_u16 => |a, b, c| if c { a.saturating_add(b) } else { a.wrapping_add(b) };
    s16s: v_sub_nc_u16 => |a, b, c| if c { a.saturating_sub(b) } else { a.wrapping_sub(b) };
    s16s: v_add_nc_i16 => |a, b, c| if c { (a as i16).saturating_add(b as i16) as u16 } else { a.wrapping_add(b) };
    s16s: v_sub_nc_i16 => |a, b, c| if c { (a as i16).saturating_sub(b as i16) as u16 } else { a.wrapping_sub(b) };
    s16_2: v_mul_lo_u16 => |a, b| a.wrapping_mul(b);
    s16_2: v_lshlrev_b16 => |a, b| b << (a & 15);
    s16_2: v_lshrrev_b16 => |a, b| b >> (a & 15);
    s16_2: v_ashrrev_i16 => |a, b| ((b as i16) >> (a & 15)) as u16;
    s16_2: v_max_u16 => |a, b| a.max(b);
    s16_2: v_min_u16 => |a, b| a.min(b);
    s16_2: v_max_i16 => |a, b| (a as i16).max(b as i16) as u16;
    s16_2: v_min_i16 => |a, b| (a as i16).min(b as i16) as u16;
    s16_3: v_mad_u16 => |a, b, c| u32::from(a.wrapping_mul(b).wrapping_add(c));
    s16_3: v_mad_i16 => |a, b, c| u32::from(a.wrapping_mul(b).wrapping_add(c));
    s16_3: v_min3_u16 => |a, b, c| u32::from(a.min(b).min(c));
    s16_3: v_max3_u16 => |a, b, c| u32::from(a.max(b).max(c));
    s16_3: v_med3_u16 => |a, b, c| med3_u(a.into(), b.into(), c.into());
    s16_3: v_min3_i16 => |a, b, c| u32::from((a as i16).min(b as i16).min(c as i16) as u16);
    s16_3: v_max3_i16 => |a, b, c| u32::from((a as i16).max(b as i16).max(c as i16) as u16);
    s16_3: v_med3_i16 => |a, b, c| med3_i(i32::from(a as i16), i32::from(b as i16), i32::from(c as i16)) as u32 & 0xffff;
    h2raw: v_cvt_pknorm_i16_f16 => |a, b| pknorm_i16(hf(a)) | pknorm_i16(hf(b)) << 16;
    h2raw: v_cvt_pknorm_u16_f16 => |a, b| pknorm_u16(hf(a)) | pknorm_u16(hf(b)) << 16;
    s16_to32: v_mad_u32_u16 => |[a, b, c]: [u32; 3]| (a * b).wrapping_add(c);
    s16_to32: v_mad_i32_i16 => |[a, b, c]: [u32; 3]| (i32::from(a as i16) * i32::from(b as i16)).wrapping_add(c as i32) as u32;
    s16_to32: v_sat_pk_u8_i16 => |[a]: [u32; 1]| sat_u8(i32::from(a as i16)) | sat_u8(i32::from((a >> 16) as i16)) << 8;
    // ---- f64 ----
    d64: v_add_f64 => |[a, b]| a + b;
    d64: v_mul_f64 => |[a, b]| a * b;
    d64: v_fma_f64 => |[a, b, c]| a.mul_add(b, c);
    d64: v_min_f64 => |[a, b]| fp::min_f64(a, b, IEEE);
    d64: v_max_f64 => |[a, b]| fp::max_f64(a, b, IEEE);
    d64: v_rcp_f64 => |[a]| 1.0 / a;
    d64: v_rsq_f64 => |[a]| 1.0 / a.sqrt();
    d64: v_sqrt_f64 => |[a]| a.sqrt();
    d64: v_fract_f64 => |[a]| fp::fract64(a);
    d64: v_trunc_f64 => |[a]| a.trunc();
    d64: v_ceil_f64 => |[a]| a.ceil();
    d64: v_floor_f64 => |[a]| a.floor();
    d64: v_rndne_f64 => |[a]| a.round_ties_even();
    d64: v_frexp_mant_f64 => |[a]| fp::frexp_mant64(a);
    d64: v_div_fixup_f64 => |[a, b, c]| fp::div_fixup64(a, b, c, 64);
    d64: v_ldexp_f64 => |[a, b]| fp::ldexp64(a, b.to_bits() as u32 as i32);
    to64: v_cvt_f64_f32 => |a| f64::from(f32::from_bits(a));
    to64: v_cvt_f64_i32 => |a| f64::from(a as i32);
    to64: v_cvt_f64_u32 => f64::from;
    d64to32: v_cvt_f32_f64 => |[a]| (a as f32).to_bits();
    d64to32: v_cvt_i32_f64 => |[a]| fp::cvt_i32(a);
    d64to32: v_cvt_u32_f64 => |[a]| fp::cvt_u32(a);
    d64to32: v_frexp_exp_i32_f64 => |[a]| fp::frexp_exp64(a) as u32;
    shift64: v_lshlrev_b64 => |a, b| b << (a & 63);
    shift64: v_lshrrev_b64 => |a, b| b >> (a & 63);
    shift64: v_ashrrev_i64 => |a, b| ((b as i64) >> (a & 63)) as u64;
    // ---- carries ----
    carry: v_add_co_u32 => |a, b, _| a.overflowing_add(b);
    carry: v_sub_co_u32 => |a, b, _| a.overflowing_sub(b);
    carry: v_subrev_co_u32 => |a, b, _| b.overflowing_sub(a);
    carry: v_add_co_ci_u32 => |a, b, c| { let r = u64::from(a) + u64::from(b) + u64::from(c); (r as u32, r >> 32 != 0) };
    carry: v_sub_co_ci_u32 => |a, b, c| { let r = u64::from(a).wrapping_sub(u64::from(b)).wrapping_sub(u64::from(c)); (r as u32, r >> 32 != 0) };
    carry: v_subrev_co_ci_u32 => |a, b, c| { let r = u64::from(b).wrapping_sub(u64::from(a)).wrapping_sub(u64::from(c)); (r as u32, r >> 32 != 0) };
    // ---- packed ----
    pkf: v_pk_add_f16 => |[a, b]| th(hf(a) + hf(b));
    pkf: v_pk_mul_f16 => |[a, b]| th(hf(a) * hf(b));
    pkf: v_pk_min_f16 => |[a, b]| th(fp::min_f32(hf(a), hf(b), IEEE));
    pkf: v_pk_max_f16 => |[a, b]| th(fp::max_f32(hf(a), hf(b), IEEE));
    pkf: v_pk_fma_f16 => |[a, b, c]| u32::from(f16::from_f64(f64::from(hf(a)).mul_add(f64::from(hf(b)), f64::from(hf(c)))).to_bits());
    pki: v_pk_add_u16 => |[a, b]| a.wrapping_add(b);
    pki: v_pk_sub_u16 => |[a, b]| a.wrapping_sub(b);
    pki: v_pk_add_i16 => |[a, b]| a.wrapping_add(b);
    pki: v_pk_sub_i16 => |[a, b]| a.wrapping_sub(b);
    pki: v_pk_mul_lo_u16 => |[a, b]| a.wrapping_mul(b);
    pki: v_pk_lshlrev_b16 => |[a, b]| b << (a & 15);
    pki: v_pk_lshrrev_b16 => |[a, b]| b >> (a & 15);
    pki: v_pk_ashrrev_i16 => |[a, b]| (((b << 16) as i32 >> 16) >> (a & 15)) as u32;
    pki: v_pk_max_u16 => |[a, b]| a.max(b);
    pki: v_pk_min_u16 => |[a, b]| a.min(b);
    pki: v_pk_max_i16 => |[a, b]| (a as i16).max(b as i16) as u16 as u32;
    pki: v_pk_min_i16 => |[a, b]| (a as i16).min(b as i16) as u16 as u32;
    pki: v_pk_mad_u16 => |[a, b, c]| a.wrapping_mul(b).wrapping_add(c);
    pki: v_pk_mad_i16 => |[a, b, c]| a.wrapping_mul(b).wrapping_add(c);
    // ---- dot products (VOP3P sources are whole dwords) ----
    dot: v_dot2_f32_f16 => dot2_f16;
    dot: v_dot2_i32_i16 => |a, b, c| (i32::from(a as i16) * i32::from(b as i16)).wrapping_add(i32::from((a >> 16) as i16) * i32::from((b >> 16) as i16)).wrapping_add(c as i32) as u32;
    dot: v_dot2_u32_u16 => |a, b, c| (a & 0xffff).wrapping_mul(b & 0xffff).wrapping_add((a >> 16) * (b >> 16)).wrapping_add(c);
    dot: v_dot4_i32_i8 => |a, b, c| (0..4).fold(c as i32, |acc, i| acc.wrapping_add(i32::from((a >> (8 * i)) as i8) * i32::from((b >> (8 * i)) as i8))) as u32;
    dot: v_dot4_u32_u8 => |a, b, c| (0..4).fold(c, |acc, i| acc.wrapping_add((a >> (8 * i) & 0xff) * (b >> (8 * i) & 0xff)));
    dot: v_dot8_i32_i4 => |a, b, c| (0..8).fold(c as i32, |acc, i| acc.wrapping_add((((a >> (4 * i)) << 28) as i32 >> 28) * (((b >> (4 * i)) << 28) as i32 >> 28))) as u32;
    dot: v_dot8_u32_u4 => |a, b, c| (0..8).fold(c, |acc, i| acc.wrapping_add((a >> (4 * i) & 0xf) * (b >> (4 * i) & 0xf)));
    dotc: v_dot2c_f32_f16 => dot2_f16;
    dotc: v_dot4c_i32_i8 => |a, b, c| (0..4).fold(c as i32, |acc, i| acc.wrapping_add(i32::from((a >> (8 * i)) as i8) * i32::from((b >> (8 * i)) as i8))) as u32;
    // ---- compares: f32 ----
    cmp_f: v_cmp_f_f32 => |_, _| false;
    cmp_f: v_cmp_lt_f32 => |a, b| a < b;
    cmp_f: v_cmp_eq_f32 => |a, b| a == b;
    cmp_f: v_cmp_le_f32 => |a, b| a <= b;
    cmp_f: v_cmp_gt_f32 => |a, b| a > b;
    cmp_f: v_cmp_lg_f32 => |a, b| a < b || a > b;
    cmp_f: v_cmp_ge_f32 => |a, b| a >= b;
    cmp_f: v_cmp_o_f32 => |a, b| !a.is_nan() && !b.is_nan();
    cmp_f: v_cmp_u_f32 => |a, b| a.is_nan() || b.is_nan();
    cmp_f: v_cmp_nge_f32 => |a, b| !(a >= b);
    cmp_f: v_cmp_nlg_f32 => |a, b| !(a < b || a > b);
    cmp_f: v_cmp_ngt_f32 => |a, b| !(a > b);
    cmp_f: v_cmp_nle_f32 => |a, b| !(a <= b);
    cmp_f: v_cmp_neq_f32 => |a, b| a != b;
    cmp_f: v_cmp_nlt_f32 => |a, b| !(a < b);
    cmp_f: v_cmp_tru_f32 => |_, _| true;
    cmp_h: v_cmp_f_f16 => |_, _| false;
    cmp_h: v_cmp_lt_f16 => |a, b| a < b;
    cmp_h: v_cmp_eq_f16 => |a, b| a == b;
    cmp_h: v_cmp_le_f16 => |a, b| a <= b;
    cmp_h: v_cmp_gt_f16 => |a, b| a > b;
    cmp_h: v_cmp_lg_f16 => |a, b| a < b || a > b;
    cmp_h: v_cmp_ge_f16 => |a, b| a >= b;
    cmp_h: v_cmp_o_f16 => |a, b| !a.is_nan() && !b.is_nan();
    cmp_h: v_cmp_u_f16 => |a, b| a.is_nan() || b.is_nan();
    cmp_h: v_cmp_nge_f16 => |a, b| !(a >= b);
    cmp_h: v_cmp_nlg_f16 => |a, b| !(a < b || a > b);
    cmp_h: v_cmp_ngt_f16 => |a, b| !(a > b);
    cmp_h: v_cmp_nle_f16 => |a, b| !(a <= b);
    cmp_h: v_cmp_neq_f16 => |a, b| a != b;
    cmp_h: v_cmp_nlt_f16 => |a, b| !(a < b);
    cmp_h: v_cmp_tru_f16 => |_, _| true;
    cmp_i: v_cmp_class_f16 => |a, b| fp::class16(f16::from_bits(a as u16)) & b != 0;
    cmp_d: v_cmp_f_f64 => |_, _| false;
    cmp_d: v_cmp_lt_f64 => |a, b| a < b;
    cmp_d: v_cmp_eq_f64 => |a, b| a == b;
    cmp_d: v_cmp_le_f64 => |a, b| a <= b;
    cmp_d: v_cmp_gt_f64 => |a, b| a > b;
    cmp_d: v_cmp_lg_f64 => |a, b| a < b || a > b;
    cmp_d: v_cmp_ge_f64 => |a, b| a >= b;
    cmp_d: v_cmp_o_f64 => |a, b| !a.is_nan() && !b.is_nan();
    cmp_d: v_cmp_u_f64 => |a, b| a.is_nan() || b.is_nan();
    cmp_d: v_cmp_nge_f64 => |a, b| !(a >= b);
    cmp_d: v_cmp_nlg_f64 => |a, b| !(a < b || a > b);
    cmp_d: v_cmp_ngt_f64 => |a, b| !(a > b);
    cmp_d: v_cmp_nle_f64 => |a, b| !(a <= b);
    cmp_d: v_cmp_neq_f64 => |a, b| a != b;
    cmp_d: v_cmp_nlt_f64 => |a, b| !(a < b);
    cmp_d: v_cmp_tru_f64 => |_, _| true;
    class_d: v_cmp_class_f64 => ();
    cmp_i: v_cmp_f_i32 => |_, _| false;
    cmp_i: v_cmp_lt_i32 => |a, b| (a as i32) < (b as i32);
    cmp_i: v_cmp_eq_i32 => |a, b| a == b;
    cmp_i: v_cmp_le_i32 => |a, b| (a as i32) <= (b as i32);
    cmp_i: v_cmp_gt_i32 => |a, b| (a as i32) > (b as i32);
    cmp_i: v_cmp_ne_i32 => |a, b| a != b;
    cmp_i: v_cmp_ge_i32 => |a, b| (a as i32) >= (b as i32);
    cmp_i: v_cmp_t_i32 => |_, _| true;
    cmp_i: v_cmp_f_u32 => |_, _| false;
    cmp_i: v_cmp_lt_u32 => |a, b| a < b;
    cmp_i: v_cmp_eq_u32 => |a, b| a == b;
    cmp_i: v_cmp_le_u32 => |a, b| a <= b;
    cmp_i: v_cmp_gt_u32 => |a, b| a > b;
    cmp_i: v_cmp_ne_u32 => |a, b| a != b;
    cmp_i: v_cmp_ge_u32 => |a, b| a >= b;
    cmp_i: v_cmp_t_u32 => |_, _| true;
    cmp_i16: v_cmp_lt_i16 => |a, b| (a as i16) < (b as i16);
    cmp_i16: v_cmp_eq_i16 => |a, b| a == b;
    cmp_i16: v_cmp_le_i16 => |a, b| (a as i16) <= (b as i16);
    cmp_i16: v_cmp_gt_i16 => |a, b| (a as i16) > (b as i16);
    cmp_i16: v_cmp_ne_i16 => |a, b| a != b;
    cmp_i16: v_cmp_ge_i16 => |a, b| (a as i16) >= (b as i16);
    cmp_i16: v_cmp_lt_u16 => |a, b| a < b;
    cmp_i16: v_cmp_eq_u16 => |a, b| a == b;
    cmp_i16: v_cmp_le_u16 => |a, b| a <= b;
    cmp_i16: v_cmp_gt_u16 => |a, b| a > b;
    cmp_i16: v_cmp_ne_u16 => |a, b| a != b;
    cmp_i16: v_cmp_ge_u16 => |a, b| a >= b;
    cmp_q: v_cmp_f_i64 => |_, _| false;
    cmp_q: v_cmp_lt_i64 => |a, b| (a as i64) < (b as i64);
    cmp_q: v_cmp_eq_i64 => |a, b| a == b;
    cmp_q: v_cmp_le_i64 => |a, b| (a as i64) <= (b as i64);
    cmp_q: v_cmp_gt_i64 => |a, b| (a as i64) > (b as i64);
    cmp_q: v_cmp_ne_i64 => |a, b| a != b;
    cmp_q: v_cmp_ge_i64 => |a, b| (a as i64) >= (b as i64);
    cmp_q: v_cmp_t_i64 => |_, _| true;
    cmp_q: v_cmp_f_u64 => |_, _| false;
    cmp_q: v_cmp_lt_u64 => |a, b| a < b;
    cmp_q: v_cmp_eq_u64 => |a, b| a == b;
    cmp_q: v_cmp_le_u64 => |a, b| a <= b;
    cmp_q: v_cmp_gt_u64 => |a, b| a > b;
    cmp_q: v_cmp_ne_u64 => |a, b| a != b;
    cmp_q: v_cmp_ge_u64 => |a, b| a >= b;
    cmp_q: v_cmp_t_u64 => |_, _| true;
}

#[inline(always)]
fn pkf<const N: usize, const S: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn([u32; S]) -> u32) -> R {
    pk::<N, S>(w, u, true, f)
}

#[inline(always)]
fn pki<const N: usize, const S: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn([u32; S]) -> u32) -> R {
    pk::<N, S>(w, u, false, f)
}

/// Dot products: whole-dword sources (op_sel defaults), `c` the accumulator.
#[inline(always)]
fn dot<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32, u32, u32) -> u32) -> R {
    let (a, b, c) = (w.vread(u.s[0]), w.vread(u.s[1]), w.vread(u.s[2]));
    let out: [u32; N] = std::array::from_fn(|l| f(a[l], b[l], c[l]));
    let m = w.exec();
    w.vwrite(u.d[0], m, &out);
    Ctl::Next
}

/// VOP2 dot products accumulating into the destination.
#[inline(always)]
fn dotc<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn(u32, u32, u32) -> u32) -> R {
    let acc = w.vread(u.d[0]);
    let (s, mask) = sources::<N, 2>(w, u, K::I32);
    let out: [u32; N] = std::array::from_fn(|l| f(s[0][l], s[1][l], acc[l]));
    finish(w, u, K::I32, out, mask)
}

/// `v_cndmask_b32`: `s[2]` is the lane mask (VCC for VOP2). A move: float sign modifiers
/// apply, denormal flushing does not (integers pass through it).
pub fn v_cndmask_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let sel = w.read_mask(u.s[2]);
    if plain(u) {
        let (a, b) = (src(w, u.s[0]).lanes(), src(w, u.s[1]).lanes());
        let out: [u32; N] = std::array::from_fn(|l| if sel.has(l) { b[l] } else { a[l] });
        return put(w, u, &out);
    }
    let (s, mask) = sources::<N, 2>(w, u, K::B32);
    let out: [u32; N] = std::array::from_fn(|l| if sel.has(l) { s[1][l] } else { s[0][l] });
    finish(w, u, K::I32, out, mask)
}

/// `v_ldexp_f32`: `s0 * 2^s1`, the exponent a signed integer (never flushed as a denormal).
pub fn v_ldexp_f32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let (s, mask) = sources::<N, 2>(w, u, K::F32I32);
    let out: [u32; N] =
        std::array::from_fn(|l| fp::ldexp32(f32::from_bits(s[0][l]), s[1][l] as i32).to_bits());
    finish(w, u, K::F32, out, mask)
}

/// `v_cmp_class_f32`: whether `s0`'s class is in the mask `s1` (an integer, never flushed).
pub fn v_cmp_class_f32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let (s, _) = sources::<N, 2>(w, u, K::F32I32);
    let bits = Mask::from_fn::<N>(|l| fp::class32(f32::from_bits(s[0][l])) & s[1][l] != 0);
    write_mask(w, u, bits)
}

/// `v_fmac_f16`.
pub fn v_fmac_f16<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    hmac(w, u)
}

/// `v_pk_fmac_f16`: packed multiply-accumulate into the destination.
pub fn v_pk_fmac_f16<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let (a, b, c) = (w.vread(u.s[0]), w.vread(u.s[1]), w.vread(u.d[0]));
    let fma = |x: u32, y: u32, z: u32| {
        u32::from(
            f16::from_f64(f64::from(hf(x)).mul_add(f64::from(hf(y)), f64::from(hf(z)))).to_bits(),
        )
    };
    let out: [u32; N] = std::array::from_fn(|l| {
        fma(a[l] & 0xffff, b[l] & 0xffff, c[l] & 0xffff)
            | fma(a[l] >> 16, b[l] >> 16, c[l] >> 16) << 16
    });
    let m = w.exec();
    w.vwrite(u.d[0], m, &out);
    Ctl::Next
}

/// `v_mad_u64_u32`: 64-bit result in `d[0]`, carry mask in `d[1]`.
pub fn v_mad_u64_u32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    mad64(w, u, false)
}

/// `v_mad_i64_i32`.
pub fn v_mad_i64_i32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    mad64(w, u, true)
}

fn mad64<const N: usize>(w: &mut Wave<N>, u: &Uop, signed: bool) -> R {
    let (a, b, c) = (w.vread(u.s[0]), w.vread(u.s[1]), w.vread64(u.s[2]));
    let mut out = [0u64; N];
    let mut cout = Mask::NONE;
    for l in 0..N {
        let (r, o) = if signed {
            let p = i128::from(a[l] as i32) * i128::from(b[l] as i32) + i128::from(c[l] as i64);
            (p as u64, p != i128::from(p as i64))
        } else {
            let p = u128::from(a[l]) * u128::from(b[l]) + u128::from(c[l]);
            (p as u64, p >> 64 != 0)
        };
        out[l] = r;
        cout.0 |= u64::from(o) << l;
    }
    let exec = w.exec();
    w.vwrite64(u.d[0], exec, &out);
    w.write_mask(u.d[1], cout & exec);
    Ctl::Next
}

/// `v_div_scale_f32`: result in `d[0]`, VCC-like mask in `d[1]`.
pub fn v_div_scale_f32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let (s, _) = sources::<N, 3>(w, u, K::F32);
    let mut out = [0u32; N];
    let mut vcc = Mask::NONE;
    for l in 0..N {
        let f = |x: u32| f64::from(f32::from_bits(x));
        let (d, c) = fp::div_scale64(f(s[0][l]), f(s[1][l]), f(s[2][l]), 32);
        out[l] = (d as f32).to_bits();
        vcc.0 |= u64::from(c) << l;
    }
    let exec = w.exec();
    w.vwrite(u.d[0], exec, &out);
    w.write_mask(u.d[1], vcc & exec);
    Ctl::Next
}

/// `v_div_scale_f64`.
pub fn v_div_scale_f64<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let s = sources64::<N, 3>(w, u, true);
    let mut out = [0u64; N];
    let mut vcc = Mask::NONE;
    for l in 0..N {
        let (d, c) = fp::div_scale64(
            f64::from_bits(s[0][l]),
            f64::from_bits(s[1][l]),
            f64::from_bits(s[2][l]),
            64,
        );
        out[l] = d.to_bits();
        vcc.0 |= u64::from(c) << l;
    }
    let exec = w.exec();
    w.vwrite64(u.d[0], exec, &out);
    w.write_mask(u.d[1], vcc & exec);
    Ctl::Next
}

/// `v_div_fmas_f32`: reads VCC.
pub fn v_div_fmas_f32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let vcc = w.vcc();
    let (s, mask) = sources::<N, 3>(w, u, K::F32);
    let out: [u32; N] = std::array::from_fn(|l| {
        let f = |x: u32| f64::from(f32::from_bits(x));
        (fp::div_fmas64(f(s[0][l]), f(s[1][l]), f(s[2][l]), vcc.has(l), 32) as f32).to_bits()
    });
    finish(w, u, K::F32, out, mask)
}

/// `v_div_fmas_f64`: reads VCC.
pub fn v_div_fmas_f64<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let vcc = w.vcc();
    let s = sources64::<N, 3>(w, u, true);
    let out: [u64; N] = std::array::from_fn(|l| {
        fp::div_fmas64(
            f64::from_bits(s[0][l]),
            f64::from_bits(s[1][l]),
            f64::from_bits(s[2][l]),
            vcc.has(l),
            64,
        )
        .to_bits()
    });
    let m = w.exec();
    w.vwrite64(u.d[0], m, &out);
    Ctl::Next
}

/// `v_readlane_b32`: lane `s[1]` of VGPR `s[0]` into an SGPR.
pub fn v_readlane_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let lane = w.sread(u.s[1]) as usize % N;
    let v = match u.s[0] {
        Opnd::V(r) => w.lane(r, lane),
        o => w.sread(o),
    };
    w.swrite(u.d[0], v);
    Ctl::Next
}

/// `v_readfirstlane_b32`: the first active lane (lane 0 when EXEC is 0).
pub fn v_readfirstlane_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let lane = w.exec().lowest().unwrap_or(0);
    let v = match u.s[0] {
        Opnd::V(r) => w.lane(r, lane),
        o => w.sread_b32(o),
    };
    w.swrite(u.d[0], v);
    Ctl::Next
}

/// `v_writelane_b32`: a scalar into lane `s[1]` of the destination VGPR (ignores EXEC).
pub fn v_writelane_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let v = w.sread_b32(u.s[0]);
    let lane = w.sread(u.s[1]) as usize % N;
    if let Opnd::V(r) = u.d[0] {
        w.v[r as usize][lane] = v;
    }
    Ctl::Next
}

/// `v_mbcnt_lo_u32_b32`: set bits of `s0` below this lane, plus `s1`.
pub fn v_mbcnt_lo_u32_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let (s, mask) = sources::<N, 2>(w, u, K::I32);
    let out: [u32; N] = std::array::from_fn(|l| {
        (s[0][l] & ((1u64 << l) - 1) as u32)
            .count_ones()
            .wrapping_add(s[1][l])
    });
    finish(w, u, K::I32, out, mask)
}

/// `v_mbcnt_hi_u32_b32`: set bits of `s0` (the mask's high half) below this lane's bit
/// 32 + i, plus `s1`; lanes 32-63 only exist in wave64, so it adds nothing in wave32.
pub fn v_mbcnt_hi_u32_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let (s, mask) = sources::<N, 2>(w, u, K::I32);
    let out: [u32; N] = std::array::from_fn(|l| {
        let below = if l > 32 {
            (u64::from(s[0][l]) & ((1u64 << (l - 32)) - 1)).count_ones()
        } else {
            0
        };
        below.wrapping_add(s[1][l])
    });
    finish(w, u, K::I32, out, mask)
}

fn permlane<const N: usize>(w: &mut Wave<N>, u: &Uop, cross: bool) -> R {
    let Opnd::V(src) = u.s[0] else {
        return Ctl::Next;
    };
    let (sel_lo, sel_hi) = (w.sread(u.s[1]), w.sread(u.s[2]));
    let exec = w.exec();
    let fi = u.m.op_sel & 1 != 0;
    let bound_ctrl = u.m.op_sel & 2 != 0;
    let old = w.vread(u.d[0]);
    let srcv = w.v[src as usize];
    let out: [u32; N] = std::array::from_fn(|l| {
        let i = l & 15;
        let sel = if i < 8 {
            sel_lo >> (4 * i)
        } else {
            sel_hi >> (4 * (i - 8))
        } & 15;
        // Rows of 16 within each group of 32 lanes; permlanex16 reads the other row.
        let row = (l & !31) | if cross { (l & 16) ^ 16 } else { l & 16 };
        let s = row + sel as usize;
        if fi || exec.has(s) {
            srcv[s]
        } else if bound_ctrl {
            0
        } else {
            old[l]
        }
    });
    w.vwrite(u.d[0], exec, &out);
    Ctl::Next
}

/// `v_permlane16_b32`.
pub fn v_permlane16_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    permlane(w, u, false)
}

/// `v_permlanex16_b32`.
pub fn v_permlanex16_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    permlane(w, u, true)
}

/// `v_swap_b32`: exchanges two VGPRs in active lanes.
pub fn v_swap_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let (a, b) = (w.vread(u.d[0]), w.vread(u.s[0]));
    let m = w.exec();
    w.vwrite(u.d[0], m, &b);
    w.vwrite(u.s[0], m, &a);
    Ctl::Next
}

fn rel(r: Opnd, m0: u32) -> Opnd {
    match r {
        Opnd::V(n) => Opnd::V(((u32::from(n) + m0) % 256) as u16),
        o => o,
    }
}

/// `v_movrels_b32`: reads the VGPR `M0` after the source.
pub fn v_movrels_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let v = w.vread(rel(u.s[0], w.m0()));
    let m = w.exec();
    w.vwrite(u.d[0], m, &v);
    Ctl::Next
}

/// `v_movreld_b32`: writes the VGPR `M0` after the destination.
pub fn v_movreld_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let v = w.vread(u.s[0]);
    let m = w.exec();
    let d = rel(u.d[0], w.m0());
    w.vwrite(d, m, &v);
    Ctl::Next
}

/// `v_movrelsd_b32`: both indexed by `M0`.
pub fn v_movrelsd_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let m0 = w.m0();
    let v = w.vread(rel(u.s[0], m0));
    let m = w.exec();
    w.vwrite(rel(u.d[0], m0), m, &v);
    Ctl::Next
}

/// `v_nop`, `v_pipeflush`, `v_clrexcp`.
pub fn v_nop<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    Ctl::Next
}

/// `v_trig_preop_f64`: 53 bits of 2/π starting at bit `s1 + exponent adjustment`, scaled.
pub fn v_trig_preop_f64<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let s = sources64::<N, 2>(w, u, true);
    let out: [u64; N] = std::array::from_fn(|l| {
        crate::float::trig::preop(f64::from_bits(s[0][l]), s[1][l] as u32).to_bits()
    });
    let m = w.exec();
    w.vwrite64(u.d[0], m, &out);
    Ctl::Next
}

impl<const N: usize> Handlers<N> {
    /// Handlers defined outside the table macro.
    pub const EXTRA: &'static [(Op, Handler<N>)] = &[
        (op!(v_cndmask_b32), v_cndmask_b32::<N> as Handler<N>),
        (op!(v_ldexp_f32), v_ldexp_f32::<N> as Handler<N>),
        (op!(v_cmp_class_f32), v_cmp_class_f32::<N> as Handler<N>),
        (op!(v_fmac_f16), v_fmac_f16::<N> as Handler<N>),
        (op!(v_pk_fmac_f16), v_pk_fmac_f16::<N> as Handler<N>),
        (op!(v_mad_u64_u32), v_mad_u64_u32::<N> as Handler<N>),
        (op!(v_mad_i64_i32), v_mad_i64_i32::<N> as Handler<N>),
        (op!(v_div_scale_f32), v_div_scale_f32::<N> as Handler<N>),
        (op!(v_div_scale_f64), v_div_scale_f64::<N> as Handler<N>),
        (op!(v_div_fmas_f32), v_div_fmas_f32::<N> as Handler<N>),
        (op!(v_div_fmas_f64), v_div_fmas_f64::<N> as Handler<N>),
        (op!(v_readlane_b32), v_readlane_b32::<N> as Handler<N>),
        (op!(v_readfirstlane_b32), v_readfirstlane_b32::<N> as Handler<N>),
        (op!(v_writelane_b32), v_writelane_b32::<N> as Handler<N>),
        (op!(v_mbcnt_lo_u32_b32), v_mbcnt_lo_u32_b32::<N> as Handler<N>),
        (op!(v_mbcnt_hi_u32_b32), v_mbcnt_hi_u32_b32::<N> as Handler<N>),
        (op!(v_permlane16_b32), v_permlane16_b32::<N> as Handler<N>),
        (op!(v_permlanex16_b32), v_permlanex16_b32::<N> as Handler<N>),
        (op!(v_swap_b32), v_swap_b32::<N> as Handler<N>),
        (op!(v_movrels_b32), v_movrels_b32::<N> as Handler<N>),
        (op!(v_movreld_b32), v_movreld_b32::<N> as Handler<N>),
        (op!(v_movrelsd_b32), v_movrelsd_b32::<N> as Handler<N>),
        (op!(v_nop), v_nop::<N> as Handler<N>),
        (op!(v_pipeflush), v_nop::<N> as Handler<N>),
        (op!(v_clrexcp), v_nop::<N> as Handler<N>),
        (op!(v_fma_mix_f32), v_fma_mix_f32::<N> as Handler<N>),
        (op!(v_fma_mixlo_f16), v_fma_mixlo_f16::<N> as Handler<N>),
        (op!(v_fma_mixhi_f16), v_fma_mixhi_f16::<N> as Handler<N>),
        (op!(v_trig_preop_f64), v_trig_preop_f64::<N> as Handler<N>),
    ];
}

// ---- GFX9 (CDNA) ----

/// f32 multiply then add, each rounded (`v_mad_f32` and friends: unfused).
fn mad32(a: f32, b: f32, c: f32) -> f32 {
    let p = a * b;
    p + c
}

/// `v_mul_legacy_f32`'s product (0 times anything, even infinity or NaN, is 0) then an add.
fn mad_legacy32(a: f32, b: f32, c: f32) -> f32 {
    let p = if a == 0.0 || b == 0.0 { 0.0 } else { a * b };
    p + c
}

/// f16 multiply then add, each rounded to f16 (`v_mad_f16`, `v_mac_f16`, ...).
fn mad16(a: f64, b: f64, c: f64) -> f64 {
    f16::from_f64(a * b).to_f64() + c
}

/// `v_mac_f16`: [`mad16`] into the destination's low half.
pub fn v_mac_f16<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let acc = w.vread(u.d[0]);
    let (s, mask) = sources::<N, 2>(w, u, K::F16);
    let out: [u32; N] = std::array::from_fn(|l| {
        let r = mad16(
            f64::from(fp::from_f16(s[0][l])),
            f64::from(fp::from_f16(s[1][l])),
            f64::from(fp::from_f16(acc[l])),
        );
        u32::from(f16::from_f64(r).to_bits())
    });
    finish(w, u, K::F16, out, mask)
}

/// `v_fmac_f64`: `d = a * b + d`, fused.
pub fn v_fmac_f64<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let s = sources64::<N, 2>(w, u, true);
    let acc = w.vread64(u.d[0]);
    let out: [u64; N] = std::array::from_fn(|l| {
        f64::from_bits(s[0][l])
            .mul_add(f64::from_bits(s[1][l]), f64::from_bits(acc[l]))
            .to_bits()
    });
    let m = w.exec();
    w.vwrite64(u.d[0], m, &out);
    Ctl::Next
}

/// gfx940's `v_mov_b64`: a 64-bit move (its DPP form moves whole rows' lanes, as 32-bit
/// moves do).
pub fn v_mov_b64<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let m = w.exec();
    if let LaneMode::Dpp(d) = u.lanes {
        // Each half through the same lane movement.
        let (lo, hi) = match u.s[0] {
            Opnd::V(r) => (w.v[r as usize], w.v[r as usize + 1]),
            o => {
                let v = w.sread64(o);
                ([v as u32; N], [(v >> 32) as u32; N])
            }
        };
        let (lo, mask) = dpp(&lo, m, &d);
        let (hi, _) = dpp(&hi, m, &d);
        if let Opnd::V(r) = u.d[0] {
            w.vwrite(Opnd::V(r), mask, &lo);
            w.vwrite(Opnd::V(r + 1), mask, &hi);
        }
        return Ctl::Next;
    }
    let v = w.vread64(u.s[0]);
    w.vwrite64(u.d[0], m, &v);
    Ctl::Next
}

/// Packed f32 operations (gfx90a's `v_pk_fma/mul/add_f32`): 64-bit sources whose dwords
/// `op_sel` (low result) and `op_sel_hi` (high result) pick; `neg_lo`/`neg_hi` negate each
/// half's sources; `clamp` clamps both results.
fn pk32<const N: usize, const S: usize>(w: &mut Wave<N>, u: &Uop, f: impl Fn([f32; S]) -> f32) -> R {
    let s: [[u64; N]; S] = std::array::from_fn(|i| w.vread64(u.s[i]));
    let dx10 = w.mode >> 8 & 1 != 0;
    let half = |l: usize, hi: bool| -> u32 {
        let args: [f32; S] = std::array::from_fn(|i| {
            let sel = if hi { u.m.op_sel_hi } else { u.m.op_sel } >> i & 1 != 0;
            let x = f32::from_bits(if sel { (s[i][l] >> 32) as u32 } else { s[i][l] as u32 });
            if (if hi { u.m.neg_hi } else { u.m.neg }) >> i & 1 != 0 {
                -x
            } else {
                x
            }
        });
        let r = f(args);
        if u.m.clamp {
            fp::clamp_f32(r, dx10).to_bits()
        } else {
            r.to_bits()
        }
    };
    let out: [u64; N] =
        std::array::from_fn(|l| u64::from(half(l, false)) | u64::from(half(l, true)) << 32);
    let m = w.exec();
    w.vwrite64(u.d[0], m, &out);
    Ctl::Next
}

/// `v_pk_mov_b32`: the low result is source 0's dword `op_sel[0]`, the high one source 1's
/// dword `op_sel[1]`.
pub fn v_pk_mov_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let (a, b) = (w.vread64(u.s[0]), w.vread64(u.s[1]));
    let pick = |v: u64, hi: bool| if hi { v >> 32 } else { v & 0xffff_ffff };
    let out: [u64; N] = std::array::from_fn(|l| {
        pick(a[l], u.m.op_sel & 1 != 0) | pick(b[l], u.m.op_sel & 2 != 0) << 32
    });
    let m = w.exec();
    w.vwrite64(u.d[0], m, &out);
    Ctl::Next
}

/// gfx940's `v_lshl_add_u64`: `(a << b) + c` on 64 bits (the shift amount a 32-bit source).
pub fn v_lshl_add_u64<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let a = w.vread64(u.s[0]);
    let b = w.vread(u.s[1]);
    let c = w.vread64(u.s[2]);
    let out: [u64; N] = std::array::from_fn(|l| (a[l] << (b[l] & 63)).wrapping_add(c[l]));
    let m = w.exec();
    w.vwrite64(u.d[0], m, &out);
    Ctl::Next
}

handlers! {
    /// Operations of the GFX9-layout instruction sets (gfx90a, gfx942) that gfx1030 lacks.
    GFX9_TABLE;
    f3: v_mad_f32 => mad32;
    f3: v_madak_f32 => mad32;
    f3: v_madmk_f32 => mad32;
    f3: v_mad_legacy_f32 => mad_legacy32;
    fmac: v_mac_f32 => mad32;
    h3: v_mad_f16 => mad16;
    h3: v_mad_legacy_f16 => mad16;
    h3: v_madak_f16 => mad16;
    h3: v_madmk_f16 => mad16;
    h3: v_fma_legacy_f16 => |a, b, c| a.mul_add(b, c);
    h3: v_div_fixup_legacy_f16 => |a, b, c| fp::div_fixup64(a, b, c, 16);
    s16_3: v_mad_legacy_u16 => |a, b, c| u32::from(a.wrapping_mul(b).wrapping_add(c));
    s16_3: v_mad_legacy_i16 => |a, b, c| u32::from(a.wrapping_mul(b).wrapping_add(c));
    s16s: v_subrev_u16 => |a, b, c| if c { b.saturating_sub(a) } else { b.wrapping_sub(a) };
    f1: v_exp_legacy_f32 => |a| f64::from(a).exp2() as f32;
    f1: v_log_legacy_f32 => |a| f64::from(a).log2() as f32;
    dotc: v_dot2c_i32_i16 => |a, b, c| (i32::from(a as i16) * i32::from(b as i16)).wrapping_add(i32::from((a >> 16) as i16) * i32::from((b >> 16) as i16)).wrapping_add(c as i32) as u32;
    dotc: v_dot8c_i32_i4 => |a, b, c| (0..8).fold(c as i32, |acc, i| acc.wrapping_add((((a >> (4 * i)) << 28) as i32 >> 28) * (((b >> (4 * i)) << 28) as i32 >> 28))) as u32;
    pk32: v_pk_fma_f32 => |[a, b, c]| a.mul_add(b, c);
    pk32: v_pk_mul_f32 => |[a, b]| a * b;
    pk32: v_pk_add_f32 => |[a, b]| a + b;
    cmp_i16: v_cmp_f_i16 => |_, _| false;
    cmp_i16: v_cmp_t_i16 => |_, _| true;
    cmp_i16: v_cmp_f_u16 => |_, _| false;
    cmp_i16: v_cmp_t_u16 => |_, _| true;
}

impl<const N: usize> Handlers<N> {
    /// GFX9-only operations defined outside the table macro, and GFX9's names for gfx10
    /// operations (`v_add_u32` is gfx10's `v_add_nc_u32`, `v_addc_co_u32` its
    /// `v_add_co_ci_u32`, ...).
    pub const GFX9_EXTRA: &'static [(Op, Handler<N>)] = &[
        (op!(v_mac_f16), v_mac_f16::<N> as Handler<N>),
        (op!(v_fmac_f64), v_fmac_f64::<N> as Handler<N>),
        (op!(v_pk_mov_b32), v_pk_mov_b32::<N> as Handler<N>),
        (op!(v_add_u32), v_add_nc_u32::<N> as Handler<N>),
        (op!(v_sub_u32), v_sub_nc_u32::<N> as Handler<N>),
        (op!(v_subrev_u32), v_subrev_nc_u32::<N> as Handler<N>),
        (op!(v_add_i32), v_add_nc_i32::<N> as Handler<N>),
        (op!(v_sub_i32), v_sub_nc_i32::<N> as Handler<N>),
        (op!(v_add_u16), v_add_nc_u16::<N> as Handler<N>),
        (op!(v_sub_u16), v_sub_nc_u16::<N> as Handler<N>),
        (op!(v_add_i16), v_add_nc_i16::<N> as Handler<N>),
        (op!(v_sub_i16), v_sub_nc_i16::<N> as Handler<N>),
        (op!(v_addc_co_u32), v_add_co_ci_u32::<N> as Handler<N>),
        (op!(v_subb_co_u32), v_sub_co_ci_u32::<N> as Handler<N>),
        (op!(v_subbrev_co_u32), v_subrev_co_ci_u32::<N> as Handler<N>),
        (op!(v_mov_b64), v_mov_b64::<N> as Handler<N>),
        (op!(v_lshl_add_u64), v_lshl_add_u64::<N> as Handler<N>),
    ];
}
