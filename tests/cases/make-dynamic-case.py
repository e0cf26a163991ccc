#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds tests/cases/dynamic-batch/: a model whose batch dimension is symbolic ("batch"), with two
data sets of different batch sizes, so that checking it specializes (and compiles) twice.

    make-dynamic-case.py OUTDIR

y = Relu(x @ W + b) and n = Range(0, batch, 1): the Range's length is only known once the batch
is. Expected outputs are computed here with numpy. Only development machines run this script.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261202)


def main():
    out = os.path.join(sys.argv[1], 'dynamic-batch')
    w = (rng.standard_normal([4, 3]) * 0.5).astype(np.float32)
    b = (rng.standard_normal([3]) * 0.5).astype(np.float32)
    n = helper.make_node
    nodes = [
        n('MatMul', ['x', 'W'], ['xw']),
        n('Add', ['xw', 'b'], ['xwb']),
        n('Relu', ['xwb'], ['y']),
        n('Shape', ['x'], ['shape']),
        n('Gather', ['shape', 'zero'], ['batch'], axis=0),
        n('Range', ['zero', 'batch', 'one'], ['n']),
    ]
    inits = [numpy_helper.from_array(w, 'W'), numpy_helper.from_array(b, 'b'),
             numpy_helper.from_array(np.array(0, np.int64), 'zero'),
             numpy_helper.from_array(np.array(1, np.int64), 'one')]
    graph = helper.make_graph(
        nodes, 'dynamic-batch', [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['batch', 4])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['batch', 3]),
         helper.make_tensor_value_info('n', TensorProto.INT64, ['batch'])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_operatorsetid('', 13)],
                              producer_name='fusebench-tests')
    model.ir_version = 7
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'model.onnx'), 'wb') as f:
        f.write(model.SerializeToString())
    for k, batch in enumerate((2, 5)):
        data = os.path.join(out, 'test_data_set_%d' % k)
        os.makedirs(data, exist_ok=True)
        x = rng.standard_normal([batch, 4]).astype(np.float32)
        y = np.maximum(x @ w + b, 0).astype(np.float32)
        for name, array in (('input_0', numpy_helper.from_array(x, 'x')),
                            ('output_0', numpy_helper.from_array(y, 'y')),
                            ('output_1', numpy_helper.from_array(np.arange(batch, dtype=np.int64),
                                                                 'n'))):
            with open(os.path.join(data, name + '.pb'), 'wb') as f:
                f.write(array.SerializeToString())


if __name__ == '__main__':
    main()
