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
echo "kiln conform $dir --device $device --expect $list"
"$kiln" conform "$dir" --device "$device" --expect "$list"
