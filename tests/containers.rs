//! The container layer against real clang-19 output and synthetic variants, compared with
//! an independent decoder (golden layouts from scripts/make_synthetic.py) and with
//! clang-offload-bundler (golden listings, and live when installed).

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use common::{fixture, llvm_tool, md5_hex, read};
use rocload::container::{
    read_containers, Container, ContainerError, HashCheck, Located, ReadOptions,
};
use serde_json::Value;

fn golden_files(dir: &str, ext: &str) -> Vec<(String, std::path::PathBuf)> {
    let dir = fixture(&format!("golden/{dir}"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().replace("__", "/"),
                p,
            )
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no golden files in {}", dir.display());
    files
}

fn check_entries(l: &Located<'_>, expected: &Value, what: &str) {
    let entries = l.entries().unwrap();
    let exp = expected.as_array().unwrap();
    assert_eq!(entries.len(), exp.len(), "{what}: entry count");
    for (i, (e, x)) in entries.iter().zip(exp).enumerate() {
        assert_eq!(e.id, x["id"].as_str().unwrap(), "{what}: entry {i} id");
        assert_eq!(
            e.offset,
            x["offset"].as_u64().unwrap(),
            "{what}: entry {i} offset"
        );
        assert_eq!(
            e.size,
            x["size"].as_u64().unwrap(),
            "{what}: entry {i} size"
        );
        let data = l.extract(i).unwrap();
        assert_eq!(
            md5_hex(&data),
            x["md5"].as_str().unwrap(),
            "{what}: entry {i} ({}) bytes",
            e.id
        );
    }
}

#[test]
fn every_layout_matches_the_independent_decoder() {
    let opts = ReadOptions {
        verify: HashCheck::Always,
        ..ReadOptions::default()
    };
    for (name, path) in golden_files("layout", "json") {
        let golden: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let data = read(&name);
        let found = read_containers(&data, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        if golden["kind"] == "offload_binary" {
            let bins = golden["binaries"].as_array().unwrap();
            assert_eq!(found.len(), bins.len(), "{name}: binaries");
            for (l, b) in found.iter().zip(bins) {
                assert_eq!(l.offset, b["offset"].as_u64().unwrap(), "{name}");
                let Container::OffloadBinary(o) = &l.container else {
                    panic!("{name}: not an offload binary")
                };
                assert_eq!(o.version as u64, b["version"].as_u64().unwrap());
                for (img, e) in o.images().iter().zip(b["entries"].as_array().unwrap()) {
                    assert_eq!(img.image_offset, e["image_offset"].as_u64().unwrap());
                    assert_eq!(md5_hex(img.image), e["image_md5"].as_str().unwrap());
                    assert_eq!(img.string("arch"), e["strings"]["arch"].as_str());
                    assert_eq!(img.string("triple"), e["strings"]["triple"].as_str());
                }
            }
            continue;
        }
        let items = golden["items"].as_array().unwrap();
        assert_eq!(found.len(), items.len(), "{name}: container count");
        for (i, (l, item)) in found.iter().zip(items).enumerate() {
            let what = format!("{name} item {i}");
            assert_eq!(l.offset, item["offset"].as_u64().unwrap(), "{what}: offset");
            assert_eq!(
                l.container.size(),
                item["size"].as_u64().unwrap(),
                "{what}: size"
            );
            match (&l.container, item["kind"].as_str().unwrap()) {
                (Container::Bundle(_), "bundle") => check_entries(l, &item["entries"], &what),
                (Container::Compressed(c), "ccob") => {
                    let h = &item["header"];
                    assert_eq!(
                        u64::from(c.header().version),
                        h["version"].as_u64().unwrap()
                    );
                    assert_eq!(c.header().hash, h["hash"].as_u64().unwrap());
                    assert_eq!(
                        c.header().uncompressed_size,
                        h["uncompressed_size"].as_u64().unwrap()
                    );
                    assert_eq!(
                        md5_hex(&c.inflate().unwrap()),
                        item["inflated_md5"].as_str().unwrap(),
                        "{what}: inflated"
                    );
                    check_entries(l, &item["inner_bundle"]["entries"], &what);
                }
                (c, kind) => panic!("{what}: we read {:?}, the decoder says {kind}", c.format()),
            }
        }
    }
}

/// Entries the golden clang-offload-bundler listing may be wrong about (see
/// tests/README.md): it returns the gfx11-generic object for every generic id.
fn bundler_is_wrong_about(id: &str) -> bool {
    id.contains("generic")
}

#[test]
fn every_bundler_golden_agrees() {
    let opts = ReadOptions::default();
    let mut checked = 0;
    for (name, path) in golden_files("bundler", "txt") {
        // `x.hip_fatbin.part1.ccob` is the second container of `x.hip_fatbin`.
        let (file, part) = match name.split_once(".part") {
            Some((file, rest)) => (
                file.to_string(),
                rest.split('.').next().unwrap().parse::<usize>().unwrap(),
            ),
            None => (name.clone(), 0),
        };
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.contains("list_exit: 0")
            || name.ends_with(".o")
            || name.contains("vk_app") && !name.contains(".part") && !name.contains("hip_fatbin")
        {
            continue; // the tool could not list it (recorded as a finding), or read no .hip_fatbin
        }
        let data = read(&file);
        let found = read_containers(&data, &opts).unwrap_or_else(|e| panic!("{file}: {e}"));
        let l = &found[part];
        let entries = l.entries().unwrap();
        let ours: BTreeSet<&str> = entries.iter().map(|e| e.id.as_ref()).collect();
        let theirs: BTreeSet<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("list: "))
            .collect();
        if theirs.is_empty() {
            continue;
        }
        assert_eq!(ours, theirs, "{name}: listed ids");
        for row in text.lines().filter_map(|l| l.strip_prefix("unbundle: ")) {
            let mut f = row.split_whitespace();
            let (id, size, md5) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
            if bundler_is_wrong_about(id) {
                continue;
            }
            let i = entries.iter().position(|e| e.id == id).unwrap();
            let bytes = l.extract(i).unwrap();
            assert_eq!(bytes.len().to_string(), size, "{name}: {id} size");
            assert_eq!(md5_hex(&bytes), md5, "{name}: {id} bytes");
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} unbundle rows compared");
}

#[test]
fn live_bundler_agrees_on_list_and_unbundle() {
    let Some(bundler) = llvm_tool("clang-offload-bundler") else {
        return;
    };
    let out = std::env::temp_dir().join(format!("rocload-live-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let files = [
        "hip/vadd.hip_fatbin",
        "hip/vadd.compressed.hip_fatbin",
        "hip/vadd.device.bundle",
        "hip/vadd.device.ccob",
        "headerfree/hf_select.hip_fatbin",
        "synthetic/vadd.ccob_v1_zstd.ccob",
        "synthetic/vadd.ccob_v2_zlib.ccob",
        "synthetic/decoy.ccob_v2_zlib0.ccob",
    ];
    for rel in files {
        let path = fixture(rel);
        let data = read(rel);
        let found = read_containers(&data, &ReadOptions::default()).unwrap();
        let entries = found[0].entries().unwrap();
        let listed = Command::new(&bundler)
            .args(["-list", "-type=o", &format!("-input={}", path.display())])
            .output()
            .unwrap();
        assert!(
            listed.status.success(),
            "{rel}: {}",
            String::from_utf8_lossy(&listed.stderr)
        );
        let theirs: BTreeSet<String> = String::from_utf8_lossy(&listed.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        let ours: BTreeSet<String> = entries.iter().map(|e| e.id.to_string()).collect();
        assert_eq!(ours, theirs, "{rel}: -list");
        for (i, e) in entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.size > 0 && !bundler_is_wrong_about(&e.id))
        {
            let target = out.join(format!("{i}.co"));
            let st = Command::new(&bundler)
                .args([
                    "-unbundle",
                    "-type=o",
                    &format!("-input={}", path.display()),
                    &format!("-targets={}", e.id),
                    &format!("-output={}", target.display()),
                ])
                .status()
                .unwrap();
            assert!(st.success(), "{rel}: -unbundle {}", e.id);
            assert_eq!(
                std::fs::read(&target).unwrap(),
                found[0].extract(i).unwrap().as_ref(),
                "{rel}: {}",
                e.id
            );
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn host_files_hold_what_their_sections_hold() {
    let pairs = [
        ("hip/vadd.o", "hip/vadd.hip_fatbin"),
        ("hip/vadd.compressed.o", "hip/vadd.compressed.hip_fatbin"),
        ("hip/libvk.so", "hip/libvk.hip_fatbin"),
        ("hip/vk_app", "hip/vk_app.hip_fatbin"),
        (
            "headerfree/hf_generic.o",
            "headerfree/hf_generic.hip_fatbin",
        ),
        ("headerfree/hf_select.o", "headerfree/hf_select.hip_fatbin"),
        (
            "offload_binary/vadd.newdriver.o",
            "offload_binary/vadd.newdriver.llvm_offloading",
        ),
    ];
    let opts = ReadOptions::default();
    for (host, section) in pairs {
        let (h, s) = (read(host), read(section));
        let hf = read_containers(&h, &opts).unwrap_or_else(|e| panic!("{host}: {e}"));
        let sf = read_containers(&s, &opts).unwrap();
        assert_eq!(hf.len(), sf.len(), "{host}");
        assert!(!hf.is_empty());
        let base = hf[0].offset - sf[0].offset;
        for (a, b) in hf.iter().zip(&sf) {
            assert_eq!(
                a.offset - base,
                b.offset,
                "{host}: container offsets relative to the section"
            );
            assert!(a.section.is_some());
            let (ea, eb) = (a.entries().unwrap(), b.entries().unwrap());
            assert_eq!(ea, eb, "{host}");
            for i in 0..ea.len() {
                assert_eq!(
                    a.extract(i).unwrap(),
                    b.extract(i).unwrap(),
                    "{host}: entry {i}"
                );
            }
        }
    }
    // The libvk.so section holds a plain bundle then a compressed one; vk_app the reverse.
    let lib = read("hip/libvk.so");
    let kinds: Vec<_> = read_containers(&lib, &opts)
        .unwrap()
        .iter()
        .map(|l| l.container.format())
        .collect();
    assert_eq!(kinds.len(), 2);
    assert_ne!(kinds[0], kinds[1]);
}

#[test]
fn magics_inside_payloads_do_not_fool_the_walk() {
    // decoy payloads contain CCOB and __CLANG_OFFLOAD_BUNDLE__ literally (see the manifest).
    for rel in [
        "synthetic/decoy.bundle",
        "synthetic/decoy.ccob_v2_zlib0.ccob",
    ] {
        let data = read(rel);
        assert!(
            data.windows(4).filter(|w| w == b"CCOB").count()
                + data
                    .windows(24)
                    .filter(|w| w == b"__CLANG_OFFLOAD_BUNDLE__")
                    .count()
                > 1
        );
        let found = read_containers(&data, &ReadOptions::default()).unwrap();
        assert_eq!(found.len(), 1, "{rel}");
    }
}

#[test]
fn ccob_listing_inflates_only_the_table() {
    // A compressed bundle whose payload is corrupt after the table still lists; extracting
    // an entry past the corruption fails with a typed error. Entries are incompressible so
    // the corruption lies far (in output bytes) beyond the table.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect()
    };
    let (a, b, c) = (noise(200_000), noise(200_000), noise(200_000));
    let plain = rocload::container::write_bundle(
        &[
            ("hipv4-amdgcn-amd-amdhsa--gfx900", &a),
            ("hipv4-amdgcn-amd-amdhsa--gfx1030", &b),
            ("hipv4-amdgcn-amd-amdhsa--gfx1100", &c),
        ],
        4096,
    );
    for compression in [
        rocload::container::Compression::Zlib,
        rocload::container::Compression::Zstd,
    ] {
        let ccob = rocload::container::write_ccob(&plain, 3, compression);
        let found = read_containers(&ccob, &ReadOptions::default()).unwrap();
        let listed = found[0].entries().unwrap();
        let mut broken = ccob.clone();
        let n = broken.len();
        for b in &mut broken[n - 200..n - 100] {
            *b ^= 0x5a;
        }
        // Corruption late in a deflate stream may still decode: the hash, checked where the
        // payload is inflated to its end anyway, catches it.
        let when_complete = ReadOptions {
            verify: rocload::container::HashCheck::WhenComplete,
            ..ReadOptions::default()
        };
        let found = read_containers(&broken, &when_complete).unwrap();
        assert_eq!(found[0].entries().unwrap(), listed);
        assert_eq!(
            found[0].extract(0).unwrap().as_ref(),
            &a[..],
            "an early entry before the corruption still extracts"
        );
        let last = listed.len() - 1;
        let err = found[0].extract(last).unwrap_err();
        assert!(
            matches!(
                err,
                ContainerError::Corrupt { .. }
                    | ContainerError::HashMismatch { .. }
                    | ContainerError::SizeMismatch { .. }
            ),
            "{err}"
        );
    }
}
