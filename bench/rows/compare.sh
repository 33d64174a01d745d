#!/usr/bin/env bash
# bert-base's softmax and layer-norm rows (bench/rows/gen.py) on one device: the naive kernels
# (one invocation per row) against workgroup_rows at several workgroup sizes, compiled and
# timed in the same command (kiln_bench: median of ITERS calls, host, device and CPU time).
#   bench/rows/compare.sh TARGET [ITERS]   (repository root, after the build; e.g.
#   vulkan-lavapipe here; for the H200 compile with vulkan-nvidia and run kiln_bench there)
set -euo pipefail
target=$1 iters=${2:-30}
kiln=${KILN:-build/bin/kiln}
bench=${KILN_BENCH:-build/bin/kiln_bench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(pwd)
(cd "$tmp" && python3 "$root/bench/rows/gen.py")
echo "| schedule | host ms | device ms | CPU ms |"
echo "|---|---|---|---|"
for s in naive workgroup_rows:{8,32,128,256}! naive; do
  "$kiln" compile "$tmp/rows.onnx" -o "$tmp/rows.kiln" --target "$target" --row-reduction "$s" \
    > /dev/null
  out=$("$bench" "$tmp/rows.kiln" --device vulkan --warmup 3 --iters "$iters" \
        --input x="$tmp/rows.in.x.npy" --input y="$tmp/rows.in.y.npy")
  host=$(sed -n 's/.*host \([0-9.]*\) ms,.*/\1/p' <<< "$out")
  dev=$(sed -n 's/.*device \([0-9.]*\) ms.*/\1/p' <<< "$out" | head -1)
  cpu=$(sed -n 's/^cpu: \([0-9.]*\) ms.*/\1/p' <<< "$out")
  echo "| $s | $host | $dev | $cpu |"
done
