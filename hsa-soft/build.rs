// Links libhsa_soft.so as a drop-in for ROCr's libhsa-runtime64.so.1:
// - SONAME libhsa-runtime64.so.1, so programs linked against ROCr (rocminfo) load it;
// - every hsa_* symbol at version ROCR_1, as ROCr exports them (programs linked against ROCr
//   ask for `hsa_init@ROCR_1`; the dynamic loader refuses a library that lacks the version).
//   The version node comes from a version script; rustc passes its own anonymous one for the
//   cdylib, which GNU ld cannot combine with a named one, so the library is linked with lld
//   (rustc's own rust-lld on current toolchains; else `ld.lld` from LLVM 19, found through a
//   directory of this build). Each entry point is a stub carrying `.symver name@@ROCR_1` that
//   jumps to the Rust function (`rocsoft_<name>`), see `src/lib.rs`. Without lld the symbols
//   stay unversioned: rocload's backend (dlopen/dlsym) still works, programs linked against ROCr
//   do not, and the build says so.
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-check-cfg=cfg(rocr_versioned)");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsa-runtime64.so.1");
    // rustc's own lld first (what it links with by default on x86_64-linux since 1.90).
    let mut candidates = Vec::new();
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    if let Ok(out) = std::process::Command::new(rustc)
        .arg("--print")
        .arg("sysroot")
        .output()
    {
        let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_owned();
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
    let lld = candidates.into_iter().find(|p| p.exists());
    let Some(lld) = lld else {
        println!("cargo:warning=hsa-soft: ld.lld not found (apt-get install lld-19): symbols are not versioned ROCR_1, so programs linked against ROCr (rocminfo) cannot use the library; rocload's backend can");
        return;
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let bin = out.join("lld-bin");
    let _ = std::fs::create_dir_all(&bin);
    let link = bin.join("ld.lld");
    let _ = std::fs::remove_file(&link);
    if std::os::unix::fs::symlink(&lld, &link).is_err() {
        println!(
            "cargo:warning=hsa-soft: cannot link {} into {}: symbols not versioned",
            lld.display(),
            bin.display()
        );
        return;
    }
    let script = out.join("rocr.map");
    if std::fs::write(&script, "ROCR_1 { };\n").is_err() {
        println!(
            "cargo:warning=hsa-soft: cannot write {}: symbols not versioned",
            script.display()
        );
        return;
    }
    println!("cargo:rustc-cdylib-link-arg=-B{}", bin.display());
    println!("cargo:rustc-cdylib-link-arg=-fuse-ld=lld");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        script.display()
    );
    // The versioned entry points are x86-64 jump stubs (see lib.rs).
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
        println!("cargo:rustc-cfg=rocr_versioned");
    } else {
        println!("cargo:warning=hsa-soft: symbol versions are only written on x86-64");
    }
}
