#!/usr/bin/env python3
"""Single-conv ONNX models (Conv + Relu, random weights) for timing one layer alone with
tools/tinyinfer-run or onnxruntime: the stems of SqueezeNet 1.1, MobileNetV2 and ResNet-18
at 224 x 224, SqueezeNet's Winograd layers (3x3 convs 16 -> 64 at 55 x 55, 32 -> 128 at
27 x 27, 64 -> 256 at 13 x 13: maps that end in cut tiles), and SqueezeNet's classifier
(1x1, 512 -> 1000 at 13 x 13: a GEMM with 9 last columns), and depthwise convs of
MobileNetV2, MobileNetV3-small and EfficientNet-B0 (dw<K>s<S>_<channels>_<input size>, pads
K / 2; two wider 5x5 / 2 ones). Needs numpy and onnx.

Usage: bench/conv_models.py OUTDIR   (writes OUTDIR/<name>.onnx for each name in MODELS)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: input channels, output channels, input size, kernel, stride, pad[, group]
MODELS = {
    "sq_stem": (3, 64, 224, 3, 2, 0),
    "mnv2_stem": (3, 32, 224, 3, 2, 1),
    "r18_stem": (3, 64, 224, 7, 2, 3),
    "sq_16_64": (16, 64, 55, 3, 1, 1),
    "sq_32_128": (32, 128, 27, 3, 1, 1),
    "sq_64_256": (64, 256, 13, 3, 1, 1),
    "sq_cls": (512, 1000, 13, 1, 1, 0),
}
for _k, _s, _c, _h in [(5, 2, 96, 28), (5, 2, 144, 56), (5, 2, 64, 112), (5, 2, 32, 224),
                       (5, 2, 288, 14), (3, 2, 96, 112), (3, 2, 192, 28), (3, 2, 16, 112),
                       (5, 1, 240, 14), (5, 1, 144, 14), (5, 1, 240, 28), (3, 1, 384, 14),
                       (3, 1, 144, 56), (3, 1, 32, 112)]:
    MODELS["dw%ds%d_%d_%d" % (_k, _s, _c, _h)] = (_c, _c, _h, _k, _s, _k // 2, _c)


def conv_model(name, c, m, h, k, s, p, group=1):
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array((rng.standard_normal((m, c // group, k, k)) * 0.1)
                                .astype(np.float32), "w")
    b = numpy_helper.from_array((rng.standard_normal(m) * 0.1).astype(np.float32), "b")
    o = (h + 2 * p - k) // s + 1
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["t"], kernel_shape=[k, k],
                              strides=[s, s], pads=[p] * 4, group=group),
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
