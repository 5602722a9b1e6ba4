//! Memory across the runtime's devices: allocation (device, pinned host, managed), freeing
//! (after the device is idle, as `hipFree` does), copies and fills in stream order, and "which
//! allocation holds this pointer" across every device (interior pointers, as `hipMemcpy` and
//! `hipPointerGetAttributes` need).
//!
//! Pinned host and managed memory is reachable by every device: it is allocated on the first
//! device that runs kernels and recorded in every other device's table. Every device-side range
//! of a copy is checked against the allocation that holds it; an address in no allocation is the
//! caller's host memory. Not for the allocation table itself (the device layer) or for the C
//! ABI's `hipMemcpyKind` rules (the C ABI checks those).

use std::sync::Arc;

use super::device::DeviceContext;
use super::stream::Stream;
use super::{Runtime, RuntimeError, RuntimeResult};
use crate::device::memory::ViolationReason;
use crate::device::{Allocation, DeviceError, MemoryKind};

/// Where a pointer lives.
#[derive(Debug, Clone)]
pub struct PointerInfo {
    /// The device whose table holds it (for shared memory: the device that allocated it).
    pub device: usize,
    /// The allocation holding it.
    pub allocation: Allocation,
}

impl Runtime {
    fn contexts(&self) -> impl Iterator<Item = &Arc<DeviceContext>> {
        self.devices().iter().flatten()
    }

    /// Allocates `size` bytes of `kind` (device, pinned host or managed) for `device`.
    ///
    /// # Errors
    /// Device errors (out of memory), or a device that cannot run kernels.
    pub fn allocate(&self, device: i64, size: u64, kind: MemoryKind) -> RuntimeResult<u64> {
        let ctx = self.device(device)?.clone();
        let allocation = ctx
            .device()
            .allocate(size, kind)
            .map_err(|e| ctx.error("allocating", e))?;
        if matches!(kind, MemoryKind::PinnedHost | MemoryKind::Managed) {
            for other in self.contexts().filter(|c| c.index() != ctx.index()) {
                other
                    .device()
                    .allocations()
                    .insert(allocation.base, allocation.size, kind, true)
                    .map_err(|e| {
                        other.error(
                            "sharing host memory",
                            DeviceError::InvalidAddress {
                                address: allocation.base,
                                detail: Some(e.to_string()),
                            },
                        )
                    })?;
            }
        }
        Ok(allocation.base)
    }

    /// The allocation holding `address`, on whichever device knows it (its allocator first).
    pub fn pointer_info(&self, address: u64) -> Option<PointerInfo> {
        let mut found = None;
        for ctx in self.contexts() {
            if let Some(a) = ctx.device().allocations().find(address) {
                let owner = PointerInfo {
                    device: ctx.index(),
                    allocation: a,
                };
                // Shared memory is recorded everywhere; report the first device.
                found.get_or_insert(owner);
            }
        }
        found
    }

    /// Frees what [`allocate`](Self::allocate) returned, after every device that could be
    /// using it is idle.
    ///
    /// # Errors
    /// [`RuntimeError::Device`] for an address that is not the start of a live allocation
    /// (double free, interior pointer), naming what is there instead.
    pub fn free(&self, address: u64) -> RuntimeResult<()> {
        // A memory pool's block goes back to its pool.
        if self.free_pool_block(address)? {
            return Ok(());
        }
        let Some(info) = self.pointer_info(address) else {
            // Not live anywhere: a double free is named by the table that remembers it.
            let ctx = self.contexts().next().ok_or(RuntimeError::NoDevice {
                reason: "no device runs kernels".into(),
            })?;
            return Err(ctx.error("freeing", ctx.device().allocations().not_freeable(address)));
        };
        let shared = matches!(
            info.allocation.kind,
            MemoryKind::PinnedHost | MemoryKind::Managed
        );
        if !matches!(
            info.allocation.kind,
            MemoryKind::Device | MemoryKind::PinnedHost | MemoryKind::Managed
        ) || info.allocation.base != address
        {
            let ctx = self.device(info.device as i64)?;
            return Err(ctx.error(
                "freeing",
                DeviceError::InvalidAddress {
                    address,
                    detail: Some(format!("inside {}", info.allocation)),
                },
            ));
        }
        // hipFree waits for the device (for shared memory: every device) to be idle.
        for ctx in self.contexts() {
            if shared || ctx.index() == info.device {
                ctx.synchronize_ignoring_errors()?;
            }
        }
        let mut result = Ok(());
        for ctx in self.contexts() {
            if ctx.index() == info.device {
                if let Err(e) = ctx.device().free(address) {
                    result = Err(ctx.error("freeing", e));
                }
            } else if shared {
                ctx.device().allocations().remove(address, true);
            }
        }
        result
    }

    /// Records the caller's host memory with every device, so kernels may use it
    /// (`hipHostRegister`). On the software agent the device address is the host address.
    ///
    /// # Errors
    /// [`RuntimeError::NullPointer`] or [`RuntimeError::ZeroSize`] for an empty range; device
    /// errors when the range
    /// overlaps memory a device already knows (registered twice, or an allocation).
    pub fn register_host(&self, base: u64, size: u64) -> RuntimeResult<()> {
        if base == 0 {
            return Err(RuntimeError::NullPointer {
                what: "host memory to register",
            });
        }
        if size == 0 {
            return Err(RuntimeError::ZeroSize {
                what: "host memory to register",
            });
        }
        let mut done: Vec<&Arc<DeviceContext>> = Vec::new();
        for ctx in self.contexts() {
            if let Err(e) = ctx.device().register_host(base, size) {
                for d in done {
                    let _ = d.device().unregister_host(base);
                }
                return Err(ctx.error("registering host memory", e));
            }
            done.push(ctx);
        }
        if done.is_empty() {
            return Err(RuntimeError::NoDevice {
                reason: "no device runs kernels".into(),
            });
        }
        Ok(())
    }

    /// Forgets host memory recorded by [`register_host`](Self::register_host), after the
    /// devices are idle.
    ///
    /// # Errors
    /// Device errors when `base` is not the start of registered memory.
    pub fn unregister_host(&self, base: u64) -> RuntimeResult<()> {
        match self.pointer_info(base) {
            Some(info)
                if info.allocation.kind == MemoryKind::RegisteredHost
                    && info.allocation.base == base => {}
            _ => {
                let ctx = self.contexts().next().ok_or(RuntimeError::NoDevice {
                    reason: "no device runs kernels".into(),
                })?;
                return Err(ctx.error(
                    "unregistering host memory",
                    DeviceError::InvalidAddress {
                        address: base,
                        detail: Some("not the start of registered host memory".into()),
                    },
                ));
            }
        }
        let mut result = Ok(());
        for ctx in self.contexts() {
            ctx.synchronize_ignoring_errors()?;
            if let Err(e) = ctx.device().unregister_host(base) {
                result = Err(ctx.error("unregistering host memory", e));
            }
        }
        result
    }

    /// Copies `height` rows of `width` bytes between pitched layouts in `stream`'s order
    /// (`hipMemcpy2D`); both whole extents are checked first.
    ///
    /// # Errors
    /// [`RuntimeError::PitchTooSmall`] when a pitch is smaller than the width,
    /// [`RuntimeError::ExtentOverflow`] or [`RuntimeError::AddressWraps`] when an extent does
    /// not fit the address space; otherwise as
    /// [`copy`](Self::copy).
    ///
    /// # Safety
    /// As [`copy`](Self::copy), for every row.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn copy_2d(
        &self,
        stream: &Stream,
        dst: u64,
        dst_pitch: u64,
        src: u64,
        src_pitch: u64,
        width: u64,
        height: u64,
        wait: bool,
    ) -> RuntimeResult<()> {
        if width == 0 || height == 0 {
            return Ok(());
        }
        for (side, pitch) in [("destination", dst_pitch), ("source", src_pitch)] {
            if pitch < width {
                return Err(RuntimeError::PitchTooSmall { side, pitch, width });
            }
        }
        let extent = |address: u64, pitch: u64| {
            let size = pitch
                .checked_mul(height - 1)
                .and_then(|v| v.checked_add(width))
                .ok_or(RuntimeError::ExtentOverflow {
                    pitch,
                    width,
                    height,
                })?;
            address
                .checked_add(size)
                .map(|_| size)
                .ok_or(RuntimeError::AddressWraps { address, size })
        };
        let (dst_extent, src_extent) = (extent(dst, dst_pitch)?, extent(src, src_pitch)?);
        self.check_side(dst, dst_extent, true)?;
        self.check_side(src, src_extent, false)?;
        let ctx = stream.context()?;
        let device = ctx.device().clone();
        stream.host_work(
            "copying rows",
            Box::new(move || {
                for row in 0..height {
                    // SAFETY: every row lies inside the extents checked above, which stay
                    // allocated while the stream runs; host rows by the caller's contract.
                    unsafe { device.copy(dst + row * dst_pitch, src + row * src_pitch, width) }?;
                }
                Ok(())
            }),
        )?;
        if wait {
            stream.synchronize()?;
        }
        Ok(())
    }

    /// Checks one side of a copy or fill against whichever device holds it.
    fn check_side(&self, address: u64, len: u64, write: bool) -> RuntimeResult<()> {
        for ctx in self.contexts() {
            let table = ctx.device().allocations();
            if let Some(a) = table.find(address) {
                return if a.contains(address, len) {
                    Ok(())
                } else {
                    Err(ctx.error(
                        "copying",
                        DeviceError::Access(table.violation(
                            address,
                            len,
                            crate::device::AccessKind::data(write),
                        )),
                    ))
                };
            }
            let v = table.violation(address, len, crate::device::AccessKind::data(write));
            if matches!(v.reason, ViolationReason::Freed(_)) {
                return Err(ctx.error("copying", DeviceError::Access(v)));
            }
        }
        Ok(())
    }

    /// Copies `len` bytes from `src` to `dst` in `stream`'s order; `wait` makes it synchronous
    /// (`hipMemcpy`), otherwise it is queued (`hipMemcpyAsync`).
    ///
    /// # Errors
    /// A device-side range outside its allocation (or freed), a stream error, or, with `wait`,
    /// a failure of this or an earlier step of the stream.
    ///
    /// # Safety
    /// Host-side ranges (addresses in no allocation of any device) must be valid for the copy
    /// until it is done.
    pub unsafe fn copy(
        &self,
        stream: &Stream,
        dst: u64,
        src: u64,
        len: u64,
        wait: bool,
    ) -> RuntimeResult<()> {
        if len == 0 {
            return Ok(());
        }
        self.check_side(dst, len, true)?;
        self.check_side(src, len, false)?;
        let ctx = stream.context()?;
        let device = ctx.device().clone();
        stream.host_work(
            "copying",
            Box::new(move || {
                // SAFETY: device-side ranges were checked above and stay allocated while the
                // stream runs (hipFree waits for idle devices); host-side ranges are valid by
                // the caller's contract.
                unsafe { device.copy(dst, src, len) }
            }),
        )?;
        if wait {
            stream.synchronize()?;
        }
        Ok(())
    }

    /// Fills `len` bytes at `dst` with a `width`-byte pattern in `stream`'s order.
    ///
    /// # Errors
    /// As [`copy`](Self::copy).
    ///
    /// # Safety
    /// As [`copy`](Self::copy), for `dst`.
    pub unsafe fn fill(
        &self,
        stream: &Stream,
        dst: u64,
        pattern: u32,
        width: u8,
        len: u64,
        wait: bool,
    ) -> RuntimeResult<()> {
        if len == 0 {
            return Ok(());
        }
        self.check_side(dst, len, true)?;
        let ctx = stream.context()?;
        let device = ctx.device().clone();
        stream.host_work(
            "filling",
            Box::new(move || {
                // SAFETY: as in `copy`.
                unsafe { device.fill(dst, pattern, width, len) }
            }),
        )?;
        if wait {
            stream.synchronize()?;
        }
        Ok(())
    }
}
