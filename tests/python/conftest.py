"""Shared fixtures of the Python package tests (ctest `python`: PYTHONPATH=build/python)."""
import os

import numpy as np
import pytest

import kiln

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MODELS = os.path.join(ROOT, 'models')
SQUEEZENET = os.path.join(MODELS, 'squeezenet1_1.onnx')


def vulkan_target():
    """The compile target of the first Vulkan device, or None without one."""
    for d in kiln.devices():
        if d['driver'] == 'vulkan':
            return d['target']
    return None


@pytest.fixture(scope='session')
def squeezenet_io():
    x = np.load(os.path.join(MODELS, 'squeezenet1_1.in.input.npy'))
    golden = np.load(os.path.join(MODELS, 'squeezenet1_1.out.logits.npy'))
    return x, golden


@pytest.fixture(scope='session')
def cpu_artifact():
    return kiln.compile(SQUEEZENET, target='cpu')


@pytest.fixture(scope='session')
def cpu_module(cpu_artifact):
    return kiln.load(cpu_artifact, device='cpu')
