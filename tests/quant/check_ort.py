#!/usr/bin/python3
"""check_ort.py KILN DEVICE DIR NAME [MIN_FRACTION]: runs DIR/NAME.onnx (a model quantised by
ONNX Runtime's own quantiser, tests/quant/ort_gen.py) on kiln's DEVICE with the inputs
DIR/NAME.in.*.npy and compares every output with ONNX Runtime's integer result
DIR/NAME.out.OUTPUT.npy: at least MIN_FRACTION (default 0.999) of the values must lie within
one quantisation step of ORT's. The step of an output is the scale of the DequantizeLinear it
comes from (through shape-only ops and pooling: Flatten, Reshape, Squeeze, GlobalAveragePool,
the largest scale of a per-channel one); an output no DequantizeLinear feeds directly (a
transformer's float tail after dynamically quantised MatMuls) uses 1% of ORT's output range.
Prints one line per output; exits non-zero on a miss, or on anything on stderr. "Within one
step" allows the float rounding of the two dequantised values too (4 ulps of the largest output)."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

kiln, device, d, name = sys.argv[1:5]
need = float(sys.argv[5]) if len(sys.argv) > 5 else 0.999
path = os.path.join(d, name + '.onnx')
m = onnx.load(path)
inits = {t.name: t for t in m.graph.initializer}
producer = {o: n for n in m.graph.node for o in n.output}
PASS = {'Flatten', 'Reshape', 'Squeeze', 'Unsqueeze', 'GlobalAveragePool', 'Identity'}


def step_of(t):
    n = producer.get(t)
    while n is not None and n.op_type in PASS:
        n = producer.get(n.input[0])
    if n is None or n.op_type != 'DequantizeLinear' or n.input[1] not in inits:
        return None
    return float(np.abs(numpy_helper.to_array(inits[n.input[1]])).max())


out = tempfile.mkdtemp(prefix='kiln-check-ort-')
args = [kiln, 'run', path, '--device', device, '--output-dir', out]
for f in sorted(glob.glob(os.path.join(d, f'{name}.in.*.npy'))):
    args += ['--input', f'{f[len(os.path.join(d, name + ".in.")):-4]}={f}']
r = subprocess.run(args, capture_output=True, text=True)
if r.returncode != 0 or r.stderr.strip():
    sys.exit(f'{name} on {device}: exit {r.returncode}\n{r.stdout}{r.stderr}')
bad = False
for o in m.graph.output:
    want = np.load(os.path.join(d, f'{name}.out.{o.name}.npy')).astype(np.float64)
    got = np.load(os.path.join(out, f'{o.name}.npy')).astype(np.float64)
    step = step_of(o.name)
    how = 'one quantisation step'
    if step is None:
        step = 0.01 * float(want.max() - want.min() or 1.0)
        how = '1% of the range'
    diff = np.abs(got - want)
    # One step, plus the float rounding of two dequantised values (a few ulps of the output).
    slack = 4 * np.finfo(np.float32).eps * float(np.abs(want).max())
    frac = float((diff <= step + slack).mean()) if diff.size else 1.0
    ok = got.shape == want.shape and frac >= need
    bad = bad or not ok
    print(f'{name} {o.name} on {device}: {frac * 100:.3f}% within {how} ({step:.3g}) of ORT, '
          f'max diff {diff.max():.3g}: {"OK" if ok else "FAIL"}')
shutil.rmtree(out, ignore_errors=True)
sys.exit(1 if bad else 0)
