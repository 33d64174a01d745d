#!/usr/bin/env bash
# Parallel-kernel microbenchmarks (bench/parallel/gen.py: a broadcast add with a fused Relu, a
# transpose, a concat, a gather) on one device: naive (one invocation per element) against
# blocked at E = 2, 4, 8, each forced (`--parallel SPEC!`). The artifacts are compiled once;
# then ROUNDS rounds each time every schedule for ITERS calls (kiln_bench), alternating, so a
# drifting machine load falls on all alike. Printed per schedule: the median over rounds of the
# device ms (median per call) and CPU ms (mean per call), and naive's device ms over each.
#   bench/parallel/compare.sh TARGET [ITERS] [ROUNDS] [H]   (repository root, after the build;
#   H: the inputs' spatial size, gen.py)
set -euo pipefail
target=$1 iters=${2:-20} rounds=${3:-5} size=${4:-56}
kiln=${KILN:-build/bin/kiln}
bench=${KILN_BENCH:-build/bin/kiln_bench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(pwd)
(cd "$tmp" && python3 "$root/bench/parallel/gen.py" "$size")
. "$(dirname "$0")/../lib.sh"
schedules=(naive blocked:2 blocked:4 blocked:8)
for m in add transpose concat gather; do
  args=()
  for f in "$tmp/$m".in.*.npy; do n=${f#"$tmp/$m".in.}; args+=(--input "${n%.npy}=$f"); done
  for s in "${schedules[@]}"; do
    "$kiln" compile "$tmp/$m.onnx" -o "$tmp/$m.$s.kiln" --target "$target" --parallel "$s!" \
      > /dev/null
    : > "$tmp/$s.dev"; : > "$tmp/$s.cpu"
  done
  for ((r = 0; r < rounds; ++r)); do
    for s in "${schedules[@]}"; do
      out=$("$bench" "$tmp/$m.$s.kiln" --device vulkan --warmup 3 --iters "$iters" "${args[@]}")
      sed -n 's/.*device \([0-9.]*\) ms.*/\1/p' <<< "$out" | head -1 >> "$tmp/$s.dev"
      sed -n 's/^cpu: \([0-9.]*\) ms.*/\1/p' <<< "$out" >> "$tmp/$s.cpu"
    done
  done
  echo "$m:"
  echo "| schedule | device ms | CPU ms | naive / this (device) |"
  echo "|---|---|---|---|"
  base=$(median < "$tmp/naive.dev")
  for s in "${schedules[@]}"; do
    dev=$(median < "$tmp/$s.dev") cpu=$(median < "$tmp/$s.cpu")
    echo "| $s | $dev | $cpu | $(ratio "$base" "$dev") |"
  done
done
