#!/usr/bin/env bash
# Regenerates tests/fixtures/targets/ from Debian's clang 19 / LLVM 19 tools. Run from the
# repository root: scripts/gen-target-fixtures.sh   (LLVM_BIN overrides /usr/lib/llvm-19/bin)
#
# Produces, for tests/targets.rs:
#   clang-processors.txt  processors `llc -march=amdgcn -mcpu=help` lists (minus generic/generic-hsa)
#   co/*.o                one tiny stripped code object per processor name (aliases too), at the
#                         default code object version (v5; v6 for generic targets), plus feature
#                         and version variants, plus synthetic ones (header bytes patched, because
#                         LLVM 19 no longer writes v3) that llvm-readelf still decodes
#   readelf.txt           file <TAB> requested -mcpu <TAB> how made <TAB> ABI Version <TAB> Flags,
#                         as llvm-readelf -h prints them (the reference answer)
#   feature-support.txt   processor <TAB> feature <TAB> accepted|rejected: whether clang accepts
#                         `-mcpu=<processor>:<feature>+`
#   bundler-compat.txt    agent <TAB> entry <TAB> compatible|incompatible: whether
#                         clang-offload-bundler -unbundle extracts that entry for that target
#   bundler-requests.txt  request <TAB> entry <TAB> compatible|incompatible: the same for requests
#                         that leave features out (`gfx90a:xnack+`, `gfx942:xnack-`, `gfx90a`),
#                         as `rocload extract --target` gets them
#   bundle-ids.txt        `clang-offload-bundler -list` of a real multi-arch HIP object
set -euo pipefail

LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
OUT=tests/fixtures/targets
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

[ -d "$OUT" ] || mkdir -p "$OUT"
rm -rf "$OUT/co"
mkdir -p "$OUT/co"

printf 'int f(int x) { return x + 1; }\n' >"$WORK/f.c"

"$LLVM_BIN/llc" -march=amdgcn -mcpu=help 2>&1 |
    sed -n '/Available CPUs/,/Available features/p' |
    awk '/ - Select the / { print $1 }' |
    grep -v -x -e generic -e generic-hsa >"$OUT/clang-processors.txt"

: >"$OUT/readelf.txt"
: >"$OUT/feature-support.txt"

label() { # gfx90a:sramecc+:xnack- v5 -> gfx90a_sramecc+_xnack-.v5
    printf '%s.v%s' "${1//:/_}" "$2"
}

record() { # file mcpu how
    local file=$1 mcpu=$2 how=$3 abi flags
    abi=$("$LLVM_BIN/llvm-readelf" -h "$OUT/co/$file" | sed -n 's/^ *ABI Version: *//p')
    flags=$("$LLVM_BIN/llvm-readelf" -h "$OUT/co/$file" | sed -n 's/^ *Flags: *//p')
    printf '%s\t%s\t%s\t%s\t%s\n' "$file" "$mcpu" "$how" "$abi" "$flags" >>"$OUT/readelf.txt"
}

compile() { # mcpu cov -> prints file name; fails if clang rejects the target
    local mcpu=$1 cov=$2 file
    file="$(label "$mcpu" "$cov").o"
    "$LLVM_BIN/clang" --target=amdgcn-amd-amdhsa -mcpu="$mcpu" -mcode-object-version="$cov" \
        -nogpulib -O2 -c "$WORK/f.c" -o "$WORK/f.o" 2>"$WORK/err" || return 1
    "$LLVM_BIN/llvm-strip" --strip-all "$WORK/f.o" -o "$OUT/co/$file"
    record "$file" "$mcpu" clang
    echo "$file"
}

patch() { # from-file new-file abi-version e_flags(hex) mcpu-description
    local from=$1 to=$2 abi=$3 flags=$4 what=$5
    cp "$OUT/co/$from" "$OUT/co/$to"
    printf "\\x$(printf %02x "$abi")" | dd of="$OUT/co/$to" bs=1 seek=8 conv=notrunc status=none
    printf "\\x${flags:6:2}\\x${flags:4:2}\\x${flags:2:2}\\x${flags:0:2}" |
        dd of="$OUT/co/$to" bs=1 seek=48 conv=notrunc status=none
    record "$to" "$what" "patched from $from"
}

# Every processor name clang 19 knows, at its default code object version.
while read -r p; do
    case $p in *-generic) cov=6 ;; *) cov=5 ;; esac
    compile "$p" "$cov" >/dev/null
done <"$OUT/clang-processors.txt"

# Feature support as clang sees it, and a code object for each accepted feature setting.
while read -r p; do
    case $p in *-generic) cov=6 ;; *) cov=5 ;; esac
    # Canonical names only (aliases print as their canonical processor).
    canonical=$("$LLVM_BIN/llvm-readelf" -h "$OUT/co/$(label "$p" "$cov").o" |
        sed -n 's/^ *Flags: *0x[0-9A-Fa-f]*, \([^,]*\).*/\1/p')
    [ "$canonical" = "$p" ] || continue
    for feature in xnack sramecc; do
        if compile "$p:$feature+" "$cov" >/dev/null; then
            printf '%s\t%s\taccepted\n' "$p" "$feature" >>"$OUT/feature-support.txt"
            compile "$p:$feature-" "$cov" >/dev/null
        else
            printf '%s\t%s\trejected\n' "$p" "$feature" >>"$OUT/feature-support.txt"
        fi
    done
done <"$OUT/clang-processors.txt"

# Code object versions 4 and 6, and combined features.
for spec in gfx90a:sramecc+:xnack-/4 gfx90a:sramecc+:xnack-/5 gfx90a:sramecc+:xnack-/6 \
    gfx90a:sramecc-:xnack+/5 gfx906:sramecc-:xnack+/4 gfx942:sramecc+:xnack+/6 gfx1030/4 \
    gfx1030/6 gfx1100/4 gfx906/4; do
    compile "${spec%/*}" "${spec#*/}" >/dev/null
done

# Synthetic headers llvm-readelf 19 still decodes: code object v3 (ABI version 1; 0x100 xnack
# on, 0x200 sramecc on) and a generic version above 1.
patch gfx906.v5.o gfx906_v3_xnack+_sramecc-.v3.o 1 0000012f "gfx906 v3 xnack on, sramecc off"
patch gfx906.v5.o gfx906_v3_xnack+_sramecc+.v3.o 1 0000032f "gfx906 v3 xnack on, sramecc on"
patch gfx906.v5.o gfx906_v3_xnack-_sramecc+.v3.o 1 0000022f "gfx906 v3 xnack off, sramecc on"
patch gfx900.v5.o gfx900_v3_xnack-.v3.o 1 0000002c "gfx900 v3 xnack off"
patch gfx90a.v5.o gfx90a_v3_sramecc+.v3.o 1 0000023f "gfx90a v3 sramecc on, xnack off"
patch gfx1030.v5.o gfx1030_v3.v3.o 1 00000036 "gfx1030 v3"
patch gfx11-generic.v6.o gfx11-generic_generic_v2.v6.o 4 02000054 "gfx11-generic generic version 2"

# Which entry clang-offload-bundler extracts for which target: LLVM's own compatibility rule.
: >"$OUT/bundler-compat.txt"
agents="gfx90a:sramecc+:xnack- gfx90a:sramecc+:xnack+ gfx90a:sramecc-:xnack- gfx906:sramecc-:xnack+
    gfx906:sramecc+:xnack- gfx900:xnack- gfx900:xnack+ gfx1030 gfx1031 gfx1100"
entries="gfx90a gfx90a:xnack- gfx90a:xnack+ gfx90a:sramecc+ gfx90a:sramecc- gfx90a:sramecc+:xnack-
    gfx90a:sramecc-:xnack+ gfx906 gfx906:xnack+ gfx906:sramecc- gfx900 gfx900:xnack- gfx900:xnack+
    gfx1030 gfx1031 gfx1100"
for e in $entries; do
    "$LLVM_BIN/clang-offload-bundler" -type=o \
        -targets="host-x86_64-unknown-linux--,hipv4-amdgcn-amd-amdhsa--$e" \
        -input=/dev/null -input="$OUT/co/gfx1030.v5.o" -output="$WORK/one.bundle"
    for a in $agents; do
        rm -f "$WORK/out"
        "$LLVM_BIN/clang-offload-bundler" -unbundle -type=o -input="$WORK/one.bundle" \
            -targets="hipv4-amdgcn-amd-amdhsa--$a" -output="$WORK/out" -allow-missing-bundles
        if [ -s "$WORK/out" ]; then verdict=compatible; else verdict=incompatible; fi
        printf '%s\t%s\t%s\n' "$a" "hipv4-amdgcn-amd-amdhsa--$e" "$verdict" >>"$OUT/bundler-compat.txt"
    done
done

# The same for requests that leave features out: no defaults, unlike agents.
: >"$OUT/bundler-requests.txt"
requests="gfx90a gfx90a:xnack+ gfx90a:xnack- gfx90a:sramecc+ gfx90a:sramecc-:xnack+ gfx906
    gfx906:xnack- gfx906:sramecc+ gfx900 gfx942 gfx942:xnack- gfx942:sramecc+:xnack- gfx1030"
entries="gfx90a gfx90a:xnack- gfx90a:xnack+ gfx90a:sramecc+ gfx90a:sramecc-:xnack+ gfx906
    gfx906:xnack- gfx906:sramecc+:xnack- gfx900 gfx900:xnack+ gfx942 gfx942:xnack-
    gfx942:sramecc+:xnack- gfx942:sramecc-:xnack+ gfx1030"
for e in $entries; do
    "$LLVM_BIN/clang-offload-bundler" -type=o \
        -targets="host-x86_64-unknown-linux--,hipv4-amdgcn-amd-amdhsa--$e" \
        -input=/dev/null -input="$OUT/co/gfx1030.v5.o" -output="$WORK/one.bundle"
    for r in $requests; do
        rm -f "$WORK/out"
        "$LLVM_BIN/clang-offload-bundler" -unbundle -type=o -input="$WORK/one.bundle" \
            -targets="hipv4-amdgcn-amd-amdhsa--$r" -output="$WORK/out" -allow-missing-bundles
        if [ -s "$WORK/out" ]; then verdict=compatible; else verdict=incompatible; fi
        printf '%s\t%s\t%s\n' "$r" "hipv4-amdgcn-amd-amdhsa--$e" "$verdict" >>"$OUT/bundler-requests.txt"
    done
done

# A real HIP fat binary's entry ids (header-free HIP: -nogpulib -nogpuinc).
cat >"$WORK/k.hip" <<'EOF'
#define __global__ __attribute__((global))
typedef struct { unsigned x, y, z; } dim3;
extern "C" int hipLaunchKernel(const void *f, dim3 g, dim3 b, void **a, unsigned long s, void *st);
__global__ void k(int *p) { *p = 1; }
EOF
"$LLVM_BIN/clang++" -x hip -nogpulib -nogpuinc -O2 -mcode-object-version=6 \
    --offload-arch=gfx1030 --offload-arch=gfx90a:xnack- --offload-arch=gfx90a:sramecc+:xnack+ \
    --offload-arch=gfx10-3-generic --offload-arch=gfx1100 -c "$WORK/k.hip" -o "$WORK/k.o" 2>/dev/null
"$LLVM_BIN/llvm-objcopy" -O binary --only-section=.hip_fatbin "$WORK/k.o" "$WORK/fatbin"
"$LLVM_BIN/clang-offload-bundler" -list -type=o -input="$WORK/fatbin" >"$OUT/bundle-ids.txt"

echo "wrote $(ls "$OUT/co" | wc -l) code objects and $(wc -l <"$OUT/readelf.txt") readelf lines to $OUT"
