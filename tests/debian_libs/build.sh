#!/usr/bin/env bash
# Builds the Debian-library checks (rocrand_check, rocsparse_check) into OUTDIR.
#
#   tests/debian_libs/build.sh [OUTDIR]     (default: <repo>/target/debian_libs)
#
# They are ordinary host programs linked as a user would link them: against Debian's
# librocrand1 / librocsparse0 and libamdhip64.so.5 (the link-time library is Debian's
# libamdhip64-dev; at run time `rocload run OUTDIR/rocrand_check` substitutes librocload.so).
#
# Needs: clang-19/clang++-19 (or $CC/$CXX), librocrand-dev, librocsparse-dev, libamdhip64-dev.
# When something is missing it prints `skipped: ...` and exits 77 (the automake/meson "skip"
# code), so callers can tell "not built here" from "broken".
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/target/debian_libs}"

skip() {
    echo "skipped: $*"
    exit 77
}

pick() { # first command of the arguments that exists
    for c in "$@"; do
        if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then
            echo "$c"
            return 0
        fi
    done
    return 1
}

# An explicit $CC/$CXX is used as given; otherwise clang-19, then clang.
if [ -n "${CC:-}" ]; then
    cc="$(pick "$CC")" || skip "CC=$CC is not a command"
else
    cc="$(pick clang-19 clang)" || skip "no C compiler (clang-19 or \$CC)"
fi
if [ -n "${CXX:-}" ]; then
    cxx="$(pick "$CXX")" || skip "CXX=$CXX is not a command"
else
    cxx="$(pick clang++-19 clang++)" || skip "no C++ compiler (clang++-19 or \$CXX)"
fi

inc=/usr/include
for h in hip/hip_runtime_api.h rocrand/rocrand.h rocrand/rocrand_sobol32_precomputed.h \
         rocsparse/rocsparse.h; do
    [ -f "$inc/$h" ] || skip "$inc/$h is missing (install libamdhip64-dev librocrand-dev librocsparse-dev)"
done

# The development symlinks the linker needs (-lrocrand, -lrocsparse, -lamdhip64).
have_lib() {
    local name="$1"
    for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /opt/rocm/lib; do
        [ -e "$d/lib$name.so" ] && return 0
    done
    return 1
}
for l in rocrand rocsparse amdhip64; do
    have_lib "$l" || skip "lib$l.so is missing (install librocrand-dev librocsparse-dev libamdhip64-dev)"
done

mkdir -p "$out"
flags=(-O2 -g -Wall -Wextra -D__HIP_PLATFORM_AMD__)

echo "building $out/rocrand_check"
"$cxx" "${flags[@]}" -std=c++17 "$here/rocrand_check.cpp" -o "$out/rocrand_check" \
    -lrocrand -lamdhip64 -lm

echo "building $out/rocsparse_check"
"$cc" "${flags[@]}" -std=c11 "$here/rocsparse_check.c" -o "$out/rocsparse_check" \
    -lrocsparse -lamdhip64 -lm

echo "built: $out/rocrand_check $out/rocsparse_check"
echo "run:   rocload run $out/rocrand_check; rocload run $out/rocsparse_check [M]"
