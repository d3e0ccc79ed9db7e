#!/usr/bin/env bash
# Real TFLite models (issue #4, must-show a): the Coral models and images in
# ../shared/models/coral. tests/models/gen_coral_refs.py stores each model's preprocessed
# input and ai-edge-litert's outputs in the cache; the conformance runner then checks
#   classifiers and the LSTM: outputs within 1 unit, top-1 identical (--check-argmax);
#   deeplabv3: the mask equals the reference on >= 99.5 % of the pixels, and (the _logits
#              test) the 21 class scores per pixel within 1 unit (--min-argmax-agree 0.995);
#   split_concat: outputs within 1 unit on random input.
# Usage: tests/models/coral.sh path/to/onnx_runner
# Env: TINYINFER_CACHE (default ~/.cache/tinyinfer; data goes to $TINYINFER_CACHE/coral),
#      CORAL_DIR (default ../shared/models/coral beside the repository), PYTHON (python3).
# Without the coral directory, or without python3 + numpy + pillow + onnx + ai-edge-litert
# when the data must be made, it prints SKIP and exits 0. The data is remade when the
# generator or the coral files change.
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

coral=${CORAL_DIR:-$here/../../../shared/models/coral}
if [ ! -d "$coral" ]; then
    echo "SKIP: no coral models ($coral is missing)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
coral=$(cd "$coral" && pwd)
cache=${TINYINFER_CACHE:-$HOME/.cache/tinyinfer}
out=$cache/coral
py=${PYTHON:-python3}
gen=$here/gen_coral_refs.py

# The stamp ties the cached data to the generator's text and the coral files (names, sizes).
want_stamp="gen_coral_refs.py $(sha256sum "$gen" | cut -d' ' -f1) $coral $(
    cd "$coral" && ls -l -- *.tflite *.bmp 2>/dev/null | awk '{ print $5, $NF }' | sha256sum | cut -d' ' -f1)"
have_stamp=$(cat "$out/.stamp" 2>/dev/null || true)

if [ "$have_stamp" != "$want_stamp" ]; then
    if ! "$py" -c "import numpy, PIL, onnx, ai_edge_litert" >/dev/null 2>&1; then
        echo "SKIP: python3 with numpy, pillow, onnx and ai-edge-litert is not available"
        echo "0 passed, 0 failed, 1 skipped"
        exit 0
    fi
    echo "generating coral reference data into $out"
    tmp="$out.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp" || exit 1
    if ! "$py" "$gen" "$tmp" --coral "$coral"; then
        rm -rf "$tmp"
        echo "FAIL: gen_coral_refs.py failed" >&2
        exit 1
    fi
    echo "$want_stamp" >"$tmp/.stamp"
    rm -rf "$out"
    mv "$tmp" "$out" || exit 1
fi

classify=() segment=() plain=()
for d in "$out"/*/; do
    d=${d%/}
    case $(basename "$d") in
    deeplab*) segment+=("$d") ;;
    split_concat*) plain+=("$d") ;;
    *) classify+=("$d") ;;
    esac
done
for d in "$out"/*/; do
    [ -f "$d/top.txt" ] && printf 'reference %-52s %s\n' "$(basename "$d")" "$(cat "$d/top.txt")"
done

# op names for the runner's coverage line (TFLite builtins, from the op test data)
ops=()
[ -f "$here/../conformance/tflite/ops.txt" ] && ops=(--ops "$here/../conformance/tflite/ops.txt")

rc=0
if [ ${#classify[@]} -gt 0 ]; then
    echo "== classifiers and LSTM: within 1 unit, top-1 identical =="
    "$runner" "${ops[@]}" --expect-pass --check-argmax "${classify[@]}" || rc=1
fi
if [ ${#segment[@]} -gt 0 ]; then
    echo "== deeplabv3: mask agreement >= 99.5 %, class scores within 1 unit =="
    "$runner" "${ops[@]}" --expect-pass --min-argmax-agree 0.995 "${segment[@]}" || rc=1
fi
if [ ${#plain[@]} -gt 0 ]; then
    echo "== split_concat: within 1 unit =="
    "$runner" "${ops[@]}" --expect-pass --verbose "${plain[@]}" || rc=1
fi
exit $rc
