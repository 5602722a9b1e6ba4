//! `rocload disasm FILE [--target ID] [--bundle N] [--kernel NAME] [--demangle]`: the
//! instructions of a code object's `.text` as the emulator decodes them, one per line with its
//! address and words, in llvm-objdump's syntax, with a label at every kernel and device
//! function. `--kernel` narrows the listing to one kernel or device function, named raw or
//! demangled.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use rocload::code_object::{demangle, CodeObject};
use rocload::container::{MappedFile, ReadOptions};
use rocload_emu::isa::{for_processor, Isa};

use super::{code_objects, CliResult};

/// Arguments of `rocload disasm`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A code object, or anything holding bundles.
    file: PathBuf,
    /// Only the entry with this id or target id.
    #[arg(long)]
    target: Option<String>,
    /// Only bundle N (as numbered by `rocload ls`).
    #[arg(long)]
    bundle: Option<usize>,
    /// Only this kernel or device function: its raw name, its demangled name, or the
    /// demangled name without parameters (`rotate` for `rotate(int*, int)`, `axpy<float>`
    /// for `void axpy<float>(float, float*)`).
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// Print labels demangled, as `llvm-objdump -C` does.
    #[arg(long)]
    demangle: bool,
}

/// A kernel's code or a device function: where it starts and how long it is.
struct Function<'a> {
    name: &'a str,
    address: u64,
    size: u64,
}

/// Runs `rocload disasm`.
pub fn run(args: Args, options: &ReadOptions) -> CliResult {
    let file = MappedFile::open(&args.file)?;
    let selected = code_objects::select(
        &args.file,
        file.bytes(),
        args.target.as_deref(),
        args.bundle,
        options,
    )?;
    let several = selected.len() > 1;
    let mut found = false;
    let mut out = String::new();
    for s in &selected {
        let what = format!("bundle {}: {}", s.bundle, s.id);
        let co = CodeObject::parse(&s.bytes).map_err(|e| format!("{what}: {e}"))?;
        let processor = co.target().target.processor();
        // The decoder knows RDNA2 (gfx103x, which share one instruction set), CDNA2 (gfx90a)
        // and CDNA3 (gfx942).
        let Some(isa) = for_processor(processor.name()) else {
            let refusal = format!(
                "{what}: {} code is not decoded (the emulator's decoder knows gfx103x, gfx90a \
                 and gfx942)",
                processor.name()
            );
            if several {
                writeln!(out, "; {refusal}\n")?;
                continue;
            }
            return Err(refusal.into());
        };
        let functions = functions(&co);
        let wanted: Vec<&Function<'_>> = match &args.kernel {
            Some(name) => functions.iter().filter(|f| names(f.name, name)).collect(),
            None => functions.iter().collect(),
        };
        if args.kernel.is_some() && wanted.is_empty() {
            continue;
        }
        found = true;
        let text = co
            .section_by_name(".text")
            .ok_or_else(|| format!("{what}: no .text section"))?;
        let bytes = co
            .data()
            .get(text.offset as usize..)
            .and_then(|b| b.get(..text.size as usize))
            .ok_or_else(|| format!("{what}: .text lies outside the file"))?;
        writeln!(out, "; {what}")?;
        let ranges: Vec<(u64, u64)> = match &args.kernel {
            Some(_) => wanted
                .iter()
                .map(|f| (f.address, f.address.saturating_add(f.size)))
                .collect(),
            None => vec![(text.addr, text.addr.saturating_add(text.size))],
        };
        for (start, end) in ranges {
            let Some(code) = start
                .checked_sub(text.addr)
                .and_then(|o| bytes.get(o as usize..))
                .map(|b| &b[..b.len().min(end.saturating_sub(start) as usize)])
            else {
                return Err(format!("{what}: code at {start:#x} lies outside .text").into());
            };
            list(&mut out, isa, code, start, &functions, args.demangle)?;
        }
    }
    if !found {
        let name = args.kernel.as_deref().unwrap_or_default();
        return Err(format!(
            "{}: no kernel or device function named {name:?} (rocload symbols lists them)",
            args.file.display()
        )
        .into());
    }
    super::print(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Kernels' code symbols and device functions, by address.
fn functions<'a>(co: &CodeObject<'a>) -> Vec<Function<'a>> {
    let mut v: Vec<Function<'a>> = co
        .kernels()
        .iter()
        .filter_map(|k| k.code_symbol.as_ref())
        .chain(co.functions())
        .map(|s| Function {
            name: s.name,
            address: s.value,
            size: s.size,
        })
        .collect();
    v.sort_by_key(|f| f.address);
    v
}

/// Whether `wanted` names `raw`: raw, demangled, or demangled without its parameters (and
/// without the return type that templates' demangled names begin with).
fn names(raw: &str, wanted: &str) -> bool {
    raw == wanted
        || demangle(raw).is_some_and(|d| {
            d == wanted
                || d.split_once('(').is_some_and(|(stem, _)| {
                    stem == wanted || stem.strip_suffix(wanted).is_some_and(|r| r.ends_with(' '))
                })
        })
}

/// One line per instruction of `code` (at `address`), with labels where functions start.
/// Runs of eight or more zero bytes (padding) print as `...`, as llvm-objdump prints them.
fn list(
    out: &mut String,
    isa: &'static Isa,
    code: &[u8],
    address: u64,
    functions: &[Function<'_>],
    demangled: bool,
) -> std::fmt::Result {
    let mut offset = 0;
    while offset + 4 <= code.len() {
        let at = address + offset as u64;
        for f in functions.iter().filter(|f| f.address == at) {
            let name = match demangled.then(|| demangle(f.name)).flatten() {
                Some(d) => d,
                None => f.name.to_string(),
            };
            writeln!(out, "\n{at:016x} <{name}>:")?;
        }
        let zeros = code[offset..].iter().take_while(|&&b| b == 0).count();
        if zeros >= 8 {
            writeln!(out, "\t\t...")?;
            offset += zeros & !3;
            continue;
        }
        let (text, len) = match isa.decode(&code[offset..], at) {
            Ok(inst) => (inst.to_string(), usize::from(inst.len).max(4)),
            Err(e) => (format!("; {e}"), 4),
        };
        let words = code[offset..(offset + len).min(code.len())]
            .chunks_exact(4)
            .map(|w| format!("{:08X}", u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
            .collect::<Vec<_>>()
            .join(" ");
        writeln!(out, "\t{text:<58} // {at:012X}: {words}")?;
        offset += len;
    }
    Ok(())
}
