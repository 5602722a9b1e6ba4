//! The one ELF reader of the crate: ELF64 little-endian files (AMDGPU code objects and host
//! executables, libraries and objects) read from untrusted bytes without copying.
//!
//! Uses `object`'s raw on-disk structs (`object::elf`, alignment 1, endian-typed) and reads
//! them with explicit, checked offsets so that every error names the byte offset, the
//! section or the symbol at fault (`object`'s own errors carry no offset). The container layer
//! uses the file header, the section table and [`extent`]; the code-object layer uses
//! everything. Not for AMDGPU meaning (targets, metadata, kernels): this module only knows ELF.

use object::elf::{
    Dyn64, FileHeader64, ProgramHeader64, Rela64, SectionHeader64, Sym64, ELFCLASS64, ELFDATA2LSB,
    ELFMAG, EV_CURRENT, SHN_LORESERVE, SHN_UNDEF, SHN_XINDEX,
};
use object::pod::Pod;
use object::read::ReadRef;
use object::LittleEndian as LE;
use serde::Serialize;

/// Which ELF symbol table a symbol comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolTableKind {
    /// `.dynsym` (`SHT_DYNSYM`): what a loader sees.
    Dynsym,
    /// `.symtab` (`SHT_SYMTAB`): the full table, local symbols included.
    Symtab,
}

impl std::fmt::Display for SymbolTableKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Dynsym => ".dynsym",
            Self::Symtab => ".symtab",
        })
    }
}

/// An ELF file could not be read. Every variant names a place: a byte offset, a section, a
/// symbol (table and index), a relocation or a note.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ElfError {
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
    /// An ELF file of another class or byte order than ELF64 little-endian.
    #[error("not a 64-bit little-endian ELF file: {reason}")]
    NotElf64 {
        /// Which identification byte says so.
        reason: String,
    },
    /// A well-formed feature this reader does not support (extended numbering).
    #[error("unsupported ELF: {reason}")]
    Unsupported {
        /// What exactly.
        reason: String,
    },
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

/// Result of the ELF reader.
pub type Result<T, E = ElfError> = std::result::Result<T, E>;

/// Program header type of a loadable segment.
pub const PT_LOAD: u32 = object::elf::PT_LOAD;
/// Program header type of the dynamic segment.
pub const PT_DYNAMIC: u32 = object::elf::PT_DYNAMIC;
/// Program header type of a note segment.
pub const PT_NOTE: u32 = object::elf::PT_NOTE;

/// Largest load image (last `p_vaddr + p_memsz`) accepted, so that a loader never
/// allocates without bound because a header said so.
pub const MAX_LOAD_IMAGE_SIZE: u64 = 4 << 30;

pub(crate) fn truncated(what: impl Into<String>, offset: u64, size: u64, data: &[u8]) -> ElfError {
    ElfError::Truncated {
        what: what.into(),
        offset,
        size,
        file_len: data.len() as u64,
    }
}

/// Reads one `T` at `offset`, naming `what` if it is not all there.
pub(crate) fn read_at<T: Pod>(
    data: &[u8],
    offset: u64,
    what: impl FnOnce() -> String,
) -> Result<&T> {
    data.read_at::<T>(offset)
        .map_err(|()| truncated(what(), offset, std::mem::size_of::<T>() as u64, data))
}

/// Reads `count` `T`s at `offset`, naming `what` if they are not all there.
fn read_slice_at<T: Pod>(
    data: &[u8],
    offset: u64,
    count: u64,
    what: impl FnOnce() -> String,
) -> Result<&[T]> {
    let size = count.saturating_mul(std::mem::size_of::<T>() as u64);
    usize::try_from(count)
        .ok()
        .and_then(|count| data.read_slice_at::<T>(offset, count).ok())
        .ok_or_else(|| truncated(what(), offset, size, data))
}

/// The bytes `offset..offset+size`, naming `what` if they are not all in the file.
pub(crate) fn bytes_at(
    data: &[u8],
    offset: u64,
    size: u64,
    what: impl FnOnce() -> String,
) -> Result<&[u8]> {
    data.read_bytes_at(offset, size)
        .map_err(|()| truncated(what(), offset, size, data))
}

/// The ELF file header fields this layer keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Header {
    /// `EI_OSABI` (64 for AMDGPU HSA).
    pub os_abi: u8,
    /// `EI_ABIVERSION` (1 = code object v3 … 4 = v6).
    pub abi_version: u8,
    /// `e_type` (3 = `ET_DYN`).
    pub e_type: u16,
    /// `e_machine` (224 = `EM_AMDGPU`).
    pub machine: u16,
    /// `e_flags`: processor and features, decoded by the target layer.
    pub flags: u32,
    /// `e_entry` (unused by code objects).
    pub entry: u64,
}

/// Access flags of a segment (`p_flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct SegmentFlags(pub u32);

impl SegmentFlags {
    /// `PF_R`.
    pub fn readable(self) -> bool {
        self.0 & object::elf::PF_R != 0
    }
    /// `PF_W`.
    pub fn writable(self) -> bool {
        self.0 & object::elf::PF_W != 0
    }
    /// `PF_X`.
    pub fn executable(self) -> bool {
        self.0 & object::elf::PF_X != 0
    }
}

impl std::fmt::Display for SegmentFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let flag = |set: bool, c: char| if set { c } else { '-' };
        write!(
            f,
            "{}{}{}",
            flag(self.readable(), 'R'),
            flag(self.writable(), 'W'),
            flag(self.executable(), 'X')
        )
    }
}

/// One program header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// Index in the program header table.
    pub index: u16,
    /// `p_type` ([`PT_LOAD`], [`PT_NOTE`], …).
    pub p_type: u32,
    /// `p_flags`.
    pub flags: SegmentFlags,
    /// `p_offset`: where the file bytes start.
    pub offset: u64,
    /// `p_vaddr`: where they go in the load image.
    pub vaddr: u64,
    /// `p_filesz`: bytes taken from the file.
    pub file_size: u64,
    /// `p_memsz`: bytes in memory (the rest, past `file_size`, is zero).
    pub mem_size: u64,
    /// `p_align`.
    pub align: u64,
}

impl Segment {
    /// End of the segment in the load image (`vaddr + mem_size`); checked at parse time.
    pub fn vaddr_end(&self) -> u64 {
        self.vaddr.saturating_add(self.mem_size)
    }

    /// Whether `[vaddr, vaddr+len)` lies inside this segment's memory image.
    pub fn contains(&self, vaddr: u64, len: u64) -> bool {
        vaddr >= self.vaddr
            && vaddr
                .checked_add(len)
                .is_some_and(|end| end <= self.vaddr_end())
    }
}

/// One section header, its name resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Section<'data> {
    /// Index in the section header table.
    pub index: u32,
    /// Name from `.shstrtab` (empty for section 0).
    pub name: &'data str,
    /// `sh_type`.
    pub sh_type: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_addr`.
    pub addr: u64,
    /// `sh_offset`.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_link`.
    pub link: u32,
    /// `sh_info`.
    pub info: u32,
    /// `sh_addralign`.
    pub align: u64,
    /// `sh_entsize`.
    pub entsize: u64,
}

impl Section<'_> {
    /// Whether the section occupies file bytes (anything but `SHT_NOBITS` and `SHT_NULL`).
    pub fn has_file_bytes(&self) -> bool {
        self.sh_type != object::elf::SHT_NOBITS && self.sh_type != object::elf::SHT_NULL
    }
}

/// ELF symbol type (`STT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolKind {
    /// `STT_NOTYPE`.
    Notype,
    /// `STT_OBJECT`: data (variables and kernel descriptors).
    Object,
    /// `STT_FUNC`: code.
    Func,
    /// `STT_SECTION`.
    Section,
    /// `STT_FILE`.
    File,
    /// `STT_COMMON`.
    Common,
    /// `STT_TLS`.
    Tls,
    /// Any other value.
    Other(u8),
}

impl SymbolKind {
    fn from_raw(v: u8) -> Self {
        use object::elf::*;
        match v {
            STT_NOTYPE => Self::Notype,
            STT_OBJECT => Self::Object,
            STT_FUNC => Self::Func,
            STT_SECTION => Self::Section,
            STT_FILE => Self::File,
            STT_COMMON => Self::Common,
            STT_TLS => Self::Tls,
            v => Self::Other(v),
        }
    }

    /// The name `llvm-readelf` prints (`NOTYPE`, `FUNC`, …) in lower case.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Notype => "notype",
            Self::Object => "object",
            Self::Func => "func",
            Self::Section => "section",
            Self::File => "file",
            Self::Common => "common",
            Self::Tls => "tls",
            Self::Other(_) => "other",
        }
    }
}

/// ELF symbol binding (`STB_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Binding {
    /// `STB_LOCAL`.
    Local,
    /// `STB_GLOBAL`.
    Global,
    /// `STB_WEAK`.
    Weak,
    /// `STB_GNU_UNIQUE` or any other value.
    Other(u8),
}

impl Binding {
    fn from_raw(v: u8) -> Self {
        match v {
            object::elf::STB_LOCAL => Self::Local,
            object::elf::STB_GLOBAL => Self::Global,
            object::elf::STB_WEAK => Self::Weak,
            v => Self::Other(v),
        }
    }

    /// Lower-case name (`local`, `global`, `weak`, `other`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Global => "global",
            Self::Weak => "weak",
            Self::Other(_) => "other",
        }
    }
}

/// ELF symbol visibility (`STV_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// `STV_DEFAULT`: can be imported by other code objects.
    Default,
    /// `STV_INTERNAL`.
    Internal,
    /// `STV_HIDDEN`: clang 19's default for device code.
    Hidden,
    /// `STV_PROTECTED`: clang 19's default for kernels.
    Protected,
}

impl Visibility {
    fn from_raw(v: u8) -> Self {
        match v & 3 {
            object::elf::STV_INTERNAL => Self::Internal,
            object::elf::STV_HIDDEN => Self::Hidden,
            object::elf::STV_PROTECTED => Self::Protected,
            _ => Self::Default,
        }
    }

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Internal => "internal",
            Self::Hidden => "hidden",
            Self::Protected => "protected",
        }
    }
}

/// One symbol table entry, its name resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Symbol<'data> {
    /// Which table it is in.
    pub table: SymbolTableKind,
    /// Index in that table.
    pub index: u32,
    /// Raw (mangled) name.
    pub name: &'data str,
    /// `st_value`: the virtual address in the code object for a defined symbol.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
    /// `STT_*`.
    pub kind: SymbolKind,
    /// `STB_*`.
    pub binding: Binding,
    /// `STV_*`.
    pub visibility: Visibility,
    /// `st_shndx` (0 = undefined; `SHN_ABS` = 0xfff1).
    pub section_index: u16,
}

impl Symbol<'_> {
    /// Whether the symbol is defined in this code object (`st_shndx != SHN_UNDEF`).
    pub fn is_defined(&self) -> bool {
        self.section_index != SHN_UNDEF
    }
}

/// One `PT_DYNAMIC` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DynamicEntry {
    /// `d_tag` (`DT_*`).
    pub tag: i64,
    /// `d_val` / `d_ptr`.
    pub value: u64,
}

/// One ELF note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Note<'data> {
    /// File offset of the note header.
    pub offset: u64,
    /// Owner name without the terminating NUL (e.g. `AMDGPU`).
    pub name: &'data [u8],
    /// `n_type` (32 = `NT_AMDGPU_METADATA` for owner `AMDGPU`).
    pub n_type: u32,
    /// File offset of the descriptor.
    pub desc_offset: u64,
    /// The descriptor bytes.
    pub desc: &'data [u8],
}

/// One relocation entry as stored (the symbol is an index into `symbol_table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawRelocation {
    pub index: u32,
    pub file_offset: u64,
    pub offset: u64,
    pub r_type: u32,
    pub symbol: u32,
    pub addend: i64,
}

/// The parsed ELF skeleton: everything but AMDGPU meaning.
#[derive(Debug)]
pub(crate) struct Elf<'data> {
    pub header: Header,
    pub program_headers: Vec<Segment>,
    pub sections: Vec<Section<'data>>,
    pub dynamic: Vec<DynamicEntry>,
    pub dynsym: Vec<Symbol<'data>>,
    pub symtab: Vec<Symbol<'data>>,
    pub notes: Vec<Note<'data>>,
}

/// Validates and reads the file header.
pub(crate) fn parse_header(data: &[u8]) -> Result<&FileHeader64<LE>> {
    if data.len() < 16 || data[0..4] != ELFMAG {
        return Err(ElfError::NotElf {
            magic: data.iter().take(4).copied().collect(),
        });
    }
    let ident_class = data[4];
    if ident_class != ELFCLASS64 {
        return Err(ElfError::NotElf64 {
            reason: format!("ELF class {ident_class}, not ELFCLASS64"),
        });
    }
    if data[5] != ELFDATA2LSB {
        return Err(ElfError::NotElf64 {
            reason: format!("ELF data encoding {}, not little-endian", data[5]),
        });
    }
    let header: &FileHeader64<LE> = read_at(data, 0, || "ELF header".into())?;
    if header.e_ident.version != EV_CURRENT {
        return Err(ElfError::Invalid {
            what: "ELF header".into(),
            offset: 6,
            reason: format!("EI_VERSION {}", header.e_ident.version),
        });
    }
    Ok(header)
}

fn header_fields(raw: &FileHeader64<LE>) -> Header {
    let e = LE;
    Header {
        os_abi: raw.e_ident.os_abi,
        abi_version: raw.e_ident.abi_version,
        e_type: raw.e_type.get(e),
        machine: raw.e_machine.get(e),
        flags: raw.e_flags.get(e),
        entry: raw.e_entry.get(e),
    }
}

/// The file header of the ELF64 little-endian file `data`.
///
/// # Errors
/// [`ElfError::NotElf`], [`ElfError::NotElf64`], or a truncated or invalid header.
pub fn header(data: &[u8]) -> Result<Header> {
    parse_header(data).map(header_fields)
}

/// The section table of `data` with section names, and nothing else: what a host executable
/// or library needs to find its fat-binary sections, without reading its (possibly huge)
/// symbol tables.
///
/// # Errors
/// As [`header`]; an invalid or truncated section table or name table.
pub fn sections(data: &[u8]) -> Result<Vec<Section<'_>>> {
    let raw = parse_header(data)?;
    parse_sections(data, raw)
}

/// Why [`extent`] failed: the ELF structures, or the byte source itself.
#[derive(Debug)]
pub enum ExtentError<E> {
    /// An ELF structure is invalid, or its bytes are not all there.
    Elf(ElfError),
    /// The source failed to read (e.g. unmapped memory behind a pointer).
    Source(E),
}

/// How many bytes the ELF64 little-endian image read through `read` occupies: the farthest of
/// its headers, its section and program header tables, and every section's and segment's file
/// bytes. `read(offset, buf)` fills `buf` and answers `Ok(false)` when the bytes are not all
/// there; only what the headers promise is read, so the image may sit behind a raw pointer of
/// unknown extent. `known_len` bounds the result when the source's length is known.
///
/// # Errors
/// [`ExtentError::Elf`] for a malformed header or tables, an overflow, or an image that runs
/// past `known_len`; [`ExtentError::Source`] when `read` fails.
pub fn extent<E>(
    mut read: impl FnMut(u64, &mut [u8]) -> std::result::Result<bool, E>,
    known_len: Option<u64>,
) -> std::result::Result<u64, ExtentError<E>> {
    use object::pod::from_bytes;
    let file_len = known_len.unwrap_or(0);
    let mut fetch = |offset: u64, buf: &mut [u8], what: &dyn Fn() -> String| match read(offset, buf)
    {
        Ok(true) => Ok(()),
        Ok(false) => Err(ExtentError::Elf(ElfError::Truncated {
            what: what(),
            offset,
            size: buf.len() as u64,
            file_len,
        })),
        Err(e) => Err(ExtentError::Source(e)),
    };
    let mut head = [0u8; 64];
    fetch(0, &mut head, &|| "ELF header".into())?;
    let raw = parse_header(&head).map_err(ExtentError::Elf)?;
    let e = LE;
    let overflow = |what: &str| {
        ExtentError::Elf(ElfError::Invalid {
            what: what.to_owned(),
            offset: 0,
            reason: "offset plus size overflows".into(),
        })
    };
    let mut end: u64 = 64;
    let phnum = u64::from(raw.e_phnum.get(e));
    if phnum > 0 {
        let phentsize = raw.e_phentsize.get(e);
        if usize::from(phentsize) != std::mem::size_of::<ProgramHeader64<LE>>() {
            return Err(ExtentError::Elf(ElfError::Invalid {
                what: "ELF header e_phentsize".into(),
                offset: 54,
                reason: format!("{phentsize}, expected 56"),
            }));
        }
        let phoff = raw.e_phoff.get(e);
        end = end.max(
            phoff
                .checked_add(phnum * 56)
                .ok_or_else(|| overflow("program header table"))?,
        );
        for i in 0..phnum {
            let mut buf = [0u8; 56];
            fetch(phoff + i * 56, &mut buf, &|| format!("program header {i}"))?;
            let (ph, _) =
                from_bytes::<ProgramHeader64<LE>>(&buf).map_err(|()| overflow("program header"))?;
            end = end.max(
                ph.p_offset
                    .get(e)
                    .checked_add(ph.p_filesz.get(e))
                    .ok_or_else(|| overflow("segment"))?,
            );
        }
    }
    let shnum = u64::from(raw.e_shnum.get(e));
    if shnum > 0 {
        let shentsize = raw.e_shentsize.get(e);
        if usize::from(shentsize) != std::mem::size_of::<SectionHeader64<LE>>() {
            return Err(ExtentError::Elf(ElfError::Invalid {
                what: "ELF header e_shentsize".into(),
                offset: 58,
                reason: format!("{shentsize}, expected 64"),
            }));
        }
        let shoff = raw.e_shoff.get(e);
        end = end.max(
            shoff
                .checked_add(shnum * 64)
                .ok_or_else(|| overflow("section header table"))?,
        );
        for i in 0..shnum {
            let mut buf = [0u8; 64];
            fetch(shoff + i * 64, &mut buf, &|| format!("section header {i}"))?;
            let (sh, _) =
                from_bytes::<SectionHeader64<LE>>(&buf).map_err(|()| overflow("section header"))?;
            if sh.sh_type.get(e) == object::elf::SHT_NOBITS {
                continue; // occupies no file bytes
            }
            end = end.max(
                sh.sh_offset
                    .get(e)
                    .checked_add(sh.sh_size.get(e))
                    .ok_or_else(|| overflow("section"))?,
            );
        }
    }
    if let Some(len) = known_len {
        if end > len {
            return Err(ExtentError::Elf(ElfError::Truncated {
                what: "ELF image".into(),
                offset: 0,
                size: end,
                file_len: len,
            }));
        }
    }
    Ok(end)
}

/// The libraries a dynamically linked ELF file asks for (`DT_NEEDED`, in order), read through
/// its dynamic segment and `.dynstr`; empty for a static file. Names that cannot be read are
/// skipped.
///
/// # Errors
/// An [`ElfError`] when the file is no ELF64 file or its tables run past its end.
pub fn needed_libraries(data: &[u8]) -> Result<Vec<String>> {
    let elf = Elf::parse(data)?;
    let Some(dynstr) = elf.sections.iter().find(|s| s.name == ".dynstr") else {
        return Ok(Vec::new());
    };
    let table = bytes_at(data, dynstr.offset, dynstr.size, || ".dynstr".into())?;
    Ok(elf
        .dynamic
        .iter()
        .filter(|d| d.tag == i64::from(object::elf::DT_NEEDED))
        .filter_map(|d| c_str_at(table, u32::try_from(d.value).ok()?))
        .map(str::to_owned)
        .collect())
}

impl<'data> Elf<'data> {
    pub(crate) fn parse(data: &'data [u8]) -> Result<Self> {
        let raw = parse_header(data)?;
        let header = header_fields(raw);
        let program_headers = parse_program_headers(data, raw)?;
        let sections = parse_sections(data, raw)?;
        let dynamic = parse_dynamic(data, &program_headers)?;
        let dynsym = parse_symbols(
            data,
            &sections,
            object::elf::SHT_DYNSYM,
            SymbolTableKind::Dynsym,
        )?;
        let symtab = parse_symbols(
            data,
            &sections,
            object::elf::SHT_SYMTAB,
            SymbolTableKind::Symtab,
        )?;
        let notes = parse_notes(data, &program_headers, &sections)?;
        Ok(Self {
            header,
            program_headers,
            sections,
            dynamic,
            dynsym,
            symtab,
            notes,
        })
    }

    /// The symbol table a relocation section refers to through `sh_link`.
    pub(crate) fn linked_symbols(
        &self,
        section: &Section<'data>,
    ) -> Result<Option<&[Symbol<'data>]>> {
        if section.link == 0 {
            return Ok(None);
        }
        let linked =
            self.sections
                .get(section.link as usize)
                .ok_or_else(|| ElfError::InvalidSection {
                    index: section.index,
                    name: section.name.to_owned(),
                    reason: format!("sh_link {} is not a section", section.link),
                })?;
        match linked.sh_type {
            object::elf::SHT_DYNSYM => Ok(Some(&self.dynsym)),
            object::elf::SHT_SYMTAB => Ok(Some(&self.symtab)),
            t => Err(ElfError::InvalidSection {
                index: section.index,
                name: section.name.to_owned(),
                reason: format!(
                    "sh_link {} is a section of type {t}, not a symbol table",
                    section.link
                ),
            }),
        }
    }
}

fn parse_program_headers(data: &[u8], raw: &FileHeader64<LE>) -> Result<Vec<Segment>> {
    let e = LE;
    let phoff = raw.e_phoff.get(e);
    let phnum = raw.e_phnum.get(e);
    if phnum == 0 {
        return Ok(Vec::new());
    }
    let phentsize = raw.e_phentsize.get(e);
    if usize::from(phentsize) != std::mem::size_of::<ProgramHeader64<LE>>() {
        return Err(ElfError::Invalid {
            what: "ELF header e_phentsize".into(),
            offset: 54,
            reason: format!("{phentsize}, expected 56"),
        });
    }
    if phnum == 0xffff {
        return Err(ElfError::Unsupported {
            reason: "extended program header numbering (PN_XNUM)".into(),
        });
    }
    let table: &[ProgramHeader64<LE>] = read_slice_at(data, phoff, u64::from(phnum), || {
        format!("program header table ({phnum} entries)")
    })?;
    let mut out = Vec::with_capacity(table.len());
    for (i, ph) in table.iter().enumerate() {
        let index = i as u16; // phnum is a u16
        let entry_offset = phoff + 56 * u64::from(index);
        let seg = Segment {
            index,
            p_type: ph.p_type.get(e),
            flags: SegmentFlags(ph.p_flags.get(e)),
            offset: ph.p_offset.get(e),
            vaddr: ph.p_vaddr.get(e),
            file_size: ph.p_filesz.get(e),
            mem_size: ph.p_memsz.get(e),
            align: ph.p_align.get(e),
        };
        let invalid = |reason: String| ElfError::Invalid {
            what: format!("program header {index}"),
            offset: entry_offset,
            reason,
        };
        if seg.p_type == PT_LOAD || seg.p_type == PT_DYNAMIC || seg.p_type == PT_NOTE {
            match seg.offset.checked_add(seg.file_size) {
                Some(end) if end <= data.len() as u64 => {}
                _ => {
                    return Err(invalid(format!(
                        "p_offset {:#x} + p_filesz {:#x} runs past the end of the {}-byte file",
                        seg.offset,
                        seg.file_size,
                        data.len()
                    )))
                }
            }
        }
        if seg.p_type == PT_LOAD {
            if seg.file_size > seg.mem_size {
                return Err(invalid(format!(
                    "p_filesz {:#x} > p_memsz {:#x}",
                    seg.file_size, seg.mem_size
                )));
            }
            if seg.vaddr.checked_add(seg.mem_size).is_none() {
                return Err(invalid(format!(
                    "p_vaddr {:#x} + p_memsz {:#x} overflows",
                    seg.vaddr, seg.mem_size
                )));
            }
        }
        out.push(seg);
    }
    // PT_LOADs must ascend and not overlap (ELF gABI; a loader copies each to base + p_vaddr).
    let mut previous: Option<&Segment> = None;
    for seg in out.iter().filter(|s| s.p_type == PT_LOAD) {
        if let Some(prev) = previous {
            if seg.vaddr < prev.vaddr_end() {
                return Err(ElfError::Invalid {
                    what: format!("program header {}", seg.index),
                    offset: phoff + 56 * u64::from(seg.index),
                    reason: format!(
                        "PT_LOAD at p_vaddr {:#x} overlaps or precedes PT_LOAD {} ending at {:#x}",
                        seg.vaddr,
                        prev.index,
                        prev.vaddr_end()
                    ),
                });
            }
        }
        previous = Some(seg);
    }
    if let Some(last) = previous {
        if last.vaddr_end() > MAX_LOAD_IMAGE_SIZE {
            return Err(ElfError::LimitExceeded {
                what: format!(
                    "load image size (PT_LOAD {} ends at p_vaddr + p_memsz)",
                    last.index
                ),
                value: last.vaddr_end(),
                limit: MAX_LOAD_IMAGE_SIZE,
            });
        }
    }
    Ok(out)
}

fn parse_sections<'data>(data: &'data [u8], raw: &FileHeader64<LE>) -> Result<Vec<Section<'data>>> {
    let e = LE;
    let shoff = raw.e_shoff.get(e);
    if shoff == 0 {
        return Ok(Vec::new());
    }
    let shentsize = raw.e_shentsize.get(e);
    if usize::from(shentsize) != std::mem::size_of::<SectionHeader64<LE>>() {
        return Err(ElfError::Invalid {
            what: "ELF header e_shentsize".into(),
            offset: 58,
            reason: format!("{shentsize}, expected 64"),
        });
    }
    let first: &SectionHeader64<LE> = read_at(data, shoff, || "section header 0".into())?;
    // Extended numbering: e_shnum 0 and e_shstrndx SHN_XINDEX put the real values in section 0.
    let shnum = match raw.e_shnum.get(e) {
        0 => first.sh_size.get(e),
        n => u64::from(n),
    };
    let shstrndx = match raw.e_shstrndx.get(e) {
        SHN_XINDEX => first.sh_link.get(e),
        n => u32::from(n),
    };
    let table: &[SectionHeader64<LE>] = read_slice_at(data, shoff, shnum, || {
        format!("section header table ({shnum} entries)")
    })?;
    let names: &[u8] = match table.get(shstrndx as usize) {
        Some(sh) if shstrndx != 0 => {
            let (off, size) = (sh.sh_offset.get(e), sh.sh_size.get(e));
            bytes_at(data, off, size, || {
                format!("section name table (section {shstrndx})")
            })?
        }
        Some(_) => &[],
        None => {
            return Err(ElfError::Invalid {
                what: "ELF header e_shstrndx".into(),
                offset: 62,
                reason: format!("{shstrndx} is not one of the {shnum} sections"),
            })
        }
    };
    let mut out = Vec::with_capacity(table.len());
    for (i, sh) in table.iter().enumerate() {
        let index = i as u32; // bounded by read_slice_at on a file < 4 GiB of 64-byte entries
        let name_offset = sh.sh_name.get(e);
        let name = if i == 0 && name_offset == 0 {
            ""
        } else {
            c_str_at(names, name_offset).ok_or_else(|| ElfError::InvalidSection {
                index,
                name: "?".into(),
                reason: format!(
                    "sh_name {name_offset:#x} is not a string in the {}-byte section name table",
                    names.len()
                ),
            })?
        };
        let sec = Section {
            index,
            name,
            sh_type: sh.sh_type.get(e),
            flags: sh.sh_flags.get(e),
            addr: sh.sh_addr.get(e),
            offset: sh.sh_offset.get(e),
            size: sh.sh_size.get(e),
            link: sh.sh_link.get(e),
            info: sh.sh_info.get(e),
            align: sh.sh_addralign.get(e),
            entsize: sh.sh_entsize.get(e),
        };
        if i > 0
            && sec.has_file_bytes()
            && !matches!(sec.offset.checked_add(sec.size), Some(end) if end <= data.len() as u64)
        {
            return Err(ElfError::InvalidSection {
                index,
                name: name.to_owned(),
                reason: format!(
                    "sh_offset {:#x} + sh_size {:#x} runs past the end of the {}-byte file",
                    sec.offset,
                    sec.size,
                    data.len()
                ),
            });
        }
        out.push(sec);
    }
    Ok(out)
}

/// The NUL-terminated UTF-8 string at `offset` in a string table.
pub(crate) fn c_str_at(table: &[u8], offset: u32) -> Option<&str> {
    let rest = table.get(offset as usize..)?;
    let len = rest.iter().position(|&b| b == 0)?;
    std::str::from_utf8(&rest[..len]).ok()
}

fn section_bytes<'data>(data: &'data [u8], s: &Section<'data>) -> Result<&'data [u8]> {
    bytes_at(data, s.offset, s.size, || {
        format!("section {} ({})", s.index, s.name)
    })
}

fn parse_symbols<'data>(
    data: &'data [u8],
    sections: &[Section<'data>],
    sh_type: u32,
    table: SymbolTableKind,
) -> Result<Vec<Symbol<'data>>> {
    let mut found = sections.iter().filter(|s| s.sh_type == sh_type);
    let Some(sec) = found.next() else {
        return Ok(Vec::new());
    };
    if let Some(second) = found.next() {
        return Err(ElfError::InvalidSection {
            index: second.index,
            name: second.name.to_owned(),
            reason: format!(
                "a second {table} symbol table (the first is section {})",
                sec.index
            ),
        });
    }
    let invalid_section = |reason: String| ElfError::InvalidSection {
        index: sec.index,
        name: sec.name.to_owned(),
        reason,
    };
    let entsize = std::mem::size_of::<Sym64<LE>>() as u64;
    if sec.size % entsize != 0 {
        return Err(invalid_section(format!(
            "size {:#x} is not a multiple of {entsize}",
            sec.size
        )));
    }
    let strtab = match sections.get(sec.link as usize) {
        Some(s) if s.sh_type == object::elf::SHT_STRTAB => section_bytes(data, s)?,
        _ => {
            return Err(invalid_section(format!(
                "sh_link {} is not a string table",
                sec.link
            )))
        }
    };
    let raw: &[Sym64<LE>] = read_slice_at(data, sec.offset, sec.size / entsize, || {
        format!("symbol table {} ({})", sec.index, sec.name)
    })?;
    let e = LE;
    let mut out = Vec::with_capacity(raw.len());
    for (i, sym) in raw.iter().enumerate() {
        let index = i as u32; // bounded by the file size
        let name_offset = sym.st_name.get(e);
        let invalid = |name: Option<&str>, reason: String| ElfError::InvalidSymbol {
            table,
            index,
            name: name.map(str::to_owned),
            reason,
        };
        let name = c_str_at(strtab, name_offset).ok_or_else(|| {
            invalid(
                None,
                format!(
                    "st_name {name_offset:#x} is not a UTF-8 string in the {}-byte string table",
                    strtab.len()
                ),
            )
        })?;
        let section_index = sym.st_shndx.get(e);
        if section_index == SHN_XINDEX {
            return Err(invalid(
                Some(name),
                "SHN_XINDEX section indices are not supported".into(),
            ));
        }
        if section_index != SHN_UNDEF
            && section_index < SHN_LORESERVE
            && usize::from(section_index) >= sections.len()
        {
            return Err(invalid(
                Some(name),
                format!(
                    "st_shndx {section_index} is not one of the {} sections",
                    sections.len()
                ),
            ));
        }
        out.push(Symbol {
            table,
            index,
            name,
            value: sym.st_value.get(e),
            size: sym.st_size.get(e),
            kind: SymbolKind::from_raw(sym.st_type()),
            binding: Binding::from_raw(sym.st_bind()),
            visibility: Visibility::from_raw(sym.st_visibility()),
            section_index,
        });
    }
    Ok(out)
}

/// Reads the entries of a relocation section with addends (`SHT_RELA`).
pub(crate) fn parse_rela(
    data: &[u8],
    sec: &Section<'_>,
    symbol_count: usize,
) -> Result<Vec<RawRelocation>> {
    let entsize = std::mem::size_of::<Rela64<LE>>() as u64;
    if sec.size % entsize != 0 {
        return Err(ElfError::InvalidSection {
            index: sec.index,
            name: sec.name.to_owned(),
            reason: format!("size {:#x} is not a multiple of {entsize}", sec.size),
        });
    }
    let raw: &[Rela64<LE>] = read_slice_at(data, sec.offset, sec.size / entsize, || {
        format!("relocation section {} ({})", sec.index, sec.name)
    })?;
    let e = LE;
    let mut out = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let index = i as u32;
        let file_offset = sec.offset + entsize * u64::from(index);
        let symbol = r.r_sym(e, false);
        if symbol != 0 && symbol as usize >= symbol_count {
            return Err(ElfError::InvalidRelocation {
                section: sec.name.to_owned(),
                index,
                offset: file_offset,
                reason: format!("symbol index {symbol} is not one of the {symbol_count} symbols of the linked table"),
            });
        }
        out.push(RawRelocation {
            index,
            file_offset,
            offset: r.r_offset.get(e),
            r_type: r.r_type(e, false),
            symbol,
            addend: r.r_addend.get(e),
        });
    }
    Ok(out)
}

fn parse_dynamic(data: &[u8], program_headers: &[Segment]) -> Result<Vec<DynamicEntry>> {
    let mut dynamics = program_headers.iter().filter(|p| p.p_type == PT_DYNAMIC);
    let Some(seg) = dynamics.next() else {
        return Ok(Vec::new());
    };
    let entsize = std::mem::size_of::<Dyn64<LE>>() as u64;
    // p_offset + p_filesz was checked against the file length.
    let raw: &[Dyn64<LE>] = read_slice_at(data, seg.offset, seg.file_size / entsize, || {
        "dynamic segment".into()
    })?;
    let e = LE;
    let mut out = Vec::new();
    for d in raw {
        let tag = d.d_tag.get(e) as i64;
        if tag == i64::from(object::elf::DT_NULL) {
            break;
        }
        out.push(DynamicEntry {
            tag,
            value: d.d_val.get(e),
        });
    }
    Ok(out)
}

/// Notes from the `PT_NOTE` segments, or from `SHT_NOTE` sections when there are none.
fn parse_notes<'data>(
    data: &'data [u8],
    program_headers: &[Segment],
    sections: &[Section<'data>],
) -> Result<Vec<Note<'data>>> {
    let mut out = Vec::new();
    let segments: Vec<(u64, u64, u64)> = program_headers
        .iter()
        .filter(|p| p.p_type == PT_NOTE)
        .map(|p| (p.offset, p.file_size, p.align))
        .collect();
    let areas = if segments.is_empty() {
        sections
            .iter()
            .filter(|s| s.sh_type == object::elf::SHT_NOTE)
            .map(|s| (s.offset, s.size, s.align))
            .collect()
    } else {
        segments
    };
    for (offset, size, align) in areas {
        let bytes = bytes_at(data, offset, size, || "note area".into())?;
        parse_note_area(bytes, offset, if align == 8 { 8 } else { 4 }, &mut out)?;
    }
    Ok(out)
}

fn parse_note_area<'data>(
    bytes: &'data [u8],
    base: u64,
    align: u64,
    out: &mut Vec<Note<'data>>,
) -> Result<()> {
    let mut pos: u64 = 0;
    let len = bytes.len() as u64;
    while pos < len {
        let offset = base + pos;
        let invalid = |reason: String| ElfError::InvalidNote { offset, reason };
        let word = |at: u64| -> Result<u32> {
            crate::bytes::u32_at(bytes, pos + at)
                .ok_or_else(|| invalid(format!("header needs 12 bytes, {} left", len - pos)))
        };
        let (namesz, descsz, n_type) = (u64::from(word(0)?), u64::from(word(4)?), word(8)?);
        let name_start = pos + 12;
        let name_end = name_start + namesz; // namesz < 2^32, no overflow on u64
        let desc_start = crate::bytes::align_up(name_end, align)
            .ok_or_else(|| invalid("name size overflows".into()))?;
        let desc_end = desc_start + descsz;
        if name_end > len || desc_end > len {
            return Err(invalid(format!(
                "n_namesz {namesz} / n_descsz {descsz} run past the end of the {len}-byte note area at {base:#x}"
            )));
        }
        let mut name = &bytes[name_start as usize..name_end as usize];
        if let Some((&0, rest)) = name.split_last() {
            name = rest;
        }
        out.push(Note {
            offset,
            name,
            n_type,
            desc_offset: base + desc_start,
            desc: &bytes[desc_start as usize..desc_end as usize],
        });
        pos = crate::bytes::align_up(desc_end, align)
            .ok_or_else(|| invalid("descriptor size overflows".into()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_sizes_that_lie_are_errors() {
        // namesz 7 ("AMDGPU\0"), descsz 100 but only 4 bytes follow.
        let mut note = Vec::new();
        note.extend_from_slice(&7u32.to_le_bytes());
        note.extend_from_slice(&100u32.to_le_bytes());
        note.extend_from_slice(&32u32.to_le_bytes());
        note.extend_from_slice(b"AMDGPU\0\0");
        note.extend_from_slice(&[0x80, 0, 0, 0]);
        let err = parse_note_area(&note, 0x238, 4, &mut Vec::new()).unwrap_err();
        assert!(
            matches!(err, ElfError::InvalidNote { offset: 0x238, .. }),
            "{err}"
        );
        // With the right size it parses.
        note[4..8].copy_from_slice(&4u32.to_le_bytes());
        let mut out = Vec::new();
        parse_note_area(&note, 0x238, 4, &mut out).unwrap();
        assert_eq!(out[0].name, b"AMDGPU");
        assert_eq!(out[0].desc, &[0x80, 0, 0, 0]);
        assert_eq!(out[0].desc_offset, 0x238 + 20);
    }

    #[test]
    fn c_strings_need_a_terminator() {
        assert_eq!(c_str_at(b"\0abc\0", 1), Some("abc"));
        assert_eq!(c_str_at(b"\0abc", 1), None);
        assert_eq!(c_str_at(b"\0abc\0", 9), None);
    }
}
