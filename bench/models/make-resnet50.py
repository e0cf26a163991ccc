#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a ResNet-50 shaped like torchvision's resnet50 (v1.5: the stride on the 3x3 of each
bottleneck), random seeded weights, 1x3x224x224 input, 1000 logits.

    conv1 7x7/2 64, BN, Relu, MaxPool 3x3/2 pad 1
    layer1..4: 3, 4, 6, 3 bottlenecks (1x1, 3x3, 1x1 x4) of width 64, 128, 256, 512,
               each BN'd, Relu after the residual Add; a 1x1 (strided) conv + BN shortcut
               on the first block of every layer
    GlobalAveragePool, Flatten, Gemm 2048 -> 1000

Usage: make-resnet50.py [OUT_DIR]   (default: build/bench/resnet50 in the repository)
"""
from fb_bench_model import Builder, write

SEED = 5050


def build():
    b = Builder(SEED)
    out = b.resnet50_body()
    return b.model("resnet50", "input", [1, 3, 224, 224], out, [1, 1000],
                   "ResNet-50 (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "resnet50", SEED)
