//! Shared helpers for integration tests: fixture paths and reference tools.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `tests/fixtures/<rel>`.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Reads a fixture.
pub fn read(rel: &str) -> Vec<u8> {
    std::fs::read(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// An LLVM 19 tool, or `None` (printing why) when it is missing outside CI. In CI (env `CI`
/// set) a missing tool fails the test: CI installs them (scripts/setup.sh).
pub fn llvm_tool(name: &str) -> Option<PathBuf> {
    let path = Path::new("/usr/lib/llvm-19/bin").join(name);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{name} is missing but CI is set: run scripts/setup.sh");
    }
    eprintln!(
        "skipped: {} not installed (scripts/setup.sh installs it)",
        path.display()
    );
    None
}

/// Hex MD5 of `data`.
pub fn md5_hex(data: &[u8]) -> String {
    use md5::{Digest, Md5};
    Md5::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An artifact of another workspace member in `target/<profile>/` (the `rocload` binary,
/// `librocload.so`): cargo does not build those for this package's tests, so the test
/// command (`scripts/test.sh`) runs `cargo build --workspace` first.
pub fn built(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test> -> target/<profile>/<name>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test executable lives in target/<profile>/deps");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built: run `cargo build --workspace` first (scripts/test.sh does)",
        path.display()
    );
    path
}

/// The `rocload` command-line tool of this build.
pub fn rocload_bin() -> PathBuf {
    built("rocload")
}

/// A program on `PATH` (python3, prlimit, ...), or `None` (printing why) when it is missing
/// outside CI; in CI a missing program fails the test.
pub fn system_tool(name: &str, package: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!("{name} is missing but CI is set: install {package}");
        }
        eprintln!("skipped: {name} not found on PATH (install {package})");
    }
    found
}

/// Builds the named groups of `tests/hip_programs/build.sh` into `out` against this build's
/// librocload.so; `None` (printing why) when the compiler or HIP headers are missing outside CI.
pub fn build_c_programs(out: &Path, groups: &[&str]) -> Option<()> {
    llvm_tool("clang")?;
    let lib = built("librocload.so");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hip_programs/build.sh");
    let result = std::process::Command::new("bash")
        .arg(&script)
        .arg(out)
        .arg(lib.parent().expect("target dir"))
        .args(groups)
        .output()
        .expect("run build.sh");
    if result.status.code() == Some(3) && std::env::var_os("CI").is_none() {
        eprintln!(
            "skipped: {}",
            String::from_utf8_lossy(&result.stderr).trim()
        );
        return None;
    }
    assert!(
        result.status.success(),
        "build.sh {groups:?} failed:\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    Some(())
}

/// What a program run with a deadline did.
#[allow(dead_code)]
pub struct Finished {
    /// Whether it exited with status 0 (false when it was killed at the deadline).
    pub success: bool,
    /// Whether it ran past the deadline and was killed.
    pub timed_out: bool,
    /// How long it ran.
    pub elapsed: std::time::Duration,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

/// Runs `cmd` with its output captured, killing it after `deadline`. Both pipes are drained
/// while it runs (a program that writes more than a pipe holds, such as many fault reports,
/// would otherwise block in write() until the deadline).
#[allow(dead_code)]
pub fn run_with_deadline(
    cmd: &mut std::process::Command,
    deadline: std::time::Duration,
) -> Finished {
    use std::io::Read;
    use std::process::Stdio;
    let start = std::time::Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            timed_out = true;
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Finished {
        success: status.is_some_and(|s| s.success()),
        timed_out,
        elapsed: start.elapsed(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// The caller's `LD_LIBRARY_PATH` without the directories of this build (`target/<profile>`
/// and below), which `cargo test` puts in front: `target/<profile>` holds `librocload.so` under
/// HIP's names (`libamdhip64.so.5`), so a program linked against AMD's HIP runtime run from a
/// test would load rocload's instead. `None` when nothing is left.
pub fn library_path_outside_target() -> Option<std::ffi::OsString> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<test> -> target
    let target = exe.parent()?.parent()?.parent()?.to_path_buf();
    let kept: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|d| !d.as_os_str().is_empty() && !d.starts_with(&target))
        .collect();
    if kept.is_empty() {
        return None;
    }
    std::env::join_paths(kept).ok()
}

/// Makes `cmd` load AMD's HIP runtime, not this build's `libamdhip64.so.5` (see
/// [`library_path_outside_target`]).
pub fn use_system_hip(cmd: &mut std::process::Command) {
    match library_path_outside_target() {
        Some(p) => cmd.env("LD_LIBRARY_PATH", p),
        None => cmd.env_remove("LD_LIBRARY_PATH"),
    };
}
