#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the fuzzers' seed corpus: small models that between them use every attribute type,
subgraphs (If, Loop), Constant forms, value_info, metadata, external-data references and every
tensor encoding, plus tensor files. Run from this folder; the output is committed."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def save(model, name):
    onnx.save(model, f"corpus-import/{name}.onnx")


def tensor(name, shape, dtype=np.float32):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(dtype), name)


# Convolution block with every attribute kind and typed (non-raw) tensor encodings.
w = tensor("w", (4, 3, 3, 3))
b = helper.make_tensor("b", TensorProto.FLOAT, [4], [0.1, 0.2, 0.3, 0.4])
shape = helper.make_tensor("shape", TensorProto.INT64, [2], [1, -1])
nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                     strides=[1, 1], group=1, auto_pad="NOTSET"),
    helper.make_node("LeakyRelu", ["c"], ["r"], name="act", alpha=0.1),
    helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Constant", [], ["k"], name="const_floats", value_floats=[1.0, 2.0]),
    helper.make_node("Constant", [], ["i"], name="const_int", value_int=3),
    helper.make_node("Reshape", ["p", "shape"], ["y"], name="flat"),
]
g = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, None])], [w, b, shape],
                      value_info=[helper.make_tensor_value_info("c", TensorProto.FLOAT, ["N", 4, 8, 8])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="seed")
helper.set_model_props(m, {"author": "seed", "purpose": "fuzzing"})
save(m, "conv-block")

# If with branches that capture an outer value, and a Loop with a carried value and a scan output.
then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                           [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                           [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
body = helper.make_graph(
    [helper.make_node("Add", ["acc", "x"], ["acc_out"]), helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Identity", ["acc_out"], ["scan"])], "body",
    [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2]),
     helper.make_tensor_value_info("scan", TensorProto.FLOAT, [2])])
g = helper.make_graph(
    [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
     helper.make_node("Loop", ["n", "", "y"], ["acc_final", "scans"], body=body)],
    "control", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
                helper.make_tensor_value_info("n", TensorProto.INT64, [])],
    [helper.make_tensor_value_info("acc_final", TensorProto.FLOAT, [2]),
     helper.make_tensor_value_info("scans", TensorProto.FLOAT, [None, 2])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]), "control-flow")

# Attention-like block: MatMul, Softmax, Transpose, Split, Gather on int64, a string attribute.
nodes = [
    helper.make_node("Gather", ["emb", "ids"], ["h"], axis=0),
    helper.make_node("MatMul", ["h", "wq"], ["q"]),
    helper.make_node("Transpose", ["q"], ["qt"], perm=[0, 2, 1]),
    helper.make_node("MatMul", ["q", "qt"], ["s"]),
    helper.make_node("Softmax", ["s"], ["a"], axis=-1),
    helper.make_node("Split", ["a"], ["a0", "a1"], axis=2, split=[3, 3]),
    helper.make_node("Einsum", ["a0", "a1"], ["y"], equation="bij,bkj->bik"),
]
g = helper.make_graph(nodes, "attn", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 6])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 6])],
                      [tensor("emb", (10, 4)), tensor("wq", (4, 4))])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)]), "attention")

# An initializer stored as external data (the fuzz target refuses external data: an error path).
ext = tensor("w", (2, 2))
g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "ext",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])], [ext])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.external_data_helper.convert_model_to_external_data(m, all_tensors_to_one_file=True, location="w.bin",
                                                         size_threshold=0)
save(m, "external-data")

# An old-style model: IR 3, opset 7, initializers listed as inputs, every int32-packed dtype.
ints = [helper.make_tensor(f"t{dt}", dt, [3], [1, 0, 1]) for dt in
        (TensorProto.INT8, TensorProto.UINT8, TensorProto.BOOL, TensorProto.INT16, TensorProto.FLOAT16, TensorProto.INT32)]
g = helper.make_graph([helper.make_node("Cast", ["tb"], ["y"], to=TensorProto.FLOAT)], "old",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])] +
                      [helper.make_tensor_value_info(t.name, t.data_type, [3]) for t in ints],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
                      [t for t in ints] + [helper.make_tensor("tb", TensorProto.BOOL, [3], [1, 0, 1])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 7)])
m.ir_version = 3
save(m, "old-ir3")

# Tensor corpus: the first byte picks the reader (even: .pb, odd: .npy).
import io
for k, a in enumerate([np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, -2], dtype=np.int64),
                       np.array([True, False]), np.zeros((0, 3), dtype=np.float16)]):
    open(f"corpus-tensor/pb-{k}", "wb").write(b"\0" + numpy_helper.from_array(a, f"t{k}").SerializeToString())
    buf = io.BytesIO()
    np.save(buf, a)
    open(f"corpus-tensor/npy-{k}", "wb").write(b"\1" + buf.getvalue())

# A few of ONNX's own node cases, as python3-onnx generates them (control flow with sequences and
# optionals, data-dependent sizes, attribute-heavy operators, an opset-6 model), and the legacy
# forms the importer upgrades.
np.float, np.int, np.bool, np.object = float, int, bool, object   # python3-onnx 1.12 uses them
from onnx.backend.test.case import node as node_cases
NODE_SEEDS = {"test_convtranspose_output_shape", "test_if_seq", "test_loop11",
              "test_range_float_type_positive_delta_expanded", "test_resize_upsample_scales_linear",
              "test_slice_neg_steps", "test_einsum_batch_diagonal",
              "test_nonmaxsuppression_center_point_box_format", "test_gru_seq_length",
              "test_scatter_elements_with_duplicate_indices", "test_optional_get_element_sequence",
              "test_batchnorm_epsilon_training_mode", "test_elu", "test_dropout_default_mask"}
# Beyond those, the smallest single-node case of every operator (about 25 KB for all of them), so
# that a run starts with every operator's attributes and arities in its corpus instead of having to
# mutate its way to an op name. The whole generated suite (make-node-suite.py, a few MB) is the
# corpus for a long run; these are what later short runs start from.
smallest = {}
for case in node_cases.collect_testcases(None):
    if case.name in NODE_SEEDS:
        save(case.model, "node-" + case.name[len("test_"):])
    elif len(case.model.graph.node) == 1:
        size = len(case.model.SerializeToString())
        op = case.model.graph.node[0].op_type
        if op not in smallest or size < smallest[op][0]:
            smallest[op] = (size, case)
for size, case in smallest.values():
    save(case.model, "op-" + case.name[len("test_"):])
for legacy in ("legacy-opset1-cnn", "legacy-opset1-forms", "legacy-opset6-attrs"):
    save(onnx.load(f"../cases/{legacy}/model.onnx"), legacy)
