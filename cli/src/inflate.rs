//! `rocload inflate FILE [--bundle N] [-o OUT] [--verify]`: a compressed bundle's plain
//! bundle, inflated in one pass (what `clang-offload-bundler` does before any unbundling).

use std::path::PathBuf;
use std::process::ExitCode;

use rocload::container::{
    read_containers, CompressedBundle, Container, ContainerError, HashCheck, Located, MappedFile,
    ReadOptions,
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

/// The compressed bundle to inflate and its offset: bundle `wanted`, or the first compressed one. The error
/// says what the bundle is instead, and which bundles are compressed.
fn choose<'c, 'a>(
    containers: &'c [Located<'a>],
    wanted: Option<usize>,
) -> Result<(u64, &'c CompressedBundle<'a>), String> {
    // With its offset in the input, for errors.
    let compressed = |l: &'c Located<'a>| match &l.container {
        Container::Compressed(c) => Some((l.offset, c)),
        _ => None,
    };
    let what = |l: &Located<'_>| {
        let kind = match l.container {
            Container::Bundle(_) => "a plain (uncompressed) bundle",
            Container::CodeObject(_) => "a bare code object, not a bundle",
            Container::OffloadBinary(_) => "an LLVM OffloadBinary, not a compressed bundle",
            _ => "not a compressed bundle",
        };
        format!("bundle {} at {:#x} is {kind}", l.index, l.offset)
    };
    let Some(b) = wanted else {
        return containers.iter().find_map(compressed).ok_or_else(|| {
            let all: Vec<String> = containers.iter().map(what).collect();
            format!("nothing to inflate: {}", all.join("; "))
        });
    };
    let listed: Vec<String> = containers
        .iter()
        .filter(|l| compressed(l).is_some())
        .map(|l| format!("{} at {:#x}", l.index, l.offset))
        .collect();
    let which = if listed.is_empty() {
        "no bundle in it is compressed".to_string()
    } else {
        format!("compressed bundles: {}", listed.join(", "))
    };
    let l = containers.iter().find(|l| l.index == b).ok_or_else(|| {
        format!(
            "there is no bundle {b} (it has {}); {which}",
            containers.len()
        )
    })?;
    compressed(l).ok_or_else(|| format!("{}: there is nothing to inflate; {which}", what(l)))
}

/// Runs `rocload inflate`.
pub fn run(args: Args, options: &ReadOptions) -> CliResult {
    let file = MappedFile::open(&args.file)?;
    let mut options = options.clone();
    if args.no_verify {
        options.verify = HashCheck::Never;
    }
    let containers = read_containers(file.bytes(), &options)?;
    let (origin, c) = choose(&containers, args.bundle)
        .map_err(|why| format!("{}: {why}", args.file.display()))?;
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
            Err(Box::new(e.rebase(origin)))
        }
    }
}
