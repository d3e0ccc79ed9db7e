#!/usr/bin/env bash
# Tuning on a GPU machine (the H100 of the device tool; issue #7 must-show d): builds
# tinyinfer-rpc, tinyinfer-tune and cl_bench, exports torchvision's mobilenet_v2 (and any
# models named after OUTDIR), tunes each one's OpenCL work-group sizes and conv variants on
# the NVIDIA device (the tuner drives a local `tinyinfer-rpc serve --stdio` child), then
# times the steady latency untuned and tuned in alternating rounds of cl_bench.
# Usage: bench/tune_gpu.sh OUTDIR [MODEL...]   (writes OUTDIR/tune.md and the logs)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
shift || true
models=("$@")
[ ${#models[@]} = 0 ] && models=(mobilenet_v2)
mkdir -p "$out" build/gpu
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libnvidia-opencl.so.1}
export TINYINFER_OPENCL_DEVICE=${TINYINFER_OPENCL_DEVICE:-NVIDIA}
export TINYINFER_OPENCL_CACHE=$PWD/build/gpu/clcache
CC=${CC:-gcc}
for t in tinyinfer-rpc tinyinfer-tune; do
    $CC -O2 -std=c99 -I. -Itests/harness "tools/$t.c" -o "build/gpu/$t" -lm -pthread -ldl || exit 1
done
$CC -O2 -std=c99 -I. bench/cl_bench.c -o build/gpu/cl_bench -lm -pthread -ldl || exit 1
python3 bench/gpu_torch.py --export-only build/gpu "${models[@]}" >/dev/null 2>"$out/export.err" || {
    cat "$out/export.err"
    exit 1
}
md=$out/tune.md
{
    echo "# tinyinfer-tune on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
    echo
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ); commit: $(git rev-parse --short HEAD 2>/dev/null); device selector: $TINYINFER_OPENCL_DEVICE"
    echo
} >"$md"
for m in "${models[@]}"; do
    f=build/gpu/$m.onnx
    rm -f "$out/$m.tuning" "$out/$m.tuning.journal"
    t0=$SECONDS
    build/gpu/tinyinfer-tune "$f" --backend opencl --device "$TINYINFER_OPENCL_DEVICE" --repeat 30 \
        --warmup 5 --out "$out/$m.tuning" >"$out/$m.tune.log" 2>"$out/$m.tune.err"
    rc=$?
    {
        echo "## $m"
        echo
        echo "tinyinfer-tune exit $rc in $((SECONDS - t0)) s:"
        echo '```'
        grep -v 'serve\[' "$out/$m.tune.log" | tail -n 6
        echo '```'
        echo "cl_bench --runs 200 (ms), rounds alternating untuned / tuned (TINYINFER_TUNING_FILE):"
        echo
        echo "| run | model | device | GPU nodes | cold create+run | warm create+run | steady median | steady p90 | CPU backend median | max rel err vs CPU |"
        echo "|---|---|---|---|---|---|---|---|---|---|"
    } >>"$md"
    for round in 1 2 3; do
        printf '| untuned %d ' "$round" >>"$md"
        build/gpu/cl_bench --runs 200 "$f" 2>&1 | grep -m1 "^| $m.onnx |" >>"$md"
        printf '| tuned %d ' "$round" >>"$md"
        TINYINFER_TUNING_FILE=$out/$m.tuning build/gpu/cl_bench --runs 200 "$f" 2>&1 |
            grep -m1 "^| $m.onnx |" >>"$md"
    done
    echo >>"$md"
done
cat "$md"
