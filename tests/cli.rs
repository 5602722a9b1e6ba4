//! The `rocload` command line: output shapes, exit statuses (0 ok, 1 error, 2 usage), and
//! byte-identical extraction.

mod common;

use std::process::{Command, Output};

use common::{fixture, read};
use serde_json::Value;

fn rocload(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocload")).args(args).env_remove("ROCLOAD_LOG").output().unwrap()
}

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
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
        for key in ["offset", "format", "ccob_version", "compression", "compressed_size", "size", "entries"] {
            assert!(b.get(key).is_some(), "bundle {i} lacks {key}");
        }
        match b["format"].as_str().unwrap() {
            "ccob" => {
                assert!(b["ccob_version"].is_u64() && b["compression"].is_string() && b["compressed_size"].is_u64());
            }
            "bundle" => assert!(b["ccob_version"].is_null() && b["compression"].is_null() && b["compressed_size"].is_null()),
            other => panic!("unexpected format {other}"),
        }
        for e in b["entries"].as_array().unwrap() {
            assert!(e["id"].is_string() && e["size"].is_u64());
        }
    }
    let offsets: Vec<u64> = bundles.iter().map(|b| b["offset"].as_u64().unwrap()).collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]));
    // Host files report file offsets.
    let so = json(&rocload(&["ls", "--json", fixture("hip/libvk.so").to_str().unwrap()]));
    assert_eq!(so["bundles"].as_array().unwrap().len(), 2);
    assert!(so["bundles"][0]["offset"].as_u64().unwrap() > 0);
}

#[test]
fn extract_by_target_id_or_full_id_writes_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.co");
    let f = fixture("hip/vadd.compressed.o");
    for wanted in ["gfx90a:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"] {
        let o = rocload(&["extract", f.to_str().unwrap(), "--target", wanted, "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let section = read("hip/vadd.hip_fatbin");
        let plain = rocload::container::read_containers(&section, &Default::default()).unwrap();
        let i = plain[0].entries().unwrap().iter().position(|e| e.id.ends_with("gfx90a:xnack-")).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), plain[0].extract(i).unwrap().as_ref());
    }
    // --bundle picks a bundle by index; stdout when no -o.
    let lib = fixture("hip/libvk.so");
    let o = rocload(&["extract", lib.to_str().unwrap(), "--target", "gfx1030", "--bundle", "1"]);
    assert!(o.status.success());
    assert_eq!(&o.stdout[..4], b"\x7fELF");
}

#[test]
fn errors_exit_1_and_usage_errors_exit_2() {
    let o = rocload(&["extract", fixture("hip/vadd.o").to_str().unwrap(), "--target", "gfx1200"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("gfx1200") && err.contains("gfx1030"), "the error lists what there is: {err}");
    let o = rocload(&["ls", "/nonexistent/file"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/file"));
    let o = rocload(&["ls", fixture("kernels/vadd.hip").to_str().unwrap().replace("fixtures/", "").as_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unrecognised data at offset 0x0"));
    assert_eq!(rocload(&["ls"]).status.code(), Some(2));
    assert_eq!(rocload(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(rocload(&["extract", "x"]).status.code(), Some(2));
    assert!(rocload(&["ls", fixture("hip/vadd.o").to_str().unwrap()]).stderr.is_empty(), "nothing on stderr unless asked");
}
