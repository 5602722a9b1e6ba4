//! One zstd frame decoded through libzstd's streaming API (`ZSTD_decompressStream`), with the
//! decoder's own buffers allocated by us so that the large one, the window (128 MiB for the
//! long-distance-matching frames LLVM writes), is backed by transparent huge pages: a fresh
//! 128 MiB buffer otherwise costs 33,000 page faults as decoding first touches it, a fifth of
//! the time of extracting the last entry of a 250 MB bundle. Decoded bytes go straight into
//! the spare capacity of the caller's vector, never zero-filled first.
//!
//! The only `unsafe` code of the container layer's decoding lives here. Not for deciding how
//! much to decode or what it means (see `inflate`).

use std::ffi::c_void;
use std::ptr::NonNull;

use zstd::zstd_safe::zstd_sys;

/// Decoder allocations at least this large ask for huge pages.
const HUGE_PAGES_FROM: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// A libzstd streaming decoder (`ZSTD_DStream`).
pub(crate) struct ZstdStream {
    dctx: NonNull<zstd_sys::ZSTD_DStream>,
}

// SAFETY: a ZSTD_DStream is plain memory owned by this value and used through `&mut self`
// only; libzstd keeps no thread affinity.
unsafe impl Send for ZstdStream {}

/// A libzstd error code, with libzstd's name for it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ZstdError {
    pub name: &'static str,
    /// The decoder could not allocate its window or buffers.
    pub out_of_memory: bool,
}

unsafe extern "C" fn alloc(_opaque: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: plain malloc; libzstd checks for NULL.
    let p = unsafe { libc::malloc(size) };
    if !p.is_null() && size >= HUGE_PAGES_FROM {
        let start = p as usize;
        let (from, to) = (
            (start + HUGE_PAGE - 1) & !(HUGE_PAGE - 1),
            (start + size) & !(HUGE_PAGE - 1),
        );
        if from < to {
            // SAFETY: [from, to) lies inside the block just allocated; MADV_HUGEPAGE changes
            // how the kernel backs it, never its contents or validity. Refusal changes nothing.
            unsafe { libc::madvise(from as *mut c_void, to - from, libc::MADV_HUGEPAGE) };
        }
    }
    p
}

unsafe extern "C" fn free(_opaque: *mut c_void, address: *mut c_void) {
    // SAFETY: `address` came from `alloc` (malloc) and libzstd frees it once.
    unsafe { libc::free(address) }
}

fn error(code: usize) -> ZstdError {
    // SAFETY: ZSTD_getErrorName returns a static NUL-terminated string for any code.
    let name = unsafe { std::ffi::CStr::from_ptr(zstd_sys::ZSTD_getErrorName(code)) };
    let name = name.to_str().unwrap_or("unknown zstd error");
    // SAFETY: pure function of the code.
    let kind = unsafe { zstd_sys::ZSTD_getErrorCode(code) };
    ZstdError {
        name,
        out_of_memory: kind == zstd_sys::ZSTD_ErrorCode::ZSTD_error_memory_allocation,
    }
}

fn check(code: usize) -> Result<usize, ZstdError> {
    // SAFETY: pure function of the code.
    if unsafe { zstd_sys::ZSTD_isError(code) } != 0 {
        Err(error(code))
    } else {
        Ok(code)
    }
}

impl ZstdStream {
    /// A decoder refusing frames whose window exceeds `2^window_log_max` bytes; `None` when
    /// it cannot be allocated.
    pub fn new(window_log_max: u32) -> Result<ZstdStream, ZstdError> {
        let mem = zstd_sys::ZSTD_customMem {
            customAlloc: Some(alloc),
            customFree: Some(free),
            opaque: std::ptr::null_mut(),
        };
        // SAFETY: the allocator functions are valid for the decoder's whole life.
        let raw = unsafe { zstd_sys::ZSTD_createDStream_advanced(mem) };
        let dctx = NonNull::new(raw).ok_or(ZstdError {
            name: "cannot allocate a zstd decoder",
            out_of_memory: true,
        })?;
        let stream = ZstdStream { dctx };
        // SAFETY: a live decoder and a known parameter.
        check(unsafe {
            zstd_sys::ZSTD_DCtx_setParameter(
                stream.dctx.as_ptr(),
                zstd_sys::ZSTD_dParameter::ZSTD_d_windowLogMax,
                window_log_max as i32,
            )
        })?;
        Ok(stream)
    }

    /// Decodes from `input[*pos..]` into up to `limit` bytes of `out`'s spare capacity
    /// (`limit` is cut to what there is), advancing `*pos` and `out.len()`. Returns libzstd's
    /// hint: 0 once the frame is complete and flushed.
    pub fn decompress(
        &mut self,
        out: &mut Vec<u8>,
        limit: usize,
        input: &[u8],
        pos: &mut usize,
    ) -> Result<usize, ZstdError> {
        let len = out.len();
        let size = limit.min(out.capacity() - len);
        let mut ob = zstd_sys::ZSTD_outBuffer {
            // In bounds: `len <= capacity`.
            dst: out.as_mut_ptr().wrapping_add(len).cast(),
            size,
            pos: 0,
        };
        let mut ib = zstd_sys::ZSTD_inBuffer {
            src: input.as_ptr().cast(),
            size: input.len(),
            pos: (*pos).min(input.len()),
        };
        // SAFETY: `ob` describes `size` writable bytes of `out`'s spare capacity and `ib` the
        // readable `input`; libzstd writes only inside `ob` and reads only inside `ib`, and
        // updates their `pos` fields.
        let code = unsafe { zstd_sys::ZSTD_decompressStream(self.dctx.as_ptr(), &mut ob, &mut ib) };
        let hint = check(code)?;
        // SAFETY: libzstd initialised the first `ob.pos <= size` bytes after `len`.
        unsafe { out.set_len(len + ob.pos.min(size)) };
        *pos = ib.pos;
        Ok(hint)
    }
}

impl Drop for ZstdStream {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createDStream_advanced and freed once, here.
        unsafe { zstd_sys::ZSTD_freeDStream(self.dctx.as_ptr()) };
    }
}
