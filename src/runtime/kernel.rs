//! What a fat binary became on one agent ([`LoadedFatBinary`]), and its kernels with the
//! facts launches and attribute queries need ([`KernelInfo`]), read once at load time from
//! the code objects' metadata (falling back to the kernel descriptor).
//!
//! Not for loading (the loader) or choosing entries (the fat-binary module).

use std::collections::HashMap;
use std::sync::Arc;

use crate::code_object::CodeObject;
use crate::loader::Executable;

/// A kernel as loaded on one agent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KernelInfo {
    /// Raw (mangled) name, without `.kd`.
    pub name: String,
    /// Demangled name, for C++ kernels.
    pub demangled: Option<String>,
    /// Address of the kernel descriptor on the agent (a dispatch's `kernel_object`).
    pub descriptor_address: u64,
    /// Address of the code, when the code object has the code symbol.
    pub code_address: Option<u64>,
    /// `.kernarg_segment_size` (descriptor `kernarg_size` without metadata).
    pub kernarg_segment_size: u64,
    /// `.kernarg_segment_align` (8, the ABI minimum, without metadata).
    pub kernarg_segment_align: u64,
    /// `.group_segment_fixed_size`: static LDS bytes.
    pub group_segment_fixed_size: u64,
    /// `.private_segment_fixed_size`: scratch bytes per work-item.
    pub private_segment_fixed_size: u64,
    /// `.wavefront_size` (descriptor bit without metadata).
    pub wavefront_size: u64,
    /// `.sgpr_count`.
    pub sgpr_count: Option<u64>,
    /// `.vgpr_count`.
    pub vgpr_count: Option<u64>,
    /// `.max_flat_workgroup_size`.
    pub max_flat_workgroup_size: Option<u64>,
    /// Whether the metadata note described this kernel (else the descriptor did).
    pub from_metadata: bool,
    /// Code object version (4, 5, 6).
    pub code_object_version: u32,
}

/// A fat binary loaded and linked on one agent: the executable and its kernels.
#[derive(Debug)]
pub struct LoadedFatBinary {
    fat_binary: u64,
    device: usize,
    executable: Executable,
    kernels: Vec<KernelInfo>,
    by_name: HashMap<Box<str>, usize>,
}

impl LoadedFatBinary {
    pub(crate) fn new(fat_binary: u64, device: usize, executable: Executable) -> LoadedFatBinary {
        let mut kernels = Vec::new();
        for lco in executable.code_objects() {
            let Ok(co) = CodeObject::parse(lco.module.bytes()) else {
                continue;
            };
            for k in co.kernels() {
                let md = co.kernel_metadata(k);
                let d = k.descriptor.as_ref();
                kernels.push(KernelInfo {
                    name: k.name.to_string(),
                    demangled: crate::code_object::demangle(k.name),
                    descriptor_address: lco.load_delta.wrapping_add(k.descriptor_address),
                    code_address: k.code_symbol.map(|c| lco.load_delta.wrapping_add(c.value)),
                    kernarg_segment_size: md
                        .map(|m| m.kernarg_segment_size)
                        .or(d.map(|d| u64::from(d.kernarg_size)))
                        .unwrap_or(0),
                    kernarg_segment_align: md.map_or(8, |m| m.kernarg_segment_align),
                    group_segment_fixed_size: md
                        .map(|m| m.group_segment_fixed_size)
                        .or(d.map(|d| u64::from(d.group_segment_fixed_size)))
                        .unwrap_or(0),
                    private_segment_fixed_size: md
                        .map(|m| m.private_segment_fixed_size)
                        .or(d.map(|d| u64::from(d.private_segment_fixed_size)))
                        .unwrap_or(0),
                    wavefront_size: md
                        .map(|m| m.wavefront_size)
                        .or(d.map(|d| u64::from(d.wavefront_size())))
                        .unwrap_or(64),
                    sgpr_count: md.and_then(|m| m.sgpr_count),
                    vgpr_count: md.and_then(|m| m.vgpr_count),
                    max_flat_workgroup_size: md.and_then(|m| m.max_flat_workgroup_size),
                    from_metadata: md.is_some(),
                    code_object_version: co.code_object_version(),
                });
            }
        }
        let mut by_name = HashMap::with_capacity(kernels.len() * 2);
        for (i, k) in kernels.iter().enumerate() {
            by_name.entry(k.name.clone().into_boxed_str()).or_insert(i);
            if let Some(d) = &k.demangled {
                by_name.entry(d.clone().into_boxed_str()).or_insert(i);
            }
        }
        LoadedFatBinary {
            fat_binary,
            device,
            executable,
            kernels,
            by_name,
        }
    }

    /// The registration number of the fat binary (or module) it came from.
    pub fn fat_binary(&self) -> u64 {
        self.fat_binary
    }

    /// The device ordinal.
    pub fn device(&self) -> usize {
        self.device
    }

    /// The executable on the agent.
    pub fn executable(&self) -> &Executable {
        &self.executable
    }

    /// Every kernel.
    pub fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }
}

/// A kernel of a loaded fat binary; keeps the loaded code alive.
#[derive(Debug, Clone)]
pub struct KernelRef {
    loaded: Arc<LoadedFatBinary>,
    index: usize,
}

impl KernelRef {
    /// The kernel called `name` (raw or demangled) in `loaded`.
    pub fn find(loaded: &Arc<LoadedFatBinary>, name: &str) -> Option<KernelRef> {
        let name = name.strip_suffix(".kd").unwrap_or(name);
        let index = match loaded.by_name.get(name) {
            Some(&i) => i,
            // Other spellings the symbol table knows (`axpy<float>` for the full demangled name).
            None => {
                let s = loaded
                    .executable
                    .symbol(name)
                    .filter(|s| s.class == crate::loader::SymbolClass::Kernel)?;
                *loaded.by_name.get(s.name.as_str())?
            }
        };
        Some(KernelRef {
            loaded: loaded.clone(),
            index,
        })
    }

    /// The kernel's facts.
    pub fn info(&self) -> &KernelInfo {
        &self.loaded.kernels[self.index]
    }

    /// The loaded code it belongs to.
    pub fn loaded(&self) -> &Arc<LoadedFatBinary> {
        &self.loaded
    }
}
