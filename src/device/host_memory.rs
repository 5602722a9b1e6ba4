//! Whether a range of the caller's host memory is really there: mapped in this process, all
//! of it, with the protection an access needs. HIP calls take host pointers on trust (a copy's
//! pageable side, `hipHostRegister`); the runtime reads or writes them on a queue thread or
//! lets kernels do so, where an unmapped or `PROT_NONE` page would crash the host. So a host
//! range is checked before anything touches it.
//!
//! Two ways, for two costs:
//!
//! - [`check_mapped`] (copies, per call): `madvise(MADV_POPULATE_READ/WRITE)` over the range's
//!   pages: one system call that fails with `ENOMEM` where nothing is mapped and `EINVAL` where
//!   the protection forbids the access, and otherwise faults the pages in as the copy would
//!   anyway (about 1 µs for a page, 55 µs per resident MiB here). Only when it fails, or on a
//!   kernel older than 5.14 that does not know the advice, is the answer taken from the maps;
//! - [`check_mapped_exact`] (registration): `/proc/self/maps`, which names every mapping with its
//!   protection and touches nothing (no page is faulted in, which matters for a large
//!   registration), at about 180 µs for 300 mappings, too slow for every copy.
//!
//! Both are checks at the call: a range the program unmaps from another thread afterwards is
//! its own contract broken, as with any HIP implementation. Not for guest memory the devices
//! own (the allocation tables know it).

use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a host range cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HostRangeError {
    /// The range runs past the end of the address space.
    #[error("{len} bytes at {address:#x} wrap the address space")]
    Wraps {
        /// First address.
        address: u64,
        /// Bytes.
        len: u64,
    },
    /// Part of the range is not mapped.
    #[error("{len} bytes at {address:#x}: nothing is mapped at {at:#x}")]
    Unmapped {
        /// First address.
        address: u64,
        /// Bytes.
        len: u64,
        /// The first unmapped address.
        at: u64,
    },
    /// Part of the range is mapped without the protection the access needs.
    #[error("{len} bytes at {address:#x}: the mapping at {at:#x} is {perms}, not {needed}")]
    Protection {
        /// First address.
        address: u64,
        /// Bytes.
        len: u64,
        /// Where the mapping that lacks it starts (or the range, if later).
        at: u64,
        /// Its protection, as `/proc/self/maps` writes it (`r--p`, `---p`).
        perms: String,
        /// What was needed (`readable` or `writable`).
        needed: &'static str,
    },
    /// The pages are mapped with the protection needed but cannot be faulted in (a file
    /// mapping past the end of its file, poisoned memory, no memory left).
    #[error("{len} bytes at {address:#x} cannot be faulted in ({reason})")]
    Inaccessible {
        /// First address.
        address: u64,
        /// Bytes.
        len: u64,
        /// The system's reason.
        reason: String,
    },
    /// `/proc/self/maps` could not be read, so the range could not be checked.
    #[error("{len} bytes at {address:#x} could not be checked: /proc/self/maps: {reason}")]
    Unverifiable {
        /// First address.
        address: u64,
        /// Bytes.
        len: u64,
        /// The read error.
        reason: String,
    },
}

/// `MADV_POPULATE_READ` and `MADV_POPULATE_WRITE` (Linux 5.14, every architecture; not in the
/// libc crate yet).
const MADV_POPULATE_READ: libc::c_int = 22;
const MADV_POPULATE_WRITE: libc::c_int = 23;

/// Set once the kernel turned the advice down as unknown: the maps decide from then on.
static NO_POPULATE: AtomicBool = AtomicBool::new(false);

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size)
        .ok()
        .filter(|s| s.is_power_of_two())
        .unwrap_or(4096)
}

/// Whether every page of `[address, address + len)` is still mapped, asked without touching
/// or faulting in any of them (`mincore`, one call per 4096 pages; about a microsecond for a
/// small range): what a dispatch asks of registered host memory before a kernel reaches it.
/// It does not see protections (`mprotect`): [`check_mapped`] does, at a higher cost.
pub fn is_mapped(address: u64, len: u64) -> bool {
    const CHUNK_PAGES: u64 = 4096;
    let page = page_size();
    let Some(end) = address.checked_add(len) else {
        return false;
    };
    let mut at = address & !(page - 1);
    let mut residency = [0u8; CHUNK_PAGES as usize];
    while at < end {
        let chunk = (end - at).min(CHUNK_PAGES * page);
        // SAFETY: `at` is page-aligned; `residency` has a byte for each of the at most
        // CHUNK_PAGES pages of `chunk`. mincore only reads the page tables; it fails with
        // ENOMEM where a page of the range is not mapped.
        let r = unsafe {
            libc::mincore(
                at as *mut libc::c_void,
                chunk as usize,
                residency.as_mut_ptr(),
            )
        };
        if r != 0 {
            return false;
        }
        at += chunk;
    }
    true
}

/// Checks that `[address, address + len)` is mapped and readable (and writable when `write`),
/// faulting its pages in (see the module documentation). An empty range is fine.
///
/// # Errors
/// A [`HostRangeError`] naming the first address that fails.
pub fn check_mapped(address: u64, len: u64, write: bool) -> Result<(), HostRangeError> {
    if len == 0 {
        return Ok(());
    }
    let end = address
        .checked_add(len)
        .ok_or(HostRangeError::Wraps { address, len })?;
    if NO_POPULATE.load(Ordering::Relaxed) {
        return check_mapped_exact(address, len, write);
    }
    let page = page_size();
    let start = address & !(page - 1);
    let Some(stop) = end.checked_next_multiple_of(page) else {
        return Err(HostRangeError::Wraps { address, len });
    };
    let advice = if write {
        MADV_POPULATE_WRITE
    } else {
        MADV_POPULATE_READ
    };
    // SAFETY: the advice only faults pages in (as an access would, without making it); it
    // changes no mapping and no byte, and the kernel checks the range itself.
    let rc = unsafe { libc::madvise(start as *mut libc::c_void, (stop - start) as usize, advice) };
    if rc == 0 {
        return Ok(());
    }
    let errno = std::io::Error::last_os_error();
    // The maps say exactly what is wrong; if they find nothing wrong, EINVAL meant the advice
    // (an older kernel, or a mapping it does not apply to, such as device I/O memory), and
    // anything else is a real failure to fault the pages in.
    check_mapped_exact(address, len, write)?;
    match errno.raw_os_error() {
        Some(libc::EINVAL) => {
            if errno_means_unknown_advice(page) {
                NO_POPULATE.store(true, Ordering::Relaxed);
            }
            Ok(())
        }
        _ => Err(HostRangeError::Inaccessible {
            address,
            len,
            reason: errno.to_string(),
        }),
    }
}

/// Whether the kernel rejects the advice itself (on a page of our own that surely allows it).
fn errno_means_unknown_advice(page: u64) -> bool {
    let probe = [0u8; 1];
    let at = (probe.as_ptr() as u64) & !(page - 1);
    // SAFETY: as in `check_mapped`: the advice touches no byte; the page is our stack.
    unsafe { libc::madvise(at as *mut libc::c_void, page as usize, MADV_POPULATE_READ) != 0 }
}

/// Checks that `[address, address + len)` is mapped and readable (and writable when `write`)
/// from `/proc/self/maps`, touching nothing.
///
/// # Errors
/// A [`HostRangeError`] naming the first address that fails.
pub fn check_mapped_exact(address: u64, len: u64, write: bool) -> Result<(), HostRangeError> {
    if len == 0 {
        return Ok(());
    }
    let end = address
        .checked_add(len)
        .ok_or(HostRangeError::Wraps { address, len })?;
    let unverifiable = |e: std::io::Error| HostRangeError::Unverifiable {
        address,
        len,
        reason: e.to_string(),
    };
    let file = std::fs::File::open("/proc/self/maps").map_err(unverifiable)?;
    let mut cursor = address;
    // Lines are sorted by address; walk the mappings covering the range, without gaps.
    for line in BufReader::new(file).lines() {
        let line = line.map_err(unverifiable)?;
        let Some((from, to, perms)) = parse_line(&line) else {
            continue;
        };
        if to <= cursor {
            continue;
        }
        if from > cursor {
            break;
        }
        let bytes = perms.as_bytes();
        let (readable, writable) = (bytes.first() == Some(&b'r'), bytes.get(1) == Some(&b'w'));
        if !readable || (write && !writable) {
            return Err(HostRangeError::Protection {
                address,
                len,
                at: cursor,
                perms: perms.to_owned(),
                needed: if readable { "writable" } else { "readable" },
            });
        }
        cursor = to;
        if cursor >= end {
            return Ok(());
        }
    }
    Err(HostRangeError::Unmapped {
        address,
        len,
        at: cursor,
    })
}

/// `start-end perms ...` of one line of `/proc/self/maps`.
fn parse_line(line: &str) -> Option<(u64, u64, &str)> {
    let mut fields = line.split_ascii_whitespace();
    let (from, to) = fields.next()?.split_once('-')?;
    let perms = fields.next()?;
    Some((
        u64::from_str_radix(from, 16).ok()?,
        u64::from_str_radix(to, 16).ok()?,
        perms,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Anonymous pages with `prot`, unmapped when dropped.
    struct Pages {
        base: *mut libc::c_void,
        len: usize,
    }

    impl Pages {
        fn new(pages: usize, prot: libc::c_int) -> Pages {
            let len = pages * page_size() as usize;
            // SAFETY: a fresh anonymous private mapping; nothing else refers to it.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    prot,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(base, libc::MAP_FAILED);
            Pages { base, len }
        }

        fn at(&self, page: usize) -> u64 {
            self.base as u64 + (page as u64) * page_size()
        }
    }

    impl Drop for Pages {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, unmapped once.
            unsafe { libc::munmap(self.base, self.len) };
        }
    }

    #[test]
    fn ranges_are_mapped_with_the_protection_asked_for() {
        let page = page_size();
        let rw = Pages::new(4, libc::PROT_READ | libc::PROT_WRITE);
        let ro = Pages::new(2, libc::PROT_READ);
        let none = Pages::new(2, libc::PROT_NONE);
        // A hole: the middle page of three, unmapped.
        let holed = Pages::new(3, libc::PROT_READ | libc::PROT_WRITE);
        // SAFETY: the middle page of our own mapping.
        let unmapped = unsafe { libc::munmap(holed.at(1) as *mut libc::c_void, page as usize) };
        assert_eq!(unmapped, 0);
        for check in [check_mapped, check_mapped_exact] {
            assert_eq!(check(rw.at(0) + 7, 3 * page, true), Ok(()));
            assert_eq!(check(ro.at(0), 2 * page, false), Ok(()));
            assert_eq!(check(rw.at(0), 0, true), Ok(()));
            assert!(
                matches!(
                    check(ro.at(0), 16, true),
                    Err(HostRangeError::Protection {
                        needed: "writable",
                        ..
                    })
                ),
                "{:?}",
                check(ro.at(0), 16, true)
            );
            assert!(matches!(
                check(none.at(0) + 100, 16, false),
                Err(HostRangeError::Protection {
                    needed: "readable",
                    ..
                })
            ));
            assert_eq!(
                check(holed.at(0), 3 * page, false),
                Err(HostRangeError::Unmapped {
                    address: holed.at(0),
                    len: 3 * page,
                    at: holed.at(1)
                })
            );
            assert!(matches!(
                check(rw.at(0), u64::MAX, true),
                Err(HostRangeError::Wraps { .. })
            ));
            // The rest of the address space from a mapped page: wraps, or unmapped past it.
            assert!(check(rw.at(0), u64::MAX - rw.at(0), false).is_err());
        }
        let stack = [1u8; 64];
        assert_eq!(check_mapped(stack.as_ptr() as u64, 64, false), Ok(()));
        let e = check_mapped(8, 16, false).unwrap_err();
        assert!(e.to_string().contains("nothing is mapped at 0x8"), "{e}");
    }
}
