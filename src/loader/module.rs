//! A [`Module`]: one parsed code object, owned and shared (`Arc`), with everything loading,
//! linking, launching and reporting need extracted once: load segments, symbols, imports,
//! dynamic relocations, kernels with their metadata and argument layouts, and the problems a
//! loader would have with it.
//!
//! Parsing borrows (see `crate::code_object`); a module keeps the bytes and an owned summary
//! so executables on any number of agents share it and nothing parses the image again.

use std::sync::Arc;

use crate::SharedBytes;

use crate::code_object::{
    Binding, CodeObject, CodeObjectError, KernelInfo, RelocationIssueKind, RelocationType,
    SymbolKind, Visibility,
};

/// Where a module's bytes came from, for messages and loaded-code-object URIs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleSource {
    /// A byte range of a file: ROCr's `file://path#offset=N&size=M`.
    File {
        /// The file.
        path: String,
        /// Offset of the code object in it (0 for a bare code object; meaningless for an
        /// entry inflated from a compressed bundle, which is then described as memory).
        offset: u64,
    },
    /// Bytes in memory, described by a label (e.g. `vadd.o bundle 0 gfx1030`).
    Memory {
        /// What the bytes are.
        label: String,
    },
}

impl std::fmt::Display for ModuleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModuleSource::File { path, offset: 0 } => f.write_str(path),
            ModuleSource::File { path, offset } => write!(f, "{path}@{offset:#x}"),
            ModuleSource::Memory { label } => f.write_str(label),
        }
    }
}

/// What a symbol is, as the loader publishes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolClass {
    /// A kernel; its address is the kernel descriptor's (what a dispatch packet takes).
    Kernel,
    /// A device function (`STT_FUNC` without a descriptor).
    Function,
    /// A variable (`STT_OBJECT`).
    Variable,
}

/// A symbol a module defines.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModuleSymbol {
    /// Raw name (mangled for C++); kernels without `.kd`.
    pub name: String,
    /// Demangled C++ name, when the raw name is mangled.
    pub demangled: Option<String>,
    /// Kernel, function or variable.
    pub class: SymbolClass,
    /// Value in the code object's address space (the descriptor for kernels).
    pub value: u64,
    /// Size in bytes.
    pub size: u64,
    /// For kernels, the value of the code symbol.
    pub code_value: Option<u64>,
    /// ELF binding.
    pub binding: Binding,
    /// ELF visibility.
    pub visibility: Visibility,
    /// Visible to other code objects: a global or weak `.dynsym` definition that is not hidden.
    pub exported: bool,
}

/// An import: an undefined dynamic symbol another code object or the caller must define.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Import {
    /// Name.
    pub name: String,
    /// ELF type (`notype` is what ROCr resolves; `func`/`object` it mishandles).
    pub kind: SymbolKind,
    /// Weak imports may stay unresolved (their value is 0).
    pub weak: bool,
}

/// The symbol a relocation refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelocTarget {
    /// None (symbol index 0, as in `R_AMDGPU_RELATIVE64`).
    None,
    /// A symbol defined in this module, by its value.
    Local {
        /// Its name (for messages).
        name: String,
        /// Its value.
        value: u64,
    },
    /// An import, by index in [`Module::imports`].
    Import(usize),
}

/// One dynamic relocation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reloc {
    /// Virtual address written.
    pub offset: u64,
    /// Relocation type.
    pub r_type: RelocationType,
    /// The symbol.
    pub target: RelocTarget,
    /// Addend.
    pub addend: i64,
}

/// A relocation ROCr would refuse or misapply although rocload's own loader applies it
/// (`REL32`, `REL64`, `ABS32` on old ROCr, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RocrRelocationIssue {
    /// Virtual address written.
    pub offset: u64,
    /// Its type, e.g. `R_AMDGPU_REL32`.
    pub r_type: String,
    /// Its symbol, empty for none.
    pub symbol: String,
    /// The code-object layer's description.
    pub detail: String,
}

/// A `PT_LOAD` segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadSegment {
    /// File offset of its bytes.
    pub file_offset: u64,
    /// Virtual address.
    pub vaddr: u64,
    /// Bytes from the file.
    pub file_size: u64,
    /// Bytes in memory (rest zero).
    pub mem_size: u64,
    /// `p_flags`: what the segment may be used for (code, read-only data, variables).
    pub flags: crate::elf::SegmentFlags,
}

#[derive(Debug)]
struct ModuleInner {
    bytes: SharedBytes,
    source: ModuleSource,
    target: crate::code_object::ElfTarget,
    segments: Vec<LoadSegment>,
    first_vaddr: u64,
    image_size: u64,
    symbols: Vec<ModuleSymbol>,
    imports: Vec<Import>,
    ignored_undefined: Vec<Import>,
    relocations: Vec<Reloc>,
    blocking_issues: Vec<String>,
    rocr_relocation_issues: Vec<RocrRelocationIssue>,
    kernels: Vec<KernelInfo>,
    rocr: super::rocr::RocrFacts,
}

/// One code object ready to load: cheap to clone, shareable across threads and agents.
#[derive(Debug, Clone)]
pub struct Module(Arc<ModuleInner>);

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Module>();
};

impl Module {
    /// Parses `bytes` as a code object and extracts what loading needs. The bytes are kept
    /// as given: a `Vec<u8>` moves in without a copy.
    ///
    /// # Errors
    /// The code-object layer's error for anything malformed, and
    /// [`CodeObjectError::OutsideImage`] for a symbol, kernel descriptor, code entry or
    /// relocation that does not lie inside the loaded image.
    pub fn new(
        bytes: impl Into<SharedBytes>,
        source: ModuleSource,
    ) -> Result<Module, CodeObjectError> {
        let bytes: SharedBytes = bytes.into();
        let co = CodeObject::parse(&bytes)?;
        let inner = summarize(&co, bytes.clone(), source);
        super::image_bounds::check(
            &inner.segments,
            &inner.symbols,
            &inner.kernels,
            &inner.relocations,
        )?;
        tracing::debug!(source = %inner.source, symbols = inner.symbols.len(), imports = inner.imports.len(), ignored_undefined = inner.ignored_undefined.len(), relocations = inner.relocations.len(), "module parsed");
        Ok(Module(Arc::new(inner)))
    }

    /// Reads a code object file.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Module, crate::Error> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| crate::Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Module::new(
            bytes,
            ModuleSource::File {
                path: path.display().to_string(),
                offset: 0,
            },
        )?)
    }

    /// The code object's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0.bytes
    }

    /// The code object's bytes as shared (no copy).
    pub fn shared_bytes(&self) -> &SharedBytes {
        &self.0.bytes
    }

    /// Where it came from.
    pub fn source(&self) -> &ModuleSource {
        &self.0.source
    }

    /// Its target, from the ELF header.
    pub fn target(&self) -> &crate::code_object::ElfTarget {
        &self.0.target
    }

    /// `PT_LOAD` segments.
    pub fn segments(&self) -> &[LoadSegment] {
        &self.0.segments
    }

    /// Lowest `PT_LOAD` virtual address (the load delta is base minus this).
    pub fn first_vaddr(&self) -> u64 {
        self.0.first_vaddr
    }

    /// Bytes of memory the loaded image needs (last segment end minus first vaddr).
    pub fn image_size(&self) -> u64 {
        self.0.image_size
    }

    /// Defined kernels, functions and variables.
    pub fn symbols(&self) -> &[ModuleSymbol] {
        &self.0.symbols
    }

    /// Exported symbols (visible to other code objects).
    pub fn exports(&self) -> impl Iterator<Item = &ModuleSymbol> + '_ {
        self.0.symbols.iter().filter(|s| s.exported)
    }

    /// Imports: the undefined dynamic symbols a loader must resolve, those a dynamic
    /// relocation names (and `STT_COMMON` declarations), as ROCr decides.
    pub fn imports(&self) -> &[Import] {
        &self.0.imports
    }

    /// Undefined dynamic symbols no relocation names: ROCr never looks them up, so neither
    /// does rocload (each is logged at debug level when the module is parsed).
    pub fn ignored_undefined(&self) -> &[Import] {
        &self.0.ignored_undefined
    }

    /// Dynamic relocations.
    pub fn relocations(&self) -> &[Reloc] {
        &self.0.relocations
    }

    /// Relocations rocload's loader cannot apply, described; loading refuses the module.
    pub fn blocking_issues(&self) -> &[String] {
        &self.0.blocking_issues
    }

    /// Relocations only ROCr would refuse or misapply (see `loader::rocr`). Typed undefined
    /// symbols are not listed here: they are imports with a `func`/`object` kind.
    pub fn rocr_relocation_issues(&self) -> &[RocrRelocationIssue] {
        &self.0.rocr_relocation_issues
    }

    /// The kernels with their launch facts (metadata, argument layout, descriptor), in the
    /// code object's order. Addresses are the code object's; add the load delta.
    pub fn kernels(&self) -> &[KernelInfo] {
        &self.0.kernels
    }

    /// The kernel called `name` (raw, or with `.kd`).
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        let name = name.strip_suffix(".kd").unwrap_or(name);
        self.0.kernels.iter().find(|k| k.name == name)
    }

    /// What ROCr reads from the code object (its `.symtab` definitions, relocation symbol
    /// types), for `loader::rocr`.
    pub fn rocr_facts(&self) -> &super::rocr::RocrFacts {
        &self.0.rocr
    }

    /// Code object version (4, 5, 6).
    pub fn code_object_version(&self) -> u32 {
        self.0.target.code_object_version
    }

    /// Whether two handles share one module.
    pub fn same(&self, other: &Module) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

fn summarize(co: &CodeObject<'_>, bytes: SharedBytes, source: ModuleSource) -> ModuleInner {
    let segments: Vec<LoadSegment> = co
        .segments()
        .map(|s| LoadSegment {
            file_offset: s.offset,
            vaddr: s.vaddr,
            file_size: s.file_size,
            mem_size: s.mem_size,
            flags: s.flags,
        })
        .collect();
    let first_vaddr = segments.iter().map(|s| s.vaddr).min().unwrap_or(0);
    let image_size = co.load_size().saturating_sub(first_vaddr);
    let exported = |name: &str| {
        co.exports().iter().any(|e| {
            e.name == name
                && matches!(e.binding, Binding::Global | Binding::Weak)
                && !matches!(e.visibility, Visibility::Hidden | Visibility::Internal)
        })
    };
    let demangle = crate::code_object::demangle;
    let mut symbols = Vec::new();
    for k in co.kernels() {
        let kd = &k.descriptor_symbol;
        symbols.push(ModuleSymbol {
            name: k.name.to_string(),
            demangled: demangle(k.name),
            class: SymbolClass::Kernel,
            value: k.descriptor_address,
            size: kd.size,
            code_value: k.code_symbol.map(|c| c.value),
            binding: kd.binding,
            visibility: kd.visibility,
            exported: exported(kd.name),
        });
    }
    for (list, class) in [
        (co.functions(), SymbolClass::Function),
        (co.variables(), SymbolClass::Variable),
    ] {
        for s in list {
            symbols.push(ModuleSymbol {
                name: s.name.to_string(),
                demangled: demangle(s.name),
                class,
                value: s.value,
                size: s.size,
                code_value: None,
                binding: s.binding,
                visibility: s.visibility,
                exported: exported(s.name),
            });
        }
    }
    let (imports, ignored_undefined) = split_imports(co, &source);
    let relocations = co
        .relocations()
        .iter()
        .map(|r| {
            let target = match &r.symbol {
                None => RelocTarget::None,
                Some(s) if s.is_defined() => RelocTarget::Local {
                    name: s.name.to_string(),
                    value: s.value,
                },
                Some(s) => match imports.iter().position(|i| i.name == s.name) {
                    Some(i) => RelocTarget::Import(i),
                    // An undefined local symbol cannot be imported: leave it for the loader to refuse.
                    None => RelocTarget::Local {
                        name: s.name.to_string(),
                        value: 0,
                    },
                },
            };
            Reloc {
                offset: r.offset,
                r_type: r.r_type,
                target,
                addend: r.addend,
            }
        })
        .collect();
    let blocking_issues = co
        .unsupported_relocations()
        .map(|i| i.to_string())
        .collect();
    let rocr_relocation_issues = co
        .rocr_unsupported_relocations()
        .filter(|i| i.blocks_rocr && !i.blocks_rocload)
        .filter(|i| !matches!(i.kind, RelocationIssueKind::UndefinedTypedSymbol { .. }))
        .map(|issue| RocrRelocationIssue {
            offset: issue.relocation.offset,
            r_type: issue.relocation.r_type.to_string(),
            symbol: issue
                .relocation
                .symbol
                .map(|s| s.name.to_string())
                .unwrap_or_default(),
            detail: issue.to_string(),
        })
        .collect();
    let kernels = co.kernels().iter().map(|k| co.kernel_info(k)).collect();
    ModuleInner {
        bytes,
        source,
        target: co.target().clone(),
        segments,
        first_vaddr,
        image_size,
        symbols,
        imports,
        ignored_undefined,
        relocations,
        blocking_issues,
        rocr_relocation_issues,
        kernels,
        rocr: super::rocr::facts(co),
    }
}

/// Splits the undefined dynamic symbols into imports and ignored ones by ROCr's rules
/// (ROCR-Runtime `runtime/hsa-runtime/loader/executable.cpp`, same in rocm-5.2.3's
/// `src/loader/executable.cpp`): `ExecutableImpl::LoadCodeObject` loads only the symbols
/// `AmdHsaCode::PullElfV2` (`libamdhsacode/amd_hsa_code.cpp`) keeps, kernels, `STT_OBJECT` and
/// `STT_COMMON`, and of those only `STT_COMMON` is a declaration that must already be defined
/// (`LoadDeclarationSymbol`). Any other undefined symbol is looked up only when a dynamic
/// relocation names it (`ApplyDynamicRelocation`), where a miss is
/// `HSA_STATUS_ERROR_VARIABLE_UNDEFINED`. So an undefined symbol is an import when a
/// relocation names it or it is `STT_COMMON`; the rest (e.g. the `NOTYPE` references to
/// host-side statics in Debian's rocRAND) are ignored, and logged.
fn split_imports(co: &CodeObject<'_>, source: &ModuleSource) -> (Vec<Import>, Vec<Import>) {
    let referenced: std::collections::HashSet<&str> = co
        .relocations()
        .iter()
        .filter_map(|r| r.symbol.as_ref())
        .filter(|s| !s.is_defined())
        .map(|s| s.name)
        .collect();
    let mut imports = Vec::new();
    let mut ignored = Vec::new();
    for s in co.imports() {
        let import = Import {
            name: s.name.to_string(),
            kind: s.kind,
            weak: s.binding == Binding::Weak,
        };
        if referenced.contains(s.name) || s.kind == SymbolKind::Common {
            imports.push(import);
        } else {
            tracing::debug!(
                module = %source,
                symbol = s.name,
                kind = s.kind.as_str(),
                "undefined symbol ignored: no dynamic relocation uses it (ROCr resolves only what relocations name)"
            );
            ignored.push(import);
        }
    }
    (imports, ignored)
}
