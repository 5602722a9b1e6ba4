//! Host memory another process can map, for the software agent (whose device memory is host
//! memory) and for state that processes share (interprocess events):
//!
//! - [`MemoryObject`]: an anonymous file (`memfd_create`) sealed against shrinking and growing,
//!   so no process holding it can truncate it under a mapping (which would turn the mapping's
//!   pages into `SIGBUS`). Another process opens it by the exporter's pid and descriptor number
//!   ([`MemoryObject::open_remote`]) or receives a descriptor ([`MemoryObject::import`]); both
//!   refuse anything that is not such a sealed object, and a remote open must find the random
//!   token the exporter's handle names in the object's name, so a recycled pid or descriptor
//!   number opens nothing;
//! - [`Mapping`]: a memory object mapped anywhere (`MAP_SHARED`), unmapped on drop;
//! - [`Reservation`]: address space (`PROT_NONE`, `MAP_NORESERVE`), bounded and aligned, into
//!   which parts of memory objects are mapped at fixed addresses (`MAP_FIXED | MAP_SHARED`),
//!   only inside the reservation, and out of which they are unmapped back to `PROT_NONE`.
//!
//! HIP's virtual memory management (`hipMemCreate`, `hipMemAddressReserve`, `hipMemMap`) and IPC
//! handles rest on these on the software agent (`crate::backend::soft`). This module decides
//! nothing about who may touch what: the allocation tables do, and the callers remove a range
//! from them (and wait for the dispatches that could still touch it) before unmapping it.
//!
//! Descriptors: every object holds one (a remote process reopens it through
//! `/proc/<pid>/fd/<n>`). They are close-on-exec and, when the descriptor limit allows, moved to
//! numbers of at least [`FD_FLOOR`], so a program's own descriptors keep the low numbers that
//! `select` can watch; the soft limit is raised to the hard limit once, at the first object.

use std::ffi::CString;
use std::fmt;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// Largest memory object, reservation or mapping (16 TiB): far below the 128 TiB of user
/// address space, so no size a caller gives can ask the kernel for more than that.
pub const MAX_BYTES: u64 = 1 << 44;

/// Descriptors of memory objects are moved at or above this number when the limit allows.
pub const FD_FLOOR: RawFd = 1024;

/// The prefix of every memory object's name (`/proc/<pid>/fd/<n>` shows
/// `/memfd:rocload:<token> (deleted)`).
const NAME_PREFIX: &str = "rocload:";

/// Why shareable memory could not be had, mapped or opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SharedMemoryError {
    /// A system call failed.
    #[error("{op}: {message} (errno {errno})")]
    System {
        /// The call and what it was for.
        op: String,
        /// `errno`.
        errno: i32,
        /// Its text.
        message: String,
    },
    /// A size, offset or address that is not a multiple of the granularity.
    #[error("{what} {value:#x} is not a multiple of the granularity ({granularity:#x} bytes)")]
    Granularity {
        /// What it is.
        what: &'static str,
        /// Its value.
        value: u64,
        /// The granularity.
        granularity: u64,
    },
    /// A size beyond [`MAX_BYTES`] (or zero).
    #[error("{what}: {size} bytes (must be 1 to {limit})")]
    Size {
        /// What it is.
        what: &'static str,
        /// Bytes asked for.
        size: u64,
        /// The largest allowed.
        limit: u64,
    },
    /// A range that does not lie where it must (inside a reservation, inside an object).
    #[error("{what} {address:#x}+{size:#x}: {reason}")]
    Range {
        /// What it is.
        what: &'static str,
        /// First address or offset.
        address: u64,
        /// Bytes.
        size: u64,
        /// What is wrong.
        reason: String,
    },
    /// A descriptor or remote object that is not a sealed memory object of the kind this
    /// module makes, or not the one a handle names.
    #[error("{0}")]
    NotShareable(String),
}

impl SharedMemoryError {
    fn last(op: impl Into<String>) -> SharedMemoryError {
        let e = std::io::Error::last_os_error();
        SharedMemoryError::System {
            op: op.into(),
            errno: e.raw_os_error().unwrap_or(0),
            message: e.to_string(),
        }
    }

    /// Whether the system ran out of memory, address space or descriptors.
    pub fn is_exhaustion(&self) -> bool {
        matches!(self, SharedMemoryError::System { errno, .. }
            if [libc::ENOMEM, libc::EMFILE, libc::ENFILE, libc::ENOSPC].contains(errno))
    }
}

type Result<T> = std::result::Result<T, SharedMemoryError>;

/// The host's page size: the granularity of every object, offset and mapping.
pub fn page_size() -> u64 {
    static PAGE: OnceLock<u64> = OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf reads a constant of the system.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        u64::try_from(p)
            .ok()
            .filter(|p| p.is_power_of_two())
            .unwrap_or(4096)
    })
}

fn check_size(what: &'static str, size: u64) -> Result<usize> {
    if size == 0 || size > MAX_BYTES {
        return Err(SharedMemoryError::Size {
            what,
            size,
            limit: MAX_BYTES,
        });
    }
    usize::try_from(size).map_err(|_| SharedMemoryError::Size {
        what,
        size,
        limit: MAX_BYTES,
    })
}

fn check_granular(what: &'static str, value: u64) -> Result<()> {
    let granularity = page_size();
    if value % granularity != 0 {
        return Err(SharedMemoryError::Granularity {
            what,
            value,
            granularity,
        });
    }
    Ok(())
}

/// A random 64-bit value (the kernel's generator), never 0.
pub fn random_token() -> Result<u64> {
    let mut bytes = [0u8; 8];
    loop {
        // SAFETY: `bytes` is writable for its 8 bytes.
        let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
        if n == 8 {
            break;
        }
        if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(SharedMemoryError::last("getrandom"));
        }
    }
    Ok(u64::from_le_bytes(bytes) | 1)
}

/// Raises the soft descriptor limit to the hard limit, once (every memory object holds a
/// descriptor while it lives).
fn raise_descriptor_limit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `limit` is a valid out-parameter.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            // SAFETY: `raised` is a valid rlimit; raising the soft limit up to the hard one
            // needs no privilege.
            let ok = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0;
            tracing::debug!(
                from = limit.rlim_cur,
                to = limit.rlim_max,
                ok,
                "descriptor limit raised"
            );
        }
    });
}

/// `fd`, moved to a number of at least [`FD_FLOOR`] when the limit leaves room (else as is).
fn move_high(fd: OwnedFd) -> OwnedFd {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid out-parameter.
    let room = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0
        && limit.rlim_cur >= 4 * FD_FLOOR as u64;
    if !room || fd.as_raw_fd() >= FD_FLOOR {
        return fd;
    }
    // SAFETY: duplicating a descriptor we own; the result is owned below.
    let high = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, FD_FLOOR) };
    if high < 0 {
        return fd;
    }
    // SAFETY: `high` is a fresh descriptor no one else owns.
    unsafe { OwnedFd::from_raw_fd(high) }
}

/// A duplicate of `fd` (close-on-exec).
fn duplicate(fd: BorrowedFd<'_>, what: &str) -> Result<OwnedFd> {
    // SAFETY: duplicating a descriptor the caller lends; the result is owned below.
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
    if new < 0 {
        return Err(SharedMemoryError::last(format!("duplicating {what}")));
    }
    // SAFETY: `new` is a fresh descriptor no one else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// What `/proc/self/fd/<fd>` links to.
fn link_of(fd: BorrowedFd<'_>) -> Result<String> {
    let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    std::fs::read_link(&path)
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| SharedMemoryError::System {
            op: format!("readlink {path}"),
            errno: e.raw_os_error().unwrap_or(0),
            message: e.to_string(),
        })
}

/// The token in a memory object's name (`/memfd:rocload:<16 hex> (deleted)`), if it is ours.
fn token_in_link(link: &str) -> Option<u64> {
    let rest = link.strip_prefix("/memfd:")?.strip_prefix(NAME_PREFIX)?;
    let hex = rest.get(..16)?;
    u64::from_str_radix(hex, 16).ok()
}

/// A sealed anonymous file: memory any process holding it (or allowed to reopen it through
/// `/proc`) can map.
pub struct MemoryObject {
    fd: OwnedFd,
    size: u64,
    /// The random token in its name (0 for an imported object not made by rocload).
    token: u64,
}

impl fmt::Debug for MemoryObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryObject")
            .field("fd", &self.fd.as_raw_fd())
            .field("size", &self.size)
            .field("token", &format_args!("{:016x}", self.token))
            .finish()
    }
}

impl MemoryObject {
    /// A new object of `size` zero bytes (a multiple of the page size, at most [`MAX_BYTES`]).
    ///
    /// # Errors
    /// [`SharedMemoryError::Size`] or [`SharedMemoryError::Granularity`] for the size; a
    /// system error (no descriptors, no memory) otherwise.
    pub fn create(size: u64) -> Result<MemoryObject> {
        let len = check_size("memory object", size)?;
        check_granular("memory object size", size)?;
        raise_descriptor_limit();
        let token = random_token()?;
        let name = CString::new(format!("{NAME_PREFIX}{token:016x}"))
            .map_err(|_| SharedMemoryError::NotShareable("memory object name".into()))?;
        // SAFETY: `name` is NUL-terminated; the flags are valid for memfd_create.
        let raw = unsafe {
            libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING)
        };
        if raw < 0 {
            return Err(SharedMemoryError::last("memfd_create"));
        }
        // SAFETY: `raw` is a fresh descriptor no one else owns.
        let fd = move_high(unsafe { OwnedFd::from_raw_fd(raw) });
        let size_off = libc::off_t::try_from(len).map_err(|_| SharedMemoryError::Size {
            what: "memory object",
            size,
            limit: MAX_BYTES,
        })?;
        // SAFETY: `fd` is our memfd; ftruncate only sets its size.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), size_off) } != 0 {
            return Err(SharedMemoryError::last("ftruncate of a memory object"));
        }
        let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
        // SAFETY: adding seals to our own memfd.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
            return Err(SharedMemoryError::last("sealing a memory object"));
        }
        Ok(MemoryObject { fd, size, token })
    }

    /// Checks that `fd` is a memory object whose size no one can change, and takes it; its
    /// size must be a multiple of the page size unless `any_size`.
    fn adopt(fd: OwnedFd, what: &str, any_size: bool) -> Result<MemoryObject> {
        // SAFETY: F_GET_SEALS reads the seals of an open file; other files give EINVAL.
        let seals = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) };
        if seals < 0 {
            return Err(SharedMemoryError::NotShareable(format!(
                "{what} is not a memory object (memfd): {}",
                std::io::Error::last_os_error()
            )));
        }
        if seals & libc::F_SEAL_SHRINK == 0 {
            return Err(SharedMemoryError::NotShareable(format!(
                "{what} is a memory object that can still be shrunk (no F_SEAL_SHRINK): a mapping of it could fault"
            )));
        }
        // SAFETY: `st` is a valid out-parameter for fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above, on our own descriptor.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
            return Err(SharedMemoryError::last(format!("fstat of {what}")));
        }
        let size = u64::try_from(st.st_size).unwrap_or(0);
        check_size("memory object", size)?;
        if !any_size {
            check_granular("memory object size", size)?;
        }
        let token = token_in_link(&link_of(fd.as_fd())?).unwrap_or(0);
        Ok(MemoryObject { fd, size, token })
    }

    /// A memory object received as a descriptor (`hipMemImportFromShareableHandle`): the
    /// caller keeps `fd`; this holds a duplicate.
    ///
    /// # Errors
    /// [`SharedMemoryError::NotShareable`] for a descriptor that is not a memory object sealed
    /// against shrinking (a regular file, a pipe, an unsealed memfd); system errors.
    pub fn import(fd: BorrowedFd<'_>) -> Result<MemoryObject> {
        let own = duplicate(fd, "the descriptor to import")?;
        MemoryObject::adopt(own, &format!("descriptor {}", fd.as_raw_fd()), false)
    }

    /// A memory object of any non-zero size received as a descriptor
    /// (`hipImportExternalMemory`): the caller keeps `fd`; this holds a duplicate. Its last
    /// page may be partly past the end of the object; [`map`](Self::map) maps whole pages up
    /// to the end rounded up to a page, which the kernel allows (the bytes past the end read
    /// as zero and nothing there is kept), and whoever enters a mapping in an allocation
    /// table enters only bytes inside the object.
    ///
    /// # Errors
    /// As [`import`](Self::import), except for the size's granularity.
    pub fn import_any_size(fd: BorrowedFd<'_>) -> Result<MemoryObject> {
        let own = duplicate(fd, "the descriptor to import")?;
        MemoryObject::adopt(own, &format!("descriptor {}", fd.as_raw_fd()), true)
    }

    /// The memory object another process `pid` holds as descriptor `fd`, which must carry
    /// `token` in its name (so a recycled pid or descriptor opens nothing). Reopened through
    /// `/proc/<pid>/fd/<fd>` (any process of the same user may), else taken with
    /// `pidfd_getfd` (which needs the right to trace `pid`).
    ///
    /// # Errors
    /// [`SharedMemoryError::NotShareable`] when the process or descriptor is gone, is not a
    /// sealed memory object, or carries another token; system errors.
    pub fn open_remote(pid: u32, fd: i32, token: u64) -> Result<MemoryObject> {
        if pid == 0 || i32::try_from(pid).is_err() || fd < 0 {
            return Err(SharedMemoryError::NotShareable(format!(
                "no process {pid} descriptor {fd}"
            )));
        }
        let what = format!("descriptor {fd} of process {pid}");
        let path = CString::new(format!("/proc/{pid}/fd/{fd}"))
            .map_err(|_| SharedMemoryError::NotShareable(what.clone()))?;
        // SAFETY: `path` is NUL-terminated; the descriptor returned is owned below.
        let raw = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        let own = if raw >= 0 {
            // SAFETY: a fresh descriptor no one else owns.
            unsafe { OwnedFd::from_raw_fd(raw) }
        } else {
            let reopen = std::io::Error::last_os_error();
            take_with_pidfd(pid, fd).map_err(|e| {
                SharedMemoryError::NotShareable(format!(
                    "{what} cannot be opened: /proc: {reopen}; pidfd_getfd: {e}"
                ))
            })?
        };
        let object = MemoryObject::adopt(own, &what, false)?;
        if object.token != token {
            return Err(SharedMemoryError::NotShareable(format!(
                "{what} is not the memory object the handle names (token {:016x}, handle {token:016x}): the process or descriptor was recycled",
                object.token
            )));
        }
        Ok(object)
    }

    /// A new descriptor of this object for the caller to keep or pass on
    /// (`hipMemExportToShareableHandle`), close-on-exec.
    ///
    /// # Errors
    /// A system error (no descriptors left).
    pub fn export(&self) -> Result<OwnedFd> {
        duplicate(self.fd.as_fd(), "a memory object")
    }

    /// Bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The random token in its name (0 for an imported object rocload did not make).
    pub fn token(&self) -> u64 {
        self.token
    }

    /// The descriptor (what another process reopens).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Checks that `[offset, offset + len)` is page-aligned and inside the object's pages
    /// (its size rounded up to a page: only an object imported with
    /// [`import_any_size`](Self::import_any_size) has a partial last page).
    fn check_part(&self, offset: u64, len: u64) -> Result<usize> {
        let n = check_size("mapping", len)?;
        check_granular("mapping offset", offset)?;
        check_granular("mapping size", len)?;
        let pages_end = self.size.checked_next_multiple_of(page_size());
        if offset
            .checked_add(len)
            .is_none_or(|end| pages_end.is_none_or(|limit| end > limit))
        {
            return Err(SharedMemoryError::Range {
                what: "mapping",
                address: offset,
                size: len,
                reason: format!("runs past the end of the {}-byte memory object", self.size),
            });
        }
        Ok(n)
    }

    /// Maps `[offset, offset + len)` of the object anywhere, readable and writable.
    ///
    /// # Errors
    /// A range that is not page-aligned or not inside the object; a system error.
    pub fn map(&self, offset: u64, len: u64) -> Result<Mapping> {
        let n = self.check_part(offset, len)?;
        let off = libc::off_t::try_from(offset).map_err(|_| SharedMemoryError::Range {
            what: "mapping",
            address: offset,
            size: len,
            reason: "offset too large".into(),
        })?;
        // SAFETY: a new shared mapping of our descriptor at an address the kernel chooses;
        // nothing else is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                n,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                self.fd.as_raw_fd(),
                off,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(SharedMemoryError::last("mmap of a memory object"));
        }
        Ok(Mapping {
            base: ptr as u64,
            len: n,
        })
    }
}

/// `fd` of process `pid`, taken with `pidfd_open` + `pidfd_getfd`.
fn take_with_pidfd(pid: u32, fd: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if pidfd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor no one else owns.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) };
    // SAFETY: pidfd_getfd takes a pidfd, a descriptor number and flags; returns a new
    // descriptor (close-on-exec) or -1.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor no one else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(got as RawFd) })
}

/// A memory object mapped at an address the kernel chose; unmapped on drop. Whoever drops it
/// has made sure nothing touches the range any more (the allocation tables forgot it and the
/// dispatches that could reach it ended).
#[derive(Debug)]
pub struct Mapping {
    base: u64,
    len: usize,
}

impl Mapping {
    /// First address.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Bytes.
    pub fn len(&self) -> u64 {
        self.len as u64
    }

    /// Whether it is empty (never: mappings have at least one page).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the range was mapped by `MemoryObject::map` and is unmapped once, here.
        if unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) } != 0 {
            tracing::debug!(base = format_args!("{:#x}", self.base), error = %std::io::Error::last_os_error(), "munmap of a memory object failed");
        }
    }
}

/// `hipMemAccessFlags` as host page protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// Nothing may touch it.
    None,
    /// Reads only.
    Read,
    /// Reads and writes.
    ReadWrite,
}

impl Protection {
    fn bits(self) -> libc::c_int {
        match self {
            Protection::None => libc::PROT_NONE,
            Protection::Read => libc::PROT_READ,
            Protection::ReadWrite => libc::PROT_READ | libc::PROT_WRITE,
        }
    }
}

/// Address space reserved with nothing accessible (`PROT_NONE`, no memory committed), into
/// which parts of memory objects are mapped at fixed addresses. Released on drop.
#[derive(Debug)]
pub struct Reservation {
    base: u64,
    len: usize,
}

impl Reservation {
    /// Reserves `size` bytes aligned to `alignment` (0: the page size; else a power of two),
    /// at `hint` if that range is free and aligned, else wherever the kernel finds room.
    ///
    /// # Errors
    /// A size that is 0, beyond [`MAX_BYTES`] or not a multiple of the page size; an
    /// alignment that is not a power of two or beyond [`MAX_BYTES`]; a system error (no
    /// address space).
    pub fn new(size: u64, alignment: u64, hint: u64) -> Result<Reservation> {
        let len = check_size("reservation", size)?;
        check_granular("reservation size", size)?;
        let page = page_size();
        let align = if alignment == 0 { page } else { alignment };
        if !align.is_power_of_two() || align > MAX_BYTES {
            return Err(SharedMemoryError::Range {
                what: "reservation alignment",
                address: alignment,
                size,
                reason: "not a power of two of at most 16 TiB".into(),
            });
        }
        let align = align.max(page);
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
        if hint != 0 && hint % align == 0 && hint.checked_add(size).is_some() {
            // SAFETY: MAP_FIXED_NOREPLACE maps only where nothing is mapped (else fails).
            let ptr = unsafe {
                libc::mmap(
                    hint as *mut libc::c_void,
                    len,
                    libc::PROT_NONE,
                    flags | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            if ptr != libc::MAP_FAILED {
                if ptr as u64 == hint {
                    return Ok(Reservation { base: hint, len });
                }
                // A kernel that ignores the flag may place it elsewhere: give it back.
                // SAFETY: the range was just mapped by this call.
                unsafe { libc::munmap(ptr, len) };
            }
        }
        // Over-reserve by the alignment and trim both ends.
        let extra = align - page;
        let total = size
            .checked_add(extra)
            .filter(|t| *t <= MAX_BYTES + MAX_BYTES)
            .and_then(|t| usize::try_from(t).ok())
            .ok_or(SharedMemoryError::Size {
                what: "reservation",
                size,
                limit: MAX_BYTES,
            })?;
        // SAFETY: a new private anonymous mapping where the kernel finds room.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), total, libc::PROT_NONE, flags, -1, 0) };
        if ptr == libc::MAP_FAILED {
            return Err(SharedMemoryError::last("mmap of a reservation"));
        }
        let start = ptr as u64;
        let base = start.next_multiple_of(align);
        let head = (base - start) as usize;
        let tail = total - head - len;
        if head > 0 {
            // SAFETY: the head lies inside the mapping just made, before the kept range.
            unsafe { libc::munmap(ptr, head) };
        }
        if tail > 0 {
            // SAFETY: the tail lies inside the mapping just made, after the kept range.
            unsafe { libc::munmap((base + size) as *mut libc::c_void, tail) };
        }
        Ok(Reservation { base, len })
    }

    /// First address.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Bytes.
    pub fn len(&self) -> u64 {
        self.len as u64
    }

    /// Whether it is empty (never).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `[at, at + len)` lies inside.
    pub fn contains(&self, at: u64, len: u64) -> bool {
        at >= self.base
            && at
                .checked_add(len)
                .is_some_and(|end| end <= self.base + self.len as u64)
    }

    fn check_inside(&self, what: &'static str, at: u64, len: u64) -> Result<usize> {
        let n = check_size(what, len)?;
        check_granular("address", at)?;
        check_granular("size", len)?;
        if !self.contains(at, len) {
            return Err(SharedMemoryError::Range {
                what,
                address: at,
                size: len,
                reason: format!(
                    "not inside the reservation {:#x}+{:#x}",
                    self.base, self.len
                ),
            });
        }
        Ok(n)
    }

    /// Maps `[offset, offset + len)` of `object` at `at`, inside this reservation, with
    /// protection `prot`: whatever was mapped there is replaced. The caller has made sure
    /// nothing uses the range (it is reserved address space or a mapping no table records).
    ///
    /// # Errors
    /// A range outside the reservation or the object, not page-aligned; a system error.
    pub fn map_fixed(
        &self,
        at: u64,
        len: u64,
        object: &MemoryObject,
        offset: u64,
        prot: Protection,
    ) -> Result<()> {
        let n = self.check_inside("mapping", at, len)?;
        object.check_part(offset, len)?;
        let off = libc::off_t::try_from(offset).map_err(|_| SharedMemoryError::Range {
            what: "mapping",
            address: offset,
            size: len,
            reason: "offset too large".into(),
        })?;
        // SAFETY: the range lies inside this reservation (checked), which only this value's
        // owner maps into; MAP_FIXED replaces what was there, which the caller vouches no one
        // uses.
        let ptr = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                n,
                prot.bits(),
                libc::MAP_SHARED | libc::MAP_FIXED,
                object.fd.as_raw_fd(),
                off,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(SharedMemoryError::last(
                "mmap of a memory object at a fixed address",
            ));
        }
        Ok(())
    }

    /// Changes the protection of `[at, at + len)`, inside this reservation.
    ///
    /// # Errors
    /// A range outside the reservation; a system error.
    pub fn protect(&self, at: u64, len: u64, prot: Protection) -> Result<()> {
        let n = self.check_inside("protection change", at, len)?;
        // SAFETY: the range lies inside this reservation; mprotect changes only its pages'
        // protection.
        if unsafe { libc::mprotect(at as *mut libc::c_void, n, prot.bits()) } != 0 {
            return Err(SharedMemoryError::last("mprotect"));
        }
        Ok(())
    }

    /// Puts `[at, at + len)` back to reserved, inaccessible address space (what was mapped
    /// there is unmapped). The caller has made sure nothing touches the range any more.
    ///
    /// # Errors
    /// A range outside the reservation; a system error.
    pub fn unmap_fixed(&self, at: u64, len: u64) -> Result<()> {
        let n = self.check_inside("unmapping", at, len)?;
        // SAFETY: the range lies inside this reservation; MAP_FIXED replaces its pages with
        // fresh inaccessible ones, as the reservation was made.
        let ptr = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                n,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(SharedMemoryError::last(
                "mmap to unmap a range of a reservation",
            ));
        }
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: the range was reserved by `Reservation::new` and is released once, here;
        // its owner made sure nothing touches it any more.
        if unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) } != 0 {
            tracing::debug!(base = format_args!("{:#x}", self.base), error = %std::io::Error::last_os_error(), "munmap of a reservation failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(at: u64) -> u32 {
        // SAFETY: the tests read only pages they mapped readable.
        unsafe { std::ptr::read_volatile(at as *const u32) }
    }

    fn write(at: u64, value: u32) {
        // SAFETY: the tests write only pages they mapped writable.
        unsafe { std::ptr::write_volatile(at as *mut u32, value) }
    }

    /// Two views of one object (anywhere, and at a fixed place in a reservation) see each
    /// other's writes; unmapping puts the reservation back to inaccessible.
    #[test]
    fn two_mappings_of_one_object_share_their_bytes() {
        let page = page_size();
        let object = MemoryObject::create(4 * page).unwrap();
        assert_eq!(object.size(), 4 * page);
        let view = object.map(0, 4 * page).unwrap();
        let r = Reservation::new(8 * page, 0, 0).unwrap();
        r.map_fixed(
            r.base() + page,
            2 * page,
            &object,
            2 * page,
            Protection::ReadWrite,
        )
        .unwrap();
        write(view.base() + 2 * page + 8, 0xfeed);
        assert_eq!(read(r.base() + page + 8), 0xfeed);
        write(r.base() + 2 * page, 7);
        assert_eq!(read(view.base() + 3 * page), 7);
        r.protect(r.base() + page, 2 * page, Protection::Read)
            .unwrap();
        assert_eq!(read(r.base() + page + 8), 0xfeed);
        r.unmap_fixed(r.base() + page, 2 * page).unwrap();
        let e = crate::device::host_memory::check_mapped(r.base() + page, 4, false).unwrap_err();
        assert!(e.to_string().contains("---p"), "{e}");
        // The object keeps its bytes.
        assert_eq!(read(view.base() + 3 * page), 7);
    }

    #[test]
    fn reservations_are_aligned_bounded_and_honour_a_free_hint() {
        let page = page_size();
        let r = Reservation::new(4 * page, 1 << 21, 0).unwrap();
        assert_eq!(r.base() % (1 << 21), 0);
        assert_eq!(r.len(), 4 * page);
        let at = r.base() + (1 << 30);
        drop(r);
        // A hint is taken when free and aligned (the range a gigabyte on is very likely
        // free; if not, the reservation lands elsewhere, which is also correct).
        let h = Reservation::new(page, 0, at).unwrap();
        assert!(h.base() == at || h.base() % page == 0);
        for (size, align) in [
            (0, 0),
            (page + 1, 0),
            (MAX_BYTES + page, 0),
            (page, 3 * page),
        ] {
            assert!(Reservation::new(size, align, 0).is_err(), "{size} {align}");
        }
        let r = Reservation::new(2 * page, 0, 0).unwrap();
        let o = MemoryObject::create(page).unwrap();
        let outside = r.map_fixed(r.base() + 2 * page, page, &o, 0, Protection::ReadWrite);
        assert!(
            matches!(outside, Err(SharedMemoryError::Range { .. })),
            "{outside:?}"
        );
        let past = r.map_fixed(r.base(), 2 * page, &o, 0, Protection::ReadWrite);
        assert!(
            matches!(past, Err(SharedMemoryError::Range { .. })),
            "{past:?}"
        );
        let unaligned = r.map_fixed(r.base() + 1, page, &o, 0, Protection::ReadWrite);
        assert!(matches!(
            unaligned,
            Err(SharedMemoryError::Granularity { .. })
        ));
    }

    /// An object is exported as a descriptor and imported again (the same bytes); imports of
    /// what is not a sealed memory object are refused, never mapped.
    #[test]
    fn import_takes_only_sealed_memory_objects() {
        let page = page_size();
        let object = MemoryObject::create(page).unwrap();
        let exported = object.export().unwrap();
        let imported = MemoryObject::import(exported.as_fd()).unwrap();
        assert_eq!(imported.size(), page);
        assert_eq!(imported.token(), object.token());
        let a = object.map(0, page).unwrap();
        let b = imported.map(0, page).unwrap();
        write(a.base(), 42);
        assert_eq!(read(b.base()), 42);

        let file = tempfile::tempfile().unwrap();
        file.set_len(page).unwrap();
        let e = MemoryObject::import(file.as_fd()).unwrap_err();
        assert!(matches!(e, SharedMemoryError::NotShareable(_)), "{e}");
        // SAFETY: a plain memfd with no seals, owned below.
        let raw = unsafe { libc::memfd_create(c"unsealed".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(raw >= 0);
        // SAFETY: fresh descriptor.
        let unsealed = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: our own memfd.
        assert_eq!(unsafe { libc::ftruncate(raw, page as libc::off_t) }, 0);
        let e = MemoryObject::import(unsealed.as_fd()).unwrap_err();
        assert!(e.to_string().contains("F_SEAL_SHRINK"), "{e}");
        // The seal holds: the object cannot be shrunk by whoever holds it.
        // SAFETY: ftruncate on our own descriptor; it must fail.
        assert_ne!(unsafe { libc::ftruncate(exported.as_raw_fd(), 0) }, 0);
        for (offset, len) in [(0, 2 * page), (page, page), (1, page), (0, 0)] {
            assert!(object.map(offset, len).is_err(), "{offset} {len}");
        }
    }

    /// A remote open (here of this process's own descriptor, through /proc) finds the object
    /// only with the token its name carries.
    #[test]
    fn open_remote_checks_the_token() {
        let page = page_size();
        let object = MemoryObject::create(page).unwrap();
        let pid = std::process::id();
        let fd = object.fd().as_raw_fd();
        let again = MemoryObject::open_remote(pid, fd, object.token()).unwrap();
        let (a, b) = (object.map(0, page).unwrap(), again.map(0, page).unwrap());
        write(a.base() + 4, 99);
        assert_eq!(read(b.base() + 4), 99);
        let wrong = MemoryObject::open_remote(pid, fd, object.token() ^ 2).unwrap_err();
        assert!(wrong.to_string().contains("recycled"), "{wrong}");
        let gone = MemoryObject::open_remote(pid, 1 << 30, object.token()).unwrap_err();
        assert!(matches!(gone, SharedMemoryError::NotShareable(_)), "{gone}");
        assert!(MemoryObject::open_remote(0, fd, 1).is_err());
        assert!(MemoryObject::open_remote(pid, -1, 1).is_err());
        // A descriptor that is not a memory object (stdin, or whatever the harness gave).
        let null = std::fs::File::open("/dev/null").unwrap();
        let e = MemoryObject::open_remote(pid, null.as_raw_fd(), 1).unwrap_err();
        assert!(matches!(e, SharedMemoryError::NotShareable(_)), "{e}");
    }
}
