//! Shared helpers of the code-object tests: building real inputs with clang-19 / ld.lld-19
//! (cached under the target directory) and reading `llvm-readelf` output.
#![allow(dead_code)]

pub mod readelf;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where LLVM 19 lives on Debian; `ROCLOAD_LLVM_BIN` overrides.
pub fn llvm_bin() -> PathBuf {
    std::env::var_os("ROCLOAD_LLVM_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/llvm-19/bin"))
}

/// The tool's path, or `None` (after printing why) when it is missing outside CI.
/// Panics when it is missing and `CI` is set: CI installs the tools.
pub fn tool(name: &str) -> Option<PathBuf> {
    let path = llvm_bin().join(name);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{} is missing and CI is set: install clang-19, lld-19 and llvm-19",
            path.display()
        );
    }
    eprintln!(
        "skipping: {} is missing (install clang-19, lld-19 and llvm-19)",
        path.display()
    );
    None
}

fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn cache_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("code_object_inputs");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One translation unit to compile.
#[derive(Hash, Clone, Copy)]
pub struct Unit<'a> {
    /// File name (its extension picks the language: `.c`, `.cpp`, `.s`).
    pub name: &'a str,
    /// Source text.
    pub source: &'a str,
}

/// Compiles `units` for `mcpu` with extra compiler `flags`, links them with
/// `ld.lld -shared` (plus `link_flags`), and returns the code object's path. Results are
/// cached by content under the target directory. `None` when clang or ld.lld is missing.
pub fn build(
    units: &[Unit<'_>],
    mcpu: &str,
    flags: &[&str],
    link_flags: &[&str],
) -> Option<PathBuf> {
    let clang = tool("clang")?;
    let lld = tool("ld.lld")?;
    let mut h = DefaultHasher::new();
    (units, mcpu, flags, link_flags).hash(&mut h);
    let key = format!("{:016x}", h.finish());
    let dir = cache_dir().join(&key);
    let out = dir.join("out.co");
    if out.exists() {
        return Some(out);
    }
    let tmp = cache_dir().join(format!("{key}.tmp{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut objects = Vec::new();
    for u in units {
        let src = tmp.join(u.name);
        std::fs::write(&src, u.source).unwrap();
        let obj = tmp.join(format!("{}.o", u.name));
        let mut cmd = Command::new(&clang);
        cmd.arg("--target=amdgcn-amd-amdhsa")
            .arg(format!("-mcpu={mcpu}"))
            .args(["-nogpulib", "-O2", "-c"]);
        if !u.name.ends_with(".s") {
            cmd.args(flags);
        }
        cmd.arg(&src).arg("-o").arg(&obj);
        run(&mut cmd);
        objects.push(obj);
    }
    let linked = tmp.join("out.co");
    run(Command::new(&lld)
        .arg("-shared")
        .args(link_flags)
        .args(&objects)
        .arg("-o")
        .arg(&linked));
    // Publish atomically so that parallel tests never see half a directory.
    let _ = std::fs::rename(&tmp, &dir);
    if !out.exists() {
        panic!("could not publish {}", out.display());
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Some(out)
}

/// `llvm-readelf --syms --dyn-syms --notes --relocs FILE`, or `None` when missing.
pub fn readelf(path: &Path) -> Option<String> {
    let tool = tool("llvm-readelf")?;
    let out = Command::new(tool)
        .args(["--syms", "--dyn-syms", "--notes", "--relocs"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "llvm-readelf failed on {}",
        path.display()
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// A library of device functions and variables with default visibility.
pub const LIB_C: &str = r#"
__attribute__((visibility("default"))) int lib_var = 42;
__attribute__((visibility("default"))) int lib_array[64];
__attribute__((visibility("default"))) int lib_add(int a, int b) { return a + b + lib_var; }
static __attribute__((noinline)) int helper(int x) { return x * 3 + lib_array[x & 63]; }
__attribute__((visibility("default"), noinline)) int lib_mul(int a) { return helper(a) + 1; }
__attribute__((visibility("default"), weak)) int lib_weak(int a) { return a - 1; }
__attribute__((visibility("default"))) int *lib_ptr = &lib_var;
"#;

/// Kernels that import from [`LIB_C`].
pub const KERNELS_C: &str = r#"
extern __attribute__((visibility("default"))) int lib_add(int, int);
extern __attribute__((visibility("default"))) int lib_mul(int);
extern __attribute__((visibility("default"))) int lib_var;
__attribute__((visibility("default"))) int *table[2] = { &lib_var, 0 };
__attribute__((amdgpu_kernel)) void kern(int *out, int n) { out[0] = lib_add(n, 1) + *table[0] + lib_mul(n); }
__attribute__((amdgpu_kernel)) void kern2(float *out, double d, char c) { out[1] = d + c; }
__attribute__((amdgpu_kernel)) void lds_user(int *out) {
    __attribute__((address_space(3), loader_uninitialized)) static int lds[256];
    lds[__builtin_amdgcn_workitem_id_x()] = out[0];
    __builtin_amdgcn_s_barrier();
    out[1] = lds[(__builtin_amdgcn_workitem_id_x() + 1) & 255];
}
"#;

/// C++ kernels and a device function, so that names are mangled.
pub const KERNELS_CPP: &str = r#"
struct Pair { int a; float b; };
__attribute__((visibility("default"), noinline)) int scale(int x, Pair p) { return x * p.a + (int)p.b; }
template <typename T> __attribute__((amdgpu_kernel)) void fill(T *out, T v, Pair p) { out[0] = v + scale(1, p); }
template __attribute__((amdgpu_kernel)) void fill<int>(int *, int, Pair);
template __attribute__((amdgpu_kernel)) void fill<float>(float *, float, Pair);
namespace ns { __attribute__((visibility("default"))) float weights[16]; }
"#;

/// Assembly importing a function typed `@function` and a variable typed `@object`:
/// undefined FUNC/OBJECT symbols, which ROCr mishandles.
pub const TYPED_IMPORTS_S: &str = r#"
    .text
    .globl uses_imports
    .p2align 8
    .type uses_imports,@function
uses_imports:
    s_getpc_b64 s[0:1]
    s_setpc_b64 s[30:31]
.Lend:
    .size uses_imports, .Lend-uses_imports
    .type typed_func,@function
    .type typed_var,@object
    .data
    .globl ptrs
    .p2align 3
    .type ptrs,@object
ptrs:
    .quad typed_func
    .quad typed_var
    .size ptrs, 16
"#;
