// A configured library path (ROCLOAD_HSA_LIBRARY, which rocload's configuration reads and
// passes down) overrides the default sonames and is never silently ignored.

mod common;

use hsa_sys::{CandidateSource, HsaLibrary, LIBRARY_ENV};

#[test]
fn the_configured_path_overrides_the_default_and_is_not_silently_ignored() {
    let Some(system) = common::system_library("env_override") else {
        return;
    };
    let real = system.file().expect("the mapped runtime file");

    // A real path: loaded from there.
    let lib = HsaLibrary::load(Some(real.as_os_str()))
        .expect("the runtime loads from the configured path");
    assert_eq!(lib.name(), real.to_str().expect("UTF-8 path"));
    assert_eq!(lib.source(), CandidateSource::Environment);
    assert!(lib.missing_backend_functions().is_empty());

    // A bogus path: a typed error naming the variable and the path; no fallback to the system
    // library, which would hide the mistake.
    let bogus = "/nonexistent/rocload-test/libhsa-runtime64.so.1";
    let err = HsaLibrary::load(Some(bogus.as_ref())).unwrap_err();
    assert_eq!(err.attempts.len(), 1, "{err}");
    assert_eq!(err.attempts[0].source, CandidateSource::Environment);
    assert_eq!(err.attempts[0].path, bogus);
    let text = err.to_string();
    assert!(text.contains(&format!("{LIBRARY_ENV}={bogus}: ")), "{text}");
    assert!(text.contains("No such file"), "{text}");

    // Empty counts as unset.
    let lib = HsaLibrary::load(Some("".as_ref())).expect("defaults");
    assert_eq!(lib.source(), CandidateSource::Default);
}
