//! Loader benchmarks: loading and linking ~1,000 real code objects with cross imports, name
//! lookup and address-to-symbol among ~10,000 symbols, and lookups from several threads.
//!
//! The 1,000 objects are the fixtures kernels_user/devlib_math/devlib_data (real lld output)
//! copied 334 times with every exported and imported name rewritten to a same-length unique
//! one, so each triple links only within itself and nothing collides.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rocload::backend::SoftAgent;
use rocload::loader::{Linker, Module, ModuleSource};

const NAMES: [(&str, char); 6] = [
    ("_ZN2dl3mixEif", 'm'),
    ("use_scale", 'u'),
    ("dl_scale", 's'),
    ("dl_table", 't'),
    ("use_add", 'k'),
    ("dl_add", 'a'),
];

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/codeobj/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn rename(bytes: &[u8], copy: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for (name, tag) in NAMES {
        let new = format!("{tag}{copy:0width$}", width = name.len() - 1);
        let (old, new) = (name.as_bytes(), new.as_bytes());
        let mut i = 0;
        while i + old.len() <= out.len() {
            if &out[i..i + old.len()] == old {
                out[i..i + old.len()].copy_from_slice(new);
                i += old.len();
            } else {
                i += 1;
            }
        }
    }
    out
}

fn modules(triples: usize) -> Vec<Vec<u8>> {
    let sources = [
        fixture("kernels_user.co"),
        fixture("devlib_math.co"),
        fixture("devlib_data.co"),
    ];
    (0..triples)
        .flat_map(|t| sources.iter().map(move |s| rename(s, t)))
        .collect()
}

fn benches(c: &mut Criterion) {
    let raw = modules(334);
    // ~10,000 symbols for the lookup benchmarks.
    let many: Vec<Module> = modules(850)
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            Module::new(
                b,
                ModuleSource::Memory {
                    label: format!("m{i}"),
                },
            )
            .unwrap()
        })
        .collect();
    let agent = SoftAgent::new("gfx1030".parse().unwrap()).shared();
    let parsed: Vec<Module> = raw
        .iter()
        .enumerate()
        .map(|(i, b)| {
            Module::new(
                b.clone(),
                ModuleSource::Memory {
                    label: format!("m{i}"),
                },
            )
            .unwrap()
        })
        .collect();
    let exe = Linker::new().link(&agent, &many).unwrap();
    let count = exe.symbols().len();
    eprintln!(
        "lookups among {count} symbols of {} code objects",
        many.len()
    );

    let mut g = c.benchmark_group("loader");
    g.sample_size(10);
    g.bench_function("parse + link 1002 code objects", |b| {
        b.iter(|| {
            let modules: Vec<Module> = raw
                .iter()
                .map(|b| {
                    Module::new(
                        Arc::<[u8]>::from(b.as_slice()),
                        ModuleSource::Memory {
                            label: String::new(),
                        },
                    )
                    .unwrap()
                })
                .collect();
            black_box(Linker::new().link(&agent, &modules).unwrap())
        })
    });
    g.bench_function("link 1002 parsed code objects", |b| {
        b.iter(|| black_box(Linker::new().link(&agent, &parsed).unwrap()))
    });
    g.finish();

    let names: Vec<String> = exe.symbols().iter().map(|s| s.name.clone()).collect();
    let addresses: Vec<u64> = exe
        .symbols()
        .iter()
        .map(|s| s.address + s.size / 2)
        .collect();
    let mut g = c.benchmark_group("symbols");
    g.throughput(Throughput::Elements(1));
    let mut i = 0usize;
    g.bench_function(format!("lookup by name among {count}"), |b| {
        b.iter(|| {
            i = (i + 7919) % names.len();
            black_box(exe.symbol(&names[i]))
        })
    });
    g.bench_function(format!("lookup by demangled name among {count}"), |b| {
        b.iter(|| black_box(exe.symbol("dl::mix(int, float)")))
    });
    let mut j = 0usize;
    g.bench_function(format!("address to symbol among {count}"), |b| {
        b.iter(|| {
            j = (j + 7919) % addresses.len();
            black_box(exe.symbol_at(addresses[j]))
        })
    });
    // The same lookups from 1 and 2 threads at once: per-lookup time should not grow, as
    // the frozen table takes no lock.
    for threads in [1usize, 2] {
        g.throughput(Throughput::Elements((threads * 100_000) as u64));
        g.bench_function(
            format!("100k name lookups per thread, {threads} thread(s)"),
            |b| {
                b.iter(|| {
                    std::thread::scope(|s| {
                        for t in 0..threads {
                            let (exe, names) = (&exe, &names);
                            s.spawn(move || {
                                let mut k = t * 13;
                                for _ in 0..100_000 {
                                    k = (k + 7919) % names.len();
                                    black_box(exe.symbol(&names[k]));
                                }
                            });
                        }
                    })
                })
            },
        );
    }
    g.finish();
}

criterion_group!(loader_benches, benches);
criterion_main!(loader_benches);
