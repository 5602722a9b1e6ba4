//! AMDGPU metadata: the MessagePack body of the `NT_AMDGPU_METADATA` note, typed.
//!
//! Decodes the keys a loader and a launcher need (kernel names, segment sizes, arguments)
//! into fields; every key it does not know is kept as an [`rmpv::Value`] beside them and new
//! argument value kinds are kept as text, so newer compilers never break reading. Strings
//! borrow from the code object's bytes. A key it knows holding a value of the wrong type is
//! an error naming the key's path. Not for checking metadata against the kernel descriptor
//! (see `descriptor`).

use rmpv::ValueRef;
use serde::Serialize;

use super::error::{CodeObjectError, Result};

/// Note owner of AMDGPU notes.
pub const NOTE_OWNER_AMDGPU: &[u8] = b"AMDGPU";
/// `n_type` of the MessagePack metadata note (code object v3+).
pub const NT_AMDGPU_METADATA: u32 = 32;

/// Deepest MessagePack nesting accepted (real metadata nests 5 deep); keeps recursion bounded.
const MAX_DEPTH: usize = 32;

/// A key this layer does not interpret, kept with its value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnknownKey {
    /// The key as written (e.g. `.vgpr_spill_count`).
    pub key: String,
    /// Its value, decoded.
    #[serde(serialize_with = "serialize_value")]
    pub value: rmpv::Value,
}

fn serialize_value<S: serde::Serializer>(value: &rmpv::Value, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// The whole metadata map.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metadata<'data> {
    /// `amdhsa.version` (`[1, 2]` for code object v5 and v6).
    pub version: Vec<u64>,
    /// `amdhsa.target` (e.g. `amdgcn-amd-amdhsa--gfx1030`).
    pub target: Option<&'data str>,
    /// `amdhsa.printf` format strings, if any.
    pub printf: Vec<&'data str>,
    /// `amdhsa.kernels`, in note order.
    pub kernels: Vec<KernelMetadata<'data>>,
    /// Other top-level keys.
    pub unknown: Vec<UnknownKey>,
}

/// Metadata of one kernel (`amdhsa.kernels[i]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelMetadata<'data> {
    /// `.name`: source-level name (mangled for C++).
    pub name: &'data str,
    /// `.symbol`: the kernel descriptor symbol (`<name>.kd`).
    pub symbol: &'data str,
    /// `.kernarg_segment_size`.
    pub kernarg_segment_size: u64,
    /// `.kernarg_segment_align`.
    pub kernarg_segment_align: u64,
    /// `.group_segment_fixed_size` (static LDS bytes).
    pub group_segment_fixed_size: u64,
    /// `.private_segment_fixed_size` (scratch bytes per work-item).
    pub private_segment_fixed_size: u64,
    /// `.wavefront_size` (32 or 64).
    pub wavefront_size: u64,
    /// `.sgpr_count`.
    pub sgpr_count: Option<u64>,
    /// `.vgpr_count`.
    pub vgpr_count: Option<u64>,
    /// `.agpr_count` (gfx90a and later).
    pub agpr_count: Option<u64>,
    /// `.sgpr_spill_count`.
    pub sgpr_spill_count: Option<u64>,
    /// `.vgpr_spill_count`.
    pub vgpr_spill_count: Option<u64>,
    /// `.max_flat_workgroup_size`.
    pub max_flat_workgroup_size: Option<u64>,
    /// `.uses_dynamic_stack` (code object v5+).
    pub uses_dynamic_stack: Option<bool>,
    /// `.kind` (`normal`, `init`, `fini`).
    pub kind: Option<&'data str>,
    /// `.language` (e.g. `OpenCL C`, `HIP`).
    pub language: Option<&'data str>,
    /// `.reqd_workgroup_size`.
    pub reqd_workgroup_size: Option<Vec<u64>>,
    /// `.args`, in order.
    pub args: Vec<KernelArg<'data>>,
    /// Other keys of this kernel.
    pub unknown: Vec<UnknownKey>,
}

/// One kernel argument (`.args[j]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelArg<'data> {
    /// `.offset` in the kernarg segment.
    pub offset: u64,
    /// `.size` in bytes.
    pub size: u64,
    /// `.value_kind`.
    pub value_kind: ValueKind<'data>,
    /// `.address_space` (`global`, `generic`, `local`, …) for pointers.
    pub address_space: Option<&'data str>,
    /// `.name` (source name, when the compiler kept it).
    pub name: Option<&'data str>,
    /// `.type_name`.
    pub type_name: Option<&'data str>,
    /// `.pointee_align` for dynamic shared pointers.
    pub pointee_align: Option<u64>,
    /// `.access` / `.actual_access` (`read_only`, …).
    pub access: Option<&'data str>,
    /// Other keys of this argument.
    pub unknown: Vec<UnknownKey>,
}

/// An argument's `.value_kind`, kept as written so that kinds added by newer compilers survive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ValueKind<'data>(pub &'data str);

/// Value kinds documented for code object v3–v6 (AMDGPUUsage).
const KNOWN_VALUE_KINDS: &[&str] = &[
    "by_value",
    "global_buffer",
    "dynamic_shared_pointer",
    "sampler",
    "image",
    "pipe",
    "queue",
    "hidden_global_offset_x",
    "hidden_global_offset_y",
    "hidden_global_offset_z",
    "hidden_none",
    "hidden_printf_buffer",
    "hidden_hostcall_buffer",
    "hidden_default_queue",
    "hidden_completion_action",
    "hidden_multigrid_sync_arg",
    "hidden_block_count_x",
    "hidden_block_count_y",
    "hidden_block_count_z",
    "hidden_group_size_x",
    "hidden_group_size_y",
    "hidden_group_size_z",
    "hidden_remainder_x",
    "hidden_remainder_y",
    "hidden_remainder_z",
    "hidden_grid_dims",
    "hidden_heap_v1",
    "hidden_dynamic_lds_size",
    "hidden_private_base",
    "hidden_shared_base",
    "hidden_queue_ptr",
];

impl<'data> ValueKind<'data> {
    /// The kind as written.
    pub fn as_str(&self) -> &'data str {
        self.0
    }
    /// Whether the runtime, not the caller, fills this argument (`hidden_*`).
    pub fn is_hidden(&self) -> bool {
        self.0.starts_with("hidden_")
    }
    /// Whether this layer knows the kind (an unknown kind is kept, never an error).
    pub fn is_known(&self) -> bool {
        KNOWN_VALUE_KINDS.contains(&self.0)
    }
}

impl std::fmt::Display for ValueKind<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// Decoding context: where the MessagePack bytes are, for errors.
struct Ctx {
    offset: u64,
}

impl Ctx {
    fn err(&self, path: impl FnOnce() -> String, reason: impl Into<String>) -> CodeObjectError {
        CodeObjectError::Metadata { offset: self.offset, path: path(), reason: reason.into() }
    }
}

fn kind_name(v: &ValueRef<'_>) -> &'static str {
    match v {
        ValueRef::Nil => "nil",
        ValueRef::Boolean(_) => "boolean",
        ValueRef::Integer(_) => "integer",
        ValueRef::F32(_) | ValueRef::F64(_) => "float",
        ValueRef::String(_) => "string",
        ValueRef::Binary(_) => "binary",
        ValueRef::Array(_) => "array",
        ValueRef::Map(_) => "map",
        ValueRef::Ext(..) => "extension",
    }
}

fn as_str<'data>(ctx: &Ctx, v: &ValueRef<'data>, path: impl FnOnce() -> String) -> Result<&'data str> {
    match v {
        ValueRef::String(s) => s.into_str().ok_or_else(|| ctx.err(path, "string is not UTF-8")),
        other => Err(ctx.err(path, format!("expected a string, found {}", kind_name(other)))),
    }
}

fn as_u64(ctx: &Ctx, v: &ValueRef<'_>, path: impl FnOnce() -> String) -> Result<u64> {
    match v {
        ValueRef::Integer(i) => i.as_u64().ok_or_else(|| ctx.err(path, format!("expected an unsigned integer, found {i}"))),
        other => Err(ctx.err(path, format!("expected an unsigned integer, found {}", kind_name(other)))),
    }
}

fn as_bool(ctx: &Ctx, v: &ValueRef<'_>, path: impl FnOnce() -> String) -> Result<bool> {
    match v {
        ValueRef::Boolean(b) => Ok(*b),
        // Some producers write flags as 0/1.
        ValueRef::Integer(i) if i.as_u64() == Some(0) => Ok(false),
        ValueRef::Integer(i) if i.as_u64() == Some(1) => Ok(true),
        other => Err(ctx.err(path, format!("expected a boolean, found {}", kind_name(other)))),
    }
}

fn as_map<'v, 'data>(
    ctx: &Ctx,
    v: &'v ValueRef<'data>,
    path: impl FnOnce() -> String,
) -> Result<&'v [(ValueRef<'data>, ValueRef<'data>)]> {
    match v {
        ValueRef::Map(m) => Ok(m),
        other => Err(ctx.err(path, format!("expected a map, found {}", kind_name(other)))),
    }
}

fn as_array<'v, 'data>(ctx: &Ctx, v: &'v ValueRef<'data>, path: impl FnOnce() -> String) -> Result<&'v [ValueRef<'data>]> {
    match v {
        ValueRef::Array(a) => Ok(a),
        other => Err(ctx.err(path, format!("expected an array, found {}", kind_name(other)))),
    }
}

fn u64_list(ctx: &Ctx, v: &ValueRef<'_>, path: &dyn Fn() -> String) -> Result<Vec<u64>> {
    as_array(ctx, v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| as_u64(ctx, x, || format!("{}[{i}]", path())))
        .collect()
}

fn key_str<'data>(v: &ValueRef<'data>) -> Option<&'data str> {
    match v {
        ValueRef::String(s) => s.into_str(),
        _ => None,
    }
}

fn unknown(key: &ValueRef<'_>, value: &ValueRef<'_>) -> UnknownKey {
    let key = match key {
        ValueRef::String(s) => s.as_str().map(str::to_owned).unwrap_or_else(|| key.to_string()),
        other => other.to_string(),
    };
    UnknownKey { key, value: value.to_owned() }
}

/// Decodes the MessagePack metadata `bytes`, found at file offset `offset`.
///
/// # Errors
/// [`CodeObjectError::Metadata`] naming the key path when the bytes are not MessagePack, have
/// trailing bytes, nest too deep, or a known key has the wrong type; a missing required
/// kernel key (`.name`, `.symbol`, segment sizes, `.wavefront_size`) is an error too.
pub fn decode(bytes: &[u8], offset: u64) -> Result<Metadata<'_>> {
    let ctx = Ctx { offset };
    let mut reader = bytes;
    let root = rmpv::decode::read_value_ref_with_max_depth(&mut reader, MAX_DEPTH)
        .map_err(|e| ctx.err(String::new, format!("not MessagePack: {e}")))?;
    if !reader.is_empty() {
        return Err(ctx.err(String::new, format!("{} bytes after the metadata map", reader.len())));
    }
    let mut md = Metadata { version: Vec::new(), target: None, printf: Vec::new(), kernels: Vec::new(), unknown: Vec::new() };
    for (k, v) in as_map(&ctx, &root, String::new)? {
        match key_str(k) {
            Some("amdhsa.version") => md.version = u64_list(&ctx, v, &|| "amdhsa.version".into())?,
            Some("amdhsa.target") => md.target = Some(as_str(&ctx, v, || "amdhsa.target".into())?),
            Some("amdhsa.printf") => {
                md.printf = as_array(&ctx, v, || "amdhsa.printf".into())?
                    .iter()
                    .enumerate()
                    .map(|(i, s)| as_str(&ctx, s, || format!("amdhsa.printf[{i}]")))
                    .collect::<Result<_>>()?
            }
            Some("amdhsa.kernels") => {
                let list = as_array(&ctx, v, || "amdhsa.kernels".into())?;
                md.kernels.reserve(list.len());
                for (i, kv) in list.iter().enumerate() {
                    md.kernels.push(decode_kernel(&ctx, kv, i)?);
                }
            }
            _ => md.unknown.push(unknown(k, v)),
        }
    }
    tracing::debug!(kernels = md.kernels.len(), target = ?md.target, "decoded AMDGPU metadata");
    Ok(md)
}

fn decode_kernel<'data>(ctx: &Ctx, v: &ValueRef<'data>, i: usize) -> Result<KernelMetadata<'data>> {
    let path = |key: &str| format!("amdhsa.kernels[{i}].{}", key.trim_start_matches('.'));
    let mut name = None;
    let mut symbol = None;
    let mut kernarg_segment_size = None;
    let mut kernarg_segment_align = None;
    let mut group = None;
    let mut private = None;
    let mut wavefront_size = None;
    let mut k = KernelMetadata {
        name: "",
        symbol: "",
        kernarg_segment_size: 0,
        kernarg_segment_align: 0,
        group_segment_fixed_size: 0,
        private_segment_fixed_size: 0,
        wavefront_size: 0,
        sgpr_count: None,
        vgpr_count: None,
        agpr_count: None,
        sgpr_spill_count: None,
        vgpr_spill_count: None,
        max_flat_workgroup_size: None,
        uses_dynamic_stack: None,
        kind: None,
        language: None,
        reqd_workgroup_size: None,
        args: Vec::new(),
        unknown: Vec::new(),
    };
    for (key, value) in as_map(ctx, v, || format!("amdhsa.kernels[{i}]"))? {
        let Some(key_str) = key_str(key) else {
            k.unknown.push(unknown(key, value));
            continue;
        };
        let p = || path(key_str);
        match key_str {
            ".name" => name = Some(as_str(ctx, value, p)?),
            ".symbol" => symbol = Some(as_str(ctx, value, p)?),
            ".kernarg_segment_size" => kernarg_segment_size = Some(as_u64(ctx, value, p)?),
            ".kernarg_segment_align" => kernarg_segment_align = Some(as_u64(ctx, value, p)?),
            ".group_segment_fixed_size" => group = Some(as_u64(ctx, value, p)?),
            ".private_segment_fixed_size" => private = Some(as_u64(ctx, value, p)?),
            ".wavefront_size" => wavefront_size = Some(as_u64(ctx, value, p)?),
            ".sgpr_count" => k.sgpr_count = Some(as_u64(ctx, value, p)?),
            ".vgpr_count" => k.vgpr_count = Some(as_u64(ctx, value, p)?),
            ".agpr_count" => k.agpr_count = Some(as_u64(ctx, value, p)?),
            ".sgpr_spill_count" => k.sgpr_spill_count = Some(as_u64(ctx, value, p)?),
            ".vgpr_spill_count" => k.vgpr_spill_count = Some(as_u64(ctx, value, p)?),
            ".max_flat_workgroup_size" => k.max_flat_workgroup_size = Some(as_u64(ctx, value, p)?),
            ".uses_dynamic_stack" => k.uses_dynamic_stack = Some(as_bool(ctx, value, p)?),
            ".kind" => k.kind = Some(as_str(ctx, value, p)?),
            ".language" => k.language = Some(as_str(ctx, value, p)?),
            ".reqd_workgroup_size" => k.reqd_workgroup_size = Some(u64_list(ctx, value, &p)?),
            ".args" => {
                let list = as_array(ctx, value, p)?;
                k.args.reserve(list.len());
                for (j, a) in list.iter().enumerate() {
                    k.args.push(decode_arg(ctx, a, i, j)?);
                }
            }
            _ => k.unknown.push(unknown(key, value)),
        }
    }
    let missing = |key: &str| ctx.err(|| path(key), "required key is missing");
    k.name = name.ok_or_else(|| missing(".name"))?;
    k.symbol = symbol.ok_or_else(|| missing(".symbol"))?;
    k.kernarg_segment_size = kernarg_segment_size.ok_or_else(|| missing(".kernarg_segment_size"))?;
    k.kernarg_segment_align = kernarg_segment_align.ok_or_else(|| missing(".kernarg_segment_align"))?;
    k.group_segment_fixed_size = group.ok_or_else(|| missing(".group_segment_fixed_size"))?;
    k.private_segment_fixed_size = private.ok_or_else(|| missing(".private_segment_fixed_size"))?;
    k.wavefront_size = wavefront_size.ok_or_else(|| missing(".wavefront_size"))?;
    Ok(k)
}

fn decode_arg<'data>(ctx: &Ctx, v: &ValueRef<'data>, i: usize, j: usize) -> Result<KernelArg<'data>> {
    let path = |key: &str| format!("amdhsa.kernels[{i}].args[{j}].{}", key.trim_start_matches('.'));
    let (mut offset, mut size, mut value_kind) = (None, None, None);
    let mut a = KernelArg {
        offset: 0,
        size: 0,
        value_kind: ValueKind(""),
        address_space: None,
        name: None,
        type_name: None,
        pointee_align: None,
        access: None,
        unknown: Vec::new(),
    };
    for (key, value) in as_map(ctx, v, || format!("amdhsa.kernels[{i}].args[{j}]"))? {
        let Some(key_str) = key_str(key) else {
            a.unknown.push(unknown(key, value));
            continue;
        };
        let p = || path(key_str);
        match key_str {
            ".offset" => offset = Some(as_u64(ctx, value, p)?),
            ".size" => size = Some(as_u64(ctx, value, p)?),
            ".value_kind" => value_kind = Some(ValueKind(as_str(ctx, value, p)?)),
            ".address_space" => a.address_space = Some(as_str(ctx, value, p)?),
            ".name" => a.name = Some(as_str(ctx, value, p)?),
            ".type_name" => a.type_name = Some(as_str(ctx, value, p)?),
            ".pointee_align" => a.pointee_align = Some(as_u64(ctx, value, p)?),
            ".access" => a.access = Some(as_str(ctx, value, p)?),
            _ => a.unknown.push(unknown(key, value)),
        }
    }
    let missing = |key: &str| ctx.err(|| path(key), "required key is missing");
    a.offset = offset.ok_or_else(|| missing(".offset"))?;
    a.size = size.ok_or_else(|| missing(".size"))?;
    a.value_kind = value_kind.ok_or_else(|| missing(".value_kind"))?;
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmpv::Value;

    fn encode(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        rmpv::encode::write_value(&mut out, v).unwrap();
        out
    }

    fn s(x: &str) -> Value {
        Value::from(x)
    }

    fn kernel(extra: Vec<(Value, Value)>) -> Value {
        let mut m = vec![
            (s(".name"), s("k")),
            (s(".symbol"), s("k.kd")),
            (s(".kernarg_segment_size"), Value::from(16)),
            (s(".kernarg_segment_align"), Value::from(8)),
            (s(".group_segment_fixed_size"), Value::from(0)),
            (s(".private_segment_fixed_size"), Value::from(0)),
            (s(".wavefront_size"), Value::from(64)),
        ];
        m.extend(extra);
        Value::Map(m)
    }

    #[test]
    fn unknown_keys_and_kinds_are_kept() {
        let arg = Value::Map(vec![
            (s(".offset"), Value::from(0)),
            (s(".size"), Value::from(8)),
            (s(".value_kind"), s("hidden_from_the_future")),
            (s(".brand_new"), Value::from(true)),
        ]);
        let root = Value::Map(vec![
            (s("amdhsa.version"), Value::Array(vec![Value::from(1), Value::from(2)])),
            (s("amdhsa.kernels"), Value::Array(vec![kernel(vec![
                (s(".args"), Value::Array(vec![arg])),
                (s(".vgpr_spill_count"), Value::from(3)),
            ])])),
            (s("amdhsa.something"), s("else")),
        ]);
        let bytes = encode(&root);
        let md = decode(&bytes, 0).unwrap();
        assert_eq!(md.version, vec![1, 2]);
        assert_eq!(md.unknown[0].key, "amdhsa.something");
        let k = &md.kernels[0];
        assert_eq!(k.vgpr_spill_count, Some(3));
        assert_eq!(k.args[0].value_kind.as_str(), "hidden_from_the_future");
        assert!(!k.args[0].value_kind.is_known());
        assert!(k.args[0].value_kind.is_hidden());
        assert_eq!(k.args[0].unknown[0].key, ".brand_new");
    }

    #[test]
    fn wrong_types_name_the_path() {
        let root = Value::Map(vec![(
            s("amdhsa.kernels"),
            Value::Array(vec![kernel(vec![(
                s(".args"),
                Value::Array(vec![Value::Map(vec![
                    (s(".offset"), Value::from(0)),
                    (s(".size"), s("eight")),
                    (s(".value_kind"), s("by_value")),
                ])]),
            )])]),
        )]);
        let err = decode(&encode(&root), 0x40).unwrap_err();
        match err {
            CodeObjectError::Metadata { offset, path, .. } => {
                assert_eq!(offset, 0x40);
                assert_eq!(path, "amdhsa.kernels[0].args[0].size");
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn missing_required_key_is_an_error() {
        let root = Value::Map(vec![(s("amdhsa.kernels"), Value::Array(vec![Value::Map(vec![(s(".name"), s("k"))])]))]);
        let err = decode(&encode(&root), 0).unwrap_err();
        assert!(err.to_string().contains("amdhsa.kernels[0].symbol"), "{err}");
    }

    #[test]
    fn malformed_messagepack_is_an_error() {
        // map16 announcing 0xffff entries with nothing after it.
        assert!(decode(&[0xde, 0xff, 0xff], 0).is_err());
        // array32 announcing 2^32-1 entries: no allocation up front, just an error.
        assert!(decode(&[0xdd, 0xff, 0xff, 0xff, 0xff], 0).is_err());
        // Deep nesting is cut off, not recursed into.
        let deep = vec![0x91u8; 10_000];
        assert!(decode(&deep, 0).is_err());
        // Trailing bytes.
        assert!(decode(&[0x80, 0x00], 0).is_err());
        // Not a map.
        assert!(decode(&[0x01], 0).is_err());
    }
}
