#!/usr/bin/env bash
# Handle churn through librocload.so's C ABI (release build): 100,000 fat-binary
# register/unregister cycles and 100,000 module load/unload cycles, with the heap in use
# (glibc mallinfo2) after a warm-up and at the end of each loop, and the wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p rocload-capi -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bash tests/hip_programs/build.sh "$out" "$PWD/target/release" >/dev/null
/usr/bin/time -f "wall %e s, peak RSS %M KB" "$out/handle_churn" tests/fixtures/hip/vadd.hip_fatbin \
  tests/fixtures/codeobj/hf_cov5.gfx1030.co hf_fill 100000 100000
