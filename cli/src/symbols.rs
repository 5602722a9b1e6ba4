//! `rocload symbols FILE [--target ID] [--bundle N] [--json]`: kernels, device functions,
//! variables and imports of a code object, or of every code-object entry of a fat binary.

use std::path::PathBuf;
use std::process::ExitCode;

use rocload::code_object::{symbols_report, CodeObject};
use rocload::container::{MappedFile, ReadOptions};
use serde::Serialize;

use super::{code_objects, CliResult};

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
    let selected = code_objects::select(
        &args.file,
        file.bytes(),
        args.target.as_deref(),
        args.bundle,
        options,
    )?;
    let mut reports = Vec::new();
    for s in &selected {
        let co = CodeObject::parse(&s.bytes)
            .map_err(|err| format!("bundle {}: {}: {err}", s.bundle, s.id))?;
        reports.push(symbols_report(&s.id, &co));
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
