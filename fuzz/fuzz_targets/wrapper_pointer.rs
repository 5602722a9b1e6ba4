//! Any bytes behind a `__hipRegisterFatBinary` pointer: measuring the container from its
//! header must give an error or a slice inside the input, never a crash.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rocload::container::{hipf, Limits, ReadOptions};

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let options = ReadOptions {
        limits: Limits {
            max_inflated_size: 1 << 24,
            ..Limits::default()
        },
        ..ReadOptions::default()
    };
    // SAFETY: `data` outlives the returned slice's use below; measure only reads.
    if let Ok(slice) = unsafe { hipf::measure(data.as_ptr(), &options) } {
        let _ = slice.len();
    }
});
