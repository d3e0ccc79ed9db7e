#!/usr/bin/env python3
"""CPU peer benchmark (issue #6): tinyinfer against onnxruntime, LiteRT (XNNPACK), ncnn and
MNN on the same models, input and thread counts, in one run.

Entry point: bench/peers.sh (builds build/ti_bench and build/bench_sgemm, makes the
architecture models, then runs this file). Direct use:
  python3 bench/peers.py --ti-bench build/ti_bench [--sgemm build/bench_sgemm]
         [--threads 1,2] [--rounds 2] [--runs 50] [--warmup 5] [--models a,b] [--no-install]
         [--out bench/results/cpu-DATE.md]
  python3 bench/peers.py --self-test        # table and agreement code on fake results

How it measures: every (model, threads, peer) timing runs in its own process (tinyinfer:
build/ti_bench; the others: this file with --worker), so each process's peak RSS
(VmHWM) belongs to one model. A process loads the model, runs --warmup untimed runs,
then --runs timed ones. For each model and thread count the peers run one after another,
--rounds times, the order rotating each round, so drift in the machine's load hits all of
them alike; the median and p90 are over all timed runs of all rounds. Outputs of round 1
are compared with onnxruntime's (ONNX models) or LiteRT's (TFLite models): a peer whose
output differs is shown but never counted as the fastest.

Peers that cannot be installed, or cannot convert a model, appear in the table as
"n/a: reason". The MNN converter is called through its compiled module (_tools) rather than
the mnnconvert script, whose logger pip-installs a telemetry client and posts to a server.
pnnx is installed with --no-deps: its binary is self-contained, and the dependency it
declares (torch) is a multi-gigabyte download that the ONNX path does not use.
"""
import argparse
import datetime
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("TINYINFER_CACHE", os.path.expanduser("~/.cache/tinyinfer"))
SHARED_CORAL = os.path.join(ROOT, "..", "shared", "models", "coral")

FP32_MODELS = ["mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "resnet18", "efficientnet_b0"]
# name in the table -> file in ../shared/models/coral
TFLITE_MODELS = {
    "coral_mobilenet_v2_uint8": "mobilenet_v2_1.0_224_quant.tflite",
    "tf2_mobilenet_v2_ptq_int8": "tf2_mobilenet_v2_1.0_224_ptq.tflite",
}
PEERS = ["tinyinfer", "onnxruntime", "litert", "ncnn", "mnn"]
LABEL = {"tinyinfer": "tinyinfer", "onnxruntime": "onnxruntime", "litert": "LiteRT (XNNPACK)",
         "ncnn": "ncnn", "mnn": "MNN", "litert_ref": "TFLite reference kernels"}
# peer -> (module to import, pip arguments, distribution name for the version)
PIP = {
    "onnxruntime": ("onnxruntime", ["onnxruntime"], "onnxruntime"),
    "litert": ("ai_edge_litert", ["ai-edge-litert"], "ai-edge-litert"),
    "ncnn": ("ncnn", ["ncnn"], "ncnn"),
    "mnn": ("MNN", ["MNN"], "MNN"),
    "pnnx": ("pnnx", ["--no-deps", "pnnx"], "pnnx"),
}
FP32_REL_TOL = 1e-3   # max |peer - reference| / max |reference| for fp32 outputs
# max difference in quantization steps for uint8/int8 outputs, against TFLite's reference
# kernels: its own optimized kernels and XNNPACK round some layers 1 unit differently, which
# grows to 3-6 steps at the softmax of the int8 MobileNetV2 on random inputs (up to 16 on
# some images: tests/models/gen_coral_refs.py); a wrong conversion is off by ~100 or more
QUANT_STEP_TOL = 16


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---- workers: one peer, one model, one thread count, in this process ----------------------

def quantile(sorted_v, q):
    """Nearest-rank quantile, as bench/ti_bench.c computes it."""
    n = len(sorted_v)
    k = min(max(int(q * n + 0.999999) - 1, 0), n - 1)
    return sorted_v[k]


def rss_now_kb():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except OSError:
        return 0


def rss_peak_kb():
    """Peak resident set of this process image: VmHWM. Not ru_maxrss: Linux carries the
    parent's high-water mark into a child through fork and exec, so every child of this
    (large) Python process would report at least the parent's peak."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def worker(peer, model, input_npy, threads, warmup, runs, out_npy):
    """Times one peer; prints one JSON line like build/ti_bench."""
    import numpy as np
    x = np.load(input_npy)
    info = {}
    if peer == "onnxruntime":
        import onnxruntime as ort
        base = rss_now_kb()
        t0 = time.perf_counter()
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        feed = {sess.get_inputs()[0].name: x}
        oname = sess.get_outputs()[0].name
        load_ms = (time.perf_counter() - t0) * 1e3
        state = {}

        def run():
            state["y"] = sess.run([oname], feed)[0]

        def output():
            return state["y"]
    elif peer == "litert":
        from ai_edge_litert.interpreter import Interpreter
        base = rss_now_kb()
        t0 = time.perf_counter()
        it = Interpreter(model_path=model, num_threads=threads)  # XNNPACK delegate: default
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        od = it.get_output_details()[0]
        scale, zp = od["quantization"]
        if scale:
            info["out_quant"] = [float(scale), int(zp)]
        load_ms = (time.perf_counter() - t0) * 1e3
        run = it.invoke

        def output():
            return it.get_tensor(od["index"])
    elif peer == "ncnn":
        import ncnn
        base = rss_now_kb()
        t0 = time.perf_counter()
        net = ncnn.Net()
        net.opt.num_threads = threads
        net.opt.use_vulkan_compute = False
        # fp32 throughout, as the others: ncnn's x86 default may store and compute in fp16
        # or bf16, which would time a different precision
        for flag in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic",
                     "use_bf16_storage", "use_int8_inference"):
            if hasattr(net.opt, flag):
                setattr(net.opt, flag, flag == "use_int8_inference")
        param = model
        if net.load_param(param) != 0 or net.load_model(param[: -len(".param")] + ".bin") != 0:
            raise RuntimeError("ncnn could not load " + param)
        mat = ncnn.Mat(np.ascontiguousarray(x[0])).clone()
        load_ms = (time.perf_counter() - t0) * 1e3
        state = {}

        def run():
            ex = net.create_extractor()  # ncnn's per-inference object, as its examples do
            ex.input("in0", mat)
            ret, out = ex.extract("out0")
            if ret != 0:
                raise RuntimeError("ncnn extract failed: %d" % ret)
            state["y"] = out

        def output():
            return np.array(state["y"]).reshape(-1)
    elif peer == "mnn":
        import MNN
        base = rss_now_kb()
        t0 = time.perf_counter()
        it = MNN.Interpreter(model)
        sess = it.createSession({"numThread": threads, "precision": "normal", "backend": "CPU"})
        inp = it.getSessionInput(sess)

        def np_type(t):
            for h, d in ((MNN.Halide_Type_Float, np.float32), (MNN.Halide_Type_Uint8, np.uint8),
                         (MNN.Halide_Type_Int, np.int32)):
                if t == h:
                    return h, d
            raise RuntimeError("MNN tensor of a type this script does not map")
        hin, din = np_type(inp.getDataType())
        xin = np.ascontiguousarray(x.astype(din))
        tmp = MNN.Tensor(tuple(x.shape), hin, xin, inp.getDimensionType())
        inp.copyFrom(tmp)
        out = it.getSessionOutput(sess)
        hout, dout = np_type(out.getDataType())
        load_ms = (time.perf_counter() - t0) * 1e3

        def run():
            # MNN reuses the input's memory for intermediate results: without a fresh copy
            # every run, runs after the first compute on garbage (seen with 3.6.1)
            inp.copyFrom(tmp)
            it.runSession(sess)

        def output():
            shape = tuple(out.getShape())
            host = MNN.Tensor(shape, hout, np.zeros(shape, dout), out.getDimensionType())
            out.copyToHostTensor(host)
            return np.array(host.getNumpyData(), dtype=dout).reshape(-1)
    else:
        raise SystemExit("unknown peer " + peer)

    for _ in range(warmup):
        run()
    times = []
    for _ in range(runs):
        a = time.perf_counter()
        run()
        times.append((time.perf_counter() - a) * 1e3)
    if out_npy != "-":
        np.save(out_npy, np.ascontiguousarray(output()))
    s = sorted(times)
    res = {"peer": peer, "threads": threads, "load_ms": load_ms, "times_ms": times,
           "median_ms": quantile(s, 0.5), "p90_ms": quantile(s, 0.9),
           "rss_kb": rss_peak_kb(), "rss_base_kb": base}
    res.update(info)
    print(json.dumps(res))


# ---- setup: peers, models, conversions ----------------------------------------------------

def have_module(mod):
    return importlib.util.find_spec(mod) is not None


def install_peers(wanted, allow_install):
    """-> {peer or 'pnnx': None when usable, else the reason}"""
    status = {}
    for name in wanted:
        mod, args, _ = PIP[name]
        if have_module(mod):
            status[name] = None
            continue
        if not allow_install:
            status[name] = "not installed (--no-install)"
            continue
        log("peers: pip install " + " ".join(args))
        p = subprocess.run([sys.executable, "-m", "pip", "install", "-q"] + args,
                           capture_output=True, text=True)
        importlib.invalidate_caches()
        if p.returncode == 0 and have_module(mod):
            status[name] = None
        else:
            last = (p.stderr.strip().splitlines() or ["pip failed"])[-1]
            status[name] = "pip install %s failed: %s" % (" ".join(args), last[:120])
    return status


def version_of(name):
    try:
        return importlib.metadata.version(PIP[name][2])
    except importlib.metadata.PackageNotFoundError:
        return None


def pnnx_binary():
    spec = importlib.util.find_spec("pnnx")  # the package's binary; importing it needs torch
    if not spec or not spec.submodule_search_locations:
        return None
    exe = os.path.join(list(spec.submodule_search_locations)[0], "pnnx")
    return exe if os.access(exe, os.X_OK) else None


def tail_reason(text, default):
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else default)[:140]


def convert_ncnn(onnx_path, outdir, shape):
    """ONNX -> ncnn with pnnx. -> (param path, None) or (None, reason)."""
    param, binf = os.path.join(outdir, "model.ncnn.param"), os.path.join(outdir, "model.ncnn.bin")
    if os.path.exists(param) and os.path.getmtime(param) >= os.path.getmtime(onnx_path):
        return param, None
    exe = pnnx_binary()
    if not exe:
        return None, "pnnx binary not found in the pnnx package"
    link = os.path.join(outdir, "src.onnx")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.abspath(onnx_path), link)
    w = os.path.join(outdir, "pnnx_work")
    os.makedirs(w, exist_ok=True)
    cmd = [exe, link, "inputshape=[%s]" % ",".join(str(d) for d in shape),
           "ncnnparam=" + param, "ncnnbin=" + binf, "ncnnpy=" + os.path.join(w, "ncnn.py"),
           "pnnxparam=" + os.path.join(w, "p.param"), "pnnxbin=" + os.path.join(w, "p.bin"),
           "pnnxpy=" + os.path.join(w, "p.py"), "pnnxonnx=" + os.path.join(w, "p.onnx")]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=outdir)
    if p.returncode != 0 or not os.path.exists(param):
        return None, "pnnx failed (rc %d): %s" % (p.returncode, tail_reason(p.stderr + p.stdout, "?"))
    txt = open(param).read()
    if " in0 " not in txt or " out0" not in txt:
        return None, "pnnx output has no in0/out0 blobs"
    shutil.rmtree(w, ignore_errors=True)
    return param, None


def convert_mnn(src, outdir, fmt):
    """ONNX or TFLITE -> .mnn through MNN's _tools module (no telemetry). -> (path, reason)"""
    out = os.path.join(outdir, "model.mnn")
    if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(src):
        return out, None
    code = ("import sys, _tools; _tools.mnnconvert(['mnnconvert', '-f', sys.argv[1], "
            "'--modelFile', sys.argv[2], '--MNNModel', sys.argv[3], '--bizCode', 'MNN'])")
    # cwd: the converter leaves .__convert_external_data.bin in its working directory
    p = subprocess.run([sys.executable, "-c", code, fmt, os.path.abspath(src), out + ".tmp"],
                       capture_output=True, text=True, cwd=outdir)
    if p.returncode != 0 or not os.path.exists(out + ".tmp"):
        why = ("crashed with signal %d" % -p.returncode) if p.returncode < 0 else \
            "failed (rc %d)" % p.returncode
        return None, "MNN converter %s: %s" % (why, tail_reason(p.stdout + p.stderr, "?"))
    os.replace(out + ".tmp", out)
    return out, None


def model_flops(onnx_path):
    """2 * multiply-adds of Conv, Gemm and MatMul nodes (shapes from onnx shape inference)."""
    try:
        import onnx
        from onnx import shape_inference
        m = shape_inference.infer_shapes(onnx.load(onnx_path))
    except Exception:
        return None
    g = m.graph
    shapes = {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
        shapes[v.name] = dims
    for t in g.initializer:
        shapes[t.name] = list(t.dims)
    total = 0
    for n in g.node:
        def prod(v):
            r = 1
            for d in v:
                r *= d
            return r
        if n.op_type == "Conv" and n.output[0] in shapes and n.input[1] in shapes:
            w = shapes[n.input[1]]
            total += 2 * prod(shapes[n.output[0]]) * prod(w[1:])
        elif n.op_type in ("Gemm", "MatMul") and n.output[0] in shapes and n.input[0] in shapes:
            a = shapes[n.input[0]]
            k = a[-1] if not (n.op_type == "Gemm" and any(
                at.name == "transA" and at.i for at in n.attribute)) else a[-2]
            total += 2 * prod(shapes[n.output[0]]) * k
    return total or None


# ---- comparison and tables -----------------------------------------------------------------

def litert_reference(model, d, threads):
    """Runs TFLite's reference kernels (OpResolverType.BUILTIN_REF: the arithmetic tinyinfer
    follows, untimed) on d/input.npy and saves the output as d/out_litert_ref_t<threads>.npy,
    the reference for the TFLite models: XNNPACK's own rounding is then one peer's, not the
    yardstick. -> True when it could."""
    code = ("import sys, numpy as np\n"
            "from ai_edge_litert.interpreter import Interpreter, OpResolverType\n"
            "it = Interpreter(model_path=sys.argv[1], num_threads=1,\n"
            "                 experimental_op_resolver_type=OpResolverType.BUILTIN_REF)\n"
            "it.allocate_tensors()\n"
            "it.set_tensor(it.get_input_details()[0]['index'], np.load(sys.argv[2]))\n"
            "it.invoke()\n"
            "np.save(sys.argv[3], it.get_tensor(it.get_output_details()[0]['index']))\n")
    out = os.path.join(d, "out_litert_ref_t%d.npy" % threads)
    p = subprocess.run([sys.executable, "-c", code, model, os.path.join(d, "input.npy"), out],
                       capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(out):
        log("peers: TFLite reference kernels failed on %s, LiteRT (XNNPACK) is the reference: %s"
            % (model, p.stderr.strip()[-300:]))
        return False
    return True


def compare(ref, y, quant):
    """-> dict(ok, top1, maxdiff, rel, note) for peer output y against reference ref."""
    import numpy as np
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if ref.size != y.size:
        return {"ok": False, "top1": False, "maxdiff": None, "rel": None,
                "note": "output has %d values, reference %d" % (y.size, ref.size)}
    d = float(np.max(np.abs(ref - y))) if ref.size else 0.0
    scale = float(np.max(np.abs(ref))) or 1.0
    tol = QUANT_STEP_TOL if quant else FP32_REL_TOL * scale
    # top-1 agrees when the peer's best class is (within tolerance) a best class of the
    # reference: random inputs give ties, quantized outputs especially
    top1 = bool(ref[int(np.argmax(y))] >= ref.max() - (1 if quant else 1e-4 * scale))
    if not np.all(np.isfinite(y)):
        return {"ok": False, "top1": False, "maxdiff": None, "rel": None, "note": "NaN/Inf"}
    ok = top1 and d <= tol
    return {"ok": ok, "top1": top1, "maxdiff": d, "rel": d / scale, "note": ""}


def fmt_ms(r):
    return "%.2f (%.2f)" % (r["median_ms"], r["p90_ms"])


def best_peer(cells):
    """cells: {peer: result or {'na': reason}} -> (peer, median) of the fastest valid
    non-tinyinfer peer, or (None, None)."""
    best = (None, None)
    for p, r in cells.items():
        if p == "tinyinfer" or "na" in r or not r.get("agree", {"ok": True})["ok"]:
            continue
        if best[1] is None or r["median_ms"] < best[1]:
            best = (p, r["median_ms"])
    return best


def ratio_table(results, models, threads_list, peers):
    """Markdown: one row per model and thread count, ms as 'median (p90)', ratio last."""
    lines = ["| model | threads | " + " | ".join(LABEL[p] for p in peers) +
             " | fastest peer | tinyinfer / fastest |",
             "|---|---:|" + "---:|" * len(peers) + "---|---:|"]
    summary = []
    for m in models:
        for t in threads_list:
            cells = results.get((m, t), {})
            row = ["%s" % m, str(t)]
            for p in peers:
                r = cells.get(p)
                if r is None:
                    row.append("n/a: not run")
                elif "na" in r:
                    row.append("n/a: " + r["na"])
                else:
                    a = r.get("agree")
                    cell = fmt_ms(r)
                    if a is not None and not a["ok"]:
                        cell += " **output differs** (%s)" % describe_agree(a)
                    row.append(cell)
            bp, bms = best_peer(cells)
            ti = cells.get("tinyinfer")
            if bp and ti and "na" not in ti:
                ratio = ti["median_ms"] / bms
                row += [LABEL[bp], "**%.2f**" % ratio if ratio > 0.8 else "%.2f" % ratio]
                summary.append((m, t, bp, ratio))
            else:
                row += ["-", "-"]
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines), summary


def describe_agree(a):
    if a["maxdiff"] is None:
        return a["note"]
    return "top-1 %s, max abs diff %.3g, rel %.2g" % ("same" if a["top1"] else "differs",
                                                        a["maxdiff"], a["rel"])


def agreement_table(results, models, threads_list, peers, refs):
    lines = ["| model | threads | reference | " + " | ".join(LABEL[p] for p in peers) + " |",
             "|---|---:|---|" + "---|" * len(peers)]
    for m in models:
        for t in threads_list:
            cells = results.get((m, t), {})
            row = [m, str(t), LABEL.get(refs.get(m), "-")]
            for p in peers:
                r = cells.get(p)
                if r is None or "na" in r:
                    row.append("-")
                elif p == refs.get(m) and t == threads_list[0]:
                    row.append("(reference)")
                elif "agree" not in r:
                    row.append("not compared")
                else:
                    a = r["agree"]
                    row.append(("ok: " if a["ok"] else "**DIFFERS**: ") + describe_agree(a))
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def rss_table(results, models, threads_list, peers):
    lines = ["| model | threads | " + " | ".join(LABEL[p] for p in peers) + " |",
             "|---|---:|" + "---:|" * len(peers)]
    for m in models:
        for t in threads_list:
            cells = results.get((m, t), {})
            row = [m, str(t)]
            for p in peers:
                r = cells.get(p)
                if r is None or "na" in r:
                    row.append("-")
                else:
                    row.append("%.1f (+%.1f)" % (r["rss_kb"] / 1024.0,
                                                 (r["rss_kb"] - r["rss_base_kb"]) / 1024.0))
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def load_table(results, models, threads_list, peers):
    """Median (fastest-slowest) over the rounds of each process's load: model file to a
    session ready to run, and the ratio tinyinfer / fastest valid peer."""
    lines = ["| model | threads | " + " | ".join(LABEL[p] for p in peers) +
             " | tinyinfer / fastest |", "|---|---:|" + "---:|" * (len(peers) + 1)]
    for m in models:
        for t in threads_list:
            cells = results.get((m, t), {})
            row, med = [m, str(t)], {}
            for p in peers:
                r = cells.get(p)
                v = sorted(r.get("load_list", [])) if r is not None and "na" not in r else []
                if not v:
                    row.append("-")
                    continue
                med[p] = quantile(v, 0.5)
                row.append("%.0f (%.0f-%.0f)" % (med[p], v[0], v[-1]))
            others = [med[p] for p in med if p != "tinyinfer" and
                      cells[p].get("agree", {}).get("ok", True)]
            row.append("%.2f" % (med["tinyinfer"] / min(others))
                       if "tinyinfer" in med and others and min(others) > 0 else "-")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def efficiency_table(results, models, threads_list, flops, peak):
    if not peak:
        return "(no FMA peak: bench_sgemm did not run)"
    lines = ["| model | GFLOP per run | threads | tinyinfer GFLOP/s | % of peak x threads | "
             "fastest peer GFLOP/s | % of peak x threads |", "|---|---:|---:|---:|---:|---:|---:|"]
    for m in models:
        f = flops.get(m)
        if not f:
            continue
        for t in threads_list:
            cells = results.get((m, t), {})
            ti = cells.get("tinyinfer")
            bp, bms = best_peer(cells)
            if not ti or "na" in ti:
                continue
            g = f / (ti["median_ms"] * 1e-3) * 1e-9
            row = [m, "%.3f" % (f * 1e-9), str(t), "%.1f" % g, "%.0f%%" % (100 * g / (peak * t))]
            if bp:
                gb = f / (bms * 1e-3) * 1e-9
                row += ["%.1f (%s)" % (gb, LABEL[bp]), "%.0f%%" % (100 * gb / (peak * t))]
            else:
                row += ["-", "-"]
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


# ---- the run -------------------------------------------------------------------------------

def run_one(cmd, timeout=900):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line), None
    why = "signal %d" % -p.returncode if p.returncode < 0 else "rc %d" % p.returncode
    return None, "run failed (%s): %s" % (why, tail_reason(p.stderr, "no output"))


def load_average():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def lscpu_facts():
    facts = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            facts[k.strip()] = v.strip()
    except OSError:
        pass
    return facts


def main_run(a):
    import numpy as np
    date = datetime.date.today().isoformat()
    out_path = a.out or os.path.join(ROOT, "bench", "results", "cpu-%s.md" % date)
    threads_list = [int(t) for t in a.threads.split(",")]
    work = os.path.join(CACHE, "peers")
    os.makedirs(work, exist_ok=True)
    load_start = load_average()
    t_start = time.time()

    status = install_peers(["onnxruntime", "litert", "ncnn", "mnn", "pnnx"], not a.no_install)
    for k, v in status.items():
        log("peers: %s: %s" % (k, "ok " + (version_of(k) or "") if v is None else v))

    # models: name -> (kind, source path)
    models, skipped = [], []
    want = a.models.split(",") if a.models else FP32_MODELS + list(TFLITE_MODELS)
    src = {}
    for m in want:
        if m in FP32_MODELS:
            p = os.path.join(CACHE, "arch", m, "model.onnx")
            if os.path.exists(p):
                src[m] = ("onnx", p)
                models.append(m)
            else:
                skipped.append("%s: %s missing (bench/peers.sh generates it)" % (m, p))
        elif m in TFLITE_MODELS:
            p = os.path.join(SHARED_CORAL, TFLITE_MODELS[m])
            if os.path.exists(p):
                src[m] = ("tflite", os.path.normpath(p))
                models.append(m)
            else:
                skipped.append("%s: %s missing (../shared is absent)" % (m, os.path.normpath(p)))
        else:
            raise SystemExit("unknown model %s (known: %s)" % (m, ", ".join(
                FP32_MODELS + list(TFLITE_MODELS))))
    for s in skipped:
        log("peers: skip " + s)

    # per model: the file each peer runs, or the reason it cannot
    files, refs, flops, quant = {}, {}, {}, {}
    rng = np.random.default_rng(0)
    for m in models:
        kind, path = src[m]
        d = os.path.join(work, m)
        os.makedirs(d, exist_ok=True)
        f = {"tinyinfer": path}
        if kind == "onnx":
            import onnx
            g = onnx.load(path, load_external_data=False).graph
            shape = [dd.dim_value or 1 for dd in g.input[0].type.tensor_type.shape.dim]
            x = rng.uniform(-1, 1, size=shape).astype(np.float32)
            quant[m] = False
            f["onnxruntime"] = path if status["onnxruntime"] is None else {"na": status["onnxruntime"]}
            f["litert"] = {"na": "LiteRT reads .tflite only; no ONNX-to-TFLite converter among "
                                 "the peers' wheels"}
            if status["ncnn"] is not None:
                f["ncnn"] = {"na": status["ncnn"]}
            elif status["pnnx"] is not None:
                f["ncnn"] = {"na": "no converter: " + status["pnnx"]}
            else:
                p_, why = convert_ncnn(path, d, shape)
                f["ncnn"] = p_ if p_ else {"na": why}
            if status["mnn"] is not None:
                f["mnn"] = {"na": status["mnn"]}
            else:
                p_, why = convert_mnn(path, d, "ONNX")
                f["mnn"] = p_ if p_ else {"na": why}
            refs[m] = "onnxruntime" if isinstance(f["onnxruntime"], str) else "tinyinfer"
            flops[m] = model_flops(path)
        else:
            quant[m] = True
            from_litert = status["litert"] is None
            if from_litert:
                code = ("import sys; from ai_edge_litert.interpreter import Interpreter as I; "
                        "i = I(model_path=sys.argv[1]); d = i.get_input_details()[0]; "
                        "print(d['dtype'].__name__, [int(v) for v in d['shape']])")
                p = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True)
                dt, shp = p.stdout.split(" ", 1)
                shape = json.loads(shp)
            else:
                dt, shape = "uint8", [1, 224, 224, 3]
            info = np.iinfo(np.dtype(dt))
            x = rng.integers(info.min, info.max + 1, size=shape).astype(dt)
            f["onnxruntime"] = {"na": "onnxruntime reads ONNX only"}
            f["litert"] = path if from_litert else {"na": status["litert"]}
            f["ncnn"] = {"na": "no TFLite converter for ncnn (pnnx reads TorchScript/ONNX)"}
            if status["mnn"] is not None:
                f["mnn"] = {"na": status["mnn"]}
            else:
                p_, why = convert_mnn(path, d, "TFLITE")
                f["mnn"] = p_ if p_ else {"na": why}
            refs[m] = "litert" if from_litert else "tinyinfer"
        np.save(os.path.join(d, "input.npy"), x)
        if kind != "onnx" and refs[m] == "litert" and litert_reference(path, d, threads_list[0]):
            refs[m] = "litert_ref"
        files[m] = f
        log("peers: %s: %s" % (m, ", ".join("%s %s" % (p, "ok" if isinstance(v, str) else
                                                        "n/a (%s)" % v["na"]) for p, v in f.items())))

    # sgemm probe first (one thread, quiet machine wanted for it too)
    sgemm_text, peak = None, None
    if a.sgemm:
        rep = os.path.join(work, "sgemm.md")
        log("peers: %s %s" % (a.sgemm, rep))
        p = subprocess.run([a.sgemm, rep], capture_output=True, text=True)
        if p.returncode == 0 and os.path.exists(rep):
            sgemm_text = open(rep).read()
            import re
            mm = re.search(r"peak used below: ([0-9.]+) GFLOP/s", sgemm_text)
            peak = float(mm.group(1)) if mm else None

    # timings: per model, per thread count, rounds of all peers with the order rotating
    results = {}
    out_quant = {}
    for m in models:
        d = os.path.join(work, m)
        inp = os.path.join(d, "input.npy")
        for t in threads_list:
            cells = {}
            order = [p for p in PEERS if isinstance(files[m][p], str)]
            for p in PEERS:
                if not isinstance(files[m][p], str):
                    cells[p] = dict(files[m][p])
            for rnd in range(a.rounds):
                k = rnd % len(order) if order else 0
                for p in order[k:] + order[:k]:
                    if "na" in cells.get(p, {}):
                        continue
                    outf = os.path.join(d, "out_%s_t%d.npy" % (p, t)) if rnd == 0 else "-"
                    if p == "tinyinfer":
                        cmd = [a.ti_bench, files[m][p], "--input", inp, "--threads", str(t),
                               "--warmup", str(a.warmup), "--runs", str(a.runs)]
                        if outf != "-":
                            cmd += ["--save-output", outf]
                    else:
                        cmd = [sys.executable, os.path.abspath(__file__), "--worker", p,
                               files[m][p], inp, str(t), str(a.warmup), str(a.runs), outf]
                    r, why = run_one(cmd)
                    if r is None:
                        cells[p] = {"na": why}
                        log("peers: %s t%d %s: %s" % (m, t, p, why))
                        continue
                    c = cells.setdefault(p, {"times_ms": [], "rss_kb": 0, "rss_base_kb": 0})
                    c["times_ms"] += r["times_ms"]
                    c["rss_kb"] = max(c["rss_kb"], r["rss_kb"])
                    c["rss_base_kb"] = r["rss_base_kb"]
                    c.setdefault("load_list", []).append(r["load_ms"])
                    if "out_quant" in r:
                        out_quant[m] = r["out_quant"]
                    log("peers: %s t%d round %d %-11s median %8.2f ms  p90 %8.2f ms  rss %6.1f MiB"
                        % (m, t, rnd + 1, p, r["median_ms"], r["p90_ms"], r["rss_kb"] / 1024))
            for p, c in cells.items():
                if "na" not in c:
                    s = sorted(c["times_ms"])
                    c["median_ms"], c["p90_ms"] = quantile(s, 0.5), quantile(s, 0.9)
                    c["runs"] = len(s)
            results[(m, t)] = cells
        # agreement against the reference peer's output at the first thread count
        ref_peer = refs[m]
        ref_file = os.path.join(d, "out_%s_t%d.npy" % (ref_peer, threads_list[0]))
        if not os.path.exists(ref_file) and ref_peer != "tinyinfer":
            ref_peer = refs[m] = "tinyinfer"
            ref_file = os.path.join(d, "out_tinyinfer_t%d.npy" % threads_list[0])
        if not os.path.exists(ref_file):
            continue
        ref = np.load(ref_file)
        for t in threads_list:
            for p, c in results[(m, t)].items():
                of = os.path.join(d, "out_%s_t%d.npy" % (p, t))
                if "na" in c or not os.path.exists(of):
                    continue
                y = np.load(of)
                if quant[m] and y.dtype.kind == "f" and ref.dtype.kind != "f" and m in out_quant:
                    sc, zp = out_quant[m]
                    y = np.round(y / sc) + zp
                c["agree"] = compare(ref, y, quant[m])

    load_end = load_average()
    write_report(a, out_path, date, models, skipped, threads_list, results, refs, files, status,
                 flops, peak, sgemm_text, load_start, load_end, time.time() - t_start)


def write_report(a, out_path, date, models, skipped, threads_list, results, refs, files, status,
                 flops, peak, sgemm_text, load_start, load_end, seconds):
    cpu = lscpu_facts()
    table, summary = ratio_table(results, models, threads_list, PEERS)
    vers = ["tinyinfer %s (git %s)" % (ti_version(), git_rev())]
    for p in ["onnxruntime", "litert", "ncnn", "mnn", "pnnx"]:
        v = version_of(p)
        vers.append("%s %s" % (PIP[p][2], v) if v else "%s: %s" % (PIP[p][2], status.get(p)))
    cc = os.environ.get("CC", "gcc")
    try:
        ccv = subprocess.run([cc, "-dumpversion"], capture_output=True, text=True).stdout.strip()
    except OSError:
        ccv = "?"
    cmd = os.environ.get("PEERS_COMMAND") or " ".join(["python3", "bench/peers.py"] + sys.argv[1:])
    L = []
    L.append("# CPU peers: tinyinfer against onnxruntime, LiteRT, ncnn and MNN, %s" % date)
    L.append("")
    L.append("Made by `%s` (bench/peers.sh, bench/peers.py, bench/ti_bench.c) in %.0f s." % (cmd, seconds))
    L.append("")
    L.append("- Machine: %s, %s CPUs (%s cores per socket, %s threads per core); Linux %s; "
             "Python %s; tinyinfer built with %s %s -O2 (no -march: run-time ISA dispatch)."
             % (cpu.get("Model name", platform.processor() or "?"), cpu.get("CPU(s)", os.cpu_count()),
                cpu.get("Core(s) per socket", "?"), cpu.get("Thread(s) per core", "?"),
                platform.release(), platform.python_version(), cc, ccv))
    L.append("- Load average (1, 5, 15 min) at the start: %s; at the end: %s. The machine is "
             "shared: a 1-minute load above ~1 means other work took CPU time during the run."
             % (load_start, load_end))
    L.append("- Versions: " + "; ".join(vers) + ".")
    L.append("- Each cell: median (p90) in ms of %d rounds x %d timed runs after %d warm-up runs "
             "per process; every peer and thread count in its own process; rounds interleave "
             "the peers (order rotated each round)." % (a.rounds, a.runs, a.warmup))
    L.append("- Same input for every peer (seeded: float32 uniform in [-1, 1], uint8 uniform "
             "over 0..255). Threads: tinyinfer `num_threads`, onnxruntime intra-op threads "
             "(inter-op 1, sequential, all graph optimisations), LiteRT `num_threads` with "
             "its default XNNPACK delegate, ncnn `opt.num_threads` with fp16/bf16 storage and "
             "arithmetic off (fp32 like the others), MNN `numThread`, precision normal.")
    L.append("- ncnn files come from pnnx (ONNX in), MNN files from MNN's converter; a "
             "converted model whose output differs from the reference is marked and never "
             "counted as fastest. Ratio = tinyinfer median / fastest valid peer median; "
             "**bold** where above the 0.8 goal of issue #6.")
    if skipped:
        L.append("- Skipped: " + "; ".join(skipped) + ".")
    L.append("")
    L.append("## Time per run, ms: median (p90)")
    L.append("")
    L.append(table)
    L.append("")
    if summary:
        L.append("Ratios tinyinfer / fastest peer:")
        L.append("")
        L.append("| model | " + " | ".join("%d thread%s" % (t, "s" if t > 1 else "")
                                             for t in threads_list) + " |")
        L.append("|---|" + "---:|" * len(threads_list))
        for m in models:
            row = [m]
            for t in threads_list:
                hit = [s for s in summary if s[0] == m and s[1] == t]
                row.append("%.2f (%s)" % (hit[0][3], LABEL[hit[0][2]]) if hit else "-")
            L.append("| " + " | ".join(row) + " |")
        L.append("")
    L.append("## Outputs against the reference")
    L.append("")
    L.append("Reference: onnxruntime for the ONNX models (output 0 of the first round at %d "
             "thread(s)), TFLite's reference kernels (LiteRT with OpResolverType.BUILTIN_REF, "
             "one untimed run on the same input) for the TFLite ones. fp32 agrees when top-1 "
             "matches and max abs diff <= %g x max |reference|; uint8 / int8 when top-1 matches "
             "and no value is more than %d steps off (TFLite's optimized kernels and XNNPACK "
             "round some layers differently from its reference kernels). Top-1 matches when the "
             "peer's best class is a best class of the reference (random inputs give ties)."
             % (threads_list[0], FP32_REL_TOL, QUANT_STEP_TOL))
    L.append("")
    L.append(agreement_table(results, models, threads_list, PEERS, refs))
    L.append("")
    L.append("## Peak RSS per process, MiB (growth over the process before the model was loaded)")
    L.append("")
    L.append("VmHWM (peak resident set) of the timing process, read from /proc/self/status "
             "at its end (ru_maxrss would include the parent's peak: Linux carries it through "
             "fork and exec); in brackets the part above its resident set "
             "before loading the model. The Python peers' base includes the interpreter, numpy "
             "and the runtime's own library (~30-80 MiB); ti_bench's is a few hundred KiB.")
    L.append("")
    L.append(rss_table(results, models, threads_list, PEERS))
    L.append("")
    L.append("## Load: model file to a session ready to run, ms")
    L.append("")
    L.append("Each timing process's wall clock from reading the model to a session (interpreter, "
             "net) ready for its first run, untimed by the runs: median of the rounds (fastest-"
             "slowest). tinyinfer: ti_model_load_file + ti_session_create (weights packed there); "
             "onnxruntime: InferenceSession with its graph optimisations; LiteRT: Interpreter + "
             "allocate_tensors; ncnn: load_param + load_model; MNN: Interpreter + createSession. "
             "The first run, which some runtimes use to finish preparing, is among the warm-up "
             "runs, not here.")
    L.append("")
    L.append(load_table(results, models, threads_list, PEERS))
    L.append("")
    L.append("## Efficiency: share of the FMA peak")
    L.append("")
    L.append("GFLOP per run counts 2 x multiply-adds of Conv, Gemm and MatMul (ONNX shapes); "
             "peak from bench/sgemm.c's probe (%s GFLOP/s per core), times the thread count."
             % ("%.1f" % peak if peak else "?"))
    L.append("")
    L.append(efficiency_table(results, models, threads_list, flops, peak))
    L.append("")
    if sgemm_text:
        L.append("## SGEMM (bench/sgemm.c, the same run)")
        L.append("")
        L.append(sgemm_text.replace("# SGEMM benchmark", "### SGEMM benchmark", 1).strip())
        L.append("")
    text = "\n".join(L) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        f.write(text)
    print(text)
    log("peers: wrote " + out_path)


def ti_version():
    try:
        for line in open(os.path.join(ROOT, "tinyinfer.h")):
            if "TINYINFER_VERSION_STRING" in line and "define" in line:
                return line.split('"')[1]
    except OSError:
        pass
    return "?"


def git_rev():
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                       text=True)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src", "tinyinfer.h"],
                           capture_output=True, text=True).stdout.strip()
    return (p.stdout.strip() or "?") + (" + uncommitted src changes" if dirty else "")


# ---- self test: tables and agreement on fake results (no network, no peers) --------------

def self_test():
    import numpy as np
    fails, ran = [], []

    def check(cond, what):
        ran.append(what)
        if not cond:
            fails.append(what)

    ref = np.array([0.1, 0.9, 0.3], np.float32)
    check(compare(ref, ref + 1e-5, False)["ok"], "fp32 near output agrees")
    check(not compare(ref, ref[::-1], False)["ok"], "fp32 swapped output differs")
    check(not compare(ref, np.array([0.1, np.nan, 0.3]), False)["ok"], "NaN differs")
    q = np.array([0, 200, 200, 3], np.uint8)
    check(compare(q, np.array([0, 198, 201, 3], np.uint8), True)["ok"], "quant tie + 2 steps ok")
    check(not compare(q, np.zeros(4, np.uint8), True)["ok"], "all-zero quant output differs")
    check(not compare(q, np.array([0, 200, 180, 3], np.uint8), True)["ok"],
          "quant 20 steps off differs")
    check(not compare(ref, ref[:2], False)["ok"], "size mismatch differs")

    def cell(ms, ok=True):
        return {"median_ms": ms, "p90_ms": ms * 1.1, "rss_kb": 2048, "rss_base_kb": 1024,
                "times_ms": [ms], "agree": {"ok": ok, "top1": ok, "maxdiff": 0.0, "rel": 0.0,
                                            "note": ""}}
    results = {("m", 1): {"tinyinfer": cell(10), "onnxruntime": cell(8), "litert": {"na": "x"},
                          "ncnn": cell(4, ok=False), "mnn": cell(12)},
               ("m", 2): {"tinyinfer": cell(5), "onnxruntime": cell(6), "litert": {"na": "x"},
                          "ncnn": {"na": "pnnx failed"}, "mnn": cell(7)}}
    table, summary = ratio_table(results, ["m"], [1, 2], PEERS)
    check(summary == [("m", 1, "onnxruntime", 10 / 8), ("m", 2, "onnxruntime", 5 / 6)],
          "ratios skip the differing peer: %r" % (summary,))
    check("**output differs**" in table and "n/a: pnnx failed" in table, "table marks")
    check("**1.25**" in table and "| 0.83 |" not in table, "bold above 0.8")
    check("onnxruntime" in agreement_table(results, ["m"], [1, 2], PEERS, {"m": "onnxruntime"}),
          "agreement table")
    check("2.0 (+1.0)" in rss_table(results, ["m"], [1, 2], PEERS), "rss table")
    results[("m", 1)]["tinyinfer"]["load_list"] = [30.0, 10.0, 20.0]
    results[("m", 1)]["onnxruntime"]["load_list"] = [40.0, 50.0]
    results[("m", 1)]["ncnn"]["load_list"] = [1.0]
    lt = load_table(results, ["m"], [1, 2], PEERS)
    check("| m | 1 | 20 (10-30) | 40 (40-50) | - | 1 (1-1) | - | 0.50 |" in lt,
          "load table: medians, ranges, ratio without the differing peer: %s" % lt)
    eff = efficiency_table(results, ["m"], [1, 2], {"m": 1e9}, 100.0)
    check("| 100.0 | 100% |" in eff, "efficiency: 1 GFLOP in 10 ms = 100 GFLOP/s: %s" % eff)
    check(quantile(sorted([5, 1, 4, 2, 3]), 0.5) == 3 and quantile(list(range(1, 11)), 0.9) == 9,
          "quantiles")
    for f in fails:
        print("FAIL: self-test: " + f)
    print("%d passed, %d failed" % (len(ran) - len(fails), len(fails)))
    return 1 if fails else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        peer, model, inp, t, w, r, out = sys.argv[2:9]
        worker(peer, model, inp, int(t), int(w), int(r), out)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ti-bench", default=os.path.join(ROOT, "build", "ti_bench"))
    ap.add_argument("--sgemm", default=None, help="build/bench_sgemm: FMA peak and GEMM report")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=50, help="timed runs per process (>= 50)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--models", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not os.access(a.ti_bench, os.X_OK):
        raise SystemExit("no %s: run bench/peers.sh, which builds it" % a.ti_bench)
    main_run(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
