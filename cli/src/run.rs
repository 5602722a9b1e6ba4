//! `rocload run [--tool LIB]... [--hip N] PROGRAM [ARGS]...`: runs an existing program with
//! librocload.so as its HIP runtime, unmodified.
//!
//! Programs and libraries are linked against `libamdhip64.so.5` (HIP 5, Debian's rocRAND and
//! rocSPARSE), `.so.6` or `.so.7`, and `libhiprtc.so.N`; Python bindings open `libamdhip64.so`
//! and `libhiprtc.so`. A private directory holding every one of these names goes first on
//! `LD_LIBRARY_PATH`: each `.so.N` is a link to rocload's thin library of that soname (built
//! next to librocload.so), the bare names link to generation `--hip` (default 7), and
//! `librocload.so` to the runtime itself, so every name binds to one runtime. `--tool`
//! libraries go to `ROCLOAD_TOOLS`. The exit status is passed through (a signal becomes 128 +
//! its number, as in a shell). Afterwards the tool says what happened when the program never
//! called the runtime: which HIP library it loaded, or that it loaded none (and which HIP
//! sonames its ELF file asks for that rocload does not provide).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::CliResult;
use rocload::runtime::config::{self, Config};

/// The sonames the directory provides, each a link to the thin library of that name.
const SONAMES: [&str; 6] = [
    "libamdhip64.so.5",
    "libamdhip64.so.6",
    "libamdhip64.so.7",
    "libhiprtc.so.5",
    "libhiprtc.so.6",
    "libhiprtc.so.7",
];

/// Arguments of `rocload run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A tool library to load into the program (its `rocload_tool_init` is called at the
    /// first HIP call); repeatable.
    #[arg(long = "tool", value_name = "LIB")]
    tools: Vec<PathBuf>,
    /// The librocload.so to use (default: next to this executable, then ../lib); the thin
    /// sonames are taken from beside it.
    #[arg(long, value_name = "PATH")]
    library: Option<PathBuf>,
    /// The HIP generation the bare names `libamdhip64.so` and `libhiprtc.so` stand for (what
    /// Python bindings open): 5, 6 or 7.
    #[arg(long = "hip", value_name = "N", default_value_t = 7, value_parser = clap::value_parser!(u8).range(5..=7))]
    hip: u8,
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
    let link = |name: &str, target: &Path| {
        std::os::unix::fs::symlink(target, dir.path().join(name))
            .map_err(|e| format!("linking {name} to {}: {e}", target.display()))
    };
    link("librocload.so", &library)?;
    let beside = library.parent().unwrap_or(Path::new("."));
    for soname in SONAMES {
        let thin = beside.join(soname);
        if !thin.is_file() {
            return Err(format!(
                "{} is missing (cargo build makes it next to librocload.so; building it needs \
                 a C compiler)",
                thin.display()
            )
            .into());
        }
        link(soname, &thin)?;
    }
    link(
        "libamdhip64.so",
        &beside.join(format!("libamdhip64.so.{}", args.hip)),
    )?;
    link(
        "libhiprtc.so",
        &beside.join(format!("libhiprtc.so.{}", args.hip)),
    )?;
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
    let seen = std::fs::read_to_string(&marker).unwrap_or_default();
    if let Some(diagnosis) = diagnose(Path::new(program), &seen) {
        eprintln!("rocload run: {diagnosis}");
    }
    Ok(exit_code(status))
}

/// What to tell the user when the program never called the runtime (`None` when it did).
/// `seen` is the marker file: `loaded <soname>` lines from the thin libraries' constructors,
/// `called` from the first HIP call.
fn diagnose(program: &Path, seen: &str) -> Option<String> {
    if seen.lines().any(|l| l == "called") {
        return None;
    }
    let loaded: Vec<&str> = seen
        .lines()
        .filter_map(|l| l.strip_prefix("loaded "))
        .collect();
    let shown = program.display();
    if !loaded.is_empty() {
        return Some(format!(
            "{shown} loaded {} but never called the HIP runtime (if it stopped early, what \
             it printed above says why: often another ROCm library it needs is not installed)",
            loaded.join(", ")
        ));
    }
    let wanted = hip_sonames_needed(program);
    let unknown: Vec<&String> = wanted
        .iter()
        .filter(|n| !SONAMES.contains(&n.as_str()))
        .collect();
    Some(if !unknown.is_empty() {
        format!(
            "{shown} needs {}, a HIP runtime soname rocload does not provide ({} are)",
            unknown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            SONAMES.join(", ")
        )
    } else if !wanted.is_empty() {
        format!(
            "{shown} needs {} but never loaded it from rocload's directory: it found another \
             copy first (a DT_RPATH takes precedence over LD_LIBRARY_PATH), or the dynamic \
             loader stopped before (see its message above)",
            wanted.join(", ")
        )
    } else {
        format!(
            "{shown} never loaded a HIP runtime library (none of {} or the bare \
             libamdhip64.so / libhiprtc.so): it does not use HIP, or a library it opens at run \
             time failed to load first (see the messages above)",
            SONAMES.join(", ")
        )
    })
}

/// The HIP sonames (`libamdhip64*`, `libhiprtc*`) `program`'s ELF file lists as needed
/// (`DT_NEEDED`); empty when it cannot be read (a script, a missing file).
fn hip_sonames_needed(program: &Path) -> Vec<String> {
    let path = if program.components().count() > 1 {
        program.to_path_buf()
    } else {
        match which(program) {
            Some(p) => p,
            None => return Vec::new(),
        }
    };
    let Ok(file) = rocload::container::MappedFile::open(&path) else {
        return Vec::new();
    };
    let Ok(needed) = rocload::elf::needed_libraries(file.bytes()) else {
        return Vec::new();
    };
    needed
        .into_iter()
        .filter(|n| n.starts_with("libamdhip64") || n.starts_with("libhiprtc"))
        .collect()
}

/// `name` looked up in `PATH`, as the shell would.
fn which(name: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
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
