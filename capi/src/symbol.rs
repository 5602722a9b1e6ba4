//! Device variables by their host shadow (`hipGetSymbolAddress`, `hipMemcpyToSymbol`, ...).

use rocload_ffi::export;
use std::ffi::{c_int, c_void};

use rocload_lib::runtime::graph::{CopyForm, CopyNode};
use rocload_lib::runtime::NodeOp;

use crate::*;

// ------------------------------------------------------------------------------ symbols

pub(crate) fn symbol(symbol: *const c_void) -> Result<(u64, u64), Failure> {
    if symbol.is_null() {
        return Err(Failure::new(hipErrorInvalidSymbol, "symbol is NULL"));
    }
    runtime()
        .variable(symbol as usize, current_device())
        .map_err(|e| match e {
            RuntimeError::NotFound { .. } => Failure {
                code: hipErrorInvalidSymbol,
                message: e.to_string(),
                error: Some(e),
            },
            e => e.into(),
        })
}

/// `hipError_t hipGetSymbolAddress(void** devPtr, const void* symbol)`: the variable's address
/// on the current device (loading its fat binary on first use).
#[export]
pub unsafe extern "C" fn hipGetSymbolAddress(
    dev_ptr: *mut *mut c_void,
    sym: *const c_void,
) -> hipError_t {
    call("hipGetSymbolAddress", || {
        if dev_ptr.is_null() {
            return Err(Failure::null("devPtr"));
        }
        let (address, _) = symbol(sym)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(dev_ptr, "devPtr", address as *mut c_void) }
    })
}

/// `hipError_t hipGetSymbolSize(size_t* size, const void* symbol)`.
#[export]
pub unsafe extern "C" fn hipGetSymbolSize(size: *mut usize, sym: *const c_void) -> hipError_t {
    call("hipGetSymbolSize", || {
        if size.is_null() {
            return Err(Failure::null("size"));
        }
        let (_, bytes) = symbol(sym)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(size, "size", bytes as usize) }
    })
}

/// The device range `[address + offset, + count)` of a variable, checked against its size.
pub(crate) fn symbol_range(
    sym: *const c_void,
    count: usize,
    offset: usize,
) -> Result<u64, Failure> {
    let (address, size) = symbol(sym)?;
    let end = offset.checked_add(count).map(|e| e as u64);
    if end.is_none_or(|e| e > size) {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("{count} bytes at offset {offset} run past the variable's {size} bytes"),
        ));
    }
    Ok(address + offset as u64)
}

/// `hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t sizeBytes,
/// size_t offset, hipMemcpyKind kind)`.
#[export]
pub unsafe extern "C" fn hipMemcpyToSymbol(
    sym: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: c_int,
) -> hipError_t {
    call("hipMemcpyToSymbol", || {
        crate::memory::check_kind(kind)?;
        let at = symbol_range(sym, size, offset)?;
        // SAFETY: `src` is valid for `size` bytes by the caller's contract.
        unsafe { crate::memory::copy_of_kind(at as *mut c_void, src, size, None, kind) }
    })
}

/// `hipError_t hipMemcpyToSymbolAsync(const void* symbol, const void* src, size_t, size_t
/// offset, hipMemcpyKind, hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipMemcpyToSymbolAsync(
    sym: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpyToSymbolAsync", || {
        crate::memory::check_kind(kind)?;
        let at = symbol_range(sym, size, offset)?;
        if size > 0 && !src.is_null() {
            let s = crate::stream::stream_of(stream)?;
            if let Some(c) = crate::capture::intercept(&s, "a copy to a device variable")? {
                let form = CopyForm::ToSymbol {
                    symbol: sym as u64,
                    address: at,
                    src: src as u64,
                    offset: offset as u64,
                    len: size as u64,
                };
                return crate::capture::add(&c, &s, NodeOp::Copy(CopyNode { form, kind }));
            }
        }
        // SAFETY: `src` is valid until the copy is done by the caller's contract.
        unsafe { crate::memory::copy_of_kind(at as *mut c_void, src, size, Some(stream), kind) }
    })
}

/// `hipError_t hipMemcpyFromSymbol(void* dst, const void* symbol, size_t sizeBytes, size_t
/// offset, hipMemcpyKind kind)`.
#[export]
pub unsafe extern "C" fn hipMemcpyFromSymbol(
    dst: *mut c_void,
    sym: *const c_void,
    size: usize,
    offset: usize,
    kind: c_int,
) -> hipError_t {
    call("hipMemcpyFromSymbol", || {
        crate::memory::check_kind(kind)?;
        let at = symbol_range(sym, size, offset)?;
        // SAFETY: `dst` is valid for `size` bytes by the caller's contract.
        unsafe { crate::memory::copy_of_kind(dst, at as *const c_void, size, None, kind) }
    })
}

/// `hipError_t hipMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t, size_t offset,
/// hipMemcpyKind, hipStream_t)`.
#[export]
pub unsafe extern "C" fn hipMemcpyFromSymbolAsync(
    dst: *mut c_void,
    sym: *const c_void,
    size: usize,
    offset: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    call("hipMemcpyFromSymbolAsync", || {
        crate::memory::check_kind(kind)?;
        let at = symbol_range(sym, size, offset)?;
        if size > 0 && !dst.is_null() {
            let s = crate::stream::stream_of(stream)?;
            if let Some(c) = crate::capture::intercept(&s, "a copy from a device variable")? {
                let form = CopyForm::FromSymbol {
                    dst: dst as u64,
                    symbol: sym as u64,
                    address: at,
                    offset: offset as u64,
                    len: size as u64,
                };
                return crate::capture::add(&c, &s, NodeOp::Copy(CopyNode { form, kind }));
            }
        }
        // SAFETY: `dst` is valid until the copy is done by the caller's contract.
        unsafe { crate::memory::copy_of_kind(dst, at as *const c_void, size, Some(stream), kind) }
    })
}
