#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a DenseNet-121 shaped like torchvision's densenet121, random seeded weights,
1x3x224x224 input, 1000 logits.

    conv0 7x7/2 64, BN, Relu, MaxPool 3x3/2 pad 1
    dense blocks of 6, 12, 24, 16 layers (growth 32, bottleneck 4 x 32): every layer is
      BN, Relu, 1x1 conv 128, BN, Relu, 3x3 conv 32 on the concatenation of all before it
    transitions between blocks: BN, Relu, 1x1 conv halving the channels, AveragePool 2x2/2
    final BN, Relu, GlobalAveragePool, Flatten, Gemm 1024 -> 1000

Usage: make-densenet121.py [OUT_DIR]   (default: build/bench/densenet121 in the repository)
"""
from fb_bench_model import Builder, write

SEED = 1210
GROWTH = 32


def bn_relu(b, scope, x, c):
    return b.node("Relu", f"{scope}.relu", [b.batch_norm(f"{scope}.norm", x, c)])


def build():
    b = Builder(SEED)
    x = b.conv_bn_relu("features.conv0", "input", 3, 64, 7, stride=2, pad=3)
    x = b.max_pool("/features/pool0", x, 3, 2, pad=1)
    c = 64
    for block, layers in enumerate([6, 12, 24, 16], 1):
        features = [x]
        for i in range(layers):
            scope = f"features.denseblock{block}.denselayer{i + 1}"
            cat = features[0] if len(features) == 1 else b.concat(f"{scope}.cat", features)
            y = bn_relu(b, f"{scope}.1", cat, c + i * GROWTH)
            y = b.conv(f"{scope}.conv1", y, c + i * GROWTH, 4 * GROWTH, 1)
            y = bn_relu(b, f"{scope}.2", y, 4 * GROWTH)
            y = b.conv(f"{scope}.conv2", y, 4 * GROWTH, GROWTH, 3)
            features.append(y)
        x = b.concat(f"features.denseblock{block}", features)
        c += layers * GROWTH
        if block < 4:
            scope = f"features.transition{block}"
            x = bn_relu(b, scope, x, c)
            x = b.conv(f"{scope}.conv", x, c, c // 2, 1)
            x = b.avg_pool(f"{scope}.pool", x, 2, 2)
            c //= 2
    x = bn_relu(b, "features.norm5", x, c)
    out = b.classifier(x, c)
    return b.model("densenet121", "input", [1, 3, 224, 224], out, [1, 1000],
                   "DenseNet-121 (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "densenet121", SEED)
