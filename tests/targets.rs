//! The target layer against real clang 19 output (tests/fixtures/targets, made by
//! scripts/gen-target-fixtures.sh): the processor table, e_flags decoding for every processor
//! clang 19 knows, feature support, LLVM's bundle compatibility rule, and real entry ids.
//! The golden files hold llvm-readelf's / clang's answers; when the tools are installed the
//! answers are also recomputed live (required when CI is set).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;
use rocload::target::{
    check, check_entry, select, AgentIsa, ElfTarget, EntryId, Feature, FeatureMode, Policy,
    Processor, Request, TargetId,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/targets")
}

fn read(name: &str) -> String {
    let path = fixtures().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn llvm_tool(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("LLVM_BIN")
        .map_or_else(|| PathBuf::from("/usr/lib/llvm-19/bin"), PathBuf::from);
    let path = dir.join(name);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{name} not found in {} and CI is set", dir.display());
    }
    eprintln!(
        "skipping the live comparison: {name} not found in {} (set LLVM_BIN)",
        dir.display()
    );
    None
}

/// One line of readelf.txt.
struct Golden {
    file: String,
    requested: String,
    synthetic: bool,
    abi_version: u8,
    flags: String,
}

fn golden() -> Vec<Golden> {
    read("readelf.txt")
        .lines()
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 5, "{line}");
            Golden {
                file: cols[0].to_string(),
                requested: cols[1].to_string(),
                synthetic: cols[2] != "clang",
                abi_version: cols[3].parse().unwrap(),
                flags: cols[4].to_string(),
            }
        })
        .collect()
}

/// (os_abi, abi_version, e_flags) from an ELF64 little-endian header.
fn header(bytes: &[u8]) -> (u8, u8, u32) {
    assert_eq!(&bytes[..4], b"\x7fELF");
    assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 224, "EM_AMDGPU");
    (
        bytes[7],
        bytes[8],
        u32::from_le_bytes(bytes[48..52].try_into().unwrap()),
    )
}

/// What llvm-readelf prints after the hex value: processor name, then feature tokens and
/// generic version, as a decoded target would be printed by it.
fn readelf_view(target: &ElfTarget) -> String {
    let mut out = vec![target.target.processor().name().to_string()];
    let v3 = target.code_object_version == 3;
    // llvm-readelf prints xnack before sramecc.
    for feature in [Feature::Xnack, Feature::Sramecc] {
        let token = match (target.target.feature(feature), v3) {
            (None, _) => None,
            (Some(FeatureMode::On), true) => Some(feature.name().to_string()),
            (Some(FeatureMode::Off), true) => None,
            (Some(FeatureMode::Any), _) => Some(feature.name().to_string()),
            (Some(FeatureMode::On), false) => Some(format!("{feature}+")),
            (Some(FeatureMode::Off), false) => Some(format!("{feature}-")),
        };
        out.extend(token);
    }
    if target.generic_version != 0 {
        out.push(format!("generic_v{}", target.generic_version));
    }
    out.join(", ")
}

#[test]
fn table_covers_every_processor_clang_19_knows() {
    let listed: Vec<String> = read("clang-processors.txt")
        .lines()
        .map(str::to_string)
        .collect();
    assert!(listed.len() > 60, "suspiciously short processor list");
    for name in &listed {
        let p = Processor::by_name(name).unwrap_or_else(|| panic!("{name} is not in the table"));
        assert!(
            p.known_to_clang19,
            "{name} is listed by llc 19 but marked unknown to clang 19"
        );
    }
    for p in Processor::all() {
        assert_eq!(
            listed.contains(&p.name.to_string()),
            p.known_to_clang19,
            "{}: known_to_clang19",
            p.name
        );
        for a in p.aliases {
            assert!(
                listed.contains(&a.to_string()),
                "alias {a} not known to llc 19"
            );
        }
    }
    if let Some(llc) = llvm_tool("llc") {
        let out = Command::new(llc)
            .args(["-march=amdgcn", "-mcpu=help"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let mut live: Vec<String> = text
            .lines()
            .take_while(|l| !l.starts_with("Available features"))
            .filter(|l| l.contains(" - Select the "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .filter(|n| n != "generic" && n != "generic-hsa")
            .collect();
        live.sort();
        let mut golden = listed.clone();
        golden.sort();
        assert_eq!(
            live, golden,
            "llc's processor list changed; rerun scripts/gen-target-fixtures.sh"
        );
    }
}

#[test]
fn e_flags_decode_like_llvm_readelf_for_every_fixture() {
    let golden = golden();
    assert!(golden.len() >= 100);
    let mut covered = std::collections::BTreeSet::new();
    for g in &golden {
        let bytes = std::fs::read(fixtures().join("co").join(&g.file)).unwrap();
        let (os_abi, abi_version, e_flags) = header(&bytes);
        assert_eq!(abi_version, g.abi_version, "{}", g.file);
        let decoded = ElfTarget::from_header(os_abi, abi_version, e_flags)
            .unwrap_or_else(|e| panic!("{}: {e}", g.file));
        // The golden Flags line is "0xHEX, <processor>, <tokens...>".
        let (hex, rest) = g.flags.split_once(", ").unwrap_or((&g.flags, ""));
        assert_eq!(
            u32::from_str_radix(hex.trim_start_matches("0x"), 16).unwrap(),
            e_flags,
            "{}",
            g.file
        );
        assert_eq!(
            readelf_view(&decoded),
            rest,
            "{}: decoded {:?}",
            g.file,
            decoded
        );
        // Encoding gives the same word back.
        assert_eq!(
            (decoded.abi_version(), decoded.e_flags()),
            (abi_version, e_flags),
            "{}",
            g.file
        );
        if !g.synthetic {
            // What was asked of clang is what the header says (aliases map to their processor).
            let requested: TargetId = g.requested.parse().unwrap();
            assert_eq!(decoded.target, requested, "{}", g.file);
            assert_eq!(
                Processor::by_name(g.requested.split(':').next().unwrap())
                    .unwrap()
                    .mach,
                e_flags & 0xff
            );
            covered.insert(decoded.target.processor().name().to_string());
        }
    }
    for p in Processor::all().iter().filter(|p| p.known_to_clang19) {
        assert!(covered.contains(p.name), "no clang fixture for {}", p.name);
    }
    for v in [3, 4, 5, 6] {
        assert!(
            golden.iter().any(|g| g.abi_version + 2 == v),
            "no v{v} fixture"
        );
    }
}

#[test]
fn e_flags_golden_matches_live_llvm_readelf() {
    let Some(readelf) = llvm_tool("llvm-readelf") else {
        return;
    };
    let golden = golden();
    let files: Vec<PathBuf> = golden
        .iter()
        .map(|g| fixtures().join("co").join(&g.file))
        .collect();
    let out = Command::new(readelf)
        .arg("-h")
        .args(&files)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // With several inputs llvm-readelf prints "File: <path>" before each header.
    let mut live: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(path) = line.strip_prefix("File: ") {
            current = Path::new(path)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
        } else if let Some(v) = line.strip_prefix("ABI Version:") {
            live.entry(current.clone()).or_default().0 = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("Flags:") {
            live.entry(current.clone()).or_default().1 = v.trim().to_string();
        }
    }
    for g in &golden {
        assert_eq!(
            live.get(&g.file),
            Some(&(g.abi_version.to_string(), g.flags.clone())),
            "{}",
            g.file
        );
    }
}

#[test]
fn feature_support_matches_what_clang_accepts() {
    let text = read("feature-support.txt");
    let mut seen = 0;
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let p = Processor::by_name(cols[0]).unwrap();
        let feature = match cols[1] {
            "xnack" => Feature::Xnack,
            "sramecc" => Feature::Sramecc,
            other => panic!("{other}"),
        };
        assert_eq!(p.supports(feature), cols[2] == "accepted", "{line}");
        // Our parser agrees with clang about which target IDs are valid.
        assert_eq!(
            format!("{}:{}+", p.name, feature)
                .parse::<TargetId>()
                .is_ok(),
            cols[2] == "accepted",
            "{line}"
        );
        seen += 1;
    }
    let canonical = Processor::all()
        .iter()
        .filter(|p| p.known_to_clang19)
        .count();
    assert_eq!(
        seen,
        2 * canonical,
        "every canonical clang-19 processor × 2 features"
    );
}

#[test]
fn compatibility_matches_clang_offload_bundler() {
    let text = read("bundler-compat.txt");
    let mut n = 0;
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        // The bundler is given a fully specified device target, which is what an agent is.
        let agent: AgentIsa = cols[0].parse().unwrap();
        assert_eq!(
            agent.to_string(),
            cols[0],
            "fixture agents are fully specified"
        );
        let entry = EntryId::parse(cols[1]).unwrap();
        let verdict = check_entry(&agent, &entry, Policy::Strict);
        assert_eq!(
            verdict.is_accepted(),
            cols[2] == "compatible",
            "{line}: {verdict}"
        );
        n += 1;
    }
    assert!(n >= 100);
}

#[test]
fn requests_follow_clang_offload_bundler() {
    // bundler-compat.txt asks with every feature given, bundler-requests.txt with features
    // left out (`gfx90a:xnack+` against a `gfx90a` entry, `gfx942:xnack-`, plain `gfx90a`).
    let mut n = 0;
    for file in ["bundler-compat.txt", "bundler-requests.txt"] {
        for line in read(file).lines() {
            let cols: Vec<&str> = line.split('\t').collect();
            for request in [
                cols[0].to_string(),
                format!("hipv4-amdgcn-amd-amdhsa--{}", cols[0]),
            ] {
                let verdict = Request::parse(&request).unwrap().check(cols[1]);
                assert_eq!(
                    verdict.is_ok(),
                    cols[2] == "compatible",
                    "{file}: {line}: {verdict:?}"
                );
            }
            n += 1;
        }
    }
    assert!(n >= 300, "{n}");
}

#[test]
fn real_bundle_entry_ids() {
    let ids: Vec<String> = read("bundle-ids.txt").lines().map(str::to_string).collect();
    for id in &ids {
        let e = EntryId::parse(id).unwrap();
        assert_eq!(e.to_string(), *id);
        assert_eq!(e.is_host(), id.starts_with("host-"));
    }
    let pick = |agent: &str, policy| {
        let s = select(&agent.parse().unwrap(), &ids, policy);
        s.chosen_candidate().map(|c| c.id.to_string())
    };
    let id = |suffix: &str| Some(format!("hipv4-amdgcn-amd-amdhsa--{suffix}"));
    assert_eq!(pick("gfx1030", Policy::Strict), id("gfx1030"));
    assert_eq!(pick("gfx1031", Policy::Strict), id("gfx10-3-generic"));
    assert_eq!(pick("gfx1036", Policy::Extended), id("gfx10-3-generic"));
    assert_eq!(pick("gfx1100", Policy::Strict), id("gfx1100"));
    assert_eq!(pick("gfx1101", Policy::Extended), None);
    assert_eq!(
        pick("gfx90a:xnack+", Policy::Strict),
        id("gfx90a:sramecc+:xnack+")
    );
    assert_eq!(pick("gfx90a:xnack-", Policy::Strict), id("gfx90a:xnack-"));
    assert_eq!(pick("gfx90a:sramecc-:xnack+", Policy::Strict), None);
    let s = select(
        &"gfx90a:sramecc-:xnack+".parse().unwrap(),
        &ids,
        Policy::Strict,
    );
    let text = s.no_match_error().to_string();
    assert!(
        text.contains("needs sramecc on; agent has sramecc off"),
        "{text}"
    );
    assert!(
        text.contains("needs xnack off; agent has xnack on"),
        "{text}"
    );
    assert!(
        text.contains("host-x86_64-unknown-linux--: host code"),
        "{text}"
    );
}

#[test]
fn generic_code_objects_from_clang_run_on_their_members() {
    for g in golden().iter().filter(|g| g.file.contains("-generic")) {
        let bytes = std::fs::read(fixtures().join("co").join(&g.file)).unwrap();
        let (os_abi, abi, flags) = header(&bytes);
        let elf = ElfTarget::from_header(os_abi, abi, flags).unwrap();
        let generic = elf.target.known_processor().unwrap();
        for member in generic.generic_members() {
            let agent = AgentIsa::with_defaults(member).unwrap();
            let v = check(
                &agent,
                &elf.target,
                Some(elf.generic_version),
                Policy::Strict,
            );
            // Features the generic code pins must still match the default agent (xnack off).
            let pinned_on = elf.target.xnack() == Some(FeatureMode::On);
            assert_eq!(
                v.is_accepted(),
                !pinned_on,
                "{} on {}: {v}",
                g.file,
                member.name
            );
        }
        let outsider = AgentIsa::with_defaults(Processor::by_name("gfx908").unwrap()).unwrap();
        assert!(!check(
            &outsider,
            &elf.target,
            Some(elf.generic_version),
            Policy::Extended
        )
        .is_accepted());
    }
}

fn target_id_strategy() -> impl Strategy<Value = String> {
    let names: Vec<&'static str> = Processor::all().iter().map(|p| p.name).collect();
    (
        prop::sample::select(names),
        prop::option::of(any::<bool>()),
        prop::option::of(any::<bool>()),
        any::<bool>(),
    )
        .prop_map(|(name, xnack, sramecc, xnack_first)| {
            let feat = |f: &str, v: Option<bool>| {
                v.map(|on| format!(":{f}{}", if on { '+' } else { '-' }))
            };
            let (x, s) = (
                feat("xnack", xnack).unwrap_or_default(),
                feat("sramecc", sramecc).unwrap_or_default(),
            );
            if xnack_first {
                format!("{name}{x}{s}")
            } else {
                format!("{name}{s}{x}")
            }
        })
}

proptest! {
    #[test]
    fn display_of_parse_is_a_fixed_point(text in target_id_strategy()) {
        if let Ok(id) = text.parse::<TargetId>() {
            let printed = id.to_string();
            let reparsed: TargetId = printed.parse().unwrap();
            prop_assert_eq!(&reparsed, &id);
            prop_assert_eq!(reparsed.to_string(), printed);
        }
    }

    #[test]
    fn canonical_ids_round_trip_exactly(
        p in prop::sample::select(Processor::all().iter().collect::<Vec<_>>()),
        xnack in prop::option::of(any::<bool>()),
        sramecc in prop::option::of(any::<bool>()),
    ) {
        let mode = |supported: bool, v: Option<bool>| if supported { v.map(FeatureMode::from_bool) } else { None };
        let id = TargetId::new(p, mode(p.supports_xnack, xnack), mode(p.supports_sramecc, sramecc)).unwrap();
        let text = id.to_string();
        prop_assert_eq!(text.parse::<TargetId>().unwrap(), id.clone());
        let isa = id.isa_name();
        prop_assert_eq!(TargetId::parse_isa_name(&isa).unwrap(), id);
    }

    #[test]
    fn entry_ids_round_trip(text in "[a-z0-9]{1,6}-[a-z0-9_]{1,8}-[a-z]{1,5}-[a-z]{1,6}-[a-z]{0,3}(-[a-z0-9:+-]{0,20})?") {
        if let Ok(e) = EntryId::parse(&text) {
            prop_assert_eq!(e.to_string(), text);
        }
    }

    #[test]
    fn select_never_panics(ids in prop::collection::vec(any::<String>(), 0..8), agent in target_id_strategy()) {
        if let Ok(agent) = agent.parse::<AgentIsa>() {
            for policy in [Policy::Strict, Policy::Extended] {
                let s = select(&agent, &ids, policy);
                prop_assert_eq!(s.candidates.len(), ids.len());
                let _ = s.no_match_error().to_string();
                let _ = serde_json::to_string(&s).unwrap();
            }
        }
    }

    #[test]
    fn select_never_panics_on_near_miss_ids(
        suffixes in prop::collection::vec("[a-z0-9:+_.-]{0,24}", 0..8),
        kinds in prop::collection::vec(prop::sample::select(vec!["hip", "hipv4", "hcc", "openmp", "host", "x"]), 8),
    ) {
        let ids: Vec<String> = suffixes.iter().zip(&kinds).map(|(s, k)| format!("{k}-amdgcn-amd-amdhsa--{s}")).collect();
        let agent: AgentIsa = "gfx1031".parse().unwrap();
        let s = select(&agent, &ids, Policy::Extended);
        prop_assert_eq!(s.candidates.len(), ids.len());
        let _ = s.no_match_error().to_string();
    }

    #[test]
    fn e_flags_decoding_never_panics_and_round_trips(os_abi in prop::sample::select(vec![0u8, 64]), abi in 0u8..6, flags in any::<u32>()) {
        if let Ok(t) = ElfTarget::from_header(os_abi, abi, flags) {
            // Re-encoding is canonical: equal except that a v4+ feature field of 0 on a processor
            // with the feature reads as (and re-encodes as) any.
            let again = ElfTarget::from_header(os_abi, t.abi_version(), t.e_flags()).unwrap();
            prop_assert_eq!(again, t);
        }
    }
}
