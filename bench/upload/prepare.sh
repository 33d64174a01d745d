#!/usr/bin/env bash
# Build machine side of the upload benchmark (issue 15: a 64 MiB input's upload against
# PyTorch's .cuda() on the same GPU). Writes upload.onnx (gen.py), compiles it for
# vulkan-nvidia and gathers what the GPU machine needs into FOLDER (inside the checkout, ignored
# by git). Then on the GPU machine (device tool, carry [".gl", "FOLDER"]):
#   bash bench/upload/run.sh FOLDER
set -euo pipefail
dir=$1
kiln=${KILN:-build/bin/kiln}
mkdir -p "$dir"
/usr/bin/python3 "$(dirname "$0")/gen.py" "$dir/upload.onnx"
"$kiln" compile "$dir/upload.onnx" -o "$dir/upload.kiln" --target vulkan-nvidia
cp "${KILN_BENCH:-build/bin/kiln_bench}" "$dir/"
git rev-parse HEAD > "$dir/COMMIT"
du -sch "$dir" .gl | tail -1
