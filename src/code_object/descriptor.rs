//! Kernel descriptors: the 64-byte `<kernel>.kd` objects a dispatch packet points at.
//!
//! Decodes the fields (AMDGPUUsage "Kernel Descriptor") and compares those
//! that the metadata repeats. Not for decoding register granules into counts: that needs
//! per-processor allocation rules and belongs to the target layer.

use serde::Serialize;

use super::metadata::KernelMetadata;

/// Size of a kernel descriptor in bytes.
pub const KERNEL_DESCRIPTOR_SIZE: usize = 64;

/// `kernel_code_properties` bit: the kernel runs in wave32.
const ENABLE_WAVEFRONT_SIZE32: u16 = 1 << 10;
/// `kernel_code_properties` bit: the kernel uses a dynamically sized stack.
const USES_DYNAMIC_STACK: u16 = 1 << 11;

/// A decoded kernel descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KernelDescriptor {
    /// Offset 0: static LDS bytes.
    pub group_segment_fixed_size: u32,
    /// Offset 4: scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// Offset 8: kernarg segment size.
    pub kernarg_size: u32,
    /// Offset 16: byte offset of the kernel's first instruction from the descriptor's address.
    pub kernel_code_entry_byte_offset: i64,
    /// Offset 44.
    pub compute_pgm_rsrc3: u32,
    /// Offset 48.
    pub compute_pgm_rsrc1: u32,
    /// Offset 52.
    pub compute_pgm_rsrc2: u32,
    /// Offset 56: `ENABLE_SGPR_*`, wave32 (bit 10), dynamic stack (bit 11).
    pub kernel_code_properties: u16,
    /// Offset 58: kernarg preload (code object v5+): length in bits 0–6, offset in 7–15.
    pub kernarg_preload: u16,
}

impl KernelDescriptor {
    /// Decodes the 64 descriptor bytes.
    pub fn decode(bytes: &[u8; KERNEL_DESCRIPTOR_SIZE]) -> Self {
        let u32_at =
            |o: usize| u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
        let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
        let mut entry = [0u8; 8];
        entry.copy_from_slice(&bytes[16..24]);
        Self {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            kernel_code_entry_byte_offset: i64::from_le_bytes(entry),
            compute_pgm_rsrc3: u32_at(44),
            compute_pgm_rsrc1: u32_at(48),
            compute_pgm_rsrc2: u32_at(52),
            kernel_code_properties: u16_at(56),
            kernarg_preload: u16_at(58),
        }
    }

    /// 32 or 64, from `kernel_code_properties` bit 10.
    pub fn wavefront_size(&self) -> u32 {
        if self.kernel_code_properties & ENABLE_WAVEFRONT_SIZE32 != 0 {
            32
        } else {
            64
        }
    }

    /// `kernel_code_properties` bit 11 (code object v5+; reserved before).
    pub fn uses_dynamic_stack(&self) -> bool {
        self.kernel_code_properties & USES_DYNAMIC_STACK != 0
    }

    /// `compute_pgm_rsrc1` bits 0–5: VGPR blocks minus one (granule depends on the target).
    pub fn granulated_workitem_vgpr_count(&self) -> u32 {
        self.compute_pgm_rsrc1 & 0x3f
    }

    /// `compute_pgm_rsrc1` bits 6–9: SGPR blocks minus one (gfx9; unused on gfx10+).
    pub fn granulated_wavefront_sgpr_count(&self) -> u32 {
        (self.compute_pgm_rsrc1 >> 6) & 0xf
    }

    /// Where the kernel code starts, given the descriptor's address; `None` on overflow.
    pub fn entry_address(&self, descriptor_address: u64) -> Option<u64> {
        descriptor_address.checked_add_signed(self.kernel_code_entry_byte_offset)
    }

    /// Fields on which this descriptor and `md` disagree: `(field, descriptor, metadata)`.
    ///
    /// `uses_dynamic_stack` is compared only for code object v5 and later, where the bit exists.
    pub fn compare(
        &self,
        md: &KernelMetadata<'_>,
        code_object_version: u32,
    ) -> Vec<(&'static str, u64, u64)> {
        let mut out = Vec::new();
        let mut check = |field, d: u64, m: u64| {
            if d != m {
                out.push((field, d, m));
            }
        };
        check(
            "group_segment_fixed_size",
            self.group_segment_fixed_size.into(),
            md.group_segment_fixed_size,
        );
        check(
            "private_segment_fixed_size",
            self.private_segment_fixed_size.into(),
            md.private_segment_fixed_size,
        );
        check(
            "kernarg_size",
            self.kernarg_size.into(),
            md.kernarg_segment_size,
        );
        check(
            "wavefront_size",
            self.wavefront_size().into(),
            md.wavefront_size,
        );
        if code_object_version >= 5 {
            if let Some(dynamic) = md.uses_dynamic_stack {
                check(
                    "uses_dynamic_stack",
                    self.uses_dynamic_stack().into(),
                    dynamic.into(),
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_come_from_their_offsets() {
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&256u32.to_le_bytes());
        b[4..8].copy_from_slice(&16u32.to_le_bytes());
        b[8..12].copy_from_slice(&272u32.to_le_bytes());
        b[16..24].copy_from_slice(&(-0x1000i64).to_le_bytes());
        b[48..52].copy_from_slice(&0x0060_0041u32.to_le_bytes());
        b[56..58]
            .copy_from_slice(&(ENABLE_WAVEFRONT_SIZE32 | USES_DYNAMIC_STACK | 0x8).to_le_bytes());
        let d = KernelDescriptor::decode(&b);
        assert_eq!(d.group_segment_fixed_size, 256);
        assert_eq!(d.private_segment_fixed_size, 16);
        assert_eq!(d.kernarg_size, 272);
        assert_eq!(d.entry_address(0x2000), Some(0x1000));
        assert_eq!(d.entry_address(0x10), None);
        assert_eq!(d.wavefront_size(), 32);
        assert!(d.uses_dynamic_stack());
        assert_eq!(d.granulated_workitem_vgpr_count(), 1);
        assert_eq!(d.granulated_wavefront_sgpr_count(), 1);
    }
}
