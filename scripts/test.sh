#!/usr/bin/env bash
# The test command the README gives: the whole suite, differential tests against the LLVM
# tools included. With CI set, a missing reference tool fails the tests instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/lib/llvm-19/bin:$PATH"
cargo test --workspace "$@"
