#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a wav2vec 2.0 base (the speech encoder's shape, as its common PyTorch port exports it
at opset 17), random seeded weights, one second of 16 kHz audio in (1x16000), 1x49x768 frames
out.

    feature encoder: the samples as one channel, seven 1-D convolutions of 512 channels without
        bias (kernels 10, 3, 3, 3, 3, 2, 2; strides 5, 2, 2, 2, 2, 2, 2), the first followed by
        a group norm of one channel a group (InstanceNormalization, then its scale and shift
        as Mul and Add), each by the exact GELU (Erf): 16000 samples -> 49 frames
    feature projection: Transpose to frames, LayerNorm, Linear 512 -> 768
    positional convolution: 1-D, kernel 128, pads 64, 16 groups of 48 channels, bias, the last
        frame cut off (Slice), GELU, added to the frames; LayerNorm
    12 post-norm encoder layers: q, k, v Linears 768 -> 768 (q scaled by 1/8), 12 heads of 64,
        Softmax, output Linear, residual Add, LayerNorm; Linear 768 -> 3072, GELU, Linear 3072
        -> 768, residual Add, LayerNorm

Its 1-D convolutions of 512 channels over 1599 to 49 frames, and the grouped one of kernel 128,
are kinds no other model here has.

Usage: make-wav2vec2-base.py [OUT_DIR]   (default: build/bench/wav2vec2_base in the repository)
"""
import numpy as np

from fb_bench_model import Builder, write

SEED = 2020
SAMPLES, DIM, HEADS, FFN, DEPTH, CONV_DIM = 16000, 768, 12, 3072, 12, 512
FEATURE_CONVS = [(10, 5), (3, 2), (3, 2), (3, 2), (3, 2), (2, 2), (2, 2)]
FRAMES = 49
HEAD_DIM = DIM // HEADS
POS_KERNEL, POS_GROUPS = 128, 16
# What the Linears that end a residual branch scale their weights by: trained branches add a
# little to the stream, and post-norm layers of random weights otherwise forget their input.
BRANCH_GAIN = 0.5


def const(b, scope, array, dtype):
    return b.weight(scope, np.asarray(array, dtype=dtype), dtype)


def conv1d(b, scope, x, c_in, c_out, k, stride=1, pad=0, group=1, bias=False):
    fan_in = (c_in // group) * k
    w = b.weight(f"{scope}.weight", b.rng.normal(0.0, np.sqrt(2.0 / fan_in), size=(c_out, c_in // group, k)))
    inputs = [x, w]
    if bias:
        inputs.append(b.weight(f"{scope}.bias", b.rng.normal(0.0, 0.05, size=c_out)))
    return b.node("Conv", scope, inputs, dilations=[1], group=group, kernel_shape=[k],
                  pads=[pad, pad], strides=[stride])


def feature_encoder(b, x):
    x = b.node("Unsqueeze", "feature_extractor.unsqueeze", [x, const(b, "fe.axes", [1], np.int64)])
    c = 1
    for i, (k, stride) in enumerate(FEATURE_CONVS):
        scope = f"feature_extractor.conv_layers.{i}"
        x = conv1d(b, f"{scope}.conv", x, c, CONV_DIM, k, stride)
        if i == 0:
            ones = const(b, f"{scope}.in_scale", np.ones(CONV_DIM), np.float32)
            zeros = const(b, f"{scope}.in_shift", np.zeros(CONV_DIM), np.float32)
            x = b.node("InstanceNormalization", f"{scope}.layer_norm", [x, ones, zeros], epsilon=1e-5)
            gamma = b.weight(f"{scope}.layer_norm.weight", b.rng.normal(1.0, 0.1, size=(CONV_DIM, 1)))
            beta = b.weight(f"{scope}.layer_norm.bias", b.rng.normal(0.0, 0.05, size=(CONV_DIM, 1)))
            x = b.node("Add", f"{scope}.layer_norm.shift", [b.node("Mul", f"{scope}.layer_norm.scale", [x, gamma]), beta])
        x = b.gelu(f"{scope}.activation", x)
        c = CONV_DIM
    return x


def attention(b, scope, x):
    heads = const(b, f"{scope}.hs", [1, FRAMES, HEADS, HEAD_DIM], np.int64)

    def split(name, y):
        y = b.node("Reshape", f"{scope}.{name}_r", [y, heads])
        return b.node("Transpose", f"{scope}.{name}_t", [y], perm=[0, 2, 1, 3])

    q = b.linear(f"{scope}.q_proj", x, DIM, DIM)
    q = split("q", b.node("Mul", f"{scope}.scale", [q, const(b, f"{scope}.s", HEAD_DIM ** -0.5, np.float32)]))
    k = split("k", b.linear(f"{scope}.k_proj", x, DIM, DIM))
    v = split("v", b.linear(f"{scope}.v_proj", x, DIM, DIM))
    kt = b.node("Transpose", f"{scope}.kt", [k], perm=[0, 1, 3, 2])
    a = b.node("Softmax", f"{scope}.softmax", [b.node("MatMul", f"{scope}.scores", [q, kt])], axis=-1)
    y = b.node("Transpose", f"{scope}.ctx_t", [b.node("MatMul", f"{scope}.context", [a, v])], perm=[0, 2, 1, 3])
    y = b.node("Reshape", f"{scope}.ctx_r", [y, const(b, f"{scope}.cs", [1, FRAMES, DIM], np.int64)])
    return b.linear(f"{scope}.out_proj", y, DIM, DIM, gain=BRANCH_GAIN)


def encoder_layer(b, scope, x):
    x = b.node("Add", f"{scope}.res1", [x, attention(b, f"{scope}.attention", x)])
    x = b.layer_norm(f"{scope}.layer_norm", x, DIM)
    y = b.gelu(f"{scope}.feed_forward.act", b.linear(f"{scope}.feed_forward.intermediate_dense", x, DIM, FFN))
    y = b.linear(f"{scope}.feed_forward.output_dense", y, FFN, DIM, gain=BRANCH_GAIN)
    x = b.node("Add", f"{scope}.res2", [x, y])
    return b.layer_norm(f"{scope}.final_layer_norm", x, DIM)


def build():
    b = Builder(SEED)
    x = feature_encoder(b, "input_values")
    x = b.node("Transpose", "feature_projection.transpose", [x], perm=[0, 2, 1])
    x = b.layer_norm("feature_projection.layer_norm", x, CONV_DIM)
    x = b.linear("feature_projection.projection", x, CONV_DIM, DIM)
    # The positional convolution runs on channels, its even kernel gives one frame too many.
    p = b.node("Transpose", "pos_conv_embed.transpose", [x], perm=[0, 2, 1])
    p = conv1d(b, "pos_conv_embed.conv", p, DIM, DIM, POS_KERNEL, pad=POS_KERNEL // 2, group=POS_GROUPS, bias=True)
    p = b.node("Slice", "pos_conv_embed.padding", [p, const(b, "pos.starts", [0], np.int64),
                                                   const(b, "pos.ends", [-1], np.int64),
                                                   const(b, "pos.axes", [2], np.int64)])
    p = b.gelu("pos_conv_embed.activation", p)
    p = b.node("Transpose", "pos_conv_embed.transpose_back", [p], perm=[0, 2, 1])
    x = b.layer_norm("encoder.layer_norm", b.node("Add", "encoder.pos_add", [x, p]), DIM)
    for i in range(DEPTH):
        x = encoder_layer(b, f"encoder.layers.{i}", x)
    return b.model("wav2vec2_base", "input_values", [1, SAMPLES], x, [1, FRAMES, DIM],
                   "wav2vec 2.0 base (speech encoder), random weights, for benchmarks.")


if __name__ == "__main__":
    write(build(), "wav2vec2_base", SEED)
