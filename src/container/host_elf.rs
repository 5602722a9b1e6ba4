//! ELF files as containers: the fat-binary sections of a host executable, shared library or
//! relocatable object, and the extent of an ELF image embedded in a larger range.
//!
//! Host files are parsed with the `object` crate; only section locations are read here.

use object::{Object, ObjectSection};

use super::probe::{FieldReader, Probe};
use super::{ContainerError, Format};

/// A fat-binary section of a host ELF file.
#[derive(Debug, Clone, Copy)]
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
    let file = object::File::parse(data).map_err(|e| ContainerError::HostElf(e.to_string()))?;
    let mut found = Vec::new();
    for section in file.sections() {
        let name = match section.name() {
            Ok(".hip_fatbin") => ".hip_fatbin",
            Ok(".llvm.offloading") => ".llvm.offloading",
            _ => continue,
        };
        let Some((offset, size)) = section.file_range() else {
            continue;
        };
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
/// section and program header tables, and every section's and segment's file bytes.
pub(crate) fn elf_extent<P: Probe + ?Sized>(probe: &mut P) -> Result<u64, ContainerError> {
    let mut r = FieldReader {
        probe,
        format: Format::CodeObject,
    };
    let ident: [u8; 16] = r.bytes(0, "ELF identification", None)?;
    if ident[4] != 2 || ident[5] != 1 {
        return Err(ContainerError::invalid(
            Format::CodeObject,
            "ELF class",
            None,
            4,
            "only 64-bit little-endian ELF is an AMDGPU code object",
        ));
    }
    let phoff = r.u64(32, "e_phoff", None)?;
    let shoff = r.u64(40, "e_shoff", None)?;
    let phentsize = u64::from(r.u16(54, "e_phentsize")?);
    let phnum = u64::from(r.u16(56, "e_phnum")?);
    let shentsize = u64::from(r.u16(58, "e_shentsize")?);
    let shnum = u64::from(r.u16(60, "e_shnum")?);
    let overflow = |field| {
        ContainerError::invalid(
            Format::CodeObject,
            field,
            None,
            0,
            "offset plus size overflows",
        )
    };
    let mut extent: u64 = 64;
    if phnum > 0 {
        if phentsize < 56 {
            return Err(ContainerError::invalid(
                Format::CodeObject,
                "e_phentsize",
                None,
                54,
                format!("{phentsize} < 56"),
            ));
        }
        extent = extent.max(
            phoff
                .checked_add(phnum * phentsize)
                .ok_or_else(|| overflow("program header table"))?,
        );
        for i in 0..phnum {
            let at = phoff + i * phentsize;
            let offset = r.u64(at + 8, "p_offset", Some(i))?;
            let filesz = r.u64(at + 32, "p_filesz", Some(i))?;
            extent = extent.max(
                offset
                    .checked_add(filesz)
                    .ok_or_else(|| overflow("segment"))?,
            );
        }
    }
    if shnum > 0 {
        if shentsize < 64 {
            return Err(ContainerError::invalid(
                Format::CodeObject,
                "e_shentsize",
                None,
                58,
                format!("{shentsize} < 64"),
            ));
        }
        extent = extent.max(
            shoff
                .checked_add(shnum * shentsize)
                .ok_or_else(|| overflow("section header table"))?,
        );
        for i in 0..shnum {
            let at = shoff + i * shentsize;
            let kind = r.u32(at + 4, "sh_type")?;
            if kind == 8 {
                continue; // SHT_NOBITS occupies no file bytes
            }
            let offset = r.u64(at + 24, "sh_offset", Some(i))?;
            let size = r.u64(at + 32, "sh_size", Some(i))?;
            extent = extent.max(
                offset
                    .checked_add(size)
                    .ok_or_else(|| overflow("section"))?,
            );
        }
    }
    if let Some(len) = r.probe.known_len() {
        if extent > len {
            return Err(ContainerError::truncated(
                Format::CodeObject,
                "ELF image",
                None,
                0,
                extent,
                len,
            ));
        }
    }
    Ok(extent)
}
