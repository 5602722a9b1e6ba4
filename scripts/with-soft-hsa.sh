#!/usr/bin/env bash
# Runs a program against the software HSA library (hsa-soft) instead of ROCr:
#
#   scripts/with-soft-hsa.sh [--release] [--fake-kfd] [--] PROGRAM [ARGS...]
#
# - builds nothing: the library must exist (`cargo build`, or `cargo build --release` with
#   --release): target/<profile>/libhsa_soft.so, SONAME libhsa-runtime64.so.1;
# - puts a directory holding libhsa-runtime64.so.1 (and .so) -> that library first in
#   LD_LIBRARY_PATH, so programs linked against ROCr load it, and sets ROCLOAD_HSA_LIBRARY to it,
#   so rocload's HSA backend opens it (ROCLOAD_BACKEND=hsa makes that an error when it fails);
# - ROCLOAD_SOFT_ISA (default gfx1030, comma-separated) chooses the software GPU agents;
# - --fake-kfd is for Debian's rocminfo, which refuses to start unless `lsmod` lists amdgpu and
#   /dev/kfd opens read-write (its CheckInitialState, before any HSA call): in a private mount
#   namespace (unshare; root, or user namespaces) /dev gets an overlay with an empty regular
#   file kfd, and PATH gets an `lsmod` that prints an amdgpu line. Nothing reads that file; the
#   real /dev and lsmod are untouched outside the namespace.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
profile=debug
fake_kfd=0
while [ $# -gt 0 ]; do
  case "$1" in
    --release) profile=release; shift;;
    --fake-kfd) fake_kfd=1; shift;;
    --) shift; break;;
    -*) echo "with-soft-hsa: unknown option $1" >&2; exit 2;;
    *) break;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--release] [--fake-kfd] [--] PROGRAM [ARGS...]" >&2; exit 2; }

lib="${HSA_SOFT_LIBRARY:-$root/target/$profile/libhsa_soft.so}"
[ -f "$lib" ] || { echo "with-soft-hsa: $lib not found; run cargo build${profile/debug/}${profile/release/ --release} first" >&2; exit 3; }

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/lib" "$dir/bin"
ln -s "$lib" "$dir/lib/libhsa-runtime64.so.1"
ln -s "$lib" "$dir/lib/libhsa-runtime64.so"
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ROCLOAD_HSA_LIBRARY="$lib"

if [ "$fake_kfd" = 0 ]; then
  "$@"
  exit $?
fi

cat >"$dir/bin/lsmod" <<'EOF'
#!/bin/sh
echo "Module                  Size  Used by"
echo "amdgpu                     0  0 (hsa-soft: no driver; this line satisfies rocminfo's check)"
EOF
chmod +x "$dir/bin/lsmod"
export PATH="$dir/bin:$PATH"
mkdir -p "$dir/upper" "$dir/work"
# shellcheck disable=SC2016
inner='mount -t overlay overlay -o "lowerdir=/dev,upperdir=$0/upper,workdir=$0/work" /dev && : >/dev/kfd && shift && exec "$@"'
if [ "$(id -u)" = 0 ]; then
  unshare -m sh -c "$inner" "$dir" -- "$@"
else
  unshare -rm sh -c "$inner" "$dir" -- "$@"
fi
