//! One kernel dispatch as the emulator receives it, the kernel descriptor's fields it obeys,
//! and the initial state of every wave: user and system SGPRs in AMDGPUUsage's order, VGPR
//! work-item ids, EXEC for partial waves, the private-segment buffer descriptor and the
//! flat-scratch base the emulator invents for scratch.
//!
//! Not for running waves ([`crate::sched`]) or for the register file itself ([`crate::wave`]).

use crate::error::DispatchError;
use crate::family::Family;
use crate::scratch::{scratch_v3, SCRATCH_BASE};

/// Everything one dispatch needs besides memory and services. Addresses are guest addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    /// The processor the code was built for and the agent reports (`gfx1030`): the emulator
    /// runs only processors of a family it implements ([`crate::executes`],
    /// [`Family::for_processor`]).
    pub processor: &'static str,
    /// The 64-byte kernel descriptor (AMDGPUUsage "Kernel Descriptor").
    pub descriptor: [u8; 64],
    /// Where the descriptor lives: code starts at this plus `kernel_code_entry_byte_offset`.
    pub descriptor_address: u64,
    /// Grid size in work-items (x, y, z), as in `hsa_kernel_dispatch_packet_t`.
    pub grid: [u32; 3],
    /// Work-group size in work-items (x, y, z).
    pub workgroup: [u16; 3],
    /// The kernarg segment.
    pub kernarg_address: u64,
    /// The `hsa_kernel_dispatch_packet_t` (code object v4 kernels read sizes from it).
    pub packet_address: u64,
    /// The `hsa_queue_t`.
    pub queue_address: u64,
    /// The dispatch id (a queue's packet index).
    pub dispatch_id: u64,
    /// LDS bytes per work-group: static plus dynamic (the packet's `group_segment_size`).
    pub group_segment_size: u32,
    /// Scratch bytes per work-item (the packet's `private_segment_size`).
    pub private_segment_size: u32,
    /// Base of the flat aperture that reaches LDS (`src_shared_base`); 4 GiB aligned.
    pub shared_aperture: u64,
    /// Base of the flat aperture that reaches scratch (`src_private_base`); 4 GiB aligned.
    pub private_aperture: u64,
    /// The compute units the dispatch may run on (its queue's CU mask, as unit numbers; see
    /// [`crate::cpus`]); `None`: all of them.
    pub compute_units: Option<Vec<u32>>,
}

/// `kernel_code_properties` bits (AMDGPUUsage, "Kernel Code Properties").
mod kcp {
    pub const PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
    pub const DISPATCH_PTR: u16 = 1 << 1;
    pub const QUEUE_PTR: u16 = 1 << 2;
    pub const KERNARG_SEGMENT_PTR: u16 = 1 << 3;
    pub const DISPATCH_ID: u16 = 1 << 4;
    pub const FLAT_SCRATCH_INIT: u16 = 1 << 5;
    pub const PRIVATE_SEGMENT_SIZE: u16 = 1 << 6;
    pub const WAVEFRONT_SIZE32: u16 = 1 << 10;
    pub const USES_DYNAMIC_STACK: u16 = 1 << 11;
}

/// Floating-point modes from `COMPUTE_PGM_RSRC1`, the initial MODE register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloatModes {
    /// FLOAT_ROUND_MODE_32 (0 = round to nearest even).
    pub round_32: u8,
    /// FLOAT_ROUND_MODE_16_64.
    pub round_16_64: u8,
    /// FLOAT_DENORM_MODE_32 (3 = keep input and output denormals, 0 = flush both).
    pub denorm_32: u8,
    /// FLOAT_DENORM_MODE_16_64.
    pub denorm_16_64: u8,
    /// ENABLE_DX10_CLAMP: clamp turns NaN into 0.
    pub dx10_clamp: bool,
    /// ENABLE_IEEE_MODE: min/max quiet signalling NaNs.
    pub ieee: bool,
}

impl FloatModes {
    /// The MODE hardware register's value (`s_getreg_b32 hwreg(HW_REG_MODE)`): round modes in
    /// bits 3:0, denormal modes in 7:4, DX10_CLAMP bit 8, IEEE bit 9.
    pub fn mode_register(&self) -> u32 {
        u32::from(self.round_32 & 3)
            | u32::from(self.round_16_64 & 3) << 2
            | u32::from(self.denorm_32 & 3) << 4
            | u32::from(self.denorm_16_64 & 3) << 6
            | u32::from(self.dx10_clamp) << 8
            | u32::from(self.ieee) << 9
    }
}

/// The parts of a kernel descriptor the emulator obeys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelDescriptor {
    /// Static LDS bytes.
    pub group_segment_fixed_size: u32,
    /// Static scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// Code entry relative to the descriptor's address.
    pub entry_offset: i64,
    /// COMPUTE_PGM_RSRC1.
    pub rsrc1: u32,
    /// COMPUTE_PGM_RSRC2.
    pub rsrc2: u32,
    /// COMPUTE_PGM_RSRC3 (gfx90a: ACCUM_OFFSET in bits 5:0, TG_SPLIT bit 16).
    pub rsrc3: u32,
    /// kernel_code_properties.
    pub code_properties: u16,
}

impl KernelDescriptor {
    /// Reads the fields at their AMDGPUUsage offsets.
    pub fn parse(bytes: &[u8; 64]) -> KernelDescriptor {
        let u32_at =
            |o: usize| u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
        let mut e = [0u8; 8];
        e.copy_from_slice(&bytes[16..24]);
        KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            entry_offset: i64::from_le_bytes(e),
            rsrc1: u32_at(48),
            rsrc2: u32_at(52),
            rsrc3: u32_at(44),
            code_properties: u16::from_le_bytes([bytes[56], bytes[57]]),
        }
    }

    /// Whether the kernel runs in wave32.
    pub fn wave32(&self) -> bool {
        self.code_properties & kcp::WAVEFRONT_SIZE32 != 0
    }

    /// Whether the kernel's stack grows beyond its static private size (calls through
    /// pointers, recursion).
    pub fn uses_dynamic_stack(&self) -> bool {
        self.code_properties & kcp::USES_DYNAMIC_STACK != 0
    }

    /// VGPRs the kernel asked for in waves of `lanes` (GRANULATED_WORKITEM_VGPR_COUNT:
    /// granules of 8 in wave32, 4 in wave64; with `agprs` (gfx90a and later) granules of 8
    /// counting VGPRs and AGPRs together).
    pub fn vgprs(&self, lanes: u32, agprs: bool) -> u32 {
        ((self.rsrc1 & 0x3f) + 1) * if lanes >= 64 && !agprs { 4 } else { 8 }
    }

    /// The first AGPR's place in the unified register file (gfx90a: ACCUM_OFFSET, in
    /// granules of 4).
    pub fn accum_offset(&self) -> u32 {
        ((self.rsrc3 & 0x3f) + 1) * 4
    }

    /// Lanes per wave (32 or 64).
    pub fn lanes(&self) -> u32 {
        if self.wave32() {
            32
        } else {
            64
        }
    }

    /// The float modes the waves start in.
    pub fn float_modes(&self) -> FloatModes {
        let r = self.rsrc1;
        FloatModes {
            round_32: ((r >> 12) & 3) as u8,
            round_16_64: ((r >> 14) & 3) as u8,
            denorm_32: ((r >> 16) & 3) as u8,
            denorm_16_64: ((r >> 18) & 3) as u8,
            dx10_clamp: r >> 21 & 1 != 0,
            ieee: r >> 23 & 1 != 0,
        }
    }

    /// USER_SGPR_COUNT: where the system SGPRs start.
    pub fn user_sgpr_count(&self) -> u32 {
        (self.rsrc2 >> 1) & 0x1f
    }

    /// How many of v0, v1, v2 receive work-item ids (ENABLE_VGPR_WORKITEM_ID + 1).
    pub fn workitem_id_vgprs(&self) -> u32 {
        ((self.rsrc2 >> 11) & 3).min(2) + 1
    }
}

/// Where one value goes in the initial SGPRs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SgprValue {
    /// A value shared by every wave.
    Const(u32),
    /// Work-group id in dimension 0, 1 or 2.
    WorkgroupId(u8),
}

/// The initial register state shared by all waves of a dispatch, worked out once.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The family that runs it.
    pub family: &'static Family,
    /// Lanes per wave.
    pub lanes: u32,
    /// The descriptor.
    pub kd: KernelDescriptor,
    /// Code entry address.
    pub entry: u64,
    /// SGPRs to set, by index.
    pub sgprs: Vec<(u8, SgprValue)>,
    /// How many of v0..v2 get work-item ids.
    pub id_vgprs: u32,
    /// Whether the ids are packed in v0 (gfx90a and later).
    pub packed_ids: bool,
    /// VGPRs (and, with AGPRs, the same number of AGPRs) zeroed for each wave.
    pub granted_vgprs: u32,
    /// Number of work-groups in each dimension.
    pub groups: [u32; 3],
    /// Scratch bytes per lane actually provided (static size, or the dispatch's, or the
    /// dynamic-stack allowance, under the cap).
    pub scratch_per_lane: u32,
    /// Bytes of LDS per work-group.
    pub lds_bytes: u32,
    /// Initial MODE.
    pub modes: FloatModes,
}

/// The most LDS a work-group can have on gfx10.
pub const MAX_LDS: u32 = 64 * 1024;

impl Layout {
    /// Checks `d` and works out the initial state. `dynamic_stack` is the scratch per lane
    /// given to kernels that use a dynamic stack, `scratch_cap` the most any lane gets.
    ///
    /// # Errors
    /// [`DispatchError`] for a processor no family executes, a wave width its family does not
    /// run, empty or oversized grids and work-groups, too much LDS or scratch, or a descriptor
    /// asking for SGPRs past s105.
    pub fn new(
        d: &Dispatch,
        dynamic_stack: u32,
        scratch_cap: u32,
    ) -> Result<Layout, DispatchError> {
        let family = Family::for_processor(d.processor).ok_or(DispatchError::UnsupportedIsa {
            processor: d.processor,
        })?;
        let kd = KernelDescriptor::parse(&d.descriptor);
        let lanes = kd.lanes();
        if !family.wave_sizes().any(|n| n == lanes) {
            return Err(DispatchError::WaveSize {
                processor: d.processor,
                lanes,
            });
        }
        let wg_items: u64 = d.workgroup.iter().map(|&v| u64::from(v)).product();
        if wg_items == 0 || wg_items > 1024 || d.grid.contains(&0) {
            return Err(DispatchError::BadSize {
                grid: d.grid,
                workgroup: d.workgroup,
            });
        }
        let groups: [u32; 3] =
            std::array::from_fn(|i| d.grid[i].div_ceil(u32::from(d.workgroup[i])));
        // Counted in a u64: (2^32 - 1)^3 would wrap.
        if groups
            .iter()
            .try_fold(1u64, |n, &g| n.checked_mul(u64::from(g)))
            .is_none()
        {
            return Err(DispatchError::TooManyWorkgroups { groups });
        }
        let lds_bytes = d.group_segment_size.max(kd.group_segment_fixed_size);
        if lds_bytes > MAX_LDS {
            return Err(DispatchError::TooMuchLds { bytes: lds_bytes });
        }
        let mut scratch = d.private_segment_size.max(kd.private_segment_fixed_size);
        if kd.uses_dynamic_stack() {
            scratch = scratch.max(dynamic_stack);
        }
        if scratch > scratch_cap {
            return Err(DispatchError::TooMuchScratch {
                bytes: scratch,
                cap: scratch_cap,
            });
        }
        let entry = d.descriptor_address.wrapping_add_signed(kd.entry_offset);

        let lo = |v: u64| SgprValue::Const(v as u32);
        let hi = |v: u64| SgprValue::Const((v >> 32) as u32);
        // At most 16 user SGPRs and 5 system ones: sized once (this runs for every dispatch).
        let mut vals: Vec<SgprValue> = Vec::with_capacity(16);
        let p = kd.code_properties;
        if p & kcp::PRIVATE_SEGMENT_BUFFER != 0 {
            // A swizzled V# over this wave's scratch: base, stride 0 with swizzle_enable (bit 31
            // of word 1), num_records, word 3 with ADD_TID_ENABLE and INDEX_STRIDE 32.
            vals.extend([
                lo(SCRATCH_BASE),
                SgprValue::Const(((SCRATCH_BASE >> 32) as u32 & 0xffff) | 1 << 31),
            ]);
            vals.push(SgprValue::Const(u32::MAX));
            vals.push(SgprValue::Const(scratch_v3(lanes)));
        }
        if p & kcp::DISPATCH_PTR != 0 {
            vals.extend([lo(d.packet_address), hi(d.packet_address)]);
        }
        if p & kcp::QUEUE_PTR != 0 {
            vals.extend([lo(d.queue_address), hi(d.queue_address)]);
        }
        if p & kcp::KERNARG_SEGMENT_PTR != 0 {
            vals.extend([lo(d.kernarg_address), hi(d.kernarg_address)]);
        }
        if p & kcp::DISPATCH_ID != 0 {
            vals.extend([lo(d.dispatch_id), hi(d.dispatch_id)]);
        }
        if p & kcp::FLAT_SCRATCH_INIT != 0 {
            // gfx10: the scratch base for the queue; the prologue adds the wave offset (0 here,
            // every wave has its own storage) and writes FLAT_SCRATCH with s_setreg.
            vals.extend([lo(SCRATCH_BASE), hi(SCRATCH_BASE)]);
        }
        if p & kcp::PRIVATE_SEGMENT_SIZE != 0 {
            vals.push(SgprValue::Const(scratch));
        }
        let user = kd.user_sgpr_count() as usize;
        if vals.len() > user {
            // The descriptor's count is what the code was compiled against; trust it for where
            // system SGPRs go, but a shorter count than the enabled fields is malformed.
            return Err(DispatchError::BadDescriptor(format!(
                "{} user SGPRs enabled but USER_SGPR_COUNT is {user}",
                vals.len()
            )));
        }
        let mut sgprs: Vec<(u8, SgprValue)> = Vec::with_capacity(vals.len() + 5);
        sgprs.extend(vals.into_iter().enumerate().map(|(i, v)| (i as u8, v)));
        let mut next = user;
        let r2 = kd.rsrc2;
        for dim in 0..3u8 {
            if r2 >> (7 + dim) & 1 != 0 {
                sgprs.push((next as u8, SgprValue::WorkgroupId(dim)));
                next += 1;
            }
        }
        if r2 >> 10 & 1 != 0 {
            // Work-group info (ordered-append term, wave count): nothing reads it from HIP code.
            sgprs.push((next as u8, SgprValue::Const(0)));
            next += 1;
        }
        if r2 & 1 != 0 {
            // Private-segment wave offset: 0, as each wave's scratch is its own storage.
            sgprs.push((next as u8, SgprValue::Const(0)));
            next += 1;
        }
        if next > 106 {
            return Err(DispatchError::BadDescriptor(format!(
                "initial SGPRs reach s{}",
                next - 1
            )));
        }
        tracing::debug!(
            entry = format_args!("{entry:#x}"),
            ?groups,
            lds_bytes,
            scratch,
            sgprs = sgprs.len(),
            "dispatch layout"
        );
        Ok(Layout {
            family,
            lanes,
            modes: kd.float_modes(),
            id_vgprs: kd.workitem_id_vgprs(),
            packed_ids: family.isa.packed_workitem_ids,
            granted_vgprs: kd.vgprs(lanes, family.isa.agprs),
            kd,
            entry,
            sgprs,
            groups,
            scratch_per_lane: scratch,
            lds_bytes,
        })
    }

    /// Number of work-groups ([`Layout::new`] refused grids where it overflows).
    pub fn workgroup_count(&self) -> u64 {
        self.groups
            .iter()
            .fold(1u64, |n, &g| n.saturating_mul(u64::from(g)))
    }

    /// The id (x, y, z) of work-group number `n` (x fastest).
    pub fn workgroup_id(&self, n: u64) -> [u32; 3] {
        let gx = u64::from(self.groups[0]);
        let gy = u64::from(self.groups[1]);
        [(n % gx) as u32, (n / gx % gy) as u32, (n / gx / gy) as u32]
    }
}

/// The actual size of work-group `id` (edge groups of a grid that is not a multiple are partial).
pub fn workgroup_extent(d: &Dispatch, id: [u32; 3]) -> [u32; 3] {
    let mut e = [0; 3];
    for i in 0..3 {
        let wg = u32::from(d.workgroup[i]);
        e[i] = wg.min(d.grid[i].saturating_sub(id[i].saturating_mul(wg)));
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A descriptor as clang-19 writes one for a plain -O2 kernel: PSB + kernarg pointer,
    /// USER_SGPR_COUNT 6, work-group id x, wave32, RSRC1 with denormals kept, IEEE, DX10 clamp.
    pub(crate) fn descriptor(props: u16, rsrc2: u32) -> [u8; 64] {
        let mut kd = [0u8; 64];
        kd[16..24].copy_from_slice(&0x100i64.to_le_bytes());
        let rsrc1: u32 = 0x3 | 0xf << 16 | 1 << 21 | 1 << 23;
        kd[48..52].copy_from_slice(&rsrc1.to_le_bytes());
        kd[52..56].copy_from_slice(&rsrc2.to_le_bytes());
        kd[56..58].copy_from_slice(&props.to_le_bytes());
        kd
    }

    fn dispatch(kd: [u8; 64]) -> Dispatch {
        Dispatch {
            processor: "gfx1030",
            descriptor: kd,
            descriptor_address: 0x1000,
            grid: [100, 3, 1],
            workgroup: [64, 1, 1],
            kernarg_address: 0x2222_0000_3333,
            packet_address: 0x4444_5555,
            queue_address: 0x6666,
            dispatch_id: 7,
            group_segment_size: 0,
            private_segment_size: 0,
            shared_aperture: 1 << 48,
            private_aperture: 2 << 48,
            compute_units: None,
        }
    }

    #[test]
    fn plain_kernel_gets_psb_kernarg_and_group_id_in_order() {
        let props = kcp::PRIVATE_SEGMENT_BUFFER | kcp::KERNARG_SEGMENT_PTR | kcp::WAVEFRONT_SIZE32;
        let rsrc2 = 6 << 1 | 1 << 7;
        let l = Layout::new(&dispatch(descriptor(props, rsrc2)), 0, 1 << 20).unwrap();
        assert_eq!(l.entry, 0x1100);
        assert_eq!(l.groups, [2, 3, 1]);
        assert_eq!(l.sgprs.len(), 7);
        assert_eq!(l.sgprs[4], (4, SgprValue::Const(0x0000_3333)));
        assert_eq!(l.sgprs[5], (5, SgprValue::Const(0x2222)));
        assert_eq!(l.sgprs[6], (6, SgprValue::WorkgroupId(0)));
        assert_eq!(l.modes.denorm_32, 3);
        assert!(l.modes.ieee && l.modes.dx10_clamp);
        assert_eq!(l.workgroup_id(5), [1, 2, 0]);
    }

    #[test]
    fn every_user_field_in_amdgpuusage_order() {
        let props = 0x7f | kcp::WAVEFRONT_SIZE32;
        let rsrc2 = 15 << 1 | 0b111 << 7 | 1;
        let l = Layout::new(&dispatch(descriptor(props, rsrc2)), 0, 1 << 20).unwrap();
        let idx: Vec<u8> = l.sgprs.iter().map(|s| s.0).collect();
        assert_eq!(idx, (0..19).collect::<Vec<u8>>());
        assert_eq!(l.sgprs[4].1, SgprValue::Const(0x4444_5555)); // dispatch ptr
        assert_eq!(l.sgprs[6].1, SgprValue::Const(0x6666)); // queue ptr
        assert_eq!(l.sgprs[10].1, SgprValue::Const(7)); // dispatch id
        assert_eq!(
            l.sgprs[15..18].iter().map(|s| s.1).collect::<Vec<_>>(),
            vec![
                SgprValue::WorkgroupId(0),
                SgprValue::WorkgroupId(1),
                SgprValue::WorkgroupId(2)
            ]
        );
    }

    #[test]
    fn refuses_processors_of_another_isa() {
        for processor in ["gfx1010", "gfx1100", "gfx908", "gfx940", "gfx900"] {
            let mut d = dispatch(descriptor(kcp::WAVEFRONT_SIZE32, 0));
            d.processor = processor;
            let e = Layout::new(&d, 0, 1 << 20).unwrap_err();
            assert_eq!(e, DispatchError::UnsupportedIsa { processor });
            assert!(e.to_string().contains(processor), "{e}");
        }
        for processor in ["gfx1030", "gfx1031", "gfx1036"] {
            let mut d = dispatch(descriptor(kcp::WAVEFRONT_SIZE32, 0));
            d.processor = processor;
            assert!(Layout::new(&d, 0, 1 << 20).is_ok(), "{processor}");
        }
        // CDNA runs wave64 kernels, packs work-item ids and zeroes VGPRs in granules of 8.
        for processor in ["gfx90a", "gfx942"] {
            let mut d = dispatch(descriptor(0, 0));
            d.processor = processor;
            let l = Layout::new(&d, 0, 1 << 20).unwrap();
            assert_eq!(l.lanes, 64);
            assert!(l.packed_ids);
            assert_eq!(
                l.granted_vgprs, 32,
                "RSRC1's granule count 3 is 4 granules of 8"
            );
            d.descriptor = descriptor(kcp::WAVEFRONT_SIZE32, 0);
            assert_eq!(
                Layout::new(&d, 0, 1 << 20).unwrap_err(),
                DispatchError::WaveSize {
                    processor,
                    lanes: 32
                }
            );
        }
    }

    #[test]
    fn refuses_wave64_empty_grids_and_short_user_counts() {
        let l = Layout::new(
            &dispatch(descriptor(kcp::PRIVATE_SEGMENT_BUFFER, 4 << 1)),
            0,
            1 << 20,
        );
        assert_eq!(
            l.unwrap_err(),
            DispatchError::WaveSize {
                processor: "gfx1030",
                lanes: 64
            }
        );
        let mut d = dispatch(descriptor(kcp::WAVEFRONT_SIZE32, 0));
        d.grid[1] = 0;
        assert!(matches!(
            Layout::new(&d, 0, 1 << 20),
            Err(DispatchError::BadSize { .. })
        ));
        let d = dispatch(descriptor(
            kcp::PRIVATE_SEGMENT_BUFFER | kcp::WAVEFRONT_SIZE32,
            2 << 1,
        ));
        assert!(matches!(
            Layout::new(&d, 0, 1 << 20),
            Err(DispatchError::BadDescriptor(_))
        ));
        let mut d = dispatch(descriptor(kcp::WAVEFRONT_SIZE32, 0));
        d.group_segment_size = MAX_LDS + 1;
        assert!(matches!(
            Layout::new(&d, 0, 1 << 20),
            Err(DispatchError::TooMuchLds { .. })
        ));
        d.group_segment_size = 0;
        d.private_segment_size = 1 << 21;
        assert!(matches!(
            Layout::new(&d, 0, 1 << 20),
            Err(DispatchError::TooMuchScratch { .. })
        ));
    }

    #[test]
    fn work_group_counts_never_wrap() {
        let mut d = dispatch(descriptor(kcp::WAVEFRONT_SIZE32, 0));
        d.workgroup = [1, 1, 1];
        d.grid = [u32::MAX; 3];
        assert_eq!(
            Layout::new(&d, 0, 1 << 20),
            Err(DispatchError::TooManyWorkgroups {
                groups: [u32::MAX; 3]
            })
        );
        d.grid = [u32::MAX, u32::MAX, 1];
        let l = Layout::new(&d, 0, 1 << 20).unwrap();
        assert_eq!(
            l.workgroup_count(),
            u64::from(u32::MAX) * u64::from(u32::MAX)
        );
        assert_eq!(
            l.workgroup_id(l.workgroup_count() - 1),
            [u32::MAX - 1, u32::MAX - 1, 0]
        );
    }

    #[test]
    fn edge_workgroups_are_partial() {
        let d = dispatch(descriptor(kcp::WAVEFRONT_SIZE32, 0));
        assert_eq!(workgroup_extent(&d, [0, 0, 0]), [64, 1, 1]);
        assert_eq!(workgroup_extent(&d, [1, 2, 0]), [36, 1, 1]);
    }
}
