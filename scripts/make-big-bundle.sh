#!/usr/bin/env bash
# Builds the benchmark input: one real multi-target fat binary from generated HIP sources
# compiled by clang-19 for 30 targets, bundled by clang-offload-bundler both plain and
# compressed (CCOB v2, zstd level 3 with long-distance matching, as clang does).
# Output in bench-data/ (git-ignored); reruns reuse what exists. Takes ~15 CPU-minutes.
#
# The default (MODE=distinct, KERNELS=720, SHARED_PERCENT=35) is the bundle of issue #11:
# ~8 MB of real code per target, 250 MB inflated, ~34 MB compressed. Each target compiles its
# own source in which SHARED_PERCENT% of the kernels are the same for every target and the
# rest are generated from per-target seeds: real code compresses about 5x on its own, and
# what repeats across targets is what long-distance matching finds.
# MODE=shared compiles one source for every target (the previous benchmark: 650 kernels gave
# 218 MB inflated, 12 MB compressed, since sibling targets get near-identical code).
#   MODE=shared KERNELS=650 scripts/make-big-bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B=/usr/lib/llvm-19/bin
[ -x "$B/clang" ] || { echo "needs clang-19: scripts/setup.sh" >&2; exit 1; }
out=bench-data
mkdir -p "$out/co"
mode=${MODE:-distinct}
case $mode in distinct|shared) ;; *) echo "MODE must be distinct or shared" >&2; exit 2 ;; esac
kernels=${KERNELS:-720}
shared_percent=${SHARED_PERCENT:-35}
if [ "$mode" = shared ]; then tag="shared-$kernels"; else tag="distinct-$kernels-s$shared_percent"; fi
targets=(gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx940 gfx941 gfx942
         gfx1010 gfx1011 gfx1012 gfx1013 gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036
         gfx1100 gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1200 gfx1201)
# Kernels are random expression programs (seeded, so reruns are identical): real code objects
# compress 3-6x, and near-identical kernels would compress 100x and flatter every decoder.
generate() { # generate SRC SEED_BASE
  [ -f "$1" ] && return 0
  python3 - "$kernels" "$2" "$shared_percent" > "$1.tmp" <<'PY'
import random, sys
n, base, shared = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
print('#define __global__ __attribute__((global))\n#define __device__ __attribute__((device))')
print('extern "C" __device__ unsigned __builtin_amdgcn_workitem_id_x();')
ops = ["acc = acc + x * {c}f;", "acc = acc * {c}f - x;", "acc = __builtin_fminf(acc, x + {c}f);",
       "acc = __builtin_fmaxf(acc * x, {c}f);", "bits ^= (bits << {s}) + {k}u;", "bits = bits * {k}u + (bits >> {s});",
       "acc = acc + (float)(bits & {m}u);", "x = in[(i + {k}) & 1023] * {c}f + acc;", "if (bits & {b}u) acc = acc / ({c}f + x * x);"]
for k in range(n):
    # Kernel k is the same for every target when k % 100 < shared (or base is 0).
    r = random.Random(k if base == 0 or k % 100 < shared else base * 1000003 + k)
    body = []
    for _ in range(r.randint(60, 140)):
        body.append("  " + r.choice(ops).format(c=round(r.uniform(-9, 9), 3), s=r.randint(1, 13), k=r.randint(3, 1 << 20),
                                                m=r.randint(1, 255), b=1 << r.randint(0, 15)))
    print(f"""extern "C" __global__ void kern{k}(float* out, const float* in, int n) {{
  int i = __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  float acc = in[i], x = in[(i + {k}) & 1023];
  unsigned bits = {r.randint(1, 1 << 30)}u ^ (unsigned)i;
  #pragma unroll
  for (int j = 0; j < {r.randint(2, 6)}; ++j) {{
{chr(10).join(body)}
    bits += (unsigned)j;
  }}
  out[i] = acc + (float)bits;
}}""")
PY
  mv "$1.tmp" "$1"
}
# Source of target number $2 (seed base 0 for every target in shared mode).
source_for() {
  if [ "$mode" = shared ]; then echo "$out/big-v2-$kernels.hip"; else echo "$out/big-$tag-$1.hip"; fi
}
compile() {
  local t=$1 i=$2 co="$out/co/$1-$tag.co" src
  [ -f "$co" ] && return 0
  src=$(source_for "$i")
  local base=0; [ "$mode" = shared ] || base=$((i + 1))
  generate "$src" "$base"
  "$B/clang++" -x hip -nogpulib -nogpuinc --cuda-device-only --no-gpu-bundle-output -O2 \
    --offload-arch="$t" -c "$src" -o "$co.tmp" && mv "$co.tmp" "$co"
  echo "compiled $t: $(stat -c %s "$co") bytes"
}
[ "$mode" = shared ] && generate "$(source_for 0)" 0
export -f compile generate source_for; export B out kernels mode tag shared_percent
for i in "${!targets[@]}"; do echo "${targets[$i]} $i"; done |
  xargs -P "${JOBS:-2}" -L 1 bash -c 'compile "$0" "$1"'
ids="host-x86_64-unknown-linux-gnu-"; inputs="-input=/dev/null"
for t in "${targets[@]}"; do ids+=",hipv4-amdgcn-amd-amdhsa--$t"; inputs+=" -input=$out/co/$t-$tag.co"; done
name="$out/big-$tag"
if [ ! -f "$name.bundle" ]; then
  # shellcheck disable=SC2086
  "$B/clang-offload-bundler" -type=o -bundle-align=4096 -targets="$ids" $inputs -output="$name.bundle"
fi
if [ ! -f "$name.ccob" ]; then
  # shellcheck disable=SC2086
  "$B/clang-offload-bundler" -type=o -bundle-align=4096 -compress -targets="$ids" $inputs -output="$name.ccob"
fi
# bench-containers.py reads bench-data/big.ccob: the last bundle built.
ln -sf "$(basename "$name.ccob")" "$out/big.ccob"
ln -sf "$(basename "$name.bundle")" "$out/big.bundle"
ls -lL "$out/big.bundle" "$out/big.ccob"
