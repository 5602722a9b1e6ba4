//! Virtual memory management and IPC through the C ABI, in-process: clr's argument checks,
//! both `hipMemAllocationProp` layouts, a whole reserve-create-map-access-copy-unmap round
//! trip with two views of one allocation, descriptor export and import, and IPC memory and
//! event handles as far as one process can take them (the two-process test is the HIP program
//! `tests/hip_programs/emu/vmm_ipc.hip`).
// Test code: every unsafe call passes pointers and buffers the test itself owns.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::ffi::{c_int, c_ulonglong, c_void};
use std::ptr::{null, null_mut};

use super::*;
use crate::ipc::*;
use crate::memory::{hipFree, hipMalloc, hipMemcpy, hipPointerGetAttributes};
use crate::stream::{
    hipEventCreate, hipEventCreateWithFlags, hipEventDestroy, hipEventElapsedTime, hipEventQuery,
    hipEventRecord, hipEventSynchronize,
};

/// A `hipMemAllocationProp` for `device` in HIP 5.2's layout.
fn prop_5_2(device: i32, handle_type: u32) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[4..8].copy_from_slice(&1u32.to_le_bytes());
    b[8..12].copy_from_slice(&device.to_le_bytes());
    b[12..16].copy_from_slice(&handle_type.to_le_bytes());
    b[16..20].copy_from_slice(&1u32.to_le_bytes());
    b
}

/// The same in HIP 5.3's (and 6's and 7's) layout.
fn prop_5_3(device: i32, handle_type: u32) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[0..4].copy_from_slice(&1u32.to_le_bytes());
    b[4..8].copy_from_slice(&handle_type.to_le_bytes());
    b[8..12].copy_from_slice(&1u32.to_le_bytes());
    b[12..16].copy_from_slice(&device.to_le_bytes());
    b
}

fn p(b: &[u8; 32]) -> *const c_void {
    b.as_ptr().cast()
}

fn granularity() -> usize {
    let mut g = 0usize;
    assert_eq!(
        unsafe { hipMemGetAllocationGranularity(&mut g, p(&prop_5_2(0, 0)), 0) },
        hipSuccess
    );
    assert!(g.is_power_of_two());
    g
}

#[test]
fn arguments_are_checked_as_clr_checks_them() {
    unsafe {
        let g = granularity();
        let mut h2 = 0usize;
        // The 5.3 layout is understood too (a HIP 5.3-5.7 header's struct).
        assert_eq!(
            hipMemGetAllocationGranularity(&mut h2, p(&prop_5_3(0, 0)), 1),
            hipSuccess
        );
        assert_eq!(h2, g);
        let mut bad = prop_5_2(0, 0);
        bad[16] = 0;
        assert_eq!(
            hipMemGetAllocationGranularity(&mut h2, p(&bad), 0),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemGetAllocationGranularity(&mut h2, p(&prop_5_2(99, 0)), 0),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemGetAllocationGranularity(&mut h2, p(&prop_5_2(0, 0)), 2),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemGetAllocationGranularity(null_mut(), p(&prop_5_2(0, 0)), 0),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemGetAllocationGranularity(&mut h2, null(), 0),
            hipErrorInvalidValue
        );

        let mut h: hipMemGenericAllocationHandle_t = null_mut();
        let ok = prop_5_2(0, 1);
        assert_eq!(hipMemCreate(&mut h, g, p(&ok), 1), hipErrorInvalidValue);
        assert_eq!(hipMemCreate(&mut h, 0, p(&ok), 0), hipErrorInvalidValue);
        assert_eq!(hipMemCreate(&mut h, g + 1, p(&ok), 0), hipErrorInvalidValue);
        assert_eq!(hipMemCreate(null_mut(), g, p(&ok), 0), hipErrorInvalidValue);
        assert_eq!(
            hipMemCreate(&mut h, g, p(&prop_5_2(0, 2)), 0),
            hipErrorNotSupported
        );
        assert_eq!(
            hipMemCreate(&mut h, g, p(&prop_5_2(0, 7)), 0),
            hipErrorInvalidValue
        );

        let mut va: *mut c_void = null_mut();
        assert_eq!(
            hipMemAddressReserve(&mut va, g, 0, null_mut(), 1),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemAddressReserve(null_mut(), g, 0, null_mut(), 0),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemAddressReserve(&mut va, g / 2, 0, null_mut(), 0),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemAddressReserve(&mut va, g, 3, null_mut(), 0),
            hipErrorInvalidValue
        );
        assert_eq!(hipMemAddressFree(null_mut(), g), hipErrorInvalidValue);
        assert_eq!(
            hipMemAddressFree(0x1000 as *mut c_void, g),
            hipErrorInvalidValue
        );
        assert_eq!(hipMemRelease(null_mut()), hipErrorInvalidValue);
        assert_eq!(hipMemRelease(0x1234 as *mut c_void), hipErrorInvalidValue);
        assert_eq!(
            hipMemMap(null_mut(), g, 0, 0x10 as *mut c_void, 0),
            hipErrorInvalidValue
        );
        assert_eq!(hipMemUnmap(0x1000 as *mut c_void, 0), hipErrorInvalidValue);
        assert_eq!(hipMemUnmap(0x1000 as *mut c_void, g), hipErrorInvalidValue);
        let desc = [1u32, 0, 3];
        assert_eq!(
            hipMemSetAccess(0x1000 as *mut c_void, g, desc.as_ptr().cast(), 0),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemSetAccess(0x1000 as *mut c_void, g, desc.as_ptr().cast(), 1 << 40),
            hipErrorInvalidValue
        );
        let mut flags: c_ulonglong = 0;
        let loc = [1u32, 0];
        assert_eq!(
            hipMemGetAccess(&mut flags, loc.as_ptr().cast(), 0x1000 as *mut c_void),
            hipErrorInvalidValue
        );
        let mut fd: c_int = -1;
        assert_eq!(
            hipMemExportToShareableHandle((&mut fd as *mut c_int).cast(), null_mut(), 1, 0),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemImportFromShareableHandle(&mut h, null_mut(), 1),
            hipErrorInvalidValue
        );
        // A descriptor that is not shareable memory (stdin or whatever fd 0 is here).
        let null_file = std::fs::File::open("/dev/null").unwrap();
        use std::os::fd::AsRawFd;
        assert_eq!(
            hipMemImportFromShareableHandle(
                &mut h,
                null_file.as_raw_fd() as usize as *mut c_void,
                1
            ),
            hipErrorInvalidValue
        );
        let info = [0u8; 152];
        assert_eq!(
            hipMemMapArrayAsync(info.as_ptr() as *mut c_void, 1, null_mut()),
            hipErrorNotSupported
        );
        assert_eq!(
            hipMemMapArrayAsync(null_mut(), 1, null_mut()),
            hipErrorInvalidValue
        );
    }
}

/// Reserve, create, map one allocation at two addresses, give access, copy in through one
/// view and out through the other; retain, properties, export and import; unmap and free in
/// HIP's order, with the wrong orders refused.
#[test]
fn a_round_trip_through_the_c_api() {
    unsafe {
        let g = granularity();
        let mut h: hipMemGenericAllocationHandle_t = null_mut();
        let prop = prop_5_2(0, 1);
        assert_eq!(hipMemCreate(&mut h, 2 * g, p(&prop), 0), hipSuccess);
        let mut va: *mut c_void = null_mut();
        assert_eq!(
            hipMemAddressReserve(&mut va, 8 * g, 0, null_mut(), 0),
            hipSuccess
        );
        let a = va;
        let b = (va as usize + 4 * g) as *mut c_void;
        assert_eq!(hipMemMap(a, 2 * g, 0, h, 0), hipSuccess);
        assert_eq!(hipMemMap(b, 2 * g, 0, h, 0), hipSuccess);
        // Nothing is accessible yet: a copy is refused, not made.
        let data: Vec<u32> = (0..(2 * g / 4) as u32)
            .map(|i| i.wrapping_mul(2654435761))
            .collect();
        assert_eq!(
            hipMemcpy(a, data.as_ptr().cast(), 2 * g, 1),
            hipErrorInvalidValue
        );
        let desc = [1u32, 0, 3];
        assert_eq!(
            hipMemSetAccess(a, 2 * g, desc.as_ptr().cast(), 1),
            hipSuccess
        );
        assert_eq!(
            hipMemSetAccess(b, 2 * g, desc.as_ptr().cast(), 1),
            hipSuccess
        );
        assert_eq!(hipMemcpy(a, data.as_ptr().cast(), 2 * g, 1), hipSuccess);
        let mut back = vec![0u32; data.len()];
        assert_eq!(hipMemcpy(back.as_mut_ptr().cast(), b, 2 * g, 2), hipSuccess);
        assert_eq!(back, data);
        let mut attrs: hipPointerAttribute_t = std::mem::zeroed();
        assert_eq!(hipPointerGetAttributes(&mut attrs, b), hipSuccess);
        assert_eq!(attrs.memoryType, 1, "hipMemoryTypeDevice (HIP 5)");
        let mut flags: c_ulonglong = 9;
        let loc = [1u32, 0];
        assert_eq!(
            hipMemGetAccess(&mut flags, loc.as_ptr().cast(), b),
            hipSuccess
        );
        assert_eq!(flags, 3);
        // Retain: the same handle; properties come back in the layout they were given.
        let mut again: hipMemGenericAllocationHandle_t = null_mut();
        assert_eq!(
            hipMemRetainAllocationHandle(&mut again, (b as usize + 100) as *mut c_void),
            hipSuccess
        );
        assert_eq!(again, h);
        assert_eq!(hipMemRelease(again), hipSuccess);
        let mut out = [0xffu8; 32];
        assert_eq!(
            hipMemGetAllocationPropertiesFromHandle(out.as_mut_ptr().cast(), h),
            hipSuccess
        );
        assert_eq!(out, prop);
        // Export and import: the imported handle maps the same bytes.
        let mut fd: c_int = -1;
        assert_eq!(
            hipMemExportToShareableHandle((&mut fd as *mut c_int).cast(), h, 1, 0),
            hipSuccess
        );
        assert!(fd >= 0);
        let mut imported: hipMemGenericAllocationHandle_t = null_mut();
        assert_eq!(
            hipMemImportFromShareableHandle(&mut imported, fd as usize as *mut c_void, 1),
            hipSuccess
        );
        libc::close(fd);
        let c = (va as usize + 2 * g) as *mut c_void;
        assert_eq!(hipMemMap(c, 2 * g, 0, imported, 0), hipSuccess);
        let read_only = [1u32, 0, 1];
        assert_eq!(
            hipMemSetAccess(c, 2 * g, read_only.as_ptr().cast(), 1),
            hipSuccess
        );
        assert_eq!(hipMemcpy(back.as_mut_ptr().cast(), c, 2 * g, 2), hipSuccess);
        assert_eq!(back, data);
        assert_eq!(
            hipMemGetAccess(&mut flags, loc.as_ptr().cast(), c),
            hipSuccess
        );
        assert_eq!(flags, 1);
        // Released while mapped: the handle is gone, the memory stays until unmapped.
        assert_eq!(hipMemRelease(imported), hipSuccess);
        assert_eq!(hipMemRelease(imported), hipErrorInvalidValue);
        assert_eq!(hipMemcpy(back.as_mut_ptr().cast(), c, 4, 2), hipSuccess);
        // The wrong orders.
        assert_eq!(hipMemAddressFree(va, 8 * g), hipErrorInvalidValue);
        assert_eq!(hipMemUnmap(a, g), hipErrorInvalidValue);
        assert_eq!(hipMemUnmap(a, 6 * g), hipSuccess, "three whole mappings");
        assert_eq!(
            hipMemcpy(back.as_mut_ptr().cast(), b, 4, 2),
            hipErrorInvalidValue
        );
        assert_eq!(hipMemAddressFree(va, 8 * g), hipSuccess);
        assert_eq!(hipMemAddressFree(va, 8 * g), hipErrorInvalidValue);
        assert_eq!(hipMemRelease(h), hipSuccess);
        assert_eq!(hipMemRelease(h), hipErrorInvalidValue);
        // 5.3's layout for a handle made from it.
        let prop = prop_5_3(0, 0);
        assert_eq!(hipMemCreate(&mut h, g, p(&prop), 0), hipSuccess);
        assert_eq!(
            hipMemGetAllocationPropertiesFromHandle(out.as_mut_ptr().cast(), h),
            hipSuccess
        );
        assert_eq!(out, prop);
        assert_eq!(
            hipMemExportToShareableHandle((&mut fd as *mut c_int).cast(), h, 1, 0),
            hipErrorInvalidValue,
            "not created for sharing"
        );
        assert_eq!(hipMemRelease(h), hipSuccess);
    }
}

/// IPC memory handles open the same bytes (in this process, as another would); the flags,
/// forged handles and non-device memory are refused with clr's codes. Event handles exist only
/// for interprocess events and are not opened by their own process.
#[test]
fn ipc_handles_through_the_c_api() {
    unsafe {
        let mut d: *mut c_void = null_mut();
        assert_eq!(hipMalloc(&mut d, 4096), hipSuccess);
        let mut handle: hipIpcHandle_t = std::mem::zeroed();
        assert_eq!(
            hipIpcGetMemHandle(&mut handle, (d as usize + 64) as *mut c_void),
            hipSuccess
        );
        let mut opened: *mut c_void = null_mut();
        assert_eq!(
            hipIpcOpenMemHandle(&mut opened, handle, 2),
            hipErrorInvalidValue
        );
        assert_eq!(hipIpcOpenMemHandle(&mut opened, handle, 0), hipSuccess);
        let value = [7u32, 8, 9];
        assert_eq!(hipMemcpy(opened, value.as_ptr().cast(), 12, 1), hipSuccess);
        let mut back = [0u32; 3];
        assert_eq!(
            hipMemcpy(
                back.as_mut_ptr().cast(),
                (d as usize + 64) as *const c_void,
                12,
                2
            ),
            hipSuccess
        );
        assert_eq!(back, value);
        assert_eq!(hipIpcCloseMemHandle(opened), hipSuccess);
        assert_eq!(hipIpcCloseMemHandle(opened), hipErrorInvalidHandle);
        let mut forged = handle;
        forged.reserved[0] = 0;
        assert_eq!(
            hipIpcOpenMemHandle(&mut opened, forged, 0),
            hipErrorInvalidValue
        );
        let mut stale = handle;
        stale.reserved[16] ^= 1; // the token
        assert_eq!(
            hipIpcOpenMemHandle(&mut opened, stale, 0),
            hipErrorInvalidDevicePointer
        );
        let host = [0u8; 64];
        assert_eq!(
            hipIpcGetMemHandle(&mut handle, host.as_ptr() as *mut c_void),
            hipErrorInvalidDevicePointer
        );
        assert_eq!(hipIpcGetMemHandle(null_mut(), d), hipErrorInvalidValue);
        assert_eq!(hipFree(d), hipSuccess);

        let mut plain: hipEvent_t = null_mut();
        assert_eq!(hipEventCreate(&mut plain), hipSuccess);
        assert_eq!(
            hipIpcGetEventHandle(&mut handle, plain),
            hipErrorInvalidConfiguration
        );
        let mut shared: hipEvent_t = null_mut();
        assert_eq!(hipEventCreateWithFlags(&mut shared, 0x4 | 0x2), hipSuccess);
        assert_eq!(hipIpcGetEventHandle(&mut handle, shared), hipSuccess);
        let mut again: hipEvent_t = null_mut();
        assert_eq!(
            hipIpcOpenEventHandle(&mut again, handle),
            hipErrorInvalidContext
        );
        assert_eq!(hipEventQuery(shared), hipSuccess, "never recorded");
        assert_eq!(hipEventRecord(shared, null_mut()), hipSuccess);
        assert_eq!(hipEventSynchronize(shared), hipSuccess);
        assert_eq!(hipEventQuery(shared), hipSuccess);
        let mut ms = 0f32;
        assert_eq!(
            hipEventElapsedTime(&mut ms, shared, shared),
            hipErrorInvalidHandle
        );
        for e in [plain, shared] {
            assert_eq!(hipEventDestroy(e), hipSuccess);
        }
    }
}
