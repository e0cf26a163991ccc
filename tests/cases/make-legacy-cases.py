#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the opset-1..6 models of the importer's upgrade cases (tests/cases/legacy-*/).

    make-legacy-cases.py OUTDIR

writes OUTDIR/NAME/model.onnx and OUTDIR/NAME/test_data_set_0/ (input_K.pb, output_K.pb). ONNX
Runtime does not run these operator versions (it refuses Sub-6, for one), so the expected
outputs are computed here with numpy, from the operators' definitions. Each model uses the operator versions that predate opset 7 or the attributes that
later became inputs: legacy broadcasting with axis, consumed_inputs, is_test, spatial, Reshape's
shape attribute, Concat without axis, Cast with a type name, Pad's paddings, Slice/Squeeze/
Unsqueeze/ReduceSum/Split/TopK attributes. Only development machines run this script; tests read the results.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261201)
F = TensorProto.FLOAT


def weight(name, shape, scale=0.5):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def model(name, opset, nodes, inputs, outputs, inits, ir_version=3):
    """inputs: (name, array); outputs: (name, array) computed with numpy."""
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(n, F, a.shape) for n, a in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n, _ in outputs], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_operatorsetid('', opset)],
                          producer_name='fusebench-tests')
    m.ir_version = ir_version
    return m, inputs, outputs


def arr(init):
    return numpy_helper.to_array(init)


def normal(shape):
    return rng.standard_normal(shape).astype(np.float32)


def conv2d_same3(x, w):
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd), np.float32)
    for i in range(h):
        for j in range(wd):
            patch = xp[:, :, i:i + 3, j:j + 3]
            out[:, :, i, j] = np.einsum('nchw,ochw->no', patch, w)
    return out


def cnn_opset1():
    n = helper.make_node
    nodes = [
        n('Conv', ['x', 'w'], ['c'], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        # Legacy broadcasting: the per-channel bias lines up with axis 1 of NCHW.
        n('Add', ['c', 'bias'], ['cb'], broadcast=1, axis=1, consumed_inputs=[0, 0]),
        n('BatchNormalization', ['cb', 'scale', 'b', 'mean', 'var'], ['bn'], is_test=1,
          spatial=1, epsilon=1e-5, consumed_inputs=[0, 0, 0, 1, 1]),
        n('Relu', ['bn'], ['r'], consumed_inputs=[0]),
        n('Dropout', ['r'], ['d'], is_test=1, ratio=0.3),
        n('Reshape', ['d'], ['flat'], shape=[1, 4 * 6 * 6], consumed_inputs=[0]),
        n('Gemm', ['flat', 'fc', 'fcb'], ['g'], broadcast=1, transB=1),
        n('Mul', ['g', 'gain'], ['y'], broadcast=1, axis=1),
    ]
    inits = [weight('w', [4, 3, 3, 3]), weight('bias', [4]), weight('scale', [4]), weight('b', [4]),
             weight('mean', [4]), numpy_helper.from_array(
                 (rng.random([4]) + 0.5).astype(np.float32), 'var'),
             weight('fc', [5, 144], 0.1), weight('fcb', [5]), weight('gain', [5])]
    x = normal([1, 3, 6, 6])
    p = {i.name: arr(i) for i in inits}
    c = conv2d_same3(x, p['w']) + p['bias'].reshape(1, 4, 1, 1)
    bn = (c - p['mean'].reshape(1, 4, 1, 1)) / np.sqrt(p['var'].reshape(1, 4, 1, 1) + 1e-5)
    bn = bn * p['scale'].reshape(1, 4, 1, 1) + p['b'].reshape(1, 4, 1, 1)
    g = np.maximum(bn, 0).reshape(1, 144) @ p['fc'].T + p['fcb']
    y = (g * p['gain']).astype(np.float32)
    return model('legacy-opset1-cnn', 1, nodes, [('x', x)], [('y', y)], inits)


def attrs_opset6():
    n = helper.make_node
    nodes = [
        n('Slice', ['x'], ['s'], starts=[0, 1], ends=[2, 5], axes=[0, 2]),
        n('Unsqueeze', ['s'], ['u'], axes=[0]),
        n('Squeeze', ['u'], ['q'], axes=[0]),
        n('ReduceSum', ['q'], ['rs'], axes=[2], keepdims=1),
        n('Split', ['q'], ['p0', 'p1'], axis=2, split=[1, 3]),
        n('Concat', ['p1', 'p0'], ['cat'], axis=2),
        n('TopK', ['cat'], ['tv', 'ti'], k=2, axis=-1),
        n('Pad', ['tv'], ['pd'], pads=[0, 0, 1, 0, 0, 1], mode='constant', value=0.5),
        n('Sub', ['pd', 'rs'], ['y']),
        n('Cast', ['ti'], ['tif'], to=TensorProto.FLOAT),
        n('Sum', ['tif', 'tif'], ['z']),
    ]
    x = normal([2, 3, 6])
    q = x[0:2, :, 1:5]
    rs = q.sum(axis=2, keepdims=True)
    cat = np.concatenate([q[:, :, 1:4], q[:, :, 0:1]], axis=2)
    ti = np.argsort(-cat, axis=-1, kind='stable')[:, :, :2]
    tv = np.take_along_axis(cat, ti, axis=-1)
    pd = np.pad(tv, ((0, 0), (0, 0), (1, 1)), constant_values=0.5)
    y = (pd - rs).astype(np.float32)
    z = (ti.astype(np.float32) * 2).astype(np.float32)
    return model('legacy-opset6-attrs', 6, nodes, [('x', x)], [('y', y), ('z', z)], [])


def opset1_forms():
    n = helper.make_node
    nodes = [
        # Concat-1: axis omitted means 1. Cast-1: the type by name.
        n('Concat', ['a', 'b'], ['c']),
        n('Pad', ['c'], ['p'], paddings=[0, 1, 0, 1], mode='constant', value=0.0),
        # Legacy broadcasting along axis 0: one value per row.
        n('Sub', ['p', 'row'], ['d'], broadcast=1, axis=0),
        n('Cast', ['d'], ['y'], to='FLOAT'),
    ]
    inits = [weight('row', [5])]
    a, b = normal([5, 2]), normal([5, 3])
    c = np.concatenate([a, b], axis=1)
    p = np.pad(c, ((0, 0), (1, 1)))
    y = (p - arr(inits[0]).reshape(5, 1)).astype(np.float32)
    return model('legacy-opset1-forms', 1, nodes, [('a', a), ('b', b)], [('y', y)], inits)


def write_tensor(path, name, array):
    with open(path, 'wb') as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def main():
    out = sys.argv[1]
    for make in (cnn_opset1, attrs_opset6, opset1_forms):
        m, inputs, outputs = make()
        case = os.path.join(out, m.graph.name)
        data = os.path.join(case, 'test_data_set_0')
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(case, 'model.onnx'), 'wb') as f:
            f.write(m.SerializeToString())
        for k, (name, array) in enumerate(inputs):
            write_tensor(os.path.join(data, 'input_%d.pb' % k), name, array)
        for k, (name, array) in enumerate(outputs):
            write_tensor(os.path.join(data, 'output_%d.pb' % k), name, array)


if __name__ == '__main__':
    main()
