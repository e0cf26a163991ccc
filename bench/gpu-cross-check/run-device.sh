#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# bench/gpu-cross-check/run-device.sh CARRY_DIR [STEPS]
#
# On the GPU host, from the repository's root: unpacks the headless fusebench that
# scripts/gpu-pack made (CARRY_DIR/fusebench-headless.tar.xz) and runs STEPS (default
# "models overhead-resnet50 ncu-resnet50 totals-resnet50 overhead-bert ncu-bert totals-bert
# overhead-vit torch"):
#   models    ResNet-50 of bench/models/make-resnet50.py; BERT-base (sequence 128), ViT-B/16
#             and torchvision's ResNet-50 exported by ../gpu-vs-torch/torch_models.py
#   overhead-MODEL  `run --iterations 100` before and after `profile --target cuda --counters
#             --iterations 100` of MODEL (resnet50, bert, vit), and a line of the medians: run, the profile's
#             wall (untraced replays), its traced replays, the tracer's overhead, and how far the
#             profile's median is from run's
#   ncu-MODEL Nsight Compute on `run --iterations 1` of ResNet-50 and BERT-base (untraced: ncu
#             cannot attach while our CUPTI subscriber is active), matched to the profile's
#             kernels by ncu_compare.py: duration (the tracer's and the range profiler's), DRAM
#             bytes read and written, and bytes written into the L2, 20 kernels each; every run
#             shares one timing cache (FUSEBENCH_CUDA_TIMING_CACHE), so ncu sees the engines the
#             profile ran; ncu runs three times: kernel replay with the caches as left and
#             flushed before each kernel, and application replay (the whole run once per pass,
#             caches as left: how the range profiler counts) (FB_NCU_CLOCKS=1: once more with
#             the clocks locked to base; FB_NCU_REPEAT=1: application replay once more, to
#             print how far ncu agrees with itself in one mode)
#   totals-MODEL  DRAM bytes per inference over whole replays: the profile's one counter range
#             over 20 replays back to back (dram_per_inference) and the sum of its kernels'
#             ranges, against ncu's application range replay over `run --iterations 20`
#   torch     the eager baseline (fusion passes off, kernel by kernel) of torchvision's ResNet-50
#             and of BERT-base, busy share against PyTorch eager under its own profiler
# FB_EXPORT names the models torch_models.py exports (default "bert vit resnet50").
# Output: the tables on stdout and in $OUT/cross-check.txt; the profiles, ncu's CSVs and logs
# in $OUT/results.tar.gz; the ResNet-50 profile also as $OUT/resnet50-h200.profile.json (the
# tests' fixture).
set -u
carry=${1:?usage: run-device.sh CARRY_DIR [STEPS]}
steps=${2:-models overhead-resnet50 ncu-resnet50 totals-resnet50 overhead-bert ncu-bert totals-bert overhead-vit torch}
here=$(cd "$(dirname "$0")" && pwd)
top=$(pwd)
# One folder for the whole session on that machine: a later call finds the models and the
# profiles an earlier one made there (FB_WORK to place it elsewhere).
work=${FB_WORK:-/tmp/fb-cross-check}
out=${OUT:-$work/out}
res=$work/results
m=$work/models
mkdir -p "$out" "$work/fb" "$res" "$m"
tar -xJf "$carry/fusebench-headless.tar.xz" -C "$work/fb" || exit 1
# The models first whatever the steps, where an earlier call did not leave them.
[ -f "$m/torch/vit/model.onnx" ] && [ -f "$m/resnet50/model.onnx" ] || steps="models ${steps/models/}"
fb=$work/fb/fusebench/bin/fusebench
# One timing cache for every run: the runs, the profiles and ncu's runs take the same cuDNN
# engines (timing them again under ncu picked others).
export FUSEBENCH_CUDA_TIMING_CACHE=$res/timing-cache.txt
export PYTHONUNBUFFERED=1
log=$out/cross-check.txt
say () { echo "$@" | tee -a "$log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$log"

median () { /usr/bin/env python3 -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["median_ms"])' "$1" 2>/dev/null || echo nan; }

case_dir () {  # the model's folder
  case $1 in resnet50) echo "$m/resnet50" ;; *) echo "$m/torch/$1" ;; esac
}
input_dir () { echo "$(case_dir "$1")/test_data_set_0"; }

overhead () {  # name
  local name=$1 c pin rc
  c=$(case_dir "$name")
  [ -f "$c/model.onnx" ] || { say "$name: no model"; return; }
  # The profile takes random inputs of the model's shapes where they do (the fixture's way, no
  # pins recorded); BERT's token ids must be in range: its own input.
  pin=""; [ "$name" = bert ] && pin="--input-dir $(input_dir "$name")"
  # `run` before and after the profile: in the first minutes on a fresh host `run`'s median
  # drifts by 4-6 % with nothing changed (2026-12-03: ResNet-50 0.511 ms before the profile,
  # 0.532 after, nvidia-smi reading 1980 MHz both times), which one `run` before the profile
  # read as the profiler's cost.
  local when
  for when in before after; do
    [ $when = after ] && {
      timeout 240 "$fb" profile "$c/model.onnx" --target cuda --counters --iterations 100 $pin \
        -o "$res/$name.profile.json" > "$res/$name.profile.txt" 2> "$res/$name.profile.err"
      rc=$?
      [ $rc = 0 ] || { say "$name: profile failed ($rc): $(head -c 400 "$res/$name.profile.err")"; return; }
    }
    timeout 150 "$fb" run "$c/model.onnx" --target cuda --input-dir "$(input_dir "$name")" \
      --iterations 100 --json > "$res/$name-run-$when.json" 2> "$res/$name-run-$when.err"
    say "$name run $when the profile: SM clock $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)"
  done
  grep -E "^(timing|DRAM per inference)" "$res/$name.profile.txt" | tee -a "$log"
  python3 - "$name" "$res/$name.profile.json" "$(median "$res/$name-run-before.json")" \
    "$(median "$res/$name-run-after.json")" <<'PY' | tee -a "$log"
import json, sys
name, path, before, after = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
run = (before + after) / 2
p = json.load(open(path))
t = p.get("timing", {})
wall = p["wall_ms"]["median"]
total = sum(k["median_us"] for k in p["kernels"]) / 1e3
print(f"{name:9} run {before:.4f} before, {after:.4f} after  profile wall (untraced) {wall:.4f}  traced {t.get('traced_median_ms', 0):.4f}"
      f"  tracer overhead {100 * t.get('overhead', 0):+.1f} %  profile vs the runs' mean {100 * (wall / run - 1):+.1f} %"
      f"  busy {p['busy_ms']:.4f}  kernels {total:.4f}  launch {1000 * t.get('replay_launch_ms', 0):.1f} us")
print("   " + "\n   ".join(p["diagnosis"][:4]))
if p.get("counters_note"):
    print("   note: " + p["counters_note"])
PY
}

compare_ncu () {  # name
  local name=$1 c cache
  c=$(case_dir "$name")
  [ -f "$res/$name.profile.json" ] || { say "$name: no profile to compare"; return; }
  # Durations and DRAM bytes with the caches as the replays leave them, and again with them
  # flushed before each kernel (ncu's default): the range profiler replays each kernel from
  # memory it restores, so its durations are a cold kernel's. FB_NCU_CLOCKS=1 adds a run with
  # the clocks locked to base (2026-12-02: the range profiler's durations are not base-clock
  # ones; bench/gpu-cross-check/NOTES.md).
  # The range profiler replays whole inferences (user replay, nothing restored), so its DRAM
  # bytes are those of the caches as the kernels before left them: ncu's application replay
  # (the whole run once per pass) with the caches left alone is the run to hold them to.
  local run clock tag replay runs="none:none:kernel all:none:kernel none:none:application"
  [ "${FB_NCU_CLOCKS:-0}" = 1 ] && runs="$runs none:base:kernel"
  [ "${FB_NCU_REPEAT:-0}" = 1 ] && runs="$runs none:none:application:again"
  local again
  for run in $runs; do
    IFS=: read -r cache clock replay again <<< "$run"
    tag=$cache; [ "$clock" = none ] || tag=clock-$clock
    [ "$replay" = kernel ] || tag=$tag-$replay
    [ -z "$again" ] || tag=$tag-$again
    timeout 300 ncu --profile-from-start off --clock-control $clock --cache-control $cache \
      --replay-mode $replay \
      --print-units base --csv --page raw \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,gpc__cycles_elapsed.avg.per_second \
      "$fb" run "$c/model.onnx" --target cuda --input-dir "$(input_dir "$name")" --iterations 1 \
      > "$res/ncu-$name-$tag.csv" 2> "$res/ncu-$name-$tag.err"
    say "ncu $name, cache control $cache, clock control $clock, $replay replay: rc $? $(grep -c '^"' "$res/ncu-$name-$tag.csv") CSV rows $(grep -i error "$res/ncu-$name-$tag.err" | head -c 300)"
  done
  python3 "$here/ncu_compare.py" "$res/$name.profile.json" "$res/ncu-$name-none.csv" 1 \
    --label "$name (caches as left)" 2>&1 | tee -a "$log"
  python3 "$here/ncu_compare.py" "$res/$name.profile.json" "$res/ncu-$name-all.csv" 1 \
    --label "$name (caches flushed)" 2>&1 | tail -1 | tee -a "$log"
  python3 "$here/ncu_compare.py" "$res/$name.profile.json" "$res/ncu-$name-none-application.csv" 1 \
    --ncu-again "$res/ncu-$name-none.csv" \
    --label "$name (caches as left, ncu replaying the whole run)" 2>&1 | tee -a "$log"
  [ -f "$res/ncu-$name-none-application-again.csv" ] &&
    python3 "$here/ncu_compare.py" "$res/$name.profile.json" "$res/ncu-$name-none-application.csv" 1 \
      --ncu-again "$res/ncu-$name-none-application-again.csv" \
      --label "$name (ncu's application replay, twice)" 2>&1 | tail -1 | tee -a "$log"
  [ -f "$res/ncu-$name-clock-base.csv" ] &&
    python3 "$here/ncu_compare.py" "$res/$name.profile.json" "$res/ncu-$name-clock-base.csv" 1 \
      --label "$name (ncu's clocks locked to base)" 2>&1 | tail -1 | tee -a "$log"
  # The SM clock each ncu run saw (median over its kernels, MHz).
  python3 - "$res"/ncu-"$name"-*.csv <<'PY' 2>&1 | tee -a "$log"
import csv, statistics, sys
for path in sys.argv[1:]:
    rows = list(csv.reader(l for l in open(path) if l.startswith('"')))
    if len(rows) < 2 or "gpc__cycles_elapsed.avg.per_second" not in rows[0]:
        print(f"{path.rsplit('/', 1)[-1]}: no clock column"); continue
    i = rows[0].index("gpc__cycles_elapsed.avg.per_second")
    hz = [float(r[i].replace(",", "")) for r in rows[1:] if r[i].replace(",", "").replace(".", "").isdigit()]
    print(f"{path.rsplit('/', 1)[-1]}: SM clock median {statistics.median(hz) / 1e6:.0f} MHz over {len(hz)} kernels" if hz else f"{path}: no clock values")
PY
}

totals () {  # name: DRAM per inference over whole replays, ours against ncu's
  local name=$1 c
  c=$(case_dir "$name")
  [ -f "$res/$name.profile.json" ] || { say "$name: no profile for the totals"; return; }
  # Application range replay: ncu runs the whole command once per pass and counts everything
  # between cuProfilerStart and Stop (the timed replays) as one range; range replay proper
  # refuses graph launches ("Unsupported API during capture (cuGraphLaunch)").
  timeout 300 ncu --replay-mode app-range --cache-control none --clock-control none \
    --print-units base --csv --page raw \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    "$fb" run "$c/model.onnx" --target cuda --input-dir "$(input_dir "$name")" --iterations 20 \
    > "$res/ncu-$name-totals.csv" 2> "$res/ncu-$name-totals.err"
  say "ncu $name, application range over 20 replays: rc $? $(grep -i error "$res/ncu-$name-totals.err" | head -c 300)"
  python3 "$here/ncu_totals.py" "$res/$name.profile.json" "$res/ncu-$name-totals.csv" 20 \
    --label "$name" 2>&1 | tee -a "$log"
}

eager_busy () {
  say "== eager baselines: busy share, ours against PyTorch eager under torch.profiler"
  local name c
  for name in resnet50 bert; do
    c=$m/torch/$name
    [ -f "$c/model.onnx" ] || continue
    timeout 200 "$fb" profile "$c/model.onnx" --target cuda --eager --disable fuse-epilogue \
      --disable fuse-elementwise --iterations 50 --input-dir "$c/test_data_set_0" \
      -o "$res/$name-eager.profile.json" > "$res/$name-eager.profile.txt" 2>&1 || { say "$name eager: failed"; continue; }
    python3 - "$name" "$res/$name-eager.profile.json" <<'PY' | tee -a "$log"
import json, sys
p = json.load(open(sys.argv[2]))
t = p.get("timing", {})
launches = sum(k["calls"] for k in p["kernels"])
w, tr, b = p["wall_ms"]["median"], t.get("traced_median_ms", 0), p["busy_ms"]
print(f"fusebench eager baseline {sys.argv[1]}: wall {w:.3f} ms untraced, {tr:.3f} traced; busy {b:.3f} ms"
      f" ({100 * b / w:.1f} % of the untraced wall, {100 * b / tr if tr else 0:.1f} % of the traced); {launches} launches")
PY
  done
  timeout 300 python3 "$here/torch_busy.py" "$m/torch" resnet50 bert 2>&1 | grep -E "^torch|Error" | tee -a "$log"
}

# Most wanted first: each model's overhead, then its Nsight Compute comparison.
for step in $steps; do
  case $step in
  models)
    timeout 120 python3 "$top/bench/models/make-resnet50.py" "$m/resnet50" 2>&1 | tail -1 | tee -a "$log"
    timeout 300 python3 "$here/../gpu-vs-torch/torch_models.py" "$m/torch" export ${FB_EXPORT:-bert vit resnet50} 2>&1 \
      | grep -v -i warn | tail -4 | tee -a "$log"
    ;;
  overhead-*) say "== $step"; overhead "${step#overhead-}"
    [ "$step" = overhead-resnet50 ] && [ -f "$res/resnet50.profile.json" ] && cp "$res/resnet50.profile.json" "$out/resnet50-h200.profile.json" ;;
  ncu-*) say "== $step"; compare_ncu "${step#ncu-}" ;;
  totals-*) say "== $step"; totals "${step#totals-}" ;;
  torch) eager_busy ;;
  esac
done
tar -C "$work" -czf "$out/results.tar.gz" results
