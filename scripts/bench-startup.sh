#!/usr/bin/env bash
# Process start-up with 1,000 registered fat binaries (>= 200 MB compressed) against none,
# lazily and eagerly. The programs do what clang-generated host code does: 1,000 CCOBs in
# `.hip_fatbin` (4096-aligned, included with .incbin), a {HIPF, 1, ptr, 0} wrapper each in
# `.hipFatBinSegment`, and a constructor calling __hipRegisterFatBinary for each; they are
# linked against librocload.so. Prints median wall time of whole-process runs.
#   scripts/bench-startup.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-21}
B=/usr/lib/llvm-19/bin
cargo build --release --quiet
lib=$PWD/target/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One incompressible 210 KB "code object", bundled and compressed by clang-offload-bundler.
python3 -c "import os,sys; sys.stdout.buffer.write(os.urandom(210*1024))" > "$work/blob.co"
"$B/clang-offload-bundler" -type=o -compress -targets=host-x86_64-unknown-linux-gnu-,hipv4-amdgcn-amd-amdhsa--gfx1030 \
  -input=/dev/null -input="$work/blob.co" -output="$work/fat.ccob"
size=$(stat -c %s "$work/fat.ccob")
gen() { # gen COUNT OUT.c
  python3 - "$1" "$work/fat.ccob" > "$2" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
print('extern void **__hipRegisterFatBinary(const void *);')
print('struct wrapper { unsigned magic, version; const void *binary, *unused; };')
for i in range(n):
    print(f'__asm__(".section .hip_fatbin,\\"a\\",@progbits\\n.p2align 12\\nfat{i}: .incbin \\"{path}\\"\\n.previous");')
    print(f'extern const char fat{i}[];')
    print(f'__attribute__((section(".hipFatBinSegment"), used)) static const struct wrapper w{i} = {{0x48495046, 1, fat{i}, 0}};')
print('__attribute__((constructor)) static void reg(void) {')
for i in range(n):
    print(f'  __hipRegisterFatBinary(&w{i});')
print('}')
print('int main(void) { return 0; }')
PY
}
gen 1000 "$work/many.c"; gen 0 "$work/none.c"
for p in many none; do
  cc -O1 -o "$work/$p" "$work/$p.c" -L"$lib" -lrocload -Wl,-rpath,"$lib"
done
python3 - "$work" "$runs" "$size" <<'PY'
import os, statistics, subprocess, sys, time
work, runs, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def med(prog, env):
    t = []
    for _ in range(runs):
        s = time.perf_counter(); subprocess.run([f"{work}/{prog}"], check=True, env=env); t.append(time.perf_counter() - s)
    return statistics.median(t) * 1e3
base = dict(os.environ)
lazy = dict(base, ROCLOAD_LOADING="lazy")
eager = dict(base, ROCLOAD_LOADING="eager", ROCLOAD_BACKEND="soft")
none, many, many_eager = med("none", lazy), med("many", lazy), med("many", eager)
print(f"1,000 fat binaries, {1000*size/1e6:.0f} MB compressed in the executable ({os.path.getsize(work+'/many')/1e6:.0f} MB file)")
print(f"process start to exit, median of {runs}: none {none:.2f} ms, 1,000 lazily {many:.2f} ms (+{many-none:.2f} ms), 1,000 eagerly {many_eager:.0f} ms")
PY
