//! Devices: selection, properties and attributes, synchronisation and reset, peers, contexts,
//! versions.

use rocload_ffi::export;
use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_uint, c_void};

use parking_lot::Mutex;
use rocload_lib::runtime::occupancy;
use rocload_lib::runtime::KernelRef;

use crate::*;

// ------------------------------------------------------------------------------ devices

/// `hipError_t hipInit(unsigned flags)`.
#[export]
pub extern "C" fn hipInit(_flags: c_uint) -> hipError_t {
    call("hipInit", || {
        let _ = runtime();
        Ok(())
    })
}

/// `hipError_t hipGetDeviceCount(int* count)`: `hipErrorNoDevice` (count 0) without agents.
#[export]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> hipError_t {
    call("hipGetDeviceCount", || {
        if count.is_null() {
            return Err(Failure::null("count"));
        }
        let n = c_int::try_from(runtime().agents().len()).unwrap_or(c_int::MAX);
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(count, "count", n) }?;
        if n == 0 {
            runtime().agent(0)?;
        }
        Ok(())
    })
}

/// `hipError_t hipGetDevice(int* deviceId)`: the calling thread's current device; with no
/// device at all (none found, or none visible), hipErrorNoDevice, as HIP's initialisation
/// fails then.
#[export]
pub unsafe extern "C" fn hipGetDevice(device_id: *mut c_int) -> hipError_t {
    call("hipGetDevice", || {
        if runtime().agents().is_empty() {
            runtime().agent(0)?;
        }
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(device_id, "deviceId", current_device() as c_int) }
    })
}

/// `hipError_t hipSetDevice(int deviceId)`: sets the calling thread's current device.
#[export]
pub extern "C" fn hipSetDevice(device_id: c_int) -> hipError_t {
    call("hipSetDevice", || {
        runtime().agent(i64::from(device_id))?;
        CURRENT_DEVICE
            .try_with(|c| c.set(device_id))
            .map_err(|_| Failure::new(hipErrorNotInitialized, "thread is exiting"))
    })
}

/// `hipDeviceArch_t` of an AMD device: what HIP's headers define the `__HIP_ARCH_HAS_*__`
/// macros to for every AMD target, so the flags agree with what device code is compiled to see:
/// everything but funnel shift (bit 11), the `__syncthreads_*` extensions (bit 13), surface
/// functions (bit 14) and dynamic parallelism (bit 16).
const ARCH_FLAGS: hipDeviceArch_t = 0x1_ffff & !(1 << 11) & !(1 << 13) & !(1 << 14) & !(1 << 16);

/// The properties of `device` (a valid ordinal).
pub(crate) fn properties(device: i64) -> Result<hipDeviceProp_t, Failure> {
    let rt = runtime();
    let agent = rt.agent(device)?;
    let isa = agent.isa();
    let processor = isa.processor();
    // Every figure comes from the device's one set of properties, which hipDeviceGetAttribute,
    // hipMemGetInfo and the software HSA library's agent queries read too.
    let facts = rt.device(device)?.device().properties();
    let total = facts.total_memory;
    let mut p = hipDeviceProp_t::default();
    copy_c_string(&mut p.name, &facts.name);
    copy_c_string(&mut p.gcnArchName, &isa.target_id().to_string());
    if let Some(v) = processor.version {
        p.major = v.major as c_int;
        p.minor = v.minor as c_int;
        p.gcnArch = (v.major * 100 + v.minor * 10 + v.stepping) as c_int;
    }
    let clamp = |v: u64| c_int::try_from(v).unwrap_or(c_int::MAX);
    p.totalGlobalMem = total as usize;
    p.sharedMemPerBlock = facts.lds_per_workgroup as usize;
    p.regsPerBlock = 65536;
    p.warpSize = processor.wavefront_size as c_int;
    p.maxThreadsPerBlock = clamp(u64::from(facts.max_workgroup_size));
    p.maxThreadsDim = [1024, 1024, 1024];
    p.maxGridSize = [c_int::MAX, 65536, 65536];
    p.clockRate = clamp(u64::from(facts.clock_khz));
    p.memoryClockRate = clamp(u64::from(facts.memory_clock_khz));
    p.memoryBusWidth = clamp(u64::from(facts.memory_bus_width));
    p.totalConstMem = clamp(total).max(0) as usize;
    p.multiProcessorCount = clamp(u64::from(facts.compute_units));
    p.l2CacheSize = clamp(u64::from(facts.l2_cache()));
    p.maxThreadsPerMultiProcessor = occupancy::THREADS_PER_CU as c_int;
    p.computeMode = 0;
    p.clockInstructionRate = clamp(u64::from(facts.clock_khz));
    p.arch = ARCH_FLAGS;
    p.concurrentKernels = 1;
    p.pciDomainID = 0;
    p.pciBusID = 0;
    p.pciDeviceID = device as c_int;
    p.maxSharedMemoryPerMultiProcessor = facts.lds_per_cu as usize;
    p.isMultiGpuBoard = 0;
    p.canMapHostMemory = 1;
    p.integrated = c_int::from(facts.integrated);
    p.cooperativeLaunch = 1;
    p.cooperativeMultiDeviceLaunch = 0;
    // gfx10's image limits (ROCr's image LUT: 16384 texels a side, 8192 slices, buffers
    // addressed by a 32-bit element count, here capped at the int HIP reports).
    p.maxTexture1DLinear = c_int::MAX;
    p.maxTexture1D = 16384;
    p.maxTexture2D = [16384, 16384];
    p.maxTexture3D = [16384, 16384, 8192];
    p.memPitch = c_int::MAX as usize;
    p.textureAlignment = 256;
    p.texturePitchAlignment = 256;
    p.kernelExecTimeoutEnabled = 1;
    p.isLargeBar = 1;
    p.managedMemory = 1;
    p.directManagedMemAccessFromHost = 1;
    p.concurrentManagedAccess = 1;
    p.pageableMemoryAccess = 0;
    p.pageableMemoryAccessUsesHostPageTables = 0;
    Ok(p)
}

/// The properties of `device` in HIP 6's layout (`hipDeviceProp_tR0600`): the same values as
/// the 5.x struct, plus the fields HIP 6 added (the limits and capabilities CUDA 12 reports).
fn properties_r0600(device: i64) -> Result<hipDeviceProp_tR0600, Failure> {
    Ok(r0600_of(&properties(device)?))
}

/// HIP 6's layout of the 5.x properties `old`, with the fields HIP 6 added.
fn r0600_of(old: &hipDeviceProp_t) -> hipDeviceProp_tR0600 {
    let mut p = hipDeviceProp_tR0600 {
        name: old.name,
        totalGlobalMem: old.totalGlobalMem,
        sharedMemPerBlock: old.sharedMemPerBlock,
        regsPerBlock: old.regsPerBlock,
        warpSize: old.warpSize,
        memPitch: old.memPitch,
        maxThreadsPerBlock: old.maxThreadsPerBlock,
        maxThreadsDim: old.maxThreadsDim,
        maxGridSize: old.maxGridSize,
        clockRate: old.clockRate,
        totalConstMem: old.totalConstMem,
        major: old.major,
        minor: old.minor,
        textureAlignment: old.textureAlignment,
        texturePitchAlignment: old.texturePitchAlignment,
        multiProcessorCount: old.multiProcessorCount,
        kernelExecTimeoutEnabled: old.kernelExecTimeoutEnabled,
        integrated: old.integrated,
        canMapHostMemory: old.canMapHostMemory,
        computeMode: old.computeMode,
        maxTexture1D: old.maxTexture1D,
        maxTexture1DLinear: old.maxTexture1DLinear,
        maxTexture2D: old.maxTexture2D,
        maxTexture3D: old.maxTexture3D,
        concurrentKernels: old.concurrentKernels,
        ECCEnabled: old.ECCEnabled,
        pciBusID: old.pciBusID,
        pciDeviceID: old.pciDeviceID,
        pciDomainID: old.pciDomainID,
        tccDriver: old.tccDriver,
        memoryClockRate: old.memoryClockRate,
        memoryBusWidth: old.memoryBusWidth,
        l2CacheSize: old.l2CacheSize,
        maxThreadsPerMultiProcessor: old.maxThreadsPerMultiProcessor,
        managedMemory: old.managedMemory,
        isMultiGpuBoard: old.isMultiGpuBoard,
        pageableMemoryAccess: old.pageableMemoryAccess,
        concurrentManagedAccess: old.concurrentManagedAccess,
        cooperativeLaunch: old.cooperativeLaunch,
        cooperativeMultiDeviceLaunch: old.cooperativeMultiDeviceLaunch,
        pageableMemoryAccessUsesHostPageTables: old.pageableMemoryAccessUsesHostPageTables,
        directManagedMemAccessFromHost: old.directManagedMemAccessFromHost,
        gcnArchName: old.gcnArchName,
        maxSharedMemoryPerMultiProcessor: old.maxSharedMemoryPerMultiProcessor,
        clockInstructionRate: old.clockInstructionRate,
        arch: old.arch,
        hdpMemFlushCntl: old.hdpMemFlushCntl,
        hdpRegFlushCntl: old.hdpRegFlushCntl,
        cooperativeMultiDeviceUnmatchedFunc: old.cooperativeMultiDeviceUnmatchedFunc,
        cooperativeMultiDeviceUnmatchedGridDim: old.cooperativeMultiDeviceUnmatchedGridDim,
        cooperativeMultiDeviceUnmatchedBlockDim: old.cooperativeMultiDeviceUnmatchedBlockDim,
        cooperativeMultiDeviceUnmatchedSharedMem: old.cooperativeMultiDeviceUnmatchedSharedMem,
        isLargeBar: old.isLargeBar,
        asicRevision: old.asicRevision,
        ..hipDeviceProp_tR0600::default()
    };
    // What HIP 6 added, with the values the attributes of the same names report.
    p.deviceOverlap = 1;
    p.asyncEngineCount = 1;
    p.unifiedAddressing = 1;
    p.streamPrioritiesSupported = 1;
    p.globalL1CacheSupported = 1;
    p.localL1CacheSupported = 1;
    p.sharedMemPerMultiprocessor = old.maxSharedMemoryPerMultiProcessor;
    p.regsPerMultiprocessor = old.regsPerBlock;
    p.hostNativeAtomicSupported = 1;
    p.singleToDoublePrecisionPerfRatio = 2;
    p.canUseHostPointerForRegisteredMem = 1;
    p.sharedMemPerBlockOptin = old.sharedMemPerBlock;
    p.maxBlocksPerMultiProcessor = (occupancy::SIMDS_PER_CU * occupancy::WAVES_PER_SIMD) as c_int;
    p.memoryPoolsSupported = 1;
    p.ipcEventSupported = 1;
    p.hostRegisterSupported = 1;
    p.unifiedFunctionPointers = 1;
    p
}

/// `hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600* prop, int deviceId)`: what
/// `hipGetDeviceProperties` is in HIP 6 and 7's headers (1,472-byte layout).
#[export]
pub unsafe extern "C" fn hipGetDevicePropertiesR0600(
    prop: *mut hipDeviceProp_tR0600,
    device_id: c_int,
) -> hipError_t {
    call("hipGetDevicePropertiesR0600", || {
        let p = properties_r0600(i64::from(device_id))?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(prop, "prop", p) }
    })
}

/// `hipError_t hipGetDevicePropertiesR0000(hipDeviceProp_tR0000*, int)`: HIP 6's explicit name
/// of the 5.x layout, as `hipGetDeviceProperties` (the unsuffixed name keeps it in every
/// generation).
#[export]
pub unsafe extern "C" fn hipGetDevicePropertiesR0000(
    prop: *mut hipDeviceProp_t,
    device_id: c_int,
) -> hipError_t {
    // SAFETY: the same contract.
    unsafe { hipGetDeviceProperties(prop, device_id) }
}

/// The requirements `hipChooseDevice` weighs, as (attribute, value), from either layout of the
/// properties struct (the fields have the same names in both).
macro_rules! requirements {
    ($p:expr) => {
        [
            (23, i64::from($p.major)),
            (61, i64::from($p.minor)),
            (84, $p.totalGlobalMem as i64),
            (74, $p.sharedMemPerBlock as i64),
            (56, i64::from($p.maxThreadsPerBlock)),
            (63, i64::from($p.multiProcessorCount)),
            (57, i64::from($p.maxThreadsPerMultiProcessor)),
            (71, i64::from($p.regsPerBlock)),
        ]
    };
}

/// The device that satisfies most of the non-zero requirements in `wanted` (the compute
/// capability exactly, sizes and counts at least), the lowest ordinal among equals, as
/// `hipChooseDevice` picks one.
fn choose_device(wanted: &[(c_int, i64)]) -> Result<c_int, Failure> {
    let count = runtime().agents().len();
    if count == 0 {
        return Err(Failure::new(hipErrorNoDevice, "no device"));
    }
    let mut best = (0usize, 0);
    for device in 0..count as i64 {
        let mut score = 0;
        for &(attr, want) in wanted.iter().filter(|(_, w)| *w != 0) {
            let have = i64::from(attribute(attr, device)?);
            // Major and minor (23, 61) must match; everything else is a lower bound.
            let ok = if attr == 23 || attr == 61 {
                have == want
            } else {
                have >= want
            };
            score += usize::from(ok);
        }
        if device == 0 || score > best.0 {
            best = (score, device as c_int);
        }
    }
    Ok(best.1)
}

/// `hipError_t hipChooseDevice(int* device, const hipDeviceProp_t* prop)` (5.x layout): the
/// device that best matches `prop`'s non-zero compute capability, memory sizes and counts.
#[export]
pub unsafe extern "C" fn hipChooseDevice(
    device: *mut c_int,
    prop: *const hipDeviceProp_t,
) -> hipError_t {
    call("hipChooseDevice", || {
        if prop.is_null() {
            return Err(Failure::null("prop"));
        }
        // SAFETY: non-NULL and readable by the caller's contract.
        let p = unsafe { prop.read_unaligned() };
        let chosen = choose_device(&requirements!(p))?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(device, "device", chosen) }
    })
}

/// `hipError_t hipChooseDeviceR0000(int*, const hipDeviceProp_tR0000*)`: `hipChooseDevice`.
#[export]
pub unsafe extern "C" fn hipChooseDeviceR0000(
    device: *mut c_int,
    prop: *const hipDeviceProp_t,
) -> hipError_t {
    // SAFETY: the same contract.
    unsafe { hipChooseDevice(device, prop) }
}

/// `hipError_t hipChooseDeviceR0600(int*, const hipDeviceProp_tR0600*)`: `hipChooseDevice` for
/// HIP 6 and 7's layout.
#[export]
pub unsafe extern "C" fn hipChooseDeviceR0600(
    device: *mut c_int,
    prop: *const hipDeviceProp_tR0600,
) -> hipError_t {
    call("hipChooseDeviceR0600", || {
        if prop.is_null() {
            return Err(Failure::null("prop"));
        }
        // SAFETY: non-NULL and readable by the caller's contract.
        let p = unsafe { prop.read_unaligned() };
        let chosen = choose_device(&requirements!(p))?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(device, "device", chosen) }
    })
}

/// `hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int deviceId)`: the target id,
/// compute units (the emulator's host threads on the software agent), memory (the host's),
/// clock (what `clock64()` counts at: 1 GHz on the software agent), warp size, limits, feature
/// flags, cooperative launch.
#[export]
pub unsafe extern "C" fn hipGetDeviceProperties(
    prop: *mut hipDeviceProp_t,
    device_id: c_int,
) -> hipError_t {
    call("hipGetDeviceProperties", || {
        if prop.is_null() {
            return Err(Failure::null("prop"));
        }
        let p = properties(i64::from(device_id))?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(prop, "prop", p) }
    })
}

/// The value of a `hipDeviceAttribute_t` (numbers from HIP 5.2.3's header, which HIP 6 and 7
/// keep, plus the four HIP 6 added), read from the device's properties so that an attribute
/// and the property of the same name cannot disagree. Attributes HIP describes as an array
/// (`hipDeviceAttributeMaxThreadsDim`, the 2D/3D/layered texture and surface limits) give its
/// first element, the width. The four whose value is not an `int` (name, UUID, LUID, gcnArch
/// name) are `hipErrorInvalidValue`, naming the call that gives them; the HDP register
/// addresses are pointers, written by `hipDeviceGetAttribute` itself.
fn attribute(attr: c_int, device: i64) -> Result<c_int, Failure> {
    let old = properties(device)?;
    let p = r0600_of(&old);
    let sz = |v: usize| c_int::try_from(v).unwrap_or(c_int::MAX);
    let not_int = |what: &str, instead: &str| {
        Err(Failure::new(
            hipErrorInvalidValue,
            format!("device attribute {attr} ({what}) is not an int: {instead} gives it"),
        ))
    };
    Ok(match attr {
        0 => p.ECCEnabled,
        1 => p.accessPolicyMaxWindowSize,
        2 => p.asyncEngineCount,
        3 => p.canMapHostMemory,
        4 => p.canUseHostPointerForRegisteredMem,
        5 => p.clockRate,
        6 => p.computeMode,
        7 => p.computePreemptionSupported,
        8 => p.concurrentKernels,
        9 => p.concurrentManagedAccess,
        10 => p.cooperativeLaunch,
        11 => p.cooperativeMultiDeviceLaunch,
        12 => p.deviceOverlap,
        13 => p.directManagedMemAccessFromHost,
        14 => p.globalL1CacheSupported,
        15 => p.hostNativeAtomicSupported,
        16 => p.integrated,
        17 => p.isMultiGpuBoard,
        18 => p.kernelExecTimeoutEnabled,
        19 => p.l2CacheSize,
        20 => p.localL1CacheSupported,
        21 => return not_int("LUID, 8 bytes", "hipGetDeviceProperties' luid"),
        22 => p.luidDeviceNodeMask as c_int,
        23 => p.major,
        24 => p.managedMemory,
        25 => p.maxBlocksPerMultiProcessor,
        26..=28 => p.maxThreadsDim[(attr - 26) as usize],
        29..=31 => p.maxGridSize[(attr - 29) as usize],
        32 => p.maxSurface1D,
        33 => p.maxSurface1DLayered[0],
        34 => p.maxSurface2D[0],
        35 => p.maxSurface2DLayered[0],
        36 => p.maxSurface3D[0],
        37 => p.maxSurfaceCubemap,
        38 => p.maxSurfaceCubemapLayered[0],
        39 => p.maxTexture1D,
        40 => p.maxTexture1DLayered[0],
        41 => p.maxTexture1DLinear,
        42 => p.maxTexture1DMipmap,
        43 => p.maxTexture2D[0],
        44 => p.maxTexture2D[1],
        45 => p.maxTexture2DGather[0],
        46 => p.maxTexture2DLayered[0],
        47 => p.maxTexture2DLinear[0],
        48 => p.maxTexture2DMipmap[0],
        49..=51 => p.maxTexture3D[(attr - 49) as usize],
        52 => p.maxTexture3DAlt[0],
        53 => p.maxTextureCubemap,
        54 => p.maxTextureCubemapLayered[0],
        55 => p.maxThreadsDim[0],
        56 => p.maxThreadsPerBlock,
        57 => p.maxThreadsPerMultiProcessor,
        58 => sz(p.memPitch),
        59 => p.memoryBusWidth,
        60 => p.memoryClockRate,
        61 => p.minor,
        62 => p.multiGpuBoardGroupID,
        63 => p.multiProcessorCount,
        64 => return not_int("name", "hipDeviceGetName"),
        65 => p.pageableMemoryAccess,
        66 => p.pageableMemoryAccessUsesHostPageTables,
        67 => p.pciBusID,
        68 => p.pciDeviceID,
        69 => p.pciDomainID,
        70 => p.persistingL2CacheMaxSize,
        71 => p.regsPerBlock,
        72 => p.regsPerMultiprocessor,
        73 => sz(p.reservedSharedMemPerBlock),
        74 => sz(p.sharedMemPerBlock),
        75 => sz(p.sharedMemPerBlockOptin),
        76 => sz(p.sharedMemPerMultiprocessor),
        77 => p.singleToDoublePrecisionPerfRatio,
        78 => p.streamPrioritiesSupported,
        79 => sz(p.surfaceAlignment),
        80 => p.tccDriver,
        81 => sz(p.textureAlignment),
        82 => sz(p.texturePitchAlignment),
        83 => sz(p.totalConstMem),
        84 => sz(p.totalGlobalMem),
        85 => p.unifiedAddressing,
        86 => return not_int("UUID, 16 bytes", "hipDeviceGetUuid"),
        87 => p.warpSize,
        88 => p.memoryPoolsSupported,
        89 => 1, // virtual memory management (HIP 6)
        90 => p.hostRegisterSupported,
        91 => p.memoryPoolSupportedHandleTypes as c_int,
        10000 => p.clockInstructionRate,
        10001 => p.arch as c_int,
        10002 => sz(p.maxSharedMemoryPerMultiProcessor),
        10003 => old.gcnArch,
        10004 => {
            return not_int(
                "gcnArchName, a string",
                "hipGetDeviceProperties' gcnArchName",
            )
        }
        10007 => p.cooperativeMultiDeviceUnmatchedFunc,
        10008 => p.cooperativeMultiDeviceUnmatchedGridDim,
        10009 => p.cooperativeMultiDeviceUnmatchedBlockDim,
        10010 => p.cooperativeMultiDeviceUnmatchedSharedMem,
        10011 => p.isLargeBar,
        10012 => p.asicRevision,
        10013 => 1, // stream wait value (src/runtime/memops.rs)
        10014 => 1, // images (textures and surfaces)
        10015 => p.multiProcessorCount,
        10016 => 1,                      // fine-grained memory
        10017 => p.clockInstructionRate, // wall clock (HIP 6): the same timer
        other => {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("{other} is not a hipDeviceAttribute_t"),
            ))
        }
    })
}

/// `hipError_t hipDeviceGetAttribute(int* pi, hipDeviceAttribute_t attr, int deviceId)`.
#[export]
pub unsafe extern "C" fn hipDeviceGetAttribute(
    pi: *mut c_int,
    attr: c_int,
    device_id: c_int,
) -> hipError_t {
    call("hipDeviceGetAttribute", || {
        if pi.is_null() {
            return Err(Failure::null("pi"));
        }
        // The HDP flush registers' addresses (hipDeviceAttributeHdpMemFlushCntl and
        // ...RegFlushCntl) are pointers, written through `pi` as HIP does: the caller passes
        // a pointer-sized slot. This runtime maps no such register: NULL.
        if attr == 10005 || attr == 10006 {
            let p = properties_r0600(i64::from(device_id))?;
            let v = if attr == 10005 {
                p.hdpMemFlushCntl
            } else {
                p.hdpRegFlushCntl
            };
            // SAFETY: non-null (checked above); for these attributes HIP's contract is a
            // writable pointer slot, which an `int*` need not align: written unaligned.
            unsafe { pi.cast::<*mut c_uint>().write_unaligned(v) };
            return Ok(());
        }
        let v = attribute(attr, i64::from(device_id))?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(pi, "pi", v) }
    })
}

/// `hipError_t hipDeviceGet(hipDevice_t* device, int ordinal)`.
#[export]
pub unsafe extern "C" fn hipDeviceGet(device: *mut c_int, ordinal: c_int) -> hipError_t {
    call("hipDeviceGet", || {
        runtime().agent(i64::from(ordinal))?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(device, "device", ordinal) }
    })
}

/// `hipError_t hipDeviceGetName(char* name, int len, hipDevice_t device)`.
#[export]
pub unsafe extern "C" fn hipDeviceGetName(
    name: *mut c_char,
    len: c_int,
    device: c_int,
) -> hipError_t {
    call("hipDeviceGetName", || {
        if name.is_null() || len <= 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "name is NULL or len <= 0",
            ));
        }
        let p = properties(i64::from(device))?;
        // SAFETY: the caller gives `len` writable bytes.
        let dst = unsafe { std::slice::from_raw_parts_mut(name, len as usize) };
        let text: String = p
            .name
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8 as char)
            .collect();
        copy_c_string(dst, &text);
        Ok(())
    })
}

/// `hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device)`.
#[export]
pub unsafe extern "C" fn hipDeviceTotalMem(bytes: *mut usize, device: c_int) -> hipError_t {
    call("hipDeviceTotalMem", || {
        let p = properties(i64::from(device))?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(bytes, "bytes", p.totalGlobalMem) }
    })
}

/// `hipError_t hipDeviceComputeCapability(int* major, int* minor, hipDevice_t device)`.
#[export]
pub unsafe extern "C" fn hipDeviceComputeCapability(
    major: *mut c_int,
    minor: *mut c_int,
    device: c_int,
) -> hipError_t {
    call("hipDeviceComputeCapability", || {
        let p = properties(i64::from(device))?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe {
            out(major, "major", p.major)?;
            out(minor, "minor", p.minor)
        }
    })
}

/// `hipError_t hipDeviceGetPCIBusId(char* pciBusId, int len, int device)`: the software agent
/// has no PCI address; its ordinal stands in the device field.
#[export]
pub unsafe extern "C" fn hipDeviceGetPCIBusId(
    bus_id: *mut c_char,
    len: c_int,
    device: c_int,
) -> hipError_t {
    call("hipDeviceGetPCIBusId", || {
        if bus_id.is_null() || len <= 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "pciBusId is NULL or len <= 0",
            ));
        }
        let p = properties(i64::from(device))?;
        // SAFETY: the caller gives `len` writable bytes.
        let dst = unsafe { std::slice::from_raw_parts_mut(bus_id, len as usize) };
        copy_c_string(
            dst,
            &format!(
                "{:04x}:{:02x}:{:02x}.0",
                p.pciDomainID, p.pciBusID, p.pciDeviceID
            ),
        );
        Ok(())
    })
}

/// `hipError_t hipDeviceSynchronize(void)`: waits for every stream of the current device;
/// reports a failed kernel (sticky until `hipDeviceReset`).
#[export]
pub extern "C" fn hipDeviceSynchronize() -> hipError_t {
    call("hipDeviceSynchronize", || {
        rocload_lib::runtime::capture::check_device_synchronize("hipDeviceSynchronize")?;
        let ctx = crate::stream::current_context()?;
        let done = ctx.synchronize();
        // A synchronisation point: pools give back what they keep beyond their threshold.
        runtime().release_pool_memory(Some(ctx.index()));
        Ok(done?)
    })
}

/// Resets device `device` as clr's `hip::Device::Reset` (`rocload_lib::runtime::reset` says
/// what goes): the runtime destroys the streams, pools and memory, then the handles of the
/// destroyed streams and pools are retired and the device's flags are back to a fresh device's.
fn reset_device(device: i64) -> Result<(), Failure> {
    let done = runtime().reset_device(device)?;
    crate::stream::retire_streams(&done.streams);
    crate::mempool::forget_pools(&done.pools);
    if let Some(flags) = usize::try_from(device)
        .ok()
        .and_then(|d| DEVICE_FLAGS.get(d))
    {
        flags.store(DEFAULT_DEVICE_FLAGS, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(())
}

/// `hipError_t hipDeviceReset(void)`: resets the current device: waits for it, destroys the
/// streams the program created on it, its memory pools and the program's memory of it (a
/// later use of a pointer to it is a use after free, reported as after `hipFree`), restores
/// its flags, clears its sticky error and renews its null stream.
#[export]
pub extern "C" fn hipDeviceReset() -> hipError_t {
    call("hipDeviceReset", || reset_device(current_device()))
}

/// `hipError_t hipSetDeviceFlags(unsigned flags)`: the scheduling flags (spin, yield,
/// blocking sync, map host) are accepted; waits always block on the software agent.
#[export]
pub extern "C" fn hipSetDeviceFlags(flags: c_uint) -> hipError_t {
    call("hipSetDeviceFlags", || {
        if flags & !0x1f != 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("device flags {flags:#x}"),
            ));
        }
        device_flags()?.store(flags, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    })
}

/// The flags a device has before `hipSetDeviceFlags` and after a reset (clr's are
/// `hipDeviceScheduleSpin` at both times; rocload reports `hipDeviceScheduleAuto`, 0).
const DEFAULT_DEVICE_FLAGS: u32 = 0;

/// Each device's flags, as clr keeps them per device (`hip::Device::flags_`).
static DEVICE_FLAGS: [std::sync::atomic::AtomicU32; rocload_lib::runtime::MAX_DEVICES] =
    [const { std::sync::atomic::AtomicU32::new(DEFAULT_DEVICE_FLAGS) };
        rocload_lib::runtime::MAX_DEVICES];

/// The current device's flags.
fn device_flags() -> Result<&'static std::sync::atomic::AtomicU32, Failure> {
    let device = current_device();
    usize::try_from(device)
        .ok()
        .and_then(|d| DEVICE_FLAGS.get(d))
        .ok_or_else(|| Failure::new(hipErrorInvalidDevice, format!("device {device}")))
}

/// `hipError_t hipGetDeviceFlags(unsigned* flags)`.
#[export]
pub unsafe extern "C" fn hipGetDeviceFlags(flags: *mut c_uint) -> hipError_t {
    call("hipGetDeviceFlags", || {
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe {
            out(
                flags,
                "flags",
                device_flags()?.load(std::sync::atomic::Ordering::Relaxed),
            )
        }
    })
}

/// `hipLimit_t`: per-work-item stack (HIP 5.3), printf FIFO, device `malloc` heap.
mod limit {
    pub const STACK_SIZE: i32 = 0;
    pub const PRINTF_FIFO_SIZE: i32 = 1;
    pub const MALLOC_HEAP_SIZE: i32 = 2;
}

/// The printf FIFO size last set (device printf goes through hostcall, which has no FIFO to
/// fill: any size is honoured).
static PRINTF_FIFO: Mutex<usize> = Mutex::new(1 << 20);

/// `hipError_t hipDeviceGetLimit(size_t* pValue, hipLimit_t limit)`: the stack each work-item
/// gets for dynamic calls, the printf FIFO, the device heap.
#[export]
pub unsafe extern "C" fn hipDeviceGetLimit(value: *mut usize, limit: c_int) -> hipError_t {
    call("hipDeviceGetLimit", || {
        let v = match limit {
            limit::STACK_SIZE => rocload_lib::runtime::DYNAMIC_STACK_BYTES as usize,
            limit::PRINTF_FIFO_SIZE => *PRINTF_FIFO.lock(),
            limit::MALLOC_HEAP_SIZE => 256 << 20,
            other => return Err(Failure::new(hipErrorInvalidValue, format!("limit {other}"))),
        };
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(value, "pValue", v) }
    })
}

/// `hipError_t hipDeviceSetLimit(hipLimit_t limit, size_t value)` (HIP 5.3): the printf FIFO
/// takes any size; a stack up to what every launch already gets is accepted; anything the
/// runtime cannot give (a larger stack, another heap size: device `malloc` is not provided) is
/// `hipErrorNotSupported`, never a silent success.
#[export]
pub extern "C" fn hipDeviceSetLimit(limit: c_int, value: usize) -> hipError_t {
    call("hipDeviceSetLimit", || match limit {
        limit::PRINTF_FIFO_SIZE => {
            *PRINTF_FIFO.lock() = value;
            Ok(())
        }
        limit::STACK_SIZE if value <= rocload_lib::runtime::DYNAMIC_STACK_BYTES as usize => Ok(()),
        limit::STACK_SIZE | limit::MALLOC_HEAP_SIZE => Err(Failure::new(
            hipErrorNotSupported,
            format!("limit {limit} = {value}: the software agent cannot change it"),
        )),
        other => Err(Failure::new(hipErrorInvalidValue, format!("limit {other}"))),
    })
}

/// Devices `hipSetValidDevices` named, in order of preference.
static VALID_DEVICES: Mutex<Vec<c_int>> = Mutex::new(Vec::new());

/// The device of a thread that chose none: the first of `hipSetValidDevices`' list, or 0.
pub(crate) fn default_device() -> c_int {
    VALID_DEVICES.lock().first().copied().unwrap_or(0)
}

/// `hipError_t hipSetValidDevices(int* device_arr, int len)` (HIP 6.2): the devices, in order
/// of preference, a thread that has not chosen one uses (the first); an empty list restores
/// device 0.
#[export]
pub unsafe extern "C" fn hipSetValidDevices(devices: *mut c_int, len: c_int) -> hipError_t {
    call("hipSetValidDevices", || {
        let len = usize::try_from(len)
            .map_err(|_| Failure::new(hipErrorInvalidValue, format!("len {len}")))?;
        if len > 0 && devices.is_null() {
            return Err(Failure::null("device_arr"));
        }
        let count = runtime().agents().len();
        // A list is at most one entry per device: the copy below is bounded by the node, not
        // by the caller's `len`.
        if len > count {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("len {len}: more devices than the {count} of this node"),
            ));
        }
        let list: Vec<c_int> = (0..len)
            // SAFETY: `len` ints by the caller's contract.
            .map(|i| unsafe { devices.add(i).read() })
            .collect();
        if let Some(bad) = list.iter().find(|&&d| d < 0 || d as usize >= count) {
            return Err(Failure::new(hipErrorInvalidDevice, format!("device {bad}")));
        }
        *VALID_DEVICES.lock() = list;
        Ok(())
    })
}

/// `hipError_t hipDrvGetErrorName(hipError_t, const char** errorString)`: the enumerator's
/// name; `hipErrorInvalidValue` for a value HIP does not define.
#[export]
pub unsafe extern "C" fn hipDrvGetErrorName(
    error: hipError_t,
    name: *mut *const c_char,
) -> hipError_t {
    call("hipDrvGetErrorName", || {
        let (n, _) = error_strings(error);
        if error != hipErrorUnknown && n == c"hipErrorUnknown" {
            return Err(Failure::new(hipErrorInvalidValue, format!("error {error}")));
        }
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(name, "errorString", n.as_ptr()) }
    })
}

/// `hipError_t hipDrvGetErrorString(hipError_t, const char** errorString)`: its description.
#[export]
pub unsafe extern "C" fn hipDrvGetErrorString(
    error: hipError_t,
    text: *mut *const c_char,
) -> hipError_t {
    call("hipDrvGetErrorString", || {
        let (n, description) = error_strings(error);
        if error != hipErrorUnknown && n == c"hipErrorUnknown" {
            return Err(Failure::new(hipErrorInvalidValue, format!("error {error}")));
        }
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(text, "errorString", description.as_ptr()) }
    })
}

/// `hipError_t hipDeviceSetCacheConfig(hipFuncCache_t)`: no configurable split on AMD GPUs.
#[export]
pub extern "C" fn hipDeviceSetCacheConfig(config: c_int) -> hipError_t {
    call("hipDeviceSetCacheConfig", || {
        if (0..=3).contains(&config) {
            Ok(())
        } else {
            Err(Failure::new(
                hipErrorInvalidValue,
                format!("cache config {config}"),
            ))
        }
    })
}

/// `hipError_t hipDeviceGetCacheConfig(hipFuncCache_t*)`: `hipFuncCachePreferNone`.
#[export]
pub unsafe extern "C" fn hipDeviceGetCacheConfig(config: *mut c_int) -> hipError_t {
    // SAFETY: writable by the caller's contract (NULL rejected).
    call("hipDeviceGetCacheConfig", || unsafe {
        out(config, "cacheConfig", 0)
    })
}

/// `hipError_t hipDeviceSetSharedMemConfig(hipSharedMemConfig)`: four-byte banks only.
#[export]
pub extern "C" fn hipDeviceSetSharedMemConfig(config: c_int) -> hipError_t {
    call("hipDeviceSetSharedMemConfig", || {
        if (0..=2).contains(&config) {
            Ok(())
        } else {
            Err(Failure::new(
                hipErrorInvalidValue,
                format!("shared memory config {config}"),
            ))
        }
    })
}

/// `hipError_t hipDeviceGetSharedMemConfig(hipSharedMemConfig*)`: four-byte banks.
#[export]
pub unsafe extern "C" fn hipDeviceGetSharedMemConfig(config: *mut c_int) -> hipError_t {
    // SAFETY: writable by the caller's contract (NULL rejected).
    call("hipDeviceGetSharedMemConfig", || unsafe {
        out(config, "pConfig", 1)
    })
}

/// `hipError_t hipRuntimeGetVersion(int*)`: the HIP version whose ABI librocload.so follows.
#[export]
pub unsafe extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> hipError_t {
    // SAFETY: writable by the caller's contract (NULL rejected).
    call("hipRuntimeGetVersion", || unsafe {
        out(
            version,
            "runtimeVersion",
            crate::generation::current().hip_version(),
        )
    })
}

/// `hipError_t hipDriverGetVersion(int*)`: as `hipRuntimeGetVersion`.
#[export]
pub unsafe extern "C" fn hipDriverGetVersion(version: *mut c_int) -> hipError_t {
    // SAFETY: writable by the caller's contract (NULL rejected).
    call("hipDriverGetVersion", || unsafe {
        out(
            version,
            "driverVersion",
            crate::generation::current().hip_version(),
        )
    })
}

// ------------------------------------------------------------------------------ peers

/// Pairs (current device, peer) with peer access enabled.
static PEERS: Mutex<Option<HashSet<(i64, i64)>>> = Mutex::new(None);

/// `hipError_t hipDeviceCanAccessPeer(int* canAccessPeer, int deviceId, int peerDeviceId)`:
/// any two distinct devices (software agents share the host's memory).
#[export]
pub unsafe extern "C" fn hipDeviceCanAccessPeer(
    can: *mut c_int,
    device: c_int,
    peer: c_int,
) -> hipError_t {
    call("hipDeviceCanAccessPeer", || {
        runtime().device(i64::from(device))?;
        runtime().device(i64::from(peer))?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(can, "canAccessPeer", c_int::from(device != peer)) }
    })
}

/// `hipError_t hipDeviceEnablePeerAccess(int peerDeviceId, unsigned flags)`.
#[export]
pub extern "C" fn hipDeviceEnablePeerAccess(peer: c_int, flags: c_uint) -> hipError_t {
    call("hipDeviceEnablePeerAccess", || {
        if flags != 0 {
            return Err(Failure::new(hipErrorInvalidValue, "flags must be 0"));
        }
        let me = current_device();
        runtime().device(i64::from(peer))?;
        if i64::from(peer) == me {
            return Err(Failure::new(
                hipErrorInvalidDevice,
                "a device is not its own peer",
            ));
        }
        if !PEERS
            .lock()
            .get_or_insert_with(HashSet::new)
            .insert((me, i64::from(peer)))
        {
            return Err(Failure::new(
                hipErrorPeerAccessAlreadyEnabled,
                format!("device {me} already reaches {peer}"),
            ));
        }
        Ok(())
    })
}

/// `hipError_t hipDeviceDisablePeerAccess(int peerDeviceId)`.
#[export]
pub extern "C" fn hipDeviceDisablePeerAccess(peer: c_int) -> hipError_t {
    call("hipDeviceDisablePeerAccess", || {
        let me = current_device();
        runtime().device(i64::from(peer))?;
        if !PEERS
            .lock()
            .get_or_insert_with(HashSet::new)
            .remove(&(me, i64::from(peer)))
        {
            return Err(Failure::new(
                hipErrorPeerAccessNotEnabled,
                format!("device {me} does not reach {peer}"),
            ));
        }
        Ok(())
    })
}

// ------------------------------------------------------------------------------ occupancy

fn max_active_blocks(
    k: &KernelRef,
    block_size: c_int,
    dynamic_lds: usize,
) -> Result<c_int, Failure> {
    if block_size <= 0 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("block size {block_size}"),
        ));
    }
    let (blocks, limit) = occupancy::blocks_per_cu(k.info(), block_size as u32, dynamic_lds as u64);
    tracing::debug!(kernel = %k.info().name, block_size, dynamic_lds, blocks, ?limit, "occupancy");
    Ok(c_int::try_from(blocks).unwrap_or(c_int::MAX))
}

fn potential_block_size(
    grid: *mut c_int,
    block: *mut c_int,
    k: &KernelRef,
    dynamic_lds: usize,
    limit: c_int,
) -> Result<(), Failure> {
    if grid.is_null() || block.is_null() {
        return Err(Failure::null("gridSize or blockSize"));
    }
    let (size, per_cu) =
        occupancy::best_block_size(k.info(), limit.max(0) as u32, |_| dynamic_lds as u64);
    let units = runtime()
        .device(k.loaded().device() as i64)?
        .device()
        .compute_units();
    // SAFETY: non-null (checked), writable by the caller's contract.
    unsafe {
        grid.write(c_int::try_from(u64::from(per_cu) * u64::from(units)).unwrap_or(c_int::MAX));
        block.write(size as c_int);
    }
    Ok(())
}

/// `hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* f,
/// int blockSize, size_t dynSharedMemPerBlk)`.
#[export]
pub unsafe extern "C" fn hipOccupancyMaxActiveBlocksPerMultiprocessor(
    num_blocks: *mut c_int,
    f: *const c_void,
    block_size: c_int,
    dynamic_lds: usize,
) -> hipError_t {
    call("hipOccupancyMaxActiveBlocksPerMultiprocessor", || {
        let v = max_active_blocks(&host_kernel(f, current_device())?, block_size, dynamic_lds)?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(num_blocks, "numBlocks", v) }
    })
}

/// `hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int*, const void*, int,
/// size_t, unsigned flags)`.
#[export]
pub unsafe extern "C" fn hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    num_blocks: *mut c_int,
    f: *const c_void,
    block_size: c_int,
    dynamic_lds: usize,
    flags: c_uint,
) -> hipError_t {
    call(
        "hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        || {
            occupancy_flags(flags)?;
            let v = max_active_blocks(&host_kernel(f, current_device())?, block_size, dynamic_lds)?;
            // SAFETY: writable by the caller's contract (NULL rejected).
            unsafe { out(num_blocks, "numBlocks", v) }
        },
    )
}

/// `hipOccupancyDefault` and `hipOccupancyDisableCachingOverride`, the flags the `WithFlags`
/// occupancy calls take (the second changes nothing: there is no cache to configure).
fn occupancy_flags(flags: c_uint) -> Result<(), Failure> {
    if flags > 1 {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("unknown occupancy flags {flags:#x}"),
        ));
    }
    Ok(())
}

/// `hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int*,
/// hipFunction_t, int, size_t, unsigned flags)`.
#[export]
pub unsafe extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    num_blocks: *mut c_int,
    f: hipFunction_t,
    block_size: c_int,
    dynamic_lds: usize,
    flags: c_uint,
) -> hipError_t {
    call(
        "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        || {
            occupancy_flags(flags)?;
            let k = crate::module::function_handle(f)?;
            let v = max_active_blocks(&k, block_size, dynamic_lds)?;
            // SAFETY: writable by the caller's contract (NULL rejected).
            unsafe { out(num_blocks, "numBlocks", v) }
        },
    )
}

/// `hipError_t hipModuleOccupancyMaxPotentialBlockSizeWithFlags(int*, int*, hipFunction_t,
/// size_t, int, unsigned flags)`.
#[export]
pub unsafe extern "C" fn hipModuleOccupancyMaxPotentialBlockSizeWithFlags(
    grid: *mut c_int,
    block: *mut c_int,
    f: hipFunction_t,
    dynamic_lds: usize,
    limit: c_int,
    flags: c_uint,
) -> hipError_t {
    call("hipModuleOccupancyMaxPotentialBlockSizeWithFlags", || {
        occupancy_flags(flags)?;
        let k = crate::module::function_handle(f)?;
        potential_block_size(grid, block, &k, dynamic_lds, limit)
    })
}

/// `hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int*, hipFunction_t, int,
/// size_t)`.
#[export]
pub unsafe extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
    num_blocks: *mut c_int,
    f: hipFunction_t,
    block_size: c_int,
    dynamic_lds: usize,
) -> hipError_t {
    call("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", || {
        let k = crate::module::function_handle(f)?;
        let v = max_active_blocks(&k, block_size, dynamic_lds)?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(num_blocks, "numBlocks", v) }
    })
}

/// `hipError_t hipOccupancyMaxPotentialBlockSize(int* gridSize, int* blockSize, const void* f,
/// size_t dynSharedMemPerBlk, int blockSizeLimit)`: the block size with the most resident
/// work-items, and the grid that fills every compute unit at it.
#[export]
pub unsafe extern "C" fn hipOccupancyMaxPotentialBlockSize(
    grid: *mut c_int,
    block: *mut c_int,
    f: *const c_void,
    dynamic_lds: usize,
    limit: c_int,
) -> hipError_t {
    call("hipOccupancyMaxPotentialBlockSize", || {
        potential_block_size(
            grid,
            block,
            &host_kernel(f, current_device())?,
            dynamic_lds,
            limit,
        )
    })
}

/// `hipError_t hipModuleOccupancyMaxPotentialBlockSize(int*, int*, hipFunction_t, size_t,
/// int)`.
#[export]
pub unsafe extern "C" fn hipModuleOccupancyMaxPotentialBlockSize(
    grid: *mut c_int,
    block: *mut c_int,
    f: hipFunction_t,
    dynamic_lds: usize,
    limit: c_int,
) -> hipError_t {
    call("hipModuleOccupancyMaxPotentialBlockSize", || {
        let k = crate::module::function_handle(f)?;
        potential_block_size(grid, block, &k, dynamic_lds, limit)
    })
}

/// `HSA_AMD_LINK_INFO_TYPE_XGMI`.
const LINK_TYPE_XGMI: u32 = 4;

/// `hipError_t hipExtGetLinkTypeAndHopCount(int device1, int device2, uint32_t* linktype,
/// uint32_t* hopcount)`: how two devices are connected. NULL outputs, the same device twice
/// or a negative ordinal are hipErrorInvalidValue and an ordinal past the last device
/// hipErrorInvalidDevice, as in clr. Two devices whose memory is the host's (software agents)
/// reach each other's memory directly, as GPUs of one XGMI hive do: one hop of XGMI. Between
/// ROCr's agents the link is not read (`HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO`):
/// hipErrorNotSupported.
#[export]
pub unsafe extern "C" fn hipExtGetLinkTypeAndHopCount(
    device1: c_int,
    device2: c_int,
    link_type: *mut u32,
    hop_count: *mut u32,
) -> hipError_t {
    call("hipExtGetLinkTypeAndHopCount", || {
        if link_type.is_null() || hop_count.is_null() {
            return Err(Failure::null("linktype or hopcount"));
        }
        if device1 < 0 || device2 < 0 || device1 == device2 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("devices {device1} and {device2}"),
            ));
        }
        let shared_memory = |d: c_int| -> Result<bool, Failure> {
            Ok(runtime().device(d.into())?.device().properties().integrated)
        };
        if !(shared_memory(device1)? && shared_memory(device2)?) {
            return Err(Failure::new(
                hipErrorNotSupported,
                format!("no link information between devices {device1} and {device2}: ROCr's link info is not read"),
            ));
        }
        // SAFETY: non-null (checked), writable by the caller's contract.
        unsafe {
            link_type.write(LINK_TYPE_XGMI);
            hop_count.write(1);
        }
        Ok(())
    })
}

// ------------------------------------------------------------------------------ contexts

/// Contexts: handle -> device ordinal. A context is a device (HIP's contexts are deprecated
/// and map one-to-one onto devices).
static CONTEXTS: HandleTable<i64> = HandleTable::new(kind::CONTEXT);
/// Each device's primary context handle.
static PRIMARY: Mutex<Vec<(i64, u64)>> = Mutex::new(Vec::new());

fn primary_context(device: i64) -> Result<u64, Failure> {
    runtime().agent(device)?;
    let mut list = PRIMARY.lock();
    if let Some(&(_, h)) = list.iter().find(|(d, _)| *d == device) {
        return Ok(h);
    }
    let h = CONTEXTS
        .insert(device)
        .ok_or_else(|| Failure::new(hipErrorOutOfMemory, "2^24 contexts are live"))?;
    list.push((device, h));
    Ok(h)
}

pub(crate) fn context_device(ctx: hipCtx_t) -> Result<i64, Failure> {
    CONTEXTS
        .get(ctx as u64)
        .ok_or_else(|| Failure::new(hipErrorInvalidContext, format!("{ctx:p} is not a context")))
}

/// `hipError_t hipCtxCreate(hipCtx_t* ctx, unsigned flags, hipDevice_t device)`: a context on
/// `device`, made current.
#[export]
pub unsafe extern "C" fn hipCtxCreate(
    ctx: *mut hipCtx_t,
    _flags: c_uint,
    device: c_int,
) -> hipError_t {
    call("hipCtxCreate", || {
        if ctx.is_null() {
            return Err(Failure::null("ctx"));
        }
        runtime().agent(i64::from(device))?;
        let h = CONTEXTS
            .insert(i64::from(device))
            .ok_or_else(|| Failure::new(hipErrorOutOfMemory, "2^24 contexts are live"))?;
        set_current(device)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(ctx, "ctx", h as hipCtx_t) }
    })
}

fn set_current(device: c_int) -> Result<(), Failure> {
    CURRENT_DEVICE
        .try_with(|c| c.set(device))
        .map_err(|_| Failure::new(hipErrorNotInitialized, "thread is exiting"))
}

/// `hipError_t hipCtxDestroy(hipCtx_t ctx)`: waits for its device.
#[export]
pub unsafe extern "C" fn hipCtxDestroy(ctx: hipCtx_t) -> hipError_t {
    call("hipCtxDestroy", || {
        let device = context_device(ctx)?;
        if PRIMARY.lock().iter().any(|&(_, h)| h == ctx as u64) {
            return Err(Failure::new(
                hipErrorInvalidContext,
                "a primary context is not destroyed",
            ));
        }
        CONTEXTS.remove(ctx as u64);
        if let Ok(c) = runtime().device(device) {
            let _ = c.synchronize();
        }
        Ok(())
    })
}

/// `hipError_t hipCtxGetCurrent(hipCtx_t* ctx)`: the current device's primary context.
#[export]
pub unsafe extern "C" fn hipCtxGetCurrent(ctx: *mut hipCtx_t) -> hipError_t {
    call("hipCtxGetCurrent", || {
        let h = primary_context(current_device())?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(ctx, "ctx", h as hipCtx_t) }
    })
}

/// `hipError_t hipCtxSetCurrent(hipCtx_t ctx)`: makes the context's device current.
#[export]
pub unsafe extern "C" fn hipCtxSetCurrent(ctx: hipCtx_t) -> hipError_t {
    call("hipCtxSetCurrent", || {
        if ctx.is_null() {
            return Ok(());
        }
        let device = context_device(ctx)?;
        set_current(device as c_int)
    })
}

/// `hipError_t hipCtxGetDevice(hipDevice_t* device)`.
#[export]
pub unsafe extern "C" fn hipCtxGetDevice(device: *mut c_int) -> hipError_t {
    // SAFETY: writable by the caller's contract (NULL rejected).
    call("hipCtxGetDevice", || unsafe {
        out(device, "device", current_device() as c_int)
    })
}

/// `hipError_t hipCtxSynchronize(void)`.
#[export]
pub extern "C" fn hipCtxSynchronize() -> hipError_t {
    call("hipCtxSynchronize", || {
        Ok(crate::stream::current_context()?.synchronize()?)
    })
}

/// `hipError_t hipDevicePrimaryCtxRetain(hipCtx_t* pctx, hipDevice_t dev)`.
#[export]
pub unsafe extern "C" fn hipDevicePrimaryCtxRetain(
    ctx: *mut hipCtx_t,
    device: c_int,
) -> hipError_t {
    call("hipDevicePrimaryCtxRetain", || {
        let h = primary_context(i64::from(device))?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(ctx, "pctx", h as hipCtx_t) }
    })
}

/// `hipError_t hipDevicePrimaryCtxRelease(hipDevice_t dev)`: primary contexts live as long as
/// the process.
#[export]
pub extern "C" fn hipDevicePrimaryCtxRelease(device: c_int) -> hipError_t {
    call("hipDevicePrimaryCtxRelease", || {
        runtime().agent(i64::from(device))?;
        Ok(())
    })
}

/// `hipError_t hipDevicePrimaryCtxGetState(hipDevice_t dev, unsigned* flags, int* active)`.
#[export]
pub unsafe extern "C" fn hipDevicePrimaryCtxGetState(
    device: c_int,
    flags: *mut c_uint,
    active: *mut c_int,
) -> hipError_t {
    call("hipDevicePrimaryCtxGetState", || {
        runtime().agent(i64::from(device))?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe {
            out(flags, "flags", 0)?;
            out(active, "active", 1)
        }
    })
}

// ------------------------------------------------- the rest of HIP 5.2's context API (#23)

thread_local! {
    /// Contexts pushed with `hipCtxPushCurrent`, innermost last.
    static CONTEXT_STACK: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `hipError_t hipCtxPushCurrent(hipCtx_t ctx)`: makes `ctx` (and its device) current, over the
/// ones pushed before.
#[export]
pub unsafe extern "C" fn hipCtxPushCurrent(ctx: hipCtx_t) -> hipError_t {
    call("hipCtxPushCurrent", || {
        let device = context_device(ctx)?;
        CONTEXT_STACK
            .try_with(|s| s.borrow_mut().push(ctx as u64))
            .map_err(|_| Failure::new(hipErrorNotInitialized, "thread is exiting"))?;
        set_current(device as c_int)
    })
}

/// `hipError_t hipCtxPopCurrent(hipCtx_t* ctx)`: takes the innermost pushed context off (and
/// returns it when `ctx` is not NULL); the one below, if any, becomes current.
#[export]
pub unsafe extern "C" fn hipCtxPopCurrent(ctx: *mut hipCtx_t) -> hipError_t {
    call("hipCtxPopCurrent", || {
        let (popped, below) = CONTEXT_STACK
            .try_with(|s| {
                let mut s = s.borrow_mut();
                let popped = s.pop();
                (popped, s.last().copied())
            })
            .map_err(|_| Failure::new(hipErrorNotInitialized, "thread is exiting"))?;
        let popped = popped.ok_or_else(|| {
            Failure::new(
                hipErrorInvalidContext,
                "no context was pushed on this thread",
            )
        })?;
        if let Some(below) = below {
            if let Ok(device) = context_device(below as hipCtx_t) {
                set_current(device as c_int)?;
            }
        }
        if !ctx.is_null() {
            // SAFETY: non-NULL and writable by the caller's contract.
            unsafe { ctx.write(popped as hipCtx_t) };
        }
        Ok(())
    })
}

/// `hipError_t hipCtxGetFlags(unsigned int* flags)`: the current device's flags (those
/// `hipSetDeviceFlags` set).
#[export]
pub unsafe extern "C" fn hipCtxGetFlags(flags: *mut c_uint) -> hipError_t {
    // SAFETY: the same contract as hipGetDeviceFlags.
    unsafe { hipGetDeviceFlags(flags) }
}

/// `hipError_t hipCtxGetApiVersion(hipCtx_t ctx, int* apiVersion)`: the HIP version of the
/// caller's generation (as `hipRuntimeGetVersion`).
#[export]
pub unsafe extern "C" fn hipCtxGetApiVersion(ctx: hipCtx_t, version: *mut c_int) -> hipError_t {
    call("hipCtxGetApiVersion", || {
        context_device(ctx)?;
        let v = crate::generation::current().hip_version();
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(version, "apiVersion", v) }
    })
}

/// `hipError_t hipCtxGetCacheConfig(hipFuncCache_t*)`: the device's, as
/// `hipDeviceGetCacheConfig`.
#[export]
pub unsafe extern "C" fn hipCtxGetCacheConfig(config: *mut c_int) -> hipError_t {
    // SAFETY: the same contract.
    unsafe { hipDeviceGetCacheConfig(config) }
}

/// `hipError_t hipCtxSetCacheConfig(hipFuncCache_t)`.
#[export]
pub extern "C" fn hipCtxSetCacheConfig(config: c_int) -> hipError_t {
    hipDeviceSetCacheConfig(config)
}

/// `hipError_t hipCtxGetSharedMemConfig(hipSharedMemConfig*)`.
#[export]
pub unsafe extern "C" fn hipCtxGetSharedMemConfig(config: *mut c_int) -> hipError_t {
    // SAFETY: the same contract.
    unsafe { hipDeviceGetSharedMemConfig(config) }
}

/// `hipError_t hipCtxSetSharedMemConfig(hipSharedMemConfig)`.
#[export]
pub extern "C" fn hipCtxSetSharedMemConfig(config: c_int) -> hipError_t {
    hipDeviceSetSharedMemConfig(config)
}

/// `hipError_t hipCtxEnablePeerAccess(hipCtx_t peerCtx, unsigned int flags)`: peer access from
/// the current device to the context's device.
#[export]
pub unsafe extern "C" fn hipCtxEnablePeerAccess(peer: hipCtx_t, flags: c_uint) -> hipError_t {
    match context_device(peer) {
        Ok(device) => hipDeviceEnablePeerAccess(device as c_int, flags),
        Err(f) => call("hipCtxEnablePeerAccess", || Err(f)),
    }
}

/// `hipError_t hipCtxDisablePeerAccess(hipCtx_t peerCtx)`.
#[export]
pub unsafe extern "C" fn hipCtxDisablePeerAccess(peer: hipCtx_t) -> hipError_t {
    match context_device(peer) {
        Ok(device) => hipDeviceDisablePeerAccess(device as c_int),
        Err(f) => call("hipCtxDisablePeerAccess", || Err(f)),
    }
}

/// `hipError_t hipDevicePrimaryCtxReset(hipDevice_t dev)`: as `hipDeviceReset` for that
/// device.
#[export]
pub extern "C" fn hipDevicePrimaryCtxReset(device: c_int) -> hipError_t {
    call("hipDevicePrimaryCtxReset", || {
        reset_device(i64::from(device))
    })
}

/// `hipError_t hipDevicePrimaryCtxSetFlags(hipDevice_t dev, unsigned int flags)`: the primary
/// context of every device is always active here, so, as HIP answers for an active primary
/// context, `hipErrorContextAlreadyInUse`.
#[export]
pub extern "C" fn hipDevicePrimaryCtxSetFlags(device: c_int, flags: c_uint) -> hipError_t {
    call("hipDevicePrimaryCtxSetFlags", || {
        runtime().agent(i64::from(device))?;
        Err(Failure::new(
            hipErrorContextAlreadyInUse,
            format!("flags {flags:#x}: the primary context of device {device} is active"),
        ))
    })
}

/// `hipError_t hipDeviceGetByPCIBusId(int* device, const char* pciBusId)`: the device whose
/// `hipDeviceGetPCIBusId` is `pciBusId` (`domain:bus:device.function`, hex; the domain and
/// the function may be left out).
#[export]
pub unsafe extern "C" fn hipDeviceGetByPCIBusId(
    device: *mut c_int,
    bus_id: *const c_char,
) -> hipError_t {
    call("hipDeviceGetByPCIBusId", || {
        // SAFETY: NUL-terminated by the caller's contract (or NULL, rejected).
        let wanted = unsafe { c_str(bus_id, "pciBusId") }?.to_ascii_lowercase();
        let parse = |text: &str| -> Option<(u32, u32, u32)> {
            let (text, _function) = text.split_once('.').unwrap_or((text, "0"));
            let parts: Vec<&str> = text.split(':').collect();
            let hex = |s: &str| u32::from_str_radix(s, 16).ok();
            match parts.as_slice() {
                [domain, bus, dev] => Some((hex(domain)?, hex(bus)?, hex(dev)?)),
                [bus, dev] => Some((0, hex(bus)?, hex(dev)?)),
                _ => None,
            }
        };
        let want = parse(wanted.trim()).ok_or_else(|| {
            Failure::new(
                hipErrorInvalidValue,
                format!("{wanted:?} is not a PCI bus id"),
            )
        })?;
        for d in 0..runtime().agents().len() as i64 {
            let p = properties(d)?;
            if (
                p.pciDomainID as u32,
                p.pciBusID as u32,
                p.pciDeviceID as u32,
            ) == want
            {
                // SAFETY: writable by the caller's contract (NULL rejected).
                return unsafe { out(device, "device", d as c_int) };
            }
        }
        Err(Failure::new(
            hipErrorInvalidDevice,
            format!("no device at {wanted}"),
        ))
    })
}

/// `hipError_t hipDeviceGetUuid(hipUUID* uuid, hipDevice_t device)`: 16 bytes naming the
/// device for the process's life: `rocload-soft` or `rocload-gpu` and the ordinal.
#[export]
pub unsafe extern "C" fn hipDeviceGetUuid(uuid: *mut [c_char; 16], device: c_int) -> hipError_t {
    call("hipDeviceGetUuid", || {
        let agent = runtime().agent(i64::from(device))?;
        let kind = match agent.backend() {
            rocload_lib::loader::BackendKind::Soft => "rocload-soft",
            rocload_lib::loader::BackendKind::Hsa => "rocload-gpu-",
        };
        let mut bytes = [0 as c_char; 16];
        let text = format!("{kind}{device:04}");
        for (b, c) in bytes.iter_mut().zip(text.bytes()) {
            *b = c as c_char;
        }
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(uuid, "uuid", bytes) }
    })
}

/// `hipError_t hipDeviceGetP2PAttribute(int* value, hipDeviceP2PAttr attr, int srcDevice, int
/// dstDevice)`: two distinct devices of this process share the host's memory (software
/// agents) or reach each other as `hipDeviceCanAccessPeer` says: access and native atomics
/// supported, performance rank 0, arrays accessible.
#[export]
pub unsafe extern "C" fn hipDeviceGetP2PAttribute(
    value: *mut c_int,
    attr: c_int,
    src: c_int,
    dst: c_int,
) -> hipError_t {
    call("hipDeviceGetP2PAttribute", || {
        runtime().agent(i64::from(src))?;
        runtime().agent(i64::from(dst))?;
        if src == dst {
            return Err(Failure::new(
                hipErrorInvalidDevice,
                format!("device {src} is its own peer"),
            ));
        }
        let mut can = 0;
        // SAFETY: a local out-pointer.
        let code = unsafe { hipDeviceCanAccessPeer(&mut can, src, dst) };
        if code != hipSuccess {
            return Err(Failure::new(code, "peer query failed"));
        }
        let v = match attr {
            0 => 0,       // hipDevP2PAttrPerformanceRank
            1..=3 => can, // access, native atomics, array access
            other => {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("P2P attribute {other}"),
                ))
            }
        };
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(value, "value", v) }
    })
}
