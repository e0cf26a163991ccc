#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a ResNet-18 shaped like torchvision's resnet18, random seeded weights, 1x3x224x224
input, 1000 logits: basic blocks of two 3x3 convolutions where ResNet-50 has bottlenecks, so
nearly all its work is 3x3 convolutions of 64 to 512 channels at 56x56 down to 7x7.

    conv1 7x7/2 64, BN, Relu, MaxPool 3x3/2 pad 1
    layer1..4: 2 basic blocks each of width 64, 128, 256, 512: 3x3 (the stride here), BN,
               Relu, 3x3, BN, the residual Add, Relu; a 1x1/2 conv + BN shortcut on the first
               block of layers 2..4
    GlobalAveragePool, Flatten, Gemm 512 -> 1000

Usage: make-resnet18.py [OUT_DIR]   (default: build/bench/resnet18 in the repository)
"""
from fb_bench_model import Builder, write

SEED = 1818


def basic_block(b, scope, x, c_in, c_out, stride):
    y = b.conv_bn_relu(f"{scope}.1", x, c_in, c_out, 3, stride=stride)
    # The branch's last BatchNormalization at a small scale, as in Builder.bottleneck.
    y = b.conv_bn_relu(f"{scope}.2", y, c_out, c_out, 3, relu=False, gamma=0.2)
    return b.residual_relu(scope, y, x, c_in, c_out, stride)


def build():
    b = Builder(SEED)
    x = b.conv_bn_relu("conv1", "input", 3, 64, 7, stride=2, pad=3)
    x = b.max_pool("/maxpool", x, 3, 2, pad=1)
    c = 64
    for layer, (planes, stride) in enumerate([(64, 1), (128, 2), (256, 2), (512, 2)], 1):
        for i in range(2):
            x = basic_block(b, f"layer{layer}.{i}", x, c, planes, stride if i == 0 else 1)
            c = planes
    out = b.classifier(x, c)
    return b.model("resnet18", "input", [1, 3, 224, 224], out, [1, 1000],
                   "ResNet-18 (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "resnet18", SEED)
