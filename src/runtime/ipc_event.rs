//! The shared state of interprocess events (`hipEventInterprocess`, `hipIpcGetEventHandle`,
//! `hipIpcOpenEventHandle`): one page of a memory object (`crate::device::shared`) that every
//! process holding the event maps, so a record made in one process is waited for in another.
//!
//! As clr's `IPCEvent` does with its shared ring of signals: each record takes the next
//! sequence number and one of [`SLOTS`] slots (waiting, if the slot's previous record is still
//! pending, for it to complete), notes its process, and completes when its stream reaches it
//! (also when the stream failed before it: the record is over either way). The event is
//! complete when its latest record is. A wait checks that the process that made the pending
//! record is alive, so a record whose process exited is an error, not a hang; a wait is also
//! bounded by [`SYNC_TIMEOUT`](super::stream::SYNC_TIMEOUT).
//!
//! Handles name the creating process's pid, the object's descriptor there and its random token
//! (the same scheme as IPC memory handles); opening one in the process that made it is refused
//! (`hipErrorInvalidContext`), as in clr. The page's contents come from other processes, so
//! they are read as atomics only and never trusted to index anything beyond a slot number
//! taken modulo [`SLOTS`].

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{RuntimeError, RuntimeResult};
use crate::device::shared::{page_size, Mapping, MemoryObject, SharedMemoryError};
use crate::device::vmm::{IpcBackend, IpcHandle, IpcKind, RemoteObject};
use crate::device::DeviceError;

/// Records that may be pending at once.
pub const SLOTS: usize = 32;
/// "RLIPEVT1": what the page starts with once made.
const MAGIC: u64 = u64::from_le_bytes(*b"RLIPEVT1");

/// The page's layout (every field an atomic: other processes change them).
#[repr(C)]
struct Page {
    magic: AtomicU64,
    /// The sequence number of the latest record (0: never recorded).
    issued: AtomicU64,
    slots: [Slot; SLOTS],
}

#[repr(C)]
struct Slot {
    /// The highest sequence number completed in this slot.
    done: AtomicU64,
    /// The process that made the slot's latest record.
    pid: AtomicU32,
    _pad: AtomicU32,
}

/// An interprocess event's shared page, mapped in this process.
#[derive(Debug)]
pub struct IpcEvent {
    object: MemoryObject,
    mapping: Mapping,
}

fn shared_error(what: &'static str, e: SharedMemoryError) -> RuntimeError {
    RuntimeError::Vmm {
        what,
        reason: e.to_string(),
    }
}

/// Whether process `pid` exists (a recycled pid counts as alive; the wait's timeout covers
/// that).
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

impl IpcEvent {
    /// A new event page.
    ///
    /// # Errors
    /// [`RuntimeError::Vmm`] when the memory object cannot be made.
    pub fn create() -> RuntimeResult<IpcEvent> {
        let what = "creating an interprocess event";
        let object = MemoryObject::create(page_size()).map_err(|e| shared_error(what, e))?;
        let mapping = object
            .map(0, page_size())
            .map_err(|e| shared_error(what, e))?;
        let event = IpcEvent { object, mapping };
        event.page().magic.store(MAGIC, Ordering::Release);
        Ok(event)
    }

    /// The event another process made, named by `handle`.
    ///
    /// # Errors
    /// [`RuntimeError::IpcSameProcess`] for a handle this process made;
    /// [`RuntimeError::Vmm`] for a malformed handle or one naming no event page (the process
    /// exited, the event was destroyed and its descriptor reused).
    pub fn open(handle: &IpcHandle) -> RuntimeResult<IpcEvent> {
        let what = "opening an IPC event handle";
        handle
            .check(IpcKind::Event, IpcBackend::Soft)
            .map_err(|e| RuntimeError::Vmm {
                what,
                reason: e.to_string(),
            })?;
        let remote = RemoteObject::read(handle);
        if remote.pid == std::process::id() {
            return Err(RuntimeError::IpcSameProcess { pid: remote.pid });
        }
        let object = MemoryObject::open_remote(remote.pid, remote.fd, remote.token)
            .map_err(|e| shared_error(what, e))?;
        let mapping = object
            .map(0, page_size())
            .map_err(|e| shared_error(what, e))?;
        let event = IpcEvent { object, mapping };
        if event.page().magic.load(Ordering::Acquire) != MAGIC {
            return Err(RuntimeError::Vmm {
                what,
                reason: "the memory the handle names is not an interprocess event".into(),
            });
        }
        Ok(event)
    }

    /// The handle another process opens.
    pub fn handle(&self) -> IpcHandle {
        let mut handle = IpcHandle::new(IpcKind::Event, IpcBackend::Soft);
        RemoteObject {
            pid: std::process::id(),
            fd: self.object.fd().as_raw_fd(),
            token: self.object.token(),
        }
        .put(&mut handle);
        handle
    }

    fn page(&self) -> &Page {
        // SAFETY: the mapping is a whole page (larger than `Page`), page-aligned, readable and
        // writable, and lives as long as `self`; every field of `Page` is an atomic, so other
        // processes changing them concurrently is defined.
        unsafe { &*(self.mapping.base() as *const Page) }
    }

    fn slot(&self, seq: u64) -> &Slot {
        &self.page().slots[(seq % SLOTS as u64) as usize]
    }

    /// Starts a record: takes its sequence number and slot (after the slot's previous record
    /// completed). The caller completes it with [`complete`](Self::complete).
    ///
    /// # Errors
    /// [`RuntimeError::RecorderGone`] or [`RuntimeError::Timeout`] when the slot's previous
    /// record never completes.
    pub fn begin_record(&self) -> RuntimeResult<u64> {
        let seq = self.page().issued.fetch_add(1, Ordering::AcqRel) + 1;
        if seq > SLOTS as u64 {
            self.wait_for(seq - SLOTS as u64, super::stream::SYNC_TIMEOUT)?;
        }
        self.slot(seq)
            .pid
            .store(std::process::id(), Ordering::Release);
        Ok(seq)
    }

    /// Completes record `seq` (idempotent).
    pub fn complete(&self, seq: u64) {
        self.slot(seq).done.fetch_max(seq, Ordering::AcqRel);
    }

    /// The latest record's sequence number (0: never recorded).
    pub fn latest(&self) -> u64 {
        self.page().issued.load(Ordering::Acquire)
    }

    /// Whether record `seq` (and so the event, if it is the latest) has completed.
    pub fn is_done(&self, seq: u64) -> bool {
        seq == 0 || self.slot(seq).done.load(Ordering::Acquire) >= seq
    }

    /// Waits until record `seq` completes, at most `timeout`.
    ///
    /// # Errors
    /// [`RuntimeError::RecorderGone`] when the process that made it exited first;
    /// [`RuntimeError::Timeout`].
    pub fn wait_for(&self, seq: u64, timeout: Duration) -> RuntimeResult<()> {
        let start = Instant::now();
        let mut spins = 0u32;
        while !self.is_done(seq) {
            if spins < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(200));
                if spins % 256 == 0 {
                    let pid = self.slot(seq).pid.load(Ordering::Acquire);
                    if !alive(pid) && !self.is_done(seq) {
                        return Err(RuntimeError::RecorderGone { pid });
                    }
                }
                if start.elapsed() > timeout {
                    return Err(RuntimeError::Timeout {
                        what: "interprocess event".into(),
                        waited: start.elapsed(),
                    });
                }
            }
            spins = spins.wrapping_add(1);
        }
        Ok(())
    }
}

/// A wait for an interprocess event as a stream step's error.
pub(crate) fn as_device_error(e: RuntimeError) -> DeviceError {
    DeviceError::Vmm {
        what: "waiting for an interprocess event",
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records complete in any order of slots; the event is complete when its latest record
    /// is; a slot's previous record must complete before it is reused; a record whose process
    /// is gone is an error, not a hang.
    #[test]
    fn records_complete_through_the_shared_page() {
        let e = IpcEvent::create().unwrap();
        assert_eq!(e.latest(), 0);
        assert!(e.is_done(e.latest()));
        let a = e.begin_record().unwrap();
        let b = e.begin_record().unwrap();
        assert!(!e.is_done(e.latest()));
        e.complete(b);
        assert!(e.is_done(e.latest()));
        assert!(!e.is_done(a));
        e.complete(a);
        e.wait_for(a, Duration::from_secs(1)).unwrap();
        // A second view of the same page (as another process would map it).
        let view = e.object.map(0, page_size()).unwrap();
        // SAFETY: as in `page`.
        let page = unsafe { &*(view.base() as *const Page) };
        assert_eq!(page.issued.load(Ordering::Acquire), b);
        // A pending record of a process that does not exist.
        let c = e.begin_record().unwrap();
        e.slot(c).pid.store(i32::MAX as u32, Ordering::Release);
        let gone = e.wait_for(c, Duration::from_secs(30)).unwrap_err();
        assert!(matches!(gone, RuntimeError::RecorderGone { .. }), "{gone}");
        // The handle names this process: opening it here is refused.
        let same = IpcEvent::open(&e.handle()).unwrap_err();
        assert!(
            matches!(same, RuntimeError::IpcSameProcess { .. }),
            "{same}"
        );
        let mut other = e.handle();
        other.0[5] = IpcKind::Memory as u8;
        assert!(IpcEvent::open(&other).is_err());
    }
}
