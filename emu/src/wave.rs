//! One wave's architectural state: SGPRs (with VCC, M0, NULL and EXEC at their operand
//! encodings), VGPRs lane-contiguous (`v[reg][lane]`, so full-EXEC loops vectorise), SCC, PC,
//! the hardware registers `s_getreg`/`s_setreg` reach (MODE, TRAPSTS, FLAT_SCRATCH, ...), its
//! scratch, and where the scheduler left it. Also the operand accessors every instruction
//! class uses.
//!
//! Wave32 only. The width is more than [`LANES`]: EXEC and VCC are 32-bit values in the
//! handlers, every per-lane operation takes `[u32; 32]` and the scalar encodings of
//! EXEC/VCC are gfx10's; wave64 needs the wave state generic over its width (issue #24).
//! Not for executing instructions ([`crate::exec`]) or for deciding who runs
//! ([`crate::sched`]).

use crate::exec::Opnd;
use crate::scratch::Scratch;

/// Lanes in a wave.
pub const LANES: usize = 32;
/// VGPRs every wave has (the architectural maximum in wave32), plus slack so that a
/// multi-dword operand starting at v255 reads zeros instead of panicking.
pub const VGPRS: usize = 256 + 8;
/// Scalar operand encodings 0..=127 (s0..s105, VCC, TTMPs, M0, NULL, EXEC) plus slack.
pub const SREGS: usize = 128 + 8;

/// Scalar register encodings.
pub mod sreg {
    /// VCC_LO.
    pub const VCC: u8 = 106;
    /// M0.
    pub const M0: u8 = 124;
    /// NULL: reads 0, writes are dropped.
    pub const NULL: u8 = 125;
    /// EXEC_LO.
    pub const EXEC: u8 = 126;
}

/// Where the scheduler left a wave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Can run.
    Ready,
    /// Waiting at `s_barrier` for the rest of its work-group.
    Barrier,
    /// In `s_sleep` (or polling): runs again after other waves had a turn.
    Sleeping,
    /// Waiting at `ds_gws_barrier` for waves of other work-groups.
    GridBarrier,
    /// Reached `s_endpgm`.
    Ended,
}

/// One wave.
#[derive(Debug)]
pub struct Wave {
    /// Scalar registers by operand encoding.
    pub s: [u32; SREGS],
    /// Vector registers, `v[reg][lane]`.
    pub v: Box<[[u32; LANES]]>,
    /// Scalar condition code.
    pub scc: bool,
    /// Address of the next instruction to run.
    pub pc: u64,
    /// HW_REG_MODE (round and denormal modes, DX10 clamp, IEEE).
    pub mode: u32,
    /// HW_REG_TRAPSTS.
    pub trapsts: u32,
    /// FLAT_SCRATCH (set through `s_setreg` of HW_REG_FLAT_SCR_LO/HI on gfx10).
    pub flat_scratch: u64,
    /// High half of `src_shared_base`.
    pub shared_base_hi: u32,
    /// High half of `src_private_base`.
    pub private_base_hi: u32,
    /// This wave's scratch.
    pub scratch: Scratch,
    /// Scheduling state.
    pub status: Status,
    /// Index in its work-group.
    pub index: u32,
    /// Wave instructions executed.
    pub instructions: u64,
}

impl Wave {
    /// A wave with every register zero.
    pub fn new() -> Wave {
        Wave {
            s: [0; SREGS],
            v: vec![[0u32; LANES]; VGPRS].into_boxed_slice(),
            scc: false,
            pc: 0,
            mode: 0,
            trapsts: 0,
            flat_scratch: 0,
            shared_base_hi: 0,
            private_base_hi: 0,
            scratch: Scratch::default(),
            status: Status::Ready,
            index: 0,
            instructions: 0,
        }
    }

    /// EXEC for this wave size.
    #[inline(always)]
    pub fn exec(&self) -> u32 {
        self.s[sreg::EXEC as usize]
    }

    /// VCC for this wave size.
    #[inline(always)]
    pub fn vcc(&self) -> u32 {
        self.s[sreg::VCC as usize]
    }

    /// Sets VCC_LO.
    #[inline(always)]
    pub fn set_vcc(&mut self, v: u32) {
        self.s[sreg::VCC as usize] = v;
    }

    /// M0.
    #[inline(always)]
    pub fn m0(&self) -> u32 {
        self.s[sreg::M0 as usize]
    }

    /// Reads a 32-bit scalar operand (or the low dword of a constant).
    #[inline(always)]
    pub fn sread(&self, o: Opnd) -> u32 {
        match o {
            Opnd::S(n) => self.s[n as usize],
            Opnd::Imm(b) => b as u32,
            _ => self.special(o) as u32,
        }
    }

    /// Reads a 64-bit scalar operand (a register pair or a 64-bit constant).
    #[inline(always)]
    pub fn sread64(&self, o: Opnd) -> u64 {
        match o {
            Opnd::S(n) => u64::from(self.s[n as usize]) | u64::from(self.s[n as usize + 1]) << 32,
            Opnd::Imm(b) => b,
            _ => self.special(o),
        }
    }

    /// The value of an operand that is neither a register nor a constant.
    fn special(&self, o: Opnd) -> u64 {
        match o {
            Opnd::SharedBase => u64::from(self.shared_base_hi) << 32,
            Opnd::PrivateBase => u64::from(self.private_base_hi) << 32,
            Opnd::SharedLimit => u64::from(self.shared_base_hi) << 32 | 0xffff_ffff,
            Opnd::PrivateLimit => u64::from(self.private_base_hi) << 32 | 0xffff_ffff,
            Opnd::Scc => u64::from(self.scc),
            Opnd::Vccz => u64::from(self.vcc() == 0),
            Opnd::Execz => u64::from(self.exec() == 0),
            Opnd::PopsExitingWaveId | Opnd::None | Opnd::S(_) | Opnd::V(_) | Opnd::Imm(_) => 0,
        }
    }

    /// Reads a 32-bit scalar-sourced operand as the hardware does for 32-bit aperture reads
    /// (`s_mov_b32 s0, src_shared_base` gives the high half).
    #[inline(always)]
    pub fn sread_b32(&self, o: Opnd) -> u32 {
        match o {
            Opnd::SharedBase | Opnd::SharedLimit => self.shared_base_hi,
            Opnd::PrivateBase | Opnd::PrivateLimit => self.private_base_hi,
            _ => self.sread(o),
        }
    }

    /// Writes a 32-bit scalar destination (NULL and constants drop the write).
    #[inline(always)]
    pub fn swrite(&mut self, o: Opnd, v: u32) {
        if let Opnd::S(n) = o {
            if n != sreg::NULL {
                self.s[n as usize] = v;
            }
        }
    }

    /// Writes a 64-bit scalar destination pair.
    #[inline(always)]
    pub fn swrite64(&mut self, o: Opnd, v: u64) {
        if let Opnd::S(n) = o {
            if n != sreg::NULL {
                self.s[n as usize] = v as u32;
                self.s[n as usize + 1] = (v >> 32) as u32;
            }
        }
    }

    /// Reads a 32-bit vector-ALU source for every lane: a VGPR, or a scalar or constant
    /// broadcast.
    #[inline(always)]
    pub fn vread(&self, o: Opnd) -> [u32; LANES] {
        match o {
            Opnd::V(r) => self.v[r as usize],
            _ => [self.sread_b32(o); LANES],
        }
    }

    /// A 32-bit vector-ALU source by reference: the VGPR itself, or a scalar or constant
    /// broadcast into `tmp` (the fast paths avoid copying registers).
    #[inline(always)]
    pub fn vref<'a>(&'a self, o: Opnd, tmp: &'a mut [u32; LANES]) -> &'a [u32; LANES] {
        match o {
            Opnd::V(r) => &self.v[r as usize],
            _ => {
                *tmp = [self.sread_b32(o); LANES];
                tmp
            }
        }
    }

    /// Reads a 64-bit vector-ALU source for every lane (a VGPR pair, an SGPR pair or a 64-bit
    /// constant broadcast).
    #[inline(always)]
    pub fn vread64(&self, o: Opnd) -> [u64; LANES] {
        match o {
            Opnd::V(r) => {
                let (lo, hi) = (&self.v[r as usize], &self.v[r as usize + 1]);
                std::array::from_fn(|l| u64::from(lo[l]) | u64::from(hi[l]) << 32)
            }
            _ => [self.sread64(o); LANES],
        }
    }

    /// Writes a 32-bit VGPR result in the lanes of `mask`.
    #[inline(always)]
    pub fn vwrite(&mut self, o: Opnd, mask: u32, val: &[u32; LANES]) {
        if let Opnd::V(r) = o {
            let d = &mut self.v[r as usize];
            if mask == u32::MAX {
                *d = *val;
            } else {
                for l in 0..LANES {
                    if mask >> l & 1 != 0 {
                        d[l] = val[l];
                    }
                }
            }
        }
    }

    /// Writes a 64-bit VGPR-pair result in the lanes of `mask`.
    #[inline(always)]
    pub fn vwrite64(&mut self, o: Opnd, mask: u32, val: &[u64; LANES]) {
        if let Opnd::V(r) = o {
            let r = r as usize;
            for (l, x) in val.iter().enumerate() {
                if mask >> l & 1 != 0 {
                    self.v[r][l] = *x as u32;
                    self.v[r + 1][l] = (*x >> 32) as u32;
                }
            }
        }
    }

    /// One lane of a VGPR (for lane-indexed instructions).
    #[inline(always)]
    pub fn lane(&self, reg: u16, lane: usize) -> u32 {
        self.v[reg as usize][lane % LANES]
    }
}

impl Default for Wave {
    fn default() -> Self {
        Wave::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_drops_writes_and_apertures_read_high_halves() {
        let mut w = Wave::new();
        w.swrite(Opnd::S(sreg::NULL), 5);
        assert_eq!(w.sread(Opnd::S(sreg::NULL)), 0);
        w.shared_base_hi = 0x1_0000;
        assert_eq!(w.sread64(Opnd::SharedBase), 0x1_0000_0000_0000);
        assert_eq!(w.sread_b32(Opnd::SharedBase), 0x1_0000);
    }

    #[test]
    fn masked_vector_writes_touch_only_enabled_lanes() {
        let mut w = Wave::new();
        w.vwrite(Opnd::V(3), 0b101, &[7; LANES]);
        assert_eq!(&w.v[3][..4], &[7, 0, 7, 0]);
        w.vwrite64(Opnd::V(255), 1, &[u64::MAX; LANES]);
        assert_eq!(
            (w.v[255][0], w.v[256][0], w.v[255][1]),
            (u32::MAX, u32::MAX, 0)
        );
    }
}
