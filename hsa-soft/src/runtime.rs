//! The runtime's lifetime and system-wide queries: `hsa_init` and `hsa_shut_down` (reference
//! counted, as ROCr's `Runtime::Acquire`/`Release`; every other call before `hsa_init` answers
//! `HSA_STATUS_ERROR_NOT_INITIALIZED`), `hsa_system_get_info`, `hsa_status_string` (ROCr's
//! messages, usable before `hsa_init`), extensions (the `hsa_ven_amd_loader` 1.02 table), and
//! system event handlers (GPU memory faults).

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

use hsa_sys::*;
use parking_lot::Mutex;
use rocload::backend::soft::SignalTable;
use rocload::loader::RocrCapabilities;
use rocload::runtime::config::Config;

use crate::agents::AgentEntry;
use crate::util::{guard, put, Status};

pub use rocload::runtime::config::SOFT_ROCR_VERSION_ENV as ROCR_VERSION_ENV;

/// The ROCr version whose loader rules and answers this runtime follows: the environment's
/// (see [`ROCR_VERSION_ENV`]), else 6.2 with the `rocr-6-2` feature, else 5.2.3.
pub(crate) fn capabilities() -> Status<RocrCapabilities> {
    match Config::global().soft_rocr_version.as_deref().map(str::trim) {
        Some("5.2.3") => Ok(RocrCapabilities::ROCR_5_2_3),
        Some("6.2") => Ok(RocrCapabilities::ROCR_6_2),
        None | Some("") if cfg!(feature = "rocr-6-2") => Ok(RocrCapabilities::ROCR_6_2),
        None | Some("") => Ok(RocrCapabilities::ROCR_5_2_3),
        Some(other) => {
            eprintln!("hsa-soft: {ROCR_VERSION_ENV}={other:?}: expected 5.2.3 or 6.2");
            Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
        }
    }
}

/// Registered `hsa_amd_register_system_event_handler` callbacks (function, data).
#[derive(Debug, Default)]
pub(crate) struct EventHandlers {
    handlers: Mutex<Vec<(usize, usize)>>,
}

impl EventHandlers {
    /// Reports a GPU memory fault to every handler; false when there is none.
    pub(crate) fn memory_fault(&self, agent: hsa_agent_t, address: u64, reason: u32) -> bool {
        let handlers = self.handlers.lock().clone();
        let event = hsa_amd_event_t {
            event_type: HSA_AMD_GPU_MEMORY_FAULT_EVENT,
            __bindgen_anon_1: hsa_amd_event_s__bindgen_ty_1 {
                memory_fault: hsa_amd_gpu_memory_fault_info_t {
                    agent,
                    virtual_address: address,
                    fault_reason_mask: reason,
                },
            },
        };
        for &(f, data) in &handlers {
            // SAFETY: `f` was registered as an hsa_amd_system_event_callback_t (non-NULL,
            // checked at registration); the event lives for the call.
            let callback: unsafe extern "C" fn(
                *const hsa_amd_event_t,
                *mut c_void,
            ) -> hsa_status_t = unsafe { std::mem::transmute(f) };
            // SAFETY: as above; `data` is what the application registered with it.
            let _ = unsafe { callback(&event, data as *mut c_void) };
        }
        !handlers.is_empty()
    }
}

/// Everything one `hsa_init` .. `hsa_shut_down` lifetime holds.
pub(crate) struct Runtime {
    pub(crate) caps: RocrCapabilities,
    pub(crate) agents: Vec<AgentEntry>,
    /// Every signal (created ones and queue doorbells), shared by all agents.
    pub(crate) signals: Arc<SignalTable>,
    /// Signals made with `hsa_signal_create`, kept alive until `hsa_signal_destroy`.
    pub(crate) owned_signals: Mutex<HashMap<u64, crate::signals::OwnedSignal>>,
    /// `hsa_amd_signal_async_handler`'s handlers and their thread.
    pub(crate) async_handlers: crate::signals::AsyncHandlers,
    pub(crate) queues: Mutex<HashMap<u64, crate::queues::QueueEntry>>,
    pub(crate) memory: crate::memory::Memory,
    pub(crate) loader: crate::loader::Loader,
    pub(crate) events: Arc<EventHandlers>,
    pub(crate) amd_ext: crate::amd_ext::State,
    /// The interrupt signals' event mailboxes (`signals.rs`).
    pub(crate) event_page: Arc<crate::signals::EventPage>,
    /// ROCr 6's virtual memory (`vmem.rs`).
    pub(crate) vmem: crate::vmem::State,
    /// Shared virtual memory's ranges (`svm.rs`).
    pub(crate) svm: crate::svm::State,
}

struct State {
    refs: u32,
    runtime: Option<Arc<Runtime>>,
}

static STATE: Mutex<State> = Mutex::new(State {
    refs: 0,
    runtime: None,
});

/// The initialised runtime, or `HSA_STATUS_ERROR_NOT_INITIALIZED`.
pub(crate) fn runtime() -> Status<Arc<Runtime>> {
    STATE
        .lock()
        .runtime
        .clone()
        .ok_or(HSA_STATUS_ERROR_NOT_INITIALIZED)
}

fn init() -> Status {
    let mut state = STATE.lock();
    if state.refs == u32::MAX {
        return Err(HSA_STATUS_ERROR_REFCOUNT_OVERFLOW);
    }
    if state.runtime.is_none() {
        let signals = Arc::new(SignalTable::new());
        let agents = crate::agents::discover(&signals)?;
        let caps = capabilities()?;
        let event_page = Arc::new(crate::signals::EventPage::new());
        crate::signals::attach_event_page(&agents, &event_page)?;
        tracing::debug!(agents = agents.len(), rocr = %caps.version, "software HSA runtime initialised");
        state.runtime = Some(Arc::new(Runtime {
            caps,
            memory: crate::memory::Memory::new(&agents),
            agents,
            signals,
            owned_signals: Mutex::new(HashMap::new()),
            async_handlers: crate::signals::AsyncHandlers::default(),
            queues: Mutex::new(HashMap::new()),
            loader: crate::loader::Loader::default(),
            events: Arc::new(EventHandlers::default()),
            amd_ext: crate::amd_ext::State::default(),
            event_page,
            vmem: crate::vmem::State::default(),
            svm: crate::svm::State::default(),
        }));
    }
    state.refs += 1;
    Ok(())
}

fn shut_down() -> Status {
    let last = {
        let mut state = STATE.lock();
        if state.refs == 0 {
            return Err(HSA_STATUS_ERROR_NOT_INITIALIZED);
        }
        state.refs -= 1;
        if state.refs > 0 {
            return Ok(());
        }
        state.runtime.take()
    };
    // Dropped outside the lock: queue processors may call back into the runtime while they
    // stop. Queues first (their threads use the agents), then everything else.
    if let Some(rt) = last {
        rt.async_handlers.stop();
        let queues: Vec<_> = rt.queues.lock().drain().collect();
        drop(queues);
        rt.loader.clear();
        rt.vmem.clear(&rt);
        tracing::debug!("software HSA runtime shut down");
    }
    Ok(())
}

/// ROCr's `hsa_status_string` messages (`core/runtime/hsa.cpp`), NUL-terminated.
fn status_message(status: hsa_status_t) -> Option<&'static [u8]> {
    Some(match status {
        HSA_STATUS_SUCCESS => b"HSA_STATUS_SUCCESS: The function has been executed successfully.\0",
        HSA_STATUS_INFO_BREAK => b"HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the application before completing.\0",
        HSA_STATUS_ERROR => b"HSA_STATUS_ERROR: A generic error has occurred.\0",
        HSA_STATUS_ERROR_INVALID_ARGUMENT => b"HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition stated in the documentation of the corresponding formal argument.\0",
        HSA_STATUS_ERROR_INVALID_QUEUE_CREATION => b"HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation is not valid.\0",
        HSA_STATUS_ERROR_INVALID_ALLOCATION => b"HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid.\0",
        HSA_STATUS_ERROR_INVALID_AGENT => b"HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.\0",
        HSA_STATUS_ERROR_INVALID_REGION => b"HSA_STATUS_ERROR_INVALID_REGION: The memory region is invalid.\0",
        HSA_STATUS_ERROR_INVALID_SIGNAL => b"HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid.\0",
        HSA_STATUS_ERROR_INVALID_QUEUE => b"HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.\0",
        HSA_STATUS_ERROR_OUT_OF_RESOURCES => b"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. This error may also occur when the core runtime library needs to spawn threads or create internal OS-specific events.\0",
        HSA_STATUS_ERROR_INVALID_PACKET_FORMAT => b"HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed.\0",
        HSA_STATUS_ERROR_RESOURCE_FREE => b"HSA_STATUS_ERROR_RESOURCE_FREE: An error has been detected while releasing a resource.\0",
        HSA_STATUS_ERROR_NOT_INITIALIZED => b"HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference count of the HSA runtime is zero.\0",
        HSA_STATUS_ERROR_REFCOUNT_OVERFLOW => b"HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: The maximum reference count for the object has been reached.\0",
        HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS => b"HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: The arguments passed to a functions are not compatible.\0",
        HSA_STATUS_ERROR_INVALID_INDEX => b"HSA_STATUS_ERROR_INVALID_INDEX: The index is invalid.\0",
        HSA_STATUS_ERROR_INVALID_ISA => b"HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.\0",
        HSA_STATUS_ERROR_INVALID_ISA_NAME => b"HSA_STATUS_ERROR_INVALID_ISA_NAME: The instruction set architecture name is invalid.\0",
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT => b"HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.\0",
        HSA_STATUS_ERROR_INVALID_EXECUTABLE => b"HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid.\0",
        HSA_STATUS_ERROR_FROZEN_EXECUTABLE => b"HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen.\0",
        HSA_STATUS_ERROR_INVALID_SYMBOL_NAME => b"HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the given name.\0",
        HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED => b"HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: The variable is already defined.\0",
        HSA_STATUS_ERROR_VARIABLE_UNDEFINED => b"HSA_STATUS_ERROR_VARIABLE_UNDEFINED: The variable is undefined.\0",
        HSA_STATUS_ERROR_EXCEPTION => b"HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.\0",
        HSA_STATUS_ERROR_INVALID_CODE_SYMBOL => b"HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: The code object symbol is invalid.\0",
        HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL => b"HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: The executable symbol is invalid.\0",
        HSA_STATUS_ERROR_INVALID_FILE => b"HSA_STATUS_ERROR_INVALID_FILE: The file descriptor is invalid.\0",
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER => b"HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader is invalid.\0",
        HSA_STATUS_ERROR_INVALID_CACHE => b"HSA_STATUS_ERROR_INVALID_CACHE: The cache is invalid.\0",
        HSA_STATUS_ERROR_INVALID_WAVEFRONT => b"HSA_STATUS_ERROR_INVALID_WAVEFRONT: The wavefront is invalid.\0",
        HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP => b"HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: The signal group is invalid.\0",
        HSA_STATUS_ERROR_INVALID_RUNTIME_STATE => b"HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: The HSA runtime is not in the configuration state.\0",
        HSA_STATUS_ERROR_FATAL => b"HSA_STATUS_ERROR_FATAL: The queue received an error that may require process termination.\0",
        HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION => b"HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address.\0",
        HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION => b"HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent attempted to execute an illegal shader instruction.\0",
        HSA_STATUS_ERROR_MEMORY_FAULT => b"HSA_STATUS_ERROR_MEMORY_FAULT: Agent attempted to access an inaccessible address.\0",
        HSA_STATUS_ERROR_INVALID_MEMORY_POOL => b"HSA_STATUS_ERROR_INVALID_MEMORY_POOL: The memory pool is invalid.\0",
        _ => return None,
    })
}

/// The `hsa_ven_amd_loader` 1.02 function table (a prefix of it when the caller asks for a
/// shorter one).
fn loader_table() -> hsa_ven_amd_loader_1_02_pfn_t {
    use crate::loader::ext;
    hsa_ven_amd_loader_1_02_pfn_t {
        hsa_ven_amd_loader_query_host_address: Some(ext::query_host_address),
        hsa_ven_amd_loader_query_segment_descriptors: Some(ext::query_segment_descriptors),
        hsa_ven_amd_loader_query_executable: Some(ext::query_executable),
        hsa_ven_amd_loader_executable_iterate_loaded_code_objects: Some(
            ext::executable_iterate_loaded_code_objects,
        ),
        hsa_ven_amd_loader_loaded_code_object_get_info: Some(ext::loaded_code_object_get_info),
        // Code object readers from part of a file: not provided.
        hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size: None,
    }
}

hsa_api! {
    /// `hsa_init`: takes a reference; the first one discovers the agents (`ROCLOAD_SOFT_ISA`).
    fn hsa_init() -> hsa_status_t {
        static LOGGING: std::sync::Once = std::sync::Once::new();
        LOGGING.call_once(|| rocload_ffi::logging::init(Config::global().log.as_deref()));
        guard(init)
    }

    /// `hsa_shut_down`: drops a reference; the last one releases everything.
    fn hsa_shut_down() -> hsa_status_t {
        guard(shut_down)
    }

    /// `hsa_status_string`: ROCr's message for `status`; works before `hsa_init`.
    fn hsa_status_string(status: hsa_status_t, status_string: *mut *const c_char) -> hsa_status_t {
        guard(|| {
            if status_string.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let text = status_message(status).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            // SAFETY: non-NULL out-pointer; the message is static and NUL-terminated.
            unsafe { *status_string = text.as_ptr().cast() };
            Ok(())
        })
    }

    /// `hsa_system_get_info`.
    fn hsa_system_get_info(attribute: hsa_system_info_t, value: *mut c_void) -> hsa_status_t {
        guard(|| {
            let six_two = crate::vmem::supported(&*runtime()?);
            // SAFETY: (all writes) the attribute's type is the caller's contract.
            unsafe {
                match attribute {
                    HSA_SYSTEM_INFO_VERSION_MAJOR => put(value, 1u16),
                    HSA_SYSTEM_INFO_VERSION_MINOR => put(value, 1u16),
                    HSA_SYSTEM_INFO_TIMESTAMP => {
                        put(value, rocload::device::timestamp_ns())
                    }
                    // Timestamps and wait timeouts count nanoseconds.
                    HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY => put(value, 1_000_000_000u64),
                    HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT => put(value, u64::MAX),
                    HSA_SYSTEM_INFO_ENDIANNESS => put(value, HSA_ENDIANNESS_LITTLE),
                    HSA_SYSTEM_INFO_MACHINE_MODEL => put(value, HSA_MACHINE_MODEL_LARGE),
                    // ROCr sets the profiler bit, not the loader's (see `extension_mask`).
                    HSA_SYSTEM_INFO_EXTENSIONS => put(value, crate::agents::extension_mask()),
                    HSA_AMD_SYSTEM_INFO_BUILD_VERSION => {
                        put(value, c"hsa-soft (rocload)".as_ptr())
                    }
                    // ROCr over a driver with the SVM API (`SVMAPISupported` on every GPU, see
                    // svm.rs). Accessible by default only where every GPU's ISA has XNACK on;
                    // the software agent services no page fault (no XNACK replay), so SVM
                    // memory is reachable only once given access, as ROCr's answer for GPUs
                    // with XNACK off says, whatever `ROCLOAD_SOFT_ISA` names.
                    HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED => put(value, true),
                    HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT => put(value, false),
                    // 6.2's attributes (5.2.3 knows none of them): no MWAITX, no dma-buf
                    // export of pool memory, the virtual memory API, XNACK off, AMD
                    // extension interface 1.6 (`hsa_ext_amd.h` of rocm-6.2.0).
                    hsa_sys::vmem::HSA_AMD_SYSTEM_INFO_MWAITX_ENABLED
                    | hsa_sys::vmem::HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED
                    | hsa_sys::vmem::HSA_AMD_SYSTEM_INFO_XNACK_ENABLED
                        if six_two =>
                    {
                        put(value, false)
                    }
                    hsa_sys::vmem::HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED if six_two => {
                        put(value, true)
                    }
                    hsa_sys::vmem::HSA_AMD_SYSTEM_INFO_EXT_VERSION_MAJOR if six_two => {
                        put(value, 1u16)
                    }
                    hsa_sys::vmem::HSA_AMD_SYSTEM_INFO_EXT_VERSION_MINOR if six_two => {
                        put(value, 6u16)
                    }
                    _ => Err(HSA_STATUS_ERROR_INVALID_ARGUMENT),
                }
            }
        })
    }

    /// `hsa_system_extension_supported` (HSA 1.0), as ROCr answers it: any valid extension
    /// id but performance counters and profiling events, at major version 1 or below and
    /// minor 0 (ROCr compares with the system's version and a minor of 0).
    fn hsa_system_extension_supported(
        extension: u16,
        version_major: u16,
        version_minor: u16,
        result: *mut bool,
    ) -> hsa_status_t {
        guard(|| {
            runtime()?;
            if !crate::amd_ext::extension_id_valid(extension) || result.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let e = u32::from(extension);
            let supported = e != HSA_EXTENSION_PERFORMANCE_COUNTERS
                && e != HSA_EXTENSION_PROFILING_EVENTS
                && version_major <= 1
                && version_minor == 0;
            // SAFETY: a C bool out-pointer.
            unsafe { put(result.cast(), supported) }
        })
    }

    /// `hsa_system_major_extension_supported`: images, the finalizer, the AMD loader and the
    /// AQL profiler at major version 1, minor 0, as ROCr answers (it hands out the loader's
    /// 1.02 table all the same; of the tables only the loader's is provided here).
    fn hsa_system_major_extension_supported(
        extension: u16,
        version_major: u16,
        version_minor: *mut u16,
        result: *mut bool,
    ) -> hsa_status_t {
        guard(|| {
            runtime()?;
            if version_minor.is_null() || result.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let supported = matches!(
                u32::from(extension),
                HSA_EXTENSION_IMAGES
                    | HSA_EXTENSION_FINALIZER
                    | HSA_EXTENSION_AMD_LOADER
                    | HSA_EXTENSION_AMD_AQLPROFILE
            ) && version_major == 1;
            // SAFETY: non-NULL out-pointers of the documented types.
            unsafe {
                if supported {
                    put(version_minor.cast(), 0u16)?;
                }
                put(result.cast(), supported)
            }
        })
    }

    /// `hsa_system_get_major_extension_table`: the loader extension's table or the image
    /// extension's (`crate::images`), at most `table_length` bytes of it.
    fn hsa_system_get_major_extension_table(
        extension: u16,
        version_major: u16,
        table_length: usize,
        table: *mut c_void,
    ) -> hsa_status_t {
        guard(|| {
            runtime()?;
            if table.is_null() || table_length == 0 {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if u32::from(extension) == HSA_EXTENSION_IMAGES {
                if version_major != 1 {
                    return Err(HSA_STATUS_ERROR);
                }
                let full = crate::images::table();
                let n = table_length.min(std::mem::size_of::<hsa_ext_images_1_pfn_t>());
                // SAFETY: as below, for the image table.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        (&full as *const hsa_ext_images_1_pfn_t).cast::<u8>(),
                        table.cast::<u8>(),
                        n,
                    )
                };
                return Ok(());
            }
            if u32::from(extension) != HSA_EXTENSION_AMD_LOADER {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            if version_major != 1 {
                return Err(HSA_STATUS_ERROR);
            }
            let full = loader_table();
            let n = table_length.min(std::mem::size_of::<hsa_ven_amd_loader_1_02_pfn_t>());
            // SAFETY: the caller's table has `table_length` bytes; `n` is at most that and at
            // most the source's size; function pointers are plain data.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (&full as *const hsa_ven_amd_loader_1_02_pfn_t).cast::<u8>(),
                    table.cast::<u8>(),
                    n,
                )
            };
            Ok(())
        })
    }

    /// `hsa_system_get_extension_table` (HSA 1.0 form of the above).
    fn hsa_system_get_extension_table(
        extension: u16,
        version_major: u16,
        version_minor: u16,
        table: *mut c_void,
    ) -> hsa_status_t {
        let _ = version_minor;
        // The 1.0 form has no length: the 1.00 table's size is assumed.
        let size = if u32::from(extension) == HSA_EXTENSION_IMAGES {
            std::mem::size_of::<hsa_ext_images_1_00_pfn_t>()
        } else {
            std::mem::size_of::<hsa_ven_amd_loader_1_00_pfn_t>()
        };
        // SAFETY: forwarded with that size.
        unsafe { hsa_system_get_major_extension_table(extension, version_major, size, table) }
    }

    /// `hsa_amd_register_system_event_handler`: GPU memory faults are reported to it (without
    /// one, ROCr prints the fault and aborts; this library prints it and fails the queue).
    fn hsa_amd_register_system_event_handler(
        callback: hsa_amd_system_event_callback_t,
        data: *mut c_void,
    ) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let f = callback.ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let mut handlers = rt.events.handlers.lock();
            if handlers.len() >= 1024 {
                return Err(HSA_STATUS_ERROR_OUT_OF_RESOURCES);
            }
            handlers.push((f as usize, data as usize));
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_the_headers_name_has_rocrs_message() {
        for &(code, name, _) in hsa_sys::STATUS_NAMES {
            if let Some(text) = status_message(code) {
                let text = std::str::from_utf8(&text[..text.len() - 1]).unwrap();
                assert!(text.starts_with(name), "{name}: {text}");
            }
        }
        assert!(status_message(0x7777).is_none());
    }
}
