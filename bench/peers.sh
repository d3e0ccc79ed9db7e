#!/usr/bin/env bash
# CPU peer benchmark of issue #6: builds build/ti_bench (bench/ti_bench.c) and
# build/bench_sgemm (bench/sgemm.c) from the committed tinyinfer.h, makes the architecture
# models when the cache lacks them (tests/models/gen_arch_models.py, the same cache and stamp
# as tests/models/run.sh), then runs bench/peers.py, which installs the peers from PyPI,
# converts the models, times everything and writes bench/results/cpu-<date>.md.
# Usage: bench/peers.sh [peers.py options: --threads 1,2 --rounds 2 --runs 50 --models a,b
#        --no-install --out FILE]; also ./build.sh bench peers [options].
# Env: CC (default gcc), PYTHON (default python3), TINYINFER_CACHE (default ~/.cache/tinyinfer).
set -euo pipefail
cd "$(dirname "$0")/.."

CC=${CC:-gcc}
PY=${PYTHON:-python3}
CACHE=${TINYINFER_CACHE:-$HOME/.cache/tinyinfer}
FLAGS=(-O2 -g -std=c99 -pedantic -Wall -Wextra -I. -Itests/harness)

mkdir -p build
echo "peers: cc bench/ti_bench.c -> build/ti_bench"
"$CC" "${FLAGS[@]}" bench/ti_bench.c -o build/ti_bench -lm -pthread
echo "peers: cc bench/sgemm.c -> build/bench_sgemm"
"$CC" "${FLAGS[@]}" bench/sgemm.c -o build/bench_sgemm -lm -pthread

# the fp32 models: generated with seeded random weights, as tests/models/run.sh does
gen=tests/models/gen_arch_models.py
out=$CACHE/arch
want_stamp="gen_arch_models.py $(sha256sum "$gen" | cut -d' ' -f1) SEED=${SEED:-7}"
if [ "$(cat "$out/.stamp" 2>/dev/null || true)" != "$want_stamp" ]; then
    "$PY" -c "import numpy, onnx, onnxruntime" 2>/dev/null ||
        "$PY" -m pip install -q numpy onnx onnxruntime
    echo "peers: generating architecture models into $out"
    tmp="$out.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    "$PY" "$gen" "$tmp"
    echo "$want_stamp" >"$tmp/.stamp"
    rm -rf "$out"
    mv "$tmp" "$out"
fi

export TINYINFER_CACHE=$CACHE
export PEERS_COMMAND="bench/peers.sh${*:+ $*}"
exec "$PY" bench/peers.py --ti-bench build/ti_bench --sgemm build/bench_sgemm "$@"
