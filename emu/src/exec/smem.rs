//! Scalar memory (SMEM): `s_load_dword*` from a 64-bit base, `s_buffer_load_dword*` through a
//! buffer descriptor (range-checked against its record count: out of range reads 0), the
//! time counters, and the scalar cache invalidations (fences here). Loads go through
//! [`crate::GuestMemory::translate`] like every other global access. Not for vector memory.

use super::{ctl, guest_fault, Ctl, Env, Fault, Handler, Opnd, Uop};
use crate::isa::Op;
use crate::memory::{self, Access};
use crate::wave::Wave;

type R = Ctl;

#[inline(always)]
fn load<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, dwords: usize, buffer: bool) -> R {
    let r = load_inner(w, u, e, dwords, buffer);
    ctl(r, e)
}

fn load_inner<const N: usize>(
    w: &mut Wave<N>,
    u: &Uop,
    e: &mut Env<'_>,
    dwords: usize,
    buffer: bool,
) -> Result<(), Box<Fault>> {
    let Opnd::S(d) = u.d[0] else {
        return Ok(());
    };
    let soff = match u.mem.saddr {
        Opnd::None => 0,
        o => u64::from(w.sread(o)),
    };
    let off = (i64::from(u.mem.offset)).wrapping_add(soff as i64);
    let (base, limit) = if buffer {
        let Opnd::S(r) = u.s[0] else {
            return Ok(());
        };
        let r = r as usize;
        (
            u64::from(w.s[r]) | u64::from(w.s[r + 1] & 0xffff) << 32,
            Some(u64::from(w.s[r + 2])),
        )
    } else {
        (w.sread64(u.s[0]), None)
    };
    // SMEM ignores the two low address bits.
    let addr = base.wrapping_add_signed(off) & !3;
    let len = 4 * dwords as u64;
    let mut vals = [0u32; 16];
    let in_range = limit.map_or(true, |n| (off as u64).saturating_add(len) <= n);
    if in_range {
        let p = e
            .mem
            .translate(addr, len, Access::Read)
            .map_err(|f| guest_fault(0, addr, f))?;
        for (k, v) in vals.iter_mut().enumerate().take(dwords) {
            // SAFETY: translate() approved `len` bytes at p; k * 4 + 4 <= len.
            *v = u32::from_le_bytes(unsafe { memory::load::<4>(p.add(4 * k)) });
        }
    }
    for (k, v) in vals.iter().enumerate().take(dwords) {
        // Destinations past s127 (a malformed encoding) are dropped, never indexed.
        let i = usize::from(d) + k;
        if i < 128 {
            w.swrite(Opnd::S(i as u8), *v);
        }
    }
    Ok(())
}

macro_rules! smem {
    ($( $name:ident => $n:expr, $buf:expr ;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`.")]
            pub fn $name<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> R {
                load(w, u, e, $n, $buf)
            }
        )*
        impl<const N: usize> Handlers<N> {
            /// Handlers by operation.
            pub const TABLE: &'static [(Op, Handler<N>)] = &[
                $((op!($name), $name::<N> as Handler<N>),)*
                (op!(s_memtime), s_memtime::<N> as Handler<N>),
                (op!(s_memrealtime), s_memtime::<N> as Handler<N>),
                (op!(s_dcache_inv), s_dcache_inv::<N> as Handler<N>),
                (op!(s_gl1_inv), s_dcache_inv::<N> as Handler<N>),
            ];
        }
    };
}

/// This module's handlers for `N`-lane waves.
pub struct Handlers<const N: usize>;

smem! {
    s_load_dword => 1, false;
    s_load_dwordx2 => 2, false;
    s_load_dwordx4 => 4, false;
    s_load_dwordx8 => 8, false;
    s_load_dwordx16 => 16, false;
    s_buffer_load_dword => 1, true;
    s_buffer_load_dwordx2 => 2, true;
    s_buffer_load_dwordx4 => 4, true;
    s_buffer_load_dwordx8 => 8, true;
    s_buffer_load_dwordx16 => 16, true;
}

/// `s_memtime`/`s_memrealtime`: a 64-bit counter (nanoseconds of host time).
pub fn s_memtime<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    w.swrite64(u.d[0], t);
    Ctl::Next
}

/// `s_dcache_inv`, `s_gl1_inv`: an acquire fence.
pub fn s_dcache_inv<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
    Ctl::Next
}
