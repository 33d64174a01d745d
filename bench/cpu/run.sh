#!/usr/bin/env bash
# kiln's cpu backend against ONNX Runtime's CPU execution provider, on the same .onnx and the
# same inputs, in one run (docs: ../shared/brief/measuring.md; results: bench/RESULTS.md).
#   bash bench/cpu/run.sh [THREADS...]        (default: 2 1)
# For each model: kiln compile --target cpu (timed, C compiler included), kiln_bench --device
# cpu (outputs checked against the golden file; median host ms of ITERS calls after WARMUP) and
# ort_bench.js (onnxruntime-node 1.30, intra-op threads = kiln's KILN_CPU_THREADS), then the
# ratio ort/kiln (> 1: kiln is faster). Env: BUILD (build), ITERS (50), WARMUP (10),
# MODELS (a regex over the model names).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
shared=$root/../shared
iters=${ITERS:-50} warmup=${WARMUP:-10}
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(2 1)
work=$build/bench-cpu
mkdir -p "$work"

# onnxruntime-node from npm (ONNXRUNTIME_NODE_INSTALL=skip: no GPU binaries are fetched).
if [ ! -d "$work/node_modules/onnxruntime-node" ]; then
  (cd "$work" && ONNXRUNTIME_NODE_INSTALL=skip npm install --silent --no-audit --no-fund \
     onnxruntime-node@1.30.0 >/dev/null)
fi

# name|model|inputs (NAME=FILE.npy,...)|goldens
models=()
for m in squeezenet1_1 mobilenet_v2 bert_tiny; do
  ins=() gold=()
  for f in "$shared/models/$m".in.*.npy; do n=${f##*/$m.in.}; ins+=("${n%.npy}=$f"); done
  for f in "$shared/models/$m".out.*.npy; do n=${f##*/$m.out.}; gold+=("${n%.npy}=$f"); done
  models+=("$m|$shared/models/$m.onnx|$(IFS=,; echo "${ins[*]}")|$(IFS=,; echo "${gold[*]}")")
done
# light/ and zoo/: the backend-test .pb tensors converted to .npy under their graph names.
for suite in light zoo; do
  for d in "$shared/onnx-tests/$suite"/test_*; do
    [ -f "$d/model.onnx" ] || continue
    name=$suite/${d##*/test_}
    out=$work/npy/$suite-${d##*/test_}
    if [ ! -f "$out/done" ]; then
      mkdir -p "$out"
      /usr/bin/python3 - "$d" "$out" <<'PY'
import sys, os, onnx, numpy as np
from onnx import numpy_helper
d, out = sys.argv[1], sys.argv[2]
m = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
inits = {i.name for i in m.graph.initializer}
ins = [i.name for i in m.graph.input if i.name not in inits]
outs = [o.name for o in m.graph.output]
ds = os.path.join(d, "test_data_set_0")
lines = []
for kind, names in (("in", ins), ("out", outs)):
    for k, n in enumerate(names):
        t = onnx.TensorProto()
        with open(os.path.join(ds, f"{'input' if kind == 'in' else 'output'}_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        p = os.path.join(out, f"{kind}.{k}.npy")
        np.save(p, numpy_helper.to_array(t))
        lines.append(f"{kind} {n}={p}")
open(os.path.join(out, "list"), "w").write("\n".join(lines) + "\n")
open(os.path.join(out, "done"), "w").write("")
PY
    fi
    ins=$(awk '$1=="in"{print $2}' "$out/list" | paste -sd,)
    gold=$(awk '$1=="out"{print $2}' "$out/list" | paste -sd,)
    models+=("$name|$d/model.onnx|$ins|$gold")
  done
done

printf '%-22s %7s %10s %10s %10s %8s\n' model threads compile_s kiln_ms ort_ms ort/kiln
for entry in "${models[@]}"; do
  IFS='|' read -r name model ins gold <<<"$entry"
  [[ -z "${MODELS:-}" || "$name" =~ $MODELS ]] || continue
  art=$work/${name//\//-}.kiln
  t0=$(date +%s.%N)
  "$build/bin/kiln" compile "$model" -o "$art" --target cpu >/dev/null
  compile_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b - a}')
  in_args=() gold_args=() ort_args=()
  IFS=, read -ra in_list <<<"$ins"
  IFS=, read -ra gold_list <<<"$gold"
  for x in "${in_list[@]}"; do in_args+=(--input "$x"); ort_args+=("$x"); done
  for x in "${gold_list[@]}"; do gold_args+=(--golden "$x"); done
  for t in "${threads[@]}"; do
    kout=$(KILN_CPU_THREADS=$t "$build/bin/kiln_bench" "$art" --device cpu "${in_args[@]}" \
             "${gold_args[@]}" --atol 1e-4 --warmup "$warmup" --iters "$iters") || {
      echo "$kout" >&2; echo "error: kiln_bench failed on $name" >&2; exit 1; }
    kms=$(sed -n 's/.*median of [0-9]* calls: host \([0-9.]*\) ms.*/\1/p' <<<"$kout")
    oout=$(ORT_NODE_DIR=$work node "$root/bench/cpu/ort_bench.js" "$model" "$t" "$warmup" \
             "$iters" "${ort_args[@]}")
    oms=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<<"$oout")
    printf '%-22s %7s %10.2f %10.3f %10.3f %8.3f\n' "$name" "$t" "$compile_s" "$kms" "$oms" \
      "$(awk -v o="$oms" -v k="$kms" 'BEGIN{print o / k}')"
  done
done
