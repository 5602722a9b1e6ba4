//! Build script: turns data tables into code. Needs no ROCm, libclang or GPU.
//!
//! `src/target/processors.tsv` is the single source of truth for AMDGCN processors; this script
//! validates it (unique names and mach values, generic families that exist, sane columns) and
//! writes `$OUT_DIR/processors.rs`, which `src/target/processor.rs` includes. A malformed table
//! fails the build with the line number.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

const TABLE: &str = "src/target/processors.tsv";
const HASH: &str = "src/target/name_hash.rs";
/// log2 of the name lookup table's size.
const SLOT_BITS: u32 = 10;
/// Longest name the lookup accepts (the hash reads at most 16 bytes).
const MAX_NAME: usize = 16;

include!("src/target/name_hash.rs");

struct Row {
    line: usize,
    name: String,
    mach: u32,
    family: String,
    generic: Option<String>,
    gen_min: u32,
    xnack: bool,
    sramecc: bool,
    wave: u32,
    ext_agent: Option<String>,
    ext_code: Option<String>,
    clang19: bool,
    aliases: Vec<String>,
}

fn fail(line: usize, msg: impl std::fmt::Display) -> ! {
    panic!("{TABLE}:{line}: {msg}");
}

fn opt(s: &str) -> Option<String> {
    (s != "-").then(|| s.to_string())
}

fn yes_no(line: usize, s: &str) -> bool {
    match s {
        "yes" => true,
        "no" => false,
        _ => fail(line, format!("expected yes/no, got {s:?}")),
    }
}

/// `gfx90a` -> (9, 0, 10): all but the last two characters are the decimal major version, the
/// last two are hex digits (minor, stepping), as LLVM's getIsaVersion and ROCr spell them.
fn version(line: usize, name: &str) -> Option<(u32, u32, u32)> {
    if name.ends_with("-generic") {
        return None;
    }
    let digits = name
        .strip_prefix("gfx")
        .unwrap_or_else(|| fail(line, "processor names start with gfx"));
    if digits.len() < 3 || !digits.is_ascii() {
        fail(line, format!("cannot derive a version from {name:?}"));
    }
    let (major, rest) = digits.split_at(digits.len() - 2);
    let major: u32 = major
        .parse()
        .unwrap_or_else(|_| fail(line, "bad major version"));
    let hex = |c: &str| u32::from_str_radix(c, 16).unwrap_or_else(|_| fail(line, "bad hex digit"));
    Some((major, hex(&rest[..1]), hex(&rest[1..])))
}

fn parse(text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let raw = raw.trim_end();
        if raw.is_empty() || raw.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = raw.split('\t').filter(|c| !c.is_empty()).collect();
        if cols.len() != 12 {
            fail(line, format!("expected 12 columns, found {}", cols.len()));
        }
        let mach = u32::from_str_radix(cols[1].trim_start_matches("0x"), 16)
            .unwrap_or_else(|_| fail(line, "mach must be hex"));
        if mach == 0 || mach > 0xff {
            fail(line, "mach must be in 1..=0xff");
        }
        let wave: u32 = cols[7]
            .parse()
            .unwrap_or_else(|_| fail(line, "bad wave size"));
        if wave != 32 && wave != 64 {
            fail(line, "wave size must be 32 or 64");
        }
        rows.push(Row {
            line,
            name: cols[0].to_string(),
            mach,
            family: cols[2].to_string(),
            generic: opt(cols[3]),
            gen_min: cols[4]
                .parse()
                .unwrap_or_else(|_| fail(line, "bad gen_min")),
            xnack: yes_no(line, cols[5]),
            sramecc: yes_no(line, cols[6]),
            wave,
            ext_agent: opt(cols[8]),
            ext_code: opt(cols[9]),
            clang19: yes_no(line, cols[10]),
            aliases: opt(cols[11])
                .map(|a| a.split(',').map(str::to_string).collect())
                .unwrap_or_default(),
        });
    }
    rows
}

fn validate(rows: &[Row]) {
    let mut names = BTreeSet::new();
    let mut machs = BTreeSet::new();
    let generics: BTreeSet<&str> = rows
        .iter()
        .filter(|r| r.name.ends_with("-generic"))
        .map(|r| r.name.as_str())
        .collect();
    for r in rows {
        for n in std::iter::once(&r.name).chain(&r.aliases) {
            if !names.insert(n.clone()) {
                fail(r.line, format!("duplicate name {n}"));
            }
        }
        if !machs.insert(r.mach) {
            fail(r.line, format!("duplicate mach {:#x}", r.mach));
        }
        let is_generic = r.name.ends_with("-generic");
        match (&r.generic, is_generic) {
            (Some(g), false) if !generics.contains(g.as_str()) => {
                fail(r.line, format!("unknown generic family {g}"))
            }
            (Some(_), false) if r.gen_min == 0 => {
                fail(r.line, "a generic family member needs gen_min >= 1")
            }
            (None, _) if r.gen_min != 0 => fail(r.line, "gen_min without a generic family"),
            (Some(_), true) => fail(r.line, "a generic processor cannot have a generic family"),
            _ => {}
        }
        if is_generic && (r.ext_agent.is_some() || r.ext_code.is_some()) {
            fail(
                r.line,
                "generic processors take no part in the extended policy",
            );
        }
        version(r.line, &r.name);
    }
}

fn quote_opt(s: &Option<String>) -> String {
    match s {
        Some(s) => format!("Some({s:?})"),
        None => "None".to_string(),
    }
}

fn generate(rows: &[Row]) -> String {
    let index: BTreeMap<&str, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let mut out = String::new();
    let _ = writeln!(out, "// @generated by build.rs from {TABLE}. Do not edit.");
    let _ = writeln!(out, "static PROCESSORS: [Processor; {}] = [", rows.len());
    for r in rows {
        let version = match version(r.line, &r.name) {
            Some((major, minor, stepping)) => {
                format!(
                    "Some(GfxVersion {{ major: {major}, minor: {minor}, stepping: {stepping} }})"
                )
            }
            None => "None".to_string(),
        };
        let generic_index = match &r.generic {
            Some(g) => format!("Some({})", index[g.as_str()]),
            None => "None".to_string(),
        };
        let _ = writeln!(
            out,
            "    Processor {{ name: {:?}, aliases: &{:?}, mach: {:#04x}, version: {version}, \
             family: {:?}, generic_family: {}, generic_min_version: {}, supports_xnack: {}, \
             supports_sramecc: {}, wavefront_size: {}, generic: {}, extended_agent_group: {}, \
             extended_code_group: {}, known_to_clang19: {}, generic_index: {generic_index} }},",
            r.name,
            r.aliases,
            r.mach,
            r.family,
            quote_opt(&r.generic),
            r.gen_min,
            r.xnack,
            r.sramecc,
            r.wave,
            r.name.ends_with("-generic"),
            quote_opt(&r.ext_agent),
            quote_opt(&r.ext_code),
            r.clang19,
        );
    }
    let _ = writeln!(out, "];\n");

    // Perfect hash of every name and alias: find a seed with no collisions in 2^SLOT_BITS
    // slots. A slot holds 1 + the index into NAMES, 0 when empty.
    let names: Vec<(&str, usize)> = rows
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            std::iter::once(r.name.as_str())
                .chain(r.aliases.iter().map(String::as_str))
                .map(move |n| (n, i))
        })
        .collect();
    if let Some((n, _)) = names.iter().find(|(n, _)| n.len() > MAX_NAME) {
        panic!("{TABLE}: name {n} is longer than {MAX_NAME} bytes");
    }
    assert!(names.len() < 255, "NAME_SLOTS holds u8 indices");
    let slot_of = |name: &str, seed: u64| {
        let (lo, hi) = pack_name(name.as_bytes());
        (name_hash(lo, hi, name.len(), seed) >> (64 - SLOT_BITS)) as usize
    };
    let (seed, slots) = (0u64..1_000_000)
        .find_map(|seed| {
            let mut slots = vec![0usize; 1 << SLOT_BITS];
            for (k, (name, _)) in names.iter().enumerate() {
                let slot = &mut slots[slot_of(name, seed)];
                if *slot != 0 {
                    return None;
                }
                *slot = k + 1;
            }
            Some((seed, slots))
        })
        .expect("no collision-free seed; raise SLOT_BITS");
    let _ = writeln!(out, "const NAME_SEED: u64 = {seed};");
    let _ = writeln!(out, "const NAME_SLOT_BITS: u32 = {SLOT_BITS};");
    let _ = writeln!(out, "const MAX_NAME_LEN: usize = {MAX_NAME};");
    let _ = writeln!(
        out,
        "/// (packed name low word, high word, length, row) per name or alias."
    );
    let _ = writeln!(
        out,
        "static NAMES: [(u64, u64, usize, usize); {}] = [",
        names.len()
    );
    for (name, i) in &names {
        let (lo, hi) = pack_name(name.as_bytes());
        let _ = writeln!(
            out,
            "    ({lo:#x}, {hi:#x}, {}, {i}), // {name}",
            name.len()
        );
    }
    let _ = writeln!(out, "];");
    let _ = writeln!(
        out,
        "static NAME_SLOTS: [u8; {}] = {:?};\n",
        slots.len(),
        slots
    );

    let _ = writeln!(
        out,
        "fn index_by_mach(mach: u32) -> Option<usize> {{\n    match mach {{"
    );
    for (i, r) in rows.iter().enumerate() {
        let _ = writeln!(out, "        {:#04x} => Some({i}),", r.mach);
    }
    let _ = writeln!(out, "        _ => None,\n    }}\n}}");
    out
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={TABLE}");
    println!("cargo:rerun-if-changed={HASH}");
    let text = std::fs::read_to_string(TABLE).unwrap_or_else(|e| panic!("{TABLE}: {e}"));
    let rows = parse(&text);
    validate(&rows);
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dest = out_dir.join("processors.rs");
    std::fs::write(&dest, generate(&rows)).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
}
