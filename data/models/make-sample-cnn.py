#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write the bundled sample model, sample-cnn/model.onnx.

A small image classifier laid out the way a PyTorch exporter writes one (opset 17,
IR version 8): hierarchical node names such as /features/0/conv/Conv, weights named
after the module parameters (features.0.conv.weight), Constant nodes feeding Clip's
min and max, an Identity on the residual shortcut and one where eval-mode Dropout
stood, and no Conv bias in front of a BatchNormalization.

    image [1,3,32,32]
      features.0  Conv 3->16 3x3 pad 1, BatchNormalization, Relu
      features.1  residual block: depthwise Conv 3x3 (group 16), BatchNormalization,
                  Clip(0, 6), pointwise Conv 16->16, BatchNormalization, Add shortcut
      features.2  Conv 16->32 1x1, BatchNormalization, Relu
      features.3  MaxPool 2x2
      features.4  Conv 32->32 3x3 pad 1 (with bias), Relu
      pool        GlobalAveragePool, Flatten
      classifier  Identity (eval-mode Dropout), Gemm 32->10
    outputs: logits [1,10] (the Gemm), probabilities [1,10] (Softmax of the logits)

The weights are seeded, so the file is the same on every run: He-normal Conv and
Gemm weights, BatchNormalization with non-trivial scale, shift and running
statistics, as a trained network would have. The expected outputs beside the model
(sample-cnn/test_data_set_0/) were produced with ONNX Runtime 1.30 on the CPU from a
seeded normal(0, 1) input.

Usage: make-sample-cnn.py [OUTPUT]   (default: sample-cnn/model.onnx beside this script)
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20261129
OPSET = 17
IR_VERSION = 8


class Builder:
    """Collects nodes and initializers with exporter-style names."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []

    def weight(self, name, array):
        self.initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def node(self, op, scope, inputs, n_outputs=1, suffix="", **attrs):
        name = f"{scope}/{op}{suffix}"
        outputs = [f"{name}_output_{i}" for i in range(n_outputs)]
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, **attrs))
        return outputs[0] if n_outputs == 1 else outputs

    def he_normal(self, shape, fan_in):
        return self.rng.normal(0.0, np.sqrt(2.0 / fan_in), size=shape)

    def conv(self, scope, param, x, c_in, c_out, k, group=1, pad=0, bias=False):
        w = self.weight(f"{param}.weight",
                        self.he_normal((c_out, c_in // group, k, k), (c_in // group) * k * k))
        inputs = [x, w]
        if bias:
            inputs.append(self.weight(f"{param}.bias", self.rng.normal(0.0, 0.05, size=c_out)))
        return self.node("Conv", scope, inputs,
                         dilations=[1, 1], group=group, kernel_shape=[k, k],
                         pads=[pad] * 4, strides=[1, 1])

    def batch_norm(self, scope, param, x, c):
        scale = self.weight(f"{param}.weight", self.rng.normal(1.0, 0.15, size=c))
        shift = self.weight(f"{param}.bias", self.rng.normal(0.0, 0.1, size=c))
        mean = self.weight(f"{param}.running_mean", self.rng.normal(0.0, 0.3, size=c))
        var = self.weight(f"{param}.running_var", self.rng.uniform(0.4, 2.0, size=c))
        # torch exports its momentum m as 1 - m.
        return self.node("BatchNormalization", scope, [x, scale, shift, mean, var],
                         epsilon=1e-5, momentum=0.9)

    def constant(self, scope, value, suffix=""):
        tensor = numpy_helper.from_array(np.array(value, dtype=np.float32), "")
        return self.node("Constant", scope, [], suffix=suffix, value=tensor)


def build():
    b = Builder(SEED)

    x = b.conv("/features/0/conv", "features.0.conv", "image", 3, 16, 3, pad=1)
    x = b.batch_norm("/features/0/bn", "features.0.bn", x, 16)
    x = b.node("Relu", "/features/0/act", [x])

    shortcut = b.node("Identity", "/features/1/shortcut", [x])
    y = b.conv("/features/1/dw/conv", "features.1.dw.conv", x, 16, 16, 3, group=16, pad=1)
    y = b.batch_norm("/features/1/dw/bn", "features.1.dw.bn", y, 16)
    lo = b.constant("/features/1/dw/act", 0.0)
    hi = b.constant("/features/1/dw/act", 6.0, suffix="_1")
    y = b.node("Clip", "/features/1/dw/act", [y, lo, hi])
    y = b.conv("/features/1/pw/conv", "features.1.pw.conv", y, 16, 16, 1)
    y = b.batch_norm("/features/1/pw/bn", "features.1.pw.bn", y, 16)
    x = b.node("Add", "/features/1", [y, shortcut])

    x = b.conv("/features/2/conv", "features.2.conv", x, 16, 32, 1)
    x = b.batch_norm("/features/2/bn", "features.2.bn", x, 32)
    x = b.node("Relu", "/features/2/act", [x])

    x = b.node("MaxPool", "/features/3", [x],
               ceil_mode=0, dilations=[1, 1], kernel_shape=[2, 2], pads=[0, 0, 0, 0],
               strides=[2, 2])

    x = b.conv("/features/4/conv", "features.4.conv", x, 32, 32, 3, pad=1, bias=True)
    x = b.node("Relu", "/features/4/act", [x])

    x = b.node("GlobalAveragePool", "/pool", [x])
    x = b.node("Flatten", "/pool", [x], axis=1)

    x = b.node("Identity", "/classifier/dropout", [x])
    w = b.weight("classifier.fc.weight", b.he_normal((10, 32), 32))
    bias = b.weight("classifier.fc.bias", b.rng.normal(0.0, 0.05, size=10))
    b.nodes.append(helper.make_node("Gemm", [x, w, bias], ["logits"],
                                    name="/classifier/fc/Gemm",
                                    alpha=1.0, beta=1.0, transB=1))
    b.nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"],
                                    name="/Softmax", axis=1))

    graph = helper.make_graph(
        b.nodes, "sample_cnn",
        inputs=[helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        outputs=[helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10]),
                 helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])],
        initializer=b.initializers,
        doc_string="32x32 RGB image classifier with one residual block, 10 classes.")

    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="fusebench-sample",
        producer_version="0.1.0",
        doc_string="Fusebench's bundled sample: a small convolutional image classifier "
                   "with seeded, trained-looking weights.")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "sample-cnn", "model.onnx")
    model = build()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "wb") as f:
        f.write(model.SerializeToString())
    print(f"{out}: {len(model.graph.node)} nodes, "
          f"{sum(int(np.prod(t.dims)) for t in model.graph.initializer)} parameters")


if __name__ == "__main__":
    main()
