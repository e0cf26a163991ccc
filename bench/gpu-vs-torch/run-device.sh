#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# bench/gpu-vs-torch/run-device.sh CARRY_DIR [STEPS]
#
# On the GPU host: unpacks the headless fusebench that scripts/gpu-pack made (CARRY_DIR/
# fusebench-headless.tar.xz), then runs STEPS (default "cases models torch"):
#   cases   fusebench check --target cuda on tests/cases, TF32 (rtol/atol 1e-3) and strict
#           float32 (rtol/atol 1e-4)
#   models  the same on the ONNX-backend-style cases in CARRY_DIR/models
#   torch   exports ResNet-50, MobileNetV2 and BERT-base there (torch_models.py), checks
#           fusebench --target cuda against PyTorch's float32 output, and times fusebench
#           (graph replay and kernel by kernel) and PyTorch eager
#   compile PyTorch's torch.compile and reduce-overhead modes on the exported models
#   table   the table of the torch and compile steps' figures, with the ratio and each output's
#           distance from PyTorch's float32 one beside PyTorch's own TF32 output's (table.py)
# FB_MODELS names the models of the torch, compile and table steps (any name torch_models.py
# knows, "-b32" for batch 32: "resnet50 efficientnet_b0 densenet121 densenet121-b32"); FB_TOP
# sets how many of the slowest kernels fusebench names; FB_STRICT=0 leaves out the strict float32
# runs. The table goes to $OUT/table.md and every log and result file into one archive,
# $OUT/results.tar.gz, so that they come back from the host whatever their number ($OUT, when
# it is set; else a folder of the run's own). FB_WORK names a folder to work in that outlives the
# run, so that the steps can run as separate calls, each under its own time limit, and share the
# exported models and results.
set -u
carry=${1:?usage: run-device.sh CARRY_DIR [STEPS]}
steps=${2:-cases models torch}
here=$(cd "$(dirname "$0")" && pwd)
work=${FB_WORK:-$(mktemp -d)}
out=${OUT:-$work/out}
res=$work/results
tm=$work/models
mkdir -p "$out" "$res" "$work/fb" "$tm"
tar -xJf "$carry/fusebench-headless.tar.xz" -C "$work/fb" || exit 1
# A newer binary carried beside the packed libraries replaces the packed one.
[ -f "$carry/fusebench.bin" ] && cp "$carry/fusebench.bin" "$work/fb/fusebench/lib/fusebench.bin"
fb=$work/fb/fusebench/bin/fusebench
export FUSEBENCH_KERNEL_CACHE=off PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv
top=$(pwd)

for step in $steps; do
  case $step in
  cases)
    cases=$(ls -d "$top"/tests/cases/*/)
    echo "== tests/cases, TF32"
    timeout 240 "$fb" check --target cuda --rtol 1e-3 --atol 1e-3 $cases 2>&1 | tee "$res/cases-tf32.txt" | sed "s|$top/||"
    echo "== tests/cases, strict float32"
    timeout 240 "$fb" check --target cuda --strict-float32 --rtol 1e-4 --atol 1e-4 $cases 2>&1 | tee "$res/cases-strict.txt" | sed "s|$top/||" | tail -4
    echo "== kernel by kernel"
    timeout 120 "$fb" check --target cuda --eager --rtol 1e-3 --atol 1e-3 $cases 2>&1 | tail -1
    ;;
  models)
    for m in "$carry"/models/*/; do
      echo "== $(basename "$m")"
      timeout 120 "$fb" check --target cuda --rtol 1e-3 --atol 1e-3 "$m" 2>&1 | sed "s|$carry/||" | head -3
      timeout 120 "$fb" check --target cuda --strict-float32 --rtol 1e-4 --atol 1e-4 "$m" 2>&1 | sed "s|$carry/||" | head -1
      timeout 120 "$fb" run "$m/model.onnx" --target cuda --input-dir "$m/test_data_set_0" --iterations 100 --json 2>&1 | grep -E '"(median|min)_ms"|note|fusebench:'
    done
    ;;
  torch)
    models=${FB_MODELS:-resnet50 mobilenet_v2 bert}
    timeout 300 python3 "$here/torch_models.py" "$tm" export $models 2>&1 | grep -v Warning | tail -8
    for name in $models; do
      c=$tm/$name
      [ -f "$c/model.onnx" ] || continue
      echo "== $name"
      for mode in "" "--strict-float32"; do
        [ -n "$mode" ] && [ "${FB_STRICT:-1}" = 0 ] && continue
        FUSEBENCH_CUDA_KERNEL_TIMES=${FB_TOP:-12} timeout 240 "$fb" run "$c/model.onnx" --target cuda $mode --input-dir "$c/test_data_set_0" \
          --output "output=$c/fb$mode.npy" --iterations 100 --json > "$res/fb-$name$mode.json" 2> "$res/fb-$name$mode.err"
        echo "fusebench cuda ${mode:-tf32}: rc $? $(grep -E '"median_ms"' "$res/fb-$name$mode.json" | tr -d ' \n') $(grep -v '^  ' "$res/fb-$name$mode.err" | head -c 600)"
        [ -z "$mode" ] && grep '^  ' "$res/fb-$name$mode.err" | head -${FB_TOP:-12}
        [ -f "$c/fb$mode.npy" ] &&
          python3 "$here/compare.py" "$c/torch_output_0.npy" "$c/fb$mode.npy" | tee "$res/compare-$name$mode.txt"
      done
      # PyTorch's own TF32 output against its float32 one: the scale of TF32's rounding there.
      [ -f "$c/torch_tf32_output_0.npy" ] &&
        python3 "$here/compare.py" "$c/torch_output_0.npy" "$c/torch_tf32_output_0.npy" > "$res/compare-$name-torch-tf32.txt"
      timeout 240 "$fb" run "$c/model.onnx" --target cuda --eager --input-dir "$c/test_data_set_0" \
        --iterations 100 --json 2>&1 | grep -E '"median_ms"|fusebench:' | sed 's/^/eager launches: /'
    done
    timeout 200 python3 "$here/torch_models.py" "$res" eager $models 2>&1 | grep "^torch"
    ;;
  compile)
    timeout 540 python3 "$here/torch_models.py" "$res" time ${FB_MODELS:-resnet50 mobilenet_v2 bert} 2>&1 | grep "^torch"
    ;;
  table)
    python3 "$here/table.py" "$res" ${FB_MODELS:-resnet50 mobilenet_v2 bert} | tee "$out/table.md"
    ;;
  esac
done
tar -czf "$out/results.tar.gz" -C "$res" .
