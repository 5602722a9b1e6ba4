#!/usr/bin/env bash
# Builds the benchmark input: one real multi-target fat binary, over 200 MB uncompressed,
# from a generated HIP source compiled by clang-19 for ~30 targets, bundled by
# clang-offload-bundler both plain and compressed (CCOB, zstd level 3 as clang does).
# Output in bench-data/ (git-ignored); reruns reuse what exists. Takes ~10-15 CPU-minutes.
#   KERNELS=800 scripts/make-big-bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B=/usr/lib/llvm-19/bin
[ -x "$B/clang" ] || { echo "needs clang-19: scripts/setup.sh" >&2; exit 1; }
out=bench-data
mkdir -p "$out/co"
kernels=${KERNELS:-650}
targets=(gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx940 gfx941 gfx942
         gfx1010 gfx1011 gfx1012 gfx1013 gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036
         gfx1100 gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1200 gfx1201)
# Kernels are random expression programs (seeded, so reruns are identical): real code objects
# compress 3-6x, and near-identical kernels would compress 100x and flatter every decoder.
src="$out/big-v2-$kernels.hip"
if [ ! -f "$src" ]; then
  python3 - "$kernels" > "$src" <<'PY'
import random, sys
n = int(sys.argv[1])
print('#define __global__ __attribute__((global))\n#define __device__ __attribute__((device))')
print('extern "C" __device__ unsigned __builtin_amdgcn_workitem_id_x();')
ops = ["acc = acc + x * {c}f;", "acc = acc * {c}f - x;", "acc = __builtin_fminf(acc, x + {c}f);",
       "acc = __builtin_fmaxf(acc * x, {c}f);", "bits ^= (bits << {s}) + {k}u;", "bits = bits * {k}u + (bits >> {s});",
       "acc = acc + (float)(bits & {m}u);", "x = in[(i + {k}) & 1023] * {c}f + acc;", "if (bits & {b}u) acc = acc / ({c}f + x * x);"]
for k in range(n):
    r = random.Random(k)
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
fi
compile() {
  local t=$1 co="$out/co/$1-v2-$kernels.co"
  [ -f "$co" ] && return 0
  "$B/clang++" -x hip -nogpulib -nogpuinc --cuda-device-only --no-gpu-bundle-output -O2 \
    --offload-arch="$t" -c "$src" -o "$co.tmp" && mv "$co.tmp" "$co"
  echo "compiled $t: $(stat -c %s "$co") bytes"
}
export -f compile; export B out kernels src
printf '%s\n' "${targets[@]}" | xargs -P "${JOBS:-2}" -I{} bash -c 'compile {}'
ids="host-x86_64-unknown-linux-gnu-"; inputs="-input=/dev/null"
for t in "${targets[@]}"; do ids+=",hipv4-amdgcn-amd-amdhsa--$t"; inputs+=" -input=$out/co/$t-v2-$kernels.co"; done
if [ ! -f "$out/big.bundle" ]; then
  # shellcheck disable=SC2086
  "$B/clang-offload-bundler" -type=o -bundle-align=4096 -targets="$ids" $inputs -output="$out/big.bundle"
fi
if [ ! -f "$out/big.ccob" ]; then
  # shellcheck disable=SC2086
  "$B/clang-offload-bundler" -type=o -bundle-align=4096 -compress -targets="$ids" $inputs -output="$out/big.ccob"
fi
ls -l "$out/big.bundle" "$out/big.ccob"
