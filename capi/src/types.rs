//! C types of the HIP API, laid out exactly as Debian's HIP 5.2.3 headers
//! (`/usr/include/hip/hip_runtime_api.h`, `driver_types.h`) declare them, with compile-time
//! size and offset checks. The numbers in the checks come from clang-19 compiling those
//! headers (`tests/runtime_capi.rs` recompiles a probe and compares at test time).

#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// `hipError_t` (a C enum: `int`).
pub type hipError_t = c_int;

/// `hipSuccess`.
pub const hipSuccess: hipError_t = 0;
/// `hipErrorInvalidValue`.
pub const hipErrorInvalidValue: hipError_t = 1;
/// `hipErrorOutOfMemory`.
pub const hipErrorOutOfMemory: hipError_t = 2;
/// `hipErrorNotInitialized`.
pub const hipErrorNotInitialized: hipError_t = 3;
/// `hipErrorInvalidSymbol`.
pub const hipErrorInvalidSymbol: hipError_t = 13;
/// `hipErrorInvalidDeviceFunction`.
pub const hipErrorInvalidDeviceFunction: hipError_t = 98;
/// `hipErrorNoDevice`.
pub const hipErrorNoDevice: hipError_t = 100;
/// `hipErrorInvalidDevice`.
pub const hipErrorInvalidDevice: hipError_t = 101;
/// `hipErrorInvalidImage`.
pub const hipErrorInvalidImage: hipError_t = 200;
/// `hipErrorNoBinaryForGpu`.
pub const hipErrorNoBinaryForGpu: hipError_t = 209;
/// `hipErrorInvalidKernelFile`.
pub const hipErrorInvalidKernelFile: hipError_t = 218;
/// `hipErrorFileNotFound`.
pub const hipErrorFileNotFound: hipError_t = 301;
/// `hipErrorSharedObjectInitFailed`.
pub const hipErrorSharedObjectInitFailed: hipError_t = 303;
/// `hipErrorInvalidHandle`.
pub const hipErrorInvalidHandle: hipError_t = 400;
/// `hipErrorLaunchFailure`.
pub const hipErrorLaunchFailure: hipError_t = 719;
/// `hipErrorNotFound`.
pub const hipErrorNotFound: hipError_t = 500;
/// `hipErrorMissingConfiguration`.
pub const hipErrorMissingConfiguration: hipError_t = 52;
/// `hipErrorNotSupported`.
pub const hipErrorNotSupported: hipError_t = 801;
/// `hipErrorUnknown`.
pub const hipErrorUnknown: hipError_t = 999;

/// `hipErrorInvalidConfiguration`.
pub const hipErrorInvalidConfiguration: hipError_t = 9;
/// `hipErrorInvalidPitchValue`.
pub const hipErrorInvalidPitchValue: hipError_t = 12;
/// `hipErrorInvalidDevicePointer`.
pub const hipErrorInvalidDevicePointer: hipError_t = 17;
/// `hipErrorInvalidMemcpyDirection`.
pub const hipErrorInvalidMemcpyDirection: hipError_t = 21;
/// `hipErrorInvalidContext`.
pub const hipErrorInvalidContext: hipError_t = 201;
/// `hipErrorContextAlreadyInUse`.
pub const hipErrorContextAlreadyInUse: hipError_t = 216;
/// `hipErrorPeerAccessUnsupported`.
pub const hipErrorPeerAccessUnsupported: hipError_t = 217;
/// `hipErrorNotReady`.
pub const hipErrorNotReady: hipError_t = 600;
/// `hipErrorIllegalAddress`.
pub const hipErrorIllegalAddress: hipError_t = 700;
/// `hipErrorLaunchOutOfResources`.
pub const hipErrorLaunchOutOfResources: hipError_t = 701;
/// `hipErrorLaunchTimeOut`.
pub const hipErrorLaunchTimeOut: hipError_t = 702;
/// `hipErrorPeerAccessAlreadyEnabled`.
pub const hipErrorPeerAccessAlreadyEnabled: hipError_t = 704;
/// `hipErrorPeerAccessNotEnabled`.
pub const hipErrorPeerAccessNotEnabled: hipError_t = 705;
/// `hipErrorHostMemoryAlreadyRegistered`.
pub const hipErrorHostMemoryAlreadyRegistered: hipError_t = 712;
/// `hipErrorHostMemoryNotRegistered`.
pub const hipErrorHostMemoryNotRegistered: hipError_t = 713;
/// `hipErrorCooperativeLaunchTooLarge`.
pub const hipErrorCooperativeLaunchTooLarge: hipError_t = 720;

/// `HIP_VERSION` of the headers whose ABI librocload.so follows (HIP 5.2.21153).
pub const HIP_VERSION: c_int = 50221153;

/// `hipMemcpyKind`.
pub mod memcpy_kind {
    /// `hipMemcpyHostToHost`.
    pub const HOST_TO_HOST: i32 = 0;
    /// `hipMemcpyHostToDevice`.
    pub const HOST_TO_DEVICE: i32 = 1;
    /// `hipMemcpyDeviceToHost`.
    pub const DEVICE_TO_HOST: i32 = 2;
    /// `hipMemcpyDeviceToDevice`.
    pub const DEVICE_TO_DEVICE: i32 = 3;
    /// `hipMemcpyDefault` (the largest valid kind).
    pub const DEFAULT: i32 = 4;
}

/// `hipMemoryType`, numbered per HIP generation: 5.x had Host 0, Device 1 (and from 5.3
/// Managed 4); 6.0 renumbered it as CUDA does (Unregistered 0, Host 1, Device 2, Managed 3).
pub mod memory_type {
    /// `hipMemoryTypeHost` in HIP 5.
    pub const HOST: i32 = 0;
    /// `hipMemoryTypeDevice` in HIP 5.
    pub const DEVICE: i32 = 1;
    /// `hipMemoryTypeHost` from HIP 6.
    pub const HOST_6: i32 = 1;
    /// `hipMemoryTypeDevice` from HIP 6.
    pub const DEVICE_6: i32 = 2;
    /// `hipMemoryTypeManaged` from HIP 6.
    pub const MANAGED_6: i32 = 3;
}

/// `hipPointerAttribute_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipPointerAttribute_t {
    /// `hipMemoryType`.
    pub memoryType: c_int,
    /// The device the memory belongs to.
    pub device: c_int,
    /// The device-side address.
    pub devicePointer: *mut c_void,
    /// The host-side address (host and managed memory), else NULL.
    pub hostPointer: *mut c_void,
    /// Whether it is managed memory.
    pub isManaged: c_int,
    /// The flags it was allocated or registered with.
    pub allocationFlags: c_uint,
}
const _: () = assert!(std::mem::size_of::<hipPointerAttribute_t>() == 32);
const _: () = assert!(std::mem::offset_of!(hipPointerAttribute_t, devicePointer) == 8);
const _: () = assert!(std::mem::offset_of!(hipPointerAttribute_t, isManaged) == 24);

/// `hipEvent_t` (opaque).
pub type hipEvent_t = *mut c_void;
/// `hipCtx_t` (opaque).
pub type hipCtx_t = *mut c_void;
/// `hipStreamCallback_t`.
pub type hipStreamCallback_t =
    Option<unsafe extern "C" fn(stream: hipStream_t, status: hipError_t, user_data: *mut c_void)>;
/// `hipHostFn_t`.
pub type hipHostFn_t = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// Every `hipError_t` enumerator of HIP 5.2.3 (first name for aliased values).
static ERROR_NAMES: &[(hipError_t, &CStr)] = &[
    (0, c"hipSuccess"),
    (1, c"hipErrorInvalidValue"),
    (2, c"hipErrorOutOfMemory"),
    (3, c"hipErrorNotInitialized"),
    (4, c"hipErrorDeinitialized"),
    (5, c"hipErrorProfilerDisabled"),
    (6, c"hipErrorProfilerNotInitialized"),
    (7, c"hipErrorProfilerAlreadyStarted"),
    (8, c"hipErrorProfilerAlreadyStopped"),
    (9, c"hipErrorInvalidConfiguration"),
    (12, c"hipErrorInvalidPitchValue"),
    (13, c"hipErrorInvalidSymbol"),
    (17, c"hipErrorInvalidDevicePointer"),
    (21, c"hipErrorInvalidMemcpyDirection"),
    (35, c"hipErrorInsufficientDriver"),
    (52, c"hipErrorMissingConfiguration"),
    (53, c"hipErrorPriorLaunchFailure"),
    (98, c"hipErrorInvalidDeviceFunction"),
    (100, c"hipErrorNoDevice"),
    (101, c"hipErrorInvalidDevice"),
    (200, c"hipErrorInvalidImage"),
    (201, c"hipErrorInvalidContext"),
    (202, c"hipErrorContextAlreadyCurrent"),
    (205, c"hipErrorMapFailed"),
    (206, c"hipErrorUnmapFailed"),
    (207, c"hipErrorArrayIsMapped"),
    (208, c"hipErrorAlreadyMapped"),
    (209, c"hipErrorNoBinaryForGpu"),
    (210, c"hipErrorAlreadyAcquired"),
    (211, c"hipErrorNotMapped"),
    (212, c"hipErrorNotMappedAsArray"),
    (213, c"hipErrorNotMappedAsPointer"),
    (214, c"hipErrorECCNotCorrectable"),
    (215, c"hipErrorUnsupportedLimit"),
    (216, c"hipErrorContextAlreadyInUse"),
    (217, c"hipErrorPeerAccessUnsupported"),
    (218, c"hipErrorInvalidKernelFile"),
    (219, c"hipErrorInvalidGraphicsContext"),
    (300, c"hipErrorInvalidSource"),
    (301, c"hipErrorFileNotFound"),
    (302, c"hipErrorSharedObjectSymbolNotFound"),
    (303, c"hipErrorSharedObjectInitFailed"),
    (304, c"hipErrorOperatingSystem"),
    (400, c"hipErrorInvalidHandle"),
    (401, c"hipErrorIllegalState"),
    (500, c"hipErrorNotFound"),
    (600, c"hipErrorNotReady"),
    (700, c"hipErrorIllegalAddress"),
    (701, c"hipErrorLaunchOutOfResources"),
    (702, c"hipErrorLaunchTimeOut"),
    (704, c"hipErrorPeerAccessAlreadyEnabled"),
    (705, c"hipErrorPeerAccessNotEnabled"),
    (708, c"hipErrorSetOnActiveProcess"),
    (709, c"hipErrorContextIsDestroyed"),
    (710, c"hipErrorAssert"),
    (712, c"hipErrorHostMemoryAlreadyRegistered"),
    (713, c"hipErrorHostMemoryNotRegistered"),
    (719, c"hipErrorLaunchFailure"),
    (720, c"hipErrorCooperativeLaunchTooLarge"),
    (801, c"hipErrorNotSupported"),
    (900, c"hipErrorStreamCaptureUnsupported"),
    (901, c"hipErrorStreamCaptureInvalidated"),
    (902, c"hipErrorStreamCaptureMerge"),
    (903, c"hipErrorStreamCaptureUnmatched"),
    (904, c"hipErrorStreamCaptureUnjoined"),
    (905, c"hipErrorStreamCaptureIsolation"),
    (906, c"hipErrorStreamCaptureImplicit"),
    (907, c"hipErrorCapturedEvent"),
    (908, c"hipErrorStreamCaptureWrongThread"),
    (910, c"hipErrorGraphExecUpdateFailure"),
    (999, c"hipErrorUnknown"),
    (1052, c"hipErrorRuntimeMemory"),
    (1053, c"hipErrorRuntimeOther"),
];

/// Name and description of an error code, as static C strings. Codes rocload returns have a
/// description; for the others the description is the name (what HIP on AMD did, per the
/// header's note on `hipGetErrorString`). Unknown values give `hipErrorUnknown`.
pub fn error_strings(e: hipError_t) -> (&'static CStr, &'static CStr) {
    let description = match e {
        hipSuccess => Some(c"no error"),
        hipErrorInvalidValue => Some(c"invalid argument"),
        hipErrorOutOfMemory => Some(c"out of memory"),
        hipErrorNotInitialized => Some(c"initialization error"),
        hipErrorInvalidSymbol => Some(c"invalid device symbol"),
        hipErrorMissingConfiguration => Some(c"__global__ function call is not configured"),
        hipErrorInvalidDeviceFunction => Some(c"invalid device function"),
        hipErrorNoDevice => Some(c"no ROCm-capable device is detected"),
        hipErrorInvalidDevice => Some(c"invalid device ordinal"),
        hipErrorInvalidImage => Some(c"device kernel image is invalid"),
        hipErrorNoBinaryForGpu => Some(c"no kernel image is available for execution on the device"),
        hipErrorInvalidKernelFile => Some(c"invalid kernel file"),
        hipErrorFileNotFound => Some(c"file not found"),
        hipErrorSharedObjectInitFailed => Some(c"shared object initialization failed"),
        hipErrorInvalidHandle => Some(c"invalid resource handle"),
        hipErrorNotFound => Some(c"named symbol not found"),
        hipErrorNotSupported => Some(c"operation not supported"),
        hipErrorUnknown => Some(c"unknown error"),
        hipErrorInvalidConfiguration => Some(c"invalid configuration argument"),
        hipErrorInvalidPitchValue => Some(c"invalid pitch argument"),
        hipErrorInvalidDevicePointer => Some(c"invalid device pointer"),
        hipErrorInvalidMemcpyDirection => Some(c"invalid copy direction for memcpy"),
        hipErrorInvalidContext => Some(c"invalid device context"),
        hipErrorNotReady => Some(c"device not ready"),
        hipErrorIllegalAddress => Some(c"an illegal memory access was encountered"),
        hipErrorLaunchOutOfResources => Some(c"too many resources requested for launch"),
        hipErrorLaunchTimeOut => Some(c"the launch timed out and was terminated"),
        hipErrorPeerAccessAlreadyEnabled => Some(c"peer access is already enabled"),
        hipErrorPeerAccessNotEnabled => Some(c"peer access has not been enabled"),
        hipErrorHostMemoryAlreadyRegistered => {
            Some(c"part or all of the requested memory range is already mapped")
        }
        hipErrorHostMemoryNotRegistered => {
            Some(c"pointer does not correspond to a registered memory region")
        }
        hipErrorLaunchFailure => Some(c"unspecified launch failure"),
        hipErrorCooperativeLaunchTooLarge => Some(c"too many blocks in cooperative launch"),
        _ => None,
    };
    match ERROR_NAMES.iter().find(|(v, _)| *v == e) {
        Some(&(_, name)) => (name, description.unwrap_or(name)),
        None => (c"hipErrorUnknown", c"unknown error"),
    }
}

/// `dim3`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dim3 {
    /// x.
    pub x: u32,
    /// y.
    pub y: u32,
    /// z.
    pub z: u32,
}

/// `hipLaunchParams`: one launch of a multi-device launch (56 bytes in every HIP release).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipLaunchParams {
    /// The host function of the kernel.
    pub func: *mut c_void,
    /// Grid, in work-groups.
    pub gridDim: dim3,
    /// Work-group size.
    pub blockDim: dim3,
    /// One pointer per argument.
    pub args: *mut *mut c_void,
    /// Dynamic shared memory in bytes.
    pub sharedMem: usize,
    /// The stream, of the device this launch runs on.
    pub stream: hipStream_t,
}
const _: () = assert!(std::mem::size_of::<hipLaunchParams>() == 56);
const _: () = assert!(std::mem::offset_of!(hipLaunchParams, blockDim) == 20);
const _: () = assert!(std::mem::offset_of!(hipLaunchParams, args) == 32);
const _: () = assert!(std::mem::offset_of!(hipLaunchParams, stream) == 48);

/// `hipStream_t` (opaque).
pub type hipStream_t = *mut c_void;
/// `hipModule_t` (opaque: the address of a runtime module).
pub type hipModule_t = *mut c_void;
/// `hipFunction_t` (opaque: the address of a function handle).
pub type hipFunction_t = *mut c_void;
/// `hipMemPool_t` (an opaque handle).
pub type hipMemPool_t = *mut c_void;

/// `hipMemLocation`: where memory is (`type_` 1 is a device, `id` its ordinal).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hipMemLocation {
    /// `hipMemLocationType type`.
    pub type_: c_int,
    /// `int id`.
    pub id: c_int,
}

/// `hipMemAccessDesc`: the access one location gets.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hipMemAccessDesc {
    /// `hipMemLocation location`.
    pub location: hipMemLocation,
    /// `hipMemAccessFlags flags` (0 none, 1 read, 3 read-write).
    pub flags: c_int,
}

/// `hipMemPoolProps`: what `hipMemPoolCreate` makes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMemPoolProps {
    /// `hipMemAllocationType allocType` (1: pinned).
    pub allocType: c_int,
    /// `hipMemAllocationHandleType handleTypes`.
    pub handleTypes: c_int,
    /// `hipMemLocation location`.
    pub location: hipMemLocation,
    /// `void* win32SecurityAttributes`.
    pub win32SecurityAttributes: *mut c_void,
    /// `unsigned char reserved[64]`.
    pub reserved: [u8; 64],
}

/// `hipMemPoolPtrExportData`: 64 opaque bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMemPoolPtrExportData {
    /// `unsigned char reserved[64]`.
    pub reserved: [u8; 64],
}

// Sizes and offsets from clang-19 compiling Debian's HIP 5.2.3 header.
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<hipMemLocation>() == 8);
    assert!(size_of::<hipMemAccessDesc>() == 12);
    assert!(offset_of!(hipMemAccessDesc, flags) == 8);
    assert!(size_of::<hipMemPoolProps>() == 88);
    assert!(offset_of!(hipMemPoolProps, handleTypes) == 4);
    assert!(offset_of!(hipMemPoolProps, location) == 8);
    assert!(offset_of!(hipMemPoolProps, win32SecurityAttributes) == 16);
    assert!(offset_of!(hipMemPoolProps, reserved) == 24);
    assert!(size_of::<hipMemPoolPtrExportData>() == 64);
};

/// `hipDeviceptr_t`.
pub type hipDeviceptr_t = *mut c_void;

/// `struct hipFuncAttributes`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hipFuncAttributes {
    /// `binaryVersion`.
    pub binaryVersion: c_int,
    /// `cacheModeCA`.
    pub cacheModeCA: c_int,
    /// `constSizeBytes`.
    pub constSizeBytes: usize,
    /// `localSizeBytes`.
    pub localSizeBytes: usize,
    /// `maxDynamicSharedSizeBytes`.
    pub maxDynamicSharedSizeBytes: c_int,
    /// `maxThreadsPerBlock`.
    pub maxThreadsPerBlock: c_int,
    /// `numRegs`.
    pub numRegs: c_int,
    /// `preferredShmemCarveout`.
    pub preferredShmemCarveout: c_int,
    /// `ptxVersion`.
    pub ptxVersion: c_int,
    /// `sharedSizeBytes`.
    pub sharedSizeBytes: usize,
}

/// `hipFunction_attribute` values (`HIP_FUNC_ATTRIBUTE_*`).
pub mod func_attribute {
    /// `HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
    pub const MAX_THREADS_PER_BLOCK: i32 = 0;
    /// `HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`.
    pub const SHARED_SIZE_BYTES: i32 = 1;
    /// `HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES`.
    pub const CONST_SIZE_BYTES: i32 = 2;
    /// `HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`.
    pub const LOCAL_SIZE_BYTES: i32 = 3;
    /// `HIP_FUNC_ATTRIBUTE_NUM_REGS`.
    pub const NUM_REGS: i32 = 4;
    /// `HIP_FUNC_ATTRIBUTE_PTX_VERSION`.
    pub const PTX_VERSION: i32 = 5;
    /// `HIP_FUNC_ATTRIBUTE_BINARY_VERSION`.
    pub const BINARY_VERSION: i32 = 6;
    /// `HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA`.
    pub const CACHE_MODE_CA: i32 = 7;
    /// `HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
    pub const MAX_DYNAMIC_SHARED_SIZE_BYTES: i32 = 8;
    /// `HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`.
    pub const PREFERRED_SHARED_MEMORY_CARVEOUT: i32 = 9;
}

/// `hipDeviceArch_t`: 17 one-bit fields in one `unsigned`.
pub type hipDeviceArch_t = c_uint;

/// `hipDeviceProp_t` of HIP 5.2.3 (792 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipDeviceProp_t {
    /// Device name.
    pub name: [c_char; 256],
    /// `totalGlobalMem`.
    pub totalGlobalMem: usize,
    /// `sharedMemPerBlock`.
    pub sharedMemPerBlock: usize,
    /// `regsPerBlock`.
    pub regsPerBlock: c_int,
    /// `warpSize`.
    pub warpSize: c_int,
    /// `maxThreadsPerBlock`.
    pub maxThreadsPerBlock: c_int,
    /// `maxThreadsDim`.
    pub maxThreadsDim: [c_int; 3],
    /// `maxGridSize`.
    pub maxGridSize: [c_int; 3],
    /// `clockRate`.
    pub clockRate: c_int,
    /// `memoryClockRate`.
    pub memoryClockRate: c_int,
    /// `memoryBusWidth`.
    pub memoryBusWidth: c_int,
    /// `totalConstMem`.
    pub totalConstMem: usize,
    /// `major`.
    pub major: c_int,
    /// `minor`.
    pub minor: c_int,
    /// `multiProcessorCount`.
    pub multiProcessorCount: c_int,
    /// `l2CacheSize`.
    pub l2CacheSize: c_int,
    /// `maxThreadsPerMultiProcessor`.
    pub maxThreadsPerMultiProcessor: c_int,
    /// `computeMode`.
    pub computeMode: c_int,
    /// `clockInstructionRate`.
    pub clockInstructionRate: c_int,
    /// `arch` (feature bits).
    pub arch: hipDeviceArch_t,
    /// `concurrentKernels`.
    pub concurrentKernels: c_int,
    /// `pciDomainID`.
    pub pciDomainID: c_int,
    /// `pciBusID`.
    pub pciBusID: c_int,
    /// `pciDeviceID`.
    pub pciDeviceID: c_int,
    /// `maxSharedMemoryPerMultiProcessor`.
    pub maxSharedMemoryPerMultiProcessor: usize,
    /// `isMultiGpuBoard`.
    pub isMultiGpuBoard: c_int,
    /// `canMapHostMemory`.
    pub canMapHostMemory: c_int,
    /// `gcnArch` (deprecated: e.g. 1030).
    pub gcnArch: c_int,
    /// `gcnArchName`: the target id, e.g. `gfx90a:sramecc+:xnack-`.
    pub gcnArchName: [c_char; 256],
    /// `integrated`.
    pub integrated: c_int,
    /// `cooperativeLaunch`.
    pub cooperativeLaunch: c_int,
    /// `cooperativeMultiDeviceLaunch`.
    pub cooperativeMultiDeviceLaunch: c_int,
    /// `maxTexture1DLinear`.
    pub maxTexture1DLinear: c_int,
    /// `maxTexture1D`.
    pub maxTexture1D: c_int,
    /// `maxTexture2D`.
    pub maxTexture2D: [c_int; 2],
    /// `maxTexture3D`.
    pub maxTexture3D: [c_int; 3],
    /// `hdpMemFlushCntl`.
    pub hdpMemFlushCntl: *mut c_uint,
    /// `hdpRegFlushCntl`.
    pub hdpRegFlushCntl: *mut c_uint,
    /// `memPitch`.
    pub memPitch: usize,
    /// `textureAlignment`.
    pub textureAlignment: usize,
    /// `texturePitchAlignment`.
    pub texturePitchAlignment: usize,
    /// `kernelExecTimeoutEnabled`.
    pub kernelExecTimeoutEnabled: c_int,
    /// `ECCEnabled`.
    pub ECCEnabled: c_int,
    /// `tccDriver`.
    pub tccDriver: c_int,
    /// `cooperativeMultiDeviceUnmatchedFunc`.
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    /// `cooperativeMultiDeviceUnmatchedGridDim`.
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    /// `cooperativeMultiDeviceUnmatchedBlockDim`.
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    /// `cooperativeMultiDeviceUnmatchedSharedMem`.
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    /// `isLargeBar`.
    pub isLargeBar: c_int,
    /// `asicRevision`.
    pub asicRevision: c_int,
    /// `managedMemory`.
    pub managedMemory: c_int,
    /// `directManagedMemAccessFromHost`.
    pub directManagedMemAccessFromHost: c_int,
    /// `concurrentManagedAccess`.
    pub concurrentManagedAccess: c_int,
    /// `pageableMemoryAccess`.
    pub pageableMemoryAccess: c_int,
    /// `pageableMemoryAccessUsesHostPageTables`.
    pub pageableMemoryAccessUsesHostPageTables: c_int,
}

impl Default for hipDeviceProp_t {
    fn default() -> Self {
        // SAFETY: every field is an integer, an array of integers or a raw pointer, for which
        // all-zero bytes are a valid value (null for the pointers).
        unsafe { std::mem::zeroed() }
    }
}

// Layout checks: numbers from clang-19 on Debian's HIP 5.2.3 headers (sizeof / offsetof).
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<hipDeviceProp_t>() == 792);
    assert!(align_of::<hipDeviceProp_t>() == 8);
    assert!(offset_of!(hipDeviceProp_t, totalGlobalMem) == 256);
    assert!(offset_of!(hipDeviceProp_t, sharedMemPerBlock) == 264);
    assert!(offset_of!(hipDeviceProp_t, regsPerBlock) == 272);
    assert!(offset_of!(hipDeviceProp_t, warpSize) == 276);
    assert!(offset_of!(hipDeviceProp_t, maxThreadsPerBlock) == 280);
    assert!(offset_of!(hipDeviceProp_t, maxThreadsDim) == 284);
    assert!(offset_of!(hipDeviceProp_t, maxGridSize) == 296);
    assert!(offset_of!(hipDeviceProp_t, clockRate) == 308);
    assert!(offset_of!(hipDeviceProp_t, totalConstMem) == 320);
    assert!(offset_of!(hipDeviceProp_t, major) == 328);
    assert!(offset_of!(hipDeviceProp_t, minor) == 332);
    assert!(offset_of!(hipDeviceProp_t, multiProcessorCount) == 336);
    assert!(offset_of!(hipDeviceProp_t, arch) == 356);
    assert!(offset_of!(hipDeviceProp_t, concurrentKernels) == 360);
    assert!(offset_of!(hipDeviceProp_t, maxSharedMemoryPerMultiProcessor) == 376);
    assert!(offset_of!(hipDeviceProp_t, gcnArch) == 392);
    assert!(offset_of!(hipDeviceProp_t, gcnArchName) == 396);
    assert!(offset_of!(hipDeviceProp_t, integrated) == 652);
    assert!(offset_of!(hipDeviceProp_t, maxTexture3D) == 680);
    assert!(offset_of!(hipDeviceProp_t, hdpMemFlushCntl) == 696);
    assert!(offset_of!(hipDeviceProp_t, memPitch) == 712);
    assert!(offset_of!(hipDeviceProp_t, pageableMemoryAccessUsesHostPageTables) == 788);
    assert!(size_of::<hipFuncAttributes>() == 56);
    assert!(offset_of!(hipFuncAttributes, constSizeBytes) == 8);
    assert!(offset_of!(hipFuncAttributes, sharedSizeBytes) == 48);
    assert!(size_of::<dim3>() == 12);
};

/// `rocload_kernel_info_t` of `include/rocload.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rocload_kernel_info_t {
    /// Kernel descriptor address on the device.
    pub descriptor_address: u64,
    /// Code address (0 if unknown).
    pub code_address: u64,
    /// `.kernarg_segment_size`.
    pub kernarg_segment_size: u64,
    /// `.kernarg_segment_align`.
    pub kernarg_segment_align: u64,
    /// `.group_segment_fixed_size`.
    pub group_segment_fixed_size: u64,
    /// `.private_segment_fixed_size`.
    pub private_segment_fixed_size: u64,
    /// `.wavefront_size`.
    pub wavefront_size: u32,
    /// `.sgpr_count` (-1 if absent).
    pub sgpr_count: i32,
    /// `.vgpr_count` (-1 if absent).
    pub vgpr_count: i32,
    /// `.max_flat_workgroup_size` (-1 if absent).
    pub max_flat_workgroup_size: i32,
}

const _: () = assert!(std::mem::size_of::<rocload_kernel_info_t>() == 64);

/// `hipDeviceProp_tR0600` of HIP 6.0 and later (1472 bytes, CUDA 12's order, no `gcnArch`): what
/// `hipGetDevicePropertiesR0600` and `hipChooseDeviceR0600` take. Layout from clr's
/// `hip_runtime_api.h` as `../shared/hip-abi/layouts/hipDeviceProp_tR0600.tsv` records it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipDeviceProp_tR0600 {
    /// `name`.
    pub name: [c_char; 256],
    /// `uuid`.
    pub uuid: [c_char; 16],
    /// `luid`.
    pub luid: [c_char; 8],
    /// `luidDeviceNodeMask`.
    pub luidDeviceNodeMask: c_uint,
    /// `totalGlobalMem`.
    pub totalGlobalMem: usize,
    /// `sharedMemPerBlock`.
    pub sharedMemPerBlock: usize,
    /// `regsPerBlock`.
    pub regsPerBlock: c_int,
    /// `warpSize`.
    pub warpSize: c_int,
    /// `memPitch`.
    pub memPitch: usize,
    /// `maxThreadsPerBlock`.
    pub maxThreadsPerBlock: c_int,
    /// `maxThreadsDim`.
    pub maxThreadsDim: [c_int; 3],
    /// `maxGridSize`.
    pub maxGridSize: [c_int; 3],
    /// `clockRate`.
    pub clockRate: c_int,
    /// `totalConstMem`.
    pub totalConstMem: usize,
    /// `major`.
    pub major: c_int,
    /// `minor`.
    pub minor: c_int,
    /// `textureAlignment`.
    pub textureAlignment: usize,
    /// `texturePitchAlignment`.
    pub texturePitchAlignment: usize,
    /// `deviceOverlap`.
    pub deviceOverlap: c_int,
    /// `multiProcessorCount`.
    pub multiProcessorCount: c_int,
    /// `kernelExecTimeoutEnabled`.
    pub kernelExecTimeoutEnabled: c_int,
    /// `integrated`.
    pub integrated: c_int,
    /// `canMapHostMemory`.
    pub canMapHostMemory: c_int,
    /// `computeMode`.
    pub computeMode: c_int,
    /// `maxTexture1D`.
    pub maxTexture1D: c_int,
    /// `maxTexture1DMipmap`.
    pub maxTexture1DMipmap: c_int,
    /// `maxTexture1DLinear`.
    pub maxTexture1DLinear: c_int,
    /// `maxTexture2D`.
    pub maxTexture2D: [c_int; 2],
    /// `maxTexture2DMipmap`.
    pub maxTexture2DMipmap: [c_int; 2],
    /// `maxTexture2DLinear`.
    pub maxTexture2DLinear: [c_int; 3],
    /// `maxTexture2DGather`.
    pub maxTexture2DGather: [c_int; 2],
    /// `maxTexture3D`.
    pub maxTexture3D: [c_int; 3],
    /// `maxTexture3DAlt`.
    pub maxTexture3DAlt: [c_int; 3],
    /// `maxTextureCubemap`.
    pub maxTextureCubemap: c_int,
    /// `maxTexture1DLayered`.
    pub maxTexture1DLayered: [c_int; 2],
    /// `maxTexture2DLayered`.
    pub maxTexture2DLayered: [c_int; 3],
    /// `maxTextureCubemapLayered`.
    pub maxTextureCubemapLayered: [c_int; 2],
    /// `maxSurface1D`.
    pub maxSurface1D: c_int,
    /// `maxSurface2D`.
    pub maxSurface2D: [c_int; 2],
    /// `maxSurface3D`.
    pub maxSurface3D: [c_int; 3],
    /// `maxSurface1DLayered`.
    pub maxSurface1DLayered: [c_int; 2],
    /// `maxSurface2DLayered`.
    pub maxSurface2DLayered: [c_int; 3],
    /// `maxSurfaceCubemap`.
    pub maxSurfaceCubemap: c_int,
    /// `maxSurfaceCubemapLayered`.
    pub maxSurfaceCubemapLayered: [c_int; 2],
    /// `surfaceAlignment`.
    pub surfaceAlignment: usize,
    /// `concurrentKernels`.
    pub concurrentKernels: c_int,
    /// `ECCEnabled`.
    pub ECCEnabled: c_int,
    /// `pciBusID`.
    pub pciBusID: c_int,
    /// `pciDeviceID`.
    pub pciDeviceID: c_int,
    /// `pciDomainID`.
    pub pciDomainID: c_int,
    /// `tccDriver`.
    pub tccDriver: c_int,
    /// `asyncEngineCount`.
    pub asyncEngineCount: c_int,
    /// `unifiedAddressing`.
    pub unifiedAddressing: c_int,
    /// `memoryClockRate`.
    pub memoryClockRate: c_int,
    /// `memoryBusWidth`.
    pub memoryBusWidth: c_int,
    /// `l2CacheSize`.
    pub l2CacheSize: c_int,
    /// `persistingL2CacheMaxSize`.
    pub persistingL2CacheMaxSize: c_int,
    /// `maxThreadsPerMultiProcessor`.
    pub maxThreadsPerMultiProcessor: c_int,
    /// `streamPrioritiesSupported`.
    pub streamPrioritiesSupported: c_int,
    /// `globalL1CacheSupported`.
    pub globalL1CacheSupported: c_int,
    /// `localL1CacheSupported`.
    pub localL1CacheSupported: c_int,
    /// `sharedMemPerMultiprocessor`.
    pub sharedMemPerMultiprocessor: usize,
    /// `regsPerMultiprocessor`.
    pub regsPerMultiprocessor: c_int,
    /// `managedMemory`.
    pub managedMemory: c_int,
    /// `isMultiGpuBoard`.
    pub isMultiGpuBoard: c_int,
    /// `multiGpuBoardGroupID`.
    pub multiGpuBoardGroupID: c_int,
    /// `hostNativeAtomicSupported`.
    pub hostNativeAtomicSupported: c_int,
    /// `singleToDoublePrecisionPerfRatio`.
    pub singleToDoublePrecisionPerfRatio: c_int,
    /// `pageableMemoryAccess`.
    pub pageableMemoryAccess: c_int,
    /// `concurrentManagedAccess`.
    pub concurrentManagedAccess: c_int,
    /// `computePreemptionSupported`.
    pub computePreemptionSupported: c_int,
    /// `canUseHostPointerForRegisteredMem`.
    pub canUseHostPointerForRegisteredMem: c_int,
    /// `cooperativeLaunch`.
    pub cooperativeLaunch: c_int,
    /// `cooperativeMultiDeviceLaunch`.
    pub cooperativeMultiDeviceLaunch: c_int,
    /// `sharedMemPerBlockOptin`.
    pub sharedMemPerBlockOptin: usize,
    /// `pageableMemoryAccessUsesHostPageTables`.
    pub pageableMemoryAccessUsesHostPageTables: c_int,
    /// `directManagedMemAccessFromHost`.
    pub directManagedMemAccessFromHost: c_int,
    /// `maxBlocksPerMultiProcessor`.
    pub maxBlocksPerMultiProcessor: c_int,
    /// `accessPolicyMaxWindowSize`.
    pub accessPolicyMaxWindowSize: c_int,
    /// `reservedSharedMemPerBlock`.
    pub reservedSharedMemPerBlock: usize,
    /// `hostRegisterSupported`.
    pub hostRegisterSupported: c_int,
    /// `sparseHipArraySupported`.
    pub sparseHipArraySupported: c_int,
    /// `hostRegisterReadOnlySupported`.
    pub hostRegisterReadOnlySupported: c_int,
    /// `timelineSemaphoreInteropSupported`.
    pub timelineSemaphoreInteropSupported: c_int,
    /// `memoryPoolsSupported`.
    pub memoryPoolsSupported: c_int,
    /// `gpuDirectRDMASupported`.
    pub gpuDirectRDMASupported: c_int,
    /// `gpuDirectRDMAFlushWritesOptions`.
    pub gpuDirectRDMAFlushWritesOptions: c_uint,
    /// `gpuDirectRDMAWritesOrdering`.
    pub gpuDirectRDMAWritesOrdering: c_int,
    /// `memoryPoolSupportedHandleTypes`.
    pub memoryPoolSupportedHandleTypes: c_uint,
    /// `deferredMappingHipArraySupported`.
    pub deferredMappingHipArraySupported: c_int,
    /// `ipcEventSupported`.
    pub ipcEventSupported: c_int,
    /// `clusterLaunch`.
    pub clusterLaunch: c_int,
    /// `unifiedFunctionPointers`.
    pub unifiedFunctionPointers: c_int,
    /// `reserved`.
    pub reserved: [c_int; 63],
    /// `hipReserved`.
    pub hipReserved: [c_int; 32],
    /// `gcnArchName`.
    pub gcnArchName: [c_char; 256],
    /// `maxSharedMemoryPerMultiProcessor`.
    pub maxSharedMemoryPerMultiProcessor: usize,
    /// `clockInstructionRate`.
    pub clockInstructionRate: c_int,
    /// `arch`.
    pub arch: hipDeviceArch_t,
    /// `hdpMemFlushCntl`.
    pub hdpMemFlushCntl: *mut c_uint,
    /// `hdpRegFlushCntl`.
    pub hdpRegFlushCntl: *mut c_uint,
    /// `cooperativeMultiDeviceUnmatchedFunc`.
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    /// `cooperativeMultiDeviceUnmatchedGridDim`.
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    /// `cooperativeMultiDeviceUnmatchedBlockDim`.
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    /// `cooperativeMultiDeviceUnmatchedSharedMem`.
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    /// `isLargeBar`.
    pub isLargeBar: c_int,
    /// `asicRevision`.
    pub asicRevision: c_int,
}

impl Default for hipDeviceProp_tR0600 {
    fn default() -> Self {
        // SAFETY: every field is an integer, an array of them or a raw pointer: all zeros is a
        // valid value of each.
        unsafe { std::mem::zeroed() }
    }
}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<hipDeviceProp_tR0600>() == 1472);
    assert!(offset_of!(hipDeviceProp_tR0600, name) == 0);
    assert!(offset_of!(hipDeviceProp_tR0600, uuid) == 256);
    assert!(offset_of!(hipDeviceProp_tR0600, luid) == 272);
    assert!(offset_of!(hipDeviceProp_tR0600, luidDeviceNodeMask) == 280);
    assert!(offset_of!(hipDeviceProp_tR0600, totalGlobalMem) == 288);
    assert!(offset_of!(hipDeviceProp_tR0600, sharedMemPerBlock) == 296);
    assert!(offset_of!(hipDeviceProp_tR0600, regsPerBlock) == 304);
    assert!(offset_of!(hipDeviceProp_tR0600, warpSize) == 308);
    assert!(offset_of!(hipDeviceProp_tR0600, memPitch) == 312);
    assert!(offset_of!(hipDeviceProp_tR0600, maxThreadsPerBlock) == 320);
    assert!(offset_of!(hipDeviceProp_tR0600, maxThreadsDim) == 324);
    assert!(offset_of!(hipDeviceProp_tR0600, maxGridSize) == 336);
    assert!(offset_of!(hipDeviceProp_tR0600, clockRate) == 348);
    assert!(offset_of!(hipDeviceProp_tR0600, totalConstMem) == 352);
    assert!(offset_of!(hipDeviceProp_tR0600, major) == 360);
    assert!(offset_of!(hipDeviceProp_tR0600, minor) == 364);
    assert!(offset_of!(hipDeviceProp_tR0600, textureAlignment) == 368);
    assert!(offset_of!(hipDeviceProp_tR0600, texturePitchAlignment) == 376);
    assert!(offset_of!(hipDeviceProp_tR0600, deviceOverlap) == 384);
    assert!(offset_of!(hipDeviceProp_tR0600, multiProcessorCount) == 388);
    assert!(offset_of!(hipDeviceProp_tR0600, kernelExecTimeoutEnabled) == 392);
    assert!(offset_of!(hipDeviceProp_tR0600, integrated) == 396);
    assert!(offset_of!(hipDeviceProp_tR0600, canMapHostMemory) == 400);
    assert!(offset_of!(hipDeviceProp_tR0600, computeMode) == 404);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture1D) == 408);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture1DMipmap) == 412);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture1DLinear) == 416);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture2D) == 420);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture2DMipmap) == 428);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture2DLinear) == 436);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture2DGather) == 448);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture3D) == 456);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture3DAlt) == 468);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTextureCubemap) == 480);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture1DLayered) == 484);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTexture2DLayered) == 492);
    assert!(offset_of!(hipDeviceProp_tR0600, maxTextureCubemapLayered) == 504);
    assert!(offset_of!(hipDeviceProp_tR0600, maxSurface1D) == 512);
    assert!(offset_of!(hipDeviceProp_tR0600, maxSurface2D) == 516);
    assert!(offset_of!(hipDeviceProp_tR0600, maxSurface3D) == 524);
    assert!(offset_of!(hipDeviceProp_tR0600, maxSurface1DLayered) == 536);
    assert!(offset_of!(hipDeviceProp_tR0600, maxSurface2DLayered) == 544);
    assert!(offset_of!(hipDeviceProp_tR0600, maxSurfaceCubemap) == 556);
    assert!(offset_of!(hipDeviceProp_tR0600, maxSurfaceCubemapLayered) == 560);
    assert!(offset_of!(hipDeviceProp_tR0600, surfaceAlignment) == 568);
    assert!(offset_of!(hipDeviceProp_tR0600, concurrentKernels) == 576);
    assert!(offset_of!(hipDeviceProp_tR0600, ECCEnabled) == 580);
    assert!(offset_of!(hipDeviceProp_tR0600, pciBusID) == 584);
    assert!(offset_of!(hipDeviceProp_tR0600, pciDeviceID) == 588);
    assert!(offset_of!(hipDeviceProp_tR0600, pciDomainID) == 592);
    assert!(offset_of!(hipDeviceProp_tR0600, tccDriver) == 596);
    assert!(offset_of!(hipDeviceProp_tR0600, asyncEngineCount) == 600);
    assert!(offset_of!(hipDeviceProp_tR0600, unifiedAddressing) == 604);
    assert!(offset_of!(hipDeviceProp_tR0600, memoryClockRate) == 608);
    assert!(offset_of!(hipDeviceProp_tR0600, memoryBusWidth) == 612);
    assert!(offset_of!(hipDeviceProp_tR0600, l2CacheSize) == 616);
    assert!(offset_of!(hipDeviceProp_tR0600, persistingL2CacheMaxSize) == 620);
    assert!(offset_of!(hipDeviceProp_tR0600, maxThreadsPerMultiProcessor) == 624);
    assert!(offset_of!(hipDeviceProp_tR0600, streamPrioritiesSupported) == 628);
    assert!(offset_of!(hipDeviceProp_tR0600, globalL1CacheSupported) == 632);
    assert!(offset_of!(hipDeviceProp_tR0600, localL1CacheSupported) == 636);
    assert!(offset_of!(hipDeviceProp_tR0600, sharedMemPerMultiprocessor) == 640);
    assert!(offset_of!(hipDeviceProp_tR0600, regsPerMultiprocessor) == 648);
    assert!(offset_of!(hipDeviceProp_tR0600, managedMemory) == 652);
    assert!(offset_of!(hipDeviceProp_tR0600, isMultiGpuBoard) == 656);
    assert!(offset_of!(hipDeviceProp_tR0600, multiGpuBoardGroupID) == 660);
    assert!(offset_of!(hipDeviceProp_tR0600, hostNativeAtomicSupported) == 664);
    assert!(offset_of!(hipDeviceProp_tR0600, singleToDoublePrecisionPerfRatio) == 668);
    assert!(offset_of!(hipDeviceProp_tR0600, pageableMemoryAccess) == 672);
    assert!(offset_of!(hipDeviceProp_tR0600, concurrentManagedAccess) == 676);
    assert!(offset_of!(hipDeviceProp_tR0600, computePreemptionSupported) == 680);
    assert!(offset_of!(hipDeviceProp_tR0600, canUseHostPointerForRegisteredMem) == 684);
    assert!(offset_of!(hipDeviceProp_tR0600, cooperativeLaunch) == 688);
    assert!(offset_of!(hipDeviceProp_tR0600, cooperativeMultiDeviceLaunch) == 692);
    assert!(offset_of!(hipDeviceProp_tR0600, sharedMemPerBlockOptin) == 696);
    assert!(offset_of!(hipDeviceProp_tR0600, pageableMemoryAccessUsesHostPageTables) == 704);
    assert!(offset_of!(hipDeviceProp_tR0600, directManagedMemAccessFromHost) == 708);
    assert!(offset_of!(hipDeviceProp_tR0600, maxBlocksPerMultiProcessor) == 712);
    assert!(offset_of!(hipDeviceProp_tR0600, accessPolicyMaxWindowSize) == 716);
    assert!(offset_of!(hipDeviceProp_tR0600, reservedSharedMemPerBlock) == 720);
    assert!(offset_of!(hipDeviceProp_tR0600, hostRegisterSupported) == 728);
    assert!(offset_of!(hipDeviceProp_tR0600, sparseHipArraySupported) == 732);
    assert!(offset_of!(hipDeviceProp_tR0600, hostRegisterReadOnlySupported) == 736);
    assert!(offset_of!(hipDeviceProp_tR0600, timelineSemaphoreInteropSupported) == 740);
    assert!(offset_of!(hipDeviceProp_tR0600, memoryPoolsSupported) == 744);
    assert!(offset_of!(hipDeviceProp_tR0600, gpuDirectRDMASupported) == 748);
    assert!(offset_of!(hipDeviceProp_tR0600, gpuDirectRDMAFlushWritesOptions) == 752);
    assert!(offset_of!(hipDeviceProp_tR0600, gpuDirectRDMAWritesOrdering) == 756);
    assert!(offset_of!(hipDeviceProp_tR0600, memoryPoolSupportedHandleTypes) == 760);
    assert!(offset_of!(hipDeviceProp_tR0600, deferredMappingHipArraySupported) == 764);
    assert!(offset_of!(hipDeviceProp_tR0600, ipcEventSupported) == 768);
    assert!(offset_of!(hipDeviceProp_tR0600, clusterLaunch) == 772);
    assert!(offset_of!(hipDeviceProp_tR0600, unifiedFunctionPointers) == 776);
    assert!(offset_of!(hipDeviceProp_tR0600, reserved) == 780);
    assert!(offset_of!(hipDeviceProp_tR0600, hipReserved) == 1032);
    assert!(offset_of!(hipDeviceProp_tR0600, gcnArchName) == 1160);
    assert!(offset_of!(hipDeviceProp_tR0600, maxSharedMemoryPerMultiProcessor) == 1416);
    assert!(offset_of!(hipDeviceProp_tR0600, clockInstructionRate) == 1424);
    assert!(offset_of!(hipDeviceProp_tR0600, arch) == 1428);
    assert!(offset_of!(hipDeviceProp_tR0600, hdpMemFlushCntl) == 1432);
    assert!(offset_of!(hipDeviceProp_tR0600, hdpRegFlushCntl) == 1440);
    assert!(offset_of!(hipDeviceProp_tR0600, cooperativeMultiDeviceUnmatchedFunc) == 1448);
    assert!(offset_of!(hipDeviceProp_tR0600, cooperativeMultiDeviceUnmatchedGridDim) == 1452);
    assert!(
        offset_of!(
            hipDeviceProp_tR0600,
            cooperativeMultiDeviceUnmatchedBlockDim
        ) == 1456
    );
    assert!(
        offset_of!(
            hipDeviceProp_tR0600,
            cooperativeMultiDeviceUnmatchedSharedMem
        ) == 1460
    );
    assert!(offset_of!(hipDeviceProp_tR0600, isLargeBar) == 1464);
    assert!(offset_of!(hipDeviceProp_tR0600, asicRevision) == 1468);
};
