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
    for l in containers
        .iter()
        .filter(|l| args.bundle.is_none_or(|b| b == l.index))
    {
        for (i, e) in l.entries()?.iter().enumerate() {
            let wanted = args
                .target
                .as_deref()
                .is_none_or(|t| entry_matches(&e.id, t));
            // Host entries and bitcode are not code objects.
            if !wanted || e.size == 0 {
                continue;
            }
            let bytes = l.extract(i)?;
            if !bytes.starts_with(b"\x7fELF") {
                continue;
            }
            let co = CodeObject::parse(&bytes).map_err(|err| format!("{}: {err}", e.id))?;
            reports.push(symbols_report(&e.id, &co));
        }
    }
    if reports.is_empty() {
        return Err(match &args.target {
            Some(t) => format!("no code object entry matches {t:?}").into(),
            None => "no code object in the file".into(),
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
