#!/usr/bin/env bash
# Alternating rounds for the int8 TFLite MobileNets (bench/results/qint8-*.md): per round,
# per thread count and model, each given ti_bench build (e.g. main's and this branch's) and
# LiteRT (bench/peers.py's worker, XNNPACK) run once each in their own process, in turn;
# prints one line per process: build threads model median_ms [cpu_median_ms] (ti_bench's
# wall-clock median and, for tinyinfer, the calling thread's CPU time). On a shared machine
# the median over rounds is the number to read. Inputs: the Coral "cat" inputs as .npy (the
# cache's coral tests, input_0.pb).
# Usage: bench/qint8_rounds.sh ROUNDS INPUT_DIR BENCH1 [BENCH2 ...]
# Env: THREADS (default "1 2"), WARMUP (5), RUNS (30), LITERT=0 to leave LiteRT out.
set -u
rounds=$1 inputs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
coral=$here/../../shared/models/coral
for r in $(seq "$rounds"); do
    for t in ${THREADS:-1 2}; do
        for m in mobilenet_v2_1.0_224_quant tf2_mobilenet_v2_1.0_224_ptq; do
            for b in "$@"; do
                ms=$("$b" "$coral/$m.tflite" --input "$inputs/${m}_cat.npy" --threads "$t" \
                    --warmup "${WARMUP:-5}" --runs "${RUNS:-30}" |
                    sed 's/.*"median_ms":\([0-9.]*\).*"cpu_median_ms":\([0-9.]*\).*/\1 \2/')
                echo "$(basename "$b") $t $m $ms"
            done
            if [ "${LITERT:-1}" = 1 ]; then
                ms=$(python3 "$here/peers.py" --worker litert "$coral/$m.tflite" \
                    "$inputs/${m}_cat.npy" "$t" "${WARMUP:-5}" "${RUNS:-30}" - |
                    sed 's/.*"median_ms": *\([0-9.]*\).*/\1/')
                echo "litert $t $m $ms"
            fi
        done
    done
done
