#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the models of test-slice-view.c (tests/slice/NAME.onnx): Slices and Gathers whose
output is one contiguous run of their input (views, no copy), and ones that must copy.

    make-slice-models.py OUTDIR

attention-split  an attention head's packed projection split as PyTorch's exporter writes it:
                 MatMul, Reshape to [1, 8, 3, 2, 8], Transpose to [3, 1, 2, 8, 8], then q, k, v
                 as Gathers of index 0, 1 and 2 along the first axis: three runs.
row-halves       Relu of a [1, 8, 8, 16] image, its rows 0-3 and 4-7 as Slices along H (two
                 runs, the second 2048 bytes in), each through a Softmax, added.
copies           no runs: a Gather along axis 1 at batch 2, a Slice along the last axis, a
                 Slice of the graph input itself, a Slice starting 12 bytes in (off the
                 alignment), and a Slice that is a graph output.

Weights are seeded and small; the test makes its own inputs. Only development machines run
this script; the test reads the committed models.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from fb_test_models import ints, save  # noqa: E402

rng = np.random.default_rng(20261203)
F = TensorProto.FLOAT


def slice_node(nodes, inits, name, x, start, end, axis):
    nodes.append(helper.make_node("Slice", [x, ints(inits, name + "_s", [start]),
                                            ints(inits, name + "_e", [end]),
                                            ints(inits, name + "_a", [axis])], [name], name=name))
    return name


def attention_split(out):
    nodes, inits = [], []
    w = numpy_helper.from_array((rng.standard_normal([16, 48]) * 0.25).astype(np.float32), "w")
    inits.append(w)
    nodes.append(helper.make_node("MatMul", ["x", "w"], ["qkv"], name="qkv"))
    nodes.append(helper.make_node("Reshape", ["qkv", ints(inits, "shape", [1, 8, 3, 2, 8])],
                                  ["qkv_r"], name="qkv_r"))
    nodes.append(helper.make_node("Transpose", ["qkv_r"], ["qkv_t"], name="qkv_t",
                                  perm=[2, 0, 3, 1, 4]))
    for i, part in enumerate("qkv"):
        nodes.append(helper.make_node("Gather", ["qkv_t", ints(inits, f"i{part}", i)], [part],
                                      name=part, axis=0))
    nodes.append(helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 1, 3, 2]))
    nodes.append(helper.make_node("MatMul", ["q", "kt"], ["scores"], name="scores"))
    nodes.append(helper.make_node("Softmax", ["scores"], ["p"], name="p", axis=-1))
    nodes.append(helper.make_node("MatMul", ["p", "v"], ["y"], name="y"))
    save(out, "attention-split", nodes, inits, [helper.make_tensor_value_info("x", F, [1, 8, 16])],
         [helper.make_tensor_value_info("y", F, [1, 2, 8, 8])])


def row_halves(out):
    nodes, inits = [], []
    nodes.append(helper.make_node("Relu", ["x"], ["r"], name="r"))
    top = slice_node(nodes, inits, "top", "r", 0, 4, 1)
    bottom = slice_node(nodes, inits, "bottom", "r", 4, 8, 1)
    # Read by reductions: an elementwise reader would take the Slices into its own pass.
    nodes.append(helper.make_node("Softmax", [top], ["st"], name="st"))
    nodes.append(helper.make_node("Softmax", [bottom], ["sb"], name="sb"))
    nodes.append(helper.make_node("Add", ["st", "sb"], ["y"], name="y"))
    save(out, "row-halves", nodes, inits, [helper.make_tensor_value_info("x", F, [1, 8, 8, 16])],
         [helper.make_tensor_value_info("y", F, [1, 4, 8, 16])])


def copies(out):
    nodes, inits = [], []
    nodes.append(helper.make_node("Relu", ["a"], ["ra"], name="ra"))
    nodes.append(helper.make_node("Gather", ["ra", ints(inits, "one", 1)], ["g"], name="g", axis=1))
    nodes.append(helper.make_node("Relu", ["g"], ["y_gather"], name="y_gather"))
    nodes.append(helper.make_node("Relu", ["b"], ["rb"], name="rb"))
    last = slice_node(nodes, inits, "last", "rb", 0, 8, 2)
    nodes.append(helper.make_node("Relu", [last], ["y_last"], name="y_last"))
    raw = slice_node(nodes, inits, "raw", "b", 0, 2, 1)
    nodes.append(helper.make_node("Relu", [raw], ["y_raw"], name="y_raw"))
    nodes.append(helper.make_node("Relu", ["c"], ["rc"], name="rc"))
    odd = slice_node(nodes, inits, "odd", "rc", 1, 10, 1)
    nodes.append(helper.make_node("Relu", [odd], ["y_odd"], name="y_odd"))
    slice_node(nodes, inits, "y_out", "rb", 0, 2, 1)
    save(out, "copies", nodes, inits,
         [helper.make_tensor_value_info("a", F, [2, 3, 16]),
          helper.make_tensor_value_info("b", F, [1, 4, 16]),
          helper.make_tensor_value_info("c", F, [1, 10, 3])],
         [helper.make_tensor_value_info("y_gather", F, [2, 16]),
          helper.make_tensor_value_info("y_last", F, [1, 4, 8]),
          helper.make_tensor_value_info("y_raw", F, [1, 2, 16]),
          helper.make_tensor_value_info("y_odd", F, [1, 9, 3]),
          helper.make_tensor_value_info("y_out", F, [1, 2, 16])])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    attention_split(out)
    row_halves(out)
    copies(out)


if __name__ == "__main__":
    main()
