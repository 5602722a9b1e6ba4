//! Vector memory (FLAT, GLOBAL, SCRATCH, MUBUF): per-lane addresses, aperture routing (flat
//! addresses in the shared aperture reach LDS, in the private aperture this lane's scratch, the
//! rest global memory through [`crate::GuestMemory::translate`]; SCRATCH instructions' 32-bit
//! addresses are offsets in the lane's private memory from FLAT_SCRATCH), loads with sign or zero extension
//! and d16 halves, stores, and atomics (host compare-and-swap, so atomic across threads).
//! MUBUF follows the buffer-descriptor addressing of the ISA (swizzle, ADD_TID, index stride);
//! descriptors whose base lies in the emulator's scratch range reach scratch. Not for LDS
//! instructions ([`super::ds`]) or scalar loads ([`super::smem`]).

use std::ptr::NonNull;

use super::atomic::{self, AtomicOp as At};
use super::{ctl, guest_fault, Ctl, Env, Fault, Handler, Opnd, Uop};
use crate::error::FaultKind;
use crate::isa::Op as IsaOp;
use crate::memory::{self, Access, Span};
use crate::scratch::{swizzle, SCRATCH_BASE};
use crate::wave::Wave;

type R = Ctl;

/// Which half a d16 load fills.
#[derive(Clone, Copy, PartialEq, Eq)]
enum D16 {
    No,
    Lo,
    Hi,
}

#[derive(Clone, Copy)]
enum Op {
    Load { bytes: u32, sext: bool, d16: D16 },
    Store { bytes: u32, hi: bool },
    Atomic { op: At, wide: bool },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Space {
    Flat,
    Global,
    Buffer,
    /// The SCRATCH encoding: a per-lane private offset (VGPR + SGPR + offset).
    Scratch,
}

/// Where one lane's access goes.
enum Target {
    Guest(NonNull<u8>),
    Lds(u32),
    Scratch {
        base: u64,
        offset: u32,
    },
    /// Out of range of a raw buffer: loads read 0, stores are dropped.
    Nowhere,
}

/// The guest (flat or global) address of lane `l`; for SCRATCH, its private offset.
#[inline(always)]
fn address<const N: usize>(w: &Wave<N>, u: &Uop, space: Space, l: usize) -> u64 {
    let off = i64::from(u.mem.offset);
    if space == Space::Scratch {
        let v = match u.s[0] {
            Opnd::V(r) => w.v[r as usize][l],
            _ => 0,
        };
        let s = match u.mem.saddr {
            Opnd::None => 0,
            o => w.sread(o),
        };
        return u64::from(v.wrapping_add(s).wrapping_add(off as u32));
    }
    match (space, u.mem.saddr) {
        (Space::Global, Opnd::S(_)) => {
            let v = match u.s[0] {
                Opnd::V(r) => w.v[r as usize][l],
                _ => 0,
            };
            w.sread64(u.mem.saddr)
                .wrapping_add(u64::from(v))
                .wrapping_add_signed(off)
        }
        _ => match u.s[0] {
            Opnd::V(r) => (u64::from(w.v[r as usize][l]) | u64::from(w.v[r as usize + 1][l]) << 32)
                .wrapping_add_signed(off),
            _ => 0,
        },
    }
}

/// Buffer address of lane `l` for byte `extra` of the access (dword pieces swizzle apart).
fn buffer_address<const N: usize>(w: &Wave<N>, u: &Uop, l: usize, extra: u32) -> (u64, bool) {
    let Opnd::S(rs) = u.s[2] else {
        return (0, false);
    };
    let rs = rs as usize;
    let (w0, w1, w2, w3) = (w.s[rs], w.s[rs + 1], w.s[rs + 2], w.s[rs + 3]);
    let base = u64::from(w0) | u64::from(w1 & 0xffff) << 32;
    let stride = u64::from(w1 >> 16 & 0x3fff);
    let swz = w1 >> 31 != 0;
    let add_tid = w3 >> 23 & 1 != 0;
    let vaddr = |k: u16| match u.s[0] {
        Opnd::V(r) => w.v[(r + k) as usize][l],
        _ => 0,
    };
    let mut index = if u.mem.idxen { u64::from(vaddr(0)) } else { 0 };
    if add_tid {
        index += l as u64;
    }
    let voff = if u.mem.offen {
        vaddr(u16::from(u.mem.idxen))
    } else {
        0
    };
    let offset = u64::from(voff) + (u.mem.offset as u32 as u64 & 0xfff) + u64::from(extra);
    let soffset = u64::from(w.sread(u.mem.saddr));
    let addr = if swz {
        let istride = 8u64 << (w3 >> 21 & 3);
        let elem = 4u64;
        base + soffset
            + (index / istride * stride + offset / elem * elem) * istride
            + (index % istride) * elem
            + offset % elem
    } else {
        base + soffset + index * stride + offset
    };
    // Raw buffers (stride 0) are range-checked against num_records.
    let in_range = swz || base >= SCRATCH_BASE || stride != 0 || offset < u64::from(w2);
    (addr, in_range)
}

// The access is described by its parts (space, address, lane, length, kind, range check);
// bundling them in a struct would only move the list.
#[allow(clippy::too_many_arguments)]
fn resolve<const N: usize>(w: &Wave<N>,
    e: &Env<'_>,
    space: Space,
    addr: u64,
    l: usize,
    len: u32,
    acc: Access,
    in_range: bool,
) -> Result<Target, Box<Fault>> {
    if space == Space::Scratch {
        return Ok(Target::Scratch {
            base: w.flat_scratch.wrapping_sub(SCRATCH_BASE),
            offset: addr as u32,
        });
    }
    if space == Space::Flat {
        let hi = (addr >> 32) as u32;
        if hi == w.shared_base_hi {
            return Ok(Target::Lds(addr as u32));
        }
        if hi == w.private_base_hi {
            return Ok(Target::Scratch {
                base: w.flat_scratch.wrapping_sub(SCRATCH_BASE),
                offset: addr as u32,
            });
        }
    }
    if space == Space::Buffer {
        if !in_range {
            return Ok(Target::Nowhere);
        }
        if addr >= SCRATCH_BASE {
            // The swizzle is already in the address: a physical scratch offset, lane bits included.
            return Ok(Target::Scratch {
                base: addr - SCRATCH_BASE,
                offset: u32::MAX,
            });
        }
    }
    // Other lanes usually hit a span an earlier translation came from: check those first.
    if let Some(p) = e
        .spans
        .find(acc.writes(), addr, u64::from(len))
        .and_then(|s| s.get(addr, u64::from(len)))
    {
        return Ok(Target::Guest(p));
    }
    let p = e
        .mem
        .translate(addr, u64::from(len), acc)
        .map_err(|p| guest_fault(l, addr, p))?;
    if !e.spans.none() {
        match e.mem.span(addr, acc) {
            Some(s) => e.spans.add(acc.writes(), s),
            None => e.spans.set_none(),
        }
    }
    Ok(Target::Guest(p))
}

fn scratch_fault(l: usize, addr: u64, f: crate::scratch::ScratchFault) -> Box<Fault> {
    Box::new(Fault::Memory {
        lane: l as u32,
        address: addr,
        kind: FaultKind::Scratch(f),
    })
}

fn lds_fault(l: usize, addr: u64, f: crate::lds::LdsFault) -> Box<Fault> {
    Box::new(Fault::Memory {
        lane: l as u32,
        address: addr,
        kind: FaultKind::Lds(f),
    })
}

/// Reads `out.len()` bytes for lane `l` from its target.
fn read<const N: usize>(w: &mut Wave<N>,
    e: &Env<'_>,
    t: Target,
    l: usize,
    addr: u64,
    out: &mut [u8],
) -> Result<(), Box<Fault>> {
    match t {
        Target::Guest(p) => {
            match out.len() {
                // SAFETY: translate() approved 4 readable bytes at p.
                4 => out.copy_from_slice(&unsafe { memory::load::<4>(p) }),
                // SAFETY: translate() approved 8 readable bytes at p.
                8 => out.copy_from_slice(&unsafe { memory::load::<8>(p) }),
                // SAFETY: translate() approved 16 readable bytes at p.
                16 => out.copy_from_slice(&unsafe { memory::load::<16>(p) }),
                n => {
                    // SAFETY: translate() approved n (<= 16) readable bytes at p.
                    let buf = unsafe { read_n(p, n) };
                    out.copy_from_slice(&buf[..n]);
                }
            }
            Ok(())
        }
        Target::Lds(a) => {
            let r = match out.len() {
                4 => e.lds.read_n::<4>(a).map(|b| out.copy_from_slice(&b)),
                8 => e.lds.read_n::<8>(a).map(|b| out.copy_from_slice(&b)),
                _ => e.lds.read(a, out),
            };
            r.map_err(|f| lds_fault(l, addr, f))
        }
        Target::Scratch { base, offset } => {
            let r = if offset == u32::MAX {
                w.scratch.read(out, |i| base + u64::from(i))
            } else {
                w.scratch.read(out, |i| {
                    base.wrapping_add(swizzle(N as u32, l as u32, offset.wrapping_add(i)))
                })
            };
            r.map_err(|f| scratch_fault(l, addr, f))
        }
        Target::Nowhere => {
            out.fill(0);
            Ok(())
        }
    }
}

/// Loads up to 16 bytes (whole words when aligned).
///
/// # Safety
/// `p` must be valid for reads of `n` bytes.
unsafe fn read_n(p: NonNull<u8>, n: usize) -> [u8; 16] {
    let mut buf = [0u8; 16];
    match n {
        // SAFETY: the caller guarantees n = 4 readable bytes.
        4 => buf[..4].copy_from_slice(&unsafe { memory::load::<4>(p) }),
        // SAFETY: the caller guarantees n = 8 readable bytes.
        8 => buf[..8].copy_from_slice(&unsafe { memory::load::<8>(p) }),
        // SAFETY: the caller guarantees n = 12 readable bytes.
        12 => buf[..12].copy_from_slice(&unsafe { memory::load::<12>(p) }),
        // SAFETY: the caller guarantees n = 16 readable bytes.
        16 => buf.copy_from_slice(&unsafe { memory::load::<16>(p) }),
        // SAFETY: the caller guarantees n = 2 readable bytes.
        2 => buf[..2].copy_from_slice(&unsafe { memory::load::<2>(p) }),
        _ => {
            for (i, b) in buf.iter_mut().enumerate().take(n.min(16)) {
                // SAFETY: i < n, within the bytes the caller guarantees.
                *b = unsafe { memory::load::<1>(p.add(i)) }[0];
            }
        }
    }
    buf
}

fn write<const N: usize>(w: &mut Wave<N>,
    e: &mut Env<'_>,
    t: Target,
    l: usize,
    addr: u64,
    data: &[u8],
) -> Result<(), Box<Fault>> {
    match t {
        Target::Guest(p) => {
            // SAFETY: translate() approved `data.len()` bytes at p for writing.
            unsafe { memory::store(p, data) };
            Ok(())
        }
        Target::Lds(a) => e.lds.write(a, data).map_err(|f| lds_fault(l, addr, f)),
        Target::Scratch { base, offset } => {
            let r = if offset == u32::MAX {
                w.scratch.write(data, |i| base + u64::from(i))
            } else {
                w.scratch.write(data, |i| {
                    base.wrapping_add(swizzle(N as u32, l as u32, offset.wrapping_add(i)))
                })
            };
            r.map_err(|f| scratch_fault(l, addr, f))
        }
        Target::Nowhere => Ok(()),
    }
}

/// Lane `l`'s address and target for byte `extra` of an access of `len` bytes.
#[allow(clippy::too_many_arguments)]
fn lane_target<const N: usize>(w: &Wave<N>,
    u: &Uop,
    e: &Env<'_>,
    space: Space,
    l: usize,
    extra: u32,
    len: u32,
    acc: Access,
) -> Result<(u64, Target), Box<Fault>> {
    let (addr, ok) = if space == Space::Buffer {
        buffer_address(w, u, l, extra)
    } else {
        (address(w, u, space, l).wrapping_add(u64::from(extra)), true)
    };
    Ok((addr, resolve(w, e, space, addr, l, len, acc, ok)?))
}

/// Every lane's guest address of a flat or global access (as [`address`] computes one lane's,
/// with the operand kinds matched once for the wave).
#[inline(always)]
fn addresses<const N: usize>(w: &Wave<N>, u: &Uop, space: Space) -> [u64; N] {
    let off = i64::from(u.mem.offset);
    match (space, u.mem.saddr, u.s[0]) {
        (Space::Global, Opnd::S(_), Opnd::V(r)) => {
            let base = w.sread64(u.mem.saddr).wrapping_add_signed(off);
            let v = &w.v[r as usize];
            std::array::from_fn(|l| base.wrapping_add(u64::from(v[l])))
        }
        (Space::Global, Opnd::S(_), _) => [w.sread64(u.mem.saddr).wrapping_add_signed(off); N],
        (_, _, Opnd::V(r)) => {
            let (lo, hi) = (&w.v[r as usize], &w.v[r as usize + 1]);
            std::array::from_fn(|l| {
                (u64::from(lo[l]) | u64::from(hi[l]) << 32).wrapping_add_signed(off)
            })
        }
        _ => [0; N],
    }
}

/// The approved span that holds `len` bytes at `address` for `acc`: one already approved,
/// else one translation of the address and the memory's span around it. `None` when the
/// memory refuses (the per-lane path reports it with its lane) or has no spans (it wants
/// every access translated; [`super::Spans::none`] remembers that).
#[inline(always)]
fn span_at(e: &Env<'_>, address: u64, len: u32, acc: Access) -> Option<Span> {
    if let Some(s) = e.spans.find(acc.writes(), address, u64::from(len)) {
        return Some(s);
    }
    if e.spans.none() {
        return None;
    }
    e.mem.translate(address, u64::from(len), acc).ok()?;
    let Some(s) = e.mem.span(address, acc) else {
        e.spans.set_none();
        return None;
    };
    e.spans.add(acc.writes(), s);
    Some(s)
}

/// Whether the fast paths may take lane address `x` of a `space` access: not in the LDS or
/// private aperture (flat), which the per-lane path routes.
#[inline(always)]
fn plain_global(space: Space, x: u64, shared: u32, private: u32) -> bool {
    let h = (x >> 32) as u32;
    space != Space::Flat || (h != shared && h != private)
}

// The fast paths below take a wave's access in one pass when one approved span (found from
// the first active lane) holds every active lane's bytes: loads into temporaries, written to
// registers only if every lane was inside; stores after a checking pass. Anything else (lanes
// in several allocations or apertures, a refusal) takes the per-lane path, which reports the
// faulting lane and leaves what the lanes before it did.

/// Flat and global loads of `W` whole words.
#[inline(always)]
fn load_words<const N: usize, const W: usize>(
    w: &mut Wave<N>,
    u: &Uop,
    e: &Env<'_>,
    space: Space,
) -> Option<()> {
    let Opnd::V(d) = u.d[0] else {
        return None;
    };
    let exec = w.exec();
    let a = addresses(w, u, space);
    let len = 4 * W as u32;
    let span = span_at(e, a[exec.lowest()?], len, Access::Read)?;
    let (shared, private) = (w.shared_base_hi, w.private_base_hi);
    let mut out = [[0u32; N]; W];
    let mut ok = true;
    exec.each::<N>(|l| {
        let x = a[l];
        match span.get(x, u64::from(len)) {
            Some(p) if plain_global(space, x, shared, private) => {
                for (k, o) in out.iter_mut().enumerate() {
                    // SAFETY: word k of the lane's `len` bytes, which lie in the span the
                    // embedder approved for reading (Span::get checked them).
                    o[l] = u32::from_le_bytes(unsafe { memory::load::<4>(p.add(4 * k)) });
                }
            }
            _ => ok = false,
        }
    });
    if !ok {
        return None;
    }
    for (k, o) in out.iter().enumerate() {
        w.vwrite(Opnd::V(d + k as u16), exec, o);
    }
    Some(())
}

/// Flat and global stores of `W` whole words, lanes in order (the last of several lanes
/// storing to one address wins, as on the per-lane path).
#[inline(always)]
fn store_words<const N: usize, const W: usize>(
    w: &Wave<N>,
    u: &Uop,
    e: &Env<'_>,
    space: Space,
) -> Option<()> {
    let Opnd::V(s) = u.s[1] else {
        return None;
    };
    let exec = w.exec();
    let a = addresses(w, u, space);
    let len = 4 * W as u32;
    let span = span_at(e, a[exec.lowest()?], len, Access::Write)?;
    let (shared, private) = (w.shared_base_hi, w.private_base_hi);
    let mut ok = true;
    exec.each::<N>(|l| {
        ok &= span.get(a[l], u64::from(len)).is_some()
            && plain_global(space, a[l], shared, private);
    });
    if !ok {
        return None;
    }
    let s = s as usize;
    exec.each::<N>(|l| {
        if let Some(p) = span.get(a[l], u64::from(len)) {
            for k in 0..W {
                // SAFETY: word k of the lane's `len` bytes, in the span approved for writing.
                unsafe { memory::store(p.add(4 * k), &w.v[s + k][l].to_le_bytes()) };
            }
        }
    });
    Some(())
}

/// The fast paths of flat and global whole-word loads and stores; `None` when the access
/// takes the per-lane path.
#[inline(always)]
fn fast<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &Env<'_>, space: Space, op: Op) -> Option<()> {
    if matches!(space, Space::Buffer | Space::Scratch) {
        return None;
    }
    match op {
        Op::Load {
            bytes,
            sext: false,
            d16: D16::No,
        } => match bytes {
            4 => load_words::<N, 1>(w, u, e, space),
            8 => load_words::<N, 2>(w, u, e, space),
            12 => load_words::<N, 3>(w, u, e, space),
            16 => load_words::<N, 4>(w, u, e, space),
            _ => None,
        },
        Op::Store { bytes, hi: false } => match bytes {
            4 => store_words::<N, 1>(w, u, e, space),
            8 => store_words::<N, 2>(w, u, e, space),
            12 => store_words::<N, 3>(w, u, e, space),
            16 => store_words::<N, 4>(w, u, e, space),
            _ => None,
        },
        _ => None,
    }
}

#[inline(always)]
fn run<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, space: Space, op: Op) -> R {
    if fast(w, u, e, space, op).is_some() {
        return Ctl::Next;
    }
    let r = match op {
        Op::Load { bytes, sext, d16 } => load(w, u, e, space, bytes, sext, d16),
        Op::Store { bytes, hi } => store(w, u, e, space, bytes, hi),
        Op::Atomic { op, wide } => atomic(w, u, e, space, op, wide),
    };
    ctl(r, e)
}

fn load<const N: usize>(
    w: &mut Wave<N>,
    u: &Uop,
    e: &mut Env<'_>,
    space: Space,
    bytes: u32,
    sext: bool,
    d16: D16,
) -> Result<(), Box<Fault>> {
    let Opnd::V(d) = u.d[0] else {
        return Ok(());
    };
    let d = d as usize;
    let words = bytes.div_ceil(4) as usize;
    for l in w.exec().iter() {
        let mut buf = [0u8; 16];
        // Buffer accesses swizzle per dword; others are one contiguous access.
        let pieces: &[(u32, u32)] = &if space == Space::Buffer && bytes > 4 {
            [(0, 4), (4, 4), (8, 4), (12, 4)]
        } else {
            [(0, bytes), (0, 0), (0, 0), (0, 0)]
        };
        for &(at, len) in pieces.iter().filter(|p| p.1 != 0 && p.0 < bytes) {
            let (addr, t) = lane_target(w, u, e, space, l, at, len, Access::Read)?;
            read(w, e, t, l, addr, &mut buf[at as usize..(at + len) as usize])?;
        }
        let v = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
        match (bytes, d16) {
            (1 | 2, D16::No) => {
                let x = if bytes == 1 {
                    if sext {
                        v as u8 as i8 as i32 as u32
                    } else {
                        v & 0xff
                    }
                } else if sext {
                    v as u16 as i16 as i32 as u32
                } else {
                    v & 0xffff
                };
                w.v[d][l] = x;
            }
            (_, D16::Lo | D16::Hi) => {
                let x = if bytes == 1 {
                    if sext {
                        u32::from(v as u8 as i8 as i16 as u16)
                    } else {
                        v & 0xff
                    }
                } else {
                    v & 0xffff
                };
                let old = w.v[d][l];
                w.v[d][l] = if d16 == D16::Hi {
                    (old & 0xffff) | x << 16
                } else {
                    (old & 0xffff_0000) | x
                };
            }
            _ => {
                for k in 0..words {
                    let i = 4 * k;
                    w.v[d + k][l] = u32::from_le_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
                }
            }
        }
    }
    Ok(())
}

fn store<const N: usize>(
    w: &mut Wave<N>,
    u: &Uop,
    e: &mut Env<'_>,
    space: Space,
    bytes: u32,
    hi: bool,
) -> Result<(), Box<Fault>> {
    let Opnd::V(s) = u.s[1] else {
        return Ok(());
    };
    let s = s as usize;
    for l in w.exec().iter() {
        let mut buf = [0u8; 16];
        for k in 0..bytes.div_ceil(4) as usize {
            buf[4 * k..4 * k + 4].copy_from_slice(&w.v[s + k][l].to_le_bytes());
        }
        if hi {
            let v = w.v[s][l] >> 16;
            buf[..4].copy_from_slice(&v.to_le_bytes());
        }
        if space == Space::Buffer && bytes > 4 {
            for at in (0..bytes).step_by(4) {
                let (addr, t) = lane_target(w, u, e, space, l, at, 4, Access::Write)?;
                write(w, e, t, l, addr, &buf[at as usize..at as usize + 4])?;
            }
        } else {
            let (addr, t) = lane_target(w, u, e, space, l, 0, bytes, Access::Write)?;
            write(w, e, t, l, addr, &buf[..bytes as usize])?;
        }
    }
    Ok(())
}

fn atomic<const N: usize>(
    w: &mut Wave<N>,
    u: &Uop,
    e: &mut Env<'_>,
    space: Space,
    op: At,
    wide: bool,
) -> Result<(), Box<Fault>> {
    let Opnd::V(s) = u.s[1] else {
        return Ok(());
    };
    let s = s as usize;
    let exec = w.exec();
    let len = if wide { 8 } else { 4 };
    let mut out = [[0u32; N]; 2];
    for l in exec.iter() {
        let (addr, t) = lane_target(w, u, e, space, l, 0, len, Access::Atomic)?;
        let data = |k: usize| u64::from(w.v[s + k][l]);
        // Data (and the compare value of the compare-swaps, after it) in dwords.
        let (src, cmp) = match (wide, op) {
            (false, At::Cmpswap | At::Fcmpswap) => (data(0), data(1)),
            (false, _) => (data(0), 0),
            (true, At::Cmpswap | At::Fcmpswap) => {
                (data(0) | data(1) << 32, data(2) | data(3) << 32)
            }
            (true, _) => (data(0) | data(1) << 32, 0),
        };
        let old = match t {
            // SAFETY: translate() approved `len` bytes at p for a read-modify-write.
            Target::Guest(p) => unsafe { atomic::on_guest(p, op, wide, src, cmp) },
            other => {
                // LDS or scratch: this work-group's own, on this thread.
                let mut b = [0u8; 8];
                read(w, e, other, l, addr, &mut b[..len as usize])?;
                let o = u64::from_le_bytes(b);
                if let Some(n) = atomic::apply(op, wide, o, src, cmp) {
                    let (_, t2) = lane_target(w, u, e, space, l, 0, len, Access::Atomic)?;
                    write(w, e, t2, l, addr, &n.to_le_bytes()[..len as usize])?;
                }
                o
            }
        };
        out[0][l] = old as u32;
        out[1][l] = (old >> 32) as u32;
    }
    if u.mem.glc {
        if let Opnd::V(d) = u.d[0] {
            w.vwrite(Opnd::V(d), exec, &out[0]);
            if wide {
                w.vwrite(Opnd::V(d + 1), exec, &out[1]);
            }
        }
    }
    Ok(())
}

macro_rules! mem {
    ($(#[$doc:meta])* $table:ident; $( $space:ident $name:ident => $op:expr ;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`.")]
            pub fn $name<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> R {
                run(w, u, e, Space::$space, $op)
            }
        )*
        impl<const N: usize> Handlers<N> {
            $(#[$doc])*
            pub const $table: &'static [(IsaOp, Handler<N>)] =
                &[$((op!($name), $name::<N> as Handler<N>)),*];
        }
    };
}

/// This module's handlers for `N`-lane waves.
pub struct Handlers<const N: usize>;

const fn ld(bytes: u32, sext: bool) -> Op {
    Op::Load {
        bytes,
        sext,
        d16: D16::No,
    }
}
const fn ld16(bytes: u32, sext: bool, hi: bool) -> Op {
    Op::Load {
        bytes,
        sext,
        d16: if hi { D16::Hi } else { D16::Lo },
    }
}
const fn st(bytes: u32, hi: bool) -> Op {
    Op::Store { bytes, hi }
}
const fn at(op: At) -> Op {
    Op::Atomic { op, wide: false }
}
const fn at2(op: At) -> Op {
    Op::Atomic { op, wide: true }
}

mem! {
    /// Handlers by operation.
    TABLE;
    Global global_load_ubyte => ld(1, false);
    Global global_load_sbyte => ld(1, true);
    Global global_load_ushort => ld(2, false);
    Global global_load_sshort => ld(2, true);
    Global global_load_dword => ld(4, false);
    Global global_load_dwordx2 => ld(8, false);
    Global global_load_dwordx3 => ld(12, false);
    Global global_load_dwordx4 => ld(16, false);
    Global global_load_ubyte_d16 => ld16(1, false, false);
    Global global_load_ubyte_d16_hi => ld16(1, false, true);
    Global global_load_sbyte_d16 => ld16(1, true, false);
    Global global_load_sbyte_d16_hi => ld16(1, true, true);
    Global global_load_short_d16 => ld16(2, false, false);
    Global global_load_short_d16_hi => ld16(2, false, true);
    Global global_store_byte => st(1, false);
    Global global_store_byte_d16_hi => st(1, true);
    Global global_store_short => st(2, false);
    Global global_store_short_d16_hi => st(2, true);
    Global global_store_dword => st(4, false);
    Global global_store_dwordx2 => st(8, false);
    Global global_store_dwordx3 => st(12, false);
    Global global_store_dwordx4 => st(16, false);
    Global global_atomic_swap => at(At::Swap);
    Global global_atomic_cmpswap => at(At::Cmpswap);
    Global global_atomic_add => at(At::Add);
    Global global_atomic_sub => at(At::Sub);
    Global global_atomic_smin => at(At::Smin);
    Global global_atomic_umin => at(At::Umin);
    Global global_atomic_smax => at(At::Smax);
    Global global_atomic_umax => at(At::Umax);
    Global global_atomic_and => at(At::And);
    Global global_atomic_or => at(At::Or);
    Global global_atomic_xor => at(At::Xor);
    Global global_atomic_inc => at(At::Inc);
    Global global_atomic_dec => at(At::Dec);
    Global global_atomic_fcmpswap => at(At::Fcmpswap);
    Global global_atomic_fmin => at(At::Fmin);
    Global global_atomic_fmax => at(At::Fmax);
    Global global_atomic_swap_x2 => at2(At::Swap);
    Global global_atomic_cmpswap_x2 => at2(At::Cmpswap);
    Global global_atomic_add_x2 => at2(At::Add);
    Global global_atomic_sub_x2 => at2(At::Sub);
    Global global_atomic_smin_x2 => at2(At::Smin);
    Global global_atomic_umin_x2 => at2(At::Umin);
    Global global_atomic_smax_x2 => at2(At::Smax);
    Global global_atomic_umax_x2 => at2(At::Umax);
    Global global_atomic_and_x2 => at2(At::And);
    Global global_atomic_or_x2 => at2(At::Or);
    Global global_atomic_xor_x2 => at2(At::Xor);
    Global global_atomic_inc_x2 => at2(At::Inc);
    Global global_atomic_dec_x2 => at2(At::Dec);
    Global global_atomic_fcmpswap_x2 => at2(At::Fcmpswap);
    Global global_atomic_fmin_x2 => at2(At::Fmin);
    Global global_atomic_fmax_x2 => at2(At::Fmax);
    Flat flat_load_ubyte => ld(1, false);
    Flat flat_load_sbyte => ld(1, true);
    Flat flat_load_ushort => ld(2, false);
    Flat flat_load_sshort => ld(2, true);
    Flat flat_load_dword => ld(4, false);
    Flat flat_load_dwordx2 => ld(8, false);
    Flat flat_load_dwordx3 => ld(12, false);
    Flat flat_load_dwordx4 => ld(16, false);
    Flat flat_load_ubyte_d16 => ld16(1, false, false);
    Flat flat_load_ubyte_d16_hi => ld16(1, false, true);
    Flat flat_load_sbyte_d16 => ld16(1, true, false);
    Flat flat_load_sbyte_d16_hi => ld16(1, true, true);
    Flat flat_load_short_d16 => ld16(2, false, false);
    Flat flat_load_short_d16_hi => ld16(2, false, true);
    Flat flat_store_byte => st(1, false);
    Flat flat_store_byte_d16_hi => st(1, true);
    Flat flat_store_short => st(2, false);
    Flat flat_store_short_d16_hi => st(2, true);
    Flat flat_store_dword => st(4, false);
    Flat flat_store_dwordx2 => st(8, false);
    Flat flat_store_dwordx3 => st(12, false);
    Flat flat_store_dwordx4 => st(16, false);
    Flat flat_atomic_swap => at(At::Swap);
    Flat flat_atomic_cmpswap => at(At::Cmpswap);
    Flat flat_atomic_add => at(At::Add);
    Flat flat_atomic_sub => at(At::Sub);
    Flat flat_atomic_smin => at(At::Smin);
    Flat flat_atomic_umin => at(At::Umin);
    Flat flat_atomic_smax => at(At::Smax);
    Flat flat_atomic_umax => at(At::Umax);
    Flat flat_atomic_and => at(At::And);
    Flat flat_atomic_or => at(At::Or);
    Flat flat_atomic_xor => at(At::Xor);
    Flat flat_atomic_inc => at(At::Inc);
    Flat flat_atomic_dec => at(At::Dec);
    Flat flat_atomic_fcmpswap => at(At::Fcmpswap);
    Flat flat_atomic_fmin => at(At::Fmin);
    Flat flat_atomic_fmax => at(At::Fmax);
    Flat flat_atomic_swap_x2 => at2(At::Swap);
    Flat flat_atomic_cmpswap_x2 => at2(At::Cmpswap);
    Flat flat_atomic_add_x2 => at2(At::Add);
    Flat flat_atomic_sub_x2 => at2(At::Sub);
    Flat flat_atomic_smin_x2 => at2(At::Smin);
    Flat flat_atomic_umin_x2 => at2(At::Umin);
    Flat flat_atomic_smax_x2 => at2(At::Smax);
    Flat flat_atomic_umax_x2 => at2(At::Umax);
    Flat flat_atomic_and_x2 => at2(At::And);
    Flat flat_atomic_or_x2 => at2(At::Or);
    Flat flat_atomic_xor_x2 => at2(At::Xor);
    Flat flat_atomic_inc_x2 => at2(At::Inc);
    Flat flat_atomic_dec_x2 => at2(At::Dec);
    Flat flat_atomic_fmin_x2 => at2(At::Fmin);
    Flat flat_atomic_fmax_x2 => at2(At::Fmax);
    Flat flat_atomic_fcmpswap_x2 => at2(At::Fcmpswap);
    Buffer buffer_load_ubyte => ld(1, false);
    Buffer buffer_load_sbyte => ld(1, true);
    Buffer buffer_load_ushort => ld(2, false);
    Buffer buffer_load_sshort => ld(2, true);
    Buffer buffer_load_dword => ld(4, false);
    Buffer buffer_load_dwordx2 => ld(8, false);
    Buffer buffer_load_dwordx3 => ld(12, false);
    Buffer buffer_load_dwordx4 => ld(16, false);
    Buffer buffer_load_ubyte_d16 => ld16(1, false, false);
    Buffer buffer_load_ubyte_d16_hi => ld16(1, false, true);
    Buffer buffer_load_sbyte_d16 => ld16(1, true, false);
    Buffer buffer_load_sbyte_d16_hi => ld16(1, true, true);
    Buffer buffer_load_short_d16 => ld16(2, false, false);
    Buffer buffer_load_short_d16_hi => ld16(2, false, true);
    Buffer buffer_store_byte => st(1, false);
    Buffer buffer_store_byte_d16_hi => st(1, true);
    Buffer buffer_store_short => st(2, false);
    Buffer buffer_store_short_d16_hi => st(2, true);
    Buffer buffer_store_dword => st(4, false);
    Buffer buffer_store_dwordx2 => st(8, false);
    Buffer buffer_store_dwordx3 => st(12, false);
    Buffer buffer_store_dwordx4 => st(16, false);
    Buffer buffer_atomic_swap => at(At::Swap);
    Buffer buffer_atomic_cmpswap => at(At::Cmpswap);
    Buffer buffer_atomic_add => at(At::Add);
    Buffer buffer_atomic_sub => at(At::Sub);
    Buffer buffer_atomic_smin => at(At::Smin);
    Buffer buffer_atomic_umin => at(At::Umin);
    Buffer buffer_atomic_smax => at(At::Smax);
    Buffer buffer_atomic_umax => at(At::Umax);
    Buffer buffer_atomic_and => at(At::And);
    Buffer buffer_atomic_or => at(At::Or);
    Buffer buffer_atomic_xor => at(At::Xor);
    Buffer buffer_atomic_inc => at(At::Inc);
    Buffer buffer_atomic_dec => at(At::Dec);
    Buffer buffer_atomic_fcmpswap => at(At::Fcmpswap);
    Buffer buffer_atomic_fmin => at(At::Fmin);
    Buffer buffer_atomic_fmax => at(At::Fmax);
    Buffer buffer_atomic_csub => at(At::Csub);
    Global global_atomic_csub => at(At::Csub);
    Buffer buffer_atomic_swap_x2 => at2(At::Swap);
    Buffer buffer_atomic_cmpswap_x2 => at2(At::Cmpswap);
    Buffer buffer_atomic_add_x2 => at2(At::Add);
    Buffer buffer_atomic_sub_x2 => at2(At::Sub);
    Buffer buffer_atomic_smin_x2 => at2(At::Smin);
    Buffer buffer_atomic_umin_x2 => at2(At::Umin);
    Buffer buffer_atomic_smax_x2 => at2(At::Smax);
    Buffer buffer_atomic_umax_x2 => at2(At::Umax);
    Buffer buffer_atomic_and_x2 => at2(At::And);
    Buffer buffer_atomic_or_x2 => at2(At::Or);
    Buffer buffer_atomic_xor_x2 => at2(At::Xor);
    Buffer buffer_atomic_inc_x2 => at2(At::Inc);
    Buffer buffer_atomic_dec_x2 => at2(At::Dec);
    Buffer buffer_atomic_fcmpswap_x2 => at2(At::Fcmpswap);
    Buffer buffer_atomic_fmin_x2 => at2(At::Fmin);
    Buffer buffer_atomic_fmax_x2 => at2(At::Fmax);
}

mem! {
    /// GFX9-layout (gfx90a, gfx942) memory operations gfx1030 lacks.
    GFX9_TABLE;
    Scratch scratch_load_ubyte => ld(1, false);
    Scratch scratch_load_sbyte => ld(1, true);
    Scratch scratch_load_ushort => ld(2, false);
    Scratch scratch_load_sshort => ld(2, true);
    Scratch scratch_load_dword => ld(4, false);
    Scratch scratch_load_dwordx2 => ld(8, false);
    Scratch scratch_load_dwordx3 => ld(12, false);
    Scratch scratch_load_dwordx4 => ld(16, false);
    Scratch scratch_load_ubyte_d16 => ld16(1, false, false);
    Scratch scratch_load_ubyte_d16_hi => ld16(1, false, true);
    Scratch scratch_load_sbyte_d16 => ld16(1, true, false);
    Scratch scratch_load_sbyte_d16_hi => ld16(1, true, true);
    Scratch scratch_load_short_d16 => ld16(2, false, false);
    Scratch scratch_load_short_d16_hi => ld16(2, false, true);
    Scratch scratch_store_byte => st(1, false);
    Scratch scratch_store_byte_d16_hi => st(1, true);
    Scratch scratch_store_short => st(2, false);
    Scratch scratch_store_short_d16_hi => st(2, true);
    Scratch scratch_store_dword => st(4, false);
    Scratch scratch_store_dwordx2 => st(8, false);
    Scratch scratch_store_dwordx3 => st(12, false);
    Scratch scratch_store_dwordx4 => st(16, false);
    Global global_atomic_add_f32 => at(At::Fadd);
    Global global_atomic_pk_add_f16 => at(At::PkAddF16);
    Global global_atomic_add_f64 => at2(At::Fadd);
    Global global_atomic_min_f64 => at2(At::Fmin);
    Global global_atomic_max_f64 => at2(At::Fmax);
    Flat flat_atomic_add_f64 => at2(At::Fadd);
    Flat flat_atomic_min_f64 => at2(At::Fmin);
    Flat flat_atomic_max_f64 => at2(At::Fmax);
    Buffer buffer_atomic_add_f32 => at(At::Fadd);
    Buffer buffer_atomic_pk_add_f16 => at(At::PkAddF16);
    Buffer buffer_atomic_add_f64 => at2(At::Fadd);
    Buffer buffer_atomic_min_f64 => at2(At::Fmin);
    Buffer buffer_atomic_max_f64 => at2(At::Fmax);
    Flat flat_atomic_add_f32 => at(At::Fadd);
    Flat flat_atomic_pk_add_f16 => at(At::PkAddF16);
    Flat flat_atomic_pk_add_bf16 => at(At::PkAddBf16);
    Global global_atomic_pk_add_bf16 => at(At::PkAddBf16);
}

/// gfx9's cache writebacks (`buffer_wbl2`): memory is coherent here; a release fence orders
/// the accesses before it.
pub fn buffer_wb<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
    Ctl::Next
}

/// `buffer_gl0_inv`, `buffer_gl1_inv`: caches are coherent here; an acquire fence orders the
/// accesses that follow.
pub fn buffer_inv<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> R {
    std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
    Ctl::Next
}

impl<const N: usize> Handlers<N> {
    /// Handlers defined outside the table macro.
    pub const EXTRA: &'static [(IsaOp, Handler<N>)] = &[
        (op!(buffer_gl0_inv), buffer_inv::<N> as Handler<N>),
        (op!(buffer_gl1_inv), buffer_inv::<N> as Handler<N>),
    ];

    /// gfx9's cache maintenance (`buffer_wbl2`, `buffer_invl2`, `buffer_wbinvl1`...) as fences.
    pub const GFX9_EXTRA: &'static [(IsaOp, Handler<N>)] = &[
        (op!(buffer_wbl2), buffer_wb::<N> as Handler<N>),
        (op!(buffer_invl2), buffer_inv::<N> as Handler<N>),
        (op!(buffer_wbinvl1), buffer_inv::<N> as Handler<N>),
        (op!(buffer_wbinvl1_vol), buffer_inv::<N> as Handler<N>),
        (op!(buffer_inv), buffer_inv::<N> as Handler<N>),
    ];
}
