#!/usr/bin/env bash
# test_rpc.sh BUILD_DIR [loopback|opencl]: tinyinfer-rpc on 127.0.0.1 (BUILD_DIR holds
# tinyinfer-rpc and tinyinfer-run). loopback (default): remote outputs == local ones
# (byte-equal .npy), the profile against the latency, the model cache, reverse dial, --via
# stdio, wrong token, the token absent from the client's bytes, hostile bytes (2 GiB length,
# truncated, random, bad magic, stalled, oversize and hash-mismatched PUT_MODEL, unknown type)
# with the server serving on, a failing model, a crashed session. opencl: a run with
# --backend opencl through the server (SKIP without a device). Hostile peers and the spying
# proxy are tests/rpc/rpc_raw.py (python3; those checks SKIP without it). Prints a FAIL line
# per failed check and "N passed, N failed, N skipped" last; exits 1 when anything failed.
set -u
[ $# -ge 1 ] && [ -x "$1/tinyinfer-rpc" ] || { echo "usage: $0 BUILD_DIR [loopback|opencl]" >&2; exit 2; }
BIN=$(cd "$1" && pwd)
MODE=${2:-loopback}
cd "$(dirname "$0")/../.."
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
export TINYINFER_RPC_TOKEN="tok-$$-$RANDOM-not-in-the-traffic"
RPC=$BIN/tinyinfer-rpc
SQ=tests/data/light_squeezenet.onnx
MB=tests/data/mobilenet_v1_0.25_128_quant.tflite

PASS=0 FAIL=0 SKIP=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }
skipped() { SKIP=$((SKIP + 1)); echo "SKIP $*"; }
has() { if grep -qE -- "$3" "$2"; then ok; else bad "$1: no line matching '$3' in $2:"; sed 's/^/    | /' "$2" | tail -n 15; fi; }
hasnt() { if grep -qE -- "$3" "$2"; then bad "$1: '$3' found in $2"; else ok; fi; }

# start_server NAME ARGS...: a server on 127.0.0.1, port 0; sets PORT and SPID
start_server() {
    local name=$1
    shift
    "$RPC" serve --listen 127.0.0.1:0 --cache "$TMP/cache" "$@" >"$TMP/$name.out" 2>"$TMP/$name.log" &
    SPID=$!
    PIDS+=("$SPID")
    local i
    for ((i = 0; i < 100; i++)); do
        PORT=$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$TMP/$name.out" 2>/dev/null)
        [ -n "$PORT" ] && return 0
        sleep 0.1
    done
    echo "server $name did not start:"
    cat "$TMP/$name.log"
    return 1
}

# same_npy NAME DIR1 DIR2: the same .npy files, byte for byte (and at least one)
same_npy() {
    local f n=0 diff=0
    for f in "$2"/*.npy; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        cmp -s "$f" "$3/$(basename "$f")" || { diff=1; echo "    $(basename "$f") differs"; }
    done
    if [ "$n" -gt 0 ] && [ "$diff" = 0 ] && [ "$(ls "$2" | wc -l)" = "$(ls "$3" | wc -l)" ]; then ok
    else bad "$1: outputs in $2 and $3 differ ($n files)"; fi
}

alive() { if kill -0 "$SPID" 2>/dev/null; then ok; else bad "$1: the server is gone"; fi; }

good_run() { # good_run NAME: a normal run on PORT succeeds
    if "$RPC" run "$SQ" --remote "127.0.0.1:$PORT" --threads 1 >"$TMP/good.out" 2>&1; then ok
    else bad "$1: a good run afterwards failed:"; sed 's/^/    | /' "$TMP/good.out"; fi
}

if [ "$MODE" = opencl ]; then
    if ! "$BIN/tinyinfer-run" tests/data/conv2d_padding.onnx --backend opencl >"$TMP/probe.log" 2>&1; then
        skipped "OpenCL through the server: no OpenCL device ($(tail -n 1 "$TMP/probe.log"))"
    else
        start_server cl || exit 1
        "$RPC" info --remote "127.0.0.1:$PORT" >"$TMP/cl_info.out" 2>&1
        has "opencl: info lists a device" "$TMP/cl_info.out" '^  0: .+ / .+ \((gpu|cpu|other), '
        "$BIN/tinyinfer-run" "$SQ" --backend opencl --seed 5 --save-outputs "$TMP/cl_local" >/dev/null 2>&1
        "$RPC" run "$SQ" --remote "127.0.0.1:$PORT" --backend opencl --seed 5 --repeat 3 --profile \
            --save-outputs "$TMP/cl_remote" >"$TMP/cl_run.out" 2>&1
        has "opencl: remote session on OpenCL" "$TMP/cl_run.out" '^session: backend opencl, device .+'
        has "opencl: nodes on the device" "$TMP/cl_run.out" '^ +[0-9]+ opencl +Conv'
        same_npy "opencl: remote == local (--backend opencl)" "$TMP/cl_local" "$TMP/cl_remote"
        TINYINFER_OPENCL_DEVICE= "$RPC" run "$SQ" --remote "127.0.0.1:$PORT" --backend opencl \
            --device no-such-device >"$TMP/cl_bad.out" 2>&1
        has "opencl: a bad --device is a clear error" "$TMP/cl_bad.out" 'remote run failed: .*no-such-device'
        alive "opencl: after a bad device"
    fi
    echo "$PASS passed, $FAIL failed, $SKIP skipped"
    [ "$FAIL" = 0 ]
    exit
fi

# ---- a server needs a token -------------------------------------------------------------
env -u TINYINFER_RPC_TOKEN "$RPC" serve --port 0 --cache "$TMP/cache" >"$TMP/notoken.out" 2>&1
rc=$?
if [ "$rc" = 1 ]; then ok; else bad "serve without a token: exit code $rc, expected 1"; fi
has "serve without a token: says why" "$TMP/notoken.out" 'no token'

start_server main || exit 1

# ---- remote == local, byte for byte ----------------------------------------------------
for m in "$SQ" "$MB" tests/data/split_concat.tflite; do
    b=$(basename "$m")
    "$BIN/tinyinfer-run" "$m" --seed 3 --threads 1 --save-outputs "$TMP/local_$b" >"$TMP/local_$b.out" 2>&1
    "$RPC" run "$m" --remote "127.0.0.1:$PORT" --seed 3 --threads 2 --save-outputs "$TMP/remote_$b" \
        >"$TMP/remote_$b.out" 2>&1 || bad "run $b failed: $(tail -n 2 "$TMP/remote_$b.out")"
    same_npy "remote == local: $b" "$TMP/local_$b" "$TMP/remote_$b"
done
# the same summary lines as tinyinfer-run prints
grep -A1 "^  'softmaxout_1'" "$TMP/local_light_squeezenet.onnx.out" >"$TMP/sum_local"
grep -A1 "^  'softmaxout_1'" "$TMP/remote_light_squeezenet.onnx.out" >"$TMP/sum_remote"
if [ -s "$TMP/sum_local" ] && cmp -s "$TMP/sum_local" "$TMP/sum_remote"; then ok
else bad "output summary differs from tinyinfer-run's"; fi
# control: another seed gives other outputs (the comparison can fail)
"$RPC" run "$MB" --remote "127.0.0.1:$PORT" --seed 4 --save-outputs "$TMP/remote_seed4" >/dev/null 2>&1
if cmp -s "$TMP/remote_seed4/"*.npy "$TMP/local_$(basename "$MB")/"*.npy; then
    bad "control: seed 4 and seed 3 gave the same outputs: the comparison proves nothing"
else ok; fi

# --input: an .npy file (made by tinyinfer-run --save-outputs of ... itself: operator_params
# takes [2,2] float32, and its input file is written here in numpy's format)
npy_f32_2x2() {
    local h="{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"
    while [ $(((10 + ${#h} + 1) % 64)) != 0 ]; do h="$h "; done
    { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((${#h} + 1)))\\x00"; printf '%s\n' "$h"
      printf '\x00\x00\x80\x3f\x00\x00\x00\xc0\x00\x00\x40\x40\x00\x00\x80\xc0'; } >"$1"
}
npy_f32_2x2 "$TMP/in.npy"
"$BIN/tinyinfer-run" tests/data/operator_params.onnx --input "$TMP/in.npy" --save-outputs "$TMP/local_in" >/dev/null 2>&1
"$RPC" run tests/data/operator_params.onnx --remote "127.0.0.1:$PORT" --input "$TMP/in.npy" \
    --save-outputs "$TMP/remote_in" >"$TMP/remote_in.out" 2>&1
same_npy "remote == local with --input .npy" "$TMP/local_in" "$TMP/remote_in"

# ---- the model cache ----------------------------------------------------------------------
has "first run uploads" "$TMP/remote_light_squeezenet.onnx.out" '^model: .*: uploaded$'
"$RPC" run "$SQ" --remote "127.0.0.1:$PORT" >"$TMP/cached.out" 2>&1
has "second run: no upload (reply flag)" "$TMP/cached.out" '^model: .*: already cached on the server$'
sq_hash=$(sha256sum "$SQ" | cut -c1-16)
n_put=$(grep -c "PUT_MODEL $sq_hash: stored" "$TMP/main.log")
if [ "$n_put" = 1 ]; then ok; else bad "server log: $n_put uploads of $SQ, expected 1"; fi
if [ -f "$TMP/cache/$(sha256sum "$SQ" | cut -d' ' -f1).model" ]; then ok; else bad "cache: no <sha256>.model file"; fi

# ---- the profile against the latency -------------------------------------------------------
# one thread, 2 warmup + 9 timed runs. The server times each ti_session_run (wall) and sums
# the node times (ti_node_info.time_ms) of each run; the median of those sums must be within
# 10 % of the median wall time. (The table shows each node's median over the runs.)
"$RPC" run "$SQ" --remote "127.0.0.1:$PORT" --threads 1 --warmup 2 --repeat 9 --profile \
    --trace "$TMP/trace.json" >"$TMP/profile.out" 2>&1
pct=$(sed -n 's/^profile: nodes sum .* = \([0-9.]*\)% of the median latency.*/\1/p' "$TMP/profile.out")
if [ -n "$pct" ] && awk -v p="$pct" 'BEGIN { exit !(p >= 90 && p <= 110) }'; then ok
else bad "profile sum is ${pct:-?}% of the median latency (want 90-110%)"; sed 's/^/    | /' "$TMP/profile.out" | tail -n 12; fi
has "profile: per-op table" "$TMP/profile.out" '^    Conv +26 nodes'
has "profile: latency line" "$TMP/profile.out" '^latency: median [0-9.]+ ms, p90 [0-9.]+ ms, min [0-9.]+ ms over 9 runs'
has "trace file" "$TMP/trace.json" '"ph":"X"'
"$RPC" bench "$SQ" --remote "127.0.0.1:$PORT" --repeat 4 >"$TMP/bench.out" 2>&1
has "bench: statistics" "$TMP/bench.out" '^latency: median [0-9.]+ ms, p90 .* over 4 runs \(after 2 warmup\)'
hasnt "bench: no outputs" "$TMP/bench.out" '^outputs:'

# ---- info --------------------------------------------------------------------------------
"$RPC" info --remote "127.0.0.1:$PORT" >"$TMP/info.out" 2>&1
has "info: host" "$TMP/info.out" '^host: '
has "info: cpu features" "$TMP/info.out" '^cpu features: '
has "info: backends" "$TMP/info.out" '^backends: cpu'

# ---- reverse dial ------------------------------------------------------------------------
"$RPC" run "$SQ" --listen 0 --seed 3 --save-outputs "$TMP/reverse" >"$TMP/reverse.out" 2>"$TMP/reverse.err" &
cpid=$!
PIDS+=("$cpid")
rport=""
for ((i = 0; i < 100; i++)); do
    rport=$(sed -n 's/.*dial in on port \([0-9]*\)$/\1/p' "$TMP/reverse.err")
    [ -n "$rport" ] && break
    sleep 0.1
done
"$RPC" serve --connect "127.0.0.1:${rport:-1}" --cache "$TMP/cache" >"$TMP/dialer.out" 2>"$TMP/dialer.log" &
dpid=$!
PIDS+=("$dpid")
if wait "$cpid"; then ok; else bad "reverse dial: the run failed:"; cat "$TMP/reverse.err"; fi
same_npy "reverse dial: outputs == local" "$TMP/local_light_squeezenet.onnx" "$TMP/reverse"
has "reverse dial: server dialled" "$TMP/dialer.log" "dialled 127.0.0.1:$rport"
hasnt "reverse dial: nothing on the dialler's stdout" "$TMP/dialer.out" '.'
kill "$dpid" 2>/dev/null

# ---- --via: a spawned command's stdin/stdout ---------------------------------------------
"$RPC" run "$SQ" --via "$RPC serve --stdio --cache $TMP/cache" --seed 3 --save-outputs "$TMP/via" \
    >"$TMP/via.out" 2>"$TMP/via.err"
rc=$?
if [ "$rc" = 0 ]; then ok; else bad "--via: exit code $rc"; cat "$TMP/via.err"; fi
same_npy "--via: outputs == local" "$TMP/local_light_squeezenet.onnx" "$TMP/via"
has "--via: the server logged to stderr" "$TMP/via.err" 'serving one session on stdin/stdout'

# ---- a wrong token -------------------------------------------------------------------------
TINYINFER_RPC_TOKEN=wrong-token "$RPC" run "$SQ" --remote "127.0.0.1:$PORT" >"$TMP/wrong.out" 2>&1
rc=$?
if [ "$rc" = 1 ]; then ok; else bad "wrong token: exit code $rc, expected 1"; fi
has "wrong token: refused" "$TMP/wrong.out" 'authentication failed: wrong token'
hasnt "wrong token: no run" "$TMP/wrong.out" '^latency:'
"$RPC" run "$SQ" --remote "127.0.0.1:$PORT" --token-file /dev/null >"$TMP/empty_token.out" 2>&1
has "empty token file: refused" "$TMP/empty_token.out" 'token file /dev/null is empty'

if ! command -v python3 >/dev/null 2>&1; then
    skipped "hostile peers and the traffic capture: no python3"
else
    RAW=(python3 tests/rpc/rpc_raw.py)
    # ---- the token never crosses the wire ------------------------------------------------
    "${RAW[@]}" proxy "$PORT" "$TMP/capture.bin" >"$TMP/proxy.out" 2>&1 &
    PIDS+=("$!")
    pport=""
    for ((i = 0; i < 100; i++)); do
        pport=$(sed -n 's/^proxy on \([0-9]*\)$/\1/p' "$TMP/proxy.out")
        [ -n "$pport" ] && break
        sleep 0.1
    done
    "$RPC" run "$SQ" --remote "127.0.0.1:$pport" >"$TMP/proxied.out" 2>&1 || bad "run through the proxy failed"
    # control: the capture holds what the client sent in clear (the model's name in RUN)
    has "capture: holds the client's bytes" "$TMP/capture.bin" 'light_squeezenet\.onnx'
    if grep -qaF -- "$TINYINFER_RPC_TOKEN" "$TMP/capture.bin"; then bad "the token was sent in clear"; else ok; fi

    # ---- hostile bytes: clean errors, the server serves on ------------------------------
    attack() { # attack NAME MODE EXPECTED-REGEX
        "${RAW[@]}" attack "$PORT" "$2" >"$TMP/attack_$2.out" 2>&1
        has "$1" "$TMP/attack_$2.out" "$3"
        alive "$1"
        good_run "$1"
    }
    attack "2 GiB length after auth" huge '^ERROR 2 message type 9 of 2147483647 bytes is over the limit of 268435456 bytes'
    attack "2 GiB length before auth" huge-preauth '^ERROR 2 .*over the limit'
    attack "truncated message" truncated '^CLOSED'
    attack "random bytes" random '^ERROR 1 bad magic'
    attack "bad magic" badmagic '^ERROR 1 bad magic 58 58 58 58'
    attack "hash-mismatched PUT_MODEL" mismatch-put '^ERROR 7 PUT_MODEL: the 33 bytes hash to .*not stored / then TYPE 6'
    attack "unknown message type" unknown-type '^ERROR 5 message type 200 is not a request / then TYPE 6'
    has "server log: truncated" "$TMP/main.log" 'connection closed after 10 of 100 bytes'

    start_server small --max-message 65536 --read-timeout 1 --cache "$TMP/cache_small" || exit 1
    attack "oversize PUT_MODEL (1 MiB, limit 64 KiB)" oversize-put '^ERROR 2 message type 9 of [0-9]+ bytes is over the limit of 65536'
    "$RPC" run "$MB" --remote "127.0.0.1:$PORT" >"$TMP/oversize_client.out" 2>&1
    has "oversize model from the client: clear error" "$TMP/oversize_client.out" 'over the limit of 65536 bytes'
    attack "stalled client (read timeout 1 s)" stall '^ERROR 3 .*timed out|^CLOSED'
fi

# ---- a model that fails, and a session that crashes --------------------------------------
start_server main2 || exit 1
"$RPC" run tests/data/model_invoking_error.tflite --remote "127.0.0.1:$PORT" >"$TMP/fail.out" 2>&1
rc=$?
if [ "$rc" = 1 ]; then ok; else bad "failing model: exit code $rc, expected 1"; fi
has "failing model: node and reason" "$TMP/fail.out" "remote run failed: model_invoking_error.tflite: node 'operator_0' \(fake-op-double\): op 'tflite.fake-op-double' is not supported"
alive "failing model"
good_run "failing model"
# a session killed mid-run (as a driver crash would; SIGKILL because this machine's processes
# catch an externally sent SIGSEGV): logged, the server goes on
before=$(grep -c 'session [0-9]*: 127' "$TMP/main2.log")
"$RPC" run "$SQ" --remote "127.0.0.1:$PORT" --threads 1 --repeat 400 >"$TMP/crash.out" 2>&1 &
cpid=$!
child=""
for ((i = 0; i < 100; i++)); do # the new session's pid, once it has started its RUN
    if [ "$(grep -c 'session [0-9]*: 127' "$TMP/main2.log")" -gt "$before" ]; then
        child=$(sed -n 's/.*session \([0-9]*\): 127.*/\1/p' "$TMP/main2.log" | tail -n 1)
        grep -q "serve\[$child\]: HAS_MODEL" "$TMP/main2.log" && break
    fi
    sleep 0.1
done
sleep 0.5
[ -n "$child" ] && kill -KILL "$child" 2>/dev/null
wait "$cpid"
rc=$?
if [ "$rc" = 1 ]; then ok; else bad "crashed session: client exit code $rc, expected 1"; fi
has "crashed session: client says the connection was lost" "$TMP/crash.out" 'connection was lost'
sleep 0.7
has "crashed session: server logs the signal" "$TMP/main2.log" "session $child ended by signal 9"
alive "crashed session"
good_run "crashed session"

echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" = 0 ]
