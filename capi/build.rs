//! Gives librocload.so its SONAME and the symbol versions of AMD's libamdhip64, so programs
//! and libraries linked against it bind to ours without "no version information available",
//! and builds the sonames HIP programs ask for as thin libraries over it.
//!
//! The versions are data: `abi/libamdhip64-union.tsv` (every name AMD's libamdhip64 exported
//! from ROCm 5.2.3 to the current development tree, with its node), `hip-exports.tsv` (Debian's
//! libamdhip64.so.5, which adds the C++-mangled names, from `scripts/gen-hip-exports.sh`),
//! `abi/libamdhip64-wildcards.tsv` (the prefixes AMD's scripts export) and `abi/own.tsv`
//! (rocload's own API). `rocload_ffi`'s `#[export]` attribute places each entry point's
//! `.symver` from the merged table; an entry point the tables do not name does not compile.
//!
//! The thin libraries (`sonames/thin.c`): `libamdhip64.so.5`, `.so.6`, `.so.7` and
//! `libhiprtc.so.5`, `.so.6`, `.so.7`, each with that SONAME, every version node of the
//! table, librocload.so as its dependency (`$ORIGIN` first) and a constructor announcing its
//! HIP generation. They are written next to librocload.so (`target/<profile>/`). Needs the C
//! compiler the `zstd` crate needs anyway; without one they are skipped with a warning. Needs
//! no ROCm.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The sonames built, with the HIP generation each announces.
const SONAMES: &[(&str, u32)] = &[
    ("libamdhip64.so.5", 5),
    ("libamdhip64.so.6", 6),
    ("libamdhip64.so.7", 7),
    ("libhiprtc.so.5", 5),
    ("libhiprtc.so.6", 6),
    ("libhiprtc.so.7", 7),
];

fn main() {
    let table = rocload_ffi::versions::build::configure(
        &[
            "abi/libamdhip64-union.tsv",
            "hip-exports.tsv",
            "abi/libamdhip64-wildcards.tsv",
            "abi/own.tsv",
        ],
        "librocload.so",
    );
    // The HIP 5.2.3 API callback records (`abi/hip-api-args.tsv`) and HIP 5.3+'s tracer
    // records of libamdhip64.so.5 and .so.6/.so.7 programs (`profiling::TRACER_TABLES` has
    // them in this order): `#[export]` traces those.
    rocload_ffi::trace::build::configure(
        "abi/hip-api-args.tsv",
        &["abi/hip-tracer-api-5.tsv", "abi/hip-tracer-api-6.tsv"],
    );
    println!("cargo:rerun-if-changed=sonames/thin.c");
    first_releases();
    if let Err(why) = thin_libraries(&table) {
        println!(
            "cargo:warning=the HIP sonames (libamdhip64.so.N, libhiprtc.so.N) were not built: \
             {why}; `rocload run` cannot offer them"
        );
    }
}

fn thin_libraries(table: &rocload_ffi::versions::VersionTable) -> Result<(), String> {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return Err("they are ELF shared libraries for Linux".into());
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    // OUT_DIR is target/<profile>/build/<package>-<hash>/out.
    let profile = out
        .ancestors()
        .nth(3)
        .ok_or("OUT_DIR is not inside a cargo target directory")?
        .to_path_buf();
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .try_get_compiler()
        .map_err(|e| format!("no C compiler: {e}"))?;
    let cc = |args: &[&str]| -> Result<(), String> {
        let mut command = Command::new(compiler.path());
        command.args(compiler.args()).args(args);
        let output = command
            .output()
            .map_err(|e| format!("running {}: {e}", compiler.path().display()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{:?} failed: {}",
                command,
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    };
    // A stand-in librocload.so to link against, so each thin library records it as needed;
    // at run time the real one is found beside it.
    let stub_dir = out.join("stub");
    std::fs::create_dir_all(&stub_dir).map_err(|e| e.to_string())?;
    let empty = out.join("empty.c");
    std::fs::write(&empty, "/* librocload.so's stand-in at link time */\n")
        .map_err(|e| e.to_string())?;
    cc(&[
        "-shared",
        "-fPIC",
        path(&empty),
        "-o",
        path(&stub_dir.join("librocload.so")),
        "-Wl,-soname,librocload.so",
    ])?;
    let script = out.join("hip-nodes.map");
    std::fs::write(&script, table.linker_script()).map_err(|e| e.to_string())?;
    let source = Path::new("sonames/thin.c");
    for (soname, generation) in SONAMES {
        let built = out.join(soname);
        cc(&[
            "-shared",
            "-fPIC",
            "-O2",
            &format!("-DROCLOAD_GENERATION={generation}"),
            &format!("-DROCLOAD_LIBRARY=\"{soname}\""),
            path(source),
            "-o",
            path(&built),
            &format!("-Wl,-soname,{soname}"),
            &format!("-Wl,--version-script={}", script.display()),
            "-Wl,--no-as-needed",
            &format!("-L{}", stub_dir.display()),
            "-lrocload",
            "-Wl,-rpath,$ORIGIN",
        ])?;
        let target = profile.join(soname);
        // Replace, never write through a symlink someone put there.
        let _ = std::fs::remove_file(&target);
        std::fs::copy(&built, &target)
            .map_err(|e| format!("copying {soname} to {}: {e}", target.display()))?;
    }
    Ok(())
}

fn path(p: &Path) -> &str {
    p.to_str().expect("build paths are UTF-8")
}

/// `$OUT_DIR/first_release.rs`: each name of `abi/libamdhip64-union.tsv` with the first HIP
/// release that exported it (`rocm-6.1.2` -> 601), sorted by name, for `hipGetProcAddress`.
fn first_releases() {
    let text = std::fs::read_to_string("abi/libamdhip64-union.tsv")
        .unwrap_or_else(|e| panic!("abi/libamdhip64-union.tsv: {e}"));
    let mut rows: Vec<(String, u32)> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            let name = f.next()?;
            let first = f.nth(1)?;
            let mut v = first.strip_prefix("rocm-")?.split('.');
            let major: u32 = v.next()?.parse().ok()?;
            let minor: u32 = v.next()?.parse().ok()?;
            Some((name.to_owned(), major * 100 + minor))
        })
        .collect();
    rows.sort();
    rows.dedup_by(|a, b| a.0 == b.0);
    let mut out = String::from(
        "// Generated by capi/build.rs from abi/libamdhip64-union.tsv.\n\
         pub(crate) static FIRST_RELEASE: &[(&str, u32)] = &[\n",
    );
    for (name, version) in rows {
        out.push_str(&format!("    ({name:?}, {version}),\n"));
    }
    out.push_str("];\n");
    let path =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("first_release.rs");
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
