//! Loader: code objects into executables on an agent, kernels, device functions and
//! variables as symbols, and relocation across code objects.
//!
//! [`Module`]s (parsed code objects) are resolved by name by a [`Linker`] into a [`LinkPlan`]
//! (pure: compatibility with the agent, exports, imports, load order), then an agent's
//! [`ExecutableBackend`] places and relocates them into an [`Executable`] following ROCr's
//! semantics (one 256-byte-aligned block per code object, `.rela.dyn` applied). Imports run one
//! way: module, plan, backend traits, executable, linker. The agents themselves live in
//! `crate::backend`. Not for ranking entries of fat binaries (the target layer) or for running
//! kernels.

mod backend;
mod executable;
pub mod fat_binary;
mod image_bounds;
mod linker;
mod module;
mod plan;
pub(crate) mod relocate;
pub mod rocr;
mod symbols;

pub use backend::{Agent, BackendKind, ExecutableBackend, Placement};
pub use executable::{Executable, LoadedCodeObject};
pub use linker::Linker;
pub use module::{
    Import, LoadSegment, Module, ModuleSource, ModuleSymbol, Reloc, RelocTarget, SymbolClass,
};
pub use plan::{LinkPlan, Provider};
pub use rocr::{RocrCapabilities, RocrProblem, RocrVersion};
pub use symbols::{LoadedSymbol, SymbolTable};

use std::fmt;

/// An import nobody defines.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct MissingImport {
    /// Index of the importing module.
    pub module: usize,
    /// Its source.
    pub source: String,
    /// The symbol name.
    pub name: String,
}

/// How a duplicate names a definition made with [`Linker::define`] (an address given by the
/// caller, e.g. `rocload load --define`).
pub const CALLER_DEFINITION: &str = "an address given to Linker::define";

/// A name defined twice.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct DuplicateDefinition {
    /// The name.
    pub name: String,
    /// First definer.
    pub first: String,
    /// Second definer.
    pub second: String,
}

/// A module the agent cannot run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Incompatibility {
    /// Module index.
    pub module: usize,
    /// Its source.
    pub source: String,
    /// Its target.
    pub target: String,
    /// Why the agent refuses it.
    pub reason: String,
}

fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    items.iter().map(|i| format!("\n  {}", f(i))).collect()
}

/// A load or link failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// A code object could not be parsed.
    #[error("{source_name}: {error}")]
    CodeObject {
        /// Where it came from.
        source_name: String,
        /// Why.
        error: crate::code_object::CodeObjectError,
    },
    /// Code objects built for targets the agent cannot run.
    #[error("agent {agent} cannot run {} code object(s):{}", modules.len(), list(modules, |m| format!("{} ({}): {}", m.source, m.target, m.reason)))]
    Incompatible {
        /// The agent's ISA name.
        agent: String,
        /// Each refused module with the reason.
        modules: Vec<Incompatibility>,
    },
    /// Imports no code object or definition provides, all of them, sorted by name.
    #[error("{} unresolved import(s):{}", .0.len(), list(.0, |m| format!("{} (imported by {})", m.name, m.source)))]
    Unresolved(Vec<MissingImport>),
    /// Names defined more than once.
    #[error("{} duplicate definition(s):{}", .0.len(), list(.0, |d| format!("{} in {} and {}", d.name, d.first, d.second)))]
    Duplicate(Vec<DuplicateDefinition>),
    /// Code objects import from each other in a cycle, which this backend cannot load
    /// (ROCr needs every import defined before the importer is loaded).
    #[error("import cycle among {}: this backend loads code objects one at a time and cannot link a cycle", modules.join(", "))]
    Cycle {
        /// The modules in the cycle.
        modules: Vec<String>,
    },
    /// A relocation no loader applies, or one that writes outside its image.
    #[error("{origin} (module {module}): relocation at {offset:#x}: {reason}")]
    UnsupportedRelocation {
        /// Module index.
        module: usize,
        /// Its source.
        origin: String,
        /// Where.
        offset: u64,
        /// Why.
        reason: String,
    },
    /// An absolute relocation resolved to address 0 (ROCr: `HSA_STATUS_ERROR_VARIABLE_UNDEFINED`).
    #[error("{origin} (module {module}): relocation at {offset:#x} against {symbol:?} resolves to address 0")]
    ZeroAddress {
        /// Module index.
        module: usize,
        /// Its source.
        origin: String,
        /// Where.
        offset: u64,
        /// The symbol.
        symbol: String,
    },
    /// A segment that does not fit the file or the image.
    #[error("{origin}: {reason}")]
    Layout {
        /// The module.
        origin: String,
        /// Why.
        reason: String,
    },
    /// A bundle entry whose ELF header names a target the agent cannot run, although its id
    /// was accepted.
    #[error("entry {entry}: its ELF header disagrees with its id: {reason}")]
    HeaderMismatch {
        /// The entry id.
        entry: String,
        /// The verdict on the header's target.
        reason: String,
    },
    /// Problems ROCr would fail on or mishandle, all of them, found before ROCr sees the
    /// code object.
    #[error("{origin} (module {module}) cannot be loaded through ROCr:{}", list(problems, |p| p.to_string()))]
    RocrRefuses {
        /// Module index.
        module: usize,
        /// Its source.
        origin: String,
        /// Every problem found.
        problems: Vec<RocrProblem>,
    },
    /// An HSA runtime call failed; the error names the call, its status and
    /// `hsa_status_string`'s message.
    #[error("{context}: {error}")]
    Hsa {
        /// What rocload was doing (e.g. `loading kernels_user.co on gfx1030`).
        context: String,
        /// The failed call.
        #[source]
        error: hsa_sys::HsaError,
    },
    /// The backend failed.
    #[error("backend {op} failed: {message}")]
    Backend {
        /// The operation.
        op: &'static str,
        /// What it said.
        message: String,
    },
}

impl fmt::Display for SymbolClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SymbolClass::Kernel => "kernel",
            SymbolClass::Function => "function",
            SymbolClass::Variable => "variable",
        })
    }
}
