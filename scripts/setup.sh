#!/usr/bin/env bash
# Installs what the tests and fixture scripts need on Debian bookworm: clang/lld/LLVM 19
# (reference readers and fixture compiler), the real ROCr library and headers (HSA backend
# tests), HIP headers and device libraries (real HIP fixtures), zstd, Debian's rocminfo (run
# against the software HSA library by tests/hsa_soft.rs), Debian's AMD-built rocRAND and
# rocSPARSE (tests/debian_libraries.rs), Debian's clr and comgr (tests/clr_over_soft_hsa.rs), python3 and prlimit (tests/bad_input.rs).
# Then a Python virtual environment, target/pyenv, with AMD's PyPI builds for ROCm 7 that
# tests/python_clients.rs runs under `rocload run`: hip-python and CuPy (see pip_clients), and
# Pillow and imagecodecs, the reference BC6H/BC7 decoders of the emulator's unit tests.
# Building rocload itself needs none of this. Each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
apt_updated=0

# Installs the Debian packages named that are not installed yet.
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "setup: installing ${missing[*]}"
  if [ "$apt_updated" -eq 0 ]; then
    $sudo apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

packages=(clang-19 lld-19 llvm-19 libhsa-runtime64-1 libhsa-runtime-dev libamdhip64-dev libamdhip64-5 libamd-comgr2 rocm-device-libs zstd
          librocrand1 librocsparse0 librocrand-dev librocsparse-dev rocminfo python3 util-linux)
apt_install "${packages[@]}"
echo "setup: Debian packages present"

# --- Python clients -------------------------------------------------------------------------
# Pinned: hip-python 7.1.1.562.43 is AMD's Cython bindings generated from ROCm 7.1.1's headers
# (it has no dependencies and dlopens the bare libamdhip64.so / libhiprtc.so, which
# `rocload run --hip 7` provides). The 10.x releases are only a metapackage over
# rocm-bindings-*, so the real 7.x wheel is pinned. CuPy for ROCm 7 goes in without its
# dependencies (--no-deps): the tests call its AMD-built kernels through ctypes; numpy (within
# CuPy's numpy<2.6,>=2.0) is added so `import cupy` gets as far as the ROCm libraries it needs.
# Pillow and imagecodecs are the independent BC6H/BC7 decoders the emulator's block-compression
# tests compare with (emu/tests/bcn_reference.py: Pillow's for BC7, imagecodecs' bcdec for both).
pip_clients=(hip-python==7.1.1.562.43 numpy==2.3.5 pillow==12.0.0 imagecodecs==2026.3.6)
pip_nodeps=(cupy-rocm-7-0==14.2.0)
venv=target/pyenv

# The interpreter: python3 on PATH (CPython 3.11 on the project's machines; hip-python and
# CuPy ship wheels for 3.10 to 3.13), else Debian's (installed above).
python=$(command -v python3)

# True when the venv's python has every pinned distribution at its pinned version.
pinned_present() {
  [ -x "$venv/bin/python" ] || return 1
  "$venv/bin/python" - "${pip_clients[@]}" "${pip_nodeps[@]}" <<'EOF'
import sys
from importlib import metadata
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    try:
        if metadata.version(name) != version:
            sys.exit(1)
    except metadata.PackageNotFoundError:
        sys.exit(1)
EOF
}

if pinned_present; then
  echo "setup: $venv has ${pip_clients[*]} ${pip_nodeps[*]}"
else
  if [ ! -x "$venv/bin/python" ]; then
    # Debian's python3 has venv but not ensurepip without python3-venv.
    if ! "$python" -c 'import ensurepip' 2>/dev/null; then
      case "$python" in
        /usr/bin/*) apt_install python3-venv ;;
        *) echo "setup: $python has no ensurepip (venv cannot install pip); use Debian's python3 with python3-venv" >&2
           exit 1 ;;
      esac
    fi
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    echo "setup: creating $venv with $python ($("$python" --version 2>&1))"
    "$python" -m venv "$venv"
  fi
  echo "setup: installing ${pip_clients[*]} ${pip_nodeps[*]} into $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "${pip_clients[@]}"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps "${pip_nodeps[@]}"
  pinned_present || { echo "setup: $venv still lacks a pinned version after pip install" >&2; exit 1; }
fi
