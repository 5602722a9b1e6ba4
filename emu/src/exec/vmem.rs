//! placeholder

use super::Handler;

/// Handlers by mnemonic.
pub const TABLE: &[(&str, Handler)] = &[];
