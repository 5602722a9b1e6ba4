//! LDS instructions (DS): loads and stores of 1 to 16 bytes, `read2`/`write2` (with `st64`),
//! atomics with and without return (including `cmpst` and float min/max/add), and the
//! lane-exchange instructions that use the LDS crossbar without memory (`ds_bpermute`,
//! `ds_permute`, `ds_swizzle`). Lanes run in order on one host thread, so LDS atomics are
//! atomic within the work-group by construction. Addresses past the work-group's LDS fault.
//! Not for flat accesses that reach LDS ([`super::vmem`] routes those).

use super::{Env, Fault, Handler, Opnd, Step, Uop};
use crate::error::FaultKind;
use crate::float as fp;
use crate::wave::{sreg, Wave, LANES};

type R = Result<Step, Box<Fault>>;

fn fault(l: usize, addr: u32, f: crate::lds::LdsFault) -> Box<Fault> {
    Box::new(Fault::Memory {
        lane: l as u32,
        address: u64::from(addr),
        kind: FaultKind::Lds(f),
    })
}

fn vaddr(w: &Wave, u: &Uop, l: usize) -> u32 {
    match u.s[0] {
        Opnd::V(r) => w.v[r as usize][l],
        _ => 0,
    }
}

fn data(w: &Wave, o: Opnd, l: usize, k: u16) -> u32 {
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

/// `ds_read_*`: `bytes` at vaddr + offset.
fn load(w: &mut Wave, u: &Uop, e: &mut Env<'_>, bytes: u32, ext: Ext) -> R {
    let Opnd::V(d) = u.d[0] else {
        return Ok(Step::Next);
    };
    let d = d as usize;
    for l in super::lanes_of(w.exec()) {
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
    Ok(Step::Next)
}

/// `ds_write_*`: `bytes` of data0 (bits 16.. for the `d16_hi` forms).
fn store(w: &mut Wave, u: &Uop, e: &mut Env<'_>, bytes: u32, hi: bool) -> R {
    for l in super::lanes_of(w.exec()) {
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
    Ok(Step::Next)
}

/// `ds_read2*`: two loads of `bytes` at offset0 and offset1 (times `bytes`, times 64 for st64).
fn load2(w: &mut Wave, u: &Uop, e: &mut Env<'_>, bytes: u32, st64: bool) -> R {
    let Opnd::V(d) = u.d[0] else {
        return Ok(Step::Next);
    };
    let d = d as usize;
    let scale = bytes * if st64 { 64 } else { 1 };
    let words = (bytes / 4) as usize;
    for l in super::lanes_of(w.exec()) {
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
    Ok(Step::Next)
}

/// `ds_write2*`: data0 at offset0, data1 at offset1.
fn store2(w: &mut Wave, u: &Uop, e: &mut Env<'_>, bytes: u32, st64: bool) -> R {
    let scale = bytes * if st64 { 64 } else { 1 };
    for l in super::lanes_of(w.exec()) {
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
    Ok(Step::Next)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    Add,
    Sub,
    Rsub,
    Inc,
    Dec,
    MinI,
    MaxI,
    MinU,
    MaxU,
    And,
    Or,
    Xor,
    Mskor,
    Wrxchg,
    Cmpst,
    MinF,
    MaxF,
    AddF,
}

fn apply64(op: At, old: u64, a: u64, b: u64, wide: bool) -> u64 {
    let (fmin, fmax, fadd) = if wide {
        (
            fp::min_f64(f64::from_bits(old), f64::from_bits(a), true).to_bits(),
            fp::max_f64(f64::from_bits(old), f64::from_bits(a), true).to_bits(),
            (f64::from_bits(old) + f64::from_bits(a)).to_bits(),
        )
    } else {
        let (o, x) = (f32::from_bits(old as u32), f32::from_bits(a as u32));
        (
            u64::from(fp::min_f32(o, x, true).to_bits()),
            u64::from(fp::max_f32(o, x, true).to_bits()),
            u64::from((o + x).to_bits()),
        )
    };
    let (smin, smax) = if wide {
        (
            (old as i64).min(a as i64) as u64,
            (old as i64).max(a as i64) as u64,
        )
    } else {
        (
            u64::from((old as i32).min(a as i32) as u32),
            u64::from((old as i32).max(a as i32) as u32),
        )
    };
    let r = match op {
        At::Add => old.wrapping_add(a),
        At::Sub => old.wrapping_sub(a),
        At::Rsub => a.wrapping_sub(old),
        At::Inc => {
            if old >= a {
                0
            } else {
                old + 1
            }
        }
        At::Dec => {
            if old == 0 || old > a {
                a
            } else {
                old - 1
            }
        }
        At::MinI => smin,
        At::MaxI => smax,
        At::MinU => old.min(a),
        At::MaxU => old.max(a),
        At::And => old & a,
        At::Or => old | a,
        At::Xor => old ^ a,
        At::Mskor => (old & !a) | b,
        At::Wrxchg => a,
        // ds_cmpst: data0 is the compare value, data1 the new one.
        At::Cmpst => {
            if old == a {
                b
            } else {
                old
            }
        }
        At::MinF => fmin,
        At::MaxF => fmax,
        At::AddF => fadd,
    };
    if wide {
        r
    } else {
        r & 0xffff_ffff
    }
}

fn atomic(w: &mut Wave, u: &Uop, e: &mut Env<'_>, op: At, wide: bool, ret: bool) -> R {
    let exec = w.exec();
    let mut out = [[0u32; LANES]; 2];
    let len = if wide { 8 } else { 4 };
    for l in super::lanes_of(exec) {
        let addr = vaddr(w, u, l).wrapping_add(u.mem.offset as u32 & 0xffff);
        let rd = |o: Opnd| {
            if wide {
                u64::from(data(w, o, l, 0)) | u64::from(data(w, o, l, 1)) << 32
            } else {
                u64::from(data(w, o, l, 0))
            }
        };
        let (a, b) = (rd(u.s[1]), rd(u.s[2]));
        let mut buf = [0u8; 8];
        e.lds
            .read(addr, &mut buf[..len])
            .map_err(|f| fault(l, addr, f))?;
        let old = u64::from_le_bytes(buf);
        let new = apply64(op, old, a, b, wide);
        e.lds
            .write(addr, &new.to_le_bytes()[..len])
            .map_err(|f| fault(l, addr, f))?;
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
    Ok(Step::Next)
}

/// `ds_bpermute_b32`: each lane reads data0 of the lane its address names (address / 4).
pub fn ds_bpermute_b32(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    let exec = w.exec();
    let src = w.vread(u.s[1]);
    let out: [u32; LANES] = std::array::from_fn(|l| {
        let a = vaddr(w, u, l).wrapping_add(u.mem.offset as u32 & 0xffff);
        src[(a / 4) as usize % LANES]
    });
    w.vwrite(u.d[0], exec, &out);
    Ok(Step::Next)
}

/// `ds_permute_b32`: each active lane sends data0 to the lane its address names.
pub fn ds_permute_b32(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    let exec = w.exec();
    let src = w.vread(u.s[1]);
    let mut out = [0u32; LANES];
    for l in super::lanes_of(exec) {
        let a = vaddr(w, u, l).wrapping_add(u.mem.offset as u32 & 0xffff);
        out[(a / 4) as usize % LANES] = src[l];
    }
    w.vwrite(u.d[0], exec, &out);
    Ok(Step::Next)
}

/// `ds_swizzle_b32`: quad permutation (offset bit 15) or and/or/xor masks on the lane id
/// within 32 lanes. The data comes from the ADDR field's register (the instruction has no
/// address), which is where the assembler puts it.
pub fn ds_swizzle_b32(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    let exec = w.exec();
    let src = w.vread(u.s[0]);
    let off = u.mem.offset as u32 & 0xffff;
    let out: [u32; LANES] = std::array::from_fn(|l| {
        let j = if off & 0x8000 != 0 {
            (l & !3) | (off as usize >> (2 * (l & 3)) & 3)
        } else {
            let (and, or, xor) = (
                off as usize & 0x1f,
                off as usize >> 5 & 0x1f,
                off as usize >> 10 & 0x1f,
            );
            ((l & and) | or) ^ xor
        };
        if exec >> j & 1 != 0 {
            src[j % LANES]
        } else {
            0
        }
    });
    w.vwrite(u.d[0], exec, &out);
    Ok(Step::Next)
}

/// `ds_gws_barrier`: one arrival at GWS barrier `M0[21:16] + offset`, which opens when the
/// first active lane's value plus one waves have arrived (cooperative groups' grid sync: one
/// wave per work-group, value = work-groups - 1). The scheduler keeps the count.
pub fn ds_gws_barrier(w: &mut Wave, u: &Uop, _: &mut Env<'_>) -> R {
    let exec = w.exec();
    if exec == 0 {
        return Ok(Step::Next);
    }
    let lane = exec.trailing_zeros() as usize;
    let waves = w.vread(u.s[0])[lane].saturating_add(1);
    let resource = ((w.s[sreg::M0 as usize] >> 16) + (u.mem.offset as u32 & 0xffff)) & 0x3f;
    Ok(Step::GridBarrier {
        resource: resource as u8,
        waves,
    })
}

/// `ds_gws_init`: sets up GWS barrier `M0[21:16] + offset` for `value + 1` waves (AMD's HIP
/// runtime runs it before a cooperative launch). Every `ds_gws_barrier` carries that count
/// itself and the scheduler's barriers live as long as one dispatch, so there is nothing to
/// keep: the instruction completes.
pub fn ds_gws_init(_: &mut Wave, _: &Uop, _: &mut Env<'_>) -> R {
    Ok(Step::Next)
}

/// `ds_nop`.
pub fn ds_nop(_: &mut Wave, _: &Uop, _: &mut Env<'_>) -> R {
    Ok(Step::Next)
}

macro_rules! ds {
    ($( $name:ident => |$w:ident, $u:ident, $e:ident| $body:expr ;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`.")]
            pub fn $name($w: &mut Wave, $u: &Uop, $e: &mut Env<'_>) -> R {
                $body
            }
        )*
        /// Handlers by mnemonic.
        pub const TABLE: &[(&str, Handler)] = &[
            $((stringify!($name), $name as Handler),)*
            ("ds_bpermute_b32", ds_bpermute_b32),
            ("ds_permute_b32", ds_permute_b32),
            ("ds_swizzle_b32", ds_swizzle_b32),
            ("ds_nop", ds_nop),
            ("ds_gws_barrier", ds_gws_barrier),
            ("ds_gws_init", ds_gws_init),
        ];
    };
}

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
    ds_min_i32 => |w, u, e| atomic(w, u, e, At::MinI, false, false);
    ds_max_i32 => |w, u, e| atomic(w, u, e, At::MaxI, false, false);
    ds_min_u32 => |w, u, e| atomic(w, u, e, At::MinU, false, false);
    ds_max_u32 => |w, u, e| atomic(w, u, e, At::MaxU, false, false);
    ds_and_b32 => |w, u, e| atomic(w, u, e, At::And, false, false);
    ds_or_b32 => |w, u, e| atomic(w, u, e, At::Or, false, false);
    ds_xor_b32 => |w, u, e| atomic(w, u, e, At::Xor, false, false);
    ds_mskor_b32 => |w, u, e| atomic(w, u, e, At::Mskor, false, false);
    ds_cmpst_b32 => |w, u, e| atomic(w, u, e, At::Cmpst, false, false);
    ds_cmpst_f32 => |w, u, e| atomic(w, u, e, At::Cmpst, false, false);
    ds_min_f32 => |w, u, e| atomic(w, u, e, At::MinF, false, false);
    ds_max_f32 => |w, u, e| atomic(w, u, e, At::MaxF, false, false);
    ds_add_f32 => |w, u, e| atomic(w, u, e, At::AddF, false, false);
    ds_add_rtn_u32 => |w, u, e| atomic(w, u, e, At::Add, false, true);
    ds_sub_rtn_u32 => |w, u, e| atomic(w, u, e, At::Sub, false, true);
    ds_rsub_rtn_u32 => |w, u, e| atomic(w, u, e, At::Rsub, false, true);
    ds_inc_rtn_u32 => |w, u, e| atomic(w, u, e, At::Inc, false, true);
    ds_dec_rtn_u32 => |w, u, e| atomic(w, u, e, At::Dec, false, true);
    ds_min_rtn_i32 => |w, u, e| atomic(w, u, e, At::MinI, false, true);
    ds_max_rtn_i32 => |w, u, e| atomic(w, u, e, At::MaxI, false, true);
    ds_min_rtn_u32 => |w, u, e| atomic(w, u, e, At::MinU, false, true);
    ds_max_rtn_u32 => |w, u, e| atomic(w, u, e, At::MaxU, false, true);
    ds_and_rtn_b32 => |w, u, e| atomic(w, u, e, At::And, false, true);
    ds_or_rtn_b32 => |w, u, e| atomic(w, u, e, At::Or, false, true);
    ds_xor_rtn_b32 => |w, u, e| atomic(w, u, e, At::Xor, false, true);
    ds_mskor_rtn_b32 => |w, u, e| atomic(w, u, e, At::Mskor, false, true);
    ds_wrxchg_rtn_b32 => |w, u, e| atomic(w, u, e, At::Wrxchg, false, true);
    ds_cmpst_rtn_b32 => |w, u, e| atomic(w, u, e, At::Cmpst, false, true);
    ds_cmpst_rtn_f32 => |w, u, e| atomic(w, u, e, At::Cmpst, false, true);
    ds_min_rtn_f32 => |w, u, e| atomic(w, u, e, At::MinF, false, true);
    ds_max_rtn_f32 => |w, u, e| atomic(w, u, e, At::MaxF, false, true);
    ds_add_rtn_f32 => |w, u, e| atomic(w, u, e, At::AddF, false, true);
    ds_add_u64 => |w, u, e| atomic(w, u, e, At::Add, true, false);
    ds_sub_u64 => |w, u, e| atomic(w, u, e, At::Sub, true, false);
    ds_min_i64 => |w, u, e| atomic(w, u, e, At::MinI, true, false);
    ds_max_i64 => |w, u, e| atomic(w, u, e, At::MaxI, true, false);
    ds_min_u64 => |w, u, e| atomic(w, u, e, At::MinU, true, false);
    ds_max_u64 => |w, u, e| atomic(w, u, e, At::MaxU, true, false);
    ds_and_b64 => |w, u, e| atomic(w, u, e, At::And, true, false);
    ds_or_b64 => |w, u, e| atomic(w, u, e, At::Or, true, false);
    ds_xor_b64 => |w, u, e| atomic(w, u, e, At::Xor, true, false);
    ds_cmpst_b64 => |w, u, e| atomic(w, u, e, At::Cmpst, true, false);
    ds_min_f64 => |w, u, e| atomic(w, u, e, At::MinF, true, false);
    ds_max_f64 => |w, u, e| atomic(w, u, e, At::MaxF, true, false);
    ds_add_rtn_u64 => |w, u, e| atomic(w, u, e, At::Add, true, true);
    ds_sub_rtn_u64 => |w, u, e| atomic(w, u, e, At::Sub, true, true);
    ds_min_rtn_i64 => |w, u, e| atomic(w, u, e, At::MinI, true, true);
    ds_max_rtn_i64 => |w, u, e| atomic(w, u, e, At::MaxI, true, true);
    ds_min_rtn_u64 => |w, u, e| atomic(w, u, e, At::MinU, true, true);
    ds_max_rtn_u64 => |w, u, e| atomic(w, u, e, At::MaxU, true, true);
    ds_and_rtn_b64 => |w, u, e| atomic(w, u, e, At::And, true, true);
    ds_or_rtn_b64 => |w, u, e| atomic(w, u, e, At::Or, true, true);
    ds_xor_rtn_b64 => |w, u, e| atomic(w, u, e, At::Xor, true, true);
    ds_wrxchg_rtn_b64 => |w, u, e| atomic(w, u, e, At::Wrxchg, true, true);
    ds_cmpst_rtn_b64 => |w, u, e| atomic(w, u, e, At::Cmpst, true, true);
    ds_min_rtn_f64 => |w, u, e| atomic(w, u, e, At::MinF, true, true);
    ds_max_rtn_f64 => |w, u, e| atomic(w, u, e, At::MaxF, true, true);
    ds_inc_u64 => |w, u, e| atomic(w, u, e, At::Inc, true, false);
    ds_dec_u64 => |w, u, e| atomic(w, u, e, At::Dec, true, false);
    ds_rsub_u64 => |w, u, e| atomic(w, u, e, At::Rsub, true, false);
    ds_mskor_b64 => |w, u, e| atomic(w, u, e, At::Mskor, true, false);
    ds_inc_rtn_u64 => |w, u, e| atomic(w, u, e, At::Inc, true, true);
    ds_dec_rtn_u64 => |w, u, e| atomic(w, u, e, At::Dec, true, true);
    ds_rsub_rtn_u64 => |w, u, e| atomic(w, u, e, At::Rsub, true, true);
    ds_mskor_rtn_b64 => |w, u, e| atomic(w, u, e, At::Mskor, true, true);
    ds_cmpst_f64 => |w, u, e| atomic(w, u, e, At::Cmpst, true, false);
    ds_cmpst_rtn_f64 => |w, u, e| atomic(w, u, e, At::Cmpst, true, true);
    ds_read_i8_d16 => |w, u, e| load(w, u, e, 1, Ext::SignD16Lo);
    ds_read_i8_d16_hi => |w, u, e| load(w, u, e, 1, Ext::SignD16Hi);
}
