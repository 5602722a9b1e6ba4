//! Decode-once cache for one code range: instructions are decoded lazily, a
//! straight-line block at a time, the first time execution reaches a PC, and
//! stay decoded. Bytes that are never reached (device-library bodies, padding)
//! are never decoded, so they cannot fail a kernel. Many threads may read at
//! once (workgroups run on several host threads). Not execution.
//!
//! A block is a run of instructions from an entry PC up to and including the
//! first one that ends a block (branch, jump, program end) or the end of the
//! range. Blocks are immutable once built and identified by a [`BlockId`], so
//! an interpreter can keep ids in its own structures and a later translator
//! can consume the same blocks.

use crate::isa::{DecodeError, Gfx1030, Inst, IsaFamily};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

/// Identifies a decoded block within its cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockId(pub u32);

/// A straight-line run of decoded instructions.
#[derive(Debug)]
pub struct Block {
    /// Address of the first instruction.
    pub start: u64,
    /// The instructions, in order.
    pub insts: Box<[Inst]>,
    /// Address of each instruction (parallel to `insts`).
    pub addrs: Box<[u64]>,
    /// Address just past the last instruction.
    pub end: u64,
    /// Set when the run stopped at bytes that do not decode: the error for
    /// the instruction at `end`. Executing up to it is fine; reaching it is not.
    pub stop: Option<DecodeError>,
}

/// Why a block could not be produced.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    /// The PC is outside the code range or not 4-byte aligned.
    #[error("pc {pc:#x} is outside code range {base:#x}..{end:#x} or misaligned")]
    OutOfRange {
        /// Requested PC.
        pc: u64,
        /// Range start.
        base: u64,
        /// Range end.
        end: u64,
    },
    /// The instruction at the PC itself does not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// Upper bound on instructions per block, so one block never grows without
/// bound on a huge range without control flow.
pub const MAX_BLOCK_INSTS: usize = 4096;

struct Inner {
    by_pc: HashMap<u64, BlockId>,
    blocks: Vec<Arc<Block>>,
}

/// Lazily decoded view of one code range for ISA family `F`.
pub struct DecodeCache<F: IsaFamily = Gfx1030> {
    code: Arc<[u8]>,
    base: u64,
    inner: RwLock<Inner>,
    _isa: PhantomData<F>,
}

impl<F: IsaFamily> DecodeCache<F> {
    /// A cache over `code`, which the GPU sees at address `base`.
    pub fn new(code: impl Into<Arc<[u8]>>, base: u64) -> Self {
        Self {
            code: code.into(),
            base,
            inner: RwLock::new(Inner {
                by_pc: HashMap::new(),
                blocks: Vec::new(),
            }),
            _isa: PhantomData,
        }
    }

    /// Code range start address.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Code range end address (exclusive).
    pub fn end(&self) -> u64 {
        self.base + self.code.len() as u64
    }

    /// The block starting at `pc`, decoding it on first use.
    pub fn block_at(&self, pc: u64) -> Result<(BlockId, Arc<Block>), CacheError> {
        {
            let inner = self.inner.read();
            if let Some(&id) = inner.by_pc.get(&pc) {
                return Ok((id, inner.blocks[id.0 as usize].clone()));
            }
        }
        let block = Arc::new(self.decode_block(pc)?);
        let mut inner = self.inner.write();
        // Another thread may have decoded it meanwhile: keep the first.
        if let Some(&id) = inner.by_pc.get(&pc) {
            return Ok((id, inner.blocks[id.0 as usize].clone()));
        }
        let id = BlockId(inner.blocks.len() as u32);
        inner.blocks.push(block.clone());
        inner.by_pc.insert(pc, id);
        Ok((id, block))
    }

    /// A block already decoded, by id (cheap: one read lock and a clone of an `Arc`).
    pub fn block(&self, id: BlockId) -> Option<Arc<Block>> {
        self.inner.read().blocks.get(id.0 as usize).cloned()
    }

    /// Number of blocks decoded so far.
    pub fn block_count(&self) -> usize {
        self.inner.read().blocks.len()
    }

    fn decode_block(&self, pc: u64) -> Result<Block, CacheError> {
        let out_of_range = || CacheError::OutOfRange {
            pc,
            base: self.base,
            end: self.end(),
        };
        if pc < self.base || pc >= self.end() || (pc - self.base) % 4 != 0 {
            return Err(out_of_range());
        }
        let mut insts = Vec::new();
        let mut addrs = Vec::new();
        let mut at = pc;
        let mut stop = None;
        while at < self.end() && insts.len() < MAX_BLOCK_INSTS {
            let offset = (at - self.base) as usize;
            match F::decode(&self.code[offset..], at) {
                Ok(inst) => {
                    insts.push(inst);
                    addrs.push(at);
                    at += inst.len as u64;
                    if inst.ends_block() {
                        break;
                    }
                }
                Err(e) if insts.is_empty() => return Err(e.into()),
                Err(e) => {
                    stop = Some(e);
                    break;
                }
            }
        }
        Ok(Block {
            start: pc,
            insts: insts.into(),
            addrs: addrs.into(),
            end: at,
            stop,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[u32]) -> Vec<u8> {
        ws.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn blocks_end_at_branches_and_tolerate_bad_bytes_after_them() {
        // v_mov_b32 v0, v1; s_branch 1; <garbage>; s_endpgm
        let code = words(&[0x7E00_0301, 0xBF82_0001, 0xFFFF_FFFF, 0xBF81_0000]);
        let cache: DecodeCache = DecodeCache::new(code, 0x1000);
        let (id, b) = cache.block_at(0x1000).unwrap();
        assert_eq!(b.insts.len(), 2);
        assert_eq!(b.insts[1].branch_target(), Some(0x100c));
        assert_eq!(b.end, 0x1008);
        let (id2, b2) = cache.block_at(0x100c).unwrap();
        assert_ne!(id, id2);
        assert_eq!(b2.insts.len(), 1);
        assert_eq!(cache.block_at(0x1000).unwrap().0, id);
        assert!(matches!(cache.block_at(0x1008), Err(CacheError::Decode(_))));
        assert!(matches!(
            cache.block_at(0x2000),
            Err(CacheError::OutOfRange { .. })
        ));
        assert_eq!(cache.block_count(), 2);
    }

    #[test]
    fn a_run_into_undecodable_bytes_stops_with_the_error() {
        let code = words(&[0x7E00_0301, 0xFFFF_FFFF]);
        let cache: DecodeCache = DecodeCache::new(code, 0);
        let (_, b) = cache.block_at(0).unwrap();
        assert_eq!(b.insts.len(), 1);
        assert!(b.stop.is_some());
    }

    #[test]
    fn many_threads_share_one_block() {
        let code = words(&[0x7E00_0301, 0xBF81_0000]);
        let cache: Arc<DecodeCache> = Arc::new(DecodeCache::new(code, 0));
        let ids: Vec<BlockId> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| s.spawn(|| cache.block_at(0).unwrap().0))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(ids.iter().all(|&i| i == ids[0]));
        assert_eq!(cache.block_count(), 1);
    }
}
