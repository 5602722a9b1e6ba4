//! The emulator's bounds on what a kernel may take, with clang-19 kernels
//! (`tests/emu_kernels/bounds.hip`, `sync.hip`) at -O0, -O2 and -O3: scratch residency within
//! the configured budget, a dispatch whose one work-group cannot fit refused with a typed
//! error, timeouts that name a wave, grids that never wrap, and LDS and scratch faults that
//! name the lane and wave that made the access.

use std::time::Duration;

use rocload_emu::{Config, DispatchError, Emulator, ExecError, FaultKind, NoServices, WaveId};

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

/// A kernel that never ends stops at the timeout set for later dispatches, naming a wave that
/// was still running: its work-group, its index, a PC inside the kernel and the instruction.
#[test]
fn a_timeout_names_the_wave_that_never_finished() {
    for level in LEVELS {
        let mut gpu = Gpu::load(&format!("sync-{level}.co"));
        let flag = gpu.alloc(&[0; 4]);
        let emu = emulator(u64::MAX);
        emu.set_timeout(Some(Duration::from_millis(300)));
        assert_eq!(emu.timeout(), Some(Duration::from_millis(300)));
        let code = gpu.symbols["spin_forever"];
        match gpu.run_on(
            &emu,
            "spin_forever",
            &Args::default().ptr(flag),
            [256, 2, 1],
            [64, 1, 1],
        ) {
            Err(ExecError::Timeout {
                elapsed,
                workgroups_done: 0,
                workgroups: 8,
                site: Some(site),
                wave: Some(wave),
            }) => {
                assert!(elapsed < Duration::from_secs(10), "-{level}: {elapsed:?}");
                assert!(site.pc >= code && site.pc < code + 4096, "-{level}: {site}");
                assert!(!site.instruction.is_empty(), "-{level}: {site}");
                assert!(wave.wave < 2 && wave.workgroup[0] < 4 && wave.workgroup[1] < 2);
                assert_eq!(wave.workgroup[2], 0);
            }
            other => panic!("-{level}: {other:?}"),
        }
    }
}

/// Grids as large as HIP allows: (2^32 - 1)^2 work-groups run until the timeout with the
/// count right; (2^32 - 1)^3 cannot be counted and is refused, never wrapped.
#[test]
fn huge_grids_time_out_or_are_refused_never_wrap() {
    let mut gpu = Gpu::load("sync-O2.co");
    let flag = gpu.alloc(&1i32.to_le_bytes());
    let args = Args::default().ptr(flag);
    let emu = emulator(u64::MAX);
    emu.set_timeout(Some(Duration::from_millis(500)));
    let m = u64::from(u32::MAX);
    match gpu.run_on(
        &emu,
        "spin_forever",
        &args,
        [u32::MAX, u32::MAX, 1],
        [1, 1, 1],
    ) {
        Err(ExecError::Timeout {
            workgroups,
            workgroups_done,
            ..
        }) => {
            assert_eq!(workgroups, m * m);
            assert!(workgroups_done > 0 && workgroups_done < workgroups);
        }
        other => panic!("{other:?}"),
    }
    match gpu.run_on(&emu, "spin_forever", &args, [u32::MAX; 3], [1, 1, 1]) {
        Err(ExecError::Dispatch(DispatchError::TooManyWorkgroups { groups })) => {
            assert_eq!(groups, [u32::MAX; 3]);
        }
        other => panic!("{other:?}"),
    }
}

/// Work-item 37 of work-group 0 (lane 5 of wave 1) writes LDS or scratch far past its segment:
/// the fault names that lane and wave, and its text no other lane.
#[test]
fn lds_and_scratch_faults_name_the_lane_that_made_the_access() {
    for level in LEVELS {
        let mut gpu = Gpu::load(&format!("bounds-{level}.co"));
        let out = gpu.alloc(&vec![0; 4 * 128]);
        for (kernel, index) in [("lds_past_end", 10_000), ("scratch_past_end", 100_000)] {
            let args = Args::default().ptr(out).i32(37).i32(index);
            let mut d = gpu.prepare(kernel, &args, &[], [128, 1, 1], [64, 1, 1]);
            // 64 ints of dynamic LDS (clang puts `extern __shared__` after the static part).
            d.group_segment_size += 256;
            let e = emulator(u64::MAX)
                .run(&d, &gpu.mem, &NoServices)
                .expect_err(kernel);
            let text = e.to_string();
            let ExecError::MemoryFault {
                lane, wave, kind, ..
            } = e
            else {
                panic!("-{level} {kernel}: {text}")
            };
            assert_eq!(lane, 5, "-{level} {kernel}: {text}");
            assert_eq!(
                wave,
                Some(WaveId {
                    workgroup: [0, 0, 0],
                    wave: 1
                }),
                "-{level} {kernel}: {text}"
            );
            match (kernel, kind) {
                ("lds_past_end", FaultKind::Lds(f)) => {
                    assert_eq!(f.address, 40_000, "-{level}: {text}");
                    assert!(f.size < 40_000, "-{level}: {text}");
                }
                ("scratch_past_end", FaultKind::Scratch(f)) => {
                    assert!(
                        f.private_offset() >= u64::from(f.per_lane),
                        "-{level}: {text}"
                    );
                }
                (_, other) => panic!("-{level} {kernel}: {other:?}"),
            }
            assert!(
                text.contains("lane 5 of wave 1 of work-group (0, 0, 0)"),
                "{text}"
            );
            assert_eq!(text.matches("lane").count(), 1, "-{level}: {text}");
        }
    }
}
