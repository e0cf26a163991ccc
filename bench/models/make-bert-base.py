#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a BERT-base encoder (bert-base-uncased's shape), random seeded weights, laid out the
way torch exports a BertModel at opset 17 with batch 1 and 128 tokens: input_ids and an
attention_mask (int64) in, the last hidden state [1, 128, 768] out.

    embeddings: Gather of the word embeddings by input_ids, Add of the token-type embedding of
                type 0 and of the position embeddings (both folded to constants at a fixed
                length), LayerNorm
    mask:       the attention mask Unsqueezed to [1, 1, 1, 128], Cast to float, (1 - mask)
                times the float minimum: added to every head's scores
    12 layers (post-norm): query, key and value Linears 768 -> 768, each Reshaped to
                [1, 128, 12, 64] and Transposed to heads (the key straight to [1, 12, 64, 128]),
                scores MatMul, Div by 8, Add of the mask, Softmax, MatMul with the values,
                Transpose and Reshape back, the output Linear, residual Add, LayerNorm;
                Linear 768 -> 3072, exact GELU (Erf), Linear 3072 -> 768, residual Add,
                LayerNorm (epsilon 1e-12 throughout)

The pooler is left out, as a sentence-embedding export leaves it. The token ids are seeded
uniform over the vocabulary and the mask all ones, as for one full sequence.

Usage: make-bert-base.py [OUT_DIR]   (default: build/bench/bert_base in the repository)
"""
import numpy as np
from onnx import TensorProto

from fb_bench_model import Builder, write

SEED = 768
VOCAB, TOKENS, DIM, DEPTH, HEADS, MLP = 30522, 128, 768, 12, 12, 3072
HEAD_DIM = DIM // HEADS
EPS = 1e-12


def const(b, scope, array, dtype):
    return b.weight(scope, np.asarray(array, dtype=dtype), dtype)


def heads(b, scope, x, perm):
    x = b.node("Reshape", f"{scope}.view", [x, const(b, f"{scope}.shape", [1, TOKENS, HEADS, HEAD_DIM], np.int64)])
    return b.node("Transpose", f"{scope}.permute", [x], perm=perm)


def attention(b, scope, x, mask):
    q = heads(b, f"{scope}.self.query", b.linear(f"{scope}.self.query", x, DIM, DIM), [0, 2, 1, 3])
    k = heads(b, f"{scope}.self.key", b.linear(f"{scope}.self.key", x, DIM, DIM), [0, 2, 3, 1])
    v = heads(b, f"{scope}.self.value", b.linear(f"{scope}.self.value", x, DIM, DIM), [0, 2, 1, 3])
    a = b.node("MatMul", f"{scope}.self.scores", [q, k])
    a = b.node("Div", f"{scope}.self.scale", [a, const(b, f"{scope}.self.sqrt_d", np.sqrt(HEAD_DIM), np.float32)])
    a = b.node("Add", f"{scope}.self.mask", [a, mask])
    a = b.node("Softmax", f"{scope}.self.softmax", [a], axis=-1)
    y = b.node("MatMul", f"{scope}.self.context", [a, v])
    y = b.node("Transpose", f"{scope}.self.merge", [y], perm=[0, 2, 1, 3])
    y = b.node("Reshape", f"{scope}.self.merge_view", [y, const(b, f"{scope}.self.ms", [1, TOKENS, DIM], np.int64)])
    y = b.linear(f"{scope}.output.dense", y, DIM, DIM)
    return b.layer_norm(f"{scope}.output.LayerNorm", b.node("Add", f"{scope}.output.res", [y, x]), DIM, EPS)


def layer(b, scope, x, mask):
    x = attention(b, f"{scope}.attention", x, mask)
    y = b.gelu(f"{scope}.intermediate.act", b.linear(f"{scope}.intermediate.dense", x, DIM, MLP))
    y = b.linear(f"{scope}.output.dense", y, MLP, DIM)
    return b.layer_norm(f"{scope}.output.LayerNorm", b.node("Add", f"{scope}.output.res", [y, x]), DIM, EPS)


def extended_mask(b, mask):
    """BertModel's get_extended_attention_mask: [1, 128] -> [1, 1, 1, 128] additive."""
    m = b.node("Unsqueeze", "mask.unsqueeze", [mask, const(b, "mask.axes", [1, 2], np.int64)])
    m = b.node("Cast", "mask.cast", [m], to=TensorProto.FLOAT)
    m = b.node("Sub", "mask.invert", [const(b, "mask.one", 1.0, np.float32), m])
    return b.node("Mul", "mask.scale", [m, const(b, "mask.min", np.finfo(np.float32).min, np.float32)])


def build():
    b = Builder(SEED)
    words = b.weight("embeddings.word_embeddings.weight", b.rng.normal(0.0, 0.02, size=(VOCAB, DIM)))
    x = b.node("Gather", "embeddings.word_embeddings", [words, "input_ids"], axis=0)
    kind = b.weight("embeddings.token_type", b.rng.normal(0.0, 0.02, size=(1, 1, DIM)))
    x = b.node("Add", "embeddings.add_type", [x, kind])
    where = b.weight("embeddings.position", b.rng.normal(0.0, 0.02, size=(1, TOKENS, DIM)))
    x = b.node("Add", "embeddings.add_position", [x, where])
    x = b.layer_norm("embeddings.LayerNorm", x, DIM, EPS)
    mask = extended_mask(b, "attention_mask")
    for i in range(DEPTH):
        x = layer(b, f"encoder.layer.{i}", x, mask)
    model = b.model("bert_base", "input_ids", [1, TOKENS], x, [1, TOKENS, DIM],
                    "BERT-base encoder (bert-base-uncased's shape), random weights, for benchmarks.",
                    input_type=TensorProto.INT64,
                    more_inputs=[("attention_mask", TensorProto.INT64, [1, TOKENS])])
    ids = np.random.default_rng(SEED).integers(0, VOCAB, size=(1, TOKENS)).astype(np.int64)
    return model, [ids, np.ones((1, TOKENS), dtype=np.int64)]


if __name__ == "__main__":
    model, inputs = build()
    write(model, "bert_base", SEED, inputs)
