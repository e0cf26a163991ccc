#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a DB-style (differentiable binarization) text detector, random seeded weights,
1x3x640x640 input, a 1x1x640x640 probability map.

    backbone: a light ResNet (3x3/2 stem 32, MaxPool, basic blocks of 64, 128, 256, 512
              channels, two per stage) giving maps at 1/4, 1/8, 1/16 and 1/32
    FPN neck: 1x1 laterals to 256, top-down nearest Resize x2 and Add, 3x3 smoothing convs
              to 64, each Resized up to 1/4 (x8, x4, x2) and concatenated (256 channels)
    head:     3x3 conv 64 + BN + Relu, ConvTranspose 2x2/2 64 -> 64 + BN + Relu,
              ConvTranspose 2x2/2 64 -> 1, Sigmoid

Usage: make-db-detector.py [OUT_DIR]   (default: build/bench/db_detector in the repository)
"""
from onnx import helper

from fb_bench_model import Builder, write

SEED = 6400


def basic_block(b, scope, x, c_in, c_out, stride):
    y = b.conv_bn_relu(f"{scope}.1", x, c_in, c_out, 3, stride=stride)
    y = b.conv_bn_relu(f"{scope}.2", y, c_out, c_out, 3, relu=False)
    if stride != 1 or c_in != c_out:
        x = b.conv_bn_relu(f"{scope}.downsample", x, c_in, c_out, 1, stride=stride, relu=False)
    return b.node("Relu", f"{scope}.relu", [b.node("Add", scope, [y, x])])


def build():
    b = Builder(SEED)
    x = b.conv_bn_relu("backbone.stem", "image", 3, 32, 3, stride=2)
    x = b.max_pool("/backbone/pool", x, 3, 2, pad=1)
    c, maps = 32, []
    for stage, width in enumerate([64, 128, 256, 512]):
        for i in range(2):
            x = basic_block(b, f"backbone.stage{stage}.{i}", x, c, width, 2 if i == 0 and stage > 0 else 1)
            c = width
        maps.append((x, c))
    lat = [b.conv(f"neck.in{k}", m, cm, 256, 1) for k, (m, cm) in enumerate(maps)]
    top = lat[3]
    merged = [top]
    for k in (2, 1, 0):
        top = b.node("Add", f"neck.up{k}", [lat[k], b.resize(f"neck.up{k}.resize", top, 2)])
        merged.insert(0, top)
    outs = []
    for k, m in enumerate(merged):
        p = b.conv(f"neck.p{k}", m, 256, 64, 3)
        outs.append(p if k == 0 else b.resize(f"neck.p{k}.resize", p, 2 ** k))
    x = b.concat("neck.fuse", outs)
    x = b.conv_bn_relu("head.conv1", x, 256, 64, 3)
    x = b.conv_transpose("head.conv2", x, 64, 64, 2, 2)
    x = b.node("Relu", "head.relu2", [b.batch_norm("head.bn2", x, 64)])
    x = b.conv_transpose("head.conv3", x, 64, 1, 2, 2)
    b.nodes.append(helper.make_node("Sigmoid", [x], ["maps"], name="/head/Sigmoid"))
    return b.model("db_detector", "image", [1, 3, 640, 640], "maps", [1, 1, 640, 640],
                   "DB-style text detector (light ResNet, FPN, ConvTranspose head), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "db_detector", SEED)
