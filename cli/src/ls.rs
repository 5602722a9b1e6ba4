//! `rocload ls FILE [--json]`: every bundle in FILE, in order, with its entries.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use rocload::container::{read_containers, Container, Located, MappedFile, ReadOptions};
use serde::Serialize;

use super::CliResult;

/// Arguments of `rocload ls`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A host ELF file, bundle, compressed bundle, section dump or code object.
    file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Listing {
    bundles: Vec<BundleRow>,
}

#[derive(Serialize)]
struct BundleRow {
    index: usize,
    offset: u64,
    section: Option<&'static str>,
    format: &'static str,
    ccob_version: Option<u16>,
    compression: Option<String>,
    compressed_size: Option<u64>,
    size: u64,
    hash: Option<String>,
    entries: Vec<EntryRow>,
}

#[derive(Serialize)]
struct EntryRow {
    id: String,
    offset: u64,
    size: u64,
}

fn row(located: &Located<'_>) -> Result<BundleRow, rocload::container::ContainerError> {
    let c = &located.container;
    let ccob = match c {
        Container::Compressed(c) => Some(*c.header()),
        _ => None,
    };
    Ok(BundleRow {
        index: located.index,
        offset: located.offset,
        section: located.section,
        format: c.format().name(),
        ccob_version: ccob.map(|h| h.version),
        compression: ccob.map(|h| h.compression.to_string()),
        compressed_size: ccob.map(|_| c.size()),
        size: c.uncompressed_size(),
        hash: ccob.map(|h| format!("{:#018x}", h.hash)),
        entries: located
            .entries()?
            .into_iter()
            .map(|e| EntryRow {
                id: e.id.into_owned(),
                offset: e.offset,
                size: e.size,
            })
            .collect(),
    })
}

/// Runs `rocload ls`.
pub fn run(args: Args, options: &ReadOptions) -> CliResult {
    let file = MappedFile::open(&args.file)?;
    let containers = read_containers(file.bytes(), options)?;
    super::verify_all(&containers, options)?;
    let rows = containers.iter().map(row).collect::<Result<Vec<_>, _>>()?;
    if args.json {
        super::print(&(serde_json::to_string_pretty(&Listing { bundles: rows })? + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    for b in &rows {
        let place = b.section.map(|s| format!(" in {s}")).unwrap_or_default();
        match (b.ccob_version, &b.compression, b.compressed_size) {
            (Some(v), Some(m), Some(cs)) => writeln!(
                text,
                "bundle {} at {:#x}{place}: ccob v{v} {m}, {cs} bytes compressed, {} inflated, {} entries",
                b.index,
                b.offset,
                b.size,
                b.entries.len()
            )?,
            _ => writeln!(text, "bundle {} at {:#x}{place}: {}, {} bytes, {} entries", b.index, b.offset, b.format, b.size, b.entries.len())?,
        }
        for e in &b.entries {
            writeln!(
                text,
                "  {:<48} {:>10} bytes at {:#x}",
                e.id, e.size, e.offset
            )?;
        }
    }
    super::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
