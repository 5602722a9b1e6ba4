#!/usr/bin/env bash
# The main job: rocload on the built-in software agent with the shipped fixtures. Needs only
# Rust: lists a real multi-bundle shared library, explains a selection, loads a kernel code
# object whose calls and data references resolve into two other code objects, then runs a
# shipped HIP program (built by clang-19 and linked against libamdhip64.so.5, as users' programs
# are) under `rocload run`: its kernels execute on the software agent's emulator and it checks
# its results against the host.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p rocload-cli -p rocload-capi
r=target/release/rocload
fx=tests/fixtures
run() { echo; echo "\$ rocload $*"; "$r" "$@"; }
run ls $fx/hip/libvk.so
run select $fx/hip/vadd.compressed.o --agent gfx1031 --policy extended
run extract $fx/hip/vadd.compressed.o --target gfx90a:xnack- -o /tmp/rocload-demo-gfx90a.co
echo "(wrote $(stat -c %s /tmp/rocload-demo-gfx90a.co) bytes)"
run symbols $fx/codeobj/kernels_user.co
run load $fx/codeobj/kernels_user.co $fx/codeobj/devlib_math.co $fx/codeobj/devlib_data.co --agent gfx1030
run load $fx/hip/vadd.compressed.o --agent gfx90a:xnack+
echo; echo "\$ rocload load $fx/hip/vadd.o --agent gfx1100   # no compatible entry: explained"
"$r" load $fx/hip/vadd.o --agent gfx1100 || echo "(exit status $?)"
echo; echo "\$ rocload run $fx/hip/demo_app"
"$r" run $fx/hip/demo_app
