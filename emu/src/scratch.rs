//! Scratch (private) memory: each wave's own storage, laid out as the hardware swizzles it
//! (dword `k` of lane `t` at byte `(k * 32 + t) * 4`), so MUBUF accesses through the
//! private-segment buffer descriptor (with its wave-scaled stack pointer in `soffset`) and flat
//! accesses in the private aperture (offset from `FLAT_SCRATCH`) reach the same bytes.
//!
//! The emulator invents the "physical" scratch address range starting at [`SCRATCH_BASE`]
//! (above user-space host addresses, inside the 48 bits a buffer descriptor holds); it is never
//! a host address. Storage is allocated on first use and bounded by the dispatch's scratch
//! size. Not for global memory or LDS.

/// Where the private-segment buffer descriptor and the flat-scratch init SGPRs say scratch
/// starts. Any buffer descriptor whose base lies at or above it addresses scratch.
pub const SCRATCH_BASE: u64 = 0xF000_0000_0000;

/// Word 3 of the private-segment buffer descriptor: INDEX_STRIDE = 2 (32 lanes, bits 22:21)
/// and ADD_TID_ENABLE (bit 23), with DST_SEL x/y/z/w = 4..7 as ROCr writes it.
pub const SCRATCH_V3: u32 = 4 | 5 << 3 | 6 << 6 | 7 << 9 | 2 << 21 | 1 << 23;

/// Lanes a scratch swizzle interleaves (the wave size).
const LANES: u64 = 32;

/// Byte offset in a wave's scratch of byte `offset` of lane `lane`'s private memory.
pub fn swizzle(lane: u32, offset: u32) -> u64 {
    let o = u64::from(offset);
    (o / 4) * 4 * LANES + u64::from(lane) * 4 + o % 4
}

/// An access past the end of a wave's scratch, by (lane, private offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchFault {
    /// The swizzled byte offset from the wave's scratch base.
    pub physical: u64,
    /// Bytes of scratch each lane has.
    pub per_lane: u32,
}

impl ScratchFault {
    /// The lane whose private memory the offset falls in.
    pub fn lane(&self) -> u32 {
        (self.physical % (4 * LANES) / 4) as u32
    }

    /// The private (per-lane) byte offset.
    pub fn private_offset(&self) -> u64 {
        self.physical / (4 * LANES) * 4 + self.physical % 4
    }
}

/// One wave's scratch.
#[derive(Debug, Default)]
pub struct Scratch {
    bytes: Vec<u8>,
    per_lane: u32,
}

impl Scratch {
    /// Storage for `per_lane` bytes per lane (allocated on first access).
    pub fn new(per_lane: u32) -> Scratch {
        Scratch {
            bytes: Vec::new(),
            per_lane,
        }
    }

    /// Forgets the contents (a new wave in the same slot).
    pub fn reset(&mut self, per_lane: u32) {
        self.per_lane = per_lane;
        self.bytes.clear();
    }

    fn size(&self) -> u64 {
        u64::from(self.per_lane) * LANES
    }

    fn byte(&mut self, physical: u64) -> Result<&mut u8, ScratchFault> {
        let fault = ScratchFault {
            physical,
            per_lane: self.per_lane,
        };
        if physical >= self.size() {
            return Err(fault);
        }
        if self.bytes.is_empty() {
            // size() <= 32 * the scratch cap, checked when the dispatch was laid out.
            self.bytes = vec![0; self.size() as usize];
        }
        self.bytes.get_mut(physical as usize).ok_or(fault)
    }

    /// Reads `out.len()` bytes at swizzled `physical` addresses: byte `i` is at
    /// `physical_of(i)`.
    ///
    /// # Errors
    /// [`ScratchFault`] for the first byte past the end.
    pub fn read(
        &mut self,
        out: &mut [u8],
        physical_of: impl Fn(u32) -> u64,
    ) -> Result<(), ScratchFault> {
        for (i, b) in out.iter_mut().enumerate() {
            *b = *self.byte(physical_of(i as u32))?;
        }
        Ok(())
    }

    /// Writes `data`; byte `i` goes to `physical_of(i)`.
    ///
    /// # Errors
    /// [`ScratchFault`] for the first byte past the end (earlier bytes are written, as on the
    /// hardware a partial store may land before the fault).
    pub fn write(
        &mut self,
        data: &[u8],
        physical_of: impl Fn(u32) -> u64,
    ) -> Result<(), ScratchFault> {
        for (i, b) in data.iter().enumerate() {
            *self.byte(physical_of(i as u32))? = *b;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wave_scaled_offsets_and_lane_offsets_meet() {
        // A MUBUF access with soffset = stack pointer * 32 and a flat access at the per-lane
        // stack pointer reach the same byte (AMDGPUUsage: the stack pointer is wave-scaled).
        let sp = 64u32;
        for lane in [0u32, 5, 31] {
            for o in [0u32, 4, 9] {
                let mubuf = u64::from(sp) * 32 + swizzle(lane, o);
                assert_eq!(mubuf, swizzle(lane, sp + o));
            }
        }
    }

    #[test]
    fn bounds_are_per_lane_size() {
        let mut s = Scratch::new(16);
        s.write(&[1, 2, 3, 4], |i| swizzle(31, 12 + i)).unwrap();
        let mut b = [0; 4];
        s.read(&mut b, |i| swizzle(31, 12 + i)).unwrap();
        assert_eq!(b, [1, 2, 3, 4]);
        let e = s.read(&mut b, |i| swizzle(3, 14 + i)).unwrap_err();
        assert_eq!((e.lane(), e.private_offset()), (3, 16));
    }
}
