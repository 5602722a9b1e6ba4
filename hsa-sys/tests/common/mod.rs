// Shared helpers for the tests against the real ROCr library: open it or decide to skip/fail.
#![allow(dead_code)]

use hsa_sys::{Hsa, HsaLibrary};
use std::sync::Arc;

/// Opens the system HSA runtime by its default sonames. When it is missing the test fails if
/// env CI is set (CI installs libhsa-runtime64-1) and is skipped with a message otherwise.
pub fn system_library(test: &str) -> Option<HsaLibrary> {
    match HsaLibrary::load_from("libhsa-runtime64.so.1") {
        Ok(lib) => Some(lib),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("{test}: CI is set but the HSA runtime is missing ({e}); install libhsa-runtime64-1")
        }
        Err(e) => {
            eprintln!("{test}: skipped: HSA runtime not installed ({e}); apt-get install libhsa-runtime64-1");
            None
        }
    }
}

/// An initialised runtime with at least one GPU agent, or `None` after printing why the test
/// is skipped ("skipped: no GPU agent (hsa_init failed: ...)").
pub fn gpu_runtime(test: &str) -> Option<(Hsa, Vec<hsa_sys::Agent>)> {
    let lib = Arc::new(system_library(test)?);
    let hsa = match Hsa::init(lib) {
        Ok(hsa) => hsa,
        Err(e) => {
            eprintln!("{test}: skipped: no GPU agent (hsa_init failed: {e})");
            return None;
        }
    };
    let gpus = match hsa.gpu_agents() {
        Ok(gpus) => gpus,
        Err(e) => panic!("{test}: hsa_init succeeded but listing agents failed: {e}"),
    };
    if gpus.is_empty() {
        eprintln!("{test}: skipped: no GPU agent (hsa_init succeeded, the runtime reports none)");
        return None;
    }
    Some((hsa, gpus))
}

/// Whether this machine has the AMD GPU kernel driver interface ROCr opens.
pub fn has_kfd() -> bool {
    std::path::Path::new("/dev/kfd").exists()
}

/// ROCr's init state is process-wide: while one test's `hsa_init` is under way, another
/// test's call may see a half-initialised runtime (e.g. `hsa_iterate_agents` succeeding with
/// no agents). Tests that call `hsa_init` hold this lock.
pub fn runtime_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
