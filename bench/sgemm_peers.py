#!/usr/bin/env python3
"""Float32 GEMM at 1 thread beside the peers, in one run: tinyinfer (bench/sgemm.c's
ti__sgemm_ws, best instruction set of this CPU), onnxruntime (a MatMul node, A a constant
and B its input, so that MLAS prepacks nothing, as bench/sgemm.c) and OpenBLAS (numpy's
matmul), on the shapes of bench/sgemm.c (1024^3 and MobileNetV2's 1x1 convolutions as
M x N x K), with the FMA peak that bench/sgemm.c's probe measures. Rounds interleave the
three (order rotated per round); each cell is the median over rounds of each round's
median wall-clock time.

Usage: bench/sgemm_peers.py [--bin build/bench_sgemm] [--rounds 3] [--only TEXT] [--out FILE]
       bench/sgemm_peers.py --self-test
Needs numpy and onnxruntime (pip); build the binary with ./build.sh bench or
  cc -O2 -I. bench/sgemm.c -o build/bench_sgemm -lm -ldl -pthread
"""
import os

# one thread for OpenBLAS: read when numpy loads it
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def shapes_of_bench():
    """(name, M, N, K) of bench/sgemm.c's SHAPES rows with A not transposed, with workspace."""
    src = open(os.path.join(HERE, "sgemm.c")).read()
    body = src[src.index("SHAPES[] = {"):]
    body = body[:body.index("};")]
    rows = []
    for m in re.finditer(r'\{"([^"]+)",\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+)\}',
                         body):
        name, M, N, K, _pointwise, at, no_ws = m.group(1), *map(int, m.groups()[1:])
        if at == 0 and no_ws == 0:
            rows.append((name, M, N, K))
    return rows


def time_calls(fn, reps, warm=3):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def reps_for(M, N, K):
    flops = 2.0 * M * N * K
    return max(10, min(400, int(2e10 / flops)))  # about 0.1-0.2 s a shape at 100 GFLOP/s


def ort_matmul(M, N, K, reps):
    """A MatMul node C = A * B with A a constant (M x K: a conv's weights) and B the input
    (K x N: its activations): as in bench/sgemm.c, neither operand is packed ahead of the
    run (MLAS prepacks a constant B only)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])], "mm",
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [K, N])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [M, N])],
        [helper.make_tensor("a", TensorProto.FLOAT, [M, K], a.ravel())])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    return time_calls(lambda: s.run(None, {"b": b}), reps)


def numpy_matmul(M, N, K, reps):
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    c = np.empty((M, N), np.float32)
    return time_calls(lambda: np.matmul(a, b, out=c), reps)


def ours(binary, M, N, K):
    """(seconds by the wall clock's median, probe GFLOP/s, ISA) from one bench_sgemm run."""
    out = subprocess.run([binary, "-", "%dx%dx%d" % (M, N, K), "1"], capture_output=True,
                         text=True, check=True).stdout
    return parse_ours(out, M, N, K)


def parse_ours(out, M, N, K):
    probe = float(re.search(r"peak used below: ([\d.]+) GFLOP/s", out).group(1))
    isa = re.search(r"\| shape \(M x N x K\) \| (\S+) GFLOP/s", out).group(1)
    row = re.search(r"^\| %dx%dx%d .*?\| [\d.]+ \[([\d.]+)\]" % (M, N, K), out, re.M)
    gflops = float(row.group(1))
    return 2.0 * M * N * K / (gflops * 1e9), probe, isa


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "build", "bench_sgemm"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="shapes whose name contains this")
    ap.add_argument("--out", default="")
    ap.add_argument("--self-test", action="store_true",
                    help="check the parsing of bench/sgemm.c (its shapes, its output); run nothing")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not os.path.exists(args.bin):
        sys.exit("sgemm_peers: %s is missing (./build.sh bench builds it)" % args.bin)
    import onnxruntime
    shapes = [s for s in shapes_of_bench() if args.only in s[0]]
    peers = ["tinyinfer", "onnxruntime", "OpenBLAS"]
    times = {(s[0], p): [] for s in shapes for p in peers}
    probes, isa = [], "?"
    t_start = time.time()
    load0 = os.getloadavg()[0]
    for r in range(args.rounds):
        for name, M, N, K in shapes:
            reps = reps_for(M, N, K)
            order = peers[r % 3:] + peers[:r % 3]
            for p in order:
                if p == "tinyinfer":
                    t, probe, isa = ours(args.bin, M, N, K)
                    probes.append(probe)
                elif p == "onnxruntime":
                    t = ort_matmul(M, N, K, reps)
                else:
                    t = numpy_matmul(M, N, K, reps)
                times[(name, p)].append(t)
        print("round %d of %d done" % (r + 1, args.rounds), file=sys.stderr)
    peak = statistics.median(probes)
    lines = []
    w = lines.append
    w("# SGEMM beside the peers, 1 thread, %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M"))
    w("")
    w("Made by `bench/sgemm_peers.py --rounds %d` (%.0f s). C = A * B, float32, row-major, "
      "A and B not transposed, neither packed before the run (A plays a conv's weights, B "
      "its input). tinyinfer: bench/sgemm.c (ti__sgemm_ws with a session's workspace, %s); "
      "onnxruntime %s: a MatMul node with A a constant and B its input (MLAS would prepack "
      "only a constant B); OpenBLAS: numpy %s's matmul "
      "(OPENBLAS_NUM_THREADS=1). GFLOP/s = 2MNK / the median over %d rounds of each round's "
      "median wall-clock time; %% of the FMA peak that bench/sgemm.c's probe measured in the "
      "same run (median of its %d runs: %.1f GFLOP/s)." % (
          args.rounds, time.time() - t_start, isa, onnxruntime.__version__, np.__version__,
          args.rounds, len(probes), peak))
    w("")
    w("Machine: %s, %d CPUs; load average (1 min) at the start %.2f, at the end %.2f." % (
        cpu_name(), os.cpu_count() or 0, load0, os.getloadavg()[0]))
    w("")
    w("| shape (M x N x K) | tinyinfer GFLOP/s | % peak | onnxruntime | % peak | OpenBLAS "
      "| % peak | tinyinfer / fastest peer (time) |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, M, N, K in shapes:
        f = 2.0 * M * N * K
        g = {p: f / statistics.median(times[(name, p)]) / 1e9 for p in peers}
        best = max(g["onnxruntime"], g["OpenBLAS"])
        w("| %s (%d x %d x %d) | %.1f | %.0f%% | %.1f | %.0f%% | %.1f | %.0f%% | %.2f |" % (
            name, M, N, K, g["tinyinfer"], 100 * g["tinyinfer"] / peak, g["onnxruntime"],
            100 * g["onnxruntime"] / peak, g["OpenBLAS"], 100 * g["OpenBLAS"] / peak,
            best / g["tinyinfer"]))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


SAMPLE = """FMA peak probe (12 independent FMA chains, 1 thread, best of 5 by CPU time): AVX2 \
111.3 GFLOP/s, AVX-512 207.8 GFLOP/s; peak used below: 207.8 GFLOP/s.

| shape (M x N x K) | avx512vnni GFLOP/s | % peak | avx512 GFLOP/s | % peak |
|---|---:|---:|---:|---:|
| 64x196x384 (64 x 196 x 384) | 128.8 [127.9] | 62% | 127.0 [126.1] | 61% |
"""


def self_test():
    """The shapes of bench/sgemm.c parse (1024^3 and the pointwise rows, no transposed A)
    and a bench_sgemm report gives its wall-clock figure, probe and ISA."""
    shapes = shapes_of_bench()
    names = [s[0] for s in shapes]
    assert "1024^3" in names and len(shapes) >= 10, names
    assert ("pw 14x14x384->64", 64, 196, 384) in shapes, shapes
    assert all("without" not in n for n in names), names
    t, probe, isa = parse_ours(SAMPLE, 64, 196, 384)
    assert probe == 207.8 and isa == "avx512vnni", (probe, isa)
    assert abs(t - 2.0 * 64 * 196 * 384 / 127.9e9) < 1e-12, t
    print("sgemm_peers self-test: %d shapes, report parsed" % len(shapes))


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


if __name__ == "__main__":
    main()
