// `runtime::config` is the only reader of the environment in the workspace's libraries and
// programs: every other source file either reads nothing or one of a few named variables that
// are not rocload's settings (the search path a compiler is looked up in, the library path a
// child process is given). Tests, benchmarks and build scripts may read what they like.

use std::path::{Path, PathBuf};

/// Source trees of the products (library, C ABIs, tool, emulator, bindings).
const TREES: &[&str] = &[
    "src",
    "capi/src",
    "cli/src",
    "hsa-soft/src",
    "emu/src",
    "hsa-sys/src",
];
/// The one reader.
const READER: &str = "src/runtime/config.rs";
/// Reads outside the reader that are allowed: (file, the argument of the call).
const ALLOWED: &[(&str, &str)] = &[
    // hiprtc looks clang up in PATH, as a shell would.
    ("capi/src/hiprtc.rs", "\"PATH\""),
    // rocload run extends the child's library path, and finds the program as a shell would.
    ("cli/src/run.rs", "\"LD_LIBRARY_PATH\""),
    ("cli/src/run.rs", "\"PATH\""),
];
/// Functions that read the environment (`env::var`, `var_os`, `vars`, `vars_os`; libc's
/// `getenv`), called or passed as a function.
const READS: &[&str] = &["env::var", "getenv"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every environment read in `text`: (line number, the call's argument text).
fn reads(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for call in READS {
            let mut rest = code;
            while let Some(i) = rest.find(call) {
                let after = &rest[i + call.len()..];
                let name_end = after
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                let after = &after[name_end..];
                let arg = match after.strip_prefix('(') {
                    Some(args) => args.split(')').next().unwrap_or("").trim().to_owned(),
                    None => "(passed as a function)".to_owned(),
                };
                found.push((n + 1, arg));
                rest = after;
            }
        }
    }
    found
}

#[test]
fn no_file_but_the_configuration_reads_the_environment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for tree in TREES {
        rust_files(&root.join(tree), &mut files);
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut offenders = Vec::new();
    let mut reader_reads = 0;
    for file in &files {
        let relative = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue; // a unit-test module
        }
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests (at the end of a file, after `#[cfg(test)]`) may read what they like.
        let product = text.split("\n#[cfg(test)]").next().unwrap_or("");
        for (line, arg) in reads(product) {
            if relative == READER {
                reader_reads += 1;
            } else if !ALLOWED.iter().any(|&(f, a)| f == relative && a == arg) {
                offenders.push(format!("{relative}:{line}: reads {arg}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "environment read outside {READER}:\n{}",
        offenders.join("\n")
    );
    assert!(
        reader_reads > 0,
        "{READER} reads nothing: has the reader moved?"
    );
}

#[test]
fn the_scanner_sees_reads() {
    let text = "let a = std::env::var(\"ROCLOAD_X\");\n// std::env::var(\"IN_COMMENT\")\nlet b = std::env::var_os(NAME).and(libc::getenv(p));\nf(std::env::var_os);";
    let found = reads(text);
    assert_eq!(
        found,
        [
            (1, "\"ROCLOAD_X\"".to_owned()),
            (3, "NAME".to_owned()),
            (3, "p".to_owned()),
            (4, "(passed as a function)".to_owned())
        ]
    );
}

#[test]
fn every_variable_is_documented_in_the_readme() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let missing: Vec<&&str> = rocload::runtime::config::VARIABLES
        .iter()
        .filter(|v| !readme.contains(**v))
        .collect();
    assert!(missing.is_empty(), "README.md does not mention {missing:?}");
}
