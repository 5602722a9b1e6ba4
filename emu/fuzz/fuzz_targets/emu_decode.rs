//! Fuzz the gfx1030 decoder, printer and decode cache: no input may panic.
//! Run: cd emu/fuzz && cargo +nightly fuzz run emu_decode
#![no_main]
use libfuzzer_sys::fuzz_target;
use rocload_emu::cache::DecodeCache;
use rocload_emu::isa::disassemble;

fuzz_target!(|data: &[u8]| {
    for (_, res) in disassemble(data, 0x1000) {
        if let Ok(inst) = res {
            let _ = inst.to_string();
        }
    }
    let cache: DecodeCache = DecodeCache::new(data.to_vec(), 0x1000);
    let mut pc = 0x1000;
    for _ in 0..64 {
        match cache.block_at(pc) {
            Ok((_, b)) => pc = b.end,
            Err(_) => pc += 4,
        }
    }
});
