//! ELF files as containers: the fat-binary sections of a host executable, shared library or
//! relocatable object, and the extent of an ELF image embedded in a larger range.
//!
//! Host files are read with the crate's ELF reader ([`crate::elf`]); only the section table is
//! read here, never the (possibly huge) symbol tables of a host library.

use super::probe::Probe;
use super::{ContainerError, Format};
use crate::elf::ExtentError;

/// A fat-binary section of a host ELF file.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct FatBinarySection<'a> {
    /// `.hip_fatbin` or `.llvm.offloading`.
    pub name: &'static str,
    /// Offset of the section in the file.
    pub offset: u64,
    /// The section's bytes.
    pub data: &'a [u8],
}

/// The sections of a host ELF file that hold fat binaries, in file order. A file with none
/// is [`ContainerError::NoFatBinary`].
pub fn fat_binary_sections(data: &[u8]) -> Result<Vec<FatBinarySection<'_>>, ContainerError> {
    let mut found = Vec::new();
    for section in crate::elf::sections(data)? {
        let name = match section.name {
            ".hip_fatbin" => ".hip_fatbin",
            ".llvm.offloading" => ".llvm.offloading",
            _ => continue,
        };
        if !section.has_file_bytes() {
            continue;
        }
        let (offset, size) = (section.offset, section.size);
        let bytes = crate::bytes::slice_at(data, offset, size).ok_or_else(|| {
            ContainerError::truncated(
                Format::HostElf,
                "fat-binary section",
                None,
                offset,
                size,
                data.len() as u64,
            )
        })?;
        tracing::debug!(section = name, offset, size, "found fat-binary section");
        found.push(FatBinarySection {
            name,
            offset,
            data: bytes,
        });
    }
    if found.is_empty() {
        return Err(ContainerError::NoFatBinary);
    }
    found.sort_by_key(|s| s.offset);
    Ok(found)
}

/// How many bytes an ELF64 little-endian image occupies: the farthest of its headers, its
/// section and program header tables, and every section's and segment's file bytes
/// ([`crate::elf::extent`] over the probe).
pub(crate) fn elf_extent<P: Probe + ?Sized>(probe: &mut P) -> Result<u64, ContainerError> {
    let known_len = probe.known_len();
    crate::elf::extent(|offset, buf| probe.read_at(offset, buf), known_len).map_err(|e| match e {
        ExtentError::Elf(e) => ContainerError::HostElf(e),
        ExtentError::Source(e) => e,
    })
}
