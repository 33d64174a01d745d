#!/usr/bin/python3
"""compare_devices.py KILN DEVICE DIR: runs each model named in DIR/names.txt on input x
(DIR/x.npy) on cpu-ref and on DEVICE and requires output y to be byte-identical, with nothing
on stderr (the Vulkan validation layer must stay silent)."""
import os
import subprocess
import sys

import numpy as np

kiln, device, d = sys.argv[1:4]
bad = []
for name in open(os.path.join(d, 'names.txt')).read().split():
    ys = []
    for dev in ['cpu-ref', device]:
        out = os.path.join(d, f'{name}.{dev}')
        r = subprocess.run([kiln, 'run', os.path.join(d, name + '.onnx'), '--device', dev,
                            '--input', 'x=' + os.path.join(d, 'x.npy'), '--output-dir', out],
                           capture_output=True, text=True)
        if r.returncode != 0 or r.stderr.strip():
            sys.exit(f'{name} on {dev}: exit {r.returncode}\n{r.stdout}{r.stderr}')
        ys.append(np.load(os.path.join(out, 'y.npy')))
    ref, got = ys
    if ref.dtype != got.dtype or ref.shape != got.shape or (ref != got).any():
        x = np.load(os.path.join(d, 'x.npy'))
        i = np.flatnonzero(ref != got)
        bad.append(f'{name}: {len(i)} differ, first x={x[i[0]]!r} ({x[i[0]].view(np.uint32):#x}): '
                   f'cpu-ref {ref[i[0]]:#x}, {device} {got[i[0]]:#x}')
    else:
        print(f'{name}: {len(ref)} values equal')
if bad:
    sys.exit('\n'.join(bad))
