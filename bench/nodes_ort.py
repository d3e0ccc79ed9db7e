#!/usr/bin/env python3
"""tinyinfer and onnxruntime node by node on one ONNX model, same machine, same threads.

tinyinfer's times come from bench/nodemin.c (each node's median over the runs, with
ti_session_desc.profile), onnxruntime's from its profiler (each node's `*_kernel_time`
events, median over the runs). The two graphs differ: onnxruntime fuses Add into the conv
before it and inserts layout reorders (NCHWc), tinyinfer fuses activations and keeps Add.
So nodes are grouped by what they compute, not by name: the op, its input shape, its
weight shape (Conv, Gemm, MatMul) and its output shape, from the ONNX graph's shape
inference for tinyinfer's nodes (named as in the model) and from the profiler's shapes for
onnxruntime's. Nodes with the same key share a row (MobileNetV2's repeated blocks); nodes
only one runtime has (its Add, the reorders) get a row per op; an onnxruntime activation
node right after a conv (QuickGelu: EfficientNet's SiLU) is timed in that conv's row, since
tinyinfer fuses it into the conv. The profiler adds a little to each of
onnxruntime's nodes, so the whole runs are also timed without it (medians, same process).
--stat min takes each node's minimum over the runs on both sides instead of its median:
on a machine whose speed drifts (a shared host; medians twice the minima on the Zen 3 of
2026-12-03) the minima are what can be compared.

Usage: bench/nodes_ort.py MODEL.onnx [--threads 1] [--runs 200] [--nodemin BIN] [--out FILE]
                          [--stat median|min]
       bench/nodes_ort.py --self-test
BIN defaults to build/nodemin, built from bench/nodemin.c and ./tinyinfer.h when missing.
Needs numpy, onnx and onnxruntime (pip).
"""
import argparse
import collections
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import ab  # noqa: E402  (bench/ab.py: nodemin's build command, one place for both tools)
WEIGHTED = ("Conv", "Gemm", "MatMul", "ConvTranspose")
# onnxruntime nodes that apply an activation to the node before them, which tinyinfer fuses
# into that node (EfficientNet's SiLU: onnxruntime's QuickGelu): counted in its row
ACTIVATIONS = ("QuickGelu", "Sigmoid", "Relu", "Clip", "HardSigmoid", "HardSwish", "Tanh",
               "LeakyRelu", "Gelu", "FastGelu")


def key_of(op, shapes_in, shape_out):
    """The grouping key: op, input shape, weight shape for convs, output shape (a Gemm's
    weights are left out: onnxruntime's profiler lists them prepacked, as [N])."""
    ins = [tuple(s) for s in shapes_in[:2 if op in ("Conv", "ConvTranspose") else 1]]
    return (op, tuple(ins), tuple(shape_out))


def loose_key(key):
    """key with channel counts rounded up to 16: onnxruntime's NCHWc convs report the
    padded count (SqueezeNet's 1000-channel classifier as 1008)."""
    r16 = lambda s: tuple((d + 15) // 16 * 16 if i < 2 else d for i, d in enumerate(s))  # noqa
    op, ins, out = key
    return (op, tuple(r16(s) for s in ins), r16(out))


def describe(key):
    op, ins, out = key
    if op == "Conv" and len(ins) == 2 and len(ins[1]) == 4 and len(out) == 4:
        x, w = ins
        kind = "depthwise " if w[1] == 1 and x[1] == w[0] and w[0] > 1 else ""
        return "Conv %s%d->%d k%dx%d %dx%d->%dx%d" % (kind, x[1], w[0], w[2], w[3], x[2], x[3],
                                                    out[2], out[3])
    fmt = lambda s: "x".join(str(d) for d in s)  # noqa: E731
    return "%s %s -> %s" % (op, " ".join(fmt(s) for s in ins), fmt(out))


def parse_nodemin(text):
    """bench/nodemin.c's lines: [(op, name, min, median, p90)], and its summary line."""
    nodes, summary = [], ""
    for line in text.splitlines():
        p = line.split(None, 5)
        if len(p) >= 5 and p[0].isdigit():
            nodes.append((p[1], p[5] if len(p) > 5 else "", float(p[2]), float(p[3]),
                          float(p[4])))
        elif line.startswith("best run"):
            summary = line
    return nodes, summary


def parse_ort_events(events, skip=0):
    """onnxruntime profiler events: {node name: (op, key, [ms per run])}, runs after `skip`."""
    out = collections.OrderedDict()
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        a = e.get("args", {})
        name, op = e["name"][:-len("_kernel_time")], a.get("op_name", "?")
        shapes = [list(d.values())[0] for d in a.get("input_type_shape", [])]
        outs = [list(d.values())[0] for d in a.get("output_type_shape", [])]
        if name not in out:
            out[name] = (op, key_of(op, shapes, outs[0] if outs else []), [])
        out[name][2].append(e["dur"] / 1000.0)
    return {n: (op, k, t[skip:] or t) for n, (op, k, t) in out.items()}


def onnx_keys(path):
    """{node name: key} from the ONNX graph's shape inference."""
    import onnx
    from onnx import shape_inference
    m = shape_inference.infer_shapes(onnx.load(path))
    g = m.graph
    shp = {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        dims = v.type.tensor_type.shape.dim
        shp[v.name] = [d.dim_value if d.HasField("dim_value") else 1 for d in dims]
    for i in g.initializer:
        shp[i.name] = list(i.dims)
    keys = {}
    for n in g.node:
        if n.name and n.output and all(x in shp for x in list(n.input[:2]) + [n.output[0]]):
            keys[n.name] = key_of(n.op_type, [shp[x] for x in n.input if x], shp[n.output[0]])
    return keys


def rows_of(ours, ort, keys, stat="median"):
    """Rows (description, count ours, count ort, ms ours, ms ort), each node's median (or
    minimum: stat "min") over the runs, summed per row."""
    acc = collections.OrderedDict()

    def add(k, side, ms):
        r = acc.setdefault(k, [0, 0, 0.0, 0.0])
        r[side] += 1
        r[2 + side] += ms

    for op, name, mn, med, _p90 in ours:
        k = keys.get(name)
        # a fused activation's node keeps its conv's name and key; an op onnxruntime does
        # not have as a node of its own gets its own row
        add(k if k is not None and k[0] == op else ("only", op), 0, mn if stat == "min" else med)
    loose = collections.defaultdict(list)  # tinyinfer's keys by their padded form
    for k in acc:
        if k[0] != "only":
            loose[loose_key(k)].append(k)
    prev = None  # the row of onnxruntime's node before, when weighted
    for _name, (op, k, t) in ort.items():
        ms = min(t) if stat == "min" else statistics.median(t)
        if op in ACTIVATIONS and prev is not None and k[1] and k[1][0] == prev[2]:
            acc[prev][3] += ms  # its activation, in the same row, not counted as a node
            continue
        if k not in acc and loose_key(k) in loose:  # channels padded to blocks of 16
            # the first of tinyinfer's rows that pads to it and is not yet paired up
            # (MobileNetV3's 24 -> 88 and 24 -> 96 both run as 32 -> 96)
            cands = loose[loose_key(k)]
            k = next((c for c in cands if acc[c][1] < acc[c][0]), cands[-1])
        row = k if k[0] in WEIGHTED or k in acc else ("only", op)
        add(row, 1, ms)
        prev = row if row[0] in WEIGHTED else None
    rows = []
    for k, (n0, n1, t0, t1) in acc.items():
        d = "%s (one runtime's nodes)" % k[1] if k[0] == "only" else describe(k)
        rows.append((d, n0, n1, t0, t1))
    rows.sort(key=lambda r: r[4] - r[3])  # where tinyinfer loses most first
    return rows


def stale(binary, srcs):
    """True when binary is missing or older than one of srcs: a binary kept from an older
    checkout times that checkout's kernels, not these."""
    return not os.path.exists(binary) or any(
        os.path.getmtime(f) > os.path.getmtime(binary) for f in srcs)


def run_nodemin(binary, model, threads, runs):
    if stale(binary, [os.path.join(ROOT, "tinyinfer.h"), os.path.join(HERE, "nodemin.c")]):
        os.makedirs(os.path.dirname(binary), exist_ok=True)
        ab.build(os.environ.get("CC", "cc"), ROOT, binary)
    out = subprocess.run([binary, model, str(threads), str(runs)], capture_output=True,
                         text=True, check=True).stdout
    return parse_nodemin(out)


def run_ort(model, threads, runs):
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    feeds = {}
    rng = np.random.default_rng(7)
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feeds[i.name] = rng.uniform(-1, 1, shape).astype(np.float32)
    for _ in range(10):
        sess.run(None, feeds)
    plain = []
    for _ in range(runs):
        t = time.perf_counter()
        sess.run(None, feeds)
        plain.append((time.perf_counter() - t) * 1e3)
    with tempfile.TemporaryDirectory() as tmp:
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        for _ in range(runs + 5):
            sess.run(None, feeds)
        events = json.load(open(sess.end_profiling()))
    return parse_ort_events(events, skip=5), statistics.median(plain)


def table(rows, title, ours_summary, ort_run, stat="median"):
    t0, t1 = sum(r[3] for r in rows), sum(r[4] for r in rows)
    n1 = sum(r[2] for r in rows)
    what = "minima" if stat == "min" else "medians"
    lines = ["# %s" % title, "",
             "tinyinfer: %s. onnxruntime: median run %.3f ms without the profiler; node "
             "%s below (both runtimes) with it, summed %.3f ms (%+.1f us a node against the "
             "plain run: read small nodes' ratios with that in mind)." % (
                 ours_summary, ort_run, what, t1, (t1 - ort_run) * 1e3 / max(n1, 1)), "",
             "| nodes (op, input -> output) | count ours / ort | tinyinfer ms | onnxruntime ms "
             "| ratio |", "|---|---:|---:|---:|---:|"]
    for d, c0, c1, a, b in rows:
        ratio = "%.2f" % (a / b) if a > 0 and b > 0 else "-"
        lines.append("| %s | %d / %d | %.4f | %.4f | %s |" % (d, c0, c1, a, b, ratio))
    lines.append("| all | %d / %d | %.3f | %.3f | %.2f |" % (
        sum(r[1] for r in rows), sum(r[2] for r in rows), t0, t1, t0 / t1 if t1 else 0))
    return "\n".join(lines) + "\n"


def self_test_stale():
    with tempfile.TemporaryDirectory() as tmp:
        b, h = os.path.join(tmp, "bin"), os.path.join(tmp, "tinyinfer.h")
        open(h, "w").close()
        assert stale(b, [h])  # no binary yet
        open(b, "w").close()
        os.utime(h, (1000, 1000))
        os.utime(b, (2000, 2000))
        assert not stale(b, [h])  # built after the header
        os.utime(h, (3000, 3000))
        assert stale(b, [h])  # the header changed since


def self_test():
    self_test_stale()
    ours_txt = ("  0 Conv                 0.1000   0.1200   0.1500  Conv_0\n"
                "  1 Conv                 0.0500   0.0600   0.0700  Conv_1\n"
                "  2 Add                  0.0100   0.0110   0.0120  Add_0\n"
                "  3 Conv                 0.0200   0.0250   0.0300  Conv_2\n"
                "best run 1.000 ms, median run 1.100 ms, sum of node minima 0.160 ms, of node "
                "medians 0.191 ms (1 threads, 3 runs)\n")
    ours, summary = parse_nodemin(ours_txt)
    assert len(ours) == 4 and ours[1] == ("Conv", "Conv_1", 0.05, 0.06, 0.07), ours
    assert summary.startswith("best run 1.000 ms"), summary
    x, w, y = [1, 16, 8, 8], [32, 16, 1, 1], [1, 32, 8, 8]
    y24 = [1, 24, 8, 8]  # 24 -> 40 and 24 -> 48: onnxruntime runs both as 32 -> 48
    keys = {"Conv_0": key_of("Conv", [x, w, [32]], y),
            "Conv_1": key_of("Conv", [y24, [40, 24, 1, 1], [40]], [1, 40, 8, 8]),
            "Add_0": key_of("Add", [y, y], y),
            "Conv_2": key_of("Conv", [y24, [48, 24, 1, 1], [48]], [1, 48, 8, 8])}
    ev = []
    for ms in (0.2, 0.1, 0.3):  # a node's runs: median 0.2
        ev.append({"cat": "Node", "name": "Relu_0_out_nchwc_kernel_time", "dur": ms * 1000,
                   "args": {"op_name": "Conv", "input_type_shape": [{"float": x}, {"float": w},
                            {"float": [32]}], "output_type_shape": [{"float": y}]}})
        ev.append({"cat": "Node", "name": "Mul_0/QuickGeluFusion/_kernel_time", "dur": 50,
                   "args": {"op_name": "QuickGelu", "input_type_shape": [{"float": y}],
                            "output_type_shape": [{"float": y}]}})
        ev.append({"cat": "Node", "name": "ReorderOutput_kernel_time", "dur": 10,
                   "args": {"op_name": "ReorderOutput", "input_type_shape": [{"float": y}],
                            "output_type_shape": [{"float": y}]}})
    for name, us in (("Conv_1", 80), ("Conv_2", 30)):  # padded, in tinyinfer's order
        ev.append({"cat": "Node", "name": name + "_kernel_time", "dur": us,
                   "args": {"op_name": "Conv",
                            "input_type_shape": [{"float": y}, {"float": [48, 32, 1, 1]}],
                            "output_type_shape": [{"float": [1, 48, 8, 8]}]}})
    ev.append({"cat": "Session", "name": "model_run", "dur": 5})
    ort = parse_ort_events(ev)
    assert statistics.median(ort["Relu_0_out_nchwc"][2]) == 0.2, ort
    rows = {r[0]: r[1:] for r in rows_of(ours, ort, keys)}
    assert rows["Conv 16->32 k1x1 8x8->8x8"] == (1, 1, 0.12, 0.25), rows  # with QuickGelu
    assert rows["Conv 24->40 k1x1 8x8->8x8"] == (1, 1, 0.06, 0.08), rows
    assert rows["Conv 24->48 k1x1 8x8->8x8"] == (1, 1, 0.025, 0.03), rows
    assert rows["Add 1x32x8x8 -> 1x32x8x8"] == (1, 0, 0.011, 0.0), rows
    assert rows["ReorderOutput (one runtime's nodes)"][:2] == (0, 1), rows
    text = table(rows_of(ours, ort, keys), "t", summary, 1.0)
    assert "| all | 4 / 4 |" in text and "| 0.48 |" in text, text
    assert text.index("| 0.75 |") < text.index("| 0.48 |"), text  # least favourable first
    rows = {r[0]: r[1:] for r in rows_of(ours, ort, keys, "min")}  # minima: 0.1 and 0.05
    r = rows["Conv 16->32 k1x1 8x8->8x8"]
    assert r[:3] == (1, 1, 0.1) and abs(r[3] - 0.15) < 1e-12, rows  # conv 0.1 + QuickGelu
    assert "node minima below" in table(rows_of(ours, ort, keys, "min"), "t", summary, 1.0, "min")
    print("bench/nodes_ort.py self-test: ok")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--nodemin", default=os.path.join(ROOT, "build", "nodemin"))
    ap.add_argument("--out", default="")
    ap.add_argument("--stat", choices=("median", "min"), default="median")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.model:
        ap.error("MODEL.onnx is needed")
    ours, summary = run_nodemin(args.nodemin, args.model, args.threads, args.runs)
    ort, ort_run = run_ort(args.model, args.threads, args.runs)
    rows = rows_of(ours, ort, onnx_keys(args.model), args.stat)
    path = os.path.abspath(args.model)
    name = os.path.splitext(os.path.basename(path))[0]
    if name == "model":  # the architecture cache's layout: <name>/model.onnx
        name = os.path.basename(os.path.dirname(path))
    title = "%s, %d thread%s, %d runs, %s, %s" % (
        name,
        args.threads, "" if args.threads == 1 else "s", args.runs,
        datetime.date.today().isoformat(), platform.processor() or platform.machine())
    text = table(rows, title, summary, ort_run, args.stat)
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
