#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a chain of linear layers that times one product shape inside a model: LAYERS times
x[ROWS, K] @ W[K, N] + b (W a constant, as a linear layer's weights), each followed by a product
with V[N, K], a second model input shared by every layer. Only the constant-weight products can
be split for TF32 (fb-lower-product-split.c), so the difference between two builds' or
settings' times is LAYERS times the difference on the ROWS x K x N product, split pass and
all, run where a model runs it: in one CUDA graph, between other kernels.

Usage: make-linear-chain.py OUT_DIR ROWS K N [LAYERS]   (LAYERS default 12)

OUT_DIR gets model.onnx and test_data_set_0/input_0.pb, input_1.pb (seeded random inputs;
V scaled so that the chain's values stay near 1).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
from fb_bench_model import Builder  # noqa: E402

SEED = 4409


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    out = sys.argv[1]
    rows, k, n = (int(a) for a in sys.argv[2:5])
    layers = int(sys.argv[5]) if len(sys.argv) == 6 else 12
    b = Builder(SEED)
    x = "x"
    for i in range(layers):
        w = b.weight(f"layer{i}.weight", b.rng.normal(0.0, np.sqrt(1.0 / k), size=(k, n)))
        bias = b.weight(f"layer{i}.bias", b.rng.normal(0.0, 0.05, size=n))
        y = b.node("MatMul", f"/layer{i}", [x, w])
        y = b.node("Add", f"/layer{i}", [y, bias])
        x = b.node("MatMul", f"/back{i}", [y, "v"])
    graph = helper.make_graph(
        b.nodes, "linear_chain",
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows, k]),
                helper.make_tensor_value_info("v", TensorProto.FLOAT, [n, k])],
        outputs=[helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, rows, k])],
        initializer=b.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="fusebench-bench", producer_version="0.1.0")
    model.ir_version = 8
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(SEED)
    inputs = {"x": rng.standard_normal((1, rows, k)),
              "v": rng.standard_normal((n, k)) / np.sqrt(n)}
    files = {os.path.join(out, "model.onnx"): model.SerializeToString()}
    for i, (name, value) in enumerate(inputs.items()):
        tensor = numpy_helper.from_array(value.astype(np.float32), name)
        files[os.path.join(data, f"input_{i}.pb")] = tensor.SerializeToString()
    for path, body in files.items():
        with open(path + ".tmp", "wb") as f:
            f.write(body)
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
