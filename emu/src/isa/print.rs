//! Text form of decoded instructions, matching llvm-objdump-19's
//! instruction text. Not decoding.

use super::decode::decode;
use super::{DecodeError, Inst};
use core::fmt;

/// Iterator over the instructions of a code range; see [`disassemble`].
pub struct Disassembly<'a> {
    code: &'a [u8],
    address: u64,
    offset: usize,
}

/// Decode `code` (located at `address`) instruction by instruction. After an
/// undecodable word the iterator moves on by 4 bytes, as llvm-objdump does.
pub fn disassemble(code: &[u8], address: u64) -> Disassembly<'_> {
    Disassembly {
        code,
        address,
        offset: 0,
    }
}

impl Iterator for Disassembly<'_> {
    type Item = (u64, Result<Inst, DecodeError>);
    fn next(&mut self) -> Option<Self::Item> {
        if self.offset + 4 > self.code.len() {
            return None;
        }
        let at = self.address.wrapping_add(self.offset as u64);
        let res = decode(&self.code[self.offset..], at);
        self.offset += match &res {
            Ok(inst) => inst.len as usize,
            Err(_) => 4,
        };
        Some((at, res))
    }
}

impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.op_name())
    }
}
