#!/usr/bin/env python3
"""Generates emu/src/isa/gfx1030_tables.rs: the gfx1030 opcode space, read from LLVM.

For every encoding the emulator decodes, every value of the opcode field is turned into an
instruction word whose operand fields hold distinct registers, and llvm-mc-19 disassembles them
all in one run. From each answer we keep the mnemonic and an operand template: the printed
operands with each field replaced by a placeholder naming it and its width in dwords
(`{vdst:2}` for `v[20:21]`), and fixed text (implicit `vcc_lo`, `off`) kept as is. Opcodes LLVM
does not decode are absent. The emulator's decoder extracts fields by encoding (by hand, from
the ISA's field layout), looks the opcode up here, and its printer fills the template.

Usage: scripts/gen-emu-tables.py [--check]   (LLVM_MC overrides llvm-mc-19)
--check regenerates into memory and fails if the committed file differs.
Deterministic: the output depends only on llvm-mc's answers.
"""
import json
import os
import re
import subprocess
import sys

LLVM_MC = os.environ.get("LLVM_MC", "llvm-mc-19")
OUT = os.path.join(os.path.dirname(__file__), "..", "emu", "src", "isa", "gfx1030_tables.rs")

LITERAL = 0x12345678   # appended after every candidate: consumed only by ops taking a literal


def le_bytes(words):
    return ",".join("0x%02x" % ((w >> (8 * i)) & 0xFF) for w in words for i in range(4))


def marker(i):
    """`s_movk_i32 s0, <i>` separates candidates (no probe uses s0 with such an immediate)."""
    return (0b1011 << 28) | (i & 0xFFFF)


def marker_text(i):
    return "s_movk_i32 s0, 0x%x" % (i & 0xFFFF)


def disassemble(cands):
    """Each candidate (a list of 32-bit words) -> (text, length in bytes) or None."""
    lines = []
    for i, words in enumerate(cands):
        lines.append(le_bytes(words + [LITERAL]))
        lines.append(le_bytes([marker(i)]))
    run = subprocess.run(
        [LLVM_MC, "--disassemble", "-triple=amdgcn", "-mcpu=gfx1030", "-show-encoding"],
        input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    results = [None] * len(cands)
    pending = []
    index = 0
    for line in run.stdout.splitlines():
        line = line.strip()
        if not line or line == ".text":
            continue
        text, _, enc = line.partition("; encoding: [")
        text = text.strip()
        nbytes = enc.count(",") + 1
        if index < len(cands) and nbytes == 4 and text == marker_text(index):
            if True:
                first = pending[0] if pending else None
                if first is not None:
                    want = le_bytes(cands[index][:1])
                    if first[2].startswith(want):
                        results[index] = (first[0], first[1])
                pending = []
                index += 1
                continue
        pending.append((text, nbytes, enc.rstrip("]")))
    return results


# Distinct field values: scalar fields multiples of 4 (wider tuples are aligned), vector fields
# far apart so `v[8:11]` and `v12` cannot be confused. A field that is not used by an opcode must
# be zero for LLVM to accept the word, so every encoding is probed with several configurations,
# from all fields set to none, and an opcode takes the first configuration that decodes with no
# register left unexplained.
UNEXPLAINED = re.compile(r"\b[sv]\d+\b|\b[sv]\[\d+:\d+\]|Invalid|ttmp")


def templatize(text, fields):
    """`mnemonic ops` -> (mnemonic, template, widths); fields maps (kind, number) -> name."""
    mnemonic, _, ops = text.partition(" ")
    widths = {}

    def reg(m):
        if m.group(1):
            kind, lo, hi = m.group(1), int(m.group(2)), int(m.group(3))
        else:
            kind, lo = m.group(4), int(m.group(5))
            hi = lo
        name = fields.get((kind, lo))
        if name is None:
            return m.group(0)
        widths[name] = hi - lo + 1
        return "{%s}" % name

    ops = re.sub(r"\b([sv])\[(\d+):(\d+)\]|\b([sv])(\d+)\b", reg, ops)
    ops = ops.replace("0x%x" % LITERAL, "{lit}")
    # Keep the operands only: modifiers (`dst_sel:DWORD`, `offen`, `op_sel_hi:[1,1,0]`) are
    # printed by the emulator from the instruction's fields.
    kept = []
    for tok in ops.split(", "):
        head = tok.split(" ")[0]
        if ":" in head and not head.startswith("{"):
            break
        kept.append(head if head.startswith("{") or head in ("off", "vcc_lo", "vcc", "exec_lo") else tok)
        if " " in tok:
            break
    ops = ", ".join(kept)
    return mnemonic, ops, widths


def enumerate_configs(count, configs):
    """configs: [(build(op) -> words, {(kind, number): field})], most fields first."""
    out = {}
    remaining = list(range(count))
    for build, fields in configs:
        if not remaining:
            break
        cands = [build(op) for op in remaining]
        for op, words, res in zip(list(remaining), cands, disassemble(cands)):
            if res is None:
                continue
            text, nbytes = res
            mnemonic, template, widths = templatize(text, fields)
            if UNEXPLAINED.search(template):
                continue
            out[op] = {"mnemonic": mnemonic, "template": template, "widths": widths,
                       "literal": nbytes > 4 * len(words)}
            remaining.remove(op)
    return out


def subsets(values):
    """Every subset of the (field, value) pairs, largest first, in a stable order."""
    n = len(values)
    masks = sorted(range(1 << n), key=lambda m: (-bin(m).count("1"), m))
    return [[values[i] for i in range(n) if m >> i & 1] for m in masks]


def both(fields):
    """Field map reading each value as an SGPR or a VGPR (VOP operands hold either)."""
    out = {}
    for name, v in fields.items():
        out[("s", v)] = name
        out[("v", v)] = name
    return out


def gen():
    t = {}
    sf = {"sdst": 20, "ssrc0": 8, "ssrc1": 12}
    sfm = {("s", v): k for k, v in sf.items()}

    def sop(build, names):
        configs = []
        for sub in subsets([(n, sf[n]) for n in names]):
            d = dict(sub)
            configs.append((lambda op, d=d: build(op, d.get("sdst", 0), d.get("ssrc0", 0), d.get("ssrc1", 0)), sfm))
        return configs

    t["sop2"] = enumerate_configs(0x60, sop(
        lambda op, d, a, b: [(0b10 << 30) | (op << 23) | (d << 16) | (b << 8) | a], ["sdst", "ssrc0", "ssrc1"]))
    t["sopk"] = enumerate_configs(32, sop(
        lambda op, d, a, b: [(0b1011 << 28) | (op << 23) | (d << 16) | 0x1234], ["sdst"]))
    t["sop1"] = enumerate_configs(256, sop(
        lambda op, d, a, b: [(0b101111101 << 23) | (d << 16) | (op << 8) | a], ["sdst", "ssrc0"]))
    t["sopc"] = enumerate_configs(128, sop(
        lambda op, d, a, b: [(0b101111110 << 23) | (op << 16) | (b << 8) | a], ["ssrc0", "ssrc1"]))
    t["sopp"] = enumerate_configs(128, [(lambda op: [(0b101111111 << 23) | (op << 16) | 0x0003], {}),
                                        (lambda op: [(0b101111111 << 23) | (op << 16)], {})])
    # Immediates LLVM leaves out when zero (`s_endpgm`).
    zero = enumerate_configs(128, [(lambda op: [(0b101111111 << 23) | (op << 16)], {})])
    for op, e in t["sopp"].items():
        if e["template"] and op in zero and not zero[op]["template"]:
            e["omit_zero"] = True
    # SMEM: sdata=s20, sbase=s[8:..] (the field holds sbase/2), soffset null, offset 0x10.
    smem = []
    for sub in subsets([("sdata", 20), ("sbase", 8)]):
        d = dict(sub)
        smem.append((lambda op, d=d: [(0b111101 << 26) | (op << 18) | (d.get("sdata", 0) << 6) | (d.get("sbase", 0) >> 1),
                                      (0x7D << 25) | (0x10 if "sbase" in d else 0)],
                     {("s", 20): "sdata", ("s", 8): "sbase"}))
    t["smem"] = enumerate_configs(256, smem)

    vf = {"vdst": 20, "src0": 8, "src1": 12, "src2": 16}
    vfm = both(vf)

    def vsrc(name, d):
        """A 9-bit source field: VGPR (256 + n) unless the configuration asks for an SGPR."""
        v = d.get(name)
        if v is None:
            return 0
        return v if d.get(name + "_s") else 256 + v

    def vconfigs(build, names, scalar_options=()):
        """Every subset of the fields; for each, every choice of SGPR or VGPR for the sources in
        `scalar_options` that are present."""
        configs = []
        for sub in subsets([(n, vf[n]) for n in names]):
            d = dict(sub)
            present = [o for o in scalar_options if o in d]
            for mask in range(1 << len(present)):
                d2 = dict(d)
                for i, o in enumerate(present):
                    if mask >> i & 1:
                        d2[o + "_s"] = True
                configs.append((lambda op, d=d2: build(op, d), vfm))
        return configs

    t["vop1"] = enumerate_configs(256, vconfigs(
        lambda op, d: [(0b0111111 << 25) | (d.get("vdst", 0) << 17) | (op << 9) | vsrc("src0", d)],
        ["vdst", "src0"]))
    t["vop2"] = enumerate_configs(62, vconfigs(
        lambda op, d: [(op << 25) | (d.get("vdst", 0) << 17) | (d.get("src1", 0) << 9) | vsrc("src0", d)],
        ["vdst", "src0", "src1"]))
    t["vopc"] = enumerate_configs(256, vconfigs(
        lambda op, d: [(0b0111110 << 25) | (op << 17) | (d.get("src1", 0) << 9) | vsrc("src0", d)],
        ["src0", "src1"]))

    def vop3(op, d, sdst=0):
        w0 = (0b110101 << 26) | (op << 16) | (sdst << 8) | d.get("vdst", 0)
        w1 = (vsrc("src2", d) << 18) | (vsrc("src1", d) << 9) | vsrc("src0", d)
        return [w0, w1]

    configs = vconfigs(lambda op, d: vop3(op, d), ["vdst", "src0", "src1", "src2"], ("src0", "src1", "src2"))
    # v_cmpx_*_e64 writes EXEC: LLVM wants exec_lo (126) in the destination field.
    configs += [(lambda op, b=b: [b(op)[0] | 126, b(op)[1]], m) for b, m in vconfigs(
        lambda op, d: vop3(op, d), ["src0", "src1"], ("src0", "src1"))]
    t["vop3"] = enumerate_configs(1024, configs)
    # Two-destination (VOP3B) opcodes put an SGPR destination in bits 14:8: probe with s24.
    vfm_b = dict(vfm)
    vfm_b[("s", 24)] = "sdst"
    vop3b = enumerate_configs(1024, [(b, vfm_b) for b, _ in vconfigs(
        lambda op, d: vop3(op, d, 24), ["vdst", "src0", "src1", "src2"], ("src2",))])
    for op, entry in vop3b.items():
        if "{sdst}" in entry["template"]:
            entry["vop3b"] = True
            t["vop3"][op] = entry
    t["vop3p"] = enumerate_configs(128, vconfigs(
        lambda op, d: [(0b11001100 << 24) | (op << 16) | d.get("vdst", 0),
                       (vsrc("src2", d) << 18) | (vsrc("src1", d) << 9) | vsrc("src0", d) | (0b11 << 27)],
        ["vdst", "src0", "src1", "src2"]))
    df = {"addr": 8, "data0": 12, "data1": 16, "vdst": 20}
    dfm = {("v", v): k for k, v in df.items()}
    ds = []
    for sub in subsets(list(df.items())):
        d = dict(sub)
        ds.append((lambda op, d=d: [(0b110110 << 26) | (op << 18),
                                    (d.get("vdst", 0) << 24) | (d.get("data1", 0) << 16) | (d.get("data0", 0) << 8) | d.get("addr", 0)],
                   dfm))
    t["ds"] = enumerate_configs(256, ds)
    mf = {"addr": 8, "data": 12, "vdst": 20}
    for seg_name, seg in (("flat", 0), ("scratch", 1), ("global", 2)):
        for suffix, saddr in (("", 0x7D), ("_saddr", 4)):
            configs = []
            for sub in subsets(list(mf.items())):
                d = dict(sub)
                configs.append((lambda op, d=d, seg=seg, saddr=saddr:
                                [(0b110111 << 26) | (op << 18) | (seg << 14),
                                 (d.get("vdst", 0) << 24) | (saddr << 16) | (d.get("data", 0) << 8) | d.get("addr", 0)],
                                {("v", 8): "addr", ("v", 12): "data", ("v", 20): "vdst", ("s", 4): "saddr"}))
            t[seg_name + suffix] = enumerate_configs(128, configs)
    # MUBUF: offen, vaddr v8, vdata v12, srsrc s[16:19] (the field holds srsrc/4), soffset s2.
    mub = []
    for sub in subsets([("vaddr", 8), ("vdata", 12)]):
        d = dict(sub)
        mub.append((lambda op, d=d: [(0b111000 << 26) | ((op >> 7) << 25) | ((op & 127) << 18) | ((1 << 12) if "vaddr" in d else 0),
                                     (2 << 24) | ((16 >> 2) << 16) | (d.get("vdata", 0) << 8) | d.get("vaddr", 0)],
                    {("v", 8): "vaddr", ("v", 12): "vdata", ("s", 16): "srsrc", ("s", 2): "soffset"}))
    t["mubuf"] = enumerate_configs(256, mub)
    # SDWA and DPP16 forms of VOP1/VOP2/VOPC: which opcodes have them.
    sdwa1 = (0x6 << 8) | (0x6 << 16)                 # dst_sel and src0_sel DWORD
    sdwa2 = sdwa1 | (0x6 << 24)                      # and src1_sel DWORD
    sdwac = (0x6 << 16) | (0x6 << 24)                # VOPC: src sels only
    dpp = (0xFF << 24) | (0xE4 << 8)                 # masks 0xf, quad_perm:[0,1,2,3]
    t["vop1_sdwa"] = enumerate_configs(256, [(lambda op: [(0b0111111 << 25) | (20 << 17) | (op << 9) | 0xF9, sdwa1 | 8], vfm),
                                             (lambda op: [(0b0111111 << 25) | (op << 9) | 0xF9, sdwa1 | 8], vfm)])
    t["vop2_sdwa"] = enumerate_configs(62, [(lambda op: [(op << 25) | (20 << 17) | (12 << 9) | 0xF9, sdwa2 | 8], vfm)])
    t["vopc_sdwa"] = enumerate_configs(256, [(lambda op: [(0b0111110 << 25) | (op << 17) | (12 << 9) | 0xF9, sdwac | 8], vfm)])
    t["vop1_dpp"] = enumerate_configs(256, [(lambda op: [(0b0111111 << 25) | (20 << 17) | (op << 9) | 0xFA, dpp | 8], vfm),
                                            (lambda op: [(0b0111111 << 25) | (op << 9) | 0xFA, dpp | 8], vfm)])
    t["vop2_dpp"] = enumerate_configs(62, [(lambda op: [(op << 25) | (20 << 17) | (12 << 9) | 0xFA, dpp | 8], vfm)])
    return t


SLOTS = {
    "sop": ["sdst", "ssrc0", "ssrc1"],
    "smem": ["sdata", "sbase"],
    "vop": ["vdst", "src0", "src1", "src2", "sdst"],
    "ds": ["vdst", "addr", "data0", "data1"],
    "flat": ["vdst", "addr", "data", "saddr"],
    "mubuf": ["vdata", "vaddr", "srsrc", "soffset"],
}


def family(enc):
    for prefix, fam in (("sop", "sop"), ("smem", "smem"), ("vop", "vop"), ("ds", "ds"),
                        ("flat", "flat"), ("global", "flat"), ("scratch", "flat"), ("mubuf", "mubuf")):
        if enc.startswith(prefix):
            return fam
    raise ValueError(enc)


def normalize(enc, template, omit_zero=False):
    """Immediates in the probe's text become placeholders the printer fills by kind."""
    if enc == "smem":
        return template.replace("0x10", "{offset}").replace("20, ", "{sdata_imm}, ")
    if enc in ("sopk", "sopp"):
        t = re.sub(r"hwreg\([^)]*\)", "{hwreg}", template)
        t = re.sub(r"^vmcnt\(.*$", "{waitcnt}", t)
        t = re.sub(r"^sendmsg\(.*$", "{sendmsg}", t)
        t = re.sub(r"^depctr_.*$", "{depctr}", t)
        t = re.sub(r"\b0x1234\b|^0x3$", "{simm16:hex}", t)
        t = re.sub(r"\b4660\b|^3$", "{simm16:dec}", t)
        if omit_zero:
            t = t.replace("}", "?}")
        return t
    return template


def camel(mnemonic):
    base = re.sub(r"_(e32|e64|sdwa|dpp)$", "", mnemonic)
    return "".join(p[:1].upper() + p[1:] for p in base.split("_")), base


def rust(tables):
    ops = {}
    for enc in tables.values():
        for e in enc.values():
            variant, base = camel(e["mnemonic"])
            ops[variant] = base
    names = sorted(ops)
    out = []
    out.append("// @generated by scripts/gen-emu-tables.py from llvm-mc-19's gfx1030 disassembler.")
    out.append("// Do not edit: regenerate with `scripts/gen-emu-tables.py` (`--check` compares).")
    out.append("//! The gfx1030 opcode space: per encoding and opcode, the operation, its mnemonic, its")
    out.append("//! operand template and the widths (in dwords) of its register operands.")
    out.append("")
    out.append("use super::OpDesc;")
    out.append("")
    out.append("/// Every gfx1030 operation, one per mnemonic without its encoding suffix.")
    out.append("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]")
    out.append("#[repr(u16)]")
    out.append("#[allow(missing_docs)]")
    out.append("pub enum Op {")
    for n in names:
        out.append("    %s," % n)
    out.append("}")
    out.append("")
    out.append("impl Op {")
    out.append("    /// The mnemonic without encoding suffix (`v_add_f32`).")
    out.append("    pub const fn name(self) -> &'static str {")
    out.append("        match self {")
    for n in names:
        out.append("            Op::%s => %s," % (n, json.dumps(ops[n])))
    out.append("        }")
    out.append("    }")
    out.append("}")
    out.append("")
    for enc, entries in sorted(tables.items()):
        if enc == "flat_saddr":
            continue  # FLAT has no scalar address on gfx10
        size = max([256] + [k + 1 for k in entries])
        size = {"sop2": 0x60, "sopk": 32, "sopc": 128, "sopp": 128, "vop2": 62, "vop3": 1024,
                "vop3p": 128, "flat": 128, "scratch": 128, "global": 128, "flat_saddr": 128,
                "scratch_saddr": 128, "global_saddr": 128, "vop2_sdwa": 62, "vop2_dpp": 62}.get(enc, size)
        out.append("/// `%s` opcodes." % enc)
        out.append("pub static %s: [Option<OpDesc>; %d] = [" % (enc.upper(), size))
        for op in range(size):
            e = entries.get(op)
            if e is None:
                out.append("    None,")
                continue
            variant, _ = camel(e["mnemonic"])
            slots = SLOTS[family(enc)]
            w = [e["widths"].get(n, 0) for n in slots] + [0] * (5 - len(slots))
            out.append("    Some(OpDesc { op: Op::%s, mnemonic: %s, template: %s, w: [%s], literal: %s, vop3b: %s }),"
                       % (variant, json.dumps(e["mnemonic"]), json.dumps(normalize(enc, e["template"], e.get("omit_zero", False))),
                          ", ".join(str(x) for x in w),
                          "true" if e["literal"] else "false", "true" if e.get("vop3b") else "false"))
        out.append("];")
        out.append("")
    return "\n".join(out)


def main():
    tables = gen()
    text = rust(tables)
    if "--check" in sys.argv:
        with open(OUT) as f:
            if f.read() != text:
                sys.exit("gen-emu-tables: %s differs from what llvm-mc gives now" % OUT)
        print("gen-emu-tables: up to date")
        return
    if "--json" in sys.argv:
        print(json.dumps(tables, indent=1, sort_keys=True))
        return
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write(text)
    counts = {k: len(v) for k, v in tables.items()}
    print("gen-emu-tables: wrote %s (%s)" % (OUT, counts))


if __name__ == "__main__":
    main()
