// The committed bindings must be what scripts/gen-hsa-bindings.sh produces from the installed
// headers. Runs only where bindgen 0.73.2, libclang 19 and the ROCr 5.2.3 headers are present:
// the script exits with status 3 otherwise and this test is skipped with its message, in CI too
// (CI does not install bindgen-cli; building never needs it).

use std::path::Path;
use std::process::Command;

#[test]
fn committed_bindings_match_a_fresh_generation() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = crate_dir.join("../scripts/gen-hsa-bindings.sh");
    let out = tempfile::tempdir().expect("temp dir");
    let run = Command::new("bash")
        .arg(&script)
        .arg(out.path())
        .output()
        .expect("run bash");
    let stderr = String::from_utf8_lossy(&run.stderr);
    match run.status.code() {
        Some(0) => {}
        Some(3) => {
            eprintln!(
                "skipped: cannot regenerate the HSA bindings here: {}",
                stderr.trim()
            );
            return;
        }
        _ => panic!("gen-hsa-bindings.sh failed ({}): {stderr}", run.status),
    }
    for file in ["bindings.rs", "api.rs"] {
        let fresh = std::fs::read_to_string(out.path().join(file)).expect("generated file");
        let committed =
            std::fs::read_to_string(crate_dir.join("src").join(file)).expect("committed file");
        if fresh != committed {
            let line = fresh
                .lines()
                .zip(committed.lines())
                .position(|(a, b)| a != b)
                .map_or_else(
                    || {
                        format!(
                            "lengths differ: {} vs {} lines",
                            fresh.lines().count(),
                            committed.lines().count()
                        )
                    },
                    |i| format!("first difference at line {}", i + 1),
                );
            panic!(
                "hsa-sys/src/{file} is stale ({line}); run scripts/gen-hsa-bindings.sh and commit"
            );
        }
    }
}
