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
    /// A pointer argument that must not be null.
    #[error("{what} is NULL")]
    NullPointer {
        /// What the pointer is for.
        what: &'static str,
    },
    /// A size argument that must not be zero.
    #[error("{what} has size 0")]
    ZeroSize {
        /// What the size is of.
        what: &'static str,
    },
    /// An alignment that is not a power of two.
    #[error("{what}: alignment {alignment} is not a power of two")]
    BadAlignment {
        /// What was to be aligned.
        what: String,
        /// The alignment given.
        alignment: usize,
    },
    /// A size larger than can be represented or allocated at once.
    #[error("{what}: {size} bytes is more than the {limit} that can be allocated at once")]
    TooLarge {
        /// What was to be allocated.
        what: String,
        /// Bytes asked for (saturated at `u64::MAX` when the size itself overflowed).
        size: u64,
        /// The most there can be.
        limit: u64,
    },
    /// A host allocation the system refused.
    #[error("{what}: out of host memory for {size} bytes")]
    HostOutOfMemory {
        /// What was being allocated.
        what: String,
        /// Bytes asked for.
        size: u64,
    },
    /// A host slice whose length differs from the device buffer's.
    #[error("host slice has {host} elements, the buffer {buffer}")]
    LengthMismatch {
        /// Elements of the host slice.
        host: usize,
        /// Elements of the buffer.
        buffer: usize,
    },
    /// A row pitch smaller than the row it holds (`hipMemcpy2D`).
    #[error("{side} pitch {pitch} is smaller than the width {width}")]
    PitchTooSmall {
        /// `destination` or `source`.
        side: &'static str,
        /// The pitch given.
        pitch: u64,
        /// The width of a row in bytes.
        width: u64,
    },
    /// A 2D extent whose size overflows 64 bits.
    #[error("{height} rows of {width} bytes at pitch {pitch} overflow 64 bits")]
    ExtentOverflow {
        /// Bytes from one row to the next.
        pitch: u64,
        /// Bytes of a row.
        width: u64,
        /// Rows.
        height: u64,
    },
    /// A range that runs past the end of the address space.
    #[error("{size} bytes at {address:#x} wrap the address space")]
    AddressWraps {
        /// Where the range starts.
        address: u64,
        /// Its size.
        size: u64,
    },
    /// An array descriptor that describes no array (channels, flags, extent, mip levels), or
    /// an array that was freed.
    #[error("invalid array: {reason}")]
    InvalidArray {
        /// What is wrong.
        reason: String,
    },
    /// One end of a pitched, 3D or array copy whose region does not fit: outside an array's
    /// level, not whole texels, a slice too small for its rows, or a size that overflows.
    #[error("{side}: {reason}")]
    BadRegion {
        /// `destination` or `source`.
        side: &'static str,
        /// What does not fit.
        reason: String,
    },
    /// Host memory a call was given that is not mapped with the protection the call needs
    /// (unmapped, `PROT_NONE`, read-only for a write, or a range that wraps).
    #[error("{what}: {error}")]
    HostMemory {
        /// What the memory was for (`copy source`, `host memory to register`).
        what: &'static str,
        /// What is wrong with it.
        error: crate::device::host_memory::HostRangeError,
    },
    /// An address a call needs to be memory of a device (device, pinned, registered or managed
    /// memory: a fill's destination, a copy's side that its kind says is the device's) that no
    /// device's allocation table holds.
    #[error("{what}: {address:#x} is not memory of any device{}", .detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    NotDeviceMemory {
        /// What the address was for.
        what: &'static str,
        /// The address.
        address: u64,
        /// What the tables know about it (a freed allocation), when anything.
        detail: Option<String>,
    },
    /// A stream whose device context is gone (its runtime was dropped).
    #[error("stream {stream}: its device no longer exists")]
    StreamDeviceGone {
        /// The stream's id.
        stream: u64,
    },
    /// An event created with `hipEventDisableTiming`, asked for a time.
    #[error("an event created with hipEventDisableTiming has no time")]
    EventWithoutTiming,
    /// An event asked for a time before it was ever recorded.
    #[error("event was never recorded")]
    EventNotRecorded,
    /// A kernel launched on a stream of another device context than the one it was loaded
    /// in: another device, or the same ordinal of another runtime (`hipErrorInvalidDevice`, as
    /// clr returns for a function with no code on the stream's device).
    #[error("kernel {kernel} was loaded on device {kernel_device}; the stream belongs to another device context (device {stream_device} of this or another runtime)")]
    WrongDevice {
        /// The kernel.
        kernel: String,
        /// The device ordinal the kernel was loaded on.
        kernel_device: usize,
        /// The device ordinal of the stream.
        stream_device: usize,
    },
    /// A launch configuration the device cannot run (zero or oversized grid or block).
    #[error("invalid launch configuration: {0}")]
    InvalidConfiguration(super::LaunchConfigError),
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
    /// A multi-device launch that cannot be made as asked (no launches, too many, two on one
    /// device).
    #[error("multi-device launch: {reason}")]
    MultiDevice {
        /// What is wrong.
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
    /// A range of memory an operation cannot apply to (e.g. hints for memory that is not
    /// managed, or a range that runs past its allocation).
    #[error("{what} {address:#x}+{len}: {reason}")]
    InvalidRange {
        /// What the range is for.
        what: &'static str,
        /// Its first address.
        address: u64,
        /// Its length in bytes.
        len: u64,
        /// Why it is refused.
        reason: String,
    },
    /// A virtual-memory or IPC call HIP refuses with these arguments or in this state (an
    /// unknown or released allocation handle, a range that is not whole mappings, a
    /// reservation that still has mappings).
    #[error("{what}: {reason}")]
    Vmm {
        /// The operation.
        what: &'static str,
        /// Why it is refused.
        reason: String,
    },
    /// An IPC event handle opened in the process that made it (`hipErrorInvalidContext`, as
    /// clr returns).
    #[error("an IPC event handle cannot be opened in the process that made it (pid {pid})")]
    IpcSameProcess {
        /// This process.
        pid: u32,
    },
    /// An IPC handle asked of an event created without `hipEventInterprocess`
    /// (`hipErrorInvalidConfiguration`, as clr returns).
    #[error("the event was not created with hipEventInterprocess")]
    NotInterprocess,
    /// An interprocess event whose last record will never complete: the process that recorded
    /// it exited before its stream reached the record.
    #[error(
        "the event's last record will never complete: process {pid}, which recorded it, exited"
    )]
    RecorderGone {
        /// The process that recorded it.
        pid: u32,
    },
    /// Work that has not completed yet (`hipErrorNotReady`).
    #[error("not ready")]
    NotReady,
    /// A graph operation that cannot be done (a node of another graph, a cycle, an update
    /// the executable cannot take).
    #[error(transparent)]
    Graph(super::graph::GraphError),
    /// A stream-capture rule broken, or a capture operation in the wrong state.
    #[error(transparent)]
    Capture(super::capture::CaptureError),
    /// A memory pool operation that cannot be done (stream-ordered allocation).
    #[error(transparent)]
    Pool(super::mempool::PoolError),
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

impl From<super::graph::GraphError> for RuntimeError {
    fn from(e: super::graph::GraphError) -> Self {
        RuntimeError::Graph(e)
    }
}

impl From<super::capture::CaptureError> for RuntimeError {
    fn from(e: super::capture::CaptureError) -> Self {
        RuntimeError::Capture(e)
    }
}
