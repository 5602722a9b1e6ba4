//! How long choosing a code object takes: `select` over a 40-entry bundle (the size of a
//! library built for every ROCm target with xnack variants), target ≤ 1 µs so it can run at
//! every first launch. Also entry-id parsing and a single check.

use criterion::{black_box, criterion_group, Criterion};
use rocload::target::{check, select, AgentIsa, EntryId, Policy, TargetId};

/// 40 entry ids: the host entry plus 39 device targets, in the order clang writes them
/// (sorted by id), exact match for gfx1101 near the end.
fn bundle() -> Vec<String> {
    let targets = [
        "gfx10-1-generic",
        "gfx10-3-generic",
        "gfx1010",
        "gfx1011",
        "gfx1012",
        "gfx1013",
        "gfx1030",
        "gfx1031",
        "gfx1032",
        "gfx1033",
        "gfx1034",
        "gfx1035",
        "gfx1036",
        "gfx11-generic",
        "gfx1100",
        "gfx12-generic",
        "gfx1200",
        "gfx1201",
        "gfx900:xnack-",
        "gfx900:xnack+",
        "gfx902",
        "gfx904",
        "gfx906:xnack-",
        "gfx906:xnack+",
        "gfx908:xnack-",
        "gfx908:xnack+",
        "gfx909",
        "gfx90a:xnack-",
        "gfx90a:xnack+",
        "gfx90c",
        "gfx940",
        "gfx941",
        "gfx942:sramecc+:xnack-",
        "gfx942:sramecc+:xnack+",
        "gfx942:sramecc-:xnack-",
        "gfx9-generic",
        "gfx1102",
        "gfx1150",
        "gfx1101",
    ];
    let mut ids = vec!["host-x86_64-unknown-linux-gnu-".to_string()];
    ids.extend(
        targets
            .iter()
            .map(|t| format!("hipv4-amdgcn-amd-amdhsa--{t}")),
    );
    assert_eq!(ids.len(), 40);
    ids
}

fn benches(c: &mut Criterion) {
    let ids = bundle();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();

    let gfx1101: AgentIsa = "gfx1101".parse().unwrap();
    assert_eq!(select(&gfx1101, &refs, Policy::Strict).chosen, Some(39));
    c.bench_function("select 40 entries, exact match last", |b| {
        b.iter(|| select(black_box(&gfx1101), black_box(&refs), Policy::Strict))
    });

    let gfx942: AgentIsa = "gfx942:sramecc+:xnack-".parse().unwrap();
    c.bench_function("select 40 entries, features (gfx942)", |b| {
        b.iter(|| select(black_box(&gfx942), black_box(&refs), Policy::Strict))
    });

    let gfx1103: AgentIsa = "gfx1103".parse().unwrap();
    c.bench_function(
        "select 40 entries, generic match (gfx1103, extended)",
        |b| b.iter(|| select(black_box(&gfx1103), black_box(&refs), Policy::Extended)),
    );

    let gfx805: AgentIsa = "gfx805".parse().unwrap();
    assert_eq!(select(&gfx805, &refs, Policy::Strict).chosen, None);
    c.bench_function("select 40 entries, no match", |b| {
        b.iter(|| select(black_box(&gfx805), black_box(&refs), Policy::Strict))
    });

    c.bench_function("no-match explanation (cold path)", |b| {
        b.iter(|| {
            select(black_box(&gfx805), black_box(&refs), Policy::Strict)
                .no_match_error()
                .to_string()
        })
    });

    c.bench_function("EntryId::parse", |b| {
        b.iter(|| EntryId::parse(black_box("hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-")))
    });

    let code: TargetId = "gfx942:sramecc+:xnack-".parse().unwrap();
    c.bench_function("check", |b| {
        b.iter(|| check(black_box(&gfx942), black_box(&code), None, Policy::Strict))
    });
}

criterion_group!(select_benches, benches);

/// The pieces of the hot path.
fn parts(c: &mut Criterion) {
    c.bench_function("by_name", |b| {
        b.iter(|| rocload::target::Processor::by_name(black_box("gfx942")))
    });
    c.bench_function("TargetId parse", |b| {
        b.iter(|| black_box("gfx942:sramecc+:xnack-").parse::<TargetId>())
    });
    c.bench_function("TargetId parse plain", |b| {
        b.iter(|| black_box("gfx1101").parse::<TargetId>())
    });
}
criterion_group!(parts_benches, parts);
/// With `ROCLOAD_SELECT_LOOP=N`, runs the 40-entry selection N times and exits, so that
/// `perf stat -e task-clock` can measure CPU time per selection on a busy machine where
/// wall-clock samples include time spent preempted.
fn main() {
    if let Some(n) = std::env::var("ROCLOAD_SELECT_LOOP")
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
    {
        let ids = bundle();
        let agent: AgentIsa = "gfx1101".parse().unwrap();
        let start = std::time::Instant::now();
        for _ in 0..n {
            black_box(select(black_box(&agent), black_box(&ids), Policy::Strict));
        }
        eprintln!(
            "{:.1} ns per select (wall)",
            start.elapsed().as_nanos() as f64 / n as f64
        );
        return;
    }
    select_benches();
    parts_benches();
    Criterion::default().configure_from_args().final_summary();
}
