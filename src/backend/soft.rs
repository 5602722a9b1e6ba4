//! The software agent: an in-process agent whose "device memory" is host memory, with a
//! configurable ISA, so every selection, layout and relocation path runs without a GPU.
//! Addresses it hands out are real host addresses of the loaded images.
//!
//! It does not execute kernels yet.

use std::sync::Arc;

use crate::loader::{
    relocate, Agent, BackendKind, ExecutableBackend, LoadError, Module, Placement,
};
use crate::target::AgentIsa;

/// The software agent's ISA when the configuration names none.
pub const DEFAULT_SOFT_ISA: &str = "gfx1030";

/// The in-process software agent.
#[derive(Debug, Clone)]
pub struct SoftAgent {
    isa: AgentIsa,
}

impl SoftAgent {
    /// An agent reporting `isa`.
    pub fn new(isa: AgentIsa) -> Self {
        SoftAgent { isa }
    }

    /// Shared handle, as agents are passed around.
    pub fn shared(self) -> Arc<dyn Agent> {
        Arc::new(self)
    }
}

impl Agent for SoftAgent {
    fn isa(&self) -> &AgentIsa {
        &self.isa
    }

    fn backend(&self) -> BackendKind {
        BackendKind::Soft
    }

    fn new_executable(&self) -> Result<Box<dyn ExecutableBackend>, LoadError> {
        Ok(Box::new(SoftExecutable::default()))
    }
}

/// ROCr aligns each code object's allocation to 256 bytes; so do we.
#[repr(C, align(256))]
#[derive(Clone, Copy)]
struct Block([u8; 256]);

/// One loaded image: 256-byte aligned host memory that never moves once allocated.
struct Image {
    blocks: Box<[Block]>,
    len: usize,
}

impl Image {
    fn zeroed(len: u64) -> Result<Image, LoadError> {
        let too_big = || LoadError::Backend {
            op: "allocate",
            message: format!("{len} bytes"),
        };
        let len = usize::try_from(len).map_err(|_| too_big())?;
        let count = len.div_ceil(256).max(1);
        let mut v = Vec::new();
        v.try_reserve_exact(count).map_err(|_| too_big())?;
        v.resize(count, Block([0; 256]));
        Ok(Image {
            blocks: v.into_boxed_slice(),
            len,
        })
    }

    fn base(&self) -> u64 {
        self.blocks.as_ptr() as u64
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        // SAFETY: `blocks` is `count * 256` initialised bytes with no padding (repr(C) array
        // of u8), and `len <= count * 256`.
        unsafe { std::slice::from_raw_parts_mut(self.blocks.as_mut_ptr().cast::<u8>(), len) }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: as in `bytes_mut`.
        unsafe { std::slice::from_raw_parts(self.blocks.as_ptr().cast::<u8>(), self.len) }
    }
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Image({:#x}, {} bytes)", self.base(), self.len)
    }
}

/// An executable on the software agent.
#[derive(Debug, Default)]
pub struct SoftExecutable {
    images: Vec<Option<Image>>,
    frozen: bool,
}

impl SoftExecutable {
    fn slot(&mut self, index: usize) -> &mut Option<Image> {
        if self.images.len() <= index {
            self.images.resize_with(index + 1, || None);
        }
        &mut self.images[index]
    }
}

impl ExecutableBackend for SoftExecutable {
    fn links_cycles(&self) -> bool {
        true
    }

    fn reserve(&mut self, index: usize, module: &Module) -> Result<Option<u64>, LoadError> {
        if self.frozen {
            return Err(LoadError::Backend {
                op: "reserve",
                message: "executable is frozen".into(),
            });
        }
        let image = Image::zeroed(module.image_size())?;
        let base = image.base();
        *self.slot(index) = Some(image);
        Ok(Some(base))
    }

    fn load(
        &mut self,
        index: usize,
        module: &Module,
        imports: &[Option<u64>],
    ) -> Result<Placement, LoadError> {
        if self.frozen {
            return Err(LoadError::Backend {
                op: "load",
                message: "executable is frozen".into(),
            });
        }
        if self.slot(index).is_none() {
            self.reserve(index, module)?;
        }
        let image = self.images[index]
            .as_mut()
            .ok_or_else(|| LoadError::Backend {
                op: "load",
                message: "no reservation".into(),
            })?;
        let base = image.base();
        relocate::lay_out(module, image.bytes_mut())?;
        let applied = relocate::apply(module, image.bytes_mut(), base, imports, index)?;
        tracing::debug!(source = %module.source(), base = format_args!("{base:#x}"), size = image.len, relocations = applied.len(), "soft agent loaded code object");
        Ok(Placement {
            base,
            size: image.len as u64,
        })
    }

    fn freeze(&mut self) -> Result<(), LoadError> {
        self.frozen = true;
        Ok(())
    }

    fn read_image(&self, index: usize) -> Option<Vec<u8>> {
        self.images.get(index)?.as_ref().map(|i| i.bytes().to_vec())
    }
}
