//! The decode cache: straight-line blocks of uops by start address, decoded on first
//! execution and shared by every wave and host thread of the emulator. Unreachable code is
//! never decoded, and bytes that do not decode become a [`DecodeStop`] at the end of the block
//! that is reported only if a wave reaches it. Not for decoding single instructions (the
//! decoder and [`crate::exec::lower`] do).
//!
//! Bounded: past [`MAX_UOPS`] cached uops the cache starts over (a kernel that jumps to ever
//! new addresses cannot grow it without end). The embedder forgets the blocks of code that is
//! unloaded or rewritten ([`Program::forget`]); each block keeps the bytes it was decoded from,
//! so a report names the instruction that ran ([`Program::instruction_at`]).

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use crate::exec::{lower, Block, DynMemory};
use crate::isa::{Isa, IsaId};

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
    /// The bytes are no instruction of the code's ISA.
    Invalid {
        /// Where.
        pc: u64,
        /// The first dword.
        word: u32,
        /// The decoder's reason.
        detail: String,
    },
}

/// Blocks by instruction set and start address.
#[derive(Debug, Default)]
pub struct Program {
    blocks: RwLock<HashMap<(IsaId, u64), Arc<Block>>>,
    /// Uops in `blocks`.
    uops: AtomicUsize,
}

/// Most uops in one block (longer straight-line code continues in a following block).
pub const MAX_BLOCK: usize = 256;

/// Most uops the cache holds (about 200 MB) before it starts over.
pub const MAX_UOPS: usize = 1 << 20;

impl Program {
    /// An empty cache.
    pub fn new() -> Program {
        Program::default()
    }

    /// The block of `isa` code starting at `pc`, decoding it from `mem` on first use.
    pub fn block(&self, isa: &'static Isa, pc: u64, mem: &dyn DynMemory) -> Arc<Block> {
        if let Some(b) = self
            .blocks
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(isa.id, pc))
        {
            return b.clone();
        }
        let (block, stop) = lower::decode_block(isa, pc, mem);
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
        if self.uops.load(Ordering::Relaxed) + block.uops.len() > MAX_UOPS {
            tracing::debug!(blocks = map.len(), "decode cache full: starting over");
            map.clear();
            self.uops.store(0, Ordering::Relaxed);
        }
        let entry = map.entry((isa.id, pc)).or_insert_with(|| {
            self.uops.fetch_add(block.uops.len(), Ordering::Relaxed);
            block
        });
        entry.clone()
    }

    /// The instruction at `pc` as it was decoded for execution (from the bytes of the block
    /// holding it, whatever the memory holds now); `None` when no cached block holds it.
    pub fn instruction_at(&self, pc: u64) -> Option<String> {
        let map = self.blocks.read().unwrap_or_else(|p| p.into_inner());
        map.values()
            .filter(|b| b.start <= pc)
            .find_map(|b| b.instruction_at(pc))
    }

    /// Puts a block in the cache (tests, and embedders that build uops themselves).
    pub fn insert(&self, block: Block) {
        self.uops.fetch_add(block.uops.len(), Ordering::Relaxed);
        if let Some(old) = self
            .blocks
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert((block.isa, block.start), Arc::new(block))
        {
            self.uops.fetch_sub(old.uops.len(), Ordering::Relaxed);
        }
    }

    /// Forgets every block overlapping `[start, start + len)` (code unloaded or rewritten).
    pub fn forget(&self, start: u64, len: u64) {
        let end = start.saturating_add(len);
        self.blocks
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, b| {
                let last = b.uops.last().map_or(b.start, |u| u.next_pc());
                let keep = last <= start || b.start >= end;
                if !keep {
                    self.uops.fetch_sub(b.uops.len(), Ordering::Relaxed);
                }
                keep
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::GFX1030;
    use crate::memory::FlatMemory;

    /// `s_mov_b32 s0, 1`, `s_nop 0`, `s_endpgm` at 0x1000.
    fn code() -> FlatMemory {
        let mut m = FlatMemory::new();
        m.map(0x1000, 0x1000, true).unwrap();
        let words: [u32; 3] = [0xbe800381, 0xbf800000, 0xbf810000];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        m.write_bytes(0x1000, &bytes).unwrap();
        m
    }

    #[test]
    fn reports_name_the_instruction_decoded_not_the_bytes_now() {
        let mem = code();
        let p = Program::new();
        let block = p.block(&GFX1030, 0x1000, &mem);
        assert_eq!(block.uops.len(), 3);
        assert_eq!(p.instruction_at(0x1004).as_deref(), Some("s_nop 0"));
        // The bytes change after decoding: the report still names what was decoded.
        mem.write_bytes(0x1004, &0xbf810000u32.to_le_bytes()).unwrap();
        assert_eq!(p.instruction_at(0x1004).as_deref(), Some("s_nop 0"));
        assert_eq!(p.instruction_at(0x1002), None, "not an instruction boundary");
        // Forgetting the range (code rewritten by the host) drops the block and its count.
        p.forget(0x1004, 4);
        assert!(p.is_empty());
        assert_eq!(p.uops.load(Ordering::Relaxed), 0);
        assert_eq!(p.block(&GFX1030, 0x1000, &mem).uops.len(), 2, "decoded again, now ending early");
    }

    #[test]
    fn the_cache_is_bounded() {
        let mem = code();
        let p = Program::new();
        // Blocks at every instruction address, again and again: never more than the cap.
        for round in 0..(MAX_UOPS / 3 + 10) {
            let pc = 0x1000 + 4 * (round % 3) as u64;
            p.forget(pc, 1);
            p.block(&GFX1030, pc, &mem);
            assert!(p.uops.load(Ordering::Relaxed) <= MAX_UOPS);
        }
        let cap_hit = Program::new();
        cap_hit.uops.store(MAX_UOPS - 1, Ordering::Relaxed);
        cap_hit.block(&GFX1030, 0x1000, &mem);
        assert_eq!(cap_hit.len(), 1, "starts over when full");
        assert_eq!(cap_hit.uops.load(Ordering::Relaxed), 3);
    }
}
