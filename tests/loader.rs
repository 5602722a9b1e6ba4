//! The loader on the software agent with real clang-19/lld-19 code objects: kernels, device
//! functions and variables resolve; a kernel object calling device functions and reading a
//! variable from two other code objects loads with every relocated slot pointing where
//! ld.lld's static link of the same objects points it; unresolved imports, duplicates,
//! cycles and incompatible ISAs give clear answers.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{fixture, read};
use rocload::backend::SoftAgent;
use rocload::code_object::CodeObject;
use rocload::loader::{Agent, Executable, Linker, LoadError, Module, SymbolClass};

fn module(rel: &str) -> Module {
    Module::from_file(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn agent(isa: &str) -> Arc<dyn Agent> {
    SoftAgent::new(isa.parse().unwrap()).shared()
}

fn link(isa: &str, rels: &[&str]) -> Result<Executable, LoadError> {
    let modules: Vec<Module> = rels.iter().map(|r| module(r)).collect();
    Linker::new().link(&agent(isa), &modules)
}

fn u64_at(image: &[u8], at: u64) -> u64 {
    u64::from_le_bytes(image[at as usize..at as usize + 8].try_into().unwrap())
}

/// What every pointer-sized relocated slot of code object `index` points at, as
/// `slot description -> symbol+offset`. GOT slots are described by their target (their order
/// is the static linker's choice); slots inside variables by variable name and offset.
fn slot_targets(exe: &Executable, index: usize) -> BTreeMap<String, Vec<String>> {
    let co = &exe.code_objects()[index];
    let image = exe.image(index).unwrap();
    let parsed = CodeObject::parse(co.module.bytes()).unwrap();
    let got = parsed
        .section_by_name(".got")
        .map(|s| (s.addr, s.addr + s.size));
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in co.module.relocations() {
        let value = u64_at(&image, r.offset - co.module.first_vaddr());
        let (sym, off) = exe
            .symbol_at(value)
            .unwrap_or_else(|| panic!("slot {:#x} = {value:#x} points at no symbol", r.offset));
        let target = format!("{}+{off:#x}", sym.name);
        let slot = match got {
            Some((lo, hi)) if (lo..hi).contains(&r.offset) => "got".to_string(),
            _ => {
                let (holder, at) = exe
                    .symbol_at(co.load_delta + r.offset)
                    .expect("slot inside a variable");
                format!("{}+{at:#x}", holder.name)
            }
        };
        out.entry(slot).or_default().push(target);
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

const USER: &str = "codeobj/kernels_user.co";
const MATH: &str = "codeobj/devlib_math.co";
const DATA: &str = "codeobj/devlib_data.co";
const STATIC: &str = "codeobj/kernels_static.co";

#[test]
fn cross_object_links_agree_with_ld_lld() {
    // Dependency order whatever the order given.
    for order in [[USER, MATH, DATA], [DATA, USER, MATH], [MATH, DATA, USER]] {
        let exe = link("gfx1030", &order).unwrap();
        let user = order.iter().position(|r| *r == USER).unwrap();
        assert_eq!(
            exe.code_objects()[user].load_order,
            2,
            "the importer loads last"
        );
        let dynamic = slot_targets(&exe, user);
        let single = link("gfx1030", &[STATIC]).unwrap();
        let static_link = slot_targets(&single, 0);
        assert_eq!(
            dynamic, static_link,
            "every slot points where ld.lld pointed it"
        );
        // And they are the functions and variables we expect (from the fixture's README).
        assert_eq!(
            dynamic["got"],
            vec![
                "_ZN2dl3mixEif+0x0",
                "dl_add+0x0",
                "dl_scale+0x0",
                "dl_table+0x0"
            ]
        );
        assert_eq!(dynamic["table_ptr+0x0"], vec!["dl_table+0xc"]);
        assert_eq!(dynamic["counter_ptr+0x0"], vec!["local_counter+0x0"]);
    }
}

#[test]
fn symbols_resolve_by_raw_demangled_and_kd_names_and_by_address() {
    let exe = link("gfx1030", &[USER, MATH, DATA]).unwrap();
    let mix = exe.symbol("_ZN2dl3mixEif").unwrap();
    assert_eq!(mix.class, SymbolClass::Function);
    assert_eq!(exe.symbol("dl::mix(int, float)").unwrap(), mix);
    assert_eq!(exe.symbol("dl::mix").unwrap(), mix);
    assert_eq!(mix.code_object, 1);
    let k = exe.symbol("use_add").unwrap();
    assert_eq!(k.class, SymbolClass::Kernel);
    assert_eq!(exe.symbol("use_add.kd").unwrap(), k);
    assert_eq!(k.size, 64);
    assert!(k.code_address.is_some());
    let table = exe.symbol("dl_table").unwrap();
    assert_eq!((table.class, table.size), (SymbolClass::Variable, 64));
    // Address to symbol + offset, anywhere inside.
    assert_eq!(
        exe.symbol_at(mix.address + 4)
            .map(|(s, o)| (s.name.as_str(), o)),
        Some(("_ZN2dl3mixEif", 4))
    );
    assert_eq!(
        exe.symbol_at(table.address + 63)
            .map(|(s, o)| (s.name.as_str(), o)),
        Some(("dl_table", 63))
    );
    assert!(exe.symbol_at(1).is_none());
    // Symbol values agree with llvm-readelf's view of the file: address = load delta + value.
    let data = &exe.code_objects()[2];
    let parsed = CodeObject::parse(data.module.bytes()).unwrap();
    let file_value = parsed
        .variables()
        .iter()
        .find(|s| s.name == "dl_table")
        .unwrap()
        .value;
    assert_eq!(table.address, data.load_delta + file_value);
    // Loaded bytes are the file's: dl_table = 1..16.
    let image = exe.image(2).unwrap();
    let at = (file_value - data.module.first_vaddr()) as usize;
    let values: Vec<i32> = image[at..at + 64]
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(values, (1..=16).collect::<Vec<_>>());
    // Per code object: base, size, delta, URI.
    for c in exe.code_objects() {
        assert_eq!(c.base % 256, 0, "256-byte aligned like ROCr");
        assert!(c.size >= c.module.image_size());
        assert!(
            c.uri.starts_with("file://") && c.uri.contains("#offset=0&size="),
            "{}",
            c.uri
        );
    }
}

#[test]
fn unresolved_imports_are_all_reported_sorted() {
    let err = link("gfx1030", &[USER]).unwrap_err();
    let LoadError::Unresolved(missing) = &err else {
        panic!("{err}")
    };
    let names: Vec<&str> = missing.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["_ZN2dl3mixEif", "dl_add", "dl_scale", "dl_table"]);
    assert!(err.to_string().contains("4 unresolved import(s)"));
    // Only the variable missing: one name.
    let err = link("gfx1030", &[USER, MATH]).unwrap_err();
    assert!(
        matches!(&err, LoadError::Unresolved(m) if m.len() == 1 && m[0].name == "dl_table"),
        "{err}"
    );
}

#[test]
fn caller_definitions_satisfy_imports() {
    let fake = [
        ("_ZN2dl3mixEif", 0x1000_0000u64),
        ("dl_add", 0x1000_0100),
        ("dl_scale", 0x1000_0200),
        ("dl_table", 0x2000_0000),
    ];
    let mut linker = Linker::new();
    for (n, a) in fake {
        linker.define(n, a).unwrap();
    }
    assert!(matches!(
        linker.clone().define("dl_add", 1),
        Err(LoadError::Duplicate(_))
    ));
    let exe = linker.link(&agent("gfx1030"), &[module(USER)]).unwrap();
    let co = &exe.code_objects()[0];
    let image = exe.image(0).unwrap();
    let table_ptr = exe.symbol("table_ptr").unwrap();
    assert_eq!(u64_at(&image, table_ptr.address - co.base), 0x2000_000c);
    let mut got: Vec<u64> = co
        .module
        .relocations()
        .iter()
        .map(|r| u64_at(&image, r.offset - co.module.first_vaddr()))
        .filter(|v| *v >= 0x1000_0000 && *v <= 0x2000_0000)
        .collect();
    got.sort();
    assert_eq!(got, [0x1000_0000, 0x1000_0100, 0x1000_0200, 0x2000_0000]);
}

#[test]
fn duplicates_cycles_and_incompatible_isas_are_explained() {
    let err = link("gfx1030", &[MATH, MATH]).unwrap_err();
    let LoadError::Duplicate(d) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        d.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
        ["_ZN2dl3mixEif", "dl_add", "dl_scale"]
    );
    // The software agent links a cycle (it allocates before relocating).
    let exe = link(
        "gfx1030",
        &["codeobj/cycle_ping.co", "codeobj/cycle_pong.co"],
    )
    .unwrap();
    let targets = slot_targets(&exe, 0);
    assert_eq!(targets["got"], vec!["cycle_pong+0x0"]);
    assert_eq!(slot_targets(&exe, 1)["got"], vec!["cycle_ping+0x0"]);
    let plan = Linker::new()
        .plan(
            &"gfx1030".parse().unwrap(),
            &[
                module("codeobj/cycle_ping.co"),
                module("codeobj/cycle_pong.co"),
            ],
        )
        .unwrap();
    assert_eq!(plan.cycles, vec![vec![0, 1]]);
    // gfx1030 code on a gfx900 agent: refused with the target layer's reason.
    let err = link("gfx900", &[MATH]).unwrap_err();
    let LoadError::Incompatible {
        agent: agent_name,
        modules,
    } = &err
    else {
        panic!("{err}")
    };
    assert!(agent_name.contains("gfx900"), "{agent_name}");
    assert!(
        modules[0].reason.contains("gfx1030") || modules[0].reason.contains("gfx900"),
        "{}",
        modules[0].reason
    );
    // The extended policy does not extend gfx10.3 to gfx9; nothing fits.
    assert!(Linker::new()
        .policy(rocload::target::Policy::Extended)
        .link(&agent("gfx900"), &[module(MATH)])
        .is_err());
    // gfx1031 runs gfx1030 code only with the extended policy.
    assert!(link("gfx1031", &[MATH]).is_err());
    assert!(Linker::new()
        .policy(rocload::target::Policy::Extended)
        .link(&agent("gfx1031"), &[module(MATH)])
        .is_ok());
}

#[test]
fn synthetic_relocation_variants() {
    // ABS32_LO/HI pairs write the same 64-bit value ABS64 would (see the manifest).
    let exe = link("gfx1030", &["synthetic/kernels_user.abs32.co", MATH, DATA]).unwrap();
    let co = &exe.code_objects()[0];
    let image = exe.image(0).unwrap();
    let table = exe.symbol("dl_table").unwrap().address;
    assert_eq!(
        u64_at(&image, 0x44d0 - co.module.first_vaddr()),
        table + 0xc
    );
    // REL32 (which ROCr refuses) is applied PC-relative by the software agent.
    let exe = link("gfx1030", &["synthetic/kernels_user.rel32.co", MATH, DATA]).unwrap();
    let co = &exe.code_objects()[0];
    let image = exe.image(0).unwrap();
    let r = co
        .module
        .relocations()
        .iter()
        .find(|r| r.r_type == rocload::code_object::RelocationType::REL32)
        .unwrap();
    let at = (r.offset - co.module.first_vaddr()) as usize;
    let written = u32::from_le_bytes(image[at..at + 4].try_into().unwrap());
    let expected = exe
        .symbol("dl_add")
        .unwrap()
        .address
        .wrapping_add(r.addend as u64)
        .wrapping_sub(co.load_delta + r.offset);
    assert_eq!(written, expected as u32);
}

#[test]
fn fat_binaries_load_the_agents_best_entry() {
    use rocload::container::ReadOptions;
    use rocload::loader::fat_binary::modules_for_agent;
    let data = read("hip/vadd.compressed.o");
    for (isa, target) in [
        ("gfx1030", "gfx1030"),
        ("gfx90a:xnack+", "gfx90a:xnack+"),
        ("gfx906", "gfx906"),
    ] {
        let agent_isa = isa.parse().unwrap();
        let modules = modules_for_agent(
            &data,
            "vadd.compressed.o",
            &agent_isa,
            Default::default(),
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(modules.len(), 1);
        assert_eq!(modules[0].target().target.to_string(), target);
        let exe = Linker::new()
            .link(&SoftAgent::new(agent_isa).shared(), &modules)
            .unwrap();
        for k in [
            "vadd",
            "vadd.kd",
            "block_sum",
            "_Z4axpyIfEvT_PKS0_PS0_i",
            "axpy<float>",
            "void axpy<double>(double, double const*, double*, int)",
        ] {
            assert!(
                exe.symbol(k)
                    .is_some_and(|s| s.class == SymbolClass::Kernel),
                "{isa}: {k}"
            );
        }
    }
    let err = modules_for_agent(
        &data,
        "vadd.compressed.o",
        &"gfx1100".parse().unwrap(),
        Default::default(),
        &ReadOptions::default(),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("gfx1100") && text.contains("gfx1030") && text.contains("gfx90a"),
        "{text}"
    );
}
