#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Models for tests/test-movement-fusion.c: movement (index maps) fused into elementwise trees.

window-in        a shifted window's way in: Relu of a [1, 14, 14, 8] image, rolled by 3 along H
                 and W (each a Gather of constant indices, as simplify makes torch.roll), cut
                 into four 7x7 windows (Reshape, Transpose keeping the channels last, Reshape),
                 and a linear layer. The rolls and the partition are one pass.
window-out       the way out: a linear layer's [4, 49, 8] tokens put back into the image
                 (Reshape, Transpose, Reshape), rolled back, and the residual added. One pass.
scaled-heads     a Transpose of the heads scaled by one number before a matrix product: left to
                 the product (its strides and alpha), no movement group.
last-axis        a Transpose that moves the last axis, then an Add: not fused (its reads would
                 be a row apart).

Weights are seeded and small; the test makes its own inputs. Only development machines run
this script; the test reads the committed models.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from fb_test_models import ints, save, weight as shared_weight  # noqa: E402

rng = np.random.default_rng(20261203)
F = TensorProto.FLOAT


def weight(inits, name, shape):
    return shared_weight(rng, inits, name, shape, 0.25)


def roll(nodes, inits, name, x, shift, axis, n=14):
    idx = [(i - shift) % n for i in range(n)]
    nodes.append(helper.make_node("Gather", [x, ints(inits, name + "_i", idx)], [name], name=name,
                                  axis=axis))
    return name


def window_in(out):
    nodes, inits = [], []
    nodes.append(helper.make_node("Relu", ["x"], ["r"], name="r"))
    h = roll(nodes, inits, "roll_h", "r", 3, 1)
    w = roll(nodes, inits, "roll_w", h, 3, 2)
    nodes.append(helper.make_node("Reshape", [w, ints(inits, "split", [1, 2, 7, 2, 7, 8])], ["s"],
                                  name="s"))
    nodes.append(helper.make_node("Transpose", ["s"], ["t"], name="t", perm=[0, 1, 3, 2, 4, 5]))
    nodes.append(helper.make_node("Reshape", ["t", ints(inits, "tokens", [4, 49, 8])], ["tok"],
                                  name="tok"))
    nodes.append(helper.make_node("MatMul", ["tok", weight(inits, "wq", [8, 8])], ["y"], name="y"))
    save(out, "window-in", nodes, inits, [helper.make_tensor_value_info("x", F, [1, 14, 14, 8])],
         [helper.make_tensor_value_info("y", F, [4, 49, 8])])


def window_out(out):
    nodes, inits = [], []
    nodes.append(helper.make_node("MatMul", ["tok", weight(inits, "wp", [8, 8])], ["p"], name="p"))
    nodes.append(helper.make_node("Reshape", ["p", ints(inits, "split", [1, 2, 2, 7, 7, 8])], ["s"],
                                  name="s"))
    nodes.append(helper.make_node("Transpose", ["s"], ["t"], name="t", perm=[0, 1, 3, 2, 4, 5]))
    nodes.append(helper.make_node("Reshape", ["t", ints(inits, "image", [1, 14, 14, 8])], ["im"],
                                  name="im"))
    h = roll(nodes, inits, "back_h", "im", -3, 1)
    w = roll(nodes, inits, "back_w", h, -3, 2)
    nodes.append(helper.make_node("Add", ["x", w], ["y"], name="y"))
    save(out, "window-out", nodes, inits,
         [helper.make_tensor_value_info("tok", F, [4, 49, 8]),
          helper.make_tensor_value_info("x", F, [1, 14, 14, 8])],
         [helper.make_tensor_value_info("y", F, [1, 14, 14, 8])])


def scaled_heads(out):
    nodes, inits = [], []
    nodes.append(helper.make_node("MatMul", ["x", weight(inits, "wk", [16, 16])], ["k"], name="k"))
    nodes.append(helper.make_node("Reshape", ["k", ints(inits, "heads", [1, 8, 2, 8])], ["kh"],
                                  name="kh"))
    nodes.append(helper.make_node("Transpose", ["kh"], ["kt"], name="kt", perm=[0, 2, 1, 3]))
    inits.append(numpy_helper.from_array(np.array(0.125, dtype=np.float32), "scale"))
    nodes.append(helper.make_node("Mul", ["kt", "scale"], ["ks"], name="ks"))
    nodes.append(helper.make_node("MatMul", ["ks", weight(inits, "wv", [8, 8])], ["y"], name="y"))
    save(out, "scaled-heads", nodes, inits, [helper.make_tensor_value_info("x", F, [1, 8, 16])],
         [helper.make_tensor_value_info("y", F, [1, 2, 8, 8])])


def last_axis(out):
    nodes, inits = [], []
    nodes.append(helper.make_node("Relu", ["x"], ["r"], name="r"))
    nodes.append(helper.make_node("Transpose", ["r"], ["t"], name="t", perm=[0, 2, 1]))
    nodes.append(helper.make_node("Add", ["t", "b"], ["y"], name="y"))
    save(out, "last-axis", nodes, inits,
         [helper.make_tensor_value_info("x", F, [2, 16, 24]),
          helper.make_tensor_value_info("b", F, [2, 24, 16])],
         [helper.make_tensor_value_info("y", F, [2, 24, 16])])


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    window_in(out)
    window_out(out)
    scaled_heads(out)
    last_axis(out)
