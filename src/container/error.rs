//! Typed errors of the container layer: what is wrong, in which format, and where.

use std::fmt;

/// The container formats rocload reads, named in errors and listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Format {
    /// `__CLANG_OFFLOAD_BUNDLE__` offload bundle.
    Bundle,
    /// `CCOB` compressed offload bundle.
    Ccob,
    /// A bare AMDGPU code object (ELF) where a bundle was expected.
    CodeObject,
    /// LLVM `OffloadBinary` (`.llvm.offloading`).
    OffloadBinary,
    /// A host ELF file holding `.hip_fatbin`.
    HostElf,
    /// The `HIPF` wrapper passed to `__hipRegisterFatBinary`.
    Wrapper,
}

impl Format {
    /// The name used in JSON and messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Bundle => "bundle",
            Format::Ccob => "ccob",
            Format::CodeObject => "code_object",
            Format::OffloadBinary => "offload_binary",
            Format::HostElf => "host_elf",
            Format::Wrapper => "hipf_wrapper",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Compression method of a compressed bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    /// zlib (method 0).
    Zlib,
    /// zstd (method 1).
    Zstd,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::Zlib => "zlib",
            Compression::Zstd => "zstd",
        })
    }
}

/// Names the entry an error is about, if any (" in entry 3").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryIndex(pub Option<u64>);

impl fmt::Display for EntryIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(i) => write!(f, " (entry {i})"),
            None => Ok(()),
        }
    }
}

/// A fat binary could not be read. Offsets are from the start of the input given to the
/// reader (the file, section or buffer), so they can be looked up with a hex dump.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContainerError {
    /// The input ends before a field does.
    #[error("{format}: truncated {field}{entry} at offset {offset:#x}: needs {needed} bytes, {available} available")]
    Truncated {
        /// Format being read.
        format: Format,
        /// The field that does not fit.
        field: &'static str,
        /// Which entry, if the field belongs to one.
        entry: EntryIndex,
        /// Where the field starts.
        offset: u64,
        /// Bytes the field needs.
        needed: u64,
        /// Bytes there are from `offset` on.
        available: u64,
    },
    /// A field holds a value that cannot be right.
    #[error("{format}: invalid {field}{entry} at offset {offset:#x}: {reason}")]
    Invalid {
        /// Format being read.
        format: Format,
        /// The field in question.
        field: &'static str,
        /// Which entry, if the field belongs to one.
        entry: EntryIndex,
        /// Where the field is.
        offset: u64,
        /// Why it is wrong.
        reason: String,
    },
    /// A version, method or kind this reader does not know.
    #[error("{format}: unsupported {field} {value} at offset {offset:#x}")]
    Unsupported {
        /// Format being read.
        format: Format,
        /// The field in question.
        field: &'static str,
        /// Where the field is.
        offset: u64,
        /// Its value.
        value: u64,
    },
    /// A size exceeds a configured limit (see [`crate::container::Limits`]).
    #[error(
        "{format}: {field}{entry} at offset {offset:#x} is {value}, over the limit of {limit}"
    )]
    LimitExceeded {
        /// Format being read.
        format: Format,
        /// The field in question.
        field: &'static str,
        /// Which entry, if the field belongs to one.
        entry: EntryIndex,
        /// Where the field is.
        offset: u64,
        /// Its value.
        value: u64,
        /// The limit in force.
        limit: u64,
    },
    /// The bytes at `offset` are no fat-binary format rocload knows.
    #[error("unrecognised data at offset {offset:#x}: starts with {head}")]
    UnknownFormat {
        /// Where the unknown data starts.
        offset: u64,
        /// The first bytes, in hex.
        head: String,
    },
    /// The compressed stream is corrupt.
    #[error("ccob at offset {offset:#x}: {method} stream is corrupt after {produced} output bytes: {reason}")]
    Corrupt {
        /// Where the compressed bundle starts.
        offset: u64,
        /// The method.
        method: Compression,
        /// Bytes inflated before the failure.
        produced: u64,
        /// The decoder's message.
        reason: String,
    },
    /// The compressed stream inflates to a different size than its header declares (more is a
    /// decompression bomb, stopped as soon as it passes the declared size).
    #[error("ccob at offset {offset:#x}: inflates to {actual}{more} bytes, but its header's uncompressed size says {declared}", more = if *.exceeded { " or more" } else { "" })]
    SizeMismatch {
        /// Where the compressed bundle starts.
        offset: u64,
        /// Declared uncompressed size.
        declared: u64,
        /// Bytes actually produced (when `exceeded`, decoding stopped there).
        actual: u64,
        /// The stream went past the declared size.
        exceeded: bool,
    },
    /// The MD5-based hash in the header does not match the inflated data.
    #[error("ccob at offset {offset:#x}: hash mismatch: header says {expected:#018x}, data hashes to {actual:#018x}")]
    HashMismatch {
        /// Where the compressed bundle starts.
        offset: u64,
        /// Hash in the header.
        expected: u64,
        /// Hash of the inflated bytes.
        actual: u64,
    },
    /// Memory for an entry could not be reserved.
    #[error("out of memory reserving {size} bytes for {what}")]
    OutOfMemory {
        /// What was being reserved.
        what: &'static str,
        /// How much.
        size: u64,
    },
    /// An entry is larger than [`Limits::max_entry_size`](super::Limits::max_entry_size):
    /// refused before any of it is inflated or copied.
    #[error("entry {index} ({entry}) is {size} bytes, over the limit of {limit} bytes on one entry; raise it with {env}=BYTES or `rocload --max-entry-size BYTES`", env = super::MAX_ENTRY_SIZE_ENV)]
    EntryTooLarge {
        /// The entry id.
        entry: String,
        /// Its index in the bundle table.
        index: u64,
        /// Its size.
        size: u64,
        /// The limit in force.
        limit: u64,
    },
    /// Writing inflated bytes out failed.
    #[error("writing the inflated bundle: {0}")]
    Write(#[source] std::io::Error),
    /// No entry with the requested id or target.
    #[error("no entry matches {wanted:?}; entries: {}", if available.is_empty() { "none".to_string() } else { available.join(", ") })]
    EntryNotFound {
        /// What was asked for.
        wanted: String,
        /// What there is.
        available: Vec<String>,
    },
    /// No entry satisfies the requested id by clang-offload-bundler's rule (see
    /// [`crate::target::Request`]). Display lists every entry looked at, one a line, with why
    /// it was refused.
    #[error("{}", NoEntryDisplay { wanted, refused })]
    NoEntrySatisfies {
        /// What was asked for.
        wanted: String,
        /// Every entry looked at, with its bundle and the reason it was refused.
        refused: Vec<RefusedEntry>,
    },
    /// The requested id is neither a target id nor a bundle entry id.
    #[error(transparent)]
    InvalidRequest(#[from] crate::target::TargetError),
    /// The bundle inside a compressed bundle is malformed; `source` has offsets into the
    /// inflated data.
    #[error("ccob at offset {offset:#x}: inflated bundle: {source}")]
    InInflated {
        /// Where the compressed bundle starts.
        offset: u64,
        /// What is wrong with the inflated bundle.
        source: Box<ContainerError>,
    },
    /// A host ELF file holds no fat binary.
    #[error("host ELF holds no .hip_fatbin or .llvm.offloading section")]
    NoFatBinary,
    /// A host ELF file (or the ELF image of a code object being measured) could not be
    /// parsed; the ELF reader's error names the offset, section or field.
    #[error("ELF: {0}")]
    HostElf(#[from] crate::elf::ElfError),
}

/// An entry that does not satisfy a request, as [`ContainerError::NoEntrySatisfies`] reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RefusedEntry {
    /// The bundle, as `rocload ls` numbers them.
    pub bundle: usize,
    /// The entry id.
    pub id: String,
    /// Why it does not satisfy the request.
    pub reason: String,
}

struct NoEntryDisplay<'a> {
    wanted: &'a str,
    refused: &'a [RefusedEntry],
}

impl fmt::Display for NoEntryDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no entry satisfies {:?} (clang-offload-bundler's rule: the same processor, and each \
             feature an entry sets set the same way in the request)",
            self.wanted
        )?;
        if self.refused.is_empty() {
            write!(f, "\n  there are no entries")?;
        }
        for r in self.refused {
            write!(f, "\n  bundle {}: {}: {}", r.bundle, r.id, r.reason)?;
        }
        Ok(())
    }
}

impl ContainerError {
    pub(crate) fn truncated(
        format: Format,
        field: &'static str,
        entry: Option<u64>,
        offset: u64,
        needed: u64,
        data_len: u64,
    ) -> Self {
        ContainerError::Truncated {
            format,
            field,
            entry: EntryIndex(entry),
            offset,
            needed,
            available: data_len.saturating_sub(offset),
        }
    }

    pub(crate) fn invalid(
        format: Format,
        field: &'static str,
        entry: Option<u64>,
        offset: u64,
        reason: impl Into<String>,
    ) -> Self {
        ContainerError::Invalid {
            format,
            field,
            entry: EntryIndex(entry),
            offset,
            reason: reason.into(),
        }
    }

    /// Shifts every offset by `base`, for errors found in a sub-range of a larger input.
    pub fn rebase(mut self, base: u64) -> Self {
        match &mut self {
            ContainerError::Truncated { offset, .. }
            | ContainerError::Invalid { offset, .. }
            | ContainerError::Unsupported { offset, .. }
            | ContainerError::LimitExceeded { offset, .. }
            | ContainerError::UnknownFormat { offset, .. }
            | ContainerError::Corrupt { offset, .. }
            | ContainerError::SizeMismatch { offset, .. }
            | ContainerError::HashMismatch { offset, .. }
            | ContainerError::InInflated { offset, .. } => *offset = offset.saturating_add(base),
            _ => {}
        }
        self
    }
}

impl ContainerError {
    /// Whether the error is about memory: a reservation the allocator refused, or an entry
    /// over the size cap (the C API reports both as `hipErrorOutOfMemory`).
    pub fn is_out_of_memory(&self) -> bool {
        match self {
            ContainerError::OutOfMemory { .. } | ContainerError::EntryTooLarge { .. } => true,
            ContainerError::InInflated { source, .. } => source.is_out_of_memory(),
            _ => false,
        }
    }
}

/// Hex of the first bytes of `data`, for "unrecognised data" errors.
pub(crate) fn hex_head(data: &[u8]) -> String {
    let head: Vec<String> = data.iter().take(8).map(|b| format!("{b:02x}")).collect();
    if head.is_empty() {
        "nothing".to_string()
    } else {
        head.join(" ")
    }
}
