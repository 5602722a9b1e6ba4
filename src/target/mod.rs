//! Targets: processors, target IDs, ELF flags, compatibility and the selection policy.
//!
//! Placeholder until the targets issue fills it in.

/// A target ID, ISA name or selection failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// The text is not a valid target ID.
    #[error("invalid target id {text:?}: {reason}")]
    InvalidTargetId {
        /// What was given.
        text: String,
        /// Why it is not a target ID.
        reason: String,
    },
}
