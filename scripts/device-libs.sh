#!/usr/bin/env bash
# Makes (once) and prints a ROCm device-library directory that clang-19 can build gfx942 code
# with: Debian's rocm-device-libs (5.2) stops at gfx940 and has no oclc_isa_version_942.bc,
# a module of one constant (the ISA version, 9402) that the device libraries read. DIR gets
# links to every Debian bitcode file plus that module, written with llvm-as-19.
#
#   scripts/device-libs.sh DIR      # prints DIR; exit status 3 when a tool or library is missing
set -euo pipefail
DIR=${1:?usage: device-libs.sh DIR}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
DEVICE_LIBS=${DEVICE_LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
[[ -f $DEVICE_LIBS/ocml.bc ]] || { echo "device-libs.sh: no ROCm device libraries in $DEVICE_LIBS" >&2; exit 3; }
[[ -x $LLVM_BIN/llvm-as ]] || { echo "device-libs.sh: missing $LLVM_BIN/llvm-as" >&2; exit 3; }
mkdir -p "$DIR"
for f in "$DEVICE_LIBS"/*.bc; do
  [[ -e $DIR/$(basename "$f") ]] || ln -s "$f" "$DIR/"
done
if [[ ! -s $DIR/oclc_isa_version_942.bc ]]; then
  layout=e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9
  printf '%s\n' "target datalayout = \"$layout\"" 'target triple = "amdgcn-amd-amdhsa"' \
    '@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 9402, align 4' \
    | "$LLVM_BIN/llvm-as" -o "$DIR/oclc_isa_version_942.bc.tmp"
  mv "$DIR/oclc_isa_version_942.bc.tmp" "$DIR/oclc_isa_version_942.bc"
fi
echo "$DIR"
