#!/usr/bin/env python3
"""Single-conv ONNX models (Conv + Relu, random weights) for timing one layer alone with
tools/tinyinfer-run or onnxruntime: the stems of SqueezeNet 1.1, MobileNetV2 and ResNet-18
at 224 x 224, SqueezeNet's Winograd layers (3x3 convs 16 -> 64 at 55 x 55, 32 -> 128 at
27 x 27, 64 -> 256 at 13 x 13: maps that end in cut tiles), and SqueezeNet's classifier
(1x1, 512 -> 1000 at 13 x 13: a GEMM with 9 last columns). Needs numpy and onnx.

Usage: bench/conv_models.py OUTDIR   (writes OUTDIR/sq_stem.onnx, mnv2_stem.onnx,
       r18_stem.onnx, sq_16_64.onnx, sq_32_128.onnx, sq_64_256.onnx, sq_cls.onnx)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: input channels, output channels, input size, kernel, stride, pad
MODELS = {
    "sq_stem": (3, 64, 224, 3, 2, 0),
    "mnv2_stem": (3, 32, 224, 3, 2, 1),
    "r18_stem": (3, 64, 224, 7, 2, 3),
    "sq_16_64": (16, 64, 55, 3, 1, 1),
    "sq_32_128": (32, 128, 27, 3, 1, 1),
    "sq_64_256": (64, 256, 13, 3, 1, 1),
    "sq_cls": (512, 1000, 13, 1, 1, 0),
}


def conv_model(name, c, m, h, k, s, p):
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array((rng.standard_normal((m, c, k, k)) * 0.1).astype(np.float32), "w")
    b = numpy_helper.from_array((rng.standard_normal(m) * 0.1).astype(np.float32), "b")
    o = (h + 2 * p - k) // s + 1
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["t"], kernel_shape=[k, k],
                              strides=[s, s], pads=[p] * 4),
             helper.make_node("Relu", ["t"], ["y"])]
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, o, o])],
                          [w, b])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # onnxruntime builds of 2024-2026 read it
    return model


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, shape in MODELS.items():
        onnx.save(conv_model(name, *shape), os.path.join(sys.argv[1], name + ".onnx"))


if __name__ == "__main__":
    main()
