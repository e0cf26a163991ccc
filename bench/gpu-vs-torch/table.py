#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# table.py RESULTS_DIR MODEL...: the table of run-device.sh's torch and compile steps, one row a
# model: PyTorch's eager, torch.compile and reduce-overhead medians (torch-MODEL.json), fusebench's
# median at PyTorch's precision defaults (fb-MODEL.json, `run --json`), and the ratio of
# fusebench to the best PyTorch mode. A missing figure prints as "-" and leaves no ratio.
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


def cell(x):
    return "-" if x is None else f"{x:.3f}"


def main():
    results, names = sys.argv[1], sys.argv[2:]
    print("| model | eager | torch.compile | reduce-overhead | fusebench | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in names:
        torch = load(os.path.join(results, f"torch-{name}.json")) or {}
        modes = [torch.get(m, {}).get("median_ms") for m in ("eager", "compile", "reduce-overhead")]
        fb = fb_median(load(os.path.join(results, f"fb-{name}.json")))
        known = [m for m in modes if m is not None]
        ratio = f"{fb / min(known):.2f}" if fb is not None and known else "-"
        print(f"| {name} | " + " | ".join(cell(m) for m in modes) + f" | {cell(fb)} | {ratio} |")


if __name__ == "__main__":
    main()
