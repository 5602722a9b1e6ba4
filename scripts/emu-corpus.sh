#!/usr/bin/env bash
# Build the decoder-test corpus into a git-ignored directory (default target/emu-corpus;
# override with ROCLOAD_EMU_CORPUS):
#   clang/   clang-19 HIP code objects at -O0, -O2, -O3 from emu/tests/corpus-src,
#            tests/kernels and tests/hip_programs, for gfx1030, gfx90a and gfx942
#            (gfx1030's named NAME-OPT.co, the others NAME-OPT.ARCH.co)
#   rocrand/, rocsparse/   every gfx1030, gfx90a:xnack- and gfx90a:xnack+ code object of
#            Debian's librocrand and librocsparse (extracted with the rocload CLI)
# Then run: cargo test -p rocload-emu --test decode_corpus
# (ROCLOAD_EMU_SAMPLE=N for a sample of each object instead of every instruction).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${ROCLOAD_EMU_CORPUS:-target/emu-corpus}
CLANG=${CLANG:-clang++-19}
LIBDIR=${LIBDIR:-/usr/lib/x86_64-linux-gnu}
mkdir -p "$OUT/clang" "$OUT/rocrand" "$OUT/rocsparse"
# Debian's device libraries plus gfx942's ISA-version module (scripts/device-libs.sh).
DEVLIBS=${DEVLIBS:-$(scripts/device-libs.sh "$OUT/device-libs")}

built=0; failed=0
for src in emu/tests/corpus-src/*.hip tests/kernels/*.hip tests/hip_programs/*.hip; do
  [ -f "$src" ] || continue
  name=$(basename "$(dirname "$src")")-$(basename "$src" .hip)
  for arch in gfx1030 gfx90a gfx942; do
    suffix=$([ "$arch" = gfx1030 ] && echo "" || echo ".$arch")
    for opt in O0 O2 O3; do
      out="$OUT/clang/$name-$opt$suffix.co"
      [ -s "$out" ] && { built=$((built+1)); continue; }
      if "$CLANG" -x hip --rocm-device-lib-path="$DEVLIBS" --offload-arch=$arch -Iinclude -"$opt" \
          --cuda-device-only --no-gpu-bundle-output -o "$out" "$src" 2>"$out.log"; then
        rm -f "$out.log"; built=$((built+1))
      elif "$CLANG" -x hip --rocm-device-lib-path="$DEVLIBS" --offload-arch=$arch -Iinclude -"$opt" \
          --cuda-device-only --no-gpu-bundle-output -fgpu-rdc -o "$out.bc" -c "$src" 2>>"$out.log" \
          && "$CLANG" --hip-link --offload-arch=$arch --cuda-device-only -o "$out" "$out.bc" 2>>"$out.log"; then
        rm -f "$out.log" "$out.bc"; built=$((built+1))
      else
        echo "skip $src -$opt for $arch (see $out.log)"; rm -f "$out" "$out.bc"; failed=$((failed+1))
      fi
    done
  done
done
echo "clang objects: $built built, $failed not buildable"

ROCLOAD=${ROCLOAD:-}
if [ -z "$ROCLOAD" ]; then
  if [ -x target/release/rocload ]; then ROCLOAD=target/release/rocload
  else cargo build --release --bin rocload >&2; ROCLOAD=target/release/rocload; fi
fi
for lib in librocrand.so.1.1 librocsparse.so.0.1; do
  path="$LIBDIR/$lib"
  dir="$OUT/$(echo "$lib" | sed 's/^lib//; s/\.so.*//')"
  if [ ! -f "$path" ]; then echo "missing $path (apt-get install ${lib%%.so*}*)"; continue; fi
  for target in gfx1030 gfx90a:xnack- gfx90a:xnack+; do
    n=0
    # gfx1030's objects keep their old names (bundleN.co).
    suffix=$([ "$target" = gfx1030 ] && echo "" || echo ".$target")
    for b in $("$ROCLOAD" ls "$path" | awk -v t="--$target" '/^bundle/ {b=$2} index($0, t" ") {print b}'); do
      out="$dir/bundle$b$suffix.co"
      [ -s "$out" ] || "$ROCLOAD" extract "$path" --target "hipv4-amdgcn-amd-amdhsa--$target" --bundle "$b" -o "$out"
      n=$((n+1))
    done
    echo "$lib: $n $target code objects"
  done
done
du -sh "$OUT"
