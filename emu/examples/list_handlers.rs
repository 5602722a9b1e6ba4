//! Prints every mnemonic the engine executes, one per line (`v_cmpx_*` share the `v_cmp_*`
//! handlers and are not listed). A maintenance aid for coverage counts against a corpus:
//! `cargo run -p rocload-emu --example list_handlers`.

use rocload_emu::exec::{ds, flow, salu, smem, valu, vmem};

fn main() {
    let mut names: Vec<&str> = [
        salu::TABLE,
        salu::EXTRA,
        flow::TABLE,
        valu::TABLE,
        valu::EXTRA,
        vmem::TABLE,
        vmem::EXTRA,
        ds::TABLE,
        smem::TABLE,
    ]
    .iter()
    .flat_map(|t| t.iter().map(|(k, _)| *k))
    .collect();
    names.sort_unstable();
    names.dedup();
    for n in names {
        println!("{n}");
    }
}
