#!/usr/bin/python3
"""check_golden.py KILN DEVICE DIR NAME INPUT: runs DIR/NAME.onnx on DEVICE with input INPUT
from DIR/NAME.INPUT.npy and requires output y to equal DIR/NAME.golden.npy exactly (dtype
and values), with nothing on stderr (the Vulkan validation layer must stay silent)."""
import os
import subprocess
import sys

import numpy as np

kiln, device, d, name, inp = sys.argv[1:6]
out = os.path.join(d, f'{name}.{device}.out')
r = subprocess.run([kiln, 'run', os.path.join(d, name + '.onnx'), '--device', device, '--input',
                    f'{inp}={os.path.join(d, f"{name}.{inp}.npy")}', '--output-dir', out],
                   capture_output=True, text=True)
if r.returncode != 0 or r.stderr.strip():
    sys.exit(f'{name} on {device}: exit {r.returncode}\n{r.stdout}{r.stderr}')
got, want = np.load(os.path.join(out, 'y.npy')), np.load(os.path.join(d, name + '.golden.npy'))
if got.dtype != want.dtype or got.shape != want.shape or (got != want).any():
    sys.exit(f'{name} on {device}: got {got.dtype} {got.tolist()}, want {want.dtype} '
             f'{want.tolist()}')
print(f'{name} on {device}: OK')
