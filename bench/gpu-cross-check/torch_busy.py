#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""PyTorch's own profiler on PyTorch eager: the GPU's busy share of an inference, the way
fusebench's profile counts it (the union of kernel intervals over the inference's wall).

    torch_busy.py CASE_ROOT [MODEL...]    (models of ../gpu-vs-torch/torch_models.py)

Each inference runs inside a record_function range that ends after a device synchronize; its
wall is that range's, its kernels the ones that started in it. Medians of 20 inferences after
10 of warm-up, batch 1, PyTorch's default precision. Prints one line a model:
"torch eager NAME: wall W ms, busy B ms (S %), K kernels an inference".
"""
import json
import os
import statistics
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu-vs-torch"))
import torch_models  # noqa: E402


def union_us(spans):
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(spans):
        if cur_e is not None and s <= cur_e:
            cur_e = max(cur_e, e)
            continue
        if cur_e is not None:
            total += cur_e - cur_s
        cur_s, cur_e = s, e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def measure(name, n=20):
    model, x = torch_models.make(name)
    model, x = model.cuda(), x.cuda()
    with torch.no_grad():
        for _ in range(10):
            model(x)
        torch.cuda.synchronize()
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            for i in range(n):
                with torch.profiler.record_function(f"fb_inference_{i}"):
                    model(x)
                    torch.cuda.synchronize()
    path = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.export_chrome_trace(path)
    events = json.load(open(path))["traceEvents"]
    windows = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                     if e.get("ph") == "X" and e.get("name", "").startswith("fb_inference_")
                     and e.get("cat") == "user_annotation")
    kernels = [(e["ts"], e["ts"] + e["dur"]) for e in events
               if e.get("ph") == "X" and e.get("cat") == "kernel"]
    walls, busies, counts = [], [], []
    for lo, hi in windows:
        inside = [(max(s, lo), min(e, hi)) for s, e in kernels if lo <= s < hi]
        walls.append(hi - lo)
        busies.append(union_us(inside))
        counts.append(len(inside))
    wall, busy = statistics.median(walls), statistics.median(busies)
    print(f"torch eager {name}: wall {wall / 1e3:.3f} ms, busy {busy / 1e3:.3f} ms "
          f"({100 * busy / wall:.1f} %), {statistics.median(counts):.0f} kernels an inference",
          flush=True)


def main():
    names = sys.argv[2:] or ["resnet50", "bert"]
    for name in names:
        measure(name)


if __name__ == "__main__":
    main()
