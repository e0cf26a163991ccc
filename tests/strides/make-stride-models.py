#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the models of test-product-strides.c (tests/strides/NAME.onnx): attention whose head
Transposes the cuda target's products read and write through strides, ones they cannot, and
linear layers whose bias is the product's epilogue.

    make-stride-models.py OUTDIR

heads    one image's attention as PyTorch's MultiheadAttention exports it, 8 tokens, 2 heads
         of 8: q, k and v projected, each reshaped to [8, 2, 8] and moved to [2, 8, 8] (k to
         [2, 8, 8] with d before the tokens), q and k each scaled by the root of 8 ** -0.5,
         scores, Softmax, context, moved back to [8, 2, 8] and projected. All four Transposes go
         into the products' strides, both scalings into the scores' alpha. A fifth Transpose,
         of v to [2, 8, 8] with d first, is a graph output: it keeps its copy.
windows  the same over 2 windows ([2, 4, 2, 8]: window, token, head, d): the heads' moves to
         and from [2, 2, 4, 8] leave window and head no single batch stride in the bytes the
         products would read or write, so all four keep their copies.
position the windows' attention with a constant position bias ([head, token, token]) added to
         the scores: the scores' cuBLASLt call reads it made whole ([window, head, token,
         token]) as its C operand, and no pass after it adds the bias.
partition one shifted window attention block on a 4x4 map of 8 channels, 2x2 windows, 2 heads
         of 4, as torchvision's Swin exports it: the window partition (Reshape, Transpose,
         Reshape) before the qkv layer, its output split into heads (Reshape, Transpose, Gather),
         the heads joined before the output layer, then the partition reversed, a roll (Gather)
         and the residual Add. simplify moves the partition after the qkv layer and the reverse
         and roll before the output layer: two copies, and the output layer reads the
         residual as its C operand.
linear   linear layers of one input: with a bias, with a bias then Relu (both one cuBLASLt
         call with its bias epilogue), with a bias then a residual Add of the input, without a
         bias before the residual Add of another activation, and a Gemm with its bias and a
         residual (three more single calls, the residual cuBLASLt's C operand); and with a bias,
         a Relu and then the residual Add (the product, then a generated pass: cuBLASLt adds C
         before its Relu).

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
    return shared_weight(rng, inits, name, shape, 0.3)


def node(nodes, op, inputs, name, **attrs):
    nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
    return name


def heads(out):
    nodes, inits = [], []
    split = ints(inits, "split_shape", [8, 2, 8])
    parts = {}
    for p in "qkv":
        m = node(nodes, "MatMul", ["x", weight(inits, "w" + p, [16, 16])], p + "_proj")
        parts[p] = node(nodes, "Reshape", [m, split], p + "_split")
    q = node(nodes, "Transpose", [parts["q"]], "q", perm=[1, 0, 2])
    kt = node(nodes, "Transpose", [parts["k"]], "kt", perm=[1, 2, 0])
    v = node(nodes, "Transpose", [parts["v"]], "v", perm=[1, 0, 2])
    v_out = node(nodes, "Transpose", [parts["v"]], "v_out", perm=[1, 2, 0])
    # The scale, by its root on both sides, as PyTorch's attention exports it.
    inits.append(numpy_helper.from_array(np.array(8 ** -0.25, dtype=np.float32), "root"))
    qs = node(nodes, "Mul", [q, "root"], "q_scaled")
    ks = node(nodes, "Mul", [kt, "root"], "kt_scaled")
    s = node(nodes, "MatMul", [qs, ks], "scores")
    p = node(nodes, "Softmax", [s], "p", axis=-1)
    ctx = node(nodes, "MatMul", [p, v], "ctx")
    back = node(nodes, "Transpose", [ctx], "back", perm=[1, 0, 2])
    merged = node(nodes, "Reshape", [back, ints(inits, "merge_shape", [8, 16])], "merged")
    node(nodes, "MatMul", [merged, weight(inits, "wo", [16, 16])], "y")
    save(out, "heads", nodes, inits, [helper.make_tensor_value_info("x", F, [8, 16])],
         [helper.make_tensor_value_info("y", F, [8, 16]),
          helper.make_tensor_value_info(v_out, F, [2, 8, 8])])


def windows(out, name="windows", bias=False):
    nodes, inits = [], []
    split = ints(inits, "split_shape", [2, 4, 2, 8])
    parts = {}
    for p in "qkv":
        m = node(nodes, "MatMul", ["x", weight(inits, "w" + p, [16, 16])], p + "_proj")
        parts[p] = node(nodes, "Reshape", [m, split], p + "_split")
    q = node(nodes, "Transpose", [parts["q"]], "q", perm=[0, 2, 1, 3])
    kt = node(nodes, "Transpose", [parts["k"]], "kt", perm=[0, 2, 3, 1])
    v = node(nodes, "Transpose", [parts["v"]], "v", perm=[0, 2, 1, 3])
    s = node(nodes, "MatMul", [q, kt], "scores")
    if bias:
        s = node(nodes, "Add", [s, weight(inits, "position_bias", [2, 4, 4])], "biased")
    p = node(nodes, "Softmax", [s], "p", axis=-1)
    ctx = node(nodes, "MatMul", [p, v], "ctx")
    back = node(nodes, "Transpose", [ctx], "back", perm=[0, 2, 1, 3])
    merged = node(nodes, "Reshape", [back, ints(inits, "merge_shape", [8, 16])], "merged")
    node(nodes, "MatMul", [merged, weight(inits, "wo", [16, 16])], "y")
    save(out, name, nodes, inits, [helper.make_tensor_value_info("x", F, [8, 16])],
         [helper.make_tensor_value_info("y", F, [8, 16])])


def linear(out):
    nodes, inits = [], []
    a = node(nodes, "MatMul", ["x", weight(inits, "w1", [16, 16])], "a")
    node(nodes, "Add", [a, weight(inits, "b1", [16])], "y_bias")
    b = node(nodes, "MatMul", ["x", weight(inits, "w2", [16, 16])], "b")
    r = node(nodes, "Add", [weight(inits, "b2", [16]), b], "b_biased")
    node(nodes, "Relu", [r], "y_relu")
    c = node(nodes, "MatMul", ["x", weight(inits, "w3", [16, 16])], "c")
    cb = node(nodes, "Add", [c, weight(inits, "b3", [16])], "c_biased")
    node(nodes, "Add", [cb, "x"], "y_residual")
    h = node(nodes, "Sigmoid", ["x"], "h")
    d = node(nodes, "MatMul", ["x", weight(inits, "w4", [16, 16])], "d")
    node(nodes, "Add", [h, d], "y_residual_plain")
    node(nodes, "Add", [node(nodes, "Gemm", ["x", weight(inits, "w5", [16, 16]), weight(inits, "b5", [16])],
                             "g"), h], "y_gemm_residual")
    e = node(nodes, "MatMul", ["x", weight(inits, "w6", [16, 16])], "e")
    er = node(nodes, "Relu", [node(nodes, "Add", [e, weight(inits, "b6", [16])], "e_biased")], "e_relu")
    node(nodes, "Add", [er, "x"], "y_relu_residual")
    outputs = ("y_bias", "y_relu", "y_residual", "y_residual_plain", "y_gemm_residual", "y_relu_residual")
    save(out, "linear", nodes, inits, [helper.make_tensor_value_info("x", F, [8, 16])],
         [helper.make_tensor_value_info(y, F, [8, 16]) for y in outputs])


def partition(out):
    nodes, inits = [], []
    windows = node(nodes, "Reshape", ["x", ints(inits, "part_shape", [1, 2, 2, 2, 2, 8])], "part")
    windows = node(nodes, "Transpose", [windows], "part_t", perm=[0, 1, 3, 2, 4, 5])
    windows = node(nodes, "Reshape", [windows, ints(inits, "windows_shape", [4, 4, 8])], "windows")
    qkv = node(nodes, "MatMul", [windows, weight(inits, "wqkv", [8, 24])], "qkv")
    qkv = node(nodes, "Add", [qkv, weight(inits, "bqkv", [24])], "qkv_biased")
    qkv = node(nodes, "Reshape", [qkv, ints(inits, "heads_shape", [4, 4, 3, 2, 4])], "qkv_heads")
    qkv = node(nodes, "Transpose", [qkv], "qkv_t", perm=[2, 0, 3, 1, 4])
    part = {}
    for i, p in enumerate("qkv"):
        inits.append(numpy_helper.from_array(np.array(i, dtype=np.int64), p + "_index"))
        part[p] = node(nodes, "Gather", [qkv, p + "_index"], p, axis=0)
    kt = node(nodes, "Transpose", [part["k"]], "kt", perm=[0, 1, 3, 2])
    s = node(nodes, "MatMul", [part["q"], kt], "scores")
    ctx = node(nodes, "MatMul", [node(nodes, "Softmax", [s], "p", axis=-1), part["v"]], "ctx")
    back = node(nodes, "Transpose", [ctx], "back", perm=[0, 2, 1, 3])
    back = node(nodes, "Reshape", [back, ints(inits, "joined_shape", [4, 4, 8])], "joined")
    proj = node(nodes, "MatMul", [back, weight(inits, "wo", [8, 8])], "proj")
    proj = node(nodes, "Add", [proj, weight(inits, "bo", [8])], "proj_biased")
    rev = node(nodes, "Reshape", [proj, ints(inits, "rev_shape", [1, 2, 2, 2, 2, 8])], "rev")
    rev = node(nodes, "Transpose", [rev], "rev_t", perm=[0, 1, 3, 2, 4, 5])
    rev = node(nodes, "Reshape", [rev, ints(inits, "map_shape", [1, 4, 4, 8])], "map")
    rolled = node(nodes, "Gather", [rev, ints(inits, "roll_indices", [1, 2, 3, 0])], "unroll", axis=2)
    node(nodes, "Add", ["x", rolled], "y")
    save(out, "partition", nodes, inits, [helper.make_tensor_value_info("x", F, [1, 4, 4, 8])],
         [helper.make_tensor_value_info("y", F, [1, 4, 4, 8])])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    heads(out)
    windows(out)
    linear(out)
    windows(out, "position", bias=True)
    partition(out)


if __name__ == "__main__":
    main()
