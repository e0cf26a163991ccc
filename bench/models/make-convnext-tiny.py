#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a ConvNeXt-T, random seeded weights, 1x3x224x224 input, 1x1000 logits, laid out the
way torchvision's convnext_tiny exports at opset 17: each block's 7x7 depthwise convolution
in NCHW, then a transpose to NHWC for its LayerNorm, two Linears (MatMul + Add) around an
exact GELU (Erf), the layer scale (a Mul by one number per channel) and a transpose back
before the residual Add; the stem's and the downsamplings' LayerNorms transposed the same
way around LayerNormalization.

    stem:   4x4/4 conv 3 -> 96 (bias), LayerNorm
    four stages of 3 / 3 / 9 / 3 blocks at 96 / 192 / 384 / 768 channels (56, 28, 14, 7):
            dwconv 7x7 (bias), LayerNorm, Linear C -> 4C, GELU, Linear 4C -> C, scale, Add
    between stages: LayerNorm, 2x2/2 conv C -> 2C (bias)
    head:   GlobalAveragePool, LayerNorm, Flatten, Gemm 768 -> 1000

Usage: make-convnext-tiny.py [OUT_DIR]   (default: build/bench/convnext_tiny in the repository)
"""

from fb_bench_model import Builder, write

SEED = 7107
DEPTHS = (3, 3, 9, 3)
DIMS = (96, 192, 384, 768)


def layer_norm_2d(b, scope, x, c):
    """LayerNorm over the channels of an NCHW map, as torchvision's LayerNorm2d exports."""
    y = b.node("Transpose", f"{scope}.to_nhwc", [x], perm=[0, 2, 3, 1])
    y = b.layer_norm(scope, y, c, epsilon=1e-6)
    return b.node("Transpose", f"{scope}.to_nchw", [y], perm=[0, 3, 1, 2])


def block(b, scope, x, c):
    y = b.conv(f"{scope}.block.0", x, c, c, 7, group=c, bias=True)
    y = b.node("Transpose", f"{scope}.block.1", [y], perm=[0, 2, 3, 1])
    y = b.layer_norm(f"{scope}.block.2", y, c, epsilon=1e-6)
    y = b.linear(f"{scope}.block.3", y, c, 4 * c)
    y = b.gelu(f"{scope}.block.4", y)
    y = b.linear(f"{scope}.block.5", y, 4 * c, c)
    y = b.node("Transpose", f"{scope}.block.6", [y], perm=[0, 3, 1, 2])
    # A trained layer scale is small (it starts at 1e-6); random blocks with a large one
    # would grow the activations past what two summation orders agree on.
    scale = b.weight(f"{scope}.layer_scale", b.rng.uniform(0.05, 0.2, size=(c, 1, 1)))
    y = b.node("Mul", f"{scope}.scale", [y, scale])
    return b.node("Add", f"{scope}.add", [y, x])


def build():
    b = Builder(SEED)
    x = b.conv("features.0.0", "input", 3, DIMS[0], 4, stride=4, pad=0, bias=True)
    x = layer_norm_2d(b, "features.0.1", x, DIMS[0])
    for stage, (depth, c) in enumerate(zip(DEPTHS, DIMS)):
        if stage > 0:
            x = layer_norm_2d(b, f"features.{2 * stage}.0", x, DIMS[stage - 1])
            x = b.conv(f"features.{2 * stage}.1", x, DIMS[stage - 1], c, 2, stride=2, pad=0, bias=True)
        for i in range(depth):
            x = block(b, f"features.{2 * stage + 1}.{i}", x, c)
    x = b.node("GlobalAveragePool", "avgpool", [x])
    x = b.node("Transpose", "classifier.0.to_nhwc", [x], perm=[0, 2, 3, 1])
    x = b.layer_norm("classifier.0", x, DIMS[-1], epsilon=1e-6)
    x = b.node("Flatten", "classifier.1", [x], axis=1)
    out = b.fc(x, DIMS[-1], scope="classifier.2", name="classifier.2/Gemm")
    return b.model("convnext_tiny", "input", [1, 3, 224, 224], out, [1, 1000],
                   "ConvNeXt-T (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "convnext_tiny", SEED)
