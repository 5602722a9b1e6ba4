//! The `rocload` command line: output shapes, exit statuses (0 ok, 1 error, 2 usage), and
//! byte-identical extraction.

mod common;

use std::process::{Command, Output};

use common::{fixture, read};
use serde_json::Value;

fn rocload(args: &[&str]) -> Output {
    rocload_with(args, &[])
}

/// `rocload` with `env` set; the caller's `ROCLOAD_LOG` and `ROCLOAD_VERIFY` are removed.
fn rocload_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(common::rocload_bin())
        .args(args)
        .env_remove("ROCLOAD_LOG")
        .env_remove("ROCLOAD_VERIFY")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn ls_json_lists_every_bundle_in_order() {
    let f = fixture("synthetic/multi.hip_fatbin");
    let v = json(&rocload(&["ls", "--json", f.to_str().unwrap()]));
    let bundles = v["bundles"].as_array().unwrap();
    assert!(bundles.len() >= 5);
    for (i, b) in bundles.iter().enumerate() {
        assert_eq!(b["index"], i);
        for key in [
            "offset",
            "format",
            "ccob_version",
            "compression",
            "compressed_size",
            "size",
            "entries",
        ] {
            assert!(b.get(key).is_some(), "bundle {i} lacks {key}");
        }
        match b["format"].as_str().unwrap() {
            "ccob" => {
                assert!(
                    b["ccob_version"].is_u64()
                        && b["compression"].is_string()
                        && b["compressed_size"].is_u64()
                );
            }
            "bundle" => assert!(
                b["ccob_version"].is_null()
                    && b["compression"].is_null()
                    && b["compressed_size"].is_null()
            ),
            other => panic!("unexpected format {other}"),
        }
        for e in b["entries"].as_array().unwrap() {
            assert!(e["id"].is_string() && e["size"].is_u64());
        }
    }
    let offsets: Vec<u64> = bundles
        .iter()
        .map(|b| b["offset"].as_u64().unwrap())
        .collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]));
    // Host files report file offsets.
    let so = json(&rocload(&[
        "ls",
        "--json",
        fixture("hip/libvk.so").to_str().unwrap(),
    ]));
    assert_eq!(so["bundles"].as_array().unwrap().len(), 2);
    assert!(so["bundles"][0]["offset"].as_u64().unwrap() > 0);
}

#[test]
fn extract_by_target_id_or_full_id_writes_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.co");
    let f = fixture("hip/vadd.compressed.o");
    for wanted in ["gfx90a:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"] {
        let o = rocload(&[
            "extract",
            f.to_str().unwrap(),
            "--target",
            wanted,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let section = read("hip/vadd.hip_fatbin");
        let plain = rocload::container::read_containers(&section, &Default::default()).unwrap();
        let i = plain[0]
            .entries()
            .unwrap()
            .iter()
            .position(|e| e.id.ends_with("gfx90a:xnack-"))
            .unwrap();
        assert_eq!(
            std::fs::read(&out).unwrap(),
            plain[0].extract(i).unwrap().as_ref()
        );
    }
    // --bundle picks a bundle by index; stdout when no -o.
    let lib = fixture("hip/libvk.so");
    let o = rocload(&[
        "extract",
        lib.to_str().unwrap(),
        "--target",
        "gfx1030",
        "--bundle",
        "1",
    ]);
    assert!(o.status.success());
    assert_eq!(&o.stdout[..4], b"\x7fELF");
}

#[test]
fn errors_exit_1_and_usage_errors_exit_2() {
    let o = rocload(&[
        "extract",
        fixture("hip/vadd.o").to_str().unwrap(),
        "--target",
        "gfx1200",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("gfx1200") && err.contains("gfx1030"),
        "the error lists what there is: {err}"
    );
    let o = rocload(&["ls", "/nonexistent/file"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/file"));
    let o = rocload(&[
        "ls",
        fixture("kernels/vadd.hip")
            .to_str()
            .unwrap()
            .replace("fixtures/", "")
            .as_str(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unrecognised data at offset 0x0"));
    assert_eq!(rocload(&["ls"]).status.code(), Some(2));
    assert_eq!(rocload(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(rocload(&["extract", "x"]).status.code(), Some(2));
    assert!(
        rocload(&["ls", fixture("hip/vadd.o").to_str().unwrap()])
            .stderr
            .is_empty(),
        "nothing on stderr unless asked"
    );
}

#[test]
fn select_explains_every_entry_and_fails_without_a_choice() {
    let f = fixture("hip/vadd.o");
    let f = f.to_str().unwrap();
    let v = json(&rocload(&[
        "select", f, "--agent", "gfx1031", "--policy", "extended", "--json",
    ]));
    assert_eq!(v["agent"], "amdgcn-amd-amdhsa--gfx1031");
    assert_eq!(v["policy"], "extended");
    let b = &v["bundles"][0];
    assert_eq!(b["index"], 0);
    assert_eq!(b["chosen"], "hipv4-amdgcn-amd-amdhsa--gfx1031");
    let cands = b["candidates"].as_array().unwrap();
    let gfx1030 = cands
        .iter()
        .find(|c| c["id"] == "hipv4-amdgcn-amd-amdhsa--gfx1030")
        .unwrap();
    assert_eq!(
        (gfx1030["compatible"].as_bool(), gfx1030["rank"].as_str()),
        (Some(true), Some("extended"))
    );
    assert!(cands
        .iter()
        .all(|c| c["reason"].as_str().is_some_and(|r| !r.is_empty())));
    // gfx1032 has no exact entry: strict fails with the explanation and the hint.
    let o = rocload(&["select", f, "--agent", "gfx1032"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("gfx1032") && err.contains("ROCLOAD_ISA_POLICY=extended"),
        "{err}"
    );
    assert!(
        rocload(&["select", f, "--agent", "gfx1032", "--policy", "extended"])
            .status
            .success()
    );
    assert_eq!(
        rocload(&["select", f, "--agent", "gfx1032", "--policy", "lenient"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn symbols_json_has_kernels_functions_variables_imports() {
    let v = json(&rocload(&[
        "symbols",
        "--json",
        fixture("codeobj/kernels_user.co").to_str().unwrap(),
    ]));
    let co = &v["code_objects"][0];
    assert_eq!(co["target"], "gfx1030");
    assert_eq!(co["code_object_version"], 5);
    let kernels: Vec<&str> = co["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(kernels, ["use_add", "use_scale"]);
    assert!(co["kernels"][0]["symbol"]
        .as_str()
        .unwrap()
        .ends_with(".kd"));
    let imports: Vec<&str> = co["imports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    for name in ["dl_add", "dl_scale", "_ZN2dl3mixEif", "dl_table"] {
        assert!(imports.contains(&name), "{name} in {imports:?}");
    }
    assert!(co["imports"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["type"] == "notype"));
    // A fat binary: one report per code-object entry, or the one --target names.
    let f = fixture("hip/vadd.compressed.o");
    let all = json(&rocload(&["symbols", "--json", f.to_str().unwrap()]));
    assert_eq!(all["code_objects"].as_array().unwrap().len(), 7);
    let one = json(&rocload(&[
        "symbols",
        "--json",
        f.to_str().unwrap(),
        "--target",
        "gfx906",
    ]));
    assert_eq!(one["code_objects"].as_array().unwrap().len(), 1);
    assert_eq!(one["code_objects"][0]["target"], "gfx906");
}

#[test]
fn load_links_across_code_objects_and_lists_missing_imports() {
    let co = |n: &str| {
        fixture(&format!("codeobj/{n}"))
            .to_str()
            .unwrap()
            .to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    let (user, math, data) = (
        co("kernels_user.co"),
        co("devlib_math.co"),
        co("devlib_data.co"),
    );
    let o = rocload(&[
        "load",
        &user,
        &math,
        &data,
        "--agent",
        "gfx1030",
        "--json",
        "--dump-dir",
        dir.path().to_str().unwrap(),
    ]);
    let v = json(&o);
    assert_eq!(v["agent"], "amdgcn-amd-amdhsa--gfx1030");
    let cos = v["code_objects"].as_array().unwrap();
    assert_eq!(cos.len(), 3);
    for (i, c) in cos.iter().enumerate() {
        assert_eq!(c["target"], "gfx1030");
        let image = std::fs::read(dir.path().join(format!("{i}.bin"))).unwrap();
        assert_eq!(image.len() as u64, c["size"].as_u64().unwrap());
    }
    let syms = v["symbols"].as_array().unwrap();
    let find = |n: &str| {
        syms.iter()
            .find(|s| s["name"] == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    assert_eq!(find("use_add")["kind"], "kernel");
    assert_eq!(find("dl_add")["kind"], "function");
    assert_eq!(find("dl_add")["code_object"], 1);
    assert_eq!(find("dl_table")["kind"], "variable");
    // The GOT slot for dl_add in the dumped, relocated user image holds dl_add's address.
    let image = std::fs::read(dir.path().join("0.bin")).unwrap();
    let dl_add = find("dl_add")["address"].as_u64().unwrap();
    assert!(image
        .chunks(8)
        .any(|c| c.len() == 8 && u64::from_le_bytes(c.try_into().unwrap()) == dl_add));
    // Alone, the user object lacks four names: exit 1, each named.
    let o = rocload(&["load", &user, "--agent", "gfx1030"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    for n in ["dl_add", "dl_scale", "_ZN2dl3mixEif", "dl_table"] {
        assert!(err.contains(n), "{err}");
    }
    // --define fills them.
    let o = rocload(&[
        "load",
        &user,
        "--agent",
        "gfx1030",
        "--define",
        "dl_add=0x1000",
        "--define",
        "dl_scale=4096",
        "--define",
        "_ZN2dl3mixEif=0x2000",
        "--define",
        "dl_table=0x3000",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn agents_lists_the_software_agent() {
    let v = json(&rocload(&["agents", "--json"]));
    assert_eq!(v["agents"][0]["backend"], "soft");
    let o = Command::new(common::rocload_bin())
        .args(["agents", "--json"])
        .env("ROCLOAD_SOFT_ISA", "gfx90a:xnack+")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["agents"][0]["name"]
            .as_str()
            .unwrap()
            .starts_with("amdgcn-amd-amdhsa--gfx90a"),
        "{v}"
    );
}

/// `rocload disasm` prints every instruction of a code object's `.text` as llvm-objdump-19
/// does (text and address, line for line), labels kernels and device functions, narrows to
/// one by raw or demangled name, decodes gfx1030 and gfx90a (CDNA2) entries, and refuses
/// targets its decoder does not know.
#[test]
fn disasm_prints_like_llvm_objdump() {
    let Some(objdump) = common::llvm_tool("llvm-objdump") else {
        return;
    };
    let fat = fixture("hip/vadd.compressed.o");
    let fat = fat.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let co = dir.path().join("gfx1030.co");
    let out = rocload(&[
        "extract",
        fat,
        "--target",
        "gfx1030",
        "-o",
        co.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // (address, text) of each instruction line: `\t<text> // <ADDRESS>: <words>`.
    let instructions = |listing: &str| -> Vec<(u64, String)> {
        listing
            .lines()
            .filter_map(|l| {
                let (text, comment) = l.split_once("//")?;
                let (addr, _) = comment.trim().split_once(": ")?;
                let addr = u64::from_str_radix(addr, 16).ok()?;
                Some((addr, text.trim().to_string()))
            })
            .collect()
    };
    let reference = Command::new(&objdump)
        .args(["-d", "--mcpu=gfx1030", "-j", ".text"])
        .arg(&co)
        .output()
        .unwrap();
    let reference = instructions(&String::from_utf8_lossy(&reference.stdout));
    assert!(reference.len() > 100, "llvm-objdump printed {reference:?}");
    let listing = rocload(&["disasm", fat, "--target", "gfx1030"]);
    assert!(listing.status.success());
    let listing = String::from_utf8(listing.stdout).unwrap();
    let ours = instructions(&listing);
    // llvm-objdump stops at trailing padding; every line it prints must match ours.
    assert!(ours.len() >= reference.len());
    for (want, got) in reference.iter().zip(&ours) {
        assert_eq!(want, got);
    }
    for label in ["<vadd>:", "<dev_scale>:", "<_Z4axpyIfEvT_PKS0_PS0_i>:"] {
        assert!(listing.contains(label), "{label} missing");
    }
    // One function, by its demangled name without parameters.
    let one = rocload(&[
        "disasm",
        fat,
        "--target",
        "gfx1030",
        "--kernel",
        "axpy<float>",
    ]);
    let one = String::from_utf8(one.stdout).unwrap();
    assert!(one.contains("<_Z4axpyIfEvT_PKS0_PS0_i>:") && !one.contains("<vadd>:"));
    assert!(one.contains("s_endpgm"));
    let missing = rocload(&["disasm", fat, "--target", "gfx1030", "--kernel", "nosuch"]);
    assert_eq!(missing.status.code(), Some(1));
    let gcn = rocload(&["disasm", fat, "--target", "gfx906"]);
    assert_eq!(gcn.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&gcn.stderr).contains("gfx906 code is not decoded"));
    // CDNA2: the gfx90a entry, against llvm-objdump's gfx90a listing.
    let co = dir.path().join("gfx90a.co");
    let out = rocload(&[
        "extract",
        fat,
        "--target",
        "gfx90a:xnack-",
        "-o",
        co.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reference = Command::new(objdump)
        .args(["-d", "--mcpu=gfx90a", "-j", ".text"])
        .arg(&co)
        .output()
        .unwrap();
    let reference = instructions(&String::from_utf8_lossy(&reference.stdout));
    assert!(reference.len() > 100, "llvm-objdump printed {reference:?}");
    let listing = rocload(&["disasm", fat, "--target", "gfx90a:xnack-"]);
    assert!(
        listing.status.success(),
        "{}",
        String::from_utf8_lossy(&listing.stderr)
    );
    let ours = instructions(&String::from_utf8(listing.stdout).unwrap());
    assert!(ours.len() >= reference.len());
    for (want, got) in reference.iter().zip(&ours) {
        assert_eq!(want, got);
    }
}

/// `extract --target` takes the entry `clang-offload-bundler-19 -unbundle` takes, byte for
/// byte, and fails where it fails: the same id first, else an entry that sets only features
/// the request sets the same way (`gfx90a:xnack+` takes a feature-less `gfx90a` entry, as on
/// ROCm 7's wheels). Checked on a bundle the tool makes here and on two compiled fixtures.
#[test]
fn extract_target_follows_clang_offload_bundler() {
    let Some(bundler) = common::llvm_tool("clang-offload-bundler") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("made.bundle");
    let entries = [
        "gfx90a",
        "gfx942",
        "gfx906:xnack-",
        "gfx908:sramecc+:xnack+",
        "gfx1030",
    ];
    // As clang passes it: given `host-x86_64-unknown-linux--`, the tool writes that id twice
    // over (`host-x86_64-unknown-linux--host-x86_64-unknown-linux--`).
    let mut targets = vec!["host-x86_64-unknown-linux".to_string()];
    let mut inputs = vec!["-input=/dev/null".to_string()];
    for (i, e) in entries.iter().enumerate() {
        let payload = dir.path().join(format!("{i}.bin"));
        std::fs::write(&payload, format!("payload {i} for {e}\n").repeat(i + 1)).unwrap();
        targets.push(format!("hipv4-amdgcn-amd-amdhsa--{e}"));
        inputs.push(format!("-input={}", payload.display()));
    }
    let status = Command::new(&bundler)
        .args(["-type=o", "-bundle-align=4096"])
        .arg(format!("-targets={}", targets.join(",")))
        .args(&inputs)
        .arg(format!("-output={}", made.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let requests = [
        "gfx90a:xnack+",
        "gfx90a:sramecc+:xnack-",
        "gfx90a:xnack-",
        "gfx90a",
        "gfx942:xnack-",
        "gfx942:sramecc+:xnack+",
        "gfx942",
        "gfx942:sramecc+:xnack-",
        "gfx906:xnack-",
        "gfx906:sramecc-:xnack-",
        "gfx906",
        "gfx906:xnack+",
        "gfx908:sramecc+:xnack+",
        "gfx908:xnack+",
        "gfx1030",
        "gfx1100",
        "hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
        "openmp-amdgcn-amd-amdhsa--gfx90a",
    ];
    let files = [
        made.clone(),
        fixture("headerfree/hf_select.hip_fatbin"),
        fixture("hip/vadd.hip_fatbin"),
    ];
    let (reference, ours) = (dir.path().join("ref"), dir.path().join("ours"));
    let mut extracted = 0;
    for file in &files {
        for request in requests {
            let _ = std::fs::remove_file(&reference);
            let _ = std::fs::remove_file(&ours);
            let full = if request.contains("--") {
                request.to_string()
            } else {
                format!("hipv4-amdgcn-amd-amdhsa--{request}")
            };
            let tool = Command::new(&bundler)
                .args(["-unbundle", "-type=o"])
                .arg(format!("-input={}", file.display()))
                .arg(format!("-targets={full}"))
                .arg(format!("-output={}", reference.display()))
                .output()
                .unwrap();
            let o = rocload(&[
                "extract",
                file.to_str().unwrap(),
                "--target",
                request,
                "-o",
                ours.to_str().unwrap(),
            ]);
            let what = format!(
                "{} --target {request}: clang-offload-bundler says {:?}, rocload says {:?}",
                file.display(),
                String::from_utf8_lossy(&tool.stderr),
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(tool.status.success(), o.status.success(), "{what}");
            if o.status.success() {
                assert_eq!(
                    std::fs::read(&ours).unwrap(),
                    std::fs::read(&reference).unwrap(),
                    "{what}"
                );
                extracted += 1;
            } else {
                assert_eq!(o.status.code(), Some(1), "{what}");
                // Every entry is named with the reason it was refused.
                let err = String::from_utf8_lossy(&o.stderr);
                let listed = err
                    .lines()
                    .filter(|l| l.starts_with("  bundle 0: "))
                    .count();
                let in_file = rocload::container::read_containers(
                    &std::fs::read(file).unwrap(),
                    &Default::default(),
                )
                .unwrap()[0]
                    .entries()
                    .unwrap()
                    .len();
                assert_eq!(listed, in_file, "{what}");
                assert!(err.contains(request), "{what}");
            }
        }
    }
    assert!(
        extracted >= 20,
        "only {extracted} requests matched anything"
    );
    // The reasons say which feature stands in the way.
    let o = rocload(&[
        "extract",
        fixture("headerfree/hf_select.hip_fatbin").to_str().unwrap(),
        "--target",
        "gfx942:xnack-",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-: sets sramecc+, which the request \
             leaves out"
        ) && err.contains("hipv4-amdgcn-amd-amdhsa--gfx942:sramecc-:xnack+: sets xnack+; the request asks for xnack-"),
        "{err}"
    );
}

/// `--verify` and `ROCLOAD_VERIFY=1` make `ls` and `select` check every compressed bundle's
/// MD5 (they otherwise inflate only the entry tables): a CCOB whose hash field is corrupted
/// fails them, naming the bundle; without the check it is listed.
#[test]
fn verify_checks_compressed_bundles_in_ls_and_select() {
    // A plain bundle, then at 0x16000 (4096-aligned, as linkers place them) the same bundle
    // compressed (CCOB v2: the hash is at bytes 16..24), its hash off by one bit.
    let mut data = read("hip/vadd.hip_fatbin");
    data.resize(0x16000, 0);
    let mut ccob = read("synthetic/vadd.ccob_v2_zstd.ccob");
    let good = data.iter().chain(&ccob).copied().collect::<Vec<u8>>();
    ccob[16] ^= 1;
    data.extend_from_slice(&ccob);
    let dir = tempfile::tempdir().unwrap();
    let (bad_path, good_path) = (dir.path().join("bad.hip_fatbin"), dir.path().join("good"));
    std::fs::write(&bad_path, &data).unwrap();
    std::fs::write(&good_path, &good).unwrap();
    let (bad, good) = (bad_path.to_str().unwrap(), good_path.to_str().unwrap());

    let o = rocload(&["ls", bad]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("bundle 1 at 0x16000: ccob v2 zstd"));
    let o = rocload(&["select", bad, "--agent", "gfx1030"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let failures = [
        rocload(&["ls", "--verify", bad]),
        rocload(&["ls", bad, "--verify", "--json"]),
        rocload_with(&["ls", bad], &[("ROCLOAD_VERIFY", "1")]),
        rocload(&["select", bad, "--agent", "gfx1030", "--verify"]),
        rocload_with(
            &["select", bad, "--agent", "gfx1030"],
            &[("ROCLOAD_VERIFY", "1")],
        ),
    ];
    for o in failures {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(o.stdout.is_empty(), "nothing listed when the check fails");
        assert!(
            err.contains("bundle 1 at 0x16000") && err.contains("hash mismatch"),
            "{err}"
        );
    }
    // The same file with the hash intact passes.
    for args in [
        &["ls", "--verify", good][..],
        &["select", "--verify", good, "--agent", "gfx1030"],
    ] {
        let o = rocload(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// `ls` of a compressed bundle whose uncompressed-size field lies says what the header
/// declares, what the payload inflates to, and where the bundle is.
#[test]
fn ls_reports_a_lying_uncompressed_size() {
    let real = read("hip/vadd.hip_fatbin").len();
    let mut data = read("hip/vadd.hip_fatbin");
    data.resize(0x16000, 0);
    let ccob_at = data.len();
    data.extend_from_slice(&read("synthetic/vadd.ccob_v2_zstd.ccob"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lying.hip_fatbin");
    // 1000: the table fits, the host entry (0 bytes at 0x1000) does not; 88847: one byte of
    // the last entry is missing.
    for declared in [1000u32, real as u32 - 1] {
        data[ccob_at + 12..ccob_at + 16].copy_from_slice(&declared.to_le_bytes());
        std::fs::write(&path, &data).unwrap();
        let o = rocload(&["ls", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "rocload: ccob at offset 0x16000: inflates to {real} bytes, but its header's \
                 uncompressed size says {declared}"
            )
        );
    }
}

/// `inflate` of a plain bundle says which bundle it is, that there is nothing to inflate, and
/// where the compressed bundles are.
#[test]
fn inflate_of_a_plain_bundle_says_so() {
    let lib = fixture("hip/libvk.so");
    let bytes = std::fs::read(&lib).unwrap();
    let containers = rocload::container::read_containers(&bytes, &Default::default()).unwrap();
    let at = |i: usize| containers[i].offset;
    assert_eq!(containers[0].container.format().name(), "bundle");
    assert_eq!(containers[1].container.format().name(), "ccob");
    let lib = lib.to_str().unwrap();
    let o = rocload(&["inflate", lib, "--bundle", "0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim_end(),
        format!(
            "rocload: {lib}: bundle 0 at {:#x} is a plain (uncompressed) bundle: there is \
             nothing to inflate; compressed bundles: 1 at {:#x}",
            at(0),
            at(1)
        )
    );
    let plain = fixture("hip/vadd.hip_fatbin");
    let plain = plain.to_str().unwrap();
    for args in [
        &["inflate", plain][..],
        &["inflate", plain, "--bundle", "0"],
    ] {
        let o = rocload(args);
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("bundle 0 at 0x0 is a plain (uncompressed) bundle")
                && err.contains("nothing to inflate"),
            "{args:?}: {err}"
        );
    }
    let o = rocload(&["inflate", lib, "--bundle", "5"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("there is no bundle 5 (it has 2)"));
    // The compressed one inflates, with or without --bundle.
    let rocload::container::Container::Compressed(c) = &containers[1].container else {
        panic!("bundle 1 of libvk.so is compressed");
    };
    let inflated = c.inflate().unwrap();
    for args in [&["inflate", lib][..], &["inflate", lib, "--bundle", "1"]] {
        let o = rocload(args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, inflated);
    }
}

/// A failed `select` explains itself once, on stderr, with exit status 1 and nothing on
/// standard output; `--json` still prints its document on standard output.
#[test]
fn failed_select_explains_once_on_stderr() {
    for (file, agent) in [
        ("hip/vadd.o", "gfx1032"),
        ("synthetic/multi.hip_fatbin", "gfx90a:xnack+"),
    ] {
        let f = fixture(file);
        let f = f.to_str().unwrap();
        let j = rocload(&["select", f, "--agent", agent, "--json"]);
        assert_eq!(j.status.code(), Some(1));
        let v: Value = serde_json::from_slice(&j.stdout).unwrap();
        let bundles = v["bundles"].as_array().unwrap();
        let failed: Vec<String> = bundles
            .iter()
            .filter(|b| b["chosen"].is_null())
            .map(|b| b["index"].to_string())
            .collect();
        assert!(!failed.is_empty());
        let json_err = String::from_utf8_lossy(&j.stderr);
        assert_eq!(json_err.lines().count(), 1, "{json_err}");

        let o = rocload(&["select", f, "--agent", agent]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            o.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        let err = String::from_utf8_lossy(&o.stderr);
        let first = err.lines().next().unwrap();
        assert_eq!(first, json_err.trim_end());
        assert!(
            first.starts_with(&format!("rocload: {f}: no code object can run on agent"))
                && first.ends_with(&failed.join(", ")),
            "{first}"
        );
        // Every entry of every bundle once, with its verdict: no second copy of the table.
        for b in bundles {
            let index = b["index"].as_u64().unwrap();
            let heading = match b["chosen"].as_str() {
                Some(id) => format!("bundle {index}: {id}"),
                None => format!("bundle {index}: none"),
            };
            assert_eq!(err.lines().filter(|l| *l == heading).count(), 1, "{err}");
            for c in b["candidates"].as_array().unwrap() {
                let line = format!(
                    "{:<48} {}",
                    c["id"].as_str().unwrap(),
                    c["reason"].as_str().unwrap()
                );
                assert!(err.contains(&line), "{line} missing from {err}");
            }
        }
        let rows: usize = bundles
            .iter()
            .map(|b| b["candidates"].as_array().unwrap().len())
            .sum();
        let printed = err
            .lines()
            .filter(|l| l.starts_with("    ") || l.starts_with("  * "))
            .count();
        assert_eq!(printed, rows, "{err}");
    }
}
