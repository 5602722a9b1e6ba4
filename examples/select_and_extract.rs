//! Lists every bundle of a fat binary, chooses the entry an agent should run with the
//! reason for every verdict, and extracts it (inflating no further than that entry).
//!
//! `cargo run --example select_and_extract -- [FILE] [AGENT]`
//! (defaults: tests/fixtures/hip/vadd.compressed.o, gfx90a:xnack+)

use rocload::container::{read_containers, MappedFile, ReadOptions};
use rocload::target::{select, AgentIsa, Policy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/hip/vadd.compressed.o"
        )
        .to_string()
    });
    let agent: AgentIsa = args.next().as_deref().unwrap_or("gfx90a:xnack+").parse()?;
    let file = MappedFile::open(&path)?; // mapped, not read
    for bundle in read_containers(file.bytes(), &ReadOptions::default())? {
        let entries = bundle.entries()?; // a compressed bundle inflates its table only
        println!(
            "bundle {} at {:#x} ({:?}): {} entries",
            bundle.index,
            bundle.offset,
            bundle.container.format(),
            entries.len()
        );
        let ids: Vec<&str> = entries.iter().map(|e| e.id.as_ref()).collect();
        let selection = select(&agent, &ids, Policy::Strict);
        for c in &selection.candidates {
            println!(
                "  {} {:<44} {}",
                if Some(c.index) == selection.chosen {
                    "*"
                } else {
                    " "
                },
                c.id,
                c.verdict
            );
        }
        match selection.chosen {
            Some(i) => println!(
                "  -> {} bytes of code object for {}",
                bundle.extract(i)?.len(),
                agent.isa_name()
            ),
            None => println!("  -> {}", selection.no_match_error()),
        }
    }
    Ok(())
}
