//! The C surface of the instrumentation hooks (`rocload_tool_register` in `include/rocload.h`)
//! and the loading of tool libraries named by `ROCLOAD_TOOLS` (what `rocload run --tool`
//! sets): each is `dlopen`ed at the first HIP call and its `rocload_tool_init` is called.
//!
//! Strings and arrays handed to callbacks live for the duration of the call only.

use rocload_ffi::export;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use rocload_lib::device::Completion;
use rocload_lib::loader::SymbolClass;
use rocload_lib::runtime::config::Config;
use rocload_lib::runtime::{CodeObjectEvent, DispatchEvent, Runtime, Tool, ToolId};

use crate::types::*;
use crate::{call, out, Failure};

/// `rocload_symbol_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RocloadSymbol {
    /// Raw name (kernels without `.kd`).
    pub name: *const c_char,
    /// Demangled name, or NULL when the raw name is not mangled.
    pub demangled_name: *const c_char,
    /// `ROCLOAD_SYMBOL_KERNEL`, `_FUNCTION` or `_VARIABLE`.
    pub kind: c_int,
    /// Device address (a kernel's descriptor).
    pub address: u64,
    /// Size in bytes.
    pub size: u64,
    /// A kernel's first instruction; 0 otherwise.
    pub code_address: u64,
}

/// `rocload_code_object_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RocloadCodeObject {
    /// Never reused; load and unload of one code object share it.
    pub id: u64,
    /// Device ordinal.
    pub device: c_int,
    /// `file://PATH#offset=N&size=M` or `memory://PID#offset=0xADDR&size=N`.
    pub uri: *const c_char,
    /// Address of the loaded image.
    pub load_base: u64,
    /// Bytes of the loaded image.
    pub load_size: u64,
    /// Added to an ELF symbol value to get its device address.
    pub load_delta: u64,
    /// The symbols it defines.
    pub symbols: *const RocloadSymbol,
    /// How many.
    pub symbol_count: usize,
}

/// `rocload_dispatch_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RocloadDispatch {
    /// Never reused; the completion carries the same value.
    pub id: u64,
    /// Device ordinal.
    pub device: c_int,
    /// The stream's id.
    pub stream: u64,
    /// Raw kernel name.
    pub kernel_name: *const c_char,
    /// Demangled kernel name, or NULL.
    pub demangled_name: *const c_char,
    /// The kernel descriptor's address.
    pub kernel_object: u64,
    /// First instruction, or 0.
    pub code_address: u64,
    /// Work-groups.
    pub grid: [u32; 3],
    /// Work-items per work-group.
    pub block: [u32; 3],
    /// Dynamic LDS bytes.
    pub dynamic_lds: u32,
    /// Kernarg segment address.
    pub kernarg: u64,
}

/// `rocload_dispatch_result_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RocloadDispatchResult {
    /// `hipSuccess`, or `hipErrorLaunchFailure` when the kernel faulted or never ran.
    pub status: hipError_t,
    /// Execution time in nanoseconds.
    pub duration_ns: u64,
    /// Wave instructions executed (software agent; 0 elsewhere).
    pub instructions: u64,
    /// Waves run (software agent; 0 elsewhere).
    pub waves: u64,
    /// What went wrong, or NULL.
    pub error: *const c_char,
}

type CodeObjectFn = unsafe extern "C" fn(*const RocloadCodeObject, *mut c_void);
type DispatchFn = unsafe extern "C" fn(*const RocloadDispatch, *mut c_void);
type DispatchEndFn =
    unsafe extern "C" fn(*const RocloadDispatch, *const RocloadDispatchResult, *mut c_void);

/// `rocload_tool_t`: callbacks, any of which may be NULL.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RocloadTool {
    /// `sizeof(rocload_tool_t)` as the tool was compiled: fields past it are treated as NULL,
    /// so tools built against an older header keep working.
    pub struct_size: usize,
    /// Passed back to every callback.
    pub user_data: *mut c_void,
    /// A code object was loaded.
    pub code_object_loaded: Option<CodeObjectFn>,
    /// A code object is about to be unloaded.
    pub code_object_unloaded: Option<CodeObjectFn>,
    /// A dispatch is about to be submitted.
    pub dispatch_begin: Option<DispatchFn>,
    /// A dispatch completed or failed.
    pub dispatch_end: Option<DispatchEndFn>,
}

/// A C tool as a [`Tool`].
struct CTool(RocloadTool);

// SAFETY: the callbacks and user data belong to the tool, which by the header's contract
// accepts calls from any thread.
unsafe impl Send for CTool {}
// SAFETY: as above.
unsafe impl Sync for CTool {}

/// A string for C; interior NULs (impossible in ELF names and our URIs) become empty.
fn c_string(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

fn with_code_object(e: &CodeObjectEvent, f: impl FnOnce(&RocloadCodeObject)) {
    let uri = c_string(&e.uri);
    let names: Vec<(CString, Option<CString>)> = e
        .symbols
        .iter()
        .map(|s| (c_string(&s.name), s.demangled.as_deref().map(c_string)))
        .collect();
    let symbols: Vec<RocloadSymbol> = e
        .symbols
        .iter()
        .zip(&names)
        .map(|(s, (name, demangled))| RocloadSymbol {
            name: name.as_ptr(),
            demangled_name: demangled.as_ref().map_or(std::ptr::null(), |d| d.as_ptr()),
            kind: match s.class {
                SymbolClass::Kernel => 0,
                SymbolClass::Function => 1,
                SymbolClass::Variable => 2,
            },
            address: s.address,
            size: s.size,
            code_address: s.code_address.unwrap_or(0),
        })
        .collect();
    f(&RocloadCodeObject {
        id: e.id,
        device: c_int::try_from(e.device).unwrap_or(c_int::MAX),
        uri: uri.as_ptr(),
        load_base: e.load_base,
        load_size: e.load_size,
        load_delta: e.load_delta,
        symbols: symbols.as_ptr(),
        symbol_count: symbols.len(),
    });
}

fn with_dispatch(e: &DispatchEvent, f: impl FnOnce(&RocloadDispatch)) {
    let name = c_string(&e.kernel);
    let demangled = e.demangled.as_deref().map(c_string);
    f(&RocloadDispatch {
        id: e.id,
        device: c_int::try_from(e.device).unwrap_or(c_int::MAX),
        stream: e.stream,
        kernel_name: name.as_ptr(),
        demangled_name: demangled.as_ref().map_or(std::ptr::null(), |d| d.as_ptr()),
        kernel_object: e.kernel_object,
        code_address: e.code_address.unwrap_or(0),
        grid: e.grid,
        block: e.block,
        dynamic_lds: e.dynamic_lds,
        kernarg: e.kernarg,
    });
}

impl Tool for CTool {
    fn code_object_loaded(&self, e: &CodeObjectEvent) {
        if let Some(cb) = self.0.code_object_loaded {
            // SAFETY: a callback the tool registered; the event lives for the call.
            with_code_object(e, |c| unsafe { cb(c, self.0.user_data) });
        }
    }

    fn code_object_unloaded(&self, e: &CodeObjectEvent) {
        if let Some(cb) = self.0.code_object_unloaded {
            // SAFETY: as above.
            with_code_object(e, |c| unsafe { cb(c, self.0.user_data) });
        }
    }

    fn dispatch(&self, e: &DispatchEvent) {
        if let Some(cb) = self.0.dispatch_begin {
            // SAFETY: as above.
            with_dispatch(e, |d| unsafe { cb(d, self.0.user_data) });
        }
    }

    fn dispatch_completed(&self, e: &DispatchEvent, c: &Completion) {
        let Some(cb) = self.0.dispatch_end else {
            return;
        };
        let (message, result) = match c {
            Completion::Done(r) => (
                None,
                RocloadDispatchResult {
                    status: hipSuccess,
                    duration_ns: u64::try_from(r.duration.as_nanos()).unwrap_or(u64::MAX),
                    instructions: r.instructions,
                    waves: r.waves,
                    error: std::ptr::null(),
                },
            ),
            Completion::Failed(f) => (
                Some(c_string(&f.to_string())),
                RocloadDispatchResult {
                    status: hipErrorLaunchFailure,
                    duration_ns: 0,
                    instructions: 0,
                    waves: 0,
                    error: std::ptr::null(),
                },
            ),
        };
        let result = RocloadDispatchResult {
            error: message.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()),
            ..result
        };
        // SAFETY: as above; `result` and its message live for the call.
        with_dispatch(e, |d| unsafe { cb(d, &result, self.0.user_data) });
    }
}

/// Copies the caller's `rocload_tool_t`, reading only the fields its `struct_size` covers.
///
/// # Safety
/// `tool` must point to at least `struct_size` readable bytes (and at least the size field).
unsafe fn read_tool(tool: *const RocloadTool) -> Result<RocloadTool, Failure> {
    if tool.is_null() {
        return Err(Failure::null("tool"));
    }
    // SAFETY: the size field is first and always present by the header's contract.
    let size = unsafe { std::ptr::addr_of!((*tool).struct_size).read_unaligned() };
    let minimum = std::mem::offset_of!(RocloadTool, code_object_loaded);
    if size < minimum {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("tool->struct_size is {size}; set it to sizeof(rocload_tool_t)"),
        ));
    }
    let mut copy = RocloadTool {
        struct_size: size,
        user_data: std::ptr::null_mut(),
        code_object_loaded: None,
        code_object_unloaded: None,
        dispatch_begin: None,
        dispatch_end: None,
    };
    let n = size.min(std::mem::size_of::<RocloadTool>());
    // SAFETY: the caller provides `size` readable bytes; we copy at most our struct's size
    // into our own value, whose unset fields stay NULL (a valid `Option<fn>`).
    unsafe {
        std::ptr::copy_nonoverlapping(
            tool.cast::<u8>(),
            std::ptr::addr_of_mut!(copy).cast::<u8>(),
            n,
        )
    };
    Ok(copy)
}

/// `int rocload_tool_register(const rocload_tool_t* tool, uint64_t* id)`.
#[export]
pub unsafe extern "C" fn rocload_tool_register(tool: *const RocloadTool, id: *mut u64) -> c_int {
    call("rocload_tool_register", || {
        // SAFETY: by the caller's contract.
        let tool = unsafe { read_tool(tool) }?;
        let registered = Runtime::global().tools().add(Arc::new(CTool(tool)));
        if id.is_null() {
            return Ok(());
        }
        // SAFETY: writable by the caller's contract.
        unsafe { out(id, "id", registered.0) }
    })
}

/// `int rocload_tool_unregister(uint64_t id)`.
#[export]
pub extern "C" fn rocload_tool_unregister(id: u64) -> c_int {
    call("rocload_tool_unregister", || {
        if Runtime::global().tools().remove(ToolId(id)) {
            Ok(())
        } else {
            Err(Failure::new(
                hipErrorInvalidHandle,
                format!("no tool is registered under {id}"),
            ))
        }
    })
}

/// Loads the libraries named by `ROCLOAD_TOOLS` once per process. Re-entrant: a tool's init
/// calling back into librocload.so finds loading in progress and goes on.
pub(crate) fn load_tool_libraries() {
    static STATE: AtomicU8 = AtomicU8::new(0);
    if STATE
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    for path in &Config::global().tools {
        load_tool(path);
    }
    STATE.store(2, Ordering::Release);
}

fn load_tool(path: &str) {
    let Ok(c_path) = CString::new(path) else {
        tracing::warn!(path, "ROCLOAD_TOOLS entry contains a NUL; skipped");
        return;
    };
    // SAFETY: a NUL-terminated path; the library stays loaded for the process (never
    // dlclosed: its callbacks are registered with the runtime).
    let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if handle.is_null() {
        tracing::warn!(path, error = %dl_error(), "tool library could not be loaded");
        eprintln!(
            "rocload: tool library {path} could not be loaded: {}",
            dl_error()
        );
        return;
    }
    // SAFETY: looking a symbol up in a library we just opened.
    let init = unsafe { libc::dlsym(handle, c"rocload_tool_init".as_ptr()) };
    if init.is_null() {
        // A tool may register from its own constructor instead.
        tracing::debug!(path, "tool library loaded; it has no rocload_tool_init");
        return;
    }
    // SAFETY: `rocload_tool_init` is `int (void)` by the header's contract.
    let init: unsafe extern "C" fn() -> c_int = unsafe { std::mem::transmute(init) };
    // SAFETY: calling the tool's init as documented.
    let status = unsafe { init() };
    tracing::debug!(path, status, "tool library initialised");
    if status != 0 {
        eprintln!("rocload: tool library {path}: rocload_tool_init returned {status}");
    }
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by the C library.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, NUL-terminated.
        unsafe { std::ffi::CStr::from_ptr(e) }
            .to_string_lossy()
            .into_owned()
    }
}
