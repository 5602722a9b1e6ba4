#!/usr/bin/env bash
# Builds the self-checking HIP programs of this directory at -O0, -O2 and -O3, linked against
# librocload.so, and their device code objects alone (the emulator's corpus):
#
#   tests/hip_programs/emu/build.sh OUT_DIR LIB_DIR [ARCH...]
#
# ARCHs are the offload targets (default gfx1030); several make fat binaries whose code object
# the runtime picks by the agent's ISA (ROCLOAD_SOFT_ISA). gfx942 builds against a device
# library directory that scripts/device-libs.sh completes (Debian's stops at gfx940).
# A program's first line "// build: FLAGS" adds its own compiler flags. HIP_SOURCES names
# another directory of programs to build (tests/hip_programs/mfma).
# Programs build in parallel (JOBS, default nproc), each program's device code once.
# OUT_DIR gets <name>.<opt> executables and <name>.<opt>.co code objects (one ARCH) or
# <name>.<opt>.<arch>.co (several); outputs newer than their source, check.h and this script
# are kept. Exit status 3 with a message when clang-19, the HIP
# headers or the device libraries are missing.
set -euo pipefail
OUT=${1:?usage: build.sh OUT_DIR LIB_DIR [ARCH...]}
LIB=${2:?usage: build.sh OUT_DIR LIB_DIR [ARCH...]}
shift 2
ARCHS=("$@")
[[ ${#ARCHS[@]} -gt 0 ]] || ARCHS=(gfx1030)
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
DEVICE_LIBS=${DEVICE_LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
missing() { echo "build.sh: missing $1 (install: apt-get install clang-19 lld-19 libamdhip64-dev rocm-device-libs)" >&2; exit 3; }
[[ -x $LLVM_BIN/clang++ ]] || missing "$LLVM_BIN/clang++"
[[ -f /usr/include/hip/hip_runtime.h ]] || missing "/usr/include/hip/hip_runtime.h"
[[ -f $DEVICE_LIBS/ocml.bc ]] || missing "ROCm device libraries in $DEVICE_LIBS"
mkdir -p "$OUT"
if [[ " ${ARCHS[*]} " == *" gfx942 "* ]]; then
  DEVICE_LIBS=$(LLVM_BIN=$LLVM_BIN DEVICE_LIBS=$DEVICE_LIBS "$HERE/../../../scripts/device-libs.sh" "$OUT/device-libs") \
    || missing "a gfx942 device library directory (scripts/device-libs.sh)"
fi
CXX="$LLVM_BIN/clang++"
BUNDLER="$LLVM_BIN/clang-offload-bundler"
[[ -x $BUNDLER ]] || missing "$BUNDLER"
HIP=(-x hip --rocm-device-lib-path="$DEVICE_LIBS" -Wno-unused-result -Wno-unused-command-line-argument -fno-gpu-rdc)
for a in "${ARCHS[@]}"; do HIP+=(--offload-arch="$a"); done
LINK=(-fuse-ld=lld --ld-path="$LLVM_BIN/ld.lld" -L"$LIB" -lrocload -Wl,-rpath,"$LIB")
JOBS=${JOBS:-$(nproc)}

# One program at one level: the device code is compiled once, as clang's offload bundle;
# the host part embeds that bundle, and each processor's code object is taken out of it.
build_one() {
  # (Called in a `||` list, where set -e does not apply: every step checks itself.)
  local src=$1 name=$2 opt=$3
  shift 3
  local own=("$@") fb="$OUT/$name.$opt.hipfb"
  "$CXX" "${HIP[@]}" "${own[@]}" -"$opt" --cuda-device-only "$src" -o "$fb.tmp" || return 1
  mv "$fb.tmp" "$fb" || return 1
  "$CXX" "${HIP[@]}" "${own[@]}" -"$opt" --cuda-host-only -Xclang -fcuda-include-gpubinary -Xclang "$fb" \
    "$src" "${LINK[@]}" -o "$OUT/$name.$opt.tmp" &
  local host=$! a co
  for a in "${ARCHS[@]}"; do
    if [[ ${#ARCHS[@]} -eq 1 ]]; then co="$OUT/$name.$opt.co"; else co="$OUT/$name.$opt.$a.co"; fi
    "$BUNDLER" --unbundle --type=o --targets="hipv4-amdgcn-amd-amdhsa--$a" --input="$fb" --output="$co.tmp" \
      || { wait $host; return 1; }
    mv "$co.tmp" "$co" || { wait $host; return 1; }
  done
  wait $host || return 1
  mv "$OUT/$name.$opt.tmp" "$OUT/$name.$opt" || return 1
  rm -f "$fb"
}

programs=()
rm -f "$OUT"/*.failed
for src in "${HIP_SOURCES:-$HERE}"/*.hip; do
  name=$(basename "$src" .hip)
  # A program marked "// not for CDNA: why" is left out of gfx9 builds (no image instructions).
  if [[ " ${ARCHS[*]} " == *" gfx9"* ]] && grep -q '^// not for CDNA:' "$src"; then continue; fi
  # A program's own compiler flags: its first line "// build: FLAGS".
  own=()
  read -r -a own < <(sed -n '1s|^// build: ||p' "$src") || true
  for opt in O0 O2 O3; do
    programs+=("$name.$opt")
    # Up to date: every output newer than the source, check.h and this script.
    outs=("$OUT/$name.$opt")
    if [[ ${#ARCHS[@]} -eq 1 ]]; then outs+=("$OUT/$name.$opt.co"); else for a in "${ARCHS[@]}"; do outs+=("$OUT/$name.$opt.$a.co"); done; fi
    fresh=1
    for o in "${outs[@]}"; do
      for dep in "$src" "$HERE/check.h" "${BASH_SOURCE[0]}"; do
        [[ -e $o && $o -nt $dep ]] || fresh=0
      done
    done
    [[ $fresh -eq 1 ]] && continue
    while (( $(jobs -rp | wc -l) >= JOBS )); do wait -n || true; done
    (build_one "$src" "$name" "$opt" "${own[@]}" || touch "$OUT/$name.$opt.failed") &
  done
done
wait
failed=("$OUT"/*.failed)
if [[ -e ${failed[0]} ]]; then
  echo "build.sh: failed to build: ${failed[*]}" >&2
  exit 1
fi
echo "build.sh: built ${programs[*]} for ${ARCHS[*]} in $OUT"
