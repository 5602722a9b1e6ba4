//! Containers: everything between raw bytes and one code object's bytes.
//!
//! A byte range (a file, an ELF section, the buffer behind `__hipRegisterFatBinary`) holds
//! one or more containers back to back: plain offload bundles, compressed bundles (CCOB),
//! bare code objects and LLVM OffloadBinaries. [`read_containers`] walks them by the sizes in
//! their headers (never by scanning for a magic, which can occur inside a payload) and
//! parses headers only; entries are listed and extracted on demand, inflating no more than
//! needed. Choosing an entry for a GPU is the target layer's job, not this one's.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

mod bundle;
mod ccob;
mod error;
pub mod hipf;
mod host_elf;
mod inflate;
mod offload_binary;
mod probe;
mod zstd_stream;

pub use bundle::{write_bundle, Bundle, BUNDLE_MAGIC};
pub use ccob::{write_ccob, CcobHeader, CompressedBundle, CCOB_MAGIC};
pub use error::{Compression, ContainerError, EntryIndex, Format, RefusedEntry};
pub use host_elf::{fat_binary_sections, FatBinarySection};
pub use inflate::bundle_hash;
pub use offload_binary::{OffloadBinary, OffloadImage, OFFLOAD_BINARY_MAGIC};

/// `e_machine` of AMDGPU code objects.
pub const EM_AMDGPU: u16 = 224;
const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// Environment variable that raises (or lowers) [`Limits::max_entry_size`]: read by
/// `rocload::runtime::config`, the library's only reader of the environment.
pub const MAX_ENTRY_SIZE_ENV: &str = "ROCLOAD_MAX_ENTRY_SIZE";

/// Default of [`Limits::max_entry_size`]: 256 MiB. The largest entry of any real library
/// seen is 14 MB (a gfx803 entry of Debian's `librocsparse.so.0.1`, 1.3 GB with 111
/// bundles), so this leaves eighteen-fold room while a 47 KB decompression bomb can no longer
/// ask for gigabytes.
pub const DEFAULT_MAX_ENTRY_SIZE: u64 = 256 << 20;

/// Caps on sizes read from headers, so no field can make the reader allocate or loop
/// without bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Most entries in one bundle table (real bundles hold tens).
    pub max_entries: u64,
    /// Longest entry id.
    pub max_id_len: u64,
    /// Largest declared uncompressed size of a compressed bundle (what inflating it whole
    /// reserves), and largest container measured behind a raw pointer. Default 4 GiB.
    pub max_inflated_size: u64,
    /// Largest entry extracted into memory (inflated, or copied out of its input). Default
    /// [`DEFAULT_MAX_ENTRY_SIZE`]; [`MAX_ENTRY_SIZE_ENV`] or `rocload --max-entry-size`
    /// change it.
    pub max_entry_size: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_entries: 1 << 16,
            max_id_len: 4096,
            max_inflated_size: 4 << 30,
            max_entry_size: DEFAULT_MAX_ENTRY_SIZE,
        }
    }
}

/// Environment variable turning on the MD5 check of compressed bundles in the runtime
/// (`1`/`always`: [`HashCheck::Always`]); read by `rocload::runtime::config`.
pub const VERIFY_ENV: &str = "ROCLOAD_VERIFY";

/// When the MD5-based hash of a compressed bundle is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HashCheck {
    /// Never: the default, as in LLVM (which checks only in verbose mode). MD5 runs at about
    /// 0.5 GB/s, slower than zstd decodes, so checking would double the cost of inflating.
    #[default]
    Never,
    /// Whenever every byte of the payload was inflated anyway (full inflation, or an entry
    /// that reaches the end): integrity where it costs no extra decoding.
    WhenComplete,
    /// Always, inflating the rest of the payload if needed (`rocload --verify`,
    /// `ROCLOAD_VERIFY=1`).
    Always,
}

/// How containers are read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Size caps.
    pub limits: Limits,
    /// Hash checking of compressed bundles (off by default).
    pub verify: HashCheck,
}

/// One entry of a bundle: its id and where its bytes are in the (inflated) bundle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EntryInfo<'a> {
    /// The entry id, e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`.
    pub id: Cow<'a, str>,
    /// Offset of the payload from the start of the (inflated) bundle.
    pub offset: u64,
    /// Payload size.
    pub size: u64,
}

/// A container found in a byte range.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Container<'a> {
    /// A plain offload bundle.
    Bundle(Bundle<'a>),
    /// A compressed offload bundle.
    Compressed(CompressedBundle<'a>),
    /// A bare AMDGPU code object.
    CodeObject(&'a [u8]),
    /// An LLVM OffloadBinary.
    OffloadBinary(OffloadBinary<'a>),
}

impl<'a> Container<'a> {
    /// Parses the container at `data[0]`; `data` may run past its end.
    pub fn parse(data: &'a [u8], options: &ReadOptions) -> Result<Self, ContainerError> {
        if data.starts_with(BUNDLE_MAGIC) {
            Bundle::parse_with(data, &options.limits).map(Container::Bundle)
        } else if data.starts_with(CCOB_MAGIC) {
            CompressedBundle::parse(data, options).map(Container::Compressed)
        } else if data.starts_with(OFFLOAD_BINARY_MAGIC) {
            OffloadBinary::parse(data).map(Container::OffloadBinary)
        } else if data.starts_with(ELF_MAGIC) {
            let mut probe = data;
            let len = host_elf::elf_extent(&mut probe)?;
            check_code_object_machine(data)?;
            Ok(Container::CodeObject(&data[..len as usize]))
        } else {
            Err(ContainerError::UnknownFormat {
                offset: 0,
                head: error::hex_head(data),
            })
        }
    }

    /// The format.
    pub fn format(&self) -> Format {
        match self {
            Container::Bundle(_) => Format::Bundle,
            Container::Compressed(_) => Format::Ccob,
            Container::CodeObject(_) => Format::CodeObject,
            Container::OffloadBinary(_) => Format::OffloadBinary,
        }
    }

    /// Bytes the container occupies in its input.
    pub fn size(&self) -> u64 {
        match self {
            Container::Bundle(b) => b.size(),
            Container::Compressed(c) => c.size(),
            Container::CodeObject(c) => c.len() as u64,
            Container::OffloadBinary(o) => o.size(),
        }
    }

    /// Size of the bundle once inflated (equal to [`Container::size`] unless compressed).
    pub fn uncompressed_size(&self) -> u64 {
        match self {
            Container::Compressed(c) => c.header().uncompressed_size,
            other => other.size(),
        }
    }

    /// The entries. A compressed bundle inflates up to the end of its table; a bare code
    /// object is one entry named after its target; OffloadBinary images get bundle-style ids.
    pub fn entries(&self) -> Result<Vec<EntryInfo<'a>>, ContainerError> {
        match self {
            Container::Bundle(b) => Ok(b.entries().to_vec()),
            Container::Compressed(c) => c.entries(),
            Container::CodeObject(c) => Ok(vec![EntryInfo {
                id: Cow::Owned(code_object_entry_id(c)),
                offset: 0,
                size: c.len() as u64,
            }]),
            Container::OffloadBinary(o) => Ok(o
                .images()
                .iter()
                .map(|i| EntryInfo {
                    id: Cow::Owned(i.id()),
                    offset: i.image_offset,
                    size: i.image.len() as u64,
                })
                .collect()),
        }
    }

    /// The bytes of entry `index`: borrowed where they sit in the input, inflated (only as
    /// far as needed) for compressed bundles.
    ///
    /// Entries over the default [`Limits::max_entry_size`] are refused (a compressed bundle
    /// applies the limits it was parsed with); [`Container::extract_with`] takes others.
    pub fn extract(&self, index: usize) -> Result<Cow<'a, [u8]>, ContainerError> {
        match self {
            Container::Compressed(c) => c.extract(index).map(Cow::Owned),
            _ => self.extract_with(index, &Limits::default()),
        }
    }

    /// [`Container::extract`] refusing entries larger than `limits.max_entry_size`
    /// ([`ContainerError::EntryTooLarge`]) before any byte of them is inflated or copied.
    pub fn extract_with(
        &self,
        index: usize,
        limits: &Limits,
    ) -> Result<Cow<'a, [u8]>, ContainerError> {
        let too_large = |e: &EntryInfo<'_>| {
            (e.size > limits.max_entry_size).then(|| ContainerError::EntryTooLarge {
                entry: e.id.to_string(),
                index: index as u64,
                size: e.size,
                limit: limits.max_entry_size,
            })
        };
        if let Container::Compressed(c) = self {
            return c
                .extract_limited(index, limits.max_entry_size)
                .map(Cow::Owned);
        }
        if let Some(e) = self.entries()?.get(index) {
            if let Some(err) = too_large(e) {
                tracing::debug!(id = %e.id, size = e.size, limit = limits.max_entry_size, "entry over the size cap; refused");
                return Err(err);
            }
        }
        let not_found = |entries: Vec<EntryInfo<'_>>| ContainerError::EntryNotFound {
            wanted: format!("entry #{index}"),
            available: entries.iter().map(|e| e.id.to_string()).collect(),
        };
        match self {
            Container::Bundle(b) => b
                .entries()
                .get(index)
                .map(|e| Cow::Borrowed(b.entry_data(e)))
                .ok_or_else(|| not_found(b.entries().to_vec())),
            Container::Compressed(c) => c.extract(index).map(Cow::Owned),
            Container::CodeObject(c) if index == 0 => Ok(Cow::Borrowed(c)),
            Container::CodeObject(_) => Err(not_found(self.entries()?)),
            Container::OffloadBinary(o) => o
                .images()
                .get(index)
                .map(|i| Cow::Borrowed(i.image))
                .ok_or_else(|| not_found(self.entries().unwrap_or_default())),
        }
    }
}

/// An entry's bytes as [`SharedBytes`](crate::SharedBytes) that outlive the input: inflated
/// bytes move in without a copy; bytes borrowed from the input are copied into a fallible
/// reservation (an input may be a library image that is unmapped later).
///
/// # Errors
/// [`ContainerError::OutOfMemory`] when the copy cannot be reserved.
pub fn into_shared(bytes: Cow<'_, [u8]>) -> Result<crate::SharedBytes, ContainerError> {
    match bytes {
        Cow::Owned(v) => Ok(v.into()),
        Cow::Borrowed(b) => {
            crate::SharedBytes::try_copy_from_slice(b).ok_or(ContainerError::OutOfMemory {
                what: "a copy of the entry",
                size: b.len() as u64,
            })
        }
    }
}

/// The entry id a bare code object would have in a bundle, from its ELF header
/// (`hipv4-amdgcn-amd-amdhsa--gfx1030`); `...--unknown` when the header does not decode, so
/// listing never fails on it (loading reports the real error).
fn code_object_entry_id(code: &[u8]) -> String {
    let target = crate::elf::header(code)
        .ok()
        .and_then(|h| crate::target::ElfTarget::from_header(h.os_abi, h.abi_version, h.flags).ok());
    match target {
        Some(t) => format!("hipv4-amdgcn-amd-amdhsa--{}", t.target),
        None => "hipv4-amdgcn-amd-amdhsa--unknown".to_string(),
    }
}

fn check_code_object_machine(data: &[u8]) -> Result<(), ContainerError> {
    match crate::elf::header(data)?.machine {
        EM_AMDGPU => Ok(()),
        m => Err(ContainerError::invalid(
            Format::CodeObject,
            "e_machine",
            None,
            18,
            format!("{m} is not EM_AMDGPU ({EM_AMDGPU})"),
        )),
    }
}

/// Whether `data` is an ELF file of another machine than AMDGPU: a host file whose sections
/// hold fat binaries.
fn is_host_elf(data: &[u8]) -> bool {
    data.starts_with(ELF_MAGIC) && crate::elf::header(data).map_or(true, |h| h.machine != EM_AMDGPU)
}

/// A container and where it was found.
#[derive(Debug, Clone)]
pub struct Located<'a> {
    /// Position among the containers of the input (0-based).
    pub index: usize,
    /// Byte offset in the input (for files: in the file).
    pub offset: u64,
    /// The ELF section it came from, for host files.
    pub section: Option<&'static str>,
    /// The container.
    pub container: Container<'a>,
}

impl<'a> Located<'a> {
    /// [`Container::entries`], with error offsets counted from the start of the input.
    pub fn entries(&self) -> Result<Vec<EntryInfo<'a>>, ContainerError> {
        self.container.entries().map_err(|e| e.rebase(self.offset))
    }

    /// For a compressed bundle, [`CompressedBundle::verify`] (its whole payload inflated and
    /// hashed), with error offsets counted from the start of the input; nothing to check for
    /// the other formats.
    pub fn verify(&self) -> Result<(), ContainerError> {
        match &self.container {
            Container::Compressed(c) => c.verify().map_err(|e| e.rebase(self.offset)),
            _ => Ok(()),
        }
    }

    /// [`Container::extract`], with error offsets counted from the start of the input.
    pub fn extract(&self, index: usize) -> Result<Cow<'a, [u8]>, ContainerError> {
        self.container
            .extract(index)
            .map_err(|e| e.rebase(self.offset))
    }

    /// [`Container::extract_with`], with error offsets counted from the start of the input.
    pub fn extract_with(
        &self,
        index: usize,
        limits: &Limits,
    ) -> Result<Cow<'a, [u8]>, ContainerError> {
        self.container
            .extract_with(index, limits)
            .map_err(|e| e.rebase(self.offset))
    }
}

/// Walks a range holding containers back to back: after each one, zero padding is skipped
/// and the next must start with a known magic. Offsets in results and errors are relative to
/// `data` plus `base`.
pub fn walk<'a>(
    data: &'a [u8],
    base: u64,
    options: &ReadOptions,
) -> Result<Vec<Located<'a>>, ContainerError> {
    let mut found = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        // Padding between containers is zeros (clang aligns bundles to 4096 with zeros).
        pos += data[pos..].iter().take_while(|&&b| b == 0).count();
        if pos >= data.len() {
            break;
        }
        let offset = base + pos as u64;
        let container = Container::parse(&data[pos..], options).map_err(|e| e.rebase(offset))?;
        let size = container.size().max(1);
        tracing::debug!(offset, format = %container.format(), size, "found container");
        found.push(Located {
            index: found.len(),
            offset,
            section: None,
            container,
        });
        pos = pos.saturating_add(size as usize);
    }
    Ok(found)
}

/// Finds every container in `data`: the fat-binary sections of a host ELF file, or else the
/// containers of the range itself (a bundle file, a CCOB, a section dump, a code object).
///
/// # Examples
/// A host object holding a compressed bundle: listing its entries inflates only the entry
/// table; extracting one entry inflates until that entry is out.
/// ```
/// use rocload::container::{read_containers, ReadOptions};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hip/vadd.compressed.o");
/// let bytes = std::fs::read(path)?;
/// let found = read_containers(&bytes, &ReadOptions::default())?;
/// assert_eq!(found.len(), 1);
/// let entries = found[0].entries()?;
/// let index = entries
///     .iter()
///     .position(|e| e.id == "hipv4-amdgcn-amd-amdhsa--gfx1030")
///     .expect("a gfx1030 entry");
/// let code = found[0].container.extract(index)?;
/// assert_eq!(&code[..4], b"\x7fELF");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_containers<'a>(
    data: &'a [u8],
    options: &ReadOptions,
) -> Result<Vec<Located<'a>>, ContainerError> {
    if is_host_elf(data) {
        let mut all = Vec::new();
        for section in fat_binary_sections(data)? {
            for mut located in walk(section.data, section.offset, options)? {
                located.index = all.len();
                located.section = Some(section.name);
                all.push(located);
            }
        }
        return Ok(all);
    }
    walk(data, 0, options)
}

/// A file mapped into memory, read in place.
#[derive(Debug)]
pub struct MappedFile {
    path: PathBuf,
    map: Option<memmap2::Mmap>,
}

impl MappedFile {
    /// Maps `path` read-only.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, crate::Error> {
        let path = path.as_ref().to_path_buf();
        let io = |source| crate::Error::Io {
            path: path.clone(),
            source,
        };
        let file = std::fs::File::open(&path).map_err(io)?;
        let metadata = file.metadata().map_err(io)?;
        if metadata.is_dir() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "is a directory, not a file",
            )));
        }
        if !metadata.is_file() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "is not a regular file (a device, socket or pipe cannot be mapped)",
            )));
        }
        let len = metadata.len();
        let map = if len == 0 {
            None
        } else {
            // SAFETY: the map is read-only and private to this process; like every reader of
            // mapped files we assume the file is not truncated while mapped.
            Some(unsafe { memmap2::Mmap::map(&file) }.map_err(io)?)
        };
        Ok(MappedFile { path, map })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// The path it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Finds the entry `wanted` names, a full entry id or a target id, by clang-offload-bundler's
/// rule ([`crate::target::Request`]: `gfx90a:xnack+` is satisfied by an entry for `gfx90a`
/// that leaves xnack as any): in container `bundle` only if given, else in the first container
/// holding such an entry. Within a container the same id wins over a compatible entry.
/// Returns the container's position in `containers` and the entry index.
///
/// # Errors
/// [`ContainerError::InvalidRequest`] when `wanted` is neither a target id nor an entry id;
/// [`ContainerError::NoEntrySatisfies`], listing every entry with why it was refused;
/// [`ContainerError::EntryNotFound`] when there is no container `bundle`.
pub fn find_entry(
    containers: &[Located<'_>],
    wanted: &str,
    bundle: Option<usize>,
) -> Result<(usize, usize), ContainerError> {
    if let Some(b) = bundle {
        if !containers.iter().any(|l| l.index == b) {
            return Err(ContainerError::EntryNotFound {
                wanted: format!("bundle {b}"),
                available: containers
                    .iter()
                    .map(|l| format!("bundle {}", l.index))
                    .collect(),
            });
        }
    }
    let request = crate::target::Request::parse(wanted)?;
    let mut refused = Vec::new();
    for (pos, located) in containers.iter().enumerate() {
        if bundle.is_some_and(|b| b != located.index) {
            continue;
        }
        let entries = located.entries()?;
        let choice = request.choose(entries.iter().map(|e| e.id.as_ref()));
        if let Some(i) = choice.chosen {
            tracing::debug!(wanted, bundle = located.index, id = %entries[i].id, "entry found");
            return Ok((pos, i));
        }
        refused.extend(
            choice
                .candidates
                .into_iter()
                .map(|(id, verdict)| RefusedEntry {
                    bundle: located.index,
                    id: id.to_string(),
                    reason: match verdict {
                        Err(refusal) => refusal.to_string(),
                        Ok(m) => m.to_string(),
                    },
                }),
        );
    }
    Err(ContainerError::NoEntrySatisfies {
        wanted: wanted.to_string(),
        refused,
    })
}
