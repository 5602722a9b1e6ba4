//! Virtual memory management and memory shared between processes, in the shape every backend
//! provides them (ROCr's `hsa_amd_vmem_*` and `hsa_amd_ipc_memory_*`, the software agent's
//! memory objects and reservations):
//!
//! - [`VirtualMemory`]: address-space reservations, physical memory ([`PhysicalMemory`]) that
//!   can be exported to and imported from other processes as file descriptors, mappings of
//!   physical memory at reserved addresses, and each device's access to a mapping, which
//!   enters the range in (or removes it from) that device's allocation table, so kernels,
//!   copies and the memory checker see exactly what was made accessible;
//! - IPC handles ([`IpcHandle`]): 64 bytes (HIP's `HIP_IPC_HANDLE_SIZE`) naming memory or an
//!   event of another process, laid out here so every parser reads the same fixed fields and
//!   refuses a handle of another kind, backend or version.
//!
//! HIP's rules (which order calls may come in, reference counts of allocation handles) are the
//! runtime's (`crate::runtime`); this layer checks only what keeps the process safe: an address
//! is mapped only inside a reservation, never over another mapping, and unmapped only once no
//! device can reach it.

use std::any::Any;
use std::fmt;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::Arc;

use super::DeviceError;

/// Bytes of HIP's IPC handles (`hipIpcMemHandle_t`, `hipIpcEventHandle_t`).
pub const IPC_HANDLE_BYTES: usize = 64;

/// What a device may do with a mapped range (`hipMemAccessFlags`: `ProtNone` 0, `ProtRead` 1,
/// `ProtReadWrite` 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Nothing: kernels and copies fault.
    None,
    /// Loads only: stores fault.
    Read,
    /// Loads and stores.
    ReadWrite,
}

impl Access {
    /// The `hipMemAccessFlags` value.
    pub fn flags(self) -> u64 {
        match self {
            Access::None => 0,
            Access::Read => 1,
            Access::ReadWrite => 3,
        }
    }

    /// The access `hipMemAccessFlags` value `flags` names, if any.
    pub fn from_flags(flags: u64) -> Option<Access> {
        match flags {
            0 => Some(Access::None),
            1 => Some(Access::Read),
            3 => Some(Access::ReadWrite),
            _ => None,
        }
    }

    /// The wider of two accesses (what the host must allow when several devices map it).
    pub fn union(self, other: Access) -> Access {
        match (self, other) {
            (Access::ReadWrite, _) | (_, Access::ReadWrite) => Access::ReadWrite,
            (Access::Read, _) | (_, Access::Read) => Access::Read,
            _ => Access::None,
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::None => "no access",
            Access::Read => "read-only",
            Access::ReadWrite => "read-write",
        })
    }
}

/// Physical memory (`hipMemCreate`, `hipMemImportFromShareableHandle`): bytes with no address
/// of their own until mapped at a reserved one. Freed when the last holder drops it (the
/// runtime's handle and every mapping hold it).
pub trait PhysicalMemory: Send + Sync + fmt::Debug {
    /// Bytes.
    fn size(&self) -> u64;

    /// A new file descriptor another process can import (`hipMemExportToShareableHandle` with
    /// `hipMemHandleTypePosixFileDescriptor`); the caller owns it.
    ///
    /// # Errors
    /// The backend's refusal (no descriptors left, memory that cannot be shared).
    fn export(&self) -> Result<OwnedFd, DeviceError>;

    /// For the backend that made it, to reach its own type.
    fn as_any(&self) -> &dyn Any;
}

/// A device's view of its backend's virtual memory management. Reservations and mappings are
/// the process's (every device of a backend shares them); access is per device.
pub trait VirtualMemory: Send + Sync + fmt::Debug {
    /// The granularity of sizes, offsets and addresses (`hipMemGetAllocationGranularity`).
    fn granularity(&self) -> u64;

    /// Reserves `size` bytes of address space aligned to `alignment` (0: the granularity),
    /// at `hint` when that range is free (`hipMemAddressReserve`).
    ///
    /// # Errors
    /// Sizes and alignments the backend refuses; no address space left.
    fn reserve(&self, size: u64, alignment: u64, hint: u64) -> Result<u64, DeviceError>;

    /// Releases the reservation made at `base` of `size` bytes (`hipMemAddressFree`).
    ///
    /// # Errors
    /// [`DeviceError::Vmm`] for an address and size that are not a reservation's, or a
    /// reservation that still has mappings.
    fn free_reservation(&self, base: u64, size: u64) -> Result<(), DeviceError>;

    /// New physical memory of `size` bytes on this device (`hipMemCreate`).
    ///
    /// # Errors
    /// Sizes the backend refuses; no memory left.
    fn create(&self, size: u64) -> Result<Arc<dyn PhysicalMemory>, DeviceError>;

    /// Physical memory another process exported as a file descriptor; the caller keeps `fd`.
    ///
    /// # Errors
    /// A descriptor that is not shareable memory of this backend.
    fn import(&self, fd: BorrowedFd<'_>) -> Result<Arc<dyn PhysicalMemory>, DeviceError>;

    /// Maps `[offset, offset + size)` of `physical` at `va`, inside one reservation and over
    /// no other mapping (`hipMemMap`); no device may access it yet.
    ///
    /// # Errors
    /// [`DeviceError::Vmm`] for a range outside every reservation, over a mapping, past the
    /// physical memory's end, or physical memory of another backend.
    fn map(
        &self,
        va: u64,
        size: u64,
        physical: &Arc<dyn PhysicalMemory>,
        offset: u64,
    ) -> Result<(), DeviceError>;

    /// Unmaps the mapping at `va` of `size` bytes (`hipMemUnmap`), once no device has access
    /// left (the caller removed it, and waited for the work that could touch it).
    ///
    /// # Errors
    /// [`DeviceError::Vmm`] for an address and size that are not one mapping's, or a mapping
    /// a device still has access to.
    fn unmap(&self, va: u64, size: u64) -> Result<(), DeviceError>;

    /// Gives this device `access` to the mapping at `va` of `size` bytes
    /// (`hipMemSetAccess`): the range enters this device's allocation table with that
    /// access, or leaves it for [`Access::None`] (returning only once no running dispatch can
    /// still touch it).
    ///
    /// # Errors
    /// [`DeviceError::Vmm`] for an address and size that are not one mapping's.
    fn set_access(&self, va: u64, size: u64, access: Access) -> Result<(), DeviceError>;
}

/// What an IPC handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcKind {
    /// Device memory (`hipIpcMemHandle_t`).
    Memory = 1,
    /// An interprocess event (`hipIpcEventHandle_t`).
    Event = 2,
}

/// Which backend made an IPC handle (a handle of one cannot be opened by another).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcBackend {
    /// A memory object of a software agent's process, reopened through `/proc`.
    Soft = 1,
    /// ROCr's `hsa_amd_ipc_memory_t`.
    Hsa = 2,
}

/// The magic at the start of every handle rocload makes.
const IPC_MAGIC: [u8; 4] = *b"RLIP";
/// The layout version.
const IPC_VERSION: u8 = 1;
/// Where the payload starts.
pub const IPC_PAYLOAD: usize = 8;

/// HIP's 64-byte IPC handle as rocload lays it out: `RLIP`, version, kind, backend, a zero
/// byte, then 56 bytes of payload read as little-endian fields at fixed offsets.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct IpcHandle(pub [u8; IPC_HANDLE_BYTES]);

impl fmt::Debug for IpcHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IpcHandle(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

impl IpcHandle {
    /// An empty handle of `kind` made by `backend`.
    pub fn new(kind: IpcKind, backend: IpcBackend) -> IpcHandle {
        let mut bytes = [0u8; IPC_HANDLE_BYTES];
        bytes[..4].copy_from_slice(&IPC_MAGIC);
        bytes[4] = IPC_VERSION;
        bytes[5] = kind as u8;
        bytes[6] = backend as u8;
        IpcHandle(bytes)
    }

    /// Checks that this is a handle of `kind` made by `backend` in this layout.
    ///
    /// # Errors
    /// [`DeviceError::Vmm`] saying what it is instead.
    pub fn check(&self, kind: IpcKind, backend: IpcBackend) -> Result<(), DeviceError> {
        let what = match kind {
            IpcKind::Memory => "IPC memory handle",
            IpcKind::Event => "IPC event handle",
        };
        let refuse = |reason: String| DeviceError::Vmm { what, reason };
        if self.0[..4] != IPC_MAGIC {
            return Err(refuse(
                "not a handle rocload made (hipIpcGet*Handle's output was not passed unchanged)"
                    .into(),
            ));
        }
        if self.0[4] != IPC_VERSION {
            return Err(refuse(format!("handle layout version {}", self.0[4])));
        }
        if self.0[5] != kind as u8 {
            return Err(refuse(format!(
                "a handle of kind {}, not {what}",
                self.0[5]
            )));
        }
        if self.0[6] != backend as u8 {
            return Err(refuse(format!(
                "made by backend {} (1: software agent, 2: ROCr), not this device's",
                self.0[6]
            )));
        }
        Ok(())
    }

    /// The little-endian `u64` at payload offset `at` (0 when it does not fit).
    pub fn u64_at(&self, at: usize) -> u64 {
        let start = IPC_PAYLOAD + at;
        self.0
            .get(start..start + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    }

    /// Writes `value` at payload offset `at` (nothing when it does not fit).
    pub fn put_u64(&mut self, at: usize, value: u64) {
        let start = IPC_PAYLOAD + at;
        if let Some(b) = self.0.get_mut(start..start + 8) {
            b.copy_from_slice(&value.to_le_bytes());
        }
    }

    /// The payload bytes `[at, at + len)` (empty when they do not fit).
    pub fn bytes_at(&self, at: usize, len: usize) -> &[u8] {
        let start = IPC_PAYLOAD + at;
        self.0.get(start..start + len).unwrap_or(&[])
    }

    /// Writes `bytes` at payload offset `at` (nothing when they do not fit).
    pub fn put_bytes(&mut self, at: usize, bytes: &[u8]) {
        let start = IPC_PAYLOAD + at;
        if let Some(b) = self.0.get_mut(start..start + bytes.len()) {
            b.copy_from_slice(bytes);
        }
    }
}

/// A memory object of another process, as soft IPC handles name it: payload offsets 0 (pid,
/// u32, and descriptor, i32, in one u64) and 8 (the object's token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteObject {
    /// The process holding it.
    pub pid: u32,
    /// Its descriptor number there.
    pub fd: i32,
    /// The random token in its name.
    pub token: u64,
}

impl RemoteObject {
    /// Writes it into `handle`'s first 16 payload bytes.
    pub fn put(&self, handle: &mut IpcHandle) {
        handle.put_u64(0, u64::from(self.pid) | (u64::from(self.fd as u32) << 32));
        handle.put_u64(8, self.token);
    }

    /// Reads it from `handle`'s first 16 payload bytes.
    pub fn read(handle: &IpcHandle) -> RemoteObject {
        let word = handle.u64_at(0);
        RemoteObject {
            pid: word as u32,
            fd: (word >> 32) as u32 as i32,
            token: handle.u64_at(8),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_checked_before_any_field_is_trusted() {
        let mut h = IpcHandle::new(IpcKind::Memory, IpcBackend::Soft);
        RemoteObject {
            pid: 1234,
            fd: 1025,
            token: 0xdead_beef_0000_0001,
        }
        .put(&mut h);
        h.put_u64(16, 4096);
        assert!(h.check(IpcKind::Memory, IpcBackend::Soft).is_ok());
        let r = RemoteObject::read(&h);
        assert_eq!((r.pid, r.fd, r.token), (1234, 1025, 0xdead_beef_0000_0001));
        assert_eq!(h.u64_at(16), 4096);
        assert_eq!(h.u64_at(60), 0, "past the end reads as 0");
        let e = h.check(IpcKind::Event, IpcBackend::Soft).unwrap_err();
        assert!(e.to_string().contains("kind 1"), "{e}");
        assert!(h.check(IpcKind::Memory, IpcBackend::Hsa).is_err());
        let zero = IpcHandle([0; IPC_HANDLE_BYTES]);
        let e = zero.check(IpcKind::Memory, IpcBackend::Soft).unwrap_err();
        assert!(e.to_string().contains("not a handle rocload made"), "{e}");
        let mut v = h;
        v.0[4] = 9;
        assert!(v.check(IpcKind::Memory, IpcBackend::Soft).is_err());
    }

    #[test]
    fn access_flags_round_trip_and_widen() {
        for a in [Access::None, Access::Read, Access::ReadWrite] {
            assert_eq!(Access::from_flags(a.flags()), Some(a));
        }
        assert_eq!(Access::from_flags(2), None);
        assert_eq!(Access::Read.union(Access::None), Access::Read);
        assert_eq!(Access::Read.union(Access::ReadWrite), Access::ReadWrite);
    }
}
