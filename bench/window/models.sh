#!/usr/bin/env bash
# Lavapipe: squeezenet1_1 (max pools) and mobilenet_v2 (depthwise convolutions) compiled three
# ways in this run: `--schedule naive` (reference kernels everywhere), the strategy table with
# the windows forced naive (`--window naive!`), and the whole table; each checked against the
# golden outputs. The last two alternate for ROUNDS rounds of ITERS calls (kiln_bench); per
# round: CPU ms per call (all of llvmpipe's threads) and the device ms of the window kernels
# alone (the sum of their per-command medians from --profile: the same-run number the table is
# decided on). Printed: the median over rounds.
#   bench/window/models.sh [ITERS] [ROUNDS]   (from the repository root, after the build)
set -euo pipefail
iters=${1:-10} rounds=${2:-3}
kiln=${KILN:-build/bin/kiln}
bench=${KILN_BENCH:-build/bin/kiln_bench}
models=${MODELS:-../shared/models}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
# The window kernels: pools (naive or _wrowsR), depthwise convolutions (naive: plain `conv`,
# which on lavapipe every other convolution of these models is not: they run registers tiles).
win_re='^(conv|max_pool|avg_pool|lp_pool|conv_depthwise)(_wrows[0-9]+g?)?$'
echo "| model | naive: CPU ms | windows naive: CPU ms, window kernels ms | table: CPU ms, window kernels ms | window kernels naive / table | golden |"
echo "|---|---|---|---|---|---|"
for m in squeezenet1_1 mobilenet_v2; do
  args=()
  for f in "$models/$m".in.*.npy; do n=${f#"$models/$m".in.}; args+=(--input "${n%.npy}=$f"); done
  for f in "$models/$m".out.*.npy; do n=${f#"$models/$m".out.}; args+=(--golden "${n%.npy}=$f"); done
  declare -A ok
  for s in naive wnaive auto; do
    case $s in
      naive) flags=(--schedule naive) ;;
      wnaive) flags=(--window 'naive!') ;;
      auto) flags=() ;;
    esac
    "$kiln" compile "$models/$m.onnx" -o "$tmp/$m.$s.kiln" --target vulkan-lavapipe "${flags[@]}" \
      > /dev/null
  done
  out=$("$bench" "$tmp/$m.naive.kiln" --device vulkan --warmup 1 --iters 3 "${args[@]}") || true
  naive_cpu=$(sed -n 's/^cpu: \([0-9.]*\) ms.*/\1/p' <<< "$out")
  ok[naive]=$(grep -c ': OK$' <<< "$out" || true)
  : > "$tmp/wnaive.cpu"; : > "$tmp/wnaive.win"; : > "$tmp/auto.cpu"; : > "$tmp/auto.win"
  for ((r = 0; r < rounds; ++r)); do
    for s in wnaive auto; do
      out=$("$bench" "$tmp/$m.$s.kiln" --device vulkan --warmup 2 --iters "$iters" --profile 1000 \
            "${args[@]}") || true
      sed -n 's/^cpu: \([0-9.]*\) ms.*/\1/p' <<< "$out" >> "$tmp/$s.cpu"
      awk -v re="$win_re" '$2 ~ /^[0-9.]+$/ && $3 == "ms" && $5 ~ re { t += $2 } END { print t + 0 }' \
        <<< "$out" >> "$tmp/$s.win"
      ok[$s]=$(grep -c ': OK$' <<< "$out" || true)
    done
  done
  wc=$(median < "$tmp/wnaive.cpu") ww=$(median < "$tmp/wnaive.win")
  ac=$(median < "$tmp/auto.cpu") aw=$(median < "$tmp/auto.win")
  ratio=$(ratio "$ww" "$aw")
  echo "| $m | $naive_cpu | $wc, $ww | $ac, $aw | $ratio | ${ok[naive]}/${ok[wnaive]}/${ok[auto]} OK |"
done
