//! Ordinary HIP programs (`tests/hip_programs/emu/*.hip`: `hipMalloc`, `<<<>>>`, `hipMemcpy`,
//! streams, events, device printf, graphs and stream capture, ...), compiled by clang-19 at -O0, -O2 and -O3, linked
//! against librocload.so and run on the software agent. Each program computes the same thing
//! on the host and prints `PASS name` or `FAIL name: ...`; this test requires a clean exit,
//! at least one PASS and no FAIL. The printf programs' device lines must equal what the
//! host's printf prints for the same values, and `printf_hostile`'s hostile formats must print
//! the runtime's markers; a `SKIP` line (what ROCr's API cannot offer) is allowed only on the
//! HSA run. The -O2 build runs a second time through the ROCr
//! backend against the software HSA library (`ROCLOAD_BACKEND=hsa`, `libhsa_soft.so`): the same
//! dispatch path, HSA queues, pools, signals and the hostcall listener. The `cdna_*` tests run
//! the same programs built for gfx90a and gfx942 on software agents of those processors
//! (`ROCLOAD_SOFT_ISA`, wave64) at every level; `ROCLOAD_TEST_CDNA_FULL=1` adds the ROCr
//! backend and the xnack/sramecc variants.
//!
//! Needs clang-19, lld-19, libamdhip64-dev and rocm-device-libs: skipped with a message when
//! missing, failing when env CI is set.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// Longest a program may run (the -O0 builds are the slow ones).
const TIMEOUT: Duration = Duration::from_secs(600);

fn lib_dir() -> PathBuf {
    let lib = common::built("librocload.so");
    lib.parent().expect("target dir").to_path_buf()
}

/// Builds every program once per test binary; `None` when the toolchain is missing outside CI.
fn programs() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            common::llvm_tool("clang++")?;
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hip_programs_emu");
            let script =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hip_programs/emu/build.sh");
            let result = Command::new("bash")
                .arg(&script)
                .arg(&out)
                .arg(lib_dir())
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

/// Runs `program` with a deadline; returns its exit success, stdout and stderr.
fn run(program: &Path, env: &[(&str, String)]) -> (bool, String, String) {
    let mut cmd = Command::new(program);
    cmd.env_remove("ROCLOAD_SOFT_ISA")
        .env_remove("ROCLOAD_BACKEND")
        .env_remove("ROCLOAD_HSA_LIBRARY")
        .env_remove("ROCLOAD_LOADING");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = common::run_with_deadline(&mut cmd, TIMEOUT);
    assert!(
        !out.timed_out,
        "{} ran longer than {TIMEOUT:?}\nstdout:\n{}\nstderr:\n{}",
        program.display(),
        out.stdout,
        out.stderr
    );
    (out.success, out.stdout, out.stderr)
}

/// The software HSA library's environment (the ROCr backend).
fn hsa_env() -> Vec<(&'static str, String)> {
    vec![
        ("ROCLOAD_BACKEND", "hsa".to_owned()),
        (
            "ROCLOAD_HSA_LIBRARY",
            common::built("libhsa_soft.so").display().to_string(),
        ),
    ]
}

/// Runs `name` at every optimisation level and checks its own verdicts.
fn check(name: &str) {
    let Some(dir) = programs() else { return };
    let hsa = hsa_env();
    let runs: [(&str, &[(&str, String)]); 4] =
        [("O0", &[]), ("O2", &[]), ("O3", &[]), ("O2", &hsa)];
    for (opt, env) in runs {
        let program = dir.join(format!("{name}.{opt}"));
        let (ok, stdout, stderr) = run(&program, env);
        let opt = if env.is_empty() {
            opt.to_owned()
        } else {
            format!("{opt} through the software HSA library")
        };
        judge(name, &opt, ok, &stdout, &stderr, !env.is_empty());
    }
}

/// The programs built for CDNA (gfx90a and gfx942 in each fat binary; wave64), once per test
/// binary; `None` when the toolchain is missing outside CI.
fn cdna_programs() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            common::llvm_tool("clang++")?;
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hip_programs_cdna");
            let script =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hip_programs/emu/build.sh");
            // The programs, then the matrix-instruction program of its own directory.
            let mfma = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hip_programs/mfma");
            for sources in [None, Some(&mfma)] {
                let mut cmd = Command::new("bash");
                cmd.arg(&script)
                    .arg(&out)
                    .arg(lib_dir())
                    .args(["gfx90a", "gfx942"]);
                if let Some(dir) = sources {
                    cmd.env("HIP_SOURCES", dir);
                }
                let result = cmd.output().expect("run build.sh");
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
            }
            Some(out)
        })
        .as_deref()
}

/// Whether the long CDNA matrix was asked for (`ROCLOAD_TEST_CDNA_FULL=1`): the ROCr backend
/// and the xnack/sramecc variants besides the levels on both processors.
fn cdna_full() -> bool {
    std::env::var_os("ROCLOAD_TEST_CDNA_FULL").is_some_and(|v| v != "0")
}

/// Runs `name` built for CDNA on software agents of gfx90a and gfx942 (wave64, AGPRs) at every
/// optimisation level and checks its own verdicts as [`check`] does; with [`cdna_full`] also
/// at -O2 through the software HSA library and on the processors' xnack/sramecc variants.
fn check_cdna(name: &str) {
    let Some(dir) = cdna_programs() else { return };
    // hiprtc compiles for the agent's processor: build.sh's device libraries have gfx942's.
    let libs = (
        "ROCLOAD_DEVICE_LIB_PATH",
        dir.join("device-libs").display().to_string(),
    );
    let mut runs: Vec<(&str, Vec<(&str, String)>)> = Vec::new();
    for isa in ["gfx90a", "gfx942"] {
        for opt in ["O0", "O2", "O3"] {
            runs.push((
                opt,
                vec![("ROCLOAD_SOFT_ISA", isa.to_owned()), libs.clone()],
            ));
        }
        if cdna_full() {
            let mut hsa = hsa_env();
            hsa.extend([("ROCLOAD_SOFT_ISA", isa.to_owned()), libs.clone()]);
            if name == "vmm_ipc" {
                // The ROCr backend has no virtual memory management (as on gfx1030).
                hsa.push(("VMM_EXPECT_UNSUPPORTED", "1".to_owned()));
            }
            runs.push(("O2", hsa));
        }
    }
    if cdna_full() {
        for variant in ["gfx90a:xnack+", "gfx942:sramecc+:xnack-"] {
            runs.push((
                "O2",
                vec![("ROCLOAD_SOFT_ISA", variant.to_owned()), libs.clone()],
            ));
        }
    }
    for (opt, env) in &runs {
        let program = dir.join(format!("{name}.{opt}"));
        let (ok, stdout, stderr) = run(&program, env);
        let label = format!(
            "{opt} on {}",
            env.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let through_hsa = env.iter().any(|(k, _)| *k == "ROCLOAD_BACKEND");
        judge(name, &label, ok, &stdout, &stderr, through_hsa);
    }
}

/// Checks one run's verdicts: a clean exit and no FAIL; printf programs' device lines equal
/// the host's (and the hostile formats' markers), the others print a PASS. A program says
/// "SKIP name: why" for what ROCr's API cannot do (an arbitrary texture border colour):
/// allowed only when `through_hsa` (the run went through an HSA library).
fn judge(name: &str, opt: &str, ok: bool, stdout: &str, stderr: &str, through_hsa: bool) {
    let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(
        ok && failures.is_empty(),
        "{name}.{opt}: exit ok={ok}, failures {failures:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let skipped: Vec<&str> = stdout.lines().filter(|l| l.starts_with("SKIP")).collect();
    assert!(
        skipped.is_empty() || through_hsa,
        "{name}.{opt}: skipped on the software agent: {skipped:?}"
    );
    if name.starts_with("printf") {
        let mut device: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("printf "))
            .collect();
        let mut host: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("expect "))
            .collect();
        device.sort();
        host.sort();
        assert!(!host.is_empty(), "{name}.{opt}: no host lines\n{stdout}");
        assert_eq!(
            device, host,
            "{name}.{opt}: device printf differs from the host's"
        );
        if name == "printf_hostile" {
            let mut hostile: Vec<&str> = stdout
                .lines()
                .filter(|l| l.starts_with("hostile "))
                .collect();
            hostile.sort();
            let mut want = HOSTILE_LINES.to_vec();
            want.sort();
            assert_eq!(
                hostile, want,
                "{name}.{opt}: hostile formats not refused as documented\nstdout:\n{stdout}"
            );
        }
    } else {
        assert!(
            stdout.lines().any(|l| l.starts_with("PASS")),
            "{name}.{opt}: no PASS line\n{stdout}"
        );
    }
}

/// Kernels that jump into data, kernarg memory or a descriptor, or write their own code or
/// descriptor, end in hipErrorIllegalAddress, and the code stays as it was loaded.
#[test]
fn hostile_kernels_execute_only_code_and_never_write_it() {
    check("hostile_memory");
}

#[test]
fn calls_and_recursion() {
    check("calls");
}

#[test]
fn three_dimensional_grids() {
    check("grid3d");
}

#[test]
fn histogram_with_atomics_and_narrow_stores() {
    check("histogram");
}

#[test]
fn sixty_four_bit_integers() {
    check("int64");
}

#[test]
fn math_within_hips_ulp_bounds() {
    check("math");
}

#[test]
fn matrix_multiply() {
    check("matmul");
}

#[test]
fn device_printf() {
    check("printf");
}

/// What `printf_hostile.hip`'s hostile formats print: each conversion the host cannot honour
/// is replaced by the marker documented in `src/runtime/printf.rs` (arguments: -1234567890123,
/// 3.25, 77).
const HOSTILE_LINES: &[&str] = &[
    "hostile 1 %<unsupported: %3$s>|",
    "hostile 2 %<unsupported: %8$s>|",
    "hostile 3 %<unsupported: %2$p>|",
    "hostile 4 %<unsupported: %***d>|",
    "hostile 5 %<unsupported: %Lf>|",
    "hostile 6 %<unsupported: %m>|",
    "hostile 7 %<unsupported: %S>|",
    "hostile 8 %<unsupported: %n>|",
    "hostile 9 %<unsupported: %99999999d>|",
    "hostile 10 -1234567890123 3.250000 77 %<missing argument: %d> %<missing argument: %s>|",
    "hostile 11 %<unsupported: %C>|",
    "hostile 12 %<unsupported: %.99999999f>|",
    "hostile L1 %<unsupported: %3$s>|",
    "hostile L2 %<unsupported: %n>|",
    "hostile L3 %<unsupported: %2$p>|",
    "hostile L4 5 %<missing argument: %d>|",
    "hostile T %<unsupported: %>",
];

/// Device printf with format strings that ask the host for what was never passed: the program
/// survives, prints the markers, and its legitimate lines equal the host's printf.
#[test]
fn device_printf_with_hostile_formats() {
    check("printf_hostile");
}

/// The messages `printf_hostile.hip`'s `never_ended` kernel opens (64 threads x 20) are
/// dropped when its dispatch ends, as the runtime's debug log says.
#[test]
fn device_printf_messages_never_ended_are_dropped() {
    let Some(dir) = programs() else { return };
    let log = [("ROCLOAD_LOG", "rocload::runtime::hostcall=debug".to_owned())];
    let (ok, stdout, stderr) = run(&dir.join("printf_hostile.O2"), &log);
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let drops: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("messages opened and never ended dropped"))
        .collect();
    assert_eq!(
        drops.len(),
        1,
        "one dispatch left messages open\nstderr:\n{stderr}"
    );
    assert!(drops[0].contains("dropped=1280"), "{}", drops[0]);
}

#[test]
fn reductions_shuffles_and_atomics() {
    check("reduce");
}

#[test]
fn scans_with_spinning_work_groups() {
    check("scan");
}

#[test]
fn the_runtime_api() {
    check("runtime_api");
}

#[test]
fn runtime_compilation_with_hiprtc() {
    check("rtc");
}

/// Coherent memory seen by a running kernel and by the host while it runs (pinned, managed,
/// fine-grained), and `clockRate` as the rate `clock64()` counts at.
#[test]
fn coherent_memory_and_the_device_clock() {
    check("coherent_flags");
}

/// Device memory is a budget (`ROCLOAD_DEVICE_MEMORY`) every device, managed, array and VMM
/// allocation counts against: hipMemGetInfo's figures, refusals, and bytes given back.
#[test]
fn device_memory_is_a_budget() {
    check("memory_budget");
}

#[test]
fn cooperative_grid_sync() {
    check("cooperative");
}

/// An explicit graph with every node kind, its queries, parameters, clone, update and errors
/// (issue #22).
#[test]
fn graphs_built_explicitly() {
    check("graph_nodes");
}

/// The same computation captured from forked and joined streams, and capture misuse with
/// HIP's codes (issue #22).
#[test]
fn graphs_captured_from_streams() {
    check("graph_capture");
}

/// A graph launched 1,000 times with its kernel's parameters changed between launches.
#[test]
fn graphs_replayed_with_new_parameters() {
    check("graph_replay");
}

/// Diamonds and fans of dependencies whose branches run on several queues, in order.
#[test]
fn graph_dependencies_keep_their_order() {
    check("graph_diamond");
}

/// Pitched and 3D memory and HIP arrays: every copy and fill checked against a host model,
/// kernels reading the pitched and 3D data, and bad regions and handles refused.
#[test]
fn arrays_pitched_and_3d_memory() {
    check("arrays");
}

/// Textures and surfaces (`textures.hip`): texture objects over 1D, 2D, 3D, layered and
/// mipmapped arrays and linear memory, every address mode, point and linear filtering,
/// normalised coordinates, a texture reference and an object over one array, a surface
/// written and read back; each fetch against a host model of the same addressing and
/// fixed-point filtering.
#[test]
fn textures_and_surfaces() {
    check("textures");
}

/// Stream-ordered allocation (`mempool.hip`): two streams with kernels, a pool of the
/// program's own, reuse through stream order and events, the pool's accounting; a kernel that
/// writes after `hipFreeAsync` faults and the memory checker reports it as it reports a write
/// after `hipFree`: a use after free naming the allocation the program freed.
#[test]
fn stream_ordered_allocation() {
    check("mempool");
    let Some(dir) = programs() else { return };
    let (ok, stdout, stderr) = run(&dir.join("mempool.O2"), &[]);
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    for what in ["hipFree", "hipFreeAsync"] {
        let prefix = format!("freed {what} ");
        let address = stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("no `{prefix}` line\nstdout:\n{stdout}"));
        let reports: Vec<&str> = stderr
            .lines()
            .filter(|l| {
                l.contains("use after free of allocation")
                    && l.contains(&format!("bytes at {address})"))
            })
            .collect();
        assert_eq!(
            reports.len(),
            1,
            "one report of the write after {what} to {address}\nstderr:\n{stderr}"
        );
        assert!(
            reports[0].starts_with("rocload: kernel ") && reports[0].contains("touch"),
            "{}",
            reports[0]
        );
    }
}

/// hipDeviceReset as clr's `hip::Device::Reset` (`device_reset.hip`): the device's memory is
/// freed (hipPointerGetAttributes, hipMemcpy and hipFree refuse it; a kernel touching it is the
/// memory checker's use-after-free report naming the allocation), its streams and pools are
/// destroyed (their handles invalid), its flags reset, events survive, new memory and streams
/// work; pinned host memory goes too with one device only. With two software devices,
/// resetting device 0 leaves device 1's memory (contents included) and stream working.
#[test]
fn device_reset_frees_the_devices_memory_streams_and_pools() {
    check("device_reset");
    let Some(dir) = programs() else { return };
    let (ok, stdout, stderr) = run(&dir.join("device_reset.O2"), &[]);
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let address = stdout
        .lines()
        .find_map(|l| l.strip_prefix("freed "))
        .unwrap_or_else(|| panic!("no `freed` line\nstdout:\n{stdout}"));
    let reports: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            l.starts_with("rocload: kernel ")
                && l.contains("touch")
                && l.contains("use after free of allocation")
                && l.contains(&format!("bytes at {address})"))
        })
        .collect();
    assert_eq!(
        reports.len(),
        1,
        "one use-after-free report of the memory the reset freed, at {address}\nstderr:\n{stderr}"
    );
    let env = [("ROCLOAD_SOFT_ISA", "gfx1030,gfx1030".to_owned())];
    for opt in ["O0", "O2"] {
        let (ok, stdout, stderr) = run(&dir.join(format!("device_reset.{opt}")), &env);
        let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
        assert!(
            ok && failures.is_empty()
                && stdout.contains("2 device(s)")
                && stdout.contains("PASS device 1's memory keeps its contents"),
            "device_reset.{opt} with two devices: exit ok={ok}, failures {failures:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
}

/// hipDeviceSynchronize waits for non-blocking streams, and hipMemcpyAsync to or from
/// pageable host memory is done when it returns (200 rounds of each).
#[test]
fn synchronisation_synchronises() {
    check("sync");
}

/// Threads launch faulting kernels and check their own stream's and event's result while
/// another thread resets the device: every accepted launch's failure is reported.
#[test]
fn a_failed_launch_is_reported_by_its_stream_and_event_across_resets() {
    check("lost_failures");
}

/// A kernel of one module keeps storing into another module's global while the host unloads
/// that module: no crash; the stores land before the unload or fault (hipErrorIllegalAddress).
/// Also with every lane's access checked, where the race is between the check and the store.
#[test]
fn unloading_a_module_whose_global_a_running_kernel_stores_to() {
    check("unload_race");
    let Some(dir) = programs() else { return };
    let every = [("ROCLOAD_MEMCHECK", "every-access".to_owned())];
    let (ok, stdout, stderr) = run(&dir.join("unload_race.O2"), &every);
    assert!(
        ok && stdout.contains("PASS") && !stdout.contains("FAIL"),
        "unload_race.O2 with every access checked: exit ok={ok}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// Unmapped, PROT_NONE, read-only and wrapping host ranges, fills and copies of memory no
/// device knows, symbol offsets: HIP errors at the call, never a crash of the host.
#[test]
fn calls_check_their_pointers_before_touching_memory() {
    check("bad_pointers");
}

/// hipStreamWaitValue32/64 and hipStreamWriteValue32/64: a stream held until another
/// stream's kernel, another stream's write or the host sets a flag; every condition and mask
/// against the host's reading of HIP's definition; refusals.
#[test]
fn stream_memory_operations() {
    check("stream_values");
}

/// HIP 6 and 7's later entry points, called with their 6/7 structures by a program announcing
/// generation 7: graph memory nodes (explicit, captured from hipMallocAsync/hipFreeAsync, a
/// relaunch refused until the memory is freed), hipDrvGraph copy and fill nodes over HIP 6's
/// HIP_MEMCPY3D, external-semaphore nodes, hipStreamBatchMemOp and its node, array copies, 2D
/// element fills, peer and batched copies, the _v2 hints, hipMemGetHandleForAddressRange's
/// refusal and hipModuleLaunchCooperativeKernelMultiDevice, each against the host.
#[test]
fn hip6_and_hip7_graph_nodes_and_memory_calls() {
    check("hip67");
}

/// HIP 5.2's tracing interface (roctracer 5.2's API, activity and operation callbacks): what
/// each callback is told against the calls the program made.
#[test]
fn hip_5_2_api_and_activity_callbacks() {
    check("tracing");
}

/// HIP 5.3+'s tracer (hipRegisterTracerCallback) in the API domain, with the records of HIP 5
/// and then HIP 6 programs: enter then exit of hipMalloc, hipMemcpy, hipLaunchKernel and
/// hipFree with one correlation id each, ids hipApiName names as the call, the arguments at
/// the offsets of the layouts the program declares, and the dispatch record carrying the
/// launch's correlation id.
#[test]
fn hip_5_3_tracer_api_domain() {
    check("tracer_api");
}

/// Two software agents as two GPUs of one node: kernels and memory on each, peer copies,
/// memory allocated under one device used and freed under the other, links, and both
/// multi-device launches (the cooperative one syncing grids across devices). Not through
/// libhsa_soft.so: link information is not read from ROCr.
#[test]
fn several_devices_and_multi_device_launches() {
    let Some(dir) = programs() else { return };
    let env = [("ROCLOAD_SOFT_ISA", "gfx1030,gfx1030".to_owned())];
    for opt in ["O0", "O2", "O3"] {
        let (ok, stdout, stderr) = run(&dir.join(format!("multi_device.{opt}")), &env);
        let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
        assert!(
            ok && failures.is_empty() && stdout.contains("PASS"),
            "multi_device.{opt}: exit ok={ok}, failures {failures:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
}

/// HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES, set by forked children
/// before their first HIP call: with one device (every build, and through libhsa_soft.so) and
/// with two.
#[test]
fn visible_device_lists() {
    check("visible_devices");
    let Some(dir) = programs() else { return };
    let env = [("ROCLOAD_SOFT_ISA", "gfx1030,gfx1030".to_owned())];
    let (ok, stdout, stderr) = run(&dir.join("visible_devices.O2"), &env);
    let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(
        ok && failures.is_empty() && stdout.contains("HIP_VISIBLE_DEVICES=1,0"),
        "visible_devices.O2 with two devices: exit ok={ok}, failures {failures:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// Eight threads for six seconds: correct kernels checked against the host, faulting
/// kernels, module load/launch/unload, fat-binary registration/launch/unregistration and
/// device resets; no crash, no unexpected status, the resident set bounded.
#[test]
fn soak_of_eight_threads() {
    check("soak");
}

#[test]
fn the_per_thread_default_stream() {
    check("per_thread");
    // Built with -fgpu-default-stream=per-thread, the program calls the `_spt` entry points.
    let Some(dir) = programs() else { return };
    let bytes = std::fs::read(dir.join("per_thread.O2")).expect("read per_thread.O2");
    let file = object::File::parse(&*bytes).expect("an ELF executable");
    use object::{Object, ObjectSymbol};
    let imports: Vec<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_undefined())
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .collect();
    for name in [
        "hipLaunchKernel_spt",
        "hipMemcpy_spt",
        "hipStreamSynchronize_spt",
        "hipMemcpy2D_spt",
        "hipMemset2D_spt",
        "hipMemcpy3D_spt",
        "hipMemset3D_spt",
        "hipMemcpy2DToArray_spt",
        "hipMemcpy2DFromArray_spt",
        "hipMemcpy3DAsync_spt",
        "hipMemset3DAsync_spt",
    ] {
        assert!(
            imports.iter().any(|i| i == name),
            "{name} not in {imports:?}"
        );
    }
}

#[test]
fn memory_hints_pointer_attributes_and_allocation_flags() {
    check("memory_attributes");
}

/// Virtual memory management and IPC: one allocation mapped at two addresses and read-only at
/// a third, kernels over them checked against the host; a child process (the program run
/// again) opens the parent's hipMalloc memory and interprocess event from their handles and
/// imports its exported VMM allocation, and the parent, waiting on the event alone, sees the
/// child's kernel's writes; after hipMemUnmap a kernel reading the old address faults, reported
/// on stderr with the unmapped range, and the program goes on. With two software agents, a
/// mapping accessible to device 1 alone is filled by a kernel there. Through the software HSA
/// library following ROCr 6.2 (`hsa_amd_vmem_*`, `hsa_amd_ipc_memory_*`), the whole program
/// runs on rocload's HSA backend, with one agent and with two; following 5.2.3 (the default,
/// no virtual memory API), the VMM calls must say they are not supported and an IPC handle
/// must be made (`hsa_amd_ipc_memory_create`).
#[test]
fn vmm_and_ipc_between_two_processes() {
    let Some(dir) = programs() else { return };
    for opt in ["O0", "O2", "O3"] {
        let (ok, stdout, stderr) = run(&dir.join(format!("vmm_ipc.{opt}")), &[]);
        let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
        assert!(
            ok && failures.is_empty() && stdout.contains("PASS the child exited cleanly"),
            "vmm_ipc.{opt}: exit ok={ok}, failures {failures:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert!(
            stdout.contains("PASS child:"),
            "vmm_ipc.{opt}: the child reported nothing\nstdout:\n{stdout}"
        );
        assert!(
            stderr.contains("Memory access fault by GPU")
                && stderr.contains("use after free of allocation")
                && stderr.contains("mapped device memory"),
            "vmm_ipc.{opt}: the fault after hipMemUnmap was not reported with the mapping\nstderr:\n{stderr}"
        );
    }
    // Two software agents: access given to device 1 alone, a kernel there.
    let two = [("ROCLOAD_SOFT_ISA", "gfx1030,gfx1030".to_owned())];
    let (ok, stdout, stderr) = run(&dir.join("vmm_ipc.O2"), &two);
    assert!(
        ok && !stdout.contains("FAIL") && stdout.matches("PASS two devices:").count() == 3,
        "vmm_ipc.O2 with two devices: exit ok={ok}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let library = common::built("libhsa_soft.so").display().to_string();
    let rocr_6_2 = |isa: &str| {
        [
            ("ROCLOAD_BACKEND", "hsa".to_owned()),
            ("ROCLOAD_HSA_LIBRARY", library.clone()),
            ("ROCLOAD_SOFT_ROCR_VERSION", "6.2".to_owned()),
            ("ROCLOAD_SOFT_ISA", isa.to_owned()),
        ]
    };
    let (ok, stdout, stderr) = run(&dir.join("vmm_ipc.O2"), &rocr_6_2("gfx1030"));
    for want in [
        "PASS child:",
        "PASS reservation aligned as asked",
        "PASS a kernel's writes through one view are read through the other",
        "PASS the child's kernel wrote the parent's exported VMM allocation",
        "PASS a kernel reading unmapped memory faults",
        "PASS the child exited cleanly",
    ] {
        assert!(
            ok && !stdout.contains("FAIL") && stdout.contains(want),
            "vmm_ipc.O2 through the software HSA library (ROCr 6.2): {want:?} missing, exit ok={ok}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
    let (ok, stdout, stderr) = run(&dir.join("vmm_ipc.O2"), &rocr_6_2("gfx1030,gfx1030"));
    assert!(
        ok && !stdout.contains("FAIL") && stdout.matches("PASS two devices:").count() == 3,
        "vmm_ipc.O2 with two devices through the software HSA library (ROCr 6.2): exit ok={ok}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let hsa = [
        ("ROCLOAD_BACKEND", "hsa".to_owned()),
        ("ROCLOAD_HSA_LIBRARY", library.clone()),
        ("VMM_EXPECT_UNSUPPORTED", "1".to_owned()),
    ];
    let (ok, stdout, stderr) = run(&dir.join("vmm_ipc.O2"), &hsa);
    assert!(
        ok && !stdout.contains("FAIL") && stdout.matches("PASS").count() == 3,
        "vmm_ipc.O2 through the software HSA library (ROCr 5.2.3): exit ok={ok}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// The programs built for CDNA2 and CDNA3 and run on software agents of gfx90a and gfx942
/// (wave64, AGPRs, packed work-item ids, gfx942's flat scratch): each passes as it does on
/// gfx1030 (issue #24).
macro_rules! cdna {
    ($($test:ident => $name:literal;)*) => {
        $(
            #[test]
            fn $test() {
                check_cdna($name);
            }
        )*
    };
}

cdna! {
    cdna_arrays => "arrays";
    cdna_bad_pointers => "bad_pointers";
    cdna_calls => "calls";
    cdna_cooperative => "cooperative";
    cdna_graph_capture => "graph_capture";
    cdna_graph_diamond => "graph_diamond";
    cdna_graph_nodes => "graph_nodes";
    cdna_graph_replay => "graph_replay";
    cdna_grid3d => "grid3d";
    cdna_histogram => "histogram";
    cdna_hostile_memory => "hostile_memory";
    cdna_int64 => "int64";
    cdna_lost_failures => "lost_failures";
    cdna_math => "math";
    cdna_matmul => "matmul";
    cdna_memory_attributes => "memory_attributes";
    cdna_mempool => "mempool";
    cdna_per_thread => "per_thread";
    cdna_printf => "printf";
    cdna_printf_hostile => "printf_hostile";
    cdna_reduce => "reduce";
    cdna_rtc => "rtc";
    cdna_runtime_api => "runtime_api";
    cdna_scan => "scan";
    cdna_soak => "soak";
    cdna_stream_values => "stream_values";
    cdna_sync => "sync";
    cdna_unload_race => "unload_race";
    cdna_vmm_ipc => "vmm_ipc";
}

/// Two CDNA software agents as two GPUs of one node (as [`several_devices_and_multi_device_launches`]).
#[test]
fn cdna_several_devices() {
    let Some(dir) = cdna_programs() else { return };
    for isa in ["gfx90a,gfx90a", "gfx942,gfx942"] {
        let env = [("ROCLOAD_SOFT_ISA", isa.to_owned())];
        for opt in ["O0", "O2", "O3"] {
            let (ok, stdout, stderr) = run(&dir.join(format!("multi_device.{opt}")), &env);
            judge(
                "multi_device",
                &format!("{opt} on {isa}"),
                ok,
                &stdout,
                &stderr,
                false,
            );
        }
    }
}

/// Every matrix (MFMA) instruction form clang-19 emits for gfx90a (29 with the CBSZ/ABID and
/// BLGP variants) and gfx942 (35), through the compiler's builtins, each output element of
/// every block checked against the program's own host multiply (`tests/hip_programs/mfma`).
#[test]
fn cdna_matrix_instructions_against_host_multiplies() {
    let Some(dir) = cdna_programs() else { return };
    for (isa, forms) in [("gfx90a", 29), ("gfx942", 35)] {
        for opt in ["O0", "O2", "O3"] {
            let env = [("ROCLOAD_SOFT_ISA", isa.to_owned())];
            let (ok, stdout, stderr) = run(&dir.join(format!("mfma.{opt}")), &env);
            judge(
                "mfma",
                &format!("{opt} on {isa}"),
                ok,
                &stdout,
                &stderr,
                false,
            );
            let line = format!("{forms} instruction forms checked on {isa}");
            assert!(stdout.contains(&line), "mfma.{opt}: no `{line}`\n{stdout}");
        }
    }
}
