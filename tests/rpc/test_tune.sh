#!/usr/bin/env bash
# tinyinfer-tune against tinyinfer-rpc servers on loopback (issue #7, must-show b):
#   - a local tuning run (the server a child on stdio) writes a file sessions load;
#   - SIGKILL the server twice mid-run and restart it: the tuner reconnects and finishes,
#     the journal holds every trial's result exactly once, and the tuning file equals that
#     of an uninterrupted run with the same seed (the servers run with --fake-timing, the
#     TEST HOOK that makes times a hash of each node's name and setting, so the choice is
#     reproducible; real times would differ run to run);
#   - SIGKILL the tuner mid-run and rerun it: it resumes, 0 finished trials run again;
#   - damaged journal lines are skipped; a journal of another plan is refused;
#   - a trial whose run crashes the session (the server's --crash-on TEST HOOK raises
#     SIGSEGV, as a faulting kernel would) is recorded as crashed after its first launch,
#     from the server's crash record: launched once, never again, the server keeps serving;
#     the same through a local child server on stdio;
#   - a trial cut twice with no crash record (the server killed whole, twice) is recorded
#     as crashed, never retried.
# Usage: tests/rpc/test_tune.sh BINDIR (with tinyinfer-rpc, tinyinfer-tune, tinyinfer-run)
set -u
BIN=${1:?usage: test_tune.sh BINDIR}
MODEL=tests/data/conv2d_padding.onnx
W=$(mktemp -d "${TMPDIR:-/tmp}/ti-tune.XXXXXX")
export TINYINFER_RPC_TOKEN=tune-test-token-$$
export TINYINFER_OPENCL_CACHE=$W/clcache
PASS=0 FAIL=0 SKIP=0
SERVER_PID=
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
cleanup() {
    [ -n "$SERVER_PID" ] && kill_server
    [ -n "${TUNER_PID:-}" ] && kill -9 "$TUNER_PID" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
summary() { echo "$PASS passed, $FAIL failed, $SKIP skipped"; [ "$FAIL" = 0 ]; exit $?; }

# a device for OpenCL (PoCL in CI); without one there is nothing to tune
if ! "$BIN/tinyinfer-run" "$MODEL" --backend opencl >"$W/probe.log" 2>&1; then
    echo "SKIP no OpenCL device: $(tail -n 1 "$W/probe.log")"
    SKIP=1
    summary
fi

# start_server PORT LOG [ARGS]: a server in the background; sets SERVER_PID and PORT_USED
start_server() {
    local port=$1 log=$2
    shift 2
    "$BIN/tinyinfer-rpc" serve --listen "127.0.0.1:$port" --cache "$W/models" --fake-timing "$@" \
        >"$log.out" 2>>"$log" &
    SERVER_PID=$!
    local i
    for i in $(seq 100); do
        PORT_USED=$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$log.out" 2>/dev/null)
        [ -n "$PORT_USED" ] && return 0
        sleep 0.1
    done
    echo "server did not start: $(tail -n 5 "$log")"
    return 1
}
kill_server() { # SIGKILL the server and the child serving the session (stopped first: no new child)
    kill -STOP "$SERVER_PID" 2>/dev/null
    pkill -9 -P "$SERVER_PID" 2>/dev/null
    kill -9 "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=
}
results() { if [ -f "$1" ]; then grep -c '^R ' "$1"; else echo 0; fi; }
# every trial 0..N-1 has exactly one result line
results_once() {
    local j=$1 n
    n=$(sed -n 's/.* trials=\([0-9]*\) .*/\1/p' "$j" | head -n 1)
    [ -n "$n" ] && [ "$(grep '^R ' "$j" | awk '{print $2}' | sort -n | uniq -d | wc -l)" = 0 ] &&
        [ "$(grep '^R ' "$j" | awk '{print $2}' | sort -n | uniq | wc -l)" = "$n" ]
}
wait_results() { # wait_results JOURNAL COUNT: until COUNT results are in (60 s at most)
    local i
    for i in $(seq 600); do
        [ "$(results "$1")" -ge "$2" ] && return 0
        kill -0 "$TUNER_PID" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
TUNE=("$BIN/tinyinfer-tune" "$MODEL" --backend opencl --seed 5 --repeat 3000 --warmup 1 --quiet)

# 1. local: a child server on stdio; the file loads and the outputs stay the CPU's
"${TUNE[@]}" --out "$W/local.tuning" >"$W/local.log" 2>&1
check "local tuning run exits 0 ($(tail -n 3 "$W/local.log"))" [ $? = 0 ]
check "local tuning file starts with its header" grep -q '^tinyinfer-tuning 1$' "$W/local.tuning"
"$BIN/tinyinfer-run" "$MODEL" --backend opencl --tuning "$W/local.tuning" --save-outputs "$W/out_tuned" >/dev/null 2>&1
check "tinyinfer-run loads the tuning file" [ $? = 0 ]

# 2. the reference: an uninterrupted run against a --fake-timing server
start_server 0 "$W/ref.log" || { bad "server start"; summary; }
PORT=$PORT_USED
"${TUNE[@]}" --remote "127.0.0.1:$PORT" --out "$W/ref.tuning" >"$W/ref.out" 2>&1
check "uninterrupted tuning exits 0 ($(tail -n 2 "$W/ref.out"))" [ $? = 0 ]
check "uninterrupted journal: each trial once" results_once "$W/ref.tuning.journal"
check "the reference moved some nodes off their default" grep -q '^node ' "$W/ref.tuning"
TRIALS=$(sed -n 's/.* trials=\([0-9]*\) .*/\1/p' "$W/ref.tuning.journal" | head -n 1)
check "enough trials to interrupt ($TRIALS)" [ "${TRIALS:-0}" -ge 6 ]

# 3. SIGKILL the server twice mid-run, restart it on the same port each time
"${TUNE[@]}" --remote "127.0.0.1:$PORT" --out "$W/killed.tuning" --reconnect-limit 60 --timeout 10 \
    >"$W/killed.out" 2>&1 &
TUNER_PID=$!
J=$W/killed.tuning.journal
want=2
for round in 1 2; do
    if wait_results "$J" "$want"; then
        want=$(($(results "$J") + 2))
        kill_server
        sleep 0.5
        start_server "$PORT" "$W/ref.log" || bad "server restart $round"
    else
        bad "server kill $round: the tuner made no progress ($(tail -n 3 "$W/killed.out"))"
    fi
done
wait "$TUNER_PID"
rc=$?
TUNER_PID=
check "tuner survives two server kills ($(tail -n 3 "$W/killed.out"))" [ $rc = 0 ]
check "it reconnected (twice)" grep -q ' [2-9] reconnects' "$W/killed.out"
check "journal after kills: every trial's result exactly once" results_once "$J"
check "tuning file after kills == uninterrupted one" cmp -s "$W/killed.tuning" "$W/ref.tuning"

# 4. SIGKILL the tuner mid-run, rerun it: resumes, nothing finished runs again
"${TUNE[@]}" --remote "127.0.0.1:$PORT" --out "$W/resumed.tuning" >"$W/resumed1.out" 2>&1 &
TUNER_PID=$!
J=$W/resumed.tuning.journal
if wait_results "$J" 3; then kill -9 "$TUNER_PID"; fi
wait "$TUNER_PID" 2>/dev/null
TUNER_PID=
before=$(results "$J")
begins_before=$(grep -c '^B ' "$J")
check "the tuner was killed before finishing ($before of $TRIALS)" [ "$before" -lt "$TRIALS" ]
"${TUNE[@]}" --remote "127.0.0.1:$PORT" --out "$W/resumed.tuning" >"$W/resumed2.out" 2>&1
check "rerun after the kill exits 0" [ $? = 0 ]
check "rerun says how many trials it found ($before)" grep -q ": $before of $TRIALS trials done before" "$W/resumed2.out"
begins_after=$(grep -c '^B ' "$J")
# the rerun launches only the trials without a result (the cut one included): 0 lost
check "rerun launched exactly the $((TRIALS - before)) unfinished trials" \
    [ $((begins_after - begins_before)) = $((TRIALS - before)) ]
check "journal after the tuner's kill: every trial once" results_once "$J"
check "tuning file after resuming == uninterrupted one" cmp -s "$W/resumed.tuning" "$W/ref.tuning"

# 5. damaged lines are skipped; a finished journal reruns nothing
cp "$W/ref.tuning.journal" "$W/damaged.journal"
printf 'R 1 ok 1.0 2.0 #00000000\ngarbage without checksum\nR 2 ok 3.0' >>"$W/damaged.journal"
sed -i '3s/ok /ok 9/' "$W/damaged.journal" # breaks one real line's checksum: that trial reruns
"${TUNE[@]}" --remote "127.0.0.1:$PORT" --out "$W/damaged.tuning" --journal "$W/damaged.journal" \
    >"$W/damaged.out" 2>&1
check "damaged journal: the run finishes ($(tail -n 2 "$W/damaged.out"))" [ $? = 0 ]
check "damaged journal: 4 damaged lines reported" grep -q '4 damaged line(s) skipped' "$W/damaged.out"
check "damaged journal: same tuning" cmp -s "$W/damaged.tuning" "$W/ref.tuning"
check "damaged journal: every trial once among the good lines" \
    [ "$(grep -c '^R .* #' "$W/damaged.journal")" -ge "$TRIALS" ]

# 6. a journal from another seed (another plan of trials) is refused, untouched
cp "$W/ref.tuning.journal" "$W/other.journal"
"$BIN/tinyinfer-tune" "$MODEL" --backend opencl --seed 6 --repeat 3 --quiet --remote "127.0.0.1:$PORT" \
    --out "$W/other.tuning" --journal "$W/other.journal" >"$W/other.out" 2>&1
check "another seed's journal is refused" [ $? = 1 ]
check "  ... saying why" grep -q 'written for another model, device, plan or seed' "$W/other.out"
check "  ... and left as it was" cmp -s "$W/other.journal" "$W/ref.tuning.journal"

# 7. a trial that was cut twice is recorded as crashed and never launched again
(sed -n '1p' "$W/ref.tuning.journal"; grep -m 2 '^B 0 ' "$W/ref.tuning.journal" | head -n 1;
    grep -m 1 '^B 0 ' "$W/ref.tuning.journal") >"$W/crash.journal"
"${TUNE[@]}" --remote "127.0.0.1:$PORT" --out "$W/crash.tuning" --journal "$W/crash.journal" >"$W/crash.out" 2>&1
check "crashed trial: the run finishes" [ $? = 0 ]
check "crashed trial: recorded as crashed" grep -q '^R 0 invalid crashed-twice' "$W/crash.journal"
check "crashed trial: never launched again (2 begins)" [ "$(grep -c '^B 0 ' "$W/crash.journal")" = 2 ]
check "crashed trial: reported" grep -q ' 1 crashed' "$W/crash.out"

# 7b. a candidate that crashes the session: recorded from the server's crash record after
#     one launch. The setting is one the reference chose, so the result must change.
SETTING=$(sed -n 's/^node [^ ]* //p' "$W/ref.tuning" | head -n 1 | awk '{print $NF}')
kill_server
start_server 0 "$W/crashsrv.log" --crash-on "$SETTING" || bad "server start (crash)"
CPORT=$PORT_USED
CPID=$SERVER_PID
"${TUNE[@]}" --remote "127.0.0.1:$CPORT" --out "$W/segv.tuning" --journal "$W/segv.journal" >"$W/segv.out" 2>&1
check "crashing candidate ($SETTING): the run finishes ($(tail -n 2 "$W/segv.out"))" [ $? = 0 ]
CRASHED=$(sed -n 's/^R \([0-9]*\) invalid crashed signal 11 .*/\1/p' "$W/segv.journal")
echo "crash test: --crash-on '$SETTING' crashed trial(s): $(echo $CRASHED)"
check "crashing candidate: recorded as crashed by signal 11 (trials: ${CRASHED:-none})" [ -n "$CRASHED" ]
once=1
for k in $CRASHED; do [ "$(grep -c "^B $k " "$W/segv.journal")" = 1 ] || once=0; done
check "crashing candidate: each crashed trial launched exactly once" [ $once = 1 ]
check "crashing candidate: no trial cut twice" [ "$(grep -c 'crashed-twice' "$W/segv.journal")" = 0 ]
check "crashing candidate: the journal holds every trial once" results_once "$W/segv.journal"
check "crashing candidate: the server's parent kept serving" kill -0 "$CPID"
check "crashing candidate: the server logged the session's signal" grep -q 'ended by signal 11' "$W/crashsrv.log"
check "crashing candidate: the crash record names signal 11" grep -q ' 11$' "$W/models/crashes.log"
check "crashing candidate: not in the tuning file" bash -c "! grep -q -- ' $SETTING\$' '$W/segv.tuning'"
check "crashing candidate: reported" grep -q " $(echo "$CRASHED" | wc -w) crashed" "$W/segv.out"
B0=$(grep -c '^B ' "$W/segv.journal")
"${TUNE[@]}" --remote "127.0.0.1:$CPORT" --out "$W/segv2.tuning" --journal "$W/segv.journal" >"$W/segv2.out" 2>&1
check "crashing candidate: a rerun launches nothing again" [ "$(grep -c '^B ' "$W/segv.journal")" = "$B0" ]
kill_server
# the same with the tuner's local child server on stdio: the child dies, a new one answers
"${TUNE[@]}" --server-cmd "'$BIN/tinyinfer-rpc' serve --stdio --cache '$W/local-crash' --fake-timing --crash-on $SETTING" \
    --out "$W/segvl.tuning" --journal "$W/segvl.journal" >"$W/segvl.out" 2>&1
check "crashing candidate, local child: the run finishes ($(tail -n 2 "$W/segvl.out"))" [ $? = 0 ]
check "crashing candidate, local child: same crashed trials" \
    [ "$(sed -n 's/^R \([0-9]*\) invalid crashed signal 11 .*/\1/p' "$W/segvl.journal")" = "$CRASHED" ]
check "crashing candidate, local child: same tuning file" cmp -s "$W/segvl.tuning" "$W/segv.tuning"

# 8. reverse dial: the tuner listens, the server dials in (`serve --connect`), as a phone
#    behind NAT would; same file as over a direct connection
RPORT=$((20000 + RANDOM % 20000))
"${TUNE[@]}" --listen "127.0.0.1:$RPORT" --out "$W/reverse.tuning" --reconnect-limit 60 >"$W/reverse.out" 2>&1 &
TUNER_PID=$!
"$BIN/tinyinfer-rpc" serve --connect "127.0.0.1:$RPORT" --cache "$W/models" --fake-timing 2>"$W/reverse.log" &
SERVER_PID=$!
wait "$TUNER_PID"
rc=$?
TUNER_PID=
kill_server
check "reverse dial: tuning completes ($(tail -n 2 "$W/reverse.out"))" [ $rc = 0 ]
check "reverse dial: same tuning file" cmp -s "$W/reverse.tuning" "$W/ref.tuning"

# 9. on a terminal, a progress bar with the trials done and an ETA (script(1) gives a tty)
if command -v script >/dev/null 2>&1; then
    start_server 0 "$W/tty.log" || bad "server start (tty)"
    script -qec "$(printf '%q ' "${TUNE[@]/--quiet/--repeat}" 100) --remote 127.0.0.1:$PORT_USED --out $W/tty.tuning" \
        "$W/tty.typescript" >/dev/null 2>&1
    check "tty: the run finishes" test -s "$W/tty.tuning"
    check "tty: a progress bar with an ETA" grep -q "\] $TRIALS/$TRIALS trials  ETA" "$W/tty.typescript"
    kill_server
else
    echo "SKIP progress bar: no script(1)"
    SKIP=$((SKIP + 1))
fi
summary
