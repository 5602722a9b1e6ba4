//! Cross-lane reads of the vector ALU: DPP16 source-lane selection (quad_perm, row_shl/shr/ror,
//! row_mirror, row_half_mirror, row_share, row_xmask) with row/bank write masks, bound_ctrl
//! and fi, and SDWA source selects and destination merges. Pure functions over lane arrays,
//! so they are tested on their own. Not for `v_readlane`/`permlane`/`ds_bpermute`, which are
//! instructions of their own ([`super::valu`], [`super::ds`]).

use super::{Dpp, Sdwa};
use crate::wave::{Lanes, Mask};
#[cfg(test)]
use crate::wave::LANES;

/// The lane DPP control `ctrl` reads for lane `l` of a wave of `lanes`, or `None` when it is
/// out of its row (or wave). GFX9's wave shifts and rotates and row broadcasts (0x130-0x143)
/// and gfx10's row_share/row_xmask (0x150-0x16f; gfx90a's row_newbcast is row_share's reading)
/// share one space: a control of one family never appears in the other's code.
pub fn dpp_source(ctrl: u16, l: usize, lanes: usize) -> Option<usize> {
    let row = l & !15;
    let i = l & 15;
    let n = usize::from(ctrl & 15);
    match ctrl {
        0x000..=0x0ff => Some((l & !3) | (usize::from(ctrl) >> (2 * (l & 3)) & 3)),
        0x101..=0x10f => (i + n < 16).then_some(l + n),
        0x111..=0x11f => (i >= n).then(|| l - n),
        0x121..=0x12f => Some(row + (i + 16 - n) % 16),
        // wave_shl:1, wave_rol:1, wave_shr:1, wave_ror:1.
        0x130 => (l + 1 < lanes).then_some(l + 1),
        0x134 => Some((l + 1) % lanes),
        0x138 => l.checked_sub(1),
        0x13c => Some((l + lanes - 1) % lanes),
        0x140 => Some(row + 15 - i),
        0x141 => Some((l & !7) + 7 - (l & 7)),
        // row_bcast:15: each row after the first reads the previous row's last lane.
        0x142 => row.checked_sub(1),
        // row_bcast:31: rows 2 and 3 read lane 31.
        0x143 => (l >= 32).then_some(31),
        0x150..=0x15f => Some(row + n),
        0x160..=0x16f => Some(row + (i ^ n)),
        _ => None,
    }
}

/// Applies DPP to a source: returns the permuted values and the lanes that may be written.
pub fn dpp<const N: usize>(src: &Lanes<N>, exec: Mask, d: &Dpp) -> (Lanes<N>, Mask) {
    let mut out = [0u32; N];
    let mut write = Mask::NONE;
    for (l, o) in out.iter_mut().enumerate() {
        let row_ok = d.row_mask >> (l / 16) & 1 != 0;
        let bank_ok = d.bank_mask >> ((l >> 2) & 3) & 1 != 0;
        if !(row_ok && bank_ok) {
            continue;
        }
        let s = dpp_source(d.ctrl, l, N).filter(|&s| s < N && (d.fi || exec.has(s)));
        match s {
            Some(s) => {
                *o = src[s];
                write.0 |= 1 << l;
            }
            None if d.bound_ctrl => write.0 |= 1 << l,
            None => {}
        }
    }
    (out, write)
}

/// Applies DPP8 to a source.
pub fn dpp8<const N: usize>(src: &Lanes<N>, exec: Mask, sel: u32, fi: bool) -> Lanes<N> {
    std::array::from_fn(|l| {
        let s = (l & !7) | (sel >> (3 * (l & 7)) & 7) as usize;
        if fi || exec.has(s) {
            src[s]
        } else {
            0
        }
    })
}

/// The bits an SDWA select takes from `v`, sign-extended when `sext`.
#[inline]
pub fn sdwa_src(v: u32, sel: u8, sext: bool) -> u32 {
    let (shift, bits) = match sel {
        0..=3 => (8 * u32::from(sel), 8),
        4 => (0, 16),
        5 => (16, 16),
        _ => return v,
    };
    let x = (v >> shift) & ((1 << bits) - 1);
    if sext {
        ((x << (32 - bits)) as i32 >> (32 - bits)) as u32
    } else {
        x
    }
}

/// Merges a result into its destination as the SDWA destination select says.
#[inline]
pub fn sdwa_dst(result: u32, old: u32, s: &Sdwa) -> u32 {
    let (shift, bits) = match s.dst_sel {
        0..=3 => (8 * u32::from(s.dst_sel), 8),
        4 => (0, 16),
        5 => (16, 16),
        _ => return result,
    };
    let mask = ((1u32 << bits) - 1) << shift;
    let field = (result << shift) & mask;
    match s.dst_unused {
        2 => (old & !mask) | field,
        1 => {
            let sign = field >> (shift + bits - 1) & 1;
            let above = if shift + bits >= 32 {
                0
            } else {
                u32::MAX << (shift + bits)
            };
            field | if sign != 0 { above } else { 0 }
        }
        _ => field,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota() -> [u32; LANES] {
        std::array::from_fn(|l| l as u32)
    }

    fn plain(ctrl: u16) -> Dpp {
        Dpp {
            ctrl,
            row_mask: 0xf,
            bank_mask: 0xf,
            bound_ctrl: false,
            fi: false,
        }
    }

    #[test]
    fn quad_perm_and_row_shifts_read_the_lanes_the_isa_names() {
        // quad_perm:[1,0,3,2] = 0b10_11_00_01: swap neighbours.
        let (v, w) = dpp(&iota(), Mask::all::<32>(), &plain(0b10110001));
        assert_eq!(&v[..4], &[1, 0, 3, 2]);
        assert_eq!(w, Mask::all::<32>());
        // row_shr:1: lane l reads l-1; the first lane of each row has no source.
        let (v, w) = dpp(&iota(), Mask::all::<32>(), &plain(0x111));
        assert_eq!((v[1], v[17]), (0, 16));
        assert_eq!(w.0 & (1 | 1 << 16), 0);
        // row_shl:2 and bound_ctrl: out-of-row lanes read 0 and are written.
        let (v, w) = dpp(
            &iota(),
            Mask::all::<32>(),
            &Dpp {
                bound_ctrl: true,
                ..plain(0x102)
            },
        );
        assert_eq!((v[0], v[14], v[15]), (2, 0, 0));
        assert_eq!(w, Mask::all::<32>());
    }

    #[test]
    fn mirrors_share_xmask_ror() {
        assert_eq!(dpp_source(0x140, 16, 32), Some(31));
        assert_eq!(dpp_source(0x141, 9, 32), Some(14));
        assert_eq!(dpp_source(0x153, 20, 32), Some(19));
        assert_eq!(dpp_source(0x161, 18, 32), Some(19));
        assert_eq!(dpp_source(0x121, 16, 32), Some(31));
    }

    #[test]
    fn gfx9_wave_shifts_and_row_broadcasts() {
        // wave_shl/shr shift by one lane across rows; the rotates wrap around the wave.
        assert_eq!(dpp_source(0x130, 15, 64), Some(16));
        assert_eq!(dpp_source(0x130, 63, 64), None);
        assert_eq!(dpp_source(0x138, 16, 64), Some(15));
        assert_eq!(dpp_source(0x138, 0, 64), None);
        assert_eq!(dpp_source(0x134, 63, 64), Some(0));
        assert_eq!(dpp_source(0x13c, 0, 64), Some(63));
        // row_bcast:15: lane 15 of each row feeds the next row; row_bcast:31: lane 31 feeds
        // rows 2 and 3.
        assert_eq!(dpp_source(0x142, 5, 64), None);
        assert_eq!(dpp_source(0x142, 20, 64), Some(15));
        assert_eq!(dpp_source(0x142, 63, 64), Some(47));
        assert_eq!(dpp_source(0x143, 31, 64), None);
        assert_eq!(dpp_source(0x143, 40, 64), Some(31));
        // A wave reduction's row_bcast:15 with row_mask 0xa adds row 0's last lane into row
        // 1 and row 2's into row 3.
        let v: [u32; 64] = std::array::from_fn(|l| l as u32);
        let d = Dpp {
            row_mask: 0xa,
            ..plain(0x142)
        };
        let (out, w) = dpp(&v, Mask::all::<64>(), &d);
        assert_eq!(w, Mask(0xffff_0000_ffff_0000));
        assert_eq!((out[16], out[31], out[48]), (15, 15, 47));
    }

    #[test]
    fn masks_and_inactive_sources() {
        let d = Dpp {
            row_mask: 0b01,
            bank_mask: 0b0001,
            ..plain(0xe4)
        };
        let (_, w) = dpp(&iota(), Mask::all::<32>(), &d);
        assert_eq!(w, Mask(0xf), "row 0, bank 0 only");
        // Source lane 0 inactive: without fi the lane reading it is not written.
        let (_, w) = dpp(&iota(), Mask(!1 & 0xffff_ffff), &plain(0x00));
        assert_eq!(w.0 & 0xf, 0);
        let (v, w) = dpp(
            &iota(),
            Mask(!1 & 0xffff_ffff),
            &Dpp {
                fi: true,
                ..plain(0x00)
            },
        );
        assert_eq!((v[3], w.0 & 0xf), (0, 0xf));
    }

    #[test]
    fn dpp8_reads_within_groups_of_eight() {
        // Lane i of each group reads lane 7 - i: selects 7,6,5,4,3,2,1,0.
        let sel = (0..8).fold(0u32, |acc, i| acc | (7 - i) << (3 * i));
        let v = dpp8(&iota(), Mask::all::<32>(), sel, false);
        assert_eq!((v[0], v[7], v[8], v[31]), (7, 0, 15, 24));
        let v = dpp8(&iota(), Mask(!(1 << 15) & 0xffff_ffff), sel, false);
        assert_eq!(v[8], 0, "inactive source reads 0 without fi");
        let v = dpp8(&iota(), Mask(!(1 << 15) & 0xffff_ffff), sel, true);
        assert_eq!(v[8], 15);
    }

    #[test]
    fn sdwa_selects_and_merges() {
        assert_eq!(sdwa_src(0x80ff_1234, 5, false), 0x80ff);
        assert_eq!(sdwa_src(0x80ff_1234, 5, true), 0xffff_80ff);
        assert_eq!(sdwa_src(0x1234_5678, 1, false), 0x56);
        let s = Sdwa {
            dst_sel: 5,
            dst_unused: 2,
            src_sel: [6, 6],
            sext: [false; 2],
        };
        assert_eq!(sdwa_dst(0xabcd, 0x1111_2222, &s), 0xabcd_2222);
        let s = Sdwa {
            dst_sel: 0,
            dst_unused: 1,
            ..s
        };
        assert_eq!(sdwa_dst(0x80, 0, &s), 0xffff_ff80);
        let s = Sdwa { dst_unused: 0, ..s };
        assert_eq!(sdwa_dst(0x1ff, 0xffff_ffff, &s), 0xff);
    }
}
