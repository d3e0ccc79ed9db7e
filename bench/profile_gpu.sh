#!/usr/bin/env bash
# Per-node profile of the OpenCL backend on a GPU machine (the H100 of the device tool):
# exports the torchvision models, then runs tinyinfer-run --profile on each (device kernel
# times from OpenCL events) and writes OUTDIR/profile-<model>.txt and a Chrome trace.
# Usage: bench/profile_gpu.sh OUTDIR [model ...]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
shift || true
models=${*:-mobilenet_v2 resnet18 resnet50 squeezenet1_1 efficientnet_b0}
mkdir -p "$out" build/gpu
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libnvidia-opencl.so.1}
export TINYINFER_OPENCL_DEVICE=${TINYINFER_OPENCL_DEVICE:-NVIDIA}
${CC:-gcc} -O2 -std=c99 -I. tools/tinyinfer-run.c -o build/gpu/tinyinfer-run -lm -pthread -ldl
for m in $models; do
    [ -f "build/gpu/$m.onnx" ] || python3 bench/gpu_torch.py --export-only build/gpu "$m"
    build/gpu/tinyinfer-run "build/gpu/$m.onnx" --backend opencl --profile --repeat 30 \
        --trace "$out/trace-$m.json" >"$out/profile-$m.txt" 2>&1
    grep -A12 'by op type' "$out/profile-$m.txt"
done
