// Errors of hsa-sys: why the runtime library could not be loaded, and which HSA call failed with
// which status. Not a place for policy: callers decide what a status means for them.

use std::fmt;

use crate::bindings::*;

/// Where a library path that [`crate::HsaLibrary::load`] tried came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CandidateSource {
    /// The `ROCLOAD_HSA_LIBRARY` environment variable.
    Environment,
    /// One of the built-in sonames (`libhsa-runtime64.so.1`, `libhsa-runtime64.so`).
    Default,
    /// A path the caller passed to [`crate::HsaLibrary::load_from`].
    Caller,
}

/// One failed attempt to open an HSA runtime library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadAttempt {
    /// The path or soname handed to the dynamic loader.
    pub path: String,
    /// Where that path came from.
    pub source: CandidateSource,
    /// Why it failed: the dynamic loader's message, or what the library lacks.
    pub reason: String,
}

impl fmt::Display for LoadAttempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            CandidateSource::Environment => {
                write!(f, "{}={}: {}", crate::LIBRARY_ENV, self.path, self.reason)
            }
            CandidateSource::Default | CandidateSource::Caller => {
                write!(f, "{}: {}", self.path, self.reason)
            }
        }
    }
}

/// No HSA runtime library could be opened; every attempt is listed in order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LoadError {
    /// Each path tried, in order, with the reason it failed.
    pub attempts: Vec<LoadAttempt>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("could not load the HSA runtime (tried ")?;
        for (i, attempt) in self.attempts.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{attempt}")?;
        }
        f.write_str(")")
    }
}

/// What kind of failure an [`HsaError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HsaErrorKind {
    /// The runtime returned the non-success status in [`HsaError::status`].
    Status,
    /// The loaded library does not export the function (or the extension table lacks the entry);
    /// `status` is `HSA_STATUS_ERROR`.
    MissingFunction,
    /// An argument could not be passed to the runtime (a name with a NUL byte, a size that does
    /// not fit); `status` is `HSA_STATUS_ERROR_INVALID_ARGUMENT` and nothing was called.
    InvalidArgument,
    /// The runtime answered with something unusable (an implausible length);
    /// `status` is `HSA_STATUS_ERROR`.
    BadOutput,
    /// A Rust callback invoked by the runtime panicked; the panic was caught at the C boundary
    /// and the iteration stopped. `status` is `HSA_STATUS_ERROR`.
    CallbackPanicked,
}

/// A failed HSA call: which call, the status, and a message saying what it means.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct HsaError {
    /// The C function that failed, e.g. `"hsa_init"`.
    pub call: &'static str,
    /// The status the runtime returned (or the stand-in status of [`HsaError::kind`]).
    pub status: hsa_status_t,
    /// What the failure means: the runtime's `hsa_status_string` text when available, else
    /// a description from hsa-sys.
    pub message: String,
    /// Whether the runtime returned the status or hsa-sys detected the failure itself.
    pub kind: HsaErrorKind,
}

impl HsaError {
    /// An error for a status the runtime returned, without consulting the runtime for a message.
    pub fn from_status(call: &'static str, status: hsa_status_t) -> Self {
        HsaError {
            call,
            status,
            message: status_description(status).to_owned(),
            kind: HsaErrorKind::Status,
        }
    }

    pub(crate) fn missing_function(call: &'static str, library: &str) -> Self {
        HsaError {
            call,
            status: HSA_STATUS_ERROR,
            message: format!("{library} does not provide {call}"),
            kind: HsaErrorKind::MissingFunction,
        }
    }

    pub(crate) fn invalid_argument(call: &'static str, message: String) -> Self {
        HsaError {
            call,
            status: HSA_STATUS_ERROR_INVALID_ARGUMENT,
            message,
            kind: HsaErrorKind::InvalidArgument,
        }
    }

    pub(crate) fn bad_output(call: &'static str, message: String) -> Self {
        HsaError {
            call,
            status: HSA_STATUS_ERROR,
            message,
            kind: HsaErrorKind::BadOutput,
        }
    }

    pub(crate) fn callback_panicked(call: &'static str) -> Self {
        HsaError {
            call,
            status: HSA_STATUS_ERROR,
            message: "a Rust callback panicked; the panic was caught and the iteration stopped"
                .to_owned(),
            kind: HsaErrorKind::CallbackPanicked,
        }
    }

    /// The symbolic name of [`HsaError::status`], e.g. `"HSA_STATUS_ERROR_OUT_OF_RESOURCES"`,
    /// or `None` for a code the headers do not name.
    pub fn status_name(&self) -> Option<&'static str> {
        status_name(self.status)
    }

    /// True when the runtime returned exactly `status`.
    pub fn is_status(&self, status: hsa_status_t) -> bool {
        self.kind == HsaErrorKind::Status && self.status == status
    }
}

impl fmt::Display for HsaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            HsaErrorKind::Status => {
                write!(f, "{} failed: ", self.call)?;
                match status_name(self.status) {
                    Some(name) => write!(f, "{name} ({:#x})", self.status)?,
                    None => write!(f, "status {:#x}", self.status)?,
                }
                if !self.message.is_empty() {
                    write!(f, ": {}", self.message)?;
                }
                Ok(())
            }
            HsaErrorKind::MissingFunction => {
                write!(f, "{} unavailable: {}", self.call, self.message)
            }
            HsaErrorKind::InvalidArgument => {
                write!(
                    f,
                    "{} not called: invalid argument: {}",
                    self.call, self.message
                )
            }
            HsaErrorKind::BadOutput => write!(
                f,
                "{} returned unusable output: {}",
                self.call, self.message
            ),
            HsaErrorKind::CallbackPanicked => write!(f, "{}: {}", self.call, self.message),
        }
    }
}

// The table is generated from the constants bindgen emitted, so names and values come from the
// headers, never typed in by hand.
macro_rules! status_table {
    ($($name:ident => $text:expr,)*) => {
        /// Every `hsa_status_t` the bound headers name, with a short description.
        pub const STATUS_NAMES: &[(hsa_status_t, &str, &str)] = &[$(($name, stringify!($name), $text)),*];
    };
}

status_table! {
    HSA_STATUS_SUCCESS => "success",
    HSA_STATUS_INFO_BREAK => "a traversal over a list of elements was interrupted early",
    HSA_STATUS_ERROR => "generic error",
    HSA_STATUS_ERROR_INVALID_ARGUMENT => "an argument is invalid",
    HSA_STATUS_ERROR_INVALID_QUEUE_CREATION => "the requested queue creation is not valid",
    HSA_STATUS_ERROR_INVALID_ALLOCATION => "the requested allocation is not valid",
    HSA_STATUS_ERROR_INVALID_AGENT => "the agent is invalid",
    HSA_STATUS_ERROR_INVALID_REGION => "the memory region is invalid",
    HSA_STATUS_ERROR_INVALID_SIGNAL => "the signal is invalid",
    HSA_STATUS_ERROR_INVALID_QUEUE => "the queue is invalid",
    HSA_STATUS_ERROR_OUT_OF_RESOURCES => "the runtime could not allocate the resources it needs",
    HSA_STATUS_ERROR_INVALID_PACKET_FORMAT => "the AQL packet is malformed",
    HSA_STATUS_ERROR_RESOURCE_FREE => "an error was detected while releasing a resource",
    HSA_STATUS_ERROR_NOT_INITIALIZED => "the runtime is not initialized (hsa_init did not succeed)",
    HSA_STATUS_ERROR_REFCOUNT_OVERFLOW => "the runtime's reference count would overflow",
    HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS => "the arguments are not compatible with each other",
    HSA_STATUS_ERROR_INVALID_INDEX => "the index is invalid",
    HSA_STATUS_ERROR_INVALID_ISA => "the instruction set architecture is invalid",
    HSA_STATUS_ERROR_INVALID_ISA_NAME => "the instruction set architecture name is invalid",
    HSA_STATUS_ERROR_INVALID_CODE_OBJECT => "the code object is invalid",
    HSA_STATUS_ERROR_INVALID_EXECUTABLE => "the executable is invalid",
    HSA_STATUS_ERROR_FROZEN_EXECUTABLE => "the executable is frozen",
    HSA_STATUS_ERROR_INVALID_SYMBOL_NAME => "there is no symbol with the given name",
    HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED => "the variable is already defined",
    HSA_STATUS_ERROR_VARIABLE_UNDEFINED => "the variable is undefined",
    HSA_STATUS_ERROR_EXCEPTION => "an HSAIL operation raised an exception",
    HSA_STATUS_ERROR_INVALID_CODE_SYMBOL => "the code object symbol is invalid",
    HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL => "the executable symbol is invalid",
    HSA_STATUS_ERROR_INVALID_FILE => "the file descriptor is invalid",
    HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER => "the code object reader is invalid",
    HSA_STATUS_ERROR_INVALID_CACHE => "the cache is invalid",
    HSA_STATUS_ERROR_INVALID_WAVEFRONT => "the wavefront is invalid",
    HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP => "the signal group is invalid",
    HSA_STATUS_ERROR_INVALID_RUNTIME_STATE => "the runtime is in an invalid state",
    HSA_STATUS_ERROR_FATAL => "the queue received a fatal error",
    HSA_STATUS_ERROR_INVALID_MEMORY_POOL => "the memory pool is invalid",
    HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION => "an access fell outside the allowed memory aperture",
    HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION => "the device executed an illegal instruction",
    HSA_STATUS_ERROR_MEMORY_FAULT => "the device raised a memory fault",
    HSA_STATUS_CU_MASK_REDUCED => "the compute unit mask was reduced",
}

/// The symbolic name of an `hsa_status_t`, or `None` for a code the headers do not name.
pub fn status_name(status: hsa_status_t) -> Option<&'static str> {
    STATUS_NAMES
        .iter()
        .find(|(code, _, _)| *code == status)
        .map(|(_, name, _)| *name)
}

/// hsa-sys's own short description of a status, used when the runtime's
/// `hsa_status_string` is unavailable.
pub fn status_description(status: hsa_status_t) -> &'static str {
    STATUS_NAMES
        .iter()
        .find(|(code, _, _)| *code == status)
        .map(|(_, _, text)| *text)
        .unwrap_or("status not named by the HSA headers")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_are_unique_and_found() {
        for (i, (code, name, _)) in STATUS_NAMES.iter().enumerate() {
            assert!(
                STATUS_NAMES[..i]
                    .iter()
                    .all(|(c, n, _)| c != code && n != name),
                "{name} repeated"
            );
            assert_eq!(status_name(*code), Some(*name));
        }
        // 0x1008 is what Debian's ROCr 5.2.3 hsa_init returns without /dev/kfd.
        assert_eq!(
            status_name(0x1008),
            Some("HSA_STATUS_ERROR_OUT_OF_RESOURCES")
        );
        assert_eq!(status_name(0xdead), None);
    }

    #[test]
    fn status_error_display_names_call_status_and_message() {
        let e = HsaError::from_status("hsa_init", HSA_STATUS_ERROR_OUT_OF_RESOURCES);
        let text = e.to_string();
        assert!(
            text.starts_with("hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)"),
            "{text}"
        );
        assert!(e.is_status(HSA_STATUS_ERROR_OUT_OF_RESOURCES));
        let unnamed = HsaError::from_status("hsa_queue_create", 0x7777).to_string();
        assert!(unnamed.contains("status 0x7777"), "{unnamed}");
    }

    #[test]
    fn non_status_errors_do_not_pretend_to_be_runtime_statuses() {
        let e = HsaError::missing_function("hsa_foo", "libx.so");
        assert!(!e.is_status(HSA_STATUS_ERROR));
        assert_eq!(
            e.to_string(),
            "hsa_foo unavailable: libx.so does not provide hsa_foo"
        );
    }

    #[test]
    fn load_error_lists_every_attempt() {
        let e = LoadError {
            attempts: vec![
                LoadAttempt {
                    path: "a.so".into(),
                    source: CandidateSource::Default,
                    reason: "not found".into(),
                },
                LoadAttempt {
                    path: "/x".into(),
                    source: CandidateSource::Environment,
                    reason: "bad".into(),
                },
            ],
        };
        assert_eq!(
            e.to_string(),
            "could not load the HSA runtime (tried a.so: not found; ROCLOAD_HSA_LIBRARY=/x: bad)"
        );
    }
}
