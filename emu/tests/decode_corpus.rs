//! Differential test: every instruction llvm-objdump-19 prints for the code
//! objects of the corpus (built by `scripts/emu-corpus.sh` into
//! `target/emu-corpus/`: gfx1030, gfx90a and gfx942 objects, each checked with
//! its own instruction set, found from its ELF header) must decode and print
//! identically with rocload-emu.
//!
//! - Missing corpus: the test says how to build it and passes as skipped,
//!   unless `CI` is set, where missing inputs are failures.
//! - By default every instruction is checked (6.9 M instructions, about
//!   2.5 minutes on 2 cores, mostly llvm-objdump). `ROCLOAD_EMU_SAMPLE=N`
//!   checks a deterministic sample instead: every object, at most N
//!   instructions each. (`ROCLOAD_EMU_FULL_CORPUS=1` forces the full run.)
//! - `ROCLOAD_EMU_FAILURES=FILE` writes every mismatch to FILE.
//! - `ROCLOAD_EMU_CORPUS` overrides the corpus directory, `LLVM_OBJDUMP` the tool.

use rocload_emu::isa::{Isa, GFX1030, GFX90A, GFX942};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One instruction as llvm-objdump prints it.
struct Expected {
    address: u64,
    words: Vec<u32>,
    text: String,
}

fn corpus_dir() -> PathBuf {
    match std::env::var_os("ROCLOAD_EMU_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/emu-corpus"),
    }
}

fn objdump() -> String {
    std::env::var("LLVM_OBJDUMP").unwrap_or_else(|_| "llvm-objdump-19".into())
}

/// Parse `llvm-objdump -d` output: instruction lines end with
/// `// ADDRESS: WORD WORD...` (and maybe ` <label>`).
fn parse_objdump(out: &str) -> Vec<Expected> {
    let mut v = Vec::new();
    for line in out.lines() {
        let Some((text, comment)) = line.split_once("//") else {
            continue;
        };
        let Some((addr, rest)) = comment.trim().split_once(": ") else {
            continue;
        };
        let Ok(address) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        let words: Vec<u32> = rest
            .split_whitespace()
            .take_while(|w| !w.starts_with('<'))
            .filter_map(|w| u32::from_str_radix(w, 16).ok())
            .collect();
        if words.is_empty() {
            continue;
        }
        v.push(Expected {
            address,
            words,
            text: text.trim().to_string(),
        });
    }
    v
}

/// The instruction set of a code object, from `EF_AMDGPU_MACH` (the low byte of the ELF
/// header's `e_flags`); `None` for a processor the decoder does not know.
fn isa_of(file: &Path) -> Option<&'static Isa> {
    let bytes = std::fs::read(file).ok()?;
    let flags = u32::from_le_bytes(bytes.get(48..52)?.try_into().ok()?);
    match flags & 0xff {
        0x36 => Some(&GFX1030),
        0x3f => Some(&GFX90A),
        0x4c => Some(&GFX942),
        _ => None,
    }
}

fn code_objects(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "co") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn corpus_prints_like_llvm_objdump() {
    let dir = corpus_dir();
    let files = code_objects(&dir);
    if files.is_empty() {
        let msg = format!(
            "no code objects under {}: build the corpus with `scripts/emu-corpus.sh` (needs clang-19, llvm-objdump-19 and the Debian rocrand/rocsparse libraries)",
            dir.display()
        );
        if std::env::var_os("CI").is_some() {
            panic!("{msg}");
        }
        eprintln!("SKIPPED: {msg}");
        return;
    }
    let sample: Option<usize> = std::env::var("ROCLOAD_EMU_SAMPLE")
        .ok()
        .and_then(|s| s.parse().ok());
    let forced = std::env::var_os("ROCLOAD_EMU_FULL_CORPUS").is_some_and(|v| v != "0");
    let full = forced || sample.is_none();
    let cap = sample.unwrap_or(usize::MAX);
    let started = Instant::now();
    let mut checked = 0usize;
    let mut mnemonics = BTreeSet::new();
    let mut failures = Vec::new();
    let mut per_isa = std::collections::BTreeMap::<&str, usize>::new();
    for file in &files {
        let isa = isa_of(file).unwrap_or_else(|| {
            panic!(
                "{}: not a gfx1030, gfx90a or gfx942 code object",
                file.display()
            )
        });
        *per_isa.entry(isa.name).or_default() += 1;
        let out = Command::new(objdump())
            .args(["-d", &format!("--mcpu={}", isa.name), "--section=.text"])
            .arg(file)
            .output()
            .unwrap_or_else(|e| panic!("running {}: {e}", objdump()));
        assert!(
            out.status.success(),
            "{} failed on {}: {}",
            objdump(),
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let expected = parse_objdump(&String::from_utf8_lossy(&out.stdout));
        assert!(
            !expected.is_empty(),
            "llvm-objdump printed no instructions for {}",
            file.display()
        );
        // Sample: a deterministic stride through the object.
        let stride = if full || expected.len() <= cap {
            1
        } else {
            expected.len().div_ceil(cap)
        };
        for e in expected.iter().step_by(stride) {
            let bytes: Vec<u8> = e.words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let (_, res) = isa
                .disassemble(&bytes, e.address)
                .next()
                .expect("one instruction");
            checked += 1;
            let got = match res {
                Ok(inst) if inst.len as usize == bytes.len() => inst.to_string(),
                Ok(inst) => format!("{inst} <length {} instead of {}>", inst.len, bytes.len()),
                Err(err) => format!("<{err}>"),
            };
            if let Some(m) = e.text.split_whitespace().next() {
                mnemonics.insert(m.to_string());
            }
            if got != e.text {
                failures.push(format!(
                    "{}:{:#x} [{}]\n  expected: {}\n  got:      {}",
                    file.file_name().unwrap_or_default().to_string_lossy(),
                    e.address,
                    e.words
                        .iter()
                        .map(|w| format!("{w:08X}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    e.text,
                    got
                ));
            }
        }
    }
    eprintln!(
        "corpus: {} objects ({per_isa:?}), {} instructions checked ({}), {} distinct mnemonics, {} mismatches, {:.1}s",
        files.len(),
        checked,
        if full { "full" } else { "sampled" },
        mnemonics.len(),
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = std::env::var_os("ROCLOAD_EMU_FAILURES") {
        std::fs::write(&path, failures.join("\n")).expect("writing the failure list");
    }
    if !failures.is_empty() {
        let n = failures.len();
        let shown: Vec<_> = failures.into_iter().take(40).collect();
        panic!(
            "{n} instructions differ from llvm-objdump; first {}:\n{}",
            shown.len(),
            shown.join("\n")
        );
    }
}
