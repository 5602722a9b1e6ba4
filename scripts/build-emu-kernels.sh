#!/usr/bin/env bash
# Builds the emulator's test kernels (tests/emu_kernels/*.hip) for gfx1030 at -O0, -O2 and -O3
# into OUTDIR (default target/emu-kernels) as <name>-O<level>.co (plus calls-v4-O2.co, code
# object v4): bare code objects (clang-19's
# device-only output, already linked), which emu/tests/kernels.rs loads and runs.
# Needs clang-19, lld-19 and the ROCm device libraries (scripts/setup.sh installs them).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/target/emu-kernels}"
clang="${CLANG:-clang++-19}"
devlibs="${ROCM_DEVICE_LIB_PATH:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}"
mkdir -p "$out"
for src in "$root"/tests/emu_kernels/*.hip; do
    name="$(basename "$src" .hip)"
    for level in 0 2 3; do
        dst="$out/$name-O$level.co"
        if [[ ! -f "$dst" || "$src" -nt "$dst" || "$0" -nt "$dst" ]]; then
            "$clang" -x hip --cuda-device-only --no-gpu-bundle-output --offload-arch=gfx1030 \
                --rocm-device-lib-path="$devlibs" -O"$level" -c "$src" -o "$dst.tmp"
            mv "$dst.tmp" "$dst"
        fi
    done
done
# Code object v4 (what Debian's ROCm libraries are): sizes come from the dispatch packet.
src="$root/tests/emu_kernels/calls.hip"
dst="$out/calls-v4-O2.co"
if [[ ! -f "$dst" || "$src" -nt "$dst" || "$0" -nt "$dst" ]]; then
    "$clang" -x hip --cuda-device-only --no-gpu-bundle-output --offload-arch=gfx1030 \
        --rocm-device-lib-path="$devlibs" -mcode-object-version=4 -O2 -c "$src" -o "$dst.tmp"
    mv "$dst.tmp" "$dst"
fi
