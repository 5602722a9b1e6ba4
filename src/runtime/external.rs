//! External resources: memory and semaphores another API (Vulkan, another process) exported as
//! opaque POSIX file descriptors (`hipImportExternalMemory`, `hipImportExternalSemaphore` and
//! their families).
//!
//! - External memory is the device's to import ([`crate::device::Device::import_external`]):
//!   on the software agent a memory object sealed against shrinking. Each mapped buffer
//!   (`hipExternalMemoryGetMappedBuffer`) is an allocation of its own, exactly the bytes asked
//!   for, freed with `hipFree` (as CUDA documents and clr does since 5.3); destroying the
//!   external memory leaves its buffers mapped until they are freed.
//! - An opaque-descriptor external semaphore is, on this machine, a Linux `eventfd`: the
//!   kernel's counter object that processes share by passing the descriptor, which is what
//!   Vulkan's binary semaphores are to their drivers. Signalling (in stream order) adds one;
//!   waiting holds the stream until the count is non-zero and takes it (a read, which returns
//!   the counter to zero, or decrements it for an `EFD_SEMAPHORE` one), so a semaphore signals
//!   one wait, as a binary semaphore does. A wait that is never signalled fails the stream
//!   after [`SYNC_TIMEOUT`] instead of holding it forever. The fence value of the parameters
//!   belongs to timeline semaphores and D3D12 fences, which HIP 5.2's opaque descriptors are
//!   not: it is ignored, as CUDA documents for this type.
//!
//! Descriptors: the caller keeps the one it passes (clr 5.2.3 hands it to
//! `hsa_amd_interop_map_buffer`, which takes its own reference; CUDA documents a transfer of
//! ownership: a program written for that leaks a descriptor, never loses one); the runtime
//! holds a duplicate.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Instant;

use super::stream::SYNC_TIMEOUT;
use super::{Runtime, RuntimeError, RuntimeResult, Stream};
use crate::device::vmm::PhysicalMemory;
use crate::device::DeviceError;

/// Memory imported from another API (`hipExternalMemory_t`).
#[derive(Debug)]
pub struct ExternalMemory {
    device: usize,
    size: u64,
    memory: Arc<dyn PhysicalMemory>,
}

impl ExternalMemory {
    /// The device it was imported for.
    pub fn device(&self) -> usize {
        self.device
    }

    /// The bytes the import asked for (what buffers may be mapped from).
    pub fn size(&self) -> u64 {
        self.size
    }
}

fn refuse(what: &'static str, reason: impl Into<String>) -> RuntimeError {
    RuntimeError::Vmm {
        what,
        reason: reason.into(),
    }
}

/// A failed system call on a semaphore, as the device error that fails its stream step.
fn system(op: &str) -> DeviceError {
    let e = std::io::Error::last_os_error();
    DeviceError::Shared(crate::device::shared::SharedMemoryError::System {
        op: op.to_owned(),
        errno: e.raw_os_error().unwrap_or(0),
        message: e.to_string(),
    })
}

/// A duplicate of `fd` (close-on-exec), named `what` in errors.
fn duplicate(fd: BorrowedFd<'_>, what: &'static str) -> RuntimeResult<OwnedFd> {
    // SAFETY: duplicating a descriptor the caller lends; the result is owned below.
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
    if new < 0 {
        return Err(refuse(
            what,
            format!(
                "descriptor {} cannot be duplicated: {}",
                fd.as_raw_fd(),
                std::io::Error::last_os_error()
            ),
        ));
    }
    // SAFETY: `new` is a fresh descriptor no one else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// An external semaphore (`hipExternalSemaphore_t`): an `eventfd` (see the module comment).
#[derive(Debug)]
pub struct ExternalSemaphore {
    fd: OwnedFd,
}

impl ExternalSemaphore {
    /// The semaphore `fd` names; the caller keeps `fd`.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for a descriptor that is not open or not an `eventfd`.
    pub fn import(fd: BorrowedFd<'_>) -> RuntimeResult<ExternalSemaphore> {
        let what = "importing an external semaphore";
        let raw = fd.as_raw_fd();
        let link = std::fs::read_link(format!("/proc/self/fd/{raw}"))
            .map_err(|e| refuse(what, format!("descriptor {raw} is not open: {e}")))?;
        let link = link.to_string_lossy();
        if link != "anon_inode:[eventfd]" {
            return Err(refuse(
                what,
                format!(
                    "descriptor {raw} is {link}, not an eventfd (an opaque-descriptor \
                     semaphore on the software agent is a Linux eventfd)"
                ),
            ));
        }
        let fd = duplicate(fd, what)?;
        tracing::debug!(fd = raw, "external semaphore imported");
        Ok(ExternalSemaphore { fd })
    }

    /// Adds one to the count, waking one waiter.
    pub(crate) fn signal(&self) -> Result<(), DeviceError> {
        let one = 1u64.to_ne_bytes();
        loop {
            // SAFETY: writing our own 8-byte buffer to our own descriptor.
            let n = unsafe { libc::write(self.fd.as_raw_fd(), one.as_ptr().cast(), 8) };
            if n == 8 {
                return Ok(());
            }
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(system("signalling an external semaphore (eventfd write)"));
        }
    }

    /// Waits until the count is non-zero and takes it, for at most [`SYNC_TIMEOUT`].
    pub(crate) fn wait(&self) -> Result<(), DeviceError> {
        let start = Instant::now();
        loop {
            let left = SYNC_TIMEOUT.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(DeviceError::Timeout(start.elapsed()));
            }
            let mut poll = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // Polls in steps of at most a second (the bound of an int of milliseconds is far).
            let step = left.as_millis().min(1000) as libc::c_int;
            // SAFETY: one valid pollfd.
            let ready = unsafe { libc::poll(&mut poll, 1, step.max(1)) };
            if ready < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(system("waiting for an external semaphore (poll)"));
            }
            if ready == 0 {
                continue;
            }
            let mut count = [0u8; 8];
            // SAFETY: reading 8 bytes into our own buffer from our own descriptor.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), count.as_mut_ptr().cast(), 8) };
            if n == 8 {
                return Ok(());
            }
            let errno = std::io::Error::last_os_error().raw_os_error();
            // Another holder of the descriptor took the count first (non-blocking): wait on.
            if n < 0 && matches!(errno, Some(libc::EINTR) | Some(libc::EAGAIN)) {
                continue;
            }
            return Err(system("waiting for an external semaphore (eventfd read)"));
        }
    }
}

impl Runtime {
    /// `hipImportExternalMemory`: the memory `fd` names (which the caller keeps), at least
    /// `size` bytes, for `device`.
    ///
    /// # Errors
    /// [`RuntimeError::ZeroSize`] for 0 bytes; the device's refusal (a backend that cannot
    /// import, a descriptor that is not memory it can map or is smaller than `size`).
    pub fn import_external_memory(
        &self,
        device: usize,
        fd: BorrowedFd<'_>,
        size: u64,
    ) -> RuntimeResult<ExternalMemory> {
        if size == 0 {
            return Err(RuntimeError::ZeroSize {
                what: "external memory",
            });
        }
        let ctx = self.device(device as i64)?;
        let memory = ctx
            .device()
            .import_external(fd, size)
            .map_err(|e| ctx.error("importing external memory", e))?;
        Ok(ExternalMemory {
            device,
            size,
            memory,
        })
    }

    /// `hipExternalMemoryGetMappedBuffer`: `size` bytes of `memory` from `offset`, mapped
    /// for its device as an allocation `hipFree` frees; returns their address.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] for an empty range or one past the imported size; the device's
    /// errors.
    pub fn map_external_buffer(
        &self,
        memory: &ExternalMemory,
        offset: u64,
        size: u64,
    ) -> RuntimeResult<u64> {
        let what = "mapping a buffer of external memory";
        if size == 0 || offset.checked_add(size).is_none_or(|end| end > memory.size) {
            return Err(refuse(
                what,
                format!(
                    "a buffer of {size} bytes at offset {offset} is empty or runs past the {} \
                     bytes imported",
                    memory.size
                ),
            ));
        }
        let ctx = self.device(memory.device as i64)?;
        ctx.device()
            .map_external(&memory.memory, offset, size)
            .map_err(|e| ctx.error(what, e))
    }

    /// `hipFree` of a buffer [`map_external_buffer`](Self::map_external_buffer) returned, on
    /// `device`, once the device is idle.
    pub(crate) fn unmap_external_buffer(&self, device: usize, address: u64) -> RuntimeResult<()> {
        let ctx = self.device(device as i64)?;
        ctx.synchronize_ignoring_errors()?;
        ctx.device()
            .unmap_external(address)
            .map_err(|e| ctx.error("freeing a buffer of external memory", e))
    }

    /// `hipSignalExternalSemaphoresAsync` for one semaphore: signalled once the work before
    /// it in `stream` is done.
    ///
    /// # Errors
    /// The stream's submission errors.
    pub fn signal_external_semaphore(
        &self,
        stream: &Stream,
        semaphore: &Arc<ExternalSemaphore>,
    ) -> RuntimeResult<()> {
        let semaphore = semaphore.clone();
        tracing::debug!(
            stream = stream.id(),
            fd = semaphore.fd.as_fd().as_raw_fd(),
            "queueing an external semaphore signal"
        );
        stream.host_work(
            "signalling an external semaphore",
            Box::new(move || semaphore.signal()),
        )
    }

    /// `hipWaitExternalSemaphoresAsync` for one semaphore: work after it in `stream` waits
    /// until it is signalled.
    ///
    /// # Errors
    /// The stream's submission errors. The wait itself fails the stream when it is not
    /// signalled within [`SYNC_TIMEOUT`].
    pub fn wait_external_semaphore(
        &self,
        stream: &Stream,
        semaphore: &Arc<ExternalSemaphore>,
    ) -> RuntimeResult<()> {
        let semaphore = semaphore.clone();
        tracing::debug!(
            stream = stream.id(),
            fd = semaphore.fd.as_fd().as_raw_fd(),
            "queueing an external semaphore wait"
        );
        stream.host_work(
            "waiting for an external semaphore",
            Box::new(move || semaphore.wait()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eventfd(flags: libc::c_int) -> OwnedFd {
        // SAFETY: eventfd takes an initial count and flags; the descriptor is owned below.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | flags) };
        assert!(raw >= 0);
        // SAFETY: a fresh descriptor.
        unsafe { OwnedFd::from_raw_fd(raw) }
    }

    fn count(fd: &OwnedFd) -> Option<u64> {
        let mut poll = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no wait.
        if unsafe { libc::poll(&mut poll, 1, 0) } != 1 {
            return None;
        }
        let mut v = [0u8; 8];
        // SAFETY: our own buffer and descriptor.
        let n = unsafe { libc::read(fd.as_raw_fd(), v.as_mut_ptr().cast(), 8) };
        assert_eq!(n, 8);
        Some(u64::from_ne_bytes(v))
    }

    /// A signal is seen through the caller's own descriptor; a wait takes a signal made
    /// through it (from another thread, after the wait began); other descriptors are refused.
    #[test]
    fn an_eventfd_is_a_binary_semaphore() {
        let fd = eventfd(libc::EFD_NONBLOCK);
        let s = Arc::new(ExternalSemaphore::import(fd.as_fd()).unwrap());
        s.signal().unwrap();
        assert_eq!(count(&fd), Some(1));
        assert_eq!(count(&fd), None, "taken");
        let waiter = {
            let s = s.clone();
            std::thread::spawn(move || s.wait())
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!waiter.is_finished(), "the wait returned before any signal");
        let one = 1u64.to_ne_bytes();
        // SAFETY: our own buffer and descriptor.
        let n = unsafe { libc::write(fd.as_raw_fd(), one.as_ptr().cast(), 8) };
        assert_eq!(n, 8);
        waiter.join().unwrap().unwrap();
        assert_eq!(count(&fd), None, "the wait took the signal");

        let mut pipe = [0; 2];
        // SAFETY: a two-element array for pipe's descriptors.
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
        // SAFETY: fresh descriptors, owned here.
        let (r, _w) = unsafe { (OwnedFd::from_raw_fd(pipe[0]), OwnedFd::from_raw_fd(pipe[1])) };
        let e = ExternalSemaphore::import(r.as_fd()).unwrap_err();
        assert!(e.to_string().contains("not an eventfd"), "{e}");
    }
}
