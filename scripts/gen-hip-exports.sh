#!/bin/sh
# Regenerates capi/hip-exports.tsv: every symbol Debian's libamdhip64.so.5 exports, with the
# version node it carries (hip_4.2 ... hip_5.2). capi/build.rs gives librocload.so's symbols
# of the same name the same version, so programs linked against Debian's library bind to ours
# without "no version information available". Needs libamdhip64-dev (or libamdhip64-5).
set -eu
lib=${1:-/usr/lib/x86_64-linux-gnu/libamdhip64.so.5}
out=$(dirname "$0")/../capi/hip-exports.tsv
{
  echo "# symbol<TAB>version, from: nm -D --with-symbol-versions --defined-only $(basename "$lib")"
  echo "# regenerate with scripts/gen-hip-exports.sh"
  nm -D --with-symbol-versions --defined-only "$lib" |
    awk '{ n = split($3, a, "@@"); if (n == 2) print a[1] "\t" a[2] }' | sort
} > "$out"
echo "wrote $out ($(grep -vc '^#' "$out") symbols)"
