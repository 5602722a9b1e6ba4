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
