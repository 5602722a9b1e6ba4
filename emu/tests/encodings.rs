//! Per-encoding unit tests against llvm-mc: assembly lines written here are
//! assembled by `llvm-mc-19 -show-encoding`; the bytes it reports must decode
//! (with the right length) and print exactly as llvm-mc prints them. A second
//! test sweeps every 16-bit immediate of the symbolic SOPP/SOPK forms through
//! `llvm-mc --disassemble`. Without llvm-mc the tests say so and pass, unless
//! `CI` is set.

use rocload_emu::isa::{decode, disassemble};
use std::io::Write;
use std::process::{Command, Stdio};

fn llvm_mc() -> String {
    std::env::var("LLVM_MC").unwrap_or_else(|_| "llvm-mc-19".into())
}

/// Run llvm-mc with `args` on `input`; `None` when the tool is missing.
fn run_mc(args: &[&str], input: &str) -> Option<(String, String)> {
    let child = Command::new(llvm_mc())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            let msg = format!(
                "{} not runnable ({e}): install LLVM 19 to run this test",
                llvm_mc()
            );
            if std::env::var_os("CI").is_some() {
                panic!("{msg}");
            }
            eprintln!("SKIPPED: {msg}");
            return None;
        }
    };
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("llvm-mc output");
    writer
        .join()
        .expect("writer thread")
        .expect("writing to llvm-mc");
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

const ASM: &str = r#"
s_mov_b32 s0, s1
s_mov_b32 s2, 0x12345678
s_mov_b32 s2, -17
s_mov_b32 s2, 0.5
s_mov_b64 s[2:3], -1
s_mov_b64 s[2:3], 0x3f800000
s_mov_b64 s[2:3], exec
s_mov_b64 vcc, s[4:5]
s_mov_b32 m0, s7
s_mov_b32 s0, src_shared_base
s_mov_b64 s[0:1], src_private_base
s_getpc_b64 s[4:5]
s_setpc_b64 s[30:31]
s_swappc_b64 s[30:31], s[16:17]
s_and_saveexec_b32 s4, vcc_lo
s_or_b32 exec_lo, exec_lo, s0
s_add_u32 s0, s1, 0xffff
s_lshl_b64 s[0:1], s[2:3], 3
s_bfe_u64 s[0:1], s[2:3], 0x100010
s_cselect_b32 s0, -1, 0
s_cmp_eq_u64 s[0:1], 0
s_cmp_lg_u32 s1, ttmp3
s_bitcmp1_b32 s0, 5
s_movk_i32 s4, 0x1234
s_cmpk_eq_u32 s4, 0xffff
s_addk_i32 s4, 0x10
s_getreg_b32 s1, hwreg(HW_REG_MODE, 0, 4)
s_getreg_b32 s1, hwreg(HW_REG_HW_ID)
s_setreg_b32 hwreg(HW_REG_MODE, 4, 4), s2
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 3
s_waitcnt_vscnt null, 0x0
s_call_b64 s[30:31], 12
s_nop 7
s_endpgm
s_branch 5
s_cbranch_scc0 65534
s_cbranch_execz 3
s_waitcnt vmcnt(0) lgkmcnt(0)
s_waitcnt expcnt(1)
s_waitcnt lgkmcnt(3)
s_barrier
s_sendmsg sendmsg(MSG_INTERRUPT)
s_sendmsg sendmsg(MSG_GS_DONE, GS_OP_NOP)
s_waitcnt_depctr 0xffe3
s_waitcnt_depctr depctr_va_vdst(0)
s_clause 0x3
s_sleep 2
s_setprio 3
s_trap 2
s_inst_prefetch 0x3
s_code_end
s_denorm_mode 3
s_round_mode 0xf
s_load_dword s0, s[4:5], 0x24
s_load_dwordx2 s[2:3], s[4:5], -0x10 glc dlc
s_load_dwordx4 s[8:11], s[4:5], 0x0
s_load_dwordx8 s[8:15], s[4:5], s7
s_load_dwordx16 s[8:23], s[4:5], s7 offset:0x20
s_buffer_load_dword s2, s[4:7], 0x10
s_memtime s[2:3]
s_dcache_inv
s_gl1_inv
s_atc_probe 7, s[4:5], 0x10
v_mov_b32_e32 v0, v1
v_mov_b32_e32 v0, 1.0
v_mov_b32_e32 v0, 0x42280000
v_mov_b32_e32 v0, s5
v_readfirstlane_b32 s3, v1
v_cvt_f64_i32_e32 v[0:1], v2
v_cvt_f32_f64_e32 v0, 0x40080000
v_cvt_f16_f32_e32 v0, 0.5
v_rcp_f64_e32 v[0:1], 4.0
v_sqrt_f32_e32 v1, v2
v_not_b32_e32 v1, 0x7f
v_add_f32_e32 v1, 0.15915494, v2
v_add_f16_e32 v1, 0x1234, v2
v_mul_f32_e32 v0, 0x3e22f984, v1
v_add_nc_u32_e32 v0, 64, v1
v_add_nc_u32_e32 v0, -16, v1
v_cndmask_b32_e32 v0, v1, v2, vcc_lo
v_add_co_ci_u32_e32 v0, vcc_lo, v1, v2, vcc_lo
v_fmaak_f32 v0, v1, v2, 0x3c0881c4
v_fmamk_f32 v0, v1, 0x40490fdb, v2
v_fmac_f32_e32 v0, v1, v2
v_lshlrev_b32_e32 v0, 2, v1
v_cmp_eq_u32_e32 vcc_lo, 1, v1
v_cmp_gt_f64_e32 vcc_lo, 1.0, v[2:3]
v_cmpx_lt_i32_e32 0, v1
v_cmp_class_f32_e64 s0, v1, 0x1f8
v_cmp_lt_f32_e64 s0, -v1, |v2|
v_cmpx_eq_u32_e64 s1, v2
v_add_f32_e64 v0, -v1, |v2| clamp mul:2
v_add_f32_e64 v0, neg(1.0), v2 div:2
v_fma_f32 v0, v1, -v2, |v3| mul:4
v_fma_f64 v[0:1], v[2:3], 0.5, -v[4:5]
v_mad_u64_u32 v[0:1], null, s6, s0, v[0:1]
v_mad_u64_u32 v[0:1], s2, v3, v4, 0
v_add_co_u32 v0, s4, v1, v2
v_add_co_ci_u32_e64 v0, s5, v1, 0, s4
v_div_scale_f32 v0, vcc_lo, v1, v1, v2
v_div_fmas_f64 v[0:1], v[2:3], v[4:5], v[6:7]
v_cndmask_b32_e64 v0, 0, 1, s4
v_readlane_b32 s0, v1, 5
v_writelane_b32 v1, s0, 7
v_lshlrev_b64 v[0:1], 3, v[2:3]
v_bfe_u32 v0, v1, 8, 8
v_perm_b32 v0, v1, v2, 0x5040100
v_xor3_b32 v0, v1, v2, v3
v_add_nc_u16 v0, v1, 0x1234
v_add_nc_u16 v0, v1, -1
v_add_nc_u16 v0, v1, v2 op_sel:[1,0,1]
v_mul_lo_u32 v0, v1, 0x12345
v_ldexp_f64 v[0:1], v[2:3], -2
v_trig_preop_f64 v[0:1], v[2:3], 1
v_pk_add_f16 v0, v1, v2
v_pk_fma_f16 v1, v2, v3, v4 op_sel:[1,0,1] op_sel_hi:[0,1,1] neg_lo:[1,0,0] neg_hi:[0,1,0] clamp
v_pk_mul_lo_u16 v0, v1, 4
v_pk_add_u16 v0, v1, 1.0
v_fma_mix_f32 v4, v3, s0, |v2| op_sel_hi:[0,0,1]
v_fma_mixlo_f16 v0, -v1, v2, v3 op_sel_hi:[1,1,1]
v_dot2_f32_f16 v0, v1, v2, v3
v_mov_b32_sdwa v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0
v_add_f32_sdwa v1, -v2, |v3| dst_sel:DWORD dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:DWORD
v_add_nc_u32_sdwa v1, sext(v2), v3 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_0 src1_sel:WORD_0
v_cmp_eq_u16_sdwa vcc_lo, v27, v21 src0_sel:BYTE_0 src1_sel:DWORD
v_cmp_eq_u32_sdwa s4, v1, v2 src0_sel:WORD_0 src1_sel:DWORD
v_mov_b32_sdwa v1, s2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1
v_add_f32_dpp v1, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_add_f32_dpp v1, -v2, |v3| row_shr:1 row_mask:0x5 bank_mask:0xa bound_ctrl:0 fi:1
v_mov_b32_dpp v0, v1 row_share:3 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v0, v1 row_xmask:15 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v0, v1 row_mirror row_mask:0xf bank_mask:0xf
v_add_f32_dpp v1, v2, v3 dpp8:[7,6,5,4,3,2,1,0]
v_mov_b32_dpp v1, v2 dpp8:[1,0,3,2,5,4,7,6] fi:1
ds_write_b32 v1, v2 offset:16
ds_write2_b32 v1, v2, v3 offset0:4 offset1:8
ds_write2st64_b64 v1, v[2:3], v[4:5] offset1:1
ds_read_b64 v[4:5], v1 offset:65535
ds_read2_b32 v[4:5], v1 offset0:1 offset1:2 gds
ds_add_rtn_u32 v4, v1, v2
ds_add_u32 v1, v2
ds_cmpst_rtn_b32 v0, v1, v2, v3
ds_bpermute_b32 v0, v1, v2 offset:4
ds_swizzle_b32 v0, v1 offset:swizzle(SWAP,16)
ds_swizzle_b32 v0, v1 offset:swizzle(QUAD_PERM,1,0,3,2)
ds_gws_barrier v4 gds
ds_gws_barrier v1 offset:3 gds
ds_swizzle_b32 v0, v1 offset:swizzle(BROADCAST,8,3)
ds_swizzle_b32 v0, v1 offset:swizzle(REVERSE,8)
ds_swizzle_b32 v0, v1 offset:swizzle(BITMASK_PERM,"01pi0")
flat_load_dword v1, v[2:3] offset:4 glc slc dlc
flat_store_dwordx4 v[2:3], v[4:7] offset:2047
flat_atomic_add v1, v[2:3], v4 glc
flat_atomic_cmpswap_x2 v[2:3], v[4:7]
global_load_dword v1, v[2:3], off offset:-4
global_load_dword v1, v2, s[4:5] offset:-4
global_store_short v[2:3], v1, off
global_store_dword v2, v1, s[4:5] offset:2047
global_atomic_add v1, v[2:3], v4, off glc
global_load_dwordx2 v[0:1], v2, s[2:3] glc
scratch_load_dword v1, v2, off offset:-2048
scratch_load_dword v1, off, s3 offset:12
scratch_store_dwordx2 off, v[2:3], s0 offset:8
buffer_load_dword v1, v2, s[4:7], s8 offen offset:12 glc slc dlc
buffer_load_dword v1, v2, s[4:7], 0 idxen offset:4095
buffer_load_dword v1, off, s[4:7], s8 offset:4095
buffer_store_dword v1, v[2:3], s[4:7], s8 idxen offen
buffer_atomic_add v1, v2, s[4:7], s8 offen glc
buffer_load_ubyte v1, off, s[0:3], 0
buffer_gl0_inv
buffer_gl1_inv
"#;

#[test]
fn assembled_lines_decode_and_print_like_llvm_mc() {
    let Some((out, err)) = run_mc(&["-triple=amdgcn", "-mcpu=gfx1030", "-show-encoding"], ASM)
    else {
        return;
    };
    assert!(
        !err.contains("error"),
        "llvm-mc rejected test assembly:\n{err}"
    );
    // The reference text is llvm-mc's disassembly of those bytes (what
    // llvm-objdump shows), not the assembler's echo.
    let mut encoded = Vec::new();
    for line in out.lines() {
        let Some((text, enc)) = line.split_once("; encoding: [") else {
            continue;
        };
        let bytes: Vec<u8> = enc
            .trim_end_matches(']')
            .split(',')
            .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).expect("hex byte"))
            .collect();
        encoded.push((text.trim().to_string(), bytes));
    }
    let input: String = encoded
        .iter()
        .map(|(_, b)| {
            b.iter()
                .map(|x| format!("0x{x:02x}"))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    let Some((dis, _)) = run_mc(
        &["--disassemble", "-triple=amdgcn", "-mcpu=gfx1030"],
        &input,
    ) else {
        return;
    };
    let texts: Vec<&str> = dis
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != ".text")
        .collect();
    assert_eq!(
        texts.len(),
        encoded.len(),
        "llvm-mc could not disassemble its own encodings"
    );
    let mut n = 0;
    let mut failures = Vec::new();
    for ((_, bytes), text) in encoded.iter().zip(texts) {
        n += 1;
        match decode(bytes, 0x1000) {
            Ok(inst) => {
                let got = inst.to_string();
                if got != text || inst.len as usize != bytes.len() {
                    failures.push(format!(
                        "{text}\n  got: {got} (length {} of {})",
                        inst.len,
                        bytes.len()
                    ));
                }
            }
            Err(e) => failures.push(format!("{text}\n  error: {e}")),
        }
    }
    assert!(n > 150, "only {n} encodings parsed from llvm-mc");
    assert!(
        failures.is_empty(),
        "{} of {n} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Disassemble `words` (one instruction per line) with llvm-mc; compare each
/// line with our text.
fn sweep(words: &[u32]) -> Option<Vec<String>> {
    let input: String = words
        .iter()
        .map(|w| {
            let b = w.to_le_bytes();
            format!(
                "0x{:02x},0x{:02x},0x{:02x},0x{:02x}\n",
                b[0], b[1], b[2], b[3]
            )
        })
        .collect();
    let (out, _) = run_mc(
        &["--disassemble", "-triple=amdgcn", "-mcpu=gfx1030"],
        &input,
    )?;
    let lines: Vec<&str> = out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != ".text")
        .collect();
    assert_eq!(
        lines.len(),
        words.len(),
        "llvm-mc rejected some sweep words"
    );
    let mut failures = Vec::new();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    for ((_, res), expected) in disassemble(&bytes, 0).zip(lines) {
        let got = res.map(|i| i.to_string()).unwrap_or_else(|e| e.to_string());
        if got != expected {
            failures.push(format!("expected {expected}\n  got {got}"));
        }
    }
    Some(failures)
}

#[test]
fn every_symbolic_immediate_prints_like_llvm_mc() {
    // s_waitcnt, s_sendmsg, s_waitcnt_depctr and s_getreg_b32 over all 65536 immediates.
    let mut words = Vec::new();
    for base in [0xBF8C_0000u32, 0xBF90_0000, 0xBFA3_0000, 0xB901_0000] {
        words.extend((0..=0xffffu32).map(|v| base | v));
    }
    let Some(failures) = sweep(&words) else {
        return;
    };
    assert!(
        failures.is_empty(),
        "{} differ, first:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn random_words_never_panic() {
    // Deterministic xorshift stream; every prefix length is tried so truncation paths run.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut buf = [0u8; 16];
    for _ in 0..300_000 {
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        for len in [0, 3, 4, 7, 8, 11, 12, 16] {
            if let Ok(inst) = decode(&buf[..len], x) {
                assert!(inst.len as usize <= len, "length beyond the input");
                let _ = inst.to_string();
            }
        }
    }
}
