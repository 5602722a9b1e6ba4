#!/usr/bin/env bash
# Builds and runs public third-party HIP samples against librocload.so, and judges each one by
# its own verification output.
#
#   scripts/run-samples.sh [--lib DIR] [--out DIR] [--timeout S] [--filter REGEX] [--list]
#                          [--via-run [--tool LIB]] SOURCE_DIR...
#
#   --lib DIR      directory holding librocload.so (default: target/release)
#   --out DIR      per-sample builds, run directories and logs (default: target/samples)
#   --timeout S    seconds a sample may run (default: 240)
#   --filter RE    only the samples whose name matches the extended regex RE
#   --list         print the samples found (and the skipped ones) without building anything
#   --via-run      link as users do, against Debian's libamdhip64.so.5 (clang --hip-link), and
#                  run each sample under `rocload run` (DIR/rocload): unmodified binaries with
#                  rocload as their HIP runtime; any "no version information available" fails
#   --tool LIB     with --via-run: also load tool library LIB (`rocload run --tool LIB`);
#                  examples/tools/kernel_census.c writes its report to NAME/tool-PID.txt
#
# The samples are not part of this repository and must never be copied into it: check them
# out anywhere and pass the directories that hold them, for example
#
#   git clone --depth 1 -b rocm-5.2.3 https://github.com/ROCm/HIP          /tmp/s/hip
#   git clone --depth 1 https://github.com/ROCm/rocm-examples              /tmp/s/rocm-examples
#   git clone --depth 1 https://github.com/ROCm/HIP-Examples               /tmp/s/HIP-Examples
#   git clone --depth 1 https://github.com/amd/HPCTrainingExamples         /tmp/s/HPCTrainingExamples
#   scripts/run-samples.sh /tmp/s/hip/samples/0_Intro /tmp/s/hip/samples/2_Cookbook \
#       /tmp/s/rocm-examples/HIP-Basic /tmp/s/rocm-examples/Applications /tmp/s/HIP-Examples \
#       /tmp/s/HPCTrainingExamples/HIP /tmp/s/HPCTrainingExamples/HIP-Optimizations \
#       /tmp/s/HPCTrainingExamples/HIPIFY
#
# Discovery: every directory under a SOURCE_DIR is looked at. Each C++/HIP source in it
# (.cpp .hip .cu .cc .cxx) that defines main() and uses the HIP API (itself or through a header
# it includes with quotes) is one sample, named SOURCE_DIR's base name / relative directory
# (/ file stem when the directory holds several such programs). It is compiled together with
# the directory's other sources (and those of subdirectories without a main, which are also
# include directories), with -I for every Common/, common/ and include/ directory next to the
# sample's ancestors (rocm-examples' Common/). Special layouts:
#   - module API: a main calling hipModuleLoad* gets each string literal "X.code"/"X.co"/
#     "X.hsaco" it names built from the kernel-only source of the directory with
#     --cuda-device-only, next to the executable;
#   - hip_obj_gen.mcin (assembly/LLVM IR to executable): host part --cuda-host-only, device
#     part from the shipped main_gfx1030.s or from the source (-S, or -emit-llvm when the
#     Makefile does so), bundled with clang-offload-bundler and embedded with llvm-mc;
#   - a failed link of several sources is retried with -fgpu-rdc (device code across units).
# Samples that need what is not here are SKIPped: MPI, the OpenMP runtime or offload (Debian's
# clang-19 has no libomp here; host-only "#pragma omp parallel" loops just run serially),
# Vulkan/OpenGL, Kokkos, textures/surfaces (no image instructions in the emulator), ROCm
# libraries whose headers are not installed, CUDA-only sources (they need hipify first), and
# training exercises that are incomplete on purpose (a directory with a solution/, "*to_fix*"),
# and the few samples that by design show nothing on this device (not_for_this_device).
# rocRAND and rocSPARSE are linked when a sample includes them and they are installed.
#
# Build: Debian's clang-19 for gfx1030 with the HIP 5.2.3 headers of /usr/include/hip, linked
# against librocload.so directly (-no-hip-rt -lrocload). A sample that does not compile is
# "BUILD name: first error" and is not held against rocload; a link that fails only on HIP
# symbols librocload.so does not define is a FAIL (the missing entry points are named).
#
# Run: in the sample's run directory (its build directory in --out, where the data files the
# sources name are copied and generated code objects are written, so that the third-party
# trees are never written to), stdin closed, with the timeout, and with the few arguments of
# sample_args below (required ones, the SDK samples' -e that turns their check on, smaller
# sizes for benchmarks). A sample that says it needs two GPUs is run again with two software
# agents (ROCLOAD_SOFT_ISA=gfx1030,gfx1030). It passes when it exits with status 0 and prints
# nothing that says failure ("FAIL", "failed", "error", "mismatch", "incorrect", "wrong",
# case-insensitive; "errors: 0", "0 errors" and a reported numerical error below 1e-3 are
# fine). "(no self-check)" marks a pass whose output has no verdict (passed/correct/success/
# verified/...).
#
# Output: one line per sample (PASS/FAIL/BUILD/SKIP), then
#   samples: N built, P passed, F failed, B did not build, S skipped
# Logs in --out: NAME/build.log and NAME/run.log for each sample (NAME with / as __), and
# results.txt (every line with the sample's run time). Exit status 1 when a sample FAILed.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIB=$ROOT/target/release
OUT=$ROOT/target/samples
TIMEOUT=240
FILTER=
LIST_ONLY=0
VIA_RUN=0
TOOL=
SOURCES=()

usage() { sed -n '5,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while (($#)); do
    case $1 in
        --lib) LIB=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        --filter) FILTER=$2; shift 2 ;;
        --list) LIST_ONLY=1; shift ;;
        --via-run) VIA_RUN=1; shift ;;
        --tool) TOOL=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run-samples: unknown option $1" >&2; usage ;;
        *) SOURCES+=("$(cd "$1" && pwd)"); shift ;;
    esac
done
((${#SOURCES[@]})) || usage
LIB=$(cd "$LIB" && pwd)
[[ -f $LIB/librocload.so ]] || { echo "run-samples: no librocload.so in $LIB (cargo build --release)" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
DEVICE_LIBS=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
ARCH=gfx1030
HIPCXX=("$LLVM_BIN/clang++" -x hip "--offload-arch=$ARCH" "--rocm-device-lib-path=$DEVICE_LIBS" -O2 -w)
LINK=(-fuse-ld=lld "--ld-path=$LLVM_BIN/ld.lld" -no-hip-rt -L"$LIB" -lrocload -Wl,-rpath,"$LIB")
if ((VIA_RUN)); then
    [[ -x $LIB/rocload ]] || { echo "run-samples: no rocload in $LIB (cargo build --release)" >&2; exit 2; }
    [[ -e /usr/lib/x86_64-linux-gnu/libamdhip64.so ]] || { echo "run-samples: --via-run needs Debian's libamdhip64-dev" >&2; exit 2; }
    LINK=(-fuse-ld=lld "--ld-path=$LLVM_BIN/ld.lld" --hip-link)
fi

SRC_RE='\.(cpp|hip|cu|cc|cxx)$'
MAIN_RE='(^|[[:space:]*])main[[:space:]]*\([^;]*$'
HIP_RE='hip[A-Z][A-Za-z0-9]*[[:space:]]*\(|hipLaunchKernelGGL|hip/hip_runtime'
HOST_API_RE='hip(Malloc|Memcpy|Free|DeviceSynchronize|LaunchKernel|ModuleLoad|StreamCreate|SetDevice)|<<<'
# Lines that mention failure only to say there was none.
BENIGN_RE='(errors?|failures?|failed|fails|mismatch(es)?|incorrect)[^[:alnum:]]{0,4}0+([.,]0+)?([^[:alnum:].]|$)|(^|[^[:alnum:].])0+ (errors?|failures?|failed|mismatch(es)?)|no (errors?|failures?|mismatch(es)?)|without errors?'
FAIL_RE='fail|error|mismatch|incorrect|wrong'
VERDICT_RE='pass|correct|success|verif|valid|(^|[^s])match|ok\b'

# The arguments a sample needs (from its README), or that shrink a benchmark whose default size
# would run for many minutes on the emulator. Matched against the sample's name.
sample_args() { # NAME MAIN_SOURCE
    case $1 in
        */Stream_Overlap/*) printf '4' ;;                      # <nstreams>, as its README runs it
        */daxpy/daxpy_[0-9]) printf '10000000' ;;              # N, as its README runs it
        */cuda-stream | */hip-stream) printf -- '-n 1048576' ;; # default 2^26 doubles: ~8 min here
        */mini-nbody/hip/*) printf '4096' ;;                   # default 30000 bodies: minutes here
        # the AMD APP SDK samples check their results against the host only when asked (-e)
        */HIP-Examples-Applications/*) if grep -qs 'sampleArgs->verify' "$2"; then printf -- '-e'; fi ;;
    esac
}
# Compiler flags a sample's own build uses and that it cannot do without.
sample_flags() { # NAME
    case $1 in
        *HIP-Examples/mini-nbody/hip/*) printf -- '-DSHMOO' ;;  # as its HIP-nbody-*.sh build it
    esac
}
# Samples that cannot show anything on a gfx1030 software agent, by design, with why (each was
# built and run once to confirm it).
not_for_this_device() { # NAME
    case $1 in
        */14_gpu_arch) echo "its kernel works only on gfx908 (#if __gfx908__): it reports an error on any other GPU, a real gfx1030 too" ;;
        */allocators) echo "needs unified memory (HSA_XNACK=1 on an APU, its README): its kernel reads malloc'd memory, which rocload reports as a fault, as a discrete GPU does" ;;
        */Stream_Overlap/*) echo "sized for a GPU: 10^8 elements x 1000 iterations per element, hours on the emulator (no size argument)" ;;
        */gpu-burn) echo "a GPU stress test: fills 80% of free memory with SGEMMs and runs until they are all done, hours on the emulator" ;;
    esac
}

# Output of a sample that wants two devices: it is run again with two software agents.
TWO_GPUS_RE='(at ?least|requires|need[s]?) (2|two) (gpu|device)'

n_built=0 n_pass=0 n_fail=0 n_build=0 n_skip=0
: >"$OUT/results.txt"

report() { # LINE [SECONDS]
    echo "$1"
    echo "$1${2:+	(${2}s)}" >>"$OUT/results.txt"
}

# The text a program's HIP use is judged on: the file and the local headers it includes.
program_text() { # FILE
    local f=$1 d inc
    d=$(dirname "$f")
    cat "$f"
    { grep -ohE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$f" || true; } | sed -E 's/.*"([^"]+)"/\1/' |
        while read -r inc; do if [[ -f $d/$inc ]]; then cat "$d/$inc"; fi; done
    return 0
}

# Sets REASON to why a sample cannot be built here (empty if it can) and LIBS to the installed
# ROCm libraries it includes.
skip_reason() { # TEXT_FILE
    local t=$1 h lib
    REASON= LIBS=()
    grep -qE '#[[:space:]]*include[[:space:]]*[<"]mpi\.h|MPI_Init' "$t" && { REASON="needs MPI"; return; }
    # Host-only "#pragma omp parallel" loops build without OpenMP and run serially; the OpenMP
    # API and target offload need libomp, which Debian's clang-19 does not have here.
    grep -qE '#[[:space:]]*include[[:space:]]*<omp\.h>|omp_[a-z_]+[[:space:]]*\(|#[[:space:]]*pragma[[:space:]]+omp[[:space:]]+target' "$t" &&
        { REASON="needs the OpenMP runtime (libomp for clang-19 is not installed)"; return; }
    grep -qE 'vulkan/vulkan|GL/gl|GLFW|glad/' "$t" && { REASON="needs Vulkan/OpenGL"; return; }
    grep -qE 'Kokkos' "$t" && { REASON="needs Kokkos"; return; }
    grep -qE 'hipTextureObject_t|hipSurfaceObject_t|hipTexRef|TexRef|hipArray|texture[[:space:]]*<|hipBindTexture|hipCreateTextureObject|tex[123]D[[:space:]]*[<(]|surf[123]D' "$t" &&
        { REASON="uses textures/surfaces (image instructions are not emulated)"; return; }
    for h in $(grep -ohE '#[[:space:]]*include[[:space:]]*<(roc|hip)(blas|blaslt|fft|solver|sparse|rand|cub|prim|thrust|tx|tracer|profiler|_runtime_compat)[^>]*>|#[[:space:]]*include[[:space:]]*<(thrust|miopen|rccl|hipfort)[^>]*>' "$t" |
        sed -E 's/.*<([^>]+)>/\1/' | sort -u); do
        lib=${h%%/*}; lib=${lib%%.h}; lib=${lib%%_*}
        if [[ ! -e /usr/include/$h ]]; then
            REASON="needs $lib (<$h> not installed)"; return
        fi
        case $lib in rocrand|rocsparse) LIBS+=("-l$lib") ;; esac
    done
    return 0
}

# Whether a directory holds a source file with a main().
has_main() { # DIR
    local f
    for f in "$1"/*; do
        if [[ -f $f && ( $f =~ $SRC_RE || $f == *.c ) ]] && grep -qE "$MAIN_RE" "$f"; then return 0; fi
    done
    return 1
}

# Whether DIR's Makefile names FILE (as itself or as its object file).
makefile_mentions() { # DIR FILE
    local mk=$1/Makefile file stem
    [[ -f $mk ]] || return 1
    file=$(basename "$2")
    stem=${file%.*}
    grep -qE "(^|[^A-Za-z0-9_.-])(${file//./\\.}|${stem//./\\.}\.o)([^A-Za-z0-9_]|$)" "$mk"
}

first_error() { # LOG
    local l
    l=$(grep -m1 -E 'error:|error [A-Z]+[0-9]+:|undefined reference|No such file' "$1" || true)
    [[ -n $l ]] || l=$(grep -v '^[[:space:]]*$' "$1" | tail -n1 || true)
    l=${l#"${SRC_ROOT:-}"/}
    echo "${l:-no output}"
}

# HIP symbols the link wanted and librocload.so lacks (a rocload gap, not a build problem).
missing_hip_symbols() { # LOG
    { grep -oE 'undefined symbol: [^ ]+' "$1" || true; } | sed 's/undefined symbol: //' |
        { grep -E '^(hip[A-Z]|hiprtc|__hip[A-Z]|_Z.*hip)' || true; } | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# -I for the ancestor directory holding each quoted header the sources include but that is not
# next to them (mini-nbody's ../timer.h, which its build scripts reach with -I../).
ancestor_headers() { # SOURCE_ROOT FILE...
    local stop inc f a
    stop=$(dirname "$1"); shift
    for f in "$@"; do
        { grep -ohE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$f" || true; } |
            sed -E 's/.*"([^"]+)"/\1/' | while read -r inc; do
                [[ -e $(dirname "$f")/$inc ]] && continue
                a=$(dirname "$f")
                while [[ $a != "$stop" && $a != / ]]; do
                    a=$(dirname "$a")
                    if [[ -f $a/$inc ]]; then echo "-I$a"; break; fi
                done
            done
    done | sort -u
}

# The directories whose Common/, common/ or include/ subdirectories are include paths.
ancestor_includes() { # DIR SOURCE_ROOT
    local d=$1 stop
    stop=$(dirname "$2")
    while :; do
        for c in Common common include; do if [[ -d $d/$c ]]; then echo "-I$d/$c"; fi; done
        if [[ $d == "$stop" || $d == / ]]; then break; fi
        d=$(dirname "$d")
    done
}

# assembly/LLVM IR to executable: host object + device code bundled and embedded by llvm-mc.
build_split() { # DIR MAIN BDIR EXE -- flags...
    local d=$1 main=$2 b=$3 exe=$4 dev
    shift 5
    "${HIPCXX[@]}" "$@" --cuda-host-only -c "$main" -o "$b/host.o" || return 1
    dev=$(ls "$d"/*"$ARCH"*.s 2>/dev/null | head -n1 || true)
    if [[ -z $dev ]]; then
        if grep -q 'emit-llvm' "$d/Makefile" 2>/dev/null; then
            "${HIPCXX[@]}" "$@" --cuda-device-only -emit-llvm -c "$main" -o "$b/device.bc" || return 1
            "$LLVM_BIN/llvm-dis" "$b/device.bc" -o "$b/device.ll" || return 1
            dev=$b/device.ll
        else
            "${HIPCXX[@]}" "$@" --cuda-device-only -S "$main" -o "$b/device.s" || return 1
            dev=$b/device.s
        fi
    fi
    "$LLVM_BIN/clang" -target amdgcn-amd-amdhsa -mcpu="$ARCH" -nogpulib "$dev" -o "$b/device.co" || return 1
    "$LLVM_BIN/clang-offload-bundler" -type=o -bundle-align=4096 \
        -targets=host-x86_64-unknown-linux,hipv4-amdgcn-amd-amdhsa--"$ARCH" \
        -input=/dev/null -input="$b/device.co" -output="$b/offload_bundle.hipfb" || return 1
    (cd "$b" && "$LLVM_BIN/llvm-mc" -triple x86_64-unknown-linux-gnu --filetype=obj \
        -o device_obj.o "$d/hip_obj_gen.mcin") || return 1
    # clang-19's host-only code names __hip_fatbin_ and __hip_gpubin_handle_ (empty CUID
    # suffix), the .mcin of HIP 5.2's time defines __hip_fatbin: glue them.
    printf '%s\n' '.bss' '.globl __hip_gpubin_handle_' '.hidden __hip_gpubin_handle_' \
        '.p2align 3' '__hip_gpubin_handle_: .zero 8' >"$b/glue.s"
    "$LLVM_BIN/llvm-mc" -triple x86_64-unknown-linux-gnu --filetype=obj -o "$b/glue.o" "$b/glue.s" || return 1
    "$LLVM_BIN/clang++" "$b/host.o" "$b/device_obj.o" "$b/glue.o" -Wl,--defsym=__hip_fatbin_=__hip_fatbin \
        "${LINK[@]}" -o "$exe"
}

run_sample() { # NAME DIR MAIN SOURCE_ROOT
    local name=$1 d=$2 main=$3 root=$4 b exe t0 rc=0 secs extras=() cextras=() modules=() \
        incs=() extra_flags=() f s reason lit src line last bad
    SRC_ROOT=$(dirname "$root")
    b=$OUT/${name//\//__}
    if [[ -n $FILTER ]] && ! [[ $name =~ $FILTER ]]; then return 0; fi

    # Sources: the other non-main sources here and in main-less subdirectories; only those the
    # Makefile names when it names any (some directories hold unused variants or fragments).
    local filter_mk=0
    if [[ -f $d/Makefile ]] && ! grep -q 'wildcard \*' "$d/Makefile"; then
        for f in "$d"/* "$d"/*/*; do
            if [[ $f =~ $SRC_RE ]] && makefile_mentions "$d" "$f"; then filter_mk=1; fi
        done
    fi
    for f in "$d"/* "$d"/*/*; do
        [[ -f $f && $f != "$main" ]] || continue
        if ((filter_mk)) && ! makefile_mentions "$d" "$f"; then continue; fi
        if [[ $(dirname "$f") != "$d" ]]; then
            # a subdirectory counts only if none of its sources has a main
            if has_main "$(dirname "$f")"; then continue; fi
        fi
        if [[ $f =~ $SRC_RE ]]; then
            if grep -qE "$MAIN_RE" "$f"; then continue; fi
            if grep -qE 'hipModuleLoad' "$main" && grep -q '__global__' "$f" && ! grep -qE "$HOST_API_RE" "$f"; then
                modules+=("$f")
            else
                extras+=("$f")
            fi
        elif [[ $f == *.c ]] && ! grep -qE "$MAIN_RE" "$f"; then
            cextras+=("$f")
        fi
    done
    for f in "$d"/*/; do
        if [[ -d $f ]] && find "$f" -maxdepth 1 -type f -regextype egrep -regex ".*($SRC_RE|\.h(pp)?$)" | grep -q .; then
            incs+=("-I${f%/}")
        fi
    done
    mapfile -t -O "${#incs[@]}" incs < <(ancestor_includes "$d" "$root")
    mapfile -t -O "${#incs[@]}" incs < <(ancestor_headers "$root" "$main" "${extras[@]}")

    local text=$b.text
    mkdir -p "$OUT"
    { program_text "$main"; for f in "${extras[@]}"; do program_text "$f"; done; } >"$text"
    skip_reason "$text"
    reason=$REASON
    rm -f "$text"
    # Exercises of training material are incomplete on purpose; their solution/ is the sample.
    if [[ -d $d/solution ]]; then
        reason="exercise template, incomplete on purpose (its solution/ is run)"
    elif [[ $(basename "$main") == *to_fix* ]]; then
        reason="exercise with a deliberate bug to fix"
    elif [[ -z $reason ]]; then
        reason=$(not_for_this_device "$name")
    fi
    if ((LIST_ONLY)); then
        echo "$name: ${main#"$SRC_ROOT"/}${extras[*]:+ + ${#extras[@]} sources}${modules[*]:+ + ${#modules[@]} modules}${reason:+ [skip: $reason]}"
        return 0
    fi
    if [[ -n $reason ]]; then
        report "SKIP $name: $reason"; n_skip=$((n_skip + 1)); return 0
    fi

    rm -rf "$b"; mkdir -p "$b"
    exe=$b/$(basename "${main%.*}")
    local flags=("${incs[@]}")
    read -ra extra_flags <<<"$(sample_flags "$name")"
    flags+=("${extra_flags[@]}")
    {
        echo "# $name: $main ${extras[*]} ${cextras[*]}"
        local ok=1
        if [[ -f $d/hip_obj_gen.mcin ]]; then
            build_split "$d" "$main" "$b" "$exe" -- "${flags[@]}" || ok=0
        else
            local objs=()
            for f in "${cextras[@]}"; do
                "$LLVM_BIN/clang" -O2 -w -c "$f" -o "$b/$(basename "$f").o" || ok=0
                objs+=("$b/$(basename "$f").o")
            done
            for f in "${modules[@]}"; do
                # every code-object file name the program mentions, built from its kernel source
                for lit in $(grep -ohE '"[^"/ ]+\.(code|co|hsaco)"' "$main" | tr -d '"' | sort -u); do
                    src=$f
                    for s in "${modules[@]}"; do
                        if [[ $(basename "${s%.*}") == "${lit%.*}" ]]; then src=$s; fi
                    done
                    [[ $src == "$f" ]] || continue
                    echo "+ module $lit <- $src"
                    "${HIPCXX[@]}" "${flags[@]}" --cuda-device-only "$src" -o "$b/$lit" || ok=0
                done
            done
            if ((ok)); then
                "${HIPCXX[@]}" "${flags[@]}" "$main" "${extras[@]}" "${objs[@]}" "${LINK[@]}" \
                    "${LIBS[@]}" -o "$exe" || ok=0
                if ((!ok)) && ((${#extras[@]})) && grep -qE 'undefined (hidden )?symbol' "$b/build.log"; then
                    echo "+ retrying with -fgpu-rdc"
                    ok=1
                    "${HIPCXX[@]}" -fgpu-rdc "${flags[@]}" "$main" "${extras[@]}" "${objs[@]}" \
                        "${LINK[@]}" "${LIBS[@]}" -o "$exe" || ok=0
                fi
            fi
        fi
        ((ok))
    } >"$b/build.log" 2>&1 || true
    if [[ ! -x $exe ]]; then
        local missing
        missing=$(missing_hip_symbols "$b/build.log")
        if [[ -n $missing ]]; then
            n_built=$((n_built + 1)); n_fail=$((n_fail + 1))
            report "FAIL $name: librocload.so lacks $missing"
        else
            n_build=$((n_build + 1))
            report "BUILD $name: $(first_error "$b/build.log")"
        fi
        return 0
    fi
    n_built=$((n_built + 1))

    # Data files the sources name, copied (not linked: samples may write over their outputs).
    for lit in $({ for f in "$main" "${extras[@]}"; do program_text "$f"; done; } |
        grep -ohE '"[A-Za-z0-9_.+-]+\.[A-Za-z0-9]+"' | tr -d '"' | sort -u); do
        if [[ -f $d/$lit && ! $lit =~ $SRC_RE && ! -e $b/$lit ]]; then cp "$d/$lit" "$b/"; fi
    done

    local args=() note=
    read -ra args <<<"$(sample_args "$name" "$main")"
    t0=$(date +%s%N)
    run_exe "$b" "$exe" "${args[@]}" || rc=$?
    if grep -qiE "$TWO_GPUS_RE" "$b/run.log"; then
        note=" (2 software agents)"
        mv "$b/run.log" "$b/run-1-agent.log"
        rc=0
        ROCLOAD_SOFT_ISA=$ARCH,$ARCH run_exe "$b" "$exe" "${args[@]}" || rc=$?
    fi
    secs=$((($(date +%s%N) - t0) / 100000000)); secs=$((secs / 10)).$((secs % 10))
    last=$(grep -v '^[[:space:]]*$' "$b/run.log" | tail -n1 | cut -c1-160 || true)
    bad=$(failure_line "$b/run.log")
    if ((VIA_RUN)) && grep -q 'no version information available' "$b/run.log"; then
        line="FAIL $name: the dynamic linker warns: $(grep -m1 'no version information' "$b/run.log" | cut -c1-160)"
    elif ((rc == 124 || rc == 137)); then
        line="FAIL $name: timeout after ${TIMEOUT}s; last line: ${last:-none}"
    elif ((rc > 128 && rc <= 128 + 64)); then
        line="FAIL $name: killed by signal $((rc - 128)); last line: ${last:-none}"
    elif ((rc != 0)); then
        line="FAIL $name: exit status $rc; ${bad:+says: $bad; }last line: ${last:-none}"
    elif [[ -n $bad ]]; then
        line="FAIL $name: output says: $bad"
    elif grep -qiE "$VERDICT_RE" "$b/run.log"; then
        line="PASS $name$note"
    else
        line="PASS $name$note (no self-check)"
    fi
    if [[ $line == PASS* ]]; then n_pass=$((n_pass + 1)); else n_fail=$((n_fail + 1)); fi
    report "$line" "$secs"
}

# Runs a built sample in its directory, stdin closed, output in run.log; its exit status.
run_exe() { # DIR EXE ARGS...
    local b=$1 exe=$2
    shift 2
    echo "${exe##*/} $*" >"$b/command"
    if ((VIA_RUN)); then
        # A tool's own report goes to its file (kernel_census.c's KERNEL_CENSUS_OUT), not into
        # the output the sample is judged by.
        (cd "$b" && KERNEL_CENSUS_OUT="$b/tool-%p.txt" exec timeout -k 10 "$TIMEOUT" \
            "$LIB/rocload" run ${TOOL:+--tool "$TOOL"} "$exe" "$@" </dev/null >"$b/run.log" 2>&1)
    else
        (cd "$b" && exec timeout -k 10 "$TIMEOUT" "$exe" "$@" </dev/null >"$b/run.log" 2>&1)
    fi
}

# The first output line that says something failed, if any. Not failures: lines that count none
# ("errors: 0"), and lines reporting a small numerical error of a floating-point result
# ("root-mean-square error ... is 0.000129845": device code uses FMAs, the host reference not).
failure_line() { # LOG
    local l num
    while IFS= read -r l; do
        if [[ ${l,,} =~ $BENIGN_RE ]]; then continue; fi
        if ! [[ ${l,,} =~ fail|mismatch|incorrect|wrong ]] &&
            num=$(grep -oE '[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?[[:space:]]*$' <<<"$l") &&
            awk -v x="$num" 'BEGIN { exit !(x + 0 < 1e-3 && x + 0 > -1e-3) }'; then
            continue
        fi
        echo "${l:0:160}"
        return 0
    done < <(grep -iE "$FAIL_RE" "$1" || true)
}

discover() { # SOURCE_ROOT
    local root=$1 d f base name dir_hip mentioned mains=() hip_mains=() kept=() cuda=()
    base=$(basename "$root")
    while IFS= read -r d; do
        mains=() hip_mains=() kept=() cuda=() dir_hip=0 mentioned=0
        for f in "$d"/*; do
            [[ -f $f && $f =~ $SRC_RE ]] || continue
            if grep -qE "$MAIN_RE" "$f"; then
                mains+=("$f")
            elif grep -qE "$HIP_RE" "$f"; then
                dir_hip=1  # a main without HIP calls may use them through its directory's sources
            fi
        done
        for f in "${mains[@]}"; do
            if ((dir_hip)) || grep -qE "$HIP_RE" < <(program_text "$f"); then
                hip_mains+=("$f")
                if makefile_mentions "$d" "$f"; then mentioned=1; fi
            elif [[ $f == *.cu ]]; then
                cuda+=("$f")
            fi
        done
        # When the directory's Makefile builds some of its programs, those are the samples.
        for f in "${hip_mains[@]}"; do
            if ((!mentioned)) || makefile_mentions "$d" "$f"; then kept+=("$f"); fi
        done
        name=$base${d#"$root"}
        if ((${#kept[@]} == 1)); then
            run_sample "$name" "$d" "${kept[0]}" "$root"
        elif ((${#kept[@]} > 1)); then
            for f in "${kept[@]}"; do
                run_sample "$name/$(basename "${f%.*}")" "$d" "$f" "$root"
            done
        elif ((${#cuda[@]})); then
            if [[ -z $FILTER || $name =~ $FILTER ]]; then
                if ((LIST_ONLY)); then echo "$name: [skip: CUDA source]"; else
                    report "SKIP $name: CUDA source ($(basename "${cuda[0]}")), needs hipify"
                    n_skip=$((n_skip + 1))
                fi
            fi
        fi
    done < <(find "$root" -type d -not -path '*/.*' | sort)
}

start=$(date +%s)
for root in "${SOURCES[@]}"; do discover "$root"; done
((LIST_ONLY)) && exit 0
summary="samples: $n_built built, $n_pass passed, $n_fail failed, $n_build did not build, $n_skip skipped"
echo "$summary ($(($(date +%s) - start)) s)"
echo "$summary" >>"$OUT/results.txt"
((n_fail == 0))
