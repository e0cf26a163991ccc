#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write an EfficientNetV2-S shaped like torchvision's efficientnet_v2_s, random seeded
weights, 1x3x384x384 input (its evaluation size), 1000 logits.

    stem 3x3/2 conv 24, BN, SiLU
    three stages of Fused-MBConv blocks (expansion, stride, channels, blocks):
      (1, 1, 24, 2) (4, 2, 48, 4) (4, 2, 64, 4)
      each: 3x3 conv to the expanded channels (with the stride), BN, SiLU, then where the
            expansion is not 1 a 1x1 project conv and BN; the residual Add where stride 1
            keeps the channels
    three stages of MBConv blocks (as EfficientNet-B0's, 3x3 depthwise, squeeze-excitation to
    a quarter of the block's input channels):
      (4, 2, 128, 6) (6, 1, 160, 9) (6, 2, 256, 15)
    head 1x1 conv 1280, BN, SiLU, GlobalAveragePool, Flatten, Gemm 1280 -> 1000

Its early stages are plain 3x3 convolutions of 24 to 256 channels at 192x192 to 48x48 (the
Winograd and brgconv kind), its late ones depthwise and 1x1 ones with a squeeze-excitation.

Usage: make-efficientnet-v2-s.py [OUT_DIR]   (default: build/bench/efficientnet_v2_s in the repository)
"""
from fb_bench_model import Builder, conv_bn_silu as conv_bn, squeeze_excitation, write

SEED = 2021
FUSED = [(1, 1, 24, 2), (4, 2, 48, 4), (4, 2, 64, 4)]
MBCONV = [(4, 2, 128, 6), (6, 1, 160, 9), (6, 2, 256, 15)]
# Residual branches end in a small BatchNormalization scale, as trained ones do: with 1.0 the
# activations of 40 random blocks grow into the tens of thousands and no two float summation
# orders agree on the logits.
RESIDUAL_GAMMA = 0.2


def fused_mbconv(b, scope, x, c_in, c_out, expand, stride):
    c = c_in * expand
    residual = stride == 1 and c_in == c_out
    gamma = RESIDUAL_GAMMA if residual else 1.0
    if expand == 1:
        y = conv_bn(b, f"{scope}.block.0", x, c_in, c_out, 3, stride=stride, gamma=gamma)
    else:
        y = conv_bn(b, f"{scope}.block.0", x, c_in, c, 3, stride=stride)
        y = conv_bn(b, f"{scope}.block.1", y, c, c_out, 1, act=False, gamma=gamma)
    if residual:
        y = b.node("Add", scope, [y, x])
    return y


def mbconv(b, scope, x, c_in, c_out, expand, stride):
    c = c_in * expand
    y = conv_bn(b, f"{scope}.block.0", x, c_in, c, 1)
    y = conv_bn(b, f"{scope}.block.1", y, c, c, 3, stride=stride, group=c)
    y = squeeze_excitation(b, f"{scope}.block.2", y, c, max(1, c_in // 4))
    residual = stride == 1 and c_in == c_out
    y = conv_bn(b, f"{scope}.block.3", y, c, c_out, 1, act=False,
                gamma=RESIDUAL_GAMMA if residual else 1.0)
    if residual:
        y = b.node("Add", scope, [y, x])
    return y


def build():
    b = Builder(SEED)
    x = conv_bn(b, "features.0", "input", 3, 24, 3, stride=2)
    c, stage = 24, 1
    for block, stages in [(fused_mbconv, FUSED), (mbconv, MBCONV)]:
        for expand, stride, c_out, blocks in stages:
            for i in range(blocks):
                x = block(b, f"features.{stage}.{i}", x, c, c_out, expand, stride if i == 0 else 1)
                c = c_out
            stage += 1
    x = conv_bn(b, "features.7", x, c, 1280, 1)
    out = b.classifier(x, 1280)
    return b.model("efficientnet-v2-s", "input", [1, 3, 384, 384], out, [1, 1000],
                   "EfficientNetV2-S (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "efficientnet_v2_s", SEED)
