//! Containers: everything between raw bytes and one code object's bytes.

/// A fat binary could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContainerError {
    /// Placeholder.
    #[error("unrecognised data at offset {offset:#x}")]
    UnknownFormat {
        /// Where.
        offset: u64,
    },
}
