//! What a fat binary became on one agent ([`LoadedFatBinary`]), and its kernels ([`KernelRef`]):
//! the facts the code-object layer read once when the module was made ([`KernelInfo`]) plus
//! the addresses they got on the agent.
//!
//! Ownership runs one way, as in cudarc (context → module → function, each child holding its
//! parent): a kernel holds its loaded code, and the loaded code holds the device context it was
//! loaded in, so a launch can tell a stream of that context from any other (another device, or
//! the same ordinal of another runtime). A context never holds loaded code (a dispatch in flight
//! does, until it completes), so there is no cycle.
//!
//! Not for loading (the loader) or choosing entries (the fat-binary module).

use std::collections::HashMap;
use std::sync::Arc;

use crate::code_object::KernelInfo;
use crate::loader::Executable;

use super::device::DeviceContext;
use super::tools::Tools;

/// A kernel as placed on the agent: which module's kernel, and its addresses.
#[derive(Debug, Clone, Copy)]
struct PlacedKernel {
    code_object: usize,
    kernel: usize,
    descriptor_address: u64,
    code_address: Option<u64>,
}

/// A fat binary loaded and linked on one agent: the executable and its kernels.
#[derive(Debug)]
pub struct LoadedFatBinary {
    fat_binary: u64,
    device: usize,
    executable: Executable,
    kernels: Vec<PlacedKernel>,
    by_name: HashMap<Box<str>, usize>,
    /// Told when this is dropped (the code leaves the device).
    tools: Arc<Tools>,
    /// The tools' ids of its code objects.
    tool_events: Vec<u64>,
    /// The device context it was loaded in; `None` on agents that run no kernels (a runtime
    /// made with [`Runtime::new`](super::Runtime::new)). Last, so it is dropped after the
    /// executable: the code leaves the device before its context can go.
    context: Option<Arc<DeviceContext>>,
}

impl Drop for LoadedFatBinary {
    fn drop(&mut self) {
        self.tools.unloaded(&self.tool_events);
    }
}

impl LoadedFatBinary {
    pub(crate) fn new(
        fat_binary: u64,
        device: usize,
        executable: Executable,
        tools: &Arc<Tools>,
        context: Option<Arc<DeviceContext>>,
    ) -> LoadedFatBinary {
        let mut kernels = Vec::new();
        for (code_object, lco) in executable.code_objects().iter().enumerate() {
            for (kernel, k) in lco.module.kernels().iter().enumerate() {
                kernels.push(PlacedKernel {
                    code_object,
                    kernel,
                    descriptor_address: lco.load_delta.wrapping_add(k.descriptor_offset),
                    code_address: k.code_offset.map(|c| lco.load_delta.wrapping_add(c)),
                });
            }
        }
        let tool_events = tools.loaded(device, &executable);
        let mut loaded = LoadedFatBinary {
            fat_binary,
            device,
            context,
            executable,
            kernels,
            by_name: HashMap::new(),
            tool_events,
            tools: tools.clone(),
        };
        let mut by_name = HashMap::with_capacity(loaded.kernels.len() * 2);
        for i in 0..loaded.kernels.len() {
            let info = loaded.info(i);
            by_name
                .entry(info.name.clone().into_boxed_str())
                .or_insert(i);
            if let Some(d) = &info.demangled {
                by_name.entry(d.clone().into_boxed_str()).or_insert(i);
            }
        }
        loaded.by_name = by_name;
        loaded
    }

    fn info(&self, index: usize) -> &KernelInfo {
        let k = self.kernels[index];
        &self.executable.code_objects()[k.code_object]
            .module
            .kernels()[k.kernel]
    }

    /// The registration number of the fat binary (or module) it came from.
    pub fn fat_binary(&self) -> u64 {
        self.fat_binary
    }

    /// The device ordinal.
    pub fn device(&self) -> usize {
        self.device
    }

    /// The device context it was loaded in (kept alive while this is), or `None` where the
    /// agent runs no kernels.
    pub fn context(&self) -> Option<&Arc<DeviceContext>> {
        self.context.as_ref()
    }

    /// The executable on the agent.
    pub fn executable(&self) -> &Executable {
        &self.executable
    }

    /// How many kernels it has.
    pub fn kernel_count(&self) -> usize {
        self.kernels.len()
    }

    /// Every kernel.
    pub fn kernels(self: &Arc<Self>) -> impl Iterator<Item = KernelRef> + '_ {
        (0..self.kernels.len()).map(|index| KernelRef {
            loaded: self.clone(),
            index,
        })
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

    /// The kernel's facts (metadata, arguments, descriptor), as the code object gives them.
    pub fn info(&self) -> &KernelInfo {
        self.loaded.info(self.index)
    }

    /// Address of the kernel descriptor on the agent (a dispatch's `kernel_object`).
    pub fn descriptor_address(&self) -> u64 {
        self.loaded.kernels[self.index].descriptor_address
    }

    /// Address of the code on the agent, when the code object has the code symbol.
    pub fn code_address(&self) -> Option<u64> {
        self.loaded.kernels[self.index].code_address
    }

    /// The loaded code it belongs to.
    pub fn loaded(&self) -> &Arc<LoadedFatBinary> {
        &self.loaded
    }
}
