//! hiprtc, runtime compilation of HIP source (part of Debian's `libamdhip64.so.5`): a program is
//! compiled by running clang as a subprocess for the current device's target (or the one its
//! `--gpu-architecture` option names); the log is clang's output and the code a code object
//! that `hipModuleLoadData` loads. The compiler is `ROCLOAD_HIPRTC_CLANG`, else Debian's
//! `/usr/lib/llvm-19/bin/clang++`, `clang++-19` or `clang++`; the device libraries are
//! `ROCLOAD_DEVICE_LIB_PATH`, else Debian's `/usr/lib/x86_64-linux-gnu/amdgcn/bitcode` when it
//! exists. Name expressions are lowered by matching the demangled symbols of the result.
//!
//! With `-fgpu-rdc` the result is LLVM bitcode (`hiprtcGetBitcode`) for the linker
//! (`super::hiprtc_link`). Not for loading the result (the module API).

use rocload_ffi::export;
use std::ffi::{c_char, c_int, CStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use rocload_lib::code_object::{demangle, CodeObject};

use crate::kind;
use crate::runtime;
use rocload_ffi::HandleTable;
use rocload_lib::runtime::config::{Config, HIPRTC_CLANG_ENV};

/// `hiprtcResult`.
#[allow(non_camel_case_types)]
pub type hiprtcResult = c_int;
/// `hiprtcProgram`: an opaque handle.
#[allow(non_camel_case_types)]
pub type hiprtcProgram = *mut std::ffi::c_void;

pub(crate) const HIPRTC_SUCCESS: hiprtcResult = 0;
pub(crate) const HIPRTC_ERROR_OUT_OF_MEMORY: hiprtcResult = 1;
pub(crate) const HIPRTC_ERROR_INVALID_INPUT: hiprtcResult = 3;
const HIPRTC_ERROR_INVALID_PROGRAM: hiprtcResult = 4;
const HIPRTC_ERROR_INVALID_OPTION: hiprtcResult = 5;
const HIPRTC_ERROR_COMPILATION: hiprtcResult = 6;
const HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION: hiprtcResult = 8;
const HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION: hiprtcResult = 9;
const HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID: hiprtcResult = 10;
pub(crate) const HIPRTC_ERROR_INTERNAL_ERROR: hiprtcResult = 11;
/// `HIPRTC_ERROR_LINKING` (HIP 5.3).
pub(crate) const HIPRTC_ERROR_LINKING: hiprtcResult = 100;

const DEBIAN_CLANG: &str = "/usr/lib/llvm-19/bin/clang++";
const DEBIAN_DEVICE_LIBS: &str = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";

/// One program: its sources, then what compiling it produced.
#[derive(Debug, Default)]
struct Program {
    source: String,
    name: String,
    /// (include name, contents).
    headers: Vec<(String, String)>,
    name_expressions: Vec<String>,
    log: String,
    /// The code object, once compiled.
    code: Option<Vec<u8>>,
    /// The LLVM bitcode, once compiled with `-fgpu-rdc`.
    bitcode: Option<Vec<u8>>,
    /// (name expression, mangled name), once compiled.
    lowered: Vec<(String, String)>,
}

static PROGRAMS: HandleTable<Arc<Mutex<Program>>> = HandleTable::new(kind::RTC_PROGRAM);

/// Runs one hiprtc entry point: its result, logged like the HIP ones.
pub(crate) fn rtc(
    op: &'static str,
    f: impl FnOnce() -> Result<(), (hiprtcResult, String)>,
) -> hiprtcResult {
    match f() {
        Ok(()) => {
            tracing::debug!(op, "hiprtc call succeeded");
            HIPRTC_SUCCESS
        }
        Err((code, why)) => {
            tracing::debug!(op, code, why = %why, "hiprtc call failed");
            code
        }
    }
}

pub(crate) fn invalid(why: impl Into<String>) -> (hiprtcResult, String) {
    (HIPRTC_ERROR_INVALID_INPUT, why.into())
}

/// A C string argument as UTF-8.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn text(p: *const c_char, what: &str) -> Result<String, (hiprtcResult, String)> {
    if p.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map(str::to_owned)
        .map_err(|_| invalid(format!("{what} is not UTF-8")))
}

fn program(prog: hiprtcProgram) -> Result<Arc<Mutex<Program>>, (hiprtcResult, String)> {
    PROGRAMS.get(prog as u64).ok_or((
        HIPRTC_ERROR_INVALID_PROGRAM,
        format!("{prog:p} is not a live hiprtc program"),
    ))
}

/// `hiprtcResult hiprtcVersion(int* major, int* minor)`: the HIP version whose hiprtc this is.
///
/// # Safety
/// NULL or valid pointers.
#[export]
pub unsafe extern "C" fn hiprtcVersion(major: *mut c_int, minor: *mut c_int) -> hiprtcResult {
    rtc("hiprtcVersion", || {
        if major.is_null() || minor.is_null() {
            return Err(invalid("NULL output"));
        }
        // SAFETY: checked non-NULL; the caller's contract.
        unsafe {
            *major = 5;
            *minor = 2;
        }
        Ok(())
    })
}

/// `const char* hiprtcGetErrorString(hiprtcResult)`.
#[export]
pub extern "C" fn hiprtcGetErrorString(result: hiprtcResult) -> *const c_char {
    let s: &'static CStr = match result {
        0 => c"HIPRTC_SUCCESS",
        1 => c"HIPRTC_ERROR_OUT_OF_MEMORY",
        2 => c"HIPRTC_ERROR_PROGRAM_CREATION_FAILURE",
        3 => c"HIPRTC_ERROR_INVALID_INPUT",
        4 => c"HIPRTC_ERROR_INVALID_PROGRAM",
        5 => c"HIPRTC_ERROR_INVALID_OPTION",
        6 => c"HIPRTC_ERROR_COMPILATION",
        7 => c"HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
        8 => c"HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
        9 => c"HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
        10 => c"HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
        11 => c"HIPRTC_ERROR_INTERNAL_ERROR",
        100 => c"HIPRTC_ERROR_LINKING",
        _ => c"HIPRTC_ERROR_INVALID_INPUT",
    };
    s.as_ptr()
}

/// `hiprtcResult hiprtcCreateProgram(hiprtcProgram* prog, const char* src, const char* name,
/// int numHeaders, const char** headers, const char** includeNames)`.
///
/// # Safety
/// C strings and arrays of `numHeaders` C strings, as hiprtc requires.
#[export]
pub unsafe extern "C" fn hiprtcCreateProgram(
    prog: *mut hiprtcProgram,
    src: *const c_char,
    name: *const c_char,
    num_headers: c_int,
    headers: *const *const c_char,
    include_names: *const *const c_char,
) -> hiprtcResult {
    rtc("hiprtcCreateProgram", || {
        if prog.is_null() {
            return Err(invalid("NULL program output"));
        }
        // SAFETY: the caller's contract on each string.
        let source = unsafe { text(src, "source") }?;
        let name = if name.is_null() {
            "default_program".to_owned()
        } else {
            // SAFETY: as above.
            unsafe { text(name, "name") }?
        };
        let count =
            usize::try_from(num_headers).map_err(|_| invalid(format!("{num_headers} headers")))?;
        if count > 0 && (headers.is_null() || include_names.is_null()) {
            return Err(invalid("headers or their include names are NULL"));
        }
        let mut list = Vec::new();
        list.try_reserve(count.min(4096))
            .map_err(|_| (HIPRTC_ERROR_OUT_OF_MEMORY, "headers".into()))?;
        for i in 0..count {
            // SAFETY: both arrays hold `count` entries by the caller's contract.
            let (body, include) = unsafe { (*headers.add(i), *include_names.add(i)) };
            // SAFETY: as above.
            let include = unsafe { text(include, "include name") }?;
            if !relative_path(&include) {
                return Err(invalid(format!(
                    "include name {include:?} is not a relative path inside the program"
                )));
            }
            // SAFETY: as above.
            list.push((include, unsafe { text(body, "header") }?));
        }
        let handle = PROGRAMS
            .insert(Arc::new(Mutex::new(Program {
                source,
                name,
                headers: list,
                ..Program::default()
            })))
            .ok_or((HIPRTC_ERROR_OUT_OF_MEMORY, "too many programs".into()))?;
        // SAFETY: checked non-NULL.
        unsafe { *prog = handle as hiprtcProgram };
        Ok(())
    })
}

/// `hiprtcResult hiprtcDestroyProgram(hiprtcProgram* prog)`.
///
/// # Safety
/// NULL or a valid pointer.
#[export]
pub unsafe extern "C" fn hiprtcDestroyProgram(prog: *mut hiprtcProgram) -> hiprtcResult {
    rtc("hiprtcDestroyProgram", || {
        if prog.is_null() {
            return Err(invalid("NULL program"));
        }
        // SAFETY: checked non-NULL.
        let handle = unsafe { *prog };
        PROGRAMS.remove(handle as u64).ok_or((
            HIPRTC_ERROR_INVALID_PROGRAM,
            format!("{handle:p} is not a live hiprtc program"),
        ))?;
        Ok(())
    })
}

/// `hiprtcResult hiprtcAddNameExpression(hiprtcProgram prog, const char* name_expression)`.
///
/// # Safety
/// A C string.
#[export]
pub unsafe extern "C" fn hiprtcAddNameExpression(
    prog: hiprtcProgram,
    name_expression: *const c_char,
) -> hiprtcResult {
    rtc("hiprtcAddNameExpression", || {
        let p = program(prog)?;
        // SAFETY: the caller's contract.
        let expression = unsafe { text(name_expression, "name expression") }?;
        let mut p = p.lock();
        if p.code.is_some() {
            return Err((
                HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION,
                "the program is already compiled".into(),
            ));
        }
        p.name_expressions.push(expression);
        Ok(())
    })
}

/// `hiprtcResult hiprtcGetLoweredName(hiprtcProgram prog, const char* name_expression,
/// const char** lowered_name)`: the mangled name of a kernel or device function the program
/// defines; the string lives as long as the program.
///
/// # Safety
/// A C string and a valid output pointer.
#[export]
pub unsafe extern "C" fn hiprtcGetLoweredName(
    prog: hiprtcProgram,
    name_expression: *const c_char,
    lowered_name: *mut *const c_char,
) -> hiprtcResult {
    rtc("hiprtcGetLoweredName", || {
        let p = program(prog)?;
        // SAFETY: the caller's contract.
        let expression = unsafe { text(name_expression, "name expression") }?;
        if lowered_name.is_null() {
            return Err(invalid("NULL output"));
        }
        let p = p.lock();
        if p.code.is_none() {
            return Err((
                HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION,
                "the program is not compiled".into(),
            ));
        }
        let (_, mangled) = p.lowered.iter().find(|(e, _)| *e == expression).ok_or((
            HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID,
            format!("{expression:?} was not added, or names nothing the program defines"),
        ))?;
        // The program keeps the NUL-terminated name (pushed at compilation) alive.
        // SAFETY: checked non-NULL.
        unsafe { *lowered_name = mangled.as_ptr().cast() };
        Ok(())
    })
}

/// `hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int numOptions, const char** options)`.
///
/// # Safety
/// An array of `numOptions` C strings.
#[export]
pub unsafe extern "C" fn hiprtcCompileProgram(
    prog: hiprtcProgram,
    num_options: c_int,
    options: *const *const c_char,
) -> hiprtcResult {
    rtc("hiprtcCompileProgram", || {
        let p = program(prog)?;
        let count = usize::try_from(num_options).map_err(|_| {
            (
                HIPRTC_ERROR_INVALID_OPTION,
                format!("{num_options} options"),
            )
        })?;
        if count > 0 && options.is_null() {
            return Err((HIPRTC_ERROR_INVALID_OPTION, "NULL options".into()));
        }
        let mut given = Vec::new();
        for i in 0..count {
            // SAFETY: the array holds `count` entries by the caller's contract.
            let o = unsafe { text(*options.add(i), "option") }
                .map_err(|(_, why)| (HIPRTC_ERROR_INVALID_OPTION, why))?;
            given.push(o);
        }
        let mut p = p.lock();
        compile(&mut p, &given)
    })
}

/// `hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram prog, size_t* logSizeRet)`: with the
/// terminating NUL, 0 when there is no log.
///
/// # Safety
/// A valid output pointer.
#[export]
pub unsafe extern "C" fn hiprtcGetProgramLogSize(
    prog: hiprtcProgram,
    size: *mut usize,
) -> hiprtcResult {
    rtc("hiprtcGetProgramLogSize", || {
        let p = program(prog)?;
        if size.is_null() {
            return Err(invalid("NULL output"));
        }
        let n = p.lock().log.len();
        // SAFETY: checked non-NULL.
        unsafe { *size = if n == 0 { 0 } else { n + 1 } };
        Ok(())
    })
}

/// `hiprtcResult hiprtcGetProgramLog(hiprtcProgram prog, char* log)`: NUL-terminated.
///
/// # Safety
/// `log` holds what `hiprtcGetProgramLogSize` reported.
#[export]
pub unsafe extern "C" fn hiprtcGetProgramLog(
    prog: hiprtcProgram,
    log: *mut c_char,
) -> hiprtcResult {
    rtc("hiprtcGetProgramLog", || {
        let p = program(prog)?;
        if log.is_null() {
            return Err(invalid("NULL output"));
        }
        let p = p.lock();
        // SAFETY: the caller sized `log` from hiprtcGetProgramLogSize.
        unsafe {
            std::ptr::copy_nonoverlapping(p.log.as_ptr(), log.cast(), p.log.len());
            *log.add(p.log.len()) = 0;
        }
        Ok(())
    })
}

/// `hiprtcResult hiprtcGetCodeSize(hiprtcProgram prog, size_t* codeSizeRet)`.
///
/// # Safety
/// A valid output pointer.
#[export]
pub unsafe extern "C" fn hiprtcGetCodeSize(prog: hiprtcProgram, size: *mut usize) -> hiprtcResult {
    rtc("hiprtcGetCodeSize", || {
        let p = program(prog)?;
        if size.is_null() {
            return Err(invalid("NULL output"));
        }
        let n = p.lock().code.as_ref().map_or(0, Vec::len);
        // SAFETY: checked non-NULL.
        unsafe { *size = n };
        Ok(())
    })
}

/// `hiprtcResult hiprtcGetCode(hiprtcProgram prog, char* code)`.
///
/// # Safety
/// `code` holds what `hiprtcGetCodeSize` reported.
#[export]
pub unsafe extern "C" fn hiprtcGetCode(prog: hiprtcProgram, code: *mut c_char) -> hiprtcResult {
    rtc("hiprtcGetCode", || {
        let p = program(prog)?;
        if code.is_null() {
            return Err(invalid("NULL output"));
        }
        let p = p.lock();
        let bytes = p.code.as_ref().ok_or((
            HIPRTC_ERROR_INVALID_PROGRAM,
            "the program is not compiled".into(),
        ))?;
        // SAFETY: the caller sized `code` from hiprtcGetCodeSize.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), code.cast(), bytes.len()) };
        Ok(())
    })
}

/// A relative path with no `..`: where a header may be written inside the program's directory.
fn relative_path(name: &str) -> bool {
    let path = Path::new(name);
    !name.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// The compiler to run: `ROCLOAD_HIPRTC_CLANG`, else the first of Debian's clang 19 names found.
pub(crate) fn compiler() -> Option<OsString> {
    if let Some(c) = &Config::global().hiprtc_clang {
        return Some(c.clone());
    }
    if Path::new(DEBIAN_CLANG).exists() {
        return Some(DEBIAN_CLANG.into());
    }
    let path = std::env::var_os("PATH")?;
    ["clang++-19", "clang++"].into_iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
            .map(PathBuf::into_os_string)
    })
}

/// clang's arguments for hiprtc's `options`: `--gpu-architecture=X` / `-arch=X` become
/// `--offload-arch=X`; everything else passes through.
fn translate_options(options: &[String]) -> (Vec<String>, Option<String>) {
    let mut out = Vec::new();
    let mut arch = None;
    for o in options {
        let target = ["--gpu-architecture=", "-arch=", "--offload-arch="]
            .iter()
            .find_map(|p| o.strip_prefix(p));
        match target {
            Some(t) => arch = Some(t.to_owned()),
            None => out.push(o.clone()),
        }
    }
    (out, arch)
}

/// A fresh directory for one compilation.
pub(crate) fn work_dir() -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "rocload-hiprtc-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

fn compile(p: &mut Program, options: &[String]) -> Result<(), (hiprtcResult, String)> {
    let (args, arch) = translate_options(options);
    let arch = match arch {
        Some(a) => a,
        None => runtime()
            .agent(crate::current_device())
            .map(|a| a.isa().target_id().to_string())
            .map_err(|e| (HIPRTC_ERROR_INTERNAL_ERROR, format!("no device: {e}")))?,
    };
    let clang = compiler().ok_or((
        HIPRTC_ERROR_COMPILATION,
        format!("no compiler: install clang-19, or name one in {HIPRTC_CLANG_ENV}"),
    ))?;
    let dir =
        work_dir().map_err(|e| (HIPRTC_ERROR_INTERNAL_ERROR, format!("work directory: {e}")))?;
    let result = compile_in(&dir, p, &clang, &arch, &args);
    if let Err(e) = std::fs::remove_dir_all(&dir) {
        tracing::debug!(dir = %dir.display(), error = %e, "hiprtc: work directory not removed");
    }
    result
}

fn compile_in(
    dir: &Path,
    p: &mut Program,
    clang: &OsString,
    arch: &str,
    args: &[String],
) -> Result<(), (hiprtcResult, String)> {
    let io = |what: &str, e: std::io::Error| (HIPRTC_ERROR_INTERNAL_ERROR, format!("{what}: {e}"));
    for (include, body) in &p.headers {
        let path = dir.join(include);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("header directory", e))?;
        }
        std::fs::write(&path, body).map_err(|e| io("header", e))?;
    }
    let source = dir.join("program.hip");
    // A name expression instantiates what it names (a kernel template): take its address at
    // namespace scope, as the host side of a launch would.
    let mut text = p.source.clone();
    for (i, e) in p.name_expressions.iter().enumerate() {
        let e = e.trim().trim_start_matches('&');
        text.push_str(&format!(
            "\nstatic __attribute__((used)) auto rocload_hiprtc_name_{i} = &({e});\n"
        ));
    }
    std::fs::write(&source, &text).map_err(|e| io("source", e))?;
    let output = dir.join("program.co");
    let mut cmd = Command::new(clang);
    // hiprtc programs use the HIP device API without including it, as with AMD's hiprtc.
    cmd.args([
        "-x",
        "hip",
        "--cuda-device-only",
        "--no-gpu-bundle-output",
        "-c",
        "-O3",
    ])
    .args(["-include", "hip/hip_runtime.h"])
    .arg(format!("--offload-arch={arch}"))
    .arg("-I")
    .arg(dir);
    let libs = Config::global().device_lib_path.clone().or_else(|| {
        Path::new(DEBIAN_DEVICE_LIBS)
            .is_dir()
            .then(|| DEBIAN_DEVICE_LIBS.into())
    });
    if let Some(libs) = libs {
        let mut flag = OsString::from("--rocm-device-lib-path=");
        flag.push(libs);
        cmd.arg(flag);
    }
    cmd.args(args.iter())
        .arg(&source)
        .arg("-o")
        .arg(&output)
        .stdin(Stdio::null());
    tracing::debug!(program = %p.name, command = ?cmd, "hiprtc: compiling");
    let out = cmd
        .output()
        .map_err(|e| (HIPRTC_ERROR_COMPILATION, format!("running {clang:?}: {e}")))?;
    // The log names the program as the user did, not our temporary file.
    let log = String::from_utf8_lossy(&out.stderr) + String::from_utf8_lossy(&out.stdout);
    p.log = log.replace(&source.display().to_string(), &p.name);
    if !out.status.success() {
        return Err((
            HIPRTC_ERROR_COMPILATION,
            format!("{clang:?} exited with {}", out.status),
        ));
    }
    let code = std::fs::read(&output).map_err(|e| io("compiled code object", e))?;
    if args.iter().any(|a| a == "-fgpu-rdc") {
        // Relocatable device code: bitcode, for hiprtcLink*.
        p.bitcode = Some(code);
        p.code = None;
        return Ok(());
    }
    p.lowered = lower_names(&code, &p.name_expressions);
    p.code = Some(code);
    p.bitcode = None;
    Ok(())
}

/// Each name expression with the mangled name of the kernel or device function it names (a
/// leading `&` ignored; matched against demangled names without return type or parameters).
/// Every mangled name ends in a NUL, so hiprtcGetLoweredName can hand it out as a C string.
fn lower_names(code: &[u8], expressions: &[String]) -> Vec<(String, String)> {
    let Ok(co) = CodeObject::parse(code) else {
        return Vec::new();
    };
    let names: Vec<&str> = co
        .kernels()
        .iter()
        .map(|k| k.name)
        .chain(co.functions().iter().map(|f| f.name))
        .collect();
    let stem = |raw: &str| demangle(raw).map(|d| canonical_spacing(unqualified_call(&d)));
    expressions
        .iter()
        .filter_map(|e| {
            let want = e.trim().trim_start_matches('&').trim();
            let canonical = canonical_spacing(want);
            let raw = names
                .iter()
                .find(|n| **n == want || stem(n).is_some_and(|s| s == canonical))?;
            Some((e.clone(), format!("{raw}\0")))
        })
        .collect()
}

/// `name` with the spaces C++ ignores taken out: a space stays only between two characters of
/// identifiers or numbers (`unsigned int`), so `f<complex<double>>` and the demangler's
/// `f<complex<double> >`, or `f<int, 4>` and `f<int,4>`, compare equal.
fn canonical_spacing(name: &str) -> String {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(name.len());
    let mut pending_space = false;
    for c in name.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && out.chars().next_back().is_some_and(word) && word(c) {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
    }
    out
}

/// A demangled function name without its parameters and, for templates, without the return
/// type they are printed with: `void axpy<float>(float, float*)` -> `axpy<float>`.
fn unqualified_call(demangled: &str) -> &str {
    let mut depth = 0i32;
    let (mut start, mut end) = (0, demangled.len());
    for (i, c) in demangled.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => {
                end = i;
                break;
            }
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    &demangled[start.min(end)..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_include_names() {
        let (args, arch) =
            translate_options(&["--gpu-architecture=gfx1030".to_owned(), "-DN=4".to_owned()]);
        assert_eq!(
            (args, arch.as_deref()),
            (vec!["-DN=4".to_owned()], Some("gfx1030"))
        );
        assert!(relative_path("a/b.h"));
        assert!(!relative_path("../b.h") && !relative_path("/etc/passwd") && !relative_path(""));
        assert_eq!(
            unqualified_call("void axpy<float>(float, float*)"),
            "axpy<float>"
        );
        assert_eq!(
            unqualified_call("void k<unsigned int, 4>(int*)"),
            "k<unsigned int, 4>"
        );
        assert_eq!(unqualified_call("saxpy(float, float*)"), "saxpy");
        assert_eq!(
            canonical_spacing("my_sqrt<complex<double> >"),
            canonical_spacing("my_sqrt<complex<double>>")
        );
        assert_eq!(
            canonical_spacing(" k< unsigned  int , 4 > "),
            "k<unsigned int,4>"
        );
    }
}

/// The bitcode of a program compiled with `-fgpu-rdc`.
pub(crate) fn program_bitcode(prog: hiprtcProgram) -> Result<Vec<u8>, (hiprtcResult, String)> {
    program(prog)?.lock().bitcode.clone().ok_or((
        HIPRTC_ERROR_INVALID_PROGRAM,
        "the program was not compiled with -fgpu-rdc: it has no bitcode".into(),
    ))
}

/// `hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram prog, size_t* bitcode_size)` (HIP 5.3).
///
/// # Safety
/// NULL or a valid pointer.
#[export]
pub unsafe extern "C" fn hiprtcGetBitcodeSize(
    prog: hiprtcProgram,
    size: *mut usize,
) -> hiprtcResult {
    rtc("hiprtcGetBitcodeSize", || {
        let bitcode = program_bitcode(prog)?;
        if size.is_null() {
            return Err(invalid("NULL output"));
        }
        // SAFETY: checked non-NULL; the caller's contract.
        unsafe { size.write(bitcode.len()) };
        Ok(())
    })
}

/// `hiprtcResult hiprtcGetBitcode(hiprtcProgram prog, char* bitcode)` (HIP 5.3).
///
/// # Safety
/// `bitcode` holds what `hiprtcGetBitcodeSize` reported.
#[export]
pub unsafe extern "C" fn hiprtcGetBitcode(
    prog: hiprtcProgram,
    bitcode: *mut c_char,
) -> hiprtcResult {
    rtc("hiprtcGetBitcode", || {
        let bytes = program_bitcode(prog)?;
        if bitcode.is_null() {
            return Err(invalid("NULL output"));
        }
        // SAFETY: the caller sized `bitcode` from hiprtcGetBitcodeSize.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), bitcode.cast(), bytes.len()) };
        Ok(())
    })
}
