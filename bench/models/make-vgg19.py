#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a VGG-19 shaped like torchvision's vgg19 (no BatchNormalization), random seeded
weights, 1x3x224x224 input, 1000 logits.

    16 3x3 convolutions with bias and Relu in five stages of 2, 2, 4, 4, 4 at widths
    64, 128, 256, 512, 512, each stage ending in MaxPool 2x2/2
    AveragePool 1x1 (torch's AdaptiveAvgPool2d (7, 7) on a 7x7 map), Flatten,
    Gemm 25088 -> 4096, Relu, Gemm 4096 -> 4096, Relu, Gemm 4096 -> 1000

Its 143 million parameters (574 MB) make the classifier a stream of weights: at batch 1 the
three Gemms read 0.5 GB for 0.25 GFLOP, where the convolutions do 39 GFLOP on 80 MB.

Usage: make-vgg19.py [OUT_DIR]   (default: build/bench/vgg19 in the repository)
"""
import numpy as np

from fb_bench_model import Builder, write

SEED = 1919
STAGES = [(2, 64), (2, 128), (4, 256), (4, 512), (4, 512)]


def gemm(b, scope, x, c_in, c_out):
    """A Linear as torch exports it at batch 1 under Flatten: Gemm with transposed weights."""
    w = b.weight(f"{scope}.weight", b.rng.normal(0.0, np.sqrt(2.0 / c_in), size=(c_out, c_in)))
    bias = b.weight(f"{scope}.bias", b.rng.normal(0.0, 0.05, size=c_out))
    return b.node("Gemm", scope, [x, w, bias], alpha=1.0, beta=1.0, transB=1)


def build():
    b = Builder(SEED)
    x, c, i = "input", 3, 0
    for convs, width in STAGES:
        for _ in range(convs):
            x = b.conv(f"features.{i}", x, c, width, 3, bias=True)
            x = b.node("Relu", f"features.{i + 1}", [x])
            c, i = width, i + 2
        x = b.max_pool(f"features.{i}", x, 2, 2)
        i += 1
    x = b.avg_pool("/avgpool", x, 1, 1)
    x = b.node("Flatten", "/flatten", [x], axis=1)
    x = b.node("Relu", "classifier.1", [gemm(b, "classifier.0", x, 512 * 7 * 7, 4096)])
    x = b.node("Relu", "classifier.4", [gemm(b, "classifier.3", x, 4096, 4096)])
    out = b.fc(x, 4096, scope="classifier.6", name="/classifier.6/Gemm")
    return b.model("vgg19", "input", [1, 3, 224, 224], out, [1, 1000],
                   "VGG-19 (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "vgg19", SEED)
