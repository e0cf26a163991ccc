#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a ViT-S/16 (DeiT-small's shape), random seeded weights, 1x3x224x224 input, 1x1000
logits, laid out the way timm's vision transformer exports at opset 17 with batch 1: the patch
embedding as a 16x16/16 convolution, flattened (Reshape) and transposed to tokens; the class
token (its expand folded to a constant) concatenated in front and the position embedding added;
each block's attention as one qkv Linear (MatMul + Add), a Reshape and Transpose to
[3, 1, heads, 197, 64], qkv.unbind(0) as Split on axis 0 and three Squeezes, q scaled by a Mul,
the scores as MatMul with k transposed, Softmax, MatMul with v, a Transpose and Reshape back,
the projection Linear; the MLP's exact GELU written out with Erf; x[:, 0] as a Gather.

    patch embedding: 16x16/16 conv 3 -> 384 (bias), Reshape to 384 x 196, Transpose to 196 x 384
    tokens: Concat of the class token in front (197 x 384), Add of the position embedding
    12 blocks: LayerNorm, qkv Linear 384 -> 1152, 6 heads of 64, q scaled by 1/8,
            Softmax, Linear 384 -> 384, residual Add; LayerNorm, Linear 384 -> 1536, GELU (erf),
            Linear 1536 -> 384, residual Add (LayerNorm epsilon 1e-6 throughout)
    head:   LayerNorm, the class token (Gather index 0 on axis 1), Gemm 384 -> 1000

Usage: make-vit-small.py [OUT_DIR]   (default: build/bench/vit_small in the repository)
"""
import numpy as np
from onnx import helper

from fb_bench_model import Builder, write

SEED = 1616
IMAGE, PATCH, DIM, DEPTH, HEADS, MLP = 224, 16, 384, 12, 6, 1536
TOKENS = (IMAGE // PATCH) ** 2 + 1
HEAD_DIM = DIM // HEADS
# What the Linears that end a residual branch (attn.proj, mlp.fc2) scale their weights by.
# Trained branches each add a little to the stream (later ViTs' layer scale starts them near
# zero). With Builder.linear's variance-keeping 1.0 each of the 24 adds about as much as a
# normed token holds and the stream's spread grows from 1.4 to 3.2 over the 12 blocks; at 0.5
# to 1.9, the blocks still moving the tokens enough that the check sees their arithmetic.
BRANCH_GAIN = 0.5


def const(b, scope, array, dtype):
    return b.weight(scope, np.asarray(array, dtype=dtype), dtype)


def unbind(b, scope, x, n):
    """x.unbind(0) as torch exports it from opset 13 on: a Split into ones on axis 0, then a
    Squeeze of that axis from every part."""
    name = f"{b.scope(scope)}/Split"
    parts = [f"{name}_output_{i}" for i in range(n)]
    b.nodes.append(helper.make_node("Split", [x, const(b, f"{scope}.split", [1] * n, np.int64)],
                                    parts, name=name, axis=0))
    axes = const(b, f"{scope}.axes", [0], np.int64)
    return [b.node("Squeeze", f"{scope}.squeeze", [p, axes]) for p in parts]


def attention(b, scope, x):
    qkv = b.linear(f"{scope}.qkv", x, DIM, 3 * DIM)
    split_heads = const(b, f"{scope}.qs", [1, TOKENS, 3, HEADS, HEAD_DIM], np.int64)
    qkv = b.node("Reshape", f"{scope}.qkv_r", [qkv, split_heads])
    qkv = b.node("Transpose", f"{scope}.qkv_t", [qkv], perm=[2, 0, 3, 1, 4])
    q, k, v = unbind(b, f"{scope}.unbind", qkv, 3)
    q = b.node("Mul", f"{scope}.scale", [q, const(b, f"{scope}.s", HEAD_DIM ** -0.5, np.float32)])
    kt = b.node("Transpose", f"{scope}.kt", [k], perm=[0, 1, 3, 2])
    a = b.node("MatMul", f"{scope}.scores", [q, kt])
    a = b.node("Softmax", f"{scope}.softmax", [a], axis=-1)
    y = b.node("MatMul", f"{scope}.context", [a, v])
    y = b.node("Transpose", f"{scope}.ctx_t", [y], perm=[0, 2, 1, 3])
    y = b.node("Reshape", f"{scope}.ctx_r", [y, const(b, f"{scope}.cs", [1, TOKENS, DIM], np.int64)])
    return b.linear(f"{scope}.proj", y, DIM, DIM, gain=BRANCH_GAIN)


def block(b, scope, x):
    y = attention(b, f"{scope}.attn", b.layer_norm(f"{scope}.norm1", x, DIM, epsilon=1e-6))
    x = b.node("Add", f"{scope}.res1", [x, y])
    y = b.linear(f"{scope}.mlp.fc1", b.layer_norm(f"{scope}.norm2", x, DIM, epsilon=1e-6), DIM, MLP)
    y = b.linear(f"{scope}.mlp.fc2", b.gelu(f"{scope}.mlp.act", y), MLP, DIM, gain=BRANCH_GAIN)
    return b.node("Add", f"{scope}.res2", [x, y])


def build():
    b = Builder(SEED)
    x = b.conv("patch_embed.proj", "input", 3, DIM, PATCH, stride=PATCH, pad=0, bias=True)
    # x.flatten(2): the exporter's shape arithmetic folds to a constant at batch 1.
    x = b.node("Reshape", "patch_embed.flatten", [x, const(b, "patch_embed.fs", [1, DIM, TOKENS - 1], np.int64)])
    x = b.node("Transpose", "patch_embed.transpose", [x], perm=[0, 2, 1])
    # DeiT starts both at a truncated normal(0, 0.02).
    cls = b.weight("cls_token", b.rng.normal(0.0, 0.02, size=(1, 1, DIM)))
    x = b.concat("cat", [cls, x])
    x = b.node("Add", "pos_embed", [x, b.weight("pos_embed", b.rng.normal(0.0, 0.02, size=(1, TOKENS, DIM)))])
    for i in range(DEPTH):
        x = block(b, f"blocks.{i}", x)
    x = b.layer_norm("norm", x, DIM, epsilon=1e-6)
    # x[:, 0]: a Gather by a scalar index drops the token axis.
    x = b.node("Gather", "cls_pool", [x, const(b, "cls_pool.index", 0, np.int64)], axis=1)
    out = b.fc(x, DIM, scope="head", name="head/Gemm")
    return b.model("vit_small", "input", [1, 3, IMAGE, IMAGE], out, [1, 1000],
                   "ViT-S/16 (timm's DeiT-small layout), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "vit_small", SEED)
