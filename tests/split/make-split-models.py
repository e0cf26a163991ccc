#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the model of test-product-split.c (tests/split/products.onnx): products with constant
weights that the cuda target may run as one TF32 product of their operands split along the
depth, in every arrangement its split reads.

    make-split-models.py OUTDIR

products  x [2, 24, 32] and y [32, 48]:
          - x times w1 [32, 40] with a bias then a Relu (the two images one taller product,
            the bias and Relu cuBLASLt's epilogue);
          - x as [48, 32] times w2 [40, 32] transposed (a Gemm with transB and its bias);
          - y transposed times w3 [32, 24] (a Gemm with transA: the split reads A's columns);
          - x times w4 [32, 32] plus x (the residual as the product's C operand);
          - x times w5 [32, 16] then an Erf (a generated pass after the product).
          Weights are drawn with a spread of magnitudes, so their TF32 parts and remainders both
          matter.

Only development machines run this script; the test reads the committed model.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from fb_test_models import save  # noqa: E402

rng = np.random.default_rng(20261204)
F = TensorProto.FLOAT


def weight(inits, name, shape):
    w = rng.standard_normal(shape) * np.exp2(rng.integers(-3, 3, size=shape)) * 0.2
    inits.append(numpy_helper.from_array(w.astype(np.float32), name))
    return name


def node(nodes, op, inputs, name, **attrs):
    nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
    return name


def products(out):
    nodes, inits = [], []
    a = node(nodes, "MatMul", ["x", weight(inits, "w1", [32, 40])], "a")
    node(nodes, "Relu", [node(nodes, "Add", [a, weight(inits, "b1", [40])], "a_biased")], "y_bias_relu")
    shape = numpy_helper.from_array(np.array([48, 32], dtype=np.int64), "flat")
    inits.append(shape)
    flat = node(nodes, "Reshape", ["x", "flat"], "x_flat")
    node(nodes, "Gemm", [flat, weight(inits, "w2", [40, 32]), weight(inits, "b2", [40])],
         "y_trans_b", transB=1)
    node(nodes, "Gemm", ["y", weight(inits, "w3", [32, 24])], "y_trans_a", transA=1)
    r = node(nodes, "MatMul", ["x", weight(inits, "w4", [32, 32])], "r")
    node(nodes, "Add", [r, "x"], "y_residual")
    e = node(nodes, "MatMul", ["x", weight(inits, "w5", [32, 16])], "e")
    node(nodes, "Erf", [e], "y_erf")
    outputs = [("y_bias_relu", [2, 24, 40]), ("y_trans_b", [48, 40]), ("y_trans_a", [48, 24]),
               ("y_residual", [2, 24, 32]), ("y_erf", [2, 24, 16])]
    save(out, "products", nodes, inits,
         [helper.make_tensor_value_info("x", F, [2, 24, 32]), helper.make_tensor_value_info("y", F, [32, 48])],
         [helper.make_tensor_value_info(n, F, s) for n, s in outputs])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    products(out)


if __name__ == "__main__":
    main()
