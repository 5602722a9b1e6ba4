//! Stream memory operations (`hipStreamWaitValue32/64`, `hipStreamWriteValue32/64`): a stream
//! step that writes a 32- or 64-bit value to memory of a device, or holds the stream until a
//! value in such memory meets a condition.
//!
//! On a GPU, clr turns these into AQL packets the command processor evaluates. Here both are
//! host steps of the stream: a write is a 4- or 8-byte copy, a wait polls the value through the
//! device's checked copy with a growing pause (a few microseconds at first, at most a
//! millisecond), so a flag set by a kernel on another stream or by the host is seen within a
//! millisecond without a core spinning. Each poll goes through the allocation table: a wait on
//! memory freed meanwhile ends with the access error instead of reading freed memory, and a
//! wait that is never satisfied ends after [`SYNC_TIMEOUT`], failing the stream, instead of
//! holding its queue forever.

use std::time::{Duration, Instant};

use super::memory::value_width;
use super::stream::SYNC_TIMEOUT;
use super::{Runtime, RuntimeResult, Stream};
use crate::device::DeviceError;

/// The condition of a stream wait, as HIP numbers them (`hipStreamWaitValueGte` = 0, `Eq`,
/// `And`, `Nor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitCondition {
    /// `(*ptr & mask) >= value`, unsigned.
    Gte,
    /// `(*ptr & mask) == value`.
    Eq,
    /// `((*ptr & mask) & value) != 0`.
    And,
    /// `~((*ptr & mask) | (value & mask)) != 0` (the mask applies to both sides).
    Nor,
}

impl WaitCondition {
    /// The condition HIP's flag names, if any.
    pub fn from_flags(flags: u32) -> Option<WaitCondition> {
        Some(match flags {
            0 => WaitCondition::Gte,
            1 => WaitCondition::Eq,
            2 => WaitCondition::And,
            3 => WaitCondition::Nor,
            _ => return None,
        })
    }

    /// Whether `current` (the memory's value, `width_mask` wide) meets the condition.
    pub fn holds(self, current: u64, value: u64, mask: u64, width_mask: u64) -> bool {
        let masked = current & mask;
        match self {
            WaitCondition::Gte => masked >= value,
            WaitCondition::Eq => masked == value,
            WaitCondition::And => masked & value != 0,
            // Only the operation's width counts: the bits above a 32-bit value are not there.
            WaitCondition::Nor => !(masked | (value & mask)) & width_mask != 0,
        }
    }
}

/// The first pause between two polls, and the longest.
const FIRST_PAUSE: Duration = Duration::from_micros(2);
const LONGEST_PAUSE: Duration = Duration::from_millis(1);

/// One stream memory operation (`hipStreamBatchMemOp`'s element, and what
/// `hipStreamWriteValue32/64` and `hipStreamWaitValue32/64` queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemOp {
    /// Write the low `width` (4 or 8) bytes of `value` to `address`.
    Write {
        /// Where.
        address: u64,
        /// What.
        value: u64,
        /// 4 or 8.
        width: u8,
    },
    /// Hold the stream until the `width`-byte value at `address` meets `condition` against
    /// `value` under `mask`.
    Wait {
        /// Where.
        address: u64,
        /// The condition.
        condition: WaitCondition,
        /// The operand.
        value: u64,
        /// The mask applied to the memory's value.
        mask: u64,
        /// 4 or 8.
        width: u8,
    },
}

impl MemOp {
    fn address_width(&self) -> (u64, u8) {
        match *self {
            MemOp::Write { address, width, .. } | MemOp::Wait { address, width, .. } => {
                (address, width)
            }
        }
    }

    /// Runs the operation on `device` (a stream or graph step's work): a write is a checked
    /// copy, a wait polls (see the module comment).
    ///
    /// # Errors
    /// An access the device's table refuses (memory freed meanwhile), or a wait still unmet
    /// after [`SYNC_TIMEOUT`].
    pub fn run(&self, device: &dyn crate::device::Device) -> Result<(), DeviceError> {
        match *self {
            MemOp::Write {
                address,
                value,
                width,
            } => {
                let bytes = value.to_le_bytes();
                // SAFETY: the source is this function's own buffer of 8 bytes, of which `width`
                // (4 or 8) are read; the destination is checked against the device's table by
                // the copy itself.
                unsafe { device.copy(address, bytes.as_ptr() as u64, u64::from(width)) }
            }
            MemOp::Wait {
                address,
                condition,
                value,
                mask,
                width,
            } => {
                let len = u64::from(width);
                let width_mask = if len == 8 {
                    u64::MAX
                } else {
                    u64::from(u32::MAX)
                };
                let (value, mask) = (value & width_mask, mask & width_mask);
                let start = Instant::now();
                let mut pause = FIRST_PAUSE;
                loop {
                    let mut bytes = [0u8; 8];
                    // SAFETY: the destination is this function's own 8-byte buffer, of which
                    // `len` bytes are written; the source is checked against the device's table
                    // at every poll, so memory freed meanwhile is an error, not a read.
                    unsafe { device.copy(bytes.as_mut_ptr() as u64, address, len)? };
                    let current = u64::from_le_bytes(bytes);
                    if condition.holds(current, value, mask, width_mask) {
                        tracing::debug!(address, current, waited = ?start.elapsed(), "stream wait satisfied");
                        return Ok(());
                    }
                    if start.elapsed() >= SYNC_TIMEOUT {
                        return Err(DeviceError::Timeout(start.elapsed()));
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(LONGEST_PAUSE);
                }
            }
        }
    }
}

impl Runtime {
    /// Checks a memory operation: its memory must be a device's (device, signal, pinned,
    /// registered or managed) and aligned to its width (4 or 8).
    ///
    /// # Errors
    /// [`RuntimeError::NotDeviceMemory`](super::RuntimeError::NotDeviceMemory) for an address no
    /// device holds, [`RuntimeError::InvalidRange`](super::RuntimeError::InvalidRange) for a
    /// width other than 4 or 8, a misaligned address or a range past its allocation.
    pub fn check_mem_op(&self, op: &MemOp) -> RuntimeResult<()> {
        let (address, width) = op.address_width();
        let what = match op {
            MemOp::Write { .. } => "stream write",
            MemOp::Wait { .. } => "stream wait",
        };
        let len = value_width(address, width, what)?;
        self.check_device_memory(address, len, what)
    }

    /// Queues `ops` on `stream`, in order, as one step (`hipStreamBatchMemOp`); every
    /// operation is checked before anything is queued.
    ///
    /// # Errors
    /// As [`check_mem_op`](Self::check_mem_op), or the stream's errors. Running, the step fails
    /// the stream as [`wait_value`](Self::wait_value) describes.
    pub fn batch_mem_op(&self, stream: &Stream, ops: &[MemOp]) -> RuntimeResult<()> {
        for op in ops {
            self.check_mem_op(op)?;
        }
        let device = stream.context()?.device().clone();
        let ops = ops.to_vec();
        tracing::debug!(
            stream = stream.id(),
            ops = ops.len(),
            "queueing stream memory operations"
        );
        stream.host_work(
            "running stream memory operations",
            Box::new(move || ops.iter().try_for_each(|op| op.run(&*device))),
        )
    }

    /// Writes the low `width` (4 or 8) bytes of `value` to `dst` in `stream`'s order
    /// (`hipStreamWriteValue32/64`); `dst` must be memory of a device, `width`-aligned.
    ///
    /// # Errors
    /// As [`check_mem_op`](Self::check_mem_op), or the stream's errors.
    pub fn write_value(
        &self,
        stream: &Stream,
        dst: u64,
        value: u64,
        width: u8,
    ) -> RuntimeResult<()> {
        self.batch_mem_op(
            stream,
            &[MemOp::Write {
                address: dst,
                value,
                width,
            }],
        )
    }

    /// Holds `stream` until the `width`-byte value at `addr` meets `condition` against `value`
    /// under `mask` (`hipStreamWaitValue32/64`); work submitted after it waits for it.
    ///
    /// # Errors
    /// As [`write_value`](Self::write_value). The wait itself fails the stream (its next
    /// synchronisation reports it) when the memory is freed while it waits or the condition is
    /// still unmet after [`SYNC_TIMEOUT`].
    pub fn wait_value(
        &self,
        stream: &Stream,
        addr: u64,
        condition: WaitCondition,
        value: u64,
        mask: u64,
        width: u8,
    ) -> RuntimeResult<()> {
        self.batch_mem_op(
            stream,
            &[MemOp::Wait {
                address: addr,
                condition,
                value,
                mask,
                width,
            }],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each condition, written out from HIP's documentation, against the implementation.
    #[test]
    fn conditions_follow_hips_definitions() {
        let w32 = u64::from(u32::MAX);
        let samples = [0u64, 1, 2, 3, 0x80, 0xff, 0x1234, 0xffff_fffe, 0xffff_ffff];
        for &cur in &samples {
            for &val in &samples {
                for &mask in &[w32, 0xff, 0xf0, 1, 0] {
                    let m = cur & mask;
                    assert_eq!(WaitCondition::Gte.holds(cur, val, mask, w32), m >= val);
                    assert_eq!(WaitCondition::Eq.holds(cur, val, mask, w32), m == val);
                    assert_eq!(WaitCondition::And.holds(cur, val, mask, w32), m & val != 0);
                    let nor = !((m as u32) | ((val & mask) as u32)) != 0;
                    assert_eq!(
                        WaitCondition::Nor.holds(cur, val, mask, w32),
                        nor,
                        "{cur} {val} {mask}"
                    );
                }
            }
        }
        assert_eq!(WaitCondition::from_flags(3), Some(WaitCondition::Nor));
        assert_eq!(WaitCondition::from_flags(4), None);
    }
}
