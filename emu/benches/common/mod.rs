//! The benchmark kernels, assembled by hand into uops (the decoder is not needed to measure
//! the engine), and the same computations written for the host.

#![allow(dead_code)]

use rocload_emu::exec::{Block, Opnd, Uop};
use rocload_emu::{Dispatch, Emulator, FlatMemory};

pub const CODE: u64 = 0x10_0000;
pub const KERNARG: u64 = 0x20_0000;
pub const DATA: u64 = 0x30_0000;

/// Loop trip count of the ALU kernel.
pub const ITERS: u32 = 1000;
/// Work-items per group.
pub const GROUP: u32 = 256;
/// FMAs per loop iteration.
pub const FMAS: usize = 8;
/// Wave instructions per wave: set-up, the loop (FMAs + counter + compare + branch), store.
pub const WAVE_INSTRUCTIONS: u64 = 6 + ITERS as u64 * (FMAS as u64 + 3) + 2;

const A: f32 = 0.999_9;
const B: f32 = 0.000_1;

fn uop(i: usize, name: &'static str, d: [Opnd; 2], s: [Opnd; 3], imm: i64) -> Uop {
    Uop {
        d,
        s,
        imm,
        pc: CODE + 4 * i as u64,
        ..Uop::named(name)
    }
}

/// out[gid] = x after ITERS x FMAS steps of x = fma(x, A, B), x0 = gid as f32.
pub fn alu_kernel() -> Vec<Uop> {
    use Opnd::{Imm, None as N, S, V};
    let fa = Imm(u64::from(A.to_bits()));
    let fb = Imm(u64::from(B.to_bits()));
    let mut p = vec![
        uop(0, "s_load_dwordx2", [S(8), N], [S(4), N, N], 0),
        uop(
            1,
            "s_mul_i32",
            [S(10), N],
            [S(6), Imm(u64::from(GROUP)), N],
            0,
        ),
        uop(2, "v_add_nc_u32", [V(2), N], [S(10), V(0), N], 0),
        uop(3, "v_cvt_f32_u32", [V(1), N], [V(2), N, N], 0),
        uop(4, "v_lshlrev_b32", [V(2), N], [Imm(2), V(2), N], 0),
        uop(5, "s_mov_b32", [S(11), N], [Imm(0), N, N], 0),
    ];
    let top = p.len();
    for _ in 0..FMAS {
        let i = p.len();
        p.push(uop(i, "v_fma_f32", [V(1), N], [V(1), fa, fb], 0));
    }
    let i = p.len();
    p.push(uop(i, "s_add_u32", [S(11), N], [S(11), Imm(1), N], 0));
    p.push(uop(
        i + 1,
        "s_cmp_lt_u32",
        [N, N],
        [S(11), Imm(u64::from(ITERS)), N],
        0,
    ));
    p.push(uop(
        i + 2,
        "s_cbranch_scc1",
        [N, N],
        [N, N, N],
        (CODE + 4 * top as u64) as i64,
    ));
    let mut st = uop(i + 3, "global_store_dword", [N, N], [V(2), V(1), N], 0);
    st.mem.saddr = S(8);
    p.push(st);
    p.push(uop(i + 4, "s_endpgm", [N, N], [N, N, N], 0));
    p
}

/// The same computation on the host for 32 work-items at once, lanes innermost so the host
/// compiler vectorises it (the fair native baseline: a dependent chain per item would leave
/// the host's SIMD units idle).
#[inline(always)]
pub fn alu_native32(first: u32) -> [f32; 32] {
    let mut x: [f32; 32] = std::array::from_fn(|l| (first + l as u32) as f32);
    for _ in 0..ITERS {
        for _ in 0..FMAS {
            for v in x.iter_mut() {
                *v = v.mul_add(A, B);
            }
        }
    }
    x
}

/// The same computation on the host, for one work-item.
#[inline(always)]
pub fn alu_native(gid: u32) -> f32 {
    let mut x = gid as f32;
    for _ in 0..ITERS {
        for _ in 0..FMAS {
            x = x.mul_add(A, B);
        }
    }
    x
}

/// Puts a program in the decode cache (a block at every instruction, to the next branch).
pub fn load(emu: &Emulator, prog: &[Uop]) {
    let ends = |u: &Uop| {
        u.op.name().starts_with("s_branch")
            || u.op.name().starts_with("s_cbranch")
            || u.op.name() == "s_endpgm"
    };
    for start in 0..prog.len() {
        let end = (start..prog.len())
            .find(|&i| ends(&prog[i]))
            .unwrap_or(prog.len() - 1);
        emu.program()
            .insert(Block::new(prog[start].pc, prog[start..=end].to_vec()));
    }
}

/// A dispatch of `groups` groups of [`GROUP`] work-items with PSB + kernarg + group id x.
pub fn dispatch(groups: u32) -> Dispatch {
    let mut kd = [0u8; 64];
    let rsrc1: u32 = 0xf << 16 | 1 << 21 | 1 << 23;
    let rsrc2: u32 = 6 << 1 | 1 << 7;
    let props: u16 = 1 | 8 | 1 << 10;
    kd[48..52].copy_from_slice(&rsrc1.to_le_bytes());
    kd[52..56].copy_from_slice(&rsrc2.to_le_bytes());
    kd[56..58].copy_from_slice(&props.to_le_bytes());
    Dispatch {
        processor: "gfx1030",
        descriptor: kd,
        descriptor_address: CODE,
        grid: [groups * GROUP, 1, 1],
        workgroup: [GROUP as u16, 1, 1],
        kernarg_address: KERNARG,
        packet_address: 0,
        queue_address: 0,
        dispatch_id: 0,
        group_segment_size: 0,
        private_segment_size: 0,
        shared_aperture: 1 << 48,
        private_aperture: 2 << 48,
        compute_units: None,
    }
}

/// Guest memory with the kernarg segment pointing at an output array for `items` floats.
pub fn memory(items: u32) -> FlatMemory {
    let mut m = FlatMemory::new();
    m.map(KERNARG, 64, false).expect("kernarg");
    m.map(DATA, 4 * u64::from(items), true).expect("data");
    m.write_bytes(KERNARG, &DATA.to_le_bytes())
        .expect("pointer");
    m
}
