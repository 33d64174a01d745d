#!/usr/bin/env bash
# Build machine side of the H200 acceptance run: writes the ONNX models (weights are graph
# inputs, see gen.py), compiles them for vulkan-nvidia, and gathers what the GPU machine needs.
#   bash bench/h200_models/prepare.sh FOLDER          # full size (compiles 4 models + naive matmul)
#   SMALL=1 bash bench/h200_models/prepare.sh FOLDER  # small shapes, for testing the scripts
#   BAKED=1 bash bench/h200_models/prepare.sh FOLDER  # weights as initializers: carries kiln and
#       the three libraries it needs that the GPU machine lacks; run.sh exports and compiles there
#       (PREV=path/to/kiln also carries an older compiler: run.sh builds NAME.prev.kiln with it)
#       and the real models' sources squeezenet1_1.onnx and mobilenet_v2.onnx (5 + 14 MB) from
#       REAL_MODELS (default ../shared/models): gen.py rewrites them there (batch, float16)
# Run from the repository root, after building build/bin/kiln and build/bin/kiln_bench. Then,
# on the GPU machine (device tool, carry [".gl", "FOLDER"]): bash bench/h200_models/run.sh FOLDER
# FOLDER must be inside the checkout and ignored by git (e.g. listed in .git/info/exclude) so
# that it travels only through carry.
set -euo pipefail
dir=$1
kiln=${KILN:-build/bin/kiln}
bench=${KILN_BENCH:-build/bin/kiln_bench}
here=$(dirname "$0")
mkdir -p "$dir"
small=(); [ "${SMALL:-0}" = 1 ] && small=(--small)
models=()
if [ "${BAKED:-0}" = 1 ]; then
  cp "$kiln" "$dir/"
  [ -n "${PREV:-}" ] && cp "$PREV" "$dir/kiln.prev"  # a second compiler to compare against
  for l in libonnx_proto.so.1 libprotobuf.so.32 libfmt.so.9; do cp "/lib/x86_64-linux-gnu/$l" "$dir/"; done
  for s in squeezenet1_1 mobilenet_v2; do  # sources of gen.py's real models (NAME_b1, NAME_b32)
    cp "${REAL_MODELS:-../shared/models}/$s.onnx" "$dir/"
  done
else
  ${PYTHON:-/usr/bin/python3} "$here/gen.py" --onnx "$dir" "${small[@]}"
  models=("$dir"/*.onnx)
fi
for f in "${models[@]}"; do
  m=$(basename "$f" .onnx)
  t0=$(date +%s.%N)
  "$kiln" compile "$f" -o "$dir/$m.kiln" --target vulkan-nvidia --stats "$dir/$m.stats.json"
  echo "$m: $(stat -c %s "$dir/$m.kiln") bytes, compile $(echo "$(date +%s.%N) - $t0" | bc) s"
  case $m in matmul*)
    "$kiln" compile "$f" -o "$dir/$m.naive.kiln" --target vulkan-nvidia --schedule naive \
      --stats "$dir/$m.naive.stats.json"
    echo "$m.naive: $(stat -c %s "$dir/$m.naive.kiln") bytes";;
  esac
done
cp "$bench" "$here/gen.py" "$here/onnx_torch.py" "$dir/"
git rev-parse HEAD > "$dir/COMMIT"
git status --short --untracked-files=no >> "$dir/COMMIT" || true
du -sh "$dir"
[ -d .gl ] && du -sh .gl && du -sch "$dir" .gl | tail -1 || echo "no .gl/ here: see bench/h200.sh"
