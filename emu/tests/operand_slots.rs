//! Operand slots, end to end: every instruction word in `data/operand_slots.txt` (one or more
//! per executed mnemonic and form, encoded by llvm-mc-19) is decoded, lowered and run on a
//! wave whose registers, LDS and memory hold random values. Against the decoder's operand
//! list (the generated tables' roles) it checks that
//!
//! - every register the instruction names as a source matters: changing it changes the
//!   outcome (registers, SCC, LDS, memory, or a fault);
//! - registers it does not name do not: changing all of them leaves its destinations, LDS
//!   and memory as they were;
//! - it writes only the registers it names as destinations (plus SCC, and EXEC for the EXEC
//!   save/write family), and does write them;
//! - the old value of its destination matters exactly for the accumulating forms
//!   (`v_fmac`, `v_dot2c`, `s_addk`, ...), whose accumulator no source slot names.
//!
//! The reference tests at the end run real encodings of the forms whose operands are easy to
//! confuse (DS data0/data1, cmpswap data pairs, MUBUF vaddr/soffset, VOP3b carries, VCC and
//! EXEC destinations, SOPK, `v_fmamk`/`v_fmaak`) against values from the ISA's definitions.
//! To regenerate the data, assemble one line per table entry with
//! `llvm-mc-19 -triple=amdgcn -mcpu=gfx1030 -show-encoding`; `OPERAND_SLOTS_ONLY=<prefix>`
//! runs a subset.
//!
//! A handler that reads a `Uop` slot the lowering leaves empty, or fills with another operand,
//! fails one of these (hand-built uops in the unit tests cannot catch that). Memory operands
//! get addresses inside the mapped LDS, buffer or global range.

use std::collections::BTreeSet;

use rocload_emu::exec::{lower::lower, step32, Env, Fault, Spans, Step};
use rocload_emu::isa::{decode, Encoding, Inst, Operand, Special};
use rocload_emu::lds::Lds;
use rocload_emu::memory::FlatMemory;
use rocload_emu::wave::{Wave, LANES};
use rocload_emu::NoServices;

const DATA: &str = include_str!("data/operand_slots.txt");
const GLOBAL: u64 = 0x10000;
const GLOBAL_LEN: u64 = 0x10000;
const LDS_LEN: u32 = 0x10000;
const EXEC: u8 = 126;
const M0: u8 = 124;
const NULL: u8 = 125;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Reg {
    S(u8),
    V(u16),
}

fn regs(o: Operand) -> Vec<Reg> {
    let span = |first: u8, n: u8| (first..first.saturating_add(n)).collect::<Vec<u8>>();
    match o {
        Operand::Sgpr { first, dwords } => span(first, dwords).into_iter().map(Reg::S).collect(),
        Operand::Ttmp { first, dwords } => {
            span(108 + first, dwords).into_iter().map(Reg::S).collect()
        }
        Operand::Vgpr { first, dwords } => (0..dwords)
            .map(|k| Reg::V(u16::from(first) + u16::from(k)))
            .collect(),
        Operand::Special { reg, dwords } => {
            let first = match reg {
                Special::VccLo => 106,
                Special::VccHi => 107,
                Special::M0 => M0,
                Special::ExecLo => EXEC,
                Special::ExecHi => 127,
                _ => return vec![],
            };
            span(first, dwords).into_iter().map(Reg::S).collect()
        }
        _ => vec![],
    }
}

/// Everything an instruction can change.
#[derive(Clone, PartialEq)]
struct State {
    s: Vec<u32>,
    v: Vec<[u32; LANES]>,
    scc: bool,
    mode: u32,
    trapsts: u32,
    flat_scratch: u64,
    lds: Vec<u8>,
    mem: Vec<u8>,
}

#[derive(PartialEq)]
struct Outcome {
    result: Result<Step, String>,
    state: State,
}

fn random_state(r: &mut Rng, inst: &Inst) -> State {
    let ds = inst.encoding == Encoding::Ds;
    let mut st = State {
        // The register file is a little longer than 128 (room for wide reads at its end).
        s: (0..Wave::<32>::new().s.len())
            .map(|k| if k < 128 { r.next() } else { 0 })
            .collect(),
        v: (0..256)
            .map(|_| {
                std::array::from_fn(|_| {
                    let x = r.next();
                    // LDS addresses (and data, which is harmless) stay inside the 64 KiB.
                    if ds {
                        x & 0x7ff8
                    } else {
                        x
                    }
                })
            })
            .collect(),
        scc: r.next() & 1 != 0,
        mode: 0x3f0 | 1 << 8 | 1 << 9,
        trapsts: 0,
        flat_scratch: 0,
        lds: vec![],
        mem: vec![],
    };
    if ds {
        st.lds = (0..LDS_LEN).map(|_| r.next() as u8).collect();
    }
    if matches!(
        inst.encoding,
        Encoding::Flat | Encoding::Global | Encoding::Mubuf | Encoding::Smem
    ) {
        st.mem = (0..GLOBAL_LEN).map(|_| r.next() as u8).collect();
    }
    // The EXEC family sees a random EXEC; the rest runs every lane.
    let name = inst.op.name();
    st.s[EXEC as usize] = if name.contains("exec") {
        r.next()
    } else {
        u32::MAX
    };
    st.s[127] = 0;
    st.s[M0 as usize] = 0;
    st.s[NULL as usize] = 0;
    place_addresses(r, inst, &mut st);
    st
}

/// Points the memory operands of `inst` into the mapped ranges.
fn place_addresses(r: &mut Rng, inst: &Inst, st: &mut State) {
    let small = |r: &mut Rng| r.next() & 0x3f0;
    match inst.encoding {
        Encoding::Flat | Encoding::Global => {
            let saddr = matches!(inst.src[2], Operand::Sgpr { .. });
            if let Operand::Vgpr { first, dwords } = inst.src[0] {
                let a = first as usize;
                for l in 0..LANES {
                    if dwords == 2 {
                        st.v[a][l] = GLOBAL as u32 + (r.next() & 0x7ff0);
                        st.v[a + 1][l] = 0;
                    } else {
                        st.v[a][l] = r.next() & 0x7ff0;
                    }
                }
            }
            if saddr {
                if let Operand::Sgpr { first, .. } = inst.src[2] {
                    st.s[first as usize] = GLOBAL as u32 + (r.next() & 0x7ff0);
                    st.s[first as usize + 1] = 0;
                }
            }
        }
        Encoding::Mubuf => {
            if let Operand::Vgpr { first, dwords } = inst.src[0] {
                for k in 0..dwords as usize {
                    for l in 0..LANES {
                        st.v[first as usize + k][l] = small(r);
                    }
                }
            }
            if let Operand::Sgpr { first, .. } = inst.src[1] {
                let f = first as usize;
                st.s[f] = GLOBAL as u32;
                st.s[f + 1] = 16 << 16;
                st.s[f + 2] = GLOBAL_LEN as u32 / 2;
                st.s[f + 3] = 0;
            }
            if let Operand::Sgpr { first, .. } = inst.src[2] {
                st.s[first as usize] = small(r);
            }
        }
        Encoding::Smem => match inst.src[0] {
            Operand::Sgpr { first, dwords: 2 } => {
                st.s[first as usize] = GLOBAL as u32 + (r.next() & 0x3ff0);
                st.s[first as usize + 1] = 0;
            }
            Operand::Sgpr { first, .. } => {
                let f = first as usize;
                st.s[f] = GLOBAL as u32;
                st.s[f + 1] = 0;
                st.s[f + 2] = GLOBAL_LEN as u32 / 2;
                st.s[f + 3] = 0;
                if let Operand::Sgpr { first, .. } = inst.src[1] {
                    st.s[first as usize] = small(r);
                }
            }
            _ => {}
        },
        _ => {}
    }
}

fn execute(inst: &Inst, st: &State) -> Outcome {
    let u = lower(inst, 0x1000);
    let mut w = Wave::<32>::new();
    w.s.copy_from_slice(&st.s);
    for (k, v) in st.v.iter().enumerate() {
        w.v[k] = *v;
    }
    w.scc = st.scc;
    w.mode = st.mode;
    w.shared_base_hi = 0x1000;
    w.private_base_hi = 0x2000;
    let mut mem = FlatMemory::new();
    if !st.mem.is_empty() {
        mem.map(GLOBAL, GLOBAL_LEN, true).unwrap();
        mem.write_bytes(GLOBAL, &st.mem).unwrap();
    }
    let mut lds = Lds::new(st.lds.len() as u32);
    lds.write(0, &st.lds).unwrap();
    let result = {
        let spans = Spans::default();
        let mut env = Env::new(&mem, &mut lds, &NoServices, &spans);
        step32(&mut w, &u, &mut env).map_err(|f| match *f {
            Fault::Memory { lane, address, .. } => format!("fault lane {lane} at {address:#x}"),
            Fault::Trap(c) => format!("trap {c}"),
            Fault::Unsupported => "unsupported".into(),
        })
    };
    let mut l = vec![0u8; st.lds.len()];
    lds.read(0, &mut l).unwrap();
    Outcome {
        result,
        state: State {
            s: w.s.to_vec(),
            v: w.v.to_vec(),
            scc: w.scc,
            mode: w.mode,
            trapsts: w.trapsts,
            flat_scratch: w.flat_scratch,
            lds: l,
            mem: if st.mem.is_empty() {
                vec![]
            } else {
                mem.read_bytes(GLOBAL, GLOBAL_LEN as usize).unwrap()
            },
        },
    }
}

fn get(st: &State, r: Reg) -> Vec<u32> {
    match r {
        Reg::S(n) => vec![st.s[n as usize]],
        Reg::V(n) => st.v[n as usize].to_vec(),
    }
}

fn set_random(st: &mut State, r: Reg, rng: &mut Rng) {
    match r {
        Reg::S(n) => st.s[n as usize] = rng.next(),
        Reg::V(n) => st.v[n as usize] = std::array::from_fn(|_| rng.next()),
    }
}

/// Sources an instruction may legitimately ignore with random inputs (by mnemonic prefix).
const IGNORES_A_SOURCE: &[&str] = &[
    // Constant compares, and NaN tests that random values do not turn.
    "v_cmp_o_",
    "v_cmp_u_",
    "v_cmpx_o_",
    "v_cmpx_u_",
    "v_cmp_f_",
    "v_cmp_t_",
    "v_cmp_tru_",
    "v_cmpx_f_",
    "v_cmpx_t_",
    "v_cmpx_tru_",
    // Wave32: lanes 32-63 do not exist.
    "v_mbcnt_hi_u32_b32",
    // SCC picks one of the two.
    "s_cselect_",
    "s_cmov_",
    // Random compare values never match, and a 64-bit compare rarely turns on its low dword.
    "buffer_atomic_cmpswap",
    "buffer_atomic_fcmpswap",
    "global_atomic_cmpswap",
    "global_atomic_fcmpswap",
    "flat_atomic_cmpswap",
    "flat_atomic_fcmpswap",
    "ds_cmpst",
    // A random register is never the immediate.
    "s_cmpk_eq_",
    "s_cmpk_lg_",
    // Waits name a counter register they never read here.
    "s_waitcnt_",
];

/// Forms that accumulate into their destination.
const READS_DESTINATION: &[&str] = &[
    "v_fmac_",
    "v_mac_",
    "v_dot2c_",
    "v_dot4c_",
    "v_pk_fmac_",
    "s_addk_",
    "s_mulk_",
    "v_swap_b32",
];

/// Forms that keep part of their destination (lanes, halves, bits) or write it only
/// conditionally.
const PARTIAL_WRITES: &[&str] = &[
    "v_writelane_",
    "v_permlane",
    "s_cmov",
    "s_bitset",
    "v_cmpx_",
    "v_fma_mix",
    "ds_read2st64_b64",
    "v_cvt_pk_",
    "v_cvt_pknorm",
    "v_cvt_pkrtz",
    "v_pack_",
];

/// Reads of registers the instruction does not name (implicit operands).
const IMPLICIT_READS: &[&str] = &["v_div_fmas_"];

fn main_dsts(inst: &Inst, name: &str) -> BTreeSet<Reg> {
    let mut d: BTreeSet<Reg> = inst.dst.iter().flat_map(|o| regs(*o)).collect();
    if name.contains("saveexec") || name.contains("wrexec") {
        d.insert(Reg::S(EXEC));
        d.insert(Reg::S(127));
    }
    // v_swap_b32 writes both of its operands.
    if name == "v_swap_b32" {
        d.extend(regs(inst.src[0]));
    }
    d.remove(&Reg::S(NULL));
    d
}

fn check(bytes: &[u8], seed: u64) -> Vec<String> {
    let inst = match decode(bytes, 0x1000) {
        Ok(i) => i,
        Err(e) => return vec![format!("does not decode: {e}")],
    };
    let name = inst.op.name();
    let mut rng = Rng(seed | 1);
    let base_state = random_state(&mut rng, &inst);
    let base = execute(&inst, &base_state);
    if base.result == Err("unsupported".into()) {
        return vec!["unsupported".into()];
    }
    let mut problems = vec![];
    if let Err(e) = &base.result {
        return vec![format!("faults with in-range operands: {e}")];
    }
    let srcs: BTreeSet<Reg> = inst.src.iter().flat_map(|o| regs(*o)).collect();
    let dsts = main_dsts(&inst, name);

    // Writes: only the destinations, and all of them.
    for n in 0..128u8 {
        let r = Reg::S(n);
        if base_state.s[n as usize] != base.state.s[n as usize] && !dsts.contains(&r) {
            problems.push(format!("writes s-encoding {n}, not a destination"));
        }
    }
    for n in 0..256u16 {
        let r = Reg::V(n);
        if base_state.v[n as usize] != base.state.v[n as usize] && !dsts.contains(&r) {
            problems.push(format!("writes v{n}, not a destination"));
        }
    }
    for &r in &dsts {
        // EXEC may keep its value (v_cmpx_tru, s_or_saveexec of all lanes), a bit may
        // already be set, and a 32-bit compare-and-swap returns one dword of its pair.
        let may_keep = matches!(r, Reg::S(EXEC | 127))
            || name.starts_with("s_bitset")
            || (name.contains("cmpswap") && inst.encoding == Encoding::Mubuf);
        if !may_keep && get(&base_state, r) == get(&base.state, r) {
            problems.push(format!("does not write its destination {r:?}"));
        }
    }

    // Every named source operand matters.
    let operands: Vec<Vec<Reg>> = {
        let mut v: Vec<Vec<Reg>> = vec![];
        for o in inst.src {
            let rs: Vec<Reg> = regs(o)
                .into_iter()
                .filter(|r| ![Reg::S(NULL), Reg::S(127)].contains(r))
                .collect();
            if !rs.is_empty() && !v.contains(&rs) {
                v.push(rs);
            }
        }
        v
    };
    if !IGNORES_A_SOURCE.iter().any(|p| name.starts_with(p)) {
        for (k, op) in operands.iter().enumerate() {
            let other_op = operands
                .iter()
                .enumerate()
                .find(|(j, _)| *j != k)
                .map(|x| x.1);
            let matters = (0..16u64).any(|t| {
                // A fresh state each time (a shift count or a select can hide a source).
                let mut rng = Rng(seed ^ (t + 1).wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
                let st0 = random_state(&mut rng, &inst);
                let out0 = execute(&inst, &st0);
                let mut st = st0.clone();
                for (i, &r) in op.iter().enumerate() {
                    match (t % 3, other_op) {
                        // Equal to another source, so that compares can turn.
                        (1, Some(o)) => {
                            let v = get(&st0, o[i % o.len()]);
                            match r {
                                Reg::S(n) => st.s[n as usize] = v[0],
                                Reg::V(n) => {
                                    st.v[n as usize] = std::array::from_fn(|l| v[l % v.len()])
                                }
                            }
                        }
                        // Small, for shift counts and lane selects.
                        (2, _) => match r {
                            Reg::S(n) => st.s[n as usize] = rng.next() & 0x3f,
                            Reg::V(n) => {
                                st.v[n as usize] = std::array::from_fn(|_| rng.next() & 0x3f)
                            }
                        },
                        _ => set_random(&mut st, r, &mut rng),
                    }
                }
                let mut other = execute(&inst, &st);
                // The changed registers themselves do not count, unless they are also written.
                for &r in op {
                    if !dsts.contains(&r) {
                        match r {
                            Reg::S(n) => other.state.s[n as usize] = out0.state.s[n as usize],
                            Reg::V(n) => other.state.v[n as usize] = out0.state.v[n as usize],
                        }
                    }
                }
                other != out0
            });
            if !matters {
                problems.push(format!("ignores its source {:?}", op));
            }
        }
    }

    // Accumulating forms read their destination (a slot no source names): its old value
    // must matter; for the rest, a full-width write under a full EXEC, it must not.
    let dst_ops: Vec<Vec<Reg>> = inst
        .dst
        .iter()
        .map(|o| regs(*o))
        .filter(|r| !r.is_empty() && !r.iter().any(|x| matches!(x, Reg::S(EXEC | NULL | 127))))
        .collect();
    let reads_dst = READS_DESTINATION.iter().any(|p| name.starts_with(p));
    let partial = name.contains("16")
        || name.contains("8")
        || PARTIAL_WRITES.iter().any(|p| name.starts_with(p))
        || inst.encoding == Encoding::Mubuf;
    if reads_dst || !partial {
        for op in dst_ops.iter().take(1) {
            let matters = (0..8u64).any(|t| {
                let mut rng = Rng(seed ^ (t + 7).wrapping_mul(0x9e37_79b9) | 1);
                let st0 = random_state(&mut rng, &inst);
                let out0 = execute(&inst, &st0);
                let mut st = st0.clone();
                for &r in op {
                    set_random(&mut st, r, &mut rng);
                }
                execute(&inst, &st) != out0
            });
            if reads_dst && !matters {
                problems.push(format!("ignores the old value of its destination {op:?}"));
            }
            if !reads_dst && matters {
                problems.push(format!(
                    "depends on the old value of its destination {op:?}"
                ));
            }
        }
    }

    // Unnamed registers do not matter.
    if !IMPLICIT_READS.iter().any(|p| name.starts_with(p)) {
        let mut st = base_state.clone();
        for n in 0..128u8 {
            let r = Reg::S(n);
            if !srcs.contains(&r) && !dsts.contains(&r) && ![EXEC, 127, M0, NULL].contains(&n) {
                set_random(&mut st, r, &mut rng);
            }
        }
        for n in 0..256u16 {
            let r = Reg::V(n);
            if !srcs.contains(&r) && !dsts.contains(&r) {
                let v = std::array::from_fn(|_| {
                    let x = rng.next();
                    if inst.encoding == Encoding::Ds {
                        x & 0x7ff8
                    } else {
                        x
                    }
                });
                st.v[n as usize] = v;
            }
        }
        let other = execute(&inst, &st);
        let same = other.result == base.result
            && other.state.lds == base.state.lds
            && other.state.mem == base.state.mem
            && other.state.scc == base.state.scc
            && other.state.mode == base.state.mode
            && dsts
                .iter()
                .all(|&r| get(&other.state, r) == get(&base.state, r));
        if !same {
            problems.push("depends on registers it does not name".into());
        }
    }
    problems
}

#[test]
fn handlers_use_the_operands_the_decoder_fills() {
    let mut failures = vec![];
    let mut checked = 0;
    let only = std::env::var("OPERAND_SLOTS_ONLY").ok();
    for (i, line) in DATA.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (hex, asm) = line.split_once(" | ").expect("hex | asm");
        if only.as_deref().is_some_and(|o| !asm.starts_with(o)) {
            continue;
        }
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap())
            .collect();
        let mut padded = bytes.clone();
        padded.resize(bytes.len() + 8, 0);
        let problems = check(&padded, 0x9e37_79b9_7f4a_7c15 ^ (i as u64 * 7919));
        if problems == ["unsupported"] {
            continue;
        }
        for p in problems {
            failures.push(format!("{asm}: {p}"));
        }
        checked += 1;
    }
    eprintln!("{checked} instruction words checked");
    assert!(checked > 100);
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---- Reference values for the forms where operands are easy to confuse ----

/// Decodes `hex` (the instruction's bytes in order), lowers it and runs it once on `w`.
fn run_bytes(hex: &str, w: &mut Wave<32>, mem: &FlatMemory, lds: &mut Lds) -> Result<Step, String> {
    let mut bytes: Vec<u8> = (0..hex.len() / 2)
        .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap())
        .collect();
    bytes.resize(bytes.len() + 8, 0);
    let inst = decode(&bytes, 0x1000).expect("decodes");
    let u = lower(&inst, 0x1000);
    let spans = Spans::default();
    let mut env = Env::new(mem, lds, &NoServices, &spans);
    step32(w, &u, &mut env).map_err(|f| format!("{:?}", std::mem::discriminant(&*f)))
}

fn ref_wave() -> Wave<32> {
    let mut w = Wave::<32>::new();
    w.s[EXEC as usize] = u32::MAX;
    w.mode = 0x3f0 | 1 << 8 | 1 << 9;
    w.shared_base_hi = 0x1000;
    w.private_base_hi = 0x2000;
    for r in 0..16 {
        w.v[r] = std::array::from_fn(|l| (r as u32) << 16 | l as u32);
    }
    w
}

fn lane_ids() -> [u32; LANES] {
    std::array::from_fn(|l| l as u32)
}

#[test]
fn lds_operands_take_their_isa_roles() {
    let mem = FlatMemory::new();
    let mut lds = Lds::new(0x4000);
    let mut w = ref_wave();
    w.v[1] = lane_ids().map(|l| 0x100 + 64 * l);
    // ds_write2_b32 v1, v2, v3 offset0:2 offset1:5: data0 at addr + 2*4, data1 at addr + 5*4.
    run_bytes("020538d801020300", &mut w, &mem, &mut lds).unwrap();
    for l in 0..LANES as u32 {
        let a = 0x100 + 64 * l;
        assert_eq!(lds.read_u32(a + 8).unwrap(), w.v[2][l as usize]);
        assert_eq!(lds.read_u32(a + 20).unwrap(), w.v[3][l as usize]);
    }
    // ds_read2_b32 v[4:5], v1 offset0:5 offset1:2: v4 from offset0, v5 from offset1.
    run_bytes("0502dcd801000004", &mut w, &mem, &mut lds).unwrap();
    assert_eq!((w.v[4], w.v[5]), (w.v[3], w.v[2]));
    // ds_read2st64_b32 v[4:5], v1 offset1:1: the second dword 64 dwords on.
    lds.write(0x100 + 256, &0xabcd_u32.to_le_bytes()).unwrap();
    run_bytes("0001e0d801000004", &mut w, &mem, &mut lds).unwrap();
    assert_eq!(
        (w.v[4][0], w.v[5][0]),
        (lds.read_u32(0x100).unwrap(), 0xabcd)
    );
    // ds_cmpst_rtn_b32 v4, v1, v2, v3 offset:4: data0 (v2) is compared, data1 (v3) stored.
    for l in 0..LANES {
        let a = 0x100 + 64 * l as u32 + 4;
        let old = if l % 2 == 0 { w.v[2][l] } else { !w.v[2][l] };
        lds.write(a, &old.to_le_bytes()).unwrap();
    }
    run_bytes("0400c0d801020304", &mut w, &mem, &mut lds).unwrap();
    for l in 0..LANES {
        let a = 0x100 + 64 * l as u32 + 4;
        let (old, new) = if l % 2 == 0 {
            (w.v[2][l], w.v[3][l])
        } else {
            (!w.v[2][l], !w.v[2][l])
        };
        assert_eq!(
            (w.v[4][l], lds.read_u32(a).unwrap()),
            (old, new),
            "lane {l}"
        );
    }
    // ds_mskor_b32 v1, v2, v3: (old & ~data0) | data1.
    let before: Vec<u32> = (0..LANES)
        .map(|l| lds.read_u32(0x100 + 64 * l as u32).unwrap())
        .collect();
    run_bytes("000030d801020300", &mut w, &mem, &mut lds).unwrap();
    for (l, old) in before.iter().enumerate() {
        let want = (old & !w.v[2][l]) | w.v[3][l];
        assert_eq!(lds.read_u32(0x100 + 64 * l as u32).unwrap(), want);
    }
    // ds_bpermute_b32 v4, v1, v2: lane l reads v2 of lane v1[l] / 4; ds_permute_b32 sends.
    w.v[1] = lane_ids().map(|l| 4 * ((l + 3) % 32));
    run_bytes("0000ccda01020004", &mut w, &mem, &mut lds).unwrap();
    assert_eq!(w.v[4], std::array::from_fn(|l| w.v[2][(l + 3) % 32]));
    run_bytes("0000c8da01020004", &mut w, &mem, &mut lds).unwrap();
    assert_eq!(w.v[4], std::array::from_fn(|l| w.v[2][(l + 29) % 32]));
}

#[test]
fn vector_memory_operands_take_their_isa_roles() {
    let mut mem = FlatMemory::new();
    mem.map(GLOBAL, GLOBAL_LEN, true).unwrap();
    let mut lds = Lds::new(0);
    let mut w = ref_wave();
    let word = |mem: &FlatMemory, a: u64| {
        u32::from_le_bytes(mem.read_bytes(a, 4).unwrap().try_into().unwrap())
    };
    // global_atomic_cmpswap v4, v[6:7], v[2:3], off offset:8 glc: data[0] (v2) is the new
    // value, data[1] (v3) the compared one; v4 gets the old value.
    w.v[6] = lane_ids().map(|l| GLOBAL as u32 + 16 * l);
    w.v[7] = [0; LANES];
    for l in 0..LANES {
        let old = if l % 2 == 0 { w.v[3][l] } else { !w.v[3][l] };
        mem.write_bytes(GLOBAL + 16 * l as u64 + 8, &old.to_le_bytes())
            .unwrap();
    }
    run_bytes("0880c5dc06027d04", &mut w, &mem, &mut lds).unwrap();
    for l in 0..LANES {
        let a = GLOBAL + 16 * l as u64 + 8;
        let (old, new) = if l % 2 == 0 {
            (w.v[3][l], w.v[2][l])
        } else {
            (!w.v[3][l], !w.v[3][l])
        };
        assert_eq!((w.v[4][l], word(&mem, a)), (old, new), "global lane {l}");
    }
    // The same through flat_atomic_cmpswap v4, v[6:7], v[2:3] glc (no offset).
    for l in 0..LANES {
        mem.write_bytes(GLOBAL + 16 * l as u64, &w.v[3][l].to_le_bytes())
            .unwrap();
    }
    run_bytes("0000c5dc06027d04", &mut w, &mem, &mut lds).unwrap();
    for l in 0..LANES {
        assert_eq!(
            word(&mem, GLOBAL + 16 * l as u64),
            w.v[2][l],
            "flat lane {l}"
        );
        assert_eq!(w.v[4][l], w.v[3][l]);
    }
    // global_atomic_cmpswap v4, v1, v[2:3], s[10:11] offset:8 glc: saddr + vaddr + offset.
    w.s[10] = GLOBAL as u32 + 0x1000;
    w.s[11] = 0;
    w.v[1] = lane_ids().map(|l| 32 * l);
    for l in 0..LANES {
        let a = GLOBAL + 0x1000 + 32 * l as u64 + 8;
        mem.write_bytes(a, &w.v[3][l].to_le_bytes()).unwrap();
    }
    run_bytes("0880c5dc01020a04", &mut w, &mem, &mut lds).unwrap();
    for l in 0..LANES {
        let a = GLOBAL + 0x1000 + 32 * l as u64 + 8;
        assert_eq!((w.v[4][l], word(&mem, a)), (w.v[3][l], w.v[2][l]));
    }
    // global_load_dword v4, v1, s[10:11] offset:-4.
    run_bytes("fc8f30dc01000a04", &mut w, &mem, &mut lds).unwrap();
    for l in 0..LANES {
        let a = GLOBAL + 0x1000 + 32 * l as u64 - 4;
        assert_eq!(w.v[4][l], word(&mem, a));
    }
    // buffer_atomic_cmpswap v[2:3], v[8:9], s[12:15], s5 idxen offen offset:4 glc: v8 is the
    // index, v9 the offset; v2 the new value, v3 the compared one; v2 gets the old value.
    w.s[12] = GLOBAL as u32 + 0x2000;
    w.s[13] = 64 << 16; // stride 64
    w.s[14] = 0x4000;
    w.s[15] = 0;
    w.s[5] = 0x100;
    w.v[8] = lane_ids();
    w.v[9] = lane_ids().map(|l| 8 * (l % 4));
    let addr = |l: usize| GLOBAL + 0x2000 + 0x100 + 64 * l as u64 + 8 * (l as u64 % 4) + 4;
    for l in 0..LANES {
        mem.write_bytes(addr(l), &w.v[3][l].to_le_bytes()).unwrap();
    }
    let (new, cmp) = (w.v[2], w.v[3]);
    run_bytes("0470c4e008020305", &mut w, &mem, &mut lds).unwrap();
    for l in 0..LANES {
        assert_eq!(
            (w.v[2][l], word(&mem, addr(l))),
            (cmp[l], new[l]),
            "buffer lane {l}"
        );
        assert_eq!(w.v[3][l], cmp[l], "only the first dword returns");
    }
    // buffer_store_dword v2, v8, s[12:15], s5 offen offset:4: v8 is the offset here.
    w.v[8] = lane_ids().map(|l| 4 * l);
    run_bytes("041070e008020305", &mut w, &mem, &mut lds).unwrap();
    for l in 0..LANES {
        let a = GLOBAL + 0x2000 + 0x100 + 4 * l as u64 + 4;
        assert_eq!(word(&mem, a), w.v[2][l], "store lane {l}");
    }
}

#[test]
fn scalar_memory_operands_take_their_isa_roles() {
    let mut mem = FlatMemory::new();
    mem.map(GLOBAL, GLOBAL_LEN, true).unwrap();
    let bytes: Vec<u8> = (0..GLOBAL_LEN).map(|i| (i * 7 + i / 256) as u8).collect();
    mem.write_bytes(GLOBAL, &bytes).unwrap();
    let word = |a: u64| u32::from_le_bytes(mem.read_bytes(a, 4).unwrap().try_into().unwrap());
    let mut lds = Lds::new(0);
    let mut w = ref_wave();
    w.s[10] = GLOBAL as u32 + 0x100;
    w.s[11] = 0;
    w.s[5] = 0x40;
    // s_load_dword s20, s[10:11], s5 and s_load_dword s20, s[10:11], 0x8.
    run_bytes("050500f40000000a", &mut w, &mem, &mut lds).unwrap();
    assert_eq!(w.s[20], word(GLOBAL + 0x140));
    run_bytes("050500f4080000fa", &mut w, &mem, &mut lds).unwrap();
    assert_eq!(w.s[20], word(GLOBAL + 0x108));
    // s_buffer_load_dword s20, s[12:15], s5: descriptor base + soffset.
    w.s[12] = GLOBAL as u32 + 0x200;
    w.s[13] = 0;
    w.s[14] = 0x1000;
    w.s[15] = 0;
    run_bytes("060520f40000000a", &mut w, &mem, &mut lds).unwrap();
    assert_eq!(w.s[20], word(GLOBAL + 0x240));
}

#[test]
fn alu_operands_take_their_isa_roles() {
    let mem = FlatMemory::new();
    let mut lds = Lds::new(0);
    let mut w = ref_wave();
    let mut run = |w: &mut Wave<32>, hex: &str| run_bytes(hex, w, &mem, &mut lds).unwrap();
    w.v[1] = lane_ids().map(|l| 0xffff_fff0u32.wrapping_add(l * 0x0101_0101));
    w.v[2] = lane_ids().map(|l| 0x10 + 3 * l);
    w.v[3] = lane_ids().map(|l| (l as f32 + 0.5).to_bits());
    let (a, b) = (w.v[1], w.v[2]);
    let carry = |f: &dyn Fn(u32, u32) -> bool| {
        (0..LANES).fold(0u32, |m, l| m | u32::from(f(a[l], b[l])) << l)
    };
    // v_add_co_u32 v4, s20, v1, v2 / v_sub_co_u32: carry and borrow masks in s20.
    run(&mut w, "04140fd701050200");
    assert_eq!(w.v[4], std::array::from_fn(|l| a[l].wrapping_add(b[l])));
    assert_eq!(w.s[20], carry(&|x, y| x.checked_add(y).is_none()));
    run(&mut w, "041410d701050200");
    assert_eq!(w.v[4], std::array::from_fn(|l| a[l].wrapping_sub(b[l])));
    assert_eq!(w.s[20], carry(&|x, y| x < y));
    // v_add_co_ci_u32_e32 v4, vcc_lo, v1, v2, vcc_lo.
    w.s[106] = 0x5555_5555;
    run(&mut w, "01050850");
    let want: [u32; LANES] =
        std::array::from_fn(|l| a[l].wrapping_add(b[l]).wrapping_add((l % 2 == 0) as u32));
    assert_eq!(w.v[4], want);
    // v_sub_co_ci_u32_e64 v4, s20, v1, v2, s21: S0 - S1 - borrow-in from s21.
    w.s[21] = 0xffff_0000;
    run(&mut w, "041429d501055600");
    let want: [u32; LANES] =
        std::array::from_fn(|l| a[l].wrapping_sub(b[l]).wrapping_sub((l >= 16) as u32));
    assert_eq!(w.v[4], want);
    // v_mad_u64_u32 v[4:5], s20, v1, v2, v[6:7].
    w.v[6] = lane_ids().map(|l| u32::MAX - l);
    w.v[7] = lane_ids().map(|l| if l < 8 { u32::MAX } else { l });
    run(&mut w, "041476d501051a04");
    let mut cout = 0;
    for l in 0..LANES {
        let c = u128::from(w.v[6][l]) | u128::from(w.v[7][l]) << 32;
        let p = u128::from(a[l]) * u128::from(b[l]) + c;
        assert_eq!(u64::from(w.v[4][l]) | u64::from(w.v[5][l]) << 32, p as u64);
        cout |= u32::from(p >> 64 != 0) << l;
    }
    assert_eq!(w.s[20], cout);
    // v_cndmask_b32 e32 (VCC) and e64 (s20): mask ? src1 : src0.
    w.s[106] = 0x0f0f_0f0f;
    run(&mut w, "01050802");
    assert_eq!(
        w.v[4],
        std::array::from_fn(|l| if 0x0f0f_0f0fu32 >> l & 1 != 0 {
            b[l]
        } else {
            a[l]
        })
    );
    w.s[20] = 0xff00_00ff;
    run(&mut w, "040001d501055200");
    assert_eq!(
        w.v[4],
        std::array::from_fn(|l| if 0xff00_00ffu32 >> l & 1 != 0 {
            b[l]
        } else {
            a[l]
        })
    );
    // Compares: e32 to VCC, e64 to s20, v_cmpx to EXEC only.
    let gt = carry(&|x, y| x > y);
    run(&mut w, "0105887d");
    assert_eq!(w.s[106], gt);
    w.s[20] = 0;
    run(&mut w, "1400c4d401050200");
    assert_eq!(w.s[20], gt);
    w.s[106] = 0x1234;
    run(&mut w, "0105a87d");
    assert_eq!((w.s[EXEC as usize], w.s[106]), (gt, 0x1234));
    w.s[EXEC as usize] = u32::MAX;
    run(&mut w, "7e00d4d401050200");
    assert_eq!((w.s[EXEC as usize], w.s[106]), (gt, 0x1234));
    w.s[EXEC as usize] = u32::MAX;
    // v_readlane_b32 s20, v1, s5; v_writelane_b32 v4, s20, s5; v_readfirstlane_b32 s20, v1.
    w.s[5] = 13;
    run(&mut w, "140060d7010b0000");
    assert_eq!(w.s[20], a[13]);
    w.s[20] = 0xcafe;
    w.v[4] = [7; LANES];
    run(&mut w, "040061d7140a0000");
    assert_eq!(
        w.v[4],
        std::array::from_fn(|l| if l == 13 { 0xcafe } else { 7 })
    );
    w.s[EXEC as usize] = 0xffff_ff00;
    run(&mut w, "0105287e");
    assert_eq!(w.s[20], a[8]);
    // s_and_saveexec_b32 s20, s21: s20 = old EXEC, EXEC = s21 & EXEC; andn2: s21 & ~EXEC.
    w.s[21] = 0x0ff0_0ff0;
    run(&mut w, "153c94be");
    assert_eq!((w.s[20], w.s[EXEC as usize]), (0xffff_ff00, 0x0ff0_0f00));
    run(&mut w, "153f94be");
    assert_eq!(
        (w.s[20], w.s[EXEC as usize]),
        (0x0ff0_0f00, 0x0ff0_0ff0 & !0x0ff0_0f00)
    );
    w.s[EXEC as usize] = u32::MAX;
    // SOPK: the destination is also the source.
    w.s[20] = 1000;
    run(&mut w, "341294b7"); // s_addk_i32 s20, 0x1234
    assert_eq!(w.s[20], 1000 + 0x1234);
    run(&mut w, "f3ff14b8"); // s_mulk_i32 s20, 0xfff3 (-13)
    assert_eq!(w.s[20] as i32, (1000 + 0x1234) * -13);
    w.scc = false;
    run(&mut w, "770014b1"); // s_cmovk_i32 s20, 0x77 (SCC clear: no move)
    assert_eq!(w.s[20] as i32, (1000 + 0x1234) * -13);
    w.scc = true;
    run(&mut w, "770014b1");
    assert_eq!(w.s[20], 0x77);
    run(&mut w, "f0ff94b2"); // s_cmpk_gt_i32 s20, 0xfff0 (-16)
    assert!(w.scc);
    // s_setreg_b32 hwreg(HW_REG_MODE, 4, 4), s21 then s_getreg_b32 s20, hwreg(HW_REG_MODE, 4, 4).
    w.s[21] = 0x5;
    run(&mut w, "011995b9");
    assert_eq!(w.mode >> 4 & 0xf, 5);
    run(&mut w, "011914b9");
    assert_eq!(w.s[20], 5);
    w.mode = 0x3f0 | 1 << 8 | 1 << 9;
    // v_fmamk_f32 v4, v1, K, v2 = v1 * K + v2; v_fmaak_f32 v4, v1, v2, K = v1 * v2 + K.
    let k = f32::from_bits(0x40490fdb);
    w.v[1] = lane_ids().map(|l| (l as f32 * 0.25 - 3.0).to_bits());
    w.v[2] = lane_ids().map(|l| (l as f32 * 1.5 + 0.125).to_bits());
    let f = |r: usize, l: usize| f32::from_bits(w.v[r][l]);
    let mk: [u32; LANES] = std::array::from_fn(|l| f(1, l).mul_add(k, f(2, l)).to_bits());
    let ak: [u32; LANES] = std::array::from_fn(|l| f(1, l).mul_add(f(2, l), k).to_bits());
    let sub: [u32; LANES] = std::array::from_fn(|l| (f(1, l) - f(2, l)).to_bits());
    let subrev: [u32; LANES] = std::array::from_fn(|l| (f(2, l) - f(1, l)).to_bits());
    run(&mut w, "01050858db0f4940");
    assert_eq!(w.v[4], mk);
    run(&mut w, "0105085adb0f4940");
    assert_eq!(w.v[4], ak);
    run(&mut w, "01050808"); // v_sub_f32_e32 v4, v1, v2
    assert_eq!(w.v[4], sub);
    run(&mut w, "040005d501050200"); // v_subrev_f32_e64 v4, v1, v2
    assert_eq!(w.v[4], subrev);
    // v_lshlrev_b64 v[4:5], v1, v[6:7]: the 32-bit shift count comes first.
    w.v[1] = lane_ids().map(|l| l + 1);
    run(&mut w, "0400ffd6010d0200");
    for l in 0..LANES {
        let x = u64::from(w.v[6][l]) | u64::from(w.v[7][l]) << 32;
        assert_eq!(
            u64::from(w.v[4][l]) | u64::from(w.v[5][l]) << 32,
            x << (l + 1)
        );
    }
    // SDWA and DPP keep src0 and src1 apart: v_sub_nc_u32 v4, v1, v2.
    w.v[1] = lane_ids().map(|l| 0x0100_0000 * l + 0x0003_0000);
    w.v[2] = lane_ids().map(|l| 0x100 + l);
    run(&mut w, "f904084c01060500"); // src0_sel:WORD_1 src1_sel:BYTE_0
    assert_eq!(
        w.v[4],
        std::array::from_fn(|l| (w.v[1][l] >> 16).wrapping_sub(w.v[2][l] & 0xff))
    );
    run(&mut w, "fa04084c01b100ff"); // quad_perm:[1,0,3,2] on src0
    assert_eq!(
        w.v[4],
        std::array::from_fn(|l| w.v[1][l ^ 1].wrapping_sub(w.v[2][l]))
    );
    // SOP2 order: s_sub_u32 s20, s21, s22; s_lshl_b64 s[20:21], s[22:23], s24.
    w.s[21] = 100;
    w.s[22] = 30;
    run(&mut w, "15169480");
    assert_eq!(w.s[20], 70);
    w.s[22] = 0x8000_0001;
    w.s[23] = 0;
    w.s[24] = 4;
    run(&mut w, "1618948f");
    assert_eq!((w.s[20], w.s[21]), (0x10, 0x8));
}
