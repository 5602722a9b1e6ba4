//! Program flow and wave control (SOPP and the PC-moving SOP1s): branches, calls and returns
//! through `s_getpc`/`s_swappc`/`s_setpc`, `s_endpgm`, `s_barrier`, `s_sleep`, `s_sendmsg`
//! (hostcall interrupts), `s_trap`, mode changes, and the waits that are no-ops here.
//!
//! Memory in this emulator completes before the next instruction issues, so `s_waitcnt` has
//! nothing to wait for; it only orders this host thread's accesses (an acquire-release fence,
//! free on x86), which together with sequentially consistent guest atomics gives the
//! acquire/release guest code builds from waits and atomics.

use std::sync::atomic::{fence, Ordering};

use super::{Ctl, Env, Fault, Handler, Uop};
use crate::isa::Op;
use crate::wave::Wave;

type R = Ctl;

/// `s_branch`.
pub fn s_branch<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    Ctl::Branch
}

#[inline(always)]
fn cond(c: bool) -> R {
    if c {
        Ctl::Branch
    } else {
        Ctl::Next
    }
}

/// `s_cbranch_scc0`.
pub fn s_cbranch_scc0<const N: usize>(w: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    cond(!w.scc)
}

/// `s_cbranch_scc1`.
pub fn s_cbranch_scc1<const N: usize>(w: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    cond(w.scc)
}

/// `s_cbranch_vccz`.
pub fn s_cbranch_vccz<const N: usize>(w: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    cond(w.vcc().is_empty())
}

/// `s_cbranch_vccnz`.
pub fn s_cbranch_vccnz<const N: usize>(w: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    cond(!w.vcc().is_empty())
}

/// `s_cbranch_execz`.
pub fn s_cbranch_execz<const N: usize>(w: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    cond(w.exec().is_empty())
}

/// `s_cbranch_execnz`.
pub fn s_cbranch_execnz<const N: usize>(w: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    cond(!w.exec().is_empty())
}

/// `s_getpc_b64`: the address of the next instruction.
pub fn s_getpc_b64<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    w.swrite64(u.d[0], u.next_pc());
    Ctl::Next
}

/// `s_setpc_b64` (returns, jumps through pointers).
pub fn s_setpc_b64<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    w.pc = w.sread64(u.s[0]);
    Ctl::Jump
}

/// `s_swappc_b64` (calls): the return address goes to the destination after the target is
/// read, so `s_swappc_b64 s[30:31], s[30:31]` works.
pub fn s_swappc_b64<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    let t = w.sread64(u.s[0]);
    w.swrite64(u.d[0], u.next_pc());
    w.pc = t;
    Ctl::Jump
}

/// `s_call_b64`.
pub fn s_call_b64<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    w.swrite64(u.d[0], u.next_pc());
    Ctl::Branch
}

/// `s_endpgm`.
pub fn s_endpgm<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    Ctl::End
}

/// `s_barrier`.
pub fn s_barrier<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    Ctl::Barrier
}

/// `s_sleep`: give the other waves a turn (spin-waits between work-groups rely on it).
pub fn s_sleep<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    Ctl::Sleep
}

/// `s_waitcnt` and friends: memory is already complete; order this thread's accesses.
pub fn s_waitcnt<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    fence(Ordering::AcqRel);
    Ctl::Next
}

/// Instructions with no architectural effect here (`s_nop`, `s_setprio`, cache and prefetch
/// hints, `s_clause`).
pub fn nop<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    Ctl::Next
}

/// `s_sendmsg`: MSG_INTERRUPT (1) tells the host a hostcall packet is ready, with M0.
pub fn s_sendmsg<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> R {
    let msg = (u.imm & 0xf) as u32;
    if msg == 1 {
        e.services.interrupt(w.m0());
    } else {
        tracing::debug!(msg, pc = format_args!("{:#x}", u.pc), "s_sendmsg ignored");
    }
    Ctl::Next
}

/// `s_trap`: ends the dispatch with a typed trap.
pub fn s_trap<const N: usize>(_: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> R {
    e.fault = Some(Box::new(Fault::Trap((u.imm & 0xff) as u16)));
    Ctl::Fault
}

/// `s_round_mode`: MODE bits 3:0.
pub fn s_round_mode<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    w.mode = (w.mode & !0xf) | (u.imm as u32 & 0xf);
    Ctl::Next
}

/// `s_denorm_mode`: MODE bits 7:4.
pub fn s_denorm_mode<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> R {
    w.mode = (w.mode & !0xf0) | (u.imm as u32 & 0xf) << 4;
    Ctl::Next
}

/// This module's handlers for `N`-lane waves.
pub struct Handlers<const N: usize>;

impl<const N: usize> Handlers<N> {
    /// Handlers by operation.
    pub const TABLE: &'static [(Op, Handler<N>)] = &[
        (op!(s_branch), s_branch::<N> as Handler<N>),
        (op!(s_cbranch_scc0), s_cbranch_scc0::<N> as Handler<N>),
        (op!(s_cbranch_scc1), s_cbranch_scc1::<N> as Handler<N>),
        (op!(s_cbranch_vccz), s_cbranch_vccz::<N> as Handler<N>),
        (op!(s_cbranch_vccnz), s_cbranch_vccnz::<N> as Handler<N>),
        (op!(s_cbranch_execz), s_cbranch_execz::<N> as Handler<N>),
        (op!(s_cbranch_execnz), s_cbranch_execnz::<N> as Handler<N>),
        (op!(s_getpc_b64), s_getpc_b64::<N> as Handler<N>),
        (op!(s_setpc_b64), s_setpc_b64::<N> as Handler<N>),
        (op!(s_swappc_b64), s_swappc_b64::<N> as Handler<N>),
        (op!(s_call_b64), s_call_b64::<N> as Handler<N>),
        (op!(s_endpgm), s_endpgm::<N> as Handler<N>),
        (op!(s_barrier), s_barrier::<N> as Handler<N>),
        (op!(s_sleep), s_sleep::<N> as Handler<N>),
        (op!(s_waitcnt), s_waitcnt::<N> as Handler<N>),
        (op!(s_waitcnt_vscnt), s_waitcnt::<N> as Handler<N>),
        (op!(s_waitcnt_vmcnt), s_waitcnt::<N> as Handler<N>),
        (op!(s_waitcnt_expcnt), s_waitcnt::<N> as Handler<N>),
        (op!(s_waitcnt_lgkmcnt), s_waitcnt::<N> as Handler<N>),
        (op!(s_waitcnt_depctr), s_waitcnt::<N> as Handler<N>),
        (op!(s_nop), nop::<N> as Handler<N>),
        (op!(s_setprio), nop::<N> as Handler<N>),
        (op!(s_icache_inv), nop::<N> as Handler<N>),
        (op!(s_inst_prefetch), nop::<N> as Handler<N>),
        (op!(s_clause), nop::<N> as Handler<N>),
        (op!(s_ttracedata), nop::<N> as Handler<N>),
        (op!(s_ttracedata_imm), nop::<N> as Handler<N>),
        (op!(s_wakeup), nop::<N> as Handler<N>),
        (op!(s_incperflevel), nop::<N> as Handler<N>),
        (op!(s_decperflevel), nop::<N> as Handler<N>),
        (op!(s_version), nop::<N> as Handler<N>),
        (op!(s_code_end), nop::<N> as Handler<N>),
        (op!(s_sethalt), nop::<N> as Handler<N>),
        (op!(s_setkill), nop::<N> as Handler<N>),
        (op!(s_sendmsg), s_sendmsg::<N> as Handler<N>),
        (op!(s_trap), s_trap::<N> as Handler<N>),
        (op!(s_round_mode), s_round_mode::<N> as Handler<N>),
        (op!(s_denorm_mode), s_denorm_mode::<N> as Handler<N>),
    ];
}
