#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Our kernel durations and DRAM bytes against Nsight Compute's on the same kernels.

    ncu_compare.py PROFILE.json NCU.csv RUNS [--top N] [--label NAME]

PROFILE.json: `fusebench profile --target cuda --counters` of a model (per plan kernel: the
median device time of one inference over the traced replays, DRAM bytes from CUPTI's range
profiler). NCU.csv: `ncu --profile-from-start off --csv --page raw --print-units base
--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum` of
`fusebench run MODEL --iterations RUNS` (untraced: ncu cannot attach while our CUPTI subscriber
is active), which brackets exactly its RUNS timed replays with cuProfilerStart/Stop. The last
replay's kernels are matched to the plan kernels in plan order, each plan kernel taking as many
as it launched (its "calls"); a plan kernel's figures are the sum over its device kernels.
Prints one row per kernel for the N slowest (default 20) with the ratio ours / ncu, and a
summary line: how many are within 5 %.
"""
import argparse
import csv
import json
import statistics
import sys

METRICS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum")


def number(text):
    text = (text or "").replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def read_ncu(path):
    """The profiled kernels in launch order: (name, ns, bytes read, bytes written)."""
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own log lines are not CSV
    rows = list(csv.reader(lines))
    if not rows:
        sys.exit(f"{path}: no CSV rows (did ncu profile anything?)")
    head = rows[0]
    try:
        col = {m: head.index(m) for m in METRICS}
        name_col = head.index("Kernel Name")
        id_col = head.index("ID")
    except ValueError as e:
        sys.exit(f"{path}: {e}; columns: {head[:14]}")
    out = []
    for r in rows[1:]:
        if len(r) <= max(col.values()) or number(r[id_col]) is None:
            continue  # the units row
        vals = [number(r[col[m]]) for m in METRICS]
        if None in vals:
            continue
        out.append((r[name_col], *vals))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("ncu")
    ap.add_argument("runs", type=int)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--label", default="")
    a = ap.parse_args()

    prof = json.load(open(a.profile))
    kernels = prof["kernels"]
    ncu = read_ncu(a.ncu)
    if len(ncu) % a.runs:
        print(f"note: {len(ncu)} profiled kernels is not a multiple of {a.runs} runs")
    per_run = len(ncu) // a.runs
    last = ncu[len(ncu) - per_run:]
    launched = sum(k["calls"] for k in kernels)
    print(f"{a.label}: ncu profiled {len(ncu)} kernels in {a.runs} replays ({per_run} a replay); "
          f"the profile's plan kernels launched {launched} device kernels and copies a replay")
    if launched != per_run:
        print("note: the counts differ (copies and memsets are not ncu kernels); rows whose "
              "ratio is far off may be misaligned")

    # Plan order, each plan kernel taking its calls' worth of the replay's kernels.
    j = 0
    matched = []
    for k in kernels:
        take = last[j:j + k["calls"]]
        j += len(take)
        if not take:
            continue
        matched.append((k, take))

    matched.sort(key=lambda m: -m[0]["median_us"])
    rows = []
    print(f"{'kernel':<34} {'n':>2} {'ours us':>9} {'ncu us':>9} {'ratio':>6} "
          f"{'ours rd MB':>10} {'ncu rd MB':>10} {'ratio':>6} {'ours wr MB':>10} "
          f"{'ncu wr MB':>10} {'ratio':>6}  ncu kernel")
    for k, take in matched[:a.top]:
        ns = sum(t[1] for t in take)
        rd = sum(t[2] for t in take)
        wr = sum(t[3] for t in take)
        ours_us = k["median_us"]
        measured = k.get("bytes_source") == "measured"
        r_t = ours_us / (ns / 1e3) if ns > 0 else float("nan")
        r_r = k["bytes_read"] / rd if rd > 0 and measured else float("nan")
        r_w = k["bytes_written"] / wr if wr > 0 and measured else float("nan")
        rows.append((r_t, r_r, r_w))
        print(f"{k['name'][:34]:<34} {len(take):>2} {ours_us:>9.2f} {ns / 1e3:>9.2f} {r_t:>6.3f} "
              f"{k['bytes_read'] / 1e6:>10.3f} {rd / 1e6:>10.3f} {r_r:>6.3f} "
              f"{k['bytes_written'] / 1e6:>10.3f} {wr / 1e6:>10.3f} {r_w:>6.3f}  {take[0][0][:48]}")

    def within(i):
        vals = [r[i] for r in rows if r[i] == r[i]]
        ok = sum(1 for v in vals if abs(v - 1) <= 0.05)
        med = statistics.median(vals) if vals else float("nan")
        return f"{ok}/{len(vals)} within 5 % (median ratio {med:.3f})"

    print(f"{a.label} summary: time {within(0)}; DRAM read {within(1)}; DRAM write {within(2)}")


if __name__ == "__main__":
    main()
