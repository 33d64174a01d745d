#!/usr/bin/python3
"""kiln from Python, step by step: compile a model, load it on a device, run it on numpy arrays.

    PYTHONPATH=build/python python3 examples/python_quickstart.py [MODEL_DIR]

MODEL_DIR holds squeezenet1_1.onnx with its sample input and golden output (default: models/ of
this repository). Each step is a cell you can paste into a notebook.
"""
import os
import sys
import tempfile

import numpy as np

import kiln

models = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', 'models')
model_path = os.path.join(models, 'squeezenet1_1.onnx')
image = np.load(os.path.join(models, 'squeezenet1_1.in.input.npy'))
golden = np.load(os.path.join(models, 'squeezenet1_1.out.logits.npy'))

# %% Where can kiln run? cpu-ref is the reference executor (it runs model files); the others
# run compiled artifacts. Each device names the compile target that suits it.
for d in kiln.devices():
    print('device %-10s %-16s %s' % (d['uri'], d.get('target', '-'), d['name']))

# %% Compile ahead of time for this machine's CPU. kiln.compile returns the artifact's bytes;
# with output=PATH it writes a .kiln file instead (ship that file, load it anywhere).
artifact = kiln.compile(model_path, target='cpu')
print('artifact: %d bytes' % len(artifact))
with tempfile.TemporaryDirectory() as tmp:
    kiln.compile(model_path, target='cpu', output=os.path.join(tmp, 'squeezenet.kiln'))

# %% Load it on the cpu device and look at its signature.
module = kiln.load(artifact, device='cpu')
for t in module.inputs + module.outputs:
    print(t)

# %% Run it: a dict of input arrays in, a dict of output arrays out. module(input=image) and
# module(image) do the same.
logits = module.run({'input': image})['logits']
print('top-5 classes:', np.argsort(logits[0])[::-1][:5])
print('max abs error vs golden (cpu): %.3g' % np.abs(logits - golden).max())

# %% The same model on the reference executor, and on Vulkan when there is a device: a model
# file given to kiln.load on a Vulkan device is compiled for it first.
reference = kiln.load(model_path, device='cpu-ref')
print('max abs error vs golden (cpu-ref): %.3g'
      % np.abs(reference(input=image)['logits'] - golden).max())
if any(d['driver'] == 'vulkan' for d in kiln.devices()):
    gpu = kiln.load(model_path, device='vulkan')
    print('max abs error vs golden (vulkan): %.3g'
          % np.abs(gpu(input=image)['logits'] - golden).max())

# %% Mistakes are kiln.Error (a RuntimeError) with kiln's message and the runtime's code.
try:
    module(input=image.astype(np.float64))
except kiln.Error as e:
    print('kiln.Error [%s]: %s' % (e.code, e))
