//! Runtime linking (`hiprtcLink*`, HIP 5.3; `hipLink*`, its HIP 6.4 twin): LLVM bitcode from
//! `hiprtcCompileProgram(-fgpu-rdc)` (already carrying the device-library functions it uses),
//! bundled bitcode (an offload bundle: its entry for the target is taken) and AMDGPU
//! relocatable objects are linked into one code object that `hipModuleLoadData` loads. The link
//! runs the same clang as hiprtc (`-target amdgcn-amd-amdhsa -mcpu=<target> -nogpulib`, lld
//! behind it) for the current device's target, or the one `HIPRTC_JIT_IR_TO_ISA_OPT_EXT` /
//! `--offload-arch=` names. Archives of bundled bitcode, PTX, cubins and SPIR-V are refused with
//! `HIPRTC_ERROR_INVALID_INPUT`. Not for compiling source (`super::hiprtc`).

use std::ffi::{c_char, c_uint, c_void, CStr};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use parking_lot::Mutex;
use rocload_ffi::{export, HandleTable, Tag};

use crate::hiprtc::{
    compiler, hiprtcResult, invalid, rtc, work_dir, HIPRTC_ERROR_INTERNAL_ERROR,
    HIPRTC_ERROR_INVALID_INPUT, HIPRTC_ERROR_LINKING, HIPRTC_SUCCESS,
};
use crate::*;

/// `hiprtcLinkState` / `hipLinkState_t` handles.
const LINK_STATE: Tag = Tag(0x4C);

/// `hiprtcJITInputType` / `hipJitInputType`.
mod input {
    pub const OBJECT: u32 = 3;
    pub const LLVM_BITCODE: u32 = 100;
    pub const LLVM_BUNDLED_BITCODE: u32 = 101;
}

/// `HIPRTC_JIT_IR_TO_ISA_OPT_EXT` / `hipJitOptionIRtoISAOptExt`: an array of option strings
/// for the IR-to-ISA step; `--offload-arch=`/`-mcpu=` among them chooses the target.
const IR_TO_ISA_OPT_EXT: u32 = 10000;
/// `..._COUNT_EXT`: how many.
const IR_TO_ISA_OPT_COUNT_EXT: u32 = 10001;

/// Most inputs one link takes, and bytes one input may have (bounds a hostile caller).
const MAX_INPUTS: usize = 4096;
const MAX_INPUT_BYTES: usize = 1 << 30;

#[derive(Debug, Default)]
struct Link {
    /// (file name, bytes), in the order added.
    inputs: Vec<(String, Vec<u8>)>,
    target: Option<String>,
    /// The linked code object, once complete; it lives until the state is destroyed.
    output: Option<Vec<u8>>,
    log: String,
}

static LINKS: HandleTable<Arc<Mutex<Link>>> = HandleTable::new(LINK_STATE);

fn state(handle: *mut c_void) -> Result<Arc<Mutex<Link>>, (hiprtcResult, String)> {
    LINKS
        .get(handle as u64)
        .ok_or_else(|| invalid(format!("{handle:p} is not a live link state")))
}

/// The target the options name (`--offload-arch=X` or `-mcpu=X` among the IR-to-ISA options).
///
/// # Safety
/// `options`/`values` hold `count` entries, as hiprtc's API defines them.
unsafe fn target_option(
    count: c_uint,
    options: *const u32,
    values: *const *mut c_void,
) -> Result<Option<String>, (hiprtcResult, String)> {
    if count == 0 {
        return Ok(None);
    }
    if options.is_null() || values.is_null() {
        return Err(invalid("NULL options"));
    }
    let read = |i: usize| {
        // SAFETY: `count` entries by the caller's contract.
        unsafe { (options.add(i).read(), values.add(i).read()) }
    };
    let entries: Vec<(u32, *mut c_void)> = (0..count as usize).map(read).collect();
    let strings = entries
        .iter()
        .find(|(o, _)| *o == IR_TO_ISA_OPT_EXT)
        .map(|(_, v)| *v as *const *const c_char);
    let n = entries
        .iter()
        .find(|(o, _)| *o == IR_TO_ISA_OPT_COUNT_EXT)
        .map_or(0, |(_, v)| *v as usize);
    let (Some(strings), 1..=256) = (strings, n) else {
        return Ok(None);
    };
    for i in 0..n {
        // SAFETY: `n` strings by the caller's contract.
        let s = unsafe { *strings.add(i) };
        if s.is_null() {
            continue;
        }
        // SAFETY: a NUL-terminated option.
        let o = unsafe { CStr::from_ptr(s) }.to_string_lossy();
        if let Some(t) = o
            .strip_prefix("--offload-arch=")
            .or_else(|| o.strip_prefix("-mcpu="))
        {
            return Ok(Some(t.to_owned()));
        }
    }
    Ok(None)
}

fn create(
    count: c_uint,
    options: *const u32,
    values: *const *mut c_void,
    out: *mut *mut c_void,
) -> Result<(), (hiprtcResult, String)> {
    if out.is_null() {
        return Err(invalid("NULL link state output"));
    }
    // SAFETY: the caller's contract on the option arrays.
    let target = unsafe { target_option(count, options, values) }?;
    let handle = LINKS
        .insert(Arc::new(Mutex::new(Link {
            target,
            ..Link::default()
        })))
        .ok_or_else(|| invalid("2^24 link states are live"))?;
    // SAFETY: checked non-NULL; writable by the caller's contract.
    unsafe { out.write(handle as *mut c_void) };
    Ok(())
}

/// The bytes an input of `kind` contributes: bitcode and objects as given, a bundle's entry
/// for `target`.
fn contribution(
    kind: u32,
    bytes: Vec<u8>,
    target: &str,
) -> Result<Vec<u8>, (hiprtcResult, String)> {
    match kind {
        input::LLVM_BITCODE | input::OBJECT => Ok(bytes),
        input::LLVM_BUNDLED_BITCODE => {
            let options = rocload_lib::container::ReadOptions::default();
            let containers = rocload_lib::container::read_containers(&bytes, &options)
                .map_err(|e| invalid(format!("bundled bitcode: {e}")))?;
            for c in &containers {
                let entries = c
                    .entries()
                    .map_err(|e| invalid(format!("bundled bitcode: {e}")))?;
                let found = entries.iter().position(|e| {
                    e.id.rsplit("--").next().is_some_and(|t| t == target)
                        || e.id.ends_with(&format!("-{target}"))
                });
                if let Some(index) = found {
                    return c
                        .container
                        .extract(index)
                        .map(|b| b.into_owned())
                        .map_err(|e| invalid(format!("bundled bitcode: {e}")));
                }
            }
            Err(invalid(format!("the bundle has no entry for {target}")))
        }
        other => Err(invalid(format!(
            "input type {other}: only LLVM bitcode, bundled bitcode and AMDGPU objects link here"
        ))),
    }
}

fn target_of(link: &Link) -> Result<String, (hiprtcResult, String)> {
    match &link.target {
        Some(t) => Ok(t.clone()),
        None => runtime()
            .agent(current_device())
            .map(|a| a.isa().target_id().to_string())
            .map_err(|e| (HIPRTC_ERROR_INTERNAL_ERROR, format!("no device: {e}"))),
    }
}

fn add(
    handle: *mut c_void,
    kind: u32,
    bytes: Vec<u8>,
    name: &str,
) -> Result<(), (hiprtcResult, String)> {
    let link = state(handle)?;
    let mut link = link.lock();
    if link.inputs.len() >= MAX_INPUTS {
        return Err(invalid(format!("more than {MAX_INPUTS} inputs")));
    }
    let target = target_of(&link)?;
    let bytes = contribution(kind, bytes, &target)?;
    let extension = if bytes.starts_with(b"\x7fELF") {
        "o"
    } else {
        "bc"
    };
    let file = format!("input{}-{}.{extension}", link.inputs.len(), sanitize(name));
    link.inputs.push((file, bytes));
    Ok(())
}

/// A name usable in a file name.
fn sanitize(name: &str) -> String {
    name.chars()
        .take(64)
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

fn complete(
    handle: *mut c_void,
    bin_out: *mut *mut c_void,
    size_out: *mut usize,
) -> Result<(), (hiprtcResult, String)> {
    if bin_out.is_null() || size_out.is_null() {
        return Err(invalid("NULL output"));
    }
    let link = state(handle)?;
    let mut link = link.lock();
    if link.inputs.is_empty() {
        return Err(invalid("nothing to link"));
    }
    let target = target_of(&link)?;
    let clang = compiler().ok_or((HIPRTC_ERROR_LINKING, "no compiler: install clang-19".into()))?;
    let dir =
        work_dir().map_err(|e| (HIPRTC_ERROR_INTERNAL_ERROR, format!("work directory: {e}")))?;
    let result = link_in(&dir, &link.inputs, &clang, &target);
    if let Err(e) = std::fs::remove_dir_all(&dir) {
        tracing::debug!(dir = %dir.display(), error = %e, "hiprtc link: work directory not removed");
    }
    let (log, code) = result?;
    link.log = log;
    let code = link.output.insert(code);
    // SAFETY: checked non-NULL; the pointer stays valid until the state is destroyed (the
    // output lives in it).
    unsafe {
        bin_out.write(code.as_mut_ptr().cast());
        size_out.write(code.len());
    }
    Ok(())
}

fn link_in(
    dir: &Path,
    inputs: &[(String, Vec<u8>)],
    clang: &std::ffi::OsStr,
    target: &str,
) -> Result<(String, Vec<u8>), (hiprtcResult, String)> {
    let io = |what: &str, e: std::io::Error| (HIPRTC_ERROR_INTERNAL_ERROR, format!("{what}: {e}"));
    let mut cmd = Command::new(clang);
    cmd.args(["-target", "amdgcn-amd-amdhsa", "-nogpulib", "-O3"])
        .arg(format!("-mcpu={target}"));
    for (file, bytes) in inputs {
        let path = dir.join(file);
        std::fs::write(&path, bytes).map_err(|e| io("input", e))?;
        cmd.arg(path);
    }
    let output = dir.join("linked.co");
    cmd.arg("-o").arg(&output).stdin(Stdio::null());
    tracing::debug!(command = ?cmd, "hiprtc: linking");
    let out = cmd
        .output()
        .map_err(|e| (HIPRTC_ERROR_LINKING, format!("running {clang:?}: {e}")))?;
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err((HIPRTC_ERROR_LINKING, format!("the link failed: {log}")));
    }
    let code = std::fs::read(&output).map_err(|e| io("linked code object", e))?;
    Ok((log, code))
}

/// Reads `size` bytes at `data` (bounded).
///
/// # Safety
/// `data` is valid for `size` bytes.
unsafe fn bytes_of(data: *const c_void, size: usize) -> Result<Vec<u8>, (hiprtcResult, String)> {
    if data.is_null() || size == 0 {
        return Err(invalid("no data"));
    }
    if size > MAX_INPUT_BYTES {
        return Err(invalid(format!(
            "{size} bytes: over the {MAX_INPUT_BYTES}-byte limit"
        )));
    }
    let mut v = Vec::new();
    v.try_reserve_exact(size)
        .map_err(|_| invalid(format!("cannot hold {size} bytes")))?;
    // SAFETY: valid for `size` bytes by the caller's contract.
    v.extend_from_slice(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) });
    Ok(v)
}

/// Reads the file `path` names (bounded).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
unsafe fn file_of(path: *const c_char) -> Result<(String, Vec<u8>), (hiprtcResult, String)> {
    if path.is_null() {
        return Err(invalid("NULL path"));
    }
    // SAFETY: NUL-terminated by the caller's contract.
    let path = unsafe { CStr::from_ptr(path) }
        .to_string_lossy()
        .into_owned();
    let len = std::fs::metadata(&path)
        .map_err(|e| invalid(format!("{path}: {e}")))?
        .len();
    if len > MAX_INPUT_BYTES as u64 {
        return Err(invalid(format!("{path}: {len} bytes, over the limit")));
    }
    let bytes = std::fs::read(&path).map_err(|e| invalid(format!("{path}: {e}")))?;
    Ok((path, bytes))
}

/// `hiprtcResult hiprtcLinkCreate(unsigned int num_options, hiprtcJIT_option* option_ptr,
/// void** option_vals_pptr, hiprtcLinkState* hip_link_state_ptr)`.
///
/// # Safety
/// The option arrays hold `num_options` entries; the output is writable.
#[export]
pub unsafe extern "C" fn hiprtcLinkCreate(
    num_options: c_uint,
    options: *const u32,
    values: *const *mut c_void,
    link: *mut *mut c_void,
) -> hiprtcResult {
    rtc("hiprtcLinkCreate", || {
        create(num_options, options, values, link)
    })
}

/// `hiprtcResult hiprtcLinkAddData(hiprtcLinkState, hiprtcJITInputType, void* image, size_t
/// image_size, const char* name, unsigned int num_options, hiprtcJIT_option*, void**)`.
///
/// # Safety
/// `image` holds `image_size` bytes; `name` is NULL or a C string.
#[export]
pub unsafe extern "C" fn hiprtcLinkAddData(
    link: *mut c_void,
    kind: u32,
    image: *const c_void,
    size: usize,
    name: *const c_char,
    _num_options: c_uint,
    _options: *const u32,
    _values: *const *mut c_void,
) -> hiprtcResult {
    rtc("hiprtcLinkAddData", || {
        // SAFETY: the caller's contract.
        let bytes = unsafe { bytes_of(image, size) }?;
        let name = if name.is_null() {
            "data".to_owned()
        } else {
            // SAFETY: a C string by the caller's contract.
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        };
        add(link, kind, bytes, &name)
    })
}

/// `hiprtcResult hiprtcLinkAddFile(hiprtcLinkState, hiprtcJITInputType, const char* file_path,
/// unsigned int num_options, hiprtcJIT_option*, void**)`.
///
/// # Safety
/// `path` is NULL or a C string.
#[export]
pub unsafe extern "C" fn hiprtcLinkAddFile(
    link: *mut c_void,
    kind: u32,
    path: *const c_char,
    _num_options: c_uint,
    _options: *const u32,
    _values: *const *mut c_void,
) -> hiprtcResult {
    rtc("hiprtcLinkAddFile", || {
        // SAFETY: the caller's contract.
        let (path, bytes) = unsafe { file_of(path) }?;
        let stem = Path::new(&path)
            .file_stem()
            .map_or("file".into(), |s| s.to_string_lossy().into_owned());
        add(link, kind, bytes, &stem)
    })
}

/// `hiprtcResult hiprtcLinkComplete(hiprtcLinkState, void** bin_out, size_t* size_out)`: the
/// linked code object, valid until the state is destroyed.
///
/// # Safety
/// The outputs are writable.
#[export]
pub unsafe extern "C" fn hiprtcLinkComplete(
    link: *mut c_void,
    bin_out: *mut *mut c_void,
    size_out: *mut usize,
) -> hiprtcResult {
    rtc("hiprtcLinkComplete", || complete(link, bin_out, size_out))
}

/// `hiprtcResult hiprtcLinkDestroy(hiprtcLinkState)`.
#[export]
pub extern "C" fn hiprtcLinkDestroy(link: *mut c_void) -> hiprtcResult {
    rtc("hiprtcLinkDestroy", || {
        LINKS
            .remove(link as u64)
            .map(|_| ())
            .ok_or_else(|| invalid(format!("{link:p} is not a live link state")))
    })
}

/// The HIP error of a hiprtc result, for the `hipLink*` twins (HIP 6.4).
fn hip_code(result: hiprtcResult) -> hipError_t {
    match result {
        HIPRTC_SUCCESS => hipSuccess,
        HIPRTC_ERROR_INVALID_INPUT => hipErrorInvalidValue,
        crate::hiprtc::HIPRTC_ERROR_OUT_OF_MEMORY => hipErrorOutOfMemory,
        _ => hipErrorInvalidImage,
    }
}

/// `hipError_t hipLinkCreate(unsigned int numOptions, hipJitOption* options, void**
/// optionValues, hipLinkState_t* stateOut)` (HIP 6.4): `hiprtcLinkCreate`.
///
/// # Safety
/// As `hiprtcLinkCreate`.
#[export]
pub unsafe extern "C" fn hipLinkCreate(
    num_options: c_uint,
    options: *const u32,
    values: *const *mut c_void,
    link: *mut *mut c_void,
) -> hipError_t {
    // SAFETY: the same contract.
    hip_code(unsafe { hiprtcLinkCreate(num_options, options, values, link) })
}

/// `hipError_t hipLinkAddData(hipLinkState_t, hipJitInputType, void* data, size_t size, const
/// char* name, unsigned int numOptions, hipJitOption*, void**)` (HIP 6.4).
///
/// # Safety
/// As `hiprtcLinkAddData`.
#[export]
pub unsafe extern "C" fn hipLinkAddData(
    link: *mut c_void,
    kind: u32,
    data: *const c_void,
    size: usize,
    name: *const c_char,
    num_options: c_uint,
    options: *const u32,
    values: *const *mut c_void,
) -> hipError_t {
    // SAFETY: the same contract.
    hip_code(unsafe {
        hiprtcLinkAddData(link, kind, data, size, name, num_options, options, values)
    })
}

/// `hipError_t hipLinkAddFile(hipLinkState_t, hipJitInputType, const char* path, unsigned
/// int numOptions, hipJitOption*, void**)` (HIP 6.4).
///
/// # Safety
/// As `hiprtcLinkAddFile`.
#[export]
pub unsafe extern "C" fn hipLinkAddFile(
    link: *mut c_void,
    kind: u32,
    path: *const c_char,
    num_options: c_uint,
    options: *const u32,
    values: *const *mut c_void,
) -> hipError_t {
    // SAFETY: the same contract.
    hip_code(unsafe { hiprtcLinkAddFile(link, kind, path, num_options, options, values) })
}

/// `hipError_t hipLinkComplete(hipLinkState_t, void** hipBinOut, size_t* sizeOut)` (HIP 6.4).
///
/// # Safety
/// As `hiprtcLinkComplete`.
#[export]
pub unsafe extern "C" fn hipLinkComplete(
    link: *mut c_void,
    bin_out: *mut *mut c_void,
    size_out: *mut usize,
) -> hipError_t {
    // SAFETY: the same contract.
    hip_code(unsafe { hiprtcLinkComplete(link, bin_out, size_out) })
}

/// `hipError_t hipLinkDestroy(hipLinkState_t)` (HIP 6.4).
#[export]
pub extern "C" fn hipLinkDestroy(link: *mut c_void) -> hipError_t {
    hip_code(hiprtcLinkDestroy(link))
}
