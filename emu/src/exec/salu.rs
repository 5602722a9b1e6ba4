//! Scalar ALU semantics (SOP1, SOP2, SOPK, SOPC), as the RDNA2 ISA defines them: 32- and
//! 64-bit integer and bit operations with their SCC rules, EXEC save/restore, and the hardware
//! registers behind `s_getreg`/`s_setreg`. Branches and PC moves are in [`super::flow`].

use super::{Ctl, Env, Handler, Uop};
use crate::isa::Op;
use crate::wave::{sreg, Wave};

type R = Ctl;

/// Two 32-bit sources, optional SCC out.
#[inline(always)]
fn op2<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl FnOnce(u32, u32, bool) -> (u32, Option<bool>)) -> R {
    let (a, b) = (w.sread_b32(u.s[0]), w.sread_b32(u.s[1]));
    let (r, scc) = f(a, b, w.scc);
    w.swrite(u.d[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ctl::Next
}

/// 64-bit first source, 32-bit second (shift counts, bfe fields) or 64-bit second.
#[inline(always)]
fn op2_64<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl FnOnce(u64, u64, bool) -> (u64, Option<bool>)) -> R {
    let (a, b) = (w.sread64(u.s[0]), w.sread64(u.s[1]));
    let (r, scc) = f(a, b, w.scc);
    w.swrite64(u.d[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ctl::Next
}

/// One 32-bit source; the closure also sees the old destination (s_bitset*).
#[inline(always)]
fn op1<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl FnOnce(u32, u32, bool) -> (u32, Option<bool>)) -> R {
    let a = w.sread_b32(u.s[0]);
    let old = w.sread(u.d[0]);
    let (r, scc) = f(a, old, w.scc);
    w.swrite(u.d[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ctl::Next
}

/// One 64-bit source, 64-bit destination.
#[inline(always)]
fn op1_64<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl FnOnce(u64, u64, bool) -> (u64, Option<bool>)) -> R {
    let a = w.sread64(u.s[0]);
    let old = w.sread64(u.d[0]);
    let (r, scc) = f(a, old, w.scc);
    w.swrite64(u.d[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ctl::Next
}

/// One 64-bit source, 32-bit destination (bit counts).
#[inline(always)]
fn op1_64to32<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl FnOnce(u64) -> (u32, Option<bool>)) -> R {
    let (r, scc) = f(w.sread64(u.s[0]));
    w.swrite(u.d[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ctl::Next
}

/// Compares two 32-bit sources into SCC.
#[inline(always)]
fn cmp<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl FnOnce(u32, u32) -> bool) -> R {
    w.scc = f(w.sread_b32(u.s[0]), w.sread_b32(u.s[1]));
    Ctl::Next
}

/// Compares two 64-bit sources (or 64-bit and a bit index) into SCC.
#[inline(always)]
fn cmp64<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl FnOnce(u64, u64) -> bool) -> R {
    w.scc = f(w.sread64(u.s[0]), w.sread64(u.s[1]));
    Ctl::Next
}

/// SOPK: the destination register with the sign-extended 16-bit immediate.
#[inline(always)]
fn opk<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl FnOnce(u32, i32, bool) -> (Option<u32>, Option<bool>)) -> R {
    let old = w.sread(u.d[0]);
    let (r, scc) = f(old, u.imm as i16 as i32, w.scc);
    if let Some(r) = r {
        w.swrite(u.d[0], r);
    }
    if let Some(c) = scc {
        w.scc = c;
    }
    Ctl::Next
}

/// SOPK compare: the source (in `s[0]`) against the immediate, signed or zero-extended.
#[inline(always)]
fn cmpk<const N: usize>(w: &mut Wave<N>, u: &Uop, f: impl FnOnce(u32, u32) -> bool) -> R {
    w.scc = f(w.sread(u.s[0]), u.imm as u32);
    Ctl::Next
}

/// EXEC save/write family: `f(src, exec) -> new exec`; the destination gets the old EXEC, or
/// the new one for the `wrexec` forms.
#[inline(always)]
fn saveexec<const N: usize>(w: &mut Wave<N>, u: &Uop, wr: bool, f: impl FnOnce(u32, u32) -> u32) -> R {
    let s = w.sread_b32(u.s[0]);
    let old = w.s[sreg::EXEC as usize];
    let new = f(s, old);
    w.s[sreg::EXEC as usize] = new;
    w.swrite(u.d[0], if wr { new } else { old });
    w.scc = new != 0;
    Ctl::Next
}

#[inline(always)]
fn saveexec64<const N: usize>(w: &mut Wave<N>, u: &Uop, wr: bool, f: impl FnOnce(u64, u64) -> u64) -> R {
    let s = w.sread64(u.s[0]);
    let old = w.sread64(super::Opnd::S(sreg::EXEC));
    let new = f(s, old);
    w.swrite64(super::Opnd::S(sreg::EXEC), new);
    w.swrite64(u.d[0], if wr { new } else { old });
    w.scc = new != 0;
    Ctl::Next
}

fn bfe32(v: u32, f: u32, signed: bool) -> u32 {
    let off = f & 31;
    let width = (f >> 16) & 0x7f;
    if width == 0 {
        return 0;
    }
    let x = v >> off;
    if width >= 32 {
        return x;
    }
    let m = x & ((1u32 << width) - 1);
    if signed {
        ((m << (32 - width)) as i32 >> (32 - width)) as u32
    } else {
        m
    }
}

fn bfe64(v: u64, f: u64, signed: bool) -> u64 {
    let off = f & 63;
    let width = (f >> 16) & 0x7f;
    if width == 0 {
        return 0;
    }
    let x = v >> off;
    if width >= 64 {
        return x;
    }
    let m = x & ((1u64 << width) - 1);
    if signed {
        ((m << (64 - width)) as i64 >> (64 - width)) as u64
    } else {
        m
    }
}

/// Whole-quad mode: each nibble becomes all ones if any of its bits is set.
fn wqm(v: u64, nibbles: u32) -> u64 {
    (0..nibbles).fold(0, |acc, i| {
        if v >> (4 * i) & 0xf != 0 {
            acc | 0xf << (4 * i)
        } else {
            acc
        }
    })
}

fn quadmask(v: u64, nibbles: u32) -> u64 {
    (0..nibbles).fold(0, |acc, i| {
        if v >> (4 * i) & 0xf != 0 {
            acc | 1 << i
        } else {
            acc
        }
    })
}

/// First bit from the MSB that differs from the sign bit, or -1 (`s_flbit_i32`).
fn flbit_signed(v: u32) -> u32 {
    if v == 0 || v == u32::MAX {
        u32::MAX
    } else if (v as i32) < 0 {
        (!v).leading_zeros()
    } else {
        v.leading_zeros()
    }
}

fn flbit_signed64(v: u64) -> u32 {
    if v == 0 || v == u64::MAX {
        u32::MAX
    } else if (v as i64) < 0 {
        (!v).leading_zeros()
    } else {
        v.leading_zeros()
    }
}

fn nz(v: u32) -> Option<bool> {
    Some(v != 0)
}

fn nz64(v: u64) -> Option<bool> {
    Some(v != 0)
}

fn idx_or_neg1(found: bool, i: u32) -> u32 {
    if found {
        i
    } else {
        u32::MAX
    }
}

macro_rules! handlers {
    ($( $helper:ident $(($extra:expr))? : $name:ident => $f:expr ;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`.")]
            pub fn $name<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
                $helper(w, u, $($extra,)? $f)
            }
        )*
        impl<const N: usize> Handlers<N> {
            /// The handlers of the table above, by operation.
            pub const TABLE: &'static [(Op, Handler<N>)] =
                &[$((op!($name), $name::<N> as Handler<N>)),*];
        }
    };
}

/// This module's handlers for `N`-lane waves.
pub struct Handlers<const N: usize>;

handlers! {
    // SOP2
    op2: s_add_u32 => |a, b, _| { let (r, c) = a.overflowing_add(b); (r, Some(c)) };
    op2: s_sub_u32 => |a, b, _| { let (r, c) = a.overflowing_sub(b); (r, Some(c)) };
    op2: s_add_i32 => |a, b, _| { let (r, o) = (a as i32).overflowing_add(b as i32); (r as u32, Some(o)) };
    op2: s_sub_i32 => |a, b, _| { let (r, o) = (a as i32).overflowing_sub(b as i32); (r as u32, Some(o)) };
    op2: s_addc_u32 => |a, b, c| { let r = u64::from(a) + u64::from(b) + u64::from(c); (r as u32, Some(r >> 32 != 0)) };
    op2: s_subb_u32 => |a, b, c| { let r = u64::from(a).wrapping_sub(u64::from(b)).wrapping_sub(u64::from(c)); (r as u32, Some(r >> 32 != 0)) };
    op2: s_min_i32 => |a, b, _| { let l = (a as i32) < (b as i32); (if l { a } else { b }, Some(l)) };
    op2: s_min_u32 => |a, b, _| { let l = a < b; (if l { a } else { b }, Some(l)) };
    op2: s_max_i32 => |a, b, _| { let g = (a as i32) > (b as i32); (if g { a } else { b }, Some(g)) };
    op2: s_max_u32 => |a, b, _| { let g = a > b; (if g { a } else { b }, Some(g)) };
    op2: s_cselect_b32 => |a, b, c| (if c { a } else { b }, None);
    op2: s_and_b32 => |a, b, _| (a & b, nz(a & b));
    op2: s_or_b32 => |a, b, _| (a | b, nz(a | b));
    op2: s_xor_b32 => |a, b, _| (a ^ b, nz(a ^ b));
    op2: s_andn2_b32 => |a, b, _| (a & !b, nz(a & !b));
    op2: s_orn2_b32 => |a, b, _| (a | !b, nz(a | !b));
    op2: s_nand_b32 => |a, b, _| (!(a & b), nz(!(a & b)));
    op2: s_nor_b32 => |a, b, _| (!(a | b), nz(!(a | b)));
    op2: s_xnor_b32 => |a, b, _| (!(a ^ b), nz(!(a ^ b)));
    op2: s_lshl_b32 => |a, b, _| { let r = a << (b & 31); (r, nz(r)) };
    op2: s_lshr_b32 => |a, b, _| { let r = a >> (b & 31); (r, nz(r)) };
    op2: s_ashr_i32 => |a, b, _| { let r = ((a as i32) >> (b & 31)) as u32; (r, nz(r)) };
    op2: s_bfm_b32 => |a, b, _| ((((1u64 << (a & 31)) - 1) as u32) << (b & 31), None);
    op2: s_mul_i32 => |a, b, _| ((a as i32).wrapping_mul(b as i32) as u32, None);
    op2: s_mul_hi_u32 => |a, b, _| (((u64::from(a) * u64::from(b)) >> 32) as u32, None);
    op2: s_mul_hi_i32 => |a, b, _| (((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32, None);
    op2: s_bfe_u32 => |a, b, _| { let r = bfe32(a, b, false); (r, nz(r)) };
    op2: s_bfe_i32 => |a, b, _| { let r = bfe32(a, b, true); (r, nz(r)) };
    op2: s_absdiff_i32 => |a, b, _| { let r = (a as i32).wrapping_sub(b as i32).unsigned_abs(); (r, nz(r)) };
    op2: s_lshl1_add_u32 => |a, b, _| { let r = (u64::from(a) << 1) + u64::from(b); (r as u32, Some(r >> 32 != 0)) };
    op2: s_lshl2_add_u32 => |a, b, _| { let r = (u64::from(a) << 2) + u64::from(b); (r as u32, Some(r >> 32 != 0)) };
    op2: s_lshl3_add_u32 => |a, b, _| { let r = (u64::from(a) << 3) + u64::from(b); (r as u32, Some(r >> 32 != 0)) };
    op2: s_lshl4_add_u32 => |a, b, _| { let r = (u64::from(a) << 4) + u64::from(b); (r as u32, Some(r >> 32 != 0)) };
    op2: s_pack_ll_b32_b16 => |a, b, _| ((a & 0xffff) | b << 16, None);
    op2: s_pack_lh_b32_b16 => |a, b, _| ((a & 0xffff) | (b & 0xffff_0000), None);
    op2: s_pack_hh_b32_b16 => |a, b, _| (a >> 16 | (b & 0xffff_0000), None);
    op2_64: s_cselect_b64 => |a, b, c| (if c { a } else { b }, None);
    op2_64: s_and_b64 => |a, b, _| (a & b, nz64(a & b));
    op2_64: s_or_b64 => |a, b, _| (a | b, nz64(a | b));
    op2_64: s_xor_b64 => |a, b, _| (a ^ b, nz64(a ^ b));
    op2_64: s_andn2_b64 => |a, b, _| (a & !b, nz64(a & !b));
    op2_64: s_orn2_b64 => |a, b, _| (a | !b, nz64(a | !b));
    op2_64: s_nand_b64 => |a, b, _| (!(a & b), nz64(!(a & b)));
    op2_64: s_nor_b64 => |a, b, _| (!(a | b), nz64(!(a | b)));
    op2_64: s_xnor_b64 => |a, b, _| (!(a ^ b), nz64(!(a ^ b)));
    op2_64: s_lshl_b64 => |a, b, _| { let r = a << (b & 63); (r, nz64(r)) };
    op2_64: s_lshr_b64 => |a, b, _| { let r = a >> (b & 63); (r, nz64(r)) };
    op2_64: s_ashr_i64 => |a, b, _| { let r = ((a as i64) >> (b & 63)) as u64; (r, nz64(r)) };
    op2_64: s_bfm_b64 => |a, b, _| ((1u64.checked_shl((a & 63) as u32).unwrap_or(0).wrapping_sub(1)) << (b & 63), None);
    op2_64: s_bfe_u64 => |a, b, _| { let r = bfe64(a, b & 0xffff_ffff, false); (r, nz64(r)) };
    op2_64: s_bfe_i64 => |a, b, _| { let r = bfe64(a, b & 0xffff_ffff, true); (r, nz64(r)) };
    // SOP1
    op1: s_mov_b32 => |a, _, _| (a, None);
    op1: s_cmov_b32 => |a, o, c| (if c { a } else { o }, None);
    op1: s_not_b32 => |a, _, _| (!a, nz(!a));
    op1: s_wqm_b32 => |a, _, _| { let r = wqm(u64::from(a), 8) as u32; (r, nz(r)) };
    op1: s_brev_b32 => |a, _, _| (a.reverse_bits(), None);
    op1: s_bcnt0_i32_b32 => |a, _, _| { let r = a.count_zeros(); (r, nz(r)) };
    op1: s_bcnt1_i32_b32 => |a, _, _| { let r = a.count_ones(); (r, nz(r)) };
    op1: s_ff0_i32_b32 => |a, _, _| (idx_or_neg1(a != u32::MAX, a.trailing_ones()), None);
    op1: s_ff1_i32_b32 => |a, _, _| (idx_or_neg1(a != 0, a.trailing_zeros()), None);
    op1: s_flbit_i32_b32 => |a, _, _| (idx_or_neg1(a != 0, a.leading_zeros()), None);
    op1: s_flbit_i32 => |a, _, _| (flbit_signed(a), None);
    op1: s_sext_i32_i8 => |a, _, _| (a as i8 as i32 as u32, None);
    op1: s_sext_i32_i16 => |a, _, _| (a as i16 as i32 as u32, None);
    op1: s_bitset0_b32 => |a, o, _| (o & !(1 << (a & 31)), None);
    op1: s_bitset1_b32 => |a, o, _| (o | 1 << (a & 31), None);
    op1: s_abs_i32 => |a, _, _| { let r = (a as i32).unsigned_abs(); (r, nz(r)) };
    op1: s_quadmask_b32 => |a, _, _| { let r = quadmask(u64::from(a), 8) as u32; (r, nz(r)) };
    op1_64: s_mov_b64 => |a, _, _| (a, None);
    op1_64: s_cmov_b64 => |a, o, c| (if c { a } else { o }, None);
    op1_64: s_not_b64 => |a, _, _| (!a, nz64(!a));
    op1_64: s_wqm_b64 => |a, _, _| { let r = wqm(a, 16); (r, nz64(r)) };
    op1_64: s_brev_b64 => |a, _, _| (a.reverse_bits(), None);
    op1_64: s_bitset0_b64 => |a, o, _| (o & !(1 << (a & 63)), None);
    op1_64: s_bitset1_b64 => |a, o, _| (o | 1 << (a & 63), None);
    op1_64: s_quadmask_b64 => |a, _, _| { let r = quadmask(a, 16); (r, nz64(r)) };
    op1_64: s_bitreplicate_b64_b32 => |a, _, _| ((0..32).fold(0u64, |acc, i| acc | (((a >> i) & 1) * (3 << (2 * i)))), None);
    op1_64to32: s_bcnt0_i32_b64 => |a| { let r = a.count_zeros(); (r, nz(r)) };
    op1_64to32: s_bcnt1_i32_b64 => |a| { let r = a.count_ones(); (r, nz(r)) };
    op1_64to32: s_ff0_i32_b64 => |a| (idx_or_neg1(a != u64::MAX, a.trailing_ones()), None);
    op1_64to32: s_ff1_i32_b64 => |a| (idx_or_neg1(a != 0, a.trailing_zeros()), None);
    op1_64to32: s_flbit_i32_b64 => |a| (idx_or_neg1(a != 0, a.leading_zeros()), None);
    op1_64to32: s_flbit_i32_i64 => |a| (flbit_signed64(a), None);
    saveexec(false): s_and_saveexec_b32 => |s, e| s & e;
    saveexec(false): s_or_saveexec_b32 => |s, e| s | e;
    saveexec(false): s_xor_saveexec_b32 => |s, e| s ^ e;
    saveexec(false): s_andn2_saveexec_b32 => |s, e| s & !e;
    saveexec(false): s_orn2_saveexec_b32 => |s, e| s | !e;
    saveexec(false): s_nand_saveexec_b32 => |s, e| !(s & e);
    saveexec(false): s_nor_saveexec_b32 => |s, e| !(s | e);
    saveexec(false): s_xnor_saveexec_b32 => |s, e| !(s ^ e);
    saveexec(false): s_andn1_saveexec_b32 => |s, e| !s & e;
    saveexec(false): s_orn1_saveexec_b32 => |s, e| !s | e;
    saveexec(true): s_andn1_wrexec_b32 => |s, e| !s & e;
    saveexec(true): s_andn2_wrexec_b32 => |s, e| s & !e;
    saveexec64(false): s_and_saveexec_b64 => |s, e| s & e;
    saveexec64(false): s_or_saveexec_b64 => |s, e| s | e;
    saveexec64(false): s_xor_saveexec_b64 => |s, e| s ^ e;
    saveexec64(false): s_andn2_saveexec_b64 => |s, e| s & !e;
    saveexec64(false): s_orn2_saveexec_b64 => |s, e| s | !e;
    saveexec64(false): s_nand_saveexec_b64 => |s, e| !(s & e);
    saveexec64(false): s_nor_saveexec_b64 => |s, e| !(s | e);
    saveexec64(false): s_xnor_saveexec_b64 => |s, e| !(s ^ e);
    saveexec64(false): s_andn1_saveexec_b64 => |s, e| !s & e;
    saveexec64(false): s_orn1_saveexec_b64 => |s, e| !s | e;
    saveexec64(true): s_andn1_wrexec_b64 => |s, e| !s & e;
    saveexec64(true): s_andn2_wrexec_b64 => |s, e| s & !e;
    // SOPC
    cmp: s_cmp_eq_i32 => |a, b| a == b;
    cmp: s_cmp_lg_i32 => |a, b| a != b;
    cmp: s_cmp_gt_i32 => |a, b| (a as i32) > (b as i32);
    cmp: s_cmp_ge_i32 => |a, b| (a as i32) >= (b as i32);
    cmp: s_cmp_lt_i32 => |a, b| (a as i32) < (b as i32);
    cmp: s_cmp_le_i32 => |a, b| (a as i32) <= (b as i32);
    cmp: s_cmp_eq_u32 => |a, b| a == b;
    cmp: s_cmp_lg_u32 => |a, b| a != b;
    cmp: s_cmp_gt_u32 => |a, b| a > b;
    cmp: s_cmp_ge_u32 => |a, b| a >= b;
    cmp: s_cmp_lt_u32 => |a, b| a < b;
    cmp: s_cmp_le_u32 => |a, b| a <= b;
    cmp: s_bitcmp0_b32 => |a, b| a >> (b & 31) & 1 == 0;
    cmp: s_bitcmp1_b32 => |a, b| a >> (b & 31) & 1 == 1;
    cmp64: s_cmp_eq_u64 => |a, b| a == b;
    cmp64: s_cmp_lg_u64 => |a, b| a != b;
    cmp64: s_bitcmp0_b64 => |a, b| a >> (b & 63) & 1 == 0;
    cmp64: s_bitcmp1_b64 => |a, b| a >> (b & 63) & 1 == 1;
    // SOPK
    opk: s_movk_i32 => |_, k, _| (Some(k as u32), None);
    opk: s_cmovk_i32 => |o, k, c| (Some(if c { k as u32 } else { o }), None);
    opk: s_addk_i32 => |o, k, _| { let (r, v) = (o as i32).overflowing_add(k); (Some(r as u32), Some(v)) };
    opk: s_mulk_i32 => |o, k, _| (Some((o as i32).wrapping_mul(k) as u32), None);
    cmpk: s_cmpk_eq_i32 => |a, k| a as i32 == k as i16 as i32;
    cmpk: s_cmpk_lg_i32 => |a, k| a as i32 != k as i16 as i32;
    cmpk: s_cmpk_gt_i32 => |a, k| a as i32 > k as i16 as i32;
    cmpk: s_cmpk_ge_i32 => |a, k| a as i32 >= k as i16 as i32;
    cmpk: s_cmpk_lt_i32 => |a, k| (a as i32) < k as i16 as i32;
    cmpk: s_cmpk_le_i32 => |a, k| a as i32 <= k as i16 as i32;
    cmpk: s_cmpk_eq_u32 => |a, k| a == k & 0xffff;
    cmpk: s_cmpk_lg_u32 => |a, k| a != k & 0xffff;
    cmpk: s_cmpk_gt_u32 => |a, k| a > k & 0xffff;
    cmpk: s_cmpk_ge_u32 => |a, k| a >= k & 0xffff;
    cmpk: s_cmpk_lt_u32 => |a, k| a < k & 0xffff;
    cmpk: s_cmpk_le_u32 => |a, k| a <= k & 0xffff;
}

/// Hardware register ids (`hwreg(...)`, AMDGPU's SIDefines for gfx10). The whole list, also the
/// ids `s_getreg` answers with zeros, so the numbers can be checked against the definitions.
#[allow(dead_code)]
pub mod hwreg {
    /// MODE.
    pub const MODE: u32 = 1;
    /// STATUS.
    pub const STATUS: u32 = 2;
    /// TRAPSTS.
    pub const TRAPSTS: u32 = 3;
    /// HW_ID.
    pub const HW_ID: u32 = 4;
    /// GPR_ALLOC.
    pub const GPR_ALLOC: u32 = 5;
    /// LDS_ALLOC.
    pub const LDS_ALLOC: u32 = 6;
    /// IB_STS.
    pub const IB_STS: u32 = 7;
    /// SH_MEM_BASES.
    pub const SH_MEM_BASES: u32 = 15;
    /// FLAT_SCR_LO.
    pub const FLAT_SCR_LO: u32 = 20;
    /// FLAT_SCR_HI.
    pub const FLAT_SCR_HI: u32 = 21;
    /// SHADER_CYCLES.
    pub const SHADER_CYCLES: u32 = 29;
}

/// The (id, offset, width mask) of a `hwreg` immediate.
fn hwreg_field(imm: i64) -> (u32, u32, u32) {
    let imm = imm as u32;
    let id = imm & 0x3f;
    let offset = (imm >> 6) & 0x1f;
    let size = ((imm >> 11) & 0x1f) + 1;
    let mask = if size >= 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    };
    (id, offset, mask)
}

fn hwreg_read<const N: usize>(w: &Wave<N>, id: u32) -> u32 {
    match id {
        hwreg::MODE => w.mode,
        hwreg::STATUS => {
            u32::from(w.scc)
                | u32::from(w.exec().is_empty()) << 9
                | u32::from(w.vcc().is_empty()) << 10
        }
        hwreg::TRAPSTS => w.trapsts,
        hwreg::SH_MEM_BASES => (w.private_base_hi >> 16) | (w.shared_base_hi >> 16) << 16,
        hwreg::FLAT_SCR_LO => w.flat_scratch as u32,
        hwreg::FLAT_SCR_HI => (w.flat_scratch >> 32) as u32,
        hwreg::SHADER_CYCLES => w.instructions as u32 & 0xfffff,
        _ => 0,
    }
}

fn hwreg_write<const N: usize>(w: &mut Wave<N>, id: u32, v: u32) {
    match id {
        hwreg::MODE => w.mode = v,
        hwreg::TRAPSTS => w.trapsts = v,
        hwreg::FLAT_SCR_LO => w.flat_scratch = (w.flat_scratch & !0xffff_ffff) | u64::from(v),
        hwreg::FLAT_SCR_HI => w.flat_scratch = (w.flat_scratch & 0xffff_ffff) | u64::from(v) << 32,
        _ => tracing::debug!(
            id,
            value = v,
            "s_setreg of a hardware register the emulator ignores"
        ),
    }
}

/// `s_getreg_b32`.
pub fn s_getreg_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let (id, offset, mask) = hwreg_field(u.imm);
    let v = (hwreg_read(w, id) >> offset) & mask;
    w.swrite(u.d[0], v);
    Ctl::Next
}

fn setreg<const N: usize>(w: &mut Wave<N>, imm: i64, v: u32) {
    let (id, offset, mask) = hwreg_field(imm);
    let old = hwreg_read(w, id);
    let m = mask << offset;
    hwreg_write(w, id, (old & !m) | ((v << offset) & m));
}

/// `s_setreg_b32`: the SGPR operand is in `s[0]`.
pub fn s_setreg_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let v = w.sread_b32(u.s[0]);
    setreg(w, u.imm, v);
    Ctl::Next
}

/// `s_setreg_imm32_b32`: the literal is in `s[0]`.
pub fn s_setreg_imm32_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> R {
    s_setreg_b32(w, u, e)
}

/// `s_movrels_b32`: reads the SGPR `M0` registers after the source.
pub fn s_movrels_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let v = match u.s[0] {
        super::Opnd::S(n) => w.s[(usize::from(n) + w.m0() as usize) % 128],
        o => w.sread(o),
    };
    w.swrite(u.d[0], v);
    Ctl::Next
}

/// `s_movreld_b32`: writes the SGPR `M0` registers after the destination.
pub fn s_movreld_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let v = w.sread_b32(u.s[0]);
    if let super::Opnd::S(n) = u.d[0] {
        let i = (usize::from(n) + w.m0() as usize) % 128;
        if i != usize::from(sreg::NULL) {
            w.s[i] = v;
        }
    }
    Ctl::Next
}

impl<const N: usize> Handlers<N> {
    /// Handlers defined outside the table macro.
    pub const EXTRA: &'static [(Op, Handler<N>)] = &[
        (op!(s_getreg_b32), s_getreg_b32::<N> as Handler<N>),
        (op!(s_setreg_b32), s_setreg_b32::<N> as Handler<N>),
        (op!(s_setreg_imm32_b32), s_setreg_imm32_b32::<N> as Handler<N>),
        (op!(s_movrels_b32), s_movrels_b32::<N> as Handler<N>),
        (op!(s_movreld_b32), s_movreld_b32::<N> as Handler<N>),
    ];
}

/// `s_set_gpr_idx_on` (gfx9): VGPR index mode on, M0[7:0] the index (the source's low byte),
/// M0[15:12] which operands it applies to (the instruction's mode bits: src0, src1, src2,
/// dst). Lowering routes the VALU instructions up to `s_set_gpr_idx_off` through
/// [`super::gpr_indexed`].
pub fn s_set_gpr_idx_on<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let idx = w.sread(u.s[0]) & 0xff;
    let mode = (u.imm as u32 & 0xf) << 12;
    let m0 = &mut w.s[sreg::M0 as usize];
    *m0 = *m0 & !0xf0ff | idx | mode;
    w.gpr_idx = true;
    Ctl::Next
}

/// `s_set_gpr_idx_off` (gfx9): VGPR index mode off.
pub fn s_set_gpr_idx_off<const N: usize>(w: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    w.gpr_idx = false;
    Ctl::Next
}

/// `s_set_gpr_idx_idx` (gfx9): M0[7:0], the index, from the source's low byte.
pub fn s_set_gpr_idx_idx<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let idx = w.sread(u.s[0]) & 0xff;
    let m0 = &mut w.s[sreg::M0 as usize];
    *m0 = *m0 & !0xff | idx;
    Ctl::Next
}

/// `s_set_gpr_idx_mode` (gfx9): M0[15:12], the operands indexed, from the immediate.
pub fn s_set_gpr_idx_mode<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let mode = (u.imm as u32 & 0xf) << 12;
    let m0 = &mut w.s[sreg::M0 as usize];
    *m0 = *m0 & !0xf000 | mode;
    Ctl::Next
}

impl<const N: usize> Handlers<N> {
    /// GFX9-layout (gfx90a, gfx942) scalar operations gfx1030 lacks: VGPR index mode.
    pub const GFX9_EXTRA: &'static [(Op, Handler<N>)] = &[
        (op!(s_set_gpr_idx_on), s_set_gpr_idx_on::<N> as Handler<N>),
        (op!(s_set_gpr_idx_off), s_set_gpr_idx_off::<N> as Handler<N>),
        (op!(s_set_gpr_idx_idx), s_set_gpr_idx_idx::<N> as Handler<N>),
        (op!(s_set_gpr_idx_mode), s_set_gpr_idx_mode::<N> as Handler<N>),
    ];
}
