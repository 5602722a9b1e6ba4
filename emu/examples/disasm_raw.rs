//! Print the instructions of a raw code file: `disasm_raw FILE [BASE_ADDRESS_HEX]`.
//! A debugging aid for comparing with llvm-objdump; not a user-facing tool.

use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: disasm_raw FILE [BASE_ADDRESS_HEX]");
        std::process::exit(2);
    };
    let base = args
        .get(2)
        .map(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or(0))
        .unwrap_or(0);
    let code = std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (addr, res) in rocload_emu::isa::disassemble(&code, base) {
        let _ = match res {
            Ok(inst) => writeln!(out, "{addr:012X}: {inst}"),
            Err(e) => writeln!(out, "{addr:012X}: <{e}>"),
        };
    }
}
