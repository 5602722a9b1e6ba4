// The one list of runtime functions a loader backend uses, checked against a loaded library.
// Not the bindings themselves (those are generated) and not the calls (see `result`).

use crate::HsaLibrary;

macro_rules! backend_functions {
    ($($name:ident),* $(,)?) => {
        /// Every exported runtime function the checked layer ([`crate::result`]) calls, which is
        /// everything a loader backend needs. Each name is also a field of the generated function
        /// table, so a name the headers do not declare fails to compile.
        pub const BACKEND_FUNCTIONS: &[&str] = &[$(stringify!($name)),*];

        impl HsaLibrary {
            /// The functions of [`BACKEND_FUNCTIONS`] this library does not export, in list order.
            pub fn missing_backend_functions(&self) -> Vec<&'static str> {
                let mut missing = Vec::new();
                $(if self.api.$name.is_err() { missing.push(stringify!($name)); })*
                missing
            }

            /// Whether the library exports `name`; `None` when `name` is not in
            /// [`BACKEND_FUNCTIONS`] (hsa-sys only answers for functions it can call).
            pub fn has_function(&self, name: &str) -> Option<bool> {
                match name {
                    $(stringify!($name) => Some(self.api.$name.is_ok()),)*
                    _ => None,
                }
            }
        }
    };
}

backend_functions! {
    // Runtime lifetime and errors.
    hsa_init,
    hsa_shut_down,
    hsa_status_string,
    hsa_system_get_info,
    hsa_system_major_extension_supported,
    hsa_system_get_major_extension_table,
    // Agents and ISAs.
    hsa_iterate_agents,
    hsa_agent_get_info,
    hsa_agent_iterate_isas,
    hsa_isa_get_info_alt,
    // Code objects and executables.
    hsa_code_object_reader_create_from_memory,
    hsa_code_object_reader_destroy,
    hsa_executable_create_alt,
    hsa_executable_load_agent_code_object,
    hsa_executable_agent_global_variable_define,
    hsa_executable_freeze,
    hsa_executable_destroy,
    hsa_executable_get_symbol_by_name,
    hsa_executable_symbol_get_info,
    hsa_executable_iterate_agent_symbols,
    // Memory pools (device, host and kernarg memory).
    hsa_amd_agent_iterate_memory_pools,
    hsa_amd_memory_pool_get_info,
    hsa_amd_memory_pool_allocate,
    hsa_amd_memory_pool_free,
    hsa_amd_agents_allow_access,
    // Memory shared with other processes.
    hsa_amd_ipc_memory_create,
    hsa_amd_ipc_memory_attach,
    hsa_amd_ipc_memory_detach,
    // Copies and host memory.
    hsa_memory_copy,
    hsa_amd_memory_async_copy,
    hsa_amd_memory_lock,
    hsa_amd_memory_unlock,
    hsa_amd_memory_fill,
    // GPU memory faults (ROCr aborts the process on one when no handler is registered).
    hsa_amd_register_system_event_handler,
    // Signals.
    hsa_signal_create,
    hsa_signal_destroy,
    hsa_signal_load_scacquire,
    hsa_signal_store_screlease,
    hsa_signal_wait_scacquire,
    hsa_signal_subtract_screlease,
    // Queues.
    hsa_queue_create,
    hsa_queue_destroy,
    hsa_queue_load_read_index_scacquire,
    hsa_queue_load_write_index_relaxed,
    hsa_queue_add_write_index_relaxed,
    hsa_queue_add_write_index_screlease,
}

/// Functions of the `hsa_ven_amd_loader` 1.01 extension table that the checked layer calls.
/// They are not exported symbols: the runtime hands them out through
/// `hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, ..)` after `hsa_init`, so
/// they can only be checked on a machine where `hsa_init` succeeds.
pub const LOADER_EXTENSION_FUNCTIONS: &[&str] = &[
    "hsa_ven_amd_loader_query_host_address",
    "hsa_ven_amd_loader_executable_iterate_loaded_code_objects",
    "hsa_ven_amd_loader_loaded_code_object_get_info",
];
