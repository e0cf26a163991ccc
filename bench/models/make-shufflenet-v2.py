#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a ShuffleNetV2 x1.0 shaped like torchvision's shufflenet_v2_x1_0, random seeded
weights, 1x3x224x224 input, 1000 logits.

    conv1 3x3/2 24, BN, Relu, MaxPool 3x3/2 pad 1
    stages 2..4: 4, 8, 4 units of 116, 232, 464 channels. A unit slices its input's channels
      in two halves (two Slices, as torch exports chunk), keeps the first and runs the second
      through 1x1 (BN, Relu), depthwise 3x3 (BN), 1x1 (BN, Relu); a stage's first unit (stride 2) runs the whole input through
      both a depthwise 3x3/2 (BN), 1x1 (BN, Relu) branch and the three-layer one. The two
      halves are concatenated and their channels shuffled: Reshape [1, 2, C/2, H, W],
      Transpose (0, 2, 1, 3, 4), Reshape [1, C, H, W], as torch exports channel_shuffle.
    conv5 1x1 1024, BN, Relu; ReduceMean over H and W; Gemm 1024 -> 1000

Many small kernels, movement between them (split, concatenation, shuffle) and depthwise
layers: a model whose time goes to launches and copies more than to arithmetic.

Usage: make-shufflenet-v2.py [OUT_DIR]   (default: build/bench/shufflenet_v2 in the repository)
"""

from fb_bench_model import Builder, write

SEED = 2018


def depthwise_bn(b, scope, x, c, stride):
    y = b.conv(f"{scope}.conv", x, c, c, 3, stride=stride, group=c)
    return b.batch_norm(f"{scope}.bn", y, c)


def branch(b, scope, x, c_in, c_out, stride):
    """1x1 (BN, Relu), depthwise 3x3 (BN), 1x1 (BN, Relu)."""
    y = b.conv_bn_relu(f"{scope}.0", x, c_in, c_out, 1)
    y = depthwise_bn(b, f"{scope}.3", y, c_out, stride)
    return b.conv_bn_relu(f"{scope}.5", y, c_out, c_out, 1)


def shuffle(b, scope, x, c, hw):
    shape = b.weight(f"{scope}.split_shape", [1, 2, c // 2, hw, hw], dtype="int64")
    y = b.node("Reshape", scope, [x, shape])
    y = b.node("Transpose", scope, [y], perm=[0, 2, 1, 3, 4])
    back = b.weight(f"{scope}.shape", [1, c, hw, hw], dtype="int64")
    return b.node("Reshape", scope, [y, back])


def unit(b, scope, x, c_in, c_out, hw, stride):
    half = c_out // 2
    if stride == 1:
        # torch exports x.chunk(2, dim=1) as two Slices of the channels.
        axes = b.weight(f"{scope}.axes", [1], dtype="int64")
        left = b.node("Slice", scope, [x, b.weight(f"{scope}.start0", [0], dtype="int64"),
                                       b.weight(f"{scope}.end0", [half], dtype="int64"), axes])
        right = b.node("Slice", scope, [x, b.weight(f"{scope}.start1", [half], dtype="int64"),
                                        b.weight(f"{scope}.end1", [c_out], dtype="int64"), axes])
        right = branch(b, f"{scope}.branch2", right, half, half, 1)
    else:
        left = depthwise_bn(b, f"{scope}.branch1.0", x, c_in, stride)
        left = b.conv_bn_relu(f"{scope}.branch1.2", left, c_in, half, 1)
        right = branch(b, f"{scope}.branch2", x, c_in, half, stride)
    y = b.concat(scope, [left, right])
    return shuffle(b, scope, y, c_out, hw)


def build():
    b = Builder(SEED)
    x = b.conv_bn_relu("conv1.0", "input", 3, 24, 3, stride=2)
    x = b.max_pool("/maxpool", x, 3, 2, pad=1)
    c, hw = 24, 56
    for stage, (units, width) in enumerate([(4, 116), (8, 232), (4, 464)], 2):
        for i in range(units):
            stride = 2 if i == 0 else 1
            hw = hw // stride
            x = unit(b, f"stage{stage}.{i}", x, c, width, hw, stride)
            c = width
    x = b.conv_bn_relu("conv5.0", x, c, 1024, 1)
    x = b.node("ReduceMean", "/mean", [x], axes=[2, 3], keepdims=0)
    out = b.fc(x, 1024)
    return b.model("shufflenet_v2", "input", [1, 3, 224, 224], out, [1, 1000],
                   "ShuffleNetV2 x1.0 (torchvision layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "shufflenet_v2", SEED)
