#!/usr/bin/env bash
# tinyinfer's only build entry point.
#   ./build.sh             set up what is missing (a C compiler, libstb-dev), amalgamate, build
#                          tools and examples into build/, run the demo: build/classify on
#                          the bundled MobileNet and examples/data/grace_hopper.bmp
#   ./build.sh test        the test run (CI's); the last line is "N passed, N failed, N skipped" and
#                          the exit code is non-zero when anything failed
#   ./build.sh asan        every test program under ASan + UBSan (test runs a subset: CI's
#                          time), the fuzz replay, the OpenCL backend, short libFuzzer runs
#   ./build.sh fuzz        libFuzzer on tests/fuzz/fuzz_onnx.c for ${FUZZ_SECONDS:-60} s
#   ./build.sh bench       time build/tinyinfer-run on the bundled model, then float32 GEMM
#                          (bench/sgemm.c: FMA peak, 1024^3, MobileNetV2 1x1 convolutions)
#                          into bench/results/sgemm-<date>.md, then the Conv paths and the
#                          architecture models old vs new (bench/conv.c, CONV_BASE) into
#                          bench/results/conv-<date>.md. bench/run_gpu.sh is the OpenCL
#                          benchmark against torch, for a machine with a GPU
#   ./build.sh bench peers [OPTIONS]  the CPU peer benchmark (bench/peers.sh: tinyinfer
#                          against onnxruntime, LiteRT, ncnn and MNN, installed from PyPI)
#                          into bench/results/cpu-<date>.md; options go to bench/peers.py
#   ./build.sh jobs J...   only the named test jobs (shell functions j_*, e.g. j_threads;
#                          j_cl:asan passes arguments; one unit test:
#                          j_prog:opt,tests/unit/test_conv.c, as CI bundles them:
#                          j_bundle:opt,NAME,FILE,FILE...),
#                          counted as ./build.sh test counts them
#   ./build.sh amalgamate  regenerate tinyinfer.h from src/ (tools/amalgamate)
#   ./build.sh clean       remove build/
# Environment: CC (default gcc), TINYINFER_CACHE (conformance data, default
# ~/.cache/tinyinfer), JOBS (test programs run at once, default: CPU count), FUZZ_SECONDS,
# STB_DIR (where stb_image.h is, default /usr/include/stb: Debian's libstb-dev).
set -euo pipefail
cd "$(dirname "$0")"

CC=${CC:-gcc}
CACHE=${TINYINFER_CACHE:-$HOME/.cache/tinyinfer}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
ONNX_VERSION=1.23.2 # the onnx package the conformance data and onnx_status.md come from
DEMO_MODEL=tests/data/light_squeezenet.onnx # README example, tools test, bench
CLASSIFY_DEMO=(examples/data/mobilenet_v2_1.0_224_quant.tflite examples/data/grace_hopper.bmp
    examples/data/imagenet_labels.txt)
CORAL=../shared/models/coral # more TFLite models (not bundled): the segment test uses one
STB_DIR=${STB_DIR:-/usr/include/stb}
INC=(-I. -Itests/harness)
LIBS=(-lm -pthread)
WARN=(-Wall -Wextra -Werror) # compile checks and the README example
TWARN=(-Wall -Wextra)        # test programs: a warning shows in the log, the test still runs
C99=(-std=c99 -pedantic)
# Test programs are built without full debug info, sanitizer builds with line tables (-g1:
# file and line in their reports): -g made each compile of the header ~75 % slower, and the
# test run compiles it ~60 times on CI's 2 cores. Rebuild with -g by hand to debug.
SAN=(-O1 -g1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
T=build/test # scratch space of ./build.sh test

say() { printf '%s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }

# ---- setup ---------------------------------------------------------------------------------
APT_UPDATED=0
apt_install() { # apt_install PKG...: only as root on a Debian-like system; 1 when impossible
    [ "$(id -u)" = 0 ] && have apt-get || return 1
    if [ "$APT_UPDATED" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || return 1
        APT_UPDATED=1
    fi
    say "setup: apt-get install -y $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

need() { # need TOOL PACKAGE: 0 when TOOL is there (installing PACKAGE if it can)
    have "$1" && return 0
    apt_install "$2" || true
    have "$1"
}

HAVE_STB=0
setup_build() {
    if ! need "$CC" gcc; then
        for c in cc gcc clang; do if have "$c"; then CC=$c; break; fi; done
        have "$CC" || { say "error: no C compiler (install gcc)"; exit 1; }
    fi
    # the examples read images with stb_image.h (the library itself never uses it)
    [ -f "$STB_DIR/stb_image.h" ] || apt_install libstb-dev || true
    if [ -f "$STB_DIR/stb_image.h" ]; then HAVE_STB=1; fi
    return 0
}
NO_STB="no $STB_DIR/stb_image.h (apt-get install libstb-dev, or set STB_DIR)"

HAVE_GXX=0 HAVE_CLANG=0 HAVE_CLANGXX=0 HAVE_NM=0
setup_test() {
    setup_build
    need g++ g++ && HAVE_GXX=1
    need clang clang && HAVE_CLANG=1
    need clang++ clang && HAVE_CLANGXX=1
    need nm binutils && HAVE_NM=1
    have timeout || { say "error: timeout (coreutils) is missing"; exit 1; }
    return 0
}

# Conformance data: generated once into $CACHE/onnx (needs python3 with onnx and numpy).
# Prints why not and returns 1 when it cannot.
ensure_conformance_data() {
    [ -d "$CACHE/onnx/node" ] && return 0
    have python3 || { say "python3 is missing"; return 1; }
    if ! python3 -c 'import onnx, numpy' 2>/dev/null; then
        python3 -m pip install -q "onnx==$ONNX_VERSION" numpy onnxruntime ||
            { say "could not pip install onnx numpy onnxruntime"; return 1; }
    fi
    local tmp="$CACHE/onnx.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$CACHE"
    say "generating the ONNX conformance suites into $CACHE/onnx"
    python3 tests/conformance/gen_onnx_suite.py "$tmp" || { rm -rf "$tmp"; return 2; }
    rm -rf "$CACHE/onnx"
    mv "$tmp" "$CACHE/onnx"
}

# ---- building ------------------------------------------------------------------------------
amalgamate() { sh tools/amalgamate "$@"; }

build_all() { # tools/*.c and examples/*.c -> build/<name>
    mkdir -p build
    local f
    for f in tools/*.c examples/*.c; do
        [ -f "$f" ] || continue
        local out="build/$(basename "${f%.c}")" extra=()
        case $f in examples/game_loop.c) ;; examples/*) extra=(-I"$STB_DIR") ;; esac
        if [ "${#extra[@]}" != 0 ] && [ "$HAVE_STB" = 0 ]; then
            say "skip $f: $NO_STB"
            rm -f "$out"
            continue
        fi
        say "cc $f -> $out"
        "$CC" -O2 -g "${C99[@]}" -Wall -Wextra "${INC[@]}" "${extra[@]}" "$f" -o "$out" "${LIBS[@]}"
    done
}

readme_example() { # writes the C block of README.md between the example markers to $1
    awk '/<!-- example:begin -->/ { on = 1; next } /<!-- example:end -->/ { on = 0 }
         on && !/^```/ { print }' README.md >"$1"
    [ -s "$1" ]
}

demo() { # the top 5 classes of grace_hopper.bmp, "military uniform" first
    [ -x build/classify ] || { say "error: build/classify was not built: $NO_STB"; exit 1; }
    say "demo: build/classify ${CLASSIFY_DEMO[*]}"
    build/classify "${CLASSIFY_DEMO[@]}"
}

# ---- test jobs -----------------------------------------------------------------------------
# A job is a shell function run in the background with its output in a log. Its programs
# print "N passed, N failed[, N skipped|unsupported]" lines, which are added up; a job with
# no such line counts as one check, by its exit code. `skip REASON` records one skipped part.
JOB_NAMES=()
job() { # job NAME FUNCTION ARGS...
    local id=${#JOB_NAMES[@]}
    JOB_NAMES+=("$1")
    shift
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n 2>/dev/null || true; done
    (
        set +e
        local t0=$SECONDS
        (set -e; "$@") >"$T/jobs/$id.log" 2>&1
        echo $? >"$T/jobs/$id.rc"
        echo $((SECONDS - t0)) >"$T/jobs/$id.time"
    ) &
}
skip() { say "SKIP $*"; say "0 passed, 0 failed, 1 skipped"; }

PASSED=0 FAILED=0 SKIPPED=0
count() { # count NAME LOG RC SECONDS: adds a finished job's numbers to the totals, reports it
    local name=$1 log=$2 rc=$3 secs="${4:-?} s" line p=0 f=0 s=0
    # sum every summary line (a job may run several programs, or one program several times)
    line=$({ grep -aEo '[0-9]+ passed, [0-9]+ failed(, [0-9]+ (skipped|unsupported))?' "$log" || true; } |
        awk '{ p += $1; f += $3; s += $5 } END { if (NR) printf "%d passed, %d failed, %d skipped", p, f, s }')
    if [ -n "$line" ]; then
        read -r p _ f _ s _ <<<"$line"
        if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi # crashed after its summary
    elif [ "$rc" = 0 ]; then
        p=1
    else
        f=1
    fi
    PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + s))
    if [ "$f" != 0 ]; then
        printf 'FAIL  %-46s %6s  %s\n' "$name" "$secs" "${line:-exit code $rc}"
        tail -n 40 "$log" | sed 's/^/      | /'
    elif [ "$s" != 0 ] && [ "$p" = 0 ]; then
        printf 'SKIP  %-46s %6s  %s\n' "$name" "$secs" "$(grep -a -m1 '^SKIP' "$log" | sed 's/^SKIP //')"
    else
        printf 'ok    %-46s %6s  %s\n' "$name" "$secs" "$line"
    fi
}

collect() { # waits for every job started so far and counts them, in start order
    wait || true
    local id
    for id in "${!JOB_NAMES[@]}"; do
        [ -f "$T/jobs/$id.counted" ] && continue
        count "${JOB_NAMES[$id]}" "$T/jobs/$id.log" "$(cat "$T/jobs/$id.rc" 2>/dev/null || echo 1)" \
            "$(cat "$T/jobs/$id.time" 2>/dev/null || echo '?')"
        : >"$T/jobs/$id.counted"
    done
}

check() { # check NAME COMMAND...: a quick serial check, counted by exit code
    local id=${#JOB_NAMES[@]}
    JOB_NAMES+=("$1")
    shift
    set +e
    local t0=$SECONDS
    (set -e; "$@") >"$T/jobs/$id.log" 2>&1
    echo $? >"$T/jobs/$id.rc"
    echo $((SECONDS - t0)) >"$T/jobs/$id.time"
    set -e
}

# -- the checks themselves (each runs inside `job` or `check`) --

j_fresh_header() {
    amalgamate "$T/tinyinfer.h.fresh"
    if ! cmp -s "$T/tinyinfer.h.fresh" tinyinfer.h; then
        say "tinyinfer.h is stale: run ./build.sh amalgamate"
        diff "$T/tinyinfer.h.fresh" tinyinfer.h | head -20 || true
        return 1
    fi
    if ! cmp -s "$T/tinyinfer.h.fresh_cl.h" tinyinfer_cl.h; then
        say "tinyinfer_cl.h is stale: run ./build.sh amalgamate"
        return 1
    fi
}

j_no_print() { # the library never prints, aborts or exits (STYLE.md section 6)
    local hits
    hits=$(grep -rnE '\b(printf|fprintf|puts|abort|exit)[[:space:]]*\(' src || true)
    [ -z "$hits" ] && return 0
    say "src/ must not call printf, fprintf, puts, abort or exit (snprintf/vsnprintf are fine):"
    say "$hits"
    return 1
}

j_version() { # the title block names the version the API defines
    local v
    v=$(sed -nE 's/^#define TINYINFER_VERSION_STRING "([^"]+)"/\1/p' src/tinyinfer_api.h)
    [ ! -f src/doc/intro.h ] || grep -q "tinyinfer $v " src/doc/intro.h ||
        { say "src/doc/intro.h does not say 'tinyinfer $v'"; return 1; }
}

# Compile checks (tests/build/): the implementation TU alone, with every warning as error.
# Each full compile of the implementation takes a minute of this machine's CPU, so the
# configuration variants (-DTI_NO_...) are checked with -fsyntax-only: every front-end
# warning (the library's functions are TI__PRIVATE, static and marked unused, so dropping a
# caller cannot leave an unused function to warn about); the optimiser's warnings
# (-Wmaybe-uninitialized and the like) come from the full -O2 compiles of each compiler.
j_compile() { # j_compile COMPILER LANG(c|c++) [-fsyntax-only] EXTRA-FLAGS...
    local cc=$1 lang=$2
    shift 2
    local std=("${C99[@]}" -Wmissing-prototypes) out=(-c -o "$T/build/impl.$BASHPID.o")
    [ "$lang" = c++ ] && std=()
    if [ "${1:-}" = -fsyntax-only ]; then
        out=(-fsyntax-only)
        shift
    fi
    "$cc" -x "$lang" -O2 "${std[@]}" "${WARN[@]}" "$@" "${INC[@]}" "${out[@]}" tests/build/impl.c
}

j_symbols() { # every exported symbol of the implementation starts with ti_, none with ti__;
    # the same object then links with a C user and with a C++ user (one compile, not three)
    local d="$T/build/symbols" obj="$T/build/symbols/impl.o" bad
    mkdir -p "$d"
    "$CC" -x c -O2 "${C99[@]}" "${WARN[@]}" -Wmissing-prototypes "${INC[@]}" -c tests/build/impl.c -o "$obj"
    nm -g --defined-only "$obj" | awk 'NF >= 3 { print $3 }' >"$d/symbols.txt"
    say "$(wc -l <"$d/symbols.txt") exported symbols"
    bad=$(grep -vE '^ti_' "$d/symbols.txt" || true)
    bad="$bad$(grep -E '^ti__' "$d/symbols.txt" || true)"
    [ -z "$bad" ] || { say "exported symbols outside ti_ (or internal ti__):"; say "$bad"; return 1; }
    say "two C TUs, one implementation:"
    "$CC" -x c -O2 "${C99[@]}" "${TWARN[@]}" "${INC[@]}" -c tests/build/user.c -o "$d/user_c.o"
    "$CC" "$obj" "$d/user_c.o" -o "$d/user_c" "${LIBS[@]}"
    "$d/user_c"
    if [ "$HAVE_GXX" = 1 ]; then
        say "C implementation, C++ user:"
        g++ -x c++ -O2 "${TWARN[@]}" "${INC[@]}" -c tests/build/user.c -o "$d/user_cxx.o"
        g++ "$obj" "$d/user_cxx.o" -o "$d/user_cxx" "${LIBS[@]}"
        "$d/user_cxx"
    fi
}

j_two_tu() { # j_two_tu IMPL-COMPILER IMPL-LANG USER-COMPILER USER-LANG LINKER (impl: -Werror)
    local d="$T/build/two_tu_$1_$3"
    mkdir -p "$d"
    local s1=("${C99[@]}") s2=("${C99[@]}")
    [ "$2" = c++ ] && s1=()
    [ "$4" = c++ ] && s2=()
    "$1" -x "$2" -O2 "${s1[@]}" "${WARN[@]}" "${INC[@]}" -c tests/build/impl.c -o "$d/impl.o"
    "$3" -x "$4" -O2 "${s2[@]}" "${TWARN[@]}" "${INC[@]}" -c tests/build/user.c -o "$d/user.o"
    "$5" "$d/impl.o" "$d/user.o" -o "$d/user" "${LIBS[@]}"
    "$d/user"
}

j_static() { # j_static COMPILER: with TI_STATIC the API is static and nothing is exported
    local d="$T/build/static_$1"
    mkdir -p "$d"
    "$1" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" tests/build/static.c -o "$d/static" "${LIBS[@]}"
    "$d/static"
    if [ "$HAVE_NM" = 1 ]; then
        local ex
        ex=$(nm -g --defined-only "$d/static" | awk 'NF >= 3 { print $3 }' | grep -E '^ti_' || true)
        [ -z "$ex" ] || { say "TI_STATIC still exports:"; say "$ex"; return 1; }
    fi
}

j_no_mmap() { # the error tests with TI_NO_MMAP: model files read into a buffer, not mapped
    local out="$T/opt/errors_test_errors_no_mmap"
    mkdir -p "$T/opt"
    "$CC" -O2 -DTI_NO_MMAP "${C99[@]}" "${TWARN[@]}" "${INC[@]}" tests/errors/test_errors.c \
        -o "$out" "${LIBS[@]}"
    timeout 900 "$out"
}

j_prog() { # j_prog MODE(opt|asan) SOURCE [ARGS...]: compile one test program and run it
    local mode=$1 src=$2
    shift 2
    local name
    name=$(basename "${src%.c}")
    local out="$T/$mode/$(basename "$(dirname "$src")")_$name"
    mkdir -p "$T/$mode"
    if [ "$mode" = asan ]; then
        "$SANCC" "${SAN[@]}" "${C99[@]}" "${TWARN[@]}" "${INC[@]}" "$src" -o "$out" "${LIBS[@]}"
        ASAN_OPTIONS=$ASAN_OPTS UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            timeout 1200 "$out" "$@"
    else
        "$CC" -O2 "${C99[@]}" "${TWARN[@]}" "${INC[@]}" "$src" -o "$out" "${LIBS[@]}"
        timeout 900 "$out" "$@"
    fi
}

# Test programs built as one: compiling the header is nearly all of a unit test's job (gcc
# -O2: 62 s of 62 for test_tensor on a Zen 3; clang ASan: 300-470 s, where test_conv then
# runs for 15), so the programs of a bundle are compiled as one translation unit, each main
# renamed, and a main that runs the one its first argument names. A bundle's programs must
# not share a static name (the compiler says which); each runs in a process of its own.
bundle_src() { # bundle_src OUT.c SOURCES...
    local out=$1 f n
    shift
    : >"$out"
    for f in "$@"; do
        n=$(basename "${f%.c}")
        printf '#define main ti_bundle_%s\n#include "%s"\n#undef main\n' "$n" "$PWD/$f" >>"$out"
    done
    printf '#include <stdio.h>\n#include <string.h>\nint main(int argc, char **argv) {\n' >>"$out"
    printf '    const char *name = argc > 1 ? argv[1] : "";\n' >>"$out"
    for f in "$@"; do
        n=$(basename "${f%.c}")
        if grep -q 'int main(void)' "$f"; then
            printf '    if (strcmp(name, "%s") == 0) return ti_bundle_%s();\n' "$n" "$n" >>"$out"
        else
            printf '    if (strcmp(name, "%s") == 0) return ti_bundle_%s(argc - 1, argv + 1);\n' \
                "$n" "$n" >>"$out"
        fi
    done
    printf '    fprintf(stderr, "usage: %%s TEST [ARGS...]\\n", argv[0]);\n    return 2;\n}\n' >>"$out"
}

j_bundle() { # j_bundle MODE(opt|asan) NAME SOURCES...: one build of SOURCES, each run in turn
    local mode=$1 name=$2 d="$T/$1/bundle_$2" f rc=0
    shift 2
    mkdir -p "$d"
    bundle_src "$d/bundle.c" "$@"
    if [ "$mode" = asan ]; then
        "$SANCC" "${SAN[@]}" "${C99[@]}" "${TWARN[@]}" "${INC[@]}" "$d/bundle.c" -o "$d/bundle" "${LIBS[@]}"
    else
        "$CC" -O2 "${C99[@]}" "${TWARN[@]}" "${INC[@]}" "$d/bundle.c" -o "$d/bundle" "${LIBS[@]}"
    fi
    for f in "$@"; do
        say "== $f"
        if [ "$mode" = asan ]; then
            ASAN_OPTIONS=$ASAN_OPTS UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                timeout 1200 "$d/bundle" "$(basename "${f%.c}")" || { rc=1; say "FAIL: $f (exit code)"; }
        else
            timeout 900 "$d/bundle" "$(basename "${f%.c}")" || { rc=1; say "FAIL: $f (exit code)"; }
        fi
    done
    return $rc
}

# The -O2 bundles of tests/unit and tests/errors (sets with no static name in common); a
# test in none of them is built on its own
OPT_BUNDLES=(
    "tests/unit/test_conv.c tests/unit/test_tensor.c tests/errors/test_tflite_errors.c tests/errors/test_tflite_mutations.c tests/unit/test_bind.c"
    "tests/unit/test_act.c tests/errors/test_errors.c tests/errors/test_mutations.c"
    "tests/unit/test_qgemm.c tests/unit/test_session.c"
)

# The ASan programs that use only the public API link one ASan build of the implementation
# instead of compiling the header each (one such compile is ~5 CPU-minutes here): they
# leave out TINYINFER_IMPLEMENTATION when TI_TEST_SHARED_IMPL is defined. The unit and
# error tests among them are the ones that say so (asan_shared_tests).
asan_shared_tests() { grep -l TI_TEST_SHARED_IMPL tests/unit/*.c tests/errors/*.c 2>/dev/null || true; }
asan_impl() { # asan_impl OUT [DEFINES...]: the implementation alone, as an ASan object
    local out=$1
    shift
    printf '#define TINYINFER_IMPLEMENTATION\n#include "tinyinfer.h"\n' >"$out.c"
    "$SANCC" "${SAN[@]}" "${C99[@]}" "${TWARN[@]}" "${INC[@]}" "$@" -c "$out.c" -o "$out.o"
}
asan_run() { # asan_run BINARY ARGS...
    ASAN_OPTIONS=$ASAN_OPTS UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 timeout 900 "$@"
}
asan_link() { # asan_link IMPL OUT SOURCES... [DEFINES...]: sources against IMPL.o
    local impl=$1 out=$2
    shift 2
    "$SANCC" "${SAN[@]}" "${C99[@]}" "${TWARN[@]}" "${INC[@]}" -DTI_TEST_SHARED_IMPL "$@" \
        "$impl.o" -o "$out" "${LIBS[@]}" -ldl
}

j_asan_shared() { # j_asan_shared PART: PART 0: the unit and error tests of asan_shared_tests
    # and the ONNX and TFLite fuzz targets on their corpora and the test models; PART 1 (TI_NO_OPENCL):
    # the RPC unit test and the RPC and tuning-file fuzz targets on their corpora
    local d="$T/asan/shared$1" f
    mkdir -p "$d"
    if [ "$1" = 0 ]; then
        asan_impl "$d/impl"
        for f in $(asan_shared_tests); do
            say "== $f"
            asan_link "$d/impl" "$d/$(basename "${f%.c}")" "$f"
            asan_run "$d/$(basename "${f%.c}")"
        done
        asan_link "$d/impl" "$d/fuzz_onnx" tests/fuzz/fuzz_onnx.c tests/fuzz/replay_main.c
        asan_run "$d/fuzz_onnx" tests/fuzz/corpus/onnx tests/data
        asan_link "$d/impl" "$d/fuzz_tflite" tests/fuzz/fuzz_tflite.c tests/fuzz/replay_main.c
        asan_run "$d/fuzz_tflite" tests/fuzz/corpus/tflite tests/data examples/data
        # the OpenCL loader test (j_cl asan builds the header for it under ./build.sh asan)
        say "== tests/cl/test_cl_loader.c"
        "$CC" -shared -fPIC "${INC[@]}" tests/cl/stub_opencl.c -o "$d/libstub_incomplete.so"
        "$CC" -shared -fPIC -DSTUB_COMPLETE "${INC[@]}" tests/cl/stub_opencl.c -o "$d/libstub_complete.so"
        asan_link "$d/impl" "$d/test_cl_loader" tests/cl/test_cl_loader.c
        LSAN_OPTIONS=suppressions=$PWD/tests/cl/lsan.supp \
            asan_run "$d/test_cl_loader" "$d/libstub_incomplete.so" "$d/libstub_complete.so"
    else
        asan_impl "$d/impl" -DTI_NO_OPENCL
        asan_link "$d/impl" "$d/test_rpc_unit" tests/rpc/test_rpc_unit.c # defines TI_NO_OPENCL
        asan_run "$d/test_rpc_unit"
        asan_link "$d/impl" "$d/fuzz_rpc" tests/fuzz/fuzz_rpc.c tests/fuzz/replay_main.c # the same
        asan_run "$d/fuzz_rpc" tests/fuzz/corpus/rpc
        asan_link "$d/impl" "$d/fuzz_tuning" tests/fuzz/fuzz_tuning.c tests/fuzz/replay_main.c -DTI_NO_OPENCL
        asan_run "$d/fuzz_tuning" tests/fuzz/corpus/tuning
    fi
}

# ---- tinyinfer-rpc (tools/rpc/ti_rpc.h, tests/rpc) ----
# The rpc, tune and Wine jobs need the same tools: ./build.sh test compiles them once, into
# $T/prebuilt (rpc_compile, tune_compile, started beside the conformance runner), and each
# job copies them; a job run alone (./build.sh jobs j_rpc) compiles its own.
rpc_build() { # rpc_build DIR: tinyinfer-rpc (-Werror) and tinyinfer-run into DIR
    mkdir -p "$1"
    if [ -x "$T/prebuilt/tinyinfer-rpc" ] && [ -x "$T/prebuilt/tinyinfer-run" ]; then
        cp "$T/prebuilt/tinyinfer-rpc" "$T/prebuilt/tinyinfer-run" "$1/"
        return 0
    fi
    rpc_compile "$1"
}
rpc_compile() { # rpc_compile DIR: compiles tinyinfer-rpc (-Werror) and tinyinfer-run into DIR
    mkdir -p "$1"
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" tools/tinyinfer-rpc.c -o "$1/tinyinfer-rpc" "${LIBS[@]}"
    [ -x "$1/tinyinfer-run" ] ||
        "$CC" -O2 "${C99[@]}" "${INC[@]}" tools/tinyinfer-run.c -o "$1/tinyinfer-run" "${LIBS[@]}"
}

j_rpc() { # unit test (vectors, codecs, dispatch), then the loopback test of the tool
    local d="$T/rpc"
    rpc_build "$d"
    "$CC" -O2 "${C99[@]}" "${TWARN[@]}" "${INC[@]}" tests/rpc/test_rpc_unit.c -o "$d/test_rpc_unit" "${LIBS[@]}"
    timeout 300 "$d/test_rpc_unit"
    timeout 600 bash tests/rpc/test_rpc.sh "$d"
}

tune_build() { # tune_build DIR: tinyinfer-rpc, tinyinfer-run and tinyinfer-tune (-Werror) into DIR
    rpc_build "$1"
    if [ -x "$T/prebuilt/tinyinfer-tune" ]; then cp "$T/prebuilt/tinyinfer-tune" "$1/"; else tune_compile "$1"; fi
}
tune_compile() { # tune_compile DIR: compiles tinyinfer-tune (-Werror) into DIR
    mkdir -p "$1"
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" tools/tinyinfer-tune.c -o "$1/tinyinfer-tune" "${LIBS[@]}"
}

j_tune() { # tinyinfer-tune on loopback: server killed twice, tuner killed, journals (OpenCL)
    local d="$T/tune"
    tune_build "$d"
    [ "$HAVE_CLANG" = 1 ] && clang -O1 "${C99[@]}" "${WARN[@]}" "${INC[@]}" -c tools/tinyinfer-tune.c -o "$d/tune.clang.o"
    timeout 600 bash tests/rpc/test_tune.sh "$d"
}

j_tune_netns() { # tuning between two network namespaces, the link down mid-tune
    local d="$T/tune_netns"
    tune_build "$d"
    timeout 300 bash tests/rpc/test_tune_netns.sh "$d"
}

j_rpc_werror() { # the tool compiles with -Werror under clang too (j_rpc builds it with $CC)
    [ "$HAVE_CLANG" = 1 ] || { skip "tinyinfer-rpc with clang: no clang"; return 0; }
    mkdir -p "$T/rpc"
    clang -O1 "${C99[@]}" "${WARN[@]}" "${INC[@]}" -c tools/tinyinfer-rpc.c -o "$T/rpc/tinyinfer-rpc.clang.o"
}

j_rpc_cl() { # a run with --backend opencl through the server (SKIP without a device)
    local d="$T/rpc_cl"
    rpc_build "$d"
    timeout 600 bash tests/rpc/test_rpc.sh "$d" opencl
}

j_rpc_netns() { # server and client in two network namespaces joined by a veth pair
    local d="$T/rpc_netns"
    rpc_build "$d"
    timeout 300 bash tests/rpc/test_netns.sh "$d"
}

j_fuzz_short() { # a short libFuzzer run (when clang has libFuzzer)
    [ "$HAVE_LIBFUZZER" = 1 ] ||
        { skip "libFuzzer run: clang has no libFuzzer here (the corpus is replayed under ASan)"; return 0; }
    local d="$T/fuzz" root=$PWD
    mkdir -p "$d/corpus"
    build_fuzzer "$d/fuzz_onnx"
    cd "$d"
    timeout 120 ./fuzz_onnx -max_total_time=20 -timeout=10 -rss_limit_mb=2048 \
        -dict="$root/tests/fuzz/onnx.dict" -artifact_prefix=./ corpus "$root/tests/fuzz/corpus/onnx"
    clang -O1 -g1 -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer "${INC[@]/#-I/-I$root/}" \
        "$root/tests/fuzz/fuzz_tflite.c" -o fuzz_tflite "${LIBS[@]}"
    mkdir -p corpus_tflite
    timeout 120 ./fuzz_tflite -max_total_time=20 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix=./ corpus_tflite "$root/tests/fuzz/corpus/tflite"
    clang -O1 -g1 -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer "${INC[@]/#-I/-I$root/}" \
        "$root/tests/fuzz/fuzz_rpc.c" -o fuzz_rpc "${LIBS[@]}"
    mkdir -p corpus_rpc
    timeout 120 ./fuzz_rpc -max_total_time=20 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix=./ corpus_rpc "$root/tests/fuzz/corpus/rpc"
    clang -O1 -g1 -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -DTI_NO_OPENCL \
        "${INC[@]/#-I/-I$root/}" "$root/tests/fuzz/fuzz_tuning.c" -o fuzz_tuning "${LIBS[@]}"
    mkdir -p corpus_tuning
    TI_FUZZ_MODEL=$root/tests/data/conv2d_padding.onnx timeout 120 ./fuzz_tuning -max_total_time=10 \
        -timeout=10 -rss_limit_mb=2048 -artifact_prefix=./ corpus_tuning "$root/tests/fuzz/corpus/tuning"
}

j_i686() { # 32-bit Linux (i686): the session, error and mutation tests and the ONNX and
    # TFLite fuzz replays, ASan + UBSan, where size_t is 32 bits: a model's 64-bit dims must
    # be refused, not wrapped (run natively through the cross toolchain's own loader); then
    # three unit tests on the x87's wider float math
    local cc=i686-linux-gnu-gcc d="$T/i686" f
    have "$cc" || { skip "32-bit Linux: no $cc (apt-get install gcc-i686-linux-gnu)"; return 0; }
    local lib=/usr/i686-linux-gnu/lib
    local run=("$lib/ld-linux.so.2" --library-path "$lib")
    mkdir -p "$d"
    printf 'int main(void) { return 0; }\n' >"$d/probe.c"
    "$cc" "$d/probe.c" -o "$d/probe" && "${run[@]}" "$d/probe" 2>/dev/null ||
        { skip "32-bit Linux: this kernel runs no i386 programs (no IA32 emulation)"; return 0; }
    printf '#define TINYINFER_IMPLEMENTATION\n#include "tinyinfer.h"\n' >"$d/impl.c"
    "$cc" "${SAN[@]}" "${C99[@]}" "${WARN[@]}" "${INC[@]}" -c "$d/impl.c" -o "$d/impl.o"
    local rc=0 t
    for f in $(asan_shared_tests); do
        t="$d/$(basename "${f%.c}")"
        say "== $f (i686)"
        "$cc" "${SAN[@]}" "${C99[@]}" "${TWARN[@]}" "${INC[@]}" -DTI_TEST_SHARED_IMPL "$f" \
            "$d/impl.o" -o "$t" "${LIBS[@]}" -ldl
        asan_run "${run[@]}" "$t" || rc=1
    done
    for f in onnx:"tests/fuzz/corpus/onnx tests/data" tflite:"tests/fuzz/corpus/tflite tests/data examples/data"; do
        t="$d/fuzz_${f%%:*}"
        say "== tests/fuzz/fuzz_${f%%:*}.c replay (i686)"
        "$cc" "${SAN[@]}" "${C99[@]}" "${TWARN[@]}" "${INC[@]}" -DTI_TEST_SHARED_IMPL \
            "tests/fuzz/fuzz_${f%%:*}.c" tests/fuzz/replay_main.c "$d/impl.o" -o "$t" "${LIBS[@]}" -ldl
        # shellcheck disable=SC2086 # the directories, split on purpose
        asan_run "${run[@]}" "$t" ${f#*:} || rc=1
    done
    # x87 float math (FLT_EVAL_METHOD 2): the scalar activations, the convolutions and the
    # bound-buffer checks against the SIMD kernels bit for bit, rounding where C says
    for f in tests/unit/test_act.c tests/unit/test_conv.c tests/unit/test_bind.c; do
        t="$d/x87_$(basename "${f%.c}")"
        say "== $f (i686, x87, -O1)"
        "$cc" -O1 "${C99[@]}" "${TWARN[@]}" "${INC[@]}" "$f" -o "$t" "${LIBS[@]}" -ldl &&
            timeout 600 "${run[@]}" "$t" || rc=1
    done
    return $rc
}
j_mingw() { # Windows (MinGW-w64): the header with <windows.h> before, after or absent, the
    # OpenCL loader alone, the README example linked into an .exe, tinyinfer-rpc and
    # tinyinfer-tune through the front end, all -Werror (built, not run: j_wine runs the tools)
    local cc=""
    for c in x86_64-w64-mingw32-gcc-posix x86_64-w64-mingw32-gcc; do have "$c" && { cc=$c; break; }; done
    [ -n "$cc" ] || { skip "Windows build: no MinGW-w64 (apt-get install gcc-mingw-w64-x86-64-posix)"; return 0; }
    local d="$T/mingw" i=0
    mkdir -p "$d"
    for pre in '#include <windows.h>' '' ''; do
        i=$((i + 1))
        post=''
        [ $i = 2 ] && post='#include <windows.h>'
        printf '%s\n#define TINYINFER_IMPLEMENTATION\n#include "tinyinfer.h"\n%s\n' "$pre" "$post" >"$d/impl$i.c"
        # where <windows.h> goes is the front end's business: one full compile is enough
        local only=(-fsyntax-only)
        [ $i = 3 ] && only=(-c -o "$d/impl$i.o")
        "$cc" -O1 "${C99[@]}" "${WARN[@]}" -I. "${only[@]}" "$d/impl$i.c"
    done
    printf '#define TINYINFER_CL_IMPLEMENTATION\n#include "tinyinfer_cl.h"\n#include <windows.h>\n' >"$d/cl.c"
    "$cc" -O1 "${C99[@]}" "${WARN[@]}" -I. -c "$d/cl.c" -o "$d/cl.o"
    readme_example "$d/readme.c"
    "$cc" -O1 "${C99[@]}" "${WARN[@]}" -I. "$d/readme.c" -o "$d/readme.exe"
    # as C++, linked: the Windows functions the implementation declares itself need C
    # linkage, which only a link shows (with <windows.h> first, it gives them that)
    local cxx=${cc/gcc/g++}
    if have "$cxx"; then
        printf '#define TINYINFER_IMPLEMENTATION\n#include "tinyinfer.h"\n%s\n' \
            'int main() { ti_error e; return ti_model_load_file("-", NULL, &e) != NULL; }' >"$d/impl.cpp"
        "$cxx" -O1 "${WARN[@]}" -I. "$d/impl.cpp" -o "$d/impl_cxx.exe"
    else
        say "note: no $cxx: the C++ build for Windows is left out (apt-get install g++-mingw-w64-x86-64-posix)"
    fi
    # 32-bit Windows (size_t of 32 bits, __stdcall): the implementation linked, -Werror
    local c32=""
    for c in i686-w64-mingw32-gcc-posix i686-w64-mingw32-gcc; do have "$c" && { c32=$c; break; }; done
    if [ -n "$c32" ]; then
        printf '#define TINYINFER_IMPLEMENTATION\n#include "tinyinfer.h"\n%s\n' \
            'int main(void) { ti_error e; return ti_model_load_file("-", NULL, &e) != NULL; }' >"$d/impl32.c"
        "$c32" -O2 "${C99[@]}" "${WARN[@]}" -I. "$d/impl32.c" -o "$d/impl32.exe"
    else
        say "note: no i686-w64-mingw32-gcc: the 32-bit Windows build is left out (apt-get install gcc-mingw-w64-i686-posix)"
    fi
    local t # the device-workflow tools (Winsock; sessions served in-process: no fork): the
    # front end here; j_wine links them (-static) and runs them. And tinyinfer-run.
    for t in tinyinfer-rpc tinyinfer-tune tinyinfer-run; do
        "$cc" -O1 "${C99[@]}" "${WARN[@]}" "${INC[@]}" -fsyntax-only "tools/$t.c"
    done
}

j_wine() { # the Windows tools (static MinGW-w64 builds) under Wine against the Linux ones
    local cc="" d="$T/wine" t
    for c in x86_64-w64-mingw32-gcc-posix x86_64-w64-mingw32-gcc; do have "$c" && { cc=$c; break; }; done
    [ -n "$cc" ] || { skip "Windows tools under Wine: no MinGW-w64"; return 0; }
    mkdir -p "$d/win"
    tune_build "$d"
    for t in tinyinfer-rpc tinyinfer-tune; do
        "$cc" -O1 -static "${C99[@]}" "${WARN[@]}" "${INC[@]}" "tools/$t.c" -o "$d/win/$t.exe" -lws2_32
    done
    timeout 600 bash tests/rpc/test_wine.sh "$d" "$d/win"
}

j_wine_threads() { # the thread pool on Windows' own threads (core/sync.c), under Wine: the
    # pool's tests (each index once, bands, every worker started) and 8 sessions on 8 threads
    # == one session on one thread (the tests' own threads: MinGW-w64's winpthreads)
    local cc="" d="$T/wine_threads" w=""
    for c in x86_64-w64-mingw32-gcc-posix x86_64-w64-mingw32-gcc; do have "$c" && { cc=$c; break; }; done
    [ -n "$cc" ] || { skip "Windows threads under Wine: no MinGW-w64"; return 0; }
    for c in wine64 /usr/lib/wine/wine64 wine; do have "$c" && { w=$c; break; }; done
    [ -n "$w" ] || { skip "Windows threads under Wine: no wine64 (apt-get install wine64)"; return 0; }
    mkdir -p "$d"
    "$cc" -O2 -static "${C99[@]}" "${WARN[@]}" "${INC[@]}" tests/unit/test_sgemm.c -o "$d/test_sgemm.exe"
    "$cc" -O2 -static "${C99[@]}" "${WARN[@]}" "${INC[@]}" tests/threads/test_threads.c \
        -o "$d/test_threads.exe"
    export WINEDEBUG=-all WINEPREFIX="$(cd "$d" && pwd)/prefix"
    local rc=0
    timeout 600 "$w" "$d/test_sgemm.exe" || rc=1
    timeout 600 "$w" "$d/test_threads.exe" --threads 8 --runs 200 \
        tests/data/mobilenet_v1_0.25_128_quant.tflite || rc=1
    timeout 600 "$w" "$d/test_threads.exe" --threads 4 --runs 10 tests/data/light_squeezenet.onnx || rc=1
    timeout 20 wineserver -k 2>/dev/null || true
    return $rc
}

j_readme() { # the README example compiles with -Werror and runs on the bundled model
    readme_example "$T/readme_example.c"
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" -I. "$T/readme_example.c" -o "$T/readme_example" "${LIBS[@]}"
    timeout 300 "$T/readme_example" "$DEMO_MODEL"
}

j_tools() { # builds the tools and checks what they print (tests/unit/test_tools.sh)
    mkdir -p "$T/tools"
    local t
    for t in tinyinfer-info tinyinfer-run; do
        "$CC" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" "tools/$t.c" -o "$T/tools/$t" "${LIBS[@]}"
    done
    bash tests/unit/test_tools.sh "$T/tools"
}

j_bench_peers() { # bench/ti_bench.c, bench/nodemin.c, bench/load.c, bench/kernel.c and bench/act.c compile and run; bench/peers.py's tables on fake results, bench/sgemm_peers.py's, bench/nodes_ort.py's, bench/dist_ort.py's and bench/ab.py's parsing (no peers run)
    mkdir -p "$T/bench"
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" bench/ti_bench.c -o "$T/bench/ti_bench" "${LIBS[@]}"
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" bench/nodemin.c -o "$T/bench/nodemin" "${LIBS[@]}"
    "$T/bench/nodemin" "${CLASSIFY_DEMO[0]}" 2 3 >"$T/bench/nodemin.out" &&
        grep -q "^best run .* sum of node minima" "$T/bench/nodemin.out" ||
        { echo "bench/nodemin: no summary line" >&2; return 1; }
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" bench/load.c -o "$T/bench/load" "${LIBS[@]}"
    "$T/bench/load" "${CLASSIFY_DEMO[0]}" 1 3 >"$T/bench/load.out" &&
        grep -q "^load .* create .* first .* median " "$T/bench/load.out" ||
        { echo "bench/load: no timing line" >&2; return 1; }
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" bench/kernel.c -o "$T/bench/kernel" "${LIBS[@]}"
    "$T/bench/kernel" 3 16 >"$T/bench/kernel.out" &&
        grep -q "GFLOP/s\|no SIMD GEMM kernel" "$T/bench/kernel.out" ||
        { echo "bench/kernel: no result line" >&2; return 1; }
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" bench/act.c -o "$T/bench/act" "${LIBS[@]}"
    "$T/bench/act" 3 >"$T/bench/act.out" &&
        grep -q "^scalar  *SiLU  *[0-9.]*  *[0-9.]*$" "$T/bench/act.out" ||
        { echo "bench/act: no scalar SiLU line" >&2; return 1; }
    have python3 && python3 -c "import numpy" 2>/dev/null ||
        { skip "bench/peers.py --self-test: no python3 with numpy"; return 0; }
    python3 bench/peers.py --self-test &&
        python3 bench/sgemm_peers.py --self-test &&
        python3 bench/nodes_ort.py --self-test &&
        python3 bench/dist_ort.py --self-test &&
        python3 bench/ab.py --self-test
}

j_example() { # j_example NAME: builds examples/NAME.c into $T/examples, warnings as errors
    mkdir -p "$T/examples"
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" -I. -I"$STB_DIR" "examples/$1.c" -o "$T/examples/$1" \
        "${LIBS[@]}"
}

j_classify() { # the demo of ./build.sh: "military uniform" is the first line
    [ "$HAVE_STB" = 1 ] || { skip "classify example: $NO_STB"; return 0; }
    j_example classify
    timeout 300 "$T/examples/classify" "${CLASSIFY_DEMO[@]}" >"$T/examples/classify.out"
    cat "$T/examples/classify.out"
    head -n 1 "$T/examples/classify.out" | grep -q 'military uniform' ||
        { say "expected 'military uniform' on the first line"; return 1; }
}

j_segment() { # DeepLabv3 (not bundled) on bird_segmentation.bmp: a 513x513 PPM, bird pixels
    [ "$HAVE_STB" = 1 ] || { skip "segment example: $NO_STB"; return 0; }
    local m=$CORAL/deeplabv3_mnv2_pascal_quant.tflite d=$T/examples
    [ -f "$m" ] || { skip "segment example: no $m"; return 0; }
    j_example segment
    timeout 300 "$d/segment" "$m" "$CORAL/bird_segmentation.bmp" "$d/bird_mask.ppm" \
        "$CORAL/pascal_voc_segmentation_labels.txt" >"$d/segment.out"
    cat "$d/segment.out"
    local header size
    header=$(head -n 3 "$d/bird_mask.ppm" | tr '\n' ' ')
    size=$(wc -c <"$d/bird_mask.ppm")
    [ "$header" = "P6 513 513 255 " ] ||
        { say "bird_mask.ppm: header '$header', expected 'P6 513 513 255'"; return 1; }
    [ "$size" = $((15 + 513 * 513 * 3)) ] ||
        { say "bird_mask.ppm: $size bytes, expected $((15 + 513 * 513 * 3))"; return 1; }
    grep -q ' bird$' "$d/segment.out" || { say "no pixel was classified as bird"; return 1; }
}

j_cl() { # j_cl MODE(opt|asan): the OpenCL loader against stub libraries and the real one
    local mode=$1 out="$T/cl"
    mkdir -p "$out"
    "$CC" -shared -fPIC "${INC[@]}" tests/cl/stub_opencl.c -o "$out/libstub_incomplete.so"
    "$CC" -shared -fPIC -DSTUB_COMPLETE "${INC[@]}" tests/cl/stub_opencl.c -o "$out/libstub_complete.so"
    if [ "$mode" = asan ]; then
        "$SANCC" "${SAN[@]}" "${C99[@]}" "${TWARN[@]}" "${INC[@]}" tests/cl/test_cl_loader.c \
            -o "$out/test_cl_loader_asan" "${LIBS[@]}" -ldl
        ASAN_OPTIONS=$ASAN_OPTS LSAN_OPTIONS=suppressions=$PWD/tests/cl/lsan.supp \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            timeout 600 "$out/test_cl_loader_asan" "$out/libstub_incomplete.so" "$out/libstub_complete.so"
        # the backend test under ASan (PoCL) took 11 minutes of CI's budget: it runs with
        # ASAN_FULL=1 (./build.sh asan sets it), the loader test always
        [ "${ASAN_FULL:-0}" = 1 ] || return 0
        "$SANCC" "${SAN[@]}" "${C99[@]}" "${TWARN[@]}" "${INC[@]}" tests/cl/test_cl_backend.c \
            -o "$out/test_cl_backend_asan" "${LIBS[@]}" -ldl
        ASAN_OPTIONS=$ASAN_OPTS LSAN_OPTIONS=suppressions=$PWD/tests/cl/lsan.supp \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            timeout 900 "$out/test_cl_backend_asan"
    else
        bash tests/cl/check_cl_header.sh "$out/header"
        bash tests/cl/check_cl_kernels.sh "$out/kernels"
        "$CC" -O2 "${C99[@]}" "${TWARN[@]}" "${INC[@]}" tests/cl/test_cl_loader.c \
            -o "$out/test_cl_loader" "${LIBS[@]}" -ldl
        timeout 600 "$out/test_cl_loader" "$out/libstub_incomplete.so" "$out/libstub_complete.so"
        "$CC" -O2 "${C99[@]}" "${TWARN[@]}" "${INC[@]}" tests/cl/test_cl_backend.c \
            -o "$out/test_cl_backend" "${LIBS[@]}" -ldl
        timeout 900 "$out/test_cl_backend"
        j_cl_cache_tool
    fi
}

j_cl_cache_tool() { # tools/tinyinfer-cache pre-warms a cache that a later session then uses
    local out="$T/cl" dir="$T/cl/prewarm"
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" -I. tools/tinyinfer-cache.c -o "$out/tinyinfer-cache" "${LIBS[@]}"
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" tools/tinyinfer-run.c -o "$out/tinyinfer-run" "${LIBS[@]}"
    rm -rf "$dir"
    if ! "$out/tinyinfer-cache" --dir "$dir" "$DEMO_MODEL" >"$out/prewarm.log" 2>&1; then
        skip "tinyinfer-cache: no OpenCL device ($(tail -n 1 "$out/prewarm.log"))"
        return 0
    fi
    cat "$out/prewarm.log"
    TINYINFER_OPENCL_CACHE=$dir "$out/tinyinfer-run" "$DEMO_MODEL" --backend opencl >"$out/warm.log" 2>&1
    grep '^opencl:' "$out/warm.log"
    if grep -q 'program(s) built, 0 already' "$out/prewarm.log" &&
        grep -qE 'programs: 0 built, [1-9][0-9]* from the cache' "$out/warm.log"; then
        say "1 passed, 0 failed"
    else
        say "FAIL: the pre-warmed cache was not used"
        say "0 passed, 1 failed"
        return 1
    fi
    # fp16 sessions have programs of their own (other build options): built by a pre-warm
    # with --precision fp16 (none of them were there), then used
    "$out/tinyinfer-cache" --dir "$dir" --precision fp16 "$DEMO_MODEL" >"$out/prewarm16.log" 2>&1
    TINYINFER_OPENCL_CACHE=$dir "$out/tinyinfer-run" "$DEMO_MODEL" --backend opencl --precision fp16 \
        >"$out/warm16.log" 2>&1
    grep '^opencl:' "$out/warm16.log"
    if grep -qE '[1-9][0-9]* program\(s\) built, 0 already' "$out/prewarm16.log" &&
        grep -qE 'programs: 0 built, [1-9][0-9]* from the cache.*tensors stored in fp16' "$out/warm16.log"; then
        say "1 passed, 0 failed"
    else
        say "FAIL: the fp16 pre-warm was not built or not used"
        cat "$out/prewarm16.log"
        say "0 passed, 1 failed"
        return 1
    fi
}

cl_probe() { # 0 when an OpenCL device can run a model; else says why (as a skip)
    local out="$T/cl"
    mkdir -p "$out"
    "$CC" -O2 "${C99[@]}" "${INC[@]}" tools/tinyinfer-run.c -o "$out/tinyinfer-run-$1" "${LIBS[@]}"
    if ! "$out/tinyinfer-run-$1" tests/data/conv2d_padding.onnx --backend opencl >"$out/probe-$1.log" 2>&1; then
        skip "$1 on OpenCL: no OpenCL device ($(tail -n 1 "$out/probe-$1.log"))"
        return 1
    fi
    grep '^opencl:' "$out/probe-$1.log"
}

j_cl_arch() { # the architecture models with backend OpenCL, against onnxruntime's outputs
    cl_probe arch || return 0
    local dirs=() s
    for s in mobilenet_v2 resnet18 squeezenet1_1 mobilenet_v3_small efficientnet_b0 tiny_transformer; do
        [ -d "$CACHE/arch/$s" ] && dirs+=("$CACHE/arch/$s")
    done
    [ ${#dirs[@]} -gt 0 ] || { skip "OpenCL: no architecture models in $CACHE/arch"; return 0; }
    echo "== model tests, --backend opencl --max-rel 1e-4 =="
    timeout 900 "$RUNNER" --backend opencl --max-rel 1e-4 --expect-pass "${dirs[@]}"
}

j_cl_onnx() { # the light models and the ONNX node suite with backend OpenCL
    cl_probe onnx || return 0
    local dirs=() s
    for s in light node; do [ -d "$CACHE/onnx/$s" ] && dirs+=("$CACHE/onnx/$s"); done
    [ ${#dirs[@]} -gt 0 ] || { skip "OpenCL: no conformance data in $CACHE/onnx"; return 0; }
    echo "== ONNX light models and node suite, --backend opencl =="
    TINYINFER_OPENCL_CACHE=$T/cl/cache timeout 1500 "$RUNNER" --backend opencl --expect-pass \
        "${dirs[@]}" | grep -v '^PASSED'
}

j_cl_intel() { # the backend tests on Intel's CPU OpenCL (tests/cl/intel_ocl.sh): half arithmetic on
    local d=$CACHE/intel-ocl out="$T/cl"
    [ -f "$d/icd" ] || { skip "Intel CPU OpenCL not fetched (tests/cl/intel_ocl.sh $d, as .ci/run does)"; return 0; }
    mkdir -p "$out"
    "$CC" -O2 "${C99[@]}" "${TWARN[@]}" "${INC[@]}" tests/cl/test_cl_backend.c \
        -o "$out/test_cl_backend_intel" "${LIBS[@]}" -ldl
    # the half-precision tests only (TI_TEST_ONLY): the others run on PoCL in j_cl, and the
    # whole program here took 10 minutes of this 2-core machine's test budget
    LD_LIBRARY_PATH=$(cat "$d/libpath") OCL_ICD_FILENAMES=$(cat "$d/icd") TINYINFER_OPENCL_DEVICE=Intel \
        TI_TEST_WANT_FP16_ARITH=1 TI_TEST_ONLY=fp16 timeout 1500 "$out/test_cl_backend_intel"
}

j_cl_tflite() { # TFLite's op tests with backend OpenCL: the CPU's bytes, 8-bit ops on the device
    cl_probe tflite || return 0
    local q8=CONV_2D,DEPTHWISE_CONV_2D,ADD,AVERAGE_POOL_2D,MAX_POOL_2D,RESHAPE,SQUEEZE,EXPAND_DIMS
    echo "== TFLite op tests, --backend opencl, outputs == the CPU's =="
    TINYINFER_OPENCL_CACHE=$T/cl/cache timeout 900 "$RUNNER" --backend opencl --same-as-cpu \
        --expect-pass tests/conformance/tflite | grep -v '^PASSED'
    echo "== 8-bit TFLite op tests: $q8 on the device =="
    TINYINFER_OPENCL_CACHE=$T/cl/cache timeout 900 "$RUNNER" --backend opencl --same-as-cpu \
        --filter int8 --device-ops "$q8" --expect-pass tests/conformance/tflite | grep -v '^PASSED'
}

j_threads() { # 8 sessions of one shared model on 8 threads == one session on one thread
    local out="$T/threads"
    mkdir -p "$out"
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" "${INC[@]}" tests/threads/test_threads.c \
        -o "$out/test_threads" "${LIBS[@]}"
    timeout 900 "$out/test_threads" --threads 8 --runs 1000 tests/data/mobilenet_v1_0.25_128_quant.tflite
    timeout 600 "$out/test_threads" --threads 8 --runs 25 tests/data/light_squeezenet.onnx
    # float nets whose convs take every threaded path (depthwise bands, transposed GEMMs,
    # Winograd): the sessions with pools of 2 must give 1 thread's bits (a sum cut by thread
    # once broke that on three of these and on neither model above)
    local m
    for m in mobilenet_v2 squeezenet1_1 efficientnet_b0 resnet18; do
        if [ -f "$CACHE/arch/$m/model.onnx" ]; then
            timeout 600 "$out/test_threads" --threads 4 --runs 2 "$CACHE/arch/$m/model.onnx"
        else
            say "note: $CACHE/arch/$m/model.onnx is missing (tests/models/gen_arch_models.py)"
        fi
    done
    # the pool's workers on glibc's default thread stack under a 48 KiB limit: the pool must
    # ask for its own (a session on one thread: 48 KiB would be too small for it as well)
    (ulimit -s 48 && timeout 300 "$out/test_threads" --own-stacks --threads 2 --runs 5 \
        tests/data/light_squeezenet.onnx)
}

j_threads_tsan() { # the same under ThreadSanitizer, with fewer runs (TSan is 5-15x slower)
    [ "$HAVE_CLANG" = 1 ] || { skip "ThreadSanitizer: no clang"; return 0; }
    local out="$T/threads"
    mkdir -p "$out"
    if ! clang -O1 -g1 -fsanitize=thread "${C99[@]}" "${TWARN[@]}" "${INC[@]}" \
        tests/threads/test_threads.c -o "$out/test_threads_tsan" "${LIBS[@]}" 2>"$out/tsan_build.log"; then
        skip "ThreadSanitizer: clang cannot build with -fsanitize=thread ($(tail -n 1 "$out/tsan_build.log"))"
        return 0
    fi
    # 8 x 20 runs, not 8 x 1,000: a race shows on the first runs; TSan exits non-zero on one
    TSAN_OPTIONS=halt_on_error=1:exitcode=66 timeout 900 "$out/test_threads_tsan" --threads 8 \
        --runs 20 tests/data/mobilenet_v1_0.25_128_quant.tflite
    TSAN_OPTIONS=halt_on_error=1:exitcode=66 timeout 900 "$out/test_threads_tsan" --threads 8 \
        --runs 2 tests/data/light_squeezenet.onnx
}

j_threads_msan() { # sessions with and without pools under MemorySanitizer: no value is read unset
    [ "$HAVE_CLANG" = 1 ] || { skip "MemorySanitizer: no clang"; return 0; }
    local out="$T/threads"
    mkdir -p "$out"
    if ! clang -O1 -g1 -fsanitize=memory -fsanitize-memory-track-origins "${C99[@]}" "${TWARN[@]}" \
        "${INC[@]}" tests/threads/test_threads.c -o "$out/test_threads_msan" "${LIBS[@]}" \
        2>"$out/msan_build.log"; then
        skip "MemorySanitizer: clang cannot build with -fsanitize=memory ($(tail -n 1 "$out/msan_build.log"))"
        return 0
    fi
    # an ONNX binary op's unset thread-pool grain (the pool compared it, and ran the op on
    # one thread) showed only here: ASan and UBSan do not see reads of unset stack values
    local m
    for m in tests/data/operator_params.onnx tests/data/light_squeezenet.onnx \
        tests/data/mobilenet_v1_0.25_128_quant.tflite; do
        MSAN_OPTIONS=halt_on_error=1:exitcode=66 timeout 600 "$out/test_threads_msan" --threads 4 \
            --runs 3 "$m" || return 1
    done
}

# ---- ports: aarch64 (cross-compiled, run under qemu-user), Android (JNI), iOS (ObjC) ----
A64_CC=${A64_CC:-aarch64-linux-gnu-gcc}           # Debian: gcc-aarch64-linux-gnu
A64_SYSROOT=${A64_SYSROOT:-/usr/aarch64-linux-gnu} # Debian: libc6-dev-arm64-cross
A64_ARCH_MODELS="mobilenet_v2 squeezenet1_1 mobilenet_v3_small tiny_transformer efficientnet_b0"

jdk_include() { # prints the JDK's include directory (jni.h), or returns 1
    local j c
    c=$(command -v javac 2>/dev/null || true)
    for j in "${JAVA_HOME:-}" "${c:+$(dirname "$(dirname "$(readlink -f "$c")")")}"; do
        if [ -n "$j" ] && [ -f "$j/include/jni.h" ]; then
            say "$j/include"
            return 0
        fi
    done
    return 1
}

a64_qemu() { # prints the qemu-user binary for aarch64, or returns 1
    local q
    for q in qemu-aarch64 qemu-aarch64-static; do if have "$q"; then say "$q"; return 0; fi; done
    return 1
}

j_a64_build() { # the library, inside the JNI bridge, cross-compiles for aarch64 with -Werror
    have "$A64_CC" ||
        { skip "aarch64: no $A64_CC (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"; return 0; }
    local d="$T/aarch64" inc
    mkdir -p "$d"
    if ! inc=$(jdk_include); then # the library alone, then say why the bridge is not built
        "$A64_CC" -x c -O2 "${C99[@]}" -Wmissing-prototypes "${WARN[@]}" "${INC[@]}" \
            -c tests/build/impl.c -o "$d/impl.o"
        say "library: $A64_CC C99 -pedantic -Werror: ok"
        say "1 passed, 0 failed"
        skip "aarch64 JNI bridge: no JDK (jni.h) found (apt-get install default-jdk-headless, or set JAVA_HOME)"
        return 0
    fi
    # the bridge defines TINYINFER_IMPLEMENTATION: one compile checks both (the header is
    # big: each cross-compile of it costs ~20 s of CPU)
    "$A64_CC" -O2 "${C99[@]}" "${WARN[@]}" -shared -fPIC -I. -Iexamples -I"$inc" -I"$inc/linux" \
        examples/android/jni/tinyinfer_jni.c -o "$d/libtinyinfer_jni.so" "${LIBS[@]}"
    say "JNI bridge: $(file -b "$d/libtinyinfer_jni.so" 2>/dev/null | cut -d, -f1-2)"
    nm -D --defined-only "$d/libtinyinfer_jni.so" | grep -q 'Java_org_tinyinfer_example_Classifier_classify' ||
        { say "the bridge does not export Java_org_tinyinfer_example_Classifier_classify"; return 1; }
    readelf -h "$d/libtinyinfer_jni.so" | grep -q 'AArch64' || { say "not an AArch64 object"; return 1; }
    say "library + JNI bridge: $A64_CC C99 -pedantic -Werror, AArch64, exports the JNI entry points"
}

a64_setup() { # sets d, a64 and run for the j_a64_* jobs below, or returns 1 after a skip
    have "$A64_CC" ||
        { skip "aarch64 under qemu: no $A64_CC (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"; return 1; }
    local qemu
    qemu=$(a64_qemu) || { skip "aarch64 under qemu: no qemu-aarch64 (apt-get install qemu-user)"; return 1; }
    # -O1: each cross-compile of the header costs half of what -O2 does (j_a64_build checks -O2)
    d="$T/aarch64/run"
    a64=("$A64_CC" -O1 "${C99[@]}" "${TWARN[@]}" "${INC[@]}")
    run=(env QEMU_LD_PREFIX="$A64_SYSROOT" timeout 600 "$qemu")
    mkdir -p "$d"
}

# The aarch64 runs are three jobs, so that the two cores share them: each cross-compile of
# the header is a minute here, and qemu runs the programs 5-20 times slower than the CPU.
j_a64_run() { # aarch64 binaries under qemu-user: classify == x86, ISA levels, op and model tests
    local d a64 run rc=0
    a64_setup || return 0
    [ "$HAVE_STB" = 1 ] || { skip "aarch64 under qemu: $NO_STB"; return 0; }
    "${run[@]}" /bin/true 2>/dev/null || true
    # classify, aarch64 under qemu against x86, on the demo and on the small bundled MobileNet
    "${a64[@]}" -I"$STB_DIR" examples/classify.c -o "$d/classify" "${LIBS[@]}"
    "$CC" -O1 "${C99[@]}" "${TWARN[@]}" "${INC[@]}" -I"$STB_DIR" examples/classify.c -o "$d/classify_x86" "${LIBS[@]}"
    local m p=0 f=0
    for m in "${CLASSIFY_DEMO[0]}" tests/data/mobilenet_v1_0.25_128_quant.tflite; do
        "$d/classify_x86" "$m" "${CLASSIFY_DEMO[1]}" "${CLASSIFY_DEMO[2]}" >"$d/x86.out"
        "${run[@]}" "$d/classify" "$m" "${CLASSIFY_DEMO[1]}" "${CLASSIFY_DEMO[2]}" >"$d/a64.out" || true
        say "== classify $m: aarch64 (qemu) | x86-64"
        paste -d'|' "$d/a64.out" "$d/x86.out"
        if [ -s "$d/x86.out" ] && cmp -s "$d/a64.out" "$d/x86.out"; then
            p=$((p + 1))
        else
            say "FAIL: the top 5 on aarch64 differ from x86-64"
            f=$((f + 1))
        fi
    done
    say "$p passed, $f failed"
    # which kernels: NEON, NEON + dotprod where the CPU has it (qemu's cortex-a57 has not,
    # cortex-a76 has), and a float model on every level against scalar
    "${a64[@]}" tests/ports/test_isa.c -o "$d/test_isa" "${LIBS[@]}"
    TI_TEST_WANT_ISA=neon "${run[@]}" -cpu cortex-a57 "$d/test_isa" || rc=1
    TI_TEST_WANT_ISA=neondot "${run[@]}" -cpu cortex-a76 "$d/test_isa" || rc=1
    # sessions (fusion, planning, threads) and TFLite errors (GCC 12 for aarch64 hits an internal compiler error vectorizing
    # a reduction loop in test_session.c's own checks, not in tinyinfer.h: no vectorizing)
    local t
    for t in tests/unit/test_session.c tests/errors/test_tflite_errors.c; do
        "${a64[@]}" -fno-tree-vectorize "$t" -o "$d/$(basename "${t%.c}")" "${LIBS[@]}"
        "${run[@]}" "$d/$(basename "${t%.c}")" || rc=1
    done
    # model tests: the committed TFLite op tests (8-bit outputs byte-exact; the default CPU
    # has dotprod, so the byte path; test_qgemm checks the int16 level on whole models), then
    # the architecture models when cached
    "${a64[@]}" tests/conformance/onnx_runner.c -o "$d/onnx_runner" "${LIBS[@]}"
    "${run[@]}" "$d/onnx_runner" --expect-pass tests/conformance/tflite || rc=1
    # a copy: the models job may regenerate $CACHE/arch (rm, then mv) while this runs
    local dirs=()
    rm -rf "$d/arch"
    mkdir -p "$d/arch"
    for m in $A64_ARCH_MODELS; do
        if [ -d "$CACHE/arch/$m" ] && cp -r "$CACHE/arch/$m" "$d/arch/" 2>/dev/null; then
            dirs+=("$d/arch/$m")
        fi
    done
    if [ ${#dirs[@]} -gt 0 ]; then
        "${run[@]}" "$d/onnx_runner" --threads 2 --max-rel 1e-4 --expect-pass "${dirs[@]}" || rc=1
    else
        skip "aarch64 architecture models: none in $CACHE/arch (the models job makes them)"
    fi
    [ "$f" = 0 ] && return $rc
    return 1
}

# the SIMD kernel tests under qemu, each NEON level forced against the scalar reference
A64_KERNEL_TESTS=(tests/unit/test_sgemm.c tests/unit/test_conv.c tests/unit/test_act.c
    tests/unit/test_binary.c tests/unit/test_pool.c tests/unit/test_qgemm.c)

j_a64_kernels() { # j_a64_kernels N: the first (N=0) or second (N=1) half of A64_KERNEL_TESTS
    local d a64 run rc=0 t i
    a64_setup || return 0
    for i in "${!A64_KERNEL_TESTS[@]}"; do
        [ $((i % 2)) = "$1" ] || continue
        t=${A64_KERNEL_TESTS[$i]}
        "${a64[@]}" "$t" -o "$d/$(basename "${t%.c}")" "${LIBS[@]}"
        "${run[@]}" "$d/$(basename "${t%.c}")" || rc=1
    done
    return $rc
}

j_a64_asan() { # the NEON kernels' row ends and tails under AddressSanitizer + UBSan in qemu
    local d a64 run rc=0 t
    a64_setup || return 0
    # the cross compiler's libasan runs under qemu; leak checking needs ptrace, which
    # qemu-user lacks, so it is off. test_sgemm and test_qgemm are left out: minutes under
    # ASan in qemu; the float kernels with row ends (depthwise, pooling, activations, binary
    # runs) are what ASan checks here.
    if ! [ -e "$A64_SYSROOT/lib/libasan.so" ] && ! compgen -G "$A64_SYSROOT/lib/libasan.so.*" >/dev/null; then
        skip "aarch64 kernel tests under ASan: no libasan in $A64_SYSROOT/lib (apt-get install libasan8-arm64-cross)"
        return 0
    fi
    # (test_conv: its Winograd shapes are portable C around the GEMM, and took 142 s of
    # the job's 494 here; the depthwise rows, general shapes, stride-2 copy and the
    # transposed GEMM on NEON's B panels (12 s) stay)
    local only
    for t in tests/unit/test_conv.c tests/unit/test_act.c tests/unit/test_binary.c tests/unit/test_pool.c; do
        only=""
        [ "$t" = tests/unit/test_conv.c ] && only=depthwise,general,stride2,transposed
        "$A64_CC" -O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=all "${C99[@]}" \
            "${INC[@]}" "$t" -o "$d/asan_$(basename "${t%.c}")" "${LIBS[@]}"
        ASAN_OPTIONS=detect_leaks=0 TI_TEST_ONLY=$only "${run[@]}" "$d/asan_$(basename "${t%.c}")" || rc=1
    done
    return $rc
}

j_android_java() { # the Java class compiles; through the host JNI bridge it matches classify
    have javac || { skip "Android Java class: no javac (apt-get install default-jdk-headless)"; return 0; }
    local d="$T/android" inc
    mkdir -p "$d/classes" "$d/lib"
    javac -Xlint:all -Werror -d "$d/classes" examples/android/java/org/tinyinfer/example/Classifier.java \
        tests/ports/ClassifyJni.java
    say "javac: Classifier.java and tests/ports/ClassifyJni.java compile (-Xlint:all -Werror)"
    say "1 passed, 0 failed"
    inc=$(jdk_include) || { skip "JNI bridge on the JVM: no jni.h in the JDK"; return 0; }
    have java || { skip "JNI bridge on the JVM: no java"; return 0; }
    if have cmake; then # through examples/android/CMakeLists.txt, as Gradle would build it
        JAVA_HOME=$(dirname "$inc") cmake -S examples/android -B "$d/cmake" -DCMAKE_C_COMPILER="$CC" \
            -DCMAKE_C_FLAGS="${WARN[*]}" -DCMAKE_BUILD_TYPE=Release >"$d/cmake.log" 2>&1 &&
            cmake --build "$d/cmake" >>"$d/cmake.log" 2>&1 || { cat "$d/cmake.log"; return 1; }
        cp "$d/cmake/libtinyinfer_jni.so" "$d/lib/"
        say "examples/android/CMakeLists.txt: libtinyinfer_jni.so built (host, -Werror)"
    else
        "$CC" -O2 "${C99[@]}" "${WARN[@]}" -shared -fPIC -I. -Iexamples -I"$inc" -I"$inc/linux" \
            examples/android/jni/tinyinfer_jni.c -o "$d/lib/libtinyinfer_jni.so" "${LIBS[@]}"
    fi
    timeout 300 java -Djava.library.path="$d/lib" -cp "$d/classes" ClassifyJni "${CLASSIFY_DEMO[@]}" \
        >"$d/java.out"
    cat "$d/java.out"
    # the same five lines as ./build.sh's demo prints (README.md): military uniform first
    if ! awk '/^```$/ && on { exit } on { print } /^1 0.9102 military uniform$/ { on = 1; print }' \
        README.md | cmp -s - "$d/java.out"; then
        say "FAIL: the JNI classifier's top 5 differ from the demo's in README.md"
        say "0 passed, 1 failed"
        return 1
    fi
    say "1 passed, 0 failed"
}

j_game_loop() { # inference every 4 frames of a 60 fps loop: no frame waits on the model
    local d="$T/examples"
    mkdir -p "$d"
    "$CC" -O2 "${C99[@]}" "${WARN[@]}" -I. examples/game_loop.c -o "$d/game_loop" "${LIBS[@]}"
    # asserted by its exit code and summary: 0 blocked frames, results arrived, every result
    # equal to a synchronous run on the same input. The percentiles are printed, not asserted.
    timeout 300 "$d/game_loop" tests/data/mobilenet_v1_0.25_128_quant.tflite --backend cpu \
        --mode thread --fps 60 --frames 180 --every 4
    # control: the async API on the CPU backend runs the whole model inside
    # ti_session_run_async, so that loop must report blocked frames (the counter works)
    if timeout 300 "$d/game_loop" tests/data/mobilenet_v1_0.25_128_quant.tflite --backend cpu \
        --mode async --fps 60 --frames 30 --every 4 >"$d/game_loop_control.out"; then
        cat "$d/game_loop_control.out"
        say "FAIL: run_async on the CPU blocked no frame: the blocked-frame count is broken"
        say "0 passed, 1 failed"
        return 1
    fi
    grep -E '^blocked frames: [1-9]|^blocked frames \(' "$d/game_loop_control.out"
    grep -qE 'waited on the model\): [1-9]' "$d/game_loop_control.out" ||
        { say "FAIL: the control loop failed for another reason"; cat "$d/game_loop_control.out"; return 1; }
    say "control (run_async on the CPU blocks frames, and is reported): 1 passed, 0 failed"
}

j_cmake() { # tinyinfer::tinyinfer through add_subdirectory, FetchContent and an install
    have cmake || { skip "CMake: no cmake (apt-get install cmake)"; return 0; }
    local d="$T/cmake" root=$PWD v
    v=$(sed -nE 's/^#define TINYINFER_VERSION_STRING "([^"]+)"/\1/p' src/tinyinfer_api.h)
    grep -q "project(tinyinfer VERSION $v " CMakeLists.txt ||
        { say "CMakeLists.txt: project version is not $v (src/tinyinfer_api.h)"; return 1; }
    rm -rf "$d"
    local via
    for via in subdirectory fetchcontent; do
        cmake -Wno-dev --no-warn-unused-cli -S tests/cmake -B "$d/$via" -DCMAKE_C_COMPILER="$CC" \
            -DTINYINFER_VIA=$via -DTINYINFER_DIR="$root" -DFETCHCONTENT_SOURCE_DIR_TINYINFER="$root" \
            >"$d.$via.log"
        cmake --build "$d/$via" >>"$d.$via.log" || { cat "$d.$via.log"; return 1; }
        say "== $via"
        "$d/$via/consumer" "$DEMO_MODEL"
    done
    # the repository as the top-level project: builds examples/game_loop.c, installs
    cmake -S . -B "$d/top" -DCMAKE_C_COMPILER="$CC" -DCMAKE_INSTALL_PREFIX="$root/$d/prefix" >"$d.top.log"
    cmake --build "$d/top" >>"$d.top.log" && cmake --install "$d/top" >>"$d.top.log" ||
        { cat "$d.top.log"; return 1; }
    [ -x "$d/top/game_loop" ] || { say "the top-level build made no game_loop"; return 1; }
    cmake -S tests/cmake -B "$d/package" -DCMAKE_C_COMPILER="$CC" -DTINYINFER_VIA=package \
        -DCMAKE_PREFIX_PATH="$root/$d/prefix" >"$d.package.log"
    cmake --build "$d/package" >>"$d.package.log" || { cat "$d.package.log"; return 1; }
    say "== find_package (installed in $d/prefix)"
    "$d/package/consumer" "$DEMO_MODEL"
}

j_ios_syntax() { # examples/ios/TIClassifier.m compiles (clang -fsyntax-only, GNUstep's Foundation)
    [ "$HAVE_CLANG" = 1 ] || { skip "iOS syntax check: no clang"; return 0; }
    local gs=/usr/include/GNUstep objc
    [ -f "$gs/Foundation/Foundation.h" ] ||
        { skip "iOS syntax check: no GNUstep Foundation headers (apt-get install libgnustep-base-dev)"; return 0; }
    objc=$(find /usr/lib/gcc -path '*/include/objc/objc.h' 2>/dev/null | head -n 1)
    [ -n "$objc" ] || { skip "iOS syntax check: no objc/objc.h (apt-get install gobjc)"; return 0; }
    # CoreVideo, CoreGraphics and UIKit come from tests/ports/ios_shim, a labelled shim of the
    # few declarations the file uses. iOS builds it with ARC; clang cannot parse GCC's
    # objc/runtime.h under -fobjc-arc, so the check is without ARC, with the one diagnostic
    # that only holds without ARC (dealloc calling [super dealloc], which ARC forbids) off.
    clang -fsyntax-only -x objective-c -fobjc-runtime=gnustep-2.0 -fobjc-exceptions \
        -fconstant-string-class=NSConstantString -DGNUSTEP -DGNUSTEP_BASE_LIBRARY=1 -DGNU_RUNTIME=1 \
        -isystem "$gs" -idirafter "$(dirname "$(dirname "$objc")")" -Itests/ports/ios_shim \
        -I. -Iexamples -Iexamples/ios "${WARN[@]}" -Wno-objc-missing-super-calls \
        examples/ios/TIClassifier.m
    say "examples/ios/TIClassifier.m: clang -fsyntax-only -x objective-c -Wall -Wextra -Werror: ok"
}

RUNNER=$T/conformance/onnx_runner
j_runner() { # builds the conformance runner, which the model tests use too
    [ -f tests/conformance/onnx_runner.c ] ||
        { skip "conformance runner: tests/conformance/onnx_runner.c is not written yet"; return 0; }
    mkdir -p "$T/conformance"
    "$CC" -O2 "${C99[@]}" "${TWARN[@]}" "${INC[@]}" tests/conformance/onnx_runner.c \
        -o "$RUNNER" "${LIBS[@]}"
}

j_conformance() {
    [ -x "$RUNNER" ] || { skip "conformance: no runner (see its build above)"; return 0; }
    local rc=0
    ensure_conformance_data >"$T/conformance/data.log" 2>&1 || rc=$?
    cat "$T/conformance/data.log"
    if [ "$rc" = 1 ]; then
        skip "conformance: no data in $CACHE/onnx: $(tail -n 1 "$T/conformance/data.log")"
        return 0
    fi
    [ "$rc" = 0 ] || { say "generating the conformance data failed"; return 1; }
    local suites=() s
    for s in node simple pytorch-converted pytorch-operator light; do
        [ -d "$CACHE/onnx/$s" ] && suites+=("$CACHE/onnx/$s")
    done
    timeout 1500 "$RUNNER" --table tests/conformance/onnx_status.md \
        --expect-pass "${suites[@]}" || rc=1
    j_cl_onnx || rc=1
    return $rc
}

j_tflite_conformance() { # the committed TFLite op tests (tests/conformance/gen_tflite_ops.py,
    # gen_tflite_dw.py)
    [ -x "$RUNNER" ] || { skip "TFLite conformance: no runner (see its build above)"; return 0; }
    timeout 900 "$RUNNER" --table tests/conformance/tflite_status.md --expect-pass \
        tests/conformance/tflite tests/conformance/tflite_dw || return 1
    # the committed table must be the one this run wrote (its inputs are committed; a stale
    # table, from a broken build, went unseen for a session): in a git checkout, no diff
    if git ls-files --error-unmatch tests/conformance/tflite_status.md >/dev/null 2>&1 &&
        ! git diff --quiet -- tests/conformance/tflite_status.md; then
        say "tests/conformance/tflite_status.md differs from the table this run wrote: commit it"
        git --no-pager diff --stat -- tests/conformance/tflite_status.md
        return 1
    fi
    # the depthwise geometries again on 2 threads: pixel ranges that start and end inside
    # output rows (the row kernel's runs)
    timeout 300 "$RUNNER" --threads 2 --expect-pass tests/conformance/tflite_dw
}

j_coral() { # the real Coral models in ../shared/models/coral against ai-edge-litert
    [ -x "$RUNNER" ] || { skip "coral models: no conformance runner to run them"; return 0; }
    TINYINFER_CACHE=$CACHE timeout 1500 bash tests/models/coral.sh "$RUNNER" || return 1
    # then on OpenCL (after coral.sh, which makes the data): the CPU's bytes, 8-bit ops on the device
    cl_probe coral || return 0
    local q8=CONV_2D,DEPTHWISE_CONV_2D,ADD,AVERAGE_POOL_2D,MAX_POOL_2D,RESHAPE,SQUEEZE,EXPAND_DIMS
    local dirs=() d
    for d in "$CACHE"/coral/*/; do
        # (a cache made beside another checkout links models that may be gone: -e follows)
        case $d in *deeplab* | *split_concat* | *lstm*) ;; *) [ -e "$d/model.tflite" ] && dirs+=("${d%/}") ;; esac
    done
    [ ${#dirs[@]} -gt 0 ] || { skip "OpenCL: no Coral test data in $CACHE/coral (coral.sh made none)"; return 0; }
    echo "== Coral classifiers on OpenCL: LiteRT's top-1, the CPU's bytes, $q8 on the device =="
    TINYINFER_OPENCL_CACHE=$T/cl/cache timeout 900 "$RUNNER" --backend opencl --same-as-cpu \
        --check-argmax --device-ops "$q8" --expect-pass "${dirs[@]}" || return 1
    dirs=()
    for d in "$CACHE"/coral/deeplab*/; do [ -e "$d/model.tflite" ] && dirs+=("${d%/}"); done
    [ ${#dirs[@]} -gt 0 ] || return 0
    echo "== deeplabv3 on OpenCL: the CPU's bytes, $q8 on the device =="
    TINYINFER_OPENCL_CACHE=$T/cl/cache timeout 900 "$RUNNER" --backend opencl --same-as-cpu \
        --min-argmax-agree 0.995 --device-ops "$q8" --expect-pass "${dirs[@]}"
}


j_qdq() { # QDQ models quantized by onnxruntime (tests/models/gen_qdq_models.py): fused, == ORT
    j_prog opt tests/models/test_qdq.c tests/models/qdq
}

j_qdq_asan() { # the same under ASan + UBSan
    [ -n "${SANCC:-}" ] || { skip "QDQ models under sanitizers: no sanitizer compiler"; return 0; }
    j_prog asan tests/models/test_qdq.c tests/models/qdq
}

j_models() {
    [ -f tests/models/run.sh ] || { skip "model tests: tests/models/run.sh is not written yet"; return 0; }
    [ -x "$RUNNER" ] || { skip "model tests: no conformance runner to run them"; return 0; }
    [ -d ../shared ] || say "note: ../shared is missing; model tests that need it skip"
    local rc=0
    TINYINFER_CACHE=$CACHE timeout 1500 bash tests/models/run.sh "$RUNNER" || rc=1
    j_cl_arch || rc=1
    return $rc
}

build_fuzzer() { # build_fuzzer OUT
    clang -O1 -g1 -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer "${INC[@]}" \
        tests/fuzz/fuzz_onnx.c -o "$1" "${LIBS[@]}"
}

probe_sanitizers() { # picks the sanitizer compiler and whether LeakSanitizer works here
    SANCC=$CC
    [ "$HAVE_CLANG" = 1 ] && SANCC=clang
    ASAN_OPTS=detect_leaks=1
    mkdir -p "$T/probe"
    printf '#include <stdlib.h>\nint main(void) { free(malloc(8)); return 0; }\n' >"$T/probe/p.c"
    if ! "$SANCC" "${SAN[@]}" "$T/probe/p.c" -o "$T/probe/p" 2>"$T/probe/log"; then
        SANCC=""
    elif ! ASAN_OPTIONS=detect_leaks=1 "$T/probe/p" >"$T/probe/log" 2>&1; then
        # LeakSanitizer needs ptrace (some containers forbid it): test without it, say so
        ASAN_OPTS=detect_leaks=0
        say "note: LeakSanitizer does not work here; the counting allocator still checks leaks"
    fi
    HAVE_LIBFUZZER=0
    if [ "$HAVE_CLANG" = 1 ]; then
        printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
            'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; return (int)n * 0; }' \
            >"$T/probe/f.c"
        clang -fsanitize=fuzzer "$T/probe/f.c" -o "$T/probe/f" 2>/dev/null && HAVE_LIBFUZZER=1
    fi
    return 0
}

start_asan_jobs() {
    if [ -z "$SANCC" ]; then
        JOB_NAMES+=("sanitizers")
        skip "sanitizers: neither clang nor $CC builds with -fsanitize=address,undefined" \
            >"$T/jobs/$((${#JOB_NAMES[@]} - 1)).log"
        echo 0 >"$T/jobs/$((${#JOB_NAMES[@]} - 1)).rc"
        return 0
    fi
    # Each ASan compile of the header is ~5 minutes of this 2-core machine's CPU, so the
    # ASan set is the hostile-input tests (errors/: loaders, mutations; the fuzz corpora),
    # sessions, tensors and the convolution kernels (row ends); the other unit tests run at
    # -O2 only (and the NEON ones under ASan in qemu). `./build.sh asan` runs them all.
    job "asan: errors, mutations, sessions; fuzz replay of ONNX and TFLite; OpenCL loader (one ASan build)" j_asan_shared 0
    job "asan: RPC unit test; fuzz replay of RPC and tuning files (one ASan build)" j_asan_shared 1
    # the tests that link the shared build (asan_shared_tests) run in j_asan_shared 0
    # The others are one ASan bundle (j_bundle): one compile, not four
    local f shared list=(tests/errors/*.c tests/unit/test_session.c tests/unit/test_tensor.c tests/unit/test_conv.c) own=()
    [ "${ASAN_FULL:-0}" = 1 ] && list=(tests/unit/*.c tests/errors/*.c)
    shared=" $(asan_shared_tests | tr '\n' ' ') "
    for f in "${list[@]}"; do
        case "$shared" in *" $f "*) continue ;; esac
        if [ -f "$f" ]; then own+=("$f"); fi
    done
    if [ "${ASAN_FULL:-0}" = 1 ]; then
        for f in "${own[@]}"; do job "asan: $f" j_prog asan "$f"; done
    elif [ ${#own[@]} -gt 0 ]; then
        job "asan: ${own[*]} (one ASan build)" j_bundle asan errors_conv "${own[@]}"
    fi
    # the QDQ models under ASan (274 s here) with ./build.sh asan; they run at -O2 in j_qdq
    if [ "${ASAN_FULL:-0}" = 1 ]; then job "asan: QDQ models (tests/models/test_qdq.c)" j_qdq_asan; fi
    # (the OpenCL loader test links the shared build in j_asan_shared 0; ./build.sh asan
    # builds the header for it and runs the backend test too)
    if [ "${ASAN_FULL:-0}" = 1 ]; then job "asan: OpenCL loader and backend" j_cl asan; fi
}

finish() { # the one final line, and the exit code
    say "$PASSED passed, $FAILED failed, $SKIPPED skipped"
    [ "$FAILED" = 0 ]
}

prepare_test() {
    setup_test
    rm -rf "$T"
    mkdir -p "$T/jobs" "$T/build"
    probe_sanitizers
}

cmd_test() {
    prepare_test
    check "tinyinfer.h matches src/" j_fresh_header
    check "src/ never prints, aborts or exits" j_no_print
    check "version in src/doc/intro.h" j_version
    # the tools of the rpc, tune and Wine jobs, beside the runner
    job "build: tinyinfer-rpc and tinyinfer-run (-O2, -Werror)" rpc_compile "$T/prebuilt"
    job "build: tinyinfer-tune (-O2, -Werror)" tune_compile "$T/prebuilt"
    check "build: conformance runner" j_runner
    collect
    # the longest jobs first (the ASan builds, ~10 minutes each on a 2-core Zen 3), so that the
    # short ones fill in beside them rather than leave one core idle at the end
    start_asan_jobs

    # the long runs first, so they overlap with the many short ones
    job "conformance: ONNX backend suites (CPU, then node + light on OpenCL)" j_conformance
    job "models: tests/models/run.sh (CPU, then OpenCL)" j_models
    job "conformance: TFLite ops (tests/conformance/tflite)" j_tflite_conformance
    job "models: QDQ models fused to QLinearConv / QLinearMatMul == onnxruntime" j_qdq
    job "models: Coral TFLite models (tests/models/coral.sh)" j_coral
    job "OpenCL: TFLite op tests == the CPU's bytes, 8-bit ops on the device" j_cl_tflite
    job "OpenCL: the fp16 backend tests on Intel's CPU OpenCL (cl_khr_fp16)" j_cl_intel
    job "aarch64 under qemu: NEON kernel tests (sgemm, act, pool)" j_a64_kernels 0
    job "aarch64 under qemu: NEON kernel tests (conv, binary, qgemm)" j_a64_kernels 1
    job "aarch64 under qemu: NEON kernel tests under ASan + UBSan" j_a64_asan
    # after the models job, which makes the architecture models this one runs too
    job "aarch64 under qemu: classify == x86, ISA levels, sessions, op and model tests" j_a64_run

    # compile checks (tests/build/)
    if [ "$HAVE_NM" = 1 ]; then
        job "build: $CC C99, nm: exports are ti_ only; C and C++ users link" j_symbols
    else
        job "build: $CC C99 -pedantic -Wmissing-prototypes" j_compile "$CC" c
        job "build: two C TUs, one implementation" j_two_tu "$CC" c "$CC" c "$CC"
    fi
    if [ "$HAVE_CLANG" = 1 ]; then job "build: clang C99 -pedantic" j_compile clang c; fi
    if [ "$HAVE_GXX" = 1 ]; then job "build: g++ as C++" j_compile g++ c++; fi
    if [ "$HAVE_CLANGXX" = 1 ]; then
        # clang++ compiles the implementation as C++ here, with -Werror (TWARN is enough for
        # the user TU): this doubles as the clang++ compile check
        job "build: two C++ TUs (clang++, implementation -Werror)" j_two_tu clang++ c++ clang++ c++ clang++
    fi
    job "build: TI_STATIC ($CC)" j_static "$CC"
    if [ "$HAVE_CLANG" = 1 ]; then job "build: TI_STATIC (clang)" j_static clang; fi
    # the configuration variants: front-end checks (j_compile), and TI_NO_SIMD (which leaves
    # only the portable kernels) compiled in full by gcc as C
    local m
    for m in $(grep -rhoE '\bTI_NO_[A-Z0-9_]+' src | sort -u); do
        if [ "$m" = TI_NO_SIMD ]; then
            job "build: -D$m (C, -O2)" j_compile "$CC" c "-D$m"
        else
            job "build: -D$m (C, syntax)" j_compile "$CC" c -fsyntax-only "-D$m"
        fi
        if [ "$HAVE_GXX" = 1 ]; then job "build: -D$m (C++, syntax)" j_compile g++ c++ -fsyntax-only "-D$m"; fi
    done

    # programs
    local f b bundled=" "
    for b in "${!OPT_BUNDLES[@]}"; do
        # shellcheck disable=SC2086 # the bundle's files, split on spaces
        job "${OPT_BUNDLES[$b]// /, } (one -O2 build)" j_bundle opt "$b" ${OPT_BUNDLES[$b]}
        bundled+="${OPT_BUNDLES[$b]} "
    done
    for f in tests/unit/*.c tests/errors/*.c; do
        case "$bundled" in *" $f "*) continue ;; esac
        if [ -f "$f" ]; then job "$f" j_prog opt "$f"; fi
    done
    job "tests/errors/test_errors.c with TI_NO_MMAP (files read, not mapped)" j_no_mmap
    job "README example" j_readme
    job "32-bit Linux (i686): session, error, mutation tests, fuzz replays; ASan + UBSan; x87" j_i686
    job "Windows: MinGW-w64 builds of the header and the README example (-Werror)" j_mingw
    job "Windows: tinyinfer-rpc/-tune .exe under Wine against the Linux tools" j_wine
    job "Windows: the thread pool's tests and 8 sessions on 8 threads under Wine" j_wine_threads
    job "tools: tinyinfer-info and tinyinfer-run" j_tools
    job "bench: ti_bench compiles, peers.py self-test" j_bench_peers
    job "OpenCL: loader cross-check, stubs, backend kernels vs CPU" j_cl opt
    job "examples: classify (bundled MobileNet v2, grace_hopper.bmp)" j_classify
    job "examples: segment (DeepLabv3 from $CORAL)" j_segment
    job "threads: 8 sessions x 1,000 runs on one model == 1 thread" j_threads
    job "examples: game loop (inference every 4 frames blocks none)" j_game_loop
    job "CMake: tinyinfer::tinyinfer (subdirectory, FetchContent, install)" j_cmake
    job "iOS: TIClassifier.m syntax check (clang, GNUstep Foundation)" j_ios_syntax
    job "aarch64: library and JNI bridge cross-compile (-Werror)" j_a64_build
    job "Android: javac the Java class; JNI bridge on the JVM == demo" j_android_java
    job "threads: the same under ThreadSanitizer (8 x 20 runs)" j_threads_tsan
    job "threads: 4 sessions under MemorySanitizer (3 models x 3 runs)" j_threads_msan
    job "rpc: unit (SHA-256, HMAC, codecs) + loopback test of tinyinfer-rpc" j_rpc
    job "rpc: tinyinfer-rpc compiles with clang -Werror" j_rpc_werror
    job "rpc: --backend opencl through the server" j_rpc_cl
    job "rpc: server and client in two network namespaces" j_rpc_netns
    job "tune: loopback, server killed twice, tuner killed, journals" j_tune
    job "tune: two network namespaces, the link down mid-tune" j_tune_netns
    # the 20 s libFuzzer runs (j_fuzz_short) are left to ./build.sh asan and ./build.sh fuzz:
    # CI's budget goes to the replay of the corpora above
    collect
    finish
}

cmd_asan() { # every test program under ASan + UBSan, and the short libFuzzer runs
    prepare_test
    ASAN_FULL=1
    start_asan_jobs
    if [ -f tests/fuzz/fuzz_onnx.c ]; then job "fuzz: 20 s libFuzzer runs, ONNX, TFLite and RPC" j_fuzz_short; fi
    collect
    finish
}

cmd_fuzz() {
    setup_test
    [ "$HAVE_CLANG" = 1 ] || { say "error: ./build.sh fuzz needs clang"; exit 1; }
    mkdir -p build/fuzz/corpus
    if ! build_fuzzer build/fuzz/fuzz_onnx 2>/dev/null; then
        local v
        v=$(clang -dumpversion | cut -d. -f1)
        apt_install "libclang-rt-$v-dev" || true
        build_fuzzer build/fuzz/fuzz_onnx
    fi
    say "fuzzing for ${FUZZ_SECONDS:-60} s; new inputs go to build/fuzz/corpus, crashes to build/fuzz/"
    cd build/fuzz
    ./fuzz_onnx -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=2048 \
        -dict=../../tests/fuzz/onnx.dict -artifact_prefix=./ corpus ../../tests/fuzz/corpus/onnx
}

cmd_jobs() { # ./build.sh jobs j_threads j_cl:asan ...: a few jobs (j_name:a,b gives arguments)
    prepare_test
    local f
    # jobs that run models need the conformance runner before they start, as in cmd_test
    case " $* " in *" j_models "* | *" j_coral "* | *" j_conformance "* | *" j_tflite_conformance "* | *" j_cl_arch "* | *" j_cl_tflite "*)
        check "build: conformance runner" j_runner ;;
    esac
    for f in "$@"; do
        # j_name:a,b passes arguments: ./build.sh jobs j_cl:asan j_prog:opt,tests/unit/test_act.c
        local fn=${f%%:*} args=()
        [ "$fn" = "$f" ] || IFS=, read -r -a args <<<"${f#*:}"
        case $fn in j_*) ;; *) say "not a job function: '$fn' (the j_* functions in build.sh)"; exit 2 ;; esac
        declare -F "$fn" >/dev/null || { say "no job function '$fn' in build.sh"; exit 2; }
        job "$f" "$fn" "${args[@]}"
    done
    collect
    finish
}

cmd_bench() {
    if [ "${1:-}" = peers ]; then # issue #6: side by side with the other CPU runtimes
        shift
        setup_build
        amalgamate
        CC=$CC exec bench/peers.sh "$@"
    fi
    setup_build
    amalgamate
    build_all
    [ -x build/tinyinfer-run ] || { say "error: tools/tinyinfer-run.c is not written yet"; exit 1; }
    say "bench: build/tinyinfer-run $DEMO_MODEL --repeat 50"
    build/tinyinfer-run "$DEMO_MODEL" --repeat 50
    # float32 GEMM, one thread: FMA peak probe, 1024^3 and MobileNetV2 pointwise shapes under
    # each ISA; the report goes to bench/results/sgemm-<date>.md
    local report
    report="bench/results/sgemm-$(date +%Y-%m-%d).md"
    mkdir -p bench/results
    say "bench: build/bench_sgemm $report"
    "$CC" -O2 -g "${C99[@]}" -Wall -Wextra "${INC[@]}" bench/sgemm.c -o build/bench_sgemm "${LIBS[@]}"
    build/bench_sgemm "$report"
    bench_conv
    say "(side by side with onnxruntime, LiteRT, ncnn and MNN: ./build.sh bench peers)"
}

# float32 Conv paths, old against new (bench/conv.c), then whole architecture models: this
# tree's tinyinfer-run against one built on BASE's tinyinfer.h (default: the commit before
# the Conv paths), alternating runs, 1 and 2 threads. Report: bench/results/conv-<date>.md
CONV_BASE=${CONV_BASE:-ff42576}
bench_conv() {
    local report models=() m isa t r
    report="bench/results/conv-$(date +%Y-%m-%d).md"
    say "bench: build/bench_conv $report"
    "$CC" -O2 -g "${C99[@]}" -Wall -Wextra "${INC[@]}" bench/conv.c -o build/bench_conv "${LIBS[@]}"
    {
        echo "# float32 Conv paths: $(date +%Y-%m-%d)"
        echo
        echo "Made by \`./build.sh bench\` (bench_conv in build.sh) on: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//'), $(nproc) CPUs, $CC $("$CC" -dumpversion) -O2."
        echo "Per layer: \`build/bench_conv REPORT\` (bench/conv.c), each ISA forced by TINYINFER_ISA."
    } >"$report"
    for isa in avx512 avx2 scalar; do TINYINFER_ISA=$isa build/bench_conv "$report"; done
    for m in resnet18 mobilenet_v2 efficientnet_b0 mobilenet_v3_small squeezenet1_1; do
        [ -f "$CACHE/arch/$m/model.onnx" ] && models+=("$m")
    done
    if [ ${#models[@]} = 0 ]; then
        echo "(no architecture models in $CACHE/arch: tests/models/run.sh makes them)" >>"$report"
        return 0
    fi
    mkdir -p build/conv_base
    git show "$CONV_BASE:tinyinfer.h" >build/conv_base/tinyinfer.h
    "$CC" -O2 -g "${C99[@]}" -Wall -Wextra -Ibuild/conv_base "${INC[@]}" tools/tinyinfer-run.c \
        -o build/conv_base/tinyinfer-run "${LIBS[@]}"
    {
        echo
        echo "### Whole models, 224x224 (tinyinfer-run --repeat 15, median wall ms; old = $CONV_BASE)"
        echo
        echo "Alternating old, new, old, new (2 rounds each; the better median of each is kept)."
        echo
        echo "| model | threads | old ms | new ms | old/new |"
        echo "|---|---:|---:|---:|---:|"
    } >>"$report"
    for m in "${models[@]}"; do
        for t in 1 2; do
            local o=999999 n=999999 v
            for r in 1 2; do
                v=$(build/conv_base/tinyinfer-run "$CACHE/arch/$m/model.onnx" --threads $t --repeat 15 |
                    sed -n 's/^time: median \([0-9.]*\) ms.*/\1/p')
                o=$(awk -v a="$o" -v b="$v" 'BEGIN { print (b < a ? b : a) }')
                v=$(build/tinyinfer-run "$CACHE/arch/$m/model.onnx" --threads $t --repeat 15 |
                    sed -n 's/^time: median \([0-9.]*\) ms.*/\1/p')
                n=$(awk -v a="$n" -v b="$v" 'BEGIN { print (b < a ? b : a) }')
            done
            awk -v m="$m" -v t="$t" -v o="$o" -v n="$n" \
                'BEGIN { printf "| %s | %s | %.1f | %.1f | %.2f |\n", m, t, o, n, o / n }' >>"$report"
        done
    done
    say "bench: wrote $report"
}

case "${1:-}" in
"")
    setup_build
    amalgamate
    build_all
    demo
    ;;
test) cmd_test ;;
asan) cmd_asan ;;
jobs)
    shift
    cmd_jobs "$@"
    ;;
fuzz) cmd_fuzz ;;
bench)
    shift
    cmd_bench "$@"
    ;;
amalgamate) amalgamate ;;
clean) rm -rf build ;;
-h | --help | help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' ;;
*)
    say "unknown command '$1' (try: ./build.sh help)"
    exit 2
    ;;
esac
