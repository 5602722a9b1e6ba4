//! The crate-wide error: one variant per layer, each layer keeping its own typed errors.

use std::path::PathBuf;

use crate::code_object::CodeObjectError;
use crate::container::ContainerError;
use crate::target::TargetError;

/// Result with the crate-wide [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Any rocload failure. Match on the layer, then on that layer's variant.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A fat binary or bundle could not be read.
    #[error(transparent)]
    Container(#[from] ContainerError),
    /// A code object could not be parsed.
    #[error(transparent)]
    CodeObject(#[from] CodeObjectError),
    /// A target ID, ISA name or selection failed.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// Code objects could not be loaded or linked.
    #[error(transparent)]
    Load(#[from] crate::loader::LoadError),
    /// A file could not be opened or mapped.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file in question.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
}

impl Error {
    /// Whether the failure is about memory: a reservation the allocator refused, an entry
    /// over the size cap, or an image the agent could not allocate. The C API reports these
    /// as `hipErrorOutOfMemory`.
    pub fn is_out_of_memory(&self) -> bool {
        match self {
            Error::Container(e) => e.is_out_of_memory(),
            Error::Load(crate::loader::LoadError::Backend { op, .. }) => *op == "allocate",
            _ => false,
        }
    }
}
