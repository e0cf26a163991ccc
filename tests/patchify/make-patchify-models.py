#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the models of test-patchify.c (tests/patchify/NAME.onnx): convolutions whose windows
tile their input, which the cuda target runs channels-last as a copy of the patches and one
cuBLASLt product, and one that must keep cuDNN.

    make-patchify-models.py OUTDIR

patchify.onnx, from one image x [1, 3, 66, 65] (outputs of more than 16 pixels: fewer are the
generated matrix-vector kernels'):
tokens    a patch embedding as vision transformers export it: a 4x4 stride-4 convolution with a
          bias (3 -> 8 channels; the last 2 rows and the last column are left over), reshaped
          to [1, 8, 256] and moved to the tokens [1, 256, 8]
residual  a 2x2 stride-2 convolution without a bias of h = Relu (the 4x4 one's output), plus
          the 2x2 max pool of h (the product's C operand)
relu      a 2x2 stride-2 convolution of h with a bias and then a Relu (a pass after the product)

overlap.onnx: a 3x3 stride-2 convolution of h [1, 8, 16, 16]: its windows overlap, so it stays
cuDNN's.

pointwise.onnx, from x [2, 8, 20, 20] (1x1 convolutions, two images):
plain     a 1x1 convolution with a bias (8 -> 16): a product reading x as it is
excited   a squeeze-excitation block: s = Sigmoid (1x1 (Relu (1x1 (GlobalAveragePool (x))))),
          one scale per image and channel [2, 8, 1, 1], then a 1x1 convolution with a bias
          of x * s plus x: the scale folded into each image's weights, a batched product,
          the residual its C operand

pointwise-relu.onnx: a 1x1 convolution of x with a bias and then a Relu: cuDNN's, which fuses
the Relu.

pointwise-concat.onnx, from x [2, 16, 10, 10]: a = a 1x1 convolution of x (16 -> 16) and
Relu (a 3x3 depthwise convolution of x, a generated kernel) concatenated along the channels,
which channels-last places in one buffer (rows of 32 channels): the product computing a writes
its rows through its row stride; whole, a 1x1
convolution of the concatenation (32 -> 8) reads it packed, and one of a alone (16 -> 8)
reads a's rows through its row stride.

Weights are seeded and small; the test makes its own inputs. Only development machines run
this script; the test reads the committed models.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from fb_test_models import ints, save, weight as shared_weight  # noqa: E402

rng = np.random.default_rng(20261204)
F = TensorProto.FLOAT


def weight(inits, name, shape):
    return shared_weight(rng, inits, name, shape, 0.3)


def conv(nodes, inits, x, name, co, ci, k, stride, bias=True):
    inputs = [x, weight(inits, name + ".w", [co, ci, k, k])]
    if bias:
        inputs.append(weight(inits, name + ".b", [co]))
    nodes.append(helper.make_node("Conv", inputs, [name], name=name, kernel_shape=[k, k],
                                  strides=[stride, stride]))
    return name


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    nodes, inits = [], []
    e = conv(nodes, inits, "x", "embed", 8, 3, 4, 4)
    nodes.append(helper.make_node("Reshape", [e, ints(inits, "flat", [1, 8, 256])], ["flat_e"]))
    nodes.append(helper.make_node("Transpose", ["flat_e"], ["tokens"], perm=[0, 2, 1]))
    nodes.append(helper.make_node("Relu", [e], ["h"]))
    d = conv(nodes, inits, "h", "down", 8, 8, 2, 2, bias=False)
    nodes.append(helper.make_node("MaxPool", ["h"], ["skip"], kernel_shape=[2, 2], strides=[2, 2]))
    nodes.append(helper.make_node("Add", [d, "skip"], ["residual"]))
    r = conv(nodes, inits, "h", "down_relu", 6, 8, 2, 2)
    nodes.append(helper.make_node("Relu", [r], ["relu"]))
    outputs = [helper.make_tensor_value_info("tokens", F, [1, 256, 8]),
               helper.make_tensor_value_info("residual", F, [1, 8, 8, 8]),
               helper.make_tensor_value_info("relu", F, [1, 6, 8, 8])]
    save(out, "patchify", nodes, inits, [helper.make_tensor_value_info("x", F, [1, 3, 66, 65])], outputs)
    nodes, inits = [], []
    conv(nodes, inits, "h", "overlap", 4, 8, 3, 2)
    save(out, "overlap", nodes, inits, [helper.make_tensor_value_info("h", F, [1, 8, 16, 16])],
         [helper.make_tensor_value_info("overlap", F, [1, 4, 7, 7])])
    nodes, inits = [], []
    conv(nodes, inits, "x", "plain", 16, 8, 1, 1)
    nodes.append(helper.make_node("GlobalAveragePool", ["x"], ["pooled"]))
    squeeze = conv(nodes, inits, "pooled", "squeeze", 4, 8, 1, 1)
    nodes.append(helper.make_node("Relu", [squeeze], ["squeeze_relu"]))
    expand = conv(nodes, inits, "squeeze_relu", "expand", 8, 4, 1, 1)
    nodes.append(helper.make_node("Sigmoid", [expand], ["scale"]))
    nodes.append(helper.make_node("Mul", ["x", "scale"], ["scaled"]))
    project = conv(nodes, inits, "scaled", "project", 8, 8, 1, 1)
    nodes.append(helper.make_node("Add", [project, "x"], ["excited"]))
    x = helper.make_tensor_value_info("x", F, [2, 8, 20, 20])
    save(out, "pointwise", nodes, inits, [x],
         [helper.make_tensor_value_info("plain", F, [2, 16, 20, 20]),
          helper.make_tensor_value_info("excited", F, [2, 8, 20, 20])])
    nodes, inits = [], []
    r = conv(nodes, inits, "x", "pw_relu", 8, 8, 1, 1)
    nodes.append(helper.make_node("Relu", [r], ["relu"]))
    save(out, "pointwise-relu", nodes, inits, [x],
         [helper.make_tensor_value_info("relu", F, [2, 8, 20, 20])])
    nodes, inits = [], []
    a = conv(nodes, inits, "x", "a", 16, 16, 1, 1)
    nodes.append(helper.make_node("Conv", ["x", weight(inits, "b3.w", [16, 1, 3, 3])], ["b3"],
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16))
    nodes.append(helper.make_node("Relu", ["b3"], ["b"]))
    nodes.append(helper.make_node("Concat", [a, "b"], ["cat"], axis=1))
    conv(nodes, inits, "cat", "whole", 8, 32, 1, 1)
    conv(nodes, inits, a, "of_a", 8, 16, 1, 1)
    save(out, "pointwise-concat", nodes, inits,
         [helper.make_tensor_value_info("x", F, [2, 16, 10, 10])],
         [helper.make_tensor_value_info("whole", F, [2, 8, 10, 10]),
          helper.make_tensor_value_info("of_a", F, [2, 8, 10, 10])])


if __name__ == "__main__":
    main()
