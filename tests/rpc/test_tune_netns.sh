#!/usr/bin/env bash
# test_tune_netns.sh BUILD_DIR: tuning between two hosts on one machine (issue #7 must-show
# c): tinyinfer-rpc serve in network namespace A, tinyinfer-tune in B (tests/rpc/netns.sh:
# a veth pair, traffic only between them). The link is taken down mid-tune for longer than
# the tuner's --timeout and brought back: the tuner notices, reconnects with back-off and
# completes; the journal holds every trial's result once and the tuning file equals that of
# a run without the outage (the server's --fake-timing TEST HOOK makes times reproducible).
# SKIPs when not root, when namespaces cannot be made, or without an OpenCL device.
# Prints "N passed, N failed, N skipped".
set -u
[ $# = 1 ] && [ -x "$1/tinyinfer-tune" ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BIN=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
MODEL=tests/data/conv2d_padding.onnx
if ! "$BIN/tinyinfer-run" "$MODEL" --backend opencl >"$TMP/probe.log" 2>&1; then
    echo "SKIP tuning between namespaces: no OpenCL device ($(tail -n 1 "$TMP/probe.log"))"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
. tests/rpc/netns.sh
if ! netns_setup; then
    echo "SKIP tuning between network namespaces: $NETNS_WHY"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
export TINYINFER_RPC_TOKEN="tune-netns-$$-$RANDOM"
export TINYINFER_OPENCL_CACHE=$TMP/clcache
PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }

netns_exec A "$BIN/tinyinfer-rpc" serve --listen "$NETNS_ADDR_A:0" --cache "$TMP/cache" --fake-timing \
    >"$TMP/srv.out" 2>"$TMP/srv.log" &
PORT=""
for ((i = 0; i < 100; i++)); do
    PORT=$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$TMP/srv.out" 2>/dev/null)
    [ -n "$PORT" ] && break
    sleep 0.1
done
[ -n "$PORT" ] || { echo "the server did not start in $NETNS_A:"; cat "$TMP/srv.log"; exit 1; }
TUNE=("$BIN/tinyinfer-tune" "$MODEL" --backend opencl --seed 3 --repeat 3000 --warmup 1 --quiet
    --remote "$NETNS_ADDR_A:$PORT" --timeout 3 --reconnect-limit 60)

# without an outage: the reference
netns_exec B "${TUNE[@]}" --out "$TMP/ref.tuning" >"$TMP/ref.out" 2>&1
check "tuning from B without an outage ($(tail -n 2 "$TMP/ref.out"))" [ $? = 0 ]
TRIALS=$(sed -n 's/.* trials=\([0-9]*\) .*/\1/p' "$TMP/ref.tuning.journal" | head -n 1)

# the link goes down mid-tune for 6 s (twice the tuner's --timeout), then comes back
netns_exec B "${TUNE[@]}" --out "$TMP/cut.tuning" >"$TMP/cut.out" 2>&1 &
TPID=$!
J=$TMP/cut.tuning.journal
for ((i = 0; i < 600; i++)); do
    [ -f "$J" ] && [ "$(grep -c '^R ' "$J")" -ge 2 ] && break
    sleep 0.1
done
done_before=$(grep -c '^R ' "$J" 2>/dev/null || echo 0)
netns_link_down
sleep 6
stalled=$(grep -c '^R ' "$J")
netns_link_up
wait "$TPID"
rc=$?
check "tuning completes after the link was down 6 s ($(tail -n 3 "$TMP/cut.out"))" [ $rc = 0 ]
check "the outage hit mid-tune ($done_before of $TRIALS done when it began)" [ "$done_before" -lt "${TRIALS:-0}" ]
check "no trial finished while the link was down" [ "$stalled" -le $((done_before + 1)) ]
check "the tuner noticed and reconnected" grep -q ' [1-9] reconnects' "$TMP/cut.out"
n_once=$(grep '^R ' "$J" | awk '{print $2}' | sort -n | uniq | wc -l)
n_dup=$(grep '^R ' "$J" | awk '{print $2}' | sort -n | uniq -d | wc -l)
check "journal: each of the $TRIALS trials has one result ($n_once, $n_dup repeated)" \
    test "$n_once" = "$TRIALS" -a "$n_dup" = 0
check "tuning file == the run without an outage" cmp -s "$TMP/cut.tuning" "$TMP/ref.tuning"
echo "$PASS passed, $FAIL failed, 0 skipped"
[ "$FAIL" = 0 ]
