//! How many work-groups of a kernel fit on one compute unit at once, from the resources its
//! descriptor and metadata declare (`hipOccupancy*`, and the size limit of cooperative
//! launches). The model is an RDNA2 (gfx10.3, wave32) compute unit as ROCr describes one: 2
//! SIMDs of 16 waves, 1024 VGPRs per lane per SIMD allocated in granules of 16 (LLVM's
//! `AMDGPUBaseInfo` for gfx10.3 in wave32), 64 KiB of LDS. On the software agent a compute
//! unit is one emulator thread, which keeps at least this many work-groups resident, so a
//! cooperative launch within the limit has every work-group running at once.

use crate::code_object::KernelInfo;

/// SIMDs per compute unit.
pub const SIMDS_PER_CU: u32 = 2;
/// Waves one SIMD holds.
pub const WAVES_PER_SIMD: u32 = 16;
/// Lanes per wave.
pub const WAVE_SIZE: u32 = 32;
/// VGPRs per lane one SIMD has for wave32 waves.
pub const VGPRS_PER_SIMD: u32 = 1024;
/// VGPR allocation granule for wave32 on gfx10.3.
pub const VGPR_GRANULE: u32 = 16;
/// LDS bytes per compute unit.
pub const LDS_PER_CU: u64 = 64 * 1024;
/// Work-items one compute unit holds.
pub const THREADS_PER_CU: u32 = SIMDS_PER_CU * WAVES_PER_SIMD * WAVE_SIZE;

/// What bounds a kernel's occupancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Wave slots.
    Waves,
    /// Vector registers.
    Vgprs,
    /// LDS.
    Lds,
    /// The block is larger than the kernel allows: nothing fits.
    BlockSize,
}

/// Work-groups of `block_size` work-items with `dynamic_lds` bytes of dynamic LDS that fit on
/// one compute unit, and what bounds them.
pub fn blocks_per_cu(info: &KernelInfo, block_size: u32, dynamic_lds: u64) -> (u32, Limit) {
    let max_block = info.max_flat_workgroup_size.unwrap_or(1024).min(1024) as u32;
    if block_size == 0 || block_size > max_block {
        return (0, Limit::BlockSize);
    }
    let waves_per_block = block_size.div_ceil(WAVE_SIZE);
    let by_waves = SIMDS_PER_CU * WAVES_PER_SIMD / waves_per_block;
    let vgprs = (info.vgpr_count.unwrap_or(0) as u32).max(1);
    let allocated = vgprs.div_ceil(VGPR_GRANULE) * VGPR_GRANULE;
    let waves_by_vgprs = (VGPRS_PER_SIMD / allocated).min(WAVES_PER_SIMD) * SIMDS_PER_CU;
    let by_vgprs = waves_by_vgprs / waves_per_block;
    let lds = info.group_segment_fixed_size.saturating_add(dynamic_lds);
    let by_lds = LDS_PER_CU
        .checked_div(lds)
        .map_or(u32::MAX, |n| u32::try_from(n).unwrap_or(u32::MAX));
    let mut best = (by_waves, Limit::Waves);
    if by_vgprs < best.0 {
        best = (by_vgprs, Limit::Vgprs);
    }
    if by_lds < best.0 {
        best = (by_lds, Limit::Lds);
    }
    best
}

/// The block size (a multiple of the wave size, at most `limit` when non-zero) that keeps the
/// most work-items resident per compute unit, and the work-groups per compute unit at that
/// size; `dynamic_lds` gives the dynamic LDS a block size needs.
pub fn best_block_size(
    info: &KernelInfo,
    limit: u32,
    dynamic_lds: impl Fn(u32) -> u64,
) -> (u32, u32) {
    let max_block = info.max_flat_workgroup_size.unwrap_or(1024).min(1024) as u32;
    let cap = if limit == 0 {
        max_block
    } else {
        limit.min(max_block)
    };
    let mut best = (0u32, 0u32);
    let mut best_threads = 0u32;
    let mut size = cap - cap % WAVE_SIZE;
    if size == 0 {
        size = cap;
    }
    while size > 0 {
        let (blocks, _) = blocks_per_cu(info, size, dynamic_lds(size));
        let threads = blocks * size;
        if threads > best_threads {
            best = (size, blocks);
            best_threads = threads;
        }
        size = size.saturating_sub(WAVE_SIZE);
    }
    best
}
