#!/usr/bin/env bash
# Prints the folder of the ONNX backend node tests: ../shared/onnx-tests/node when present,
# otherwise a suite generated once from Debian's python3-onnx (opset <= 17) into build/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -d "$root/../shared/onnx-tests/node" ]; then
  echo "$root/../shared/onnx-tests/node"
  exit 0
fi
out="$root/build/onnx-node-generated"
if [ ! -f "$out/.done" ]; then
  echo "../shared/onnx-tests is absent: generating the node suite from python3-onnx into $out" >&2
  rm -rf "$out.tmp"
  /usr/bin/python3 -c "import sys, numpy as np; np.float=float; np.int=int; np.bool=bool; np.object=object; sys.argv=['x','generate-data','-o','$out.tmp']; import runpy; runpy.run_module('onnx.backend.test.cmd_tools', run_name='__main__')" >&2
  rm -rf "$out"
  mv "$out.tmp/node" "$out"
  rm -rf "$out.tmp"
  touch "$out/.done"
fi
echo "$out"
