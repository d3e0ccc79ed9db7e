#!/usr/bin/env bash
# test_wine.sh LINUX_BINDIR WINDOWS_BINDIR: the Windows builds (MinGW-w64, static) of
# tinyinfer-rpc and tinyinfer-tune run under Wine and talk to the Linux ones over loopback:
# Winsock, the in-process sessions, QueryPerformanceCounter timings, the journal in binary
# mode. A Windows server gives a Linux client the outputs a local Linux run gives and
# refuses a wrong token; the Windows tuner against a Linux server (--fake-timing, PoCL)
# writes the same tuning file as the Linux tuner with the same seed, and resumes from its
# journal. SKIPs without wine64 or without an OpenCL device (the tuning part).
# Prints "N passed, N failed, N skipped".
set -u
[ $# = 2 ] || { echo "usage: $0 LINUX_BINDIR WINDOWS_BINDIR" >&2; exit 2; }
L=$(cd "$1" && pwd)
WB=$(cd "$2" && pwd)
cd "$(dirname "$0")/../.."
WINE=""
for w in wine64 /usr/lib/wine/wine64 wine; do command -v "$w" >/dev/null 2>&1 && { WINE=$w; break; }; done
if [ -z "$WINE" ]; then
    echo "SKIP Windows builds under Wine: no wine64 (apt-get install wine64)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
TMP=$(mktemp -d)
export WINEDEBUG=-all WINEPREFIX=$TMP/prefix TINYINFER_RPC_TOKEN="wine-$$-$RANDOM"
export TINYINFER_OPENCL_CACHE=$TMP/clcache
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    WINEPREFIX=$TMP/prefix timeout 20 wineserver -k 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
PASS=0 FAIL=0 SKIP=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
port_of() { # port_of FILE: the port a server printed, waiting up to 60 s (Wine starts slowly)
    local i p
    for ((i = 0; i < 600; i++)); do
        p=$(sed -n 's/^listening on \([0-9]*\).*$/\1/p' "$1" 2>/dev/null | tr -d '\r')
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}
SQ=tests/data/light_squeezenet.onnx

# 1. a Windows server, a Linux client
"$WINE" "$WB/tinyinfer-rpc.exe" serve --listen 127.0.0.1:0 --cache 'C:\tinyinfer-cache' \
    >"$TMP/wsrv.out" 2>"$TMP/wsrv.log" &
PIDS+=($!)
if WPORT=$(port_of "$TMP/wsrv.out"); then
    "$L/tinyinfer-run" "$SQ" --seed 2 --save-outputs "$TMP/local" >/dev/null 2>&1
    "$L/tinyinfer-rpc" run "$SQ" --remote "127.0.0.1:$WPORT" --seed 2 --repeat 3 --profile \
        --save-outputs "$TMP/remote" >"$TMP/run.out" 2>&1
    check "Linux client -> Windows server: the run works ($(tail -n 2 "$TMP/run.out"))" [ $? = 0 ]
    check "  ... outputs byte-equal to a local Linux run" \
        cmp -s "$TMP/local/softmaxout_1.npy" "$TMP/remote/softmaxout_1.npy"
    check "  ... the profile has times (QueryPerformanceCounter)" grep -q '^profile: nodes sum [0-9.]* ms' "$TMP/run.out"
    TINYINFER_RPC_TOKEN=wrong "$L/tinyinfer-rpc" run "$SQ" --remote "127.0.0.1:$WPORT" >"$TMP/bad.out" 2>&1
    check "  ... a wrong token is refused" [ $? = 1 ]
    "$L/tinyinfer-rpc" info --remote "127.0.0.1:$WPORT" >"$TMP/info.out" 2>&1
    check "  ... still serving after the refusal" [ $? = 0 ]
else
    bad "the Windows server did not start: $(tail -n 3 "$TMP/wsrv.log")"
fi

# 2. the Windows tuner, a Linux server on PoCL (--fake-timing: reproducible choices)
if ! "$L/tinyinfer-run" tests/data/conv2d_padding.onnx --backend opencl >/dev/null 2>&1; then
    echo "SKIP the Windows tuner: no OpenCL device for the Linux server"
    SKIP=$((SKIP + 1))
else
    "$L/tinyinfer-rpc" serve --listen 127.0.0.1:0 --cache "$TMP/lcache" --fake-timing \
        >"$TMP/lsrv.out" 2>"$TMP/lsrv.log" &
    PIDS+=($!)
    LPORT=$(port_of "$TMP/lsrv.out")
    T_ARGS=(tests/data/conv2d_padding.onnx --backend opencl --seed 4 --repeat 20 --warmup 1 --quiet
        --remote "127.0.0.1:$LPORT")
    "$L/tinyinfer-tune" "${T_ARGS[@]}" --out "$TMP/linux.tuning" >"$TMP/lt.out" 2>&1
    check "Linux tuner finishes" [ $? = 0 ]
    "$WINE" "$WB/tinyinfer-tune.exe" "${T_ARGS[@]}" --out "$TMP/win.tuning" >"$TMP/wt.out" 2>&1
    check "Windows tuner finishes ($(tail -n 2 "$TMP/wt.out"))" [ $? = 0 ]
    check "  ... same tuning file as the Linux tuner" cmp -s "$TMP/win.tuning" "$TMP/linux.tuning"
    check "  ... a journal without CR bytes" test -s "$TMP/win.tuning.journal" -a \
        "$(tr -cd '\r' <"$TMP/win.tuning.journal" | wc -c)" = 0
    # a rerun finds every trial in its journal and launches none
    b0=$(grep -c '^B ' "$TMP/win.tuning.journal")
    "$WINE" "$WB/tinyinfer-tune.exe" "${T_ARGS[@]}" --out "$TMP/win.tuning" >"$TMP/wt2.out" 2>&1
    check "  ... rerun reads its journal ($(grep -a 'journal' "$TMP/wt2.out" | tr -d '\r'))" \
        grep -aq 'trials done before, 0 damaged' "$TMP/wt2.out"
    check "  ... and launches no trial again" [ "$(grep -c '^B ' "$TMP/win.tuning.journal")" = "$b0" ]
fi
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" = 0 ]
