# SPDX-License-Identifier: GPL-3.0-or-later
"""What the test-model generators under tests/ (concat, slice, strides, movement, patchify)
share: an int64 constant, a seeded float weight and saving a checked opset-13 model. Each
generator puts tests/ on its path."""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper


def weight(rng, inits, name, shape, scale):
    """A float32 weight of shape drawn from rng (standard normal times scale), added to inits."""
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
    return name


def ints(inits, name, values):
    inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
    return name


def save(out, name, nodes, inits, inputs, outputs):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
