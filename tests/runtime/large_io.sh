#!/bin/sh
# Large host tensors through the Vulkan runtime: y = x + x on 5 MiB (1,310,720 floats), so that
# the input and output host copies are split over the module's copy threads (3 here), and with
# KILN_VULKAN_FAULT=no-map (device memory not host-addressable: through staging) the input is
# uploaded in 1 MiB chunks, each submitted before the next is written. `kiln validate` compares
# every element with the reference executor at tolerance 0 (outputs poisoned before the run),
# under the validation layer with synchronization validation (KILN_VULKAN_VALIDATION).
#   large_io.sh KILN DIR
set -eu
kiln=$1 dir=$2
mkdir -p "$dir"
/usr/bin/python3 "$(dirname "$0")/../../bench/upload/gen.py" "$dir/large_io.onnx" 1310720 add
export KILN_COPY_THREADS=3 KILN_UPLOAD_CHUNK_BYTES=1048576
"$kiln" validate "$dir/large_io.onnx" --device vulkan --rtol 0 --atol 0
KILN_VULKAN_FAULT=no-map "$kiln" validate "$dir/large_io.onnx" --device vulkan --rtol 0 --atol 0
