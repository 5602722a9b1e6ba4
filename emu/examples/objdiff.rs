//! Developer tool: decodes a raw `.text` dump and prints `address<TAB>text` per instruction,
//! in llvm-objdump's syntax, for diffing (`emu/tests/decode_corpus.rs` does this in the suite).
//!
//! Usage: objdiff TEXT_BIN BASE_ADDRESS

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&args[1]).expect("read");
    let base = u64::from_str_radix(args[2].trim_start_matches("0x"), 16).expect("base");
    let mut at = 0usize;
    while at + 4 <= bytes.len() {
        let address = base + at as u64;
        match rocload_emu::isa::decode(&bytes[at..], address) {
            Ok(inst) => {
                println!(
                    "{address:x}\t{}",
                    rocload_emu::isa::Printer {
                        inst: &inst,
                        address
                    }
                );
                at += inst.len as usize;
            }
            Err(e) => {
                println!("{address:x}\t<error: {e}>");
                at += 4;
            }
        }
    }
}
