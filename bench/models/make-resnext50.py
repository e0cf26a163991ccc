#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a ResNeXt-50 32x4d shaped like torchvision's resnext50_32x4d, random seeded weights,
1x3x224x224 input, 1000 logits: ResNet-50's layout (make-resnet50.py) with each bottleneck's
3x3 convolution in 32 groups and twice as wide.

    conv1 7x7/2 64, BN, Relu, MaxPool 3x3/2 pad 1
    layer1..4: 3, 4, 6, 3 bottlenecks: 1x1 to width, 3x3 in 32 groups (the stride here), 1x1
               to 4 x planes, for planes 64, 128, 256, 512 and width 2 x planes; each BN'd,
               Relu after the residual Add; a 1x1 (strided) conv + BN shortcut on the first
               block of every layer
    GlobalAveragePool, Flatten, Gemm 2048 -> 1000

Usage: make-resnext50.py [OUT_DIR]   (default: build/bench/resnext50 in the repository)
"""
from fb_bench_model import Builder, write

SEED = 5032
GROUPS = 32


def build():
    b = Builder(SEED)
    out = b.resnet50_body(groups=GROUPS, width_per_plane=2)
    return b.model("resnext50", "input", [1, 3, 224, 224], out, [1, 1000],
                   "ResNeXt-50 32x4d (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "resnext50", SEED)
