//! Property tests of the container layer: random bundles (plain and every CCOB version and
//! method, several back to back) list and extract exactly what was written, and random
//! corruptions of them give errors, never panics.

use proptest::prelude::*;
use rocload::container::{
    read_containers, write_bundle, write_ccob, Compression, Container, HashCheck, ReadOptions,
};

#[derive(Debug, Clone)]
struct Spec {
    entries: Vec<(String, Vec<u8>)>,
    align: u64,
    packing: Option<(u16, Compression)>,
}

fn spec() -> impl Strategy<Value = Spec> {
    let id = prop::sample::select(vec![
        "host-x86_64-unknown-linux-gnu-",
        "hipv4-amdgcn-amd-amdhsa--gfx1030",
        "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
        "hip-amdgcn-amd-amdhsa--gfx906",
        "hipv4-amdgcn-amd-amdhsa--gfx11-generic",
    ]);
    let entry =
        (id, prop::collection::vec(any::<u8>(), 0..3000)).prop_map(|(i, d)| (i.to_string(), d));
    let packing = prop::option::of((
        1u16..=3,
        prop::sample::select(vec![Compression::Zstd, Compression::Zlib]),
    ));
    (
        prop::collection::vec(entry, 1..5),
        prop::sample::select(vec![1u64, 8, 4096]),
        packing,
    )
        .prop_map(|(entries, align, packing)| Spec {
            entries,
            align,
            packing,
        })
}

fn encode(spec: &Spec) -> Vec<u8> {
    let refs: Vec<(&str, &[u8])> = spec
        .entries
        .iter()
        .map(|(i, d)| (i.as_str(), d.as_slice()))
        .collect();
    let bundle = write_bundle(&refs, spec.align);
    match spec.packing {
        Some((v, c)) => write_ccob(&bundle, v, c),
        None => bundle,
    }
}

/// Containers back to back, each starting 4096-aligned after zero padding, like `.hip_fatbin`.
fn section(specs: &[Spec]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in specs {
        out.resize(out.len().div_ceil(4096) * 4096, 0);
        out.extend_from_slice(&encode(s));
    }
    out
}

fn exercise(data: &[u8], options: &ReadOptions) {
    if let Ok(found) = read_containers(data, options) {
        for l in &found {
            if let Ok(entries) = l.container.entries() {
                for i in 0..entries.len() {
                    let _ = l.container.extract(i);
                }
            }
            if let Container::Compressed(c) = &l.container {
                let _ = c.inflate();
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn written_bundles_read_back(specs in prop::collection::vec(spec(), 1..4), verify in prop::sample::select(vec![HashCheck::Never, HashCheck::WhenComplete, HashCheck::Always])) {
        let data = section(&specs);
        let options = ReadOptions { verify, ..ReadOptions::default() };
        let found = read_containers(&data, &options).unwrap();
        prop_assert_eq!(found.len(), specs.len());
        for (l, s) in found.iter().zip(&specs) {
            let entries = l.container.entries().unwrap();
            prop_assert_eq!(entries.len(), s.entries.len());
            for (i, (e, (id, bytes))) in entries.iter().zip(&s.entries).enumerate() {
                prop_assert_eq!(e.id.as_ref(), id.as_str());
                let got = l.container.extract(i).unwrap();
                prop_assert_eq!(got.as_ref(), bytes.as_slice());
            }
            if let Container::Compressed(c) = &l.container {
                prop_assert_eq!(c.header().version, s.packing.unwrap().0);
                let refs: Vec<(&str, &[u8])> = s.entries.iter().map(|(i, d)| (i.as_str(), d.as_slice())).collect();
                prop_assert_eq!(c.inflate().unwrap(), write_bundle(&refs, s.align));
            }
        }
    }

    #[test]
    fn corrupted_bundles_never_panic(s in spec(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8), cut in any::<prop::sample::Index>()) {
        let mut data = encode(&s);
        for (at, byte) in &flips {
            let i = at.index(data.len());
            data[i] = *byte;
        }
        exercise(&data, &ReadOptions { verify: HashCheck::Always, ..ReadOptions::default() });
        let end = cut.index(data.len() + 1);
        exercise(&data[..end], &ReadOptions::default());
    }

    #[test]
    fn header_fields_that_lie_never_panic(s in spec(), field in 0usize..64, value in prop::sample::select(vec![0u64, 1, 0xff, 0xffff_ffff, 1 << 40, 1 << 60, u64::MAX])) {
        let mut data = encode(&s);
        let at = field * 4;
        if at + 8 <= data.len() {
            data[at..at + 8].copy_from_slice(&value.to_le_bytes());
        }
        exercise(&data, &ReadOptions::default());
    }
}
