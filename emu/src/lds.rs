//! LDS: one work-group's local data share, a byte array of the dispatch's group-segment size
//! (at most 64 KiB). Only waves of the work-group touch it and they run on one host thread, so
//! it needs no atomics. An access past the end is a typed fault (the hardware would drop it;
//! reporting it finds bugs). Not for global memory or scratch.

/// An LDS access past the work-group's allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LdsFault {
    /// First byte.
    pub address: u32,
    /// Bytes.
    pub len: u32,
    /// The work-group's LDS size.
    pub size: u32,
}

/// One work-group's LDS.
#[derive(Debug, Default)]
pub struct Lds {
    bytes: Vec<u8>,
}

impl Lds {
    /// Zeroed LDS of `size` bytes (the caller caps it at [`crate::dispatch::MAX_LDS`]).
    pub fn new(size: u32) -> Lds {
        Lds {
            bytes: vec![0; size as usize],
        }
    }

    /// Size in bytes.
    pub fn size(&self) -> u32 {
        self.bytes.len() as u32
    }

    /// The bytes, for fast paths that checked every address against [`Lds::size`] first.
    #[inline(always)]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes, mutable (as [`Lds::bytes`]).
    #[inline(always)]
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    fn range(&self, address: u32, len: u32) -> Result<std::ops::Range<usize>, LdsFault> {
        let end = u64::from(address) + u64::from(len);
        if end > self.bytes.len() as u64 {
            return Err(LdsFault {
                address,
                len,
                size: self.size(),
            });
        }
        Ok(address as usize..end as usize)
    }

    /// Reads `out.len()` bytes at `address`.
    ///
    /// # Errors
    /// [`LdsFault`] past the end.
    pub fn read(&self, address: u32, out: &mut [u8]) -> Result<(), LdsFault> {
        let r = self.range(address, out.len() as u32)?;
        out.copy_from_slice(&self.bytes[r]);
        Ok(())
    }

    /// Writes `data` at `address`.
    ///
    /// # Errors
    /// [`LdsFault`] past the end.
    pub fn write(&mut self, address: u32, data: &[u8]) -> Result<(), LdsFault> {
        let r = self.range(address, data.len() as u32)?;
        self.bytes[r].copy_from_slice(data);
        Ok(())
    }

    /// Reads `N` bytes (a fixed-size copy, no length dispatch).
    ///
    /// # Errors
    /// [`LdsFault`] past the end.
    #[inline(always)]
    pub fn read_n<const N: usize>(&self, address: u32) -> Result<[u8; N], LdsFault> {
        let a = address as usize;
        match self
            .bytes
            .get(a..a.wrapping_add(N))
            .and_then(|s| <[u8; N]>::try_from(s).ok())
        {
            Some(b) if a.checked_add(N).is_some() => Ok(b),
            _ => Err(LdsFault {
                address,
                len: N as u32,
                size: self.size(),
            }),
        }
    }

    /// Reads a little-endian u32.
    ///
    /// # Errors
    /// [`LdsFault`] past the end.
    pub fn read_u32(&self, address: u32) -> Result<u32, LdsFault> {
        let mut b = [0; 4];
        self.read(address, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Reads a little-endian u64.
    ///
    /// # Errors
    /// [`LdsFault`] past the end.
    pub fn read_u64(&self, address: u32) -> Result<u64, LdsFault> {
        let mut b = [0; 8];
        self.read(address, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_end_faults_and_wrapping_does_not_panic() {
        let mut l = Lds::new(16);
        l.write(12, &[1, 2, 3, 4]).unwrap();
        assert_eq!(l.read_u32(12).unwrap(), 0x0403_0201);
        assert_eq!(
            l.read_u32(13).unwrap_err(),
            LdsFault {
                address: 13,
                len: 4,
                size: 16
            }
        );
        assert!(l.read_u64(u32::MAX).is_err());
    }
}
