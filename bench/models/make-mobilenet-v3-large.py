#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a MobileNetV3-Large shaped like torchvision's mobilenet_v3_large, random seeded
weights, 1x3x224x224 input, 1000 logits, laid out the way it exports at opset 17: bias-free
convolutions each followed by BatchNormalization, Hardswish as the HardSwish op (opset 14),
Hardsigmoid as HardSigmoid (alpha 1/6, beta 0.5), the squeeze-excitation's adaptive average
pool as GlobalAveragePool, the classifier's Linears as Gemm and its Dropout gone (eval).

    stem 3x3/2 conv 16, BN, HardSwish
    15 inverted residual blocks (kernel, expanded, out, squeeze-excitation, activation, stride):
      3  16  16 - RE 1     3  64  24 - RE 2     3  72  24 - RE 1
      5  72  40 SE RE 2    5 120  40 SE RE 1    5 120  40 SE RE 1
      3 240  80 - HS 2     3 200  80 - HS 1     3 184  80 - HS 1     3 184  80 - HS 1
      3 480 112 SE HS 1    3 672 112 SE HS 1
      5 672 160 SE HS 2    5 960 160 SE HS 1    5 960 160 SE HS 1
      each: [1x1 expand conv, BN, act] (not where expanded == input channels),
            depthwise kxk conv, BN, act,
            [squeeze-excitation: GlobalAveragePool, 1x1 conv to make_divisible(expanded / 4, 8)
             + bias, Relu, 1x1 conv back + bias, HardSigmoid, Mul],
            1x1 project conv, BN, and the residual Add where stride 1 keeps the channels
    head 1x1 conv 960, BN, HardSwish, GlobalAveragePool, Flatten,
         Gemm 960 -> 1280, HardSwish, Gemm 1280 -> 1000

RE is Relu, HS HardSwish. Unlike EfficientNet's SiLU (Sigmoid, Mul), both activations and
the gate are single elementwise ops, for a pass pipeline to fuse as convolution post-ops.

Usage: make-mobilenet-v3-large.py [OUT_DIR]   (default: build/bench/mobilenet_v3_large in the repository)
"""
from fb_bench_model import Builder, write

SEED = 2019
# torchvision's inverted_residual_setting for mobilenet_v3_large (width 1.0, dilation 1).
BLOCKS = [(3, 16, 16, False, "RE", 1), (3, 64, 24, False, "RE", 2), (3, 72, 24, False, "RE", 1),
          (5, 72, 40, True, "RE", 2), (5, 120, 40, True, "RE", 1), (5, 120, 40, True, "RE", 1),
          (3, 240, 80, False, "HS", 2), (3, 200, 80, False, "HS", 1), (3, 184, 80, False, "HS", 1),
          (3, 184, 80, False, "HS", 1), (3, 480, 112, True, "HS", 1), (3, 672, 112, True, "HS", 1),
          (5, 672, 160, True, "HS", 2), (5, 960, 160, True, "HS", 1), (5, 960, 160, True, "HS", 1)]


def make_divisible(v, divisor=8):
    """torchvision's _make_divisible: the nearest multiple of divisor, never 10% under v."""
    n = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return n + divisor if n < 0.9 * v else n


def activation(b, scope, x, kind):
    return b.node("Relu" if kind == "RE" else "HardSwish", scope, [x])


def conv_bn_act(b, scope, x, c_in, c_out, k, stride=1, group=1, act="HS", gamma=1.0):
    """torchvision's Conv2dNormActivation: .0 the conv, .1 the BN, .2 the activation."""
    y = b.conv(f"{scope}.0", x, c_in, c_out, k, stride=stride, group=group)
    y = b.batch_norm(f"{scope}.1", y, c_out, gamma)
    return activation(b, f"{scope}.2", y, act) if act else y


def squeeze_excitation(b, scope, x, c):
    s = b.node("GlobalAveragePool", f"{scope}.avgpool", [x])
    s = b.conv(f"{scope}.fc1", s, c, make_divisible(c // 4), 1, bias=True)
    s = b.node("Relu", f"{scope}.activation", [s])
    s = b.conv(f"{scope}.fc2", s, make_divisible(c // 4), c, 1, bias=True)
    # hardsigmoid(x) = clip(x / 6 + 1 / 2, 0, 1), the HardSigmoid torch writes for it.
    s = b.node("HardSigmoid", f"{scope}.scale_activation", [s], alpha=1.0 / 6.0, beta=0.5)
    return b.node("Mul", scope, [s, x])


def inverted_residual(b, scope, x, c_in, k, c_exp, c_out, use_se, act, stride):
    residual = stride == 1 and c_in == c_out
    y = x
    i = 0
    if c_exp != c_in:
        y = conv_bn_act(b, f"{scope}.block.{i}", y, c_in, c_exp, 1, act=act)
        i += 1
    y = conv_bn_act(b, f"{scope}.block.{i}", y, c_exp, c_exp, k, stride=stride, group=c_exp, act=act)
    i += 1
    if use_se:
        y = squeeze_excitation(b, f"{scope}.block.{i}", y, c_exp)
        i += 1
    # A trained residual branch ends in a small BN scale. At 1.0 every residual Add grows the
    # activations (rms about 40 at the head, logits about 25); at 0.3 they stay near 1 to the end.
    y = conv_bn_act(b, f"{scope}.block.{i}", y, c_exp, c_out, 1, act=None,
                    gamma=0.3 if residual else 1.0)
    return b.node("Add", scope, [y, x]) if residual else y


def gemm(b, scope, x, c_in, c_out):
    """A Linear on a 2-D input as torch exports it: Gemm with the weights transposed."""
    w = b.weight(f"{scope}.weight", b.rng.normal(0.0, (1.0 / c_in) ** 0.5, size=(c_out, c_in)))
    bias = b.weight(f"{scope}.bias", b.rng.normal(0.0, 0.05, size=c_out))
    return b.node("Gemm", scope, [x, w, bias], alpha=1.0, beta=1.0, transB=1)


def build():
    b = Builder(SEED)
    x = conv_bn_act(b, "features.0", "input", 3, 16, 3, stride=2)
    c = 16
    for n, (k, c_exp, c_out, use_se, act, stride) in enumerate(BLOCKS, 1):
        x = inverted_residual(b, f"features.{n}", x, c, k, c_exp, c_out, use_se, act, stride)
        c = c_out
    x = conv_bn_act(b, f"features.{len(BLOCKS) + 1}", x, c, 960, 1)
    x = b.node("GlobalAveragePool", "avgpool", [x])
    x = b.node("Flatten", "flatten", [x], axis=1)
    x = gemm(b, "classifier.0", x, 960, 1280)
    x = b.node("HardSwish", "classifier.1", [x])
    # classifier.2 is the Dropout, which an eval-mode export leaves out.
    out = b.fc(x, 1280, scope="classifier.3", name="classifier.3/Gemm")
    return b.model("mobilenet_v3_large", "input", [1, 3, 224, 224], out, [1, 1000],
                   "MobileNetV3-Large (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "mobilenet_v3_large", SEED)
