#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes a small model with the structure classes of Silero VAD v5, for tests/cases/silero-vad/.

    make-silero-case.py MODEL.onnx

Silero VAD v5 (opset 16) branches at the top on the sample rate with an If whose output is a
sequence, and its branches build and read sequences around a convolution front end and an LSTM.
This model keeps those classes and stays small:

  inputs  input f32[1x512] (audio), state f32[2x1x32] (LSTM h and c), sr i64 scalar
  If (sr == 16000) -> seq(f32): [probability f32[1x1], new state f32[2x1x32]]
    16 kHz branch: Conv (stride 8) -> Relu; a Loop of 2 iterations that appends to a sequence
                   started by SequenceConstruct (SequenceAt(seq, -1) * 0.5 -> SequenceInsert);
                   ConcatFromSequence along the channels; LSTM; Sigmoid(Gemm);
                   SequenceConstruct of the results
    8 kHz branch:  SplitToSequence of the audio into halves, ConcatFromSequence back (scaled),
                   a Loop that fills a SequenceEmpty with SequenceInsert at the front
                   (position 0), the same kind of head, and SequenceEmpty + SequenceInsert for
                   the results
  outputs output = SequenceAt(If, 0), stateN = SequenceAt(If, -1)

The test case's expected outputs come from ONNX Runtime (ort-case), one data set per sample rate.
"""
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper

rng = np.random.default_rng(20260516)
H = 32          # LSTM hidden size
C = 8           # conv channels
SEQ = TensorProto.FLOAT


def w(name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def const(name, value, dtype=np.int64):
    return helper.make_node('Constant', [], [name],
                            value=numpy_helper.from_array(np.array(value, dtype=dtype), name + '_v'))


def seq_info(name):
    return helper.make_tensor_sequence_value_info(name, SEQ, None)


def append_loop(p, seq_in, trips, front):
    """A Loop of `trips` iterations carrying a sequence: each takes the last (or first) element,
    halves it through a Relu and inserts the result at the back (or the front)."""
    body_nodes = [
        helper.make_node('Identity', [p + 'cond_in'], [p + 'cond_out']),
        const(p + 'pick', 0 if front else -1),
        helper.make_node('SequenceAt', [p + 'carried', p + 'pick'], [p + 'last']),
        const(p + 'half', 0.5, np.float32),
        helper.make_node('Mul', [p + 'last', p + 'half'], [p + 'halved']),
        helper.make_node('Relu', [p + 'halved'], [p + 'next']),
    ]
    if front:
        body_nodes += [const(p + 'front', 0),
                       helper.make_node('SequenceInsert', [p + 'carried', p + 'next', p + 'front'],
                                        [p + 'carried_out'])]
    else:
        body_nodes += [helper.make_node('SequenceInsert', [p + 'carried', p + 'next'],
                                        [p + 'carried_out'])]
    body = helper.make_graph(
        body_nodes, p + 'body',
        [helper.make_tensor_value_info(p + 'iter', TensorProto.INT64, []),
         helper.make_tensor_value_info(p + 'cond_in', TensorProto.BOOL, []),
         seq_info(p + 'carried')],
        [helper.make_tensor_value_info(p + 'cond_out', TensorProto.BOOL, []),
         seq_info(p + 'carried_out')])
    return [const(p + 'trips', trips), const(p + 'go', True, np.bool_),
            helper.make_node('Loop', [p + 'trips', p + 'go', seq_in], [p + 'grown'], body=body)]


def head(p, features, inits):
    """ConcatFromSequence of the features (channels), the LSTM over time and the probability;
    returns the nodes and the names of (probability, new state)."""
    steps = 3 * C
    inits += [w(p + 'W', [1, 4 * H, steps]), w(p + 'R', [1, 4 * H, H]),
              w(p + 'B', [1, 8 * H], 0.1), w(p + 'dense', [H, 1]), w(p + 'dense_b', [1], 0.1)]
    nodes = [
        helper.make_node('ConcatFromSequence', [features], [p + 'stacked'], axis=1),
        helper.make_node('Transpose', [p + 'stacked'], [p + 'tbc'], perm=[2, 0, 1]),
        const(p + 'i0', 0), const(p + 'i1', 1),
        helper.make_node('Gather', ['state', p + 'i0'], [p + 'h0_2d'], axis=0),
        helper.make_node('Gather', ['state', p + 'i1'], [p + 'c0_2d'], axis=0),
        const(p + 'ax0', [0]),
        helper.make_node('Unsqueeze', [p + 'h0_2d', p + 'ax0'], [p + 'h0']),
        helper.make_node('Unsqueeze', [p + 'c0_2d', p + 'ax0'], [p + 'c0']),
        helper.make_node('LSTM', [p + 'tbc', p + 'W', p + 'R', p + 'B', '', p + 'h0', p + 'c0'],
                         [p + 'Y', p + 'Yh', p + 'Yc'], hidden_size=H),
        helper.make_node('Squeeze', [p + 'Yh', p + 'ax0'], [p + 'h_last']),
        helper.make_node('Gemm', [p + 'h_last', p + 'dense', p + 'dense_b'], [p + 'logit']),
        helper.make_node('Sigmoid', [p + 'logit'], [p + 'prob']),
        helper.make_node('Concat', [p + 'Yh', p + 'Yc'], [p + 'new_state'], axis=0),
    ]
    return nodes, p + 'prob', p + 'new_state'


def front_end(p, audio, stride, inits):
    """Reshape to [1, 1, N], Conv (C channels, kernel 16) and Relu."""
    inits.append(w(p + 'conv_w', [C, 1, 16]))
    inits.append(w(p + 'conv_b', [C], 0.1))
    return [const(p + 'shape3', [1, 1, -1]),
            helper.make_node('Reshape', [audio, p + 'shape3'], [p + 'x3']),
            helper.make_node('Conv', [p + 'x3', p + 'conv_w', p + 'conv_b'], [p + 'conv'],
                             strides=[stride]),
            helper.make_node('Relu', [p + 'conv'], [p + 'feat'])]


def branch_16k():
    p, inits = 'k16_', []
    nodes = front_end(p, 'input', 8, inits)
    nodes.append(helper.make_node('SequenceConstruct', [p + 'feat'], [p + 'seq0']))
    nodes += append_loop(p + 'loop_', p + 'seq0', 2, front=False)
    more, prob, state = head(p, p + 'loop_grown', inits)
    nodes += more
    nodes.append(helper.make_node('SequenceConstruct', [prob, state], ['k16_out']))
    return helper.make_graph(nodes, 'then_16k', [], [seq_info('k16_out')], inits)


def branch_8k():
    p, inits = 'k8_', []
    nodes = [const(p + 'half_len', 256),
             helper.make_node('SplitToSequence', ['input', p + 'half_len'], [p + 'halves'], axis=1),
             helper.make_node('ConcatFromSequence', [p + 'halves'], [p + 'joined'], axis=1),
             const(p + 'gain', 2.0, np.float32),
             helper.make_node('Mul', [p + 'joined', p + 'gain'], [p + 'audio'])]
    nodes += front_end(p, p + 'audio', 8, inits)
    nodes += [helper.make_node('SequenceEmpty', [], [p + 'empty'], dtype=TensorProto.FLOAT),
              helper.make_node('SequenceInsert', [p + 'empty', p + 'feat'], [p + 'seq0'])]
    nodes += append_loop(p + 'loop_', p + 'seq0', 2, front=True)
    more, prob, state = head(p, p + 'loop_grown', inits)
    nodes += more
    nodes += [helper.make_node('SequenceEmpty', [], [p + 'res0'], dtype=TensorProto.FLOAT),
              helper.make_node('SequenceInsert', [p + 'res0', prob], [p + 'res1']),
              helper.make_node('SequenceInsert', [p + 'res1', state], ['k8_out'])]
    return helper.make_graph(nodes, 'else_8k', [], [seq_info('k8_out')], inits)


def main():
    nodes = [
        const('rate16k', 16000),
        helper.make_node('Equal', ['sr', 'rate16k'], ['is16k']),
        helper.make_node('If', ['is16k'], ['branch_out'], name='If_0',
                         then_branch=branch_16k(), else_branch=branch_8k()),
        const('first', 0), const('last', -1),
        helper.make_node('SequenceAt', ['branch_out', 'first'], ['output']),
        helper.make_node('SequenceAt', ['branch_out', 'last'], ['stateN']),
    ]
    graph = helper.make_graph(
        nodes, 'silero-vad-style',
        [helper.make_tensor_value_info('input', TensorProto.FLOAT, [1, 512]),
         helper.make_tensor_value_info('state', TensorProto.FLOAT, [2, 1, H]),
         helper.make_tensor_value_info('sr', TensorProto.INT64, [])],
        [helper.make_tensor_value_info('output', TensorProto.FLOAT, [1, 1]),
         helper.make_tensor_value_info('stateN', TensorProto.FLOAT, [2, 1, H])])
    model = helper.make_model(graph, opset_imports=[helper.make_operatorsetid('', 16)],
                              producer_name='fusebench-tests')
    model.ir_version = 8
    checker.check_model(model)
    with open(sys.argv[1], 'wb') as f:
        f.write(model.SerializeToString())


if __name__ == '__main__':
    main()
