//! Runtime benchmarks (figures in docs/runtime.md):
//! - `register`: one registration, for a 4 KiB and a 64 MiB compressed fat binary (O(1):
//!   nothing is read);
//! - `startup`: registering 1,000 fat binaries totalling over 200 MB compressed, lazily and
//!   eagerly, against registering none;
//! - `first_use`: the first kernel lookup on a fresh runtime for a 64 MiB CCOB whose kernel
//!   entry comes first or last (streaming extraction stops at the entry's end);
//! - `lookup`: host stub to kernel once loaded, among 1 and 10,000 registered kernels.
//!
//! Fat binaries are the real clang-19 gfx1030 code object of tests/fixtures/hip/vadd.hip_fatbin
//! bundled with incompressible filler entries for other targets.
// Test code: every unsafe call passes pointers and buffers the test itself owns.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use rocload::backend::SoftAgent;
use rocload::container::{read_containers, write_bundle, write_ccob, Compression, ReadOptions};
use rocload::runtime::{Loading, Runtime, RuntimeOptions};

fn vadd_gfx1030() -> Vec<u8> {
    let data = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hip/vadd.hip_fatbin"
    ))
    .unwrap();
    let containers = read_containers(&data, &ReadOptions::default()).unwrap();
    let (pos, i) = rocload::container::find_entry(&containers, "gfx1030", None).unwrap();
    containers[pos].extract(i).unwrap().into_owned()
}

/// Incompressible bytes (xorshift64*).
fn filler(len: usize, seed: u64) -> Vec<u8> {
    // splitmix64 of the seed, so nearby seeds give unrelated streams.
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    let mut x = (z ^ (z >> 31)) | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// A CCOB v2 (zstd) holding the gfx1030 code object and `filler_len` bytes of filler spread over
/// four other targets, the kernel entry first or last.
fn ccob(filler_len: usize, kernel_first: bool, seed: u64) -> Vec<u8> {
    let co = vadd_gfx1030();
    let fill: Vec<Vec<u8>> = (0..4)
        .map(|i| filler(filler_len / 4, seed * 4 + i))
        .collect();
    let mut entries: Vec<(&str, &[u8])> = vec![
        ("hipv4-amdgcn-amd-amdhsa--gfx900", &fill[0]),
        ("hipv4-amdgcn-amd-amdhsa--gfx906", &fill[1]),
        ("hipv4-amdgcn-amd-amdhsa--gfx908", &fill[2]),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &fill[3]),
    ];
    let kernel = ("hipv4-amdgcn-amd-amdhsa--gfx1030", &co[..]);
    if kernel_first {
        entries.insert(0, kernel);
    } else {
        entries.push(kernel);
    }
    write_ccob(&write_bundle(&entries, 4096), 2, Compression::Zstd)
}

fn runtime(loading: Loading) -> Runtime {
    let agent = SoftAgent::new("gfx1030".parse().unwrap()).shared();
    Runtime::new(
        vec![agent],
        RuntimeOptions {
            loading,
            ..RuntimeOptions::default()
        },
    )
}

/// Times `iters` calls of `register`, in fresh runtimes holding `per_process` registrations
/// each (so memory stays bounded); only the registrations are timed.
fn time_registrations(iters: u64, per_process: u64, register: impl Fn(&Runtime)) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(per_process);
        let rt = runtime(Loading::Lazy);
        let start = Instant::now();
        for _ in 0..n {
            register(&rt);
        }
        total += start.elapsed();
        left -= n;
    }
    total
}

fn register(c: &mut Criterion) {
    let small: &'static [u8] = Box::leak(
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/hip/vadd.compressed.hip_fatbin"
        ))
        .unwrap()
        .into_boxed_slice(),
    );
    let large: &'static [u8] = Box::leak(ccob(64 << 20, false, 1).into_boxed_slice());
    let mut g = c.benchmark_group("register");
    for bytes in [small, large] {
        g.bench_function(format!("ccob_{}_bytes", bytes.len()), |b| {
            b.iter_custom(|iters| {
                time_registrations(iters, 1000, |rt| {
                    drop(black_box(rt.register_static(black_box(bytes))))
                })
            })
        });
    }
    // The wrapper path (what __hipRegisterFatBinary does): the pointer is recorded, not read.
    let wrapper: &'static [u64; 3] =
        Box::leak(Box::new([0x0000_0001_4849_5046, large.as_ptr() as u64, 0]));
    for per_process in [1000, 50_000] {
        g.bench_function(format!("hipf_wrapper_{per_process}_per_process"), |b| {
            b.iter_custom(|iters| {
                time_registrations(iters, per_process, |rt| {
                    drop(black_box(unsafe {
                        rt.register_wrapper(black_box(wrapper.as_ptr().cast()))
                    }))
                })
            })
        });
    }
    g.finish();
}

fn startup(c: &mut Criterion) {
    // 1,000 distinct copies of a ~210 KB CCOB (filler first, so eager extraction must inflate
    // it): over 200 MB of compressed fat binaries in memory, as in a large library's image.
    let one = ccob(200 << 10, false, 7);
    let count = 1000;
    let stride = one.len().next_multiple_of(4096);
    let mut image = vec![0u8; stride * count];
    for i in 0..count {
        image[i * stride..i * stride + one.len()].copy_from_slice(&one);
    }
    let image: &'static [u8] = Box::leak(image.into_boxed_slice());
    let total = one.len() * count;
    assert!(total >= 200_000_000, "{total}");
    let slices: Vec<&'static [u8]> = (0..count)
        .map(|i| &image[i * stride..i * stride + one.len()])
        .collect();
    let mut g = c.benchmark_group("startup");
    g.sample_size(10);
    g.bench_function("none", |b| b.iter(|| black_box(runtime(Loading::Lazy))));
    g.bench_function(
        format!("lazy_{count}_fat_binaries_{}MB", total >> 20),
        |b| {
            b.iter(|| {
                let rt = runtime(Loading::Lazy);
                for s in &slices {
                    black_box(rt.register_static(s));
                }
                rt
            })
        },
    );
    g.bench_function(
        format!("eager_{count}_fat_binaries_{}MB", total >> 20),
        |b| {
            b.iter(|| {
                let rt = runtime(Loading::Eager);
                for s in &slices {
                    black_box(rt.register_static(s));
                }
                assert_eq!(rt.stats().loads, count as u64);
                rt
            })
        },
    );
    g.finish();
}

fn first_use(c: &mut Criterion) {
    let mut g = c.benchmark_group("first_use");
    g.sample_size(10);
    for (label, kernel_first) in [("kernel_entry_first", true), ("kernel_entry_last", false)] {
        let bytes: &'static [u8] = Box::leak(ccob(64 << 20, kernel_first, 3).into_boxed_slice());
        g.bench_function(format!("{label}_ccob_{}MB", bytes.len() >> 20), |b| {
            b.iter_batched(
                || {
                    let rt = runtime(Loading::Lazy);
                    let h = rt.register_static(bytes);
                    rt.register_function(h.id(), 0x1000, "vadd").unwrap();
                    rt
                },
                |rt| {
                    black_box(rt.kernel(0x1000, 0).unwrap());
                    rt
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

fn lookup(c: &mut Criterion) {
    let bytes: &'static [u8] = Box::leak(
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/hip/vadd.hip_fatbin"
        ))
        .unwrap()
        .into_boxed_slice(),
    );
    let mut g = c.benchmark_group("lookup");
    for kernels in [1usize, 10_000] {
        let rt = Arc::new(runtime(Loading::Lazy));
        let h = rt.register_static(bytes);
        // Distinct host pointers 16 bytes apart, as clang's kernel handles are.
        for i in 0..kernels {
            rt.register_function(
                h.id(),
                0x10_0000 + i * 16,
                if i % 2 == 0 { "vadd" } else { "block_sum" },
            )
            .unwrap();
        }
        let probe = 0x10_0000 + (kernels / 2) * 16;
        rt.kernel(probe, 0).unwrap();
        g.bench_function(format!("host_stub_to_kernel_among_{kernels}"), |b| {
            b.iter(|| {
                black_box(rt.kernel(black_box(probe), 0).unwrap())
                    .info()
                    .kernarg_segment_size
            })
        });
    }
    g.finish();
}

criterion_group!(benches, register, startup, first_use, lookup);
criterion_main!(benches);
