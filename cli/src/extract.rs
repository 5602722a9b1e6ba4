//! `rocload extract FILE --target ID [--bundle N] [-o OUT]`: one entry's bytes, inflating
//! only as far as that entry.

use std::path::PathBuf;
use std::process::ExitCode;

use rocload::container::{find_entry, read_containers, MappedFile, ReadOptions};

use super::CliResult;

/// Arguments of `rocload extract`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A host ELF file, bundle, compressed bundle, section dump or code object.
    file: PathBuf,
    /// A full entry id (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`) or a target id (`gfx90a:xnack-`).
    #[arg(long)]
    target: String,
    /// Take the entry from bundle N (as numbered by `rocload ls`); default: the first bundle holding it.
    #[arg(long)]
    bundle: Option<usize>,
    /// Output file; standard output if omitted.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
}

/// Runs `rocload extract`.
pub fn run(args: Args, options: &ReadOptions) -> CliResult {
    let file = MappedFile::open(&args.file)?;
    let containers = read_containers(file.bytes(), options)?;
    let (pos, entry) = find_entry(&containers, &args.target, args.bundle)?;
    let bytes = containers[pos].extract_with(entry, &options.limits)?;
    super::write_output(args.output.as_deref(), &bytes)?;
    Ok(ExitCode::SUCCESS)
}
