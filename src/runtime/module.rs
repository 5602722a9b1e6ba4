//! Code loaded at run time through the module API ([`Module`]) and the handle registration
//! returns ([`FatBinaryHandle`]). Not for loading (the registry does) or for kernels (see
//! [`KernelRef`]).

use std::sync::Arc;

use super::fat_binary::FatBinary;
use super::kernel::{KernelRef, LoadedFatBinary};
use super::{RuntimeError, RuntimeResult};

/// Code loaded at run time through the module API (`hipModuleLoadData`), on one agent.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
///
/// use rocload::backend::SoftAgent;
/// use rocload::runtime::{Runtime, RuntimeError, RuntimeOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = SoftAgent::new("gfx1030".parse()?).device();
/// let rt = Runtime::with_devices(vec![agent], RuntimeOptions::default());
/// // A compressed offload bundle of clang-19's device code for `vadd.hip`.
/// let bytes: Arc<[u8]> = std::fs::read(concat!(
///     env!("CARGO_MANIFEST_DIR"),
///     "/tests/fixtures/hip/vadd.device.ccob"
/// ))?
/// .into();
/// let module = rt.load_module(bytes, 0)?;
/// assert_eq!(module.device(), 0);
///
/// // Kernels by raw or demangled name.
/// let vadd = module.function("vadd")?;
/// assert_eq!(vadd.info().args.iter().filter(|a| !a.is_hidden()).count(), 4);
/// let axpy = module.function("void axpy<float>(float, float const*, float*, int)")?;
/// assert_eq!(axpy.info().name, "_Z4axpyIfEvT_PKS0_PS0_i");
/// assert!(matches!(
///     module.function("vsub"),
///     Err(RuntimeError::NotFound { kind: "kernel", .. })
/// ));
///
/// // The handle a C caller gets is the id, which finds the same module.
/// assert!(Arc::ptr_eq(&rt.module(module.id())?, &module));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Module {
    fat_binary: Arc<FatBinary>,
    loaded: Arc<LoadedFatBinary>,
    device: usize,
}

impl Module {
    pub(super) fn new(
        fat_binary: Arc<FatBinary>,
        loaded: Arc<LoadedFatBinary>,
        device: usize,
    ) -> Module {
        Module {
            fat_binary,
            loaded,
            device,
        }
    }

    /// The module's id in its runtime (never reused).
    pub fn id(&self) -> u64 {
        self.fat_binary.id()
    }

    /// The loaded code.
    pub fn loaded(&self) -> &Arc<LoadedFatBinary> {
        &self.loaded
    }

    /// The device ordinal it was loaded on.
    pub fn device(&self) -> usize {
        self.device
    }

    /// A kernel by raw or demangled name.
    ///
    /// # Errors
    /// [`RuntimeError::NotFound`] if the module has no such kernel.
    pub fn function(&self, name: &str) -> RuntimeResult<KernelRef> {
        KernelRef::find(&self.loaded, name).ok_or_else(|| RuntimeError::NotFound {
            kind: "kernel",
            name: name.into(),
            place: self.fat_binary.describe(),
        })
    }

    /// A variable (or any symbol) by name: its address and size.
    ///
    /// # Errors
    /// [`RuntimeError::NotFound`] if the module defines no such symbol.
    pub fn global(&self, name: &str) -> RuntimeResult<(u64, u64)> {
        self.loaded
            .executable()
            .symbol(name)
            .map(|s| (s.address, s.size))
            .ok_or_else(|| RuntimeError::NotFound {
                kind: "global",
                name: name.into(),
                place: self.fat_binary.describe(),
            })
    }
}

/// A registered fat binary, as returned by registration.
#[derive(Debug, Clone)]
pub struct FatBinaryHandle {
    fat_binary: Arc<FatBinary>,
}

impl FatBinaryHandle {
    pub(super) fn new(fat_binary: Arc<FatBinary>) -> FatBinaryHandle {
        FatBinaryHandle { fat_binary }
    }

    /// The fat binary's id in its runtime: 1, 2, ... in order of registration, never reused,
    /// so a stale id never names a new fat binary.
    pub fn id(&self) -> u64 {
        self.fat_binary.id()
    }

    /// The fat binary.
    pub fn fat_binary(&self) -> &Arc<FatBinary> {
        &self.fat_binary
    }
}
