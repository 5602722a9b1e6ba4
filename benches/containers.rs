//! Container benchmarks in process: listing cost (independent of bundle size), extracting an
//! early and the last entry, and whole-bundle inflation throughput. Uses
//! `bench-data/big.ccob` from `scripts/make-big-bundle.sh` when present, else a synthetic
//! 64 MiB bundle built here (so the bench always runs).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rocload::container::{
    read_containers, write_bundle, write_ccob, Compression, Container, HashCheck, ReadOptions,
};

fn input() -> (String, Vec<u8>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/bench-data/big.ccob");
    if let Ok(bytes) = std::fs::read(path) {
        return (path.to_string(), bytes);
    }
    // Pseudo-code: compressible but not trivially so.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let entries: Vec<(String, Vec<u8>)> = (0..16)
        .map(|t| {
            let data = (0..4 << 20)
                .map(|i| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    if i % 4 == 0 {
                        (state & 0xff) as u8
                    } else {
                        (i / 64) as u8
                    }
                })
                .collect();
            (format!("hipv4-amdgcn-amd-amdhsa--gfx10{t:02}"), data)
        })
        .collect();
    let refs: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(i, d)| (i.as_str(), d.as_slice()))
        .collect();
    (
        "synthetic 64 MiB".to_string(),
        write_ccob(&write_bundle(&refs, 4096), 2, Compression::Zstd),
    )
}

fn small() -> Vec<u8> {
    write_ccob(
        &write_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx1030", &[1u8; 4096])], 4096),
        2,
        Compression::Zstd,
    )
}

fn benches(c: &mut Criterion) {
    let (name, big) = input();
    eprintln!("container benches on {name} ({} bytes)", big.len());
    let opts = ReadOptions::default();
    let mut g = c.benchmark_group("containers");
    g.sample_size(10);
    for (label, data) in [("list big", &big), ("list small", &small())] {
        g.bench_function(label, |b| {
            b.iter(|| {
                let found = read_containers(black_box(data), &opts).unwrap();
                black_box(found[0].entries().unwrap())
            })
        });
    }
    let found = read_containers(&big, &opts).unwrap();
    let Container::Compressed(ccob) = &found[0].container else {
        panic!("benchmark input is not a CCOB")
    };
    let entries = ccob.entries().unwrap();
    let mut by_offset: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].size > 0)
        .collect();
    by_offset.sort_by_key(|&i| entries[i].offset);
    let (early, last) = (by_offset[0], *by_offset.last().unwrap());
    g.bench_function("extract early entry", |b| {
        b.iter(|| black_box(ccob.extract(early).unwrap()))
    });
    g.bench_function("extract last entry", |b| {
        b.iter(|| black_box(ccob.extract(last).unwrap()))
    });
    g.throughput(Throughput::Bytes(ccob.header().uncompressed_size));
    g.bench_function("inflate whole (hash checked)", |b| {
        b.iter(|| black_box(ccob.inflate().unwrap()))
    });
    let unverified = rocload::container::CompressedBundle::parse(
        ccob.as_bytes(),
        &ReadOptions {
            verify: HashCheck::Never,
            ..opts.clone()
        },
    )
    .unwrap();
    g.bench_function("inflate whole (no hash)", |b| {
        b.iter(|| black_box(unverified.inflate().unwrap()))
    });
    g.finish();
}

criterion_group!(container_benches, benches);
criterion_main!(container_benches);
