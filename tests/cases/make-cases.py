#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the small models of the interpreter's conformance cases (tests/cases/NAME/).

    make-cases.py OUTDIR

writes OUTDIR/NAME.onnx for every case and OUTDIR/NAME.inputs, one line per model input in the
form NAME=D0xD1x...:f32 (normal(0,1) floats) or NAME=:i64=VALUE (an int64 scalar). The committed
case folders hold each model with one test_data_set_0 whose inputs are seeded normal floats and
whose outputs come from ONNX Runtime 1.30 (CPU). Inputs of other types are made inside the
models with Cast, so that every case feeds float32 or int64 only. Weights are seeded, small and
stored in the models. Only development machines run this script; tests read the results.
"""
import os
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Every case draws from a generator of its own, seeded by its name (main sets it), so that adding
# a weight to one case leaves every other case's model as committed.
rng = None
F = TensorProto.FLOAT


def weight(name, shape, scale=0.5):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


class Case:
    def __init__(self, name, opset):
        self.name, self.opset = name, opset
        self.nodes, self.inits, self.inputs, self.outputs, self.specs = [], [], [], [], []

    def input(self, name, shape):
        self.inputs.append(vi(name, F, shape))
        self.specs.append(f"{name}={'x'.join(map(str, shape))}:f32")
        return name

    def input_i64(self, name, value):
        self.inputs.append(vi(name, TensorProto.INT64, []))
        self.specs.append(f"{name}=:i64={value}")
        return name

    def node(self, op, inputs, outputs=None, **attrs):
        outputs = outputs or [f"{op.lower()}_{len(self.nodes)}"]
        self.nodes.append(helper.make_node(op, inputs, outputs, name=f"{op}_{len(self.nodes)}", **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def init(self, tensor):
        self.inits.append(tensor)
        return tensor.name

    def out(self, *names):
        # Untyped: ONNX Runtime and the importer infer every output's type and shape.
        for n in names:
            self.outputs.append(helper.make_empty_tensor_value_info(n))

    def save(self, outdir):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name="fusebench-tests")
        model.ir_version = 8
        onnx.save(model, os.path.join(outdir, self.name + ".onnx"))
        with open(os.path.join(outdir, self.name + ".inputs"), "w") as f:
            f.write("\n".join(self.specs) + "\n")


def unary():
    c = Case("unary", 20)
    x = c.input("x", [2, 3, 4])
    for op, attrs in [("Abs", {}), ("Neg", {}), ("Relu", {}), ("Sigmoid", {}), ("Tanh", {}),
                      ("Exp", {}), ("Erf", {}), ("Sin", {}), ("Cos", {}), ("Sign", {}),
                      ("Ceil", {}), ("Floor", {}), ("Round", {}), ("Softplus", {}),
                      ("Softsign", {}), ("HardSwish", {}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
                      ("Elu", {"alpha": 0.7}), ("Selu", {}), ("LeakyRelu", {"alpha": 0.2}),
                      ("Gelu", {}), ("Gelu", {"approximate": "tanh"}), ("Identity", {})]:
        c.out(c.node(op, [x], **attrs))
    a = c.node("Abs", [x])
    c.out(c.node("Sqrt", [a]), c.node("Log", [a]), c.node("Reciprocal", [a]))
    c.out(c.node("Clip", [x, c.init(const("lo", np.float32(-0.5))), c.init(const("hi", np.float32(0.7)))]))
    c.out(c.node("Clip", [x, "", c.init(const("hi2", np.float32(0.1)))]))
    return c


def binary():
    c = Case("binary", 17)
    x = c.input("x", [2, 3, 4])
    y = c.input("y", [3, 1])
    z = c.input("z", [4])
    for op in ["Add", "Sub", "Mul", "Div", "Max", "Min"]:
        c.out(c.node(op, [x, y]))
    c.out(c.node("Sum", [x, y, z]), c.node("Mean", [x, y, z]), c.node("Max", [x, y, z]))
    c.out(c.node("Pow", [c.node("Abs", [x]), z]))
    c.out(c.node("Mod", [x, c.init(const("m", np.float32(0.3)))], fmod=1))
    c.out(c.node("PRelu", [x, c.init(weight("slope", [3, 1]))]))
    gt = c.node("Greater", [x, y])
    c.out(c.node("Where", [gt, x, z]))
    for op in ["Less", "LessOrEqual", "GreaterOrEqual", "Equal"]:
        c.out(c.node(op, [c.node("Round", [x]), c.node("Round", [y])]))
    c.out(c.node("Xor", [gt, c.node("Less", [x, z])]))
    c.out(c.node("And", [gt, c.node("Not", [c.node("IsNaN", [x])])]))
    c.out(c.node("Or", [gt, c.node("Less", [x, z])]))
    return c


def integers():
    c = Case("integers", 17)
    x = c.input("x", [3, 4])
    scaled = c.node("Mul", [x, c.init(const("ten", np.float32(10)))])
    i32 = c.node("Cast", [scaled], to=TensorProto.INT32)
    j32 = c.node("Cast", [c.node("Add", [c.node("Abs", [scaled]), c.init(const("one", np.float32(1)))])],
                 to=TensorProto.INT32)
    for op, attrs in [("Div", {}), ("Mod", {}), ("Mod", {"fmod": 1}), ("Add", {}), ("Sub", {}),
                      ("Mul", {}), ("Max", {}), ("Min", {})]:
        c.out(c.node(op, [i32, j32], **attrs))
    i64 = c.node("Cast", [scaled], to=TensorProto.INT64)
    c.out(c.node("Abs", [i64]), c.node("Neg", [i64]), c.node("Sign", [i64]))
    c.out(c.node("ReduceSum", [i64, c.init(const("ax1", np.array([1], np.int64)))], keepdims=0))
    c.out(c.node("CumSum", [i32, c.init(const("cax", np.int64(1)))], reverse=1))
    i8 = c.node("Cast", [scaled], to=TensorProto.INT8)
    c.out(c.node("Cast", [c.node("Relu", [i8])], to=TensorProto.INT32))
    u8 = c.node("Cast", [c.node("Abs", [scaled])], to=TensorProto.UINT8)
    c.out(c.node("Cast", [c.node("Clip", [u8, c.init(const("u_lo", np.uint8(3))),
                                          c.init(const("u_hi", np.uint8(9)))])], to=TensorProto.INT32))
    c.out(c.node("MatMul", [i32, c.node("Transpose", [j32])]))
    f64 = c.node("Cast", [x], to=TensorProto.DOUBLE)
    c.out(c.node("Cast", [c.node("Exp", [f64])], to=TensorProto.FLOAT))
    f16 = c.node("Cast", [x], to=TensorProto.FLOAT16)
    c.out(c.node("Cast", [c.node("Sigmoid", [f16])], to=TensorProto.FLOAT))
    c.out(c.node("ArgMax", [i32], axis=1, select_last_index=1))
    return c


def reduce():
    c = Case("reduce", 18)
    x = c.input("x", [2, 3, 4])
    ax = c.init(const("axes", np.array([0, 2], np.int64)))
    for op in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"]:
        c.out(c.node(op, [x, ax]), c.node(op, [x, ax], keepdims=0))
    c.out(c.node("ReduceMean", [x]))
    c.out(c.node("ArgMax", [x], axis=-1), c.node("ArgMax", [x], axis=1, keepdims=0))
    for axis in [0, 1, -1]:
        c.out(c.node("Softmax", [x], axis=axis), c.node("LogSoftmax", [x], axis=axis))
    v, i = c.node("TopK", [x, c.init(const("k", np.array([2], np.int64)))], ["tv", "ti"], axis=1)
    c.out(v, i)
    v, i = c.node("TopK", [x, c.init(const("k3", np.array([3], np.int64)))], ["tv2", "ti2"], largest=0)
    c.out(v, i)
    c.out(c.node("CumSum", [x, c.init(const("axis", np.int64(2)))], exclusive=1))
    return c


def conv():
    c = Case("conv", 17)
    x = c.input("x", [1, 4, 9, 8])
    c.out(c.node("Conv", [x, c.init(weight("w0", [6, 4, 3, 3])), c.init(weight("b0", [6]))], pads=[1, 1, 1, 1]))
    c.out(c.node("Conv", [x, c.init(weight("w1", [4, 1, 3, 3]))], group=4, strides=[2, 2], pads=[1, 0, 1, 2]))
    c.out(c.node("Conv", [x, c.init(weight("w2", [4, 2, 3, 2]))], group=2, dilations=[2, 3]))
    c.out(c.node("Conv", [x, c.init(weight("w3", [3, 4, 2, 3]))], auto_pad="SAME_UPPER", strides=[2, 2]))
    c.out(c.node("Conv", [x, c.init(weight("w4", [3, 4, 3, 2]))], auto_pad="SAME_LOWER"))
    c.out(c.node("Conv", [x, c.init(weight("w5", [5, 4, 1, 1]))]))
    c.out(c.node("ConvTranspose", [x, c.init(weight("t0", [4, 2, 3, 3])), c.init(weight("tb", [2]))],
                 strides=[2, 2], pads=[1, 0, 1, 1], output_padding=[1, 0]))
    c.out(c.node("ConvTranspose", [x, c.init(weight("t1", [4, 1, 2, 3]))], group=2, dilations=[2, 1]))
    c.out(c.node("ConvTranspose", [x, c.init(weight("t2", [4, 3, 3, 3]))], strides=[2, 2],
                 output_shape=[19, 16]))
    c.out(c.node("ConvTranspose", [x, c.init(weight("t3", [4, 3, 3, 3]))], strides=[2, 2],
                 auto_pad="SAME_UPPER"))
    x1 = c.input("x1", [2, 3, 10])
    c.out(c.node("Conv", [x1, c.init(weight("w6", [2, 3, 3]))], strides=[2], pads=[2, 1]))
    x3 = c.input("x3", [1, 2, 4, 5, 3])
    c.out(c.node("Conv", [x3, c.init(weight("w7", [2, 2, 2, 3, 2]))], pads=[0, 1, 0, 1, 1, 1]))
    return c


def conv1d():
    """One-dimensional convolutions channels-first, as a speech model's feature encoder has them
    (wav2vec 2.0: stride 2, erf GELU after): big enough that the cpu target tiles each by output
    channels over one im2col of the whole input, which its threads gather by input channels."""
    c = Case("conv1d", 17)
    x = c.input("x", [1, 32, 401])
    y = c.node("Conv", [x, c.init(weight("w0", [32, 32, 3], 0.2)), c.init(weight("b0", [32]))],
               strides=[2])
    erf = c.node("Erf", [c.node("Div", [y, c.init(const("sqrt2", np.float32(1.4142135)))])])
    half = c.node("Mul", [y, c.init(const("half", np.float32(0.5)))])
    c.out(c.node("Mul", [half, c.node("Add", [erf, c.init(const("one", np.float32(1.0)))])]))
    c.out(c.node("Conv", [x, c.init(weight("w1", [48, 32, 2], 0.2))], strides=[2], pads=[1, 1]))
    c.out(c.node("Conv", [x, c.init(weight("w2", [32, 32, 5], 0.2))], dilations=[2], pads=[4, 4]))
    return c


def conv_epilogues():
    """Convolutions followed by what the CPU target fuses into oneDNN's primitive (Relu,
    LeakyRelu, Clip in both opset forms, Sigmoid, Tanh, HardSwish, SiLU as x * Sigmoid(x), a
    residual Add) and what it must leave to a generated epilogue (a per-channel Mul, an Add of
    a broadcast tensor)."""
    c = Case("conv-epilogues", 14)
    x = c.input("x", [1, 8, 10, 9])
    r = c.input("r", [1, 8, 10, 9])
    lo, hi = c.init(const("lo", np.float32(0))), c.init(const("hi", np.float32(6)))
    pw = c.node("Conv", [x, c.init(weight("p0", [8, 8, 1, 1])), c.init(weight("pb0", [8]))])
    c.out(c.node("Clip", [pw, lo, hi]))
    c.out(c.node("Relu", [c.node("Conv", [x, c.init(weight("p1", [6, 8, 3, 3]))], strides=[2, 2], pads=[1, 1, 1, 1])]))
    dw = c.node("Conv", [x, c.init(weight("d0", [8, 1, 3, 3])), c.init(weight("db0", [8]))], group=8, pads=[1, 1, 1, 1])
    c.out(c.node("Add", [c.node("Clip", [dw, lo, hi]), r]))
    c.out(c.node("LeakyRelu", [c.node("Conv", [x, c.init(weight("p2", [4, 8, 2, 3]))], dilations=[2, 1])], alpha=0.2))
    c.out(c.node("Sigmoid", [c.node("Conv", [x, c.init(weight("g0", [6, 4, 3, 3]))], group=2, pads=[0, 1, 2, 1])]))
    c.out(c.node("Tanh", [c.node("Conv", [x, c.init(weight("d1", [8, 1, 3, 3]))], group=8, strides=[2, 2], pads=[1, 1, 1, 1])]))
    c.out(c.node("HardSwish", [c.node("Conv", [x, c.init(weight("p3", [5, 8, 1, 1]))])]))
    scale = c.init(numpy_helper.from_array((rng.standard_normal([1, 8, 1, 1])).astype(np.float32), "scale"))
    c.out(c.node("Mul", [c.node("Conv", [x, c.init(weight("p4", [8, 8, 3, 3]))], pads=[1, 1, 1, 1]), scale]))
    row = c.input("row", [1, 1, 1, 9])
    c.out(c.node("Add", [c.node("Conv", [x, c.init(weight("p5", [8, 8, 1, 1]))]), row]))
    silu = c.node("Conv", [x, c.init(weight("p6", [8, 8, 3, 3])), c.init(weight("pb6", [8]))], pads=[1, 1, 1, 1])
    c.out(c.node("Mul", [silu, c.node("Sigmoid", [silu])]))
    return c


def deconv_epilogues():
    """ConvTranspose followed by what the CPU target fuses into oneDNN's deconvolution (a
    folded BatchNormalization and Relu, Sigmoid, Clip, LeakyRelu, Tanh, HardSwish, a residual
    Add): detector-style 2x2 stride-2 upsampling (the product path), 4x4 stride 2,
    output_padding, groups."""
    c = Case("deconv-epilogues", 17)
    x = c.input("x", [1, 16, 6, 7])
    r = c.input("r", [1, 8, 12, 14])
    lo, hi = c.init(const("lo", np.float32(0))), c.init(const("hi", np.float32(6)))
    up = c.node("ConvTranspose", [x, c.init(weight("u0", [16, 8, 2, 2])), c.init(weight("ub0", [8]))],
                kernel_shape=[2, 2], strides=[2, 2])
    bn = c.node("BatchNormalization", [up, c.init(weight("s0", [8])), c.init(weight("t0", [8])),
                                       c.init(weight("m0", [8])),
                                       c.init(const("v0", (np.abs(rng.standard_normal(8)) + 0.5).astype(np.float32)))])
    c.out(c.node("Relu", [bn]))
    c.out(c.node("Sigmoid", [c.node("ConvTranspose", [x, c.init(weight("u1", [16, 1, 2, 2])), c.init(weight("ub1", [1]))],
                                    strides=[2, 2])]))
    c.out(c.node("Clip", [c.node("ConvTranspose", [x, c.init(weight("u2", [16, 8, 4, 4]))], strides=[2, 2],
                                 pads=[1, 1, 1, 1]), lo, hi]))
    c.out(c.node("LeakyRelu", [c.node("ConvTranspose", [x, c.init(weight("u3", [16, 8, 3, 3])), c.init(weight("ub3", [8]))],
                                      strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])], alpha=0.2))
    c.out(c.node("Tanh", [c.node("ConvTranspose", [x, c.init(weight("u4", [16, 2, 3, 3]))], group=4, pads=[1, 1, 1, 1])]))
    c.out(c.node("Add", [c.node("ConvTranspose", [x, c.init(weight("u5", [16, 8, 2, 2]))], strides=[2, 2]), r]))
    c.out(c.node("HardSwish", [c.node("ConvTranspose", [x, c.init(weight("u6", [16, 8, 2, 2]))], strides=[2, 2])]))
    return c


def bound_epilogues():
    """Convolutions followed by Max or Min against one constant number, the bounds TensorFlow
    exports write after an activation (fused into the convolution, as oneDNN clip post-ops
    channels-last), next to a per-channel Max that is no bound; Transposes that move only
    dimensions of extent 1 (views): around a one-channel image and a pooled 1 x 1 map."""
    c = Case("bound-epilogues", 14)
    x = c.input("x", [1, 8, 10, 9])
    r = c.input("r", [1, 6, 10, 9])
    g = c.input("g", [1, 12, 10, 1])
    lo = c.init(const("lo", np.full([1, 1, 1, 1], -0.4, np.float32)))
    hi = c.init(const("hi", np.float32(0.3)))
    y = c.node("LeakyRelu", [c.node("Conv", [x, c.init(weight("w0", [6, 8, 3, 3])), c.init(weight("b0", [6]))],
                                    pads=[0, 1, 0, 1])], alpha=0.2)
    c.out(c.node("Max", [y, lo]))
    c.out(c.node("Min", [hi, c.node("Relu", [c.node("Conv", [x, c.init(weight("w1", [6, 8, 1, 1]))])])]))
    c.out(c.node("Max", [c.node("Add", [c.node("Conv", [x, c.init(weight("w2", [6, 8, 3, 3]))], pads=[1, 1, 1, 1]), r]),
                         c.init(const("lo2", np.float32(-0.1)))]))
    img = c.node("Transpose", [g], perm=[0, 3, 1, 2])
    per_channel = c.init(weight("pc", [1, 4, 1, 1]))
    c.out(c.node("Max", [c.node("Conv", [img, c.init(weight("w3", [4, 1, 3, 3]))], pads=[1, 1, 1, 1]), per_channel]))
    pooled = c.node("GlobalAveragePool", [c.node("Conv", [x, c.init(weight("w4", [5, 8, 1, 1]))])])
    c.out(c.node("Transpose", [pooled], perm=[0, 2, 3, 1]))
    return c


def direct_conv():
    """Convolutions with 64 or more input channels, which the CPU target runs channels-last as
    its own direct convolution on AVX2 processors (fb-direct-conv.c): 3x3 with a residual Add
    and Relu, stride 2 with asymmetric pads and a channel count that leaves a partial block of
    16, dilation 2 with Clip, 1x7 and 7x1 with a bound, a batch of two, and a small map whose
    threads split the channel blocks."""
    c = Case("direct-conv", 14)
    x = c.input("x", [2, 64, 9, 10])
    r = c.input("r", [2, 48, 9, 10])
    s = c.input("s", [1, 64, 5, 4])
    w = lambda name, shape: c.init(weight(name, shape, 0.1))
    lo, hi = c.init(const("lo", np.float32(0))), c.init(const("hi", np.float32(6)))
    y = c.node("Conv", [x, w("w0", [48, 64, 3, 3]), w("b0", [48])], pads=[1, 1, 1, 1])
    c.out(c.node("Relu", [c.node("Add", [y, r])]))
    c.out(c.node("LeakyRelu", [c.node("Conv", [x, w("w1", [40, 64, 3, 3]), w("b1", [40])],
                                      strides=[2, 2], pads=[1, 0, 0, 1])], alpha=0.1))
    c.out(c.node("Clip", [c.node("Conv", [x, w("w2", [24, 64, 3, 3])], dilations=[2, 2], pads=[2, 2, 2, 2]), lo, hi]))
    c.out(c.node("Max", [c.node("Conv", [x, w("w3", [32, 64, 1, 7])], pads=[0, 3, 0, 3]),
                         c.init(const("floor", np.float32(-0.2)))]))
    c.out(c.node("Min", [c.init(const("ceil", np.float32(0.25))),
                         c.node("Conv", [x, w("w4", [16, 64, 7, 1]), w("b4", [16])], pads=[3, 0, 3, 0])]))
    c.out(c.node("Relu", [c.node("Conv", [s, w("w5", [64, 64, 3, 3]), w("b5", [64])], pads=[1, 1, 1, 1])]))
    return c


def pool():
    c = Case("pool", 19)
    x = c.input("x", [2, 3, 7, 8])
    y, idx = c.node("MaxPool", [x], ["mp", "mpi"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c.out(y, idx)
    c.out(c.node("MaxPool", [x], kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1))
    c.out(c.node("MaxPool", [x], kernel_shape=[2, 2], dilations=[2, 2]))
    y, idx = c.node("MaxPool", [x], ["mp2", "mpi2"], kernel_shape=[2, 2], storage_order=1)
    c.out(y, idx)
    c.out(c.node("MaxPool", [x], kernel_shape=[3, 2], auto_pad="SAME_UPPER", strides=[2, 3]))
    c.out(c.node("AveragePool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    c.out(c.node("AveragePool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                 count_include_pad=1))
    c.out(c.node("AveragePool", [x], kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1))
    c.out(c.node("AveragePool", [x], kernel_shape=[2, 2], strides=[1, 2], auto_pad="SAME_LOWER"))
    c.out(c.node("GlobalAveragePool", [x]), c.node("GlobalMaxPool", [x]))
    x1 = c.input("x1", [1, 2, 11])
    c.out(c.node("MaxPool", [x1], kernel_shape=[3], strides=[2]))
    c.out(c.node("AveragePool", [x1], kernel_shape=[4], strides=[3], pads=[2, 2], count_include_pad=1))
    return c


def norm():
    c = Case("norm", 17)
    x = c.input("x", [2, 3, 4, 5])
    c.out(c.node("BatchNormalization", [x, c.init(weight("s", [3])), c.init(weight("b", [3])),
                                        c.init(weight("m", [3])),
                                        c.init(const("v", (rng.random(3) + 0.5).astype(np.float32)))],
                 epsilon=1e-3))
    c.out(c.node("InstanceNormalization", [x, c.init(weight("is", [3])), c.init(weight("ib", [3]))]))
    y, mean, inv = c.node("LayerNormalization", [x, c.init(weight("ls", [5])), c.init(weight("lb", [5]))],
                          ["ln", "ln_mean", "ln_inv"])
    c.out(y, mean, inv)
    c.out(c.node("LayerNormalization", [x, c.init(weight("ls2", [4, 5]))], axis=2, epsilon=1e-3))
    c.out(c.node("LRN", [x], size=3, alpha=0.5, beta=0.8, bias=1.5))
    c.out(c.node("LRN", [x], size=5))
    return c


def matmul():
    c = Case("matmul", 12)
    a = c.input("a", [2, 3, 4])
    b = c.input("b", [4, 5])
    v = c.input("v", [4])
    c.out(c.node("MatMul", [a, b]), c.node("MatMul", [a, v]), c.node("MatMul", [v, b]))
    c.out(c.node("MatMul", [c.node("Unsqueeze", [a], axes=[1]), c.init(weight("bb", [3, 4, 2]))]))
    m = c.input("m", [3, 4])
    c.out(c.node("Gemm", [m, b, c.init(weight("gc", [5]))], alpha=0.5, beta=2.0))
    c.out(c.node("Gemm", [m, c.init(weight("gb", [6, 4]))], transB=1))
    c.out(c.node("Gemm", [c.init(weight("ga", [4, 2])), m, c.init(weight("gc2", [2, 1]))], transA=1, transB=1))
    e = c.input("e", [2, 4, 3])
    for eq, ins in [("bij,bjk->bik", [e, c.init(weight("eb", [2, 3, 5]))]),
                    ("bij,bkj->bik", [e, c.init(weight("ec", [2, 6, 3]))]),
                    ("bij->bji", [e]), ("...ij,jk->...ik", [e, c.init(weight("ed", [3, 2]))]),
                    ("bij,bij->bi", [e, e]), ("ij,kj", [m, c.init(weight("ee", [2, 4]))])]:
        c.out(c.node("Einsum", ins, equation=eq))
    return c


def movement():
    c = Case("movement", 18)
    x = c.input("x", [2, 3, 4])
    i64 = lambda n, v: c.init(const(n, np.array(v, np.int64)))
    c.out(c.node("Concat", [x, c.node("Neg", [x])], axis=1))
    c.out(c.node("Transpose", [x], perm=[2, 0, 1]), c.node("Transpose", [x]))
    c.out(c.node("Slice", [x, i64("s0", [2, 0]), i64("s1", [-1000, 3]), i64("s2", [2, 1]), i64("s3", [-1, 2])]))
    parts = c.node("Split", [x], ["sp0", "sp1"], axis=2, num_outputs=2)
    c.out(*parts)
    parts = c.node("Split", [x, i64("ss", [1, 2])], ["sp2", "sp3"], axis=1)
    c.out(*parts)
    c.out(c.node("Gather", [x, i64("g", [[2, 0], [-1, 1]])], axis=1))
    c.out(c.node("GatherElements", [x, i64("ge", [[[1], [0], [2]]])], axis=1))
    c.out(c.node("ScatterND", [x, i64("sn", [[1, 2], [0, 0]]), c.init(weight("su", [2, 4]))], reduction="add"))
    c.out(c.node("Expand", [c.node("ReduceMean", [x, i64("ax0", [0])]), i64("es", [2, 1, 3, 1])]))
    c.out(c.node("Tile", [x, i64("tr", [1, 2, 2])]))
    c.out(c.node("Pad", [x, i64("p0", [0, 1, 2, 1, 0, 1]), c.init(const("pv", np.float32(0.5)))]))
    c.out(c.node("Pad", [x, i64("p1", [0, 1, 3, 0, -1, 2])], mode="reflect"))
    c.out(c.node("Pad", [x, i64("p2", [1, 1, 1, 1]), "", i64("pax", [0, 2])], mode="edge"))
    c.out(c.node("Trilu", [x], upper=0), c.node("Trilu", [x, c.init(const("tk", np.int64(1)))]))
    d = c.node("Reshape", [x, i64("rs", [1, 12, 1, 2])])
    c.out(c.node("DepthToSpace", [d], blocksize=2), c.node("DepthToSpace", [d], blocksize=2, mode="CRD"))
    c.out(c.node("SpaceToDepth", [c.node("Reshape", [x, i64("rs2", [1, 2, 2, 6])])], blocksize=2))
    c.out(c.node("Reshape", [x, i64("rs3", [0, -1])]), c.node("Flatten", [x], axis=2))
    c.out(c.node("Squeeze", [c.node("Unsqueeze", [x, i64("us", [0, -1])]), i64("sq", [0])]))
    c.out(c.node("Shape", [x]), c.node("Shape", [x], start=1), c.node("Size", [x]))
    c.out(c.node("ConstantOfShape", [c.node("Shape", [x], end=2)],
                 value=numpy_helper.from_array(np.array([2.5], np.float32))))
    c.out(c.node("Range", [c.init(const("r0", np.float32(1))), c.init(const("r1", np.float32(3))),
                           c.init(const("r2", np.float32(0.4)))]))
    c.out(c.node("Constant", [], value_ints=[1, 2, 3]))
    c.out(c.node("Dropout", [x]))
    return c


def resize():
    c = Case("resize", 19)
    x = c.input("x", [1, 2, 4, 5])
    f32 = lambda n, v: c.init(const(n, np.array(v, np.float32)))
    up = f32("up", [1, 1, 2, 1.5])
    down = f32("down", [1, 1, 0.6, 0.5])
    for mode, ct, nm in [("nearest", "half_pixel", "round_prefer_floor"),
                         ("nearest", "asymmetric", "floor"),
                         ("nearest", "align_corners", "round_prefer_ceil"),
                         ("nearest", "pytorch_half_pixel", "ceil"),
                         ("linear", "half_pixel", None), ("linear", "align_corners", None),
                         ("linear", "asymmetric", None), ("linear", "pytorch_half_pixel", None),
                         ("linear", "half_pixel_symmetric", None),
                         ("cubic", "half_pixel", None), ("cubic", "asymmetric", None)]:
        attrs = {"mode": mode, "coordinate_transformation_mode": ct}
        if nm:
            attrs["nearest_mode"] = nm
        c.out(c.node("Resize", [x, "", up], **attrs), c.node("Resize", [x, "", down], **attrs))
    c.out(c.node("Resize", [x, "", down], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1))
    c.out(c.node("Resize", [x, "", "", c.init(const("sz", np.array([1, 2, 7, 3], np.int64)))],
                 mode="linear"))
    c.out(c.node("Resize", [x, f32("roi", [0, 0, 0.2, 0.1, 1, 1, 0.9, 0.8]), up], mode="linear",
                 coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.0))
    c.out(c.node("Resize", [x, "", "", c.init(const("sz2", np.array([6, 6], np.int64)))],
                 axes=[2, 3], keep_aspect_ratio_policy="not_larger"))
    return c


def upsample():
    c = Case("upsample", 9)
    x = c.input("x", [1, 2, 3, 4])
    s = c.init(const("sc", np.array([1, 1, 2, 3], np.float32)))
    c.out(c.node("Upsample", [x, s]), c.node("Upsample", [x, s], mode="linear"))
    return c


def control():
    c = Case("control", 17)
    x = c.input("x", [3, 4])
    cond = c.node("Greater", [c.node("ReduceSum", [x], keepdims=0), c.init(const("zero", np.float32(0)))])
    then_g = helper.make_graph([helper.make_node("Mul", [x, x], ["t_out"])], "then", [], [vi("t_out")])
    else_g = helper.make_graph([helper.make_node("Sub", [x, x], ["e_tmp"]),
                                helper.make_node("Add", ["e_tmp", x], ["e_out"])], "else", [], [vi("e_out")])
    c.out(c.node("If", [cond], then_branch=then_g, else_branch=else_g))
    cond2 = c.node("Not", [cond])
    c.out(c.node("If", [cond2], ["if2"], then_branch=then_g, else_branch=else_g))
    # Loop: carried s = s * 0.5 + x[i mod 3]; scan of s; stops when i reaches trip count.
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Constant", [], ["three"], value=numpy_helper.from_array(np.array(3, np.int64))),
         helper.make_node("Mod", ["i", "three"], ["row"]),
         helper.make_node("Gather", [x, "row"], ["xr"], axis=0),
         helper.make_node("Constant", [], ["half"], value=numpy_helper.from_array(np.array(0.5, np.float32))),
         helper.make_node("Mul", ["s_in", "half"], ["s_half"]),
         helper.make_node("Add", ["s_half", "xr"], ["s_out"]),
         helper.make_node("ReduceSum", ["s_out"], ["scan"], keepdims=0)],
        "body",
        [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []), vi("s_in", F, [4])],
        [vi("c_out", TensorProto.BOOL, []), vi("s_out", F, [4]), vi("scan", F, [])])
    trips = c.input_i64("trips", 5)
    s0 = c.init(const("s0", np.zeros(4, np.float32)))
    final, scan = c.node("Loop", [trips, "", s0], ["loop_s", "loop_scan"], body=body)
    c.out(final, scan)
    return c


def gru():
    c = Case("gru", 14)
    x = c.input("x", [5, 2, 3])
    H = 4
    c.out(*c.node("GRU", [x, c.init(weight("w", [1, 3 * H, 3])), c.init(weight("r", [1, 3 * H, H])),
                          c.init(weight("b", [1, 6 * H]))], ["y0", "h0"], hidden_size=H))
    c.out(*c.node("GRU", [x, c.init(weight("w2", [2, 3 * H, 3])), c.init(weight("r2", [2, 3 * H, H])),
                          c.init(weight("b2", [2, 6 * H])), c.init(const("lens", np.array([5, 3], np.int32))),
                          c.init(weight("h2", [2, 2, H]))],
                  ["y1", "h1"], hidden_size=H, direction="bidirectional", linear_before_reset=1))
    c.out(*c.node("GRU", [x, c.init(weight("w3", [1, 3 * H, 3])), c.init(weight("r3", [1, 3 * H, H]))],
                  ["y2", "h2o"], hidden_size=H, direction="reverse", clip=0.8,
                  activations=["HardSigmoid", "Softsign"], activation_alpha=[0.3], activation_beta=[0.6]))
    return c


def lstm():
    c = Case("lstm", 14)
    x = c.input("x", [4, 3, 2])
    H = 3
    c.out(*c.node("LSTM", [x, c.init(weight("w", [1, 4 * H, 2])), c.init(weight("r", [1, 4 * H, H])),
                           c.init(weight("b", [1, 8 * H])), "", c.init(weight("h0", [1, 3, H])),
                           c.init(weight("c0", [1, 3, H])), c.init(weight("p", [1, 3 * H]))],
                  ["y0", "yh0", "yc0"], hidden_size=H))
    c.out(*c.node("LSTM", [x, c.init(weight("w2", [2, 4 * H, 2])), c.init(weight("r2", [2, 4 * H, H])),
                           c.init(weight("b2", [2, 8 * H])), c.init(const("lens", np.array([4, 2, 3], np.int32)))],
                  ["y1", "yh1", "yc1"], hidden_size=H, direction="bidirectional", clip=1.5))
    c.out(*c.node("LSTM", [x, c.init(weight("w3", [1, 4 * H, 2])), c.init(weight("r3", [1, 4 * H, H]))],
                  ["y2", "yh2"], hidden_size=H, direction="reverse", input_forget=1,
                  activations=["Sigmoid", "LeakyRelu", "Tanh"], activation_alpha=[0.1]))
    return c


def shared_weights():
    """Products of a batch of rows by one weight matrix, which the CPU target runs as one
    taller product (fb-lower-contract.c), with epilogues that read the batch coordinates: a
    bias and an addend broadcast along a middle batch axis, then Relu; an exact GELU on a
    product of fewer rows than columns, split by columns, then an addend along the map's rows;
    and a Sigmoid on a product whose tiles of rows cross the batches' boundaries."""
    c = Case("shared-weights", 17)
    x1 = c.input("x1", [2, 3, 5, 16])
    y1 = c.node("Add", [c.node("MatMul", [x1, c.init(weight("w1", [16, 70]))]), c.init(weight("b1", [70]))])
    c.out(c.node("Relu", [c.node("Add", [y1, c.init(weight("r1", [1, 3, 1, 70]))])]))
    x2 = c.input("x2", [1, 7, 7, 256])
    y2 = c.node("Add", [c.node("MatMul", [x2, c.init(weight("w2", [256, 1024], 0.06))]), c.init(weight("b2", [1024]))])
    erf = c.node("Erf", [c.node("Div", [y2, c.init(const("sqrt2", np.float32(np.sqrt(2.0))))])])
    gelu = c.node("Mul", [c.node("Mul", [y2, c.node("Add", [erf, c.init(const("one", np.float32(1.0)))])]),
                          c.init(const("half", np.float32(0.5)))])
    c.out(c.node("Add", [gelu, c.init(weight("r2", [1, 7, 1, 1]))]))
    x3 = c.input("x3", [5, 37, 64])
    y3 = c.node("Add", [c.node("MatMul", [x3, c.init(weight("w3", [64, 120], 0.12))]), c.init(weight("b3", [120]))])
    c.out(c.node("Sigmoid", [y3]))
    return c


def linear_post_ops():
    """Linear layers by constant weights with the chains the CPU target's 1x1 convolutions take
    as post-ops (fb-lower-product-conv.c; taken by default from 16 MFLOP, and every one under
    FUSEBENCH_PRODUCT_CONV=1): Gemm with transB, alpha and beta, then Relu; MatMul, a bias and
    an exact GELU; a bias and GELU's tanh form; a bias, a residual Add and a Sigmoid; a Gemm
    without bias or transB, then Clip (0, 6)."""
    c = Case("linear-post-ops", 17)
    x1 = c.input("x1", [24, 40])
    g1 = c.node("Gemm", [x1, c.init(weight("w1", [56, 40], 0.2)), c.init(weight("c1", [56]))],
                transB=1, alpha=0.5, beta=2.0)
    c.out(c.node("Relu", [g1]))
    x2 = c.input("x2", [1, 20, 48])
    y2 = c.node("Add", [c.node("MatMul", [x2, c.init(weight("w2", [48, 64], 0.15))]), c.init(weight("b2", [64]))])
    erf = c.node("Erf", [c.node("Div", [y2, c.init(const("sqrt2", np.float32(np.sqrt(2.0))))])])
    c.out(c.node("Mul", [c.node("Mul", [y2, c.node("Add", [erf, c.init(const("one", np.float32(1.0)))])]),
                         c.init(const("half", np.float32(0.5)))]))
    y3 = c.node("Add", [c.node("MatMul", [x2, c.init(weight("w3", [48, 32], 0.15))]), c.init(weight("b3", [32]))])
    cube = c.node("Mul", [c.node("Mul", [y3, y3]), y3])
    inner = c.node("Mul", [c.node("Add", [y3, c.node("Mul", [cube, c.init(const("k3", np.float32(0.044715)))])]),
                           c.init(const("root2pi", np.float32(np.sqrt(2.0 / np.pi))))])
    t = c.node("Add", [c.node("Tanh", [inner]), c.init(const("one_t", np.float32(1.0)))])
    c.out(c.node("Mul", [c.node("Mul", [c.init(const("half_t", np.float32(0.5))), y3]), t]))
    x4 = c.input("x4", [18, 32])
    y4 = c.node("Add", [c.node("MatMul", [x4, c.init(weight("w4", [32, 32], 0.2))]), c.init(weight("b4", [32]))])
    c.out(c.node("Sigmoid", [c.node("Add", [y4, x4])]))
    g5 = c.node("Gemm", [x4, c.init(weight("w5", [32, 24], 0.3))])
    c.out(c.node("Clip", [g5, c.init(const("lo", np.float32(0.0))), c.init(const("hi", np.float32(6.0)))]))
    return c


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for make in [unary, binary, integers, reduce, conv, pool, norm, matmul, movement, resize,
                 upsample, control, gru, lstm, conv1d, conv_epilogues, deconv_epilogues,
                 bound_epilogues, direct_conv, shared_weights, linear_post_ops]:
        global rng
        rng = np.random.default_rng([20240601, zlib.crc32(make.__name__.encode())])
        make().save(outdir)


if __name__ == "__main__":
    main()
