// ROCLOAD_HSA_LIBRARY handling. One test in its own binary, because it changes the process
// environment, which other tests running in parallel threads would otherwise observe.

mod common;

use hsa_sys::{CandidateSource, HsaLibrary, LIBRARY_ENV};

#[test]
fn the_environment_variable_overrides_the_default_and_is_not_silently_ignored() {
    let Some(system) = common::system_library("env_override") else {
        return;
    };
    let real = system.file().expect("the mapped runtime file");

    // A real path: loaded from there.
    std::env::set_var(LIBRARY_ENV, &real);
    let lib = HsaLibrary::load().expect("the runtime loads from the path in the variable");
    assert_eq!(lib.name(), real.to_str().expect("UTF-8 path"));
    assert_eq!(lib.source(), CandidateSource::Environment);
    assert!(lib.missing_backend_functions().is_empty());

    // A bogus path: a typed error naming the variable and the path; no fallback to the system
    // library, which would hide the mistake.
    let bogus = "/nonexistent/rocload-test/libhsa-runtime64.so.1";
    std::env::set_var(LIBRARY_ENV, bogus);
    let err = HsaLibrary::load().unwrap_err();
    assert_eq!(err.attempts.len(), 1, "{err}");
    assert_eq!(err.attempts[0].source, CandidateSource::Environment);
    assert_eq!(err.attempts[0].path, bogus);
    let text = err.to_string();
    assert!(text.contains(&format!("{LIBRARY_ENV}={bogus}: ")), "{text}");
    assert!(text.contains("No such file"), "{text}");

    // Empty counts as unset.
    std::env::set_var(LIBRARY_ENV, "");
    let lib = HsaLibrary::load().expect("defaults");
    assert_eq!(lib.source(), CandidateSource::Default);
    std::env::remove_var(LIBRARY_ENV);
}
