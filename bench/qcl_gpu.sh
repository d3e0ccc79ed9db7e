#!/usr/bin/env bash
# TFLite's 8-bit models on an OpenCL GPU (the H100 of the device tool): the committed TFLite
# op tests and the Coral models with backend OpenCL, each output compared byte for byte with
# a CPU session (onnx_runner --same-as-cpu) and the 8-bit ops required on the device; then
# cl_bench's cold / warm / steady times of the Coral models beside the CPU backend's.
# Usage: bench/qcl_gpu.sh CORAL_MODELS_DIR CORAL_DATA_DIR
#   CORAL_MODELS_DIR: ../shared/models/coral; CORAL_DATA_DIR: $TINYINFER_CACHE/coral (made
#   by tests/models/coral.sh), its model.tflite links resolved (cp -rL).
# Env: OCL_ICD_FILENAMES (default libnvidia-opencl.so.1), TINYINFER_OPENCL_DEVICE (NVIDIA).
set -uo pipefail
cd "$(dirname "$0")/.."
models=$1 data=$2
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libnvidia-opencl.so.1}
export TINYINFER_OPENCL_DEVICE=${TINYINFER_OPENCL_DEVICE:-NVIDIA}
mkdir -p build/gpu
CC=${CC:-gcc}
$CC -O2 -I. tests/conformance/onnx_runner.c -o build/gpu/onnx_runner -lm -pthread -ldl || exit 1
$CC -O2 -std=c99 -I. bench/cl_bench.c -o build/gpu/cl_bench -lm -pthread -ldl || exit 1
q8=CONV_2D,DEPTHWISE_CONV_2D,ADD,AVERAGE_POOL_2D,MAX_POOL_2D,RESHAPE,SQUEEZE,EXPAND_DIMS
echo "## TFLite op tests on '$TINYINFER_OPENCL_DEVICE': outputs == the CPU's bytes"
build/gpu/onnx_runner --backend opencl --same-as-cpu tests/conformance/tflite | tail -n 1
echo "## the same, 8-bit tests, $q8 required on the device"
build/gpu/onnx_runner --backend opencl --same-as-cpu --filter int8 --device-ops "$q8" \
    tests/conformance/tflite | grep -v '^PASSED'
echo "## Coral classifiers: LiteRT's top-1, the CPU's bytes, $q8 on the device"
cls=() seg=()
for d in "$data"/*/; do
    case $d in *deeplab*) seg+=("${d%/}") ;; *split_concat* | *lstm*) ;; *) cls+=("${d%/}") ;; esac
done
build/gpu/onnx_runner --backend opencl --same-as-cpu --check-argmax --device-ops "$q8" -v "${cls[@]}" |
    cut -c1-160
build/gpu/onnx_runner --backend opencl --same-as-cpu --min-argmax-agree 0.995 --device-ops "$q8" \
    "${seg[@]}" | tail -n 1
echo "## cl_bench (ms; inputs zero: timing only, outputs are checked above)"
build/gpu/cl_bench --runs 200 "$models"/mobilenet_v2_1.0_224_quant.tflite \
    "$models"/tf2_mobilenet_v2_1.0_224_ptq.tflite "$models"/mobilenet_v1_0.25_128_quant.tflite \
    "$models"/deeplabv3_mnv2_pascal_quant.tflite 2>&1
