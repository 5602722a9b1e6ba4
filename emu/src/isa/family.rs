//! Processor families behind a type, so caches and interpreters can be
//! generic over the ISA (gfx1030 now; wave64 gfx90a later). Not the decoding
//! itself.

use super::{decode, DecodeError, Inst};

/// An instruction-set family: how to decode and its wave size.
pub trait IsaFamily: Send + Sync + 'static {
    /// Family name, e.g. "gfx1030".
    const NAME: &'static str;
    /// Lanes per wave.
    const WAVE_SIZE: u32;
    /// Decode the instruction at the start of `code`, located at `address`.
    fn decode(code: &[u8], address: u64) -> Result<Inst, DecodeError>;
}

/// gfx1030 (RDNA2, wave32).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gfx1030;

impl IsaFamily for Gfx1030 {
    const NAME: &'static str = "gfx1030";
    const WAVE_SIZE: u32 = 32;
    fn decode(code: &[u8], address: u64) -> Result<Inst, DecodeError> {
        decode(code, address)
    }
}
