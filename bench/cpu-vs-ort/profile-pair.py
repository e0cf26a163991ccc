# SPDX-License-Identifier: GPL-3.0-or-later
"""Fusebench's kernels beside ONNX Runtime's nodes, from one model's two profiles:

  python3 profile-pair.py MODEL.onnx FUSEBENCH.json ORT.txt [N]

FUSEBENCH.json is `fusebench profile --target cpu -o`'s file, ORT.txt ort_bench.py's (or
ort-profile.js's) "profile" output. A fusebench kernel names the ONNX nodes it computes; an ONNX
Runtime node is named after the output it writes (its fused nodes' last, "_nchwc" added in its
blocked layout), or after the ONNX node it grew from ("NODE/QuickGeluFusion/"). Each ONNX
Runtime node goes to the kernel that computes that node or output; each pair's times are
summed. Its layout reorders pair with nothing. Prints the N pairs (default 25) where fusebench loses
most, then the totals of the paired and unpaired time on both sides."""
import json
import re
import sys

import onnx


def main():
    model, fb_path, ort_path = sys.argv[1:4]
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    g = onnx.load(model, load_external_data=False).graph
    outputs = {n.name: list(n.output) for n in g.node}
    kernels = json.load(open(fb_path))["kernels"]
    owner = {}
    for k in kernels:
        for node in k.get("nodes", []):
            owner[node] = k["name"]
            for out in outputs.get(node, []):
                owner[out] = k["name"]
    pairs = {k["name"]: [k["median_us"] / 1e3, 0.0, k.get("label") or k["name"]] for k in kernels}
    unpaired_ort = 0.0
    for line in open(ort_path):
        m = re.match(r"\s*([\d.]+)\s+[\d.]+%\s+(\S+)\s+(\S+)", line)
        if not m:
            continue
        ms, name = float(m.group(1)), re.sub(r"_nchwc$|/[A-Za-z]+Fusion/$", "", m.group(3))
        if name in owner:
            pairs[owner[name]][1] += ms
        else:
            unpaired_ort += ms
    paired = [(fb - ort, name, fb, ort) for name, (fb, ort, _) in pairs.items() if ort > 0]
    paired.sort(reverse=True)
    print(f"{'fb - ort':>9} {'fusebench':>9} {'ort':>9}  kernel (ms)")
    for d, name, fb, ort in paired[:top]:
        print(f"{d:+9.3f} {fb:9.3f} {ort:9.3f}  {name}")
    fb_paired = sum(p[2] for p in paired)
    ort_paired = sum(p[3] for p in paired)
    fb_alone = sum(fb for fb, ort, _ in pairs.values() if ort == 0)
    print(f"paired: fusebench {fb_paired:.3f} ms, ONNX Runtime {ort_paired:.3f} ms; "
          f"unpaired: fusebench {fb_alone:.3f} ms, ONNX Runtime {unpaired_ort:.3f} ms")


if __name__ == "__main__":
    main()
