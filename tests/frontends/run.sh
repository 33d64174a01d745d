#!/usr/bin/env bash
# Generates the op-level models of one frontend and runs them: every model must match its numpy
# golden output (kiln conform fails on any mismatch).
#   run.sh KILN DEVICE {tflite|nnef} OUT_DIR
set -euo pipefail
kiln=$1 device=$2 fe=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out"
/usr/bin/python3 "$here/make_${fe}_ops.py" "$out"
"$kiln" conform "$out" --device "$device" -v
