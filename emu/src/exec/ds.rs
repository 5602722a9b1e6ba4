//! LDS instructions (DS): loads and stores of 1 to 16 bytes, `read2`/`write2` (with `st64`),
//! atomics with and without return (including `cmpst` and float min/max/add), and the
//! lane-exchange instructions that use the LDS crossbar without memory (`ds_bpermute`,
//! `ds_permute`, `ds_swizzle`). Lanes run in order on one host thread, so LDS atomics are
//! atomic within the work-group by construction. Addresses past the work-group's LDS fault.
//! Not for flat accesses that reach LDS ([`super::vmem`] routes those).

use super::atomic::{self, AtomicOp as At};
use super::{ctl, Ctl, Env, Fault, Handler, Opnd, Uop};
use crate::error::FaultKind;
use crate::isa::Op;
use crate::wave::{sreg, Mask, Wave};

type R = Result<(), Box<Fault>>;

fn fault(l: usize, addr: u32, f: crate::lds::LdsFault) -> Box<Fault> {
    Box::new(Fault::Memory {
        lane: l as u32,
        address: u64::from(addr),
        kind: FaultKind::Lds(f),
    })
}

fn vaddr<const N: usize>(w: &Wave<N>, u: &Uop, l: usize) -> u32 {
    match u.s[0] {
        Opnd::V(r) => w.v[r as usize][l],
        _ => 0,
    }
}

fn data<const N: usize>(w: &Wave<N>, o: Opnd, l: usize, k: u16) -> u32 {
    match o {
        Opnd::V(r) => w.v[(r + k) as usize][l],
        _ => 0,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ext {
    Zero,
    Sign,
    D16Lo,
    D16Hi,
    SignD16Lo,
    SignD16Hi,
}

// The fast paths below run a wave's access in one pass over its lanes into temporaries,
// noting whether every lane was inside the LDS; only then do they write registers (or, for
// stores, check first). A lane outside sends the instruction down the per-lane path, which
// names the faulting lane and leaves what the lanes before it did, as the hardware order has it.

/// Reads the `W` little-endian words at byte `a` of `m` into lane `l` of `out`, with one
/// bounds check for all of them; whether they were there.
#[inline(always)]
fn words<const N: usize, const W: usize>(m: &[u8], a: usize, out: &mut [[u32; N]; W], l: usize) -> bool {
    match m.get(a..a + 4 * W) {
        Some(s) => {
            for (k, o) in out.iter_mut().enumerate() {
                o[l] = u32::from_le_bytes([s[4 * k], s[4 * k + 1], s[4 * k + 2], s[4 * k + 3]]);
            }
            true
        }
        None => false,
    }
}

/// Lane `l`'s LDS byte address: vaddr + `offset`, wrapping at 32 bits as on the per-lane path.
#[inline(always)]
fn lane_address(v: &[u32], l: usize, offset: u32) -> usize {
    v.get(l).copied().unwrap_or(0).wrapping_add(offset) as usize
}

/// `ds_read_b32` to `ds_read_b128`, `W` words a lane, when every lane is inside the LDS.
#[inline(always)]
fn load_words<const N: usize, const W: usize>(w: &mut Wave<N>, u: &Uop, e: &Env<'_>) -> Option<()> {
    let (Opnd::V(d), Opnd::V(r)) = (u.d[0], u.s[0]) else {
        return None;
    };
    let exec = w.exec();
    let off = u.mem.offset as u32 & 0xffff;
    let (m, v) = (e.lds.bytes(), &w.v[r as usize]);
    let mut out = [[0u32; N]; W];
    let mut ok = true;
    exec.each::<N>(|l| ok &= words(m, lane_address(v, l, off), &mut out, l));
    if !ok {
        return None;
    }
    for (k, o) in out.iter().enumerate() {
        w.vwrite(Opnd::V(d + k as u16), exec, o);
    }
    Some(())
}

/// `ds_read2*` of `W`-word elements when every lane is inside the LDS: registers d.. get
/// element 0's words, then element 1's.
#[inline(always)]
fn load2_words<const N: usize, const W: usize>(
    w: &mut Wave<N>,
    u: &Uop,
    e: &Env<'_>,
    st64: bool,
) -> Option<()> {
    let (Opnd::V(d), Opnd::V(r)) = (u.d[0], u.s[0]) else {
        return None;
    };
    let exec = w.exec();
    let scale = 4 * W as u32 * if st64 { 64 } else { 1 };
    let o0 = (u.mem.offset as u32 & 0xff) * scale;
    let o1 = (u32::from(u.mem.offset1) & 0xff) * scale;
    let (m, v) = (e.lds.bytes(), &w.v[r as usize]);
    let (mut out0, mut out1) = ([[0u32; N]; W], [[0u32; N]; W]);
    let mut ok = true;
    exec.each::<N>(|l| {
        ok &= words(m, lane_address(v, l, o0), &mut out0, l)
            & words(m, lane_address(v, l, o1), &mut out1, l);
    });
    if !ok {
        return None;
    }
    for (i, element) in [out0, out1].iter().enumerate() {
        for (k, o) in element.iter().enumerate() {
            w.vwrite(Opnd::V(d + (i * W + k) as u16), exec, o);
        }
    }
    Some(())
}

/// Whether every active lane's `bytes` at vaddr + each of `offsets` lie inside the LDS.
#[inline(always)]
fn all_inside<const N: usize>(v: &[u32; N], exec: Mask, offsets: &[u32], bytes: usize, size: usize) -> bool {
    let mut ok = true;
    exec.each::<N>(|l| {
        for &o in offsets {
            ok &= lane_address(v, l, o) + bytes <= size;
        }
    });
    ok
}

/// `ds_write_b32` to `ds_write_b128` when every lane is inside the LDS, lanes in order (the
/// last of several lanes writing one address wins, as on the per-lane path).
#[inline(always)]
fn store_words<const N: usize, const W: usize>(w: &Wave<N>, u: &Uop, e: &mut Env<'_>) -> Option<()> {
    let (Opnd::V(s), Opnd::V(r)) = (u.s[1], u.s[0]) else {
        return None;
    };
    let exec = w.exec();
    let off = u.mem.offset as u32 & 0xffff;
    let (v, s) = (&w.v[r as usize], s as usize);
    let m = e.lds.bytes_mut();
    if !all_inside(v, exec, &[off], 4 * W, m.len()) {
        return None;
    }
    exec.each::<N>(|l| {
        let a = lane_address(v, l, off);
        for k in 0..W {
            if let Some(dst) = m.get_mut(a + 4 * k..a + 4 * k + 4) {
                dst.copy_from_slice(&w.v[s + k][l].to_le_bytes());
            }
        }
    });
    Some(())
}

/// `ds_write2*` of `W`-word elements when every lane is inside the LDS.
#[inline(always)]
fn store2_words<const N: usize, const W: usize>(
    w: &Wave<N>,
    u: &Uop,
    e: &mut Env<'_>,
    st64: bool,
) -> Option<()> {
    let (Opnd::V(s0), Opnd::V(s1), Opnd::V(r)) = (u.s[1], u.s[2], u.s[0]) else {
        return None;
    };
    let exec = w.exec();
    let scale = 4 * W as u32 * if st64 { 64 } else { 1 };
    let o0 = (u.mem.offset as u32 & 0xff) * scale;
    let o1 = (u32::from(u.mem.offset1) & 0xff) * scale;
    let v = &w.v[r as usize];
    let m = e.lds.bytes_mut();
    if !all_inside(v, exec, &[o0, o1], 4 * W, m.len()) {
        return None;
    }
    exec.each::<N>(|l| {
        for (o, s) in [(o0, s0), (o1, s1)] {
            let a = lane_address(v, l, o);
            for k in 0..W {
                if let Some(dst) = m.get_mut(a + 4 * k..a + 4 * k + 4) {
                    dst.copy_from_slice(&w.v[s as usize + k][l].to_le_bytes());
                }
            }
        }
    });
    Some(())
}

/// `ds_read_*`: the fast path for whole words, else [`load_lanes`].
#[inline(always)]
fn load<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, bytes: u32, ext: Ext) -> R {
    let fast = match (bytes, ext) {
        (4, Ext::Zero) => load_words::<N, 1>(w, u, e),
        (8, Ext::Zero) => load_words::<N, 2>(w, u, e),
        (12, Ext::Zero) => load_words::<N, 3>(w, u, e),
        (16, Ext::Zero) => load_words::<N, 4>(w, u, e),
        _ => None,
    };
    match fast {
        Some(()) => Ok(()),
        None => load_lanes(w, u, e, bytes, ext),
    }
}

/// `ds_write_*`: the fast path for whole words, else [`store_lanes`].
#[inline(always)]
fn store<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, bytes: u32, hi: bool) -> R {
    let fast = match (bytes, hi) {
        (4, false) => store_words::<N, 1>(w, u, e),
        (8, false) => store_words::<N, 2>(w, u, e),
        (12, false) => store_words::<N, 3>(w, u, e),
        (16, false) => store_words::<N, 4>(w, u, e),
        _ => None,
    };
    match fast {
        Some(()) => Ok(()),
        None => store_lanes(w, u, e, bytes, hi),
    }
}

/// `ds_read2*`: the fast path, else [`load2_lanes`].
#[inline(always)]
fn load2<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, bytes: u32, st64: bool) -> R {
    let fast = match bytes {
        4 => load2_words::<N, 1>(w, u, e, st64),
        _ => load2_words::<N, 2>(w, u, e, st64),
    };
    match fast {
        Some(()) => Ok(()),
        None => load2_lanes(w, u, e, bytes, st64),
    }
}

/// `ds_write2*`: the fast path, else [`store2_lanes`].
#[inline(always)]
fn store2<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, bytes: u32, st64: bool) -> R {
    let fast = match bytes {
        4 => store2_words::<N, 1>(w, u, e, st64),
        _ => store2_words::<N, 2>(w, u, e, st64),
    };
    match fast {
        Some(()) => Ok(()),
        None => store2_lanes(w, u, e, bytes, st64),
    }
}

/// `ds_read_*` lane by lane: `bytes` at vaddr + offset.
fn load_lanes<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, bytes: u32, ext: Ext) -> R {
    let Opnd::V(d) = u.d[0] else {
        return Ok(());
    };
    let d = d as usize;
    for l in w.exec().iter() {
        let a = vaddr(w, u, l).wrapping_add(u.mem.offset as u32 & 0xffff);
        let mut b = [0u8; 16];
        match bytes {
            4 => b[..4].copy_from_slice(&e.lds.read_n::<4>(a).map_err(|f| fault(l, a, f))?),
            8 => b[..8].copy_from_slice(&e.lds.read_n::<8>(a).map_err(|f| fault(l, a, f))?),
            16 => b.copy_from_slice(&e.lds.read_n::<16>(a).map_err(|f| fault(l, a, f))?),
            _ => e
                .lds
                .read(a, &mut b[..bytes as usize])
                .map_err(|f| fault(l, a, f))?,
        }
        let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        match (bytes, ext) {
            (1, Ext::Zero) => w.v[d][l] = v & 0xff,
            (1, Ext::Sign) => w.v[d][l] = v as u8 as i8 as i32 as u32,
            (2, Ext::Zero) => w.v[d][l] = v & 0xffff,
            (2, Ext::Sign) => w.v[d][l] = v as u16 as i16 as i32 as u32,
            (1 | 2, Ext::D16Lo | Ext::D16Hi | Ext::SignD16Lo | Ext::SignD16Hi) => {
                let x = match (bytes, ext) {
                    (1, Ext::SignD16Lo | Ext::SignD16Hi) => u32::from(v as u8 as i8 as i16 as u16),
                    (1, _) => v & 0xff,
                    _ => v & 0xffff,
                };
                let old = w.v[d][l];
                let hi = matches!(ext, Ext::D16Hi | Ext::SignD16Hi);
                w.v[d][l] = if hi {
                    (old & 0xffff) | x << 16
                } else {
                    (old & 0xffff_0000) | x
                };
            }
            _ => {
                for k in 0..(bytes / 4) as usize {
                    w.v[d + k][l] =
                        u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]]);
                }
            }
        }
    }
    Ok(())
}

/// `ds_write_*` lane by lane: `bytes` of data0 (bits 16.. for the `d16_hi` forms).
fn store_lanes<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, bytes: u32, hi: bool) -> R {
    for l in w.exec().iter() {
        let a = vaddr(w, u, l).wrapping_add(u.mem.offset as u32 & 0xffff);
        let mut b = [0u8; 16];
        for k in 0..bytes.div_ceil(4) as u16 {
            b[4 * k as usize..4 * k as usize + 4]
                .copy_from_slice(&data(w, u.s[1], l, k).to_le_bytes());
        }
        if hi {
            let v = data(w, u.s[1], l, 0) >> 16;
            b[..4].copy_from_slice(&v.to_le_bytes());
        }
        e.lds
            .write(a, &b[..bytes as usize])
            .map_err(|f| fault(l, a, f))?;
    }
    Ok(())
}

/// `ds_read2*` lane by lane: two loads of `bytes` at offset0 and offset1 (times `bytes`,
/// times 64 for st64).
fn load2_lanes<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, bytes: u32, st64: bool) -> R {
    let Opnd::V(d) = u.d[0] else {
        return Ok(());
    };
    let d = d as usize;
    let scale = bytes * if st64 { 64 } else { 1 };
    let words = (bytes / 4) as usize;
    for l in w.exec().iter() {
        let base = vaddr(w, u, l);
        for (i, off) in [u.mem.offset as u32 & 0xff, u32::from(u.mem.offset1) & 0xff]
            .into_iter()
            .enumerate()
        {
            let a = base.wrapping_add(off * scale);
            let mut b = [0u8; 8];
            if bytes == 4 {
                b[..4].copy_from_slice(&e.lds.read_n::<4>(a).map_err(|f| fault(l, a, f))?);
            } else {
                b = e.lds.read_n::<8>(a).map_err(|f| fault(l, a, f))?;
            }
            for k in 0..words {
                w.v[d + i * words + k][l] =
                    u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]]);
            }
        }
    }
    Ok(())
}

/// `ds_write2*` lane by lane: data0 at offset0, data1 at offset1.
fn store2_lanes<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, bytes: u32, st64: bool) -> R {
    let scale = bytes * if st64 { 64 } else { 1 };
    for l in w.exec().iter() {
        let base = vaddr(w, u, l);
        for (src, off) in [
            (u.s[1], u.mem.offset as u32 & 0xff),
            (u.s[2], u32::from(u.mem.offset1) & 0xff),
        ] {
            let a = base.wrapping_add(off * scale);
            let mut b = [0u8; 8];
            for k in 0..(bytes / 4) as u16 {
                b[4 * k as usize..4 * k as usize + 4]
                    .copy_from_slice(&data(w, src, l, k).to_le_bytes());
            }
            e.lds
                .write(a, &b[..bytes as usize])
                .map_err(|f| fault(l, a, f))?;
        }
    }
    Ok(())
}

fn atomic<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>, op: At, wide: bool, ret: bool) -> R {
    let exec = w.exec();
    let mut out = [[0u32; N]; 2];
    let len = if wide { 8 } else { 4 };
    for l in exec.iter() {
        let addr = vaddr(w, u, l).wrapping_add(u.mem.offset as u32 & 0xffff);
        let rd = |o: Opnd| {
            if wide {
                u64::from(data(w, o, l, 0)) | u64::from(data(w, o, l, 1)) << 32
            } else {
                u64::from(data(w, o, l, 0))
            }
        };
        let (a, b) = (rd(u.s[1]), rd(u.s[2]));
        // ds_cmpst: data0 is the compare value, data1 the new one.
        let (src, cmp) = if op == At::Cmpswap { (b, a) } else { (a, b) };
        let mut buf = [0u8; 8];
        e.lds
            .read(addr, &mut buf[..len])
            .map_err(|f| fault(l, addr, f))?;
        let old = u64::from_le_bytes(buf);
        if let Some(new) = atomic::apply(op, wide, old, src, cmp) {
            e.lds
                .write(addr, &new.to_le_bytes()[..len])
                .map_err(|f| fault(l, addr, f))?;
        }
        out[0][l] = old as u32;
        out[1][l] = (old >> 32) as u32;
    }
    if ret {
        if let Opnd::V(d) = u.d[0] {
            w.vwrite(Opnd::V(d), exec, &out[0]);
            if wide {
                w.vwrite(Opnd::V(d + 1), exec, &out[1]);
            }
        }
    }
    Ok(())
}

/// `ds_bpermute_b32`: each lane reads data0 of the lane its address names (address / 4).
pub fn ds_bpermute_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> Ctl {
    let exec = w.exec();
    let src = w.vread(u.s[1]);
    let out: [u32; N] = std::array::from_fn(|l| {
        let a = vaddr(w, u, l).wrapping_add(u.mem.offset as u32 & 0xffff);
        src[(a / 4) as usize % N]
    });
    w.vwrite(u.d[0], exec, &out);
    Ctl::Next
}

/// `ds_permute_b32`: each active lane sends data0 to the lane its address names.
pub fn ds_permute_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> Ctl {
    let exec = w.exec();
    let src = w.vread(u.s[1]);
    let mut out = [0u32; N];
    for l in exec.iter() {
        let a = vaddr(w, u, l).wrapping_add(u.mem.offset as u32 & 0xffff);
        out[(a / 4) as usize % N] = src[l];
    }
    w.vwrite(u.d[0], exec, &out);
    Ctl::Next
}

/// `ds_swizzle_b32`: quad permutation (offset bit 15) or and/or/xor masks on the lane id
/// within 32 lanes. The data comes from the ADDR field's register (the instruction has no
/// address), which is where the assembler puts it.
pub fn ds_swizzle_b32<const N: usize>(w: &mut Wave<N>, u: &Uop, _: &mut Env<'_>) -> Ctl {
    let exec = w.exec();
    let src = w.vread(u.s[0]);
    let off = u.mem.offset as u32 & 0xffff;
    let out: [u32; N] = std::array::from_fn(|l| {
        let j = if off & 0x8000 != 0 {
            (l & !3) | (off as usize >> (2 * (l & 3)) & 3)
        } else {
            let (and, or, xor) = (
                off as usize & 0x1f,
                off as usize >> 5 & 0x1f,
                off as usize >> 10 & 0x1f,
            );
            // Within each group of 32 lanes.
            (l & !31) | (((l & 31 & and) | or) ^ xor)
        };
        if exec.has(j) {
            src[j % N]
        } else {
            0
        }
    });
    w.vwrite(u.d[0], exec, &out);
    Ctl::Next
}

/// `ds_gws_barrier`: one arrival at GWS barrier `M0[21:16] + offset`, which opens when the
/// first active lane's value plus one waves have arrived (cooperative groups' grid sync: one
/// wave per work-group, value = work-groups - 1). The scheduler keeps the count.
pub fn ds_gws_barrier<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Ctl {
    let Some(lane) = w.exec().lowest() else {
        return Ctl::Next;
    };
    let waves = w.vread(u.s[0])[lane].saturating_add(1);
    let resource = ((w.s[sreg::M0 as usize] >> 16) + (u.mem.offset as u32 & 0xffff)) & 0x3f;
    e.gws = (resource as u8, waves);
    Ctl::GridBarrier
}

/// `ds_gws_init`: sets up GWS barrier `M0[21:16] + offset` for `value + 1` waves (AMD's HIP
/// runtime runs it before a cooperative launch). Every `ds_gws_barrier` carries that count
/// itself and the scheduler's barriers live as long as one dispatch, so there is nothing to
/// keep: the instruction completes.
pub fn ds_gws_init<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> Ctl {
    Ctl::Next
}

/// `ds_nop`.
pub fn ds_nop<const N: usize>(_: &mut Wave<N>, _: &Uop, _: &mut Env<'_>) -> Ctl {
    Ctl::Next
}

macro_rules! ds {
    ($( $name:ident => |$w:ident, $u:ident, $e:ident| $body:expr ;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`.")]
            pub fn $name<const N: usize>($w: &mut Wave<N>, $u: &Uop, $e: &mut Env<'_>) -> Ctl {
                let r = $body;
                ctl(r, $e)
            }
        )*
        impl<const N: usize> Handlers<N> {
            /// Handlers by operation.
            pub const TABLE: &'static [(Op, Handler<N>)] = &[
                $((op!($name), $name::<N> as Handler<N>),)*
                (op!(ds_bpermute_b32), ds_bpermute_b32::<N> as Handler<N>),
                (op!(ds_permute_b32), ds_permute_b32::<N> as Handler<N>),
                (op!(ds_swizzle_b32), ds_swizzle_b32::<N> as Handler<N>),
                (op!(ds_nop), ds_nop::<N> as Handler<N>),
                (op!(ds_gws_barrier), ds_gws_barrier::<N> as Handler<N>),
                (op!(ds_gws_init), ds_gws_init::<N> as Handler<N>),
            ];
        }
    };
}

/// This module's handlers for `N`-lane waves.
pub struct Handlers<const N: usize>;

ds! {
    ds_read_u8 => |w, u, e| load(w, u, e, 1, Ext::Zero);
    ds_read_i8 => |w, u, e| load(w, u, e, 1, Ext::Sign);
    ds_read_u16 => |w, u, e| load(w, u, e, 2, Ext::Zero);
    ds_read_i16 => |w, u, e| load(w, u, e, 2, Ext::Sign);
    ds_read_u8_d16 => |w, u, e| load(w, u, e, 1, Ext::D16Lo);
    ds_read_u8_d16_hi => |w, u, e| load(w, u, e, 1, Ext::D16Hi);
    ds_read_u16_d16 => |w, u, e| load(w, u, e, 2, Ext::D16Lo);
    ds_read_u16_d16_hi => |w, u, e| load(w, u, e, 2, Ext::D16Hi);
    ds_read_b32 => |w, u, e| load(w, u, e, 4, Ext::Zero);
    ds_read_b64 => |w, u, e| load(w, u, e, 8, Ext::Zero);
    ds_read_b96 => |w, u, e| load(w, u, e, 12, Ext::Zero);
    ds_read_b128 => |w, u, e| load(w, u, e, 16, Ext::Zero);
    ds_write_b8 => |w, u, e| store(w, u, e, 1, false);
    ds_write_b8_d16_hi => |w, u, e| store(w, u, e, 1, true);
    ds_write_b16 => |w, u, e| store(w, u, e, 2, false);
    ds_write_b16_d16_hi => |w, u, e| store(w, u, e, 2, true);
    ds_write_b32 => |w, u, e| store(w, u, e, 4, false);
    ds_write_b64 => |w, u, e| store(w, u, e, 8, false);
    ds_write_b96 => |w, u, e| store(w, u, e, 12, false);
    ds_write_b128 => |w, u, e| store(w, u, e, 16, false);
    ds_read2_b32 => |w, u, e| load2(w, u, e, 4, false);
    ds_read2_b64 => |w, u, e| load2(w, u, e, 8, false);
    ds_read2st64_b32 => |w, u, e| load2(w, u, e, 4, true);
    ds_read2st64_b64 => |w, u, e| load2(w, u, e, 8, true);
    ds_write2_b32 => |w, u, e| store2(w, u, e, 4, false);
    ds_write2_b64 => |w, u, e| store2(w, u, e, 8, false);
    ds_write2st64_b32 => |w, u, e| store2(w, u, e, 4, true);
    ds_write2st64_b64 => |w, u, e| store2(w, u, e, 8, true);
    ds_add_u32 => |w, u, e| atomic(w, u, e, At::Add, false, false);
    ds_sub_u32 => |w, u, e| atomic(w, u, e, At::Sub, false, false);
    ds_rsub_u32 => |w, u, e| atomic(w, u, e, At::Rsub, false, false);
    ds_inc_u32 => |w, u, e| atomic(w, u, e, At::Inc, false, false);
    ds_dec_u32 => |w, u, e| atomic(w, u, e, At::Dec, false, false);
    ds_min_i32 => |w, u, e| atomic(w, u, e, At::Smin, false, false);
    ds_max_i32 => |w, u, e| atomic(w, u, e, At::Smax, false, false);
    ds_min_u32 => |w, u, e| atomic(w, u, e, At::Umin, false, false);
    ds_max_u32 => |w, u, e| atomic(w, u, e, At::Umax, false, false);
    ds_and_b32 => |w, u, e| atomic(w, u, e, At::And, false, false);
    ds_or_b32 => |w, u, e| atomic(w, u, e, At::Or, false, false);
    ds_xor_b32 => |w, u, e| atomic(w, u, e, At::Xor, false, false);
    ds_mskor_b32 => |w, u, e| atomic(w, u, e, At::Mskor, false, false);
    ds_cmpst_b32 => |w, u, e| atomic(w, u, e, At::Cmpswap, false, false);
    ds_cmpst_f32 => |w, u, e| atomic(w, u, e, At::Cmpswap, false, false);
    ds_min_f32 => |w, u, e| atomic(w, u, e, At::Fmin, false, false);
    ds_max_f32 => |w, u, e| atomic(w, u, e, At::Fmax, false, false);
    ds_add_f32 => |w, u, e| atomic(w, u, e, At::Fadd, false, false);
    ds_add_rtn_u32 => |w, u, e| atomic(w, u, e, At::Add, false, true);
    ds_sub_rtn_u32 => |w, u, e| atomic(w, u, e, At::Sub, false, true);
    ds_rsub_rtn_u32 => |w, u, e| atomic(w, u, e, At::Rsub, false, true);
    ds_inc_rtn_u32 => |w, u, e| atomic(w, u, e, At::Inc, false, true);
    ds_dec_rtn_u32 => |w, u, e| atomic(w, u, e, At::Dec, false, true);
    ds_min_rtn_i32 => |w, u, e| atomic(w, u, e, At::Smin, false, true);
    ds_max_rtn_i32 => |w, u, e| atomic(w, u, e, At::Smax, false, true);
    ds_min_rtn_u32 => |w, u, e| atomic(w, u, e, At::Umin, false, true);
    ds_max_rtn_u32 => |w, u, e| atomic(w, u, e, At::Umax, false, true);
    ds_and_rtn_b32 => |w, u, e| atomic(w, u, e, At::And, false, true);
    ds_or_rtn_b32 => |w, u, e| atomic(w, u, e, At::Or, false, true);
    ds_xor_rtn_b32 => |w, u, e| atomic(w, u, e, At::Xor, false, true);
    ds_mskor_rtn_b32 => |w, u, e| atomic(w, u, e, At::Mskor, false, true);
    ds_wrxchg_rtn_b32 => |w, u, e| atomic(w, u, e, At::Swap, false, true);
    ds_cmpst_rtn_b32 => |w, u, e| atomic(w, u, e, At::Cmpswap, false, true);
    ds_cmpst_rtn_f32 => |w, u, e| atomic(w, u, e, At::Cmpswap, false, true);
    ds_min_rtn_f32 => |w, u, e| atomic(w, u, e, At::Fmin, false, true);
    ds_max_rtn_f32 => |w, u, e| atomic(w, u, e, At::Fmax, false, true);
    ds_add_rtn_f32 => |w, u, e| atomic(w, u, e, At::Fadd, false, true);
    ds_add_u64 => |w, u, e| atomic(w, u, e, At::Add, true, false);
    ds_sub_u64 => |w, u, e| atomic(w, u, e, At::Sub, true, false);
    ds_min_i64 => |w, u, e| atomic(w, u, e, At::Smin, true, false);
    ds_max_i64 => |w, u, e| atomic(w, u, e, At::Smax, true, false);
    ds_min_u64 => |w, u, e| atomic(w, u, e, At::Umin, true, false);
    ds_max_u64 => |w, u, e| atomic(w, u, e, At::Umax, true, false);
    ds_and_b64 => |w, u, e| atomic(w, u, e, At::And, true, false);
    ds_or_b64 => |w, u, e| atomic(w, u, e, At::Or, true, false);
    ds_xor_b64 => |w, u, e| atomic(w, u, e, At::Xor, true, false);
    ds_cmpst_b64 => |w, u, e| atomic(w, u, e, At::Cmpswap, true, false);
    ds_min_f64 => |w, u, e| atomic(w, u, e, At::Fmin, true, false);
    ds_max_f64 => |w, u, e| atomic(w, u, e, At::Fmax, true, false);
    ds_add_rtn_u64 => |w, u, e| atomic(w, u, e, At::Add, true, true);
    ds_sub_rtn_u64 => |w, u, e| atomic(w, u, e, At::Sub, true, true);
    ds_min_rtn_i64 => |w, u, e| atomic(w, u, e, At::Smin, true, true);
    ds_max_rtn_i64 => |w, u, e| atomic(w, u, e, At::Smax, true, true);
    ds_min_rtn_u64 => |w, u, e| atomic(w, u, e, At::Umin, true, true);
    ds_max_rtn_u64 => |w, u, e| atomic(w, u, e, At::Umax, true, true);
    ds_and_rtn_b64 => |w, u, e| atomic(w, u, e, At::And, true, true);
    ds_or_rtn_b64 => |w, u, e| atomic(w, u, e, At::Or, true, true);
    ds_xor_rtn_b64 => |w, u, e| atomic(w, u, e, At::Xor, true, true);
    ds_wrxchg_rtn_b64 => |w, u, e| atomic(w, u, e, At::Swap, true, true);
    ds_cmpst_rtn_b64 => |w, u, e| atomic(w, u, e, At::Cmpswap, true, true);
    ds_min_rtn_f64 => |w, u, e| atomic(w, u, e, At::Fmin, true, true);
    ds_max_rtn_f64 => |w, u, e| atomic(w, u, e, At::Fmax, true, true);
    ds_inc_u64 => |w, u, e| atomic(w, u, e, At::Inc, true, false);
    ds_dec_u64 => |w, u, e| atomic(w, u, e, At::Dec, true, false);
    ds_rsub_u64 => |w, u, e| atomic(w, u, e, At::Rsub, true, false);
    ds_mskor_b64 => |w, u, e| atomic(w, u, e, At::Mskor, true, false);
    ds_inc_rtn_u64 => |w, u, e| atomic(w, u, e, At::Inc, true, true);
    ds_dec_rtn_u64 => |w, u, e| atomic(w, u, e, At::Dec, true, true);
    ds_rsub_rtn_u64 => |w, u, e| atomic(w, u, e, At::Rsub, true, true);
    ds_mskor_rtn_b64 => |w, u, e| atomic(w, u, e, At::Mskor, true, true);
    ds_cmpst_f64 => |w, u, e| atomic(w, u, e, At::Cmpswap, true, false);
    ds_cmpst_rtn_f64 => |w, u, e| atomic(w, u, e, At::Cmpswap, true, true);
    ds_read_i8_d16 => |w, u, e| load(w, u, e, 1, Ext::SignD16Lo);
    ds_read_i8_d16_hi => |w, u, e| load(w, u, e, 1, Ext::SignD16Hi);
}

/// `ds_add_f64` (gfx90a and later).
pub fn ds_add_f64<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Ctl {
    let r = atomic(w, u, e, At::Fadd, true, false);
    ctl(r, e)
}

/// `ds_add_rtn_f64` (gfx90a and later).
pub fn ds_add_rtn_f64<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Ctl {
    let r = atomic(w, u, e, At::Fadd, true, true);
    ctl(r, e)
}

/// `ds_pk_add_f16` (gfx940).
pub fn ds_pk_add_f16<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Ctl {
    let r = atomic(w, u, e, At::PkAddF16, false, false);
    ctl(r, e)
}

/// `ds_pk_add_rtn_f16` (gfx940).
pub fn ds_pk_add_rtn_f16<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Ctl {
    let r = atomic(w, u, e, At::PkAddF16, false, true);
    ctl(r, e)
}

/// `ds_pk_add_bf16` (gfx940).
pub fn ds_pk_add_bf16<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Ctl {
    let r = atomic(w, u, e, At::PkAddBf16, false, false);
    ctl(r, e)
}

/// `ds_pk_add_rtn_bf16` (gfx940).
pub fn ds_pk_add_rtn_bf16<const N: usize>(w: &mut Wave<N>, u: &Uop, e: &mut Env<'_>) -> Ctl {
    let r = atomic(w, u, e, At::PkAddBf16, false, true);
    ctl(r, e)
}

impl<const N: usize> Handlers<N> {
    /// GFX9-layout (gfx90a, gfx942) LDS operations gfx1030 lacks.
    pub const GFX9_TABLE: &'static [(Op, Handler<N>)] = &[
        (op!(ds_add_f64), ds_add_f64::<N> as Handler<N>),
        (op!(ds_add_rtn_f64), ds_add_rtn_f64::<N> as Handler<N>),
        (op!(ds_pk_add_f16), ds_pk_add_f16::<N> as Handler<N>),
        (op!(ds_pk_add_rtn_f16), ds_pk_add_rtn_f16::<N> as Handler<N>),
        (op!(ds_pk_add_bf16), ds_pk_add_bf16::<N> as Handler<N>),
        (op!(ds_pk_add_rtn_bf16), ds_pk_add_rtn_bf16::<N> as Handler<N>),
    ];
}
