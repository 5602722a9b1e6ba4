//! Prints every operation the engine executes on gfx1030 (wave32), one mnemonic per line
//! (`v_cmpx_*` share the `v_cmp_*` handlers and are listed too). A maintenance aid for coverage
//! counts against a corpus: `cargo run -p rocload-emu --example list_handlers`.

use rocload_emu::family::rdna2::WAVE32;
use rocload_emu::isa::Op;

fn main() {
    for op in Op::ALL {
        if WAVE32.executes(op) {
            println!("{}", op.name());
        }
    }
}
