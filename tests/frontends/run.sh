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
if [ "$fe" = tflite ]; then
  # Quantisation ties must round half away from zero exactly, not merely within conform's 1 LSB.
  rm -rf "$out/q"
  if [ "$device" = cpu-ref ]; then model="$out/tfl_quantize.tflite"; else
    target=vulkan-lavapipe
    [ "$device" = cpu ] && target=cpu
    "$kiln" compile "$out/tfl_quantize.tflite" -o "$out/q.kiln" --target $target
    model="$out/q.kiln"
  fi
  "$kiln" run "$model" --device "$device" --input "x=$out/tfl_quantize.in.0.npy" --output-dir "$out/q" >/dev/null
  /usr/bin/python3 - "$out" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
for k, name in enumerate(['q', 'd', 'sum', 'u']):
    got, want = np.load(f'{out}/q/{name}.npy'), np.load(f'{out}/tfl_quantize.out.{k}.npy')
    if got.dtype != want.dtype or not np.array_equal(got, want):
        sys.exit(f'tfl_quantize output {name}: got {got}, want {want}')
print('tfl_quantize: all outputs exact')
PY
fi
