//! The decode cache: straight-line blocks of uops by start address, decoded on first
//! execution and shared by every wave and host thread of the emulator. Unreachable code is
//! never decoded, and bytes that do not decode become a [`DecodeStop`] at the end of the block
//! that is reported only if a wave reaches it. Not for decoding single instructions (the
//! decoder and [`crate::exec::lower`] do).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::exec::{lower, Block, DynMemory};

/// Why a block ends before a branch.
#[derive(Debug)]
pub enum DecodeStop {
    /// The instruction bytes could not be read.
    Fetch {
        /// Where.
        pc: u64,
        /// The embedder's fault payload.
        fault: Box<dyn Any + Send>,
    },
    /// The bytes are no gfx1030 instruction.
    Invalid {
        /// Where.
        pc: u64,
        /// The first dword.
        word: u32,
        /// The decoder's reason.
        detail: String,
    },
}

/// Blocks by start address.
#[derive(Debug, Default)]
pub struct Program {
    blocks: RwLock<HashMap<u64, Arc<Block>>>,
}

/// Most uops in one block (longer straight-line code continues in a following block).
pub const MAX_BLOCK: usize = 256;

impl Program {
    /// An empty cache.
    pub fn new() -> Program {
        Program::default()
    }

    /// The block starting at `pc`, decoding it from `mem` on first use.
    pub fn block(&self, pc: u64, mem: &dyn DynMemory) -> Arc<Block> {
        if let Some(b) = self
            .blocks
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&pc)
        {
            return b.clone();
        }
        let (block, stop) = lower::decode_block(pc, mem);
        let block = Arc::new(block);
        tracing::debug!(
            pc = format_args!("{pc:#x}"),
            uops = block.uops.len(),
            stopped = block.stopped,
            "decoded block"
        );
        // A block that faulted on fetch at once is not cached: memory may become readable.
        if matches!(stop, Some(DecodeStop::Fetch { .. })) && block.uops.is_empty() {
            return block;
        }
        let mut map = self.blocks.write().unwrap_or_else(|p| p.into_inner());
        map.entry(pc).or_insert(block).clone()
    }

    /// Puts a block in the cache (tests, and embedders that build uops themselves).
    pub fn insert(&self, block: Block) {
        self.blocks
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(block.start, Arc::new(block));
    }

    /// Forgets every block overlapping `[start, start + len)` (code unloaded or rewritten).
    pub fn forget(&self, start: u64, len: u64) {
        let end = start.saturating_add(len);
        self.blocks
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, b| {
                let last = b.uops.last().map_or(b.start, |u| u.next_pc());
                last <= start || b.start >= end
            });
    }

    /// Number of cached blocks.
    pub fn len(&self) -> usize {
        self.blocks.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
