//! Stand-in for `crate::target::ElfTarget` until the targets layer lands; replaced by it.
//! Decodes nothing from `e_flags`: the target layer owns that.

/// Target of a code object, as the target layer will provide it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfTarget {
    /// Placeholder for the target ID.
    pub target: String,
    /// Code object version (3–6).
    pub code_object_version: u32,
    /// Generic version (v6).
    pub generic_version: u32,
}

impl ElfTarget {
    /// Placeholder.
    pub fn from_header(_os_abi: u8, abi_version: u8, e_flags: u32) -> Result<Self, crate::target::TargetError> {
        Ok(Self { target: format!("e_flags={e_flags:#x}"), code_object_version: u32::from(abi_version) + 2, generic_version: 0 })
    }
}
