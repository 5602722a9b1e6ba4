//! `rocload run [--tool LIB]... PROGRAM [ARGS]...`: runs an existing program with librocload.so
//! as its HIP runtime, unmodified.
//!
//! Programs and libraries (Debian's librocrand, librocsparse) are linked against
//! `libamdhip64.so.5`. A private directory holding `libamdhip64.so.{5,6}`, `libamdhip64.so` and
//! `librocload.so`, all links to librocload.so, goes first on `LD_LIBRARY_PATH`, so the dynamic
//! loader binds every one of them to rocload (librocload.so carries Debian's symbol versions,
//! so nothing warns). A program linked against both names gets one copy: the loader sees one
//! file. `--tool` libraries go to `ROCLOAD_TOOLS`. The exit status is passed through (a signal
//! becomes 128 + its number, as in a shell), and when the program never called the HIP runtime
//! the tool says so: it does not use HIP, or found another libamdhip64 first (`DT_RPATH`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::CliResult;
use rocload::runtime::config::{self, Config};

/// Names the directory provides, each a link to librocload.so.
const NAMES: [&str; 4] = [
    "libamdhip64.so.5",
    "libamdhip64.so.6",
    "libamdhip64.so",
    "librocload.so",
];

/// Arguments of `rocload run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A tool library to load into the program (its `rocload_tool_init` is called at the
    /// first HIP call); repeatable.
    #[arg(long = "tool", value_name = "LIB")]
    tools: Vec<PathBuf>,
    /// The librocload.so to use (default: next to this executable, then ../lib).
    #[arg(long, value_name = "PATH")]
    library: Option<PathBuf>,
    /// The program and its arguments.
    #[arg(
        value_name = "PROGRAM",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true
    )]
    command: Vec<OsString>,
}

/// Where librocload.so is: `--library`, next to this executable, or in `../lib`.
fn find_library(given: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = given {
        return p
            .canonicalize()
            .map_err(|e| format!("--library {}: {e}", p.display()));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [dir.join("librocload.so"), dir.join("../lib/librocload.so")];
    candidates
        .iter()
        .find_map(|c| c.canonicalize().ok())
        .ok_or_else(|| {
            format!(
                "librocload.so is not next to {} nor in ../lib; build it (cargo build) or pass --library",
                exe.display()
            )
        })
}

/// `NEW:OLD`, or `NEW` when `OLD` is unset or empty.
fn prepend(new: &Path, old: Option<OsString>) -> OsString {
    let mut value = OsString::from(new);
    if let Some(old) = old.filter(|o| !o.is_empty()) {
        value.push(":");
        value.push(old);
    }
    value
}

/// Runs `rocload run`.
pub fn run(args: Args) -> CliResult {
    let library = find_library(args.library.as_deref())?;
    let dir = tempfile::Builder::new()
        .prefix("rocload-run-")
        .tempdir()
        .map_err(|e| format!("cannot create a directory for the library links: {e}"))?;
    for name in NAMES {
        std::os::unix::fs::symlink(&library, dir.path().join(name))
            .map_err(|e| format!("linking {name} to {}: {e}", library.display()))?;
    }
    let marker = dir.path().join("used");
    let (program, rest) = args.command.split_first().ok_or("no program given")?;
    let mut command = std::process::Command::new(program);
    command
        .args(rest)
        .env(
            "LD_LIBRARY_PATH",
            prepend(dir.path(), std::env::var_os("LD_LIBRARY_PATH")),
        )
        .env(config::RUN_MARKER_ENV, &marker);
    if !args.tools.is_empty() {
        let mut tools = Vec::new();
        for t in &args.tools {
            let path = t
                .canonicalize()
                .map_err(|e| format!("--tool {}: {e}", t.display()))?;
            tools.push(path.into_os_string());
        }
        tools.extend(Config::global().tools.iter().map(OsString::from));
        command.env(config::TOOLS_ENV, tools.join(&OsString::from(":")));
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(program).display()))?;
    if !marker.exists() {
        eprintln!(
            "rocload run: {} never called the HIP runtime: it does not use HIP (no \
             libamdhip64 among its libraries, none loaded at run time), or it found another \
             libamdhip64 first (a DT_RPATH takes precedence over LD_LIBRARY_PATH)",
            Path::new(program).display()
        );
    }
    Ok(exit_code(status))
}

/// The program's exit status; a signal becomes 128 + its number, as in a shell.
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
