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


if __name__ == "__main__":
    main()
