#!/usr/bin/env bash
# Installs what the tests and fixture scripts need on Debian bookworm: clang/lld/LLVM 19
# (reference readers and fixture compiler), the real ROCr library and headers (HSA backend
# tests), HIP headers and device libraries (real HIP fixtures), zstd, Debian's rocminfo (run
# against the software HSA library by tests/hsa_soft.rs), Debian's AMD-built rocRAND and
# rocSPARSE (tests/debian_libraries.rs), python3 and prlimit (tests/bad_input.rs).
# Building rocload itself needs none of this.
set -euo pipefail
packages=(clang-19 lld-19 llvm-19 libhsa-runtime64-1 libhsa-runtime-dev libamdhip64-dev rocm-device-libs zstd
          librocrand1 librocsparse0 librocrand-dev librocsparse-dev rocminfo python3 util-linux)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
