//! Kernels as untrusted code inside the user's process: HIP programs
//! (`tests/hip_programs/bounds/*.hip`, built by its `build.sh` at -O2 against librocload.so)
//! whose kernels take too much scratch, never end, or access memory past their segments, run
//! on the software agent. The process must stay within its memory, end every wait, report
//! every fault and go on.
//!
//! Needs clang-19, lld-19, libamdhip64-dev and rocm-device-libs: skipped with a message when
//! missing, failing when env CI is set.

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// Longest a program may run: every case here ends in seconds, or the bound it tests failed.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Builds every program once per test binary; `None` when the toolchain is missing outside CI.
fn programs() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            common::llvm_tool("clang++")?;
            let lib = common::built("librocload.so");
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hip_programs_bounds");
            let script =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hip_programs/bounds/build.sh");
            let result = Command::new("bash")
                .arg(&script)
                .arg(&out)
                .arg(lib.parent().expect("target dir"))
                .output()
                .expect("run build.sh");
            if result.status.code() == Some(3) && std::env::var_os("CI").is_none() {
                eprintln!(
                    "skipped: {}",
                    String::from_utf8_lossy(&result.stderr).trim()
                );
                return None;
            }
            assert!(
                result.status.success(),
                "build.sh failed:\n{}",
                String::from_utf8_lossy(&result.stderr)
            );
            Some(out)
        })
        .as_deref()
}

/// How a program ended.
struct Outcome {
    success: bool,
    elapsed: Duration,
    stdout: String,
    stderr: String,
}

impl Outcome {
    fn passed(&self, what: &str) -> bool {
        self.success && self.stdout.lines().any(|l| l == format!("PASS {what}"))
    }

    /// The `message ...` lines: rocload_last_error_message after each failure.
    fn messages(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix("message "))
            .collect()
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit ok={}\nstdout:\n{}\nstderr:\n{}",
            self.success, self.stdout, self.stderr
        )
    }
}

/// Runs `program mode` with `env` (no other ROCLOAD_* variable), at most `data_limit` bytes of
/// data (RLIMIT_DATA: heap and private writable mappings), within [`TIMEOUT`].
fn run(name: &str, mode: &str, env: &[(&str, &str)], data_limit: Option<u64>) -> Option<Outcome> {
    let program = programs()?.join(name);
    let mut cmd = Command::new(&program);
    cmd.arg(mode);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("ROCLOAD_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("ROCLOAD_BACKEND", "soft");
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(limit) = data_limit {
        // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else between
        // fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let l = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_DATA, &l) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let out = common::run_with_deadline(&mut cmd, TIMEOUT);
    assert!(
        !out.timed_out,
        "{name} {mode} ran longer than {TIMEOUT:?}\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    Some(Outcome {
        success: out.success,
        elapsed: out.elapsed,
        stdout: out.stdout,
        stderr: out.stderr,
    })
}

/// 128 work-groups of 16 MiB of scratch each, whose waves sleep (so the scheduler would keep
/// them all resident: 2 GiB): with a 256 MiB budget the program completes, correct, under a
/// 1 GiB data limit.
#[test]
fn scratch_stays_within_its_budget() {
    let Some(o) = run(
        "scratch",
        "many",
        &[("ROCLOAD_SCRATCH_BUDGET", "256M")],
        Some(1 << 30),
    ) else {
        return;
    };
    assert!(o.passed("many"), "{o}");
}

/// One work-group needing more scratch than the whole budget: `hipLaunchKernel` returns
/// `hipErrorOutOfMemory` and nothing is left sticky.
#[test]
fn a_work_group_larger_than_the_scratch_budget_is_refused_at_launch() {
    let Some(o) = run(
        "scratch",
        "oversized",
        &[("ROCLOAD_SCRATCH_BUDGET", "8M")],
        None,
    ) else {
        return;
    };
    assert!(o.passed("oversized"), "{o}");
}

/// What a timeout report must say: the kernel, the watchdog, a wave with its work-group and a
/// real PC with its instruction.
fn names_the_stuck_wave(message: &str) {
    assert!(message.contains("kernel _Z4spinPVi"), "{message}");
    assert!(message.contains("stopped by the watchdog"), "{message}");
    assert!(message.contains("of work-group ("), "{message}");
    let pc = message
        .split("was at pc ")
        .nth(1)
        .unwrap_or_else(|| panic!("no pc: {message}"));
    assert!(!pc.starts_with("0x0 "), "{message}");
    assert!(
        pc.contains(" `") && pc.ends_with('`'),
        "no instruction: {message}"
    );
}

/// `ROCLOAD_WATCHDOG=1`: a kernel that never ends is stopped after a second with
/// hipErrorLaunchTimeOut naming the kernel and a wave, and the program goes on.
#[test]
fn the_watchdog_stops_a_kernel_that_never_ends() {
    let Some(o) = run("watchdog", "env", &[("ROCLOAD_WATCHDOG", "1")], None) else {
        return;
    };
    assert!(o.passed("env"), "{o}");
    assert!(o.elapsed < Duration::from_secs(30), "{:?}\n{o}", o.elapsed);
    let m = o.messages();
    assert_eq!(m.len(), 1, "{o}");
    names_the_stuck_wave(m[0]);
}

/// `rocload_set_watchdog(0.5)` applies to the next dispatch; a negative value is refused.
#[test]
fn rocload_set_watchdog_applies_to_later_dispatches() {
    let Some(o) = run("watchdog", "api", &[], None) else {
        return;
    };
    assert!(o.passed("api"), "{o}");
    assert!(o.elapsed < Duration::from_secs(30), "{:?}\n{o}", o.elapsed);
    names_the_stuck_wave(o.messages()[0]);
}

/// The largest grids HIP allows never report success: (2^32-1)^2 work-groups time out with the
/// count right, (2^32-1)^3 (more than 2^64) are refused; the program goes on after each.
#[test]
fn huge_grids_never_wrap() {
    let Some(o) = run("watchdog", "huge", &[], None) else {
        return;
    };
    assert!(o.passed("huge"), "{o}");
    let m = o.messages();
    assert_eq!(m.len(), 2, "{o}");
    assert!(
        m[0].contains("of 18446744065119617025 work-groups done"),
        "{}",
        m[0]
    );
    assert!(
        m[1].contains("4294967295 x 4294967295 x 4294967295 work-groups"),
        "{}",
        m[1]
    );
}

/// Lines of `stderr` that are fault reports: ROCr's line and rocload's details.
fn reports(stderr: &str) -> (Vec<&str>, Vec<&str>) {
    (
        stderr
            .lines()
            .filter(|l| l.starts_with("Memory access fault by GPU"))
            .collect(),
        stderr
            .lines()
            .filter(|l| l.starts_with("rocload: "))
            .collect(),
    )
}

/// A global store far past its buffer, an LDS store past the group segment and a private store
/// past the private segment, each by lane 5 of wave 1 of work-group 0: each is reported once on
/// stderr (ROCr's line, then the kernel, PC, instruction, lane and wave, and for global memory
/// the allocation), the program gets hipErrorIllegalAddress (sticky), and
/// `ROCLOAD_FAULT_REPORTS=0` prints nothing.
#[test]
fn every_fault_is_reported_once_with_the_lane_that_made_it() {
    for (mode, kernel, what) in [
        ("global", "_Z15global_past_endPiii", "memory fault"),
        ("lds", "_Z12lds_past_endPiii", "LDS fault"),
        ("scratch", "_Z16scratch_past_endPiii", "scratch fault"),
    ] {
        let Some(o) = run("faults", mode, &[], None) else {
            return;
        };
        assert!(o.passed(mode), "{o}");
        let (rocr, ours) = reports(&o.stderr);
        assert_eq!((rocr.len(), ours.len()), (1, 1), "{mode}: {o}");
        assert!(
            rocr[0].starts_with("Memory access fault by GPU node-1 (Agent handle: 0x"),
            "{mode}: {}",
            rocr[0]
        );
        let detail = ours[0];
        assert!(
            detail.contains(&format!("kernel {kernel}: {what} at pc 0x")),
            "{detail}"
        );
        assert!(
            detail.contains("(lane 5 of wave 1 of work-group (0, 0, 0), instruction `"),
            "{detail}"
        );
        if mode == "global" {
            // The address the lane wrote, and the nearest allocation.
            let buffer = o
                .stdout
                .lines()
                .find_map(|l| l.strip_prefix("buffer "))
                .and_then(|b| u64::from_str_radix(b.trim_start_matches("0x"), 16).ok())
                .expect("the program prints its buffer");
            let address = buffer + 4 * (128 + 100_000);
            assert!(
                rocr[0].contains(&format!("on address {address:#x}. Reason: ")),
                "{}",
                rocr[0]
            );
            assert!(
                detail.contains(&format!("write of 4 bytes at {address:#x}: "))
                    && detail.contains("allocation #"),
                "{detail}"
            );
        }

        let Some(quiet) = run("faults", mode, &[("ROCLOAD_FAULT_REPORTS", "0")], None) else {
            return;
        };
        assert!(quiet.passed(mode), "{quiet}");
        assert_eq!(reports(&quiet.stderr), (vec![], vec![]), "{quiet}");
    }
}
