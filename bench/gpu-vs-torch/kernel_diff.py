#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Two profiles of one model (fusebench profile -o), kernel by kernel: which kernels got faster
or slower between two builds or two settings (say FUSEBENCH_GPU_CONV=cudnn against the
default). Kernels are matched by the first model node they compute and their kind. Prints the
kernels whose median moved most, with the bytes each moved per microsecond (GB/s), then the
kernels only one side has and the totals.

Usage: kernel_diff.py A.profile.json B.profile.json [--top N] [--labels A,B]
"""
import argparse
import json


def kernels(path):
    p = json.load(open(path))
    by_node = {}
    for k in p["kernels"]:
        # A layout transpose carries the node it serves: the kernel's kind tells them apart.
        kind = k["name"].split("_", 1)[-1]
        key = (k["nodes"][0] + " " if k.get("nodes") else "") + kind
        by_node[key] = k
    return p, by_node


def gbps(k):
    moved = (k.get("bytes_read") or 0) + (k.get("bytes_written") or 0)
    return moved / (k["median_us"] * 1e3) if k["median_us"] > 0 else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--labels", default="A,B")
    args = ap.parse_args()
    la, lb = args.labels.split(",")
    pa, ka = kernels(args.a)
    pb, kb = kernels(args.b)
    both = [n for n in ka if n in kb]
    both.sort(key=lambda n: -abs(ka[n]["median_us"] - kb[n]["median_us"]))
    print(f"{'first node':44} {la + ' us':>9} {'GB/s':>7} {lb + ' us':>9} {'GB/s':>7} {'B/A':>6}  kernels")
    for n in both[:args.top]:
        a, b = ka[n], kb[n]
        ratio = b["median_us"] / a["median_us"] if a["median_us"] > 0 else float("nan")
        print(f"{n[:44]:44} {a['median_us']:9.1f} {gbps(a):7.0f} {b['median_us']:9.1f} {gbps(b):7.0f} "
              f"{ratio:6.2f}  {a['name']} | {b['name']}")
    for side, mine, other in ((la, ka, kb), (lb, kb, ka)):
        alone = [n for n in mine if n not in other]
        if alone:
            total = sum(mine[n]["median_us"] for n in alone)
            print(f"only in {side}: {len(alone)} kernels, {total:.1f} us: "
                  + ", ".join(mine[n]["name"] for n in alone[:8]) + (" ..." if len(alone) > 8 else ""))
    for side, p, k in ((la, pa, ka), (lb, pb, kb)):
        total = sum(x["median_us"] for x in k.values())
        print(f"{side}: wall median {p['wall_ms']['median']:.3f} ms, {len(k)} kernels, {total / 1e3:.3f} ms of kernels")


if __name__ == "__main__":
    main()
