#!/usr/bin/env bash
# The conv GEMM's block size on a GPU, model by model: every conv of the model at tile=16,
# at the default (32) and at tile=64 (tuning files made from `tinyinfer-run --placement`),
# timed with cl_bench in alternating rounds. Data for choosing the default per layer shape
# (issue #5); the per-node search is tinyinfer-tune's job.
# Usage: bench/tile_sweep.sh OUTDIR MODEL.onnx...   (run where bench/tune_gpu.sh runs)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tile_sweep.sh OUTDIR MODEL.onnx...}
shift
mkdir -p "$out" build/gpu
CC=${CC:-gcc}
$CC -O2 -std=c99 -I. bench/cl_bench.c -o build/gpu/cl_bench -lm -pthread -ldl || exit 1
$CC -O2 -std=c99 -I. -Itests/harness tools/tinyinfer-run.c -o build/gpu/tinyinfer-run -lm -pthread -ldl || exit 1
echo "| model | convs | tile | round 1 | round 2 | round 3 |"
echo "|---|---|---|---|---|---|"
for f in "$@"; do
    m=$(basename "$f" .onnx)
    build/gpu/tinyinfer-run "$f" --backend opencl --placement 2>/dev/null |
        awk '$2 == "opencl" && $3 == "Conv" { print $4 }' >"$out/$m.convs"
    n=$(wc -l <"$out/$m.convs")
    for t in 16 64; do
        { echo "tinyinfer-tuning 1"; sed "s/^/node /; s/\$/ conv=gemm tile=$t/" "$out/$m.convs"; } >"$out/$m.t$t.tuning"
    done
    declare -A row=()
    for round in 1 2 3; do
        for t in 32 16 64; do
            if [ $t = 32 ]; then tf=; else tf=$out/$m.t$t.tuning; fi
            ms=$(TINYINFER_TUNING_FILE=$tf build/gpu/cl_bench --runs 200 "$f" 2>&1 | grep -m1 "^| $m.onnx |" |
                awk -F"|" "{gsub(/ /, \"\", \$7); print \$7}")
            row[$t]="${row[$t]:-} | $ms"
        done
    done
    for t in 16 32 64; do echo "| $m | $n | $t${row[$t]} |"; done
    unset row
done
