#!/usr/bin/env bash
# Lavapipe: the ONNX model-zoo networks with the most parallel kernels the table blocks
# (../shared/onnx-tests/light: densenet121, whose batch-norm + Relu kernels and concat copies
# are large, and shufflenet) compiled with the parallel kernels forced naive (`--parallel
# naive!`) and with the strategy table, both checked against the test's expected output. The two
# alternate for ROUNDS rounds of ITERS calls (kiln_bench); per round: CPU ms per call (all of
# llvmpipe's threads) and the device ms of the kernels the table blocks (the sum of their
# per-command medians from --profile, matched by name without the `_blockedE` suffix). Printed:
# the median over rounds.
#   [MODELS="densenet121 shufflenet"] bench/parallel/models.sh [ITERS] [ROUNDS]   (repository
#   root, after the build; needs /usr/bin/python3 with onnx to turn the tests' .pb tensors into
#   .npy)
set -euo pipefail
iters=${1:-5} rounds=${2:-3}
kiln=${KILN:-build/bin/kiln}
bench=${KILN_BENCH:-build/bin/kiln_bench}
zoo=${ZOO:-../shared/onnx-tests/light}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
# NAME=FILE arguments for the test's input and expected output, written as .npy.
io_args() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys
import onnx
from onnx import numpy_helper
import numpy as np
d, out = sys.argv[1], sys.argv[2]
g = onnx.load(d + "/model.onnx").graph
weights = {i.name for i in g.initializer}
name = next(i.name for i in g.input if i.name not in weights)
for kind, flag, n in (("input", "--input", name), ("output", "--golden", g.output[0].name)):
    t = onnx.TensorProto()
    t.ParseFromString(open("%s/test_data_set_0/%s_0.pb" % (d, kind), "rb").read())
    np.save("%s/%s.npy" % (out, kind), numpy_helper.to_array(t))
    print("%s %s=%s/%s.npy" % (flag, n, out, kind))
PY
}
sum_blocked() { # the device ms of the commands named in $1 (one name a line)
  awk -v names="$1" 'BEGIN { n = split(names, a, "\n"); for (i = 1; i <= n; ++i) want[a[i]] = 1 }
    $2 ~ /^[0-9.]+$/ && $3 == "ms" { k = $5; sub(/_blocked[0-9]+$/, "", k); if (k in want) t += $2 }
    END { print t + 0 }'
}
echo "| model | blocked kernels | naive!: CPU ms, those kernels ms | table: CPU ms, those kernels ms | naive / table (kernels) | golden |"
echo "|---|---|---|---|---|---|"
for m in ${MODELS:-densenet121 shufflenet}; do
  mapfile -t args < <(io_args "$zoo/test_$m" "$tmp" | tr ' ' '\n')
  "$kiln" compile "$zoo/test_$m/model.onnx" -o "$tmp/naive.kiln" --target vulkan-lavapipe \
    --parallel 'naive!' > /dev/null
  "$kiln" compile "$zoo/test_$m/model.onnx" -o "$tmp/auto.kiln" --target vulkan-lavapipe \
    --stats "$tmp/auto.json" > /dev/null
  blocked=$(grep -A1 '"parallel"' "$tmp/auto.json" | sed -n 's/.*"blocked": \([0-9]*\).*/\1/p')
  names=""
  : > "$tmp/naive.cpu"; : > "$tmp/naive.k"; : > "$tmp/auto.cpu"; : > "$tmp/auto.k"
  declare -A ok
  for ((r = 0; r < rounds; ++r)); do
    for s in auto naive; do # auto first: its profile names the blocked kernels
      out=$("$bench" "$tmp/$s.kiln" --device vulkan --warmup 1 --iters "$iters" --profile 10000 \
            --atol 1e-4 "${args[@]}") || true
      [ -n "$names" ] || names=$(awk '$5 ~ /_blocked[0-9]+$/ { k = $5; sub(/_blocked[0-9]+$/, "", k); print k }' <<< "$out" | sort -u)
      sed -n 's/^cpu: \([0-9.]*\) ms.*/\1/p' <<< "$out" >> "$tmp/$s.cpu"
      sum_blocked "$names" <<< "$out" >> "$tmp/$s.k"
      ok[$s]=$(grep -c ': OK$' <<< "$out" || true)
    done
  done
  nc=$(median < "$tmp/naive.cpu") nk=$(median < "$tmp/naive.k")
  ac=$(median < "$tmp/auto.cpu") ak=$(median < "$tmp/auto.k")
  ratio=$(ratio "$nk" "$ak")
  echo "| $m | $blocked | $nc, $nk | $ac, $ak | $ratio | ${ok[naive]}/${ok[auto]} OK |"
done
