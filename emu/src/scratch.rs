//! Scratch (private) memory: each wave's own storage, laid out as the hardware swizzles it
//! (dword `k` of lane `t` at byte `(k * 32 + t) * 4`), so MUBUF accesses through the
//! private-segment buffer descriptor (with its wave-scaled stack pointer in `soffset`) and flat
//! accesses in the private aperture (offset from `FLAT_SCRATCH`) reach the same bytes.
//!
//! The emulator invents the "physical" scratch address range starting at [`SCRATCH_BASE`]
//! (above user-space host addresses, inside the 48 bits a buffer descriptor holds); it is never
//! a host address. Host memory for scratch comes from the emulator's [`ScratchPool`]: a
//! work-group is admitted only when its worst case (every wave's full private segment) fits in
//! the budget, and a wave's buffer goes back to the pool when its work-group ends, zeroed where
//! it was written, for the next wave or dispatch (a fresh buffer would be faulted in page by
//! page again). Not for global memory or LDS.

use std::sync::Mutex;

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

/// An access past the end of a wave's scratch, by swizzled offset. The lane that made the
/// access is the fault's own (`Fault::Memory::lane`): the offset alone cannot say it, since a
/// wave-scaled stack pointer or a flat address may put any lane's bits there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchFault {
    /// The swizzled byte offset from the wave's scratch base.
    pub physical: u64,
    /// Bytes of scratch each lane has.
    pub per_lane: u32,
}

impl ScratchFault {
    /// The private (per-lane) byte offset the swizzled offset stands for.
    pub fn private_offset(&self) -> u64 {
        self.physical / (4 * LANES) * 4 + self.physical % 4
    }
}

/// Bytes of scratch one wave of `per_lane` bytes per lane needs.
pub fn wave_bytes(per_lane: u32) -> u64 {
    u64::from(per_lane) * LANES
}

/// One wave's scratch: a buffer from the [`ScratchPool`] (none when the kernel has no private
/// segment) and how far it was written.
#[derive(Debug, Default)]
pub struct Scratch {
    bytes: Vec<u8>,
    per_lane: u32,
    /// One past the highest byte written: what must be zeroed before the buffer is reused.
    dirty: usize,
}

impl Scratch {
    /// Scratch of `per_lane` bytes per lane in `buffer`, which must be zeroed and hold
    /// [`wave_bytes`]`(per_lane)` bytes (an empty buffer when `per_lane` is 0).
    pub fn new(per_lane: u32, buffer: Vec<u8>) -> Scratch {
        debug_assert_eq!(buffer.len() as u64, wave_bytes(per_lane));
        Scratch {
            bytes: buffer,
            per_lane,
            dirty: 0,
        }
    }

    /// Takes the buffer back, zeroed where it was written, leaving an empty scratch.
    pub fn take_buffer(&mut self) -> Vec<u8> {
        let mut b = std::mem::take(&mut self.bytes);
        let dirty = self.dirty.min(b.len());
        b[..dirty].fill(0);
        self.dirty = 0;
        self.per_lane = 0;
        b
    }

    fn size(&self) -> u64 {
        wave_bytes(self.per_lane).min(self.bytes.len() as u64)
    }

    fn fault(&self, physical: u64) -> ScratchFault {
        ScratchFault {
            physical,
            per_lane: self.per_lane,
        }
    }

    /// Reads `out.len()` bytes at swizzled `physical` addresses: byte `i` is at
    /// `physical_of(i)`.
    ///
    /// # Errors
    /// [`ScratchFault`] for the first byte past the end.
    pub fn read(&self, out: &mut [u8], physical_of: impl Fn(u32) -> u64) -> Result<(), ScratchFault> {
        let size = self.size();
        for (i, b) in out.iter_mut().enumerate() {
            let p = physical_of(i as u32);
            if p >= size {
                return Err(self.fault(p));
            }
            *b = self.bytes[p as usize];
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
        let size = self.size();
        for (i, b) in data.iter().enumerate() {
            let p = physical_of(i as u32);
            if p >= size {
                return Err(self.fault(p));
            }
            self.bytes[p as usize] = *b;
            self.dirty = self.dirty.max(p as usize + 1);
        }
        Ok(())
    }
}

/// Most bytes of free buffers a pool keeps for reuse (within its budget); more are freed.
pub const RETAINED: u64 = 256 << 20;

/// The host memory an emulator's scratch may take: a budget shared by all its dispatches
/// (work-groups reserve their worst case before they are admitted) and the free buffers kept
/// for reuse, which count against the budget too and are freed first when reservations need
/// the room.
#[derive(Debug)]
pub struct ScratchPool {
    budget: u64,
    state: Mutex<PoolState>,
}

#[derive(Debug, Default)]
struct PoolState {
    /// Bytes reserved by resident work-groups.
    reserved: u64,
    /// The most ever reserved at once.
    peak: u64,
    /// Zeroed buffers for reuse, and their total size.
    free: Vec<Vec<u8>>,
    free_bytes: u64,
}

impl ScratchPool {
    /// A pool of at most `budget` bytes.
    pub fn new(budget: u64) -> ScratchPool {
        ScratchPool {
            budget,
            state: Mutex::new(PoolState::default()),
        }
    }

    /// The budget.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    fn state(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reserves `bytes` for a work-group about to be admitted; `false` when the budget has no
    /// room for them now. Free buffers are dropped to make room.
    pub fn try_reserve(&self, bytes: u64) -> bool {
        if bytes == 0 {
            return true;
        }
        let mut s = self.state();
        let Some(reserved) = s.reserved.checked_add(bytes).filter(|&r| r <= self.budget) else {
            return false;
        };
        s.reserved = reserved;
        s.peak = s.peak.max(reserved);
        while s.reserved + s.free_bytes > self.budget {
            match s.free.pop() {
                Some(b) => s.free_bytes -= b.len() as u64,
                None => break,
            }
        }
        true
    }

    /// Gives back a reservation.
    pub fn release(&self, bytes: u64) {
        let mut s = self.state();
        s.reserved = s.reserved.saturating_sub(bytes);
    }

    /// A zeroed buffer of `len` bytes, reused when one of that size is free. The caller holds
    /// a reservation covering it.
    pub fn take(&self, len: usize) -> Vec<u8> {
        if len == 0 {
            return Vec::new();
        }
        {
            let mut s = self.state();
            if let Some(i) = s.free.iter().rposition(|b| b.len() == len) {
                let b = s.free.swap_remove(i);
                s.free_bytes -= len as u64;
                return b;
            }
        }
        // Zeroed pages come from the allocator lazily (calloc); the size is bounded by the
        // scratch cap and the budget the caller reserved against.
        vec![0; len]
    }

    /// Keeps a zeroed buffer for reuse if the budget and [`RETAINED`] allow, else frees it.
    pub fn give(&self, buffer: Vec<u8>) {
        let len = buffer.len() as u64;
        if len == 0 {
            return;
        }
        let mut s = self.state();
        let free_bytes = s.free_bytes + len;
        if free_bytes <= RETAINED.min(self.budget) && s.reserved + free_bytes <= self.budget {
            s.free_bytes = free_bytes;
            s.free.push(buffer);
        }
    }

    /// Bytes reserved now, the most reserved at once so far, and bytes kept in free buffers.
    pub fn usage(&self) -> (u64, u64, u64) {
        let s = self.state();
        (s.reserved, s.peak, s.free_bytes)
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
        let mut s = Scratch::new(16, vec![0; wave_bytes(16) as usize]);
        s.write(&[1, 2, 3, 4], |i| swizzle(31, 12 + i)).unwrap();
        let mut b = [0; 4];
        s.read(&mut b, |i| swizzle(31, 12 + i)).unwrap();
        assert_eq!(b, [1, 2, 3, 4]);
        let e = s.read(&mut b, |i| swizzle(3, 14 + i)).unwrap_err();
        assert_eq!(e.private_offset(), 16);
        // No buffer: every access faults.
        let mut none = Scratch::default();
        assert!(none.write(&[1], |_| 0).is_err());
    }

    #[test]
    fn returned_buffers_are_zeroed_where_written_and_reused() {
        let pool = ScratchPool::new(1 << 20);
        assert!(pool.try_reserve(wave_bytes(64)));
        let mut s = Scratch::new(64, pool.take(wave_bytes(64) as usize));
        s.write(&[7; 8], |i| swizzle(2, 40 + i)).unwrap();
        let b = s.take_buffer();
        assert!(b.iter().all(|&x| x == 0));
        let at = b.as_ptr();
        pool.release(wave_bytes(64));
        pool.give(b);
        assert_eq!(pool.usage(), (0, wave_bytes(64), wave_bytes(64)));
        let again = pool.take(wave_bytes(64) as usize);
        assert_eq!(again.as_ptr(), at);
    }

    #[test]
    fn reservations_stay_within_the_budget_and_free_buffers_make_room() {
        let pool = ScratchPool::new(1000);
        assert!(pool.try_reserve(600));
        assert!(!pool.try_reserve(500));
        pool.give(vec![0; 300]);
        assert_eq!(pool.usage(), (600, 600, 300));
        pool.release(600);
        // The free buffer counts against the budget until a reservation needs the room.
        assert!(pool.try_reserve(1000));
        assert_eq!(pool.usage(), (1000, 1000, 0));
        assert!(!pool.try_reserve(1));
        assert!(!pool.try_reserve(u64::MAX));
    }
}
