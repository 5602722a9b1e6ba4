//! A kernel's launch facts as owned values ([`KernelInfo`]): what a loader, a runtime, a
//! launch and `rocload symbols` need, taken once from the metadata note where it describes the
//! kernel and otherwise from the descriptor. Not for validation (descriptor/metadata
//! disagreements are [`super::KernelIssue`]s) or for addresses after loading (the loader adds
//! the load delta).

use serde::Serialize;

use super::{demangle, CodeObject, Kernel, KernelDescriptor};

/// One kernel argument, as the metadata's `.args` describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct KernelArgInfo {
    /// Offset in the kernarg segment.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// `.value_kind` as written (`by_value`, `global_buffer`, `hidden_block_count_x`, ...).
    pub value_kind: String,
    /// `.address_space` for pointers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address_space: Option<String>,
    /// Source name, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `.pointee_align` of dynamic shared pointers, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointee_align: Option<u64>,
}

impl KernelArgInfo {
    /// Whether the runtime fills this argument (`hidden_*`), not the caller.
    pub fn is_hidden(&self) -> bool {
        self.value_kind.starts_with("hidden_")
    }
}

/// A kernel's facts, owned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct KernelInfo {
    /// Raw (mangled) name: the descriptor symbol without `.kd`.
    pub name: String,
    /// Demangled name, for C++ kernels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    /// The descriptor symbol (`<name>.kd`).
    pub symbol: String,
    /// Address of the descriptor in the code object (before loading).
    pub descriptor_offset: u64,
    /// Address of the code symbol in the code object, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_offset: Option<u64>,
    /// `.kernarg_segment_size` (the descriptor's `kernarg_size` without metadata).
    #[serde(rename = "kernarg_size")]
    pub kernarg_segment_size: u64,
    /// `.kernarg_segment_align` (8, the ABI minimum, without metadata).
    pub kernarg_segment_align: u64,
    /// `.group_segment_fixed_size`: static LDS bytes.
    pub group_segment_fixed_size: u64,
    /// `.private_segment_fixed_size`: scratch bytes per work-item.
    pub private_segment_fixed_size: u64,
    /// `.wavefront_size` (the descriptor's bit without metadata).
    pub wavefront_size: u64,
    /// `.sgpr_count`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sgpr_count: Option<u64>,
    /// `.vgpr_count`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vgpr_count: Option<u64>,
    /// `.agpr_count`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agpr_count: Option<u64>,
    /// `.max_flat_workgroup_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_flat_workgroup_size: Option<u64>,
    /// Whether the kernel needs a dynamically sized stack (`.uses_dynamic_stack`, else the
    /// descriptor's bit 11 on code object v5 and later).
    pub uses_dynamic_stack: bool,
    /// The arguments, explicit and hidden, in metadata order (empty without metadata).
    pub args: Vec<KernelArgInfo>,
    /// The decoded descriptor, when its bytes are in the file.
    #[serde(skip)]
    pub descriptor: Option<KernelDescriptor>,
    /// Whether the metadata note described the kernel (else the descriptor did).
    pub from_metadata: bool,
    /// Code object version of the file (4, 5, 6).
    pub code_object_version: u32,
}

impl KernelInfo {
    /// Bytes of explicit (caller-supplied) arguments: the end of the last non-hidden one.
    pub fn explicit_args_size(&self) -> u64 {
        self.args
            .iter()
            .filter(|a| !a.is_hidden())
            .map(|a| a.offset.saturating_add(a.size))
            .max()
            .unwrap_or(0)
    }
}

impl<'data> CodeObject<'data> {
    /// The owned facts of `kernel`.
    pub fn kernel_info(&self, kernel: &Kernel<'data>) -> KernelInfo {
        let md = self.kernel_metadata(kernel);
        let d = kernel.descriptor.as_ref();
        let version = self.code_object_version();
        KernelInfo {
            name: kernel.name.to_owned(),
            demangled: demangle(kernel.name),
            symbol: kernel.descriptor_symbol.name.to_owned(),
            descriptor_offset: kernel.descriptor_address,
            code_offset: kernel.code_symbol.map(|c| c.value),
            kernarg_segment_size: md
                .map(|m| m.kernarg_segment_size)
                .or(d.map(|d| d.kernarg_size.into()))
                .unwrap_or(0),
            kernarg_segment_align: md.map_or(8, |m| m.kernarg_segment_align),
            group_segment_fixed_size: md
                .map(|m| m.group_segment_fixed_size)
                .or(d.map(|d| d.group_segment_fixed_size.into()))
                .unwrap_or(0),
            private_segment_fixed_size: md
                .map(|m| m.private_segment_fixed_size)
                .or(d.map(|d| d.private_segment_fixed_size.into()))
                .unwrap_or(0),
            wavefront_size: md
                .map(|m| m.wavefront_size)
                .or(d.map(|d| d.wavefront_size().into()))
                .unwrap_or(64),
            sgpr_count: md.and_then(|m| m.sgpr_count),
            vgpr_count: md.and_then(|m| m.vgpr_count),
            agpr_count: md.and_then(|m| m.agpr_count),
            max_flat_workgroup_size: md.and_then(|m| m.max_flat_workgroup_size),
            uses_dynamic_stack: md.and_then(|m| m.uses_dynamic_stack).unwrap_or_else(|| {
                version >= 5 && d.is_some_and(KernelDescriptor::uses_dynamic_stack)
            }),
            args: md
                .map(|m| {
                    m.args
                        .iter()
                        .map(|a| KernelArgInfo {
                            offset: a.offset,
                            size: a.size,
                            value_kind: a.value_kind.as_str().to_owned(),
                            address_space: a.address_space.map(str::to_owned),
                            name: a.name.map(str::to_owned),
                            pointee_align: a.pointee_align,
                        })
                        .collect()
                })
                .unwrap_or_default(),
            descriptor: kernel.descriptor,
            from_metadata: md.is_some(),
            code_object_version: version,
        }
    }
}
