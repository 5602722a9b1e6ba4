//! Fuzzes `CodeObject::parse` and everything reachable from a parsed object: the report,
//! descriptors, relocation checks and segment views; then the loader's `Module::new`, which
//! checks every symbol, descriptor, code entry and relocation against the image. Seed with
//! tests/fixtures/**/*.co and fuzz/seeds/code_object (scripts/make-hostile.py --fuzz-seeds).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocload::code_object::{symbols_report, CodeObject};

fuzz_target!(|data: &[u8]| {
    let Ok(co) = CodeObject::parse(data) else {
        return;
    };
    let report = symbols_report("fuzz", &co);
    let _ = report.to_string();
    for seg in co.segments() {
        let bytes = co.segment_bytes(seg);
        assert!(bytes.len() as u64 == seg.file_size);
    }
    for k in co.kernels() {
        let _ = co.kernel_descriptor(k.name);
        let _ = co.kernel_metadata(k);
    }
    let _ = co.unsupported_relocations().count();
    assert!(co.load_size() <= rocload::code_object::MAX_LOAD_IMAGE_SIZE);
    // A module accepted by the loader has every address inside its segments.
    if let Ok(m) = rocload::loader::Module::new(
        data.to_vec(),
        rocload::loader::ModuleSource::Memory {
            label: "fuzz".into(),
        },
    ) {
        for s in m.symbols() {
            assert!(m
                .segments()
                .iter()
                .any(|g| s.value >= g.vaddr && s.value < g.vaddr + g.mem_size));
        }
    }
});
