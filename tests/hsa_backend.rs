//! The HSA backend and the backend choice against the real ROCr library installed here (Debian's
//! libhsa-runtime64-1 5.2.3, no AMD GPU: `hsa_init` answers HSA_STATUS_ERROR_OUT_OF_RESOURCES),
//! the validation that keeps from ROCr what it would refuse or mishandle (expectations derived
//! from llvm-readelf and the relocation types ROCr's loader applies), cycles on a one-at-a-time
//! backend, and GPU tests, `#[ignore]`d because no machine of this project has an AMD GPU. On
//! a machine with a gfx1030 GPU and ROCr, run them with
//! `cargo test --test hsa_backend -- --ignored gpu_`; there they fail, not skip, without a GPU.
//!
//! Environment variables are process-global, so tests that need them set run the CLI or this
//! test binary in a child process; everything else passes the values explicitly.

mod common;

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::{fixture, llvm_tool};
use hsa_sys::{HsaLibrary, HSA_STATUS_ERROR_OUT_OF_RESOURCES};
use rocload::backend::{
    choose_agents, BackendChoice, BackendConfig, BackendError, HsaAgent, HsaUnavailable, SoftAgent,
};
use rocload::loader::rocr::{check_for_rocr, check_plan_for_rocr, rocr_problems};
use rocload::loader::{
    Agent, BackendKind, ExecutableBackend, Linker, LoadError, Module, Placement, Provider,
    RocrCapabilities, RocrProblem,
};
use rocload::target::AgentIsa;

fn module(rel: &str) -> Module {
    Module::from_file(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Debian's ROCr, the default the checks assume.
const ROCR: RocrCapabilities = RocrCapabilities::ROCR_5_2_3;

fn isa(name: &str) -> AgentIsa {
    name.parse().unwrap()
}

/// The system HSA runtime, or `None` after printing why the test is skipped. Missing while env
/// CI is set is a failure: CI installs libhsa-runtime64-1.
fn system_library(test: &str) -> Option<HsaLibrary> {
    match HsaLibrary::load_from("libhsa-runtime64.so.1") {
        Ok(lib) => Some(lib),
        Err(e) if std::env::var_os("CI").is_some() => panic!(
            "{test}: CI is set but the HSA runtime is missing ({e}); install libhsa-runtime64-1"
        ),
        Err(e) => {
            eprintln!("{test}: skipped: HSA runtime not installed ({e})");
            None
        }
    }
}

/// True when this machine has no AMD GPU driver, where hsa_init must fail with HSA_STATUS_ERROR_OUT_OF_RESOURCES;
/// prints why a test expecting that is skipped otherwise.
fn no_gpu_driver(test: &str) -> bool {
    if std::path::Path::new("/dev/kfd").exists() {
        eprintln!("{test}: skipped: /dev/kfd exists, so hsa_init is not expected to fail here");
        return false;
    }
    true
}

fn config(choice: BackendChoice) -> BackendConfig {
    BackendConfig {
        choice,
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------------------------
// The real library and the backend choice.

/// Every runtime function hsa.rs and choose.rs call (through hsa-sys's checked layer).
const FUNCTIONS_THE_BACKEND_CALLS: &[&str] = &[
    "hsa_init",
    "hsa_shut_down",
    "hsa_status_string",
    "hsa_iterate_agents",
    "hsa_agent_get_info",
    "hsa_agent_iterate_isas",
    "hsa_isa_get_info_alt",
    "hsa_system_get_major_extension_table",
    "hsa_code_object_reader_create_from_memory",
    "hsa_code_object_reader_destroy",
    "hsa_executable_create_alt",
    "hsa_executable_load_agent_code_object",
    "hsa_executable_agent_global_variable_define",
    "hsa_executable_freeze",
    "hsa_executable_destroy",
    "hsa_executable_get_symbol_by_name",
    "hsa_executable_symbol_get_info",
];

#[test]
fn the_library_loads_and_every_function_the_backend_calls_resolves() {
    let Some(lib) = system_library("library") else {
        return;
    };
    for name in FUNCTIONS_THE_BACKEND_CALLS {
        assert_eq!(
            lib.has_function(name),
            Some(true),
            "{name} in {}",
            lib.name()
        );
    }
    assert!(
        lib.missing_backend_functions().is_empty(),
        "{:?}",
        lib.missing_backend_functions()
    );
    assert!(
        lib.file()
            .is_some_and(|f| f.to_string_lossy().contains("libhsa-runtime64")),
        "{:?}",
        lib.file()
    );
}

#[test]
fn explicit_hsa_fails_cleanly_with_hsa_init_status() {
    if system_library("explicit_hsa").is_none() || !no_gpu_driver("explicit_hsa") {
        return;
    }
    let e = choose_agents(&config(BackendChoice::Hsa)).unwrap_err();
    match &e {
        BackendError::HsaUnavailable(HsaUnavailable::Init { library, error }) => {
            assert!(
                error.is_status(HSA_STATUS_ERROR_OUT_OF_RESOURCES),
                "{error:?}"
            );
            assert_eq!(error.call, "hsa_init");
            assert!(library.contains("libhsa-runtime64"), "{library}");
        }
        other => panic!("expected hsa_init's failure, got {other:?}"),
    }
    let text = e.to_string();
    for needle in [
        "ROCLOAD_BACKEND=hsa",
        "hsa_init failed",
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)",
        "libhsa-runtime64",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from {text}");
    }
}

#[test]
fn auto_falls_back_to_the_software_agent_and_says_why() {
    if system_library("auto").is_none() || !no_gpu_driver("auto") {
        return;
    }
    let set = choose_agents(&BackendConfig {
        soft_isa: Some("gfx90a".into()),
        ..config(BackendChoice::Auto)
    })
    .unwrap();
    assert_eq!(set.choice, BackendChoice::Auto);
    assert_eq!(set.agents.len(), 1);
    assert_eq!(set.agents[0].backend(), BackendKind::Soft);
    assert_eq!(
        set.agents[0].isa().isa_name(),
        "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"
    );
    assert!(set.hsa.tried);
    assert!(!set.hsa.available);
    assert!(
        set.hsa
            .library
            .as_deref()
            .is_some_and(|l| l.contains("libhsa-runtime64")),
        "{:?}",
        set.hsa
    );
    let error = set.hsa.error.as_deref().unwrap();
    assert!(
        error.starts_with("hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)"),
        "{error}"
    );
}

#[test]
fn a_missing_library_falls_back_under_auto_and_fails_under_hsa() {
    let missing = BackendConfig {
        hsa_library: Some("/nonexistent/libhsa-runtime64.so.1".into()),
        ..config(BackendChoice::Auto)
    };
    let set = choose_agents(&missing).unwrap();
    assert_eq!(set.agents[0].backend(), BackendKind::Soft);
    assert_eq!(set.hsa.library, None);
    assert!(!set.hsa.available);
    let error = set.hsa.error.unwrap();
    assert!(
        error.contains("ROCLOAD_HSA_LIBRARY=/nonexistent/libhsa-runtime64.so.1"),
        "{error}"
    );
    assert!(error.contains("No such file"), "{error}");

    let e = choose_agents(&BackendConfig {
        choice: BackendChoice::Hsa,
        ..missing
    })
    .unwrap_err();
    assert!(
        matches!(&e, BackendError::HsaUnavailable(HsaUnavailable::Library(l)) if l.attempts.len() == 1),
        "{e:?}"
    );
}

#[test]
fn a_bogus_backend_and_a_bad_soft_isa_are_errors() {
    let e = BackendChoice::from_env_value(Some("gpu")).unwrap_err();
    assert!(matches!(&e, BackendError::InvalidChoice { value } if value == "gpu"));
    let e = choose_agents(&BackendConfig {
        soft_isa: Some("gfx10-3-generic".into()),
        ..config(BackendChoice::Soft)
    })
    .unwrap_err();
    assert!(matches!(e, BackendError::SoftAgent(_)), "{e:?}");
    // The override applies to the software agent.
    let set = choose_agents(&BackendConfig {
        soft_isa: Some("gfx1031".into()),
        override_gfx_version: Some("10.3.0".into()),
        ..config(BackendChoice::Soft)
    })
    .unwrap();
    assert_eq!(set.agents[0].isa().isa_name(), "amdgcn-amd-amdhsa--gfx1030");
}

fn hsa_mapped() -> bool {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .contains("libhsa-runtime64")
}

/// Run by `soft_never_loads_the_library` in a child process, whose environment it sets: the
/// choice is read from the environment and the library must not be mapped afterwards.
#[test]
#[ignore = "run in a child process by soft_never_loads_the_library"]
fn child_soft_from_env() {
    assert_eq!(std::env::var("ROCLOAD_BACKEND").as_deref(), Ok("soft"));
    assert!(!hsa_mapped(), "mapped before anything ran");
    let set = rocload::runtime::config::Config::global().agents().unwrap();
    assert_eq!(set.choice, BackendChoice::Soft);
    assert!(!set.hsa.tried);
    assert_eq!(
        set.agents[0].isa().isa_name(),
        "amdgcn-amd-amdhsa--gfx900:xnack-"
    );
    assert!(!hsa_mapped(), "ROCLOAD_BACKEND=soft opened the HSA library");
    // The same process then opens it under auto, so the check above can see a mapping.
    let auto = rocload::runtime::config::Config::from_vars(|name| match name {
        "ROCLOAD_BACKEND" => Some("auto".into()),
        other => std::env::var_os(other),
    });
    let set = auto.agents().unwrap();
    assert!(set.hsa.tried);
    if set.hsa.library.is_some() {
        assert!(
            hsa_mapped(),
            "the library was opened but /proc/self/maps does not show it"
        );
    }
    println!("child ok");
}

#[test]
fn soft_never_loads_the_library() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_soft_from_env",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ROCLOAD_BACKEND", "soft")
        .env("ROCLOAD_SOFT_ISA", "gfx900")
        .env_remove("ROCLOAD_OVERRIDE_GFX_VERSION")
        .env_remove("ROCLOAD_HSA_LIBRARY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("child ok") && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn rocload_agents(envs: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(common::rocload_bin());
    cmd.args(["agents", "--json"]);
    for var in [
        "ROCLOAD_BACKEND",
        "ROCLOAD_HSA_LIBRARY",
        "ROCLOAD_SOFT_ISA",
        "ROCLOAD_OVERRIDE_GFX_VERSION",
        "ROCLOAD_LOG",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(envs.iter().copied());
    cmd.output().unwrap()
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn cli_agents_json_reports_the_agents_and_the_hsa_status() {
    // Missing library: falls back, says so, library null.
    let v = json_of(&rocload_agents(&[(
        "ROCLOAD_HSA_LIBRARY",
        "/nonexistent.so",
    )]));
    assert_eq!(
        v["agents"],
        serde_json::json!([{"name": "amdgcn-amd-amdhsa--gfx1030", "backend": "soft"}])
    );
    assert_eq!(v["hsa"]["library"], serde_json::Value::Null);
    assert_eq!(v["hsa"]["available"], false);
    assert!(
        v["hsa"]["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent.so"),
        "{v}"
    );
    let keys: BTreeSet<&str> = v["hsa"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        BTreeSet::from(["available", "error", "library", "tried"])
    );

    // soft: HSA untouched.
    let v = json_of(&rocload_agents(&[
        ("ROCLOAD_BACKEND", "soft"),
        ("ROCLOAD_SOFT_ISA", "gfx1100"),
    ]));
    assert_eq!(
        v["agents"],
        serde_json::json!([{"name": "amdgcn-amd-amdhsa--gfx1100", "backend": "soft"}])
    );
    assert_eq!(
        v["hsa"],
        serde_json::json!({"tried": false, "library": null, "available": false, "error": null})
    );

    // A bogus value: exit 1, the value named.
    let out = rocload_agents(&[("ROCLOAD_BACKEND", "cuda")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("ROCLOAD_BACKEND=\"cuda\": expected auto, hsa or soft"));

    if system_library("cli").is_none() || !no_gpu_driver("cli") {
        return;
    }
    // auto with the real library: the soft agent, the library found, hsa_init's status.
    let out = rocload_agents(&[("ROCLOAD_LOG", "info")]);
    let v = json_of(&out);
    assert_eq!(v["agents"][0]["backend"], "soft");
    assert_eq!(v["hsa"]["available"], false);
    assert!(
        v["hsa"]["library"]
            .as_str()
            .unwrap()
            .contains("libhsa-runtime64"),
        "{v}"
    );
    assert!(
        v["hsa"]["error"]
            .as_str()
            .unwrap()
            .contains("hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
        "{v}"
    );
    // One log line says why.
    let log = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("using the software agent"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains("HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
        "{log}"
    );

    // hsa: exit 1 naming hsa_init and the status.
    let out = rocload_agents(&[("ROCLOAD_BACKEND", "hsa")]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Validation before ROCr: expectations from llvm-readelf and the relocation types ROCr applies.

/// (offset, type, symbol) of a relocation.
type RelocRow = (u64, String, String);
/// (name, type) of an undefined typed symbol.
type TypedImportRow = (String, String);

/// What llvm-readelf shows that ROCr cannot take: `.rela.dyn` relocations whose type is not one
/// ROCr applies (ABS32_LO, ABS32_HI, ABS64, ABS32, RELATIVE64), as (offset, type, symbol), and
/// undefined `.dynsym` symbols typed FUNC or OBJECT, as (name, type).
fn readelf_rocr_expectations(rel: &str) -> Option<(Vec<RelocRow>, Vec<TypedImportRow>)> {
    let readelf = llvm_tool("llvm-readelf")?;
    let out = Command::new(readelf)
        .args(["-r", "--dyn-syms"])
        .arg(fixture(rel))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    const ROCR_APPLIES: [&str; 5] = [
        "R_AMDGPU_ABS32_LO",
        "R_AMDGPU_ABS32_HI",
        "R_AMDGPU_ABS64",
        "R_AMDGPU_ABS32",
        "R_AMDGPU_RELATIVE64",
    ];
    let mut relocs = Vec::new();
    let mut typed = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 3 && f[2].starts_with("R_AMDGPU_") && !ROCR_APPLIES.contains(&f[2]) {
            let symbol = if f.len() >= 5 {
                f[4].to_string()
            } else {
                String::new()
            };
            relocs.push((
                u64::from_str_radix(f[0], 16).unwrap(),
                f[2].to_string(),
                symbol,
            ));
        }
        // "   2: 0000000000000000     0 FUNC    GLOBAL DEFAULT   UND dl_add"
        if f.len() == 8
            && f[0].ends_with(':')
            && f[6] == "UND"
            && (f[3] == "FUNC" || f[3] == "OBJECT")
        {
            typed.push((f[7].to_string(), f[3].to_lowercase()));
        }
    }
    Some((relocs, typed))
}

fn all_resolved(m: &Module) -> Vec<Option<u64>> {
    vec![Some(0x1000); m.imports().len()]
}

fn problems_vs_readelf(rel: &str) -> Option<Vec<RocrProblem>> {
    let (relocs, typed) = readelf_rocr_expectations(rel)?;
    let m = module(rel);
    let problems = rocr_problems(&m, &all_resolved(&m), &isa("gfx1030"), &ROCR);
    let got_relocs: Vec<RelocRow> = problems
        .iter()
        .filter_map(|p| match p {
            RocrProblem::Relocation {
                offset,
                r_type,
                symbol,
                ..
            } => Some((*offset, r_type.clone(), symbol.clone())),
            _ => None,
        })
        .collect();
    let got_typed: Vec<TypedImportRow> = problems
        .iter()
        .filter_map(|p| match p {
            RocrProblem::TypedImport {
                symbol,
                symbol_type,
            } => Some((symbol.clone(), symbol_type.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(got_relocs, relocs, "{rel}");
    assert_eq!(got_typed, typed, "{rel}");
    assert_eq!(
        problems.len(),
        relocs.len() + typed.len(),
        "{rel}: {problems:?}"
    );
    Some(problems)
}

#[test]
fn rel32_is_refused_for_rocr_but_loads_on_the_software_agent() {
    let Some(problems) = problems_vs_readelf("synthetic/kernels_user.rel32.co") else {
        return;
    };
    assert_eq!(problems.len(), 1, "the fixture changes one relocation");
    let m = module("synthetic/kernels_user.rel32.co");
    let e = check_for_rocr(2, &m, &all_resolved(&m), &isa("gfx1030"), &ROCR).unwrap_err();
    assert!(
        matches!(&e, LoadError::RocrRefuses { module: 2, problems, .. } if problems.len() == 1),
        "{e:?}"
    );
    assert!(
        matches!(&e, LoadError::RocrRefuses { origin, problems, .. }
            if origin.contains("kernels_user.rel32.co")
                && matches!(&problems[..], [RocrProblem::Relocation { r_type, symbol, .. }]
                    if r_type == "R_AMDGPU_REL32" && symbol == "dl_add")),
        "{e}"
    );

    // The whole plan: refused before anything is loaded; rocload's own loader applies REL32.
    let modules = vec![
        m,
        module("codeobj/devlib_math.co"),
        module("codeobj/devlib_data.co"),
    ];
    let plan = Linker::new().plan(&isa("gfx1030"), &modules).unwrap();
    assert!(matches!(
        check_plan_for_rocr(&isa("gfx1030"), &ROCR, &modules, &plan),
        Err(LoadError::RocrRefuses { module: 0, .. })
    ));
    Linker::new()
        .link(&SoftAgent::new(isa("gfx1030")).shared(), &modules)
        .unwrap();
}

#[test]
fn an_undefined_func_import_is_refused_naming_the_symbol() {
    let Some(problems) = problems_vs_readelf("synthetic/kernels_user.undef_func.co") else {
        return;
    };
    assert_eq!(
        problems,
        vec![RocrProblem::TypedImport {
            symbol: "dl_add".into(),
            symbol_type: "func"
        }]
    );
    let m = module("synthetic/kernels_user.undef_func.co");
    let e = check_for_rocr(0, &m, &all_resolved(&m), &isa("gfx1030"), &ROCR).unwrap_err();
    assert!(
        matches!(&e, LoadError::RocrRefuses { problems, .. }
        if problems.contains(&RocrProblem::TypedImport {
            symbol: "dl_add".into(),
            symbol_type: "func",
        })),
        "{e}"
    );
}

#[test]
fn clean_code_objects_have_no_problems() {
    for rel in [
        "codeobj/kernels_user.co",
        "codeobj/devlib_math.co",
        "codeobj/devlib_data.co",
        "codeobj/kernels_static.co",
    ] {
        if problems_vs_readelf(rel).is_none() {
            return;
        }
        let m = module(rel);
        check_for_rocr(0, &m, &all_resolved(&m), &isa("gfx1030"), &ROCR)
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
    }
}

#[test]
fn unresolved_imports_weak_or_not_are_refused() {
    let m = module("codeobj/kernels_user.co");
    let problems = rocr_problems(&m, &vec![None; m.imports().len()], &isa("gfx1030"), &ROCR);
    let names: Vec<&str> = problems
        .iter()
        .map(|p| match p {
            RocrProblem::UnresolvedImport {
                symbol,
                weak: false,
            } => symbol.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    let imports: Vec<&str> = m.imports().iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, imports);
    assert_eq!(names.len(), 4);
}

#[test]
fn code_accepted_only_by_the_extended_policy_is_refused_for_rocr() {
    // gfx1030 code on a gfx1031 agent: the distributions' table allows it, ROCr's strict check not.
    let m = module("codeobj/devlib_math.co");
    let problems = rocr_problems(&m, &[], &isa("gfx1031"), &ROCR);
    assert!(
        matches!(problems.as_slice(), [RocrProblem::IsaNotStrictlyCompatible { target, .. }] if target == "gfx1030"),
        "{problems:?}"
    );
    assert!(rocr_problems(&m, &[], &isa("gfx1030"), &ROCR).is_empty());
}

// ---------------------------------------------------------------------------------------------
// The generic build on a backend that, like ROCr, loads one code object at a time.

#[derive(Debug, Default)]
struct Journal {
    loads: Vec<(usize, Vec<Option<u64>>)>,
}

/// A software agent whose executables cannot reserve memory, so imports must be loaded first
/// (what `HsaExecutable` reports); each load is validated as the HSA backend validates it.
#[derive(Debug)]
struct OneAtATimeAgent {
    soft: SoftAgent,
    journal: Arc<Mutex<Journal>>,
}

#[derive(Debug)]
struct OneAtATimeExecutable {
    inner: Box<dyn ExecutableBackend>,
    isa: AgentIsa,
    journal: Arc<Mutex<Journal>>,
}

impl Agent for OneAtATimeAgent {
    fn isa(&self) -> &AgentIsa {
        self.soft.isa()
    }
    fn backend(&self) -> BackendKind {
        BackendKind::Hsa
    }
    fn new_executable(&self) -> Result<Box<dyn ExecutableBackend>, LoadError> {
        Ok(Box::new(OneAtATimeExecutable {
            inner: self.soft.new_executable()?,
            isa: *self.soft.isa(),
            journal: self.journal.clone(),
        }))
    }
}

impl ExecutableBackend for OneAtATimeExecutable {
    fn links_cycles(&self) -> bool {
        false
    }
    fn reserve(&mut self, _: usize, _: &Module) -> Result<Option<u64>, LoadError> {
        Ok(None)
    }
    fn load(
        &mut self,
        index: usize,
        module: &Module,
        imports: &[Option<u64>],
    ) -> Result<Placement, LoadError> {
        check_for_rocr(index, module, imports, &self.isa, &ROCR)?;
        self.journal
            .lock()
            .unwrap()
            .loads
            .push((index, imports.to_vec()));
        self.inner.load(index, module, imports)
    }
    fn freeze(&mut self) -> Result<(), LoadError> {
        self.inner.freeze()
    }
    fn read_image(&self, index: usize) -> Option<Vec<u8>> {
        self.inner.read_image(index)
    }
}

fn one_at_a_time() -> (Arc<dyn Agent>, Arc<Mutex<Journal>>) {
    let journal = Arc::new(Mutex::new(Journal::default()));
    (
        Arc::new(OneAtATimeAgent {
            soft: SoftAgent::new(isa("gfx1030")),
            journal: journal.clone(),
        }),
        journal,
    )
}

#[test]
fn a_cycle_is_refused_when_code_objects_load_one_at_a_time() {
    let modules = vec![
        module("codeobj/cycle_ping.co"),
        module("codeobj/cycle_pong.co"),
    ];
    let (agent, journal) = one_at_a_time();
    let e = Linker::new().link(&agent, &modules).unwrap_err();
    match &e {
        LoadError::Cycle { modules } => {
            assert_eq!(modules.len(), 2);
            assert!(
                modules[0].ends_with("cycle_ping.co") && modules[1].ends_with("cycle_pong.co"),
                "{modules:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        journal.lock().unwrap().loads.is_empty(),
        "nothing may be loaded before the cycle is reported"
    );
    let plan = Linker::new().plan(agent.isa(), &modules).unwrap();
    assert!(matches!(
        check_plan_for_rocr(agent.isa(), &ROCR, &modules, &plan),
        Err(LoadError::Cycle { .. })
    ));
    // The software agent, which reserves first, links the same pair.
    Linker::new()
        .link(&SoftAgent::new(isa("gfx1030")).shared(), &modules)
        .unwrap();
}

#[test]
fn providers_load_first_with_every_import_resolved() {
    // Given importer first, providers after.
    let modules = vec![
        module("codeobj/kernels_user.co"),
        module("codeobj/devlib_math.co"),
        module("codeobj/devlib_data.co"),
    ];
    let (agent, journal) = one_at_a_time();
    let exe = Linker::new().link(&agent, &modules).unwrap();
    let loads = std::mem::take(&mut journal.lock().unwrap().loads);
    let order: Vec<usize> = loads.iter().map(|(i, _)| *i).collect();
    assert_eq!(order, vec![1, 2, 0]);
    let (_, imports) = &loads[2];
    // Each import address is the provider's symbol as the executable reports it.
    for (import, address) in modules[0].imports().iter().zip(imports) {
        let symbol = exe
            .symbol(&import.name)
            .unwrap_or_else(|| panic!("{}", import.name));
        assert_eq!(*address, Some(symbol.address), "{}", import.name);
    }
    let plan = Linker::new().plan(agent.isa(), &modules).unwrap();
    check_plan_for_rocr(agent.isa(), &ROCR, &modules, &plan).unwrap();
    assert!(plan.providers[0]
        .iter()
        .all(|p| matches!(p, Provider::Module { .. })));
}

// ---------------------------------------------------------------------------------------------
// On a GPU (never run here).

/// A gfx1030 HSA agent (the fixtures are gfx1030 code objects). The tests that call this are
/// `#[ignore]`d: run explicitly, they fail without one.
fn gfx1030_hsa_agent(test: &str) -> Option<HsaAgent> {
    system_library(test).expect("the GPU tests need ROCr (libhsa-runtime64.so.1)");
    let set = match choose_agents(&config(BackendChoice::Hsa)) {
        Ok(set) => set,
        Err(e) => panic!("{test}: no GPU agent ({e})"),
    };
    assert_eq!(set.agents.len(), set.hsa_agents.len());
    assert!(set.agents.iter().all(|a| a.backend() == BackendKind::Hsa));
    let found = set
        .hsa_agents
        .into_iter()
        .find(|a| a.isa() == &isa("gfx1030"));
    assert!(
        found.is_some(),
        "{test}: no gfx1030 GPU agent (the fixtures are gfx1030 code objects)"
    );
    found
}

#[test]
#[ignore = "needs a gfx1030 AMD GPU: cargo test --test hsa_backend -- --ignored gpu_"]
fn gpu_loads_kernels_and_device_libraries_with_rocr_agreeing() {
    let Some(agent) = gfx1030_hsa_agent("gpu_load") else {
        return;
    };
    let agent_isa = *agent.isa();
    let modules = vec![
        module("codeobj/kernels_user.co"),
        module("codeobj/devlib_math.co"),
        module("codeobj/devlib_data.co"),
    ];
    let plan = Linker::new().plan(&agent_isa, &modules).unwrap();
    check_plan_for_rocr(&agent_isa, &agent.capabilities(), &modules, &plan).unwrap();
    agent.check_plan(&modules, &plan).unwrap();
    let mut exec = agent.create_executable().unwrap();
    assert!(!exec.links_cycles());
    let mut bases = vec![None; modules.len()];
    for &m in &plan.order {
        let imports: Vec<Option<u64>> = plan.providers[m]
            .iter()
            .map(|p| match *p {
                Provider::Module { module, symbol } => bases[module].map(|b: u64| {
                    b - modules[module].first_vaddr() + modules[module].symbols()[symbol].value
                }),
                Provider::Defined(a) => Some(a),
                Provider::Unresolved => None,
            })
            .collect();
        let placement = exec.load(m, &modules[m], &imports).unwrap();
        bases[m] = Some(placement.base);
        let loaded = exec.loaded(m).unwrap();
        assert_eq!(
            loaded.delta as u64,
            placement.base - modules[m].first_vaddr()
        );
        // ROCr's URI for a reader from memory: memory://PID#offset=0xADDR&size=N.
        let expected_uri = format!(
            "memory://{}#offset={:#x}&size={}",
            std::process::id(),
            modules[m].bytes().as_ptr() as usize,
            modules[m].bytes().len()
        );
        assert_eq!(loaded.uri, expected_uri);
        assert_eq!(exec.runtime_uri(m).as_deref(), Some(expected_uri.as_str()));
    }
    exec.freeze().unwrap();
    let listed = exec.runtime_code_objects().unwrap();
    let in_order: Vec<u64> = plan
        .order
        .iter()
        .map(|&m| exec.loaded(m).unwrap().handle)
        .collect();
    assert_eq!(
        listed.iter().map(|l| l.handle).collect::<Vec<_>>(),
        in_order
    );
    // Kernel symbols: LOAD_DELTA + st_value of the .kd is what ROCr reports as the kernel object.
    for (i, m) in modules.iter().enumerate() {
        let delta = exec.loaded(i).unwrap().delta as u64;
        for s in m
            .symbols()
            .iter()
            .filter(|s| s.class == rocload::loader::SymbolClass::Kernel)
        {
            assert_eq!(
                exec.kernel_object(&s.name).unwrap(),
                delta + s.value,
                "{}",
                s.name
            );
        }
    }
    drop(exec);
    assert!(agent.take_deferred_errors().is_empty());

    // The generic path on the same agent.
    let shared: Arc<dyn Agent> = Arc::new(agent.clone());
    let exe = Linker::new().link(&shared, &modules).unwrap();
    assert!(exe.symbol("use_add").is_some() && exe.symbol("dl_add").is_some());
    assert!(exe.image(0).is_none(), "device memory is not read back");
}

#[test]
#[ignore = "needs a gfx1030 AMD GPU: cargo test --test hsa_backend -- --ignored gpu_"]
fn gpu_refuses_rel32_and_cycles_before_rocr_sees_them() {
    let Some(agent) = gfx1030_hsa_agent("gpu_refuse") else {
        return;
    };
    let modules = vec![
        module("synthetic/kernels_user.rel32.co"),
        module("codeobj/devlib_math.co"),
        module("codeobj/devlib_data.co"),
    ];
    let plan = Linker::new().plan(agent.isa(), &modules).unwrap();
    assert!(matches!(
        agent.check_plan(&modules, &plan),
        Err(LoadError::RocrRefuses { module: 0, .. })
    ));
    let shared: Arc<dyn Agent> = Arc::new(agent);
    assert!(matches!(
        Linker::new().link(&shared, &modules),
        Err(LoadError::RocrRefuses { module: 0, .. })
    ));
    let modules = vec![
        module("codeobj/cycle_ping.co"),
        module("codeobj/cycle_pong.co"),
    ];
    assert!(matches!(
        Linker::new().link(&shared, &modules),
        Err(LoadError::Cycle { .. })
    ));
}

#[test]
#[ignore = "needs a gfx1030 AMD GPU: cargo test --test hsa_backend -- --ignored gpu_"]
fn gpu_launches_vadd_through_hsa_queues() {
    use rocload::device::Device;
    use rocload::runtime::{DeviceBuffer, DevicePtr, Runtime, RuntimeOptions};
    let Some(agent) = gfx1030_hsa_agent("gpu_launch") else {
        return;
    };
    let device: Arc<dyn Device> = Arc::new(agent);
    let rt = Runtime::with_devices(vec![device], RuntimeOptions::default());
    let dev = rt.device(0).unwrap().clone();
    let m = rt
        .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
        .unwrap();
    let vadd = m.function("vadd").unwrap();
    let x = DeviceBuffer::<f32>::from_slice(&dev, &[1.0; 64]).unwrap();
    let y = DeviceBuffer::<f32>::from_slice(&dev, &[2.0; 64]).unwrap();
    let z = DeviceBuffer::<f32>::zeroed(&dev, 64).unwrap();
    vadd.launch()
        .grid([2, 1, 1])
        .block([32, 1, 1])
        .arg(&x)
        .arg(DevicePtr(y.address()))
        .arg(&z)
        .arg(64i32)
        .submit(&rt)
        .unwrap();
    dev.synchronize().unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![3.0; 64]);
}
