//! HIP kernels compiled by clang-19 for gfx1030 at -O0, -O2 and -O3 (sources in
//! `tests/emu_kernels/`, built by `scripts/build-emu-kernels.sh`), run on the emulator and
//! checked against the same computation on the host. A minimal loader: map the code object's
//! PT_LOAD segments into a [`FlatMemory`], apply its RELATIVE64 relocations, find `<name>.kd`,
//! lay out the kernarg segment (explicit arguments, then the code object v5 hidden ones).

use std::collections::HashMap;
use std::time::Duration;

use rocload_emu::{
    Config, Dispatch, Emulator, ExecError, FlatFault, FlatMemory, NoServices, Report, Services,
};

mod common;
use common::*;

const LEVELS: [&str; 3] = ["O0", "O2", "O3"];

fn each_level(f: impl Fn(&str, &mut Gpu)) {
    for level in LEVELS {
        let mut gpu = Gpu::load(&format!("basic-{level}.co"));
        f(level, &mut gpu);
    }
}

fn ok(level: &str, r: Result<Report, ExecError<FlatFault>>) -> Report {
    r.unwrap_or_else(|e| panic!("-{level}: {e}"))
}

#[test]
fn vadd_with_a_partial_last_group() {
    each_level(|level, gpu| {
        let n = 1000;
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
        let (pa, pb, pc) = (
            gpu.alloc(&bytes_of(&a)),
            gpu.alloc(&bytes_of(&b)),
            gpu.alloc(&vec![0; 4 * n]),
        );
        let args = Args::default().ptr(pa).ptr(pb).ptr(pc).i32(n as i32);
        ok(
            level,
            gpu.run("vadd", &args, [n as u32, 1, 1], [256, 1, 1], 2),
        );
        let c = u32s(&gpu.read(pc, 4 * n));
        for i in 0..n {
            assert_eq!(c[i], (a[i] + b[i]).to_bits(), "-{level} item {i}");
        }
    });
}

#[test]
fn float_division_matches_the_host() {
    each_level(|level, gpu| {
        let n = 512;
        let x: Vec<f32> = (0..n).map(|i| (i as f32 - 200.0) * 0.37 + 1e-3).collect();
        let y: Vec<f32> = (0..n).map(|i| (i as f32).sqrt() * 3.1 - 7.0).collect();
        let (px, py) = (gpu.alloc(&bytes_of(&x)), gpu.alloc(&bytes_of(&y)));
        let a = 1.75f32;
        ok(
            level,
            gpu.run(
                "saxpy_div",
                &Args::default().ptr(px).ptr(py).f32(a).i32(n as i32),
                [n as u32, 1, 1],
                [128, 1, 1],
                1,
            ),
        );
        let out = u32s(&gpu.read(py, 4 * n));
        for i in 0..n {
            let q = y[i] / (x[i] + 1.5);
            let (fused, plain) = (a.mul_add(x[i], q), a * x[i] + q);
            assert!(
                out[i] == fused.to_bits() || out[i] == plain.to_bits(),
                "-{level} item {i}: {} vs {fused}",
                f32::from_bits(out[i])
            );
        }
    });
}

#[test]
fn shuffle_reduction_with_atomics() {
    each_level(|level, gpu| {
        let n = 3000;
        let v: Vec<i32> = (0..n).map(|i| (i * 7919 % 1000) - 500).collect();
        let (pin, pout) = (gpu.alloc(&bytes_of(&v)), gpu.alloc(&[0; 4]));
        ok(
            level,
            gpu.run(
                "reduce_shfl",
                &Args::default().ptr(pin).ptr(pout).i32(n),
                [3072, 1, 1],
                [256, 1, 1],
                2,
            ),
        );
        assert_eq!(
            u32s(&gpu.read(pout, 4))[0] as i32,
            v.iter().sum::<i32>(),
            "-{level}"
        );
    });
}

#[test]
fn tiled_matmul_through_shared_memory() {
    each_level(|level, gpu| {
        let n = 48usize;
        let a: Vec<f32> = (0..n * n)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 16.0)
            .collect();
        let b: Vec<f32> = (0..n * n)
            .map(|i| ((i * 53 % 97) as f32 - 48.0) / 8.0)
            .collect();
        let (pa, pb, pc) = (
            gpu.alloc(&bytes_of(&a)),
            gpu.alloc(&bytes_of(&b)),
            gpu.alloc(&vec![0; 4 * n * n]),
        );
        ok(
            level,
            gpu.run(
                "matmul_tiled",
                &Args::default().ptr(pa).ptr(pb).ptr(pc).i32(n as i32),
                [n as u32, n as u32, 1],
                [16, 16, 1],
                2,
            ),
        );
        let c = u32s(&gpu.read(pc, 4 * n * n));
        for r in 0..n {
            for col in 0..n {
                // Products of these values and their sums are exact in f32, so every order and
                // contraction gives the same bits.
                let want: f32 = (0..n).map(|k| a[r * n + k] * b[k * n + col]).sum();
                assert_eq!(
                    f32::from_bits(c[r * n + col]),
                    want,
                    "-{level} C[{r}][{col}]"
                );
            }
        }
    });
}

#[test]
fn block_scan() {
    each_level(|level, gpu| {
        let v: Vec<i32> = (0..1024).map(|i| (i * 31 % 17) - 8).collect();
        let (pin, pout) = (gpu.alloc(&bytes_of(&v)), gpu.alloc(&[0; 4096]));
        ok(
            level,
            gpu.run(
                "scan_block",
                &Args::default().ptr(pin).ptr(pout),
                [1024, 1, 1],
                [256, 1, 1],
                2,
            ),
        );
        let out = u32s(&gpu.read(pout, 4096));
        for blk in 0..4 {
            let mut acc = 0i32;
            for t in 0..256 {
                acc += v[blk * 256 + t];
                assert_eq!(
                    out[blk * 256 + t] as i32,
                    acc,
                    "-{level} block {blk} item {t}"
                );
            }
        }
    });
}

#[test]
fn histogram_with_shared_and_global_atomics() {
    each_level(|level, gpu| {
        let n = 10_000;
        let v: Vec<u32> = (0..n)
            .map(|i: u32| i.wrapping_mul(2654435761) >> 7)
            .collect();
        let (pin, pbins) = (gpu.alloc(&bytes_of(&v)), gpu.alloc(&[0; 256]));
        ok(
            level,
            gpu.run(
                "histogram",
                &Args::default().ptr(pin).ptr(pbins).i32(n as i32),
                [8 * 128, 1, 1],
                [128, 1, 1],
                2,
            ),
        );
        let mut want = [0u32; 64];
        for x in &v {
            want[(x % 64) as usize] += 1;
        }
        assert_eq!(u32s(&gpu.read(pbins, 256)), want.to_vec(), "-{level}");
    });
}

#[test]
fn division_of_64_bit_integers() {
    each_level(|level, gpu| {
        let n = 300;
        let a: Vec<u64> = (0..n)
            .map(|i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7))
            .collect();
        let b: Vec<i64> = (0..n)
            .map(|i: u64| {
                let m = ((i * 2_654_435_761) % 1_000_003) as i64 + 1;
                if i % 3 == 0 {
                    -m << (i % 40)
                } else {
                    m << (i % 23)
                }
            })
            .collect();
        let (pa, pb) = (gpu.alloc(&bytes_of(&a)), gpu.alloc(&bytes_of(&b)));
        let (pq, pr) = (
            gpu.alloc(&vec![0; 8 * n as usize]),
            gpu.alloc(&vec![0; 8 * n as usize]),
        );
        let args = Args::default()
            .ptr(pa)
            .ptr(pb)
            .ptr(pq)
            .ptr(pr)
            .i32(n as i32);
        ok(
            level,
            gpu.run("div64", &args, [n as u32, 1, 1], [64, 1, 1], 2),
        );
        let (q, r) = (
            u64s(&gpu.read(pq, 8 * n as usize)),
            u64s(&gpu.read(pr, 8 * n as usize)),
        );
        for i in 0..n as usize {
            assert_eq!(q[i], a[i] / b[i].unsigned_abs(), "-{level} q[{i}]");
            assert_eq!(r[i] as i64, (a[i] as i64) % b[i], "-{level} r[{i}]");
        }
    });
}

#[test]
fn three_dimensional_grid() {
    each_level(|level, gpu| {
        let (nx, ny, nz) = (20u32, 6u32, 5u32);
        let pout = gpu.alloc(&vec![0xff; 4 * (nx * ny * nz) as usize]);
        ok(
            level,
            gpu.run(
                "grid3d",
                &Args::default().ptr(pout).i32(nx as i32).i32(ny as i32),
                [nx, ny, nz],
                [8, 4, 2],
                2,
            ),
        );
        let out = u32s(&gpu.read(pout, 4 * (nx * ny * nz) as usize));
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    assert_eq!(
                        out[((z * ny + y) * nx + x) as usize],
                        x | y << 10 | z << 20,
                        "-{level} ({x},{y},{z})"
                    );
                }
            }
        }
    });
}

fn each(file: &str, f: impl Fn(&str, &mut Gpu)) {
    for level in LEVELS {
        let mut gpu = Gpu::load(&format!("{file}-{level}.co"));
        f(level, &mut gpu);
    }
}

fn collatz(mut x: u32) -> i32 {
    let mut n = 0;
    while x != 1 {
        x = if x & 1 == 1 { 3 * x + 1 } else { x / 2 };
        n += 1;
    }
    n
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

#[test]
fn calls_recursion_and_function_pointers() {
    each("calls", |level, gpu| {
        let n = 100usize;
        let sel: Vec<i32> = (0..n as i32).map(|i| i * 5 % 7).collect();
        let psel = gpu.alloc(&bytes_of(&sel));
        let (ps, pf, pp) = (
            gpu.alloc(&vec![0; 4 * n]),
            gpu.alloc(&vec![0; 8 * n]),
            gpu.alloc(&vec![0; 4 * n]),
        );
        let args = Args::default()
            .ptr(ps)
            .ptr(pf)
            .ptr(pp)
            .ptr(psel)
            .i32(n as i32);
        ok(
            level,
            gpu.run("calls", &args, [n as u32, 1, 1], [64, 1, 1], 2),
        );
        let (steps, fibs, fp) = (
            u32s(&gpu.read(ps, 4 * n)),
            u64s(&gpu.read(pf, 8 * n)),
            u32s(&gpu.read(pp, 4 * n)),
        );
        for i in 0..n {
            assert_eq!(
                steps[i] as i32,
                collatz(i as u32 + 1),
                "-{level} steps[{i}]"
            );
            assert_eq!(fibs[i], fib(i as u64 % 14), "-{level} fib[{i}]");
            let x = i as f32 + 0.25;
            let want = match sel[i] % 3 {
                0 => 2.0 * x,
                1 => x * x,
                _ => -x,
            };
            assert_eq!(f32::from_bits(fp[i]), want, "-{level} fp[{i}]");
        }
    });
}

#[test]
fn private_arrays_live_in_scratch() {
    each("calls", |level, gpu| {
        let n = 96usize;
        let idx: Vec<i32> = (0..n as i32).map(|i| i * 13 + 5).collect();
        let (pidx, pout) = (gpu.alloc(&bytes_of(&idx)), gpu.alloc(&vec![0; 4 * n]));
        ok(
            level,
            gpu.run(
                "private_array",
                &Args::default().ptr(pidx).ptr(pout).i32(n as i32),
                [n as u32, 1, 1],
                [32, 1, 1],
                2,
            ),
        );
        let out = u32s(&gpu.read(pout, 4 * n));
        for i in 0..n {
            let mut a: Vec<i32> = (0..40).map(|k| k * k + i as i32).collect();
            for k in 0..40usize {
                let j = (k * 7 + i) % 40;
                a[j] += a[k] / 3;
            }
            assert_eq!(
                out[i] as i32,
                a[(idx[i] % 40) as usize],
                "-{level} item {i}"
            );
        }
    });
}

#[test]
fn grid_and_block_sizes_come_from_the_dispatch() {
    each("calls", |level, gpu| {
        let pout = gpu.alloc(&vec![0; 4 * 192]);
        ok(
            level,
            gpu.run(
                "sizes",
                &Args::default().ptr(pout),
                [192, 1, 1],
                [64, 1, 1],
                1,
            ),
        );
        let out = u32s(&gpu.read(pout, 4 * 192));
        for (i, &v) in out.iter().enumerate() {
            assert_eq!(
                v,
                3 * 1_000_000 + 64 * 1000 + (i % 64) as u32,
                "-{level} item {i}"
            );
        }
    });
}

/// Distance in units in the last place between two floats of the same sign class.
fn ulps32(a: f32, b: f32) -> u64 {
    if a.is_nan() && b.is_nan() || a == b {
        return 0;
    }
    let key = |x: f32| {
        let i = x.to_bits() as i32;
        i64::from(if i < 0 { i32::MIN - i } else { i })
    };
    key(a).abs_diff(key(b))
}

fn ulps64(a: f64, b: f64) -> u64 {
    if a.is_nan() && b.is_nan() || a == b {
        return 0;
    }
    let key = |x: f64| {
        let i = x.to_bits() as i64;
        i128::from(if i < 0 { i64::MIN - i } else { i })
    };
    key(a).abs_diff(key(b)) as u64
}

#[test]
fn f32_math_library_within_hip_ulp_bounds() {
    each("math", |level, gpu| {
        let n = 256usize;
        let x: Vec<f32> = (0..n)
            .map(|i| (i as f32 - 128.0) * 0.731 + (i % 7) as f32 * 1e-3)
            .collect();
        let (px, pout) = (gpu.alloc(&bytes_of(&x)), gpu.alloc(&vec![0; 32 * n]));
        ok(
            level,
            gpu.run(
                "math_f32",
                &Args::default().ptr(px).ptr(pout).i32(n as i32),
                [n as u32, 1, 1],
                [64, 1, 1],
                2,
            ),
        );
        let out = u32s(&gpu.read(pout, 32 * n));
        // HIP's documented bounds (ulp): sin 2, cos 2, exp 2, log 1, sqrt 1, pow 4, tanh 2,
        // atan2 3; +1 for the host reference (computed in f64 from the same f32 intermediates
        // the source computes, rounded once).
        let cases: [Case32; 8] = [
            ("sinf", 3, |v| f64::from(v).sin()),
            ("cosf", 3, |v| f64::from(v).cos()),
            ("expf", 3, |v| f64::from(v * 0.1).exp()),
            ("logf", 2, |v| f64::from(v.abs() + 1e-3).ln()),
            ("sqrtf", 2, |v| f64::from(v.abs()).sqrt()),
            ("powf", 5, |v| {
                f64::from(v.abs() + 0.5).powf(f64::from(1.7f32))
            }),
            ("tanhf", 3, |v| f64::from(v * 0.05).tanh()),
            ("atan2f", 4, |v| f64::from(v).atan2(3.0)),
        ];
        for i in 0..n {
            for (k, (name, bound, f)) in cases.iter().enumerate() {
                let (got, want) = (f32::from_bits(out[8 * i + k]), f(x[i]) as f32);
                assert!(
                    ulps32(got, want) <= *bound,
                    "-{level} {name}({}) = {got:e}, host {want:e}",
                    x[i]
                );
            }
        }
    });
}

/// A function name, its ulp bound, and the host reference.
type Case32 = (&'static str, u64, fn(f32) -> f64);
/// The same for f64.
type Case64 = (&'static str, u64, fn(f64) -> f64);

#[test]
fn f64_math_library_within_hip_ulp_bounds() {
    each("math", |level, gpu| {
        let n = 128usize;
        let x: Vec<f64> = (0..n)
            .map(|i| (i as f64 - 64.0) * 1.37 + (i % 5) as f64 * 1e-7)
            .collect();
        let (px, pout) = (gpu.alloc(&bytes_of(&x)), gpu.alloc(&vec![0; 48 * n]));
        ok(
            level,
            gpu.run(
                "math_f64",
                &Args::default().ptr(px).ptr(pout).i32(n as i32),
                [n as u32, 1, 1],
                [64, 1, 1],
                2,
            ),
        );
        let out = u64s(&gpu.read(pout, 48 * n));
        // HIP's bounds: sin 2, cos 2, exp 1, log 1, sqrt 0, division 0; +1 for the host libm.
        let cases: [Case64; 6] = [
            ("sin", 3, f64::sin),
            ("cos", 3, f64::cos),
            ("exp", 2, |v| (v * 0.1).exp()),
            ("log", 2, |v| (v.abs() + 1e-3).ln()),
            ("sqrt", 0, |v| v.abs().sqrt()),
            ("div", 0, |v| v / 7.0),
        ];
        for i in 0..n {
            for (k, (name, bound, f)) in cases.iter().enumerate() {
                let (got, want) = (f64::from_bits(out[6 * i + k]), f(x[i]));
                assert!(
                    ulps64(got, want) <= *bound,
                    "-{level} {name}({}) = {got:e}, host {want:e}",
                    x[i]
                );
            }
        }
    });
}

#[test]
fn f16_arithmetic_rounds_like_half() {
    each("math", |level, gpu| {
        let n = 200usize;
        let x: Vec<f32> = (0..n).map(|i| (i as f32 - 100.0) * 0.173).collect();
        let (px, pout) = (gpu.alloc(&bytes_of(&x)), gpu.alloc(&vec![0; 16 * n]));
        ok(
            level,
            gpu.run(
                "math_f16",
                &Args::default().ptr(px).ptr(pout).i32(n as i32),
                [n as u32, 1, 1],
                [64, 1, 1],
                2,
            ),
        );
        let out = u32s(&gpu.read(pout, 16 * n));
        for i in 0..n {
            let h = half::f16::from_f32(x[i]).to_f32();
            let r = |v: f64| half::f16::from_f64(v).to_f32();
            let want = [
                r(f64::from(h) + 2.0),
                r(f64::from(h) * f64::from(h)),
                r(f64::from(h.abs()).sqrt()),
                r(f64::from(h).mul_add(2.0, f64::from(h))),
            ];
            for k in 0..4 {
                assert_eq!(
                    f32::from_bits(out[4 * i + k]),
                    want[k],
                    "-{level} item {i} op {k}"
                );
            }
        }
    });
}

#[test]
fn code_object_v4_reads_sizes_from_the_dispatch_packet() {
    let mut gpu = Gpu::load("calls-v4-O2.co");
    let pout = gpu.alloc(&vec![0; 4 * 192]);
    ok(
        "O2 v4",
        gpu.run(
            "sizes",
            &Args::default().ptr(pout),
            [192, 1, 1],
            [64, 1, 1],
            1,
        ),
    );
    let out = u32s(&gpu.read(pout, 4 * 192));
    for (i, &v) in out.iter().enumerate() {
        assert_eq!(v, 3 * 1_000_000 + 64 * 1000 + (i % 64) as u32, "item {i}");
    }
}

#[test]
fn warp_shuffles_scan_and_reduce() {
    each("sync", |level, gpu| {
        let n = 256usize;
        let v: Vec<i32> = (0..n as i32).map(|i| (i * 37 % 23) - 11).collect();
        let (pin, pout, pxor) = (
            gpu.alloc(&bytes_of(&v)),
            gpu.alloc(&vec![0; 4 * n]),
            gpu.alloc(&vec![0; 4 * n]),
        );
        ok(
            level,
            gpu.run(
                "warp_scan",
                &Args::default().ptr(pin).ptr(pout).ptr(pxor),
                [n as u32, 1, 1],
                [128, 1, 1],
                1,
            ),
        );
        let (out, xors) = (u32s(&gpu.read(pout, 4 * n)), u32s(&gpu.read(pxor, 4 * n)));
        for w in 0..n / 32 {
            let lanes = &v[32 * w..32 * w + 32];
            let max = *lanes.iter().max().unwrap();
            let mut acc = 0;
            for l in 0..32 {
                acc += lanes[l];
                assert_eq!(
                    out[32 * w + l] as i32,
                    acc,
                    "-{level} scan lane {l} of wave {w}"
                );
                assert_eq!(
                    xors[32 * w + l] as i32,
                    max,
                    "-{level} max lane {l} of wave {w}"
                );
            }
        }
    });
}

#[test]
fn chained_scan_across_groups_with_sleep_polling() {
    each("sync", |level, gpu| {
        let groups = 40usize;
        let v: Vec<i32> = (0..groups as i32 * 64).map(|i| i % 9 - 3).collect();
        let (pin, ptot, pout) = (
            gpu.alloc(&bytes_of(&v)),
            gpu.alloc(&vec![0; 4 * groups]),
            gpu.alloc(&vec![0; 4 * 64 * groups]),
        );
        for threads in [1, 2] {
            gpu.mem.write_bytes(ptot, &vec![0; 4 * groups]).unwrap();
            ok(
                level,
                gpu.run(
                    "chained_scan",
                    &Args::default().ptr(pin).ptr(ptot).ptr(pout),
                    [64 * groups as u32, 1, 1],
                    [64, 1, 1],
                    threads,
                ),
            );
            let out = u32s(&gpu.read(pout, 4 * 64 * groups));
            let mut total = 0;
            for g in 0..groups {
                total += v[64 * g..64 * g + 64].iter().sum::<i32>();
                assert_eq!(
                    out[64 * g] as i32,
                    total,
                    "-{level} {threads} threads, group {g}"
                );
            }
        }
    });
}

#[test]
fn a_kernel_that_never_ends_is_a_typed_timeout() {
    let mut gpu = Gpu::load("sync-O2.co");
    let flag = gpu.alloc(&[0; 4]);
    let kd_at = gpu.symbols["spin_forever.kd"];
    let mut descriptor = [0u8; 64];
    descriptor.copy_from_slice(&gpu.read(kd_at, 64));
    let mut k = Args::default().ptr(flag).bytes;
    k.resize(256, 0);
    gpu.mem.write_bytes(KERNARG, &k).unwrap();
    let d = Dispatch {
        processor: "gfx1030",
        descriptor,
        descriptor_address: kd_at,
        grid: [64, 1, 1],
        workgroup: [64, 1, 1],
        kernarg_address: KERNARG,
        packet_address: PACKET,
        queue_address: 0,
        dispatch_id: 0,
        group_segment_size: 0,
        private_segment_size: 0,
        shared_aperture: 1 << 48,
        private_aperture: 2 << 48,
        compute_units: None,
    };
    let emu = Emulator::new(Config {
        threads: 1,
        timeout: Some(Duration::from_millis(300)),
        ..Config::default()
    });
    match emu.run(&d, &gpu.mem, &NoServices) {
        Err(ExecError::Timeout {
            workgroups_done: 0,
            workgroups: 1,
            site: Some(site),
            ..
        }) => {
            assert!(!site.instruction.is_empty(), "{site}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn reading_past_a_buffer_is_a_typed_fault_naming_lane_and_address() {
    each("sync", |level, gpu| {
        let (pin, pout) = (gpu.alloc(&vec![0; 4 * 64]), gpu.alloc(&vec![0; 4 * 64]));
        // Stride 3: lane 22 is the first to read past the 64 ints (22 * 3 = 66).
        match gpu.run(
            "out_of_bounds",
            &Args::default().ptr(pin).ptr(pout).i32(3),
            [64, 1, 1],
            [64, 1, 1],
            1,
        ) {
            Err(ExecError::MemoryFault {
                site,
                lane,
                address,
                kind: rocload_emu::FaultKind::Guest(f),
                ..
            }) => {
                assert_eq!((lane, address), (22, pin + 4 * 66), "-{level}");
                assert_eq!(f.address, address);
                assert!(site.instruction.contains("load"), "-{level}: {site}");
            }
            other => panic!("-{level}: {other:?}"),
        }
    });
}

/// A minimal host side of the hostcall protocol (the layout rocload's runtime uses: buffer_t,
/// packet headers, payloads of 64 lanes x 8 words, a doorbell signal with an event mailbox),
/// collecting printf messages instead of printing them.
struct Hostcall<'a> {
    mem: &'a FlatMemory,
    base: u64,
    state: std::sync::Mutex<Messages>,
    interrupts: std::sync::atomic::AtomicU32,
}

const PACKETS: u64 = 16;

/// Printf messages: the last id given, the open messages by id, the finished ones in order.
type Messages = (u64, HashMap<u64, Vec<u64>>, Vec<Vec<u64>>);

impl<'a> Hostcall<'a> {
    fn headers(base: u64) -> u64 {
        base + 64
    }
    fn payloads(base: u64) -> u64 {
        (Self::headers(base) + (PACKETS + 1) * 24).next_multiple_of(64)
    }
    fn size() -> u64 {
        Self::payloads(0) + (PACKETS + 1) * 4096 + 64 + 8
    }

    /// Lays out a buffer with every packet free.
    fn create(gpu: &mut Gpu) -> u64 {
        let base = gpu.alloc(&vec![0; Self::size() as usize]);
        let (h, p) = (Self::headers(base), Self::payloads(base));
        let signal = p + (PACKETS + 1) * 4096;
        let w = |m: &FlatMemory, at: u64, v: u64| m.write_bytes(at, &v.to_le_bytes()).unwrap();
        for i in 1..=PACKETS {
            w(&gpu.mem, h + i * 24, if i == PACKETS { 0 } else { i + 1 });
        }
        // buffer_t: headers, payloads, doorbell, free stack, ready stack, and the mask that
        // takes a packet index out of a tagged stack pointer (the device ANDs the 64-bit word
        // at +40 with the pointer).
        for (off, v) in [
            (0, h),
            (8, p),
            (16, signal),
            (24, 1),
            (32, 0),
            (40, 0xffff_ffff),
        ] {
            w(&gpu.mem, base + off, v);
        }
        w(&gpu.mem, signal, 1);
        w(&gpu.mem, signal + 16, signal + 64);
        w(&gpu.mem, signal + 24, 7);
        base
    }

    fn new(mem: &'a FlatMemory, base: u64) -> Self {
        Hostcall {
            mem,
            base,
            state: Default::default(),
            interrupts: Default::default(),
        }
    }

    fn word(&self, at: u64) -> &std::sync::atomic::AtomicU64 {
        let p = rocload_emu::GuestMemory::translate(self.mem, at, 8, rocload_emu::Access::Atomic)
            .unwrap();
        // SAFETY: FlatMemory's storage is 8-aligned atomics (every address here is a multiple
        // of 8 from an aligned base), alive as long as `self.mem`.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(p.as_ptr().cast()) }
    }

    fn serve(&self) {
        use std::sync::atomic::Ordering::*;
        let (h, p) = (Self::headers(self.base), Self::payloads(self.base));
        let mut ptr = self.word(self.base + 32).swap(0, Acquire);
        let mut ready = Vec::new();
        while ptr != 0 && ready.len() <= PACKETS as usize {
            let index = ptr & 0xffff_ffff;
            assert!((1..=PACKETS).contains(&index), "packet pointer {ptr:#x}");
            ready.push(index);
            ptr = self.word(h + index * 24).load(Relaxed);
        }
        let mut st = self.state.lock().unwrap();
        for &index in ready.iter().rev() {
            let header = h + index * 24;
            let mask = self.word(header + 8).load(Relaxed);
            let service = self.word(header + 16).load(Relaxed) as u32;
            assert_eq!(service, 2, "printf service");
            for lane in 0..64 {
                if mask >> lane & 1 == 0 {
                    continue;
                }
                let slot = p + index * 4096 + lane * 64;
                let words: Vec<u64> = (0..8)
                    .map(|i| self.word(slot + 8 * i).load(Relaxed))
                    .collect();
                let desc = words[0];
                let len = ((desc >> 5) & 7) as usize;
                let id = if desc & 1 != 0 {
                    st.0 += 1;
                    let id = st.0;
                    st.1.insert(id, Vec::new());
                    id
                } else {
                    desc >> 8
                };
                let msg = st.1.get_mut(&id).expect("open message");
                msg.extend_from_slice(&words[1..1 + len]);
                if desc & 2 != 0 {
                    let done = st.1.remove(&id).unwrap_or_default();
                    st.2.push(done);
                    self.word(slot).store(1, Relaxed);
                } else {
                    self.word(slot).store(id << 8, Relaxed);
                }
            }
            // Clear the ready flag (bit 0 of the control word at +20).
            self.word(header + 16).fetch_and(!(1u64 << 32), Release);
        }
    }

    /// The messages received: format string and the 8-byte words after it.
    fn messages(&self) -> Vec<(String, Vec<u64>)> {
        let st = self.state.lock().unwrap();
        st.2.iter()
            .map(|m| {
                let bytes: Vec<u8> = m[1..].iter().flat_map(|w| w.to_le_bytes()).collect();
                let nul = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                let words = m[1 + (nul + 1).div_ceil(8)..].to_vec();
                (String::from_utf8_lossy(&bytes[..nul]).into_owned(), words)
            })
            .collect()
    }
}

impl Services for Hostcall<'_> {
    fn interrupt(&self, _m0: u32) {
        self.interrupts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.serve();
    }
    fn idle(&self) {
        self.serve();
    }
}

#[test]
fn device_printf_goes_through_hostcall_interrupts() {
    each("printf", |level, gpu| {
        let buffer = Hostcall::create(gpu);
        let n = 40;
        let args = Args::default().i32(n);
        let host = Hostcall::new(&gpu.mem, buffer);
        ok(
            level,
            gpu.run_with(
                "hello",
                &args,
                &[(80, buffer)],
                [64, 1, 1],
                [64, 1, 1],
                1,
                &host,
            ),
        );
        let mut msgs = host.messages();
        assert_eq!(msgs.len(), n as usize, "-{level}");
        assert!(
            host.interrupts.load(std::sync::atomic::Ordering::Relaxed) > 0,
            "-{level}: no s_sendmsg interrupt"
        );
        msgs.sort_by_key(|m| m.1[0]);
        for (i, (fmt, words)) in msgs.iter().enumerate() {
            assert_eq!(fmt, "item %d of %d: %s\n", "-{level}");
            assert_eq!((words[0], words[1]), (i as u64, n as u64), "-{level}");
            let s = words[2].to_le_bytes();
            let want: &[u8] = if i % 2 == 1 { b"odd" } else { b"even" };
            assert_eq!(&s[..want.len()], want, "-{level} message {i}");
        }
    });
}

#[test]
fn assert_prints_and_traps() {
    each("printf", |level, gpu| {
        let buffer = Hostcall::create(gpu);
        let v: Vec<i32> = (0..64).map(|i| if i == 37 { -1 } else { i + 1 }).collect();
        let pv = gpu.alloc(&bytes_of(&v));
        let host = Hostcall::new(&gpu.mem, buffer);
        match gpu.run_with(
            "check_positive",
            &Args::default().ptr(pv),
            &[(80, buffer)],
            [64, 1, 1],
            [64, 1, 1],
            1,
            &host,
        ) {
            Err(ExecError::Trap { code: 2, site }) => {
                assert!(site.instruction.starts_with("s_trap"), "-{level}: {site}")
            }
            other => panic!("-{level}: {other:?}"),
        }
        let msgs = host.messages();
        assert!(!msgs.is_empty(), "-{level}: assert printed nothing");
    });
}

/// Services that panic: a bug on the host side of a dispatch.
struct PanickingServices;

impl Services for PanickingServices {
    fn interrupt(&self, _m0: u32) {
        panic!("a service failed");
    }
    fn idle(&self) {
        panic!("a service failed");
    }
}

/// A panic on an emulator thread (an emulator or service bug) ends the dispatch with a typed
/// internal error, on one thread and on several; it never unwinds into the caller.
#[test]
fn a_panicking_worker_fails_the_dispatch_instead_of_unwinding() {
    each("printf", |level, gpu| {
        let buffer = Hostcall::create(gpu);
        for threads in [1, 2] {
            let result = gpu.run_with(
                "hello",
                &Args::default().i32(4),
                &[(80, buffer)],
                [64, 1, 1],
                [64, 1, 1],
                threads,
                &PanickingServices,
            );
            match result {
                Err(ExecError::Internal { detail }) => {
                    assert!(detail.contains("a service failed"), "-{level}: {detail}")
                }
                other => panic!("-{level}, {threads} threads: {other:?}"),
            }
        }
    });
}
