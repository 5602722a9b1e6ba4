//! How a runtime is configured: lazy or eager loading, the ISA policy and the container
//! reading options. Not for reading them from the environment (the config module does).

use crate::container::ReadOptions;
use crate::target::Policy;

/// When registered fat binaries are loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Loading {
    /// At first use on each agent (the default).
    #[default]
    Lazy,
    /// At registration, on every agent (for comparison and for tools); failures are recorded
    /// and reported at use, as in lazy mode.
    Eager,
}

impl Loading {
    /// Parses `lazy` or `eager` (case-insensitive); `None` for anything else.
    pub fn parse(text: &str) -> Option<Loading> {
        match text.trim().to_ascii_lowercase().as_str() {
            "lazy" | "" => Some(Loading::Lazy),
            "eager" => Some(Loading::Eager),
            _ => None,
        }
    }
}

/// How a runtime reads, selects and loads.
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// Lazy or eager loading.
    pub loading: Loading,
    /// ISA compatibility policy for selection and linking.
    pub policy: Policy,
    /// Container reading options (size caps, hash checking).
    pub read: ReadOptions,
}
