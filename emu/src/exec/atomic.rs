//! Memory atomics, once for every kind of memory and width: what each atomic operation makes
//! of the old value ([`apply`]), and performing it on guest memory (a host compare-and-swap
//! loop, so it is atomic against other host threads: [`on_guest`]). LDS and scratch belong to
//! one work-group, whose waves run on one host thread: their handlers read, [`apply`] and
//! write back. Used by global, flat, buffer ([`super::vmem`]) and LDS ([`super::ds`])
//! instructions alike. Not for addressing or faults (the callers').

use std::ptr::NonNull;

use crate::float as fp;
use crate::memory;

/// An atomic read-modify-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    /// The data (`swap`, `ds_wrxchg`).
    Swap,
    /// The data if the old value equals the compare value, bit for bit (`cmpswap`, `ds_cmpst`).
    Cmpswap,
    /// The data if the old value equals the compare value as a float (`fcmpswap`).
    Fcmpswap,
    /// Old plus data.
    Add,
    /// Old minus data.
    Sub,
    /// Data minus old (`ds_rsub`).
    Rsub,
    /// Signed minimum.
    Smin,
    /// Unsigned minimum.
    Umin,
    /// Signed maximum.
    Smax,
    /// Unsigned maximum.
    Umax,
    /// And.
    And,
    /// Or.
    Or,
    /// Xor.
    Xor,
    /// 0 when old >= data, else old + 1.
    Inc,
    /// Data when old is 0 or above data, else old - 1.
    Dec,
    /// IEEE minimum of floats.
    Fmin,
    /// IEEE maximum of floats.
    Fmax,
    /// Float add.
    Fadd,
    /// gfx10.3 `atomic_csub`: old minus data, clamped at 0.
    Csub,
    /// `ds_mskor`: (old & !data) | the second operand.
    Mskor,
    /// Two f16 adds, one per half (`atomic_pk_add_f16`).
    PkAddF16,
    /// Two bf16 adds, one per half (`atomic_pk_add_bf16`), rounded to nearest even.
    PkAddBf16,
}

/// The value `op` leaves in memory whose old value is `old` (`None`: memory unchanged, as
/// after a failed compare-swap). `src` is the data operand; `cmp` the compare value of the
/// compare-swaps and the OR operand of `Mskor`. 32-bit operations (`wide` false) use and give
/// the low 32 bits.
pub fn apply(op: AtomicOp, wide: bool, old: u64, src: u64, cmp: u64) -> Option<u64> {
    let keep = if wide { u64::MAX } else { 0xffff_ffff };
    let (old, src, cmp) = (old & keep, src & keep, cmp & keep);
    let signed = |x: u64| if wide { x as i64 } else { i64::from(x as u32 as i32) };
    let float = |x: u64| {
        if wide {
            f64::from_bits(x)
        } else {
            f64::from(f32::from_bits(x as u32))
        }
    };
    let r = match op {
        AtomicOp::Swap => src,
        AtomicOp::Cmpswap => return (old == cmp).then_some(src),
        AtomicOp::Fcmpswap => return (float(old) == float(cmp)).then_some(src),
        AtomicOp::Add => old.wrapping_add(src),
        AtomicOp::Sub => old.wrapping_sub(src),
        AtomicOp::Rsub => src.wrapping_sub(old),
        AtomicOp::Smin => {
            if signed(src) < signed(old) {
                src
            } else {
                old
            }
        }
        AtomicOp::Umin => old.min(src),
        AtomicOp::Smax => {
            if signed(src) > signed(old) {
                src
            } else {
                old
            }
        }
        AtomicOp::Umax => old.max(src),
        AtomicOp::And => old & src,
        AtomicOp::Or => old | src,
        AtomicOp::Xor => old ^ src,
        AtomicOp::Inc => {
            if old >= src {
                0
            } else {
                old + 1
            }
        }
        AtomicOp::Dec => {
            if old == 0 || old > src {
                src
            } else {
                old - 1
            }
        }
        AtomicOp::Fmin if wide => fp::min_f64(f64::from_bits(old), f64::from_bits(src), true).to_bits(),
        AtomicOp::Fmax if wide => fp::max_f64(f64::from_bits(old), f64::from_bits(src), true).to_bits(),
        AtomicOp::Fmin => u64::from(
            fp::min_f32(f32::from_bits(old as u32), f32::from_bits(src as u32), true).to_bits(),
        ),
        AtomicOp::Fmax => u64::from(
            fp::max_f32(f32::from_bits(old as u32), f32::from_bits(src as u32), true).to_bits(),
        ),
        AtomicOp::Fadd if wide => (f64::from_bits(old) + f64::from_bits(src)).to_bits(),
        AtomicOp::Fadd => {
            u64::from((f32::from_bits(old as u32) + f32::from_bits(src as u32)).to_bits())
        }
        AtomicOp::Csub => old.saturating_sub(src),
        AtomicOp::Mskor => (old & !src) | cmp,
        AtomicOp::PkAddF16 => {
            let add = |a: u64, b: u64| {
                let x = fp::from_f16(a as u32 & 0xffff) + fp::from_f16(b as u32 & 0xffff);
                u64::from(fp::to_f16(x))
            };
            add(old, src) | add(old >> 16, src >> 16) << 16
        }
        AtomicOp::PkAddBf16 => {
            let add = |a: u64, b: u64| {
                let x = f32::from_bits((a as u32 & 0xffff) << 16)
                    + f32::from_bits((b as u32 & 0xffff) << 16);
                u64::from(fp::to_bf16(x))
            };
            add(old, src) | add(old >> 16, src >> 16) << 16
        }
    };
    Some(r & keep)
}

/// Performs `op` on the guest word at `p` (4 bytes, or 8 when `wide`) with a host
/// compare-and-swap loop; returns the old value.
///
/// # Safety
/// `p` must be valid for reads and writes of the word (a pointer [`crate::GuestMemory`]
/// approved for an atomic access of that length).
pub unsafe fn on_guest(p: NonNull<u8>, op: AtomicOp, wide: bool, src: u64, cmp: u64) -> u64 {
    if wide {
        // SAFETY: valid for 8 bytes per the caller.
        unsafe { memory::rmw64(p, |o| apply(op, true, o, src, cmp)) }
    } else {
        // SAFETY: valid for 4 bytes per the caller.
        u64::from(unsafe {
            memory::rmw32(p, |o| {
                apply(op, false, u64::from(o), src, cmp).map(|n| n as u32)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_agree_where_they_should() {
        // 32-bit operations see 32-bit values: signed order, wrapping, float bits.
        assert_eq!(apply(AtomicOp::Smin, false, 5, u64::from((-3i32) as u32), 0), Some(0xffff_fffd));
        assert_eq!(apply(AtomicOp::Smax, true, 5, (-3i64) as u64, 0), Some(5));
        assert_eq!(apply(AtomicOp::Sub, false, 1, 2, 0), Some(0xffff_ffff));
        assert_eq!(apply(AtomicOp::Rsub, false, 1, 2, 0), Some(1));
        assert_eq!(apply(AtomicOp::Inc, false, 7, 7, 0), Some(0));
        assert_eq!(apply(AtomicOp::Dec, true, 0, 9, 0), Some(9));
        assert_eq!(apply(AtomicOp::Csub, false, 3, 5, 0), Some(0));
        assert_eq!(apply(AtomicOp::Mskor, false, 0xff, 0x0f, 0x100), Some(0x1f0));
        let (one, two) = (u64::from(1f32.to_bits()), u64::from(2f32.to_bits()));
        assert_eq!(apply(AtomicOp::Fadd, false, one, one, 0), Some(two));
        assert_eq!(apply(AtomicOp::Fmin, false, two, one, 0), Some(one));
        assert_eq!(
            apply(AtomicOp::Fadd, true, 1f64.to_bits(), 1f64.to_bits(), 0),
            Some(2f64.to_bits())
        );
        // Compare-swaps: bitwise, or as floats (-0.0 == 0.0).
        assert_eq!(apply(AtomicOp::Cmpswap, false, 4, 9, 4), Some(9));
        assert_eq!(apply(AtomicOp::Cmpswap, false, 4, 9, 5), None);
        let nz = u64::from((-0f32).to_bits());
        assert_eq!(apply(AtomicOp::Fcmpswap, false, 0, 9, nz), Some(9));
        assert_eq!(apply(AtomicOp::Cmpswap, false, 0, 9, nz), None);
    }
}
