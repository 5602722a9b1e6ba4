//! From fat binaries to modules for one agent: per container, the entry the target layer
//! ranks best, extracted (inflating no further than needed) and checked against its ELF
//! header, falling back to the next-ranked entry when the header disagrees with the id or the
//! entry is not a loadable code object.
//!
//! [`first_loadable`] is that walk, shared by everything that chooses code for a device (the
//! `rocload load` path here and the runtime's lazy first use, which caches extractions).
//! Bridges containers, targets and code objects; it loads nothing.

use super::module::{Module, ModuleSource};
use super::LoadError;
use crate::container::{read_containers, Container, Located, ReadOptions};
use crate::target::{select, AgentIsa, Policy};

/// Why [`first_loadable`] found nothing: the last refusal along the ranking.
#[derive(Debug)]
pub enum EntryRefusal<E> {
    /// The ranking was empty.
    NothingRanked,
    /// The last entry tried could not be extracted or parsed (the caller's error).
    Unusable(E),
    /// The last entry tried parsed, but its ELF header names a target the agent refuses
    /// ([`LoadError::HeaderMismatch`]).
    HeaderMismatch(LoadError),
}

/// The first entry of `ranked` (entry indices, best first) whose code object `module_at`
/// extracts and parses and whose ELF header `agent` accepts under `policy`. `entry_ids[i]` names
/// entry `i` in logs and errors.
///
/// # Errors
/// The last refusal when no entry qualifies.
pub fn first_loadable<E: std::fmt::Display>(
    ranked: &[usize],
    entry_ids: &[impl AsRef<str>],
    agent: &AgentIsa,
    policy: Policy,
    mut module_at: impl FnMut(usize) -> Result<Module, E>,
) -> Result<Module, EntryRefusal<E>> {
    let mut last = EntryRefusal::NothingRanked;
    for &i in ranked {
        let id = entry_ids.get(i).map_or("?", |s| s.as_ref());
        match module_at(i) {
            Ok(m) => {
                let t = m.target();
                let verdict =
                    crate::target::check(agent, &t.target, Some(t.generic_version), policy);
                if verdict.is_accepted() {
                    tracing::debug!(entry = %id, %verdict, "chose entry for agent");
                    return Ok(m);
                }
                tracing::debug!(entry = %id, %verdict, "entry's ELF header refused; trying the next");
                last = EntryRefusal::HeaderMismatch(LoadError::HeaderMismatch {
                    entry: id.to_string(),
                    reason: verdict.to_string(),
                });
            }
            Err(e) => {
                tracing::debug!(entry = %id, error = %e, "entry is not a loadable code object; trying the next");
                last = EntryRefusal::Unusable(e);
            }
        }
    }
    Err(last)
}

/// The module an agent should run from one container.
///
/// # Errors
/// The target layer's explanation when no entry fits; otherwise the last entry's failure.
pub fn module_for_agent(
    located: &Located<'_>,
    label: &str,
    agent: &AgentIsa,
    policy: Policy,
    options: &ReadOptions,
) -> Result<Module, crate::Error> {
    if let Container::CodeObject(bytes) = &located.container {
        // A bare code object has no alternatives: the linker checks it against the agent.
        let owned = crate::container::into_shared(std::borrow::Cow::Borrowed(*bytes))?;
        return Module::new(
            owned,
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
    let _span = tracing::debug_span!("container", index = located.index).entered();
    let chosen = first_loadable(&selection.ranked, &ids, agent, policy, |i| {
        let bytes = located.extract_with(i, &options.limits)?;
        let source = match &located.container {
            Container::Bundle(_) | Container::OffloadBinary(_) => ModuleSource::File {
                path: label.to_string(),
                offset: located.offset + entries[i].offset,
            },
            _ => ModuleSource::Memory {
                label: format!("{label} bundle {} {}", located.index, entries[i].id),
            },
        };
        Module::new(crate::container::into_shared(bytes)?, source).map_err(crate::Error::from)
    });
    chosen.map_err(|refusal| match refusal {
        EntryRefusal::NothingRanked => selection.no_match_error().into(),
        EntryRefusal::Unusable(e) => e,
        EntryRefusal::HeaderMismatch(e) => e.into(),
    })
}

/// Every module `agent` should run from the file bytes `data` (a code object, a bundle, a
/// compressed bundle or a host ELF file with many bundles): one per container.
///
/// # Errors
/// The first container that cannot give a module, as [`module_for_agent`].
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
        .map(|l| module_for_agent(l, label, agent, policy, options))
        .collect()
}
