//! What ROCr's loader would refuse or get wrong, found from a parsed [`Module`] and a link
//! plan before ROCr sees anything: the rules of `hsa_executable_load_agent_code_object`
//! (relocation types it applies, how it resolves undefined symbols, which symbols it
//! registers and refuses to register twice, its strict ISA check), per ROCr version
//! ([`RocrCapabilities`]: Debian's 5.2.3 by default, 6.2 and later when the library's exports
//! say so).
//!
//! Pure: nothing is loaded and no HSA call is made. The HSA backend (`crate::backend::hsa`)
//! runs these checks before every load, the software HSA library (`hsa-soft/`) applies the
//! same rules with ROCr's status codes; tests run them without a GPU. The facts are ROCr's
//! `loader/executable.cpp` (`LoadSegmentsV2`, `LoadDefinitionSymbol`, `ApplyDynamicRelocation`)
//! and `libamdhsacode/amd_hsa_code.cpp` (`PullElfV2`, `GetCodeObjectVersion`), at rocm-5.2.3
//! and rocm-6.2.0.

use std::collections::BTreeMap;
use std::fmt;

use super::module::Module;
use super::plan::{LinkPlan, Provider};
use super::LoadError;
use crate::code_object::{Binding, CodeObject, RelocationType, SymbolKind};
use crate::target::{AgentIsa, Policy};

// ---------------------------------------------------------------------------------------------
// ROCr versions.

/// The ROCr release lines whose loaders differ in what rocload checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[non_exhaustive]
pub enum RocrVersion {
    /// 5.2.3, as Debian bookworm ships it (and anything before 6.2 rocload cannot tell apart).
    V5_2,
    /// 6.2 or later: `R_AMDGPU_ABS32`, code object v6 and generic targets.
    V6_2,
}

impl fmt::Display for RocrVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RocrVersion::V5_2 => "5.2.3",
            RocrVersion::V6_2 => "6.2 or later",
        })
    }
}

/// What a ROCr version's loader accepts, as far as rocload's checks are concerned.
///
/// Detected from the library's exports with [`RocrCapabilities::detect`]; the default is
/// 5.2.3's limits (the oldest ROCr rocload supports, and the one Debian ships), so an unknown
/// library is never trusted with more than it can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct RocrCapabilities {
    /// The release line.
    pub version: RocrVersion,
}

impl Default for RocrCapabilities {
    fn default() -> Self {
        RocrCapabilities::ROCR_5_2_3
    }
}

/// An export that appeared in ROCr 6.2 (`hsa_ext_amd.h` of rocm-6.2.0 is the first to declare
/// it), the release whose loader also applies `R_AMDGPU_ABS32`, accepts code object v6 and
/// resolves generic targets.
pub const ROCR_6_2_MARKER: &str = "hsa_amd_vmem_address_reserve_align";

impl RocrCapabilities {
    /// ROCr 5.2.3: `ABS32_LO`, `ABS32_HI`, `ABS64`, `RELATIVE64`; code objects v2 to v5; no
    /// generic targets; kernel symbols report `is_dynamic_callstack = false`.
    pub const ROCR_5_2_3: RocrCapabilities = RocrCapabilities {
        version: RocrVersion::V5_2,
    };
    /// ROCr 6.2 and later: `ABS32` too, code object v6, generic targets, and the dynamic
    /// callstack bit read from the kernel descriptor.
    pub const ROCR_6_2: RocrCapabilities = RocrCapabilities {
        version: RocrVersion::V6_2,
    };

    /// The capabilities of a library that exports the names for which `exports` answers true:
    /// 6.2 when it exports [`ROCR_6_2_MARKER`], else 5.2.3's.
    pub fn detect(exports: impl Fn(&str) -> bool) -> RocrCapabilities {
        let caps = if exports(ROCR_6_2_MARKER) {
            RocrCapabilities::ROCR_6_2
        } else {
            RocrCapabilities::ROCR_5_2_3
        };
        tracing::debug!(version = %caps.version, marker = ROCR_6_2_MARKER, "ROCr capabilities detected");
        caps
    }

    /// Whether `ApplyDynamicRelocation` applies this type.
    pub fn applies(&self, r_type: RelocationType) -> bool {
        match r_type {
            RelocationType::ABS32_LO
            | RelocationType::ABS32_HI
            | RelocationType::ABS64
            | RelocationType::RELATIVE64 => true,
            RelocationType::ABS32 => self.version >= RocrVersion::V6_2,
            _ => false,
        }
    }

    /// The newest code object version the loader accepts (`majorVersion > 5` / `> 6`).
    pub fn max_code_object_version(&self) -> u32 {
        match self.version {
            RocrVersion::V5_2 => 5,
            RocrVersion::V6_2 => 6,
        }
    }

    /// Whether the loader resolves generic targets (`gfx10-3-generic`, ...).
    pub fn generic_targets(&self) -> bool {
        self.version >= RocrVersion::V6_2
    }

    /// Whether kernel symbols report the descriptor's dynamic-stack bit as
    /// `HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK` (5.2.3 always says false).
    pub fn reports_dynamic_callstack(&self) -> bool {
        self.version >= RocrVersion::V6_2
    }
}

// ---------------------------------------------------------------------------------------------
// What ROCr reads from a code object.

/// A symbol ROCr registers for the executable's agent when it loads a code object
/// (`LoadDefinitionSymbol`): every defined `.symtab` symbol of type `OBJECT` that is not local;
/// those named `*.kd` are kernels. `FUNC` symbols are never registered, and `COMMON` ones are
/// declarations (`LoadDeclarationSymbol`: they must already be defined).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RocrDefinition {
    /// The name ROCr registers (kernels keep their `.kd`).
    pub name: String,
    /// `st_value`.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
    /// A kernel descriptor (`.kd`) rather than a variable.
    pub kernel: bool,
    /// Weak binding (ROCr does not care: a second definition is refused all the same).
    pub weak: bool,
}

/// How ROCr treats the symbol of one dynamic relocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RelocSymbolRule {
    /// A defined `STT_NOTYPE` symbol: ROCr ignores its value and looks its name up among the
    /// executable's agent symbols, using 0 when absent.
    LookedUpByName,
    /// A type ROCr refuses (`STT_SECTION`, `STT_TLS`, ...): `HSA_STATUS_ERROR_INVALID_CODE_OBJECT`.
    Refused,
}

/// One dynamic relocation whose symbol ROCr does not treat as its ELF meaning says.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RocrRelocSymbol {
    /// Virtual address written.
    pub offset: u64,
    /// The relocation type.
    pub r_type: RelocationType,
    /// The symbol's name.
    pub symbol: String,
    /// Its ELF type.
    pub symbol_type: SymbolKind,
    /// What ROCr does with it.
    pub rule: RelocSymbolRule,
    /// The addend.
    pub addend: i64,
}

/// What ROCr reads from a code object beyond what rocload's own loader needs, extracted once
/// when the [`Module`] is parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RocrFacts {
    /// Whether the code object has a section named `.symtab` (ROCr reads symbols from it only).
    pub has_symtab: bool,
    /// The symbols ROCr registers, in `.symtab` order.
    pub definitions: Vec<RocrDefinition>,
    /// Relocations whose symbols ROCr mistreats or refuses.
    pub relocation_symbols: Vec<RocrRelocSymbol>,
}

/// Reads [`RocrFacts`] from a parsed code object.
pub fn facts(co: &CodeObject<'_>) -> RocrFacts {
    let has_symtab = co.sections().iter().any(|s| s.name == ".symtab");
    let definitions = co
        .symbol_table()
        .iter()
        .skip(1)
        .filter(|s| s.kind == SymbolKind::Object && s.binding != Binding::Local && s.is_defined())
        .map(|s| RocrDefinition {
            name: s.name.to_owned(),
            value: s.value,
            size: s.size,
            kernel: s.name.ends_with(".kd"),
            weak: s.binding == Binding::Weak,
        })
        .collect();
    let relocation_symbols = co
        .relocations()
        .iter()
        .filter_map(|r| {
            let s = r.symbol?;
            let rule = match s.kind {
                SymbolKind::Notype if s.is_defined() => RelocSymbolRule::LookedUpByName,
                SymbolKind::Notype | SymbolKind::Object | SymbolKind::Func => return None,
                _ => RelocSymbolRule::Refused,
            };
            Some(RocrRelocSymbol {
                offset: r.offset,
                r_type: r.r_type,
                symbol: s.name.to_owned(),
                symbol_type: s.kind,
                rule,
                addend: r.addend,
            })
        })
        .collect();
    RocrFacts {
        has_symtab,
        definitions,
        relocation_symbols,
    }
}

/// One thing about a code object that ROCr would fail on or mishandle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RocrProblem {
    /// A relocation rocload's own loader refuses too (see [`Module::blocking_issues`]).
    Blocking {
        /// The code-object layer's description.
        detail: String,
    },
    /// A dynamic relocation ROCr does not apply (`REL32`, `REL64`, ...: it fails with
    /// `HSA_STATUS_ERROR_INVALID_CODE_OBJECT`) or would apply wrongly.
    Relocation {
        /// Virtual address written.
        offset: u64,
        /// Its type, e.g. `R_AMDGPU_REL32`.
        r_type: String,
        /// Its symbol, empty for none.
        symbol: String,
        /// The code-object layer's description.
        detail: String,
    },
    /// An undefined symbol typed `STT_FUNC` or `STT_OBJECT`: ROCr takes it for a defined one and
    /// reads garbage.
    TypedImport {
        /// The symbol.
        symbol: String,
        /// `func` or `object`.
        symbol_type: &'static str,
    },
    /// An import nobody provides. ROCr looks every undefined symbol up in the executable and
    /// fails with `HSA_STATUS_ERROR_VARIABLE_UNDEFINED`, weak or not.
    UnresolvedImport {
        /// The symbol.
        symbol: String,
        /// Whether it is weak (ELF would let it be 0; ROCr does not).
        weak: bool,
    },
    /// The code object is accepted only under a policy ROCr does not implement (the
    /// distributions' extended table): ROCr's own check is strict and would answer
    /// `HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS`.
    IsaNotStrictlyCompatible {
        /// The code object's target.
        target: String,
        /// The agent's ISA name.
        agent: String,
        /// Why the strict rules refuse it.
        reason: String,
    },
    /// The first `PT_LOAD` is not at virtual address 0. ROCr's `LOAD_BASE` is then its
    /// allocation minus that address and `LOAD_DELTA` is `LOAD_BASE` minus it again, so every
    /// address derived from them would be off by it.
    FirstSegmentNotAtZero {
        /// The first `PT_LOAD`'s `p_vaddr`.
        vaddr: u64,
    },
    /// No `.symtab`: ROCr reads symbols from `.symtab` only, so it would load the code object
    /// "successfully" with no kernel and no variable.
    NoSymbolTable,
    /// A relocation type this ROCr version does not apply (`R_AMDGPU_ABS32` before 6.2):
    /// `HSA_STATUS_ERROR_INVALID_CODE_OBJECT`.
    RelocationNotInVersion {
        /// Virtual address written.
        offset: u64,
        /// Its type.
        r_type: String,
        /// Its symbol, empty for none.
        symbol: String,
        /// The ROCr version.
        version: RocrVersion,
    },
    /// A code object version this ROCr does not load (v6 before 6.2):
    /// `HSA_STATUS_ERROR_INVALID_CODE_OBJECT`.
    CodeObjectVersion {
        /// The code object's version.
        version: u32,
        /// The newest this ROCr loads.
        max: u32,
        /// The ROCr version.
        rocr: RocrVersion,
    },
    /// A generic target (`gfx10-3-generic`) this ROCr cannot resolve (before 6.2):
    /// `HSA_STATUS_ERROR_INVALID_ISA_NAME`.
    GenericTarget {
        /// The code object's target.
        target: String,
        /// The ROCr version.
        rocr: RocrVersion,
    },
    /// A relocation whose symbol ROCr does not use as ELF says: a defined `STT_NOTYPE` symbol
    /// is looked up by name among the executable's symbols (0 + addend when absent, written
    /// silently when the addend is not 0); `STT_SECTION`, `STT_TLS` and other types are refused
    /// with `HSA_STATUS_ERROR_INVALID_CODE_OBJECT`.
    RelocationSymbol {
        /// Virtual address written.
        offset: u64,
        /// Its type.
        r_type: String,
        /// The symbol.
        symbol: String,
        /// The symbol's ELF type.
        symbol_type: &'static str,
        /// What ROCr does with it.
        rule: RelocSymbolRule,
    },
    /// A name ROCr would be asked to define twice for the agent: by two code objects (weak or
    /// not: ROCr has no weak rule), or by one and by the caller
    /// (`hsa_executable_agent_global_variable_define`): `HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED`.
    AlreadyDefined {
        /// The name as ROCr registers it (kernels with `.kd`).
        symbol: String,
        /// Who defined it first (a code object, or `the caller`).
        first: String,
    },
}

impl fmt::Display for RocrProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RocrProblem::Blocking { detail } => write!(f, "relocation no loader applies: {detail}"),
            RocrProblem::Relocation { detail, .. } => {
                write!(f, "relocation ROCr cannot apply: {detail}")
            }
            RocrProblem::TypedImport {
                symbol,
                symbol_type,
            } => {
                write!(f, "import {symbol:?} is typed {symbol_type}; ROCr would take it for a defined symbol (declare it without a type, STT_NOTYPE)")
            }
            RocrProblem::UnresolvedImport { symbol, weak: true } => {
                write!(f, "weak import {symbol:?} is unresolved; ROCr does not leave weak imports at 0 (HSA_STATUS_ERROR_VARIABLE_UNDEFINED)")
            }
            RocrProblem::UnresolvedImport {
                symbol,
                weak: false,
            } => {
                write!(
                    f,
                    "import {symbol:?} is unresolved (ROCr: HSA_STATUS_ERROR_VARIABLE_UNDEFINED)"
                )
            }
            RocrProblem::IsaNotStrictlyCompatible {
                target,
                agent,
                reason,
            } => {
                write!(f, "target {target} is not strictly compatible with {agent} ({reason}); ROCr applies only the strict rules")
            }
            RocrProblem::FirstSegmentNotAtZero { vaddr } => write!(
                f,
                "the first PT_LOAD is at vaddr {vaddr:#x}, not 0: ROCr's LOAD_BASE and LOAD_DELTA would be off by {vaddr:#x} (link without --image-base)"
            ),
            RocrProblem::NoSymbolTable => f.write_str(
                "no .symtab: ROCr reads symbols only from .symtab and would load this code object with no kernel or variable",
            ),
            RocrProblem::RelocationNotInVersion {
                offset,
                r_type,
                symbol,
                version,
            } => write!(
                f,
                "{r_type} at {offset:#x} {symbol}: ROCr {version} does not apply this type (HSA_STATUS_ERROR_INVALID_CODE_OBJECT; ROCr applies R_AMDGPU_ABS32 from 6.2 on)"
            ),
            RocrProblem::CodeObjectVersion { version, max, rocr } => write!(
                f,
                "code object v{version}: ROCr {rocr} loads v{max} at most (HSA_STATUS_ERROR_INVALID_CODE_OBJECT)"
            ),
            RocrProblem::GenericTarget { target, rocr } => write!(
                f,
                "generic target {target}: ROCr {rocr} cannot resolve generic targets (HSA_STATUS_ERROR_INVALID_ISA_NAME; 6.2 can)"
            ),
            RocrProblem::RelocationSymbol {
                offset,
                r_type,
                symbol,
                symbol_type,
                rule: RelocSymbolRule::LookedUpByName,
            } => write!(
                f,
                "{r_type} at {offset:#x} against defined {symbol_type} symbol {symbol:?}: ROCr ignores its value and looks the name up among the executable's symbols (0 + addend when absent); give it a type (object or func)"
            ),
            RocrProblem::RelocationSymbol {
                offset,
                r_type,
                symbol,
                symbol_type,
                rule: RelocSymbolRule::Refused,
            } => write!(
                f,
                "{r_type} at {offset:#x} against {symbol_type} symbol {symbol:?}: ROCr refuses relocations against this symbol type (HSA_STATUS_ERROR_INVALID_CODE_OBJECT)"
            ),
            RocrProblem::AlreadyDefined { symbol, first } => write!(
                f,
                "{symbol:?} is already defined by {first}: ROCr refuses a second definition for the agent, weak or not (HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED)"
            ),
        }
    }
}

/// Everything about `module` that ROCr (with `caps`) would refuse or mishandle when loading it
/// on `agent` with `imports[i]` resolving `module.imports()[i]` (`None`: unresolved). Pure:
/// nothing is loaded, and nothing is parsed again (the module keeps what is needed). Names
/// defined twice are a property of the whole executable: see [`check_plan_for_rocr`].
pub fn rocr_problems(
    module: &Module,
    imports: &[Option<u64>],
    agent: &AgentIsa,
    caps: &RocrCapabilities,
) -> Vec<RocrProblem> {
    let mut problems = Vec::new();
    let target = module.target();
    let generic = target.target.processor().known().is_some_and(|p| p.generic);
    if generic && !caps.generic_targets() {
        problems.push(RocrProblem::GenericTarget {
            target: target.target.to_string(),
            rocr: caps.version,
        });
    } else if let Some(refusal) = crate::target::check(
        agent,
        &target.target,
        Some(target.generic_version),
        Policy::Strict,
    )
    .refusal()
    {
        problems.push(RocrProblem::IsaNotStrictlyCompatible {
            target: target.target.to_string(),
            agent: agent.isa_name(),
            reason: refusal.to_string(),
        });
    }
    if module.code_object_version() > caps.max_code_object_version() {
        problems.push(RocrProblem::CodeObjectVersion {
            version: module.code_object_version(),
            max: caps.max_code_object_version(),
            rocr: caps.version,
        });
    }
    if module.first_vaddr() != 0 {
        problems.push(RocrProblem::FirstSegmentNotAtZero {
            vaddr: module.first_vaddr(),
        });
    }
    let facts = module.rocr_facts();
    if !facts.has_symtab {
        problems.push(RocrProblem::NoSymbolTable);
    }
    problems.extend(
        module
            .blocking_issues()
            .iter()
            .map(|d| RocrProblem::Blocking { detail: d.clone() }),
    );
    problems.extend(
        module
            .rocr_relocation_issues()
            .iter()
            .map(|r| RocrProblem::Relocation {
                offset: r.offset,
                r_type: r.r_type.clone(),
                symbol: r.symbol.clone(),
                detail: r.detail.clone(),
            }),
    );
    // Types the code-object layer takes for ROCr's (its list is the newest ROCr's) that this
    // version does not apply.
    for r in module.relocations() {
        if r.r_type.rocr_applies() && !caps.applies(r.r_type) {
            problems.push(RocrProblem::RelocationNotInVersion {
                offset: r.offset,
                r_type: r.r_type.to_string(),
                symbol: reloc_symbol_name(module, &r.target),
                version: caps.version,
            });
        }
    }
    for r in &facts.relocation_symbols {
        problems.push(RocrProblem::RelocationSymbol {
            offset: r.offset,
            r_type: r.r_type.to_string(),
            symbol: r.symbol.clone(),
            symbol_type: r.symbol_type.as_str(),
            rule: r.rule,
        });
    }
    for (i, import) in module.imports().iter().enumerate() {
        match import.kind {
            SymbolKind::Func | SymbolKind::Object => problems.push(RocrProblem::TypedImport {
                symbol: import.name.clone(),
                symbol_type: import.kind.as_str(),
            }),
            _ => {}
        }
        if imports.get(i).copied().flatten().is_none() {
            problems.push(RocrProblem::UnresolvedImport {
                symbol: import.name.clone(),
                weak: import.weak,
            });
        }
    }
    problems
}

fn reloc_symbol_name(module: &Module, target: &super::module::RelocTarget) -> String {
    use super::module::RelocTarget;
    match target {
        RelocTarget::None => String::new(),
        RelocTarget::Local { name, .. } => name.clone(),
        RelocTarget::Import(i) => module
            .imports()
            .get(*i)
            .map(|i| i.name.clone())
            .unwrap_or_default(),
    }
}

/// [`rocr_problems`] as a check: `Ok` when there are none.
///
/// # Errors
/// [`LoadError::RocrRefuses`] listing every problem of module `index`.
pub fn check_for_rocr(
    index: usize,
    module: &Module,
    imports: &[Option<u64>],
    agent: &AgentIsa,
    caps: &RocrCapabilities,
) -> Result<(), LoadError> {
    refuse_if_any(index, module, rocr_problems(module, imports, agent, caps))
}

fn refuse_if_any(
    index: usize,
    module: &Module,
    problems: Vec<RocrProblem>,
) -> Result<(), LoadError> {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(LoadError::RocrRefuses {
            module: index,
            origin: module.source().to_string(),
            problems,
        })
    }
}

/// The names ROCr would be asked to define twice when `modules` are loaded in `plan`'s order,
/// per module: every name a module registers ([`RocrFacts::definitions`]) that an earlier
/// module registered or that the HSA backend publishes with
/// `hsa_executable_agent_global_variable_define` (an import no module loaded before it
/// registers: a device function, or an address the caller defined).
pub fn duplicate_definitions(
    modules: &[Module],
    plan: &LinkPlan,
) -> BTreeMap<usize, Vec<RocrProblem>> {
    let mut known: BTreeMap<&str, String> = BTreeMap::new();
    let mut found: BTreeMap<usize, Vec<RocrProblem>> = BTreeMap::new();
    for &m in &plan.order {
        let Some(module) = modules.get(m) else {
            continue;
        };
        // Imports first: the backend publishes them before loading the module.
        for (import, provider) in module
            .imports()
            .iter()
            .zip(plan.providers.get(m).map(Vec::as_slice).unwrap_or(&[]))
        {
            if matches!(provider, Provider::Unresolved) || known.contains_key(import.name.as_str())
            {
                continue;
            }
            let by = match provider {
                Provider::Module { module: p, .. } => format!(
                    "rocload (publishing {}'s export for {})",
                    modules
                        .get(*p)
                        .map(|p| p.source().to_string())
                        .unwrap_or_default(),
                    module.source()
                ),
                _ => format!("the caller (a definition imported by {})", module.source()),
            };
            known.insert(&import.name, by);
        }
        for d in &module.rocr_facts().definitions {
            match known.get(d.name.as_str()) {
                Some(first) => found
                    .entry(m)
                    .or_default()
                    .push(RocrProblem::AlreadyDefined {
                        symbol: d.name.clone(),
                        first: first.clone(),
                    }),
                None => {
                    known.insert(&d.name, module.source().to_string());
                }
            }
        }
    }
    found
}

/// Checks a whole link plan for ROCr (with `caps`) before anything is loaded: an import cycle
/// (which cannot be expressed by defining imports before loading), then every module's
/// problems, names defined twice included.
///
/// # Errors
/// [`LoadError::Cycle`] for the first cycle; otherwise [`LoadError::RocrRefuses`] for the first
/// module, in load order, that has problems.
pub fn check_plan_for_rocr(
    agent: &AgentIsa,
    caps: &RocrCapabilities,
    modules: &[Module],
    plan: &LinkPlan,
) -> Result<(), LoadError> {
    if let Some(cycle) = plan.cycles.first() {
        return Err(LoadError::Cycle {
            modules: cycle
                .iter()
                .filter_map(|&m| modules.get(m))
                .map(|m| m.source().to_string())
                .collect(),
        });
    }
    let mut duplicates = duplicate_definitions(modules, plan);
    for &m in &plan.order {
        let (Some(module), Some(providers)) = (modules.get(m), plan.providers.get(m)) else {
            return Err(LoadError::Backend {
                op: "check plan",
                message: format!("plan names module {m} of {}", modules.len()),
            });
        };
        // Addresses are not known before loading; only whether each import has a provider matters.
        let imports: Vec<Option<u64>> = providers
            .iter()
            .map(|p| (!matches!(p, Provider::Unresolved)).then_some(0))
            .collect();
        let mut problems = rocr_problems(module, &imports, agent, caps);
        problems.extend(duplicates.remove(&m).unwrap_or_default());
        refuse_if_any(m, module, problems)?;
    }
    Ok(())
}

/// Where ROCr must have put a symbol it registers: `LOAD_BASE + st_value` (with the first
/// segment at vaddr 0, which [`rocr_problems`] requires). The HSA backend compares this with
/// `KERNEL_OBJECT` / `VARIABLE_ADDRESS` after every load.
///
/// # Errors
/// [`MisplacedSymbol`] naming the symbol and both addresses when they differ.
pub fn check_symbol_placement(
    load_base: u64,
    definition: &RocrDefinition,
    reported: u64,
) -> Result<(), MisplacedSymbol> {
    if load_base.wrapping_add(definition.value) == reported {
        Ok(())
    } else {
        Err(MisplacedSymbol {
            name: definition.name.clone(),
            reported,
            load_base,
            value: definition.value,
        })
    }
}

/// A symbol ROCr placed somewhere else than `LOAD_BASE + st_value`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ROCr reports {name} at {reported:#x}, but LOAD_BASE {load_base:#x} + st_value {value:#x} is {:#x}", load_base.wrapping_add(*value))]
pub struct MisplacedSymbol {
    /// The symbol.
    pub name: String,
    /// Where ROCr says it is.
    pub reported: u64,
    /// The code object's `LOAD_BASE`.
    pub load_base: u64,
    /// Its `st_value`.
    pub value: u64,
}
