//! The numbers `scripts/bench-emu` prints: wave instructions per second of the engine on the
//! benchmark kernels on 1 and 2 host threads, and how much slower than the same computation
//! compiled for the host (on 1 thread) the emulator is. Checks the results against the host.

use std::time::Instant;

use rocload_emu::{Config, Emulator, NoServices};

#[path = "../benches/common/mod.rs"]
mod common;

fn main() {
    let groups = 32;
    let items = groups * common::GROUP;
    let prog = common::alu_kernel();
    let mut rates = Vec::new();
    let mut emu_1 = 0.0;
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
            let t = Instant::now();
            report = Some(emu.run(&d, &mem, &NoServices).expect("run"));
            best = best.min(t.elapsed().as_secs_f64());
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
    println!(
        "alu_fma_loop: {:.1} M wave-instructions/s on 1 thread, {:.1} on 2 threads, native {:.1}x",
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
