#!/usr/bin/env bash
# test_tools.sh BUILD_DIR: checks the output of BUILD_DIR/tinyinfer-info and
# BUILD_DIR/tinyinfer-run on tests/data/light_squeezenet.onnx (facts about the model, errors
# for a missing file, .npy input). Needs only bash and coreutils (the .npy files are written
# with printf). Prints a FAIL line per failed check and "N passed, N failed" last; exits 1
# when anything failed, 2 on a usage error.
set -u
[ $# = 1 ] && [ -d "$1" ] || { echo "usage: $0 BUILD_DIR (holding tinyinfer-info, tinyinfer-run)" >&2; exit 2; }
BIN=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
MODEL=tests/data/light_squeezenet.onnx
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }
# has NAME FILE PATTERN: FILE has a line matching the extended regex PATTERN
has() { if grep -qE -- "$3" "$2"; then ok; else bad "$1: no line matching '$3' in:"; sed 's/^/    | /' "$2"; fi; }
# rc NAME WANT GOT: exit code check; WANT "nonzero" accepts any failure
rc() {
    if [ "$2" = nonzero ] && [ "$3" != 0 ]; then ok
    elif [ "$2" = "$3" ]; then ok
    else bad "$1: exit code $3, expected $2"; fi
}

# writes a .npy v1 file: npy OUT DESCR SHAPE-TEXT ELEMENT-BYTES(printf escapes) COUNT
npy() {
    local h="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
    while [ $(((10 + ${#h} + 1) % 64)) != 0 ]; do h="$h "; done
    local n=$((${#h} + 1))
    {
        printf '\x93NUMPY\x01\x00'
        printf "\\x$(printf %02x $((n & 255)))\\x$(printf %02x $((n >> 8)))"
        printf '%s\n' "$h"
        local chunk="" i
        for ((i = 0; i < 1024; i++)); do chunk="$chunk$4"; done
        for ((i = 0; i < $5 / 1024; i++)); do printf "$chunk"; done
        for ((i = 0; i < $5 % 1024; i++)); do printf "$4"; done
    } >"$1"
}

# ---- tinyinfer-info ----
"$BIN/tinyinfer-info" "$MODEL" --nodes >"$TMP/info.out" 2>"$TMP/info.err"
rc "info: exit code" 0 $?
has "info: format" "$TMP/info.out" '^format: ONNX, opset 9$'
has "info: input" "$TMP/info.out" "^  input  0 'data_0' float32 \[1, 3, 224, 224\]$"
has "info: output" "$TMP/info.out" "^  output 0 'softmaxout_1' float32 \[1, 1000, 1, 1\]$"
has "info: node count" "$TMP/info.out" '^nodes: 105 \(8 op types\)$'
has "info: Conv count" "$TMP/info.out" '^ +26  Conv$'
has "info: parameters" "$TMP/info.out" '^parameters: 796$'
has "info: session" "$TMP/info.out" '^session \(1 thread, symbolic dims = 1\): [0-9]+ nodes after [0-9]+ folded and [0-9]+ fused, arena [0-9,]+ bytes'
# 349,151,936 = sum over the 26 Conv nodes of N*M*Ho*Wo * (C/group)*kh*kw, computed once
# with python3: onnx.shape_inference.infer_shapes(onnx.load(MODEL)) for the shapes, the
# kernel_shape and group attributes; it is SqueezeNet 1.1's known ~0.35 GMACs.
has "info: MACs total" "$TMP/info.out" '^MACs: 349,151,936$'
has "info: MACs of Conv" "$TMP/info.out" '^ +349,151,936  Conv$'
# first Conv: 64 x 111 x 111 outputs, 3 x 3 x 3 weights each = 21,290,688
# the stem conv, with its MaxPool fused in where the ISA has the few-channel kernel: the
# pool's output, the conv's MACs
has "info: --nodes row" "$TMP/info.out" '^ +0  Conv +(Relu +\[1, 64, 111, 111\]|Relu\+MaxPool \[1, 64, 55, 55\]) +21,290,688 '

"$BIN/tinyinfer-info" "$TMP/missing.onnx" >"$TMP/miss.out" 2>"$TMP/miss.err"
rc "info: missing file" nonzero $?
has "info: missing file message" "$TMP/miss.err" "missing\.onnx"

# ---- tinyinfer-run ----
"$BIN/tinyinfer-run" "$MODEL" --threads 2 --repeat 3 >"$TMP/run.out" 2>"$TMP/run.err"
rc "run: exit code" 0 $?
has "run: declared input" "$TMP/run.out" "^  input  0 'data_0' float32 \[1, 3, 224, 224\]$"
has "run: random input" "$TMP/run.out" "^  input  0 'data_0' float32 \[1, 3, 224, 224\]: random \(seed 1\)$"
has "run: threads" "$TMP/run.out" '^session: 2 threads, [0-9]+ nodes'
has "run: load time" "$TMP/run.out" '^model: .*, loaded in [0-9]+\.[0-9] ms$'
has "run: creation time" "$TMP/run.out" '^session: 2 threads, .*, created in [0-9]+\.[0-9] ms'
has "run: output" "$TMP/run.out" "^  'softmaxout_1' float32 \[1, 1000, 1, 1\] min [-0-9.e]+ max [-0-9.e]+ mean 0\.001"
has "run: timing" "$TMP/run.out" '^time: median [0-9.]+ ms over 3 runs'

"$BIN/tinyinfer-run" "$TMP/missing.onnx" >"$TMP/miss.out" 2>"$TMP/miss.err"
rc "run: missing file" nonzero $?
has "run: missing file message" "$TMP/miss.err" "missing\.onnx"

# .npy inputs: float32 ones, and float64 ones (converted to the float32 input)
npy "$TMP/ones.npy" '<f4' '(1, 3, 224, 224)' '\x00\x00\x80\x3f' 150528
"$BIN/tinyinfer-run" "$MODEL" --input "$TMP/ones.npy" --save-outputs "$TMP/out" >"$TMP/npy.out" 2>"$TMP/npy.err"
rc "run --input f4.npy: exit code" 0 $?
has "run --input f4.npy: fed" "$TMP/npy.out" "^  input  0 'data_0' float32 \[1, 3, 224, 224\]: $TMP/ones.npy$"
has "run --input f4.npy: output" "$TMP/npy.out" "^  'softmaxout_1' float32 \[1, 1000, 1, 1\] min"
# saved: a .npy v1 header, then 1000 floats
if [ -f "$TMP/out/softmaxout_1.npy" ] && [ "$(head -c 6 "$TMP/out/softmaxout_1.npy" | od -An -c | tr -d ' ')" = '223NUMPY' ] &&
    [ "$(stat -c %s "$TMP/out/softmaxout_1.npy")" = $((128 + 4000)) ]; then ok; else
    bad "run --save-outputs: $TMP/out/softmaxout_1.npy missing or not 128 + 4000 bytes of .npy"; fi

npy "$TMP/ones64.npy" '<f8' '(1, 3, 224, 224)' '\x00\x00\x00\x00\x00\x00\xf0\x3f' 150528
"$BIN/tinyinfer-run" "$MODEL" --input "$TMP/ones64.npy" >"$TMP/npy64.out" 2>"$TMP/npy64.err"
rc "run --input f8.npy: exit code" 0 $?
has "run --input f8.npy: converted" "$TMP/npy64.out" "^  input  0 'data_0' float32 \[1, 3, 224, 224\]: $TMP/ones64.npy \(converted from float64\)$"

npy "$TMP/short.npy" '<f4' '(1, 3, 2, 2)' '\x00\x00\x80\x3f' 12
"$BIN/tinyinfer-run" "$MODEL" --input "$TMP/short.npy" >"$TMP/short.out" 2>"$TMP/short.err"
rc "run --input wrong shape: exit code" 1 $?
[ -s "$TMP/short.err" ] && ok || bad "run --input wrong shape: no message on stderr"

# --profile: a line per node (40 after fusion; 39 where the stem's MaxPool fuses into its
# conv: an ISA with the few-channel kernel), the op-type summary led by Conv, the run's
# total; --trace: a Chrome trace with one complete event per node
"$BIN/tinyinfer-run" "$MODEL" --backend cpu --profile --trace "$TMP/trace.json" >"$TMP/prof.out" 2>"$TMP/prof.err"
rc "run --profile: exit code" 0 $?
has "run --profile: header" "$TMP/prof.out" '^profile of the last run \(CPU wall times\):$'
has "run --profile: first node" "$TMP/prof.out" '^ +0 cpu +Conv +[0-9.]+ +[0-9.]+% +0  n0$'
nodes=$(sed -n 's/^session: [0-9]* threads, \([0-9]*\) nodes .*/\1/p' "$TMP/prof.out")
case "$nodes" in 39|40) ok ;; *) bad "run --profile: session of '$nodes' nodes, not 39 or 40" ;; esac
[ "$(grep -cE '^ +[0-9]+ cpu ' "$TMP/prof.out")" = "$nodes" ] && ok || bad "run --profile: not $nodes node lines"
has "run --profile: by op type" "$TMP/prof.out" '^    Conv +26 nodes +[0-9.]+ ms'
has "run --profile: total" "$TMP/prof.out" '^  run [0-9.]+ ms: nodes [0-9.]+ ms$'
has "run --trace: written" "$TMP/prof.out" "^trace: $TMP/trace.json$"
[ "$(grep -o '"ph":"X"' "$TMP/trace.json" | wc -l)" = "$nodes" ] && ok || bad "run --trace: not $nodes events in $TMP/trace.json"

# ---- tinyinfer-run --check-precision (the CPU against itself: every row exact) ----
"$BIN/tinyinfer-run" "$MODEL" --backend cpu --check-precision >"$TMP/prec.out" 2>"$TMP/prec.err"
rc "run --check-precision: exit code" 0 $?
has "run --check-precision: header" "$TMP/prec.out" '^precision check \(this backend vs the CPU in fp32, same inputs\):$'
has "run --check-precision: the output" "$TMP/prec.out" "^  output softmaxout_1 +max \|diff\| 0, / max \|cpu\| 0 \(1000 values\)$"
[ "$(grep -c '^  node ' "$TMP/prec.out")" = 10 ] && ok || bad "run --check-precision: not 10 node rows"
grep '^  node ' "$TMP/prec.out" | grep -qv 'max |diff| 0, / max |cpu| 0$' && bad "run --check-precision: a nonzero row" || ok

# ---- tinyinfer-run --precision fp16 (where an OpenCL device can be used: PoCL in CI) ----
"$BIN/tinyinfer-run" "$MODEL" --precision fp8 >"$TMP/p8.out" 2>"$TMP/p8.err"
[ $? != 0 ] && ok || bad "run --precision fp8: accepted"
has "run --precision fp8: message" "$TMP/p8.err" "--precision wants fp32 or fp16, not 'fp8'"
M16=tests/data/conv2d_padding.onnx
if "$BIN/tinyinfer-run" "$M16" --backend opencl >"$TMP/cl32.out" 2>&1; then
    has "run --backend opencl: fp32 storage" "$TMP/cl32.out" '; tensors stored in fp32$'
    "$BIN/tinyinfer-run" "$M16" --backend opencl --precision fp16 --check-precision >"$TMP/p16.out" 2>"$TMP/p16.err"
    rc "run --precision fp16: exit code" 0 $?
    has "run --precision fp16: storage" "$TMP/p16.out" '; tensors stored in fp16 \((half arithmetic: cl_khr_fp16|computed in fp32: no cl_khr_fp16)\)$'
    # the check reports the real loss: not 0, below 1e-2 of the output's scale (about 4e-4)
    has "run --precision fp16: output row" "$TMP/p16.out" '^  output 3 +max \|diff\| [0-9.e-]+, / max \|cpu\| (0\.00[0-9]*[1-9][0-9]*|[1-9][0-9.]*e-0[45]) \([0-9]+ values\)$'
else
    echo "  (no OpenCL device: --precision fp16 not run)"
fi

echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
