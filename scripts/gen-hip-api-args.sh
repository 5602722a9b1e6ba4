#!/bin/sh
# Regenerates capi/abi/hip-api-args.tsv: for each HIP 5.2.3 API with a callback id, where
# INIT_<name>_CB_ARGS_DATA of Debian's hip/amd_detail/hip_prof_str.h stores each of its
# parameters in hip_api_data_t (byte offset and size, computed by the C++ compiler on that
# header), in the prototype's order. librocload.so's #[export] fills the same bytes when a tool
# traces the call (rocload_ffi::trace). Needs libamdhip64-dev, python3 and clang++-19.
set -eu
header=${1:-/usr/include/hip/amd_detail/hip_prof_str.h}
cxx=${CXX:-/usr/lib/llvm-19/bin/clang++}
out=$(dirname "$0")/../capi/abi/hip-api-args.tsv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$header" "$work/offsets.cpp" <<'PY'
import re, sys
header, target = sys.argv[1], sys.argv[2]
h = open(header).read()
ids = {m.group(1): int(m.group(2))
       for m in re.finditer(r'^\s*HIP_API_ID_(\w+) = (\d+),', h, re.M)}
lines = ['#include <hip/hip_runtime.h>', '#include <hip/amd_detail/hip_prof_str.h>',
         '#include <cstddef>', '#include <cstdio>', 'int main() {']
for m in re.finditer(r'^// (\w+)\[(.*)\]\n#define INIT_\1_CB_ARGS_DATA', h, re.M):
    name = m.group(1)
    if name not in ids or ids[name] == 0:
        continue
    params = re.findall(r"\('[^']*', '(\w+)'\)", m.group(2))
    fields = ''.join(
        f'printf("%s%zu:%zu", "{"," if i else ""}", offsetof(hip_api_data_t, args.{name}.{p}), '
        f'sizeof(((hip_api_data_t*)0)->args.{name}.{p}));'
        for i, p in enumerate(params))
    lines.append(f'  printf("{name}\\t{ids[name]}\\t"); {fields} printf("\\n");')
lines += ['  return 0;', '}']
open(target, 'w').write('\n'.join(lines) + '\n')
PY
"$cxx" -D__HIP_PLATFORM_AMD__ -Wno-invalid-offsetof -x c++ "$work/offsets.cpp" -o "$work/offsets"
{
  echo "# name<TAB>id<TAB>offset:size of each parameter in hip_api_data_t (prototype order),"
  echo "# from INIT_*_CB_ARGS_DATA in $(basename "$header") (HIP 5.2.3); scripts/gen-hip-api-args.sh"
  "$work/offsets" | sort -t "$(printf '\t')" -k2,2n
} > "$out"
echo "wrote $out ($(grep -vc '^#' "$out") APIs)"
