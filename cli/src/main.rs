//! The `rocload` command-line tool: one file per subcommand. Errors go to stderr with exit status 1;
//! usage errors exit with 2 (clap's convention).

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rocload::container::{HashCheck, ReadOptions};

mod agents;
mod code_objects;
mod disasm;
mod extract;
mod inflate;
mod load;
mod ls;
mod run;
mod select;
mod symbols;

/// Loads AMD GPU code the way a HIP program needs it.
#[derive(Parser, Debug)]
#[command(name = "rocload", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Largest entry extracted into memory, in bytes (suffixes K, M, G). Default:
    /// `ROCLOAD_MAX_ENTRY_SIZE`, else 256M.
    #[arg(long, global = true, value_name = "BYTES", value_parser = parse_size_arg)]
    max_entry_size: Option<u64>,
    /// Check the MD5 hash of every compressed bundle read, inflating all of it (default:
    /// `ROCLOAD_VERIFY`, else off, as in LLVM).
    #[arg(long, global = true)]
    verify: bool,
}

fn parse_size_arg(text: &str) -> Result<u64, String> {
    rocload::runtime::config::parse_size(text)
        .ok_or_else(|| format!("{text:?} is not a byte count (e.g. 268435456, 512M, 2G)"))
}

/// Container-reading options: the environment's (`ROCLOAD_MAX_ENTRY_SIZE`,
/// `ROCLOAD_VERIFY`), then the command line's.
fn read_options(cli: &Cli) -> Result<ReadOptions, Box<dyn std::error::Error>> {
    let mut options = rocload::runtime::config::Config::global().read_options()?;
    if let Some(limit) = cli.max_entry_size {
        options.limits.max_entry_size = limit;
    }
    if cli.verify {
        options.verify = HashCheck::Always;
    }
    Ok(options)
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List every bundle in FILE, in order, with its entries.
    Ls(ls::Args),
    /// Write one entry's bytes, identical to `clang-offload-bundler -unbundle`.
    Extract(extract::Args),
    /// Inflate a compressed bundle into the plain bundle it holds.
    Inflate(inflate::Args),
    /// Load code objects or fat binaries into one executable on the software agent (always:
    /// the loader is inspected without a GPU, so `ROCLOAD_BACKEND` does not apply).
    Load(load::Args),
    /// Choose, for every bundle, the entry an agent should run, explaining every verdict.
    Select(select::Args),
    /// Kernels, device functions, variables and imports of code objects.
    Symbols(symbols::Args),
    /// The instructions of a code object, or of one kernel or device function, as the
    /// emulator decodes them (llvm-objdump's syntax).
    Disasm(disasm::Args),
    /// The agents code can be loaded on.
    Agents(agents::Args),
    /// Run an existing HIP program with rocload as its HIP runtime (libamdhip64.so.5).
    Run(run::Args),
}

/// Parses arguments and runs the chosen subcommand.
fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse();
    let result = read_options(&cli).and_then(|options| match cli.command {
        Command::Ls(args) => ls::run(args, &options),
        Command::Extract(args) => extract::run(args, &options),
        Command::Inflate(args) => inflate::run(args, &options),
        Command::Load(args) => load::run(args, &options),
        Command::Select(args) => select::run(args, &options),
        Command::Symbols(args) => symbols::run(args, &options),
        Command::Disasm(args) => disasm::run(args, &options),
        Command::Agents(args) => agents::run(args),
        Command::Run(args) => run::run(args),
    });
    match result {
        Ok(code) => code,
        // A closed pipe (`rocload ls F | head`) is the reader's choice, not a failure.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rocload: {e}");
            ExitCode::from(1)
        }
    }
}

/// Logs go to stderr, filtered by `ROCLOAD_LOG` (e.g. `debug`); nothing is printed without it.
fn init_logging() {
    if let Some(filter) = &rocload::runtime::config::Config::global().log {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init();
    }
}

/// With `--verify` (or `ROCLOAD_VERIFY=1`), checks every compressed bundle's size and MD5
/// before anything is listed or chosen (`ls`, `select`: they inflate no more than the entry
/// tables otherwise). The error names the bundle.
pub fn verify_all(
    containers: &[rocload::container::Located<'_>],
    options: &ReadOptions,
) -> Result<(), Box<dyn std::error::Error>> {
    if options.verify != HashCheck::Always {
        return Ok(());
    }
    for l in containers {
        l.verify()
            .map_err(|e| format!("bundle {} at {:#x}: {e}", l.index, l.offset))?;
    }
    Ok(())
}

/// Errors of a subcommand: anything displayable, reported as `rocload: <message>`.
pub type CliResult = Result<ExitCode, Box<dyn std::error::Error>>;

/// Writes `text` to standard output in one piece (errors, such as a closed pipe, are returned).
pub fn print(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Writes `bytes` to `output`, or to standard output when it is `None`.
pub fn write_output(
    output: Option<&std::path::Path>,
    bytes: &[u8],
) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write;
    match output {
        Some(path) => {
            std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?
        }
        None => std::io::stdout().lock().write_all(bytes)?,
    }
    Ok(())
}
