// Opening the HSA runtime shared library at run time and resolving its functions.
// Not a place for HSA semantics: the checked calls live in `result`, the owning types in `safe`.

use std::ffi::OsString;
use std::mem::ManuallyDrop;
use std::sync::Mutex;

use crate::api::HsaApi;
use crate::error::{CandidateSource, HsaError, LoadAttempt, LoadError};

/// Environment variable naming the HSA runtime library to load instead of the default sonames.
pub const LIBRARY_ENV: &str = "ROCLOAD_HSA_LIBRARY";

/// Sonames tried, in order, when [`LIBRARY_ENV`] is not set.
pub const DEFAULT_LIBRARY_NAMES: &[&str] = &["libhsa-runtime64.so.1", "libhsa-runtime64.so"];

/// An opened HSA runtime library with its functions resolved.
///
/// A function the library does not export is recorded as absent: calling it through
/// [`crate::result`] returns an [`HsaError`] of kind
/// [`MissingFunction`](crate::HsaErrorKind::MissingFunction); nothing panics.
///
/// The library is never unloaded (see [`HsaLibrary::load_from`]).
pub struct HsaLibrary {
    // Never dropped: unloading a runtime that may have started threads or registered exit
    // handlers would leave them pointing into unmapped code. dlopen handles are reference
    // counted, so opening the same library again costs nothing.
    pub(crate) api: ManuallyDrop<HsaApi>,
    // A second handle of the same library (dlopen is reference counted), for looking up
    // symbols the generated table does not declare (exports of newer ROCr versions).
    probe: ManuallyDrop<Option<libloading::Library>>,
    name: String,
    source: CandidateSource,
    deferred: Mutex<Vec<HsaError>>,
}

impl std::fmt::Debug for HsaLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HsaLibrary")
            .field("name", &self.name)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl HsaLibrary {
    /// Opens the HSA runtime: `configured` (the value of [`LIBRARY_ENV`], which rocload's
    /// configuration reads) if given and not empty, and then only that path, so a mistyped
    /// override is reported rather than silently replaced by the system library; else
    /// `libhsa-runtime64.so.1`, then `libhsa-runtime64.so`. This crate reads no environment
    /// variable itself.
    ///
    /// Loading runs the library's initialisers; it does not call `hsa_init`.
    ///
    /// # Errors
    /// [`LoadError`] listing every path tried with the dynamic loader's message, or saying that
    /// the opened library is not an HSA runtime (it lacks `hsa_init`).
    pub fn load(configured: Option<&std::ffi::OsStr>) -> Result<Self, LoadError> {
        match configured {
            Some(path) if !path.is_empty() => {
                Self::load_candidates(&[(path.to_owned(), CandidateSource::Environment)])
            }
            _ => {
                let defaults: Vec<(OsString, CandidateSource)> = DEFAULT_LIBRARY_NAMES
                    .iter()
                    .map(|name| (OsString::from(name), CandidateSource::Default))
                    .collect();
                Self::load_candidates(&defaults)
            }
        }
    }

    /// Opens the HSA runtime at `path` (a file path or a soname the dynamic loader resolves).
    ///
    /// # Errors
    /// [`LoadError`] with the dynamic loader's message, or saying the library lacks `hsa_init`.
    pub fn load_from(path: impl Into<OsString>) -> Result<Self, LoadError> {
        Self::load_candidates(&[(path.into(), CandidateSource::Caller)])
    }

    fn load_candidates(candidates: &[(OsString, CandidateSource)]) -> Result<Self, LoadError> {
        let mut attempts = Vec::new();
        for (path, source) in candidates {
            let shown = path.to_string_lossy().into_owned();
            // SAFETY: loading a shared library runs its initialisers. The candidates are the
            // ROCr runtime's sonames or a path the user chose explicitly for this purpose; HsaApi
            // only resolves symbols and calls nothing.
            let opened = unsafe { HsaApi::new(path) };
            match opened {
                Err(e) => {
                    tracing::debug!(path = %shown, error = %e, "HSA runtime candidate did not load");
                    attempts.push(LoadAttempt {
                        path: shown,
                        source: *source,
                        reason: e.to_string(),
                    });
                }
                Ok(api) if api.hsa_init.is_err() => {
                    tracing::debug!(path = %shown, "library loaded but has no hsa_init");
                    attempts.push(LoadAttempt {
                        path: shown,
                        source: *source,
                        reason: "loaded, but it is not an HSA runtime: it does not export hsa_init"
                            .to_owned(),
                    });
                    // Leaked like every HsaApi (see the field comment).
                    std::mem::forget(api);
                }
                Ok(api) => {
                    tracing::debug!(path = %shown, "HSA runtime loaded");
                    // SAFETY: the same library is already loaded (this only takes a reference).
                    let probe = unsafe { libloading::Library::new(path) }.ok();
                    return Ok(HsaLibrary {
                        api: ManuallyDrop::new(api),
                        probe: ManuallyDrop::new(probe),
                        name: shown,
                        source: *source,
                        deferred: Mutex::new(Vec::new()),
                    });
                }
            }
        }
        Err(LoadError { attempts })
    }

    /// Whether the library exports a symbol called `name`, declared in the 5.2.3 headers or not
    /// (newer exports tell newer ROCr versions apart). Nothing is called.
    pub fn exports(&self, name: &str) -> bool {
        let Some(lib) = self.probe.as_ref() else {
            return false;
        };
        let mut symbol = name.as_bytes().to_vec();
        symbol.push(0);
        // SAFETY: only the symbol's address is looked up, as an opaque pointer never called.
        unsafe { lib.get::<*const std::ffi::c_void>(&symbol) }.is_ok()
    }

    /// The address of the exported function `name`, as a function pointer of type `F`; `None`
    /// when the library does not export it (functions of newer ROCr versions than the 5.2.3
    /// headers the generated table comes from).
    ///
    /// # Safety
    /// `F` must be an `extern "C"` function pointer type with the function's real signature.
    pub(crate) unsafe fn function<F: Copy>(&self, name: &str) -> Option<F> {
        let lib = self.probe.as_ref()?;
        let mut symbol = name.as_bytes().to_vec();
        symbol.push(0);
        // SAFETY: the caller vouches that `F` is the function's type; the library is never
        // unloaded, so the pointer stays valid.
        unsafe { lib.get::<F>(&symbol) }.ok().map(|s| *s)
    }

    /// The path or soname that was opened, as handed to the dynamic loader.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where [`HsaLibrary::name`] came from.
    pub fn source(&self) -> CandidateSource {
        self.source
    }

    /// The file the dynamic loader actually mapped (resolved from the address of `hsa_init`),
    /// when the platform can tell.
    pub fn file(&self) -> Option<std::path::PathBuf> {
        let init = *self.api.hsa_init.as_ref().ok()?;
        let mut info = libc::Dl_info {
            dli_fname: std::ptr::null(),
            dli_fbase: std::ptr::null_mut(),
            dli_sname: std::ptr::null(),
            dli_saddr: std::ptr::null_mut(),
        };
        // SAFETY: dladdr only reads the loader's tables; `info` is a valid out-pointer.
        let found = unsafe { libc::dladdr(init as *const libc::c_void, &mut info) };
        if found == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: dladdr returned a NUL-terminated path owned by the loader, valid while the
        // library stays loaded, which is forever (it is never unloaded).
        let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
        use std::os::unix::ffi::OsStrExt;
        Some(std::path::PathBuf::from(std::ffi::OsStr::from_bytes(
            name.to_bytes(),
        )))
    }

    /// Records an error that could not be returned (from a `Drop`), for
    /// [`HsaLibrary::take_deferred_errors`].
    pub(crate) fn defer_error(&self, error: HsaError) {
        tracing::debug!(%error, "deferred HSA error");
        let mut errors = match self.deferred.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Bounded: a program that never collects them keeps only the most recent ones.
        const KEEP: usize = 64;
        if errors.len() >= KEEP {
            errors.remove(0);
        }
        errors.push(error);
    }

    /// Errors that happened where they could not be returned (for example `hsa_shut_down` run by
    /// `Drop` of [`crate::Hsa`]), oldest first; at most the 64 most recent are kept.
    pub fn take_deferred_errors(&self) -> Vec<HsaError> {
        let mut errors = match self.deferred.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        std::mem::take(&mut *errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_functions_the_library_lacks_are_absent_not_a_load_failure() {
        let lib = match HsaLibrary::load_from("libhsa-runtime64.so.1") {
            Ok(lib) => lib,
            Err(e) if std::env::var_os("CI").is_some() => {
                panic!("CI is set but the HSA runtime is missing: {e}")
            }
            Err(e) => {
                eprintln!("skipped: HSA runtime not installed ({e})");
                return;
            }
        };
        // hsa_ven_amd_loader.h declares these, but ROCr 5.2.3 hands them out only through the
        // extension table (`nm -D` lists no hsa_ven_amd_loader_* symbol).
        assert!(lib.api.hsa_ven_amd_loader_query_host_address.is_err());
        assert!(lib
            .api
            .hsa_ven_amd_loader_loaded_code_object_get_info
            .is_err());
        assert!(lib.api.hsa_init.is_ok());
        // 5.2.3 predates the 6.2 virtual-memory API.
        assert!(lib.exports("hsa_init"));
        assert!(!lib.exports("hsa_amd_vmem_address_reserve_align"));
        assert!(!lib.exports("no_such_symbol\0x"));
    }
}
