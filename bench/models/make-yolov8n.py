#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a YOLOv8n-shaped detector, random seeded weights, 1x3x640x640 input, its three heads'
raw outputs concatenated as 1x144x8400, laid out the way such detectors export at opset 17:
every convolution with its BatchNormalization folded into a bias and SiLU written out as
Sigmoid and Mul; C2f blocks (a 1x1 convolution, Split in two, bottlenecks of two 3x3
convolutions with a residual, Concat, a 1x1 convolution); SPPF (three 5x5 MaxPools, Concat);
the neck's nearest upsampling (Resize) and Concats; the detection heads (two 3x3 convolutions
and a 1x1 one for the boxes' 64 and the classes' 80 channels at each of 80x80, 40x40 and
20x20), reshaped and concatenated. The box decoding after it (a softmax over 16 bins, anchors)
is left out.

    backbone: Conv 3x3/2 16, Conv 3x3/2 32, C2f 32 x1, Conv 3x3/2 64, C2f 64 x2,
              Conv 3x3/2 128, C2f 128 x2, Conv 3x3/2 256, C2f 256 x1, SPPF 256
    neck:     up, Concat P4, C2f 128; up, Concat P3, C2f 64 (P3 out);
              Conv 3x3/2, Concat, C2f 128 (P4 out); Conv 3x3/2, Concat, C2f 256 (P5 out)
    heads:    per level, boxes Conv 3x3 64, Conv 3x3 64, 1x1 64; classes Conv 3x3 80,
              Conv 3x3 80, 1x1 80; Concat, Reshape to 144 x HW; Concat of the three levels

Usage: make-yolov8n.py [OUT_DIR]   (default: build/bench/yolov8n in the repository)
"""
import numpy as np
from onnx import helper

from fb_bench_model import Builder, write

SEED = 8080


def conv_silu(b, scope, x, c_in, c_out, k, stride=1):
    y = b.conv(f"{scope}.conv", x, c_in, c_out, k, stride=stride, bias=True)
    return b.node("Mul", f"{scope}.act", [y, b.node("Sigmoid", f"{scope}.act", [y])])


def c2f(b, scope, x, c_in, c_out, n, shortcut):
    c = c_out // 2
    y = conv_silu(b, f"{scope}.cv1", x, c_in, 2 * c, 1)
    split = b.weight(f"{scope}.split", np.array([c, c], dtype=np.int64), np.int64)
    name = f"{b.scope(scope)}/Split"
    parts = [f"{name}_output_0", f"{name}_output_1"]
    b.nodes.append(helper.make_node("Split", [y, split], parts, name=name, axis=1))
    last = parts[1]
    for i in range(n):
        h = conv_silu(b, f"{scope}.m.{i}.cv1", last, c, c, 3)
        h = conv_silu(b, f"{scope}.m.{i}.cv2", h, c, c, 3)
        last = b.node("Add", f"{scope}.m.{i}", [last, h]) if shortcut else h
        parts.append(last)
    return conv_silu(b, f"{scope}.cv2", b.concat(f"{scope}.cat", parts), (2 + n) * c, c_out, 1)


def sppf(b, scope, x, c_in, c_out):
    c = c_in // 2
    y = conv_silu(b, f"{scope}.cv1", x, c_in, c, 1)
    pools = [y]
    for i in range(3):
        pools.append(b.max_pool(f"{scope}.m", pools[-1], 5, 1, pad=2))
    return conv_silu(b, f"{scope}.cv2", b.concat(f"{scope}.cat", pools), 4 * c, c_out, 1)


def head(b, scope, x, c_in, size):
    boxes = conv_silu(b, f"{scope}.cv2.0", x, c_in, 64, 3)
    boxes = conv_silu(b, f"{scope}.cv2.1", boxes, 64, 64, 3)
    boxes = b.conv(f"{scope}.cv2.2", boxes, 64, 64, 1, bias=True)
    classes = conv_silu(b, f"{scope}.cv3.0", x, c_in, 80, 3)
    classes = conv_silu(b, f"{scope}.cv3.1", classes, 80, 80, 3)
    classes = b.conv(f"{scope}.cv3.2", classes, 80, 80, 1, bias=True)
    y = b.concat(f"{scope}.cat", [boxes, classes])
    shape = b.weight(f"{scope}.shape", np.array([1, 144, size * size], dtype=np.int64), np.int64)
    return b.node("Reshape", f"{scope}.view", [y, shape])


def build():
    b = Builder(SEED)
    x = conv_silu(b, "model.0", "images", 3, 16, 3, stride=2)
    x = conv_silu(b, "model.1", x, 16, 32, 3, stride=2)
    x = c2f(b, "model.2", x, 32, 32, 1, True)
    x = conv_silu(b, "model.3", x, 32, 64, 3, stride=2)
    p3 = c2f(b, "model.4", x, 64, 64, 2, True)
    x = conv_silu(b, "model.5", p3, 64, 128, 3, stride=2)
    p4 = c2f(b, "model.6", x, 128, 128, 2, True)
    x = conv_silu(b, "model.7", p4, 128, 256, 3, stride=2)
    x = c2f(b, "model.8", x, 256, 256, 1, True)
    p5 = sppf(b, "model.9", x, 256, 256)
    x = b.concat("model.11", [b.resize("model.10", p5, 2), p4])
    n4 = c2f(b, "model.12", x, 384, 128, 1, False)
    x = b.concat("model.14", [b.resize("model.13", n4, 2), p3])
    out3 = c2f(b, "model.15", x, 192, 64, 1, False)
    x = b.concat("model.17", [conv_silu(b, "model.16", out3, 64, 64, 3, stride=2), n4])
    out4 = c2f(b, "model.18", x, 192, 128, 1, False)
    x = b.concat("model.20", [conv_silu(b, "model.19", out4, 128, 128, 3, stride=2), p5])
    out5 = c2f(b, "model.21", x, 384, 256, 1, False)
    levels = [head(b, f"model.22.{i}", y, c, s)
              for i, (y, c, s) in enumerate([(out3, 64, 80), (out4, 128, 40), (out5, 256, 20)])]
    name = "model.22/Concat"
    b.nodes.append(helper.make_node("Concat", levels, ["output0"], name=name, axis=2))
    return b.model("yolov8n", "images", [1, 3, 640, 640], "output0", [1, 144, 8400],
                   "A YOLOv8n-shaped detector (SiLU, C2f, SPPF), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "yolov8n", SEED)
