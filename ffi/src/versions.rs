//! Symbol versions from data: which version node each exported name belongs to, and the linker
//! script that defines the nodes. A library's build script reads its tables
//! ([`VersionTable::parse`]), writes the merged table and the script to `OUT_DIR`
//! ([`build::configure`]); the [`export`](crate::export) attribute looks each entry point up
//! in the merged table when the crate compiles, and places a `.symver` directive beside it.
//! No source text is scanned: what a library exports at which version is data (for
//! `librocload.so`, the names and nodes of AMD's `libamdhip64` releases), and adding a node or
//! a name is an edit of that data.
//!
//! Table format, one rule per line: `NAME<TAB>NODE`. `NAME` is an exact symbol (C or mangled
//! C++) or a prefix ending in `*` (`rocload_*`, or `*` for every other name). An exact rule
//! beats a prefix, and a longer prefix a shorter one; the first exact rule for a name wins (as
//! in a linker version script). `#` starts a comment; blank lines are skipped. Nodes are
//! chained in version order within their family (`hip_4.3` inherits `hip_4.2`), and families
//! in order of first appearance, as AMD's scripts chain them.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// File name of the merged table in `OUT_DIR`, which the `export` attribute reads.
pub const TABLE_FILE: &str = "symbol-versions.tsv";
/// File name of the linker script in `OUT_DIR`.
pub const SCRIPT_FILE: &str = "symbol-versions.map";
/// The `cfg` set when versions are written (the linker is lld on ELF x86-64).
pub const CFG: &str = "rocload_symver";

/// Which version node each name belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionTable {
    exact: BTreeMap<String, String>,
    /// (prefix, node), longest prefix first.
    prefixes: Vec<(String, String)>,
    /// Every node, in the order they are chained.
    nodes: Vec<String>,
}

/// A line of a table that is not a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    /// Where: the table's name and line number.
    pub place: String,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.place, self.reason)
    }
}

impl std::error::Error for TableError {}

impl VersionTable {
    /// An empty table.
    pub fn new() -> VersionTable {
        VersionTable::default()
    }

    /// Adds the rules of `text` (named `source` in errors) after those already read.
    ///
    /// # Errors
    /// [`TableError`] for a line that is not `NAME<TAB>NODE` or names an invalid node.
    pub fn parse(&mut self, source: &str, text: &str) -> Result<(), TableError> {
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let place = || format!("{source}:{}", n + 1);
            let mut fields = line.split('\t');
            let (Some(name), Some(node)) = (fields.next(), fields.next()) else {
                return Err(TableError {
                    place: place(),
                    reason: format!("expected NAME<TAB>NODE, found {line:?}"),
                });
            };
            let (name, node) = (name.trim(), node.trim());
            if name.is_empty() || !valid_node(node) {
                return Err(TableError {
                    place: place(),
                    reason: format!("invalid rule {name:?} -> {node:?}"),
                });
            }
            if !self.nodes.iter().any(|n| n == node) {
                self.nodes.push(node.to_owned());
            }
            match name.strip_suffix('*') {
                Some(prefix) => {
                    if !self.prefixes.iter().any(|(p, _)| p == prefix) {
                        self.prefixes.push((prefix.to_owned(), node.to_owned()));
                    }
                }
                None => {
                    self.exact
                        .entry(name.to_owned())
                        .or_insert_with(|| node.to_owned());
                }
            }
        }
        self.prefixes.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        self.order_nodes();
        Ok(())
    }

    /// Families in order of first appearance, each in version order.
    fn order_nodes(&mut self) {
        let mut families: Vec<&str> = Vec::new();
        for node in &self.nodes {
            let family = family_of(node);
            if !families.contains(&family) {
                families.push(family);
            }
        }
        let rank = |node: &String| {
            let family = families.iter().position(|f| *f == family_of(node));
            (family, version_key(node))
        };
        let mut nodes = self.nodes.clone();
        nodes.sort_by_key(rank);
        self.nodes = nodes;
    }

    /// The node `name` belongs to, by the rules above.
    pub fn node_of(&self, name: &str) -> Option<&str> {
        if let Some(node) = self.exact.get(name) {
            return Some(node);
        }
        self.prefixes
            .iter()
            .find(|(p, _)| name.starts_with(p.as_str()))
            .map(|(_, n)| n.as_str())
    }

    /// Every node, in chain order.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// The exact names and their nodes.
    pub fn names(&self) -> impl Iterator<Item = (&str, &str)> {
        self.exact.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The table as one file of rules (what [`TABLE_FILE`] holds), exact names first.
    pub fn to_text(&self) -> String {
        let mut text =
            String::from("# Merged symbol-version rules, generated by the build script.\n");
        for (name, node) in &self.exact {
            let _ = writeln!(text, "{name}\t{node}");
        }
        for (prefix, node) in &self.prefixes {
            let _ = writeln!(text, "{prefix}*\t{node}");
        }
        text
    }

    /// A linker version script defining every node, each inheriting the one before. The nodes
    /// are empty: the `.symver` directives beside the entry points put the symbols in them,
    /// because rustc passes its own anonymous version script for a cdylib, and a linker cannot
    /// combine an anonymous script with named nodes that list symbols.
    pub fn linker_script(&self) -> String {
        let mut script = String::new();
        let mut previous: Option<&str> = None;
        for node in &self.nodes {
            let _ = match previous {
                None => writeln!(script, "{node} {{ }};"),
                Some(p) => writeln!(script, "{node} {{ }} {p};"),
            };
            previous = Some(node);
        }
        script
    }
}

/// A node name a linker script accepts: letters, digits, `_` and `.`.
fn valid_node(node: &str) -> bool {
    !node.is_empty()
        && node
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// `hip` of `hip_4.10`, `ROCLOAD` of `ROCLOAD_0.1`, `ROCR` of `ROCR_1`.
fn family_of(node: &str) -> &str {
    node.rsplit_once('_').map_or(node, |(f, _)| f)
}

/// Orders `hip_4.10` after `hip_4.9`.
fn version_key(node: &str) -> Vec<u64> {
    node.rsplit_once('_')
        .map_or("", |(_, v)| v)
        .split('.')
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

/// What a build script of a library with versioned symbols does.
pub mod build {
    use std::path::{Path, PathBuf};

    use super::{VersionTable, CFG, SCRIPT_FILE, TABLE_FILE};

    /// Reads the tables `tables` (paths relative to the crate), writes the merged table and
    /// the linker script to `OUT_DIR`, and tells cargo to link the cdylib as `soname` with that
    /// script through lld, and to set `cfg(rocload_symver)` so the `.symver` directives are
    /// emitted. Without lld the library is linked unversioned and the build says so.
    ///
    /// # Panics
    /// When a table cannot be read or parsed (a build script reports by panicking).
    pub fn configure(tables: &[&str], soname: &str) -> VersionTable {
        println!("cargo:rustc-check-cfg=cfg({CFG})");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
        let mut table = VersionTable::new();
        for path in tables {
            println!("cargo:rerun-if-changed={path}");
            let text =
                std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
            table.parse(path, &text).unwrap_or_else(|e| panic!("{e}"));
        }
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        write(&out.join(TABLE_FILE), &table.to_text());
        let script = out.join(SCRIPT_FILE);
        write(&script, &table.linker_script());
        match use_lld(&out) {
            Ok(()) => {
                println!("cargo:rustc-cfg={CFG}");
                println!(
                    "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
                    script.display()
                );
            }
            Err(why) => println!(
                "cargo:warning={soname} is built without symbol versions ({why}); programs \
                 linked against the library it stands in for will not bind to it"
            ),
        }
        table
    }

    fn write(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }

    /// Links the cdylib with lld: GNU ld refuses a second version script next to rustc's.
    /// rustc's own lld first (its default on x86-64 Linux since 1.90), else LLVM 19's, put in
    /// a directory of this build and chosen with `-B` and `-fuse-ld=lld`.
    fn use_lld(out: &Path) -> Result<(), String> {
        if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux")
            || std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64")
        {
            return Err("symbol versions are written on x86-64 Linux only".into());
        }
        let mut candidates = Vec::new();
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        if let Ok(output) = std::process::Command::new(rustc)
            .args(["--print", "sysroot"])
            .output()
        {
            let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_owned();
            let target = std::env::var("TARGET").unwrap_or_default();
            candidates.push(PathBuf::from(format!(
                "{sysroot}/lib/rustlib/{target}/bin/gcc-ld/ld.lld"
            )));
        }
        candidates.extend(
            [
                "/usr/lib/llvm-19/bin/ld.lld",
                "/usr/bin/ld.lld-19",
                "/usr/bin/ld.lld",
            ]
            .iter()
            .map(PathBuf::from),
        );
        let lld = candidates
            .into_iter()
            .find(|p| p.exists())
            .ok_or("ld.lld not found: apt-get install lld-19")?;
        let bin = out.join("lld-bin");
        let _ = std::fs::create_dir_all(&bin);
        let link = bin.join("ld.lld");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&lld, &link)
            .map_err(|e| format!("cannot link {} into {}: {e}", lld.display(), bin.display()))?;
        println!("cargo:rustc-cdylib-link-arg=-B{}", bin.display());
        println!("cargo:rustc-cdylib-link-arg=-fuse-ld=lld");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> VersionTable {
        let mut t = VersionTable::new();
        t.parse("test", text).unwrap();
        t
    }

    #[test]
    fn exact_names_beat_prefixes_and_the_first_rule_wins() {
        let t = table(
            "# comment\nhipMalloc\thip_4.2\nhipMalloc\thip_5.3\n_Z3fooi\thip_4.3\nrocload_*\tROCLOAD_0.1\n*\tROCLOAD_0.1\nhipGraph*\thip_5.0\n",
        );
        assert_eq!(t.node_of("hipMalloc"), Some("hip_4.2"));
        assert_eq!(t.node_of("_Z3fooi"), Some("hip_4.3"));
        assert_eq!(t.node_of("rocload_version"), Some("ROCLOAD_0.1"));
        assert_eq!(t.node_of("hipGraphLaunch"), Some("hip_5.0"));
        assert_eq!(t.node_of("anything"), Some("ROCLOAD_0.1"));
        assert_eq!(table("a\tX_1\n").node_of("b"), None);
    }

    #[test]
    fn nodes_chain_in_version_order_within_their_family() {
        let t = table("a\thip_4.10\nb\thip_4.2\nc\thip_4.9\nd\tROCLOAD_0.1\ne\thip_5.0\n");
        assert_eq!(
            t.nodes(),
            ["hip_4.2", "hip_4.9", "hip_4.10", "hip_5.0", "ROCLOAD_0.1"]
        );
        assert_eq!(
            t.linker_script(),
            "hip_4.2 { };\nhip_4.9 { } hip_4.2;\nhip_4.10 { } hip_4.9;\nhip_5.0 { } hip_4.10;\nROCLOAD_0.1 { } hip_5.0;\n"
        );
        let again = table(&t.to_text());
        assert_eq!(again.node_of("b"), Some("hip_4.2"));
        assert_eq!(again.nodes(), t.nodes());
    }

    #[test]
    fn malformed_lines_are_errors_with_their_place() {
        let mut t = VersionTable::new();
        let e = t
            .parse("nodes.tsv", "good\thip_4.2\nno-tab-here\n")
            .unwrap_err();
        assert_eq!(e.place, "nodes.tsv:2");
        let e = t.parse("x", "name\tbad node\n").unwrap_err();
        assert!(e.reason.contains("invalid rule"), "{e}");
    }
}
