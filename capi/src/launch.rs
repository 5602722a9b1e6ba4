//! Launches: `hipLaunchKernel` (what `<<<>>>` compiles to), the module API's launches
//! (`kernelParams` or the packed `extra` buffer), the C++-mangled `hipExtModuleLaunchKernel`
//! and `hipHccModuleLaunchKernel` Debian's library exports, and cooperative launches. Each
//! reads the caller's arguments with the sizes the kernel's metadata gives, and hands the
//! runtime one launch; the runtime checks the configuration and arguments before anything is
//! submitted.

use rocload_ffi::export;
use std::ffi::{c_int, c_uint, c_void};

use rocload_lib::device::kernarg::explicit_args;
use rocload_lib::device::ExplicitArgs;
use rocload_lib::runtime::graph::{KernelArgs, KernelNode};
use rocload_lib::runtime::{
    DeviceLaunch, KernelRef, LaunchConfig, MultiDeviceOrder, NodeOp, Stream,
};

use crate::module::function_handle;
use crate::stream::stream_of;
use crate::*;

/// `HIP_LAUNCH_PARAM_BUFFER_POINTER`, `..._SIZE`, `..._END` of the `extra` array.
const PARAM_BUFFER_POINTER: usize = 1;
const PARAM_BUFFER_SIZE: usize = 2;
const PARAM_END: usize = 3;
/// Most entries an `extra` array is read for before it is called unterminated.
const MAX_EXTRA: usize = 64;

/// How the caller passes explicit arguments.
enum Args {
    /// `void** args`: one pointer per explicit argument.
    Pointers(*mut *mut c_void),
    /// The `extra` array: a packed buffer and its size.
    Extra(*mut *mut c_void),
}

/// Reads one pointer per explicit argument, each for its metadata size.
///
/// # Safety
/// `args` must hold a valid pointer per explicit argument of `kernel`, each to at least that
/// argument's size in bytes (what clang and HIP's headers pass).
pub(crate) unsafe fn read_pointers(
    kernel: &KernelRef,
    args: *mut *mut c_void,
) -> Result<Vec<&'static [u8]>, Failure> {
    let info = kernel.info();
    let mut values = Vec::new();
    for (i, a) in explicit_args(info).enumerate() {
        if args.is_null() {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("kernel {} takes arguments; args is NULL", info.name),
            ));
        }
        // SAFETY: one pointer per explicit argument by the caller's contract.
        let p = unsafe { *args.add(i) };
        if p.is_null() && a.size > 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("kernel {}: argument {i} is NULL", info.name),
            ));
        }
        let size = usize::try_from(a.size)
            .map_err(|_| Failure::new(hipErrorInvalidValue, "argument size"))?;
        values.push(if size == 0 {
            &[][..]
        } else {
            // SAFETY: `p` points to the argument's value, `size` bytes, by the caller's
            // contract; the slice is read before the launch returns.
            unsafe { std::slice::from_raw_parts(p.cast::<u8>(), size) }
        });
    }
    Ok(values)
}

/// Reads HIP's `extra` array: `HIP_LAUNCH_PARAM_BUFFER_POINTER, ptr,
/// HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END`.
///
/// # Safety
/// `extra` must be such an array; the buffer valid for `size` bytes.
pub(crate) unsafe fn read_extra(extra: *mut *mut c_void) -> Result<&'static [u8], Failure> {
    let bad = |m: &str| Failure::new(hipErrorInvalidValue, format!("extra: {m}"));
    let (mut buffer, mut size): (*const u8, Option<usize>) = (std::ptr::null(), None);
    let mut i = 0;
    loop {
        if i >= MAX_EXTRA {
            return Err(bad("no HIP_LAUNCH_PARAM_END"));
        }
        // SAFETY: entries up to HIP_LAUNCH_PARAM_END by the caller's contract.
        let tag = unsafe { *extra.add(i) } as usize;
        match tag {
            PARAM_END => break,
            PARAM_BUFFER_POINTER => {
                // SAFETY: as above: the value follows its tag.
                buffer = unsafe { *extra.add(i + 1) }.cast();
            }
            PARAM_BUFFER_SIZE => {
                // SAFETY: as above; the value is a pointer to a size_t.
                let p = unsafe { *extra.add(i + 1) }.cast::<usize>();
                if p.is_null() {
                    return Err(bad("HIP_LAUNCH_PARAM_BUFFER_SIZE points to NULL"));
                }
                // SAFETY: non-null pointer to the size, by the caller's contract.
                size = Some(unsafe { p.read_unaligned() });
            }
            other => return Err(bad(&format!("unknown entry {other:#x}"))),
        }
        i += 2;
    }
    let size = size.ok_or_else(|| bad("no HIP_LAUNCH_PARAM_BUFFER_SIZE"))?;
    if size == 0 {
        return Ok(&[]);
    }
    if buffer.is_null() {
        return Err(bad("no HIP_LAUNCH_PARAM_BUFFER_POINTER"));
    }
    // SAFETY: the buffer holds `size` bytes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(buffer, size) })
}

pub(crate) fn dims(d: dim3) -> [u32; 3] {
    [d.x, d.y, d.z]
}

/// One launch of `kernel` on `stream` (loaded on the stream's device), whole work-groups.
///
/// # Safety
/// `args` as [`read_pointers`] / [`read_extra`] require.
#[allow(clippy::too_many_arguments)]
unsafe fn launch(
    function: *const c_void,
    kernel: &KernelRef,
    grid: [u32; 3],
    block: [u32; 3],
    shared: usize,
    stream: hipStream_t,
    args: Args,
    cooperative: bool,
) -> Result<(), Failure> {
    // SAFETY: forwarded.
    unsafe {
        launch_with_partial(
            function,
            kernel,
            (grid, [0; 3]),
            block,
            shared,
            stream,
            args,
            cooperative,
        )
    }
}

/// [`launch`] with `(whole, partial)` work-groups: `partial` work-items of a last work-group
/// per dimension (launches by global size).
///
/// # Safety
/// As [`launch`].
#[allow(clippy::too_many_arguments)]
unsafe fn launch_with_partial(
    function: *const c_void,
    kernel: &KernelRef,
    (grid, partial): ([u32; 3], [u32; 3]),
    block: [u32; 3],
    shared: usize,
    stream: hipStream_t,
    args: Args,
    cooperative: bool,
) -> Result<(), Failure> {
    let s = stream_of(stream)?;
    let dynamic_lds = u32::try_from(shared).map_err(|_| {
        Failure::new(
            hipErrorInvalidValue,
            format!("{shared} bytes of dynamic shared memory"),
        )
    })?;
    let config = LaunchConfig {
        grid,
        block,
        dynamic_lds,
        partial,
    };
    let (values, packed);
    let explicit = match args {
        Args::Pointers(p) => {
            // SAFETY: the caller's contract.
            values = unsafe { read_pointers(kernel, p) }?;
            ExplicitArgs::Values(&values)
        }
        Args::Extra(e) => {
            // SAFETY: the caller's contract.
            packed = unsafe { read_extra(e) }?;
            ExplicitArgs::Packed(packed)
        }
    };
    if captured(&s, function, kernel, &config, &explicit, cooperative)? {
        return Ok(());
    }
    if cooperative {
        runtime().launch_cooperative(kernel, &config, explicit, Some(&s))?;
    } else {
        runtime().launch(kernel, &config, explicit, Some(&s))?;
    }
    Ok(())
}

/// A launch on a capturing stream becomes a kernel node with copies of the argument values,
/// checked as a launch would be; returns whether it was captured (else it is to run).
fn captured(
    s: &Stream,
    function: *const c_void,
    kernel: &KernelRef,
    config: &LaunchConfig,
    explicit: &ExplicitArgs<'_>,
    cooperative: bool,
) -> Result<bool, Failure> {
    let Some(c) = crate::capture::intercept(s, "a kernel launch")? else {
        return Ok(false);
    };
    kernel.check_launch(config)?;
    let args = match explicit {
        ExplicitArgs::Packed(p) => KernelArgs::packed((*p).into()),
        ExplicitArgs::Values(v) => KernelArgs::values(v.iter().map(|a| Box::from(*a)).collect()),
    };
    let node = KernelNode {
        kernel: kernel.clone(),
        config: *config,
        args,
        cooperative,
        function: function as u64,
        priority: 0,
    };
    crate::capture::add(&c, s, NodeOp::Kernel(node))?;
    Ok(true)
}

/// The kernel behind a host function, on the device of `stream`.
fn kernel_for(function_address: *const c_void, stream: hipStream_t) -> Result<KernelRef, Failure> {
    // A NULL function is reported before the stream is looked at.
    let device = match function_address.is_null() {
        true => current_device(),
        false => stream_of(stream)?.device_index()? as i64,
    };
    host_kernel(function_address, device)
}

/// `hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks,
/// void** args, size_t sharedMemBytes, hipStream_t stream)`.
#[export]
pub unsafe extern "C" fn hipLaunchKernel(
    function_address: *const c_void,
    num_blocks: dim3,
    dim_blocks: dim3,
    args: *mut *mut c_void,
    shared_mem_bytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    call("hipLaunchKernel", || {
        let k = kernel_for(function_address, stream)?;
        // SAFETY: clang passes one pointer per argument.
        unsafe {
            launch(
                function_address,
                &k,
                dims(num_blocks),
                dims(dim_blocks),
                shared_mem_bytes,
                stream,
                Args::Pointers(args),
                false,
            )
        }
    })
}

/// `hipError_t hipLaunchCooperativeKernel(const void* f, dim3 gridDim, dim3 blockDimX,
/// void** kernelParams, unsigned sharedMemBytes, hipStream_t stream)`: every work-group is
/// resident at once, so grid-wide barriers (`this_grid().sync()`) work.
#[export]
pub unsafe extern "C" fn hipLaunchCooperativeKernel(
    f: *const c_void,
    grid_dim: dim3,
    block_dim: dim3,
    kernel_params: *mut *mut c_void,
    shared_mem_bytes: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    call("hipLaunchCooperativeKernel", || {
        let k = kernel_for(f, stream)?;
        // SAFETY: one pointer per argument by the caller's contract.
        unsafe {
            launch(
                f,
                &k,
                dims(grid_dim),
                dims(block_dim),
                shared_mem_bytes as usize,
                stream,
                Args::Pointers(kernel_params),
                true,
            )
        }
    })
}

/// `hipCooperativeLaunchMultiDeviceNoPreSync` and `hipCooperativeLaunchMultiDeviceNoPostSync`.
const MULTI_DEVICE_NO_PRE_SYNC: c_uint = 1;
const MULTI_DEVICE_NO_POST_SYNC: c_uint = 2;

/// One kernel per device from the caller's `hipLaunchParams` list.
///
/// # Safety
/// `list` holds `count` launch parameters whose `args` hold one pointer per argument.
unsafe fn launch_multi_device(
    list: *mut hipLaunchParams,
    count: c_int,
    flags: c_uint,
    cooperative: bool,
) -> Result<(), Failure> {
    if list.is_null() {
        return Err(Failure::null("launchParamsList"));
    }
    let count = check_multi_device(count, flags)?;
    // Read first (at most one per device), then the argument values, which borrow nothing
    // of the caller's but their own bytes.
    let params: Vec<hipLaunchParams> = (0..count)
        // SAFETY: `count` entries by the caller's contract.
        .map(|i| unsafe { list.add(i).read_unaligned() })
        .collect();
    let mut launches = Vec::with_capacity(count);
    for p in &params {
        let k = kernel_for(p.func, p.stream)?;
        // SAFETY: the caller's contract: one pointer per argument.
        let v = unsafe { read_pointers(&k, p.args) }?;
        launches.push((
            k,
            dims(p.gridDim),
            dims(p.blockDim),
            p.sharedMem,
            v,
            p.stream,
        ));
    }
    multi_device(launches, flags, cooperative)
}

/// One launch of a multi-device launch: kernel, grid, block, dynamic LDS, argument values,
/// stream.
type MultiLaunch = (
    KernelRef,
    [u32; 3],
    [u32; 3],
    usize,
    Vec<&'static [u8]>,
    hipStream_t,
);

/// Launches one grid per device (see [`launch_multi_device`]).
fn multi_device(
    launches: Vec<MultiLaunch>,
    flags: c_uint,
    cooperative: bool,
) -> Result<(), Failure> {
    let mut out = Vec::with_capacity(launches.len());
    for (kernel, grid, block, shared, v, stream) in launches {
        let dynamic_lds = u32::try_from(shared).map_err(|_| {
            Failure::new(
                hipErrorInvalidValue,
                format!("{shared} bytes of dynamic shared memory"),
            )
        })?;
        out.push((kernel, grid, block, dynamic_lds, v, stream_of(stream)?));
    }
    let launches = out
        .iter()
        .map(
            |(kernel, grid, block, dynamic_lds, v, stream)| DeviceLaunch {
                kernel: kernel.clone(),
                config: LaunchConfig {
                    grid: *grid,
                    block: *block,
                    dynamic_lds: *dynamic_lds,
                    partial: [0; 3],
                },
                args: ExplicitArgs::Values(v),
                stream: stream.clone(),
            },
        )
        .collect();
    runtime().launch_multi_device(
        launches,
        cooperative,
        MultiDeviceOrder {
            wait_before: flags & MULTI_DEVICE_NO_PRE_SYNC == 0,
            wait_after: flags & MULTI_DEVICE_NO_POST_SYNC == 0,
        },
    )?;
    Ok(())
}

/// The number of launches of a multi-device launch (1 to the number of devices) and its flags.
fn check_multi_device(count: c_int, flags: c_uint) -> Result<usize, Failure> {
    let devices = runtime().agents().len();
    let count = usize::try_from(count)
        .ok()
        .filter(|&n| n >= 1 && n <= devices)
        .ok_or_else(|| {
            Failure::new(
                hipErrorInvalidValue,
                format!("numDevices {count}: there are {devices} devices"),
            )
        })?;
    if flags & !(MULTI_DEVICE_NO_PRE_SYNC | MULTI_DEVICE_NO_POST_SYNC) != 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("unknown multi-device launch flags {flags:#x}"),
        ));
    }
    Ok(count)
}

/// `hipError_t hipLaunchCooperativeKernelMultiDevice(hipLaunchParams* launchParamsList, int
/// numDevices, unsigned flags)`: one cooperative grid per device, each resident at once; the
/// grids may sync with each other (`multi_grid_group::sync()`).
#[export]
pub unsafe extern "C" fn hipLaunchCooperativeKernelMultiDevice(
    list: *mut hipLaunchParams,
    count: c_int,
    flags: c_uint,
) -> hipError_t {
    call("hipLaunchCooperativeKernelMultiDevice", || {
        // SAFETY: forwarded.
        unsafe { launch_multi_device(list, count, flags, true) }
    })
}

/// `hipFunctionLaunchParams` (HIP 6.0): a module function's launch on one device.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipFunctionLaunchParams {
    /// The function (`hipModuleGetFunction`).
    pub function: hipFunction_t,
    /// Grid, in work-groups.
    pub gridDim: [c_uint; 3],
    /// Work-group size.
    pub blockDim: [c_uint; 3],
    /// Dynamic shared memory in bytes.
    pub sharedMemBytes: c_uint,
    /// The stream, of the device this launch runs on.
    pub hStream: hipStream_t,
    /// One pointer per argument.
    pub kernelParams: *mut *mut c_void,
}
const _: () = {
    assert!(std::mem::size_of::<hipFunctionLaunchParams>() == 56);
    assert!(std::mem::offset_of!(hipFunctionLaunchParams, hStream) == 40);
};

/// `hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams*
/// launchParamsList, unsigned int numDevices, unsigned int flags)` (HIP 6.0): as
/// `hipLaunchCooperativeKernelMultiDevice`, for module functions.
#[export]
pub unsafe extern "C" fn hipModuleLaunchCooperativeKernelMultiDevice(
    list: *mut hipFunctionLaunchParams,
    count: c_uint,
    flags: c_uint,
) -> hipError_t {
    call("hipModuleLaunchCooperativeKernelMultiDevice", || {
        if list.is_null() {
            return Err(Failure::null("launchParamsList"));
        }
        let count = check_multi_device(c_int::try_from(count).unwrap_or(c_int::MAX), flags)?;
        let mut launches = Vec::with_capacity(count);
        for i in 0..count {
            // SAFETY: `count` entries by the caller's contract.
            let p = unsafe { list.add(i).read_unaligned() };
            let k = function_handle(p.function)?;
            // SAFETY: the caller's contract: one pointer per argument.
            let v = unsafe { read_pointers(&k, p.kernelParams) }?;
            launches.push((
                k,
                p.gridDim,
                p.blockDim,
                p.sharedMemBytes as usize,
                v,
                p.hStream,
            ));
        }
        multi_device(launches, flags, true)
    })
}

/// `hipError_t hipExtLaunchMultiKernelMultiDevice(hipLaunchParams* launchParamsList, int
/// numDevices, unsigned flags)`: one kernel per device, ordered like the cooperative form.
#[export]
pub unsafe extern "C" fn hipExtLaunchMultiKernelMultiDevice(
    list: *mut hipLaunchParams,
    count: c_int,
    flags: c_uint,
) -> hipError_t {
    call("hipExtLaunchMultiKernelMultiDevice", || {
        // SAFETY: forwarded.
        unsafe { launch_multi_device(list, count, flags, false) }
    })
}

/// Parameters or `extra`, whichever the caller gave (exactly one, as HIP requires).
fn module_args(params: *mut *mut c_void, extra: *mut *mut c_void) -> Result<Args, Failure> {
    match (params.is_null(), extra.is_null()) {
        (false, true) => Ok(Args::Pointers(params)),
        (true, false) => Ok(Args::Extra(extra)),
        // A kernel without arguments may get neither.
        (true, true) => Ok(Args::Pointers(params)),
        (false, false) => Err(Failure::new(
            hipErrorInvalidValue,
            "both kernelParams and extra are given",
        )),
    }
}

/// `hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gridDimX, gridDimY, gridDimZ,
/// unsigned blockDimX, blockDimY, blockDimZ, unsigned sharedMemBytes, hipStream_t stream,
/// void** kernelParams, void** extra)`: grid in work-groups.
#[export]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    f: hipFunction_t,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hipError_t {
    call("hipModuleLaunchKernel", || {
        let k = function_handle(f)?;
        let args = module_args(params, extra)?;
        // SAFETY: HIP's contract on kernelParams / extra.
        unsafe {
            launch(
                f,
                &k,
                [gx, gy, gz],
                [bx, by, bz],
                shared as usize,
                stream,
                args,
                false,
            )
        }
    })
}

/// `hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gridDimX, ...,
/// unsigned sharedMemBytes, hipStream_t stream, void** kernelParams)`.
#[export]
pub unsafe extern "C" fn hipModuleLaunchCooperativeKernel(
    f: hipFunction_t,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    stream: hipStream_t,
    params: *mut *mut c_void,
) -> hipError_t {
    call("hipModuleLaunchCooperativeKernel", || {
        let k = function_handle(f)?;
        // SAFETY: HIP's contract on kernelParams.
        unsafe {
            launch(
                f,
                &k,
                [gx, gy, gz],
                [bx, by, bz],
                shared as usize,
                stream,
                Args::Pointers(params),
                true,
            )
        }
    })
}

/// `hipExtModuleLaunchKernel` and `hipHccModuleLaunchKernel`: the grid is given in work-items
/// (it must be a whole number of work-groups here), events are recorded around the launch.
#[allow(clippy::too_many_arguments)]
unsafe fn ext_launch(
    op: &'static str,
    f: hipFunction_t,
    global: [u32; 3],
    local: [u32; 3],
    shared: usize,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    call(op, || {
        let k = function_handle(f)?;
        if local.contains(&0) {
            return Err(Failure::new(
                hipErrorInvalidConfiguration,
                format!("local work size {local:?} has an empty dimension"),
            ));
        }
        // Global sizes are work-items: whole work-groups, then a partial one.
        let grid = [0, 1, 2].map(|d| global[d] / local[d]);
        let partial = [0, 1, 2].map(|d| global[d] % local[d]);
        let args = module_args(params, extra)?;
        if !start.is_null() {
            crate::stream::record_external(start, stream)?;
        }
        // SAFETY: HIP's contract on kernelParams / extra.
        unsafe { launch_with_partial(f, &k, (grid, partial), local, shared, stream, args, false) }?;
        if !stop.is_null() {
            crate::stream::record_external(stop, stream)?;
        }
        Ok(())
    })
}

/// `hipError_t hipExtModuleLaunchKernel(hipFunction_t, uint32_t globalWorkSizeX, Y, Z,
/// uint32_t localWorkSizeX, Y, Z, size_t sharedMemBytes, hipStream_t, void** kernelParams,
/// void** extra, hipEvent_t startEvent, hipEvent_t stopEvent, uint32_t flags)`, exported
/// C++-mangled as Debian's library does.
#[export(
    name = "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j"
)]
pub unsafe extern "C" fn hipExtModuleLaunchKernel(
    f: hipFunction_t,
    gx: u32,
    gy: u32,
    gz: u32,
    lx: u32,
    ly: u32,
    lz: u32,
    shared: usize,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
    _flags: u32,
) -> hipError_t {
    // SAFETY: HIP's contract.
    unsafe {
        ext_launch(
            "hipExtModuleLaunchKernel",
            f,
            [gx, gy, gz],
            [lx, ly, lz],
            shared,
            stream,
            params,
            extra,
            start,
            stop,
        )
    }
}

/// `hipError_t hipHccModuleLaunchKernel(...)`: as `hipExtModuleLaunchKernel` without flags,
/// exported C++-mangled as Debian's library does.
#[export(
    name = "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_"
)]
pub unsafe extern "C" fn hipHccModuleLaunchKernel(
    f: hipFunction_t,
    gx: u32,
    gy: u32,
    gz: u32,
    lx: u32,
    ly: u32,
    lz: u32,
    shared: usize,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    // SAFETY: HIP's contract.
    unsafe {
        ext_launch(
            "hipHccModuleLaunchKernel",
            f,
            [gx, gy, gz],
            [lx, ly, lz],
            shared,
            stream,
            params,
            extra,
            start,
            stop,
        )
    }
}

/// `hipExtModuleLaunchKernel` under its C name: HIP 6.1 made it `extern "C"` in `hip_ext.h`,
/// so newer programs import this spelling (older ones the mangled one above).
#[export(name = "hipExtModuleLaunchKernel")]
pub unsafe extern "C" fn hipExtModuleLaunchKernel_c(
    f: hipFunction_t,
    gx: u32,
    gy: u32,
    gz: u32,
    lx: u32,
    ly: u32,
    lz: u32,
    shared: usize,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
    flags: u32,
) -> hipError_t {
    // SAFETY: the same contract.
    unsafe {
        hipExtModuleLaunchKernel(
            f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop, flags,
        )
    }
}

/// `hipHccModuleLaunchKernel` under its C name (HIP 6.1 and later).
#[export(name = "hipHccModuleLaunchKernel")]
pub unsafe extern "C" fn hipHccModuleLaunchKernel_c(
    f: hipFunction_t,
    gx: u32,
    gy: u32,
    gz: u32,
    lx: u32,
    ly: u32,
    lz: u32,
    shared: usize,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    // SAFETY: the same contract.
    unsafe {
        hipHccModuleLaunchKernel(
            f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop,
        )
    }
}

/// `hipError_t hipFuncSetAttribute(const void* func, hipFuncAttribute attr, int value)`:
/// checks the kernel and the value; the dynamic-LDS limit is what the device has anyway.
#[export]
pub unsafe extern "C" fn hipFuncSetAttribute(
    func: *const c_void,
    attr: c_int,
    value: c_int,
) -> hipError_t {
    call("hipFuncSetAttribute", || {
        let k = kernel_for(func, std::ptr::null_mut())?;
        use types::func_attribute as fa;
        match attr {
            fa::MAX_DYNAMIC_SHARED_SIZE_BYTES => {
                let room = 65536u64.saturating_sub(k.info().group_segment_fixed_size);
                if value < 0 || value as u64 > room {
                    return Err(Failure::new(
                        hipErrorInvalidValue,
                        format!("{value} bytes of dynamic LDS; the kernel has room for {room}"),
                    ));
                }
                Ok(())
            }
            fa::PREFERRED_SHARED_MEMORY_CARVEOUT if (-1..=100).contains(&value) => Ok(()),
            other => Err(Failure::new(
                hipErrorInvalidValue,
                format!("hipFuncSetAttribute: attribute {other} value {value}"),
            )),
        }
    })
}

/// `hipError_t hipFuncSetCacheConfig(const void* func, hipFuncCache_t config)`: checks the
/// kernel; AMD GPUs have no configurable L1/LDS split, so the preference changes nothing (as in
/// HIP).
#[export]
pub unsafe extern "C" fn hipFuncSetCacheConfig(func: *const c_void, config: c_int) -> hipError_t {
    call("hipFuncSetCacheConfig", || {
        kernel_for(func, std::ptr::null_mut())?;
        if !(0..=3).contains(&config) {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("cache config {config}"),
            ));
        }
        Ok(())
    })
}

/// `hipError_t hipFuncSetSharedMemConfig(const void* func, hipSharedMemConfig config)`.
#[export]
pub unsafe extern "C" fn hipFuncSetSharedMemConfig(
    func: *const c_void,
    config: c_int,
) -> hipError_t {
    call("hipFuncSetSharedMemConfig", || {
        kernel_for(func, std::ptr::null_mut())?;
        if !(0..=2).contains(&config) {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("shared memory config {config}"),
            ));
        }
        Ok(())
    })
}

/// `void hip_impl::hipLaunchKernelGGLImpl(uintptr_t function_address, const dim3& numBlocks,
/// const dim3& dimBlocks, uint32_t sharedMemBytes, hipStream_t stream, void** kernarg)`: what
/// older HIP headers' `hipLaunchKernelGGL` calls; exported C++-mangled as Debian's library
/// does. Failures are recorded for `hipGetLastError`.
#[export(name = "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv")]
pub unsafe extern "C" fn hipLaunchKernelGGLImpl(
    function_address: usize,
    num_blocks: *const dim3,
    dim_blocks: *const dim3,
    shared_mem_bytes: u32,
    stream: hipStream_t,
    kernarg: *mut *mut c_void,
) {
    let _ = call("hipLaunchKernelGGLImpl", || {
        if num_blocks.is_null() || dim_blocks.is_null() {
            return Err(Failure::null("numBlocks or dimBlocks"));
        }
        let k = kernel_for(function_address as *const c_void, stream)?;
        // SAFETY: C++ references (non-null, checked) and one pointer per argument.
        unsafe {
            launch(
                function_address as *const c_void,
                &k,
                dims(*num_blocks),
                dims(*dim_blocks),
                shared_mem_bytes as usize,
                stream,
                Args::Pointers(kernarg),
                false,
            )
        }
    });
}

/// `hipError_t hipExtLaunchKernel(const void* function_address, dim3 numBlocks,
/// dim3 dimBlocks, void** args, size_t sharedMemBytes, hipStream_t stream,
/// hipEvent_t startEvent, hipEvent_t stopEvent, int flags)`.
#[export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipExtLaunchKernel(
    function_address: *const c_void,
    num_blocks: dim3,
    dim_blocks: dim3,
    args: *mut *mut c_void,
    shared_mem_bytes: usize,
    stream: hipStream_t,
    start: hipEvent_t,
    stop: hipEvent_t,
    _flags: c_int,
) -> hipError_t {
    call("hipExtLaunchKernel", || {
        let k = kernel_for(function_address, stream)?;
        if !start.is_null() {
            crate::stream::record_external(start, stream)?;
        }
        // SAFETY: one pointer per argument by the caller's contract.
        unsafe {
            launch(
                function_address,
                &k,
                dims(num_blocks),
                dims(dim_blocks),
                shared_mem_bytes,
                stream,
                Args::Pointers(args),
                false,
            )
        }?;
        if !stop.is_null() {
            crate::stream::record_external(stop, stream)?;
        }
        Ok(())
    })
}

// ------------------------------------------------------------- HIP 7.0's launch configurations

/// `hipLaunchAttributeCooperative`.
const LAUNCH_ATTRIBUTE_COOPERATIVE: c_int = 2;
/// `hipLaunchAttributeSynchronizationPolicy` and `hipLaunchAttributePriority`: accepted with
/// the values the software agent has (see `hipStreamSetAttribute`).
const LAUNCH_ATTRIBUTE_PRIORITY: c_int = 8;
/// Bytes of one `hipLaunchAttribute` (id, padding, a 64-byte value union) in HIP 7.
const LAUNCH_ATTRIBUTE_SIZE: usize = 72;
/// Most attributes one launch may carry (HIP 7.1's `hipLaunchAttributeMax`).
const LAUNCH_ATTRIBUTES_MAX: u32 = 16;

/// Whether a launch's attributes ask for a cooperative launch; an attribute the software agent
/// cannot honour is `hipErrorNotSupported`, an unknown id `hipErrorInvalidValue`.
///
/// # Safety
/// `attrs` points to `count` attributes of HIP 7's layout (or is NULL with `count` 0).
unsafe fn launch_attributes(attrs: *const u8, count: u32) -> Result<bool, Failure> {
    if count == 0 {
        return Ok(false);
    }
    if attrs.is_null() {
        return Err(Failure::null("attrs"));
    }
    if count > LAUNCH_ATTRIBUTES_MAX {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("{count} launch attributes"),
        ));
    }
    let mut cooperative = false;
    for i in 0..count as usize {
        // SAFETY: the caller's array holds `count` attributes of LAUNCH_ATTRIBUTE_SIZE bytes:
        // the id at 0, the value from 8.
        let (id, value) = unsafe {
            let at = attrs.add(i * LAUNCH_ATTRIBUTE_SIZE);
            (
                at.cast::<c_int>().read_unaligned(),
                at.add(8).cast::<c_int>().read_unaligned(),
            )
        };
        match id {
            LAUNCH_ATTRIBUTE_COOPERATIVE => cooperative = value != 0,
            LAUNCH_ATTRIBUTE_PRIORITY => {}
            1 | 3..=7 | 9 | 10 => {
                return Err(Failure::new(
                    hipErrorNotSupported,
                    format!("launch attribute {id} is not supported on the software agent"),
                ))
            }
            _ => {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("launch attribute {id}"),
                ))
            }
        }
    }
    Ok(cooperative)
}

/// `hipLaunchConfig_t` (HIP 7.0, 56 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipLaunchConfig_t {
    /// Grid in work-groups.
    pub gridDim: dim3,
    /// Work-group size.
    pub blockDim: dim3,
    /// Dynamic LDS bytes.
    pub dynamicSmemBytes: usize,
    /// The stream.
    pub stream: hipStream_t,
    /// `hipLaunchAttribute*`.
    pub attrs: *const u8,
    /// How many.
    pub numAttrs: c_uint,
}
const _: () = assert!(std::mem::size_of::<hipLaunchConfig_t>() == 56);

/// `HIP_LAUNCH_CONFIG` (HIP 7.0, 56 bytes, the driver API's order).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HIP_LAUNCH_CONFIG {
    /// Grid in work-groups.
    pub gridDimX: c_uint,
    /// .
    pub gridDimY: c_uint,
    /// .
    pub gridDimZ: c_uint,
    /// Work-group size.
    pub blockDimX: c_uint,
    /// .
    pub blockDimY: c_uint,
    /// .
    pub blockDimZ: c_uint,
    /// Dynamic LDS bytes.
    pub sharedMemBytes: c_uint,
    /// The stream.
    pub hStream: hipStream_t,
    /// `hipLaunchAttribute*`.
    pub attrs: *const u8,
    /// How many.
    pub numAttrs: c_uint,
}
const _: () = assert!(std::mem::size_of::<HIP_LAUNCH_CONFIG>() == 56);

/// `hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* fPtr, void**
/// args)` (HIP 7.0): `hipLaunchKernel` with a configuration and attributes (cooperative).
#[export]
pub unsafe extern "C" fn hipLaunchKernelExC(
    config: *const hipLaunchConfig_t,
    function: *const c_void,
    args: *mut *mut c_void,
) -> hipError_t {
    call("hipLaunchKernelExC", || {
        if config.is_null() {
            return Err(Failure::null("config"));
        }
        // SAFETY: readable by the caller's contract.
        let c = unsafe { config.read_unaligned() };
        // SAFETY: the attribute array is the caller's, as the struct describes it.
        let cooperative = unsafe { launch_attributes(c.attrs, c.numAttrs) }?;
        let k = kernel_for(function, c.stream)?;
        // SAFETY: HIP's contract on `args`.
        unsafe {
            launch(
                function,
                &k,
                dims(c.gridDim),
                dims(c.blockDim),
                c.dynamicSmemBytes,
                c.stream,
                Args::Pointers(args),
                cooperative,
            )
        }
    })
}

/// `hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG* config, hipFunction_t f, void**
/// params, void** extra)` (HIP 7.0): `hipModuleLaunchKernel` with a configuration.
#[export]
pub unsafe extern "C" fn hipDrvLaunchKernelEx(
    config: *const HIP_LAUNCH_CONFIG,
    f: hipFunction_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hipError_t {
    call("hipDrvLaunchKernelEx", || {
        if config.is_null() {
            return Err(Failure::null("config"));
        }
        // SAFETY: readable by the caller's contract.
        let c = unsafe { config.read_unaligned() };
        // SAFETY: as in hipLaunchKernelExC.
        let cooperative = unsafe { launch_attributes(c.attrs, c.numAttrs) }?;
        let k = function_handle(f)?;
        let args = module_args(params, extra)?;
        // SAFETY: HIP's contract on params / extra.
        unsafe {
            launch(
                f,
                &k,
                [c.gridDimX, c.gridDimY, c.gridDimZ],
                [c.blockDimX, c.blockDimY, c.blockDimZ],
                c.sharedMemBytes as usize,
                c.hStream,
                args,
                cooperative,
            )
        }
    })
}

// ------------------------------------------------ HIP 5.2's legacy launch (hipConfigureCall)

thread_local! {
    /// The arguments `hipSetupArgument` placed for the next `hipLaunchByPtr`, packed as the
    /// kernel's argument segment (offsets as the caller gave them).
    static SETUP_ARGUMENTS: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Most bytes of explicit arguments a legacy launch may set up (the kernarg limit).
const MAX_SETUP_BYTES: usize = 4096;

/// `hipError_t hipConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem, hipStream_t
/// stream)`: the configuration of the next `hipLaunchByPtr` on this thread (as `<<<>>>` pushes
/// it); its arguments start empty.
#[export]
pub extern "C" fn hipConfigureCall(
    grid: dim3,
    block: dim3,
    shared: usize,
    stream: hipStream_t,
) -> hipError_t {
    call("hipConfigureCall", || {
        CALL_CONFIGURATION
            .try_with(|c| c.borrow_mut().push((grid, block, shared, stream)))
            .map_err(|_| Failure::new(hipErrorNotInitialized, "thread is exiting"))?;
        SETUP_ARGUMENTS
            .try_with(|a| a.borrow_mut().clear())
            .map_err(|_| Failure::new(hipErrorNotInitialized, "thread is exiting"))
    })
}

/// `hipError_t hipSetupArgument(const void* arg, size_t size, size_t offset)`: `size` bytes of
/// one argument at `offset` of the argument segment of the next `hipLaunchByPtr`.
#[export]
pub unsafe extern "C" fn hipSetupArgument(
    arg: *const c_void,
    size: usize,
    offset: usize,
) -> hipError_t {
    call("hipSetupArgument", || {
        if arg.is_null() {
            return Err(Failure::null("arg"));
        }
        let end = offset
            .checked_add(size)
            .filter(|&e| e <= MAX_SETUP_BYTES)
            .ok_or_else(|| {
                Failure::new(
                    hipErrorInvalidValue,
                    format!(
                        "argument of {size} bytes at offset {offset}: past {MAX_SETUP_BYTES} bytes"
                    ),
                )
            })?;
        // SAFETY: `size` readable bytes by the caller's contract.
        let bytes = unsafe { std::slice::from_raw_parts(arg.cast::<u8>(), size) };
        SETUP_ARGUMENTS
            .try_with(|a| {
                let mut a = a.borrow_mut();
                if a.len() < end {
                    a.resize(end, 0);
                }
                a[offset..end].copy_from_slice(bytes);
            })
            .map_err(|_| Failure::new(hipErrorNotInitialized, "thread is exiting"))
    })
}

/// `hipError_t hipLaunchByPtr(const void* func)`: launches the kernel of host function `func`
/// with the configuration of the last `hipConfigureCall` and the arguments set up since.
#[export]
pub unsafe extern "C" fn hipLaunchByPtr(function: *const c_void) -> hipError_t {
    call("hipLaunchByPtr", || {
        let (grid, block, shared, stream) = CALL_CONFIGURATION
            .try_with(|c| c.borrow_mut().pop())
            .ok()
            .flatten()
            .ok_or_else(|| {
                Failure::new(
                    hipErrorMissingConfiguration,
                    "no hipConfigureCall before it",
                )
            })?;
        let packed = SETUP_ARGUMENTS
            .try_with(|a| std::mem::take(&mut *a.borrow_mut()))
            .map_err(|_| Failure::new(hipErrorNotInitialized, "thread is exiting"))?;
        let k = kernel_for(function, stream)?;
        let s = stream_of(stream)?;
        let dynamic_lds = u32::try_from(shared).map_err(|_| {
            Failure::new(
                hipErrorInvalidValue,
                format!("{shared} bytes of dynamic shared memory"),
            )
        })?;
        let config = LaunchConfig {
            grid: dims(grid),
            block: dims(block),
            dynamic_lds,
            partial: [0; 3],
        };
        let explicit = ExplicitArgs::Packed(&packed);
        if captured(&s, function, &k, &config, &explicit, false)? {
            return Ok(());
        }
        runtime().launch(&k, &config, explicit, Some(&s))?;
        Ok(())
    })
}
