//! `rocload inflate FILE [--bundle N] [-o OUT] [--verify]`: a compressed bundle's plain
//! bundle, inflated in one pass (what `clang-offload-bundler` does before any unbundling).

use std::path::PathBuf;
use std::process::ExitCode;

use rocload::container::{read_containers, Container, HashCheck, MappedFile, ReadOptions};

use super::CliResult;

/// Arguments of `rocload inflate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A file holding at least one compressed bundle.
    file: PathBuf,
    /// Inflate bundle N (as numbered by `rocload ls`); default: the first compressed one.
    #[arg(long)]
    bundle: Option<usize>,
    /// Output file; standard output if omitted.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Accepted for old scripts: the hash is checked only with `--verify`.
    #[arg(long, hide = true)]
    no_verify: bool,
}

/// Runs `rocload inflate`.
pub fn run(args: Args, options: &ReadOptions) -> CliResult {
    let file = MappedFile::open(&args.file)?;
    let mut options = options.clone();
    if args.no_verify {
        options.verify = HashCheck::Never;
    }
    let containers = read_containers(file.bytes(), &options)?;
    let chosen = containers
        .iter()
        .find(|l| {
            matches!(l.container, Container::Compressed(_))
                && args.bundle.is_none_or(|b| b == l.index)
        })
        .ok_or("no such compressed bundle")?;
    let Container::Compressed(c) = &chosen.container else {
        return Err("no such compressed bundle".into());
    };
    let bytes = c.inflate().map_err(|e| e.rebase(chosen.offset))?;
    super::write_output(args.output.as_deref(), &bytes)?;
    Ok(ExitCode::SUCCESS)
}
