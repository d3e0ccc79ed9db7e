"""Builds six real network architectures as ONNX with onnx.helper + numpy (no torch needed),
with seeded random weights, and writes them in ONNX's test layout with onnxruntime's
outputs as reference:
  OUTDIR/<name>/model.onnx
  OUTDIR/<name>/test_data_set_0/input_0.pb, output_0.pb
Architectures follow torchvision's definitions (mobilenet_v2, resnet18, squeezenet1_1,
mobilenet_v3_small, efficientnet_b0) and torch.nn.TransformerEncoder (tiny_transformer, as in
shared/tools/export_torchvision.py), written node by node the way torch.onnx exports them.
BatchNormalization stays a separate node after each Conv, with random running statistics, so a
wrong Conv+BN fold changes the result. Weights use He-style scales, each Conv's rescaled by
one factor measured on the test input, so activations stay O(1) through the depth and the
output keeps depending on the input (see Graph.conv). Opsets: 13 for the CNNs except
mobilenet_v3_small (14, for the HardSwish op), 17 for the transformer (LayerNormalization).
The reference comes from onnxruntime's CPU provider with graph optimizations disabled and one
thread, so ORT's own fusions do not shape it. Deterministic: same seed -> same bytes (model
and input always; the reference on a given machine and onnxruntime build).
Usage: python3 gen_arch_models.py OUTDIR [names...]   (SEED env var, default 7)"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import onnxruntime as ort

CNN_OPSET = 13
# HardSwish exists from opset 14 on; mobilenet_v3_small uses it as a real op.
MNV3_OPSET = 14
TRANSFORMER_OPSET = 17
IR_VERSION = 8  # readable by older onnxruntime builds; enough for opset <= 17


def make_divisible(v, divisor=8, min_value=None):
    """torchvision's _make_divisible: round channels to a multiple of 8, never below 90%."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class Graph:
    """Collects nodes and initializers; every helper returns the output tensor name.
    Nodes are also evaluated eagerly (each one alone, by onnxruntime) on the test input, so
    that each Conv's weights can be scaled to give its output a set RMS."""

    def __init__(self, seed, opset, inputs):
        self.rng = np.random.default_rng(seed)
        self.opset = opset
        self.nodes = []
        self.inits = []
        self.count = {}
        self.consts = {}
        self.vals = dict(inputs)

    def uid(self, prefix):
        n = self.count.get(prefix, 0)
        self.count[prefix] = n + 1
        return "%s_%d" % (prefix, n)

    def init(self, arr, prefix):
        name = self.uid(prefix)
        arr = np.ascontiguousarray(arr)
        self.inits.append(numpy_helper.from_array(arr, name))
        self.vals[name] = arr
        return name

    def const(self, key, arr):
        """A shared initializer (same value used by many nodes, e.g. Clip bounds)."""
        if key not in self.consts:
            self.consts[key] = self.init(arr, key)
        return self.consts[key]

    def run1(self, op, inputs, n_out, attrs):
        """Runs one node alone on numpy values; returns the list of outputs."""
        ins = ["i%d" % i for i in range(len(inputs))]
        outs = ["o%d" % i for i in range(n_out)]
        g = helper.make_graph(
            [helper.make_node(op, ins, outs, **attrs)], "eager",
            [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
             for n, v in zip(ins, inputs)],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outs])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = IR_VERSION
        sess = ort.InferenceSession(m.SerializeToString(), _session_options(),
                                    providers=["CPUExecutionProvider"])
        return sess.run(None, dict(zip(ins, inputs)))

    def node(self, op, inputs, n_out=1, **attrs):
        name = self.uid(op)
        outs = ["%s_out%d" % (name, i) if n_out > 1 else name + "_out" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        for o, v in zip(outs, self.run1(op, [self.vals[i] for i in inputs], n_out, attrs)):
            self.vals[o] = v
        return outs if n_out > 1 else outs[0]

    # --- random parameters -------------------------------------------------------------
    def normal(self, shape, std):
        return (self.rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)

    def uniform(self, shape, lo, hi):
        return self.rng.uniform(lo, hi, size=shape).astype(np.float32)

    # --- layers --------------------------------------------------------------------------
    def conv(self, x, cin, cout, k, stride=1, groups=1, pad=None, bias=False, spread=1.0):
        """Conv with He-style weights (std sqrt(2 / fan_in)), then all weights scaled by one
        factor so that the output's RMS over the test input is about `spread`. The factor is
        a power of 2^(1/8), so last-bit differences in the measurement do not change the
        bytes. Why: with plain random weights and random BN statistics the input's signal
        fades through the depth (efficientnet_b0's output then hardly depends on its input,
        so kernel mistakes would hide under the tolerance). One factor per layer, not per
        channel: per-channel scaling blows up nearly dead channels and makes the net chaotic
        (float rounding then grows past the tolerance)."""
        if pad is None:
            pad = (k - 1) // 2
        fan_in = (cin // groups) * k * k
        w = self.normal((cout, cin // groups, k, k), np.sqrt(2.0 / fan_in))
        attrs = dict(kernel_shape=[k, k], strides=[stride, stride], pads=[pad, pad, pad, pad],
                     group=groups, dilations=[1, 1])
        y = self.run1("Conv", [self.vals[x], w], 1, attrs)[0].astype(np.float64)
        rms = float(np.sqrt((y * y).mean()))
        step = np.round(np.log2(max(rms, 1e-6) / spread) * 8.0)
        w = (w * np.float32(2.0 ** (-step / 8.0))).astype(np.float32)
        ins = [x, self.init(w, "conv_w")]
        if bias:
            ins.append(self.init(self.normal((cout,), 0.1), "conv_b"))
        return self.node("Conv", ins, **attrs)

    def bn(self, x, c, eps=1e-5):
        """BatchNormalization with random running stats (mean N(0,0.1), var U(0.75,1.25),
        scale U(0.75,1.25), bias N(0,0.1)), as export_torchvision.py sets them."""
        scale = self.init(self.uniform((c,), 0.75, 1.25), "bn_scale")
        bias = self.init(self.normal((c,), 0.1), "bn_bias")
        mean = self.init(self.normal((c,), 0.1), "bn_mean")
        var = self.init(self.uniform((c,), 0.75, 1.25), "bn_var")
        return self.node("BatchNormalization", [x, scale, bias, mean, var], epsilon=eps, momentum=0.9)

    def act(self, x, kind):
        if kind is None:
            return x
        if kind == "relu":
            return self.node("Relu", [x])
        if kind == "relu6":  # torch exports ReLU6 as Clip with min/max inputs (opset >= 11)
            lo = self.const("clip_min", np.array(0.0, dtype=np.float32))
            hi = self.const("clip_max", np.array(6.0, dtype=np.float32))
            return self.node("Clip", [x, lo, hi])
        if kind == "hardswish":
            return self.node("HardSwish", [x])
        if kind == "hardsigmoid":  # torch's Hardsigmoid: relu6(x + 3) / 6
            return self.node("HardSigmoid", [x], alpha=1.0 / 6.0, beta=0.5)
        if kind == "sigmoid":
            return self.node("Sigmoid", [x])
        if kind == "silu":  # torch exports SiLU as x * Sigmoid(x) at opset 13
            return self.node("Mul", [x, self.node("Sigmoid", [x])])
        raise ValueError(kind)

    def conv_bn_act(self, x, cin, cout, k, stride=1, groups=1, act=None, eps=1e-5, spread=1.0):
        """torchvision's Conv2dNormActivation: Conv (no bias) + BatchNorm + activation."""
        y = self.conv(x, cin, cout, k, stride, groups, spread=spread)
        return self.act(self.bn(y, cout, eps), act)

    def linear_gemm(self, x, fin, fout):
        """nn.Linear on [N, fin] as torch exports it: Gemm with weight [fout, fin], transB=1."""
        w = self.init(self.normal((fout, fin), np.sqrt(1.0 / fin)), "fc_w")
        b = self.init(self.normal((fout,), 0.1), "fc_b")
        return self.node("Gemm", [x, w, b], alpha=1.0, beta=1.0, transB=1)

    def linear_matmul(self, x, fin, fout, gain=1.0):
        """nn.Linear on a 3-D input as torch exports it: MatMul with weight^T [fin, fout] + Add."""
        w = self.init(self.normal((fin, fout), np.sqrt(gain / fin)), "lin_w")
        b = self.init(self.normal((fout,), 0.1), "lin_b")
        return self.node("Add", [self.node("MatMul", [x, w]), b])

    def global_pool_flatten(self, x):
        return self.node("Flatten", [self.node("GlobalAveragePool", [x])], axis=1)

    def squeeze_excite(self, x, c, csq, act, scale_act):
        """torchvision.ops.SqueezeExcitation: pool, 1x1 conv (bias), act, 1x1 conv (bias),
        gate, multiply the input by the per-channel gate."""
        s = self.node("GlobalAveragePool", [x])
        s = self.act(self.conv(s, c, csq, 1, bias=True), act)
        s = self.act(self.conv(s, csq, c, 1, bias=True), scale_act)
        return self.node("Mul", [s, x])

    def model(self, name, in_shape, out_shape, y):
        for n in self.nodes:  # the graph output is called "output"
            n.output[:] = ["output" if o == y else o for o in n.output]
        y = "output"
        g = helper.make_graph(self.nodes, name,
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(in_shape))],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, list(out_shape))],
                              initializer=self.inits)
        m = helper.make_model(g, producer_name="tinyinfer-gen_arch_models", producer_version="1",
                              opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = IR_VERSION
        return m


# --------------------------------------------------------------------------------------
# torchvision.models.mobilenet_v2
def mobilenet_v2(g):
    x = g.conv_bn_act("input", 3, 32, 3, stride=2, act="relu6")
    cin = 32
    setting = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
               (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    for t, c, n, s in setting:
        cout = make_divisible(c)
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = int(round(cin * t))
            h = x
            if t != 1:
                h = g.conv_bn_act(h, cin, hidden, 1, act="relu6")
            h = g.conv_bn_act(h, hidden, hidden, 3, stride=stride, groups=hidden, act="relu6")
            h = g.conv_bn_act(h, hidden, cout, 1, act=None)
            x = g.node("Add", [x, h]) if stride == 1 and cin == cout else h
            cin = cout
    x = g.conv_bn_act(x, cin, 1280, 1, act="relu6")
    # adaptive_avg_pool2d(x, (1, 1)) written as ReduceMean over H, W here (torch would emit
    # GlobalAveragePool; the other CNNs use that), then flatten + Linear.
    x = g.node("ReduceMean", [x], axes=[2, 3], keepdims=1)
    x = g.node("Flatten", [x], axis=1)
    y = g.linear_gemm(x, 1280, 1000)
    return g.model("mobilenet_v2", (1, 3, 224, 224), (1, 1000), y)


# --------------------------------------------------------------------------------------
# torchvision.models.resnet18
def resnet18(g):
    x = g.conv_bn_act("input", 3, 64, 7, stride=2, act="relu")
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for i in range(2):  # BasicBlock x2
            s = stride if i == 0 else 1
            h = g.conv_bn_act(x, cin, planes, 3, stride=s, act="relu")
            h = g.conv_bn_act(h, planes, planes, 3, act=None)
            idn = x
            if s != 1 or cin != planes:  # downsample: 1x1 conv (stride) + BN
                idn = g.conv_bn_act(x, cin, planes, 1, stride=s, act=None)
            x = g.node("Relu", [g.node("Add", [h, idn])])
            cin = planes
    x = g.global_pool_flatten(x)
    y = g.linear_gemm(x, 512, 1000)
    return g.model("resnet18", (1, 3, 224, 224), (1, 1000), y)


# --------------------------------------------------------------------------------------
# torchvision.models.squeezenet1_1 (no BatchNormalization in the original; convs have bias)
def squeezenet1_1(g):

    def fire(x, cin, sq, e1, e3):
        s = g.node("Relu", [g.conv(x, cin, sq, 1, bias=True)])
        a = g.node("Relu", [g.conv(s, sq, e1, 1, bias=True)])
        b = g.node("Relu", [g.conv(s, sq, e3, 3, pad=1, bias=True)])
        return g.node("Concat", [a, b], axis=1)

    def maxpool(x):
        return g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)

    x = g.node("Relu", [g.conv("input", 3, 64, 3, stride=2, pad=0, bias=True)])
    x = maxpool(x)
    x = fire(x, 64, 16, 64, 64)
    x = fire(x, 128, 16, 64, 64)
    x = maxpool(x)
    x = fire(x, 128, 32, 128, 128)
    x = fire(x, 256, 32, 128, 128)
    x = maxpool(x)
    x = fire(x, 256, 48, 192, 192)
    x = fire(x, 384, 48, 192, 192)
    x = fire(x, 384, 64, 256, 256)
    x = fire(x, 512, 64, 256, 256)
    x = g.node("Relu", [g.conv(x, 512, 1000, 1, bias=True)])  # final_conv
    y = g.global_pool_flatten(x)
    return g.model("squeezenet1_1", (1, 3, 224, 224), (1, 1000), y)


# --------------------------------------------------------------------------------------
# torchvision.models.mobilenet_v3_small (BatchNorm eps=0.001)
def mobilenet_v3_small(g):
    eps = 1e-3
    # input_channels, kernel, expanded_channels, out_channels, use_se, activation, stride
    setting = [
        (16, 3, 16, 16, True, "relu", 2),
        (16, 3, 72, 24, False, "relu", 2),
        (24, 3, 88, 24, False, "relu", 1),
        (24, 5, 96, 40, True, "hardswish", 2),
        (40, 5, 240, 40, True, "hardswish", 1),
        (40, 5, 240, 40, True, "hardswish", 1),
        (40, 5, 120, 48, True, "hardswish", 1),
        (48, 5, 144, 48, True, "hardswish", 1),
        (48, 5, 288, 96, True, "hardswish", 2),
        (96, 5, 576, 96, True, "hardswish", 1),
        (96, 5, 576, 96, True, "hardswish", 1),
    ]
    x = g.conv_bn_act("input", 3, 16, 3, stride=2, act="hardswish", eps=eps)
    for cin, k, exp, cout, se, act, stride in setting:
        h = x
        if exp != cin:
            h = g.conv_bn_act(h, cin, exp, 1, act=act, eps=eps)
        h = g.conv_bn_act(h, exp, exp, k, stride=stride, groups=exp, act=act, eps=eps)
        if se:
            h = g.squeeze_excite(h, exp, make_divisible(exp // 4), "relu", "hardsigmoid")
        h = g.conv_bn_act(h, exp, cout, 1, act=None, eps=eps)
        x = g.node("Add", [h, x]) if stride == 1 and cin == cout else h
    x = g.conv_bn_act(x, 96, 576, 1, act="hardswish", eps=eps)
    x = g.global_pool_flatten(x)
    x = g.act(g.linear_gemm(x, 576, 1024), "hardswish")
    y = g.linear_gemm(x, 1024, 1000)
    return g.model("mobilenet_v3_small", (1, 3, 224, 224), (1, 1000), y)


# --------------------------------------------------------------------------------------
# torchvision.models.efficientnet_b0 (BatchNorm eps=1e-5; stochastic depth is identity at eval)
def efficientnet_b0(g):
    # expand_ratio, kernel, stride, input_channels, out_channels, num_layers
    setting = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2),
               (6, 3, 2, 40, 80, 3), (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4),
               (6, 3, 1, 192, 320, 1)]
    x = g.conv_bn_act("input", 3, 32, 3, stride=2, act="silu")
    for t, k, s, cin0, cout, n in setting:
        for i in range(n):
            cin = cin0 if i == 0 else cout
            stride = s if i == 0 else 1
            exp = make_divisible(cin * t)
            h = x
            if exp != cin:
                h = g.conv_bn_act(h, cin, exp, 1, act="silu")
            h = g.conv_bn_act(h, exp, exp, k, stride=stride, groups=exp, act="silu")
            h = g.squeeze_excite(h, exp, max(1, cin // 4), "silu", "sigmoid")
            h = g.conv_bn_act(h, exp, cout, 1, act=None)
            x = g.node("Add", [h, x]) if stride == 1 and cin == cout else h
    x = g.conv_bn_act(x, 320, 1280, 1, act="silu")
    x = g.global_pool_flatten(x)
    y = g.linear_gemm(x, 1280, 1000)
    return g.model("efficientnet_b0", (1, 3, 224, 224), (1, 1000), y)


# --------------------------------------------------------------------------------------
# 2 x torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, dropout=0,
# batch_first=True, activation="gelu", norm_first=False), mean over the sequence, Linear(128, 10)
def tiny_transformer(g):
    S, D, H, F = 16, 128, 4, 256
    Dh = D // H

    def layer_norm(x):
        w = g.init(g.uniform((D,), 0.75, 1.25), "ln_w")
        b = g.init(g.normal((D,), 0.1), "ln_b")
        return g.node("LayerNormalization", [x, w, b], axis=-1, epsilon=1e-5)

    def gelu(x):  # exact GELU as torch exports it below opset 20: x * 0.5 * (1 + erf(x / sqrt 2))
        sqrt2 = g.const("gelu_sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
        one = g.const("gelu_one", np.array(1.0, dtype=np.float32))
        half = g.const("gelu_half", np.array(0.5, dtype=np.float32))
        e = g.node("Erf", [g.node("Div", [x, sqrt2])])
        return g.node("Mul", [g.node("Mul", [x, g.node("Add", [e, one])]), half])

    def attention(x):
        qkv = g.linear_matmul(x, D, 3 * D)  # in_proj: [1, S, 3D]
        split = g.const("qkv_split", np.array([D, D, D], dtype=np.int64))
        q, k, v = g.node("Split", [qkv, split], n_out=3, axis=-1)
        heads = g.const("heads_shape", np.array([0, 0, H, Dh], dtype=np.int64))  # 0: copy dim
        q = g.node("Transpose", [g.node("Reshape", [q, heads])], perm=[0, 2, 1, 3])  # [1,H,S,Dh]
        k = g.node("Transpose", [g.node("Reshape", [k, heads])], perm=[0, 2, 3, 1])  # [1,H,Dh,S]
        v = g.node("Transpose", [g.node("Reshape", [v, heads])], perm=[0, 2, 1, 3])  # [1,H,S,Dh]
        scale = g.const("attn_scale", np.array(1.0 / np.sqrt(Dh), dtype=np.float32))
        sc = g.node("Mul", [g.node("MatMul", [q, k]), scale])
        p = g.node("Softmax", [sc], axis=-1)
        o = g.node("Transpose", [g.node("MatMul", [p, v])], perm=[0, 2, 1, 3])  # [1,S,H,Dh]
        merge = g.const("merge_shape", np.array([1, S, -1], dtype=np.int64))
        o = g.node("Reshape", [o, merge])
        return g.linear_matmul(o, D, D)  # out_proj

    x = "input"
    for _ in range(2):
        x = layer_norm(g.node("Add", [x, attention(x)]))
        ff = g.linear_matmul(gelu(g.linear_matmul(x, D, F, gain=2.0)), F, D)
        x = layer_norm(g.node("Add", [x, ff]))
    x = g.node("ReduceMean", [x], axes=[1], keepdims=0)  # mean over the sequence: [1, D]
    y = g.linear_gemm(x, D, 10)
    return g.model("tiny_transformer", (1, S, D), (1, 10), y)


# name: (builder, input shape, opset)
ARCHS = {
    "mobilenet_v2": (mobilenet_v2, (1, 3, 224, 224), CNN_OPSET),
    "resnet18": (resnet18, (1, 3, 224, 224), CNN_OPSET),
    "squeezenet1_1": (squeezenet1_1, (1, 3, 224, 224), CNN_OPSET),
    "mobilenet_v3_small": (mobilenet_v3_small, (1, 3, 224, 224), MNV3_OPSET),
    "efficientnet_b0": (efficientnet_b0, (1, 3, 224, 224), CNN_OPSET),
    "tiny_transformer": (tiny_transformer, (1, 16, 128), TRANSFORMER_OPSET),
}


def write_tensor(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(arr, name).SerializeToString())


def _session_options():
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return so


def build(name, seed):
    """Returns (model, input array, onnxruntime's output)."""
    index = list(ARCHS).index(name)
    fn, shape, opset = ARCHS[name]
    x = np.random.default_rng(seed * 1000 + 100 + index).standard_normal(shape, dtype=np.float32)
    g = Graph(seed * 1000 + index, opset, {"input": x})
    model = fn(g)
    onnx.checker.check_model(model, full_check=True)
    sess = ort.InferenceSession(model.SerializeToString(), _session_options(),
                                providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"input": x})
    return model, x, y


def generate(out, name, seed, verbose=True):
    model, x, y = build(name, seed)
    d = os.path.join(out, name)
    sd = os.path.join(d, "test_data_set_0")
    os.makedirs(sd, exist_ok=True)
    data = model.SerializeToString()
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(data)
    write_tensor(os.path.join(sd, "input_0.pb"), x, "input")
    write_tensor(os.path.join(sd, "output_0.pb"), y, model.graph.output[0].name)
    if verbose:
        print("%-20s %4d nodes  %9d bytes  out %s  max|out| %.4g" % (
            name, len(model.graph.node), len(data), list(y.shape), float(np.max(np.abs(y)))), flush=True)
    return model


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    out = sys.argv[1]
    names = sys.argv[2:] or list(ARCHS)
    for n in names:
        if n not in ARCHS:
            print("unknown model %r (known: %s)" % (n, ", ".join(ARCHS)), file=sys.stderr)
            return 2
    seed = int(os.environ.get("SEED", "7"))
    for n in names:
        generate(out, n, seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
