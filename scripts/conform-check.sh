#!/usr/bin/env bash
# Runs one conformance folder against its expected-pass list (used by ctest).
#   conform-check.sh KILN DEVICE SUITE LIST
# SUITE is node (the ONNX node tests: ../shared's copy, or one generated from python3-onnx),
# or a folder under ../shared (onnx-tests/light, onnx-tests/zoo, models). A missing folder is a
# visible skip (exit 77), never a silent pass.
set -uo pipefail
kiln=$1 device=$2 suite=$3 list=$4
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "$suite" = node ]; then
  dir=$("$root/scripts/onnx-node-suite.sh") || exit 1
  case "$dir" in
    */build/onnx-node-generated) list="${list%.txt}-generated.txt" ;;
  esac
elif [ "$suite" = bundled ]; then
  dir="$root/models"
else
  dir="$root/../shared/$suite"
  if [ ! -d "$dir" ]; then
    echo "SKIPPED: $dir is absent on this machine"
    exit 77
  fi
fi
# light/ and zoo/ hold whole networks whose expected outputs come from float32 runtimes
# (ONNX Runtime for zoo/): logits of magnitude ~1-10 after 50+ layers carry float32 rounding
# noise of ~1e-5 that depends on accumulation order, so they are compared with atol 1e-5
# (rtol stays 1e-3). ONNX Runtime's own model test runner allows 1e-3.
tol=()
case "$suite" in
  onnx-tests/light|onnx-tests/zoo) tol=(--atol 1e-5) ;;
esac
echo "kiln conform $dir --device $device ${tol[*]} --expect $list"
"$kiln" conform "$dir" --device "$device" "${tol[@]}" --expect "$list"
