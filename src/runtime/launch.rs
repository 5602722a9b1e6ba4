//! Kernel launches: one path for every backend. A launch is checked against the kernel's
//! metadata and the device's limits, its kernarg segment is laid out from the metadata and
//! copied into a read-only device allocation, and a real AQL dispatch packet goes to the stream,
//! holding the kernel's executable and the segment alive until it completes.
//!
//! Not for argument layout rules (the device layer's kernarg module) or for queues.

use std::sync::Arc;

use super::device::DeviceContext;
use super::kernel::KernelRef;
use super::stream::Stream;
use super::tools::{DispatchEvent, Tool};
use super::{RuntimeError, RuntimeResult};
use crate::device::aql::{self, DispatchFields, DispatchGeometry};
use crate::device::{
    kernarg, Completion, Device, ExecutionError, ExplicitArgs, HiddenValues, KernargError,
    MemoryKind,
};

/// Work-items per work-group no AMD processor exceeds.
pub const MAX_BLOCK_SIZE: u64 = 1024;
/// LDS bytes per work-group on gfx9 and gfx10 processors.
pub const MAX_LDS: u64 = 64 * 1024;
/// Granule and slack of kernarg segments (the widest scalar load, `s_load_dwordx16`).
const KERNARG_PADDING: u64 = 64;
/// Scratch bytes per work-item given to kernels with a dynamic stack (recursion, calls through
/// pointers whose stack use the compiler cannot bound), on top of their fixed private segment.
pub const DYNAMIC_STACK_BYTES: u32 = 16 * 1024;

/// How a kernel is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Work-groups in x, y, z (`gridDim`).
    pub grid: [u32; 3],
    /// Work-items per work-group in x, y, z (`blockDim`).
    pub block: [u32; 3],
    /// Dynamic LDS bytes (`sharedMemBytes`).
    pub dynamic_lds: u32,
    /// Work-items of a last, partial work-group per dimension, beyond `grid` whole ones (0:
    /// none, as in every `<<<>>>` launch; `hipExtModuleLaunchKernel`'s global sizes need not
    /// be whole work-groups). Each must be less than `block`'s.
    pub partial: [u32; 3],
}

/// A kernarg segment in device memory, freed when the dispatches that read it are done.
pub(crate) struct KernargSegment {
    device: Arc<dyn Device>,
    /// Its device address.
    pub(crate) base: u64,
}

impl Drop for KernargSegment {
    fn drop(&mut self) {
        if let Err(e) = self.device.free(self.base) {
            tracing::debug!(error = %e, "freeing a kernarg segment failed");
        }
    }
}

/// Tells the tools that heard of a dispatch how it ended, exactly once: a dispatch whose
/// submission failed (the queue dropped the callback) ends as failed.
pub(crate) struct CompletionNotice {
    event: DispatchEvent,
    listeners: Vec<Arc<dyn Tool>>,
    delivered: bool,
}

impl CompletionNotice {
    fn deliver(&mut self, completion: &Completion) {
        self.delivered = true;
        for tool in &self.listeners {
            tool.dispatch_completed(&self.event, completion);
        }
    }
}

impl Drop for CompletionNotice {
    fn drop(&mut self) {
        if !self.delivered {
            let failed = Completion::Failed(Arc::new(ExecutionError::Packet(
                "the dispatch was not submitted".into(),
            )));
            self.deliver(&failed);
        }
    }
}

/// A launch configuration the device or the kernel cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchConfigError {
    /// A grid or block with no work-item in some dimension.
    #[error("{what} {sizes:?} is 0 in dimension {dimension}")]
    ZeroDimension {
        /// `grid` or `block`.
        what: &'static str,
        /// The sizes given.
        sizes: [u32; 3],
        /// The empty dimension (0: x, 1: y, 2: z).
        dimension: usize,
    },
    /// A partial work-group at least as large as a whole one.
    #[error("partial work-group of {partial} work-items in dimension {dimension} must be smaller than the block's {block}")]
    PartialTooLarge {
        /// The dimension (0: x, 1: y, 2: z).
        dimension: usize,
        /// Work-items of the partial work-group.
        partial: u32,
        /// Work-items of a whole one.
        block: u32,
    },
    /// A block with more work-items than the kernel allows.
    #[error("block {block:?} has {work_items} work-items; kernel {kernel} allows {limit}")]
    BlockTooLarge {
        /// The kernel.
        kernel: String,
        /// The block.
        block: [u32; 3],
        /// Its work-items.
        work_items: u64,
        /// The kernel's `max_flat_workgroup_size`, or [`MAX_BLOCK_SIZE`].
        limit: u64,
    },
    /// A grid of 2^32 work-items or more in one dimension.
    #[error("dimension {dimension}: {grid} work-groups of {block} work-items (+{partial}) exceed 2^32 work-items")]
    GridTooLarge {
        /// The dimension (0: x, 1: y, 2: z).
        dimension: usize,
        /// Whole work-groups.
        grid: u32,
        /// Work-items per work-group.
        block: u32,
        /// Work-items of the partial work-group.
        partial: u32,
    },
    /// More LDS than a work-group can have.
    #[error("kernel {kernel} needs {} bytes of LDS ({fixed} static + {dynamic} dynamic), more than {limit}", fixed.saturating_add(u64::from(*dynamic)))]
    TooMuchLds {
        /// The kernel.
        kernel: String,
        /// Static LDS bytes (the kernel's group segment).
        fixed: u64,
        /// Dynamic LDS bytes of the launch.
        dynamic: u32,
        /// LDS bytes per work-group.
        limit: u64,
    },
}

/// Checks `config` against the kernel and the device's limits.
pub(crate) fn check(kernel: &KernelRef, config: &LaunchConfig) -> RuntimeResult<DispatchGeometry> {
    let info = kernel.info();
    let invalid = |e: LaunchConfigError| Err(RuntimeError::InvalidConfiguration(e));
    for dimension in 0..3 {
        if config.grid[dimension] == 0 && config.partial[dimension] == 0 {
            return invalid(LaunchConfigError::ZeroDimension {
                what: "grid",
                sizes: config.grid,
                dimension,
            });
        }
        if config.block[dimension] == 0 {
            return invalid(LaunchConfigError::ZeroDimension {
                what: "block",
                sizes: config.block,
                dimension,
            });
        }
    }
    if let Some(dimension) = (0..3).find(|&d| config.partial[d] >= config.block[d]) {
        return invalid(LaunchConfigError::PartialTooLarge {
            dimension,
            partial: config.partial[dimension],
            block: config.block[dimension],
        });
    }
    let geometry = DispatchGeometry {
        grid: config.grid,
        block: config.block,
        remainder: config.partial,
    };
    let limit = info.max_flat_workgroup_size.unwrap_or(MAX_BLOCK_SIZE);
    if geometry.block_size() > limit {
        return invalid(LaunchConfigError::BlockTooLarge {
            kernel: info.name.clone(),
            block: config.block,
            work_items: geometry.block_size(),
            limit,
        });
    }
    let too_large = |d: usize| {
        u64::from(config.grid[d]) * u64::from(config.block[d]) + u64::from(config.partial[d])
            > u64::from(u32::MAX)
    };
    if let Some(dimension) = (0..3).find(|&d| too_large(d)) {
        return invalid(LaunchConfigError::GridTooLarge {
            dimension,
            grid: config.grid[dimension],
            block: config.block[dimension],
            partial: config.partial[dimension],
        });
    }
    // Saturating: the static size comes from the code object's metadata.
    let lds = info
        .group_segment_fixed_size
        .saturating_add(u64::from(config.dynamic_lds));
    if lds > MAX_LDS {
        return invalid(LaunchConfigError::TooMuchLds {
            kernel: info.name.clone(),
            fixed: info.group_segment_fixed_size,
            dynamic: config.dynamic_lds,
            limit: MAX_LDS,
        });
    }
    Ok(geometry)
}

/// Launches `kernel` on `stream` (which must belong to the device context the kernel was loaded
/// in).
///
/// # Errors
/// [`RuntimeError::WrongDevice`], [`RuntimeError::InvalidConfiguration`],
/// [`RuntimeError::Arguments`], the device's sticky
/// error, or a device failure (allocation, submission).
pub(crate) fn launch(
    stream: &Stream,
    kernel: &KernelRef,
    config: &LaunchConfig,
    args: ExplicitArgs<'_>,
) -> RuntimeResult<()> {
    launch_with(stream, kernel, config, args, Cooperation::None)
}

/// How a launch's work-groups cooperate.
#[derive(Clone)]
pub(crate) enum Cooperation {
    /// An ordinary launch.
    None,
    /// A cooperative launch: the grid syncs with `ds_gws_barrier` (the device library's
    /// `__ockl_grid_sync`); `hidden_multigrid_sync_arg` is 1, which makes
    /// `grid_group::is_valid()` true and `multi_grid_group::is_valid()` false, as clr sets it.
    Grid,
    /// One grid of a multi-device cooperative launch: `hidden_multigrid_sync_arg` is the
    /// address of this grid's multi-grid record, which `keep` holds until every grid ended.
    MultiGrid {
        sync_arg: u64,
        keep: Arc<dyn std::any::Any + Send + Sync>,
    },
}

impl Cooperation {
    fn sync_arg(&self) -> u64 {
        match self {
            Cooperation::None => 0,
            Cooperation::Grid => 1,
            Cooperation::MultiGrid { sync_arg, .. } => *sync_arg,
        }
    }
}

/// [`launch`], with its work-groups cooperating as `cooperation` says.
pub(crate) fn launch_with(
    stream: &Stream,
    kernel: &KernelRef,
    config: &LaunchConfig,
    args: ExplicitArgs<'_>,
    cooperation: Cooperation,
) -> RuntimeResult<()> {
    // A cooperative grid fits on the device at once (checked by the caller), and every backend
    // keeps all of its work-groups resident, so the barrier opens once all of them arrive.
    tracing::debug!(multigrid_sync_arg = cooperation.sync_arg(), "launch kind");
    let ctx = stream.context()?;
    ctx.check_sticky()?;
    let prepared = prepare(
        &ctx,
        stream.queue_address(),
        kernel,
        config,
        args,
        cooperation.sync_arg(),
    )?;
    let Prepared {
        packet,
        segment,
        hostcall,
        name,
    } = prepared;
    tracing::debug!(
        kernel = %name,
        device = ctx.index(),
        stream = stream.id(),
        grid = ?config.grid,
        block = ?config.block,
        dynamic_lds = config.dynamic_lds,
        kernarg = format_args!("{:#x}", segment.base),
        "launch"
    );
    let watched = watch(&ctx, stream.id(), kernel, config, segment.base);
    let mut keep_alive: crate::device::KeepAlive =
        vec![Box::new(kernel.loaded().clone()), Box::new(segment)];
    if let Some(hostcall) = hostcall {
        keep_alive.push(Box::new(hostcall));
    }
    if let Cooperation::MultiGrid { keep, .. } = cooperation {
        keep_alive.push(Box::new(keep));
    }
    stream.dispatch(
        packet,
        kernel.info().name.clone(),
        keep_alive,
        completion_report(name, watched),
    )
}

/// Checks that a cooperative launch's grid fits on the device at once
/// ([`occupancy::blocks_per_cu`](super::occupancy::blocks_per_cu) times the compute units).
///
/// # Errors
/// [`RuntimeError::CooperativeLaunchTooLarge`].
pub(crate) fn check_cooperative(
    ctx: &DeviceContext,
    kernel: &KernelRef,
    config: &LaunchConfig,
) -> RuntimeResult<()> {
    let block: u64 = config.block.iter().map(|&b| u64::from(b)).product();
    // Saturated: (2^32 - 1)^3 work-groups overflow a u64, and are too many anyway.
    let blocks: u64 = (0..3)
        .map(|d| u64::from(config.grid[d]) + u64::from(config.partial[d] != 0))
        .fold(1, u64::saturating_mul);
    let (per_cu, limit) = super::occupancy::blocks_per_cu(
        kernel.info(),
        u32::try_from(block).unwrap_or(u32::MAX),
        u64::from(config.dynamic_lds),
    );
    let most = u64::from(per_cu) * u64::from(ctx.device().compute_units());
    if blocks > most {
        return Err(RuntimeError::CooperativeLaunchTooLarge {
            kernel: kernel.info().name.clone(),
            blocks,
            most,
            reason: format!("{per_cu} work-groups per compute unit ({limit:?} bound)"),
        });
    }
    Ok(())
}

/// A dispatch formed and checked but not submitted: its packet (without a completion
/// signal), its kernarg segment (which the packet points to) and, for a kernel given the
/// hostcall buffer, the buffer's in-use mark.
pub(crate) struct Prepared {
    pub(crate) packet: aql::DispatchPacket,
    pub(crate) segment: KernargSegment,
    pub(crate) hostcall: Option<crate::runtime::hostcall::HostcallDispatch>,
    /// The kernel's name for reports (demangled when it can be).
    pub(crate) name: String,
}

/// Forms the dispatch of `kernel` on a queue of `ctx` at `queue_address` (what the kernel's
/// `hidden_queue_ptr` holds): every check of a launch, the kernarg segment written into
/// device memory (with `multigrid_sync_arg` as the cooperative-launch argument, 0 for an
/// ordinary launch), the packet. Nothing is submitted.
///
/// # Errors
/// [`RuntimeError::WrongDevice`], [`RuntimeError::InvalidConfiguration`],
/// [`RuntimeError::Arguments`], or a device failure (allocation, an ISA it cannot run).
pub(crate) fn prepare(
    ctx: &Arc<DeviceContext>,
    queue_address: u64,
    kernel: &KernelRef,
    config: &LaunchConfig,
    args: ExplicitArgs<'_>,
    multigrid_sync_arg: u64,
) -> RuntimeResult<Prepared> {
    // The kernel's own context, not its ordinal: device 0 of another runtime is another device.
    if !kernel
        .loaded()
        .context()
        .is_some_and(|own| Arc::ptr_eq(own, ctx))
    {
        return Err(RuntimeError::WrongDevice {
            kernel: kernel.info().name.clone(),
            kernel_device: kernel.loaded().device(),
            stream_device: ctx.index(),
        });
    }
    let geometry = check(kernel, config)?;
    let info = kernel.info();
    let device = ctx.device().clone();
    // Refused before anything is submitted when the device cannot execute this ISA (a
    // software agent of a processor no emulator implements: its code loads and can be
    // inspected, but never runs).
    device.can_execute().map_err(|error| RuntimeError::Device {
        device: ctx.index(),
        what: format!("launching {}", info.name),
        error: Box::new(error),
    })?;
    let mut private = u32::try_from(info.private_segment_fixed_size).unwrap_or(u32::MAX);
    if info.uses_dynamic_stack {
        private = private.saturating_add(DYNAMIC_STACK_BYTES);
    }
    // Refused here, so the launch call fails, not the dispatch at the next synchronisation
    // (ROCr fails the queue with HSA_STATUS_ERROR_OUT_OF_RESOURCES when it cannot allocate).
    device
        .check_scratch(private, geometry.block_size())
        .map_err(|e| ctx.error(&format!("launching {}", info.name), e))?;
    let (private_base, shared_base) = device.apertures();
    // A kernel given the hostcall buffer keeps it in use until the dispatch ends; then the
    // messages it opened and never ended can go (`HostcallBuffer::dispatch_started`).
    let hostcall = if uses_hostcall(kernel) {
        Some(ctx.hostcall_buffer()?.dispatch_started())
    } else {
        None
    };
    let hidden = HiddenValues {
        geometry: Some(geometry),
        hostcall_buffer: hostcall.as_ref().map_or(0, |h| h.buffer().address()),
        dynamic_lds_size: config.dynamic_lds,
        queue_ptr: queue_address,
        private_base,
        shared_base,
        multigrid_sync_arg,
        ..Default::default()
    };
    let segment = kernarg::pack(info, args, &hidden)?;
    // Padded: kernels may load past the declared segment with wide scalar loads (rocPRIM's
    // code objects v4 read 16 bytes at 32 of a 44-byte segment); ROCr's kernarg pool gives
    // them room, so this does too (zeroed).
    let padded = (segment.len() as u64).next_multiple_of(KERNARG_PADDING) + KERNARG_PADDING;
    let allocation = device
        .allocate(padded, MemoryKind::Kernarg)
        .map_err(|e| ctx.error("allocating a kernarg segment", e))?;
    let guard = KernargSegment {
        device: device.clone(),
        base: allocation.base,
    };
    // SAFETY: the destination is the fresh kernarg allocation (checked by the device); the
    // source is `segment`, a live host buffer of exactly that length.
    unsafe {
        device.copy(
            allocation.base,
            segment.as_ptr() as u64,
            segment.len() as u64,
        )
    }
    .map_err(|e| ctx.error("writing a kernarg segment", e))?;
    let packet = aql::dispatch_packet(&DispatchFields {
        geometry,
        private_segment_size: private,
        // At most MAX_LDS: checked above.
        group_segment_size: info
            .group_segment_fixed_size
            .saturating_add(u64::from(config.dynamic_lds)) as u32,
        kernel_object: kernel.descriptor_address(),
        kernarg_address: allocation.base,
        completion_signal: 0,
    });
    Ok(Prepared {
        packet,
        segment: guard,
        hostcall,
        name: info.demangled.clone().unwrap_or_else(|| info.name.clone()),
    })
}

/// Whether `kernel` is given the device's hostcall buffer (it prints).
pub(crate) fn uses_hostcall(kernel: &KernelRef) -> bool {
    kernel
        .info()
        .args
        .iter()
        .any(|a| a.value_kind == "hidden_hostcall_buffer")
}

/// Tells the runtime's tools about a dispatch about to be submitted, if any tool listens;
/// the notice tells them how it ended.
pub(crate) fn watch(
    ctx: &DeviceContext,
    stream: u64,
    kernel: &KernelRef,
    config: &LaunchConfig,
    kernarg: u64,
) -> Option<CompletionNotice> {
    let tools = ctx.tools();
    let info = kernel.info();
    tools.active().then(|| {
        let event = DispatchEvent {
            id: tools.dispatch_id(),
            device: ctx.index(),
            stream,
            kernel: info.name.as_str().into(),
            demangled: info.demangled.as_deref().map(Into::into),
            kernel_object: kernel.descriptor_address(),
            code_address: kernel.code_address(),
            grid: config.grid,
            block: config.block,
            dynamic_lds: config.dynamic_lds,
            kernarg,
        };
        let listeners = tools.dispatch(&event).unwrap_or_default();
        CompletionNotice {
            event,
            listeners,
            delivered: false,
        }
    })
}

/// What runs when a dispatch completes: a debug log line, and the tools' notice.
pub(crate) fn completion_report(
    name: String,
    watched: Option<CompletionNotice>,
) -> Box<dyn FnOnce(&Completion) + Send> {
    Box::new(move |c: &Completion| {
        match c {
            Completion::Done(report) => tracing::debug!(
                kernel = %name,
                duration = ?report.duration,
                instructions = report.instructions,
                "kernel completed"
            ),
            Completion::Failed(e) => {
                tracing::debug!(kernel = %name, error = %e, "kernel failed")
            }
        }
        if let Some(mut notice) = watched {
            notice.deliver(c);
        }
    })
}

impl KernelRef {
    /// Checks a launch configuration against the kernel and the device's limits, as a launch
    /// does before anything is submitted (graphs check their kernel nodes when they are made).
    ///
    /// # Errors
    /// [`RuntimeError::InvalidConfiguration`].
    pub fn check_launch(&self, config: &LaunchConfig) -> RuntimeResult<()> {
        check(self, config).map(|_| ())
    }
}

/// One typed kernel argument: its bytes, its alignment, and whether it is a device pointer.
#[derive(Debug, Clone)]
pub struct ArgValue {
    bytes: Vec<u8>,
    align: usize,
    pointer: bool,
}

/// A value that can be passed to a kernel.
pub trait KernelArg {
    /// The argument as the kernarg segment holds it.
    fn to_arg(&self) -> ArgValue;
}

macro_rules! scalar_arg {
    ($($t:ty),*) => { $(
        impl KernelArg for $t {
            fn to_arg(&self) -> ArgValue {
                ArgValue {
                    bytes: self.to_le_bytes().to_vec(),
                    align: std::mem::align_of::<$t>(),
                    pointer: false,
                }
            }
        }
    )* };
}
scalar_arg!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

impl<T: super::buffer::DeviceCopy> KernelArg for &super::buffer::DeviceBuffer<T> {
    fn to_arg(&self) -> ArgValue {
        DevicePtr(self.address()).to_arg()
    }
}

impl<T: super::buffer::DeviceCopy> KernelArg for &mut super::buffer::DeviceBuffer<T> {
    fn to_arg(&self) -> ArgValue {
        DevicePtr(self.address()).to_arg()
    }
}

/// A raw device address passed as a pointer argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevicePtr(pub u64);

impl KernelArg for DevicePtr {
    fn to_arg(&self) -> ArgValue {
        ArgValue {
            bytes: self.0.to_le_bytes().to_vec(),
            align: 8,
            pointer: true,
        }
    }
}

/// Builds one launch of a kernel with typed arguments, checked against the kernel's metadata
/// (count, size, alignment, pointer or value) before anything is submitted.
///
/// # Examples
///
/// clang-19's `vadd(const float* a, const float* b, float* c, int n)` on the software agent,
/// checked against the host's sums:
///
/// ```
/// use std::sync::Arc;
///
/// use rocload::backend::SoftAgent;
/// use rocload::device::KernargError;
/// use rocload::runtime::{DeviceBuffer, Runtime, RuntimeError, RuntimeOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = SoftAgent::new("gfx1030".parse()?).device();
/// let rt = Runtime::with_devices(vec![agent], RuntimeOptions::default());
/// let dev = rt.device(0)?;
/// let bytes: Arc<[u8]> = std::fs::read(concat!(
///     env!("CARGO_MANIFEST_DIR"),
///     "/tests/fixtures/hip/vadd.device.ccob"
/// ))?
/// .into();
/// let vadd = rt.load_module(bytes, 0)?.function("vadd")?;
///
/// let n = 100usize;
/// let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
/// let b: Vec<f32> = (0..n).map(|i| 10.0 - i as f32).collect();
/// let (da, db) = (DeviceBuffer::from_slice(dev, &a)?, DeviceBuffer::from_slice(dev, &b)?);
/// let dc = DeviceBuffer::<f32>::zeroed(dev, n)?;
///
/// // Two work-groups of 64: the kernel's `i < n` guard idles the last 28 work-items.
/// vadd.launch()
///     .grid([2, 1, 1])
///     .block([64, 1, 1])
///     .arg(&da)
///     .arg(&db)
///     .arg(&dc)
///     .arg(n as i32)
///     .submit(&rt)?;
/// dev.synchronize()?;
/// let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
/// assert_eq!(dc.to_vec()?, expected);
///
/// // A launch that does not fit the metadata is refused before anything is submitted.
/// let e = vadd.launch().arg(&da).arg(&db).submit(&rt).unwrap_err();
/// assert!(matches!(
///     e,
///     RuntimeError::Arguments(ref k)
///         if matches!(**k, KernargError::Count { expected: 4, given: 2, .. })
/// ));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct LaunchBuilder<'k> {
    kernel: &'k KernelRef,
    config: LaunchConfig,
    stream: Option<Stream>,
    args: Vec<ArgValue>,
}

impl KernelRef {
    /// Starts a launch: one work-group of one work-item until [`grid`](LaunchBuilder::grid)
    /// and [`block`](LaunchBuilder::block) say otherwise.
    pub fn launch(&self) -> LaunchBuilder<'_> {
        LaunchBuilder {
            kernel: self,
            config: LaunchConfig {
                grid: [1, 1, 1],
                block: [1, 1, 1],
                dynamic_lds: 0,
                partial: [0; 3],
            },
            stream: None,
            args: Vec::new(),
        }
    }
}

impl LaunchBuilder<'_> {
    /// Work-groups in x, y, z.
    pub fn grid(mut self, grid: [u32; 3]) -> Self {
        self.config.grid = grid;
        self
    }

    /// Work-items per work-group in x, y, z.
    pub fn block(mut self, block: [u32; 3]) -> Self {
        self.config.block = block;
        self
    }

    /// Dynamic LDS bytes.
    pub fn shared_bytes(mut self, bytes: u32) -> Self {
        self.config.dynamic_lds = bytes;
        self
    }

    /// The stream (default: the null stream of the kernel's device in the runtime given to
    /// [`submit`](Self::submit)). It must be of the device context the kernel was loaded in.
    pub fn stream(mut self, stream: &Stream) -> Self {
        self.stream = Some(stream.clone());
        self
    }

    /// The next explicit argument.
    pub fn arg(mut self, value: impl KernelArg) -> Self {
        self.args.push(value.to_arg());
        self
    }

    /// Checks the arguments against the metadata and submits the launch.
    ///
    /// # Errors
    /// [`RuntimeError::Arguments`] naming the first argument that does not fit (count, size,
    /// alignment, pointer or value), [`RuntimeError::WrongDevice`] for a stream (or runtime)
    /// other than the kernel's, or any launch error.
    pub fn submit(self, runtime: &super::Runtime) -> RuntimeResult<()> {
        let info = self.kernel.info();
        let expected: Vec<_> = kernarg::explicit_args(info).collect();
        if expected.len() != self.args.len() {
            return Err(KernargError::Count {
                kernel: info.name.clone(),
                expected: expected.len(),
                given: self.args.len(),
            }
            .into());
        }
        for (index, (meta, given)) in expected.iter().zip(&self.args).enumerate() {
            let kernel = info.name.clone();
            let name = meta.name.clone().unwrap_or_else(|| "?".to_owned());
            let wants_pointer = meta.value_kind == "global_buffer";
            let problem = if given.bytes.len() as u64 != meta.size {
                Some(KernargError::Size {
                    kernel,
                    index,
                    name,
                    expected: meta.size,
                    given: given.bytes.len() as u64,
                })
            } else if meta.offset % given.align as u64 != 0 {
                Some(KernargError::Misaligned {
                    kernel,
                    index,
                    name,
                    offset: meta.offset,
                    alignment: given.align as u64,
                })
            } else if wants_pointer && !given.pointer {
                Some(KernargError::PointerExpected {
                    kernel,
                    index,
                    name,
                })
            } else if given.pointer && !wants_pointer {
                Some(KernargError::ValueExpected {
                    kernel,
                    index,
                    name,
                    value_kind: meta.value_kind.clone(),
                })
            } else {
                None
            };
            if let Some(p) = problem {
                return Err(p.into());
            }
        }
        let values: Vec<&[u8]> = self.args.iter().map(|a| a.bytes.as_slice()).collect();
        runtime.launch(
            self.kernel,
            &self.config,
            ExplicitArgs::Values(&values),
            self.stream.as_ref(),
        )
    }
}
