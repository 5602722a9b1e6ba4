//! rocload's own C API (`include/rocload.h`): explanations of failures, kernel facts, stats.

use rocload_ffi::export;
use std::ffi::{c_char, c_int, c_void};

use crate::*;

// ------------------------------------------------------------------------------ rocload.h

fn copy_out(text: &str, buf: *mut c_char, len: usize) -> usize {
    if !buf.is_null() && len > 0 {
        // SAFETY: the caller gives `len` writable bytes at `buf`.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf, len) };
        copy_c_string(dst, text);
    }
    text.len()
}

/// `size_t rocload_last_selection_error(char* buf, size_t len)`: see `include/rocload.h`.
#[export]
pub unsafe extern "C" fn rocload_last_selection_error(buf: *mut c_char, len: usize) -> usize {
    catch_unwind(|| {
        LAST_SELECTION
            .try_with(|m| copy_out(&m.borrow(), buf, len))
            .unwrap_or(0)
    })
    .unwrap_or(0)
}

/// `size_t rocload_last_error_message(char* buf, size_t len)`: see `include/rocload.h`.
#[export]
pub unsafe extern "C" fn rocload_last_error_message(buf: *mut c_char, len: usize) -> usize {
    catch_unwind(|| {
        LAST_MESSAGE
            .try_with(|m| copy_out(&m.borrow(), buf, len))
            .unwrap_or(0)
    })
    .unwrap_or(0)
}

/// `int rocload_device_function(const char* name, int device, uint64_t* address, uint64_t* size)`.
#[export]
pub unsafe extern "C" fn rocload_device_function(
    name: *const c_char,
    device: c_int,
    address: *mut u64,
    size: *mut u64,
) -> c_int {
    call("rocload_device_function", || {
        // SAFETY: NUL-terminated by the caller's contract (or NULL, rejected).
        let name = unsafe { c_str(name, "name") }?;
        let s = runtime().device_function(&name, i64::from(device))?;
        // SAFETY: non-null outputs are writable by the caller's contract.
        unsafe {
            if !address.is_null() {
                address.write(s.address);
            }
            if !size.is_null() {
                size.write(s.size);
            }
        }
        Ok(())
    })
}

fn kernel_info(k: &KernelRef) -> rocload_kernel_info_t {
    let i = k.info();
    let opt = |v: Option<u64>| v.map_or(-1, |v| i32::try_from(v).unwrap_or(i32::MAX));
    rocload_kernel_info_t {
        descriptor_address: k.descriptor_address(),
        code_address: k.code_address().unwrap_or(0),
        kernarg_segment_size: i.kernarg_segment_size,
        kernarg_segment_align: i.kernarg_segment_align,
        group_segment_fixed_size: i.group_segment_fixed_size,
        private_segment_fixed_size: i.private_segment_fixed_size,
        wavefront_size: u32::try_from(i.wavefront_size).unwrap_or(0),
        sgpr_count: opt(i.sgpr_count),
        vgpr_count: opt(i.vgpr_count),
        max_flat_workgroup_size: opt(i.max_flat_workgroup_size),
    }
}

/// `int rocload_kernel_info(const void* host_function, int device, rocload_kernel_info_t* info)`.
#[export]
pub unsafe extern "C" fn rocload_kernel_info(
    host_function: *const c_void,
    device: c_int,
    info: *mut rocload_kernel_info_t,
) -> c_int {
    call("rocload_kernel_info", || {
        if info.is_null() {
            return Err(Failure::null("info"));
        }
        let k = runtime().kernel(host_function as usize, i64::from(device))?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(info, "info", kernel_info(&k)) }
    })
}

/// `int rocload_function_info(hipFunction_t function, rocload_kernel_info_t* info)`.
#[export]
pub unsafe extern "C" fn rocload_function_info(
    function: hipFunction_t,
    info: *mut rocload_kernel_info_t,
) -> c_int {
    call("rocload_function_info", || {
        if info.is_null() {
            return Err(Failure::null("info"));
        }
        let k = crate::module::function_handle(function)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out(info, "info", kernel_info(&k)) }
    })
}

/// `int rocload_stats(rocload_stats_t* stats)`: the runtime's event counters.
#[export]
pub unsafe extern "C" fn rocload_stats(stats: *mut RocloadStats) -> c_int {
    call("rocload_stats", || {
        let s = runtime().stats();
        let v = RocloadStats {
            registered: s.registered,
            loads: s.loads,
            load_failures: s.load_failures,
            full_inflations: s.full_inflations,
            extractions: s.extractions,
        };
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(stats, "stats", v) }
    })
}

/// `int rocload_set_watchdog(double seconds)`: the watchdog of later dispatches on every
/// device that has one (0: off).
#[export]
pub extern "C" fn rocload_set_watchdog(seconds: f64) -> c_int {
    call("rocload_set_watchdog", || {
        let timeout = if seconds == 0.0 {
            None
        } else {
            match std::time::Duration::try_from_secs_f64(seconds) {
                Ok(d) if !d.is_zero() => Some(d),
                _ => {
                    return Err(Failure::new(
                        hipErrorInvalidValue,
                        format!("{seconds} seconds: expected 0 (off) or a positive, finite number"),
                    ))
                }
            }
        };
        let mut applied = 0;
        for ctx in runtime().devices().iter().flatten() {
            match ctx.device().set_watchdog(timeout) {
                Ok(()) => applied += 1,
                Err(DeviceError::Unsupported { .. }) => {}
                Err(e) => return Err(Failure::new(hipErrorUnknown, e.to_string())),
            }
        }
        if applied == 0 {
            return Err(Failure::new(
                hipErrorNotSupported,
                "no device has a watchdog (kernels run on a GPU)",
            ));
        }
        tracing::debug!(?timeout, devices = applied, "watchdog set");
        Ok(())
    })
}

/// `rocload_stats_t` of `include/rocload.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct RocloadStats {
    /// Fat binaries registered (including modules).
    pub registered: u64,
    /// Successful loads of a fat binary on a device.
    pub loads: u64,
    /// Failed first uses.
    pub load_failures: u64,
    /// Compressed bundles inflated whole.
    pub full_inflations: u64,
    /// Entries extracted.
    pub extractions: u64,
}
