//! Name resolution across code objects, wasmtime-`Linker` style: strict by default, every
//! problem reported at once (all unresolved imports sorted, all duplicates, every cycle).
//! Resolution itself is [`super::plan`]; building the executable is [`Executable`]'s.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::backend::Agent;
use super::executable::Executable;
use super::module::Module;
use super::plan::{self, LinkPlan};
use super::{DuplicateDefinition, LoadError};
use crate::target::{AgentIsa, Policy};

/// Resolves imports between code objects and against caller-defined addresses.
///
/// # Examples
/// A kernel code object calling device functions of two others, linked on the software agent
/// (in any order: providers load before their importers); an import nobody defines is an
/// error naming it.
/// ```
/// use rocload::backend::SoftAgent;
/// use rocload::loader::{LoadError, Linker, Module};
///
/// let fixture = |name| format!("{}/tests/fixtures/codeobj/{name}", env!("CARGO_MANIFEST_DIR"));
/// let user = Module::from_file(fixture("kernels_user.co"))?;
/// let math = Module::from_file(fixture("devlib_math.co"))?;
/// let data = Module::from_file(fixture("devlib_data.co"))?;
/// let agent = SoftAgent::new("gfx1030".parse()?).shared();
///
/// let exe = Linker::new().link(&agent, &[user.clone(), math.clone(), data])?;
/// assert!(exe.symbol("use_add.kd").is_some());
///
/// match Linker::new().link(&agent, &[user, math]) {
///     Err(LoadError::Unresolved(missing)) => assert!(!missing.is_empty()),
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Linker {
    defined: BTreeMap<String, u64>,
    policy: Policy,
}

impl Linker {
    /// A linker with the strict ISA policy and no definitions.
    pub fn new() -> Self {
        Linker::default()
    }

    /// Sets the ISA compatibility policy used to accept code objects for the agent.
    pub fn policy(&mut self, policy: Policy) -> &mut Self {
        self.policy = policy;
        self
    }

    /// Defines `name` at `address`, as `hsa_executable_agent_global_variable_define` does.
    ///
    /// # Errors
    /// [`LoadError::Duplicate`] if `name` is already defined here.
    pub fn define(&mut self, name: &str, address: u64) -> Result<&mut Self, LoadError> {
        if self.defined.contains_key(name) {
            return Err(LoadError::Duplicate(vec![DuplicateDefinition {
                name: name.to_string(),
                first: super::CALLER_DEFINITION.into(),
                second: super::CALLER_DEFINITION.into(),
            }]));
        }
        self.defined.insert(name.to_string(), address);
        Ok(self)
    }

    /// Checks the modules against the agent and resolves every import, without loading.
    ///
    /// # Errors
    /// Every incompatible module, every relocation no loader applies, every duplicate
    /// definition, or every unresolved import (sorted by name), in that order of checking.
    pub fn plan(&self, agent: &AgentIsa, modules: &[Module]) -> Result<LinkPlan, LoadError> {
        plan::resolve(&self.defined, self.policy, agent, modules)
    }

    /// Plans, then loads every module into one new executable on `agent` and freezes it.
    ///
    /// # Errors
    /// Anything [`Linker::plan`] reports; [`LoadError::Cycle`] when modules import from each
    /// other in a cycle and the agent's backend cannot link cycles; backend failures.
    pub fn link(
        &self,
        agent: &Arc<dyn Agent>,
        modules: &[Module],
    ) -> Result<Executable, LoadError> {
        let plan = self.plan(agent.isa(), modules)?;
        Executable::build(agent.clone(), modules, &plan)
    }
}
