"""Writes the QDQ model tests: small float ONNX models built with onnx.helper, quantized by
onnxruntime.quantization.quantize_static in QDQ format (per-tensor and per-channel
weights, uint8 and int8 activations), with onnxruntime's outputs as the reference (ORT's
default graph optimizations fuse the QDQ patterns into its integer kernels, as tinyinfer's
fusion pass does). Layout: OUTDIR/<name>/model.onnx + test_data_set_0/{input,output}_K.pb;
OUTDIR/list.txt has one line per test: "<name> <fused op or -> <count> <scale>": the op that
the session's node info must show that many times ("-": no QLinear* node may appear: the
pattern must not fuse), and the scale of output 0's final DequantizeLinear (one
quantization unit of the float output). tests/models/test_qdq.c reads them (./build.sh job j_qdq).
Everything is seeded; a rerun with the same onnxruntime writes the same outputs.

Usage: python3 gen_qdq_models.py [OUTDIR]   (default: tests/models/qdq beside this file)
       python3 gen_qdq_models.py --bench DIR  (the larger models of bench/qdq.c, not committed)
Needs: onnx, onnxruntime, numpy."""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "qdq")


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


def model(nodes, inits, x_shape, y_shape):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def conv_relu(rng):
    w = rng.normal(0, 0.3, (8, 3, 3, 3))
    b = rng.normal(0, 0.2, (8,))
    n = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"])]
    return model(n, [init("w", w), init("b", b)], [1, 3, 9, 7], [1, 8, 9, 7])


def grouped_conv(rng):
    w = rng.normal(0, 0.3, (8, 2, 3, 3))
    b = rng.normal(0, 0.2, (8,))
    n = [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=4, strides=[2, 2], pads=[1, 0, 1, 1])]
    return model(n, [init("w", w), init("b", b)], [2, 8, 7, 6], [2, 8, 4, 3])


def matmul(rng):
    w = rng.normal(0, 0.3, (12, 7))
    n = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    return model(n, [init("w", w)], [2, 5, 12], [2, 5, 7])


def gemm(rng):
    w = rng.normal(0, 0.3, (6, 10))
    n = [helper.make_node("Gemm", ["x", "w"], ["y"], transB=1)]
    return model(n, [init("w", w)], [3, 10], [3, 6])


def net(rng):
    w1 = rng.normal(0, 0.3, (6, 2, 3, 3))
    b1 = rng.normal(0, 0.1, (6,))
    w2 = rng.normal(0, 0.2, (4, 6, 3, 3))
    b2 = rng.normal(0, 0.1, (4,))
    w3 = rng.normal(0, 0.2, (4 * 4 * 4, 5))
    n = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c1"], ["r1"]),
         helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], strides=[2, 2], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c2"], ["r2"]),
         helper.make_node("Reshape", ["r2", "shape"], ["f"]),
         helper.make_node("MatMul", ["f", "w3"], ["y"])]
    shape = numpy_helper.from_array(np.array([1, 64], dtype=np.int64), "shape")
    return model(n, [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2), init("w3", w3), shape],
                 [1, 2, 8, 8], [1, 5])


class Reader(CalibrationDataReader):
    def __init__(self, shape, rng):
        self.data = iter([{"x": rng.normal(0, 1, shape).astype(np.float32)} for _ in range(8)])

    def get_next(self):
        return next(self.data, None)


def add_float_output(path, tensor):
    """The conv's float output also becomes a graph output: the QDQ pattern must not fuse."""
    m = onnx.load(path)
    m.graph.output.append(helper.make_tensor_value_info(tensor, TensorProto.FLOAT, None))
    onnx.save(m, path)


def insert_act(path, act):
    """Puts Relu or Clip(0, 6) between the Conv and its QuantizeLinear (the quantizer folds
    them into the output range and drops them; written by hand they stay in the graph):
    tinyinfer fuses them as a clamp of the quantized output, onnxruntime may run them in
    float, so outputs may be one unit apart."""
    m = onnx.load(path)
    conv = [n for n in m.graph.node if n.op_type == "Conv"][0]
    out = conv.output[0]
    conv.output[0] = out + "_pre"
    idx = list(m.graph.node).index(conv) + 1
    if act == "Relu":
        node = helper.make_node("Relu", [out + "_pre"], [out])
    else:
        m.graph.initializer.extend([numpy_helper.from_array(np.array(0.0, np.float32), "clip_lo"),
                                    numpy_helper.from_array(np.array(6.0, np.float32), "clip_hi")])
        node = helper.make_node("Clip", [out + "_pre", "clip_lo", "clip_hi"], [out])
    m.graph.node.insert(idx, node)
    onnx.checker.check_model(m)
    onnx.save(m, path)


def write(name, fm, act, wt, per_channel, fused, count, rng, nofuse_tensor=None, float_act=None):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    shape = [v.dim_value for v in fm.graph.input[0].type.tensor_type.shape.dim]
    with tempfile.TemporaryDirectory() as tmp:
        fp = os.path.join(tmp, "f.onnx")
        onnx.save(fm, fp)
        qp = os.path.join(d, "model.onnx")
        quantize_static(fp, qp, Reader(shape, rng), quant_format=QuantFormat.QDQ,
                        activation_type=act, weight_type=wt, per_channel=per_channel,
                        extra_options={"ActivationSymmetric": False})
    if nofuse_tensor:
        add_float_output(qp, nofuse_tensor)
    if float_act:
        insert_act(qp, float_act)
    x = rng.normal(0, 1, shape).astype(np.float32)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(qp, so, providers=["CPUExecutionProvider"])
    outs = sess.run(None, {"x": x})
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    for i, (o, info) in enumerate(zip(outs, sess.get_outputs())):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(o, info.name).SerializeToString())
    q = onnx.load(qp)
    inits = {i.name: numpy_helper.to_array(i) for i in q.graph.initializer}
    dq = [n for n in q.graph.node if n.output[0] == q.graph.output[0].name][0]
    unit = float(inits[dq.input[1]])
    with open(os.path.join(d, "tolerance.txt"), "w") as f:  # one quantization unit, for onnx_runner
        f.write("0 %.9g\n" % (unit * 1.001))
    return "%s %s %d %.9g" % (name, fused, count, unit)


def bench_net(rng):
    """A larger net for bench/qdq.c (not committed): 1x32x56x56, two 3x3 convs, a MatMul."""
    w1 = rng.normal(0, 0.1, (32, 32, 3, 3))
    w2 = rng.normal(0, 0.1, (64, 32, 3, 3))
    w3 = rng.normal(0, 0.02, (64 * 28 * 28, 16))
    n = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c1"], ["r1"]),
         helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], strides=[2, 2], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c2"], ["r2"]),
         helper.make_node("Reshape", ["r2", "shape"], ["f"]),
         helper.make_node("MatMul", ["f", "w3"], ["y"])]
    shape = numpy_helper.from_array(np.array([1, 64 * 28 * 28], dtype=np.int64), "shape")
    return model(n, [init("w1", w1), init("b1", rng.normal(0, 0.1, 32)), init("w2", w2),
                     init("b2", rng.normal(0, 0.1, 64)), init("w3", w3), shape], [1, 32, 56, 56], [1, 16])


def bench(outdir):
    """bench_qdq.onnx (QDQ) and bench_qop.onnx (QLinearConv / QLinearMatMul operators)."""
    rng = np.random.default_rng(7)
    os.makedirs(outdir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fp = os.path.join(tmp, "f.onnx")
        onnx.save(bench_net(rng), fp)
        for fmt, name in ((QuantFormat.QDQ, "bench_qdq.onnx"), (QuantFormat.QOperator, "bench_qop.onnx")):
            quantize_static(fp, os.path.join(outdir, name), Reader([1, 32, 56, 56], rng), quant_format=fmt,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--bench":
        bench(sys.argv[2])
        return
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261122)
    U8, I8 = QuantType.QUInt8, QuantType.QInt8
    lines = [
        write("conv_relu_u8_tensor", conv_relu(rng), U8, U8, False, "QLinearConv", 1, rng),
        write("conv_relu_u8_channel", conv_relu(rng), U8, I8, True, "QLinearConv", 1, rng),
        write("conv_relu_i8_channel", conv_relu(rng), I8, I8, True, "QLinearConv", 1, rng),
        write("grouped_conv_i8_channel", grouped_conv(rng), I8, I8, True, "QLinearConv", 1, rng),
        write("grouped_conv_u8_tensor", grouped_conv(rng), U8, U8, False, "QLinearConv", 1, rng),
        write("matmul_u8_tensor", matmul(rng), U8, I8, False, "QLinearMatMul", 1, rng),
        write("matmul_i8_channel", matmul(rng), I8, I8, True, "QLinearMatMul", 1, rng),
        write("gemm_u8_tensor", gemm(rng), U8, U8, False, "QLinearMatMul", 1, rng),
        write("gemm_i8_channel", gemm(rng), I8, I8, True, "QLinearMatMul", 1, rng),
        write("net_u8_channel", net(rng), U8, I8, True, "QLinearConv", 2, rng),
        write("net_i8_tensor", net(rng), I8, I8, False, "QLinearConv", 2, rng),
        write("conv_nofuse_u8", conv_relu(rng), U8, I8, True, "-", 0, rng, nofuse_tensor="y_QuantizeLinear_Input"),
        write("conv_relu_kept_i8", grouped_conv(rng), I8, I8, True, "QLinearConv", 1, rng, float_act="Relu"),
        write("conv_clip_kept_u8", grouped_conv(rng), U8, I8, False, "QLinearConv", 1, rng, float_act="Clip"),
    ]
    with open(os.path.join(OUT, "list.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
