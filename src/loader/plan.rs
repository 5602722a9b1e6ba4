//! Resolution: which module or caller definition provides each import, and the order to load
//! modules in. The [`Linker`](super::Linker) produces a [`LinkPlan`]; backends and the
//! executable builder consume it. Pure: no memory is touched.

use std::collections::{BTreeMap, HashMap};

use super::module::Module;
use super::{DuplicateDefinition, Incompatibility, LoadError, MissingImport};
use crate::code_object::Binding;
use crate::target::{AgentIsa, Policy};

/// Who provides an import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Symbol `symbol` (index in [`Module::symbols`]) of module `module`.
    Module {
        /// Module index.
        module: usize,
        /// Symbol index in that module.
        symbol: usize,
    },
    /// An address the caller defined with [`Linker::define`].
    Defined(u64),
    /// Nobody: a weak import left at 0.
    Unresolved,
}

/// The outcome of resolution: who provides each import, and a load order.
#[derive(Debug, Clone)]
pub struct LinkPlan {
    /// `providers[m][i]` provides import `i` of module `m`.
    pub providers: Vec<Vec<Provider>>,
    /// Modules in load order: providers before their importers, otherwise as given.
    pub order: Vec<usize>,
    /// Groups of modules that import from each other in a cycle.
    pub cycles: Vec<Vec<usize>>,
}

/// Checks the modules against the agent and resolves every import, without loading.
///
/// # Errors
/// Every incompatible module, every relocation no loader applies, every duplicate
/// definition, or every unresolved import (sorted by name), in that order of checking.
pub(crate) fn resolve(
    defined: &BTreeMap<String, u64>,
    policy: Policy,
    agent: &AgentIsa,
    modules: &[Module],
) -> Result<LinkPlan, LoadError> {
    let incompatible: Vec<Incompatibility> = modules
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let t = m.target();
            let verdict = crate::target::check(agent, &t.target, Some(t.generic_version), policy);
            verdict.refusal().map(|r| Incompatibility {
                module: i,
                source: m.source().to_string(),
                target: t.target.to_string(),
                reason: r.to_string(),
            })
        })
        .collect();
    if !incompatible.is_empty() {
        return Err(LoadError::Incompatible {
            agent: agent.isa_name(),
            modules: incompatible,
        });
    }
    for (i, m) in modules.iter().enumerate() {
        if let Some(issue) = m.blocking_issues().first() {
            return Err(LoadError::UnsupportedRelocation {
                module: i,
                origin: m.source().to_string(),
                offset: 0,
                reason: issue.clone(),
            });
        }
    }
    // Exports by name; a strong definition beats a weak one, two strong ones clash.
    let mut exports: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut duplicates = Vec::new();
    for (mi, m) in modules.iter().enumerate() {
        for (si, s) in m.symbols().iter().enumerate().filter(|(_, s)| s.exported) {
            let weak = s.binding == Binding::Weak;
            if defined.contains_key(&s.name) {
                duplicates.push(DuplicateDefinition {
                    name: s.name.clone(),
                    first: super::CALLER_DEFINITION.into(),
                    second: m.source().to_string(),
                });
                continue;
            }
            match exports.get(s.name.as_str()) {
                None => {
                    exports.insert(&s.name, (mi, si));
                }
                Some(&(pm, ps)) => {
                    let prev_weak = modules[pm].symbols()[ps].binding == Binding::Weak;
                    match (prev_weak, weak) {
                        (true, false) => {
                            exports.insert(&s.name, (mi, si));
                        }
                        (_, true) => {}
                        (false, false) => duplicates.push(DuplicateDefinition {
                            name: s.name.clone(),
                            first: modules[pm].source().to_string(),
                            second: m.source().to_string(),
                        }),
                    }
                }
            }
        }
    }
    if !duplicates.is_empty() {
        duplicates.sort_by(|a, b| a.name.cmp(&b.name));
        return Err(LoadError::Duplicate(duplicates));
    }
    let mut missing = Vec::new();
    let mut providers = Vec::with_capacity(modules.len());
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); modules.len()];
    for (mi, m) in modules.iter().enumerate() {
        let mut list = Vec::with_capacity(m.imports().len());
        for imp in m.imports() {
            let p = if let Some(&(module, symbol)) = exports.get(imp.name.as_str()) {
                if module != mi && !deps[mi].contains(&module) {
                    deps[mi].push(module);
                }
                Provider::Module { module, symbol }
            } else if let Some(&addr) = defined.get(&imp.name) {
                Provider::Defined(addr)
            } else {
                if !imp.weak {
                    missing.push(MissingImport {
                        module: mi,
                        source: m.source().to_string(),
                        name: imp.name.clone(),
                    });
                }
                Provider::Unresolved
            };
            tracing::debug!(module = %m.source(), import = %imp.name, provider = ?p, "resolved import");
            list.push(p);
        }
        providers.push(list);
    }
    if !missing.is_empty() {
        missing.sort_by(|a, b| a.name.cmp(&b.name).then(a.module.cmp(&b.module)));
        return Err(LoadError::Unresolved(missing));
    }
    let (order, cycles) = order_by_dependencies(&deps);
    Ok(LinkPlan {
        providers,
        order,
        cycles,
    })
}

/// Topological order (dependencies first; among ready modules, the lowest index first) and
/// the cycles that prevent a full order (their modules follow in index order).
fn order_by_dependencies(deps: &[Vec<usize>]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let n = deps.len();
    let mut remaining: Vec<usize> = deps.iter().map(|d| d.len()).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (m, d) in deps.iter().enumerate() {
        for &p in d {
            dependents[p].push(m);
        }
    }
    let mut ready: std::collections::BTreeSet<usize> =
        (0..n).filter(|&m| remaining[m] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(m) = ready.pop_first() {
        order.push(m);
        for &d in &dependents[m] {
            remaining[d] -= 1;
            if remaining[d] == 0 {
                ready.insert(d);
            }
        }
    }
    let stuck: Vec<usize> = (0..n).filter(|m| !order.contains(m)).collect();
    let cycles = strongly_connected(deps, &stuck);
    order.extend(stuck);
    (order, cycles)
}

/// The cycles among `nodes`: strongly connected groups of two or more (Tarjan, iterative
/// enough for code-object counts).
fn strongly_connected(deps: &[Vec<usize>], nodes: &[usize]) -> Vec<Vec<usize>> {
    struct State<'a> {
        deps: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        groups: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.deps[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                group.push(w);
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort_unstable();
                s.groups.push(group);
            }
        }
    }
    let n = deps.len();
    let mut s = State {
        deps,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        groups: Vec::new(),
    };
    for &v in nodes {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.groups.sort();
    s.groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_dependencies_first_and_finds_cycles() {
        // 0 imports from 2, 2 from 1; 3 and 4 import from each other.
        let deps = vec![vec![2], vec![], vec![1], vec![4], vec![3]];
        let (order, cycles) = order_by_dependencies(&deps);
        assert_eq!(order, vec![1, 2, 0, 3, 4]);
        assert_eq!(cycles, vec![vec![3, 4]]);
    }
}
