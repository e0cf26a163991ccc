# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared builder of the benchmark model generators in this folder.

The models are laid out the way PyTorch's exporter writes them (opset 17, IR version 8,
hierarchical node names, BatchNormalization after a bias-free Conv) so that the pass
pipeline sees what it sees on real exports: the folds and fusions have to do their work.
Weights are He-normal and BatchNormalization statistics trained-looking, all from one seed,
so every run writes the same file. Each model is written with one seeded normal(0, 1) input
in test_data_set_0/input_0.pb beside it (the ONNX backend-test layout bench/cpu-vs-ort reads);
the expected outputs come from ONNX Runtime when the benchmark runs, never from here.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8


class Builder:
    """Collects nodes and initializers with exporter-style names."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self.count = {}

    def scope(self, base):
        """A unique node scope: exporters number repeated module names."""
        n = self.count.get(base, 0)
        self.count[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def weight(self, name, array, dtype=np.float32):
        self.initializers.append(numpy_helper.from_array(np.asarray(array).astype(dtype), name))
        return name

    def node(self, op, scope, inputs, **attrs):
        name = f"{self.scope(scope)}/{op}"
        out = f"{name}_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def conv(self, scope, x, c_in, c_out, k, stride=1, pad=None, group=1, bias=False,
             kw=None, pad_hw=None, dilation=1):
        kh, kw = k, (k if kw is None else kw)
        if pad_hw is None:
            p = (kh // 2) * dilation if pad is None else pad
            q = (kw // 2) * dilation if pad is None else pad
        else:
            p, q = pad_hw
        fan_in = (c_in // group) * kh * kw
        w = self.weight(f"{scope}.weight",
                        self.rng.normal(0.0, np.sqrt(2.0 / fan_in), size=(c_out, c_in // group, kh, kw)))
        inputs = [x, w]
        if bias:
            inputs.append(self.weight(f"{scope}.bias", self.rng.normal(0.0, 0.05, size=c_out)))
        return self.node("Conv", scope, inputs, dilations=[dilation, dilation], group=group,
                         kernel_shape=[kh, kw], pads=[p, q, p, q], strides=[stride, stride])

    def conv_transpose(self, scope, x, c_in, c_out, k, stride, bias=True):
        fan_in = c_in * k * k // (stride * stride)
        w = self.weight(f"{scope}.weight",
                        self.rng.normal(0.0, np.sqrt(2.0 / fan_in), size=(c_in, c_out, k, k)))
        inputs = [x, w]
        if bias:
            inputs.append(self.weight(f"{scope}.bias", self.rng.normal(0.0, 0.05, size=c_out)))
        return self.node("ConvTranspose", scope, inputs, dilations=[1, 1], group=1,
                         kernel_shape=[k, k], pads=[0, 0, 0, 0], strides=[stride, stride])

    def batch_norm(self, scope, x, c, gamma=1.0):
        scale = self.weight(f"{scope}.weight", self.rng.normal(gamma, 0.15 * gamma, size=c))
        shift = self.weight(f"{scope}.bias", self.rng.normal(0.0, 0.1, size=c))
        mean = self.weight(f"{scope}.running_mean", self.rng.normal(0.0, 0.3, size=c))
        var = self.weight(f"{scope}.running_var", self.rng.uniform(0.4, 2.0, size=c))
        # torch exports its momentum m as 1 - m.
        return self.node("BatchNormalization", scope, [x, scale, shift, mean, var],
                         epsilon=1e-5, momentum=0.9)

    def conv_bn_relu(self, scope, x, c_in, c_out, k, stride=1, relu=True, gamma=1.0, **kw):
        y = self.conv(f"{scope}.conv", x, c_in, c_out, k, stride=stride, **kw)
        y = self.batch_norm(f"{scope}.bn", y, c_out, gamma)
        return self.node("Relu", f"{scope}.relu", [y]) if relu else y

    def linear(self, scope, x, c_in, c_out, bias=True, gain=1.0):
        """A Linear as torch exports it: MatMul by the transposed weights, then Add of the bias.
        gain scales the variance-keeping weights (below 1 for a residual branch's last one)."""
        w = self.weight(f"{scope}.weight_t",
                        self.rng.normal(0.0, gain * np.sqrt(1.0 / c_in), size=(c_in, c_out)))
        y = self.node("MatMul", scope, [x, w])
        if bias:
            b = self.weight(f"{scope}.bias", self.rng.normal(0.0, 0.02, size=c_out))
            y = self.node("Add", f"{scope}.bias_add", [y, b])
        return y

    def layer_norm(self, scope, x, c, epsilon=1e-5):
        """LayerNormalization over the last axis."""
        g = self.weight(f"{scope}.weight", self.rng.normal(1.0, 0.1, size=c))
        s = self.weight(f"{scope}.bias", self.rng.normal(0.0, 0.05, size=c))
        return self.node("LayerNormalization", scope, [x, g, s], axis=-1, epsilon=epsilon)

    def gelu(self, scope, x):
        """The exact GELU as torch exports it: x * (erf (x / sqrt 2) + 1) * 0.5."""
        root2 = self.weight(f"{scope}.sqrt2", np.float32(np.sqrt(2.0)))
        e = self.node("Erf", f"{scope}.erf", [self.node("Div", f"{scope}.div", [x, root2])])
        one = self.node("Add", f"{scope}.add", [e, self.weight(f"{scope}.one", np.float32(1.0))])
        y = self.node("Mul", f"{scope}.mul", [x, one])
        return self.node("Mul", f"{scope}.half", [y, self.weight(f"{scope}.h", np.float32(0.5))])

    def max_pool(self, scope, x, k, stride, pad=0, ceil=0):
        return self.node("MaxPool", scope, [x], ceil_mode=ceil, dilations=[1, 1], kernel_shape=[k, k],
                         pads=[pad] * 4, strides=[stride, stride])

    def avg_pool(self, scope, x, k, stride, pad=0):
        return self.node("AveragePool", scope, [x], ceil_mode=0, count_include_pad=0,
                         kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride])

    def concat(self, scope, xs):
        return self.node("Concat", scope, xs, axis=1)

    def resize(self, scope, x, scale):
        """Nearest upsampling by an integer scale, as torch's F.interpolate exports it."""
        scales = self.weight(f"{scope}.scales", [1.0, 1.0, float(scale), float(scale)])
        return self.node("Resize", scope, [x, "", scales], coordinate_transformation_mode="asymmetric",
                         mode="nearest", nearest_mode="floor")

    def classifier(self, x, c, classes=1000):
        x = self.node("GlobalAveragePool", "/avgpool", [x])
        x = self.node("Flatten", "/flatten", [x], axis=1)
        return self.fc(x, c, classes)

    def fc(self, x, c, classes=1000, scope="fc", name="/fc/Gemm"):
        """The classifier's Gemm (weights transposed, a bias), writing the output "logits"."""
        w = self.weight(f"{scope}.weight", self.rng.normal(0.0, np.sqrt(1.0 / c), size=(classes, c)))
        b = self.weight(f"{scope}.bias", self.rng.normal(0.0, 0.05, size=classes))
        self.nodes.append(helper.make_node("Gemm", [x, w, b], ["logits"], name=name,
                                           alpha=1.0, beta=1.0, transB=1))
        return "logits"

    def bottleneck(self, scope, x, c_in, width, c_out, stride, groups=1):
        """torchvision's Bottleneck (v1.5: the stride on the 3x3, which takes the groups)."""
        y = self.conv_bn_relu(f"{scope}.1", x, c_in, width, 1)
        y = self.conv_bn_relu(f"{scope}.2", y, width, width, 3, stride=stride, group=groups)
        # Trained residual branches end in a small BatchNormalization scale (torchvision can
        # even start them at zero); with 1.0 the activations of 16 random blocks grow into the
        # thousands and no two float summation orders agree on the logits.
        y = self.conv_bn_relu(f"{scope}.3", y, width, c_out, 1, relu=False, gamma=0.2)
        return self.residual_relu(scope, y, x, c_in, c_out, stride)

    def residual_relu(self, scope, y, x, c_in, c_out, stride, shortcut="downsample", relu="relu"):
        """A residual block's end: Relu (y + x), x through a 1x1 (strided) conv + BN shortcut
        (scope.shortcut) where the block changes its shape; the Relu named scope.relu."""
        if stride != 1 or c_in != c_out:
            x = self.conv_bn_relu(f"{scope}.{shortcut}", x, c_in, c_out, 1, stride=stride, relu=False)
        y = self.node("Add", scope, [y, x])
        return self.node("Relu", f"{scope}.{relu}", [y])

    def resnet50_body(self, groups=1, width_per_plane=1):
        """ResNet-50's stem, four layers of 3, 4, 6, 3 bottlenecks (widths planes x
        width_per_plane, outputs 4 x planes, for planes 64 .. 512) and classifier."""
        x = self.conv_bn_relu("conv1", "input", 3, 64, 7, stride=2, pad=3)
        x = self.max_pool("/maxpool", x, 3, 2, pad=1)
        c = 64
        for layer, (blocks, planes, stride) in enumerate([(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)], 1):
            for i in range(blocks):
                x = self.bottleneck(f"layer{layer}.{i}", x, c, planes * width_per_plane, planes * 4,
                                    stride if i == 0 else 1, groups)
                c = planes * 4
        return self.classifier(x, c)

    def model(self, name, input_name, input_shape, output, output_shape, doc,
              input_type=TensorProto.FLOAT, more_inputs=()):
        """The model of the nodes so far: its input input_name of input_shape (float unless
        input_type says otherwise), then more_inputs as (name, TensorProto type, shape), and
        one float output."""
        inputs = [(input_name, input_type, input_shape)] + list(more_inputs)
        graph = helper.make_graph(
            self.nodes, name,
            inputs=[helper.make_tensor_value_info(*i) for i in inputs],
            outputs=[helper.make_tensor_value_info(output, TensorProto.FLOAT, output_shape)],
            initializer=self.initializers, doc_string=doc)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="fusebench-bench", producer_version="0.1.0",
                                  doc_string=doc)
        model.ir_version = IR_VERSION
        onnx.checker.check_model(model)
        return model


def silu(b, scope, x):
    """SiLU as PyTorch exports it at opset 17: Sigmoid, then Mul."""
    gate = b.node("Sigmoid", f"{scope}.act", [x])
    return b.node("Mul", f"{scope}.act", [x, gate])


def conv_bn_silu(b, scope, x, c_in, c_out, k, stride=1, group=1, act=True, gamma=1.0):
    """torchvision's Conv2dNormActivation with SiLU (EfficientNets): a bias-free conv, BN of
    scale around gamma, SiLU unless act is False."""
    y = b.conv(f"{scope}.0", x, c_in, c_out, k, stride=stride, group=group)
    y = b.batch_norm(f"{scope}.1", y, c_out, gamma)
    return silu(b, scope, y) if act else y


def squeeze_excitation(b, scope, x, c, squeeze, relu=False):
    """EfficientNet's squeeze-excitation: GlobalAveragePool, 1x1 conv to squeeze channels +
    bias, SiLU (Relu with relu, as RegNetY has it), 1x1 conv back + bias, Sigmoid, Mul."""
    s = b.node("GlobalAveragePool", f"{scope}.avgpool", [x])
    s = b.conv(f"{scope}.fc1", s, c, squeeze, 1, bias=True)
    s = b.node("Relu", f"{scope}.fc1.relu", [s]) if relu else silu(b, f"{scope}.fc1", s)
    s = b.conv(f"{scope}.fc2", s, squeeze, c, 1, bias=True)
    s = b.node("Sigmoid", f"{scope}.scale_activation", [s])
    return b.node("Mul", scope, [x, s])


def write(model, default_name, seed, inputs=None):
    """Writes OUT/model.onnx and OUT/test_data_set_0/input_K.pb; OUT is argv[1] or
    build/bench/DEFAULT_NAME under the repository. The inputs are the arrays given, one per
    graph input, else one seeded normal(0, 1) array for the only input."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "build", "bench", default_name)
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    if inputs is None:
        shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        inputs = [np.random.default_rng(seed).standard_normal(shape).astype(np.float32)]
    files = {os.path.join(out, "model.onnx"): model.SerializeToString()}
    for k, (inp, x) in enumerate(zip(model.graph.input, inputs)):
        files[os.path.join(data, f"input_{k}.pb")] = numpy_helper.from_array(x, inp.name).SerializeToString()
    for path, body in files.items():
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(body)
        os.replace(tmp, path)
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
    print(f"{os.path.normpath(out)}: {len(model.graph.node)} nodes, {params} parameters")
