#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# table.py RESULTS_DIR MODEL...: the table of run-device.sh's torch and compile steps, one row a
# model: PyTorch's eager, torch.compile and reduce-overhead medians (torch-MODEL.json), fusebench's
# median at PyTorch's precision defaults (fb-MODEL.json, `run --json`), the ratio of fusebench
# to the best PyTorch mode, and how far fusebench's output is from PyTorch's float32 one
# (compare-MODEL.txt: relative L2 and allclose(1e-3)) beside how far PyTorch's own output with
# TF32 in every contraction is (compare-MODEL-torch-tf32.txt), so that the table carries its
# check. A missing figure prints as "-" and leaves no ratio.
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fb_median(doc):
    """The median of `run --json`, wherever in the document it sits."""
    if isinstance(doc, dict):
        if "median_ms" in doc:
            return doc["median_ms"]
        for v in doc.values():
            m = fb_median(v)
            if m is not None:
                return m
    return None


def distance(path):
    """'5.0e-04 PASS' from compare.py's line, or '-'."""
    try:
        with open(path) as f:
            words = f.read().replace(",", "").split()
    except OSError:
        return "-"
    rel = words[words.index("L2") + 1] if "L2" in words else "-"
    verdict = words[-1] if words and words[-1] in ("PASS", "FAIL") else ""
    return f"{rel} {verdict}".strip()


def cell(x):
    return "-" if x is None else f"{x:.3f}"


def main():
    results, names = sys.argv[1], sys.argv[2:]
    print("| model | eager | torch.compile | reduce-overhead | fusebench | ratio "
          "| fusebench vs PyTorch fp32 | PyTorch all-TF32 vs fp32 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        torch = load(os.path.join(results, f"torch-{name}.json")) or {}
        modes = [torch.get(m, {}).get("median_ms") for m in ("eager", "compile", "reduce-overhead")]
        fb = fb_median(load(os.path.join(results, f"fb-{name}.json")))
        known = [m for m in modes if m is not None]
        ratio = f"{fb / min(known):.2f}" if fb is not None and known else "-"
        ours = distance(os.path.join(results, f"compare-{name}.txt"))
        theirs = distance(os.path.join(results, f"compare-{name}-torch-tf32.txt"))
        print(f"| {name} | " + " | ".join(cell(m) for m in modes) +
              f" | {cell(fb)} | {ratio} | {ours} | {theirs} |")


if __name__ == "__main__":
    main()
