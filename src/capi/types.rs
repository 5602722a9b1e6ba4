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
/// `hipErrorNotFound`.
pub const hipErrorNotFound: hipError_t = 500;
/// `hipErrorMissingConfiguration`.
pub const hipErrorMissingConfiguration: hipError_t = 52;
/// `hipErrorNotSupported`.
pub const hipErrorNotSupported: hipError_t = 801;
/// `hipErrorUnknown`.
pub const hipErrorUnknown: hipError_t = 999;

/// Name and description of every error code rocload returns, as static C strings.
pub fn error_strings(e: hipError_t) -> (&'static CStr, &'static CStr) {
    match e {
        hipSuccess => (c"hipSuccess", c"no error"),
        hipErrorInvalidValue => (c"hipErrorInvalidValue", c"invalid argument"),
        hipErrorOutOfMemory => (c"hipErrorOutOfMemory", c"out of memory"),
        hipErrorNotInitialized => (c"hipErrorNotInitialized", c"initialization error"),
        hipErrorInvalidSymbol => (c"hipErrorInvalidSymbol", c"invalid device symbol"),
        hipErrorMissingConfiguration => (c"hipErrorMissingConfiguration", c"__global__ function call is not configured"),
        hipErrorInvalidDeviceFunction => (c"hipErrorInvalidDeviceFunction", c"invalid device function"),
        hipErrorNoDevice => (c"hipErrorNoDevice", c"no ROCm-capable device is detected"),
        hipErrorInvalidDevice => (c"hipErrorInvalidDevice", c"invalid device ordinal"),
        hipErrorInvalidImage => (c"hipErrorInvalidImage", c"device kernel image is invalid"),
        hipErrorNoBinaryForGpu => (c"hipErrorNoBinaryForGpu", c"no kernel image is available for execution on the device"),
        hipErrorInvalidKernelFile => (c"hipErrorInvalidKernelFile", c"invalid kernel file"),
        hipErrorFileNotFound => (c"hipErrorFileNotFound", c"file not found"),
        hipErrorSharedObjectInitFailed => (c"hipErrorSharedObjectInitFailed", c"shared object initialization failed"),
        hipErrorInvalidHandle => (c"hipErrorInvalidHandle", c"invalid resource handle"),
        hipErrorNotFound => (c"hipErrorNotFound", c"named symbol not found"),
        hipErrorNotSupported => (c"hipErrorNotSupported", c"operation not supported"),
        hipErrorUnknown => (c"hipErrorUnknown", c"unknown error"),
        _ => (c"hipErrorUnknown", c"unknown error code"),
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

/// `hipStream_t` (opaque).
pub type hipStream_t = *mut c_void;
/// `hipModule_t` (opaque: the address of a runtime module).
pub type hipModule_t = *mut c_void;
/// `hipFunction_t` (opaque: the address of a function handle).
pub type hipFunction_t = *mut c_void;
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
    use std::mem::{offset_of, size_of, align_of};
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
