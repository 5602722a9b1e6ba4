//! HIP's tracing interfaces: HIP 5.2's, the one roctracer 5.2 drives (clr's `hip_intercept.cpp`,
//! `hip_activity.cpp`, `hip_prof_api.h`), and HIP 5.3 and later's single tracer, the one
//! roctracer 5.3 and later registers:
//!
//! - API callbacks: `hipRegisterApiCallback(id, fun, arg)` and
//!   `hipRegisterActivityCallback(id, act, arg)` per API id of HIP 5.2.3's `hip_prof_str.h`
//!   (1 to 333; another id is `hipErrorInvalidValue`), and their `Remove` forms. Every entry
//!   point with an id calls them as clr does (`rocload_ffi::trace`, placed by `#[export]`):
//!   while any id has an activity callback, a call of an id with one asks it for the call's
//!   `hip_api_data_t`, fills the record's arguments (the offsets of `abi/hip-api-args.tsv`),
//!   calls the API callback with `ACTIVITY_DOMAIN_HIP_API` (3) at enter and exit, the phase set
//!   to exit between them, and finally the activity callback with its argument. As in clr, an
//!   API callback without an activity callback is never called (nothing supplies its record);
//! - operation activity: `hipInitActivityCallback(id_callback, op_callback, arg)` and
//!   `hipEnableActivityCallback(op, enable)`. Kernel dispatches (`OP_ID_DISPATCH`, 0) are
//!   reported through the runtime's tool interface: the id callback with the dispatch's record
//!   id on the launching thread (so a tracer correlates it with the API call in progress), and
//!   at completion the operation callback with an `activity_record_t` (domain
//!   `ACTIVITY_DOMAIN_HIP_VDI`, kind `CL_COMMAND_NDRANGE_KERNEL`, begin and end in the
//!   runtime's system-timestamp nanoseconds, device, the stream's id as queue), delivered when
//!   the runtime learns of the completion (through ROCr's backend, just after the completion
//!   signal a synchronisation waits for; clr reports before it). Copies and
//!   barriers (ops 1 and 2) are not reported by the tool interface: enabling them returns
//!   false, saying why in the log, rather than promising records that never come;
//! - HIP 5.3's tracer, `hipRegisterTracerCallback(function)`: the API domain as clr's
//!   `api_callbacks_spawner_t` serves it (each entry point with an id in the tracer table of
//!   the program's generation, `abi/hip-tracer-api-5.tsv` or `-6.tsv`, hands the tracer a
//!   `hip_api_trace_data_t` and calls the phase functions it sets; `rocload_ffi::trace`), and
//!   kernel dispatches in the operations domain as clr's `IsEnabled` and `ReportActivity`
//!   report them (asked when made, an `activity_record_t` naming the kernel, with the
//!   launching call's correlation id, when done). `hipApiName` answers in the same numbering
//!   (`names`);
//! - `hipGetCmdName`: the names of clr's command kinds (`getOclCommandKindString`);
//! - `hipProfilerStart`/`Stop`: `hipErrorNotSupported`, as in clr 5.2.3.
//!
//! The registration calls are no API calls in clr's sense (they do not set the last error).

use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use rocload_ffi::export;
use rocload_ffi::trace::{self, ActivityCallback, ApiCallback};
use rocload_lib::device::signal::timestamp_ns;
use rocload_lib::device::Completion;
use rocload_lib::runtime::{DispatchEvent, Runtime, Tool, ToolId};

use crate::generation::Generation;
use crate::*;

/// `HIP_API_ID_FIRST`, `HIP_API_ID_LAST` of HIP 5.2.3's `hip_prof_str.h`.
const FIRST_ID: u32 = 1;
const LAST_ID: u32 = 333;

/// `OP_ID_DISPATCH`, `OP_ID_COPY`, `OP_ID_BARRIER`, `OP_ID_NUMBER` (clr's `activity.hpp`).
const OP_DISPATCH: u32 = 0;
const OP_NUMBER: u32 = 3;
/// `ACTIVITY_DOMAIN_HIP_VDI` (`ACTIVITY_DOMAIN_HCC_OPS`) of HIP 5.2.3's `prof_protocol.h`.
const DOMAIN_HIP_OPS: u32 = 2;
/// `CL_COMMAND_NDRANGE_KERNEL`.
const KIND_KERNEL: u32 = 0x11F0;

/// Runs a registration call: a panic is an error, the code is returned and logged, the last
/// error is left alone (clr's registration calls do not touch it).
fn registration(op: &'static str, f: impl FnOnce() -> Result<(), Failure>) -> hipError_t {
    match guarded(f) {
        Ok(()) => {
            tracing::debug!(op, "tracing callback set");
            hipSuccess
        }
        Err(failure) => {
            record(op, &failure);
            failure.code
        }
    }
}

fn check_id(id: u32) -> Result<(), Failure> {
    if (FIRST_ID..=LAST_ID).contains(&id) {
        Ok(())
    } else {
        Err(Failure::new(
            hipErrorInvalidValue,
            format!("API id {id} is not one of HIP 5.2.3's ({FIRST_ID} to {LAST_ID})"),
        ))
    }
}

/// A callback given as `void*`: NULL is none.
///
/// # Safety
/// A non-NULL `f` is a function of type `F` (the caller's contract with HIP).
unsafe fn function<F: Copy>(f: *mut c_void) -> Option<F> {
    const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<*mut c_void>()) };
    if f.is_null() {
        return None;
    }
    // SAFETY: a function pointer of type `F`, the size of a pointer (checked above), handed
    // to HIP as `void*`.
    Some(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&f) })
}

fn set_api(id: u32, fun: Option<ApiCallback>, arg: *mut c_void) -> Result<(), Failure> {
    check_id(id)?;
    if trace::set_api_callback(id, fun, arg) {
        Ok(())
    } else {
        Err(Failure::new(
            hipErrorOutOfMemory,
            "the callback table cannot grow",
        ))
    }
}

fn set_activity(id: u32, act: Option<ActivityCallback>, arg: *mut c_void) -> Result<(), Failure> {
    check_id(id)?;
    if trace::set_activity_callback(id, act, arg) {
        Ok(())
    } else {
        Err(Failure::new(
            hipErrorOutOfMemory,
            "the callback table cannot grow",
        ))
    }
}

/// `hipError_t hipRegisterApiCallback(uint32_t id, void* fun, void* arg)`: `fun` is
/// `void (*)(uint32_t domain, uint32_t cid, const void* data, void* arg)`.
#[export]
pub unsafe extern "C" fn hipRegisterApiCallback(
    id: u32,
    fun: *mut c_void,
    arg: *mut c_void,
) -> hipError_t {
    registration("hipRegisterApiCallback", || {
        // SAFETY: HIP's contract: `fun` is an API callback.
        set_api(id, unsafe { function::<ApiCallback>(fun) }, arg)
    })
}

/// `hipError_t hipRemoveApiCallback(uint32_t id)`.
#[export]
pub extern "C" fn hipRemoveApiCallback(id: u32) -> hipError_t {
    registration("hipRemoveApiCallback", || {
        set_api(id, None, std::ptr::null_mut())
    })
}

/// `hipError_t hipRegisterActivityCallback(uint32_t id, void* fun, void* arg)`: `fun` is
/// `void* (*)(uint32_t cid, activity_record_t* record, const void* data, void* arg)`.
#[export]
pub unsafe extern "C" fn hipRegisterActivityCallback(
    id: u32,
    fun: *mut c_void,
    arg: *mut c_void,
) -> hipError_t {
    registration("hipRegisterActivityCallback", || {
        // SAFETY: HIP's contract: `fun` is an activity callback.
        set_activity(id, unsafe { function::<ActivityCallback>(fun) }, arg)
    })
}

/// `hipError_t hipRemoveActivityCallback(uint32_t id)`.
#[export]
pub extern "C" fn hipRemoveActivityCallback(id: u32) -> hipError_t {
    registration("hipRemoveActivityCallback", || {
        set_activity(id, None, std::ptr::null_mut())
    })
}

// ------------------------------------------------------------------------------ operations

/// `activity_id_callback_t`: `void (*)(activity_correlation_id_t id)`.
type IdCallback = unsafe extern "C" fn(u64);
/// `activity_async_callback_t`: `void (*)(uint32_t op, void* record, void* arg)`.
type OpCallback = unsafe extern "C" fn(u32, *mut c_void, *mut c_void);

/// `activity_record_t` of HIP 5.2.3's `prof_protocol.h`, with the device/queue member of its
/// union.
#[repr(C)]
struct ActivityRecord {
    domain: u32,
    kind: u32,
    op: u32,
    correlation_id: u64,
    begin_ns: u64,
    end_ns: u64,
    device_id: i32,
    queue_id: u64,
    bytes: usize,
}

const _: () = {
    assert!(std::mem::size_of::<ActivityRecord>() == 64);
    assert!(std::mem::offset_of!(ActivityRecord, correlation_id) == 16);
    assert!(std::mem::offset_of!(ActivityRecord, queue_id) == 48);
};

/// What `hipInitActivityCallback` set (clr's `activity_prof::CallbacksTable`).
#[derive(Clone, Copy, Default)]
struct OpsTable {
    id_callback: Option<IdCallback>,
    op_callback: Option<OpCallback>,
    arg: usize,
}

static OPS: RwLock<OpsTable> = RwLock::new(OpsTable {
    id_callback: None,
    op_callback: None,
    arg: 0,
});
/// The tool reporting dispatches while `OP_ID_DISPATCH` is enabled.
static DISPATCH_TOOL: Mutex<Option<ToolId>> = Mutex::new(None);

/// Reports kernel dispatches to the operation callbacks.
struct DispatchActivity;

impl Tool for DispatchActivity {
    fn dispatch(&self, event: &DispatchEvent) {
        if let Some(f) = OPS.read().id_callback {
            // SAFETY: the tracer's id callback, as clr calls it when a command is made.
            unsafe { f(event.id) };
        }
    }

    fn dispatch_completed(&self, event: &DispatchEvent, completion: &Completion) {
        let ops = *OPS.read();
        let Some(f) = ops.op_callback else { return };
        let end_ns = timestamp_ns();
        // A failed dispatch is reported too (clr reports every command that reached its end),
        // with no duration.
        let duration = match completion {
            Completion::Done(report) => u64::try_from(report.duration.as_nanos()).unwrap_or(0),
            _ => 0,
        };
        let mut record = ActivityRecord {
            domain: DOMAIN_HIP_OPS,
            kind: KIND_KERNEL,
            op: OP_DISPATCH,
            correlation_id: event.id,
            begin_ns: end_ns.saturating_sub(duration),
            end_ns,
            device_id: i32::try_from(event.device).unwrap_or(i32::MAX),
            queue_id: event.stream,
            bytes: 0,
        };
        // SAFETY: the tracer's operation callback with a record laid out as HIP's, valid for
        // the call, and the tracer's argument.
        unsafe {
            f(
                OP_DISPATCH,
                (&mut record as *mut ActivityRecord).cast(),
                ops.arg as *mut c_void,
            )
        };
    }
}

/// `void hipInitActivityCallback(void* id_callback, void* op_callback, void* arg)`.
#[export]
pub unsafe extern "C" fn hipInitActivityCallback(
    id_callback: *mut c_void,
    op_callback: *mut c_void,
    arg: *mut c_void,
) {
    let _ = guarded(|| {
        // SAFETY: HIP's contract: the callbacks have roctracer's types.
        let table = unsafe {
            OpsTable {
                id_callback: function::<IdCallback>(id_callback),
                op_callback: function::<OpCallback>(op_callback),
                arg: arg as usize,
            }
        };
        *OPS.write() = table;
        tracing::debug!("operation activity callbacks set");
        Ok(())
    });
}

/// `bool hipEnableActivityCallback(uint32_t op, bool enable)`: true once kernel dispatches
/// (op 0) are (or are no longer) reported; false for copies and barriers, which are not, and
/// for ops HIP does not define.
#[export]
pub extern "C" fn hipEnableActivityCallback(op: u32, enable: bool) -> bool {
    guarded(|| {
        if op != OP_DISPATCH {
            tracing::debug!(
                op,
                "hipEnableActivityCallback: only kernel dispatches (op 0) are reported{}",
                if op < OP_NUMBER {
                    "; copies and barriers are not seen by the tool interface"
                } else {
                    "; the op is not one HIP defines"
                }
            );
            return Err(Failure::new(hipErrorNotSupported, "not reported"));
        }
        let mut registered = DISPATCH_TOOL.lock();
        match (enable, *registered) {
            (true, None) => {
                *registered = Some(Runtime::global().tools().add(Arc::new(DispatchActivity)));
            }
            (false, Some(id)) => {
                Runtime::global().tools().remove(id);
                *registered = None;
            }
            _ => {}
        }
        tracing::debug!(enable, "kernel dispatch activity");
        Ok(())
    })
    .is_ok()
}

// ------------------------------------------------------------------------------ HIP 5.3's tracer

/// HIP 5.3+'s tracer tables (`scripts/gen-hip-tracer-api.sh`), in the order `build.rs` gives
/// them to `#[export]`: rocm-5.7.1's for libamdhip64.so.5 programs, rocm-6.2.2's for .so.6
/// and .so.7 ones.
pub(crate) const TRACER_TABLES: [&str; trace::TRACER_TABLES] = [
    include_str!("../abi/hip-tracer-api-5.tsv"),
    include_str!("../abi/hip-tracer-api-6.tsv"),
];

/// The tracer table of a generation. 5.3 to 5.7 only appended ids (1 to 333 are 5.2.3's) and
/// kept the record's layout, so 5.7.1's serves every HIP 5 tracer; 6.1 and later agree with
/// 6.2.2 but for ids 6.2 reserves (6.0 numbered three ids otherwise), and no header of HIP 7
/// was at hand, so 6.2.2's serves HIP 6 and 7.
pub(crate) fn tracer_table(generation: Generation) -> usize {
    match generation {
        Generation::Hip5 => 0,
        Generation::Hip6 | Generation::Hip7 => 1,
    }
}

/// `sizeof(hip_api_data_t)` of a tracer table (its `%record` line).
fn record_size(table: &str) -> Option<usize> {
    table
        .lines()
        .find_map(|l| l.strip_prefix("%record\t"))
        .and_then(|l| l.split('\t').next())
        .and_then(|n| n.parse().ok())
}

/// The layout of the current generation's tracer records.
fn tracer_layout() -> Result<trace::TracerLayout, Failure> {
    let table = tracer_table(crate::generation::current());
    let data_size = TRACER_TABLES
        .get(table)
        .and_then(|t| record_size(t))
        .ok_or_else(|| {
            Failure::new(
                hipErrorUnknown,
                format!("tracer table {table} has no %record line"),
            )
        })?;
    Ok(trace::TracerLayout { table, data_size })
}

/// Points a tracer already set at the record layout of the generation now current.
pub(crate) fn generation_changed() {
    let Some(f) = trace::tracer() else { return };
    match tracer_layout() {
        Ok(layout) if trace::set_tracer(Some((f, layout))) => {
            tracing::debug!(table = layout.table, "tracer follows the new generation")
        }
        _ => tracing::debug!("the tracer's record layout could not follow the new generation"),
    }
}

/// `activity_record_t` of HIP 5.3 and later: as 5.2's, the last word a union of the bytes
/// copied and, for a dispatch, the kernel's name.
#[repr(C)]
struct TracerRecord {
    domain: u32,
    kind: u32,
    op: u32,
    correlation_id: u64,
    begin_ns: u64,
    end_ns: u64,
    device_id: i32,
    queue_id: u64,
    kernel_name: *const c_char,
}
const _: () = assert!(std::mem::size_of::<TracerRecord>() == 64);

/// The tool reporting dispatches to the tracer while one is registered.
static TRACER_TOOL: Mutex<Option<ToolId>> = Mutex::new(None);
/// Dispatches the tracer wanted, by dispatch id: the correlation id of the API call that made
/// each (as clr stamps a command when it is made). An entry lives until its dispatch completes
/// (the runtime reports every dispatch it announced), so there are as many as dispatches in
/// flight.
static TRACED_DISPATCHES: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

/// Reports kernel dispatches to the tracer, as clr does: when a dispatch is made, asks
/// whether the tracer wants it (`data` NULL; 0 means yes: clr's `IsEnabled`), keeping the
/// correlation id of the API call in progress; when it completes, hands it the record
/// (`ReportActivity`).
struct TracerDispatch;

impl Tool for TracerDispatch {
    fn dispatch(&self, event: &DispatchEvent) {
        let Some(f) = trace::tracer() else { return };
        // SAFETY: the tracer's callback, asked as clr's `IsEnabled` asks it.
        if unsafe { f(DOMAIN_HIP_OPS, OP_DISPATCH, std::ptr::null_mut()) } == 0 {
            TRACED_DISPATCHES
                .lock()
                .insert(event.id, trace::correlation_id());
        }
    }

    fn dispatch_completed(&self, event: &DispatchEvent, completion: &Completion) {
        let Some(correlation_id) = TRACED_DISPATCHES.lock().remove(&event.id) else {
            return;
        };
        let Some(f) = trace::tracer() else { return };
        let end_ns = timestamp_ns();
        let duration = match completion {
            Completion::Done(report) => u64::try_from(report.duration.as_nanos()).unwrap_or(0),
            _ => 0,
        };
        // The name lives for the call (a NUL byte inside a name ends it early).
        let name = std::ffi::CString::new(event.kernel.replace('\0', "")).unwrap_or_default();
        let mut record = TracerRecord {
            domain: DOMAIN_HIP_OPS,
            kind: KIND_KERNEL,
            op: OP_DISPATCH,
            correlation_id,
            begin_ns: end_ns.saturating_sub(duration),
            end_ns,
            device_id: i32::try_from(event.device).unwrap_or(i32::MAX),
            queue_id: event.stream,
            kernel_name: name.as_ptr(),
        };
        // SAFETY: the tracer's callback with a record laid out as HIP's, valid for the call.
        unsafe {
            f(
                DOMAIN_HIP_OPS,
                OP_DISPATCH,
                (&mut record as *mut TracerRecord).cast(),
            )
        };
    }
}

/// `void hipRegisterTracerCallback(int (*function)(activity_domain_t domain, uint32_t
/// operation_id, void* data))` (HIP 5.3): the tracer roctracer 5.3 and later registers (NULL:
/// none). As clr calls it:
///
/// - API domain (`ACTIVITY_DOMAIN_HIP_API`, 3): every entry point with an id in the tracer
///   table of the program's generation ([`tracer_table`]) asks `function(3, id, record)` with
///   a `hip_api_trace_data_t` the runtime owns; when it answers 0 it has filled the
///   correlation id and phase functions, and the call stores its arguments where the table
///   says and calls `phase_enter(id, record)`, then `phase_exit(id, record)` when it returns
///   (`rocload_ffi::trace`);
/// - operations domain (`ACTIVITY_DOMAIN_HIP_OPS`, 2): a kernel dispatch asks `function(2, 0,
///   NULL)` when it is made and, when the answer was 0, gets `function(2, 0, record)` when it
///   completes, with an `activity_record_t` naming the kernel whose correlation id is that of
///   the API call that launched it (0 outside a traced call, as in clr). Copies and barriers
///   are not reported.
#[export]
pub unsafe extern "C" fn hipRegisterTracerCallback(function: *mut c_void) {
    // No status to return: a failure is logged (and kept as the last message).
    let result = guarded(|| {
        // SAFETY: HIP's contract: a non-NULL `function` is a tracer callback.
        let f = unsafe { self::function::<trace::TracerCallback>(function) };
        let tracer = match f {
            Some(f) => Some((f, tracer_layout()?)),
            None => None,
        };
        if !trace::set_tracer(tracer) {
            return Err(Failure::new(
                hipErrorUnknown,
                "the tracer table's record does not fit the runtime's record",
            ));
        }
        let mut registered = TRACER_TOOL.lock();
        match (f.is_some(), *registered) {
            (true, None) => {
                *registered = Some(Runtime::global().tools().add(Arc::new(TracerDispatch)));
            }
            (false, Some(id)) => {
                Runtime::global().tools().remove(id);
                *registered = None;
                TRACED_DISPATCHES.lock().clear();
            }
            _ => {}
        }
        tracing::debug!(
            set = f.is_some(),
            table = tracer.map(|(_, l)| l.table),
            "tracer callback: API calls and kernel dispatches are reported"
        );
        Ok(())
    });
    if let Err(failure) = result {
        record("hipRegisterTracerCallback", &failure);
    }
}

/// `const char* hipGetCmdName(uint32_t id)`: the name of an OpenCL command kind as clr's
/// `getOclCommandKindString` gives it.
#[export]
pub extern "C" fn hipGetCmdName(id: u32) -> *const c_char {
    let name: &'static CStr = match id {
        0 => c"InternalMarker",
        0x11F0 => c"KernelExecution",
        0x11F1 => c"Task",
        0x11F2 => c"NativeKernel",
        0x11F3 => c"CopyDeviceToHost",
        0x11F4 => c"CopyHostToDevice",
        0x11F5 => c"CopyDeviceToDevice",
        0x11F6 => c"ReadImage",
        0x11F7 => c"WriteImage",
        0x11F8 => c"CopyImage",
        0x11F9 => c"CopyImageToBuffer",
        0x11FA => c"CopyBufferToImage",
        0x11FB => c"MapBuffer",
        0x11FC => c"MapImage",
        0x11FD => c"UnmapMemObject",
        0x11FE => c"Marker",
        0x11FF => c"AcquireGLObjects",
        0x1200 => c"ReleaseGLObjects",
        0x1201 => c"CopyDeviceToHost2D",
        0x1202 => c"CopyHostToDevice2D",
        0x1203 => c"CopyDeviceToDevice2D",
        0x1204 => c"User",
        0x1205 => c"Barrier",
        0x1206 => c"MigrateMemObjects",
        0x1207 => c"FillBuffer",
        0x1208 => c"FillImage",
        0x1209 => c"SvmFree",
        0x120A => c"SvmMemcpy",
        0x120B => c"SvmMemFill",
        0x120C => c"SvmMap",
        0x120D => c"SvmUnmap",
        _ => c"Unknown command type",
    };
    name.as_ptr()
}

/// `hipError_t hipProfilerStart(void)`: `hipErrorNotSupported`, as in clr 5.2.3.
#[export]
pub extern "C" fn hipProfilerStart() -> hipError_t {
    call("hipProfilerStart", || {
        Err(Failure::new(
            hipErrorNotSupported,
            "no profiler to start (clr 5.2.3 has none either)",
        ))
    })
}

/// `hipError_t hipProfilerStop(void)`: `hipErrorNotSupported`, as in clr 5.2.3.
#[export]
pub extern "C" fn hipProfilerStop() -> hipError_t {
    call("hipProfilerStop", || {
        Err(Failure::new(
            hipErrorNotSupported,
            "no profiler to stop (clr 5.2.3 has none either)",
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_names_and_id_checks() {
        let name = |id| {
            // SAFETY: hipGetCmdName returns static C strings.
            let c = unsafe { CStr::from_ptr(hipGetCmdName(id)) };
            c.to_str().unwrap()
        };
        assert_eq!(name(0x11F0), "KernelExecution");
        assert_eq!(name(0x1207), "FillBuffer");
        assert_eq!(name(0), "InternalMarker");
        assert_eq!(name(7), "Unknown command type");
        assert_eq!(hipRemoveApiCallback(0), hipErrorInvalidValue);
        assert_eq!(hipRemoveApiCallback(LAST_ID + 1), hipErrorInvalidValue);
        assert_eq!(hipRemoveApiCallback(LAST_ID), hipSuccess);
        assert!(
            !hipEnableActivityCallback(1, true),
            "copies are not reported"
        );
        assert!(!hipEnableActivityCallback(OP_NUMBER, true));
    }

    /// Each generation's tracer table gives a record size the runtime's record holds.
    #[test]
    fn tracer_tables_give_usable_layouts() {
        for g in [Generation::Hip5, Generation::Hip6, Generation::Hip7] {
            let table = tracer_table(g);
            let data_size = record_size(TRACER_TABLES[table]).unwrap();
            assert_eq!(data_size % 8, 0);
            // A tracer wanting nothing: harmless to tests running meanwhile.
            unsafe extern "C" fn refuse(_: u32, _: u32, _: *mut c_void) -> std::ffi::c_int {
                1
            }
            let layout = trace::TracerLayout { table, data_size };
            assert!(trace::set_tracer(Some((refuse, layout))), "{g:?}");
            assert!(trace::set_tracer(None));
        }
        assert_eq!(record_size("# nothing"), None);
    }
}
