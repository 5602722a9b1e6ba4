//! What ROCr's loader would refuse or get wrong, found from a parsed [`Module`] and a link
//! plan before ROCr sees anything: the rules of `hsa_executable_load_agent_code_object`
//! (relocation types it applies, how it resolves undefined symbols, its strict ISA check).
//!
//! Pure: nothing is loaded and no HSA call is made. The HSA backend (`crate::backend::hsa`)
//! runs these checks before every load; tests run them without a GPU.

use std::fmt;

use super::module::Module;
use super::plan::{LinkPlan, Provider};
use super::LoadError;
use crate::code_object::SymbolKind;
use crate::target::{AgentIsa, Policy};

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
        }
    }
}

/// Everything about `module` that ROCr would refuse or mishandle when loading it on `agent`
/// with `imports[i]` resolving `module.imports()[i]` (`None`: unresolved). Pure: nothing is
/// loaded, and nothing is parsed again (the module keeps what is needed).
pub fn rocr_problems(
    module: &Module,
    imports: &[Option<u64>],
    agent: &AgentIsa,
) -> Vec<RocrProblem> {
    let mut problems = Vec::new();
    let target = module.target();
    if let Some(refusal) = crate::target::check(
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

/// [`rocr_problems`] as a check: `Ok` when there are none.
///
/// # Errors
/// [`LoadError::RocrRefuses`] listing every problem of module `index`.
pub fn check_for_rocr(
    index: usize,
    module: &Module,
    imports: &[Option<u64>],
    agent: &AgentIsa,
) -> Result<(), LoadError> {
    let problems = rocr_problems(module, imports, agent);
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

/// Checks a whole link plan for ROCr before anything is loaded: an import cycle (which cannot
/// be expressed by defining imports before loading) or any module's problems.
///
/// # Errors
/// [`LoadError::Cycle`] for the first cycle; otherwise [`LoadError::RocrRefuses`] for the first
/// module, in load order, that has problems.
pub fn check_plan_for_rocr(
    agent: &AgentIsa,
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
        check_for_rocr(m, module, &imports, agent)?;
    }
    Ok(())
}
