//! Program flow and wave control (SOPP and the PC-moving SOP1s): branches, calls and returns
//! through `s_getpc`/`s_swappc`/`s_setpc`, `s_endpgm`, `s_barrier`, `s_sleep`, `s_sendmsg`
//! (hostcall interrupts), `s_trap`, mode changes, and the waits that are no-ops here.
//!
//! Memory in this emulator completes before the next instruction issues, so `s_waitcnt` has
//! nothing to wait for; it only orders this host thread's accesses (an acquire-release fence,
//! free on x86), which together with sequentially consistent guest atomics gives the
//! acquire/release guest code builds from waits and atomics.

use std::sync::atomic::{fence, Ordering};

use super::{Env, Fault, Handler, Step, Uop};
use crate::wave::Wave;

type R = Result<Step, Box<Fault>>;

fn target(u: &Uop) -> u64 {
    u.imm as u64
}

/// `s_branch`.
pub fn s_branch(_: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    Ok(Step::Jump(target(u)))
}

fn cond(c: bool, u: &Uop) -> R {
    Ok(if c { Step::Jump(target(u)) } else { Step::Next })
}

/// `s_cbranch_scc0`.
pub fn s_cbranch_scc0(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    cond(!w.scc, u)
}

/// `s_cbranch_scc1`.
pub fn s_cbranch_scc1(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    cond(w.scc, u)
}

/// `s_cbranch_vccz`.
pub fn s_cbranch_vccz(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    cond(w.vcc() == 0, u)
}

/// `s_cbranch_vccnz`.
pub fn s_cbranch_vccnz(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    cond(w.vcc() != 0, u)
}

/// `s_cbranch_execz`.
pub fn s_cbranch_execz(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    cond(w.exec() == 0, u)
}

/// `s_cbranch_execnz`.
pub fn s_cbranch_execnz(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    cond(w.exec() != 0, u)
}

/// `s_getpc_b64`: the address of the next instruction.
pub fn s_getpc_b64(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    w.swrite64(u.d[0], u.next_pc());
    Ok(Step::Next)
}

/// `s_setpc_b64` (returns, jumps through pointers).
pub fn s_setpc_b64(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    Ok(Step::Jump(w.sread64(u.s[0])))
}

/// `s_swappc_b64` (calls): the return address goes to the destination after the target is
/// read, so `s_swappc_b64 s[30:31], s[30:31]` works.
pub fn s_swappc_b64(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    let t = w.sread64(u.s[0]);
    w.swrite64(u.d[0], u.next_pc());
    Ok(Step::Jump(t))
}

/// `s_call_b64`.
pub fn s_call_b64(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    w.swrite64(u.d[0], u.next_pc());
    Ok(Step::Jump(target(u)))
}

/// `s_endpgm`.
pub fn s_endpgm(_: &mut Wave, _: &Uop, _: &mut Env<'_>) -> R {
    Ok(Step::End)
}

/// `s_barrier`.
pub fn s_barrier(_: &mut Wave, _: &Uop, _: &mut Env<'_>) -> R {
    Ok(Step::Barrier)
}

/// `s_sleep`: give the other waves a turn (spin-waits between work-groups rely on it).
pub fn s_sleep(_: &mut Wave, _: &Uop, _: &mut Env<'_>) -> R {
    Ok(Step::Sleep)
}

/// `s_waitcnt` and friends: memory is already complete; order this thread's accesses.
pub fn s_waitcnt(_: &mut Wave, _: &Uop, _: &mut Env<'_>) -> R {
    fence(Ordering::AcqRel);
    Ok(Step::Next)
}

/// Instructions with no architectural effect here (`s_nop`, `s_setprio`, cache and prefetch
/// hints, `s_clause`).
pub fn nop(_: &mut Wave, _: &Uop, _: &mut Env<'_>) -> R {
    Ok(Step::Next)
}

/// `s_sendmsg`: MSG_INTERRUPT (1) tells the host a hostcall packet is ready, with M0.
pub fn s_sendmsg(w: &mut Wave, u: &Uop, e: &mut Env<'_>) -> R {
    let msg = (u.imm & 0xf) as u32;
    if msg == 1 {
        e.services.interrupt(w.m0());
    } else {
        tracing::debug!(msg, pc = format_args!("{:#x}", u.pc), "s_sendmsg ignored");
    }
    Ok(Step::Next)
}

/// `s_trap`: ends the dispatch with a typed trap.
pub fn s_trap(_: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    Err(Box::new(Fault::Trap((u.imm & 0xff) as u16)))
}

/// `s_round_mode`: MODE bits 3:0.
pub fn s_round_mode(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    w.mode = (w.mode & !0xf) | (u.imm as u32 & 0xf);
    Ok(Step::Next)
}

/// `s_denorm_mode`: MODE bits 7:4.
pub fn s_denorm_mode(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    w.mode = (w.mode & !0xf0) | (u.imm as u32 & 0xf) << 4;
    Ok(Step::Next)
}

/// Handlers by mnemonic.
pub const TABLE: &[(&str, Handler)] = &[
    ("s_branch", s_branch),
    ("s_cbranch_scc0", s_cbranch_scc0),
    ("s_cbranch_scc1", s_cbranch_scc1),
    ("s_cbranch_vccz", s_cbranch_vccz),
    ("s_cbranch_vccnz", s_cbranch_vccnz),
    ("s_cbranch_execz", s_cbranch_execz),
    ("s_cbranch_execnz", s_cbranch_execnz),
    ("s_getpc_b64", s_getpc_b64),
    ("s_setpc_b64", s_setpc_b64),
    ("s_swappc_b64", s_swappc_b64),
    ("s_call_b64", s_call_b64),
    ("s_endpgm", s_endpgm),
    ("s_barrier", s_barrier),
    ("s_sleep", s_sleep),
    ("s_waitcnt", s_waitcnt),
    ("s_waitcnt_vscnt", s_waitcnt),
    ("s_waitcnt_vmcnt", s_waitcnt),
    ("s_waitcnt_expcnt", s_waitcnt),
    ("s_waitcnt_lgkmcnt", s_waitcnt),
    ("s_waitcnt_depctr", s_waitcnt),
    ("s_nop", nop),
    ("s_setprio", nop),
    ("s_icache_inv", nop),
    ("s_inst_prefetch", nop),
    ("s_clause", nop),
    ("s_ttracedata", nop),
    ("s_ttracedata_imm", nop),
    ("s_wakeup", nop),
    ("s_incperflevel", nop),
    ("s_decperflevel", nop),
    ("s_version", nop),
    ("s_code_end", nop),
    ("s_sethalt", nop),
    ("s_setkill", nop),
    ("s_sendmsg", s_sendmsg),
    ("s_trap", s_trap),
    ("s_round_mode", s_round_mode),
    ("s_denorm_mode", s_denorm_mode),
];
