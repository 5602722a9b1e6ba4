//! The runtime's error vocabulary: one matchable variant per failure, each with the fields
//! its message names. Not for the HIP codes they map to (the C ABI crate does that).

use std::sync::Arc;

/// A runtime failure. Cheap to clone (load failures are cached and reported to every caller).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The device ordinal names no agent.
    #[error("invalid device {device}: the runtime has {count} device(s)")]
    InvalidDevice {
        /// The ordinal given.
        device: i64,
        /// How many agents there are.
        count: usize,
    },
    /// The runtime has no agent at all.
    #[error("no device: {reason}")]
    NoDevice {
        /// Why (e.g. an invalid `ROCLOAD_SOFT_ISA`).
        reason: String,
    },
    /// No entry of the fat binary can run on the agent; the source is the target layer's
    /// explanation (every entry with the reason it was refused, and a hint).
    #[error("{fat_binary}: {source}")]
    NoBinaryForAgent {
        /// The fat binary, described.
        fat_binary: String,
        /// The explanation.
        source: Arc<crate::target::TargetError>,
    },
    /// The fat binary could not be read, or its code could not be loaded or linked.
    #[error("{fat_binary}: {source}")]
    Load {
        /// The fat binary, described.
        fat_binary: String,
        /// What failed.
        source: Arc<crate::Error>,
    },
    /// The fat binary was unregistered before this first use.
    #[error("{fat_binary} was unregistered")]
    Unregistered {
        /// The fat binary, described.
        fat_binary: String,
    },
    /// A handle that is not (or no longer) known.
    #[error("invalid {what} handle {handle:#x}")]
    InvalidHandle {
        /// Which kind of handle.
        what: &'static str,
        /// Its value.
        handle: u64,
    },
    /// A host function pointer that was never registered as a kernel.
    #[error("host function {address:#x} is not a registered kernel")]
    UnknownFunction {
        /// The pointer.
        address: usize,
    },
    /// A host shadow pointer that was never registered as a device variable.
    #[error("host variable {address:#x} is not a registered device variable")]
    UnknownVariable {
        /// The pointer.
        address: usize,
    },
    /// A name the loaded code does not define.
    #[error("{kind} {name:?} not found in {place}")]
    NotFound {
        /// Kernel, function or variable.
        kind: &'static str,
        /// The name.
        name: String,
        /// Where it was looked for.
        place: String,
    },
    /// An argument that cannot be used.
    #[error("invalid value: {0}")]
    InvalidValue(String),
    /// A launch configuration the device cannot run (zero or oversized grid or block).
    #[error("invalid launch configuration: {0}")]
    InvalidConfiguration(String),
    /// Launch arguments that do not match the kernel's metadata.
    #[error(transparent)]
    Arguments(Box<crate::device::KernargError>),
    /// A device operation failed (allocation, copy, queue), with what was being done.
    #[error("device {device}: {what}: {error}")]
    Device {
        /// The device ordinal.
        device: usize,
        /// What the runtime was doing.
        what: String,
        /// The device's error.
        error: Box<crate::device::DeviceError>,
    },
    /// A kernel (or another step of a stream) failed on the device; sticky until the device is
    /// reset, as in HIP.
    #[error("device {device}: {error}")]
    KernelFailed {
        /// The device ordinal.
        device: usize,
        /// What happened, with the kernel, PC, lane and address.
        error: Arc<crate::device::ExecutionError>,
    },
    /// A cooperative launch with more work-groups than fit on the device at once.
    #[error("cooperative launch of {kernel}: {blocks} work-groups, at most {most} fit at once ({reason})")]
    CooperativeLaunchTooLarge {
        /// The kernel.
        kernel: String,
        /// Work-groups asked for.
        blocks: u64,
        /// Work-groups that fit.
        most: u64,
        /// What bounds them.
        reason: String,
    },
    /// A wait that ran out of time.
    #[error("{what}: not complete after {waited:?}")]
    Timeout {
        /// What was waited for.
        what: String,
        /// How long.
        waited: std::time::Duration,
    },
    /// Work that has not completed yet (`hipErrorNotReady`).
    #[error("not ready")]
    NotReady,
    /// The device's backend cannot do this (e.g. launches through ROCr).
    #[error("device {device}: {what} is not supported by this backend")]
    NotSupported {
        /// The device ordinal.
        device: usize,
        /// The operation.
        what: String,
    },
}

impl RuntimeError {
    /// The target layer's explanation, when this is a failed selection.
    pub fn selection_error(&self) -> Option<&crate::target::TargetError> {
        match self {
            RuntimeError::NoBinaryForAgent { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<crate::device::KernargError> for RuntimeError {
    fn from(e: crate::device::KernargError) -> Self {
        RuntimeError::Arguments(Box::new(e))
    }
}

/// Result with [`RuntimeError`].
pub type RuntimeResult<T> = Result<T, RuntimeError>;
