//! HIP's three ABI generations through the sonames programs link against: C programs built
//! with their own HIP 6/7 declarations (`tests/hip_generations/`; Debian has only HIP 5.2.3's
//! headers), linked against the thin `libamdhip64.so.5`, `.so.6` and `.so.7` next to
//! librocload.so, each checking what differs between generations (version, last-error
//! semantics, `hipMemoryType` numbering, the 1,472-byte device properties field by field,
//! `hipGetProcAddress`, 6.x/7.x entry points and a launch through `hipDrvLaunchKernelEx`; graph
//! node types per generation and the graph calls added after HIP 5.2), and a
//! process holding a HIP 5 and a HIP 7 library that must share devices and memory. Needs a C
//! compiler (the one the build uses).
//!
//! The programs are linked as AMD's users link them: against a library named
//! `libamdhip64.so.N` that defines the functions at their version nodes (a link-time stand-in
//! made here from AMD's data), so their ELF files ask for `hipMalloc@hip_4.2` from
//! `libamdhip64.so.7`; they run against rocload's thin library of that name.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hip_generations")
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hip_generations");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `cc ARGS`, or a failed assertion with the compiler's message.
fn cc(args: &[&str]) {
    let out = Command::new("cc").args(args).output().expect("run cc");
    assert!(
        out.status.success(),
        "cc {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A link-time stand-in for AMD's `libamdhip64.so.{generation}` in `dir/link/`: every function
/// `hip_abi.h` declares, defined (empty) at the version node AMD's data gives it.
fn link_stub(generation: u32, test: &str) -> PathBuf {
    let dir = out_dir().join(format!("{test}-link{generation}"));
    std::fs::create_dir_all(&dir).unwrap();
    let header = std::fs::read_to_string(sources().join("hip_abi.h")).unwrap();
    let names: Vec<&str> = header
        .lines()
        .filter_map(|l| l.strip_prefix("hipError_t ")?.split('(').next())
        .collect();
    assert!(names.len() > 20, "{names:?}");
    let mut table = rocload_ffi::versions::VersionTable::new();
    let union = Path::new(env!("CARGO_MANIFEST_DIR")).join("capi/abi/libamdhip64-union.tsv");
    table
        .parse("union", &std::fs::read_to_string(union).unwrap())
        .unwrap();
    let mut by_node: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for name in &names {
        let node = table
            .node_of(name)
            .unwrap_or_else(|| panic!("{name} has no node in AMD's data"));
        by_node.entry(node).or_default().push(name);
    }
    let mut script = String::new();
    for node in table.nodes() {
        let globals: String = by_node
            .get(node.as_str())
            .map(|v| v.iter().map(|n| format!("{n}; ")).collect())
            .unwrap_or_default();
        if globals.is_empty() {
            script.push_str(&format!("{node} {{ }};\n"));
        } else {
            script.push_str(&format!("{node} {{ global: {globals}}};\n"));
        }
    }
    let c: String = names
        .iter()
        .map(|n| format!("void {n}(void) {{}}\n"))
        .collect();
    std::fs::write(dir.join("stub.c"), c).unwrap();
    std::fs::write(dir.join("stub.map"), script).unwrap();
    let soname = format!("libamdhip64.so.{generation}");
    cc(&[
        "-shared",
        "-fPIC",
        dir.join("stub.c").to_str().unwrap(),
        "-o",
        dir.join(&soname).to_str().unwrap(),
        &format!("-Wl,-soname,{soname}"),
        &format!("-Wl,--version-script={}", dir.join("stub.map").display()),
    ]);
    dir
}

/// Runs `program` (with `args`) with a clean rocload environment; stdout and success.
fn run(program: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(program)
        .args(args)
        .env_remove("ROCLOAD_SOFT_ISA")
        .env_remove("ROCLOAD_BACKEND")
        .output()
        .expect("run the program");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn each_generation_gets_its_own_abi() {
    let lib = common::built("librocload.so");
    let dir = lib.parent().unwrap().to_str().unwrap().to_owned();
    let out = out_dir();
    let code_object = common::fixture("codeobj/hf_cov5.gfx1030.co");
    for generation in [5, 6, 7] {
        let soname = format!("libamdhip64.so.{generation}");
        assert!(
            Path::new(&dir).join(&soname).is_file(),
            "{soname} was not built next to librocload.so"
        );
        let program = out.join(format!("generation{generation}"));
        cc(&[
            "-O1",
            "-Wall",
            &format!("-DGENERATION={generation}"),
            &format!("-I{}", sources().display()),
            sources().join("generation.c").to_str().unwrap(),
            "-o",
            program.to_str().unwrap(),
            &format!("-L{}", link_stub(generation, "generation").display()),
            &format!("-l:{soname}"),
            &format!("-Wl,-rpath,{dir}"),
        ]);
        let needed = rocload::elf::needed_libraries(&std::fs::read(&program).unwrap()).unwrap();
        assert!(needed.contains(&soname), "{needed:?}");
        let (ok, stdout, stderr) = run(&program, &[code_object.to_str().unwrap()]);
        let failed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
        assert!(
            ok && failed.is_empty() && stdout.contains(&format!("PASS generation {generation}")),
            "generation {generation}: {failed:?}\n{stdout}\n{stderr}"
        );
    }
}

#[test]
fn a_hip5_and_a_hip7_library_share_one_runtime() {
    let lib = common::built("librocload.so");
    let dir = lib.parent().unwrap().to_str().unwrap().to_owned();
    let out = out_dir();
    let include = format!("-I{}", sources().display());
    let rpath = format!("-Wl,-rpath,{dir}:{}", out.display());
    for (name, generation) in [("hip5", 5), ("hip7", 7)] {
        let soname = format!("libamdhip64.so.{generation}");
        cc(&[
            "-O1",
            "-fPIC",
            "-shared",
            &include,
            sources().join(format!("lib_{name}.c")).to_str().unwrap(),
            "-o",
            out.join(format!("lib{name}.so")).to_str().unwrap(),
            &format!("-L{}", link_stub(generation, "mixed").display()),
            &format!("-l:{soname}"),
            &rpath,
        ]);
    }
    let program = out.join("mixed");
    cc(&[
        "-O1",
        &include,
        sources().join("mixed.c").to_str().unwrap(),
        "-o",
        program.to_str().unwrap(),
        &format!("-L{}", out.display()),
        "-lhip5",
        "-lhip7",
        &rpath,
    ]);
    let (ok, stdout, stderr) = run(&program, &[]);
    assert!(ok && stdout.contains("PASS mixed"), "{stdout}\n{stderr}");
}

/// Graphs through each soname: node types numbered per generation, and the graph calls HIP
/// added after 5.2 (`tests/hip_generations/graphs.c`).
#[test]
fn graphs_in_every_generation() {
    let lib = common::built("librocload.so");
    let dir = lib.parent().unwrap().to_str().unwrap().to_owned();
    let out = out_dir();
    let code_object = common::fixture("codeobj/hf_cov5.gfx1030.co");
    for generation in [5, 6, 7] {
        let soname = format!("libamdhip64.so.{generation}");
        let program = out.join(format!("graphs{generation}"));
        cc(&[
            "-O1",
            "-Wall",
            &format!("-DGENERATION={generation}"),
            &format!("-I{}", sources().display()),
            sources().join("graphs.c").to_str().unwrap(),
            "-o",
            program.to_str().unwrap(),
            &format!("-L{}", link_stub(generation, "graphs").display()),
            &format!("-l:{soname}"),
            &format!("-Wl,-rpath,{dir}"),
        ]);
        let (ok, stdout, stderr) = run(&program, &[code_object.to_str().unwrap()]);
        let failed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
        assert!(
            ok && failed.is_empty() && stdout.contains(&format!("PASS graphs {generation}")),
            "generation {generation}: {failed:?}\n{stdout}\n{stderr}"
        );
    }
}
