#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# bench/cpu-vs-ort/run-host.sh PACK.tar.xz [STEPS [MODEL_DIR ...]]
#
# The cpu target on another machine (the GPU host's CPU, say) that has ONNX Runtime's Python
# module and no build tools of ours: unpacks the headless fusebench that scripts/gpu-pack made
# (a fusebench.bin beside the pack, a newer build of the binary, replaces the packed one), then
# runs STEPS (default "cases isa sweep"):
#   cases  fusebench check --target cpu on every tests/cases case, once per instruction set
#          the processor has (FUSEBENCH_ISA=avx512, avx2, none)
#   isa    ResNet-50 at 2 threads and at every core, per instruction set: which path is faster
#   profile  where the time goes, kernel by kernel, on FB_PROFILE_MODEL (default resnet50) at each
#          of FB_PROFILE_CORES (default "1 4 16"), both runtimes pinned to the same first cores:
#          fusebench profile's JSON and ONNX Runtime's per-node medians, to $OUT, for
#          bench/cpu-vs-ort/profile-pair.py to set side by side
#   sweep  bench/cpu-vs-ort/run --cores sweep against ONNX Runtime (Python) on the generated
#          models (FB_BENCH_MODELS limits them: "resnet50 ocr_classifier") and the MODEL_DIRs
#          given after STEPS (ONNX backend-test layout: tests/cases/gpt2_struct, say); FB_ROUNDS
#          rounds (default 1), FB_ITERATIONS inferences a round (default 20)
# Logs go to $OUT when it is set.
set -u
pack=${1:?usage: run-host.sh PACK.tar.xz [STEPS [MODEL_DIR ...]]}
steps=${2:-cases isa sweep}
shift $(($# < 2 ? $# : 2))
extra=("$@")
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
out=${OUT:-$work/out}
mkdir -p "$out" "$work/fb"
tar -xJf "$pack" -C "$work/fb" || exit 1
# A newer binary beside the pack (fusebench.bin) replaces the packed one, as in run-device.sh.
[ -f "$(dirname "$pack")/fusebench.bin" ] && cp "$(dirname "$pack")/fusebench.bin" "$work/fb/fusebench/lib/fusebench.bin"
fb=$work/fb/fusebench/bin/fusebench
export FUSEBENCH=$fb FUSEBENCH_KERNEL_CACHE="$work/kernel-cache" PYTHONUNBUFFERED=1
grep -m1 'model name' /proc/cpuinfo; nproc
isas="none avx2"; grep -q avx512f /proc/cpuinfo && isas="avx512 avx2 none"
python=python3
models=${FB_BENCH_MODELS:-resnet50 ocr_classifier inception db_detector densenet121 efficientnet_b0 swin_tiny shufflenet_v2 convnext_tiny resnext50 yolov8n vit_small mobilenet_v3_large unet vgg19 efficientnet_v2_s wav2vec2_base resnet18 squeezenet regnety_800mf bert_base}
for m in $models; do
  "$python" "$here/../models/make-${m//_/-}.py" "$work/models/$m" >/dev/null || exit 1
done

for step in $steps; do
  case $step in
  cases)
    for isa in $isas; do
      echo "== tests/cases on the cpu target, FUSEBENCH_ISA=$isa"
      # Every line but the passes: a failing case names itself, not only the count.
      FUSEBENCH_ISA=$isa "$fb" check --target cpu "$top"/tests/cases/*/ 2>&1 | grep -v "^PASS "
    done ;;
  isa)
    data=$work/models/resnet50/test_data_set_0
    for isa in $isas; do
      for threads in 2 "$(nproc)"; do
        ms=$(FUSEBENCH_ISA=$isa "$fb" run "$work/models/resnet50/model.onnx" --target cpu \
               --input-dir "$data" --iterations 20 --threads "$threads" --json |
             sed -n 's/.*"median_ms" *: *\([0-9.]*\).*/\1/p')
        echo "resnet50 FUSEBENCH_ISA=$isa threads=$threads median ${ms} ms"
      done
    done | tee "$out/isa.txt" ;;
  profile)
    pm=${FB_PROFILE_MODEL:-resnet50}
    [ -d "$work/models/$pm" ] || "$python" "$here/../models/make-${pm//_/-}.py" "$work/models/$pm" >/dev/null
    for n in ${FB_PROFILE_CORES:-1 4 16}; do
      [ "$n" -le "$(nproc)" ] || continue
      cpus=0-$((n - 1))
      taskset -c "$cpus" "$fb" profile "$work/models/$pm/model.onnx" --target cpu --iterations 30 \
        --input-dir "$work/models/$pm/test_data_set_0" -o "$out/profile-$pm-$n-fusebench.json" \
        > "$out/profile-$pm-$n-fusebench.txt" 2>&1
      head -1 "$out/profile-$pm-$n-fusebench.txt"
      FB_ORT_THREADS=$n taskset -c "$cpus" "$python" "$here/ort_bench.py" "$work/models/$pm/model.onnx" \
        "$work/models/$pm/test_data_set_0" profile 30 > "$out/profile-$pm-$n-ort.txt"
      tail -1 "$out/profile-$pm-$n-ort.txt"
    done ;;
  sweep)
    "$here/run" --ort python --no-generated --cores sweep --iterations "${FB_ITERATIONS:-20}" \
      --rounds "${FB_ROUNDS:-1}" $(for m in $models; do echo "$work/models/$m"; done) "${extra[@]}" 2>&1 |
      tee "$out/sweep.txt" ;;
  esac
done
rm -rf "$work"
