#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Our kernel durations and DRAM bytes against Nsight Compute's on the same kernels.

    ncu_compare.py PROFILE.json NCU.csv RUNS [--bytes-csv NCU2.csv] [--ncu-again NCU3.csv]
                   [--top N] [--label NAME]

PROFILE.json: `fusebench profile --target cuda --counters` of a model: per plan kernel its DRAM
bytes from CUPTI's range profiler, and a timeline of the median traced replay whose spans name
the device function each ran. NCU.csv: `ncu --profile-from-start off --csv --page raw
--print-units base --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum`
of `fusebench run MODEL --iterations RUNS` (untraced: ncu cannot attach while our CUPTI
subscriber is active), which brackets exactly its RUNS timed replays with cuProfilerStart/Stop.
The last replay's kernels are matched to the timeline's kernel spans by their function names, in
order (copies and memsets are no ncu kernels); each plan kernel's figures are summed over its
device kernels. --bytes-csv takes the DRAM bytes from another ncu run of the same command (one
with --cache-control all, say). Prints one row per plan kernel for the N slowest (default 20)
with the ratio ours / ncu, and a summary line: how many are within 5 %. --ncu-again adds a line
of the same counts for ncu against another of its own runs (NCU3.csv / NCU.csv, same kernels):
the reference's own repeatability, the bound no agreement with it can beat.
"""
import argparse
import collections
import csv
import difflib
import re
import json
import statistics
import subprocess
import sys

METRICS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum")
# Sectors of 32 bytes the kernel wrote into the L2: what it wrote, whether or not the lines
# reached DRAM before it ended (when ncu was asked for it).
L2_WRITES = "lts__t_sectors_op_write.sum"


def number(text):
    text = (text or "").replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def read_ncu(path):
    """The profiled kernels in launch order: (name, ns, bytes read, bytes written, bytes written
    into the L2 or None)."""
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
    l2_col = head.index(L2_WRITES) if L2_WRITES in head else None
    out = []
    for r in rows[1:]:
        if len(r) <= max(col.values()) or number(r[id_col]) is None:
            continue  # the units row
        vals = [number(r[col[m]]) for m in METRICS]
        if None in vals:
            continue
        l2 = number(r[l2_col]) if l2_col is not None and l2_col < len(r) else None
        out.append((r[name_col], *vals, 32 * l2 if l2 is not None else None))
    return out


def demangle(names):
    """CUPTI names C++ kernels mangled, Nsight Compute demangled (unless told
    --print-kernel-base mangled): both are brought to the demangled form by c++filt."""
    mangled = sorted({n for n in names if n.startswith("_Z")})
    if not mangled:
        return {}
    try:
        out = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True,
                             text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return {}
    return dict(zip(mangled, out))


def key(name, plain):
    """A kernel's name without its return type, template arguments and parameters: ncu and
    c++filt spell those differently (T1::Params against the type it stands for)."""
    name = plain.get(name, name)
    if name.startswith("void "):
        name = name[5:]
    return re.split(r"[<(]", name, maxsplit=1)[0]


def last_replay(rows, runs, label):
    if len(rows) % runs:
        print(f"note: {label}: {len(rows)} profiled kernels is not a multiple of {runs} runs")
    per = len(rows) // runs
    return rows[len(rows) - per:]


def align(ours, theirs):
    """Pairs (i, j) of our spans and ncu's kernels with the same function, in order."""
    plain = demangle([o[0] for o in ours] + [t[0] for t in theirs])
    sm = difflib.SequenceMatcher(a=[key(o[0], plain) for o in ours],
                                 b=[key(t[0], plain) for t in theirs], autojunk=False)
    pairs = []
    for block in sm.get_matching_blocks():
        pairs.extend((block.a + k, block.b + k) for k in range(block.size))
    return pairs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("ncu")
    ap.add_argument("runs", type=int)
    ap.add_argument("--bytes-csv")
    ap.add_argument("--ncu-again", help="a second ncu run of the same command (another replay "
                    "mode, say): how far ncu agrees with itself on the same kernels")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--label", default="")
    a = ap.parse_args()

    prof = json.load(open(a.profile))
    kernels = {k["id"]: k for k in prof["kernels"]}
    spans = sorted((s for s in prof["timeline"] if s.get("function")), key=lambda s: s["start_us"])
    if not spans:
        sys.exit(f"{a.profile}: its timeline names no device functions (a profile made before they "
                 "were recorded)")
    ours = [(s["function"], s["end_us"] - s["start_us"], s["kernel"]) for s in spans]
    timed = last_replay(read_ncu(a.ncu), a.runs, "time")
    pairs = align(ours, timed)
    byte_rows = last_replay(read_ncu(a.bytes_csv), a.runs, "bytes") if a.bytes_csv else timed
    byte_pairs = pairs if byte_rows is timed else align(ours, byte_rows)
    print(f"{a.label}: {len(ours)} device kernels in the profile's median replay, {len(timed)} in "
          f"ncu's last replay; {len(pairs)} matched by function name in order"
          + (f", {len(byte_pairs)} in the bytes run" if a.bytes_csv else ""))

    # Per plan kernel: our spans' time, ncu's time and bytes of the kernels matched to them.
    per = {}
    for i, j in pairs:
        e = per.setdefault(ours[i][2], {"n": 0, "ours_us": 0.0, "ncu_us": 0.0, "rd": 0.0, "wr": 0.0,
                                        "l2wr": 0.0, "names": set()})
        e["n"] += 1
        e["ours_us"] += ours[i][1]
        e["ncu_us"] += timed[j][1] / 1e3
        e["names"].add(ours[i][0])
    for i, j in byte_pairs:
        if ours[i][2] in per:
            per[ours[i][2]]["rd"] += byte_rows[j][2]
            per[ours[i][2]]["wr"] += byte_rows[j][3]
            per[ours[i][2]]["l2wr"] += byte_rows[j][4] or 0.0
    # Only plan kernels all of whose device kernels were matched.
    launched = collections.Counter(o[2] for o in ours)
    whole = [(kernels[k], e) for k, e in per.items() if e["n"] == launched[k]]
    whole.sort(key=lambda m: -m[1]["ours_us"])

    # Ours twice: the tracer's spans (the timeline), and the range profiler's
    # gpu__time_duration.sum (the profile's counters.device_us), the metric ncu reports.
    nan = float("nan")
    rows = []
    print(f"{'kernel':<24} {'n':>2} {'trace us':>8} {'ctr us':>8} {'ncu us':>8} {'tr/ncu':>6} "
          f"{'ctr/ncu':>7} {'ours rd MB':>10} {'ncu rd MB':>10} {'ratio':>6} {'ours wr MB':>10} "
          f"{'ncu wr MB':>10} {'ratio':>6} {'ncu L2 wr':>9} {'ratio':>6}  device function")
    for k, e in whole[:a.top]:
        measured = k.get("bytes_source") == "measured"
        ctr = k.get("counters", {}).get("device_us", -1)
        ctr = ctr if ctr is not None and ctr > 0 else nan
        r_t = e["ours_us"] / e["ncu_us"] if e["ncu_us"] > 0 else nan
        r_c = ctr / e["ncu_us"] if e["ncu_us"] > 0 else nan
        r_r = k["bytes_read"] / e["rd"] if e["rd"] > 0 and measured else nan
        r_w = k["bytes_written"] / e["wr"] if e["wr"] > 0 and measured else nan
        r_l2 = k["bytes_written"] / e["l2wr"] if e["l2wr"] > 0 and measured else nan
        rows.append((r_t, r_c, r_r, r_w, r_l2))
        print(f"{k['name'][:24]:<24} {e['n']:>2} {e['ours_us']:>8.2f} {ctr:>8.2f} {e['ncu_us']:>8.2f} "
              f"{r_t:>6.3f} {r_c:>7.3f} "
              f"{k['bytes_read'] / 1e6:>10.3f} {e['rd'] / 1e6:>10.3f} {r_r:>6.3f} "
              f"{k['bytes_written'] / 1e6:>10.3f} {e['wr'] / 1e6:>10.3f} {r_w:>6.3f} "
              f"{e['l2wr'] / 1e6:>9.3f} {r_l2:>6.3f}  {sorted(e['names'])[0][:40]}")

    def within(i):
        vals = [r[i] for r in rows if r[i] == r[i]]
        ok = sum(1 for v in vals if abs(v - 1) <= 0.05)
        med = statistics.median(vals) if vals else float("nan")
        return f"{ok}/{len(vals)} within 5 % (median ratio {med:.3f})"

    print(f"{a.label} summary: time (trace) {within(0)}; time (counters) {within(1)}; "
          f"DRAM read {within(2)}; DRAM write {within(3)}; written into the L2 {within(4)}")

    if a.ncu_again:
        again = last_replay(read_ncu(a.ncu_again), a.runs, "again")
        sums = {}
        for i, j in align(ours, again):
            e = sums.setdefault(ours[i][2], [0.0, 0.0, 0.0])
            for m in range(3):
                e[m] += again[j][1 + m]
        rows = []
        for k, e in whole[:a.top]:
            o = sums.get(k["id"])
            first = (e["ncu_us"] * 1e3, e["rd"], e["wr"])
            rows.append(tuple(o[m] / first[m] if o and first[m] > 0 else nan for m in range(3)))
        print(f"{a.label} ncu against itself ({a.ncu_again.rsplit('/', 1)[-1]} / "
              f"{a.ncu.rsplit('/', 1)[-1]}, the same kernels): time {within(0)}; "
              f"DRAM read {within(1)}; DRAM write {within(2)}")


if __name__ == "__main__":
    main()
