//! AMDGPU relocations: their types, what each loader applies, and what it cannot.
//!
//! Lists relocations with their symbols resolved and decides, before anything is loaded,
//! which ones ROCr or rocload's own loader could not apply (ROCr's `loader/executable.cpp`). Not for applying
//! them: that is the loader's job.

use serde::Serialize;

use crate::elf::{Symbol, SymbolKind};

/// An AMDGPU relocation type (`R_AMDGPU_*`, AMDGPUUsage "Relocation Records").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelocationType(pub u32);

impl RelocationType {
    /// `R_AMDGPU_NONE`.
    pub const NONE: Self = Self(0);
    /// `R_AMDGPU_ABS32_LO`: low 32 bits of S+A.
    pub const ABS32_LO: Self = Self(1);
    /// `R_AMDGPU_ABS32_HI`: high 32 bits of S+A.
    pub const ABS32_HI: Self = Self(2);
    /// `R_AMDGPU_ABS64`: S+A.
    pub const ABS64: Self = Self(3);
    /// `R_AMDGPU_REL32`: S+A−P, 32 bits.
    pub const REL32: Self = Self(4);
    /// `R_AMDGPU_REL64`: S+A−P, 64 bits.
    pub const REL64: Self = Self(5);
    /// `R_AMDGPU_ABS32`: S+A, 32 bits.
    pub const ABS32: Self = Self(6);
    /// `R_AMDGPU_GOTPCREL`.
    pub const GOTPCREL: Self = Self(7);
    /// `R_AMDGPU_GOTPCREL32_LO`.
    pub const GOTPCREL32_LO: Self = Self(8);
    /// `R_AMDGPU_GOTPCREL32_HI`.
    pub const GOTPCREL32_HI: Self = Self(9);
    /// `R_AMDGPU_REL32_LO`.
    pub const REL32_LO: Self = Self(10);
    /// `R_AMDGPU_REL32_HI`.
    pub const REL32_HI: Self = Self(11);
    /// `R_AMDGPU_RELATIVE64`: B+A.
    pub const RELATIVE64: Self = Self(13);
    /// `R_AMDGPU_REL16`.
    pub const REL16: Self = Self(14);

    /// The name `llvm-readelf` prints, or `None` for a value it has no name for.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "R_AMDGPU_NONE",
            1 => "R_AMDGPU_ABS32_LO",
            2 => "R_AMDGPU_ABS32_HI",
            3 => "R_AMDGPU_ABS64",
            4 => "R_AMDGPU_REL32",
            5 => "R_AMDGPU_REL64",
            6 => "R_AMDGPU_ABS32",
            7 => "R_AMDGPU_GOTPCREL",
            8 => "R_AMDGPU_GOTPCREL32_LO",
            9 => "R_AMDGPU_GOTPCREL32_HI",
            10 => "R_AMDGPU_REL32_LO",
            11 => "R_AMDGPU_REL32_HI",
            13 => "R_AMDGPU_RELATIVE64",
            14 => "R_AMDGPU_REL16",
            _ => return None,
        })
    }

    /// Bytes written at the relocation's offset, when the type is known.
    pub fn width(self) -> Option<u64> {
        match self.0 {
            1 | 2 | 4 | 6 | 8 | 9 | 10 | 11 => Some(4),
            3 | 5 | 7 | 13 => Some(8),
            14 => Some(2),
            _ => None,
        }
    }

    /// Whether ROCr's loader applies this type (`loader/executable.cpp`).
    pub fn rocr_applies(self) -> bool {
        matches!(
            self,
            Self::ABS32_LO | Self::ABS32_HI | Self::ABS64 | Self::ABS32 | Self::RELATIVE64
        )
    }

    /// Whether rocload's own loader applies this type: ROCr's set plus `REL32` and `REL64`.
    pub fn rocload_applies(self) -> bool {
        self.rocr_applies() || matches!(self, Self::REL32 | Self::REL64)
    }

    /// Whether the value written is S+A (ROCr fails when that is 0).
    pub fn is_absolute(self) -> bool {
        matches!(
            self,
            Self::ABS32_LO | Self::ABS32_HI | Self::ABS64 | Self::ABS32
        )
    }
}

impl std::fmt::Display for RelocationType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "R_AMDGPU_<{}>", self.0),
        }
    }
}

impl Serialize for RelocationType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A relocation with its symbol resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Relocation<'data> {
    /// Index of the relocation section.
    pub section: u32,
    /// Index of the entry in that section.
    pub index: u32,
    /// `r_offset`: virtual address written (in the code object's address space).
    pub offset: u64,
    /// `r_type`.
    #[serde(rename = "type")]
    pub r_type: RelocationType,
    /// The symbol (`None` for symbol index 0, as in `R_AMDGPU_RELATIVE64`).
    pub symbol: Option<Symbol<'data>>,
    /// `r_addend`.
    pub addend: i64,
}

/// Why a relocation cannot be applied by some loader.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RelocationIssueKind {
    /// No loader applies this type (GOTPCREL*, REL32_LO/HI, REL16, unknown values).
    UnsupportedType,
    /// ROCr rejects the type (`REL32`, `REL64`); rocload's loader applies it.
    RocrUnsupportedType,
    /// The symbol is undefined but typed FUNC or OBJECT: ROCr takes it for a defined symbol
    /// and writes garbage.
    UndefinedTypedSymbol {
        /// The symbol's type.
        symbol_type: SymbolKind,
    },
    /// The bytes written are not inside any `PT_LOAD` segment's memory image.
    OutsideLoadSegments,
    /// An absolute relocation whose S+A is known to be 0: ROCr fails with
    /// `HSA_STATUS_ERROR_VARIABLE_UNDEFINED`.
    ZeroAbsoluteValue,
    /// In a relocation section ROCr ignores (one with a target section, or `SHT_REL`)
    /// yet referring to an undefined symbol: nothing will ever resolve it.
    IgnoredUnresolved,
    /// In an `SHT_REL` section (no addends): no AMDGPU loader applies these.
    RelSection,
}

/// A relocation some loader could not apply, found before anyone tries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RelocationIssue<'data> {
    /// The relocation.
    pub relocation: Relocation<'data>,
    /// What is wrong.
    #[serde(flatten)]
    pub kind: RelocationIssueKind,
    /// Whether ROCr would fail on (or mishandle) it.
    pub blocks_rocr: bool,
    /// Whether rocload's own loader would fail on it.
    pub blocks_rocload: bool,
}

impl std::fmt::Display for RelocationIssue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.relocation;
        let sym = r.symbol.map(|s| s.name).unwrap_or("");
        let what = match &self.kind {
            RelocationIssueKind::UnsupportedType => "type no loader applies".to_owned(),
            RelocationIssueKind::RocrUnsupportedType => {
                "type ROCr rejects (rocload applies it)".to_owned()
            }
            RelocationIssueKind::UndefinedTypedSymbol { symbol_type } => {
                format!(
                    "undefined symbol typed {} (ROCr mistakes it for a defined one)",
                    symbol_type.as_str()
                )
            }
            RelocationIssueKind::OutsideLoadSegments => "writes outside every PT_LOAD".to_owned(),
            RelocationIssueKind::ZeroAbsoluteValue => {
                "S+A is 0 (ROCr: variable undefined)".to_owned()
            }
            RelocationIssueKind::IgnoredUnresolved => {
                "undefined symbol in a relocation section loaders ignore".to_owned()
            }
            RelocationIssueKind::RelSection => {
                "SHT_REL relocation (loaders apply only SHT_RELA)".to_owned()
            }
        };
        write!(
            f,
            "{} at {:#x} {sym}{:+}: {what}",
            r.r_type, r.offset, r.addend
        )
    }
}
