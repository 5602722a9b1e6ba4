//! The real test of the runtime: HIP programs written against Debian's real HIP headers,
//! compiled by clang-19 for host and device, linked against librocload.so (the capi crate's cdylib), run on the software agent.
//! Their static constructors register;
//! the programs print what the HIP calls answered, and this test checks every answer against
//! rocload's code-object layer reading the same code object, the HIP headers (error codes)
//! and the sources (initial values).
//!
//! Needs clang-19, lld-19, libamdhip64-dev and rocm-device-libs: skipped with a message when
//! missing, failing when env CI is set.
// Test code: every unsafe call passes pointers and buffers the test itself owns.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use rocload::code_object::CodeObject;
use rocload::container::{read_containers, ReadOptions};

/// The directory holding librocload.so (built by `cargo build --workspace`).
fn lib_dir() -> PathBuf {
    let lib = common::built("librocload.so");
    lib.parent().expect("target dir").to_path_buf()
}

/// Builds the programs once per test binary; `None` when the toolchain is missing outside CI.
fn programs() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            common::llvm_tool("clang++")?;
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hip_programs");
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hip_programs/build.sh");
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

/// Runs a built program with `env`, asserting success; returns stdout.
fn run(program: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_remove("ROCLOAD_LOADING")
        .env_remove("ROCLOAD_SOFT_ISA")
        .env_remove("ROCLOAD_ISA_POLICY")
        .env_remove("ROCLOAD_OVERRIDE_GFX_VERSION");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run program");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{} exited with {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        program.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The line starting with `prefix `, as `key=value` fields (plus the whole line).
fn fields(out: &str, prefix: &str) -> HashMap<String, String> {
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{prefix} ")))
        .unwrap_or_else(|| panic!("no line {prefix:?} in:\n{out}"));
    let mut map: HashMap<String, String> = line
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    map.insert("_line".into(), line.to_string());
    map
}

fn num(map: &HashMap<String, String>, key: &str) -> i64 {
    map.get(key)
        .unwrap_or_else(|| panic!("no {key} in {:?}", map["_line"]))
        .parse()
        .unwrap_or_else(|e| panic!("{key} in {:?}: {e}", map["_line"]))
}

/// A `hipError_t` value as Debian's HIP header defines it.
fn hip_error(name: &str) -> i64 {
    static HEADER: OnceLock<String> = OnceLock::new();
    let header = HEADER.get_or_init(|| {
        std::fs::read_to_string("/usr/include/hip/hip_runtime_api.h").expect("HIP header")
    });
    let pattern = format!("{name} = ");
    let line = header
        .lines()
        .find(|l| l.trim_start().starts_with(&pattern))
        .unwrap_or_else(|| panic!("{name} not in the HIP header"));
    line.trim_start()[pattern.len()..]
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The code object for `target` in the host binary `path` (its `.hip_fatbin`).
fn code_object(path: &Path, target: &str) -> Vec<u8> {
    let data = std::fs::read(path).unwrap();
    let containers = read_containers(&data, &ReadOptions::default()).unwrap();
    let (pos, index) = rocload::container::find_entry(&containers, target, None).unwrap();
    containers[pos].extract(index).unwrap().into_owned()
}

#[test]
fn kernels_program_registers_lazily_and_answers_from_the_loaded_code_object() {
    let Some(dir) = programs() else { return };
    let out = run(&dir.join("kernels"), &[], &[]);

    // Registration in the constructor, no load until the first kernel query.
    assert_eq!(num(&fields(&out, "stats_start"), "registered"), 1);
    assert_eq!(num(&fields(&out, "stats_start"), "loads"), 0, "{out}");
    assert_eq!(num(&fields(&out, "stats_after_device_queries"), "loads"), 0);
    assert_eq!(num(&fields(&out, "stats_after_first_kernel"), "loads"), 1);
    assert_eq!(
        num(&fields(&out, "stats_after_all_kernels"), "loads"),
        1,
        "one fat binary loads once"
    );
    assert_eq!(num(&fields(&out, "stats_end"), "failures"), 0);

    let processor = rocload::target::Processor::by_name("gfx1030").unwrap();
    let props = fields(&out, "device_props");
    assert_eq!(num(&props, "status"), 0);
    assert_eq!(props["gcnArchName"], "gfx1030");
    assert_eq!(num(&props, "warp"), i64::from(processor.wavefront_size));
    let version = processor.version.unwrap();
    assert_eq!(
        (num(&props, "major"), num(&props, "minor")),
        (i64::from(version.major), i64::from(version.minor))
    );
    assert_eq!(num(&fields(&out, "device_count"), "count"), 1);

    let bytes = code_object(&dir.join("kernels"), "gfx1030");
    let co = CodeObject::parse(&bytes).unwrap();
    let kd_value = |name: &str| {
        co.kernel(name)
            .unwrap_or_else(|| panic!("kernel {name}"))
            .descriptor_address
    };
    for (label, mangled) in [
        ("scale", "_Z5scalePfPKffi"),
        ("axpy_double", "_Z4axpyIdEvT_PKS0_PS0_i"),
        ("tile_sum", "_Z8tile_sumPKiPi"),
    ] {
        let k = fields(&out, &format!("kernel {label}"));
        let kernel = co
            .kernel(mangled)
            .unwrap_or_else(|| panic!("{mangled} not in the code object"));
        let md = co.kernel_metadata(kernel).expect("metadata");
        assert_eq!(num(&k, "status"), 0, "{}", k["_line"]);
        assert_eq!(num(&k, "info_status"), 0);
        assert_eq!(
            num(&k, "kernarg") as u64,
            md.kernarg_segment_size,
            "{label}"
        );
        assert_eq!(num(&k, "kernarg_align") as u64, md.kernarg_segment_align);
        assert_eq!(num(&k, "group") as u64, md.group_segment_fixed_size);
        assert_eq!(
            num(&k, "shared") as u64,
            md.group_segment_fixed_size,
            "sharedSizeBytes"
        );
        assert_eq!(num(&k, "private") as u64, md.private_segment_fixed_size);
        assert_eq!(
            num(&k, "local") as u64,
            md.private_segment_fixed_size,
            "localSizeBytes"
        );
        assert_eq!(num(&k, "wave") as u64, md.wavefront_size);
        assert_eq!(num(&k, "sgpr") as u64, md.sgpr_count.unwrap());
        assert_eq!(num(&k, "vgpr") as u64, md.vgpr_count.unwrap());
        assert_eq!(num(&k, "regs") as u64, md.vgpr_count.unwrap(), "numRegs");
        assert_eq!(num(&k, "maxwg") as u64, md.max_flat_workgroup_size.unwrap());
        assert_eq!(
            num(&k, "max_threads") as u64,
            md.max_flat_workgroup_size.unwrap(),
            "maxThreadsPerBlock"
        );
        // The descriptor in the loaded image says the same.
        let d = fields(&out, &format!("descriptor {label}"));
        assert_eq!(num(&d, "kernarg_size") as u64, md.kernarg_segment_size);
    }
    // __launch_bounds__(256) and the 256-int tile reach the metadata and the HIP answers.
    assert_eq!(num(&fields(&out, "kernel tile_sum"), "max_threads"), 256);
    assert_eq!(num(&fields(&out, "kernel tile_sum"), "shared"), 1024);

    // Addresses: the loaded image keeps the code object's layout, relative to the kernel.
    let scale_kd = num(&fields(&out, "descriptor scale"), "address") as u64;
    let var = |name: &str| {
        co.variables()
            .iter()
            .find(|s| s.name == name)
            .copied()
            .unwrap_or_else(|| panic!("variable {name}"))
    };
    for (name, line) in [
        ("dev_counter", "symbol dev_counter"),
        ("dev_coeffs", "symbol dev_coeffs"),
    ] {
        let s = fields(&out, line);
        assert_eq!(num(&s, "status"), 0);
        assert_eq!(num(&s, "size_status"), 0);
        let v = var(name);
        assert_eq!(num(&s, "size") as u64, v.size, "{name}");
        assert_eq!(
            (num(&s, "address") as u64).wrapping_sub(scale_kd),
            v.value.wrapping_sub(kd_value("_Z5scalePfPKffi")),
            "{name} offset from the kernel"
        );
    }
    // Initial values from the source, read through the returned addresses.
    assert_eq!(num(&fields(&out, "symbol dev_counter"), "value"), 7);
    assert_eq!(fields(&out, "symbol dev_coeffs")["value3"], "4.5");

    let managed = fields(&out, "managed");
    assert_eq!(num(&managed, "status"), 0);
    assert_eq!(num(&managed, "host_value"), 42);
    assert_eq!(
        num(&managed, "device_pointer_matches"),
        1,
        "the device pointer variable holds the managed address"
    );

    let f = fields(&out, "device_function dev_scale");
    let dev_scale = co
        .functions()
        .iter()
        .find(|s| s.name == "dev_scale")
        .expect("dev_scale in the code object");
    assert_eq!(num(&f, "status"), 0);
    assert_eq!(num(&f, "size") as u64, dev_scale.size);
    assert_eq!(
        (num(&f, "address") as u64).wrapping_sub(scale_kd),
        dev_scale.value.wrapping_sub(kd_value("_Z5scalePfPKffi"))
    );
    assert_eq!(
        num(&fields(&out, "device_function missing"), "status"),
        hip_error("hipErrorNotFound")
    );

    let launch = fields(&out, "launch");
    assert_eq!(num(&launch, "status"), 0, "{out}");
    assert_eq!(launch["name"], "hipSuccess");
    assert_eq!(num(&launch, "sync"), 0, "{out}");
    assert_eq!(
        num(&launch, "wrong"),
        0,
        "results differ from the host: {out}"
    );
    assert!(
        out.contains("last_error_after_reset 0\n"),
        "hipGetLastError resets"
    );
    assert!(out.contains(&format!(
        "null_attr {}\n",
        hip_error("hipErrorInvalidValue")
    )));
    assert!(out.contains(&format!(
        "unknown_function {}\n",
        hip_error("hipErrorInvalidDeviceFunction")
    )));
    assert!(out.contains(&format!(
        "unknown_symbol {}\n",
        hip_error("hipErrorInvalidSymbol")
    )));
    assert!(out.contains(&format!(
        "bad_device {}\n",
        hip_error("hipErrorInvalidDevice")
    )));
    assert!(out.contains("error_string no kernel image is available for execution on the device\n"));
}

#[test]
fn eager_mode_loads_at_registration() {
    let Some(dir) = programs() else { return };
    let out = run(&dir.join("kernels"), &[], &[("ROCLOAD_LOADING", "eager")]);
    assert_eq!(num(&fields(&out, "stats_start"), "loads"), 1, "{out}");
    assert_eq!(num(&fields(&out, "stats_end"), "loads"), 1);
    assert_eq!(num(&fields(&out, "kernel scale"), "status"), 0);
}

#[test]
fn another_software_isa_selects_its_own_entry() {
    let Some(dir) = programs() else { return };
    let out = run(&dir.join("kernels"), &[], &[("ROCLOAD_SOFT_ISA", "gfx900")]);
    let bytes = code_object(&dir.join("kernels"), "gfx900");
    let co = CodeObject::parse(&bytes).unwrap();
    let md = co
        .kernel_metadata(co.kernel("_Z5scalePfPKffi").unwrap())
        .unwrap();
    let k = fields(&out, "kernel scale");
    assert_eq!(num(&k, "status"), 0);
    assert_eq!(num(&k, "wave") as u64, md.wavefront_size);
    assert_eq!(num(&k, "sgpr") as u64, md.sgpr_count.unwrap());
    let agent: rocload::target::AgentIsa = "gfx900".parse().unwrap();
    assert_eq!(
        fields(&out, "device_props")["gcnArchName"],
        agent.target_id().to_string()
    );
}

#[test]
fn no_device_is_reported_and_the_program_runs_on() {
    let Some(dir) = programs() else { return };
    let out = run(
        &dir.join("kernels"),
        &[],
        &[("ROCLOAD_SOFT_ISA", "not-a-gpu")],
    );
    let count = fields(&out, "device_count");
    assert_eq!(num(&count, "status"), hip_error("hipErrorNoDevice"));
    assert_eq!(num(&count, "count"), 0);
    assert_eq!(
        num(&fields(&out, "kernel scale"), "status"),
        hip_error("hipErrorNoDevice")
    );
    assert_eq!(num(&fields(&out, "stats_end"), "loads"), 0);
}

#[test]
fn shared_library_with_two_fat_binaries_survives_dlopen_and_dlclose() {
    let Some(dir) = programs() else { return };
    let lib = dir.join("libtwo.so");
    let out = run(&dir.join("dl_main"), &[lib.to_str().unwrap()], &[]);
    // Two fat binaries in one .hip_fatbin: a plain bundle and a CCOB.
    let data = std::fs::read(&lib).unwrap();
    let formats: Vec<String> = read_containers(&data, &ReadOptions::default())
        .unwrap()
        .iter()
        .map(|l| l.container.format().to_string())
        .collect();
    assert_eq!(formats.len(), 2, "{formats:?}");
    let lines: Vec<&str> = out.lines().collect();
    let stat = |i: usize, key: &str| -> i64 {
        let l: Vec<&&str> = lines
            .iter()
            .filter(|l| l.starts_with("stats_after_dlopen") || l.starts_with("stats_after_queries"))
            .collect();
        l[i].split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .unwrap()
            .parse()
            .unwrap()
    };
    // Each dlopen registers two fat binaries (constructors) and loads nothing; queries load both.
    assert_eq!((stat(0, "registered"), stat(0, "loads")), (2, 0), "{out}");
    assert_eq!((stat(1, "registered"), stat(1, "loads")), (2, 2));
    assert_eq!((stat(2, "registered"), stat(2, "loads")), (4, 2));
    assert_eq!((stat(3, "registered"), stat(3, "loads")), (4, 4));
    for round in 0..2 {
        let a = fields(&out, &format!("round {round} a"));
        let b = fields(&out, &format!("round {round} b"));
        assert_eq!((num(&a, "status"), num(&b, "status")), (0, 0), "{out}");
        assert_eq!(num(&a, "value"), 11);
        assert_eq!(b["value"], "2.5");
        assert_eq!(num(&b, "max_threads"), 128, "__launch_bounds__(128)");
        // After dlclose the destructors unregistered the kernels: a stale handle is an error.
        assert_eq!(
            num(
                &fields(&out, &format!("round {round} after_dlclose")),
                "status"
            ),
            hip_error("hipErrorInvalidDeviceFunction")
        );
    }
}

#[test]
fn fat_binary_without_a_compatible_target_fails_at_first_use_with_the_explanation() {
    let Some(dir) = programs() else { return };
    let program = dir.join("incompatible");
    let out = run(&program, &[], &[]);
    assert_eq!(
        num(&fields(&out, "incompatible"), "status"),
        hip_error("hipErrorNoBinaryForGpu"),
        "{out}"
    );
    assert_eq!(
        num(&fields(&out, "incompatible_again"), "status"),
        hip_error("hipErrorNoBinaryForGpu")
    );
    assert!(out.contains(&format!(
        "last_error {}\n",
        hip_error("hipErrorNoBinaryForGpu")
    )));
    let fine = fields(&out, "fine");
    assert_eq!(num(&fine, "status"), 0, "the program keeps running");
    let stats = fields(&out, "stats");
    assert_eq!(
        (num(&stats, "loads"), num(&stats, "failures")),
        (1, 1),
        "the failure is cached, not retried"
    );

    // The explanation is the target layer's, for this bundle's entries and the agent.
    let explanation = out
        .split("explanation_begin\n")
        .nth(1)
        .unwrap()
        .split("\nexplanation_end")
        .next()
        .unwrap();
    let data = std::fs::read(&program).unwrap();
    let containers = read_containers(&data, &ReadOptions::default()).unwrap();
    let agent: rocload::target::AgentIsa = "gfx1030".parse().unwrap();
    let expected = containers
        .iter()
        .find_map(|l| {
            let ids: Vec<String> = l
                .entries()
                .unwrap()
                .iter()
                .map(|e| e.id.to_string())
                .collect();
            let sel = rocload::target::select(&agent, &ids, rocload::target::Policy::Strict);
            sel.chosen
                .is_none()
                .then(|| sel.no_match_error().to_string())
        })
        .expect("one bundle has no gfx1030 entry");
    assert!(
        explanation.ends_with(&expected),
        "explanation:\n{explanation}\nexpected:\n{expected}"
    );
    assert!(explanation.contains("gfx1100"));
    let length: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("explanation_length "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        length,
        explanation.len(),
        "rocload_last_selection_error returns the full length"
    );
}

#[test]
fn handle_churn_through_the_c_abi_returns_memory_to_its_starting_level() {
    let Some(dir) = programs() else { return };
    // 100,000 register/unregister cycles; module loads are slower in a debug build, so the
    // test runs 20,000 (scripts/bench-handles.sh runs 100,000 of each against the release build).
    let out = run(
        &dir.join("handle_churn"),
        &[
            common::fixture("hip/vadd.hip_fatbin").to_str().unwrap(),
            common::fixture("codeobj/hf_cov5.gfx1030.co")
                .to_str()
                .unwrap(),
            "hf_fill",
            "100000",
            "20000",
        ],
        &[],
    );
    for loop_name in ["fat_binaries", "modules"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(loop_name))
            .unwrap_or_else(|| panic!("no {loop_name} line in {out}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        let start: i64 = words[2].parse().unwrap();
        let end: i64 = words[4].parse().unwrap();
        // The old leaked handles cost 35-44 bytes per cycle (3.5 MB over 100,000); allocator
        // bookkeeping may move a few KiB either way.
        assert!(
            (end - start).abs() < 32 * 1024,
            "{loop_name}: heap went from {start} to {end} bytes"
        );
    }
}
