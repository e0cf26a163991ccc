#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the models of test-scale-fold.c (tests/scale-fold/NAME.onnx): squeeze-excitation
blocks, whose per-channel scale the cpu target folds into the next convolution's weights where
they are small beside its input, and leaves a Mul of its own where not.

    make-scale-fold-models.py OUTDIR

Each is y = Conv1x1 (h * Sigmoid (Conv1x1 (Relu (Conv1x1 (GlobalAveragePool (h)))))) + x,
with h = Swish (Conv3x3 (x)), channels 16 -> 32 -> 16 (the squeeze to 8):

se-block   a 24x24 map: the projection's 512 weights are 1/36 of h, so the scale is folded.
se-small   a 4x4 map: 512 weights against 512 elements of h, so the Mul stays a node.
se-batch2  se-block on two images: each image has its own scale, which no one set of weights
           holds, so the Mul is the convolution's first loop.

Weights are seeded and small; the test makes its own inputs. Only development machines run
this script; the test reads the committed models.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def build(name, side, batch):
    rng = np.random.default_rng(20261202)
    inits, nodes = [], []

    def conv(x, y, cin, cout, k):
        w = (rng.standard_normal([cout, cin, k, k]) / np.sqrt(cin * k * k)).astype(np.float32)
        b = (rng.standard_normal([cout]) * 0.1).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, y + "_w"), numpy_helper.from_array(b, y + "_b")])
        nodes.append(helper.make_node("Conv", [x, y + "_w", y + "_b"], [y], name=y,
                                      kernel_shape=[k, k], pads=[k // 2] * 4))

    def op(kind, ins, out):
        nodes.append(helper.make_node(kind, ins, [out], name=out))

    conv("x", "stem", 16, 32, 3)
    op("Sigmoid", ["stem"], "stem_gate")
    op("Mul", ["stem", "stem_gate"], "h")
    op("GlobalAveragePool", ["h"], "pooled")
    conv("pooled", "squeeze", 32, 8, 1)
    op("Relu", ["squeeze"], "squeezed")
    conv("squeezed", "excite", 8, 32, 1)
    op("Sigmoid", ["excite"], "scale")
    op("Mul", ["h", "scale"], "scaled")
    conv("scaled", "project", 32, 16, 1)
    op("Add", ["project", "x"], "y")
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", F, [batch, 16, side, side])],
        [helper.make_tensor_value_info("y", F, [batch, 16, side, side])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def main():
    out = sys.argv[1]
    for name, side, batch in (("se-block", 24, 1), ("se-small", 4, 1), ("se-batch2", 24, 2)):
        onnx.save(build(name, side, batch), os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
