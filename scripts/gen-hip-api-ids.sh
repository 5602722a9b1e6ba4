#!/bin/sh
# Regenerates capi/abi/hip-api-ids.tsv: HIP 5.2.3's API callback ids (HIP_API_ID_<name> = N in
# Debian's hip/amd_detail/hip_prof_str.h), which hipApiName names. Ids that alias
# HIP_API_ID_NONE are left out. Needs libamdhip64-dev.
set -eu
header=${1:-/usr/include/hip/amd_detail/hip_prof_str.h}
out=$(dirname "$0")/../capi/abi/hip-api-ids.tsv
{
  echo "# id<TAB>name, from HIP_API_ID_* in $(basename "$header") (HIP 5.2.3); scripts/gen-hip-api-ids.sh"
  sed -n 's/^ *HIP_API_ID_\([A-Za-z0-9_]*\) = \([0-9][0-9]*\),.*/\2\t\1/p' "$header" |
    grep -v -P '^\d+\t(FIRST|LAST|NONE)$' | sort -n
} > "$out"
echo "wrote $out ($(grep -vc '^#' "$out") ids)"
