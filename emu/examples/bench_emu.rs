//! The numbers `scripts/bench-emu` prints: wave instructions per second of the engine on the
//! benchmark kernels on 1 and 2 host threads, the 1-thread rate per second of CPU time (what a
//! busy machine leaves of the wall-clock figure), and how much slower than the same
//! computation compiled for the host (on 1 thread) the emulator is. Checks the results
//! against the host, and the VALU's lane throughput at both wave widths. Arguments name the
//! parts to run (`alu`, `matmul`, `widths`; default all).

use std::time::Instant;

use rocload_emu::{Config, Emulator, NoServices};

/// CPU time this process has used, in seconds.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for clock_gettime to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Wall and CPU seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (w, c) = (Instant::now(), cpu_seconds());
    let r = f();
    (r, w.elapsed().as_secs_f64(), cpu_seconds() - c)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let wants = |k: &str| args.is_empty() || args.iter().any(|a| a == k);
    if wants("alu") {
        alu();
    }
    if wants("matmul") {
        matmul();
    }
    if wants("widths") {
        widths();
    }
}

/// VALU lane operations per second at 32 and 64 lanes: a block of plain vector ops (FMAs
/// with constants, integer adds, f32 multiplies by an SGPR, a select by VCC) run on one wave
/// at full EXEC by hand (no family runs wave64 yet, so no dispatch can), with the same
/// handlers instantiated for each width.
fn widths() {
    use rocload_emu::exec::table::Table;
    use rocload_emu::exec::{step, valu, Env, Opnd, Spans, Uop};
    use rocload_emu::lds::Lds;
    use rocload_emu::wave::Wave;

    static T32: Table<32> =
        Table::build(&[valu::Handlers::<32>::TABLE, valu::Handlers::<32>::EXTRA]);
    static T64: Table<64> =
        Table::build(&[valu::Handlers::<64>::TABLE, valu::Handlers::<64>::EXTRA]);
    let (n, k) = (Opnd::None, |x: f32| Opnd::Imm(u64::from(x.to_bits())));
    let u = |name: &'static str, d: u16, s: [Opnd; 3]| Uop {
        d: [Opnd::V(d), n],
        s,
        ..Uop::named(name)
    };
    let block = [
        u("v_fma_f32", 1, [Opnd::V(1), k(0.999_9), k(0.000_1)]),
        u("v_fma_f32", 1, [Opnd::V(1), k(0.999_9), k(0.000_1)]),
        u("v_fma_f32", 1, [Opnd::V(1), k(0.999_9), k(0.000_1)]),
        u("v_fma_f32", 1, [Opnd::V(1), k(0.999_9), k(0.000_1)]),
        u("v_add_nc_u32", 2, [Opnd::V(2), Opnd::V(0), n]),
        u("v_mul_f32", 3, [Opnd::S(4), Opnd::V(1), n]),
        u("v_cndmask_b32", 4, [Opnd::V(3), Opnd::V(1), Opnd::S(106)]),
        u("v_fmac_f32", 5, [Opnd::V(3), Opnd::V(1), n]),
    ];
    let rounds = 200_000usize;
    fn rate<const N: usize>(table: &Table<N>, block: &[Uop], rounds: usize) -> f64 {
        let mut w = Wave::<N>::new();
        w.set_exec(rocload_emu::wave::Mask::all::<N>());
        w.set_vcc(rocload_emu::wave::Mask(0x5555_5555_5555_5555));
        w.mode = 0x3f0 | 1 << 8 | 1 << 9;
        w.v[0] = std::array::from_fn(|l| l as u32);
        w.v[1] = std::array::from_fn(|l| (l as f32).to_bits());
        w.s[4] = 1.5f32.to_bits();
        let (mem, mut lds, spans) = (
            rocload_emu::FlatMemory::new(),
            Lds::new(0),
            Spans::default(),
        );
        let mut env = Env::new(&mem, &mut lds, &rocload_emu::NoServices, &spans);
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            for _ in 0..rounds {
                for u in block {
                    step(table, &mut w, u, &mut env).expect("runs");
                }
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        std::hint::black_box(&w.v[5]);
        (rounds * block.len() * N) as f64 / best / 1e9
    }
    let r32 = rate(&T32, &block, rounds);
    let r64 = rate(&T64, &block, rounds);
    println!(
        "valu lanes: wave32 {r32:.2} G lane-operations/s, wave64 {r64:.2} ({:.2}x the wave32 rate)",
        r64 / r32
    );
}

#[path = "../benches/common/mod.rs"]
mod common;
#[path = "../tests/common/mod.rs"]
mod loader;

/// The hand-assembled FMA loop.
fn alu() {
    let groups = 32;
    let items = groups * common::GROUP;
    let prog = common::alu_kernel();
    let mut rates = Vec::new();
    let (mut emu_1, mut cpu_1) = (0.0, f64::MAX);
    for threads in [1usize, 2] {
        let emu = Emulator::new(Config {
            threads,
            ..Config::default()
        });
        common::load(&emu, &prog);
        let mem = common::memory(items);
        let d = common::dispatch(groups);
        emu.run(&d, &mem, &NoServices).expect("warm-up run");
        let mut best = f64::MAX;
        let mut report = None;
        for _ in 0..3 {
            let (r, wall, cpu) = timed(|| emu.run(&d, &mem, &NoServices).expect("run"));
            report = Some(r);
            best = best.min(wall);
            if threads == 1 {
                cpu_1 = cpu_1.min(cpu);
            }
        }
        let r = report.expect("ran");
        let got = mem
            .read_bytes(common::DATA, 4 * items as usize)
            .expect("output");
        for gid in 0..items {
            let i = 4 * gid as usize;
            let x = f32::from_le_bytes([got[i], got[i + 1], got[i + 2], got[i + 3]]);
            assert_eq!(
                x.to_bits(),
                common::alu_native(gid).to_bits(),
                "work-item {gid}"
            );
        }
        rates.push(r.wave_instructions as f64 / best / 1e6);
        if threads == 1 {
            emu_1 = best;
        }
    }
    let mut native = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let mut sink = 0u32;
        for first in (0..items).step_by(32) {
            sink ^= native_items(std::hint::black_box(first))
                .iter()
                .fold(0, |a, x| a ^ x.to_bits());
        }
        std::hint::black_box(sink);
        native = native.min(t.elapsed().as_secs_f64());
    }
    let per_cpu = rates[0] * emu_1 / cpu_1;
    println!(
        "alu_fma_loop: {:.1} M wave-instructions/s on 1 thread ({per_cpu:.1} per CPU second), {:.1} on 2 threads, native {:.1}x",
        rates[0],
        rates[1],
        emu_1 / native
    );
}

/// The host computation with the host's FMA instructions when it has them (what a compiler
/// targeting this CPU produces), else the portable one.
fn native_items(first: u32) -> [f32; 32] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2")
        {
            // SAFETY: the CPU supports FMA and AVX2, checked just above.
            return unsafe { native_fma(first) };
        }
    }
    common::alu_native32(first)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma,avx2")]
unsafe fn native_fma(first: u32) -> [f32; 32] {
    common::alu_native32(first)
}

/// The tiled matrix multiply of `tests/emu_kernels/basic.hip` compiled by clang-19 -O3 (global
/// loads, LDS, barriers, FMAs), n = 256, against the same product on the host.
fn matmul() {
    let n = 256usize;
    let a: Vec<f32> = (0..n * n)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 16.0)
        .collect();
    let b: Vec<f32> = (0..n * n)
        .map(|i| ((i * 53 % 97) as f32 - 48.0) / 8.0)
        .collect();
    let mut gpu = loader::Gpu::load("basic-O3.co");
    let (pa, pb, pc) = (
        gpu.alloc(&loader::bytes_of(&a)),
        gpu.alloc(&loader::bytes_of(&b)),
        gpu.alloc(&vec![0; 4 * n * n]),
    );
    let args = loader::Args::default()
        .ptr(pa)
        .ptr(pb)
        .ptr(pc)
        .i32(n as i32);
    let mut rates = Vec::new();
    let (mut emu_1, mut cpu_1) = (0.0, f64::MAX);
    for threads in [1usize, 2] {
        let mut best = f64::MAX;
        let mut instructions = 0;
        for _ in 0..3 {
            let (r, wall, cpu) = timed(|| {
                gpu.run(
                    "matmul_tiled",
                    &args,
                    [n as u32, n as u32, 1],
                    [16, 16, 1],
                    threads,
                )
                .expect("matmul runs")
            });
            best = best.min(wall);
            if threads == 1 {
                cpu_1 = cpu_1.min(cpu);
            }
            instructions = r.wave_instructions;
        }
        rates.push(instructions as f64 / best / 1e6);
        if threads == 1 {
            emu_1 = best;
        }
    }
    let got = loader::u32s(&gpu.read(pc, 4 * n * n));
    let mut native = f64::MAX;
    let mut want = vec![0f32; n * n];
    for _ in 0..3 {
        let t = Instant::now();
        native_matmul(&a, &b, &mut want, n);
        native = native.min(t.elapsed().as_secs_f64());
    }
    for i in 0..n * n {
        // These values make every product and partial sum exact in f32.
        assert_eq!(f32::from_bits(got[i]), want[i], "C[{}][{}]", i / n, i % n);
    }
    let per_cpu = rates[0] * emu_1 / cpu_1;
    println!(
        "matmul_tiled: {:.1} M wave-instructions/s on 1 thread ({per_cpu:.1} per CPU second, {:.1} ms), {:.1} on 2 threads, native {:.1}x ({:.2} ms)",
        rates[0],
        emu_1 * 1e3,
        rates[1],
        emu_1 / native,
        native * 1e3
    );
}

/// Row-major C = A * B in i-k-j order (the inner loop vectorises), with FMA and AVX2 when the
/// host has them.
fn native_matmul(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2")
        {
            // SAFETY: the CPU supports FMA and AVX2, checked just above.
            return unsafe { matmul_fma(a, b, c, n) };
        }
    }
    matmul_plain(a, b, c, n)
}

#[inline(always)]
fn matmul_plain(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    c.fill(0.0);
    for i in 0..n {
        for k in 0..n {
            let x = a[i * n + k];
            let (row, brow) = (&mut c[i * n..(i + 1) * n], &b[k * n..(k + 1) * n]);
            for (cv, bv) in row.iter_mut().zip(brow) {
                *cv = x.mul_add(*bv, *cv);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma,avx2")]
unsafe fn matmul_fma(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    matmul_plain(a, b, c, n)
}
