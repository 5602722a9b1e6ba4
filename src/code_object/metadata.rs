//! AMDGPU metadata: the MessagePack body of the `NT_AMDGPU_METADATA` note, typed.
//!
//! Decodes the keys a loader and a launcher need (kernel names, segment sizes, arguments)
//! into fields; every key it does not know is kept as an [`rmpv::Value`] beside them and new
//! argument value kinds are kept as text, so newer compilers never break reading. Strings
//! borrow from the code object's bytes. A key it knows holding a value of the wrong type is
//! an error naming the key's path. Not for checking metadata against the kernel descriptor
//! (see `descriptor`).

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

fn serialize_value<S: serde::Serializer>(
    value: &rmpv::Value,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
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

/// What a MessagePack item starts with: a scalar, or the length of a container.
#[derive(Debug, Clone, Copy)]
enum Head<'data> {
    Nil,
    Bool(bool),
    Uint(u64),
    Int(i64),
    Float,
    /// Raw bytes; validated as UTF-8 only where a string value is expected.
    Str(&'data [u8]),
    Bin,
    Ext,
    Array(u32),
    Map(u32),
}

impl Head<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Self::Nil => "nil",
            Self::Bool(_) => "boolean",
            Self::Uint(_) | Self::Int(_) => "integer",
            Self::Float => "float",
            Self::Str(_) => "string",
            Self::Bin => "binary",
            Self::Ext => "extension",
            Self::Array(_) => "array",
            Self::Map(_) => "map",
        }
    }
}

/// A streaming MessagePack reader over borrowed bytes: typed fields are decoded in one pass
/// without building a value tree (which cost 10x more on large metadata). Every read is
/// bounds-checked; errors carry the file offset of the item at fault.
struct Reader<'data> {
    bytes: &'data [u8],
    pos: usize,
    /// File offset of `bytes[0]`.
    base: u64,
}

impl<'data> Reader<'data> {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn err_at(
        &self,
        at: usize,
        path: impl FnOnce() -> String,
        reason: impl Into<String>,
    ) -> CodeObjectError {
        CodeObjectError::Metadata {
            offset: self.base + at as u64,
            path: path(),
            reason: reason.into(),
        }
    }

    fn take(&mut self, n: usize) -> Option<&'data [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    fn be(&mut self, n: usize) -> Option<u64> {
        Some(
            self.take(n)?
                .iter()
                .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)),
        )
    }

    /// Reads the head of the next item; for strings, binaries and extensions the payload is
    /// consumed too, for containers only the length.
    fn head(&mut self, path: impl Fn() -> String) -> Result<Head<'data>> {
        let at = self.pos;
        let eof = |r: &Self| r.err_at(at, &path, "MessagePack ends in the middle of an item");
        let marker = *self.bytes.get(self.pos).ok_or_else(|| eof(self))?;
        self.pos += 1;
        let len = |r: &mut Self, n: usize| r.be(n).map(|v| v as usize).ok_or_else(|| eof(r));
        let head = match marker {
            0x00..=0x7f => Head::Uint(u64::from(marker)),
            0xe0..=0xff => Head::Int(i64::from(marker as i8)),
            0x80..=0x8f => Head::Map(u32::from(marker & 0x0f)),
            0x90..=0x9f => Head::Array(u32::from(marker & 0x0f)),
            0xa0..=0xbf => return self.str_payload(usize::from(marker & 0x1f), at, &path),
            0xc0 => Head::Nil,
            0xc2 => Head::Bool(false),
            0xc3 => Head::Bool(true),
            0xc4..=0xc6 => {
                let n = len(self, 1 << (marker - 0xc4))?;
                self.take(n).ok_or_else(|| eof(self))?;
                Head::Bin
            }
            0xc7..=0xc9 => {
                let n = len(self, 1 << (marker - 0xc7))?;
                self.take(n.checked_add(1).ok_or_else(|| eof(self))?)
                    .ok_or_else(|| eof(self))?;
                Head::Ext
            }
            0xca | 0xcb => {
                self.take(if marker == 0xca { 4 } else { 8 })
                    .ok_or_else(|| eof(self))?;
                Head::Float
            }
            0xcc..=0xcf => Head::Uint(self.be(1 << (marker - 0xcc)).ok_or_else(|| eof(self))?),
            0xd0..=0xd3 => {
                let n = 1usize << (marker - 0xd0);
                let raw = self.be(n).ok_or_else(|| eof(self))?;
                let shift = 64 - 8 * n as u32;
                Head::Int(((raw << shift) as i64) >> shift)
            }
            0xd4..=0xd8 => {
                self.take(1 + (1usize << (marker - 0xd4)))
                    .ok_or_else(|| eof(self))?;
                Head::Ext
            }
            0xd9..=0xdb => {
                let n = len(self, 1 << (marker - 0xd9))?;
                return self.str_payload(n, at, &path);
            }
            0xdc | 0xdd => Head::Array(len(self, if marker == 0xdc { 2 } else { 4 })? as u32),
            0xde | 0xdf => Head::Map(len(self, if marker == 0xde { 2 } else { 4 })? as u32),
            0xc1 => return Err(self.err_at(at, &path, "reserved MessagePack marker 0xc1")),
        };
        Ok(head)
    }

    fn str_payload(
        &mut self,
        n: usize,
        at: usize,
        path: &dyn Fn() -> String,
    ) -> Result<Head<'data>> {
        let bytes = self.take(n).ok_or_else(|| {
            self.err_at(at, path, format!("string of {n} bytes runs past the end"))
        })?;
        Ok(Head::Str(bytes))
    }

    /// Decodes the item at the current position into an owned value (for unknown keys).
    fn owned_value(&mut self, path: impl Fn() -> String) -> Result<rmpv::Value> {
        let mut rest = self.bytes.get(self.pos..).unwrap_or(&[]);
        let before = rest.len();
        let value = rmpv::decode::read_value_with_max_depth(&mut rest, MAX_DEPTH)
            .map_err(|e| self.err_at(self.pos, path, format!("not MessagePack: {e}")))?;
        self.pos += before - rest.len();
        Ok(value)
    }

    fn expect_map(&mut self, path: impl Fn() -> String) -> Result<u32> {
        let at = self.pos;
        match self.head(&path)? {
            Head::Map(n) => Ok(n),
            h => Err(self.err_at(at, path, format!("expected a map, found {}", h.kind()))),
        }
    }

    fn expect_array(&mut self, path: impl Fn() -> String) -> Result<u32> {
        let at = self.pos;
        match self.head(&path)? {
            Head::Array(n) => Ok(n),
            h => Err(self.err_at(at, path, format!("expected an array, found {}", h.kind()))),
        }
    }

    fn expect_str(&mut self, path: impl Fn() -> String) -> Result<&'data str> {
        let at = self.pos;
        match self.head(&path)? {
            Head::Str(b) => {
                std::str::from_utf8(b).map_err(|_| self.err_at(at, path, "string is not UTF-8"))
            }
            h => Err(self.err_at(at, path, format!("expected a string, found {}", h.kind()))),
        }
    }

    fn expect_u64(&mut self, path: impl Fn() -> String) -> Result<u64> {
        let at = self.pos;
        match self.head(&path)? {
            Head::Uint(v) => Ok(v),
            Head::Int(v) => u64::try_from(v).map_err(|_| {
                self.err_at(at, path, format!("expected an unsigned integer, found {v}"))
            }),
            h => Err(self.err_at(
                at,
                path,
                format!("expected an unsigned integer, found {}", h.kind()),
            )),
        }
    }

    fn expect_bool(&mut self, path: impl Fn() -> String) -> Result<bool> {
        let at = self.pos;
        match self.head(&path)? {
            Head::Bool(b) => Ok(b),
            // Some producers write flags as 0/1.
            Head::Uint(0) => Ok(false),
            Head::Uint(1) => Ok(true),
            h => Err(self.err_at(at, path, format!("expected a boolean, found {}", h.kind()))),
        }
    }

    fn u64_list(&mut self, path: impl Fn() -> String) -> Result<Vec<u64>> {
        let at = self.pos;
        let n = self.expect_array(&path)?;
        let mut out = Vec::new();
        self.reserve_for(&mut out, n, 1, at, &path)?;
        for i in 0..n {
            out.push(self.expect_u64(|| format!("{}[{i}]", path()))?);
        }
        Ok(out)
    }

    fn str_list(&mut self, path: impl Fn() -> String) -> Result<Vec<&'data str>> {
        let at = self.pos;
        let n = self.expect_array(&path)?;
        let mut out = Vec::new();
        self.reserve_for(&mut out, n, 1, at, &path)?;
        for i in 0..n {
            out.push(self.expect_str(|| format!("{}[{i}]", path()))?);
        }
        Ok(out)
    }

    /// Reserves room for the items an array claims, but never for more than the remaining
    /// bytes can encode (each item takes at least `min_item_bytes`), and fallibly: a count of
    /// 0xffffffff in an 8 MB note must not reserve gigabytes. `at` is the array's offset.
    fn reserve_for<T>(
        &self,
        v: &mut Vec<T>,
        claimed: u32,
        min_item_bytes: usize,
        at: usize,
        path: impl Fn() -> String,
    ) -> Result<()> {
        let remaining = self.bytes.len().saturating_sub(self.pos);
        let n = (claimed as usize).min(remaining / min_item_bytes.max(1));
        v.try_reserve(n).map_err(|_| {
            self.err_at(
                at,
                path,
                format!(
                    "cannot reserve memory for {n} items of {} bytes",
                    std::mem::size_of::<T>()
                ),
            )
        })
    }

    /// Reads a map key. A string key is returned as raw bytes (known keys are matched
    /// without UTF-8 validation); any other key is decoded with its value into an
    /// [`UnknownKey`].
    fn key(&mut self, path: &dyn Fn() -> String) -> Result<Result<&'data [u8], UnknownKey>> {
        let at = self.pos;
        if let Head::Str(k) = self.head(path)? {
            return Ok(Ok(k));
        }
        self.pos = at;
        let key = self.owned_value(path)?;
        let value = self.owned_value(path)?;
        Ok(Err(UnknownKey {
            key: key.to_string(),
            value,
        }))
    }

    fn unknown(&mut self, key: &[u8], path: impl Fn() -> String) -> Result<UnknownKey> {
        Ok(UnknownKey {
            key: String::from_utf8_lossy(key).into_owned(),
            value: self.owned_value(path)?,
        })
    }
}

/// Fewest bytes a kernel map can take: its required keys' names alone (`.name`, `.symbol`,
/// `.kernarg_segment_size`, ...) are longer.
const MIN_KERNEL_BYTES: usize = 64;
/// Fewest bytes an argument map can take: `.offset`, `.size` and `.value_kind` with values.
const MIN_ARG_BYTES: usize = 24;

/// Decodes the MessagePack metadata `bytes`, found at file offset `offset`.
///
/// # Errors
/// [`CodeObjectError::Metadata`] with the file offset of the item at fault and its key path,
/// when the bytes are not MessagePack, have trailing bytes, nest too deep in an unknown key,
/// or a known key has the wrong type; a missing required kernel key (`.name`, `.symbol`,
/// segment sizes, `.wavefront_size`) or argument key (`.offset`, `.size`, `.value_kind`) is
/// an error too.
pub fn decode(bytes: &[u8], offset: u64) -> Result<Metadata<'_>> {
    let mut r = Reader {
        bytes,
        pos: 0,
        base: offset,
    };
    let mut md = Metadata {
        version: Vec::new(),
        target: None,
        printf: Vec::new(),
        kernels: Vec::new(),
        unknown: Vec::new(),
    };
    let entries = r.expect_map(String::new)?;
    for _ in 0..entries {
        let key = match r.key(&String::new)? {
            Ok(k) => k,
            Err(unknown) => {
                md.unknown.push(unknown);
                continue;
            }
        };
        let path = || String::from_utf8_lossy(key).into_owned();
        match key {
            b"amdhsa.version" => md.version = r.u64_list(path)?,
            b"amdhsa.target" => md.target = Some(r.expect_str(path)?),
            b"amdhsa.printf" => md.printf = r.str_list(path)?,
            b"amdhsa.kernels" => {
                let at = r.pos;
                let n = r.expect_array(path)?;
                r.reserve_for(&mut md.kernels, n, MIN_KERNEL_BYTES, at, path)?;
                for i in 0..n as usize {
                    md.kernels.push(decode_kernel(&mut r, i)?);
                }
            }
            _ => md.unknown.push(r.unknown(key, path)?),
        }
    }
    if r.pos != bytes.len() {
        return Err(r.err_at(
            r.pos,
            String::new,
            format!("{} bytes after the metadata map", bytes.len() - r.pos),
        ));
    }
    tracing::debug!(kernels = md.kernels.len(), target = ?md.target, at = r.offset(), "decoded AMDGPU metadata");
    Ok(md)
}

fn decode_kernel<'data>(r: &mut Reader<'data>, i: usize) -> Result<KernelMetadata<'data>> {
    let path = |key: &[u8]| {
        format!(
            "amdhsa.kernels[{i}].{}",
            String::from_utf8_lossy(key).trim_start_matches('.')
        )
    };
    let start = r.pos;
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
    let here = || format!("amdhsa.kernels[{i}]");
    let entries = r.expect_map(here)?;
    for _ in 0..entries {
        let key = match r.key(&here)? {
            Ok(k) => k,
            Err(unknown) => {
                k.unknown.push(unknown);
                continue;
            }
        };
        let p = || path(key);
        match key {
            b".name" => name = Some(r.expect_str(p)?),
            b".symbol" => symbol = Some(r.expect_str(p)?),
            b".kernarg_segment_size" => kernarg_segment_size = Some(r.expect_u64(p)?),
            b".kernarg_segment_align" => kernarg_segment_align = Some(r.expect_u64(p)?),
            b".group_segment_fixed_size" => group = Some(r.expect_u64(p)?),
            b".private_segment_fixed_size" => private = Some(r.expect_u64(p)?),
            b".wavefront_size" => wavefront_size = Some(r.expect_u64(p)?),
            b".sgpr_count" => k.sgpr_count = Some(r.expect_u64(p)?),
            b".vgpr_count" => k.vgpr_count = Some(r.expect_u64(p)?),
            b".agpr_count" => k.agpr_count = Some(r.expect_u64(p)?),
            b".sgpr_spill_count" => k.sgpr_spill_count = Some(r.expect_u64(p)?),
            b".vgpr_spill_count" => k.vgpr_spill_count = Some(r.expect_u64(p)?),
            b".max_flat_workgroup_size" => k.max_flat_workgroup_size = Some(r.expect_u64(p)?),
            b".uses_dynamic_stack" => k.uses_dynamic_stack = Some(r.expect_bool(p)?),
            b".kind" => k.kind = Some(r.expect_str(p)?),
            b".language" => k.language = Some(r.expect_str(p)?),
            b".reqd_workgroup_size" => k.reqd_workgroup_size = Some(r.u64_list(p)?),
            b".args" => {
                let at = r.pos;
                let n = r.expect_array(p)?;
                r.reserve_for(&mut k.args, n, MIN_ARG_BYTES, at, p)?;
                for j in 0..n as usize {
                    k.args.push(decode_arg(r, i, j)?);
                }
            }
            _ => k.unknown.push(r.unknown(key, p)?),
        }
    }
    let missing = |key: &[u8]| r.err_at(start, || path(key), "required key is missing");
    k.name = name.ok_or_else(|| missing(b".name"))?;
    k.symbol = symbol.ok_or_else(|| missing(b".symbol"))?;
    k.kernarg_segment_size =
        kernarg_segment_size.ok_or_else(|| missing(b".kernarg_segment_size"))?;
    k.kernarg_segment_align =
        kernarg_segment_align.ok_or_else(|| missing(b".kernarg_segment_align"))?;
    k.group_segment_fixed_size = group.ok_or_else(|| missing(b".group_segment_fixed_size"))?;
    k.private_segment_fixed_size =
        private.ok_or_else(|| missing(b".private_segment_fixed_size"))?;
    k.wavefront_size = wavefront_size.ok_or_else(|| missing(b".wavefront_size"))?;
    Ok(k)
}

fn decode_arg<'data>(r: &mut Reader<'data>, i: usize, j: usize) -> Result<KernelArg<'data>> {
    let path = |key: &[u8]| {
        format!(
            "amdhsa.kernels[{i}].args[{j}].{}",
            String::from_utf8_lossy(key).trim_start_matches('.')
        )
    };
    let start = r.pos;
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
    let here = || format!("amdhsa.kernels[{i}].args[{j}]");
    let entries = r.expect_map(here)?;
    for _ in 0..entries {
        let key = match r.key(&here)? {
            Ok(k) => k,
            Err(unknown) => {
                a.unknown.push(unknown);
                continue;
            }
        };
        let p = || path(key);
        match key {
            b".offset" => offset = Some(r.expect_u64(p)?),
            b".size" => size = Some(r.expect_u64(p)?),
            b".value_kind" => value_kind = Some(ValueKind(r.expect_str(p)?)),
            b".address_space" => a.address_space = Some(r.expect_str(p)?),
            b".name" => a.name = Some(r.expect_str(p)?),
            b".type_name" => a.type_name = Some(r.expect_str(p)?),
            b".pointee_align" => a.pointee_align = Some(r.expect_u64(p)?),
            b".access" => a.access = Some(r.expect_str(p)?),
            _ => a.unknown.push(r.unknown(key, p)?),
        }
    }
    let missing = |key: &[u8]| r.err_at(start, || path(key), "required key is missing");
    a.offset = offset.ok_or_else(|| missing(b".offset"))?;
    a.size = size.ok_or_else(|| missing(b".size"))?;
    a.value_kind = value_kind.ok_or_else(|| missing(b".value_kind"))?;
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
            (
                s("amdhsa.version"),
                Value::Array(vec![Value::from(1), Value::from(2)]),
            ),
            (
                s("amdhsa.kernels"),
                Value::Array(vec![kernel(vec![
                    (s(".args"), Value::Array(vec![arg])),
                    (s(".vgpr_spill_count"), Value::from(3)),
                ])]),
            ),
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
                assert!(
                    offset > 0x40,
                    "the offset of the bad value, not of the note"
                );
                assert_eq!(path, "amdhsa.kernels[0].args[0].size");
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn every_integer_encoding_is_read() {
        // uint8/16/32/64, positive fixint and a non-negative int8 all decode as sizes.
        for enc in [
            vec![0x05],
            vec![0xcc, 5],
            vec![0xcd, 0, 5],
            vec![0xce, 0, 0, 0, 5],
            vec![0xcf, 0, 0, 0, 0, 0, 0, 0, 5],
            vec![0xd0, 5],
        ] {
            let mut bytes = vec![0x81, 0xae];
            bytes.extend_from_slice(b"amdhsa.version");
            bytes.push(0x91);
            bytes.extend_from_slice(&enc);
            assert_eq!(decode(&bytes, 0).unwrap().version, vec![5], "{enc:x?}");
        }
        // A negative int8 is not a size.
        let mut bytes = vec![0x81, 0xae];
        bytes.extend_from_slice(b"amdhsa.version");
        bytes.extend_from_slice(&[0x91, 0xd0, 0xfb]);
        let err = decode(&bytes, 0x100).unwrap_err();
        assert!(
            matches!(err, CodeObjectError::Metadata { offset: 0x111, .. }),
            "{err}"
        );
    }

    #[test]
    fn missing_required_key_is_an_error() {
        let root = Value::Map(vec![(
            s("amdhsa.kernels"),
            Value::Array(vec![Value::Map(vec![(s(".name"), s("k"))])]),
        )]);
        let err = decode(&encode(&root), 0).unwrap_err();
        assert!(
            err.to_string().contains("amdhsa.kernels[0].symbol"),
            "{err}"
        );
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
        // Deep nesting inside an unknown key is cut off too.
        let mut deep_unknown = vec![0x81, 0xa1, b'x'];
        deep_unknown.extend(std::iter::repeat_n(0x91, 10_000));
        deep_unknown.push(0x00);
        assert!(decode(&deep_unknown, 0).is_err());
        // Strings and lengths that run past the end.
        assert!(decode(&[0x81, 0xdb, 0xff, 0xff, 0xff, 0xff], 0).is_err());
        assert!(decode(&[0x81, 0xa1, b'x', 0xc6, 0xff, 0xff, 0xff, 0xff], 0).is_err());
        // Trailing bytes.
        assert!(decode(&[0x80, 0x00], 0).is_err());
        // Not a map.
        assert!(decode(&[0x01], 0).is_err());
    }
}
