//! Criterion benchmark of the engine on an ALU-bound kernel at full EXEC (8 FMAs per loop
//! iteration), on 1 and 2 host threads.

// criterion_group! generates functions without docs.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rocload_emu::{Config, Emulator, NoServices};

mod common;

fn alu(c: &mut Criterion) {
    let groups = 16;
    let prog = common::alu_kernel();
    let mut g = c.benchmark_group("alu_fma_loop");
    g.sample_size(10);
    let waves = u64::from(groups * common::GROUP / 32);
    g.throughput(Throughput::Elements(waves * common::WAVE_INSTRUCTIONS));
    for threads in [1usize, 2] {
        let emu = Emulator::new(Config {
            threads,
            ..Config::default()
        });
        common::load(&emu, &prog);
        let mem = common::memory(groups * common::GROUP);
        let d = common::dispatch(groups);
        g.bench_function(format!("{threads}_threads"), |b| {
            b.iter(|| emu.run(&d, &mem, &NoServices).expect("runs"))
        });
    }
    g.finish();
}

criterion_group!(benches, alu);
criterion_main!(benches);
