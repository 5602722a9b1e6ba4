//! Arrays, pitched and 3D memory through the C ABI, in-process: the error cases (NULL, freed
//! and made-up handles, descriptors no array has, regions past an array or an allocation,
//! pitches too small, sizes that overflow), each refused with HIP's code before anything is
//! copied, and the records' contents. The data paths are exercised by
//! `tests/hip_programs/emu/arrays.hip` against the host.
// Test code: every unsafe call passes pointers and buffers the test itself owns.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use super::*;
use crate::memory::{hipFree, hipMalloc, hipMemcpy};

fn float_desc() -> hipChannelFormatDesc {
    hipCreateChannelDesc(32, 0, 0, 0, 2)
}

/// A W x H float array holding `0, 1, 2, ...`.
fn filled_array(w: usize, h: usize) -> *mut hipArray {
    let mut a = null_mut();
    let desc = float_desc();
    assert_eq!(
        unsafe { hipMallocArray(&mut a, &desc, w, h, 0) },
        hipSuccess
    );
    let data: Vec<f32> = (0..w * h.max(1)).map(|i| i as f32).collect();
    assert_eq!(
        unsafe { hipMemcpyHtoA(a, 0, data.as_ptr().cast(), data.len() * 4,) },
        hipSuccess
    );
    a
}

fn contents(a: *mut hipArray, floats: usize) -> Vec<f32> {
    let mut out = vec![-1.0f32; floats];
    assert_eq!(
        unsafe { hipMemcpyAtoH(out.as_mut_ptr().cast(), a, 0, floats * 4) },
        hipSuccess
    );
    out
}

#[test]
fn null_freed_and_made_up_array_handles_are_errors() {
    let a = filled_array(8, 4);
    let bogus = 0x1234_5678 as *mut hipArray;
    let mut host = [0u8; 64];
    let stack = host.as_mut_ptr().cast::<hipArray>();
    unsafe {
        for h in [null_mut(), bogus, stack] {
            assert_eq!(hipFreeArray(h), hipErrorInvalidValue, "{h:p}");
            assert_eq!(hipArrayDestroy(h), hipErrorInvalidValue);
            let mut desc = hipChannelFormatDesc::default();
            assert_eq!(hipGetChannelDesc(&mut desc, h), hipErrorInvalidValue);
            assert_eq!(
                hipArrayGetInfo(null_mut(), null_mut(), null_mut(), h),
                hipErrorInvalidValue
            );
            assert_eq!(
                hipMemcpyHtoA(h, 0, host.as_ptr().cast(), 4),
                hipErrorInvalidValue
            );
            assert_eq!(
                hipMemcpyAtoH(host.as_mut_ptr().cast(), h, 0, 4),
                hipErrorInvalidValue
            );
            // clr: hipErrorInvalidResourceHandle for the 2D array copies.
            assert_eq!(
                hipMemcpy2DToArray(h, 0, 0, host.as_ptr().cast(), 16, 16, 1, 1),
                hipErrorInvalidHandle
            );
            assert_eq!(
                hipMemcpy2DFromArray(host.as_mut_ptr().cast(), 16, h, 0, 0, 16, 1, 2),
                hipErrorInvalidHandle
            );
        }
        // The stack bytes were never written.
        assert!(host.iter().all(|&b| b == 0));
        assert_eq!(hipFreeArray(a), hipSuccess);
        // Freed: stale, and stays stale while more arrays come and go.
        assert_eq!(hipFreeArray(a), hipErrorInvalidValue);
        for _ in 0..16 {
            let b = filled_array(4, 0);
            assert_ne!(b, a, "a freed record is reused only after the quarantine");
            assert_eq!(hipFreeArray(b), hipSuccess);
        }
        assert_eq!(
            hipMemcpyHtoA(a, 0, host.as_ptr().cast(), 4),
            hipErrorInvalidValue
        );
        // Its record reads as zeros (a stale reader sees no dangling address).
        assert!((*a).data.is_null() && (*a).width == 0);
    }
}

#[test]
fn descriptors_no_array_has_are_refused() {
    let mut a = null_mut();
    let ok = float_desc();
    unsafe {
        assert_eq!(
            hipMallocArray(null_mut(), &ok, 4, 4, 0),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMallocArray(&mut a, null(), 4, 4, 0),
            hipErrorInvalidValue
        );
        let bad_descs = [
            hipCreateChannelDesc(32, 32, 32, 0, 2), // three channels
            hipCreateChannelDesc(8, 16, 0, 0, 1),   // mixed widths
            hipCreateChannelDesc(0, 32, 0, 0, 2),   // a gap first
            hipCreateChannelDesc(8, 0, 0, 0, 2),    // 8-bit float
            hipCreateChannelDesc(24, 0, 0, 0, 1),   // 24-bit
            hipCreateChannelDesc(32, 0, 0, 0, 3),   // hipChannelFormatKindNone
            hipCreateChannelDesc(0, 0, 0, 0, 1),    // no channel
        ];
        for d in bad_descs {
            assert_eq!(
                hipMallocArray(&mut a, &d, 4, 4, 0),
                hipErrorInvalidValue,
                "{d:?}"
            );
        }
        let e = |w, h, d| hipExtent {
            width: w,
            height: h,
            depth: d,
        };
        for (extent, flags) in [
            (e(0, 4, 0), 0),      // no width
            (e(4, 0, 3), 0),      // depth without height
            (e(4, 4, 0), 1),      // layered without layers
            (e(4, 5, 6), 4),      // cubemap not square
            (e(4, 4, 5), 4),      // cubemap of 5 faces
            (e(4, 4, 8), 5),      // layered cubemap, not 6k faces
            (e(4, 4, 2), 8),      // gather on 3D
            (e(4, 4, 0), 0x10),   // unknown flag
            (e(16_385, 1, 0), 0), // past the width limit
            (e(usize::MAX, usize::MAX, usize::MAX), 0),
        ] {
            assert_eq!(
                hipMalloc3DArray(&mut a, &ok, extent, flags),
                hipErrorInvalidValue,
                "{extent:?} {flags:#x}"
            );
        }
        let mut d3 = HIP_ARRAY3D_DESCRIPTOR {
            Width: 4,
            Height: 4,
            Depth: 0,
            Format: 0x20,
            NumChannels: 3,
            Flags: 0,
        };
        assert_eq!(hipArray3DCreate(&mut a, &d3), hipErrorInvalidValue);
        d3.NumChannels = 1;
        d3.Format = 0x21; // no such hipArray_Format
        assert_eq!(hipArray3DCreate(&mut a, &d3), hipErrorInvalidValue);
        assert_eq!(hipArray3DCreate(&mut a, null()), hipErrorInvalidValue);
        assert_eq!(hipArrayCreate(&mut a, null()), hipErrorInvalidValue);
        // Mip levels past 1 x 1, and a mipmapped array's levels past its last.
        let mut m = null_mut();
        assert_eq!(
            hipMallocMipmappedArray(&mut m, &ok, e(8, 8, 0), 5, 0),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMallocMipmappedArray(&mut m, &ok, e(8, 8, 0), 4, 0),
            hipSuccess
        );
        let mut level = null_mut();
        assert_eq!(
            hipGetMipmappedArrayLevel(&mut level, m, 4),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipGetMipmappedArrayLevel(null_mut(), m, 0),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipGetMipmappedArrayLevel(&mut level, 0x42 as *const hipMipmappedArray, 0),
            hipErrorInvalidValue
        );
        assert_eq!(hipGetMipmappedArrayLevel(&mut level, m, 3), hipSuccess);
        assert_eq!(((*level).width, (*level).height), (1, 1));
        let mut again = null_mut();
        assert_eq!(hipMipmappedArrayGetLevel(&mut again, m, 3), hipSuccess);
        assert_eq!(again, level, "one handle per level");
        assert_eq!(hipFreeMipmappedArray(m), hipSuccess);
        // The level's handle went with it.
        assert_eq!(hipFreeArray(level), hipErrorInvalidValue);
        assert_eq!(hipFreeMipmappedArray(m), hipErrorInvalidValue);
    }
}

#[test]
fn records_and_queries_describe_the_array() {
    let mut a = null_mut();
    let desc = hipCreateChannelDesc(16, 16, 16, 16, 0);
    unsafe {
        let extent = hipExtent {
            width: 5,
            height: 3,
            depth: 2,
        };
        assert_eq!(hipMalloc3DArray(&mut a, &desc, extent, 1 | 2), hipSuccess);
        let r = *a;
        assert_eq!((r.width, r.height, r.depth), (5, 3, 2));
        assert_eq!((r.Format, r.NumChannels), (0x09, 4));
        assert_eq!(r.desc, desc);
        assert_eq!(r.textureType, 0xF2, "hipTextureType2DLayered");
        assert!(!r.data.is_null() && !r.isDrv);
        let (mut d, mut e, mut f) = (hipChannelFormatDesc::default(), hipExtent::default(), 0);
        assert_eq!(hipArrayGetInfo(&mut d, &mut e, &mut f, a), hipSuccess);
        assert_eq!((d, e.width, e.height, e.depth, f), (desc, 5, 3, 2, 3));
        let mut d3 = HIP_ARRAY3D_DESCRIPTOR::default();
        assert_eq!(hipArray3DGetDescriptor(&mut d3, a), hipSuccess);
        assert_eq!(
            (
                d3.Width,
                d3.Height,
                d3.Depth,
                d3.Format,
                d3.NumChannels,
                d3.Flags
            ),
            (5, 3, 2, 0x09, 4, 3)
        );
        let mut d2 = HIP_ARRAY_DESCRIPTOR::default();
        assert_eq!(hipArrayGetDescriptor(&mut d2, a), hipErrorInvalidValue);
        // Its storage is no hipMalloc memory to free.
        assert_eq!(hipFree(r.data), hipErrorInvalidValue);
        assert_eq!(hipFreeArray(a), hipSuccess);
        let d2_in = HIP_ARRAY_DESCRIPTOR {
            Width: 7,
            Height: 0,
            Format: 0x01,
            NumChannels: 2,
        };
        assert_eq!(hipArrayCreate(&mut a, &d2_in), hipSuccess);
        assert_eq!(hipArrayGetDescriptor(&mut d2, a), hipSuccess);
        assert_eq!(
            (d2.Width, d2.Height, d2.Format, d2.NumChannels),
            (7, 0, 0x01, 2)
        );
        assert!((*a).isDrv && (*a).textureType == 0x01);
        assert_eq!(hipArrayDestroy(a), hipSuccess);
    }
}

#[test]
fn array_regions_are_checked_before_anything_is_copied() {
    let a = filled_array(8, 4);
    let before = contents(a, 32);
    let src = [7.0f32; 64];
    let s = src.as_ptr().cast::<c_void>();
    unsafe {
        // Rows 2..5 of a 4-row array: refused, and rows 2 and 3 were not written first.
        assert_eq!(
            hipMemcpy2DToArray(a, 0, 2, s, 32, 32, 3, 1),
            hipErrorInvalidValue
        );
        // Columns past the row; an offset past it; half a texel.
        assert_eq!(
            hipMemcpy2DToArray(a, 4, 0, s, 32, 32, 1, 1),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemcpy2DToArray(a, 32, 0, s, 32, 4, 1, 1),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemcpy2DToArray(a, 2, 0, s, 32, 4, 1, 1),
            hipErrorInvalidValue
        );
        // Source pitch: 0 is hipErrorInvalidPitchValue, below the width hipErrorInvalidValue
        // (clr's codes).
        assert_eq!(
            hipMemcpy2DToArray(a, 0, 0, s, 0, 32, 1, 1),
            hipErrorInvalidPitchValue
        );
        assert_eq!(
            hipMemcpy2DToArray(a, 0, 0, s, 16, 32, 2, 1),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemcpy2DToArray(a, 0, 0, null(), 32, 32, 1, 1),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemcpy2DToArray(a, 0, 0, s, 32, 32, 1, 99),
            hipErrorInvalidMemcpyDirection
        );
        // Offsets that overflow.
        assert_eq!(
            hipMemcpy2DToArray(a, usize::MAX - 3, 0, s, 32, 4, 1, 1),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemcpy2DToArray(a, 0, usize::MAX, s, 32, 4, 1, 1),
            hipErrorInvalidValue
        );
        assert_eq!(hipMemcpyHtoA(a, usize::MAX, s, 4), hipErrorInvalidValue);
        assert_eq!(hipMemcpyHtoA(a, 120, s, 12), hipErrorInvalidValue);
        assert_eq!(hipMemcpyToArray(a, 0, 4, s, 4, 1), hipErrorInvalidValue);
        assert_eq!(hipMemcpyToArray(a, 32, 0, s, 4, 1), hipErrorInvalidValue);
        assert_eq!(hipMemcpyToArray(a, 0, 3, s, 33, 1), hipErrorInvalidValue);
        // Zero extents copy nothing, whatever the source.
        assert_eq!(hipMemcpy2DToArray(a, 0, 0, null(), 32, 0, 4, 1), hipSuccess);
        assert_eq!(hipMemcpyHtoA(a, 0, null(), 0), hipSuccess);
        // A 3D copy past the array's depth, or with x in texels past the row.
        let mut p = hipMemcpy3DParms {
            srcArray: null_mut(),
            srcPos: hipPos::default(),
            srcPtr: hipPitchedPtr {
                ptr: s.cast_mut(),
                pitch: 32,
                xsize: 8,
                ysize: 4,
            },
            dstArray: a,
            dstPos: hipPos::default(),
            dstPtr: hipPitchedPtr {
                ptr: null_mut(),
                pitch: 0,
                xsize: 0,
                ysize: 0,
            },
            extent: hipExtent {
                width: 8,
                height: 4,
                depth: 2,
            },
            kind: 1,
        };
        assert_eq!(hipMemcpy3D(&p), hipErrorInvalidValue);
        p.extent.depth = 1;
        p.dstPos.x = 1;
        assert_eq!(hipMemcpy3D(&p), hipErrorInvalidValue);
        p.dstPos.x = usize::MAX / 2;
        assert_eq!(hipMemcpy3D(&p), hipErrorInvalidValue);
        p.dstPos.x = 0;
        p.extent.width = usize::MAX;
        assert_eq!(hipMemcpy3D(&p), hipErrorInvalidValue);
        p.extent.width = 8;
        // The source's slice (ysize rows) cannot hold the rows copied.
        p.srcPtr.ysize = 2;
        assert_eq!(hipMemcpy3D(&p), hipErrorInvalidValue);
        p.srcPtr.ysize = 4;
        // Both an array and a pointer; neither.
        p.srcArray = a;
        assert_eq!(hipMemcpy3D(&p), hipErrorInvalidValue);
        p.srcArray = null_mut();
        p.dstArray = null_mut();
        assert_eq!(hipMemcpy3D(&p), hipErrorInvalidValue);
        assert_eq!(hipMemcpy3D(null()), hipErrorInvalidValue);
        // Extent 0 with valid ends: nothing to do.
        p.dstArray = a;
        p.extent = hipExtent::default();
        assert_eq!(hipMemcpy3D(&p), hipSuccess);
        // Arrays of different texel sizes.
        let mut b = null_mut();
        let half = hipCreateChannelDesc(16, 0, 0, 0, 2);
        assert_eq!(hipMallocArray(&mut b, &half, 8, 4, 0), hipSuccess);
        p.srcPtr.ptr = null_mut();
        p.srcArray = b;
        p.extent = hipExtent {
            width: 2,
            height: 1,
            depth: 1,
        };
        assert_eq!(hipMemcpy3D(&p), hipErrorInvalidValue);
        assert_eq!(
            hipMemcpy2DArrayToArray(a, 0, 0, b, 0, 0, 4, 1, 3),
            hipErrorInvalidValue
        );
        assert_eq!(hipFreeArray(b), hipSuccess);
    }
    assert_eq!(contents(a, 32), before, "no refused copy wrote anything");
    // A good copy does, at the right place (row 1, texels 2..5).
    unsafe {
        assert_eq!(
            hipMemcpy2DToArray(a, 8, 1, src.as_ptr().cast(), 12, 12, 1, 1),
            hipSuccess
        );
    }
    let mut expect = before;
    expect[10..13].fill(7.0);
    assert_eq!(contents(a, 32), expect);
    assert_eq!(unsafe { hipFreeArray(a) }, hipSuccess);
}

#[test]
fn driver_copies_check_lod_memory_types_and_layout() {
    let a = filled_array(4, 4);
    let mut host = [0u8; 64];
    let zero = HIP_MEMCPY3D_v5 {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: 2, // hipMemoryTypeArray (HIP 5)
        srcHost: null(),
        srcDevice: null_mut(),
        srcArray: a,
        srcPitch: 0,
        srcHeight: 0,
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: 0, // hipMemoryTypeHost
        dstHost: host.as_mut_ptr().cast(),
        dstDevice: null_mut(),
        dstArray: null_mut(),
        dstPitch: 16,
        dstHeight: 4,
        WidthInBytes: 16,
        Height: 4,
        Depth: 1,
    };
    unsafe {
        let call = |c: HIP_MEMCPY3D_v5| hipDrvMemcpy3D((&c as *const HIP_MEMCPY3D_v5).cast());
        assert_eq!(call(zero), hipSuccess);
        let floats: Vec<f32> = host
            .chunks(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(floats, (0..16).map(|i| i as f32).collect::<Vec<_>>());
        assert_eq!(
            call(HIP_MEMCPY3D_v5 { srcLOD: 1, ..zero }),
            hipErrorInvalidValue
        );
        assert_eq!(
            call(HIP_MEMCPY3D_v5 { dstLOD: 2, ..zero }),
            hipErrorInvalidValue
        );
        assert_eq!(
            call(HIP_MEMCPY3D_v5 {
                srcMemoryType: 7,
                ..zero
            }),
            hipErrorInvalidValue
        );
        assert_eq!(
            call(HIP_MEMCPY3D_v5 {
                srcArray: null_mut(),
                ..zero
            }),
            hipErrorInvalidValue
        );
        // The host end's pitch below the width, and its rows below the height.
        assert_eq!(
            call(HIP_MEMCPY3D_v5 {
                dstPitch: 8,
                ..zero
            }),
            hipErrorInvalidValue
        );
        assert_eq!(
            call(HIP_MEMCPY3D_v5 {
                dstHeight: 3,
                ..zero
            }),
            hipErrorInvalidValue
        );
        // Past the array.
        assert_eq!(
            call(HIP_MEMCPY3D_v5 { srcY: 1, ..zero }),
            hipErrorInvalidValue
        );
        assert_eq!(
            call(HIP_MEMCPY3D_v5 { Depth: 2, ..zero }),
            hipErrorInvalidValue
        );
        assert_eq!(hipDrvMemcpy3D(null()), hipErrorInvalidValue);
        assert_eq!(hipMemcpyParam2D(null()), hipErrorInvalidValue);
        assert_eq!(hipFreeArray(a), hipSuccess);
    }
}

#[test]
fn pitched_memory_and_fills_are_bounded_by_their_allocation() {
    unsafe {
        let mut p = null_mut();
        let mut pitch = 0usize;
        assert_eq!(hipMallocPitch(&mut p, &mut pitch, 100, 3), hipSuccess);
        assert_eq!(pitch, 256);
        assert_eq!(
            hipMallocPitch(&mut p, null_mut(), 100, 3),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMallocPitch(&mut p, &mut pitch, usize::MAX - 10, 2),
            hipErrorOutOfMemory
        );
        let mut z = null_mut();
        let mut zp = 77usize;
        assert_eq!(hipMallocPitch(&mut z, &mut zp, 0, 3), hipSuccess);
        assert!(z.is_null());
        let mut v = hipPitchedPtr {
            ptr: null_mut(),
            pitch: 0,
            xsize: 0,
            ysize: 0,
        };
        let e = |w, h, d| hipExtent {
            width: w,
            height: h,
            depth: d,
        };
        assert_eq!(
            hipMalloc3D(&mut v, e(usize::MAX, usize::MAX, 2)),
            hipErrorOutOfMemory
        );
        assert_eq!(hipMalloc3D(null_mut(), e(4, 4, 4)), hipErrorInvalidValue);
        assert_eq!(hipMalloc3D(&mut v, e(40, 5, 3)), hipSuccess);
        assert_eq!((v.pitch, v.xsize, v.ysize), (256, 40, 5));
        // Fills: past the allocation, huge extents, host memory, pitch below the width.
        assert_eq!(hipMemset3D(v, 1, e(40, 5, 4)), hipErrorInvalidValue);
        assert_eq!(hipMemset3D(v, 1, e(usize::MAX, 5, 3)), hipErrorInvalidValue);
        assert_eq!(
            hipMemset3D(v, 1, e(40, usize::MAX, 3)),
            hipErrorInvalidValue
        );
        assert_eq!(
            hipMemset3D(v, 1, e(40, 5, usize::MAX)),
            hipErrorInvalidValue
        );
        let mut host = [0u8; 512];
        let on_host = hipPitchedPtr {
            ptr: host.as_mut_ptr().cast(),
            pitch: 64,
            xsize: 64,
            ysize: 2,
        };
        assert_eq!(hipMemset3D(on_host, 1, e(64, 2, 1)), hipErrorInvalidValue);
        assert!(host.iter().all(|&b| b == 0), "host memory was not filled");
        assert_eq!(hipMemset2D(p, 256, 1, 300, 2), hipErrorInvalidPitchValue);
        assert_eq!(hipMemset2D(p, 256, 1, 100, 4), hipErrorInvalidValue);
        // A pointer into the allocation's last row, one row too many.
        let last = v.ptr.cast::<u8>().add(3 * 5 * 256 - 256).cast();
        assert_eq!(hipMemset2D(last, 256, 1, 40, 2), hipErrorInvalidValue);
        // Zero extents fill nothing, whatever the pointer (clr: checked before the pointer).
        let wild = hipPitchedPtr {
            ptr: 0x10 as *mut c_void,
            ..v
        };
        assert_eq!(hipMemset3D(wild, 1, e(0, 0, 0)), hipSuccess);
        // A good fill of a sub-box, read back whole.
        let mut sub = v;
        sub.ptr = v.ptr.cast::<u8>().add(256 * 5 + 256 + 4).cast();
        assert_eq!(hipMemset3D(v, 0, e(40, 5, 3)), hipSuccess);
        assert_eq!(hipMemset3D(sub, 9, e(8, 2, 2)), hipSuccess);
        let mut back = vec![0xffu8; 256 * 5 * 3];
        assert_eq!(
            hipMemcpy(back.as_mut_ptr().cast(), v.ptr, back.len(), 2),
            hipSuccess
        );
        for (i, &b) in back.iter().enumerate() {
            let (z, y, x) = (i / (256 * 5), i / 256 % 5, i % 256);
            let inside = (1..3).contains(&z) && (1..3).contains(&y) && (4..12).contains(&x);
            let want = if inside {
                9
            } else if x < 40 {
                0
            } else {
                b
            };
            assert_eq!(b, want, "byte {i}");
        }
        // Pitched copies past the device allocation fail before copying.
        let src = vec![5u8; 4096];
        assert_eq!(
            crate::memory::hipMemcpy2D(last, 256, src.as_ptr().cast(), 40, 40, 2, 1),
            hipErrorInvalidValue
        );
        assert_eq!(
            crate::memory::hipMemcpy2D(p, 100, src.as_ptr().cast(), 200, 200, 2, 1),
            hipErrorInvalidPitchValue
        );
        assert_eq!(hipFree(p), hipSuccess);
        assert_eq!(hipFree(v.ptr), hipSuccess);
    }
}

#[test]
fn records_are_reused_only_after_the_quarantine_and_memory_returns() {
    let mut d = null_mut::<c_void>();
    unsafe { assert_eq!(hipMalloc(&mut d, 16), hipSuccess) };
    let before = test_support::record_slots();
    let mut first = Vec::new();
    for i in 0..(QUARANTINE + 300) {
        let a = filled_array(4, 0);
        if i < 8 {
            first.push(a);
        }
        assert_eq!(unsafe { hipFreeArray(a) }, hipSuccess);
    }
    // Other tests make arrays in parallel: allow them some slots.
    let grown = test_support::record_slots() - before;
    assert!(
        grown <= QUARANTINE + 64,
        "{grown} records for a loop that held one array at a time"
    );
    for a in first {
        assert_eq!(unsafe { hipFreeArray(a) }, hipErrorInvalidValue);
    }
    unsafe { assert_eq!(hipFree(d), hipSuccess) };
}

/// The C structs have the layouts of Debian's HIP 5.2.3 headers, field by field, as clang
/// compiles them.
#[test]
fn struct_layouts_match_the_hip_5_headers() {
    use std::mem::{offset_of, size_of};
    let clang = std::path::Path::new("/usr/lib/llvm-19/bin/clang++");
    if !clang.exists() || !std::path::Path::new("/usr/include/hip/hip_runtime_api.h").exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "clang-19 or the HIP headers are missing but CI is set"
        );
        eprintln!("skipped: clang-19 or /usr/include/hip missing (scripts/setup.sh)");
        return;
    }
    let probe = r#"
#include <hip/hip_runtime_api.h>
#include <cstdio>
#include <cstddef>
#define S(t) printf(#t ".size %zu\n", sizeof(t));
#define O(t, f) printf(#t "." #f " %zu\n", offsetof(t, f));
int main() {
  S(hipArray) O(hipArray, desc) O(hipArray, type) O(hipArray, Format) O(hipArray, NumChannels)
  O(hipArray, isDrv) O(hipArray, textureType)
  S(hipMipmappedArray) O(hipMipmappedArray, max_mipmap_level) O(hipMipmappedArray, format)
  S(HIP_ARRAY_DESCRIPTOR) O(HIP_ARRAY_DESCRIPTOR, NumChannels)
  S(HIP_ARRAY3D_DESCRIPTOR) O(HIP_ARRAY3D_DESCRIPTOR, Flags)
  S(hipMemcpy3DParms) O(hipMemcpy3DParms, dstArray) O(hipMemcpy3DParms, extent) O(hipMemcpy3DParms, kind)
  S(hip_Memcpy2D) O(hip_Memcpy2D, srcHost) O(hip_Memcpy2D, dstXInBytes) O(hip_Memcpy2D, WidthInBytes)
  S(HIP_MEMCPY3D) O(HIP_MEMCPY3D, srcMemoryType) O(HIP_MEMCPY3D, srcHost) O(HIP_MEMCPY3D, srcHeight)
  O(HIP_MEMCPY3D, dstMemoryType) O(HIP_MEMCPY3D, dstHost) O(HIP_MEMCPY3D, Depth)
  S(hipPitchedPtr) S(hipExtent) S(hipChannelFormatDesc)
}
"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("probe.cpp"), probe).unwrap();
    let status = std::process::Command::new(clang)
        .args(["-D__HIP_PLATFORM_AMD__", "probe.cpp", "-o", "probe"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let output = std::process::Command::new(dir.path().join("probe"))
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let c: std::collections::HashMap<&str, usize> = text
        .lines()
        .map(|l| l.split_once(' ').unwrap())
        .map(|(k, v)| (k, v.parse().unwrap()))
        .collect();
    let rust: &[(&str, usize)] = &[
        ("hipArray.size", size_of::<hipArray>()),
        ("hipArray.desc", offset_of!(hipArray, desc)),
        ("hipArray.type", offset_of!(hipArray, type_)),
        ("hipArray.Format", offset_of!(hipArray, Format)),
        ("hipArray.NumChannels", offset_of!(hipArray, NumChannels)),
        ("hipArray.isDrv", offset_of!(hipArray, isDrv)),
        ("hipArray.textureType", offset_of!(hipArray, textureType)),
        ("hipMipmappedArray.size", size_of::<hipMipmappedArray>()),
        (
            "hipMipmappedArray.max_mipmap_level",
            offset_of!(hipMipmappedArray, max_mipmap_level),
        ),
        (
            "hipMipmappedArray.format",
            offset_of!(hipMipmappedArray, format),
        ),
        (
            "HIP_ARRAY_DESCRIPTOR.size",
            size_of::<HIP_ARRAY_DESCRIPTOR>(),
        ),
        (
            "HIP_ARRAY_DESCRIPTOR.NumChannels",
            offset_of!(HIP_ARRAY_DESCRIPTOR, NumChannels),
        ),
        (
            "HIP_ARRAY3D_DESCRIPTOR.size",
            size_of::<HIP_ARRAY3D_DESCRIPTOR>(),
        ),
        (
            "HIP_ARRAY3D_DESCRIPTOR.Flags",
            offset_of!(HIP_ARRAY3D_DESCRIPTOR, Flags),
        ),
        ("hipMemcpy3DParms.size", size_of::<hipMemcpy3DParms>()),
        (
            "hipMemcpy3DParms.dstArray",
            offset_of!(hipMemcpy3DParms, dstArray),
        ),
        (
            "hipMemcpy3DParms.extent",
            offset_of!(hipMemcpy3DParms, extent),
        ),
        ("hipMemcpy3DParms.kind", offset_of!(hipMemcpy3DParms, kind)),
        ("hip_Memcpy2D.size", size_of::<hip_Memcpy2D>()),
        ("hip_Memcpy2D.srcHost", offset_of!(hip_Memcpy2D, srcHost)),
        (
            "hip_Memcpy2D.dstXInBytes",
            offset_of!(hip_Memcpy2D, dstXInBytes),
        ),
        (
            "hip_Memcpy2D.WidthInBytes",
            offset_of!(hip_Memcpy2D, WidthInBytes),
        ),
        ("HIP_MEMCPY3D.size", size_of::<HIP_MEMCPY3D_v5>()),
        (
            "HIP_MEMCPY3D.srcMemoryType",
            offset_of!(HIP_MEMCPY3D_v5, srcMemoryType),
        ),
        ("HIP_MEMCPY3D.srcHost", offset_of!(HIP_MEMCPY3D_v5, srcHost)),
        (
            "HIP_MEMCPY3D.srcHeight",
            offset_of!(HIP_MEMCPY3D_v5, srcHeight),
        ),
        (
            "HIP_MEMCPY3D.dstMemoryType",
            offset_of!(HIP_MEMCPY3D_v5, dstMemoryType),
        ),
        ("HIP_MEMCPY3D.dstHost", offset_of!(HIP_MEMCPY3D_v5, dstHost)),
        ("HIP_MEMCPY3D.Depth", offset_of!(HIP_MEMCPY3D_v5, Depth)),
        ("hipPitchedPtr.size", size_of::<hipPitchedPtr>()),
        ("hipExtent.size", size_of::<hipExtent>()),
        (
            "hipChannelFormatDesc.size",
            size_of::<hipChannelFormatDesc>(),
        ),
    ];
    for (key, value) in rust {
        assert_eq!(Some(value), c.get(key), "{key}");
    }
}
