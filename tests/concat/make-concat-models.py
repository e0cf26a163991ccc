#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the models of test-concat-inplace.c (tests/concat/NAME.onnx): Concats whose pieces
their producers may write straight into the concatenation, and Concats that must keep their copy.

    make-concat-models.py OUTDIR

dense           a dense block at batch 1: three layers, each a 3x3 convolution of
                Relu (x * s + b) of the Concat of everything before it (the last Concat holds
                the others' pieces), then a 1x1 convolution of the last Concat. One piece is
                also read after the block by a Relu that could be computed over its bytes.
dense-batch2    the same block at batch 2: a piece is no contiguous run of the output.
odd-sizes       pieces of 3x5x5 floats (300 bytes): the runs would start off the alignment.
input-piece     the graph input is a piece.
twice           one piece twice in the same Concat.
pooled          squeeze-like pieces of 1x1 maps (GlobalAveragePool of two branches), which are
                contiguous in channels-last too.
dense-wide      the dense block at batch 2 with 16 channels a piece (64 bytes): channels-last,
                each piece a strided run of channels the cpu target writes in place.
fire            SqueezeNet's fire module on a 32x32 map: a 1x1 squeeze, then the Concat of a 1x1
                and a 3x3 expansion (16 channels each, Relu'd), then a 1x1 convolution.

Weights are seeded and small; the test makes its own inputs. Only development machines run
this script; the test reads the committed models.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from fb_test_models import save  # noqa: E402

rng = np.random.default_rng(20261202)
F = TensorProto.FLOAT


def const(inits, name, shape, scale=1.0):
    inits.append(numpy_helper.from_array(
        (rng.standard_normal(shape) * scale).astype(np.float32), name))
    return name


def conv(nodes, inits, name, x, cin, cout, k):
    w = const(inits, name + "_w", [cout, cin, k, k], 1.0 / np.sqrt(cin * k * k))
    b = const(inits, name + "_b", [cout], 0.1)
    nodes.append(helper.make_node("Conv", [x, w, b], [name], name=name,
                                  pads=[k // 2] * 4, kernel_shape=[k, k]))
    return name


def norm_relu(nodes, inits, name, x, c):
    s = const(inits, name + "_s", [c, 1, 1], 0.5)
    b = const(inits, name + "_b", [c, 1, 1], 0.1)
    nodes.append(helper.make_node("Mul", [x, s], [name + "_m"], name=name + "_m"))
    nodes.append(helper.make_node("Add", [name + "_m", b], [name + "_a"], name=name + "_a"))
    nodes.append(helper.make_node("Relu", [name + "_a"], [name], name=name))
    return name


def dense(out, name, batch, c0=8, growth=4, hw=(6, 8)):
    nodes, inits = [], []
    x = "x"
    stem = conv(nodes, inits, "stem", x, 3, c0, 3)
    features, c = [stem], c0
    for layer in range(1, 4):
        if len(features) > 1:
            cat = f"cat{layer}"
            nodes.append(helper.make_node("Concat", features, [cat], name=cat, axis=1))
        else:
            cat = features[0]
        h = norm_relu(nodes, inits, f"norm{layer}", cat, c)
        features.append(conv(nodes, inits, f"conv{layer}", h, c, growth, 3))
        c += growth
    nodes.append(helper.make_node("Concat", features, ["cat4"], name="cat4", axis=1))
    h = norm_relu(nodes, inits, "norm4", "cat4", c)
    y = conv(nodes, inits, "head", h, c, 6, 1)
    # A reader of a piece after the block whose result could take the piece's bytes.
    nodes.append(helper.make_node("Relu", [features[2]], ["late"], name="late"))
    nodes.append(helper.make_node("ReduceMean", ["late"], ["late_mean"], name="late_mean",
                                  axes=[2, 3], keepdims=1))
    nodes.append(helper.make_node("Mul", ["late_mean", "late_mean"], ["sq"], name="sq"))
    save(out, name, nodes, inits,
         [helper.make_tensor_value_info(x, F, [batch, 3, *hw])],
         [helper.make_tensor_value_info(y, F, [batch, 6, *hw]),
          helper.make_tensor_value_info("sq", F, [batch, growth, 1, 1])])


def small(out, name, pieces_of, hw=(5, 5), c=3):
    """Concat(pieces) of convolutions of the input, then a 1x1 convolution."""
    nodes, inits = [], []
    f = conv(nodes, inits, "f", "x", 3, c, 3)
    g = conv(nodes, inits, "g", "x", 3, c, 3)
    pieces = pieces_of("x", f, g)
    nodes.append(helper.make_node("Concat", pieces, ["cat"], name="cat", axis=1))
    cin = sum(3 if p == "x" else c for p in pieces)
    y = conv(nodes, inits, "head", "cat", cin, 4, 1)
    save(out, name, nodes, inits, [helper.make_tensor_value_info("x", F, [1, 3, *hw])],
         [helper.make_tensor_value_info(y, F, [1, 4, *hw])])


def pooled(out):
    nodes, inits = [], []
    a = conv(nodes, inits, "a", "x", 3, 16, 3)
    b = conv(nodes, inits, "b", "x", 3, 16, 3)
    nodes.append(helper.make_node("GlobalAveragePool", [a], ["pa"], name="pa"))
    nodes.append(helper.make_node("GlobalAveragePool", [b], ["pb"], name="pb"))
    nodes.append(helper.make_node("Concat", ["pa", "pb"], ["cat"], name="cat", axis=1))
    y = conv(nodes, inits, "head", "cat", 32, 8, 1)
    save(out, "pooled", nodes, inits, [helper.make_tensor_value_info("x", F, [1, 3, 6, 6])],
         [helper.make_tensor_value_info(y, F, [1, 8, 1, 1])])


def fire(out):
    nodes, inits = [], []

    def relu(x):
        nodes.append(helper.make_node("Relu", [x], [x + "_r"], name=x + "_r"))
        return x + "_r"

    s = relu(conv(nodes, inits, "squeeze", "x", 8, 16, 1))
    e1 = relu(conv(nodes, inits, "expand1", s, 16, 16, 1))
    e3 = relu(conv(nodes, inits, "expand3", s, 16, 16, 3))
    nodes.append(helper.make_node("Concat", [e1, e3], ["cat"], name="cat", axis=1))
    y = conv(nodes, inits, "head", "cat", 32, 4, 1)
    save(out, "fire", nodes, inits, [helper.make_tensor_value_info("x", F, [1, 8, 32, 32])],
         [helper.make_tensor_value_info(y, F, [1, 4, 32, 32])])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    dense(out, "dense", 1)
    dense(out, "dense-batch2", 2)
    small(out, "odd-sizes", lambda x, f, g: [f, g])
    small(out, "input-piece", lambda x, f, g: [x, f], hw=(8, 8), c=16)
    small(out, "twice", lambda x, f, g: [f, f], hw=(8, 8), c=16)
    pooled(out)
    dense(out, "dense-wide", 2, c0=16, growth=16)
    fire(out)


if __name__ == "__main__":
    main()
