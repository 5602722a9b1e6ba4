//! Property tests of the metadata decoder against rmpv's encoder: whatever metadata-shaped
//! value rmpv writes (with unknown keys holding arbitrary nested values, integers in every
//! width, non-string keys), rocload reads back the same typed fields and the same unknown
//! values; and no byte string makes it panic.

use proptest::prelude::*;
use rmpv::Value;
use rocload::code_object::decode_metadata;

fn s(x: &str) -> Value {
    Value::from(x)
}

/// Any MessagePack value, nested a little.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Boolean),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("NaN never compares equal", |f| !f.is_nan())
            .prop_map(Value::F64),
        "[a-z_.]{0,12}".prop_map(|t| Value::from(t.as_str())),
        proptest::collection::vec(any::<u8>(), 0..8).prop_map(Value::Binary),
        (any::<i8>(), proptest::collection::vec(any::<u8>(), 0..5))
            .prop_map(|(t, d)| Value::Ext(t, d)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((inner.clone(), inner), 0..4).prop_map(Value::Map),
        ]
    })
}

#[derive(Debug, Clone)]
struct Arg {
    offset: u64,
    size: u64,
    kind: String,
    address_space: Option<String>,
    extra: Option<(String, Value)>,
}

#[derive(Debug, Clone)]
struct Kernel {
    name: String,
    kernarg: u64,
    group: u64,
    wave: u64,
    sgpr: Option<u64>,
    dynamic_stack: Option<bool>,
    args: Vec<Arg>,
    extra: Vec<(String, Value)>,
}

fn arg() -> impl Strategy<Value = Arg> {
    (
        any::<u64>(),
        any::<u64>(),
        "(by_value|global_buffer|hidden_[a-z_]{1,12})",
        proptest::option::of("(global|generic|local)"),
        proptest::option::of(("\\.x_[a-z]{1,6}", any_value())),
    )
        .prop_map(|(offset, size, kind, address_space, extra)| Arg {
            offset,
            size,
            kind,
            address_space,
            extra,
        })
}

fn kernel() -> impl Strategy<Value = Kernel> {
    (
        "[A-Za-z_][A-Za-z0-9_]{0,20}",
        any::<u64>(),
        any::<u32>(),
        prop_oneof![Just(32u64), Just(64u64)],
        proptest::option::of(any::<u16>()),
        proptest::option::of(any::<bool>()),
        proptest::collection::vec(arg(), 0..6),
        proptest::collection::vec(("\\.y_[a-z]{1,6}", any_value()), 0..3),
    )
        .prop_map(
            |(name, kernarg, group, wave, sgpr, dynamic_stack, args, extra)| Kernel {
                name,
                kernarg,
                group: group.into(),
                wave,
                sgpr: sgpr.map(u64::from),
                dynamic_stack,
                args,
                extra,
            },
        )
}

fn encode_kernel(k: &Kernel) -> Value {
    let mut m = vec![
        (s(".name"), s(&k.name)),
        (s(".symbol"), s(&format!("{}.kd", k.name))),
        (s(".kernarg_segment_size"), Value::from(k.kernarg)),
        (s(".kernarg_segment_align"), Value::from(8)),
        (s(".group_segment_fixed_size"), Value::from(k.group)),
        (s(".private_segment_fixed_size"), Value::from(0)),
        (s(".wavefront_size"), Value::from(k.wave)),
    ];
    if let Some(v) = k.sgpr {
        m.push((s(".sgpr_count"), Value::from(v)));
    }
    if let Some(b) = k.dynamic_stack {
        m.push((s(".uses_dynamic_stack"), Value::Boolean(b)));
    }
    let args = k
        .args
        .iter()
        .map(|a| {
            let mut am = vec![
                (s(".offset"), Value::from(a.offset)),
                (s(".size"), Value::from(a.size)),
                (s(".value_kind"), s(&a.kind)),
            ];
            if let Some(sp) = &a.address_space {
                am.push((s(".address_space"), s(sp)));
            }
            if let Some((key, v)) = &a.extra {
                am.push((s(key), v.clone()));
            }
            Value::Map(am)
        })
        .collect();
    m.push((s(".args"), Value::Array(args)));
    for (key, v) in &k.extra {
        m.push((s(key), v.clone()));
    }
    Value::Map(m)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn decodes_what_rmpv_encodes(
        kernels in proptest::collection::vec(kernel(), 0..5),
        top_extra in proptest::option::of(any_value()),
        odd_key in proptest::option::of((any::<i64>(), any_value())),
    ) {
        let mut root = vec![
            (s("amdhsa.version"), Value::Array(vec![Value::from(1), Value::from(2)])),
            (s("amdhsa.target"), s("amdgcn-amd-amdhsa--gfx1030")),
            (s("amdhsa.kernels"), Value::Array(kernels.iter().map(encode_kernel).collect())),
        ];
        if let Some(v) = &top_extra {
            root.push((s("amdhsa.future"), v.clone()));
        }
        if let Some((k, v)) = &odd_key {
            root.push((Value::from(*k), v.clone()));
        }
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &Value::Map(root)).unwrap();
        let md = decode_metadata(&bytes, 0).unwrap();
        prop_assert_eq!(&md.version, &vec![1, 2]);
        prop_assert_eq!(md.target, Some("amdgcn-amd-amdhsa--gfx1030"));
        prop_assert_eq!(md.kernels.len(), kernels.len());
        for (ours, k) in md.kernels.iter().zip(&kernels) {
            prop_assert_eq!(ours.name, k.name.as_str());
            let symbol = format!("{}.kd", k.name);
            prop_assert_eq!(ours.symbol, symbol.as_str());
            prop_assert_eq!(ours.kernarg_segment_size, k.kernarg);
            prop_assert_eq!(ours.group_segment_fixed_size, k.group);
            prop_assert_eq!(ours.wavefront_size, k.wave);
            prop_assert_eq!(ours.sgpr_count, k.sgpr);
            prop_assert_eq!(ours.uses_dynamic_stack, k.dynamic_stack);
            let extra: Vec<(String, Value)> = ours.unknown.iter().map(|u| (u.key.clone(), u.value.clone())).collect();
            prop_assert_eq!(&extra, &k.extra);
            prop_assert_eq!(ours.args.len(), k.args.len());
            for (oa, a) in ours.args.iter().zip(&k.args) {
                prop_assert_eq!(oa.offset, a.offset);
                prop_assert_eq!(oa.size, a.size);
                prop_assert_eq!(oa.value_kind.as_str(), a.kind.as_str());
                prop_assert_eq!(oa.address_space, a.address_space.as_deref());
                let extra: Vec<(String, Value)> = oa.unknown.iter().map(|u| (u.key.clone(), u.value.clone())).collect();
                prop_assert_eq!(extra, a.extra.iter().cloned().collect::<Vec<_>>());
            }
        }
        let mut expected_top = Vec::new();
        if let Some(v) = top_extra {
            expected_top.push(("amdhsa.future".to_owned(), v));
        }
        if let Some((k, v)) = odd_key {
            expected_top.push((Value::from(k).to_string(), v));
        }
        let top: Vec<(String, Value)> = md.unknown.iter().map(|u| (u.key.clone(), u.value.clone())).collect();
        prop_assert_eq!(top, expected_top);
        // Every strict prefix is an error, never a panic or a partial result.
        for cut in [0, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
            prop_assert!(decode_metadata(&bytes[..cut], 0).is_err());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode_metadata(&bytes, 0);
    }

    #[test]
    fn integers_of_every_width_are_read(v in any::<u64>(), width in 0usize..4) {
        // Force a wider encoding than rmpv would choose: uint8/16/32/64 markers 0xcc..0xcf.
        let n = 1usize << width;
        prop_assume!(n == 8 || v < (1u64 << (8 * n)));
        let mut bytes = vec![0x81, 0xae];
        bytes.extend_from_slice(b"amdhsa.version");
        bytes.push(0x91);
        bytes.push(0xcc + width as u8);
        bytes.extend_from_slice(&v.to_be_bytes()[8 - n..]);
        prop_assert_eq!(decode_metadata(&bytes, 0).unwrap().version, vec![v]);
    }
}
