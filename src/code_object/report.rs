//! What `rocload symbols` prints for one code object: a serialisable summary and its text form.
//!
//! Builds an owned [`SymbolsReport`] from a [`CodeObject`]; the JSON shape is the CLI's
//! contract (keys `id`, `target`, `code_object_version`, `kernels`, `functions`,
//! `variables`, `imports`, plus extra keys). Not for argument parsing or choosing which
//! code object to report: the CLI does that.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use super::{demangle, CodeObject, KernelInfo, Symbol};

/// One code object's symbols, as `rocload symbols --json` prints them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SymbolsReport {
    /// Which code object (bundle entry ID or file name), as given by the caller.
    pub id: String,
    /// Target ID, e.g. `gfx90a:xnack-`.
    pub target: String,
    /// Code object version (3–6).
    pub code_object_version: u32,
    /// Load image size in bytes.
    pub load_size: u64,
    /// Kernels.
    pub kernels: Vec<KernelInfo>,
    /// Device functions.
    pub functions: Vec<FunctionReport>,
    /// Variables.
    pub variables: Vec<VariableReport>,
    /// Undefined symbols to be resolved at load time.
    pub imports: Vec<ImportReport>,
    /// Dynamic relocations, summarised.
    pub relocations: RelocationSummary,
    /// Descriptor/metadata disagreements, one sentence each.
    pub kernel_issues: Vec<String>,
}

/// One device function (and, as [`VariableReport`], one variable).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct FunctionReport {
    /// Raw name.
    pub name: String,
    /// Demangled name, for C++.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    /// Symbol value: virtual address in the code object.
    pub offset: u64,
    /// Symbol size.
    pub size: u64,
    /// `global`, `local` or `weak`.
    pub binding: &'static str,
    /// `default`, `hidden`, `protected` or `internal`.
    pub visibility: &'static str,
}

/// One variable: reported with the same fields as a device function.
pub type VariableReport = FunctionReport;

/// One import.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ImportReport {
    /// Raw name.
    pub name: String,
    /// Demangled name, for C++.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    /// `notype`, `func` or `object` (the last two are flagged: ROCr mishandles them).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `global` or `weak`.
    pub binding: &'static str,
    /// Whether ROCr would mistake this undefined symbol for a defined one.
    pub rocr_mishandles: bool,
}

/// Dynamic relocations in brief.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RelocationSummary {
    /// How many `.rela.dyn` entries.
    pub count: usize,
    /// Count per type name.
    pub by_type: BTreeMap<String, usize>,
    /// Relocations some loader could not apply, one sentence each.
    pub issues: Vec<String>,
}

/// The report row of a defined function or variable.
fn function(s: &Symbol<'_>) -> FunctionReport {
    FunctionReport {
        name: s.name.to_owned(),
        demangled: demangle(s.name),
        offset: s.value,
        size: s.size,
        binding: s.binding.as_str(),
        visibility: s.visibility.as_str(),
    }
}

/// Builds the report of `co`, naming it `id` (a bundle entry ID or a file name).
pub fn symbols_report(id: &str, co: &CodeObject<'_>) -> SymbolsReport {
    let kernels = co.kernels().iter().map(|k| co.kernel_info(k)).collect();
    let variables = co.variables().iter().map(function).collect();
    let imports = co
        .imports()
        .iter()
        .map(|s| ImportReport {
            name: s.name.to_owned(),
            demangled: demangle(s.name),
            kind: s.kind.as_str(),
            binding: s.binding.as_str(),
            rocr_mishandles: matches!(s.kind, super::SymbolKind::Func | super::SymbolKind::Object),
        })
        .collect();
    let mut by_type = BTreeMap::new();
    for r in co.relocations() {
        *by_type.entry(r.r_type.to_string()).or_insert(0) += 1;
    }
    SymbolsReport {
        id: id.to_owned(),
        target: co.target().target.to_string(),
        code_object_version: co.code_object_version(),
        load_size: co.load_size(),
        kernels,
        functions: co.functions().iter().map(function).collect(),
        variables,
        imports,
        relocations: RelocationSummary {
            count: co.relocations().len(),
            by_type,
            issues: co
                .relocation_issues()
                .iter()
                .map(ToString::to_string)
                .collect(),
        },
        kernel_issues: co.kernel_issues().iter().map(ToString::to_string).collect(),
    }
}

fn display_name(name: &str, demangled: &Option<String>) -> String {
    match demangled {
        Some(d) => format!("{d} [{name}]"),
        None => name.to_owned(),
    }
}

impl fmt::Display for SymbolsReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} (code object v{}), load size {:#x}",
            self.id, self.target, self.code_object_version, self.load_size
        )?;
        writeln!(f, "kernels ({}):", self.kernels.len())?;
        for k in &self.kernels {
            writeln!(
                f,
                "  {}  descriptor {} at {:#x}  kernarg {}  lds {}  scratch {}  wave{}",
                display_name(&k.name, &k.demangled),
                k.symbol,
                k.descriptor_offset,
                k.kernarg_segment_size,
                k.group_segment_fixed_size,
                k.private_segment_fixed_size,
                k.wavefront_size
            )?;
            for a in &k.args {
                write!(
                    f,
                    "    [{:>4}] size {:>3} {}",
                    a.offset, a.size, a.value_kind
                )?;
                if let Some(s) = &a.address_space {
                    write!(f, " ({s})")?;
                }
                if let Some(n) = &a.name {
                    write!(f, " {n}")?;
                }
                writeln!(f)?;
            }
        }
        for (title, list) in [
            ("functions", &self.functions),
            ("variables", &self.variables),
        ] {
            writeln!(f, "{title} ({}):", list.len())?;
            for s in list {
                writeln!(
                    f,
                    "  {:#010x} {:>6}  {:<6} {:<9} {}",
                    s.offset,
                    s.size,
                    s.binding,
                    s.visibility,
                    display_name(&s.name, &s.demangled)
                )?;
            }
        }
        writeln!(f, "imports ({}):", self.imports.len())?;
        for s in &self.imports {
            write!(
                f,
                "  {:<6} {:<6} {}",
                s.kind,
                s.binding,
                display_name(&s.name, &s.demangled)
            )?;
            if s.rocr_mishandles {
                write!(f, "  (typed import: ROCr mistakes it for a defined symbol)")?;
            }
            writeln!(f)?;
        }
        write!(f, "relocations: {}", self.relocations.count)?;
        let types: Vec<String> = self
            .relocations
            .by_type
            .iter()
            .map(|(t, n)| format!("{t} x{n}"))
            .collect();
        if !types.is_empty() {
            write!(f, " ({})", types.join(", "))?;
        }
        writeln!(f)?;
        for i in &self.relocations.issues {
            writeln!(f, "  problem: {i}")?;
        }
        for i in &self.kernel_issues {
            writeln!(f, "problem: {i}")?;
        }
        Ok(())
    }
}
