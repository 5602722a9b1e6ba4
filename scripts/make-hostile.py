#!/usr/bin/env python3
"""Hostile inputs for rocload's bad-input suite, built from the committed fixtures at test
time (never committed as large binaries). Python 3 standard library only.

  make-hostile.py OUTDIR [--bomb-size BYTES] [--metadata-filler BYTES]
  make-hostile.py --fuzz-seeds SEEDS_DIR     the small ones as fuzz seeds (fuzz/seeds/<target>/)

Writes into OUTDIR (names are what tests/bad_input.rs uses; manifest.json lists them):

  bomb.ccob                CCOB v3 (zstd) whose payload really inflates to a bundle with one
                           gfx1030 entry of BOMB_SIZE zeros (default 1.4 GB) from ~43 KB: the
                           zstd frame is written by hand as raw + RLE blocks (window 128 KiB),
                           its hash is the real MD5 of the inflated bundle
  metadata_count.co        a gfx1030 code object whose metadata claims amdhsa.kernels has
                           0xffffffff entries, followed by FILLER bytes (default 8 MB) of nil
  symbol_far.co            devlib_data.co with dl_table's st_value at +1 GiB (outside the image)
  symbol_minus8.co         ... at -8 (2^64 - 8)
  symbol_minus256.co       ... at -256
  symbol_*.bundle          each of those as a plain bundle (host + gfx1030 entry)
  kd_straddle.co           hf_cov5.gfx1030.co with hf_fill.kd 32 bytes before its segment's end
  entry_outside.co         hf_cov5.gfx1030.co with hf_fill's kernel_code_entry_byte_offset = 2^40
  reloc_outside.co         kernels_user.co with its first dynamic relocation's r_offset at +1 GiB
  bad_shstrndx.so          hip/libvk.so with e_shstrndx past the section table
  bitcode_only.bundle      a bundle whose only device entry is LLVM bitcode (no ELF entry)
"""

import hashlib
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_synthetic as ms  # noqa: E402  (helpers: bundles, ELF tables)

FIXTURES = os.path.join(HERE, "..", "tests", "fixtures")
GFX1030 = "hipv4-amdgcn-amd-amdhsa--gfx1030"
HOST = "host-x86_64-unknown-linux--"
ZSTD_MAGIC = 0xFD2FB528
BLOCK_MAX = 128 * 1024  # zstd's largest block, also the window declared below
NT_AMDGPU_METADATA = 32
PT_LOAD, PT_NOTE = 1, 4


def fixture(rel):
    with open(os.path.join(FIXTURES, rel), "rb") as f:
        return f.read()


# ---------------------------------------------------------------- zstd by hand


def block_header(last, block_type, size):
    return struct.pack("<I", int(last) | block_type << 1 | size << 3)[:3]


def rle_zstd_frame(prefix, zeros):
    """A zstd frame of `prefix` (raw blocks) then `zeros` zero bytes (RLE blocks): decodes
    to prefix + zeros with a 128 KiB window; 4 bytes per 128 KiB of zeros."""
    total = len(prefix) + zeros
    # Frame header: FCS field 8 bytes (flag 3), not single-segment, no checksum, no dict id;
    # window descriptor exponent 7 -> 2^(10+7) = 128 KiB.
    out = bytearray(struct.pack("<IBB", ZSTD_MAGIC, 0xC0, 7 << 3) + struct.pack("<Q", total))
    chunks = [prefix[i:i + BLOCK_MAX] for i in range(0, len(prefix), BLOCK_MAX)]
    runs = [BLOCK_MAX] * (zeros // BLOCK_MAX) + ([zeros % BLOCK_MAX] if zeros % BLOCK_MAX else [])
    blocks = [(0, c) for c in chunks] + [(1, r) for r in runs]
    for n, (kind, data) in enumerate(blocks):
        last = n == len(blocks) - 1
        if kind == 0:
            out += block_header(last, 0, len(data)) + data
        else:
            out += block_header(last, 1, data) + b"\0"
    return bytes(out)


def bomb(size):
    header = bytearray(ms.write_bundle([(HOST, b""), (GFX1030, b"")]))
    # Entries are (offset u64, size u64, id length u64, id); the gfx1030 entry is second.
    second = 32 + 24 + len(HOST)
    struct.pack_into("<Q", header, second + 8, size)
    prefix = bytes(header)
    assert len(prefix) == 4096, len(prefix)
    md5 = hashlib.md5(prefix)
    chunk = bytes(16 << 20)
    left = size
    while left:
        n = min(left, len(chunk))
        md5.update(chunk[:n] if n < len(chunk) else chunk)
        left -= n
    frame = rle_zstd_frame(prefix, size)
    hash_u64 = struct.unpack("<Q", md5.digest()[:8])[0]
    inflated = len(prefix) + size
    return (b"CCOB" + struct.pack("<HHQQQ", 3, 1, 32 + len(frame), inflated, hash_u64)
            + frame)


# ---------------------------------------------------------------- ELF patching


def program_headers(data):
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    out = []
    for i in range(phnum):
        o = phoff + i * phentsize
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz, p_memsz, p_align = struct.unpack_from(
            "<IIQQQQQQ", data, o)
        out.append({"at": o, "type": p_type, "offset": p_offset, "vaddr": p_vaddr,
                    "filesz": p_filesz, "memsz": p_memsz})
    return out


def set_symbol_value(buf, name, value):
    secs = ms.elf_sections(bytes(buf))
    done = 0
    for table in (".dynsym", ".symtab"):
        if not any(s["name"] == table for s in secs):
            continue
        for sym in ms.elf_symbols(bytes(buf), secs, table):
            if sym["name"] == name:
                struct.pack_into("<Q", buf, sym["file_offset"] + 8, value & (2**64 - 1))
                done += 1
    assert done, name


def symbol_value(data, name):
    secs = ms.elf_sections(data)
    table = ".symtab" if any(s["name"] == ".symtab" for s in secs) else ".dynsym"
    return next(s["value"] for s in ms.elf_symbols(data, secs, table) if s["name"] == name)


def vaddr_to_offset(data, vaddr):
    for p in program_headers(data):
        if p["type"] == PT_LOAD and p["vaddr"] <= vaddr < p["vaddr"] + p["filesz"]:
            return p["offset"] + vaddr - p["vaddr"]
    raise ValueError("vaddr %#x not in a file-backed PT_LOAD" % vaddr)


def metadata_count(filler):
    """hf_cov5.gfx1030.co with its PT_NOTE pointing at one new metadata note, appended at the
    end of the file: {amdhsa.version: [1, 2], amdhsa.kernels: array32(0xffffffff), nil...}."""
    data = bytearray(fixture("codeobj/hf_cov5.gfx1030.co"))
    desc = metadata_desc(filler)
    name = b"AMDGPU\0"
    note = struct.pack("<III", len(name), len(desc), NT_AMDGPU_METADATA)
    note += name + b"\0" * (ms.align_up(len(name), 4) - len(name))
    note += desc + b"\0" * (ms.align_up(len(desc), 4) - len(desc))
    start = ms.align_up(len(data), 8)
    data += b"\0" * (start - len(data)) + note
    notes = [p for p in program_headers(bytes(data)) if p["type"] == PT_NOTE]
    assert notes, "no PT_NOTE"
    for p in notes:
        struct.pack_into("<Q", data, p["at"] + 8, start)        # p_offset
        struct.pack_into("<QQ", data, p["at"] + 16, 0, 0)      # p_vaddr, p_paddr
        struct.pack_into("<QQ", data, p["at"] + 32, len(note), len(note))  # filesz, memsz
    return bytes(data)


def kd_straddle():
    data = bytearray(fixture("codeobj/hf_cov5.gfx1030.co"))
    kd = symbol_value(bytes(data), "hf_fill.kd")
    seg = next(p for p in program_headers(bytes(data))
               if p["type"] == PT_LOAD and p["vaddr"] <= kd < p["vaddr"] + p["memsz"])
    set_symbol_value(data, "hf_fill.kd", seg["vaddr"] + seg["memsz"] - 32)
    return bytes(data)


def entry_outside():
    data = bytearray(fixture("codeobj/hf_cov5.gfx1030.co"))
    kd = symbol_value(bytes(data), "hf_fill.kd")
    struct.pack_into("<q", data, vaddr_to_offset(bytes(data), kd) + 0x10, 1 << 40)
    return bytes(data)


def reloc_outside():
    data = bytearray(fixture("codeobj/kernels_user.co"))
    secs = ms.elf_sections(bytes(data))
    first = ms.elf_relas(bytes(data), secs, ".rela.dyn")[0]
    struct.pack_into("<Q", data, first["file_offset"], 1 << 30)
    return bytes(data)


def bad_shstrndx():
    data = bytearray(fixture("hip/libvk.so"))
    (shnum,) = struct.unpack_from("<H", data, 0x3C)
    struct.pack_into("<H", data, 0x3E, shnum + 5)
    return bytes(data)


def metadata_desc(filler):
    """The MessagePack body of metadata_count.co's note."""
    return (b"\x82" + b"\xaeamdhsa.version" + b"\x92\x01\x02"
            + b"\xaeamdhsa.kernels" + b"\xdd\xff\xff\xff\xff" + b"\xc0" * filler)


def fuzz_seeds(root):
    """Every case small enough to commit (< 100 KB), filed under the fuzz target it feeds."""
    seeds = {
        "containers": {
            "bomb.ccob": bomb(1_400_000_000),
            "bitcode_only.bundle": ms.write_bundle(
                [(HOST, b""), ("hip-amdgcn-amd-amdhsa--gfx1030", b"BC\xc0\xde" + bytes(60))]),
        },
        "code_object": {
            "metadata_count.co": metadata_count(4096),
            "kd_straddle.co": kd_straddle(),
            "entry_outside.co": entry_outside(),
            "reloc_outside.co": reloc_outside(),
        },
        "code_object_metadata": {"metadata_count.msgpack": metadata_desc(64)},
    }
    for name, value in (("far", 1 << 30), ("minus8", -8), ("minus256", -256)):
        data = bytearray(fixture("codeobj/devlib_data.co"))
        set_symbol_value(data, "dl_table", value)
        seeds["code_object"]["symbol_%s.co" % name] = bytes(data)
        seeds["containers"]["symbol_%s.bundle" % name] = ms.write_bundle(
            [(HOST, b""), (GFX1030, bytes(data))])
    for target, files in seeds.items():
        os.makedirs(os.path.join(root, target), exist_ok=True)
        for name, data in files.items():
            assert len(data) < 100_000, name
            with open(os.path.join(root, target, name), "wb") as f:
                f.write(data)
    print("make-hostile: wrote fuzz seeds to %s" % root)


def main(argv):
    args = argv[1:]
    if len(args) == 2 and args[0] == "--fuzz-seeds":
        fuzz_seeds(args[1])
        return 0
    if not args or args[0].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    out = args[0]
    opts = dict(zip(args[1::2], args[2::2]))
    bomb_size = int(opts.get("--bomb-size", 1_400_000_000))
    filler = int(opts.get("--metadata-filler", 8_000_000))
    os.makedirs(out, exist_ok=True)
    files = {}

    def write(name, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        files[name] = len(data)

    write("bomb.ccob", bomb(bomb_size))
    write("metadata_count.co", metadata_count(filler))
    for name, value in (("far", 1 << 30), ("minus8", -8), ("minus256", -256)):
        data = bytearray(fixture("codeobj/devlib_data.co"))
        set_symbol_value(data, "dl_table", value)
        write("symbol_%s.co" % name, bytes(data))
        write("symbol_%s.bundle" % name, ms.write_bundle([(HOST, b""), (GFX1030, bytes(data))]))
    write("kd_straddle.co", kd_straddle())
    write("entry_outside.co", entry_outside())
    write("reloc_outside.co", reloc_outside())
    write("bad_shstrndx.so", bad_shstrndx())
    write("bitcode_only.bundle", ms.write_bundle(
        [(HOST, b""), ("hip-amdgcn-amd-amdhsa--gfx1030", b"BC\xc0\xde" + bytes(60))]))
    manifest = {"bomb_entry_size": bomb_size, "metadata_filler": filler, "files": files}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print("make-hostile: wrote %d files to %s" % (len(files), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
