//! Random-access reads of a container's header bytes, wherever they live.
//!
//! Header parsing is written once against [`Probe`] and used over three sources: a byte
//! slice (bounds known), the inflated prefix of a compressed bundle (grows on demand), and a
//! raw pointer from `__hipRegisterFatBinary` (bounds unknown: only what a header promises is
//! read). A probe never panics; a short read is `Ok(false)` and the caller names the field.

use super::ContainerError;

/// A source of header bytes.
pub trait Probe {
    /// Fills `buf` with the bytes at `offset`. `Ok(false)` when they are not all there.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<bool, ContainerError>;

    /// Total length when known (slices, inflated payloads with a declared size).
    fn known_len(&self) -> Option<u64>;
}

impl Probe for &[u8] {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<bool, ContainerError> {
        match crate::bytes::slice_at(self, offset, buf.len() as u64) {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn known_len(&self) -> Option<u64> {
        Some(<[u8]>::len(self) as u64)
    }
}

/// Reads fixed-size little-endian fields through a probe, turning short reads into
/// [`ContainerError::Truncated`] for `format`.
pub(crate) struct FieldReader<'p, P: Probe + ?Sized> {
    pub probe: &'p mut P,
    pub format: super::Format,
}

impl<P: Probe + ?Sized> FieldReader<'_, P> {
    pub fn bytes<const N: usize>(
        &mut self,
        offset: u64,
        field: &'static str,
        entry: Option<u64>,
    ) -> Result<[u8; N], ContainerError> {
        let mut buf = [0u8; N];
        if self.probe.read_at(offset, &mut buf)? {
            Ok(buf)
        } else {
            let len = self.probe.known_len().unwrap_or(offset);
            Err(ContainerError::truncated(
                self.format,
                field,
                entry,
                offset,
                N as u64,
                len,
            ))
        }
    }

    pub fn u16(&mut self, offset: u64, field: &'static str) -> Result<u16, ContainerError> {
        self.bytes(offset, field, None).map(u16::from_le_bytes)
    }

    pub fn u32(&mut self, offset: u64, field: &'static str) -> Result<u32, ContainerError> {
        self.bytes(offset, field, None).map(u32::from_le_bytes)
    }

    pub fn u64(
        &mut self,
        offset: u64,
        field: &'static str,
        entry: Option<u64>,
    ) -> Result<u64, ContainerError> {
        self.bytes(offset, field, entry).map(u64::from_le_bytes)
    }
}
