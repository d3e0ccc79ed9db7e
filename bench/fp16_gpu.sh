#!/usr/bin/env bash
# fp32 against fp16 storage on the OpenCL GPU (the H100 of the device tool): exports the
# torchvision models (bench/gpu_torch.py, which also times torch), then bench/cl_bench.c in
# both precisions, alternating, and the per-layer precision check of tinyinfer-run.
# Usage: bench/fp16_gpu.sh   (prints markdown on stdout)
set -uo pipefail
cd "$(dirname "$0")/.."
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libnvidia-opencl.so.1}
export TINYINFER_OPENCL_DEVICE=${TINYINFER_OPENCL_DEVICE:-NVIDIA}
mkdir -p build/gpu
CC=${CC:-gcc}
$CC -O2 -std=c99 -I. bench/cl_bench.c -o build/gpu/cl_bench -lm -pthread -ldl
$CC -O2 -std=c99 -I. -Itests/harness tools/tinyinfer-run.c -o build/gpu/tinyinfer-run -lm -pthread -ldl
$CC -O2 -std=c99 -I. -Itests/harness tests/cl/test_cl_backend.c -o build/gpu/test_cl_backend -lm -pthread -ldl
echo "# fp32 and fp16 storage on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
echo
echo "commit $(git rev-parse --short HEAD 2>/dev/null); $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo '## OpenCL backend tests (fp16 cases included)'
echo '```'
build/gpu/test_cl_backend 2>&1 | tail -n 8
echo '```'
python3 bench/gpu_torch.py build/gpu >build/gpu/torch.md 2>build/gpu/torch.err
echo '## torch (CUDA, fp32, TF32 off)'
cat build/gpu/torch.md
models="build/gpu/mobilenet_v2.onnx build/gpu/resnet18.onnx build/gpu/resnet50.onnx build/gpu/squeezenet1_1.onnx build/gpu/efficientnet_b0.onnx"
for round in 1 2; do
    for p in fp32 fp16; do
        echo
        echo "## tinyinfer OpenCL, --precision $p, round $round (ms)"
        build/gpu/cl_bench --runs 100 --precision $p $models 2>&1
    done
done
echo
echo '## per-layer check, fp16 against the CPU in fp32 (tinyinfer-run --check-precision)'
for m in mobilenet_v2 resnet18; do
    echo '```'
    build/gpu/tinyinfer-run build/gpu/$m.onnx --backend opencl --precision fp16 --check-precision 2>&1 | grep -v '^ *first:' | tail -n 16
    echo '```'
done
