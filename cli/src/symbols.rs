//! `rocload symbols FILE [--target ID] [--bundle N] [--json]`: kernels, device functions,
//! variables and imports of a code object, or of every code-object entry of a fat binary.

use std::path::PathBuf;
use std::process::ExitCode;

use rocload::code_object::{symbols_report, CodeObject};
use rocload::container::{read_containers, MappedFile, ReadOptions};
use rocload::target::entry_matches;
use serde::Serialize;

use super::CliResult;

/// Arguments of `rocload symbols`.
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
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    code_objects: Vec<rocload::code_object::SymbolsReport>,
}

/// Runs `rocload symbols`.
pub fn run(args: Args, options: &ReadOptions) -> CliResult {
    let file = MappedFile::open(&args.file)?;
    let containers = read_containers(file.bytes(), options)?;
    let mut reports = Vec::new();
    // Entries passed over, with why, for the error when no code object is found.
    let mut skipped = Vec::new();
    for l in containers
        .iter()
        .filter(|l| args.bundle.is_none_or(|b| b == l.index))
    {
        for (i, e) in l.entries()?.iter().enumerate() {
            let wanted = args
                .target
                .as_deref()
                .is_none_or(|t| entry_matches(&e.id, t));
            if !wanted {
                continue;
            }
            // Host entries and bitcode are not code objects.
            if e.size == 0 {
                skipped.push(format!("bundle {}: {} (empty)", l.index, e.id));
                continue;
            }
            let bytes = l.extract_with(i, &options.limits)?;
            if !bytes.starts_with(b"\x7fELF") {
                let what = if bytes.starts_with(b"BC\xc0\xde") {
                    "LLVM bitcode".to_string()
                } else {
                    format!("not ELF: starts with {:02x?}", &bytes[..bytes.len().min(4)])
                };
                skipped.push(format!("bundle {}: {} ({what})", l.index, e.id));
                continue;
            }
            let co = CodeObject::parse(&bytes)
                .map_err(|err| format!("bundle {}: {}: {err}", l.index, e.id))?;
            reports.push(symbols_report(&e.id, &co));
        }
    }
    if reports.is_empty() {
        let file = args.file.display();
        let seen = if skipped.is_empty() {
            String::new()
        } else {
            format!("; entries: {}", skipped.join(", "))
        };
        return Err(match (&args.target, args.bundle) {
            (Some(t), _) => format!("{file}: no code object entry matches {t:?}{seen}").into(),
            (None, Some(b)) => format!("{file}: no code object in bundle {b}{seen}").into(),
            (None, None) => format!(
                "{file}: no code object in {} bundle(s){seen}",
                containers.len()
            )
            .into(),
        });
    }
    if args.json {
        super::print(
            &(serde_json::to_string_pretty(&Report {
                code_objects: reports,
            })? + "\n"),
        )?;
    } else {
        super::print(
            &reports
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
