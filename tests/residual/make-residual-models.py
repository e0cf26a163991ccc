#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the models of test-residual-inplace.c (tests/residual/NAME.onnx): convolutions
whose fused Add reads a residual, where the cpu target may add it in place and where it must
not.

    make-residual-models.py OUTDIR

Every block is Relu (Conv (Relu (Conv1x1 (x))) + x).

inplace         two residual blocks, a 3x3 one (48 channels: the direct convolution on AVX2
                processors) and a 1x1 one (oneDNN) reading the first block's output, then a
                1x1 convolution: both adds are in place, the second over the first's bytes.
read-later      the residual is read again after its block (by a Concat of what follows it).
input-residual  the residual is the graph input (1x1 pixels, so that channels-last is a view of
                it, not a transposed copy).
output-residual the residual is also a graph output.
self-residual   the residual is the convolution's own input: Relu (Conv (a) + a).

Weights are seeded and small; the test makes its own inputs. Only development machines run
this script; the test reads the committed models.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20250611)
F = TensorProto.FLOAT
C = 48


def weight(name, shape, scale):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def conv(nodes, inits, name, x, y, cin, cout, k, bias=True):
    inits.append(weight(name + "_w", [cout, cin, k, k], 1.0 / np.sqrt(cin * k * k)))
    ins = [x, name + "_w"]
    if bias:
        inits.append(weight(name + "_b", [cout], 0.1))
        ins.append(name + "_b")
    nodes.append(helper.make_node("Conv", ins, [y], name=name, pads=[k // 2] * 4,
                                  kernel_shape=[k, k]))


def block(nodes, inits, name, x, y, k):
    """y = Relu (Conv (Relu (Conv1x1 (x))) + x), a bottleneck's shape."""
    conv(nodes, inits, name + "_in", x, name + "_i", C, C, 1)
    nodes.append(helper.make_node("Relu", [name + "_i"], [name + "_h"], name=name + "_in_relu"))
    conv(nodes, inits, name, name + "_h", name + "_c", C, C, k)
    nodes.append(helper.make_node("Add", [name + "_c", x], [name + "_s"], name=name + "_add"))
    nodes.append(helper.make_node("Relu", [name + "_s"], [y], name=name + "_relu"))


def stem(nodes, inits):
    conv(nodes, inits, "stem", "x", "stem_c", C, C, 3)
    nodes.append(helper.make_node("Relu", ["stem_c"], ["a"], name="stem_relu"))


def save(out, name, nodes, inits, outputs, size=8):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", F, [1, C, size, size])],
        [helper.make_tensor_value_info(o, F, [1, c, size, size]) for o, c in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    nodes, inits = [], []
    stem(nodes, inits)
    block(nodes, inits, "b3", "a", "r3", 3)
    block(nodes, inits, "b1", "r3", "r1", 1)
    conv(nodes, inits, "head", "r1", "y", C, 16, 1)
    save(out, "inplace", nodes, inits, [("y", 16)])

    nodes, inits = [], []
    stem(nodes, inits)
    block(nodes, inits, "b1", "a", "r1", 1)
    conv(nodes, inits, "head", "r1", "t", C, 16, 1)
    nodes.append(helper.make_node("Concat", ["t", "a"], ["y"], name="cat", axis=1))
    save(out, "read-later", nodes, inits, [("y", C + 16)])

    nodes, inits = [], []
    block(nodes, inits, "b1", "x", "r1", 1)
    conv(nodes, inits, "head", "r1", "y", C, 16, 1)
    save(out, "input-residual", nodes, inits, [("y", 16)], size=1)

    nodes, inits = [], []
    stem(nodes, inits)
    block(nodes, inits, "b1", "a", "r1", 1)
    conv(nodes, inits, "head", "r1", "y", C, 16, 1)
    save(out, "output-residual", nodes, inits, [("y", 16), ("a", C)])

    nodes, inits = [], []
    stem(nodes, inits)
    conv(nodes, inits, "b1", "a", "b1_c", C, C, 1)
    nodes.append(helper.make_node("Add", ["b1_c", "a"], ["b1_s"], name="b1_add"))
    nodes.append(helper.make_node("Relu", ["b1_s"], ["r1"], name="b1_relu"))
    conv(nodes, inits, "head", "r1", "y", C, 16, 1)
    save(out, "self-residual", nodes, inits, [("y", 16)])


if __name__ == "__main__":
    main()
