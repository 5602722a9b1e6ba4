//! One wave's architectural state, generic over its width `N` (32 or 64 lanes): SGPRs in the
//! engine's scalar layout (below), VGPRs lane-contiguous (`v[reg][lane]`, so full-EXEC loops
//! over `N` lanes vectorise), SCC, PC, the hardware registers `s_getreg`/`s_setreg` reach
//! (MODE, TRAPSTS, FLAT_SCRATCH, ...), its scratch, and where the scheduler left it. Also the
//! lane [`Mask`] (EXEC, VCC and compare results, one bit per lane whatever the width) and the
//! operand accessors every instruction class uses.
//!
//! The scalar file is the engine's own layout ([`sreg`]: gfx10's encodings, which every
//! family's decoder maps its registers into through its `RegisterMap`), so handlers never
//! depend on a family's encodings. Not for executing instructions ([`crate::exec`]) or for
//! deciding who runs ([`crate::sched`]).

use crate::exec::Opnd;
use crate::scratch::Scratch;

/// Lanes of a wave32 wave (the width every gfx1030 kernel built by clang uses).
pub const LANES: usize = 32;
/// VGPRs every wave32 wave has (the architectural maximum), plus slack so that a multi-dword
/// operand starting at v255 reads zeros instead of panicking.
pub const VGPRS: usize = 256 + 8;
/// Where the AGPRs (CDNA's accumulation registers) start in a wave64's vector file: `a[n]`
/// is `v[AGPR_BASE + n]`.
pub const AGPR_BASE: u16 = 256;
/// Vector registers of a wave64 wave: 256 VGPRs, 256 AGPRs, and slack for the widest
/// operand (an MFMA's 32-dword accumulator) starting at the last register.
pub const VGPRS64: usize = 512 + 32;

/// Vector registers a wave of `N` lanes has.
pub const fn vgprs<const N: usize>() -> usize {
    if N >= 64 {
        VGPRS64
    } else {
        VGPRS
    }
}
/// Scalar registers 0..=127 of the engine's layout plus slack.
pub const SREGS: usize = 128 + 8;

/// The engine's scalar layout: where the special registers sit in [`Wave::s`]. Decoders map
/// each family's encodings here ([`crate::exec::lower`]); the handlers use only these.
pub mod sreg {
    /// s0..s105 are the SGPRs.
    pub const SGPRS: u8 = 106;
    /// VCC_LO (VCC_HI is the next).
    pub const VCC: u8 = 106;
    /// ttmp0 (16 TTMPs).
    pub const TTMP: u8 = 108;
    /// M0.
    pub const M0: u8 = 124;
    /// NULL: reads 0, writes are dropped.
    pub const NULL: u8 = 125;
    /// EXEC_LO (EXEC_HI is the next).
    pub const EXEC: u8 = 126;
    /// gfx9's XNACK_MASK (the pair s104/s105; gfx9 has no such SGPRs).
    pub const XNACK_MASK: u8 = 104;
}

/// A lane mask (EXEC, VCC, compare results): bit `l` is lane `l`. Wave32 masks use the low
/// 32 bits; operations that complement a mask are intersected with EXEC or [`Mask::all`]
/// before they reach lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Mask(pub u64);

impl Mask {
    /// No lane.
    pub const NONE: Mask = Mask(0);

    /// Every lane of an `N`-lane wave.
    #[inline(always)]
    pub const fn all<const N: usize>() -> Mask {
        Mask(if N >= 64 { u64::MAX } else { (1u64 << N) - 1 })
    }

    /// The first `n` lanes.
    #[inline(always)]
    pub const fn first(n: u32) -> Mask {
        Mask(if n >= 64 { u64::MAX } else { (1u64 << n) - 1 })
    }

    /// Whether lane `l` is set.
    #[inline(always)]
    pub const fn has(self, l: usize) -> bool {
        self.0 >> l & 1 != 0
    }

    /// Whether every lane of an `N`-lane wave is set.
    #[inline(always)]
    pub const fn is_all<const N: usize>(self) -> bool {
        self.0 & Mask::all::<N>().0 == Mask::all::<N>().0
    }

    /// Whether no lane is set.
    #[inline(always)]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The lowest set lane.
    #[inline(always)]
    pub const fn lowest(self) -> Option<usize> {
        if self.0 == 0 {
            None
        } else {
            Some(self.0.trailing_zeros() as usize)
        }
    }

    /// The mask of an `N`-lane wave whose lane `l` is `f(l)`.
    #[inline(always)]
    pub fn from_fn<const N: usize>(f: impl Fn(usize) -> bool) -> Mask {
        let mut m = 0u64;
        for l in 0..N {
            m |= u64::from(f(l)) << l;
        }
        Mask(m)
    }

    /// Calls `f` for every lane set, in order: a plain `0..N` loop at full EXEC (no mask
    /// tests, indices the compiler knows are in range), the set bits otherwise.
    #[inline(always)]
    pub fn each<const N: usize>(self, mut f: impl FnMut(usize)) {
        if self.is_all::<N>() {
            for l in 0..N {
                f(l);
            }
        } else {
            for l in self.iter() {
                f(l);
            }
        }
    }

    /// The mask whose lane `l` is `bits[l]`.
    #[inline(always)]
    pub fn from_bools<const N: usize>(bits: &[bool; N]) -> Mask {
        let mut m = 0u64;
        for (l, &b) in bits.iter().enumerate() {
            m |= u64::from(b) << l;
        }
        Mask(m)
    }

    /// The lanes set, in order.
    #[inline(always)]
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut m = self.0;
        std::iter::from_fn(move || {
            if m == 0 {
                None
            } else {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                Some(l)
            }
        })
    }
}

impl std::ops::BitAnd for Mask {
    type Output = Mask;
    #[inline(always)]
    fn bitand(self, o: Mask) -> Mask {
        Mask(self.0 & o.0)
    }
}

impl std::ops::BitOr for Mask {
    type Output = Mask;
    #[inline(always)]
    fn bitor(self, o: Mask) -> Mask {
        Mask(self.0 | o.0)
    }
}

impl std::ops::BitAndAssign for Mask {
    #[inline(always)]
    fn bitand_assign(&mut self, o: Mask) {
        self.0 &= o.0;
    }
}

impl std::ops::BitOrAssign for Mask {
    #[inline(always)]
    fn bitor_assign(&mut self, o: Mask) {
        self.0 |= o.0;
    }
}

/// One 32-bit value per lane: a VGPR, or a source broadcast to every lane.
pub type Lanes<const N: usize> = [u32; N];

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

/// One wave of `N` lanes.
#[derive(Debug)]
pub struct Wave<const N: usize> {
    /// Scalar registers in the engine's layout ([`sreg`]).
    pub s: [u32; SREGS],
    /// Vector registers, `v[reg][lane]`.
    pub v: Box<[Lanes<N>]>,
    /// Scalar condition code.
    pub scc: bool,
    /// Address of the next instruction to run (a jump's target when a handler returns
    /// [`crate::exec::Ctl::Jump`]).
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
    /// gfx9's VGPR index mode is on (`s_set_gpr_idx_on`; the index and operands in M0).
    pub gpr_idx: bool,
    /// Scheduling state.
    pub status: Status,
    /// Index in its work-group.
    pub index: u32,
    /// Wave instructions executed.
    pub instructions: u64,
}

impl<const N: usize> Wave<N> {
    /// A wave with every register zero.
    pub fn new() -> Wave<N> {
        const { assert!(N == 32 || N == 64, "waves have 32 or 64 lanes") };
        Wave {
            s: [0; SREGS],
            v: vec![[0u32; N]; vgprs::<N>()].into_boxed_slice(),
            scc: false,
            pc: 0,
            mode: 0,
            trapsts: 0,
            flat_scratch: 0,
            shared_base_hi: 0,
            private_base_hi: 0,
            scratch: Scratch::default(),
            gpr_idx: false,
            status: Status::Ready,
            index: 0,
            instructions: 0,
        }
    }

    /// A mask register pair from scalar register `i` (wave32: one register).
    #[inline(always)]
    fn mask_at(&self, i: usize) -> Mask {
        if N <= 32 {
            Mask(u64::from(self.s[i]))
        } else {
            Mask(u64::from(self.s[i]) | u64::from(self.s[i + 1]) << 32)
        }
    }

    #[inline(always)]
    fn set_mask_at(&mut self, i: usize, m: Mask) {
        self.s[i] = m.0 as u32;
        if N > 32 {
            self.s[i + 1] = (m.0 >> 32) as u32;
        }
    }

    /// EXEC.
    #[inline(always)]
    pub fn exec(&self) -> Mask {
        self.mask_at(sreg::EXEC as usize)
    }

    /// Sets EXEC.
    #[inline(always)]
    pub fn set_exec(&mut self, m: Mask) {
        self.set_mask_at(sreg::EXEC as usize, m);
    }

    /// VCC.
    #[inline(always)]
    pub fn vcc(&self) -> Mask {
        self.mask_at(sreg::VCC as usize)
    }

    /// Sets VCC.
    #[inline(always)]
    pub fn set_vcc(&mut self, m: Mask) {
        self.set_mask_at(sreg::VCC as usize, m);
    }

    /// M0.
    #[inline(always)]
    pub fn m0(&self) -> u32 {
        self.s[sreg::M0 as usize]
    }

    /// Reads a lane-mask operand (a scalar register, or its pair in wave64; a constant).
    #[inline(always)]
    pub fn read_mask(&self, o: Opnd) -> Mask {
        match o {
            Opnd::S(n) => self.mask_at(n as usize),
            _ if N <= 32 => Mask(u64::from(self.sread(o))),
            _ => Mask(self.sread64(o)),
        }
    }

    /// Writes a lane-mask destination (NULL and constants drop it).
    #[inline(always)]
    pub fn write_mask(&mut self, o: Opnd, m: Mask) {
        if let Opnd::S(n) = o {
            if n != sreg::NULL {
                self.set_mask_at(n as usize, m);
            }
        }
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
            Opnd::FlatScratchLo => self.flat_scratch,
            Opnd::FlatScratchHi => self.flat_scratch >> 32,
            Opnd::Vccz => u64::from(self.vcc().is_empty()),
            Opnd::Execz => u64::from(self.exec().is_empty()),
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
        } else {
            self.swrite_special(o, u64::from(v), false);
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
        } else {
            self.swrite_special(o, v, true);
        }
    }

    /// Writes gfx9's FLAT_SCRATCH (a 32-bit half, or the pair when `wide`); other
    /// destinations that are not registers drop the write.
    #[cold]
    fn swrite_special(&mut self, o: Opnd, v: u64, wide: bool) {
        match (o, wide) {
            (Opnd::FlatScratchLo, true) => self.flat_scratch = v,
            (Opnd::FlatScratchLo, false) => {
                self.flat_scratch = self.flat_scratch & !0xffff_ffff | (v & 0xffff_ffff)
            }
            (Opnd::FlatScratchHi, _) => {
                self.flat_scratch = self.flat_scratch & 0xffff_ffff | (v & 0xffff_ffff) << 32
            }
            _ => {}
        }
    }

    /// Reads a 32-bit vector-ALU source for every lane: a VGPR, or a scalar or constant
    /// broadcast.
    #[inline(always)]
    pub fn vread(&self, o: Opnd) -> Lanes<N> {
        match o {
            Opnd::V(r) => self.v[r as usize],
            _ => [self.sread_b32(o); N],
        }
    }

    /// A 32-bit vector-ALU source by reference: the VGPR itself, or a scalar or constant
    /// broadcast into `tmp` (the fast paths avoid copying registers).
    #[inline(always)]
    pub fn vref<'a>(&'a self, o: Opnd, tmp: &'a mut Lanes<N>) -> &'a Lanes<N> {
        match o {
            Opnd::V(r) => &self.v[r as usize],
            _ => {
                *tmp = [self.sread_b32(o); N];
                tmp
            }
        }
    }

    /// Reads a 64-bit vector-ALU source for every lane (a VGPR pair, an SGPR pair or a 64-bit
    /// constant broadcast).
    #[inline(always)]
    pub fn vread64(&self, o: Opnd) -> [u64; N] {
        match o {
            Opnd::V(r) => {
                let (lo, hi) = (&self.v[r as usize], &self.v[r as usize + 1]);
                std::array::from_fn(|l| u64::from(lo[l]) | u64::from(hi[l]) << 32)
            }
            _ => [self.sread64(o); N],
        }
    }

    /// Writes a 32-bit VGPR result in the lanes of `mask`.
    #[inline(always)]
    pub fn vwrite(&mut self, o: Opnd, mask: Mask, val: &Lanes<N>) {
        if let Opnd::V(r) = o {
            let d = &mut self.v[r as usize];
            if mask.is_all::<N>() {
                *d = *val;
            } else {
                for l in 0..N {
                    if mask.has(l) {
                        d[l] = val[l];
                    }
                }
            }
        }
    }

    /// Writes a 64-bit VGPR-pair result in the lanes of `mask`.
    #[inline(always)]
    pub fn vwrite64(&mut self, o: Opnd, mask: Mask, val: &[u64; N]) {
        if let Opnd::V(r) = o {
            let r = r as usize;
            for (l, x) in val.iter().enumerate() {
                if mask.has(l) {
                    self.v[r][l] = *x as u32;
                    self.v[r + 1][l] = (*x >> 32) as u32;
                }
            }
        }
    }

    /// One lane of a VGPR (for lane-indexed instructions).
    #[inline(always)]
    pub fn lane(&self, reg: u16, lane: usize) -> u32 {
        self.v[reg as usize][lane % N]
    }
}

impl<const N: usize> Default for Wave<N> {
    fn default() -> Self {
        Wave::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_drops_writes_and_apertures_read_high_halves() {
        let mut w = Wave::<32>::new();
        w.swrite(Opnd::S(sreg::NULL), 5);
        assert_eq!(w.sread(Opnd::S(sreg::NULL)), 0);
        w.shared_base_hi = 0x1_0000;
        assert_eq!(w.sread64(Opnd::SharedBase), 0x1_0000_0000_0000);
        assert_eq!(w.sread_b32(Opnd::SharedBase), 0x1_0000);
    }

    #[test]
    fn masked_vector_writes_touch_only_enabled_lanes() {
        let mut w = Wave::<32>::new();
        w.vwrite(Opnd::V(3), Mask(0b101), &[7; LANES]);
        assert_eq!(&w.v[3][..4], &[7, 0, 7, 0]);
        w.vwrite64(Opnd::V(255), Mask(1), &[u64::MAX; LANES]);
        assert_eq!(
            (w.v[255][0], w.v[256][0], w.v[255][1]),
            (u32::MAX, u32::MAX, 0)
        );
    }

    #[test]
    fn masks_are_as_wide_as_the_wave() {
        let mut w32 = Wave::<32>::new();
        w32.s[sreg::EXEC as usize + 1] = 0xffff_ffff;
        w32.set_exec(Mask(0xffff_ffff));
        assert!(w32.exec().is_all::<32>());
        assert_eq!(w32.exec(), Mask::all::<32>(), "EXEC_HI is not part of a wave32's EXEC");
        let mut w64 = Wave::<64>::new();
        w64.set_exec(Mask(1 << 40 | 1));
        assert_eq!((w64.s[126], w64.s[127]), (1, 1 << 8));
        assert_eq!(w64.exec().iter().collect::<Vec<_>>(), vec![0, 40]);
        assert!(!w64.exec().is_all::<64>());
        w64.write_mask(Opnd::S(sreg::VCC), Mask::all::<64>());
        assert_eq!(w64.vcc(), Mask(u64::MAX));
        assert_eq!(Mask::from_fn::<64>(|l| l >= 60), Mask(0xf << 60));
    }
}
