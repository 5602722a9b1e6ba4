//! The `HIPF` wrapper that clang passes to `__hipRegisterFatBinary`, and measuring the
//! container behind it from its header alone.
//!
//! Registration must be O(1) and survive any input, so [`wrapper_binary`] only checks the
//! wrapper and returns the pointer. [`measure`] (run at first use) finds the container's
//! extent, reading our own memory through `process_vm_readv`, which reports an unmapped
//! address as an error instead of crashing the host program, and then checks that every page
//! of the extent is readable before handing out a slice.

use std::ffi::c_void;

use super::probe::Probe;
use super::{ContainerError, Format, ReadOptions};

/// `"HIPF"` as a little-endian u32.
pub const HIPF_MAGIC: u32 = 0x4849_5046;
/// `"HIPK"`: clr's wrapper whose binary is msgpack metadata (kpack); recognised, not read.
pub const HIPK_MAGIC: u32 = 0x4B50_4948;

/// The wrapper clang emits in `.hipFatBinSegment`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct FatbinWrapper {
    /// [`HIPF_MAGIC`].
    pub magic: u32,
    /// 1.
    pub version: u32,
    /// The fat binary (a bundle or a compressed bundle).
    pub binary: *const c_void,
    /// Unused.
    pub unused: *const c_void,
}

/// Reads the wrapper at `wrapper` and returns its binary pointer. O(1): the binary itself is
/// not touched.
///
/// # Safety
/// `wrapper` must be null or point to readable memory of `size_of::<FatbinWrapper>()` bytes
/// (it is read through `process_vm_readv`, so an unmapped address is an error, not a crash).
pub unsafe fn wrapper_binary(wrapper: *const c_void) -> Result<*const u8, ContainerError> {
    let mut raw = [0u8; std::mem::size_of::<FatbinWrapper>()];
    if wrapper.is_null() || !read_own_memory(wrapper as usize, &mut raw) {
        return Err(ContainerError::invalid(
            Format::Wrapper,
            "wrapper",
            None,
            wrapper as u64,
            "not readable",
        ));
    }
    let magic = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
    let version = u32::from_le_bytes([raw[4], raw[5], raw[6], raw[7]]);
    let mut ptr = [0u8; 8];
    ptr.copy_from_slice(&raw[8..16]);
    let binary = usize::from_le_bytes(ptr) as *const u8;
    match magic {
        HIPF_MAGIC => {}
        HIPK_MAGIC => {
            return Err(ContainerError::Unsupported {
                format: Format::Wrapper,
                field: "HIPK (kpack) wrapper magic",
                offset: 0,
                value: magic.into(),
            })
        }
        _ => {
            return Err(ContainerError::invalid(
                Format::Wrapper,
                "magic",
                None,
                0,
                format!("{magic:#010x} is not HIPF"),
            ))
        }
    }
    if version != 1 {
        return Err(ContainerError::Unsupported {
            format: Format::Wrapper,
            field: "version",
            offset: 4,
            value: version.into(),
        });
    }
    if binary.is_null() {
        return Err(ContainerError::invalid(
            Format::Wrapper,
            "binary pointer",
            None,
            8,
            "null",
        ));
    }
    Ok(binary)
}

/// Copies `buf.len()` bytes of this process's memory at `addr`; false if any is unmapped.
fn read_own_memory(addr: usize, buf: &mut [u8]) -> bool {
    if buf.is_empty() {
        return true;
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut c_void,
        iov_len: buf.len(),
    };
    // SAFETY: process_vm_readv writes only into `buf` (described by `local`) and reads our
    // own address space through the kernel, which reports unmapped addresses as EFAULT.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    n == buf.len() as isize
}

/// Header reads behind a raw pointer, with no known length.
struct MemoryProbe {
    base: usize,
    limit: u64,
}

impl Probe for MemoryProbe {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<bool, ContainerError> {
        let end = offset.checked_add(buf.len() as u64);
        if end.is_none_or(|e| e > self.limit) {
            return Ok(false);
        }
        let Some(addr) = usize::try_from(offset)
            .ok()
            .and_then(|o| self.base.checked_add(o))
        else {
            return Ok(false);
        };
        Ok(read_own_memory(addr, buf))
    }

    fn known_len(&self) -> Option<u64> {
        None
    }
}

/// Measures the container at `binary` from its header alone and returns it as a slice.
///
/// Plain bundles end at their farthest entry, compressed bundles v2/v3 at their total size,
/// v1 bundles at the end of their zstd frame or zlib stream, code objects at their farthest
/// table or section.
///
/// # Safety
/// `binary` must point to a container that stays mapped and unmodified for `'static` (true of
/// the fat binaries in a loaded image while it is loaded; the runtime keeps its own copy if
/// the image may be unloaded).
pub unsafe fn measure(
    binary: *const u8,
    options: &ReadOptions,
) -> Result<&'static [u8], ContainerError> {
    let mut probe = MemoryProbe {
        base: binary as usize,
        limit: options.limits.max_inflated_size,
    };
    let mut magic = [0u8; 24];
    let head = if probe.read_at(0, &mut magic)? {
        &magic[..]
    } else {
        &magic[..0]
    };
    let extent = if head.starts_with(super::BUNDLE_MAGIC) {
        super::bundle::read_table(&mut probe, &options.limits)?.extent
    } else if head.starts_with(super::CCOB_MAGIC) {
        let header = super::CcobHeader::read(&mut probe, options)?;
        header.extent(&mut probe)?
    } else if head.starts_with(b"\x7fELF") {
        super::host_elf::elf_extent(&mut probe)?
    } else {
        return Err(ContainerError::UnknownFormat {
            offset: binary as u64,
            head: super::error::hex_head(head),
        });
    };
    if extent > options.limits.max_inflated_size {
        return Err(ContainerError::LimitExceeded {
            format: Format::Wrapper,
            field: "fat binary extent",
            entry: super::EntryIndex(None),
            offset: binary as u64,
            value: extent,
            limit: options.limits.max_inflated_size,
        });
    }
    // Every page the slice covers must be mapped, or touching the payload would crash.
    let page = 4096usize;
    let start = binary as usize;
    let mut addr = start;
    let end = start.saturating_add(extent as usize);
    let mut byte = [0u8; 1];
    while addr < end {
        if !read_own_memory(addr, &mut byte) {
            return Err(ContainerError::truncated(
                Format::Wrapper,
                "fat binary (unmapped memory)",
                None,
                (addr - start) as u64,
                extent,
                (addr - start) as u64,
            ));
        }
        addr = (addr / page + 1) * page;
    }
    if extent > 0 && !read_own_memory(end - 1, &mut byte) {
        return Err(ContainerError::truncated(
            Format::Wrapper,
            "fat binary (unmapped memory)",
            None,
            extent - 1,
            1,
            extent - 1,
        ));
    }
    tracing::debug!(
        address = start,
        extent,
        "measured fat binary behind pointer"
    );
    // SAFETY: every page of [binary, binary + extent) is mapped (checked above), and the
    // caller guarantees it stays so, unmodified, for 'static.
    Ok(unsafe { std::slice::from_raw_parts(binary, extent as usize) })
}

#[cfg(test)]
// Test code: pointers are the test's own (or deliberately bad, which is what is tested).
#[allow(clippy::undocumented_unsafe_blocks)]
mod tests {
    use super::*;

    #[test]
    fn measures_a_bundle_behind_a_pointer_and_survives_garbage() {
        let bundle =
            crate::container::write_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx1030", b"code")], 4096);
        let mut padded = bundle.clone();
        padded.extend_from_slice(&[0xAA; 5000]);
        let leaked: &'static [u8] = Box::leak(padded.into_boxed_slice());
        let wrapper = FatbinWrapper {
            magic: HIPF_MAGIC,
            version: 1,
            binary: leaked.as_ptr().cast(),
            unused: std::ptr::null(),
        };
        let ptr = unsafe { wrapper_binary((&wrapper as *const FatbinWrapper).cast()) }.unwrap();
        let slice = unsafe { measure(ptr, &ReadOptions::default()) }.unwrap();
        assert_eq!(slice, &bundle[..]);
        // An unmapped wrapper and binary are errors, not crashes.
        assert!(unsafe { wrapper_binary(16 as *const c_void) }.is_err());
        assert!(unsafe { measure(16 as *const u8, &ReadOptions::default()) }.is_err());
        let bad = FatbinWrapper {
            magic: 0x1234,
            ..wrapper
        };
        assert!(unsafe { wrapper_binary((&bad as *const FatbinWrapper).cast()) }.is_err());
    }
}
