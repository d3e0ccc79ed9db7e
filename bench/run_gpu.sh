#!/usr/bin/env bash
# The OpenCL benchmark on a GPU machine (the H100 of the device tool): builds the tools,
# runs the OpenCL backend tests on the NVIDIA device, exports the torchvision models and
# times torch (eager, CUDA graph) and tinyinfer (cold, warm, steady) in one run.
# Usage: bench/run_gpu.sh OUTDIR   (writes OUTDIR/gpu.md and the logs)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
mkdir -p "$out" build/gpu
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libnvidia-opencl.so.1}
dev=${TINYINFER_OPENCL_DEVICE:-NVIDIA}
export TINYINFER_OPENCL_DEVICE=$dev
{
    echo "# OpenCL on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
    echo
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); commit: $(git rev-parse --short HEAD 2>/dev/null)"
    echo
} >"$out/gpu.md"
CC=${CC:-gcc}
$CC -O2 -std=c99 -I. -Itests/harness tests/cl/test_cl_backend.c -o build/gpu/test_cl_backend -lm -pthread -ldl
$CC -O2 -std=c99 -I. bench/cl_bench.c -o build/gpu/cl_bench -lm -pthread -ldl
mkdir -p build/test/cl
echo "## OpenCL backend tests on '$dev'" >>"$out/gpu.md"
echo '```' >>"$out/gpu.md"
build/gpu/test_cl_backend 2>&1 | tail -n 15 >>"$out/gpu.md"
echo '```' >>"$out/gpu.md"
python3 bench/gpu_torch.py build/gpu >"$out/torch.md" 2>"$out/torch.err"
echo "## torch (CUDA, fp32, TF32 off), batch 1, upload + download included (ms)" >>"$out/gpu.md"
cat "$out/torch.md" >>"$out/gpu.md"
echo >>"$out/gpu.md"
echo "## tinyinfer OpenCL (ms; steady = ti_session_run with upload + readback)" >>"$out/gpu.md"
build/gpu/cl_bench --runs 50 build/gpu/mobilenet_v2.onnx build/gpu/resnet18.onnx \
    build/gpu/resnet50.onnx build/gpu/squeezenet1_1.onnx build/gpu/efficientnet_b0.onnx \
    >>"$out/gpu.md" 2>&1
cat "$out/gpu.md"
