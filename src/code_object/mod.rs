//! Code objects: one AMDGPU HSA ELF (code object v3–v6) read as a zero-copy view.
//!
//! Sits between the containers (which find a code object's bytes in a fat binary) and the
//! loader (which copies segments, applies relocations and publishes symbols). It parses the
//! ELF header, target, `PT_LOAD` layout, dynamic section, symbol tables, `.rela.dyn` and notes
//! eagerly, decodes the metadata note and the kernel descriptors, and classifies symbols into
//! kernels, device functions, variables, imports and exports. Problems a loader would have
//! with a well-formed object (unsupported relocations, descriptor/metadata mismatches,
//! typed imports) are reported as values before anything is loaded. Code bytes are never
//! copied. Not for loading, linking or choosing a code object for an agent.
//!
//! # Examples
//! ```no_run
//! let bytes = std::fs::read("kernels.co")?;
//! let co = rocload::code_object::CodeObject::parse(&bytes)?;
//! for k in co.kernels() {
//!     println!("{} at {:#x}", k.name, k.descriptor_address);
//! }
//! for issue in co.unsupported_relocations() {
//!     eprintln!("cannot load: {issue}");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod descriptor;
mod error;
mod kernel_info;
mod metadata;
mod relocation;
mod report;

use std::collections::{HashMap, HashSet};

use serde::Serialize;

pub use crate::elf::{
    Binding, DynamicEntry, Header, Note, Section, Segment, SegmentFlags, Symbol, SymbolKind,
    Visibility, MAX_LOAD_IMAGE_SIZE, PT_DYNAMIC, PT_LOAD, PT_NOTE,
};
pub use descriptor::{KernelDescriptor, KERNEL_DESCRIPTOR_SIZE};
pub use error::{CodeObjectError, Result, SymbolTableKind};
pub use kernel_info::{KernelArgInfo, KernelInfo};
pub use metadata::{
    decode as decode_metadata, KernelArg, KernelMetadata, Metadata, UnknownKey, ValueKind,
    NOTE_OWNER_AMDGPU, NT_AMDGPU_METADATA,
};
pub use relocation::{Relocation, RelocationIssue, RelocationIssueKind, RelocationType};
pub use report::{
    symbols_report, FunctionReport, ImportReport, RelocationSummary, SymbolsReport, VariableReport,
};

use crate::elf::{self, Elf};
pub use crate::target::ElfTarget;

pub use crate::target::ELFOSABI_AMDGPU_HSA;
/// `e_type` of a loadable code object.
pub const ET_DYN: u16 = object::elf::ET_DYN;

/// A kernel: its descriptor symbol, code symbol, decoded descriptor and metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kernel<'data> {
    /// The descriptor symbol's name without `.kd` (mangled for C++).
    pub name: &'data str,
    /// The `<name>.kd` symbol (`STT_OBJECT`, 64 bytes).
    pub descriptor_symbol: Symbol<'data>,
    /// Address of the descriptor in the code object (`descriptor_symbol.value`); a dispatch's
    /// `kernel_object` is the load base plus this.
    pub descriptor_address: u64,
    /// The `STT_FUNC` symbol of the code, when present.
    pub code_symbol: Option<Symbol<'data>>,
    /// The decoded descriptor, `None` when its bytes are not in the file (see [`KernelIssue`]).
    pub descriptor: Option<KernelDescriptor>,
    /// Index of this kernel's entry in [`Metadata::kernels`], matched by `.symbol`.
    pub metadata_index: Option<usize>,
}

/// A kernel whose descriptor, code or metadata do not agree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum KernelIssue {
    /// A descriptor field differs from the metadata.
    Mismatch {
        /// Kernel name.
        kernel: String,
        /// Which field.
        field: &'static str,
        /// Value in the descriptor.
        descriptor: u64,
        /// Value in the metadata.
        metadata: u64,
    },
    /// The metadata names a `.symbol` that is not a defined symbol.
    MissingDescriptor {
        /// Kernel name from the metadata.
        kernel: String,
        /// The `.symbol` it names.
        symbol: String,
    },
    /// A `.kd` symbol has no metadata entry.
    MissingMetadata {
        /// Kernel name.
        kernel: String,
    },
    /// The descriptor's 64 bytes are not in a file-backed part of a `PT_LOAD`, or the symbol
    /// size is not 64.
    BadDescriptor {
        /// Kernel name.
        kernel: String,
        /// Why.
        reason: String,
    },
    /// The code entry (descriptor address + `kernel_code_entry_byte_offset`) is not in an
    /// executable segment, or not where the kernel's code symbol is.
    BadEntry {
        /// Kernel name.
        kernel: String,
        /// The entry address computed from the descriptor, if it did not overflow.
        entry: Option<u64>,
        /// Why.
        reason: String,
    },
}

impl std::fmt::Display for KernelIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Mismatch {
                kernel,
                field,
                descriptor,
                metadata,
            } => {
                write!(
                    f,
                    "kernel {kernel}: descriptor {field} = {descriptor}, metadata says {metadata}"
                )
            }
            Self::MissingDescriptor { kernel, symbol } => {
                write!(f, "kernel {kernel}: metadata names descriptor {symbol}, which is not a defined symbol")
            }
            Self::MissingMetadata { kernel } => write!(f, "kernel {kernel}: no metadata entry"),
            Self::BadDescriptor { kernel, reason } => {
                write!(f, "kernel {kernel}: descriptor {reason}")
            }
            Self::BadEntry {
                kernel,
                entry,
                reason,
            } => match entry {
                Some(e) => write!(f, "kernel {kernel}: code entry {e:#x} {reason}"),
                None => write!(f, "kernel {kernel}: code entry {reason}"),
            },
        }
    }
}

/// One parsed AMDGPU code object, borrowing the caller's bytes.
#[derive(Debug)]
pub struct CodeObject<'data> {
    data: &'data [u8],
    elf: Elf<'data>,
    target: ElfTarget,
    load_size: u64,
    relocations: Vec<Relocation<'data>>,
    static_relocations: Vec<Relocation<'data>>,
    relocation_issues: Vec<RelocationIssue<'data>>,
    metadata: Option<Metadata<'data>>,
    kernels: Vec<Kernel<'data>>,
    kernel_issues: Vec<KernelIssue>,
    functions: Vec<Symbol<'data>>,
    variables: Vec<Symbol<'data>>,
    imports: Vec<Symbol<'data>>,
    exports: Vec<Symbol<'data>>,
}

impl<'data> CodeObject<'data> {
    /// Parses a code object. Headers and tables are read now; nothing is copied.
    ///
    /// # Errors
    /// [`CodeObjectError::NotElf`], [`CodeObjectError::NotAmdgpu`] for other ELF files,
    /// [`CodeObjectError::Unsupported`] for code object v2 and relocatable objects, and a
    /// variant naming the offset, section, symbol or metadata key for anything malformed.
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        let raw = elf::parse_header(data)?;
        let os_abi = raw.e_ident.os_abi;
        let abi_version = raw.e_ident.abi_version;
        let machine = raw.e_machine.get(object::LittleEndian);
        if machine != object::elf::EM_AMDGPU {
            return Err(CodeObjectError::NotAmdgpu {
                reason: format!("e_machine {machine}, not EM_AMDGPU (224)"),
            });
        }
        if os_abi != ELFOSABI_AMDGPU_HSA {
            return Err(CodeObjectError::NotAmdgpu {
                reason: format!("EI_OSABI {os_abi}, not AMDGPU HSA (64); PAL (65) and Mesa (66) objects are not HSA code objects"),
            });
        }
        match abi_version {
            0 => {
                return Err(CodeObjectError::Unsupported {
                    reason: "code object v2 (EI_ABIVERSION 0); recompile with -mcode-object-version=4 or later".into(),
                })
            }
            1..=4 => {}
            v => return Err(CodeObjectError::Unsupported { reason: format!("EI_ABIVERSION {v} (newer than code object v6)") }),
        }
        let e_type = raw.e_type.get(object::LittleEndian);
        if e_type != ET_DYN {
            return Err(CodeObjectError::Unsupported {
                reason: format!(
                    "e_type {e_type}, not ET_DYN (3); {}",
                    if e_type == object::elf::ET_REL {
                        "link the object with ld.lld -shared"
                    } else {
                        "not a loadable code object"
                    }
                ),
            });
        }
        let target =
            ElfTarget::from_header(os_abi, abi_version, raw.e_flags.get(object::LittleEndian))
                .map_err(CodeObjectError::Target)?;
        let elf = Elf::parse(data)?;
        let load_size = elf
            .program_headers
            .iter()
            .filter(|p| p.p_type == PT_LOAD)
            .map(Segment::vaddr_end)
            .max()
            .unwrap_or(0);
        let mut co = CodeObject {
            data,
            elf,
            target,
            load_size,
            relocations: Vec::new(),
            static_relocations: Vec::new(),
            relocation_issues: Vec::new(),
            metadata: None,
            kernels: Vec::new(),
            kernel_issues: Vec::new(),
            functions: Vec::new(),
            variables: Vec::new(),
            imports: Vec::new(),
            exports: Vec::new(),
        };
        co.metadata = co.decode_metadata()?;
        co.read_relocations()?;
        co.classify_symbols();
        co.check_relocations();
        tracing::debug!(
            target = %co.target.target,
            version = co.target.code_object_version,
            kernels = co.kernels.len(),
            functions = co.functions.len(),
            variables = co.variables.len(),
            imports = co.imports.len(),
            relocations = co.relocations.len(),
            relocation_issues = co.relocation_issues.len(),
            kernel_issues = co.kernel_issues.len(),
            "parsed code object"
        );
        Ok(co)
    }

    /// The bytes this view borrows.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The ELF header fields.
    pub fn header(&self) -> &Header {
        &self.elf.header
    }

    /// Target, code object version and generic version, decoded by the target layer.
    pub fn target(&self) -> &ElfTarget {
        &self.target
    }

    /// Code object version (3–6).
    pub fn code_object_version(&self) -> u32 {
        self.target.code_object_version
    }

    /// Every program header, in table order.
    pub fn program_headers(&self) -> &[Segment] {
        &self.elf.program_headers
    }

    /// The `PT_LOAD` segments, in ascending, non-overlapping `p_vaddr` order (checked).
    pub fn segments(&self) -> impl Iterator<Item = &Segment> + '_ {
        self.elf
            .program_headers
            .iter()
            .filter(|p| p.p_type == PT_LOAD)
    }

    /// The file bytes of a segment (`p_filesz` of them; the rest of `p_memsz` is zero).
    pub fn segment_bytes(&self, segment: &Segment) -> &'data [u8] {
        // Checked against the file length at parse time for PT_LOAD/PT_NOTE/PT_DYNAMIC.
        crate::bytes::slice_at(self.data, segment.offset, segment.file_size).unwrap_or(&[])
    }

    /// Size of the load image: the last `p_vaddr + p_memsz` (ROCr rounds it up to 256).
    pub fn load_size(&self) -> u64 {
        self.load_size
    }

    /// Section headers, names resolved.
    pub fn sections(&self) -> &[Section<'data>] {
        &self.elf.sections
    }

    /// The first section called `name`.
    pub fn section_by_name(&self, name: &str) -> Option<&Section<'data>> {
        self.elf.sections.iter().find(|s| s.name == name)
    }

    /// `PT_DYNAMIC` entries up to `DT_NULL`.
    pub fn dynamic(&self) -> &[DynamicEntry] {
        &self.elf.dynamic
    }

    /// `.dynsym`, entry 0 included (so that indices match).
    pub fn dynamic_symbols(&self) -> &[Symbol<'data>] {
        &self.elf.dynsym
    }

    /// `.symtab`, entry 0 included; empty when stripped.
    pub fn symbol_table(&self) -> &[Symbol<'data>] {
        &self.elf.symtab
    }

    /// Notes from `PT_NOTE` (or `SHT_NOTE` sections when there is no `PT_NOTE`).
    pub fn notes(&self) -> &[Note<'data>] {
        &self.elf.notes
    }

    /// The decoded `NT_AMDGPU_METADATA` note, if the object has one.
    pub fn metadata(&self) -> Option<&Metadata<'data>> {
        self.metadata.as_ref()
    }

    /// Kernels, in symbol table order.
    pub fn kernels(&self) -> &[Kernel<'data>] {
        &self.kernels
    }

    /// The kernel called `name` (with or without the `.kd` suffix).
    pub fn kernel(&self, name: &str) -> Option<&Kernel<'data>> {
        let name = name.strip_suffix(".kd").unwrap_or(name);
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The metadata of a kernel.
    pub fn kernel_metadata(&self, kernel: &Kernel<'data>) -> Option<&KernelMetadata<'data>> {
        self.metadata.as_ref()?.kernels.get(kernel.metadata_index?)
    }

    /// The decoded descriptor of the kernel called `name` (with or without `.kd`).
    pub fn kernel_descriptor(&self, name: &str) -> Option<&KernelDescriptor> {
        self.kernel(name)?.descriptor.as_ref()
    }

    /// Disagreements between descriptors, code symbols and metadata.
    pub fn kernel_issues(&self) -> &[KernelIssue] {
        &self.kernel_issues
    }

    /// Device functions: defined `STT_FUNC` symbols that are not a kernel's code, local ones
    /// included (from `.symtab`, or `.dynsym` when stripped).
    pub fn functions(&self) -> &[Symbol<'data>] {
        &self.functions
    }

    /// Variables: defined `STT_OBJECT` symbols other than kernel descriptors.
    pub fn variables(&self) -> &[Symbol<'data>] {
        &self.variables
    }

    /// Imports: undefined non-local `.dynsym` symbols, which a loader must resolve.
    pub fn imports(&self) -> &[Symbol<'data>] {
        &self.imports
    }

    /// Imports typed `STT_FUNC` or `STT_OBJECT`, which ROCr mistakes for defined symbols.
    pub fn typed_imports(&self) -> impl Iterator<Item = &Symbol<'data>> + '_ {
        self.imports
            .iter()
            .filter(|s| matches!(s.kind, SymbolKind::Func | SymbolKind::Object))
    }

    /// Exports: every defined `.dynsym` symbol (name, value, size, kind) other than
    /// section and file symbols.
    pub fn exports(&self) -> &[Symbol<'data>] {
        &self.exports
    }

    /// Dynamic relocations (target-less `SHT_RELA` sections, i.e. `.rela.dyn`): what a
    /// loader applies, with symbols resolved.
    pub fn relocations(&self) -> &[Relocation<'data>] {
        &self.relocations
    }

    /// Relocations in other sections (`.rela.text` kept by `--emit-relocs`, `SHT_REL`):
    /// already applied by the static linker, ignored by loaders.
    pub fn static_relocations(&self) -> &[Relocation<'data>] {
        &self.static_relocations
    }

    /// Every relocation that ROCr or rocload's loader could not apply, found before loading.
    pub fn relocation_issues(&self) -> &[RelocationIssue<'data>] {
        &self.relocation_issues
    }

    /// The relocation issues that would make rocload's own loader fail.
    pub fn unsupported_relocations(&self) -> impl Iterator<Item = &RelocationIssue<'data>> + '_ {
        self.relocation_issues.iter().filter(|i| i.blocks_rocload)
    }

    /// The relocation issues that would make ROCr fail or misbehave.
    pub fn rocr_unsupported_relocations(
        &self,
    ) -> impl Iterator<Item = &RelocationIssue<'data>> + '_ {
        self.relocation_issues.iter().filter(|i| i.blocks_rocr)
    }

    /// The file bytes at virtual address `vaddr`, `len` long, if they lie inside the
    /// file-backed part of one `PT_LOAD`.
    pub fn bytes_at_vaddr(&self, vaddr: u64, len: u64) -> Option<&'data [u8]> {
        let seg = self.segments().find(|s| s.contains(vaddr, len))?;
        let end = vaddr.checked_add(len)?;
        if end > seg.vaddr.checked_add(seg.file_size)? {
            return None;
        }
        crate::bytes::slice_at(self.data, seg.offset.checked_add(vaddr - seg.vaddr)?, len)
    }

    /// The symbol table used for classification: `.symtab`, or `.dynsym` when stripped.
    fn classification_table(&self) -> &[Symbol<'data>] {
        if self.elf.symtab.is_empty() {
            &self.elf.dynsym
        } else {
            &self.elf.symtab
        }
    }

    /// Decodes every `NT_AMDGPU_METADATA` note. A static link without LTO concatenates the
    /// inputs' notes, so several are merged: kernels, printf strings and unknown keys are
    /// appended; version and target come from the first note.
    fn decode_metadata(&self) -> Result<Option<Metadata<'data>>> {
        let mut merged: Option<Metadata<'data>> = None;
        for note in self
            .elf
            .notes
            .iter()
            .filter(|n| n.name == NOTE_OWNER_AMDGPU && n.n_type == NT_AMDGPU_METADATA)
        {
            let md = metadata::decode(note.desc, note.desc_offset)?;
            match &mut merged {
                None => merged = Some(md),
                Some(first) => {
                    if md.target != first.target || md.version != first.version {
                        tracing::debug!(
                            offset = note.offset,
                            target = ?md.target,
                            version = ?md.version,
                            "metadata note disagrees with the first one; keeping the first's target and version"
                        );
                    }
                    first.kernels.extend(md.kernels);
                    first.printf.extend(md.printf);
                    first.unknown.extend(md.unknown);
                }
            }
        }
        if merged.is_none() {
            tracing::debug!("no NT_AMDGPU_METADATA note");
        }
        Ok(merged)
    }

    fn read_relocations(&mut self) -> Result<()> {
        let mut dynamic = Vec::new();
        let mut static_relocs = Vec::new();
        let mut issues = Vec::new();
        for sec in &self.elf.sections {
            let is_rela = sec.sh_type == object::elf::SHT_RELA;
            let is_rel = sec.sh_type == object::elf::SHT_REL;
            if !is_rela && !is_rel {
                continue;
            }
            let symbols = self.elf.linked_symbols(sec)?;
            let symbol_count = symbols.map_or(0, <[_]>::len);
            let raw = if is_rela {
                elf::parse_rela(self.data, sec, symbol_count)?
            } else {
                parse_rel(self.data, sec, symbol_count)?
            };
            let applied = is_rela && sec.info == 0;
            tracing::debug!(
                section = sec.name,
                count = raw.len(),
                applied,
                "relocation section"
            );
            for r in raw {
                let symbol = match (r.symbol, symbols) {
                    (0, _) | (_, None) => None,
                    (i, Some(table)) => table.get(i as usize).copied(),
                };
                let reloc = Relocation {
                    section: sec.index,
                    index: r.index,
                    offset: r.offset,
                    r_type: RelocationType(r.r_type),
                    symbol,
                    addend: r.addend,
                };
                if applied {
                    dynamic.push(reloc);
                } else {
                    let undefined =
                        symbol.is_some_and(|s| !s.is_defined() && s.binding != Binding::Weak);
                    if is_rel {
                        issues.push(RelocationIssue {
                            relocation: reloc,
                            kind: RelocationIssueKind::RelSection,
                            blocks_rocr: false,
                            blocks_rocload: false,
                        });
                    }
                    if undefined {
                        issues.push(RelocationIssue {
                            relocation: reloc,
                            kind: RelocationIssueKind::IgnoredUnresolved,
                            blocks_rocr: true,
                            blocks_rocload: true,
                        });
                    }
                    static_relocs.push(reloc);
                }
            }
        }
        self.relocations = dynamic;
        self.static_relocations = static_relocs;
        self.relocation_issues = issues;
        Ok(())
    }

    fn check_relocations(&mut self) {
        let mut issues = Vec::new();
        for r in &self.relocations {
            let t = r.r_type;
            let issue = |kind, blocks_rocr, blocks_rocload| RelocationIssue {
                relocation: *r,
                kind,
                blocks_rocr,
                blocks_rocload,
            };
            if t == RelocationType::NONE {
                continue;
            }
            if !t.rocload_applies() {
                issues.push(issue(RelocationIssueKind::UnsupportedType, true, true));
            } else if !t.rocr_applies() {
                issues.push(issue(RelocationIssueKind::RocrUnsupportedType, true, false));
            }
            if let Some(sym) = r.symbol {
                if !sym.is_defined() && matches!(sym.kind, SymbolKind::Func | SymbolKind::Object) {
                    issues.push(issue(
                        RelocationIssueKind::UndefinedTypedSymbol {
                            symbol_type: sym.kind,
                        },
                        true,
                        false,
                    ));
                }
            }
            let width = t.width().unwrap_or(1);
            if !self.segments().any(|s| s.contains(r.offset, width)) {
                issues.push(issue(RelocationIssueKind::OutsideLoadSegments, true, true));
            }
            if t.is_absolute() {
                let known_zero = match r.symbol {
                    None => r.addend == 0,
                    Some(s) if s.is_defined() => s.value.checked_add_signed(r.addend) == Some(0),
                    Some(_) => false,
                };
                if known_zero {
                    issues.push(issue(RelocationIssueKind::ZeroAbsoluteValue, true, false));
                }
            }
        }
        for i in &issues {
            tracing::debug!(issue = %i, "relocation a loader cannot apply");
        }
        self.relocation_issues.extend(issues);
    }

    fn classify_symbols(&mut self) {
        let table = self.classification_table();
        let metadata_symbols: HashMap<&str, usize> = self
            .metadata
            .as_ref()
            .map(|m| {
                m.kernels
                    .iter()
                    .enumerate()
                    .map(|(i, k)| (k.symbol, i))
                    .collect()
            })
            .unwrap_or_default();
        let mut kernels = Vec::new();
        let mut kernel_names: HashSet<&str> = HashSet::new();
        let mut issues = Vec::new();
        for sym in table.iter().skip(1).filter(|s| s.is_defined()) {
            let from_metadata = metadata_symbols.get(sym.name).copied();
            let is_kd = sym.kind == SymbolKind::Object && sym.name.ends_with(".kd");
            if !is_kd && from_metadata.is_none() {
                continue;
            }
            let name = sym.name.strip_suffix(".kd").unwrap_or(sym.name);
            if !kernel_names.insert(name) {
                continue; // the same kernel listed twice (e.g. local and global): keep the first
            }
            kernels.push(Kernel {
                name,
                descriptor_symbol: *sym,
                descriptor_address: sym.value,
                code_symbol: None,
                descriptor: None,
                metadata_index: from_metadata,
            });
        }
        // Code symbols: a defined FUNC with the kernel's name.
        let funcs: HashMap<&str, &Symbol<'data>> = table
            .iter()
            .filter(|s| s.is_defined() && s.kind == SymbolKind::Func)
            .map(|s| (s.name, s))
            .collect();
        for k in &mut kernels {
            k.code_symbol = funcs.get(k.name).map(|s| **s);
        }
        for k in &mut kernels {
            k.descriptor = self.read_descriptor(k, &mut issues);
        }
        if let Some(md) = &self.metadata {
            let version = self.target.code_object_version;
            for k in &kernels {
                match (
                    k.metadata_index.and_then(|i| md.kernels.get(i)),
                    &k.descriptor,
                ) {
                    (Some(m), Some(d)) => {
                        for (field, descriptor, metadata) in d.compare(m, version) {
                            issues.push(KernelIssue::Mismatch {
                                kernel: k.name.to_owned(),
                                field,
                                descriptor,
                                metadata,
                            });
                        }
                    }
                    (None, _) => issues.push(KernelIssue::MissingMetadata {
                        kernel: k.name.to_owned(),
                    }),
                    (Some(_), None) => {}
                }
            }
            let found: HashSet<&str> = kernels.iter().map(|k| k.descriptor_symbol.name).collect();
            for m in &md.kernels {
                if !found.contains(m.symbol) {
                    issues.push(KernelIssue::MissingDescriptor {
                        kernel: m.name.to_owned(),
                        symbol: m.symbol.to_owned(),
                    });
                }
            }
        } else {
            for k in &kernels {
                issues.push(KernelIssue::MissingMetadata {
                    kernel: k.name.to_owned(),
                });
            }
        }
        for i in &issues {
            tracing::debug!(issue = %i, "kernel issue");
        }
        let descriptor_names: HashSet<&str> =
            kernels.iter().map(|k| k.descriptor_symbol.name).collect();
        let functions = table
            .iter()
            .skip(1)
            .filter(|s| {
                s.is_defined() && s.kind == SymbolKind::Func && !kernel_names.contains(s.name)
            })
            .copied()
            .collect();
        let variables = table
            .iter()
            .skip(1)
            .filter(|s| {
                s.is_defined() && s.kind == SymbolKind::Object && !descriptor_names.contains(s.name)
            })
            .copied()
            .collect();
        let dynsym = &self.elf.dynsym;
        let imports = dynsym
            .iter()
            .skip(1)
            .filter(|s| !s.is_defined() && s.binding != Binding::Local)
            .copied()
            .collect();
        let exports = dynsym
            .iter()
            .skip(1)
            .filter(|s| s.is_defined() && !matches!(s.kind, SymbolKind::Section | SymbolKind::File))
            .copied()
            .collect();
        self.kernels = kernels;
        self.kernel_issues = issues;
        self.functions = functions;
        self.variables = variables;
        self.imports = imports;
        self.exports = exports;
    }

    fn read_descriptor(
        &self,
        k: &Kernel<'data>,
        issues: &mut Vec<KernelIssue>,
    ) -> Option<KernelDescriptor> {
        let size = KERNEL_DESCRIPTOR_SIZE as u64;
        let bad = |reason: String| KernelIssue::BadDescriptor {
            kernel: k.name.to_owned(),
            reason,
        };
        if k.descriptor_symbol.size != size {
            issues.push(bad(format!(
                "symbol size is {}, not {size}",
                k.descriptor_symbol.size
            )));
        }
        let Some(bytes) = self.bytes_at_vaddr(k.descriptor_address, size) else {
            issues.push(bad(format!(
                "at {:#x} is not in the file bytes of a PT_LOAD",
                k.descriptor_address
            )));
            return None;
        };
        let mut raw = [0u8; KERNEL_DESCRIPTOR_SIZE];
        raw.copy_from_slice(bytes);
        let d = KernelDescriptor::decode(&raw);
        let entry = d.entry_address(k.descriptor_address);
        let bad_entry = |reason: String| KernelIssue::BadEntry {
            kernel: k.name.to_owned(),
            entry,
            reason,
        };
        match entry {
            None => issues.push(bad_entry(format!(
                "overflows ({:#x} + {})",
                k.descriptor_address, d.kernel_code_entry_byte_offset
            ))),
            Some(e) => {
                if !self
                    .segments()
                    .any(|s| s.flags.executable() && s.contains(e, 4))
                {
                    issues.push(bad_entry("is not in an executable PT_LOAD".into()));
                } else if let Some(code) = k.code_symbol {
                    if code.value != e {
                        issues.push(bad_entry(format!(
                            "differs from the code symbol's value {:#x}",
                            code.value
                        )));
                    }
                }
            }
        }
        Some(d)
    }
}

/// Reads an `SHT_REL` section (no addends): listed, never applied by AMDGPU loaders.
fn parse_rel(
    data: &[u8],
    sec: &Section<'_>,
    symbol_count: usize,
) -> Result<Vec<elf::RawRelocation>> {
    use object::elf::Rel64;
    use object::read::ReadRef;
    let entsize = std::mem::size_of::<Rel64<object::LittleEndian>>() as u64;
    let invalid = |reason: String| CodeObjectError::InvalidSection {
        index: sec.index,
        name: sec.name.to_owned(),
        reason,
    };
    if sec.size % entsize != 0 {
        return Err(invalid(format!(
            "size {:#x} is not a multiple of {entsize}",
            sec.size
        )));
    }
    let count = usize::try_from(sec.size / entsize).map_err(|_| invalid("too large".into()))?;
    let raw: &[Rel64<object::LittleEndian>] =
        data.read_slice_at(sec.offset, count).map_err(|()| {
            elf::truncated(
                format!("relocation section {} ({})", sec.index, sec.name),
                sec.offset,
                sec.size,
                data,
            )
        })?;
    let e = object::LittleEndian;
    let mut out = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let index = i as u32;
        let file_offset = sec.offset + entsize * u64::from(index);
        let symbol = r.r_sym(e);
        if symbol != 0 && symbol as usize >= symbol_count {
            return Err(CodeObjectError::InvalidRelocation {
                section: sec.name.to_owned(),
                index,
                offset: file_offset,
                reason: format!("symbol index {symbol} is not one of the {symbol_count} symbols of the linked table"),
            });
        }
        out.push(elf::RawRelocation {
            index,
            file_offset,
            offset: r.r_offset.get(e),
            r_type: r.r_type(e),
            symbol,
            addend: 0,
        });
    }
    Ok(out)
}

/// Demangles an Itanium C++ name (`_Z…`); a kernel descriptor's `.kd` suffix is printed
/// as ` (.kd)`, as `llvm-cxxfilt` does. `None` if `name` is not a mangled C++ name.
pub fn demangle(name: &str) -> Option<String> {
    let (stem, suffix) = match name.strip_suffix(".kd") {
        Some(stem) => (stem, " (.kd)"),
        None => (name, ""),
    };
    // Bounded: long names and deep nesting are left mangled rather than demangled slowly.
    if !stem.starts_with("_Z") || stem.len() > 16 * 1024 {
        return None;
    }
    let parse = cpp_demangle::ParseOptions::default().recursion_limit(64);
    let sym = cpp_demangle::Symbol::new_with_options(stem.as_bytes(), &parse).ok()?;
    let opts = cpp_demangle::DemangleOptions::new().recursion_limit(64);
    let mut out = sym.demangle_with_options(&opts).ok()?;
    out.push_str(suffix);
    Some(out)
}

impl Symbol<'_> {
    /// The demangled C++ name, or `None` if the name is not mangled.
    pub fn demangled(&self) -> Option<String> {
        demangle(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_cpp_and_keeps_kd() {
        assert_eq!(demangle("_Z4kernPi").as_deref(), Some("kern(int*)"));
        assert_eq!(
            demangle("_Z4kernPi.kd").as_deref(),
            Some("kern(int*) (.kd)")
        );
        assert_eq!(demangle("kern"), None);
        assert_eq!(demangle("_Z"), None);
    }
}
