//! Fuzzes `CodeObject::parse` and everything reachable from a parsed object: the report,
//! descriptors, relocation checks and segment views. Seed with tests/fixtures/**/*.co.
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
});
