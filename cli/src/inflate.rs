//! `rocload inflate FILE [--bundle N] [-o OUT] [--verify]`: a compressed bundle's plain
//! bundle, inflated in one pass (what `clang-offload-bundler` does before any unbundling).

use std::path::PathBuf;
use std::process::ExitCode;

use rocload::container::{
    read_containers, Container, ContainerError, HashCheck, MappedFile, ReadOptions,
};

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
    // Streamed to the output in chunks, as `zstd -d` does: no buffer of the whole bundle.
    let result = match &args.output {
        Some(path) => {
            let file =
                std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
            // Chunks are 128 KiB: one write each, like zstd's.
            c.inflate_to(&mut &file)
        }
        // Standard output is line-buffered: go around that.
        None => c.inflate_to(&mut std::io::BufWriter::with_capacity(
            128 << 10,
            std::io::stdout().lock(),
        )),
    };
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(ContainerError::Write(e)) => Err(Box::new(e)),
        Err(e) => {
            if let Some(path) = &args.output {
                // A partial bundle is worse than none.
                let _ = std::fs::remove_file(path);
            }
            Err(Box::new(e.rebase(chosen.offset)))
        }
    }
}
