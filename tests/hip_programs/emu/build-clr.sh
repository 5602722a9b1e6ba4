#!/usr/bin/env bash
# Builds the self-checking HIP programs named (default: those AMD's HIP runtime 5.2.3 runs over
# the software HSA library, see tests/clr_over_soft_hsa.rs) at -O2 for gfx1030, linked against
# Debian's libamdhip64.so.5 (-lamdhip64) as a user of Debian's HIP links them:
#
#   tests/hip_programs/emu/build-clr.sh OUT_DIR [NAME...]
#
# Code object v4: Debian's comgr 5.2.3, which clr asks for a code object's ISA and metadata,
# does not know v5 (clang-19's default); ROCm 5.2's own clang wrote v4. Exit status 3 with a
# message when clang-19, the HIP headers, the device libraries or libamdhip64 are missing.
#
# Device printf needs one change to Debian's device libraries, made in OUT_DIR/device-libs (the
# other files are links to Debian's): ockl.bc's __ockl_hostcall_internal without `optnone`.
# That attribute (device-libs 5.2.3 put it there for HCC, and dropped it in 6.0) keeps
# clang-19's AMDGPU attributor from seeing that a hostcall kernel never reads the device-enqueue
# arguments, so it declares `hidden_default_queue` and `hidden_completion_action` (ROCm 5.2's
# clang declared them only for OpenCL's enqueue_kernel). clr 5.2.3 takes
# `hidden_completion_action` for device-side enqueue and, after the dispatch, launches its
# enqueue scheduler with no device queue: a NULL dereference in hipLaunchKernel, whatever the
# HSA runtime (on a GPU with ROCr too). Without the attribute the arguments are `hidden_none`,
# as ROCm 5.2's compiler wrote them, and the hostcall code is the same code optimised. A kernel
# that makes indirect calls (calls.hip) gets both arguments from clang-19 whatever the libraries
# (its attributor gives up on indirect calls), so clr 5.2.3 cannot launch it.
set -euo pipefail
OUT=${1:?usage: build-clr.sh OUT_DIR [NAME...]}
shift
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
DEVICE_LIBS=${DEVICE_LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
missing() { echo "build-clr.sh: missing $1 (install: apt-get install clang-19 lld-19 libamdhip64-dev rocm-device-libs)" >&2; exit 3; }
[[ -x $LLVM_BIN/clang++ ]] || missing "$LLVM_BIN/clang++"
[[ -f /usr/include/hip/hip_runtime.h ]] || missing "/usr/include/hip/hip_runtime.h"
[[ -f $DEVICE_LIBS/ocml.bc ]] || missing "ROCm device libraries in $DEVICE_LIBS"
ls /usr/lib/x86_64-linux-gnu/libamdhip64.so >/dev/null 2>&1 || missing "libamdhip64.so (libamdhip64-dev)"
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(matmul reduce scan histogram grid3d int64 math cooperative printf demo_app sync stream_values textures)
mkdir -p "$OUT/device-libs"
for bc in "$DEVICE_LIBS"/*.bc; do ln -sf "$bc" "$OUT/device-libs/"; done
rm -f "$OUT/device-libs/ockl.bc"
"$LLVM_BIN/llvm-dis" "$DEVICE_LIBS/ockl.bc" -o - \
  | sed -E '/^attributes #[0-9]+ = \{/s/ optnone//' \
  | "$LLVM_BIN/llvm-as" -o "$OUT/device-libs/ockl.bc"
HIP=(-x hip --rocm-device-lib-path="$OUT/device-libs" --offload-arch=gfx1030 -mcode-object-version=4
     -O2 -Wno-unused-result -Wno-unused-command-line-argument -fno-gpu-rdc)
LINK=(-fuse-ld=lld --ld-path="$LLVM_BIN/ld.lld" -lamdhip64)
pids=()
for name in "${names[@]}"; do
  src="$HERE/$name.hip"
  # The demo's program (tests/kernels, prebuilt at v5 in tests/fixtures/hip/demo_app).
  [[ $name == demo_app ]] && src="$HERE/../../kernels/demo_app.hip"
  "$LLVM_BIN/clang++" "${HIP[@]}" "$src" "${LINK[@]}" -o "$OUT/$name" &
  pids+=($!)
  # textures.hip's driver-API checks load the program's own code object (argv[0].co).
  if [[ $name == textures ]]; then
    "$LLVM_BIN/clang++" "${HIP[@]}" --cuda-device-only --no-gpu-bundle-output "$src" -o "$OUT/$name.co" &
    pids+=($!)
  fi
  # Two at a time (two cores).
  if [[ ${#pids[@]} -ge 2 ]]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
echo "build-clr.sh: built ${names[*]} in $OUT"
