//! Fuzzes the MessagePack metadata decoder alone (the note body of NT_AMDGPU_METADATA).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = rocload::code_object::decode_metadata(data, 0);
});
