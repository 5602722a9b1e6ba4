//! Any bytes as a fat binary: walk, list every entry, extract every entry, inflate whole.
//! Seeds: tests/fixtures and fuzz/seeds/containers (scripts/make-hostile.py --fuzz-seeds).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rocload::container::{read_containers, Container, HashCheck, Limits, ReadOptions};

fuzz_target!(|data: &[u8]| {
    // Small limits keep each run fast; the logic under test is the same.
    let options = ReadOptions {
        limits: Limits {
            max_inflated_size: 1 << 24,
            max_entry_size: 1 << 24,
            ..Limits::default()
        },
        verify: HashCheck::Always,
    };
    let Ok(found) = read_containers(data, &options) else {
        return;
    };
    for located in &found {
        if let Ok(entries) = located.container.entries() {
            for i in 0..entries.len() {
                let _ = located.container.extract(i);
            }
        }
        if let Container::Compressed(c) = &located.container {
            let _ = c.inflate();
        }
    }
});
