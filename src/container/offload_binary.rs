//! LLVM OffloadBinary (`.llvm.offloading`, magic `10 FF 10 AD`), listed read-only: the new
//! offload driver's pre-link container. Versions 1 (one entry, NUL-terminated strings),
//! 2 (many entries, sized strings) and 3 (adds an inflated size; compressed bodies are
//! reported as unsupported). Images are borrowed, never copied.

use super::{ContainerError, Format};
use crate::bytes::{slice_at, u16_at, u32_at, u64_at};

/// The 4-byte magic.
pub const OFFLOAD_BINARY_MAGIC: &[u8; 4] = &[0x10, 0xFF, 0x10, 0xAD];
const ENTRY_LEN: u64 = 40;

/// One image of an OffloadBinary.
#[derive(Debug, Clone)]
pub struct OffloadImage<'a> {
    /// Image kind: 1 object, 2 bitcode, 3 cubin, 4 fatbinary, 5 PTX, 6 SPIR-V.
    pub image_kind: u16,
    /// Producer (numbering depends on the version, see [`OffloadImage::offload_kind_name`]).
    pub offload_kind: u16,
    /// Entry flags.
    pub flags: u32,
    /// Key/value strings (`triple`, `arch`, …) in file order.
    pub strings: Vec<(&'a str, &'a str)>,
    /// Offset of the image from the binary's start.
    pub image_offset: u64,
    /// The image bytes.
    pub image: &'a [u8],
    version: u32,
}

impl<'a> OffloadImage<'a> {
    /// The value of string `key`.
    pub fn string(&self, key: &str) -> Option<&'a str> {
        self.strings
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }

    /// Image kind as LLVM names it.
    pub fn image_kind_name(&self) -> &'static str {
        match self.image_kind {
            1 => "object",
            2 => "bitcode",
            3 => "cubin",
            4 => "fatbinary",
            5 => "ptx",
            6 => "spirv",
            _ => "unknown",
        }
    }

    /// Offload kind as LLVM names it: an enumeration up to version 2, bit flags from 3.
    pub fn offload_kind_name(&self) -> &'static str {
        match (self.version >= 3, self.offload_kind) {
            (_, 1) => "openmp",
            (_, 2) => "cuda",
            (false, 3) | (true, 4) => "hip",
            (true, 8) => "sycl",
            _ => "unknown",
        }
    }

    /// A bundle-style id, `<kind>-<triple>-<arch>` with the empty environment of AMDHSA
    /// triples kept (`hip-amdgcn-amd-amdhsa--gfx1030`), so targets select it as they select
    /// bundle entries.
    pub fn id(&self) -> String {
        let triple = self.string("triple").unwrap_or("unknown");
        let sep = if triple.split('-').count() == 3 {
            "--"
        } else {
            "-"
        };
        format!(
            "{}-{}{}{}",
            self.offload_kind_name(),
            triple,
            sep,
            self.string("arch").unwrap_or("")
        )
    }
}

/// One OffloadBinary borrowed from its input.
#[derive(Debug, Clone)]
pub struct OffloadBinary<'a> {
    data: &'a [u8],
    /// Format version.
    pub version: u32,
    images: Vec<OffloadImage<'a>>,
}

impl<'a> OffloadBinary<'a> {
    /// Parses the binary at `data[0]`; `data` may run past its end.
    pub fn parse(data: &'a [u8]) -> Result<Self, ContainerError> {
        let trunc = |field, offset, needed| {
            ContainerError::truncated(
                Format::OffloadBinary,
                field,
                None,
                offset,
                needed,
                data.len() as u64,
            )
        };
        let inv = |field, entry, offset, reason: String| {
            ContainerError::invalid(Format::OffloadBinary, field, entry, offset, reason)
        };
        if slice_at(data, 0, 4) != Some(&OFFLOAD_BINARY_MAGIC[..]) {
            return Err(inv("magic", None, 0, "not 10 ff 10 ad".into()));
        }
        let version = u32_at(data, 4).ok_or_else(|| trunc("version", 4, 4))?;
        if !(1..=3).contains(&version) {
            return Err(ContainerError::Unsupported {
                format: Format::OffloadBinary,
                field: "version",
                offset: 4,
                value: version.into(),
            });
        }
        let header_len = if version >= 3 { 40 } else { 32 };
        let size = u64_at(data, 8).ok_or_else(|| trunc("size", 8, 8))?;
        let entries_offset = u64_at(data, 16).ok_or_else(|| trunc("entries offset", 16, 8))?;
        let count_or_size = u64_at(data, 24).ok_or_else(|| trunc("entry count", 24, 8))?;
        if size < header_len {
            return Err(inv(
                "size",
                None,
                8,
                format!("{size} is smaller than the {header_len}-byte header"),
            ));
        }
        let data = slice_at(data, 0, size).ok_or_else(|| trunc("binary", 0, size))?;
        if version >= 3 {
            let inflated = u64_at(data, 32).ok_or_else(|| trunc("inflated size", 32, 8))?;
            if inflated != 0 {
                return Err(ContainerError::Unsupported {
                    format: Format::OffloadBinary,
                    field: "compressed body of inflated size",
                    offset: 32,
                    value: inflated,
                });
            }
        }
        // v1 stores one entry and its size in the field v2 uses for the count.
        let count = if version == 1 { 1 } else { count_or_size };
        let table_len = count.checked_mul(ENTRY_LEN).filter(|l| {
            entries_offset
                .checked_add(*l)
                .is_some_and(|end| end <= size)
        });
        let Some(_) = table_len else {
            return Err(trunc(
                "entry table",
                entries_offset,
                count.saturating_mul(ENTRY_LEN),
            ));
        };
        let string_entry_len: u64 = if version == 1 { 16 } else { 24 };
        let mut images = Vec::with_capacity(count as usize);
        for i in 0..count {
            let at = entries_offset + i * ENTRY_LEN;
            let e = Some(i);
            let field = |off: u64, len: u64| {
                slice_at(data, at + off, len).ok_or_else(|| trunc("entry", at, ENTRY_LEN))
            };
            field(0, ENTRY_LEN)?;
            let image_kind = u16_at(data, at).unwrap_or(0);
            let offload_kind = u16_at(data, at + 2).unwrap_or(0);
            let flags = u32_at(data, at + 4).unwrap_or(0);
            let string_offset = u64_at(data, at + 8).unwrap_or(0);
            let num_strings = u64_at(data, at + 16).unwrap_or(0);
            let image_offset = u64_at(data, at + 24).unwrap_or(0);
            let image_size = u64_at(data, at + 32).unwrap_or(0);
            let image = slice_at(data, image_offset, image_size).ok_or_else(|| {
                ContainerError::truncated(
                    Format::OffloadBinary,
                    "image",
                    e,
                    image_offset,
                    image_size,
                    size,
                )
            })?;
            let strings_len = num_strings
                .checked_mul(string_entry_len)
                .filter(|l| string_offset.checked_add(*l).is_some_and(|end| end <= size));
            if strings_len.is_none() {
                return Err(ContainerError::truncated(
                    Format::OffloadBinary,
                    "string map",
                    e,
                    string_offset,
                    num_strings.saturating_mul(string_entry_len),
                    size,
                ));
            }
            let mut strings = Vec::with_capacity(num_strings as usize);
            for s in 0..num_strings {
                let sat = string_offset + s * string_entry_len;
                let key_off = u64_at(data, sat).unwrap_or(0);
                let value_off = u64_at(data, sat + 8).unwrap_or(0);
                let key = c_str(data, key_off).ok_or_else(|| {
                    inv(
                        "string key",
                        e,
                        sat,
                        format!("no NUL-terminated UTF-8 string at {key_off:#x}"),
                    )
                })?;
                let value = if version == 1 {
                    c_str(data, value_off)
                } else {
                    let len = u64_at(data, sat + 16).unwrap_or(0);
                    slice_at(data, value_off, len).and_then(|b| std::str::from_utf8(b).ok())
                }
                .ok_or_else(|| {
                    inv(
                        "string value",
                        e,
                        sat + 8,
                        format!("no UTF-8 string at {value_off:#x}"),
                    )
                })?;
                strings.push((key, value));
            }
            images.push(OffloadImage {
                image_kind,
                offload_kind,
                flags,
                strings,
                image_offset,
                image,
                version,
            });
        }
        Ok(OffloadBinary {
            data,
            version,
            images,
        })
    }

    /// Size of the binary (its `size` field).
    pub fn size(&self) -> u64 {
        self.data.len() as u64
    }

    /// The images in entry order.
    pub fn images(&self) -> &[OffloadImage<'a>] {
        &self.images
    }
}

/// The NUL-terminated UTF-8 string at `offset`.
fn c_str(data: &[u8], offset: u64) -> Option<&str> {
    let rest = data.get(usize::try_from(offset).ok()?..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    std::str::from_utf8(&rest[..end]).ok()
}
