#!/usr/bin/env bash
# Builds the HIP test programs with clang-19 against Debian's real HIP headers, linked against
# librocload.so (never libamdhip64). Run by tests/runtime_hip.rs at test time:
#
#   tests/hip_programs/build.sh OUT_DIR LIB_DIR [GROUP...]
#
# LIB_DIR holds librocload.so. GROUPs (default: all) are kernels, libtwo, incompatible,
# handle_churn (HIP, run by tests/runtime_hip.rs), hostile (tests/bad_input.rs) and
# debian_dlopen (tests/debian_libraries.rs); the last two are C and need only clang and the
# HIP headers. Exit status 3 with a message when a prerequisite is missing.
set -euo pipefail

OUT=${1:?usage: build.sh OUT_DIR LIB_DIR [GROUP...]}
LIB=${2:?usage: build.sh OUT_DIR LIB_DIR [GROUP...]}
shift 2
GROUPS_WANTED=("$@")
wanted() { [[ ${#GROUPS_WANTED[@]} -eq 0 || " ${GROUPS_WANTED[*]} " == *" $1 "* ]]; }
hip_wanted() { wanted kernels || wanted libtwo || wanted incompatible || wanted handle_churn; }
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
DEVICE_LIBS=${DEVICE_LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

missing() { echo "build.sh: missing $1 (install: apt-get install clang-19 lld-19 libamdhip64-dev rocm-device-libs)" >&2; exit 3; }
[[ -x $LLVM_BIN/clang++ ]] || missing "$LLVM_BIN/clang++"
[[ -x $LLVM_BIN/ld.lld ]] || missing "$LLVM_BIN/ld.lld"
[[ -f /usr/include/hip/hip_runtime.h ]] || missing "/usr/include/hip/hip_runtime.h"
if hip_wanted; then [[ -f $DEVICE_LIBS/ocml.bc ]] || missing "ROCm device libraries in $DEVICE_LIBS"; fi
[[ -f $LIB/librocload.so ]] || { echo "build.sh: no librocload.so in $LIB" >&2; exit 3; }

mkdir -p "$OUT"
CXX="$LLVM_BIN/clang++"
COMMON=(-O2 -fPIC -I"$ROOT/include" -Wno-unused-result -Wno-unused-command-line-argument)
HIP=(-x hip --rocm-device-lib-path="$DEVICE_LIBS")
LINK=(-fuse-ld=lld --ld-path="$LLVM_BIN/ld.lld" -L"$LIB" -lrocload -Wl,-rpath,"$LIB")

# 1. One TU: kernels with arguments, a template, static LDS, __device__, __constant__ and
#    __managed__ variables, an exported device function.
if wanted kernels; then
"$CXX" "${HIP[@]}" "${COMMON[@]}" --offload-arch=gfx1030 --offload-arch=gfx900 -c "$HERE/kernels.hip" -o "$OUT/kernels.o"
"$CXX" "$OUT/kernels.o" "${LINK[@]}" -o "$OUT/kernels"
fi

# 2. A shared library of two TUs (one plain bundle, one CCOB), and a host program that
#    dlopens it (linked against librocload only).
if wanted libtwo; then
"$CXX" "${HIP[@]}" "${COMMON[@]}" --offload-arch=gfx1030 -c "$HERE/lib_a.hip" -o "$OUT/lib_a.o"
"$CXX" "${HIP[@]}" "${COMMON[@]}" --offload-arch=gfx1030 --offload-arch=gfx1031 --offload-compress -c "$HERE/lib_b.hip" -o "$OUT/lib_b.o"
"$CXX" -shared "$OUT/lib_a.o" "$OUT/lib_b.o" "${LINK[@]}" -o "$OUT/libtwo.so"
"$CXX" -O2 -D__HIP_PLATFORM_AMD__ -I"$ROOT/include" "$HERE/dl_main.cpp" "${LINK[@]}" -ldl -o "$OUT/dl_main"
fi

# 3. A fat binary for gfx1100 only next to one for gfx1030.
if wanted incompatible; then
"$CXX" -x hip -nogpulib "${COMMON[@]}" --offload-arch=gfx1100 -c "$HERE/incompatible.hip" -o "$OUT/incompatible.o"
"$CXX" "${HIP[@]}" "${COMMON[@]}" --offload-arch=gfx1030 -c "$HERE/incompatible_main.hip" -o "$OUT/incompatible_main.o"
"$CXX" "$OUT/incompatible.o" "$OUT/incompatible_main.o" "${LINK[@]}" -o "$OUT/incompatible"
fi

# 4. A C program that churns handles through the C ABI (register/unregister, load/unload).
if wanted handle_churn; then
"$LLVM_BIN/clang" -O2 -D__HIP_PLATFORM_AMD__ "$HERE/handle_churn.c" "${LINK[@]}" -o "$OUT/handle_churn"
fi

# 5. A C program feeding hostile inputs to the C ABI.
if wanted hostile; then
"$LLVM_BIN/clang" -O2 -D__HIP_PLATFORM_AMD__ -I"$ROOT/include" "$HERE/hostile.c" "${LINK[@]}" -o "$OUT/hostile"
fi

# 6. A C program, linked against no HIP library, that dlopens a real HIP library (librocload.so
#    standing in for libamdhip64.so.5) and interposes the registration calls.
if wanted debian_dlopen; then
"$LLVM_BIN/clang" -O2 -D__HIP_PLATFORM_AMD__ -I"$ROOT/include" -rdynamic "$HERE/debian_dlopen.c" -ldl -o "$OUT/debian_dlopen"
fi

echo "build.sh: built ${GROUPS_WANTED[*]:-everything} in $OUT"
