//! External memory on the software agent (`hipImportExternalMemory` with an opaque file
//! descriptor, `hipExternalMemoryGetMappedBuffer`): the descriptor must be a memory object
//! sealed against shrinking (`memfd_create` + `F_SEAL_SHRINK`, as rocload's own shareable
//! memory is), since a file that could shrink under a mapping would turn a kernel's access into
//! the host's `SIGBUS`. Each mapped buffer is a mapping of its own whose exact bytes enter this
//! agent's allocation table, so kernels, copies and the memory checker see the buffer and
//! nothing around it; `hipFree` takes it out of the table and unmaps it once no running
//! dispatch can touch it. Not for hipMemMap's mappings (`super::vmm`) or IPC handles.

use std::collections::HashMap;
use std::os::fd::BorrowedFd;
use std::sync::Arc;

use super::vmm::SoftPhysical;
use super::SoftAgent;
use crate::device::shared::{page_size, Mapping, MemoryObject};
use crate::device::vmm::PhysicalMemory;
use crate::device::{DeviceError, MemoryKind};

/// Buffers this agent mapped from external memory, by the address `map_external` returned.
#[derive(Debug, Default)]
pub struct ExternalMapped {
    by_address: HashMap<u64, Buffer>,
}

#[derive(Debug)]
struct Buffer {
    mapping: Mapping,
    /// Keeps the memory object alive while mapped (the external memory may be destroyed first).
    _memory: Arc<dyn PhysicalMemory>,
}

fn refuse(reason: String) -> DeviceError {
    DeviceError::Vmm {
        what: "external memory",
        reason,
    }
}

impl SoftAgent {
    /// See [`crate::device::Device::import_external`].
    pub(super) fn soft_import_external(
        &self,
        fd: BorrowedFd<'_>,
        size: u64,
    ) -> Result<Arc<dyn PhysicalMemory>, DeviceError> {
        let object = MemoryObject::import_any_size(fd).map_err(DeviceError::Shared)?;
        if size > object.size() {
            return Err(refuse(format!(
                "{size} bytes asked for, but the memory object has {}",
                object.size()
            )));
        }
        tracing::debug!(size, object = ?object, "external memory imported");
        Ok(Arc::new(SoftPhysical::imported(object)))
    }

    /// See [`crate::device::Device::map_external`].
    pub(super) fn soft_map_external(
        &self,
        memory: &Arc<dyn PhysicalMemory>,
        offset: u64,
        size: u64,
    ) -> Result<u64, DeviceError> {
        let Some(physical) = memory.as_any().downcast_ref::<SoftPhysical>() else {
            return Err(refuse(
                "memory another backend imported cannot be mapped on the software agent".into(),
            ));
        };
        let end = offset
            .checked_add(size)
            .filter(|&e| size > 0 && e <= physical.object.size())
            .ok_or_else(|| {
                refuse(format!(
                    "a buffer of {size:#x} bytes at offset {offset:#x} is empty or runs past the \
                     {:#x}-byte memory",
                    physical.object.size()
                ))
            })?;
        let page = page_size();
        let start = offset - offset % page;
        let pages_end = end
            .checked_next_multiple_of(page)
            .ok_or_else(|| refuse(format!("offset {offset:#x} and size {size:#x} wrap")))?;
        let mapping = physical
            .object
            .map(start, pages_end - start)
            .map_err(DeviceError::Shared)?;
        let address = mapping.base() + (offset - start);
        self.state
            .table
            .insert(address, size, MemoryKind::External, true)
            .map_err(|e| refuse(e.to_string()))?;
        self.state.external.lock().by_address.insert(
            address,
            Buffer {
                mapping,
                _memory: memory.clone(),
            },
        );
        tracing::debug!(
            address = format_args!("{address:#x}"),
            offset,
            size,
            "external memory buffer mapped"
        );
        Ok(address)
    }

    /// See [`crate::device::Device::unmap_external`].
    pub(super) fn soft_unmap_external(&self, address: u64) -> Result<(), DeviceError> {
        let Some(buffer) = self.state.external.lock().by_address.remove(&address) else {
            return Err(DeviceError::InvalidAddress {
                address,
                detail: Some("not a buffer mapped from external memory (or freed already)".into()),
            });
        };
        self.state.table.remove(address, true);
        // Unmapped once the dispatches that could still reach it have ended.
        let epochs = self.state.memory.epochs();
        let mark = epochs.mark();
        let bytes = buffer.mapping.len();
        epochs.release_after(mark, Box::new(buffer), bytes);
        tracing::debug!(
            address = format_args!("{address:#x}"),
            "external memory buffer unmapped"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{AccessKind, Device};
    use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

    /// A sealed memory object of `size` bytes made as another API would, and its host view.
    fn memfd(size: usize, seal: bool) -> OwnedFd {
        let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
        // SAFETY: a NUL-terminated name and valid flags.
        let raw = unsafe { libc::memfd_create(c"external-test".as_ptr(), flags) };
        assert!(raw >= 0);
        // SAFETY: a fresh descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sizing our own memfd.
        let sized = unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) };
        assert_eq!(sized, 0);
        if seal {
            // SAFETY: sealing our own memfd.
            let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, libc::F_SEAL_SHRINK) };
            assert_eq!(r, 0);
        }
        fd
    }

    /// The buffer is exactly the bytes asked for, shares them with the object (written through
    /// a write to the descriptor), and leaves the table when unmapped; unsealed files, sizes
    /// past the object and ranges past its end are refused.
    #[test]
    fn mapped_buffers_are_exactly_their_bytes_of_the_object() {
        let a = SoftAgent::new("gfx1030".parse().unwrap());
        let fd = memfd(10_000, true);
        let memory = a.import_external(fd.as_fd(), 9_000).unwrap();
        let payload = 0x1234_5678u32.to_le_bytes();
        // SAFETY: writing our own buffer to our own descriptor.
        let n = unsafe { libc::pwrite(fd.as_raw_fd(), payload.as_ptr().cast(), 4, 5_000) };
        assert_eq!(n, 4);
        let p = a.map_external(&memory, 4_996, 5_004).unwrap();
        let mut got = [0u8; 4];
        // SAFETY: the destination is ours; the source is checked against the table.
        unsafe { a.copy(got.as_mut_ptr() as u64, p + 4, 4).unwrap() };
        assert_eq!(got, payload);
        let found = a.allocations().find(p).unwrap();
        assert_eq!(
            (found.base, found.size, found.kind),
            (p, 5_004, MemoryKind::External)
        );
        assert!(a
            .allocations()
            .check(p + 5_004, 1, AccessKind::Read)
            .is_err());
        assert!(a.allocations().check(p - 1, 1, AccessKind::Read).is_err());
        assert!(
            a.map_external(&memory, 9_000, 1_001).is_err(),
            "past the end"
        );
        assert!(a.map_external(&memory, 0, 0).is_err(), "empty");
        assert!(a.map_external(&memory, u64::MAX, 2).is_err(), "wraps");
        a.unmap_external(p).unwrap();
        assert!(a.allocations().check(p, 4, AccessKind::Read).is_err());
        assert!(a.unmap_external(p).is_err(), "twice");
        let e = a.import_external(fd.as_fd(), 10_001).unwrap_err();
        assert!(e.to_string().contains("has 10000"), "{e}");
        let unsealed = memfd(4096, false);
        let e = a.import_external(unsealed.as_fd(), 4096).unwrap_err();
        assert!(e.to_string().contains("F_SEAL_SHRINK"), "{e}");
    }
}
