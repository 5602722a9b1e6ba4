//! Memory across the runtime's devices: allocation (device, pinned host, managed), freeing
//! (after the device is idle, as `hipFree` does), copies and fills in stream order, and "which
//! allocation holds this pointer" across every device (interior pointers, as `hipMemcpy` and
//! `hipPointerGetAttributes` need).
//!
//! Pinned host and managed memory is reachable by every device: it is allocated on the first
//! device that runs kernels and recorded in every other device's table. Every device-side range
//! of a copy is checked against the allocation that holds it; an address in no allocation is the
//! caller's host memory, which must be mapped with the protection the copy needs
//! ([`crate::device::host_memory`]), as must memory to register. A fill's destination must be a
//! device's memory. Everything is checked before anything is read or written. Not for the
//! allocation table itself (the device layer) or for the C ABI's `hipMemcpyKind` rules (the C
//! ABI checks those).

use std::sync::Arc;

use super::device::DeviceContext;
use super::stream::Stream;
use super::{Runtime, RuntimeError, RuntimeResult};
use crate::device::host_memory;
use crate::device::memory::{Perms, Segment, ViolationReason};
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
            self.shared_owners
                .lock()
                .insert(allocation.base, ctx.index());
        }
        Ok(allocation.base)
    }

    /// [`allocate`](Self::allocate) for the program (HIP's allocation calls): the memory is
    /// also recorded as the program's, which [`reset_device`](Self::reset_device) frees.
    ///
    /// # Errors
    /// As [`allocate`](Self::allocate).
    pub fn allocate_for_program(
        &self,
        device: i64,
        size: u64,
        kind: MemoryKind,
    ) -> RuntimeResult<u64> {
        let index = self.device(device)?.index();
        let base = self.allocate(device, size, kind)?;
        self.program_memory.lock().insert(base, index);
        Ok(base)
    }

    /// The index of the border colour `rgba` (four channel dwords) in `device`'s table, for a
    /// sampler descriptor.
    ///
    /// # Errors
    /// The device's [`DeviceError::Unsupported`] where it has no such table.
    pub fn border_color(&self, device: i64, rgba: [u32; 4]) -> RuntimeResult<u32> {
        let ctx = self.device(device)?;
        ctx.device()
            .border_color(rgba)
            .map_err(|e| ctx.error("adding a border colour", e))
    }

    /// The allocation holding `address`, on whichever device knows it: for pinned and managed
    /// memory, which every device's table records, the device that allocated it.
    pub fn pointer_info(&self, address: u64) -> Option<PointerInfo> {
        let mut found: Option<PointerInfo> = None;
        for ctx in self.contexts() {
            if let Some(a) = ctx.device().allocations().find(address) {
                let owner = self.shared_owners.lock().get(&a.base).copied();
                if owner.is_none_or(|o| o == ctx.index()) {
                    return Some(PointerInfo {
                        device: ctx.index(),
                        allocation: a,
                    });
                }
                found.get_or_insert(PointerInfo {
                    device: ctx.index(),
                    allocation: a,
                });
            }
        }
        found
    }

    /// The address kernels use for `host` in pinned, registered or managed host memory
    /// (`hipHostGetDevicePointer`): registered memory as its device maps it, the rest at its
    /// own address; `None` for other memory.
    pub fn host_device_pointer(&self, host: u64) -> Option<u64> {
        let info = self.pointer_info(host)?;
        match info.allocation.kind {
            MemoryKind::RegisteredHost => Some(
                self.contexts()
                    .find(|c| c.index() == info.device)
                    .map_or(host, |c| c.device().registered_device_address(host)),
            ),
            MemoryKind::PinnedHost | MemoryKind::Managed => Some(host),
            _ => None,
        }
    }

    /// Frees what [`allocate`](Self::allocate) returned, after every device that could be
    /// using it is idle.
    ///
    /// # Errors
    /// [`RuntimeError::Device`] for an address that is not the start of a live allocation
    /// (double free, interior pointer), naming what is there instead.
    pub fn free(&self, address: u64) -> RuntimeResult<()> {
        // Graph memory becomes unreachable until its allocation node runs again.
        if self.free_graph_memory(address)? {
            return Ok(());
        }
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
        // A buffer mapped from external memory is unmapped, not freed.
        if info.allocation.kind == MemoryKind::External && info.allocation.base == address {
            self.attributes.forget(address);
            return self.unmap_external_buffer(info.device, address);
        }
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
        self.attributes.forget(address);
        // The other devices' tables forget shared memory before its owner frees it: the
        // owner's release waits for the dispatches running at its free, so no device may
        // still let a new one reach it after that. They do not remember it as freed: only the
        // owner knows when its bytes go back to the host allocator, after which the address
        // is ordinary host memory again (a later malloc may return it) and a copy from it on
        // another device is no use after free. The owner's table keeps that diagnosis.
        if shared {
            for ctx in self.contexts().filter(|c| c.index() != info.device) {
                ctx.device().allocations().remove(address, false);
            }
        }
        let ctx = self.device(info.device as i64)?;
        ctx.device()
            .free(address)
            .map_err(|e| ctx.error("freeing", e))?;
        if shared {
            self.shared_owners.lock().remove(&address);
        }
        self.program_memory.lock().remove(&address);
        Ok(())
    }

    /// Records the caller's host memory with every device, so kernels may use it
    /// (`hipHostRegister`). On the software agent the device address is the host address.
    ///
    /// # Errors
    /// [`RuntimeError::NullPointer`] or [`RuntimeError::ZeroSize`] for an empty range;
    /// [`RuntimeError::HostMemory`] when it is not all mapped readable and writable; device
    /// errors when the range overlaps memory a device already knows (registered twice, or an
    /// allocation).
    pub fn register_host(&self, base: u64, size: u64) -> RuntimeResult<()> {
        self.register_host_as(base, size, true)
    }

    /// [`register_host`](Self::register_host) of memory kernels may only read
    /// (`hipHostRegisterReadOnly`): it must be mapped readable, and a kernel's store there is
    /// a fault.
    ///
    /// # Errors
    /// As [`register_host`](Self::register_host).
    pub fn register_host_read_only(&self, base: u64, size: u64) -> RuntimeResult<()> {
        self.register_host_as(base, size, false)
    }

    fn register_host_as(&self, base: u64, size: u64, writable: bool) -> RuntimeResult<()> {
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
        // Kernels will touch any byte of it, from the time it is registered: all of it must be
        // there (the maps, not a probe: nothing of a large range is faulted in).
        host_memory::check_mapped_exact(base, size, writable).map_err(|error| {
            RuntimeError::HostMemory {
                what: "host memory to register",
                error,
            }
        })?;
        let mut done: Vec<&Arc<DeviceContext>> = Vec::new();
        for ctx in self.contexts() {
            if let Err(e) = ctx.device().register_host(base, size) {
                for d in done {
                    let _ = d.device().unregister_host(base);
                }
                return Err(ctx.error("registering host memory", e));
            }
            if !writable {
                ctx.device().allocations().set_segments(
                    base,
                    vec![Segment {
                        offset: 0,
                        size,
                        perms: Perms::R,
                    }],
                );
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
        self.attributes.forget(base);
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
        let end = |address, pitch| super::array::CopyEnd::Linear {
            address,
            pitch,
            rows: 0,
        };
        let origin = super::array::Origin::default();
        let extent = super::array::Extent {
            width,
            height,
            depth: 1,
        };
        // SAFETY: the caller's contract on host rows, passed on.
        unsafe {
            self.copy_3d(
                stream,
                (&end(dst, dst_pitch), origin),
                (&end(src, src_pitch), origin),
                extent,
                wait,
            )
        }
    }

    /// Whether `address` is the caller's pageable host memory (no device knows it). A copy to
    /// or from such memory is synchronous even when queued on a stream, as in HIP: the caller
    /// may read the destination or reuse the source as soon as the call returns (clr stages
    /// pageable copies and waits for them).
    pub(super) fn is_pageable(&self, address: u64) -> bool {
        self.pointer_info(address).is_none()
    }

    /// Checks one side of a copy against whichever device holds it; an address no device
    /// knows (and none remembers freeing) must be host memory mapped for the access.
    pub(crate) fn check_side(&self, address: u64, len: u64, write: bool) -> RuntimeResult<()> {
        if super::graph::GraphAllocation::covers(address, len) {
            return Ok(());
        }
        self.check_device_side(address, len, write)?;
        if self.pointer_info(address).is_none() {
            host_memory::check_mapped(address, len, write).map_err(|error| {
                RuntimeError::HostMemory {
                    what: if write {
                        "copy destination"
                    } else {
                        "copy source"
                    },
                    error,
                }
            })?;
        }
        Ok(())
    }

    /// Checks `[address, address + len)` that must be memory of a device (a fill's
    /// destination): inside one allocation.
    pub fn check_device_memory(
        &self,
        address: u64,
        len: u64,
        what: &'static str,
    ) -> RuntimeResult<()> {
        if super::graph::GraphAllocation::covers(address, len) {
            return Ok(());
        }
        if self.pointer_info(address).is_none() {
            let freed = self.contexts().find_map(|ctx| {
                let v = ctx.device().allocations().violation(
                    address,
                    len,
                    crate::device::AccessKind::Write,
                );
                matches!(v.reason, ViolationReason::Freed(_)).then(|| v.to_string())
            });
            return Err(RuntimeError::NotDeviceMemory {
                what,
                address,
                detail: freed,
            });
        }
        self.check_device_side(address, len, true)
    }

    /// Checks one side of a copy or fill against whichever device holds it (an address no
    /// device holds passes, unless a device remembers freeing it).
    fn check_device_side(&self, address: u64, len: u64, write: bool) -> RuntimeResult<()> {
        for ctx in self.contexts() {
            let table = ctx.device().allocations();
            if let Some(a) = table.find(address) {
                // The caller's memory registered read-only may be a read-only mapping: the
                // host must not write it either (copies into code objects' read-only segments
                // are the host's to make, as `hipMemcpyToSymbol` of a constant does).
                let read_only_host = write
                    && a.kind == MemoryKind::RegisteredHost
                    && a.region(address, len).is_some_and(|(_, _, p)| !p.write);
                return if a.contains(address, len) && !read_only_host {
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
    /// (`hipMemcpy`), otherwise it is queued (`hipMemcpyAsync`), except that a copy to or from
    /// pageable host memory (in no device's table) always returns once it is done.
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
        let wait = wait || self.is_pageable(dst) || self.is_pageable(src);
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

    /// Fills `len` bytes at `dst` with a `width`-byte pattern in `stream`'s order; `dst` must
    /// be memory of a device (device, pinned, registered or managed), as in HIP.
    ///
    /// # Errors
    /// [`RuntimeError::NotDeviceMemory`] for an address no device holds; a range past its
    /// allocation; otherwise as [`copy`](Self::copy).
    ///
    /// # Safety
    /// None beyond [`copy`](Self::copy)'s: the whole range is checked against the tables.
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
        self.check_device_memory(dst, len, "fill destination")?;
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

/// The length in bytes of a stream memory operation's value (`width` 4 or 8), which must sit at
/// an address aligned to it (the command processor reads it in one access).
pub(super) fn value_width(address: u64, width: u8, what: &'static str) -> RuntimeResult<u64> {
    let len = u64::from(width);
    if width != 4 && width != 8 {
        return Err(RuntimeError::InvalidRange {
            what,
            address,
            len,
            reason: "values are 4 or 8 bytes".into(),
        });
    }
    if address % len != 0 {
        return Err(RuntimeError::InvalidRange {
            what,
            address,
            len,
            reason: format!("not aligned to {len} bytes"),
        });
    }
    Ok(len)
}
