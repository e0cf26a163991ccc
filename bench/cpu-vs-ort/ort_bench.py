# SPDX-License-Identifier: GPL-3.0-or-later
"""ONNX Runtime's side of the comparison through its Python module, for machines that have it
and no npm (a GPU host): the same modes and output as ort-bench.js.

  python3 ort_bench.py MODEL.onnx DATA_DIR N            prints {"median_ms": ...}
  python3 ort_bench.py MODEL.onnx DATA_DIR shapes       prints NAME=AxB, one a line
  python3 ort_bench.py MODEL.onnx DATA_DIR outputs OUT  writes OUT/output_K.pb
  python3 ort_bench.py MODEL.onnx DATA_DIR profile N    per-node profile, as ort-profile.js:
                                                        each node's median kernel time over N
                                                        runs after the warm-up, largest first

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


def median(values):
    values = sorted(values)
    m = len(values)
    return values[(m - 1) // 2] if m % 2 else (values[m // 2 - 1] + values[m // 2]) / 2


def print_profile(session, feeds, runs):
    """Node events are "<node name>_kernel_time", one per node per run; the first run is the
    warm-up."""
    for _ in range(runs):
        session.run(None, feeds)
    path = session.end_profiling()
    try:
        with open(path) as fh:
            events = json.load(fh)
    finally:
        os.remove(path)
    per = {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        name = e["name"][:-len("_kernel_time")]
        op = e.get("args", {}).get("op_name", "?")
        per.setdefault(name, (op, []))[1].append(e["dur"])
    rows = [(median(us[1:]) / 1e3, op, name) for name, (op, us) in per.items() if len(us) > 1]
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows)
    print(f"{'ms':>9} {'share':>6}  op / node")
    for ms, op, name in rows:
        print(f"{ms:9.4f} {100 * ms / total:5.1f}%  {op}  {name}")
    print(f"nodes: {len(rows)}, sum of medians {total:.3f} ms over {runs} runs")


def main():
    model, data_dir, what = sys.argv[1:4]
    inputs = read_inputs(data_dir)
    options = ort.SessionOptions()
    if what == "profile":
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                   f"ort-profile-{os.getpid()}")
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
    if what == "profile":
        print_profile(session, feeds, int(sys.argv[4]))
        return
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
    print(json.dumps({"median_ms": median(times)}))


if __name__ == "__main__":
    main()
