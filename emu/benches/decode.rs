//! Decode throughput on a real code object's `.text` (the rocrand gfx1030
//! object of the corpus built by `scripts/emu-corpus.sh`, or the file named by
//! `ROCLOAD_EMU_BENCH_OBJECT`). Reports instructions per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rocload_emu::isa::decode;
use std::path::PathBuf;

/// `.text` bytes and address of a little-endian ELF64 file, if it has one.
fn elf_text(data: &[u8]) -> Option<(Vec<u8>, u64)> {
    let u16_at = |o: usize| Some(u16::from_le_bytes(data.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(data.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(data.get(o..o + 8)?.try_into().ok()?));
    if data.get(..4)? != b"\x7fELF" {
        return None;
    }
    let shoff = u64_at(0x28)? as usize;
    let shentsize = u16_at(0x3a)? as usize;
    let shnum = u16_at(0x3c)? as usize;
    let shstrndx = u16_at(0x3e)? as usize;
    let sh = |i: usize| shoff + i * shentsize;
    let strtab = u64_at(sh(shstrndx) + 0x18)? as usize;
    for i in 0..shnum {
        let name = u32_at(sh(i))? as usize;
        let n = data.get(strtab + name..strtab + name + 6)?;
        if n == b".text\0" {
            let addr = u64_at(sh(i) + 0x10)?;
            let off = u64_at(sh(i) + 0x18)? as usize;
            let size = u64_at(sh(i) + 0x20)? as usize;
            return Some((data.get(off..off + size)?.to_vec(), addr));
        }
    }
    None
}

fn bench(c: &mut Criterion) {
    let path = std::env::var_os("ROCLOAD_EMU_BENCH_OBJECT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/emu-corpus/rocrand/bundle0.co")
        });
    let Some((text, addr)) = std::fs::read(&path).ok().and_then(|d| elf_text(&d)) else {
        eprintln!(
            "SKIPPED: no code object at {} (run scripts/emu-corpus.sh)",
            path.display()
        );
        return;
    };
    // Instruction boundaries first, so the benchmark measures decoding only.
    let mut offsets = Vec::new();
    let mut off = 0;
    while off + 4 <= text.len() {
        offsets.push(off);
        off += decode(&text[off..], addr + off as u64)
            .map(|i| i.len as usize)
            .unwrap_or(4);
    }
    eprintln!("{}: {} instructions", path.display(), offsets.len());
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(offsets.len() as u64));
    g.bench_function("gfx1030_text", |b| {
        b.iter(|| {
            let mut n = 0u32;
            for &o in &offsets {
                if let Ok(i) = decode(&text[o..], addr + o as u64) {
                    n = n.wrapping_add(i.op as u32);
                }
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
