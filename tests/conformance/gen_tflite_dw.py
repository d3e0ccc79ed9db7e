"""Writes the 8-bit DEPTHWISE_CONV_2D geometry tests: single-node .tflite models built
directly with the flatbuffer schema that ai-edge-litert ships (no TensorFlow), on random
geometries that reach every branch of tinyinfer's SIMD depthwise paths (cpu/tfl_conv.c):
3 x 3 at stride 1 and 2 with SAME and VALID padding (the AVX512-VNNI row kernel, its pad
rows at the top and bottom, odd and even row lengths, runs that end before a row's last
pixel), batches of 2 (a row's pixels never run into the next image), channel counts that are
not multiples of 16 or 32 (the kernels' masked tails), dilated rows, 5 x 5 and 2 x 3
windows, channel multipliers 2 (the other paths), fused RELU / RELU6, int8 per-channel
weights (TF2 full-integer) and uint8 per-tensor weights with a zero point (TF1 / Coral).
The layout is gen_tflite_ops.py's: OUTDIR/<name>/model.tflite + test_data_set_0/
{input,output}_0.pb (onnx TensorProto) + tolerance.txt "0 0" (bit for bit).

The reference outputs come from ai-edge-litert with TFLite's reference kernels
(OpResolverType.BUILTIN_REF, one thread). Seeded: a rerun with the same ai-edge-litert
writes the same files.

Usage: python3 gen_tflite_dw.py OUTDIR
Needs: ai-edge-litert (its schema_py_generated and the flatbuffers package), onnx, numpy."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
from onnx import numpy_helper  # noqa: E402

SEED = 23

# name, dtype, batch, height, width, channels, multiplier, kernel (h, w), stride (h, w),
# dilation (h, w), padding, activation
CASES = [
    ("s1_same_56", "int8", 1, 4, 56, 144, 1, (3, 3), (1, 1), (1, 1), "SAME", "RELU6"),
    ("s1_same_odd", "int8", 1, 7, 7, 40, 1, (3, 3), (1, 1), (1, 1), "SAME", "NONE"),
    ("s1_same_b2", "int8", 2, 5, 12, 33, 1, (3, 3), (1, 1), (1, 1), "SAME", "RELU"),
    ("s1_valid", "int8", 1, 6, 13, 96, 1, (3, 3), (1, 1), (1, 1), "VALID", "RELU6"),
    ("s1_narrow", "int8", 2, 4, 3, 17, 1, (3, 3), (1, 1), (1, 1), "SAME", "NONE"),
    ("s1_one_col", "int8", 1, 5, 1, 64, 1, (3, 3), (1, 1), (1, 1), "SAME", "NONE"),
    ("s2_same_even", "int8", 1, 12, 28, 96, 1, (3, 3), (2, 2), (1, 1), "SAME", "RELU6"),
    ("s2_same_odd", "int8", 2, 9, 15, 48, 1, (3, 3), (2, 2), (1, 1), "SAME", "NONE"),
    ("s2_valid", "int8", 1, 9, 17, 80, 1, (3, 3), (2, 2), (1, 1), "VALID", "RELU"),
    ("s21_mixed", "int8", 1, 10, 11, 24, 1, (3, 3), (2, 1), (1, 1), "SAME", "NONE"),
    ("s1_dil_rows", "int8", 1, 9, 10, 32, 1, (3, 3), (1, 1), (2, 1), "SAME", "NONE"),
    ("s1_dil_cols", "int8", 1, 8, 12, 32, 1, (3, 3), (1, 1), (1, 2), "SAME", "NONE"),
    ("k5_s1", "int8", 1, 8, 14, 40, 1, (5, 5), (1, 1), (1, 1), "SAME", "RELU6"),
    ("k23_s1", "int8", 1, 6, 9, 20, 1, (2, 3), (1, 1), (1, 1), "SAME", "NONE"),
    ("m2_s1", "int8", 1, 6, 8, 12, 2, (3, 3), (1, 1), (1, 1), "SAME", "NONE"),
    ("u_s1_same", "uint8", 1, 8, 29, 72, 1, (3, 3), (1, 1), (1, 1), "SAME", "RELU6"),
    ("u_s1_b2", "uint8", 2, 5, 10, 35, 1, (3, 3), (1, 1), (1, 1), "SAME", "NONE"),
    ("u_s2_same", "uint8", 1, 11, 22, 64, 1, (3, 3), (2, 2), (1, 1), "SAME", "RELU6"),
    ("u_s2_valid", "uint8", 2, 7, 9, 19, 1, (3, 3), (2, 2), (1, 1), "VALID", "NONE"),
    ("u_k5_s2", "uint8", 1, 9, 13, 30, 1, (5, 5), (2, 2), (1, 1), "SAME", "NONE"),
]


def reference(x, wt, mult, k, st, dil, padding):
    """The real depthwise sums (no bias) of x [n, h, w, c] and weights [1, kh, kw, c * mult]
    with TFLite's padding (SAME: the smaller half before)."""
    n, h, w, c = x.shape
    def out_pad(size, kk, s, d):
        ext = (kk - 1) * d + 1
        if padding == "VALID":
            return (size - ext) // s + 1, 0
        o = -(-size // s)
        return o, max((o - 1) * s + ext - size, 0) // 2
    oh, pt = out_pad(h, k[0], st[0], dil[0])
    ow, pl = out_pad(w, k[1], st[1], dil[1])
    y = np.zeros((n, oh, ow, c * mult))
    xm = np.repeat(x, mult, axis=3)
    for fy in range(k[0]):
        for fx in range(k[1]):
            iy = np.arange(oh) * st[0] - pt + fy * dil[0]
            ix = np.arange(ow) * st[1] - pl + fx * dil[1]
            vy, vx = (iy >= 0) & (iy < h), (ix >= 0) & (ix < w)
            tap = np.zeros((n, oh, ow, c * mult))
            yi, xi = np.nonzero(vy)[0], np.nonzero(vx)[0]
            tap[:, yi[:, None], xi[None, :]] = xm[:, iy[vy][:, None], ix[vx][None, :]]
            y += tap * wt[0, fy, fx]
    return y


def build(rng, dt, n, h, w, c, mult, k, st, dil, padding, act):
    """The model's bytes and a random input."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s
    oc = c * mult
    i8 = dt == "int8"
    ttype = s.TensorType.INT8 if i8 else s.TensorType.UINT8
    lo, hi = (-128, 127) if i8 else (0, 255)

    def quant(scale, zp, dim=0):
        q = s.QuantizationParametersT()
        q.scale = [float(v) for v in np.atleast_1d(scale)]
        q.zeroPoint = [int(v) for v in np.atleast_1d(zp)]
        q.quantizedDimension = dim
        return q

    def tensor(name, shape, tt, buf, q):
        t = s.TensorT()
        t.name, t.shape, t.type, t.buffer, t.quantization = name, list(shape), tt, buf, q
        return t

    def buffer(data):
        b = s.BufferT()
        b.data = None if data is None else np.frombuffer(data.tobytes(), np.uint8)
        return b

    x_scale, x_zp = 0.02 + 0.05 * rng.random(), int(rng.integers(lo, hi + 1))
    if i8:  # per-channel symmetric weights
        wq = rng.integers(-127, 128, size=(1, k[0], k[1], oc)).astype(np.int8)
        w_scale, w_zp = 0.002 + 0.01 * rng.random(oc), np.zeros(oc, np.int64)
    else:  # per-tensor asymmetric (zero points away from 0 and 255: bo fits a byte)
        wq = rng.integers(0, 256, size=(1, k[0], k[1], oc)).astype(np.uint8)
        w_scale, w_zp = 0.002 + 0.01 * rng.random(), int(rng.integers(1, 255))
    x = rng.integers(lo, hi + 1, size=(n, h, w, c)).astype(np.int8 if i8 else np.uint8)
    # the sums in integers, then a bias that centres each channel near 0 and weight scales
    # that spread the real outputs by about 3 around it (RELU6's range matters), the output
    # over +-6: not too many outputs at the clamp
    acc = reference(x.astype(np.float64) - x_zp, wq.astype(np.float64) - w_zp, mult, k, st,
                    dil, padding)
    mean = acc.reshape(-1, oc).mean(axis=0)
    bias = (np.round(-mean) + rng.integers(-300, 300, size=oc)).astype(np.int32)
    real = (acc + bias) * x_scale * w_scale
    w_scale = w_scale * (3.0 / max(float(real.std()), 1e-9))
    wquant = quant(w_scale, w_zp, 3 if i8 else 0)
    b_scale = x_scale * np.broadcast_to(np.asarray(w_scale, np.float64), (oc,))
    y_scale = 12.0 / 255.0
    y_zp = int(rng.integers(lo + 100, hi - 100))
    tensors = [
        tensor("x", (n, h, w, c), ttype, 0, quant(x_scale, x_zp)),
        tensor("w", wq.shape, ttype, 1, wquant),
        tensor("b", (oc,), s.TensorType.INT32, 2, quant(b_scale, np.zeros(oc, np.int64))),
    ]
    ph = (h - ((k[0] - 1) * dil[0] + 1)) // st[0] + 1 if padding == "VALID" else -(-h // st[0])
    pw = (w - ((k[1] - 1) * dil[1] + 1)) // st[1] + 1 if padding == "VALID" else -(-w // st[1])
    tensors.append(tensor("y", (n, ph, pw, oc), ttype, 0, quant(y_scale, y_zp)))
    opt = s.DepthwiseConv2DOptionsT()
    opt.padding = s.Padding.SAME if padding == "SAME" else s.Padding.VALID
    opt.strideH, opt.strideW = st
    opt.dilationHFactor, opt.dilationWFactor = dil
    opt.depthMultiplier = mult
    opt.fusedActivationFunction = {"NONE": s.ActivationFunctionType.NONE,
                                   "RELU": s.ActivationFunctionType.RELU,
                                   "RELU6": s.ActivationFunctionType.RELU6}[act]
    op = s.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, [0, 1, 2], [3]
    op.builtinOptionsType = s.BuiltinOptions.DepthwiseConv2DOptions
    op.builtinOptions = opt
    code = s.OperatorCodeT()
    code.builtinCode = s.BuiltinOperator.DEPTHWISE_CONV_2D
    code.deprecatedBuiltinCode = s.BuiltinOperator.DEPTHWISE_CONV_2D
    code.version = 6 if i8 else 1
    g = s.SubGraphT()
    g.tensors, g.inputs, g.outputs, g.operators, g.name = tensors, [0], [3], [op], "main"
    m = s.ModelT()
    m.version, m.operatorCodes, m.subgraphs, m.description = 3, [code], [g], "gen_tflite_dw.py"
    m.buffers = [buffer(None), buffer(wq), buffer(bias)]
    b = flatbuffers.Builder(4096)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output()), x


def write_pb(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.array(arr, order="C"), name).SerializeToString())


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(__doc__)
        return 2
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    out = sys.argv[1]
    rng = np.random.default_rng(SEED)
    for case in CASES:
        name, dt = case[0], case[1]
        data, x = build(rng, *case[1:])
        it = Interpreter(model_content=data, num_threads=1,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        y = it.get_tensor(it.get_output_details()[0]["index"])
        d = os.path.join(out, "depthwise_conv_2d_%s_%s" % (dt, name))
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds, exist_ok=True)
        with open(os.path.join(d, "model.tflite"), "wb") as f:
            f.write(data)
        write_pb(os.path.join(ds, "input_0.pb"), x, "x")
        write_pb(os.path.join(ds, "output_0.pb"), y, "y")
        with open(os.path.join(d, "tolerance.txt"), "w") as f:
            f.write("0 0\n")
        print("%-40s x %s -> y %s, %d of %d outputs at the clamp" %
              (os.path.basename(d), x.shape, y.shape,
               int(((y == y.min()) | (y == y.max())).sum()), y.size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
