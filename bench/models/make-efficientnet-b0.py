#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write an EfficientNet-B0 shaped like torchvision's efficientnet_b0, random seeded weights,
1x3x224x224 input, 1000 logits.

    stem 3x3/2 conv 32, BN, SiLU
    16 MBConv blocks in 7 stages (expansion, kernel, stride, channels, blocks):
      (1, 3, 1, 16, 1) (6, 3, 2, 24, 2) (6, 5, 2, 40, 2) (6, 3, 2, 80, 3)
      (6, 5, 1, 112, 3) (6, 5, 2, 192, 4) (6, 3, 1, 320, 1)
      each: [1x1 expand conv, BN, SiLU], depthwise kxk conv, BN, SiLU,
            squeeze-excitation (GlobalAveragePool, 1x1 conv to a quarter of the block's input
            channels + bias, SiLU, 1x1 conv back + bias, Sigmoid, Mul),
            1x1 project conv, BN, and the residual Add where stride 1 keeps the channels
    head 1x1 conv 1280, BN, SiLU, GlobalAveragePool, Flatten, Gemm 1280 -> 1000

SiLU is Sigmoid then Mul, as PyTorch exports it at opset 17. The squeeze-excitation 1x1
convolutions run on a 1x1 map: matrix-vector products, 48 -> 1152 channels at the largest.

Usage: make-efficientnet-b0.py [OUT_DIR]   (default: build/bench/efficientnet-b0 in the repository)
"""
from fb_bench_model import Builder, conv_bn_silu as conv_bn, squeeze_excitation, write

SEED = 1200
STAGES = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
          (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]


def mbconv(b, scope, x, c_in, c_out, expand, k, stride):
    c = c_in * expand
    y = x
    i = 0
    if expand != 1:
        y = conv_bn(b, f"{scope}.block.{i}", y, c_in, c, 1)
        i += 1
    y = conv_bn(b, f"{scope}.block.{i}", y, c, c, k, stride=stride, group=c)
    y = squeeze_excitation(b, f"{scope}.block.{i + 1}", y, c, max(1, c_in // 4))
    y = conv_bn(b, f"{scope}.block.{i + 2}", y, c, c_out, 1, act=False)
    if stride == 1 and c_in == c_out:
        y = b.node("Add", scope, [y, x])
    return y


def build():
    b = Builder(SEED)
    x = conv_bn(b, "features.0", "input", 3, 32, 3, stride=2)
    c = 32
    for stage, (expand, k, stride, c_out, blocks) in enumerate(STAGES, 1):
        for i in range(blocks):
            x = mbconv(b, f"features.{stage}.{i}", x, c, c_out, expand, k, stride if i == 0 else 1)
            c = c_out
    x = conv_bn(b, "features.8", x, c, 1280, 1)
    out = b.classifier(x, 1280)
    return b.model("efficientnet-b0", "input", [1, 3, 224, 224], out, [1, 1000],
                   "EfficientNet-B0 (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "efficientnet-b0", SEED)
