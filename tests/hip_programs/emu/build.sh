#!/usr/bin/env bash
# Builds the self-checking HIP programs of this directory at -O0, -O2 and -O3, linked against
# librocload.so, and their device code objects alone (the emulator's corpus):
#
#   tests/hip_programs/emu/build.sh OUT_DIR LIB_DIR [ARCH...]
#
# ARCHs are the offload targets (default gfx1030); several make fat binaries whose code object
# the runtime picks by the agent's ISA (ROCLOAD_SOFT_ISA). gfx942 builds against a device
# library directory that scripts/device-libs.sh completes (Debian's stops at gfx940).
# A program's first line "// build: FLAGS" adds its own compiler flags.
# OUT_DIR gets <name>.<opt> executables and <name>.<opt>.co code objects (one ARCH) or
# <name>.<opt>.<arch>.co (several). Exit status 3 with a message when clang-19, the HIP
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
HIP=(-x hip --rocm-device-lib-path="$DEVICE_LIBS" -Wno-unused-result -Wno-unused-command-line-argument -fno-gpu-rdc)
for a in "${ARCHS[@]}"; do HIP+=(--offload-arch="$a"); done
LINK=(-fuse-ld=lld --ld-path="$LLVM_BIN/ld.lld" -L"$LIB" -lrocload -Wl,-rpath,"$LIB")
programs=()
for src in "$HERE"/*.hip; do
  name=$(basename "$src" .hip)
  # A program's own compiler flags: its first line "// build: FLAGS".
  own=()
  read -r -a own < <(sed -n '1s|^// build: ||p' "$src") || true
  for opt in O0 O2 O3; do
    if [[ ${#ARCHS[@]} -eq 1 ]]; then
      "$CXX" "${HIP[@]}" "${own[@]}" -"$opt" --cuda-device-only --no-gpu-bundle-output "$src" -o "$OUT/$name.$opt.co" &
    else
      for a in "${ARCHS[@]}"; do
        one=(-x hip --rocm-device-lib-path="$DEVICE_LIBS" -Wno-unused-result -Wno-unused-command-line-argument -fno-gpu-rdc --offload-arch="$a")
        "$CXX" "${one[@]}" "${own[@]}" -"$opt" --cuda-device-only --no-gpu-bundle-output "$src" -o "$OUT/$name.$opt.$a.co" &
      done
    fi
    "$CXX" "${HIP[@]}" "${own[@]}" -"$opt" "$src" "${LINK[@]}" -o "$OUT/$name.$opt" &
    wait
    programs+=("$name.$opt")
  done
done
echo "build.sh: built ${programs[*]} for ${ARCHS[*]} in $OUT"
