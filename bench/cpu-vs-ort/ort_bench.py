# SPDX-License-Identifier: GPL-3.0-or-later
"""ONNX Runtime's side of the comparison through its Python module, for machines that have it
and no npm (a GPU host): the same modes and output as ort-bench.js.

  python3 ort_bench.py MODEL.onnx DATA_DIR N            prints {"median_ms": ...}
  python3 ort_bench.py MODEL.onnx DATA_DIR shapes       prints NAME=AxB, one a line
  python3 ort_bench.py MODEL.onnx DATA_DIR outputs OUT  writes OUT/output_K.pb

FB_ORT_THREADS sets the intra-op threads (default 2); one inter-op thread, every graph
optimization, one warm-up run before the timed ones."""
import glob
import json
import os
import re
import sys
import time

import onnx
import onnxruntime as ort
from onnx import numpy_helper


def read_inputs(data_dir):
    files = sorted(glob.glob(os.path.join(data_dir, "input_*.pb")),
                   key=lambda f: int(re.search(r"input_(\d+)\.pb$", f).group(1)))
    tensors = []
    for f in files:
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        tensors.append(numpy_helper.to_array(t))
    return tensors


def main():
    model, data_dir, what = sys.argv[1:4]
    inputs = read_inputs(data_dir)
    options = ort.SessionOptions()
    options.intra_op_num_threads = int(os.environ.get("FB_ORT_THREADS", "2"))
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    if what == "shapes":
        for name, x in zip(names, inputs):
            print(f"{name}={'x'.join(str(d) for d in x.shape)}")
        return
    feeds = dict(zip(names, inputs))
    first = session.run(None, feeds)
    if what == "outputs":
        out_dir = sys.argv[4]
        for k, (o, value) in enumerate(zip(session.get_outputs(), first)):
            path = os.path.join(out_dir, f"output_{k}.pb")
            with open(path + ".tmp", "wb") as fh:
                fh.write(numpy_helper.from_array(value, o.name).SerializeToString())
            os.replace(path + ".tmp", path)
        return
    times = []
    for _ in range(int(what)):
        t0 = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    m = len(times)
    median = times[(m - 1) // 2] if m % 2 else (times[m // 2 - 1] + times[m // 2]) / 2
    print(json.dumps({"median_ms": median}))


if __name__ == "__main__":
    main()
