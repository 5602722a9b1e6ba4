//! A minimal loader for the emulator's kernel tests and benchmarks: maps a clang-19 code
//! object's PT_LOAD segments into a [`FlatMemory`], applies its RELATIVE64 relocations, finds
//! `<name>.kd`, lays out the kernarg segment (explicit arguments, then the code object v5 hidden
//! ones) and a dispatch packet, and runs one dispatch.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use object::read::elf::{ElfFile64, ProgramHeader};
use object::{Object, ObjectSymbol};
use rocload_emu::{
    Config, Dispatch, Emulator, ExecError, FlatFault, FlatMemory, NoServices, Report, Services,
};

pub const CODE: u64 = 0x1_0000_0000;
pub const KERNARG: u64 = 0x3_0000_0000;
pub const PACKET: u64 = 0x3_1000_0000;
pub const BUFFERS: u64 = 0x4_0000_0000;

pub fn kernels_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = root.join("target/emu-kernels");
        let st = Command::new("bash")
            .arg(root.join("scripts/build-emu-kernels.sh"))
            .arg(&out)
            .status()
            .expect("scripts/build-emu-kernels.sh runs (needs clang-19: scripts/setup.sh)");
        assert!(st.success(), "building the test kernels failed");
        out
    })
}

/// A loaded code object, guest memory and a bump allocator for buffers.
pub struct Gpu {
    pub mem: FlatMemory,
    pub symbols: HashMap<String, u64>,
    next: u64,
}

impl Gpu {
    pub fn load(file: &str) -> Gpu {
        let path = kernels_dir().join(file);
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let elf = ElfFile64::<object::LittleEndian>::parse(&*data).expect("ELF");
        let mut mem = FlatMemory::new();
        let end = elf
            .elf_program_headers()
            .iter()
            .filter(|p| p.p_type(object::LittleEndian) == object::elf::PT_LOAD)
            .map(|p| p.p_vaddr(object::LittleEndian) + p.p_memsz(object::LittleEndian))
            .max()
            .expect("PT_LOAD");
        mem.map(CODE, end.next_multiple_of(256), true).unwrap();
        for p in elf.elf_program_headers() {
            let e = object::LittleEndian;
            if p.p_type(e) != object::elf::PT_LOAD {
                continue;
            }
            let bytes = p.data(e, &*data).expect("segment data");
            mem.write_bytes(CODE + p.p_vaddr(e), bytes).unwrap();
        }
        if let Some(relocs) = elf.dynamic_relocations() {
            for (offset, r) in relocs {
                if let object::RelocationFlags::Elf { r_type: 13 } = r.flags() {
                    let v = CODE.wrapping_add_signed(r.addend());
                    mem.write_bytes(CODE + offset, &v.to_le_bytes()).unwrap();
                }
            }
        }
        let symbols = elf
            .symbols()
            .filter_map(|s| Some((s.name().ok()?.to_string(), CODE + s.address())))
            .collect();
        mem.map(KERNARG, 4096, false).unwrap();
        mem.map(PACKET, 64, false).unwrap();
        Gpu {
            mem,
            symbols,
            next: BUFFERS,
        }
    }

    pub fn alloc(&mut self, bytes: &[u8]) -> u64 {
        let at = self.next;
        let len = (bytes.len() as u64).max(4);
        self.mem.map(at, len, true).unwrap();
        self.mem.write_bytes(at, bytes).unwrap();
        self.next = (at + len).next_multiple_of(1 << 20) + (1 << 20);
        at
    }

    pub fn read(&self, at: u64, len: usize) -> Vec<u8> {
        self.mem.read_bytes(at, len).unwrap()
    }

    /// Runs `name` with explicit arguments `args` (already laid out), grid and block in
    /// work-items and work-items per group.
    pub fn run(
        &self,
        name: &str,
        args: &Args,
        grid: [u32; 3],
        block: [u16; 3],
        threads: usize,
    ) -> Result<Report, ExecError<FlatFault>> {
        self.run_with(name, args, &[], grid, block, threads, &NoServices)
    }

    /// [`Gpu::run`] with hidden arguments set at offsets from the start of the hidden ones, and
    /// services.
    #[allow(clippy::too_many_arguments)]
    pub fn run_with(
        &self,
        name: &str,
        args: &Args,
        hidden: &[(usize, u64)],
        grid: [u32; 3],
        block: [u16; 3],
        threads: usize,
        services: &dyn Services,
    ) -> Result<Report, ExecError<FlatFault>> {
        let d = self.prepare(name, args, hidden, grid, block);
        let emu = Emulator::new(Config {
            threads,
            timeout: Some(Duration::from_secs(60)),
            ..Config::default()
        });
        emu.run(&d, &self.mem, &Dyn(services))
    }

    /// Runs `name` on `emu` (its configuration, scratch pool and decode cache).
    pub fn run_on(
        &self,
        emu: &Emulator,
        name: &str,
        args: &Args,
        grid: [u32; 3],
        block: [u16; 3],
    ) -> Result<Report, ExecError<FlatFault>> {
        let d = self.prepare(name, args, &[], grid, block);
        emu.run(&d, &self.mem, &NoServices)
    }

    /// Writes the kernarg segment and the packet of a dispatch of `name`, and returns it.
    pub fn prepare(
        &self,
        name: &str,
        args: &Args,
        hidden: &[(usize, u64)],
        grid: [u32; 3],
        block: [u16; 3],
    ) -> Dispatch {
        let kd_at = *self
            .symbols
            .get(&format!("{name}.kd"))
            .unwrap_or_else(|| panic!("no {name}.kd"));
        let mut descriptor = [0u8; 64];
        descriptor.copy_from_slice(&self.read(kd_at, 64));
        // Hidden arguments (code object v5) at the 8-aligned end of the explicit ones.
        let mut k = args.bytes.clone();
        k.resize(k.len().next_multiple_of(8), 0);
        let h = k.len();
        k.resize(h + 256, 0);
        for d in 0..3 {
            let count = grid[d].div_ceil(u32::from(block[d]));
            k[h + 4 * d..h + 4 * d + 4].copy_from_slice(&count.to_le_bytes());
            k[h + 12 + 2 * d..h + 14 + 2 * d].copy_from_slice(&block[d].to_le_bytes());
            let rem = (grid[d] % u32::from(block[d])) as u16;
            k[h + 18 + 2 * d..h + 20 + 2 * d].copy_from_slice(&rem.to_le_bytes());
        }
        let dims: u16 = if grid[2] > 1 {
            3
        } else if grid[1] > 1 {
            2
        } else {
            1
        };
        k[h + 64..h + 66].copy_from_slice(&dims.to_le_bytes());
        for &(off, v) in hidden {
            k[h + off..h + off + 8].copy_from_slice(&v.to_le_bytes());
        }
        self.mem.write_bytes(KERNARG, &k).unwrap();
        // The dispatch packet (code object v4 kernels read sizes from it).
        let mut p = [0u8; 64];
        p[2..4].copy_from_slice(&dims.to_le_bytes());
        for d in 0..3 {
            p[4 + 2 * d..6 + 2 * d].copy_from_slice(&block[d].to_le_bytes());
            p[12 + 4 * d..16 + 4 * d].copy_from_slice(&grid[d].to_le_bytes());
        }
        self.mem.write_bytes(PACKET, &p).unwrap();
        let group =
            u32::from_le_bytes([descriptor[0], descriptor[1], descriptor[2], descriptor[3]]);
        let private =
            u32::from_le_bytes([descriptor[4], descriptor[5], descriptor[6], descriptor[7]]);
        Dispatch {
            processor: "gfx1030",
            descriptor,
            descriptor_address: kd_at,
            grid,
            workgroup: block,
            kernarg_address: KERNARG,
            packet_address: PACKET,
            queue_address: 0,
            dispatch_id: 0,
            group_segment_size: group,
            private_segment_size: private,
            shared_aperture: 1 << 48,
            private_aperture: 2 << 48,
            compute_units: None,
        }
    }
}

/// Passes a `&dyn Services` where a sized one is expected.
pub struct Dyn<'a>(&'a dyn Services);

impl Services for Dyn<'_> {
    fn interrupt(&self, m0: u32) {
        self.0.interrupt(m0)
    }
    fn idle(&self) {
        self.0.idle()
    }
}

/// Explicit kernel arguments, each at its natural alignment.
#[derive(Default)]
pub struct Args {
    pub bytes: Vec<u8>,
}

impl Args {
    pub fn put(mut self, b: &[u8]) -> Self {
        self.bytes
            .resize(self.bytes.len().next_multiple_of(b.len()), 0);
        self.bytes.extend_from_slice(b);
        self
    }
    pub fn ptr(self, p: u64) -> Self {
        self.put(&p.to_le_bytes())
    }
    pub fn i32(self, v: i32) -> Self {
        self.put(&v.to_le_bytes())
    }
    pub fn f32(self, v: f32) -> Self {
        self.put(&v.to_le_bytes())
    }
}

pub fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: T is a plain number type here (f32, u32, i32, u64, i64): any bytes are valid to
    // read and the slice is fully initialised.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
        .to_vec()
}

pub fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
