"""Exports torchvision models to ONNX for tinyinfer's OpenCL benchmark and times the same
models with PyTorch on CUDA (fp32, TF32 off): eager, and replayed as a CUDA graph. Weights
are random (torchvision's architecture, seeded): latency does not depend on their values.

Usage: python3 bench/gpu_torch.py [--export-only] OUTDIR [model ...]
Writes OUTDIR/<model>.onnx and prints a markdown table (milliseconds, batch 1, 224x224,
input upload and output download included in both columns, as in tinyinfer's figures).
"""
import sys
import time

import torch
import torchvision

MODELS = ["mobilenet_v2", "resnet18", "resnet50", "squeezenet1_1", "efficientnet_b0"]


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def main():
    args = sys.argv[1:]
    export_only = bool(args) and args[0] == "--export-only"
    if export_only:
        args = args[1:]
    out = args[0]
    names = args[1:] or MODELS
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    print("| model | torch eager median | torch CUDA graph median |")
    print("|---|---|---|")
    for name in names:
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            torch.onnx.export(model, (x,), f"{out}/{name}.onnx", opset_version=17,
                              input_names=["input"], output_names=["output"], dynamo=False)
        if export_only:
            continue
        m = model.cuda()
        host_in = torch.randn(1, 3, 224, 224).pin_memory()
        host_out = torch.empty(1, 1000).pin_memory()
        static_in = torch.empty(1, 3, 224, 224, device="cuda")

        def eager():
            static_in.copy_(host_in, non_blocking=True)
            y = m(static_in)
            host_out.copy_(y, non_blocking=True)
            torch.cuda.synchronize()

        times = []
        with torch.no_grad():
            for _ in range(20):
                eager()
            for _ in range(100):
                t0 = time.perf_counter()
                eager()
                times.append((time.perf_counter() - t0) * 1e3)
            eager_ms = median(times)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(5):
                    static_out = m(static_in)
            torch.cuda.current_stream().wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_out = m(static_in)
            times = []
            for _ in range(120):
                t0 = time.perf_counter()
                static_in.copy_(host_in, non_blocking=True)
                graph.replay()
                host_out.copy_(static_out, non_blocking=True)
                torch.cuda.synchronize()
                times.append((time.perf_counter() - t0) * 1e3)
            graph_ms = median(times[20:])
        print(f"| {name} | {eager_ms:.3f} | {graph_ms:.3f} |", flush=True)


if __name__ == "__main__":
    main()
