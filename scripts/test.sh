#!/usr/bin/env bash
# The test command the README gives: formatting and lint checks, then the whole suite,
# differential tests against the LLVM tools included. With CI set, a missing reference tool
# or input fails the tests instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/lib/llvm-19/bin:$PATH"
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
# The CLI binary and librocload.so belong to other workspace members than the tests that
# run them; cargo test does not build those, so build them first.
cargo build --workspace
# The decoder is checked against llvm-objdump on real code: clang-19 objects and every gfx1030
# code object of Debian's rocRAND and rocSPARSE (a git-ignored corpus; about a minute to build).
ROCLOAD=target/debug/rocload bash scripts/emu-corpus.sh >/dev/null
cargo test --workspace "$@"
