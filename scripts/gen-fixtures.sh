#!/usr/bin/env bash
# Regenerates every file under tests/fixtures (except tests/fixtures/targets/)
# from the sources in tests/kernels with Debian's clang-19 / lld-19, then writes
# the synthetic variants (scripts/make_synthetic.py) and the golden outputs of
# the LLVM tools. Tests never run this: they use the committed results.
#
# Deterministic: run it twice and `sha256sum -c` agrees (checked with --check).
# Usage: scripts/gen-fixtures.sh [--check]
set -euo pipefail

LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
INSTALL_HINT="apt-get install clang-19 lld-19 llvm-19 libamdhip64-dev rocm-device-libs zstd"
DEVICE_LIBS=${DEVICE_LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}

die() { echo "gen-fixtures: $*" >&2; exit 1; }

for tool in clang clang++ ld.lld clang-offload-bundler llvm-readelf llvm-objcopy llvm-objdump; do
  [[ -x "$LLVM_BIN/$tool" ]] || die "missing $LLVM_BIN/$tool (clang-19 toolchain). Install: $INSTALL_HINT"
done
command -v zstd >/dev/null || die "missing zstd. Install: $INSTALL_HINT"
command -v python3 >/dev/null || die "missing python3"
[[ -f "$DEVICE_LIBS/ocml.bc" ]] || die "missing ROCm device libraries in $DEVICE_LIBS. Install: $INSTALL_HINT"
[[ -f /usr/include/hip/hip_runtime.h ]] || die "missing HIP headers. Install: $INSTALL_HINT"
"$LLVM_BIN/clang" --version | grep -q 'version 19\.' || die "$LLVM_BIN/clang is not clang 19"

CLANG="$LLVM_BIN/clang"
CLANGXX="$LLVM_BIN/clang++"
LLD="$LLVM_BIN/ld.lld"
BUNDLER="$LLVM_BIN/clang-offload-bundler"
READELF="$LLVM_BIN/llvm-readelf"
OBJCOPY="$LLVM_BIN/llvm-objcopy"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"   # every path below is relative, so nothing depends on the checkout location

if [[ "${1:-}" == "--check" ]]; then
  # Regenerate twice into the tree and compare hashes.
  "$0" >/dev/null
  (cd tests/fixtures && find . -path ./targets -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum) > /tmp/gen-fixtures.first
  "$0" >/dev/null
  (cd tests/fixtures && find . -path ./targets -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum) > /tmp/gen-fixtures.second
  if diff /tmp/gen-fixtures.first /tmp/gen-fixtures.second; then
    echo "gen-fixtures: two runs produced identical files ($(wc -l < /tmp/gen-fixtures.first) files)"
    exit 0
  fi
  die "two runs differ (see diff above)"
fi

SRC=tests/kernels
FX=tests/fixtures
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Start clean, keeping targets/ (scripts/gen-target-fixtures.sh regenerates it).
for d in hip headerfree codeobj offload_binary synthetic golden; do rm -rf "${FX:?}/$d"; done
mkdir -p $FX/hip $FX/headerfree $FX/codeobj $FX/offload_binary $FX/synthetic \
         $FX/golden/bundler $FX/golden/readelf $FX/golden/layout

COMMON=(-O2 -fPIC -ffile-prefix-map="$ROOT"=. -Wno-unused-command-line-argument)
HIP=(-x hip --rocm-device-lib-path="$DEVICE_LIBS")
HEADERFREE=(-x hip -nogpulib -nogpuinc)
# Real-HIP targets: exact processors, xnack-specific variants of one processor,
# and gfx1030/gfx1031 for the extended-compatibility rules. gfx942 is not
# buildable with the real headers here (Debian's device libs stop at gfx940).
REAL_ARCHS=(gfx900 gfx906 gfx908 gfx90a:xnack- gfx90a:xnack+ gfx1030 gfx1031)
offload_archs() { local a; for a in "$@"; do printf -- '--offload-arch=%s ' "$a"; done; }

section() { # section FILE SECTION OUT
  "$OBJCOPY" --dump-section "$2=$3" "$1" "$WORK/objcopy.junk"
}

# ---------------------------------------------------------------- 1. real HIP
# -cuid fixes the per-TU id (__hip_cuid_*) that clang otherwise derives from paths and options.
# shellcheck disable=SC2046
"$CLANGXX" "${HIP[@]}" "${COMMON[@]}" $(offload_archs "${REAL_ARCHS[@]}") -cuid=vadd \
  -c $SRC/vadd.hip -o $FX/hip/vadd.o
# shellcheck disable=SC2046
"$CLANGXX" "${HIP[@]}" "${COMMON[@]}" $(offload_archs "${REAL_ARCHS[@]}") -cuid=vadd --offload-compress \
  -c $SRC/vadd.hip -o $FX/hip/vadd.compressed.o
"$OBJCOPY" -O binary --only-section=.hip_fatbin $FX/hip/vadd.o $FX/hip/vadd.hip_fatbin
"$OBJCOPY" -O binary --only-section=.hip_fatbin $FX/hip/vadd.compressed.o $FX/hip/vadd.compressed.hip_fatbin
# --dump-section must agree with -O binary (it also works for non-alloc sections).
section $FX/hip/vadd.o .hip_fatbin "$WORK/check.fatbin"
cmp -s "$WORK/check.fatbin" $FX/hip/vadd.hip_fatbin || die "objcopy -O binary and --dump-section disagree"

# Device-only outputs: a bundle file (default --gpu-bundle-output) and its CCOB form.
"$CLANGXX" "${HIP[@]}" "${COMMON[@]}" --offload-arch=gfx900 --offload-arch=gfx1030 -cuid=vadd \
  --cuda-device-only -c $SRC/vadd.hip -o $FX/hip/vadd.device.bundle
"$CLANGXX" "${HIP[@]}" "${COMMON[@]}" --offload-arch=gfx900 --offload-arch=gfx1030 -cuid=vadd \
  --cuda-device-only --offload-compress -c $SRC/vadd.hip -o $FX/hip/vadd.device.ccob

# -fgpu-rdc -c: device bitcode in ELF sections named __CLANG_OFFLOAD_BUNDLE__<id>, no .hip_fatbin.
"$CLANGXX" "${HIP[@]}" "${COMMON[@]}" --offload-arch=gfx900 --offload-arch=gfx1030 -cuid=vadd \
  -fgpu-rdc -c $SRC/vadd.hip -o $FX/hip/vadd.rdc.o

# Two TUs -> shared library and executable; one TU plain, the other compressed.
# shellcheck disable=SC2046
"$CLANGXX" "${HIP[@]}" "${COMMON[@]}" $(offload_archs "${REAL_ARCHS[@]}") -cuid=vscale \
  -c $SRC/vscale.hip -o "$WORK/vscale.o"
# shellcheck disable=SC2046
"$CLANGXX" "${HIP[@]}" "${COMMON[@]}" $(offload_archs "${REAL_ARCHS[@]}") -cuid=vscale --offload-compress \
  -c $SRC/vscale.hip -o "$WORK/vscale.compressed.o"
"$CLANGXX" "${COMMON[@]}" -c $SRC/app_main.cpp -o "$WORK/app_main.o"
LINK=(-fuse-ld=lld --ld-path="$LLD" -L/usr/lib/x86_64-linux-gnu -lamdhip64)
"$CLANGXX" -shared $FX/hip/vadd.o "$WORK/vscale.compressed.o" "${LINK[@]}" -Wl,-soname,libvk.so -o $FX/hip/libvk.so
"$CLANGXX" $FX/hip/vadd.compressed.o "$WORK/vscale.o" "$WORK/app_main.o" "${LINK[@]}" -o $FX/hip/vk_app
# The demo's self-checking program, linked as a user's program is (scripts/demo.sh runs it
# under `rocload run`).
"$CLANGXX" "${HIP[@]}" "${COMMON[@]}" --offload-arch=gfx1030 $SRC/demo_app.hip "${LINK[@]}" -o $FX/hip/demo_app
"$OBJCOPY" -O binary --only-section=.hip_fatbin $FX/hip/libvk.so $FX/hip/libvk.hip_fatbin
"$OBJCOPY" -O binary --only-section=.hip_fatbin $FX/hip/vk_app $FX/hip/vk_app.hip_fatbin

# ---------------------------------------------------------------- 2. header-free HIP
hf() { # hf OUT COV ARCH... : host object + its .hip_fatbin
  local out=$1 cov=$2; shift 2
  # shellcheck disable=SC2046
  "$CLANGXX" "${HEADERFREE[@]}" "${COMMON[@]}" -mcode-object-version="$cov" $(offload_archs "$@") \
    -cuid=headerfree -c $SRC/headerfree.hip -o "$out.o" 2> >(grep -v 'code object v6 is still in development' >&2)
  "$OBJCOPY" -O binary --only-section=.hip_fatbin "$out.o" "$out.hip_fatbin"
}
hf $FX/headerfree/hf_generic 6 gfx9-generic gfx10-3-generic gfx11-generic gfx12-generic gfx1100 gfx1201
hf $FX/headerfree/hf_select 5 gfx90a gfx942:sramecc+:xnack- gfx942:sramecc-:xnack+ gfx1030 gfx1100 gfx1101 gfx1201
for cov in 4 5 6; do
  "$CLANGXX" "${HEADERFREE[@]}" "${COMMON[@]}" -mcode-object-version=$cov --offload-arch=gfx900:xnack- \
    --offload-arch=gfx1030 -cuid=headerfree --cuda-device-only -c $SRC/headerfree.hip \
    -o $FX/headerfree/hf_cov$cov.bundle 2> >(grep -v 'code object v6 is still in development' >&2)
  for id in gfx900:xnack- gfx1030; do
    "$BUNDLER" -unbundle -type=o -input=$FX/headerfree/hf_cov$cov.bundle \
      -targets="hipv4-amdgcn-amd-amdhsa--$id" -output="$FX/codeobj/hf_cov$cov.${id//:/_}.co"
  done
done
# Code object v3: clang 19 rejects -mcode-object-version=3 and llc aborts on module flag 300,
# so the v3 fixture is synthetic (make_synthetic.py).

# ---------------------------------------------------------------- 3. bare code objects
BARE=(--target=amdgcn-amd-amdhsa -mcpu=gfx1030 -nogpulib -O2 -ffile-prefix-map="$ROOT"=.)
"$CLANGXX" "${BARE[@]}" -c $SRC/devlib_math.cpp -o "$WORK/devlib_math.o"
"$CLANG" "${BARE[@]}" -c $SRC/devlib_data.c -o "$WORK/devlib_data.o"
"$CLANG" "${BARE[@]}" -x clcpp -cl-std=clc++1.0 -c $SRC/kernels_user.clcpp -o "$WORK/kernels_user.o"
"$LLD" -shared "$WORK/devlib_math.o" -o $FX/codeobj/devlib_math.co
"$LLD" -shared "$WORK/devlib_data.o" -o $FX/codeobj/devlib_data.co
# Imports stay undefined: lld allows undefined symbols in -shared output by default;
# default visibility on the declarations makes them dynamic symbols with .rela.dyn entries.
"$LLD" -shared "$WORK/kernels_user.o" -o $FX/codeobj/kernels_user.co
# The statically linked equivalent, for comparing relocation results.
"$LLD" -shared "$WORK/kernels_user.o" "$WORK/devlib_math.o" "$WORK/devlib_data.o" -o $FX/codeobj/kernels_static.co
# Two code objects importing from each other (an import cycle).
for half in ping pong; do
  "$CLANG" "${BARE[@]}" -c $SRC/cycle_$half.c -o "$WORK/cycle_$half.o"
  "$LLD" -shared "$WORK/cycle_$half.o" -o $FX/codeobj/cycle_$half.co
done
# Decoy code object for the magic-scanning trap (see make_synthetic.py).
"$CLANGXX" "${HEADERFREE[@]}" "${COMMON[@]}" --offload-arch=gfx1030 --cuda-device-only --no-gpu-bundle-output \
  -c $SRC/decoy.hip -o $FX/codeobj/decoy.gfx1030.co

# ---------------------------------------------------------------- 4. OffloadBinary (new driver)
"$CLANGXX" "${HIP[@]}" "${COMMON[@]}" --offload-arch=gfx900 --offload-arch=gfx1030 \
  --offload-new-driver -fgpu-rdc -c $SRC/vadd.hip -o $FX/offload_binary/vadd.newdriver.o
# .llvm.offloading is not SHF_ALLOC, so -O binary would give 0 bytes: use --dump-section.
section $FX/offload_binary/vadd.newdriver.o .llvm.offloading $FX/offload_binary/vadd.newdriver.llvm_offloading

# ---------------------------------------------------------------- 5. synthetic variants
python3 scripts/make_synthetic.py synth $FX

# ---------------------------------------------------------------- 6. golden outputs
TOOL_VERSION=$("$BUNDLER" --version | head -1 | sed "s/^Debian //")
{
  echo "clang: $("$CLANG" --version | head -1)"
  echo "clang-offload-bundler: $TOOL_VERSION"
  echo "llvm-readelf: $("$READELF" --version | grep -m1 "LLVM version" | sed "s/^ *//")"
  echo "zstd: $(zstd --version)"
} > $FX/golden/tools.txt

golden_name() { local p=${1#"$FX"/}; echo "${p//\//__}"; }

# bundler_golden FILE [LABEL]: -list and, for every listed id, -unbundle size/md5/sha256.
bundler_golden() {
  local f=$1 label=${2:-${1#"$FX"/}} out rc id
  out="$FX/golden/bundler/${label//\//__}.txt"
  {
    echo "# clang-offload-bundler ($TOOL_VERSION) on $label"
    echo "# list: ids sorted (the tool prints them in hash-map order); unbundle: id size md5 sha256"
    set +e
    "$BUNDLER" -list -type=o -input="$f" > "$WORK/list.out" 2> "$WORK/list.err"
    rc=$?
    set -e
    echo "list_exit: $rc"
    sed 's/^/list_stderr: /' "$WORK/list.err"
    LC_ALL=C sort "$WORK/list.out" | sed 's/^/list: /'
    while read -r id; do
      rm -f "$WORK/unbundled"
      set +e
      "$BUNDLER" -unbundle -type=o -input="$f" -targets="$id" -output="$WORK/unbundled" 2> "$WORK/unb.err"
      rc=$?
      set -e
      if [[ $rc -eq 0 ]]; then
        echo "unbundle: $id $(stat -c %s "$WORK/unbundled") $(md5sum < "$WORK/unbundled" | cut -d' ' -f1) $(sha256sum < "$WORK/unbundled" | cut -d' ' -f1)"
      else
        echo "unbundle_error: $id exit=$rc $(tr '\n' ' ' < "$WORK/unb.err")"
      fi
    done < <(LC_ALL=C sort "$WORK/list.out")
  } > "$out"
}

readelf_golden() { # readelf_golden FILE NAME
  "$READELF" -h --syms --dyn-syms --notes --relocs "$1" > "$FX/golden/readelf/$2.txt"
}

layout_golden() {
  python3 scripts/make_synthetic.py describe "$1" > "$FX/golden/layout/$(golden_name "$1").json"
}

# Whole host objects: the bundler looks for __CLANG_OFFLOAD_BUNDLE__* sections, not .hip_fatbin.
for f in $FX/hip/vadd.o $FX/hip/vadd.compressed.o $FX/hip/vadd.rdc.o $FX/headerfree/hf_generic.o; do
  bundler_golden "$f"
done
for f in $FX/hip/*.hip_fatbin $FX/hip/*.bundle $FX/hip/*.ccob $FX/headerfree/*.hip_fatbin \
         $FX/headerfree/*.bundle $FX/synthetic/*.ccob $FX/synthetic/*.bundle $FX/synthetic/multi.hip_fatbin; do
  bundler_golden "$f"
  layout_golden "$f"
done
# Multi-bundle sections: also each bundle on its own, cut by walking header sizes.
for f in $FX/hip/libvk.hip_fatbin $FX/hip/vk_app.hip_fatbin $FX/synthetic/multi.hip_fatbin; do
  rm -rf "$WORK/split"
  python3 scripts/make_synthetic.py split "$f" "$WORK/split" > /dev/null
  for part in "$WORK"/split/*; do
    bundler_golden "$part" "${f#"$FX"/}.$(basename "$part")"
  done
done
for f in $FX/offload_binary/*.llvm_offloading $FX/synthetic/*.bin; do
  layout_golden "$f"
done

# readelf for every committed code object and for each code object inside the plain bundles.
for f in $FX/codeobj/*.co $FX/synthetic/*.co; do
  readelf_golden "$f" "$(basename "$f" .co)"
done
for f in $FX/hip/vadd.hip_fatbin $FX/headerfree/hf_generic.hip_fatbin $FX/headerfree/hf_select.hip_fatbin; do
  base=$(basename "$f" .hip_fatbin)
  while read -r id; do
    [[ $id == host-* ]] && continue
    # Our own exact-id extraction: the bundler hands out the wrong generic code object.
    python3 scripts/make_synthetic.py extract "$f" "$id" "$WORK/co"
    readelf_golden "$WORK/co" "$base.${id#hipv4-amdgcn-amd-amdhsa--}"
  done < <("$BUNDLER" -list -type=o -input="$f" | LC_ALL=C sort)
done
for g in "$FX"/golden/readelf/*:*; do mv "$g" "${g//:/_}"; done

# ---------------------------------------------------------------- summary
echo "gen-fixtures: wrote $(find $FX -path $FX/targets -prune -o -type f -print | wc -l) files," \
     "$(du -sh --exclude=targets $FX | cut -f1) in $FX"
find $FX -path $FX/targets -prune -o -path $FX/golden -prune -o -type f -printf '%10s  %p\n' | LC_ALL=C sort -k2
