//! The emulator's bounds on what a kernel may take, with clang-19 kernels
//! (`tests/emu_kernels/bounds.hip`) at -O0, -O2 and -O3: scratch residency within the
//! configured budget, a dispatch whose one work-group cannot fit refused with a typed error.

use std::time::Duration;

use rocload_emu::{Config, DispatchError, Emulator, ExecError};

mod common;
use common::*;

const LEVELS: [&str; 3] = ["O0", "O2", "O3"];

/// Scratch bytes per work-item `name`'s descriptor asks for.
fn private_size(gpu: &Gpu, name: &str) -> u64 {
    let kd = gpu.symbols[&format!("{name}.kd")];
    let b = gpu.read(kd + 4, 4);
    u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn emulator(scratch_budget: u64) -> Emulator {
    Emulator::new(Config {
        threads: 2,
        timeout: Some(Duration::from_secs(60)),
        scratch_budget,
        ..Config::default()
    })
}

/// `scratch_hog` keeps 16 KiB per work-item while its waves sleep, which makes the scheduler
/// admit more work-groups: the budget caps how many are resident (so the memory they hold),
/// results stay right, and freed buffers are kept for reuse.
#[test]
fn scratch_residency_stays_within_the_budget() {
    let (groups, block) = (48u32, 64u16);
    for level in LEVELS {
        let mut gpu = Gpu::load(&format!("bounds-{level}.co"));
        let per_lane = private_size(&gpu, "scratch_hog");
        assert!(per_lane >= 16 * 1024, "-{level}: {per_lane}");
        let group_bytes = 2 * 32 * per_lane;
        let items = (groups * u32::from(block)) as usize;
        let out = gpu.alloc(&vec![0; 4 * items]);
        let args = Args::default().ptr(out).i32(64);
        let run = |emu: &Emulator| {
            gpu.run_on(
                emu,
                "scratch_hog",
                &args,
                [items as u32, 1, 1],
                [block, 1, 1],
            )
            .unwrap_or_else(|e| panic!("-{level}: {e}"));
            let got = u32s(&gpu.read(out, 4 * items));
            for (i, &v) in got.iter().enumerate() {
                let tid = (i % usize::from(block)) as u32;
                let want: u32 = (0..4096).step_by(64).map(|k| k + tid).sum();
                assert_eq!(v, want, "-{level}: item {i}");
            }
            emu.scratch_usage()
        };

        let budget = 3 * group_bytes;
        let emu = emulator(budget);
        let (now, peak, retained) = run(&emu);
        assert_eq!(now, 0, "-{level}: every reservation is given back");
        assert!(peak <= budget, "-{level}: {peak} reserved, budget {budget}");
        assert!(peak >= 2 * group_bytes, "-{level}: both threads had work");
        assert!(retained > 0, "-{level}: freed buffers are kept for reuse");
        // A second dispatch reuses them (nothing new reserved beyond the budget).
        let (now, peak, _) = run(&emu);
        assert!(now == 0 && peak <= budget, "-{level}");

        // Without the bound, the same dispatch keeps far more resident: what the budget stops.
        let (_, unbounded, _) = run(&emulator(u64::MAX));
        assert!(unbounded > 4 * budget, "-{level}: {unbounded}");

        // One work-group alone over the budget: refused before any wave runs.
        match gpu.run_on(
            &emulator(group_bytes - 1),
            "scratch_hog",
            &args,
            [items as u32, 1, 1],
            [block, 1, 1],
        ) {
            Err(ExecError::Dispatch(DispatchError::ScratchTooLarge {
                per_workitem,
                workgroup_bytes,
                budget,
            })) => {
                assert_eq!(u64::from(per_workitem), per_lane, "-{level}");
                assert_eq!(workgroup_bytes, group_bytes, "-{level}");
                assert_eq!(budget, group_bytes - 1, "-{level}");
            }
            other => panic!("-{level}: {other:?}"),
        }
    }
}
