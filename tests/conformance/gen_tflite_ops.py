"""Writes the TFLite op conformance tests: one small .tflite per builtin op, dtype and
parameter variant, with reference outputs from ai-edge-litert, in the layout the C runner
reads: OUTDIR/<op>_<dtype>_<variant>/model.tflite + test_data_set_0/{input,output}_K.pb
(onnx TensorProto, named like the model's inputs/outputs) + tolerance.txt ("rtol atol").

  float32  TF2 converter (tf.function or a tf_keras model), float inputs drawn from N(0, 1)
           (or a positive / nonzero range where the op needs one); tolerance 1e-5 1e-6.
  uint8    TF1-style: a tf.compat.v1 graph with fake-quant nodes (ranges calibrated on
           float data) converted with inference_type=tf.uint8, so that the op itself runs
           on uint8 tensors (asymmetric per-tensor weights), as in the TF1 Coral models.
  int8     TF2 full-integer post-training quantization (representative dataset,
           TFLITE_BUILTINS_INT8, int8 inputs and outputs, per-channel int8 weights).
Quantized inputs are uniform random integers over the whole type range; quantized outputs
must match bit for bit ("0 0"; QUANT_1_UNIT lists the few allowed 1 unit, "0 1"), as must
integer results that are not quantized values (ARG_MAX, SHAPE, CAST).

The reference outputs come from ai-edge-litert with TFLite's reference kernels
(OpResolverType.BUILTIN_REF, one thread): the quantized arithmetic tinyinfer follows. Where
the reference resolver lacks the op, or its kernel is wrong (REF_WRONG: int8 SUM gives -1s,
float LOCAL_RESPONSE_NORMALIZATION differs from TF by 0.1-0.4), the builtin kernels that
ai-edge-litert runs by default are used instead (BUILTIN_WITHOUT_DEFAULT_DELEGATES: no
XNNPACK). Every test is run with both; README.md lists where they differ (the optimized
builtin kernels round some quantized results differently, 1 unit). Each model is checked to
really contain the intended builtin op on tensors of the intended dtype; variants the
converter cannot produce are listed in README.md and not written. L2_POOL_2D, which no TF
graph converts to, is made by renaming the op code of an AVERAGE_POOL_2D model (same
Pool2DOptions table). Everything is seeded: a rerun with the same tensorflow and
ai-edge-litert versions writes the same files.

Usage: python3 gen_tflite_ops.py OUTDIR [--filter SUBSTR] [--keep]
Needs: tensorflow-cpu, tf-keras (for the LSTM), ai-edge-litert, onnx, numpy."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
import shutil
import warnings
import zlib

import numpy as np

warnings.filterwarnings("ignore")
import tensorflow as tf  # noqa: E402

tf.get_logger().setLevel("ERROR")
from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: E402
from onnx import numpy_helper  # noqa: E402

tf1 = tf.compat.v1
SEED = 4
MODES = ("float32", "uint8", "int8")
N_CALIB = 8
TOL = {"float32": "1e-5 1e-6", "quant": "0 0", "quant_1": "0 1", "exact": "0 0"}
# Quantized outputs are checked bit for bit against the oracle, but for these (op, dtype):
# tinyinfer's uint8 SUM rescales in float as the builtin kernel does, 1 unit from the
# reference kernel on some values. (A 1-unit tolerance everywhere hid an int8 MEAN that
# rounded twice; see src/cpu/tfl_reduce.c.)
QUANT_1_UNIT = {("SUM", "uint8")}


# ---- inputs ---------------------------------------------------------------------------------

class In:
    """One model input: name, shape, kind of data.
    kind: 'normal' N(0,1); 'pos' U(0.25, 3); 'nonzero' +-U(0.5, 2); 'unit' U(-0.95, 0.95);
    'wide' N(0, 3); 'prob' U(0, 1); ('int', lo, hi) int32 in [lo, hi); ('int64', lo, hi); 'bool'."""

    def __init__(self, name, shape, kind="normal"):
        self.name, self.shape, self.kind = name, list(shape), kind

    @property
    def is_float(self):
        return not isinstance(self.kind, tuple) and self.kind != "bool"

    def tf_dtype(self):
        if self.is_float:
            return tf.float32
        if self.kind == "bool":
            return tf.bool
        return tf.int64 if self.kind[0] == "int64" else tf.int32

    def sample(self, rng, shape=None):
        s = [d if d is not None else 2 for d in (shape or self.shape)]
        k = self.kind
        if k == "normal":
            return rng.standard_normal(s).astype(np.float32)
        if k == "wide":
            return (3 * rng.standard_normal(s)).astype(np.float32)
        if k == "pos":
            return rng.uniform(0.25, 3.0, s).astype(np.float32)
        if k == "prob":
            return rng.uniform(0.0, 1.0, s).astype(np.float32)
        if k == "unit":
            return rng.uniform(-0.95, 0.95, s).astype(np.float32)
        if k == "nonzero":
            return (rng.uniform(0.5, 2.0, s) * rng.choice([-1, 1], s)).astype(np.float32)
        if k == "bool":
            return rng.integers(0, 2, s).astype(bool)
        dt = np.int64 if k[0] == "int64" else np.int32
        return rng.integers(k[1], k[2], s).astype(dt)


# ---- the builder context --------------------------------------------------------------------

class Ctx:
    """Passed to every test's function. w()/const() make seeded constant tensors; q() marks
    an intermediate float tensor for quantization (fake-quant in the uint8 graph, its range
    recorded on the calibration pass). In float32 and int8 modes q() is the identity."""

    def __init__(self, mode, phase, ranges, seed):
        self.mode, self.phase, self.ranges = mode, phase, ranges
        self.rng = np.random.default_rng(seed)
        self.nq = 0

    def _fq(self, t, lo, hi):
        lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
        if hi - lo < 1e-3:
            hi = lo + 1e-3
        return tf.quantization.fake_quant_with_min_max_args(t, min=lo, max=hi)

    def q(self, t, rng=None):
        if self.mode != "uint8" or t.dtype != tf.float32:
            return t
        k = self.nq
        self.nq += 1
        if self.phase == "calib":
            v = t.numpy()
            self.ranges[k] = rng if rng is not None else (float(v.min()), float(v.max()))
            return t
        lo, hi = rng if rng is not None else self.ranges[k]
        return self._fq(t, lo, hi)

    def arr(self, shape, scale=1.0, kind="normal"):
        if kind == "pos":
            return self.rng.uniform(0.25, 2.0, shape).astype(np.float32) * scale
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)

    def w(self, shape, scale=0.5, kind="normal"):
        """A float constant (weights, or the constant operand of a binary op)."""
        a = self.arr(shape, scale, kind)
        t = tf.constant(a)
        if self.mode == "uint8":
            t = self._fq(t, a.min(), a.max())
        return t

    def bias(self, n, scale=0.5):
        """Bias: not fake-quantized (the converter makes it int32 with scale in*w)."""
        return tf.constant(self.arr([n], scale))


# ---- tests ----------------------------------------------------------------------------------

class T:
    def __init__(self, op, variant, inputs, fn, modes=MODES, out_range=None, tol=None,
                 keras=None, post=None, float_io=False, warm=False, f16=False,
                 saved_model=False):
        self.op, self.variant, self.inputs, self.fn = op, variant, inputs, fn
        self.modes = modes
        self.out_range = out_range  # fixed uint8 output ranges, one per output (or None)
        self.tol = tol  # override "rtol atol" for float32
        self.keras = keras  # callable() -> tf_keras model (instead of fn)
        self.post = post  # callable(bytes) -> bytes: edits the converted flatbuffer
        self.float_io = float_io  # int8 model with float (True) or uint8 inputs/outputs
        self.warm = warm  # call fn once eagerly before tracing (creates Keras variables)
        self.f16 = f16  # float32 model with float16 weights (DEQUANTIZE f16 -> f32)
        self.saved_model = saved_model  # convert through a SavedModel (keeps composite fns)
        self.shared_range = op in SHARED_RANGE_OPS

    def name(self, mode):
        return "%s_%s_%s" % (self.op.lower(), mode, self.variant)


X4 = [1, 8, 8, 4]
# Ops whose uint8 output TFLite requires (or TF1 models give) the input's scale and zero
# point: in the uint8 graph their inputs and outputs share one fake-quant range.
SHARED_RANGE_OPS = {
    "MAXIMUM", "MINIMUM", "AVERAGE_POOL_2D", "MAX_POOL_2D", "REDUCE_MAX", "REDUCE_MIN",
    "STRIDED_SLICE", "SLICE", "GATHER", "GATHER_ND", "SPLIT", "SPLIT_V", "PACK", "UNPACK",
    "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "RESHAPE", "SQUEEZE", "EXPAND_DIMS",
    "TRANSPOSE", "PAD", "MIRROR_PAD", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "TILE",
    "BROADCAST_TO"}
TESTS = []


def add(*a, **k):
    TESTS.append(T(*a, **k))


def conv2d(c, x, k, cin, cout, strides=1, padding="SAME", dil=1, act=None, bias=True):
    y = tf.nn.conv2d(x, c.w([k[0], k[1], cin, cout]), strides=strides, padding=padding,
                     dilations=dil)
    if bias:
        y = y + c.bias(cout)
    return act(y) if act else y


add("CONV_2D", "k3_s1_same_relu", [In("x", X4)],
    lambda c, x: conv2d(c, x, (3, 3), 4, 6, act=tf.nn.relu))
add("CONV_2D", "k3_s2_valid", [In("x", X4)],
    lambda c, x: conv2d(c, x, (3, 3), 4, 5, strides=2, padding="VALID"))
add("CONV_2D", "k3_d2_same_relu6", [In("x", X4)],
    lambda c, x: conv2d(c, x, (3, 3), 4, 4, dil=2, act=tf.nn.relu6))
add("CONV_2D", "k2x1_s1x2_valid_nobias", [In("x", [2, 5, 6, 3])],
    lambda c, x: conv2d(c, x, (2, 1), 3, 4, strides=[1, 2], padding="VALID", bias=False))


def dwconv(c, x, cin, mult, strides=1, padding="SAME", dil=1, act=None):
    y = tf.nn.depthwise_conv2d(x, c.w([3, 3, cin, mult]), strides=[1, strides, strides, 1],
                               padding=padding, dilations=[dil, dil])
    y = y + c.bias(cin * mult)
    return act(y) if act else y


add("DEPTHWISE_CONV_2D", "m1_s1_same_relu6", [In("x", X4)],
    lambda c, x: dwconv(c, x, 4, 1, act=tf.nn.relu6))
add("DEPTHWISE_CONV_2D", "m2_s2_valid", [In("x", X4)],
    lambda c, x: dwconv(c, x, 4, 2, strides=2, padding="VALID"))
add("DEPTHWISE_CONV_2D", "m1_d2_same", [In("x", X4)],
    lambda c, x: dwconv(c, x, 4, 1, dil=2))


def tconv(c, x, cin, cout, out_hw, strides, padding, bias=True):
    n = x.shape[0]
    y = tf.nn.conv2d_transpose(x, c.w([3, 3, cout, cin]), [n, out_hw[0], out_hw[1], cout],
                               strides=strides, padding=padding)
    return y + c.bias(cout) if bias else y


add("TRANSPOSE_CONV", "s2_same", [In("x", [1, 4, 4, 4])],
    lambda c, x: tconv(c, x, 4, 6, (8, 8), 2, "SAME", bias=False))
add("TRANSPOSE_CONV", "s2_valid_bias", [In("x", [1, 3, 4, 3])],
    lambda c, x: tconv(c, x, 3, 4, (7, 9), 2, "VALID"))
add("TRANSPOSE_CONV", "s1_same_bias", [In("x", [1, 5, 5, 2])],
    lambda c, x: tconv(c, x, 2, 3, (5, 5), 1, "SAME"))

add("FULLY_CONNECTED", "bias_relu", [In("x", [3, 8])],
    lambda c, x: tf.nn.relu(tf.matmul(x, c.w([8, 5])) + c.bias(5)))
add("FULLY_CONNECTED", "nobias", [In("x", [2, 16])],
    lambda c, x: tf.matmul(x, c.w([16, 7])))
add("FULLY_CONNECTED", "keep_dims_3d", [In("x", [2, 3, 6])],
    lambda c, x: tf.matmul(x, c.w([6, 4])) + c.bias(4), modes=("float32", "int8"))

add("BATCH_MATMUL", "3d", [In("a", [2, 3, 4]), In("b", [2, 4, 5])],
    lambda c, a, b: tf.matmul(a, b), modes=("float32", "int8"))
add("BATCH_MATMUL", "adj_y_bcast", [In("a", [1, 3, 4]), In("b", [2, 5, 4])],
    lambda c, a, b: tf.matmul(a, b, transpose_b=True), modes=("float32", "int8"))
add("BATCH_MATMUL", "adj_x_4d", [In("a", [2, 1, 4, 3]), In("b", [2, 2, 4, 2])],
    lambda c, a, b: tf.matmul(a, b, transpose_a=True), modes=("float32", "int8"))

# binary elementwise ops: same shape with a fused activation, and broadcasting
BIN = {
    "ADD": tf.add, "SUB": tf.subtract, "MUL": tf.multiply, "DIV": tf.divide,
    "MAXIMUM": tf.maximum, "MINIMUM": tf.minimum,
    "SQUARED_DIFFERENCE": tf.math.squared_difference, "POW": tf.pow,
}
for _op, _f in BIN.items():
    _k2 = "nonzero" if _op == "DIV" else "normal"
    _k1 = "pos" if _op == "POW" else "normal"
    _modes = ("float32",) if _op == "POW" else MODES
    _act = _op in ("ADD", "SUB", "MUL", "DIV")
    add(_op, "same_relu" if _act else "same", [In("a", [1, 4, 4, 3], _k1), In("b", [1, 4, 4, 3], _k2)],
        (lambda f, act: lambda c, a, b: tf.nn.relu(f(a, b)) if act else f(a, b))(_f, _act),
        modes=_modes)
    add(_op, "bcast", [In("a", [2, 1, 4], _k1), In("b", [3, 1], _k2)],
        (lambda f: lambda c, a, b: f(a, b))(_f), modes=_modes)
    if _op == "DIV":  # a constant divisor is turned into MUL by the converter
        add(_op, "const_lhs", [In("a", [2, 3, 5], "nonzero")],
            lambda c, a: tf.divide(c.w([5], 1.0), a))
    else:
        add(_op, "const_rhs", [In("a", [2, 3, 5], _k1)],
            (lambda f: lambda c, a: f(a, c.w([5], 1.0)))(_f), modes=_modes)


def pool(kind, k, s, padding, act=None):
    f = tf.nn.avg_pool2d if kind == "avg" else tf.nn.max_pool2d

    def g(c, x):
        y = f(x, k, s, padding)
        return act(y) if act else y
    return g


for _op, _kind in (("AVERAGE_POOL_2D", "avg"), ("MAX_POOL_2D", "max")):
    add(_op, "k2_s2_valid", [In("x", X4)], pool(_kind, 2, 2, "VALID"))
    add(_op, "k3_s2_same_relu6", [In("x", X4)], pool(_kind, 3, 2, "SAME", tf.nn.relu6))
    add(_op, "k3x2_s1_same", [In("x", [2, 5, 6, 3])], pool(_kind, [3, 2], 1, "SAME"))


def rename_op(old, new):
    """post(): renames the builtin op code `old` to `new` in a converted model."""
    def edit(b):
        from tensorflow.lite.python import schema_py_generated as s
        from tensorflow.lite.tools import flatbuffer_utils as fu
        m = fu.read_model_from_bytearray(bytearray(b))
        for oc in m.operatorCodes:
            if oc.builtinCode == getattr(s.BuiltinOperator, old):
                oc.builtinCode = getattr(s.BuiltinOperator, new)
                oc.deprecatedBuiltinCode = min(oc.builtinCode, 127)
        return bytes(fu.convert_object_to_bytearray(m))
    return edit


add("L2_POOL_2D", "k2_s2_valid", [In("x", X4)], pool("avg", 2, 2, "VALID"),
    modes=("float32",), post=rename_op("AVERAGE_POOL_2D", "L2_POOL_2D"))
add("L2_POOL_2D", "k3_s1_same", [In("x", [1, 5, 5, 3])], pool("avg", 3, 1, "SAME"),
    modes=("float32",), post=rename_op("AVERAGE_POOL_2D", "L2_POOL_2D"))

RED = {"MEAN": tf.reduce_mean, "SUM": tf.reduce_sum, "REDUCE_MAX": tf.reduce_max,
       "REDUCE_MIN": tf.reduce_min, "REDUCE_PROD": tf.reduce_prod}
for _op, _f in RED.items():
    _kind = "unit" if _op == "REDUCE_PROD" else "normal"
    add(_op, "hw_keep", [In("x", [1, 4, 5, 3], _kind)],
        (lambda f: lambda c, x: f(x, [1, 2], keepdims=True))(_f))
    add(_op, "last", [In("x", [2, 3, 6], _kind)], (lambda f: lambda c, x: f(x, -1))(_f))
    add(_op, "axes02", [In("x", [3, 4, 2], _kind)], (lambda f: lambda c, x: f(x, [0, 2]))(_f))

add("CONCATENATION", "axis3", [In("a", [1, 4, 4, 3]), In("b", [1, 4, 4, 2], "wide")],
    lambda c, a, b: tf.concat([a, b], 3))
add("CONCATENATION", "axis1_three", [In("a", [2, 1, 3]), In("b", [2, 2, 3]), In("c", [2, 3, 3], "pos")],
    lambda c, a, b, d: tf.concat([a, b, d], 1))
add("CONCATENATION", "axis0_relu", [In("a", [2, 5]), In("b", [1, 5])],
    lambda c, a, b: tf.nn.relu(tf.concat([a, b], 0)))

add("RESHAPE", "3d_to_2d", [In("x", [2, 3, 4])], lambda c, x: tf.reshape(x, [4, 6]))
add("RESHAPE", "flatten", [In("x", [1, 4, 4, 3])], lambda c, x: tf.reshape(x, [1, -1]))
# With static shapes the converter turns SQUEEZE and EXPAND_DIMS into RESHAPE: these have
# dynamic dims (shape_signature -1; the data set feeds 3 there).
add("SQUEEZE", "axis1_dyn", [In("x", [None, 1, None])], lambda c, x: tf.squeeze(x, [1]))
add("SQUEEZE", "axes13_dyn", [In("x", [None, 1, None, 1])], lambda c, x: tf.squeeze(x, [1, 3]))
add("EXPAND_DIMS", "axis1_dyn", [In("x", [None, 4])], lambda c, x: tf.expand_dims(x, 1))
add("EXPAND_DIMS", "axis_neg1_dyn", [In("x", [None, 2, 3])], lambda c, x: tf.expand_dims(x, -1))
add("TRANSPOSE", "nhwc_nchw", [In("x", [1, 3, 4, 5])], lambda c, x: tf.transpose(x, [0, 3, 1, 2]))
add("TRANSPOSE", "3d", [In("x", [2, 3, 4])], lambda c, x: tf.transpose(x, [2, 0, 1]))
add("TRANSPOSE", "2d", [In("x", [5, 3])], lambda c, x: tf.transpose(x))

add("PAD", "hw", [In("x", [1, 3, 3, 2])], lambda c, x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]]))
add("PAD", "2d", [In("x", [2, 3])], lambda c, x: tf.pad(x, [[1, 0], [0, 2]]))
add("PADV2", "value", [In("x", [1, 3, 3, 2])],
    lambda c, x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]], constant_values=0.75))
add("PADV2", "3d_neg", [In("x", [2, 3, 2])],
    lambda c, x: tf.pad(x, [[0, 1], [1, 1], [0, 0]], constant_values=-1.5))
add("MIRROR_PAD", "reflect", [In("x", [1, 3, 4, 2])],
    lambda c, x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]], mode="REFLECT"))
add("MIRROR_PAD", "symmetric", [In("x", [2, 3, 4])],
    lambda c, x: tf.pad(x, [[1, 0], [2, 3], [0, 1]], mode="SYMMETRIC"))

add("STRIDED_SLICE", "basic", [In("x", [3, 6, 5])],
    lambda c, x: tf.strided_slice(x, [1, 0, 1], [3, 6, 5], [1, 2, 2]))
add("STRIDED_SLICE", "masks", [In("x", [4, 6, 5])],
    lambda c, x: tf.strided_slice(x, [1, 4, 0], [0, 1, 3], [1, -1, 1], begin_mask=0,
                                  end_mask=1))
add("STRIDED_SLICE", "shrink_neg", [In("x", [4, 6, 5])], lambda c, x: x[-2, ::-2, 1:-1])
add("STRIDED_SLICE", "ellipsis_newaxis", [In("x", [2, 3, 4, 5])],
    lambda c, x: x[..., tf.newaxis, 1:4:2])
add("SLICE", "4d", [In("x", [1, 5, 5, 3])], lambda c, x: tf.slice(x, [0, 1, 2, 0], [1, 3, -1, 2]))
add("SLICE", "2d", [In("x", [4, 6])], lambda c, x: tf.slice(x, [1, 2], [2, 3]))

add("GATHER", "axis0", [In("x", [5, 3])], lambda c, x: tf.gather(x, [4, 0, 2, 2]))
add("GATHER", "axis1_2d_idx", [In("x", [2, 5, 3])],
    lambda c, x: tf.gather(x, [[1, 3], [4, 0]], axis=1))
add("GATHER", "axis3", [In("x", [1, 2, 2, 6])], lambda c, x: tf.gather(x, [5, 1, 3], axis=3))
add("GATHER_ND", "full", [In("x", [3, 4])], lambda c, x: tf.gather_nd(x, [[0, 1], [2, 3], [1, 0]]))
add("GATHER_ND", "slices", [In("x", [3, 4, 2])], lambda c, x: tf.gather_nd(x, [[2], [0]]))

add("SPLIT", "axis3", [In("x", [1, 2, 2, 6])], lambda c, x: tuple(tf.split(x, 2, axis=3)))
add("SPLIT", "axis0_3", [In("x", [3, 4])], lambda c, x: tuple(tf.split(x, 3, axis=0)))
add("SPLIT_V", "sizes", [In("x", [2, 7])], lambda c, x: tuple(tf.split(x, [2, 4, 1], axis=1)))
add("SPLIT_V", "neg1", [In("x", [5, 2, 3])], lambda c, x: tuple(tf.split(x, [1, -1], axis=0)))
add("PACK", "axis0", [In("a", [2, 3]), In("b", [2, 3])], lambda c, a, b: tf.stack([a, b]))
add("PACK", "axis2_three", [In("a", [2, 3]), In("b", [2, 3]), In("d", [2, 3])],
    lambda c, a, b, d: tf.stack([a, b, d], axis=2))
add("UNPACK", "axis0", [In("x", [3, 4])], lambda c, x: tuple(tf.unstack(x)))
add("UNPACK", "axis1", [In("x", [2, 3, 2])], lambda c, x: tuple(tf.unstack(x, axis=1)))

for _op, _f in (("RESIZE_BILINEAR", tf1.image.resize_bilinear),
                ("RESIZE_NEAREST_NEIGHBOR", tf1.image.resize_nearest_neighbor)):
    add(_op, "up_default", [In("x", [1, 3, 4, 2])], (lambda f: lambda c, x: f(x, [6, 7]))(_f))
    add(_op, "up_align_corners", [In("x", [1, 3, 4, 2])],
        (lambda f: lambda c, x: f(x, [7, 5], align_corners=True))(_f))
    add(_op, "up_half_pixel", [In("x", [1, 3, 4, 2])],
        (lambda f: lambda c, x: f(x, [6, 9], half_pixel_centers=True))(_f))
    add(_op, "down_half_pixel", [In("x", [1, 8, 7, 2])],
        (lambda f: lambda c, x: f(x, [3, 4], half_pixel_centers=True))(_f))

# Activations. uint8 output ranges of the ops whose quantized output is fixed by TFLite.
R256 = (0.0, 255.0 / 256.0)
add("SOFTMAX", "2d", [In("x", [2, 10], "wide")], lambda c, x: tf.nn.softmax(x), out_range=[R256])
add("SOFTMAX", "4d", [In("x", [1, 3, 3, 6])], lambda c, x: tf.nn.softmax(x), out_range=[R256])
add("SOFTMAX", "beta", [In("x", [3, 6])], lambda c, x: tf.nn.softmax(x * 2.5),
    modes=("float32", "int8"))
add("LOG_SOFTMAX", "2d", [In("x", [3, 7], "wide")], lambda c, x: tf.nn.log_softmax(x),
    out_range=[(-255.0 / 16, 0.0)])
add("LOGISTIC", "4d", [In("x", [1, 4, 4, 3], "wide")], lambda c, x: tf.sigmoid(x), out_range=[R256])
add("LOGISTIC", "2d", [In("x", [3, 5])], lambda c, x: tf.sigmoid(x), out_range=[R256])
add("TANH", "4d", [In("x", [1, 4, 4, 3], "wide")], lambda c, x: tf.tanh(x),
    out_range=[(-1.0, 127.0 / 128.0)])
add("TANH", "2d", [In("x", [3, 5])], lambda c, x: tf.tanh(x), out_range=[(-1.0, 127.0 / 128.0)])
for _op, _f in (("RELU", tf.nn.relu), ("RELU6", tf.nn.relu6),
                ("RELU_N1_TO_1", lambda x: tf.clip_by_value(x, -1.0, 1.0)),
                ("LEAKY_RELU", lambda x: tf.nn.leaky_relu(x, 0.2)),
                ("HARD_SWISH", lambda x: x * tf.nn.relu6(x + 3.0) / 6.0),
                ("ELU", tf.nn.elu), ("ABS", tf.abs), ("NEG", tf.negative),
                ("FLOOR", tf.floor), ("CEIL", tf.math.ceil), ("SQUARE", tf.square),
                ("EXP", tf.exp)):
    add(_op, "4d", [In("x", [1, 4, 4, 3], "wide")], (lambda f: lambda c, x: f(x))(_f))
add("LEAKY_RELU", "alpha_0_01", [In("x", [2, 7], "wide")],
    lambda c, x: tf.nn.leaky_relu(x, 0.01))
add("GELU", "approx", [In("x", [2, 9], "wide")], lambda c, x: tf.nn.gelu(x, approximate=True))
add("GELU", "exact", [In("x", [1, 3, 3, 4], "wide")], lambda c, x: tf.nn.gelu(x, approximate=False))
for _op, _f in (("LOG", tf.math.log), ("SQRT", tf.sqrt), ("RSQRT", tf.math.rsqrt)):
    add(_op, "4d", [In("x", [1, 4, 4, 3], "pos")], (lambda f: lambda c, x: f(x))(_f))


_LAYERS = {}


def prelu(shared_axes):
    """Keras' PReLU layer (the converter matches its graph; a hand-written relu(x) -
    alpha * relu(-x) is not matched). Made once, on the eager warm-up call."""
    def g(c, x):
        shape = [1 if i + 1 in (shared_axes or ()) else d for i, d in
                 enumerate(x.shape.as_list()[1:])]
        key = (tuple(x.shape.as_list()), tuple(shared_axes or ()))
        if key not in _LAYERS:
            init = tf.keras.initializers.Constant(c.arr(shape, 0.3, "pos"))
            _LAYERS[key] = tf.keras.layers.PReLU(alpha_initializer=init, shared_axes=shared_axes)
        return _LAYERS[key](x)
    return g


add("PRELU", "per_channel", [In("x", [1, 4, 4, 3], "wide")], prelu([1, 2]),
    modes=("float32", "int8"), warm=True)
add("PRELU", "per_element", [In("x", [2, 3, 4], "wide")], prelu(None),
    modes=("float32", "int8"), warm=True)

add("ARG_MAX", "last_i32", [In("x", [2, 3, 5])],
    lambda c, x: tf.argmax(x, -1, output_type=tf.int32))
add("ARG_MAX", "axis1_i64", [In("x", [2, 4, 3])], lambda c, x: tf.argmax(x, 1))
add("ARG_MIN", "last_i32", [In("x", [2, 3, 5])],
    lambda c, x: tf.argmin(x, -1, output_type=tf.int32))
add("ARG_MIN", "axis0_i64", [In("x", [4, 3])], lambda c, x: tf.argmin(x, 0))

add("DEPTH_TO_SPACE", "b2", [In("x", [1, 2, 3, 8])], lambda c, x: tf.nn.depth_to_space(x, 2))
add("DEPTH_TO_SPACE", "b3", [In("x", [1, 2, 2, 9])], lambda c, x: tf.nn.depth_to_space(x, 3))
add("SPACE_TO_DEPTH", "b2", [In("x", [1, 4, 6, 2])], lambda c, x: tf.nn.space_to_depth(x, 2))
add("SPACE_TO_DEPTH", "b3", [In("x", [2, 3, 3, 1])], lambda c, x: tf.nn.space_to_depth(x, 3))

# QUANTIZE / DEQUANTIZE: an int8 model with float inputs and outputs (float -> int8 at the
# input, int8 -> float at the output), and the uint8-io int8 model's uint8 -> int8 requantize.
add("QUANTIZE", "float_in", [In("x", [2, 3, 4])], lambda c, x: tf.nn.relu(x), modes=("int8",),
    float_io=True)
add("DEQUANTIZE", "float_out", [In("x", [1, 4, 4, 3])], lambda c, x: tf.nn.max_pool2d(x, 2, 2, "VALID"),
    modes=("int8",), float_io=True)
add("QUANTIZE", "uint8_io", [In("x", [2, 3, 4])], lambda c, x: tf.nn.relu(x), modes=("int8",),
    float_io="uint8")

add("DEQUANTIZE", "f16_weights", [In("x", [1, 5, 5, 3])],
    lambda c, x: conv2d(c, x, (3, 3), 3, 4, act=tf.nn.relu), modes=("float32",), f16=True)
add("CAST", "i32_to_f32", [In("x", [2, 3], ("int", -100, 100))],
    lambda c, x: tf.cast(x, tf.float32), modes=("float32",))
add("CAST", "f32_to_i32", [In("x", [2, 3], "wide")], lambda c, x: tf.cast(x, tf.int32),
    modes=("float32",))
add("CAST", "i32_to_i64", [In("x", [4], ("int", -1000, 1000))],
    lambda c, x: tf.cast(x, tf.int64), modes=("float32",))
add("SHAPE", "i32", [In("x", [None, 3, 2])], lambda c, x: tf.shape(x), modes=("float32",))
add("SHAPE", "i64", [In("x", [None, 4])], lambda c, x: tf.shape(x, out_type=tf.int64),
    modes=("float32",))
add("FILL", "scalar_input", [In("v", [])], lambda c, v: tf.fill([2, 3], v), modes=("float32",))
add("FILL", "dims_input", [In("d", [3], ("int", 1, 4))], lambda c, d: tf.fill(d, 1.5),
    modes=("float32",))
add("TILE", "3d", [In("x", [2, 1, 3])], lambda c, x: tf.tile(x, [1, 2, 3]))
add("TILE", "2d", [In("x", [2, 3])], lambda c, x: tf.tile(x, [3, 1]))
add("BROADCAST_TO", "3d", [In("x", [3, 1])], lambda c, x: tf.broadcast_to(x, [2, 3, 4]))
add("BROADCAST_TO", "4d", [In("x", [1, 2, 1, 3])], lambda c, x: tf.broadcast_to(x, [2, 2, 4, 3]))
add("L2_NORMALIZATION", "last", [In("x", [1, 3, 3, 5])], lambda c, x: tf.math.l2_normalize(x, -1),
    out_range=[(-1.0, 127.0 / 128.0)])
add("L2_NORMALIZATION", "2d", [In("x", [3, 8])], lambda c, x: tf.math.l2_normalize(x, -1),
    out_range=[(-1.0, 127.0 / 128.0)])
add("LOCAL_RESPONSE_NORMALIZATION", "r2", [In("x", [1, 3, 3, 8])],
    lambda c, x: tf.nn.local_response_normalization(x, 2, 1.0, 0.5, 0.75))
add("LOCAL_RESPONSE_NORMALIZATION", "r1", [In("x", [1, 2, 4, 5], "wide")],
    lambda c, x: tf.nn.local_response_normalization(x, 1, 2.0, 0.1, 0.5))


def keras_lstm(units, steps, feat, return_sequences, batch=1):
    def make():
        import tf_keras
        tf_keras.utils.set_random_seed(SEED)
        return tf_keras.Sequential([
            tf_keras.layers.InputLayer(input_shape=(steps, feat), batch_size=batch),
            tf_keras.layers.LSTM(units, return_sequences=return_sequences)])
    return make


add("UNIDIRECTIONAL_SEQUENCE_LSTM", "seq", [In("x", [1, 4, 3])], None,
    keras=keras_lstm(5, 4, 3, True), modes=("float32", "int8"), tol="1e-5 1e-5")
add("UNIDIRECTIONAL_SEQUENCE_LSTM", "last_b2", [In("x", [2, 5, 4])], None,
    keras=keras_lstm(3, 5, 4, False, batch=2), modes=("float32", "int8"), tol="1e-5 1e-5")




def detection_postprocess(attrs):
    """TFLite_Detection_PostProcess (custom op of the SSD detectors): a tf.function whose
    experimental_implements names the op and its attributes; the converter replaces it by
    the custom op (with the attributes as flexbuffer custom_options) when the model goes
    through a SavedModel."""
    def v(x):
        if isinstance(x, bool):
            return "b: %s" % ("true" if x else "false")
        return ("i: %d" if isinstance(x, int) else "f: %r") % x
    sig = " ".join(['name: "TFLite_Detection_PostProcess"'] + [
        'attr { key: "%s" value { %s } }' % (k, v(x)) for k, x in attrs.items()])

    @tf.function(experimental_implements=sig)
    def pp(boxes, scores, anchors):
        z = [tf.constant(0.0, name=n) for n in ("boxes", "classes", "scores", "num_detections")]
        return tuple(z)

    def g(c, boxes, scores):
        n = boxes.shape[1]
        rng = np.random.default_rng(7)
        yx = rng.uniform(0.1, 0.9, [n, 2])
        hw = rng.uniform(0.1, 0.5, [n, 2])
        anchors = tf.constant(np.concatenate([yx, hw], 1).astype(np.float32))
        return pp(boxes, scores, anchors)
    return g


_DPP = dict(max_detections=5, max_classes_per_detection=1, detections_per_class=3,
            nms_score_threshold=0.3, nms_iou_threshold=0.5, y_scale=10.0, x_scale=10.0,
            h_scale=5.0, w_scale=5.0, num_classes=3)
add("TFLite_Detection_PostProcess", "fast_nms", [In("boxes", [1, 20, 4]), In("scores", [1, 20, 4], "prob")],
    detection_postprocess(dict(_DPP, use_regular_nms=False)), modes=("float32",), saved_model=True)
add("TFLite_Detection_PostProcess", "regular_nms", [In("boxes", [1, 24, 4]), In("scores", [1, 24, 3], "prob")],
    detection_postprocess(dict(_DPP, num_classes=2, max_detections=6, use_regular_nms=True)),
    modes=("float32",), saved_model=True)


# ---- conversion -----------------------------------------------------------------------------

def test_seed(t, mode, what):
    return zlib.crc32(("%s/%s/%s/%d" % (t.name(mode), what, t.variant, SEED)).encode())


def calib_data(t, mode):
    rng = np.random.default_rng(test_seed(t, mode, "calib"))
    return [[i.sample(rng) for i in t.inputs] for _ in range(N_CALIB)]


def outputs_tuple(y):
    return tuple(y) if isinstance(y, (tuple, list)) else (y,)


def convert_tf2(t, mode):
    if t.keras:
        model = t.keras()
        conv = tf.lite.TFLiteConverter.from_keras_model(model)
    else:
        sig = [tf.TensorSpec(i.shape, i.tf_dtype(), name=i.name) for i in t.inputs]

        def f(*args):
            c = Ctx("float32", "build", None, test_seed(t, mode, "weights"))
            return outputs_tuple(t.fn(c, *args))
        if t.warm:
            f(*[tf.constant(v) for v in calib_data(t, mode)[0]])
        if t.saved_model:
            import tempfile
            mod = tf.Module()
            mod.run = tf.function(f, input_signature=sig)
            tmp = tempfile.mkdtemp(prefix="gen_tflite_")
            tf.saved_model.save(mod, tmp, signatures={"serving_default": mod.run})
            conv = tf.lite.TFLiteConverter.from_saved_model(tmp)
            conv.allow_custom_ops = True
            try:
                return conv.convert()
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        else:
            cf = tf.function(f, input_signature=sig).get_concrete_function()
            conv = tf.lite.TFLiteConverter.from_concrete_functions([cf])
    if t.f16:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.target_spec.supported_types = [tf.float16]
    if mode == "int8":
        data = calib_data(t, mode)

        def rep():
            for d in data:
                yield d
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        io = {False: tf.int8, True: tf.float32, "uint8": tf.uint8}[t.float_io]
        conv.inference_input_type = io
        conv.inference_output_type = io
    return conv.convert()


def nudged(lo, hi):
    """fake_quant's nudged (scale, zero point) for uint8."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo < 1e-3:
        hi = lo + 1e-3
    scale = (hi - lo) / 255.0
    zp = int(round(min(max(-lo / scale, 0.0), 255.0)))
    return scale, zp


def convert_tf1_uint8(t, mode):
    """Calibrates the fake-quant ranges on float data, then builds and converts the graph."""
    ranges = {}
    data = calib_data(t, mode)
    in_rng, out_rng = [], None
    cols = list(zip(*data))
    for i, col in zip(t.inputs, cols):
        a = np.stack(col)
        in_rng.append((float(a.min()), float(a.max())) if i.is_float else None)
    # calibration pass (eager): record the range of every q() tensor and of the outputs
    per_out = None
    for d in data:
        c = Ctx("uint8", "calib", ranges, test_seed(t, mode, "weights"))
        ys = outputs_tuple(t.fn(c, *[tf.constant(v) for v in d]))
        if per_out is None:
            per_out = [[] for _ in ys]
        for k, y in enumerate(ys):
            per_out[k].append(y.numpy())
    out_rng = [(float(np.min(v)), float(np.max(v))) for v in per_out]
    if t.shared_range:
        fl = [r for r in in_rng if r is not None]
        u = (min(r[0] for r in fl), max(r[1] for r in fl))
        in_rng = [u if r is not None else None for r in in_rng]
        out_rng = [u for _ in out_rng]
    if t.out_range:
        out_rng = [r if r else o for r, o in zip(t.out_range, out_rng)]
    g = tf.Graph()
    with g.as_default():
        c = Ctx("uint8", "build", ranges, test_seed(t, mode, "weights"))
        phs, feed, stats = [], [], {}
        for i, r in zip(t.inputs, in_rng):
            p = tf1.placeholder(i.tf_dtype(), i.shape, name=i.name)
            phs.append(p)
            if r is None:
                feed.append(p)
                continue
            scale, zp = nudged(*r)
            stats[i.name] = (float(zp), 1.0 / scale)
            feed.append(c._fq(p, *r))
        ys = outputs_tuple(t.fn(c, *feed))
        outs = []
        for k, y in enumerate(ys):
            if y.dtype == tf.float32:
                y = c._fq(y, *out_rng[k])
            outs.append(tf.identity(y, name="out%d" % k if len(ys) > 1 else "out"))
        with tf1.Session(graph=g) as sess:
            conv = tf1.lite.TFLiteConverter.from_session(sess, phs, outs)
            conv.inference_type = tf.uint8
            conv.quantized_input_stats = stats
            return conv.convert()


def make_interpreter(b, kernels="builtin"):
    """The builtin kernels (the oracle), or the reference kernels (None when the reference
    resolver lacks an op of the model)."""
    if kernels == "ref":
        try:
            return Interpreter(model_content=b, num_threads=1,
                               experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        except (ValueError, RuntimeError):
            return None
    return Interpreter(model_content=b, num_threads=1,
                       experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)


QDT = {"uint8": np.uint8, "int8": np.int8}
# (op, dtype) whose reference kernel gives wrong results: the builtin kernels are the oracle.
REF_WRONG = {("SUM", "int8"), ("LOCAL_RESPONSE_NORMALIZATION", "float32")}


def check_ops(t, mode, it):
    """The intended op must be there, running on the mode's dtype. Returns (ok, op list)."""
    ops = it._get_ops_details()
    names = [o["op_name"] for o in ops]
    want = t.op
    found = [o for o in ops if o["op_name"] == want]
    if not found:
        return False, names
    if mode == "float32" or t.op in ("QUANTIZE", "DEQUANTIZE"):
        if t.op == "QUANTIZE" and mode == "int8":
            return any(r == np.int8 for o in found for r in o["result_types"]), names
        if t.op == "DEQUANTIZE" and mode == "int8":
            return any(r == np.float32 and o["operand_types"][0] == np.int8 for o in found
                       for r in o["result_types"]), names
        return True, names
    qt = QDT[mode]
    return all(qt in list(o["operand_types"]) + list(o["result_types"]) for o in found), names


def io_names(it, details, which):
    """Names the reader reports: the SignatureDef's when there is one, else tensor names."""
    names = {d["index"]: d["name"] for d in details}
    sigs = it._get_full_signature_list() if hasattr(it, "_get_full_signature_list") else {}
    if sigs:
        sig = next(iter(sigs.values()))
        for n, idx in sig.get(which, {}).items():
            names[idx] = n
    return [names[d["index"]] for d in details]


def test_inputs(t, mode, it):
    rng = np.random.default_rng(test_seed(t, mode, "data"))
    det = it.get_input_details()
    by_name = {i.name: i for i in t.inputs}
    vals = []
    for k, d in enumerate(det):
        spec = t.inputs[k] if k < len(t.inputs) else None
        for nm in (d["name"], d["name"].split(":")[0].replace("serving_default_", "")):
            if nm in by_name:
                spec = by_name[nm]
        shape = list(d["shape"])
        if spec is not None and None in spec.shape:  # dynamic dims: feed another size
            shape = [3 if s is None else s for s in spec.shape]
        if d["dtype"] in (np.uint8, np.int8):
            info = np.iinfo(d["dtype"])
            v = rng.integers(info.min, int(info.max) + 1, shape).astype(d["dtype"])
        else:
            v = spec.sample(rng, shape).astype(d["dtype"])
        vals.append(v)
    return vals


def invoke(it, ins):
    det = it.get_input_details()
    for d, v in zip(det, ins):
        if list(d["shape"]) != list(v.shape):
            it.resize_tensor_input(d["index"], list(v.shape))
    it.allocate_tensors()
    for d, v in zip(det, ins):
        it.set_tensor(d["index"], v)
    it.invoke()
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]


def run_model(b, t, mode):
    """Runs both kernel sets; returns (builtin interpreter, inputs, oracle outputs, oracle
    name, diff) where diff is the largest |builtin - reference| over the outputs (None: the
    reference resolver cannot run the model)."""
    it = make_interpreter(b)
    ins = test_inputs(t, mode, it)
    outs = invoke(it, ins)
    ref = make_interpreter(b, "ref")
    routs = None
    if ref is not None:
        try:
            routs = invoke(ref, ins)
        except (ValueError, RuntimeError):
            routs = None
    if routs is None:
        return it, ins, outs, "builtin", None
    diff = max([float(np.max(np.abs(a.astype(np.float64) - r.astype(np.float64))))
                for a, r in zip(outs, routs) if a.size] or [0.0])
    if (t.op, mode) in REF_WRONG:
        return it, ins, outs, "builtin", diff
    return it, ins, routs, "ref", diff


def write_pb(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.array(arr, order="C"), name).SerializeToString())  # keeps 0-d


def generate(t, mode, out):
    """Converts, checks and runs one test; writes it. Returns (status, detail)."""
    try:
        if mode == "uint8":
            b = convert_tf1_uint8(t, mode)
        else:
            b = convert_tf2(t, mode)
        if t.post:
            b = t.post(b)
    except Exception as e:  # the converter refused: not emitted for this dtype
        msg = str(e).strip().splitlines()
        return "skip", "converter: " + (msg[-1][:160] if msg else type(e).__name__)
    try:
        it, ins, outs, kernels, ref_diff = run_model(b, t, mode)
    except Exception as e:
        return "skip", "interpreter: " + str(e).strip().splitlines()[0][:160]
    ok, names = check_ops(t, mode, it)
    if not ok:
        return "skip", "not emitted as %s on %s (ops: %s)" % (t.op, mode, " ".join(names))
    d = os.path.join(out, t.name(mode))
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    with open(os.path.join(d, "model.tflite"), "wb") as f:
        f.write(b)
    in_names = io_names(it, it.get_input_details(), "inputs")
    out_det = it.get_output_details()
    out_names = io_names(it, out_det, "outputs")
    for k, (v, n) in enumerate(zip(ins, in_names)):
        write_pb(os.path.join(ds, "input_%d.pb" % k), v, n)
    for k, (v, n) in enumerate(zip(outs, out_names)):
        write_pb(os.path.join(ds, "output_%d.pb" % k), v, n)
    quant = any(od["quantization"][0] != 0 for od in out_det)
    if quant:
        tol = TOL["quant_1" if (t.op, mode) in QUANT_1_UNIT else "quant"]
    elif all(np.issubdtype(o.dtype, np.floating) for o in outs):
        tol = t.tol or TOL["float32"]
    else:
        tol = TOL["exact"]
    with open(os.path.join(d, "tolerance.txt"), "w") as f:
        f.write(tol + "\n")
    return "ok", (ref_diff, " ".join(sorted(set(names))), len(b), kernels)


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    out = args[0]
    filt = args[args.index("--filter") + 1] if "--filter" in args else None
    if "--keep" not in args and os.path.isdir(out):
        for e in os.listdir(out):
            p = os.path.join(out, e)
            if os.path.isdir(p) and os.path.isfile(os.path.join(p, "model.tflite")):
                shutil.rmtree(p)
    os.makedirs(out, exist_ok=True)
    rows, skipped = [], []
    for t in TESTS:
        for mode in t.modes:
            name = t.name(mode)
            if filt and filt not in name:
                continue
            st, det = generate(t, mode, out)
            if st == "ok":
                rows.append((t.op, mode, name, det))
                rd = "   -   " if det[0] is None else "%7.2g" % det[0]
                print("ok    %-58s %-7s diff %s %5d B  %s" % (name, det[3], rd, det[2], det[1]),
                      flush=True)
            else:
                skipped.append((t.op, mode, name, det))
                print("skip  %-58s %s" % (name, det), flush=True)
    if not filt:
        write_readme(out, rows, skipped)
        write_ops_list(out)
    ops = sorted({r[0] for r in rows})
    print("%d tests written (%s), %d ops; %d variants not emitted" % (
        len(rows), ", ".join("%s %d" % (m, sum(r[1] == m for r in rows)) for m in MODES),
        len(ops), len(skipped)))
    return 0


def write_ops_list(out):
    """OUTDIR/ops.txt: every BuiltinOperator of the schema, for the runner's coverage count
    ("# domain: tflite" makes it ask ti_op_supported about the tflite domain)."""
    from tensorflow.lite.python import schema_py_generated as s
    names = sorted((v, k) for k, v in vars(s.BuiltinOperator).items()
                   if not k.startswith("_") and isinstance(v, int))
    with open(os.path.join(out, "ops.txt"), "w") as f:
        f.write("# domain: tflite\n# TFLite BuiltinOperator names (schema of tensorflow %s), "
                "by code\n" % tf.__version__)
        for v, k in names:
            if k != "CUSTOM" and not k.startswith("PLACEHOLDER"):
                f.write("%s\n" % k)


def write_readme(out, rows, skipped):
    ops = sorted({r[0] for r in rows})
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("# TFLite op conformance data\n\n")
        from importlib.metadata import version
        f.write("Generated by `tests/conformance/gen_tflite_ops.py` with tensorflow %s and "
                "ai-edge-litert %s; do not edit. Layout and method: see the script's "
                "docstring.\n\n" % (tf.__version__, version("ai-edge-litert")))
        f.write("%d tests over %d ops (builtin, and the custom TFLite_Detection_PostProcess): "
                "%s.\n\n" % (len(rows), len(ops), ", ".join("%s %d" % (m, sum(r[1] == m for r in rows))
                                           for m in MODES)))
        f.write("| op | float32 | uint8 | int8 |\n|---|---:|---:|---:|\n")
        for op in ops:
            f.write("| %s | %s |\n" % (op, " | ".join(
                str(sum(1 for r in rows if r[0] == op and r[1] == m)) for m in MODES)))
        builtin = [r[2] for r in rows if r[3][3] != "ref"]
        f.write("\nReference outputs: TFLite's reference kernels (BUILTIN_REF), except for "
                "these tests, whose op the reference resolver lacks or gets wrong (REF_WRONG "
                "in the script), where the builtin kernels are used: %s.\n" %
                (", ".join(builtin) or "none"))
        diff = [r for r in rows if r[3][0]]
        f.write("\n## Where the builtin and the reference kernels disagree (%d)\n\n" % len(diff))
        f.write("Largest |builtin - reference| over the outputs (float tests: another "
                "summation order; quantized: the optimized kernels' rounding).\n\n")
        for r in diff:
            f.write("- `%s`: %.3g%s\n" % (r[2], r[3][0], " (builtin used)" if r[3][3] != "ref"
                                            else ""))
        f.write("\n## Variants the converter does not emit (%d)\n\n" % len(skipped))
        for op, mode, name, why in skipped:
            f.write("- `%s`: %s\n" % (name, why))


if __name__ == "__main__":
    sys.exit(main())
