//! Lowering the decoder's [`Inst`]s into [`Uop`]s: the operation kept (it picks the handler
//! in the family's table), operands resolved into [`Opnd`]s (registers by index in the
//! engine's scalar layout, constants and literals as the bit patterns of their operand types),
//! modifiers, DPP/SDWA controls and memory fields copied into the engine's fields, and the few
//! operand shapes the engine reads differently from the decoder's slots (MUBUF data, the K
//! literal of `v_fmamk`/`v_fmaak`). Also block decoding from guest memory and the text of an
//! instruction for error reports.
//!
//! Anything the engine does not execute (MTBUF, EXP, gfx10 SCRATCH, DPP8, GDS, GWS other than
//! `ds_gws_barrier` and `ds_gws_init`, LDS DMA, `lds_direct`) gets the [`unsupported`]
//! handler, so it fails only if reached. Not for decoding bytes ([`crate::isa`]).

use super::{Block, Dpp, DynMemory, HandlerId, LaneMode, Mem, Mods, Opnd, Sdwa, Uop};
use crate::isa::{literal_bits, Encoding, Extra, Inst, Isa, Layout, Op, Operand, Special};
use crate::memory;
use crate::program::{DecodeStop, MAX_BLOCK};
use crate::wave::{sreg, AGPR_BASE};

/// The engine's operand for a decoded one; `None` marks operands the engine cannot read.
fn opnd(o: Operand, literal: u32) -> Option<Opnd> {
    Some(match o {
        Operand::None | Operand::Off => Opnd::None,
        Operand::Sgpr { first, .. } => Opnd::S(first.min(sreg::SGPRS - 1)),
        Operand::Vgpr { first, .. } => Opnd::V(u16::from(first)),
        // AGPRs follow the VGPRs in the wave's vector file (CDNA's unified register file).
        Operand::Agpr { first, .. } => Opnd::V(AGPR_BASE + u16::from(first)),
        Operand::Ttmp { first, .. } => Opnd::S(sreg::TTMP + first.min(15)),
        Operand::Special { reg, .. } => match reg {
            Special::VccLo => Opnd::S(sreg::VCC),
            Special::VccHi => Opnd::S(sreg::VCC + 1),
            Special::M0 => Opnd::S(sreg::M0),
            Special::Null => Opnd::S(sreg::NULL),
            Special::ExecLo => Opnd::S(sreg::EXEC),
            Special::ExecHi => Opnd::S(sreg::EXEC + 1),
            Special::SharedBase => Opnd::SharedBase,
            Special::SharedLimit => Opnd::SharedLimit,
            Special::PrivateBase => Opnd::PrivateBase,
            Special::PrivateLimit => Opnd::PrivateLimit,
            Special::PopsExitingWaveId => Opnd::PopsExitingWaveId,
            Special::Vccz => Opnd::Vccz,
            Special::Execz => Opnd::Execz,
            Special::Scc => Opnd::Scc,
            Special::LdsDirect => return None,
            Special::FlatScratchLo => Opnd::FlatScratchLo,
            Special::FlatScratchHi => Opnd::FlatScratchHi,
            // gfx9's XNACK_MASK takes the engine's s104/s105, which no gfx9 SGPR uses.
            Special::XnackMaskLo => Opnd::S(sreg::XNACK_MASK),
            Special::XnackMaskHi => Opnd::S(sreg::XNACK_MASK + 1),
        },
        Operand::Inline(c) => Opnd::Imm(c.bits()),
        Operand::Literal(ty) => Opnd::Imm(literal_bits(literal, ty)),
    })
}

/// Lowers one decoded instruction at `pc`.
pub fn lower(inst: &Inst, pc: u64) -> Uop {
    let mut ok = !matches!(
        inst.encoding,
        Encoding::Mtbuf
            | Encoding::Exp
            | Encoding::Vintrp
            | Encoding::Illegal
    );
    let mut r = |o: Operand| {
        opnd(o, inst.literal).unwrap_or_else(|| {
            ok = false;
            Opnd::None
        })
    };
    let d = [r(inst.dst[0]), r(inst.dst[1])];
    let src = [
        r(inst.src[0]),
        r(inst.src[1]),
        r(inst.src[2]),
        r(inst.src[3]),
    ];
    let mut u = Uop {
        pc,
        size: inst.len,
        d,
        s: [src[0], src[1], src[2]],
        form: inst.encoding,
        ..Uop::new(inst.op)
    };
    u.mem.glc = inst.glc();
    match inst.extra {
        Extra::None => {}
        Extra::Dpp8 { lanes, fi } => u.lanes = LaneMode::Dpp8 { sel: lanes, fi },
        Extra::Vop3 {
            clamp,
            omod,
            neg,
            abs,
            op_sel,
        } => {
            u.m = Mods {
                neg,
                abs,
                op_sel,
                clamp,
                omod,
                ..u.m
            }
        }
        Extra::Vop3p {
            clamp,
            op_sel,
            op_sel_hi,
            neg_lo,
            neg_hi,
        } => {
            u.m = Mods {
                neg: neg_lo,
                neg_hi,
                op_sel,
                op_sel_hi,
                clamp,
                ..u.m
            }
        }
        Extra::Sdwa(s) => {
            u.lanes = LaneMode::Sdwa(Sdwa {
                dst_sel: s.dst_sel,
                dst_unused: s.dst_unused,
                src_sel: [s.src0_sel, s.src1_sel],
                sext: [s.sext & 1 != 0, s.sext & 2 != 0],
            });
            u.m = Mods {
                neg: s.neg,
                abs: s.abs,
                clamp: s.clamp,
                omod: s.omod,
                ..u.m
            };
        }
        Extra::Dpp16(p) => {
            u.lanes = LaneMode::Dpp(Dpp {
                ctrl: p.ctrl,
                row_mask: p.row_mask,
                bank_mask: p.bank_mask,
                bound_ctrl: p.bound_ctrl,
                fi: p.fi,
            });
            u.m = Mods {
                neg: p.neg,
                abs: p.abs,
                ..u.m
            };
        }
        Extra::Imm16(x) => u.imm = i64::from(x),
        // MFMA controls: cbsz in bits 0-2, abid 4-7, blgp 8-10.
        Extra::Mai { cbsz, abid, blgp } => {
            u.imm = i64::from(cbsz) | i64::from(abid) << 4 | i64::from(blgp) << 8
        }
        Extra::Branch { target, .. } => u.imm = target as i64,
        Extra::Smem { offset, .. } => {
            u.mem = Mem {
                offset,
                saddr: src[1],
                ..u.mem
            }
        }
        Extra::Ds {
            offset0,
            offset1,
            gds,
        } => {
            // GDS is not emulated; of the GWS instructions (which exist only with the gds
            // bit) the barrier and its initialisation are, for cooperative groups' grid sync.
            ok &= gds == matches!(inst.op, Op::DsGwsBarrier | Op::DsGwsInit);
            u.mem = Mem {
                offset: i32::from(offset0) | i32::from(offset1) << 8,
                offset1: u16::from(offset1),
                ..u.mem
            };
        }
        Extra::Flat { offset, lds } => {
            ok &= !lds;
            u.mem = Mem {
                offset: i32::from(offset),
                saddr: src[2],
                ..u.mem
            };
        }
        Extra::Mubuf {
            offset,
            offen,
            idxen,
            lds,
            tfe,
        } => {
            ok &= !(lds || tfe);
            u.mem = Mem {
                offset: i32::from(offset),
                offen,
                idxen,
                saddr: src[2],
                ..u.mem
            };
            // The engine reads MUBUF as vaddr, data, descriptor.
            u.s = [src[0], src[3], src[1]];
        }
        Extra::Mimg(m) => ok &= super::image::lower(inst, &m, &mut u),
    }
    match inst.op {
        // K is the instruction's literal: madmk-style D = S0 * K + S1, madak-style S0 * S1 + K.
        Op::VFmamkF32 => u.s = [src[0], Opnd::Imm(u64::from(inst.literal)), src[1]],
        Op::VFmaakF32 => u.s = [src[0], src[1], Opnd::Imm(u64::from(inst.literal))],
        Op::VFmamkF16 => u.s = [src[0], Opnd::Imm(u64::from(inst.literal & 0xffff)), src[1]],
        Op::VFmaakF16 => u.s = [src[0], src[1], Opnd::Imm(u64::from(inst.literal & 0xffff))],
        Op::VMadmkF32 => u.s = [src[0], Opnd::Imm(u64::from(inst.literal)), src[1]],
        Op::VMadakF32 => u.s = [src[0], src[1], Opnd::Imm(u64::from(inst.literal))],
        Op::VMadmkF16 => u.s = [src[0], Opnd::Imm(u64::from(inst.literal & 0xffff)), src[1]],
        Op::VMadakF16 => u.s = [src[0], src[1], Opnd::Imm(u64::from(inst.literal & 0xffff))],
        Op::SSetregImm32B32 => u.s[0] = Opnd::Imm(u64::from(inst.literal)),
        _ => {}
    }
    if inst.isa.isa().layout == Layout::Gfx9 {
        u.zero_hi16 = !keeps_high_half(inst.op);
    }
    if !ok {
        u.run = HandlerId::UNSUPPORTED;
    }
    u
}

/// gfx9's 16-bit operations that keep their destination's high half: the accumulating and
/// K-constant f16 forms and the mixed-precision halves (the others zero it).
fn keeps_high_half(op: Op) -> bool {
    matches!(
        op,
        Op::VMacF16
            | Op::VFmacF16
            | Op::VMadakF16
            | Op::VMadmkF16
            | Op::VFmaakF16
            | Op::VFmamkF16
            | Op::VFmaMixloF16
            | Op::VFmaMixhiF16
    )
}

/// Whether an encoding is a vector ALU one (what VGPR index mode applies to).
fn is_valu(e: Encoding) -> bool {
    matches!(
        e,
        Encoding::Vop1
            | Encoding::Vop2
            | Encoding::Vopc
            | Encoding::Vop3
            | Encoding::Vop3p
            | Encoding::Vop1Sdwa
            | Encoding::Vop2Sdwa
            | Encoding::VopcSdwa
            | Encoding::Vop1Dpp16
            | Encoding::Vop2Dpp16
    )
}

/// Reads up to 20 instruction bytes at `pc` (fewer near the end of readable memory).
fn fetch(pc: u64, mem: &dyn DynMemory) -> Result<([u8; 20], usize), DecodeStop> {
    let mut last = None;
    for n in [20usize, 16, 12, 8, 4] {
        match mem.translate(pc, n as u64, crate::Access::Execute) {
            Ok(p) => {
                let mut buf = [0u8; 20];
                for (k, chunk) in buf[..n].chunks_exact_mut(4).enumerate() {
                    // SAFETY: translate() approved n bytes at p; k * 4 + 4 <= n.
                    chunk.copy_from_slice(&unsafe { memory::load::<4>(p.add(4 * k)) });
                }
                return Ok((buf, n));
            }
            Err(f) => last = Some(f),
        }
    }
    match last {
        Some(fault) => Err(DecodeStop::Fetch { pc, fault }),
        None => Err(DecodeStop::Invalid {
            pc,
            word: 0,
            detail: "no bytes".into(),
        }),
    }
}

/// Decodes the block of `isa` code starting at `pc`, and why decoding stopped early if it
/// did.
pub fn decode_block(isa: &'static Isa, pc: u64, mem: &dyn DynMemory) -> (Block, Option<DecodeStop>) {
    let mut uops = Vec::new();
    let mut code = Vec::new();
    let mut at = pc;
    let mut stop = None;
    // gfx9's VGPR index mode: the `s_set_gpr_idx_on` whose region the next VALU uops are in.
    let mut indexing: Option<usize> = None;
    while uops.len() < MAX_BLOCK {
        let (bytes, n) = match fetch(at, mem) {
            Ok(b) => b,
            Err(s) => {
                stop = Some(s);
                break;
            }
        };
        match isa.decode(&bytes[..n], at) {
            Ok(inst) => {
                code.extend_from_slice(&bytes[..usize::from(inst.len).min(n)]);
                let mut u = lower(&inst, at);
                match inst.op {
                    Op::SSetGprIdxOn => indexing = Some(uops.len()),
                    Op::SSetGprIdxOff => indexing = None,
                    _ if indexing.is_some()
                        && is_valu(inst.encoding)
                        && u.run != HandlerId::UNSUPPORTED =>
                    {
                        u.run = HandlerId::GPR_INDEXED;
                    }
                    _ => {}
                }
                uops.push(u);
                at = at.wrapping_add(u64::from(inst.len));
                if inst.ends_block() {
                    break;
                }
            }
            Err(e) => {
                stop = Some(DecodeStop::Invalid {
                    pc: at,
                    word: u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
                    detail: e.to_string(),
                });
                break;
            }
        }
    }
    if let Some(on) = indexing {
        // Index mode left on past the block: its instructions elsewhere would run unindexed,
        // so the region is refused where it starts.
        if let Some(u) = uops.get_mut(on) {
            u.run = HandlerId::UNSUPPORTED;
        }
    }
    let stopped = stop.is_some();
    (
        Block {
            start: pc,
            uops: uops.into_boxed_slice(),
            stopped,
            code: code.into_boxed_slice(),
            isa: isa.id,
        },
        stop,
    )
}

/// The `isa` instruction at `pc` as the decoder prints it, or empty when it cannot be read.
pub fn describe(isa: &'static Isa, pc: u64, mem: &dyn DynMemory) -> String {
    match fetch(pc, mem) {
        Ok((bytes, n)) => isa
            .decode(&bytes[..n], pc)
            .map(|i| i.to_string())
            .unwrap_or_default(),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::GFX1030;
    use crate::memory::FlatMemory;

    fn words(ws: &[u32]) -> FlatMemory {
        let mut m = FlatMemory::new();
        m.map(0x1000, 4 * ws.len() as u64, false).unwrap();
        let bytes: Vec<u8> = ws.iter().flat_map(|w| w.to_le_bytes()).collect();
        m.write_bytes(0x1000, &bytes).unwrap();
        m
    }

    #[test]
    fn blocks_end_at_branches_and_stop_at_bad_words() {
        // s_mov_b32 s0, 5 (0xbe800385); s_endpgm (0xbf810000); then a SOPP word with an
        // opcode gfx1030 does not define.
        let bad = 0xbfff_0000u32;
        assert!(crate::isa::decode(&bad.to_le_bytes(), 0).is_err());
        let m = words(&[0xbe80_0385, 0xbf81_0000, bad]);
        let (b, stop) = decode_block(&GFX1030, 0x1000, &m);
        assert_eq!(b.uops.len(), 2);
        assert!(stop.is_none() && !b.stopped);
        assert_eq!(b.uops[0].s[0], Opnd::Imm(5));
        assert_eq!(b.uops[0].d[0], Opnd::S(0));
        let (b, stop) = decode_block(&GFX1030, 0x1008, &m);
        assert!(b.uops.is_empty() && b.stopped);
        assert!(
            matches!(stop, Some(DecodeStop::Invalid { pc: 0x1008, .. })),
            "{stop:?}"
        );
        // Past readable memory: a fetch stop with the embedder's payload.
        let (_, stop) = decode_block(&GFX1030, 0x2000, &m);
        assert!(matches!(stop, Some(DecodeStop::Fetch { pc: 0x2000, .. })));
    }

    /// gfx9's VGPR index mode: between `s_set_gpr_idx_on` and `s_set_gpr_idx_off` the
    /// operands the mode names are offset by the index; after it nothing is.
    #[test]
    fn gpr_index_mode_offsets_the_operands_it_names() {
        use crate::exec::{step, Env, Spans, Step};
        use crate::lds::Lds;
        use crate::wave::{Mask, Wave};
        // s_set_gpr_idx_on s2, gpr_idx(SRC0,DST); v_mov_b32 v1, v10; v_add_u32 v3, v10, v11;
        // s_set_gpr_idx_off; v_mov_b32 v4, v10; s_endpgm (llvm-mc-19 -mcpu=gfx90a).
        let m = words(&[
            0xbf11_0902,
            0x7e02_030a,
            0x6806_170a,
            0xbf9c_0000,
            0x7e08_030a,
            0xbf81_0000,
        ]);
        let (b, stop) = decode_block(&crate::isa::GFX90A, 0x1000, &m);
        assert!(stop.is_none() && b.uops.len() == 6);
        let mut w = Wave::<64>::new();
        w.set_exec(Mask::all::<64>());
        w.s[2] = 5;
        for lane in 0..64u32 {
            w.v[10][lane as usize] = lane;
            w.v[11][lane as usize] = 1000 + lane;
            w.v[15][lane as usize] = 7 * lane;
        }
        let before = w.v.clone();
        let mut lds = Lds::new(0);
        let spans = Spans::default();
        let mut e = Env::new(&m, &mut lds, &crate::NoServices, &spans);
        for u in &b.uops {
            let s = step(&crate::family::cdna::WAVE64, &mut w, u, &mut e).expect("runs");
            assert!(matches!(s, Step::Next | Step::End), "{s:?}");
        }
        for lane in 0..64 {
            // v6 = v15 and v8 = v15 + v11 (src1 not indexed); v4 = v10 after the mode ends.
            assert_eq!(w.v[6][lane], before[15][lane]);
            assert_eq!(w.v[8][lane], before[15][lane] + before[11][lane]);
            assert_eq!(w.v[4][lane], before[10][lane]);
            assert_eq!(w.v[1][lane], before[1][lane]);
            assert_eq!(w.v[3][lane], before[3][lane]);
        }
        assert!(!w.gpr_idx);
    }
}
