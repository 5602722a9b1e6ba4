#!/usr/bin/env python3
"""Generate rocload-emu's opcode tables, one file per processor, by asking llvm-mc.

For every encoding the emulator decodes, this script builds instruction words
with chosen field values (distinct register numbers per operand field),
disassembles them with `llvm-mc-19 --disassemble -mcpu=<processor>` and reads
back the mnemonic, which fields are printed as operands (and in what order),
the register width of each operand, how constants print in each source slot
(this reveals the operand's value type), and which modifiers each form prints.

Output (committed):
  emu/src/isa/<processor>_tables.rs  that processor's encoding tables, its list
                                     of operations and the `Tables` the decoder
                                     and printer read;
  emu/src/isa/ops.rs                 the one `Op` space: the union of the
                                     operations of every processor's tables.
Nothing here copies LLVM source; all facts come from running the disassembler.

A processor is probed with the word builders of its encoding layout (PROCESSORS
below); a processor whose encodings differ from the ones here (gfx9's VOP3,
SMEM and FLAT words, for instance) needs its own builders first.

Usage:
    scripts/gen-emu-tables.py                   # regenerate every processor
    scripts/gen-emu-tables.py --mcpu gfx1030    # one processor (and ops.rs)
    scripts/gen-emu-tables.py --check [--mcpu P]  # regenerate into memory and diff
Environment: LLVM_MC (default: llvm-mc-19); EMU_GEN_CACHE=PREFIX reuses probe
results from PREFIX.<processor> (a development aid).
"""
import difflib
import os
import re
import subprocess
import sys

LLVM_MC = os.environ.get("LLVM_MC", "llvm-mc-19")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ISA_DIR = os.path.join(ROOT, "emu", "src", "isa")
OPS_OUT = os.path.join(ISA_DIR, "ops.rs")

# Processors whose tables are generated, with the encoding layout their words
# are built with (GFX10's: RDNA1 and RDNA2; GFX9's: CDNA2 and CDNA3).
PROCESSORS = {"gfx1030": "gfx10", "gfx90a": "gfx9", "gfx942": "gfx9"}
# The processor being probed (set by main for each one in turn).
MCPU = "gfx1030"


def table_path(mcpu):
    return os.path.join(ISA_DIR, "%s_tables.rs" % mcpu)

# A sentinel instruction closes each probe so outputs can be grouped per probe.
SENTINEL = [0xBEE903FF, 0x5A5A5A5A]
SENTINEL_TEXT = "s_mov_b32 s105, 0x5a5a5a5a"
# A trailing word after probes that may need a 32-bit literal (K operands).
KWORD = 0xBF800001  # s_nop 1 when not eaten as a literal
LIT = 255
NULL = 0x7D


def disassemble(groups):
    """Disassemble probe groups; return the first output line of each probe,
    or None when llvm-mc rejected the probe's first word."""
    lines = []
    for g in groups:
        bs = []
        for w in list(g) + SENTINEL:
            bs += [(w >> (8 * i)) & 0xFF for i in range(4)]
        lines.append(",".join("0x%02x" % b for b in bs))
    out = []
    # Chunk to keep each llvm-mc run modest.
    for start in range(0, len(lines), 20000):
        chunk = lines[start : start + 20000]
        p = subprocess.run(
            [LLVM_MC, "--disassemble", "-triple=amdgcn", "-mcpu=" + MCPU],
            input="\n".join(chunk) + "\n",
            capture_output=True,
            text=True,
            check=True,
        )
        bad = {int(m.group(1)) - 1 for m in re.finditer(r"^<stdin>:(\d+):1: warning", p.stderr, re.M)}
        texts = [l.strip() for l in p.stdout.splitlines()]
        texts = [t for t in texts if t and t != ".text"]
        res, cur = [], []
        for t in texts:
            if t == SENTINEL_TEXT:
                res.append(cur)
                cur = []
            else:
                cur.append(t)
        if len(res) != len(chunk):
            if len(chunk) > 1:
                # Find the probe that swallowed a sentinel (rare: decode each alone).
                for g in groups[start : start + 20000]:
                    out += disassemble([g])
                continue
            # A probe whose words decode to a different length than given
            # swallows the sentinel: unusable, treat as not decoding.
            WARNINGS.append("probe %s: length mismatch" % [hex(w) for w in groups[start]])
            out.append(None)
            continue
        for i, r in enumerate(res):
            out.append(None if (i in bad or not r) else r[0])
    return out


# ----------------------------------------------------------------------------
# Text parsing


def split_top(s, sep=","):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_inst(text):
    """Split 'mnem a, b, c mod1 mod2' into (mnem, [operands], [modifiers]).

    Disassembler comments (invalid register class / immediate) are kept glued
    to their operand without spaces so they never split operands."""
    text = re.sub(r"/\*[^*]*\*/", lambda m: m.group(0).replace(" ", "~").replace(",", ";"), text)
    if " " not in text:
        return text, [], []
    mnem, rest = text.split(" ", 1)
    ops = split_top(rest)
    mods = []
    if ops:
        last = ops[-1]
        # Modifiers follow the last operand after a space (outside brackets).
        depth, cut = 0, None
        for i, ch in enumerate(last):
            if ch in "[(":
                depth += 1
            elif ch in "])":
                depth -= 1
            elif ch == " " and depth == 0:
                cut = i
                break
        if cut is not None:
            ops[-1] = last[:cut]
            mods = last[cut + 1 :].split(" ")
    return mnem, ops, mods


INVALID_RE = re.compile(r"/\*Invalid~register;~operand~has~'([^']+)'~register~class\*/")


def strip_invalid(tok):
    """Remove disassembler comments from an operand; return (operand, register class named)."""
    m = INVALID_RE.search(tok)
    cls = m.group(1) if m else None
    return re.sub(r"/\*[^*]*\*/", "", tok), cls


def parse_reg(tok):
    """Return (kind, first, dwords) for v/s/a/ttmp registers, else None."""
    m = re.fullmatch(r"(v|s|a|ttmp)(\d+)", tok)
    if m:
        return m.group(1), int(m.group(2)), 1
    m = re.fullmatch(r"(v|s|a|ttmp)\[(\d+):(\d+)\]", tok)
    if m:
        a, b = int(m.group(2)), int(m.group(3))
        return m.group(1), a, b - a + 1
    return None


def strip_mods(tok):
    """Remove -x, |x|, neg(x), sext(x) around an operand; return (core, flags)."""
    flags = set()
    changed = True
    while changed:
        changed = False
        if tok.startswith("neg(") and tok.endswith(")"):
            tok, changed = tok[4:-1], True
            flags.add("neg")
        elif tok.startswith("sext(") and tok.endswith(")"):
            tok, changed = tok[5:-1], True
            flags.add("sext")
        elif tok.startswith("-") and len(tok) > 1 and not re.fullmatch(r"-[0-9.]+", tok):
            tok, changed = tok[1:], True
            flags.add("neg")
        elif tok.startswith("|") and tok.endswith("|") and len(tok) > 2:
            tok, changed = tok[1:-1], True
            flags.add("abs")
    return tok, flags


# ----------------------------------------------------------------------------
# Encodings: word builders and probe field values.
#
# Field kinds (operand classes) used in the table:
#   V   8-bit VGPR field           S   7-bit SGPR-or-special field (no constants)
#   SS  8-bit scalar source        VS  9-bit vector source (VGPR, SGPR, constants)
# Probe values are distinct so a printed register maps back to its field.

PV = {"vdst": 10, "src0": 20, "src1": 30, "src2": 40, "sdst2": 50, "vsrc1": 30}


def vop3_words(op, f):
    w0 = 0xD4000000 | op << 16 | f.get("clamp", 0) << 15 | f.get("opsel", 0) << 11 | f.get("abs", 0) << 8 | f.get("sdst2", 0) << 8 | f.get("vdst", 0)
    w1 = f.get("neg", 0) << 29 | f.get("omod", 0) << 27 | f.get("src2", 0) << 18 | f.get("src1", 0) << 9 | f.get("src0", 0)
    ws = [w0, w1]
    if LIT in (f.get("src0"), f.get("src1"), f.get("src2")):
        ws.append(f["lit"])
    return ws


def vop3p_words(op, f):
    oph = f.get("opsel_hi", 7)
    w0 = 0xCC000000 | op << 16 | f.get("clamp", 0) << 15 | (oph >> 2 & 1) << 14 | f.get("opsel", 0) << 11 | f.get("neg_hi", 0) << 8 | f.get("vdst", 0)
    w1 = f.get("neg", 0) << 29 | (oph & 3) << 27 | f.get("src2", 0) << 18 | f.get("src1", 0) << 9 | f.get("src0", 0)
    ws = [w0, w1]
    if LIT in (f.get("src0"), f.get("src1"), f.get("src2")):
        ws.append(f["lit"])
    return ws


def with_lit(ws, f, keys):
    if any(f.get(k) == LIT for k in keys):
        ws.append(f["lit"])
    else:
        ws.append(KWORD)
    return ws


def sop2_words(op, f):
    return with_lit([0x80000000 | op << 23 | f.get("sdst", 0) << 16 | f.get("ssrc1", 0) << 8 | f.get("ssrc0", 0)], f, ("ssrc0", "ssrc1"))


def sop1_words(op, f):
    return with_lit([0xBE800000 | f.get("sdst", 0) << 16 | op << 8 | f.get("ssrc0", 0)], f, ("ssrc0",))


def sopc_words(op, f):
    return with_lit([0xBF000000 | op << 16 | f.get("ssrc1", 0) << 8 | f.get("ssrc0", 0)], f, ("ssrc0", "ssrc1"))


def sopk_words(op, f):
    return [0xB0000000 | op << 23 | f.get("sdst", 0) << 16 | f.get("simm16", 0), KWORD]


def sopp_words(op, f):
    return [0xBF800000 | op << 16 | f.get("simm16", 0)]


def vop1_words(op, f):
    return with_lit([0x7E000000 | f.get("vdst", 0) << 17 | op << 9 | f.get("src0", 0)], f, ("src0",))


def vop2_words(op, f):
    ws = [op << 25 | f.get("vdst", 0) << 17 | f.get("vsrc1", 0) << 9 | f.get("src0", 0)]
    if f.get("src0") == LIT:
        ws.append(f["lit"])
    ws.append(KWORD)
    return ws


def vopc_words(op, f):
    return with_lit([0x7C000000 | op << 17 | f.get("vsrc1", 0) << 9 | f.get("src0", 0)], f, ("src0",))


def smem_words(op, f):
    w0 = 0xF4000000 | op << 18 | f.get("glc", 0) << 16 | f.get("dlc", 0) << 14 | f.get("sdata", 0) << 6 | (f.get("sbase", 0) >> 1)
    w1 = f.get("soffset", NULL) << 25 | (f.get("offset", 0) & 0x1FFFFF)
    return [w0, w1]


def ds_words(op, f):
    w0 = 0xD8000000 | op << 18 | f.get("gds", 0) << 17 | f.get("offset1", 0) << 8 | f.get("offset0", 0)
    w1 = f.get("vdst", 0) << 24 | f.get("data1", 0) << 16 | f.get("data0", 0) << 8 | f.get("addr", 0)
    return [w0, w1]


def flat_words(op, f):
    w0 = 0xDC000000 | op << 18 | f.get("slc", 0) << 17 | f.get("glc", 0) << 16 | f["seg"] << 14 | f.get("dlc", 0) << 12 | f.get("offset", 0)
    w1 = f.get("vdst", 0) << 24 | f.get("saddr", NULL) << 16 | f.get("data", 0) << 8 | f.get("addr", 0)
    return [w0, w1]


def mubuf_words(op, f):
    w0 = 0xE0000000 | (op >> 7) << 25 | (op & 0x7F) << 18 | f.get("dlc", 0) << 15 | f.get("glc", 0) << 14 | f.get("idxen", 0) << 13 | f.get("offen", 1) << 12 | f.get("offset", 0)
    w1 = f.get("soffset", 0) << 24 | f.get("slc", 0) << 22 | (f.get("srsrc", 0) >> 2) << 16 | f.get("vdata", 0) << 8 | f.get("vaddr", 0)
    return [w0, w1]


def sdwa_words(base, op, f):
    """VOP1/VOP2/VOPC word with src0 = SDWA escape; f: vdst, vsrc1, src0, sdwa bits."""
    w0 = base(op, dict(f, src0=0xF9))[0]
    w1 = f.get("src0", 0) & 0xFF | f.get("sdwa", 0)
    return [w0, w1]


def dpp_words(base, op, f, escape=0xFA):
    w0 = base(op, dict(f, src0=escape))[0]
    w1 = f.get("src0", 0) & 0xFF | f.get("dpp", 0)
    return [w0, w1]


# ----------------------------------------------------------------------------
# Probing helpers


def find_forms(ops, field_sets, build, accept=None):
    """For each opcode try field sets in order; keep the first that decodes.

    Returns {op: (fields, text)}."""
    found = {}
    for fs in field_sets:
        todo = [op for op in ops if op not in found]
        if not todo:
            break
        texts = disassemble([build(op, fs) for op in todo])
        for op, t in zip(todo, texts):
            if t is None or t in ("v_illegal",):
                continue
            if accept and not accept(op, fs, t):
                continue
            found[op] = (fs, t)
    return found


def map_operands(text, fields, kinds):
    """Map printed operands to fields.

    fields: {name: value}; kinds: {name: 'V'|'S'|'SS'|'VS'}. Returns
    (mnemonic, [spec dicts], modifier tokens, warnings)."""
    mnem, ops, mods = parse_inst(text)
    specs, warn = [], []
    for tok in ops:
        tok, rc = strip_invalid(tok)
        core, flags = strip_mods(tok)
        r = parse_reg(core)
        spec = None
        if r:
            kind, num, width = r
            for name, val in fields.items():
                if name not in kinds:
                    continue
                k = kinds[name]
                if k in ("VS",):
                    if kind == "v" and val == 0x100 + num:
                        spec = name
                    elif kind == "s" and val == num:
                        spec = name
                elif k == "V" and kind == "v" and val == num:
                    spec = name
                elif k in ("S", "SS") and kind == "s" and val == num:
                    spec = name
                elif k == "S4" and kind == "s" and val == num:
                    spec = name
                if spec:
                    break
            if spec is None:
                warn.append("unmapped register %s in %r" % (core, text))
                specs.append({"fixed": core})
                continue
            specs.append({"field": spec, "kind": kinds[spec], "dwords": width, "rc": rc})
        else:
            specs.append({"fixed": core})
    return mnem, specs, mods, warn


def canonical(mnem):
    for suf in ("_e32", "_e64", "_sdwa", "_dpp"):
        if mnem.endswith(suf):
            return mnem[: -len(suf)]
    return mnem


# ----------------------------------------------------------------------------
# Type probes: how constants print in a source slot reveals its value type.

TYPE_SIGS = {}


def classify_type(sig):
    """Name a source slot's value type from how five constants print in it:
    inline 1/(2pi), and literals 0x3f800000, 0x3c00, 0x3ff00000, 0xffff."""
    inv, l_f32, l_f16, l_f64, l_ffff = sig
    if inv == "0.15915494309189532":
        return "F64" if l_f64 == "1.0" else "B64"
    if inv == "0x3118":
        return "B16"
    if inv == "0.15915494":
        if l_f16 == "1.0" and l_f32 == "0":
            return "F16"
        if l_f16 == "1.0" and l_f32 == "0x3f800000":
            return "V2F16"
        if l_f32 == "1.0" and l_f16 == "0x3c00":
            return "B32" if l_ffff == "0xffff" else "V2B16"
    return "UNKNOWN(%s)" % "|".join(map(str, sig))


def type_probe(entries, build, slot_fields):
    """entries: {op: (fields, text, specs)}; fills spec['ty'] for constant-capable slots."""
    jobs = []
    for op, (fs, text, specs) in entries.items():
        for idx, sp in enumerate(specs):
            f = sp.get("field")
            if f not in slot_fields:
                continue
            for val, lit in ((248, 0), (LIT, 0x3F800000), (LIT, 0x3C00), (LIT, 0x3FF00000), (LIT, 0xFFFF)):
                jobs.append((op, idx, dict(fs, **{f: val, "lit": lit})))
    texts = disassemble([build(op, fs) for op, _, fs in jobs])
    got = {}
    for (op, idx, _), t in zip(jobs, texts):
        tok = None
        if t:
            _, ops, _ = parse_inst(t)
            if idx < len(ops):
                tok = strip_invalid(ops[idx])[0]
        got.setdefault((op, idx), []).append(tok)
    for (op, idx), sig in got.items():
        ty = classify_type(tuple(sig))
        entries[op][2][idx]["ty"] = ty
        TYPE_SIGS.setdefault(ty, set()).add(tuple(sig))


# ----------------------------------------------------------------------------
# Per-encoding enumeration


def zero_variants(full, optional):
    """Field sets from full to fewer fields, dropping optional fields from the end."""
    out = []
    for n in range(len(optional), -1, -1):
        fs = dict(full)
        for k in optional[n:]:
            fs[k] = 0
        out.append(fs)
    return out


def enum_simple(name, ops, build, full, optional, kinds, type_slots, extra_variants=()):
    variants = list(extra_variants) + zero_variants(full, optional)
    found = find_forms(ops, variants, build)
    entries = {}
    warns = []
    for op, (fs, text) in sorted(found.items()):
        mnem, specs, mods, w = map_operands(text, fs, kinds)
        warns += w
        entries[op] = (fs, text, specs)
    type_probe(entries, build, type_slots)
    return entries, warns


def mods_probe(entries, build, probes):
    """probes: list of (mod name, field overrides). Records which modifiers print."""
    jobs = []
    for op, (fs, text, specs) in entries.items():
        for mname, over in probes:
            jobs.append((op, mname, dict(fs, **over)))
    texts = disassemble([build(op, fs) for op, _, fs in jobs])
    res = {}
    for (op, mname, _), t in zip(jobs, texts):
        res.setdefault(op, {})[mname] = t
    return res


# ----------------------------------------------------------------------------
# Forms: one decoded shape (encoding + opcode + variant) with its operand specs.


def subsets(fields):
    """All subsets of the probe fields, largest first (unused fields are zero)."""
    names = list(fields)
    out = []
    for mask in range((1 << len(names)) - 1, -1, -1):
        fs = {k: (fields[k] if mask >> i & 1 else 0) for i, k in enumerate(names)}
        out.append((bin(mask).count("1"), mask, fs))
    out.sort(key=lambda x: (-x[0], -x[1]))
    return [fs for _, _, fs in out]


def match_field(core, fs, kinds):
    r = parse_reg(core)
    if not r:
        return None
    kind, num, width = r
    for name, val in fs.items():
        k = kinds.get(name)
        if k is None or val == 0 and k != "V":
            continue
        if k == "VS":
            if (kind in "va" and val == 0x100 + num) or (kind == "s" and val == num):
                return name, {"v": "V", "a": "A"}.get(kind, "S"), width
        elif k == "V8":  # SDWA/DPP src0: VGPR unless the sgpr bit is set
            if kind == "v" and val == num:
                return name, "V", width
        elif k == "D":  # 8-bit destination printed as VGPR, AGPR or SGPR
            if kind in ("v", "s", "a") and val == num:
                return name, kind.upper(), width
        elif k == "V" and kind in "va" and val == num:
            return name, kind.upper(), width
        elif k in ("S", "SS") and kind == "s" and val == num:
            return name, "S", width
    return None


def describe(text, fs, kinds):
    """Parse a probe's text into (mnemonic, specs, mod tokens)."""
    mnem, ops, mods = parse_inst(text)
    specs = []
    for tok in ops:
        tok, rc = strip_invalid(tok)
        core, flags = strip_mods(tok)
        m = match_field(core, fs, kinds)
        if m:
            name, printed_kind, width = m
            k = kinds[name]
            kind = {"VS": "Vs", "SS": "Ss", "V8": "V", "D": printed_kind}.get(k, k)
            if k in ("VS",):
                kind = "Vs"
            if kinds[name] == "D":
                kind = printed_kind
            if printed_kind == "A":
                # An operand that is always an AGPR (v_accvgpr_read/write/mov).
                kind = "A"
            specs.append({"field": name, "kind": kind, "dwords": width, "rc": rc})
        else:
            specs.append({"fixed": core})
    return mnem, specs, mods


def probe_forms(ops, variants, build, kinds, accept=None):
    found = {}
    for fs in variants:
        todo = [op for op in ops if op not in found]
        if not todo:
            break
        texts = disassemble([build(op, fs) for op in todo])
        for op, t in zip(todo, texts):
            if t is None or t == "v_illegal":
                continue
            if accept and not accept(op, fs, t):
                continue
            found[op] = (fs, t)
    forms = {}
    for op, (fs, t) in found.items():
        mnem, specs, mods = describe(t, fs, kinds)
        forms[op] = {"fs": fs, "text": t, "mnem": mnem, "specs": specs, "mods": mods}
    return forms


def probe_types(forms, build, slots):
    """Classify constant-capable source slots by how constants print in them."""
    jobs = []
    for op, fm in forms.items():
        for idx, sp in enumerate(fm["specs"]):
            if sp.get("field") in slots and sp["kind"] in ("Vs", "Ss", "V", "S"):
                for val, lit in ((248, 0), (LIT, 0x3F800000), (LIT, 0x3C00), (LIT, 0x3FF00000), (LIT, 0xFFFF)):
                    jobs.append((op, idx, dict(fm["fs"], **{sp["field"]: val, "lit": lit})))
    texts = disassemble([build(op, fs) for op, _, fs in jobs])
    got = {}
    for (op, idx, _), t in zip(jobs, texts):
        tok = None
        if t:
            _, ops_, _ = parse_inst(t)
            if idx < len(ops_):
                tok = strip_mods(strip_invalid(ops_[idx])[0])[0]
        got.setdefault((op, idx), []).append(tok)
    for (op, idx), sig in got.items():
        sp = forms[op]["specs"][idx]
        ty = classify_type(tuple(sig))
        sp["ty"] = ty
        TYPE_SIGS.setdefault(ty, set()).add(tuple(sig))
        if sp["kind"] == "V" and sp.get("field") in slots:
            sp["kind"] = "Vs"
        if sp["kind"] == "S" and sp.get("field") in slots:
            sp["kind"] = "Ss"


MOD_NAMES = [
    ("op_sel_hi:[", "OpSelHi"), ("op_sel:[", "OpSel"), ("neg_lo:[", "NegLo"), ("neg_hi:[", "NegHi"),
    ("clamp", "Clamp"), ("mul:", "Omod"), ("div:", "Omod"), ("dst_sel:", "DstSel"),
    ("dst_unused:", "DstUnused"), ("src0_sel:", "Src0Sel"), ("src1_sel:", "Src1Sel"),
    ("quad_perm:", "DppCtrl"), ("row_", "DppCtrl"), ("row_mask:", "RowMask"), ("bank_mask:", "BankMask"),
    ("bound_ctrl:", "BoundCtrl"), ("fi:", "Fi"), ("dpp8:", "Dpp8"),
    ("cbsz:", "Cbsz"), ("abid:", "Abid"), ("blgp:", "Blgp"), ("neg:[", "Neg"),
]


def mod_name(tok):
    best = None
    for pre, name in MOD_NAMES:
        if tok.startswith(pre) and (best is None or len(pre) > len(best[0])):
            best = (pre, name)
    if not best:
        return None
    name = best[1]
    if name in ("OpSel", "OpSelHi", "NegLo", "NegHi", "Neg"):
        return "%s(%d)" % (name, tok.count(",") + 1)
    return name


def probe_mods(forms, build, probes, all_probe):
    """Find which modifiers print (and in what order) and which source slots take neg/abs/sext."""
    jobs = []
    for op, fm in forms.items():
        for pname, over in probes + [("all", all_probe)]:
            jobs.append((op, pname, dict(fm["fs"], **over)))
    texts = disassemble([build(op, fs) for op, _, fs in jobs])
    res = {}
    for (op, pname, _), t in zip(jobs, texts):
        res.setdefault(op, {})[pname] = t
    for op, fm in forms.items():
        r = res[op]
        base_mods = [mod_name(m) for m in fm["mods"]]
        seen = []
        for pname, t in r.items():
            if not t:
                continue
            mnem, ops_, mods = parse_inst(t)
            if mnem != fm["mnem"]:
                continue
            for m in mods:
                n = mod_name(m)
                if n and n not in seen:
                    seen.append(n)
            # Source modifiers: compare operand tokens with the base probe.
            if pname.startswith(("neg", "abs", "sext")) and pname[-1].isdigit():
                kind, i = pname[:-1], int(pname[-1])
                # the i-th source spec (by field src0/src1/src2)
                for idx, sp in enumerate(fm["specs"]):
                    if sp.get("field") in ("src%d" % i, "vsrc1" if i == 1 else "-"):
                        if idx < len(ops_):
                            _, flags = strip_mods(strip_invalid(ops_[idx])[0])
                            if kind in flags:
                                sp.setdefault("srcmods", []).append(kind)
        order = []
        t = r.get("all")
        if t and parse_inst(t)[0] == fm["mnem"]:
            order = [mod_name(m) for m in parse_inst(t)[2] if mod_name(m)]
        for n in base_mods + seen:
            if n and n not in order:
                order.append(n)
        # Merge OpSel(n) duplicates keeping the first.
        fm["modlist"] = order


# ----------------------------------------------------------------------------
# Roles: which Inst slot each field fills (fixed per encoding, see isa/inst.rs).

# Operations whose first printed vcc (e32, SDWA, DPP) is their carry out.
CARRY_OUT_VCC = (
    "v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32",  # gfx10
    "v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32",  # gfx9
)
SOPK_SRC_SDST = ("s_cmpk_", "s_setreg_", "s_waitcnt_", "s_subvector_loop_")


def assign_roles(enc, fm):
    canon = canonical(fm["mnem"])
    seen_src = False
    vcc_count = 0
    for sp in fm["specs"]:
        f = sp.get("field")
        role = None
        if f is None:
            tok = sp["fixed"]
            if tok in ("vcc_lo", "vcc"):
                vcc_count += 1
                if enc.startswith("VOPC") or canon.startswith("v_cmp"):
                    role = "Dst(0)"
                elif canon in CARRY_OUT_VCC and vcc_count == 1:
                    role = "Dst(1)"
                else:
                    role = "Src(2)"
            else:
                role = "None"
        elif f in ("vdst",):
            role = "Dst(0)"
        elif f == "sdst":
            role = "Src(0)" if (enc == "SOPK" and canon.startswith(SOPK_SRC_SDST)) else "Dst(0)"
        elif f == "sdst2":
            # VOPC SDWA: the compare result, like VOPC's vcc_lo / VOP3 sdst.
            role = "Dst(0)" if enc == "VOPC_SDWA" else "Dst(1)"
        elif f == "src0":
            role = "Src(0)"
        elif f in ("src1", "vsrc1"):
            role = "Src(1)"
        elif f == "src2":
            role = "Src(2)"
        elif f == "ssrc0":
            role = "Src(0)"
        elif f == "ssrc1" and sp["kind"] == "Imm":
            role = "None"
        elif f == "ssrc1":
            role = "Src(1)"
        elif f == "sdata" and sp["kind"] == "Imm":
            role = "None"
        elif f == "sdata":
            role = "Dst(0)" if "store" not in canon else "Src(2)"
        elif f == "sbase":
            role = "Src(0)"
        elif f == "soffset":
            role = "Src(1)" if enc == "SMEM" else "Src(2)"
        elif f == "addr":
            role = "Src(0)"
        elif f in ("data0", "data"):
            role = "Src(1)"
        elif f == "data1":
            role = "Src(2)"
        elif f == "saddr":
            role = "Src(2)"
        elif f == "vaddr":
            role = "Src(0)"
        elif f == "srsrc":
            role = "Src(1)"
        elif f == "vdata":
            role = "Dst(0)" if ("load" in canon) else "Src(3)"
        elif f in ("simm16", "lit", "offset"):
            role = "None"
        if role is None:
            raise SystemExit("no role for field %r of %s" % (f, fm["mnem"]))
        sp["role"] = role


# ----------------------------------------------------------------------------
# Immediate (simm16) print styles of SOPP/SOPK, found from three probe values.


def imm_style(t0, t3, tneg):
    def last(t):
        if t is None:
            return None
        _, ops_, _ = parse_inst(t)
        if not ops_:
            return None
        if " " in t.split(" ", 1)[1] and "(" in t and "," not in t.split(" ", 1)[1].split("(")[0]:
            return t.split(" ", 1)[1]
        return ops_[-1]

    a, b, c = last(t0), last(t3), last(tneg)
    if b and b.startswith(("vmcnt(", "expcnt(", "lgkmcnt(")):
        return "Waitcnt"
    if b and b.startswith("depctr_"):
        return "Depctr"
    if b and b.startswith("sendmsg("):
        return "Sendmsg"
    if b and b.startswith("hwreg("):
        return "Hwreg"
    if a and a.startswith("UC_VERSION"):
        return "Version"
    if a is None and b is None:
        return "NoImm"
    if a is None and b == "3":
        return "OptionalDec"
    if b == "0x3":
        return "Hex"
    if b == "3" and c == "65523":
        return "Dec"
    if b == "3" and c == "0xfff3":
        return "Imm32"
    return "UNKNOWN"


# ----------------------------------------------------------------------------
# Enumeration of every encoding


def fix_fixed(forms, enc):
    """Turn non-register printed tokens into typed specs (literal K, imm16, offsets, fixed regs)."""
    for fm in forms.values():
        for sp in fm["specs"]:
            if "fixed" not in sp:
                continue
            tok = sp["fixed"]
            if tok == "0x%x" % KWORD:
                sp.clear()
                sp.update({"field": "lit", "kind": "Lit", "dwords": 1, "ty": "B32"})
            elif tok in ("vcc_lo", "vcc", "off", "null"):
                pass
            elif enc == "SMEM" and tok == "8":
                sp.clear()
                sp.update({"field": "sdata", "kind": "Imm", "dwords": 1})
            elif enc == "SMEM" and tok == "0x10":
                sp.clear()
                sp.update({"field": "offset", "kind": "Imm", "dwords": 1})
            elif enc in ("SOPP", "SOPK"):
                sp.clear()
                sp.update({"field": "simm16", "kind": "Imm", "dwords": 1})
            else:
                WARNINGS.append("%s %s: unparsed operand %r" % (enc, fm["text"], tok))


WARNINGS = []


def enumerate_all():
    T = {}

    # --- scalar ALU
    sk = {"sdst": "S", "ssrc0": "SS", "ssrc1": "SS"}
    T["SOP2"] = probe_forms(range(0x60), subsets({"sdst": 8, "ssrc0": 16, "ssrc1": 24}), sop2_words, sk)
    probe_types(T["SOP2"], sop2_words, ("ssrc0", "ssrc1"))
    T["SOP1"] = probe_forms(range(256), subsets({"sdst": 8, "ssrc0": 16}), sop1_words, sk)
    probe_types(T["SOP1"], sop1_words, ("ssrc0",))
    T["SOPC"] = probe_forms(range(128), subsets({"ssrc0": 16, "ssrc1": 24}), sopc_words, sk)
    probe_types(T["SOPC"], sopc_words, ("ssrc0", "ssrc1"))
    for enc, rng, build, fields in (("SOPK", range(0x1D), sopk_words, {"sdst": 8}), ("SOPP", range(128), sopp_words, {})):
        # Some opcodes decode only with a zero immediate (s_barrier, s_code_end...).
        variants = [dict(fs, simm16=3) for fs in subsets(fields)] + [dict(fs, simm16=0) for fs in subsets(fields)]
        forms = probe_forms(rng, variants, build, sk)
        for op, fm in forms.items():
            t0, t3, tn = disassemble([build(op, dict(fm["fs"], simm16=v)) for v in (0, 3, 0xFFF3)])
            fm["imm"] = imm_style(t0, t3, tn)
            if fm["imm"] in ("Waitcnt", "Depctr"):
                fm["specs"] = [{"field": "simm16", "kind": "Imm", "dwords": 1}]
                fm["mods"] = []
        T[enc] = forms
        fix_fixed(forms, enc)

    # --- scalar memory
    T["SMEM"] = probe_forms(range(256), subsets({"sdata": 8, "sbase": 16}), lambda op, f: smem_words(op, dict(f, offset=0x10)), {"sdata": "S", "sbase": "S"})
    fix_fixed(T["SMEM"], "SMEM")
    cpol = [("glc", {"glc": 1}), ("dlc", {"dlc": 1})]
    probe_cpol(T["SMEM"], lambda op, f: smem_words(op, dict(f, offset=0x10)), cpol)

    # --- vector ALU, 32-bit encodings
    vk = {"vdst": "D", "src0": "VS", "vsrc1": "V", "sdst2": "S"}
    T["VOP1"] = probe_forms(range(256), subsets({"vdst": 10, "src0": 0x114}), vop1_words, vk)
    probe_types(T["VOP1"], vop1_words, ("src0",))
    T["VOP2"] = probe_forms(range(63), subsets({"vdst": 10, "src0": 0x114, "vsrc1": 30}), vop2_words, vk)
    fix_fixed(T["VOP2"], "VOP2")
    probe_types(T["VOP2"], vop2_words, ("src0",))
    T["VOPC"] = probe_forms(range(256), subsets({"src0": 0x114, "vsrc1": 30}), vopc_words, vk)
    probe_types(T["VOPC"], vopc_words, ("src0",))

    # --- VOP3 / VOP3P
    v3k = {"vdst": "D", "sdst2": "S", "src0": "VS", "src1": "VS", "src2": "VS"}
    acc = lambda op, fs, t: fs.get("sdst2", 0) == 0 or "s50" in t
    T["VOP3"] = probe_forms(range(1024), subsets({"vdst": 10, "sdst2": 50, "src0": 0x114, "src1": 0x11E, "src2": 0x128}), vop3_words, v3k, acc)
    fix_fixed(T["VOP3"], "VOP3")
    probe_types(T["VOP3"], vop3_words, ("src0", "src1", "src2"))
    a = {k: v for k, v in T["VOP3"].items() if not v["fs"].get("sdst2")}
    b = {k: v for k, v in T["VOP3"].items() if v["fs"].get("sdst2")}
    negs = [("neg%d" % i, {"neg": 1 << i}) for i in range(3)]
    abss = [("abs%d" % i, {"abs": 1 << i}) for i in range(3)]
    # op_sel has one bit per source plus bit 3 for the destination; an opcode
    # with fewer sources rejects the extra bits, so try several masks.
    opsels = [("opsel%d" % m, {"opsel": m}) for m in (15, 11, 9, 7, 3, 1)]
    probe_mods(a, vop3_words, [("clamp", {"clamp": 1}), ("omod", {"omod": 1})] + opsels + negs + abss, {"clamp": 1, "omod": 1, "neg": 7, "abs": 7, "opsel": 15})
    probe_mods(b, vop3_words, [("clamp", {"clamp": 1}), ("omod", {"omod": 1})] + negs, {"clamp": 1, "omod": 1, "neg": 7})
    T["VOP3P"] = probe_forms(range(128), subsets({"vdst": 10, "src0": 0x114, "src1": 0x11E, "src2": 0x128}), vop3p_words, v3k)
    probe_types(T["VOP3P"], vop3p_words, ("src0", "src1", "src2"))
    probe_mods(T["VOP3P"], vop3p_words, [("clamp", {"clamp": 1}), ("opsel", {"opsel": 7}), ("opselhi", {"opsel_hi": 0}), ("neglo", {"neg": 7}), ("neghi", {"neg_hi": 7})], {"clamp": 1, "opsel": 7, "opsel_hi": 0, "neg": 7, "neg_hi": 7})

    # --- SDWA / DPP16 / DPP8 forms of VOP1, VOP2, VOPC
    sels = 6 << 8 | 6 << 16 | 6 << 24
    for enc, base in (("VOP1", vop1_words), ("VOP2", vop2_words), ("VOPC", vopc_words)):
        sdwa_base = {"VOP1": 6 << 8 | 6 << 16, "VOP2": sels, "VOPC": 6 << 16 | 6 << 24 | (0x80 | 50) << 8}[enc]
        ek = {"vdst": "D", "src0": "V8", "vsrc1": "V", "sdst2": "S"}
        forms = {}
        for op, fm in T[enc].items():
            fs = {k: v for k, v in fm["fs"].items() if k != "lit"}
            forms[op] = dict(fs, src0=20 if fs.get("src0") else 0, sdwa=sdwa_base, sdst2=50)
        build = lambda op, f, base=base: sdwa_words(base, op, f)
        sd = {}
        for op, fs in forms.items():
            sd.update({op: fm for op, fm in probe_forms([op], [fs], build, ek).items()})
        for fm in sd.values():
            fm["specs"] = [s for s in fm["specs"] if s.get("field") != "sdwa"]
        sm = [("clamp", {"sdwa": sdwa_base | 1 << 13}), ("omod", {"sdwa": sdwa_base | 1 << 14})]
        sm += [("sext0", {"sdwa": sdwa_base | 1 << 19}), ("neg0", {"sdwa": sdwa_base | 1 << 20}), ("abs0", {"sdwa": sdwa_base | 1 << 21})]
        sm += [("sext1", {"sdwa": sdwa_base | 1 << 27}), ("neg1", {"sdwa": sdwa_base | 1 << 28}), ("abs1", {"sdwa": sdwa_base | 1 << 29})]
        probe_mods(sd, build, sm, {"sdwa": sdwa_base | 1 << 13 | 1 << 14})
        T[enc + "_SDWA"] = sd
        copy_types(sd, T[enc])

        dpp_base = 0xE4 << 8 | 0xF << 24 | 0xF << 28
        dforms = {}
        for op, fm in T[enc].items():
            fs = {k: v for k, v in fm["fs"].items() if k != "lit"}
            fs = dict(fs, src0=20 if fs.get("src0") else 0, dpp=dpp_base)
            dforms.update(probe_forms([op], [fs], lambda op, f, base=base: dpp_words(base, op, f), ek))
        dbuild = lambda op, f, base=base: dpp_words(base, op, f)
        dm = [("neg0", {"dpp": dpp_base | 1 << 20}), ("abs0", {"dpp": dpp_base | 1 << 21}), ("neg1", {"dpp": dpp_base | 1 << 22}), ("abs1", {"dpp": dpp_base | 1 << 23})]
        dm += [("bc", {"dpp": dpp_base | 1 << 19}), ("fi", {"dpp": dpp_base | 1 << 18})]
        probe_mods(dforms, dbuild, dm, {"dpp": dpp_base | 1 << 19 | 1 << 18})
        T[enc + "_DPP"] = dforms
        copy_types(dforms, T[enc])

        lanes = sum(i << (3 * i) for i in range(8)) << 8
        eforms = {}
        for op, fm in T[enc].items():
            fs = {k: v for k, v in fm["fs"].items() if k != "lit"}
            fs = dict(fs, src0=20 if fs.get("src0") else 0, dpp=lanes)
            eforms.update(probe_forms([op], [fs], lambda op, f, base=base: dpp_words(base, op, f, 0xE9), ek))
        for fm in eforms.values():
            fm["modlist"] = [mod_name(m) for m in fm["mods"] if mod_name(m)] + ["Fi"]
        T[enc + "_DPP8"] = eforms
        copy_types(eforms, T[enc])

    # --- LDS
    dk = {"vdst": "V", "addr": "V", "data0": "V", "data1": "V"}
    dsv = [dict(fs, offset0=1, offset1=2) for fs in subsets({"vdst": 10, "addr": 20, "data0": 30, "data1": 40})]
    dsv += subsets({"vdst": 10, "addr": 20, "data0": 30, "data1": 40})
    T["DS"] = probe_forms(range(256), dsv, ds_words, dk)
    # GWS instructions (ds_gws_*) exist only with the gds bit set.
    gds_only = [op for op in range(256) if op not in T["DS"]]
    T["DS"].update(probe_forms(gds_only, [dict(fs, gds=1) for fs in dsv], ds_words, dk))
    for op, fm in T["DS"].items():
        t = disassemble([ds_words(op, dict(fm["fs"], gds=1))])[0]
        fm["gds"] = bool(t and t.endswith(" gds"))
        fm["dsoff"] = ds_offset_style(fm)

    # --- FLAT / GLOBAL / SCRATCH
    fk = {"vdst": "V", "addr": "V", "data": "V", "saddr": "S"}
    for seg, enc in ((0, "FLAT"), (1, "SCRATCH"), (2, "GLOBAL")):
        build = lambda op, f, seg=seg: flat_words(op, dict(f, seg=seg))
        T[enc] = probe_forms(range(128), subsets({"vdst": 10, "addr": 20, "data": 30}), build, fk)
        probe_cpol(T[enc], build, [("glc", {"glc": 1}), ("slc", {"slc": 1}), ("dlc", {"dlc": 1})])
        atomics_rtn(T[enc], build, fk)
        if seg:
            build2 = lambda op, f, seg=seg: flat_words(op, dict(f, seg=seg, saddr=48))
            fs_list = [dict(fs, saddr=48) for fs in subsets({"vdst": 10, "addr": 20, "data": 30})]
            T[enc + "_SADDR"] = probe_forms(range(128), fs_list, build2, fk)
            probe_cpol(T[enc + "_SADDR"], build2, [("glc", {"glc": 1}), ("slc", {"slc": 1}), ("dlc", {"dlc": 1})])
            atomics_rtn(T[enc + "_SADDR"], build2, fk)

    # --- MUBUF
    mk = {"vdata": "V", "vaddr": "V", "srsrc": "S", "soffset": "SS"}
    # Cache-invalidate opcodes (buffer_gl0_inv) decode only with every field zero.
    mvars = subsets({"vdata": 10, "vaddr": 20, "srsrc": 16, "soffset": 24})
    mvars += [dict(fs, offen=0) for fs in subsets({"vdata": 10, "vaddr": 20, "srsrc": 16, "soffset": 24})]
    T["MUBUF"] = probe_forms(range(256), mvars, mubuf_words, mk)
    probe_cpol(T["MUBUF"], mubuf_words, [("glc", {"glc": 1}), ("slc", {"slc": 1}), ("dlc", {"dlc": 1})])
    return T


def copy_types(forms, base_forms):
    for op, fm in forms.items():
        bt = {s.get("field"): s.get("ty") for s in base_forms[op]["specs"]}
        for s in fm["specs"]:
            if s.get("field") in bt and bt[s.get("field")]:
                s.setdefault("ty", bt[s.get("field")])


def probe_cpol(forms, build, probes):
    for op, fm in forms.items():
        texts = disassemble([build(op, dict(fm["fs"], **over)) for _, over in probes])
        fm["cpol"] = [name for (name, _), t in zip(probes, texts) if t and (" " + name) in t]


def atomics_rtn(forms, build, kinds):
    """FLAT atomics print a returned value only with glc: record that form's operands."""
    for op, fm in forms.items():
        if "atomic" not in fm["mnem"]:
            continue
        fs = dict(fm["fs"], vdst=10)
        t = disassemble([build(op, dict(fs, glc=1))])[0]
        if t:
            mnem, specs, _ = describe(t, fs, kinds)
            fm["rtn_specs"] = specs


def ds_offset_style(fm):
    mods = fm["mods"]
    if any(m.startswith("offset0:") or m.startswith("offset1:") for m in mods):
        return "Offset8x2"
    if any(m.startswith("offset:swizzle") for m in mods) or "swizzle" in fm["mnem"]:
        return "Swizzle"
    if any(m.startswith("offset:") for m in mods):
        return "Offset16"
    return "NoOffset" if fm["fs"].get("offset0") else "Unknown"


# ----------------------------------------------------------------------------
# Post-processing: roles, types of vsrc1, flags


def finish(T):
    # Packed 16-bit integer sources print like 32-bit ones; name them by the
    # operation (a semantic fact the printing cannot show).
    for fm in T["VOP3P"].values():
        if re.search(r"_[iub]16$", canonical(fm["mnem"])):
            for s in fm["specs"]:
                if s.get("ty") == "B32":
                    s["ty"] = "V2B16"
    for enc, forms in T.items():
        for op, fm in forms.items():
            assign_roles(enc, fm)
            if fm.get("rtn_specs"):
                assign_roles(enc, {"mnem": fm["mnem"], "specs": fm["rtn_specs"]})
    # vsrc1 of VOP2/VOPC forms: SDWA can put an SGPR or constant there; take
    # the type of src1 in the promoted VOP3 form.
    for enc, base in (("VOP2", 0x100), ("VOPC", 0)):
        for suffix in ("", "_SDWA", "_DPP", "_DPP8"):
            for op, fm in T.get(enc + suffix, {}).items():
                v3 = T["VOP3"].get(base + op)
                ty = None
                if v3:
                    for s in v3["specs"]:
                        if s.get("field") == "src1":
                            ty = s.get("ty")
                for s in fm["specs"]:
                    if s.get("field") == "vsrc1" and ty:
                        s["ty"] = ty


def form_flags(enc, fm, names):
    canon = canonical(fm["mnem"])
    fl = []
    if enc == "VOP3":
        if canon in names["VOP1"]:
            fl.append("PROMOTED_VOP1")
        elif canon in names["VOP2"]:
            fl.append("PROMOTED_VOP2")
        elif canon in names["VOPC"]:
            fl.append("PROMOTED_VOPC")
    if enc in ("SMEM", "DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF") or enc.startswith(("FLAT", "GLOBAL", "SCRATCH")):
        if "load" in canon or canon.startswith(("ds_read", "s_memtime", "s_memrealtime")):
            fl.append("LOAD")
        if "store" in canon or canon.startswith("ds_write"):
            fl.append("STORE")
        if "atomic" in canon:
            fl.append("ATOMIC")
        for c in fm.get("cpol", []):
            # By position: the first, second and third cache-policy bits (glc/sc0,
            # slc/nt, dlc/scc/sc1).
            fl.append({"sc0": "GLC", "nt": "SLC", "scc": "DLC", "sc1": "DLC"}.get(c, c.upper()))
    if enc == "DS":
        style = fm.get("dsoff")
        fl.append({"Offset16": "DS_OFFSET16", "Offset8x2": "DS_OFFSET8X2", "Swizzle": "DS_SWIZZLE"}.get(style, "DS_NO_OFFSET"))
        if fm.get("gds"):
            fl.append("GDS")
    if canon.startswith("v_cmpx_"):
        fl.append("WRITES_EXEC")
    if fm.get("mai"):
        fl.append("MAI")
    if fm.get("imm") == "Dec" and (canon.startswith(("s_branch", "s_cbranch", "s_call", "s_subvector_loop"))):
        fl.append("BRANCH")
    return " | ".join(fl) if fl else "0"


def op_variant(name):
    """Rust variant name of a canonical mnemonic: v_add_f32 -> VAddF32."""
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[_.]", name) if p)


def rs_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


FIELD_RS = {
    "sdst": "Sdst", "ssrc0": "Ssrc0", "ssrc1": "Ssrc1", "simm16": "Simm16", "lit": "Literal",
    "vdst": "Vdst", "sdst2": "Sdst2", "src0": "Src0", "src1": "Src1", "src2": "Src2", "vsrc1": "Vsrc1",
    "sdata": "Sdata", "sbase": "Sbase", "offset": "Offset", "addr": "Addr", "data0": "Data0",
    "data1": "Data1", "data": "Data", "saddr": "Saddr", "vaddr": "Vaddr", "vdata": "Vdata",
    "srsrc": "Srsrc", "soffset": "Soffset",
}
FIXED_RS = {"vcc_lo": "VccLo", "vcc": "Vcc", "off": "Off", "null": "Null"}


class Unprintable(Exception):
    """A probe printed an operand this table cannot describe (e.g. interpolation attributes)."""


SKIPPED = []


def spec_rs(sp):
    role = sp["role"].replace("Dst(", "Role::Dst(").replace("Src(", "Role::Src(")
    if role == "None":
        role = "Role::None"
    if "fixed" in sp:
        tok = sp["fixed"]
        if tok not in FIXED_RS:
            raise Unprintable(tok)
        return "fixed(%s, Field::%s)" % (role, FIXED_RS[tok])
    sm = sp.get("srcmods", [])
    smb = " | ".join("SRC_%s" % m.upper() for m in sorted(set(sm))) or "0"
    ty = sp.get("ty") or "None"
    if ty.startswith("UNKNOWN"):
        raise SystemExit("unclassified operand type: %r" % sp)
    return "o(%s, Field::%s, Kind::%s, %d, Ty::%s, %s)" % (role, FIELD_RS[sp["field"]], sp["kind"], sp["dwords"], ty, smb)


def mod_rs(m):
    mm = re.fullmatch(r"(\w+)\((\d+)\)", m)
    if mm:
        return "Mod::%s(%s)" % (mm.group(1), mm.group(2))
    return "Mod::" + m


TABLE_SIZES = {
    "SOP2": 128, "SOPK": 32, "SOP1": 256, "SOPC": 128, "SOPP": 128, "SMEM": 256, "VOP1": 256, "VOP2": 64,
    "VOPC": 256, "VOP3": 1024, "VOP3P": 128, "VOP1_SDWA": 256, "VOP2_SDWA": 64, "VOPC_SDWA": 256,
    "VOP1_DPP": 256, "VOP2_DPP": 64, "VOP1_DPP8": 256, "VOP2_DPP8": 64,
    "DS": 256, "FLAT": 128, "SCRATCH": 128, "SCRATCH_SADDR": 128, "SCRATCH_SVS": 128, "SCRATCH_ST": 128,
    "GLOBAL": 128, "GLOBAL_SADDR": 128, "MUBUF": 256,
}

# Operations that no probe table yields but the decoder names (lengths only).
EXTRA_OPS = [
    ("v_illegal", "VIllegal", "the all-zero word, which llvm-objdump prints as v_illegal"),
    ("exp", "Exp", "EXP encoding (graphics export), decoded for length only"),
    ("mimg", "Mimg", "MIMG encoding (image memory), decoded for length only"),
    ("mtbuf", "Mtbuf", "MTBUF encoding (typed buffer memory), decoded for length only"),
    ("vintrp", "Vintrp", "VINTRP encoding (parameter interpolation), decoded for length only"),
]


def hwreg_names():
    ids = list(range(64))
    texts = disassemble([[0xB9000000 | 8 << 16 | (31 << 11) | i] for i in ids])  # s_getreg_b32 s8, hwreg(i)
    out = []
    for i, t in zip(ids, texts):
        m = re.search(r"hwreg\((\w+)\)", t or "")
        if m and not m.group(1).isdigit():
            out.append((i, m.group(1)))
    return out


def sendmsg_table():
    """Symbolic spellings of s_sendmsg by (message id, operation, stream) bits
    (mask 0x37f); the printer falls back to numeric forms for the rest."""
    vals = [v for v in range(1024) if not v & 0x80]
    texts = disassemble([[0xBF900000 | v] for v in vals])
    out = []
    for v, t in zip(vals, texts):
        arg = t.split(" ", 1)[1]
        if arg.startswith("sendmsg(") and not arg[8].isdigit():
            out.append((v, arg))
    return out


def depctr_fields():
    """s_waitcnt_depctr fields as (name, shift, width), in print order.

    All-ones fields are the defaults; clearing one bit of the all-default value
    shows which field that bit belongs to."""
    base = None
    for v in range(0x10000 - 1, -1, -1):
        t = disassemble([[0xBFA30000 | v]])[0]
        if "depctr_" in t:
            base = v
            break
    order = re.findall(r"(depctr_\w+)\((\d+)\)", disassemble([[0xBFA30000 | base]])[0])
    bits = {}
    texts = disassemble([[0xBFA30000 | (base ^ (1 << b))] for b in range(16)])
    for b, t in enumerate(texts):
        f = re.findall(r"(depctr_\w+)\((\d+)\)", t)
        if len(f) == 1:
            bits.setdefault(f[0][0], []).append(b)
    out = []
    for name, _ in order:
        bs = sorted(bits[name])
        out.append((name, bs[0], len(bs)))
    return out


# ----------------------------------------------------------------------------
# GFX9 layout (CDNA2 gfx90a, CDNA3 gfx942): its word builders and enumeration.
# The field layouts are those of AMD's CDNA ISA documents (LLVM's .td encoding
# classes agree); what each opcode is comes from the disassembler, as for gfx10.
# Differences from gfx10: VOP3 is 0xD0xx (no literals), VOP3P 0xD38x with the MAI
# (matrix) forms in its upper half, SMEM has imm/soffset_en bits and a 21-bit signed
# offset, DS has its opcode at bit 17 and an AGPR bit, FLAT has a 13-bit offset, no
# NULL saddr (0x7f is "off") and an AGPR bit, the third cache-policy bit is bit 25
# (FLAT) or 15 (MUBUF), there is no DPP8 nor `fi`, and s_waitcnt's lgkmcnt has 4 bits.

SAOFF = 0x7F  # gfx9's "no scalar address"


def smem9_words(op, f):
    w0 = 0xC0000000 | op << 18 | f.get("imm", 1) << 17 | f.get("glc", 0) << 16 | f.get("soe", 0) << 14 | f.get("sdata", 0) << 6 | (f.get("sbase", 0) >> 1)
    w1 = f.get("soffset", 0) << 25 | (f.get("offset", 0) & 0x1FFFFF)
    return [w0, w1]


def vop3_9_words(op, f):
    w0 = 0xD0000000 | op << 16 | f.get("clamp", 0) << 15 | f.get("opsel", 0) << 11 | f.get("abs", 0) << 8 | f.get("sdst2", 0) << 8 | f.get("vdst", 0)
    w1 = f.get("neg", 0) << 29 | f.get("omod", 0) << 27 | f.get("src2", 0) << 18 | f.get("src1", 0) << 9 | f.get("src0", 0)
    return [w0, w1]


def vop3p_9_words(op, f):
    oph = f.get("opsel_hi", 7)
    w0 = 0xD3800000 | op << 16 | f.get("clamp", 0) << 15 | (oph >> 2 & 1) << 14 | f.get("opsel", 0) << 11 | f.get("neg_hi", 0) << 8 | f.get("vdst", 0)
    w1 = f.get("neg", 0) << 29 | (oph & 3) << 27 | f.get("src2", 0) << 18 | f.get("src1", 0) << 9 | f.get("src0", 0)
    return [w0, w1]


def mai_words(op, f):
    """VOP3P-MAI: acc_cd (bit 15: vdst and src2 are AGPRs), abid, cbsz; blgp and the
    AGPR bits of src0/src1 in the second word."""
    w0 = 0xD3800000 | op << 16 | f.get("acc_cd", 0) << 15 | f.get("abid", 0) << 11 | f.get("cbsz", 0) << 8 | f.get("vdst", 0)
    w1 = f.get("blgp", 0) << 29 | f.get("acc", 0) << 27 | f.get("src2", 0) << 18 | f.get("src1", 0) << 9 | f.get("src0", 0)
    return [w0, w1]


def ds9_words(op, f):
    w0 = 0xD8000000 | f.get("acc", 0) << 25 | op << 17 | f.get("gds", 0) << 16 | f.get("offset1", 0) << 8 | f.get("offset0", 0)
    w1 = f.get("vdst", 0) << 24 | f.get("data1", 0) << 16 | f.get("data0", 0) << 8 | f.get("addr", 0)
    return [w0, w1]


def flat9_words(op, f):
    seg = f["seg"]
    w0 = 0xDC000000 | f.get("scc", 0) << 25 | op << 18 | f.get("slc", 0) << 17 | f.get("glc", 0) << 16 | seg << 14 | f.get("sve", 0) << 13 | (f.get("offset", 0) & 0x1FFF)
    w1 = f.get("vdst", 0) << 24 | f.get("acc", 0) << 23 | f.get("saddr", SAOFF if seg else 0) << 16 | f.get("data", 0) << 8 | f.get("addr", 0)
    return [w0, w1]


def mubuf9_words(op, f):
    w0 = 0xE0000000 | op << 18 | f.get("slc", 0) << 17 | f.get("lds", 0) << 16 | f.get("scc", 0) << 15 | f.get("glc", 0) << 14 | f.get("idxen", 0) << 13 | f.get("offen", 1) << 12 | f.get("offset", 0)
    w1 = f.get("soffset", 0) << 24 | f.get("acc", 0) << 23 | (f.get("srsrc", 0) >> 2) << 16 | f.get("vdata", 0) << 8 | f.get("vaddr", 0)
    return [w0, w1]


def is_mai(mnem):
    return mnem.startswith(("v_mfma", "v_smfmac"))


# The gfx1030 tables' source types by (canonical mnemonic, field), for gfx9 VOP3 forms
# whose types printing cannot tell (gfx9's VOP3 takes no literal).
GFX10_TYPES = None


def gfx10_types():
    global GFX10_TYPES
    if GFX10_TYPES is None:
        GFX10_TYPES = {}
        path = table_path("gfx1030")
        if os.path.exists(path):
            for m in re.finditer(r'mnemonic: "([^"]+)",\n        operands: &\[(.*?)\],\n', open(path).read()):
                for f, ty in re.findall(r"Field::(\w+), Kind::\w+, \d+, Ty::(\w+)", m.group(2)):
                    if ty != "None":
                        GFX10_TYPES.setdefault((canonical(m.group(1)), f.lower()), ty)
    return GFX10_TYPES


def name_type(mnem, field, packed):
    """A source's constant type from the operation's name (the last resort)."""
    canon = canonical(mnem)
    parts = canon.split("_")
    types = [p for p in parts if re.fullmatch(r"[fiub](16|32|64)|bf16", p)]
    src = types[-1] if types else "b32"
    if packed:
        return "V2F16" if src in ("f16", "bf16") else ("V2B16" if src.endswith("16") else "B32")
    if src == "f16":
        return "F16"
    if src.endswith("16"):
        return "B16"
    if src == "f64":
        return "F64"
    if src.endswith("64"):
        return "B64"
    return "B32"


def probe_types9(forms, build, slots, e32, packed=False):
    """gfx9 VOP3/VOP3P sources: only inline constants print there, and 1/(2pi) tells
    16-bit integer and 64-bit slots from the rest; the others take the type of the same
    operation's e32 form, else gfx1030's, else the one its name says."""
    jobs = []
    for op, fm in forms.items():
        for idx, sp in enumerate(fm["specs"]):
            if sp.get("field") in slots and sp["kind"] in ("Vs", "Ss", "V", "S"):
                jobs.append((op, idx, dict(fm["fs"], **{sp["field"]: 248})))
    texts = disassemble([build(op, fs) for op, _, fs in jobs])
    for (op, idx, _), t in zip(jobs, texts):
        fm = forms[op]
        sp = fm["specs"][idx]
        tok = None
        if t:
            _, ops_, _ = parse_inst(t)
            if idx < len(ops_):
                tok = strip_mods(strip_invalid(ops_[idx])[0])[0]
                tok = re.sub(r"/\*[^*]*\*/", "", tok).replace("~", " ")
        canon = canonical(fm["mnem"])
        field = sp["field"]
        if tok is None:
            continue
        if sp["kind"] == "V":
            sp["kind"] = "Vs"
        if sp["kind"] == "S":
            sp["kind"] = "Ss"
        if tok == "0x3118":
            ty = "B16"
        elif tok == "0.15915494309189532":
            ty = "F64" if "f64" in canon else "B64"
        else:
            ty = e32.get((canon, "vsrc1" if field == "src1" else field)) or e32.get((canon, field))
            ty = ty or gfx10_types().get((canon, field))
            if ty in (None, "B16", "F64", "B64"):
                ty = name_type(fm["mnem"], field, packed)
        sp["ty"] = ty


def vop3p_mods9(forms):
    """VOP3P modifiers on gfx9: two-source forms (the packed f32 ones) refuse bit 2 of
    op_sel and the neg fields, so each is probed with three masks and the order taken from
    a probe every form accepts."""
    probes = [("clamp", {"clamp": 1})]
    for m in (7, 3, 1):
        probes += [("opsel%d" % m, {"opsel": m}), ("neglo%d" % m, {"neg": m}), ("neghi%d" % m, {"neg_hi": m})]
    probes.append(("opselhi", {"opsel_hi": 0}))
    probe_mods(forms, vop3p_9_words, probes, {"clamp": 1, "opsel": 3, "opsel_hi": 0, "neg": 3, "neg_hi": 3})


def enumerate_gfx9():
    T = {}
    is940 = MCPU.startswith("gfx94")

    # --- scalar ALU (the gfx10 words)
    sk = {"sdst": "S", "ssrc0": "SS", "ssrc1": "SS"}
    # SOP2 opcodes 0x60 up are SOPK's words.
    T["SOP2"] = probe_forms(range(0x60), subsets({"sdst": 8, "ssrc0": 16, "ssrc1": 24}), sop2_words, sk)
    probe_types(T["SOP2"], sop2_words, ("ssrc0", "ssrc1"))
    T["SOP1"] = probe_forms(range(256), subsets({"sdst": 8, "ssrc0": 16}), sop1_words, sk)
    probe_types(T["SOP1"], sop1_words, ("ssrc0",))
    T["SOPC"] = probe_forms(range(128), subsets({"ssrc0": 16, "ssrc1": 24}), sopc_words, sk)
    probe_types(T["SOPC"], sopc_words, ("ssrc0", "ssrc1"))
    # SOPK opcodes 0x1d up are SOP1/SOPC/SOPP words.
    for enc, rng, build, fields in (("SOPK", range(0x1D), sopk_words, {"sdst": 8}), ("SOPP", range(128), sopp_words, {})):
        variants = [dict(fs, simm16=3) for fs in subsets(fields)] + [dict(fs, simm16=0) for fs in subsets(fields)]
        forms = probe_forms(rng, variants, build, sk)
        for op, fm in forms.items():
            t0, t3, tn = disassemble([build(op, dict(fm["fs"], simm16=v)) for v in (0, 3, 0xFFF3)])
            fm["imm"] = imm_style(t0, t3, tn)
            if fm["imm"] in ("Waitcnt", "Depctr"):
                fm["specs"] = [{"field": "simm16", "kind": "Imm", "dwords": 1}]
                fm["mods"] = []
        T[enc] = forms
        fix_fixed(forms, enc)

    # --- scalar memory (immediate-offset form; the decoder reads the offset modes)
    T["SMEM"] = probe_forms(range(256), subsets({"sdata": 8, "sbase": 16}), lambda op, f: smem9_words(op, dict(f, offset=0x10)), {"sdata": "S", "sbase": "S"})
    fix_fixed(T["SMEM"], "SMEM")
    probe_cpol(T["SMEM"], lambda op, f: smem9_words(op, dict(f, offset=0x10)), [("glc", {"glc": 1})])

    # --- vector ALU, 32-bit encodings (as gfx10's)
    vk = {"vdst": "D", "src0": "VS", "vsrc1": "V", "sdst2": "S"}
    T["VOP1"] = probe_forms(range(256), subsets({"vdst": 10, "src0": 0x114}), vop1_words, vk)
    probe_types(T["VOP1"], vop1_words, ("src0",))
    T["VOP2"] = probe_forms(range(64), subsets({"vdst": 10, "src0": 0x114, "vsrc1": 30}), vop2_words, vk)
    fix_fixed(T["VOP2"], "VOP2")
    probe_types(T["VOP2"], vop2_words, ("src0",))
    T["VOPC"] = probe_forms(range(256), subsets({"src0": 0x114, "vsrc1": 30}), vopc_words, vk)
    probe_types(T["VOPC"], vopc_words, ("src0",))
    e32 = {}
    for enc in ("VOP1", "VOP2", "VOPC"):
        for fm in T[enc].values():
            for sp in fm["specs"]:
                if sp.get("ty"):
                    e32[(canonical(fm["mnem"]), sp["field"])] = sp["ty"]

    # --- VOP3 / VOP3P (no literals on gfx9)
    v3k = {"vdst": "D", "sdst2": "S", "src0": "VS", "src1": "VS", "src2": "VS"}
    acc = lambda op, fs, t: fs.get("sdst2", 0) == 0 or "s[50:51]" in t
    # VOP3 opcodes 0x380 up are VOP3P's encoding.
    T["VOP3"] = probe_forms(range(0x380), subsets({"vdst": 10, "sdst2": 50, "src0": 0x114, "src1": 0x11E, "src2": 0x128}), vop3_9_words, v3k, acc)
    fix_fixed(T["VOP3"], "VOP3")
    probe_types9(T["VOP3"], vop3_9_words, ("src0", "src1", "src2"), e32)
    a = {k: v for k, v in T["VOP3"].items() if not v["fs"].get("sdst2")}
    b = {k: v for k, v in T["VOP3"].items() if v["fs"].get("sdst2")}
    negs = [("neg%d" % i, {"neg": 1 << i}) for i in range(3)]
    abss = [("abs%d" % i, {"abs": 1 << i}) for i in range(3)]
    opsels = [("opsel%d" % m, {"opsel": m}) for m in (15, 11, 9, 7, 3, 1)]
    probe_mods(a, vop3_9_words, [("clamp", {"clamp": 1}), ("omod", {"omod": 1})] + opsels + negs + abss, {"clamp": 1, "omod": 1, "neg": 7, "abs": 7, "opsel": 15})
    probe_mods(b, vop3_9_words, [("clamp", {"clamp": 1}), ("omod", {"omod": 1})] + negs, {"clamp": 1, "omod": 1, "neg": 7})
    p3 = probe_forms(range(128), subsets({"vdst": 10, "src0": 0x114, "src1": 0x11E, "src2": 0x128}), vop3p_9_words, v3k)
    plain = {op: fm for op, fm in p3.items() if not is_mai(fm["mnem"])}
    probe_types9(plain, vop3p_9_words, ("src0", "src1", "src2"), e32, packed=True)
    vop3p_mods9(plain)
    # Matrix (MAI) forms, probed with every register a VGPR (the acc bits clear).
    mai_ops = [op for op, fm in p3.items() if is_mai(fm["mnem"])]
    mai = probe_forms(mai_ops, subsets({"vdst": 10, "src0": 0x114, "src1": 0x11E, "src2": 0x128}), mai_words, v3k)
    probe_types9(mai, mai_words, ("src2",), e32)
    probe_mods(mai, mai_words, [("cbsz", {"cbsz": 1}), ("abid", {"abid": 1}), ("blgp", {"blgp": 1})], {"cbsz": 1, "abid": 1, "blgp": 1})
    for fm in mai.values():
        fm["mai"] = True
    plain.update(mai)
    T["VOP3P"] = plain

    # --- SDWA and DPP forms of VOP1, VOP2, VOPC (gfx9: no DPP8, no fi)
    sels = 6 << 8 | 6 << 16 | 6 << 24
    for enc, base in (("VOP1", vop1_words), ("VOP2", vop2_words), ("VOPC", vopc_words)):
        sdwa_base = {"VOP1": 6 << 8 | 6 << 16, "VOP2": sels, "VOPC": 6 << 16 | 6 << 24 | (0x80 | 50) << 8}[enc]
        ek = {"vdst": "D", "src0": "V8", "vsrc1": "V", "sdst2": "S"}
        sd = {}
        for op, fm in T[enc].items():
            fs = {k: v for k, v in fm["fs"].items() if k != "lit"}
            fs = dict(fs, src0=20 if fs.get("src0") else 0, sdwa=sdwa_base, sdst2=50)
            sd.update(probe_forms([op], [fs], lambda op, f, base=base: sdwa_words(base, op, f), ek))
        build = lambda op, f, base=base: sdwa_words(base, op, f)
        sm = [("clamp", {"sdwa": sdwa_base | 1 << 13}), ("omod", {"sdwa": sdwa_base | 1 << 14})]
        sm += [("sext0", {"sdwa": sdwa_base | 1 << 19}), ("neg0", {"sdwa": sdwa_base | 1 << 20}), ("abs0", {"sdwa": sdwa_base | 1 << 21})]
        sm += [("sext1", {"sdwa": sdwa_base | 1 << 27}), ("neg1", {"sdwa": sdwa_base | 1 << 28}), ("abs1", {"sdwa": sdwa_base | 1 << 29})]
        probe_mods(sd, build, sm, {"sdwa": sdwa_base | 1 << 13 | 1 << 14})
        T[enc + "_SDWA"] = sd
        copy_types(sd, T[enc])

        dpp_base = 0xE4 << 8 | 0xF << 24 | 0xF << 28
        dforms = {}
        for op, fm in T[enc].items():
            fs = {k: v for k, v in fm["fs"].items() if k != "lit"}
            fs = dict(fs, src0=20 if fs.get("src0") else 0, dpp=dpp_base)
            dforms.update(probe_forms([op], [fs], lambda op, f, base=base: dpp_words(base, op, f), ek))
        dbuild = lambda op, f, base=base: dpp_words(base, op, f)
        dm = [("neg0", {"dpp": dpp_base | 1 << 20}), ("abs0", {"dpp": dpp_base | 1 << 21}), ("neg1", {"dpp": dpp_base | 1 << 22}), ("abs1", {"dpp": dpp_base | 1 << 23})]
        dm += [("bc", {"dpp": dpp_base | 1 << 19})]
        probe_mods(dforms, dbuild, dm, {"dpp": dpp_base | 1 << 19})
        T[enc + "_DPP"] = dforms
        copy_types(dforms, T[enc])

    # --- LDS
    dk = {"vdst": "V", "addr": "V", "data0": "V", "data1": "V"}
    dsv = [dict(fs, offset0=1, offset1=2) for fs in subsets({"vdst": 10, "addr": 20, "data0": 30, "data1": 40})]
    dsv += subsets({"vdst": 10, "addr": 20, "data0": 30, "data1": 40})
    T["DS"] = probe_forms(range(256), dsv, ds9_words, dk)
    gds_only = [op for op in range(256) if op not in T["DS"]]
    T["DS"].update(probe_forms(gds_only, [dict(fs, gds=1) for fs in dsv], ds9_words, dk))
    for op, fm in T["DS"].items():
        t = disassemble([ds9_words(op, dict(fm["fs"], gds=1))])[0]
        fm["gds"] = bool(t and t.endswith(" gds"))
        fm["dsoff"] = ds_offset_style(fm)

    # --- FLAT / GLOBAL / SCRATCH
    fk = {"vdst": "V", "addr": "V", "data": "V", "saddr": "S"}
    cpol = [("glc", {"glc": 1}), ("slc", {"slc": 1}), ("scc", {"scc": 1})]
    if is940:
        cpol = [("sc0", {"glc": 1}), ("nt", {"slc": 1}), ("sc1", {"scc": 1})]
    for seg, enc in ((0, "FLAT"), (1, "SCRATCH"), (2, "GLOBAL")):
        # gfx940's scratch names its vaddr with the SVE bit (no SVE: saddr only or neither).
        build = lambda op, f, seg=seg: flat9_words(op, dict(f, seg=seg, sve=1 if (seg == 1 and is940) else 0))
        T[enc] = probe_forms(range(128), subsets({"vdst": 10, "addr": 20, "data": 30}), build, fk)
        probe_cpol(T[enc], build, cpol)
        atomics_rtn(T[enc], build, fk)
        if seg:
            build2 = lambda op, f, seg=seg: flat9_words(op, dict(f, seg=seg, saddr=48))
            fs_list = [dict(fs, saddr=48) for fs in subsets({"vdst": 10, "addr": 20, "data": 30})]
            T[enc + "_SADDR"] = probe_forms(range(128), fs_list, build2, fk)
            probe_cpol(T[enc + "_SADDR"], build2, cpol)
            atomics_rtn(T[enc + "_SADDR"], build2, fk)
    if is940:
        # Both addresses (SVS) and neither (ST).
        build = lambda op, f: flat9_words(op, dict(f, seg=1, sve=1, saddr=48))
        T["SCRATCH_SVS"] = probe_forms(range(128), [dict(fs, saddr=48) for fs in subsets({"vdst": 10, "addr": 20, "data": 30})], build, fk)
        probe_cpol(T["SCRATCH_SVS"], build, cpol)
        build = lambda op, f: flat9_words(op, dict(f, seg=1, sve=0))
        T["SCRATCH_ST"] = probe_forms(range(128), subsets({"vdst": 10, "data": 30}), build, fk)
        probe_cpol(T["SCRATCH_ST"], build, cpol)

    # --- MUBUF
    mk = {"vdata": "V", "vaddr": "V", "srsrc": "S", "soffset": "SS"}
    mvars = subsets({"vdata": 10, "vaddr": 20, "srsrc": 16, "soffset": 24})
    mvars += [dict(fs, offen=0) for fs in subsets({"vdata": 10, "vaddr": 20, "srsrc": 16, "soffset": 24})]
    T["MUBUF"] = probe_forms(range(128), mvars, mubuf9_words, mk)
    probe_cpol(T["MUBUF"], mubuf9_words, cpol)
    return T


def gpr_idx_forms(T):
    """gfx9's VGPR index mode: `s_set_gpr_idx_on sN, gpr_idx(...)` (SOPC, the mode in the ssrc1
    field) and `s_set_gpr_idx_mode gpr_idx(...)` (SOPP) print their 4-bit mode symbolically."""
    for op, fm in T["SOPC"].items():
        t = disassemble([sopc_words(op, dict(fm["fs"], ssrc1=1))])[0]
        if t and "gpr_idx(SRC0)" in t:
            fm["specs"] = [s for s in fm["specs"] if s.get("field") == "ssrc0"]
            fm["specs"].append({"field": "ssrc1", "kind": "Imm", "dwords": 1})
            fm["imm"] = "GprIdx"
    for op, fm in T["SOPP"].items():
        t = disassemble([sopp_words(op, dict(fm["fs"], simm16=1))])[0]
        if t and "gpr_idx(SRC0)" in t:
            fm["specs"] = [{"field": "simm16", "kind": "Imm", "dwords": 1}]
            fm["mods"] = []
            fm["imm"] = "GprIdx"


def gfx9_extras(T):
    """The symbolic names gfx9's printer uses (hwreg, sendmsg; no depctr)."""
    getreg = [op for op, fm in T["SOPK"].items() if fm["mnem"] == "s_getreg_b32"]
    hw = []
    if getreg:
        ids = list(range(64))
        texts = disassemble([[0xB0000000 | getreg[0] << 23 | 8 << 16 | (31 << 11) | i] for i in ids])
        for i, t in zip(ids, texts):
            m = re.search(r"hwreg\((\w+)\)", t or "")
            if m and not m.group(1).isdigit():
                hw.append((i, m.group(1)))
    return hw


def probe(mcpu):
    """Every table of `mcpu`, probed with its layout's word builders."""
    global MCPU, SENTINEL, SENTINEL_TEXT
    MCPU = mcpu
    layout = PROCESSORS[mcpu]
    if layout not in ("gfx10", "gfx9"):
        raise SystemExit("%s: no word builders for the %s encoding layout yet" % (mcpu, layout))
    if layout == "gfx9":
        # s_mov_b32 s100, literal (gfx9 has no s105 and numbers SOP1 from s_mov_b32 = 0).
        SENTINEL, SENTINEL_TEXT = [0xBEE400FF, 0x5A5A5A5A], "s_mov_b32 s100, 0x5a5a5a5a"
    else:
        SENTINEL, SENTINEL_TEXT = [0xBEE903FF, 0x5A5A5A5A], "s_mov_b32 s105, 0x5a5a5a5a"
    cache = os.environ.get("EMU_GEN_CACHE")  # development aid: reuse probe results
    if cache:
        cache = "%s.%s" % (cache, mcpu)
    if cache and os.path.exists(cache):
        import pickle

        T = pickle.load(open(cache, "rb"))
        if layout == "gfx9":
            gpr_idx_forms(T)
    else:
        T = enumerate_gfx9() if layout == "gfx9" else enumerate_all()
        if layout == "gfx9":
            gpr_idx_forms(T)
        if cache:
            import pickle

            pickle.dump(T, open(cache, "wb"))
    finish(T)
    return T


def table_ops(T):
    """The canonical names of the operations `T` decodes (the length-only ones included)."""
    ops = set(n for n, _, _ in EXTRA_OPS)
    for forms in T.values():
        for fm in forms.values():
            ops.add(canonical(fm["mnem"]))
    return sorted(ops)


EXTRA_DOCS = {n: doc for n, _, doc in EXTRA_OPS}


def generate_ops(names, owners):
    """ops.rs: the one Op space (sorted by name, so `Op::from_name` can search it)."""
    names = sorted(names)
    variants = {o: op_variant(o) for o in names}
    if len(set(variants.values())) != len(names):
        raise SystemExit("Op variant names collide")
    L = []
    w = L.append
    w("// @generated by scripts/gen-emu-tables.py: the operations of %s." % ", ".join(sorted(owners)))
    w("// Do not edit. Regenerate: python3 scripts/gen-emu-tables.py; verify: --check.")
    w("//! The one operation space of every ISA the decoder knows: the union of the")
    w("//! operations in each processor's generated tables, sorted by name. An `Op` is")
    w("//! what the decoder produces and what the engine's handler tables are indexed")
    w("//! by; which processors have an operation is in their tables (`Isa::ops`).")
    w("")
    w("/// One operation. The e32, e64 (VOP3), SDWA and DPP forms of the same")
    w("/// operation share a variant, so semantics can key on `Op` alone.")
    w("#[allow(missing_docs)]")
    w("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]")
    w("#[repr(u16)]")
    w("pub enum Op {")
    for o in names:
        if o in EXTRA_DOCS:
            doc = EXTRA_DOCS[o]
            w("    /// %s" % doc[:1].upper() + doc[1:] + ".")
        w("    %s," % variants[o])
    w("}")
    w("")
    w("impl Op {")
    w("    /// Number of operations.")
    w("    pub const COUNT: usize = %d;" % len(names))
    w("    /// Every operation, by discriminant.")
    w("    pub const ALL: [Op; %d] = [" % len(names))
    for o in names:
        w("        Op::%s," % variants[o])
    w("    ];")
    w("}")
    w("")
    w("/// Canonical mnemonic of each `Op`, indexed by its discriminant (sorted).")
    w("pub(crate) static OP_NAMES: [&str; %d] = [" % len(names))
    for n in names:
        w("    %s," % rs_str(n))
    w("];")
    return "\n".join(L) + "\n"


def generate_tables(mcpu, T):
    """<mcpu>_tables.rs: the encoding tables of one processor."""
    names = {enc: {canonical(fm["mnem"]) for fm in T[enc].values()} for enc in ("VOP1", "VOP2", "VOPC")}
    ops = table_ops(T)
    variants = {o: op_variant(o) for o in ops}
    L = []
    w = L.append
    w("// @generated by scripts/gen-emu-tables.py from llvm-mc-19 --disassemble -mcpu=%s." % mcpu)
    w("// Do not edit. Regenerate: python3 scripts/gen-emu-tables.py --mcpu %s; verify: --check." % mcpu)
    w("//! %s opcode tables: every opcode of every decoded encoding, with its" % mcpu)
    w("//! printed mnemonic, operand layout (fields, register widths, constant types)")
    w("//! and printed modifiers, as found by probing the LLVM disassembler.")
    w("")
    w("use super::ops::Op;")
    w("use super::spec::*;")
    w("")
    for enc, size in TABLE_SIZES.items():
        forms = T.get(enc, {})
        w("/// %s opcodes (%d defined)." % (enc, len(forms)))
        w("pub(crate) static %s: [Option<OpInfo>; %d] = {" % (enc, size))
        w("    let mut t: [Option<OpInfo>; %d] = [None; %d];" % (size, size))
        for op in sorted(forms):
            fm = forms[op]
            try:
                if fm.get("imm") == "UNKNOWN":
                    raise Unprintable("immediate printed in no known style")
                specs = ", ".join(spec_rs(s) for s in fm["specs"])
                alt = ", ".join(spec_rs(s) for s in fm.get("rtn_specs", []))
            except Unprintable as e:
                SKIPPED.append("%s 0x%x %s (operand %s)" % (enc, op, fm["mnem"], e))
                continue
            mods = ", ".join(mod_rs(m) for m in fm.get("modlist", []) or [])
            w("    t[0x%x] = Some(OpInfo {" % op)
            w("        op: Op::%s," % variants[canonical(fm["mnem"])])
            w("        mnemonic: %s," % rs_str(fm["mnem"]))
            w("        operands: &[%s]," % specs)
            w("        rtn_operands: &[%s]," % alt)
            w("        mods: &[%s]," % mods)
            w("        imm: ImmStyle::%s," % (fm.get("imm") or "None"))
            w("        flags: %s," % form_flags(enc, fm, names))
            w("    });")
        w("    t")
        w("};")
        w("")
    w("/// Hardware register names for `hwreg(...)`, by id.")
    w("pub(crate) static HWREG_NAMES: &[(u16, &str)] = &[")
    gfx9 = PROCESSORS[mcpu] == "gfx9"
    for i, n in gfx9_extras(T) if gfx9 else hwreg_names():
        w("    (%d, %s)," % (i, rs_str(n)))
    w("];")
    w("")
    w("/// `s_sendmsg` immediates that print symbolically; any other prints as decimal.")
    w("pub(crate) static SENDMSG_TEXT: &[(u16, &str)] = &[")
    for v, t in sendmsg_table():
        w("    (%d, %s)," % (v, rs_str(t)))
    w("];")
    w("")
    w("/// `s_waitcnt_depctr` fields (name, shift, width) in print order; all-ones is")
    w("/// each field's default, and any bit outside the fields forces hex.")
    w("pub(crate) static DEPCTR_FIELDS: &[(&str, u8, u8)] = &[")
    for n, sh, wd in [] if gfx9 else depctr_fields():
        w("    (%s, %d, %d)," % (rs_str(n), sh, wd))
    w("];")
    w("")
    w("/// Every operation %s's decoder produces (the length-only ones included)." % mcpu)
    w("pub(crate) static OPS: [Op; %d] = [" % len(ops))
    for o in ops:
        w("    Op::%s," % variants[o])
    w("];")
    w("")
    w("/// The tables, as the decoder and the printer reach them.")
    w("pub(crate) static TABLES: Tables = Tables {")
    for enc in TABLE_SIZES:
        w("    %s: &%s," % (enc.lower(), enc))
    w("    hwreg_names: HWREG_NAMES,")
    w("    sendmsg_text: SENDMSG_TEXT,")
    w("    depctr_fields: DEPCTR_FIELDS,")
    # The cache-policy bits' names, first to third, as the FLAT and MUBUF probes printed them.
    cpol = ("sc0", "nt", "sc1") if mcpu.startswith("gfx94") else ("glc", "slc", "scc") if gfx9 else ("glc", "slc", "dlc")
    w("    cpol: [%s]," % ", ".join(rs_str(c) for c in cpol))
    # s_waitcnt's lgkmcnt width (bits 8 up): 4 on gfx9, 6 on gfx10.
    w("    lgkm_bits: %d," % (4 if gfx9 else 6))
    w("    ops: &OPS,")
    w("};")
    w("")
    w("// Opcodes llvm-mc decodes that these tables leave out (graphics-only operand kinds):")
    for sk in SKIPPED:
        w("//   %s" % sk)
    del SKIPPED[:]
    if WARNINGS:
        sys.stderr.write("warnings:\n" + "\n".join(WARNINGS[:40]) + "\n")
        del WARNINGS[:]
    return "\n".join(L) + "\n"


def committed_ops(mcpu):
    """The canonical names of the operations in `mcpu`'s committed tables (read through
    the committed ops.rs), for processors not regenerated in this run."""
    if not os.path.exists(table_path(mcpu)):
        return set()
    ops_rs = open(OPS_OUT).read()
    by_variant = {}
    block = ops_rs.split("OP_NAMES", 1)[1]
    for name in re.findall(r'^    "([^"]+)",$', block, re.M):
        by_variant[op_variant(name)] = name
    tables = open(table_path(mcpu)).read().split("pub(crate) static OPS", 1)[1].split("];", 1)[0]
    return {by_variant[v] for v in re.findall(r"Op::(\w+),", tables)}


def main():
    args = sys.argv[1:]
    check = "--check" in args
    chosen = [args[i + 1] for i, a in enumerate(args) if a == "--mcpu" and i + 1 < len(args)]
    for p in chosen:
        if p not in PROCESSORS:
            raise SystemExit("unknown processor %s (known: %s)" % (p, ", ".join(PROCESSORS)))
    chosen = chosen or list(PROCESSORS)
    outputs = {}
    names = set()
    for mcpu in PROCESSORS:
        if mcpu in chosen:
            T = probe(mcpu)
            outputs[table_path(mcpu)] = generate_tables(mcpu, T)
            names |= set(table_ops(T))
        else:
            names |= committed_ops(mcpu)
    outputs[OPS_OUT] = generate_ops(names, PROCESSORS)
    failed = False
    for path, rs in outputs.items():
        if check:
            old = open(path).read() if os.path.exists(path) else ""
            if old != rs:
                sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), rs.splitlines(True), path, "regenerated"))
                failed = True
        else:
            with open(path, "w") as f:
                f.write(rs)
            print("wrote", os.path.relpath(path, ROOT))
    if check:
        if failed:
            sys.exit(1)
        print("tables up to date")


if __name__ == "__main__":
    main()
