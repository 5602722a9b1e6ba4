//! No input makes the emulator panic: random instruction words (each run a different mix of
//! encodings, operands and modifiers) executed from random initial registers must end in a
//! report or a typed error. Deterministic (a fixed xorshift seed), so a failure reproduces.

use std::time::Duration;

use rocload_emu::{Config, Dispatch, Emulator, FlatMemory, NoServices};

const CODE: u64 = 0x10_0000;
const DATA: u64 = 0x20_0000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn descriptor(rng: &mut Rng) -> [u8; 64] {
    let mut kd = [0u8; 64];
    let rsrc1: u32 = 0xf << 16 | 1 << 21 | 1 << 23;
    // Random system SGPRs and work-item id VGPRs; PSB, kernarg, flat scratch init always.
    let rsrc2: u32 =
        10 << 1 | (rng.next() as u32 & 0b1111) << 7 | (rng.next() as u32 & 3) << 11 | 1;
    let props: u16 = 1 | 8 | 32 | 1 << 10;
    kd[48..52].copy_from_slice(&rsrc1.to_le_bytes());
    kd[52..56].copy_from_slice(&rsrc2.to_le_bytes());
    kd[56..58].copy_from_slice(&props.to_le_bytes());
    kd
}

#[test]
fn random_code_ends_in_a_report_or_a_typed_error() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut outcomes = [0usize; 2];
    for run in 0..600 {
        let mut mem = FlatMemory::new();
        mem.map(CODE, 4096, false).unwrap();
        mem.map(DATA, 4096, true).unwrap();
        // Random instructions that decode (so runs get past the first word), mostly from the
        // spaces clang uses: VOP1/2/3/3P/C, SOP*, SMEM, DS, FLAT/GLOBAL, MUBUF.
        let prefixes = [
            0x7e00_0000u32,
            0xbe80_0000,
            0x8000_0000,
            0xd500_0000,
            0xd800_0000,
            0xdc00_0000,
            0xf400_0000,
            0x0200_0000,
            0xe000_0000,
            0xcc00_0000,
            0x7c00_0000,
            0xbf00_0000,
        ];
        let mut code = Vec::new();
        while code.len() < 4 * 48 {
            let r = rng.next();
            let w0 = if r & 1 == 0 {
                prefixes[(r >> 1) as usize % prefixes.len()] | (r >> 32) as u32 & 0x01ff_ffff
            } else {
                (r >> 16) as u32
            };
            let (w1, w2) = (rng.next() as u32, rng.next() as u32);
            let bytes: Vec<u8> = [w0, w1, w2].iter().flat_map(|w| w.to_le_bytes()).collect();
            if let Ok(inst) = rocload_emu::isa::decode(&bytes, CODE + 0x100 + code.len() as u64) {
                code.extend_from_slice(&bytes[..usize::from(inst.len).min(12)]);
            }
        }
        code.extend_from_slice(&0xbf81_0000u32.to_le_bytes()); // s_endpgm
        mem.write_bytes(CODE + 0x100, &code).unwrap();
        let d = Dispatch {
            processor: "gfx1030",
            descriptor: descriptor(&mut rng),
            descriptor_address: CODE,
            grid: [48, 2, 1],
            workgroup: [48, 1, 1],
            kernarg_address: DATA,
            packet_address: DATA,
            queue_address: DATA,
            dispatch_id: run,
            group_segment_size: (rng.next() % 1024) as u32,
            private_segment_size: (rng.next() % 256) as u32,
            shared_aperture: 1 << 48,
            private_aperture: 2 << 48,
            compute_units: None,
        };
        let mut kd = d.descriptor;
        kd[16..24].copy_from_slice(&0x100i64.to_le_bytes());
        let d = Dispatch {
            descriptor: kd,
            ..d
        };
        let emu = Emulator::new(Config {
            threads: 1 + (run as usize % 2),
            timeout: Some(Duration::from_millis(30)),
            slice: 64,
            ..Config::default()
        });
        match emu.run(&d, &mem, &NoServices) {
            Ok(_) => outcomes[0] += 1,
            Err(e) => {
                // Every error renders (no panic in Display either).
                assert!(!e.to_string().is_empty());
                outcomes[1] += 1;
            }
        }
    }
    assert_eq!(outcomes.iter().sum::<usize>(), 600);
}
