//! The stream-ordered allocation entry points called in-process: attributes and their errors,
//! high-water marks, trimming, the release threshold at synchronisation, bad handles and NULL
//! pointers, what cannot be shared, and many threads allocating and freeing on their own
//! streams with every byte checked.
//!
//! Every test makes its own pool (tests run in parallel in one process, on the process-wide
//! runtime), except the one that changes device 0's current pool.
// Test code: every unsafe call passes pointers and buffers the test itself owns.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use super::*;
use crate::device::hipDeviceGetAttribute;
use crate::memory::{hipFree, hipMalloc, hipMemcpy, hipMemsetAsync};
use crate::stream::{
    hipEventCreate, hipEventDestroy, hipEventRecord, hipStreamCreate, hipStreamDestroy,
    hipStreamSynchronize, hipStreamWaitEvent,
};

const ATTR_FOLLOW: c_int = 1;
const ATTR_OPPORTUNISTIC: c_int = 2;
const ATTR_INTERNAL: c_int = 3;
const ATTR_THRESHOLD: c_int = 4;
const ATTR_RESERVED: c_int = 5;
const ATTR_RESERVED_HIGH: c_int = 6;
const ATTR_USED: c_int = 7;
const ATTR_USED_HIGH: c_int = 8;

fn props(device: c_int) -> hipMemPoolProps {
    hipMemPoolProps {
        allocType: ALLOCATION_PINNED,
        handleTypes: 0,
        location: hipMemLocation {
            type_: LOCATION_DEVICE,
            id: device,
        },
        win32SecurityAttributes: null_mut(),
        reserved: [0; 64],
    }
}

fn new_pool() -> hipMemPool_t {
    let mut pool = null_mut();
    assert_eq!(
        unsafe { hipMemPoolCreate(&mut pool, &props(0)) },
        hipSuccess
    );
    pool
}

fn new_stream() -> hipStream_t {
    let mut s = null_mut();
    assert_eq!(unsafe { hipStreamCreate(&mut s) }, hipSuccess);
    s
}

fn get(pool: hipMemPool_t, attr: c_int) -> u64 {
    let mut v = 0u64;
    assert_eq!(
        unsafe { hipMemPoolGetAttribute(pool, attr, (&raw mut v).cast()) },
        hipSuccess
    );
    v
}

fn get_int(pool: hipMemPool_t, attr: c_int) -> c_int {
    let mut v: c_int = -1;
    assert_eq!(
        unsafe { hipMemPoolGetAttribute(pool, attr, (&raw mut v).cast()) },
        hipSuccess
    );
    v
}

fn set(pool: hipMemPool_t, attr: c_int, mut v: u64) -> hipError_t {
    unsafe { hipMemPoolSetAttribute(pool, attr, (&raw mut v).cast()) }
}

fn alloc(pool: hipMemPool_t, size: usize, stream: hipStream_t) -> *mut c_void {
    let mut p = null_mut();
    assert_eq!(
        unsafe { hipMallocFromPoolAsync(&mut p, size, pool, stream) },
        hipSuccess
    );
    assert!(!p.is_null());
    p
}

#[test]
fn attributes_have_hips_defaults_types_and_errors() {
    let pool = new_pool();
    for attr in [ATTR_FOLLOW, ATTR_OPPORTUNISTIC, ATTR_INTERNAL] {
        assert_eq!(
            get_int(pool, attr),
            1,
            "reuse policy {attr} is on by default"
        );
        let mut off: c_int = 0;
        assert_eq!(
            unsafe { hipMemPoolSetAttribute(pool, attr, (&raw mut off).cast()) },
            hipSuccess
        );
        assert_eq!(get_int(pool, attr), 0);
        // An int: the bytes after it are not read or written.
        let mut wide = [7 as c_int, 0x5555];
        assert_eq!(
            unsafe { hipMemPoolGetAttribute(pool, attr, wide.as_mut_ptr().cast()) },
            hipSuccess
        );
        assert_eq!(wide, [0, 0x5555]);
    }
    assert_eq!(get(pool, ATTR_THRESHOLD), 0);
    assert_eq!(set(pool, ATTR_THRESHOLD, u64::MAX), hipSuccess);
    assert_eq!(get(pool, ATTR_THRESHOLD), u64::MAX);
    for attr in [ATTR_RESERVED, ATTR_USED] {
        assert_eq!(
            set(pool, attr, 0),
            hipErrorInvalidValue,
            "{attr} is read-only"
        );
    }
    for attr in [ATTR_RESERVED_HIGH, ATTR_USED_HIGH] {
        assert_eq!(
            set(pool, attr, 1),
            hipErrorInvalidValue,
            "{attr} resets to 0 only"
        );
        assert_eq!(set(pool, attr, 0), hipSuccess);
    }
    for attr in [0, 9, -1, 0x7fff_ffff] {
        assert_eq!(set(pool, attr, 0), hipErrorInvalidValue);
        let mut v = 0u64;
        assert_eq!(
            unsafe { hipMemPoolGetAttribute(pool, attr, (&raw mut v).cast()) },
            hipErrorInvalidValue
        );
    }
    unsafe {
        assert_eq!(
            hipMemPoolGetAttribute(pool, ATTR_USED, null_mut()),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemPoolSetAttribute(pool, ATTR_THRESHOLD, null_mut()),
            hipErrorInvalidValue
        );
        assert_eq!(hipMemPoolDestroy(pool), hipSuccess);
    }
}

/// Used and reserved memory, their high-water marks and their reset to the current value,
/// the release threshold at a stream synchronisation, and trimming.
#[test]
fn watermarks_threshold_and_trim() {
    let pool = new_pool();
    let s = new_stream();
    let sizes = [1000usize, 5000, 70_000];
    let rounded: Vec<u64> = sizes
        .iter()
        .map(|&n| (n as u64).next_multiple_of(256))
        .collect();
    let total: u64 = rounded.iter().sum();
    // Every synchronisation point of the process (other tests run in parallel) trims pools to
    // their threshold: keep everything until this test says otherwise.
    assert_eq!(set(pool, ATTR_THRESHOLD, u64::MAX), hipSuccess);
    let ptrs: Vec<_> = sizes.iter().map(|&n| alloc(pool, n, s)).collect();
    assert_eq!(get(pool, ATTR_USED), total);
    assert_eq!(get(pool, ATTR_RESERVED), total);
    assert_eq!(get(pool, ATTR_USED_HIGH), total);
    assert_eq!(get(pool, ATTR_RESERVED_HIGH), total);
    unsafe {
        assert_eq!(hipFreeAsync(ptrs[2], s), hipSuccess);
    }
    assert_eq!(get(pool, ATTR_USED), total - rounded[2]);
    assert_eq!(get(pool, ATTR_USED_HIGH), total, "the mark stays");
    assert_eq!(set(pool, ATTR_USED_HIGH, 0), hipSuccess);
    assert_eq!(
        get(pool, ATTR_USED_HIGH),
        total - rounded[2],
        "reset to current"
    );
    // Freed memory is kept up to the threshold at a synchronisation.
    unsafe {
        assert_eq!(hipFreeAsync(ptrs[0], s), hipSuccess);
        assert_eq!(hipFreeAsync(ptrs[1], s), hipSuccess);
        assert_eq!(hipStreamSynchronize(s), hipSuccess);
    }
    assert_eq!(get(pool, ATTR_USED), 0);
    assert_eq!(get(pool, ATTR_RESERVED), total);
    // Trimming keeps at least what is asked (here: the smallest blocks go first).
    unsafe {
        assert_eq!(hipMemPoolTrimTo(pool, rounded[2] as usize), hipSuccess);
    }
    assert_eq!(get(pool, ATTR_RESERVED), rounded[2]);
    assert_eq!(get(pool, ATTR_RESERVED_HIGH), total);
    assert_eq!(set(pool, ATTR_RESERVED_HIGH, 0), hipSuccess);
    assert_eq!(get(pool, ATTR_RESERVED_HIGH), rounded[2]);
    // Threshold 0: the next synchronisation gives the rest back.
    assert_eq!(set(pool, ATTR_THRESHOLD, 0), hipSuccess);
    unsafe {
        assert_eq!(hipStreamSynchronize(s), hipSuccess);
    }
    assert_eq!(get(pool, ATTR_RESERVED), 0);
    unsafe {
        assert_eq!(hipMemPoolDestroy(pool), hipSuccess);
        assert_eq!(hipStreamDestroy(s), hipSuccess);
    }
}

/// A stream reuses what it freed; another stream reuses it after waiting for an event recorded
/// after the free, and not before when only event dependencies are allowed.
#[test]
fn reuse_follows_streams_and_events() {
    let pool = new_pool();
    let (a, b) = (new_stream(), new_stream());
    for attr in [ATTR_OPPORTUNISTIC, ATTR_INTERNAL] {
        assert_eq!(set(pool, attr, 0), hipSuccess);
    }
    // Kept through other tests' synchronisations.
    assert_eq!(set(pool, ATTR_THRESHOLD, u64::MAX), hipSuccess);
    let p = alloc(pool, 4096, a);
    unsafe { assert_eq!(hipFreeAsync(p, a), hipSuccess) };
    let q = alloc(pool, 4000, a);
    assert_eq!(p, q, "the freeing stream reuses at once");
    unsafe { assert_eq!(hipFreeAsync(q, a), hipSuccess) };
    let r = alloc(pool, 4096, b);
    assert_ne!(r, p, "b does not follow a's free");
    let mut e = null_mut();
    unsafe {
        assert_eq!(hipEventCreate(&mut e), hipSuccess);
        assert_eq!(hipEventRecord(e, a), hipSuccess);
        assert_eq!(hipStreamWaitEvent(b, e, 0), hipSuccess);
    }
    assert_eq!(alloc(pool, 4096, b), p, "b now follows a's free");
    assert_eq!(get(pool, ATTR_RESERVED), 2 * 4096);
    unsafe {
        assert_eq!(hipStreamSynchronize(a), hipSuccess);
        assert_eq!(hipStreamSynchronize(b), hipSuccess);
        assert_eq!(hipFree(p), hipSuccess, "hipFree of pool memory");
        assert_eq!(hipFreeAsync(p, b), hipErrorInvalidValue, "already freed");
        assert_eq!(hipFree(p), hipErrorInvalidValue, "already freed");
        assert_eq!(hipFreeAsync(r, b), hipSuccess);
        assert_eq!(hipEventDestroy(e), hipSuccess);
        assert_eq!(hipMemPoolDestroy(pool), hipSuccess);
        assert_eq!(hipStreamDestroy(a), hipSuccess);
        assert_eq!(hipStreamDestroy(b), hipSuccess);
    }
}

#[test]
fn bad_handles_null_pointers_and_bad_arguments_are_errors() {
    let pool = new_pool();
    let s = new_stream();
    let inv = hipErrorInvalidValue;
    let mut p = null_mut();
    let mut handle: hipMemPool_t = null_mut();
    let mut v = 0u64;
    let bogus = [
        null_mut(),
        0x1234 as hipMemPool_t,
        s as hipMemPool_t,                         // a stream handle is no pool
        (pool as u64 ^ (1 << 55)) as hipMemPool_t, // another generation
    ];
    unsafe {
        for b in bogus {
            assert_eq!(hipMallocFromPoolAsync(&mut p, 64, b, s), inv);
            assert_eq!(hipMemPoolTrimTo(b, 0), inv);
            assert_eq!(hipMemPoolDestroy(b), inv);
            assert_eq!(
                hipMemPoolGetAttribute(b, ATTR_USED, (&raw mut v).cast()),
                inv
            );
            assert_eq!(
                hipMemPoolSetAttribute(b, ATTR_THRESHOLD, (&raw mut v).cast()),
                inv
            );
            assert_eq!(hipDeviceSetMemPool(0, b), inv);
        }
        // NULL pointers, zero sizes, bad streams and devices.
        assert_eq!(hipMallocAsync(null_mut(), 64, s), inv);
        assert_eq!(hipMallocAsync(&mut p, 0, s), inv);
        assert_eq!(hipMallocAsync(&mut p, 64, 0xdead as hipStream_t), inv);
        assert_eq!(hipMallocFromPoolAsync(null_mut(), 64, pool, s), inv);
        assert_eq!(hipMallocFromPoolAsync(&mut p, 0, pool, s), inv);
        assert_eq!(
            hipMallocFromPoolAsync(&mut p, 64, pool, 0xdead as hipStream_t),
            inv
        );
        assert_eq!(
            hipMallocFromPoolAsync(&mut p, usize::MAX, pool, s),
            hipErrorOutOfMemory
        );
        assert_eq!(hipFreeAsync(null_mut(), s), inv);
        assert_eq!(hipFreeAsync(0x1000 as *mut c_void, s), inv, "not memory");
        let q = alloc(pool, 64, s);
        assert_eq!(hipFreeAsync(q, 0xdead as hipStream_t), inv);
        assert_eq!(
            hipFreeAsync(q.cast::<u8>().add(8).cast(), s),
            inv,
            "interior"
        );
        assert_eq!(hipFreeAsync(q, s), hipSuccess);
        assert_eq!(hipFreeAsync(q, s), inv, "double free");
        assert_eq!(hipDeviceGetDefaultMemPool(null_mut(), 0), inv);
        assert_eq!(hipDeviceGetDefaultMemPool(&mut handle, 99), inv);
        assert_eq!(hipDeviceGetDefaultMemPool(&mut handle, -1), inv);
        assert_eq!(hipDeviceGetMemPool(null_mut(), 0), inv);
        assert_eq!(hipDeviceGetMemPool(&mut handle, 99), inv);
        assert_eq!(hipDeviceSetMemPool(99, pool), inv);
        // A default pool lives as long as its device.
        assert_eq!(hipDeviceGetDefaultMemPool(&mut handle, 0), hipSuccess);
        assert_eq!(hipMemPoolDestroy(handle), inv);
        // Pool properties.
        assert_eq!(hipMemPoolCreate(null_mut(), &props(0)), inv);
        assert_eq!(hipMemPoolCreate(&mut handle, null()), inv);
        let bad = |f: &dyn Fn(&mut hipMemPoolProps)| {
            let mut pr = props(0);
            f(&mut pr);
            let mut h = null_mut();
            hipMemPoolCreate(&mut h, &pr)
        };
        assert_eq!(bad(&|p| p.allocType = 0), inv);
        assert_eq!(bad(&|p| p.location.type_ = 0), inv);
        assert_eq!(bad(&|p| p.location.id = 99), inv);
        assert_eq!(bad(&|p| p.location.id = -1), inv);
        assert_eq!(bad(&|p| p.handleTypes = 0x10), inv);
        assert_eq!(
            bad(&|p| p.handleTypes = HANDLE_POSIX_FD),
            hipErrorNotSupported
        );
        assert_eq!(bad(&|p| p.handleTypes = 0x2), hipErrorNotSupported);
        // A destroyed pool's handle is stale.
        let gone = new_pool();
        assert_eq!(hipMemPoolDestroy(gone), hipSuccess);
        assert_eq!(hipMemPoolDestroy(gone), inv);
        assert_eq!(hipMallocFromPoolAsync(&mut p, 64, gone, s), inv);
        assert_eq!(hipMemPoolDestroy(pool), hipSuccess);
        assert_eq!(hipStreamDestroy(s), hipSuccess);
    }
}

#[test]
fn access_is_checked_and_sharing_is_refused_with_reasons() {
    let pool = new_pool();
    let s = new_stream();
    let own = hipMemLocation {
        type_: LOCATION_DEVICE,
        id: 0,
    };
    let desc = |id: c_int, flags: c_int| hipMemAccessDesc {
        location: hipMemLocation {
            type_: LOCATION_DEVICE,
            id,
        },
        flags,
    };
    let mut flags: c_int = -1;
    unsafe {
        let mut loc = own;
        assert_eq!(hipMemPoolGetAccess(&mut flags, pool, &mut loc), hipSuccess);
        assert_eq!(flags, 3, "the pool's device reads and writes it");
        assert_eq!(hipMemPoolSetAccess(pool, &desc(0, 3), 1), hipSuccess);
        assert_eq!(
            hipMemPoolSetAccess(pool, &desc(0, 0), 1),
            hipErrorInvalidDevice
        );
        assert_eq!(
            hipMemPoolSetAccess(pool, &desc(0, 1), 1),
            hipErrorInvalidDevice
        );
        assert_eq!(
            hipMemPoolSetAccess(pool, &desc(0, 2), 1),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemPoolSetAccess(pool, &desc(99, 3), 1),
            hipErrorInvalidDevice
        );
        let mut other = desc(0, 3);
        other.location.type_ = 0;
        assert_eq!(hipMemPoolSetAccess(pool, &other, 1), hipErrorInvalidValue);
        assert_eq!(hipMemPoolSetAccess(pool, null(), 1), hipErrorInvalidValue);
        assert_eq!(
            hipMemPoolSetAccess(pool, &desc(0, 3), 100),
            hipErrorInvalidDevice
        );
        assert_eq!(
            hipMemPoolGetAccess(null_mut(), pool, &mut loc),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemPoolGetAccess(&mut flags, pool, null_mut()),
            hipErrorInvalidValue
        );
        loc.id = 99;
        assert_eq!(
            hipMemPoolGetAccess(&mut flags, pool, &mut loc),
            hipErrorInvalidValue
        );
        // Sharing between processes: never a success.
        let mut fd: c_int = -1;
        assert_eq!(
            hipMemPoolExportToShareableHandle((&raw mut fd).cast(), pool, HANDLE_POSIX_FD, 0),
            hipErrorInvalidValue
        );
        assert!(
            last_message().contains("private to this process"),
            "{}",
            last_message()
        );
        assert_eq!(fd, -1);
        assert_eq!(
            hipMemPoolExportToShareableHandle((&raw mut fd).cast(), pool, HANDLE_POSIX_FD, 1),
            hipErrorInvalidValue
        );
        let mut imported = null_mut();
        assert_eq!(
            hipMemPoolImportFromShareableHandle(
                &mut imported,
                3 as *mut c_void,
                HANDLE_POSIX_FD,
                0
            ),
            hipErrorNotSupported
        );
        assert!(
            last_message().contains("private to this process"),
            "{}",
            last_message()
        );
        assert!(imported.is_null());
        assert_eq!(
            hipMemPoolImportFromShareableHandle(&mut imported, 3 as *mut c_void, 0, 0),
            hipErrorInvalidValue
        );
        let p = alloc(pool, 128, s);
        let mut data = hipMemPoolPtrExportData { reserved: [0; 64] };
        assert_eq!(hipMemPoolExportPointer(&mut data, p), hipErrorInvalidValue);
        assert_eq!(hipMemPoolExportPointer(null_mut(), p), hipErrorInvalidValue);
        let mut q = null_mut();
        assert_eq!(
            hipMemPoolImportPointer(&mut q, pool, &mut data),
            hipErrorInvalidValue
        );
        assert!(q.is_null());
        assert_eq!(hipFreeAsync(p, s), hipSuccess);
        assert_eq!(hipMemPoolDestroy(pool), hipSuccess);
        assert_eq!(hipStreamDestroy(s), hipSuccess);
    }
}

fn last_message() -> String {
    let mut buf = vec![0 as std::ffi::c_char; 4096];
    unsafe { crate::rocload_api::rocload_last_error_message(buf.as_mut_ptr(), buf.len()) };
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// `hipMallocAsync` takes the current pool; a default pool keeps its handle; a destroyed
/// current pool leaves the default current; pools are reported supported.
#[test]
fn the_current_pool_and_the_default_pool() {
    let mut default = null_mut();
    let mut again = null_mut();
    let mut current = null_mut();
    let mut supported = 0;
    unsafe {
        assert_eq!(hipDeviceGetAttribute(&mut supported, 88, 0), hipSuccess);
        assert_eq!(supported, 1, "hipDeviceAttributeMemoryPoolsSupported");
        assert_eq!(hipDeviceGetDefaultMemPool(&mut default, 0), hipSuccess);
        assert_eq!(hipDeviceGetDefaultMemPool(&mut again, 0), hipSuccess);
        assert_eq!(default, again);
        assert_eq!(hipDeviceGetMemPool(&mut current, 0), hipSuccess);
        assert_eq!(current, default);
        let pool = new_pool();
        assert_eq!(hipDeviceSetMemPool(0, pool), hipSuccess);
        assert_eq!(hipDeviceGetMemPool(&mut current, 0), hipSuccess);
        assert_eq!(current, pool);
        let mut p = null_mut();
        assert_eq!(hipMallocAsync(&mut p, 3000, null_mut()), hipSuccess);
        assert_eq!(get(pool, ATTR_USED), 3072, "from the current pool");
        // Destroyed with an allocation in use: the allocation stays valid.
        assert_eq!(hipMemPoolDestroy(pool), hipSuccess);
        assert_eq!(hipDeviceGetMemPool(&mut current, 0), hipSuccess);
        assert_eq!(current, default);
        let host = vec![0x5au8; 3000];
        let mut back = vec![0u8; 3000];
        assert_eq!(hipMemcpy(p, host.as_ptr().cast(), 3000, 1), hipSuccess);
        assert_eq!(hipMemcpy(back.as_mut_ptr().cast(), p, 3000, 2), hipSuccess);
        assert_eq!(back, host);
        assert_eq!(hipFreeAsync(p, null_mut()), hipSuccess);
        // hipFreeAsync of hipMalloc memory frees it as hipFree does.
        assert_eq!(hipMalloc(&mut p, 100), hipSuccess);
        assert_eq!(hipFreeAsync(p, null_mut()), hipSuccess);
        assert_eq!(hipFree(p), hipErrorInvalidValue);
    }
}

/// Eight threads, each with its own stream (two on the null stream), allocate from one pool,
/// fill their blocks with their own byte, read them back and free them, 200 times: every byte
/// is the thread's, and the pool ends with nothing in use.
#[test]
fn many_threads_allocate_and_free_on_their_streams() {
    let pool = new_pool() as usize;
    let threads: Vec<_> = (0..8u8)
        .map(|t| {
            std::thread::spawn(move || {
                let pool = pool as hipMemPool_t;
                let s = if t < 2 { null_mut() } else { new_stream() };
                let mut held: Vec<(*mut c_void, usize, u8)> = Vec::new();
                for i in 0..200usize {
                    let size = 64 + (i * 97 + usize::from(t) * 13) % 8192;
                    let p = alloc(pool, size, s);
                    let byte = t.wrapping_mul(31).wrapping_add(i as u8) | 1;
                    unsafe {
                        assert_eq!(hipMemsetAsync(p, c_int::from(byte), size, s), hipSuccess);
                    }
                    held.push((p, size, byte));
                    if held.len() > 3 || i == 199 {
                        for (p, size, byte) in held.drain(..) {
                            let mut back = vec![0u8; size];
                            unsafe {
                                assert_eq!(hipStreamSynchronize(s), hipSuccess);
                                assert_eq!(
                                    hipMemcpy(back.as_mut_ptr().cast(), p, size, 2),
                                    hipSuccess
                                );
                            }
                            assert!(
                                back.iter().all(|&b| b == byte),
                                "thread {t}: block {p:p} was written by someone else"
                            );
                            unsafe { assert_eq!(hipFreeAsync(p, s), hipSuccess) };
                        }
                    }
                }
                unsafe { assert_eq!(hipStreamSynchronize(s), hipSuccess) };
                if !s.is_null() {
                    unsafe { assert_eq!(hipStreamDestroy(s), hipSuccess) };
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a thread failed");
    }
    let pool = pool as hipMemPool_t;
    assert_eq!(get(pool, ATTR_USED), 0);
    assert!(get(pool, ATTR_USED_HIGH) > 0);
    unsafe { assert_eq!(hipMemPoolDestroy(pool), hipSuccess) };
}
