//! Floating point as the RDNA2 ISA defines it where it differs from plain IEEE host
//! arithmetic: min/max under IEEE mode, clamp (DX10) and output modifiers, class tests,
//! frexp/ldexp, conversions with the hardware's saturation, the division helpers
//! (`v_div_scale`, `v_div_fmas`, `v_div_fixup`), and transcendentals. Basic arithmetic is the
//! host's (IEEE round-to-nearest-even with denormals, what kernels' descriptors ask for).
//!
//! Transcendentals are computed in double precision and rounded once, so they are within
//! 1 ulp, inside what AMD documents for the hardware instructions (ocml's results built on
//! them then match the host within HIP's bounds). Not for instruction decoding or lanes.

pub mod trig;

use half::f16;

/// IEEE-mode `v_max_f32`: a signalling NaN gives a quiet NaN, a quiet NaN loses to a number,
/// and -0 < +0.
pub fn max_f32(a: f32, b: f32, ieee: bool) -> f32 {
    if ieee && (is_snan32(a) || is_snan32(b)) {
        return quiet32(if is_snan32(a) { a } else { b });
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return if a.is_sign_negative() { b } else { a };
    }
    if a > b {
        a
    } else {
        b
    }
}

/// IEEE-mode `v_min_f32`.
pub fn min_f32(a: f32, b: f32, ieee: bool) -> f32 {
    if ieee && (is_snan32(a) || is_snan32(b)) {
        return quiet32(if is_snan32(a) { a } else { b });
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return if a.is_sign_negative() { a } else { b };
    }
    if a < b {
        a
    } else {
        b
    }
}

/// `v_max_f64`.
pub fn max_f64(a: f64, b: f64, ieee: bool) -> f64 {
    if ieee && (is_snan64(a) || is_snan64(b)) {
        return quiet64(if is_snan64(a) { a } else { b });
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return if a.is_sign_negative() { b } else { a };
    }
    a.max(b)
}

/// `v_min_f64`.
pub fn min_f64(a: f64, b: f64, ieee: bool) -> f64 {
    if ieee && (is_snan64(a) || is_snan64(b)) {
        return quiet64(if is_snan64(a) { a } else { b });
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return if a.is_sign_negative() { a } else { b };
    }
    a.min(b)
}

/// Median of three (`v_med3_f32`): NaN inputs follow min/max.
pub fn med3_f32(a: f32, b: f32, c: f32, ieee: bool) -> f32 {
    max_f32(
        min_f32(a, b, ieee),
        min_f32(max_f32(a, b, ieee), c, ieee),
        ieee,
    )
}

/// Whether `x` is a signalling NaN.
pub fn is_snan32(x: f32) -> bool {
    x.is_nan() && x.to_bits() & 0x0040_0000 == 0
}

/// Whether `x` is a signalling NaN.
pub fn is_snan64(x: f64) -> bool {
    x.is_nan() && x.to_bits() & 0x0008_0000_0000_0000 == 0
}

fn quiet32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() | 0x0040_0000)
}

fn quiet64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() | 0x0008_0000_0000_0000)
}

/// Clamp to [0, 1]; with DX10 clamp, NaN becomes 0.
pub fn clamp_f32(x: f32, dx10: bool) -> f32 {
    if x.is_nan() {
        return if dx10 { 0.0 } else { x };
    }
    x.clamp(0.0, 1.0)
}

/// Clamp to [0, 1] in f64.
pub fn clamp_f64(x: f64, dx10: bool) -> f64 {
    if x.is_nan() {
        return if dx10 { 0.0 } else { x };
    }
    x.clamp(0.0, 1.0)
}

/// The output modifier's factor: 1, 2, 4 or 0.5.
pub fn omod_factor(omod: u8) -> f32 {
    match omod {
        1 => 2.0,
        2 => 4.0,
        3 => 0.5,
        _ => 1.0,
    }
}

/// The class bits of `v_cmp_class`: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0,
/// 6 +0, 7 +denormal, 8 +normal, 9 +inf.
pub fn class64(x: f64) -> u32 {
    let neg = x.is_sign_negative();
    let bit = if x.is_nan() {
        if is_snan64(x) {
            0
        } else {
            1
        }
    } else if x.is_infinite() {
        if neg {
            2
        } else {
            9
        }
    } else if x == 0.0 {
        if neg {
            5
        } else {
            6
        }
    } else if x.is_subnormal() {
        if neg {
            4
        } else {
            7
        }
    } else if neg {
        3
    } else {
        8
    };
    1 << bit
}

/// [`class64`] for f32 (its own subnormals, not f64's).
pub fn class32(x: f32) -> u32 {
    if x.is_subnormal() {
        return if x.is_sign_negative() { 1 << 4 } else { 1 << 7 };
    }
    if x.is_nan() {
        return if is_snan32(x) { 1 } else { 2 };
    }
    class64(f64::from(x))
}

/// [`class64`] for f16.
pub fn class16(x: f16) -> u32 {
    if x.is_nan() {
        return if x.to_bits() & 0x0200 == 0 { 1 } else { 2 };
    }
    if x.to_bits() & 0x7c00 == 0 && x.to_bits() & 0x3ff != 0 {
        return if x.is_sign_negative() { 1 << 4 } else { 1 << 7 };
    }
    class64(f64::from(x.to_f32()))
}

/// `frexp` exponent as the hardware gives it: 0 for 0, inf and NaN.
pub fn frexp_exp64(x: f64) -> i32 {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    let (_, e) = frexp64(x);
    e
}

/// `frexp` mantissa in [0.5, 1) with the sign; 0, inf and NaN come back unchanged.
pub fn frexp_mant64(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    frexp64(x).0
}

fn frexp64(x: f64) -> (f64, i32) {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // Subnormal: scale up first.
        let (m, e) = frexp64(x * f64::from_bits(0x4350_0000_0000_0000)); // 2^54
        return (m, e - 54);
    }
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, exp - 1022)
}

/// `ldexp` with the exponent saturated (results round once, as the hardware does).
pub fn ldexp64(x: f64, e: i32) -> f64 {
    let mut x = x;
    let mut e = e.clamp(-2200, 2200);
    // Scale in steps that cannot overflow or lose bits before the last one.
    while e > 1000 {
        x *= f64::from_bits(0x7e70_0000_0000_0000); // 2^1000
        e -= 1000;
    }
    while e < -1000 {
        // Step by 2^-1000 only while the value stays normal, so rounding happens once.
        if x.abs() < f64::from_bits(0x3e80_0000_0000_0000) {
            // |x| < 2^-23: the final result underflows anyway; one rounding in the last step.
            break;
        }
        x *= f64::from_bits(0x0170_0000_0000_0000); // 2^-1000
        e += 1000;
    }
    if e < -1000 {
        // Split so the only inexact step is the last.
        let half = e / 2;
        return x * pow2(half) * pow2(e - half);
    }
    x * pow2(e)
}

/// 2^e for -1022 <= e <= 1023 exactly; saturating outside.
fn pow2(e: i32) -> f64 {
    if e > 1023 {
        f64::INFINITY
    } else if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else if e >= -1074 {
        f64::from_bits(1u64 << (e + 1074))
    } else {
        0.0
    }
}

/// `ldexp` in f32: exact scaling in f64, then one rounding to f32.
pub fn ldexp32(x: f32, e: i32) -> f32 {
    ldexp64(f64::from(x), e.clamp(-400, 400)) as f32
}

/// f32 to i32 as `v_cvt_i32_f32` does: truncate, saturate, NaN gives 0.
pub fn cvt_i32(x: f64) -> u32 {
    x as i32 as u32
}

/// f32 to u32: truncate, saturate, NaN gives 0.
pub fn cvt_u32(x: f64) -> u32 {
    x as u32
}

/// `v_div_scale_f32`/`f64` (RDNA2 ISA pseudocode): scales the numerator or denominator by
/// 2^±(2·bias range) when the quotient or reciprocal would be denormal or overflow, and says
/// in VCC whether `v_div_fmas` must scale back. `s0` is the value to scale (numerator or
/// denominator), `s1` the denominator, `s2` the numerator.
pub fn div_scale64(s0: f64, s1: f64, s2: f64, bits: u32) -> (f64, bool) {
    let (mant_bits, scale) = if bits == 32 { (23, 64) } else { (52, 128) };
    let exp = |x: f64| -> i32 {
        if bits == 32 {
            ((x as f32).to_bits() >> 23 & 0xff) as i32
        } else {
            (x.to_bits() >> 52 & 0x7ff) as i32
        }
    };
    let denorm = |x: f64| -> bool {
        if bits == 32 {
            (x as f32).is_subnormal()
        } else {
            x.is_subnormal()
        }
    };
    let max_gap = if bits == 32 { 96 } else { 768 };
    let mut vcc = false;
    let mut d = s0;
    if s2 == 0.0 || s1 == 0.0 || s0.is_nan() || s1.is_nan() || s2.is_nan() {
        d = f64::NAN;
    } else if exp(s2) - exp(s1) >= max_gap {
        vcc = true;
        if s0 == s1 {
            d = ldexp64(s0, scale);
        }
    } else if denorm(s1) {
        d = ldexp64(s0, scale);
    } else if denorm(1.0 / s1) && denorm(s2 / s1) {
        // A huge denominator: scale it down; the quotient estimate comes out 2^scale too
        // large and v_div_fmas scales it back.
        vcc = true;
        if s0 == s1 {
            d = ldexp64(s0, -scale);
        }
    } else if denorm(1.0 / s1) {
        d = ldexp64(s0, -scale);
    } else if denorm(s2 / s1) {
        vcc = true;
        if s0 == s2 {
            d = ldexp64(s0, scale);
        }
    } else if exp(s2) <= mant_bits {
        d = ldexp64(s0, scale);
    }
    (d, vcc)
}

/// `v_div_fixup_f32`/`f64`: special cases of `s2 / s1` given the quotient estimate `s0`.
pub fn div_fixup64(s0: f64, s1: f64, s2: f64, bits: u32) -> f64 {
    let sign = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |x: f64| if sign { -x } else { x };
    if s2.is_nan() {
        return s2;
    }
    if s1.is_nan() {
        return s1;
    }
    if s1 == 0.0 && s2 == 0.0 {
        return f64::NAN;
    }
    if s1.is_infinite() && s2.is_infinite() {
        return f64::NAN;
    }
    if s1 == 0.0 || s2.is_infinite() {
        return signed(f64::INFINITY);
    }
    if s1.is_infinite() || s2 == 0.0 {
        return signed(0.0);
    }
    let _ = bits;
    if s0.is_nan() {
        // The estimate overflowed or underflowed to NaN: overflow.
        return signed(f64::INFINITY);
    }
    signed(s0.abs())
}

/// `v_div_fmas`: `fma(a, b, c)`, and when `vcc` says `v_div_scale` scaled an operand, scaled
/// back by 2^±64 (f32) or 2^±128 (f64): up when the quotient estimate `c` is large (the
/// denominator was scaled up), down when it is small (the numerator was).
pub fn div_fmas64(a: f64, b: f64, c: f64, vcc: bool, bits: u32) -> f64 {
    if bits == 32 {
        let r = (a as f32).mul_add(b as f32, c as f32);
        if !vcc {
            return f64::from(r);
        }
        let up = ((c as f32).to_bits() >> 23 & 0xff) > 127;
        return f64::from(ldexp32(r, if up { 64 } else { -64 }));
    }
    let r = a.mul_add(b, c);
    if !vcc {
        return r;
    }
    let up = (c.to_bits() >> 52 & 0x7ff) > 1023;
    ldexp64(r, if up { 128 } else { -128 })
}

/// `v_fract`: `x - floor(x)`, below 1; NaN and inf give NaN per the ISA (inf gives NaN).
pub fn fract64(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
}

/// `v_fract_f32`.
pub fn fract32(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    (x - x.floor()).min(f32::from_bits(0x3f7f_ffff))
}

/// `v_sin_f32`: the input is in revolutions (sin(2πx)).
pub fn sin_rev(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    let r = f64::from(x).rem_euclid(1.0);
    (r * std::f64::consts::TAU).sin() as f32
}

/// `v_cos_f32`: the input is in revolutions.
pub fn cos_rev(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    let r = f64::from(x).rem_euclid(1.0);
    (r * std::f64::consts::TAU).cos() as f32
}

/// f32 to f16, round to nearest even.
pub fn to_f16(x: f32) -> u16 {
    f16::from_f32(x).to_bits()
}

/// f32 to bfloat16, round to nearest even (NaN stays NaN).
pub fn to_bf16(x: f32) -> u16 {
    half::bf16::from_f32(x).to_bits()
}

/// f16 to f32.
pub fn from_f16(x: u32) -> f32 {
    f16::from_bits(x as u16).to_f32()
}

/// f32 to f16 rounding toward zero (`v_cvt_pkrtz_f16_f32`).
pub fn to_f16_rtz(x: f32) -> u16 {
    let r = f16::from_f32(x);
    if r.is_nan() || r.is_infinite() && x.is_infinite() {
        return r.to_bits();
    }
    let back = r.to_f32();
    if back.abs() > x.abs() {
        // Rounded away from zero: step one ulp toward zero.
        if r.is_infinite() {
            return if x < 0.0 { 0xfbff } else { 0x7bff };
        }
        return r.to_bits() - 1;
    }
    r.to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ieee_min_max_quiet_snans_and_order_zeros() {
        let snan = f32::from_bits(0x7f80_0001);
        assert!(max_f32(snan, 1.0, true).is_nan());
        assert_eq!(max_f32(snan, 1.0, false), 1.0);
        assert_eq!(max_f32(f32::NAN, 1.0, true), 1.0);
        assert!(max_f32(-0.0, 0.0, true).is_sign_positive());
        assert!(min_f32(0.0, -0.0, true).is_sign_negative());
        assert_eq!(med3_f32(3.0, 1.0, 2.0, true), 2.0);
    }

    #[test]
    fn classes_cover_every_kind() {
        let cases: [(f32, u32); 10] = [
            (f32::from_bits(0x7f80_0001), 0),
            (f32::NAN, 1),
            (f32::NEG_INFINITY, 2),
            (-1.5, 3),
            (-f32::from_bits(1), 4),
            (-0.0, 5),
            (0.0, 6),
            (f32::from_bits(1), 7),
            (2.0, 8),
            (f32::INFINITY, 9),
        ];
        for (x, bit) in cases {
            assert_eq!(class32(x), 1 << bit, "{x:e}");
        }
        assert_eq!(class16(f16::from_bits(1)), 1 << 7);
    }

    #[test]
    fn frexp_and_ldexp_agree_with_the_host() {
        for x in [1.0f64, -3.75, 1e-310, 6.02e23, f64::MIN_POSITIVE] {
            let (m, e) = (frexp_mant64(x), frexp_exp64(x));
            assert!((0.5..1.0).contains(&m.abs()), "{x:e}");
            assert_eq!(ldexp64(m, e), x);
        }
        assert_eq!(frexp_exp64(f64::INFINITY), 0);
        assert_eq!(ldexp32(1.0, 200), f32::INFINITY);
        assert_eq!(ldexp32(1.0, -149), f32::from_bits(1));
        assert_eq!(ldexp64(1.0, -1075), 0.0);
        assert_eq!(
            ldexp64(3.0, -1075),
            f64::from_bits(2),
            "one rounding, ties to even"
        );
    }

    #[test]
    fn division_helpers_give_host_quotients() {
        // The sequence clang emits for f32 a/b: scale, rcp, refine with fma, fmas, fixup.
        let div = |a: f32, b: f32| -> f32 {
            let (a, b) = (f64::from(a), f64::from(b));
            let (den, _) = div_scale64(b, b, a, 32);
            let (num, vcc) = div_scale64(a, b, a, 32);
            let (den, num) = (den as f32, num as f32);
            let r = 1.0 / den;
            let e = (-den).mul_add(r, 1.0);
            let r = e.mul_add(r, r);
            let q = num * r;
            let e2 = (-den).mul_add(q, num);
            let q = e2.mul_add(r, q);
            let e3 = (-den).mul_add(q, num);
            let q = div_fmas64(f64::from(e3), f64::from(r), f64::from(q), vcc, 32) as f32;
            div_fixup64(f64::from(q), b, a, 32) as f32
        };
        for (a, b) in [
            (1.0f32, 3.0f32),
            (7.0, -2.5),
            (1e-40, 3.0),
            (3e38, 1e-5),
            (1.0, 3e38),
            (0.0, 0.0),
            (5.0, 0.0),
            (f32::INFINITY, 2.0),
        ] {
            let (got, want) = (div(a, b), a / b);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{a:e}/{b:e}: {got:e} vs {want:e}"
            );
        }
    }

    #[test]
    fn rtz_conversion_rounds_toward_zero() {
        let x = 1.0f32 + f32::EPSILON * 3000.0;
        assert!(from_f16(u32::from(to_f16_rtz(x))) <= x);
        assert_eq!(to_f16_rtz(70000.0), 0x7bff);
        assert_eq!(to_f16_rtz(-1.0), f16::from_f32(-1.0).to_bits());
    }
}
