//! The scheduler through the public API, on small programs assembled by hand into uops (no
//! decoder involved): initial registers, barriers with LDS, spin-waits between work-groups
//! that only interleaving can satisfy, atomics across host threads, and the typed endings
//! (trap, memory fault, unsupported instruction, timeout).

use std::time::Duration;

use rocload_emu::exec::{Block, Opnd, Uop};
use rocload_emu::{Config, Dispatch, Emulator, ExecError, FaultKind, FlatMemory, NoServices};

const CODE: u64 = 0x10_0000;
const KERNARG: u64 = 0x20_0000;
const DATA: u64 = 0x30_0000;

/// One instruction of a test program: mnemonic, destinations, sources, immediate.
struct I(&'static str, [Opnd; 2], [Opnd; 3], i64);

fn s(n: u8) -> Opnd {
    Opnd::S(n)
}
fn v(n: u16) -> Opnd {
    Opnd::V(n)
}
fn k(x: u64) -> Opnd {
    Opnd::Imm(x)
}
const N: Opnd = Opnd::None;

/// Branch targets are instruction indices; PCs are CODE + 4 * index.
fn target(i: i64) -> i64 {
    (CODE + 4 * i as u64) as i64
}

/// Puts the program in the emulator's decode cache: a block starting at every instruction,
/// running to the next branch or end.
fn load(emu: &Emulator, prog: Vec<Uop>) {
    let ends = |u: &Uop| {
        u.op.name().starts_with("s_branch")
            || u.op.name().starts_with("s_cbranch")
            || u.op.name() == "s_endpgm"
            || u.op.name() == "s_setpc_b64"
    };
    for start in 0..prog.len() {
        let end = (start..prog.len())
            .find(|&i| ends(&prog[i]))
            .unwrap_or(prog.len() - 1);
        emu.program()
            .insert(Block::new(prog[start].pc, prog[start..=end].to_vec()));
    }
}

fn assemble(items: Vec<I>) -> Vec<Uop> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, I(name, d, src, imm))| {
            let mut u = Uop {
                d,
                s: src,
                imm,
                pc: CODE + 4 * i as u64,
                ..Uop::named(name)
            };
            if name.starts_with("s_branch") || name.starts_with("s_cbranch") {
                u.imm = target(imm);
            }
            u
        })
        .collect()
}

/// A descriptor: PSB + kernarg pointer (user SGPRs s0-s5), work-group id x in s6, wave32.
fn descriptor() -> [u8; 64] {
    let mut kd = [0u8; 64];
    let rsrc1: u32 = 0xf << 16 | 1 << 21 | 1 << 23;
    let rsrc2: u32 = 6 << 1 | 1 << 7;
    let props: u16 = 1 | 8 | 1 << 10;
    kd[48..52].copy_from_slice(&rsrc1.to_le_bytes());
    kd[52..56].copy_from_slice(&rsrc2.to_le_bytes());
    kd[56..58].copy_from_slice(&props.to_le_bytes());
    kd
}

fn dispatch(groups: u32, wg: u16, lds: u32) -> Dispatch {
    Dispatch {
        processor: "gfx1030",
        descriptor: descriptor(),
        descriptor_address: CODE,
        grid: [groups * u32::from(wg), 1, 1],
        workgroup: [wg, 1, 1],
        kernarg_address: KERNARG,
        packet_address: 0,
        queue_address: 0,
        dispatch_id: 0,
        group_segment_size: lds,
        private_segment_size: 0,
        shared_aperture: 1 << 48,
        private_aperture: 2 << 48,
        compute_units: None,
    }
}

fn memory(data_len: u64) -> FlatMemory {
    let mut m = FlatMemory::new();
    m.map(KERNARG, 64, false).unwrap();
    m.map(DATA, data_len, true).unwrap();
    m.write_bytes(KERNARG, &DATA.to_le_bytes()).unwrap();
    m
}

fn config(threads: usize) -> Config {
    Config {
        threads,
        timeout: Some(Duration::from_secs(20)),
        ..Config::default()
    }
}

fn words(m: &FlatMemory, n: usize) -> Vec<u32> {
    m.read_bytes(DATA, 4 * n)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// out[group * 64 + tid] = LDS[(tid + 32) % 64] after each lane wrote its tid: correct only
/// if the barrier holds wave 0 until wave 1 has written.
#[test]
fn barrier_orders_lds_between_the_waves_of_a_group() {
    let prog = assemble(vec![
        I("s_load_dwordx2", [s(8), N], [s(4), N, N], 0),
        I("v_lshlrev_b32", [v(1), N], [k(2), v(0), N], 0),
        I("ds_write_b32", [N, N], [v(1), v(0), N], 0),
        I("s_barrier", [N, N], [N; 3], 0),
        I("v_add_nc_u32", [v(2), N], [k(32), v(0), N], 0),
        I("v_and_b32", [v(2), N], [k(63), v(2), N], 0),
        I("v_lshlrev_b32", [v(2), N], [k(2), v(2), N], 0),
        I("ds_read_b32", [v(3), N], [v(2), N, N], 0),
        I("s_lshl_b32", [s(10), N], [s(6), k(6), N], 0),
        I("v_add_nc_u32", [v(4), N], [s(10), v(0), N], 0),
        I("v_lshlrev_b32", [v(4), N], [k(2), v(4), N], 0),
        I("global_store_dword", [N, N], [v(4), v(3), N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
    ]);
    let mut prog = prog;
    prog[11].mem.saddr = s(8);
    for threads in [1, 2] {
        let emu = Emulator::new(config(threads));
        load(&emu, prog.clone());
        let m = memory(4 * 64 * 4);
        let r = emu.run(&dispatch(4, 64, 256), &m, &NoServices).unwrap();
        let out = words(&m, 256);
        for (i, &x) in out.iter().enumerate() {
            assert_eq!(x as usize, (i % 64 + 32) % 64, "item {i}");
        }
        assert_eq!((r.workgroups, r.waves), (4, 8));
        assert_eq!(r.wave_instructions, 8 * 13);
    }
}

/// Group n spins (with s_sleep) until group n+1 has set its flag; the last group sets its flag
/// at once. Running groups to completion one after another would never end.
#[test]
fn spin_waits_on_later_groups_make_progress() {
    let last = 7;
    let prog = assemble(vec![
        I("s_load_dwordx2", [s(8), N], [s(4), N, N], 0),
        I("s_lshl_b32", [s(10), N], [s(6), k(2), N], 0),
        I("s_add_u32", [s(11), N], [s(10), k(4), N], 0),
        I("s_cmp_eq_u32", [N, N], [s(6), k(last), N], 0),
        I("s_cbranch_scc1", [N, N], [N; 3], 10),
        // 5: poll flag[n + 1]
        I("s_load_dword", [s(12), N], [s(8), N, N], 0),
        I("s_cmp_eq_u32", [N, N], [s(12), k(1), N], 0),
        I("s_cbranch_scc1", [N, N], [N; 3], 10),
        I("s_sleep", [N, N], [k(1), N, N], 1),
        I("s_branch", [N, N], [N; 3], 5),
        // 10: flag[n] = 1
        I("v_mov_b32", [v(1), N], [k(1), N, N], 0),
        I("v_mov_b32", [v(2), N], [s(10), N, N], 0),
        I("global_store_dword", [N, N], [v(2), v(1), N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
    ]);
    let mut prog = prog;
    prog[5].mem.saddr = s(11);
    prog[12].mem.saddr = s(8);
    // EXEC: only lane 0 stores (one work-item groups).
    for threads in [1, 2] {
        let emu = Emulator::new(config(threads));
        load(&emu, prog.clone());
        let m = memory(64);
        emu.run(&dispatch(last as u32 + 1, 1, 0), &m, &NoServices)
            .unwrap();
        assert_eq!(words(&m, last as usize + 1), vec![1; last as usize + 1]);
    }
}

/// Three-dimensional work-item ids (v0, v1, v2) in a 5 x 3 x 4 work-group: the second wave
/// starts mid-row (lane 32 is x 2, y 0, z 2) and has 28 live lanes. Each lane stores
/// x | y << 8 | z << 16 at its flat index.
#[test]
fn work_item_ids_in_three_dimensions() {
    let mut prog = assemble(vec![
        I("s_load_dwordx2", [s(8), N], [s(4), N, N], 0),
        I("v_mul_u32_u24", [v(3), N], [k(5), v(1), N], 0),
        I("v_add_nc_u32", [v(3), N], [v(3), v(0), N], 0),
        I("v_mul_u32_u24", [v(4), N], [k(15), v(2), N], 0),
        I("v_add_nc_u32", [v(3), N], [v(3), v(4), N], 0),
        I("v_lshlrev_b32", [v(3), N], [k(2), v(3), N], 0),
        I("v_lshlrev_b32", [v(5), N], [k(8), v(1), N], 0),
        I("v_lshlrev_b32", [v(6), N], [k(16), v(2), N], 0),
        I("v_or_b32", [v(5), N], [v(5), v(0), N], 0),
        I("v_or_b32", [v(5), N], [v(5), v(6), N], 0),
        I("global_store_dword", [N, N], [v(3), v(5), N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
    ]);
    prog[10].mem.saddr = s(8);
    let emu = Emulator::new(config(1));
    load(&emu, prog);
    let m = memory(4 * 64);
    m.write_bytes(DATA, &[0xff; 4 * 64]).unwrap();
    let mut d = dispatch(1, 1, 0);
    d.grid = [5, 3, 4];
    d.workgroup = [5, 3, 4];
    // ENABLE_VGPR_WORKITEM_ID = 2: ids in v0, v1 and v2.
    let rsrc2 = u32::from_le_bytes(d.descriptor[52..56].try_into().unwrap()) | 2 << 11;
    d.descriptor[52..56].copy_from_slice(&rsrc2.to_le_bytes());
    let r = emu.run(&d, &m, &NoServices).unwrap();
    assert_eq!(r.waves, 2);
    let out = words(&m, 64);
    for (f, &got) in out.iter().enumerate().take(60) {
        let (x, y, z) = (f % 5, f / 5 % 3, f / 15);
        assert_eq!(got as usize, x | y << 8 | z << 16, "work-item {f}");
    }
    assert_eq!(
        out[60..],
        [u32::MAX; 4],
        "lanes past the work-group store nothing"
    );
}

/// The emulator keeps waves from one dispatch for the next. A kept wave starts with the
/// registers its kernel is granted zeroed; one that ran another kernel starts with every
/// register zeroed (v100 is past the 8 VGPRs the test descriptor grants).
#[test]
fn kept_waves_hold_nothing_of_another_kernel() {
    // Stores v5 and v100, then leaves values in them.
    let mut both = assemble(vec![
        I("s_load_dwordx2", [s(8), N], [s(4), N, N], 0),
        I("v_lshlrev_b32", [v(4), N], [k(3), v(0), N], 0),
        I("global_store_dword", [N, N], [v(4), v(5), N], 0),
        I("global_store_dword", [N, N], [v(4), v(100), N], 4),
        I("v_mov_b32", [v(5), N], [k(0x1234), N, N], 0),
        I("v_mov_b32", [v(100), N], [k(0x5678), N, N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
    ]);
    both[2].mem.saddr = s(8);
    both[3].mem.saddr = s(8);
    both[3].mem.offset = 4;
    // Another kernel, at another descriptor address, that leaves values in v5 and v100.
    const OTHER: u64 = 0x1000;
    let mut dirty = assemble(vec![
        I("v_mov_b32", [v(5), N], [k(0x9abc), N, N], 0),
        I("v_mov_b32", [v(100), N], [k(0xdef0), N, N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
    ]);
    for u in &mut dirty {
        u.pc += OTHER;
    }
    let stored = |m: &FlatMemory| -> (Vec<u32>, Vec<u32>) {
        let w = words(m, 128);
        (
            w.iter().step_by(2).copied().collect(),
            w.iter().skip(1).step_by(2).copied().collect(),
        )
    };
    for threads in [1, 2] {
        let emu = Emulator::new(config(threads));
        load(&emu, both.clone());
        load(&emu, dirty.clone());
        let m = memory(8 * 64);
        let mut other = dispatch(4, 64, 0);
        other.descriptor_address = CODE + OTHER;
        // The same kernel twice: its granted v5 starts at zero; v100 holds what it left.
        emu.run(&dispatch(1, 64, 0), &m, &NoServices).unwrap();
        emu.run(&dispatch(1, 64, 0), &m, &NoServices).unwrap();
        let (v5, v100) = stored(&m);
        assert_eq!(v5, vec![0; 64], "{threads} threads");
        assert_eq!(
            v100,
            vec![0x5678; 64],
            "{threads} threads: the same kernel's own values"
        );
        // After another kernel: nothing of it.
        emu.run(&other, &m, &NoServices).unwrap();
        emu.run(&dispatch(1, 64, 0), &m, &NoServices).unwrap();
        assert_eq!(stored(&m), (vec![0; 64], vec![0; 64]), "{threads} threads");
    }
}

/// Cooperative groups' grid sync: each group writes its flag, passes `ds_gws_barrier`
/// (awaiting every group's wave), then copies the next group's flag. Correct only if no group
/// reads before every group has written.
fn grid_sync_program(groups: u32) -> Vec<Uop> {
    let g = u64::from(groups);
    let mut prog = assemble(vec![
        I("s_load_dwordx2", [s(8), N], [s(4), N, N], 0),
        I("s_lshl_b32", [s(10), N], [s(6), k(2), N], 0),
        I("s_add_u32", [s(11), N], [s(6), k(1), N], 0),
        I("v_mov_b32", [v(1), N], [s(11), N, N], 0),
        I("v_mov_b32", [v(2), N], [s(10), N, N], 0),
        I("global_store_dword", [N, N], [v(2), v(1), N], 0),
        I("s_mov_b32", [s(124), N], [k(0), N, N], 0),
        I("v_mov_b32", [v(3), N], [k(g - 1), N, N], 0),
        I("ds_gws_barrier", [N, N], [v(3), N, N], 0),
        I("s_cmp_eq_u32", [N, N], [s(11), k(g), N], 0),
        I("s_cselect_b32", [s(11), N], [k(0), s(11), N], 0),
        I("s_lshl_b32", [s(12), N], [s(11), k(2), N], 0),
        I("v_mov_b32", [v(4), N], [s(12), N, N], 0),
        I("global_load_dword", [v(5), N], [v(4), N, N], 0),
        I("v_add_nc_u32", [v(6), N], [k(4 * g), v(2), N], 0),
        I("global_store_dword", [N, N], [v(6), v(5), N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
    ]);
    for i in [5, 13, 15] {
        prog[i].mem.saddr = s(8);
    }
    prog
}

#[test]
fn a_grid_barrier_holds_every_group_until_all_arrive() {
    let groups = 40u32;
    for threads in [1, 2] {
        let emu = Emulator::new(config(threads));
        load(&emu, grid_sync_program(groups));
        let m = memory(8 * u64::from(groups));
        let r = emu.run(&dispatch(groups, 1, 0), &m, &NoServices).unwrap();
        assert_eq!(r.workgroups, u64::from(groups));
        let out = words(&m, 2 * groups as usize);
        for g in 0..groups as usize {
            assert_eq!(out[g] as usize, g + 1, "flag of group {g}");
            assert_eq!(
                out[groups as usize + g] as usize,
                (g + 1) % groups as usize + 1,
                "group {g} read its neighbour's flag before the barrier opened"
            );
        }
    }
}

#[test]
fn a_grid_barrier_larger_than_the_device_is_a_typed_error() {
    let emu = Emulator::new(Config {
        max_resident: 4,
        ..config(2)
    });
    load(&emu, grid_sync_program(20));
    let m = memory(8 * 20);
    match emu.run(&dispatch(20, 1, 0), &m, &NoServices) {
        Err(ExecError::GridBarrier {
            site,
            waves,
            resident,
        }) => {
            assert_eq!((site.pc, waves, resident), (CODE + 4 * 8, 20, 8));
        }
        other => panic!("expected a grid-barrier error, got {other:?}"),
    }
}

#[test]
fn a_kernel_that_never_ends_times_out() {
    let prog = assemble(vec![
        I("s_sleep", [N, N], [N; 3], 1),
        I("s_branch", [N, N], [N; 3], 0),
    ]);
    let emu = Emulator::new(Config {
        timeout: Some(Duration::from_millis(200)),
        ..config(1)
    });
    load(&emu, prog);
    let m = memory(64);
    match emu.run(&dispatch(2, 32, 0), &m, &NoServices) {
        Err(ExecError::Timeout {
            workgroups_done: 0,
            workgroups: 2,
            site: Some(site),
            ..
        }) => {
            assert!(site.pc == CODE || site.pc == CODE + 4, "{site}");
        }
        other => panic!("{other:?}"),
    }
}

/// A CU mask: a dispatch runs one worker per unit it may use at most, and every work-group
/// still runs (the atomic count is whole).
#[test]
fn a_dispatch_runs_on_the_compute_units_it_is_given() {
    let prog = assemble(vec![
        I("s_load_dwordx2", [s(8), N], [s(4), N, N], 0),
        I("v_mov_b32", [v(1), N], [k(0), N, N], 0),
        I("v_mov_b32", [v(2), N], [k(1), N, N], 0),
        I("global_atomic_add", [N, N], [v(1), v(2), N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
    ]);
    let mut prog = prog;
    prog[3].mem.saddr = s(8);
    let emu = Emulator::new(config(4));
    load(&emu, prog);
    for (units, workers) in [(None, 4), (Some(vec![0]), 1), (Some(vec![0, 1]), 2)] {
        let m = memory(64);
        let d = Dispatch {
            compute_units: units.clone(),
            ..dispatch(64, 64, 0)
        };
        let report = emu.run(&d, &m, &NoServices).unwrap();
        assert_eq!(report.workers, workers, "units {units:?}");
        assert_eq!(words(&m, 1), vec![64 * 64], "units {units:?}");
    }
}

#[test]
fn atomics_are_atomic_across_host_threads() {
    let prog = assemble(vec![
        I("s_load_dwordx2", [s(8), N], [s(4), N, N], 0),
        I("v_mov_b32", [v(1), N], [k(0), N, N], 0),
        I("v_mov_b32", [v(2), N], [k(1), N, N], 0),
        I("global_atomic_add", [N, N], [v(1), v(2), N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
    ]);
    let mut prog = prog;
    prog[3].mem.saddr = s(8);
    let emu = Emulator::new(config(2));
    load(&emu, prog);
    let m = memory(64);
    emu.run(&dispatch(400, 256, 0), &m, &NoServices).unwrap();
    assert_eq!(words(&m, 1), vec![400 * 256]);
}

#[test]
fn traps_faults_and_unsupported_instructions_are_typed() {
    let emu = Emulator::new(config(1));
    load(
        &emu,
        assemble(vec![
            I("s_nop", [N, N], [N; 3], 0),
            I("s_trap", [N, N], [N; 3], 2),
        ]),
    );
    let m = memory(64);
    match emu.run(&dispatch(1, 32, 0), &m, &NoServices) {
        Err(ExecError::Trap { site, code: 2 }) => assert_eq!((site.pc, site.offset), (CODE + 4, 4)),
        other => panic!("{other:?}"),
    }

    let emu = Emulator::new(config(1));
    let mut prog = assemble(vec![
        I("v_lshlrev_b32", [v(1), N], [k(12), v(0), N], 0),
        I("global_load_dword", [v(2), N], [v(1), N, N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
    ]);
    prog[1].mem.saddr = s(4); // kernarg segment base: lanes past 64 bytes fault
    load(&emu, prog);
    match emu.run(&dispatch(1, 32, 0), &m, &NoServices) {
        Err(ExecError::MemoryFault {
            site,
            lane: 1,
            address,
            kind: FaultKind::Guest(f),
            ..
        }) => {
            assert_eq!(
                (site.pc, address, f.address),
                (CODE + 4, KERNARG + 4096, KERNARG + 4096)
            );
        }
        other => panic!("{other:?}"),
    }

    let emu = Emulator::new(config(1));
    load(
        &emu,
        assemble(vec![
            I("mimg", [N, N], [N; 3], 0),
            I("s_endpgm", [N, N], [N; 3], 0),
        ]),
    );
    match emu.run(&dispatch(1, 32, 0), &m, &NoServices) {
        Err(ExecError::Unsupported { site, mnemonic, .. }) => {
            assert_eq!((site.pc, mnemonic.as_str()), (CODE, "mimg"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn initial_registers_follow_the_descriptor() {
    // Every lane stores v0 (work-item id) at out[group * 48 + v0]: 48-item groups leave the
    // second wave with 16 live lanes.
    let mut prog = assemble(vec![
        I("s_load_dwordx2", [s(8), N], [s(4), N, N], 0),
        I("s_mul_i32", [s(10), N], [s(6), k(48), N], 0),
        I("v_add_nc_u32", [v(1), N], [s(10), v(0), N], 0),
        I("v_lshlrev_b32", [v(1), N], [k(2), v(1), N], 0),
        I("global_store_dword", [N, N], [v(1), v(0), N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
    ]);
    prog[4].mem.saddr = s(8);
    let emu = Emulator::new(config(1));
    load(&emu, prog);
    let m = memory(4 * 48 * 3);
    let r = emu.run(&dispatch(3, 48, 0), &m, &NoServices).unwrap();
    let out = words(&m, 48 * 3);
    for (i, &x) in out.iter().enumerate() {
        assert_eq!(x as usize, i % 48);
    }
    assert_eq!(r.waves, 6);
}

/// A function called from two sites returns to each in turn: its block's computed-jump link
/// (chaining) must be checked against the return address, not followed blindly; the loop's
/// taken branch and the fall-throughs are linked too.
#[test]
fn chained_blocks_follow_returns_to_every_call_site() {
    let f = 15; // the function's first instruction
    let mut prog = assemble(vec![
        I("s_load_dwordx2", [s(8), N], [s(4), N, N], 0),
        I("s_mov_b32", [s(11), N], [k(0), N, N], 0),
        I("s_mov_b32", [s(12), N], [k(0), N, N], 0),
        I("s_mov_b32", [s(16), N], [k(target(f) as u64), N, N], 0),
        I("s_mov_b32", [s(17), N], [k(0), N, N], 0),
        // loop: call the function from site A, then from site B
        I("s_swappc_b64", [s(30), N], [s(16), N, N], 0),
        I("s_add_u32", [s(12), N], [s(12), k(100), N], 0),
        I("s_swappc_b64", [s(30), N], [s(16), N, N], 0),
        I("s_mul_i32", [s(12), N], [s(12), k(3), N], 0),
        I("s_add_u32", [s(11), N], [s(11), k(1), N], 0),
        I("s_cmp_lt_u32", [N, N], [s(11), k(5), N], 0),
        I("s_cbranch_scc1", [N, N], [N; 3], 5),
        I("v_mov_b32", [v(1), N], [s(12), N, N], 0),
        I("global_store_dword", [N, N], [v(2), v(1), N], 0),
        I("s_endpgm", [N, N], [N; 3], 0),
        // the function: one step, return
        I("s_add_u32", [s(12), N], [s(12), k(1), N], 0),
        I("s_setpc_b64", [N, N], [s(30), N, N], 0),
    ]);
    prog[13].mem.saddr = s(8);
    let emu = Emulator::new(config(1));
    load(&emu, prog);
    let m = memory(64);
    emu.run(&dispatch(1, 32, 0), &m, &NoServices).unwrap();
    let mut acc = 0u32;
    for _ in 0..5 {
        acc = ((acc + 1 + 100) + 1) * 3;
    }
    assert_eq!(words(&m, 1), vec![acc]);
}
