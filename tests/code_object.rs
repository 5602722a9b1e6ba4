//! Behaviour of the code-object layer on real clang-19 output and on that output corrupted
//! in the ways the spec forbids: classification, loader-relevant checks, typed errors.
//! Expected values come from llvm-readelf / llvm-cxxfilt or from the ELF and AMDGPU specs.

mod code_object_common;

use std::process::Command;

use code_object_common::{build, tool, Unit, KERNELS_C, KERNELS_CPP, LIB_C, TYPED_IMPORTS_S};
use rocload::code_object::{
    symbols_report, CodeObject, CodeObjectError, KernelIssue, RelocationIssueKind, SymbolKind,
    SymbolTableKind,
};

fn read(units: &[Unit<'_>], mcpu: &str, flags: &[&str], link: &[&str]) -> Option<Vec<u8>> {
    build(units, mcpu, flags, link).map(|p| std::fs::read(p).unwrap())
}

const LIB: Unit<'static> = Unit {
    name: "lib.c",
    source: LIB_C,
};
const KERNELS: Unit<'static> = Unit {
    name: "kernels.c",
    source: KERNELS_C,
};
const CPP: Unit<'static> = Unit {
    name: "kernels.cpp",
    source: KERNELS_CPP,
};

fn names<'a>(s: &[rocload::code_object::Symbol<'a>]) -> Vec<&'a str> {
    s.iter().map(|s| s.name).collect()
}

fn kernels_co() -> Option<Vec<u8>> {
    read(&[KERNELS], "gfx1030", &[], &[])
}

/// File offset of a section by name, from a parse of the intact bytes.
fn section(bytes: &[u8], name: &str) -> (u64, u64) {
    let co = CodeObject::parse(bytes).unwrap();
    let s = co
        .section_by_name(name)
        .unwrap_or_else(|| panic!("no {name}"));
    (s.offset, s.size)
}

fn put_u32(bytes: &mut [u8], at: u64, v: u32) {
    bytes[at as usize..at as usize + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(bytes: &mut [u8], at: u64, v: u64) {
    bytes[at as usize..at as usize + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn library_exports_functions_and_variables() {
    let Some(bytes) = read(&[LIB], "gfx1030", &[], &[]) else {
        return;
    };
    let co = CodeObject::parse(&bytes).unwrap();
    assert!(co.kernels().is_empty());
    let mut funcs = names(co.functions());
    funcs.sort();
    assert_eq!(funcs, ["helper", "lib_add", "lib_mul", "lib_weak"]);
    let helper = co.functions().iter().find(|s| s.name == "helper").unwrap();
    assert_eq!(helper.binding.as_str(), "local");
    let weak = co
        .functions()
        .iter()
        .find(|s| s.name == "lib_weak")
        .unwrap();
    assert_eq!(weak.binding.as_str(), "weak");
    // Exports are what .dynsym defines: the static helper is not among them.
    let mut exports = names(co.exports());
    exports.sort();
    assert_eq!(
        exports,
        [
            "lib_add",
            "lib_array",
            "lib_mul",
            "lib_ptr",
            "lib_var",
            "lib_weak"
        ]
    );
    assert!(co.imports().is_empty());
    assert!(
        co.relocation_issues().is_empty(),
        "{:?}",
        co.relocation_issues()
    );
}

#[test]
fn kernels_have_descriptors_code_and_metadata() {
    let Some(bytes) = kernels_co() else { return };
    let co = CodeObject::parse(&bytes).unwrap();
    assert_eq!(
        co.code_object_version(),
        5,
        "clang 19 defaults to code object v5"
    );
    let names: Vec<_> = co.kernels().iter().map(|k| k.name).collect();
    assert_eq!(names, ["kern", "kern2", "lds_user"]);
    for k in co.kernels() {
        let d = k.descriptor.expect("descriptor in .rodata");
        let code = k.code_symbol.expect("kernel code symbol");
        assert_eq!(d.entry_address(k.descriptor_address), Some(code.value));
        let md = co.kernel_metadata(k).unwrap();
        assert_eq!(md.symbol, k.descriptor_symbol.name);
        assert_eq!(u64::from(d.kernarg_size), md.kernarg_segment_size);
        assert_eq!(u64::from(d.wavefront_size()), md.wavefront_size);
    }
    let lds = co.kernel_descriptor("lds_user.kd").unwrap();
    assert_eq!(lds.group_segment_fixed_size, 1024, "256 ints of LDS");
    // kern imports two functions and a variable; table is exported.
    let imports: Vec<_> = co.imports().iter().map(|s| (s.name, s.kind)).collect();
    assert_eq!(
        imports,
        [
            ("lib_add", SymbolKind::Notype),
            ("lib_mul", SymbolKind::Notype),
            ("lib_var", SymbolKind::Notype)
        ]
    );
    assert_eq!(co.typed_imports().count(), 0);
    assert!(co.relocations().iter().all(|r| r.r_type.rocr_applies()));
    assert!(co.relocation_issues().is_empty());
    // The load image ends where the last PT_LOAD does.
    let last = co.segments().last().unwrap();
    assert_eq!(co.load_size(), last.vaddr + last.mem_size);
    // Views borrow: segment bytes point into the input.
    let text = co.segments().find(|s| s.flags.executable()).unwrap();
    let seg = co.segment_bytes(text);
    assert_eq!(seg.as_ptr(), bytes[text.offset as usize..].as_ptr());
}

#[test]
fn static_link_resolves_everything() {
    let Some(bytes) = read(&[KERNELS, LIB], "gfx1030", &[], &[]) else {
        return;
    };
    let co = CodeObject::parse(&bytes).unwrap();
    assert!(co.imports().is_empty());
    assert_eq!(co.kernels().len(), 3);
    assert!(co.functions().iter().any(|f| f.name == "lib_add"));
    assert!(co.kernel_issues().is_empty(), "{:?}", co.kernel_issues());
    // --emit-relocs keeps .rela.text (GOTPCREL, REL32_LO...): applied by the linker, not reported.
    let Some(bytes) = read(&[KERNELS, LIB], "gfx1030", &[], &["--emit-relocs"]) else {
        return;
    };
    let co = CodeObject::parse(&bytes).unwrap();
    assert!(!co.static_relocations().is_empty());
    assert!(
        co.relocation_issues().is_empty(),
        "{:?}",
        co.relocation_issues()
    );
}

#[test]
fn typed_imports_are_flagged() {
    let Some(bytes) = read(
        &[Unit {
            name: "typed.s",
            source: TYPED_IMPORTS_S,
        }],
        "gfx1030",
        &[],
        &[],
    ) else {
        return;
    };
    let co = CodeObject::parse(&bytes).unwrap();
    let typed: Vec<_> = co.typed_imports().map(|s| (s.name, s.kind)).collect();
    assert_eq!(
        typed,
        [
            ("typed_func", SymbolKind::Func),
            ("typed_var", SymbolKind::Object)
        ]
    );
    let issues: Vec<_> = co
        .relocation_issues()
        .iter()
        .map(|i| {
            (
                i.relocation.symbol.unwrap().name,
                i.kind.clone(),
                i.blocks_rocr,
                i.blocks_rocload,
            )
        })
        .collect();
    assert_eq!(
        issues,
        [
            (
                "typed_func",
                RelocationIssueKind::UndefinedTypedSymbol {
                    symbol_type: SymbolKind::Func
                },
                true,
                false
            ),
            (
                "typed_var",
                RelocationIssueKind::UndefinedTypedSymbol {
                    symbol_type: SymbolKind::Object
                },
                true,
                false
            ),
        ]
    );
    let report = symbols_report("typed", &co);
    assert!(report.imports.iter().all(|i| i.rocr_mishandles));
    assert!(report.to_string().contains("typed import"));
}

#[test]
fn unsupported_relocation_types_are_reported_before_loading() {
    let Some(mut bytes) = kernels_co() else {
        return;
    };
    let (rela, size) = section(&bytes, ".rela.dyn");
    assert!(size >= 48, "at least two dynamic relocations");
    // r_info of entry 0 and 1: keep the symbol, change the type (AMDGPUUsage numbers).
    let info_at = |i: u64| rela + 24 * i + 8;
    let sym0 = u64::from_le_bytes(
        bytes[info_at(0) as usize..info_at(0) as usize + 8]
            .try_into()
            .unwrap(),
    ) >> 32;
    let sym1 = u64::from_le_bytes(
        bytes[info_at(1) as usize..info_at(1) as usize + 8]
            .try_into()
            .unwrap(),
    ) >> 32;
    put_u64(&mut bytes, info_at(0), (sym0 << 32) | 5); // R_AMDGPU_REL64
    put_u64(&mut bytes, info_at(1), (sym1 << 32) | 7); // R_AMDGPU_GOTPCREL
    let co = CodeObject::parse(&bytes).unwrap();
    let kinds: Vec<_> = co
        .relocation_issues()
        .iter()
        .map(|i| (i.relocation.index, i.kind.clone()))
        .collect();
    assert_eq!(
        kinds,
        [
            (0, RelocationIssueKind::RocrUnsupportedType),
            (1, RelocationIssueKind::UnsupportedType)
        ]
    );
    let blocking_rocload: Vec<_> = co
        .unsupported_relocations()
        .map(|i| i.relocation.index)
        .collect();
    assert_eq!(blocking_rocload, [1], "rocload applies REL64 itself");
    assert_eq!(co.rocr_unsupported_relocations().count(), 2);
    assert!(co.relocation_issues()[1]
        .to_string()
        .contains("R_AMDGPU_GOTPCREL"));
}

#[test]
fn relocation_outside_every_segment_is_reported() {
    let Some(mut bytes) = kernels_co() else {
        return;
    };
    let (rela, _) = section(&bytes, ".rela.dyn");
    put_u64(&mut bytes, rela, 0x7fff_0000); // r_offset of entry 0
    let co = CodeObject::parse(&bytes).unwrap();
    let issue = &co.relocation_issues()[0];
    assert_eq!(issue.kind, RelocationIssueKind::OutsideLoadSegments);
    assert!(issue.blocks_rocload && issue.blocks_rocr);
}

#[test]
fn descriptor_metadata_mismatch_is_reported() {
    let Some(mut bytes) = kernels_co() else {
        return;
    };
    let co = CodeObject::parse(&bytes).unwrap();
    let k = co.kernel("kern2").unwrap();
    let md_size = co.kernel_metadata(k).unwrap().kernarg_segment_size;
    let seg = co
        .segments()
        .find(|s| s.contains(k.descriptor_address, 64))
        .unwrap();
    let file_at = seg.offset + (k.descriptor_address - seg.vaddr);
    drop(co);
    put_u32(&mut bytes, file_at + 8, 4096); // kernarg_size
    let co = CodeObject::parse(&bytes).unwrap();
    assert_eq!(
        co.kernel_issues(),
        [KernelIssue::Mismatch {
            kernel: "kern2".into(),
            field: "kernarg_size",
            descriptor: 4096,
            metadata: md_size
        }]
    );
}

#[test]
fn cpp_names_are_demangled_like_llvm_cxxfilt() {
    let Some(bytes) = read(&[CPP], "gfx90a", &["-mcode-object-version=4"], &[]) else {
        return;
    };
    let Some(cxxfilt) = tool("llvm-cxxfilt") else {
        return;
    };
    let co = CodeObject::parse(&bytes).unwrap();
    assert_eq!(co.code_object_version(), 4);
    let mut names: Vec<&str> = co
        .symbol_table()
        .iter()
        .map(|s| s.name)
        .filter(|n| n.starts_with("_Z"))
        .collect();
    names.extend(co.kernels().iter().map(|k| k.descriptor_symbol.name));
    assert!(names.len() >= 4, "{names:?}");
    let out = Command::new(cxxfilt).args(&names).output().unwrap();
    let expected: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    for (name, want) in names.iter().zip(expected) {
        let ours = rocload::code_object::demangle(name).unwrap_or_else(|| name.to_string());
        assert_eq!(ours, want, "{name}");
    }
    // wave64 on gfx90a, with AGPR counts in the metadata.
    for k in co.kernels() {
        assert_eq!(k.descriptor.unwrap().wavefront_size(), 64);
        assert!(co.kernel_metadata(k).unwrap().agpr_count.is_some());
    }
}

#[test]
fn symbols_report_has_the_cli_shape() {
    let Some(bytes) = kernels_co() else { return };
    let co = CodeObject::parse(&bytes).unwrap();
    let report = symbols_report("hipv4-amdgcn-amd-amdhsa--gfx1030", &co);
    let json: serde_json::Value = serde_json::to_value(&report).unwrap();
    for key in [
        "id",
        "target",
        "code_object_version",
        "kernels",
        "functions",
        "variables",
        "imports",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["id"], "hipv4-amdgcn-amd-amdhsa--gfx1030");
    assert_eq!(json["code_object_version"], 5);
    let k = &json["kernels"][0];
    for key in [
        "name",
        "symbol",
        "kernarg_size",
        "group_segment_fixed_size",
        "private_segment_fixed_size",
        "wavefront_size",
        "args",
    ] {
        assert!(k.get(key).is_some(), "kernel missing {key}");
    }
    for key in ["offset", "size", "value_kind"] {
        assert!(k["args"][0].get(key).is_some(), "arg missing {key}");
    }
    let table = &json["variables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "table")
        .unwrap();
    let sym = co
        .dynamic_symbols()
        .iter()
        .find(|s| s.name == "table")
        .unwrap();
    assert_eq!(table["offset"], sym.value);
    assert_eq!(table["size"], 16);
    assert_eq!(json["imports"][0]["type"], "notype");
    let text = report.to_string();
    assert!(
        text.contains("lds_user") && text.contains("imports (3)"),
        "{text}"
    );
}

// ---- bad input ----

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    let Some(bytes) = kernels_co() else { return };
    for len in 0..bytes.len() {
        // Any prefix either fails or (when only trailing section data is cut) is still
        // consistent; what matters is that nothing panics and errors are typed.
        let _ = CodeObject::parse(&bytes[..len]);
    }
    // The section headers are at the end: cutting the last byte is always an error naming them.
    let err = CodeObject::parse(&bytes[..bytes.len() - 1]).unwrap_err();
    assert!(matches!(err, CodeObjectError::Truncated { .. }), "{err}");
    assert!(err.to_string().contains("section header"), "{err}");
}

#[test]
fn header_checks_give_clear_errors() {
    let Some(bytes) = kernels_co() else { return };
    let mut v2 = bytes.clone();
    v2[8] = 0; // EI_ABIVERSION 0: code object v2
    let err = CodeObject::parse(&v2).unwrap_err();
    assert!(
        matches!(err, CodeObjectError::Unsupported { .. }) && err.to_string().contains("v2"),
        "{err}"
    );
    let mut x86 = bytes.clone();
    x86[18..20].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    assert!(matches!(
        CodeObject::parse(&x86),
        Err(CodeObjectError::NotAmdgpu { .. })
    ));
    let mut pal = bytes.clone();
    pal[7] = 65; // AMDGPU PAL
    assert!(matches!(
        CodeObject::parse(&pal),
        Err(CodeObjectError::NotAmdgpu { .. })
    ));
    assert!(matches!(
        CodeObject::parse(b"CCOB...."),
        Err(CodeObjectError::NotElf { .. })
    ));
    assert!(matches!(
        CodeObject::parse(&[]),
        Err(CodeObjectError::NotElf { .. })
    ));
    if let Ok(host) = std::fs::read("/proc/self/exe") {
        assert!(matches!(
            CodeObject::parse(&host),
            Err(CodeObjectError::NotAmdgpu { .. })
        ));
    }
}

#[test]
fn relocatable_objects_are_unsupported() {
    let Some(path) = build(&[KERNELS], "gfx1030", &[], &[]) else {
        return;
    };
    let obj = path.parent().unwrap().join("kernels.c.o");
    let bytes = std::fs::read(obj).unwrap();
    let err = CodeObject::parse(&bytes).unwrap_err();
    assert!(err.to_string().contains("ld.lld -shared"), "{err}");
}

/// Byte offset of program header `i`.
fn phdr(bytes: &[u8], i: u64) -> u64 {
    u64::from_le_bytes(bytes[32..40].try_into().unwrap()) + 56 * i
}

fn load_indices(bytes: &[u8]) -> Vec<u64> {
    let co = CodeObject::parse(bytes).unwrap();
    co.segments().map(|s| u64::from(s.index)).collect()
}

#[test]
fn overlapping_or_huge_loads_are_rejected() {
    let Some(bytes) = kernels_co() else { return };
    let loads = load_indices(&bytes);
    // Second PT_LOAD moved onto the first.
    let mut overlap = bytes.clone();
    put_u64(&mut overlap, phdr(&bytes, loads[1]) + 16, 0);
    let err = CodeObject::parse(&overlap).unwrap_err();
    assert!(
        matches!(&err, CodeObjectError::Invalid { what, .. } if *what == format!("program header {}", loads[1])),
        "{err}"
    );
    // Last PT_LOAD with a 1 TiB p_memsz.
    let mut huge = bytes.clone();
    put_u64(
        &mut huge,
        phdr(&bytes, *loads.last().unwrap()) + 40,
        1 << 40,
    );
    assert!(matches!(
        CodeObject::parse(&huge),
        Err(CodeObjectError::LimitExceeded { .. })
    ));
    // p_memsz that wraps the address space.
    let mut wrap = bytes.clone();
    put_u64(
        &mut wrap,
        phdr(&bytes, *loads.last().unwrap()) + 40,
        u64::MAX,
    );
    assert!(matches!(
        CodeObject::parse(&wrap),
        Err(CodeObjectError::Invalid { .. })
    ));
    // p_filesz beyond the file.
    let mut beyond = bytes.clone();
    put_u64(
        &mut beyond,
        phdr(&bytes, loads[0]) + 32,
        bytes.len() as u64 + 1,
    );
    let err = CodeObject::parse(&beyond).unwrap_err();
    assert!(err.to_string().contains("past the end"), "{err}");
}

#[test]
fn symbol_and_relocation_indices_out_of_range_are_errors() {
    let Some(bytes) = kernels_co() else { return };
    // st_name of .dynsym entry 1 far beyond .dynstr.
    let (dynsym, _) = section(&bytes, ".dynsym");
    let mut bad = bytes.clone();
    put_u32(&mut bad, dynsym + 24, 0x00ff_ffff);
    match CodeObject::parse(&bad).unwrap_err() {
        CodeObjectError::InvalidSymbol { table, index, .. } => {
            assert_eq!((table, index), (SymbolTableKind::Dynsym, 1));
        }
        e => panic!("{e}"),
    }
    // st_shndx beyond the section count.
    let mut bad = bytes.clone();
    bad[(dynsym + 24 + 6) as usize..(dynsym + 24 + 8) as usize]
        .copy_from_slice(&0x0500u16.to_le_bytes());
    assert!(matches!(
        CodeObject::parse(&bad),
        Err(CodeObjectError::InvalidSymbol { index: 1, .. })
    ));
    // Relocation 0 naming symbol 1000.
    let (rela, _) = section(&bytes, ".rela.dyn");
    let mut bad = bytes.clone();
    put_u64(&mut bad, rela + 8, (1000 << 32) | 3);
    match CodeObject::parse(&bad).unwrap_err() {
        CodeObjectError::InvalidRelocation {
            section,
            index,
            offset,
            ..
        } => {
            assert_eq!((section.as_str(), index, offset), (".rela.dyn", 0, rela));
        }
        e => panic!("{e}"),
    }
}

#[test]
fn malformed_metadata_and_lying_notes_are_errors() {
    let Some(bytes) = kernels_co() else { return };
    let co = CodeObject::parse(&bytes).unwrap();
    let note = co.notes().iter().find(|n| n.n_type == 32).unwrap();
    let (header, desc) = (note.offset, note.desc_offset);
    drop(co);
    // The MessagePack map header replaced by a reserved marker (0xc1).
    let mut bad = bytes.clone();
    bad[desc as usize] = 0xc1;
    match CodeObject::parse(&bad).unwrap_err() {
        CodeObjectError::Metadata { offset, .. } => assert_eq!(offset, desc),
        e => panic!("{e}"),
    }
    // n_descsz larger than the note segment.
    let mut bad = bytes.clone();
    put_u32(&mut bad, header + 4, 0x10_0000);
    match CodeObject::parse(&bad).unwrap_err() {
        CodeObjectError::InvalidNote { offset, .. } => assert_eq!(offset, header),
        e => panic!("{e}"),
    }
}

// ---- committed fixtures (tests/fixtures, made by scripts/gen-fixtures.sh) ----

fn fixture(rel: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn fixture_versions_follow_ei_abiversion() {
    // File names say the version the fixture was built (or, for v3, patched) as.
    for (file, version) in [
        ("synthetic/hf_cov3.gfx900.co", 3),
        ("codeobj/hf_cov4.gfx1030.co", 4),
        ("codeobj/hf_cov5.gfx900_xnack-.co", 5),
        ("codeobj/hf_cov6.gfx1030.co", 6),
    ] {
        let bytes = fixture(file);
        let co = CodeObject::parse(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(co.code_object_version(), version, "{file}");
        assert!(
            co.kernel_issues().is_empty(),
            "{file}: {:?}",
            co.kernel_issues()
        );
    }
}

#[test]
fn fixture_rel32_is_rejected_for_rocr_only() {
    let bytes = fixture("synthetic/kernels_user.rel32.co");
    let co = CodeObject::parse(&bytes).unwrap();
    let issues: Vec<_> = co
        .relocation_issues()
        .iter()
        .map(|i| (i.relocation.symbol.map(|s| s.name), i.kind.clone()))
        .collect();
    assert_eq!(
        issues,
        [(Some("dl_add"), RelocationIssueKind::RocrUnsupportedType)]
    );
    assert_eq!(
        co.unsupported_relocations().count(),
        0,
        "rocload's loader applies REL32"
    );
    assert_eq!(co.rocr_unsupported_relocations().count(), 1);
}

#[test]
fn fixture_undefined_func_is_flagged() {
    let bytes = fixture("synthetic/kernels_user.undef_func.co");
    let co = CodeObject::parse(&bytes).unwrap();
    let typed: Vec<_> = co.typed_imports().map(|s| (s.name, s.kind)).collect();
    assert_eq!(typed, [("dl_add", SymbolKind::Func)]);
    assert!(co.relocation_issues().iter().any(|i| i.kind
        == RelocationIssueKind::UndefinedTypedSymbol {
            symbol_type: SymbolKind::Func
        }));
    // The intact original has no such problem.
    let bytes = fixture("codeobj/kernels_user.co");
    let co = CodeObject::parse(&bytes).unwrap();
    assert_eq!(co.typed_imports().count(), 0);
    assert!(
        co.relocation_issues().is_empty(),
        "{:?}",
        co.relocation_issues()
    );
}

#[test]
fn fixture_abs32_pair_is_applicable() {
    let bytes = fixture("synthetic/kernels_user.abs32.co");
    let co = CodeObject::parse(&bytes).unwrap();
    let types: Vec<_> = co.relocations().iter().map(|r| r.r_type).collect();
    assert!(types.contains(&rocload::code_object::RelocationType::ABS32_LO));
    assert!(types.contains(&rocload::code_object::RelocationType::ABS32_HI));
    assert!(
        co.relocation_issues().is_empty(),
        "{:?}",
        co.relocation_issues()
    );
}

#[test]
fn fixture_static_link_has_no_imports_and_library_has_exports() {
    let bytes = fixture("codeobj/kernels_static.co");
    let co = CodeObject::parse(&bytes).unwrap();
    assert!(co.imports().is_empty());
    assert!(!co.kernels().is_empty());
    let bytes = fixture("codeobj/devlib_math.co");
    let co = CodeObject::parse(&bytes).unwrap();
    assert!(co.kernels().is_empty());
    assert!(co
        .exports()
        .iter()
        .any(|s| s.kind == SymbolKind::Func && s.name == "dl_add"));
    assert!(co.functions().iter().any(|s| s.name == "_ZN2dl3mixEif"));
    assert_eq!(
        rocload::code_object::demangle("_ZN2dl3mixEif").as_deref(),
        Some("dl::mix(int, float)")
    );
}
