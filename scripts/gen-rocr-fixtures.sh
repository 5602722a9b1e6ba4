#!/usr/bin/env bash
# Regenerates tests/fixtures/rocr/: code objects for ROCr's loader rules (loader::rocr, the HSA
# backend, the software HSA library in hsa-soft/). Run from the repository root:
#   scripts/gen-rocr-fixtures.sh          (LLVM_BIN overrides /usr/lib/llvm-19/bin)
# Needs clang-19, lld-19, llvm-19 and python3. Deterministic: relative paths, no debug info.
#
# Produces (sources in tests/kernels/):
#   rules.co          rocr_rules.cl (OpenCL C 2.0): kernels rr_fill, rr_add; exported variable
#                     rr_counter read through a GOT slot (R_AMDGPU_ABS64 against a defined OBJECT)
#   rules_base.co     the same linked with --image-base=0x10000: the first PT_LOAD's vaddr is not 0
#                     (ROCr's LOAD_BASE and LOAD_DELTA are then off by it)
#   rules_stripped.co rules.co without .symtab (llvm-objcopy --strip-all): ROCr reads symbols
#                     from .symtab only, so it loads this with no symbol at all
#   rules_abs32.co    rules.co with its R_AMDGPU_ABS64 turned into R_AMDGPU_ABS32 (type 6),
#                     which ROCr applies only from 6.2 on (synthetic: lld does not write it)
#   dup.co            rocr_dup.c: a weak rr_counter, a second definition ROCr refuses
#   notype.co         rocr_notype.s: R_AMDGPU_ABS64 against a defined STT_NOTYPE symbol
#   notype_section.co notype.co with that symbol's .dynsym type patched to STT_SECTION (3)
#   notype_tls.co     notype.co with that symbol's .dynsym type patched to STT_TLS (6)
#   indirect.co       rocr_indirect.hip (header-free HIP): an indirect call, so
#                     .uses_dynamic_stack is true (kernel_code_properties bit 11 set)
set -euo pipefail

LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
ROOT=$(pwd)
OUT=tests/fixtures/rocr
SRC=tests/kernels
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for tool in clang clang++ ld.lld llvm-objcopy; do
  [ -x "$LLVM_BIN/$tool" ] || { echo "gen-rocr-fixtures: $LLVM_BIN/$tool missing (apt-get install clang-19 lld-19 llvm-19)" >&2; exit 3; }
done
rm -rf "$OUT"
mkdir -p "$OUT"

BARE=(--target=amdgcn-amd-amdhsa -mcpu=gfx1030 -nogpulib -O2 -ffile-prefix-map="$ROOT"=.)
"$LLVM_BIN/clang" "${BARE[@]}" -x cl -cl-std=CL2.0 -c $SRC/rocr_rules.cl -o "$WORK/rules.o"
"$LLVM_BIN/ld.lld" -shared "$WORK/rules.o" -o $OUT/rules.co
"$LLVM_BIN/ld.lld" -shared --image-base=0x10000 "$WORK/rules.o" -o $OUT/rules_base.co
"$LLVM_BIN/llvm-objcopy" --strip-all $OUT/rules.co $OUT/rules_stripped.co
"$LLVM_BIN/clang" "${BARE[@]}" -c $SRC/rocr_dup.c -o "$WORK/dup.o"
"$LLVM_BIN/ld.lld" -shared "$WORK/dup.o" -o $OUT/dup.co
"$LLVM_BIN/clang" --target=amdgcn-amd-amdhsa -mcpu=gfx1030 -c $SRC/rocr_notype.s -o "$WORK/notype.o"
"$LLVM_BIN/ld.lld" -shared "$WORK/notype.o" -o $OUT/notype.co
"$LLVM_BIN/clang++" -x hip -nogpulib -nogpuinc -O2 -ffile-prefix-map="$ROOT"=. --offload-arch=gfx1030 \
  --cuda-device-only --no-gpu-bundle-output -cuid=rocr_indirect -c $SRC/rocr_indirect.hip -o $OUT/indirect.co

python3 - "$OUT" <<'EOF'
import struct, sys
out = sys.argv[1]

def sections(b):
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize) for i in range(shnum)]
    stroff = hdrs[shstrndx][4]
    def name(off):
        end = b.index(b'\0', stroff + off)
        return b[stroff + off:end].decode()
    return {name(h[0]): h for h in hdrs}

def patch_reloc_type(src, dst, old, new):
    b = bytearray(open(f'{out}/{src}', 'rb').read())
    rela = sections(b)['.rela.dyn']
    count = 0
    for off in range(rela[4], rela[4] + rela[5], 24):
        info, = struct.unpack_from('<Q', b, off + 8)
        if info & 0xffffffff == old:
            struct.pack_into('<Q', b, off + 8, (info & ~0xffffffff) | new)
            count += 1
    assert count == 1, f'{src}: {count} relocations of type {old}'
    open(f'{out}/{dst}', 'wb').write(b)

def patch_dynsym_type(src, dst, symbol, new_type):
    b = bytearray(open(f'{out}/{src}', 'rb').read())
    s = sections(b)
    dynsym, dynstr = s['.dynsym'], s['.dynstr']
    for off in range(dynsym[4], dynsym[4] + dynsym[5], 24):
        name, info = struct.unpack_from('<IB', b, off)
        end = b.index(b'\0', dynstr[4] + name)
        if b[dynstr[4] + name:end].decode() == symbol:
            b[off + 4] = (info & 0xf0) | new_type
            open(f'{out}/{dst}', 'wb').write(b)
            return
    raise SystemExit(f'{src}: no .dynsym symbol {symbol}')

patch_reloc_type('rules.co', 'rules_abs32.co', 3, 6)
patch_dynsym_type('notype.co', 'notype_section.co', 'rr_marker', 3)
patch_dynsym_type('notype.co', 'notype_tls.co', 'rr_marker', 6)
EOF
ls -l $OUT
