//! Errors of the code-object layer: what is wrong with the ELF, and where.
//!
//! Every variant names a place: a byte offset in the file, a section, a symbol (table and
//! index), a relocation or a metadata key. Not for problems a loader would have with a
//! well-formed object (unsupported relocations, descriptor/metadata mismatches): those are
//! reported as values, not errors.

use crate::elf::ElfError;
pub use crate::elf::SymbolTableKind;
use crate::target::TargetError;

/// A code object could not be parsed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodeObjectError {
    /// A structure runs past the end of the file.
    #[error("truncated {what}: {size} bytes at offset {offset:#x} run past the end of the {file_len}-byte file")]
    Truncated {
        /// What was being read.
        what: String,
        /// Where it starts in the file.
        offset: u64,
        /// How many bytes it needs.
        size: u64,
        /// How long the file is.
        file_len: u64,
    },
    /// Not an ELF file at all.
    #[error("not an ELF file (magic {magic:02x?})")]
    NotElf {
        /// The first bytes found.
        magic: Vec<u8>,
    },
    /// An ELF file, but not an AMDGPU HSA code object.
    #[error("not an AMDGPU code object: {reason}")]
    NotAmdgpu {
        /// Which header field says so.
        reason: String,
    },
    /// An AMDGPU code object of a kind this layer does not read (code object v2, a
    /// relocatable `.o`, a future ABI version).
    #[error("unsupported code object: {reason}")]
    Unsupported {
        /// What exactly, with the header value.
        reason: String,
    },
    /// The target could not be decoded from the header.
    #[error("code object target: {0}")]
    Target(#[source] TargetError),
    /// A header or table entry holds an impossible value.
    #[error("invalid {what} at offset {offset:#x}: {reason}")]
    Invalid {
        /// What was being read (e.g. "program header 3").
        what: String,
        /// Where it is in the file.
        offset: u64,
        /// Why it is invalid.
        reason: String,
    },
    /// A section header is inconsistent.
    #[error("invalid section {index} ({name}): {reason}")]
    InvalidSection {
        /// Section index.
        index: u32,
        /// Section name, or `?` if it has none.
        name: String,
        /// Why it is invalid.
        reason: String,
    },
    /// A symbol table entry is inconsistent.
    #[error("invalid symbol {index} in {table}{}: {reason}", name.as_deref().map(|n| format!(" ({n})")).unwrap_or_default())]
    InvalidSymbol {
        /// The table.
        table: SymbolTableKind,
        /// Index in the table.
        index: u32,
        /// The name, when it could be read.
        name: Option<String>,
        /// Why it is invalid.
        reason: String,
    },
    /// A relocation entry is inconsistent.
    #[error(
        "invalid relocation {index} in section {section} at file offset {offset:#x}: {reason}"
    )]
    InvalidRelocation {
        /// The relocation section's name.
        section: String,
        /// Index in that section.
        index: u32,
        /// File offset of the entry.
        offset: u64,
        /// Why it is invalid.
        reason: String,
    },
    /// A note's sizes do not fit its segment or section.
    #[error("invalid note at offset {offset:#x}: {reason}")]
    InvalidNote {
        /// File offset of the note header.
        offset: u64,
        /// Why it is invalid.
        reason: String,
    },
    /// The `NT_AMDGPU_METADATA` note is not valid MessagePack or not shaped as metadata.
    #[error(
        "invalid AMDGPU metadata at offset {offset:#x}{}: {reason}",
        path_suffix(path)
    )]
    Metadata {
        /// File offset of the note's descriptor (the MessagePack bytes).
        offset: u64,
        /// Where in the metadata, e.g. `amdhsa.kernels[3].args[1].size`; empty for the whole.
        path: String,
        /// Why it is invalid.
        reason: String,
    },
    /// An address the loader would hand out or write through lies outside every `PT_LOAD`
    /// segment: a symbol, a kernel descriptor or code entry, a relocation's place or target.
    #[error("{what} {name:?} at {value:#x} ({size} bytes) lies outside the loaded image (PT_LOAD segments: {segments})")]
    OutsideImage {
        /// What the address is (`symbol`, `kernel descriptor`, `relocation place`, ...).
        what: &'static str,
        /// The symbol (or relocation) in question.
        name: String,
        /// Its value, in the code object's address space.
        value: u64,
        /// Bytes that must lie inside.
        size: u64,
        /// The segments' memory ranges.
        segments: String,
    },
    /// A limit that protects against hostile input was exceeded.
    #[error("{what} is {value}, more than the limit {limit}")]
    LimitExceeded {
        /// Which quantity.
        what: String,
        /// Its value.
        value: u64,
        /// The limit.
        limit: u64,
    },
}

fn path_suffix(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" ({path})")
    }
}

/// Result of this layer.
pub type Result<T, E = CodeObjectError> = std::result::Result<T, E>;

impl From<ElfError> for CodeObjectError {
    /// The ELF reader's errors keep their place and meaning; a file of the wrong ELF class or
    /// byte order is not an AMDGPU code object.
    fn from(e: ElfError) -> Self {
        match e {
            ElfError::Truncated {
                what,
                offset,
                size,
                file_len,
            } => CodeObjectError::Truncated {
                what,
                offset,
                size,
                file_len,
            },
            ElfError::NotElf { magic } => CodeObjectError::NotElf { magic },
            ElfError::NotElf64 { reason } => CodeObjectError::NotAmdgpu { reason },
            ElfError::Unsupported { reason } => CodeObjectError::Unsupported { reason },
            ElfError::Invalid {
                what,
                offset,
                reason,
            } => CodeObjectError::Invalid {
                what,
                offset,
                reason,
            },
            ElfError::InvalidSection {
                index,
                name,
                reason,
            } => CodeObjectError::InvalidSection {
                index,
                name,
                reason,
            },
            ElfError::InvalidSymbol {
                table,
                index,
                name,
                reason,
            } => CodeObjectError::InvalidSymbol {
                table,
                index,
                name,
                reason,
            },
            ElfError::InvalidRelocation {
                section,
                index,
                offset,
                reason,
            } => CodeObjectError::InvalidRelocation {
                section,
                index,
                offset,
                reason,
            },
            ElfError::InvalidNote { offset, reason } => {
                CodeObjectError::InvalidNote { offset, reason }
            }
            ElfError::LimitExceeded { what, value, limit } => {
                CodeObjectError::LimitExceeded { what, value, limit }
            }
        }
    }
}
