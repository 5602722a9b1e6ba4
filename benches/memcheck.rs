//! What the software agent's memory checker costs (`scripts/bench-memcheck`): the same kernel
//! on the emulator over unchecked memory (every guest address used as a host pointer) and over
//! the allocation table as the runtime uses it (one table lookup per memory instruction, the
//! other lanes checked against that allocation), plus the stricter every-lane mode.
//!
//! The kernel is the worst case for the checker: a saxpy `y[i] += 2 * x[i]` that is one third
//! memory instructions (two loads, a store, six ALU instructions), hand-assembled so no
//! compiler choices blur it. Results are checked against the host before any timing.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use rocload::backend::soft::TableMemory;
use rocload::device::{AllocationTable, MemoryKind};
use rocload_emu::exec::{Block, Opnd, Uop};
use rocload_emu::{Access, Config, Dispatch, Emulator, GuestMemory, NoServices, Span};

const CODE: u64 = 0x10_0000;
const GROUP: u32 = 256;

/// Guest addresses used as host pointers with no check at all: the baseline. Its span (the
/// emulator's per-instruction fast path, as the table's) starts at the instruction's first
/// address and never ends. Only for this benchmark, whose kernel is first run checked to prove
/// it touches nothing else.
struct Unchecked;

#[derive(Debug)]
struct NullAddress;

unsafe impl GuestMemory for Unchecked {
    type Fault = NullAddress;
    fn translate(&self, address: u64, _: u64, _: Access) -> Result<NonNull<u8>, NullAddress> {
        NonNull::new(address as *mut u8).ok_or(NullAddress)
    }

    fn span(&self, address: u64, _: Access) -> Option<Span> {
        Some(Span {
            start: address,
            len: u64::MAX - address,
            host: NonNull::new(address as *mut u8)?,
        })
    }
}

fn saxpy() -> Vec<Uop> {
    let (s, v, k, n) = (Opnd::S, Opnd::V, Opnd::Imm, Opnd::None);
    let program: [(&'static str, [Opnd; 2], [Opnd; 3]); 9] = [
        ("s_load_dwordx4", [s(8), n], [s(4), n, n]),
        ("s_lshl_b32", [s(12), n], [s(6), k(8), n]),
        ("v_add_nc_u32", [v(1), n], [s(12), v(0), n]),
        ("v_lshlrev_b32", [v(1), n], [k(2), v(1), n]),
        ("global_load_dword", [v(2), n], [v(1), n, n]),
        ("global_load_dword", [v(3), n], [v(1), n, n]),
        (
            "v_fma_f32",
            [v(3), n],
            [k(2f32.to_bits().into()), v(2), v(3)],
        ),
        ("global_store_dword", [n, n], [v(1), v(3), n]),
        ("s_endpgm", [n, n], [n, n, n]),
    ];
    let mut uops: Vec<Uop> = program
        .into_iter()
        .enumerate()
        .map(|(i, (name, d, src))| Uop {
            d,
            s: src,
            pc: CODE + 4 * i as u64,
            ..Uop::named(name)
        })
        .collect();
    uops[4].mem.saddr = s(8);
    uops[5].mem.saddr = s(10);
    uops[7].mem.saddr = s(10);
    uops
}

fn dispatch(groups: u32, kernarg: u64) -> Dispatch {
    let mut kd = [0u8; 64];
    let rsrc1: u32 = 0xf << 16 | 1 << 21 | 1 << 23;
    let rsrc2: u32 = 6 << 1 | 1 << 7;
    let props: u16 = 1 | 8 | 1 << 10;
    kd[48..52].copy_from_slice(&rsrc1.to_le_bytes());
    kd[52..56].copy_from_slice(&rsrc2.to_le_bytes());
    kd[56..58].copy_from_slice(&props.to_le_bytes());
    Dispatch {
        processor: "gfx1030",
        descriptor: kd,
        descriptor_address: CODE,
        grid: [groups * GROUP, 1, 1],
        workgroup: [GROUP as u16, 1, 1],
        kernarg_address: kernarg,
        packet_address: 0,
        queue_address: 0,
        dispatch_id: 0,
        group_segment_size: 0,
        private_segment_size: 0,
        shared_aperture: 1 << 48,
        private_aperture: 2 << 48,
        compute_units: None,
    }
}

fn address<T>(b: &[T]) -> u64 {
    b.as_ptr() as u64
}

fn main() {
    let groups = 16 * 1024; // 4 M work-items
    let items = (groups * GROUP) as usize;
    let x: Box<[AtomicU32]> = (0..items)
        .map(|i| AtomicU32::new((i as f32 * 0.5).to_bits()))
        .collect();
    let y: Box<[AtomicU32]> = (0..items).map(|_| AtomicU32::new(0)).collect();
    let kernarg: Box<[AtomicU64]> = [address(&x), address(&y), 0, 0]
        .into_iter()
        .map(AtomicU64::new)
        .collect();
    let table = AllocationTable::new();
    table
        .insert(address(&kernarg), 32, MemoryKind::Kernarg, false)
        .unwrap();
    table
        .insert(address(&x), 4 * items as u64, MemoryKind::Device, true)
        .unwrap();
    table
        .insert(address(&y), 4 * items as u64, MemoryKind::Device, true)
        .unwrap();
    let d = dispatch(groups, address(&kernarg));
    let reset = || y.iter().for_each(|v| v.store(0, Ordering::Relaxed));
    let checked = |y: &[AtomicU32]| {
        for (i, v) in y.iter().enumerate() {
            let want = 2.0 * (i as f32 * 0.5);
            assert_eq!(f32::from_bits(v.load(Ordering::Relaxed)), want, "y[{i}]");
        }
    };
    println!("memcheck: saxpy over {items} floats (1/3 memory instructions), best of 5");
    for threads in [1usize, 2] {
        let emu = Emulator::new(Config {
            threads,
            ..Config::default()
        });
        let program = saxpy();
        for start in 0..program.len() {
            emu.program()
                .insert(Block::new(program[start].pc, program[start..].to_vec()));
        }
        let per_instruction = TableMemory::new(&table, false);
        let every_lane = TableMemory::new(&table, true);
        // Proven inside its buffers by the checked run before the unchecked one ever runs.
        reset();
        emu.run(&d, &per_instruction, &NoServices)
            .expect("checked run");
        checked(&y);
        let time = |run: &dyn Fn()| {
            let mut best = f64::MAX;
            for _ in 0..5 {
                reset();
                let t = Instant::now();
                run();
                best = best.min(t.elapsed().as_secs_f64());
                checked(&y);
            }
            best
        };
        let none = time(&|| {
            emu.run(&d, &Unchecked, &NoServices).expect("run");
        });
        let table_check = time(&|| {
            emu.run(&d, &per_instruction, &NoServices).expect("run");
        });
        let strict = time(&|| {
            emu.run(&d, &every_lane, &NoServices).expect("run");
        });
        println!(
            "  {threads} thread(s): unchecked {:.1} ms, checked (default) {:.1} ms = {:+.1}%, every lane {:.1} ms = {:+.1}%",
            none * 1e3,
            table_check * 1e3,
            (table_check / none - 1.0) * 100.0,
            strict * 1e3,
            (strict / none - 1.0) * 100.0
        );
    }
}
