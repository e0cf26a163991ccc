#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a SqueezeNet 1.1 shaped like torchvision's squeezenet1_1, random seeded weights,
1x3x224x224 input, 1000 logits: fire modules whose 1x1 and 3x3 expansions are concatenated,
ceil-mode max pools, and a classifier that is a 1x1 convolution, not a Gemm.

    conv 3x3/2 64 (bias), Relu, MaxPool 3x3/2 ceil
    fire(16, 64, 64) x2, MaxPool 3x3/2 ceil, fire(32, 128, 128) x2, MaxPool 3x3/2 ceil,
    fire(48, 192, 192) x2, fire(64, 256, 256) x2
      fire(s, e1, e3): 1x1 squeeze to s + bias, Relu; Concat of [1x1 to e1 + bias, Relu] and
                       [3x3 to e3 + bias, Relu]
    classifier: (Dropout, gone at inference) 1x1 conv 512 -> 1000 + bias, Relu,
                GlobalAveragePool, Flatten

Usage: make-squeezenet.py [OUT_DIR]   (default: build/bench/squeezenet in the repository)
"""
from fb_bench_model import Builder, write

SEED = 1111
FIRES = [(16, 64), (16, 64), "pool", (32, 128), (32, 128), "pool", (48, 192), (48, 192),
         (64, 256), (64, 256)]


def conv_relu(b, scope, x, c_in, c_out, k, stride=1):
    y = b.conv(scope, x, c_in, c_out, k, stride=stride, pad=k // 2 if stride == 1 else 0, bias=True)
    return b.node("Relu", f"{scope}.relu", [y])


def fire(b, scope, x, c_in, squeeze, expand):
    s = conv_relu(b, f"{scope}.squeeze", x, c_in, squeeze, 1)
    e1 = conv_relu(b, f"{scope}.expand1x1", s, squeeze, expand, 1)
    e3 = conv_relu(b, f"{scope}.expand3x3", s, squeeze, expand, 3)
    return b.concat(f"{scope}.cat", [e1, e3])


def build():
    b = Builder(SEED)
    x = conv_relu(b, "features.0", "input", 3, 64, 3, stride=2)
    x = b.max_pool("features.2", x, 3, 2, ceil=1)
    c = 64
    for i, f in enumerate(FIRES, 3):
        if f == "pool":
            x = b.max_pool(f"features.{i}", x, 3, 2, ceil=1)
            continue
        x = fire(b, f"features.{i}", x, c, *f)
        c = 2 * f[1]
    x = conv_relu(b, "classifier.1", x, c, 1000, 1)
    x = b.node("GlobalAveragePool", "classifier.3", [x])
    out = b.node("Flatten", "/flatten", [x], axis=1)
    return b.model("squeezenet", "input", [1, 3, 224, 224], out, [1, 1000],
                   "SqueezeNet 1.1 (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "squeezenet", SEED)
