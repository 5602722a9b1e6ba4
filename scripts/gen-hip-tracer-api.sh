#!/bin/sh
# Regenerates capi/abi/hip-tracer-api-GEN.tsv, the API-domain tables of HIP 5.3+'s tracer
# (hipRegisterTracerCallback): for each API id of a release's hip/amd_detail/hip_prof_str.h
# (HIP_API_ID_<name> = N; reserved ids left out), where its INIT_<name>_CB_ARGS_DATA stores each
# parameter in hip_api_data_t (byte offset and size, computed by the C++ compiler on that header,
# in the prototype's order; none when the macro stores none), and the size of hip_api_data_t
# and the offset of its phase_data member. librocload.so's #[export] fills the same bytes for a
# tracer (rocload_ffi::trace) and hipApiName names the ids; GEN is the libamdhip64 soname
# generation the table serves (capi/src/generation.rs).
#
# Usage: gen-hip-tracer-api.sh GEN:RELEASE:HEADER...   e.g.
#   gen-hip-tracer-api.sh 5:rocm-5.7.1:/tmp/h/rocm-5.7.1/include/hip/amd_detail/hip_prof_str.h
# HEADER must sit in a complete include tree of that release (HIP's include/ with the
# hipamd/clr include/ over it and a hip/hip_version.h), as clang++ is given its include/
# directory. Nothing is fetched. ABI_DIR (default capi/abi) says where the tables go.
# Needs python3 and clang++-19.
set -eu
cxx=${CXX:-/usr/lib/llvm-19/bin/clang++}
abi=${ABI_DIR:-$(dirname "$0")/../capi/abi}
[ $# -gt 0 ] || { echo "usage: $0 GEN:RELEASE:HEADER..." >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for spec in "$@"; do
  gen=${spec%%:*}
  rest=${spec#*:}
  release=${rest%%:*}
  header=${rest#*:}
  [ -f "$header" ] || { echo "$header: no such header" >&2; exit 1; }
  include=$(cd "$(dirname "$header")/../.." && pwd)
  python3 - "$header" "$work/offsets.cpp" <<'PY'
import re, sys
header, target = sys.argv[1], sys.argv[2]
h = open(header).read()
ids = {m.group(1): int(m.group(2))
       for m in re.finditer(r'^\s*HIP_API_ID_(\w+) = (\d+),', h, re.M)}
ids = {n: i for n, i in ids.items()
       if i > 0 and n not in ('FIRST', 'LAST') and not n.startswith('RESERVED_')}
# name -> (members the INIT macro stores, in the comment's prototype order)
stored = {}
for m in re.finditer(r'^// (\w+)\[(.*)\]\n#define INIT_\1_CB_ARGS_DATA\(cb_data\) \{ \\\n'
                     r'((?:  cb_data\.args\..*\n)*)\};', h, re.M):
    params = re.findall(r"\('[^']*', '(\w+)'\)", m.group(2))
    sets = re.findall(r'cb_data\.args\.\w+\.(\w+) = ', m.group(3))
    if sets and sets != params:
        sys.exit(f'{header}: INIT_{m.group(1)}_CB_ARGS_DATA stores {sets}, '
                 f'not the prototype order {params}')
    stored[m.group(1)] = sets
missing = sorted(n for n in ids if n not in stored)
if missing:
    sys.exit(f'{header}: ids without an INIT_*_CB_ARGS_DATA macro: {missing}')
lines = ['#include <hip/hip_runtime.h>', '#include <hip/amd_detail/hip_prof_str.h>',
         '#include <cstddef>', '#include <cstdio>',
         'static_assert(offsetof(hip_api_data_t, correlation_id) == 0, "correlation id");',
         'static_assert(offsetof(hip_api_data_t, phase) == 8, "phase");',
         'int main() {',
         '  printf("%%record\\t%zu\\t%zu\\t%zu\\n", sizeof(hip_api_data_t), '
         'alignof(hip_api_data_t), offsetof(hip_api_data_t, phase_data));']
for name, id in sorted(ids.items(), key=lambda x: x[1]):
    fields = ''.join(
        f'printf("%s%zu:%zu", "{"," if i else ""}", offsetof(hip_api_data_t, args.{name}.{p}), '
        f'sizeof(((hip_api_data_t*)0)->args.{name}.{p}));'
        for i, p in enumerate(stored[name]))
    lines.append(f'  printf("{name}\\t{id}\\t"); {fields} printf("\\n");')
lines += ['  return 0;', '}']
open(target, 'w').write('\n'.join(lines) + '\n')
PY
  "$cxx" -D__HIP_PLATFORM_AMD__ -Wno-invalid-offsetof -Wno-deprecated-declarations \
    -I "$include" -x c++ "$work/offsets.cpp" -o "$work/offsets"
  out=$abi/hip-tracer-api-$gen.tsv
  {
    echo "# HIP 5.3+ tracer records for libamdhip64.so.$gen programs, from $release's hip_prof_str.h;"
    echo "# scripts/gen-hip-tracer-api.sh. %record<TAB>sizeof<TAB>alignof<TAB>offsetof phase_data of"
    echo "# hip_api_data_t, then name<TAB>id<TAB>offset:size of each parameter INIT_*_CB_ARGS_DATA"
    echo "# stores (prototype order; empty when it stores none)."
    "$work/offsets"
  } > "$out"
  echo "wrote $out ($(grep -vc '^[#%]' "$out") APIs)"
done
