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


def bottleneck(b, scope, x, c_in, width, stride):
    c_out = width * 4
    y = b.conv_bn_relu(f"{scope}.1", x, c_in, width, 1)
    y = b.conv_bn_relu(f"{scope}.2", y, width, width, 3, stride=stride)
    # Trained residual branches end in a small BatchNormalization scale (torchvision can even
    # start them at zero); with 1.0 the activations of 16 random blocks grow into the
    # thousands and no two float summation orders agree on the logits.
    y = b.conv_bn_relu(f"{scope}.3", y, width, c_out, 1, relu=False, gamma=0.2)
    if stride != 1 or c_in != c_out:
        x = b.conv_bn_relu(f"{scope}.downsample", x, c_in, c_out, 1, stride=stride, relu=False)
    y = b.node("Add", scope, [y, x])
    return b.node("Relu", f"{scope}.relu", [y]), c_out


def build():
    b = Builder(SEED)
    x = b.conv_bn_relu("conv1", "input", 3, 64, 7, stride=2, pad=3)
    x = b.max_pool("/maxpool", x, 3, 2, pad=1)
    c = 64
    for layer, (blocks, width, stride) in enumerate([(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)], 1):
        for i in range(blocks):
            x, c = bottleneck(b, f"layer{layer}.{i}", x, c, width, stride if i == 0 else 1)
    out = b.classifier(x, c)
    return b.model("resnet50", "input", [1, 3, 224, 224], out, [1, 1000],
                   "ResNet-50 (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "resnet50", SEED)
