#!/usr/bin/env bash
# Builds the benchmark input of scripts/bench-containers.py: one 30-target compressed bundle
# (CCOB v2, zstd level 3 with long-distance matching, as clang writes it) made by
# clang-offload-bundler, plus the same bundle uncompressed. Output in bench-data/
# (git-ignored), bench-data/big.ccob pointing at the last one built; reruns reuse files.
#
# MODE=rocsparse (default, seconds): the bundle of issue #11, 30 targets, 250 MB inflated,
#   35 MB compressed, ~8.4 MB of real code per target: 30 code objects AMD's toolchain
#   built, taken from Debian's librocsparse.so.0.1 (apt-get install librocsparse0; the
#   gfx1030 and gfx906 entries of its 14 bundles with entries over 5 MB, then the gfx803
#   entries of the largest of those),
#   bundled under the 30 target ids below. Needs target/release/rocload (built here) to cut
#   the entries out: clang-offload-bundler reads only the first bundle of a section.
# MODE=distinct (~30 CPU-minutes of clang): generated HIP compiled by clang-19 for each
#   target, KERNELS=720 kernels each, SHARED_PERCENT=35 of them the same for every target
#   and the rest from per-target seeds (~8 MB per target).
# MODE=shared: one generated source for every target (the first benchmark: KERNELS=650 gave
#   218 MB inflated, 12 MB compressed, since sibling targets get near-identical code).
set -euo pipefail
cd "$(dirname "$0")/.."
B=/usr/lib/llvm-19/bin
[ -x "$B/clang" ] || { echo "needs clang-19: scripts/setup.sh" >&2; exit 1; }
out=bench-data
mkdir -p "$out/co"
mode=${MODE:-rocsparse}
case $mode in rocsparse|distinct|shared) ;; *) echo "MODE must be rocsparse, distinct or shared" >&2; exit 2 ;; esac
kernels=${KERNELS:-720}
shared_percent=${SHARED_PERCENT:-35}
case $mode in
  shared) tag="shared-$kernels" ;;
  distinct) tag="distinct-$kernels-s$shared_percent" ;;
  rocsparse) tag="rocsparse" ;;
esac
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
# Entries of Debian's rocSPARSE: the gfx1030 and gfx906 code objects of every bundle with an
# entry over 5 MB, in bundle order, then the gfx803 ones of the largest, 30 in all.
from_rocsparse() {
  local lib=/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
  [ -f "$lib" ] || { echo "MODE=rocsparse needs $lib: apt-get install librocsparse0 (scripts/setup.sh)" >&2; exit 1; }
  cargo build --release --quiet -p rocload-cli
  local rl=target/release/rocload
  # Bundles with an entry over 5 MB, in bundle order; then the same, largest first.
  local listing
  listing=$("$rl" ls --json "$lib")
  mapfile -t big < <(python3 -c '
import json, sys
bundles = [(b["index"], max(e["size"] for e in b["entries"])) for b in json.load(sys.stdin)["bundles"]]
big = [b for b in bundles if b[1] > 5_000_000]
print(" ".join(str(i) for i, _ in big))
print(" ".join(str(i) for i, _ in sorted(big, key=lambda b: -b[1])))' <<< "$listing")
  local picks=() b t
  for b in ${big[0]}; do for t in gfx1030 gfx906:xnack-; do picks+=("$b $t"); done; done
  for b in ${big[1]}; do picks+=("$b gfx803"); done
  local i
  for i in "${!targets[@]}"; do
    local co="$out/co/${targets[$i]}-$tag.co"
    [ -f "$co" ] && continue
    read -r b t <<< "${picks[$i]}"
    "$rl" extract "$lib" --bundle "$b" --target "$t" -o "$co"
  done
}
if [ "$mode" = rocsparse ]; then
  from_rocsparse
else
  [ "$mode" = shared ] && generate "$(source_for 0)" 0
  export -f compile generate source_for; export B out kernels mode tag shared_percent
  for i in "${!targets[@]}"; do echo "${targets[$i]} $i"; done |
    xargs -P "${JOBS:-2}" -L 1 bash -c 'compile "$0" "$1"'
fi
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
