//! Semantics tests per instruction class. Expected values come from host computations (Rust's
//! IEEE f32/f64 arithmetic, `half`, integer ops) or from the ISA's definition, never from
//! numbers typed in.

use super::*;
use crate::lds::Lds;
use crate::memory::FlatMemory;
use crate::wave::{sreg, Mask, Wave, LANES};
use crate::NoServices;

fn op(name: &'static str, d: [Opnd; 2], s: [Opnd; 3]) -> Uop {
    let u = Uop::named(name);
    assert!(
        crate::family::rdna2::WAVE32.executes(u.op),
        "no handler for {name}"
    );
    Uop { d, s, ..u }
}

fn exec_on(w: &mut Wave<32>, u: &Uop, mem: &FlatMemory, lds: &mut Lds) -> Result<Step, Box<Fault>> {
    let spans = Spans::default();
    let mut env = Env::new(mem, lds, &NoServices, &spans);
    step32(w, u, &mut env)
}

fn run(w: &mut Wave<32>, u: &Uop) -> Step {
    let mem = FlatMemory::new();
    let mut lds = Lds::new(0);
    exec_on(w, u, &mem, &mut lds).expect("no fault")
}

fn wave() -> Wave<32> {
    let mut w = Wave::<32>::new();
    w.s[sreg::EXEC as usize] = u32::MAX;
    w.mode = 0x3f0 | 1 << 8 | 1 << 9;
    w
}

fn floats(seed: u32) -> [u32; LANES] {
    // A spread of magnitudes, signs, zeros, denormals, infinities and NaN.
    let special = [
        0.0f32,
        -0.0,
        1.0,
        -1.5,
        f32::MIN_POSITIVE / 4.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        3.0e38,
        1.0e-30,
    ];
    std::array::from_fn(|l| {
        let i = (l as u32)
            .wrapping_mul(2654435761)
            .wrapping_add(seed.wrapping_mul(40503));
        if l % 3 == 0 {
            special[(i as usize >> 3) % special.len()].to_bits()
        } else {
            (((i >> 8) as f32) / 1024.0 - 4096.0 + (seed as f32) * 0.37).to_bits()
        }
    })
}

fn same_f32(a: u32, b: f32) -> bool {
    a == b.to_bits() || (f32::from_bits(a).is_nan() && b.is_nan())
}

#[test]
fn vop2_f32_ops_match_host_arithmetic_and_respect_exec() {
    let mut w = wave();
    w.v[1] = floats(1);
    w.v[2] = floats(2);
    w.v[3] = [0xdead_beef; LANES];
    w.s[sreg::EXEC as usize] = 0x5555_5555;
    for (name, f) in [
        ("v_add_f32", (|a, b| a + b) as fn(f32, f32) -> f32),
        ("v_sub_f32", |a, b| a - b),
        ("v_subrev_f32", |a, b| b - a),
        ("v_mul_f32", |a, b| a * b),
    ] {
        w.v[3] = [0xdead_beef; LANES];
        run(
            &mut w,
            &op(
                name,
                [Opnd::V(3), Opnd::None],
                [Opnd::V(1), Opnd::V(2), Opnd::None],
            ),
        );
        for l in 0..LANES {
            if l % 2 == 0 {
                let want = f(f32::from_bits(w.v[1][l]), f32::from_bits(w.v[2][l]));
                assert!(same_f32(w.v[3][l], want), "{name} lane {l}");
            } else {
                assert_eq!(w.v[3][l], 0xdead_beef, "{name}: disabled lane {l} written");
            }
        }
    }
}

#[test]
fn inline_constants_and_sgpr_sources_broadcast() {
    let mut w = wave();
    w.v[1] = floats(3);
    w.s[7] = 2.5f32.to_bits();
    run(
        &mut w,
        &op(
            "v_mul_f32",
            [Opnd::V(2), Opnd::None],
            [Opnd::Imm(0.5f32.to_bits().into()), Opnd::V(1), Opnd::None],
        ),
    );
    run(
        &mut w,
        &op(
            "v_add_f32",
            [Opnd::V(3), Opnd::None],
            [Opnd::S(7), Opnd::V(2), Opnd::None],
        ),
    );
    for l in 0..LANES {
        assert!(same_f32(w.v[3][l], 2.5 + 0.5 * f32::from_bits(w.v[1][l])));
    }
}

#[test]
fn vop3_modifiers_neg_abs_clamp_omod() {
    let mut w = wave();
    w.v[1] = floats(4);
    w.v[2] = floats(5);
    let mut u = op(
        "v_add_f32",
        [Opnd::V(3), Opnd::None],
        [Opnd::V(1), Opnd::V(2), Opnd::None],
    );
    u.m.neg = 0b01;
    u.m.abs = 0b10;
    u.m.omod = 1;
    u.m.clamp = true;
    run(&mut w, &u);
    for l in 0..LANES {
        let (a, b) = (f32::from_bits(w.v[1][l]), f32::from_bits(w.v[2][l]));
        let r = (-a + b.abs()) * 2.0;
        let want = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
        assert!(same_f32(w.v[3][l], want), "lane {l}: {a} {b}");
    }
}

#[test]
fn fma_keeps_denormals_and_is_fused() {
    let mut w = wave();
    w.v[1] = floats(6);
    w.v[2] = floats(7);
    w.v[3] = floats(8);
    run(
        &mut w,
        &op(
            "v_fma_f32",
            [Opnd::V(4), Opnd::None],
            [Opnd::V(1), Opnd::V(2), Opnd::V(3)],
        ),
    );
    for l in 0..LANES {
        let want =
            f32::from_bits(w.v[1][l]).mul_add(f32::from_bits(w.v[2][l]), f32::from_bits(w.v[3][l]));
        assert!(same_f32(w.v[4][l], want), "lane {l}");
    }
    // A denormal result stays denormal (mode 3 keeps them).
    w.v[1] = [f32::MIN_POSITIVE.to_bits(); LANES];
    run(
        &mut w,
        &op(
            "v_mul_f32",
            [Opnd::V(5), Opnd::None],
            [Opnd::V(1), Opnd::Imm(0.5f32.to_bits().into()), Opnd::None],
        ),
    );
    assert_eq!(w.v[5][0], (f32::MIN_POSITIVE * 0.5).to_bits());
}

#[test]
fn carry_chain_adds_64_bit_values() {
    let mut w = wave();
    let a: [u64; LANES] = std::array::from_fn(|l| (l as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let b: [u64; LANES] = std::array::from_fn(|l| u64::MAX - (l as u64) * 977);
    for l in 0..LANES {
        (w.v[1][l], w.v[2][l]) = (a[l] as u32, (a[l] >> 32) as u32);
        (w.v[3][l], w.v[4][l]) = (b[l] as u32, (b[l] >> 32) as u32);
    }
    run(
        &mut w,
        &op(
            "v_add_co_u32",
            [Opnd::V(5), Opnd::S(sreg::VCC)],
            [Opnd::V(1), Opnd::V(3), Opnd::None],
        ),
    );
    run(
        &mut w,
        &op(
            "v_add_co_ci_u32",
            [Opnd::V(6), Opnd::S(sreg::VCC)],
            [Opnd::V(2), Opnd::V(4), Opnd::S(sreg::VCC)],
        ),
    );
    for l in 0..LANES {
        let sum = a[l].wrapping_add(b[l]);
        assert_eq!(
            u64::from(w.v[5][l]) | u64::from(w.v[6][l]) << 32,
            sum,
            "lane {l}"
        );
        let carry = (u128::from(a[l]) + u128::from(b[l])) >> 64 != 0;
        assert_eq!(w.vcc().has(l), carry);
    }
    // Subtract with borrow gives the 64-bit difference.
    run(
        &mut w,
        &op(
            "v_sub_co_u32",
            [Opnd::V(7), Opnd::S(10)],
            [Opnd::V(1), Opnd::V(3), Opnd::None],
        ),
    );
    run(
        &mut w,
        &op(
            "v_sub_co_ci_u32",
            [Opnd::V(8), Opnd::S(11)],
            [Opnd::V(2), Opnd::V(4), Opnd::S(10)],
        ),
    );
    for l in 0..LANES {
        assert_eq!(
            u64::from(w.v[7][l]) | u64::from(w.v[8][l]) << 32,
            a[l].wrapping_sub(b[l])
        );
    }
}

#[test]
fn integer_multiply_and_bitfield_ops_match_their_definitions() {
    let mut w = wave();
    w.v[1] = std::array::from_fn(|l| 0x8765_4321u32.rotate_left(l as u32));
    w.v[2] = std::array::from_fn(|l| 0x1357_9bdfu32.wrapping_mul(l as u32 + 1));
    w.v[3] = std::array::from_fn(|l| (l as u32) * 3);
    let s = |w: &mut Wave<32>, n, d| {
        run(
            w,
            &op(
                n,
                [Opnd::V(d), Opnd::None],
                [Opnd::V(1), Opnd::V(2), Opnd::V(3)],
            ),
        )
    };
    s(&mut w, "v_mul_hi_u32", 10);
    s(&mut w, "v_mul_lo_u32", 11);
    s(&mut w, "v_mul_hi_i32", 12);
    s(&mut w, "v_alignbit_b32", 13);
    s(&mut w, "v_bfi_b32", 14);
    s(&mut w, "v_sad_u32", 15);
    s(&mut w, "v_xad_u32", 16);
    for l in 0..LANES {
        let (a, b, c) = (w.v[1][l], w.v[2][l], w.v[3][l]);
        assert_eq!(w.v[10][l], ((u64::from(a) * u64::from(b)) >> 32) as u32);
        assert_eq!(w.v[11][l], a.wrapping_mul(b));
        assert_eq!(
            w.v[12][l],
            ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32
        );
        assert_eq!(
            w.v[13][l],
            ((u64::from(a) << 32 | u64::from(b)) >> (c % 32)) as u32
        );
        assert_eq!(w.v[14][l], (a & b) | (!a & c));
        assert_eq!(w.v[15][l], a.abs_diff(b).wrapping_add(c));
        assert_eq!(w.v[16][l], (a ^ b).wrapping_add(c));
    }
    // v_bfe_u32/i32: offset and width from src1/src2 low 5 bits.
    w.v[2] = [8; LANES];
    w.v[3] = [12; LANES];
    s(&mut w, "v_bfe_u32", 17);
    s(&mut w, "v_bfe_i32", 18);
    for l in 0..LANES {
        let a = w.v[1][l];
        assert_eq!(w.v[17][l], (a >> 8) & 0xfff);
        assert_eq!(w.v[18][l], (((a >> 8) << 20) as i32 >> 20) as u32);
    }
    // v_mad_u64_u32 against u128 arithmetic.
    w.v[4] = [u32::MAX; LANES];
    w.v[5] = [u32::MAX - 1; LANES];
    run(
        &mut w,
        &op(
            "v_mad_u64_u32",
            [Opnd::V(20), Opnd::S(12)],
            [Opnd::V(1), Opnd::V(2), Opnd::V(4)],
        ),
    );
    for l in 0..LANES {
        let p = u128::from(w.v[1][l]) * u128::from(w.v[2][l])
            + u128::from(u64::from(w.v[4][l]) | u64::from(w.v[5][l]) << 32);
        assert_eq!(
            u64::from(w.v[20][l]) | u64::from(w.v[21][l]) << 32,
            p as u64
        );
        assert_eq!(w.s[12] >> l & 1 != 0, p >> 64 != 0);
    }
}

#[test]
fn compares_write_masks_vcc_sgprs_or_exec() {
    let mut w = wave();
    w.v[1] = floats(9);
    w.v[2] = floats(10);
    w.s[sreg::EXEC as usize] = 0xffff_0fff;
    run(
        &mut w,
        &op(
            "v_cmp_lt_f32",
            [Opnd::S(sreg::VCC), Opnd::None],
            [Opnd::V(1), Opnd::V(2), Opnd::None],
        ),
    );
    run(
        &mut w,
        &op(
            "v_cmp_neq_f32",
            [Opnd::S(20), Opnd::None],
            [Opnd::V(1), Opnd::V(2), Opnd::None],
        ),
    );
    for l in 0..LANES {
        let (a, b) = (f32::from_bits(w.v[1][l]), f32::from_bits(w.v[2][l]));
        let on = 0xffff_0fffu32 >> l & 1 != 0;
        assert_eq!(w.vcc().has(l), on && a < b, "lt lane {l}");
        assert_eq!(w.s[20] >> l & 1 != 0, on && a != b, "neq lane {l}");
    }
    // v_cmpx writes EXEC (lowering points its destination there).
    w.v[3] = std::array::from_fn(|l| l as u32);
    run(
        &mut w,
        &op(
            "v_cmpx_gt_u32",
            [Opnd::S(sreg::EXEC), Opnd::None],
            [Opnd::V(3), Opnd::Imm(20), Opnd::None],
        ),
    );
    assert_eq!(w.exec(), Mask(0xffe0_0000));
}

#[test]
fn cndmask_selects_by_lane_mask() {
    let mut w = wave();
    w.v[1] = [1; LANES];
    w.v[2] = [2; LANES];
    w.s[30] = 0xf0f0_f0f0;
    run(
        &mut w,
        &op(
            "v_cndmask_b32",
            [Opnd::V(3), Opnd::None],
            [Opnd::V(1), Opnd::V(2), Opnd::S(30)],
        ),
    );
    for l in 0..LANES {
        assert_eq!(w.v[3][l], if 0xf0f0_f0f0u32 >> l & 1 != 0 { 2 } else { 1 });
    }
}

#[test]
fn f16_ops_round_like_half_and_keep_the_high_bits_on_gfx10() {
    let mut w = wave();
    let a: [u32; LANES] = std::array::from_fn(|l| {
        0xabcd_0000 | u32::from(half::f16::from_f32(l as f32 * 0.3 - 3.0).to_bits())
    });
    let b: [u32; LANES] = std::array::from_fn(|l| {
        u32::from(half::f16::from_f32(1.0 / (l as f32 + 0.5)).to_bits()) << 16 | 0x1234
    });
    w.v[1] = a;
    w.v[2] = b;
    w.v[3] = [0x5555_0000; LANES];
    let mut u = op(
        "v_add_f16",
        [Opnd::V(3), Opnd::None],
        [Opnd::V(1), Opnd::V(2), Opnd::None],
    );
    u.m.op_sel = 0b010; // src1 from its high half
    run(&mut w, &u);
    for l in 0..LANES {
        let x = half::f16::from_bits(a[l] as u16).to_f32()
            + half::f16::from_bits((b[l] >> 16) as u16).to_f32();
        assert_eq!(
            w.v[3][l],
            0x5555_0000 | u32::from(half::f16::from_f32(x).to_bits()),
            "lane {l}"
        );
    }
}

#[test]
fn packed_f16_uses_op_sel_and_op_sel_hi() {
    let mut w = wave();
    let pack = |lo: f32, hi: f32| {
        u32::from(half::f16::from_f32(lo).to_bits())
            | u32::from(half::f16::from_f32(hi).to_bits()) << 16
    };
    w.v[1] = std::array::from_fn(|l| pack(l as f32, -(l as f32) * 0.5));
    w.v[2] = std::array::from_fn(|_| pack(0.25, 8.0));
    let mut u = op(
        "v_pk_mul_f16",
        [Opnd::V(3), Opnd::None],
        [Opnd::V(1), Opnd::V(2), Opnd::None],
    );
    u.m.op_sel = 0b00;
    u.m.op_sel_hi = 0b01; // src0 high for the high half, src1 low for both
    run(&mut w, &u);
    for l in 0..LANES {
        let lo = half::f16::from_f32(l as f32 * 0.25);
        let hi = half::f16::from_f32(-(l as f32) * 0.5 * 0.25);
        assert_eq!(
            w.v[3][l],
            u32::from(lo.to_bits()) | u32::from(hi.to_bits()) << 16,
            "lane {l}"
        );
    }
}

#[test]
fn fma_mix_mixes_f16_and_f32_sources() {
    let mut w = wave();
    w.v[1] =
        std::array::from_fn(|l| u32::from(half::f16::from_f32(l as f32 + 0.5).to_bits()) << 16);
    w.v[2] = [3.0f32.to_bits(); LANES];
    w.v[3] = [(-1.0f32).to_bits(); LANES];
    let mut u = op(
        "v_fma_mix_f32",
        [Opnd::V(4), Opnd::None],
        [Opnd::V(1), Opnd::V(2), Opnd::V(3)],
    );
    u.m.op_sel_hi = 0b001;
    u.m.op_sel = 0b001;
    run(&mut w, &u);
    for l in 0..LANES {
        assert_eq!(w.v[4][l], (l as f32 + 0.5).mul_add(3.0, -1.0).to_bits());
    }
}

#[test]
fn dpp_row_shr_feeds_a_scan_step() {
    let mut w = wave();
    w.v[1] = std::array::from_fn(|l| l as u32 + 1);
    w.v[2] = [0; LANES];
    let mut u = op(
        "v_add_nc_u32",
        [Opnd::V(2), Opnd::None],
        [Opnd::V(1), Opnd::V(1), Opnd::None],
    );
    u.lanes = LaneMode::Dpp(Dpp {
        ctrl: 0x111,
        row_mask: 0xf,
        bank_mask: 0xf,
        bound_ctrl: false,
        fi: false,
    });
    run(&mut w, &u);
    for l in 0..LANES {
        let want = if l % 16 == 0 {
            0
        } else {
            (l as u32) + (l as u32 + 1)
        };
        assert_eq!(w.v[2][l], want, "lane {l}");
    }
}

#[test]
fn sdwa_selects_source_bytes_and_merges_destination_words() {
    let mut w = wave();
    w.v[1] = [0x8899_aabb; LANES];
    w.v[2] = [0x0000_0001; LANES];
    w.v[3] = [0x1111_2222; LANES];
    let mut u = op(
        "v_add_nc_u32",
        [Opnd::V(3), Opnd::None],
        [Opnd::V(1), Opnd::V(2), Opnd::None],
    );
    u.lanes = LaneMode::Sdwa(Sdwa {
        dst_sel: 5,
        dst_unused: 2,
        src_sel: [2, 6],
        sext: [true, false],
    });
    run(&mut w, &u);
    // byte 2 of src0 = 0x99, sign-extended, + 1 = 0xffff_ff9a; its low word into the high half.
    assert_eq!(w.v[3][0], 0xff9a_2222);
}

#[test]
fn lane_reads_and_writes() {
    let mut w = wave();
    w.v[1] = std::array::from_fn(|l| 100 + l as u32);
    w.s[sreg::EXEC as usize] = 0b1011_0000;
    run(
        &mut w,
        &op(
            "v_readfirstlane_b32",
            [Opnd::S(3), Opnd::None],
            [Opnd::V(1), Opnd::None, Opnd::None],
        ),
    );
    assert_eq!(w.s[3], 104);
    run(
        &mut w,
        &op(
            "v_readlane_b32",
            [Opnd::S(4), Opnd::None],
            [Opnd::V(1), Opnd::Imm(31), Opnd::None],
        ),
    );
    assert_eq!(w.s[4], 131);
    run(
        &mut w,
        &op(
            "v_writelane_b32",
            [Opnd::V(1), Opnd::None],
            [Opnd::Imm(7), Opnd::Imm(2), Opnd::None],
        ),
    );
    assert_eq!(w.v[1][2], 7, "writelane ignores EXEC");
    w.s[sreg::EXEC as usize] = u32::MAX;
    run(
        &mut w,
        &op(
            "v_mbcnt_lo_u32_b32",
            [Opnd::V(2), Opnd::None],
            [Opnd::Imm(0xf0f0_f0f0), Opnd::Imm(5), Opnd::None],
        ),
    );
    for l in 0..LANES {
        assert_eq!(
            w.v[2][l],
            (0xf0f0_f0f0u32 & ((1u64 << l) - 1) as u32).count_ones() + 5
        );
    }
}

#[test]
fn division_sequence_matches_host_f64_division() {
    // div_scale / rcp / fma / div_fmas / div_fixup as clang emits them for f64.
    let mut w = wave();
    let nums = [1.0f64, -7.25, 1e-310, 3e307, 0.1, 5.0, 0.0, f64::INFINITY];
    let dens = [3.0f64, 0.5, 3.0, 1e-5, 0.7, 0.0, 0.0, 2.0];
    for l in 0..LANES {
        let (n, d) = (nums[l % 8], dens[l % 8] * (1.0 + l as f64 / 64.0));
        (w.v[0][l], w.v[1][l]) = (n.to_bits() as u32, (n.to_bits() >> 32) as u32);
        (w.v[2][l], w.v[3][l]) = (d.to_bits() as u32, (d.to_bits() >> 32) as u32);
    }
    let v = Opnd::V;
    run(
        &mut w,
        &op("v_div_scale_f64", [v(4), Opnd::S(40)], [v(2), v(2), v(0)]),
    );
    run(
        &mut w,
        &op(
            "v_div_scale_f64",
            [v(6), Opnd::S(sreg::VCC)],
            [v(0), v(2), v(0)],
        ),
    );
    run(
        &mut w,
        &op(
            "v_rcp_f64",
            [v(8), Opnd::None],
            [v(4), Opnd::None, Opnd::None],
        ),
    );
    for l in 0..LANES {
        (w.v[30][l], w.v[31][l]) = (0, 0x3ff0_0000);
    }
    let mut step = |name: &'static str, d, a, b, c, n: u8| {
        let mut u = op(name, [v(d), Opnd::None], [v(a), v(b), v(c)]);
        u.m.neg = n;
        run(&mut w, &u);
    };
    step("v_fma_f64", 10, 4, 8, 30, 0b001);
    step("v_fma_f64", 8, 8, 10, 8, 0);
    step("v_fma_f64", 10, 4, 8, 30, 0b001);
    step("v_fma_f64", 8, 8, 10, 8, 0);
    step("v_mul_f64", 12, 6, 8, 8, 0);
    step("v_fma_f64", 14, 4, 12, 6, 0b001);
    step("v_div_fmas_f64", 8, 14, 8, 12, 0);
    step("v_div_fixup_f64", 16, 8, 2, 0, 0);
    for l in 0..LANES {
        let n = f64::from_bits(u64::from(w.v[0][l]) | u64::from(w.v[1][l]) << 32);
        let d = f64::from_bits(u64::from(w.v[2][l]) | u64::from(w.v[3][l]) << 32);
        let got = f64::from_bits(u64::from(w.v[16][l]) | u64::from(w.v[17][l]) << 32);
        let want = n / d;
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "lane {l}: {n:e}/{d:e} = {got:e}, host {want:e}"
        );
    }
}

#[test]
fn salu_carry_chain_and_scc_rules() {
    let mut w = wave();
    let (a, b) = (0xffff_ffff_0000_0005u64, 0x0000_0001_ffff_fffeu64);
    w.swrite64(Opnd::S(0), a);
    w.swrite64(Opnd::S(2), b);
    run(
        &mut w,
        &op(
            "s_add_u32",
            [Opnd::S(4), Opnd::None],
            [Opnd::S(0), Opnd::S(2), Opnd::None],
        ),
    );
    run(
        &mut w,
        &op(
            "s_addc_u32",
            [Opnd::S(5), Opnd::None],
            [Opnd::S(1), Opnd::S(3), Opnd::None],
        ),
    );
    assert_eq!(w.sread64(Opnd::S(4)), a.wrapping_add(b));
    assert!(w.scc, "the high halves carry out");
    run(
        &mut w,
        &op(
            "s_sub_u32",
            [Opnd::S(6), Opnd::None],
            [Opnd::S(0), Opnd::S(2), Opnd::None],
        ),
    );
    run(
        &mut w,
        &op(
            "s_subb_u32",
            [Opnd::S(7), Opnd::None],
            [Opnd::S(1), Opnd::S(3), Opnd::None],
        ),
    );
    assert_eq!(w.sread64(Opnd::S(6)), a.wrapping_sub(b));
    run(
        &mut w,
        &op(
            "s_bfe_u32",
            [Opnd::S(8), Opnd::None],
            [Opnd::Imm(0xabcd_1234), Opnd::Imm(4 | 8 << 16), Opnd::None],
        ),
    );
    assert_eq!(w.s[8], (0xabcd_1234u32 >> 4) & 0xff);
    assert!(w.scc);
    run(
        &mut w,
        &op(
            "s_min_i32",
            [Opnd::S(9), Opnd::None],
            [Opnd::Imm(-5i32 as u32 as u64), Opnd::Imm(3), Opnd::None],
        ),
    );
    assert_eq!((w.s[9] as i32, w.scc), (-5, true));
    run(
        &mut w,
        &op(
            "s_ff1_i32_b32",
            [Opnd::S(10), Opnd::None],
            [Opnd::Imm(0), Opnd::None, Opnd::None],
        ),
    );
    assert_eq!(w.s[10], u32::MAX);
    // s_and_saveexec: old EXEC to the destination, EXEC narrowed, SCC = EXEC != 0.
    w.s[sreg::EXEC as usize] = 0x0000_ffff;
    run(
        &mut w,
        &op(
            "s_and_saveexec_b32",
            [Opnd::S(11), Opnd::None],
            [Opnd::Imm(0x00ff_00f0), Opnd::None, Opnd::None],
        ),
    );
    assert_eq!((w.s[11], w.exec(), w.scc), (0x0000_ffff, Mask(0xf0), true));
}

#[test]
fn hwreg_flat_scratch_and_mode() {
    let mut w = wave();
    let mut u = op(
        "s_setreg_b32",
        [Opnd::None; 2],
        [Opnd::Imm(0x1234_5678), Opnd::None, Opnd::None],
    );
    u.imm = 20 | 31 << 11; // hwreg(HW_REG_FLAT_SCR_LO), all 32 bits
    run(&mut w, &u);
    u.s[0] = Opnd::Imm(0xf000);
    u.imm = 21 | 31 << 11;
    run(&mut w, &u);
    assert_eq!(w.flat_scratch, 0xf000_1234_5678);
    let mut g = op("s_getreg_b32", [Opnd::S(3), Opnd::None], [Opnd::None; 3]);
    g.imm = 1 | 4 << 6 | 3 << 11; // MODE bits 7:4 (denormal modes)
    run(&mut w, &g);
    assert_eq!(w.s[3], 0xf);
}

#[test]
fn ds_write2_read2_and_bpermute() {
    let mem = FlatMemory::new();
    let mut lds = Lds::new(1024);
    let mut w = wave();
    w.v[1] = std::array::from_fn(|l| 4 * l as u32);
    w.v[2] = std::array::from_fn(|l| 1000 + l as u32);
    w.v[3] = std::array::from_fn(|l| 2000 + l as u32);
    let mut u = op(
        "ds_write2_b32",
        [Opnd::None; 2],
        [Opnd::V(1), Opnd::V(2), Opnd::V(3)],
    );
    u.mem.offset = 0;
    u.mem.offset1 = 32;
    exec_on(&mut w, &u, &mem, &mut lds).unwrap();
    let mut r = op(
        "ds_read2_b32",
        [Opnd::V(4), Opnd::None],
        [Opnd::V(1), Opnd::None, Opnd::None],
    );
    r.mem.offset = 0;
    r.mem.offset1 = 32;
    exec_on(&mut w, &r, &mem, &mut lds).unwrap();
    assert_eq!((w.v[4][5], w.v[5][5]), (1005, 2005));
    // bpermute: lane l reads lane (31 - l).
    w.v[6] = std::array::from_fn(|l| 4 * (31 - l as u32));
    let b = op(
        "ds_bpermute_b32",
        [Opnd::V(7), Opnd::None],
        [Opnd::V(6), Opnd::V(2), Opnd::None],
    );
    exec_on(&mut w, &b, &mem, &mut lds).unwrap();
    assert_eq!((w.v[7][0], w.v[7][31]), (1031, 1000));
    // Past the end: a typed LDS fault naming the first bad lane.
    w.v[1][3] = 1022;
    let e = exec_on(&mut w, &r, &mem, &mut lds).unwrap_err();
    assert!(
        matches!(
            *e,
            Fault::Memory {
                lane: 3,
                address: 1022,
                kind: FaultKind::Lds(_)
            }
        ),
        "{e:?}"
    );
}

#[test]
fn global_loads_stores_atomics_and_faults() {
    let mut mem = FlatMemory::new();
    mem.map(0x10_0000, 4096, true).unwrap();
    let mut lds = Lds::new(0);
    let mut w = wave();
    for l in 0..LANES {
        let a = 0x10_0000u64 + 8 * l as u64;
        (w.v[0][l], w.v[1][l]) = (a as u32, (a >> 32) as u32);
    }
    w.v[2] = std::array::from_fn(|l| l as u32 * 11);
    w.v[3] = std::array::from_fn(|l| !(l as u32));
    let st = op(
        "global_store_dwordx2",
        [Opnd::None; 2],
        [Opnd::V(0), Opnd::V(2), Opnd::None],
    );
    exec_on(&mut w, &st, &mem, &mut lds).unwrap();
    let ld = op(
        "global_load_dword",
        [Opnd::V(4), Opnd::None],
        [Opnd::V(0), Opnd::None, Opnd::None],
    );
    exec_on(&mut w, &ld, &mem, &mut lds).unwrap();
    assert_eq!(w.v[4][9], 99);
    // saddr form: s[10:11] base + 32-bit vaddr offset + immediate.
    w.swrite64(Opnd::S(10), 0x10_0000);
    w.v[5] = std::array::from_fn(|l| 8 * l as u32);
    let mut ld2 = op(
        "global_load_sbyte",
        [Opnd::V(6), Opnd::None],
        [Opnd::V(5), Opnd::None, Opnd::None],
    );
    ld2.mem.saddr = Opnd::S(10);
    ld2.mem.offset = 4;
    exec_on(&mut w, &ld2, &mem, &mut lds).unwrap();
    assert_eq!(w.v[6][2], !2u32 as u8 as i8 as i32 as u32);
    // Atomic add with return.
    let mut at = op(
        "global_atomic_add",
        [Opnd::V(7), Opnd::None],
        [Opnd::V(0), Opnd::V(2), Opnd::None],
    );
    at.mem.glc = true;
    exec_on(&mut w, &at, &mem, &mut lds).unwrap();
    exec_on(&mut w, &ld, &mem, &mut lds).unwrap();
    assert_eq!((w.v[7][3], w.v[4][3]), (33, 66));
    // cmpswap: data = {new, cmp}.
    w.v[8] = [5; LANES];
    w.v[9] = std::array::from_fn(|l| if l == 1 { 22 } else { 0 });
    let mut cs = op(
        "global_atomic_cmpswap",
        [Opnd::V(10), Opnd::None],
        [Opnd::V(0), Opnd::V(8), Opnd::None],
    );
    cs.mem.glc = true;
    exec_on(&mut w, &cs, &mem, &mut lds).unwrap();
    exec_on(&mut w, &ld, &mem, &mut lds).unwrap();
    assert_eq!((w.v[4][1], w.v[4][2]), (5, 44));
    // A lane outside guest memory faults with the embedder's payload.
    w.v[0][17] = 0x20_0000;
    let e = exec_on(&mut w, &ld, &mem, &mut lds).unwrap_err();
    match *e {
        Fault::Memory {
            lane,
            address,
            kind: FaultKind::Guest(p),
        } => {
            assert_eq!((lane, address), (17, 0x20_0000));
            assert!(p.downcast_ref::<crate::FlatFault>().is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn mubuf_scratch_and_flat_private_reach_the_same_bytes() {
    let mem = FlatMemory::new();
    let mut lds = Lds::new(0);
    let mut w = wave();
    w.scratch = crate::scratch::Scratch::new(64, 32, vec![0; crate::scratch::wave_bytes(32, 64) as usize]);
    w.private_base_hi = 0x2_0000;
    w.flat_scratch = crate::scratch::SCRATCH_BASE;
    // s[0:3] as the dispatch sets it.
    w.s[0] = crate::scratch::SCRATCH_BASE as u32;
    w.s[1] = (crate::scratch::SCRATCH_BASE >> 32) as u32 & 0xffff | 1 << 31;
    w.s[2] = u32::MAX;
    w.s[3] = crate::scratch::SCRATCH_V3;
    w.s[32] = 16 * 32; // wave-scaled stack pointer: 16 bytes per lane
    w.v[1] = std::array::from_fn(|l| 0x100 + l as u32);
    let mut st = op(
        "buffer_store_dword",
        [Opnd::None; 2],
        [Opnd::None, Opnd::V(1), Opnd::S(0)],
    );
    st.mem.saddr = Opnd::S(32);
    st.mem.offset = 4;
    exec_on(&mut w, &st, &mem, &mut lds).unwrap();
    // Flat address of private offset 16 + 4 in every lane.
    w.v[2] = [20; LANES];
    w.v[3] = [0x2_0000; LANES];
    let ld = op(
        "flat_load_dword",
        [Opnd::V(4), Opnd::None],
        [Opnd::V(2), Opnd::None, Opnd::None],
    );
    exec_on(&mut w, &ld, &mem, &mut lds).unwrap();
    assert_eq!(w.v[4], w.v[1]);
    // Past the lane's 64 bytes: a scratch fault.
    w.v[2][6] = 64;
    let e = exec_on(&mut w, &ld, &mem, &mut lds).unwrap_err();
    assert!(
        matches!(
            *e,
            Fault::Memory {
                lane: 6,
                kind: FaultKind::Scratch(_),
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn flat_accesses_in_the_shared_aperture_reach_lds() {
    let mem = FlatMemory::new();
    let mut lds = Lds::new(256);
    let mut w = wave();
    w.shared_base_hi = 0x1_0000;
    w.v[0] = std::array::from_fn(|l| 4 * l as u32);
    w.v[1] = [0x1_0000; LANES];
    w.v[2] = std::array::from_fn(|l| 7 * l as u32);
    exec_on(
        &mut w,
        &op(
            "flat_store_dword",
            [Opnd::None; 2],
            [Opnd::V(0), Opnd::V(2), Opnd::None],
        ),
        &mem,
        &mut lds,
    )
    .unwrap();
    assert_eq!(lds.read_u32(4 * 5).unwrap(), 35);
}

#[test]
fn operations_have_handlers_by_op_and_the_rest_are_unsupported() {
    let t = &crate::family::rdna2::WAVE32;
    assert!(t.executes(crate::isa::Op::VAddF32));
    assert!(t.executes(crate::isa::Op::VCmpxLtI32), "cmpx shares the compare's handler");
    assert!(t.executes(crate::isa::Op::Mimg));
    assert!(!t.executes(crate::isa::Op::Mtbuf));
    assert!(t.count() > 900, "{}", t.count());
    // An operation without a handler, or a form lowering refuses, is a typed fault.
    let mut w = wave();
    let mem = FlatMemory::new();
    let mut lds = Lds::new(0);
    for u in [
        Uop::new(crate::isa::Op::Mtbuf),
        Uop {
            run: HandlerId::UNSUPPORTED,
            ..Uop::new(crate::isa::Op::VAddF32)
        },
    ] {
        let r = exec_on(&mut w, &u, &mem, &mut lds);
        assert!(
            matches!(r.as_ref().map_err(|f| &**f), Err(Fault::Unsupported)),
            "{r:?}"
        );
    }
}

#[test]
fn denormal_modes_flush_inputs_and_outputs_as_mode_says() {
    let tiny = f32::MIN_POSITIVE;
    let half_tiny = tiny * 0.5; // a denormal
                                // (FP_DENORM for f32, mul tiny * 0.5, add half_tiny + 0): flush both, out only, in only, none.
    for (m, mul, add) in [
        (0u32, 0.0f32, 0.0f32),
        (1, 0.0, 0.0),
        (2, half_tiny, 0.0),
        (3, half_tiny, half_tiny),
    ] {
        let mut w = wave();
        w.mode = (w.mode & !0x30) | m << 4;
        w.v[1] = [tiny.to_bits(); LANES];
        w.v[2] = [half_tiny.to_bits(); LANES];
        run(
            &mut w,
            &op(
                "v_mul_f32",
                [Opnd::V(3), Opnd::None],
                [Opnd::V(1), Opnd::Imm(0.5f32.to_bits().into()), Opnd::None],
            ),
        );
        run(
            &mut w,
            &op(
                "v_add_f32",
                [Opnd::V(4), Opnd::None],
                [Opnd::V(2), Opnd::Imm(0), Opnd::None],
            ),
        );
        assert_eq!(
            (f32::from_bits(w.v[3][0]), f32::from_bits(w.v[4][0])),
            (mul, add),
            "FP_DENORM {m}"
        );
    }
}

#[test]
fn scalar_loads_fill_register_ranges_and_never_write_past_s127() {
    let mut mem = FlatMemory::new();
    mem.map(0x1000, 64, false).unwrap();
    let words: Vec<u8> = (0..16u32).flat_map(|i| (i * 3 + 1).to_le_bytes()).collect();
    mem.write_bytes(0x1000, &words).unwrap();
    let mut lds = Lds::new(0);
    let mut w = wave();
    w.swrite64(Opnd::S(2), 0x1000);
    let mut u = op(
        "s_load_dwordx4",
        [Opnd::S(8), Opnd::None],
        [Opnd::S(2), Opnd::None, Opnd::None],
    );
    u.mem.offset = 8;
    exec_on(&mut w, &u, &mem, &mut lds).unwrap();
    assert_eq!(&w.s[8..12], &[7, 10, 13, 16]);
    // A 16-dword load aimed at s120 writes s120..s127 (TTMPs, M0, NULL dropped, EXEC) and no
    // further.
    let mut u = op(
        "s_load_dwordx16",
        [Opnd::S(120), Opnd::None],
        [Opnd::S(2), Opnd::None, Opnd::None],
    );
    u.mem.offset = 0;
    exec_on(&mut w, &u, &mem, &mut lds).unwrap();
    assert_eq!((w.s[120], w.s[125], w.s[127]), (1, 0, 22));
}

#[test]
fn conversions_saturate_and_round_like_the_isa_says() {
    let mut w = wave();
    let xs = [
        0.0f32,
        -0.0,
        1.5,
        -1.5,
        2.5,
        -2.5,
        3e9,
        -3e9,
        4.5e9,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.49999997,
        123456.7,
    ];
    w.v[1] = std::array::from_fn(|l| xs[l % xs.len()].to_bits());
    let one = |w: &mut Wave<32>, name: &'static str, d: u16| {
        run(
            w,
            &op(
                name,
                [Opnd::V(d), Opnd::None],
                [Opnd::V(1), Opnd::None, Opnd::None],
            ),
        )
    };
    one(&mut w, "v_cvt_i32_f32", 2);
    one(&mut w, "v_cvt_u32_f32", 3);
    one(&mut w, "v_cvt_flr_i32_f32", 4);
    one(&mut w, "v_cvt_rpi_i32_f32", 5);
    one(&mut w, "v_cvt_f16_f32", 6);
    one(&mut w, "v_trunc_f32", 7);
    one(&mut w, "v_rndne_f32", 8);
    for l in 0..LANES {
        let x = f32::from_bits(w.v[1][l]);
        // The ISA: truncate, clamp to the integer range, NaN gives 0 (Rust's `as` does exactly this).
        assert_eq!(w.v[2][l], x as i32 as u32, "cvt_i32({x})");
        assert_eq!(w.v[3][l], x as u32, "cvt_u32({x})");
        assert_eq!(
            w.v[4][l],
            f64::from(x).floor() as i32 as u32,
            "cvt_flr({x})"
        );
        assert_eq!(
            w.v[5][l],
            (f64::from(x) + 0.5).floor() as i32 as u32,
            "cvt_rpi({x})"
        );
        assert_eq!(
            w.v[6][l] & 0xffff,
            u32::from(half::f16::from_f32(x).to_bits()),
            "cvt_f16({x})"
        );
        assert!(
            same_f32(w.v[7][l], x.trunc()) && same_f32(w.v[8][l], x.round_ties_even()),
            "{x}"
        );
    }
}

/// An instruction and the host function it approximates.
type Reference = (&'static str, fn(f64) -> f64);

#[test]
fn transcendentals_are_within_one_ulp_of_the_host() {
    let mut w = wave();
    w.v[1] = std::array::from_fn(|l| {
        (0.37f32 * (l as f32 + 1.0) * if l % 2 == 0 { 1.0 } else { 7.3 }).to_bits()
    });
    let ulps =
        |a: u32, b: f32| (i64::from(a as i32) - i64::from(b.to_bits() as i32)).unsigned_abs();
    let cases: [Reference; 7] = [
        ("v_rcp_f32", |x| 1.0 / x),
        ("v_rsq_f32", |x| 1.0 / x.sqrt()),
        ("v_sqrt_f32", f64::sqrt),
        ("v_exp_f32", f64::exp2),
        ("v_log_f32", f64::log2),
        ("v_sin_f32", |x| (x * std::f64::consts::TAU).sin()),
        ("v_cos_f32", |x| (x * std::f64::consts::TAU).cos()),
    ];
    for (name, f) in cases {
        run(
            &mut w,
            &op(
                name,
                [Opnd::V(2), Opnd::None],
                [Opnd::V(1), Opnd::None, Opnd::None],
            ),
        );
        for l in 0..LANES {
            let x = f32::from_bits(w.v[1][l]);
            let want = f(f64::from(x)) as f32;
            // Sin and cos of large arguments lose absolute accuracy in the revolution reduction,
            // as the hardware's do; compare those absolutely.
            if name.ends_with("sin_f32") || name.ends_with("cos_f32") {
                assert!(
                    (f32::from_bits(w.v[2][l]) - want).abs() < 2e-6,
                    "{name}({x})"
                );
            } else {
                assert!(
                    ulps(w.v[2][l], want) <= 1,
                    "{name}({x}): {} vs {want}",
                    f32::from_bits(w.v[2][l])
                );
            }
        }
    }
}

#[test]
fn ds_atomics_return_old_values_and_cmpst_compares_data0() {
    let mem = FlatMemory::new();
    let mut lds = Lds::new(256);
    let mut w = wave();
    w.v[1] = [16; LANES]; // every lane hits the same word: lanes apply in order
    w.v[2] = std::array::from_fn(|l| l as u32 + 1);
    let add = op(
        "ds_add_rtn_u32",
        [Opnd::V(3), Opnd::None],
        [Opnd::V(1), Opnd::V(2), Opnd::None],
    );
    exec_on(&mut w, &add, &mem, &mut lds).unwrap();
    for l in 0..LANES {
        assert_eq!(
            w.v[3][l],
            (1..=l as u32).sum::<u32>(),
            "old value seen by lane {l}"
        );
    }
    assert_eq!(lds.read_u32(16).unwrap(), (1..=32).sum::<u32>());
    // cmpst: data0 is compared, data1 stored; only the lane whose data0 matches swaps.
    let cur = lds.read_u32(16).unwrap();
    w.v[4] = std::array::from_fn(|l| if l == 9 { cur } else { 0 });
    w.v[5] = [777; LANES];
    let cs = op(
        "ds_cmpst_rtn_b32",
        [Opnd::V(6), Opnd::None],
        [Opnd::V(1), Opnd::V(4), Opnd::V(5)],
    );
    exec_on(&mut w, &cs, &mem, &mut lds).unwrap();
    assert_eq!(lds.read_u32(16).unwrap(), 777);
    assert_eq!((w.v[6][8], w.v[6][9], w.v[6][10]), (cur, cur, 777));
    // Float max without return.
    w.v[7] = std::array::from_fn(|l| (l as f32 - 3.5).to_bits());
    lds.write(32, &(-100.0f32).to_bits().to_le_bytes()).unwrap();
    w.v[1] = [32; LANES];
    exec_on(
        &mut w,
        &op(
            "ds_max_f32",
            [Opnd::None; 2],
            [Opnd::V(1), Opnd::V(7), Opnd::None],
        ),
        &mem,
        &mut lds,
    )
    .unwrap();
    assert_eq!(f32::from_bits(lds.read_u32(32).unwrap()), 31.0 - 3.5);
}

#[test]
fn permlane16_and_x16_select_lanes_by_nibbles() {
    let mut w = wave();
    w.v[1] = std::array::from_fn(|l| 100 + l as u32);
    // Lane i of each row reads lane (15 - i) of the same row (16 nibbles: f, e, ..., 0).
    let (lo, hi) = (0x89ab_cdefu64, 0x0123_4567u64);
    run(
        &mut w,
        &op(
            "v_permlane16_b32",
            [Opnd::V(2), Opnd::None],
            [Opnd::V(1), Opnd::Imm(lo), Opnd::Imm(hi)],
        ),
    );
    run(
        &mut w,
        &op(
            "v_permlanex16_b32",
            [Opnd::V(3), Opnd::None],
            [Opnd::V(1), Opnd::Imm(lo), Opnd::Imm(hi)],
        ),
    );
    for l in 0..LANES {
        let (row, i) = (l & 16, l & 15);
        assert_eq!(w.v[2][l], 100 + (row + 15 - i) as u32);
        assert_eq!(w.v[3][l], 100 + ((row ^ 16) + 15 - i) as u32);
    }
}

#[test]
fn perm_dot_med3_and_packing_follow_their_definitions() {
    let mut w = wave();
    w.v[1] = std::array::from_fn(|l| 0x0403_0201u32.wrapping_mul(l as u32 + 3));
    w.v[2] = std::array::from_fn(|l| 0xfffe_0807u32.rotate_left(l as u32));
    w.v[3] = std::array::from_fn(|l| 0x0c06_0500u32 | (l as u32 % 8));
    let three = |w: &mut Wave<32>, n: &'static str, d: u16| {
        run(
            w,
            &op(
                n,
                [Opnd::V(d), Opnd::None],
                [Opnd::V(1), Opnd::V(2), Opnd::V(3)],
            ),
        )
    };
    three(&mut w, "v_perm_b32", 10);
    three(&mut w, "v_dot4_u32_u8", 11);
    three(&mut w, "v_dot2_i32_i16", 12);
    three(&mut w, "v_med3_i32", 13);
    for l in 0..LANES {
        let (a, b, c) = (w.v[1][l], w.v[2][l], w.v[3][l]);
        // v_perm_b32: selector bytes 0-7 pick from {a:b} (b is bytes 0-3), 12 gives 0x00.
        let pool = (u64::from(a) << 32 | u64::from(b)).to_le_bytes();
        let want: Vec<u8> = c
            .to_le_bytes()
            .iter()
            .map(|&s| match s {
                0..=7 => pool[s as usize],
                12 => 0,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(w.v[10][l].to_le_bytes().to_vec(), want, "perm lane {l}");
        let dot4: u32 = (0..4)
            .map(|i| (a >> (8 * i) & 0xff) * (b >> (8 * i) & 0xff))
            .sum::<u32>()
            .wrapping_add(c);
        assert_eq!(w.v[11][l], dot4);
        let dot2 = i32::from(a as i16) * i32::from(b as i16)
            + i32::from((a >> 16) as i16) * i32::from((b >> 16) as i16);
        assert_eq!(w.v[12][l] as i32, dot2.wrapping_add(c as i32));
        let mut v = [a as i32, b as i32, c as i32];
        v.sort_unstable();
        assert_eq!(w.v[13][l] as i32, v[1]);
    }
    w.v[4] = [1.0f32.to_bits(); LANES];
    w.v[5] = [(1.0f32 + f32::EPSILON * 8192.0 * 1.5).to_bits(); LANES];
    run(
        &mut w,
        &op(
            "v_cvt_pkrtz_f16_f32",
            [Opnd::V(14), Opnd::None],
            [Opnd::V(5), Opnd::V(4), Opnd::None],
        ),
    );
    // Round toward zero: 1 + 1.5 ulp(f16) becomes 1 + 1 ulp, not 1 + 2.
    assert_eq!(w.v[14][0], 0x3c01 | 0x3c00 << 16);
}

#[test]
fn calls_save_the_return_address_and_jump() {
    let mut w = wave();
    w.swrite64(Opnd::S(4), 0x5000);
    let mut u = op(
        "s_swappc_b64",
        [Opnd::S(30), Opnd::None],
        [Opnd::S(4), Opnd::None, Opnd::None],
    );
    u.pc = 0x1000;
    assert_eq!(run(&mut w, &u), Step::Jump(0x5000));
    assert_eq!(w.sread64(Opnd::S(30)), 0x1004);
    let mut g = op("s_getpc_b64", [Opnd::S(8), Opnd::None], [Opnd::None; 3]);
    g.pc = 0x2000;
    run(&mut w, &g);
    assert_eq!(
        w.sread64(Opnd::S(8)),
        0x2004,
        "the address of the next instruction"
    );
    assert_eq!(
        run(
            &mut w,
            &op(
                "s_setpc_b64",
                [Opnd::None; 2],
                [Opnd::S(30), Opnd::None, Opnd::None]
            )
        ),
        Step::Jump(0x1004)
    );
    // readfirstlane with EXEC = 0 reads lane 0.
    w.v[1] = std::array::from_fn(|l| 50 + l as u32);
    w.s[sreg::EXEC as usize] = 0;
    run(
        &mut w,
        &op(
            "v_readfirstlane_b32",
            [Opnd::S(3), Opnd::None],
            [Opnd::V(1), Opnd::None, Opnd::None],
        ),
    );
    assert_eq!(w.s[3], 50);
}

#[test]
fn raw_buffers_drop_out_of_range_accesses() {
    let mut mem = FlatMemory::new();
    mem.map(0x8000, 64, true).unwrap();
    mem.write_bytes(0x8000, &[7; 64]).unwrap();
    let mut lds = Lds::new(0);
    let mut w = wave();
    // A raw (stride 0, unswizzled) descriptor over 16 bytes at 0x8000.
    w.s[4] = 0x8000;
    w.s[5] = 0;
    w.s[6] = 16;
    w.s[7] = 0;
    w.v[1] = std::array::from_fn(|l| 4 * l as u32);
    let mut u = op(
        "buffer_load_dword",
        [Opnd::V(2), Opnd::None],
        [Opnd::V(1), Opnd::None, Opnd::S(4)],
    );
    u.mem.offen = true;
    exec_on(&mut w, &u, &mem, &mut lds).unwrap();
    assert_eq!(
        &w.v[2][..6],
        &[0x0707_0707, 0x0707_0707, 0x0707_0707, 0x0707_0707, 0, 0]
    );
}

#[test]
fn integer_clamp_saturates() {
    let mut w = wave();
    w.v[1] = [u32::MAX - 5, 3, 0x7fff_fff0, 0x8000_0005]
        .repeat(8)
        .try_into()
        .unwrap();
    w.v[2] = [10; LANES];
    let mut u = op(
        "v_add_nc_u32",
        [Opnd::V(3), Opnd::None],
        [Opnd::V(1), Opnd::V(2), Opnd::None],
    );
    u.m.clamp = true;
    run(&mut w, &u);
    let mut s = op(
        "v_sub_nc_i32",
        [Opnd::V(4), Opnd::None],
        [Opnd::V(1), Opnd::V(2), Opnd::None],
    );
    s.m.clamp = true;
    run(&mut w, &s);
    run(
        &mut w,
        &op(
            "v_add_nc_u32",
            [Opnd::V(5), Opnd::None],
            [Opnd::V(1), Opnd::V(2), Opnd::None],
        ),
    );
    for l in 0..4 {
        let a = w.v[1][l];
        assert_eq!(w.v[3][l], a.saturating_add(10));
        assert_eq!(w.v[4][l] as i32, (a as i32).saturating_sub(10));
        assert_eq!(w.v[5][l], a.wrapping_add(10), "no clamp: wraps");
    }
}

/// `ds_swizzle_b32` from encoded words (bytes as `llvm-mc-19 -show-encoding` prints them), so
/// the data register is read from the field the encoding puts it in: every mode against the
/// lane permutation the ISA defines.
#[test]
fn ds_swizzle_modes_from_encoded_words() {
    type Pick = fn(usize) -> usize;
    let cases: [(&str, [u8; 8], Pick); 4] = [
        // ds_swizzle_b32 v10, v9 offset:swizzle(BROADCAST,32,15)
        (
            "broadcast 32,15",
            [0xe0, 0x01, 0xd4, 0xd8, 0x09, 0x00, 0x00, 0x0a],
            |_| 15,
        ),
        // ds_swizzle_b32 v10, v9 offset:swizzle(QUAD_PERM,1,0,3,2)
        (
            "quad_perm 1,0,3,2",
            [0xb1, 0x80, 0xd4, 0xd8, 0x09, 0x00, 0x00, 0x0a],
            |l| l ^ 1,
        ),
        // ds_swizzle_b32 v10, v9 offset:swizzle(SWAP,16)
        (
            "swap 16",
            [0x1f, 0x40, 0xd4, 0xd8, 0x09, 0x00, 0x00, 0x0a],
            |l| l ^ 16,
        ),
        // ds_swizzle_b32 v10, v9 offset:swizzle(BROADCAST,8,3)
        (
            "broadcast 8,3",
            [0x78, 0x00, 0xd4, 0xd8, 0x09, 0x00, 0x00, 0x0a],
            |l| (l & !7) | 3,
        ),
    ];
    let mem = FlatMemory::new();
    let mut lds = Lds::new(0);
    for (what, bytes, pick) in cases {
        let inst = crate::isa::decode(&bytes, 0).unwrap();
        let u = lower::lower(&inst, 0);
        let mut w = wave();
        w.v[9] = std::array::from_fn(|l| 100 + l as u32);
        exec_on(&mut w, &u, &mem, &mut lds).unwrap();
        let want: [u32; LANES] = std::array::from_fn(|l| 100 + pick(l) as u32);
        assert_eq!(w.v[10], want, "{what}");
    }
}

/// With f32 denormals flushed (`-fgpu-flush-denormals-to-zero` kernels), integer operands are
/// not floats: `v_cndmask_b32` moves small integers (denormal bit patterns) unchanged,
/// `v_ldexp_f32`'s exponent and `v_cmp_class_f32`'s mask are read as integers, while a real
/// denormal in an arithmetic source is still flushed.
#[test]
fn flushing_denormals_leaves_integer_operands_alone() {
    let mut w = wave();
    w.mode &= !0x30; // FP_DENORM f32 = flush in and out
    w.v[1] = std::array::from_fn(|l| l as u32 + 1); // 1..=32: denormal patterns as floats
    w.v[2] = [7; LANES];
    w.s[10] = 0x5555_5555;
    run(
        &mut w,
        &op(
            "v_cndmask_b32",
            [Opnd::V(3), Opnd::None],
            [Opnd::V(2), Opnd::V(1), Opnd::S(10)],
        ),
    );
    let want: [u32; LANES] = std::array::from_fn(|l| if l % 2 == 0 { l as u32 + 1 } else { 7 });
    assert_eq!(w.v[3], want);
    // ldexp(1.5, 3) = 12: the exponent 3 is a denormal bit pattern.
    w.v[4] = [1.5f32.to_bits(); LANES];
    w.v[5] = [3; LANES];
    run(
        &mut w,
        &op(
            "v_ldexp_f32",
            [Opnd::V(6), Opnd::None],
            [Opnd::V(4), Opnd::V(5), Opnd::None],
        ),
    );
    assert_eq!(w.v[6], [12f32.to_bits(); LANES]);
    // class(1.0, positive normal = bit 8) is true; the mask 0x100 is a denormal pattern.
    w.v[7] = [0x100; LANES];
    run(
        &mut w,
        &op(
            "v_cmp_class_f32",
            [Opnd::S(12), Opnd::None],
            [Opnd::Imm(1f32.to_bits().into()), Opnd::V(7), Opnd::None],
        ),
    );
    assert_eq!(w.s[12], u32::MAX);
    // An arithmetic source is still flushed: denormal + 0 = +0.
    run(
        &mut w,
        &op(
            "v_add_f32",
            [Opnd::V(8), Opnd::None],
            [Opnd::V(1), Opnd::Imm(0), Opnd::None],
        ),
    );
    assert_eq!(w.v[8], [0; LANES]);
}

/// A guest memory that answers no spans, so every vector access is translated lane by lane
/// (the per-lane path the whole-wave fast paths must agree with).
struct Unspanned<'a>(&'a FlatMemory);

// SAFETY: translate() hands out FlatMemory's own pointers, under FlatMemory's guarantees.
unsafe impl crate::GuestMemory for Unspanned<'_> {
    type Fault = crate::FlatFault;

    fn translate(
        &self,
        address: u64,
        len: u64,
        access: crate::Access,
    ) -> Result<std::ptr::NonNull<u8>, crate::FlatFault> {
        crate::GuestMemory::translate(self.0, address, len, access)
    }
}

/// Lane addresses for the fast-path tests: scattered over `slots` elements of `stride`
/// bytes, with lanes 29-31 repeating lanes 0-2 (several lanes on one address).
fn scattered(slots: u32, stride: u32) -> [u32; LANES] {
    std::array::from_fn(|l| {
        let l = if l >= 29 { l - 29 } else { l } as u32;
        (l * 7 + 3) % slots * stride
    })
}

#[test]
fn whole_wave_global_accesses_agree_with_the_lane_by_lane_path() {
    const BASE: u64 = 0x10_0000;
    let exec = 0xf0f0_ff3f_u32;
    for words in 1..=4u16 {
        let bytes = 4 * u32::from(words);
        let (load, store) = match words {
            1 => ("global_load_dword", "global_store_dword"),
            2 => ("global_load_dwordx2", "global_store_dwordx2"),
            3 => ("global_load_dwordx3", "global_store_dwordx3"),
            _ => ("global_load_dwordx4", "global_store_dwordx4"),
        };
        // Two adjacent regions: lanes in both take the per-lane path even with spans.
        for split in [false, true] {
            let mems: Vec<FlatMemory> = (0..2)
                .map(|_| {
                    let mut m = FlatMemory::new();
                    if split {
                        m.map(BASE, 512, true).unwrap();
                        m.map(BASE + 512, 512, true).unwrap();
                    } else {
                        m.map(BASE, 1024, true).unwrap();
                    }
                    m
                })
                .collect();
            let mut waves = [wave(), wave()];
            for (i, w) in waves.iter_mut().enumerate() {
                w.s[sreg::EXEC as usize] = exec;
                w.swrite64(Opnd::S(10), BASE);
                w.v[1] = scattered(1024 / bytes, bytes);
                for k in 0..words {
                    w.v[usize::from(20 + k)] =
                        std::array::from_fn(|l| (l as u32 + 1) * 0x0101 + (u32::from(k) << 20));
                    w.v[usize::from(30 + k)] = [0xdead_beef; LANES];
                }
                let mut st = op(store, [Opnd::None; 2], [Opnd::V(1), Opnd::V(20), Opnd::None]);
                st.mem.saddr = Opnd::S(10);
                let mut ld = op(load, [Opnd::V(30), Opnd::None], [Opnd::V(1), Opnd::None, Opnd::None]);
                ld.mem.saddr = Opnd::S(10);
                let mut lds = Lds::new(0);
                let spans = Spans::default();
                let spanned = &mems[i];
                let plain = Unspanned(spanned);
                for u in [&st, &ld] {
                    let mut env = if i == 0 {
                        Env::new(spanned, &mut lds, &NoServices, &spans)
                    } else {
                        Env::new(&plain, &mut lds, &NoServices, &spans)
                    };
                    step32(w, u, &mut env).expect("in bounds");
                }
            }
            let [a, b] = &waves;
            assert_eq!(
                mems[0].read_bytes(BASE, 512).unwrap(),
                mems[1].read_bytes(BASE, 512).unwrap(),
                "{store} split={split}"
            );
            for k in 0..usize::from(words) {
                assert_eq!(a.v[30 + k], b.v[30 + k], "{load} word {k} split={split}");
                for l in 0..LANES {
                    if exec >> l & 1 == 0 {
                        assert_eq!(a.v[30 + k][l], 0xdead_beef, "inactive lane {l} written");
                    }
                }
            }
            // The last of the lanes storing to one address wins: lane 31 over lane 2.
            assert_eq!(a.v[30][2], a.v[20][31], "{store}");
        }
    }
}

#[test]
fn whole_wave_lds_accesses_agree_with_a_host_model() {
    let size = 4096u32;
    let exec = 0x7fff_f0ff_u32;
    let cases: [(&str, &str, u32, bool); 6] = [
        ("ds_write_b32", "ds_read_b32", 4, false),
        ("ds_write_b64", "ds_read_b64", 8, false),
        ("ds_write_b96", "ds_read_b96", 12, false),
        ("ds_write_b128", "ds_read_b128", 16, false),
        ("ds_write2_b32", "ds_read2_b32", 4, true),
        ("ds_write2st64_b64", "ds_read2st64_b64", 8, true),
    ];
    for (store, load, bytes, two) in cases {
        let words = (bytes / 4) as usize;
        let mut w = wave();
        w.s[sreg::EXEC as usize] = exec;
        let mut lds = Lds::new(size);
        let mem = FlatMemory::new();
        let st64 = store.contains("st64");
        let (off0, off1) = if two { (1u32, 3u32) } else { (8, 0) };
        let scale = if two { bytes * if st64 { 64 } else { 1 } } else { 1 };
        let reach = if two { off1 * scale + bytes } else { off0 + bytes };
        w.v[1] = scattered((size - reach) / bytes, bytes);
        for k in 0..2 * words {
            w.v[20 + k] = std::array::from_fn(|l| (l as u32) << 8 | k as u32);
            w.v[40 + k] = [0xdead_beef; LANES];
        }
        let data1 = if two { Opnd::V(20 + words as u16) } else { Opnd::None };
        let mut st = op(store, [Opnd::None; 2], [Opnd::V(1), Opnd::V(20), data1]);
        let mut ld = op(load, [Opnd::V(40), Opnd::None], [Opnd::V(1), Opnd::None, Opnd::None]);
        for u in [&mut st, &mut ld] {
            u.mem.offset = off0 as i32;
            u.mem.offset1 = off1 as u16;
        }
        exec_on(&mut w, &st, &mem, &mut lds).unwrap();
        exec_on(&mut w, &ld, &mem, &mut lds).unwrap();
        // The model: active lanes in order, each element's words at its address.
        let mut model = vec![0u8; size as usize];
        let elements: Vec<(u32, usize)> = if two {
            vec![(off0 * scale, 0), (off1 * scale, words)]
        } else {
            vec![(off0, 0)]
        };
        for l in (0..LANES).filter(|l| exec >> l & 1 != 0) {
            for &(o, first) in &elements {
                for k in 0..words {
                    let a = (w.v[1][l] + o) as usize + 4 * k;
                    model[a..a + 4].copy_from_slice(&w.v[20 + first + k][l].to_le_bytes());
                }
            }
        }
        assert_eq!(lds.bytes(), &model[..], "{store}");
        for l in 0..LANES {
            for &(o, first) in &elements {
                for k in 0..words {
                    let got = w.v[40 + first + k][l];
                    if exec >> l & 1 == 0 {
                        assert_eq!(got, 0xdead_beef, "{load}: inactive lane {l} written");
                    } else {
                        let a = (w.v[1][l] + o) as usize + 4 * k;
                        let want = u32::from_le_bytes([model[a], model[a + 1], model[a + 2], model[a + 3]]);
                        assert_eq!(got, want, "{load} lane {l} word {k}");
                    }
                }
            }
        }
    }
}

#[test]
fn sixty_four_bit_shifts_and_carries_match_the_host_under_partial_exec() {
    let exec = 0x0f0f_f0f1_u32;
    let vals: [u64; LANES] =
        std::array::from_fn(|l| (l as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1 << 63);
    let amounts: [u32; LANES] = std::array::from_fn(|l| (l as u32 * 5) % 80);
    type F = fn(u32, u64) -> u64;
    let ops: [(&str, F); 3] = [
        ("v_lshlrev_b64", |a, b| b << (a & 63)),
        ("v_lshrrev_b64", |a, b| b >> (a & 63)),
        ("v_ashrrev_i64", |a, b| ((b as i64) >> (a & 63)) as u64),
    ];
    for (name, f) in ops {
        // (amount, value) as VGPR/VGPR pair, constant/SGPR pair, SGPR/VGPR pair.
        for (amount, value) in [
            (Opnd::V(1), Opnd::V(2)),
            (Opnd::Imm(5), Opnd::S(10)),
            (Opnd::S(12), Opnd::V(2)),
        ] {
            let mut w = wave();
            w.s[sreg::EXEC as usize] = exec;
            w.v[1] = amounts;
            w.v[2] = vals.map(|x| x as u32);
            w.v[3] = vals.map(|x| (x >> 32) as u32);
            w.swrite64(Opnd::S(10), vals[7]);
            w.s[12] = 37;
            w.v[20] = [0xdead_beef; LANES];
            w.v[21] = [0xdead_beef; LANES];
            run(&mut w, &op(name, [Opnd::V(20), Opnd::None], [amount, value, Opnd::None]));
            for l in 0..LANES {
                let got = u64::from(w.v[20][l]) | u64::from(w.v[21][l]) << 32;
                if exec >> l & 1 == 0 {
                    assert_eq!(got, 0xdead_beef_dead_beef, "{name}: inactive lane {l} written");
                    continue;
                }
                let a = match amount {
                    Opnd::V(_) => amounts[l],
                    Opnd::Imm(k) => k as u32,
                    _ => 37,
                };
                let b = if value == Opnd::S(10) { vals[7] } else { vals[l] };
                assert_eq!(got, f(a, b), "{name} {amount:?} {value:?} lane {l}");
            }
        }
    }
    // Carries: in from s14, out to s16, only for active lanes.
    let mut w = wave();
    w.s[sreg::EXEC as usize] = exec;
    w.v[1] = std::array::from_fn(|l| u32::MAX - l as u32);
    w.v[2] = std::array::from_fn(|l| l as u32 % 3);
    w.s[14] = 0xaaaa_5555;
    w.s[16] = 0xffff_ffff;
    run(
        &mut w,
        &op(
            "v_add_co_ci_u32",
            [Opnd::V(3), Opnd::S(16)],
            [Opnd::V(1), Opnd::V(2), Opnd::S(14)],
        ),
    );
    for l in 0..LANES {
        let s = u64::from(w.v[1][l]) + u64::from(w.v[2][l]) + u64::from(0xaaaa_5555u32 >> l & 1);
        let active = exec >> l & 1 != 0;
        assert_eq!(w.s[16] >> l & 1 != 0, active && s >> 32 != 0, "carry of lane {l}");
        if active {
            assert_eq!(w.v[3][l], s as u32, "lane {l}");
        }
    }
}

#[test]
fn approved_spans_are_kept_a_few_per_kind_of_access() {
    let span = |start: u64| crate::memory::Span {
        start,
        len: 16,
        host: std::ptr::NonNull::dangling(),
    };
    let s = Spans::default();
    for k in 0..5u64 {
        s.add(false, span(k * 100));
    }
    // Four kept: the first was replaced by the fifth.
    assert!(s.find(false, 0, 4).is_none());
    for k in 1..5u64 {
        assert_eq!(s.find(false, k * 100 + 4, 4).map(|x| x.start), Some(k * 100));
    }
    assert!(s.find(false, 112, 8).is_none(), "past the span's end");
    assert!(s.find(true, 104, 4).is_none(), "read spans are not write spans");
}

#[test]
fn fma_fast_paths_take_every_kind_of_operand() {
    // Each combination of VGPR (V), SGPR (S) and constant (K) sources, under partial EXEC,
    // against the host's fused multiply-add.
    let exec = 0xffff_00f7_u32;
    let k = Opnd::Imm(u64::from(0.75f32.to_bits()));
    let kinds = [Opnd::V(1), Opnd::S(20), k];
    for a in kinds {
        for b in [Opnd::V(2), Opnd::S(21), k] {
            for c in [Opnd::V(3), Opnd::S(22), k] {
                let mut w = wave();
                w.s[sreg::EXEC as usize] = exec;
                (w.v[1], w.v[2], w.v[3]) = (floats(11), floats(12), floats(13));
                w.s[20] = 1.5f32.to_bits();
                w.s[21] = (-2.25f32).to_bits();
                w.s[22] = 1.0e-3f32.to_bits();
                w.v[4] = [0xdead_beef; LANES];
                run(&mut w, &op("v_fma_f32", [Opnd::V(4), Opnd::None], [a, b, c]));
                let (v, s) = (w.v.clone(), w.s);
                let at = move |o: Opnd, l: usize| match o {
                    Opnd::V(r) => f32::from_bits(v[r as usize][l]),
                    Opnd::S(n) => f32::from_bits(s[n as usize]),
                    _ => 0.75,
                };
                for l in 0..LANES {
                    if exec >> l & 1 == 0 {
                        assert_eq!(w.v[4][l], 0xdead_beef, "inactive lane {l}");
                    } else {
                        let want = at(a, l).mul_add(at(b, l), at(c, l));
                        assert!(same_f32(w.v[4][l], want), "{a:?} {b:?} {c:?} lane {l}");
                    }
                }
                // v_fmac_f32: the destination is the addend.
                w.v[5] = floats(14);
                let acc = w.v[5];
                run(&mut w, &op("v_fmac_f32", [Opnd::V(5), Opnd::None], [a, b, Opnd::None]));
                for l in (0..LANES).filter(|l| exec >> l & 1 != 0) {
                    let want = at(a, l).mul_add(at(b, l), f32::from_bits(acc[l]));
                    assert!(same_f32(w.v[5][l], want), "fmac {a:?} {b:?} lane {l}");
                }
            }
        }
    }
}

#[test]
fn cube_ops_pick_the_major_axis_face_and_its_coordinates() {
    let mut w = wave();
    // Directions along every face, off-axis, with ties between axes and signed zeros.
    let dirs: [[f32; 3]; LANES] = std::array::from_fn(|l| {
        let t = l as f32;
        match l % 8 {
            0 => [2.0 + t, 0.5 - t * 0.01, -0.25],
            1 => [-3.0 - t, 0.25, t * 0.02],
            2 => [0.5, 4.0 + t, -0.75],
            3 => [-0.5, -4.0 - t, 0.75],
            4 => [0.125 * t, -0.5, 5.0],
            5 => [0.3, 0.2, -6.0 - t],
            6 => [1.0 + t, -1.0 - t, 1.0 + t],
            _ => [-0.0, 2.0, -2.0],
        }
    });
    for (k, reg) in [1usize, 2, 3].iter().enumerate() {
        w.v[*reg] = std::array::from_fn(|l| dirs[l][k].to_bits());
    }
    for (name, d) in [
        ("v_cubeid_f32", 10u16),
        ("v_cubesc_f32", 11),
        ("v_cubetc_f32", 12),
        ("v_cubema_f32", 13),
    ] {
        run(
            &mut w,
            &op(
                name,
                [Opnd::V(d), Opnd::None],
                [Opnd::V(1), Opnd::V(2), Opnd::V(3)],
            ),
        );
    }
    for (l, &[x, y, z]) in dirs.iter().enumerate() {
        // The cube-map face table (faces +x, -x, +y, -y, +z, -z; the major axis is the largest
        // magnitude, z winning ties, then y), with the major axis doubled and kept signed.
        let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
        let axis = if az >= ax && az >= ay {
            2
        } else if ay >= ax {
            1
        } else {
            0
        };
        let major = [x, y, z][axis];
        let face = 2 * axis + usize::from(major < 0.0);
        let (sc, tc) = match face {
            0 => (-z, -y),
            1 => (z, -y),
            2 => (x, z),
            3 => (x, -z),
            4 => (x, -y),
            _ => (-x, -y),
        };
        let got = |r: usize| f32::from_bits(w.v[r][l]);
        assert_eq!(got(10), face as f32, "face of {:?}", dirs[l]);
        assert_eq!(got(11).to_bits(), sc.to_bits(), "sc of {:?}", dirs[l]);
        assert_eq!(got(12).to_bits(), tc.to_bits(), "tc of {:?}", dirs[l]);
        assert_eq!(got(13), 2.0 * major, "ma of {:?}", dirs[l]);
    }
}
