#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write an Inception-v2-style network (BN-Inception's stem and module widths, with v3's
factorized 1xn / nx1 convolutions in the 14x14 modules), random seeded weights, 1x3x224x224
input, 1000 logits.

    stem: 7x7/2 64, MaxPool 3x3/2, 1x1 64, 3x3 192, MaxPool 3x3/2       (every conv BN + Relu)
    28x28: 3a, 3b modules: 1x1 | 1x1 -> 3x3 | 1x1 -> 3x3 -> 3x3 | AvgPool 3x3 -> 1x1, Concat
    3c reduction: 1x1 -> 3x3/2 | 1x1 -> 3x3 -> 3x3/2 | MaxPool 3x3/2, Concat
    14x14: 4a..4e modules: 1x1 | 1x1 -> 1x7 -> 7x1 | 1x1 -> 7x1 -> 1x7 -> 7x1 -> 1x7 | AvgPool -> 1x1
    4f reduction to 7x7, then 5a, 5b modules (as 3a), GlobalAveragePool, Gemm 1024 -> 1000

Usage: make-inception.py [OUT_DIR]   (default: build/bench/inception in the repository)
"""
from fb_bench_model import Builder, write

SEED = 3030


def cbr(b, scope, x, c_in, c_out, k, stride=1, kw=None):
    if kw is None:
        return b.conv_bn_relu(scope, x, c_in, c_out, k, stride=stride)
    return b.conv_bn_relu(scope, x, c_in, c_out, k, stride=stride, kw=kw, pad_hw=(k // 2, kw // 2))


def module_a(b, scope, x, c_in, c1, c3r, c3, cd3r, cd3, cp):
    b1 = cbr(b, f"{scope}.b1", x, c_in, c1, 1)
    b2 = cbr(b, f"{scope}.b2.0", x, c_in, c3r, 1)
    b2 = cbr(b, f"{scope}.b2.1", b2, c3r, c3, 3)
    b3 = cbr(b, f"{scope}.b3.0", x, c_in, cd3r, 1)
    b3 = cbr(b, f"{scope}.b3.1", b3, cd3r, cd3, 3)
    b3 = cbr(b, f"{scope}.b3.2", b3, cd3, cd3, 3)
    b4 = b.avg_pool(f"{scope}.b4.pool", x, 3, 1, pad=1)
    b4 = cbr(b, f"{scope}.b4", b4, c_in, cp, 1)
    return b.concat(scope, [b1, b2, b3, b4]), c1 + c3 + cd3 + cp


def module_b(b, scope, x, c_in, c1, c7r, c7, cd7r, cd7, cp):
    b1 = cbr(b, f"{scope}.b1", x, c_in, c1, 1)
    b2 = cbr(b, f"{scope}.b2.0", x, c_in, c7r, 1)
    b2 = cbr(b, f"{scope}.b2.1", b2, c7r, c7r, 1, kw=7)
    b2 = cbr(b, f"{scope}.b2.2", b2, c7r, c7, 7, kw=1)
    b3 = cbr(b, f"{scope}.b3.0", x, c_in, cd7r, 1)
    b3 = cbr(b, f"{scope}.b3.1", b3, cd7r, cd7r, 7, kw=1)
    b3 = cbr(b, f"{scope}.b3.2", b3, cd7r, cd7r, 1, kw=7)
    b3 = cbr(b, f"{scope}.b3.3", b3, cd7r, cd7r, 7, kw=1)
    b3 = cbr(b, f"{scope}.b3.4", b3, cd7r, cd7, 1, kw=7)
    b4 = b.avg_pool(f"{scope}.b4.pool", x, 3, 1, pad=1)
    b4 = cbr(b, f"{scope}.b4", b4, c_in, cp, 1)
    return b.concat(scope, [b1, b2, b3, b4]), c1 + c7 + cd7 + cp


def reduction(b, scope, x, c_in, c3r, c3, cd3r, cd3):
    b1 = cbr(b, f"{scope}.b1.0", x, c_in, c3r, 1)
    b1 = cbr(b, f"{scope}.b1.1", b1, c3r, c3, 3, stride=2)
    b2 = cbr(b, f"{scope}.b2.0", x, c_in, cd3r, 1)
    b2 = cbr(b, f"{scope}.b2.1", b2, cd3r, cd3, 3)
    b2 = cbr(b, f"{scope}.b2.2", b2, cd3, cd3, 3, stride=2)
    b3 = b.max_pool(f"{scope}.b3.pool", x, 3, 2, pad=1)
    return b.concat(scope, [b1, b2, b3]), c3 + cd3 + c_in


def build():
    b = Builder(SEED)
    x = b.conv_bn_relu("conv1", "input", 3, 64, 7, stride=2, pad=3)
    x = b.max_pool("/pool1", x, 3, 2, pad=1)
    x = cbr(b, "conv2.reduce", x, 64, 64, 1)
    x = cbr(b, "conv2", x, 64, 192, 3)
    x = b.max_pool("/pool2", x, 3, 2, pad=1)
    x, c = module_a(b, "inception3a", x, 192, 64, 64, 64, 64, 96, 32)
    x, c = module_a(b, "inception3b", x, c, 64, 64, 96, 64, 96, 64)
    x, c = reduction(b, "inception3c", x, c, 128, 160, 64, 96)
    for name, widths in [("4a", (224, 64, 96, 96, 128, 128)), ("4b", (192, 96, 128, 96, 128, 128)),
                         ("4c", (160, 128, 160, 128, 160, 128)), ("4d", (96, 128, 192, 160, 192, 128)),
                         ("4e", (192, 160, 192, 160, 192, 160))]:
        x, c = module_b(b, f"inception{name}", x, c, *widths)
    x, c = reduction(b, "inception4f", x, c, 128, 192, 192, 256)
    x, c = module_a(b, "inception5a", x, c, 352, 192, 320, 160, 224, 128)
    x, c = module_a(b, "inception5b", x, c, 352, 192, 320, 192, 224, 128)
    out = b.classifier(x, c)
    return b.model("inception", "input", [1, 3, 224, 224], out, [1, 1000],
                   "Inception-v2-style network with factorized 7x7 modules, random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "inception", SEED)
