#!/usr/bin/env python3
"""Synthetic fixture builder and layout dumper for rocload's test inputs.

What it is for: turning the REAL compiler outputs made by scripts/gen-fixtures.sh
into container variants clang 19 cannot write (CCOB v1/v3, zlib, many bundles
back to back, OffloadBinary v2, code object v3, odd relocations), and describing
the layout of any bundle / CCOB / OffloadBinary as JSON so tests have a reference
derived from the format description (LLVM's OffloadBundler.cpp) next to the tool goldens.

What it is not: a reader rocload uses, or a replacement for clang-offload-bundler.
Python 3 standard library only; zstd frames come from the `zstd` command-line tool
(`zstd -3 --long --no-check`, which reproduces clang 19's own payload byte for byte).

Subcommands:
  describe FILE            print the layout of a bundle / CCOB / .hip_fatbin / OffloadBinary as JSON
  split FILE OUTDIR        cut a .hip_fatbin blob into its bundles (walking header sizes, never scanning)
  extract FILE ID OUT      copy the entry whose id is exactly ID out of a plain bundle or CCOB
                           (exact string match; clang-offload-bundler 19 mixes up generic targets)
  synth FIXTURES_DIR       write every synthetic fixture into FIXTURES_DIR/synthetic
"""

import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
OFFLOAD_BINARY_MAGIC = b"\x10\xff\x10\xad"
ALIGN = 4096
METHOD_ZLIB = 0
METHOD_ZSTD = 1
CCOB_HEADER_SIZE = {1: 20, 2: 24, 3: 32}


def align_up(value, alignment):
    return (value + alignment - 1) // alignment * alignment


def md5_hash_u64(data):
    """CCOB hash: first 8 bytes of MD5(uncompressed), read as little-endian u64."""
    return struct.unpack("<Q", hashlib.md5(data).digest()[:8])[0]


# ---------------------------------------------------------------- bundles


def parse_bundle(data, start=0):
    """Return (entries, end) of the uncompressed bundle at `start`.

    entries: list of dicts {id, offset, size} with offset relative to `start`.
    end: absolute offset of the largest offset+size (the bundle has no size field).
    """
    if data[start:start + 24] != BUNDLE_MAGIC:
        raise ValueError("no bundle magic at %d" % start)
    (count,) = struct.unpack_from("<Q", data, start + 24)
    pos = start + 32
    entries = []
    header_end = pos
    for _ in range(count):
        offset, size, id_len = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        ident = data[pos:pos + id_len].decode("ascii")
        pos += id_len
        entry = {"id": ident, "offset": offset, "size": size}
        if start + offset + size <= len(data):
            entry["md5"] = hashlib.md5(data[start + offset:start + offset + size]).hexdigest()
        entries.append(entry)
        header_end = pos
    end = max([header_end - start] + [e["offset"] + e["size"] for e in entries])
    return entries, start + end, header_end - start


def write_bundle(items, align=ALIGN):
    """Serialize [(id, payload)] the way clang 19 does: header, then payloads each at
    the next multiple of `align` from the bundle start, zero padding, no trailing pad."""
    header_size = 24 + 8 + sum(24 + len(i.encode("ascii")) for i, _ in items)
    offsets = []
    cursor = header_size
    for _, payload in items:
        cursor = align_up(cursor, align)
        offsets.append(cursor)
        cursor += len(payload)
    out = bytearray(BUNDLE_MAGIC + struct.pack("<Q", len(items)))
    for (ident, payload), offset in zip(items, offsets):
        raw = ident.encode("ascii")
        out += struct.pack("<QQQ", offset, len(payload), len(raw)) + raw
    for (_, payload), offset in zip(items, offsets):
        out += b"\0" * (offset - len(out))
        out += payload
    return bytes(out)


def bundle_items(data, start=0):
    entries, _, _ = parse_bundle(data, start)
    return [(e["id"], data[start + e["offset"]:start + e["offset"] + e["size"]]) for e in entries]


# ---------------------------------------------------------------- CCOB


def zstd_compress(data):
    # Level 3 with long-distance matching: identical bytes to clang 19's
    # --offload-compress output (checked by gen-fixtures.sh on the real CCOB).
    # The input size must be known up front (a file, not a pipe), as it is for
    # ZSTD_compress2: only then is the frame single-segment with a content size.
    with tempfile.NamedTemporaryFile() as src:
        src.write(data)
        src.flush()
        proc = subprocess.run(["zstd", "-q", "-3", "--long", "--no-check", "-c", src.name],
                              stdout=subprocess.PIPE, check=True)
    return proc.stdout


def zstd_decompress(data):
    proc = subprocess.run(["zstd", "-q", "-d", "--long=31", "-c", "-"],
                          input=data, stdout=subprocess.PIPE, check=True)
    return proc.stdout


def compress(method, data, zlib_level=6):
    if method == METHOD_ZSTD:
        return zstd_compress(data)
    # zlib format (RFC 1950), what LLVM's compress2() writes; 6 = its default.
    return zlib.compress(data, zlib_level)


def write_ccob(version, method, data, zlib_level=6):
    payload = compress(method, data, zlib_level)
    digest = md5_hash_u64(data)
    total = CCOB_HEADER_SIZE[version] + len(payload)
    if version == 1:
        header = CCOB_MAGIC + struct.pack("<HHIQ", 1, method, len(data), digest)
    elif version == 2:
        header = CCOB_MAGIC + struct.pack("<HHIIQ", 2, method, total, len(data), digest)
    elif version == 3:
        header = CCOB_MAGIC + struct.pack("<HHQQQ", 3, method, total, len(data), digest)
    else:
        raise ValueError("unknown CCOB version %d" % version)
    return header + payload


def parse_ccob(data, start=0, limit=None):
    """Return the decoded header of the CCOB at `start` (v1 runs to `limit` or the end)."""
    if data[start:start + 4] != CCOB_MAGIC:
        raise ValueError("no CCOB magic at %d" % start)
    version, method = struct.unpack_from("<HH", data, start + 4)
    h = {"version": version, "method": method,
         "method_name": {0: "zlib", 1: "zstd"}.get(method, "unknown")}
    if version == 1:
        h["uncompressed_size"], h["hash"] = struct.unpack_from("<IQ", data, start + 8)
        h["total_size"] = None
        end = limit if limit is not None else len(data)
    elif version == 2:
        h["total_size"], h["uncompressed_size"], h["hash"] = struct.unpack_from("<IIQ", data, start + 8)
        end = start + h["total_size"]
    elif version == 3:
        h["total_size"], h["uncompressed_size"], h["hash"] = struct.unpack_from("<QQQ", data, start + 8)
        end = start + h["total_size"]
    else:
        raise ValueError("unknown CCOB version %d at %d" % (version, start))
    h["header_size"] = CCOB_HEADER_SIZE[version]
    h["payload_offset"] = start + h["header_size"]
    h["end"] = end
    h["hash_hex"] = "0x%016x" % h["hash"]
    return h


def inflate_ccob(data, start=0, limit=None):
    h = parse_ccob(data, start, limit)
    payload = data[h["payload_offset"]:h["end"]]
    raw = zstd_decompress(payload) if h["method"] == METHOD_ZSTD else zlib.decompress(payload)
    return h, raw


def zstd_frame_info(frame):
    """Decode a zstd frame header (RFC 8878 §3.1.1.1) without decompressing."""
    if frame[:4] != b"\x28\xb5\x2f\xfd":
        return None
    fhd = frame[4]
    fcs_flag = fhd >> 6
    single_segment = bool(fhd & 0x20)
    checksum = bool(fhd & 0x04)
    dict_flag = fhd & 0x03
    pos = 5
    window = None
    if not single_segment:
        wd = frame[pos]
        pos += 1
        exponent, mantissa = wd >> 3, wd & 7
        base = 1 << (10 + exponent)
        window = base + (base // 8) * mantissa
    pos += [0, 1, 2, 4][dict_flag]
    fcs_len = [1 if single_segment else 0, 2, 4, 8][fcs_flag]
    fcs = int.from_bytes(frame[pos:pos + fcs_len], "little") if fcs_len else None
    if fcs_len == 2:
        fcs += 256
    if single_segment:
        window = fcs
    return {"single_segment": single_segment, "content_checksum": checksum,
            "frame_content_size": fcs, "window_size": window}


# ---------------------------------------------------------------- .hip_fatbin blobs


def walk_fatbin(data):
    """Walk bundles back to back in a .hip_fatbin blob using header sizes only.

    Each bundle starts at a multiple of 4096 from the blob start; bytes between a
    bundle's end and the next boundary must be zero. CCOB v1 has no size and can
    only be the last item (it runs to the end of the blob)."""
    items = []
    pos = 0
    while pos < len(data):
        if data[pos:pos + 24] == BUNDLE_MAGIC:
            entries, end, header_size = parse_bundle(data, pos)
            items.append({"offset": pos, "kind": "bundle", "size": end - pos,
                          "header_size": header_size, "entries": entries})
        elif data[pos:pos + 4] == CCOB_MAGIC:
            h = parse_ccob(data, pos)
            end = h["end"]
            items.append({"offset": pos, "kind": "ccob", "size": end - pos, "header": h})
        else:
            raise ValueError("unknown item at offset %d" % pos)
        nxt = align_up(end, ALIGN)
        if any(data[end:nxt]):
            raise ValueError("non-zero padding after item at %d" % pos)
        pos = nxt
    return items


# ---------------------------------------------------------------- OffloadBinary


def parse_offload_binaries(data):
    out = []
    pos = 0
    while pos + 8 <= len(data):
        if data[pos:pos + 4] != OFFLOAD_BINARY_MAGIC:
            raise ValueError("no OffloadBinary magic at %d" % pos)
        (version,) = struct.unpack_from("<I", data, pos + 4)
        size, entries_offset, field = struct.unpack_from("<QQQ", data, pos + 8)
        binary = {"offset": pos, "version": version, "size": size, "entries": []}
        if version == 1:
            binary["entry_offset"], binary["entry_size"] = entries_offset, field
            count, string_entry_size = 1, 16
        else:
            binary["entries_offset"], binary["entries_count"] = entries_offset, field
            count, string_entry_size = field, 24
        for i in range(count):
            e = pos + entries_offset + 40 * i
            ik, ok, flags, so, sc, io, isz = struct.unpack_from("<HHIQQQQ", data, e)
            strings = {}
            for j in range(sc):
                key_off, val_off = struct.unpack_from("<QQ", data, pos + so + string_entry_size * j)
                key = data[pos + key_off:data.index(b"\0", pos + key_off)].decode()
                if version == 1:
                    val = data[pos + val_off:data.index(b"\0", pos + val_off)].decode()
                else:
                    (vsz,) = struct.unpack_from("<Q", data, pos + so + string_entry_size * j + 16)
                    val = data[pos + val_off:pos + val_off + vsz].decode()
                strings[key] = val
            image = data[pos + io:pos + io + isz]
            binary["entries"].append({
                "image_kind": ik, "offload_kind": ok, "flags": flags,
                "strings": strings, "image_offset": io, "image_size": isz,
                "image_md5": hashlib.md5(image).hexdigest()})
        out.append(binary)
        pos = align_up(pos + size, 8)
    return out


def offload_binary_images(data):
    res = []
    for b in parse_offload_binaries(data):
        for e in b["entries"]:
            img = data[b["offset"] + e["image_offset"]:b["offset"] + e["image_offset"] + e["image_size"]]
            res.append((e, img))
    return res


def write_offload_binary_v2(images, offload_kind=4):
    """One version-2 OffloadBinary holding several entries (LLVM 22 layout):
    header {magic, u32 2, u64 size, u64 entries offset, u64 entries count},
    40-byte entries, 24-byte string entries {key, value, value size}, NUL-terminated
    string table, then 8-aligned images. offload_kind 4 = HIP in the bit-flag
    numbering LLVM uses since version 21 (it was 3 before)."""
    header_size = 32
    entries_size = 40 * len(images)
    string_entries = sum(len(s) for _, s, _ in images) * 24
    strtab = bytearray()
    str_offsets = {}

    def intern(s):
        if s not in str_offsets:
            str_offsets[s] = len(strtab)
            strtab.extend(s.encode() + b"\0")
        return str_offsets[s]

    for _, strings, _ in images:
        for k, v in strings.items():
            intern(k)
            intern(v)
    strtab_off = header_size + entries_size + string_entries
    cursor = align_up(strtab_off + len(strtab), 8)
    image_offsets = []
    for _, _, img in images:
        image_offsets.append(cursor)
        cursor = align_up(cursor + len(img), 8)
    total = cursor
    out = bytearray(OFFLOAD_BINARY_MAGIC + struct.pack("<IQQQ", 2, total, header_size, len(images)))
    se_cursor = header_size + entries_size
    string_blocks = bytearray()
    for (image_kind, strings, img), io in zip(images, image_offsets):
        out += struct.pack("<HHIQQQQ", image_kind, offload_kind, 0, se_cursor + len(string_blocks),
                           len(strings), io, len(img))
        for k, v in strings.items():
            string_blocks += struct.pack("<QQQ", strtab_off + str_offsets[k],
                                         strtab_off + str_offsets[v], len(v.encode()))
    out += string_blocks + strtab
    for (_, _, img), io in zip(images, image_offsets):
        out += b"\0" * (io - len(out))
        out += img
    out += b"\0" * (total - len(out))
    return bytes(out)


# ---------------------------------------------------------------- ELF helpers


def elf_sections(data):
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = []
    for i in range(shnum):
        f = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        secs.append({"name_off": f[0], "type": f[1], "flags": f[2], "addr": f[3],
                     "offset": f[4], "size": f[5], "link": f[6], "info": f[7], "entsize": f[9]})
    strtab = secs[shstrndx]
    for s in secs:
        o = strtab["offset"] + s["name_off"]
        s["name"] = data[o:data.index(b"\0", o)].decode()
    return secs


def elf_symbols(data, secs, name):
    sec = next(s for s in secs if s["name"] == name)
    strsec = secs[sec["link"]]
    syms = []
    for i in range(sec["size"] // 24):
        o = sec["offset"] + 24 * i
        st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", data, o)
        so = strsec["offset"] + st_name
        syms.append({"index": i, "file_offset": o, "name": data[so:data.index(b"\0", so)].decode(),
                     "info": st_info, "shndx": st_shndx, "value": st_value, "size": st_size})
    return syms


def elf_relas(data, secs, name):
    sec = next(s for s in secs if s["name"] == name)
    out = []
    for i in range(sec["size"] // 24):
        o = sec["offset"] + 24 * i
        r_offset, r_info, r_addend = struct.unpack_from("<QQq", data, o)
        out.append({"file_offset": o, "offset": r_offset, "sym": r_info >> 32,
                    "type": r_info & 0xFFFFFFFF, "addend": r_addend})
    return out


def set_rela(buf, rela, offset, sym, rtype, addend):
    struct.pack_into("<QQq", buf, rela["file_offset"], offset, (sym << 32) | rtype, addend)


# ---------------------------------------------------------------- describe / split


def describe(data):
    if data[:24] == BUNDLE_MAGIC or data[:4] == CCOB_MAGIC:
        items = walk_fatbin(data)
        for it in items:
            if it["kind"] == "ccob":
                h, raw = inflate_ccob(data, it["offset"],
                                      limit=len(data) if it["header"]["version"] == 1 else None)
                it["inflated_md5"] = hashlib.md5(raw).hexdigest()
                it["hash_matches"] = md5_hash_u64(raw) == h["hash"]
                it["inflated_size_matches"] = len(raw) == h["uncompressed_size"]
                payload = data[h["payload_offset"]:h["end"]]
                if h["method"] == METHOD_ZSTD:
                    it["zstd_frame"] = zstd_frame_info(payload)
                entries, end, header_size = parse_bundle(raw)
                it["inner_bundle"] = {"size": end, "header_size": header_size, "entries": entries}
        return {"kind": "hip_fatbin", "size": len(data), "items": items}
    if data[:4] == OFFLOAD_BINARY_MAGIC:
        return {"kind": "offload_binary", "size": len(data), "binaries": parse_offload_binaries(data)}
    raise ValueError("unknown container")


def cmd_describe(path):
    with open(path, "rb") as f:
        data = f.read()
    print(json.dumps(describe(data), indent=1, sort_keys=True))


def cmd_split(path, outdir):
    with open(path, "rb") as f:
        data = f.read()
    os.makedirs(outdir, exist_ok=True)
    for n, it in enumerate(walk_fatbin(data)):
        name = os.path.join(outdir, "part%d.%s" % (n, it["kind"]))
        with open(name, "wb") as f:
            f.write(data[it["offset"]:it["offset"] + it["size"]])
        print("%s %d %d" % (name, it["offset"], it["size"]))


def cmd_extract(path, ident, out):
    data = read(path)
    if data[:4] == CCOB_MAGIC:
        _, data = inflate_ccob(data)
    matches = [payload for i, payload in bundle_items(data) if i == ident]
    if len(matches) != 1:
        raise SystemExit("extract: %d entries named %r in %s" % (len(matches), ident, path))
    write(out, matches[0])


# ---------------------------------------------------------------- synth


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def pad_to(blob, alignment=ALIGN):
    return blob + b"\0" * (align_up(len(blob), alignment) - len(blob))


def synth(fx):
    out = os.path.join(fx, "synthetic")
    os.makedirs(out, exist_ok=True)
    manifest = {}

    plain = read(os.path.join(fx, "hip/vadd.hip_fatbin"))
    real_ccob = read(os.path.join(fx, "hip/vadd.compressed.hip_fatbin"))
    _, real_inner = inflate_ccob(real_ccob)
    # Our zstd path must reproduce clang's payload exactly, or the claim in the
    # README about clang's settings is wrong.
    rebuilt = write_ccob(2, METHOD_ZSTD, real_inner)
    manifest["zstd_cli_reproduces_clang19_ccob_v2"] = rebuilt == real_ccob

    # 1. CCOB v1/v2/v3 x zstd/zlib, all wrapping the plain vadd bundle.
    for version in (1, 2, 3):
        for method, mname in ((METHOD_ZSTD, "zstd"), (METHOD_ZLIB, "zlib")):
            name = "vadd.ccob_v%d_%s.ccob" % (version, mname)
            blob = write_ccob(version, method, plain)
            write(os.path.join(out, name), blob)
            h = parse_ccob(blob)
            manifest[name] = {"source": "hip/vadd.hip_fatbin", "inflated_md5": hashlib.md5(plain).hexdigest(),
                              "inflated_size": len(plain), "header": h}

    # 2. Decoy: a real code object whose data holds "CCOB..." and the bundle magic,
    # bundled, then stored uncompressed (zlib level 0) so the strings appear
    # literally inside the CCOB payload.
    decoy_co = read(os.path.join(fx, "codeobj/decoy.gfx1030.co"))
    assert CCOB_MAGIC in decoy_co and BUNDLE_MAGIC in decoy_co
    decoy_bundle = write_bundle([("host-x86_64-unknown-linux-gnu-", b""),
                                 ("hipv4-amdgcn-amd-amdhsa--gfx1030", decoy_co)])
    decoy_ccob = write_ccob(2, METHOD_ZLIB, decoy_bundle, zlib_level=0)
    assert CCOB_MAGIC in decoy_ccob[4:] and BUNDLE_MAGIC in decoy_ccob
    write(os.path.join(out, "decoy.bundle"), decoy_bundle)
    write(os.path.join(out, "decoy.ccob_v2_zlib0.ccob"), decoy_ccob)

    # 3. A .hip_fatbin-like blob: several bundles back to back, each 4096-aligned.
    hf_generic = read(os.path.join(fx, "headerfree/hf_generic.hip_fatbin"))
    hf_select = read(os.path.join(fx, "headerfree/hf_select.hip_fatbin"))
    parts = [
        ("real plain bundle (vadd, 7 targets + host)", plain),
        ("real CCOB v2 zstd (vadd, clang 19)", real_ccob),
        ("decoy CCOB v2 zlib level 0: payload contains 'CCOB' and the bundle magic", decoy_ccob),
        ("real plain bundle (header-free, gfx90a any / gfx942 sramecc,xnack / gfx11 / gfx12)", hf_select),
        ("synthetic CCOB v3 zstd of the cov6 generic bundle", write_ccob(3, METHOD_ZSTD, hf_generic)),
        ("synthetic CCOB v2 zlib of the cov6 generic bundle", write_ccob(2, METHOD_ZLIB, hf_generic)),
        ("decoy plain bundle (magic strings inside an entry payload)", decoy_bundle),
    ]
    blob = b""
    layout = []
    for desc, part in parts:
        blob = pad_to(blob)
        layout.append({"offset": len(blob), "size": len(part), "what": desc})
        blob += part
    write(os.path.join(out, "multi.hip_fatbin"), blob)
    manifest["multi.hip_fatbin"] = {"items": layout, "size": len(blob)}

    # 4. OffloadBinary v2 with two entries, from the real v1 images.
    v1 = read(os.path.join(fx, "offload_binary/vadd.newdriver.llvm_offloading"))
    imgs = [(e["image_kind"], e["strings"], img) for e, img in offload_binary_images(v1)]
    v2 = write_offload_binary_v2(imgs)
    write(os.path.join(out, "vadd.offload_binary_v2.bin"), v2)
    manifest["vadd.offload_binary_v2.bin"] = {"binaries": parse_offload_binaries(v2)}

    # 5. Code object v3 (clang 19 can no longer emit it): the v4 gfx900:xnack-
    # object with EI_ABIVERSION 2 -> 1, e_flags rewritten in v3 encoding and the
    # metadata amdhsa.version [1,1] -> [1,0]. Nothing else changes.
    co4 = bytearray(read(os.path.join(fx, "codeobj/hf_cov4.gfx900_xnack-.co")))
    assert co4[8] == 2, "expected a v4 code object"
    (flags,) = struct.unpack_from("<I", co4, 0x30)
    mach = flags & 0xFF
    xnack = flags & 0x300
    v3_flags = mach | (0x100 if xnack == 0x300 else 0)
    co4[8] = 1
    struct.pack_into("<I", co4, 0x30, v3_flags)
    key = b"\xaeamdhsa.version\x92\x01\x01"
    assert co4.count(key) == 1
    i = co4.index(key)
    co4[i + len(key) - 1] = 0
    write(os.path.join(out, "hf_cov3.gfx900.co"), bytes(co4))
    manifest["hf_cov3.gfx900.co"] = {"from": "codeobj/hf_cov4.gfx900_xnack-.co", "ei_abiversion": 1,
                                     "e_flags": "0x%x" % v3_flags, "amdhsa.version": [1, 0]}

    # 6. Relocation variants of kernels_user.co that lld never writes.
    ku = read(os.path.join(fx, "codeobj/kernels_user.co"))
    secs = elf_sections(ku)
    dynsym = elf_symbols(ku, secs, ".dynsym")
    relas = elf_relas(ku, secs, ".rela.dyn")
    by_name = {s["name"]: s for s in dynsym}
    table = by_name["dl_table"]["index"]
    abs64_table = [r for r in relas if r["type"] == 3 and r["sym"] == table and r["addend"] != 0]
    rel64 = [r for r in relas if r["type"] == 13]
    assert len(abs64_table) == 1 and len(rel64) == 1
    t = abs64_table[0]
    buf = bytearray(ku)
    set_rela(buf, t, t["offset"], table, 1, t["addend"])              # ABS32_LO
    set_rela(buf, rel64[0], t["offset"] + 4, table, 2, t["addend"])  # ABS32_HI
    write(os.path.join(out, "kernels_user.abs32.co"), bytes(buf))
    manifest["kernels_user.abs32.co"] = {
        "from": "codeobj/kernels_user.co",
        "changes": "ABS64 dl_table+0x%x at 0x%x -> ABS32_LO; RELATIVE64 at 0x%x -> ABS32_HI dl_table+0x%x at 0x%x"
                   % (t["addend"], t["offset"], rel64[0]["offset"], t["addend"], t["offset"] + 4),
        "expect": "the 8 bytes at 0x%x equal S(dl_table)+0x%x exactly as with the original ABS64; "
                  "the 8 bytes at 0x%x (counter_ptr) keep their file contents" % (
                      t["offset"], t["addend"], rel64[0]["offset"])}

    add = by_name["dl_add"]["index"]
    got_add = [r for r in relas if r["type"] == 3 and r["sym"] == add]
    buf = bytearray(ku)
    set_rela(buf, got_add[0], got_add[0]["offset"], add, 4, got_add[0]["addend"])  # REL32
    write(os.path.join(out, "kernels_user.rel32.co"), bytes(buf))
    manifest["kernels_user.rel32.co"] = {"from": "codeobj/kernels_user.co",
                                         "changes": "ABS64 dl_add -> R_AMDGPU_REL32 (4)",
                                         "expect": "rejected: ROCr applies only ABS32_LO/HI, ABS32, ABS64, RELATIVE64"}

    buf = bytearray(ku)
    sym = by_name["dl_add"]
    buf[sym["file_offset"] + 4] = (sym["info"] & 0xF0) | 2  # STT_FUNC, still undefined
    write(os.path.join(out, "kernels_user.undef_func.co"), bytes(buf))
    manifest["kernels_user.undef_func.co"] = {"from": "codeobj/kernels_user.co",
                                              "changes": "undefined .dynsym dl_add typed STT_FUNC instead of STT_NOTYPE",
                                              "expect": "rejected before ROCr sees it (ROCr would treat it as defined)"}

    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


def main(argv):
    if len(argv) >= 3 and argv[1] == "describe":
        cmd_describe(argv[2])
    elif len(argv) >= 4 and argv[1] == "split":
        cmd_split(argv[2], argv[3])
    elif len(argv) >= 5 and argv[1] == "extract":
        cmd_extract(argv[2], argv[3], argv[4])
    elif len(argv) >= 3 and argv[1] == "synth":
        synth(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
