#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# bench/gpu-vs-torch/product-split.sh CARRY_DIR [ROWS:K:N ...]
#
# On the GPU host: what splitting a float32 product for TF32 (fb-lower-product-split.c) gains
# or loses on each shape, inside a model. For every shape (default: the linear layers of Swin-T,
# ConvNeXt-Tiny, ViT-B/16 and BERT-base at batch 1), a chain of 12 such layers
# (make-linear-chain.py, beside this script) runs with FUSEBENCH_PRODUCT_SPLIT=0 (float32) and =1
# (split), ROUNDS rounds alternating (default 2), medians of 200 graph replays; the line gives
# the float32 chain's time per layer and the split's difference per product, in µs.
# Uses the headless fusebench that scripts/gpu-pack made, as run-device.sh does.
set -u
carry=${1:?usage: product-split.sh CARRY_DIR [ROWS:K:N ...]}
shift
shapes=("$@")
[ ${#shapes[@]} -eq 0 ] && shapes=(
  3136:96:288 3136:96:384 3136:384:96 3136:96:96
  784:192:576 784:192:768 784:768:192 784:192:192
  196:384:1152 196:384:1536 196:1536:384 196:384:384
  197:768:2304 197:768:3072 197:3072:768 197:768:768
  128:768:2304 128:768:3072 128:3072:768
  49:768:2304 49:768:3072 49:3072:768 49:768:768)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
mkdir -p "$work/fb"
tar -xJf "$carry/fusebench-headless.tar.xz" -C "$work/fb" || exit 1
[ -f "$carry/fusebench.bin" ] && cp "$carry/fusebench.bin" "$work/fb/fusebench/lib/fusebench.bin"
fb=$work/fb/fusebench/bin/fusebench
export FUSEBENCH_KERNEL_CACHE=off
layers=12
median () {
  FUSEBENCH_PRODUCT_SPLIT=$1 "$fb" run "$2/model.onnx" --target cuda --input-dir "$2/test_data_set_0" \
    --iterations 200 --json 2>/dev/null | sed -n 's/.*"median_ms" *: *\([0-9.]*\).*/\1/p'
}
echo "rows x K x N: float32 chain per layer, split minus float32 per product (us), each round"
for s in "${shapes[@]}"; do
  IFS=: read -r rows k n <<< "$s"
  m=$work/chain-$rows-$k-$n
  python3 "$here/make-linear-chain.py" "$m" "$rows" "$k" "$n" $layers || exit 1
  line="$rows x $k x $n:"
  for r in $(seq "${ROUNDS:-2}"); do
    f=$(median 0 "$m"); t=$(median 1 "$m")
    line="$line $(awk -v f="$f" -v t="$t" -v l=$layers 'BEGIN { if (f == "" || t == "") print "(failed)"; else printf "%.2f %+.2f", f * 1000 / l, (t - f) * 1000 / l }')"
  done
  echo "$line"
done
rm -rf "$work"
