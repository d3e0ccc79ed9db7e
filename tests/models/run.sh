#!/usr/bin/env bash
# Real-architecture model tests: generates six networks with seeded random weights and
# onnxruntime reference outputs (tests/models/gen_arch_models.py) into the cache, then runs
# the conformance runner on them at 1 and 2 threads with max |error| <= 1e-4 * max |reference|.
# Usage: tests/models/run.sh path/to/onnx_runner
# Env: TINYINFER_CACHE (default ~/.cache/tinyinfer; models go to $TINYINFER_CACHE/arch),
#      PYTHON (default python3). Models are regenerated when the generator changes.
# Without python3 + onnx + onnxruntime + numpy (and no cached models) it prints SKIP and exits 0.
set -u

here=$(cd "$(dirname "$0")" && pwd)
runner=${1:-}
if [ -z "$runner" ]; then
    echo "usage: $0 path/to/onnx_runner" >&2
    exit 2
fi
if [ ! -x "$runner" ]; then
    echo "FAIL: runner '$runner' not found or not executable (build it first)" >&2
    exit 2
fi

cache=${TINYINFER_CACHE:-$HOME/.cache/tinyinfer}
out=$cache/arch
py=${PYTHON:-python3}
gen=$here/gen_arch_models.py
names="mobilenet_v2 resnet18 squeezenet1_1 mobilenet_v3_small efficientnet_b0 tiny_transformer"

# The stamp ties the cached models to the generator's exact text.
want_stamp="gen_arch_models.py $(sha256sum "$gen" | cut -d' ' -f1) SEED=${SEED:-7}"
have_stamp=$(cat "$out/.stamp" 2>/dev/null || true)

if [ "$have_stamp" != "$want_stamp" ]; then
    if ! "$py" -c "import numpy, onnx, onnxruntime" >/dev/null 2>&1; then
        echo "SKIP: python3 with onnx/onnxruntime not available"
        echo "0 passed, 0 failed, 1 skipped"
        exit 0
    fi
    echo "generating architecture models into $out"
    tmp="$out.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp" || exit 1
    if ! "$py" "$gen" "$tmp"; then
        rm -rf "$tmp"
        echo "FAIL: gen_arch_models.py failed" >&2
        exit 1
    fi
    echo "$want_stamp" > "$tmp/.stamp"
    rm -rf "$out"
    mv "$tmp" "$out" || exit 1
fi

dirs=()
for n in $names; do
    dirs+=("$out/$n")
done

rc=0
for t in 1 2; do
    echo "== model tests, --threads $t --max-rel 1e-4 =="
    "$runner" --threads "$t" --max-rel 1e-4 "${dirs[@]}" || rc=1
done
exit $rc
