#!/usr/bin/env bash
# Builds the adversarial HIP programs of this directory (kernels that take too much scratch,
# never end, or access memory past their segments) at -O2 for gfx1030, linked against
# librocload.so, for tests/kernel_bounds.rs:
#
#   tests/hip_programs/bounds/build.sh OUT_DIR LIB_DIR
#
# OUT_DIR gets one executable per program. Exit status 3 with a message when clang-19, the HIP
# headers or the device libraries are missing.
set -euo pipefail
OUT=${1:?usage: build.sh OUT_DIR LIB_DIR}
LIB=${2:?usage: build.sh OUT_DIR LIB_DIR}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
DEVICE_LIBS=${DEVICE_LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
missing() { echo "build.sh: missing $1 (install: apt-get install clang-19 lld-19 libamdhip64-dev rocm-device-libs)" >&2; exit 3; }
[[ -x $LLVM_BIN/clang++ ]] || missing "$LLVM_BIN/clang++"
[[ -f /usr/include/hip/hip_runtime.h ]] || missing "/usr/include/hip/hip_runtime.h"
[[ -f $DEVICE_LIBS/ocml.bc ]] || missing "ROCm device libraries in $DEVICE_LIBS"
mkdir -p "$OUT"
CXX="$LLVM_BIN/clang++"
HIP=(-x hip --rocm-device-lib-path="$DEVICE_LIBS" --offload-arch=gfx1030 -Wno-unused-result -Wno-unused-command-line-argument -fno-gpu-rdc -I"$HERE/../../../include")
LINK=(-fuse-ld=lld --ld-path="$LLVM_BIN/ld.lld" -L"$LIB" -lrocload -Wl,-rpath,"$LIB")
pids=()
for src in "$HERE"/*.hip; do
  name=$(basename "$src" .hip)
  "$CXX" "${HIP[@]}" -O2 "$src" "${LINK[@]}" -o "$OUT/$name" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
echo "build.sh: built in $OUT"
