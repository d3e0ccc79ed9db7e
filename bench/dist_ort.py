#!/usr/bin/env python3
"""Whole-run time distributions of tinyinfer and onnxruntime on the same ONNX models, rounds
interleaved: the minimum, the 10th percentile and the median of each, and their ratios.

bench/peers.sh reports medians, which on a shared machine move with whatever else runs
(a cell moves +-15 % between runs of the same build here); the minimum and the low
percentiles show what each runtime does when it has the cores, and the gap between them
and the median how much a runtime loses to the machine's noise (at 2 threads, to a core
taken away for part of a run). Same input for both (seeded uniform floats in [-1, 1]),
tinyinfer through bench/ti_bench.c in its own process per round, onnxruntime in this one
(intra-op threads as asked, inter-op 1, sequential, all graph optimisations).

Usage: bench/dist_ort.py MODEL[,MODEL...] [--threads 1,2] [--rounds 3] [--runs 100]
                         [--bin build/ti_bench]
       bench/dist_ort.py --self-test
MODEL: an ONNX file, or a name under $TINYINFER_CACHE/arch/NAME/model.onnx (the
architecture tests' cache, ~/.cache/tinyinfer by default). Needs numpy and onnxruntime
(pip) and build/ti_bench (cc -O2 -I. -Itests/harness bench/ti_bench.c -o build/ti_bench
-lm -pthread -ldl).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("TINYINFER_CACHE", os.path.expanduser("~/.cache/tinyinfer"))


def model_path(name):
    if os.path.isfile(name):
        return name
    return os.path.join(CACHE, "arch", name, "model.onnx")


def stats(times):
    """(minimum, 10th percentile, median) of a list of times."""
    t = sorted(times)
    pick = lambda q: t[min(len(t) - 1, int(q * (len(t) - 1) + 0.5))]
    return t[0], pick(0.10), pick(0.50)


def run_tinyinfer(binary, path, npy, threads, runs):
    out = subprocess.run([binary, path, "--input", npy, "--threads", str(threads),
                          "--warmup", "10", "--runs", str(runs)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["times_ms"]


def run_ort(ort, path, x, threads, runs):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    name = s.get_inputs()[0].name
    for _ in range(10):
        s.run(None, {name: x})
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        s.run(None, {name: x})
        times.append((time.perf_counter() - t) * 1e3)
    return times


def self_test():
    lo, p10, med = stats([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (lo, med) == (1.0, 3.0), (lo, med)
    lo, p10, med = stats([float(i) for i in range(1, 102)])
    assert (lo, p10, med) == (1.0, 11.0, 51.0), (lo, p10, med)
    assert model_path("no_such_model").endswith(os.path.join("arch", "no_such_model",
                                                             "model.onnx"))
    print("self-test ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="?", default="")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "build", "ti_bench"))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return 0
    if not a.models:
        ap.error("name at least one model")
    import numpy as np
    import onnx
    import onnxruntime as ort
    models = a.models.split(",")
    threads = [int(t) for t in a.threads.split(",")]
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.rounds):
            for m in models:
                path = model_path(m)
                dims = onnx.load(path, load_external_data=False).graph.input[0].type
                shape = [d.dim_value or 1 for d in dims.tensor_type.shape.dim]
                x = np.random.default_rng(1).uniform(-1, 1, shape).astype(np.float32)
                npy = os.path.join(tmp, "x.npy")
                np.save(npy, x)
                for t in threads:
                    times.setdefault((m, t, "ti"), []).extend(
                        run_tinyinfer(a.bin, path, npy, t, a.runs))
                    times.setdefault((m, t, "ort"), []).extend(run_ort(ort, path, x, t, a.runs))
    print(f"{a.rounds} rounds x {a.runs} runs each, interleaved; ms; ratio = tinyinfer / "
          "onnxruntime\n")
    print("| model | threads | tinyinfer min / p10 / median | onnxruntime min / p10 / median "
          "| ratio min / p10 / median |")
    print("|---|---:|---|---|---|")
    for m in models:
        for t in threads:
            a3, b3 = stats(times[(m, t, "ti")]), stats(times[(m, t, "ort")])
            fmt = lambda v: " / ".join(f"{x:.3f}" for x in v)
            ratio = " / ".join(f"{x / y:.2f}" for x, y in zip(a3, b3))
            print(f"| {os.path.basename(m)} | {t} | {fmt(a3)} | {fmt(b3)} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
