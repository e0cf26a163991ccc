#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""DRAM bytes per inference over whole replays: ours against Nsight Compute's.

    ncu_totals.py PROFILE.json NCU.csv REPLAYS [--label NAME]

PROFILE.json: `fusebench profile --target cuda --counters`, whose "dram_per_inference" comes
from one counter range over replays launched back to back and whose kernels carry the DRAM
bytes of their own ranges. NCU.csv: `ncu --replay-mode app-range --csv --page raw
--print-units base --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum`
of `fusebench run MODEL --iterations REPLAYS`: one range, the timed replays between
cuProfilerStart and cuProfilerStop. Prints per inference: ncu's bytes, ours over whole replays
and the sum of our kernels' ranges, each with its ratio to ncu's.
"""
import argparse
import csv
import json
import sys

METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum")


def ncu_range(path):
    """The range's (bytes read, bytes written), from ncu's one result row."""
    with open(path, newline="") as f:
        rows = list(csv.reader(line for line in f if line.startswith('"')))
    if len(rows) < 2:
        sys.exit(f"{path}: no CSV rows (did ncu profile the range?)")
    head = rows[0]
    try:
        cols = [head.index(m) for m in METRICS]
    except ValueError as e:
        sys.exit(f"{path}: {e}; columns: {head[:14]}")
    for r in rows[1:]:
        try:
            return tuple(float(r[c].replace(",", "")) for c in cols)
        except (ValueError, IndexError):
            continue  # the units row
    sys.exit(f"{path}: no numeric row")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("ncu_csv")
    ap.add_argument("replays", type=int)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    p = json.load(open(a.profile))
    rd, wr = (v / a.replays for v in ncu_range(a.ncu_csv))
    measured = [k for k in p["kernels"] if k.get("bytes_source") == "measured"]
    kr = sum(k["bytes_read"] for k in measured)
    kw = sum(k["bytes_written"] for k in measured)
    whole = p.get("dram_per_inference")

    def ratio(ours, theirs):
        return f"{ours / theirs:.3f}" if theirs > 0 else "n/a"

    print(f"{a.label}: DRAM per inference, MB (ratio to ncu's)")
    print(f"  {'':40} {'read':>8} {'':>7} {'written':>8} {'':>7}")
    print(f"  {'ncu, application range over ' + str(a.replays) + ' replays':40} {rd / 1e6:8.2f} {'':>7} {wr / 1e6:8.2f}")
    if whole:
        r, w = whole["read_bytes"], whole["written_bytes"]
        print(f"  {'ours, one range over ' + str(whole['replays']) + ' replays':40} {r / 1e6:8.2f} {ratio(r, rd):>7} "
              f"{w / 1e6:8.2f} {ratio(w, wr):>7}")
    else:
        print(f"  ours, whole replays: not in the profile ({p.get('counters_note') or 'no counters'})")
    print(f"  {'ours, the sum of ' + str(len(measured)) + ' kernels' + chr(39) + ' ranges':40} {kr / 1e6:8.2f} "
          f"{ratio(kr, rd):>7} {kw / 1e6:8.2f} {ratio(kw, wr):>7}")


if __name__ == "__main__":
    main()
