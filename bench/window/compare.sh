#!/usr/bin/env bash
# Window microbenchmarks (bench/window/gen.py: mobilenet_v2's depthwise shapes, squeezenet's
# max pool and an average pool, two Lp pools) on one device: the naive kernels (one invocation
# per output) against window_rows at several R (every block guarded, and with the bounds checks hoisted for
# interior blocks), compiled and timed in the same command (kiln_bench: median
# of ITERS calls, host, device and CPU time), naive again at the end for drift.
#   bench/window/compare.sh TARGET [ITERS]   (repository root, after the build; e.g.
#   vulkan-lavapipe here; for the H200 compile with vulkan-nvidia and run kiln_bench there)
set -euo pipefail
target=$1 iters=${2:-20}
kiln=${KILN:-build/bin/kiln}
bench=${KILN_BENCH:-build/bin/kiln_bench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(pwd)
(cd "$tmp" && python3 "$root/bench/window/gen.py")
for m in dw pool lp; do
  args=()
  for f in "$tmp/$m".in.*.npy; do n=${f#"$tmp/$m".in.}; args+=(--input "${n%.npy}=$f"); done
  echo "$m:"
  echo "| schedule | host ms | device ms | CPU ms |"
  echo "|---|---|---|---|"
  for s in naive window_rows:{2,4,8}:guarded! window_rows:{4,8}! naive; do
    "$kiln" compile "$tmp/$m.onnx" -o "$tmp/$m.kiln" --target "$target" --window "$s" > /dev/null
    out=$("$bench" "$tmp/$m.kiln" --device vulkan --warmup 3 --iters "$iters" "${args[@]}")
    host=$(sed -n 's/.*host \([0-9.]*\) ms,.*/\1/p' <<< "$out")
    dev=$(sed -n 's/.*device \([0-9.]*\) ms.*/\1/p' <<< "$out" | head -1)
    cpu=$(sed -n 's/^cpu: \([0-9.]*\) ms.*/\1/p' <<< "$out")
    echo "| $s | $host | $dev | $cpu |"
  done
done
