//! Bad input gets typed errors naming what and where, never a panic or an unbounded
//! allocation: truncation everywhere, lying sizes, 2^60 entries, non-UTF-8 ids, unknown
//! versions and methods, garbage payloads, decompression bombs, hash mismatches.

mod common;

use common::read;
use rocload::container::{
    read_containers, write_bundle, write_ccob, CompressedBundle, Compression, ContainerError,
    Format, HashCheck, ReadOptions,
};

/// Hash checks where the whole payload is inflated anyway (the default checks nothing).
fn when_complete() -> ReadOptions {
    ReadOptions {
        verify: HashCheck::WhenComplete,
        ..ReadOptions::default()
    }
}

fn all_entries(data: &[u8], opts: &ReadOptions) -> Result<Vec<Vec<u8>>, ContainerError> {
    let mut out = Vec::new();
    for l in read_containers(data, opts)? {
        for i in 0..l.entries()?.len() {
            out.push(l.extract(i)?.into_owned());
        }
    }
    Ok(out)
}

#[test]
fn truncation_anywhere_is_an_error() {
    let opts = ReadOptions {
        verify: HashCheck::Always,
        ..ReadOptions::default()
    };
    for rel in [
        "hip/vadd.device.ccob",
        "synthetic/vadd.ccob_v1_zstd.ccob",
        "synthetic/vadd.ccob_v3_zlib.ccob",
        "headerfree/hf_cov5.bundle",
    ] {
        let data = read(rel);
        let whole = all_entries(&data, &opts).unwrap();
        assert!(!whole.is_empty());
        // Every cut in the headers, then a stride through the payload.
        let cuts = (1..600.min(data.len())).chain((600..data.len()).step_by(97));
        for cut in cuts {
            match all_entries(&data[..cut], &opts) {
                Err(_) => {}
                Ok(got) => panic!(
                    "{rel} cut at {cut} of {} read {} entries without error",
                    data.len(),
                    got.len()
                ),
            }
        }
    }
}

#[test]
fn lying_ccob_sizes_are_caught() {
    let plain = read("hip/vadd.device.bundle");
    let declared = plain.len() as u32;
    for compression in [Compression::Zstd, Compression::Zlib] {
        let ccob = write_ccob(&plain, 2, compression);
        // Total size beyond the input.
        let mut big_total = ccob.clone();
        big_total[8..12].copy_from_slice(&(ccob.len() as u32 + 1).to_le_bytes());
        let err = read_containers(&big_total, &ReadOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                ContainerError::Truncated {
                    format: Format::Ccob,
                    ..
                }
            ),
            "{err}"
        );
        // Total size smaller than the header.
        let mut tiny_total = ccob.clone();
        tiny_total[8..12].copy_from_slice(&3u32.to_le_bytes());
        let err = read_containers(&tiny_total, &ReadOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                ContainerError::Invalid {
                    field: "total size",
                    ..
                }
            ),
            "{err}"
        );
        // Uncompressed size too small: the stream overruns it (a bomb, stopped there).
        let mut small = ccob.clone();
        small[12..16].copy_from_slice(&(declared / 2).to_le_bytes());
        let c = CompressedBundle::parse(&small, &ReadOptions::default()).unwrap();
        let err = c.inflate().unwrap_err();
        assert!(
            matches!(err, ContainerError::SizeMismatch { exceeded: true, .. }),
            "{compression}: {err}"
        );
        // Uncompressed size too big: the stream ends early.
        let mut large = ccob.clone();
        large[12..16].copy_from_slice(&(declared + 4096).to_le_bytes());
        let c = CompressedBundle::parse(&large, &ReadOptions::default()).unwrap();
        let err = c.inflate().unwrap_err();
        assert!(
            matches!(err, ContainerError::SizeMismatch { .. }),
            "{compression}: {err}"
        );
        // Hash that lies.
        let mut hash = ccob.clone();
        hash[16] ^= 1;
        let c = CompressedBundle::parse(&hash, &when_complete()).unwrap();
        assert!(matches!(
            c.inflate().unwrap_err(),
            ContainerError::HashMismatch { .. }
        ));
        let never = CompressedBundle::parse(
            &hash,
            &ReadOptions {
                verify: HashCheck::Never,
                ..ReadOptions::default()
            },
        )
        .unwrap();
        assert_eq!(
            never.inflate().unwrap(),
            plain,
            "HashCheck::Never skips the check"
        );
        let always = CompressedBundle::parse(
            &hash,
            &ReadOptions {
                verify: HashCheck::Always,
                ..ReadOptions::default()
            },
        )
        .unwrap();
        assert!(
            matches!(
                always.extract(1).unwrap_err(),
                ContainerError::HashMismatch { .. }
            ),
            "Always checks even for an early entry"
        );
    }
}

#[test]
fn unknown_versions_methods_and_magics_are_named() {
    let ccob = write_ccob(&read("hip/vadd.device.bundle"), 2, Compression::Zstd);
    let mut v9 = ccob.clone();
    v9[4] = 9;
    assert!(matches!(
        read_containers(&v9, &ReadOptions::default()).unwrap_err(),
        ContainerError::Unsupported {
            field: "version",
            value: 9,
            offset: 4,
            ..
        }
    ));
    let mut m7 = ccob.clone();
    m7[6] = 7;
    assert!(matches!(
        read_containers(&m7, &ReadOptions::default()).unwrap_err(),
        ContainerError::Unsupported {
            field: "compression method",
            value: 7,
            ..
        }
    ));
    let err = read_containers(b"not a fat binary at all", &ReadOptions::default()).unwrap_err();
    assert!(
        matches!(err, ContainerError::UnknownFormat { offset: 0, .. }),
        "{err}"
    );
    // Garbage after a valid bundle is named with its offset.
    let mut trailing = read("hip/vadd.device.bundle");
    let at = trailing.len() as u64;
    trailing.extend_from_slice(b"\x01garbage");
    let err = read_containers(&trailing, &ReadOptions::default()).unwrap_err();
    assert!(
        matches!(err, ContainerError::UnknownFormat { offset, .. } if offset == at),
        "{err}"
    );
}

#[test]
fn garbage_payloads_and_bad_inner_bundles_are_errors() {
    let ccob = write_ccob(&read("hip/vadd.device.bundle"), 3, Compression::Zstd);
    let mut garbage = ccob.clone();
    for b in &mut garbage[32..] {
        *b = 0xA5;
    }
    let c = CompressedBundle::parse(&garbage, &ReadOptions::default()).unwrap();
    assert!(matches!(
        c.entries().unwrap_err(),
        ContainerError::Corrupt {
            method: Compression::Zstd,
            ..
        }
    ));
    // An inner bundle with 2^60 entries and one with a non-UTF-8 id.
    let mut huge = write_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx1030", b"x")], 8);
    huge[24..32].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let c = write_ccob(&huge, 2, Compression::Zlib);
    let err = CompressedBundle::parse(&c, &ReadOptions::default())
        .unwrap()
        .entries()
        .unwrap_err();
    assert!(
        matches!(&err, ContainerError::InInflated { source, .. } if matches!(**source, ContainerError::LimitExceeded { field: "entry count", .. })),
        "{err}"
    );
    let mut latin1 = write_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx1030", b"x")], 8);
    latin1[60] = 0xE9;
    let c = write_ccob(&latin1, 2, Compression::Zstd);
    let err = CompressedBundle::parse(&c, &ReadOptions::default())
        .unwrap()
        .entries()
        .unwrap_err();
    assert!(err.to_string().contains("not UTF-8"), "{err}");
}

#[test]
fn decompression_bombs_stop_at_the_declared_size() {
    // 256 MiB of zeros compresses to a few KiB; the header declares 1 MiB.
    let zeros = vec![0u8; 1 << 28];
    let frame = zstd::bulk::compress(&zeros, 1).unwrap();
    drop(zeros);
    let mut ccob = b"CCOB".to_vec();
    ccob.extend_from_slice(&2u16.to_le_bytes());
    ccob.extend_from_slice(&1u16.to_le_bytes());
    ccob.extend_from_slice(&((frame.len() + 24) as u32).to_le_bytes());
    ccob.extend_from_slice(&(1u32 << 20).to_le_bytes());
    ccob.extend_from_slice(&0u64.to_le_bytes());
    ccob.extend_from_slice(&frame);
    let c = CompressedBundle::parse(&ccob, &ReadOptions::default()).unwrap();
    let err = c.inflate().unwrap_err();
    assert!(
        matches!(err, ContainerError::SizeMismatch { declared, exceeded: true, .. } if declared == 1 << 20),
        "{err}"
    );
    // Streaming (listing) stops too: the inflated "bundle" is zeros, so its magic is wrong.
    assert!(c.entries().is_err());
}

#[test]
fn large_payloads_hash_on_a_second_thread_and_still_catch_mismatches() {
    // Over 16 MiB inflated: hashing is pipelined (see inflate.rs); results must not change.
    let mut state = 0x9E37_79B9u64;
    let mut entry = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|i| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if i % 3 == 0 {
                    (state >> 56) as u8
                } else {
                    0
                }
            })
            .collect()
    };
    let (a, b) = (entry(12 << 20), entry(9 << 20));
    let plain = write_bundle(
        &[
            ("hipv4-amdgcn-amd-amdhsa--gfx900", &a),
            ("hipv4-amdgcn-amd-amdhsa--gfx1030", &b),
        ],
        4096,
    );
    for compression in [Compression::Zstd, Compression::Zlib] {
        let ccob = write_ccob(&plain, 3, compression);
        let c = CompressedBundle::parse(&ccob, &ReadOptions::default()).unwrap();
        assert_eq!(c.inflate().unwrap(), plain);
        assert_eq!(
            c.extract(1).unwrap(),
            b,
            "last entry, hash checked on the way"
        );
        let mut bad = ccob.clone();
        bad[24] ^= 0x40; // the v3 hash field
        let c = CompressedBundle::parse(&bad, &when_complete()).unwrap();
        assert!(
            matches!(
                c.inflate().unwrap_err(),
                ContainerError::HashMismatch { .. }
            ),
            "{compression}"
        );
        assert!(
            matches!(
                c.extract(1).unwrap_err(),
                ContainerError::HashMismatch { .. }
            ),
            "{compression}"
        );
        assert_eq!(
            c.extract(0).unwrap(),
            a,
            "an early entry is not checked under WhenComplete"
        );
    }
}
