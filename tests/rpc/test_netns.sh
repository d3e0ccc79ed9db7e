#!/usr/bin/env bash
# test_netns.sh BUILD_DIR: two hosts on one machine (tests/rpc/netns.sh): tinyinfer-rpc
# serve in namespace A, tinyinfer-rpc run in namespace B, over the veth pair only. The remote
# outputs equal a local tinyinfer-run's; B cannot reach a server outside the pair; with the
# link down a run fails (lost connection, no hang), and after the link is back it works.
# SKIPs when not root or when namespaces cannot be made. Prints "N passed, N failed, N skipped".
set -u
[ $# = 1 ] && [ -x "$1/tinyinfer-rpc" ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BIN=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. tests/rpc/netns.sh
if ! netns_setup; then
    echo "SKIP two hosts in network namespaces: $NETNS_WHY"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
export TINYINFER_RPC_TOKEN="netns-$$-$RANDOM"
RPC=$BIN/tinyinfer-rpc
SQ=tests/data/light_squeezenet.onnx
PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }

netns_exec A "$RPC" serve --listen "$NETNS_ADDR_A:0" --cache "$TMP/cache" >"$TMP/srv.out" 2>"$TMP/srv.log" &
PORT=""
for ((i = 0; i < 100; i++)); do
    PORT=$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$TMP/srv.out" 2>/dev/null)
    [ -n "$PORT" ] && break
    sleep 0.1
done
[ -n "$PORT" ] || { echo "the server did not start in $NETNS_A:"; cat "$TMP/srv.log"; exit 1; }
echo "server: $NETNS_A $NETNS_ADDR_A:$PORT; client: $NETNS_B $NETNS_ADDR_B"

"$BIN/tinyinfer-run" "$SQ" --seed 2 --save-outputs "$TMP/local" >/dev/null 2>&1
if netns_exec B "$RPC" run "$SQ" --remote "$NETNS_ADDR_A:$PORT" --seed 2 --save-outputs "$TMP/remote" \
    >"$TMP/run.out" 2>&1; then ok; else bad "run from B failed:"; cat "$TMP/run.out"; fi
if cmp -s "$TMP/local/softmaxout_1.npy" "$TMP/remote/softmaxout_1.npy"; then ok; else bad "outputs differ"; fi
# the server saw the client's namespace address: the traffic crossed the pair
if grep -q "session [0-9]*: $NETNS_ADDR_B:" "$TMP/srv.log"; then ok; else bad "server log has no session from $NETNS_ADDR_B"; cat "$TMP/srv.log"; fi
# B has no route out of the pair: the same server is not reachable on 127.0.0.1
if netns_exec B "$RPC" info --remote "127.0.0.1:$PORT" --timeout 3 >"$TMP/lo.out" 2>&1; then
    bad "B reached 127.0.0.1:$PORT: the server is not confined to A"
else ok; fi

# link down: a run fails within its timeout (no hang); link up: it works again
netns_link_down
t0=$SECONDS
if timeout 60 ip netns exec "$NETNS_B" "$RPC" run "$SQ" --remote "$NETNS_ADDR_A:$PORT" --timeout 3 \
    >"$TMP/down.out" 2>&1; then bad "a run with the link down succeeded"; else ok; fi
if [ $((SECONDS - t0)) -lt 30 ]; then ok; else bad "the run with the link down took $((SECONDS - t0)) s"; fi
grep -q 'tinyinfer-rpc: ' "$TMP/down.out" && ok || { bad "no reason printed with the link down"; cat "$TMP/down.out"; }
netns_link_up
sleep 0.5
if netns_exec B "$RPC" run "$SQ" --remote "$NETNS_ADDR_A:$PORT" >"$TMP/up.out" 2>&1; then ok
else bad "a run after the link came back failed:"; cat "$TMP/up.out"; fi
echo "$PASS passed, $FAIL failed, 0 skipped"
[ "$FAIL" = 0 ]
