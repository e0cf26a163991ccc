#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a text-direction classifier in the style of PP-OCR's (a MobileNetV3-small at width
0.35), random seeded weights, 1x3x48x192 input, 1x2 probabilities: a small model of many
small kernels, the kind whose time goes to starting threads rather than to arithmetic.

    stem:   3x3/2 conv to 16, HardSwish
    blocks: inverted residuals (1x1 expand, kxk depthwise, squeeze-excitation where marked:
            GlobalAveragePool, 1x1 to a quarter, Relu, 1x1 back, HardSigmoid, Mul; 1x1
            project, a residual Add where the shape allows), MobileNetV3-small's eleven
    head:   1x1 conv, HardSwish, GlobalAveragePool, Flatten, Gemm to 2, Softmax

Usage: make-ocr-classifier.py [OUT_DIR]   (default: build/bench/ocr_classifier in the repository)
"""
from onnx import helper

from fb_bench_model import Builder, write

SEED = 4819
WIDTH = 0.35
# kernel, expansion, out channels, squeeze-excitation, HardSwish (else Relu), stride
BLOCKS = [
    (3, 16, 16, True, False, 2), (3, 72, 24, False, False, 2), (3, 88, 24, False, False, 1),
    (5, 96, 40, True, True, 2), (5, 240, 40, True, True, 1), (5, 240, 40, True, True, 1),
    (5, 120, 48, True, True, 1), (5, 144, 48, True, True, 1), (5, 288, 96, True, True, 2),
    (5, 576, 96, True, True, 1), (5, 576, 96, True, True, 1),
]


def scaled(c):
    """Channels at WIDTH, rounded to a multiple of 8 as MobileNetV3 rounds them."""
    v = max(8, int(c * WIDTH + 4) // 8 * 8)
    return v + 8 if v < 0.9 * c * WIDTH else v


def act(b, scope, x, hard_swish):
    return b.node("HardSwish" if hard_swish else "Relu", scope, [x])


def squeeze_excite(b, scope, x, c):
    s = b.node("GlobalAveragePool", f"{scope}.pool", [x])
    squeezed = max(8, c // 4)
    s = b.node("Relu", f"{scope}.relu", [b.conv(f"{scope}.fc1", s, c, squeezed, 1, bias=True)])
    s = b.conv(f"{scope}.fc2", s, squeezed, c, 1, bias=True)
    s = b.node("HardSigmoid", f"{scope}.gate", [s], alpha=1.0 / 6, beta=0.5)
    return b.node("Mul", scope, [x, s])


def block(b, scope, x, c_in, k, exp, c_out, se, hs, stride):
    y = x
    if exp != c_in:
        y = b.batch_norm(f"{scope}.expand.bn", b.conv(f"{scope}.expand", y, c_in, exp, 1), exp)
        y = act(b, f"{scope}.expand.act", y, hs)
    y = b.conv(f"{scope}.dw", y, exp, exp, k, stride=stride, group=exp)
    y = b.batch_norm(f"{scope}.dw.bn", y, exp)
    y = act(b, f"{scope}.dw.act", y, hs)
    if se:
        y = squeeze_excite(b, f"{scope}.se", y, exp)
    y = b.batch_norm(f"{scope}.project.bn", b.conv(f"{scope}.project", y, exp, c_out, 1), c_out)
    return b.node("Add", scope, [y, x]) if stride == 1 and c_in == c_out else y


def build():
    b = Builder(SEED)
    c = scaled(16)
    x = act(b, "stem.act", b.batch_norm("stem.bn", b.conv("stem", "x", 3, c, 3, stride=2), c), True)
    for i, (k, exp, out, se, hs, stride) in enumerate(BLOCKS):
        x = block(b, f"blocks.{i}", x, c, k, scaled(exp), scaled(out), se, hs, stride)
        c = scaled(out)
    last = scaled(576)
    x = b.batch_norm("head.bn", b.conv("head.conv", x, c, last, 1), last)
    x = act(b, "head.act", x, True)
    x = b.classifier(x, last, classes=2)
    b.nodes.append(helper.make_node("Softmax", [x], ["probs"], name="/Softmax", axis=1))
    return b.model("ocr_classifier", "x", [1, 3, 48, 192], "probs", [1, 2],
                   "PP-OCR-style direction classifier (MobileNetV3-small x0.35), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "ocr_classifier", SEED)
