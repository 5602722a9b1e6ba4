//! ROCr's loader rules that rocload checks before ROCr sees a code object (`loader::rocr`), on
//! the fixtures of `tests/fixtures/rocr/` (clang-19/lld-19 output and byte-patched variants,
//! `scripts/gen-rocr-fixtures.sh`), for Debian's ROCr 5.2.3 and for 6.2. Each rule is what
//! ROCr's own source does (`loader/executable.cpp`, `libamdhsacode/amd_hsa_code.cpp` at
//! rocm-5.2.3 and rocm-6.2.0); the expectations about the files are checked against
//! llvm-readelf where they depend on the file.

mod common;

use common::{fixture, llvm_tool};
use rocload::code_object::RelocationType;
use rocload::loader::rocr::{
    check_for_rocr, check_plan_for_rocr, check_symbol_placement, duplicate_definitions,
    rocr_problems, MisplacedSymbol, RelocSymbolRule, ROCR_6_2_MARKER,
};
use rocload::loader::{Linker, LoadError, Module, RocrCapabilities, RocrProblem, RocrVersion};
use rocload::target::AgentIsa;

const V5: RocrCapabilities = RocrCapabilities::ROCR_5_2_3;
const V6: RocrCapabilities = RocrCapabilities::ROCR_6_2;

fn module(rel: &str) -> Module {
    Module::from_file(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn gfx1030() -> AgentIsa {
    "gfx1030".parse().unwrap()
}

fn resolved(m: &Module) -> Vec<Option<u64>> {
    vec![Some(0x1000); m.imports().len()]
}

fn problems(rel: &str, caps: &RocrCapabilities) -> Vec<RocrProblem> {
    let m = module(rel);
    rocr_problems(&m, &resolved(&m), &gfx1030(), caps)
}

fn readelf(args: &[&str], rel: &str) -> Option<String> {
    let tool = llvm_tool("llvm-readelf")?;
    let out = std::process::Command::new(tool)
        .args(args)
        .arg(fixture(rel))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn the_clean_fixture_has_no_problem_for_either_version() {
    assert_eq!(problems("rocr/rules.co", &V5), vec![]);
    assert_eq!(problems("rocr/rules.co", &V6), vec![]);
}

#[test]
fn capabilities_default_to_5_2_3_and_6_2_is_detected_from_its_export() {
    assert_eq!(RocrCapabilities::default(), V5);
    assert_eq!(RocrCapabilities::detect(|_| false), V5);
    assert_eq!(
        RocrCapabilities::detect(|name| name == ROCR_6_2_MARKER).version,
        RocrVersion::V6_2
    );
    assert!(!V5.applies(RelocationType::ABS32) && V6.applies(RelocationType::ABS32));
    for t in [
        RelocationType::ABS32_LO,
        RelocationType::ABS32_HI,
        RelocationType::ABS64,
        RelocationType::RELATIVE64,
    ] {
        assert!(V5.applies(t) && V6.applies(t), "{t}");
    }
    assert!(!V6.applies(RelocationType::REL32));
    assert_eq!(
        (V5.max_code_object_version(), V6.max_code_object_version()),
        (5, 6)
    );
    assert!(!V5.generic_targets() && V6.generic_targets());
}

/// Defect 1: ROCr's LOAD_BASE is its allocation minus the first segment's vaddr, and
/// LOAD_DELTA is LOAD_BASE minus it again, so a non-zero first vaddr makes both wrong; the old
/// check (delta == base - first vaddr) held by definition and caught nothing.
#[test]
fn a_first_segment_off_zero_is_refused() {
    if let Some(text) = readelf(&["-l"], "rocr/rules_base.co") {
        let first_load = text
            .lines()
            .find(|l| l.trim_start().starts_with("LOAD"))
            .unwrap();
        assert!(first_load.contains("0x0000000000010000"), "{first_load}");
    }
    let m = module("rocr/rules_base.co");
    assert_eq!(m.first_vaddr(), 0x10000);
    let found = problems("rocr/rules_base.co", &V5);
    assert_eq!(
        found,
        vec![RocrProblem::FirstSegmentNotAtZero { vaddr: 0x10000 }]
    );
    assert!(
        found[0].to_string().contains("off by 0x10000"),
        "{}",
        found[0]
    );
    // The same refusal for 6.2 (its loader computes LOAD_BASE the same way).
    assert_eq!(problems("rocr/rules_base.co", &V6), found);
    let plan = Linker::new()
        .plan(&gfx1030(), std::slice::from_ref(&m))
        .unwrap();
    assert!(matches!(
        check_plan_for_rocr(&gfx1030(), &V5, &[m], &plan),
        Err(LoadError::RocrRefuses { module: 0, .. })
    ));
}

#[test]
fn placement_is_checked_against_a_registered_symbol() {
    let m = module("rocr/rules.co");
    let kd = m
        .rocr_facts()
        .definitions
        .iter()
        .find(|d| d.name == "rr_fill.kd")
        .unwrap()
        .clone();
    assert!(kd.kernel);
    let base = 0x7f00_0000_0000;
    check_symbol_placement(base, &kd, base + kd.value).unwrap();
    let e = check_symbol_placement(base, &kd, base + kd.value + 0x10000).unwrap_err();
    assert_eq!(
        e,
        MisplacedSymbol {
            name: "rr_fill.kd".into(),
            reported: base + kd.value + 0x10000,
            load_base: base,
            value: kd.value,
        }
    );
}

/// Defect 2: ROCr registers every non-local OBJECT of `.symtab` (`.kd` included) per agent and
/// refuses a second one, weak or not. An ELF linker lets a strong definition win over a weak
/// one, so rocload's own plan accepts this pair.
#[test]
fn a_weak_second_definition_is_refused_for_rocr_but_links_elsewhere() {
    if let Some(text) = readelf(&["--syms"], "rocr/dup.co") {
        assert!(
            text.lines()
                .any(|l| l.contains("WEAK") && l.contains("OBJECT") && l.ends_with("rr_counter")),
            "{text}"
        );
    }
    let modules = vec![module("rocr/rules.co"), module("rocr/dup.co")];
    let plan = Linker::new().plan(&gfx1030(), &modules).unwrap();
    let dups = duplicate_definitions(&modules, &plan);
    assert_eq!(dups.len(), 1, "{dups:?}");
    let (&m, found) = dups.iter().next().unwrap();
    assert_eq!(m, 1);
    assert!(matches!(
        &found[..],
        [RocrProblem::AlreadyDefined { symbol, first }] if symbol == "rr_counter" && first.contains("rules.co")
    ));
    match check_plan_for_rocr(&gfx1030(), &V5, &modules, &plan) {
        Err(LoadError::RocrRefuses {
            module: 1,
            problems,
            ..
        }) => assert!(
            problems.iter().any(|p| p
                .to_string()
                .contains("HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED")),
            "{problems:?}"
        ),
        other => panic!("{other:?}"),
    }
    // The software agent links it (the strong definition wins).
    let exe = Linker::new()
        .link(
            &rocload::backend::SoftAgent::new(gfx1030()).shared(),
            &modules,
        )
        .unwrap();
    assert!(exe.symbol("rr_counter").is_some());
}

#[test]
fn an_address_the_caller_defines_that_a_code_object_also_defines_is_refused() {
    // kernels_user imports dl_table; the caller defines it; devlib_data defines it too and is
    // not needed for the import, so only ROCr would see two definitions.
    let modules = vec![
        module("codeobj/kernels_user.co"),
        module("codeobj/devlib_math.co"),
    ];
    let mut linker = Linker::new();
    linker.define("dl_table", 0x1234_0000).unwrap();
    let plan = linker.plan(&gfx1030(), &modules).unwrap();
    assert!(duplicate_definitions(&modules, &plan).is_empty());
    check_plan_for_rocr(&gfx1030(), &V5, &modules, &plan).unwrap();
    // With a module that registers dl_table loaded after the definition was published.
    let data = module("codeobj/devlib_data.co");
    let mut plan2 = plan.clone();
    plan2.order.push(2);
    plan2.providers.push(vec![]);
    let modules2 = vec![modules[0].clone(), modules[1].clone(), data];
    let dups = duplicate_definitions(&modules2, &plan2);
    match dups.get(&2).map(Vec::as_slice) {
        Some([RocrProblem::AlreadyDefined { symbol, first }]) => {
            assert_eq!(symbol, "dl_table");
            assert!(first.contains("the caller"), "{first}");
        }
        other => panic!("{other:?}"),
    }
}

/// Defect 3: ABS32 is applied from 6.2 on only; 5.2.3 answers INVALID_CODE_OBJECT.
#[test]
fn abs32_is_refused_by_5_2_3_only() {
    if let Some(text) = readelf(&["-r"], "rocr/rules_abs32.co") {
        assert!(
            text.contains("R_AMDGPU_ABS32 ") && text.contains("rr_counter"),
            "{text}"
        );
    }
    match &problems("rocr/rules_abs32.co", &V5)[..] {
        [RocrProblem::RelocationNotInVersion {
            r_type,
            symbol,
            version: RocrVersion::V5_2,
            ..
        }] => {
            assert_eq!(r_type, "R_AMDGPU_ABS32");
            assert_eq!(symbol, "rr_counter");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(problems("rocr/rules_abs32.co", &V6), vec![]);
}

#[test]
fn code_object_v6_is_refused_by_5_2_3_only() {
    let found = problems("codeobj/hf_cov6.gfx1030.co", &V5);
    assert!(
        found.contains(&RocrProblem::CodeObjectVersion {
            version: 6,
            max: 5,
            rocr: RocrVersion::V5_2
        }),
        "{found:?}"
    );
    assert!(!problems("codeobj/hf_cov6.gfx1030.co", &V6)
        .iter()
        .any(|p| matches!(p, RocrProblem::CodeObjectVersion { .. })));
    assert!(!problems("codeobj/hf_cov5.gfx1030.co", &V5)
        .iter()
        .any(|p| matches!(p, RocrProblem::CodeObjectVersion { .. })));
}

#[test]
fn generic_targets_are_refused_by_5_2_3_only() {
    use rocload::container::{read_containers, ReadOptions};
    let bytes = common::read("headerfree/hf_generic.hip_fatbin");
    let containers = read_containers(&bytes, &ReadOptions::default()).unwrap();
    let entries = containers[0].entries().unwrap();
    let index = entries
        .iter()
        .position(|e| e.id.contains("gfx10-3-generic"))
        .expect("a gfx10-3-generic entry");
    let code = containers[0].extract(index).unwrap();
    let m = Module::new(
        code.into_owned(),
        rocload::loader::ModuleSource::Memory {
            label: entries[index].id.to_string(),
        },
    )
    .unwrap();
    let v5 = rocr_problems(&m, &resolved(&m), &gfx1030(), &V5);
    assert!(
        v5.iter().any(|p| matches!(p, RocrProblem::GenericTarget { target, .. } if target.contains("gfx10-3-generic"))),
        "{v5:?}"
    );
    let v6 = rocr_problems(&m, &resolved(&m), &gfx1030(), &V6);
    assert_eq!(v6, vec![], "6.2 resolves gfx10-3-generic for gfx1030");
}

/// Defect 4: ROCr reads symbols from `.symtab` only; without one it loads nothing it can name.
#[test]
fn a_code_object_without_symtab_is_refused() {
    if let Some(text) = readelf(&["-S"], "rocr/rules_stripped.co") {
        assert!(
            !text.contains(".symtab") && text.contains(".dynsym"),
            "{text}"
        );
    }
    let m = module("rocr/rules_stripped.co");
    assert!(!m.rocr_facts().has_symtab);
    assert!(m.rocr_facts().definitions.is_empty());
    // rocload itself still sees the kernels (from .dynsym).
    assert!(m.kernel("rr_fill").is_some());
    assert_eq!(
        problems("rocr/rules_stripped.co", &V5),
        vec![RocrProblem::NoSymbolTable]
    );
    let m = module("rocr/rules.co");
    assert!(m.rocr_facts().has_symtab);
    let names: Vec<&str> = m
        .rocr_facts()
        .definitions
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, vec!["rr_counter", "rr_fill.kd", "rr_add.kd"]);
}

/// Defect 5: a defined NOTYPE symbol is looked up by name (0 + addend when absent); SECTION and
/// TLS symbols are refused.
#[test]
fn relocations_against_notype_section_and_tls_symbols_are_flagged() {
    for (rel, kind) in [
        ("rocr/notype.co", "NOTYPE"),
        ("rocr/notype_section.co", "SECTION"),
        ("rocr/notype_tls.co", "TLS"),
    ] {
        if let Some(text) = readelf(&["--dyn-syms"], rel) {
            assert!(
                text.lines()
                    .any(|l| l.contains(kind) && l.ends_with("rr_marker")),
                "{rel}: {text}"
            );
        }
    }
    match &problems("rocr/notype.co", &V5)[..] {
        [RocrProblem::RelocationSymbol {
            symbol,
            symbol_type,
            rule: RelocSymbolRule::LookedUpByName,
            ..
        }] => {
            assert_eq!(symbol, "rr_marker");
            assert_eq!(*symbol_type, "notype");
        }
        other => panic!("{other:?}"),
    }
    for (rel, kind) in [
        ("rocr/notype_section.co", "section"),
        ("rocr/notype_tls.co", "tls"),
    ] {
        let found = problems(rel, &V6);
        assert!(
            found.iter().any(|p| matches!(p,
                RocrProblem::RelocationSymbol { symbol_type, rule: RelocSymbolRule::Refused, .. }
                    if *symbol_type == kind)),
            "{rel}: {found:?}"
        );
        let m = module(rel);
        let e = check_for_rocr(0, &m, &resolved(&m), &gfx1030(), &V6).unwrap_err();
        assert!(
            matches!(&e, LoadError::RocrRefuses { problems, .. }
            if problems.iter().any(|p| matches!(p, RocrProblem::RelocationSymbol {
                rule: RelocSymbolRule::Refused,
                ..
            }))),
            "{e}"
        );
    }
}

#[test]
fn dynamic_stack_and_kernarg_alignment_come_from_the_code_object() {
    let m = module("rocr/indirect.co");
    let k = m.kernel("rr_indirect").unwrap();
    assert!(k.uses_dynamic_stack, "indirect calls need a dynamic stack");
    assert_eq!(k.kernarg_segment_align, 8);
    if let Some(text) = readelf(&["--notes"], "rocr/indirect.co") {
        assert!(text.contains(".uses_dynamic_stack: true"), "{text}");
        assert!(text.contains(".kernarg_segment_align: 8"), "{text}");
    }
}
