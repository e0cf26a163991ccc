#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a Swin-T (shifted-window attention), random seeded weights, 1x3x224x224 input, 1x1000
logits, laid out the way torchvision's swin_t exports at opset 17: window attention as
reshapes, transposes and batched products, the shift as Slice + Concat (torch.roll), the
shifted windows' mask and the relative position bias as constants added to the scores.

    patch embedding: 4x4/4 conv to 96, NCHW -> NHWC transpose, LayerNorm
    four stages of 2 / 2 / 6 / 2 blocks, 3 / 6 / 12 / 24 heads, 7x7 windows; every second
            block shifted by 3 (none at 7x7, where one window covers the map):
            LayerNorm, roll, window partition, qkv Linear, scaled scores + bias (+ mask),
            Softmax, Linear, window reverse, roll back, residual; LayerNorm, Linear, GELU
            (erf), Linear, residual
    patch merging between stages: the four 2x2 phases (strided Slices), Concat, LayerNorm,
            Linear 4C -> 2C
    head:   LayerNorm, NHWC -> NCHW, GlobalAveragePool, Flatten, Gemm to 1000

Usage: make-swin-tiny.py [OUT_DIR] [--small]   (default: build/bench/swin_tiny in the repository)

--small writes the same structure at 56x56 with 32 channels, two stages of two blocks (2 and 4
heads) and the final normed 7x7 map as its output (no head): the suite's case
tests/cases/swin-window (a shifted stage at 14x14, a merge, an unshifted one at 7x7), whose
outputs come from ONNX Runtime through ort-case.
"""
import sys

import numpy as np
from onnx import helper

from fb_bench_model import Builder, write

SEED = 6607
WINDOW = 7
# input size, channels of the first stage, blocks and heads per stage, classes
TINY = (224, 96, (2, 2, 6, 2), (3, 6, 12, 24), 1000)
SMALL = (56, 32, (2, 2), (2, 4), 0)


def const(b, scope, array, dtype=np.float32):
    return b.weight(scope, array, dtype)


def shape(b, scope, dims):
    return const(b, scope, np.array(dims, dtype=np.int64), np.int64)


def roll(b, scope, x, shift, size):
    """torch.roll by shift along H (axis 1) then W (axis 2) of [1, H, W, C]: two Slices and a
    Concat per axis, as the exporter writes it."""
    for axis in (1, 2):
        s = shift % size
        tail = b.node("Slice", f"{scope}.{axis}.tail", [x, shape(b, f"{scope}.{axis}.ts", [size - s]),
                      shape(b, f"{scope}.{axis}.te", [size]), shape(b, f"{scope}.{axis}.ax", [axis])])
        head = b.node("Slice", f"{scope}.{axis}.head", [x, shape(b, f"{scope}.{axis}.hs", [0]),
                      shape(b, f"{scope}.{axis}.he", [size - s]), shape(b, f"{scope}.{axis}.ax2", [axis])])
        x = b.node("Concat", f"{scope}.{axis}", [tail, head], axis=axis)
    return x


def relative_bias(b, heads):
    """The [heads, 49, 49] bias torchvision gathers from its table by relative position."""
    table = b.rng.normal(0.0, 0.02, size=((2 * WINDOW - 1) ** 2, heads))
    coords = np.stack(np.meshgrid(np.arange(WINDOW), np.arange(WINDOW), indexing="ij")).reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0) + (WINDOW - 1)
    index = rel[:, :, 0] * (2 * WINDOW - 1) + rel[:, :, 1]
    return table[index.reshape(-1)].reshape(WINDOW * WINDOW, WINDOW * WINDOW, heads).transpose(2, 0, 1)


def shift_mask(size, shift):
    """[1, windows, 1, 49, 49]: -100 between positions the roll brought from different regions."""
    region = np.zeros((size, size), dtype=np.int64)
    bounds = ((0, size - WINDOW), (size - WINDOW, size - shift), (size - shift, size))
    n = 0
    for h0, h1 in bounds:
        for w0, w1 in bounds:
            region[h0:h1, w0:w1] = n
            n += 1
    nw = size // WINDOW
    r = region.reshape(nw, WINDOW, nw, WINDOW).transpose(0, 2, 1, 3).reshape(nw * nw, WINDOW * WINDOW)
    mask = np.where(r[:, :, None] != r[:, None, :], -100.0, 0.0)
    return mask.reshape(1, nw * nw, 1, WINDOW * WINDOW, WINDOW * WINDOW)


def attention(b, scope, x, size, c, heads, shift):
    nw, n, hd = size // WINDOW, WINDOW * WINDOW, c // heads
    if shift:
        x = roll(b, f"{scope}.roll", x, -shift, size)
    x = b.node("Reshape", f"{scope}.part", [x, shape(b, f"{scope}.ps", [1, nw, WINDOW, nw, WINDOW, c])])
    x = b.node("Transpose", f"{scope}.part_t", [x], perm=[0, 1, 3, 2, 4, 5])
    x = b.node("Reshape", f"{scope}.windows", [x, shape(b, f"{scope}.ws", [nw * nw, n, c])])
    qkv = b.linear(f"{scope}.qkv", x, c, 3 * c)
    qkv = b.node("Reshape", f"{scope}.qkv_r", [qkv, shape(b, f"{scope}.qs", [nw * nw, n, 3, heads, hd])])
    qkv = b.node("Transpose", f"{scope}.qkv_t", [qkv], perm=[2, 0, 3, 1, 4])
    q, k, v = (b.node("Gather", f"{scope}.{t}", [qkv, const(b, f"{scope}.{t}i", np.int64(i), np.int64)], axis=0)
               for i, t in enumerate("qkv"))
    q = b.node("Mul", f"{scope}.scale", [q, const(b, f"{scope}.s", np.float32(hd ** -0.5))])
    kt = b.node("Transpose", f"{scope}.kt", [k], perm=[0, 1, 3, 2])
    a = b.node("MatMul", f"{scope}.scores", [q, kt])
    a = b.node("Add", f"{scope}.bias", [a, const(b, f"{scope}.rpb", relative_bias(b, heads))])
    if shift:
        a = b.node("Reshape", f"{scope}.by_window", [a, shape(b, f"{scope}.bws", [1, nw * nw, heads, n, n])])
        a = b.node("Add", f"{scope}.mask", [a, const(b, f"{scope}.m", shift_mask(size, shift))])
        a = b.node("Reshape", f"{scope}.unwindow", [a, shape(b, f"{scope}.uws", [nw * nw, heads, n, n])])
    a = b.node("Softmax", f"{scope}.softmax", [a], axis=-1)
    y = b.node("MatMul", f"{scope}.context", [a, v])
    y = b.node("Transpose", f"{scope}.ctx_t", [y], perm=[0, 2, 1, 3])
    y = b.node("Reshape", f"{scope}.ctx_r", [y, shape(b, f"{scope}.cs", [nw * nw, n, c])])
    y = b.linear(f"{scope}.proj", y, c, c)
    y = b.node("Reshape", f"{scope}.rev", [y, shape(b, f"{scope}.rs", [1, nw, nw, WINDOW, WINDOW, c])])
    y = b.node("Transpose", f"{scope}.rev_t", [y], perm=[0, 1, 3, 2, 4, 5])
    y = b.node("Reshape", f"{scope}.map", [y, shape(b, f"{scope}.ms", [1, size, size, c])])
    if shift:
        y = roll(b, f"{scope}.unroll", y, shift, size)
    return y


def block(b, scope, x, size, c, heads, shift):
    y = attention(b, f"{scope}.attn", b.layer_norm(f"{scope}.norm1", x, c), size, c, heads, shift)
    x = b.node("Add", f"{scope}.res1", [x, y])
    y = b.linear(f"{scope}.mlp.0", b.layer_norm(f"{scope}.norm2", x, c), c, 4 * c)
    y = b.linear(f"{scope}.mlp.3", b.gelu(f"{scope}.mlp.gelu", y), 4 * c, c)
    return b.node("Add", f"{scope}.res2", [x, y])


def merge(b, scope, x, size, c):
    """The 2x2 phases of [1, H, W, C] side by side: [1, H/2, W/2, 4C], normed, to 2C."""
    parts = []
    for i, (h, w) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
        parts.append(b.node("Slice", f"{scope}.phase{i}", [x, shape(b, f"{scope}.s{i}", [h, w]),
                            shape(b, f"{scope}.e{i}", [size, size]), shape(b, f"{scope}.a{i}", [1, 2]),
                            shape(b, f"{scope}.st{i}", [2, 2])]))
    x = b.node("Concat", f"{scope}.cat", parts, axis=-1)
    return b.linear(f"{scope}.reduction", b.layer_norm(f"{scope}.norm", x, 4 * c), 4 * c, 2 * c, bias=False)


def main():
    small = "--small" in sys.argv
    if small:
        sys.argv.remove("--small")
    image, dim, depths, heads_of, classes = SMALL if small else TINY
    name = "swin_window" if small else "swin_tiny"
    b = Builder(SEED)
    x = b.conv("features.0.0", "input", 3, dim, 4, stride=4, pad=0, bias=True)
    x = b.node("Transpose", "features.0.1", [x], perm=[0, 2, 3, 1])
    x = b.layer_norm("features.0.2", x, dim)
    size, c = image // 4, dim
    for stage, (depth, heads) in enumerate(zip(depths, heads_of)):
        for i in range(depth):
            shift = WINDOW // 2 if i % 2 and size > WINDOW else 0
            x = block(b, f"features.{2 * stage + 1}.{i}", x, size, c, heads, shift)
        if stage < len(depths) - 1:
            x = merge(b, f"features.{2 * stage + 2}", x, size, c)
            size, c = size // 2, 2 * c
    x = b.layer_norm("norm", x, c)
    if small:
        # The map itself, not pooled logits: a pool would not see positions swapped.
        out, out_shape = x, [1, size, size, c]
    else:
        x = b.node("Transpose", "permute", [x], perm=[0, 3, 1, 2])
        out, out_shape = b.classifier(x, c, classes), [1, classes]
    model = b.model(name, "input", [1, 3, image, image], out, out_shape, __doc__.split("\n\n")[0])
    write(model, name, SEED)


if __name__ == "__main__":
    main()
