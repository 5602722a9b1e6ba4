#!/usr/bin/env bash
# Regenerates the committed HSA bindings of the hsa-sys crate from Debian's ROCr headers.
#
# Writes two files (default directory: hsa-sys/src; pass another directory as $1 to compare):
#   bindings.rs  types, constants and callback types of hsa.h, hsa_ext_amd.h, hsa_ven_amd_loader.h
#   api.rs       `HsaApi`: one libloading symbol per `hsa_*` function, each a `Result`, so a
#                function the library lacks is absent rather than a load failure
#
# Building hsa-sys needs none of this; only regeneration does. Requirements (the script installs
# nothing and exits with status 3 and a message when one is missing):
#   - bindgen-cli 0.73.2:   cargo install bindgen-cli --version 0.73.2 --locked
#   - libclang 19:          apt-get install -y libclang1-19   (Debian bookworm: 1:19.1.7-3~deb12u1;
#                           libclang-19-dev pulls it in too; looked for in /usr/lib/llvm-19/lib
#                           unless LIBCLANG_PATH is set)
#   - ROCr 5.2.3 headers:   apt-get install -y libhsa-runtime-dev   (/usr/include/hsa)
# Output is formatted by bindgen's built-in prettyplease, so it does not depend on the rustfmt
# of the toolchain; `mod` declarations in lib.rs carry #[rustfmt::skip] for the same reason.
set -euo pipefail

BINDGEN_VERSION="0.73.2"
HEADERS_VERSION="5.2.3"
here="$(cd "$(dirname "$0")/.." && pwd)"
out_dir="${1:-$here/hsa-sys/src}"
wrapper="$here/hsa-sys/wrapper.h"

missing() {
  echo "gen-hsa-bindings: $1" >&2
  exit 3
}

bindgen="${BINDGEN:-$(command -v bindgen || true)}"
if [ -z "$bindgen" ] && [ -x "$HOME/.cargo/bin/bindgen" ]; then bindgen="$HOME/.cargo/bin/bindgen"; fi
[ -n "$bindgen" ] || missing "bindgen not found; install it with: cargo install bindgen-cli --version $BINDGEN_VERSION --locked"
[ -x "$bindgen" ] || missing "bindgen at $bindgen is not executable; cargo install bindgen-cli --version $BINDGEN_VERSION --locked"
have="$({ "$bindgen" --version 2>/dev/null || true; } | head -n1 | awk '{print $2}')"
[ "$have" = "$BINDGEN_VERSION" ] || missing "bindgen $have found, $BINDGEN_VERSION required (output differs between versions); cargo install bindgen-cli --version $BINDGEN_VERSION --locked"

if [ -z "${LIBCLANG_PATH:-}" ] && [ -d /usr/lib/llvm-19/lib ]; then export LIBCLANG_PATH=/usr/lib/llvm-19/lib; fi
ls "${LIBCLANG_PATH:-/nonexistent}"/libclang*.so* >/dev/null 2>&1 \
  || missing "libclang 19 not found (LIBCLANG_PATH=${LIBCLANG_PATH:-unset}); apt-get install -y libclang1-19"

for h in hsa.h hsa_ext_amd.h hsa_ven_amd_loader.h; do
  [ -f "/usr/include/hsa/$h" ] || missing "/usr/include/hsa/$h not found; apt-get install -y libhsa-runtime-dev"
done
if command -v dpkg-query >/dev/null; then
  hv="$(dpkg-query -W -f='${Version}' libhsa-runtime-dev 2>/dev/null || true)"
  case "$hv" in
    "$HEADERS_VERSION"*) ;;
    *) missing "libhsa-runtime-dev ${hv:-?} installed, $HEADERS_VERSION expected (the committed bindings are from it)";;
  esac
fi

mkdir -p "$out_dir"
common=(--formatter prettyplease --rust-target 1.80 --rust-edition 2021 --no-prepend-enum-name)
derives=(--with-derive-default --with-derive-eq --with-derive-hash --with-derive-partialeq
         --no-partialeq '.*_pfn_s' --no-hash '.*_pfn_s')
clang_args=(-- -I/usr/include/hsa)

"$bindgen" "$wrapper" "${common[@]}" "${derives[@]}" \
  --allowlist-type 'hsa_.*' --allowlist-var 'HSA_.*' \
  --allowlist-function 'hsa_.*' --blocklist-function '.*' \
  -o "$out_dir/bindings.rs" "${clang_args[@]}"

"$bindgen" "$wrapper" "${common[@]}" \
  --allowlist-function 'hsa_.*' --blocklist-type '.*' \
  --dynamic-loading HsaApi \
  --raw-line 'use crate::bindings::*;' \
  -o "$out_dir/api.rs" "${clang_args[@]}"

echo "gen-hsa-bindings: wrote $out_dir/bindings.rs and $out_dir/api.rs"
