//! Lowering the decoder's instructions into uops: the handler for each mnemonic, operands
//! resolved into [`Opnd`]s, modifiers and memory fields copied. Placeholder until the decoder
//! lands.

use super::{Block, DynMemory};
use crate::program::DecodeStop;

/// Decodes the block starting at `pc`, and why decoding stopped early if it did.
pub fn decode_block(pc: u64, _mem: &dyn DynMemory) -> (Block, Option<DecodeStop>) {
    (
        Block { start: pc, uops: Box::new([]), stopped: true },
        Some(DecodeStop::Invalid { pc, word: 0, detail: "no decoder".into() }),
    )
}

/// The instruction at `pc` as llvm-objdump prints it, or empty.
pub fn describe(_pc: u64, _mem: &dyn DynMemory) -> String {
    String::new()
}

