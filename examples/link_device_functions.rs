//! A kernel code object calling device functions and reading a variable from two other code
//! objects, linked on the software agent; then the lookups an instrumentation tool makes:
//! device functions by (demangled) name, and any address back to symbol + offset.
//!
//! `cargo run --example link_device_functions`

use rocload::backend::SoftAgent;
use rocload::loader::{Linker, Module};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fixture = |name: &str| {
        format!(
            "{}/tests/fixtures/codeobj/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    };
    // Any order: the linker loads providers before their importers.
    let modules = [
        Module::from_file(fixture("kernels_user.co"))?,
        Module::from_file(fixture("devlib_math.co"))?,
        Module::from_file(fixture("devlib_data.co"))?,
    ];
    let agent = SoftAgent::new("gfx1030".parse()?).shared();
    let exe = Linker::new().link(&agent, &modules)?;
    for c in exe.code_objects() {
        println!(
            "{} loaded #{} at {:#x} ({} bytes) {}",
            c.module.source(),
            c.load_order,
            c.base,
            c.size,
            c.uri
        );
    }
    let mix = exe.symbol("dl::mix").ok_or("dl::mix not found")?; // raw, demangled or short name
    println!(
        "device function {} ({}) at {:#x}, {} bytes",
        mix.name,
        mix.demangled.as_deref().unwrap_or("-"),
        mix.address,
        mix.size
    );
    let kernel = exe.symbol("use_add.kd").ok_or("use_add not found")?;
    println!("kernel {} descriptor at {:#x}", kernel.name, kernel.address);
    let (symbol, offset) = exe.symbol_at(mix.address + 8).ok_or("no symbol there")?;
    println!("{:#x} is {}+{offset:#x}", mix.address + 8, symbol.name);
    Ok(())
}
