//! From fat binaries to modules for one agent: per container, the entry the target layer
//! ranks best, extracted (inflating no further than needed) and checked against its ELF
//! header, falling back to the next-ranked entry when the header disagrees with the id.
//!
//! Bridges containers, targets and code objects; it loads nothing.

use std::sync::Arc;

use super::module::{Module, ModuleSource};
use crate::container::{read_containers, Container, Located, ReadOptions};
use crate::target::{select, AgentIsa, Policy};

/// The module an agent should run from one container, with the selection that chose it.
pub fn module_for_agent(
    located: &Located<'_>,
    label: &str,
    agent: &AgentIsa,
    policy: Policy,
) -> Result<Module, crate::Error> {
    if let Container::CodeObject(bytes) = &located.container {
        // A bare code object has no alternatives: the linker checks it against the agent.
        return Module::new(
            Arc::<[u8]>::from(*bytes),
            ModuleSource::File {
                path: label.to_string(),
                offset: located.offset,
            },
        )
        .map_err(crate::Error::from);
    }
    let entries = located.entries()?;
    let ids: Vec<&str> = entries.iter().map(|e| e.id.as_ref()).collect();
    let selection = select(agent, &ids, policy);
    let mut last_error = None;
    for &i in &selection.ranked {
        let bytes = located.extract(i)?;
        let source = match &located.container {
            Container::Bundle(_) | Container::OffloadBinary(_) => ModuleSource::File {
                path: label.to_string(),
                offset: located.offset + entries[i].offset,
            },
            _ => ModuleSource::Memory {
                label: format!("{label} bundle {} {}", located.index, entries[i].id),
            },
        };
        match Module::new(Arc::<[u8]>::from(bytes.as_ref()), source) {
            Ok(m) => {
                // The id chose it; the header must agree (and carries the generic version).
                let t = m.target();
                let verdict =
                    crate::target::check(agent, &t.target, Some(t.generic_version), policy);
                if verdict.is_accepted() {
                    tracing::debug!(bundle = located.index, entry = %entries[i].id, %verdict, "chose entry for agent");
                    return Ok(m);
                }
                tracing::debug!(bundle = located.index, entry = %entries[i].id, %verdict, "entry's ELF header refused; trying the next");
                last_error = Some(
                    super::LoadError::HeaderMismatch {
                        entry: entries[i].id.to_string(),
                        reason: verdict.to_string(),
                    }
                    .into(),
                );
            }
            Err(e) => {
                tracing::debug!(bundle = located.index, entry = %entries[i].id, error = %e, "entry is not a loadable code object; trying the next");
                last_error = Some(e.into());
            }
        }
    }
    Err(last_error.unwrap_or_else(|| selection.no_match_error().into()))
}

/// Every module `agent` should run from the file bytes `data` (a code object, a bundle, a
/// compressed bundle or a host ELF file with many bundles): one per container.
pub fn modules_for_agent(
    data: &[u8],
    label: &str,
    agent: &AgentIsa,
    policy: Policy,
    options: &ReadOptions,
) -> Result<Vec<Module>, crate::Error> {
    let containers = read_containers(data, options)?;
    containers
        .iter()
        .map(|l| module_for_agent(l, label, agent, policy))
        .collect()
}
