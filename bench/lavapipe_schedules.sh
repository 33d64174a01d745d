#!/usr/bin/env bash
# Lavapipe: each of squeezenet1_1, mobilenet_v2 and bert_tiny compiled twice in this run, with
# the strategy table (`--schedule auto`) and with the reference kernels (`--schedule naive`),
# both checked against the golden outputs and timed by kiln_bench in the same command.
# Reported: wall ms (median) and CPU ms per call (all of llvmpipe's threads); on a shared
# 2-core machine CPU time is the steadier of the two, so the ratio uses it.
#   bench/lavapipe_schedules.sh [ITERS]   (from the repository root, after make build)
set -euo pipefail
iters=${1:-20}
kiln=${KILN:-build/bin/kiln}
bench=${KILN_BENCH:-build/bin/kiln_bench}
models=${MODELS:-../shared/models}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| model | naive wall ms | naive CPU ms | auto wall ms | auto CPU ms | naive / auto (CPU) | golden |"
echo "|---|---|---|---|---|---|---|"
for m in squeezenet1_1 mobilenet_v2 bert_tiny; do
  args=()
  for f in "$models/$m".in.*.npy; do n=${f#"$models/$m".in.}; args+=(--input "${n%.npy}=$f"); done
  for f in "$models/$m".out.*.npy; do n=${f#"$models/$m".out.}; args+=(--golden "${n%.npy}=$f"); done
  declare -A wall cpu ok
  for s in naive auto; do
    "$kiln" compile "$models/$m.onnx" -o "$tmp/$m.$s.kiln" --target vulkan-lavapipe --schedule "$s" \
      > /dev/null
    out=$("$bench" "$tmp/$m.$s.kiln" --device vulkan --warmup 3 --iters "$iters" "${args[@]}") || true
    wall[$s]=$(sed -n 's/.*host \([0-9.]*\) ms,.*/\1/p' <<< "$out")
    cpu[$s]=$(sed -n 's/^cpu: \([0-9.]*\) ms.*/\1/p' <<< "$out")
    ok[$s]=$(grep -c ': OK$' <<< "$out" || true)
  done
  ratio=$(awk -v a="${cpu[naive]}" -v b="${cpu[auto]}" 'BEGIN { printf "%.2fx", a / b }')
  echo "| $m | ${wall[naive]} | ${cpu[naive]} | ${wall[auto]} | ${cpu[auto]} | $ratio | naive ${ok[naive]} OK, auto ${ok[auto]} OK |"
done
