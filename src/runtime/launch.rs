//! Kernel launches: one path for every backend. A launch is checked against the kernel's
//! metadata and the device's limits, its kernarg segment is laid out from the metadata and
//! copied into a read-only device allocation, and a real AQL dispatch packet goes to the stream,
//! holding the kernel's executable and the segment alive until it completes.
//!
//! Not for argument layout rules (the device layer's kernarg module) or for queues.

use std::sync::Arc;

use super::kernel::KernelRef;
use super::stream::Stream;
use super::tools::{DispatchEvent, Tool};
use super::{RuntimeError, RuntimeResult};
use crate::device::aql::{self, DispatchFields, DispatchGeometry};
use crate::device::{
    kernarg, Completion, Device, ExecutionError, ExplicitArgs, HiddenValues, MemoryKind,
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

/// A kernarg segment in device memory, freed when the dispatch that reads it is done.
struct KernargSegment {
    device: Arc<dyn Device>,
    base: u64,
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
struct CompletionNotice {
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

/// Checks `config` against the kernel and the device's limits.
fn check(kernel: &KernelRef, config: &LaunchConfig) -> RuntimeResult<DispatchGeometry> {
    let info = kernel.info();
    let invalid = |m: String| Err(RuntimeError::InvalidConfiguration(m));
    let empty = (0..3).any(|d| config.grid[d] == 0 && config.partial[d] == 0);
    if empty || config.block.contains(&0) {
        return invalid(format!(
            "grid {:?} and block {:?} must be at least 1 in every dimension",
            config.grid, config.block
        ));
    }
    if (0..3).any(|d| config.partial[d] >= config.block[d]) {
        return invalid(format!(
            "partial work-group {:?} must be smaller than the block {:?}",
            config.partial, config.block
        ));
    }
    let geometry = DispatchGeometry {
        grid: config.grid,
        block: config.block,
        remainder: config.partial,
    };
    let limit = info.max_flat_workgroup_size.unwrap_or(MAX_BLOCK_SIZE);
    if geometry.block_size() > limit {
        return invalid(format!(
            "block {:?} has {} work-items; kernel {} allows {limit}",
            config.block,
            geometry.block_size(),
            info.name
        ));
    }
    if geometry.grid_size().is_none() {
        return invalid(format!(
            "grid {:?} x block {:?} exceeds 2^32 work-items in a dimension",
            config.grid, config.block
        ));
    }
    let lds = info.group_segment_fixed_size + u64::from(config.dynamic_lds);
    if lds > MAX_LDS {
        return invalid(format!(
            "kernel {} needs {lds} bytes of LDS ({} static + {} dynamic), more than {MAX_LDS}",
            info.name, info.group_segment_fixed_size, config.dynamic_lds
        ));
    }
    Ok(geometry)
}

/// Launches `kernel` on `stream` (which must belong to the kernel's device).
///
/// # Errors
/// [`RuntimeError::InvalidConfiguration`], [`RuntimeError::Arguments`], the device's sticky
/// error, or a device failure (allocation, submission).
pub(crate) fn launch(
    stream: &Stream,
    kernel: &KernelRef,
    config: &LaunchConfig,
    args: ExplicitArgs<'_>,
) -> RuntimeResult<()> {
    launch_with(stream, kernel, config, args, false)
}

/// [`launch`], cooperatively when `cooperative` (the grid-sync state is given to the kernel).
pub(crate) fn launch_with(
    stream: &Stream,
    kernel: &KernelRef,
    config: &LaunchConfig,
    args: ExplicitArgs<'_>,
    cooperative: bool,
) -> RuntimeResult<()> {
    // A cooperative grid syncs with `ds_gws_barrier` (clang's code for HIP 5.2's grid groups):
    // the grid fits on the device at once (checked by the caller), and every backend keeps
    // all of its work-groups resident, so nothing more is set up here.
    tracing::debug!(cooperative, "launch kind");
    let ctx = stream.context()?;
    ctx.check_sticky()?;
    if ctx.index() != kernel.loaded().device() {
        return Err(RuntimeError::InvalidValue(format!(
            "kernel {} is loaded on device {}, the stream belongs to device {}",
            kernel.info().name,
            kernel.loaded().device(),
            ctx.index()
        )));
    }
    let geometry = check(kernel, config)?;
    let info = kernel.info();
    let device = ctx.device().clone();
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
    let hostcall = if info
        .args
        .iter()
        .any(|a| a.value_kind == "hidden_hostcall_buffer")
    {
        Some(ctx.hostcall_buffer()?.dispatch_started())
    } else {
        None
    };
    let hidden = HiddenValues {
        geometry: Some(geometry),
        hostcall_buffer: hostcall.as_ref().map_or(0, |h| h.buffer().address()),
        dynamic_lds_size: config.dynamic_lds,
        queue_ptr: stream.queue_address(),
        private_base,
        shared_base,
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
        group_segment_size: (info.group_segment_fixed_size + u64::from(config.dynamic_lds)) as u32,
        kernel_object: kernel.descriptor_address(),
        kernarg_address: allocation.base,
        completion_signal: 0,
    });
    let name = info.demangled.clone().unwrap_or_else(|| info.name.clone());
    tracing::debug!(
        kernel = %name,
        device = ctx.index(),
        stream = stream.id(),
        grid = ?config.grid,
        block = ?config.block,
        dynamic_lds = config.dynamic_lds,
        kernarg = format_args!("{:#x}", allocation.base),
        "launch"
    );
    let tools = ctx.tools();
    let watched = tools.active().then(|| {
        let event = DispatchEvent {
            id: tools.dispatch_id(),
            device: ctx.index(),
            stream: stream.id(),
            kernel: info.name.as_str().into(),
            demangled: info.demangled.as_deref().map(Into::into),
            kernel_object: kernel.descriptor_address(),
            code_address: kernel.code_address(),
            grid: config.grid,
            block: config.block,
            dynamic_lds: config.dynamic_lds,
            kernarg: allocation.base,
        };
        let listeners = tools.dispatch(&event).unwrap_or_default();
        CompletionNotice {
            event,
            listeners,
            delivered: false,
        }
    });
    let mut keep_alive: crate::device::KeepAlive =
        vec![Box::new(kernel.loaded().clone()), Box::new(guard)];
    if let Some(hostcall) = hostcall {
        keep_alive.push(Box::new(hostcall));
    }
    stream.dispatch(
        packet,
        info.name.clone(),
        keep_alive,
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
        }),
    )
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

    /// The stream (default: the null stream of the kernel's device).
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
    /// [`RuntimeError::InvalidValue`] naming the first argument that does not fit, or any
    /// launch error.
    pub fn submit(self, runtime: &super::Runtime) -> RuntimeResult<()> {
        let info = self.kernel.info();
        let expected: Vec<_> = kernarg::explicit_args(info).collect();
        if expected.len() != self.args.len() {
            return Err(RuntimeError::InvalidValue(format!(
                "kernel {} takes {} argument(s), {} given",
                info.name,
                expected.len(),
                self.args.len()
            )));
        }
        for (i, (meta, given)) in expected.iter().zip(&self.args).enumerate() {
            let name = meta.name.as_deref().unwrap_or("?");
            let wants_pointer = meta.value_kind == "global_buffer";
            let problem = if given.bytes.len() as u64 != meta.size {
                Some(format!(
                    "is {} bytes, {} given",
                    meta.size,
                    given.bytes.len()
                ))
            } else if meta.offset % given.align as u64 != 0 {
                Some(format!(
                    "sits at offset {}, not aligned for a {}-byte-aligned value",
                    meta.offset, given.align
                ))
            } else if wants_pointer != given.pointer {
                Some(if wants_pointer {
                    "is a device pointer; pass a DeviceBuffer or DevicePtr".to_owned()
                } else {
                    format!("is a {} value, not a pointer", meta.value_kind)
                })
            } else {
                None
            };
            if let Some(p) = problem {
                return Err(RuntimeError::InvalidValue(format!(
                    "kernel {}: argument {i} ({name}) {p}",
                    info.name
                )));
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
