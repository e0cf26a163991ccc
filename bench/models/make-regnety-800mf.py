#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a RegNetY-800MF shaped like torchvision's regnet_y_800mf, random seeded weights,
1x3x224x224 input, 1000 logits: bottlenecks whose 3x3 convolution runs in groups of 16
channels (4 to 49 groups), each with a ReLU squeeze-excitation.

    stem 3x3/2 conv 32, BN, Relu
    4 stages of 1, 3, 8, 2 blocks, widths 64, 144, 320, 784, the first block of each stride 2;
      each block: 1x1 conv to the width, BN, Relu; 3x3 conv in groups of 16 channels (the
      stride here), BN, Relu; squeeze-excitation (GlobalAveragePool, 1x1 conv to a quarter of
      the block's input channels + bias, Relu, 1x1 conv back + bias, Sigmoid, Mul); 1x1 conv,
      BN; a 1x1 (strided) conv + BN shortcut where the block changes shape; Add, Relu
    GlobalAveragePool, Flatten, Gemm 784 -> 1000

Usage: make-regnety-800mf.py [OUT_DIR]   (default: build/bench/regnety_800mf in the repository)
"""
from fb_bench_model import Builder, squeeze_excitation, write

SEED = 800
DEPTHS = [1, 3, 8, 2]
WIDTHS = [64, 144, 320, 784]
GROUP_WIDTH = 16


def block(b, scope, x, c_in, c_out, stride):
    y = b.conv_bn_relu(f"{scope}.f.a", x, c_in, c_out, 1)
    y = b.conv_bn_relu(f"{scope}.f.b", y, c_out, c_out, 3, stride=stride, group=c_out // GROUP_WIDTH)
    y = squeeze_excitation(b, f"{scope}.f.se", y, c_out, int(round(0.25 * c_in)), relu=True)
    # The branch's last BatchNormalization at a small scale, as in Builder.bottleneck.
    y = b.conv_bn_relu(f"{scope}.f.c", y, c_out, c_out, 1, relu=False, gamma=0.2)
    return b.residual_relu(scope, y, x, c_in, c_out, stride, shortcut="proj", relu="activation")


def build():
    b = Builder(SEED)
    x = b.conv_bn_relu("stem", "input", 3, 32, 3, stride=2)
    c = 32
    for stage, (depth, width) in enumerate(zip(DEPTHS, WIDTHS), 1):
        for i in range(depth):
            x = block(b, f"trunk_output.block{stage}.block{stage}-{i}", x, c, width, 2 if i == 0 else 1)
            c = width
    out = b.classifier(x, c)
    return b.model("regnety_800mf", "input", [1, 3, 224, 224], out, [1, 1000],
                   "RegNetY-800MF (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "regnety_800mf", SEED)
